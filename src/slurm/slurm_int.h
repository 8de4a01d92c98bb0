/* slurm_int.h - what the parts of the Slurm agent share: the agent, its
 * table of jobs, and the entry points of each channel.
 *
 * The files read top-down; each depends only on those below it:
 *
 *   agent.c        life cycle, passes, the main loop
 *   server.c       the socket server answering the job_submit plugin
 *   report.c       status and metrics files
 *   exit.c         exit and write-back channels
 *   submit.c       submit channel and SchedMate-SJF (order.c)
 *   run.c          run channel (the Tracker on each job's log)
 *   gpu.c          GPU metrics of an ended run
 *   job_advice.c   one job through the Advisor, and its comment
 *   audit.c        the audit log
 *   shared.c       messages, counters, clock, run ids, the job table
 *   fsid.c, order.c, jobs.c   helpers without agent state
 *
 * (scripts/check-cycles.py checks that no file calls back up.)
 *
 * The main thread owns the job table, the main history store, the
 * signature database and the backend; the socket server thread (server.c)
 * owns its own store and touches only the options, the counters (under
 * cnt_mu) and the audit log (whole-line appends). */
#ifndef SM_SLURM_INT_H
#define SM_SLURM_INT_H

#include <pthread.h>
#include <sys/types.h>

#include "schedmate/sm_advisor.h"
#include "schedmate/sm_failure.h"
#include "schedmate/sm_gpustat.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_slurm.h"
#include "schedmate/sm_tracker.h"

/* Prefix of SchedMate's part of a job comment. */
#define SM__NOTE_PREFIX "schedmate:"

/* ==== The job table ==== */

/* What the agent keeps about one job between passes. */
typedef struct sm__sjob {
  uint32_t id;       /* job id */
  uint64_t seen;     /* last pass that listed it */
  int state;         /* state in that pass */
  uint32_t restarts; /* restart count in that pass */
  char *name;        /* job name (owned) */
  /* Submit channel. */
  int advised;          /* 1: advised (estimate or fallback) */
  int advise_fails;     /* failed attempts (unreadable script, ...) */
  double advise_retry;  /* wall time of the next attempt */
  uint32_t native;      /* Slurm's own priority at first sight */
  int has_est;          /* an estimate exists */
  double est_s;         /* expected duration, seconds */
  char *note;           /* our comment text ("schedmate: ...") */
  sm_meta meta;         /* extracted metadata (for the write-back) */
  int has_meta;         /* meta holds an extraction */
  uint32_t last_target; /* last priority decided (audited once) */
  /* Run channel. */
  sm_tracker *trk;                 /* follows std_out while running */
  char *trk_path;                  /* the path it follows */
  int trk_status;                  /* 0 none, 1 ok, 2 missing, -1 unreadable */
  char trk_error[SM_ERR_MSG_SIZE]; /* why unreadable */
  int trk_fails;                   /* consecutive failures (back-off) */
  double trk_retry;                /* wall time of the next attempt */
  sm_track_result tr;              /* newest answer */
  uint32_t trk_run;                /* restart count of the followed run */
  char **nodes;                    /* nodes of the running job (copy) */
  int n_nodes;                     /* their count */
  double started;                  /* start time of the run */
  /* Interference: rate = throughput, or 1 / step time. */
  double rate;          /* newest rate, NAN unknown */
  double base_rate;     /* rate before another job joined, NAN none */
  uint32_t joined_by;   /* the job that joined, 0 none */
  char joined_node[64]; /* on which node */
  long long base_step;  /* step when it joined */
  int flagged;          /* slowdown reported */
  double slow_ratio;    /* newest rate / base rate */
  /* Exit channel. */
  long long done_run;  /* highest run (restart count) written back */
  long long acted_run; /* highest run whose exit actions were taken */
  int exit_fails;      /* failed attempts at the exit channel */
  double exit_retry;   /* wall time of the next attempt */
} sm__sjob;

