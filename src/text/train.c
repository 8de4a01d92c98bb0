/* train.c - learns the prototypes of a line classifier from a labelled
 * corpus.
 *
 * Each class gets a few prototypes, one per dozen example lines up to a
 * cap, because a class such as "progress" has many unrelated surface
 * forms (tqdm bars, Megatron tables, Keras lines).  They are found by
 * spherical k-means inside the class (seeded k-means++ initialisation),
 * then sharpened by a few passes of learning vector quantisation: when a
 * line is closer to a wrong class than to its own (or within a margin),
 * the nearest right prototype moves towards it and the nearest wrong one
 * away.  Everything is deterministic for a given seed. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"

#define LVQ_MARGIN 0.05f

static void normalize_vec(float *v, uint32_t d) {
  double ss = 0;

  for (uint32_t i = 0; i < d; i++)
    ss += (double)v[i] * v[i];
  if (ss > 0) {
    float inv = (float)(1.0 / sqrt(ss));
    for (uint32_t i = 0; i < d; i++)
      v[i] *= inv;
  }
}

static float dot(const float *a, const float *b, uint32_t d) {
  float s = 0;

  for (uint32_t i = 0; i < d; i++)
    s += a[i] * b[i];
  return s;
}

/* Spherical k-means over the rows listed in members; writes k centres. */
static void kmeans(const float *x, const size_t *members, size_t m, int k,
                   uint32_t d, int iters, sm_rng *rng, float *centres,
                   int *assign, float *best_sim) {
  /* k-means++: the first centre is a random member, each next one a
   * member drawn with probability proportional to its distance. */
  size_t first = (size_t)(sm_rng_uniform(rng) * (double)m);

  memcpy(centres, x + members[first] * d, d * sizeof(float));
  for (size_t i = 0; i < m; i++)
    best_sim[i] = dot(x + members[i] * d, centres, d);
  for (int c = 1; c < k; c++) {
    double total = 0, r, acc = 0;
    size_t pick = 0;
    for (size_t i = 0; i < m; i++)
      total += 1.0 - best_sim[i];
    r = sm_rng_uniform(rng) * total;
    for (size_t i = 0; i < m; i++) {
      acc += 1.0 - best_sim[i];
      if (acc >= r) {
        pick = i;
        break;
      }
    }
    memcpy(centres + (size_t)c * d, x + members[pick] * d, d * sizeof(float));
    for (size_t i = 0; i < m; i++) {
      float s = dot(x + members[i] * d, centres + (size_t)c * d, d);
      if (s > best_sim[i])
        best_sim[i] = s;
    }
  }
  for (int it = 0; it < iters; it++) {
    int changed = 0;
    for (size_t i = 0; i < m; i++) {
      const float *xi = x + members[i] * d;
      int bc = 0;
      float bs = -2;
      for (int c = 0; c < k; c++) {
        float s = dot(xi, centres + (size_t)c * d, d);
        if (s > bs) {
          bs = s;
          bc = c;
        }
      }
      if (it == 0 || assign[i] != bc)
        changed = 1;
      assign[i] = bc;
      best_sim[i] = bs;
    }
    if (!changed)
      break;
    memset(centres, 0, (size_t)k * d * sizeof(float));
    for (size_t i = 0; i < m; i++) {
      float *cc = centres + (size_t)assign[i] * d;
      const float *xi = x + members[i] * d;
      for (uint32_t j = 0; j < d; j++)
        cc[j] += xi[j];
    }
    for (int c = 0; c < k; c++) {
      float *cc = centres + (size_t)c * d;
      int empty = 1;
      for (uint32_t j = 0; j < d && empty; j++)
        empty = cc[j] == 0.0f;
      if (empty) {
        /* Re-seed an empty cluster with the worst-fitting member. */
        size_t worst = 0;
        for (size_t i = 1; i < m; i++)
          if (best_sim[i] < best_sim[worst])
            worst = i;
        memcpy(cc, x + members[worst] * d, d * sizeof(float));
        best_sim[worst] = 1.0f;
      }
      normalize_vec(cc, d);
    }
  }
}

