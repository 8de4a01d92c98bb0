/* scan.c - the service's exact pre-search: answers sm_advise's question
 * from a handful of records instead of a scan of every fingerprint.
 *
 * A request's advice is sm_advise over the in-memory store (the matching
 * rule lives there and only there).  Its cost is the store's search: a
 * pass over every row of the index, about 1.5 ms on 100,000 rows.  But
 * sm_advise only ever looks at the top of the ranking: the best score,
 * then the candidates in rank order until top_k of them matched, a score
 * fell below the threshold or the candidates ran out.  So this file
 * keeps a second, cheaper view of the same rows and, per request:
 *
 *   1. finds a superset C of the m best rows of the whole history F (by
 *      the exact score the store's search computes, ties by row), from
 *      bounds rather than exact scores;
 *   2. copies those records, in F's order, into a small "mem:" store S
 *      and runs the very same sm_advise on S;
 *   3. accepts S's answer only when it provably equals F's: the walk over
 *      S never left the first m ranks, which are F's first m ranks.  That
 *      is the case when top_k matches were found among them, when they
 *      hold a score below the threshold (the walk stops there), or when S
 *      is all of F.  Otherwise m grows eightfold and it tries again, and
 *      past a cap the caller runs sm_advise over F as before.
 *
 * The acceptance rule does not depend on how many candidates sm_advise
 * asks for per search: whatever its searches, every rank it visits below
 * m is the same row with the same score in S and F, and the scores are
 * computed by the same kernel on the same float32 vectors (copied as
 * they are), so they are bit for bit those of F's search.
 *
 * The view.  Recurring jobs have identical metadata and so identical
 * fingerprints; rows with bitwise identical vectors score identically
 * against any query, and among themselves rank by row.  Rows are grouped
 * by vector (a 64-bit hash of the bits, confirmed against the group's
 * record), each group keeps its rows in order, and the m best rows can
 * only be the first m rows of some groups.  Each group's vector is kept
 * as int8 with a per-group scale; the query as int16.  The integer dot
 * product is exact, and
 *
 *   q.r = sq sr (q16.r8) + sr (eq.r8) + q.dr     (eq, dr: the roundings)
 *
 * gives every group a bound E = |q| |dr| + sr |eq| |r8| plus slack for the
 * float rounding of the store's own kernel (4e-5 |q| |r|, above what any
 * summation order of 256 float products can lose).
 * With L = a - E and U = a + E around the approximate score a, tau = the
 * m-th largest L (a group counted min(rows, m) times) is at most the m-th
 * best exact score, so every row of rank < m lies in a group with
 * U >= tau, among its first m rows.
 *
 * Threads: the view is read under the history's read lock and changed
 * under its write lock (hist.c), like the store it mirrors. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#include "serve/serve_int.h"

#define DIMS SM_FP_DIMS
/* The store kernel's float rounding: a float32 dot product of 256 terms,
 * summed in any order, is within 256 x 2^-24 (1.5e-5) of |q| |r|. */
#define SLACK_REL 4e-5f
#define SLACK_ABS 1e-6f
/* Largest small store tried; past it sm_advise runs over the history
 * (copying more records than this costs about what the full search does). */
#define MAX_ROWS 1024

typedef struct group {
  uint64_t h;     /* hash of the vector's bits */
  uint32_t *rows; /* its rows, ascending (count in sv_scan.gn) */
  uint32_t cap;   /* allocated */
} group;

/* Groups are stored by blocks of BLK, dimension-major inside a block (the
 * BLK int8 values of one dimension are contiguous), so that a query with
 * few nonzero coordinates (a fingerprint has about 20 of 256) reads only
 * those runs, and a block's sums stay in the first-level cache. */
#define BLK 2048

