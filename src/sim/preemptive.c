/* preemptive.c - the preemptive policies: SRTF and Tiresias (2D-LAS with
 * discretised priority queues).  Both decide by a quota round, as the
 * anchors' simulators do: walk every job of the VC, running and pending,
 * in priority order and keep each one whose GPU count still fits in the
 * VC's GPUs; running jobs left out are preempted (their restart costs the
 * preemption overhead), pending jobs kept are started in priority order
 * when placement finds room (fragmentation may still make one wait).
 *
 * Each VC keeps two ordered sets, pending and running, so a round is a
 * merge walk that stops once the quota is spent: its cost is the number
 * of jobs that fit plus the running jobs it preempts.
 *
 *   srtf      shortest remaining time first: a pending job's remaining
 *             work against a running job's time to its projected end.
 *             Rounds after every instant with events in the VC.
 *   tiresias  queue level from attained service (GPU-seconds) against the
 *             thresholds of tiresias.thresholds (default 18000, i.e. two
 *             queues, as in Lucid's simulator); FIFO by submission inside
 *             a level.  Rounds every tiresias.interval seconds (default
 *             60) when something changed; a job crossing a threshold is
 *             demoted by a timer at the exact crossing time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_LEVELS 16
#define TIMER_DEMOTE 1

typedef struct pre_state {
  sm__oset *pend;         /* pending jobs per VC */
  sm__oset *run;          /* running jobs per VC */
  int nvc;                /* VC count */
  int srtf;               /* 1: SRTF keys, 0: Tiresias keys */
  int nthr;               /* Tiresias thresholds */
  double thr[MAX_LEVELS]; /* ascending, GPU-seconds */
  sm__onode **keep;       /* round scratch: pending jobs to start */
  sm__onode **drop;       /* round scratch: running jobs to preempt */
  size_t cap_keep;        /* capacity of keep */
  size_t cap_drop;        /* capacity of drop */
  size_t demotions;       /* level changes */
} pre_state;

/* ==== Keys ==== */

static int level_of(const pre_state *st, double attained) {
  int l = 0;

  while (l < st->nthr && attained >= st->thr[l] - 1e-9)
    l++;
  return l;
}

static void pend_insert(sm_sim *s, pre_state *st, sm_sim_job *j) {
  sm__onode *n;

  if (st->srtf)
    n = sm__oset_insert(&st->pend[j->vc], j, j->work_left, j->submit);
  else
    n = sm__oset_insert(&st->pend[j->vc], j, j->plevel, j->submit);
  j->pdata = n;
  j->pflag = 0;
  if (n == NULL)
    sm_sim_note(s, "out of memory queueing job %s", j->id);
}

/* Running jobs: SRTF keys by projected end, Tiresias by level. */
static void run_insert(sm_sim *s, pre_state *st, sm_sim_job *j) {
  sm__onode *n;

  if (st->srtf)
    n = sm__oset_insert(&st->run[j->vc], j,
                        sm_sim_now(s) + j->work_left / j->rate, j->submit);
  else
    n = sm__oset_insert(&st->run[j->vc], j, j->plevel, j->submit);
  j->pdata = n;
  j->pflag = 1;
  if (n == NULL)
    sm_sim_note(s, "out of memory queueing job %s", j->id);
}

static void detach(pre_state *st, sm_sim_job *j) {
  if (j->pdata != NULL)
    sm__oset_remove(j->pflag ? &st->run[j->vc] : &st->pend[j->vc], j->pdata);
  j->pdata = NULL;
}

/* Arms the demotion timer of a running Tiresias job. */
static void arm_demotion(sm_sim *s, pre_state *st, sm_sim_job *j) {
  double left, at;

  if (st->srtf || j->plevel >= st->nthr)
    return;
  left = (st->thr[j->plevel] - j->attained) / j->gpus;
  at = sm_sim_now(s) + (left > 0 ? left : 0);
  /* Far from time 0 a tiny remainder rounds away: step to the next
   * representable time so that the job always makes progress. */
  if (!(at > sm_sim_now(s)))
    at = nextafter(sm_sim_now(s), INFINITY);
  sm_sim_timer(s, at, j, TIMER_DEMOTE, (uint64_t)j->starts);
}

