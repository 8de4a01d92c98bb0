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

#include "sim/cbc_load_int.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sia_int.h"
#include "sim/sia_round_int.h"

#define T_MAX SM__SIA_MAX_TYPES
#define C_MAX SM__SIA_MAX_CONFIGS
#define HELD_MAX SM__SIA_HELD_MAX

/* Table suffixes of the GPU names a cluster spec may use. */
static const struct {
  const char *name, *suffix;
} aliases[] = {{"t4", "aws"},      {"aws", "aws"},         {"rtx", "rtx"},
               {"2080ti", "rtx"},  {"rtx2080ti", "rtx"},   {"a100", "dgx-ext"},
               {"dgx", "dgx-ext"}, {"dgx-ext", "dgx-ext"}, {"v100", "azure"},
               {"azure", "azure"}, {"quadro", "quad"},     {"quad", "quad"},
               {"rtx6000", "quad"}};

/* ==== Parameters ==== */

static int param_error(sm_err *err, const char *key, const char *v,
                       const char *want) {
  return sm_err_set(err, SM_EINVAL, "--param %s=%.40s: expected %s", key,
                    v ? v : "", want);
}

/* A parameter that counts (nodes, GPUs, candidates) or switches: a whole
 * number in [lo, hi].  "sia.max_nodes=2.5" is refused, not truncated. */
static int count_param(sm_sim *s, int id, const char *key, double lo, double hi,
                       int *out, sm_err *err) {
  double d;
  int rc;

  if ((rc = sm__params_num_in(s, id, lo, hi, &d, err)))
    return rc;
  if (d != floor(d))
    return param_error(err, key, s->par->text[id], "a whole number");
  *out = (int)d;
  return 0;
}

static int type_index(const sm__sia_run *S, const char *name, size_t n) {
  for (int t = 0; t < S->ntypes; t++)
    if (strlen(S->tname[t]) == n && strncmp(S->tname[t], name, n) == 0)
      return t;
  return -1;
}