struct sv_scan {
  /* Rows, in the store's insertion order. */
  char **ids;    /* row -> job id (owned) */
  uint32_t *grp; /* row -> group */
  size_t n, cap; /* rows, allocated */
  size_t *slots; /* id -> row + 1 (open addressing) */
  size_t nslots; /* power of two */
  /* Groups (a group with n == 0 is dead). */
  group *g;
  uint32_t *gn;     /* rows per group */
  float *scale;     /* value = scale * int8 */
  float *dr;        /* |r - scale r8|_2, rounded up */
  float *r8n;       /* |r8|_2 */
  float *rn;        /* |r|_2 */
  int8_t *cols;     /* blocks: [block][dimension][BLK] */
  size_t ng, gcap;  /* groups, allocated (a multiple of BLK) */
  uint32_t *gslots; /* vector hash -> group + 1 */
  size_t ngslots;   /* power of two */
  size_t live;      /* groups with rows */
};

/* ==== Integer kernels (exact, so any of them gives the same bounds) ====
 *
 * A query is a list of pairs of its nonzero int16 coordinates; a block's
 * dot products are acc[i] = sum over pairs of w1 c1[i] + w2 c2[i].  At
 * most 256 x 32767 x 127 < 2^31: no overflow. */

typedef struct qpair {
  int j1, j2;     /* dimensions */
  int32_t w1, w2; /* their int16 weights (w2 = 0 for a lone last one) */
} qpair;

static void block_scalar(const int8_t *blk, const qpair *p, int np,
                         int32_t *acc) {
  for (int i = 0; i < BLK; i++)
    acc[i] = 0;
  for (int k = 0; k < np; k++) {
    const int8_t *c1 = blk + p[k].j1 * BLK, *c2 = blk + p[k].j2 * BLK;
    for (int i = 0; i < BLK; i++)
      acc[i] += p[k].w1 * c1[i] + p[k].w2 * c2[i];
  }
}

#ifdef HAVE_X86
__attribute__((target("avx2"))) static void
block_avx2(const int8_t *blk, const qpair *p, int np, int32_t *acc) {
  memset(acc, 0, BLK * sizeof(*acc));
  for (int k = 0; k < np; k++) {
    const int8_t *c1 = blk + p[k].j1 * BLK, *c2 = blk + p[k].j2 * BLK;
    /* madd multiplies the even int16 by w1 and the odd by w2. */
    __m256i w = _mm256_set1_epi32(
        (int)(((uint32_t)(uint16_t)p[k].w2 << 16) | (uint16_t)p[k].w1));
    for (int i = 0; i < BLK; i += 16) {
      __m256i x =
          _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(c1 + i)));
      __m256i y =
          _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(c2 + i)));
      __m256i *a = (__m256i *)(acc + i);
      /* Per 128-bit lane: sums of (0..3 | 8..11) and (4..7 | 12..15);
       * put in order after the last pair. */
      _mm256_storeu_si256(
          a,
          _mm256_add_epi32(_mm256_loadu_si256(a),
                           _mm256_madd_epi16(_mm256_unpacklo_epi16(x, y), w)));
      _mm256_storeu_si256(
          a + 1,
          _mm256_add_epi32(_mm256_loadu_si256(a + 1),
                           _mm256_madd_epi16(_mm256_unpackhi_epi16(x, y), w)));
    }
  }
  for (int i = 0; i < BLK; i += 16) {
    __m256i *a = (__m256i *)(acc + i);
    __m256i lo = _mm256_loadu_si256(a), hi = _mm256_loadu_si256(a + 1);
    _mm256_storeu_si256(a, _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(a + 1, _mm256_permute2x128_si256(lo, hi, 0x31));
  }
}
#endif

typedef void (*block_fn)(const int8_t *, const qpair *, int, int32_t *);

static block_fn pick_block(void) {
#ifdef HAVE_X86
  if (__builtin_cpu_supports("avx2"))
    return block_avx2;
#endif
  return block_scalar;
}

/* ==== The view ==== */

sv_scan *sv__scan_new(void) {
  sv_scan *s = sm_calloc(1, sizeof(*s));

  if (s == NULL)
    return NULL;
  s->nslots = 64;
  s->slots = sm_calloc(s->nslots, sizeof(*s->slots));
  s->ngslots = 64;
  s->gslots = sm_calloc(s->ngslots, sizeof(*s->gslots));
  if (s->slots == NULL || s->gslots == NULL) {
    sv__scan_free(s);
    return NULL;
  }
  return s;
}

