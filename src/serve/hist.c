/* hist.c - the service's history: the persistent store (SQLite or Redis)
 * for durability, and one in-memory store ("mem:") loaded from it once at
 * start, which every advice searches through the same sm_advise the
 * command uses, so the matching rule lives in one place and the store is
 * never read to answer.
 *
 * A write-back is put into the persistent store first; only when that
 * returned (committed) is it added to the index and acknowledged.  Both
 * happen under one mutex, the index under a write lock that readers
 * (advice) share.
 *
 * Other writers (another replica on the same Redis, an agent or a person
 * adding to the same SQLite file) are noticed by polling:
 *   - Redis: one script reads the sequence counter every write increments
 *     and the ids whose insertion number is past the one last seen; those
 *     records are read and added.  A counter that moved by more than the
 *     new ids and our own replacing writes means another writer replaced
 *     a record: the index is reloaded;
 *   - SQLite: the record count; a change that our own writes do not
 *     explain reloads the index.  (Replacements by others are not seen
 *     until a restart: docs/serve.md.)
 * A reload builds a new index beside the old one, which keeps answering,
 * and swaps them under the write lock. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis.h>

#include "serve/serve_int.h"

#define SYNC_BATCH 1000

typedef struct loading {
  sm_store *mem; /* the index being built */
  sv_scan *scan; /* its pre-search view, or NULL */
} loading;

static int put_mem(const sm_record *r, void *arg) {
  loading *l = arg;
  if (sm_store_put(l->mem, r, NULL) != 0)
    return 1;
  /* Without the view advice is still exact, only slower. */
  if (l->scan && sv__scan_put(l->scan, l->mem, r) != 0) {
    sv__scan_free(l->scan);
    l->scan = NULL;
  }
  return 0;
}

/* A new in-memory index with every record of the store, and its view
 * (*scan, NULL when there is no memory for it). */
static sm_store *load_all(sm_store *store, long long *count, sv_scan **scan,
                          sm_err *err) {
  loading l = {sm_store_open("mem:", 0, 0, err), sv__scan_new()};
  int rc;

  *scan = NULL;
  if (l.mem == NULL) {
    sv__scan_free(l.scan);
    return NULL;
  }
  *count = sm_store_count(store, err);
  if (*count < 0) {
    sm_store_close(l.mem);
    sv__scan_free(l.scan);
    return NULL;
  }
  rc = sm_store_each(store, put_mem, &l, err);
  if (rc != 0) {
    sm_store_close(l.mem);
    sv__scan_free(l.scan);
    return NULL;
  }
  *scan = l.scan;
  return l.mem;
}

/* ==== Redis: our own connection for the sequence counter ==== */

static int redis_connect(sv_hist *h, const char *uri, int timeout_ms,
                         sm_err *err) {
  char host[256];
  const char *p = uri + 8, *end, *colon, *q;
  long port = 6379, db = 0;
  struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisContext *c;
  size_t hl;

  snprintf(h->prefix, sizeof(h->prefix), "sm");
  end = p + strcspn(p, "/?");
  colon = memchr(p, ':', (size_t)(end - p));
  hl = (size_t)((colon ? colon : end) - p);
  if (hl == 0 || hl >= sizeof(host))
    return sm_err_set(err, SM_EINVAL, "%s: bad Redis URI", uri);
  memcpy(host, p, hl);
  host[hl] = '\0';
  if (colon)
    port = strtol(colon + 1, NULL, 10);
  if (*end == '/')
    db = strtol(end + 1, NULL, 10);
  q = strchr(p, '?');
  if (q && strncmp(q + 1, "prefix=", 7) == 0)
    snprintf(h->prefix, sizeof(h->prefix), "%s", q + 8);
  c = redisConnectWithTimeout(host, (int)port, tv);
  if (c == NULL || c->err) {
    sm_err_set(err, SM_ECONN, "redis %s:%ld: %s", host, port,
               c ? c->errstr : "cannot connect");
    if (c)
      redisFree(c);
    return SM_ECONN;
  }
  redisSetTimeout(c, tv);
  if (db != 0) {
    redisReply *r = redisCommand(c, "SELECT %ld", db);
    int bad = r == NULL || r->type == REDIS_REPLY_ERROR;
    freeReplyObject(r);
    if (bad) {
      redisFree(c);
      return sm_err_set(err, SM_ECONN, "redis %s:%ld: SELECT %ld failed", host,
                        port, db);
    }
  }
  h->redis = c;
  return 0;
}

