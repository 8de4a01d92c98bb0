/* sm_sim.h - the trace-driven GPU cluster simulator.
 *
 * A trace (real or synthetic) is replayed on a cluster of nodes x GPUs,
 * optionally split into virtual clusters (VCs) and GPU types of different
 * speeds, under one scheduling policy.  The engine is event driven: job
 * arrivals, completions, failures, policy timers and scheduling rounds are
 * events in a binary heap, so a run costs time in proportion to its
 * events, not to the simulated seconds.
 *
 * Three layers, each usable on its own:
 *   traces    sm_sim_trace_load / _load_mem / _synthetic: every supported
 *             layout becomes one array of sm_sim_job with trace facts;
 *   clusters  sm_sim_cluster_parse / _load_vcs / _auto;
 *   runs      sm_sim_run(trace, cluster, config) -> sm_sim_result, with a
 *             JSON summary, a per-job CSV and an HTML report.
 *
 * Policies are modules behind struct sm_sim_policy; they see jobs and call
 * the engine functions declared under "Engine calls for policies".  New
 * policies register with sm_sim_policy_register without engine changes.
 */
#ifndef SM_SIM_H
#define SM_SIM_H

#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Constants ==== */

/* How a job ended, in the trace and in the simulation. */
typedef enum sm_sim_end {
  SM_SIM_END_COMPLETED = 0, /* finished normally */
  SM_SIM_END_CANCELED = 1,  /* stopped by its user */
  SM_SIM_END_FAILED = 2,    /* ended by an error */
  SM_SIM_END_UNKNOWN = 3    /* the trace does not say */
} sm_sim_end;

/* Where a job is in its life. */
typedef enum sm_sim_status {
  SM_SIM_JOB_FUTURE = 0,  /* not submitted yet */
  SM_SIM_JOB_PENDING = 1, /* submitted, waiting for GPUs */
  SM_SIM_JOB_RUNNING = 2, /* holds GPUs and makes progress */
  SM_SIM_JOB_DONE = 3,    /* ended (any final state) */
  SM_SIM_JOB_DROPPED = 4, /* removed before the run (see the notes) */
  SM_SIM_JOB_DELAYED = 5  /* restarting after a failure, not yet back */
} sm_sim_status;

/* Trace layouts. */
typedef enum sm_sim_format {
  SM_SIM_FMT_AUTO = 0,   /* detect from the header */
  SM_SIM_FMT_SIA_PHILLY, /* timestamp,duration,num_gpus,gpu_time,cluster */
  SM_SIM_FMT_HELIOS,     /* Helios / Lucid cluster_log.csv */
  SM_SIM_FMT_ACME,       /* Acme trace_seren.csv / trace_kalos.csv */
  SM_SIM_FMT_TIRESIAS,   /* Tiresias / Chronus job files */
  SM_SIM_FMT_SIA,        /* Sia workload-N.csv */
  SM_SIM_FMT_GENERIC,    /* job_id,submit_s,duration_s,gpus[,...] */
  SM_SIM_FMT_SYNTHETIC   /* made by sm_sim_trace_synthetic */
} sm_sim_format;

/* Placement policies. */
typedef enum sm_sim_placement {
  SM_SIM_PLACE_CONSOLIDATE = 0, /* fewest nodes, tightest fit */
  SM_SIM_PLACE_FIRST_FIT = 1    /* lowest-numbered nodes with free GPUs */
} sm_sim_placement;

/* What to do with a job that asks for more GPUs than its VC has. */
typedef enum sm_sim_oversize {
  SM_SIM_OVERSIZE_CAP = 0,  /* run it on the whole VC (noted) */
  SM_SIM_OVERSIZE_DROP = 1, /* leave it out (noted) */
  SM_SIM_OVERSIZE_ERROR = 2 /* refuse the run, naming the trace line */
} sm_sim_oversize;

/* Policy flags. */
#define SM_SIM_POLICY_PREEMPTIVE 0x1u /* may preempt running jobs */
#define SM_SIM_POLICY_SEMANTIC 0x2u   /* consumes SchedMate's facts */
/* Always consumes them: its runs are "semantic on" whatever the config
 * says. */
#define SM_SIM_POLICY_FACTS 0x4u
/* Profiles jobs on dedicated nodes: sm_sim_run carves them out of the
 * cluster for its runs (sm_sim_cluster_carve). */
#define SM_SIM_POLICY_PROFILER 0x8u
/* Its facts come from its own history of the run's jobs only (Sia +
 * SchedMate seeds models from jobs that ended): the calibrated and oracle
 * sources are not defined for it, and a comparison runs it once, under
 * "history". */
#define SM_SIM_POLICY_HISTORY_ONLY 0x10u

/* ==== Jobs ==== */

/* An extra column of a trace row ("model", "dataset", ...). */
typedef struct sm_sim_attr {
  const char *key;   /* column name */
  const char *value; /* cell text, never NULL */
} sm_sim_attr;

