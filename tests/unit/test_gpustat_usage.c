/* test_gpustat_usage.c - what the agent reads back: node files merged over
 * nodes, waiting for a sampler that has not reached the run's end, files
 * of other runs, malformed files; and Slurm's accounting (sacct's TRES
 * usage) for nodes without NVML.  The files and sacct outputs are written
 * here in the documented formats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm_gpustat.h"

typedef struct nodefile {
  const char *node;
  double first, last, until;
  int final, gpus, steady;
  double sm, peak;
  const char *error_line; /* an infrastructure signal, or NULL */
} nodefile;

static void put_file(const char *dir, unsigned job, const nodefile *n) {
  char p[512];
  FILE *f;
  snprintf(p, sizeof(p), "%s/%u", dir, job);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/%u/%s.%lld.json", dir, job, n->node,
           (long long)(n->first * 1000));
  f = fopen(p, "w");
  ASSERT(f != NULL);
  fprintf(f,
          "{\"format\":\"schedmate-gpustat/1\",\"job_id\":%u,\"node\":\"%s\","
          "\"first_sample\":%.3f,\"last_sample\":%.3f,\"sampled_until\":%.3f,"
          "\"interval_s\":1,\"flush_s\":10,\"idle_end_s\":60,\"final\":%s,"
          "\"sampler_stopped\":false,\"source\":\"nvml\","
          "\"driver_version\":\"535.104.05\",\"attribution\":\"process\","
          "\"mapped_by\":\"cgroup\",\"devices\":[",
          job, n->node, n->first, n->last, n->until,
          n->final ? "true" : "false");
  for (int g = 0; g < n->gpus; g++)
    fprintf(f,
            "%s{\"index\":%d,\"name\":\"NVIDIA A100-SXM4-80GB\","
            "\"uuid\":\"GPU-%s-%d\",\"mem_total_mib\":81920}",
            g ? "," : "", g, n->node, g);
  fprintf(f,
          "],\"summary\":{\"samples\":%d,\"stride\":1,\"steady\":true,"
          "\"steady_samples\":%d,\"warmup_s\":60,\"sm_util\":{\"n\":%d,"
          "\"mean\":%g,\"p50\":%g,\"p95\":%g,\"max\":%g},"
          "\"gpu_mem_mib\":%g},\"series\":{},\"errors\":[",
          n->steady + 60, n->steady, n->steady, n->sm, n->sm, n->sm, n->sm,
          n->peak);
  if (n->error_line)
    fprintf(f,
            "{\"time\":%.3f,\"device\":1,\"error\":\"NVML_ERROR_GPU_IS_LOST\","
            "\"category\":\"infrastructure\",\"component\":\"gpu\","
            "\"line\":\"%s\"}",
            n->last, n->error_line);
  fprintf(f, "],\"errors_dropped\":0}\n");
  fclose(f);
}

static void put_raw(const char *dir, unsigned job, const char *name,
                    const char *data, size_t len) {
  char p[512];
  FILE *f;
  snprintf(p, sizeof(p), "%s/%u", dir, job);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/%u/%s", dir, job, name);
  f = fopen(p, "w");
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(data, 1, len, f), len);
  fclose(f);
}

static void put_str(const char *dir, unsigned job, const char *name,
                    const char *text) {
  put_raw(dir, job, name, text, strlen(text));
}

static void rmrf(const char *d) {
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
  ASSERT_EQ(system(cmd), 0);
}

SM_TEST(gpustat_usage_merges_nodes) {
  char d[] = "/tmp/sm-gpuuse.XXXXXX";
  sm_gpu_usage u;
  sm_err err = {0};
  cJSON *o;
  nodefile a = {"n1", 1000, 1900, 1905, 1, 2, 300, 80, 30000, NULL};
  nodefile b = {"n2", 1001, 1899, 1902, 1, 2, 100, 60, 35000, NULL};
  ASSERT(mkdtemp(d) != NULL);
  put_file(d, 42, &a);
  put_file(d, 42, &b);
  sm_gpu_usage_init(&u);
  ASSERT_OK(sm_gpu_usage_read(d, 42, 1000, 1900, 1910, &u, &err));
  ASSERT_EQ(u.found, 1);
  ASSERT_EQ(u.nodes, 2);
  ASSERT_EQ(u.partial, 0);
  /* Weighted by steady samples x GPUs: (80 x 600 + 60 x 200) / 800. */
  ASSERT_NEAR(u.sm_util, 75, 1e-9);
  ASSERT_NEAR(u.gpu_mem_mib, 35000, 1e-9);
  ASSERT_STREQ(u.source, "nvml");
  ASSERT_STREQ(u.gpu_model, "NVIDIA A100-SXM4-80GB");
  ASSERT_STREQ(u.driver_version, "535.104.05");
  ASSERT(u.signals == NULL);
  o = cJSON_Parse(u.json);
  ASSERT(o != NULL);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(o, "nodes")), 2);
  ASSERT_STREQ(
      cJSON_GetObjectItem(
          cJSON_GetArrayItem(cJSON_GetObjectItem(o, "nodes"), 0), "node")
          ->valuestring,
      "n1");
  cJSON_Delete(o);
  sm_gpu_usage_release(&u);
  ASSERT(u.json == NULL && isnan(u.sm_util));
  rmrf(d);
}

