/* serve_int.h - what the parts of `schedmate serve` share.
 *
 * The files read top-down; each calls only files listed below it:
 *
 *   server.c   HTTP (libmicrohttpd): listeners, routing, authentication,
 *              rate limits, body caps, suspend/resume, lifecycle
 *   api.c      request parsing and the submit endpoints (advise, jobs)
 *   api_run.c  the run and exit endpoints (progress, track, end, diagnose)
 *   channel.c  one bounded queue and worker pool per channel; the
 *              deadline thread that answers late requests
 *   llm.c      the optional LLM stages: slots, deadlines, output
 *   jobs.c     registered jobs, their followed logs, the job journal
 *   hist.c     the in-memory index: loaded once, write-backs, other
 *              writers' records (Redis sequence counter, SQLite count)
 *   scan.c     the exact pre-search that answers advice from a few
 *              records of the index
 *   metrics.c  counters and histograms, Prometheus text
 *   confine.c  the allowed roots
 *   limits.c   per-client token buckets, JSON depth, job ids
 *   base.c     endpoint and channel names, answers and error bodies,
 *              JSON member readers, the wall clock, the log
 *
 * (http_client.c, the client of --llm, and shadow*.c, the report of
 * `schedmate report serve`, stand apart.)  channel.c reaches the
 * endpoints through the hooks server.c gives it (sv_hooks); metrics.c
 * gets what other files keep behind their locks as values (sv_gauges).
 *
 * Threads: the HTTP daemons' polling threads run the routing and the
 * quick endpoints; each channel's workers run the rest; one thread
 * answers requests whose deadline passed; one polls other writers.  A
 * request (sv_req) is shared by its connection and the channel: it is
 * reference-counted and its state is guarded by its own mutex. */
#ifndef SM_SERVE_INT_H
#define SM_SERVE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cJSON.h>

#include "schedmate/sm_advisor.h"
#include "schedmate/sm_failure.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_llm.h"
#include "schedmate/sm_serve.h"
#include "schedmate/sm_tracker.h"

#define SV_ID_MAX 200    /* job id length */
#define SV_CLIENT_MAX 64 /* client key length */

/* ==== Endpoints ==== */

typedef enum sv_ep {
  EP_HEALTHZ = 0, /* GET /healthz */
  EP_METRICS,     /* GET /metrics */
  EP_ADVISE,      /* POST /v1/advise */
  EP_REGISTER,    /* POST /v1/jobs */
  EP_JOB,         /* GET /v1/jobs/{id} */
  EP_END,         /* POST /v1/jobs/{id}/end */
  EP_PROGRESS,    /* GET /v1/jobs/{id}/progress */
  EP_TRACK,       /* POST /v1/track */
  EP_DIAGNOSE,    /* POST /v1/diagnose */
  EP_OTHER,       /* anything else (404, 405) */
  EP__COUNT
} sv_ep;

/* "healthz", "metrics", "advise", "jobs", "job", "end", "progress",
 * "track", "diagnose", "other". */
const char *sv__ep_name(int ep);
/* The channel an endpoint runs on, or -1 when it is answered at once. */
int sv__ep_channel(int ep);
extern const char *const sv__channel_names[SM_SERVE_NCHANNELS];

struct sv_job;

/* ==== Answers ==== */

/* What a worker (or the router) answers. */
typedef struct sv_result {
  int status;                 /* HTTP status */
  sm_buf body;                /* JSON text */
  double retry_after;         /* seconds for Retry-After, or < 0 */
  const char *decision;       /* audit: "estimate", "fallback", "registered",
                               * "record", "progress", "diagnosis", "refused",
                               * "error", ... */
  const char *fallback;       /* fallback reason of an advice, or NULL */
  double estimate_s;          /* an advice's duration estimate, or NAN */
  double best_score;          /* its best similarity, or NAN */
  int n_matches;              /* completed matches the estimate is over */
  char note[SM_ERR_MSG_SIZE]; /* one line for the audit and the log */
} sv_result;

/* (base.c, as are the names of the endpoints and channels.) */
void sv__result_init(sv_result *r);
void sv__result_release(sv_result *r);
/* Sets an error answer {"error": code, "message": ..., "status": N};
 * returns status. */
int sv__error(sv_result *r, int status, const char *code, const char *fmt, ...)
    SM_PRINTF(4, 5);

/* ==== Requests ==== */

