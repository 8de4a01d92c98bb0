/* metrics.c - the outcome of a run: headline figures (JCT and queueing
 * statistics, makespan, utilisation), the JSON summary of docs/design.md
 * section 3, the per-job CSV and the accessors of sm_sim_result.
 *
 * Definitions (also in docs/simulator.md):
 *   JCT        end - submit, over every job that ended (any final state);
 *   queue      first start - submit, over every job that started;
 *   wait       all time spent pending, including after preemptions;
 *   p99        nearest rank: the ceil(0.99 n)-th smallest value;
 *   makespan   last end - first submission;
 *   util       GPU-seconds held / (GPUs x makespan). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p) {
  size_t k;

  if (n == 0)
    return NAN;
  k = (size_t)ceil(p * (double)n);
  if (k < 1)
    k = 1;
  return v[k - 1];
}

static double median_sorted(const double *v, size_t n) {
  if (n == 0)
    return NAN;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What the run was: policy, trace, cluster, the settings it read and
 * ignored, its notes.  0 or SM_ENOMEM. */
static int describe(sm_sim_result *r, const sm_sim *s) {
  r->trace_name = sm_strdup(s->trace->name);
  if (r->trace_name == NULL)
    return SM_ENOMEM;
  snprintf(r->policy, sizeof(r->policy), "%s", s->pol->name);
  snprintf(r->semantic, sizeof(r->semantic), "%s",
           s->cfg.semantic ? s->cfg.semantic : "off");
  snprintf(r->format, sizeof(r->format), "%s",
           sm_sim_format_name(s->trace->format));
  snprintf(r->placement, sizeof(r->placement), "%s",
           s->cfg.placement == SM_SIM_PLACE_FIRST_FIT ? "first-fit"
                                                      : "consolidate");
  /* Only the settings the run read are its parameters; the others are
   * kept apart (a policy that does not use a setting is not configured
   * by it). */
  for (int i = 0; i < s->cfg.nparams; i++) {
    const sm_sim_setting *st = &s->cfg.params[i];
    int read = sm__params_read_key(s->par, st->key, st->keylen);
    if (sm__notes_add(read ? &r->params : &r->ignored, "%.*s=%s",
                      (int)st->keylen, st->key, st->value) != 0)
      return SM_ENOMEM;
  }
  if (strcmp(r->semantic, "on") == 0)
    snprintf(r->facts, sizeof(r->facts), "%s",
             s->par->facts ? s->par->facts : "history");
  snprintf(r->cluster, sizeof(r->cluster), "%s", s->base_cluster);
  snprintf(r->cluster_origin, sizeof(r->cluster_origin), "%s", s->cl->origin);
  r->carved_nodes = s->carved_nodes;
  snprintf(r->dropped_why, sizeof(r->dropped_why), "%s", s->dropped_why);
  snprintf(r->carved_from, sizeof(r->carved_from), "%s", s->carved_from);
  if (sm__notes_copy(&r->notes, &s->trace->notes) != 0 ||
      sm__notes_copy(&r->notes, &s->notes) != 0)
    return SM_ENOMEM;
  if (s->series_full &&
      sm__notes_add(&r->notes, "time series truncated at %zu points",
                    s->ser.n) != 0)
    return SM_ENOMEM;
  r->preempt_small = s->cfg.preempt_small_s;
  r->preempt_large = s->cfg.preempt_large_s;
  r->overhead_gpus = s->cfg.overhead_gpus;
  r->seed = s->cfg.seed;
  return 0;
}

/* The sums over the jobs that the headline figures come from. */
typedef struct tally {
  double *queue, *wait;    /* first-start delays, all time pending */
  size_t nq, nw;           /* their counts */
  double jsum, qsum, wsum; /* sums of JCT, queue, wait */
  double first, last;      /* first submission, last end */
  double gsec, span;       /* GPU-time of the jobs, last submit + run */
} tally;