/* sia.profile_s: one number for every type, or TYPE:S,... */
static int profile_param(sm__sia_run *S, sm_err *err) {
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

static int read_params(sm__sia_run *S, sm_err *err) {
  sm_sim *s = S->s;
  const char *v;
  double d;
  int k;
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
  if ((rc = count_param(s, SM__P_sia_max_nodes, "sia.max_nodes", 0, 1e9,
                        &S->so.max_nodes, err)) ||
      (rc = count_param(s, SM__P_sia_max_gpus, "sia.max_gpus", 1, 4096,
                        &S->max_gpus, err)) ||
      (rc = count_param(s, SM__P_sia_match_top_k, "sia.match_top_k", 1, 64,
                        &S->match_k, err)) ||
      (rc =
           count_param(s, SM__P_sia_calibrate, "sia.calibrate", 0, 1, &k, err)))
    return rc;
  S->calibrate = k != 0;
  if ((rc = sm__params_num_in(s, SM__P_sia_reduce, 0, 1, &d, err)))
    return rc;
  S->so.reduce = d != 0;
  v = SM__PARAM(s, sia_solver);
  if (v == NULL || strcmp(v, "cbc") == 0) {
    if ((rc = sm__cbc_load(err)) != 0) /* not built, or does not load */
      return rc;
    S->so.use_cbc = 1;
  } else if (strcmp(v, "greedy") == 0) {
    S->so.use_cbc = 0;
  } else {
    return param_error(err, "sia.solver", v, "cbc or greedy");
  }
  /* The fit's variables; "-exact": one per-GPU batch means one distinct
   * value (Pollux's and the artifact's test), not batches within
   * SM__SIA_BSZ_TOL. */
  v = SM__PARAM(s, sia_fit);
  S->linfit = v != NULL && strncmp(v, "linear", 6) == 0;
  S->fit_tol = SM__SIA_BSZ_TOL;
  if (v != NULL && strcmp(v, "log") != 0 && strcmp(v, "linear") != 0) {
    if (strcmp(v, "log-exact") != 0 && strcmp(v, "linear-exact") != 0)
      return param_error(err, "sia.fit", v,
                         "log, linear, log-exact or linear-exact");
    S->fit_tol = 1.0;
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

static int setup_cluster(sm__sia_run *S, sm_err *err) {
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

/* ==== Set-up ==== */

static const char *attr(const sm_sim_job *j, const char *key) {
  return sm_sim_job_attr(j, key);
}

static int open_tables(sm__sia_run *S, sm_err *err) {
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

int sm__sia_prepare(sm__sia_run *S, sm_err *err) {
  int rc;

  if ((rc = setup_cluster(S, err)) != 0 || (rc = read_params(S, err)) != 0)
    return rc;
  /* The configurations depend on sia.max_gpus: build them again. */
  if ((rc = setup_cluster(S, err)) != 0 || (rc = open_tables(S, err)) != 0)
    return rc;
  return 0;
}

static int setup_jobs(sm__sia_run *S, sm_sim *s, sm_err *err) {
  const sm_sim_trace *tr = s->trace;
  const char *names[4096];
  int nnames = 0, rc;

  S->njobs = tr->n;
  S->jobs = sm_calloc(tr->n ? tr->n : 1, sizeof(sm__sia_job));
  if (S->jobs == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory (%zu jobs)", tr->n);
  for (size_t i = 0; i < tr->n; i++) {
    sm_sim_job *j = &s->jobs[i];
    sm__sia_job *x = &S->jobs[i];
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
    for (int t = 0; t < SM__SIA_MAX_TYPES; t++) {
      x->ob[t].fit.logspace = !S->linfit;
      x->ob[t].fit.bsz_tol = S->fit_tol;
    }
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
  S->w = sm_calloc((size_t)S->nw, sizeof(sm__sia_world));
  if (S->w == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (size_t i = 0; i < S->njobs; i++)
    S->w[S->jobs[i].world].n++;
  for (int k = 0; k < S->nw; k++) {
    S->w[k].jobs =
        sm_malloc((size_t)(S->w[k].n ? S->w[k].n : 1) * sizeof(sm__sia_job *));
    if (S->w[k].jobs == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    S->w[k].n = 0;
  }
  for (size_t i = 0; i < S->njobs; i++) {
    sm__sia_world *w = &S->w[S->jobs[i].world];
    w->jobs[w->n++] = &S->jobs[i];
  }
  return 0;
}

void sm__sia_release(sm__sia_run *S) {
  for (size_t i = 0; i < S->njobs; i++)
    for (int t = 0; t < T_MAX; t++)
      sm_free(S->jobs[i].ob[t].o);
  for (int k = 0; S->w && k < S->nw; k++) {
    sm__sia_world *w = &S->w[k];
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
static int merge_series(sm__sia_run *S, sm_sim *s) {
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

static void figures(sm__sia_run *S, sm_sim *s) {
  size_t solves = S->solved[1] + S->solved[2] + S->solved[3] + S->solved[4] +
                  S->solved[SM__SIA_SOLVED_NODES];
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
  SM__FIG_ADD(s, sia_solves_node_limit,
              (double)S->solved[SM__SIA_SOLVED_NODES]);
  SM__FIG_ADD(s, sia_solves_stopped_by_clock, (double)S->by_time);
  SM__FIG_ADD(s, sia_solve_nodes_avg, solves ? S->nodes / (double)solves : 0);
  SM__FIG_ADD(s, sia_solve_nodes_max, (double)S->nodes_max);
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

static void notes(sm__sia_run *S, sm_sim *s) {
  char types[256] = "";
  size_t solves = S->solved[1] + S->solved[2] + S->solved[3] + S->solved[4] +
                  S->solved[SM__SIA_SOLVED_NODES];

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
  if (S->linfit)
    sm_sim_note(s,
                "%s: goodput models fitted in the parameters themselves "
                "(sia.fit=linear, how Pollux's L-BFGS-B moves), not in log "
                "space",
                s->pol->name);
  if (S->fit_tol <= 1.0)
    sm_sim_note(s,
                "%s: alpha_c pinned only when a single per-GPU batch was "
                "observed (sia.fit=%s), not batches within a ratio of %g",
                s->pol->name, S->linfit ? "linear-exact" : "log-exact",
                SM__SIA_BSZ_TOL);
  if (S->so.use_cbc) {
    sm_sim_note(s,
                "%s: MILP solved by COIN-OR CBC (time limit %g s, gap %g): "
                "%zu of %zu rounds optimal, %zu stopped at the time limit "
                "(best solution used), %zu fell back to the greedy "
                "allocation",
                s->pol->name, S->so.time_limit, S->so.gap, S->solved[1], solves,
                S->solved[2], S->solved[3]);
    if (S->so.max_nodes > 0 || S->by_time > 0)
      sm_sim_note(s,
                  "%s: CBC's node limit %d (0: none): %zu rounds stopped at it "
                  "(best solution used); %zu rounds were stopped by the wall "
                  "clock (with or without a solution), which depends on the "
                  "machine's load",
                  s->pol->name, S->so.max_nodes,
                  S->solved[SM__SIA_SOLVED_NODES], S->by_time);
  } else {
    sm_sim_note(s,
                "%s: greedy allocation (sia.solver=greedy), not Sia's MILP: "
                "%zu rounds",
                s->pol->name, solves);
  }
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
                      const sm_sim_config *cfg, const sm_sim_policy *pol,
                      int semantic, sm_sim_result **out, sm_err *err) {
  sm_sim s;
  sm__sia_run S;
  sm__sia_scratch sc;
  double t0 = sm_now();
  int rc = 0;
  size_t unfinished = 0;

  memset(&S, 0, sizeof(S));
  memset(&sc, 0, sizeof(sc));
  rc = sm__sim_open(&s, t, c, cfg, err);
  s.pol = pol;
  s.cfg.semantic = semantic ? "on" : "off";
  if (rc != 0)
    goto out;
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
  if ((rc = sm__sia_prepare(&S, err)) != 0 ||
      (rc = setup_jobs(&S, &s, err)) != 0)
    goto out;
  for (int k = 0; k < S.nw && rc == 0; k++)
    rc = sm__sia_run_world(&S, &S.w[k], &sc, err);
  if (rc != 0)
    goto out;
  for (size_t i = 0; i < S.njobs; i++) {
    sm__sia_job *x = &S.jobs[i];
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
      const sm__sia_world *w = &S.w[k];
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
  sm__sia_scratch_release(&sc);
  sm__sia_release(&S);
  sm__sim_close(&s);
  return rc;
}

static int sia_run(const sm_sim_trace *t, const sm_sim_cluster *c,
                   const sm_sim_config *cfg, sm_sim_result **out, sm_err *err) {
  int semantic = cfg->semantic != NULL && strcmp(cfg->semantic, "on") == 0;
  return sia_common(t, c, cfg, &sm__policy_sia, semantic, out, err);
}

static int sia_sm_run(const sm_sim_trace *t, const sm_sim_cluster *c,
                      const sm_sim_config *cfg, sm_sim_result **out,
                      sm_err *err) {
  return sia_common(t, c, cfg, &sm__policy_sia_schedmate, 1, out, err);
}

/* Never called: these policies run the whole simulation themselves. */
static void no_schedule(sm_sim *s, void *state, int vc) {
  (void)s;
  (void)state;
  (void)vc;
}

const sm_sim_policy sm__policy_sia = {
    .name = "sia",
    .summary = "Sia: heterogeneity-aware goodput-optimised elastic jobs, a "
               "MILP every round (SOSP'23)",
    .flags = SM_SIM_POLICY_PREEMPTIVE | SM_SIM_POLICY_SEMANTIC,
    .schedule = no_schedule,
    .run = sia_run};

const sm_sim_policy sm__policy_sia_schedmate = {
    .name = "sia+schedmate",
    .summary = "Sia with SchedMate: a history hit starts from the matched "
               "jobs' goodput model",
    .flags = SM_SIM_POLICY_PREEMPTIVE | SM_SIM_POLICY_SEMANTIC |
             SM_SIM_POLICY_FACTS | SM_SIM_POLICY_HISTORY_ONLY,
    .schedule = no_schedule,
    .run = sia_sm_run};
