/* sim_int.h - what the simulator's modules share and the public header
 * hides: the trace, cluster, run and result structures, the ordered job
 * set the policies use, note lists and CSV reading helpers. */
#ifndef SM_SIM_INT_H
#define SM_SIM_INT_H

#include <stdint.h>

#include "schedmate/sm_sim.h"
#include "schedmate/sm_util.h"
#include "util/util_int.h"

/* One piece of a job's placement. */
typedef struct sm_sim_alloc {
  int node; /* node index in the cluster */
  int gpus; /* GPUs held on it */
} sm_sim_alloc;

/* What the engine keeps per job of a run besides the public fields (the
 * job's _run; allocated with the run's jobs, kept by the result). */
struct sm_sim_jstate {
  uint32_t gen;            /* bumps when the projected end changes */
  int nalloc;              /* entries used in alloc */
  int allocmax;            /* entries available in alloc */
  int type;                /* GPU type index of the placement */
  int pvc;                 /* VC of the placement (usually the job's) */
  int reqtype;             /* requested type index, -1 for any */
  sm_sim_alloc *alloc;     /* nodes and GPU counts held */
  struct sm_sim_job *peer; /* the job sharing these GPUs, or NULL */
  int owner;               /* 1 when it frees the GPUs at its end */
  int failing;             /* 1 when its pending end is a failure */
  double fail_work;        /* work_left at which it fails, or NaN */
  double done_work;        /* work performed, for the invariants */
  int outcome;             /* end state of the next normal end set by
                              sm_sim_job_set_outcome, or -1: the trace's */
  int infra;               /* 1: its recorded failure has an
                              infrastructure cause */
};

/* Growable arrays: SM__GROW of src/util (util/util_int.h). */

/* A step function over time: busy GPUs and pending jobs, each point valid
 * from its time to the next point's. */
typedef struct sm__series {
  double *t;          /* times, s */
  int *busy;          /* busy GPUs */
  int *pending;       /* pending jobs */
  size_t n;           /* points */
  size_t cap_t;       /* capacity of t */
  size_t cap_busy;    /* of busy */
  size_t cap_pending; /* of pending */
} sm__series;

/* Appends a point; 0 or SM_ENOMEM (the series unchanged). */
int sm__series_add(sm__series *s, double t, int busy, int pending);
void sm__series_release(sm__series *s);

/* ==== Notes (owned lines of text, notes.c) ==== */

typedef struct sm__notes {
  char **v;   /* lines, each sm_malloc'ed */
  size_t n;   /* lines used */
  size_t cap; /* lines allocated */
} sm__notes;

int sm__notes_add(sm__notes *n, const char *fmt, ...) SM_PRINTF(2, 3);
int sm__notes_vadd(sm__notes *n, const char *fmt, va_list ap);
int sm__notes_copy(sm__notes *dst, const sm__notes *src);
void sm__notes_release(sm__notes *n);

/* ==== Traces ==== */

struct sm_sim_trace {
  sm_arena arena;      /* strings, attributes */
  sm_sim_job *jobs;    /* n jobs in submit order (sm_malloc'ed) */
  size_t n;            /* job count */
  size_t cap;          /* jobs allocated */
  char *name;          /* path or synthetic:<cluster> */
  int format;          /* sm_sim_format */
  int synthetic;       /* 1 for generated traces */
  int calibrated_gpus; /* GPUs of the calibration cluster, or 0 */
  sm__notes notes;     /* repairs and assumptions */
  int refs;            /* owners: the caller and every result (atomic) */
};

/* Allocates an empty trace owning name (copied). */
sm_sim_trace *sm__trace_new(const char *name, int format);
/* Appends a job (copied); grows the array up to max_jobs. */
int sm__trace_push(sm_sim_trace *t, const sm_sim_job *j, size_t max_jobs,
                   sm_err *err);
/* Sorts by submit time (stable), renumbers idx, shifts times so the
 * first submission is at 0.  Notes the repair when rows were out of
 * order. */
void sm__trace_finish(sm_sim_trace *t);
/* Fills the defaults of a trace job (NaN estimate, empty strings ...). */
void sm__job_defaults(sm_sim_job *j);

/* Parses a plain decimal number ("12", "-1.5", "3e4"): no hexadecimal,
 * no "inf" or "nan", no blanks.  0 or SM_EPARSE. */
int sm__parse_num(const char *s, double *out);

/* Parses a time: plain seconds, or "YYYY-MM-DD[ T]HH:MM:SS[.f][Z|+HH:MM]"
 * as seconds since 1970 (offsets applied).  0 or SM_EPARSE. */
