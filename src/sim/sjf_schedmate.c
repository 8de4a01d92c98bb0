/* sjf_schedmate.c - standalone SchedMate-SJF, without and with the
 * Failure Handler.
 *
 *   sjf-schedmate      shortest job first on the Advisor's estimate, taken
 *                      at submission: the mean duration of the top-3
 *                      matches (facts.c).  A job without an answer (a
 *                      fallback) is ordered by the simulator's history
 *                      estimator instead (mean duration of ended jobs of
 *                      the same user and name, else of the user, else of
 *                      all: the estimator QSSF uses by default); parameter
 *                      sjf.fallback=fifo puts the fallbacks behind every
 *                      job with an estimate, in the order they arrived
 *                      (they may starve while estimates keep coming);
 *                      sjf.key=service orders by estimate x GPUs, as
 *                      QSSF does, instead of the estimate alone.
 * Non-preemptive, head-of-line blocking like the other queue policies
 * (--backfill to skip a blocked head).  Failures follow the run's failure model
 * like every other policy (sm_sim_job_infra). sjf-schedmate+fh   the same, with
 * the Failure Handler: a job whose recorded failure has an infrastructure cause
 * is diagnosed (fh.diagnose_s, 60 s), the nodes it ran on are isolated for
 * fh.isolate_s (3,600 s), and it restarts from its last checkpoint (every
 *                      ckpt.interval_s, 1,800 s, of progress) with the
 *                      work it still needed (fail.rest, 1.0, times its run
 *                      time, as the failure model says), keeping its place
 *                      in the order; the restarted attempt completes.
 *                      fh.recall (1.0) is the share of infrastructure
 *                      failures the Handler recognises; the others go the
 *                      failure model's way.  User and framework failures
 *                      end as recorded. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/facts_int.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_NODES_PER_JOB 1024
#define FIFO_BASE 1e15 /* keys of fallbacks ordered by arrival */

typedef struct sjob {
  double key; /* order: estimated duration (or arrival) */
  int have;   /* 1: key taken at the first submission */
} sjob;

typedef struct sstate {
  int fh;                /* 1: with the Failure Handler */
  int service;           /* 1: order by estimate x GPUs */
  int fifo_fallback;     /* 1: fallbacks ordered by arrival */
  sm__facts *facts;      /* facts and world */
  sm_sim_estimator *est; /* fallback estimator */
  sm__ordered o;         /* queues */
  sjob *jobs;            /* per job */
  double rest;           /* work still needed after a fault, x run */
  double diagnose_s;     /* Failure Handler: diagnosis and restart */
  double isolate_s;      /* node isolation */
  double ckpt_s;         /* checkpoint interval */
  double recall;         /* share of infrastructure failures seen */
  size_t fh_restarts;    /* restarted by the Failure Handler */
  size_t isolated;       /* node isolations */
  double lost_gpu_s;     /* GPU-seconds of progress redone */
} sstate;

static double key_of(sm_sim *s, void *ud, sm_sim_job *j) {
  const sstate *st = ud;
  (void)s;
  return st->jobs[j->idx].key * (st->service ? j->gpus : 1);
}

