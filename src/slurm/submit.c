/* submit.c - the submit channel and SchedMate-SJF.
 *
 * Submit: every job that has not ended and has not been advised yet gets
 * its batch script read (one RPC), goes through the Advisor, and gets the
 * estimate and its provenance in its comment (enforce mode, or shadow
 * mode with --annotate); in enforce mode with a time-limit margin, a job
 * without a time limit gets one from the estimate.  A script that cannot
 * be read is retried with back-off; after a few failures the job is
 * advised from its command line alone.
 *
 * Order: per partition, the pending jobs are ordered by order.c and the
 * changed priorities are decided (and set in enforce mode).  Held jobs
 * (priority 0) and jobs whose nodes are down (1) are never touched, and a
 * partition where no job has an estimate keeps Slurm's order untouched.
 * Every decision is audited once; in shadow mode the same decision is not
 * repeated while nothing changes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm_int.h"

#define MAX_ARGS 64
#define SCRIPT_MAX ((size_t)4 << 20)
#define SCRIPT_TRIES 4

/* The script's arguments from Slurm's command line ("path arg..."). */
static int script_args(char *cmd, const char **argv, int max) {
  int n = 0, first = 1;
  for (char *t = strtok(cmd, " \t\n"); t && n < max;
       t = strtok(NULL, " \t\n")) {
    if (first) {
      first = 0;
      continue;
    }
    argv[n++] = t;
  }
  return n;
}

/* Fills the Advisor's view of a job; script and cmd are the caller's
 * buffers. */
static void advise_input(const sm_slurm_agent *a, const sm_slurm_job *sj,
                         const sm_buf *script, char *cmd, const char **argv,
                         sm__advise_in *in) {
  memset(in, 0, sizeof(*in));
  in->uid = sj->uid;
  in->user = sj->user;
  in->name = sj->name;
  in->partition = sj->partition;
  in->work_dir = sj->work_dir;
  in->gpus_per_node = sj->gpus_per_node;
  in->gpus_total = sj->gpus_total;
  in->nodes = sj->req_nodes;
  in->budget_s = a->o.extract_budget_s;
  if (script != NULL && script->len > 0) {
    in->script = script->data;
    in->script_len = script->len;
    if (cmd != NULL)
      in->argc = script_args(cmd, argv, MAX_ARGS);
    in->argv = argv;
  } else {
    in->command = sj->command;
  }
}

int sm__advise_slurm_job(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j,
                         sm__advice_sum *sum, sm_jw *w, int *script_rc,
                         sm_err *err) {
  sm_buf script;
  char *cmd = NULL;
  const char *argv[MAX_ARGS];
  sm__advise_in in;
  int rc = 0;

  *script_rc = 0;
  sm_buf_init(&script, SCRIPT_MAX);
  if (sj->batch && a->be.ops->batch_script != NULL)
    *script_rc = a->be.ops->batch_script(a->be.ud, sj->id, &script, err);
  if (*script_rc != 0 && j->advise_fails + 1 < SCRIPT_TRIES) {
    sm_buf_release(&script);
    return *script_rc;
  }
  if (sj->command != NULL)
    cmd = sm_strdup(sj->command);
  advise_input(a, sj, *script_rc == 0 ? &script : NULL, cmd, argv, &in);
  sm_meta_release(&j->meta);
  sm_meta_init(&j->meta);
  rc = sm__advise_job(a, a->store, &in, sum, &j->meta, w);
  j->has_meta = rc == 0;
  sm_free(cmd);
  sm_buf_release(&script);
  return rc;
}

