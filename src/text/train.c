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

/* ==== Training ==== */

/* One training run: the options, the embedded corpus and the prototypes
 * being learned. */
typedef struct trainer {
  sm_train_opts o;   /* options, defaults filled in */
  uint32_t d;        /* embedding size */
  size_t n;          /* lines */
  const int *labels; /* their classes */
  int n_classes;     /* classes */
  float *x;          /* n x d embedded lines */
  int *counts;       /* lines per class */
  size_t *members;   /* scratch: the lines of one class */
  int *assign;       /* scratch: k-means assignment */
  float *sims;       /* scratch: k-means similarities */
  size_t *order;     /* LVQ visiting order */
  float *protos;     /* prototypes, d floats each */
  int *pclass;       /* class of each prototype */
  int n_protos;      /* prototypes so far */
  sm_rng rng;        /* the seeded generator */
} trainer;

/* Fills in the defaults of the options (in brackets in sm_text.h). */
static void train_defaults(const sm_train_opts *opts, sm_train_opts *o) {
  memset(o, 0, sizeof(*o));
  if (opts)
    *o = *opts;
  if (o->dims == 0)
    o->dims = 2048;
  if (o->max_per_class <= 0)
    o->max_per_class = 8;
  if (o->lines_per_proto <= 0)
    o->lines_per_proto = 12;
  if (o->kmeans_iters <= 0)
    o->kmeans_iters = 12;
  if (o->lvq_epochs < 0)
    o->lvq_epochs = 0;
  else if (o->lvq_epochs == 0)
    o->lvq_epochs = 8;
  if (o->min_score <= 0)
    o->min_score = 0.15f;
}

static void trainer_release(trainer *t) {
  sm_free(t->x);
  sm_free(t->counts);
  sm_free(t->members);
  sm_free(t->assign);
  sm_free(t->sims);
  sm_free(t->order);
  sm_free(t->protos);
  sm_free(t->pclass);
}

/* Allocates the trainer and embeds the corpus.  0 or SM_ENOMEM. */
static int trainer_init(trainer *t, const char *const *lines,
                        const size_t *lens) {
  size_t n = t->n, d = t->d;
  size_t max_protos = (size_t)t->n_classes * (size_t)t->o.max_per_class;

  t->x = sm_calloc(n * d, sizeof(float));
  t->counts = sm_calloc((size_t)t->n_classes, sizeof(int));
  t->members = sm_calloc(n, sizeof(size_t));
  t->assign = sm_calloc(n, sizeof(int));
  t->sims = sm_calloc(n, sizeof(float));
  t->order = sm_calloc(n, sizeof(size_t));
  t->protos = sm_calloc(max_protos * d, sizeof(float));
  t->pclass = sm_calloc(max_protos, sizeof(int));
  if (!t->x || !t->counts || !t->members || !t->assign || !t->sims ||
      !t->order || !t->protos || !t->pclass)
    return SM_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    sm_text_embed(lines[i], lens[i], t->x + i * d, t->d);
    t->counts[t->labels[i]]++;
  }
  return 0;
}

/* Per-class spherical k-means: one prototype per lines_per_proto lines of
 * the class, at least one, at most max_per_class. */
static void train_kmeans(trainer *t) {
  uint32_t d = t->d;

  for (int c = 0; c < t->n_classes; c++) {
    size_t m = 0;
    int k;
    if (t->counts[c] == 0)
      continue;
    for (size_t i = 0; i < t->n; i++)
      if (t->labels[i] == c)
        t->members[m++] = i;
    k = (int)((m + (size_t)t->o.lines_per_proto - 1) /
              (size_t)t->o.lines_per_proto);
    if (k > t->o.max_per_class)
      k = t->o.max_per_class;
    if (k < 1)
      k = 1;
    kmeans(t->x, t->members, m, k, d, t->o.kmeans_iters, &t->rng,
           t->protos + (size_t)t->n_protos * d, t->assign, t->sims);
    for (int j = 0; j < k; j++)
      t->pclass[t->n_protos + j] = c;
    t->n_protos += k;
  }
}

/* One LVQ step for line i: when a wrong prototype is closer than the
 * nearest right one (or within the margin), the right one moves towards
 * the line and the wrong one away. */
