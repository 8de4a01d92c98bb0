/* classify.c - prototype classifier over hashed line embeddings.
 *
 * A line's score against a prototype is the cosine of their vectors.  The
 * prototypes are stored feature-major (one row of weights per hashed
 * dimension), so a line touches only the rows of its own features: the
 * cost is features x prototypes, independent of the embedding size.  A
 * small cache keyed by the line's normalised shape answers the repeated
 * shapes of a training log without recomputing anything. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"

#define CACHE_SIZE 16384 /* entries, a power of two */

/* Four floats, for the inner product of score_norm (GCC and clang). */
typedef float v4sf __attribute__((vector_size(16)));

typedef struct cache_entry {
  uint64_t key; /* shape hash, 0 = empty */
  int cls;      /* class or -1 */
  float score;  /* best cosine */
} cache_entry;

struct sm_linecls {
  const sm_protoset *ps;              /* the prototypes (borrowed) */
  float *dense;                       /* dims floats, all zero between calls */
  uint32_t *touched;                  /* indices set in dense */
  float *scores;                      /* stride floats: one per prototype */
  cache_entry *cache;                 /* CACHE_SIZE entries */
  uint64_t hits;                      /* lookups answered by the cache */
  uint64_t lookups;                   /* all cached lookups */
  uint32_t idx[SM_TEXT_MAX_FEATURES]; /* feature scratch */
  float val[SM_TEXT_MAX_FEATURES];    /* feature scratch */
  char norm[SM_TEXT_MAX_NORM + 1];    /* normalised line scratch */
};

int sm_protoset_class(const sm_protoset *ps, const char *name) {
  for (int i = 0; i < ps->n_classes; i++)
    if (strcmp(ps->class_names[i], name) == 0)
      return i;
  return -1;
}

sm_linecls *sm_linecls_new(const sm_protoset *ps) {
  sm_linecls *c = sm_calloc(1, sizeof(*c));

  if (c == NULL)
    return NULL;
  c->ps = ps;
  c->dense = sm_calloc(ps->dims, sizeof(float));
  c->touched = sm_calloc(SM_TEXT_MAX_FEATURES, sizeof(uint32_t));
  c->scores = sm_calloc((size_t)ps->stride, sizeof(float));
  c->cache = sm_calloc(CACHE_SIZE, sizeof(cache_entry));
  if (!c->dense || !c->touched || !c->scores || !c->cache) {
    sm_linecls_free(c);
    return NULL;
  }
  return c;
}

void sm_linecls_free(sm_linecls *c) {
  if (c == NULL)
    return;
  sm_free(c->dense);
  sm_free(c->touched);
  sm_free(c->scores);
  sm_free(c->cache);
  sm_free(c);
}

/* Scores normalised text against every prototype into c->scores and
 * returns the vector norm (0 for a featureless line). */
static float score_norm(sm_linecls *c, size_t m) {
  const sm_protoset *ps = c->ps;
  const int stride = ps->stride;
  int k = sm_text_features(c->norm, m, ps->dims, c->idx, c->val,
                           SM_TEXT_MAX_FEATURES);
  int nt = 0;
  double ss = 0;

  for (int i = 0; i < k; i++) {
    uint32_t d = c->idx[i];
    if (c->dense[d] == 0.0f) {
      /* A dimension that cancels to zero and is hit again is listed
       * twice; the second visit sees zero and adds nothing. */
      c->touched[nt++] = d;
    }
    c->dense[d] += c->val[i];
  }
  memset(c->scores, 0, (size_t)stride * sizeof(float));
  for (int t = 0; t < nt; t++) {
    uint32_t d = c->touched[t];
    float x = c->dense[d];
    /* The classifier's inner product, four floats at a time with the
     * compiler's vector extension (SSE on x86-64, NEON on arm64): the
     * scores of a line are most of its classification cost. */
    const float *row = ps->weights + (size_t)d * (size_t)stride;
    float *sc = c->scores;
    int p = 0;
    if (x == 0.0f)
      continue;
    ss += (double)x * x;
    for (; p + 4 <= stride; p += 4) {
      v4sf acc, w;
      memcpy(&acc, sc + p, sizeof(acc));
      memcpy(&w, row + p, sizeof(w));
      acc += w * x;
      memcpy(sc + p, &acc, sizeof(acc));
    }
    for (; p < stride; p++)
      sc[p] += x * row[p];
    c->dense[d] = 0.0f;
  }
  return ss > 0 ? (float)sqrt(ss) : 0.0f;
}

static int best_class(const sm_linecls *c, float norm, float *per_class,
                      float *best_score) {
  const sm_protoset *ps = c->ps;
  int best = -1;
  float bs = -2.0f;

  if (per_class != NULL)
    for (int i = 0; i < ps->n_classes; i++)
      per_class[i] = -1.0f;
  if (norm <= 0.0f) {
    if (best_score)
      *best_score = 0.0f;
    return -1;
  }
  for (int p = 0; p < ps->n_protos; p++) {
    float s = c->scores[p] / norm;
    int cl = ps->proto_class[p];
    if (per_class != NULL && s > per_class[cl])
      per_class[cl] = s;
    if (s > bs) {
      bs = s;
      best = cl;
    }
  }
  if (best_score)
    *best_score = bs;
  return bs < ps->min_score ? -1 : best;
}

int sm_linecls_classify(sm_linecls *c, const char *line, size_t n,
                        float *score) {
  uint64_t shape;
  size_t m = sm_text_normalize(line, n, c->norm, sizeof(c->norm), &shape);
  cache_entry *e;
  float bs, norm;
  int cls;

  if (m == 0) {
    if (score)
      *score = 0.0f;
    return -1;
  }
  shape |= 1; /* never the empty key */
  e = &c->cache[shape & (CACHE_SIZE - 1)];
  c->lookups++;
  if (e->key == shape) {
    c->hits++;
    if (score)
      *score = e->score;
    return e->cls;
  }
  norm = score_norm(c, m);
  cls = best_class(c, norm, NULL, &bs);
  e->key = shape;
  e->cls = cls;
  e->score = bs;
  if (score)
    *score = bs;
  return cls;
}

int sm_linecls_scores(sm_linecls *c, const char *line, size_t n,
                      float *per_class) {
  size_t m = sm_text_normalize(line, n, c->norm, sizeof(c->norm), NULL);
  float norm = m ? score_norm(c, m) : 0.0f;

  return best_class(c, norm, per_class, NULL);
}

void sm_linecls_stats(const sm_linecls *c, uint64_t *hits, uint64_t *lookups) {
  if (hits)
    *hits = c->hits;
  if (lookups)
    *lookups = c->lookups;
}
