/* locate.c - finds the first failing line of a log without reading it.
 *
 * The log is seen as chunks of chunk_lines lines that start at byte
 * offsets (an offset is synced to the next line start).  A chunk fails
 * when one of its lines is failure evidence (a cause or symptom signature,
 * traceback structure, a Python exception, or a line the classifier calls
 * a failure).  Assuming the first real error turns a clean log into a
 * failing one, the locator bisects by byte offset between a clean start and
 * a failing chunk found in the tail, so a 1 GB log costs some forty chunk
 * reads.  Where the assumption breaks it is guarded:
 *
 *   - normal output after the fault: a probe counts as clean only when the
 *     chunk after it is clean too, so one quiet chunk among failing ones
 *     does not send the search past the fault;
 *   - warnings and recovered errors before the fault: a candidate that is
 *     followed by three clean chunks while the log goes on to fail later is
 *     a transient; the search resumes after it, and if the final fault has
 *     the same signature as a rejected transient, the earliest occurrence
 *     is reported (a failure that repeated, e.g. across elastic restarts);
 *   - normal output after the fault, longer than that (ranks finishing an
 *     evaluation loop, an elastic restart that trains before failing
 *     again): once a candidate is accepted, the 16 chunks before it are
 *     scanned for an earlier strong line, and if there is one the search
 *     runs again below it (at most 8 rounds in all);
 *   - a log whose last 512 lines are clean: files up to 16 MiB are scanned
 *     line by line, larger ones are probed at 32 evenly spaced chunks.
 *
 * The two ablations share the code: SM_DIAG_WHOLE scans every line from
 * the start, SM_DIAG_TAIL only the last tail_lines lines.  Afterwards the
 * window around the first failing line (context lines before, context +
 * 256 after) is read and numbered: the newlines before the window are
 * counted in one pass, sixteen bytes at a time (SSE2) or eight, the only
 * pass over the prefix (a scan from the start numbers lines as it goes).
 *
 * Every reader is linear in the bytes it hands out.  A line longer than
 * max_line, or a progress bar's carriage-return updates, is read as
 * pieces (numbered with their line), so a chunk, a probe or a context
 * walk costs bounded bytes even in a file without newlines, and all reads
 * go through the source's block cache (source.c): a region is read from
 * the file once. */
#include <limits.h>
#include <string.h>

#include "failure/failure_int.h"
#include "util/util_int.h"

#define BLOCK ((size_t)256 << 10)
#define FIRST_READ ((size_t)8 << 10)
#define CHUNK_MAX_BYTES ((size_t)1 << 20)
#define WINDOW_MAX_BYTES ((size_t)8 << 20)
#define CONTEXT_MAX_BYTES ((size_t)2 << 20)
#define BACK_MAX_BYTES ((size_t)8 << 20)
#define TAIL_CHUNKS 8
#define PERSIST_CHUNKS 3
#define MAX_ROUNDS 8
#define LINEAR_MAX ((uint64_t)16 << 20)
#define PROBES 32
#define FORWARD_EXTRA 256
#define BACK_CHUNKS 16

/* ==== Forward line reader over a source ==== */

/* Lines longer than max_line are handed out as pieces of max_line bytes
 * (the last piece ends at the newline).  A piece is analysed like a line
 * and numbered with the line it belongs to; nothing is skipped, so every
 * byte is read once and a reader's cost is the bytes it hands out, also
 * in a file without newlines. */
typedef struct fwd {
  sm__logsrc *src; /* the log */
  char *buf;       /* block buffer */
  size_t cap;      /* its size */
  size_t len;      /* valid bytes */
  size_t at;       /* next unread byte */
  size_t scanned;  /* bytes after at known to hold no newline */
  uint64_t boff;   /* file offset of buf[0] */
  size_t max_line; /* cap on a returned piece */
  size_t step;     /* next read size: small first, doubling */
} fwd;

static int fwd_init(fwd *r, sm__logsrc *src, uint64_t off, size_t max_line) {
  memset(r, 0, sizeof(*r));
  r->src = src;
  r->max_line = max_line;
  r->cap = BLOCK > max_line * 2 ? BLOCK : max_line * 2;
  r->buf = sm_malloc(r->cap);
  r->boff = off;
  r->step = FIRST_READ;
  return r->buf ? 0 : SM_ENOMEM;
}