enum { RQ_NEW = 0, RQ_QUEUED, RQ_RUNNING, RQ_DONE };

typedef struct sv_req {
  pthread_mutex_t mu;               /* guards state, suspended, res */
  int refs;                         /* connection, channel, deadline list */
  struct sm_serve *sv;              /* the service */
  struct MHD_Connection *conn;      /* the connection */
  int ep;                           /* an sv_ep */
  int ch;                           /* its channel or -1 */
  char job[SV_ID_MAX + 1];          /* job id from the path */
  char client[SV_CLIENT_MAX];       /* "uid:N" or "ip:ADDR" */
  int tcp;                          /* came in over TCP */
  sm_buf body;                      /* request body (capped) */
  int body_over;                    /* the body passed the cap */
  size_t body_seen;                 /* bytes received in all */
  cJSON *json;                      /* the parsed body, or NULL */
  int state;                        /* RQ_* */
  int suspended;                    /* the connection is suspended */
  double t0;                        /* arrival (monotonic) */
  double t_work;                    /* work started, 0 not yet */
  double deadline;                  /* monotonic deadline, 0 none */
  int late;                         /* answered by the deadline thread */
  int answered;                     /* the response was queued */
  sv_result res;                    /* the answer once state is RQ_DONE */
  struct sv_req *dl_prev, *dl_next; /* deadline list */
  int in_dl;                        /* on it */
} sv_req;

void sv__req_ref(sv_req *r);
void sv__req_unref(sv_req *r);
/* Makes r's answer final (unless it already is): moves res in, takes r
 * off the deadline list, resumes the connection.  Returns 1 when res was
 * used, 0 when r had been answered already (res is released). */
int sv__req_finish(sv_req *r, sv_result *res, int late);

/* ==== Channels (channel.c) ==== */

/* What the files above channel.c do with a request.  server.c sets them
 * in the service before any thread starts; the workers and the deadline
 * thread call them, so that channel.c never calls up. */
typedef struct sv_hooks {
  /* Runs r's endpoint on a worker (sv__work). */
  void (*work)(struct sm_serve *sv, sv_req *r, sv_result *res);
  /* The answer of a request whose deadline passed (sv__late_result). */
  void (*late)(struct sm_serve *sv, sv_req *r, sv_result *res);
  /* r's answer was made final; called before its connection resumes
   * (sv__register_answered), or NULL. */
  void (*answered)(struct sm_serve *sv, sv_req *r);
} sv_hooks;

typedef struct sv_channel {
  int id;              /* SM_SERVE_SUBMIT, ... */
  struct sm_serve *sv; /* the service */
  pthread_mutex_t mu;  /* guards the ring and stop */
  pthread_cond_t cv;   /* work or stop */
  sv_req **ring;       /* the bounded queue */
  int cap, head, n;    /* capacity, first, count */
  pthread_t *thr;      /* workers */
  int n_thr, started;  /* wanted, running */
  int stop;            /* drain and end */
  atomic_int busy;     /* workers inside a request */
  double deadline_s;   /* per-request deadline */
  int llm_cap;         /* workers that may be in an LLM stage at once */
  atomic_int llm_busy; /* workers in one */
} sv_channel;

int sv__chan_init(sv_channel *c, struct sm_serve *sv, int id, int cap,
                  int workers, double deadline_s);
int sv__chan_start(sv_channel *c, sm_err *err);
/* Queues r (takes a reference).  0, or SM_ELIMIT when the queue is full. */
int sv__chan_push(sv_channel *c, sv_req *r);
int sv__chan_depth(sv_channel *c);
/* Lets the workers drain the queue and end; joins them. */
void sv__chan_stop(sv_channel *c);
void sv__chan_release(sv_channel *c);

/* Deadline thread: answers requests whose deadline passed. */
int sv__deadlines_start(struct sm_serve *sv, sm_err *err);
void sv__deadlines_stop(struct sm_serve *sv);
/* Puts r on the deadline list (takes a reference) / takes it off. */
void sv__deadline_add(struct sm_serve *sv, sv_req *r);
void sv__deadline_remove(struct sm_serve *sv, sv_req *r);
/* The answer of a request whose deadline passed. */
void sv__late_result(struct sm_serve *sv, sv_req *r, sv_result *res);

/* ==== Work (api.c, api_run.c) ==== */

