/* store_redis.c - the shared history store on Redis, for several
 * scheduler replicas that must see one history.
 *
 * Key layout (P is the prefix, "sm" unless ?prefix= says otherwise):
 *   P:schema   string  schema version ("1")
 *   P:seq      string  counter, incremented by every write (also tells
 *                      readers that their cached index is stale)
 *   P:order    zset    job id -> insertion sequence number
 *   P:rec      hash    job id -> record JSON (the export form)
 *   P:fp       hash    job id -> packed fingerprint (version byte +
 *                      float32 little-endian x 256)
 * A write is one server-side script (atomic: the sequence number, both
 * hashes and the order entry change together); batches of writes and all
 * loads are pipelined.
 *
 * The server is not trusted to be well-behaved.  hiredis formats the
 * requests and parses the replies, but the socket is ours: non-blocking,
 * and every request/reply round trip must be complete within the store's
 * timeout (a total deadline, not one per read: a server that sends a byte
 * every 0.5 s is cut off), a whole-history read within SCAN_FACTOR times
 * that.  Every byte received passes a RESP scanner before hiredis sees
 * it, which refuses a bulk string over MAX_BULK, an array announcing more
 * than MAX_ELEMENTS elements, a reply over MAX_REPLY bytes, a line over
 * MAX_LINE and nesting over MAX_DEPTH, before anything is allocated for
 * it.  After such a failure the connection is dropped (its state is
 * unknown) and every later call fails at once.  Ids are read in pages of
 * PAGE and records in batches of BATCH, so that an honest reply stays far
 * below the caps. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <hiredis.h>

#include "history/history_int.h"
#include "util/util_int.h"

/* The Redis layout's own version.  It did not change when the SQLite
 * schema went to 2 (the configuration digests): here a record is only its
 * JSON, whose new members are optional, so records written before and
 * builds reading after need nothing migrated, and a store written by this
 * build stays readable by the builds before it. */
#define REDIS_SCHEMA 1

#define BATCH 1000          /* records per HMGET, writes per drain */
#define PAGE 10000          /* ids per ZRANGE */
#define MAX_ROWS (1L << 22) /* ids a history may have */
#define SCAN_FACTOR 15      /* whole-history read: timeouts */
#define MAX_BULK SM__RESP_MAX_BULK
#define MAX_ELEMENTS SM__RESP_MAX_ELEMENTS
#define MAX_REPLY SM__RESP_MAX_REPLY
#define MAX_LINE SM__RESP_MAX_LINE
#define MAX_DEPTH SM__RESP_MAX_DEPTH

/* ==== The RESP scanner ==== */

enum { S_TYPE, S_LINE, S_BULK, S_BULK_CR, S_BULK_LF };

typedef sm__resp_scan resp_scan;

/* A value ended: close the arrays it completes. */
static void value_done(resp_scan *p) {
  while (p->depth > 0) {
    if (--p->left[p->depth] > 0)
      break;
    p->depth--;
  }
  if (p->depth == 0) {
    p->bytes = 0;
    p->elems = 0;
    p->replies++;
  }
  p->state = S_TYPE;
}

static int scan_header(resp_scan *p) {
  char *e;
  long long n;

  p->num[p->nlen] = '\0';
  errno = 0;
  /* Digits only (a sign, spaces or '+' would make another parser read a
   * different length, and the two would no longer agree where a reply
   * ends). */
  for (size_t i = 0; i < p->nlen; i++)
    if (!(p->num[i] >= '0' && p->num[i] <= '9') &&
        !(i == 0 && p->num[i] == '-' && p->nlen > 1))
      p->nlen = 0;
  n = p->nlen ? strtoll(p->num, &e, 10) : 0;
  if (p->nlen == 0 || *e != '\0' || errno != 0 || n < -1) {
    snprintf(p->why, sizeof(p->why), "protocol error: bad length '%.20s'",
             p->num);
    return -1;
  }
  if (p->type == '$') {
    if (n > MAX_BULK) {
      snprintf(p->why, sizeof(p->why),
               "reply refused: a string of %lld bytes (at most %lld)", n,
               MAX_BULK);
      return -1;
    }
    if (n == -1) {
      value_done(p);
    } else {
      p->bulk_left = n;
      p->state = n ? S_BULK : S_BULK_CR;
    }
    return 0;
  }
  /* '*' */
  if (n > MAX_ELEMENTS || p->elems + n > MAX_ELEMENTS) {
    snprintf(p->why, sizeof(p->why),
             "reply refused: an array of %lld elements (at most %d)", n,
             MAX_ELEMENTS);
    return -1;
  }
  if (n <= 0) {
    value_done(p);
    return 0;
  }
  if (p->depth == MAX_DEPTH) {
    snprintf(p->why, sizeof(p->why),
             "reply refused: arrays nested deeper than %d", MAX_DEPTH);
    return -1;
  }
  p->left[++p->depth] = n;
  p->state = S_TYPE;
  return 0;
}

