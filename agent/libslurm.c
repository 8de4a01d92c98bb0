/* libslurm.c - the agent's backend over libslurm (Slurm 22.05's slurm.h):
 * slurm_load_jobs for the job list, slurm_job_batch_script for scripts,
 * slurm_update_job for comment, priority, time limit and begin time,
 * slurm_update_node to drain, slurm_requeue to requeue.  Every call is a
 * bounded RPC (slurm.conf's MessageTimeout).  Built with libslurm only
 * where Slurm's headers are installed; elsewhere the constructor says
 * SM_EUNSUPP.
 *
 * This file is linked into build/schedmate-slurm only, never into the
 * library or the schedmate command: libslurm is GPL-2.0-or-later, and the
 * agent's executable is the one program that links it (README, Licence).
 * It uses the library's public API only (sm_slurm_ops).
 *
 * All calls come from the agent's main thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#if defined(SM_HAVE_SLURM) && SM_HAVE_SLURM

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

static int initialised;

/* Maps the thread's Slurm error to a code and message. */
static int fail(sm_err *err, const char *what) {
  int e = slurm_get_errno();
  int code = SM_EIO;

  if ((e >= SLURM_COMMUNICATIONS_CONNECTION_ERROR &&
       e <= SLURM_COMMUNICATIONS_MISSING_SOCKET_ERROR) ||
      (e >= SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR &&
       e <= SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR) ||
      e == SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT)
    code = SM_ECONN;
  else if (e == ESLURM_INVALID_JOB_ID || e == ESLURM_INVALID_NODE_NAME)
    code = SM_ENOTFOUND;
  else if (e == ESLURM_ACCESS_DENIED || e == ESLURM_USER_ID_MISSING)
    code = SM_EACCES;
  return sm_err_set(err, code, "%s: %s", what, slurm_strerror(e));
}

static char *dup_or_null(const char *s) {
  return s && s[0] ? sm_strdup(s) : NULL;
}

static int map_state(uint32_t st) {
  switch (st & JOB_STATE_BASE) {
  case JOB_PENDING:
    return SM_SJ_PENDING;
  case JOB_RUNNING:
    return SM_SJ_RUNNING;
  case JOB_SUSPENDED:
    return SM_SJ_SUSPENDED;
  case JOB_COMPLETE:
    return SM_SJ_COMPLETED;
  case JOB_CANCELLED:
    return SM_SJ_CANCELLED;
  case JOB_FAILED:
    return SM_SJ_FAILED;
  case JOB_TIMEOUT:
    return SM_SJ_TIMEOUT;
  case JOB_NODE_FAIL:
    return SM_SJ_NODE_FAIL;
  case JOB_PREEMPTED:
    return SM_SJ_PREEMPTED;
  case JOB_BOOT_FAIL:
    return SM_SJ_BOOT_FAIL;
  case JOB_DEADLINE:
    return SM_SJ_DEADLINE;
  case JOB_OOM:
    return SM_SJ_OOM;
  default:
    return SM_SJ_FAILED;
  }
}

/* Expands a node list ("n[1-3],m2") into names. */
static int expand_nodes(const char *list, sm_slurm_job *j) {
  hostlist_t hl;
  char *h;

  if (list == NULL || list[0] == '\0')
    return 0;
  hl = slurm_hostlist_create(list);
  if (hl == NULL)
    return 0;
  while ((h = slurm_hostlist_shift(hl)) != NULL) {
    char **nn = sm_realloc(j->nodes, (size_t)(j->n_nodes + 1) * sizeof(*nn));
    if (nn == NULL || (nn[j->n_nodes] = sm_strdup(h)) == NULL) {
      if (nn)
        j->nodes = nn;
      free(h);
      slurm_hostlist_destroy(hl);
      return SM_ENOMEM;
    }
    j->nodes = nn;
    j->n_nodes++;
    free(h);
    if (j->n_nodes >= 100000)
      break;
  }
  slurm_hostlist_destroy(hl);
  return 0;
}

