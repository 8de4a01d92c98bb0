/* engine.c - the discrete-event core of the simulator.
 *
 * Events live in a binary heap ordered by (time, type, insertion order);
 * submissions are not pushed but taken from the trace's sorted job list,
 * so the heap holds only what is in flight.  Within one instant the
 * engine handles ends, node returns, restarts, timers, submissions and
 * rounds in that order, then calls the policy's schedule() for every VC
 * the instant touched (or arms a round at the next multiple of the
 * policy's interval), then records one point of the time series.  A run
 * costs O(events x log events) plus what the policy spends per call.
 *
 * Job progress is lazy: a running job's work_left, executed and attained
 * are brought up to date only when it is touched, and its end is an event
 * at now + work_left / rate that a generation counter invalidates when the
 * job is stopped or changes speed.  Setting a run up, its checks and its
 * result are run.c's. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_EVENTS ((size_t)4000000000ULL)
#define SERIES_MAX ((size_t)8 << 20)
#define NO_JOB UINT32_MAX
#define EPS 1e-6

/* ==== Event heap ==== */

static int ev_less(const sm__ev *a, const sm__ev *b) {
  if (a->t != b->t)
    return a->t < b->t;
  if (a->type != b->type)
    return a->type < b->type;
  return a->seq < b->seq;
}

static int heap_push(sm_sim *s, const sm__ev *e) {
  size_t i;

  if (SM__GROW(s->heap, s->hn + 1, s->hcap) != 0)
    return SM_ENOMEM;
  i = s->hn++;
  s->heap[i] = *e;
  s->heap[i].seq = s->seq++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    sm__ev tmp;
    if (!ev_less(&s->heap[i], &s->heap[p]))
      break;
    tmp = s->heap[p];
    s->heap[p] = s->heap[i];
    s->heap[i] = tmp;
    i = p;
  }
  return 0;
}

static sm__ev heap_pop(sm_sim *s) {
  sm__ev top = s->heap[0];
  size_t i = 0;

  s->heap[0] = s->heap[--s->hn];
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    sm__ev tmp;
    if (l < s->hn && ev_less(&s->heap[l], &s->heap[m]))
      m = l;
    if (r < s->hn && ev_less(&s->heap[r], &s->heap[m]))
      m = r;
    if (m == i)
      break;
    tmp = s->heap[m];
    s->heap[m] = s->heap[i];
    s->heap[i] = tmp;
    i = m;
  }
  return top;
}

/* Records the first error raised inside a callback. */
static void fail(sm_sim *s, int code, const char *fmt, ...) {
  va_list ap;

  if (s->err != 0)
    return;
  s->err = code;
  va_start(ap, fmt);
  vsnprintf(s->errd.msg, sizeof(s->errd.msg), fmt, ap);
  va_end(ap);
  s->errd.code = code;
}

static void push(sm_sim *s, double t, int type, uint32_t job, uint32_t gen,
                 int kind, uint64_t arg) {
  sm__ev e;

  e.t = t;
  e.type = type;
  e.job = job;
  e.gen = gen;
  e.kind = kind;
  e.arg = arg;
  e.seq = 0;
  if (heap_push(s, &e) != 0)
    fail(s, SM_ENOMEM, "out of memory (event queue)");
}

/* ==== Job progress ==== */

void sm_sim_job_update(sm_sim *s, sm_sim_job *j) {
  double dt;

  if (j->status != SM_SIM_JOB_RUNNING)
    return;
  dt = s->now - j->last_update;
  if (dt > 0) {
    double w = dt * j->rate;
    j->work_left -= w;
    if (j->work_left < 0)
      j->work_left = 0;
    j->_run->done_work += w;
    j->executed += dt;
    j->attained += dt * j->gpus;
  }
  j->last_update = s->now;
}

/* Schedules the end (or failure) of a running job. */
static void arm_end(sm_sim *s, sm_sim_job *j) {
  double w = j->work_left;

  j->_run->gen++;
  j->_run->failing = 0;
  if (!isnan(j->_run->fail_work) && j->_run->fail_work < j->work_left) {
    w = j->work_left - j->_run->fail_work;
    j->_run->failing = 1;
  }
  if (j->rate <= 0)
    return; /* a stalled job ends only when its speed changes */
  push(s, s->now + w / j->rate, SM__EV_END, j->idx, j->_run->gen, 0, 0);
}

