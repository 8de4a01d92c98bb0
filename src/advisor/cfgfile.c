/* cfgfile.c - configuration files published into the layered store:
 * a config file given to the job (sm__config_load), the launcher configs
 * found among them, named presets, Hydra's defaults lists and the
 * command's group overrides, console entry points, and the classes
 * configs instantiate.  Trees come from cfgtree.c (a file once, with its
 * inheritance); Python config modules from the evaluator. */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "advisor/advisor_int.h"

/* ==== Launcher configs found among configs ==== */

/* An accelerate config (distributed_type, num_processes, ...) wherever it
 * is named: --config_file, a CLI's --accelerate_config, a recipe. */
int sm__accelerate_tree(sm__ctx *c, const sm__vnode *t) {
  const sm__vnode *np, *nm, *mp, *dt;
  if (t == NULL || t->t != SM__T_MAP ||
      (dt = sm__vt_get(t, "distributed_type")) == NULL)
    return 0;
  np = sm__vt_get(t, "num_processes");
  nm = sm__vt_get(t, "num_machines");
  mp = sm__vt_get(t, "mixed_precision");
  if (np && np->t == SM__T_NUM && np->num > 0 && c->gpus_total == 0) {
    c->gpus_total = np->num;
    c->gt_ev = sm__ev(c, np->path, np->line);
  }
  if (nm && nm->t == SM__T_NUM && nm->num > 0 && c->nodes == 0) {
    c->nodes = nm->num;
    c->nodes_ev = sm__ev(c, nm->path, nm->line);
  }
  if (mp && mp->t == SM__T_STR && c->precision == NULL) {
    if (strcmp(mp->str, "bf16") == 0 || strcmp(mp->str, "fp16") == 0 ||
        strcmp(mp->str, "fp8") == 0)
      c->precision = mp->str;
    else if (strcmp(mp->str, "no") == 0)
      c->precision = "fp32";
    c->precision_ev = sm__ev(c, mp->path, mp->line);
  } else if (mp && mp->t == SM__T_BOOL && mp->num == 0 &&
             c->precision == NULL) {
    /* YAML reads `mixed_precision: no` as false. */
    c->precision = "fp32";
    c->precision_ev = sm__ev(c, mp->path, mp->line);
  }
  if (dt->t == SM__T_STR && c->strategy == NULL) {
    if (strcasecmp(dt->str, "FSDP") == 0)
      c->strategy = "fsdp";
    else if (strcasecmp(dt->str, "DEEPSPEED") == 0) {
      const sm__vnode *z = sm__vt_get_path(t, "deepspeed_config.zero_stage");
      c->strategy = (z && z->t == SM__T_NUM)
                        ? sm__printf(c, "deepspeed_zero%d", (int)z->num)
                        : "deepspeed";
    } else if (strcasecmp(dt->str, "MULTI_GPU") == 0)
      c->strategy = "ddp";
    if (c->strategy != NULL)
      c->strategy_ev = sm__ev(c, dt->path, dt->line);
  }
  c->launcher = 1;
  return 1;
}

/* ==== Entry points ==== */

int sm__config_load(sm__ctx *c, const char *rel, const char *prefix,
                    int layer) {
  const char *dot = strrchr(rel, '.');
  sm__vnode *t;
  if (!sm__cfg_is_config_name(rel)) {
    sm__warn(c, "%s: not a config format the extractor reads", rel);
    return SM_EUNSUPP;
  }
  t = sm__cfg_tree(c, rel);
  if (t == NULL)
    return SM_EPARSE;
  if (dot == NULL || strcasecmp(dot, ".py") != 0)
    sm__words_in(c, rel, strlen(rel), sm__ev(c, rel, 1), 2);
  t = sm__ds_config(c, t);
  sm__vt_publish(c, t, prefix, layer);
  sm__accelerate_tree(c, t);
  return 0;
}

/* ==== Named presets ==== */

