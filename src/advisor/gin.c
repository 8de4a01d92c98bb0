/* gin.c - gin-config bindings as a value tree.
 *
 *   include 'base.gin'            merged under this file
 *   MACRO = 1024                  a macro, used as %MACRO
 *   Trainer.num_steps = 10000     a binding: the tree path Trainer.num_steps
 *   train/Trainer.lr = 1e-3       a scoped binding (the scope is dropped)
 *   Model.act = @relu             a reference to a configurable (kept as text)
 *
 * Values are Python literals (numbers, strings, booleans, None, lists,
 * tuples, dicts), possibly over several lines inside brackets.  `import`
 * lines are skipped.  Command-line bindings (--gin.A.b=v,
 * --gin_bindings 'A.b = v') are read with sm__gin_binding. */
#include <ctype.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_DEPTH 32

typedef struct gparse {
  sm__ctx *c;        /* context */
  const char *rel;   /* file */
  const char *p;     /* cursor */
  const char *end;   /* end of text */
  int line;          /* line of the cursor */
  sm__vnode *macros; /* macros seen so far */
} gparse;

static void skip_ws(gparse *g) {
  while (g->p < g->end) {
    if (*g->p == '\n') {
      g->line++;
      g->p++;
    } else if (*g->p == ' ' || *g->p == '\t' || *g->p == '\r' ||
               (*g->p == '\\' && g->p + 1 < g->end && g->p[1] == '\n')) {
      g->p++;
    } else if (*g->p == '#') {
      while (g->p < g->end && *g->p != '\n')
        g->p++;
    } else {
      break;
    }
  }
}

static sm__vnode *literal(gparse *g, int depth);

static sm__vnode *container(gparse *g, char close, int dict, int depth) {
  sm__vnode *n =
      sm__vt_new(g->c, dict ? SM__T_MAP : SM__T_LIST, g->rel, g->line);
  g->p++;
  for (;;) {
    sm__vnode *k = NULL, *v;
    skip_ws(g);
    if (g->p >= g->end)
      return NULL;
    if (*g->p == close) {
      g->p++;
      return n;
    }
    if (dict) {
      k = literal(g, depth + 1);
      skip_ws(g);
      if (k == NULL || g->p >= g->end || *g->p != ':')
        return NULL;
      g->p++;
    }
    v = literal(g, depth + 1);
    if (v == NULL || n == NULL)
      return NULL;
    if (dict) {
      const char *key = k->t == SM__T_STR   ? k->str
                        : k->t == SM__T_NUM ? sm__printf(g->c, "%.17g", k->num)
                                            : NULL;
      if (key != NULL)
        sm__vt_put(g->c, n, key, v);
    } else {
      sm__vt_push(g->c, n, v);
    }
    skip_ws(g);
    if (g->p < g->end && *g->p == ',')
      g->p++;
  }
}

static sm__vnode *literal(gparse *g, int depth) {
  const char *s;
  int line;
  skip_ws(g);
  if (g->p >= g->end || depth > MAX_DEPTH)
    return NULL;
  line = g->line;
  if (*g->p == '[')
    return container(g, ']', 0, depth);
  if (*g->p == '(')
    return container(g, ')', 0, depth);
  if (*g->p == '{')
    return container(g, '}', 1, depth);
  if (*g->p == '"' || *g->p == '\'') {
    char q = *g->p++;
    sm_buf b;
    sm__vnode *v;
    sm_buf_init(&b, 1 << 16);
    while (g->p < g->end && *g->p != q && *g->p != '\n') {
      if (*g->p == '\\' && g->p + 1 < g->end)
        g->p++;
      sm_buf_addc(&b, *g->p++);
    }
    if (g->p < g->end && *g->p == q)
      g->p++;
    v = sm__vt_strv(g->c, sm_buf_str(&b), g->rel, line);
    sm_buf_release(&b);
    return v;
  }
  s = g->p;
  while (g->p < g->end && !strchr(",:)]}\n#", *g->p))
    g->p++;
  {
    size_t n = (size_t)(g->p - s);
    char *t;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
      n--;
    t = sm__strndup(g->c, s, n);
    if (t == NULL || n == 0)
      return NULL;
    if (t[0] == '%') {
      /* A macro: its value when known. */
      sm__vnode *m = sm__vt_get(g->macros, t + 1);
      return m ? m : sm__vt_new(g->c, SM__T_UNKNOWN, g->rel, line);
    }
    if (t[0] == '@')
      return sm__vt_strv(g->c, t, g->rel, line);
    if (strcmp(t, "True") == 0 || strcmp(t, "False") == 0)
      return sm__vt_numv(g->c, SM__T_BOOL, t[0] == 'T', g->rel, line);
    return sm__vt_text(g->c, t, g->rel, line);
  }
}

