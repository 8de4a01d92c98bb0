/* run.c - the run channel: each running job's StdOut is followed by the
 * Tracker (a first backward scan, then only the bytes appended since), so
 * the agent knows step, total steps, loss, step time and throughput of
 * every job without any help from the job.
 *
 * Interference: when a job starts on a node, every job already running
 * there remembers its rate (throughput, or 1 / step time) of the pass
 * before.  Once the Tracker's window holds only samples from after the
 * join (the step counter moved on by a full window, or two passes went
 * by when the log has no counter), a rate below (1 - slowdown) x that
 * baseline is flagged: audited, counted, shown in the status and metrics
 * files.  The watch ends when the joining job leaves the node.
 *
 * A log that cannot be read (not there yet, vanished, not a regular file)
 * is retried with back-off; it never stops the agent. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm_int.h"

#define MAX_RETRY_S 300.0

void sm__run_forget(sm__sjob *j) {
  sm_tracker_free(j->trk);
  j->trk = NULL;
  sm_free(j->trk_path);
  j->trk_path = NULL;
  for (int i = 0; i < j->n_nodes; i++)
    sm_free(j->nodes[i]);
  sm_free(j->nodes);
  j->nodes = NULL;
  j->n_nodes = 0;
  j->trk_status = 0;
  j->trk_fails = 0;
  j->trk_retry = 0;
  j->rate = NAN;
  j->base_rate = NAN;
  j->joined_by = 0;
  j->flagged = 0;
}

static double rate_of(const sm_track_result *r) {
  if (!r->ok)
    return NAN;
  if (isfinite(r->throughput) && r->throughput > 0)
    return r->throughput;
  if (isfinite(r->step_time_s) && r->step_time_s > 0)
    return 1.0 / r->step_time_s;
  return NAN;
}

static void copy_nodes(sm__sjob *j, const sm_slurm_job *sj) {
  for (int i = 0; i < j->n_nodes; i++)
    sm_free(j->nodes[i]);
  sm_free(j->nodes);
  j->nodes = NULL;
  j->n_nodes = 0;
  if (sj->n_nodes == 0)
    return;
  j->nodes = sm_calloc((size_t)sj->n_nodes, sizeof(char *));
  if (j->nodes == NULL)
    return;
  for (int i = 0; i < sj->n_nodes; i++)
    if ((j->nodes[j->n_nodes] = sm_strdup(sj->nodes[i])) != NULL)
      j->n_nodes++;
}

/* Reads the log once more (or for the first time). */
static void follow(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j) {
  sm_err err = {0};
  sm__fsid id;
  int rc;

  if (sj->std_out == NULL)
    return;
  if (j->trk != NULL &&
      (j->trk_run != sj->restarts || strcmp(j->trk_path, sj->std_out) != 0)) {
    /* A new run (requeued) or another file: start over. */
    sm_tracker_free(j->trk);
    j->trk = NULL;
  }
  if (j->trk == NULL) {
    sm_track_opts to = {0};
    if (sm__wall() < j->trk_retry)
      return;
    to.samples = a->o.track_samples;
    j->trk = sm_tracker_new(&to);
    if (j->trk == NULL)
      return;
    sm_free(j->trk_path);
    j->trk_path = sm_strdup(sj->std_out);
    j->trk_run = sj->restarts;
    sm__fsid_enter(&id, sj->uid);
    rc = sm_tracker_scan(j->trk, sj->std_out, &j->tr, &err);
    sm__fsid_leave(&id);
  } else {
    /* A poll may reopen the path after a rotation. */
    sm__fsid_enter(&id, sj->uid);
    rc = sm_tracker_poll(j->trk, &j->tr, &err);
    sm__fsid_leave(&id);
  }
  if (rc < 0) {
    double wait =
        a->o.interval_s * (double)(1 << (j->trk_fails < 8 ? j->trk_fails : 8));
    if (wait > MAX_RETRY_S)
      wait = MAX_RETRY_S;
    if (j->trk_status != -1)
      sm__log(a, SM_SLURM_INFO, "job %u: %s (retrying)", (unsigned)sj->id,
              err.msg);
    snprintf(j->trk_error, sizeof(j->trk_error), "%s", err.msg);
    j->trk_status = -1;
    j->trk_fails++;
    j->trk_retry = sm__wall() + wait;
    sm_tracker_free(j->trk);
    j->trk = NULL;
    return;
  }
  j->trk_fails = 0;
  j->trk_status = j->tr.ok ? 1 : 2;
}

/* Did job k start on a node of j in this pass? */
static const char *joined_node(const sm_slurm_job *sj, const sm_slurm_job *sk) {
  for (int x = 0; x < sj->n_nodes; x++)
    for (int y = 0; y < sk->n_nodes; y++)
      if (strcmp(sj->nodes[x], sk->nodes[y]) == 0)
        return sj->nodes[x];
  return NULL;
}

