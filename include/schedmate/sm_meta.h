/* sm_meta.h - workload metadata: the schema of docs/design.md section 2,
 * one value and one piece of evidence ("path:line" or "command") per
 * field.  Its code is src/meta/meta.c, a module of its own.
 *
 * The Advisor's extractor fills it; the history store keeps it with a
 * job's outcome; the fingerprint is computed from it.  Unknown fields stay
 * unknown (JSON null): a confident wrong value is worse than none. */
#ifndef SM_META_H
#define SM_META_H

#include "schedmate/sm_base.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Name, type; the order is the order of the JSON output.  New fields may
 * be appended; none is renamed. */
#define SM_META_FIELDS(XX)                                                     \
  XX(MODEL_NAME, "model_name", SM_META_STR)                                    \
  XX(TASK, "task", SM_META_STR)                                                \
  XX(DOMAIN, "domain", SM_META_STR)                                            \
  XX(DATASET, "dataset", SM_META_STR)                                          \
  XX(ITERATIONS, "iterations", SM_META_INT)                                    \
  XX(ITERATION_TYPE, "iteration_type", SM_META_STR)                            \
  XX(GLOBAL_BATCH_SIZE, "global_batch_size", SM_META_INT)                      \
  XX(PER_DEVICE_BATCH_SIZE, "per_device_batch_size", SM_META_INT)              \
  XX(LR, "lr", SM_META_NUM)                                                    \
  XX(GPUS, "gpus", SM_META_INT)                                                \
  XX(NODES, "nodes", SM_META_INT)                                              \
  XX(D_MODEL, "d_model", SM_META_INT)                                          \
  XX(N_LAYERS, "n_layers", SM_META_INT)                                        \
  XX(SEQ_LEN, "seq_len", SM_META_INT)                                          \
  XX(PRECISION, "precision", SM_META_STR)                                      \
  XX(PARALLELISM, "parallelism", SM_META_STR)

typedef enum sm_meta_type {
  SM_META_STR, /* a normalised lower-case string */
  SM_META_INT, /* an integer (kept in a double, exact up to 2^53) */
  SM_META_NUM  /* a real number */
} sm_meta_type;

/* clang-format off */
typedef enum sm_meta_field {
#define SM__XX(id, name, type) SM_META_##id,
  SM_META_FIELDS(SM__XX)
#undef SM__XX
  SM_META_NFIELDS
} sm_meta_field;
/* clang-format on */

/* One field.  str is set for SM_META_STR, num for the others. */
typedef struct sm_meta_value {
  int known;      /* 0: unknown (null) */
  char *str;      /* owned string value */
  double num;     /* numeric value */
  char *evidence; /* owned "path:line", "command" or NULL */
} sm_meta_value;

typedef struct sm_meta {
  sm_meta_value f[SM_META_NFIELDS]; /* indexed by sm_meta_field */
  /* Configuration provenance digests (made by the extractor, see
   * docs/history.md "Matching"; owned, NULL when not known):
   *   config_digest   the exact configuration: the command's options
   *                   without the cosmetic ones, and the content of every
   *                   file the extractor read (by content, not path);
   *   residue_digest  what of it the metadata does not explain: options
   *                   the extractor did not consume, and the lines and
   *                   values of the files it read that no field came
   *                   from. */
  char *config_digest;
  char *residue_digest;
} sm_meta;

/* Sets every field unknown. */
SM_EXTERN void sm_meta_init(sm_meta *m);
/* Frees the strings; the struct may be reused after sm_meta_init. */
SM_EXTERN void sm_meta_release(sm_meta *m);
/* Deep copy into an initialised dst (its old contents are released).
 * Returns 0 or SM_ENOMEM. */
SM_EXTERN int sm_meta_copy(sm_meta *dst, const sm_meta *src);

/* Field name ("model_name"), type, and lookup by name (-1 if unknown). */
SM_EXTERN const char *sm_meta_name(sm_meta_field f);
SM_EXTERN sm_meta_type sm_meta_type_of(sm_meta_field f);
SM_EXTERN int sm_meta_lookup(const char *name);

/* Sets a string field (copied) with its evidence (copied, may be NULL).
 * Returns 0, SM_EINVAL for a field of another type, or SM_ENOMEM. */
SM_EXTERN int sm_meta_set_str(sm_meta *m, sm_meta_field f, const char *s,
                              const char *evidence);
/* Sets a numeric field; integer fields are rounded.  Returns 0, SM_EINVAL
 * (string field or non-finite value) or SM_ENOMEM. */
SM_EXTERN int sm_meta_set_num(sm_meta *m, sm_meta_field f, double v,
                              const char *evidence);
/* Makes a field unknown again. */
SM_EXTERN void sm_meta_unset(sm_meta *m, sm_meta_field f);

/* Sets both digests (copied; NULL clears).  0 or SM_ENOMEM. */
SM_EXTERN int sm_meta_set_digests(sm_meta *m, const char *config,
                                  const char *residue);
/* Writes {"config_digest": ..., "residue_digest": ...} (null when
 * unknown). */
SM_EXTERN void sm_meta_write_digests(const sm_meta *m, sm_jw *w);

/* Writes the metadata object {"model_name": ..., ...} (every field, null
 * when unknown) / the evidence object {field: "path:line"} (known fields
 * with evidence only). */
SM_EXTERN void sm_meta_write_json(const sm_meta *m, sm_jw *w);
SM_EXTERN void sm_meta_write_evidence(const sm_meta *m, sm_jw *w);

/* Reads metadata from JSON text: either a flat metadata object or an
 * object with "metadata" (and optionally "evidence" and "configuration",
 * whose config_digest and residue_digest are kept) members, as
 * `schedmate extract --json` prints.  Unknown keys are ignored; a value of
 * the wrong type is an error.  m must be initialised; it is reset first.
 * Returns 0, SM_EPARSE (message in err) or SM_ENOMEM. */
SM_EXTERN int sm_meta_from_json(sm_meta *m, const char *json, size_t n,
                                sm_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SM_META_H */
