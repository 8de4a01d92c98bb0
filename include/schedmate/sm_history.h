/* sm_history.h - the Advisor's memory: job records with their real
 * outcomes, semantic fingerprints, an exact top-k vector index, the SQLite
 * and Redis stores, and the estimates handed to a scheduler.
 *
 *   meta --sm_fingerprint--> vector --sm_index_search--> similar past jobs
 *        --sm_estimate--> duration / utilisation / perf model, or fallback
 */
#ifndef SM_HISTORY_H
#define SM_HISTORY_H

#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Records ==== */

/* How a job ended.  Only completed runs give a duration that can stand for
 * "how long this kind of job takes". */
typedef enum sm_end_state {
  SM_END_COMPLETED = 0,
  SM_END_CANCELED,
  SM_END_FAILED_USER,
  SM_END_FAILED_FRAMEWORK,
  SM_END_FAILED_INFRA,
  SM_END_FAILED, /* failed, cause not known (e.g. from a trace) */
  SM_END_UNKNOWN,
  SM_END__COUNT
} sm_end_state;

/* "completed", "canceled", "failed_user", "failed_framework",
 * "failed_infra", "failed", "unknown". */
SM_EXTERN const char *sm_end_state_name(sm_end_state s);
/* Parses a name, case-insensitively.  Trace spellings are accepted too:
 * "cancelled" and "timeout" (ended by its time limit) are canceled,
 * "node_fail" is failed_infra; a plain "failed" stays "failed" (cause
 * unknown), never a guessed cause.  Returns 0 or SM_EINVAL. */
SM_EXTERN int sm_end_state_parse(const char *s, sm_end_state *out);
/* The failed end state of a Failure Handler category ("infrastructure",
 * "framework", "user"); any other or NULL is fallback. */
SM_EXTERN sm_end_state sm_end_state_of_category(const char *category,
                                                sm_end_state fallback);

/* One measured throughput of a job in one configuration. */
typedef struct sm_perf_point {
  char *gpu_type;    /* e.g. "a100", owned */
  int gpus;          /* GPU count */
  int batch;         /* global batch size, 0 if unknown */
  double throughput; /* samples (or the job's unit) per second */
} sm_perf_point;

/* Extra attributes of a job that are not workload metadata but help to
 * recognise a job from a trace (user, job name, virtual cluster).  All
 * optional. */
typedef struct sm_fp_extra {
  const char *user; /* submitting user */
  const char *name; /* job name; digits and separators are folded */
  const char *vc;   /* virtual cluster / partition */
} sm_fp_extra;

#define SM_FP_DIMS 256
#define SM_FP_VERSION 1

/* A job with its outcome.  Strings are owned; NAN means unknown for the
 * doubles. */
typedef struct sm_record {
  char *id;               /* unique job id */
  sm_meta meta;           /* extracted workload metadata */
  char *user;             /* optional */
  char *name;             /* optional job name */
  char *vc;               /* optional virtual cluster */
  double duration_s;      /* real run time */
  double sm_util;         /* mean SM utilisation, percent [0, 100] */
  sm_end_state end_state; /* how it ended */
  char *gpu_type;         /* GPU type it ran on */
  double throughput;      /* mean throughput */
  double submit_time;     /* Unix seconds */
  char *sw_version;       /* software stack version */
  double added_at;        /* Unix seconds when recorded */
  sm_perf_point *perf;    /* performance model points */
  int n_perf;             /* number of points */
  float fp[SM_FP_DIMS];   /* fingerprint (L2-normalised) */
  char *outcome;          /* optional JSON object text: how the run went in
                           * detail (scheduler state, exit code, last
                           * progress, diagnosis); owned, or NULL */
  double gpu_mem_mib;     /* peak GPU memory on one GPU, MiB (NAN unknown) */
  char *util_source;      /* where sm_util and gpu_mem_mib come from:
                           * "nvml", "sacct", or NULL */
  char *gpu_model;        /* GPU model as the driver names it */
  char *driver_version;   /* GPU driver version */
  char *embedder;         /* what made fp: NULL for the built-in hashing
                           * embedder ("hash-v1"), else e.g. "api:MODEL"
                           * (an embeddings endpoint, sm_llm.h); fp is
                           * then kept in the JSON form, not recomputed */
} sm_record;

