/* bench_match.c - matching on a large history: sm_advise over a "mem:"
 * store (the int8 index, a top-k that widens past vetoed candidates, the
 * identity check on the candidates it reads) next to the reference, which
 * ranks every record by a flat float32 scan and checks the identity of
 * every record above the threshold.  Both must return the same matches;
 * the median time per query of each and their ratio are printed.
 *
 *   bench_match RECORDS.jsonl [QUERIES]
 *
 * Queries are records of the history as they are, with another iteration
 * unit (every look-alike is vetoed), and with a slightly different
 * learning rate (a near-duplicate that must still match). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedmate/sm.h"

#define TOPK 5
#define THR 0.95f

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The reference answer: ids of the matches, or the fallback. */
typedef struct ref {
  size_t rows[TOPK];
  int n;
  int too_little;
} ref;

static void reference(const sm_index *ix, const sm_record *recs, size_t n,
                      const sm_meta *q, sm_hit *all, ref *out) {
  float fp[SM_FP_DIMS];
  int m;

  memset(out, 0, sizeof(*out));
  if (!sm_identity_enough(sm_identity_known(q, NULL))) {
    out->too_little = 1;
    return;
  }
  sm_fingerprint(q, NULL, fp);
  m = sm_index_search_flat(ix, fp, (int)n, THR, all);
  for (int i = 0; i < m && out->n < TOPK; i++) {
    const sm_record *r = &recs[all[i].row];
    sm_fp_extra x = {r->user, r->name, r->vc};
    if (sm_identity_compare(q, NULL, &r->meta, &x, NULL))
      out->rows[out->n++] = (size_t)all[i].row;
  }
}

int main(int argc, char **argv) {
  int nq = argc > 2 ? atoi(argv[2]) : 30;
  FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
  sm_record *recs = NULL;
  size_t n = 0, cap = 0;
  char *line = NULL;
  size_t lcap = 0;
  ssize_t len;
  sm_err err = {0};
  sm_store *s;
  sm_index *ix;
  sm_hit *all;
  double *ta, *tr;
  int mism = 0, matched = 0, vetoed = 0;

  if (f == NULL || nq <= 0) {
    fprintf(stderr, "usage: bench_match RECORDS.jsonl [QUERIES]\n");
    return 2;
  }
  s = sm_store_open("mem:", SM_STORE_CREATE, 0, &err);
  ix = sm_index_new(SM_FP_DIMS);
  while ((len = getline(&line, &lcap, f)) > 0) {
    if (n == cap) {
      sm_record *nr = realloc(recs, (cap ? cap * 2 : 1024) * sizeof(*recs));
      if (nr == NULL) {
        fprintf(stderr, "bench_match: out of memory\n");
        return 2;
      }
      recs = nr;
      cap = cap ? cap * 2 : 1024;
    }
    sm_record_init(&recs[n]);
    if (sm_record_from_json(&recs[n], line, (size_t)len, &err) != 0) {
      fprintf(stderr, "bench_match: %s:%zu: %s\n", argv[1], n + 1, err.msg);
      return 2;
    }
    sm_store_put(s, &recs[n], &err);
    sm_index_add(ix, recs[n].fp);
    n++;
  }
  fclose(f);
  free(line);
  all = malloc((n ? n : 1) * sizeof(*all));
  ta = malloc((size_t)nq * sizeof(double));
  tr = malloc((size_t)nq * sizeof(double));
  if (n == 0 || all == NULL || ta == NULL || tr == NULL) {
    fprintf(stderr, "bench_match: %s: no records, or out of memory\n", argv[1]);
    return 2;
  }
  for (int k = 0; k < nq; k++) {
    sm_meta q;
    sm_advice a;
    ref r;
    double t0, t1, t2;
    sm_meta_init(&q);
    sm_meta_copy(&q, &recs[((size_t)k * 3331 + 77) % n].meta);
    if (k % 3 == 1)
      sm_meta_set_str(&q, SM_META_ITERATION_TYPE, "epochs", NULL);
    else if (k % 3 == 2 && q.f[SM_META_LR].known)
      sm_meta_set_num(&q, SM_META_LR, q.f[SM_META_LR].num * 1.02, NULL);
    sm_advice_init(&a);
    t0 = now();
    sm_advise(s, &q, NULL, NULL, &a, &err);
    t1 = now();
    reference(ix, recs, n, &q, all, &r);
    t2 = now();
    ta[k] = t1 - t0;
    tr[k] = t2 - t1;
    if (r.too_little != (a.fallback == SM_FALLBACK_TOO_LITTLE_KNOWN) ||
        r.n != a.n_matches) {
      mism++;
    } else {
      for (int i = 0; i < r.n; i++)
        if (strcmp(recs[r.rows[i]].id, a.matches[i].id) != 0)
          mism++;
    }
    matched += a.n_matches > 0;
    vetoed += a.n_different;
    sm_advice_release(&a);
    sm_meta_release(&q);
  }
  qsort(ta, (size_t)nq, sizeof(double), cmp_d);
  qsort(tr, (size_t)nq, sizeof(double), cmp_d);
  printf("%zu records, %d queries (%d with matches, %d look-alikes vetoed): "
         "advise median %.2f ms, reference (flat scan, identity of every "
         "record above the threshold) %.2f ms: %.1fx; answers %s\n",
         n, nq, matched, vetoed, ta[nq / 2] * 1e3, tr[nq / 2] * 1e3,
         tr[nq / 2] / ta[nq / 2], mism ? "DIFFER" : "equal");
  for (size_t i = 0; i < n; i++)
    sm_record_release(&recs[i]);
  free(recs);
  free(all);
  free(ta);
  free(tr);
  sm_index_free(ix);
  sm_store_close(s);
  return mism ? 1 : 0;
}