void sm__resp_scan_init(sm__resp_scan *p) {
  memset(p, 0, sizeof(*p));
  p->state = S_TYPE;
}

int sm__resp_scan_feed(sm__resp_scan *p, const char *b, size_t n) {
  size_t i = 0;

  while (i < n) {
    switch (p->state) {
    case S_TYPE: {
      char c = b[i++];
      p->bytes++;
      if (c != '+' && c != '-' && c != ':' && c != '$' && c != '*') {
        snprintf(p->why, sizeof(p->why), "protocol error: type byte 0x%02x",
                 (unsigned char)c);
        return -1;
      }
      if (++p->elems > MAX_ELEMENTS) {
        snprintf(p->why, sizeof(p->why), "reply refused: more than %d values",
                 MAX_ELEMENTS);
        return -1;
      }
      p->type = c;
      p->nlen = 0;
      p->line = 0;
      p->state = S_LINE;
      break;
    }
    case S_LINE: {
      char c = b[i++];
      p->bytes++;
      if (p->cr) {
        /* Lines end with CR LF exactly, as every RESP parser expects. */
        p->cr = 0;
        if (c != '\n') {
          snprintf(p->why, sizeof(p->why), "protocol error: CR without LF");
          return -1;
        }
        if (p->type == '+' || p->type == '-' || p->type == ':')
          value_done(p);
        else if (scan_header(p) != 0)
          return -1;
        break;
      }
      if (c == '\r') {
        p->cr = 1;
        break;
      }
      if (c == '\n') {
        snprintf(p->why, sizeof(p->why), "protocol error: LF without CR");
        return -1;
      }
      if (++p->line > MAX_LINE) {
        snprintf(p->why, sizeof(p->why),
                 "reply refused: a line longer than %d bytes", MAX_LINE);
        return -1;
      }
      if (p->type == '+' || p->type == '-')
        break;
      if (p->nlen + 1 >= sizeof(p->num)) {
        snprintf(p->why, sizeof(p->why), "protocol error: number too long");
        return -1;
      }
      p->num[p->nlen++] = c;
      break;
    }
    case S_BULK_CR:
    case S_BULK_LF: {
      char c = b[i++];
      p->bytes++;
      if (c != (p->state == S_BULK_CR ? '\r' : '\n')) {
        snprintf(p->why, sizeof(p->why),
                 "protocol error: a string not ended by CR LF");
        return -1;
      }
      if (p->state == S_BULK_CR)
        p->state = S_BULK_LF;
      else
        value_done(p);
      break;
    }
    case S_BULK: {
      size_t take = n - i;
      if ((long long)take > p->bulk_left)
        take = (size_t)p->bulk_left;
      p->bulk_left -= (long long)take;
      p->bytes += take;
      i += take;
      if (p->bulk_left == 0)
        p->state = S_BULK_CR;
      break;
    }
    }
    if (p->bytes > MAX_REPLY) {
      snprintf(p->why, sizeof(p->why), "reply refused: more than %zu bytes",
               MAX_REPLY);
      return -1;
    }
  }
  return 0;
}

/* ==== Connection ==== */

