/* lucid.c - Lucid (ASPLOS'23) as its public simulator models it, and
 * Lucid + SchedMate: the same policy with exactly three changes.
 *
 * Lucid:
 *   1. A new job is profiled first, on dedicated profiling nodes (a
 *      partition sm_sim_run carves out of the cluster, 2 nodes by
 *      default), least-GPU-first, for lucid.profile_s (100 s); a job that
 *      ends within that time ends inside the profiler.  The profiler
 *      measures the job's GPU utilisation and memory (its true profile);
 *      the work done while profiling is lost (the job starts over on the
 *      cluster).  Jobs above lucid.profile_max_gpus (8) are not profiled
 *      and never share GPUs.
 *   2. The queue of each VC is ordered by estimated duration x GPUs, the
 *      estimate taken at submission from a pluggable estimator
 *      (lucid.estimator, as QSSF's: history by default).
 *   3. Every scheduling pass walks the whole queue in that order.  A job
 *      of at most 8 GPUs is first offered to a running job that runs
 *      alone on the same number of GPUs, the first in start order for
 *      which both sharing scores add up to at most 2, the memory of the
 *      two fits in lucid.mem_mib (24,576 MiB) and the job's priority is at
 *      most twice the other's; otherwise it gets GPUs of its own if there
 *      are any.  A job that fits nowhere waits without blocking the jobs
 *      behind it, as in Lucid's simulator.  Two jobs sharing GPUs run at
 *      the speeds of the co-location model (colocate.c); when one ends the
 *      other gets its full speed back.
 *
 * Lucid + SchedMate (lucid+schedmate, or lucid with --semantic on):
 *   1. History hit: the job skips the profiler; the mean utilisation and
 *      memory of its matches are its profile (the sharing score is that
 *      of the nearest table row), and it goes straight to the queue.  A
 *      miss goes through Lucid's profiler and estimator, unchanged.
 *   2. History hit: its duration estimate is the mean of the matches'
 *      durations.
 *   3. After B is packed onto A, the Tracker needs lucid.track_steps (30)
 *      steps in the new state, and at least lucid.track_min_s (60 s), to
 *      measure A's throughput; if it fell below lucid.evict_threshold
 *      (0.5) of what A had alone, B is evicted back to the queue, losing
 *      its progress since its last checkpoint (ckpt.interval_s, 1800 s),
 *      and is never packed again.  A job whose log the Tracker cannot
 *      follow (a share lucid.untracked, 0.15) is not checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/facts_int.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_SHARE_GPUS 8
#define NLABELS 3
/* Queue buckets per VC: 0 for jobs above 8 GPUs, then per GPU count g the
 * packable jobs of each sharing score and, last, the jobs that may only
 * run alone (no profile, evicted, packing off). */
#define NB (1 + MAX_SHARE_GPUS * (NLABELS + 1))
#define NH (MAX_SHARE_GPUS * NLABELS)
#define T_PROFILE 1
#define T_CHECK 2

enum { L_NEW = 0, L_PROFQ, L_PROFILING, L_MAINQ, L_RUN, L_DONE };

/* What Lucid knows and keeps about one job. */
typedef struct ljob {
  double prio;       /* queue key: estimate x GPUs */
  double est;        /* duration estimate, s */
  double util;       /* believed profile: SM utilisation, percent */
  double gmem;       /* believed profile: memory, MiB */
  int label;         /* believed sharing score */
  int profiled;      /* 1: a profile is known (measured or matched) */
  int stage;         /* L_* */
  int hit;           /* 1: SchedMate answered for it */
  int no_pack;       /* 1: evicted once, never packed again */
  int untracked;     /* 1: its log shows no progress the Tracker can
                        follow (drawn per job, lucid.untracked) */
  int partner;       /* index of the job sharing its GPUs, -1 */
  double base_rate;  /* its speed alone on its GPUs */
  double start_work; /* work_left when it last started */
  double t_start;    /* when it last started */
  double seq;        /* start order (Lucid's run list order) */
  uint32_t serial;   /* pairing serial, for the check timer */
  int qb;            /* queue bucket while queued */
  sm__onode *node;   /* queue node while queued */
  sm__onode *hnode;  /* host-set node while it may host a guest */
} ljob;

