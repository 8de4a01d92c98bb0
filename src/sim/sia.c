/* sia.c - Sia (SOSP'23) and Sia + SchedMate in the simulator.
 *
 * Sia schedules elastic data-parallel jobs on a cluster of several GPU
 * types.  Every round (60 s) it builds a goodput matrix, jobs x
 * configurations (1, 2, 4 ... GPUs inside one node, then whole nodes, per
 * GPU type), normalises each job's row to its smallest entry, discounts
 * every configuration but the job's current one by a restart factor,
 * raises the matrix to a fairness power p (-0.5) and solves a MILP that
 * picks at most one configuration per job within each type's GPUs,
 * charging lambda (1.1) for every job left without GPUs (sia_milp.c).
 * Placement takes whole nodes first, then fills.
 *
 * The jobs are Sia's: they finish after a fixed amount of training
 * progress (the epochs of their application, progress per epoch from the
 * validation tables), not after a trace duration.  Their real speed comes
 * from the throughput tables (GPU type, GPUs, placement, per-GPU batch),
 * scaled by the application's calibration slowdown, and their progress
 * per step from the gradient noise scale of the validation tables at the
 * current batch and epoch.  Every change of allocation costs the
 * application's checkpoint-restore delay, during which the GPUs are held
 * and nothing is learnt; the batch size is re-optimised on reallocation
 * and after every round, with the job's own fitted model.
 *
 * What the scheduler knows is only what the jobs have reported: for each
 * GPU type the (nodes, GPUs, per-GPU batch) points a job has run at, to
 * which the goodput model is fitted (sia_goodput.c), and the gradient
 * statistics of its last step.  A job without any observation is offered
 * one GPU of each type (bootstrapping); once it has run on one type the
 * others are projected by the ratio of their single-GPU throughputs (what
 * Sia's profiling measures, sia.profile_s per type, 0 by default as in
 * the artifact's simulator); and no job is offered more than twice the
 * GPUs it has been observed on (growth cap).
 *
 * Sia + SchedMate changes one thing.  At submission, a job whose
 * submission-time identity (its application, optionally its batch size)
 * matches, by fingerprint, jobs of the same workload that have already
 * ended, starts with their observations: its goodput model on every type
 * they ran on and their first gradient statistics.  It skips profiling
 * and bootstrapping and may get its best configuration in the first
 * round; online updates continue as in Sia.  A miss is Sia unchanged.
 *
 * A trace made of several workload files (sm_sim_trace_load_set) runs
 * each file on its own copy of the cluster, and the figures are Sia's:
 * average and p99 JCT over the jobs of all files, makespan averaged over
 * the files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sia_int.h"
#include "sim/sim_int.h"

#define T_MAX SM__SIA_MAX_TYPES
#define C_MAX SM__SIA_MAX_CONFIGS
#define HELD_MAX 64
#define EPS 1e-8
#define MAX_ROUNDS 20000000 /* per workload file: 38 years of 60 s rounds */

/* Table suffixes of the GPU names a cluster spec may use. */
static const struct {
  const char *name, *suffix;
} aliases[] = {{"t4", "aws"},      {"aws", "aws"},         {"rtx", "rtx"},
               {"2080ti", "rtx"},  {"rtx2080ti", "rtx"},   {"a100", "dgx-ext"},
               {"dgx", "dgx-ext"}, {"dgx-ext", "dgx-ext"}, {"v100", "azure"},
               {"azure", "azure"}, {"quadro", "quad"},     {"quad", "quad"},
               {"rtx6000", "quad"}};

/* ==== State ==== */

/* What a job has reported on one GPU type. */
typedef struct tobs {
  sm__sia_obs *o;    /* observations, one per (nodes, GPUs, batch) */
  int n;             /* used */
  size_t cap;        /* allocated */
  int maxrep;        /* most GPUs observed */
  sm__sia_perf perf; /* fitted model (valid when n > 0) */
  uint32_t ver;      /* bumps on every refit */
} tobs;

typedef struct sjob {
  sm_sim_job *j;          /* the outcome record */
  const sm__sia_app *app; /* its application's tables */
  double target;          /* the planner's largest batch */
  int world;              /* workload file */
  int state;              /* 0 not submitted, 1 active, 2 done */
  /* Allocation. */
  int type;            /* GPU type, -1 without GPUs */
  int gpus;            /* GPUs held */
  int cfg;             /* configuration chosen last round, -1 */
  int nheld;           /* nodes held */
  int hnode[HELD_MAX]; /* their indices (within the type) */
  int hgpus[HELD_MAX]; /* GPUs on each */
  double restore;      /* restore seconds still to go */
  int restarts;        /* reallocations after the first start */
  int started;         /* 1 once it has had GPUs */
  int atomic, accum;   /* batch: per-GPU micro-batch, extra steps */
  /* Training. */
  int epoch;       /* epochs done */
  double progress; /* progress made */
  /* Knowledge. */
  tobs ob[T_MAX];          /* observations per type */
  int have_grad;           /* gradient statistics known */
  double sqr, var;         /* the latest */
  uint32_t gver;           /* bumps when they change */
  int have_first;          /* first statistics recorded */
  double sqr0, var0;       /* statistics of its first step */
  int profiled;            /* single-GPU ratios known */
  double prof_left[T_MAX]; /* profiling seconds still to go per type */
  int hit;                 /* Sia + SchedMate: started from history */
  int mark;                /* scratch: decided this round */
  /* Planner cache. */
  double good[T_MAX][C_MAX]; /* goodput per configuration */
  uint64_t gkey[T_MAX];      /* versions the row was computed with */
  double row[T_MAX * C_MAX]; /* scratch: normalised values */
} sjob;

/* One ended job in the history of a workload file. */
typedef struct hrec {
  sjob *job;  /* the ended job (its observations) */
  double end; /* when it ended */
  float *fp;  /* its fingerprint */
} hrec;

typedef struct world {
  sjob **jobs;        /* its jobs, in submission order */
  int n;              /* their count */
  int *tfree[T_MAX];  /* free GPUs per node, per type */
  hrec *hist;         /* ended jobs, in end order */
  int nhist;          /* their count */
  size_t caphist;     /* allocated */
  sm__series ser;     /* busy GPUs and pending jobs per round */
  double busy_int;    /* GPU-seconds allocated */
  double first, last; /* first submission, last end */
  int done;           /* jobs ended */
} world;

typedef struct sia {
  sm_sim *s;                /* the run (notes, figures) */
  const sm_sim_cluster *cl; /* the cluster */
  sm__sia_tables *tab;      /* the tables */
  int semantic;             /* 1: Sia + SchedMate */
  /* Cluster. */
  int ntypes;             /* GPU types */
  char tname[T_MAX][32];  /* their names in the cluster spec */
  char suffix[T_MAX][24]; /* their table suffixes */
  int gpn[T_MAX];         /* GPUs per node */
  int nnodes[T_MAX];      /* nodes */
  int ncfg[T_MAX];        /* configurations per type */
  int cn[T_MAX][C_MAX];   /* nodes of each */
  int cg[T_MAX][C_MAX];   /* GPUs of each */
  int coff[T_MAX];        /* first global configuration index */
  /* Parameters. */
  double interval;         /* round length, s */
  double p, lambda;        /* fairness power, cost of no allocation */
  double growth;           /* growth cap factor */
  int max_gpus;            /* largest configuration */
  double profile_s[T_MAX]; /* profiling time per type */
  int calibrate;           /* apply the applications' slowdown */
  int exec_job_bsz;        /* 1: jobs run up to their own batch limit */
  sm__sia_solve_opts so;   /* solver */
  int match_batch;         /* history identity includes the batch */
  double match_thr;        /* cosine threshold */
  int match_k;             /* matches merged */
  /* Jobs. */
  sjob *jobs;   /* all, trace order */
  size_t njobs; /* their count */
  world *w;     /* workload files */
  int nw;       /* their count */
  /* Figures. */
  size_t rounds, solved[5], hits, queries, restarts, boot_restarts;
  size_t moves, suspends, seeded, max_active, max_cols, stalls;
  double solve_s, solve_max, round_max, prof_gpu_s, prof_saved_s;
  double solve_cpu, solve_cpu_max;
} sia;

/* ==== Parameters ==== */

static int param_error(sm_err *err, const char *key, const char *v,
                       const char *want) {
  return sm_err_set(err, SM_EINVAL, "--param %s=%.40s: expected %s", key,
                    v ? v : "", want);
}

static int type_index(const sia *S, const char *name, size_t n) {
  for (int t = 0; t < S->ntypes; t++)
    if (strlen(S->tname[t]) == n && strncmp(S->tname[t], name, n) == 0)
      return t;
  return -1;
}

