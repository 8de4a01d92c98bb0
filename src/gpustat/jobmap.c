/* jobmap.c - which Slurm job a GPU process belongs to.
 *
 * Slurm puts every job's processes in a cgroup whose path has a job_<id>
 * component: with cgroup v1 one line per hierarchy,
 *   "7:devices:/slurm/uid_1000/job_42/step_0/task_0"
 * (or "/slurm_<node>/..." with several slurmd on one host); with cgroup v2
 * one line,
 *   "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0".
 * A job_<digits> component counts only below a component that starts
 * with "slurm", so that another system's "job_" directories are not taken
 * for Slurm jobs.  Where Slurm uses no cgroups (proctrack/pgid or
 * linuxproc), the process's environment names its job: slurmstepd sets
 * SLURM_JOB_ID for every task, and children inherit it.
 *
 * Reads are bounded (64 KiB of cgroup, 1 MiB of environment), go through
 * openat() below proc_root/PID with O_NOFOLLOW, and accept regular files
 * only, so a crafted root cannot make the sampler read elsewhere or
 * block. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpustat/gpustat_int.h"

#define CGROUP_MAX (64 * 1024)
#define ENVIRON_MAX (1024 * 1024)

/* Parses a decimal job id of n bytes: 1..4294967294, no sign, no
 * leading zero. */
static int job_number(const char *s, size_t n, uint32_t *out) {
  uint64_t v = 0;

  if (n == 0 || n > 10 || (s[0] == '0'))
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return 0;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v == 0 || v >= 0xFFFFFFFFu)
    return 0;
  *out = (uint32_t)v;
  return 1;
}

/* The job named by one cgroup path, or 0. */
static int path_job(const char *p, size_t n, uint32_t *job) {
  size_t i = 0;
  int under_slurm = 0;

  while (i < n) {
    size_t s, e;
    while (i < n && p[i] == '/')
      i++;
    s = i;
    while (i < n && p[i] != '/')
      i++;
    e = i;
    if (e == s)
      continue;
    if (e - s >= 5 && strncmp(p + s, "slurm", 5) == 0)
      under_slurm = 1;
    else if (under_slurm && e - s > 4 && strncmp(p + s, "job_", 4) == 0 &&
             job_number(p + s + 4, e - s - 4, job))
      return 1;
  }
  return 0;
}

int sm_gpu_cgroup_job(const char *text, size_t len, uint32_t *job) {
  size_t i = 0;
  uint32_t found = 0;

  while (i < len) {
    size_t s = i, e, c1, c2;
    uint32_t j = 0;
    while (i < len && text[i] != '\n')
      i++;
    e = i;
    i++;
    /* hierarchy-id:controllers:path; the path may itself contain ':'. */
    for (c1 = s; c1 < e && text[c1] != ':'; c1++)
      if (text[c1] == '\0')
        return 0;
    if (c1 == e || c1 == s)
      continue;
    for (size_t k = s; k < c1; k++)
      if (text[k] < '0' || text[k] > '9')
        goto next;
    for (c2 = c1 + 1; c2 < e && text[c2] != ':'; c2++)
      ;
    if (c2 == e)
      continue;
    for (size_t k = c2 + 1; k < e; k++)
      if (text[k] == '\0')
        return 0;
    if (path_job(text + c2 + 1, e - c2 - 1, &j)) {
      if (found != 0 && found != j)
        return 0; /* lines disagree: no guess */
      found = j;
    }
  next:;
  }
  if (found == 0)
    return 0;
  *job = found;
  return 1;
}

int sm_gpu_environ_job(const char *data, size_t len, uint32_t *job) {
  static const char *const keys[] = {"SLURM_JOB_ID=", "SLURM_JOBID="};
  size_t i = 0;

  for (int k = 0; k < 2; k++) {
    size_t kl = strlen(keys[k]);
    i = 0;
    while (i < len) {
      size_t s = i;
      while (i < len && data[i] != '\0')
        i++;
      if (i - s > kl && memcmp(data + s, keys[k], kl) == 0)
        return job_number(data + s + kl, i - s - kl, job);
      i++;
    }
  }
  return 0;
}

long sm__read_small_at(int dir_fd, const char *name, char *buf, size_t max) {
  int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  size_t got = 0;

  if (fd < 0)
    return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  while (got < max) {
    ssize_t r = read(fd, buf + got, max - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      close(fd);
      return -1;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = '\0';
  return (long)got;
}

int sm_gpu_pid_job(const char *proc_root, uint32_t pid, uint32_t *job) {
  char name[16];
  char *buf;
  int root, dir, how = SM_GPU_MAP_NONE;
  long n;

  if (pid == 0)
    return SM_GPU_MAP_NONE;
  root =
      open(proc_root ? proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return SM_GPU_MAP_NONE;
  snprintf(name, sizeof(name), "%u", (unsigned)pid);
  dir = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  close(root);
  if (dir < 0)
    return SM_GPU_MAP_NONE;
  buf = sm_malloc(ENVIRON_MAX + 1);
  if (buf != NULL) {
    n = sm__read_small_at(dir, "cgroup", buf, CGROUP_MAX);
    if (n > 0 && sm_gpu_cgroup_job(buf, (size_t)n, job))
      how = SM_GPU_MAP_CGROUP;
    if (how == SM_GPU_MAP_NONE) {
      n = sm__read_small_at(dir, "environ", buf, ENVIRON_MAX);
      if (n > 0 && sm_gpu_environ_job(buf, (size_t)n, job))
        how = SM_GPU_MAP_ENV;
    }
    sm_free(buf);
  }
  close(dir);
  return how;
}

int sm__write_atomic(const char *path, const char *text, size_t len,
                     sm_err *err) {
  char tmp[4200];
  const char *slash = strrchr(path, '/');
  int fd, n;
  size_t off = 0;

  n = slash ? snprintf(tmp, sizeof(tmp), "%.*s/.%s.tmp%ld", (int)(slash - path),
                       path, slash + 1, (long)getpid())
            : snprintf(tmp, sizeof(tmp), ".%s.tmp%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof(tmp))
    return sm_err_set(err, SM_EINVAL, "%s: path too long", path);
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", tmp,
                      strerror(errno));
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      return sm_err_set(err, sm_err_from_errno(e), "%s: %s", tmp, strerror(e));
    }
    off += (size_t)w;
  }
  if (close(fd) != 0 || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
  }
  return 0;
}