/* Sets every field unknown/empty. */
SM_EXTERN void sm_record_init(sm_record *r);
SM_EXTERN void sm_record_release(sm_record *r);
/* Appends a performance point (gpu_type copied).  0 or SM_ENOMEM. */
SM_EXTERN int sm_record_add_perf(sm_record *r, const char *gpu_type, int gpus,
                                 int batch, double throughput);
/* Checks every number of a record: finite and in range.  duration_s in
 * [0, 10 years], sm_util [0, 100], throughput [0, 1e12], submit_time and
 * added_at [0, 1e11] (Unix seconds); perf points: gpus [1, 1e6], batch
 * [0, 2^30], throughput (0, 1e12]; metadata numbers >= 0, integers below
 * 2^53, lr at most 1e3; end_state one of the states.  NAN (unknown) is
 * always allowed.  sm_store_put and sm_record_from_json call it.  Returns
 * 0 or SM_ERANGE with a message naming the record, the field and the
 * value. */
SM_EXTERN int sm_record_check(const sm_record *r, sm_err *err);
/* Recomputes r->fp from r->meta and the extra attributes. */
SM_EXTERN void sm_record_fingerprint(sm_record *r);
/* Writes the record as one JSON object (the export/import format). */
SM_EXTERN void sm_record_write_json(const sm_record *r, sm_jw *w);
/* Reads a record from one JSON object as written above (the fingerprint
 * is recomputed; sm_record_check must pass).  r must be initialised; it is
 * reset first.  Returns 0 or SM_EPARSE with a message. */
SM_EXTERN int sm_record_from_json(sm_record *r, const char *json, size_t n,
                                  sm_err *err);

/* ==== Fingerprints ==== */

/* Computes the L2-normalised fingerprint of metadata (and optional extra
 * attributes, may be NULL) into out[SM_FP_DIMS].  Deterministic feature
 * hashing: each known field contributes a block of features scaled to the
 * field's weight (strings: the whole value and its word pieces; numbers:
 * log-spaced buckets with linear interpolation), so that the cosine of two
 * fingerprints is close to the weighted share of fields that agree.  Names
 * of runs, output paths, seeds and ports are not metadata and cannot
 * affect it. */
SM_EXTERN void sm_fingerprint(const sm_meta *m, const sm_fp_extra *x,
                              float *out);
/* Cosine similarity of two fingerprints. */
SM_EXTERN float sm_fp_cosine(const float *a, const float *b);

/* ==== Identity ====
 *
 * The cosine says how alike two jobs look; it cannot say whether they are
 * the same job.  A field that is unknown on both sides adds nothing to it,
 * and the cosine is normalised, so two jobs that agree on nothing but
 * their GPU count score 1.0.  Matching therefore asks two more questions
 * of the metadata itself:
 *
 *   veto      an identity field known on both sides with different values
 *             (model_name, d_model, n_layers, seq_len, dataset, task,
 *             domain, iterations, iteration_type; user and job name for
 *             jobs known only from a trace) means different jobs,
 *             whatever the cosine;
 *   evidence  the identity known on both sides and equal must be enough:
 *             the model with its size (a name that carries a size or
 *             version, or d_model and n_layers) and two of dataset, task
 *             and length (iterations; in epochs only together with the
 *             dataset, since an epoch's length is the dataset's), or a
 *             model name without a size (a family: "unet") and all three.
 *             A job whose metadata names no model, dataset or task is
 *             identified by its user and job name (digits folded)
 *             instead.
 *   configuration  the configuration provenance the extractor records
 *             (sm_meta.h): an equal exact-configuration digest is the same
 *             command and configuration and identifies the job however
 *             thin its metadata (group "configuration"); a residue digest
 *             known on both sides that differs while no metadata field
 *             vetoes is the veto "unexplained_difference": the jobs differ
 *             in something the extractor did not read.  Digests of
 *             different versions, or a record without them, are unknown.
 *
 * Two unknowns are never evidence of anything. */

/* Identity groups (bits). */
#define SM_IDENT_MODEL 0x01u   /* model with its size */
#define SM_IDENT_DATASET 0x02u /* dataset */
#define SM_IDENT_TASK 0x04u    /* task, i.e. the method (LoRA != full) */
#define SM_IDENT_LENGTH 0x08u  /* iterations */
#define SM_IDENT_TRACE 0x10u   /* user and job name of a trace job */
#define SM_IDENT_FAMILY 0x20u  /* a model name without a size */
#define SM_IDENT_CONFIG 0x40u  /* an equal exact-configuration digest */

