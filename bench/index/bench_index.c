/* bench_index.c - exact top-10 search over N x 256 fingerprints: the
 * history index (int8 candidate scan + exact float32 rescoring) next to
 * the reference, OpenBLAS cblas_sgemv over the float32 matrix followed by
 * a top-10 selection, on the same data in the same process.  Checks that
 * both return the same rows.
 *
 *   bench_index N [QUERIES]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "schedmate/sm.h"

#define D 256
#define K 10

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void unit(sm_rng *r, float *v, const float *near, double noise) {
  double ss = 0;
  for (int j = 0; j < D; j++) {
    v[j] = (float)((near ? near[j] : 0) + noise * sm_rng_normal(r));
    ss += (double)v[j] * v[j];
  }
  for (int j = 0; j < D; j++)
    v[j] = (float)(v[j] / sqrt(ss));
}

/* Top-K of scores with the index's order (score desc, row asc). */
static void select_topk(const float *s, size_t n, sm_hit *out) {
  int m = 0;
  for (size_t i = 0; i < n; i++) {
    if (m == K && !(s[i] > out[K - 1].score))
      continue;
    int j = m < K ? m++ : K - 1;
    while (j > 0 && out[j - 1].score < s[i]) {
      out[j] = out[j - 1];
      j--;
    }
    out[j].row = (int64_t)i;
    out[j].score = s[i];
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
  int nq = argc > 2 ? atoi(argv[2]) : 30;
  int nc = 2000;
  sm_rng r;
  float *centres = malloc((size_t)nc * D * sizeof(float));
  float *mat = malloc(n * D * sizeof(float));
  float *scores = malloc(n * sizeof(float));
  float *q = malloc((size_t)nq * D * sizeof(float));
  double *t_ours = malloc((size_t)nq * sizeof(double));
  double *t_ref = malloc((size_t)nq * sizeof(double));
  sm_index *ix = sm_index_new(D);
  int mismatches = 0;

  if (!centres || !mat || !scores || !q || !ix || !t_ours || !t_ref) {
    fprintf(stderr, "bench_index: out of memory\n");
    return 1;
  }
  /* Clustered data, as fingerprints of recurring jobs are. */
  sm_rng_seed(&r, 42);
  for (int c = 0; c < nc; c++)
    unit(&r, centres + (size_t)c * D, NULL, 1.0);
  if (sm_index_reserve(ix, n) != 0)
    return 1;
  for (size_t i = 0; i < n; i++) {
    unit(&r, mat + i * D, centres + (i % (size_t)nc) * D, 0.05);
    sm_index_add(ix, mat + i * D);
  }
  for (int k = 0; k < nq; k++)
    unit(&r, q + (size_t)k * D, centres + (size_t)(k * 7 % nc) * D, 0.08);

  for (int k = 0; k < nq; k++) {
    sm_hit a[K], b[K];
    double t0 = now();
    int na = sm_index_search(ix, q + (size_t)k * D, K, -2.0f, a);
    double t1 = now();
    cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, D, 1.0f, mat, D,
                q + (size_t)k * D, 1, 0.0f, scores, 1);
    select_topk(scores, n, b);
    double t2 = now();
    t_ours[k] = t1 - t0;
    t_ref[k] = t2 - t1;
    /* Equal results: same rows (scores agree to float rounding). */
    for (int i = 0; i < na; i++)
      if (a[i].row != b[i].row && fabsf(a[i].score - b[i].score) > 1e-5f)
        mismatches++;
    if (na != K)
      mismatches++;
  }
  qsort(t_ours, (size_t)nq, sizeof(double), cmp_d);
  qsort(t_ref, (size_t)nq, sizeof(double), cmp_d);
  printf("%zu x %d, top-%d, %d queries: schedmate index %.3f ms, "
         "sgemv+select %.3f ms (median per query), ratio %.2fx, "
         "mismatching results %d\n",
         n, D, K, nq, t_ours[nq / 2] * 1e3, t_ref[nq / 2] * 1e3,
         t_ref[nq / 2] / t_ours[nq / 2], mismatches);
  sm_index_free(ix);
  free(centres);
  free(mat);
  free(scores);
  free(q);
  free(t_ours);
  free(t_ref);
  return mismatches ? 1 : 0;
}
