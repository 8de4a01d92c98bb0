/* toml.c - TOML documents as value trees, through the tree-sitter TOML
 * grammar (complete TOML 1.0: tables, arrays of tables, dotted and quoted
 * keys, inline tables, multi-line strings and arrays).  Every value keeps
 * its line.  A syntax error leaves the parts that parsed and a warning. */
#include <ctype.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "advisor/advisor_int.h"
#include "advisor/tsnode.h"

#define MAX_DEPTH 64
#define MAX_VALUES 100000

typedef struct tctx {
  sm__ctx *c;      /* context */
  const char *rel; /* file */
  const char *src; /* text */
  int count;       /* values made, bounded */
} tctx;

static const char *span(tctx *t, TSNode n, size_t *len) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  *len = b - a;
  return t->src + a;
}

/* The text of a TOML string node without its quotes; basic escapes
 * decoded. */
static const char *string_text(tctx *t, TSNode n) {
  size_t len, q = 1;
  const char *s = span(t, n, &len);
  sm_buf b;
  const char *out;
  int literal;
  if (len >= 6 && (strncmp(s, "\"\"\"", 3) == 0 || strncmp(s, "'''", 3) == 0))
    q = 3;
  if (len < 2 * q)
    return "";
  literal = s[0] == '\'';
  sm_buf_init(&b, 1 << 20);
  for (size_t i = q; i < len - q; i++) {
    if (!literal && s[i] == '\\' && i + 1 < len - q) {
      char e = s[++i];
      sm_buf_addc(&b, e == 'n' ? '\n' : e == 't' ? '\t' : e);
    } else {
      sm_buf_addc(&b, s[i]);
    }
  }
  out = sm__strdup(t->c, sm_buf_str(&b));
  sm_buf_release(&b);
  /* A multi-line basic string drops the newline right after the quotes. */
  if (q == 3 && out && out[0] == '\n')
    out++;
  return out ? out : "";
}

/* Key parts of a bare, quoted or dotted key into parts[]; the count. */
static int key_parts(tctx *t, TSNode k, const char **parts, int max) {
  if (is(k, "dotted_key")) {
    int n = 0;
    uint32_t nc = ts_node_named_child_count(k);
    for (uint32_t i = 0; i < nc && n < max; i++)
      n += key_parts(t, ts_node_named_child(k, i), parts + n, max - n);
    return n;
  }
  if (max < 1)
    return 0;
  if (is(k, "quoted_key")) {
    parts[0] = string_text(t, k);
    return 1;
  }
  if (is(k, "bare_key")) {
    size_t len;
    const char *s = span(t, k, &len);
    parts[0] = sm__strndup(t->c, s, len);
    return parts[0] ? 1 : 0;
  }
  return 0;
}

static sm__vnode *value(tctx *t, TSNode n, int depth);

/* Sets parts[0..np) = v inside map (tables created along the way). */
static int set_in(tctx *t, sm__vnode *map, const char **parts, int np,
                  sm__vnode *v) {
  for (int i = 0; i + 1 < np; i++) {
    sm__vnode *next = sm__vt_get(map, parts[i]);
    if (next == NULL || next->t != SM__T_MAP) {
      next = sm__vt_new(t->c, SM__T_MAP, t->rel, v->line);
      if (next == NULL || sm__vt_put(t->c, map, parts[i], next) != 0)
        return SM_ENOMEM;
    }
    map = next;
  }
  return sm__vt_put(t->c, map, parts[np - 1], v);
}

static void pairs_into(tctx *t, sm__vnode *map, TSNode parent, int first,
                       int depth) {
  uint32_t nc = ts_node_named_child_count(parent);
  for (uint32_t i = (uint32_t)first; i < nc; i++) {
    TSNode p = ts_node_named_child(parent, i);
    const char *parts[32];
    int np;
    sm__vnode *v;
    if (!is(p, "pair") || ts_node_named_child_count(p) < 2)
      continue;
    np = key_parts(t, ts_node_named_child(p, 0), parts, 32);
    v = value(t, ts_node_named_child(p, 1), depth + 1);
    if (np > 0 && v != NULL)
      set_in(t, map, parts, np, v);
  }
}

