/* source.c - every file of an extraction is read once and parsed once.
 *
 * The readers (launch scripts, configs, Python modules) ask here for a
 * file's text and its syntax tree in one of the tree-sitter grammars
 * (Python, bash, TOML).  The first request reads the file through the
 * repository's safe reader and parses it; later requests, from the same
 * reader or another one, get the same text and tree.  So a module that
 * the entry imports and a config evaluator loads is parsed once, and the
 * work follows the files on the job's path. */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include <tree_sitter/api.h>

#include "advisor/advisor_int.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_bash(void);
const TSLanguage *tree_sitter_toml(void);

/* One file. */
typedef struct sm__src {
  const char *rel;            /* root-relative path, NULL: inline text */
  const char *text;           /* contents (arena) */
  size_t len;                 /* length */
  int rc;                     /* result of the read */
  TSTree *tree[SM__NGRAMMAR]; /* parses, by grammar */
} sm__src;

static sm__src *find(sm__ctx *c, const char *rel) {
  for (int i = 0; i < c->srcs.n; i++) {
    sm__src *s = &SM__AT(c->srcs, sm__src, i);
    if (s->rel != NULL && strcmp(s->rel, rel) == 0)
      return s;
  }
  return NULL;
}

static sm__src *load(sm__ctx *c, const char *rel) {
  sm__src *s = find(c, rel);
  const char *text;
  size_t len;
  int rc;
  if (s != NULL)
    return s;
  if (c->srcs.sz == 0)
    sm__vec_init(&c->srcs, sizeof(sm__src));
  rc = sm__repo_read(c, rel, &text, &len);
  if (rc == SM_EBUSY)
    rc = sm__repo_read_again(c, rel, &text, &len);
  s = sm__vec_push(&c->srcs);
  if (s == NULL)
    return NULL;
  s->rel = sm__strdup(c, rel);
  s->rc = rc;
  if (rc == 0) {
    s->text = text;
    s->len = len;
  }
  return s;
}

int sm__src_text(sm__ctx *c, const char *rel, const char **text, size_t *len) {
  sm__src *s = load(c, rel);
  if (s == NULL)
    return SM_ENOMEM;
  if (s->rc != 0)
    return s->rc;
  *text = s->text;
  *len = s->len;
  return 0;
}

static const TSLanguage *language(int g) {
  switch (g) {
  case SM__G_PYTHON:
    return tree_sitter_python();
  case SM__G_BASH:
    return tree_sitter_bash();
  case SM__G_TOML:
    return tree_sitter_toml();
  default:
    return NULL;
  }
}

static TSTree *parse(sm__ctx *c, const char *text, size_t len, int g,
                     const char *name) {
  TSParser *p = ts_parser_new();
  TSTree *t = NULL;
  if (p == NULL)
    return NULL;
  if (!ts_parser_set_language(p, language(g))) {
    sm__warn(c, "a tree-sitter grammar does not load: %s not read", name);
  } else {
    /* The parse is bounded by the file cap; the timeout bounds a
     * pathological input further (microseconds). */
    ts_parser_set_timeout_micros(p, 1000000);
    t = ts_parser_parse_string(p, NULL, text, (uint32_t)len);
    if (t == NULL)
      sm__warn(c, "%s: not parsed (time limit)", name);
  }
  ts_parser_delete(p);
  return t;
}

TSTree *sm__src_tree(sm__ctx *c, const char *rel, int g, const char **text) {
  sm__src *s = load(c, rel);
  if (s == NULL || s->rc != 0 || g < 0 || g >= SM__NGRAMMAR)
    return NULL;
  if (s->tree[g] == NULL)
    s->tree[g] = parse(c, s->text, s->len, g, rel);
  *text = s->text;
  return s->tree[g];
}

TSTree *sm__src_tree_text(sm__ctx *c, const char *text, size_t len, int g) {
  sm__src *s;
  if (g < 0 || g >= SM__NGRAMMAR)
    return NULL;
  if (c->srcs.sz == 0)
    sm__vec_init(&c->srcs, sizeof(sm__src));
  s = sm__vec_push(&c->srcs);
  if (s == NULL)
    return NULL;
  s->text = text;
  s->len = len;
  s->tree[g] = parse(c, text, len, g, "inline script");
  return s->tree[g];
}

void sm__src_release(sm__ctx *c) {
  sm_free(c->fs_cache);
  c->fs_cache = NULL;
  for (int i = 0; i < c->srcs.n; i++) {
    sm__src *s = &SM__AT(c->srcs, sm__src, i);
    for (int g = 0; g < SM__NGRAMMAR; g++)
      if (s->tree[g] != NULL)
        ts_tree_delete(s->tree[g]);
  }
  sm__vec_release(&c->srcs);
}

int sm__src_list(sm__ctx *c, const char *dir, const char ***names, int max) {
  const char *full;
  const char **out;
  DIR *d;
  struct dirent *de;
  int n = 0;

  *names = NULL;
  if (!sm__fs_is_dir(c, dir))
    return SM_ENOENT;
  full = sm__printf(c, "%s%s%s", c->root, dir[0] ? "/" : "", dir);
  out = sm_arena_calloc(&c->arena, (size_t)max + 1, sizeof(*out));
  if (full == NULL || out == NULL)
    return SM_ENOMEM;
  d = opendir(full);
  if (d == NULL)
    return SM_ENOENT;
  while (n < max && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    out[n] = sm__strdup(c, de->d_name);
    if (out[n] != NULL)
      n++;
  }
  closedir(d);
  *names = out;
  return n;
}

/* ==== Cached file tests ==== */

/* The readers ask the same questions many times (each import tries a
 * few candidate paths, each preset a few directories); the repository's
 * checks resolve every component of a path, so the answers are kept for
 * the extraction.  Reading still goes through the safe reader. */
#define FS_CAP 4096

typedef struct fsent {
  uint64_t h;    /* hash of the path, 0 free */
  signed char f; /* is a file: -1 unknown, 0, 1 */
  signed char d; /* is a directory: -1 unknown, 0, 1 */
} fsent;

static fsent *fs_slot(sm__ctx *c, const char *rel) {
  fsent *t = c->fs_cache;
  uint64_t h;
  size_t k;
  if (t == NULL) {
    t = sm_calloc(FS_CAP, sizeof(fsent));
    if (t == NULL)
      return NULL;
    c->fs_cache = t;
  }
  h = sm_hash64(rel, strlen(rel), 0xf5);
  if (h == 0)
    h = 1;
  for (k = h % FS_CAP; t[k].h != 0; k = (k + 1) % FS_CAP)
    if (t[k].h == h)
      return &t[k];
  if (c->fs_used * 2 >= FS_CAP)
    return NULL; /* full: ask the repository */
  c->fs_used++;
  t[k].h = h;
  t[k].f = t[k].d = -1;
  return &t[k];
}

int sm__fs_is_file(sm__ctx *c, const char *rel) {
  fsent *e;
  if (rel == NULL)
    return 0;
  e = fs_slot(c, rel);
  if (e == NULL)
    return sm__repo_is_file(c, rel);
  if (e->f < 0)
    e->f = (signed char)(sm__repo_is_file(c, rel) != 0);
  return e->f;
}

int sm__fs_is_dir(sm__ctx *c, const char *rel) {
  fsent *e;
  if (rel == NULL)
    return 0;
  e = fs_slot(c, rel);
  if (e == NULL)
    return sm__repo_is_dir(c, rel);
  if (e->d < 0)
    e->d = (signed char)(sm__repo_is_dir(c, rel) != 0);
  return e->d;
}