struct sm_slurm_agent {
  sm_slurm_opts o; /* options, strings below copied */
  char *s_db, *s_audit, *s_state, *s_status, *s_metrics, *s_socket, *s_sigs,
      *s_gpustat, *s_sacct;        /* owned copies of the option strings */
  char *tmp_dir;                   /* private directory of this agent */
  char *tmp_state;                 /* private planner state when none given */
  char *empty_repo;                /* an empty directory: the repository of a
                                    * job whose own directory cannot be read */
  sm_slurm_backend be;             /* the cluster */
  sm_store *store;                 /* history (main thread) */
  sm_sigdb *sigdb;                 /* failure signatures */
  sm__sjob *jobs;                  /* sorted by id */
  int n_jobs;                      /* count */
  size_t cap_jobs;                 /* allocated */
  uint64_t pass;                   /* passes started */
  int slurm_ok;                    /* the last load worked */
  char slurm_msg[SM_ERR_MSG_SIZE]; /* why it did not */
  double last_pass;                /* wall time of the last good pass */
  sm_slurm_counters cnt;           /* counters (cnt_mu) */
  pthread_mutex_t cnt_mu;          /* guards cnt */
  /* Socket server (server.c). */
  int serving;      /* the thread runs */
  pthread_t thr;    /* it */
  int listen_fd;    /* listening socket */
  int stop_pipe[2]; /* wakes the thread to stop */
  sm_store *sstore; /* the server thread's store */
};

/* ==== shared.c: what every part uses ==== */

/* Finds a job (NULL if absent) / finds or adds one (NULL on exhaustion). */
sm__sjob *sm__job_find(sm_slurm_agent *a, uint32_t id);
sm__sjob *sm__job_get(sm_slurm_agent *a, uint32_t id);

/* Logs a printf-style message through the callback. */
void sm__log(sm_slurm_agent *a, int level, const char *fmt, ...)
    SM_PRINTF(3, 4);
/* Adds to a counter under the lock. */
void sm__count(sm_slurm_agent *a, uint64_t *counter, uint64_t n);
/* Wall-clock seconds. */
double sm__wall(void);
/* History id of a run: "CLUSTER:ID" or "CLUSTER:ID.RESTARTS". */
void sm__run_id(const sm_slurm_agent *a, uint32_t id, uint32_t restarts,
                char *out, size_t cap);
/* ==== fsid.c: a job's files are read with its user's rights ==== */

/* The saved file system identity while a job's file is opened. */
typedef struct sm__fsid {
  int active; /* 1: changed, to be restored */
  uid_t uid;  /* previous fsuid */
  gid_t gid;  /* previous fsgid */
} sm__fsid;

/* Takes on the file system identity of user uid (and the primary group
 * of its passwd entry, else nobody's) when the agent runs as root and uid
 * is not root; else changes nothing.  Calling thread only. */
void sm__fsid_enter(sm__fsid *s, uint32_t uid);
/* Restores what sm__fsid_enter changed. */
void sm__fsid_leave(sm__fsid *s);

/* 1 when the agent may change Slurm (enforce mode). */
#define SM__ACTS(a) ((a)->o.enforce != 0)

/* ==== job_advice.c: from a job to an estimate ==== */

/* What the Advisor said about a job. */
typedef struct sm__advice_sum {
  int has_est;       /* an estimate exists */
  double est_s;      /* its expected duration */
  int n;             /* matches it is the mean of */
  double stdev;      /* their spread */
  float best;        /* best similarity seen */
  char fallback[48]; /* fallback name when no estimate */
  char ids[160];     /* ids of up to three matches, comma-separated */
  char note[320];    /* the comment text */
  uint32_t tl_min;   /* time limit to set (minutes), 0 none */
} sm__advice_sum;

/* A job as the Advisor needs it. */
typedef struct sm__advise_in {
  uint32_t uid;            /* user */
  const char *user;        /* user name or NULL */
  const char *name;        /* job name */
  const char *partition;   /* partition */
  const char *work_dir;    /* working directory */
  const char *script;      /* batch script text or NULL */
  size_t script_len;       /* its length */
  const char *const *argv; /* script arguments (or the command) */
  int argc;                /* their count */
  const char *command;     /* without script or argv: the command line */
  int gpus_per_node;       /* Slurm's request, 0 unknown */
  int gpus_total;          /* --gpus, 0 unknown */
  int nodes;               /* nodes requested, 0 unknown */
  double budget_s;         /* extraction time budget */
} sm__advise_in;

/* Extracts and advises one job with store s (may be NULL); fills sum and
 * meta (initialised by the caller) and, if w is not NULL, writes the
 * members "repo", "metadata", "matches", "estimate", "fallback",
 * "fallback_reason" and "warnings" into the open JSON object.  Returns 0
 * or SM_ENOMEM. */