static void advise_one(sm_slurm_agent *a, const sm_slurm_job *sj, sm__sjob *j) {
  sm__advice_sum sum;
  sm_buf detail, ab;
  sm_jw dw, w;
  sm_err err = {0};
  int script_rc, rc, act = a->o.enforce || a->o.annotate;
  char *comment = NULL;
  uint32_t tl = 0;
  char result[SM_ERR_MSG_SIZE + 32] = "";
  int executed = 0;

  sm_buf_init(&detail, (size_t)1 << 20);
  sm_jw_init(&dw, &detail);
  sm_jw_obj_begin(&dw);
  rc = sm__advise_slurm_job(a, sj, j, &sum, &dw, &script_rc, &err);
  sm_jw_obj_end(&dw);
  if (rc != 0 && script_rc != 0) {
    /* The script could not be read: try again later. */
    double wait =
        a->o.interval_s * (1 << (j->advise_fails < 6 ? j->advise_fails : 6));
    j->advise_fails++;
    j->advise_retry = sm__wall() + wait;
    sm__log(a, script_rc == SM_ECONN ? SM_SLURM_WARN : SM_SLURM_INFO,
            "job %u: %s (attempt %d, again in %.0f s)", (unsigned)sj->id,
            err.msg, j->advise_fails, wait);
    sm_buf_release(&detail);
    return;
  }
  if (rc != 0) {
    sm__log(a, SM_SLURM_ERROR, "job %u: cannot advise: %s", (unsigned)sj->id,
            sm_strerror(rc));
    sm_buf_release(&detail);
    j->advised = 1;
    return;
  }
  j->advised = 1;
  j->has_est = sum.has_est;
  j->est_s = sum.est_s;
  sm_free(j->note);
  j->note = sm_strdup(sum.note);
  sm__count(a, &a->cnt.advised, 1);
  if (sum.has_est)
    sm__count(a, &a->cnt.estimates, 1);
  if (a->o.enforce && sum.tl_min > 0 && sj->time_limit == 0 &&
      sj->state == SM_SJ_PENDING)
    tl = sum.tl_min;
  {
    const char *cur = sm__comment_note(sj->comment);
    if (cur == NULL || strcmp(cur, sum.note) != 0)
      comment = sm__comment_merge(sj->comment, sum.note);
  }
  if (act && (comment != NULL || tl > 0)) {
    sm_slurm_update u = {0};
    u.job_id = sj->id;
    u.comment = comment;
    u.time_limit = tl;
    sm_err_clear(&err);
    if (a->be.ops->update_job(a->be.ud, &u, &err) == 0) {
      executed = 1;
      snprintf(result, sizeof(result), "ok");
    } else {
      snprintf(result, sizeof(result), "error: %s", err.msg);
      sm__count(a, &a->cnt.actions_failed, 1);
      sm__log(a, SM_SLURM_WARN, "job %u: %s", (unsigned)sj->id, err.msg);
    }
  } else if (!act) {
    snprintf(result, sizeof(result), "shadow mode: not applied");
  } else {
    snprintf(result, sizeof(result), "comment already up to date");
  }
  sm__audit_begin(a, &w, &ab, "submit", sum.has_est ? "estimate" : "fallback",
                  sj->id);
  sm_jw_key(&w, "name");
  sm_jw_str(&w, sj->name ? sj->name : "");
  sm_jw_key(&w, "estimate_s");
  sm_jw_num(&w, sum.has_est ? round(sum.est_s * 10) / 10 : NAN);
  sm_jw_key(&w, "comment");
  sm_jw_str(&w, sum.note);
  sm_jw_key(&w, "time_limit_min");
  if (a->o.tl_margin > 0 && sum.tl_min > 0)
    sm_jw_int(&w, sum.tl_min);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "advice");
  if (sm_jw_finish(&dw) == 0)
    sm_jw_raw(&w, sm_buf_str(&detail));
  else
    sm_jw_null(&w);
  sm__audit_end(a, &w, &ab, executed, result);
  sm__log(a, SM_SLURM_INFO, "job %u: %s%s", (unsigned)sj->id, sum.note,
          act ? "" : " (shadow)");
  sm_free(comment);
  sm_buf_release(&detail);
}

void sm__submit_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n) {
  double now = sm__wall();

  for (int i = 0; i < n; i++) {
    sm__sjob *j;
    if (sm_slurm_state_ended(jobs[i].state))
      continue;
    j = sm__job_find(a, jobs[i].id);
    if (j == NULL || j->advised || now < j->advise_retry)
      continue;
    advise_one(a, &jobs[i], j);
  }
}

/* ==== SchedMate-SJF ==== */