typedef struct redis_store {
  redisContext *c;      /* connection */
  int timeout_ms;       /* one round trip */
  int broken;           /* an earlier failure left the stream unknown */
  char broken_why[160]; /* why */
  double deadline;      /* of the operation in progress */
  resp_scan scan;       /* checks what the server sends */
  int batching;         /* inside sm_store_begin/end */
  int pending;          /* replies not read yet while batching */
  int batch_rc;         /* first failure inside the batch */
  sm_err batch_err;     /* its message */
  long long done;       /* writes of the batch acknowledged */
  sm__skips skips;      /* records that could not be read back */
  char prefix[64];      /* key prefix */
  char where[300];      /* host:port/db, for messages */
} redis_store;

static int rfail_msg(redis_store *s, int code, const char *what,
                     const char *why, sm_err *err) {
  if (code != SM_ENOMEM && !s->broken) {
    /* The stream is in an unknown state: nothing more is sent on it. */
    s->broken = 1;
    snprintf(s->broken_why, sizeof(s->broken_why), "%s", why);
  }
  return sm_err_set(err, code, "redis %s: %s: %s", s->where, what, why);
}

static void redis_close(void *impl) {
  redis_store *s = impl;

  if (s == NULL)
    return;
  if (s->c)
    redisFree(s->c);
  sm_free(s);
}

/* Milliseconds left before the round trip's deadline (<= 0: none). */
static int ms_left(redis_store *s, double rt_deadline) {
  double d = rt_deadline < s->deadline ? rt_deadline : s->deadline;
  double left = (d - sm_now()) * 1000.0;
  return left <= 0 ? 0 : left > 1e9 ? 1000000000 : (int)left + 1;
}

/* Starts an operation: its whole deadline is factor timeouts. */
static void op_start(redis_store *s, int factor) {
  s->deadline = sm_now() + (double)s->timeout_ms * factor / 1000.0;
}

static int check_usable(redis_store *s, const char *what, sm_err *err) {
  if (s->broken)
    return sm_err_set(err, SM_ECONN,
                      "redis %s: %s: connection dropped after an earlier "
                      "failure (%s)",
                      s->where, what, s->broken_why);
  return 0;
}

/* Writes what hiredis has buffered, before the deadline. */
static int flush_out(redis_store *s, double rt_deadline, const char *what,
                     sm_err *err) {
  int done = 0;

  while (!done) {
    struct pollfd pf = {s->c->fd, POLLOUT, 0};
    int ms, r;
    if (redisBufferWrite(s->c, &done) != REDIS_OK)
      return rfail_msg(s, SM_ECONN, what, s->c->errstr, err);
    if (done)
      break;
    ms = ms_left(s, rt_deadline);
    if (ms <= 0)
      return rfail_msg(s, SM_ETIMEOUT, what, "timed out sending the request",
                       err);
    r = poll(&pf, 1, ms);
    if (r < 0 && errno != EINTR)
      return rfail_msg(s, SM_ECONN, what, strerror(errno), err);
  }
  return 0;
}

/* Reads one complete reply before the deadline; *out is freed by the
 * caller with freeReplyObject. */
static int read_reply(redis_store *s, double rt_deadline, const char *what,
                      redisReply **out, sm_err *err) {
  char buf[64 << 10];

  *out = NULL;
  for (;;) {
    void *r = NULL;
    struct pollfd pf = {s->c->fd, POLLIN, 0};
    ssize_t n;
    int ms, pr;

    if (redisReaderGetReply(s->c->reader, &r) != REDIS_OK) {
      char why[160];
      snprintf(why, sizeof(why), "protocol error: %s", s->c->reader->errstr);
      return rfail_msg(s, SM_ECONN, what, why, err);
    }
    if (r != NULL) {
      *out = r;
      return 0;
    }
    ms = ms_left(s, rt_deadline);
    if (ms <= 0) {
      char why[160];
      snprintf(why, sizeof(why),
               "timed out after %d ms waiting for a complete reply",
               s->timeout_ms);
      return rfail_msg(s, SM_ETIMEOUT, what, why, err);
    }
    pr = poll(&pf, 1, ms);
    if (pr < 0 && errno != EINTR)
      return rfail_msg(s, SM_ECONN, what, strerror(errno), err);
    if (pr <= 0)
      continue;
    n = read(s->c->fd, buf, sizeof(buf));
    if (n == 0)
      return rfail_msg(s, SM_ECONN, what, "connection closed by the server",
                       err);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR)
        continue;
      return rfail_msg(s, SM_ECONN, what, strerror(errno), err);
    }
    if (sm__resp_scan_feed(&s->scan, buf, (size_t)n) != 0)
      return rfail_msg(s, SM_ETOOBIG, what, s->scan.why, err);
    if (redisReaderFeed(s->c->reader, buf, (size_t)n) != REDIS_OK)
      return rfail_msg(s, SM_ENOMEM, what, "out of memory", err);
  }
}

