/* cmdargs.c - the entry script's own arguments, applied once the code
 * scan has said which options are flags: `--key value`, `--key=value`,
 * bare flags, `key=value` and Hydra overrides (`group=option`,
 * `+key=value`), and positional or option values that name config files
 * in the repository (YAML, JSON, TOML, Python), which are read at the
 * config layer in the order given. */
#include <ctype.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_DIRS 8
#define MAX_OVERRIDES 64

static int is_flag(sm__ctx *c, const char *key) {
  for (int i = 0; i < c->flags.n; i++)
    if (strcmp(SM__AT(c->flags, const char *, i), key) == 0)
      return 1;
  return 0;
}

static int looks_number(const char *s) {
  double v;
  return sm_parse_double(s, &v) == 0;
}

static int config_ext(const char *p) {
  const char *dot = strrchr(p, '.');
  if (dot == NULL || strchr(dot, '/'))
    return 0;
  return strcasecmp(dot, ".yaml") == 0 || strcasecmp(dot, ".yml") == 0 ||
         strcasecmp(dot, ".json") == 0 || strcasecmp(dot, ".toml") == 0 ||
         strcasecmp(dot, ".py") == 0 || strcasecmp(dot, ".gin") == 0;
}

/* Finds a config file named by word in one of dirs; root-relative path or
 * NULL. */
static const char *find_file(sm__ctx *c, const char *word,
                             const char *const *dirs, int nd) {
  if (!config_ext(word))
    return NULL;
  for (int i = 0; i < nd; i++) {
    const char *p = sm__repo_join(c, dirs[i], word);
    if (p != NULL && sm__fs_is_file(c, p))
      return p;
  }
  /* Say why a named config is not read: outside the root, a link out of
   * it, a FIFO or a device, too big. */
  for (int i = 0; i < nd; i++) {
    const char *p = sm__repo_join(c, dirs[i], word);
    const char *data;
    size_t len;
    if (p == NULL) {
      sm__warn(c, "%s: refused: outside the repository", word);
      return NULL;
    }
    if (sm__repo_exists(c, p)) {
      sm__repo_read_again(c, p, &data, &len);
      return NULL;
    }
  }
  return NULL;
}

static void load(sm__ctx *c, const char *path) {
  const char *dot = strrchr(path, '.');
  if (c->entry != NULL && strcmp(path, c->entry) == 0)
    return;
  if (c->primary_cfg == NULL)
    c->primary_cfg = path;
  if (dot && strcasecmp(dot, ".py") == 0) {
    /* A Python config module (evaluated), or another script (a wrapper's
     * training script) that is scanned like code. */
    sm__vnode *t = sm__cfg_tree(c, path);
    if (t != NULL)
      sm__vt_publish(c, t, NULL, SM__L_CONFIG);
    else
      sm__py_config(c, path, SM__L_CONFIG);
    return;
  }
  sm__config_load(c, path, NULL, SM__L_CONFIG);
}

/* Hydra's own command-line flags choose the primary config over what
 * @hydra.main says: --config-name/-cn NAME, --config-dir/-cd DIR (from
 * the command's directory), --config-path/-cp DIR (from the entry's).
 * They are consumed here. */