/* Veto codes beyond the metadata fields (sm_meta_field values). */
#define SM_IDENT_VETO_USER (SM_META_NFIELDS + 0)
#define SM_IDENT_VETO_NAME (SM_META_NFIELDS + 1)
/* Equal metadata, different unexplained residue (sm_meta.h). */
#define SM_IDENT_VETO_UNEXPLAINED (SM_META_NFIELDS + 2)

/* The outcome of comparing two jobs' identity. */
typedef struct sm_identity_cmp {
  unsigned shared; /* SM_IDENT_* groups known on both sides and equal */
  int veto;        /* first field known on both sides and different (an
                    * sm_meta_field or SM_IDENT_VETO_*), or -1 */
} sm_identity_cmp;

/* Compares the identity of jobs a and b (extra attributes may be NULL).
 * Returns 1 when b may stand for a (no veto and enough shared identity),
 * else 0; out (may be NULL) says why. */
SM_EXTERN int sm_identity_compare(const sm_meta *a, const sm_fp_extra *ax,
                                  const sm_meta *b, const sm_fp_extra *bx,
                                  sm_identity_cmp *out);
/* The identity groups a job's own metadata establishes (what it could be
 * matched on; never SM_IDENT_CONFIG).  x may be NULL. */
SM_EXTERN unsigned sm_identity_known(const sm_meta *m, const sm_fp_extra *x);
/* 1 when the job's exact-configuration digest can identify it: it has
 * one, and its metadata names the model, the dataset or the task (an
 * extraction that found none of them did not find the job's
 * configuration, so its digest covers what was read, not what the job
 * reads). */
SM_EXTERN int sm_identity_config_known(const sm_meta *m);
/* 1 when a set of shared groups is enough to match on (see above). */
SM_EXTERN int sm_identity_enough(unsigned groups);
/* Writes the names of the groups ("model", "dataset", "task", "length",
 * "trace", "model_family", "configuration"; the family is left out
 * beside "model"),
 * comma-separated, into buf (always terminated; "none" for none).
 * Returns buf. */
SM_EXTERN char *sm_identity_describe(unsigned groups, char *buf, size_t n);
/* Name of a veto code: the metadata field's name, "user", "job_name" or
 * "unexplained_difference"; NULL for -1. */
SM_EXTERN const char *sm_identity_veto_name(int veto);

/* ==== Vector index ==== */

/* Exact top-k cosine search over L2-normalised rows.  Rows are kept as
 * float32 and as int8 with a per-row scale: a scan of the int8 rows with a
 * proven error bound selects candidates, which are then rescored exactly,
 * so results equal a full float32 scan. */
typedef struct sm_index sm_index;

typedef struct sm_hit {
  int64_t row; /* row number, in order of addition */
  float score; /* exact cosine */
} sm_hit;

SM_EXTERN sm_index *sm_index_new(uint32_t dims);
SM_EXTERN void sm_index_free(sm_index *ix);
/* Makes room for n rows in total.  0 or SM_ENOMEM. */
SM_EXTERN int sm_index_reserve(sm_index *ix, size_t n);
/* Appends a row (copied; should be L2-normalised).  Returns 0 or
 * SM_ENOMEM. */
SM_EXTERN int sm_index_add(sm_index *ix, const float *vec);
SM_EXTERN size_t sm_index_size(const sm_index *ix);
SM_EXTERN const float *sm_index_row(const sm_index *ix, size_t row);
/* Finds the k rows with the highest cosine >= min_score.  hits must hold k
 * entries; they come back by score descending, ties by row ascending.
 * Returns the number found (0..k) or a negative code. */
SM_EXTERN int sm_index_search(const sm_index *ix, const float *q, int k,
                              float min_score, sm_hit *hits);
/* Reference: the same search by a plain float32 scan (for tests and the
 * benchmark). */
SM_EXTERN int sm_index_search_flat(const sm_index *ix, const float *q, int k,
                                   float min_score, sm_hit *hits);

/* ==== Stores ==== */

/* A history store: a SQLite file (the embedded default, "path" or
 * "sqlite:path"), Redis ("redis://host:port/db[?prefix=P]", for several
 * schedulers sharing one history) or process memory ("mem:", for the
 * simulator and tests). */
typedef struct sm_store sm_store;

/* Open flags. */
#define SM_STORE_CREATE 1 /* create a missing SQLite file / schema */

/* Opens (and with SM_STORE_CREATE creates or migrates) a store.
 * timeout_ms bounds every network wait and lock wait (0: 2000 ms).
 * Returns NULL with a message in err when the store is missing,
 * unreachable, corrupt or of a newer schema (err->code SM_ENOENT,
 * SM_ECONN, SM_ECORRUPT, SM_ESCHEMA, ...). */