typedef struct sm_sim_jstate sm_sim_jstate; /* engine-private */

/* One job.  The trace facts are fixed when the trace is loaded; the
 * simulation state is kept by the engine and may be read by policies; the
 * policy scratch fields belong to the running policy.  What else the
 * engine keeps per job (placement, pending end, failure) is behind _run,
 * which only the engine reads. */
typedef struct sm_sim_job {
  /* Trace facts. */
  uint32_t idx;             /* position in submit order, 0-based */
  int line;                 /* trace line (1-based), 0 when synthetic */
  const char *id;           /* job id from the trace, or the line number */
  const char *user;         /* user, "" when the trace has none */
  const char *name;         /* job name, "" when none */
  const char *vc_name;      /* virtual cluster, "" when none */
  const char *gpu_type;     /* requested GPU type, "" for any */
  double submit;            /* seconds since the first submission */
  double duration;          /* true run time at speed 1.0, seconds */
  double estimate;          /* duration estimate carried by the trace, or
                               NaN */
  int gpus;                 /* GPUs requested (after any repair) */
  int trace_gpus;           /* GPUs as written in the trace */
  int nodes;                /* nodes named by the trace, 0 = unknown */
  int end_state;            /* sm_sim_end recorded by the trace */
  int nattrs;               /* number of extra columns */
  const sm_sim_attr *attrs; /* extra columns, nattrs entries */

  /* Simulation state (read-only for policies). */
  int vc;             /* VC index in the cluster */
  int status;         /* sm_sim_status */
  int final_state;    /* sm_sim_end reached in the simulation */
  double first_start; /* first start time, NaN before */
  double end;         /* end time, NaN before */
  double work_left;   /* work still needed, seconds at speed 1.0,
                         including added overheads */
  double executed;    /* wall seconds spent holding GPUs */
  double attained;    /* GPU-seconds of service so far */
  double overhead;    /* seconds of overhead added so far */
  double rate;        /* current speed (work per second) */
  double queued;      /* total seconds spent pending */
  double wait_since;  /* when it last became pending */
  double last_update; /* when work_left/executed/attained were
                         last brought up to date */
  int preemptions;    /* times preempted */
  int restarts;       /* times restarted after an end */
  int starts;         /* times started */
  int shared;         /* 1 while it shares another job's GPUs */
  /* The simulated world of the SchedMate integrations, set by runs whose
   * policy models it (lucid*, sjf-schedmate*; "" and 0 otherwise), from
   * submission-time information only.  Written to the per-job CSV so
   * that a run can be checked for answers leaked into the facts. */
  const char *workload; /* workload template and variant, e.g.
                           "bert-squad/2", or "" */
  const char *profile;  /* the profile it runs with, or "" */
  uint64_t fingerprint; /* hash of the fingerprint SchedMate built at its
                           submission, 0 when none (calibrated) */

  /* Policy scratch: the engine never reads or writes these. */
  double pkey;  /* priority key */
  double pkey2; /* secondary key */
  int plevel;   /* queue level */
  int pflag;    /* free use */
  void *pdata;  /* free use */

  /* Engine-private: do not touch (NULL outside a run and its result). */
  sm_sim_jstate *_run;
} sm_sim_job;

/* Returns "completed", "canceled", "failed" or "unknown". */
SM_EXTERN const char *sm_sim_end_name(int end_state);
/* Returns the value of the extra column key, or NULL. */
SM_EXTERN const char *sm_sim_job_attr(const sm_sim_job *j, const char *key);

/* ==== Traces ==== */

typedef struct sm_sim_trace sm_sim_trace;

/* How to read a trace.  Initialise with sm_sim_load_opts_init. */
typedef struct sm_sim_load_opts {
  int format;            /* sm_sim_format, SM_SIM_FMT_AUTO to detect */
  const char *from;      /* keep jobs submitted at or after this time
                            (datetime or seconds as in the trace), or NULL */
  const char *to;        /* ... and at or before this time, or NULL */
  size_t limit;          /* keep at most this many jobs, 0 = all */
  uint64_t seed;         /* for layouts whose durations are drawn (Sia) */
  const char *estimates; /* CSV job_id,<estimate|priority> to attach, or
                            NULL */
  size_t max_jobs;       /* refuse traces with more rows (0: 20 million) */
} sm_sim_load_opts;

SM_EXTERN void sm_sim_load_opts_init(sm_sim_load_opts *o);

/* Reads a trace file, plain or gzip-compressed (detected from its bytes).
 * Rows are sorted by submit time when they are not (a noted repair).
 * Errors name the file, the line and the column.  On success *out owns
 * everything; free it with sm_sim_trace_free. */
SM_EXTERN int sm_sim_trace_load(const char *path, const sm_sim_load_opts *o,
                                sm_sim_trace **out, sm_err *err);

/* As sm_sim_trace_load, from memory; name is used in messages. */
SM_EXTERN int sm_sim_trace_load_mem(const char *data, size_t len,
                                    const char *name, const sm_sim_load_opts *o,
                                    sm_sim_trace **out, sm_err *err);

