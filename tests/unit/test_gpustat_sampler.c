/* test_gpustat_sampler.c - the per-node sampler against the fake NVML
 * (tests/nvml/fake_nvml.c, built next to this runner): per-process and
 * device-level attribution, processes that come and go, a GPU that is
 * lost (an infrastructure signal the Failure Handler classifies, and the
 * other GPUs still sampled), failing calls, both process entry layouts,
 * and a node without NVML. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm_failure.h"
#include "schedmate/sm_gpustat.h"

typedef struct fx {
  char dir[64];     /* scratch */
  char proc[128];   /* /proc-like root */
  char out[128];    /* job files */
  char script[128]; /* the fake's script */
  char lib[PATH_MAX + 64];
  char log[8192]; /* what the sampler logged */
} fx;

static void log_cb(void *ud, int level, const char *msg) {
  fx *f = ud;
  size_t n = strlen(f->log);
  snprintf(f->log + n, sizeof(f->log) - n, "%d %s\n", level, msg);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void fx_init(fx *f, const char *script) {
  char exe[PATH_MAX];
  ssize_t n;
  memset(f, 0, sizeof(*f));
  snprintf(f->dir, sizeof(f->dir), "/tmp/sm-gpustat.XXXXXX");
  ASSERT(mkdtemp(f->dir) != NULL);
  snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
  snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
  snprintf(f->script, sizeof(f->script), "%s/nvml.script", f->dir);
  ASSERT_OK(mkdir(f->proc, 0755));
  write_text(f->script, script);
  setenv("FAKE_NVML_SCRIPT", f->script, 1);
  n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT(n > 0);
  exe[n] = '\0';
  *strrchr(exe, '/') = '\0';
  snprintf(f->lib, sizeof(f->lib), "%s/nvml/libnvidia-ml.so.1", exe);
  if (access(f->lib, R_OK) != 0)
    SM_FAIL_AT("%s missing: `make` builds it with the unit tests", f->lib);
}

static void fx_pid(fx *f, unsigned pid, const char *cgroup) {
  char p[300];
  snprintf(p, sizeof(p), "%s/%u", f->proc, pid);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/%u/cgroup", f->proc, pid);
  write_text(p, cgroup);
}

static sm_gpustat *fx_open(fx *f, sm_gpustat_opts *o) {
  sm_err err = {0};
  sm_gpustat *g;
  o->nvml_lib = f->lib;
  o->proc_root = f->proc;
  o->out_dir = f->out;
  o->node = "n1";
  o->log = log_cb;
  o->log_ud = f;
  if (o->interval_s == 0)
    o->interval_s = 1;
  g = sm_gpustat_open(o, &err);
  if (g == NULL)
    SM_FAIL_AT("open: %s", err.msg);
  return g;
}

static void fx_free(fx *f) {
  char cmd[200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
  ASSERT_EQ(system(cmd), 0);
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* The number of result files of a job, and the nth (by name) parsed. */
static int job_files(const fx *f, unsigned job) {
  char d[300];
  struct dirent **names;
  int n, k = 0;
  snprintf(d, sizeof(d), "%s/%u", f->out, job);
  n = scandir(d, &names, NULL, by_name);
  if (n < 0)
    return 0;
  for (int i = 0; i < n; i++) {
    k +=
        strstr(names[i]->d_name, ".json") != NULL && names[i]->d_name[0] != '.';
    free(names[i]);
  }
  free(names);
  return k;
}

static cJSON *job_file(const fx *f, unsigned job, int nth) {
  char d[300], p[600];
  struct dirent **names;
  int n, k = 0;
  cJSON *o = NULL;
  snprintf(d, sizeof(d), "%s/%u", f->out, job);
  n = scandir(d, &names, NULL, by_name);
  ASSERT(n >= 0);
  for (int i = 0; i < n; i++) {
    if (o == NULL && names[i]->d_name[0] != '.' &&
        strstr(names[i]->d_name, ".json") != NULL && k++ == nth) {
      FILE *fp;
      char *buf = malloc(1 << 20);
      size_t len;
      snprintf(p, sizeof(p), "%s/%s", d, names[i]->d_name);
      fp = fopen(p, "r");
      ASSERT(fp != NULL && buf != NULL);
      len = fread(buf, 1, (1 << 20) - 1, fp);
      buf[len] = '\0';
      fclose(fp);
      o = cJSON_Parse(buf);
      free(buf);
    }
    free(names[i]);
  }
  free(names);
  if (o == NULL)
    SM_FAIL_AT("no file %d for job %u", nth, job);
  return o;
}

static double jnum(const cJSON *o, const char *path) {
  char key[64];
  const char *p = path;
  const cJSON *x = o;
  while (*p && x) {
    size_t n = strcspn(p, ".");
    snprintf(key, sizeof(key), "%.*s", (int)n, p);
    x = cJSON_GetObjectItemCaseSensitive(x, key);
    p += n;
    if (*p == '.')
      p++;
  }
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void rounds(sm_gpustat *g, double t0, int n) {
  sm_err err = {0};
  for (int i = 0; i < n; i++)
    if (sm_gpustat_sample(g, t0 + i, &err) != 0)
      SM_FAIL_AT("round %d: %s", i, err.msg);
}

#define H100 "NVIDIA H100 80GB HBM3"

SM_TEST(gpustat_sampler_attributes_per_process) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *a, *b;
  sm_err err = {0};
  fx_init(&f, "driver 550.54.15\n"
              "device 0 81559 GPU-0e1f-aa " H100 "\n"
              "device 1 81559 GPU-0e1f-bb " H100 "\n"
              "row 0 95 60 50000 600 101:30000:70 202:20000:25\n"
              "repeat 9\n"
              "row 1 88 40 40000 550 101:40000:88\n"
              "repeat 9\n");
  fx_pid(&f, 101, "12:devices:/slurm/uid_1000/job_11/step_0/task_0\n");
  fx_pid(&f, 202,
         "0::/system.slice/slurmstepd.scope/job_22/step_0/user/"
         "task_0\n");
  o.series.warmup_s = 2;
  g = fx_open(&f, &o);
  ASSERT_EQ(sm_gpustat_device_count(g), 2);
  rounds(g, 1000, 10);
  ASSERT_OK(sm_gpustat_flush(g, 1010, 1, &err));
  ASSERT_EQ(job_files(&f, 11), 1);
  ASSERT_EQ(job_files(&f, 22), 1);
  a = job_file(&f, 11, 0);
  b = job_file(&f, 22, 0);
  ASSERT_STREQ(jstr(a, "format"), "schedmate-gpustat/1");
  ASSERT_STREQ(jstr(a, "driver_version"), "550.54.15");
  ASSERT_STREQ(jstr(a, "attribution"), "process");
  ASSERT_STREQ(jstr(a, "mapped_by"), "cgroup");
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(a, "final")));
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "devices")), 2);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(b, "devices")), 1);
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(a, "devices"), 0), "name"),
      H100);
  /* Job 11: 70 % on GPU 0, 88 % on GPU 1; its busiest GPU holds 40000 MiB;
   * bandwidth and power only from GPU 1, where it is alone. */
  ASSERT_NEAR(jnum(a, "summary.sm_util.mean"), 79, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.sm_util.p95"), 79, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.gpu_mem_mib"), 40000, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.mem_bw_util.mean"), 40, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.power_w.mean"), 550, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.samples"), 10, 1e-9);
  ASSERT_NEAR(jnum(a, "first_sample"), 1000, 1e-9);
  ASSERT_NEAR(jnum(a, "last_sample"), 1009, 1e-9);
  /* Job 22 shares GPU 0: its own SM and memory, no device figures. */
  ASSERT_NEAR(jnum(b, "summary.sm_util.mean"), 25, 1e-9);
  ASSERT_NEAR(jnum(b, "summary.gpu_mem_mib"), 20000, 1e-9);
  ASSERT_NEAR(jnum(b, "summary.mem_bw_util.n"), 0, 1e-9);
  ASSERT_NEAR(jnum(b, "summary.power_w.n"), 0, 1e-9);
  cJSON_Delete(a);
  cJSON_Delete(b);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_device_level_when_no_process_util) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *a, *b, *c;
  sm_buf sb;
  sm_jw w;
  cJSON *st;
  sm_err err = {0};
  fx_init(&f, "driver 470.182.03\n"
              "procutil off\n"
              "device 0 16160 GPU-v100-0 Tesla V100-SXM2-16GB\n"
              "device 1 16160 GPU-v100-1 Tesla V100-SXM2-16GB\n"
              "device 2 16160 GPU-v100-2 Tesla V100-SXM2-16GB\n"
              "row 0 93 55 12000 250 101:11000\n"
              "repeat 5\n"
              "row 1 50 30 9000 180 101:4000 202:5000\n"
              "repeat 5\n"
              "row 2 64 20 8000 150 303:6000 999:2000\n"
              "repeat 5\n");
  fx_pid(&f, 101, "0::/system.slice/slurmstepd.scope/job_11/step_0\n");
  fx_pid(&f, 202, "0::/system.slice/slurmstepd.scope/job_22/step_0\n");
  fx_pid(&f, 303, "0::/system.slice/slurmstepd.scope/job_33/step_0\n");
  /* 999: a process outside any job (no entry at all). */
  o.series.warmup_s = -1;
  g = fx_open(&f, &o);
  rounds(g, 2000, 6);
  sm_buf_init(&sb, 0);
  sm_jw_init(&w, &sb);
  sm_gpustat_status_json(g, &w);
  ASSERT_OK(sm_jw_finish(&w));
  st = cJSON_Parse(sb.data);
  ASSERT(st != NULL);
  ASSERT_NEAR(jnum(st, "unattributed.processes"), 1, 1e-9);
  ASSERT_NEAR(jnum(st, "unattributed.mem_mib"), 2000, 1e-9);
  ASSERT_STREQ(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 0),
                    "attribution"),
               "device");
  cJSON_Delete(st);
  sm_buf_release(&sb);
  ASSERT_OK(sm_gpustat_flush(g, 2006, 1, &err));
  a = job_file(&f, 11, 0);
  b = job_file(&f, 22, 0);
  c = job_file(&f, 33, 0);
  /* Job 11: alone on GPU 0 (the device's 93 %), shares GPU 1 (unknown). */
  ASSERT_STREQ(jstr(a, "attribution"), "device");
  ASSERT_NEAR(jnum(a, "summary.sm_util.mean"), 93, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.gpu_mem_mib"), 11000, 1e-9);
  ASSERT_NEAR(jnum(a, "summary.power_w.mean"), 250, 1e-9);
  /* Job 22 only shares: no SM figure is invented, memory is its own. */
  ASSERT_NEAR(jnum(b, "summary.sm_util.n"), 0, 1e-9);
  ASSERT(isnan(jnum(b, "summary.sm_util.mean")));
  ASSERT_NEAR(jnum(b, "summary.gpu_mem_mib"), 5000, 1e-9);
  ASSERT(jstr(b, "attribution") == NULL);
  /* Job 33 shares GPU 2 with a process in no job: the same. */
  ASSERT_NEAR(jnum(c, "summary.sm_util.n"), 0, 1e-9);
  ASSERT_NEAR(jnum(c, "summary.gpu_mem_mib"), 6000, 1e-9);
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(c);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_processes_come_and_go) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *x;
  sm_err err = {0};
  fx_init(&f, "driver 535.104.05\n"
              "device 0 40960 GPU-a100-0 NVIDIA A100-PCIE-40GB\n"
              "row 0 80 30 20000 200 101:20000:80\n"
              "repeat 4\n"
              "row 0 0 0 0 40\n"
              "repeat 4\n"
              "row 0 60 30 10000 180 202:10000:60\n"
              "repeat 4\n"
              "row 0 40 30 15000 170 101:15000:40\n"
              "repeat 4\n"
              "row 0 0 0 0 40\n");
  fx_pid(&f, 101, "0::/system.slice/slurmstepd.scope/job_11/step_0\n");
  fx_pid(&f, 202, "0::/system.slice/slurmstepd.scope/job_22/step_0\n");
  o.idle_end_s = 3;
  o.flush_s = 2;
  o.series.warmup_s = -1;
  g = fx_open(&f, &o);
  /* Rounds at t = 0..12: job 11 is seen 0..4, gone at 7; job 22 from 10. */
  rounds(g, 0, 13);
  ASSERT_EQ(job_files(&f, 11), 1);
  x = job_file(&f, 11, 0);
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(x, "final")));
  ASSERT_NEAR(jnum(x, "summary.samples"), 5, 1e-9);
  ASSERT_NEAR(jnum(x, "last_sample"), 4, 1e-9);
  ASSERT_NEAR(jnum(x, "summary.sm_util.mean"), 80, 1e-9);
  cJSON_Delete(x);
  /* Job 22 runs: its file is rewritten (flush every 2 s), not final. */
  ASSERT_EQ(job_files(&f, 22), 1);
  x = job_file(&f, 22, 0);
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(x, "final")));
  ASSERT_NEAR(jnum(x, "sampled_until"), 12, 1e-9);
  ASSERT_NEAR(jnum(x, "summary.samples"), 3, 1e-9);
  cJSON_Delete(x);
  /* t = 13..24: job 22 ends, job 11 comes back: a second segment. */
  rounds(g, 13, 12);
  ASSERT_OK(sm_gpustat_flush(g, 25, 1, &err));
  ASSERT_EQ(job_files(&f, 22), 1);
  ASSERT_EQ(job_files(&f, 11), 2);
  x = job_file(&f, 11, 1);
  ASSERT_NEAR(jnum(x, "first_sample"), 15, 1e-9);
  ASSERT_NEAR(jnum(x, "summary.samples"), 5, 1e-9);
  ASSERT_NEAR(jnum(x, "summary.sm_util.mean"), 40, 1e-9);
  ASSERT_NEAR(jnum(x, "summary.gpu_mem_mib"), 15000, 1e-9);
  cJSON_Delete(x);
  x = job_file(&f, 22, 0);
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(x, "final")));
  ASSERT_NEAR(jnum(x, "summary.samples"), 5, 1e-9);
  cJSON_Delete(x);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_gpu_lost_is_a_signal) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *a, *b, *e, *st;
  sm_buf sb;
  sm_jw w;
  sm_sigdb *db;
  sm_sigmatch m;
  sm_err err = {0};
  const char *line, *p;
  int lost_lines = 0;
  fx_init(&f, "driver 535.104.05\n"
              "device 0 81920 GPU-dead-0 NVIDIA A100-SXM4-80GB\n"
              "device 1 81920 GPU-live-1 NVIDIA A100-SXM4-80GB\n"
              "row 0 90 50 30000 350 101:30000:90\n"
              "repeat 2\n"
              "row 0 lost\n"
              "repeat 4\n"
              "row 0 0 0 0 60\n"
              "row 1 70 40 20000 300 202:20000:70\n");
  fx_pid(&f, 101, "0::/system.slice/slurmstepd.scope/job_11/step_0\n");
  fx_pid(&f, 202, "0::/system.slice/slurmstepd.scope/job_22/step_0\n");
  o.idle_end_s = 100;
  g = fx_open(&f, &o);
  rounds(g, 0, 6);
  /* GPU 0 is lost from round 3; GPU 1 is still sampled. */
  sm_buf_init(&sb, 0);
  sm_jw_init(&w, &sb);
  sm_gpustat_status_json(g, &w);
  ASSERT_OK(sm_jw_finish(&w));
  st = cJSON_Parse(sb.data);
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 0), "state"),
      "lost");
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 0), "error"),
      "NVML_ERROR_GPU_IS_LOST");
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 1), "state"),
      "ok");
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(st, "signals")), 1);
  cJSON_Delete(st);
  sm_buf_release(&sb);
  rounds(g, 6, 4); /* GPU 0 answers again at round 8 */
  ASSERT_OK(sm_gpustat_flush(g, 10, 1, &err));
  a = job_file(&f, 11, 0);
  b = job_file(&f, 22, 0);
  ASSERT_NEAR(jnum(a, "summary.samples"), 3, 1e-9);
  ASSERT_NEAR(jnum(b, "summary.samples"), 10, 1e-9);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(a, "errors")), 1);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(b, "errors")), 0);
  e = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "errors"), 0);
  ASSERT_STREQ(jstr(e, "error"), "NVML_ERROR_GPU_IS_LOST");
  ASSERT_STREQ(jstr(e, "category"), "infrastructure");
  ASSERT_STREQ(jstr(e, "component"), "gpu");
  ASSERT_STREQ(jstr(e, "uuid"), "GPU-dead-0");
  ASSERT_NEAR(jnum(e, "time"), 3, 1e-9);
  line = jstr(e, "line");
  ASSERT(strstr(line, "node n1: GPU 0 (GPU-dead-0") != NULL);
  /* The Failure Handler reads the line as a GPU infrastructure fault. */
  db = sm_sigdb_new();
  ASSERT_OK(sm_sigdb_load_builtin(db, &err));
  ASSERT_EQ(sm_sigdb_match(db, line, strlen(line), &m), 1);
  ASSERT_STREQ(m.category, "infrastructure");
  ASSERT_STREQ(m.component, "gpu");
  sm_sigdb_free(db);
  /* Logged once when lost, once when back: not at every round. */
  for (p = f.log; (p = strstr(p, "NVML_ERROR_GPU_IS_LOST")) != NULL; p++)
    lost_lines++;
  ASSERT_EQ(lost_lines, 1);
  ASSERT(strstr(f.log, "GPU 0 (GPU-dead-0) answers again") != NULL);
  cJSON_Delete(a);
  cJSON_Delete(b);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_failing_calls_and_layouts) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *a, *b, *c, *st;
  sm_buf sb;
  sm_jw w;
  sm_err err = {0};
  /* 32-byte process entries; GPU 0 fails its power and process
   * utilisation queries and reports neither device memory nor the
   * process's. */
  fx_init(&f, "driver 535.54.03\n"
              "layout 32\n"
              "device 0 24576 GPU-l4-0 NVIDIA L4\n"
              "device 1 24576 GPU-l4-1 NVIDIA L4\n"
              "row 0 77 20 - 70 101:- !power=999 !putil=999\n"
              "repeat 3\n"
              "row 1 60 20 9000 60 101:1000:10 202:3000:20 303:5000:30\n"
              "repeat 3\n");
  fx_pid(&f, 101, "0::/system.slice/slurmstepd.scope/job_11/step_0\n");
  fx_pid(&f, 202, "0::/system.slice/slurmstepd.scope/job_22/step_0\n");
  fx_pid(&f, 303, "0::/system.slice/slurmstepd.scope/job_33/step_0\n");
  o.series.warmup_s = -1;
  g = fx_open(&f, &o);
  rounds(g, 0, 4);
  sm_buf_init(&sb, 0);
  sm_jw_init(&w, &sb);
  sm_gpustat_status_json(g, &w);
  ASSERT_OK(sm_jw_finish(&w));
  st = cJSON_Parse(sb.data);
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 0), "state"),
      "error");
  ASSERT_STREQ(
      jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(st, "devices"), 0), "error"),
      "NVML_ERROR_UNKNOWN");
  cJSON_Delete(st);
  sm_buf_release(&sb);
  ASSERT_OK(sm_gpustat_flush(g, 4, 1, &err));
  a = job_file(&f, 11, 0);
  b = job_file(&f, 22, 0);
  c = job_file(&f, 33, 0);
  /* Job 11: GPU 0 from the device (alone there, no per-process figure
   * this round), GPU 1 per process: (77 + 10) / 2. */
  ASSERT_NEAR(jnum(a, "summary.sm_util.mean"), 43.5, 1e-9);
  /* Memory on GPU 0 unknown, 1000 MiB on GPU 1. */
  ASSERT_NEAR(jnum(a, "summary.gpu_mem_mib"), 1000, 1e-9);
  ASSERT_STREQ(jstr(a, "attribution"), "mixed");
  /* Entries read at the right stride. */
  ASSERT_NEAR(jnum(b, "summary.gpu_mem_mib"), 3000, 1e-9);
  ASSERT_NEAR(jnum(b, "summary.sm_util.mean"), 20, 1e-9);
  ASSERT_NEAR(jnum(c, "summary.gpu_mem_mib"), 5000, 1e-9);
  ASSERT_NEAR(jnum(c, "summary.sm_util.mean"), 30, 1e-9);
  ASSERT(strstr(f.log, "nvmlDeviceGetPowerUsage failed") != NULL);
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(c);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_open_without_nvml) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_err err = {0};
  fx_init(&f, "driver 1\n");
  /* Not installed. */
  o.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  ASSERT(sm_gpustat_open(&o, &err) == NULL);
  ASSERT_EQ(err.code, SM_ENOENT);
  ASSERT(strstr(err.msg, "NVML is not available") != NULL);
  /* Installed, driver not loaded. */
  sm_err_clear(&err);
  unsetenv("FAKE_NVML_SCRIPT");
  o.nvml_lib = f.lib;
  ASSERT(sm_gpustat_open(&o, &err) == NULL);
  ASSERT_EQ(err.code, SM_EIO);
  ASSERT(strstr(err.msg, "NVML_ERROR_DRIVER_NOT_LOADED") != NULL);
  /* A library that is not NVML. */
  sm_err_clear(&err);
  o.nvml_lib = "libz.so.1";
  ASSERT(sm_gpustat_open(&o, &err) == NULL);
  ASSERT_EQ(err.code, SM_EUNSUPP);
  ASSERT(strstr(err.msg, "has no nvmlInit") != NULL);
  fx_free(&f);
}