int sm__parse_time(const char *s, double *out);

/* Seeded draw for job i that does not depend on draw order. */
double sm__job_uniform(uint64_t seed, uint64_t salt, uint64_t i);

/* ==== Clusters ==== */

typedef struct sm__vcdef {
  char *name;     /* VC name, "" for the anonymous VC */
  int first_node; /* index of its first node */
  int nnodes;     /* nodes */
  int gpus;       /* GPUs */
} sm__vcdef;

typedef struct sm__typedef {
  char *name;   /* GPU type, "" when the spec names none */
  double speed; /* work per second relative to 1.0 */
} sm__typedef;

typedef struct sm__nodedef {
  int vc;   /* owning VC */
  int type; /* GPU type index */
  int cap;  /* GPUs */
} sm__nodedef;

struct sm_sim_cluster {
  sm__vcdef *vcs;     /* nvcs VCs */
  int nvcs;           /* VC count */
  int anonymous;      /* 1: one VC that every job uses */
  sm__typedef *types; /* ntypes GPU types */
  int ntypes;         /* type count */
  sm__nodedef *nodes; /* nnodes nodes, grouped by VC */
  int nnodes;         /* node count */
  int gpus;           /* total GPUs */
  int maxcap;         /* largest node */
  char desc[192];     /* one-line description */
  char origin[256];   /* how it was made or sized, for reports */
};

/* Finds a VC by name; -1 when absent (the anonymous VC matches all). */
int sm__cluster_vc_find(const sm_sim_cluster *c, const char *name);
/* Finds a GPU type by name; -1 when absent. */
int sm__cluster_type_find(const sm_sim_cluster *c, const char *name);

/* ==== Ordered job sets (skip lists) ==== */

#define SM__OSET_MAXLVL 20

typedef struct sm__onode {
  sm_sim_job *job;          /* the member */
  double k1, k2;            /* keys, compared in order, then job->idx */
  int level;                /* levels of this node */
  struct sm__onode *next[]; /* forward links, level entries */
} sm__onode;

typedef struct sm__oset {
  sm__onode *head; /* sentinel with SM__OSET_MAXLVL links */
  int level;       /* levels in use */
  size_t n;        /* members */
  uint64_t rs;     /* level generator state */
} sm__oset;

int sm__oset_init(sm__oset *s);
void sm__oset_release(sm__oset *s);
/* Inserts j with keys (k1, k2); returns the node, NULL on exhaustion. */
sm__onode *sm__oset_insert(sm__oset *s, sm_sim_job *j, double k1, double k2);
/* Removes and frees node n (found by its keys). */
void sm__oset_remove(sm__oset *s, sm__onode *n);
static inline sm__onode *sm__oset_first(const sm__oset *s) {
  return s->head->next[0];
}

/* ==== CSV reading ==== */

#define SM__CSV_MAX_LINE 65536
#define SM__CSV_MAX_FIELDS 256

/* A line source over a file (plain or gzip) or a memory block. */
typedef struct sm__lsrc {
  void *gz;             /* gzFile, or NULL for memory */
  const char *mem;      /* memory block */
  size_t memlen;        /* its length */
  char *buf;            /* read buffer */
  size_t cap, len, pos; /* buffer state */
  int eof;              /* no more input */
  long lineno;          /* line number of the last line returned */
  const char *name;     /* for messages */
  char *inflated;       /* decompressed memory block, owned */
} sm__lsrc;

int sm__lsrc_open_file(sm__lsrc *l, const char *path, sm_err *err);
int sm__lsrc_open_mem(sm__lsrc *l, const char *data, size_t len,
                      const char *name, sm_err *err);
/* Returns 1 with the next line (NUL-terminated, without "\r\n", valid
 * until the next call), 0 at the end, or a negative code (line too long,
 * NUL byte, read error). */
int sm__lsrc_next(sm__lsrc *l, char **line, size_t *len, sm_err *err);
void sm__lsrc_close(sm__lsrc *l);

/* Splits line in place into at most max fields (quotes handled, "" is an
 * escaped quote).  Returns the field count or a negative code. */
int sm__csv_split(char *line, char **fields, int max);
/* The next row of l split into at most max fields (*nf of them; empty
 * lines skipped when skip_empty): 1, 0 at the end, or a negative code
 * with err filled ("NAME:LINE: malformed CSV row", a read error). */
int sm__csv_next(sm__lsrc *l, char **f, int max, int skip_empty, int *nf,
                 sm_err *err);

/* ==== Runs ==== */

