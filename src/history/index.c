/* index.c - exact top-k cosine search over fingerprints.
 *
 * A flat float32 scan reads 4 bytes per dimension per row; the search is
 * memory-bound long before it is compute-bound.  So every row is also kept
 * as int8 with a per-row scale (a quarter of the bytes).  The int8 scan
 * gives each row an approximate score s~ with a proven bound e on its
 * error (half a quantisation step per component, times the query's L1
 * norm, plus float rounding slack).  Let tau be the k-th largest lower
 * bound s~ - e.  At least k rows score at least tau exactly, so every row
 * of the true top-k has an upper bound s~ + e >= tau: only those
 * candidates are rescored with their float32 rows.  The result is exactly
 * that of a full float32 scan, at a fraction of the memory traffic.  Both
 * selections are partial (binary heaps of size k), never a full sort. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#include "history/history_int.h"
#include "schedmate/sm_history.h"

struct sm_index {
  uint32_t dims; /* floats per row */
  size_t n;      /* rows */
  size_t cap;    /* rows allocated */
  float *f32;    /* n x dims exact rows */
  int8_t *i8;    /* n x dims quantised rows */
  float *scale;  /* n per-row scales (value = scale * int8) */
};

/* Slack for float rounding in 256-term sums of values below 1. */
#define ROUNDING_SLACK 1e-4f

/* ==== Kernels ==== */

static float dot_f32_scalar(const float *a, const float *b, uint32_t d) {
  float s[8] = {0};
  uint32_t j = 0;

  for (; j + 8 <= d; j += 8)
    for (int l = 0; l < 8; l++)
      s[l] += a[j + l] * b[j + l];
  for (; j < d; j++)
    s[0] += a[j] * b[j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

static float dot_i8_scalar(const float *q, const int8_t *r, uint32_t d) {
  float s[8] = {0};
  uint32_t j = 0;

  for (; j + 8 <= d; j += 8)
    for (int l = 0; l < 8; l++)
      s[l] += q[j + l] * (float)r[j + l];
  for (; j < d; j++)
    s[0] += q[j] * (float)r[j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#ifdef HAVE_X86
__attribute__((target("avx2,fma"))) static float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) static float
dot_f32_avx2(const float *a, const float *b, uint32_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  uint32_t j = 0;
  float tail = 0;

  for (; j + 16 <= d; j += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j), _mm256_loadu_ps(b + j), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + j + 8), _mm256_loadu_ps(b + j + 8),
                         s1);
  }
  for (; j < d; j++)
    tail += a[j] * b[j];
  return hsum256(_mm256_add_ps(s0, s1)) + tail;
}

__attribute__((target("avx2,fma"))) static float
dot_i8_avx2(const float *q, const int8_t *r, uint32_t d) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  uint32_t j = 0;
  float tail = 0;

  for (; j + 16 <= d; j += 16) {
    __m128i b = _mm_loadu_si128((const __m128i *)(r + j));
    __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
    s0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(q + j), s0);
    s1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(q + j + 8), s1);
  }
  for (; j < d; j++)
    tail += q[j] * (float)r[j];
  return hsum256(_mm256_add_ps(s0, s1)) + tail;
}
#endif

typedef float (*dot_f32_fn)(const float *, const float *, uint32_t);
typedef float (*dot_i8_fn)(const float *, const int8_t *, uint32_t);

static dot_f32_fn pick_f32(void) {
#ifdef HAVE_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return dot_f32_avx2;
#endif
  return dot_f32_scalar;
}

static dot_i8_fn pick_i8(void) {
#ifdef HAVE_X86
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return dot_i8_avx2;
#endif
  return dot_i8_scalar;
}

/* ==== Top-k heap (min-heap on score, then max on row for ties) ==== */

/* a is "worse" than b: lower score, or equal score and a later row. */
static int worse(const sm_hit *a, const sm_hit *b) {
  return a->score < b->score || (a->score == b->score && a->row > b->row);
}

static void sift_down(sm_hit *h, int n, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && worse(&h[l], &h[m]))
      m = l;
    if (r < n && worse(&h[r], &h[m]))
      m = r;
    if (m == i)
      return;
    sm_hit t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void sift_up(sm_hit *h, int i) {
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!worse(&h[i], &h[p]))
      return;
    sm_hit t = h[i];
    h[i] = h[p];
    h[p] = t;
    i = p;
  }
}

/* Offers a hit to a heap of at most k; returns the new size. */
static int heap_offer(sm_hit *h, int n, int k, int64_t row, float score) {
  sm_hit x = {row, score};

  if (n < k) {
    h[n] = x;
    sift_up(h, n);
    return n + 1;
  }
  if (worse(&h[0], &x)) {
    h[0] = x;
    sift_down(h, n, 0);
  }
  return n;
}

/* Sorts a heap's hits best first (k is small). */
static void heap_sort_desc(sm_hit *h, int n) {
  for (int i = 1; i < n; i++) {
    sm_hit x = h[i];
    int j = i - 1;
    while (j >= 0 && worse(&h[j], &x)) {
      h[j + 1] = h[j];
      j--;
    }
    h[j + 1] = x;
  }
}

/* ==== Index ==== */

sm_index *sm_index_new(uint32_t dims) {
  sm_index *ix;

  if (dims == 0)
    return NULL;
  ix = sm_calloc(1, sizeof(*ix));
  if (ix != NULL)
    ix->dims = dims;
  return ix;
}

