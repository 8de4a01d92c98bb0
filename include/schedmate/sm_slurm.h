/* sm_slurm.h - SchedMate beside a real Slurm cluster: the agent behind
 * `schedmate slurm` and the answers it gives the job_submit plugin.
 *
 * The agent polls slurmctld (through a backend: libslurm, or anything that
 * implements sm_slurm_ops, such as the fake cluster of the unit tests) and
 * runs four channels on every pass:
 *
 *   submit      each new pending job: its batch script, working directory
 *               and command go through the Advisor; the estimate and its
 *               provenance go into the job's comment and, in enforce
 *               mode, its priority follows SchedMate-SJF (and optionally
 *               its time limit follows the estimate with a margin);
 *   run         each running job's StdOut is followed by the Tracker:
 *               step, step time, throughput, loss; a job whose throughput
 *               drops after another job joined its node is flagged;
 *   exit        a FAILED or NODE_FAIL job's log is diagnosed; an
 *               infrastructure fault with a located component, within the
 *               planner's gates, drains the node and requeues the job;
 *   write-back  every ended job goes into the history with its real
 *               duration, end state, progress and diagnosis, and its GPU
 *               utilisation and memory (from the nodes' samplers, or
 *               Slurm's accounting).
 *
 * Shadow mode (the default) computes and audits every decision without
 * changing anything in Slurm; enforce mode acts and audits every action.
 * The audit log is append-only JSON lines.  Nothing here prints: messages
 * go to the log callback. */
#ifndef SM_SLURM_H
#define SM_SLURM_H

#include <signal.h>
#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Jobs as the agent sees them ==== */

/* Base job states (Slurm's JOB_* without flags). */
typedef enum sm_slurm_state {
  SM_SJ_PENDING = 0,
  SM_SJ_RUNNING,
  SM_SJ_SUSPENDED,
  SM_SJ_COMPLETED,
  SM_SJ_CANCELLED,
  SM_SJ_FAILED,
  SM_SJ_TIMEOUT,
  SM_SJ_NODE_FAIL,
  SM_SJ_PREEMPTED,
  SM_SJ_BOOT_FAIL,
  SM_SJ_DEADLINE,
  SM_SJ_OOM,
  SM_SJ__COUNT
} sm_slurm_state;

/* "PENDING", "RUNNING", ... as Slurm spells them ("OUT_OF_MEMORY"). */
SM_EXTERN const char *sm_slurm_state_name(int state);
/* 1 for the states of a job that has ended. */
SM_EXTERN int sm_slurm_state_ended(int state);

/* One job.  Strings are owned (sm_malloc) and may be NULL. */
typedef struct sm_slurm_job {
  uint32_t id;         /* job id */
  int state;           /* an sm_slurm_state */
  int completing;      /* Slurm's COMPLETING flag is set */
  uint32_t uid;        /* submitting user */
  char *user;          /* user name, or NULL (looked up from uid) */
  char *name;          /* job name */
  char *partition;     /* partition(s), comma-separated */
  char *work_dir;      /* working directory */
  char *std_out;       /* expanded StdOut path */
  char *std_err;       /* expanded StdErr path */
  char *command;       /* batch script path and arguments, blank-joined */
  char *comment;       /* the job's comment */
  char **nodes;        /* allocated nodes, one name each */
  int n_nodes;         /* their count */
  uint32_t priority;   /* 0: held */
  uint32_t time_limit; /* minutes; 0: none (unlimited) */
  uint32_t restarts;   /* how often the job was requeued */
  int exit_status;     /* wait() status of the batch script */
  int batch;           /* 1: a batch job with a script */
  int gpus_per_node;   /* GPUs requested per node, 0 if none */
  int gpus_total;      /* GPUs requested per job (--gpus), 0 if none */
  int req_nodes;       /* nodes requested */
  char *gpu_type;      /* GPU type requested ("a100"), or NULL */
  double submit_time;  /* Unix seconds, 0 unknown */
  double start_time;   /* Unix seconds, 0 not started */
  double end_time;     /* Unix seconds, 0 not ended */
} sm_slurm_job;

/* Frees the strings and node list of one job (caller-owned struct) and
 * zeroes it. */
