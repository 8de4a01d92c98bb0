/* store.c - the history store front end: URI dispatch to a backend
 * (store_sqlite.c, store_redis.c, store_mem.c) and the cached search that
 * the persistent backends share.  The helpers every backend uses
 * (skipped-record counter, fingerprint blobs, record JSON) are in
 * store_util.c, below the backends. */
#include <string.h>

#include "history/history_int.h"
#include "util/util_int.h"

/* What a search knows of a cached row's record. */
enum { ROW_UNCHECKED = 0, ROW_GOOD, ROW_BAD };

struct sm_store {
  const sm__store_ops *ops; /* backend */
  void *impl;               /* backend state */
  sm_index *ix;             /* cached index (persistent backends) */
  char **ids;               /* ids of its rows */
  size_t n_ids;             /* rows */
  unsigned char *row_state; /* ROW_* per row: records are read once */
  size_t n_bad;             /* rows found ROW_BAD */
  uint64_t version;         /* history version the cache was loaded at */
  int loaded;               /* cache valid */
  int batching;             /* inside sm_store_begin/end */
  long long batch_puts;     /* puts that succeeded in the batch */
};

static void drop_cache(sm_store *s) {
  sm_index_free(s->ix);
  for (size_t i = 0; i < s->n_ids; i++)
    sm_free(s->ids[i]);
  sm_free(s->ids);
  sm_free(s->row_state);
  s->ix = NULL;
  s->ids = NULL;
  s->row_state = NULL;
  s->n_ids = 0;
  s->n_bad = 0;
  s->loaded = 0;
}

long long sm_store_skipped(const sm_store *s, const char **first) {
  sm__skips *k = s->ops->skips ? s->ops->skips(s->impl) : NULL;

  if (first)
    *first = k && k->n ? k->first : NULL;
  return k ? k->n : 0;
}

long long sm_store_batch_done(const sm_store *s) {
  return s->ops->batch_done ? s->ops->batch_done(s->impl) : s->batch_puts;
}