static int running_on(const sm_slurm_job *jobs, int n, uint32_t id,
                      const char *node) {
  for (int i = 0; i < n; i++) {
    if (jobs[i].id != id || jobs[i].state != SM_SJ_RUNNING)
      continue;
    for (int k = 0; k < jobs[i].n_nodes; k++)
      if (strcmp(jobs[i].nodes[k], node) == 0)
        return 1;
  }
  return 0;
}

static void check_slowdown(sm_slurm_agent *a, const sm_slurm_job *sj,
                           sm__sjob *j) {
  int settled;
  sm_buf b;
  sm_jw w;

  if (j->joined_by == 0 || !isfinite(j->base_rate) || !isfinite(j->rate))
    return;
  j->slow_ratio = j->rate / j->base_rate;
  settled = j->tr.has_step
                ? j->tr.step - j->base_step >=
                      (a->o.track_samples > 0 ? a->o.track_samples : 10)
                : 1;
  if (!settled || j->flagged || j->slow_ratio >= 1.0 - a->o.slowdown)
    return;
  j->flagged = 1;
  sm__count(a, &a->cnt.interference, 1);
  sm__log(a, SM_SLURM_WARN,
          "job %u: throughput down to %.0f %% after job %u joined node %s",
          (unsigned)sj->id, 100 * j->slow_ratio, (unsigned)j->joined_by,
          j->joined_node);
  sm__audit_begin(a, &w, &b, "run", "interference", sj->id);
  sm_jw_key(&w, "node");
  sm_jw_str(&w, j->joined_node);
  sm_jw_key(&w, "joined_by");
  sm_jw_int(&w, j->joined_by);
  sm_jw_key(&w, "base_rate");
  sm_jw_num(&w, j->base_rate);
  sm_jw_key(&w, "rate");
  sm_jw_num(&w, j->rate);
  sm_jw_key(&w, "ratio");
  sm_jw_num(&w, round(j->slow_ratio * 1000) / 1000);
  sm_jw_key(&w, "unit");
  sm_jw_str(&w, isfinite(j->tr.throughput) && j->tr.throughput > 0
                    ? j->tr.tp_unit
                    : "steps/s");
  sm__audit_end(a, &w, &b, 0, "flagged");
}

void sm__run_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n) {
  /* 1. Jobs that started in this pass join their nodes' other jobs. */
  for (int i = 0; i < n; i++) {
    const sm_slurm_job *sk = &jobs[i];
    const sm__sjob *k = sm__job_find(a, sk->id);
    if (sk->state != SM_SJ_RUNNING || k == NULL || k->state == SM_SJ_RUNNING)
      continue;
    for (int x = 0; x < n; x++) {
      const sm_slurm_job *sj = &jobs[x];
      sm__sjob *j;
      const char *node;
      if (x == i || sj->state != SM_SJ_RUNNING)
        continue;
      j = sm__job_find(a, sj->id);
      if (j == NULL || j->state != SM_SJ_RUNNING || j->joined_by != 0 ||
          !isfinite(j->rate) || (node = joined_node(sj, sk)) == NULL)
        continue;
      j->base_rate = j->rate;
      j->joined_by = sk->id;
      snprintf(j->joined_node, sizeof(j->joined_node), "%s", node);
      j->base_step = j->tr.has_step ? j->tr.step : 0;
      j->flagged = 0;
    }
  }
  /* 2. Follow every running job's log. */
  for (int i = 0; i < n; i++) {
    const sm_slurm_job *sj = &jobs[i];
    sm__sjob *j = sm__job_find(a, sj->id);
    if (j == NULL || sj->state != SM_SJ_RUNNING)
      continue;
    if (j->state != SM_SJ_RUNNING || j->n_nodes != sj->n_nodes) {
      copy_nodes(j, sj);
      j->started = sj->start_time;
    }
    follow(a, sj, j);
    j->rate = j->trk_status == 1 ? rate_of(&j->tr) : NAN;
    if (j->joined_by != 0 &&
        !running_on(jobs, n, j->joined_by, j->joined_node)) {
      j->joined_by = 0;
      j->base_rate = NAN;
      j->flagged = 0;
    }
    check_slowdown(a, sj, j);
  }
}

void sm__run_final(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j) {
  if (j->trk != NULL && j->trk_run == sj->restarts) {
    sm_err err = {0};
    sm__fsid id;
    int rc;
    sm__fsid_enter(&id, sj->uid);
    rc = sm_tracker_poll(j->trk, &j->tr, &err);
    sm__fsid_leave(&id);
    if (rc >= 0)
      j->trk_status = j->tr.ok ? 1 : 2;
    return;
  }
  if (sj->std_out == NULL)
    return;
  j->trk_retry = 0;
  follow(a, sj, j);
}

double sm__run_throughput(const sm__sjob *j) {
  return j->trk_status == 1 && isfinite(j->tr.throughput) ? j->tr.throughput
                                                          : NAN;
}

