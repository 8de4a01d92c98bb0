/* sm_text.h - line normalisation, a feature-hashing embedder and a
 * prototype classifier (cosine similarity against per-class prototype
 * vectors learned at build time from a labelled corpus of lines).
 *
 * The Tracker uses it as its coarse line filter (progress / eval / init /
 * warning / error / info); the Failure Handler uses it, with its own
 * corpus, to tell failing chunks from normal ones. */
#ifndef SM_TEXT_H
#define SM_TEXT_H

#include <stdint.h>

#include "schedmate/sm_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Lines are normalised from at most this many input bytes. */
#define SM_TEXT_MAX_INPUT 4096
/* Normalised text is cut at this many bytes. */
#define SM_TEXT_MAX_NORM 1024
/* Upper bound on hashed features of one line. */
#define SM_TEXT_MAX_FEATURES 4096

/* ==== Normalisation and features ==== */

/* Normalises a raw log line into out (cap bytes, at least 2) and returns
 * its length: ANSI escapes and control bytes dropped, carriage-return
 * updates reduced to the last one, ASCII lower-cased, every number
 * (integer, decimal, exponent) replaced by '0', each run of non-ASCII
 * characters by one '#', runs of one punctuation character and of
 * whitespace collapsed, leading and trailing blanks removed.  out is
 * NUL-terminated.  If shape is not NULL it receives a 64-bit hash of the
 * normalised text. */
SM_EXTERN size_t sm_text_normalize(const char *s, size_t n, char *out,
                                   size_t cap, uint64_t *shape);

/* Computes the signed hashed features of normalised text: word unigrams,
 * the first word, bigrams of adjacent tokens and character trigrams, each
 * with a fixed weight.  idx[i] < dims (a power of two), val[i] signed.
 * Returns the number written (at most max). */
SM_EXTERN int sm_text_features(const char *norm, size_t n, uint32_t dims,
                               uint32_t *idx, float *val, int max);

/* Embeds a raw line as a dense L2-normalised vector of dims floats
 * (a power of two).  Returns 0, or SM_EINVAL for a bad dims. */
SM_EXTERN int sm_text_embed(const char *line, size_t n, float *vec,
                            uint32_t dims);

/* ==== Prototype sets ==== */

/* Prototype vectors of one classifier.  Generated tables are static
 * consts; trained ones are owned by the caller (sm_protoset_free). */
typedef struct sm_protoset {
  const char *name;               /* corpus name, e.g. "tracker" */
  uint32_t dims;                  /* embedding size, a power of two */
  int n_classes;                  /* number of classes */
  const char *const *class_names; /* n_classes names */
  int n_protos;                   /* number of prototypes */
  int stride;                     /* floats per weight row, >= n_protos */
  const int *proto_class;         /* class index of each prototype */
  const float *weights;           /* dims rows of stride floats: the
                                   * feature-major, L2-normalised
                                   * prototypes (row = feature) */
  float min_score;                /* best cosine below this: unknown */
} sm_protoset;

/* Returns the index of a class name, or -1. */
SM_EXTERN int sm_protoset_class(const sm_protoset *ps, const char *name);

/* Training options; zero fields take the defaults in brackets. */
typedef struct sm_train_opts {
  uint32_t dims;       /* embedding size [2048] */
  int max_per_class;   /* prototypes per class at most [8] */
  int lines_per_proto; /* one prototype per this many lines [12] */
  int kmeans_iters;    /* spherical k-means iterations [12] */
  int lvq_epochs;      /* discriminative refinement passes [8] */
  float min_score;     /* unknown threshold [0.15] */
  uint64_t seed;       /* shuffling seed [1] */
} sm_train_opts;

/* Learns prototypes from n labelled lines (labels in [0, n_classes)).
 * class_names are copied.  On success *out holds a new set (free with
 * sm_protoset_free) and *train_acc (if not NULL) the accuracy on the
 * training lines.  Returns 0 or a negative code. */
SM_EXTERN int sm_protoset_train(const char *const *lines, const size_t *lens,
                                const int *labels, size_t n, int n_classes,
                                const char *const *class_names,
                                const sm_train_opts *opts, sm_protoset **out,
                                double *train_acc, sm_err *err);
/* Frees a set made by sm_protoset_train; NULL is a no-op. */
SM_EXTERN void sm_protoset_free(sm_protoset *ps);

/* ==== Line classifier ==== */

typedef struct sm_linecls sm_linecls;

/* A classifier over a prototype set (borrowed; must outlive it).  It keeps
 * a cache keyed by the normalised shape of a line, so that the repeated
 * line shapes of a training log cost one pass over their bytes.  Returns
 * NULL on exhaustion. */
SM_EXTERN sm_linecls *sm_linecls_new(const sm_protoset *ps);
SM_EXTERN void sm_linecls_free(sm_linecls *c);

/* Classifies a raw line.  Returns the class index, or -1 when the best
 * cosine is below the set's min_score (or the line is blank).  *score (may
 * be NULL) receives the best cosine. */
SM_EXTERN int sm_linecls_classify(sm_linecls *c, const char *line, size_t n,
                                  float *score);

/* Fills per_class[n_classes] with the best cosine of each class for a raw
 * line (no cache).  Returns the best class or -1. */
SM_EXTERN int sm_linecls_scores(sm_linecls *c, const char *line, size_t n,
                                float *per_class);

/* Cache statistics: lookups answered from the cache / all lookups. */
SM_EXTERN void sm_linecls_stats(const sm_linecls *c, uint64_t *hits,
                                uint64_t *lookups);

#ifdef __cplusplus
}
#endif
#endif /* SM_TEXT_H */