/* Parses and checks the body (JSON object, depth cap) before queueing.
 * Returns 0, or fills res with the 400 answer and returns -1. */
int sv__parse_body(struct sm_serve *sv, sv_req *r, sv_result *res);
/* Runs the endpoint of r on a worker. */
void sv__work(struct sm_serve *sv, sv_req *r, sv_result *res);
/* Endpoints answered at once by the router. */
void sv__healthz(struct sm_serve *sv, sv_result *res);
void sv__job_info(struct sm_serve *sv, const char *id, sv_result *res);
/* Registration happens before the advice is queued. */
int sv__register(struct sm_serve *sv, sv_req *r, sv_result *res);
/* Records in the job what its registration was answered (r is done;
 * nothing for the other endpoints). */
void sv__register_answered(struct sm_serve *sv, sv_req *r);
void sv__work_advise(struct sm_serve *sv, sv_req *r, sv_result *res);
void sv__work_progress(struct sm_serve *sv, sv_req *r, sv_result *res);
void sv__work_track(struct sm_serve *sv, sv_req *r, sv_result *res);
void sv__work_end(struct sm_serve *sv, sv_req *r, sv_result *res);
void sv__work_diagnose(struct sm_serve *sv, sv_req *r, sv_result *res);
/* A job that runs on nodes was registered: jobs already running there
 * remember their rate as the baseline (interference watch). */
void sv__interference_join(struct sm_serve *sv, struct sv_job *joined);
/* A job ended: the watches it started end. */
void sv__interference_leave(struct sm_serve *sv, struct sv_job *gone);
/* Writes job's "slowdown" member (job->mu held). */
void sv__slowdown_json(const struct sv_job *job, sm_jw *w);

/* JSON accessors: a string / number member, or NULL / NAN (base.c). */
const char *sv__jstr(const cJSON *o, const char *k);
double sv__jnum(const cJSON *o, const char *k);

/* ==== Allowed roots (confine.c) ==== */

typedef struct sv_roots {
  char **real; /* real paths of the roots */
  int n;       /* their count */
} sv_roots;

int sv__roots_init(sv_roots *r, const char *const *paths, int n, sm_err *err);
void sv__roots_release(sv_roots *r);
/* 1 when real (a real path) is a root or lies beneath one. */
int sv__roots_contain(const sv_roots *r, const char *real);

/* A path opened and checked: the descriptor pins the object, proc names
 * it ("/proc/self/fd/N") for the readers, real is where it was. */
typedef struct sv_pin {
  int fd;            /* O_PATH descriptor, -1 none */
  char proc[40];     /* "/proc/self/fd/N" */
  char real[4096];   /* its real path when opened */
  uint64_t dev, ino; /* identity */
} sv_pin;

#define SV_PIN_DIR 1  /* must be a directory */
#define SV_PIN_FILE 2 /* must be a regular file */

/* Opens path (absolute) and checks that it is what kind says and lies
 * under a root.  Returns 0; SM_EACCES when it is outside the roots
 * (message says so), SM_EINVAL for a relative path, or the open error. */
int sv__pin(const sv_roots *r, const char *path, int kind, sv_pin *out,
            sm_err *err);
void sv__pin_close(sv_pin *p);
/* Rewrites "/proc/self/fd/N" in msg to the path the user gave. */
void sv__pin_unname(const sv_pin *p, const char *user_path, char *msg,
                    size_t cap);

/* ==== The LLM stages (llm.c) ==== */

/* Why a stage was not run. */
enum { SV_LLM_BUSY = 0, SV_LLM_DEADLINE, SV_LLM_NSKIP };

/* One request's stage: which ran, its result, or why it was skipped. */
typedef struct sv_llm_run {
  int stage;             /* 'a' (Advisor), 't' (Tracker), 'd' (Failure
                          * Handler), or 0: none */
  const char *skipped;   /* "busy", "deadline", or NULL */
  sm_llm_advise_res adv; /* the Advisor's result */
  sm_llm_track_res trk;  /* the Tracker's */
  sm_llm_diag_res dg;    /* the Failure Handler's */
} sv_llm_run;

/* 1 when the service has a chat client (--llm). */
int sv__llm_chat(const struct sm_serve *sv);
void sv__llm_run_init(sv_llm_run *run);
void sv__llm_run_release(sv_llm_run *run);
/* When a stage inside r must end: r's deadline less a tenth of its
 * budget (at least 20 ms); 0 without a deadline. */
