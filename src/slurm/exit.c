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
  return sm_end_state_of_category(cat, node_fail ? SM_END_FAILED_INFRA
                                                 : SM_END_FAILED);
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

/* What the exit channel found out about one ended run. */
typedef struct run_end {
  sm_diagnosis d;    /* the diagnosis (diagnosed) */
  sm_plan p;         /* the plan (planned) */
  int diagnosed;     /* d holds a diagnosis */
  int planned;       /* p holds a plan */
  int from_gpustat;  /* d comes from the sampler's lost-GPU signal */
  const char *log;   /* the log d was read from, or NULL */
  const char *note;  /* why something was not read, or NULL */
  sm_gpu_usage gu;   /* GPU metrics of the run */
  char gpulog[4200]; /* "GPUSTAT_DIR/JOB": log when from_gpustat */
} run_end;

/* The history's end state of a Slurm state that needs no diagnosis, or
 * -1 when the log must say (FAILED, NODE_FAIL). */
static int plain_end_state(int state) {
  switch (state) {
  case SM_SJ_COMPLETED:
    return SM_END_COMPLETED;
  case SM_SJ_CANCELLED:
  case SM_SJ_TIMEOUT:
  case SM_SJ_DEADLINE:
  case SM_SJ_PREEMPTED:
    return SM_END_CANCELED;
  case SM_SJ_OOM:
    return SM_END_FAILED_USER;
  case SM_SJ_BOOT_FAIL:
    return SM_END_FAILED_INFRA;
  default:
    return -1;
  }
}

/* The node's sampler saw a GPU of the run lost: an infrastructure signal
 * the log may only show as its cascade.  Replaces a diagnosis that found
 * nothing, nothing known or a framework error (rc: diagnose's answer). */
static int gpu_lost_diagnosis(sm_slurm_agent *a, const sm_slurm_job *sj,
                              run_end *e, int rc) {
  sm_diagnosis g;
  sm_err e2 = {0};

  if (e->gu.signals == NULL ||
      !(rc == 1 || !e->d.failure || e->d.category == NULL ||
        strcmp(e->d.category, "unknown") == 0 ||
        strcmp(e->d.category, "framework") == 0))
    return rc;
  if (sm_diagnose_mem(a->sigdb, e->gu.signals, strlen(e->gu.signals), "gpustat",
                      NULL, &g, &e2) == 0 &&
      g.failure && g.category != NULL &&
      strcmp(g.category, "infrastructure") == 0) {
    if (rc == 0)
      sm_diagnosis_release(&e->d);
    e->d = g;
    e->from_gpustat = 1;
    snprintf(e->gpulog, sizeof(e->gpulog), "%s/%u", a->o.gpustat_dir,
             (unsigned)sj->id);
    e->log = e->gpulog;
    return 0;
  }
  sm_diagnosis_release(&g);
  return rc;
}

/* Diagnoses a FAILED or NODE_FAIL run into e and returns its end state,
 * or -1 when its log cannot be read yet and should be tried again. */
static int diagnose_run(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                        int state, run_end *e) {
  sm_err err = {0};
  int rc = diagnose(a, sj, &e->d, &e->log, &err);

  rc = gpu_lost_diagnosis(a, sj, e, rc);
  if (rc == 1 && j->exit_fails + 1 < EXIT_TRIES) {
    double wait = a->o.interval_s * (1 << j->exit_fails);
    j->exit_fails++;
    j->exit_retry = sm__wall() + wait;
    sm__log(a, SM_SLURM_WARN,
            "job %u: cannot read its log (%s); again in "
            "%.0f s",
            (unsigned)sj->id, err.msg, wait);
    return -1;
  }
  if (rc == 1) {
    e->note = "log unavailable: not diagnosed";
    /* (replaces the requeue note: both say why nothing was read) */
    sm__log(a, SM_SLURM_WARN, "job %u: %s (%s)", (unsigned)sj->id, e->note,
            err.msg);
  } else {
    e->diagnosed = 1;
    sm__count(a, &a->cnt.diagnosed, 1);
  }
  return from_category(e->diagnosed && e->d.failure ? e->d.category : NULL,
                       state == SM_SJ_NODE_FAIL);
}

/* Plans the recovery of a diagnosed failure and carries it out (or
 * records it in shadow mode); the actions go into the array aw. */