static int redis_seq(sv_hist *h, uint64_t *seq, sm_err *err) {
  redisContext *c = h->redis;
  redisReply *r;

  if (c->err && redisReconnect(c) != REDIS_OK)
    return sm_err_set(err, SM_ECONN, "redis: %s", c->errstr);
  r = redisCommand(c, "GET %s:seq", h->prefix);
  if (r == NULL)
    return sm_err_set(err, SM_ECONN, "redis: GET seq: %s", c->errstr);
  *seq = r->type == REDIS_REPLY_STRING ? strtoull(r->str, NULL, 10) : 0;
  freeReplyObject(r);
  return 0;
}

/* ==== Opening ==== */

int sv__hist_open(sv_hist *h, const char *uri, int timeout_ms, sm_err *err) {
  pthread_rwlockattr_t ra;

  memset(h, 0, sizeof(*h));
  pthread_mutex_init(&h->wmu, NULL);
  pthread_rwlockattr_init(&ra);
  /* Advice never starves a write-back. */
  pthread_rwlockattr_setkind_np(&ra,
                                PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&h->rw, &ra);
  pthread_rwlockattr_destroy(&ra);
  h->uri = sm_strdup(uri);
  if (h->uri == NULL)
    return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  if (strncmp(uri, "mem:", 4) == 0)
    return sm_err_set(err, SM_EINVAL,
                      "--db mem: keeps nothing: give a SQLite file or "
                      "redis://host:port/db");
  h->store = sm_store_open(uri, SM_STORE_CREATE, timeout_ms, err);
  if (h->store == NULL)
    return err && err->code ? err->code : SM_EIO;
  if (strcmp(sm_store_kind(h->store), "redis") == 0) {
    int rc = redis_connect(h, uri, timeout_ms, err);
    if (rc == 0)
      rc = redis_seq(h, &h->seq, err);
    if (rc != 0)
      return rc;
  }
  h->mem = load_all(h->store, &h->store_count, &h->scan, err);
  if (h->mem == NULL)
    return err && err->code ? err->code : SM_EIO;
  atomic_store(&h->n, sm_store_count(h->mem, NULL));
  return 0;
}

void sv__hist_close(sv_hist *h) {
  sv__scan_free(h->scan);
  sm_store_close(h->mem);
  sm_store_close(h->store);
  if (h->redis)
    redisFree(h->redis);
  sm_free(h->uri);
  pthread_mutex_destroy(&h->wmu);
  pthread_rwlock_destroy(&h->rw);
  memset(h, 0, sizeof(*h));
}

/* ==== Use ==== */

int sv__hist_advise(sv_hist *h, const sm_meta *m, const float *fp,
                    const char *embedder, const sm_advise_opts *o, sm_advice *a,
                    sm_err *err) {
  int rc;

  pthread_rwlock_rdlock(&h->rw);
  /* The pre-search answers from a few records when it can prove the
   * answer is sm_advise's over the whole index (scan.c); else the
   * whole index is searched. */
  rc = h->scan ? sv__scan_advise(h->scan, h->mem, m, fp, embedder, o, a, err)
               : 1;
  if (rc == 1) {
    atomic_fetch_add(&h->full_search, 1);
    rc = fp ? sm_advise_fp(h->mem, m, NULL, fp, embedder, o, a, err)
            : sm_advise(h->mem, m, NULL, o, a, err);
  } else if (rc == 0) {
    atomic_fetch_add(&h->presearched, 1);
  }
  pthread_rwlock_unlock(&h->rw);
  return rc;
}

size_t sv__hist_fingerprints(sv_hist *h) {
  size_t n;

  pthread_rwlock_rdlock(&h->rw);
  n = h->scan ? sv__scan_groups(h->scan) : 0;
  pthread_rwlock_unlock(&h->rw);
  return n;
}

/* Adds r to the index; 1 when it was new.  Caller holds wmu. */
static int index_put(sv_hist *h, const sm_record *r, sm_err *err) {
  long long n0, n1;
  int rc;

  pthread_rwlock_wrlock(&h->rw);
  n0 = sm_store_count(h->mem, NULL);
  rc = sm_store_put(h->mem, r, err);
  if (rc == 0 && h->scan && sv__scan_put(h->scan, h->mem, r) != 0) {
    /* Out of memory: answers stay exact without the view. */
    sv__scan_free(h->scan);
    h->scan = NULL;
  }
  n1 = sm_store_count(h->mem, NULL);
  atomic_store(&h->n, n1);
  pthread_rwlock_unlock(&h->rw);
  return rc != 0 ? rc : n1 > n0;
}

