/* run.c - one run of the simulator (sm_sim_run): the policy looked up by
 * name, the run's typed parameters and figures, the failure model, the
 * profiling partition of the profiler policies, the jobs copied from the
 * trace with the repairs the cluster needs (unknown VCs and GPU types,
 * jobs larger than their VC), the event loop of the engine, the
 * invariants every run keeps, and the result.
 *
 * A policy with its own job model (Sia's) runs itself: sm_sim_run hands
 * it the trace, the cluster and the configuration. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define EPS 1e-6

/* What setting up the jobs repaired or left out, for the notes. */
typedef struct repairs {
  size_t unknown_vc;        /* jobs of VCs the cluster lacks */
  long first_unknown;       /* the first one's line */
  const char *unknown_name; /* and its VC */
  const char *uv[8];        /* those VCs, first seen first */
  size_t uvn[8];            /* jobs of each */
  int nuv;                  /* entries of uv */
  size_t uv_more;           /* jobs of VCs past the first 8 */
  size_t capped;            /* jobs capped to their VC's size */
  long first_capped;        /* the first one's line */
  size_t dropped_big;       /* jobs left out for their size */
  size_t bad_type;          /* jobs of GPU types the cluster lacks */
  size_t ignored_type;      /* jobs naming a type the cluster ignores */
} repairs;

/* Counts a job of a VC the cluster does not have (left out). */
static void unknown_vc(repairs *rp, const sm_sim_job *j) {
  int k = 0;

  if (rp->unknown_vc++ == 0) {
    rp->first_unknown = j->line;
    rp->unknown_name = j->vc_name;
  }
  while (k < rp->nuv && strcmp(rp->uv[k], j->vc_name) != 0)
    k++;
  if (k == rp->nuv && rp->nuv < (int)SM_ARRAY_LEN(rp->uv)) {
    rp->uv[rp->nuv] = j->vc_name;
    rp->uvn[rp->nuv++] = 0;
  }
  if (k < rp->nuv)
    rp->uvn[k]++;
  else
    rp->uv_more++;
}

/* The most GPUs job j may get in its VC: the GPUs of its type there, or
 * of the type with the most. */
static int gpu_limit(const sm_sim_cluster *c, const int *vt_gpus,
                     const sm_sim_job *j) {
  int limit = 0;

  for (int ty = 0; ty < c->ntypes; ty++) {
    int g = vt_gpus[j->vc * c->ntypes + ty];
    if (j->_run->reqtype >= 0 && ty != j->_run->reqtype)
      continue;
    if (g > limit)
      limit = g;
  }
  return limit;
}

/* Resets job i for the run and places it in the cluster's VCs and types:
 * 0 (possibly dropped, counted in rp), or an error that stops the run. */
static int setup_job(sm_sim *s, size_t i, const int *vt_gpus, repairs *rp,
                     sm_err *err) {
  const sm_sim_cluster *c = s->cl;
  sm_sim_job *j = &s->jobs[i];
  int named_types = c->ntypes > 1 || c->types[0].name[0] != '\0', limit;

  j->status = SM_SIM_JOB_FUTURE;
  j->work_left = j->duration;
  j->first_start = j->end = NAN;
  j->_run->fail_work = NAN;
  j->_run->outcome = -1;
  j->_run->infra = j->end_state == SM_SIM_END_FAILED &&
                   sm__job_uniform(s->cfg.seed, 401, i) < s->fail_infra_share;
  j->_run->reqtype = -1;
  j->workload = j->profile = "";
  j->fingerprint = 0;
  j->vc = j->_run->pvc = sm__cluster_vc_find(c, j->vc_name);
  if (j->vc < 0) {
    if (s->cfg.unknown_vc_error)
      return sm_err_set(err, SM_EINVAL,
                        "%s:%d: VC '%.40s' is not in the cluster",
                        s->trace->name, j->line, j->vc_name);
    unknown_vc(rp, j);
    j->status = SM_SIM_JOB_DROPPED;
    return 0;
  }
  if (j->gpu_type[0] != '\0' && !named_types)
    rp->ignored_type++;
  else if (j->gpu_type[0] != '\0' &&
           (j->_run->reqtype = sm__cluster_type_find(c, j->gpu_type)) < 0) {
    rp->bad_type++;
    j->status = SM_SIM_JOB_DROPPED;
    return 0;
  }
  limit = gpu_limit(c, vt_gpus, j);
  if (j->gpus <= limit)
    return 0;
  if (s->cfg.oversize == SM_SIM_OVERSIZE_ERROR)
    return sm_err_set(
        err, SM_ERANGE, "%s:%d: job %.40s asks for %d GPUs, VC '%s' has %d",
        s->trace->name, j->line, j->id, j->gpus,
        c->vcs[j->vc].name[0] ? c->vcs[j->vc].name : "(all)", limit);
  if (s->cfg.oversize == SM_SIM_OVERSIZE_DROP || limit == 0) {
    rp->dropped_big++;
    j->status = SM_SIM_JOB_DROPPED;
    return 0;
  }
  if (rp->capped++ == 0)
    rp->first_capped = j->line;
  j->gpus = limit;
  return 0;
}

