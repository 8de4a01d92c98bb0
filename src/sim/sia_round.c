/* sia_round.c - one scheduling round of Sia: jobs in checkpoint-restore
 * keep their GPUs, jobs not yet profiled get one GPU per type, the others
 * a goodput matrix (lambda - A^p per configuration) for the allocation
 * problem (sia_milp.c); placement takes whole nodes first, then fills;
 * the round's decisions start, restart and suspend jobs.  A workload file
 * runs round by round until its last job ends. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sia_round_int.h"

#define T_MAX SM__SIA_MAX_TYPES
#define C_MAX SM__SIA_MAX_CONFIGS
#define HELD_MAX SM__SIA_HELD_MAX
#define EPS 1e-8
#define MAX_ROUNDS 20000000 /* per workload file: 38 years of 60 s rounds */

/* ==== Placement ==== */

/* Takes gpus GPUs of type t from the free counts: whole free nodes
 * first, then the fullest node that fits the rest, else the rest spread
 * over the freest nodes.  Returns 0, or -1 when they are not there
 * (nothing taken). */
static int take(const sm__sia_run *S, sm__sia_world *w, int t,
                sm__sia_want *v) {
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
static int compact(const sm__sia_run *S, const sm__sia_want *v) {
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
  const sm__sia_want *x = a, *y = b;
  if (x->type != y->type)
    return x->type - y->type;
  if (x->gpus != y->gpus)
    return y->gpus - x->gpus;
  if (x->prof != y->prof)
    return x->prof - y->prof;
  return (int)x->x->j->idx - (int)y->x->j->idx;
}

/* Places every sm__sia_want of type t (v sorted by GPUs, largest first): jobs
 * that keep their GPU count keep their nodes where the others still fit
 * compactly; otherwise everything of the type is placed again, and jobs
 * whose nodes change without a change of shape are counted as moves (as
 * in Sia's simulator they do not restart). */
static int place_type(sm__sia_run *S, sm__sia_world *w, int t, sm__sia_want *v,
                      int nv) {
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
      const sm__sia_job *x = v[i].x;
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

void sm__sia_scratch_release(sm__sia_scratch *sc) {
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
static int arrive(sm__sia_run *S, sm__sia_world *w, sm__sia_job *x,
                  double now) {
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
    int rc = sm__sia_history_seed(S, w, x);
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

/* What one round has decided so far. */
typedef struct rstate {
  int na;         /* active jobs (sc->act) */
  int nv;         /* wants (sc->v) */
  int np;         /* jobs of the allocation problem (sc->pj) */
  int nc;         /* its candidates (sc->c) */
  int cap[T_MAX]; /* GPUs per type not yet given */
} rstate;

/* A new want of job x for gpus GPUs of type t (the nodes still open). */
static sm__sia_want *new_want(sm__sia_scratch *sc, rstate *rs, sm__sia_job *x,
                              int t, int gpus, int cfg) {
  sm__sia_want *v = &sc->v[rs->nv++];

  memset(v, 0, sizeof(*v) - sizeof(v->hn) - sizeof(v->hg));
  v->x = x;
  v->type = t;
  v->gpus = gpus;
  v->cfg = cfg;
  return v;
}

/* The active jobs at now (first rounds of the new ones), and room for
 * the round's decisions. */
static int collect(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                   double now, rstate *rs) {
  int rc;

  if (SM__GROW(sc->act, (size_t)w->n + 1, sc->cap_act) ||
      SM__GROW(sc->pj, (size_t)w->n + 1, sc->cap_pj) ||
      SM__GROW(sc->choice, (size_t)w->n + 1, sc->cap_ch) ||
      SM__GROW(sc->bind, (size_t)w->n + 1, sc->cap_bind))
    return SM_ENOMEM;
  for (int i = 0; i < w->n; i++) {
    sm__sia_job *x = w->jobs[i];
    if (x->state == 2)
      continue;
    if (x->j->submit > now + 1e-9)
      break;
    if (x->state == 0 && (rc = arrive(S, w, x, now)) != 0)
      return rc;
    if (x->profiled == 2)
      x->profiled = 1;
    sc->act[rs->na++] = x;
  }
  S->max_active = SM_MAX(S->max_active, (size_t)rs->na);
  if (SM__GROW(sc->v, (size_t)rs->na * (S->ntypes + 1) + 1, sc->cap_v))
    return SM_ENOMEM;
  for (int t = 0; t < S->ntypes; t++)
    rs->cap[t] = S->nnodes[t] * S->gpn[t];
  return 0;
}

/* Jobs in checkpoint-restore keep what they have; jobs not yet profiled
 * get one GPU of each type they still need profiling on. */
static void keep_and_profile(sm__sia_run *S, sm__sia_scratch *sc, rstate *rs) {
  for (int i = 0; i < rs->na; i++) {
    sm__sia_job *x = sc->act[i];
    sc->bind[i] = 0;
    if (x->type >= 0 && x->restore > 0) {
      new_want(sc, rs, x, x->type, x->gpus, x->cfg)->keep = 1;
      rs->cap[x->type] -= x->gpus;
    }
  }
  for (int i = 0; i < rs->na; i++) {
    sm__sia_job *x = sc->act[i];
    int left = 0;
    if (x->profiled)
      continue;
    for (int t = 0; t < S->ntypes; t++) {
      double use = SM_MIN(x->prof_left[t], S->interval);
      if (x->prof_left[t] <= 0 || rs->cap[t] < 1)
        continue;
      new_want(sc, rs, x, t, 1, -1)->prof = 1;
      rs->cap[t]--;
      x->prof_left[t] -= use;
      S->prof_gpu_s += use;
    }
    for (int t = 0; t < S->ntypes; t++)
      left |= x->prof_left[t] > 1e-9;
    if (!left)
      x->profiled = 2; /* eligible from the next round */
  }
}

/* Job i's row of the goodput matrix as candidates lambda - A^p, A its
 * goodput normalised to its smallest entry (every configuration but its
 * current one discounted by the restart factor). */
static int job_candidates(sm__sia_run *S, sm__sia_scratch *sc, double now,
                          int i, rstate *rs) {
  sm__sia_job *x = sc->act[i];
  int capx, model, hard = 0;
  double mn = INFINITY, f;

  capx = sm__sia_growth_cap(S, x);
  for (int t = 0; t < S->ntypes; t++)
    hard = SM_MAX(hard,
                  (int)SM_MIN(floor(x->app->max_bsz / x->app->g[t]->min_lbsz),
                              (double)S->max_gpus));
  sc->bind[i] = capx < hard ? capx : 0;
  model = sm__sia_goodput_rows(S, x, capx);
  for (int t = 0; t < S->ntypes; t++)
    for (int k = 0; k < S->ncfg[t]; k++) {
      double g = model ? x->good[t][k] : (S->cg[t][k] == 1 ? 1.0 : 0.0);
      x->row[S->coff[t] + k] = g;
      if (g > 0)
        mn = SM_MIN(mn, g);
    }
  if (!isfinite(mn))
    return 0; /* nothing valid: it waits */
  f = sm__sia_realloc_factor(x, now);
  if (SM__GROW(sc->c,
               (size_t)rs->nc +
                   (size_t)(S->coff[S->ntypes - 1] + S->ncfg[S->ntypes - 1]),
               sc->cap_c))
    return SM_ENOMEM;
  sc->pj[rs->np] = i;
  for (int t = 0; t < S->ntypes; t++)
    for (int k = 0; k < S->ncfg[t]; k++) {
      int gi = S->coff[t] + k;
      double a = x->row[gi] / mn, ap;
      sm__sia_cand *c;
      if (!(x->row[gi] > 0))
        continue;
      if (x->cfg >= 0 && gi != x->cfg)
        a *= f;
      ap = a > 0 ? round2(pow(a, S->p)) : 3000;
      if (ap > 3000)
        ap = 3000;
      c = &sc->c[rs->nc++];
      c->job = rs->np;
      c->type = t;
      c->gpus = S->cg[t][k];
      c->config = gi;
      c->value = S->p < 0 ? S->lambda - ap : ap - S->lambda;
    }
  rs->np++;
  return 0;
}

/* The allocation problem of the jobs that may get GPUs, solved; every
 * chosen candidate becomes a want. */
static int allocate(sm__sia_run *S, sm__sia_scratch *sc, rstate *rs,
                    sm__sia_solve_info *info) {
  sm__sia_problem prob;
  int rc;

  prob.njobs = rs->np;
  prob.ntypes = S->ntypes;
  memcpy(prob.cap, rs->cap, sizeof(rs->cap));
  prob.c = sc->c;
  prob.nc = rs->nc;
  if ((rc = sm__sia_solve(&prob, &S->so, sc->choice, info)) != 0)
    return rc;
  if (rs->np > 0) {
    S->solved[info->how]++;
    S->by_time += (size_t)info->by_time;
    S->nodes += info->nodes;
    S->nodes_max = SM_MAX(S->nodes_max, (size_t)info->nodes);
    S->solve_s += info->seconds;
    S->solve_max = SM_MAX(S->solve_max, info->seconds);
    S->solve_cpu += info->cpu_seconds;
    S->solve_cpu_max = SM_MAX(S->solve_cpu_max, info->cpu_seconds);
    S->max_cols = SM_MAX(S->max_cols, (size_t)info->cols);
  }
  for (int q = 0; q < rs->np; q++) {
    const sm__sia_cand *c;
    sm__sia_job *x;
    if (sc->choice[q] < 0)
      continue;
    c = &sc->c[sc->choice[q]];
    x = sc->act[sc->pj[q]];
    new_want(sc, rs, x, c->type, c->gpus, c->config)->keep =
        x->type == c->type && x->gpus == c->gpus;
  }
  return 0;
}

/* Placement, type by type. */
static int place(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                 const rstate *rs) {
  int rc;

  qsort(sc->v, (size_t)rs->nv, sizeof(sm__sia_want), cmp_want);
  for (int i = 0; i < rs->nv;) {
    int j = i;
    while (j < rs->nv && sc->v[j].type == sc->v[i].type)
      j++;
    if ((rc = place_type(S, w, sc->v[i].type, &sc->v[i], j - i)) != 0)
      return rc;
    i = j;
  }
  return 0;
}

/* Job x takes the nodes of want v. */
static void hold(sm__sia_job *x, const sm__sia_want *v) {
  x->nheld = v->nh;
  memcpy(x->hnode, v->hn, (size_t)v->nh * sizeof(int));
  memcpy(x->hgpus, v->hg, (size_t)v->nh * sizeof(int));
}

/* A start, or a restart from the last checkpoint, of x on want v (the
 * job at index ai of the active jobs). */
static void start(sm__sia_run *S, const sm__sia_scratch *sc, const rstate *rs,
                  sm__sia_job *x, const sm__sia_want *v, double now) {
  if (x->started) {
    int ai;
    x->restarts++;
    S->restarts++;
    for (ai = 0; ai < rs->na && sc->act[ai] != x; ai++)
      ;
    if (ai < rs->na && sc->bind[ai] > 0 && v->gpus >= sc->bind[ai])
      S->boot_restarts++; /* grew to the growth cap */
  } else {
    x->started = 1;
    x->j->first_start = now;
  }
  x->j->starts++;
  x->type = v->type;
  x->gpus = v->gpus;
  hold(x, v);
  x->restore = x->app->restore_s;
  x->j->status = SM_SIM_JOB_RUNNING;
  sm__sia_rebatch(S, x);
}

/* The round's decisions: starts, restarts, moves and suspensions. */
static void apply(sm__sia_run *S, sm__sia_scratch *sc, const rstate *rs,
                  double now, int *busy, int *pending) {
  *busy = 0;
  *pending = 0;
  for (int i = 0; i < rs->na; i++)
    sc->act[i]->mark = 0;
  for (int i = 0; i < rs->nv; i++) {
    sm__sia_want *v = &sc->v[i];
    sm__sia_job *x = v->x;
    *busy += v->gpus;
    if (v->prof)
      continue;
    x->mark = 1;
    x->cfg = v->cfg;
    if (x->type == v->type && x->gpus == v->gpus &&
        same_shape(x->hgpus, x->nheld, v->hg, v->nh))
      hold(x, v);
    else
      start(S, sc, rs, x, v, now);
  }
  for (int i = 0; i < rs->na; i++) {
    sm__sia_job *x = sc->act[i];
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
}

int sm__sia_round(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                  double now, int *busy, int *pending, sm__sia_bench *bench) {
  rstate rs;
  sm__sia_solve_info info;
  double t0 = sm_now(), t1, t2, t3;
  int rc;

  memset(&rs, 0, sizeof(rs));
  if ((rc = collect(S, w, sc, now, &rs)) != 0)
    return rc;
  keep_and_profile(S, sc, &rs);
  for (int i = 0; i < rs.na; i++) {
    const sm__sia_job *x = sc->act[i];
    if ((x->type >= 0 && x->restore > 0) || x->profiled != 1)
      continue;
    if ((rc = job_candidates(S, sc, now, i, &rs)) != 0)
      return rc;
  }
  t1 = sm_now();
  if ((rc = allocate(S, sc, &rs, &info)) != 0)
    return rc;
  t2 = sm_now();
  if ((rc = place(S, w, sc, &rs)) != 0)
    return rc;
  t3 = sm_now();
  apply(S, sc, &rs, now, busy, pending);
  S->rounds++;
  S->round_max = SM_MAX(S->round_max, sm_now() - t0);
  if (bench != NULL) {
    bench->matrix_s = t1 - t0;
    bench->solve_s = t2 - t1;
    bench->solve_cpu_s = info.cpu_seconds;
    bench->place_s = t3 - t2;
    bench->cols = info.cols;
    bench->how = info.how;
    bench->allocated = 0;
    for (int i = 0; i < rs.nv; i++)
      bench->allocated += !sc->v[i].prof;
  }
  return 0;
}

/* Runs one workload file to the end of its last job. */
int sm__sia_run_world(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                      sm_err *err) {
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
    rc = sm__sia_round(S, w, sc, now, &busy, &pend, NULL);
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
      sm__sia_job *x = w->jobs[i];
      if (x->state == 1 && (rc = sm__sia_train(S, w, x, now, S->interval)) != 0)
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
