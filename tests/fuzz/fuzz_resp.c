/* fuzz_resp.c - libFuzzer target: the Redis reply scanner on arbitrary
 * bytes, beside hiredis's reader.  Whatever the scanner lets through must
 * parse into replies within the caps, and never crash either of them. */
#include <stdint.h>
#include <stdlib.h>

#include <hiredis.h>

#include "history/history_int.h"

static size_t check(const redisReply *r, int depth) {
  size_t n = 1;
  if (depth > SM__RESP_MAX_DEPTH + 1)
    abort();
  if (r->type == REDIS_REPLY_STRING && (long long)r->len > SM__RESP_MAX_BULK)
    abort();
  if (r->type == REDIS_REPLY_ARRAY) {
    if (r->elements > SM__RESP_MAX_ELEMENTS)
      abort();
    for (size_t i = 0; i < r->elements; i++)
      n += check(r->element[i], depth + 1);
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sm__resp_scan p;
  redisReader *rd;
  size_t half = size / 2;
  long long got = 0;
  void *rep;

  sm__resp_scan_init(&p);
  /* In two chunks, as they may arrive. */
  if (sm__resp_scan_feed(&p, (const char *)data, half) != 0 ||
      sm__resp_scan_feed(&p, (const char *)data + half, size - half) != 0)
    return 0;
  rd = redisReaderCreate();
  if (rd == NULL)
    return 0;
  redisReaderFeed(rd, (const char *)data, size);
  while (redisReaderGetReply(rd, &rep) == REDIS_OK && rep != NULL) {
    if (check(rep, 0) > SM__RESP_MAX_ELEMENTS)
      abort();
    freeReplyObject(rep);
    got++;
  }
  /* hiredis may refuse more (it checks integers); never fewer replies
   * complete than the scanner saw, unless hiredis stopped on an error. */
  if (rd->err == 0 && got < p.replies)
    abort();
  redisReaderFree(rd);
  return 0;
}