SM_TEST(gpustat_open_bad_script_and_output) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_err err = {0};
  char p[300];
  fx_init(&f, "device 0 100 GPU-x X\nrow 7 1 1 1 1\n");
  o.nvml_lib = f.lib;
  ASSERT(sm_gpustat_open(&o, &err) == NULL);
  ASSERT_EQ(err.code, SM_EIO);
  /* An output directory that cannot be created. */
  write_text(f.script, "device 0 100 GPU-x X\n");
  snprintf(p, sizeof(p), "%s/file", f.dir);
  write_text(p, "x");
  snprintf(p, sizeof(p), "%s/file/out", f.dir);
  o.out_dir = p;
  sm_err_clear(&err);
  ASSERT(sm_gpustat_open(&o, &err) == NULL);
  ASSERT(strstr(err.msg, "cannot create") != NULL);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_holds_a_process_sample_then_reads_idle) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  cJSON *a, *ser;
  sm_err err = {0};
  /* One busy round, then the process has no more samples (idle). */
  fx_init(&f, "device 0 81920 GPU-0 NVIDIA A100-SXM4-80GB\n"
              "row 0 50 10 1000 100 101:1000:50\n"
              "row 0 0 0 1000 60 101:1000:0\n");
  fx_pid(&f, 101, "0::/system.slice/slurmstepd.scope/job_11/step_0\n");
  o.series.warmup_s = -1;
  o.series_points = 3;
  o.interval_s = 0.1; /* a sample holds for max(1 s, 1.5 intervals) */
  g = fx_open(&f, &o);
  rounds(g, 0, 2); /* the second round comes before the driver's next
                    * sample: the last one holds */
  usleep(1200 * 1000);
  rounds(g, 2, 1); /* more than 1 s without a sample: idle */
  ASSERT_OK(sm_gpustat_flush(g, 3, 1, &err));
  a = job_file(&f, 11, 0);
  ser = cJSON_GetObjectItem(cJSON_GetObjectItem(a, "series"), "sm_util");
  ASSERT_EQ(cJSON_GetArraySize(ser), 3);
  ASSERT_NEAR(cJSON_GetArrayItem(ser, 0)->valuedouble, 50, 1e-9);
  ASSERT_NEAR(cJSON_GetArrayItem(ser, 1)->valuedouble, 50, 1e-9);
  ASSERT_NEAR(cJSON_GetArrayItem(ser, 2)->valuedouble, 0, 1e-9);
  cJSON_Delete(a);
  sm_gpustat_close(g);
  fx_free(&f);
}

