/* agent.c - the Slurm agent's life: options and their defaults, one pass
 * over every channel, and the loop that repeats passes, backing off while
 * slurmctld cannot be reached and stopping cleanly on request.  It is the
 * top of the agent: it calls the channels (submit.c, run.c, exit.c), the
 * report files (report.c) and the socket server (server.c); they share
 * only what lies below them (shared.c: messages, counters, the clock and
 * the job table).
 *
 * A pass loads the job list once (one RPC), then runs the channels in
 * order: submit (advise new jobs), order (SchedMate-SJF priorities), run
 * (follow logs), exit (diagnose, act, write back), and finally rewrites
 * the status and metrics files.  A job that vanished from Slurm's list is
 * dropped from the table. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slurm/slurm_int.h"

/* ==== The job table's entries ==== */

static void job_release(sm__sjob *j) {
  sm__run_forget(j);
  sm_free(j->note);
  sm_free(j->name);
  sm_meta_release(&j->meta);
}

/* Drops jobs that the last pass did not list. */
static void purge(sm_slurm_agent *a) {
  int k = 0;
  for (int i = 0; i < a->n_jobs; i++) {
    if (a->jobs[i].seen == a->pass)
      a->jobs[k++] = a->jobs[i];
    else
      job_release(&a->jobs[i]);
  }
  a->n_jobs = k;
}

/* ==== Life cycle ==== */

static int dup_opt(const char *in, char **keep, const char **field) {
  *keep = NULL;
  if (in == NULL)
    return 0;
  if ((*keep = sm_strdup(in)) == NULL)
    return SM_ENOMEM;
  *field = *keep;
  return 0;
}

/* A private directory for the planner state (when none is given) and an
 * empty directory that stands in for an unreadable repository. */