static double type_speed(const sm_sim *s, int t) {
  return s->cl->types[t].speed;
}

/* ==== Dirty VCs and rounds ==== */

void sm_sim_mark_dirty(sm_sim *s, int vc) {
  sm__vc *v;

  if (vc < 0 || vc >= s->cl->nvcs)
    return;
  v = &s->vcs[vc];
  if (s->round > 0) {
    if (!v->round_armed) {
      double t = ceil(s->now / s->round - 1e-9) * s->round;
      if (t < s->now)
        t = s->now;
      v->round_armed = 1;
      push(s, t, SM__EV_ROUND, NO_JOB, 0, vc, 0);
    }
    return;
  }
  if (!v->dirty) {
    v->dirty = 1;
    s->dirty[s->ndirty++] = vc;
  }
}

void sm_sim_set_round_interval(sm_sim *s, double seconds) {
  s->round = seconds > 0 ? seconds : 0;
}

/* ==== Engine calls ==== */

double sm_sim_now(const sm_sim *s) {
  return s->now;
}
const sm_sim_config *sm_sim_config_of(const sm_sim *s) {
  return &s->cfg;
}
size_t sm_sim_job_count(const sm_sim *s) {
  return s->njobs;
}
sm_sim_job *sm_sim_job_at(sm_sim *s, size_t i) {
  return i < s->njobs ? &s->jobs[i] : NULL;
}
int sm_sim_vc_count(const sm_sim *s) {
  return s->cl->nvcs;
}
int sm_sim_vc_find(const sm_sim *s, const char *name) {
  for (int i = 0; i < s->cl->nvcs; i++)
    if (strcmp(s->cl->vcs[i].name, name) == 0)
      return i;
  return -1;
}
int sm_sim_vc_gpus(const sm_sim *s, int vc) {
  return s->vcs[vc].gpus_up;
}
int sm_sim_vc_free(const sm_sim *s, int vc) {
  return s->vcs[vc].free;
}
sm_rng *sm_sim_rng(sm_sim *s) {
  return &s->rng;
}

void *sm_sim_alloc_mem(sm_sim *s, size_t size) {
  return sm_arena_calloc(&s->arena, 1, size ? size : 1);
}

double sm_sim_preempt_overhead(const sm_sim *s, const sm_sim_job *j) {
  return j->gpus <= s->cfg.overhead_gpus ? s->cfg.preempt_small_s
                                         : s->cfg.preempt_large_s;
}

/* A pending job starts running at speed rate (its placement made). */
static void begin(sm_sim *s, sm_sim_job *j, double rate) {
  j->status = SM_SIM_JOB_RUNNING;
  if (j->starts == 0)
    j->first_start = s->now;
  j->starts++;
  j->queued += s->now - j->wait_since;
  j->last_update = s->now;
  j->rate = rate;
  s->pending--;
}

int sm_sim_start(sm_sim *s, sm_sim_job *j) {
  return sm_sim_start_in(s, j, j->vc);
}

int sm_sim_start_in(sm_sim *s, sm_sim_job *j, int vc) {
  int rc;

  if (j->status != SM_SIM_JOB_PENDING || vc < 0 || vc >= s->cl->nvcs)
    return 0;
  rc = sm__place(s, j, vc);
  if (rc < 0) {
    fail(s, rc, "out of memory (placement)");
    return 0;
  }
  if (rc == 0)
    return 0;
  begin(s, j, type_speed(s, j->_run->type));
  j->_run->owner = 1;
  j->_run->peer = NULL;
  j->shared = 0;
  s->busy += j->gpus;
  arm_end(s, j);
  return 1;
}