/* Options of the synthetic generator. */
typedef struct sm_sim_synth_opts {
  double days;             /* simulated span of submissions (default 7) */
  size_t jobs;             /* exact job count instead of days x rate, 0 */
  uint64_t seed;           /* generator seed */
  const char *calibration; /* a summary CSV (Acme or Helios layout) to
                              read instead of the built-in figures */
} sm_sim_synth_opts;

SM_EXTERN void sm_sim_synth_opts_init(sm_sim_synth_opts *o);

/* Generates a synthetic trace calibrated to one cluster's published
 * summary ("venus", "earth", "saturn", "uranus", "seren", "kalos").  The
 * trace is marked synthetic; every summary and report made from it says
 * so. */
SM_EXTERN int sm_sim_trace_synthetic(const char *cluster,
                                     const sm_sim_synth_opts *o,
                                     sm_sim_trace **out, sm_err *err);
/* Names of the clusters the generator knows, NULL-terminated. */
SM_EXTERN const char *const *sm_sim_synth_clusters(void);

/* Releases the caller's hold on t; results made from it keep it alive
 * until they are freed too. */
SM_EXTERN void sm_sim_trace_free(sm_sim_trace *t);
SM_EXTERN size_t sm_sim_trace_count(const sm_sim_trace *t);
SM_EXTERN const sm_sim_job *sm_sim_trace_job(const sm_sim_trace *t, size_t i);
/* The path or "synthetic:<cluster>". */
SM_EXTERN const char *sm_sim_trace_name(const sm_sim_trace *t);
SM_EXTERN int sm_sim_trace_format(const sm_sim_trace *t);
SM_EXTERN const char *sm_sim_format_name(int format);
/* Parses "auto", "sia-philly", "helios", "lucid", "acme", "tiresias",
 * "chronus", "sia", "generic"; -1 if unknown. */
SM_EXTERN int sm_sim_format_parse(const char *s);
SM_EXTERN int sm_sim_trace_synthetic_p(const sm_sim_trace *t);
/* GPUs of the cluster the synthetic trace was calibrated to, else 0. */
SM_EXTERN int sm_sim_trace_calibrated_gpus(const sm_sim_trace *t);
/* Notes about repairs and assumptions (sorted rows, skipped CPU jobs,
 * drawn durations ...), one line each. */
SM_EXTERN size_t sm_sim_trace_note_count(const sm_sim_trace *t);
SM_EXTERN const char *sm_sim_trace_note(const sm_sim_trace *t, size_t i);

/* ==== Clusters ==== */

typedef struct sm_sim_cluster sm_sim_cluster;

/* Parses a cluster spec: comma-separated groups
 *   [VC=]NODESxGPUS[:TYPE[@SPEED]]
 * e.g. "64x8", "a=4x8,b=2x8", "16x8:a100@1.0,16x8:v100@0.5".  Groups
 * without a VC name form one anonymous VC that every job uses.  Named and
 * anonymous groups cannot be mixed. */
SM_EXTERN int sm_sim_cluster_parse(const char *spec, sm_sim_cluster **out,
                                   sm_err *err);
/* Reads a VC table: the Helios layout "vc,node num", Lucid's ",num", or
 * "vc,nodes[,gpus_per_node[,gpu_type[,speed]]]".  gpus_per_node applies
 * where the file does not say. */
SM_EXTERN int sm_sim_cluster_load_vcs(const char *path, int gpus_per_node,
                                      sm_sim_cluster **out, sm_err *err);
/* One anonymous VC sized for the trace: enough nodes that the trace's
 * GPU-time fills load (0 < load <= 1) of the cluster over the span of
 * its submissions, and never fewer than the largest job needs. */
SM_EXTERN int sm_sim_cluster_auto(const sm_sim_trace *t, int gpus_per_node,
                                  double load, sm_sim_cluster **out,
                                  sm_err *err);
/* A copy of c in which the last `nodes` nodes of VC donor (NULL: the VC
 * with the most nodes, the first of equals) form a new VC called name,
 * e.g. Lucid's profiling partition.  The donor keeps at least one node;
 * an anonymous cluster stays anonymous for the jobs (they all use its
 * first VC).  SM_EINVAL names the problem (unknown donor, too few nodes,
 * name taken). */
SM_EXTERN int sm_sim_cluster_carve(const sm_sim_cluster *c, const char *donor,
                                   int nodes, const char *name,
                                   sm_sim_cluster **out, sm_err *err);
