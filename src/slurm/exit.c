/* exit.c - the exit and write-back channels.
 *
 * Every run of a job (a job requeued N times has runs 0..N) that ended is
 * handled once: a FAILED or NODE_FAIL run has its log diagnosed (StdOut,
 * then StdErr when that is another file); the planner turns the diagnosis
 * into a plan behind its gates (infrastructure fault, located component,
 * confidence, isolation quota, retry cap; shadow mode); in enforce mode
 * the plan's steps are carried out: "isolate_node" drains the node with a
 * reason naming the fault, the job and the log line, and
 * "restart_from_checkpoint" requeues the job and makes it eligible at
 * once, so that it restarts elsewhere from its checkpoint.  Framework and
 * user errors are only reported: their root cause goes into the history
 * record, and they are never requeued.  Every decision is audited.
 *
 * Then the run goes into the history: real duration, end state
 * (completed, canceled, failed_user, failed_framework, failed_infra, or
 * failed when the cause is unknown), throughput, SM utilisation and GPU
 * memory with their provenance (gpu.c), and an "outcome" object with
 * Slurm's state, exit code, nodes, last progress, the diagnosis and the
 * GPU metrics.  A GPU the node's sampler saw lost under the run
 * (NVML_ERROR_GPU_IS_LOST) is diagnosed like a log line when the log
 * itself names no infrastructure fault.
 * A run already in the history (the agent was restarted) is skipped; a
 * log that cannot be read yet is retried a few times with back-off. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "schedmate/sm_llm.h"
#include "slurm/slurm_int.h"

#define EXIT_TRIES 3

/* The node a fault is attributed to: the one the log names, if the job
 * ran there; else the job's only node; else none. */
static const char *fault_node(const sm_slurm_job *sj, const sm_diagnosis *d) {
  for (int i = 0; d->node != NULL && i < sj->n_nodes; i++)
    if (strcmp(sj->nodes[i], d->node) == 0)
      return sj->nodes[i];
  return sj->n_nodes == 1 ? sj->nodes[0] : NULL;
}

static int job_has_node(const sm_slurm_job *sj, const char *node) {
  for (int i = 0; node != NULL && i < sj->n_nodes; i++)
    if (strcmp(sj->nodes[i], node) == 0)
      return 1;
  return 0;
}

static sm_end_state from_category(const char *cat, int node_fail) {
  if (cat != NULL && strcmp(cat, "infrastructure") == 0)
    return SM_END_FAILED_INFRA;
  if (cat != NULL && strcmp(cat, "framework") == 0)
    return SM_END_FAILED_FRAMEWORK;
  if (cat != NULL && strcmp(cat, "user") == 0)
    return SM_END_FAILED_USER;
  return node_fail ? SM_END_FAILED_INFRA : SM_END_FAILED;
}

/* "schedmate: gpu uncorrectable ECC error in GPU memory (job 123, line
 * 4711)": the cause up to its first parenthesis, cut to fit. */
static void drain_reason(const sm_diagnosis *d, uint32_t job, char *out,
                         size_t cap) {
  char cause[96];
  const char *rc = d->root_cause ? d->root_cause : "fault";
  size_t n = strcspn(rc, "(;\n");

  while (n > 0 && rc[n - 1] == ' ')
    n--;
  if (n >= sizeof(cause))
    n = sizeof(cause) - 1;
  memcpy(cause, rc, n);
  cause[n] = '\0';
  snprintf(out, cap, SM__NOTE_PREFIX " %s %s (job %u, line %lld)", d->component,
           cause, (unsigned)job, d->first_error_line);
}

