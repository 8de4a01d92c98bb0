/* gpu.c - a run's GPU metrics for the write-back channel.
 *
 * First choice: the files the nodes' samplers (`schedmate gpustat`) wrote
 * into the shared --gpustat directory, merged over the run's nodes; the
 * agent waits (a few passes, bounded by the samplers' own flush period)
 * until every sampler has sampled past the run's end.  Where nodes have
 * no NVML, Slurm's own accounting: `sacct` with the job's TRES usage
 * (gres/gpuutil, gres/gpumem), when the cluster records it.  Otherwise
 * the fields stay unknown: nothing is estimated here.
 *
 * sacct runs as a child process (posix_spawn, no shell) with a 10 s
 * deadline and at most 1 MiB of output read. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurm/slurm_int.h"

#define SACCT_TIMEOUT_S 10.0
#define SACCT_MAX_OUT (1u << 20)

extern char **environ;

/* Runs argv with stdout captured into out.  Returns the exit status (0..255),
 * or a negative code (cannot start, timed out, too much output). */
static int run_capture(char *const argv[], sm_buf *out, sm_err *err) {
  posix_spawn_file_actions_t fa;
  int p[2], st = 0, rc = 0;
  pid_t pid;
  double until = sm_now() + SACCT_TIMEOUT_S;

  if (pipe2(p, O_CLOEXEC) != 0)
    return sm_err_set(err, sm_err_from_errno(errno), "pipe: %s",
                      strerror(errno));
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (rc != 0) {
    close(p[0]);
    return sm_err_set(err, SM_ENOENT, "%s: %s", argv[0], strerror(rc));
  }
  rc = 0;
  for (;;) {
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    double left = until - sm_now();
    char buf[8192];
    ssize_t n;
    int r;
    if (left <= 0) {
      rc = sm_err_set(err, SM_ETIMEOUT, "%s: no answer within %.0f s", argv[0],
                      SACCT_TIMEOUT_S);
      break;
    }
    r = poll(&pf, 1, (int)(left * 1000) + 1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      continue;
    n = read(p[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    if (out->len + (size_t)n > SACCT_MAX_OUT ||
        sm_buf_add(out, buf, (size_t)n) != 0) {
      rc = sm_err_set(err, SM_ETOOBIG, "%s: more than %u bytes of output",
                      argv[0], SACCT_MAX_OUT);
      break;
    }
  }
  close(p[0]);
  if (rc != 0)
    kill(pid, SIGKILL);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  if (rc != 0)
    return rc;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void from_sacct(sm_slurm_agent *a, const sm_slurm_job *sj,
                       sm_gpu_usage *u) {
  char id[16];
  char *argv[] = {(char *)a->o.sacct,
                  (char *)"-n",
                  (char *)"-P",
                  (char *)"--noconvert",
                  (char *)"-j",
                  id,
                  (char *)"-o",
                  (char *)"JobID,AllocTRES,TRESUsageInAve,TRESUsageInMax",
                  NULL};
  sm_buf out;
  sm_err err = {0};
  int rc;

  snprintf(id, sizeof(id), "%u", (unsigned)sj->id);
  sm_buf_init(&out, SACCT_MAX_OUT + 1);
  rc = run_capture(argv, &out, &err);
  if (rc < 0) {
    sm__log(a, SM_SLURM_WARN, "job %u: GPU accounting: %s", (unsigned)sj->id,
            err.msg);
  } else if (rc != 0) {
    /* Accounting disabled or the job unknown to it: nothing to read. */
    sm__log(a, SM_SLURM_DEBUG, "job %u: %s exited %d", (unsigned)sj->id,
            a->o.sacct, rc);
  } else if (sm_gpu_usage_sacct(out.data ? out.data : "", out.len, sj->id, u,
                                &err) != 0) {
    sm__log(a, SM_SLURM_WARN, "job %u: %s", (unsigned)sj->id, err.msg);
  }
  sm_buf_release(&out);
}

int sm__gpu_usage(sm_slurm_agent *a, const sm_slurm_job *sj, int may_wait,
                  sm_gpu_usage *u) {
  sm_gpu_usage_init(u);
  if (a->o.gpustat_dir != NULL && sj->start_time > 0) {
    double end = sj->end_time > 0 ? sj->end_time : sm__wall();
    sm_err err = {0};
    int rc = sm_gpu_usage_read(a->o.gpustat_dir, sj->id, sj->start_time, end,
                               may_wait ? sm__wall() : INFINITY, u, &err);
    if (rc == SM_EBUSY)
      return 1;
    if (err.code != 0)
      sm__log(a, SM_SLURM_WARN, "job %u: %s", (unsigned)sj->id, err.msg);
    if (u->found) {
      if (u->partial)
        sm__log(a, SM_SLURM_INFO,
                "job %u: a GPU sampler did not cover the whole run",
                (unsigned)sj->id);
      return 0;
    }
  }
  if (a->o.sacct != NULL && a->o.sacct[0] != '\0' && sj->start_time > 0 &&
      (sj->gpus_per_node > 0 || sj->gpus_total > 0))
    from_sacct(a, sj, u);
  return 0;
}
