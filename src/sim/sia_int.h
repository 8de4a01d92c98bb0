/* sia_int.h - what the Sia modules of the simulator share: the
 * per-application tables (throughput by GPU type, placement and batch
 * size; training progress and gradient statistics by batch size and
 * epoch), the Pollux-style goodput model fitted from observations, and
 * the allocation problem of one scheduling round (MILP through COIN-OR
 * CBC, or the greedy fallback).
 *
 *   sia_tables.c   the tables, read at run time (never shipped)
 *   sia_goodput.c  step-time model, its bounded fit, statistical
 *                  efficiency, batch-size optimisation
 *   sia_milp.c     one round's allocation problem: exact reductions,
 *                  CBC with a time limit, greedy fallback
 *   sia.c          the policy: jobs, rounds, bootstrapping, placement,
 *                  Sia + SchedMate, results
 *   sia_set.c      sets of workload files merged into one trace
 *
 * Nothing here prints; errors are values with a message naming the file
 * and the line. */
#ifndef SM_SIA_INT_H
#define SM_SIA_INT_H

#include <stdint.h>

#include "schedmate/sm_sim.h"

#define SM__SIA_MAX_TYPES 8    /* GPU types in one cluster */
#define SM__SIA_MAX_CONFIGS 48 /* allocation configurations per type */
#define SM__SIA_NBSZ 50        /* batch sizes tried per configuration */

/* ==== Tables (sia_tables.c) ==== */

/* One measured point: step and synchronisation time at a local batch. */
typedef struct sm__sia_pt {
  double bsz;  /* per-GPU (atomic) batch size */
  double step; /* seconds per optimiser step, synchronisation included */
  double sync; /* seconds of it spent synchronising gradients */
} sm__sia_pt;

/* Points of one placement (exact lookups) or of one (nodes, replicas)
 * pair (interpolation), sorted by batch size, duplicates averaged. */
typedef struct sm__sia_grp {
  char id[24];    /* canonical placement ("44": two nodes of 4), or "" */
  int nodes;      /* nodes used */
  int replicas;   /* GPUs used */
  sm__sia_pt *pt; /* points */
  int n;          /* their count */
} sm__sia_grp;

/* One application on one GPU type. */
typedef struct sm__sia_gtab {
  char suffix[24]; /* table suffix ("aws", "rtx", "dgx-ext", ...) */
  sm__sia_grp *pl; /* placement groups */
  int npl;         /* their count */
  sm__sia_grp *nr; /* (nodes, replicas) groups: placement means and
                      scalability rows */
  int nnr;         /* their count */
  double min_lbsz; /* smallest local batch of the placements */
  double max_lbsz; /* largest */
  double xput1;    /* single-GPU throughput used to project other
                      types: largest batch / largest step time among
                      the one-GPU rows (samples/s) */
  int max_nodes;   /* most nodes any row covers */
} sm__sia_gtab;

/* One validation run of an application at one global batch size. */
typedef struct sm__sia_val {
  double bsz;       /* global batch size */
  int n;            /* rows (epochs) */
  double *progress; /* progress at the end of each epoch */
  double *metric;   /* validation metric */
  double *sqr;      /* gradient squared norm during each epoch */
  double *var;      /* gradient variance during each epoch */
} sm__sia_val;

typedef struct sm__sia_app {
  char name[32];       /* directory name: cifar10, bert, ... */
  sm__sia_val *val;    /* validation runs, sorted by batch size */
  int nval;            /* their count */
  int epochs;          /* epochs to train: the shortest run's rows */
  double *epoch_start; /* progress at the start of epoch e, e = 0 ..
                          epochs (the last entry is the goal) */
  double init_bsz;     /* smallest validated batch (scale 1) */
  double max_bsz;      /* largest validated batch */
  double restore_s;    /* checkpoint-restore delay of a reallocation */
  double penalty_s;    /* the scheduler's estimate of that delay */
  double slowdown;     /* real runs are this much slower than tables */
  sm__sia_gtab *g[SM__SIA_MAX_TYPES]; /* per GPU type of the cluster */
} sm__sia_app;

typedef struct sm__sia_tables sm__sia_tables;

/* Opens the table directory dir (one subdirectory per application) for
 * a cluster whose GPU types read the tables with the given suffixes.
 * Applications are read when first asked for. */
int sm__sia_tables_open(const char *dir, const char *const *suffixes,
                        int ntypes, sm__sia_tables **out, sm_err *err);