typedef struct lstate {
  int semantic;           /* 1: Lucid + SchedMate */
  sm__facts *facts;       /* world model and facts */
  sm_sim_estimator *est;  /* Lucid's own estimator */
  int nvc;                /* VC count */
  int prof_vc;            /* profiling partition, -1 when none */
  double profile_s;       /* profiling time limit */
  int profile_max_gpus;   /* largest job profiled */
  double mem_limit;       /* GPU memory of a shared GPU set, MiB */
  int share;              /* 0: never pack (ablation) */
  int naive;              /* 1: plain scheduling passes (tests) */
  double evict_thr;       /* TP_after / TP_before below which B goes */
  double track_steps;     /* steps the Tracker needs */
  double track_min_s;     /* and at least this long */
  double ckpt_s;          /* checkpoint interval */
  sm__oset *pq;           /* queues [vc * NB + bucket] */
  sm__oset *hs;           /* hosts [vc * NH + (g - 1) * 3 + label] */
  sm__oset profq;         /* profiler queue */
  ljob *jobs;             /* per job */
  double pf[NH];          /* pass: priority at which a host set failed */
  int place_fail;         /* pass: smallest GPU count (of one node at
                             most) that found no placement: larger
                             single-node jobs cannot be placed either
                             until GPUs are freed */
  int big_fail[16];       /* pass: GPU counts above one node that
                            found no placement */
  int nbig;               /* their count */
  int *typed;             /* queued jobs naming a GPU type, per VC */
  double seq;             /* start counter */
  uint32_t serial;        /* pairing counter */
  double prof_gpu_s;      /* GPU-seconds spent profiling */
  double saved_gpu_s;     /* profiling GPU-seconds skipped on hits */
  size_t profiled;        /* jobs profiled to the time limit */
  size_t prof_ended;      /* jobs that ended inside the profiler */
  size_t skipped;         /* jobs that skipped the profiler */
  size_t unprofiled;      /* jobs too large to profile */
  size_t packs;           /* pairs formed */
  size_t packs_measured;  /* of which with measured speeds */
  size_t checks;          /* Tracker checks done */
  size_t untracked_skips; /* pairs whose host could not be tracked */
  size_t evictions;       /* guests evicted */
  size_t mislabeled;      /* hits whose believed score was wrong */
} lstate;

/* ==== Host sets: running jobs that may take a guest ==== */

static int hidx(const sm_sim_job *j, const ljob *l) {
  return (j->gpus - 1) * NLABELS + l->label;
}

/* Adds j to its host set if it may host: running alone in its own VC on
 * at most 8 GPUs, with a profile, never evicted.  Kept in start order. */
static void host_add(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];
  int h;

  if (l->hnode != NULL || !st->share || j->gpus > MAX_SHARE_GPUS ||
      !l->profiled || l->no_pack || l->partner >= 0 ||
      j->status != SM_SIM_JOB_RUNNING || l->stage != L_RUN)
    return;
  h = hidx(j, l);
  l->hnode = sm__oset_insert(&st->hs[j->vc * NH + h], j, l->seq, 0);
  if (l->hnode == NULL)
    sm_sim_note(s, "out of memory keeping job %s", j->id);
  st->pf[h] = INFINITY;
}

static void host_del(lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];

  if (l->hnode != NULL)
    sm__oset_remove(&st->hs[j->vc * NH + hidx(j, l)], l->hnode);
  l->hnode = NULL;
}

/* ==== Queues ==== */

static int bucket_of(const lstate *st, const sm_sim_job *j, const ljob *l) {
  if (j->gpus > MAX_SHARE_GPUS)
    return 0;
  if (st->share && l->profiled && !l->no_pack)
    return 1 + (j->gpus - 1) * (NLABELS + 1) + l->label;
  return 1 + (j->gpus - 1) * (NLABELS + 1) + NLABELS;
}

