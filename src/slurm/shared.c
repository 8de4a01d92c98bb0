/* shared.c - what every part of the Slurm agent uses: messages through
 * the log callback, the counters (under their lock), the wall clock, the
 * history id of a run, and the table of jobs kept between passes (sorted
 * by id).  It depends on nothing else of the agent, so that the channels
 * (submit, run, exit), the report files and the socket server sit above
 * it and agent.c, the main loop, on top of them all. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm_int.h"
#include "util/util_int.h"

/* ==== Messages, counters, the clock, run ids ==== */

void sm__log(sm_slurm_agent *a, int level, const char *fmt, ...) {
  char msg[1024];
  va_list ap;

  if (a->o.log == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  a->o.log(a->o.log_ud, level, msg);
}

void sm__count(sm_slurm_agent *a, uint64_t *counter, uint64_t n) {
  pthread_mutex_lock(&a->cnt_mu);
  *counter += n;
  pthread_mutex_unlock(&a->cnt_mu);
}

void sm_slurm_agent_counters(sm_slurm_agent *a, sm_slurm_counters *out) {
  pthread_mutex_lock(&a->cnt_mu);
  *out = a->cnt;
  pthread_mutex_unlock(&a->cnt_mu);
}

double sm__wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sm__run_id(const sm_slurm_agent *a, uint32_t id, uint32_t restarts,
                char *out, size_t cap) {
  if (restarts > 0)
    snprintf(out, cap, "%s:%u.%u", a->be.cluster, (unsigned)id,
             (unsigned)restarts);
  else
    snprintf(out, cap, "%s:%u", a->be.cluster, (unsigned)id);
}

/* ==== The job table (sorted by id) ==== */

static int find_index(const sm_slurm_agent *a, uint32_t id, int *at) {
  int lo = 0, hi = a->n_jobs;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (a->jobs[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  *at = lo;
  return lo < a->n_jobs && a->jobs[lo].id == id;
}

sm__sjob *sm__job_find(sm_slurm_agent *a, uint32_t id) {
  int at;
  return find_index(a, id, &at) ? &a->jobs[at] : NULL;
}

sm__sjob *sm__job_get(sm_slurm_agent *a, uint32_t id) {
  int at;
  sm__sjob *j;

  if (find_index(a, id, &at))
    return &a->jobs[at];
  if (SM__GROW(a->jobs, (size_t)a->n_jobs + 1, a->cap_jobs) != 0)
    return NULL;
  memmove(&a->jobs[at + 1], &a->jobs[at],
          (size_t)(a->n_jobs - at) * sizeof(*j));
  a->n_jobs++;
  j = &a->jobs[at];
  memset(j, 0, sizeof(*j));
  j->id = id;
  j->state = -1;
  j->done_run = -1;
  j->acted_run = -1;
  j->rate = NAN;
  j->base_rate = NAN;
  sm_meta_init(&j->meta);
  return j;
}