void sv__scan_free(sv_scan *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < s->n; i++)
    sm_free(s->ids[i]);
  for (size_t i = 0; i < s->ng; i++)
    sm_free(s->g[i].rows);
  sm_free(s->ids);
  sm_free(s->grp);
  sm_free(s->slots);
  sm_free(s->g);
  sm_free(s->gn);
  sm_free(s->scale);
  sm_free(s->dr);
  sm_free(s->r8n);
  sm_free(s->rn);
  sm_free(s->cols);
  sm_free(s->gslots);
  sm_free(s);
}

size_t sv__scan_rows(const sv_scan *s) {
  return s->n;
}

size_t sv__scan_groups(const sv_scan *s) {
  return s->live;
}

/* The vector as the store's index keeps it: non-finite values are 0. */
static void sanitize(const float *in, float *out) {
  for (int j = 0; j < DIMS; j++)
    out[j] = isfinite(in[j]) ? in[j] : 0.0f;
}

static uint64_t vec_hash(const float *v) {
  return sm_hash64(v, DIMS * sizeof(float), 0x5ca9) | 1;
}

/* id -> row + 1, or 0; *slot is where it is or would go. */
static size_t id_find(const sv_scan *s, const char *id, size_t *slot) {
  size_t mask = s->nslots - 1;
  size_t i = sm_hash64(id, strlen(id), 11) & mask;

  for (;; i = (i + 1) & mask) {
    size_t v = s->slots[i];
    if (v == 0 || strcmp(s->ids[v - 1], id) == 0) {
      *slot = i;
      return v;
    }
  }
}

static int id_grow(sv_scan *s) {
  size_t ns = s->nslots * 2, *old = s->slots, on = s->nslots;
  size_t *nsl = sm_calloc(ns, sizeof(*nsl));

  if (nsl == NULL)
    return SM_ENOMEM;
  s->slots = nsl;
  s->nslots = ns;
  for (size_t i = 0; i < on; i++)
    if (old[i]) {
      size_t slot;
      id_find(s, s->ids[old[i] - 1], &slot);
      s->slots[slot] = old[i];
    }
  sm_free(old);
  return 0;
}

static int gslot_grow(sv_scan *s) {
  size_t ns = s->ngslots * 2, mask = ns - 1;
  uint32_t *nsl = sm_calloc(ns, sizeof(*nsl));

  if (nsl == NULL)
    return SM_ENOMEM;
  for (size_t i = 0; i < s->ngslots; i++) {
    uint32_t v = s->gslots[i];
    size_t k;
    if (v == 0)
      continue;
    for (k = s->g[v - 1].h & mask; nsl[k]; k = (k + 1) & mask)
      ;
    nsl[k] = v;
  }
  sm_free(s->gslots);
  s->gslots = nsl;
  s->ngslots = ns;
  return 0;
}

/* 1 when the live group gi holds vector v, checked on the record in mem
 * of one of its rows other than skip (the hash only proposes; skip is a
 * row being replaced, whose record in mem is already the new one). */
static int group_holds(const sv_scan *s, sm_store *mem, uint32_t gi,
                       const float *v, uint32_t skip) {
  const group *g = &s->g[gi];
  sm_record r;
  float w[DIMS];
  uint32_t row;
  int same;

  if (s->gn[gi] == 0 || (s->gn[gi] == 1 && g->rows[0] == skip))
    return 0;
  row = g->rows[0] != skip ? g->rows[0] : g->rows[1];
  sm_record_init(&r);
  if (sm_store_get(mem, s->ids[row], &r, NULL) != 0) {
    sm_record_release(&r);
    return 0;
  }
  sanitize(r.fp, w);
  same = memcmp(w, v, sizeof(w)) == 0;
  sm_record_release(&r);
  return same;
}

/* Grows a float array to n entries. */
static int grow_f(float **a, size_t n) {
  float *na = sm_realloc(*a, n * sizeof(*na));
  if (na == NULL)
    return SM_ENOMEM;
  *a = na;
  return 0;
}