static int convert(slurm_job_info_t *in, sm_slurm_job *j) {
  char path[4096];
  char type[32];
  int count = 0;

  memset(j, 0, sizeof(*j));
  j->id = in->job_id;
  j->state = map_state(in->job_state);
  j->completing = (in->job_state & JOB_COMPLETING) != 0;
  j->uid = in->user_id;
  j->user = dup_or_null(in->user_name);
  j->name = dup_or_null(in->name);
  j->partition = dup_or_null(in->partition);
  j->work_dir = dup_or_null(in->work_dir);
  j->command = dup_or_null(in->command);
  j->comment = dup_or_null(in->comment);
  if (in->batch_flag) {
    path[0] = '\0';
    slurm_get_job_stdout(path, sizeof(path), in);
    j->std_out = dup_or_null(path);
    path[0] = '\0';
    slurm_get_job_stderr(path, sizeof(path), in);
    j->std_err = dup_or_null(path);
  }
  j->priority = in->priority;
  j->time_limit = (in->time_limit == INFINITE || in->time_limit == NO_VAL)
                      ? 0
                      : in->time_limit;
  j->restarts = in->restart_cnt;
  j->exit_status = (int)in->exit_code;
  j->batch = in->batch_flag != 0;
  j->req_nodes = (int)in->num_nodes;
  if (in->tres_per_node &&
      sm_slurm_parse_gpus(in->tres_per_node, &count, type, sizeof(type)) == 0)
    j->gpus_per_node = count;
  if (in->tres_per_job &&
      sm_slurm_parse_gpus(in->tres_per_job, &count, type[0] ? NULL : type,
                          sizeof(type)) == 0)
    j->gpus_total = count;
  j->gpu_type = dup_or_null(type);
  j->submit_time = (double)in->submit_time;
  j->start_time = j->state == SM_SJ_PENDING ? 0 : (double)in->start_time;
  j->end_time = sm_slurm_state_ended(j->state) ? (double)in->end_time : 0;
  return expand_nodes(in->nodes, j);
}

static int load_jobs(void *ud, sm_slurm_job **jobs, int *n, sm_err *err) {
  job_info_msg_t *msg = NULL;
  sm_slurm_job *out;
  int rc = 0;

  (void)ud;
  *jobs = NULL;
  *n = 0;
  if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS)
    return fail(err, "cannot load the job list");
  out = sm_calloc(msg->record_count ? msg->record_count : 1, sizeof(*out));
  if (out == NULL) {
    slurm_free_job_info_msg(msg);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  for (uint32_t i = 0; i < msg->record_count && rc == 0; i++) {
    rc = convert(&msg->job_array[i], &out[i]);
    *n = (int)i + 1;
  }
  slurm_free_job_info_msg(msg);
  if (rc != 0) {
    sm_slurm_jobs_free(out, *n);
    *n = 0;
    return sm_err_set(err, rc, "out of memory");
  }
  *jobs = out;
  return 0;
}