int sm_protoset_train(const char *const *lines, const size_t *lens,
                      const int *labels, size_t n, int n_classes,
                      const char *const *class_names, const sm_train_opts *opts,
                      sm_protoset **out, double *train_acc, sm_err *err) {
  sm_train_opts o = {0};
  uint32_t d;
  float *x = NULL, *protos = NULL, *sims = NULL, *w = NULL;
  int *pclass = NULL, *counts = NULL, *assign = NULL;
  size_t *members = NULL, *order = NULL;
  char **names = NULL;
  sm_protoset *ps = NULL;
  int n_protos = 0, stride, rc = SM_ENOMEM;
  sm_rng rng;

  *out = NULL;
  if (opts)
    o = *opts;
  d = o.dims ? o.dims : 2048;
  if (o.max_per_class <= 0)
    o.max_per_class = 8;
  if (o.lines_per_proto <= 0)
    o.lines_per_proto = 12;
  if (o.kmeans_iters <= 0)
    o.kmeans_iters = 12;
  if (o.lvq_epochs < 0)
    o.lvq_epochs = 0;
  else if (o.lvq_epochs == 0)
    o.lvq_epochs = 8;
  if (o.min_score <= 0)
    o.min_score = 0.15f;
  if ((d & (d - 1)) != 0 || n == 0 || n_classes <= 0)
    return sm_err_set(err, SM_EINVAL, "bad training input");
  for (size_t i = 0; i < n; i++)
    if (labels[i] < 0 || labels[i] >= n_classes)
      return sm_err_set(err, SM_EINVAL, "label out of range at line %zu", i);
  sm_rng_seed(&rng, o.seed ? o.seed : 1);

  x = sm_calloc(n * d, sizeof(float));
  counts = sm_calloc((size_t)n_classes, sizeof(int));
  members = sm_calloc(n, sizeof(size_t));
  assign = sm_calloc(n, sizeof(int));
  sims = sm_calloc(n, sizeof(float));
  order = sm_calloc(n, sizeof(size_t));
  protos =
      sm_calloc((size_t)n_classes * (size_t)o.max_per_class * d, sizeof(float));
  pclass = sm_calloc((size_t)n_classes * (size_t)o.max_per_class, sizeof(int));
  if (!x || !counts || !members || !assign || !sims || !order || !protos ||
      !pclass)
    goto fail;
  for (size_t i = 0; i < n; i++) {
    sm_text_embed(lines[i], lens[i], x + i * d, d);
    counts[labels[i]]++;
  }

  /* Per-class spherical k-means. */
  for (int c = 0; c < n_classes; c++) {
    size_t m = 0;
    int k;
    if (counts[c] == 0)
      continue;
    for (size_t i = 0; i < n; i++)
      if (labels[i] == c)
        members[m++] = i;
    k = (int)((m + (size_t)o.lines_per_proto - 1) / (size_t)o.lines_per_proto);
    if (k > o.max_per_class)
      k = o.max_per_class;
    if (k < 1)
      k = 1;
    kmeans(x, members, m, k, d, o.kmeans_iters, &rng,
           protos + (size_t)n_protos * d, assign, sims);
    for (int j = 0; j < k; j++)
      pclass[n_protos + j] = c;
    n_protos += k;
  }

  /* LVQ refinement in a shuffled order. */
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  for (int ep = 0; ep < o.lvq_epochs; ep++) {
    float lr = 0.05f * (1.0f - (float)ep / (float)o.lvq_epochs) + 0.005f;
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = (size_t)(sm_rng_uniform(&rng) * (double)(i + 1));
      size_t t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (size_t r = 0; r < n; r++) {
      size_t i = order[r];
      const float *xi = x + i * d;
      int bp = -1, bn = -1;
      float sp = -2, sn = -2;
      for (int p = 0; p < n_protos; p++) {
        float s = dot(xi, protos + (size_t)p * d, d);
        if (pclass[p] == labels[i]) {
          if (s > sp) {
            sp = s;
            bp = p;
          }
        } else if (s > sn) {
          sn = s;
          bn = p;
        }
      }
      if (bp < 0 || bn < 0 || sn + LVQ_MARGIN < sp)
        continue;
      {
        float *pp = protos + (size_t)bp * d, *pn = protos + (size_t)bn * d;
        for (uint32_t j = 0; j < d; j++) {
          pp[j] += lr * xi[j];
          pn[j] -= lr * xi[j];
        }
        normalize_vec(pp, d);
        normalize_vec(pn, d);
      }
    }
  }

  if (train_acc != NULL) {
    size_t right = 0;
    for (size_t i = 0; i < n; i++) {
      int bc = -1;
      float bs = -2;
      for (int p = 0; p < n_protos; p++) {
        float s = dot(x + i * d, protos + (size_t)p * d, d);
        if (s > bs) {
          bs = s;
          bc = pclass[p];
        }
      }
      right += bc == labels[i];
    }
    *train_acc = (double)right / (double)n;
  }

  /* Feature-major layout for the classifier. */
  stride = (n_protos + 7) & ~7;
  w = sm_calloc((size_t)d * (size_t)stride, sizeof(float));
  ps = sm_calloc(1, sizeof(*ps));
  names = sm_calloc((size_t)n_classes, sizeof(char *));
  if (!w || !ps || !names)
    goto fail;
  for (int p = 0; p < n_protos; p++)
    for (uint32_t j = 0; j < d; j++)
      w[(size_t)j * (size_t)stride + (size_t)p] = protos[(size_t)p * d + j];
  for (int c = 0; c < n_classes; c++) {
    names[c] = sm_strdup(class_names[c]);
    if (names[c] == NULL)
      goto fail;
  }
  {
    int *pc = sm_calloc((size_t)n_protos, sizeof(int));
    if (pc == NULL)
      goto fail;
    memcpy(pc, pclass, (size_t)n_protos * sizeof(int));
    ps->proto_class = pc;
  }
  ps->name = NULL;
  ps->dims = d;
  ps->n_classes = n_classes;
  ps->class_names = (const char *const *)names;
  ps->n_protos = n_protos;
  ps->stride = stride;
  ps->weights = w;
  ps->min_score = o.min_score;
  *out = ps;
  rc = 0;
  names = NULL;
  w = NULL;
  ps = NULL;

fail:
  if (names != NULL) {
    for (int c = 0; c < n_classes; c++)
      sm_free(names[c]);
    sm_free(names);
  }
  sm_free(ps);
  sm_free(w);
  sm_free(x);
  sm_free(counts);
  sm_free(members);
  sm_free(assign);
  sm_free(sims);
  sm_free(order);
  sm_free(protos);
  sm_free(pclass);
  if (rc != 0)
    return sm_err_set(err, rc, "training: out of memory");
  return 0;
}

void sm_protoset_free(sm_protoset *ps) {
  if (ps == NULL)
    return;
  if (ps->class_names != NULL)
    for (int c = 0; c < ps->n_classes; c++)
      sm_free((void *)ps->class_names[c]);
  sm_free((void *)ps->class_names);
  sm_free((void *)ps->proto_class);
  sm_free((void *)ps->weights);
  sm_free((void *)ps->name);
  sm_free(ps);
}