SM_EXTERN void sm_sim_cluster_free(sm_sim_cluster *c);
SM_EXTERN int sm_sim_cluster_nodes(const sm_sim_cluster *c);
SM_EXTERN int sm_sim_cluster_gpus(const sm_sim_cluster *c);
SM_EXTERN int sm_sim_cluster_vc_count(const sm_sim_cluster *c);
SM_EXTERN const char *sm_sim_cluster_vc_name(const sm_sim_cluster *c, int vc);
SM_EXTERN int sm_sim_cluster_vc_gpus(const sm_sim_cluster *c, int vc);
/* A one-line description, e.g. "352 nodes x 8 GPUs in 11 VCs". */
SM_EXTERN const char *sm_sim_cluster_describe(const sm_sim_cluster *c);
/* How the cluster was made, for reports: "the VC table FILE", "given as
 * 'SPEC'", or how sm_sim_cluster_auto sized it; set_origin replaces it
 * (e.g. "the calibrated size of Kalos"). */
SM_EXTERN const char *sm_sim_cluster_origin(const sm_sim_cluster *c);
SM_EXTERN void sm_sim_cluster_set_origin(sm_sim_cluster *c, const char *text);

/* ==== Runs ==== */

typedef struct sm_sim sm_sim;
typedef struct sm_sim_result sm_sim_result;

/* Called now and then during a run with the share of jobs submitted so
 * far (0..1).  Must not call back into the simulator. */
typedef void (*sm_sim_progress_fn)(void *ud, double done);

#define SM_SIM_MAX_PARAMS 32

/* One policy parameter as given: "KEY=VALUE" of --param, or a command
 * option that sets one (--estimator E is estimator=E).  The strings are
 * borrowed and must outlive the runs. */
typedef struct sm_sim_setting {
  const char *key;   /* the parameter's name (keylen bytes, not
                        necessarily NUL-terminated there) */
  size_t keylen;     /* its length */
  const char *value; /* its text, NUL-terminated */
} sm_sim_setting;

/* Everything a run needs besides the trace and the cluster.  Initialise
 * with sm_sim_config_init. */
typedef struct sm_sim_config {
  const char *policy;     /* policy name (default "fifo") */
  int placement;          /* sm_sim_placement */
  int oversize;           /* sm_sim_oversize */
  int unknown_vc_error;   /* 1: a job of a VC the cluster lacks is an
                             error; 0: it is dropped (noted) */
  const char *semantic;   /* "off" or "on" (policy must support it) */
  double preempt_small_s; /* restart overhead after a preemption, jobs
                             of at most overhead_gpus GPUs (40) */
  double preempt_large_s; /* the same above overhead_gpus (60) */
  int overhead_gpus;      /* the boundary (8) */
  uint64_t seed;          /* run seed (estimator noise, policies) */
  int nparams;            /* entries used in params */
  sm_sim_setting params[SM_SIM_MAX_PARAMS]; /* parameter settings in the
                                               order given (the last of a
                                               key wins); a run parses
                                               them once into its typed
                                               parameters */
  sm_sim_progress_fn progress;              /* optional progress callback */
  void *progress_ud;                        /* its argument */
} sm_sim_config;

SM_EXTERN void sm_sim_config_init(sm_sim_config *c);
/* Adds the setting "key=value" (borrowed) to c.  SM_ELIMIT when full,
 * SM_EINVAL when it has no '=' or no key.  The parameters are listed in
 * docs/simulator.md; a key no policy knows is kept (a policy registered
 * by the program may read it) and reported as ignored by the runs that
 * do not read it. */
SM_EXTERN int sm_sim_config_param(sm_sim_config *c, const char *kv);
/* The same with the key and the value apart (both borrowed): SM_EINVAL
 * for an empty key, one with '=', or a NULL value. */
SM_EXTERN int sm_sim_config_set(sm_sim_config *c, const char *key,
                                const char *value);
/* The value of the last setting of key in c, or NULL. */
SM_EXTERN const char *sm_sim_config_get(const sm_sim_config *c,
                                        const char *key);

/* Runs one policy over the trace on the cluster.  Checks the invariants
 * (no GPU over-allocated, starts after submissions, ends after starts,
 * work conserved) at the end of every run and fails with SM_ECORRUPT
 * if one is broken.  *out is freed with sm_sim_result_free; it holds a
 * reference to the trace, which may be freed before it.  Runs on one
 * trace may proceed in parallel threads. */
SM_EXTERN int sm_sim_run(const sm_sim_trace *t, const sm_sim_cluster *c,
                         const sm_sim_config *cfg, sm_sim_result **out,
                         sm_err *err);
SM_EXTERN void sm_sim_result_free(sm_sim_result *r);

