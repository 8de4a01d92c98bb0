/* grow.c - the growable-array helper behind SM__GROW: one place for the
 * doubling, the overflow check and the "leave it as it was on failure"
 * rule that hand-written loops each had to get right. */
#include <stdint.h>

#include "util/util_int.h"

#define FIRST_CAP 16

void *sm__grow(void *p, size_t elem, size_t need, size_t *cap) {
  size_t nc = *cap;
  void *np;

  if (need <= nc)
    return p;
  if (elem == 0)
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
