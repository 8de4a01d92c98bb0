/* sia_job_int.h - the state of a Sia run (sia.c) and of its jobs: what
 * each job has reported per GPU type and the model fitted to it, its
 * allocation and training progress, the workload files' histories of
 * ended jobs, and what the job modules do with them (sia_job.c). */
#ifndef SM_SIM_SIA_JOB_INT_H
#define SM_SIM_SIA_JOB_INT_H

#include <stdint.h>

#include "sim/sia_goodput_int.h"
#include "sim/sia_milp_int.h"
#include "sim/sia_tables_int.h"
#include "sim/sim_int.h"

#define SM__SIA_HELD_MAX 64 /* nodes one allocation may span */

/* What a job has reported on one GPU type. */
typedef struct sm__sia_tobs {
  sm__sia_obs *o;      /* observations, one per (nodes, GPUs, batch) */
  int n;               /* used */
  size_t cap;          /* allocated */
  int maxrep;          /* most GPUs observed */
  sm__sia_perf perf;   /* fitted model (valid when n > 0) */
  uint32_t ver;        /* bumps on every refit */
  sm__sia_fitopts fit; /* how the model is fitted (sia.fit) */
  int fitted;          /* 1: the last fit had a valid observation */
} sm__sia_tobs;

typedef struct sm__sia_job {
  sm_sim_job *j;          /* the outcome record */
  const sm__sia_app *app; /* its application's tables */
  double target;          /* the planner's largest batch */
  int world;              /* workload file */
  int state;              /* 0 not submitted, 1 active, 2 done */
  /* Allocation. */
  int type;                    /* GPU type, -1 without GPUs */
  int gpus;                    /* GPUs held */
  int cfg;                     /* configuration chosen last round, -1 */
  int nheld;                   /* nodes held */
  int hnode[SM__SIA_HELD_MAX]; /* their indices (within the type) */
  int hgpus[SM__SIA_HELD_MAX]; /* GPUs on each */
  double restore;              /* restore seconds still to go */
  int restarts;                /* reallocations after the first start */
  int started;                 /* 1 once it has had GPUs */
  int atomic, accum;           /* batch: per-GPU micro-batch, extra steps */
  /* Training. */
  int epoch;       /* epochs done */
  double progress; /* progress made */
  /* Knowledge. */
  sm__sia_tobs ob[SM__SIA_MAX_TYPES]; /* observations per type */
  int have_grad;                      /* gradient statistics known */
  double sqr, var;                    /* the latest */
  uint32_t gver;                      /* bumps when they change */
  int have_first;                     /* first statistics recorded */
  double sqr0, var0;                  /* statistics of its first step */
  int profiled;                       /* single-GPU ratios known */
  double
      prof_left[SM__SIA_MAX_TYPES]; /* profiling seconds still to go per type */
  int hit;                          /* Sia + SchedMate: started from history */
  int mark;                         /* scratch: decided this round */
  /* Planner cache. */
  double good[SM__SIA_MAX_TYPES]
             [SM__SIA_MAX_CONFIGS]; /* goodput per configuration */
  uint64_t gkey[SM__SIA_MAX_TYPES]; /* versions the row was computed with */
  double row[SM__SIA_MAX_TYPES *
             SM__SIA_MAX_CONFIGS]; /* scratch: normalised values */
} sm__sia_job;

/* One ended job in the history of a workload file. */
typedef struct sm__sia_hrec {
  sm__sia_job *job; /* the ended job (its observations) */
  double end;       /* when it ended */
  float *fp;        /* its fingerprint */
} sm__sia_hrec;

typedef struct sm__sia_world {
  sm__sia_job **jobs;            /* its jobs, in submission order */
  int n;                         /* their count */
  int *tfree[SM__SIA_MAX_TYPES]; /* free GPUs per node, per type */
  sm__sia_hrec *hist;            /* ended jobs, in end order */
  int nhist;                     /* their count */
  size_t caphist;                /* allocated */
  sm__series ser;                /* busy GPUs and pending jobs per round */
  double busy_int;               /* GPU-seconds allocated */
  double first, last;            /* first submission, last end */
  int done;                      /* jobs ended */
} sm__sia_world;