/* The headline figures of one run. */
typedef struct sm_sim_summary {
  const char *policy;                 /* policy name */
  const char *semantic;               /* "off" / "on" */
  const char *trace;                  /* trace name */
  int synthetic;                      /* 1 when the trace is synthetic */
  size_t jobs;                        /* jobs simulated (not dropped) */
  size_t completed, canceled, failed; /* final states */
  size_t unfinished;                  /* jobs that never ended (no room ever) */
  size_t dropped;                     /* jobs left out before the run */
  double avg_jct_s;      /* mean job completion time (end - submit) */
  double median_jct_s;   /* median JCT */
  double p99_jct_s;      /* 99th percentile JCT (nearest rank) */
  double avg_queue_s;    /* mean first start - submit */
  double median_queue_s; /* median of the same */
  double p99_queue_s;    /* 99th percentile of the same */
  double avg_wait_s;     /* mean total time pending, all waits: the
                            queueing delay of Lucid and of the reports */
  double median_wait_s;  /* median of the same */
  double p99_wait_s;     /* 99th percentile of the same */
  double makespan_s;     /* last end - first submit */
  double avg_util;       /* busy GPU-seconds / (GPUs x makespan) */
  size_t peak_pending;   /* largest number of pending jobs */
  size_t preemptions;    /* total preemptions */
  size_t restarts;       /* total restarts after failures */
  size_t events;         /* events processed */
  double wall_s;         /* wall-clock seconds of the run */
  double jobs_per_s;     /* jobs / wall_s */
  int gpus;              /* GPUs in the cluster */
  int nodes;             /* nodes in the cluster */
  int vcs;               /* VCs in the cluster */
  const char *facts;     /* facts source of a run that consumes
                            SchedMate's facts ("history", "calibrated",
                            "oracle"), else "" */
  double offered_load;   /* GPU-time of the simulated jobs / (GPUs x the
                            span from the first submission to the last
                            submission + run time) */
} sm_sim_summary;

SM_EXTERN const sm_sim_summary *sm_sim_result_summary(const sm_sim_result *r);
/* Writes the summary as one JSON object (docs/design.md section 3 keys and
 * more) at the writer's position. */
SM_EXTERN void sm_sim_result_json(const sm_sim_result *r, sm_jw *w);
/* Appends the per-job CSV (header + one row per job) to out. */
SM_EXTERN int sm_sim_result_jobs_csv(const sm_sim_result *r, sm_buf *out);
/* Notes of the run (trace notes, then run repairs), one line each. */
SM_EXTERN size_t sm_sim_result_note_count(const sm_sim_result *r);
SM_EXTERN const char *sm_sim_result_note(const sm_sim_result *r, size_t i);
/* 1 when the run looked parameter key up (whether it was given or not):
 * the settings that can change this run. */
SM_EXTERN int sm_sim_result_reads_param(const sm_sim_result *r,
                                        const char *key);
/* Why jobs were left out before the run (e.g. "18 jobs of 4 VCs the
 * cluster does not have: 23dbec (11), ..."), "" when none were. */
SM_EXTERN const char *sm_sim_result_dropped_why(const sm_sim_result *r);
/* How the run's cluster was made (sm_sim_cluster_origin). */
SM_EXTERN const char *sm_sim_result_cluster_origin(const sm_sim_result *r);
/* Extra figures recorded by the policy (sm_sim_stat_add), in order. */
SM_EXTERN size_t sm_sim_result_stat_count(const sm_sim_result *r);
SM_EXTERN const char *sm_sim_result_stat(const sm_sim_result *r, size_t i,
                                         double *value);
/* The per-job outcome of job i of the trace (dropped jobs included, with
 * status SM_SIM_JOB_DROPPED). */
SM_EXTERN size_t sm_sim_result_job_count(const sm_sim_result *r);
SM_EXTERN const sm_sim_job *sm_sim_result_job(const sm_sim_result *r, size_t i);
/* Time series (a step function): n points of time (s), busy GPUs and
 * pending jobs, each valid from its time to the next point's. */
SM_EXTERN size_t sm_sim_result_series(const sm_sim_result *r, const double **t,
                                      const int **busy, const int **pending);

/* Writes a self-contained HTML page (inline SVG, no scripts, no network)
 * comparing the runs: summary table, JCT CDF per policy, queue length
 * and GPU utilisation over time, and the notes. */
SM_EXTERN int sm_sim_report_html(const sm_sim_result *const *runs, size_t n,
                                 sm_buf *out);

/* One point of a parameter sweep: run `run` of the comparison (a
 * SchedMate path) rerun with the parameter at value. */
typedef struct sm_sim_sweep_point {
  size_t run;       /* index of the path's run in the comparison */
  double value;     /* the parameter's value */
  double avg_jct_s; /* the rerun's average JCT */
  double evictions; /* its evictions (Lucid + SchedMate), else 0 */
  double p99_jct_s; /* its p99 JCT */
} sm_sim_sweep_point;

/* The point of a sweep that result r (the rerun of run `run` with the
 * parameter at value) makes. */
SM_EXTERN sm_sim_sweep_point sm_sim_sweep_point_of(const sm_sim_result *r,
                                                   size_t run, double value);

/* Options of sm_sim_report_html_ex; zero for none. */
typedef struct sm_sim_report_opts {
  const char *sweep_param;         /* the swept parameter, or NULL */
  const sm_sim_sweep_point *sweep; /* its points, grouped by run, in the
                                      order of the values */
  size_t nsweep;                   /* their count */
} sm_sim_report_opts;

