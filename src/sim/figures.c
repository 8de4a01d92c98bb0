/* figures.c - the figures a run records (see figures_int.h): the table of
 * the known ones with their labels, the record in order of first
 * recording, and sm_sim_stat_add for policies outside the table. */
#include <stddef.h>
#include <string.h>

#include "sim/figures_int.h"

static const struct fdef {
  const char *name;  /* the figure's name (its field) */
  const char *label; /* the report's words for it, or NULL */
  int kind;          /* SM__FIG_COUNT or SM__FIG_RATE */
  size_t off;        /* of its value in sm__figs */
} defs[SM__F_NUM] = {
#define DEF(f, label, kind) {#f, label, kind, offsetof(sm__figs, f)},
    SM__FIGS(DEF)
#undef DEF
};

static double *value_of(sm__figures *f, int id) {
  return (double *)(void *)((char *)&f->v + defs[id].off);
}

static double value_at(const sm__figures *f, int id) {
  return *(const double *)(const void *)((const char *)&f->v + defs[id].off);
}

static int find(const char *name) {
  for (int i = 0; i < SM__F_NUM; i++)
    if (strcmp(defs[i].name, name) == 0)
      return i;
  return -1;
}

int sm__figures_add(sm__figures *f, int id, double delta) {
  uint64_t bit = (uint64_t)1 << (id % 64);

  if (!(f->has[id / 64] & bit)) {
    if (SM__GROW(f->rec, f->n + 1, f->cap) != 0)
      return SM_ENOMEM;
    f->rec[f->n].id = id;
    f->rec[f->n].name = NULL;
    f->rec[f->n++].value = 0;
    f->has[id / 64] |= bit;
  }
  *value_of(f, id) += delta;
  return 0;
}

int sm__figures_add_name(sm__figures *f, const char *name, double delta) {
  int id = find(name);

  if (id >= 0)
    return sm__figures_add(f, id, delta);
  for (size_t i = 0; i < f->n; i++)
    if (f->rec[i].id < 0 && strcmp(f->rec[i].name, name) == 0) {
      f->rec[i].value += delta;
      return 0;
    }
  if (SM__GROW(f->rec, f->n + 1, f->cap) != 0)
    return SM_ENOMEM;
  f->rec[f->n].name = sm_strdup(name);
  if (f->rec[f->n].name == NULL)
    return SM_ENOMEM;
  f->rec[f->n].id = -1;
  f->rec[f->n++].value = delta;
  return 0;
}

void sm__figures_release(sm__figures *f) {
  if (f == NULL)
    return;
  for (size_t i = 0; i < f->n; i++)
    sm_free(f->rec[i].name);
  sm_free(f->rec);
  f->rec = NULL;
  f->n = f->cap = 0;
}

const char *sm__figures_at(const sm__figures *f, size_t i, double *value) {
  const sm__fig_rec *r;

  if (i >= f->n)
    return NULL;
  r = &f->rec[i];
  if (value != NULL)
    *value = r->id >= 0 ? value_at(f, r->id) : r->value;
  return r->id >= 0 ? defs[r->id].name : r->name;
}

int sm__figures_get(const sm__figures *f, const char *name, double *value) {
  for (size_t i = 0; i < f->n; i++) {
    double v;
    if (strcmp(sm__figures_at(f, i, &v), name) == 0) {
      *value = v;
      return 1;
    }
  }
  return 0;
}

const char *sm__figures_label(const char *name) {
  int id = find(name);
  return id >= 0 ? defs[id].label : NULL;
}

int sm__figures_is_rate(const char *name) {
  int id = find(name);
  return id >= 0 && defs[id].kind == SM__FIG_RATE;
}

/* ==== The public calls ==== */

int sm_sim_stat_add(sm_sim *s, const char *name, double delta) {
  return sm__figures_add_name(s->figs, name, delta);
}

size_t sm_sim_result_stat_count(const sm_sim_result *r) {
  return r->figs != NULL ? r->figs->n : 0;
}

const char *sm_sim_result_stat(const sm_sim_result *r, size_t i,
                               double *value) {
  return r->figs != NULL ? sm__figures_at(r->figs, i, value) : NULL;
}

int sm_sim_result_stat_get(const sm_sim_result *r, const char *name,
                           double *value) {
  return r->figs != NULL && sm__figures_get(r->figs, name, value);
}
