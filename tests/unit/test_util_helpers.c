/* test_util_helpers.c - the library's private helpers: growable arrays
 * (SM__GROW), string helpers and calendar days. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "util/util_int.h"

SM_TEST(grow_doubles_and_keeps_contents) {
  int *v = NULL;
  size_t cap = 0, last = 0;
  int grew = 0;

  for (int i = 0; i < 1000; i++) {
    ASSERT_OK(SM__GROW(v, (size_t)i + 1, cap));
    ASSERT(cap >= (size_t)i + 1);
    if (cap != last) {
      /* Doubling: a thousand appends take a handful of reallocations. */
      ASSERT(last == 0 || cap == 2 * last);
      last = cap;
      grew++;
    }
    v[i] = i * 3;
  }
  ASSERT(grew <= 8);
  for (int i = 0; i < 1000; i++)
    ASSERT_EQ(v[i], i * 3);
  /* Room already there: nothing changes. */
  {
    int *before = v;
    size_t c = cap;
    ASSERT_OK(SM__GROW(v, 10, cap));
    ASSERT(v == before);
    ASSERT_EQ(cap, c);
  }
  /* A jump past double the capacity gets exactly enough doublings. */
  ASSERT_OK(SM__GROW(v, 5000, cap));
  ASSERT(cap >= 5000);
  ASSERT_EQ(v[999], 999 * 3);
  sm_free(v);
}

SM_TEST(grow_refuses_overflow_and_leaves_the_array) {
  double *v = NULL;
  size_t cap = 0;

  ASSERT_OK(SM__GROW(v, 4, cap));
  v[3] = 1.5;
  {
    double *before = v;
    size_t c = cap;
    /* need x sizeof(double) does not fit in a size_t. */
    ASSERT_EQ(SM__GROW(v, SIZE_MAX / 4, cap), SM_ENOMEM);
    ASSERT(v == before);
    ASSERT_EQ(cap, c);
    ASSERT_EQ(SM__GROW(v, SIZE_MAX, cap), SM_ENOMEM);
    ASSERT(v == before);
    ASSERT_EQ(cap, c);
  }
  ASSERT(v[3] == 1.5);
  sm_free(v);
}

static int fail_realloc;
static void *test_realloc(void *p, size_t n) {
  return fail_realloc ? NULL : realloc(p, n);
}

SM_TEST(grow_on_exhaustion_leaves_the_array) {
  sm_allocator a = {malloc, calloc, test_realloc, free};
  char **v = NULL;
  size_t cap = 0;

  ASSERT_OK(sm_set_allocator(&a));
  ASSERT_OK(SM__GROW(v, 16, cap));
  v[15] = (char *)"kept";
  fail_realloc = 1;
  {
    char **before = v;
    ASSERT_EQ(SM__GROW(v, 17, cap), SM_ENOMEM);
    ASSERT(v == before);
    ASSERT_EQ(cap, 16);
  }
  fail_realloc = 0;
  ASSERT_OK(SM__GROW(v, 17, cap));
  ASSERT_EQ(cap, 32);
  ASSERT_STREQ(v[15], "kept");
  sm_free(v);
  ASSERT_OK(sm_set_allocator(NULL));
}

SM_TEST(str_trim_and_friends) {
  char a[] = " \t key = value \t\r\n";
  char b[] = "   ";
  char c[] = "";
  char d[] = "x";

  ASSERT_STREQ(sm__str_trim(a), "key = value");
  ASSERT_STREQ(sm__str_trim(b), "");
  ASSERT_STREQ(sm__str_trim(c), "");
  ASSERT_STREQ(sm__str_trim(d), "x");
  ASSERT_STREQ(sm__str_skip_blanks(" \t a b"), "a b");
  ASSERT_STREQ(sm__str_skip_blanks(""), "");
  ASSERT_EQ(sm__str_rtrim_len("ab \r\n", 5), 2);
  ASSERT_EQ(sm__str_rtrim_len("\n\n", 2), 0);
  ASSERT_EQ(sm__str_rtrim_len("a\tb", 3), 3);
  /* Only blanks and line ends: a NUL or other control byte stays. */
  ASSERT_EQ(sm__str_rtrim_len("a\0", 2), 2);
  ASSERT_STREQ(sm__str_after("gres:gpu:2", "gres:"), "gpu:2");
  ASSERT(sm__str_after("gres", "gres:") == NULL);
  ASSERT_STREQ(sm__str_after("x", ""), "x");
}

SM_TEST(days_from_civil_known_dates) {
  ASSERT_EQ(sm__days_from_civil(1970, 1, 1), 0);
  ASSERT_EQ(sm__days_from_civil(1969, 12, 31), -1);
  ASSERT_EQ(sm__days_from_civil(2000, 3, 1), 11017);
  ASSERT_EQ(sm__days_from_civil(2024, 2, 29), 19782);  /* a leap day */
  ASSERT_EQ(sm__days_from_civil(1600, 1, 1), -135140); /* a negative era */
  ASSERT_EQ(sm__days_from_civil(1, 1, 1), -719162);
  /* 1900 is not a leap year, 2000 is. */
  ASSERT_EQ(sm__days_from_civil(1900, 3, 1) - sm__days_from_civil(1900, 2, 28),
            1);
  ASSERT_EQ(sm__days_from_civil(2000, 3, 1) - sm__days_from_civil(2000, 2, 28),
            2);
}

SM_TEST(days_from_civil_agrees_with_timegm) {
  /* Every day of 1901..2099 against the C library's UTC conversion. */
  for (int y = 1901; y < 2100; y++)
    for (int m = 1; m <= 12; m++)
      for (int d = 1; d <= 28; d += 9) {
        struct tm t = {0};
        t.tm_year = y - 1900;
        t.tm_mon = m - 1;
        t.tm_mday = d;
        ASSERT_EQ((long long)sm__days_from_civil(y, m, d) * 86400,
                  (long long)timegm(&t));
      }
}

SM_TEST(days_from_civil_out_of_range) {
  /* A day past the month's end runs on into the next month. */
  ASSERT_EQ(sm__days_from_civil(2023, 2, 30), sm__days_from_civil(2023, 3, 2));
  ASSERT_EQ(sm__days_from_civil(2023, 4, 31), sm__days_from_civil(2023, 5, 1));
  /* What is not a month or a day, or a year too far away, is refused. */
  ASSERT_EQ(sm__days_from_civil(2023, 0, 1), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(2023, 13, 1), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(2023, -1, 1), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(2023, 1, 0), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(2023, 1, 32), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(2023, LONG_MAX, LONG_MIN), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(LONG_MAX, 1, 1), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(LONG_MIN, 1, 1), LONG_MIN);
  ASSERT_EQ(sm__days_from_civil(SM__CIVIL_MAX_YEAR + 1, 1, 1), LONG_MIN);
  /* The edges of the range still count (no overflow there). */
  ASSERT(sm__days_from_civil(SM__CIVIL_MAX_YEAR, 12, 31) > 0);
  ASSERT(sm__days_from_civil(-SM__CIVIL_MAX_YEAR, 1, 1) < 0);
  ASSERT_EQ(sm__days_from_civil(-SM__CIVIL_MAX_YEAR, 3, 1) -
                sm__days_from_civil(-SM__CIVIL_MAX_YEAR, 2, 28),
            2); /* -1000000 is a multiple of 400: a leap year */
}