void sm__run_progress(const sm__sjob *j, sm_jw *w) {
  sm_buf b;

  if (j->trk_status != 1 && j->trk_status != 2) {
    sm_jw_null(w);
    return;
  }
  sm_buf_init(&b, 1 << 16);
  if (sm_track_result_json(&j->tr, &b) == 0)
    sm_jw_raw(w, sm_buf_str(&b));
  else
    sm_jw_null(w);
  sm_buf_release(&b);
}

void sm__run_json(const sm__sjob *j, sm_jw *w) {
  static const char *const st[] = {"unreadable", "not_followed", "ok",
                                   "missing"};
  sm_jw_key(w, "nodes");
  sm_jw_arr_begin(w);
  for (int i = 0; i < j->n_nodes; i++)
    sm_jw_str(w, j->nodes[i]);
  sm_jw_arr_end(w);
  sm_jw_key(w, "log");
  if (j->trk_path)
    sm_jw_str(w, j->trk_path);
  else
    sm_jw_null(w);
  sm_jw_kv_str(w, "log_status", st[j->trk_status + 1]);
  if (j->trk_status == -1) {
    sm_jw_kv_str(w, "log_error", j->trk_error);
  }
  sm_jw_key(w, "progress");
  sm__run_progress(j, w);
  sm_jw_key(w, "slowdown");
  if (j->joined_by != 0 && isfinite(j->base_rate)) {
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "joined_by", j->joined_by);
    sm_jw_kv_str(w, "node", j->joined_node);
    sm_jw_kv_num(w, "base_rate", j->base_rate);
    sm_jw_kv_num(w, "rate", j->rate);
    sm_jw_kv_num(w, "ratio",
                 isfinite(j->rate) ? round(j->slow_ratio * 1000) / 1000 : NAN);
    sm_jw_kv_bool(w, "flagged", j->flagged);
    sm_jw_obj_end(w);
  } else {
    sm_jw_null(w);
  }
}

/* ==== Prometheus ==== */

static void labels(sm_buf *b, const sm__sjob *j) {
  sm_buf_addf(b, "{job=\"%u\",name=\"", (unsigned)j->id);
  sm_prom_label(b, j->name ? j->name : "");
  sm_buf_adds(b, "\",node=\"");
  sm_prom_label(b, j->n_nodes > 0 ? j->nodes[0] : "");
  sm_buf_adds(b, "\"");
}

void sm__run_prom(sm_slurm_agent *a, sm_buf *b) {
  enum { STEP, TOTAL, STIME, TPUT, LOSS, MISSING, SLOW, EST, NFAM };
  static const char *const fam[NFAM][3] = {
      {"schedmate_job_step", "gauge", "Newest training step in the log."},
      {"schedmate_job_total_steps", "gauge", "Total steps the log prints."},
      {"schedmate_job_step_time_seconds", "gauge",
       "Median time per step over the newest samples."},
      {"schedmate_job_throughput", "gauge",
       "Newest throughput in the log (unit in the label)."},
      {"schedmate_job_loss", "gauge", "Newest training loss."},
      {"schedmate_job_progress_missing", "gauge",
       "1 when the log shows no training progress."},
      {"schedmate_job_slowdown_ratio", "gauge",
       "Rate now over the rate before another job joined the node."},
      {"schedmate_job_estimate_seconds", "gauge",
       "Expected duration from similar past jobs."}};

  for (int f = 0; f < NFAM; f++) {
    sm_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", fam[f][0], fam[f][2],
                fam[f][0], fam[f][1]);
    for (int i = 0; i < a->n_jobs; i++) {
      const sm__sjob *j = &a->jobs[i];
      const sm_track_result *r = &j->tr;
      double v = NAN;
      if (j->seen != a->pass || j->state != SM_SJ_RUNNING)
        continue;
      switch (f) {
      case STEP:
        v = j->trk_status == 1 && r->has_step ? (double)r->step : NAN;
        break;
      case TOTAL:
        v = j->trk_status == 1 && r->has_total ? (double)r->total_steps : NAN;
        break;
      case STIME:
        v = j->trk_status == 1 ? r->step_time_s : NAN;
        break;
      case TPUT:
        v = j->trk_status == 1 ? r->throughput : NAN;
        break;
      case LOSS:
        v = j->trk_status == 1 ? r->loss : NAN;
        break;
      case MISSING:
        v = j->trk_status == 2 ? 1 : j->trk_status == 1 ? 0 : NAN;
        break;
      case SLOW:
        v = j->joined_by && isfinite(j->base_rate) ? j->slow_ratio : NAN;
        break;
      case EST:
        v = j->has_est ? j->est_s : NAN;
        break;
      }
      if (!isfinite(v))
        continue;
      sm_buf_adds(b, fam[f][0]);
      labels(b, j);
      if (f == TPUT) {
        sm_buf_adds(b, ",unit=\"");
        sm_prom_label(b, r->tp_unit);
        sm_buf_adds(b, "\"");
      }
      if (f == SLOW)
        sm_buf_addf(b, ",joined_by=\"%u\"", (unsigned)j->joined_by);
      sm_buf_addf(b, "} %.9g\n", v);
    }
  }
}
