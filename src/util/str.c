/* str.c - string helpers: blanks and line ends at either end, prefixes. */
#include <string.h>

#include "util/util_int.h"

const char *sm__str_skip_blanks(const char *s) {
  while (SM__IS_BLANK(*s))
    s++;
  return s;
}

size_t sm__str_rtrim_len(const char *s, size_t n) {
  while (n > 0 &&
         (SM__IS_BLANK(s[n - 1]) || s[n - 1] == '\r' || s[n - 1] == '\n'))
    n--;
  return n;
}

char *sm__str_trim(char *s) {
  size_t n;

  while (SM__IS_BLANK(*s))
    s++;
  n = sm__str_rtrim_len(s, strlen(s));
  s[n] = '\0';
  return s;
}

const char *sm__str_after(const char *s, const char *prefix) {
  size_t n = strlen(prefix);

  return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}
