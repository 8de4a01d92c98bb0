/* sjf_schedmate.c - standalone SchedMate-SJF, without and with the
 * Failure Handler.
 *
 *   sjf-schedmate      shortest job first on the Advisor's estimate, taken
 *                      at submission: the mean duration of the top-3
 *                      matches (facts.c).  A job without an answer (a
 *                      fallback) is ordered by the simulator's history
 *                      estimator instead (mean duration of ended jobs of
 *                      the same user and name, else of the user, else of
 *                      all: the estimator QSSF uses by default; parameter
 *                      sjf.fallback=fifo orders it by submission time, as
 *                      if its estimate were its arrival).  Non-preemptive,
 *                      head-of-line blocking like the other queue
 *                      policies (--backfill to skip a blocked head).
 *   sjf-schedmate+fh   the same, with the Failure Handler.
 *
 * Failures (both): a job the trace records as failed has an
 * infrastructure cause with probability fail.infra_share (seeded per job;
 * facts.c); the others are user or framework failures and end as
 * recorded.  The trace's run time of an infrastructure failure is where
 * the fault struck; the job still needed fail.rest (1.0) times as much
 * work again.
 *   without the Failure Handler the job is lost and resubmitted: its user
 *      notices and resubmits it fail.resubmit_s (600 s) later, and it
 *      starts over from the beginning;
 *   with the Failure Handler it is diagnosed (fh.diagnose_s, 60 s), the
 *      nodes it ran on are isolated for fh.isolate_s (3,600 s), and it
 *      restarts from its last checkpoint (every ckpt.interval_s, 1,800 s,
 *      of progress), keeping its place in the order.  fh.recall (1.0) is
 *      the share of infrastructure failures the Handler recognises; the
 *      others are resubmitted as without it.
 * The recovered attempt completes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/schedmate_int.h"
#include "sim/sim_int.h"

#define MAX_NODES_PER_JOB 1024

typedef struct sjob {
  double key;     /* order: estimated duration (or arrival) */
  int have;       /* 1: key taken at the first submission */
  int recovered;  /* 1: an infrastructure failure was recovered */
  double full;    /* full-speed work the job needed in all */
} sjob;

typedef struct sstate {
  int fh;                     /* 1: with the Failure Handler */
  int fifo_fallback;          /* 1: fallbacks ordered by arrival */
  sm__facts *facts;           /* facts and world */
  sm_sim_estimator *est;      /* fallback estimator */
  sm__ordered o;              /* queues */
  sjob *jobs;                 /* per job */
  double rest, resubmit_s;    /* failure model */
  double diagnose_s, isolate_s, ckpt_s, recall;
  size_t infra_failures;      /* infrastructure failures met */
  size_t fh_restarts;         /* restarted by the Failure Handler */
  size_t resubmits;           /* resubmitted by their users */
  size_t user_failures;       /* user/framework failures (not retried) */
  size_t isolated;            /* node isolations */
  double lost_gpu_s;          /* GPU-seconds of progress redone */
} sstate;

static double key_of(sm_sim *s, void *ud, sm_sim_job *j) {
  (void)s;
  return ((sstate *)ud)->jobs[j->idx].key;
}

static int sjf_init_common(sm_sim *s, void **state, int fh, sm_err *err) {
  sstate *st = sm_calloc(1, sizeof(*st));
  const char *fb = sm_sim_param_str(s, "sjf.fallback");
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
  st->rest = sm_sim_param_num(s, "fail.rest", 1.0);
  st->resubmit_s = sm_sim_param_num(s, "fail.resubmit_s", 600);
  st->diagnose_s = sm_sim_param_num(s, "fh.diagnose_s", 60);
  st->isolate_s = sm_sim_param_num(s, "fh.isolate_s", 3600);
  st->ckpt_s = sm_sim_param_num(s, "ckpt.interval_s", 1800);
  st->recall = sm_sim_param_num(s, "fh.recall", 1.0);
  if (!(st->rest >= 0) || !(st->resubmit_s >= 0) || !(st->diagnose_s >= 0) ||
      !(st->isolate_s >= 0) || !(st->ckpt_s > 0) ||
      !(st->recall >= 0 && st->recall <= 1))
    return sm_err_set(err, SM_EINVAL,
                      "fail.rest, fail.resubmit_s, fh.diagnose_s and "
                      "fh.isolate_s must be >= 0, ckpt.interval_s > 0, "
                      "fh.recall in [0, 1]");
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
              "%s: SJF on the Advisor's estimate (mean of the top-%g "
              "matches), fallbacks by %s; failures: %g of the trace's "
              "failed jobs have an infrastructure cause and needed %g x "
              "their run time more; %s",
              fh ? "sjf-schedmate+fh" : "sjf-schedmate",
              sm_sim_param_num(s, "facts.top_k", 3),
              st->fifo_fallback ? "arrival (FIFO)"
                                : "the history estimator (as QSSF)",
              sm_sim_param_num(s, "fail.infra_share", 0.35), st->rest,
              fh ? "the Failure Handler diagnoses them, isolates their "
                   "nodes and restarts them from their last checkpoint"
                 : "without the Failure Handler they are resubmitted by "
                   "their users and start over");
  if (fh)
    sm_sim_note(s,
                "sjf-schedmate+fh: diagnosis %g s, node isolation %g s, "
                "checkpoint every %g s of progress, recall %g",
                st->diagnose_s, st->isolate_s, st->ckpt_s, st->recall);
  else
    sm_sim_note(s, "sjf-schedmate: users resubmit after %g s",
                st->resubmit_s);
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
      l->key = j->submit;
    else
      l->key = sm_sim_estimate(st->est, j);
    l->have = 1;
    l->full = j->duration;
  }
  sm__ordered_arrive(s, &st->o, j);
}