static void mainq_put(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];

  l->stage = L_MAINQ;
  l->qb = bucket_of(st, j, l);
  l->node = sm__oset_insert(&st->pq[j->vc * NB + l->qb], j, l->prio, j->submit);
  st->typed[j->vc] += j->gpu_type[0] != '\0';
  if (l->node == NULL)
    sm_sim_note(s, "out of memory queueing job %s", j->id);
  sm_sim_mark_dirty(s, j->vc);
}

/* ==== Set-up ==== */

static int lucid_init_common(sm_sim *s, void **state, int semantic,
                             sm_err *err) {
  lstate *st = sm_calloc(1, sizeof(*st));
  const char *pv = SM__PARAM(s, profiler_vc);
  size_t n = sm_sim_job_count(s);
  int rc;

  if (st == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  *state = st;
  st->semantic = semantic;
  st->nvc = sm_sim_vc_count(s);
  st->prof_vc = sm_sim_vc_find(s, pv && *pv ? pv : "profiler");
  st->profile_s = SM__PARAM(s, lucid_profile_s);
  st->profile_max_gpus = (int)SM__PARAM(s, lucid_profile_max_gpus);
  st->mem_limit = SM__PARAM(s, lucid_mem_mib);
  st->share = SM__PARAM(s, lucid_share) != 0;
  st->naive = SM__PARAM(s, lucid_naive_pass) != 0;
  st->evict_thr = SM__PARAM(s, lucid_evict_threshold);
  st->track_steps = SM__PARAM(s, lucid_track_steps);
  st->track_min_s = SM__PARAM(s, lucid_track_min_s);
  st->ckpt_s = SM__PARAM(s, ckpt_interval_s);
  if (!(st->profile_s > 0) || !(st->mem_limit > 0) ||
      !(st->evict_thr >= 0 && st->evict_thr <= 1) || !(st->track_steps >= 0) ||
      !(st->track_min_s >= 0) || !(st->ckpt_s > 0))
    return sm_err_set(err, SM_EINVAL,
                      "lucid: profile_s, mem_mib and ckpt.interval_s must "
                      "be positive, evict_threshold in [0, 1], track_* "
                      "non-negative");
  rc = sm__facts_open(s, &st->facts, err);
  if (rc != 0)
    return rc;
  rc = sm_sim_estimator_new(s, SM__PARAM(s, lucid_estimator), &st->est, err);
  if (rc != 0)
    return rc;
  st->pq = sm_calloc((size_t)st->nvc * NB, sizeof(*st->pq));
  st->hs = sm_calloc((size_t)st->nvc * NH, sizeof(*st->hs));
  st->jobs = sm_calloc(n ? n : 1, sizeof(*st->jobs));
  st->typed = sm_calloc((size_t)st->nvc, sizeof(int));
  if (st->pq == NULL || st->hs == NULL || st->jobs == NULL ||
      st->typed == NULL || sm__oset_init(&st->profq) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int i = 0; i < st->nvc * NB; i++)
    if (sm__oset_init(&st->pq[i]) != 0)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int i = 0; i < st->nvc * NH; i++)
    if (sm__oset_init(&st->hs[i]) != 0)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
  if (semantic) {
    double u = SM__PARAM(s, lucid_untracked);
    if (!(u >= 0 && u <= 1))
      return sm_err_set(err, SM_EINVAL, "lucid.untracked is a share in [0, 1]");
    for (size_t i = 0; i < n; i++)
      st->jobs[i].untracked =
          sm__job_uniform(sm_sim_config_of(s)->seed, 402, i) < u;
  }
  for (size_t i = 0; i < n; i++) {
    st->jobs[i].partner = -1;
    st->jobs[i].label = 2;
  }
  if (st->prof_vc < 0)
    sm_sim_note(s,
                "%s: no profiling partition (profiler.nodes=0): jobs are "
                "not profiled, so none shares GPUs unless SchedMate "
                "knows its profile",
                semantic ? "lucid+schedmate" : "lucid");
  sm_sim_note(s,
              "%s: profiling %g s on %s, jobs of at most %d GPUs; queue "
              "by estimate x GPUs (estimator %s); packing %s, memory "
              "limit %g MiB%s",
              semantic ? "lucid+schedmate" : "lucid", st->profile_s,
              st->prof_vc >= 0 ? "the profiling partition" : "(none)",
              st->profile_max_gpus, sm_sim_estimator_name(st->est),
              st->share ? "on" : "off", st->mem_limit,
              semantic ? "; SchedMate: history hits skip the profiler and "
                         "take the matches' mean duration, harmful packing "
                         "undone by the Tracker"
                       : "");
  return 0;
}