/* sm_sim_report_html with a parameter sweep drawn as a curve (for
 * lucid.untracked: average JCT against the Tracker's detection rate,
 * beside the reference design's figure). */
SM_EXTERN int sm_sim_report_html_ex(const sm_sim_result *const *runs, size_t n,
                                    const sm_sim_report_opts *o, sm_buf *out);

/* ==== SchedMate paths against their baselines ==== */

/* One SchedMate path compared with the policy it improves, both in the
 * same comparison: lucid+schedmate against lucid, sjf-schedmate against
 * qssf and tiresias, sjf-schedmate+fh against sjf-schedmate.  Ratios are
 * baseline / path (above 1: the path is better). */
typedef struct sm_sim_speedup {
  const char *path;        /* the SchedMate policy */
  const char *baseline;    /* the policy it is compared with */
  const char *facts;       /* the path's facts source */
  size_t path_run;         /* index of the path's run */
  size_t base_run;         /* index of the baseline's run */
  double avg_jct_speedup;  /* baseline avg JCT / path avg JCT */
  double p99_jct_speedup;  /* the same for the p99 JCT */
  double avg_wait_speedup; /* the same for the average queueing delay
                              (all time pending) */
  double makespan_speedup; /* the same for the makespan */
  double avg_jct_change;   /* path avg JCT / baseline - 1 */
} sm_sim_speedup;

/* Fills out with the SchedMate paths found among runs (at most max), one
 * per path run (a path run once per facts source gives one entry per
 * source, each against a baseline with no facts or the same ones);
 * returns their count. */
SM_EXTERN size_t sm_sim_speedups(const sm_sim_result *const *runs, size_t n,
                                 sm_sim_speedup *out, size_t max);
/* The name of run i in a comparison: its policy, followed by its facts
 * source in brackets when another run of the same policy used another
 * source ("lucid+schedmate [calibrated]").  Written into buf. */
SM_EXTERN const char *sm_sim_result_label(const sm_sim_result *const *runs,
                                          size_t n, size_t i, char *buf,
                                          size_t cap);
/* A figure recorded by the run's policy (sm_sim_stat_add) by name: 1 and
 * *value when present, else 0. */
SM_EXTERN int sm_sim_result_stat_get(const sm_sim_result *r, const char *name,
                                     double *value);

#define SM_SIM_MAX_SPEEDUPS 64

/* The SchedMate part of a comparison, the same for every writer (the
 * command's text and JSON, the HTML report).  Strings point into the
 * runs or are constants: valid while the runs are. */
typedef struct sm_sim_schedmate_summary {
  int any;                /* 0: no run consumed facts and no path has its
                             baseline: nothing to show */
  int synthetic;          /* the trace is synthetic */
  const char *workloads;  /* the workload catalogue given to the runs
                             (fingerprints from its templates), or NULL
                             (from the trace's attributes only) */
  const char *sources[3]; /* facts sources of the runs, first used first */
  size_t nsources;        /* their count */
  sm_sim_speedup speedups[SM_SIM_MAX_SPEEDUPS]; /* sm_sim_speedups */
  size_t nspeedups;                             /* their count */
  double offered_load;     /* of the trace on the cluster */
  double util_lo, util_hi; /* GPU utilisation: the range over the runs */
  const char *fail_model;  /* the failure model: "trace" or "resubmit" */
  double fail_infra_share; /* share of failed jobs with an
                              infrastructure cause */
  double infra_failures;   /* infrastructure failures the first run met */
} sm_sim_schedmate_summary;

/* Fills out from the n runs of a comparison. */
SM_EXTERN void sm_sim_schedmate_summarize(const sm_sim_result *const *runs,
                                          size_t n,
                                          sm_sim_schedmate_summary *out);
/* One sentence (no final period) on what a facts source ("history",
 * "calibrated", "oracle") is. */
SM_EXTERN const char *sm_sim_facts_meaning(const char *source);
/* Appends the failure model's line ("failures: model ...", plain text). */
SM_EXTERN void sm_sim_failures_line(const sm_sim_schedmate_summary *s,
                                    sm_buf *out);
/* When run i consumed SchedMate's facts, appends one line (plain text,
 * no final period) with what they did: its label, the hit rate, and for
 * Lucid + SchedMate the profiling saved and the Tracker's evictions, for
 * the Failure Handler its restarts, for Sia + SchedMate the restarts
 * avoided against a "sia" run of the comparison; returns 1.  Else
 * returns 0. */
SM_EXTERN int sm_sim_schedmate_line(const sm_sim_result *const *runs, size_t n,
                                    size_t i, sm_buf *out);

/* ==== Policies ==== */

/* A scheduling policy.  All callbacks are optional except schedule.  The
 * engine calls arrive when a job is submitted (or comes back after a
 * restart), finish when it ends, timer for the policy's own timers, and
 * schedule(vc) after the events of one instant that touched that VC, or
 * for policies that set a round interval, at the next multiple of it. */
