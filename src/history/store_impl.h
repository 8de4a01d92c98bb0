/* store_impl.h - what a history store backend provides (internal). */
#ifndef SM_STORE_IMPL_H
#define SM_STORE_IMPL_H

#include "schedmate/sm_history.h"

/* Records skipped because they could not be read back. */
typedef struct sm__skips {
  long long n;                 /* since the last reset */
  char first[SM_ERR_MSG_SIZE]; /* names the first one */
} sm__skips;

/* Counts one skipped record; the first one's message is kept. */
void sm__skip_note(sm__skips *k, const char *fmt, ...) SM_PRINTF(2, 3);
void sm__skip_reset(sm__skips *k);

typedef struct store_ops {
  const char *kind; /* "sqlite", "redis", "mem" */
  int (*put)(void *impl, const sm_record *r, sm_err *err);
  int (*get)(void *impl, const char *id, sm_record *r, sm_err *err);
  int (*each)(void *impl, int (*fn)(const sm_record *, void *), void *arg,
              sm_err *err);
  long long (*count)(void *impl, sm_err *err);
  /* A value that changes whenever the history changes (cheap). */
  int (*version)(void *impl, uint64_t *v, sm_err *err);
  /* Every fingerprint in insertion order, with the ids. */
  int (*load)(void *impl, sm_index **ix, char ***ids, size_t *n, sm_err *err);
  /* Optional: a backend that keeps a live index searches itself. */
  int (*search)(void *impl, const float *fp, int k, float min_score,
                sm_store_hit *hits, sm_err *err);
  /* Optional batching (NULL: puts are independent anyway). */
  int (*begin)(void *impl, sm_err *err);
  int (*end)(void *impl, sm_err *err);
  void (*close)(void *impl);
  /* Optional: the skipped-record counter (NULL: nothing is ever skipped). */
  sm__skips *(*skips)(void *impl);
  /* Optional: puts of the batch committed so far (NULL: all of them). */
  long long (*batch_done)(void *impl);
} store_ops;

/* Backend constructors: return the impl or NULL with err set. */
void *sm__sqlite_open(const char *path, int flags, int timeout_ms, sm_err *err);
void *sm__redis_open(const char *uri, int flags, int timeout_ms, sm_err *err);
void *sm__mem_open(sm_err *err);
extern const store_ops sm__sqlite_ops;
extern const store_ops sm__redis_ops;
extern const store_ops sm__mem_ops;

/* Overwrites row `row` of an index with vec (row < size). */
void sm__index_set(sm_index *ix, size_t row, const float *vec);

/* Deep copy of a record into an initialised dst.  0 or SM_ENOMEM. */
int sm__record_copy(sm_record *dst, const sm_record *src);

/* The record as one JSON text (owned, free with sm_free), or NULL. */
char *sm__record_json(const sm_record *r);

/* Fingerprint bytes: little-endian float32 x SM_FP_DIMS after a one-byte
 * version. */
#define SM__FP_BLOB_LEN (1 + SM_FP_DIMS * 4)
void sm__fp_pack(const float *fp, unsigned char *out);
/* Returns 0, or SM_ECORRUPT for a wrong length or version. */
int sm__fp_unpack(const unsigned char *in, size_t n, float *fp);

#endif /* SM_STORE_IMPL_H */