sm_store *sm_store_open(const char *uri, int flags, int timeout_ms,
                        sm_err *err) {
  const sm__store_ops *ops;
  void *impl;
  sm_store *s;

  if (uri == NULL || *uri == '\0') {
    sm_err_set(err, SM_EINVAL, "history: empty database URI");
    return NULL;
  }
  if (timeout_ms <= 0)
    timeout_ms = 2000;
  if (sm__str_after(uri, "redis://") != NULL) {
    ops = &sm__redis_ops;
    impl = sm__redis_open(uri, flags, timeout_ms, err);
  } else if (strcmp(uri, "mem:") == 0 || sm__str_after(uri, "mem://") != NULL) {
    ops = &sm__mem_ops;
    impl = sm__mem_open(err);
  } else {
    if (sm__str_after(uri, "sqlite:") != NULL)
      uri = sm__str_after(uri, "sqlite:");
    ops = &sm__sqlite_ops;
    impl = sm__sqlite_open(uri, flags, timeout_ms, err);
  }
  if (impl == NULL)
    return NULL;
  s = sm_calloc(1, sizeof(*s));
  if (s == NULL) {
    ops->close(impl);
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
  s->ops = ops;
  s->impl = impl;
  return s;
}

void sm_store_close(sm_store *s) {
  if (s == NULL)
    return;
  drop_cache(s);
  s->ops->close(s->impl);
  sm_free(s);
}

const char *sm_store_kind(const sm_store *s) {
  return s->ops->kind;
}

int sm_store_put(sm_store *s, const sm_record *r, sm_err *err) {
  int rc;

  if (r->id == NULL || r->id[0] == '\0')
    return sm_err_set(err, SM_EINVAL, "history: a record needs an id");
  /* The API boundary: nothing absurd is ever stored. */
  rc = sm_record_check(r, err);
  if (rc != 0)
    return rc;
  rc = s->ops->put(s->impl, r, err);
  if (rc == 0 && s->batching)
    s->batch_puts++;
  return rc;
}

int sm_store_begin(sm_store *s, sm_err *err) {
  s->batching = 1;
  s->batch_puts = 0;
  return s->ops->begin ? s->ops->begin(s->impl, err) : 0;
}

int sm_store_end(sm_store *s, sm_err *err) {
  s->batching = 0;
  return s->ops->end ? s->ops->end(s->impl, err) : 0;
}

int sm_store_get(sm_store *s, const char *id, sm_record *r, sm_err *err) {
  return s->ops->get(s->impl, id, r, err);
}

int sm_store_each(sm_store *s, int (*fn)(const sm_record *, void *), void *arg,
                  sm_err *err) {
  return s->ops->each(s->impl, fn, arg, err);
}

long long sm_store_count(sm_store *s, sm_err *err) {
  return s->ops->count(s->impl, err);
}

/* Reads the record of a cached row once: a record that cannot be read
 * back marks the row bad (skipped, counted) so that no search returns it.
 * Returns 0 (good or gone), 1 (bad) or a negative code (store failure). */
static int check_row(sm_store *s, size_t row, sm_err *err) {
  sm_record r;
  sm_err e = {0};
  int rc;

  if (s->row_state[row] != ROW_UNCHECKED)
    return s->row_state[row] == ROW_BAD;
  sm_record_init(&r);
  rc = s->ops->get(s->impl, s->ids[row], &r, &e);
  sm_record_release(&r);
  if (rc == 0 || rc == SM_ENOTFOUND) {
    /* Gone meanwhile: the caller's read will say so. */
    s->row_state[row] = ROW_GOOD;
    return 0;
  }
  if (rc == SM_ECORRUPT || rc == SM_EPARSE || rc == SM_ERANGE) {
    sm__skips *k = s->ops->skips ? s->ops->skips(s->impl) : NULL;
    s->row_state[row] = ROW_BAD;
    s->n_bad++;
    if (k)
      sm__skip_note(k, "%s", e.msg);
    return 1;
  }
  return sm_err_set(err, rc, "%s", e.msg);
}

int sm_store_search(sm_store *s, const float *fp, int k, float min_score,
                    sm_store_hit *hits, sm_err *err) {
  uint64_t v;
  int rc, got = 0;

  if (s->ops->search != NULL)
    return s->ops->search(s->impl, fp, k, min_score, hits, err);
  rc = s->ops->version(s->impl, &v, err);
  if (rc != 0)
    return rc;
  if (!s->loaded || v != s->version) {
    drop_cache(s);
    rc = s->ops->load(s->impl, &s->ix, &s->ids, &s->n_ids, err);
    if (rc != 0)
      return rc;
    s->row_state = sm_calloc(s->n_ids ? s->n_ids : 1, 1);
    if (s->row_state == NULL) {
      drop_cache(s);
      return sm_err_set(err, SM_ENOMEM, "history: out of memory");
    }
    s->version = v;
    s->loaded = 1;
  }
  if (k <= 0 || s->n_ids == 0)
    return 0;
  /* Ask for as many more as rows are known bad; a pass that finds a new
   * bad row asks again.  Each pass marks at least one more row or ends. */
  for (;;) {
    size_t want = (size_t)k + s->n_bad;
    size_t bad_before = s->n_bad;
    sm_hit *h;
    int n;

    if (want > s->n_ids)
      want = s->n_ids;
    h = sm_malloc(want * sizeof(*h));
    if (h == NULL)
      return sm_err_set(err, SM_ENOMEM, "history: out of memory");
    n = sm_index_search(s->ix, fp, (int)want, min_score, h);
    if (n < 0) {
      sm_free(h);
      return sm_err_set(err, n, "history: search failed");
    }
    got = 0;
    for (int i = 0; i < n && got < k; i++) {
      size_t row = (size_t)h[i].row;
      rc = check_row(s, row, err);
      if (rc < 0) {
        sm_free(h);
        return rc;
      }
      if (rc == 1)
        continue;
      hits[got].id = s->ids[row];
      hits[got].score = h[i].score;
      got++;
    }
    sm_free(h);
    if (got == k || s->n_bad == bad_before || (size_t)n < want)
      break;
  }
  return got;
}