static int sjf_init_common(sm_sim *s, void **state, int fh, sm_err *err) {
  sstate *st = sm_calloc(1, sizeof(*st));
  const char *fb = SM__PARAM(s, sjf_fallback);
  size_t n = sm_sim_job_count(s);
  int rc;

  if (st == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  *state = st;
  st->fh = fh;
  if (fb != NULL && strcmp(fb, "fifo") != 0 && strcmp(fb, "history") != 0)
    return sm_err_set(err, SM_EINVAL,
                      "sjf.fallback: expected history or fifo, got '%.40s'",
                      fb);
  st->fifo_fallback = fb != NULL && strcmp(fb, "fifo") == 0;
  if (SM__PARAM(s, sjf_key) != NULL) {
    const char *k = s->par->sjf_key;
    if (strcmp(k, "duration") != 0 && strcmp(k, "service") != 0)
      return sm_err_set(err, SM_EINVAL,
                        "sjf.key: expected duration or service, got "
                        "'%.40s'",
                        k);
    st->service = strcmp(k, "service") == 0;
  }
  st->rest = SM__PARAM(s, fail_rest);
  st->diagnose_s = SM__PARAM(s, fh_diagnose_s);
  st->isolate_s = SM__PARAM(s, fh_isolate_s);
  st->ckpt_s = SM__PARAM(s, ckpt_interval_s);
  st->recall = SM__PARAM(s, fh_recall);
  if (!(st->diagnose_s >= 0) || !(st->isolate_s >= 0) || !(st->ckpt_s > 0) ||
      !(st->recall >= 0 && st->recall <= 1))
    return sm_err_set(err, SM_EINVAL,
                      "fh.diagnose_s and fh.isolate_s must be >= 0, "
                      "ckpt.interval_s > 0, fh.recall in [0, 1]");
  rc = sm__facts_open(s, &st->facts, err);
  if (rc == 0)
    rc = sm_sim_estimator_new(s, "history", &st->est, err);
  if (rc != 0)
    return rc;
  st->jobs = sm_calloc(n ? n : 1, sizeof(*st->jobs));
  if (st->jobs == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  rc = sm__ordered_init(s, &st->o, key_of, st, err);
  if (rc != 0)
    return rc;
  sm_sim_note(s,
              "%s: SJF on the Advisor's estimate%s (mean of the top-%g "
              "matches), fallbacks ordered by %s",
              fh ? "sjf-schedmate+fh" : "sjf-schedmate",
              st->service ? " x GPUs" : "", SM__PARAM(s, facts_top_k),
              st->fifo_fallback ? "arrival (FIFO)"
                                : "the history estimator (as QSSF)");
  if (fh)
    sm_sim_note(s,
                "sjf-schedmate+fh: the Failure Handler diagnoses an "
                "infrastructure failure in %g s, isolates its nodes for %g "
                "s and restarts the job from its last checkpoint (every %g "
                "s of progress) with %g x its run time still to do; recall "
                "%g",
                st->diagnose_s, st->isolate_s, st->ckpt_s, st->rest,
                st->recall);
  return 0;
}

static int sjf_init(sm_sim *s, void **state, sm_err *err) {
  return sjf_init_common(s, state, 0, err);
}

static int sjf_fh_init(sm_sim *s, void **state, sm_err *err) {
  return sjf_init_common(s, state, 1, err);
}

static void sjf_release(sm_sim *s, void *state) {
  sstate *st = state;

  (void)s;
  if (st == NULL)
    return;
  if (st->o.q != NULL)
    sm__ordered_release(&st->o);
  sm_free(st->jobs);
  sm_sim_estimator_free(st->est);
  sm__facts_free(st->facts);
  sm_free(st);
}

static void sjf_arrive(sm_sim *s, void *state, sm_sim_job *j) {
  sstate *st = state;
  sjob *l = &st->jobs[j->idx];

  if (!l->have) {
    sm__fact f;
    sm__facts_ask(st->facts, j, &f);
    if (f.hit)
      l->key = f.duration;
    else if (st->fifo_fallback)
      l->key = FIFO_BASE + j->submit; /* behind every estimate */
    else
      l->key = sm_sim_estimate(st->est, j);
    l->have = 1;
  }
  sm__ordered_arrive(s, &st->o, j);
}

/* The Failure Handler recovers an infrastructure failure: diagnosis,
 * isolation of the nodes, restart from the last checkpoint. */
static void recover(sm_sim *s, sstate *st, sm_sim_job *j) {
  int nodes[MAX_NODES_PER_JOB];
  int nn = sm_sim_job_nodes(j, nodes, MAX_NODES_PER_JOB);
  double done = j->duration, lost = fmod(done, st->ckpt_s);

  for (int i = 0; i < nn && i < MAX_NODES_PER_JOB; i++)
    if (st->isolate_s > 0 &&
        sm_sim_node_down(s, nodes[i], sm_sim_now(s) + st->isolate_s) == 0)
      st->isolated++;
  st->lost_gpu_s += lost * j->gpus;
  st->fh_restarts++;
  sm_sim_job_set_outcome(s, j, SM_SIM_END_COMPLETED);
  sm_sim_job_restart(s, j, st->rest * done + lost, st->diagnose_s);
}

static void sjf_finish(sm_sim *s, void *state, sm_sim_job *j) {
  sstate *st = state;

  sm_sim_estimator_observe(st->est, j);
  /* Every attempt is history: a failed one as failed (the Failure Handler
   * names the cause), a recovered one with all the work it needed. */
  sm__facts_done_job(st->facts, j, st->fh);
  if (st->fh && j->final_state == SM_SIM_END_FAILED && sm_sim_job_infra(s, j) &&
      j->restarts == 0 &&
      sm__job_uniform(sm_sim_config_of(s)->seed, 501, j->idx) < st->recall)
    recover(s, st, j);
}

static void sjf_schedule(sm_sim *s, void *state, int vc) {
  sm__ordered_schedule(s, &((sstate *)state)->o, vc);
}

static void sjf_finalize(sm_sim *s, void *state) {
  sstate *st = state;

  sm__facts_report(st->facts, s);
  if (st->fh) {
    SM__FIG_ADD(s, infra_restarts, (double)st->fh_restarts);
    SM__FIG_ADD(s, nodes_isolated, (double)st->isolated);
    SM__FIG_ADD(s, progress_redone_gpu_h, st->lost_gpu_s / 3600);
  }
}

/* What the two policies share. */
#define SJF_CALLS                                                              \
  .flags = SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_FACTS,                       \
  .release = sjf_release, .arrive = sjf_arrive, .finish = sjf_finish,          \
  .schedule = sjf_schedule, .finalize = sjf_finalize

const sm_sim_policy sm__policy_sjf_schedmate = {
    .name = "sjf-schedmate",
    .summary = "SJF on SchedMate's estimate (mean of the top-3 matches)",
    .init = sjf_init,
    SJF_CALLS};

const sm_sim_policy sm__policy_sjf_schedmate_fh = {
    .name = "sjf-schedmate+fh",
    .summary = "SchedMate-SJF with the Failure Handler (restart from "
               "checkpoint)",
    .init = sjf_fh_init,
    SJF_CALLS};