/* The notes and the count of what setup_job repaired or left out. */
static void note_repairs(sm_sim *s, const repairs *rp) {
  const sm_sim_trace *t = s->trace;

  if (rp->unknown_vc) {
    s->dropped += rp->unknown_vc;
    snprintf(s->dropped_why, sizeof(s->dropped_why),
             "%zu jobs of %d%s VC%s the cluster does not have:", rp->unknown_vc,
             rp->nuv, rp->uv_more ? "+" : "",
             rp->nuv == 1 && !rp->uv_more ? "" : "s");
    for (int k = 0; k < rp->nuv; k++) {
      size_t l = strlen(s->dropped_why);
      snprintf(s->dropped_why + l, sizeof(s->dropped_why) - l, "%s %.24s (%zu)",
               k ? "," : "", rp->uv[k], rp->uvn[k]);
    }
    sm__notes_add(&s->notes, "%s left out (first: VC '%.40s', line %ld)",
                  s->dropped_why, rp->unknown_name, rp->first_unknown);
  }
  if (rp->capped)
    sm__notes_add(&s->notes,
                  "%zu jobs asked for more GPUs than their VC has: capped "
                  "to the VC size (first at line %ld)",
                  rp->capped, rp->first_capped);
  s->dropped += rp->dropped_big + rp->bad_type;
  if (rp->dropped_big)
    sm__notes_add(&s->notes,
                  "%zu jobs asked for more GPUs than their VC has: left "
                  "out",
                  rp->dropped_big);
  if (rp->bad_type)
    sm__notes_add(&s->notes,
                  "%zu jobs asked for a GPU type the cluster lacks: left "
                  "out",
                  rp->bad_type);
  if (rp->ignored_type)
    sm__notes_add(&s->notes,
                  "%zu jobs name a GPU type; the cluster has no named "
                  "types, so any GPU serves",
                  rp->ignored_type);
  if (s->cl->anonymous) {
    size_t named = 0;
    for (size_t i = 0; i < t->n; i++)
      named += t->jobs[i].vc_name[0] != '\0';
    if (named)
      sm__notes_add(&s->notes,
                    "%zu jobs name a VC; the cluster has no VCs, so all "
                    "jobs share it",
                    named);
  }
}

