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
 * Every network wait is bounded by the open timeout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis.h>

#include "store_impl.h"

#define BATCH 1000

typedef struct redis_store {
  redisContext *c;  /* connection */
  int batching;     /* inside sm_store_begin/end */
  int pending;      /* replies not read yet while batching */
  int batch_rc;     /* first failure inside the batch */
  sm_err batch_err; /* its message */
  char prefix[64];  /* key prefix */
  char where[300];  /* host:port/db, for messages */
} redis_store;

static int rfail(redis_store *s, const char *what, sm_err *err) {
  int code = SM_ECONN;

  /* hiredis 0.14 reports a timeout as an I/O error with EAGAIN. */
  if (s->c && s->c->err == REDIS_ERR_IO &&
      (strstr(s->c->errstr, "temporarily unavailable") ||
       strstr(s->c->errstr, "timed out")))
    code = SM_ETIMEOUT;
  else if (s->c && s->c->err == REDIS_ERR_OOM)
    code = SM_ENOMEM;
  return sm_err_set(err, code, "redis %s: %s: %s", s->where, what,
                    s->c && s->c->err ? s->c->errstr : "unexpected reply");
}

static void redis_close(void *impl) {
  redis_store *s = impl;

  if (s == NULL)
    return;
  if (s->c)
    redisFree(s->c);
  sm_free(s);
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

static redisReply *cmd(redis_store *s, const char *fmt, ...) {
  va_list ap;
  redisReply *r;

  va_start(ap, fmt);
  r = redisvCommand(s->c, fmt, ap);
  va_end(ap);
  return r;
}

void *sm__redis_open(const char *uri, int flags, int timeout_ms, sm_err *err) {
  redis_store *s = sm_calloc(1, sizeof(*s));
  char host[256];
  int port, db;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisReply *r;

  (void)flags;
  if (s == NULL) {
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
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
    rfail(s, "cannot connect", err);
    redis_close(s);
    return NULL;
  }
  redisSetTimeout(s->c, tv);
  if (db != 0) {
    r = cmd(s, "SELECT %d", db);
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
      if (r)
        sm_err_set(err, SM_ECONN, "redis %s: SELECT: %s", s->where, r->str);
      else
        rfail(s, "SELECT", err);
      freeReplyObject(r);
      redis_close(s);
      return NULL;
    }
    freeReplyObject(r);
  }
  r = cmd(s, "GET %s:schema", s->prefix);
  if (r == NULL || r->type == REDIS_REPLY_ERROR) {
    if (r)
      sm_err_set(err, SM_ECONN, "redis %s: %s", s->where, r->str);
    else
      rfail(s, "GET schema", err);
    freeReplyObject(r);
    redis_close(s);
    return NULL;
  }
  if (r->type == REDIS_REPLY_STRING && atoi(r->str) != SM_STORE_SCHEMA) {
    int v = atoi(r->str);
    sm_err_set(err, SM_ESCHEMA,
               "redis %s: schema version %s is %s this build's (%d)", s->where,
               r->str, v > SM_STORE_SCHEMA ? "newer than" : "not",
               SM_STORE_SCHEMA);
    freeReplyObject(r);
    redis_close(s);
    return NULL;
  }
  freeReplyObject(r);
  return s;
}

/* Reads n pipelined replies; returns 0 if all arrived without error. */
static int drain(redis_store *s, int n, sm_err *err) {
  int rc = 0;

  for (int i = 0; i < n; i++) {
    redisReply *r = NULL;
    if (redisGetReply(s->c, (void **)&r) != REDIS_OK)
      return rfail(s, "no reply", err);
    if (r->type == REDIS_REPLY_ERROR && rc == 0)
      rc = sm_err_set(err, SM_EIO, "redis %s: %s", s->where, r->str);
    freeReplyObject(r);
  }
  return rc;
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
  char *json = sm__record_json(r);
  char k[5][96], ver[16];
  int rc = 0;

  if (json == NULL)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  sm__fp_pack(r->fp, blob);
  snprintf(k[0], sizeof(k[0]), "%s:schema", s->prefix);
  snprintf(k[1], sizeof(k[1]), "%s:seq", s->prefix);
  snprintf(k[2], sizeof(k[2]), "%s:rec", s->prefix);
  snprintf(k[3], sizeof(k[3]), "%s:fp", s->prefix);
  snprintf(k[4], sizeof(k[4]), "%s:order", s->prefix);
  snprintf(ver, sizeof(ver), "%d", SM_STORE_SCHEMA);
  redisAppendCommand(s->c, "EVAL %s 5 %s %s %s %s %s %s %s %b %s", put_script,
                     k[0], k[1], k[2], k[3], k[4], r->id, json, blob,
                     sizeof(blob), ver);
  sm_free(json);
  if (!s->batching)
    return drain(s, 1, err);
  if (++s->pending >= BATCH) {
    rc = drain(s, s->pending, &s->batch_err);
    s->pending = 0;
    if (rc != 0 && s->batch_rc == 0)
      s->batch_rc = rc;
  }
  return 0;
}

