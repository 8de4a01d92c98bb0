/* ctx.c - the extraction context's small helpers: growable vectors, arena
 * strings, evidence strings, warnings and the time budget. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_WARNINGS 100

void sm__vec_init(sm__vec *v, size_t sz) {
  v->v = NULL;
  v->n = v->cap = 0;
  v->sz = sz;
}

void sm__vec_release(sm__vec *v) {
  sm_free(v->v);
  v->v = NULL;
  v->n = v->cap = 0;
}

void *sm__vec_push(sm__vec *v) {
  char *p;

  if (v->n == v->cap) {
    int cap = v->cap ? v->cap * 2 : 16;
    void *nv = sm_realloc(v->v, (size_t)cap * v->sz);
    if (nv == NULL)
      return NULL;
    v->v = nv;
    v->cap = cap;
  }
  p = (char *)v->v + (size_t)v->n++ * v->sz;
  memset(p, 0, v->sz);
  return p;
}

char *sm__strdup(sm__ctx *c, const char *s) {
  return s ? sm_arena_strdup(&c->arena, s) : NULL;
}

char *sm__strndup(sm__ctx *c, const char *s, size_t n) {
  return sm_arena_strndup(&c->arena, s, n);
}

char *sm__printf(sm__ctx *c, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;

  va_start(ap, fmt);
  vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  return sm_arena_strdup(&c->arena, tmp);
}

const char *sm__ev(sm__ctx *c, const char *path, int line) {
  if (path == NULL)
    return "command";
  return sm__printf(c, "%s:%d", path, line);
}

void sm__warn(sm__ctx *c, const char *fmt, ...) {
  sm_extract_res *r = c->res;
  char tmp[512];
  char **nw;
  va_list ap;

  if (r->n_warnings >= MAX_WARNINGS)
    return;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  /* One line only: a path with a newline must not break the output. */
  for (char *p = tmp; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  for (int i = 0; i < r->n_warnings; i++)
    if (strcmp(r->warnings[i], tmp) == 0)
      return;
  nw = sm_realloc(r->warnings, (size_t)(r->n_warnings + 1) * sizeof(*nw));
  if (nw == NULL)
    return;
  r->warnings = nw;
  if ((nw[r->n_warnings] = sm_strdup(tmp)) != NULL)
    r->n_warnings++;
}

int sm__expired(sm__ctx *c) {
  if (c->stopped)
    return 1;
  if (sm_now() > c->deadline) {
    c->stopped = 1;
    sm__warn(c, "time budget of %.3g s reached: stopped reading",
             c->req->time_budget_s > 0 ? c->req->time_budget_s : 2.0);
    return 1;
  }
  return 0;
}