/* A new group for vector v (sanitised).  Returns its index or -1. */
static long group_new(sv_scan *s, const float *v, uint64_t h) {
  size_t gi = s->ng;
  int8_t *blk;
  float mx = 0, sc, inv;
  double rn = 0, dr = 0, r8n = 0;

  if (gi == s->gcap) {
    size_t nc = s->gcap ? s->gcap * 2 : BLK;
    group *ng = sm_realloc(s->g, nc * sizeof(*ng));
    uint32_t *nn;
    int8_t *nb;
    if (ng == NULL)
      return -1;
    s->g = ng;
    nn = sm_realloc(s->gn, nc * sizeof(*nn));
    if (nn == NULL)
      return -1;
    s->gn = nn;
    if (grow_f(&s->scale, nc) || grow_f(&s->dr, nc) || grow_f(&s->r8n, nc) ||
        grow_f(&s->rn, nc))
      return -1;
    nb = sm_realloc(s->cols, nc * DIMS);
    if (nb == NULL)
      return -1;
    memset(nb + s->gcap * DIMS, 0, (nc - s->gcap) * DIMS);
    s->cols = nb;
    s->gcap = nc;
  }
  if ((s->ng + 1) * 2 > s->ngslots && gslot_grow(s) != 0)
    return -1;
  memset(&s->g[gi], 0, sizeof(s->g[gi]));
  s->g[gi].h = h;
  s->gn[gi] = 0;
  for (int j = 0; j < DIMS; j++)
    if (fabsf(v[j]) > mx)
      mx = fabsf(v[j]);
  sc = mx > 0 ? mx / 127.0f : 1.0f;
  inv = 1.0f / sc;
  blk = s->cols + (gi / BLK) * BLK * DIMS + gi % BLK;
  for (int j = 0; j < DIMS; j++) {
    float x = nearbyintf(v[j] * inv);
    int8_t q = (int8_t)(x > 127 ? 127 : x < -127 ? -127 : x);
    /* Exact in double: a float times a small integer. */
    double d = (double)v[j] - (double)sc * (double)q;
    blk[j * BLK] = q;
    dr += d * d;
    rn += (double)v[j] * v[j];
    r8n += (double)q * q;
  }
  /* Rounded up, so that the bounds stay bounds. */
  s->scale[gi] = sc;
  s->dr[gi] = (float)(sqrt(dr) * (1 + 1e-6)) + 1e-12f;
  s->rn[gi] = (float)(sqrt(rn) * (1 + 1e-6));
  s->r8n[gi] = (float)(sqrt(r8n) * (1 + 1e-6));
  {
    size_t mask = s->ngslots - 1, k;
    for (k = h & mask; s->gslots[k]; k = (k + 1) & mask)
      ;
    s->gslots[k] = (uint32_t)(gi + 1);
  }
  s->ng++;
  return (long)gi;
}

/* The group of vector v (sanitised), made when there is none; skip: a
 * row being replaced, or UINT32_MAX. */
static long group_of(sv_scan *s, sm_store *mem, const float *v, uint32_t skip) {
  uint64_t h = vec_hash(v);
  size_t mask = s->ngslots - 1;

  for (size_t k = h & mask; s->gslots[k]; k = (k + 1) & mask) {
    uint32_t gi = s->gslots[k] - 1;
    if (s->g[gi].h == h && group_holds(s, mem, gi, v, skip))
      return gi;
  }
  return group_new(s, v, h);
}

static int group_insert(sv_scan *s, uint32_t gi, uint32_t row) {
  group *g = &s->g[gi];
  uint32_t lo = 0, hi, n = s->gn[gi];

  if (n == g->cap) {
    uint32_t nc = g->cap ? g->cap * 2 : 2;
    uint32_t *nr = sm_realloc(g->rows, (size_t)nc * sizeof(*nr));
    if (nr == NULL)
      return SM_ENOMEM;
    g->rows = nr;
    g->cap = nc;
  }
  /* Rows mostly arrive in order. */
  hi = n;
  if (n > 0 && g->rows[n - 1] > row) {
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (g->rows[mid] < row)
        lo = mid + 1;
      else
        hi = mid;
    }
    memmove(g->rows + lo + 1, g->rows + lo,
            (size_t)(n - lo) * sizeof(*g->rows));
  } else {
    lo = n;
  }
  g->rows[lo] = row;
  if (s->gn[gi]++ == 0)
    s->live++;
  return 0;
}