void sm__sia_tables_free(sm__sia_tables *t);
/* The application called name, read on first use: validation-<bsz>.csv,
 * and placements-<suffix>.csv and scalability-<suffix>.csv for every
 * type.  Errors name the file and the line. */
int sm__sia_app_get(sm__sia_tables *t, const char *name,
                    const sm__sia_app **out, sm_err *err);
/* Applications read so far. */
int sm__sia_tables_count(const sm__sia_tables *t);
const sm__sia_app *sm__sia_tables_app(const sm__sia_tables *t, int i);
const char *sm__sia_tables_dir(const sm__sia_tables *t);

/* The canonical id of a placement (GPUs per node, in node order): the
 * smallest rotation, as digits.  Returns 0, or -1 when a node holds more
 * than 9 GPUs (no table can name it). */
int sm__sia_placement_id(const int *gpn, int n, char *out, size_t outn);
/* True step and sync time of the application on type t with GPUs per
 * node gpn[0..n) at per-GPU batch bsz: the placement's own points when
 * it was measured, else interpolated between (nodes, replicas) points.
 * Returns 0, or -1 when the tables cannot say. */
int sm__sia_true_step(const sm__sia_app *a, int t, const int *gpn, int n,
                      double bsz, double *step, double *sync);
/* Largest per-GPU batch that fits the placement (memory), as measured. */
double sm__sia_max_local_bsz(const sm__sia_app *a, int t, const int *gpn,
                             int n);
/* Largest per-GPU batch measured on any placement of `replicas` GPUs, or
 * 0 when none was. */
double sm__sia_max_bsz_replicas(const sm__sia_app *a, int t, int replicas);
/* Gradient statistics at global batch bsz during epoch e (interpolated
 * between the validated batch sizes). */
void sm__sia_grad(const sm__sia_app *a, double bsz, int epoch, double *sqr,
                  double *var);

/* ==== Goodput model (sia_goodput.c) ==== */

/* Step-time model of data-parallel SGD (Pollux):
 *   compute  T_c = alpha_c + beta_c * b            (per-GPU batch b)
 *   network  T_n = alpha_n + beta_n * max(r-2, 0)  across nodes
 *                  alpha_r + beta_r * max(r-2, 0)  inside one node
 *   step     T   = (T_c^gamma + T_n^gamma)^(1/gamma) + accum * T_c. */
enum {
  SM__SIA_AC = 0,
  SM__SIA_BC,
  SM__SIA_AN,
  SM__SIA_BN,
  SM__SIA_AR,
  SM__SIA_BR,
  SM__SIA_GAMMA,
  SM__SIA_NPARAM
};

typedef struct sm__sia_perf {
  double p[SM__SIA_NPARAM]; /* parameters, in the order above */
} sm__sia_perf;

/* One observation of a job on one GPU type. */
typedef struct sm__sia_obs {
  int nodes;    /* nodes */
  int replicas; /* GPUs */
  int bsz;      /* per-GPU (atomic) batch */
  double step;  /* step time, s */
  double sync;  /* of which synchronisation, s */
} sm__sia_obs;

/* What a fit did. */
typedef struct sm__sia_fitinfo {
  int iterations;   /* optimiser iterations */
  double objective; /* final objective */
  unsigned pinned;  /* bit i set: parameter i was held fixed */
} sm__sia_fitinfo;

/* Fits the model to n >= 1 observations with a bounded quasi-Newton
 * method (every parameter >= 1e-8, gamma in [1, 10]).  Parameters the
 * observations cannot identify are pinned: alpha_c when one batch size
 * was seen, the inter-node terms without multi-node points, the
 * intra-node terms without single-node multi-GPU points, both slopes
 * without points above 2 GPUs.  info may be NULL. */
void sm__sia_perf_fit(const sm__sia_obs *o, int n, sm__sia_perf *out,
                      sm__sia_fitinfo *info);
/* Predicted step time of one optimiser step (accum extra micro-steps). */
double sm__sia_perf_step(const sm__sia_perf *p, int nodes, int replicas,
                         double bsz, int accum);
/* Predicted compute time of one micro-step. */
double sm__sia_perf_compute(const sm__sia_perf *p, double bsz);

/* Statistical efficiency of global batch bsz given the gradient's
 * squared norm and variance measured at batch init_bsz: the progress per
 * sample relative to init_bsz (gradient noise scale). */
double sm__sia_efficiency(double sqr, double var, double init_bsz, double bsz);

/* A batch-size choice. */
typedef struct sm__sia_bsz {
  double goodput; /* samples/s x efficiency, 0 when nothing is valid */
  int atomic;     /* per-GPU micro-batch */
  int accum;      /* extra accumulation steps */
} sm__sia_bsz;