/* Copies the trace's jobs and applies the cluster-dependent repairs. */
static int setup_jobs(sm_sim *s, sm_err *err) {
  const sm_sim_trace *t = s->trace;
  const sm_sim_cluster *c = s->cl;
  sm_sim_jstate *js; /* the engine's part of every job */
  int *vt_gpus;      /* GPUs per (VC, GPU type), computed once */
  repairs rp;
  int rc;

  memset(&rp, 0, sizeof(rp));
  rp.unknown_name = "";
  s->njobs = t->n;
  s->jobs = sm_arena_alloc(&s->arena, t->n * sizeof(sm_sim_job));
  js = sm_arena_calloc(&s->arena, t->n ? t->n : 1, sizeof(*js));
  vt_gpus = sm_arena_calloc(&s->arena, (size_t)c->nvcs * (size_t)c->ntypes,
                            sizeof(int));
  if (s->jobs == NULL || js == NULL || vt_gpus == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory (%zu jobs)", t->n);
  for (int n = 0; n < c->nnodes; n++)
    vt_gpus[c->nodes[n].vc * c->ntypes + c->nodes[n].type] += c->nodes[n].cap;
  memcpy(s->jobs, t->jobs, t->n * sizeof(sm_sim_job));
  for (size_t i = 0; i < t->n; i++) {
    s->jobs[i]._run = &js[i];
    if ((rc = setup_job(s, i, vt_gpus, &rp, err)) != 0)
      return rc;
  }
  note_repairs(s, &rp);
  if (s->dropped == t->n)
    return sm_err_set(err, SM_EINVAL,
                      "%s: none of the %zu jobs can run on this cluster "
                      "(%s)",
                      t->name, t->n,
                      rp.unknown_vc ? "their VCs are not in the cluster"
                      : rp.bad_type ? "their GPU types are not in the cluster"
                                    : "they are larger than their VCs");
  return 0;
}

/* The invariants every run must keep. */
static int check(sm_sim *s, sm_err *err) {
  const sm_sim_trace *t = s->trace;
  double gpu_time = 0;
  size_t unfinished = 0;

  for (int i = 0; i < s->cl->nnodes; i++)
    if (s->nodes[i].free != s->nodes[i].cap)
      return sm_err_set(err, SM_ECORRUPT,
                        "invariant: node %d ends with %d of %d GPUs free", i,
                        s->nodes[i].free, s->nodes[i].cap);
  if (s->busy != 0)
    return sm_err_set(err, SM_ECORRUPT,
                      "invariant: %ld GPUs still held at the end", s->busy);
  for (size_t i = 0; i < s->njobs; i++) {
    const sm_sim_job *j = &s->jobs[i];
    double done;
    if (j->status == SM_SIM_JOB_DROPPED)
      continue;
    if (j->status != SM_SIM_JOB_DONE) {
      unfinished++;
      continue;
    }
    if (!(j->first_start >= j->submit - EPS))
      return sm_err_set(err, SM_ECORRUPT,
                        "invariant: %s:%d job %s starts at %.3f before "
                        "its submission at %.3f",
                        t->name, j->line, j->id, j->first_start, j->submit);
    if (!(j->end >= j->first_start - EPS))
      return sm_err_set(err, SM_ECORRUPT,
                        "invariant: job %s ends before it starts", j->id);
    done = j->duration + j->overhead - j->work_left;
    /* Tolerance: rounding of time differences at this magnitude, once
     * per start and stop. */
    if (fabs(j->_run->done_work - done) >
        1e-6 * SM_MAX(1.0, done) + 1e-3 +
            4e-16 * fabs(j->end) * (4 + 2 * j->starts + j->restarts))
      return sm_err_set(err, SM_ECORRUPT,
                        "invariant: job %s performed %.6f s of work, "
                        "expected %.6f",
                        j->id, j->_run->done_work, done);
    if (j->final_state != SM_SIM_END_FAILED && j->work_left > 1e-6)
      return sm_err_set(err, SM_ECORRUPT,
                        "invariant: job %s ended with work left", j->id);
    gpu_time += j->executed * j->gpus;
  }
  if (s->shared_starts == 0 && fabs(gpu_time - s->busy_integral) >
                                   1e-6 * SM_MAX(1.0, s->busy_integral) + 1e-3)
    return sm_err_set(err, SM_ECORRUPT,
                      "invariant: jobs held %.3f GPU-seconds, the cluster "
                      "counted %.3f",
                      gpu_time, s->busy_integral);
  if (unfinished)
    sm__notes_add(&s->notes,
                  "%zu jobs never ran to their end (no room for them ever "
                  "came up)",
                  unfinished);
  return 0;
}

static void sim_free(sm_sim *s) {
  if (s->pol != NULL && s->pol->release != NULL && s->pstate != NULL)
    s->pol->release(s, s->pstate);
  sm__sim_close(s);
}

/* Reads the failure model's parameters (see sm_sim_job_infra). */
static int failure_model(sm_sim *s, sm_err *err) {
  const char *m = SM__PARAM(s, fail_model);

  s->fail_infra_share = SM__PARAM(s, fail_infra_share);
  s->fail_rest = SM__PARAM(s, fail_rest);
  s->fail_resubmit_s = SM__PARAM(s, fail_resubmit_s);
  if (m != NULL && strcmp(m, "trace") != 0 && strcmp(m, "resubmit") != 0)
    return sm_err_set(err, SM_EINVAL,
                      "fail.model: expected trace or resubmit, got '%.40s'", m);
  if (!(s->fail_infra_share >= 0 && s->fail_infra_share <= 1) ||
      !(s->fail_rest >= 0 && s->fail_rest <= 1000) ||
      !(s->fail_resubmit_s >= 0))
    return sm_err_set(err, SM_EINVAL,
                      "fail.infra_share must be in [0, 1], fail.rest in "
                      "[0, 1000], fail.resubmit_s >= 0");
  s->fail_resubmit = m != NULL && strcmp(m, "resubmit") == 0;
  return 0;
}

/* Policies that profile jobs get dedicated nodes: profiler.nodes (2)
 * nodes of VC profiler.from (default: the largest) become VC profiler.vc
 * ("profiler") for this run, unless the cluster already has that VC or
 * profiler.nodes is 0.  *carved is NULL when nothing was carved. */
static int carve_profiler(sm_sim *s, const sm_sim_cluster *c,
                          sm_sim_cluster **carved, sm_err *err) {
  const char *name = SM__PARAM(s, profiler_vc);
  const char *from = SM__PARAM(s, profiler_from);
  double n = SM__PARAM(s, profiler_nodes);
  int rc;

  *carved = NULL;
  if (name == NULL || *name == '\0')
    name = "profiler";
  if (!(n >= 0 && n <= 1e6 && n == floor(n)))
    return sm_err_set(err, SM_EINVAL,
                      "profiler.nodes: expected a node count, got '%s'",
                      s->par->text[SM__P_profiler_nodes]);
  if (n == 0)
    return 0;
  for (int i = 0; i < c->nvcs; i++)
    if (strcmp(c->vcs[i].name, name) == 0)
      return 0;
  rc = sm_sim_cluster_carve(c, from, (int)n, name, carved, err);
  if (rc == 0) {
    int dv = 0;
    for (int i = 1; i < c->nvcs && from == NULL; i++)
      if (c->vcs[i].nnodes > c->vcs[dv].nnodes)
        dv = i;
    s->carved_nodes = (int)n;
    snprintf(s->carved_from, sizeof(s->carved_from), "%s",
             from           ? from
             : c->anonymous ? "(all)"
                            : c->vcs[dv].name);
    sm__notes_add(&s->notes,
                  "%s: %d node%s of VC '%s' form the profiling partition "
                  "'%s' for this run (taken from the VC's capacity, as in "
                  "Lucid's simulator)",
                  s->pol->name, (int)n, n == 1 ? "" : "s",
                  from           ? from
                  : c->anonymous ? "(all)"
                                 : c->vcs[dv].name,
                  name);
  }
  return rc;
}

int sm_sim_run(const sm_sim_trace *t, const sm_sim_cluster *c,
               const sm_sim_config *cfg, sm_sim_result **out, sm_err *err) {
  sm_sim s;
  sm_sim_config def;
  sm_sim_cluster *carved = NULL;
  double t0 = sm_now();
  int rc;

  if (cfg == NULL) {
    sm_sim_config_init(&def);
    cfg = &def;
  }
  rc = sm__sim_open(&s, t, c, cfg, err);
  snprintf(s.base_cluster, sizeof(s.base_cluster), "%s", c->desc);
  if (rc != 0)
    goto out;
  s.pol = sm_sim_policy_find(cfg->policy ? cfg->policy : "fifo");
  if (s.pol == NULL) {
    rc = sm_err_set(err, SM_EINVAL, "unknown policy '%.40s'",
                    cfg->policy ? cfg->policy : "");
    goto out;
  }
  if (cfg->semantic != NULL && strcmp(cfg->semantic, "on") == 0 &&
      !(s.pol->flags & SM_SIM_POLICY_SEMANTIC)) {
    rc = sm_err_set(err, SM_EINVAL,
                    "policy %s does not consume SchedMate's facts "
                    "(--semantic on)",
                    s.pol->name);
    goto out;
  }
  if (s.pol->run != NULL) {
    rc = s.pol->run(t, c, cfg, out, err);
    goto out;
  }
  rc = failure_model(&s, err);
  if (rc != 0)
    goto out;
  if (s.pol->flags & SM_SIM_POLICY_FACTS)
    s.cfg.semantic = "on";
  if (s.pol->flags & SM_SIM_POLICY_PROFILER) {
    rc = carve_profiler(&s, c, &carved, err);
    if (rc != 0)
      goto out;
    if (carved != NULL)
      s.cl = c = carved;
  }
  s.dirty = sm_malloc((size_t)c->nvcs * sizeof(int));
  if (s.dirty == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto out;
  }
  rc = sm__run_cluster_init(&s, err);
  if (rc == 0)
    rc = setup_jobs(&s, err);
  if (rc == 0 && s.pol->init != NULL)
    rc = s.pol->init(&s, &s.pstate, err);
  if (rc != 0)
    goto out;
  rc = sm__engine_loop(&s);
  if (rc != 0) {
    sm_err_set(err, rc, "%s", s.errd.msg);
    goto out;
  }
  if (s.pol->finalize != NULL)
    s.pol->finalize(&s, s.pstate);
  if (s.fail_infra > 0 || s.fail_resubmit) {
    SM__FIG_ADD(&s, infra_failures, (double)s.fail_infra);
    SM__FIG_ADD(&s, infra_resubmitted_by_users, (double)s.fail_resubmitted);
    sm__notes_add(&s.notes,
                  "failure model %s: %.3g of the trace's failed jobs have an "
                  "infrastructure cause (%zu met)%s",
                  s.fail_resubmit ? "resubmit" : "trace", s.fail_infra_share,
                  s.fail_infra,
                  s.fail_resubmit
                      ? "; their users resubmit them and they start over"
                      : "; they end as the trace recorded them");
  }
  rc = check(&s, err);
  if (rc == 0)
    rc = sm__result_build(&s, sm_now() - t0, out, err);
out:
  sim_free(&s);
  sm_sim_cluster_free(carved);
  return rc;
}