static void hydra_flags(sm__ctx *c) {
  const char *name = NULL, *dir = NULL, *path = NULL;
  const char **w2, **e2;
  int k = 0;
  /* The words may be the caller's: the rest are copied. */
  w2 = sm_arena_calloc(&c->arena, (size_t)c->n_sargs + 1, sizeof(*w2));
  e2 = sm_arena_calloc(&c->arena, (size_t)c->n_sargs + 1, sizeof(*e2));
  if (w2 == NULL || e2 == NULL)
    return;
  for (int i = 0; i < c->n_sargs; i++) {
    const char *w = c->sargs[i], *v = NULL, **slot = NULL;
    size_t n = strcspn(w, "=");
    if ((n == 13 && strncmp(w, "--config-name", 13) == 0) ||
        (n == 13 && strncmp(w, "--config_name", 13) == 0) ||
        (n == 3 && strncmp(w, "-cn", 3) == 0))
      slot = &name;
    else if ((n == 12 && strncmp(w, "--config-dir", 12) == 0) ||
             (n == 12 && strncmp(w, "--config_dir", 12) == 0) ||
             (n == 3 && strncmp(w, "-cd", 3) == 0))
      slot = &dir;
    else if ((n == 13 && strncmp(w, "--config-path", 13) == 0) ||
             (n == 13 && strncmp(w, "--config_path", 13) == 0) ||
             (n == 3 && strncmp(w, "-cp", 3) == 0))
      slot = &path;
    if (slot != NULL) {
      int sep = w[n] != '=';
      if (!sep)
        v = w + n + 1;
      else if (i + 1 < c->n_sargs)
        v = c->sargs[i + 1];
      /* Only a Hydra application takes these: a config name or a
       * directory, not a config file (--config_path file.yaml stays an
       * ordinary option). */
      if (v != NULL && !config_ext(v)) {
        *slot = v;
        i += sep;
        continue;
      }
    }
    w2[k] = c->sargs[i];
    e2[k++] = c->sargs_ev[i];
  }
  if (name == NULL && dir == NULL && path == NULL)
    return;
  c->sargs = w2;
  c->sargs_ev = e2;
  c->n_sargs = k;
  if (name != NULL)
    c->hydra_name = name;
  if (dir != NULL) {
    const char *d = sm__repo_join(c, c->cmd_dir ? c->cmd_dir : c->cwd, dir);
    if (d != NULL)
      c->hydra_path = d;
  } else if (path != NULL) {
    const char *d = sm__repo_join(c, c->entry_dir ? c->entry_dir : "", path);
    if (d != NULL)
      c->hydra_path = d;
  }
}

/* What the arguments set up for one another: directories later names
 * are looked for in, Hydra group overrides, the positionals consumed. */
typedef struct argscan {
  const char *dirs[MAX_DIRS];
  int nd;
  const char *ov[MAX_OVERRIDES];
  int nov;
  int npos;
} argscan;

/* The value of option key: a gin binding, a value computed at run time,
 * text, and a config file (or a directory of them) it names. */
static void option_value(sm__ctx *c, argscan *st, const char *key,
                         const char *val, const char *e) {
  if (strcmp(key, "gin_bindings") == 0 || strcmp(key, "gin_param") == 0) {
    /* --gin_bindings 'Trainer.lr = 0.1': a binding of its own. */
    const char *beq = strchr(val, '=');
    if (beq != NULL) {
      char bk[256];
      size_t bn = (size_t)(beq - val);
      while (bn > 0 && val[bn - 1] == ' ')
        bn--;
      sm__key_norm(val, bn, bk, sizeof(bk));
      if (strrchr(bk, '/'))
        memmove(bk, strrchr(bk, '/') + 1, strlen(strrchr(bk, '/')));
      sm__param_text(c, bk, beq + 1, SM__L_CMD, e);
    }
    return;
  }
  if (strchr(val, '\x01') != NULL) {
    /* A value the launch script computes at run time. */
    sm__param_num(c, key, 0, SM__V_UNKNOWN, SM__L_CMD, e);
    return;
  }
  sm__param_text(c, key, val, SM__L_CMD, e);
  {
    /* ml_collections: --config=configs/x.py:arg passes arg to
     * get_config. */
    const char *colon = strrchr(val, ':');
    if (colon != NULL && colon > val && strstr(val, ".py:") == colon - 3) {
      char *file = sm__strndup(c, val, (size_t)(colon - val));
      const char *p2 = file ? find_file(c, file, st->dirs, st->nd) : NULL;
      if (p2 != NULL) {
        sm__py_set_config_arg(c, p2, colon + 1);
        load(c, p2);
        return;
      }
    }
  }
  {
    const char *path = find_file(c, val, st->dirs, st->nd);
    const char *dpath = sm__repo_join(c, st->dirs[0], val);
    if (path != NULL)
      load(c, path);
    else if (dpath != NULL && sm__fs_is_dir(c, dpath) && st->nd < MAX_DIRS &&
             dpath[0] != '\0')
      st->dirs[st->nd++] = dpath; /* -d configs: later names are inside */
  }
}