/* ==== The round ==== */

static int grow(pre_state *st, size_t need) {
  return SM__GROW(st->keep, need, st->cap_keep) != 0 ||
                 SM__GROW(st->drop, need, st->cap_drop) != 0
             ? SM_ENOMEM
             : 0;
}

/* Nonzero when pending node p goes before running node r. */
static int pend_first(const pre_state *st, double now, const sm__onode *p,
                      const sm__onode *r) {
  double pk = p->k1, rk = st->srtf ? r->k1 - now : r->k1;

  if (pk != rk)
    return pk < rk;
  if (p->k2 != r->k2)
    return p->k2 < r->k2;
  return p->job->idx < r->job->idx;
}

static void pre_schedule(sm_sim *s, void *state, int vc) {
  pre_state *st = state;
  double now = sm_sim_now(s);
  sm__onode *p = sm__oset_first(&st->pend[vc]);
  sm__onode *r = sm__oset_first(&st->run[vc]);
  size_t nk = 0, nd = 0;
  long quota = sm_sim_vc_gpus(s, vc);

  if (p == NULL)
    return; /* nothing waits: nothing to decide */
  if (grow(st, st->pend[vc].n + st->run[vc].n) != 0) {
    sm_sim_note(s, "out of memory in a scheduling round");
    return;
  }
  while ((p != NULL || r != NULL) && quota > 0) {
    int take_p = r == NULL || (p != NULL && pend_first(st, now, p, r));
    sm__onode *n = take_p ? p : r;
    if (n->job->gpus <= quota) {
      quota -= n->job->gpus;
      if (take_p)
        st->keep[nk++] = n;
    } else if (!take_p) {
      st->drop[nd++] = n;
    }
    if (take_p)
      p = p->next[0];
    else
      r = r->next[0];
  }
  for (; r != NULL; r = r->next[0])
    st->drop[nd++] = r;
  if (nk == 0)
    return; /* preempting would start nobody */
  for (size_t i = 0; i < nd; i++) {
    sm_sim_job *j = st->drop[i]->job;
    detach(st, j);
    sm_sim_preempt(s, j);
    if (!st->srtf)
      j->plevel = level_of(st, j->attained);
    pend_insert(s, st, j);
  }
  for (size_t i = 0; i < nk; i++) {
    sm_sim_job *j = st->keep[i]->job;
    if (!sm_sim_start(s, j))
      continue; /* fragmentation: it waits for the next round */
    detach(st, j);
    run_insert(s, st, j);
    arm_demotion(s, st, j);
  }
}

/* ==== Callbacks ==== */

