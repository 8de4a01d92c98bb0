/* misc.c - hashing, a seeded PRNG, clocks, number parsing and medians. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedmate/sm_util.h"

/* ==== Hashing ==== */

#define K1 0x9e3779b97f4a7c15ULL
#define K2 0xbf58476d1ce4e5b9ULL
#define K3 0x94d049bb133111ebULL

uint64_t sm_hash_mix(uint64_t x) {
  x ^= x >> 30;
  x *= K2;
  x ^= x >> 27;
  x *= K3;
  x ^= x >> 31;
  return x;
}

static uint64_t load64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* Eight bytes at a time: each word is multiplied into the state and
 * rotated; the tail is folded in as one zero-padded word; a final mix
 * spreads every input bit over the output. */
uint64_t sm_hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = seed ^ (n * K1);
  size_t i;

  for (i = 0; i + 8 <= n; i += 8) {
    uint64_t k = load64(p + i) * K2;
    k = (k << 31) | (k >> 33);
    h = (h ^ k) * K1;
    h = (h << 27) | (h >> 37);
  }
  if (i < n) {
    uint64_t k = 0;
    memcpy(&k, p + i, n - i);
    h ^= sm_hash_mix(k + K3);
  }
  return sm_hash_mix(h);
}

/* ==== PRNG (xoshiro256** seeded with splitmix64) ==== */

void sm_rng_seed(sm_rng *r, uint64_t seed) {
  int i;

  for (i = 0; i < 4; i++) {
    seed += K1;
    r->s[i] = sm_hash_mix(seed);
  }
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t sm_rng_next(sm_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

double sm_rng_uniform(sm_rng *r) {
  return (double)(sm_rng_next(r) >> 11) * 0x1.0p-53;
}

double sm_rng_normal(sm_rng *r) {
  double u1, u2;

  do
    u1 = sm_rng_uniform(r);
  while (u1 <= 0.0);
  u2 = sm_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ==== Misc ==== */

double sm_now(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sm_parse_double(const char *s, double *out) {
  char *end;
  double v;

  if (s == NULL || *s == '\0')
    return SM_EPARSE;
  errno = 0;
  v = strtod(s, &end);
  while (*end == ' ' || *end == '\t')
    end++;
  if (*end != '\0' || errno == ERANGE || !isfinite(v))
    return SM_EPARSE;
  *out = v;
  return 0;
}

int sm_parse_i64(const char *s, long long *out) {
  char *end;
  long long v;

  if (s == NULL || *s == '\0')
    return SM_EPARSE;
  errno = 0;
  v = strtoll(s, &end, 10);
  while (*end == ' ' || *end == '\t')
    end++;
  if (*end != '\0' || errno == ERANGE)
    return SM_EPARSE;
  *out = v;
  return 0;
}

static void swap_d(double *a, double *b) {
  double t = *a;
  *a = *b;
  *b = t;
}

/* Hoare-style selection of the k-th smallest (expected linear time). */
static double select_k(double *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;

  while (lo < hi) {
    double pivot = v[lo + (hi - lo) / 2];
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i <= j) {
        swap_d(&v[i], &v[j]);
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      break;
  }
  return v[k];
}

double sm_median(double *v, size_t n) {
  double a, b;
  size_t i;

  if (n == 0)
    return NAN;
  a = select_k(v, n, n / 2);
  if (n % 2)
    return a;
  /* The lower middle is the largest value left of n/2 after selection. */
  b = v[0];
  for (i = 1; i < n / 2; i++)
    if (v[i] > b)
      b = v[i];
  return (a + b) / 2.0;
}