/* sia.profile_s: one number for every type, or TYPE:S,... */
static int profile_param(sia *S, sm_err *err) {
  const char *v = SM__PARAM(S->s, sia_profile_s);
  double d;

  for (int t = 0; t < S->ntypes; t++)
    S->profile_s[t] = 0;
  if (v == NULL)
    return 0;
  if (sm_parse_double(v, &d) == 0) {
    if (!(d >= 0 && d <= 86400))
      return param_error(err, "sia.profile_s", v, "seconds in [0, 86400]");
    for (int t = 0; t < S->ntypes; t++)
      S->profile_s[t] = d;
    return 0;
  }
  for (const char *p = v; *p;) {
    const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
    char num[32];
    int t;
    size_t len;
    if (comma == NULL)
      comma = p + strlen(p);
    if (colon == NULL || colon > comma)
      return param_error(err, "sia.profile_s", v,
                         "seconds, or TYPE:SECONDS,... with the cluster's "
                         "GPU types");
    t = type_index(S, p, (size_t)(colon - p));
    len = (size_t)(comma - colon - 1);
    if (t < 0 || len == 0 || len >= sizeof(num))
      return param_error(err, "sia.profile_s", v,
                         "seconds, or TYPE:SECONDS,... with the cluster's "
                         "GPU types");
    memcpy(num, colon + 1, len);
    num[len] = '\0';
    if (sm_parse_double(num, &d) != 0 || !(d >= 0 && d <= 86400))
      return param_error(err, "sia.profile_s", v, "seconds in [0, 86400]");
    S->profile_s[t] = d;
    p = *comma ? comma + 1 : comma;
  }
  return 0;
}

static int read_params(sia *S, sm_err *err) {
  sm_sim *s = S->s;
  const char *v;
  double d;
  int rc;

  if ((rc = sm__params_num_in(s, SM__P_sia_interval, 1, 86400, &S->interval,
                              err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_p, -10, 10, &S->p, err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_lambda, -1e6, 1e6, &S->lambda,
                              err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_growth, 1, 1e6, &S->growth, err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_time_limit, 0.001, 3600,
                              &S->so.time_limit, err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_gap, 0, 1, &S->so.gap, err)) ||
      (rc = sm__params_num_in(s, SM__P_sia_match_threshold, -1, 1,
                              &S->match_thr, err)))
    return rc;
  if (S->p == 0)
    return param_error(err, "sia.p", s->par->text[SM__P_sia_p],
                       "a non-zero fairness power");
  if ((rc = sm__params_num_in(s, SM__P_sia_max_gpus, 1, 4096, &d, err)))
    return rc;
  S->max_gpus = (int)d;
  if ((rc = sm__params_num_in(s, SM__P_sia_match_top_k, 1, 64, &d, err)))
    return rc;
  S->match_k = (int)d;
  if ((rc = sm__params_num_in(s, SM__P_sia_calibrate, 0, 1, &d, err)))
    return rc;
  S->calibrate = d != 0;
  if ((rc = sm__params_num_in(s, SM__P_sia_reduce, 0, 1, &d, err)))
    return rc;
  S->so.reduce = d != 0;
  v = SM__PARAM(s, sia_solver);
  if (v == NULL || strcmp(v, "cbc") == 0) {
    if (!sm__sia_have_cbc())
      return sm_err_set(err, SM_EUNSUPP,
                        "this build has no MILP solver (COIN-OR CBC, "
                        "Debian package coinor-libcbc-dev, was not found "
                        "when it was built); install it and rebuild, or run "
                        "the greedy fallback with --param sia.solver=greedy");
    S->so.use_cbc = 1;
  } else if (strcmp(v, "greedy") == 0) {
    S->so.use_cbc = 0;
  } else {
    return param_error(err, "sia.solver", v, "cbc or greedy");
  }
  v = SM__PARAM(s, sia_cbc_options);
  S->so.options = v != NULL ? v
                            : "preprocess=off,cuts=off,heuristicsOnOff=off,"
                              "presolve=off";
  v = SM__PARAM(s, sia_match);
  if (v == NULL || strcmp(v, "application") == 0)
    S->match_batch = 0;
  else if (strcmp(v, "application+batch") == 0)
    S->match_batch = 1;
  else
    return param_error(err, "sia.match", v, "application or application+batch");
  v = SM__PARAM(s, sia_exec_batch);
  if (v == NULL || strcmp(v, "application") == 0)
    S->exec_job_bsz = 0;
  else if (strcmp(v, "job") == 0)
    S->exec_job_bsz = 1;
  else
    return param_error(err, "sia.exec_batch", v, "application or job");
  return profile_param(S, err);
}

/* ==== Cluster and configurations ==== */

static const char *suffix_of(sm_sim *s, const char *name) {
  const char *map = SM__PARAM(s, sia_type_map);
  static __thread char buf[24];

  /* sia.type_map=NAME:SUFFIX,... overrides the built-in names. */
  for (const char *p = map; p && *p;) {
    const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
    if (comma == NULL)
      comma = p + strlen(p);
    if (colon != NULL && colon < comma && (size_t)(colon - p) == strlen(name) &&
        strncmp(p, name, strlen(name)) == 0 &&
        (size_t)(comma - colon - 1) < sizeof(buf)) {
      memcpy(buf, colon + 1, (size_t)(comma - colon - 1));
      buf[comma - colon - 1] = '\0';
      return buf;
    }
    p = *comma ? comma + 1 : comma;
  }
  for (size_t i = 0; i < SM_ARRAY_LEN(aliases); i++)
    if (strcasecmp(aliases[i].name, name) == 0)
      return aliases[i].suffix;
  return name;
}

static int setup_cluster(sia *S, sm_err *err) {
  const sm_sim_cluster *c = S->cl;

  S->ntypes = c->ntypes;
  if (S->ntypes > T_MAX)
    return sm_err_set(err, SM_ELIMIT, "at most %d GPU types", T_MAX);
  for (int t = 0; t < c->ntypes; t++) {
    const char *name = c->types[t].name;
    if (name[0] == '\0')
      return sm_err_set(err, SM_EINVAL,
                        "the cluster's GPU types must be named after "
                        "the throughput tables, e.g. --cluster "
                        "6x4:t4,3x8:rtx,2x8:a100");
    snprintf(S->tname[t], sizeof(S->tname[t]), "%s", name);
    snprintf(S->suffix[t], sizeof(S->suffix[t]), "%s", suffix_of(S->s, name));
    S->gpn[t] = 0;
    S->nnodes[t] = 0;
  }
  for (int n = 0; n < c->nnodes; n++) {
    int t = c->nodes[n].type;
    if (S->gpn[t] != 0 && S->gpn[t] != c->nodes[n].cap)
      return sm_err_set(err, SM_EINVAL,
                        "nodes of GPU type '%s' differ in size (%d and "
                        "%d GPUs)",
                        S->tname[t], S->gpn[t], c->nodes[n].cap);
    S->gpn[t] = c->nodes[n].cap;
    S->nnodes[t]++;
  }
  /* 1, 2, 4 ... GPUs inside one node, then whole nodes. */
  for (int t = 0, off = 0; t < S->ntypes; t++) {
    int k = 0;
    for (int g = 1; g < S->gpn[t] && k < C_MAX; g *= 2) {
      S->cn[t][k] = 1;
      S->cg[t][k++] = g;
    }
    for (int n = 1; n <= S->nnodes[t] && k < C_MAX; n++) {
      if (n * S->gpn[t] > S->max_gpus)
        break;
      S->cn[t][k] = n;
      S->cg[t][k++] = n * S->gpn[t];
    }
    S->ncfg[t] = k;
    S->coff[t] = off;
    off += k;
  }
  return 0;
}

/* ==== Knowledge ==== */

static int obs_add(tobs *b, int nodes, int reps, int bsz, double step,
                   double sync) {
  for (int i = 0; i < b->n; i++)
    if (b->o[i].nodes == nodes && b->o[i].replicas == reps &&
        b->o[i].bsz == bsz)
      return 0; /* the first report of a point stays */
  if (SM__SIM_GROW(b->o, (size_t)b->n + 1, b->cap) != 0)
    return SM_ENOMEM;
  b->o[b->n].nodes = nodes;
  b->o[b->n].replicas = reps;
  b->o[b->n].bsz = bsz;
  b->o[b->n].step = step;
  b->o[b->n].sync = sync;
  b->n++;
  b->maxrep = SM_MAX(b->maxrep, reps);
  return 1;
}

static void refit(tobs *b) {
  sm__sia_perf_fit(b->o, b->n, &b->perf, NULL);
  b->ver++;
}

static void set_grad(sjob *x, double sqr, double var) {
  if (!x->have_grad || x->sqr != sqr || x->var != var) {
    x->sqr = sqr;
    x->var = var;
    x->have_grad = 1;
    x->gver++;
  }
  if (!x->have_first) {
    x->sqr0 = sqr;
    x->var0 = var;
    x->have_first = 1;
  }
}

/* Largest configuration a job may be offered: twice (sia.growth) the
 * most GPUs it has been seen on, shared across types, within what its
 * batch limits allow. */