typedef struct sm_sim_policy {
  const char *name;    /* command-line name, e.g. "tiresias" */
  const char *summary; /* one line for --help */
  unsigned flags;      /* SM_SIM_POLICY_* */
  /* Sets *state up; returns 0 or a negative SM_E* with err filled. */
  int (*init)(sm_sim *s, void **state, sm_err *err);
  void (*release)(sm_sim *s, void *state);
  void (*arrive)(sm_sim *s, void *state, sm_sim_job *j);
  /* j has ended (j->final_state says how).  The policy may call
   * sm_sim_job_restart to bring it back instead. */
  void (*finish)(sm_sim *s, void *state, sm_sim_job *j);
  void (*timer)(sm_sim *s, void *state, sm_sim_job *j, int kind, uint64_t arg);
  void (*schedule)(sm_sim *s, void *state, int vc);
  /* After the last event, before the figures are taken: a place to add
   * statistics (sm_sim_stat_add) and notes. */
  void (*finalize)(sm_sim *s, void *state);
  /* Optional: a policy with its own job model (Sia's elastic jobs) runs
   * the whole simulation itself; sm_sim_run then only calls this. */
  int (*run)(const sm_sim_trace *t, const sm_sim_cluster *c,
             const sm_sim_config *cfg, sm_sim_result **out, sm_err *err);
} sm_sim_policy;

/* Looks a policy up by name; NULL if unknown. */
SM_EXTERN const sm_sim_policy *sm_sim_policy_find(const char *name);
/* Registered policies, built-ins first; NULL past the end. */
SM_EXTERN const sm_sim_policy *sm_sim_policy_at(size_t i);
/* Adds a policy (borrowed, must outlive its use).  SM_EINVAL for a
 * duplicate name or a missing schedule, SM_ELIMIT when the table is
 * full. */
SM_EXTERN int sm_sim_policy_register(const sm_sim_policy *p);

/* ==== Engine calls for policies ==== */

SM_EXTERN double sm_sim_now(const sm_sim *s);
SM_EXTERN const sm_sim_config *sm_sim_config_of(const sm_sim *s);
SM_EXTERN size_t sm_sim_job_count(const sm_sim *s);
SM_EXTERN sm_sim_job *sm_sim_job_at(sm_sim *s, size_t idx);
SM_EXTERN int sm_sim_vc_count(const sm_sim *s);
/* Index of the VC called name (exact, also in anonymous clusters), or
 * -1. */
SM_EXTERN int sm_sim_vc_find(const sm_sim *s, const char *name);
/* GPUs of the VC on nodes that are up, and how many of them are free. */
SM_EXTERN int sm_sim_vc_gpus(const sm_sim *s, int vc);
SM_EXTERN int sm_sim_vc_free(const sm_sim *s, int vc);
/* Brings j's work_left, executed and attained up to now. */
SM_EXTERN void sm_sim_job_update(sm_sim *s, sm_sim_job *j);
/* Tries to place a pending job with the configured placement and start
 * it.  Returns 1 when it started, 0 when there is no room. */
SM_EXTERN int sm_sim_start(sm_sim *s, sm_sim_job *j);
/* As sm_sim_start, on the nodes of another VC (a profiling partition, a
 * borrowed VC); the job keeps its own VC for everything else. */
SM_EXTERN int sm_sim_start_in(sm_sim *s, sm_sim_job *j, int vc);
/* Starts pending job j on the GPUs of running job host (same GPU count,
 * no other job on them) at speed rate, and sets host's speed to
 * host_rate.  Returns 1, or 0 when the GPUs cannot be shared. */
SM_EXTERN int sm_sim_start_shared(sm_sim *s, sm_sim_job *j, sm_sim_job *host,
                                  double rate, double host_rate);
/* Stops a running job and makes it pending again; its restart costs the
 * preemption overhead (added to work_left).  The policy re-queues it. */
SM_EXTERN void sm_sim_preempt(sm_sim *s, sm_sim_job *j);
/* As sm_sim_preempt with an explicit amount of work added to what the job
 * still needs (seconds at speed 1.0, >= 0; negative counts as 0): the
 * restart overhead, or the progress lost since its last checkpoint.  A
 * job sharing GPUs leaves its peer running at the peer's current speed
 * (set it with sm_sim_set_rate). */
SM_EXTERN void sm_sim_stop(sm_sim *s, sm_sim_job *j, double extra_work);
/* Sets a running job's speed (work per second). */
SM_EXTERN void sm_sim_set_rate(sm_sim *s, sm_sim_job *j, double rate);
/* Arms a policy timer: timer(s, state, j, kind, arg) at time at (>= now).
 * j may be NULL. */
SM_EXTERN int sm_sim_timer(sm_sim *s, double at, sm_sim_job *j, int kind,
                           uint64_t arg);
/* Asks for schedule(vc) after the current instant (or round). */
SM_EXTERN void sm_sim_mark_dirty(sm_sim *s, int vc);
/* Sets the scheduling round interval in seconds (0: after every instant
 * with events, the default).  Call from init. */