static void presets_by_key(sm__ctx *c);

/* Keys whose value names a preset file (model_name: llama2-7b with
 * configs/models/llama2-7b.yml; --accelerate_config zero2 with
 * accelerate_configs/zero2.yaml), and the directory names to look in. */
static int preset_dirs(const char *key, char out[][64], int max) {
  char base[48];
  size_t n;
  int k = 0;
  snprintf(base, sizeof(base), "%s", key);
  n = strlen(base);
  /* model_name, model_type, model_config -> model */
  if (n > 5 && (strcmp(base + n - 5, "_name") == 0 ||
                strcmp(base + n - 5, "_type") == 0))
    base[n - 5] = '\0';
  else if (n > 7 && strcmp(base + n - 7, "_config") == 0 && k < max)
    snprintf(out[k++], 64, "%ss", base); /* accelerate_configs */
  if (k < max)
    snprintf(out[k++], 64, "%ss", base);
  if (k < max)
    snprintf(out[k++], 64, "%s", base);
  if (k < max)
    snprintf(out[k++], 64, "%ss", key);
  /* A package's table of architectures as one file per name
   * (model_configs/ViT-B-32.json). */
  if (k < max)
    snprintf(out[k++], 64, "%s_configs", base);
  if (k < max)
    snprintf(out[k++], 64, "%s_cfgs", base);
  return k;
}

static const char *find_preset(sm__ctx *c, const char *key, const char *val,
                               const char *const *bases, int nb) {
  static const char *const exts[] = {".yml", ".yaml", ".json", NULL};
  char dirs[8][64];
  int nd;
  if (val == NULL || val[0] == '\0' || strchr(val, '/') || strlen(val) > 100 ||
      sm__cfg_is_config_name(val))
    return NULL;
  nd = preset_dirs(key, dirs, 8);
  for (int b = 0; b < nb; b++) {
    char dir[1024];
    if (bases[b] == NULL)
      continue;
    snprintf(dir, sizeof(dir), "%s", bases[b]);
    /* The base directory and each directory above it. */
    for (int up = 0; up < 4; up++) {
      char *s;
      for (int d = 0; d < nd; d++)
        for (int x = 0; exts[x]; x++) {
          const char *p = sm__repo_join(
              c, dir, sm__printf(c, "%s/%s%s", dirs[d], val, exts[x]));
          if (p != NULL && sm__fs_is_file(c, p))
            return p;
        }
      if (dir[0] == '\0')
        break;
      s = strrchr(dir, '/');
      if (s == NULL)
        dir[0] = '\0';
      else
        *s = '\0';
    }
  }
  return NULL;
}

/* A file named by its stem in the repository's experiment and config
 * directories (exps/, experiments/, configs/, conf/, recipes/ and the
 * directories under them, two levels): `-n yolox-s` with
 * exps/default/yolox_s.py. */
static const char *find_by_stem(sm__ctx *c, const char *val) {
  static const char *const tops[] = {"exps", "experiments", "configs", "config",
                                     "conf", "recipes",     NULL};
  static const char *const exts[] = {".py", ".yaml", ".yml", NULL};
  char stem[2][128];
  const char *queue[64];
  int nq = 0;
  if (val == NULL || val[0] == '\0' || strchr(val, '/') || strchr(val, '.') ||
      strlen(val) >= sizeof(stem[0]))
    return NULL;
  snprintf(stem[0], sizeof(stem[0]), "%s", val);
  snprintf(stem[1], sizeof(stem[1]), "%s", val);
  for (char *p = stem[1]; *p; p++)
    if (*p == '-')
      *p = '_';
  for (int t = 0; tops[t] && nq < 64; t++)
    if (sm__fs_is_dir(c, tops[t]))
      queue[nq++] = tops[t];
  for (int q = 0, level = 0; q < nq && level < 3; q++) {
    const char **names;
    int n;
    for (int k = 0; k < 2; k++)
      for (int x = 0; exts[x]; x++) {
        const char *p =
            sm__repo_join(c, queue[q], sm__printf(c, "%s%s", stem[k], exts[x]));
        if (p != NULL && sm__fs_is_file(c, p))
          return p;
      }
    n = sm__src_list(c, queue[q], &names, 256);
    for (int k = 0; k < n && nq < 64; k++) {
      const char *d = sm__printf(c, "%s/%s", queue[q], names[k]);
      if (strchr(names[k], '.') == NULL && sm__fs_is_dir(c, d))
        queue[nq++] = d;
    }
    (void)level;
  }
  return NULL;
}

