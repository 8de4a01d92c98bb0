/* notes.c - the note lists that traces and runs carry into their reports:
 * owned lines of text, each at most 511 bytes (longer ones are cut). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

int sm__notes_vadd(sm__notes *n, const char *fmt, va_list ap) {
  char tmp[512];
  char *line;

  vsnprintf(tmp, sizeof(tmp), fmt, ap);
  if (SM__GROW(n->v, n->n + 1, n->cap) != 0)
    return SM_ENOMEM;
  line = sm_strdup(tmp);
  if (line == NULL)
    return SM_ENOMEM;
  n->v[n->n++] = line;
  return 0;
}

int sm__notes_add(sm__notes *n, const char *fmt, ...) {
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = sm__notes_vadd(n, fmt, ap);
  va_end(ap);
  return rc;
}

int sm__notes_copy(sm__notes *dst, const sm__notes *src) {
  for (size_t i = 0; i < src->n; i++) {
    int rc = sm__notes_add(dst, "%s", src->v[i]);
    if (rc != 0)
      return rc;
  }
  return 0;
}

void sm__notes_release(sm__notes *n) {
  for (size_t i = 0; i < n->n; i++)
    sm_free(n->v[i]);
  sm_free(n->v);
  n->v = NULL;
  n->n = n->cap = 0;
}