int sv__hist_commit(sv_hist *h, const sm_record *r, sm_err *err) {
  int rc;

  pthread_mutex_lock(&h->wmu);
  rc = sm_store_put(h->store, r, err);
  if (rc == 0) {
    sm_err ierr = {0};
    int added = index_put(h, r, &ierr);
    if (added < 0) {
      /* Committed but not indexed (out of memory): the next poll
       * reloads. */
      h->store_count = -1;
      atomic_fetch_add(&h->sync_errors, 1);
    } else if (added) {
      if (h->store_count >= 0)
        h->store_count++;
    } else {
      h->own_replaced++;
    }
  }
  pthread_mutex_unlock(&h->wmu);
  return rc;
}

/* Replaces the index with a fresh load.  Caller holds wmu. */
static int reload(sv_hist *h, sm_err *err) {
  sm_store *mem, *old;
  sv_scan *scan, *old_scan;
  uint64_t seq = 0;
  long long count;

  if (h->redis && redis_seq(h, &seq, err) != 0)
    return err && err->code ? err->code : SM_ECONN;
  mem = load_all(h->store, &count, &scan, err);
  if (mem == NULL)
    return err && err->code ? err->code : SM_EIO;
  pthread_rwlock_wrlock(&h->rw);
  old = h->mem;
  old_scan = h->scan;
  h->mem = mem;
  h->scan = scan;
  atomic_store(&h->n, sm_store_count(mem, NULL));
  /* Counted as it is published: whoever sees the new index sees the
   * count that includes it. */
  atomic_fetch_add(&h->reloads, 1);
  pthread_rwlock_unlock(&h->rw);
  sm_store_close(old);
  sv__scan_free(old_scan);
  h->store_count = count;
  h->seq = seq;
  h->own_replaced = 0;
  return 0;
}

/* The Redis poll.  Caller holds wmu. */
static const char poll_script[] =
    "local s = tonumber(redis.call('GET', KEYS[1]) or '0') "
    "local ids = {} "
    "if s > tonumber(ARGV[1]) then "
    "  ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], s, "
    "                   'LIMIT', 0, tonumber(ARGV[2])) "
    "end "
    "return {tostring(s), ids}";

static int sync_redis(sv_hist *h, sm_err *err) {
  redisContext *c = h->redis;
  char k1[96], k2[96], from[32], lim[16];
  redisReply *r, *ids, *recs = NULL;
  uint64_t seq;
  size_t k;
  int rc = 0;

  if (c->err && redisReconnect(c) != REDIS_OK)
    return sm_err_set(err, SM_ECONN, "redis: %s", c->errstr);
  snprintf(k1, sizeof(k1), "%s:seq", h->prefix);
  snprintf(k2, sizeof(k2), "%s:order", h->prefix);
  snprintf(from, sizeof(from), "%llu", (unsigned long long)h->seq);
  snprintf(lim, sizeof(lim), "%d", SYNC_BATCH + 1);
  r = redisCommand(c, "EVAL %s 2 %s %s %s %s", poll_script, k1, k2, from, lim);
  if (r == NULL)
    return sm_err_set(err, SM_ECONN, "redis: poll: %s", c->errstr);
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
      r->element[0]->type != REDIS_REPLY_STRING ||
      (r->element[1]->type != REDIS_REPLY_ARRAY &&
       r->element[1]->type != REDIS_REPLY_NIL)) {
    rc = sm_err_set(err, SM_ECORRUPT, "redis: poll: unexpected reply%s%s",
                    r->type == REDIS_REPLY_ERROR ? ": " : "",
                    r->type == REDIS_REPLY_ERROR ? r->str : "");
    freeReplyObject(r);
    return rc;
  }
  seq = strtoull(r->element[0]->str, NULL, 10);
  ids = r->element[1];
  k = ids->type == REDIS_REPLY_ARRAY ? ids->elements : 0;
  if (seq <= h->seq) {
    freeReplyObject(r);
    return 0;
  }
  /* Every write adds one to the counter; an insert also adds an id. */
  if (k > SYNC_BATCH || seq - h->seq - k > h->own_replaced) {
    freeReplyObject(r);
    return reload(h, err);
  }
  if (k > 0) {
    const char **argv = sm_calloc(k + 2, sizeof(char *));
    size_t *lens = sm_calloc(k + 2, sizeof(size_t));
    char key[96];
    if (argv == NULL || lens == NULL) {
      sm_free(argv);
      sm_free(lens);
      freeReplyObject(r);
      return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
    }
    snprintf(key, sizeof(key), "%s:rec", h->prefix);
    argv[0] = "HMGET";
    lens[0] = 5;
    argv[1] = key;
    lens[1] = strlen(key);
    for (size_t i = 0; i < k; i++) {
      argv[i + 2] = ids->element[i]->str;
      lens[i + 2] = ids->element[i]->len;
    }
    recs = redisCommandArgv(c, (int)(k + 2), argv, lens);
    sm_free(argv);
    sm_free(lens);
    if (recs == NULL || recs->type != REDIS_REPLY_ARRAY ||
        recs->elements != k) {
      rc = sm_err_set(err, SM_ECONN, "redis: HMGET: %s",
                      recs == NULL ? c->errstr : "unexpected reply");
      freeReplyObject(recs);
      freeReplyObject(r);
      return rc;
    }
    for (size_t i = 0; i < k && rc == 0; i++) {
      redisReply *e = recs->element[i];
      sm_record rec;
      if (e->type != REDIS_REPLY_STRING)
        continue;
      sm_record_init(&rec);
      if (sm_record_from_json(&rec, e->str, e->len, NULL) == 0) {
        int added = index_put(h, &rec, err);
        if (added < 0)
          rc = added;
        else if (added)
          atomic_fetch_add(&h->syncs, 1);
      }
      sm_record_release(&rec);
    }
    freeReplyObject(recs);
  }
  freeReplyObject(r);
  if (rc == 0) {
    h->seq = seq;
    h->own_replaced = 0;
  }
  return rc;
}