/* Counts job j into the summary m, the JCTs of r and the tally. */
static void count_job(sm_sim_result *r, sm_sim_summary *m, tally *y,
                      const sm_sim_job *j) {
  m->jobs++;
  y->first = SM_MIN(y->first, j->submit);
  y->gsec += j->duration * j->gpus;
  y->span = SM_MAX(y->span, j->submit + j->duration);
  m->preemptions += (size_t)j->preemptions;
  m->restarts += (size_t)j->restarts;
  if (!isnan(j->first_start)) {
    y->queue[y->nq++] = j->first_start - j->submit;
    y->qsum += j->first_start - j->submit;
  }
  if (j->status != SM_SIM_JOB_DONE) {
    m->unfinished++;
    return;
  }
  if (j->final_state == SM_SIM_END_CANCELED)
    m->canceled++;
  else if (j->final_state == SM_SIM_END_FAILED)
    m->failed++;
  else
    m->completed++;
  r->jct[r->njct++] = j->end - j->submit;
  y->jsum += j->end - j->submit;
  y->wsum += j->queued;
  y->wait[y->nw++] = j->queued;
  y->last = SM_MAX(y->last, j->end);
}

/* The headline figures from the tally and the run's counters. */
static void summarize(sm_sim_result *r, const sm_sim *s, tally *y,
                      double wall) {
  sm_sim_summary *m = &r->sum;
  double span;

  qsort(r->jct, r->njct, sizeof(double), cmp_double);
  qsort(y->queue, y->nq, sizeof(double), cmp_double);
  qsort(y->wait, y->nw, sizeof(double), cmp_double);
  m->policy = r->policy;
  m->semantic = r->semantic;
  m->trace = r->trace_name;
  m->synthetic = s->trace->synthetic;
  m->dropped = s->dropped;
  m->avg_jct_s = r->njct ? y->jsum / (double)r->njct : NAN;
  m->median_jct_s = median_sorted(r->jct, r->njct);
  m->p99_jct_s = pct(r->jct, r->njct, 0.99);
  m->avg_queue_s = y->nq ? y->qsum / (double)y->nq : NAN;
  m->median_queue_s = median_sorted(y->queue, y->nq);
  m->p99_queue_s = pct(y->queue, y->nq, 0.99);
  m->avg_wait_s = y->nw ? y->wsum / (double)y->nw : NAN;
  m->median_wait_s = median_sorted(y->wait, y->nw);
  m->p99_wait_s = pct(y->wait, y->nw, 0.99);
  m->facts = r->facts;
  m->makespan_s = r->njct ? y->last - y->first : 0;
  m->gpus = s->cl->gpus;
  m->nodes = s->cl->nnodes;
  m->vcs = s->cl->nvcs;
  span = y->span - (y->first < INFINITY ? y->first : 0);
  m->offered_load = span > 0 && m->gpus > 0 ? y->gsec / (span * m->gpus) : 0;
  r->offered_load = m->offered_load;
  m->avg_util = m->makespan_s > 0
                    ? s->busy_integral / ((double)m->gpus * m->makespan_s)
                    : 0;
  m->peak_pending = s->peak_pending;
  m->events = s->events;
  m->wall_s = wall;
  m->jobs_per_s = wall > 0 ? (double)m->jobs / wall : 0;
}

/* Keeps the trace alive (the jobs point at its strings) and takes over
 * the run's memory: jobs, parameters, figures, series.  0 or
 * SM_ENOMEM. */
static int take_over(sm_sim_result *r, sm_sim *s) {
  r->trace = (sm_sim_trace *)s->trace;
  __atomic_add_fetch(&r->trace->refs, 1, __ATOMIC_ACQ_REL);
  r->arena = s->arena;
  sm_arena_init(&s->arena, 0, 0);
  r->par = s->par; /* in the arena */
  s->par = NULL;
  r->figs = s->figs; /* the same */
  s->figs = NULL;
  r->jobs = s->jobs;
  r->njobs = s->njobs;
  r->ser = s->ser;
  memset(&s->ser, 0, sizeof(s->ser));
  return sm__params_own(r->par, &r->arena);
}

