/* store.c - the history store front end: URI dispatch, the cached search
 * shared by the persistent backends, fingerprint packing, and the
 * in-memory backend used by the simulator and tests. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store_impl.h"

/* What a search knows of a cached row's record. */
enum { ROW_UNCHECKED = 0, ROW_GOOD, ROW_BAD };

struct sm_store {
  const store_ops *ops;     /* backend */
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

/* ==== Skipped records ==== */

void sm__skip_note(sm__skips *k, const char *fmt, ...) {
  if (k->n++ == 0) {
    /* Through sm_err_set, so that a long message keeps its problem. */
    sm_err e = {0};
    char tmp[SM_ERR_MSG_SIZE * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    sm_err_set(&e, SM_ECORRUPT, "%s", tmp);
    memcpy(k->first, e.msg, sizeof(k->first));
  }
}

void sm__skip_reset(sm__skips *k) {
  k->n = 0;
  k->first[0] = '\0';
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
  const store_ops *ops;
  void *impl;
  sm_store *s;

  if (uri == NULL || *uri == '\0') {
    sm_err_set(err, SM_EINVAL, "history: empty database URI");
    return NULL;
  }
  if (timeout_ms <= 0)
    timeout_ms = 2000;
  if (strncmp(uri, "redis://", 8) == 0) {
    ops = &sm__redis_ops;
    impl = sm__redis_open(uri, flags, timeout_ms, err);
  } else if (strcmp(uri, "mem:") == 0 || strncmp(uri, "mem://", 6) == 0) {
    ops = &sm__mem_ops;
    impl = sm__mem_open(err);
  } else {
    if (strncmp(uri, "sqlite:", 7) == 0)
      uri += 7;
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

/* ==== Fingerprint blobs ==== */

void sm__fp_pack(const float *fp, unsigned char *out) {
  out[0] = SM_FP_VERSION;
  for (int i = 0; i < SM_FP_DIMS; i++) {
    uint32_t u;
    memcpy(&u, &fp[i], 4);
    out[1 + 4 * i] = (unsigned char)u;
    out[2 + 4 * i] = (unsigned char)(u >> 8);
    out[3 + 4 * i] = (unsigned char)(u >> 16);
    out[4 + 4 * i] = (unsigned char)(u >> 24);
  }
}

int sm__fp_unpack(const unsigned char *in, size_t n, float *fp) {
  if (n != SM__FP_BLOB_LEN || in[0] != SM_FP_VERSION)
    return SM_ECORRUPT;
  for (int i = 0; i < SM_FP_DIMS; i++) {
    uint32_t u = (uint32_t)in[1 + 4 * i] | (uint32_t)in[2 + 4 * i] << 8 |
                 (uint32_t)in[3 + 4 * i] << 16 | (uint32_t)in[4 + 4 * i] << 24;
    memcpy(&fp[i], &u, 4);
    if (!isfinite(fp[i]))
      return SM_ECORRUPT;
  }
  return 0;
}

char *sm__record_json(const sm_record *r) {
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_record_write_json(r, &w);
  if (sm_jw_finish(&w) != 0) {
    sm_buf_release(&b);
    return NULL;
  }
  return sm_buf_take(&b);
}

/* ==== In-memory backend ==== */

typedef struct mem_store {
  sm_record *recs; /* records in insertion order */
  size_t n, cap;   /* used / allocated */
  sm_index *ix;    /* live index, row i = recs[i] */
  size_t *slots;   /* id hash table: 0 empty, else row + 1 */
  size_t nslots;   /* power of two */
} mem_store;

static size_t mem_find(const mem_store *m, const char *id, size_t *slot) {
  size_t mask = m->nslots - 1;
  size_t i = sm_hash64(id, strlen(id), 7) & mask;

  for (;; i = (i + 1) & mask) {
    size_t v = m->slots[i];
    if (v == 0 || strcmp(m->recs[v - 1].id, id) == 0) {
      *slot = i;
      return v;
    }
  }
}

static int mem_grow_slots(mem_store *m) {
  size_t ns = m->nslots * 2;
  size_t *old = m->slots, oldn = m->nslots;
  size_t *nsl = sm_calloc(ns, sizeof(size_t));

  if (nsl == NULL)
    return SM_ENOMEM;
  m->slots = nsl;
  m->nslots = ns;
  for (size_t i = 0; i < oldn; i++)
    if (old[i]) {
      size_t slot;
      mem_find(m, m->recs[old[i] - 1].id, &slot);
      m->slots[slot] = old[i];
    }
  sm_free(old);
  return 0;
}

void *sm__mem_open(sm_err *err) {
  mem_store *m = sm_calloc(1, sizeof(*m));

  if (m != NULL) {
    m->ix = sm_index_new(SM_FP_DIMS);
    m->nslots = 64;
    m->slots = sm_calloc(m->nslots, sizeof(size_t));
  }
  if (m == NULL || m->ix == NULL || m->slots == NULL) {
    if (m) {
      sm_index_free(m->ix);
      sm_free(m->slots);
      sm_free(m);
    }
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
  return m;
}

static int mem_put(void *impl, const sm_record *r, sm_err *err) {
  mem_store *m = impl;
  size_t slot, v;
  sm_record copy;

  sm_record_init(&copy);
  if (sm__record_copy(&copy, r) != 0)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  v = mem_find(m, r->id, &slot);
  if (v != 0) {
    sm_record_release(&m->recs[v - 1]);
    m->recs[v - 1] = copy;
    sm__index_set(m->ix, v - 1, copy.fp);
    return 0;
  }
  if ((m->n + 1) * 2 > m->nslots) {
    if (mem_grow_slots(m) != 0)
      goto oom;
    mem_find(m, r->id, &slot);
  }
  if (m->n == m->cap) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    sm_record *nr = sm_realloc(m->recs, nc * sizeof(*nr));
    if (nr == NULL)
      goto oom;
    m->recs = nr;
    m->cap = nc;
  }
  if (sm_index_add(m->ix, copy.fp) != 0)
    goto oom;
  m->recs[m->n++] = copy;
  m->slots[slot] = m->n;
  return 0;
oom:
  sm_record_release(&copy);
  return sm_err_set(err, SM_ENOMEM, "history: out of memory");
}

static int mem_get(void *impl, const char *id, sm_record *r, sm_err *err) {
  mem_store *m = impl;
  size_t slot, v = mem_find(m, id, &slot);

  if (v == 0)
    return sm_err_set(err, SM_ENOTFOUND, "history: no job '%s'", id);
  sm_record_release(r);
  if (sm__record_copy(r, &m->recs[v - 1]) != 0)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  return 0;
}

static int mem_each(void *impl, int (*fn)(const sm_record *, void *), void *arg,
                    sm_err *err) {
  mem_store *m = impl;
  (void)err;
  for (size_t i = 0; i < m->n; i++)
    if (fn(&m->recs[i], arg) != 0)
      break;
  return 0;
}

static long long mem_count(void *impl, sm_err *err) {
  (void)err;
  return (long long)((mem_store *)impl)->n;
}

static int mem_search(void *impl, const float *fp, int k, float min_score,
                      sm_store_hit *hits, sm_err *err) {
  mem_store *m = impl;
  sm_hit *h;
  int n;

  if (k <= 0 || m->n == 0)
    return 0;
  h = sm_malloc((size_t)k * sizeof(*h));
  if (h == NULL)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  n = sm_index_search(m->ix, fp, k, min_score, h);
  for (int i = 0; i < n; i++) {
    hits[i].id = m->recs[h[i].row].id;
    hits[i].score = h[i].score;
  }
  sm_free(h);
  return n;
}

static void mem_close(void *impl) {
  mem_store *m = impl;
  for (size_t i = 0; i < m->n; i++)
    sm_record_release(&m->recs[i]);
  sm_free(m->recs);
  sm_free(m->slots);
  sm_index_free(m->ix);
  sm_free(m);
}

const store_ops sm__mem_ops = {
    "mem",      mem_put, mem_get, mem_each,  mem_count, NULL, NULL,
    mem_search, NULL,    NULL,    mem_close, NULL,      NULL};