SM_TEST(gpustat_usage_waits_for_the_sampler) {
  char d[] = "/tmp/sm-gpuuse.XXXXXX";
  sm_gpu_usage u;
  sm_err err = {0};
  /* The sampler last wrote at 1895; the run ended at 1900. */
  nodefile a = {"n1", 1000, 1895, 1895, 0, 1, 200, 70, 10000, NULL};
  ASSERT(mkdtemp(d) != NULL);
  put_file(d, 7, &a);
  sm_gpu_usage_init(&u);
  /* Wait: 2 x flush + 2 x interval + 5 = 27 s after the end. */
  ASSERT_EQ(sm_gpu_usage_read(d, 7, 1000, 1900, 1901, &u, &err), SM_EBUSY);
  ASSERT_EQ(sm_gpu_usage_read(d, 7, 1000, 1900, 1926, &u, &err), SM_EBUSY);
  /* After that, what is there, marked partial. */
  ASSERT_OK(sm_gpu_usage_read(d, 7, 1000, 1900, 1928, &u, &err));
  ASSERT_EQ(u.found, 1);
  ASSERT_EQ(u.partial, 1);
  ASSERT_NEAR(u.sm_util, 70, 1e-9);
  /* A sampler that sampled past the end is complete without "final". */
  a.until = 1901;
  put_file(d, 7, &a);
  ASSERT_OK(sm_gpu_usage_read(d, 7, 1000, 1900, 1901, &u, &err));
  ASSERT_EQ(u.partial, 0);
  sm_gpu_usage_release(&u);
  rmrf(d);
}

SM_TEST(gpustat_usage_other_runs_and_signals) {
  char d[] = "/tmp/sm-gpuuse.XXXXXX";
  sm_gpu_usage u;
  sm_err err = {0};
  /* Run 0 of the job (before the requeue) and run 1 on another node. */
  nodefile r0 = {"n2",
                 1000,
                 1500,
                 1600,
                 1,
                 1,
                 100,
                 90,
                 20000,
                 "schedmate gpustat: node n2: GPU 1 (GPU-x, NVIDIA "
                 "A100-SXM4-80GB): nvmlDeviceGetUtilizationRates failed: "
                 "NVML_ERROR_GPU_IS_LOST (GPU is lost)"};
  nodefile r1 = {"n3", 2000, 2600, 2700, 1, 1, 100, 40, 19000, NULL};
  ASSERT(mkdtemp(d) != NULL);
  put_file(d, 9, &r0);
  put_file(d, 9, &r1);
  sm_gpu_usage_init(&u);
  ASSERT_OK(sm_gpu_usage_read(d, 9, 2000, 2600, 2700, &u, &err));
  ASSERT_EQ(u.nodes, 1);
  ASSERT_NEAR(u.sm_util, 40, 1e-9);
  ASSERT(u.signals == NULL);
  ASSERT_OK(sm_gpu_usage_read(d, 9, 1000, 1500, 2700, &u, &err));
  ASSERT_EQ(u.nodes, 1);
  ASSERT_NEAR(u.sm_util, 90, 1e-9);
  ASSERT(u.signals != NULL);
  ASSERT(strstr(u.signals, "NVML_ERROR_GPU_IS_LOST") != NULL);
  ASSERT_STREQ(u.signal_node, "n2");
  /* A job nobody sampled, a directory that does not exist. */
  ASSERT_OK(sm_gpu_usage_read(d, 10, 1000, 1500, 2700, &u, &err));
  ASSERT_EQ(u.found, 0);
  ASSERT(isnan(u.sm_util));
  ASSERT_OK(
      sm_gpu_usage_read("/nonexistent/gpustat", 9, 1000, 1500, 2700, &u, &err));
  ASSERT_EQ(u.found, 0);
  sm_gpu_usage_release(&u);
  rmrf(d);
}