int sm_sim_start_shared(sm_sim *s, sm_sim_job *j, sm_sim_job *host, double rate,
                        double host_rate) {
  if (j->status != SM_SIM_JOB_PENDING || host->status != SM_SIM_JOB_RUNNING ||
      host->_run->peer != NULL || j->gpus != host->gpus || j->vc != host->vc ||
      !(rate > 0) || !(host_rate > 0) ||
      (j->_run->reqtype >= 0 && j->_run->reqtype != host->_run->type))
    return 0;
  if (j->_run->alloc == NULL) {
    j->_run->alloc = sm_arena_alloc(&s->arena, (size_t)host->_run->allocmax *
                                                   sizeof(sm_sim_alloc));
    if (j->_run->alloc == NULL) {
      fail(s, SM_ENOMEM, "out of memory (placement)");
      return 0;
    }
    j->_run->allocmax = host->_run->allocmax;
  }
  if (j->_run->allocmax < host->_run->nalloc)
    return 0;
  memcpy(j->_run->alloc, host->_run->alloc,
         (size_t)host->_run->nalloc * sizeof(sm_sim_alloc));
  j->_run->nalloc = host->_run->nalloc;
  j->_run->type = host->_run->type;
  j->_run->pvc = host->_run->pvc;
  begin(s, j, rate);
  j->_run->owner = 0;
  j->_run->peer = host;
  j->shared = 1;
  host->_run->peer = j;
  host->shared = 1;
  s->shared_starts++;
  arm_end(s, j);
  sm_sim_set_rate(s, host, host_rate);
  return 1;
}

/* Gives up j's GPUs: frees them, or hands them to its peer. */
static void release(sm_sim *s, sm_sim_job *j) {
  sm_sim_job *p = j->_run->peer;

  if (p != NULL) {
    p->_run->peer = NULL;
    p->shared = 0;
    if (j->_run->owner) {
      p->_run->owner = 1; /* the peer keeps running on these GPUs */
      j->_run->owner = 0;
    }
    j->_run->peer = NULL;
    j->shared = 0;
    return;
  }
  SM_ASSERT(j->_run->owner);
  sm__unplace(s, j);
  s->busy -= j->gpus;
  j->_run->owner = 0;
}

void sm_sim_stop(sm_sim *s, sm_sim_job *j, double extra) {
  if (j->status != SM_SIM_JOB_RUNNING)
    return;
  sm_sim_job_update(s, j);
  release(s, j);
  j->status = SM_SIM_JOB_PENDING;
  j->wait_since = s->now;
  j->rate = 0;
  j->_run->gen++;
  if (extra > 0) {
    /* Restart overhead, or progress lost since the last checkpoint. */
    j->work_left += extra;
    j->overhead += extra;
  }
  s->pending++;
}

void sm_sim_preempt(sm_sim *s, sm_sim_job *j) {
  if (j->status != SM_SIM_JOB_RUNNING)
    return;
  j->preemptions++;
  sm_sim_stop(s, j, sm_sim_preempt_overhead(s, j));
}

void sm_sim_set_rate(sm_sim *s, sm_sim_job *j, double rate) {
  if (j->status != SM_SIM_JOB_RUNNING || !(rate >= 0))
    return;
  sm_sim_job_update(s, j);
  j->rate = rate;
  arm_end(s, j);
}

int sm_sim_timer(sm_sim *s, double at, sm_sim_job *j, int kind, uint64_t arg) {
  if (!(at >= s->now))
    at = s->now;
  push(s, at, SM__EV_TIMER, j ? j->idx : NO_JOB, 0, kind, arg);
  return s->err;
}

int sm_sim_job_restart(sm_sim *s, sm_sim_job *j, double work_left,
                       double delay) {
  if (j->status != SM_SIM_JOB_DONE || !(work_left >= 0) || !(delay >= 0))
    return SM_EINVAL;
  j->status = SM_SIM_JOB_DELAYED;
  j->end = NAN;
  j->overhead += work_left - j->work_left; /* lost or added work */
  j->work_left = work_left;
  j->restarts++;
  j->_run->fail_work = NAN;
  s->live++;
  push(s, s->now + delay, SM__EV_RESUBMIT, j->idx, 0, 0, 0);
  return s->err;
}

int sm_sim_job_infra(const sm_sim *s, const sm_sim_job *j) {
  (void)s;
  return j->_run != NULL && j->_run->infra;
}

void sm_sim_job_set_outcome(sm_sim *s, sm_sim_job *j, int end_state) {
  (void)s;
  if (end_state >= SM_SIM_END_COMPLETED && end_state <= SM_SIM_END_FAILED)
    j->_run->outcome = end_state;
}

