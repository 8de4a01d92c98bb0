/* glued.c - another writer's record glued to a progress line: a print
 * with end='' followed by a Python warning, a logging record, an NCCL
 * INFO/WARN line or a wandb message on the same line.  The record's start
 * is recognised by its shape, only where text precedes it (at the start
 * of a line it is the line itself), in one pass over the line. */
#include <string.h>

#include "track_int.h"

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

static int is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}

static int is_alpha(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static int blank(char c) {
  return c == ' ' || c == '\t';
}

/* Log levels of Python's logging and of the loggers that copy it. */
static const char *const LEVELS[] = {"DEBUG", "INFO",     "WARNING", "WARN",
                                     "ERROR", "CRITICAL", "FATAL",   "TRACE"};

/* The length of a level word at s[i..n), or 0. */
static size_t level_at(const char *s, size_t n, size_t i) {
  for (size_t k = 0; k < sizeof(LEVELS) / sizeof(LEVELS[0]); k++) {
    size_t m = strlen(LEVELS[k]);
    if (i + m <= n && memcmp(s + i, LEVELS[k], m) == 0 &&
        !(i + m < n && is_upper(s[i + m])))
      return m;
  }
  return 0;
}

/* "FILE.py:LINE: NAMEWarning:" with s[i] the '.' of ".py:": true when
 * the warning's location is there. */
static int py_warning(const char *s, size_t n, size_t i) {
  size_t j, w;

  if (i + 4 >= n || memcmp(s + i, ".py:", 4) != 0)
    return 0;
  j = i + 4;
  while (j < n && is_digit(s[j]))
    j++;
  if (j == i + 4 || j + 2 >= n || s[j] != ':' || s[j + 1] != ' ')
    return 0;
  j += 2;
  w = j;
  while (j < n && is_alpha(s[j]))
    j++;
  return j < n && s[j] == ':' && j - w > 7 &&
         memcmp(s + j - 7, "Warning", 7) == 0;
}

/* Python logging's default "LEVEL:logger:" ("INFO:root:",
 * "WARNING:torch.distributed:") at s[i]. */
static int level_record(const char *s, size_t n, size_t i) {
  size_t m = level_at(s, n, i);

  if (m == 0 || (i > 0 && is_alpha(s[i - 1])))
    return 0;
  return i + m + 1 < n && s[i + m] == ':' &&
         (is_alpha(s[i + m + 1]) || s[i + m + 1] == '_');
}

/* Whether s[i..i+k) matches the digit/literal pattern p ('9': a digit). */
static int shape(const char *s, size_t n, size_t i, const char *p) {
  size_t k = strlen(p);

  if (i + k > n)
    return 0;
  for (size_t q = 0; q < k; q++)
    if (p[q] == '9' ? !is_digit(s[i + q]) : s[i + q] != p[q])
      return 0;
  return 1;
}

/* A logging record's stamp "YYYY-MM-DD HH:MM:SS[,mmm] " at s[i] followed
 * by a level, '-', '|' or '[' (the separators of logging formats): a
 * date inside a progress line ("eta 2025-01-01 10:00") has none. */
static int stamp_record(const char *s, size_t n, size_t i) {
  size_t j = i + 19;

  if (!shape(s, n, i, "9999-99-99") || !(i + 10 < n) ||
      !(s[i + 10] == ' ' || s[i + 10] == 'T') ||
      !shape(s, n, i + 11, "99:99:99"))
    return 0;
  if (j < n && (s[j] == ',' || s[j] == '.')) {
    j++;
    while (j < n && is_digit(s[j]))
      j++;
  }
  if (j + 1 >= n || s[j] != ' ')
    return 0;
  j++;
  return s[j] == '-' || s[j] == '|' || s[j] == '[' || level_at(s, n, j) > 0;
}

/* NCCL's "host:pid:tid [dev] NCCL INFO ..." with s[i] the 'N' of "NCCL":
 * the start of the record (the host when the prefix is there, else the
 * word), or n for none. */
static size_t nccl_record(const char *s, size_t n, size_t i) {
  size_t j = i, e;
  int colons = 0;

  if (!(shape(s, n, i, "NCCL INFO") || shape(s, n, i, "NCCL WARN")))
    return n;
  while (j > 0 && blank(s[j - 1]))
    j--;
  if (j == 0 || s[j - 1] != ']')
    return i;
  e = j - 1;
  while (e > 0 && is_digit(s[e - 1]) && j - e < 8)
    e--;
  if (e == 0 || s[e - 1] != '[')
    return i;
  j = e - 1;
  while (j > 0 && blank(s[j - 1]))
    j--;
  e = j;
  while (j > 0 && !blank(s[j - 1]) && e - j < 96) {
    colons += s[j - 1] == ':';
    j--;
  }
  return colons >= 2 ? j : i;
}

/* Whether the text before s[i] ends as a launcher's prefix does
 * ("[rank3]:", "3: ", "[1,3]<stdout>:"): the record is the line itself,
 * and the prefix, which names its rank, stays with it. */
static int after_prefix(const char *s, size_t i) {
  while (i > 0 && blank(s[i - 1]))
    i--;
  return i > 0 && s[i - 1] == ':';
}

size_t sm__trk_glued_record(const char *s, size_t n) {
  size_t word = 0; /* start of the current blank-free run */
  int text = 0;    /* a non-blank byte before it */

  for (size_t i = 0; i < n; i++) {
    size_t at;
    if (blank(s[i])) {
      text |= i > word;
      word = i + 1;
      continue;
    }
    if (s[i] == '.' && text && py_warning(s, n, i))
      return word;
    /* The records below may be glued without a blank ("0.51INFO:"). */
    if (!(text || i > word) || (i == word && after_prefix(s, i)) ||
        (i > word && s[i - 1] == ':'))
      continue;
    if (is_upper(s[i]) && level_record(s, n, i))
      return i;
    if (is_digit(s[i]) && (i == word || is_alpha(s[i - 1])) &&
        stamp_record(s, n, i))
      return i;
    if (s[i] == 'N' && (at = nccl_record(s, n, i)) < n && at > 0) {
      if (after_prefix(s, at))
        continue; /* "0: host:pid:tid [3] NCCL INFO": the line itself */
      return at;
    }
    if (i == word && shape(s, n, i, "wandb: "))
      return i;
  }
  return 0;
}
