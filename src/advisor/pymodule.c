/* pymodule.c - Python modules of the repository by name, and the queue
 * of files the code scan visits.  A module name resolves from the
 * importing file's directory (relative imports climb), the entry's and
 * the command's directories, the root and src/, then setuptools'
 * package_dir (read from setup.py by the evaluator above this file,
 * through sm__ctx_hooks.package_dir).  The queue keeps each file once;
 * a file imported for some names only serves more names, or all, when it
 * is queued again before it is scanned. */
#include <ctype.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_PY_FILES 160

/* ==== Module names to files ==== */

const char *sm__py_module_path(sm__ctx *c, const char *dir, const char *module,
                               int level) {
  const char *bases[6];
  int nb = 0;
  char mod[512];
  size_t i;

  if (strlen(module) >= sizeof(mod))
    return NULL;
  for (i = 0; module[i]; i++)
    mod[i] = module[i] == '.' ? '/' : module[i];
  mod[i] = '\0';
  if (level > 0) {
    const char *b = dir;
    for (int k = 1; k < level && b; k++)
      b = sm__repo_join(c, b, "..");
    if (b == NULL)
      return NULL;
    bases[nb++] = b;
  } else {
    bases[nb++] = dir;
    if (c->entry_dir)
      bases[nb++] = c->entry_dir;
    if (c->cmd_dir)
      bases[nb++] = c->cmd_dir;
    bases[nb++] = "";
    bases[nb++] = "src";
  }
  for (int k = 0; k < nb; k++) {
    const char *cand[2];
    if (bases[k] == NULL)
      continue;
    cand[0] = sm__printf(c, "%s%s%s.py", bases[k], bases[k][0] ? "/" : "", mod);
    cand[1] = sm__printf(c, "%s%s%s/__init__.py", bases[k],
                         bases[k][0] ? "/" : "", mod);
    for (int j = 0; j < 2; j++) {
      const char *p = sm__repo_join(c, "", cand[j]);
      if (p != NULL && sm__fs_is_file(c, p))
        return p;
    }
    if (mod[0] == '\0')
      break;
  }
  if (level == 0) {
    /* vision.fair.<repo>.tools.train: the repository imported as a
     * package of a larger tree under its own name (a monorepo prefix);
     * the rest is a path from the root. */
    const char *base = c->root ? strrchr(c->root, '/') : NULL;
    size_t bl = base ? strlen(base + 1) : 0;
    for (const char *q = module; bl >= 3 && q && *q;) {
      const char *dot = strchr(q, '.');
      size_t cl = dot ? (size_t)(dot - q) : strlen(q);
      int same = cl == bl && dot != NULL && q != module;
      for (size_t j = 0; same && j < cl; j++) {
        char a = (char)tolower((unsigned char)q[j]);
        char b = (char)tolower((unsigned char)base[1 + j]);
        same = a == b || ((a == '_' || a == '-') && (b == '_' || b == '-'));
      }
      if (same)
        return sm__py_module_path(c, "", dot + 1, 0);
      q = dot ? dot + 1 : NULL;
    }
  }
  if (level == 0) {
    /* setuptools package_dir: {"pkg.tools": "tools"} installs a directory
     * under another package name. */
    const sm__vnode *pd = c->up.package_dir ? c->up.package_dir(c) : NULL;
    for (int k = 0; pd != NULL && k < pd->n; k++) {
      const char *pkg = pd->e[k].key;
      const sm__vnode *d = pd->e[k].v;
      size_t pl = pkg ? strlen(pkg) : 0;
      const char *rest;
      if (pl == 0 || d->t != SM__T_STR || strncmp(module, pkg, pl) != 0 ||
          (module[pl] != '\0' && module[pl] != '.'))
        continue;
      rest = module + pl;
      for (int j = 0; j < 2; j++) {
        const char *cand = sm__printf(c, "%s%s%s%s", d->str, rest[0] ? "/" : "",
                                      rest[0] ? rest + 1 : "",
                                      j == 0 ? ".py" : "/__init__.py");
        char *q;
        const char *p;
        if (cand == NULL)
          continue;
        for (q = (char *)cand + strlen(d->str); *q; q++)
          if (*q == '.' && strcmp(q, ".py") != 0)
            *q = '/';
        p = sm__repo_join(c, "", cand);
        if (p != NULL && sm__fs_is_file(c, p))
          return p;
      }
    }
  }
  return NULL;
}

/* ==== The scan queue ==== */

void sm__py_queue_want(sm__ctx *c, const char *rel, int layer, int depth,
                       const char *want) {
  sm__pyfile *f;
  for (int i = 0; i < c->pyqueue.n; i++) {
    f = &SM__AT(c->pyqueue, sm__pyfile, i);
    if (strcmp(f->path, rel) != 0)
      continue;
    /* Not scanned yet: it now serves these names too. */
    if (i >= c->pyqueue_done && f->want != NULL) {
      if (want == NULL)
        f->want = NULL;
      else if (strlen(f->want) + strlen(want) < 4096)
        f->want = sm__printf(c, "%s%s", f->want, want + 1);
    }
    return;
  }
  if (c->pyqueue.n >= MAX_PY_FILES)
    return;
  f = sm__vec_push(&c->pyqueue);
  if (f != NULL) {
    f->path = rel;
    f->layer = layer;
    f->depth = depth;
    f->want = want;
  }
}

void sm__py_queue(sm__ctx *c, const char *rel, int layer, int depth) {
  sm__py_queue_want(c, rel, layer, depth, NULL);
}