static int lucid_init(sm_sim *s, void **state, sm_err *err) {
  const char *sem = sm_sim_config_of(s)->semantic;
  return lucid_init_common(s, state, sem != NULL && strcmp(sem, "on") == 0,
                           err);
}

static void lucid_release(sm_sim *s, void *state) {
  lstate *st = state;

  (void)s;
  if (st == NULL)
    return;
  if (st->pq != NULL)
    for (int i = 0; i < st->nvc * NB; i++)
      sm__oset_release(&st->pq[i]);
  if (st->hs != NULL)
    for (int i = 0; i < st->nvc * NH; i++)
      sm__oset_release(&st->hs[i]);
  sm_free(st->pq);
  sm_free(st->hs);
  sm_free(st->typed);
  sm__oset_release(&st->profq);
  sm_free(st->jobs);
  sm_sim_estimator_free(st->est);
  sm__facts_free(st->facts);
  sm_free(st);
}

/* ==== Events ==== */

static void lucid_arrive(sm_sim *s, void *state, sm_sim_job *j) {
  lstate *st = state;
  ljob *l = &st->jobs[j->idx];
  const sm__jobenv *e = sm__facts_env(st->facts, j);
  const sm__coloc *c = sm__facts_coloc(st->facts);

  if (l->stage != L_NEW) { /* a restart (not made by Lucid): requeue */
    mainq_put(s, st, j);
    return;
  }
  if (st->semantic) {
    sm__fact f;
    sm__facts_ask(st->facts, j, &f);
    if (f.hit) {
      l->hit = 1;
      l->est = f.duration;
      l->prio = l->est * j->gpus;
      if (j->gpus <= st->profile_max_gpus && !isnan(f.util) && !isnan(f.gmem)) {
        l->profiled = 1;
        l->util = f.util;
        l->gmem = f.gmem;
        l->label = sm__coloc_label(c, f.util, f.gmem_util, f.gmem);
        if (l->label != sm__coloc_prof(c, e->prof)->label)
          st->mislabeled++;
      }
      if (j->gpus <= st->profile_max_gpus && st->prof_vc >= 0) {
        st->skipped++;
        st->saved_gpu_s += j->gpus * SM_MIN(j->duration, st->profile_s);
      }
      mainq_put(s, st, j);
      return;
    }
  }
  l->est = sm_sim_estimate(st->est, j);
  l->prio = l->est * j->gpus;
  if (j->gpus <= st->profile_max_gpus && st->prof_vc >= 0) {
    l->stage = L_PROFQ;
    l->node = sm__oset_insert(&st->profq, j, j->gpus, j->submit);
    if (l->node == NULL)
      sm_sim_note(s, "out of memory queueing job %s", j->id);
    sm_sim_mark_dirty(s, st->prof_vc);
    return;
  }
  st->unprofiled++;
  mainq_put(s, st, j);
}

/* The profiler's time is up: the profile is known, the job's progress is
 * lost, and it joins the queue. */
static void profile_done(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];
  const sm__coloc *c = sm__facts_coloc(st->facts);
  const sm__prof *p = sm__coloc_prof(c, sm__facts_env(st->facts, j)->prof);

  sm_sim_job_update(s, j);
  sm_sim_stop(s, j, l->start_work - j->work_left);
  st->profiled++;
  st->prof_gpu_s += j->gpus * st->profile_s;
  l->profiled = 1;
  l->util = p->util;
  l->gmem = p->gmem;
  l->label = p->label;
  sm_sim_mark_dirty(s, st->prof_vc);
  mainq_put(s, st, j);
}