double sv__llm_cutoff(const sv_req *r);
/* The Advisor stage on meta, the extraction of q (q->repo is pin's
 * name; messages name user_repo instead). */
void sv__llm_advise(struct sm_serve *sv, sv_req *r, const sm_extract_req *q,
                    const sv_pin *pin, const char *user_repo, sm_meta *meta,
                    sv_llm_run *run);
/* The Tracker stage on t, the Tracker's answer for the log at path. */
void sv__llm_track(struct sm_serve *sv, sv_req *r, const char *path,
                   sm_track_result *t, sv_llm_run *run);
/* The Failure Handler stage on d (the log at path, pinned as pin); the
 * planner gets for_plan, the answer shows for_output (shallow copies of
 * d; release d, then run). */
void sv__llm_diagnose(struct sm_serve *sv, sv_req *r, const char *path,
                      const sv_pin *pin, const char *user_path,
                      const sm_diagnosis *d, double threshold,
                      sm_diagnosis *for_plan, sm_diagnosis *for_output,
                      sv_llm_run *run);
/* Names a disagreement among the plan's gates. */
void sv__llm_plan_note(sv_llm_run *run, sm_plan *p);
/* The stage's members ("provenance", "llm", "llm_skipped") into an open
 * object. */
void sv__llm_stage_json(const sv_llm_run *run, const sm_meta *meta, sm_jw *w);
/* As the command's --json: the stage's members, "embedder" and
 * "llm_stats" (the service's counters); nothing without a client. */
void sv__llm_members(struct sm_serve *sv, const sv_llm_run *run,
                     const sm_meta *meta, sm_jw *w);
/* The same appended to a complete JSON object in buf. */
int sv__llm_append(struct sm_serve *sv, const sv_llm_run *run,
                   const sm_meta *meta, sm_buf *buf);
/* 1 when the service makes fingerprints with an embeddings endpoint
 * (--embed). */
int sv__llm_embedding(const struct sm_serve *sv);
/* The fingerprint of m (and x) from the endpoint, within r's deadline and
 * an LLM slot.  0, or a negative code with the message (SM_EBUSY: no slot
 * or no time). */
int sv__llm_embed(struct sm_serve *sv, sv_req *r, const sm_meta *m,
                  const sm_fp_extra *x, float *fp, sm_err *err);
/* Refuses a history whose fingerprints are by another embedder than the
 * service's write-backs would be (a history never mixes embedders). */
int sv__llm_check_history(struct sm_serve *sv, sm_err *err);
/* The stages' series of /metrics, and the client's (schedmate_llm_*). */
void sv__llm_metrics(struct sm_serve *sv, sm_buf *b);

/* ==== Limits (limits.c) ==== */

typedef struct sv_bucket {
  uint64_t h;              /* key hash, 0 free */
  char key[SV_CLIENT_MAX]; /* client */
  double tokens;           /* tokens left */
  double last;             /* last refill (monotonic) */
} sv_bucket;

typedef struct sv_rate {
  pthread_mutex_t mu; /* guards the table */
  sv_bucket *tab;     /* open addressing */
  size_t n, cap;      /* used, slots (power of two) */
  double rate, burst; /* tokens per second, bucket size; rate < 0: off */
} sv_rate;

int sv__rate_init(sv_rate *r, double rate, double burst, size_t cap);
void sv__rate_release(sv_rate *r);
/* Takes one token for key at time now.  1 allowed; 0 limited, with the
 * seconds until a token is there in *retry. */
int sv__rate_take(sv_rate *r, const char *key, double now, double *retry);

/* Nesting depth of JSON text (brackets outside strings), stopping early
 * past max; returns the depth seen (> max when too deep). */
int sv__json_depth(const char *s, size_t n, int max);
/* 1 when id is a usable job id: 1..200 bytes of [A-Za-z0-9._:@/+=-], no
 * "..", not starting with '/' or '.'. */
int sv__id_ok(const char *id);

/* ==== The pre-search (scan.c) ==== */

/* A view of the index's rows (same order), grouped by identical
 * fingerprint, with int8 vectors for bounds. */
typedef struct sv_scan sv_scan;

sv_scan *sv__scan_new(void);
void sv__scan_free(sv_scan *s);
/* r has just been put into mem (a new row at its end, or a replacement of
 * the row with r's id).  0 or SM_ENOMEM (then free the view: it no longer
 * mirrors mem). */