SM_EXTERN sm_store *sm_store_open(const char *uri, int flags, int timeout_ms,
                                  sm_err *err);
SM_EXTERN void sm_store_close(sm_store *s);
/* "sqlite", "redis" or "mem". */
SM_EXTERN const char *sm_store_kind(const sm_store *s);
/* Adds or replaces a record (atomically; a replaced record keeps its
 * place in insertion order).  0 or a negative code. */
SM_EXTERN int sm_store_put(sm_store *s, const sm_record *r, sm_err *err);
/* Groups many puts: SQLite commits them in transactions of at most 1000
 * records or 100 ms (so that another writer never waits for a whole
 * import), Redis pipelines them.  A batch must be ended with sm_store_end
 * (which reports the first failure of the batch).  0 or a negative code. */
SM_EXTERN int sm_store_begin(sm_store *s, sm_err *err);
SM_EXTERN int sm_store_end(sm_store *s, sm_err *err);
/* Puts of the current (or last) batch known to be committed: after a
 * failure, how many records did reach the store. */
SM_EXTERN long long sm_store_batch_done(const sm_store *s);
/* Reads one record into an initialised r.  SM_ENOTFOUND if absent. */
SM_EXTERN int sm_store_get(sm_store *s, const char *id, sm_record *r,
                           sm_err *err);
/* Calls fn for every record in insertion order; fn returns non-zero to
 * stop.  Returns 0 or a negative code. */
SM_EXTERN int sm_store_each(sm_store *s,
                            int (*fn)(const sm_record *r, void *arg), void *arg,
                            sm_err *err);
/* Number of records, or a negative code. */
SM_EXTERN long long sm_store_count(sm_store *s, sm_err *err);
/* A record that cannot be read back (not JSON, a value out of range, a
 * damaged fingerprint with a damaged record) is skipped, never fatal:
 * sm_store_each, sm_store_search and sm_advise go on without it.  Returns
 * how many were skipped since the last full read (sm_store_each, or the
 * index load behind sm_store_search) and after it, with a message naming
 * the first (file and row, or Redis key and field) in *first (may be
 * NULL; valid until the next call on s), or NULL when none was. */
SM_EXTERN long long sm_store_skipped(const sm_store *s, const char **first);

/* One search result: the job id (owned by the store until the next call
 * on it) and the cosine. */
typedef struct sm_store_hit {
  const char *id; /* job id */
  float score;    /* cosine with the query */
} sm_store_hit;

/* Exact top-k over every stored fingerprint (ties: insertion order).  The
 * store keeps its index between calls and reloads it only when the
 * history changed.  Returns the number of hits or a negative code. */
SM_EXTERN int sm_store_search(sm_store *s, const float *fp, int k,
                              float min_score, sm_store_hit *hits, sm_err *err);
/* The schema version this build writes. */
#define SM_STORE_SCHEMA 2

/* ==== Estimates ==== */

typedef enum sm_fallback {
  SM_FALLBACK_NONE = 0,
  SM_FALLBACK_NO_MATCH,
  SM_FALLBACK_BELOW_THRESHOLD,
  SM_FALLBACK_EXTRACT_FAILED,
  SM_FALLBACK_INCONSISTENT,
  SM_FALLBACK_UNAVAILABLE,
  SM_FALLBACK_TOO_LITTLE_KNOWN
} sm_fallback;

/* NULL for NONE, else "no_match", "below_threshold", "extract_failed",
 * "inconsistent_history", "history_unavailable", "too_little_known". */
SM_EXTERN const char *sm_fallback_name(sm_fallback f);

typedef struct sm_advise_opts {
  int top_k;          /* matches kept [5] */
  float threshold;    /* minimum cosine T_score [0.95] */
  double half_life_s; /* time decay of old records; 0 = none */
  double now;         /* "now" for time decay (Unix s); 0 = clock */
  double max_cv;      /* coefficient of variation above which the
                       * history is inconsistent [1.0] */
  double max_ratio;   /* max/min completed duration above which the
                       * history is inconsistent [20] */
} sm_advise_opts;

/* One aggregated point of the performance model. */
typedef struct sm_perf_agg {
  char *gpu_type;    /* owned */
  int gpus;          /* GPU count */
  int batch;         /* global batch or 0 */
  double throughput; /* mean over matches */
  int n;             /* points averaged */
} sm_perf_agg;

