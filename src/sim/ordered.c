/* ordered.c - the non-preemptive queue policies: FIFO, SJF (oracle) and
 * QSSF, which differ only in the order of their pending queue.
 *
 * Each VC keeps its pending jobs in an ordered set.  A scheduling pass
 * walks it in order and starts every job that can be placed; at the first
 * job that cannot, it stops (head-of-line blocking, as in the anchors'
 * simulators), unless the parameter backfill=1 lets it skip that job and
 * try the ones behind it.
 *
 *   fifo  submit time
 *   sjf   true duration (an oracle), ties by submit time
 *   qssf  estimated duration x GPUs (Helios' Quasi-Shortest-Service-
 *         First), the estimate taken at submission from the estimator
 *         named by the parameter estimator= (default history) */
#include <math.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

int sm__ordered_init(sm_sim *s, sm__ordered *o, sm__key_fn key, void *ud,
                     sm_err *err) {
  memset(o, 0, sizeof(*o));
  o->nvc = sm_sim_vc_count(s);
  o->q = sm_calloc((size_t)o->nvc, sizeof(*o->q));
  if (o->q == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int v = 0; v < o->nvc; v++)
    if (sm__oset_init(&o->q[v]) != 0) {
      sm__ordered_release(o);
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    }
  o->key = key;
  o->ud = ud;
  o->backfill = SM__PARAM(s, backfill) != 0;
  return 0;
}

void sm__ordered_release(sm__ordered *o) {
  if (o->q != NULL)
    for (int v = 0; v < o->nvc; v++)
      sm__oset_release(&o->q[v]);
  sm_free(o->q);
  o->q = NULL;
}

void sm__ordered_arrive(sm_sim *s, sm__ordered *o, sm_sim_job *j) {
  double k = o->key(s, o->ud, j);

  j->pkey = k;
  j->pdata = sm__oset_insert(&o->q[j->vc], j, k, j->submit);
  if (j->pdata == NULL)
    sm_sim_note(s, "out of memory queueing job %s", j->id);
}

void sm__ordered_schedule(sm_sim *s, sm__ordered *o, int vc) {
  sm__oset *q = &o->q[vc];
  sm__onode *n = sm__oset_first(q);

  while (n != NULL && sm_sim_vc_free(s, vc) > 0) {
    sm__onode *next = n->next[0];
    sm_sim_job *j = n->job;
    if (sm_sim_start(s, j)) {
      sm__oset_remove(q, n);
      j->pdata = NULL;
    } else if (!o->backfill) {
      break;
    }
    n = next;
  }
}

/* ==== The three policies ==== */

typedef struct ord_state {
  sm__ordered o;         /* queues */
  sm_sim_estimator *est; /* QSSF's estimator */
} ord_state;

static double key_submit(sm_sim *s, void *ud, sm_sim_job *j) {
  (void)s;
  (void)ud;
  return j->submit;
}

static double key_duration(sm_sim *s, void *ud, sm_sim_job *j) {
  (void)s;
  (void)ud;
  return j->duration;
}

static double key_service(sm_sim *s, void *ud, sm_sim_job *j) {
  ord_state *st = ud;
  (void)s;
  return sm_sim_estimate(st->est, j) * j->gpus;
}

static int ord_init(sm_sim *s, void **state, sm__key_fn key, int est,
                    sm_err *err) {
  ord_state *st = sm_calloc(1, sizeof(*st));
  int rc;

  if (st == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  if (est) {
    rc = sm_sim_estimator_new(s, SM__PARAM(s, estimator), &st->est, err);
    if (rc != 0) {
      sm_free(st);
      return rc;
    }
  }
  rc = sm__ordered_init(s, &st->o, key, st, err);
  if (rc != 0) {
    sm_sim_estimator_free(st->est);
    sm_free(st);
    return rc;
  }
  *state = st;
  return 0;
}

static int fifo_init(sm_sim *s, void **state, sm_err *err) {
  return ord_init(s, state, key_submit, 0, err);
}

static int sjf_init(sm_sim *s, void **state, sm_err *err) {
  return ord_init(s, state, key_duration, 0, err);
}

static int qssf_init(sm_sim *s, void **state, sm_err *err) {
  int rc = ord_init(s, state, key_service, 1, err);
  if (rc == 0)
    sm_sim_note(s,
                "qssf: priority = estimated duration x GPUs, estimator "
                "%s, estimated at submission",
                sm_sim_estimator_name(((ord_state *)*state)->est));
  return rc;
}

static void ord_finalize(sm_sim *s, void *state) {
  ord_state *st = state;

  if (st->est != NULL) {
    size_t h[4];
    sm__estimator_hits(st->est, h);
    if (h[0] + h[1] + h[2] + h[3] > 0) {
      SM__FIG_ADD(s, estimates_by_user_name, (double)h[0]);
      SM__FIG_ADD(s, estimates_by_user, (double)h[1]);
      SM__FIG_ADD(s, estimates_by_global_mean, (double)h[2]);
      SM__FIG_ADD(s, estimates_by_default, (double)h[3]);
    }
  }
}

static void ord_release(sm_sim *s, void *state) {
  ord_state *st = state;

  (void)s;
  sm__ordered_release(&st->o);
  sm_sim_estimator_free(st->est);
  sm_free(st);
}

static void ord_arrive(sm_sim *s, void *state, sm_sim_job *j) {
  sm__ordered_arrive(s, &((ord_state *)state)->o, j);
}

static void ord_finish(sm_sim *s, void *state, sm_sim_job *j) {
  ord_state *st = state;
  (void)s;
  if (st->est != NULL)
    sm_sim_estimator_observe(st->est, j);
}

static void ord_schedule(sm_sim *s, void *state, int vc) {
  sm__ordered_schedule(s, &((ord_state *)state)->o, vc);
}

/* What the three policies share. */
#define ORDERED_CALLS                                                          \
  .release = ord_release, .arrive = ord_arrive, .finish = ord_finish,          \
  .schedule = ord_schedule, .finalize = ord_finalize

const sm_sim_policy sm__policy_fifo = {
    .name = "fifo",
    .summary = "first in, first out (head-of-line blocking)",
    .init = fifo_init,
    ORDERED_CALLS};

const sm_sim_policy sm__policy_sjf = {
    .name = "sjf",
    .summary = "shortest job first on the true duration (oracle)",
    .init = sjf_init,
    ORDERED_CALLS};

const sm_sim_policy sm__policy_qssf = {
    .name = "qssf",
    .summary = "quasi-shortest-service-first: estimate x GPUs (Helios)",
    .init = qssf_init,
    ORDERED_CALLS};
