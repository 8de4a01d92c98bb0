/* cfgtree.c - configuration files as value trees, looked up by path and
 * loaded once per extraction, with the inheritance rule of each
 * configuration system.
 *
 * A file is loaded by its extension (YAML, JSON, TOML, gin, Python) into
 * a tree.  Inheritance is resolved on the tree:
 *
 *   _BASE_: file           detectron2 / yacs: deep merge, child wins
 *   BASE: [files]          yacs (Swin-style): the same
 *   _base_: file | [files] mmengine / mmcv: deep merge, `_delete_=True`
 *                          replaces a base mapping
 *   base_config: file      maxtext-style: top-level keys replace
 *   __include__ / base / __base__ / extends: [files]
 *                          deep merge (PaddleDetection and others)
 *   $include: [files]      argbind: the same
 *   <<: *anchor            YAML merge keys (in the YAML reader)
 *
 * A base is looked for next to the file, then in each directory above
 * it, then at the root.  A cycle, a missing base or a base outside the
 * root ends in a warning and the child alone.  The gin and Python readers
 * sit above this file (their bases come back here): they are reached
 * through the context's hooks (sm__ctx_hooks). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "advisor/advisor_int.h"

#define MAX_INHERIT_DEPTH 16

/* ==== The tree of a file, once ==== */

typedef struct cfgent {
  const char *rel; /* root-relative path */
  sm__vnode *tree; /* merged tree, NULL when unreadable */
  int state;       /* 1 loading, 2 done */
} cfgent;

static const char *ext_of(const char *rel) {
  const char *dot = strrchr(rel, '.');
  return (dot && !strchr(dot, '/')) ? dot : "";
}

int sm__cfg_is_config_name(const char *p) {
  const char *e = ext_of(p);
  return strcasecmp(e, ".yaml") == 0 || strcasecmp(e, ".yml") == 0 ||
         strcasecmp(e, ".json") == 0 || strcasecmp(e, ".toml") == 0 ||
         strcasecmp(e, ".py") == 0 || strcasecmp(e, ".gin") == 0;
}

static cfgent *cache_find(sm__ctx *c, const char *rel) {
  for (int i = 0; i < c->cfgs.n; i++) {
    cfgent *e = &SM__AT(c->cfgs, cfgent, i);
    if (strcmp(e->rel, rel) == 0)
      return e;
  }
  return NULL;
}

/* Resolves a base named in file rel: next to it, in each directory
 * above it, at the root.  Root-relative path or NULL. */
const char *sm__cfg_find_near(sm__ctx *c, const char *rel, const char *name) {
  char dir[1024];
  const char *slash = strrchr(rel, '/');
  if (name == NULL || name[0] == '\0')
    return NULL;
  snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 0, rel);
  for (;;) {
    const char *p = sm__repo_join(c, dir, name);
    char *up;
    if (p != NULL && sm__fs_is_file(c, p))
      return p;
    if (dir[0] == '\0')
      break;
    up = strrchr(dir, '/');
    if (up == NULL)
      dir[0] = '\0';
    else
      *up = '\0';
  }
  return NULL;
}

/* Inheritance keys and their merge rules. */
static const struct {
  const char *key;
  int rules;
} inherit_keys[] = {
    {"_BASE_", SM__VM_DEEP},       {"BASE", SM__VM_DEEP},
    {"_base_", SM__VM_DELETE_KEY}, {"base_config", SM__VM_TOP_ONLY},
    {"__base__", SM__VM_DEEP},     {"__include__", SM__VM_DEEP},
    {"base", SM__VM_DEEP},         {"extends", SM__VM_DEEP},
    {"inherit_from", SM__VM_DEEP}, {"$include", SM__VM_DEEP},
};

/* Does v name config files (a string or a list of strings with a config
 * extension)? */
static int names_files(const sm__vnode *v) {
  if (v == NULL)
    return 0;
  if (v->t == SM__T_STR)
    return sm__cfg_is_config_name(v->str);
  if (v->t == SM__T_LIST) {
    int any = 0;
    for (int i = 0; i < v->n; i++) {
      const sm__vnode *k = v->e[i].v;
      if (k->t != SM__T_STR)
        return 0;
      if (k->str[0] == '\0')
        continue;
      if (!sm__cfg_is_config_name(k->str))
        return 0;
      any = 1;
    }
    return any;
  }
  return 0;
}