/* One "name = value" binding into root; returns the new root. */
static sm__vnode *bind(gparse *g, sm__vnode *root, const char *name,
                       sm__vnode *v) {
  const char *slash = strrchr(name, '/');
  char key[512];
  if (slash != NULL)
    name = slash + 1;
  sm__key_norm(name, strlen(name), key, sizeof(key));
  if (key[0] == '\0' || v == NULL)
    return root;
  if (strchr(key, '.') == NULL) {
    /* A macro. */
    sm__vt_put(g->c, g->macros, sm__strdup(g->c, name), v);
  }
  return sm__vt_set_path(g->c, root, key, v);
}

sm__vnode *sm__vt_gin(sm__ctx *c, const char *rel, const char *text, size_t len,
                      int depth) {
  gparse g;
  sm__vnode *root = sm__vt_new(c, SM__T_MAP, rel, 1);
  sm__vnode *base = NULL;

  g.c = c;
  g.rel = rel;
  g.p = text;
  g.end = text + len;
  g.line = 1;
  g.macros = sm__vt_new(c, SM__T_MAP, rel, 1);
  if (root == NULL || g.macros == NULL)
    return NULL;
  while (g.p < g.end) {
    const char *ls, *eq, *le;
    int lline;
    char name[512];
    size_t n;
    skip_ws(&g);
    if (g.p >= g.end)
      break;
    ls = g.p;
    lline = g.line;
    le = memchr(ls, '\n', (size_t)(g.end - ls));
    if (le == NULL)
      le = g.end;
    if (strncmp(ls, "import ", 7) == 0 || strncmp(ls, "from ", 5) == 0) {
      g.p = le;
      continue;
    }
    if (strncmp(ls, "include ", 8) == 0) {
      sm__vnode *f;
      g.p = ls + 8;
      f = literal(&g, 0);
      if (f != NULL && f->t == SM__T_STR) {
        const char *p = sm__cfg_find_near(c, rel, f->str);
        sm__vnode *bt = p ? sm__cfg_tree_depth(c, p, depth + 1) : NULL;
        if (p == NULL)
          sm__warn(c, "%s:%d: include %s not found in the repository", rel,
                   g.line, f->str);
        if (bt != NULL)
          base = sm__vt_merge(c, base, bt, SM__VM_DEEP);
      }
      g.p = le;
      continue;
    }
    eq = memchr(ls, '=', (size_t)(le - ls));
    if (eq == NULL) {
      sm__warn(c, "%s:%d: gin: not a binding, line skipped", rel, g.line);
      g.p = le;
      continue;
    }
    n = (size_t)(eq - ls);
    while (n > 0 && isspace((unsigned char)ls[n - 1]))
      n--;
    snprintf(name, sizeof(name), "%.*s", (int)n, ls);
    g.p = eq + 1;
    {
      int l0 = g.line;
      sm__vnode *v = literal(&g, 0);
      if (v == NULL) {
        sm__warn(c, "%s:%d: gin: value not read", rel, l0);
        g.p = le;
        g.line = lline;
        continue;
      }
      root = bind(&g, root, name, v);
      if (root == NULL)
        return NULL;
    }
    /* Rest of the line. */
    while (g.p < g.end && *g.p != '\n')
      g.p++;
  }
  return base ? sm__vt_merge(c, base, root, SM__VM_DEEP) : root;
}