int sv__scan_put(sv_scan *s, sm_store *mem, const sm_record *r);
size_t sv__scan_rows(const sv_scan *s);
/* Groups with at least one row (distinct fingerprints). */
size_t sv__scan_groups(const sv_scan *s);
const char *sv__scan_id(const sv_scan *s, size_t row);
/* Rows (ascending; sm_free) among which lie the m rows that rank first
 * for query q in the index's exact search (score, then row).  Returns 0,
 * 1 when they would be more than max_rows, SM_EINVAL for a zero or
 * non-finite query, or SM_ENOMEM. */
int sv__scan_candidates(const sv_scan *s, const float *q, int m,
                        size_t max_rows, uint32_t **rows, size_t *n_rows);
/* sm_advise (qfp NULL) or sm_advise_fp over mem, answered from a small
 * store of candidates when that answer is provably the same.  Returns 0
 * (a is the answer), 1 (not decided: run sm_advise over mem), or a
 * negative code. */
int sv__scan_advise(const sv_scan *s, sm_store *mem, const sm_meta *meta,
                    const float *qfp, const char *embedder,
                    const sm_advise_opts *o, sm_advice *a, sm_err *err);

/* ==== The in-memory index (hist.c) ==== */

typedef struct sv_hist {
  sm_store *store;     /* the persistent store (write-backs, sync) */
  pthread_mutex_t wmu; /* guards store and the sync state */
  sm_store *mem;       /* the in-memory index */
  sv_scan *scan;       /* its pre-search view, or NULL */
  pthread_rwlock_t rw; /* readers advise; writers add */
  atomic_llong n;      /* records in mem */
  char *uri;           /* store URI */
  /* Other writers. */
  void *redis;               /* a redisContext of our own, or NULL */
  char prefix[64];           /* Redis key prefix */
  uint64_t seq;              /* Redis sequence counter at the last sync */
  uint64_t own_replaced;     /* our replacing writes since then */
  long long store_count;     /* records the persistent store should hold */
  atomic_ullong syncs;       /* records taken from other writers */
  atomic_ullong reloads;     /* full reloads */
  atomic_ullong sync_errors; /* failed polls */
  atomic_ullong presearched; /* advice answered by the pre-search */
  atomic_ullong full_search; /* advice that searched the whole index */
} sv_hist;

int sv__hist_open(sv_hist *h, const char *uri, int timeout_ms, sm_err *err);
void sv__hist_close(sv_hist *h);
/* sm_advise over the in-memory index (read lock); with fp, sm_advise_fp
 * on that fingerprint by embedder. */
int sv__hist_advise(sv_hist *h, const sm_meta *m, const float *fp,
                    const char *embedder, const sm_advise_opts *o, sm_advice *a,
                    sm_err *err);
/* Distinct fingerprints in the pre-search view (0 without one). */
size_t sv__hist_fingerprints(sv_hist *h);
/* Commits r to the store, then adds it to the index.  0 or a code. */
int sv__hist_commit(sv_hist *h, const sm_record *r, sm_err *err);
/* Takes other writers' records.  0, or a negative code. */
int sv__hist_sync(sv_hist *h, sm_err *err);
int sv__sync_start(struct sm_serve *sv, sm_err *err);
void sv__sync_stop(struct sm_serve *sv);

/* ==== Registered jobs (jobs.c) ==== */