SM_TEST(gpustat_sampler_removes_only_its_old_files) {
  fx f;
  sm_gpustat_opts o = {0};
  sm_gpustat *g;
  char p[400];
  struct timespec old[2] = {{1000000000 - 5000, 0}, {1000000000 - 5000, 0}};
  struct timespec fresh[2] = {{1000000000 - 10, 0}, {1000000000 - 10, 0}};
  fx_init(&f, "device 0 100 GPU-0 NVIDIA T4\nrow 0 0 0 0 10\n");
  snprintf(p, sizeof(p), "%s", f.out);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/31", f.out);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/32", f.out);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/31/n1.1.json", f.out);
  write_text(p, "{}");
  ASSERT_OK(utimensat(AT_FDCWD, p, old, 0));
  snprintf(p, sizeof(p), "%s/31/n2.1.json", f.out); /* another node's */
  write_text(p, "{}");
  ASSERT_OK(utimensat(AT_FDCWD, p, old, 0));
  snprintf(p, sizeof(p), "%s/32/n1.2.json", f.out);
  write_text(p, "{}");
  ASSERT_OK(utimensat(AT_FDCWD, p, old, 0));
  snprintf(p, sizeof(p), "%s/32/n1.3.json", f.out); /* recent */
  write_text(p, "{}");
  ASSERT_OK(utimensat(AT_FDCWD, p, fresh, 0));
  o.keep_s = 1000;
  g = fx_open(&f, &o);
  rounds(g, 1000000000, 1);
  snprintf(p, sizeof(p), "%s/31/n1.1.json", f.out);
  ASSERT(access(p, F_OK) != 0);
  snprintf(p, sizeof(p), "%s/31/n2.1.json", f.out);
  ASSERT_OK(access(p, F_OK));
  snprintf(p, sizeof(p), "%s/32/n1.2.json", f.out);
  ASSERT(access(p, F_OK) != 0);
  snprintf(p, sizeof(p), "%s/32/n1.3.json", f.out);
  ASSERT_OK(access(p, F_OK));
  sm_gpustat_close(g);
  fx_free(&f);
}
