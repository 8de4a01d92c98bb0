/* series.c - the simulator's time series (busy GPUs and pending jobs over
 * time), grown with the library's SM__GROW. */
#include <string.h>

#include "sim/sim_int.h"

/* ==== Time series ==== */

int sm__series_add(sm__series *s, double t, int busy, int pending) {
  if (SM__GROW(s->t, s->n + 1, s->cap_t) != 0 ||
      SM__GROW(s->busy, s->n + 1, s->cap_busy) != 0 ||
      SM__GROW(s->pending, s->n + 1, s->cap_pending) != 0)
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
