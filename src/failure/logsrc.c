/* logsrc.c - the log as the locator sees it: a regular file or a memory
 * buffer, read at any offset through a small cache of aligned blocks, so
 * that no region is read from the file twice while it stays in the cache
 * (the tail scan, a probe and its neighbour, the transient check and the
 * window around the cause all look at overlapping bytes).  The line count
 * before the window is the only pass over the prefix; it counts cached
 * blocks from memory and reads the others once, in large reads that
 * bypass the cache.
 *
 * nread counts bytes read from the file for analysis, ncounted the bytes
 * read only to count newlines; together they are what the diagnosis cost
 * in reads.  A memory source keeps the same books (a block counts once,
 * when it is first touched), so that tests on memory logs measure what a
 * file would cost. */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "failure/failure_int.h"

#define COUNT_READ ((size_t)1 << 20)

struct sm__cblock {
  uint64_t off;   /* aligned file offset of the block */
  size_t len;     /* valid bytes (short at the end of the source) */
  uint64_t used;  /* last use, for eviction */
  char *data;     /* owned copy (file) */
  const char *at; /* the bytes: data, or into the memory buffer */
};

void sm__logsrc_init(sm__logsrc *s) {
  memset(s, 0, sizeof(*s));
}

void sm__logsrc_release(sm__logsrc *s) {
  for (int i = 0; i < s->n_cache; i++)
    sm_free(s->cache[i].data);
  sm_free(s->cache);
  sm_free(s->nl_memo);
  s->cache = NULL;
  s->nl_memo = NULL;
  s->n_cache = 0;
}

/* Remembers the newline count of a whole block read for analysis, so that
 * the line count never reads it again once it has left the cache.  The
 * table has one entry per block of the log (4 bytes per 64 KiB), up to
 * SM__SRC_MEMO_MAX entries; a larger log relies on the cache alone. */
static void memo_block(sm__logsrc *s, uint64_t boff, const char *p, size_t n) {
  uint64_t nb = (s->size + SM__SRC_BLOCK - 1) / SM__SRC_BLOCK;

  if (n != SM__SRC_BLOCK || nb > SM__SRC_MEMO_MAX || s->memo_failed)
    return;
  if (s->nl_memo == NULL) {
    s->nl_memo = sm_calloc((size_t)nb, sizeof(*s->nl_memo));
    if (s->nl_memo == NULL) {
      s->memo_failed = 1; /* only a cost: counting reads it again */
      return;
    }
  }
  if (s->nl_memo[boff / SM__SRC_BLOCK] == 0)
    s->nl_memo[boff / SM__SRC_BLOCK] = (uint32_t)sm__count_newlines(p, n) + 1;
}

/* The remembered count of the block at boff, or -1. */
static long long memo_get(const sm__logsrc *s, uint64_t boff) {
  uint32_t v;

  if (s->nl_memo == NULL)
    return -1;
  v = s->nl_memo[boff / SM__SRC_BLOCK];
  return v ? (long long)v - 1 : -1;
}

static sm__cblock *cache_find(sm__logsrc *s, uint64_t boff) {
  for (int i = 0; i < s->n_cache; i++)
    if (s->cache[i].off == boff && s->cache[i].at != NULL)
      return &s->cache[i];
  return NULL;
}

/* The cached block at aligned offset boff, read on a miss; NULL on an
 * error (set in err). */
static sm__cblock *cache_get(sm__logsrc *s, uint64_t boff, sm_err *err) {
  sm__cblock *b = cache_find(s, boff), *victim;
  size_t want;

  if (b != NULL) {
    b->used = ++s->tick;
    return b;
  }
  if (s->cache == NULL) {
    s->cache = sm_calloc(SM__SRC_CACHE_BLOCKS, sizeof(*s->cache));
    if (s->cache == NULL) {
      sm_err_set(err, SM_ENOMEM, "out of memory");
      return NULL;
    }
  }
  if (s->n_cache < SM__SRC_CACHE_BLOCKS) {
    victim = &s->cache[s->n_cache++];
  } else {
    victim = &s->cache[0];
    for (int i = 1; i < s->n_cache; i++)
      if (s->cache[i].used < victim->used)
        victim = &s->cache[i];
  }
  want =
      s->size - boff < SM__SRC_BLOCK ? (size_t)(s->size - boff) : SM__SRC_BLOCK;
  victim->at = NULL;
  victim->off = boff;
  victim->len = 0;
  if (s->f == NULL) {
    victim->at = s->mem + boff;
  } else {
    ssize_t r;
    if (victim->data == NULL) {
      victim->data = sm_malloc(SM__SRC_BLOCK);
      if (victim->data == NULL) {
        sm_err_set(err, SM_ENOMEM, "out of memory");
        return NULL;
      }
    }
    r = sm_rfile_pread(s->f, victim->data, want, boff, err);
    if (r < 0)
      return NULL;
    want = (size_t)r;
    victim->at = victim->data;
  }
  victim->len = want;
  victim->used = ++s->tick;
  s->nread += want;
  memo_block(s, boff, victim->at, want);
  return victim;
}