SM_TEST(gpustat_usage_skips_malformed_files) {
  char d[] = "/tmp/sm-gpuuse.XXXXXX";
  sm_gpu_usage u;
  sm_err err = {0};
  nodefile ok = {"n1", 1000, 1900, 1905, 1, 1, 100, 55, 9000, NULL};
  char *deep = malloc(200001), *big = malloc(5 << 20);
  ASSERT(mkdtemp(d) != NULL && deep != NULL && big != NULL);
  memset(deep, '[', 200000);
  deep[200000] = '\0';
  memset(big, ' ', 5 << 20);
  big[0] = '{';
  put_raw(d, 5, "bin.json",
          "\x7f"
          "ELF\0\0\xff\xfe",
          8);
  put_raw(d, 5, "empty.json", "", 0);
  put_str(d, 5, "array.json", "[1,2,3]");
  put_str(d, 5, "trunc.json", "{\"format\":\"schedmate-gpustat/1\",\"job_");
  put_raw(d, 5, "deep.json", deep, 200000);
  put_raw(d, 5, "big.json", big, 5 << 20);
  put_str(d, 5, "other.json", "{\"format\":\"something-else/2\",\"job_id\":5}");
  put_str(d, 5, "wrongjob.json",
          "{\"format\":\"schedmate-gpustat/1\",\"job_id\":6,"
          "\"first_sample\":1000,\"last_sample\":1900,\"sampled_until\":1905,"
          "\"summary\":{}}");
  put_str(d, 5, "types.json",
          "{\"format\":\"schedmate-gpustat/1\",\"job_id\":5,"
          "\"first_sample\":\"x\",\"last_sample\":1900,\"sampled_until\":1905,"
          "\"summary\":{}}");
  put_str(d, 5, "notes.txt", "not json");
  sm_gpu_usage_init(&u);
  /* Nothing usable: not found, and the first problem is reported. */
  ASSERT_OK(sm_gpu_usage_read(d, 5, 1000, 1900, 1910, &u, &err));
  ASSERT_EQ(u.found, 0);
  ASSERT(err.code != 0);
  /* With one good file among them. */
  put_file(d, 5, &ok);
  sm_err_clear(&err);
  ASSERT_OK(sm_gpu_usage_read(d, 5, 1000, 1900, 1910, &u, &err));
  ASSERT_EQ(u.found, 1);
  ASSERT_EQ(u.nodes, 1);
  ASSERT_NEAR(u.sm_util, 55, 1e-9);
  sm_gpu_usage_release(&u);
  free(deep);
  free(big);
  rmrf(d);
}

/* ==== sacct ==== */

static int sacct(const char *text, uint32_t job, sm_gpu_usage *u) {
  sm_err err = {0};
  return sm_gpu_usage_sacct(text, strlen(text), job, u, &err);
}

SM_TEST(gpustat_sacct_tres_usage) {
  sm_gpu_usage u;
  cJSON *o;
  sm_gpu_usage_init(&u);
  /* sacct -n -P --noconvert -o JobID,AllocTRES,TRESUsageInAve,
   * TRESUsageInMax for a one-node batch job with 4 GPUs. */
  ASSERT_OK(sacct(
      "4242|billing=32,cpu=32,gres/gpu=4,mem=256G,node=1||\n"
      "4242.batch|cpu=32,gres/gpu=4,mem=256G,node=1|cpu=05:12:09,energy=0,"
      "fs/disk=8713245,gres/gpumem=40777023488,gres/gpuutil=87,"
      "mem=10621726720,pages=12,vmem=10439041024|cpu=05:12:09,energy=0,"
      "fs/disk=8713245,gres/gpumem=40777023488,gres/gpuutil=100,"
      "mem=10621726720,pages=12,vmem=10439041024\n"
      "4242.extern|billing=32,cpu=32,gres/gpu=4,mem=256G,node=1|cpu=00:00:00,"
      "energy=0,fs/disk=5273,gres/gpumem=0,gres/gpuutil=0,mem=262144,"
      "pages=0,vmem=0|cpu=00:00:00,energy=0,fs/disk=5273,gres/gpumem=0,"
      "gres/gpuutil=0,mem=262144,pages=0,vmem=0\n",
      4242, &u));
  ASSERT_EQ(u.found, 1);
  ASSERT_STREQ(u.source, "sacct");
  ASSERT_NEAR(u.sm_util, 87, 1e-9);
  ASSERT_NEAR(u.gpu_mem_mib, 38888, 1e-9);
  o = cJSON_Parse(u.json);
  ASSERT(o != NULL);
  ASSERT_STREQ(cJSON_GetObjectItem(o, "step")->valuestring, "4242.batch");
  cJSON_Delete(o);
  /* A value above 100 is a sum over the step's GPUs; units with suffixes
   * (sacct without --noconvert); an array task's id. */
  ASSERT_OK(sacct("77_3.0|cpu=8,gres/gpu=4|gres/gpumem=20480M,"
                  "gres/gpuutil=350|gres/gpumem=21504M,gres/gpuutil=400\n",
                  77, &u));
  ASSERT_EQ(u.found, 1);
  ASSERT_NEAR(u.sm_util, 87.5, 1e-9);
  ASSERT_NEAR(u.gpu_mem_mib, 21504, 1e-9);
  sm_gpu_usage_release(&u);
}