/* Sends what is buffered and reads n replies, the last one into *last
 * (may be NULL: all are checked for errors and freed).  One round trip,
 * bounded by the timeout. */
static int round_trip(redis_store *s, int n, const char *what,
                      redisReply **last, sm_err *err) {
  double rt = sm_now() + s->timeout_ms / 1000.0;
  int rc = flush_out(s, rt, what, err);

  if (last)
    *last = NULL;
  for (int i = 0; rc == 0 && i < n; i++) {
    redisReply *r;
    rc = read_reply(s, rt, what, &r, err);
    if (rc != 0)
      break;
    if (last && i == n - 1) {
      *last = r;
      break;
    }
    if (r->type == REDIS_REPLY_ERROR)
      rc = sm_err_set(err, SM_EIO, "redis %s: %s: %s", s->where, what, r->str);
    else if (s->batching)
      s->done++;
    freeReplyObject(r);
  }
  return rc;
}

/* One command, its reply in *out (an error reply is an error). */
static int cmd(redis_store *s, const char *what, redisReply **out, sm_err *err,
               const char *fmt, ...) {
  va_list ap;
  int rc;

  *out = NULL;
  rc = check_usable(s, what, err);
  if (rc != 0)
    return rc;
  va_start(ap, fmt);
  rc = redisvAppendCommand(s->c, fmt, ap);
  va_end(ap);
  if (rc != REDIS_OK)
    return sm_err_set(err, SM_ENOMEM, "redis %s: %s: out of memory", s->where,
                      what);
  rc = round_trip(s, 1, what, out, err);
  if (rc == 0 && (*out)->type == REDIS_REPLY_ERROR) {
    rc = sm_err_set(err, SM_EIO, "redis %s: %s: %s", s->where, what,
                    (*out)->str);
    freeReplyObject(*out);
    *out = NULL;
  }
  return rc;
}

/* redis://host:port/db?prefix=P */
static int parse_uri(const char *uri, char *host, size_t hcap, int *port,
                     int *db, char *prefix, size_t pcap) {
  const char *p = uri + 8, *colon, *slash, *q, *end;
  size_t hl;

  *port = 6379;
  *db = 0;
  snprintf(prefix, pcap, "sm");
  end = p + strcspn(p, "/?");
  colon = memchr(p, ':', (size_t)(end - p));
  hl = (size_t)((colon ? colon : end) - p);
  if (hl == 0 || hl >= hcap)
    return -1;
  memcpy(host, p, hl);
  host[hl] = '\0';
  if (colon) {
    char *e;
    long v = strtol(colon + 1, &e, 10);
    if (e != end || v <= 0 || v > 65535)
      return -1;
    *port = (int)v;
  }
  slash = *end == '/' ? end : NULL;
  if (slash && slash[1] && slash[1] != '?') {
    char *e;
    long v = strtol(slash + 1, &e, 10);
    if ((*e != '\0' && *e != '?') || v < 0 || v > 1000000)
      return -1;
    *db = (int)v;
  }
  q = strchr(p, '?');
  if (q) {
    if (strncmp(q + 1, "prefix=", 7) != 0 || q[8] == '\0' ||
        strlen(q + 8) >= pcap)
      return -1;
    snprintf(prefix, pcap, "%s", q + 8);
  }
  return 0;
}

