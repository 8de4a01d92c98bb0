/* store_mem.c - the in-memory history backend ("mem:"): records in
 * insertion order, an open-addressing id table and a live vector index.
 * Used by the simulator's history engine and by tests; nothing persists. */
#include <string.h>

#include "history/history_int.h"
#include "util/util_int.h"

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
  if (SM__GROW(m->recs, m->n + 1, m->cap) != 0)
    goto oom;
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

const sm__store_ops sm__mem_ops = {
    "mem",      mem_put, mem_get, mem_each,  mem_count, NULL, NULL,
    mem_search, NULL,    NULL,    mem_close, NULL,      NULL};