/* Breaks j's pair: the partner, if still running, gets its full speed
 * back and may host again. */
static void unpair(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];
  sm_sim_job *p;

  if (l->partner < 0)
    return;
  p = sm_sim_job_at(s, (size_t)l->partner);
  st->jobs[p->idx].partner = -1;
  l->partner = -1;
  if (p->status == SM_SIM_JOB_RUNNING) {
    sm_sim_set_rate(s, p, st->jobs[p->idx].base_rate);
    host_add(s, st, p);
  }
  sm_sim_mark_dirty(s, p->vc);
}

/* The Tracker saw the host slow down too much: the guest g goes back to
 * the queue, loses its progress since its last checkpoint, and is never
 * packed again. */
static void evict(sm_sim *s, lstate *st, sm_sim_job *g) {
  ljob *lg = &st->jobs[g->idx];
  double progress, lost;

  sm_sim_job_update(s, g);
  progress = lg->start_work - g->work_left;
  lost = progress > 0 ? fmod(progress, st->ckpt_s) : 0;
  lg->no_pack = 1;
  unpair(s, st, g);
  sm_sim_stop(s, g, lost);
  st->evictions++;
  mainq_put(s, st, g);
}

static void lucid_timer(sm_sim *s, void *state, sm_sim_job *j, int kind,
                        uint64_t arg) {
  lstate *st = state;
  ljob *l = &st->jobs[j->idx];

  if (kind == T_PROFILE) {
    if (j->status == SM_SIM_JOB_RUNNING && l->stage == L_PROFILING &&
        (uint64_t)j->starts == arg) {
      l->stage = L_MAINQ;
      profile_done(s, st, j);
    }
    return;
  }
  if (kind == T_CHECK && j->status == SM_SIM_JOB_RUNNING && l->partner >= 0 &&
      l->serial == (uint32_t)arg) {
    sm_sim_job *g = sm_sim_job_at(s, (size_t)l->partner);
    st->checks++;
    if (j->rate < st->evict_thr * l->base_rate)
      evict(s, st, g);
  }
}

static void lucid_finish(sm_sim *s, void *state, sm_sim_job *j) {
  lstate *st = state;
  ljob *l = &st->jobs[j->idx];

  if (l->stage == L_PROFILING) {
    st->prof_ended++;
    st->prof_gpu_s += j->gpus * (sm_sim_now(s) - l->t_start);
  }
  l->stage = L_DONE;
  host_del(st, j);
  unpair(s, st, j);
  sm_sim_estimator_observe(st->est, j);
  if (st->semantic)
    sm__facts_done_job(st->facts, j, 0);
}

/* ==== Scheduling ==== */

static void profiler_pass(sm_sim *s, lstate *st) {
  sm__onode *n = sm__oset_first(&st->profq);

  while (n != NULL && sm_sim_vc_free(s, st->prof_vc) > 0) {
    sm__onode *next = n->next[0];
    sm_sim_job *j = n->job;
    ljob *l = &st->jobs[j->idx];
    if (!sm_sim_start_in(s, j, st->prof_vc))
      break; /* Lucid's profiler keeps its order */
    sm__oset_remove(&st->profq, n);
    l->node = NULL;
    l->stage = L_PROFILING;
    l->start_work = j->work_left;
    l->t_start = sm_sim_now(s);
    sm_sim_timer(s, sm_sim_now(s) + st->profile_s, j, T_PROFILE,
                 (uint64_t)j->starts);
    n = next;
  }
}

/* The running job j may share with: Lucid's time-aware pair picker, the
 * first job in start order that runs alone on as many GPUs, whose
 * sharing score added to j's is at most 2, whose memory fits with j's,
 * and whose priority is at least half j's.  A host set that has no job
 * of a high enough priority is remembered as failed at j's priority for
 * the rest of the pass (the queue is walked by increasing priority). */