typedef struct sm__node {
  int vc;            /* owning VC */
  int type;          /* GPU type */
  int cap;           /* GPUs */
  int free;          /* free GPUs */
  int down;          /* 1 while out of service */
  double down_until; /* when it comes back */
  int prev, next;    /* bucket list links, -1 at the ends */
  int inbucket;      /* 1 when linked into its VC's bucket */
} sm__node;

typedef struct sm__vc {
  int gpus_up;     /* GPUs on nodes that are up */
  int free;        /* free GPUs on nodes that are up */
  int *heads;      /* bucket heads [type * (maxcap + 1) + free] */
  int *type_free;  /* free GPUs per type (nodes up) */
  int *type_cap;   /* largest node per type */
  int dirty;       /* schedule() wanted */
  int round_armed; /* a round event is queued */
} sm__vc;

typedef struct sm__ev {
  double t;     /* when */
  uint64_t seq; /* insertion order, for ties */
  uint32_t job; /* job index, UINT32_MAX for none */
  uint32_t gen; /* job generation for end events */
  int type;     /* SM__EV_* */
  int kind;     /* timer kind / vc for rounds / node for node-up */
  uint64_t arg; /* timer argument */
} sm__ev;

enum {
  SM__EV_END = 0,  /* a running job reaches its end or failure */
  SM__EV_NODE_UP,  /* a node comes back */
  SM__EV_RESUBMIT, /* a restarted job comes back */
  SM__EV_TIMER,    /* a policy timer */
  SM__EV_ARRIVE,   /* a submission (virtual: taken from the job list) */
  SM__EV_ROUND     /* a scheduling round of one VC */
};

typedef struct sm__params sm__params;   /* params_int.h */
typedef struct sm__figures sm__figures; /* figures_int.h */

struct sm_sim {
  const sm_sim_trace *trace; /* input (borrowed) */
  const sm_sim_cluster *cl;  /* input (borrowed) */
  sm_sim_config cfg;         /* copy of the configuration */
  const sm_sim_policy *pol;  /* the policy */
  void *pstate;              /* its state */
  sm_arena arena;            /* jobs, allocations, policy memory */
  sm_sim_job *jobs;          /* the run's jobs */
  size_t njobs;              /* their count */
  size_t next_arrival;       /* next job to submit */
  sm__node *nodes;           /* node states */
  sm__vc *vcs;               /* VC states */
  sm__ev *heap;              /* event heap */
  size_t hn, hcap;           /* heap size and capacity */
  uint64_t seq;              /* event counter */
  double now;                /* simulated time */
  double round;              /* round interval, 0 for none */
  int *dirty;                /* dirty VCs, in order of marking */
  int ndirty;                /* their count */
  long busy;                 /* GPUs held */
  long pending;              /* pending jobs */
  long live;                 /* jobs submitted and not ended */
  double busy_integral;      /* GPU-seconds held */
  double last_change;        /* time of the last busy change */
  sm__series ser;            /* busy GPUs and pending jobs over time */
  sm__figures *figs;         /* the policy's figures (run arena) */
  sm__notes notes;           /* run notes */
  sm_rng rng;                /* seeded generator */
  size_t events;             /* events processed */
  size_t dropped;            /* jobs left out */
  size_t peak_pending;       /* largest pending count */
  int err;                   /* first error inside a callback */
  sm_err errd;               /* its details */
  uint32_t *stamp;           /* node marks for placement */
  uint32_t stampv;           /* current mark */
  int *plan_node, *plan_n;   /* placement plan scratch (nnodes) */
  int *cursor;               /* placement: bucket cursors (maxcap + 1) */
  size_t shared_starts;      /* starts on another job's GPUs */
  int series_full;           /* the series reached its cap */
  int fail_resubmit;         /* fail.model=resubmit */
  double fail_infra_share;   /* fail.infra_share */
  double fail_rest;          /* fail.rest */
  double fail_resubmit_s;    /* fail.resubmit_s */
  size_t fail_infra;         /* infrastructure failures met */
  size_t fail_resubmitted;   /* of which resubmitted by their users */
  sm__params *par;           /* typed parameters (run arena) */
  char base_cluster[192];    /* the cluster before any profiler carve */
  int carved_nodes;          /* nodes carved for a profiler, 0 none */
  char carved_from[64];      /* the VC they came from */
  char dropped_why[320];     /* why jobs were left out, "" when none */
};