static sm__vnode *value(tctx *t, TSNode n, int depth) {
  sm__ctx *c = t->c;
  const char *ty = ts_node_type(n);
  int line = line_of(n);
  size_t len;
  const char *s;
  if (depth > MAX_DEPTH || ++t->count > MAX_VALUES)
    return NULL;
  if (strcmp(ty, "string") == 0) {
    sm__vnode *v = sm__vt_strv(c, string_text(t, n), t->rel, line);
    if (v != NULL)
      v->flags |= SM__VF_QUOTED;
    return v;
  }
  if (strcmp(ty, "integer") == 0 || strcmp(ty, "float") == 0) {
    char buf[64];
    size_t o = 0;
    s = span(t, n, &len);
    for (size_t i = 0; i < len && o + 1 < sizeof(buf); i++)
      if (s[i] != '_')
        buf[o++] = s[i];
    buf[o] = '\0';
    if (strcmp(buf, "inf") == 0 || strcmp(buf, "+inf") == 0 ||
        strcmp(buf, "-inf") == 0 || strstr(buf, "nan"))
      return sm__vt_new(c, SM__T_UNKNOWN, t->rel, line);
    return sm__vt_text(c, buf, t->rel, line);
  }
  if (strcmp(ty, "boolean") == 0) {
    s = span(t, n, &len);
    return sm__vt_numv(c, SM__T_BOOL, len == 4, t->rel, line);
  }
  if (strcmp(ty, "array") == 0) {
    sm__vnode *l = sm__vt_new(c, SM__T_LIST, t->rel, line);
    uint32_t nc = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < nc && l != NULL; i++) {
      TSNode k = ts_node_named_child(n, i);
      sm__vnode *v;
      if (is(k, "comment"))
        continue;
      v = value(t, k, depth + 1);
      if (v != NULL)
        sm__vt_push(c, l, v);
    }
    return l;
  }
  if (strcmp(ty, "inline_table") == 0) {
    sm__vnode *m = sm__vt_new(c, SM__T_MAP, t->rel, line);
    if (m != NULL)
      pairs_into(t, m, n, 0, depth);
    return m;
  }
  /* Dates and times: kept as text. */
  s = span(t, n, &len);
  return sm__vt_strv(c, sm__strndup(c, s, len), t->rel, line);
}

sm__vnode *sm__vt_toml(sm__ctx *c, const char *rel, const char *text,
                       size_t len) {
  TSTree *tree = sm__src_tree_text(c, text, len, SM__G_TOML);
  const char *src = text;
  TSNode root;
  sm__vnode *doc;
  tctx t;
  uint32_t nc;

  if (tree == NULL)
    return NULL;
  root = ts_tree_root_node(tree);
  if (ts_node_has_error(root))
    sm__warn(c, "%s: TOML syntax errors, read what parsed", rel);
  t.c = c;
  t.rel = rel;
  t.src = src;
  t.count = 0;
  doc = sm__vt_new(c, SM__T_MAP, rel, 1);
  if (doc == NULL)
    return NULL;
  pairs_into(&t, doc, root, 0, 0);
  nc = ts_node_named_child_count(root);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode tb = ts_node_named_child(root, i);
    const char *parts[32];
    int np, arr = is(tb, "table_array_element");
    sm__vnode *m, *cur;
    if (!arr && !is(tb, "table"))
      continue;
    if (ts_node_named_child_count(tb) < 1)
      continue;
    np = key_parts(&t, ts_node_named_child(tb, 0), parts, 32);
    if (np == 0)
      continue;
    m = sm__vt_new(c, SM__T_MAP, rel, line_of(tb));
    if (m == NULL)
      return doc;
    pairs_into(&t, m, tb, 1, 1);
    /* Walk to the parent table, creating it; [[x]] appends to a list. */
    cur = doc;
    for (int k = 0; k + 1 < np; k++) {
      sm__vnode *next = sm__vt_get(cur, parts[k]);
      if (next != NULL && next->t == SM__T_LIST && next->n > 0)
        next = next->e[next->n - 1].v;
      if (next == NULL || next->t != SM__T_MAP) {
        next = sm__vt_new(c, SM__T_MAP, rel, line_of(tb));
        if (next == NULL || sm__vt_put(c, cur, parts[k], next) != 0)
          return doc;
      }
      cur = next;
    }
    if (arr) {
      sm__vnode *l = sm__vt_get(cur, parts[np - 1]);
      if (l == NULL || l->t != SM__T_LIST) {
        l = sm__vt_new(c, SM__T_LIST, rel, line_of(tb));
        if (l == NULL || sm__vt_put(c, cur, parts[np - 1], l) != 0)
          return doc;
      }
      sm__vt_push(c, l, m);
    } else {
      sm__vnode *old = sm__vt_get(cur, parts[np - 1]);
      /* [a] after [a.b]: keep the sub-tables already made. */
      if (old != NULL && old->t == SM__T_MAP)
        m = sm__vt_merge(c, old, m, SM__VM_DEEP);
      if (m != NULL)
        sm__vt_put(c, cur, parts[np - 1], m);
    }
  }
  return doc;
}