SM_EXTERN void sm_slurm_job_release(sm_slurm_job *j);
/* Frees an array of jobs (NULL is a no-op). */
SM_EXTERN void sm_slurm_jobs_free(sm_slurm_job *jobs, int n);

/* Parses a TRES list such as "gres:gpu:a100:2,gres:nic:1" or
 * "gres/gpu=4": the GPU count (0 when there is none) and, if the request
 * names one, the type (type may be NULL; cap its size).  Returns 0, or
 * SM_EPARSE for a malformed GPU entry. */
SM_EXTERN int sm_slurm_parse_gpus(const char *tres, int *count, char *type,
                                  size_t cap);

/* One change to a job; zero / NULL fields are left alone. */
typedef struct sm_slurm_update {
  uint32_t job_id;     /* the job */
  const char *comment; /* new comment, or NULL */
  uint32_t priority;   /* new priority, 0: unchanged */
  uint32_t time_limit; /* new limit in minutes, 0: unchanged */
  int start_now;       /* 1: make the job eligible at once */
} sm_slurm_update;

/* What the agent needs from a cluster.  Every call returns 0 or a
 * negative SM_E* code with a message (SM_ECONN when slurmctld cannot be
 * reached). */
typedef struct sm_slurm_ops {
  /* Every job slurmctld knows (pending, running, recently ended). */
  int (*load_jobs)(void *ud, sm_slurm_job **jobs, int *n, sm_err *err);
  /* The batch script of a job, appended to out. */
  int (*batch_script)(void *ud, uint32_t job_id, sm_buf *out, sm_err *err);
  int (*update_job)(void *ud, const sm_slurm_update *u, sm_err *err);
  /* Drains a node with a reason (no new jobs; running ones finish). */
  int (*drain_node)(void *ud, const char *node, const char *reason,
                    sm_err *err);
  /* Requeues a batch job (running or ended) into pending. */
  int (*requeue)(void *ud, uint32_t job_id, sm_err *err);
  /* Releases the backend's state (may be NULL). */
  void (*close)(void *ud);
} sm_slurm_ops;

/* A cluster connection: the operations, their state and the cluster's
 * name (used in history ids "CLUSTER:JOBID"). */
typedef struct sm_slurm_backend {
  const sm_slurm_ops *ops; /* operations */
  void *ud;                /* their state */
  char cluster[64];        /* cluster name */
} sm_slurm_backend;

/* The backend over libslurm is not part of the library: it lives with
 * the agent's executable (agent/libslurm.c, build/schedmate-slurm), the
 * only program linked with libslurm (GPL-2.0-or-later), so that the
 * library and the schedmate command stay free of it. */

/* ==== The agent ==== */

/* Log levels of the callback. */
enum { SM_SLURM_ERROR = 0, SM_SLURM_WARN, SM_SLURM_INFO, SM_SLURM_DEBUG };

typedef void (*sm_slurm_log_fn)(void *ud, int level, const char *msg);

/* Options; zero fields take the defaults in brackets. */
typedef struct sm_slurm_opts {
  int enforce;              /* 1: act; 0: shadow mode (the default) */
  int annotate;             /* write estimates into comments even in
                             * shadow mode */
  const char *db;           /* history store URI (required) */
  const char *audit_path;   /* append-only JSON-lines audit, or NULL */
  const char *state_path;   /* planner state (retry cap, isolation
                             * quota), or NULL: counts live in memory */
  const char *status_path;  /* JSON status file rewritten every pass */
  const char *metrics_path; /* Prometheus text file rewritten every pass */
  const char *socket_path;  /* UNIX socket for the plugin, or NULL */
  const char *signatures;   /* extra failure signature file, or NULL */
  double interval_s;        /* seconds between passes [10] */
  double max_backoff_s;     /* longest wait while Slurm is down [300] */
  int top_k;                /* Advisor matches [5] */
  float threshold;          /* Advisor similarity threshold [0.95] */
  double extract_budget_s;  /* time budget of one extraction [2] */
  double answer_budget_s;   /* extraction budget for the plugin [0.03] */
  double tl_margin;         /* time limit = estimate x margin + pad, for
                             * jobs without one; 0: never set */
  double tl_pad_s;          /* the pad [600] */
  double slowdown;          /* throughput drop that flags interference
                             * [0.25 = 25 %] */
  int track_samples;        /* Tracker samples [10] */
  double plan_threshold;    /* least diagnosis confidence [0.8] */
  int max_retries;          /* automatic requeues per job [2] */
  int isolation_quota;      /* drains per window [2] */
  double quota_window_s;    /* the window [86400] */
  int check_owner;          /* -1: read any repository; else only one
                             * owned by the job's user [on] */
  const char *gpustat_dir;  /* where the nodes' `schedmate gpustat` write
                             * job files (a shared directory), or NULL */
  const char *sacct;        /* sacct command for Slurm's own GPU
                             * accounting when no sampler file exists,
                             * or NULL: not asked */
  sm_slurm_log_fn log;      /* messages, or NULL */
  void *log_ud;             /* for the callback */
  struct sm_llm *llm;       /* optional LLM stage (sm_llm.h) for the exit
                             * channel, borrowed, or NULL; its accounting
                             * goes into the status and metrics files */
} sm_slurm_opts;