void *sm__redis_open(const char *uri, int flags, int timeout_ms, sm_err *err) {
  redis_store *s = sm_calloc(1, sizeof(*s));
  char host[256];
  int port, db, fl;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisReply *r;

  (void)flags;
  if (s == NULL) {
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
  s->timeout_ms = timeout_ms;
  if (parse_uri(uri, host, sizeof(host), &port, &db, s->prefix,
                sizeof(s->prefix)) != 0) {
    sm_err_set(err, SM_EINVAL,
               "%s: bad Redis URI (expected redis://host:port/db)", uri);
    sm_free(s);
    return NULL;
  }
  snprintf(s->where, sizeof(s->where), "%s:%d/%d", host, port, db);
  s->c = redisConnectWithTimeout(host, port, tv);
  if (s->c == NULL || s->c->err) {
    int code = SM_ECONN;
    if (s->c && s->c->err == REDIS_ERR_IO &&
        (strstr(s->c->errstr, "temporarily unavailable") ||
         strstr(s->c->errstr, "timed out")))
      code = SM_ETIMEOUT;
    sm_err_set(err, code, "redis %s: cannot connect: %s", s->where,
               s->c ? s->c->errstr : "out of memory");
    redis_close(s);
    return NULL;
  }
  /* From here on the socket is ours: non-blocking, every wait bounded by
   * the deadline of its operation. */
  fl = fcntl(s->c->fd, F_GETFL);
  if (fl < 0 || fcntl(s->c->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
    sm_err_set(err, SM_ECONN, "redis %s: %s", s->where, strerror(errno));
    redis_close(s);
    return NULL;
  }
  s->c->flags &= ~REDIS_BLOCK;
  op_start(s, 1);
  if (db != 0) {
    if (cmd(s, "SELECT", &r, err, "SELECT %d", db) != 0) {
      redis_close(s);
      return NULL;
    }
    freeReplyObject(r);
  }
  if (cmd(s, "GET schema", &r, err, "GET %s:schema", s->prefix) != 0) {
    redis_close(s);
    return NULL;
  }
  if (r->type == REDIS_REPLY_STRING && atoi(r->str) != REDIS_SCHEMA) {
    int v = atoi(r->str);
    sm_err_set(err, SM_ESCHEMA,
               "redis %s: schema version %s is %s this build's (%d)", s->where,
               r->str, v > REDIS_SCHEMA ? "newer than" : "not", REDIS_SCHEMA);
    freeReplyObject(r);
    redis_close(s);
    return NULL;
  }
  freeReplyObject(r);
  return s;
}

/* Reads the n pipelined write replies; 0 if all arrived without error. */
static int drain(redis_store *s, int n, sm_err *err) {
  op_start(s, 1);
  return round_trip(s, n, "write", NULL, err);
}

/* The whole write, atomic on the server. */
static const char put_script[] =
    "redis.call('SET', KEYS[1], ARGV[4], 'NX') "
    "local s = redis.call('INCR', KEYS[2]) "
    "redis.call('HSET', KEYS[3], ARGV[1], ARGV[2]) "
    "redis.call('HSET', KEYS[4], ARGV[1], ARGV[3]) "
    "redis.call('ZADD', KEYS[5], 'NX', s, ARGV[1]) "
    "return s";

static int redis_put(void *impl, const sm_record *r, sm_err *err) {
  redis_store *s = impl;
  unsigned char blob[SM__FP_BLOB_LEN];
  char *json;
  char k[5][96], ver[16];
  int rc = check_usable(s, "write", err);

  if (rc != 0)
    return rc;
  rc = sm__record_encode(r, &json, blob, err);
  if (rc != 0)
    return rc;
  snprintf(k[0], sizeof(k[0]), "%s:schema", s->prefix);
  snprintf(k[1], sizeof(k[1]), "%s:seq", s->prefix);
  snprintf(k[2], sizeof(k[2]), "%s:rec", s->prefix);
  snprintf(k[3], sizeof(k[3]), "%s:fp", s->prefix);
  snprintf(k[4], sizeof(k[4]), "%s:order", s->prefix);
  snprintf(ver, sizeof(ver), "%d", REDIS_SCHEMA);
  rc = redisAppendCommand(s->c, "EVAL %s 5 %s %s %s %s %s %s %s %b %s",
                          put_script, k[0], k[1], k[2], k[3], k[4], r->id, json,
                          blob, sizeof(blob), ver);
  sm_free(json);
  if (rc != REDIS_OK)
    return sm_err_set(err, SM_ENOMEM, "redis %s: out of memory", s->where);
  if (!s->batching)
    return drain(s, 1, err);
  if (++s->pending >= BATCH) {
    rc = drain(s, s->pending, &s->batch_err);
    s->pending = 0;
    if (rc != 0 && s->batch_rc == 0)
      s->batch_rc = rc;
    if (rc != 0)
      return sm_err_set(err, rc, "%s", s->batch_err.msg);
  }
  return 0;
}

static int redis_begin(void *impl, sm_err *err) {
  redis_store *s = impl;
  s->batching = 1;
  s->pending = 0;
  s->batch_rc = 0;
  s->done = 0;
  sm_err_clear(&s->batch_err);
  return check_usable(s, "write", err);
}

static int redis_end(void *impl, sm_err *err) {
  redis_store *s = impl;
  int rc = s->pending && !s->broken ? drain(s, s->pending, &s->batch_err) : 0;

  s->batching = 0;
  s->pending = 0;
  if (s->batch_rc == 0)
    s->batch_rc = rc;
  if (s->batch_rc != 0)
    return sm_err_set(err, s->batch_rc, "%s", s->batch_err.msg);
  return 0;
}

static int get_record(redis_store *s, const char *id, sm_record *r,
                      sm_err *err) {
  redisReply *rep;
  int rc = cmd(s, "HGET", &rep, err, "HGET %s:rec %s", s->prefix, id);

  if (rc != 0)
    return rc;
  if (rep->type == REDIS_REPLY_NIL) {
    rc = sm_err_set(err, SM_ENOTFOUND, "redis %s: no job '%s'", s->where, id);
  } else if (rep->type != REDIS_REPLY_STRING) {
    rc = sm_err_set(err, SM_ECORRUPT,
                    "redis %s: %s:rec field '%s': not a "
                    "string",
                    s->where, s->prefix, id);
  } else {
    sm_err e = {0};
    if (sm_record_from_json(r, rep->str, rep->len, &e) != 0)
      rc = sm_err_set(err, SM_ECORRUPT, "redis %s: %s:rec field '%s': %s",
                      s->where, s->prefix, id, e.msg);
  }
  freeReplyObject(rep);
  return rc;
}

static int redis_get(void *impl, const char *id, sm_record *r, sm_err *err) {
  redis_store *s = impl;
  op_start(s, 1);
  return get_record(s, id, r, err);
}

/* One page of ids in insertion order (ranks from..from+PAGE-1); freed by
 * the caller.  NULL with err set. */
static redisReply *order_page(redis_store *s, long from, sm_err *err) {
  redisReply *rep;

  if (cmd(s, "ZRANGE", &rep, err, "ZRANGE %s:order %ld %ld", s->prefix, from,
          from + PAGE - 1) != 0)
    return NULL;
  if (rep->type != REDIS_REPLY_ARRAY) {
    sm_err_set(err, SM_ECORRUPT, "redis %s: bad %s:order", s->where, s->prefix);
    freeReplyObject(rep);
    return NULL;
  }
  for (size_t i = 0; i < rep->elements; i++)
    if (rep->element[i]->type != REDIS_REPLY_STRING) {
      sm_err_set(err, SM_ECORRUPT, "redis %s: bad %s:order", s->where,
                 s->prefix);
      freeReplyObject(rep);
      return NULL;
    }
  return rep;
}

/* HMGET of key for ids[from, from+n); the reply (n elements) or NULL. */
static redisReply *hmget(redis_store *s, const char *key, redisReply *ids,
                         size_t from, size_t n, sm_err *err) {
  const char **argv = sm_malloc((n + 2) * sizeof(char *));
  size_t *lens = sm_malloc((n + 2) * sizeof(size_t));
  char k[96];
  redisReply *rep = NULL;
  int rc;

  if (argv == NULL || lens == NULL) {
    sm_free(argv);
    sm_free(lens);
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
  snprintf(k, sizeof(k), "%s:%s", s->prefix, key);
  argv[0] = "HMGET";
  lens[0] = 5;
  argv[1] = k;
  lens[1] = strlen(k);
  for (size_t i = 0; i < n; i++) {
    argv[i + 2] = ids->element[from + i]->str;
    lens[i + 2] = ids->element[from + i]->len;
  }
  rc = check_usable(s, "HMGET", err);
  if (rc == 0 &&
      redisAppendCommandArgv(s->c, (int)(n + 2), argv, lens) != REDIS_OK)
    rc = sm_err_set(err, SM_ENOMEM, "redis %s: out of memory", s->where);
  sm_free(argv);
  sm_free(lens);
  if (rc == 0)
    rc = round_trip(s, 1, "HMGET", &rep, err);
  if (rc != 0)
    return NULL;
  if (rep->type != REDIS_REPLY_ARRAY || rep->elements != n) {
    sm_err_set(err, SM_ECORRUPT, "redis %s: bad HMGET reply", s->where);
    freeReplyObject(rep);
    return NULL;
  }
  return rep;
}

/* Calls fn(ids page, arg) for every page of ids; stops on non-zero. */
static int each_page(redis_store *s,
                     int (*fn)(redis_store *, redisReply *, void *), void *arg,
                     sm_err *err) {
  long from = 0;

  for (;;) {
    redisReply *ids = order_page(s, from, err);
    size_t n;
    int rc;
    if (ids == NULL)
      return err && err->code ? err->code : SM_ECONN;
    n = ids->elements;
    rc = n ? fn(s, ids, arg) : 0;
    freeReplyObject(ids);
    if (rc != 0)
      return rc < 0 ? rc : 0;
    if (n < PAGE)
      return 0;
    from += PAGE;
    if (from >= MAX_ROWS)
      return sm_err_set(err, SM_ELIMIT,
                        "redis %s: more than %ld jobs in %s:order", s->where,
                        MAX_ROWS, s->prefix);
  }
}

typedef struct each_arg {
  int (*fn)(const sm_record *, void *); /* the caller's */
  void *arg;                            /* its argument */
  sm_err *err;                          /* for failures */
  sm_record r;                          /* reused */
} each_arg;

static int each_cb(redis_store *s, redisReply *ids, void *argp) {
  each_arg *a = argp;

  for (size_t from = 0; from < ids->elements; from += BATCH) {
    size_t n = SM_MIN((size_t)BATCH, ids->elements - from);
    redisReply *recs = hmget(s, "rec", ids, from, n, a->err);
    if (recs == NULL)
      return a->err && a->err->code ? a->err->code : SM_ECONN;
    for (size_t i = 0; i < n; i++) {
      redisReply *e = recs->element[i];
      sm_err pe = {0};
      if (e->type == REDIS_REPLY_NIL) /* removed meanwhile */
        continue;
      if (e->type != REDIS_REPLY_STRING ||
          sm_record_from_json(&a->r, e->str, e->len, &pe) != 0) {
        /* Skipped and counted; the rest of the history still answers. */
        sm__skip_note(&s->skips, "redis %s: %s:rec field '%s': %s", s->where,
                      s->prefix, ids->element[from + i]->str,
                      pe.code ? pe.msg : "not a string");
        continue;
      }
      if (a->fn(&a->r, a->arg) != 0) {
        freeReplyObject(recs);
        return 1;
      }
    }
    freeReplyObject(recs);
  }
  return 0;
}

static int redis_each(void *impl, int (*fn)(const sm_record *, void *),
                      void *arg, sm_err *err) {
  redis_store *s = impl;
  each_arg a = {fn, arg, err, {0}};
  int rc;

  op_start(s, SCAN_FACTOR);
  sm__skip_reset(&s->skips);
  sm_record_init(&a.r);
  rc = each_page(s, each_cb, &a, err);
  sm_record_release(&a.r);
  return rc;
}

static long long redis_count(void *impl, sm_err *err) {
  redis_store *s = impl;
  redisReply *rep;
  long long n;

  op_start(s, 1);
  if (cmd(s, "ZCARD", &rep, err, "ZCARD %s:order", s->prefix) != 0)
    return err && err->code ? err->code : SM_ECONN;
  n = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
  freeReplyObject(rep);
  return n >= 0 ? n
                : sm_err_set(err, SM_ECORRUPT, "redis %s: bad ZCARD", s->where);
}

static int redis_version(void *impl, uint64_t *v, sm_err *err) {
  redis_store *s = impl;
  redisReply *rep;
  int rc;

  op_start(s, 1);
  rc = cmd(s, "GET seq", &rep, err, "GET %s:seq", s->prefix);
  if (rc != 0)
    return rc;
  *v = rep->type == REDIS_REPLY_STRING ? strtoull(rep->str, NULL, 10) : 0;
  freeReplyObject(rep);
  return 0;
}

typedef struct load_arg {
  sm_index *ix; /* being filled */
  char **ids;   /* its ids */
  size_t n;     /* rows */
  size_t cap;   /* ids allocated */
  sm_err *err;  /* for failures */
} load_arg;

static int load_cb(redis_store *s, redisReply *ids, void *argp) {
  load_arg *a = argp;

  if (SM__GROW(a->ids, a->n + ids->elements, a->cap) != 0 ||
      sm_index_reserve(a->ix, a->cap) != 0)
    return sm_err_set(a->err, SM_ENOMEM, "history: out of memory");
  for (size_t from = 0; from < ids->elements; from += BATCH) {
    size_t cnt = SM_MIN((size_t)BATCH, ids->elements - from);
    redisReply *fps = hmget(s, "fp", ids, from, cnt, a->err);
    if (fps == NULL)
      return a->err && a->err->code ? a->err->code : SM_ECONN;
    for (size_t i = 0; i < cnt; i++) {
      redisReply *e = fps->element[i];
      const char *id = ids->element[from + i]->str;
      float fp[SM_FP_DIMS];
      if (e->type == REDIS_REPLY_NIL)
        continue;
      if (e->type != REDIS_REPLY_STRING ||
          sm__fp_unpack((const unsigned char *)e->str, e->len, fp) != 0) {
        /* Recompute from the record, the source of truth; skip the job
         * when that is damaged too. */
        sm_record r;
        sm_err ge = {0};
        int grc;
        sm_record_init(&r);
        grc = get_record(s, id, &r, &ge);
        memcpy(fp, r.fp, sizeof(fp));
        sm_record_release(&r);
        if (grc == SM_ECORRUPT || grc == SM_ENOTFOUND) {
          if (grc == SM_ECORRUPT)
            sm__skip_note(&s->skips, "%s", ge.msg);
          continue;
        }
        if (grc != 0) {
          freeReplyObject(fps);
          return sm_err_set(a->err, grc, "%s", ge.msg);
        }
      }
      a->ids[a->n] = sm_strdup(id);
      if (a->ids[a->n] == NULL || sm_index_add(a->ix, fp) != 0) {
        sm_free(a->ids[a->n]);
        freeReplyObject(fps);
        return sm_err_set(a->err, SM_ENOMEM, "history: out of memory");
      }
      a->n++;
    }
    freeReplyObject(fps);
  }
  return 0;
}

static int redis_load(void *impl, sm_index **ixp, char ***idsp, size_t *np,
                      sm_err *err) {
  redis_store *s = impl;
  load_arg a = {sm_index_new(SM_FP_DIMS), NULL, 0, 0, err};
  int rc;

  if (a.ix == NULL)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  op_start(s, SCAN_FACTOR);
  sm__skip_reset(&s->skips);
  rc = each_page(s, load_cb, &a, err);
  if (rc != 0) {
    for (size_t i = 0; i < a.n; i++)
      sm_free(a.ids[i]);
    sm_free(a.ids);
    sm_index_free(a.ix);
    return rc;
  }
  *ixp = a.ix;
  *idsp = a.ids;
  *np = a.n;
  return 0;
}

static sm__skips *redis_skips(void *impl) {
  return &((redis_store *)impl)->skips;
}

static long long redis_batch_done(void *impl) {
  return ((redis_store *)impl)->done;
}

const sm__store_ops sm__redis_ops = {
    "redis",         redis_put,     redis_get,   redis_each,
    redis_count,     redis_version, redis_load,  NULL,
    redis_begin,     redis_end,     redis_close, redis_skips,
    redis_batch_done};