static int redis_begin(void *impl, sm_err *err) {
  redis_store *s = impl;
  (void)err;
  s->batching = 1;
  s->pending = 0;
  s->batch_rc = 0;
  sm_err_clear(&s->batch_err);
  return 0;
}

static int redis_end(void *impl, sm_err *err) {
  redis_store *s = impl;
  int rc = s->pending ? drain(s, s->pending, &s->batch_err) : 0;

  s->batching = 0;
  s->pending = 0;
  if (s->batch_rc == 0)
    s->batch_rc = rc;
  if (s->batch_rc != 0)
    return sm_err_set(err, s->batch_rc, "%s", s->batch_err.msg);
  return 0;
}

static int redis_get(void *impl, const char *id, sm_record *r, sm_err *err) {
  redis_store *s = impl;
  redisReply *rep = cmd(s, "HGET %s:rec %s", s->prefix, id);
  int rc;

  if (rep == NULL)
    return rfail(s, "HGET", err);
  if (rep->type == REDIS_REPLY_NIL)
    rc = sm_err_set(err, SM_ENOTFOUND, "redis %s: no job '%s'", s->where, id);
  else if (rep->type != REDIS_REPLY_STRING)
    rc =
        sm_err_set(err, SM_ECORRUPT, "redis %s: bad record '%s'", s->where, id);
  else
    rc = sm_record_from_json(r, rep->str, rep->len, err) ? SM_ECORRUPT : 0;
  freeReplyObject(rep);
  return rc;
}

/* The ids in insertion order (a ZRANGE reply, freed by the caller). */
static redisReply *order(redis_store *s, sm_err *err) {
  redisReply *rep = cmd(s, "ZRANGE %s:order 0 -1", s->prefix);

  if (rep == NULL) {
    rfail(s, "ZRANGE", err);
    return NULL;
  }
  if (rep->type != REDIS_REPLY_ARRAY) {
    sm_err_set(err, SM_ECORRUPT, "redis %s: bad %s:order", s->where, s->prefix);
    freeReplyObject(rep);
    return NULL;
  }
  return rep;
}

/* Pipelines HMGET of key for ids[from, from+n) and returns the reply. */
static redisReply *hmget(redis_store *s, const char *key, redisReply *ids,
                         size_t from, size_t n, sm_err *err) {
  const char **argv = sm_malloc((n + 2) * sizeof(char *));
  size_t *lens = sm_malloc((n + 2) * sizeof(size_t));
  char k[96];
  redisReply *rep;

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
  rep = redisCommandArgv(s->c, (int)(n + 2), argv, lens);
  sm_free(argv);
  sm_free(lens);
  if (rep == NULL) {
    rfail(s, "HMGET", err);
    return NULL;
  }
  if (rep->type != REDIS_REPLY_ARRAY || rep->elements != n) {
    sm_err_set(err, SM_ECORRUPT, "redis %s: bad HMGET reply", s->where);
    freeReplyObject(rep);
    return NULL;
  }
  return rep;
}