static int growth_cap(const sia *S, const sjob *x) {
  int cap = 0;
  for (int t = 0; t < S->ntypes; t++) {
    const sm__sia_gtab *g = x->app->g[t];
    int hard = (int)floor(x->app->max_bsz / g->min_lbsz);
    int c = (int)SM_MIN((double)SM_MAX(S->growth * x->ob[t].maxrep, 1.0),
                        (double)S->max_gpus);
    c = SM_MIN(c, SM_MAX(hard, 1));
    cap = SM_MAX(cap, c);
  }
  return cap;
}

static int has_model(const sjob *x, int t) {
  return x->have_grad && x->ob[t].n > 0;
}

/* Goodput of the job's model of type d at nodes x GPUs. */
static double model_goodput(const sjob *x, int d, int nodes, int gpus) {
  const sm__sia_gtab *g = x->app->g[d];
  sm__sia_bsz b =
      sm__sia_optimize(&x->ob[d].perf, x->sqr, x->var, x->app->init_bsz, nodes,
                       gpus, x->target, g->min_lbsz, g->max_lbsz, 1);
  return b.goodput;
}

/* Fills x->good[t][] for every configuration valid for the job (0 for
 * the others), from its model on t, else projected from the first type
 * it has a model on.  Returns 0 when the job has no model at all. */
static int goodput_rows(const sia *S, sjob *x, int cap) {
  int src = -1;

  for (int t = 0; t < S->ntypes && src < 0; t++)
    if (has_model(x, t))
      src = t;
  if (src < 0 || !x->profiled)
    return 0;
  for (int t = 0; t < S->ntypes; t++) {
    int d = has_model(x, t) ? t : src;
    uint64_t key = ((uint64_t)x->ob[d].ver << 40) ^ ((uint64_t)x->gver << 16) ^
                   ((uint64_t)cap << 4) ^ (uint64_t)d ^
                   ((uint64_t)(d == t) << 3);
    double ratio = x->app->g[t]->xput1 / x->app->g[d]->xput1;
    if (x->gkey[t] == key + 1)
      continue;
    for (int k = 0; k < S->ncfg[t]; k++) {
      int gpus = S->cg[t][k], nodes = S->cn[t][k];
      x->good[t][k] = 0;
      if (gpus > cap || nodes > x->app->g[t]->max_nodes)
        continue;
      if (d == t) {
        x->good[t][k] = model_goodput(x, t, nodes, gpus);
      } else {
        int nd = (gpus + S->gpn[d] - 1) / S->gpn[d];
        x->good[t][k] = model_goodput(x, d, nd, gpus) * ratio;
      }
    }
    x->gkey[t] = key + 1;
  }
  return 1;
}

/* Sia's discount of every configuration but the current one: the share
 * of its age a job has not lost to restarts, counting the next one. */
static double realloc_factor(const sjob *x, double now) {
  double age = now - x->j->submit, pen = x->app->penalty_s;
  double lost = x->restarts * pen;
  if (age < pen)
    return 1.0;
  return SM_MAX(age - lost, 0.0) / (age + pen);
}

/* ==== Batch size and the job's real speed ==== */

static void shape_of(const sjob *x, int *gpn, int *n) {
  *n = x->nheld;
  for (int i = 0; i < x->nheld; i++)
    gpn[i] = x->hgpus[i];
}

/* Chooses the per-GPU batch and accumulation for the current placement
 * with the job's own model, or the starting batch without one. */
static void rebatch(const sia *S, sjob *x) {
  const sm__sia_app *a = x->app;
  const sm__sia_gtab *g = a->g[x->type];
  int gpn[HELD_MAX], n, nodes = x->nheld, reps = x->gpus;
  double maxl, maxb = S->exec_job_bsz ? x->target : a->max_bsz, mem;

  shape_of(x, gpn, &n);
  maxl = sm__sia_max_local_bsz(a, x->type, gpn, n);
  x->atomic = 0;
  if (has_model(x, x->type)) {
    sm__sia_bsz b =
        sm__sia_optimize(&x->ob[x->type].perf, x->sqr, x->var, a->init_bsz,
                         nodes, reps, maxb, g->min_lbsz, maxl, 1);
    if (b.goodput > 0) {
      x->atomic = b.atomic;
      x->accum = b.accum;
    }
  }
  if (x->atomic == 0) {
    double bsz = SM_MAX(a->init_bsz, g->min_lbsz * reps);
    double local = ceil(bsz / reps - EPS);
    x->accum = (int)ceil(local / maxl - EPS) - 1;
    if (x->accum < 0)
      x->accum = 0;
    if (reps == 1 && bsz > a->init_bsz && x->accum < 1)
      x->accum = 1;
    x->atomic = (int)ceil(local / (x->accum + 1) - EPS);
  }
  mem = sm__sia_max_bsz_replicas(a, x->type, reps);
  if (mem > 0 && x->atomic > mem)
    x->atomic = (int)mem;
  {
    int lim = (int)floor(a->max_bsz / ((double)reps * (x->accum + 1)));
    if (x->atomic > lim)
      x->atomic = lim;
  }
  if (x->atomic < 1)
    x->atomic = 1;
}

/* Trains job x for dt seconds from time t; records what it reports and
 * ends it when its last epoch is done.  Returns 0 or SM_ENOMEM. */
static int step(sia *S, world *w, sjob *x, double t, double dt) {
  const sm__sia_app *a = x->app;
  double used = 0;

  if (x->type < 0)
    return 0;
  x->j->attained += dt * x->gpus;
  if (x->restore > 0) {
    double d = SM_MIN(x->restore, dt);
    x->restore -= d;
    x->j->overhead += d;
    used = d;
  }
  while (used < dt - 1e-9 && x->state == 1) {
    int gpn[HELD_MAX], n, reps = x->gpus;
    double st, sy, sqr, var, batch, scale, gain, total, rate, next, left;
    shape_of(x, gpn, &n);
    if (sm__sia_true_step(a, x->type, gpn, n, x->atomic, &st, &sy) != 0) {
      S->stalls++; /* the tables cannot say: no progress (noted) */
      break;
    }
    batch = (double)reps * x->atomic * (x->accum + 1);
    sm__sia_grad(a, batch, x->epoch, &sqr, &var);
    /* What the job reports: its step and sync time, its gradients. */
    {
      int rc = obs_add(&x->ob[x->type], x->nheld, reps, x->atomic, st, sy);
      if (rc < 0)
        return rc;
      if (rc > 0)
        refit(&x->ob[x->type]);
    }
    set_grad(x, sqr, var);
    scale = batch / a->init_bsz;
    gain = (var + sqr) / (var / scale + sqr);
    total = st + (st - sy) * x->accum;
    rate = gain / total;
    if (S->calibrate)
      rate /= a->slowdown;
    next = a->epoch_start[x->epoch + 1];
    left = dt - used;
    if (x->progress + rate * left < next) {
      x->progress += rate * left;
      used = dt;
    } else {
      used += (next - x->progress) / rate;
      x->progress = next;
      x->epoch++;
      if (x->epoch >= a->epochs) {
        double end = t + used;
        x->state = 2;
        x->j->status = SM_SIM_JOB_DONE;
        x->j->final_state = SM_SIM_END_COMPLETED;
        x->j->end = end;
        x->j->executed += used;
        x->j->work_left = 0;
        x->j->duration = x->j->executed - x->j->overhead;
        x->j->attained -= (dt - used) * x->gpus;
        w->done++;
        w->last = SM_MAX(w->last, end);
        if (S->semantic) {
          if (SM__SIM_GROW(w->hist, (size_t)w->nhist + 1, w->caphist) != 0)
            return SM_ENOMEM;
          w->hist[w->nhist].job = x;
          w->hist[w->nhist].end = end;
          w->hist[w->nhist].fp = NULL;
          w->nhist++;
        }
        return 0;
      }
    }
    rebatch(S, x);
  }
  x->j->executed += dt;
  return 0;
}

/* ==== Sia + SchedMate: the history of a workload file ==== */

static void fingerprint(const sia *S, const sjob *x, float *fp) {
  sm_meta m;
  sm_meta_init(&m);
  sm_meta_set_str(&m, SM_META_MODEL_NAME, x->app->name, "trace");
  if (S->match_batch)
    sm_meta_set_num(&m, SM_META_GLOBAL_BATCH_SIZE, x->target, "trace");
  sm_fingerprint(&m, NULL, fp);
  sm_meta_release(&m);
}

/* At submission: ended jobs (before it was submitted) whose fingerprint
 * is close enough seed the job's knowledge. */
