/* test_err_format.c - error messages that would not fit keep their problem:
 * the quoted inputs (the %s arguments) are shortened in the middle, the
 * words of the format and the numbers never. */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "schedmate/sm.h"

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* A path of about n bytes: /data/jobs/xxxx.../train-final.log */
static char *long_path(size_t n) {
  char *p = malloc(n + 64);
  size_t o = (size_t)snprintf(p, n + 64, "/data/jobs/");
  for (; o < n; o++)
    p[o] = (char)('a' + o % 26);
  snprintf(p + o, 64, "/train-final.log");
  return p;
}

SM_TEST(err_short_messages_are_unchanged) {
  sm_err e = {0};
  char want[SM_ERR_MSG_SIZE];
  sm_err_set(&e, SM_EPARSE, "%s:%ld: %s (%zu bytes, %.2f%%, %c, %lld)", "t.csv",
             12L, "bad cell", (size_t)7, 3.14159, 'x', -5LL);
  snprintf(want, sizeof(want), "%s:%ld: %s (%zu bytes, %.2f%%, %c, %lld)",
           "t.csv", 12L, "bad cell", (size_t)7, 3.14159, 'x', -5LL);
  ASSERT_STREQ(e.msg, want);
  sm_err_clear(&e);
  sm_err_set(&e, SM_EIO, "%-6s|%6d|%.*s|%*s|%#x|%+g", "ab", 42, 3, "abcdef", 4,
             "z", 255u, 0.5);
  ASSERT_STREQ(e.msg, "ab    |    42|abc|   z|0xff|+0.5");
}

SM_TEST(err_long_path_keeps_the_problem) {
  char *path = long_path(600);
  sm_err e = {0};

  sm_err_set(&e, SM_ENOENT, "%s: %s", path, strerror(ENOENT));
  ASSERT(strlen(e.msg) < SM_ERR_MSG_SIZE);
  ASSERT(strlen(e.msg) > SM_ERR_MSG_SIZE - 16); /* the room is used */
  ASSERT(ends_with(e.msg, ": No such file or directory"));
  ASSERT(strncmp(e.msg, path, 60) == 0);               /* head kept */
  ASSERT(strstr(e.msg, "/train-final.log: ") != NULL); /* tail kept */
  ASSERT(strstr(e.msg, "...") != NULL);
  free(path);
}

SM_TEST(err_numbers_and_words_survive_two_long_inputs) {
  char *a = long_path(400), *b = long_path(300);
  sm_err e = {0};

  sm_err_set(&e, SM_EPARSE,
             "%s:%d: column '%s' is not a number (row %lld of %zu)", a, 1234, b,
             99LL, (size_t)100000);
  ASSERT(strlen(e.msg) < SM_ERR_MSG_SIZE);
  ASSERT(strstr(e.msg, ":1234: column '") != NULL);
  ASSERT(ends_with(e.msg, "' is not a number (row 99 of 100000)"));
  /* Both inputs were shortened, each keeps both ends. */
  ASSERT(strstr(e.msg, "...") != NULL);
  ASSERT(strstr(strstr(e.msg, "...") + 3, "...") != NULL);
  ASSERT(strstr(e.msg, "final.log:1234") != NULL);
  free(a);
  free(b);
}

SM_TEST(err_short_input_is_kept_whole_beside_a_long_one) {
  char *a = long_path(500);
  sm_err e = {0};

  sm_err_set(&e, SM_ENOTREG, "%s: %s is %s", "history add", a, "a FIFO");
  ASSERT(strncmp(e.msg, "history add: /data/", 19) == 0);
  ASSERT(ends_with(e.msg, " is a FIFO"));
  free(a);
}

SM_TEST(err_shortening_never_splits_utf8) {
  /* 300 copies of a three-byte character. */
  char in[1024];
  sm_err e = {0};
  size_t o = 0;
  for (int i = 0; i < 300; i++) {
    memcpy(in + o, "\xe2\x82\xac", 3); /* EURO SIGN */
    o += 3;
  }
  in[o] = '\0';
  sm_err_set(&e, SM_EPARSE, "'%s': bad value", in);
  ASSERT(ends_with(e.msg, "': bad value"));
  ASSERT(strstr(e.msg, "...") != NULL);
  /* Every multi-byte sequence is complete (no '?' from the sanitiser). */
  ASSERT(strchr(e.msg, '?') == NULL);
  for (const unsigned char *p = (const unsigned char *)e.msg; *p; p++)
    if (*p == 0xe2)
      ASSERT(p[1] == 0x82 && p[2] == 0xac);
}

SM_TEST(err_errno_conversion_and_plain_overflow) {
  char lit[400];
  sm_err e = {0};

  errno = ENOENT;
  sm_err_set(&e, SM_ENOENT, "%s: cannot open: %m", "x.conf");
  ASSERT_STREQ(e.msg, "x.conf: cannot open: No such file or directory");
  /* Two inputs that are each longer than the message share its room. */
  memset(lit, 'w', sizeof(lit) - 1);
  lit[sizeof(lit) - 1] = '\0';
  sm_err_clear(&e);
  sm_err_set(&e, SM_EIO, "%s%s", lit, lit);
  ASSERT(strlen(e.msg) == SM_ERR_MSG_SIZE - 1);
  ASSERT(strstr(e.msg, "...") != NULL);
}

SM_TEST(err_null_string_and_sanitising_after_shortening) {
  char *a = long_path(500);
  const char *volatile none = NULL;
  sm_err e = {0};

  a[20] = '\n';
  sm_err_set(&e, SM_EIO, "%s: %s", a, none);
  ASSERT(ends_with(e.msg, ": (null)"));
  ASSERT(strchr(e.msg, '\n') == NULL);
  free(a);
}