int sv__hist_sync(sv_hist *h, sm_err *err) {
  int rc;

  pthread_mutex_lock(&h->wmu);
  if (h->redis) {
    rc = sync_redis(h, err);
  } else {
    long long c = sm_store_count(h->store, err);
    rc = c < 0 ? (int)c : c != h->store_count ? reload(h, err) : 0;
  }
  pthread_mutex_unlock(&h->wmu);
  if (rc != 0)
    atomic_fetch_add(&h->sync_errors, 1);
  return rc;
}

/* ==== The polling thread ==== */

static void *sync_thread(void *arg) {
  sm_serve *sv = arg;
  double iv = sv->o.sync_interval_s;
  char last[SM_ERR_MSG_SIZE] = "";

  pthread_mutex_lock(&sv->sy_mu);
  while (!sv->sy_stop) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += (time_t)iv;
    ts.tv_nsec += (long)((iv - floor(iv)) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&sv->sy_cv, &sv->sy_mu, &ts);
    if (sv->sy_stop)
      break;
    pthread_mutex_unlock(&sv->sy_mu);
    {
      sm_err err = {0};
      unsigned long long r0 = atomic_load(&sv->hist.reloads);
      unsigned long long s0 = atomic_load(&sv->hist.syncs);
      if (sv__hist_sync(&sv->hist, &err) != 0) {
        /* Said once per distinct problem. */
        if (strcmp(err.msg, last) != 0)
          sv__log(sv, SM_SERVE_WARN, "history: poll: %s", err.msg);
        snprintf(last, sizeof(last), "%s", err.msg);
      } else {
        if (last[0])
          sv__log(sv, SM_SERVE_INFO, "history: poll works again");
        last[0] = '\0';
        if (atomic_load(&sv->hist.reloads) != r0)
          sv__log(sv, SM_SERVE_INFO,
                  "history: another writer changed records: index reloaded "
                  "(%lld records)",
                  (long long)atomic_load(&sv->hist.n));
        else if (atomic_load(&sv->hist.syncs) != s0)
          sv__log(sv, SM_SERVE_DEBUG,
                  "history: %llu record(s) from another "
                  "writer",
                  atomic_load(&sv->hist.syncs) - s0);
      }
    }
    pthread_mutex_lock(&sv->sy_mu);
  }
  pthread_mutex_unlock(&sv->sy_mu);
  return NULL;
}

int sv__sync_start(sm_serve *sv, sm_err *err) {
  pthread_condattr_t ca;
  sigset_t all, old;
  int rc;

  if (sv->o.sync_interval_s < 0)
    return 0;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_destroy(&sv->sy_cv);
  pthread_cond_init(&sv->sy_cv, &ca);
  pthread_condattr_destroy(&ca);
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  rc = pthread_create(&sv->sy_thr, NULL, sync_thread, sv);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    return sm_err_set(err, SM_ENOMEM, "serve: cannot start the sync thread");
  sv->sy_started = 1;
  return 0;
}

void sv__sync_stop(sm_serve *sv) {
  if (!sv->sy_started)
    return;
  pthread_mutex_lock(&sv->sy_mu);
  sv->sy_stop = 1;
  pthread_cond_signal(&sv->sy_cv);
  pthread_mutex_unlock(&sv->sy_mu);
  pthread_join(sv->sy_thr, NULL);
  sv->sy_started = 0;
}