void sm__named_presets(sm__ctx *c) {
  static const char *const stem_keys[] = {
      "name",   "exp",    "exp_name", "experiment", "experiment_name",
      "preset", "recipe", NULL};
  for (int k = 0; stem_keys[k]; k++) {
    const char *names[2] = {stem_keys[k], NULL};
    const sm__param *p = sm__param_get_min(c, names, SM__L_CMD);
    const char *path;
    if (p == NULL || p->kind != SM__V_STR || strcmp(p->key, stem_keys[k]) != 0)
      continue;
    path = find_by_stem(c, p->str);
    if (path != NULL && sm__cfg_tree(c, path) != NULL)
      sm__config_load(c, path, NULL, SM__L_CONFIG);
  }
  presets_by_key(c);
}

static void presets_by_key(sm__ctx *c) {
  static const char *const keys[] = {"model_name", "accelerate_config",
                                     "model_type", "model_config",
                                     "model",      "arch",
                                     NULL};
  const char *bases[16];
  int nb = 0;
  /* Where configs live: the directories of the files read so far, the
   * entry's and the package's. */
  for (int i = c->cfgs.n - 1; i >= 0 && nb < 5; i--) {
    const char *r = sm__cfg_loaded(c, i), *s = strrchr(r, '/');
    bases[nb++] = s ? sm__strndup(c, r, (size_t)(s - r)) : "";
  }
  if (c->entry_dir && nb < 8)
    bases[nb++] = c->entry_dir;
  if (c->entry_pkg && nb < 8)
    bases[nb++] = c->entry_pkg;
  /* ... and the directories of the first modules the job imports from
   * the repository (a factory that reads its own model_configs/). */
  for (int i = 0; i < c->pyqueue.n && nb < 16; i++) {
    const sm__pyfile *f = &SM__AT(c->pyqueue, sm__pyfile, i);
    const char *sl = strrchr(f->path, '/');
    const char *d = sl ? sm__strndup(c, f->path, (size_t)(sl - f->path)) : "";
    int seen = 0;
    if (d == NULL || f->depth > 2)
      continue;
    for (int b = 0; b < nb && !seen; b++)
      seen = bases[b] != NULL && strcmp(bases[b], d) == 0;
    if (!seen)
      bases[nb++] = d;
  }
  for (int k = 0; keys[k]; k++) {
    const char *names[2] = {keys[k], NULL};
    const sm__param *p = sm__param_get_min(c, names, SM__L_CONFIG);
    const char *path;
    char val[256];
    if (p == NULL || p->kind != SM__V_STR)
      continue;
    snprintf(val, sizeof(val), "%s", p->str);
    path = find_preset(c, keys[k], val, bases, nb);
    if (path == NULL)
      continue;
    /* A preset the program loads after parsing wins over the command. */
    sm__config_load(c, path, NULL,
                    strcmp(keys[k], "accelerate_config") == 0 ? SM__L_CONFIG
                                                              : SM__L_PRESET);
  }
}

/* ==== Hydra ==== */

#define MAX_GROUPS 32

typedef struct hydra {
  sm__ctx *c;                /* context */
  const char *dir;           /* config directory, root-relative */
  const char *g[MAX_GROUPS]; /* group names */
  const char *o[MAX_GROUPS]; /* chosen option (NULL: none) */
  int cmd[MAX_GROUPS];       /* chosen on the command line */
  int ng;                    /* groups */
  int files;                 /* files composed, bounded */
} hydra;

