/* test_gpustat_map.c - GPU processes to Slurm jobs: cgroup v1 and v2 files
 * as Slurm writes them, the environment fallback, and malformed content
 * (empty, binary, huge lines, invalid UTF-8, wrong numbers, conflicting
 * lines), read from a /proc-like root written by the test. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_gpustat.h"

static int cg(const char *text, uint32_t *job) {
  *job = 0;
  return sm_gpu_cgroup_job(text, strlen(text), job);
}

SM_TEST(gpustat_cgroup_v1_and_v2_paths) {
  uint32_t j;
  /* cgroup v1: one line per hierarchy, all naming the job. */
  ASSERT_EQ(cg("12:pids:/slurm/uid_1000/job_4711/step_0/task_0\n"
               "11:devices:/slurm/uid_1000/job_4711/step_0/task_0\n"
               "5:memory:/slurm/uid_1000/job_4711/step_0/task_0\n"
               "3:cpu,cpuacct:/slurm/uid_1000/job_4711/step_0/task_0\n"
               "1:name=systemd:/system.slice/slurmd.service\n"
               "0::/system.slice/slurmd.service\n",
               &j),
            1);
  ASSERT_EQ(j, 4711);
  /* Several slurmd on one host: /slurm_<node>/. */
  ASSERT_EQ(cg("4:devices:/slurm_n3/uid_0/job_88/step_batch\n", &j), 1);
  ASSERT_EQ(j, 88);
  /* cgroup v2 (cgroup/v2 plugin): one line. */
  ASSERT_EQ(cg("0::/system.slice/slurmstepd.scope/job_123456/step_0/user/"
               "task_0\n",
               &j),
            1);
  ASSERT_EQ(j, 123456);
  /* The step_extern and interactive steps are in the job too. */
  ASSERT_EQ(
      cg("0::/system.slice/slurmstepd.scope/job_9/step_extern/user\n", &j), 1);
  ASSERT_EQ(j, 9);
  /* No trailing newline. */
  ASSERT_EQ(cg("0::/system.slice/slurmstepd.scope/job_77/step_0", &j), 1);
  ASSERT_EQ(j, 77);
}

SM_TEST(gpustat_cgroup_not_a_slurm_job) {
  uint32_t j;
  ASSERT_EQ(cg("", &j), 0);
  ASSERT_EQ(cg("0::/\n", &j), 0);
  ASSERT_EQ(cg("0::/user.slice/user-1000.slice/session-3.scope\n", &j), 0);
  /* job_ outside a Slurm hierarchy (another system's directories). */
  ASSERT_EQ(cg("0::/kubepods/besteffort/job_42/ctr\n", &j), 0);
  ASSERT_EQ(cg("0::/job_42\n", &j), 0);
  /* slurmd itself is not in a job. */
  ASSERT_EQ(cg("0::/system.slice/slurmstepd.scope/system\n", &j), 0);
}

SM_TEST(gpustat_cgroup_malformed) {
  uint32_t j;
  char big[200000];
  /* Wrong numbers: leading zero, letters, zero, overflow, empty. */
  ASSERT_EQ(cg("0::/slurm/uid_0/job_042/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_4x2/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_0/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_99999999999/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_4294967295/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_/step_0\n", &j), 0);
  ASSERT_EQ(cg("0::/slurm/uid_0/job_-5/step_0\n", &j), 0);
  /* No hierarchy fields, a non-numeric hierarchy id. */
  ASSERT_EQ(cg("/slurm/uid_0/job_5/step_0\n", &j), 0);
  ASSERT_EQ(cg("x::/slurm/uid_0/job_5/step_0\n", &j), 0);
  ASSERT_EQ(cg("0:/slurm/uid_0/job_5\n", &j), 0);
  /* Lines that disagree: no guess. */
  ASSERT_EQ(cg("4:devices:/slurm/uid_0/job_5/step_0\n"
               "3:memory:/slurm/uid_0/job_6/step_0\n",
               &j),
            0);
  /* Binary (a NUL inside) and invalid UTF-8. */
  ASSERT_EQ(sm_gpu_cgroup_job("0::/slurm/job_5\0/x\n", 19, &j), 0);
  ASSERT_EQ(cg("0::/slurm\xff\xfe/job_5/step_0\n", &j), 1);
  ASSERT_EQ(j, 5);
  ASSERT_EQ(cg("0::/\xc3\x28/job_5\n", &j), 0);
  /* A huge line before the real one. */
  memset(big, 'a', sizeof(big));
  memcpy(big, "1:x:/", 5);
  strcpy(big + sizeof(big) - 64, "\n0::/system.slice/slurmstepd.scope/job_31");
  ASSERT_EQ(cg(big, &j), 1);
  ASSERT_EQ(j, 31);
  /* Colons inside the path are path. */
  ASSERT_EQ(cg("0::/slurm/uid_0/job_12/a:b\n", &j), 1);
  ASSERT_EQ(j, 12);
}