/* The tree of rel with the bases it names merged under it. */
sm__vnode *sm__cfg_inherit(sm__ctx *c, const char *rel, sm__vnode *t,
                           int depth) {
  sm__vnode *base = NULL, *child;
  int rules = SM__VM_DEEP, found = 0;

  if (t == NULL || t->t != SM__T_MAP)
    return t;
  child = sm__vt_copy(c, t);
  if (child == NULL)
    return t;
  for (size_t k = 0; k < SM_ARRAY_LEN(inherit_keys); k++) {
    sm__vnode *v = sm__vt_get(t, inherit_keys[k].key);
    if (!names_files(v))
      continue;
    found = 1;
    rules = inherit_keys[k].rules;
    sm__vt_del(child, inherit_keys[k].key);
    for (int i = 0; i < (v->t == SM__T_LIST ? v->n : 1); i++) {
      const sm__vnode *item = v->t == SM__T_LIST ? v->e[i].v : v;
      const char *p;
      sm__vnode *bt;
      if (item->str[0] == '\0')
        continue;
      p = sm__cfg_find_near(c, rel, item->str);
      if (p == NULL) {
        sm__warn(c, "%s:%d: base %s not found in the repository", rel,
                 item->line, item->str);
        continue;
      }
      bt = sm__cfg_tree_depth(c, p, depth + 1);
      if (bt != NULL)
        base = sm__vt_merge(c, base, bt, rules);
    }
  }
  if (!found)
    return t;
  return base ? sm__vt_merge(c, base, child, rules) : child;
}

/* TOML and gin go through their own readers. */
sm__vnode *sm__cfg_tree_depth(sm__ctx *c, const char *rel, int depth) {
  cfgent *e = cache_find(c, rel);
  const char *ext = ext_of(rel), *text;
  size_t len;
  sm__vnode *t = NULL;
  int i;

  if (e != NULL) {
    if (e->state == 1) {
      sm__warn(c, "%s: inheritance cycle, base not merged again", rel);
      return NULL;
    }
    return e->tree;
  }
  if (depth > MAX_INHERIT_DEPTH) {
    sm__warn(c, "%s: bases nested too deep, not read", rel);
    return NULL;
  }
  if (c->cfgs.sz == 0)
    sm__vec_init(&c->cfgs, sizeof(cfgent));
  e = sm__vec_push(&c->cfgs);
  if (e == NULL)
    return NULL;
  e->rel = sm__strdup(c, rel);
  e->state = 1;
  i = c->cfgs.n - 1;
  if (strcasecmp(ext, ".py") == 0) {
    t = c->up.py_config_tree ? c->up.py_config_tree(c, rel, depth) : NULL;
  } else if (sm__src_text(c, rel, &text, &len) == 0) {
    if (strcasecmp(ext, ".json") == 0)
      t = sm__vt_json(c, rel, text, len);
    else if (strcasecmp(ext, ".toml") == 0)
      t = sm__vt_toml(c, rel, text, len);
    else if (strcasecmp(ext, ".gin") == 0)
      t = c->up.gin_tree ? c->up.gin_tree(c, rel, text, len, depth) : NULL;
    else
      t = sm__vt_yaml(c, rel, text, len);
    if (strcasecmp(ext, ".toml") != 0 && strcasecmp(ext, ".gin") != 0)
      t = sm__cfg_inherit(c, rel, t, depth);
  }
  /* The vector may have moved while bases were loaded. */
  e = &SM__AT(c->cfgs, cfgent, i);
  e->tree = t;
  e->state = 2;
  return t;
}

sm__vnode *sm__cfg_tree(sm__ctx *c, const char *rel) {
  return sm__cfg_tree_depth(c, rel, 0);
}

const char *sm__cfg_loaded(sm__ctx *c, int i) {
  return i >= 0 && i < c->cfgs.n ? SM__AT(c->cfgs, cfgent, i).rel : NULL;
}

/* ==== DeepSpeed's batch ==== */

sm__vnode *sm__ds_config(sm__ctx *c, sm__vnode *t) {
  sm__vnode *tb, *out;
  if (t == NULL || t->t != SM__T_MAP ||
      (tb = sm__vt_get(t, "train_batch_size")) == NULL ||
      (sm__vt_get(t, "zero_optimization") == NULL &&
       sm__vt_get(t, "train_micro_batch_size_per_gpu") == NULL &&
       sm__vt_get(t, "zero_allow_untested_optimizer") == NULL))
    return t;
  /* DeepSpeed's train_batch_size is the batch of all ranks together. */
  out = sm__vt_copy(c, t);
  if (out == NULL)
    return t;
  sm__vt_del(out, "train_batch_size");
  sm__vt_put(c, out, "total_train_batch_size", tb);
  return out;
}