SM_EXTERN void sm_sim_set_round_interval(sm_sim *s, double seconds);
/* From finish: brings an ended job back after delay seconds with
 * work_left seconds of work (its history is kept; restarts counts it). */
SM_EXTERN int sm_sim_job_restart(sm_sim *s, sm_sim_job *j, double work_left,
                                 double delay);
/* Sets how j's next normal end counts (SM_SIM_END_COMPLETED, _CANCELED,
 * _FAILED), instead of the state the trace recorded: e.g. a job restarted
 * after an infrastructure failure completes.  A failure armed with
 * sm_sim_job_fail_at still counts as a failure. */
SM_EXTERN void sm_sim_job_set_outcome(sm_sim *s, sm_sim_job *j, int end_state);
/* 1 when j's recorded failure has an infrastructure cause: a share
 * fail.infra_share (default 0.35) of the trace's failed jobs, drawn per
 * job from the run seed, so that every policy of a comparison meets the
 * same failures.  What happens next is the failure model (parameter
 * fail.model): "trace" (default) ends the job as the trace recorded it;
 * "resubmit" has its user resubmit it fail.resubmit_s (600) seconds
 * later, to start over and complete: the trace's run time is where the
 * fault struck, and the job needed fail.rest (1.0) times as much again.
 * A policy that recovers the job itself (sm_sim_job_restart from its
 * finish callback, e.g. the Failure Handler) takes precedence. */
SM_EXTERN int sm_sim_job_infra(const sm_sim *s, const sm_sim_job *j);
/* Makes a job fail once work_left drops to at_work_left (NaN: never). */
SM_EXTERN void sm_sim_job_fail_at(sm_sim *s, sm_sim_job *j,
                                  double at_work_left);
/* Takes a node out of service until time until (running jobs on it keep
 * running; its free GPUs are not offered).  Node indices run over the
 * whole cluster; sm_sim_job_nodes lists a job's. */
SM_EXTERN int sm_sim_node_down(sm_sim *s, int node, double until);
/* Writes up to max node indices of j's placement into nodes (the nodes it
 * holds, or held when it last stopped or ended); returns their count. */
SM_EXTERN int sm_sim_job_nodes(const sm_sim_job *j, int *nodes, int max);
/* Restart overhead of a preemption for j (40 s / 60 s by default). */
SM_EXTERN double sm_sim_preempt_overhead(const sm_sim *s, const sm_sim_job *j);
/* Adds delta to a named figure of the run (created at 0; listed in the
 * order first added).  The built-in policies' figures are typed fields
 * of the library; a registered policy names its own here. */
SM_EXTERN int sm_sim_stat_add(sm_sim *s, const char *name, double delta);
/* Adds a note (one line) to the run's report. */
SM_EXTERN int sm_sim_note(sm_sim *s, const char *fmt, ...) SM_PRINTF(2, 3);
/* The value of parameter key (the last setting of it), or def when
 * absent or not a number; sm_sim_param_str returns NULL when absent.
 * For policies registered by a program: the built-in ones read the run's
 * typed parameters.  Either way the run records that it read key (its
 * result lists the settings it read under "params"). */
SM_EXTERN double sm_sim_param_num(const sm_sim *s, const char *key, double def);
SM_EXTERN const char *sm_sim_param_str(const sm_sim *s, const char *key);
/* The run's seeded generator (deterministic for a seed). */
SM_EXTERN sm_rng *sm_sim_rng(sm_sim *s);
/* Memory that lives as long as the run (zeroed); NULL on exhaustion. */
SM_EXTERN void *sm_sim_alloc_mem(sm_sim *s, size_t size);

/* ==== Duration estimators (for QSSF and later policies) ==== */

typedef struct sm_sim_estimator sm_sim_estimator;

/* Builds an estimator from a spec:
 *   oracle                    the true duration
 *   history                   mean duration of finished jobs with the same
 *                             user and name, else the same user, else all
 *   noisy:lognormal:SIGMA     true x exp(N(0, SIGMA))
 *   noisy:uniform:E           true x (1 + U(-E, E)), at least 1 s
 *   trace                     the trace's own estimate, else history
 * Returns 0 or SM_EINVAL with err naming the bad spec. */
SM_EXTERN int sm_sim_estimator_new(sm_sim *s, const char *spec,
                                   sm_sim_estimator **out, sm_err *err);
/* The duration estimate for j in seconds (> 0). */
SM_EXTERN double sm_sim_estimate(sm_sim_estimator *e, const sm_sim_job *j);
/* Tells the estimator that j has ended (history learns from it). */
SM_EXTERN void sm_sim_estimator_observe(sm_sim_estimator *e,
                                        const sm_sim_job *j);
SM_EXTERN const char *sm_sim_estimator_name(const sm_sim_estimator *e);
SM_EXTERN void sm_sim_estimator_free(sm_sim_estimator *e);

#ifdef __cplusplus
}
#endif
#endif /* SM_SIM_H */
