/* harness.h - a small unit-test harness.
 *
 *   SM_TEST(name) { ASSERT_EQ(1 + 1, 2); }
 *
 * Tests register themselves at start-up; the runner (runner.c) forks each
 * one with a timeout, so that a crash or a hang fails that test only.
 * Assertions print both sides and end the test.  SM_SKIP(reason) marks a
 * test skipped (for data or a service that is not there) and says why. */
#ifndef SM_HARNESS_H
#define SM_HARNESS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sm_test_fn)(void);
void sm__test_register(const char *name, const char *file, sm_test_fn fn);

#define SM_SKIP_EXIT 77

#define SM_TEST(name)                                                         \
  static void test_##name(void);                                              \
  __attribute__((constructor)) static void register_##name(void) {           \
    sm__test_register(#name, __FILE__, test_##name);                          \
  }                                                                           \
  static void test_##name(void)

#define SM_FAIL_AT(...)                                                       \
  do {                                                                        \
    fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                         \
    fprintf(stderr, __VA_ARGS__);                                             \
    fputc('\n', stderr);                                                      \
    exit(1);                                                                  \
  } while (0)

/* Ends the test as skipped; the runner prints reason on the test's own
 * "skip" line, so that every skip in a log says why. */
void sm__test_skip(const char *reason) __attribute__((noreturn));
#define SM_SKIP(reason) sm__test_skip(reason)

#define ASSERT(c)                                                             \
  do {                                                                        \
    if (!(c))                                                                 \
      SM_FAIL_AT("assertion failed: %s", #c);                                 \
  } while (0)

#define ASSERT_EQ(a, b)                                                       \
  do {                                                                        \
    long long a_ = (long long)(a), b_ = (long long)(b);                       \
    if (a_ != b_)                                                             \
      SM_FAIL_AT("%s == %s failed: %lld != %lld", #a, #b, a_, b_);            \
  } while (0)

#define ASSERT_NE(a, b)                                                       \
  do {                                                                        \
    long long a_ = (long long)(a), b_ = (long long)(b);                       \
    if (a_ == b_)                                                             \
      SM_FAIL_AT("%s != %s failed: both %lld", #a, #b, a_);                   \
  } while (0)

#define ASSERT_OK(e)                                                          \
  do {                                                                        \
    long long r_ = (long long)(e);                                            \
    if (r_ != 0)                                                              \
      SM_FAIL_AT("%s returned %lld, expected 0", #e, r_);                     \
  } while (0)

#define ASSERT_STREQ(a, b)                                                    \
  do {                                                                        \
    const char *a_ = (a), *b_ = (b);                                          \
    if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                      \
      SM_FAIL_AT("%s == %s failed: \"%s\" != \"%s\"", #a, #b,                 \
                 a_ ? a_ : "(null)", b_ ? b_ : "(null)");                     \
  } while (0)

#define ASSERT_NEAR(a, b, eps)                                                \
  do {                                                                        \
    double a_ = (double)(a), b_ = (double)(b);                                \
    if (!(fabs(a_ - b_) <= (eps)))                                            \
      SM_FAIL_AT("%s ~= %s failed: %.9g vs %.9g (eps %g)", #a, #b, a_, b_,   \
                 (double)(eps));                                              \
  } while (0)

/* Path of a test data file under tests/data (tests run from the root). */
#define SM_TEST_DATA(rel) ("tests/data/" rel)

#endif /* SM_HARNESS_H */