static void group_remove(sv_scan *s, uint32_t gi, uint32_t row) {
  group *g = &s->g[gi];
  uint32_t n = s->gn[gi];

  for (uint32_t i = 0; i < n; i++)
    if (g->rows[i] == row) {
      memmove(g->rows + i, g->rows + i + 1,
              (size_t)(n - i - 1) * sizeof(*g->rows));
      if (--s->gn[gi] == 0)
        s->live--;
      return;
    }
}

int sv__scan_put(sv_scan *s, sm_store *mem, const sm_record *r) {
  float v[DIMS];
  size_t slot, at = id_find(s, r->id, &slot);
  long gi;

  sanitize(r->fp, v);
  if (at != 0) {
    /* A replacement keeps its row, as the store does. */
    uint32_t row = (uint32_t)(at - 1);
    gi = group_of(s, mem, v, row);
    if (gi < 0)
      return SM_ENOMEM;
    if ((uint32_t)gi == s->grp[row])
      return 0;
    group_remove(s, s->grp[row], row);
    s->grp[row] = (uint32_t)gi;
    return group_insert(s, (uint32_t)gi, row);
  }
  if (s->n >= UINT32_MAX - 1)
    return SM_ENOMEM;
  if ((s->n + 1) * 2 > s->nslots) {
    if (id_grow(s) != 0)
      return SM_ENOMEM;
    id_find(s, r->id, &slot);
  }
  if (s->n == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 256;
    char **ni = sm_realloc(s->ids, nc * sizeof(*ni));
    uint32_t *ng;
    if (ni == NULL)
      return SM_ENOMEM;
    s->ids = ni;
    ng = sm_realloc(s->grp, nc * sizeof(*ng));
    if (ng == NULL)
      return SM_ENOMEM;
    s->grp = ng;
    s->cap = nc;
  }
  s->ids[s->n] = sm_strdup(r->id);
  if (s->ids[s->n] == NULL)
    return SM_ENOMEM;
  gi = group_of(s, mem, v, UINT32_MAX);
  if (gi < 0 || group_insert(s, (uint32_t)gi, (uint32_t)s->n) != 0) {
    sm_free(s->ids[s->n]);
    return SM_ENOMEM;
  }
  s->grp[s->n] = (uint32_t)gi;
  s->slots[slot] = s->n + 1;
  s->n++;
  return 0;
}

/* ==== Candidates ==== */

typedef struct lb {
  float v;      /* lower bound */
  uint32_t cnt; /* rows it stands for (at most m) */
} lb;