static sm_sim_job *pick_host(lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];
  sm__onode *best = NULL;

  for (int lab = 0; lab + l->label <= 2; lab++) {
    int h = (j->gpus - 1) * NLABELS + lab, prio_ok = 0, whole = 1;
    sm__oset *set = &st->hs[j->vc * NH + h];
    if (set->n == 0 || !(l->prio < st->pf[h]))
      continue;
    for (sm__onode *n = sm__oset_first(set); n != NULL; n = n->next[0]) {
      ljob *c = &st->jobs[n->job->idx];
      if (best != NULL && n->k1 > best->k1) {
        whole = 0; /* an earlier host was found in another set */
        break;
      }
      if (!(l->prio <= 2 * c->prio))
        continue;
      prio_ok = 1;
      if (c->gmem < st->mem_limit - l->gmem) {
        if (best == NULL || n->k1 < best->k1)
          best = n;
        break;
      }
    }
    if (whole && !prio_ok && st->pf[h] > l->prio)
      st->pf[h] = l->prio;
  }
  return best ? best->job : NULL;
}

static int try_pack(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx], *lh;
  const sm__coloc *c = sm__facts_coloc(st->facts);
  sm_sim_job *host;
  double sh, sg;
  int measured;

  if (!st->share || j->gpus > MAX_SHARE_GPUS || !l->profiled || l->no_pack)
    return 0;
  host = pick_host(st, j);
  if (host == NULL)
    return 0;
  lh = &st->jobs[host->idx];
  sm__coloc_pair(c, sm__facts_env(st->facts, host)->prof,
                 sm__facts_env(st->facts, j)->prof, &sh, &sg, &measured);
  if (!sm_sim_start_shared(s, j, host, sg * lh->base_rate, sh * lh->base_rate))
    return 0;
  host_del(st, host);
  st->packs++;
  st->packs_measured += measured;
  l->base_rate = lh->base_rate;
  l->start_work = j->work_left;
  l->t_start = sm_sim_now(s);
  l->seq = ++st->seq;
  l->partner = (int)host->idx;
  lh->partner = (int)j->idx;
  lh->serial = l->serial = ++st->serial;
  if (st->semantic) {
    if (lh->untracked) {
      st->untracked_skips++;
    } else {
      const sm__prof *p =
          sm__coloc_prof(c, sm__facts_env(st->facts, host)->prof);
      double delay = st->track_steps * p->step_s / (sh > 0 ? sh : 1);
      if (delay < st->track_min_s)
        delay = st->track_min_s;
      sm_sim_timer(s, sm_sim_now(s) + delay, host, T_CHECK, lh->serial);
    }
  }
  return 1;
}

/* Whether a bucket's next job can start at all: GPUs of its own, or a
 * host set it may pack into that has not failed at its priority. */
static int live(const lstate *st, int vc, int b, const sm_sim_job *j,
                int free) {
  const ljob *l = &st->jobs[j->idx];
  int g, lab;

  if (b == 0)
    return free > MAX_SHARE_GPUS;
  g = (b - 1) / (NLABELS + 1) + 1;
  lab = (b - 1) % (NLABELS + 1);
  if (free >= g && g < st->place_fail)
    return 1;
  if (lab == NLABELS)
    return 0;
  for (int h = 0; h + lab <= 2; h++) {
    int k = (g - 1) * NLABELS + h;
    if (st->hs[vc * NH + k].n > 0 && l->prio < st->pf[k])
      return 1;
  }
  return 0;
}

/* Whether an exclusive placement of j may still succeed in this pass:
 * not if a job of as many GPUs (or, within one node, of fewer) already
 * failed, since placement only gets harder until GPUs are freed. */
static int placeable(const lstate *st, const sm_sim_job *j) {
  if (j->gpus <= MAX_SHARE_GPUS)
    return j->gpus < st->place_fail;
  for (int i = 0; i < st->nbig; i++)
    if (st->big_fail[i] == j->gpus)
      return 0;
  return 1;
}

static int node_before(const sm__onode *a, const sm__onode *b) {
  if (a->k1 != b->k1)
    return a->k1 < b->k1;
  if (a->k2 != b->k2)
    return a->k2 < b->k2;
  return a->job->idx < b->job->idx;
}