static void audit_step(sm_slurm_agent *a, const char *decision,
                       const sm_slurm_job *sj, const sm_diagnosis *d,
                       const char *log, const char *target, const char *reason,
                       int executed, const char *result) {
  sm_buf b;
  sm_jw w;

  sm__audit_begin(a, &w, &b, "exit", decision, sj->id);
  sm_jw_key(&w, "state");
  sm_jw_str(&w, sm_slurm_state_name(sj->state));
  sm_jw_key(&w, "run");
  sm_jw_int(&w, sj->restarts);
  sm_jw_key(&w, "target");
  if (target)
    sm_jw_str(&w, target);
  else
    sm_jw_null(&w);
  if (reason) {
    sm_jw_key(&w, "reason");
    sm_jw_str(&w, reason);
  }
  sm_jw_key(&w, "log");
  if (log)
    sm_jw_str(&w, log);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "category");
  sm_jw_str(&w, d->category ? d->category : "unknown");
  sm_jw_key(&w, "component");
  sm_jw_str(&w, d->component ? d->component : "none");
  sm_jw_key(&w, "root_cause");
  if (d->root_cause)
    sm_jw_str(&w, d->root_cause);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "first_error_line");
  sm_jw_int(&w, d->first_error_line);
  sm_jw_key(&w, "confidence");
  sm_jw_num(&w, round(d->confidence * 1000) / 1000);
  sm__audit_end(a, &w, &b, executed, result);
}

/* Carries out (enforce) or records (shadow) the plan's steps; appends
 * "action target" strings to actions (a JSON array being written). */
static void act(sm_slurm_agent *a, const sm_slurm_job *sj,
                const sm_diagnosis *d, const sm_plan *p, const char *log,
                sm_jw *actions) {
  for (int i = 0; i < p->n_steps; i++) {
    const sm_plan_step *s = &p->steps[i];
    char result[SM_ERR_MSG_SIZE + 64] = "shadow mode: not applied";
    int executed = 0;
    sm_err err = {0};
    if (strcmp(s->action, "isolate_node") == 0) {
      char reason[256];
      drain_reason(d, sj->id, reason, sizeof(reason));
      sm__count(a, &a->cnt.drains, 1);
      if (!job_has_node(sj, s->target)) {
        snprintf(result, sizeof(result),
                 "not applied: %s is not a node of "
                 "this job",
                 s->target ? s->target : "(none)");
      } else if (p->executable) {
        if (a->be.ops->drain_node(a->be.ud, s->target, reason, &err) == 0) {
          executed = 1;
          snprintf(result, sizeof(result), "ok");
          sm__log(a, SM_SLURM_WARN, "node %s drained: %s", s->target, reason);
        } else {
          snprintf(result, sizeof(result), "error: %s", err.msg);
          sm__count(a, &a->cnt.actions_failed, 1);
        }
      }
      audit_step(a, "drain_node", sj, d, log, s->target, reason, executed,
                 result);
    } else if (strcmp(s->action, "restart_from_checkpoint") == 0) {
      sm__count(a, &a->cnt.requeues, 1);
      if (!sj->batch) {
        snprintf(result, sizeof(result), "not applied: not a batch job");
      } else if (p->executable) {
        if (a->be.ops->requeue(a->be.ud, sj->id, &err) == 0) {
          sm_slurm_update u = {0};
          sm_err e2 = {0};
          executed = 1;
          u.job_id = sj->id;
          u.start_now = 1;
          /* Slurm delays a requeued job; the node is drained, so let it
           * start elsewhere now. */
          if (a->be.ops->update_job(a->be.ud, &u, &e2) == 0)
            snprintf(result, sizeof(result), "ok");
          else
            snprintf(result, sizeof(result), "ok (eligible later: %s)", e2.msg);
          sm__log(a, SM_SLURM_WARN, "job %u requeued after %s",
                  (unsigned)sj->id, d->root_cause ? d->root_cause : "fault");
        } else {
          snprintf(result, sizeof(result), "error: %s", err.msg);
          sm__count(a, &a->cnt.actions_failed, 1);
        }
      }
      audit_step(a, "requeue", sj, d, log, NULL, NULL, executed, result);
    } else if (strcmp(s->action, "report") == 0) {
      audit_step(a, "report", sj, d, log, NULL, NULL, 0,
                 "root cause written to the history record; not requeued");
    } else {
      /* diagnose, request_replacement: left to the operator. */
      audit_step(a, s->action, sj, d, log, s->target, NULL, 0,
                 "left to the operator");
    }
    {
      char line[160];
      snprintf(line, sizeof(line), "%s%s%s", s->action, s->target ? " " : "",
               s->target ? s->target : "");
      sm_jw_str(actions, line);
    }
  }
}