SM_TEST(gpustat_environ_job) {
  uint32_t j = 0;
  static const char env1[] = "PATH=/usr/bin\0SLURM_JOB_ID=321\0HOME=/root";
  static const char env2[] = "SLURM_JOBID=654\0X=1";
  static const char env3[] = "SLURM_JOB_ID=\0SLURM_JOB_IDX=5\0";
  static const char env4[] = "A=1\0SLURM_JOB_ID=77x\0";
  static const char env5[] = "MY_SLURM_JOB_ID=5\0";
  ASSERT_EQ(sm_gpu_environ_job(env1, sizeof(env1) - 1, &j), 1);
  ASSERT_EQ(j, 321);
  ASSERT_EQ(sm_gpu_environ_job(env2, sizeof(env2) - 1, &j), 1);
  ASSERT_EQ(j, 654);
  ASSERT_EQ(sm_gpu_environ_job(env3, sizeof(env3) - 1, &j), 0);
  ASSERT_EQ(sm_gpu_environ_job(env4, sizeof(env4) - 1, &j), 0);
  ASSERT_EQ(sm_gpu_environ_job(env5, sizeof(env5) - 1, &j), 0);
  ASSERT_EQ(sm_gpu_environ_job("", 0, &j), 0);
  /* Unterminated last entry. */
  ASSERT_EQ(sm_gpu_environ_job("SLURM_JOB_ID=9", 14, &j), 1);
  ASSERT_EQ(j, 9);
}

/* ==== A /proc-like root ==== */

static void put(const char *root, unsigned pid, const char *name,
                const char *data, size_t len) {
  char p[512];
  FILE *f;
  snprintf(p, sizeof(p), "%s/%u", root, pid);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/%u/%s", root, pid, name);
  f = fopen(p, "w");
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(data, 1, len, f), len);
  fclose(f);
}

SM_TEST(gpustat_pid_job_from_a_proc_root) {
  char root[] = "/tmp/sm-gpumap.XXXXXX", p[512], cmd[600];
  static const char env[] = "SLURM_JOB_ID=500\0";
  uint32_t j = 0;
  char *huge;
  ASSERT(mkdtemp(root) != NULL);
  /* cgroup wins over the environment. */
  put(root, 100, "cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_0\n",
      47);
  put(root, 100, "environ", env, sizeof(env) - 1);
  ASSERT_EQ(sm_gpu_pid_job(root, 100, &j), SM_GPU_MAP_CGROUP);
  ASSERT_EQ(j, 7);
  /* Without a Slurm cgroup (proctrack/pgid): the environment. */
  put(root, 101, "cgroup", "0::/system.slice/slurmd.service\n", 32);
  put(root, 101, "environ", env, sizeof(env) - 1);
  ASSERT_EQ(sm_gpu_pid_job(root, 101, &j), SM_GPU_MAP_ENV);
  ASSERT_EQ(j, 500);
  /* Neither. */
  put(root, 102, "cgroup", "0::/user.slice\n", 15);
  put(root, 102, "environ", "HOME=/root\0", 11);
  ASSERT_EQ(sm_gpu_pid_job(root, 102, &j), SM_GPU_MAP_NONE);
  /* A process that has gone, pid 0, a missing root. */
  ASSERT_EQ(sm_gpu_pid_job(root, 103, &j), SM_GPU_MAP_NONE);
  ASSERT_EQ(sm_gpu_pid_job(root, 0, &j), SM_GPU_MAP_NONE);
  ASSERT_EQ(sm_gpu_pid_job("/nonexistent/proc", 100, &j), SM_GPU_MAP_NONE);
  /* Empty and binary files. */
  put(root, 104, "cgroup", "", 0);
  put(root, 104, "environ", "\0\0\0\xff\xfe", 5);
  ASSERT_EQ(sm_gpu_pid_job(root, 104, &j), SM_GPU_MAP_NONE);
  /* A symbolic link for the pid directory or the file is not followed. */
  snprintf(p, sizeof(p), "%s/105", root);
  snprintf(cmd, sizeof(cmd), "%s/100", root);
  ASSERT_OK(symlink(cmd, p));
  ASSERT_EQ(sm_gpu_pid_job(root, 105, &j), SM_GPU_MAP_NONE);
  snprintf(p, sizeof(p), "%s/106", root);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/106/cgroup", root);
  snprintf(cmd, sizeof(cmd), "%s/100/cgroup", root);
  ASSERT_OK(symlink(cmd, p));
  ASSERT_EQ(sm_gpu_pid_job(root, 106, &j), SM_GPU_MAP_NONE);
  /* A FIFO does not block the sampler. */
  snprintf(p, sizeof(p), "%s/107", root);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/107/cgroup", root);
  ASSERT_OK(mkfifo(p, 0644));
  ASSERT_EQ(sm_gpu_pid_job(root, 107, &j), SM_GPU_MAP_NONE);
  /* Reading is bounded: a job line past 64 KiB of cgroup is not read. */
  huge = malloc(70000);
  ASSERT(huge != NULL);
  memset(huge, 'x', 70000);
  memcpy(huge, "1:x:/", 5);
  memcpy(huge + 70000 - 40, "\n0::/slurm/uid_0/job_66/step_0\n", 31);
  put(root, 108, "cgroup", huge, 70000 - 9);
  ASSERT_EQ(sm_gpu_pid_job(root, 108, &j), SM_GPU_MAP_NONE);
  free(huge);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  ASSERT_EQ(system(cmd), 0);
}

SM_TEST(gpustat_pid_job_real_proc_self) {
  uint32_t j = 0;
  /* This process: mapped only if the test runs inside a Slurm job. */
  int how = sm_gpu_pid_job("/proc", (uint32_t)getpid(), &j);
  if (getenv("SLURM_JOB_ID") == NULL)
    ASSERT(how == SM_GPU_MAP_NONE || how == SM_GPU_MAP_CGROUP);
  else
    ASSERT(how != SM_GPU_MAP_NONE);
}