static void fwd_release(fwd *r) {
  sm_free(r->buf);
  r->buf = NULL;
}

static uint64_t fwd_tell(const fwd *r) {
  return r->boff + r->at;
}

/* Moves unread bytes to the front and reads more.  Returns bytes read. */
static ssize_t fwd_fill(fwd *r, sm_err *err) {
  ssize_t n;

  if (r->at > 0) {
    memmove(r->buf, r->buf + r->at, r->len - r->at);
    r->boff += r->at;
    r->len -= r->at;
    r->at = 0;
  }
  if (r->len == r->cap)
    return 0;
  /* A chunk of short lines needs a few KiB: read little first and more
   * only while lines keep going. */
  n = sm__logsrc_read(r->src, r->buf + r->len, SM_MIN(r->cap - r->len, r->step),
                      r->boff + r->len, err);
  if (r->step < BLOCK)
    r->step *= 2;
  if (n > 0)
    r->len += (size_t)n;
  return n;
}

/* Returns 1 with the next line or piece, 0 at the end, or a negative
 * code.  A piece ends at a newline ("\r\n" too), at a lone carriage
 * return (a progress bar's updates, which a terminal shows one by one)
 * or after max_line bytes; empty pieces are skipped.  *line is valid
 * until the next call; *cont is 1 when the piece does not end its line
 * (the next piece has the same line number). */
static int fwd_next_piece(fwd *r, const char **line, size_t *len, uint64_t *off,
                          int *cont, sm_err *err) {
  for (;;) {
    char *s = r->buf + r->at, *nl = NULL, *cr = NULL;
    size_t have = r->len - r->at;
    size_t look = SM_MIN(have, r->max_line);
    ssize_t n;

    if (look > r->scanned) {
      nl = memchr(s + r->scanned, '\n', look - r->scanned);
      cr = memchr(s + r->scanned, '\r',
                  (size_t)((nl ? nl : s + look) - (s + r->scanned)));
      /* "\r\n" ends the line at the newline. */
      if (cr != NULL && cr + 1 == nl)
        cr = NULL;
    }
    if (cr != NULL && cr + 1 == s + have) {
      /* A carriage return at the end of what is buffered: the next byte
       * says whether it is "\r\n".  Read on; at the end of the source it
       * is a lone one. */
      r->scanned = (size_t)(cr - s);
      n = fwd_fill(r, err);
      if (n < 0)
        return (int)n;
      if (n > 0)
        continue;
      s = r->buf + r->at;
      cr = s + r->scanned;
    }
    if (cr != NULL) {
      size_t l = (size_t)(cr - s);
      r->at += l + 1;
      r->scanned = 0;
      if (l == 0)
        continue;
      *line = s;
      *off = r->boff + (uint64_t)(s - r->buf);
      *len = l;
      *cont = 1;
      return 1;
    }
    if (nl != NULL || have >= r->max_line) {
      size_t l = nl ? (size_t)(nl - s) : r->max_line;
      *line = s;
      *off = r->boff + r->at;
      *len = l;
      *cont = nl == NULL;
      if (nl != NULL && *len > 0 && s[*len - 1] == '\r')
        (*len)--;
      r->at += nl ? l + 1 : l;
      r->scanned = 0;
      return 1;
    }
    r->scanned = look;
    n = fwd_fill(r, err);
    if (n < 0)
      return (int)n;
    if (n > 0)
      continue;
    /* End of the source. */
    have = r->len - r->at;
    r->scanned = 0;
    if (have == 0)
      return 0;
    s = r->buf + r->at;
    *line = s;
    *off = r->boff + r->at;
    *len = have;
    *cont = 0;
    r->at = r->len;
    return 1;
  }
}

static int fwd_next(fwd *r, const char **line, size_t *len, uint64_t *off,
                    sm_err *err) {
  int cont;
  return fwd_next_piece(r, line, len, off, &cont, err);
}

/* ==== Offsets ==== */

/* Start of the first line or piece at or after off (off itself when it
 * starts a line): the byte after the next newline within max_line bytes,
 * else off, which is then the start of a piece of a long line. */
