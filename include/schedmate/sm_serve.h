/* sm_serve.h - SchedMate as a service beside any scheduler (`schedmate
 * serve`), its HTTP client, and the shadow report that compares what the
 * service said with what happened.
 *
 * The service speaks HTTP/1.1 + JSON (libmicrohttpd) on a UNIX socket
 * (file permissions decide who may talk to it) and optionally on TCP,
 * where every request but /healthz needs a bearer token.  Its work runs
 * on three channels, each with one bounded queue and its own workers:
 *
 *   submit  POST /v1/advise, POST /v1/jobs      (answer within a deadline
 *                                                or fall back: "deadline")
 *   run     GET /v1/jobs/{id}/progress, POST /v1/track
 *   exit    POST /v1/jobs/{id}/end (write-back), POST /v1/diagnose
 *
 * The history is loaded once at start into an in-memory index and kept
 * current by the write-backs (and, with Redis, by other replicas'
 * writes); advice never reads the store.  A write-back is answered only
 * after the store committed it.  Paths in requests must lie under the
 * allowed roots.  docs/serve.md has the API. */
#ifndef SM_SERVE_H
#define SM_SERVE_H

#include <signal.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== The service ==== */

/* Channels, in the order of the per-channel options. */
enum { SM_SERVE_SUBMIT = 0, SM_SERVE_RUN, SM_SERVE_EXIT, SM_SERVE_NCHANNELS };

/* Log levels of the callback. */
enum { SM_SERVE_ERROR = 0, SM_SERVE_WARN, SM_SERVE_INFO, SM_SERVE_DEBUG };

typedef void (*sm_serve_log_fn)(void *ud, int level, const char *msg);

/* Options; zero fields take the defaults in brackets. */
typedef struct sm_serve_opts {
  const char *db;                /* history store URI (required) */
  const char *socket_path;       /* UNIX socket, or NULL */
  int socket_mode;               /* its file mode [0660] */
  const char *listen;            /* TCP "[HOST:]PORT" (HOST 127.0.0.1 when left
                                  * out; PORT 0 picks a free one), or NULL */
  const char *token;             /* bearer token, required with listen */
  const char *const *roots;      /* directories under which request paths are
                                  * accepted (--allow-root) */
  int n_roots;                   /* their count */
  const char *audit_path;        /* append-only JSON-lines audit, or NULL */
  const char *journal_path;      /* registered jobs, replayed at start, or
                                  * NULL: registrations live in memory */
  int advise_deadline_ms;        /* submit channel deadline [500] */
  int deadline_ms;               /* run and exit channel deadline [10000] */
  int queue[SM_SERVE_NCHANNELS]; /* queue capacity [256, 64, 64] */
  int workers[SM_SERVE_NCHANNELS]; /* worker threads [2, 1, 2] */
  double rate;                     /* requests per second per client [100];
                                    * negative: no limit */
  double burst;                    /* bucket size [2 x rate, at least 10] */
  size_t max_body;                 /* request body cap [1 MiB] */
  int max_depth;                   /* JSON nesting cap [16] */
  int max_connections;             /* open connections [512] */
  int max_jobs;                    /* registered jobs [100000] */
  int max_followed;                /* logs followed at once [256] */
  double sync_interval_s;          /* poll of other writers [1]; < 0: never */
  double slowdown;                 /* flag a rate drop of this share after
                                    * another job joined a node [0.25] */
  int top_k;                       /* advise matches [5] */
  float threshold;                 /* advise similarity threshold [0.95] */
  struct sm_llm *llm;              /* the optional LLM stages' client
                                    * (sm_llm.h; not owned, outlives the
                                    * service), or NULL: none */
  sm_serve_log_fn log;             /* messages, or NULL */
  void *log_ud;                    /* for the callback */
} sm_serve_opts;

typedef struct sm_serve sm_serve;

/* Opens the history store and loads every record into the in-memory
 * index, replays the job journal, binds the listeners.  Nothing answers
 * yet.  Returns NULL with a message when the options are unusable, the
 * store cannot be opened or a listener cannot be bound. */
SM_EXTERN sm_serve *sm_serve_new(const sm_serve_opts *o, sm_err *err);
/* Starts the workers, the deadline and sync threads and the HTTP
 * daemons.  Returns 0 or a negative code. */
SM_EXTERN int sm_serve_start(sm_serve *s, sm_err *err);
/* The i-th address it listens on ("unix:/run/x.sock",
 * "http://127.0.0.1:8080"), or NULL past the last. */
SM_EXTERN const char *sm_serve_address(const sm_serve *s, int i);
/* Records in the in-memory index. */
SM_EXTERN long long sm_serve_history_size(sm_serve *s);
/* Stops accepting, lets queued work finish (within its deadlines),
 * answers every request, stops the threads.  Idempotent. */
SM_EXTERN void sm_serve_stop(sm_serve *s);
/* Stops (if needed) and frees everything; removes the socket file.  NULL
 * is a no-op. */
SM_EXTERN void sm_serve_free(sm_serve *s);

/* ==== HTTP client ==== */

/* An answer.  body is owned (release with sm_http_resp_release). */
typedef struct sm_http_resp {
  int status;         /* HTTP status code */
  double retry_after; /* Retry-After in seconds, or -1 */
  sm_buf body;        /* the body */
  char ctype[64];     /* Content-Type */
} sm_http_resp;

SM_EXTERN void sm_http_resp_release(sm_http_resp *r);

/* A connection to a server: "unix:/path/to.sock", "http://host:port" or
 * "host:port".  Kept alive across requests; reconnects when the server
 * closed it. */
typedef struct sm_http_conn sm_http_conn;

/* Returns NULL with a message for a malformed address; connects lazily.
 * token (may be NULL) is sent as "Authorization: Bearer TOKEN". */
SM_EXTERN sm_http_conn *sm_http_conn_new(const char *server, const char *token,
                                         int timeout_ms, sm_err *err);
SM_EXTERN void sm_http_conn_free(sm_http_conn *c);
/* One request (body may be NULL).  The whole exchange is bounded by the
 * connection's timeout; bodies above 64 MiB are refused.  r is
 * initialised by the call.  Returns 0 (any HTTP status) or a negative
 * code: SM_ECONN, SM_ETIMEOUT, SM_EPARSE (not HTTP), SM_ETOOBIG. */
SM_EXTERN int sm_http_request(sm_http_conn *c, const char *method,
                              const char *path, const char *body, size_t len,
                              sm_http_resp *r, sm_err *err);

/* ==== Shadow report ==== */

/* Options; zero fields take the defaults in brackets. */
typedef struct sm_shadow_opts {
  const char *const *audit_paths; /* audit logs (serve's, the Slurm
                                   * agent's), may be none */
  int n_audit;                    /* their count */
  double profile_s;  /* profiling run a job without an estimate would
                      * need, per job, on its GPUs [300] */
  const char *title; /* report title, or NULL */
} sm_shadow_opts;

/* Compares what SchedMate said with what happened for every ended job
 * in the store that carries an outcome (written back by `schedmate
 * serve` or the Slurm agent), with the audit logs for latencies and
 * would-be evictions.  json (may be NULL) gets one JSON object, html (may
 * be NULL) a self-contained page with inline SVG plots.  Returns 0 or a
 * negative code (store or audit unreadable). */
SM_EXTERN int sm_shadow_report(sm_store *st, const sm_shadow_opts *o,
                               sm_buf *json, sm_buf *html, sm_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SM_SERVE_H */