typedef struct sm__sia_run {
  sm_sim *s;                /* the run (notes, figures) */
  const sm_sim_cluster *cl; /* the cluster */
  sm__sia_tables *tab;      /* the tables */
  int semantic;             /* 1: Sia + SchedMate */
  /* Cluster. */
  int ntypes;                         /* GPU types */
  char tname[SM__SIA_MAX_TYPES][32];  /* their names in the cluster spec */
  char suffix[SM__SIA_MAX_TYPES][24]; /* their table suffixes */
  int gpn[SM__SIA_MAX_TYPES];         /* GPUs per node */
  int nnodes[SM__SIA_MAX_TYPES];      /* nodes */
  int ncfg[SM__SIA_MAX_TYPES];        /* configurations per type */
  int cn[SM__SIA_MAX_TYPES][SM__SIA_MAX_CONFIGS]; /* nodes of each */
  int cg[SM__SIA_MAX_TYPES][SM__SIA_MAX_CONFIGS]; /* GPUs of each */
  int coff[SM__SIA_MAX_TYPES]; /* first global configuration index */
  /* Parameters. */
  double interval;  /* round length, s */
  double p, lambda; /* fairness power, cost of no allocation */
  double growth;    /* growth cap factor */
  int max_gpus;     /* largest configuration */
  double profile_s[SM__SIA_MAX_TYPES]; /* profiling time per type */
  int calibrate;                       /* apply the applications' slowdown */
  int linfit;                          /* sia.fit=linear */
  double fit_tol;        /* batches within this ratio count as one (sia.fit) */
  int exec_job_bsz;      /* 1: jobs run up to their own batch limit */
  sm__sia_solve_opts so; /* solver */
  int match_batch;       /* history identity includes the batch */
  double match_thr;      /* cosine threshold */
  int match_k;           /* matches merged */
  /* Jobs. */
  sm__sia_job *jobs; /* all, trace order */
  size_t njobs;      /* their count */
  sm__sia_world *w;  /* workload files */
  int nw;            /* their count */
  /* Figures. */
  size_t rounds, solved[SM__SIA_SOLVED_N], hits, queries, restarts;
  size_t boot_restarts, by_time, nodes_max;
  double nodes;
  size_t moves, suspends, seeded, max_active, max_cols, stalls;
  double solve_s, solve_max, round_max, prof_gpu_s, prof_saved_s;
  double solve_cpu, solve_cpu_max;
} sm__sia_run;

/* ==== What a job knows, and how it trains (sia_job.c) ==== */

/* Records a report of the job on one type (the first report of a point
 * stays): 1 when added, 0 when known, SM_ENOMEM. */
int sm__sia_obs_add(sm__sia_tobs *b, int nodes, int reps, int bsz, double step,
                    double sync);
/* Fits the model of one type to its observations again. */
void sm__sia_refit(sm__sia_tobs *b);
/* Records the gradient statistics a job reported (and its first ones). */
void sm__sia_set_grad(sm__sia_job *x, double sqr, double var);
/* Largest configuration a job may be offered (the growth cap). */
int sm__sia_growth_cap(const sm__sia_run *S, const sm__sia_job *x);
/* Fills x->good for every configuration up to cap GPUs from the job's
 * models; 0 when it has none yet. */
int sm__sia_goodput_rows(const sm__sia_run *S, sm__sia_job *x, int cap);
/* Sia's discount of every configuration but the job's current one. */
double sm__sia_realloc_factor(const sm__sia_job *x, double now);
/* Chooses the per-GPU batch and accumulation for the current placement. */
void sm__sia_rebatch(const sm__sia_run *S, sm__sia_job *x);
/* Trains job x of workload file w for dt seconds from t: records what it
 * reports and ends it after its last epoch.  0 or SM_ENOMEM. */
int sm__sia_train(sm__sia_run *S, sm__sia_world *w, sm__sia_job *x, double t,
                  double dt);
/* Sia + SchedMate at submission: ended jobs of w whose fingerprint is
 * close enough seed the job's knowledge.  0 or SM_ENOMEM. */
int sm__sia_history_seed(sm__sia_run *S, sm__sia_world *w, sm__sia_job *x);

#endif /* SM_SIM_SIA_JOB_INT_H */