static void lvq_step(trainer *t, size_t i, float lr) {
  uint32_t d = t->d;
  const float *xi = t->x + i * d;
  int bp = -1, bn = -1;
  float sp = -2, sn = -2;
  float *pp, *pn;

  for (int p = 0; p < t->n_protos; p++) {
    float s = dot(xi, t->protos + (size_t)p * d, d);
    if (t->pclass[p] == t->labels[i]) {
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
    return;
  pp = t->protos + (size_t)bp * d;
  pn = t->protos + (size_t)bn * d;
  for (uint32_t j = 0; j < d; j++) {
    pp[j] += lr * xi[j];
    pn[j] -= lr * xi[j];
  }
  normalize_vec(pp, d);
  normalize_vec(pn, d);
}

/* LVQ refinement, each epoch in a freshly shuffled order with a falling
 * learning rate. */
static void train_lvq(trainer *t) {
  size_t n = t->n;

  for (size_t i = 0; i < n; i++)
    t->order[i] = i;
  for (int ep = 0; ep < t->o.lvq_epochs; ep++) {
    float lr = 0.05f * (1.0f - (float)ep / (float)t->o.lvq_epochs) + 0.005f;
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = (size_t)(sm_rng_uniform(&t->rng) * (double)(i + 1));
      size_t tmp = t->order[i];
      t->order[i] = t->order[j];
      t->order[j] = tmp;
    }
    for (size_t r = 0; r < n; r++)
      lvq_step(t, t->order[r], lr);
  }
}

/* Share of the corpus whose nearest prototype is of its own class. */
static double train_accuracy(const trainer *t) {
  size_t right = 0;

  for (size_t i = 0; i < t->n; i++) {
    int bc = -1;
    float bs = -2;
    for (int p = 0; p < t->n_protos; p++) {
      float s = dot(t->x + i * t->d, t->protos + (size_t)p * t->d, t->d);
      if (s > bs) {
        bs = s;
        bc = t->pclass[p];
      }
    }
    right += bc == t->labels[i];
  }
  return (double)right / (double)t->n;
}

/* The trained set in the classifier's feature-major layout, or NULL on
 * exhaustion. */
static sm_protoset *protoset_build(const trainer *t,
                                   const char *const *class_names) {
  uint32_t d = t->d;
  int stride = (t->n_protos + 7) & ~7;
  float *w = sm_calloc((size_t)d * (size_t)stride, sizeof(float));
  sm_protoset *ps = sm_calloc(1, sizeof(*ps));
  char **names = sm_calloc((size_t)t->n_classes, sizeof(char *));
  int *pc = sm_calloc(t->n_protos > 0 ? (size_t)t->n_protos : 1, sizeof(int));

  if (!w || !ps || !names || !pc)
    goto fail;
  for (int p = 0; p < t->n_protos; p++)
    for (uint32_t j = 0; j < d; j++)
      w[(size_t)j * (size_t)stride + (size_t)p] = t->protos[(size_t)p * d + j];
  for (int c = 0; c < t->n_classes; c++) {
    names[c] = sm_strdup(class_names[c]);
    if (names[c] == NULL)
      goto fail;
  }
  memcpy(pc, t->pclass, (size_t)t->n_protos * sizeof(int));
  ps->name = NULL;
  ps->dims = d;
  ps->n_classes = t->n_classes;
  ps->class_names = (const char *const *)names;
  ps->n_protos = t->n_protos;
  ps->stride = stride;
  ps->proto_class = pc;
  ps->weights = w;
  ps->min_score = t->o.min_score;
  return ps;
fail:
  if (names != NULL)
    for (int c = 0; c < t->n_classes; c++)
      sm_free(names[c]);
  sm_free(names);
  sm_free(pc);
  sm_free(ps);
  sm_free(w);
  return NULL;
}

int sm_protoset_train(const char *const *lines, const size_t *lens,
                      const int *labels, size_t n, int n_classes,
                      const char *const *class_names, const sm_train_opts *opts,
                      sm_protoset **out, double *train_acc, sm_err *err) {
  trainer t;

  *out = NULL;
  memset(&t, 0, sizeof(t));
  train_defaults(opts, &t.o);
  t.d = t.o.dims;
  t.n = n;
  t.labels = labels;
  t.n_classes = n_classes;
  if ((t.d & (t.d - 1)) != 0 || n == 0 || n_classes <= 0)
    return sm_err_set(err, SM_EINVAL, "bad training input");
  for (size_t i = 0; i < n; i++)
    if (labels[i] < 0 || labels[i] >= n_classes)
      return sm_err_set(err, SM_EINVAL, "label out of range at line %zu", i);
  sm_rng_seed(&t.rng, t.o.seed ? t.o.seed : 1);
  if (trainer_init(&t, lines, lens) != 0)
    goto fail;
  train_kmeans(&t);
  train_lvq(&t);
  if (train_acc != NULL)
    *train_acc = train_accuracy(&t);
  *out = protoset_build(&t, class_names);
  if (*out == NULL)
    goto fail;
  trainer_release(&t);
  return 0;
fail:
  trainer_release(&t);
  return sm_err_set(err, SM_ENOMEM, "training: out of memory");
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
