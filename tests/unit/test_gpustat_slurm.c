/* test_gpustat_slurm.c - the Slurm agent's GPU write-back against a fake
 * cluster: ended jobs carry sm_util and gpu_mem_mib from the node
 * samplers' files (waiting for a sampler that has not reached the end),
 * a GPU lost under a failed job is diagnosed as a GPU fault and acted on,
 * and Slurm's accounting (a stand-in sacct) is used where no sampler
 * file exists, and never for jobs without GPUs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_slurm.h"

/* ==== A small fake cluster ==== */

#define MAXJ 8

typedef struct fake {
  sm_slurm_job jobs[MAXJ];
  char *scripts[MAXJ];
  int n;
  char ops[32][320];
  int nops;
} fake;

static char *sdup(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

static int f_load(void *ud, sm_slurm_job **out, int *n, sm_err *err) {
  fake *f = ud;
  sm_slurm_job *js = sm_calloc((size_t)f->n + 1, sizeof(*js));
  (void)err;
  for (int i = 0; i < f->n; i++) {
    const sm_slurm_job *s = &f->jobs[i];
    sm_slurm_job *d = &js[i];
    *d = *s;
    d->user = sdup(s->user);
    d->name = sdup(s->name);
    d->partition = sdup(s->partition);
    d->work_dir = sdup(s->work_dir);
    d->std_out = sdup(s->std_out);
    d->std_err = NULL;
    d->command = sdup(s->command);
    d->comment = NULL;
    d->gpu_type = NULL;
    d->nodes = sm_calloc((size_t)s->n_nodes + 1, sizeof(char *));
    for (int k = 0; k < s->n_nodes; k++)
      d->nodes[k] = sdup(s->nodes[k]);
  }
  *out = js;
  *n = f->n;
  return 0;
}

static int f_script(void *ud, uint32_t id, sm_buf *out, sm_err *err) {
  fake *f = ud;
  for (int i = 0; i < f->n; i++)
    if (f->jobs[i].id == id && f->scripts[i])
      return sm_buf_adds(out, f->scripts[i]);
  return sm_err_set(err, SM_ENOTFOUND, "no batch script for job %u", id);
}

static int f_update(void *ud, const sm_slurm_update *u, sm_err *err) {
  fake *f = ud;
  (void)err;
  if (f->nops < 32)
    snprintf(f->ops[f->nops++], sizeof(f->ops[0]), "update %u", u->job_id);
  return 0;
}

static int f_drain(void *ud, const char *node, const char *reason,
                   sm_err *err) {
  fake *f = ud;
  (void)err;
  if (f->nops < 32)
    snprintf(f->ops[f->nops++], sizeof(f->ops[0]), "drain %s %s", node, reason);
  return 0;
}

static int f_requeue(void *ud, uint32_t id, sm_err *err) {
  fake *f = ud;
  (void)err;
  if (f->nops < 32)
    snprintf(f->ops[f->nops++], sizeof(f->ops[0]), "requeue %u", id);
  return 0;
}

static const sm_slurm_ops ops = {f_load,  f_script,  f_update,
                                 f_drain, f_requeue, NULL};

typedef struct scratch {
  char dir[64], repo[128], db[128], gpu[128], sacct[128], calls[128];
} scratch;

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void scratch_init(scratch *s) {
  char p[256];
  snprintf(s->dir, sizeof(s->dir), "/tmp/sm-gpuslurm.XXXXXX");
  ASSERT(mkdtemp(s->dir) != NULL);
  snprintf(s->repo, sizeof(s->repo), "%s/repo", s->dir);
  snprintf(s->db, sizeof(s->db), "%s/history.db", s->dir);
  snprintf(s->gpu, sizeof(s->gpu), "%s/gpustat", s->dir);
  snprintf(s->sacct, sizeof(s->sacct), "%s/sacct", s->dir);
  snprintf(s->calls, sizeof(s->calls), "%s/sacct.calls", s->dir);
  ASSERT_OK(mkdir(s->repo, 0755));
  ASSERT_OK(mkdir(s->gpu, 0755));
  snprintf(p, sizeof(p), "%s/train.py", s->repo);
  write_text(p, "import argparse\nimport torchvision\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--model', default='resnet18')\n"
                "p.add_argument('--dataset', default='imagenet')\n"
                "p.add_argument('--epochs', type=int, default=10)\n"
                "args = p.parse_args()\n"
                "model = torchvision.models.__dict__[args.model]()\n");
}

static void scratch_free(scratch *s) {
  char cmd[200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
  ASSERT_EQ(system(cmd), 0);
}

static const char script[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:2\n"
    "srun python train.py --model resnet50 --epochs 90\n";

static sm_slurm_job *add(fake *f, const scratch *s, uint32_t id, int state,
                         double start, double end, const char *node,
                         const char *log) {
  sm_slurm_job *j = &f->jobs[f->n];
  struct stat st;
  memset(j, 0, sizeof(*j));
  j->id = id;
  j->state = state;
  j->uid = stat(s->repo, &st) == 0 ? st.st_uid : 0;
  j->user = sdup("ada");
  j->name = sdup("r50");
  j->partition = sdup("gpu");
  j->work_dir = sdup(s->repo);
  j->command = sdup("/home/ada/r50.sh");
  j->std_out = sdup(log);
  j->batch = 1;
  j->gpus_per_node = 2;
  j->req_nodes = 1;
  j->submit_time = start - 10;
  j->start_time = start;
  j->end_time = end;
  j->exit_status = state == SM_SJ_FAILED ? 1 << 8 : 0;
  j->nodes = sm_calloc(1, sizeof(char *));
  j->nodes[0] = sdup(node);
  j->n_nodes = 1;
  f->scripts[f->n] = sdup(script);
  f->n++;
  return j;
}

static void fake_free(fake *f) {
  for (int i = 0; i < f->n; i++) {
    sm_slurm_job_release(&f->jobs[i]);
    sm_free(f->scripts[i]);
  }
  f->n = 0;
}

static sm_slurm_agent *agent(fake *f, const scratch *s, int enforce,
                             const char *sacct) {
  sm_slurm_opts o;
  sm_slurm_backend b;
  sm_err err = {0};
  sm_slurm_agent *a;
  memset(&o, 0, sizeof(o));
  memset(&b, 0, sizeof(b));
  o.enforce = enforce;
  o.db = s->db;
  o.interval_s = 0.001;
  o.gpustat_dir = s->gpu;
  o.sacct = sacct;
  b.ops = &ops;
  b.ud = f;
  snprintf(b.cluster, sizeof(b.cluster), "fake");
  a = sm_slurm_agent_new(&o, &b, &err);
  if (a == NULL)
    SM_FAIL_AT("agent: %s", err.msg);
  return a;
}

/* A sampler's file for a job, in the documented format. */
static void sampler_file(const scratch *s, unsigned job, const char *node,
                         double first, double last, double until, int final,
                         double sm, double peak, const char *lost_line) {
  char p[512];
  FILE *f;
  snprintf(p, sizeof(p), "%s/%u", s->gpu, job);
  mkdir(p, 0755);
  snprintf(p, sizeof(p), "%s/%u/%s.%lld.json", s->gpu, job, node,
           (long long)(first * 1000));
  f = fopen(p, "w");
  ASSERT(f != NULL);
  fprintf(f,
          "{\"format\":\"schedmate-gpustat/1\",\"job_id\":%u,\"node\":\"%s\","
          "\"first_sample\":%.3f,\"last_sample\":%.3f,\"sampled_until\":%.3f,"
          "\"interval_s\":1,\"flush_s\":10,\"final\":%s,"
          "\"driver_version\":\"535.104.05\",\"devices\":["
          "{\"index\":0,\"name\":\"NVIDIA A100-SXM4-80GB\",\"uuid\":\"GPU-a\"},"
          "{\"index\":1,\"name\":\"NVIDIA A100-SXM4-80GB\",\"uuid\":\"GPU-b\"}"
          "],\"summary\":{\"steady_samples\":50,\"sm_util\":{\"n\":50,"
          "\"mean\":%g},\"gpu_mem_mib\":%g},\"errors\":[",
          job, node, first, last, until, final ? "true" : "false", sm, peak);
  if (lost_line)
    fprintf(f,
            "{\"time\":%.3f,\"device\":1,\"error\":\"NVML_ERROR_GPU_IS_LOST\","
            "\"category\":\"infrastructure\",\"component\":\"gpu\","
            "\"line\":\"%s\"}",
            last, lost_line);
  fprintf(f, "]}\n");
  fclose(f);
}

static int get(const scratch *s, const char *id, sm_record *r) {
  sm_err err = {0};
  sm_store *st = sm_store_open(s->db, 0, 0, &err);
  int rc;
  ASSERT(st != NULL);
  rc = sm_store_get(st, id, r, &err);
  sm_store_close(st);
  return rc;
}

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

SM_TEST(gpustat_slurm_writeback_from_sampler_files) {
  scratch s;
  fake f = {0};
  sm_slurm_agent *a;
  sm_record r;
  sm_err err = {0};
  cJSON *o, *g;
  scratch_init(&s);
  add(&f, &s, 1, SM_SJ_COMPLETED, 2000, 2100, "n1", NULL);
  add(&f, &s, 2, SM_SJ_COMPLETED, 2000, 2100, "n2", NULL);
  sampler_file(&s, 1, "n1", 2001, 2099, 2102, 1, 71, 12000, NULL);
  a = agent(&f, &s, 0, NULL);
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  sm_record_init(&r);
  ASSERT_OK(get(&s, "fake:1", &r));
  ASSERT_NEAR(r.sm_util, 71, 1e-9);
  ASSERT_NEAR(r.gpu_mem_mib, 12000, 1e-9);
  ASSERT_STREQ(r.util_source, "nvml");
  ASSERT_STREQ(r.gpu_model, "NVIDIA A100-SXM4-80GB");
  ASSERT_STREQ(r.driver_version, "535.104.05");
  o = cJSON_Parse(r.outcome);
  g = cJSON_GetObjectItem(o, "gpu");
  ASSERT(cJSON_IsObject(g));
  ASSERT_STREQ(
      cJSON_GetObjectItem(
          cJSON_GetArrayItem(cJSON_GetObjectItem(g, "nodes"), 0), "node")
          ->valuestring,
      "n1");
  cJSON_Delete(o);
  /* Job 2 was never sampled: the fields stay unknown. */
  ASSERT_OK(get(&s, "fake:2", &r));
  ASSERT(isnan(r.sm_util) && isnan(r.gpu_mem_mib));
  ASSERT(r.util_source == NULL);
  o = cJSON_Parse(r.outcome);
  ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "gpu")));
  cJSON_Delete(o);
  sm_record_release(&r);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(gpustat_slurm_waits_for_a_late_sampler) {
  scratch s;
  fake f = {0};
  sm_slurm_agent *a;
  sm_record r;
  sm_err err = {0};
  double now = wall();
  scratch_init(&s);
  add(&f, &s, 3, SM_SJ_COMPLETED, now - 100, now - 1, "n1", NULL);
  /* The sampler's last write was before the job's end. */
  sampler_file(&s, 3, "n1", now - 99, now - 4, now - 4, 0, 64, 20000, NULL);
  a = agent(&f, &s, 0, NULL);
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  sm_record_init(&r);
  ASSERT_EQ(get(&s, "fake:3", &r), SM_ENOTFOUND);
  /* It catches up: the next pass writes the run back, complete. */
  sampler_file(&s, 3, "n1", now - 99, now - 2, now + 1, 0, 66, 21000, NULL);
  usleep(5000);
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  ASSERT_OK(get(&s, "fake:3", &r));
  ASSERT_NEAR(r.sm_util, 66, 1e-9);
  ASSERT_NEAR(r.gpu_mem_mib, 21000, 1e-9);
  ASSERT(strstr(r.outcome, "\"partial\":false") != NULL);
  sm_record_release(&r);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(gpustat_slurm_lost_gpu_is_a_gpu_fault) {
  scratch s;
  fake f = {0};
  sm_slurm_agent *a;
  sm_record r;
  sm_err err = {0};
  char log[200];
  int drained = -1, requeued = 0;
  cJSON *o, *d;
  scratch_init(&s);
  /* The job's log stops without an error (the process hung on the lost
   * GPU and was killed); the node's sampler saw the GPU go. */
  snprintf(log, sizeof(log), "%s/r50-4.out", s.dir);
  write_text(log,
             "Namespace(model='resnet50', epochs=90)\n"
             "=> creating model 'resnet50'\n"
             "[2024-05-01 10:00:01] step 1/100 | loss 6.9000 | 0.41 s/it\n"
             "[2024-05-01 10:00:02] step 2/100 | loss 6.8000 | 0.41 s/it\n");
  add(&f, &s, 4, SM_SJ_FAILED, 3000, 3500, "n2", log);
  sampler_file(&s, 4, "n2", 3001, 3400, 3510, 1, 88, 70000,
               "schedmate gpustat: node n2: GPU 1 (GPU-b, NVIDIA "
               "A100-SXM4-80GB): nvmlDeviceGetUtilizationRates failed: "
               "NVML_ERROR_GPU_IS_LOST (GPU is lost)");
  a = agent(&f, &s, 1, NULL);
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  for (int i = 0; i < f.nops; i++) {
    if (strncmp(f.ops[i], "drain n2 schedmate: gpu ", 24) == 0)
      drained = i;
    requeued += strcmp(f.ops[i], "requeue 4") == 0;
  }
  ASSERT(drained >= 0);
  ASSERT(strstr(f.ops[drained], "(job 4, line 1)") != NULL);
  ASSERT_EQ(requeued, 1);
  sm_record_init(&r);
  ASSERT_OK(get(&s, "fake:4", &r));
  ASSERT_EQ(r.end_state, SM_END_FAILED_INFRA);
  ASSERT_NEAR(r.sm_util, 88, 1e-9);
  o = cJSON_Parse(r.outcome);
  d = cJSON_GetObjectItem(o, "diagnosis");
  ASSERT_STREQ(cJSON_GetObjectItem(d, "category")->valuestring,
               "infrastructure");
  ASSERT_STREQ(cJSON_GetObjectItem(d, "component")->valuestring, "gpu");
  ASSERT(strstr(cJSON_GetObjectItem(o, "log")->valuestring, "/gpustat/4") !=
         NULL);
  cJSON_Delete(o);
  sm_record_release(&r);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(gpustat_slurm_sacct_fallback) {
  scratch s;
  fake f = {0};
  sm_slurm_agent *a;
  sm_record r;
  sm_err err = {0};
  char text[1200];
  sm_slurm_job *cpu;
  FILE *c;
  int calls = 0;
  scratch_init(&s);
  /* A stand-in sacct: job 5 has GPU usage, any other job is unknown to
   * accounting (as on a cluster without slurmdbd). */
  snprintf(text, sizeof(text),
           "#!/bin/sh\n"
           "echo \"$*\" >> '%s'\n"
           "while [ $# -gt 0 ]; do [ \"$1\" = -j ] && id=$2; shift; done\n"
           "if [ \"$id\" = 5 ]; then\n"
           "  echo '5|billing=8,cpu=8,gres/gpu=2,mem=64G,node=1||'\n"
           "  echo '5.batch|cpu=8,gres/gpu=2,mem=64G,node=1|cpu=00:10:00,"
           "gres/gpumem=40777023488,gres/gpuutil=87,mem=1G|cpu=00:10:00,"
           "gres/gpumem=40777023488,gres/gpuutil=100,mem=1G'\n"
           "  exit 0\n"
           "fi\n"
           "echo 'sacct: error: Slurm accounting storage is disabled' >&2\n"
           "exit 1\n",
           s.calls);
  write_text(s.sacct, text);
  ASSERT_OK(chmod(s.sacct, 0755));
  add(&f, &s, 5, SM_SJ_COMPLETED, 2000, 2100, "n1", NULL);
  add(&f, &s, 6, SM_SJ_COMPLETED, 2000, 2100, "n1", NULL);
  cpu = add(&f, &s, 7, SM_SJ_COMPLETED, 2000, 2100, "n1", NULL);
  cpu->gpus_per_node = 0; /* a CPU job: accounting is not asked */
  a = agent(&f, &s, 0, s.sacct);
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  sm_record_init(&r);
  ASSERT_OK(get(&s, "fake:5", &r));
  ASSERT_STREQ(r.util_source, "sacct");
  ASSERT_NEAR(r.sm_util, 87, 1e-9);
  ASSERT_NEAR(r.gpu_mem_mib, 38888, 1e-9);
  ASSERT(strstr(r.outcome, "\"step\":\"5.batch\"") != NULL);
  ASSERT_OK(get(&s, "fake:6", &r));
  ASSERT(isnan(r.sm_util) && r.util_source == NULL);
  ASSERT_OK(get(&s, "fake:7", &r));
  ASSERT(isnan(r.sm_util));
  c = fopen(s.calls, "r");
  ASSERT(c != NULL);
  while (fgets(text, sizeof(text), c) != NULL) {
    ASSERT(strstr(text, "-n -P --noconvert -j ") != NULL);
    ASSERT(strstr(text, "-j 7") == NULL);
    calls++;
  }
  fclose(c);
  ASSERT_EQ(calls, 2);
  sm_record_release(&r);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(gpustat_slurm_sacct_missing) {
  scratch s;
  fake f = {0};
  sm_slurm_agent *a;
  sm_record r;
  sm_err err = {0};
  scratch_init(&s);
  add(&f, &s, 8, SM_SJ_COMPLETED, 2000, 2100, "n1", NULL);
  /* A command that does not exist: the record is written all the same. */
  a = agent(&f, &s, 0, "/nonexistent/bin/sacct");
  ASSERT_OK(sm_slurm_agent_pass(a, &err));
  sm_record_init(&r);
  ASSERT_OK(get(&s, "fake:8", &r));
  ASSERT(isnan(r.sm_util));
  sm_record_release(&r);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}
