/* test_resp_scan.c - the Redis reply scanner: well-formed replies in any
 * chunking, malformed headers, and every cap (string, elements, bytes,
 * line, nesting), refused before a parser would allocate. */
#include <stdlib.h>

#include "harness.h"
#include "history/history_int.h"

/* Feeds s in chunks of `step` bytes; returns the scanner's result. */
static int feed(sm__resp_scan *p, const char *s, size_t n, size_t step) {
  for (size_t i = 0; i < n; i += step) {
    size_t k = n - i < step ? n - i : step;
    if (sm__resp_scan_feed(p, s + i, k) != 0)
      return -1;
  }
  return 0;
}

SM_TEST(resp_scan_accepts_replies_in_any_chunking) {
  static const char good[] = "+OK\r\n"
                             ":42\r\n"
                             ":-7\r\n"
                             "$5\r\nhe\r\no\r\n"
                             "$0\r\n\r\n"
                             "$-1\r\n"
                             "*-1\r\n"
                             "*0\r\n"
                             "-ERR wrong type\r\n"
                             "*2\r\n$1\r\na\r\n*2\r\n:1\r\n*1\r\n$-1\r\n"
                             "*3\r\n*1\r\n*1\r\n:1\r\n+x\r\n$2\r\nab\r\n";
  for (size_t step = 1; step <= sizeof(good); step++) {
    sm__resp_scan p;
    sm__resp_scan_init(&p);
    if (feed(&p, good, sizeof(good) - 1, step) != 0)
      SM_FAIL_AT("step %zu: %s", step, p.why);
    ASSERT_EQ(p.replies, 11);
    ASSERT_EQ(p.depth, 0);
  }
}

SM_TEST(resp_scan_counts_per_reply) {
  /* 200,000 small replies: the element cap is per reply, not per stream. */
  sm__resp_scan p;
  sm__resp_scan_init(&p);
  for (int i = 0; i < 200000; i++)
    ASSERT_OK(sm__resp_scan_feed(&p, ":1\r\n", 4));
  ASSERT_EQ(p.replies, 200000);
  /* An array of exactly the cap is fine. */
  {
    char head[32];
    int n = snprintf(head, sizeof(head), "*%d\r\n", SM__RESP_MAX_ELEMENTS - 1);
    ASSERT_OK(sm__resp_scan_feed(&p, head, (size_t)n));
    for (int i = 0; i < SM__RESP_MAX_ELEMENTS - 1; i++)
      ASSERT_OK(sm__resp_scan_feed(&p, ":1\r\n", 4));
    ASSERT_EQ(p.replies, 200001);
  }
}

static void refused(const char *what, const char *s, size_t n,
                    const char *why) {
  sm__resp_scan p;
  sm__resp_scan_init(&p);
  if (feed(&p, s, n, n ? n : 1) == 0)
    SM_FAIL_AT("%s: accepted", what);
  if (strstr(p.why, why) == NULL)
    SM_FAIL_AT("%s: '%s' does not say '%s'", what, p.why, why);
}

#define REFUSED(what, lit, why) refused(what, lit, sizeof(lit) - 1, why)

SM_TEST(resp_scan_refuses_malformed_and_oversized) {
  REFUSED("bulk over the cap", "$16777217\r\n", "a string of 16777217");
  REFUSED("1 GiB bulk", "$1073741824\r\n", "at most");
  REFUSED("array over the cap", "*100001\r\n", "an array of 100001");
  REFUSED("2e9 array", "*2000000000\r\n", "elements");
  REFUSED("negative length", "$-2\r\n", "bad length");
  REFUSED("letters as length", "$abc\r\n", "bad length");
  REFUSED("empty length", "*\r\n", "bad length");
  REFUSED("overflowing length", "$99999999999999999999\r\n", "bad length");
  REFUSED("number too long", "$9999999999999999999999999\r\n", "too long");
  /* What another parser would read differently is refused: a sign or a
   * space in a length, a line without CR LF, a string not ended by it. */
  REFUSED("plus sign", "$+5\r\nhello\r\n", "bad length");
  REFUSED("space", "$ 5\r\nhello\r\n", "bad length");
  REFUSED("minus alone", "*-\r\n", "bad length");
  REFUSED("LF only", "$5\nhello\r\n", "LF without CR");
  REFUSED("LF inside a line", "+ab\ncd\r\n", "LF without CR");
  REFUSED("CR inside a line", "+ab\rcd\r\n", "CR without LF");
  REFUSED("string without CR LF", "$2\r\nabXY", "not ended by CR LF");
  REFUSED("unknown type", "?1\r\n", "type byte 0x3f");
  REFUSED("binary", "\x00\xff", "type byte 0x00");
  REFUSED("nesting", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n",
          "nested deeper than 7");
  {
    /* Nested arrays share the cap: 60,000 + 60,000 values. */
    size_t n = 0;
    char *s = malloc(8 + 60000 * 4 + 16);
    n += (size_t)sprintf(s, "*2\r\n*60000\r\n");
    for (int i = 0; i < 60000; i++)
      n += (size_t)sprintf(s + n, ":1\r\n");
    n += (size_t)sprintf(s + n, "*60000\r\n");
    refused("nested values over the cap", s, n, "elements");
    free(s);
  }
  {
    /* An endless status line. */
    size_t n = SM__RESP_MAX_LINE + 10;
    char *s = malloc(n);
    memset(s, 'a', n);
    s[0] = '+';
    refused("endless line", s, n, "a line longer than 65536");
    free(s);
  }
}

SM_TEST(resp_scan_caps_the_bytes_of_one_reply) {
  /* Five strings of 16 MiB in one array: 80 MiB, over the 64 MiB cap,
   * refused while the fifth arrives. */
  size_t blk = (size_t)16 << 20;
  char *data = malloc(blk);
  char head[32];
  sm__resp_scan p;
  int failed = 0;

  memset(data, 'x', blk);
  sm__resp_scan_init(&p);
  ASSERT_OK(sm__resp_scan_feed(&p, "*5\r\n", 4));
  for (int i = 0; i < 5 && !failed; i++) {
    int n = snprintf(head, sizeof(head), "$%zu\r\n", blk);
    failed |= sm__resp_scan_feed(&p, head, (size_t)n) != 0;
    for (size_t o = 0; o < blk && !failed; o += 1 << 20)
      failed |= sm__resp_scan_feed(&p, data + o, 1 << 20) != 0;
    failed |= !failed && sm__resp_scan_feed(&p, "\r\n", 2) != 0;
    if (i < 3)
      ASSERT(!failed);
  }
  ASSERT(failed);
  ASSERT(strstr(p.why, "more than 67108864 bytes") != NULL);
  free(data);
}
