/* test_util.c - buffers, arenas, JSON writer, hashing, parsing, medians. */
#include <float.h>
#include <stdint.h>

#include "harness.h"
#include "schedmate/sm.h"

SM_TEST(buf_grows_and_caps) {
  sm_buf b;
  sm_buf_init(&b, 16);
  ASSERT_STREQ(sm_buf_str(&b), "");
  ASSERT_OK(sm_buf_adds(&b, "hello"));
  ASSERT_OK(sm_buf_addf(&b, " %d", 42));
  ASSERT_STREQ(b.data, "hello 42");
  ASSERT_EQ(b.len, 8);
  /* Past the cap: refused, contents unchanged. */
  ASSERT_EQ(sm_buf_adds(&b, "0123456789"), SM_ETOOBIG);
  ASSERT_STREQ(b.data, "hello 42");
  ASSERT_OK(sm_buf_adds(&b, "01234567"));
  ASSERT_EQ(b.len, 16);
  sm_buf_reset(&b);
  ASSERT_EQ(b.len, 0);
  ASSERT_STREQ(sm_buf_str(&b), "");
  sm_buf_release(&b);
}

SM_TEST(arena_alignment_and_cap) {
  sm_arena a;
  sm_arena_init(&a, 64, 1000);
  for (int i = 0; i < 20; i++) {
    char *p = sm_arena_alloc(&a, 7);
    ASSERT(p != NULL);
    ASSERT_EQ((uintptr_t)p % 16, 0);
  }
  /* One large object gets its own block. */
  ASSERT(sm_arena_alloc(&a, 500) != NULL);
  /* The cap holds. */
  ASSERT(sm_arena_alloc(&a, 400) == NULL);
  ASSERT_STREQ(sm_arena_strdup(&a, "x"), "x");
  sm_arena_discard(&a);
  ASSERT_EQ(sm_arena_used(&a), 0);
}

SM_TEST(json_writer_escapes_and_nests) {
  sm_buf b;
  sm_jw w;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "s");
  sm_jw_str(&w, "a\"b\\c\n\x01");
  sm_jw_key(&w, "bad");
  sm_jw_strn(&w, "\xff\xc3\xa9", 3);
  sm_jw_key(&w, "n");
  sm_jw_num(&w, 0.1);
  sm_jw_key(&w, "i");
  sm_jw_int(&w, -7);
  sm_jw_key(&w, "inf");
  sm_jw_num(&w, 1.0 / 0.0);
  sm_jw_key(&w, "a");
  sm_jw_arr_begin(&w);
  sm_jw_bool(&w, 1);
  sm_jw_null(&w);
  sm_jw_obj_begin(&w);
  sm_jw_obj_end(&w);
  sm_jw_arr_end(&w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT_STREQ(b.data, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"bad\":\"\xef\xbf\xbd"
                       "\xc3\xa9\",\"n\":0.1,\"i\":-7,\"inf\":null,"
                       "\"a\":[true,null,{}]}");
  sm_buf_release(&b);
}

SM_TEST(json_writer_unbalanced_is_error) {
  sm_buf b;
  sm_jw w;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  ASSERT_EQ(sm_jw_finish(&w), SM_EINVAL);
  sm_buf_release(&b);
}

SM_TEST(hash_is_stable_and_spreads) {
  ASSERT_EQ(sm_hash64("abc", 3, 1), sm_hash64("abc", 3, 1));
  ASSERT_NE(sm_hash64("abc", 3, 1), sm_hash64("abd", 3, 1));
  ASSERT_NE(sm_hash64("abc", 3, 1), sm_hash64("abc", 3, 2));
  ASSERT_NE(sm_hash64("abcdefgh1", 9, 0), sm_hash64("abcdefgh2", 9, 0));
}

SM_TEST(rng_is_deterministic_and_uniform) {
  sm_rng a, b;
  double sum = 0;
  sm_rng_seed(&a, 7);
  sm_rng_seed(&b, 7);
  for (int i = 0; i < 1000; i++)
    ASSERT_EQ(sm_rng_next(&a), sm_rng_next(&b));
  for (int i = 0; i < 100000; i++) {
    double u = sm_rng_uniform(&a);
    ASSERT(u >= 0 && u < 1);
    sum += u;
  }
  ASSERT_NEAR(sum / 100000, 0.5, 0.01);
}

SM_TEST(parse_numbers_strictly) {
  double d;
  long long i;
  ASSERT_OK(sm_parse_double("2.5e-3", &d));
  ASSERT_NEAR(d, 0.0025, 1e-12);
  ASSERT_EQ(sm_parse_double("2.5x", &d), SM_EPARSE);
  ASSERT_EQ(sm_parse_double("", &d), SM_EPARSE);
  ASSERT_EQ(sm_parse_double("nan", &d), SM_EPARSE);
  ASSERT_EQ(sm_parse_double("1e999", &d), SM_EPARSE);
  ASSERT_OK(sm_parse_i64("-12", &i));
  ASSERT_EQ(i, -12);
  ASSERT_EQ(sm_parse_i64("99999999999999999999", &i), SM_EPARSE);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

SM_TEST(median_matches_sort) {
  sm_rng r;
  sm_rng_seed(&r, 3);
  for (size_t n = 1; n < 60; n++) {
    double v[64], s[64], m;
    for (size_t i = 0; i < n; i++)
      v[i] = s[i] = (double)(sm_rng_next(&r) % 10); /* many ties */
    qsort(s, n, sizeof(double), cmp_d);
    m = sm_median(v, n);
    ASSERT_NEAR(m, n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2, 1e-12);
  }
}

SM_TEST(error_messages) {
  sm_err e = {0};
  ASSERT_EQ(sm_err_set(&e, SM_EIO, "%s: broken", "f.log"), SM_EIO);
  ASSERT_STREQ(e.msg, "f.log: broken");
  /* The first error wins; later ones do not overwrite it. */
  sm_err_set(&e, SM_ENOMEM, "later");
  ASSERT_EQ(e.code, SM_EIO);
  ASSERT_STREQ(sm_strerror(SM_ENOMEM), "out of memory");
  ASSERT_STREQ(sm_errname(SM_EPARSE), "SM_EPARSE");
  ASSERT_STREQ(sm_strerror(12345), "unknown error");
  ASSERT_EQ(sm_err_set(NULL, SM_EIO, "x"), SM_EIO);
  /* Quoted input cannot break the one-line, printable message. */
  sm_err_clear(&e);
  sm_err_set(&e, SM_EPARSE, "bad '%s'", "a\nb\x01" "c\xff\xc3\xa9");
  ASSERT_STREQ(e.msg, "bad 'a b?c?\xc3\xa9'");
}