static int batch_script(void *ud, uint32_t id, sm_buf *out, sm_err *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  int rc;

  (void)ud;
  if (f == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  rc = slurm_job_batch_script(f, id);
  fclose(f);
  if (rc != SLURM_SUCCESS) {
    free(text);
    return fail(err, "cannot read the batch script");
  }
  rc = sm_buf_add(out, text, len);
  free(text);
  return rc == 0 ? 0 : sm_err_set(err, rc, "batch script too large");
}

static int update_job(void *ud, const sm_slurm_update *u, sm_err *err) {
  job_desc_msg_t d;

  (void)ud;
  slurm_init_job_desc_msg(&d);
  d.job_id = u->job_id;
  if (u->comment != NULL)
    d.comment = (char *)u->comment;
  if (u->priority != 0)
    d.priority = u->priority;
  if (u->time_limit != 0)
    d.time_limit = u->time_limit;
  if (u->start_now)
    d.begin_time = time(NULL);
  if (slurm_update_job(&d) != SLURM_SUCCESS)
    return fail(err, "cannot update the job");
  return 0;
}

static int drain_node(void *ud, const char *node, const char *reason,
                      sm_err *err) {
  update_node_msg_t m;

  (void)ud;
  slurm_init_update_node_msg(&m);
  m.node_names = (char *)node;
  m.node_state = NODE_STATE_DRAIN;
  m.reason = (char *)reason;
  m.reason_uid = getuid();
  if (slurm_update_node(&m) != SLURM_SUCCESS)
    return fail(err, "cannot drain the node");
  return 0;
}

static int requeue(void *ud, uint32_t id, sm_err *err) {
  (void)ud;
  if (slurm_requeue(id, 0) != SLURM_SUCCESS)
    return fail(err, "cannot requeue the job");
  return 0;
}

static void close_backend(void *ud) {
  (void)ud;
  if (initialised) {
    slurm_fini();
    initialised = 0;
  }
}

static const sm_slurm_ops ops = {load_jobs,  batch_script, update_job,
                                 drain_node, requeue,      close_backend};

/* ClusterName= of a slurm.conf (keys are case-insensitive); 0 if found. */
static const char *skip_blanks(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static int conf_cluster_name(const char *path, char *out, size_t cap) {
  FILE *f = sm_file_fopen(path, NULL);
  char line[1024];
  int found = -1;

  if (f == NULL)
    return -1;
  while (found != 0 && fgets(line, sizeof(line), f) != NULL) {
    const char *p = skip_blanks(line), *e;
    if (strncasecmp(p, "ClusterName", 11) != 0)
      continue;
    p = skip_blanks(p + 11);
    if (*p++ != '=')
      continue;
    p = skip_blanks(p);
    e = p + strcspn(p, " \t\r\n#");
    if (e > p && (size_t)(e - p) < cap) {
      memcpy(out, p, (size_t)(e - p));
      out[e - p] = '\0';
      found = 0;
    }
  }
  fclose(f);
  return found;
}

int agent_backend_libslurm(sm_slurm_backend *b, const char *conf, sm_err *err) {
  slurm_conf_t *cf = NULL;

  const char *path = conf;

  memset(b, 0, sizeof(*b));
  /* libslurm ends the process on an unreadable configuration: check
   * first (a configless client keeps its copy elsewhere; name it). */
  if (path == NULL)
    path = getenv("SLURM_CONF");
  if (path == NULL)
    path = "/etc/slurm/slurm.conf";
  if (access(path, R_OK) != 0)
    return sm_err_set(err, SM_ENOENT,
                      "%s: cannot read the Slurm configuration (set "
                      "SLURM_CONF or --slurm-conf)",
                      path);
  if (!initialised) {
    slurm_init(path);
    initialised = 1;
  }
  b->ops = &ops;
  /* The cluster name names history records: from the file (no RPC, so a
   * controller that is down does not delay the start), else from the
   * controller, else "slurm". */
  snprintf(b->cluster, sizeof(b->cluster), "slurm");
  if (conf_cluster_name(path, b->cluster, sizeof(b->cluster)) == 0)
    return 0;
  if (slurm_load_ctl_conf((time_t)0, &cf) == SLURM_SUCCESS && cf) {
    if (cf->cluster_name && cf->cluster_name[0])
      snprintf(b->cluster, sizeof(b->cluster), "%s", cf->cluster_name);
    slurm_free_ctl_conf(cf);
  }
  return 0;
}

#else /* no libslurm */

int agent_backend_libslurm(sm_slurm_backend *b, const char *conf, sm_err *err) {
  (void)conf;
  memset(b, 0, sizeof(*b));
  return sm_err_set(err, SM_EUNSUPP,
                    "this schedmate was built without libslurm "
                    "(install libslurm-dev and rebuild)");
}

#endif