static int by_partition(const void *p, const void *q, void *arg) {
  const sm_slurm_job *jobs = arg;
  const char *x = jobs[*(const int *)p].partition;
  const char *y = jobs[*(const int *)q].partition;
  return strcmp(x ? x : "", y ? y : "");
}

static void order_group(sm_slurm_agent *a, sm_slurm_job *jobs, const int *g,
                        int m) {
  sm__oj *oj = sm_calloc((size_t)m, sizeof(*oj));
  int any_est = 0, changed;

  if (oj == NULL)
    return;
  for (int k = 0; k < m; k++) {
    const sm_slurm_job *sj = &jobs[g[k]];
    const sm__sjob *j = sm__job_find(a, sj->id);
    oj[k].id = sj->id;
    oj[k].native = j && j->native ? j->native : sj->priority;
    oj[k].submit = sj->submit_time;
    oj[k].has_est = j && j->has_est;
    oj[k].est = j ? j->est_s : 0;
    oj[k].cur = sj->priority;
    any_est |= oj[k].has_est;
  }
  changed = any_est ? sm__order_plan(oj, m) : 0;
  if (changed < 0)
    sm__log(a, SM_SLURM_ERROR, "order: out of memory");
  for (int k = 0; changed > 0 && k < m; k++) {
    sm__sjob *j = sm__job_find(a, oj[k].id);
    const sm_slurm_job *sj = &jobs[g[k]];
    char result[SM_ERR_MSG_SIZE + 32] = "shadow mode: not applied";
    int executed = 0;
    sm_buf ab;
    sm_jw w;
    if (j == NULL || oj[k].target == oj[k].cur ||
        oj[k].target == j->last_target)
      continue;
    if (a->o.enforce) {
      sm_slurm_update u = {0};
      sm_err err = {0};
      u.job_id = oj[k].id;
      u.priority = oj[k].target;
      if (a->be.ops->update_job(a->be.ud, &u, &err) == 0) {
        executed = 1;
        snprintf(result, sizeof(result), "ok");
        j->last_target = oj[k].target;
      } else {
        snprintf(result, sizeof(result), "error: %s", err.msg);
        sm__count(a, &a->cnt.actions_failed, 1);
        sm__log(a, SM_SLURM_WARN, "job %u: %s", (unsigned)oj[k].id, err.msg);
      }
    } else {
      j->last_target = oj[k].target;
    }
    sm__count(a, &a->cnt.priority_sets, 1);
    sm__audit_begin(a, &w, &ab, "order", "set_priority", oj[k].id);
    sm_jw_key(&w, "partition");
    sm_jw_str(&w, sj->partition ? sj->partition : "");
    sm_jw_key(&w, "rank");
    sm_jw_int(&w, oj[k].rank);
    sm_jw_key(&w, "of");
    sm_jw_int(&w, m);
    sm_jw_key(&w, "from");
    sm_jw_int(&w, oj[k].cur);
    sm_jw_key(&w, "to");
    sm_jw_int(&w, oj[k].target);
    sm_jw_key(&w, "estimate_s");
    sm_jw_num(&w, oj[k].has_est ? round(oj[k].est * 10) / 10 : NAN);
    sm_jw_key(&w, "why");
    sm_jw_str(&w, oj[k].has_est ? "shortest expected duration first"
                                : "no estimate: keeps its place in Slurm's "
                                  "order");
    sm__audit_end(a, &w, &ab, executed, result);
  }
  sm_free(oj);
}

void sm__order_channel(sm_slurm_agent *a, sm_slurm_job *jobs, int n) {
  int *idx = sm_malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  int m = 0;

  if (idx == NULL)
    return;
  for (int i = 0; i < n; i++)
    if (jobs[i].state == SM_SJ_PENDING && jobs[i].priority >= SM__PRIO_MIN &&
        jobs[i].priority <= SM__PRIO_MAX)
      idx[m++] = i;
  qsort_r(idx, (size_t)m, sizeof(int), by_partition, jobs);
  for (int s = 0; s < m;) {
    int e = s + 1;
    while (e < m && by_partition(&idx[s], &idx[e], jobs) == 0)
      e++;
    order_group(a, jobs, idx + s, e - s);
    s = e;
  }
  sm_free(idx);
}