static int history_seed(sia *S, world *w, sjob *x) {
  float q[SM_FP_DIMS];
  int best[64], nb = 0;
  float bs[64];

  S->queries++;
  fingerprint(S, x, q);
  for (int i = 0; i < w->nhist; i++) {
    hrec *h = &w->hist[i];
    float c;
    if (!(h->end < x->j->submit))
      continue; /* not known yet when the job was submitted */
    if (h->fp == NULL) {
      h->fp = sm_malloc(SM_FP_DIMS * sizeof(float));
      if (h->fp == NULL)
        return SM_ENOMEM;
      fingerprint(S, h->job, h->fp);
    }
    c = sm_fp_cosine(q, h->fp);
    if (c < S->match_thr)
      continue;
    /* Keep the top k, best score first, earlier ends first on ties. */
    if (nb < S->match_k || c > bs[nb - 1]) {
      int k = nb < S->match_k ? nb++ : nb - 1;
      while (k > 0 && bs[k - 1] < c) {
        bs[k] = bs[k - 1];
        best[k] = best[k - 1];
        k--;
      }
      bs[k] = c;
      best[k] = i;
    }
  }
  if (nb == 0)
    return 0;
  S->hits++;
  x->hit = 1;
  x->profiled = 1;
  for (int k = 0; k < nb; k++) {
    const sjob *m = w->hist[best[k]].job;
    for (int t = 0; t < S->ntypes; t++) {
      int added = 0;
      for (int i = 0; i < m->ob[t].n; i++) {
        const sm__sia_obs *o = &m->ob[t].o[i];
        int rc =
            obs_add(&x->ob[t], o->nodes, o->replicas, o->bsz, o->step, o->sync);
        if (rc < 0)
          return rc;
        added += rc;
      }
      S->seeded += (size_t)added;
    }
  }
  for (int t = 0; t < S->ntypes; t++)
    if (x->ob[t].n > 0)
      refit(&x->ob[t]);
  {
    const sjob *m = w->hist[best[0]].job;
    if (m->have_first) {
      set_grad(x, m->sqr0, m->var0);
      x->have_first = 0; /* its own first report is still to come */
    }
  }
  for (int t = 0; t < S->ntypes; t++)
    x->prof_left[t] = 0;
  return 0;
}

/* ==== Placement ==== */

/* What one round decides for one job (or one profiling GPU). */
typedef struct want {
  sjob *x;          /* the job */
  int prof;         /* 1: a GPU for profiling, not an allocation */
  int type;         /* GPU type */
  int gpus;         /* GPUs */
  int cfg;          /* global configuration index, -1 for profiling */
  int keep;         /* 1: same type and GPUs as now (may keep nodes) */
  int nh;           /* nodes placed */
  int hn[HELD_MAX]; /* their indices */
  int hg[HELD_MAX]; /* GPUs on each */
} want;

/* Takes gpus GPUs of type t from the free counts: whole free nodes
 * first, then the fullest node that fits the rest, else the rest spread
 * over the freest nodes.  Returns 0, or -1 when they are not there
 * (nothing taken). */
static int take(const sia *S, world *w, int t, want *v) {
  int *f = w->tfree[t], n = S->nnodes[t], g = S->gpn[t], left = v->gpus;
  int k = 0, total = 0;

  for (int i = 0; i < n; i++)
    total += f[i];
  if (total < left)
    return -1;
  for (int i = 0; i < n && left >= g && k < HELD_MAX; i++)
    if (f[i] == g) {
      v->hn[k] = i;
      v->hg[k++] = g;
      f[i] = 0;
      left -= g;
    }
  if (left > 0 && k < HELD_MAX) {
    int best = -1;
    for (int i = 0; i < n; i++)
      if (f[i] >= left && (best < 0 || f[i] < f[best]))
        best = i;
    if (best >= 0) {
      v->hn[k] = best;
      v->hg[k++] = left;
      f[best] -= left;
      left = 0;
    }
  }
  while (left > 0 && k < HELD_MAX) {
    int best = -1, q;
    for (int i = 0; i < n; i++)
      if (f[i] > 0 && (best < 0 || f[i] > f[best]))
        best = i;
    if (best < 0)
      break;
    q = SM_MIN(left, f[best]);
    v->hn[k] = best;
    v->hg[k++] = q;
    f[best] -= q;
    left -= q;
  }
  if (left > 0) {
    for (int i = 0; i < k; i++)
      f[v->hn[i]] += v->hg[i];
    return -1;
  }
  v->nh = k;
  return 0;
}

/* 1 when a placement is as compact as the GPU count allows. */
static int compact(const sia *S, const want *v) {
  int g = S->gpn[v->type];
  if (v->gpus <= g)
    return v->nh == 1;
  if (v->gpus % g == 0) {
    for (int i = 0; i < v->nh; i++)
      if (v->hg[i] != g)
        return 0;
  }
  return 1;
}

static int cmp_want(const void *a, const void *b) {
  const want *x = a, *y = b;
  if (x->type != y->type)
    return x->type - y->type;
  if (x->gpus != y->gpus)
    return y->gpus - x->gpus;
  if (x->prof != y->prof)
    return x->prof - y->prof;
  return (int)x->x->j->idx - (int)y->x->j->idx;
}

/* Places every want of type t (v sorted by GPUs, largest first): jobs
 * that keep their GPU count keep their nodes where the others still fit
 * compactly; otherwise everything of the type is placed again, and jobs
 * whose nodes change without a change of shape are counted as moves (as
 * in Sia's simulator they do not restart). */
static int place_type(sia *S, world *w, int t, want *v, int nv) {
  int ok = 1;

  for (int i = 0; i < S->nnodes[t]; i++)
    w->tfree[t][i] = S->gpn[t];
  for (int i = 0; i < nv; i++)
    if (v[i].keep) {
      v[i].nh = v[i].x->nheld;
      memcpy(v[i].hn, v[i].x->hnode, (size_t)v[i].nh * sizeof(int));
      memcpy(v[i].hg, v[i].x->hgpus, (size_t)v[i].nh * sizeof(int));
      for (int k = 0; k < v[i].nh; k++)
        w->tfree[t][v[i].hn[k]] -= v[i].hg[k];
    }
  for (int i = 0; i < nv && ok; i++)
    if (!v[i].keep && (take(S, w, t, &v[i]) != 0 || !compact(S, &v[i])))
      ok = 0;
  if (ok)
    return 0;
  for (int i = 0; i < S->nnodes[t]; i++)
    w->tfree[t][i] = S->gpn[t];
  for (int i = 0; i < nv; i++) {
    if (take(S, w, t, &v[i]) != 0)
      return SM_ECORRUPT; /* the solver kept within the capacity */
    if (v[i].keep) {
      const sjob *x = v[i].x;
      int moved = v[i].nh != x->nheld;
      for (int k = 0; k < v[i].nh && !moved; k++)
        moved = v[i].hn[k] != x->hnode[k] || v[i].hg[k] != x->hgpus[k];
      S->moves += (size_t)moved;
    }
  }
  return 0;
}

static int cmp_int_desc(const void *a, const void *b) {
  return *(const int *)b - *(const int *)a;
}

/* 1 when the GPUs per node of a and b are the same multiset. */
static int same_shape(const int *a, int na, const int *b, int nb) {
  int x[HELD_MAX], y[HELD_MAX];
  if (na != nb)
    return 0;
  memcpy(x, a, (size_t)na * sizeof(int));
  memcpy(y, b, (size_t)nb * sizeof(int));
  qsort(x, (size_t)na, sizeof(int), cmp_int_desc);
  qsort(y, (size_t)nb, sizeof(int), cmp_int_desc);
  return memcmp(x, y, (size_t)na * sizeof(int)) == 0;
}

/* ==== A round ==== */

/* Scratch of one round, reused. */
typedef struct scratch {
  sjob **act;      /* active jobs */
  want *v;         /* decisions */
  int *pj;         /* problem job -> act index */
  int *choice;     /* solver output per problem job */
  int *bind;       /* growth cap binding, per act index */
  sm__sia_cand *c; /* candidates */
  size_t cap_act, cap_pj, cap_ch, cap_bind, cap_v, cap_c; /* capacities */
} scratch;

static void scratch_release(scratch *sc) {
  sm_free(sc->act);
  sm_free(sc->v);
  sm_free(sc->pj);
  sm_free(sc->choice);
  sm_free(sc->bind);
  sm_free(sc->c);
  memset(sc, 0, sizeof(*sc));
}

static double round2(double v) {
  return round(v * 100.0) / 100.0;
}

/* A job's first round: its history (Sia + SchedMate) and profiling. */
static int arrive(sia *S, world *w, sjob *x, double now) {
  x->state = 1;
  x->j->status = SM_SIM_JOB_PENDING;
  x->j->queued += now - x->j->submit;
  x->profiled = 1;
  for (int t = 0; t < S->ntypes; t++) {
    x->prof_left[t] = S->profile_s[t];
    if (x->prof_left[t] > 0)
      x->profiled = 0;
  }
  if (S->semantic) {
    int rc = history_seed(S, w, x);
    if (rc != 0)
      return rc;
  }
  if (!x->profiled) {
    int any = 0;
    for (int t = 0; t < S->ntypes; t++)
      any |= x->prof_left[t] > 0;
    x->profiled = !any;
  }
  return 0;
}

