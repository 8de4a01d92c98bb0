/* shadow_base.c - the small containers of the shadow report (a list of
 * doubles with its quantiles, named counts) and its channel names, shared
 * by shadow.c, which fills them, and shadow_html.c, which draws them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/shadow_base.h"
#include "util/util_int.h"

const char *const sh__channel_names[SH_CHANNELS] = {"submit", "run", "exit",
                                                    "plugin"};

int sh__vec_add(sh_vec *a, double x) {
  if (SM__GROW(a->v, a->n + 1, a->cap) != 0)
    return SM_ENOMEM;
  a->v[a->n++] = x;
  return 0;
}

void sh__vec_release(sh_vec *a) {
  sm_free(a->v);
  memset(a, 0, sizeof(*a));
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

void sh__vec_sort(sh_vec *a) {
  if (a->n > 1)
    qsort(a->v, a->n, sizeof(double), cmp_double);
}

double sh__quantile(const sh_vec *a, double q) {
  double pos, f;
  size_t i;

  if (a->n == 0)
    return NAN;
  pos = q * (double)(a->n - 1);
  i = (size_t)pos;
  f = pos - (double)i;
  return i + 1 < a->n ? a->v[i] * (1 - f) + a->v[i + 1] * f : a->v[i];
}

void sh__count(sh_counts *c, const char *name) {
  c->total++;
  for (int i = 0; i < c->k; i++)
    if (strcmp(c->name[i], name) == 0) {
      c->n[i]++;
      return;
    }
  if (c->k < SH_MAX_NAMES) {
    snprintf(c->name[c->k], sizeof(c->name[0]), "%s", name);
    c->n[c->k++] = 1;
  }
}