void sm_sim_job_fail_at(sm_sim *s, sm_sim_job *j, double at_work_left) {
  sm_sim_job_update(s, j);
  j->_run->fail_work = at_work_left;
  if (j->status == SM_SIM_JOB_RUNNING)
    arm_end(s, j);
}

int sm_sim_node_down(sm_sim *s, int node, double until) {
  sm__node *n;

  if (node < 0 || node >= s->cl->nnodes || !(until > s->now))
    return SM_EINVAL;
  n = &s->nodes[node];
  if (!n->down || until > n->down_until)
    n->down_until = until;
  sm__node_set_down(s, node);
  if (isfinite(until))
    push(s, until, SM__EV_NODE_UP, NO_JOB, 0, node, 0);
  return s->err;
}

int sm_sim_job_nodes(const sm_sim_job *j, int *nodes, int max) {
  if (j->_run == NULL)
    return 0;
  for (int i = 0; i < j->_run->nalloc && i < max; i++)
    nodes[i] = j->_run->alloc[i].node;
  return j->_run->nalloc;
}

int sm_sim_note(sm_sim *s, const char *fmt, ...) {
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = sm__notes_vadd(&s->notes, fmt, ap);
  va_end(ap);
  return rc;
}

/* ==== A run's state ==== */

int sm__sim_open(sm_sim *s, const sm_sim_trace *t, const sm_sim_cluster *c,
                 const sm_sim_config *cfg, sm_err *err) {
  memset(s, 0, sizeof(*s));
  s->trace = t;
  s->cl = c;
  s->cfg = *cfg;
  sm_arena_init(&s->arena, 1 << 20, 0);
  sm_rng_seed(&s->rng, cfg->seed);
  s->par = sm_arena_alloc(&s->arena, sizeof(*s->par));
  s->figs = sm_arena_calloc(&s->arena, 1, sizeof(*s->figs));
  if (s->par == NULL || s->figs == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  sm__params_parse(s->par, &s->cfg);
  return 0;
}

void sm__sim_close(sm_sim *s) {
  sm__params_release(s->par); /* before its arena */
  sm__figures_release(s->figs);
  sm_arena_discard(&s->arena);
  sm_free(s->heap);
  sm_free(s->dirty);
  sm__series_release(&s->ser);
  sm__notes_release(&s->notes);
}

/* ==== Event handling ==== */

static void on_end(sm_sim *s, sm_sim_job *j) {
  sm_sim_job_update(s, j);
  if (j->_run->failing) {
    j->final_state = SM_SIM_END_FAILED;
  } else {
    j->work_left = 0;
    if (j->_run->outcome >= 0)
      j->final_state = j->_run->outcome;
    else
      j->final_state = j->end_state == SM_SIM_END_UNKNOWN ? SM_SIM_END_COMPLETED
                                                          : j->end_state;
  }
  release(s, j);
  j->status = SM_SIM_JOB_DONE;
  j->end = s->now;
  j->rate = 0;
  j->_run->gen++;
  s->live--;
  sm_sim_mark_dirty(s, j->vc);
  if (j->_run->pvc != j->vc)
    sm_sim_mark_dirty(s, j->_run->pvc);
  if (j->final_state == SM_SIM_END_FAILED && j->_run->infra && j->restarts == 0)
    s->fail_infra++;
  if (s->pol->finish)
    s->pol->finish(s, s->pstate, j);
  /* The failure model: the user resubmits an infrastructure failure that
   * the policy did not recover itself. */
  if (s->fail_resubmit && j->status == SM_SIM_JOB_DONE &&
      j->final_state == SM_SIM_END_FAILED && j->_run->infra &&
      j->restarts == 0) {
    j->_run->outcome = SM_SIM_END_COMPLETED;
    s->fail_resubmitted++;
    sm_sim_job_restart(s, j, j->duration * (1 + s->fail_rest),
                       s->fail_resubmit_s);
  }
}

static void on_arrive(sm_sim *s, sm_sim_job *j) {
  j->status = SM_SIM_JOB_PENDING;
  j->wait_since = s->now;
  s->pending++;
  sm_sim_mark_dirty(s, j->vc);
  if (s->pol->arrive)
    s->pol->arrive(s, s->pstate, j);
}

static void handle(sm_sim *s, const sm__ev *e) {
  sm_sim_job *j = e->job == NO_JOB ? NULL : &s->jobs[e->job];

  s->events++;
  switch (e->type) {
  case SM__EV_END:
    if (j->status == SM_SIM_JOB_RUNNING && e->gen == j->_run->gen)
      on_end(s, j);
    else
      s->events--; /* stale: not counted */
    break;
  case SM__EV_NODE_UP: {
    sm__node *n = &s->nodes[e->kind];
    if (n->down && n->down_until <= s->now + EPS) {
      sm__node_set_up(s, e->kind);
      sm_sim_mark_dirty(s, n->vc);
    }
    break;
  }
  case SM__EV_RESUBMIT:
    if (j->status == SM_SIM_JOB_DELAYED)
      on_arrive(s, j); /* live was counted by the restart */
    break;
  case SM__EV_TIMER:
    if (s->pol->timer)
      s->pol->timer(s, s->pstate, j, e->kind, e->arg);
    break;
  case SM__EV_ROUND:
    s->vcs[e->kind].round_armed = 0;
    s->pol->schedule(s, s->pstate, e->kind);
    break;
  default:
    SM_BUG("unknown event type");
  }
}

/* Time and type of the next event (heap or submission); 0 if none. */
static int peek(sm_sim *s, double *t, int *type) {
  int have = 0;

  if (s->hn > 0) {
    *t = s->heap[0].t;
    *type = s->heap[0].type;
    have = 1;
  }
  while (s->next_arrival < s->njobs &&
         s->jobs[s->next_arrival].status == SM_SIM_JOB_DROPPED)
    s->next_arrival++;
  if (s->next_arrival < s->njobs) {
    double ta = s->jobs[s->next_arrival].submit;
    if (!have || ta < *t || (ta == *t && SM__EV_ARRIVE < *type)) {
      *t = ta;
      *type = SM__EV_ARRIVE;
    }
    have = 1;
  }
  return have;
}

static void record(sm_sim *s) {
  sm__series *ser = &s->ser;

  if (s->pending > (long)s->peak_pending)
    s->peak_pending = (size_t)s->pending;
  if (ser->n > 0) {
    size_t k = ser->n - 1;
    if (ser->busy[k] == (int)s->busy && ser->pending[k] == (int)s->pending)
      return;
    if (ser->t[k] == s->now) {
      ser->busy[k] = (int)s->busy;
      ser->pending[k] = (int)s->pending;
      return;
    }
  }
  if (ser->n == SERIES_MAX) {
    s->series_full = 1;
    return;
  }
  if (sm__series_add(ser, s->now, (int)s->busy, (int)s->pending) != 0)
    fail(s, SM_ENOMEM, "out of memory (time series)");
}

/* End of an instant: schedule the VCs it touched. */
static void flush(sm_sim *s) {
  for (int i = 0; i < s->ndirty && s->err == 0; i++) {
    int vc = s->dirty[i];
    s->vcs[vc].dirty = 0;
    s->pol->schedule(s, s->pstate, vc);
  }
  s->ndirty = 0;
}

int sm__engine_loop(sm_sim *s) {
  double t;
  int type;
  size_t tick = 0;

  while (s->err == 0) {
    if (!peek(s, &t, &type) || t > s->now) {
      flush(s);
      if (s->err != 0)
        break;
      if (peek(s, &t, &type) && t <= s->now)
        continue; /* the schedule created work at this instant */
      record(s);
      if (!peek(s, &t, &type))
        break;
      s->busy_integral += (double)s->busy * (t - s->now);
      s->now = t;
    }
    if (type == SM__EV_ARRIVE) {
      sm_sim_job *j = &s->jobs[s->next_arrival++];
      s->events++;
      s->live++;
      on_arrive(s, j);
    } else {
      sm__ev e = heap_pop(s);
      handle(s, &e);
    }
    if (s->events >= MAX_EVENTS)
      fail(s, SM_ELIMIT, "more than %zu events: stopped", MAX_EVENTS);
    if (s->cfg.progress && ++tick >= 65536) {
      tick = 0;
      s->cfg.progress(s->cfg.progress_ud,
                      s->njobs ? (double)s->next_arrival / s->njobs : 1);
    }
  }
  return s->err;
}