SM_TEST(gpustat_sacct_not_reported) {
  sm_gpu_usage u;
  sm_gpu_usage_init(&u);
  /* A cluster that does not track GPU usage. */
  ASSERT_OK(sacct("55|cpu=4,mem=8G,node=1||\n"
                  "55.batch|cpu=4,mem=8G,node=1|cpu=00:01:00,mem=1G|"
                  "cpu=00:01:00,mem=1G\n",
                  55, &u));
  ASSERT_EQ(u.found, 0);
  ASSERT(isnan(u.sm_util) && isnan(u.gpu_mem_mib));
  /* Zeros everywhere (GPUs the plugin cannot read): unknown, not 0. */
  ASSERT_OK(sacct("56.batch|gres/gpu=1|gres/gpumem=0,gres/gpuutil=0|"
                  "gres/gpumem=0,gres/gpuutil=0\n",
                  56, &u));
  ASSERT_EQ(u.found, 0);
  /* A counter Slurm could not read. */
  ASSERT_OK(sacct("57.batch|gres/gpu=1|gres/gpumem=18446744073709551614,"
                  "gres/gpuutil=18446744073709551614|"
                  "gres/gpumem=18446744073709551614\n",
                  57, &u));
  ASSERT_EQ(u.found, 0);
  /* Empty output; another job's lines (420 is not 42). */
  ASSERT_OK(sacct("", 42, &u));
  ASSERT_EQ(u.found, 0);
  ASSERT_OK(sacct("420.batch|gres/gpu=1|gres/gpumem=1000000000,"
                  "gres/gpuutil=50|gres/gpumem=1000000000\n",
                  42, &u));
  ASSERT_EQ(u.found, 0);
  sm_gpu_usage_release(&u);
}

SM_TEST(gpustat_sacct_malformed) {
  sm_gpu_usage u;
  sm_err err = {0};
  sm_gpu_usage_init(&u);
  ASSERT_EQ(
      sacct("sacct: error: Slurm accounting storage is disabled\n", 5, &u),
      SM_EPARSE);
  ASSERT_EQ(sacct("5.batch|gres/gpu=1|gres/gpuutil=abc|\n", 5, &u), SM_EPARSE);
  ASSERT_EQ(sacct("5.batch|gres/gpu=1||gres/gpumem=\n", 5, &u), SM_EPARSE);
  ASSERT_EQ(sacct("5.batch|gres/gpu=1||gres/gpumem=-5\n", 5, &u), SM_EPARSE);
  ASSERT_EQ(sacct("5.batch|gres/gpu=1||gres/gpumem=1e999\n", 5, &u), SM_EPARSE);
  ASSERT_EQ(sm_gpu_usage_sacct("5.batch|a\0b|c|d\n", 15, 5, &u, &err),
            SM_EPARSE);
  ASSERT(strstr(err.msg, "binary") != NULL);
  ASSERT_EQ(u.found, 0);
  /* CRLF line ends are fine. */
  ASSERT_OK(sacct("5.0|gres/gpu=2|gres/gpumem=2147483648,gres/gpuutil=61|"
                  "gres/gpumem=2147483648\r\n",
                  5, &u));
  ASSERT_EQ(u.found, 1);
  ASSERT_NEAR(u.gpu_mem_mib, 2048, 1e-9);
  sm_gpu_usage_release(&u);
}