void sm_index_free(sm_index *ix) {
  if (ix == NULL)
    return;
  sm_free(ix->f32);
  sm_free(ix->i8);
  sm_free(ix->scale);
  sm_free(ix);
}

int sm_index_reserve(sm_index *ix, size_t n) {
  float *f, *s;
  int8_t *q;

  if (n <= ix->cap)
    return 0;
  if (n > SIZE_MAX / ix->dims / sizeof(float))
    return SM_ENOMEM;
  f = sm_realloc(ix->f32, n * ix->dims * sizeof(float));
  if (f == NULL)
    return SM_ENOMEM;
  ix->f32 = f;
  q = sm_realloc(ix->i8, n * ix->dims);
  if (q == NULL)
    return SM_ENOMEM;
  ix->i8 = q;
  s = sm_realloc(ix->scale, n * sizeof(float));
  if (s == NULL)
    return SM_ENOMEM;
  ix->scale = s;
  ix->cap = n;
  return 0;
}

int sm_index_add(sm_index *ix, const float *vec) {
  uint32_t d = ix->dims;
  float mx = 0, scale, inv;
  float *dst;
  int8_t *q;

  if (ix->n == ix->cap) {
    int rc = sm_index_reserve(ix, ix->cap ? ix->cap * 2 : 64);
    if (rc != 0)
      return rc;
  }
  dst = ix->f32 + ix->n * d;
  q = ix->i8 + ix->n * d;
  for (uint32_t j = 0; j < d; j++) {
    float v = isfinite(vec[j]) ? vec[j] : 0.0f;
    dst[j] = v;
    if (fabsf(v) > mx)
      mx = fabsf(v);
  }
  scale = mx > 0 ? mx / 127.0f : 1.0f;
  inv = 1.0f / scale;
  for (uint32_t j = 0; j < d; j++) {
    float r = nearbyintf(dst[j] * inv);
    q[j] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
  }
  ix->scale[ix->n] = scale;
  ix->n++;
  return 0;
}

size_t sm_index_size(const sm_index *ix) {
  return ix->n;
}

const float *sm_index_row(const sm_index *ix, size_t row) {
  return row < ix->n ? ix->f32 + row * ix->dims : NULL;
}

int sm_index_search_flat(const sm_index *ix, const float *q, int k,
                         float min_score, sm_hit *hits) {
  dot_f32_fn dot = pick_f32();
  int n = 0;

  if (k <= 0)
    return 0;
  for (size_t i = 0; i < ix->n; i++) {
    float s = dot(q, ix->f32 + i * ix->dims, ix->dims);
    if (s >= min_score)
      n = heap_offer(hits, n, k, (int64_t)i, s);
  }
  heap_sort_desc(hits, n);
  return n;
}

int sm_index_search(const sm_index *ix, const float *q, int k, float min_score,
                    sm_hit *hits) {
  dot_f32_fn dotf = pick_f32();
  dot_i8_fn doti = pick_i8();
  uint32_t d = ix->dims;
  float qn1 = 0, tau;
  float *approx;
  sm_hit *lb;
  int nlb = 0, n = 0;

  if (k <= 0 || ix->n == 0)
    return 0;
  for (uint32_t j = 0; j < d; j++)
    qn1 += fabsf(q[j]);
  approx = sm_malloc(ix->n * sizeof(float));
  lb = sm_malloc((size_t)k * sizeof(sm_hit));
  if (approx == NULL || lb == NULL) {
    sm_free(approx);
    sm_free(lb);
    return SM_ENOMEM;
  }
  /* Pass 1: approximate scores from the int8 rows; keep the k best lower
   * bounds. */
  for (size_t i = 0; i < ix->n; i++) {
    float sc = ix->scale[i];
    float a = sc * doti(q, ix->i8 + i * d, d);
    float e = 0.5f * sc * qn1 + ROUNDING_SLACK;
    approx[i] = a;
    if (a + e >= min_score)
      nlb = heap_offer(lb, nlb, k, (int64_t)i, a - e);
  }
  tau = nlb == k ? lb[0].score : -INFINITY;
  if (tau < min_score)
    tau = min_score;
  /* Pass 2: rescore the candidates exactly. */
  for (size_t i = 0; i < ix->n; i++) {
    float e = 0.5f * ix->scale[i] * qn1 + ROUNDING_SLACK;
    if (approx[i] + e >= tau) {
      float s = dotf(q, ix->f32 + i * d, d);
      if (s >= min_score)
        n = heap_offer(hits, n, k, (int64_t)i, s);
    }
  }
  sm_free(approx);
  sm_free(lb);
  heap_sort_desc(hits, n);
  return n;
}

void sm__index_set(sm_index *ix, size_t row, const float *vec) {
  size_t n = ix->n;

  /* Re-add at the end, then move the new row into place. */
  if (row >= n || sm_index_add(ix, vec) != 0)
    return;
  memcpy(ix->f32 + row * ix->dims, ix->f32 + n * ix->dims,
         ix->dims * sizeof(float));
  memcpy(ix->i8 + row * ix->dims, ix->i8 + n * ix->dims, ix->dims);
  ix->scale[row] = ix->scale[n];
  ix->n = n;
}