typedef struct sm_slurm_agent sm_slurm_agent;

/* Creates an agent over a backend (copied; the agent closes it).  Opens
 * the history store (created if missing), loads the failure signatures.
 * Returns NULL with a message when the options are unusable. */
SM_EXTERN sm_slurm_agent *sm_slurm_agent_new(const sm_slurm_opts *o,
                                             const sm_slurm_backend *b,
                                             sm_err *err);
/* Stops the socket server, writes nothing more, closes everything; NULL
 * is a no-op. */
SM_EXTERN void sm_slurm_agent_free(sm_slurm_agent *a);

/* One pass of every channel.  Returns 0, or a negative code when the job
 * list could not be loaded (Slurm unreachable: nothing else was done).
 * Problems with single jobs are logged, never returned. */
SM_EXTERN int sm_slurm_agent_pass(sm_slurm_agent *a, sm_err *err);

/* Passes every interval until *stop is set (by a signal handler) or
 * wake_fd (may be -1) becomes readable; while Slurm is unreachable the
 * wait doubles up to max_backoff_s.  Returns 0. */
SM_EXTERN int sm_slurm_agent_run(sm_slurm_agent *a, volatile sig_atomic_t *stop,
                                 int wake_fd);

/* Starts the thread that answers the plugin on socket_path (a stale
 * socket file is replaced; a live one is an error).  Returns 0 or a
 * negative code. */
SM_EXTERN int sm_slurm_serve_start(sm_slurm_agent *a, sm_err *err);
/* Stops it and removes the socket file (also done by agent_free). */
SM_EXTERN void sm_slurm_serve_stop(sm_slurm_agent *a);

/* Answers one plugin request (a JSON object: op "estimate", uid, name,
 * work_dir, script, argv, partition, tres_per_node, min_nodes) with the
 * reply line "OK <minutes|-> <comment>\n" or "NO <reason>\n", appended to
 * reply.  Used by the socket server; callable directly.  Returns 0 or
 * SM_ENOMEM. */
SM_EXTERN int sm_slurm_answer(sm_slurm_agent *a, const char *req, size_t len,
                              sm_buf *reply);

/* Counters, for the status file and tests. */
typedef struct sm_slurm_counters {
  uint64_t passes;         /* passes that loaded the job list */
  uint64_t slurm_errors;   /* passes that could not */
  uint64_t advised;        /* jobs advised by the submit channel */
  uint64_t estimates;      /* ... with an estimate */
  uint64_t priority_sets;  /* priority decisions */
  uint64_t diagnosed;      /* ended jobs diagnosed */
  uint64_t drains;         /* drain decisions */
  uint64_t requeues;       /* requeue decisions */
  uint64_t written_back;   /* records put into the history */
  uint64_t interference;   /* slowdowns flagged */
  uint64_t answers;        /* plugin requests answered with OK */
  uint64_t answers_no;     /* ... with NO */
  uint64_t actions_failed; /* enforce-mode actions Slurm refused */
} sm_slurm_counters;

SM_EXTERN void sm_slurm_agent_counters(sm_slurm_agent *a,
                                       sm_slurm_counters *out);

#ifdef __cplusplus
}
#endif
#endif /* SM_SLURM_H */