static void plan_and_act(sm_slurm_agent *a, const sm_slurm_job *sj,
                         int requeued_by_slurm, run_end *e, sm_jw *aw) {
  sm_plan_opts po = {0};
  sm_err err = {0};
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
  po.log_path = e->log;
  po.node = fault_node(sj, &e->d);
  if (e->from_gpustat && job_has_node(sj, e->gu.signal_node))
    for (int k = 0; k < sj->n_nodes; k++)
      if (strcmp(sj->nodes[k], e->gu.signal_node) == 0)
        po.node = sj->nodes[k];
  if (requeued_by_slurm) {
    /* Slurm already requeued it: nothing to restart. */
    po.max_retries = -1;
  }
  if (a->o.llm != NULL && !e->from_gpustat) {
    /* The LLM stage is one more input: never more actionable. */
    sm_llm_diag_res lv;
    sm_diagnosis dout;
    if (sm_llm_diagnose(a->o.llm, e->log, &e->d, po.threshold, &lv, NULL) ==
        0) {
      sm_llm_diagnosis_merge(&e->d, &lv, &e->d, &dout);
      if (lv.disagreement[0])
        sm__log(a, SM_SLURM_INFO, "job %u: llm: %s", (unsigned)sj->id,
                lv.disagreement);
    }
    sm_llm_diag_res_release(&lv);
  }
  if (sm_plan_make(a->sigdb, &e->d, &po, &e->p, &err) == 0) {
    e->planned = 1;
    act(a, sj, &e->d, &e->p, e->log, aw);
  } else {
    sm__log(a, SM_SLURM_ERROR, "job %u: planner: %s", (unsigned)sj->id,
            err.msg);
  }
}

/* 1 when run `run` is in the history already (handled before the agent
 * restarted). */
static int already_written(sm_slurm_agent *a, uint32_t job, uint32_t run) {
  sm_record old;
  char id[128];
  int found;

  sm__run_id(a, job, run, id, sizeof(id));
  sm_record_init(&old);
  found = sm_store_get(a->store, id, &old, NULL) == 0;
  sm_record_release(&old);
  return found;
}

/* Handles run `run` of a job that ended (requeued_by_slurm: Slurm put it
 * back into the queue before the agent saw it end). */
static void handle_run(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                       uint32_t run, int requeued_by_slurm) {
  run_end e;
  sm_err err = {0};
  sm_slurm_job tmp;
  sm_buf acts;
  sm_jw aw;
  int es, state = sj->state;

  memset(&e, 0, sizeof(e));
  if (already_written(a, sj->id, run)) {
    j->done_run = run;
    j->acted_run = run;
    return;
  }
  if (requeued_by_slurm) {
    /* The run ended when Slurm took it back; its times are ours. */
    tmp = *sj;
    tmp.state = SM_SJ_FAILED;
    tmp.start_time = j->started;
    tmp.end_time = sm__wall();
    sj = &tmp;
    state = SM_SJ_FAILED;
    e.note = "requeued by Slurm before it was seen to end";
  }
  if (sm__gpu_usage(a, sj, !requeued_by_slurm, &e.gu) == 1) {
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
  es = plain_end_state(state);
  if (es < 0 && (es = diagnose_run(a, sj, j, state, &e)) < 0) {
    sm_gpu_usage_release(&e.gu);
    return;
  }
  sm_buf_init(&acts, 1 << 16);
  sm_jw_init(&aw, &acts);
  sm_jw_arr_begin(&aw);
  if (e.diagnosed && e.d.failure && j->acted_run < (long long)run) {
    plan_and_act(a, sj, requeued_by_slurm, &e, &aw);
    j->acted_run = run;
  }
  sm_jw_arr_end(&aw);
  sm_jw_finish(&aw);
  if (write_back(a, sj, j, run, (sm_end_state)es, e.diagnosed ? &e.d : NULL,
                 e.planned ? &e.p : NULL, e.log, sm_buf_str(&acts), e.note,
                 &e.gu) == 0) {
    j->done_run = run;
  } else {
    /* Try the history again later; the actions are not repeated. */
    j->exit_retry = sm__wall() + a->o.interval_s;
  }
  sm_buf_release(&acts);
  sm_gpu_usage_release(&e.gu);
  if (e.planned)
    sm_plan_release(&e.p);
  if (e.diagnosed)
    sm_diagnosis_release(&e.d);
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