static int pre_init(sm_sim *s, void **state, int srtf, sm_err *err) {
  pre_state *st = sm_calloc(1, sizeof(*st));

  if (st == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  st->srtf = srtf;
  st->nvc = sm_sim_vc_count(s);
  st->pend = sm_calloc((size_t)st->nvc, sizeof(*st->pend));
  st->run = sm_calloc((size_t)st->nvc, sizeof(*st->run));
  if (st->pend == NULL || st->run == NULL)
    goto nomem;
  for (int v = 0; v < st->nvc; v++)
    if (sm__oset_init(&st->pend[v]) != 0 || sm__oset_init(&st->run[v]) != 0)
      goto nomem;
  *state = st;
  return 0;
nomem:
  *state = st;
  return sm_err_set(err, SM_ENOMEM, "out of memory");
}

static void pre_release(sm_sim *s, void *state) {
  pre_state *st = state;

  (void)s;
  for (int v = 0; v < st->nvc; v++) {
    if (st->pend)
      sm__oset_release(&st->pend[v]);
    if (st->run)
      sm__oset_release(&st->run[v]);
  }
  sm_free(st->pend);
  sm_free(st->run);
  sm_free(st->keep);
  sm_free(st->drop);
  sm_free(st);
}

static int srtf_init(sm_sim *s, void **state, sm_err *err) {
  int rc = pre_init(s, state, 1, err);

  if (rc == 0)
    sm_sim_set_round_interval(s, SM__PARAM(s, srtf_interval));
  return rc;
}

/* Parses "a,b,c" ascending positive thresholds. */
static int parse_thresholds(pre_state *st, const char *v, sm_err *err) {
  char tmp[256], *p, *save = NULL;

  if (strlen(v) >= sizeof(tmp))
    return sm_err_set(err, SM_EINVAL, "tiresias.thresholds: too long");
  strcpy(tmp, v);
  st->nthr = 0;
  for (p = strtok_r(tmp, ",", &save); p != NULL;
       p = strtok_r(NULL, ",", &save)) {
    double d;
    if (st->nthr == MAX_LEVELS - 1 || sm_parse_double(p, &d) != 0 || d <= 0 ||
        (st->nthr > 0 && d <= st->thr[st->nthr - 1]))
      return sm_err_set(err, SM_EINVAL,
                        "tiresias.thresholds: expected up to %d ascending "
                        "positive GPU-second limits, got '%.60s'",
                        MAX_LEVELS - 1, v);
    st->thr[st->nthr++] = d;
  }
  if (st->nthr == 0)
    return sm_err_set(err, SM_EINVAL, "tiresias.thresholds: empty");
  return 0;
}

static int tiresias_init(sm_sim *s, void **state, sm_err *err) {
  const char *thr = SM__PARAM(s, tiresias_thresholds);
  double iv = SM__PARAM(s, tiresias_interval);
  pre_state *st;
  int rc = pre_init(s, state, 0, err);

  if (rc != 0)
    return rc;
  st = *state;
  rc = parse_thresholds(st, thr ? thr : "18000", err);
  if (rc != 0)
    return rc;
  if (!(iv >= 0))
    return sm_err_set(err, SM_EINVAL, "tiresias.interval must be >= 0");
  sm_sim_set_round_interval(s, iv);
  return 0;
}

static void pre_arrive(sm_sim *s, void *state, sm_sim_job *j) {
  pre_state *st = state;

  j->pdata = NULL;
  j->plevel = st->srtf ? 0 : level_of(st, j->attained);
  pend_insert(s, st, j);
}

static void pre_finish(sm_sim *s, void *state, sm_sim_job *j) {
  (void)s;
  detach(state, j);
}

static void pre_timer(sm_sim *s, void *state, sm_sim_job *j, int kind,
                      uint64_t arg) {
  pre_state *st = state;
  int l;

  if (kind != TIMER_DEMOTE || j == NULL || j->status != SM_SIM_JOB_RUNNING ||
      (uint64_t)j->starts != arg)
    return; /* stale: the job stopped since */
  sm_sim_job_update(s, j);
  l = level_of(st, j->attained);
  if (l != j->plevel) {
    detach(st, j);
    j->plevel = l;
    run_insert(s, st, j);
    st->demotions++;
    sm_sim_mark_dirty(s, j->vc);
  }
  arm_demotion(s, st, j);
}

static void pre_finalize(sm_sim *s, void *state) {
  pre_state *st = state;

  if (!st->srtf) {
    char thr[160] = "";
    for (int i = 0; i < st->nthr; i++) {
      size_t n = strlen(thr);
      snprintf(thr + n, sizeof(thr) - n, "%s%g", i ? "," : "", st->thr[i]);
    }
    SM__FIG_ADD(s, demotions, (double)st->demotions);
    sm_sim_note(s,
                "tiresias: %d queues, thresholds %s GPU-s, rounds every "
                "%g s",
                st->nthr + 1, thr, SM__PARAM(s, tiresias_interval));
  }
}

/* What the two policies share. */
#define PREEMPTIVE_CALLS                                                       \
  .flags = SM_SIM_POLICY_PREEMPTIVE, .release = pre_release,                   \
  .arrive = pre_arrive, .finish = pre_finish, .schedule = pre_schedule,        \
  .finalize = pre_finalize

const sm_sim_policy sm__policy_srtf = {
    .name = "srtf",
    .summary = "shortest remaining time first, preemptive (oracle)",
    .init = srtf_init,
    PREEMPTIVE_CALLS};

const sm_sim_policy sm__policy_tiresias = {
    .name = "tiresias",
    .summary = "2D-LAS with discretised queues and preemption (Tiresias)",
    .init = tiresias_init,
    .timer = pre_timer,
    PREEMPTIVE_CALLS};