/* Recovers an infrastructure failure: the Failure Handler's restart from
 * the last checkpoint, or the user's resubmission from scratch. */
static void recover(sm_sim *s, sstate *st, sm_sim_job *j) {
  sjob *l = &st->jobs[j->idx];
  double done = j->duration, rest = st->rest * j->duration;
  int by_fh = st->fh && sm__job_uniform(sm_sim_config_of(s)->seed, 501,
                                        j->idx) < st->recall;

  st->infra_failures++;
  l->recovered = 1;
  l->full = done + rest;
  sm_sim_job_set_outcome(s, j, SM_SIM_END_COMPLETED);
  if (by_fh) {
    int nodes[MAX_NODES_PER_JOB];
    int nn = sm_sim_job_nodes(j, nodes, MAX_NODES_PER_JOB);
    double lost = fmod(done, st->ckpt_s);
    for (int i = 0; i < nn && i < MAX_NODES_PER_JOB; i++)
      if (st->isolate_s > 0 &&
          sm_sim_node_down(s, nodes[i], sm_sim_now(s) + st->isolate_s) == 0)
        st->isolated++;
    st->lost_gpu_s += lost * j->gpus;
    st->fh_restarts++;
    sm_sim_job_restart(s, j, rest + lost, st->diagnose_s);
  } else {
    st->lost_gpu_s += done * j->gpus;
    st->resubmits++;
    sm_sim_job_restart(s, j, done + rest, st->resubmit_s);
  }
}

static void sjf_finish(sm_sim *s, void *state, sm_sim_job *j) {
  sstate *st = state;
  sjob *l = &st->jobs[j->idx];
  int state_out;

  sm_sim_estimator_observe(st->est, j);
  if (j->final_state == SM_SIM_END_FAILED && !l->recovered) {
    if (sm__facts_env(st->facts, j)->infra) {
      recover(s, st, j);
      return;
    }
    st->user_failures++;
  }
  switch (j->final_state) {
  case SM_SIM_END_COMPLETED:
    state_out = SM_END_COMPLETED;
    break;
  case SM_SIM_END_CANCELED:
    state_out = SM_END_CANCELED;
    break;
  default:
    /* The Failure Handler names the cause; without it, it is unknown. */
    state_out = st->fh ? SM_END_FAILED_USER : SM_END_FAILED;
  }
  sm__facts_done(st->facts, j, l->full, state_out);
}

static void sjf_schedule(sm_sim *s, void *state, int vc) {
  sm__ordered_schedule(s, &((sstate *)state)->o, vc);
}

static void sjf_finalize(sm_sim *s, void *state) {
  sstate *st = state;

  sm__facts_report(st->facts, s);
  sm_sim_stat_add(s, "infra_failures", (double)st->infra_failures);
  sm_sim_stat_add(s, "user_failures", (double)st->user_failures);
  if (st->fh) {
    sm_sim_stat_add(s, "infra_restarts", (double)st->fh_restarts);
    sm_sim_stat_add(s, "nodes_isolated", (double)st->isolated);
  }
  sm_sim_stat_add(s, "user_resubmissions", (double)st->resubmits);
  sm_sim_stat_add(s, "progress_redone_gpu_h", st->lost_gpu_s / 3600);
}

const sm_sim_policy sm__policy_sjf_schedmate = {
    "sjf-schedmate",
    "SJF on SchedMate's estimate (mean of the top-3 matches)",
    SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_FACTS,
    sjf_init,
    sjf_release,
    sjf_arrive,
    sjf_finish,
    NULL,
    sjf_schedule,
    sjf_finalize};

const sm_sim_policy sm__policy_sjf_schedmate_fh = {
    "sjf-schedmate+fh",
    "SchedMate-SJF with the Failure Handler (restart from checkpoint)",
    SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_FACTS,
    sjf_fh_init,
    sjf_release,
    sjf_arrive,
    sjf_finish,
    NULL,
    sjf_schedule,
    sjf_finalize};