/* --key[=value] at sargs[i]: returns the index of its last word. */
static int option_arg(sm__ctx *c, argscan *st, int i) {
  const char *w = c->sargs[i], *e = c->sargs_ev[i];
  const char *eq = strchr(w, '=');
  char key[256];
  const char *val = NULL;
  size_t kn = eq ? (size_t)(eq - w) : strlen(w);
  sm__key_norm(w, kn, key, sizeof(key));
  if (key[0] == '\0')
    return i;
  for (int a = 0; a < c->optalias.n; a++) {
    const char **pair = (const char **)c->optalias.v + 2 * a;
    if (strcmp(pair[0], key) == 0) {
      snprintf(key, sizeof(key), "%s", pair[1]);
      break;
    }
  }
  sm__words_in(c, key, strlen(key), e, 2);
  if (eq != NULL) {
    val = eq + 1;
  } else if (!is_flag(c, key) && i + 1 < c->n_sargs &&
             (c->sargs[i + 1][0] != '-' || looks_number(c->sargs[i + 1]))) {
    val = c->sargs[++i];
    e = c->sargs_ev[i];
  }
  if (val == NULL) {
    /* A bare flag: true, or false for a store_false option. */
    const char *names[2] = {key, NULL};
    const sm__param *d = sm__param_get(c, names);
    double v = (d && d->flag == 2) ? 0 : 1;
    sm__param_num(c, key, v, SM__V_BOOL, SM__L_CMD, e);
    return i;
  }
  option_value(c, st, key, val, e);
  return i;
}

/* KEY=VALUE: a Hydra group choice or an override. */
static void assignment_arg(sm__ctx *c, argscan *st, const char *w,
                           const char *eq, const char *e) {
  char key[256];
  int ok = 1;
  for (const char *p = w; p < eq; p++)
    if (!(isalnum((unsigned char)*p) || strchr("_.-+~/@", *p)))
      ok = 0;
  if (!ok)
    return;
  sm__key_norm(w, (size_t)(eq - w), key, sizeof(key));
  if (c->hydra_name != NULL && st->nov < MAX_OVERRIDES) {
    /* A Hydra group choice when the config dir has that group. */
    const char *g = sm__repo_join(c, c->hydra_path ? c->hydra_path : "",
                                  w[0] == '+' ? key : key);
    char raw[256];
    snprintf(raw, sizeof(raw), "%.*s", (int)(eq - w), w);
    if (g != NULL && strchr(key, '.') == NULL && sm__fs_is_dir(c, g)) {
      st->ov[st->nov++] = w;
      return;
    }
  }
  if (w[0] == '~')
    return;
  if ((strcmp(key, "config") == 0 || strcmp(key, "cfg") == 0 ||
       strcmp(key, "config_file") == 0 || strcmp(key, "config_path") == 0) &&
      config_ext(eq + 1)) {
    /* config=apps/x/configs/llama.yaml: an OmegaConf-style command line
     * names its base config as a key (its other keys override it). */
    const char *path = find_file(c, eq + 1, st->dirs, st->nd);
    if (path != NULL)
      load(c, path);
  }
  sm__param_text(c, key, eq + 1, SM__L_CMD, e);
}
/* A config key in the yacs spelling (NUM_GPUS, OUTPUT_DIR): capitals,
 * digits and underscores. */