static int group_slot(hydra *h, const char *g) {
  while (*g == '/')
    g++;
  for (int i = 0; i < h->ng; i++)
    if (strcmp(h->g[i], g) == 0)
      return i;
  if (h->ng == MAX_GROUPS)
    return -1;
  h->g[h->ng] = sm__strdup(h->c, g);
  h->o[h->ng] = NULL;
  return h->ng++;
}

/* Splits a defaults entry key "override /model@pkg" into group and
 * package; returns 1 for an override entry, 2 for an optional one. */
static int entry_key(const char *k, char *group, size_t gcap, char *pkg,
                     size_t pcap) {
  int ov = 0;
  const char *at;
  if (strncmp(k, "override ", 9) == 0) {
    ov = 1;
    k += 9;
  } else if (strncmp(k, "optional ", 9) == 0) {
    k += 9;
    ov = 2;
  }
  while (*k == '/' || *k == ' ')
    k++;
  at = strchr(k, '@');
  snprintf(group, gcap, "%.*s", at ? (int)(at - k) : (int)strlen(k), k);
  snprintf(pkg, pcap, "%s", at ? at + 1 : "");
  return ov;
}

/* Text of a scalar node ("" for null). */
static const char *scalar_text(sm__ctx *c, const sm__vnode *n) {
  if (n == NULL)
    return "";
  if (n->t == SM__T_STR)
    return n->str;
  if (n->t == SM__T_NUM)
    return sm__printf(c, "%.17g", n->num);
  if (n->t == SM__T_BOOL)
    return n->num ? "true" : "false";
  return "";
}

/* The file of a group option: "gpt2" or "gpt2.yaml" in dir/group/. */
static const char *option_path(hydra *h, int slot) {
  const char *o = h->o[slot];
  size_t n = strlen(o);
  int ext = n > 5 && strcmp(o + n - 5, ".yaml") == 0;
  return sm__printf(h->c, "%s/%s/%s%s", h->dir, h->g[slot], o,
                    ext ? "" : ".yaml");
}

static sm__vnode *hydra_file(hydra *h, const char *rel) {
  const char *text;
  size_t len;
  if (sm__src_text(h->c, rel, &text, &len) != 0)
    return NULL;
  return sm__vt_yaml(h->c, rel, text, len);
}

/* Pass 1: group choices from the defaults lists, overrides last. */
static void hydra_choices(hydra *h, const char *rel, int depth) {
  sm__vnode *t, *d;
  if (depth > 6 || h->files++ > 64)
    return;
  t = hydra_file(h, rel);
  d = sm__vt_get(t, "defaults");
  if (d == NULL || d->t != SM__T_LIST)
    return;
  for (int i = 0; i < d->n; i++) {
    sm__vnode *e = d->e[i].v, *v;
    char group[256], pkg[128];
    int ov, slot;
    const char *val;
    if (e->t != SM__T_MAP || e->n < 1)
      continue;
    v = e->e[0].v;
    if (v->t != SM__T_STR && v->t != SM__T_NULL && v->t != SM__T_NUM)
      continue;
    ov = entry_key(e->e[0].key, group, sizeof(group), pkg, sizeof(pkg)) == 1;
    slot = group_slot(h, group);
    if (slot < 0)
      continue;
    val = scalar_text(h->c, v);
    if (!h->cmd[slot] && (ov || h->o[slot] == NULL))
      h->o[slot] = (strcmp(val, "null") == 0 || val[0] == '\0') ? NULL : val;
    if (h->o[slot] != NULL) {
      const char *norm = sm__repo_join(h->c, "", option_path(h, slot));
      if (norm && sm__fs_is_file(h->c, norm))
        hydra_choices(h, norm, depth + 1);
    }
  }
}