/* First node of q that sorts after the key (k1, k2, idx). */
static sm__onode *seek_after(const sm__oset *q, double k1, double k2,
                             uint32_t idx) {
  sm__onode *x = q->head;

  for (int lv = q->level - 1; lv >= 0; lv--)
    for (;;) {
      sm__onode *n = x->next[lv];
      if (n == NULL || n->k1 > k1 ||
          (n->k1 == k1 && (n->k2 > k2 || (n->k2 == k2 && n->job->idx > idx))))
        break;
      x = n;
    }
  return x->next[0];
}

/* Starts j on GPUs of its own; 1 when it started (then it runs alone and
 * may host a guest), 0 when there is no room. */
static int start_alone(sm_sim *s, lstate *st, sm_sim_job *j) {
  ljob *l = &st->jobs[j->idx];

  if (!sm_sim_start(s, j))
    return 0;
  l->stage = L_RUN;
  l->base_rate = j->rate;
  l->start_work = j->work_left;
  l->t_start = sm_sim_now(s);
  l->seq = ++st->seq;
  host_add(s, st, j);
  return 1;
}

/* One pass of Lucid's scheduler over a VC's queue, in priority order:
 * every job is tried once.  The queue is split into buckets (GPU count,
 * sharing score) merged by priority, and a bucket none of whose jobs can
 * start is skipped: the outcome is that of trying every job in turn. */
static void main_pass(sm_sim *s, lstate *st, int vc) {
  sm__onode *cur[NB];

  for (int b = 0; b < NB; b++)
    cur[b] = sm__oset_first(&st->pq[vc * NB + b]);
  for (int h = 0; h < NH; h++)
    st->pf[h] = INFINITY;
  st->place_fail = INT32_MAX;
  st->nbig = 0;
  for (;;) {
    int free = sm_sim_vc_free(s, vc), best = -1, ok;
    sm__onode *n;
    sm_sim_job *j;
    ljob *l;
    double k1, k2;
    uint32_t idx;
    for (int b = 0; b < NB; b++)
      if (cur[b] != NULL && live(st, vc, b, cur[b]->job, free) &&
          (best < 0 || node_before(cur[b], cur[best])))
        best = b;
    if (best < 0)
      break;
    n = cur[best];
    j = n->job;
    l = &st->jobs[j->idx];
    cur[best] = n->next[0];
    ok = try_pack(s, st, j);
    if (!ok && free >= j->gpus && placeable(st, j)) {
      if (start_alone(s, st, j)) {
        ok = 1;
      } else if (st->typed[vc] == 0 && j->gpus <= MAX_SHARE_GPUS) {
        st->place_fail = j->gpus;
      } else if (st->typed[vc] == 0 &&
                 st->nbig < (int)SM_ARRAY_LEN(st->big_fail)) {
        st->big_fail[st->nbig++] = j->gpus;
      }
    }
    if (!ok)
      continue;
    k1 = n->k1;
    k2 = n->k2;
    idx = j->idx;
    sm__oset_remove(&st->pq[vc * NB + best], n);
    st->typed[vc] -= j->gpu_type[0] != '\0';
    l->node = NULL;
    l->stage = L_RUN;
    /* Jobs before this one in buckets that could not start were tried
     * (and failed) before this start changed anything. */
    for (int b = 0; b < NB; b++)
      if (cur[b] != NULL &&
          (cur[b]->k1 < k1 ||
           (cur[b]->k1 == k1 &&
            (cur[b]->k2 < k2 || (cur[b]->k2 == k2 && cur[b]->job->idx < idx)))))
        cur[b] = seek_after(&st->pq[vc * NB + b], k1, k2, idx);
  }
}

static int cmp_node(const void *a, const void *b) {
  const sm__onode *x = *(sm__onode *const *)a, *y = *(sm__onode *const *)b;
  return node_before(x, y) ? -1 : node_before(y, x) ? 1 : 0;
}

/* The same pass done the plain way, every queued job tried in priority
 * order with no shortcut (lucid.naive_pass=1): the reference the tests
 * compare main_pass with. */