typedef struct sv_job {
  struct sv_job *next; /* hash chain */
  int refs;            /* table + users (jobs.mu) */
  pthread_mutex_t mu;  /* guards everything below */
  char *id;            /* job id */
  char *repo, *log;    /* repository and log paths, or NULL */
  char *user, *name;   /* optional */
  char *gpu_type;      /* optional */
  char *scheduler;     /* who registered it, or NULL */
  char **nodes;        /* node list */
  int n_nodes;         /* its length */
  int gpus;            /* GPUs, 0 unknown */
  double submit_time;  /* Unix seconds, NAN unknown */
  double registered;   /* Unix seconds */
  sm_meta meta;        /* extracted metadata */
  int has_meta;        /* meta is set */
  /* What the service answered at submission. */
  int said;          /* an answer was given */
  int has_est;       /* with an estimate */
  double est_s;      /* of this duration */
  char fallback[40]; /* else this fallback reason */
  double best_score; /* best similarity, NAN none */
  int n_matches;     /* matches the estimate is over */
  double advise_ms;  /* how long the answer took */
  /* The followed log. */
  sm_tracker *trk;      /* tracker, or NULL */
  sv_pin pin;           /* the log it follows */
  sm_track_result last; /* newest answer */
  int has_last;         /* last is set */
  /* Interference: rate = throughput, or 1 / step time. */
  double rate;                   /* newest rate, NAN unknown */
  double base_rate;              /* rate before another job joined, NAN none */
  double slow_ratio;             /* newest rate / base rate */
  long long base_step;           /* step when it joined */
  char joined_by[SV_ID_MAX + 1]; /* the job that joined, "" none */
  char joined_node[64];          /* on which node */
  int flagged;                   /* the slowdown was reported */
  struct sv_job *lru_prev, *lru_next; /* followed logs, newest first */
  int in_lru;                         /* on that list */
  int gone;                           /* ended or replaced: out of the table */
} sv_job;

typedef struct sv_jobs {
  pthread_mutex_t mu;           /* guards the table, lru, ended */
  sv_job **b;                   /* hash buckets */
  size_t nb;                    /* bucket count (power of two) */
  int n, max;                   /* jobs, cap */
  sv_job *lru_head, *lru_tail;  /* followed logs */
  int n_followed, max_followed; /* count, cap */
  char **ended;                 /* ring of recently ended ids */
  int ended_cap, ended_pos;     /* its size, next slot */
  char *journal;                /* journal path or NULL */
  pthread_mutex_t jmu;          /* orders appends and compactions */
  long journal_lines;           /* lines in the journal (jmu) */
  long journal_live;            /* live jobs at the last compaction */
} sv_jobs;

int sv__jobs_init(sv_jobs *j, int max, int max_followed, const char *journal,
                  sm_err *err);
void sv__jobs_release(sv_jobs *j);
/* Adds (or replaces) a job; takes ownership of job.  Returns 0, or
 * SM_ELIMIT when the table is full (job is freed). */
int sv__jobs_add(sv_jobs *j, sv_job *job);
/* Finds a job and takes a reference, or NULL. */
sv_job *sv__jobs_get(sv_jobs *j, const char *id);
void sv__jobs_put(sv_jobs *j, sv_job *job);
/* Takes a job out of the table (it ended); remembers its id. */
void sv__jobs_remove(sv_jobs *j, sv_job *job);
/* 1 when id ended recently. */
int sv__jobs_ended(sv_jobs *j, const char *id);
int sv__jobs_count(sv_jobs *j);
int sv__jobs_followed(sv_jobs *j);
/* Marks job's tracker as just used; closes the least recently used
 * trackers past the cap.  Call without job->mu held. */
void sv__jobs_touch(sv_jobs *j, sv_job *job);
/* The job's "metadata" and "said" members (job->mu held): exact for the
 * journal (the figures as kept, with the match count), else rounded as an
 * answer shows them. */
void sv__job_said_json(const sv_job *job, int exact, sm_jw *w);
/* A new job with every field empty (refs 1). */
sv_job *sv__job_new(const char *id);
void sv__job_free(sv_job *job);
/* Journal lines: the registration, the answer, the metadata, the end. */
void sv__journal_job(struct sm_serve *sv, sv_job *job, const char *op);
/* Replays the journal into the table and rewrites it compacted. */
int sv__journal_replay(struct sm_serve *sv, sm_err *err);
/* Rewrites the journal with the live jobs only. */
int sv__journal_compact(struct sm_serve *sv, sm_err *err);

/* ==== Metrics (metrics.c) ==== */

#define SV_NBUCKETS 14

typedef struct sv_histo {
  atomic_ullong b[SV_NBUCKETS + 1]; /* per bucket (last: +Inf) */
  atomic_ullong n;                  /* observations */
  atomic_ullong sum_ns;             /* their sum, nanoseconds */
} sv_histo;

#define SV_NCODES 16
#define SV_NFALLBACKS 9

