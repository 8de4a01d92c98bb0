/* params.c - the run's parameters: the configuration's settings (the
 * --param interface), one parser from them into the typed sm__params of
 * a run, the record of what the run read, and the lookups for keys
 * outside the table (sm_sim_param_str/_num, for policies registered by
 * programs).  See params_int.h. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sim/params_int.h"

#define MAX_EXT_READS 256

enum { KIND_NUM, KIND_STR };

static const struct pdef {
  const char *key; /* the name users give */
  int kind;        /* KIND_* */
  size_t off;      /* of the typed field in sm__params */
  double def;      /* default of a number */
} defs[SM__P_COUNT] = {
#define DEF_N(f, k, d) {k, KIND_NUM, offsetof(sm__params, f), d},
#define DEF_S(f, k) {k, KIND_STR, offsetof(sm__params, f), 0},
    SM__PARAMS(DEF_N, DEF_S)
#undef DEF_N
#undef DEF_S
};

/* ==== Settings of a configuration ==== */

void sm_sim_config_init(sm_sim_config *c) {
  memset(c, 0, sizeof(*c));
  c->policy = "fifo";
  c->placement = SM_SIM_PLACE_CONSOLIDATE;
  c->oversize = SM_SIM_OVERSIZE_CAP;
  c->semantic = "off";
  c->preempt_small_s = 40;
  c->preempt_large_s = 60;
  c->overhead_gpus = 8;
  c->seed = 1;
}

static int add_setting(sm_sim_config *c, const char *key, size_t keylen,
                       const char *value) {
  if (c->nparams >= SM_SIM_MAX_PARAMS)
    return SM_ELIMIT;
  c->params[c->nparams].key = key;
  c->params[c->nparams].keylen = keylen;
  c->params[c->nparams].value = value;
  c->nparams++;
  return 0;
}

int sm_sim_config_param(sm_sim_config *c, const char *kv) {
  const char *eq;

  if (kv == NULL || (eq = strchr(kv, '=')) == NULL || eq == kv)
    return SM_EINVAL;
  return add_setting(c, kv, (size_t)(eq - kv), eq + 1);
}

int sm_sim_config_set(sm_sim_config *c, const char *key, const char *value) {
  if (key == NULL || *key == '\0' || strchr(key, '=') != NULL || value == NULL)
    return SM_EINVAL;
  return add_setting(c, key, strlen(key), value);
}

/* The last setting of key (n bytes) in c, or NULL. */
static const char *setting_of(const sm_sim_config *c, const char *key,
                              size_t n) {
  for (int i = c->nparams - 1; i >= 0; i--)
    if (c->params[i].keylen == n && strncmp(c->params[i].key, key, n) == 0)
      return c->params[i].value;
  return NULL;
}

const char *sm_sim_config_get(const sm_sim_config *c, const char *key) {
  return key != NULL ? setting_of(c, key, strlen(key)) : NULL;
}

/* ==== The typed parameters of a run ==== */

int sm__params_find(const char *key, size_t n) {
  for (int i = 0; i < SM__P_COUNT; i++)
    if (strncmp(defs[i].key, key, n) == 0 && defs[i].key[n] == '\0')
      return i;
  return -1;
}

const char *sm__params_key(int id) {
  return id >= 0 && id < SM__P_COUNT ? defs[id].key : "";
}

static double *num_field(sm__params *p, int id) {
  return (double *)(void *)((char *)p + defs[id].off);
}

static const char **str_field(sm__params *p, int id) {
  return (const char **)(void *)((char *)p + defs[id].off);
}

void sm__params_parse(sm__params *p, const sm_sim_config *cfg) {
  memset(p, 0, sizeof(*p));
  for (int i = 0; i < SM__P_COUNT; i++)
    if (defs[i].kind == KIND_NUM)
      *num_field(p, i) = defs[i].def;
  for (int k = 0; cfg != NULL && k < cfg->nparams; k++) {
    const sm_sim_setting *st = &cfg->params[k];
    int id = sm__params_find(st->key, st->keylen);
    double d;
    if (id < 0)
      continue; /* another policy's: sm_sim_param_str finds it */
    p->text[id] = st->value;
    if (defs[id].kind == KIND_STR) {
      *str_field(p, id) = st->value;
      continue;
    }
    p->bad[id] = sm_parse_double(st->value, &d) != 0;
    *num_field(p, id) = p->bad[id] ? defs[id].def : d;
  }
}

static int own(const char **s, sm_arena *arena) {
  char *c;

  if (*s == NULL)
    return 0;
  c = sm_arena_strdup(arena, *s);
  if (c == NULL)
    return SM_ENOMEM;
  *s = c;
  return 0;
}

int sm__params_own(sm__params *p, sm_arena *arena) {
  for (int i = 0; i < SM__P_COUNT; i++) {
    if (own(&p->text[i], arena) != 0)
      return SM_ENOMEM;
    if (defs[i].kind == KIND_STR)
      *str_field(p, i) = p->text[i];
  }
  return 0;
}

void sm__params_release(sm__params *p) {
  if (p != NULL)
    sm__notes_release(&p->ext_read);
}

int sm__params_read_key(const sm__params *p, const char *key, size_t n) {
  int id = sm__params_find(key, n);

  if (id >= 0)
    return sm__params_was_read(p, id);
  for (size_t i = 0; i < p->ext_read.n; i++)
    if (strncmp(p->ext_read.v[i], key, n) == 0 && p->ext_read.v[i][n] == '\0')
      return 1;
  return 0;
}

int sm__params_num_in(sm_sim *s, int id, double lo, double hi, double *out,
                      sm_err *err) {
  sm__params *p = s->par;
  double d = *num_field(p, id);

  sm__params_mark(p, id);
  if (p->text[id] != NULL && (p->bad[id] || !(d >= lo && d <= hi)))
    return sm_err_set(err, SM_EINVAL,
                      "--param %s=%.40s: expected a number in [%g, %g]",
                      defs[id].key, p->text[id], lo, hi);
  *out = d;
  return 0;
}

/* ==== Lookups by key (policies outside the table) ==== */

/* Remembers that the run looked key up, whether it was given or not. */
static void note_read(sm__params *p, const char *key) {
  int id = sm__params_find(key, strlen(key));

  if (id >= 0) {
    sm__params_mark(p, id);
    return;
  }
  for (size_t i = 0; i < p->ext_read.n; i++)
    if (strcmp(p->ext_read.v[i], key) == 0)
      return;
  if (p->ext_read.n < MAX_EXT_READS)
    sm__notes_add(&p->ext_read, "%s", key);
}

const char *sm_sim_param_str(const sm_sim *s, const char *key) {
  note_read(s->par, key);
  return setting_of(&s->cfg, key, strlen(key));
}

double sm_sim_param_num(const sm_sim *s, const char *key, double def) {
  const char *v = sm_sim_param_str(s, key);
  double d;

  if (v == NULL || sm_parse_double(v, &d) != 0)
    return def;
  return d;
}
