/* grow.c - growable arrays for the simulator's modules: one place for the
 * doubling, the overflow check and the rule that a failed growth leaves
 * the array as it was, which the hand-written loops each had to get right.
 *
 * The contract is that of the library-wide growable-array helper (SM__GROW)
 * that src/util is getting; once it is there, SM__SIM_GROW becomes
 * SM__GROW and this file goes. */
#include <stdint.h>
#include <string.h>

#include "sim/sim_int.h"

#define FIRST_CAP 16

void *sm__sim_grow(void *p, size_t elem, size_t need, size_t *cap) {
  size_t nc = *cap;
  void *np;

  if (need <= nc || elem == 0)
    return p;
  nc = nc < FIRST_CAP ? FIRST_CAP : nc;
  while (nc < need)
    nc = nc > SIZE_MAX / 2 ? need : nc * 2;
  if (nc > SIZE_MAX / elem) {
    nc = need;
    if (nc > SIZE_MAX / elem)
      return p;
  }
  np = sm_realloc(p, nc * elem);
  if (np == NULL)
    return p;
  *cap = nc;
  return np;
}

/* ==== Time series ==== */

int sm__series_add(sm__series *s, double t, int busy, int pending) {
  if (SM__SIM_GROW(s->t, s->n + 1, s->cap_t) != 0 ||
      SM__SIM_GROW(s->busy, s->n + 1, s->cap_busy) != 0 ||
      SM__SIM_GROW(s->pending, s->n + 1, s->cap_pending) != 0)
    return SM_ENOMEM;
  s->t[s->n] = t;
  s->busy[s->n] = busy;
  s->pending[s->n] = pending;
  s->n++;
  return 0;
}

void sm__series_release(sm__series *s) {
  sm_free(s->t);
  sm_free(s->busy);
  sm_free(s->pending);
  memset(s, 0, sizeof(*s));
}