ssize_t sm__logsrc_read(sm__logsrc *s, void *buf, size_t n, uint64_t off,
                        sm_err *err) {
  size_t got = 0;

  if (off >= s->size)
    return 0;
  if (n > s->size - off)
    n = (size_t)(s->size - off);
  while (got < n) {
    uint64_t pos = off + got, boff = pos - pos % SM__SRC_BLOCK;
    sm__cblock *b = cache_get(s, boff, err);
    size_t in, take;
    if (b == NULL)
      return err && err->code ? err->code : SM_EIO;
    in = (size_t)(pos - boff);
    if (in >= b->len)
      break; /* the file shrank under us */
    take = SM_MIN(b->len - in, n - got);
    memcpy((char *)buf + got, b->at + in, take);
    got += take;
  }
  return (ssize_t)got;
}

uint64_t sm__count_newlines_portable(const char *p, size_t n) {
  const uint64_t ones = 0x0101010101010101ULL, nl = ones * '\n';
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  uint64_t count = 0;
  size_t i = 0;

  /* Each byte lane of acc counts newlines in that lane; it is folded
   * before it can overflow (at most 255 words). */
  while (i + 8 <= n) {
    uint64_t acc = 0;
    size_t stop = n - i >= 8 * 255 ? i + 8 * 255 : i + ((n - i) & ~(size_t)7);
    for (; i < stop; i += 8) {
      uint64_t w, x, t;
      memcpy(&w, p + i, 8);
      x = w ^ nl;
      /* A zero byte of x (a newline) leaves its high bit clear in t. */
      t = ((x & low7) + low7) | x;
      acc += (~t >> 7) & ones;
    }
    /* Sum the eight byte lanes (each <= 255) in 16-bit lanes. */
    acc = (acc & 0x00ff00ff00ff00ffULL) + ((acc >> 8) & 0x00ff00ff00ff00ffULL);
    count += (acc * 0x0001000100010001ULL) >> 48;
  }
  for (; i < n; i++)
    count += p[i] == '\n';
  return count;
}

uint64_t sm__count_newlines(const char *p, size_t n) {
#if defined(__SSE2__)
  /* Sixteen bytes at a time: each compare gives 0xff (-1) per newline,
   * subtracted into byte counters that are summed every 255 rounds. */
  const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
  uint64_t count = 0;
  size_t i = 0;

  while (i + 16 <= n) {
    __m128i acc = zero, sum;
    size_t stop =
        n - i >= 16 * 255 ? i + 16 * 255 : i + ((n - i) & ~(size_t)15);
    for (; i < stop; i += 16)
      acc = _mm_sub_epi8(
          acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), nl));
    sum = _mm_sad_epu8(acc, zero);
    count += (uint64_t)_mm_cvtsi128_si64(sum) +
             (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
  }
  return count + sm__count_newlines_portable(p + i, n - i);
#else
  return sm__count_newlines_portable(p, n);
#endif
}

/* Counts the newlines of [a, b) by reading them in large reads that
 * bypass the cache; *c accumulates. */
static int count_uncached(sm__logsrc *s, uint64_t a, uint64_t b, char **buf,
                          uint64_t *c, sm_err *err) {
  if (a >= b)
    return 0;
  if (s->f == NULL) {
    *c += sm__count_newlines(s->mem + a, (size_t)(b - a));
    s->ncounted += b - a;
    return 0;
  }
  if (*buf == NULL && (*buf = sm_malloc(COUNT_READ)) == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  while (a < b) {
    size_t want = b - a < COUNT_READ ? (size_t)(b - a) : COUNT_READ;
    ssize_t r = sm_rfile_pread(s->f, *buf, want, a, err);
    if (r < 0)
      return (int)r;
    if (r == 0)
      break;
    *c += sm__count_newlines(*buf, (size_t)r);
    s->ncounted += (uint64_t)r;
    a += (uint64_t)r;
  }
  return 0;
}

int sm__logsrc_count_lines(sm__logsrc *s, uint64_t end, uint64_t *count,
                           sm_err *err) {
  uint64_t c = 0, pos = 0, run = 0;
  char *buf = NULL;
  int rc = 0;

  if (end > s->size)
    end = s->size;
  /* A block the analysis read is counted from what it left (its count,
   * or the block itself while it is cached); runs of the others are read
   * once, a megabyte at a time. */
  while (pos < end && rc == 0) {
    uint64_t bend = SM_MIN(pos + SM__SRC_BLOCK, end);
    long long m = bend - pos == SM__SRC_BLOCK ? memo_get(s, pos) : -1;
    const sm__cblock *b = m < 0 ? cache_find(s, pos) : NULL;
    if (m >= 0 || (b != NULL && b->len >= bend - pos)) {
      rc = count_uncached(s, run, pos, &buf, &c, err);
      c += m >= 0 ? (uint64_t)m
                  : sm__count_newlines(b->at, (size_t)(bend - pos));
      run = bend;
    }
    pos = bend;
  }
  if (rc == 0)
    rc = count_uncached(s, run, end, &buf, &c, err);
  sm_free(buf);
  *count = c;
  return rc;
}