typedef struct sv_metrics {
  atomic_ullong req[EP__COUNT][SV_NCODES]; /* by endpoint and code */
  sv_histo lat[EP__COUNT];                 /* latency by endpoint */
  sv_histo wait[SM_SERVE_NCHANNELS];       /* queue wait by channel */
  atomic_ullong full[SM_SERVE_NCHANNELS];  /* refused: queue full */
  atomic_ullong late[SM_SERVE_NCHANNELS];  /* answered by the deadline */
  atomic_ullong fallbacks[SV_NFALLBACKS];  /* advice fallbacks by reason */
  atomic_ullong rate_limited;              /* 429 */
  atomic_ullong forbidden;                 /* 403 */
  atomic_ullong unauthorized;              /* 401 */
  atomic_ullong writebacks_ok;             /* committed */
  atomic_ullong writebacks_failed;         /* not committed */
  atomic_ullong interference;              /* slowdowns flagged */
  /* LLM stages skipped, by channel and reason (SV_LLM_*). */
  atomic_ullong llm_skipped[SM_SERVE_NCHANNELS][SV_LLM_NSKIP];
} sv_metrics;

/* Index of a status code in the table (a catch-all last). */
int sv__code_index(int status);
void sv__observe(sv_histo *h, double seconds);
/* Counts a fallback by name ("deadline" included). */
void sv__count_fallback(sv_metrics *m, const char *reason);

/* What /metrics shows that other files keep behind their locks: the
 * caller reads it and passes it in. */
typedef struct sv_gauges {
  int depth[SM_SERVE_NCHANNELS]; /* requests queued, by channel */
  int jobs;                      /* jobs registered and not ended */
  int followed;                  /* logs followed */
  size_t fingerprints;           /* distinct fingerprints in the index */
} sv_gauges;

void sv__metrics_render(struct sm_serve *sv, const sv_gauges *g, sm_buf *out);

/* ==== The service ==== */

typedef struct sv_listener {
  struct sm_serve *sv;  /* back pointer for the handler */
  int fd;               /* listening socket */
  int tcp;              /* 1: TCP (token needed) */
  struct MHD_Daemon *d; /* its daemon */
  char addr[320];       /* "unix:PATH" or "http://HOST:PORT" */
} sv_listener;

struct sm_serve {
  sm_serve_opts o; /* options (strings below copied) */
  char *s_db, *s_socket, *s_listen, *s_token, *s_audit, *s_journal;
  sv_roots roots;                    /* allowed roots */
  sv_hist hist;                      /* the index */
  sv_jobs jobs;                      /* registered jobs */
  sm_sigdb *sigdb;                   /* failure signatures */
  sv_channel ch[SM_SERVE_NCHANNELS]; /* channels */
  sv_rate rate;                      /* per-client limits */
  sv_metrics m;                      /* counters */
  sv_hooks hooks;                    /* for channel.c (set by server.c) */
  /* Deadlines. */
  pthread_mutex_t dl_mu;     /* guards the list */
  pthread_cond_t dl_cv;      /* a new head or stop */
  sv_req *dl_head, *dl_tail; /* by deadline */
  pthread_t dl_thr;          /* the thread */
  int dl_started, dl_stop;   /* running, asked to stop */
  /* Other writers. */
  pthread_mutex_t sy_mu;   /* guards sy_stop */
  pthread_cond_t sy_cv;    /* stop */
  pthread_t sy_thr;        /* the thread */
  int sy_started, sy_stop; /* running, asked to stop */
  /* Listeners. */
  sv_listener lis[2];   /* UNIX, TCP */
  int n_lis;            /* their count */
  atomic_int live;      /* requests not finished */
  int llm_cap;          /* LLM stages at once, all channels */
  atomic_int llm_busy;  /* LLM stages running */
  int started, stopped; /* lifecycle */
  double t_start;       /* monotonic start */
  double wall_start;    /* Unix start */
};

/* Logs through the callback (base.c). */
void sv__log(struct sm_serve *sv, int level, const char *fmt, ...)
    SM_PRINTF(3, 4);
/* One audit line for an answered request. */
void sv__audit(struct sm_serve *sv, const sv_req *r);
/* An audit line (base.c): begins the object in w over b (capped at cap
 * bytes, 0 none) with "time", "epoch" and "service"; end closes it,
 * appends it to the audit log (a failure is logged) and releases b. */
void sv__audit_begin(sm_buf *b, size_t cap, sm_jw *w);
void sv__audit_end(struct sm_serve *sv, sm_buf *b, sm_jw *w);
/* Wall-clock seconds (base.c). */
double sv__wall(void);

#endif /* SM_SERVE_INT_H */