static int make_private_dirs(sm_slurm_agent *a, sm_err *err) {
  const char *tmp = getenv("TMPDIR");
  char base[4096], p[4200];

  snprintf(base, sizeof(base), "%s/schedmate-agent.XXXXXX",
           tmp && tmp[0] == '/' ? tmp : "/tmp");
  if (mkdtemp(base) == NULL)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", base,
                      strerror(errno));
  a->tmp_dir = sm_strdup(base);
  snprintf(p, sizeof(p), "%s/empty", base);
  if (a->tmp_dir == NULL || mkdir(p, 0700) != 0 ||
      (a->empty_repo = sm_strdup(p)) == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: cannot set up", base);
  if (a->o.state_path == NULL) {
    snprintf(p, sizeof(p), "%s/planner.state", base);
    if ((a->tmp_state = sm_strdup(p)) == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    a->o.state_path = a->tmp_state;
  }
  return 0;
}

static void remove_private_dirs(sm_slurm_agent *a) {
  char p[4200];

  if (a->tmp_dir == NULL)
    return;
  if (a->tmp_state != NULL) {
    unlink(a->tmp_state);
    snprintf(p, sizeof(p), "%s.lock", a->tmp_state);
    unlink(p);
  }
  if (a->empty_repo != NULL)
    rmdir(a->empty_repo);
  rmdir(a->tmp_dir);
}

sm_slurm_agent *sm_slurm_agent_new(const sm_slurm_opts *o,
                                   const sm_slurm_backend *b, sm_err *err) {
  sm_slurm_agent *a;
  int rc = 0;

  if (o == NULL || b == NULL || b->ops == NULL || b->ops->load_jobs == NULL) {
    sm_err_set(err, SM_EINVAL, "slurm agent: no cluster backend");
    return NULL;
  }
  if (o->db == NULL || o->db[0] == '\0') {
    sm_err_set(err, SM_EINVAL,
               "slurm agent: a history store (--db) is "
               "required");
    return NULL;
  }
  a = sm_calloc(1, sizeof(*a));
  if (a == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  a->o = *o;
  a->be = *b;
  a->listen_fd = -1;
  a->stop_pipe[0] = a->stop_pipe[1] = -1;
  pthread_mutex_init(&a->cnt_mu, NULL);
  rc |= dup_opt(o->db, &a->s_db, &a->o.db);
  rc |= dup_opt(o->audit_path, &a->s_audit, &a->o.audit_path);
  rc |= dup_opt(o->state_path, &a->s_state, &a->o.state_path);
  rc |= dup_opt(o->status_path, &a->s_status, &a->o.status_path);
  rc |= dup_opt(o->metrics_path, &a->s_metrics, &a->o.metrics_path);
  rc |= dup_opt(o->socket_path, &a->s_socket, &a->o.socket_path);
  rc |= dup_opt(o->signatures, &a->s_sigs, &a->o.signatures);
  rc |= dup_opt(o->gpustat_dir, &a->s_gpustat, &a->o.gpustat_dir);
  rc |= dup_opt(o->sacct, &a->s_sacct, &a->o.sacct);
  if (rc != 0) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    goto fail;
  }
  if (a->o.interval_s <= 0)
    a->o.interval_s = 10;
  if (a->o.max_backoff_s <= 0)
    a->o.max_backoff_s = 300;
  if (a->o.max_backoff_s < a->o.interval_s)
    a->o.max_backoff_s = a->o.interval_s;
  if (a->o.extract_budget_s <= 0)
    a->o.extract_budget_s = 2;
  if (a->o.answer_budget_s <= 0)
    a->o.answer_budget_s = 0.03;
  if (a->o.slowdown <= 0 || a->o.slowdown >= 1)
    a->o.slowdown = 0.25;
  if (a->o.tl_pad_s <= 0)
    a->o.tl_pad_s = 600;
  if (make_private_dirs(a, err) != 0)
    goto fail;
  a->store = sm_store_open(a->o.db, SM_STORE_CREATE, 0, err);
  if (a->store == NULL)
    goto fail;
  a->sigdb = sm_sigdb_new();
  if (a->sigdb == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    goto fail;
  }
  if (sm_sigdb_load_builtin(a->sigdb, err) != 0 ||
      (a->o.signatures != NULL &&
       sm_sigdb_load_file(a->sigdb, a->o.signatures, err) != 0))
    goto fail;
  return a;
fail:
  /* The backend stays the caller's when construction fails. */
  a->be.ops = NULL;
  sm_slurm_agent_free(a);
  return NULL;
}

void sm_slurm_agent_free(sm_slurm_agent *a) {
  if (a == NULL)
    return;
  sm_slurm_serve_stop(a);
  for (int i = 0; i < a->n_jobs; i++)
    job_release(&a->jobs[i]);
  sm_free(a->jobs);
  sm_store_close(a->store);
  sm_sigdb_free(a->sigdb);
  if (a->be.ops != NULL && a->be.ops->close != NULL)
    a->be.ops->close(a->be.ud);
  remove_private_dirs(a);
  sm_free(a->tmp_dir);
  sm_free(a->tmp_state);
  sm_free(a->empty_repo);
  sm_free(a->s_db);
  sm_free(a->s_audit);
  sm_free(a->s_state);
  sm_free(a->s_status);
  sm_free(a->s_metrics);
  sm_free(a->s_socket);
  sm_free(a->s_sigs);
  sm_free(a->s_gpustat);
  sm_free(a->s_sacct);
  pthread_mutex_destroy(&a->cnt_mu);
  sm_free(a);
}

/* ==== Passes ==== */

int sm_slurm_agent_pass(sm_slurm_agent *a, sm_err *err) {
  sm_slurm_job *jobs = NULL;
  sm_err e = {0};
  int n = 0, rc;

  a->pass++;
  rc = a->be.ops->load_jobs(a->be.ud, &jobs, &n, &e);
  if (rc != 0) {
    if (a->slurm_ok || a->slurm_msg[0] == '\0' ||
        strcmp(a->slurm_msg, e.msg) != 0)
      sm__log(a, SM_SLURM_ERROR, "slurm: %s", e.msg);
    a->slurm_ok = 0;
    snprintf(a->slurm_msg, sizeof(a->slurm_msg), "%s", e.msg);
    sm__count(a, &a->cnt.slurm_errors, 1);
    /* Keep the table: jobs are not gone because Slurm is. */
    for (int i = 0; i < a->n_jobs; i++)
      a->jobs[i].seen = a->pass;
    sm__report_write(a);
    return sm_err_set(err, rc, "%s", e.msg);
  }
  if (!a->slurm_ok && a->slurm_msg[0] != '\0')
    sm__log(a, SM_SLURM_INFO, "slurm: reachable again");
  a->slurm_ok = 1;
  a->slurm_msg[0] = '\0';
  for (int i = 0; i < n; i++) {
    sm__sjob *j = sm__job_get(a, jobs[i].id);
    if (j == NULL)
      continue;
    if (j->seen == 0)
      j->native = jobs[i].priority;
    j->seen = a->pass;
    if (jobs[i].name != NULL &&
        (j->name == NULL || strcmp(j->name, jobs[i].name) != 0)) {
      sm_free(j->name);
      j->name = sm_strdup(jobs[i].name);
    }
  }
  sm__submit_channel(a, jobs, n);
  sm__order_channel(a, jobs, n);
  sm__run_channel(a, jobs, n);
  sm__exit_channel(a, jobs, n);
  /* Only now: the channels compare with the state of the last pass. */
  for (int i = 0; i < n; i++) {
    sm__sjob *j = sm__job_find(a, jobs[i].id);
    if (j != NULL) {
      j->state = jobs[i].state;
      j->restarts = jobs[i].restarts;
    }
  }
  purge(a);
  sm__count(a, &a->cnt.passes, 1);
  a->last_pass = sm__wall();
  sm__report_write(a);
  sm_slurm_jobs_free(jobs, n);
  return 0;
}

int sm_slurm_agent_run(sm_slurm_agent *a, volatile sig_atomic_t *stop,
                       int wake_fd) {
  double wait = a->o.interval_s;

  while (!*stop) {
    double until;
    if (sm_slurm_agent_pass(a, NULL) == 0) {
      wait = a->o.interval_s;
    } else {
      wait = wait * 2 > a->o.max_backoff_s ? a->o.max_backoff_s : wait * 2;
      sm__log(a, SM_SLURM_INFO, "slurm: next attempt in %.3g s", wait);
    }
    until = sm_now() + wait;
    while (!*stop) {
      struct pollfd p = {.fd = wake_fd, .events = POLLIN};
      double left = until - sm_now();
      int r;
      if (left <= 0)
        break;
      r = poll(&p, wake_fd >= 0 ? 1 : 0,
               (int)(left * 1000) + 1 > 1000 ? 1000 : (int)(left * 1000) + 1);
      if (r > 0)
        return 0;
      if (r < 0 && errno != EINTR)
        break;
    }
  }
  return 0;
}