/* Diagnoses the run's log.  Returns 0 with *d filled (d->failure may be
 * 0), 1 when no log could be read (d is zeroed), or a negative code. */
static int diagnose(sm_slurm_agent *a, const sm_slurm_job *sj, sm_diagnosis *d,
                    const char **log, sm_err *err) {
  const char *paths[2] = {sj->std_out, sj->std_err};
  int any = 0, rc;
  sm__fsid id;

  memset(d, 0, sizeof(*d));
  *log = NULL;
  for (int i = 0; i < 2; i++) {
    sm_diagnosis t;
    if (paths[i] == NULL ||
        (i == 1 && sj->std_out && strcmp(paths[1], sj->std_out) == 0))
      continue;
    sm__fsid_enter(&id, sj->uid);
    rc = sm_diagnose_file(a->sigdb, paths[i], NULL, &t, err);
    sm__fsid_leave(&id);
    if (rc != 0)
      continue;
    if (!any || (t.failure && !d->failure)) {
      if (any)
        sm_diagnosis_release(d);
      *d = t;
      *log = paths[i];
      any = 1;
    } else {
      sm_diagnosis_release(&t);
    }
    if (d->failure)
      break;
  }
  return any ? 0 : 1;
}

/* Writes the run into the history.  Returns 0 or a negative code. */
static int write_back(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                      uint32_t run, sm_end_state es, const sm_diagnosis *d,
                      const sm_plan *p, const char *log, const char *actions,
                      const char *note, const sm_gpu_usage *gu) {
  sm_record r;
  sm_buf ob;
  sm_jw w;
  sm_err err = {0};
  char id[128];
  int rc;

  sm__run_id(a, sj->id, run, id, sizeof(id));
  sm_record_init(&r);
  r.id = sm_strdup(id);
  if (j->has_meta)
    sm_meta_copy(&r.meta, &j->meta);
  r.user = sj->user ? sm_strdup(sj->user) : NULL;
  r.name = sj->name ? sm_strdup(sj->name) : NULL;
  r.gpu_type = sj->gpu_type ? sm_strdup(sj->gpu_type) : NULL;
  if (sj->start_time > 0 && sj->end_time >= sj->start_time)
    r.duration_s = sj->end_time - sj->start_time;
  else if (sj->start_time <= 0)
    r.duration_s = 0; /* ended before it started */
  r.end_state = es;
  r.submit_time = sj->submit_time > 0 ? sj->submit_time : NAN;
  r.added_at = sm__wall();
  r.throughput = sm__run_throughput(j);
  if (gu->found) {
    r.sm_util = gu->sm_util;
    r.gpu_mem_mib = gu->gpu_mem_mib;
    r.util_source = sm_strdup(gu->source);
    r.gpu_model = gu->gpu_model ? sm_strdup(gu->gpu_model) : NULL;
    r.driver_version =
        gu->driver_version ? sm_strdup(gu->driver_version) : NULL;
  }
  sm_buf_init(&ob, (size_t)8 << 20);
  sm_jw_init(&w, &ob);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "scheduler");
  sm_jw_str(&w, "slurm");
  sm_jw_key(&w, "cluster");
  sm_jw_str(&w, a->be.cluster);
  sm_jw_key(&w, "job_id");
  sm_jw_int(&w, sj->id);
  sm_jw_key(&w, "run");
  sm_jw_int(&w, run);
  sm_jw_key(&w, "state");
  sm_jw_str(&w, sm_slurm_state_name(sj->state));
  sm_jw_key(&w, "partition");
  if (sj->partition)
    sm_jw_str(&w, sj->partition);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "exit_code");
  if (WIFEXITED(sj->exit_status))
    sm_jw_int(&w, WEXITSTATUS(sj->exit_status));
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "signal");
  if (WIFSIGNALED(sj->exit_status))
    sm_jw_int(&w, WTERMSIG(sj->exit_status));
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "nodes");
  sm_jw_arr_begin(&w);
  for (int i = 0; i < sj->n_nodes; i++)
    sm_jw_str(&w, sj->nodes[i]);
  sm_jw_arr_end(&w);
  sm_jw_key(&w, "gpus");
  sm_jw_int(&w,
            sj->gpus_total > 0
                ? sj->gpus_total
                : sj->gpus_per_node * (sj->req_nodes > 0 ? sj->req_nodes : 1));
  sm_jw_key(&w, "estimate_s");
  sm_jw_num(&w, j->has_est ? round(j->est_s * 10) / 10 : NAN);
  sm_jw_key(&w, "log");
  if (log)
    sm_jw_str(&w, log);
  else if (sj->std_out)
    sm_jw_str(&w, sj->std_out);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "progress");
  sm__run_progress(j, &w);
  sm_jw_key(&w, "diagnosis");
  if (d != NULL && d->category != NULL) {
    sm_jw_obj_begin(&w);
    sm_diagnosis_json(d, p, &w);
    sm_jw_obj_end(&w);
  } else {
    sm_jw_null(&w);
  }
  sm_jw_key(&w, "gpu");
  if (gu->json != NULL)
    sm_jw_raw(&w, gu->json);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "actions");
  sm_jw_raw(&w, actions ? actions : "[]");
  if (note != NULL) {
    sm_jw_key(&w, "note");
    sm_jw_str(&w, note);
  }
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) == 0)
    r.outcome = sm_buf_take(&ob);
  sm_buf_release(&ob);
  sm_record_fingerprint(&r);
  rc = r.id ? sm_store_put(a->store, &r, &err) : SM_ENOMEM;
  {
    sm_buf b;
    sm_jw aw;
    sm__audit_begin(a, &aw, &b, "writeback", "record", sj->id);
    sm_jw_key(&aw, "id");
    sm_jw_str(&aw, id);
    sm_jw_key(&aw, "end_state");
    sm_jw_str(&aw, sm_end_state_name(es));
    sm_jw_key(&aw, "duration_s");
    sm_jw_num(&aw, r.duration_s);
    sm_jw_kv_num(&aw, "sm_util", r.sm_util);
    sm_jw_kv_num(&aw, "gpu_mem_mib", r.gpu_mem_mib);
    sm_jw_kv_str(&aw, "util_source", r.util_source);
    sm__audit_end(a, &aw, &b, rc == 0, rc == 0 ? "ok" : err.msg);
  }
  if (rc == 0) {
    sm__count(a, &a->cnt.written_back, 1);
    sm__log(a, SM_SLURM_INFO, "job %u: %s into the history as %s (%.0f s)",
            (unsigned)sj->id, id, sm_end_state_name(es), r.duration_s);
  } else {
    sm__log(a, SM_SLURM_ERROR, "job %u: history: %s", (unsigned)sj->id,
            err.msg);
  }
  sm_record_release(&r);
  return rc;
}

