/* fuzz_slurm_request.c - libFuzzer target: arbitrary bytes as a request
 * of the job_submit plugin to the Slurm agent (sm_slurm_answer: JSON,
 * batch script, TRES strings) and as a TRES string alone.  The answer is
 * always one line starting with "OK " or "NO "; never a crash, a hang or
 * unbounded memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm.h"
#include "schedmate/sm_slurm.h"

static sm_slurm_agent *agent;

static int no_jobs(void *ud, sm_slurm_job **jobs, int *n, sm_err *err) {
  (void)ud;
  (void)err;
  *jobs = NULL;
  *n = 0;
  return 0;
}

static const sm_slurm_ops ops = {no_jobs, NULL, NULL, NULL, NULL, NULL};

static void cleanup(void) {
  sm_slurm_agent_free(agent);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  sm_slurm_opts o;
  sm_slurm_backend b;
  sm_err err = {0};

  (void)argc;
  (void)argv;
  memset(&o, 0, sizeof(o));
  memset(&b, 0, sizeof(b));
  o.enforce = 1;
  o.db = "mem:";
  o.answer_budget_s = 0.05;
  b.ops = &ops;
  snprintf(b.cluster, sizeof(b.cluster), "fuzz");
  agent = sm_slurm_agent_new(&o, &b, &err);
  if (agent == NULL)
    abort();
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sm_buf reply;
  char *tres;
  int n;

  sm_buf_init(&reply, 0);
  if (sm_slurm_answer(agent, (const char *)data, size, &reply) != 0)
    abort();
  if (reply.len < 4 || reply.data[reply.len - 1] != '\n' ||
      (strncmp(reply.data, "OK ", 3) != 0 &&
       strncmp(reply.data, "NO ", 3) != 0) ||
      memchr(reply.data, '\n', reply.len - 1) != NULL)
    abort();
  sm_buf_release(&reply);
  tres = sm_strndup((const char *)data, size);
  if (tres != NULL) {
    char type[16];
    if (sm_slurm_parse_gpus(tres, &n, type, sizeof(type)) == 0 &&
        (n < 0 || strlen(type) >= sizeof(type)))
      abort();
    sm_free(tres);
  }
  return 0;
}