int sm__result_build(sm_sim *s, double wall, sm_sim_result **out, sm_err *err) {
  sm_sim_result *r = sm_calloc(1, sizeof(*r));
  size_t cap = s->njobs ? s->njobs : 1;
  tally y;
  int rc = SM_ENOMEM;

  memset(&y, 0, sizeof(y));
  y.first = INFINITY;
  if (r == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  r->jct = sm_malloc(cap * sizeof(double));
  y.queue = sm_malloc(cap * sizeof(double));
  y.wait = sm_malloc(cap * sizeof(double));
  if (r->jct != NULL && y.queue != NULL && y.wait != NULL)
    rc = describe(r, s);
  if (rc == 0) {
    for (size_t i = 0; i < s->njobs; i++)
      if (s->jobs[i].status != SM_SIM_JOB_DROPPED)
        count_job(r, &r->sum, &y, &s->jobs[i]);
    summarize(r, s, &y, wall);
    rc = take_over(r, s);
  }
  sm_free(y.queue);
  sm_free(y.wait);
  if (rc != 0) {
    sm_sim_result_free(r);
    return sm_err_set(err, rc, "out of memory");
  }
  *out = r;
  return 0;
}

void sm_sim_result_free(sm_sim_result *r) {
  if (r == NULL)
    return;
  sm__params_release(r->par); /* before its arena */
  sm__figures_release(r->figs);
  sm_arena_discard(&r->arena);
  sm_free(r->trace_name);
  sm_free(r->jct);
  sm__series_release(&r->ser);
  sm__notes_release(&r->notes);
  sm__notes_release(&r->params);
  sm__notes_release(&r->ignored);
  sm_sim_trace_free(r->trace);
  sm_free(r);
}

const sm_sim_summary *sm_sim_result_summary(const sm_sim_result *r) {
  return &r->sum;
}

size_t sm_sim_result_note_count(const sm_sim_result *r) {
  return r->notes.n;
}

const char *sm_sim_result_note(const sm_sim_result *r, size_t i) {
  return i < r->notes.n ? r->notes.v[i] : NULL;
}

size_t sm_sim_result_job_count(const sm_sim_result *r) {
  return r->njobs;
}

const sm_sim_job *sm_sim_result_job(const sm_sim_result *r, size_t i) {
  return i < r->njobs ? &r->jobs[i] : NULL;
}

size_t sm_sim_result_series(const sm_sim_result *r, const double **t,
                            const int **busy, const int **pending) {
  if (t)
    *t = r->ser.t;
  if (busy)
    *busy = r->ser.busy;
  if (pending)
    *pending = r->ser.pending;
  return r->ser.n;
}

/* ==== JSON ==== */

void sm_sim_result_json(const sm_sim_result *r, sm_jw *w) {
  const sm_sim_summary *m = &r->sum;

  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "policy", r->policy);
  sm_jw_kv_str(w, "semantic", r->semantic);
  sm_jw_kv_str(w, "trace", r->trace_name);
  sm_jw_kv_str(w, "format", r->format);
  sm_jw_kv_bool(w, "synthetic", m->synthetic);
  sm_jw_kv_int(w, "jobs", (long long)m->jobs);
  sm_jw_kv_int(w, "completed", (long long)m->completed);
  sm_jw_kv_int(w, "canceled", (long long)m->canceled);
  sm_jw_kv_int(w, "failed", (long long)m->failed);
  sm_jw_kv_int(w, "unfinished", (long long)m->unfinished);
  sm_jw_kv_int(w, "dropped", (long long)m->dropped);
  sm_jw_kv_num(w, "avg_jct_s", m->avg_jct_s);
  sm_jw_kv_num(w, "median_jct_s", m->median_jct_s);
  sm_jw_kv_num(w, "p99_jct_s", m->p99_jct_s);
  sm_jw_kv_num(w, "avg_queue_s", m->avg_queue_s);
  sm_jw_kv_num(w, "median_queue_s", m->median_queue_s);
  sm_jw_kv_num(w, "p99_queue_s", m->p99_queue_s);
  sm_jw_kv_num(w, "avg_wait_s", m->avg_wait_s);
  sm_jw_kv_num(w, "median_wait_s", m->median_wait_s);
  sm_jw_kv_num(w, "p99_wait_s", m->p99_wait_s);
  sm_jw_kv_num(w, "offered_load", m->offered_load);
  sm_jw_key(w, "facts");
  if (r->facts[0])
    sm_jw_str(w, r->facts);
  else
    sm_jw_null(w);
  sm_jw_kv_num(w, "makespan_s", m->makespan_s);
  sm_jw_kv_num(w, "avg_util", m->avg_util);
  sm_jw_kv_int(w, "peak_pending", (long long)m->peak_pending);
  sm_jw_kv_int(w, "preemptions", (long long)m->preemptions);
  sm_jw_kv_int(w, "restarts", (long long)m->restarts);
  sm_jw_kv_int(w, "events", (long long)m->events);
  sm_jw_kv_num(w, "wall_s", m->wall_s);
  sm_jw_kv_num(w, "jobs_per_s", m->jobs_per_s);
  sm_jw_key(w, "cluster");
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "description", r->cluster);
  sm_jw_kv_int(w, "nodes", m->nodes);
  sm_jw_kv_int(w, "gpus", m->gpus);
  sm_jw_kv_int(w, "vcs", m->vcs);
  sm_jw_kv_str(w, "placement", r->placement);
  sm_jw_kv_str(w, "origin", r->cluster_origin);
  sm_jw_kv_int(w, "profiler_nodes", r->carved_nodes);
  sm_jw_obj_end(w);
  sm_jw_key(w, "preempt_overhead_s");
  sm_jw_obj_begin(w);
  sm_jw_kv_num(w, "small", r->preempt_small);
  sm_jw_kv_num(w, "large", r->preempt_large);
  sm_jw_kv_int(w, "boundary_gpus", r->overhead_gpus);
  sm_jw_obj_end(w);
  sm_jw_kv_int(w, "seed", (long long)r->seed);
  sm_jw_key(w, "params");
  sm_jw_obj_begin(w);
  for (size_t i = 0; i < r->params.n; i++) {
    const char *kv = r->params.v[i], *eq = strchr(kv, '=');
    size_t klen = (size_t)(eq - kv);
    char key[96];
    int later = 0;
    /* The last setting of a key wins, as in sm_sim_param_str. */
    for (size_t k = i + 1; k < r->params.n && !later; k++)
      later = strncmp(r->params.v[k], kv, klen + 1) == 0;
    if (later)
      continue;
    snprintf(key, sizeof(key), "%.*s", (int)klen, kv);
    sm_jw_key(w, key);
    sm_jw_str(w, eq + 1);
  }
  sm_jw_obj_end(w);
  sm_jw_key(w, "params_ignored");
  sm_jw_arr_begin(w);
  for (size_t i = 0; i < r->ignored.n; i++)
    sm_jw_str(w, r->ignored.v[i]);
  sm_jw_arr_end(w);
  sm_jw_key(w, "stats");
  sm_jw_obj_begin(w);
  for (size_t i = 0; i < sm_sim_result_stat_count(r); i++) {
    double v;
    sm_jw_key(w, sm_sim_result_stat(r, i, &v));
    sm_jw_num(w, v);
  }
  sm_jw_obj_end(w);
  sm_jw_key(w, "notes");
  sm_jw_arr_begin(w);
  for (size_t i = 0; i < r->notes.n; i++)
    sm_jw_str(w, r->notes.v[i]);
  sm_jw_arr_end(w);
  sm_jw_kv_str(w, "invariants", "ok");
  sm_jw_obj_end(w);
}

