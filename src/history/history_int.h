/* history_int.h - what the files of src/history share (internal): the
 * interface between the store front end (store.c) and its backends
 * (store_sqlite.c, store_redis.c, store_mem.c), the helpers below them
 * (store_util.c, record.c, index.c) and the Redis reply scanner.
 *
 * Reading order, top-down: store.c -> store_{sqlite,redis,mem}.c ->
 * store_util.c -> record.c, index.c, fingerprint.c. */
#ifndef SM_HISTORY_INT_H
#define SM_HISTORY_INT_H

#include "schedmate/sm_history.h"

/* ==== Skipped records (store_util.c) ==== */

/* Records skipped because they could not be read back. */
typedef struct sm__skips {
  long long n;                 /* since the last reset */
  char first[SM_ERR_MSG_SIZE]; /* names the first one */
} sm__skips;

/* Counts one skipped record; the first one's message is kept. */
void sm__skip_note(sm__skips *k, const char *fmt, ...) SM_PRINTF(2, 3);
void sm__skip_reset(sm__skips *k);

/* ==== Backends (store.c dispatches to them) ==== */

typedef struct sm__store_ops {
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
} sm__store_ops;

/* Backend constructors (store_sqlite.c, store_redis.c, store_mem.c):
 * return the impl or NULL with err set. */
void *sm__sqlite_open(const char *path, int flags, int timeout_ms, sm_err *err);
void *sm__redis_open(const char *uri, int flags, int timeout_ms, sm_err *err);
void *sm__mem_open(sm_err *err);
extern const sm__store_ops sm__sqlite_ops;
extern const sm__store_ops sm__redis_ops;
extern const sm__store_ops sm__mem_ops;

/* ==== Records and the index (record.c, index.c) ==== */

/* Overwrites row `row` of an index with vec (row < size). */
void sm__index_set(sm_index *ix, size_t row, const float *vec);

/* Deep copy of a record into an initialised dst.  0 or SM_ENOMEM. */
int sm__record_copy(sm_record *dst, const sm_record *src);

/* Writes the members that say how a run went and on what, in this
 * order: duration_s, sm_util, gpu_mem_mib, util_source, gpu_model,
 * driver_version, end_state.  A record's JSON and a match's in an
 * advice both carry this group (each places it after its own key). */
void sm__record_write_usage(const sm_record *r, sm_jw *w);

/* ==== Shared by the backends (store_util.c) ==== */

/* Fingerprint bytes: little-endian float32 x SM_FP_DIMS after a one-byte
 * version. */
#define SM__FP_BLOB_LEN (1 + SM_FP_DIMS * 4)
void sm__fp_pack(const float *fp, unsigned char *out);

/* What a backend stores of a record: *json, the record as one JSON text
 * (owned, free with sm_free), and blob, its packed fingerprint
 * (SM__FP_BLOB_LEN bytes).  0, or SM_ENOMEM with err set and *json NULL. */
int sm__record_encode(const sm_record *r, char **json, unsigned char *blob,
                      sm_err *err);
/* Returns 0, or SM_ECORRUPT for a wrong length or version. */
int sm__fp_unpack(const unsigned char *in, size_t n, float *fp);

/* ==== The Redis reply scanner (store_redis.c) ====
 *
 * Checks a stream of RESP2 replies as it arrives, before a parser
 * allocates anything for it: a string over SM__RESP_MAX_BULK, an array
 * over SM__RESP_MAX_ELEMENTS values (all nested values of one reply
 * count), a reply over SM__RESP_MAX_REPLY bytes, a status or error line
 * over SM__RESP_MAX_LINE, nesting over SM__RESP_MAX_DEPTH and malformed
 * headers are refused. */
#define SM__RESP_MAX_BULK ((long long)16 << 20) /* one string (a record) */
#define SM__RESP_MAX_ELEMENTS 100000            /* values in one reply */
#define SM__RESP_MAX_REPLY ((size_t)64 << 20)   /* bytes of one reply */
#define SM__RESP_MAX_LINE 65536                 /* a status or error line */
#define SM__RESP_MAX_DEPTH 7 /* nested arrays (hiredis's limit) */

typedef struct sm__resp_scan {
  int state;                              /* where in a value */
  char type;                              /* type byte of the value */
  char num[24];                           /* digits of a header */
  size_t nlen;                            /* their count */
  size_t line;                            /* bytes of the current line */
  int cr;                                 /* the line's CR was seen */
  long long bulk_left;                    /* string bytes (with CRLF) due */
  long long left[SM__RESP_MAX_DEPTH + 1]; /* values due per open array */
  int depth;                              /* open arrays */
  size_t bytes;                           /* bytes of the current reply */
  long long elems;                        /* values of the current reply */
  long long replies;                      /* complete replies so far */
  char why[128];                          /* what was refused */
} sm__resp_scan;

/* Starts a stream (a zeroed struct is a started one too). */
void sm__resp_scan_init(sm__resp_scan *p);
/* Checks n more bytes.  0, or -1 with p->why set (the stream is then
 * unusable). */
int sm__resp_scan_feed(sm__resp_scan *p, const char *b, size_t n);

#endif /* SM_HISTORY_INT_H */