/* Handles run `run` of a job that ended (requeued_by_slurm: Slurm put it
 * back into the queue before the agent saw it end). */
static void handle_run(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                       uint32_t run, int requeued_by_slurm) {
  sm_diagnosis d;
  sm_plan p;
  sm_err err = {0};
  const char *log = NULL;
  char id[128];
  sm_end_state es;
  sm_buf acts;
  sm_jw aw;
  const char *note = NULL;
  int diagnosed = 0, planned = 0, state = sj->state;
  sm_record old;
  sm_slurm_job tmp;
  sm_gpu_usage gu;
  char gpulog[4200];
  int from_gpustat = 0;

  memset(&d, 0, sizeof(d));
  memset(&p, 0, sizeof(p));
  sm__run_id(a, sj->id, run, id, sizeof(id));
  sm_record_init(&old);
  if (sm_store_get(a->store, id, &old, NULL) == 0) {
    /* Handled before the agent restarted. */
    sm_record_release(&old);
    j->done_run = run;
    j->acted_run = run;
    return;
  }
  sm_record_release(&old);
  if (requeued_by_slurm) {
    /* The run ended when Slurm took it back; its times are ours. */
    tmp = *sj;
    tmp.state = SM_SJ_FAILED;
    tmp.start_time = j->started;
    tmp.end_time = sm__wall();
    sj = &tmp;
    state = SM_SJ_FAILED;
    note = "requeued by Slurm before it was seen to end";
  }
  if (sm__gpu_usage(a, sj, !requeued_by_slurm, &gu) == 1) {
    /* A node's GPU sampler has not written the end of the run yet. */
    j->exit_retry = sm__wall() + a->o.interval_s;
    return;
  }
  if (!j->has_meta) {
    /* The agent never saw the job queued: read its script now. */
    sm__advice_sum sum;
    int src;
    sm__advise_slurm_job(a, sj, j, &sum, NULL, &src, &err);
    if (!j->has_est && sum.has_est) {
      j->has_est = 1;
      j->est_s = sum.est_s;
    }
  }
  sm__run_final(a, sj, j);
  switch (state) {
  case SM_SJ_COMPLETED:
    es = SM_END_COMPLETED;
    break;
  case SM_SJ_CANCELLED:
  case SM_SJ_TIMEOUT:
  case SM_SJ_DEADLINE:
  case SM_SJ_PREEMPTED:
    es = SM_END_CANCELED;
    break;
  case SM_SJ_OOM:
    es = SM_END_FAILED_USER;
    break;
  case SM_SJ_BOOT_FAIL:
    es = SM_END_FAILED_INFRA;
    break;
  default: {
    int rc = diagnose(a, sj, &d, &log, &err);
    if (gu.signals != NULL && (rc == 1 || !d.failure || d.category == NULL ||
                               strcmp(d.category, "unknown") == 0 ||
                               strcmp(d.category, "framework") == 0)) {
      /* The node's sampler saw a GPU of the run lost: an infrastructure
       * signal the log may only show as its cascade. */
      sm_diagnosis g;
      sm_err e2 = {0};
      if (sm_diagnose_mem(a->sigdb, gu.signals, strlen(gu.signals), "gpustat",
                          NULL, &g, &e2) == 0 &&
          g.failure && g.category != NULL &&
          strcmp(g.category, "infrastructure") == 0) {
        if (rc == 0)
          sm_diagnosis_release(&d);
        d = g;
        rc = 0;
        from_gpustat = 1;
        snprintf(gpulog, sizeof(gpulog), "%s/%u", a->o.gpustat_dir,
                 (unsigned)sj->id);
        log = gpulog;
      } else {
        sm_diagnosis_release(&g);
      }
    }
    if (rc == 1 && j->exit_fails + 1 < EXIT_TRIES) {
      double wait = a->o.interval_s * (1 << j->exit_fails);
      j->exit_fails++;
      j->exit_retry = sm__wall() + wait;
      sm__log(a, SM_SLURM_WARN,
              "job %u: cannot read its log (%s); again in "
              "%.0f s",
              (unsigned)sj->id, err.msg, wait);
      sm_gpu_usage_release(&gu);
      return;
    }
    if (rc == 1) {
      note = "log unavailable: not diagnosed";
      /* (replaces the requeue note: both say why nothing was read) */
      sm__log(a, SM_SLURM_WARN, "job %u: %s (%s)", (unsigned)sj->id, note,
              err.msg);
    } else {
      diagnosed = 1;
      sm__count(a, &a->cnt.diagnosed, 1);
    }
    es = from_category(diagnosed && d.failure ? d.category : NULL,
                       state == SM_SJ_NODE_FAIL);
  }
  }
  sm_buf_init(&acts, 1 << 16);
  sm_jw_init(&aw, &acts);
  sm_jw_arr_begin(&aw);
  if (diagnosed && d.failure && j->acted_run < (long long)run) {
    sm_plan_opts po = {0};
    char jid[96];
    snprintf(jid, sizeof(jid), "%s:%u", a->be.cluster, (unsigned)sj->id);
    po.threshold = a->o.plan_threshold;
    po.max_retries = a->o.max_retries;
    po.isolation_quota = a->o.isolation_quota;
    po.quota_window_s = a->o.quota_window_s;
    po.shadow = !a->o.enforce;
    po.state_path = a->o.state_path;
    po.audit_path = a->o.audit_path;
    po.job_id = jid;
    po.log_path = log;
    po.node = fault_node(sj, &d);
    if (from_gpustat && job_has_node(sj, gu.signal_node))
      for (int k = 0; k < sj->n_nodes; k++)
        if (strcmp(sj->nodes[k], gu.signal_node) == 0)
          po.node = sj->nodes[k];
    if (requeued_by_slurm) {
      /* Slurm already requeued it: nothing to restart. */
      po.max_retries = -1;
    }
    if (a->o.llm != NULL && !from_gpustat) {
      /* The LLM stage is one more input: never more actionable. */
      sm_llm_diag_res lv;
      sm_diagnosis dout;
      if (sm_llm_diagnose(a->o.llm, log, &d, po.threshold, &lv, NULL) == 0) {
        sm_llm_diagnosis_merge(&d, &lv, &d, &dout);
        if (lv.disagreement[0])
          sm__log(a, SM_SLURM_INFO, "job %u: llm: %s", (unsigned)sj->id,
                  lv.disagreement);
      }
      sm_llm_diag_res_release(&lv);
    }
    if (sm_plan_make(a->sigdb, &d, &po, &p, &err) == 0) {
      planned = 1;
      act(a, sj, &d, &p, log, &aw);
    } else {
      sm__log(a, SM_SLURM_ERROR, "job %u: planner: %s", (unsigned)sj->id,
              err.msg);
    }
    j->acted_run = run;
  }
  sm_jw_arr_end(&aw);
  sm_jw_finish(&aw);
  if (write_back(a, sj, j, run, es, diagnosed ? &d : NULL, planned ? &p : NULL,
                 log, sm_buf_str(&acts), note, &gu) == 0) {
    j->done_run = run;
  } else {
    /* Try the history again later; the actions are not repeated. */
    j->exit_retry = sm__wall() + a->o.interval_s;
  }
  sm_buf_release(&acts);
  sm_gpu_usage_release(&gu);
  if (planned)
    sm_plan_release(&p);
  if (diagnosed)
    sm_diagnosis_release(&d);
}

void sm__exit_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n) {
  double now = sm__wall();

  for (int i = 0; i < n; i++) {
    const sm_slurm_job *sj = &jobs[i];
    sm__sjob *j = sm__job_find(a, sj->id);
    if (j == NULL || now < j->exit_retry)
      continue;
    /* A run that Slurm requeued (e.g. after a node failure) before this
     * agent saw it end. */
    if ((j->state == SM_SJ_RUNNING || j->state == SM_SJ_SUSPENDED) &&
        sj->restarts > j->restarts && j->done_run < (long long)j->restarts &&
        !sm_slurm_state_ended(sj->state)) {
      handle_run(a, sj, j, j->restarts, 1);
      sm__run_forget(j);
      continue;
    }
    if (sm_slurm_state_ended(sj->state) && !sj->completing &&
        j->done_run < (long long)sj->restarts) {
      handle_run(a, sj, j, sj->restarts, 0);
      if (j->done_run >= (long long)sj->restarts)
        sm__run_forget(j);
    }
  }
}
