/* channel.c - the channels of the service and the life of a request.
 *
 * Each channel (submit, run, exit) has one bounded ring of requests and a
 * fixed pool of worker threads: a request that finds the ring full is
 * refused at once (503 with Retry-After), so memory never grows with the
 * offered load.  Every queued request is also on the deadline list, kept
 * in deadline order; the deadline thread sleeps until the earliest one
 * and answers whatever has not been answered by then (the submit channel
 * with a fallback whose reason is "deadline", the others with 503).  A
 * worker that finishes after its request was answered drops its result;
 * one that picks up a request already answered skips it.
 *
 * A request is shared by its connection (suspended while it waits), the
 * ring and the deadline list, so it is reference-counted; whoever makes
 * its answer final (sv__req_finish) resumes the connection, exactly
 * once, under the request's mutex, which also orders it after the
 * router's MHD_suspend_connection.
 *
 * What a request does is not this file's business: the workers and the
 * deadline thread call the service's hooks (sv_hooks, set by server.c),
 * never a function of the files above. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve/mhd_load_int.h"
#include "serve/serve_int.h"

/* ==== Requests ==== */

void sv__req_ref(sv_req *r) {
  __atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
}

void sv__req_unref(sv_req *r) {
  if (r == NULL || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  sv__result_release(&r->res);
  sm_buf_release(&r->body);
  cJSON_Delete(r->json);
  pthread_mutex_destroy(&r->mu);
  atomic_fetch_sub(&r->sv->live, 1);
  sm_free(r);
}

/* Takes r off the deadline list if it is there. */
void sv__deadline_remove(sm_serve *sv, sv_req *r) {
  int was;

  pthread_mutex_lock(&sv->dl_mu);
  was = r->in_dl;
  if (was) {
    if (r->dl_prev)
      r->dl_prev->dl_next = r->dl_next;
    else
      sv->dl_head = r->dl_next;
    if (r->dl_next)
      r->dl_next->dl_prev = r->dl_prev;
    else
      sv->dl_tail = r->dl_prev;
    r->dl_prev = r->dl_next = NULL;
    r->in_dl = 0;
  }
  pthread_mutex_unlock(&sv->dl_mu);
  if (was)
    sv__req_unref(r);
}

int sv__req_finish(sv_req *r, sv_result *res, int late) {
  int used = 0;

  pthread_mutex_lock(&r->mu);
  if (r->state != RQ_DONE) {
    sv__result_release(&r->res);
    r->res = *res;
    sv__result_init(res);
    r->state = RQ_DONE;
    r->late = late;
    used = 1;
  }
  pthread_mutex_unlock(&r->mu);
  if (!used) {
    sv__result_release(res);
    return 0;
  }
  sv__deadline_remove(r->sv, r);
  /* What a registration was answered is recorded before the client can
   * see the answer (and end the job). */
  if (r->sv->hooks.answered != NULL)
    r->sv->hooks.answered(r->sv, r);
  pthread_mutex_lock(&r->mu);
  if (r->suspended && r->conn != NULL) {
    r->suspended = 0;
    MHD_resume_connection(r->conn);
  }
  pthread_mutex_unlock(&r->mu);
  return 1;
}

/* ==== Channels ==== */

static void *worker(void *arg);

int sv__chan_init(sv_channel *c, sm_serve *sv, int id, int cap, int workers,
                  double deadline_s) {
  memset(c, 0, sizeof(*c));
  c->id = id;
  c->sv = sv;
  c->cap = cap;
  c->n_thr = workers;
  c->deadline_s = deadline_s;
  c->ring = sm_calloc((size_t)cap, sizeof(*c->ring));
  c->thr = sm_calloc((size_t)workers, sizeof(*c->thr));
  if (c->ring == NULL || c->thr == NULL) {
    sm_free(c->ring);
    sm_free(c->thr);
    c->ring = NULL;
    c->thr = NULL;
    return SM_ENOMEM;
  }
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  atomic_init(&c->busy, 0);
  return 0;
}

int sv__chan_start(sv_channel *c, sm_err *err) {
  sigset_t all, old;

  /* Signals stay with the main thread. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (; c->started < c->n_thr; c->started++)
    if (pthread_create(&c->thr[c->started], NULL, worker, c) != 0)
      break;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (c->started < c->n_thr)
    return sm_err_set(err, SM_ENOMEM, "serve: cannot start the %s workers",
                      sv__channel_names[c->id]);
  return 0;
}

int sv__chan_push(sv_channel *c, sv_req *r) {
  pthread_mutex_lock(&c->mu);
  if (c->n == c->cap || c->stop) {
    pthread_mutex_unlock(&c->mu);
    return SM_ELIMIT;
  }
  sv__req_ref(r);
  c->ring[(c->head + c->n) % c->cap] = r;
  c->n++;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return 0;
}

int sv__chan_depth(sv_channel *c) {
  int n;

  pthread_mutex_lock(&c->mu);
  n = c->n;
  pthread_mutex_unlock(&c->mu);
  return n;
}

static void *worker(void *arg) {
  sv_channel *c = arg;
  sm_serve *sv = c->sv;

  for (;;) {
    sv_req *r;
    sv_result res;
    int skip;

    pthread_mutex_lock(&c->mu);
    while (c->n == 0 && !c->stop)
      pthread_cond_wait(&c->cv, &c->mu);
    if (c->n == 0) {
      pthread_mutex_unlock(&c->mu);
      break;
    }
    r = c->ring[c->head];
    c->ring[c->head] = NULL;
    c->head = (c->head + 1) % c->cap;
    c->n--;
    pthread_mutex_unlock(&c->mu);

    pthread_mutex_lock(&r->mu);
    /* Answered already (its deadline passed while it waited): nothing to
     * do, except reading a registered job for its write-back. */
    skip = r->state == RQ_DONE && r->ep != EP_REGISTER;
    if (r->state != RQ_DONE) {
      r->state = RQ_RUNNING;
      r->t_work = sm_now();
    }
    pthread_mutex_unlock(&r->mu);
    if (!skip) {
      sv__observe(&sv->m.wait[c->id], sm_now() - r->t0);
      atomic_fetch_add(&c->busy, 1);
      sv__result_init(&res);
      sv->hooks.work(sv, r, &res);
      atomic_fetch_sub(&c->busy, 1);
      if (sv__req_finish(r, &res, 0) && r->res.fallback)
        sv__count_fallback(&sv->m, r->res.fallback);
    }
    sv__req_unref(r);
  }
  return NULL;
}

