/* util_int.h - small helpers every part of the library shares but that are
 * not part of the public API (never exported from libschedmate.so):
 * growable arrays (grow.c), string helpers (str.c) and dates (date.c).
 *
 * Private headers are named *_int.h: FOLDER_int.h is what the files of one
 * folder share, MODULE_int.h the private interface of MODULE.c. */
#ifndef SM_UTIL_INT_H
#define SM_UTIL_INT_H

#include <stddef.h>

#include "schedmate/sm_base.h"

/* ==== Growable arrays (grow.c) ==== */

/* Returns p reallocated to hold at least need elements of elem bytes and
 * sets *cap to its new capacity: doubling from the old one, at least 16,
 * at least need.  On exhaustion or overflow returns p itself with *cap
 * unchanged (the caller sees *cap < need).  Use SM__GROW. */
void *sm__grow(void *p, size_t elem, size_t need, size_t *cap);

/* Makes room for need elements in the array arr whose capacity is the
 * size_t cap (both lvalues, evaluated more than once).  Evaluates to 0, or
 * SM_ENOMEM with arr and cap unchanged:
 *
 *   if (SM__GROW(v->items, v->n + 1, v->cap) != 0)
 *     return SM_ENOMEM;
 *   v->items[v->n++] = x;
 */
#define SM__GROW(arr, need, cap)                                               \
  ((size_t)(need) <= (cap)                                                     \
       ? 0                                                                     \
       : ((arr) = sm__grow((arr), sizeof(*(arr)), (size_t)(need), &(cap)),     \
          (size_t)(need) <= (cap) ? 0 : SM_ENOMEM))

/* ==== Strings (str.c) ==== */

/* 1 for a blank: space or tab. */
#define SM__IS_BLANK(c) ((c) == ' ' || (c) == '\t')

/* The first byte of s that is not a blank. */
const char *sm__str_skip_blanks(const char *s);

/* Length of s[0..n) without trailing blanks and line ends (CR, LF). */
size_t sm__str_rtrim_len(const char *s, size_t n);

/* Strips blanks at the start and blanks and line ends at the end of s, in
 * place (a NUL is written after the last kept byte); returns the first
 * kept byte. */
char *sm__str_trim(char *s);

/* When s starts with prefix, the byte of s after it; else NULL. */
const char *sm__str_after(const char *s, const char *prefix);

/* ==== Dates (date.c) ==== */

/* The years sm__days_from_civil reads: -SM__CIVIL_MAX_YEAR to it. */
#define SM__CIVIL_MAX_YEAR 1000000L

/* Days from 1970-01-01 to the date y-m-d of the proleptic Gregorian
 * calendar (negative before it).  A day past the end of its month counts
 * on into the next one (February 30 is March 1 or 2); a month outside
 * 1..12, a day outside 1..31 or a year past SM__CIVIL_MAX_YEAR gives
 * LONG_MIN. */
long sm__days_from_civil(long y, long m, long d);

#endif /* SM_UTIL_INT_H */