static void naive_pass(sm_sim *s, lstate *st, int vc) {
  size_t n = 0, k = 0;
  sm__onode **all;

  for (int b = 0; b < NB; b++)
    n += st->pq[vc * NB + b].n;
  if (n == 0)
    return;
  all = sm_malloc(n * sizeof(*all));
  if (all == NULL) {
    sm_sim_note(s, "lucid: out of memory in a scheduling pass");
    return;
  }
  for (int b = 0; b < NB; b++)
    for (sm__onode *x = sm__oset_first(&st->pq[vc * NB + b]); x != NULL;
         x = x->next[0])
      all[k++] = x;
  qsort(all, n, sizeof(*all), cmp_node);
  for (size_t i = 0; i < n; i++) {
    sm_sim_job *j = all[i]->job;
    ljob *l = &st->jobs[j->idx];
    int ok;
    for (int h = 0; h < NH; h++)
      st->pf[h] = INFINITY;
    ok = try_pack(s, st, j);
    if (!ok && start_alone(s, st, j))
      ok = 1;
    if (ok) {
      sm__oset_remove(&st->pq[vc * NB + l->qb], all[i]);
      st->typed[vc] -= j->gpu_type[0] != '\0';
      l->node = NULL;
      l->stage = L_RUN;
    }
  }
  sm_free(all);
}

static void lucid_schedule(sm_sim *s, void *state, int vc) {
  lstate *st = state;

  if (vc == st->prof_vc)
    profiler_pass(s, st);
  else if (st->naive)
    naive_pass(s, st, vc);
  else
    main_pass(s, st, vc);
}

static void lucid_finalize(sm_sim *s, void *state) {
  lstate *st = state;

  SM__FIG_ADD(s, profiled, (double)st->profiled);
  SM__FIG_ADD(s, ended_in_profiler, (double)st->prof_ended);
  SM__FIG_ADD(s, profiler_gpu_h, st->prof_gpu_s / 3600);
  SM__FIG_ADD(s, not_profiled_too_large, (double)st->unprofiled);
  SM__FIG_ADD(s, packed_pairs, (double)st->packs);
  SM__FIG_ADD(s, packed_pairs_measured, (double)st->packs_measured);
  if (st->semantic) {
    SM__FIG_ADD(s, profiles_skipped, (double)st->skipped);
    SM__FIG_ADD(s, profiling_gpu_h_saved, st->saved_gpu_s / 3600);
    SM__FIG_ADD(s, hits_with_wrong_score, (double)st->mislabeled);
    SM__FIG_ADD(s, tracker_checks, (double)st->checks);
    SM__FIG_ADD(s, checks_skipped_untracked, (double)st->untracked_skips);
    SM__FIG_ADD(s, evictions, (double)st->evictions);
    sm__facts_report(st->facts, s);
  } else {
    sm_sim_note(s, "profiles and co-location: %s",
                sm__coloc_source(sm__facts_coloc(st->facts)));
  }
}

/* ==== Registration ==== */

static int lucid_sm_init(sm_sim *s, void **state, sm_err *err) {
  return lucid_init_common(s, state, 1, err);
}

/* What the two policies share. */
#define LUCID_CALLS                                                            \
  .release = lucid_release, .arrive = lucid_arrive, .finish = lucid_finish,    \
  .timer = lucid_timer, .schedule = lucid_schedule, .finalize = lucid_finalize

const sm_sim_policy sm__policy_lucid = {
    .name = "lucid",
    .summary = "Lucid: profiler, estimate x GPUs, packing by sharing score "
               "(ASPLOS'23)",
    .flags = SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_PROFILER,
    .init = lucid_init,
    LUCID_CALLS};

const sm_sim_policy sm__policy_lucid_schedmate = {
    .name = "lucid+schedmate",
    .summary = "Lucid + SchedMate: history hits skip the profiler and give "
               "the estimate; harmful packing undone",
    .flags =
        SM_SIM_POLICY_SEMANTIC | SM_SIM_POLICY_FACTS | SM_SIM_POLICY_PROFILER,
    .init = lucid_sm_init,
    LUCID_CALLS};