static void lb_down(lb *h, int n, int i) {
  for (;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && h[l].v < h[m].v)
      m = l;
    if (r < n && h[r].v < h[m].v)
      m = r;
    if (m == i)
      return;
    lb t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void lb_up(lb *h, int i) {
  while (i > 0) {
    int p = (i - 1) / 2;
    if (!(h[i].v < h[p].v))
      return;
    lb t = h[i];
    h[i] = h[p];
    h[p] = t;
    i = p;
  }
}

static int cmp_row(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

int sv__scan_candidates(const sv_scan *s, const float *q, int m,
                        size_t max_rows, uint32_t **rows, size_t *n_rows) {
  block_fn dot = pick_block();
  qpair pairs[DIMS / 2 + 1];
  int32_t acc[BLK] __attribute__((aligned(32)));
  int np = 0, pending = -1;
  double qn = 0, en = 0;
  float mq = 0, sq, inv, tau, qnf, enf, slack;
  float *ub;
  lb *heap;
  int nh = 0;
  uint64_t sum = 0;
  size_t n = 0, cap = 0;
  uint32_t *out = NULL;

  *rows = NULL;
  *n_rows = 0;
  if (m <= 0 || s->live == 0)
    return 0;
  for (int j = 0; j < DIMS; j++) {
    if (!isfinite(q[j]))
      return SM_EINVAL;
    if (fabsf(q[j]) > mq)
      mq = fabsf(q[j]);
  }
  if (mq == 0)
    return SM_EINVAL;
  /* The query as int16, in pairs of its nonzero coordinates. */
  sq = mq / 32767.0f;
  inv = 1.0f / sq;
  for (int j = 0; j < DIMS; j++) {
    float x = nearbyintf(q[j] * inv);
    int32_t w = (int32_t)(x > 32767 ? 32767 : x < -32767 ? -32767 : x);
    double e = (double)q[j] - (double)sq * (double)w;
    en += e * e;
    qn += (double)q[j] * q[j];
    if (w == 0)
      continue;
    if (pending < 0) {
      pending = np;
      pairs[np].j1 = j;
      pairs[np].w1 = w;
      pairs[np].j2 = j;
      pairs[np++].w2 = 0;
    } else {
      pairs[pending].j2 = j;
      pairs[pending].w2 = w;
      pending = -1;
    }
  }
  qnf = (float)(sqrt(qn) * (1 + 1e-6));
  enf = (float)(sqrt(en) * (1 + 1e-6)) + 1e-12f;
  slack = SLACK_REL * qnf;
  ub = sm_malloc(s->ng * sizeof(*ub));
  /* At most m entries, and one more before the pops. */
  heap = sm_malloc(((size_t)m + 1) * sizeof(*heap));
  if (ub == NULL || heap == NULL) {
    sm_free(ub);
    sm_free(heap);
    return SM_ENOMEM;
  }
  /* Pass 1: bounds; tau = the m-th largest lower bound, a group counted
   * as many times as it has rows (at most m). */
  for (size_t b = 0; b * BLK < s->ng; b++) {
    size_t base = b * BLK, cnt = SM_MIN(s->ng - base, (size_t)BLK);
    const float *sc = s->scale + base, *dr = s->dr + base;
    const float *r8n = s->r8n + base, *rn = s->rn + base;
    const uint32_t *gn = s->gn + base;
    float *u = ub + base, lo[BLK];
    dot(s->cols + base * DIMS, pairs, np, acc);
    for (size_t i = 0; i < cnt; i++) {
      float a = sc[i] * sq * (float)acc[i];
      float e = qnf * dr[i] + sc[i] * enf * r8n[i] + slack * rn[i] + SLACK_ABS;
      u[i] = gn[i] ? a + e : -INFINITY;
      lo[i] = a - e;
    }
    for (size_t i = 0; i < cnt; i++) {
      uint32_t c;
      if (gn[i] == 0 || (sum >= (uint64_t)m && !(lo[i] > heap[0].v)))
        continue;
      c = gn[i] < (uint32_t)m ? gn[i] : (uint32_t)m;
      heap[nh].v = lo[i];
      heap[nh].cnt = c;
      lb_up(heap, nh++);
      sum += c;
      while (nh > 0 && sum - heap[0].cnt >= (uint64_t)m) {
        sum -= heap[0].cnt;
        heap[0] = heap[--nh];
        lb_down(heap, nh, 0);
      }
    }
  }
  tau = sum >= (uint64_t)m ? heap[0].v : -INFINITY;
  sm_free(heap);
  /* Pass 2: the first m rows of every group that can reach tau. */
  for (size_t i = 0; i < s->ng; i++) {
    uint32_t c;
    if (!(ub[i] >= tau))
      continue;
    c = s->gn[i] < (uint32_t)m ? s->gn[i] : (uint32_t)m;
    if (n + c > max_rows) {
      sm_free(ub);
      sm_free(out);
      return 1;
    }
    if (n + c > cap) {
      size_t nc = cap ? cap * 2 : 64;
      uint32_t *no;
      while (nc < n + c)
        nc *= 2;
      no = sm_realloc(out, nc * sizeof(*no));
      if (no == NULL) {
        sm_free(ub);
        sm_free(out);
        return SM_ENOMEM;
      }
      out = no;
      cap = nc;
    }
    memcpy(out + n, s->g[i].rows, (size_t)c * sizeof(*out));
    n += c;
  }
  sm_free(ub);
  qsort(out, n, sizeof(*out), cmp_row);
  *rows = out;
  *n_rows = n;
  return 0;
}

const char *sv__scan_id(const sv_scan *s, size_t row) {
  return row < s->n ? s->ids[row] : NULL;
}

/* ==== Advice ==== */

/* A small store with the records of rows (ascending), in that order. */
static sm_store *small_store(const sv_scan *s, sm_store *mem,
                             const uint32_t *rows, size_t n, sm_err *err) {
  sm_store *st = sm_store_open("mem:", 0, 0, err);

  for (size_t i = 0; st && i < n; i++) {
    sm_record r;
    int rc;
    sm_record_init(&r);
    rc = sm_store_get(mem, s->ids[rows[i]], &r, err);
    if (rc == 0)
      rc = sm_store_put(st, &r, err);
    sm_record_release(&r);
    if (rc != 0) {
      sm_store_close(st);
      return NULL;
    }
  }
  return st;
}

/* 1 when a (sm_advise over st) is provably sm_advise over the history:
 * the walk stayed within st's first m ranks (see the top). */
static int proven(sm_store *st, size_t st_rows, size_t all_rows,
                  const float *fp, int m, const sm_advise_opts *o,
                  const sm_advice *a, int *rc) {
  sm_store_hit *hits;
  int n, ok = 0, top_k = o && o->top_k > 0 ? o->top_k : 5;
  float thr = o && o->threshold > 0 ? o->threshold : 0.95f;

  *rc = 0;
  if (st_rows >= all_rows)
    return 1; /* it is the history */
  hits = sm_calloc((size_t)m, sizeof(*hits));
  if (hits == NULL) {
    *rc = SM_ENOMEM;
    return 0;
  }
  n = sm_store_search(st, fp, m, -2.0f, hits, NULL);
  if (n == m && hits[m - 1].score < thr) {
    ok = 1; /* the walk stops at a score below the threshold */
  } else if (n == m && a->n_matches == top_k) {
    ok = 1; /* top_k matched: each among the first m ranks? */
    for (int i = 0; ok && i < a->n_matches; i++) {
      int in = 0;
      for (int k = 0; k < n && !in; k++)
        in = strcmp(hits[k].id, a->matches[i].id) == 0;
      ok = in;
    }
  } else if (n < 0) {
    *rc = n;
  }
  sm_free(hits);
  return ok;
}

int sv__scan_advise(const sv_scan *s, sm_store *mem, const sm_meta *meta,
                    const float *qfp, const char *embedder,
                    const sm_advise_opts *o, sm_advice *a, sm_err *err) {
  float fp[DIMS];
  int top_k = o && o->top_k > 0 ? o->top_k : 5;
  int zero = 1;
  /* As many as sm_advise's first search asks for today; any other number
   * is as exact, only slower. */
  int m = top_k + 16;

  if (qfp)
    memcpy(fp, qfp, sizeof(fp));
  else
    sm_fingerprint(meta, NULL, fp);
  for (int j = 0; j < DIMS; j++)
    zero &= fp[j] == 0.0f;
  /* Answered without a search: nothing to save. */
  if (zero || !sm_identity_enough(sm_identity_known(meta, NULL)))
    return 1;
  while ((size_t)m < s->n && m <= MAX_ROWS) {
    uint32_t *rows;
    size_t n;
    sm_store *st;
    int rc = sv__scan_candidates(s, fp, m, MAX_ROWS, &rows, &n), ok;
    if (rc != 0)
      return rc == SM_ENOMEM ? sm_err_set(err, rc, "advise: out of memory") : 1;
    st = small_store(s, mem, rows, n, err);
    sm_free(rows);
    if (st == NULL)
      return 1;
    rc = qfp ? sm_advise_fp(st, meta, NULL, fp, embedder, o, a, err)
             : sm_advise(st, meta, NULL, o, a, err);
    if (rc != 0) {
      sm_store_close(st);
      return rc;
    }
    ok = proven(st, n, s->n, fp, m, o, a, &rc);
    sm_store_close(st);
    if (rc != 0)
      return sm_err_set(err, rc, "advise: out of memory");
    if (ok)
      return 0;
    sm_advice_release(a);
    m *= 8;
  }
  return 1;
}