struct sm_sim_result {
  sm_sim_summary sum;                  /* headline figures */
  char policy[48];                     /* policy name */
  char semantic[8];                    /* "off"/"on" */
  char *trace_name;                    /* owned */
  char format[24];                     /* trace format name */
  char cluster[192];                   /* cluster description */
  char placement[16];                  /* placement name */
  sm__notes params;                    /* "key=value" settings the run read */
  sm__notes ignored;                   /* settings given but never read */
  sm__params *par;                     /* the run's parameters and what
                                          it read (strings owned) */
  char facts[16];                      /* facts source, "" when none */
  char cluster_origin[256];            /* how the cluster was sized */
  int carved_nodes;                    /* profiling nodes carved, 0 none */
  char carved_from[64];                /* their VC */
  double offered_load;                 /* GPU-time / (GPUs x span) */
  char dropped_why[320];               /* why jobs were left out */
  sm_arena arena;                      /* jobs and their allocations */
  sm_sim_job *jobs;                    /* outcome per trace job */
  size_t njobs;                        /* count */
  double *jct;                         /* sorted JCTs of ended jobs */
  size_t njct;                         /* count */
  sm__series ser;                      /* busy GPUs, pending jobs */
  sm__notes notes;                     /* notes */
  sm__figures *figs;                   /* the policy's figures */
  double preempt_small, preempt_large; /* overhead settings */
  int overhead_gpus;                   /* overhead boundary */
  uint64_t seed;                       /* run seed */
  sm_sim_trace *trace;                 /* kept alive: jobs point into it */
};

/* Placement (cluster.c, per run). */
/* Places j in VC v; 1 when placed, 0 when no room, < 0 on error. */
int sm__place(sm_sim *s, sm_sim_job *j, int v);
void sm__unplace(sm_sim *s, sm_sim_job *j);
int sm__run_cluster_init(sm_sim *s, sm_err *err);
void sm__node_set_up(sm_sim *s, int node);
void sm__node_set_down(sm_sim *s, int node);

/* Sets a run up (engine.c): the trace, the cluster and a copy of the
 * configuration, the run's memory, its parameters parsed, its figures.
 * 0 or SM_ENOMEM; sm__sim_close frees what it holds either way. */
int sm__sim_open(sm_sim *s, const sm_sim_trace *t, const sm_sim_cluster *c,
                 const sm_sim_config *cfg, sm_err *err);
void sm__sim_close(sm_sim *s);
/* The event loop (engine.c): runs s to its last event; 0 or the first
 * error raised inside it (s->errd says more). */
int sm__engine_loop(sm_sim *s);

/* Metrics (metrics.c): builds the result from a finished run. */
int sm__result_build(sm_sim *s, double wall_s, sm_sim_result **out,
                     sm_err *err);

/* The built-in policies (registry.c lists them). */
extern const sm_sim_policy sm__policy_fifo;
extern const sm_sim_policy sm__policy_sjf;
extern const sm_sim_policy sm__policy_qssf;
extern const sm_sim_policy sm__policy_srtf;
extern const sm_sim_policy sm__policy_tiresias;
/* The SchedMate integrations (lucid.c, sjf_schedmate.c). */
extern const sm_sim_policy sm__policy_lucid;
extern const sm_sim_policy sm__policy_lucid_schedmate;
extern const sm_sim_policy sm__policy_sjf_schedmate;
extern const sm_sim_policy sm__policy_sjf_schedmate_fh;
/* Sia and Sia + SchedMate (sia.c). */
extern const sm_sim_policy sm__policy_sia;
extern const sm_sim_policy sm__policy_sia_schedmate;

/* Helper for the ordered non-preemptive policies (ordered.c). */
typedef double (*sm__key_fn)(sm_sim *s, void *ud, sm_sim_job *j);
typedef struct sm__ordered {
  sm__oset *q;           /* pending set per VC */
  int nvc;               /* VC count */
  int backfill;          /* 1: skip jobs that do not fit */
  sm__key_fn key;        /* priority key of a job (lower first) */
  void *ud;              /* its argument */
  sm_sim_estimator *est; /* estimator (QSSF), or NULL */
} sm__ordered;

int sm__ordered_init(sm_sim *s, sm__ordered *o, sm__key_fn key, void *ud,
                     sm_err *err);
void sm__ordered_release(sm__ordered *o);
void sm__ordered_arrive(sm_sim *s, sm__ordered *o, sm_sim_job *j);
void sm__ordered_schedule(sm_sim *s, sm__ordered *o, int vc);

/* Estimates answered by the history at each level (estimator.c). */
void sm__estimator_hits(const sm_sim_estimator *e, size_t out[4]);

/* Report helpers (report.c). */
void sm__html_escape(sm_buf *out, const char *s);

#endif /* SM_SIM_INT_H */