/* ==== Per-job CSV ==== */

static int csv_str(sm_buf *b, const char *s) {
  int rc = 0;

  if (strpbrk(s, ",\"\n\r") == NULL)
    return sm_buf_adds(b, s);
  rc |= sm_buf_addc(b, '"');
  for (; *s && rc == 0; s++) {
    if (*s == '"')
      rc |= sm_buf_addc(b, '"');
    rc |= sm_buf_addc(b, *s);
  }
  rc |= sm_buf_addc(b, '"');
  return rc ? SM_ENOMEM : 0;
}

/* Seconds with millisecond precision, trailing zeros dropped; empty for
 * NaN. */
static int csv_num(sm_buf *b, double v) {
  char tmp[64];
  int k;
  size_t n;

  if (isnan(v))
    return 0;
  if (fabs(v) >= 1e15)
    k = snprintf(tmp, sizeof(tmp), "%.17g", v);
  else
    k = snprintf(tmp, sizeof(tmp), "%.3f", v);
  if (k < 0 || (size_t)k >= sizeof(tmp))
    return SM_ERANGE;
  n = (size_t)k;
  if (strchr(tmp, '.') != NULL && strchr(tmp, 'e') == NULL) {
    while (n > 0 && tmp[n - 1] == '0')
      tmp[--n] = '\0';
    if (n > 0 && tmp[n - 1] == '.')
      tmp[--n] = '\0';
  }
  return sm_buf_adds(b, tmp);
}