int sm__advise_job(sm_slurm_agent *a, sm_store *s, const sm__advise_in *in,
                   sm__advice_sum *sum, sm_meta *meta, sm_jw *w);
/* Rewrites a comment so that it ends with note: an earlier SchedMate
 * part is replaced, the user's own text is kept in front.  Returns an
 * owned string or NULL. */
char *sm__comment_merge(const char *old, const char *note);
/* The SchedMate part of a comment, or NULL. */
const char *sm__comment_note(const char *comment);

/* ==== order.c: SchedMate-SJF over a partition's pending jobs ==== */

/* One pending job of a partition. */
typedef struct sm__oj {
  uint32_t id;     /* job id */
  uint32_t native; /* Slurm's own priority (first seen) */
  double submit;   /* submit time */
  int has_est;     /* an estimate exists */
  double est;      /* expected duration */
  uint32_t cur;    /* current priority */
  uint32_t target; /* out: the priority it should have */
  int rank;        /* out: its place in the SchedMate order, 0 first */
} sm__oj;

/* Lowest and highest priority the agent sets (0 is held, 1 means that
 * required nodes are down; the top values are Slurm's NO_VAL/INFINITE). */
#define SM__PRIO_MIN 2u
#define SM__PRIO_MAX 0xFFFFFFFDu

/* Computes targets: the SchedMate order (fallback jobs keep their places
 * in Slurm's own order; jobs with an estimate fill the other places,
 * shortest first) and the fewest priority changes that make Slurm follow
 * it.  Returns the number of jobs whose target differs from cur, or
 * SM_ENOMEM. */
int sm__order_plan(sm__oj *jobs, int n);

/* ==== audit.c: the audit log ==== */

/* Opens an audit record: {"time", "epoch", "mode", "channel",
 * "decision", "job"} are written; the caller adds members and ends it
 * with sm__audit_end, which adds "executed" and "result" and appends the
 * line.  job 0 writes null. */
void sm__audit_begin(sm_slurm_agent *a, sm_jw *w, sm_buf *b,
                     const char *channel, const char *decision, uint32_t job);
void sm__audit_end(sm_slurm_agent *a, sm_jw *w, sm_buf *b, int executed,
                   const char *result);

/* ==== report.c: status and metrics files ==== */

/* Rewrites the status and metrics files (atomically). */
void sm__report_write(sm_slurm_agent *a);

/* ==== channels ==== */

/* submit.c: advise one job (reads its batch script); j->meta gets the
 * metadata.  Returns 0, the script's error while it may still be retried
 * (*script_rc says which), or SM_ENOMEM. */
int sm__advise_slurm_job(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                         sm__advice_sum *sum, sm_jw *w, int *script_rc,
                         sm_err *err);
/* submit.c: advise new pending jobs, then order each partition. */
void sm__submit_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n);
void sm__order_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n);
/* run.c: follow running jobs; flag interference. */
void sm__run_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n);
/* Forgets a job's tracker. */
void sm__run_forget(sm__sjob *j);
/* Writes a job's "log", "log_status", "progress" and "slowdown" members
 * into the open status object. */
void sm__run_json(const sm__sjob *j, sm_jw *w);
/* Brings a job's progress up to date at its end (a last poll, or one
 * scan of its log when it was never followed). */
void sm__run_final(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j);
/* Writes the job's progress object (the Tracker's answer) or null. */
void sm__run_progress(const sm__sjob *j, sm_jw *w);
/* Newest throughput the Tracker saw, or NAN. */
double sm__run_throughput(const sm__sjob *j);
/* Appends the per-job Prometheus series of running jobs. */
void sm__run_prom(sm_slurm_agent *a, sm_buf *b);
/* gpu.c: the GPU metrics of a run that ended (the node samplers' files,
 * else Slurm's accounting); u is initialised here.  With may_wait, 1
 * means that a sampler has not yet written the run's end: try again
 * later.  Otherwise 0 (u->found says whether anything was found). */
int sm__gpu_usage(sm_slurm_agent *a, const sm_slurm_job *sj, int may_wait,
                  sm_gpu_usage *u);
/* exit.c: diagnose, act and write back ended jobs. */
void sm__exit_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n);

#endif /* SM_SLURM_INT_H */