static int run_round(sia *S, world *w, scratch *sc, double now, int *busy,
                     int *pending, sm__sia_bench *bench) {
  int na = 0, nv = 0, np = 0, nc = 0, cap[T_MAX], rc;
  sm__sia_problem prob;
  sm__sia_solve_info info;
  double t0 = sm_now(), t1, t2, t3;

  /* Active jobs; first rounds. */
  if (SM__SIM_GROW(sc->act, (size_t)w->n + 1, sc->cap_act) ||
      SM__SIM_GROW(sc->pj, (size_t)w->n + 1, sc->cap_pj) ||
      SM__SIM_GROW(sc->choice, (size_t)w->n + 1, sc->cap_ch) ||
      SM__SIM_GROW(sc->bind, (size_t)w->n + 1, sc->cap_bind))
    return SM_ENOMEM;
  for (int i = 0; i < w->n; i++) {
    sjob *x = w->jobs[i];
    if (x->state == 2)
      continue;
    if (x->j->submit > now + 1e-9)
      break;
    if (x->state == 0 && (rc = arrive(S, w, x, now)) != 0)
      return rc;
    if (x->profiled == 2)
      x->profiled = 1;
    sc->act[na++] = x;
  }
  S->max_active = SM_MAX(S->max_active, (size_t)na);
  if (SM__SIM_GROW(sc->v, (size_t)na * (S->ntypes + 1) + 1, sc->cap_v))
    return SM_ENOMEM;
  for (int t = 0; t < S->ntypes; t++)
    cap[t] = S->nnodes[t] * S->gpn[t];
  /* Jobs in checkpoint-restore keep what they have. */
  for (int i = 0; i < na; i++) {
    sjob *x = sc->act[i];
    sc->bind[i] = 0;
    if (x->type >= 0 && x->restore > 0) {
      want *v = &sc->v[nv++];
      memset(v, 0, sizeof(*v) - sizeof(v->hn) - sizeof(v->hg));
      v->x = x;
      v->type = x->type;
      v->gpus = x->gpus;
      v->cfg = x->cfg;
      v->keep = 1;
      cap[x->type] -= x->gpus;
    }
  }
  /* Profiling: one GPU of each type not yet profiled. */
  for (int i = 0; i < na; i++) {
    sjob *x = sc->act[i];
    int left = 0;
    if (x->profiled)
      continue;
    for (int t = 0; t < S->ntypes; t++) {
      if (x->prof_left[t] <= 0 || cap[t] < 1)
        continue;
      {
        want *v = &sc->v[nv++];
        double use = SM_MIN(x->prof_left[t], S->interval);
        memset(v, 0, sizeof(*v) - sizeof(v->hn) - sizeof(v->hg));
        v->x = x;
        v->prof = 1;
        v->type = t;
        v->gpus = 1;
        v->cfg = -1;
        cap[t]--;
        x->prof_left[t] -= use;
        S->prof_gpu_s += use;
      }
    }
    for (int t = 0; t < S->ntypes; t++)
      left |= x->prof_left[t] > 1e-9;
    if (!left)
      x->profiled = 2; /* eligible from the next round */
  }
  /* The goodput matrix, as values lambda - A^p. */
  for (int i = 0; i < na; i++) {
    sjob *x = sc->act[i];
    int capx, model, hard = 0;
    double mn = INFINITY, f;
    if ((x->type >= 0 && x->restore > 0) || x->profiled != 1)
      continue;
    capx = growth_cap(S, x);
    for (int t = 0; t < S->ntypes; t++)
      hard = SM_MAX(hard,
                    (int)SM_MIN(floor(x->app->max_bsz / x->app->g[t]->min_lbsz),
                                (double)S->max_gpus));
    sc->bind[i] = capx < hard ? capx : 0;
    model = goodput_rows(S, x, capx);
    for (int t = 0; t < S->ntypes; t++)
      for (int k = 0; k < S->ncfg[t]; k++) {
        double g = model ? x->good[t][k] : (S->cg[t][k] == 1 ? 1.0 : 0.0);
        x->row[S->coff[t] + k] = g;
        if (g > 0)
          mn = SM_MIN(mn, g);
      }
    if (!isfinite(mn))
      continue; /* nothing valid: it waits */
    f = realloc_factor(x, now);
    if (SM__SIM_GROW(sc->c,
                     (size_t)nc + (size_t)(S->coff[S->ntypes - 1] +
                                           S->ncfg[S->ntypes - 1]),
                     sc->cap_c))
      return SM_ENOMEM;
    sc->pj[np] = i;
    for (int t = 0; t < S->ntypes; t++)
      for (int k = 0; k < S->ncfg[t]; k++) {
        int gi = S->coff[t] + k;
        double a = x->row[gi] / mn, ap, val;
        if (!(x->row[gi] > 0))
          continue;
        if (x->cfg >= 0 && gi != x->cfg)
          a *= f;
        ap = a > 0 ? round2(pow(a, S->p)) : 3000;
        if (ap > 3000)
          ap = 3000;
        val = S->p < 0 ? S->lambda - ap : ap - S->lambda;
        sc->c[nc].job = np;
        sc->c[nc].type = t;
        sc->c[nc].gpus = S->cg[t][k];
        sc->c[nc].config = gi;
        sc->c[nc].value = val;
        nc++;
      }
    np++;
  }
  t1 = sm_now();
  /* The allocation problem. */
  prob.njobs = np;
  prob.ntypes = S->ntypes;
  memcpy(prob.cap, cap, sizeof(cap));
  prob.c = sc->c;
  prob.nc = nc;
  if ((rc = sm__sia_solve(&prob, &S->so, sc->choice, &info)) != 0)
    return rc;
  t2 = sm_now();
  if (np > 0) {
    S->solved[info.how]++;
    S->solve_s += info.seconds;
    S->solve_max = SM_MAX(S->solve_max, info.seconds);
    S->solve_cpu += info.cpu_seconds;
    S->solve_cpu_max = SM_MAX(S->solve_cpu_max, info.cpu_seconds);
    S->max_cols = SM_MAX(S->max_cols, (size_t)info.cols);
  }
  for (int q = 0; q < np; q++) {
    const sm__sia_cand *c;
    sjob *x;
    want *v;
    if (sc->choice[q] < 0)
      continue;
    c = &sc->c[sc->choice[q]];
    x = sc->act[sc->pj[q]];
    v = &sc->v[nv++];
    memset(v, 0, sizeof(*v) - sizeof(v->hn) - sizeof(v->hg));
    v->x = x;
    v->type = c->type;
    v->gpus = c->gpus;
    v->cfg = c->config;
    v->keep = x->type == c->type && x->gpus == c->gpus;
  }
  /* Placement, type by type. */
  qsort(sc->v, (size_t)nv, sizeof(want), cmp_want);
  for (int i = 0; i < nv;) {
    int j = i;
    while (j < nv && sc->v[j].type == sc->v[i].type)
      j++;
    if ((rc = place_type(S, w, sc->v[i].type, &sc->v[i], j - i)) != 0)
      return rc;
    i = j;
  }
  t3 = sm_now();
  /* Apply: restarts, suspensions, batch sizes. */
  *busy = 0;
  *pending = 0;
  for (int i = 0; i < na; i++)
    sc->act[i]->mark = 0;
  for (int i = 0; i < nv; i++) {
    want *v = &sc->v[i];
    sjob *x = v->x;
    *busy += v->gpus;
    if (v->prof)
      continue;
    x->mark = 1;
    x->cfg = v->cfg;
    if (x->type == v->type && x->gpus == v->gpus &&
        same_shape(x->hgpus, x->nheld, v->hg, v->nh)) {
      x->nheld = v->nh;
      memcpy(x->hnode, v->hn, (size_t)v->nh * sizeof(int));
      memcpy(x->hgpus, v->hg, (size_t)v->nh * sizeof(int));
      continue;
    }
    /* A start, or a restart from the last checkpoint. */
    if (x->started) {
      int ai;
      x->restarts++;
      S->restarts++;
      for (ai = 0; ai < na && sc->act[ai] != x; ai++)
        ;
      if (ai < na && sc->bind[ai] > 0 && v->gpus >= sc->bind[ai])
        S->boot_restarts++; /* grew to the growth cap */
    } else {
      x->started = 1;
      x->j->first_start = now;
    }
    x->j->starts++;
    x->type = v->type;
    x->gpus = v->gpus;
    x->nheld = v->nh;
    memcpy(x->hnode, v->hn, (size_t)v->nh * sizeof(int));
    memcpy(x->hgpus, v->hg, (size_t)v->nh * sizeof(int));
    x->restore = x->app->restore_s;
    x->j->status = SM_SIM_JOB_RUNNING;
    rebatch(S, x);
  }
  for (int i = 0; i < na; i++) {
    sjob *x = sc->act[i];
    if (x->mark)
      continue; /* decided above */
    x->cfg = -1;
    if (x->type >= 0) {
      /* Suspended: back to the queue, its progress kept. */
      x->type = -1;
      x->gpus = 0;
      x->nheld = 0;
      x->restore = 0;
      x->j->preemptions++;
      x->j->status = SM_SIM_JOB_PENDING;
      S->suspends++;
    }
    (*pending)++;
    x->j->queued += S->interval;
  }
  S->rounds++;
  {
    double dt = sm_now() - t0;
    S->round_max = SM_MAX(S->round_max, dt);
  }
  if (bench != NULL) {
    bench->matrix_s = t1 - t0;
    bench->solve_s = t2 - t1;
    bench->solve_cpu_s = info.cpu_seconds;
    bench->place_s = t3 - t2;
    bench->cols = info.cols;
    bench->how = info.how;
    bench->allocated = 0;
    for (int i = 0; i < nv; i++)
      bench->allocated += !sc->v[i].prof;
  }
  return 0;
}