/* Pass 2: merge in order; the file itself where _self_ stands (last when
 * absent, as Hydra 1.1 does). */
static void hydra_merge(hydra *h, const char *rel, const char *package,
                        int depth) {
  sm__vnode *t, *d;
  int self_done = 0;
  const char *text;
  size_t len;
  if (depth > 6 || h->files++ > 128)
    return;
  /* The package header "# @package _global_" moves the file to the root. */
  if (sm__src_text(h->c, rel, &text, &len) != 0)
    return;
  {
    const char *pk = strstr(text, "@package");
    if (pk != NULL && pk - text < 512) {
      char name[128];
      size_t n = 0;
      pk += 8;
      while (*pk == ' ')
        pk++;
      while (*pk && !isspace((unsigned char)*pk) && n + 1 < sizeof(name))
        name[n++] = *pk++;
      name[n] = '\0';
      /* _group_ is the file's own group (its default package): for
       * the primary config, the root. */
      if (strcmp(name, "_global_") == 0)
        package = "";
      else if (strcmp(name, "_group_") != 0)
        package = sm__strdup(h->c, name);
    }
  }
  t = sm__vt_yaml(h->c, rel, text, len);
  if (t == NULL)
    return;
  sm__words_in(h->c, rel, strlen(rel), sm__ev(h->c, rel, 1), 2);
  d = sm__vt_get(t, "defaults");
  if (d != NULL && d->t == SM__T_LIST) {
    for (int i = 0; i < d->n; i++) {
      sm__vnode *e = d->e[i].v;
      char group[256], pkg[128];
      const char *child;
      int slot, kind;
      if (e->t == SM__T_STR) {
        if (strcmp(e->str, "_self_") == 0) {
          sm__vt_publish(h->c, t, package, SM__L_CONFIG);
          self_done = 1;
          continue;
        }
        /* A config of the same group as this file. */
        {
          const char *slash = strrchr(rel, '/');
          child = sm__printf(h->c, "%.*s/%s.yaml",
                             slash ? (int)(slash - rel) : 0, rel, e->str);
          child = sm__repo_join(h->c, "", child);
          if (child && sm__fs_is_file(h->c, child))
            hydra_merge(h, child, package, depth + 1);
        }
        continue;
      }
      if (e->t != SM__T_MAP || e->n < 1)
        continue;
      kind = entry_key(e->e[0].key, group, sizeof(group), pkg, sizeof(pkg));
      if (kind == 1)
        continue;
      slot = group_slot(h, group);
      if (slot < 0 || h->o[slot] == NULL)
        continue;
      child = sm__repo_join(h->c, "", option_path(h, slot));
      if (child == NULL || !sm__fs_is_file(h->c, child)) {
        if (kind != 2) /* optional groups may be absent */
          sm__warn(h->c, "hydra: %s/%s not found in %s", h->g[slot], h->o[slot],
                   h->dir);
        continue;
      }
      {
        char pk[256];
        const char *gp = pkg[0] ? pkg : h->g[slot];
        size_t k;
        snprintf(pk, sizeof(pk), "%s%s%s", package, package[0] ? "." : "", gp);
        for (k = 0; pk[k]; k++)
          if (pk[k] == '/')
            pk[k] = '.';
        hydra_merge(h, child, sm__strdup(h->c, pk), depth + 1);
      }
    }
  }
  if (!self_done)
    sm__vt_publish(h->c, t, package, SM__L_CONFIG);
}

