/* fuzz_gpustat.c - libFuzzer target: arbitrary bytes as what the GPU
 * sampler and the agent read from others: a /proc/PID/cgroup file, a
 * /proc/PID/environ file, sacct's output, and a sampler's result file in
 * the shared directory (the first byte chooses).  A job id or nothing,
 * never a crash, a hang or unbounded memory. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedmate/sm_gpustat.h"

static char dir[64];
static char file[128];

static void cleanup(void) {
  char d[100];
  unlink(file);
  snprintf(d, sizeof(d), "%s/42", dir);
  rmdir(d);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  char d[100];
  (void)argc;
  (void)argv;
  snprintf(dir, sizeof(dir), "/tmp/sm-fuzz-gpu-XXXXXX");
  if (mkdtemp(dir) == NULL)
    abort();
  snprintf(d, sizeof(d), "%s/42", dir);
  if (mkdir(d, 0755) != 0)
    abort();
  snprintf(file, sizeof(file), "%s/42/n1.1000.json", dir);
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data + 1;
  size_t len = size ? size - 1 : 0;
  uint32_t job = 0;
  sm_gpu_usage u;
  sm_err err = {0};

  if (size == 0)
    return 0;
  switch (data[0] % 4) {
  case 0:
    if (sm_gpu_cgroup_job(text, len, &job) == 1 &&
        (job == 0 || job == 0xFFFFFFFFu))
      abort();
    break;
  case 1:
    if (sm_gpu_environ_job(text, len, &job) == 1 && job == 0)
      abort();
    break;
  case 2:
    sm_gpu_usage_init(&u);
    if (sm_gpu_usage_sacct(text, len, 42, &u, &err) == 0 && u.found &&
        isfinite(u.sm_util) && (u.sm_util < 0 || u.sm_util > 100))
      abort();
    sm_gpu_usage_release(&u);
    break;
  default: {
    FILE *f = fopen(file, "wb");
    if (f == NULL)
      abort();
    fwrite(text, 1, len, f);
    fclose(f);
    sm_gpu_usage_init(&u);
    if (sm_gpu_usage_read(dir, 42, 1000, 2000, 1e12, &u, &err) == 0 &&
        u.found && isfinite(u.sm_util) && (u.sm_util < 0 || u.sm_util > 100))
      abort();
    sm_gpu_usage_release(&u);
  }
  }
  return 0;
}