/* Runs one workload file to the end of its last job. */
static int run_world(sia *S, world *w, scratch *sc, sm_err *err) {
  double now = 0, idle = 0;
  long rounds = 0;
  int rc;

  for (int t = 0; t < S->ntypes; t++) {
    w->tfree[t] =
        sm_malloc((size_t)(S->nnodes[t] ? S->nnodes[t] : 1) * sizeof(int));
    if (w->tfree[t] == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    for (int i = 0; i < S->nnodes[t]; i++)
      w->tfree[t][i] = S->gpn[t];
  }
  w->first = w->n ? w->jobs[0]->j->submit : 0;
  /* Rounds at multiples of the interval from the first submission. */
  now = w->first;
  while (w->done < w->n) {
    int busy, pend;
    rc = run_round(S, w, sc, now, &busy, &pend, NULL);
    if (rc == SM_ENOMEM)
      return sm_err_set(err, rc, "out of memory");
    if (rc != 0)
      return sm_err_set(err, rc,
                        "invariant: a round's allocation did not fit "
                        "the cluster (round at %.0f s)",
                        now);
    if (sm__series_add(&w->ser, now, busy, pend) != 0)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    w->busy_int += (double)busy * S->interval;
    for (int i = 0; i < w->n; i++) {
      sjob *x = w->jobs[i];
      if (x->state == 1 && (rc = step(S, w, x, now, S->interval)) != 0)
        return sm_err_set(err, rc, "out of memory");
    }
    /* Nothing running and nothing new to come: the rest cannot run. */
    if (busy == 0 && (w->n == 0 || w->jobs[w->n - 1]->j->submit <= now)) {
      idle += S->interval;
      if (idle > 100 * S->interval)
        break;
    } else {
      idle = 0;
    }
    now += S->interval;
    /* An empty cluster waits for the next submission's round. */
    if (busy == 0 && pend == 0) {
      double next = INFINITY;
      for (int i = 0; i < w->n; i++)
        if (w->jobs[i]->state == 0) {
          next = w->jobs[i]->j->submit;
          break;
        }
      if (isfinite(next) && next > now)
        now += ceil((next - now) / S->interval - 1e-9) * S->interval;
    }
    if (++rounds > MAX_ROUNDS)
      return sm_err_set(err, SM_ELIMIT,
                        "more than %d rounds of %.0f s in one workload: "
                        "stopped",
                        MAX_ROUNDS, S->interval);
  }
  return 0;
}

/* ==== Set-up ==== */

static const char *attr(const sm_sim_job *j, const char *key) {
  return sm_sim_job_attr(j, key);
}

static int open_tables(sia *S, sm_err *err) {
  const char *dir = SM__PARAM(S->s, sia_tables);
  const char *suf[T_MAX];

  if (dir == NULL || *dir == '\0')
    dir = getenv("SM_SIA_TABLES");
  if (dir == NULL || *dir == '\0')
    return sm_err_set(err, SM_ENOENT,
                      "no throughput tables: --param sia.tables=DIR (or "
                      "SM_SIA_TABLES; one directory per application with "
                      "placements-<gpu>.csv, scalability-<gpu>.csv and "
                      "validation-<batch>.csv, as in Sia's artifact)");
  for (int t = 0; t < S->ntypes; t++)
    suf[t] = S->suffix[t];
  return sm__sia_tables_open(dir, suf, S->ntypes, &S->tab, err);
}

static int setup_jobs(sia *S, sm_sim *s, sm_err *err) {
  const sm_sim_trace *tr = s->trace;
  const char *names[4096];
  int nnames = 0, rc;

  S->njobs = tr->n;
  S->jobs = sm_calloc(tr->n ? tr->n : 1, sizeof(sjob));
  if (S->jobs == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory (%zu jobs)", tr->n);
  for (size_t i = 0; i < tr->n; i++) {
    sm_sim_job *j = &s->jobs[i];
    sjob *x = &S->jobs[i];
    const char *app = attr(j, "application"), *wl = attr(j, "workload");
    const char *b = attr(j, "batch_size");
    double bsz;
    int k;
    j->status = SM_SIM_JOB_FUTURE;
    j->first_start = j->end = NAN;
    j->queued = j->executed = j->attained = j->overhead = 0;
    j->work_left = 0;
    j->rate = 0;
    j->preemptions = j->restarts = j->starts = 0;
    j->_run = NULL;
    j->vc = 0;
    x->j = j;
    x->type = -1;
    x->cfg = -1;
    if (app == NULL || *app == '\0')
      return sm_err_set(err, SM_EINVAL,
                        "%s:%d: job %.40s has no application: Sia runs "
                        "Sia workload files (name,time,application,"
                        "num_replicas,batch_size)",
                        tr->name, j->line, j->id);
    rc = sm__sia_app_get(S->tab, app, &x->app, err);
    if (rc != 0)
      return rc;
    if (x->app->nval < 1 || x->app->epochs < 1)
      return sm_err_set(err, SM_EINVAL, "application %s has no epochs", app);
    x->target = x->app->max_bsz;
    if (b != NULL && *b != '\0') {
      if (sm_parse_double(b, &bsz) != 0 || !(bsz > 0) || !isfinite(bsz))
        return sm_err_set(err, SM_EPARSE,
                          "%s:%d: batch_size '%.40s' is not a positive "
                          "number",
                          tr->name, j->line, b);
      x->target = SM_MIN(SM_MAX(bsz, x->app->init_bsz), x->app->max_bsz);
    }
    if (wl == NULL)
      wl = "";
    for (k = 0; k < nnames && strcmp(names[k], wl) != 0; k++)
      ;
    if (k == nnames) {
      if (nnames == (int)SM_ARRAY_LEN(names))
        return sm_err_set(err, SM_ELIMIT, "more than %zu workload files",
                          SM_ARRAY_LEN(names));
      names[nnames++] = wl;
    }
    x->world = k;
  }
  S->nw = nnames ? nnames : 1;
  S->w = sm_calloc((size_t)S->nw, sizeof(world));
  if (S->w == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (size_t i = 0; i < S->njobs; i++)
    S->w[S->jobs[i].world].n++;
  for (int k = 0; k < S->nw; k++) {
    S->w[k].jobs =
        sm_malloc((size_t)(S->w[k].n ? S->w[k].n : 1) * sizeof(sjob *));
    if (S->w[k].jobs == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    S->w[k].n = 0;
  }
  for (size_t i = 0; i < S->njobs; i++) {
    world *w = &S->w[S->jobs[i].world];
    w->jobs[w->n++] = &S->jobs[i];
  }
  return 0;
}

static void sia_release(sia *S) {
  for (size_t i = 0; i < S->njobs; i++)
    for (int t = 0; t < T_MAX; t++)
      sm_free(S->jobs[i].ob[t].o);
  for (int k = 0; S->w && k < S->nw; k++) {
    world *w = &S->w[k];
    for (int t = 0; t < T_MAX; t++)
      sm_free(w->tfree[t]);
    for (int i = 0; i < w->nhist; i++)
      sm_free(w->hist[i].fp);
    sm_free(w->hist);
    sm_free(w->jobs);
    sm__series_release(&w->ser);
  }
  sm_free(S->w);
  sm_free(S->jobs);
  sm__sia_tables_free(S->tab);
}

/* ==== Results ==== */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Merges the files' series (mean per round) into the run's. */
static int merge_series(sia *S, sm_sim *s) {
  size_t n = 0;

  for (int k = 0; k < S->nw; k++)
    n = SM_MAX(n, S->w[k].ser.n);
  for (size_t i = 0; i < n; i++) {
    double b = 0, p = 0, t = NAN;
    int pend;
    for (int k = 0; k < S->nw; k++) {
      const sm__series *ws = &S->w[k].ser;
      if (i < ws->n) {
        b += ws->busy[i];
        p += ws->pending[i];
        if (isnan(t))
          t = ws->t[i];
      }
    }
    pend = (int)lround(p / S->nw);
    if (sm__series_add(&s->ser, isnan(t) ? (double)i * S->interval : t,
                       (int)lround(b / S->nw), pend) != 0)
      return SM_ENOMEM;
    s->peak_pending = SM_MAX(s->peak_pending, (size_t)pend);
  }
  return 0;
}

static void figures(sia *S, sm_sim *s) {
  size_t solves = S->solved[1] + S->solved[2] + S->solved[3] + S->solved[4];
  double n = S->njobs ? (double)S->njobs : 1;

  SM__FIG_ADD(s, sia_workload_files, S->nw);
  SM__FIG_ADD(s, sia_rounds, (double)S->rounds);
  SM__FIG_ADD(s, sia_restarts, (double)S->restarts);
  SM__FIG_ADD(s, sia_restarts_per_job, S->restarts / n);
  SM__FIG_ADD(s, sia_bootstrap_restarts, (double)S->boot_restarts);
  SM__FIG_ADD(s, sia_suspensions, (double)S->suspends);
  SM__FIG_ADD(s, sia_moves, (double)S->moves);
  SM__FIG_ADD(s, sia_solves_optimal, (double)S->solved[1]);
  SM__FIG_ADD(s, sia_solves_time_limit, (double)S->solved[2]);
  SM__FIG_ADD(s, sia_solves_fallback, (double)S->solved[3]);
  SM__FIG_ADD(s, sia_solves_greedy, (double)S->solved[4]);
  SM__FIG_ADD(s, sia_solve_ms_avg,
              solves ? 1e3 * S->solve_s / (double)solves : 0);
  SM__FIG_ADD(s, sia_solve_ms_max, 1e3 * S->solve_max);
  SM__FIG_ADD(s, sia_solve_cpu_ms_avg,
              solves ? 1e3 * S->solve_cpu / (double)solves : 0);
  SM__FIG_ADD(s, sia_solve_cpu_ms_max, 1e3 * S->solve_cpu_max);
  SM__FIG_ADD(s, sia_round_ms_max, 1e3 * S->round_max);
  SM__FIG_ADD(s, sia_columns_max, (double)S->max_cols);
  SM__FIG_ADD(s, sia_active_max, (double)S->max_active);
  SM__FIG_ADD(s, sia_profiling_gpu_h, S->prof_gpu_s / 3600);
  if (S->semantic) {
    SM__FIG_ADD(s, facts_queries, (double)S->queries);
    SM__FIG_ADD(s, facts_hits, (double)S->hits);
    SM__FIG_ADD(s, facts_hit_rate,
                S->queries ? (double)S->hits / (double)S->queries : 0);
    SM__FIG_ADD(s, sia_seeded_points, (double)S->seeded);
    SM__FIG_ADD(s, sia_profiling_gpu_h_saved, S->prof_saved_s / 3600);
  }
}

static void notes(sia *S, sm_sim *s) {
  char types[256] = "";
  size_t solves = S->solved[1] + S->solved[2] + S->solved[3] + S->solved[4];

  for (int t = 0; t < S->ntypes; t++) {
    size_t L = strlen(types);
    snprintf(types + L, sizeof(types) - L, "%s%s (%dx%d, table %s)",
             t ? ", " : "", S->tname[t], S->nnodes[t], S->gpn[t], S->suffix[t]);
  }
  sm_sim_note(s,
              "%s: elastic jobs train to the epochs of their application "
              "(validation tables of %s, read at run time); the trace's "
              "num_replicas and durations are not used",
              s->pol->name, sm__sia_tables_dir(S->tab));
  sm_sim_note(s, "%s: GPU types %s; rounds of %.0f s, p = %g, lambda = %g",
              s->pol->name, types, S->interval, S->p, S->lambda);
  if (S->so.use_cbc)
    sm_sim_note(s,
                "%s: MILP solved by COIN-OR CBC (time limit %g s, gap %g): "
                "%zu of %zu rounds optimal, %zu stopped at the time limit "
                "(best solution used), %zu fell back to the greedy "
                "allocation",
                s->pol->name, S->so.time_limit, S->so.gap, S->solved[1], solves,
                S->solved[2], S->solved[3]);
  else
    sm_sim_note(s,
                "%s: greedy allocation (sia.solver=greedy), not Sia's MILP: "
                "%zu rounds",
                s->pol->name, solves);
  if (S->nw > 1)
    sm_sim_note(s,
                "%s: %d workload files, each on its own copy of the "
                "cluster; average and p99 JCT over the jobs of all files "
                "(p99: the sorted JCTs at index floor(0.99 n)), makespan "
                "and utilisation averaged over the files (Sia's "
                "definitions); the time series is the mean over the files",
                s->pol->name, S->nw);
  {
    int any = 0;
    for (int t = 0; t < S->ntypes; t++)
      any |= S->profile_s[t] > 0;
    if (any)
      sm_sim_note(s,
                  "%s: profiling on one GPU of each type before a job's "
                  "first round (sia.profile_s): %.1f GPU-hours",
                  s->pol->name, S->prof_gpu_s / 3600);
    else
      sm_sim_note(s,
                  "%s: profiling costs no time (sia.profile_s = 0, as in "
                  "Sia's simulator): the single-GPU throughput of each "
                  "type is known at submission",
                  s->pol->name);
  }
  if (S->semantic)
    sm_sim_note(s,
                "%s: facts from the history of each workload file: jobs "
                "that ended before the submission, matched by the "
                "fingerprint of the %s (cosine >= %.2f, top %d); a hit "
                "starts with their observations and gradient statistics; "
                "%zu of %zu jobs hit",
                s->pol->name,
                S->match_batch ? "application and batch size" : "application",
                S->match_thr, S->match_k, S->hits, S->queries);
  if (S->stalls)
    sm_sim_note(s,
                "%s: %zu steps had a placement the tables cannot price (no "
                "progress made)",
                s->pol->name, S->stalls);
}

static int sia_common(const sm_sim_trace *t, const sm_sim_cluster *c,
                      const sm_sim_config *cfg, int semantic,
                      sm_sim_result **out, sm_err *err) {
  sm_sim s;
  sia S;
  scratch sc;
  double t0 = sm_now();
  int rc = 0;
  size_t unfinished = 0;

  memset(&s, 0, sizeof(s));
  memset(&S, 0, sizeof(S));
  memset(&sc, 0, sizeof(sc));
  s.trace = t;
  s.cl = c;
  s.cfg = *cfg;
  s.pol = sm_sim_policy_find(cfg->policy ? cfg->policy : "sia");
  if (s.pol == NULL)
    s.pol = semantic ? &sm__policy_sia_schedmate : &sm__policy_sia;
  s.cfg.semantic = semantic ? "on" : "off";
  sm_arena_init(&s.arena, 1 << 20, 0);
  sm_rng_seed(&s.rng, cfg->seed);
  s.par = sm_arena_alloc(&s.arena, sizeof(*s.par));
  s.figs = sm_arena_calloc(&s.arena, 1, sizeof(*s.figs));
  if (s.par == NULL || s.figs == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto out;
  }
  sm__params_parse(s.par, &s.cfg);
  S.s = &s;
  S.cl = c;
  S.semantic = semantic;
  s.jobs = sm_arena_alloc(&s.arena, (t->n ? t->n : 1) * sizeof(sm_sim_job));
  if (s.jobs == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto out;
  }
  memcpy(s.jobs, t->jobs, t->n * sizeof(sm_sim_job));
  s.njobs = t->n;
  if ((rc = setup_cluster(&S, err)) != 0 || (rc = read_params(&S, err)) != 0)
    goto out;
  /* The configurations depend on sia.max_gpus: build them again. */
  if ((rc = setup_cluster(&S, err)) != 0 || (rc = open_tables(&S, err)) != 0 ||
      (rc = setup_jobs(&S, &s, err)) != 0)
    goto out;
  for (int k = 0; k < S.nw && rc == 0; k++)
    rc = run_world(&S, &S.w[k], &sc, err);
  if (rc != 0)
    goto out;
  for (size_t i = 0; i < S.njobs; i++) {
    sjob *x = &S.jobs[i];
    if (x->state != 2)
      unfinished++;
    if (x->hit)
      for (int ty = 0; ty < S.ntypes; ty++)
        S.prof_saved_s += S.profile_s[ty];
    if (x->j->status == SM_SIM_JOB_DONE &&
        (!(x->j->first_start >= x->j->submit - 1e-6) ||
         !(x->j->end >= x->j->first_start)))
      rc = sm_err_set(err, SM_ECORRUPT,
                      "invariant: job %s starts before its submission "
                      "or ends before it starts",
                      x->j->id);
  }
  if (rc != 0)
    goto out;
  if (unfinished)
    sm_sim_note(&s,
                "%s: %zu jobs never ran to their end (no configuration of "
                "the cluster suits them)",
                s.pol->name, unfinished);
  figures(&S, &s);
  notes(&S, &s);
  if ((rc = merge_series(&S, &s)) != 0) {
    rc = sm_err_set(err, rc, "out of memory");
    goto out;
  }
  {
    double bi = 0;
    for (int k = 0; k < S.nw; k++)
      bi += S.w[k].busy_int;
    s.busy_integral = bi / S.nw;
  }
  s.events = S.rounds;
  rc = sm__result_build(&s, sm_now() - t0, out, err);
  if (rc == 0 && S.nw > 1) {
    sm_sim_result *r = *out;
    double ms = 0, ut = 0;
    int nm = 0;
    for (int k = 0; k < S.nw; k++) {
      const world *w = &S.w[k];
      if (w->done == 0)
        continue;
      ms += w->last - w->first;
      if (w->last > w->first)
        ut += w->busy_int / ((double)c->gpus * (w->last - w->first));
      nm++;
    }
    r->sum.makespan_s = nm ? ms / nm : 0;
    r->sum.avg_util = nm ? ut / nm : 0;
    if (r->njct > 0) {
      qsort(r->jct, r->njct, sizeof(double), cmp_dbl);
      r->sum.p99_jct_s = r->jct[(size_t)floor(0.99 * (double)r->njct)];
    }
  }
out:
  scratch_release(&sc);
  sia_release(&S);
  sm__params_release(s.par); /* before its arena */
  sm__figures_release(s.figs);
  sm_arena_discard(&s.arena);
  sm__notes_release(&s.notes);
  sm__series_release(&s.ser);
  return rc;
}

static int sia_run(const sm_sim_trace *t, const sm_sim_cluster *c,
                   const sm_sim_config *cfg, sm_sim_result **out, sm_err *err) {
  int semantic = cfg->semantic != NULL && strcmp(cfg->semantic, "on") == 0;
  return sia_common(t, c, cfg, semantic, out, err);
}

static int sia_sm_run(const sm_sim_trace *t, const sm_sim_cluster *c,
                      const sm_sim_config *cfg, sm_sim_result **out,
                      sm_err *err) {
  return sia_common(t, c, cfg, 1, out, err);
}

/* Never called: these policies run the whole simulation themselves. */
static void no_schedule(sm_sim *s, void *state, int vc) {
  (void)s;
  (void)state;
  (void)vc;
}

const sm_sim_policy sm__policy_sia = {
    "sia",
    "Sia: heterogeneity-aware goodput-optimised elastic jobs, a MILP every "
    "round (SOSP'23)",
    SM_SIM_POLICY_PREEMPTIVE | SM_SIM_POLICY_SEMANTIC,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    no_schedule,
    NULL,
    sia_run};

const sm_sim_policy sm__policy_sia_schedmate = {
    "sia+schedmate",
    "Sia with SchedMate: a history hit starts from the matched jobs' "
    "goodput model",
    SM_SIM_POLICY_PREEMPTIVE | SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_FACTS |
        SM_SIM_POLICY_HISTORY_ONLY,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
    no_schedule,
    NULL,
    sia_sm_run};

/* ==== Benchmark round ==== */

int sm__sia_bench_round(const char *tables, const sm_sim_cluster *c, int njobs,
                        const char *solver, double time_limit, uint64_t seed,
                        sm__sia_bench *out, sm_err *err, int reduce) {
  static const char *const apps[] = {"cifar10", "deepspeech2", "bert",
                                     "yolov3",  "imagenet",    "toyconv",
                                     "toylm"};
  const sm__sia_app *ap[SM_ARRAY_LEN(apps)];
  sm_sim s;
  sia S;
  scratch sc;
  world w;
  sm_rng rng;
  sm__params par;
  sm__figures figs;
  char limit[32];
  int rc, busy, pend, napps = 0;

  memset(&s, 0, sizeof(s));
  memset(&S, 0, sizeof(S));
  memset(&sc, 0, sizeof(sc));
  memset(&w, 0, sizeof(w));
  memset(out, 0, sizeof(*out));
  sm_sim_config_init(&s.cfg);
  snprintf(limit, sizeof(limit), "%g", time_limit);
  sm_sim_config_set(&s.cfg, "sia.solver", solver);
  sm_sim_config_set(&s.cfg, "sia.time_limit", limit);
  sm_sim_config_set(&s.cfg, "sia.tables", tables);
  sm_sim_config_set(&s.cfg, "sia.reduce", reduce ? "1" : "0");
  sm__params_parse(&par, &s.cfg);
  s.par = &par;
  memset(&figs, 0, sizeof(figs));
  s.figs = &figs;
  s.cl = c;
  s.pol = &sm__policy_sia;
  sm_rng_seed(&rng, seed);
  S.s = &s;
  S.cl = c;
  if ((rc = setup_cluster(&S, err)) != 0 || (rc = read_params(&S, err)) != 0 ||
      (rc = setup_cluster(&S, err)) != 0 || (rc = open_tables(&S, err)) != 0)
    goto out;
  for (size_t i = 0; i < SM_ARRAY_LEN(apps); i++) {
    sm_err e2 = {0};
    if (sm__sia_app_get(S.tab, apps[i], &ap[napps], &e2) == 0)
      napps++;
  }
  if (napps == 0) {
    rc = sm_err_set(err, SM_ENOENT, "sia bench: no usable application in %s",
                    tables);
    goto out;
  }
  S.njobs = (size_t)njobs;
  S.jobs = sm_calloc((size_t)njobs, sizeof(sjob));
  s.jobs = sm_calloc((size_t)njobs, sizeof(sm_sim_job));
  w.jobs = sm_malloc((size_t)njobs * sizeof(sjob *));
  if (S.jobs == NULL || s.jobs == NULL || w.jobs == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto out;
  }
  S.nw = 1;
  w.n = njobs;
  for (int t = 0; t < S.ntypes; t++) {
    w.tfree[t] =
        sm_malloc((size_t)(S.nnodes[t] ? S.nnodes[t] : 1) * sizeof(int));
    if (w.tfree[t] == NULL) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      goto out;
    }
  }
  /* Every job has run on a few configurations of every type. */
  for (int i = 0; i < njobs; i++) {
    sjob *x = &S.jobs[i];
    const sm__sia_app *a = ap[sm_rng_next(&rng) % (uint64_t)napps];
    x->j = &s.jobs[i];
    x->j->idx = (uint32_t)i;
    x->j->submit = -3600.0 * sm_rng_uniform(&rng);
    x->j->first_start = x->j->end = NAN;
    x->app = a;
    x->target = a->max_bsz;
    x->type = x->cfg = -1;
    x->state = 1;
    x->profiled = 1;
    for (int t = 0; t < S.ntypes; t++) {
      int shapes[4][2] = {{1, 1}, {1, 2}, {1, S.gpn[t]}, {2, S.gpn[t]}};
      for (int q = 0; q < 4; q++) {
        int gpn[2] = {shapes[q][1], shapes[q][1]}, n = shapes[q][0];
        double b = a->g[t]->min_lbsz * (1 + (q % 2)), st, sy;
        if (n > S.nnodes[t] ||
            sm__sia_true_step(a, t, gpn, n, b, &st, &sy) != 0)
          continue;
        if (obs_add(&x->ob[t], n, n * shapes[q][1], (int)b, st, sy) < 0) {
          rc = sm_err_set(err, SM_ENOMEM, "out of memory");
          goto out;
        }
      }
      if (x->ob[t].n > 0)
        refit(&x->ob[t]);
    }
    {
      double sq, va;
      sm__sia_grad(a, a->init_bsz, 0, &sq, &va);
      set_grad(x, sq, va);
    }
    w.jobs[i] = x;
  }
  {
    double t0 = sm_now();
    sm__sia_bench b2;
    rc = run_round(&S, &w, &sc, 0, &busy, &pend, out);
    if (rc != 0) {
      rc = sm_err_set(err, rc, "sia bench: the round failed");
      goto out;
    }
    (void)t0;
    /* The next round with nothing learnt in between: cached rows. */
    for (int i = 0; i < njobs; i++)
      S.jobs[i].restore = 0;
    t0 = sm_now();
    rc = run_round(&S, &w, &sc, 60, &busy, &pend, &b2);
    out->warm_s = sm_now() - t0;
    if (rc != 0)
      rc = sm_err_set(err, rc, "sia bench: the round failed");
  }
out:
  scratch_release(&sc);
  for (int t = 0; t < T_MAX; t++)
    sm_free(w.tfree[t]);
  sm_free(w.jobs);
  S.w = NULL;
  S.nw = 0;
  sia_release(&S);
  sm_free(s.jobs);
  sm__figures_release(&figs);
  sm__notes_release(&s.notes);
  sm__params_release(&par);
  return rc;
}