void sm__hydra(sm__ctx *c, const char *dir, const char *name,
               const char *const *ov, int n_ov) {
  hydra *h = sm_calloc(1, sizeof(*h));
  const char *primary;
  if (h == NULL)
    return;
  h->c = c;
  h->dir = dir;
  primary = sm__repo_join(c, "",
                          sm__printf(c, "%s/%s%s", dir, name,
                                     strstr(name, ".yaml") ? "" : ".yaml"));
  if (primary == NULL || !sm__fs_is_file(c, primary)) {
    sm__warn(c, "hydra: config %s not found in %s", name, dir);
    sm_free(h);
    return;
  }
  /* Command-line group choices win over every defaults list. */
  for (int i = 0; i < n_ov; i++) {
    const char *eq = strchr(ov[i], '=');
    char group[256];
    int slot;
    if (eq == NULL)
      continue;
    snprintf(group, sizeof(group), "%.*s", (int)(eq - ov[i]), ov[i]);
    slot = group_slot(h, group[0] == '+' ? group + 1 : group);
    if (slot >= 0) {
      h->o[slot] = eq[1] ? eq + 1 : NULL;
      h->cmd[slot] = 1;
    }
  }
  hydra_choices(h, primary, 0);
  /* Groups added only on the command line ("+group=x") are merged too. */
  h->files = 0;
  hydra_merge(h, primary, "", 0);
  for (int i = 0; i < n_ov; i++)
    if (ov[i][0] == '+') {
      const char *eq = strchr(ov[i], '=');
      const char *child;
      if (eq == NULL)
        continue;
      child =
          sm__repo_join(c, "",
                        sm__printf(c, "%s/%.*s/%s.yaml", dir,
                                   (int)(eq - ov[i] - 1), ov[i] + 1, eq + 1));
      if (child && sm__fs_is_file(c, child))
        hydra_merge(h, child,
                    sm__strndup(c, ov[i] + 1, (size_t)(eq - ov[i] - 1)), 1);
    }
  sm_free(h);
}

/* ==== Console entry points ==== */

/* Finds "name = "pkg.mod:fn"" (TOML) or "name = pkg.mod:fn" (cfg) or
 * "'name=pkg.mod:fn'" (setup.py) in text. */
static const char *find_entry(sm__ctx *c, const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
    const char *q = p + n, *s, *e;
    if (p > text &&
        (isalnum((unsigned char)p[-1]) || p[-1] == '-' || p[-1] == '_'))
      continue;
    while (*q == ' ' || *q == '"' || *q == '\'')
      q++;
    if (*q != '=')
      continue;
    q++;
    while (*q == ' ' || *q == '"' || *q == '\'')
      q++;
    s = q;
    while (*q && (isalnum((unsigned char)*q) || *q == '_' || *q == '.'))
      q++;
    e = q;
    if (*q != ':' || e == s)
      continue;
    return sm__strndup(c, s, (size_t)(e - s));
  }
  return NULL;
}

const char *sm__console_entry(sm__ctx *c, const char *name) {
  static const char *const files[] = {"pyproject.toml", "setup.cfg", "setup.py",
                                      NULL};
  for (int i = 0; files[i]; i++) {
    const char *text, *m;
    size_t len;
    int rc;
    if (!sm__fs_is_file(c, files[i]))
      continue;
    rc = sm__src_text(c, files[i], &text, &len);
    if (rc != 0)
      continue;
    if ((m = find_entry(c, text, name)) != NULL)
      return m;
  }
  return NULL;
}

void sm__config_targets(sm__ctx *c) {
  int n = c->params.n;
  for (int i = 0; i < n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    const char *dot, *path;
    char mod[256];
    if (p->layer < SM__L_CONFIG || p->kind != SM__V_STR ||
        (strcmp(p->leaf, "_target_") != 0 && strcmp(p->leaf, "class_path")))
      continue;
    dot = strrchr(p->str, '.');
    if (dot == NULL || (size_t)(dot - p->str) >= sizeof(mod))
      continue;
    snprintf(mod, sizeof(mod), "%.*s", (int)(dot - p->str), p->str);
    path = sm__py_module_path(c, "", mod, 0);
    if (path != NULL)
      sm__py_queue_want(c, path, SM__L_CODE, 1, sm__printf(c, ",%s,", dot + 1));
  }
}