/* The best of SM__SIA_NBSZ global batch sizes (geometric, from
 * max(init_bsz, lo x replicas) to max_bsz; only max_bsz without tuning)
 * for a placement of `replicas` GPUs on `nodes` nodes, per-GPU batch in
 * [lo, hi], with gradient accumulation. */
sm__sia_bsz sm__sia_optimize(const sm__sia_perf *p, double sqr, double var,
                             double init_bsz, int nodes, int replicas,
                             double max_bsz, double lo, double hi, int tune);

/* ==== One round's allocation problem (sia_milp.c) ==== */

/* A candidate: job i on configuration c (type, GPUs) with a value
 * lambda - A^p > 0 to maximise. */
typedef struct sm__sia_cand {
  int job;      /* job index in the problem */
  int type;     /* GPU type */
  int gpus;     /* GPUs of the configuration */
  int config;   /* configuration index (the caller's) */
  double value; /* objective contribution when chosen */
} sm__sia_cand;

typedef struct sm__sia_problem {
  int njobs;                  /* jobs */
  int ntypes;                 /* GPU types */
  int cap[SM__SIA_MAX_TYPES]; /* free GPUs per type */
  sm__sia_cand *c;            /* candidates */
  int nc;                     /* their count */
} sm__sia_problem;

/* How a round was solved. */
enum {
  SM__SIA_SOLVED_EMPTY = 0, /* nothing to decide */
  SM__SIA_SOLVED_OPTIMAL,   /* CBC proved optimality (within the gap) */
  SM__SIA_SOLVED_LIMIT,     /* time limit: CBC's best solution */
  SM__SIA_SOLVED_FALLBACK,  /* greedy: CBC failed or found nothing */
  SM__SIA_SOLVED_GREEDY     /* greedy by configuration (no CBC) */
};

typedef struct sm__sia_solve_opts {
  int use_cbc;         /* 1: CBC (needs SM_HAVE_CBC), 0: greedy */
  double time_limit;   /* seconds for CBC */
  double gap;          /* relative optimality gap */
  int reduce;          /* 1: apply the exact reductions first */
  const char *options; /* CBC parameters "name=value,...", or NULL */
} sm__sia_solve_opts;

typedef struct sm__sia_solve_info {
  int how;            /* SM__SIA_SOLVED_* */
  int cols;           /* candidates after the reductions */
  double objective;   /* value of the solution */
  double seconds;     /* wall time */
  double cpu_seconds; /* CPU time of the calling thread */
  char why[96];       /* reason of a fallback, "" otherwise */
} sm__sia_solve_info;

/* Chooses at most one candidate per job within the capacities,
 * maximising the total value.  choice[j] gets the index (into p->c) of
 * job j's candidate or -1.  Returns 0 or SM_ENOMEM. */
int sm__sia_solve(const sm__sia_problem *p, const sm__sia_solve_opts *o,
                  int *choice, sm__sia_solve_info *info);
/* The exact reductions alone (for tests): writes the indices of the
 * candidates kept into keep, returns their count (or < 0 on ENOMEM). */
int sm__sia_reduce(const sm__sia_problem *p, int *keep);
/* 1 when the library was built with CBC. */
int sm__sia_have_cbc(void);

/* ==== The policy (sia.c) ==== */

extern const sm_sim_policy sm__policy_sia;
extern const sm_sim_policy sm__policy_sia_schedmate;

/* A synthetic round for the benchmark: njobs active jobs of the
 * applications in the table directory, each with observations on every
 * type, on the cluster; one scheduling round is run cold (every model
 * fitted and every goodput computed) and once more warm, with or without
 * the exact reductions.  Times in seconds. */
typedef struct sm__sia_bench {
  double matrix_s;    /* goodput matrix, cold */
  double solve_s;     /* the allocation problem, reductions included */
  double solve_cpu_s; /* the same in CPU time */
  double place_s;     /* placement */
  double warm_s;      /* the next round, models unchanged */
  int cols;           /* candidates after the reductions */
  int how;            /* SM__SIA_SOLVED_* */
  int allocated;      /* jobs given GPUs */
} sm__sia_bench;

int sm__sia_bench_round(const char *tables, const sm_sim_cluster *c, int njobs,
                        const char *solver, double time_limit, uint64_t seed,
                        sm__sia_bench *out, sm_err *err, int reduce);

#endif /* SM_SIA_INT_H */