static const char *status_name(int st) {
  switch (st) {
  case SM_SIM_JOB_DONE:
    return "done";
  case SM_SIM_JOB_DROPPED:
    return "dropped";
  case SM_SIM_JOB_RUNNING:
    return "running";
  case SM_SIM_JOB_DELAYED:
    return "delayed";
  case SM_SIM_JOB_PENDING:
    return "pending";
  default:
    return "future";
  }
}

int sm_sim_result_jobs_csv(const sm_sim_result *r, sm_buf *b) {
  int rc = sm_buf_adds(b, "job_id,line,vc,user,name,gpus,trace_gpus,"
                          "submit_s,start_s,end_s,duration_s,jct_s,"
                          "queue_s,wait_s,preemptions,restarts,"
                          "trace_state,final_state,status,workload,"
                          "profile,fingerprint\n");

  for (size_t i = 0; i < r->njobs && rc == 0; i++) {
    const sm_sim_job *j = &r->jobs[i];
    int done = j->status == SM_SIM_JOB_DONE;
    rc |= csv_str(b, j->id);
    rc |= sm_buf_addf(b, ",%d,", j->line);
    rc |= csv_str(b, j->vc_name);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_str(b, j->user);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_str(b, j->name);
    rc |= sm_buf_addf(b, ",%d,%d,", j->gpus, j->trace_gpus);
    rc |= csv_num(b, j->submit);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, j->first_start);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, j->end);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, j->duration);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, done ? j->end - j->submit : NAN);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, isnan(j->first_start) ? NAN : j->first_start - j->submit);
    rc |= sm_buf_addc(b, ',');
    rc |= csv_num(b, done ? j->queued : NAN);
    rc |= sm_buf_addf(b, ",%d,%d,%s,%s,%s,", j->preemptions, j->restarts,
                      sm_sim_end_name(j->end_state),
                      done ? sm_sim_end_name(j->final_state) : "",
                      status_name(j->status));
    rc |= csv_str(b, j->workload ? j->workload : "");
    rc |= sm_buf_addc(b, ',');
    rc |= csv_str(b, j->profile ? j->profile : "");
    if (j->fingerprint != 0)
      rc |= sm_buf_addf(b, ",%016llx\n", (unsigned long long)j->fingerprint);
    else
      rc |= sm_buf_adds(b, ",\n");
  }
  return rc ? SM_ENOMEM : 0;
}

const char *sm_sim_result_dropped_why(const sm_sim_result *r) {
  return r->dropped_why;
}

int sm_sim_result_reads_param(const sm_sim_result *r, const char *key) {
  return r->par != NULL && sm__params_read_key(r->par, key, strlen(key));
}

const char *sm_sim_result_cluster_origin(const sm_sim_result *r) {
  return r->cluster_origin;
}