void sv__chan_stop(sv_channel *c) {
  if (c->ring == NULL)
    return;
  pthread_mutex_lock(&c->mu);
  c->stop = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  for (int i = 0; i < c->started; i++)
    pthread_join(c->thr[i], NULL);
  c->started = 0;
}

void sv__chan_release(sv_channel *c) {
  if (c->ring == NULL)
    return;
  sv__chan_stop(c);
  /* Nothing is left: the workers drained the ring before ending. */
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  sm_free(c->ring);
  sm_free(c->thr);
  c->ring = NULL;
  c->thr = NULL;
}

/* ==== Deadlines ==== */

void sv__deadline_add(sm_serve *sv, sv_req *r) {
  sv_req *p;

  sv__req_ref(r);
  pthread_mutex_lock(&sv->dl_mu);
  /* Deadlines mostly arrive in order: walk back from the tail. */
  for (p = sv->dl_tail; p != NULL && p->deadline > r->deadline; p = p->dl_prev)
    ;
  r->dl_prev = p;
  r->dl_next = p ? p->dl_next : sv->dl_head;
  if (r->dl_next)
    r->dl_next->dl_prev = r;
  else
    sv->dl_tail = r;
  if (p)
    p->dl_next = r;
  else
    sv->dl_head = r;
  r->in_dl = 1;
  if (sv->dl_head == r)
    pthread_cond_signal(&sv->dl_cv);
  pthread_mutex_unlock(&sv->dl_mu);
}

static void *deadline_thread(void *arg) {
  sm_serve *sv = arg;

  pthread_mutex_lock(&sv->dl_mu);
  for (;;) {
    sv_req *r = sv->dl_head;
    double now = sm_now();
    if (r == NULL) {
      if (sv->dl_stop)
        break;
      pthread_cond_wait(&sv->dl_cv, &sv->dl_mu);
      continue;
    }
    if (r->deadline > now && !sv->dl_stop) {
      /* The condition variable runs on CLOCK_MONOTONIC (see start). */
      struct timespec ts;
      double w;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      w = r->deadline - now;
      ts.tv_sec += (time_t)w;
      ts.tv_nsec += (long)((w - floor(w)) * 1e9);
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&sv->dl_cv, &sv->dl_mu, &ts);
      continue;
    }
    sv->dl_head = r->dl_next;
    if (sv->dl_head)
      sv->dl_head->dl_prev = NULL;
    else
      sv->dl_tail = NULL;
    r->dl_next = r->dl_prev = NULL;
    r->in_dl = 0;
    pthread_mutex_unlock(&sv->dl_mu);
    {
      sv_result res;
      int state;
      pthread_mutex_lock(&r->mu);
      state = r->state;
      pthread_mutex_unlock(&r->mu);
      if (state != RQ_DONE) {
        sv__result_init(&res);
        sv->hooks.late(sv, r, &res);
        if (sv__req_finish(r, &res, 1) && r->ch >= 0) {
          atomic_fetch_add(&sv->m.late[r->ch], 1);
          if (r->res.fallback)
            sv__count_fallback(&sv->m, r->res.fallback);
        }
      }
    }
    sv__req_unref(r);
    pthread_mutex_lock(&sv->dl_mu);
  }
  pthread_mutex_unlock(&sv->dl_mu);
  return NULL;
}

int sv__deadlines_start(sm_serve *sv, sm_err *err) {
  pthread_condattr_t ca;
  sigset_t all, old;
  int rc;

  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_destroy(&sv->dl_cv);
  pthread_cond_init(&sv->dl_cv, &ca);
  pthread_condattr_destroy(&ca);
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  rc = pthread_create(&sv->dl_thr, NULL, deadline_thread, sv);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    return sm_err_set(err, SM_ENOMEM,
                      "serve: cannot start the deadline "
                      "thread");
  sv->dl_started = 1;
  return 0;
}

void sv__deadlines_stop(sm_serve *sv) {
  if (!sv->dl_started)
    return;
  pthread_mutex_lock(&sv->dl_mu);
  sv->dl_stop = 1;
  pthread_cond_signal(&sv->dl_cv);
  pthread_mutex_unlock(&sv->dl_mu);
  pthread_join(sv->dl_thr, NULL);
  sv->dl_started = 0;
}