static int redis_each(void *impl, int (*fn)(const sm_record *, void *),
                      void *arg, sm_err *err) {
  redis_store *s = impl;
  redisReply *ids = order(s, err);
  sm_record r;
  int rc = 0, stop = 0;

  if (ids == NULL)
    return err && err->code ? err->code : SM_ECONN;
  sm_record_init(&r);
  for (size_t from = 0; rc == 0 && !stop && from < ids->elements;
       from += BATCH) {
    size_t n = SM_MIN((size_t)BATCH, ids->elements - from);
    redisReply *recs = hmget(s, "rec", ids, from, n, err);
    if (recs == NULL) {
      rc = SM_ECONN;
      break;
    }
    for (size_t i = 0; i < n && !stop; i++) {
      redisReply *e = recs->element[i];
      if (e->type != REDIS_REPLY_STRING) /* removed meanwhile */
        continue;
      if (sm_record_from_json(&r, e->str, e->len, err) != 0) {
        rc = SM_ECORRUPT;
        break;
      }
      stop = fn(&r, arg) != 0;
    }
    freeReplyObject(recs);
  }
  sm_record_release(&r);
  freeReplyObject(ids);
  return rc;
}

static long long redis_count(void *impl, sm_err *err) {
  redis_store *s = impl;
  redisReply *rep = cmd(s, "ZCARD %s:order", s->prefix);
  long long n;

  if (rep == NULL)
    return rfail(s, "ZCARD", err);
  n = rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
  freeReplyObject(rep);
  return n >= 0 ? n
                : sm_err_set(err, SM_ECORRUPT, "redis %s: bad ZCARD", s->where);
}

static int redis_version(void *impl, uint64_t *v, sm_err *err) {
  redis_store *s = impl;
  redisReply *rep = cmd(s, "GET %s:seq", s->prefix);

  if (rep == NULL)
    return rfail(s, "GET seq", err);
  *v = rep->type == REDIS_REPLY_STRING ? strtoull(rep->str, NULL, 10) : 0;
  freeReplyObject(rep);
  return 0;
}

static int redis_load(void *impl, sm_index **ixp, char ***idsp, size_t *np,
                      sm_err *err) {
  redis_store *s = impl;
  redisReply *ids = order(s, err);
  sm_index *ix;
  char **out;
  size_t n = 0;
  int rc = 0;

  if (ids == NULL)
    return err && err->code ? err->code : SM_ECONN;
  ix = sm_index_new(SM_FP_DIMS);
  out = sm_calloc(ids->elements + 1, sizeof(char *));
  if (ix == NULL || out == NULL || sm_index_reserve(ix, ids->elements) != 0) {
    rc = sm_err_set(err, SM_ENOMEM, "history: out of memory");
    goto done;
  }
  for (size_t from = 0; rc == 0 && from < ids->elements; from += BATCH) {
    size_t cnt = SM_MIN((size_t)BATCH, ids->elements - from);
    redisReply *fps = hmget(s, "fp", ids, from, cnt, err);
    if (fps == NULL) {
      rc = SM_ECONN;
      break;
    }
    for (size_t i = 0; i < cnt; i++) {
      redisReply *e = fps->element[i];
      float fp[SM_FP_DIMS];
      if (e->type != REDIS_REPLY_STRING)
        continue;
      if (sm__fp_unpack((const unsigned char *)e->str, e->len, fp) != 0) {
        /* Recompute from the record, the source of truth. */
        sm_record r;
        sm_record_init(&r);
        rc = redis_get(s, ids->element[from + i]->str, &r, err);
        memcpy(fp, r.fp, sizeof(fp));
        sm_record_release(&r);
        if (rc != 0)
          break;
      }
      out[n] = sm_strdup(ids->element[from + i]->str);
      if (out[n] == NULL || sm_index_add(ix, fp) != 0) {
        rc = sm_err_set(err, SM_ENOMEM, "history: out of memory");
        break;
      }
      n++;
    }
    freeReplyObject(fps);
  }
done:
  freeReplyObject(ids);
  if (rc != 0) {
    for (size_t i = 0; i <= n && out; i++)
      sm_free(out[i]);
    sm_free(out);
    sm_index_free(ix);
    return rc;
  }
  *ixp = ix;
  *idsp = out;
  *np = n;
  return 0;
}

const store_ops sm__redis_ops = {
    "redis",       redis_put,  redis_get, redis_each,  redis_count,
    redis_version, redis_load, NULL,      redis_begin, redis_end,
    redis_close,   NULL,       NULL};