typedef struct sm_estimate {
  int valid;                  /* 0: no estimate (see fallback) */
  double duration_s;          /* plain mean over completed matches (the
                               * reference design's rule) */
  double sm_util;             /* plain mean SM utilisation (NAN if none) */
  int n;                      /* matches the means are over */
  double stdev;               /* duration standard deviation */
  double weighted_duration_s; /* similarity- (and time-) weighted mean */
  double median_duration_s;   /* median of completed durations */
  double p_early_end;         /* share of matches that did not complete */
  double expected_duration_s; /* mean over all matches, any end state */
  int n_completed;            /* completed matches */
  int n_util;                 /* matches sm_util is the mean of */
  double gpu_mem_mib;         /* plain mean peak GPU memory (NAN if none) */
  sm_perf_agg *perf;          /* aggregated perf model (owned) */
  int n_perf;                 /* its points */
} sm_estimate;

/* A scheduler's answer. */
typedef struct sm_advice {
  sm_record *matches;   /* top-k records above threshold (owned) */
  float *scores;        /* their cosines */
  int n_matches;        /* count */
  float best_score;     /* best cosine seen, even below threshold */
  sm_estimate est;      /* the estimate, valid or not */
  sm_fallback fallback; /* why there is no estimate */
  char detail[SM_ERR_MSG_SIZE + 64]; /* one line explaining the fallback */
  /* Identity (set by sm_advise; zero when the caller fills matches). */
  unsigned identity; /* SM_IDENT_* groups the job's metadata knows */
  unsigned *shared;  /* per match: groups shared with the job (owned,
                      * or NULL) */
  int n_different;   /* candidates above the threshold vetoed as
                      * different jobs */
  int n_thin;        /* candidates above the threshold sharing too
                      * little known identity */
  int n_unexplained; /* of n_different: vetoed for an unexplained
                      * difference (SM_IDENT_VETO_UNEXPLAINED) */
  int first_veto;    /* veto code of the first vetoed candidate, or -1 */
  int config_known;  /* the job can be matched on its exact-configuration
                      * digest (sm_identity_config_known) */
} sm_advice;

SM_EXTERN void sm_advice_init(sm_advice *a);
SM_EXTERN void sm_advice_release(sm_advice *a);

/* Computes the estimate for matches already found (records + scores);
 * sets a->est and a->fallback.  Used by sm_advise and the simulator. */
SM_EXTERN void sm_estimate_compute(sm_advice *a, const sm_advise_opts *o);

/* Answers for one job: fingerprint (with optional extra attributes),
 * search the store, keep the candidates at or above the threshold whose
 * identity agrees (sm_identity_compare), estimate.  A job whose metadata
 * does not know enough identity is not searched (too_little_known).  s
 * may be NULL (store could not be opened: history_unavailable).  Store
 * failures become the history_unavailable fallback (err gets the message)
 * rather than an error: the scheduler must always get an answer.  Returns
 * 0, or SM_ENOMEM. */
SM_EXTERN int sm_advise(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
                        const sm_advise_opts *o, sm_advice *a, sm_err *err);

/* As sm_advise with a fingerprint made elsewhere (fp, SM_FP_DIMS floats;
 * NULL: the built-in one of m and x) by the named embedder (NULL: the
 * built-in).  Only records of the same embedder are matched: fingerprints
 * of two embedders are never compared. */
SM_EXTERN int sm_advise_fp(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
                           const float *fp, const char *embedder,
                           const sm_advise_opts *o, sm_advice *a, sm_err *err);

/* Writes the advice as the JSON members matches (each with the identity
 * groups it shares with the job and its identity_basis), estimate,
 * outcomes, best_score, identity ({"known": [groups], "enough",
 * "configuration", "rejected_different", "rejected_too_little_known",
 * "rejected_unexplained_difference", "first_veto"}), fallback,
 * fallback_reason and fallback_detail (into an open object). */
SM_EXTERN void sm_advice_write_json(const sm_advice *a, sm_jw *w);

/* Writes the provenance of the estimate's SM utilisation as one JSON
 * value: {n, jobs, sources, gpu_models, gpu_types, driver_versions} over
 * the completed matches the mean is over (distinct values), or null when
 * none was measured. */
SM_EXTERN void sm_advice_write_util_provenance(const sm_advice *a, sm_jw *w);

#ifdef __cplusplus
}
#endif
#endif /* SM_HISTORY_H */
