/* sia_job.c - what a Sia job knows and how it trains: the points it has
 * reported per GPU type and the goodput model fitted to them, its goodput
 * row per configuration (projected to the types it has not run on), the
 * restart discount, the batch size chosen for a placement, its training
 * step by step from the throughput and validation tables, and Sia +
 * SchedMate's seeding from the history of its workload file.  See sia.c
 * for the policy. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "sim/sia_job_int.h"

#define T_MAX SM__SIA_MAX_TYPES
#define C_MAX SM__SIA_MAX_CONFIGS
#define HELD_MAX SM__SIA_HELD_MAX
#define EPS 1e-8

/* ==== Knowledge ==== */

int sm__sia_obs_add(sm__sia_tobs *b, int nodes, int reps, int bsz, double step,
                    double sync) {
  for (int i = 0; i < b->n; i++)
    if (b->o[i].nodes == nodes && b->o[i].replicas == reps &&
        b->o[i].bsz == bsz)
      return 0; /* the first report of a point stays */
  if (SM__GROW(b->o, (size_t)b->n + 1, b->cap) != 0)
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

void sm__sia_refit(sm__sia_tobs *b) {
  sm__sia_fitinfo fi;
  sm__sia_perf_fit_opt(b->o, b->n, &b->fit, &b->perf, &fi);
  b->fitted = !fi.fallback;
  b->ver++;
}

void sm__sia_set_grad(sm__sia_job *x, double sqr, double var) {
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
int sm__sia_growth_cap(const sm__sia_run *S, const sm__sia_job *x) {
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

static int has_model(const sm__sia_job *x, int t) {
  return x->have_grad && x->ob[t].n > 0 && x->ob[t].fitted;
}

/* Goodput of the job's model of type d at nodes x GPUs. */
static double model_goodput(const sm__sia_job *x, int d, int nodes, int gpus) {
  const sm__sia_gtab *g = x->app->g[d];
  sm__sia_bsz b =
      sm__sia_optimize(&x->ob[d].perf, x->sqr, x->var, x->app->init_bsz, nodes,
                       gpus, x->target, g->min_lbsz, g->max_lbsz, 1);
  return b.goodput;
}

/* Fills x->good[t][] for every configuration valid for the job (0 for
 * the others), from its model on t, else projected from the first type
 * it has a model on.  Returns 0 when the job has no model at all. */
int sm__sia_goodput_rows(const sm__sia_run *S, sm__sia_job *x, int cap) {
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
double sm__sia_realloc_factor(const sm__sia_job *x, double now) {
  double age = now - x->j->submit, pen = x->app->penalty_s;
  double lost = x->restarts * pen;
  if (age < pen)
    return 1.0;
  return SM_MAX(age - lost, 0.0) / (age + pen);
}

/* ==== Batch size and the job's real speed ==== */

static void shape_of(const sm__sia_job *x, int *gpn, int *n) {
  *n = x->nheld;
  for (int i = 0; i < x->nheld; i++)
    gpn[i] = x->hgpus[i];
}

/* Chooses the per-GPU batch and accumulation for the current placement
 * with the job's own model, or the starting batch without one. */
void sm__sia_rebatch(const sm__sia_run *S, sm__sia_job *x) {
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
int sm__sia_train(sm__sia_run *S, sm__sia_world *w, sm__sia_job *x, double t,
                  double dt) {
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
      int rc =
          sm__sia_obs_add(&x->ob[x->type], x->nheld, reps, x->atomic, st, sy);
      if (rc < 0)
        return rc;
      if (rc > 0)
        sm__sia_refit(&x->ob[x->type]);
    }
    sm__sia_set_grad(x, sqr, var);
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
          if (SM__GROW(w->hist, (size_t)w->nhist + 1, w->caphist) != 0)
            return SM_ENOMEM;
          w->hist[w->nhist].job = x;
          w->hist[w->nhist].end = end;
          w->hist[w->nhist].fp = NULL;
          w->nhist++;
        }
        return 0;
      }
    }
    sm__sia_rebatch(S, x);
  }
  x->j->executed += dt;
  return 0;
}

/* ==== Sia + SchedMate: the history of a workload file ==== */

static void fingerprint(const sm__sia_run *S, const sm__sia_job *x, float *fp) {
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
int sm__sia_history_seed(sm__sia_run *S, sm__sia_world *w, sm__sia_job *x) {
  float q[SM_FP_DIMS];
  int best[64], nb = 0;
  float bs[64];

  S->queries++;
  fingerprint(S, x, q);
  for (int i = 0; i < w->nhist; i++) {
    sm__sia_hrec *h = &w->hist[i];
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
    const sm__sia_job *m = w->hist[best[k]].job;
    for (int t = 0; t < S->ntypes; t++) {
      int added = 0;
      for (int i = 0; i < m->ob[t].n; i++) {
        const sm__sia_obs *o = &m->ob[t].o[i];
        int rc = sm__sia_obs_add(&x->ob[t], o->nodes, o->replicas, o->bsz,
                                 o->step, o->sync);
        if (rc < 0)
          return rc;
        added += rc;
      }
      S->seeded += (size_t)added;
    }
  }
  for (int t = 0; t < S->ntypes; t++)
    if (x->ob[t].n > 0)
      sm__sia_refit(&x->ob[t]);
  {
    const sm__sia_job *m = w->hist[best[0]].job;
    if (m->have_first) {
      sm__sia_set_grad(x, m->sqr0, m->var0);
      x->have_first = 0; /* its own first report is still to come */
    }
  }
  for (int t = 0; t < S->ntypes; t++)
    x->prof_left[t] = 0;
  return 0;
}