static int yacs_key(const char *w) {
  size_t n = strlen(w);
  if (n < 3 || n > 64)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!(isupper((unsigned char)w[i]) || isdigit((unsigned char)w[i]) ||
          w[i] == '_'))
      return 0;
  return 1;
}

void sm__command_args(sm__ctx *c) {
  argscan st0, *st = &st0;

  st->nd = st->nov = st->npos = 0;
  st->dirs[st->nd++] = c->cmd_dir ? c->cmd_dir : c->cwd;
  if (c->entry_dir)
    st->dirs[st->nd++] = c->entry_dir;
  st->dirs[st->nd++] = "";
  hydra_flags(c);
  for (int i = 0, overrides = 0; i < c->n_sargs; i++) {
    const char *w = c->sargs[i], *e = c->sargs_ev[i];
    const char *eq = strchr(w, '=');
    if (w[0] == '-' && w[1] != '\0' && !looks_number(w)) {
      i = option_arg(c, st, i);
      continue;
    }
    if (eq != NULL && eq != w) {
      assignment_arg(c, st, w, eq, e);
      continue;
    }
    if (st->npos < c->positionals.n && c->remainder_pos != NULL &&
        strcmp(SM__AT(c->positionals, const char *, st->npos),
               c->remainder_pos) == 0) {
      /* The rest are KEY VALUE overrides. */
      for (; i + 1 < c->n_sargs; i += 2) {
        char key[256];
        sm__key_norm(c->sargs[i], strlen(c->sargs[i]), key, sizeof(key));
        if (key[0] != '\0')
          sm__param_text(c, key, c->sargs[i + 1], SM__L_CMD,
                         c->sargs_ev[i + 1]);
      }
      break;
    }
    if (i + 1 < c->n_sargs &&
        (strchr(w, '.') != NULL || (overrides && yacs_key(w))) &&
        !config_ext(w) && strchr(w, '/') == NULL &&
        isupper((unsigned char)w[0]) && c->sargs[i + 1][0] != '-') {
      /* detectron2-style trailing overrides: SOLVER.BASE_LR 0.001, and
       * among them top-level keys of the same config (NUM_GPUS 2). */
      char key[256];
      sm__key_norm(w, strlen(w), key, sizeof(key));
      sm__param_text(c, key, c->sargs[i + 1], SM__L_CMD, c->sargs_ev[i + 1]);
      overrides = 1;
      i++;
      continue;
    }
    {
      const char *path = find_file(c, w, st->dirs, st->nd);
      if (path != NULL) {
        load(c, path);
      } else if (st->npos < c->positionals.n) {
        /* main.py /data/imagenet: the script's positional "data". */
        sm__param_text(c, SM__AT(c->positionals, const char *, st->npos), w,
                       SM__L_CMD, e);
        st->npos++;
      } else if (strchr(w, '/') != NULL && strlen(w) < 512) {
        /* A path the parser the extractor did not see takes (a CLI
         * built from dataclasses: fairseq-train data-bin/wmt16): its
         * components may name the data. */
        sm__param_str(c, "positional_path", w, SM__V_STR, SM__L_CMD, e);
      }
    }
  }
  if (c->hydra_name != NULL)
    sm__hydra(c, c->hydra_path ? c->hydra_path : "", c->hydra_name, st->ov,
              st->nov);
  /* An option whose default names a config file of the repository (YOLO's
   * --hyp data/hyp.scratch.yaml) is read unless the command set it. */
  for (int i = 0, n = c->params.n; i < n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    const char *names[2];
    const sm__param *top;
    const char *path;
    if (!p->opt || p->kind != SM__V_STR || !config_ext(p->str) ||
        strstr(p->str, ".py") != NULL)
      continue;
    names[0] = p->leaf;
    names[1] = NULL;
    top = sm__param_get(c, names);
    if (top != p)
      continue;
    path = find_file(c, p->str, st->dirs, st->nd);
    if (path != NULL)
      sm__config_load(c, path, NULL, SM__L_CONFIG);
  }
}