static int sync_line(sm__logsrc *s, uint64_t off, size_t max_line,
                     uint64_t *out, sm_err *err) {
  char buf[4096];
  uint64_t pos = off - 1, lim = off + max_line;

  if (off == 0 || off >= s->size) {
    *out = off > s->size ? s->size : off;
    return 0;
  }
  while (pos < s->size && pos < lim) {
    size_t want = (size_t)SM_MIN((uint64_t)sizeof(buf), lim - pos);
    ssize_t n = sm__logsrc_read(s, buf, want, pos, err);
    char *q;
    if (n < 0)
      return (int)n;
    if (n == 0)
      break;
    q = memchr(buf, '\n', (size_t)n);
    if (q != NULL) {
      *out = pos + (uint64_t)(q - buf) + 1;
      return 0;
    }
    pos += (uint64_t)n;
  }
  *out = pos >= s->size ? s->size : off;
  return 0;
}

/* Start of the line or piece that is `lines` lines before the one starting
 * at end (end must start a line or piece, or be the size).  A stretch of
 * more than max_line bytes without a newline counts as a piece, so the
 * walk reads at most lines * (max_line + 1) bytes, and never more than
 * max_bytes; where that limit stops it, the result starts a piece. */
static int back_lines(sm__logsrc *s, uint64_t end, long lines, size_t max_line,
                      size_t max_bytes, uint64_t *out, sm_err *err) {
  char *buf;
  uint64_t pos = end, lim = end > max_bytes ? end - max_bytes : 0;
  uint64_t last = end; /* the boundary found last */
  long seen = 0;
  int next = -1; /* the byte after the one looked at */
  size_t step = FIRST_READ / 4;

  if (lines <= 0 || end == 0) {
    *out = end;
    return 0;
  }
  buf = sm_malloc(BLOCK);
  if (buf == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  while (pos > lim) {
    size_t n = pos - lim < step ? (size_t)(pos - lim) : step;
    ssize_t r = sm__logsrc_read(s, buf, n, pos - n, err);
    if (step < BLOCK)
      step *= 2;
    if (r < 0) {
      sm_free(buf);
      return (int)r;
    }
    if ((size_t)r != n) {
      sm_free(buf);
      return sm_err_set(err, SM_EIO, "%s: file changed while reading", s->name);
    }
    for (size_t i = n; i-- > 0;) {
      uint64_t at = pos - n + i; /* file offset of buf[i] */
      int c = (unsigned char)buf[i], boundary;
      /* The same pieces as the forward reader: after a newline, after a
       * lone carriage return, or max_line bytes on.  The terminator just
       * before end ends the piece before it: not a boundary to count;
       * nor is one that would leave an empty piece. */
      boundary = at + 1 != end && at + 1 != last &&
                 (c == '\n' || (c == '\r' && next != '\n'));
      next = c;
      if (!boundary && last - at <= max_line)
        continue;
      last = at + 1;
      if (++seen == lines) {
        *out = last;
        sm_free(buf);
        return 0;
      }
    }
    pos -= n;
  }
  sm_free(buf);
  *out = lim;
  return 0;
}

/* ==== Chunks ==== */

typedef struct loc {
  sm__lctx *c;      /* line analysis */
  sm__logsrc *src;  /* the log */
  int chunk_lines;  /* lines per chunk */
  size_t max_line;  /* line cap */
  uint64_t chunks;  /* chunks scored */
  double avg_bytes; /* mean bytes of a chunk seen so far */
  sm_err *err;      /* errors */
} loc;

/* Classifies the line text[0..len) that starts at byte off into *l. */
static void eval_at(loc *L, sm__line *l, const char *text, size_t len,
                    uint64_t off) {
  memset(l, 0, sizeof(*l));
  l->text = text;
  l->len = len;
  l->off = off;
  sm__line_eval(L->c, l);
}

/* What one chunk (or one scan) holds. */
typedef struct chunk {
  uint64_t start, end; /* byte range */
  long lines;          /* lines read */
  int failing;         /* a failing line was found */
  int strong;          /* a strong line was found */
  uint64_t fail_off;   /* offset of the first failing line */
  const sm__sig *sig;  /* signature of the first strongest line */
  int strength;        /* strongest line strength */
  long long fail_no;   /* line number at fail_off, 0 when not known */
} chunk;

/* Scores up to max_lines lines from start, stopping before limit. */
static int scan(loc *L, uint64_t start, uint64_t limit, long max_lines,
                chunk *ch) {
  fwd r;
  const char *line;
  size_t len;
  uint64_t off;
  int rc = 0;

  memset(ch, 0, sizeof(*ch));
  ch->start = ch->end = start;
  ch->strength = -1;
  if (fwd_init(&r, L->src, start, L->max_line) != 0)
    return sm_err_set(L->err, SM_ENOMEM, "out of memory");
  while (ch->lines < max_lines && fwd_tell(&r) < limit) {
    sm__line l;
    int st;
    rc = fwd_next(&r, &line, &len, &off, L->err);
    if (rc <= 0)
      break;
    eval_at(L, &l, line, len, off);
    ch->lines++;
    st = sm__line_strength(&l);
    if (st >= 0 && !ch->failing) {
      ch->failing = 1;
      ch->fail_off = off;
    }
    if (sm__line_strong(&l))
      ch->strong = 1;
    if (st > ch->strength) {
      ch->strength = st;
      ch->sig = l.sig;
    }
    if (fwd_tell(&r) - start > CHUNK_MAX_BYTES)
      break;
  }
  ch->end = fwd_tell(&r);
  fwd_release(&r);
  return rc < 0 ? rc : 0;
}

static int eval_chunk(loc *L, uint64_t start, chunk *ch) {
  int rc = scan(L, start, L->src->size, L->chunk_lines, ch);

  if (rc == 0) {
    L->chunks++;
    if (ch->lines > 0)
      L->avg_bytes +=
          ((double)(ch->end - ch->start) - L->avg_bytes) / (double)L->chunks;
  }
  return rc;
}

/* Line by line from start: returns 1 with the first line of the first
 * episode that holds a strong line (an episode is a run of failing lines
 * with gaps shorter than `gap` lines), 0 if none before limit. */
static int linear(loc *L, uint64_t start, uint64_t limit, long gap,
                  chunk *found) {
  fwd r;
  const char *line;
  size_t len;
  uint64_t off, ep_off = 0;
  long n = 0, last_fail = -1;
  long long no = start == 0 ? 1 : 0, ep_no = 0;
  int rc = 0, ep_strength = -1, cont = 0;
  const sm__sig *ep_sig = NULL;

  memset(found, 0, sizeof(*found));
  found->start = start;
  if (fwd_init(&r, L->src, start, L->max_line) != 0)
    return sm_err_set(L->err, SM_ENOMEM, "out of memory");
  while (fwd_tell(&r) < limit) {
    sm__line l;
    int st;
    long long this_no = no;
    rc = fwd_next_piece(&r, &line, &len, &off, &cont, L->err);
    if (rc <= 0)
      break;
    /* From the start of the log the line numbers are known as we go: no
     * second pass to count them. */
    if (no > 0 && !cont)
      no++;
    eval_at(L, &l, line, len, off);
    n++;
    st = sm__line_strength(&l);
    if (st < 0)
      continue;
    if (last_fail < 0 || n - last_fail > gap) {
      ep_off = off;
      ep_no = this_no;
      ep_strength = -1;
      ep_sig = NULL;
    }
    last_fail = n;
    if (st > ep_strength) {
      ep_strength = st;
      ep_sig = l.sig;
    }
    if (sm__line_strong(&l)) {
      found->failing = found->strong = 1;
      found->fail_off = ep_off;
      found->fail_no = ep_no;
      found->strength = ep_strength;
      found->sig = ep_sig;
      rc = 1;
      break;
    }
  }
  found->lines = n;
  found->end = fwd_tell(&r);
  fwd_release(&r);
  L->chunks +=
      ((uint64_t)n + (uint64_t)L->chunk_lines - 1) / (uint64_t)L->chunk_lines;
  /* Not the last piece's "read one": reaching the limit with the piece
   * that ends there is no failure found. */
  return rc < 0 ? rc : found->failing;
}

/* ==== Search ==== */

/* Finds the first failing line at or after lo; hi starts a failing chunk.
 * Fills *found (its chunk is the one where the line sits). */
static int bisect(loc *L, uint64_t lo, uint64_t hi, chunk *found) {
  chunk a, b;
  int rc;

  rc = eval_chunk(L, lo, &a);
  if (rc != 0)
    return rc;
  if (a.failing || a.lines == 0) {
    *found = a;
    return 0;
  }
  lo = a.end;
  while (hi > lo && (double)(hi - lo) > 2.0 * L->avg_bytes + 1) {
    uint64_t mid;
    rc = sync_line(L->src, lo + (hi - lo) / 2, L->max_line, &mid, L->err);
    if (rc != 0)
      return rc;
    if (mid <= lo || mid >= hi)
      break;
    rc = eval_chunk(L, mid, &a);
    if (rc != 0)
      return rc;
    if (a.failing) {
      hi = mid;
      continue;
    }
    /* Verify the neighbour before calling the probe clean. */
    if (a.end < hi) {
      rc = eval_chunk(L, a.end, &b);
      if (rc != 0)
        return rc;
      if (b.failing) {
        hi = b.start;
        lo = a.end;
        continue;
      }
      lo = b.end < hi ? b.end : hi;
    } else {
      lo = hi;
    }
  }
  /* Linear scan of what is left; hi's chunk is known to fail. */
  for (int guard = 0; guard < 64; guard++) {
    rc = eval_chunk(L, lo, &a);
    if (rc != 0)
      return rc;
    if (a.failing || a.lines == 0)
      break;
    lo = a.end;
  }
  *found = a;
  return 0;
}

/* Decides whether the candidate is a transient: its episode (the next
 * PERSIST_CHUNKS chunks of lines) holds no strong line, or nothing but the
 * candidate fails there while the log goes on to fail later (at hi).
 * Returns 1 with *resume set, 0 to accept, or a negative code. */
static int transient(loc *L, const chunk *cand, uint64_t hi, uint64_t *resume) {
  long horizon = (long)PERSIST_CHUNKS * L->chunk_lines + 1;
  fwd r;
  const char *line;
  size_t len;
  uint64_t off;
  long n = 0;
  int strong = 0, others = 0, rc = 0;

  if (cand->fail_off >= hi)
    return 0;
  if (fwd_init(&r, L->src, cand->fail_off, L->max_line) != 0)
    return sm_err_set(L->err, SM_ENOMEM, "out of memory");
  while (n < horizon) {
    sm__line l;
    if (fwd_tell(&r) >= hi) {
      fwd_release(&r);
      return 0; /* the episode runs into the known failure */
    }
    rc = fwd_next(&r, &line, &len, &off, L->err);
    if (rc < 0) {
      fwd_release(&r);
      return rc;
    }
    if (rc == 0)
      break;
    eval_at(L, &l, line, len, off);
    if (sm__line_strong(&l))
      strong = 1;
    if (n > 0 && sm__line_failing(&l))
      others = 1;
    n++;
  }
  *resume = fwd_tell(&r);
  fwd_release(&r);
  L->chunks += PERSIST_CHUNKS;
  if (rc == 0 && n < horizon)
    return 0; /* the log ends inside the episode */
  if (!strong || !others)
    return *resume < hi ? 1 : 0;
  return 0;
}

/* Finds the last chunk with a strong line in the tail; 1 with *hi, 0 if
 * none. */
static int find_tail(loc *L, uint64_t *hi) {
  uint64_t end = L->src->size;

  for (int k = 0; k < TAIL_CHUNKS && end > 0; k++) {
    uint64_t start;
    chunk ch;
    int rc = back_lines(L->src, end, L->chunk_lines, L->max_line,
                        CHUNK_MAX_BYTES, &start, L->err);
    if (rc != 0)
      return rc;
    /* All of [start, end): its pieces may outnumber its lines. */
    rc = scan(L, start, end, LONG_MAX, &ch);
    if (rc != 0)
      return rc;
    L->chunks++;
    if (ch.strong) {
      *hi = ch.fail_off; /* a chunk starting there fails */
      return 1;
    }
    if (start == 0)
      break;
    end = start;
  }
  return 0;
}

/* A clean tail: scan small logs, probe large ones. */
static int find_elsewhere(loc *L, uint64_t *hi, chunk *found,
                          int *linear_done) {
  uint64_t size = L->src->size;

  *linear_done = 0;
  if (size <= LINEAR_MAX) {
    *linear_done = 1;
    return linear(L, 0, size, (long)PERSIST_CHUNKS * L->chunk_lines, found);
  }
  for (int k = PROBES - 1; k >= 1; k--) {
    uint64_t at;
    chunk ch;
    int rc = sync_line(L->src, size / PROBES * (uint64_t)k, L->max_line, &at,
                       L->err);
    if (rc != 0)
      return rc;
    rc = eval_chunk(L, at, &ch);
    if (rc != 0)
      return rc;
    if (ch.strong) {
      *hi = ch.fail_off;
      return 1;
    }
  }
  return 0;
}

/* Earliest strong line in [start, end): 1 with *at, 0 if none. */
static int back_scan(loc *L, uint64_t start, uint64_t end, uint64_t *at) {
  fwd r;
  const char *line;
  size_t len;
  uint64_t off;
  int rc = 0;
  long n = 0;

  if (fwd_init(&r, L->src, start, L->max_line) != 0)
    return sm_err_set(L->err, SM_ENOMEM, "out of memory");
  while (fwd_tell(&r) < end) {
    sm__line l;
    rc = fwd_next(&r, &line, &len, &off, L->err);
    if (rc <= 0)
      break;
    if (off >= end) {
      rc = 0;
      break;
    }
    n++;
    eval_at(L, &l, line, len, off);
    if (sm__line_strong(&l)) {
      *at = off;
      rc = 1;
      break;
    }
    rc = 0;
  }
  fwd_release(&r);
  L->chunks +=
      ((uint64_t)n + (uint64_t)L->chunk_lines - 1) / (uint64_t)L->chunk_lines;
  return rc;
}

static int locate_bisect(loc *L, chunk *found) {
  uint64_t hi = 0, lo = 0, resume = 0, at = 0, from;
  chunk cand, best, rejected[MAX_ROUNDS];
  int n_rej = 0, rc, linear_done, have_best = 0;

  rc = find_tail(L, &hi);
  if (rc < 0)
    return rc;
  if (rc == 0) {
    rc = find_elsewhere(L, &hi, found, &linear_done);
    if (rc <= 0 || linear_done)
      return rc;
  }
  for (int round = 0; round < MAX_ROUNDS; round++) {
    rc = bisect(L, lo, hi, &cand);
    if (rc != 0)
      return rc;
    if (!cand.failing)
      break;
    rc = transient(L, &cand, hi, &resume);
    if (rc < 0)
      return rc;
    if (rc == 1) {
      rejected[n_rej++] = cand;
      lo = resume;
      continue;
    }
    best = cand;
    have_best = 1;
    /* Normal output after a fault can hide it from the probes: look for
     * an earlier strong line in a bounded window before the candidate. */
    rc = back_lines(L->src, cand.fail_off, (long)BACK_CHUNKS * L->chunk_lines,
                    L->max_line, CONTEXT_MAX_BYTES, &from, L->err);
    if (rc != 0)
      return rc;
    if (from < lo)
      from = lo;
    rc = from < cand.fail_off ? back_scan(L, from, cand.fail_off, &at) : 0;
    if (rc < 0)
      return rc;
    if (rc == 0)
      break;
    hi = at;
  }
  if (!have_best)
    return 0;
  /* A fault that repeats: report its first occurrence. */
  for (int i = 0; i < n_rej; i++)
    if (rejected[i].sig != NULL && rejected[i].sig == best.sig &&
        rejected[i].strength >= 2 && rejected[i].fail_off < best.fail_off) {
      best = rejected[i];
      break;
    }
  *found = best;
  return 1;
}

/* ==== Window ==== */

/* Newlines in [a, b), read through the cache (a short range). */
static int count_range(sm__logsrc *s, uint64_t a, uint64_t b, uint64_t *count,
                       sm_err *err) {
  char buf[16384];

  *count = 0;
  while (a < b) {
    size_t want = (size_t)SM_MIN((uint64_t)sizeof(buf), b - a);
    ssize_t r = sm__logsrc_read(s, buf, want, a, err);
    if (r < 0)
      return (int)r;
    if (r == 0)
      break;
    *count += sm__count_newlines(buf, (size_t)r);
    a += (uint64_t)r;
  }
  return 0;
}

void sm__window_release(sm__window *w) {
  sm_free(w->lines);
  sm_free(w->buf);
  memset(w, 0, sizeof(*w));
}

/* Reads the lines of [start, ...) into w up to the one that holds
 * fail_off and n_after more, numbering them from first_no, and analyses
 * them. */
static int read_window(loc *L, uint64_t start, long n_after, long long first_no,
                       uint64_t fail_off, sm__window *w) {
  fwd r;
  const char *line;
  size_t len, used = 0, cap = 1 << 16;
  uint64_t off;
  long long no = first_no;
  size_t cap_lines = 256;
  int rc = 0, cont = 0;

  memset(w, 0, sizeof(*w));
  w->first_fail = -1;
  w->buf = sm_malloc(cap);
  w->lines = sm_malloc((size_t)cap_lines * sizeof(*w->lines));
  if (w->buf == NULL || w->lines == NULL ||
      fwd_init(&r, L->src, start, L->max_line) != 0) {
    sm__window_release(w);
    return sm_err_set(L->err, SM_ENOMEM, "out of memory");
  }
  while (used < WINDOW_MAX_BYTES &&
         (w->first_fail < 0 || w->n - w->first_fail <= n_after)) {
    sm__line *l;
    rc = fwd_next_piece(&r, &line, &len, &off, &cont, L->err);
    if (rc <= 0)
      break;
    if (SM__GROW(w->buf, used + len + 1, cap) != 0 ||
        SM__GROW(w->lines, (size_t)w->n + 1, cap_lines) != 0) {
      rc = SM_ENOMEM;
      break;
    }
    memcpy(w->buf + used, line, len);
    w->buf[used + len] = '\0';
    l = &w->lines[w->n];
    memset(l, 0, sizeof(*l));
    /* Offsets into buf for now: buf may still move. */
    l->text = (const char *)(uintptr_t)used;
    l->len = len;
    l->off = off;
    /* The pieces of a long line share its number. */
    l->no = no;
    if (!cont)
      no++;
    /* The piece that holds the failing byte (pieces of a long line may
     * start elsewhere than where the probe that found it started). */
    if (w->first_fail < 0 && off <= fail_off && fail_off < fwd_tell(&r))
      w->first_fail = w->n;
    used += len + 1;
    w->n++;
  }
  w->at_end = rc == 0; /* the reader ran out of log, not of room */
  fwd_release(&r);
  if (rc < 0) {
    sm__window_release(w);
    return rc == SM_ENOMEM ? sm_err_set(L->err, SM_ENOMEM, "out of memory")
                           : rc;
  }
  for (int i = 0; i < w->n; i++) {
    w->lines[i].text = w->buf + (uintptr_t)w->lines[i].text;
    sm__line_eval(L->c, &w->lines[i]);
  }
  return 0;
}

int sm__locate(sm__lctx *c, sm__logsrc *src, const sm_diag_opts *o,
               sm__window *w, sm__locate_stats *st, sm_err *err) {
  loc L;
  chunk found;
  uint64_t ws, lines_before = 0, floor_off = 0;
  int rc;

  memset(&L, 0, sizeof(L));
  L.c = c;
  L.src = src;
  L.chunk_lines = o->chunk_lines;
  L.max_line = o->max_line;
  L.err = err;
  memset(w, 0, sizeof(*w));
  if (src->size == 0)
    return 0;
  if (o->mode == SM_DIAG_LOCATE) {
    rc = locate_bisect(&L, &found);
  } else {
    uint64_t start = 0;
    if (o->mode == SM_DIAG_TAIL) {
      rc = back_lines(src, src->size, o->tail_lines, o->max_line,
                      BACK_MAX_BYTES, &start, err);
      if (rc != 0)
        return rc;
      floor_off = start;
    }
    rc = linear(&L, start, src->size, (long)PERSIST_CHUNKS * L.chunk_lines,
                &found);
  }
  st->chunks = L.chunks;
  if (rc <= 0)
    return rc;
  /* The window: context lines before the failing line, more after it. */
  rc = back_lines(src, found.fail_off, o->context, o->max_line,
                  CONTEXT_MAX_BYTES, &ws, err);
  if (rc != 0)
    return rc;
  if (ws < floor_off)
    ws = floor_off;
  if (found.fail_no > 0) {
    /* A scan from the start numbered the line already: count only the
     * few lines between the window's start and it. */
    uint64_t between;
    rc = count_range(src, ws, found.fail_off, &between, err);
    if (rc != 0)
      return rc;
    lines_before = (uint64_t)(found.fail_no - 1) - between;
  } else {
    rc = sm__logsrc_count_lines(src, ws, &lines_before, err);
    if (rc != 0)
      return rc;
  }
  rc = read_window(&L, ws, (long)o->context + FORWARD_EXTRA,
                   (long long)lines_before + 1, found.fail_off, w);
  if (rc != 0)
    return rc;
  if (w->first_fail < 0) {
    sm__window_release(w);
    return sm_err_set(err, SM_EIO, "%s: file changed while reading", src->name);
  }
  return 1;
}
