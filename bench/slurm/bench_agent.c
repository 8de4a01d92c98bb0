/* bench_agent.c - the Slurm agent's decision latency without a cluster:
 *
 *   answer   one plugin request (extract the batch script and the
 *            repository, search a history of H records, format the
 *            comment), as the socket thread does it; median and p99 over
 *            R requests;
 *   submit   one pass of the agent over Q newly pending jobs (read script,
 *            advise, comment, SchedMate-SJF priorities) against a fake
 *            cluster; per job;
 *   steady   the next pass over the same queue (nothing new: the cost of
 *            polling a quiet cluster).
 *
 * usage: bench_agent REPO H R Q */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedmate/sm.h"
#include "schedmate/sm_slurm.h"

typedef struct fake {
  sm_slurm_job *jobs; /* the queue */
  int n;              /* its length */
  const char *repo;   /* the jobs' working directory */
  long updates;       /* update calls */
} fake;

static const char *const scripts[] = {
    "#!/bin/bash\n#SBATCH --gres=gpu:2\npython train.py --model resnet18 "
    "--epochs 5 --lr 0.1\n",
    "#!/bin/bash\n#SBATCH --gres=gpu:2\npython train.py --model resnet50 "
    "--epochs 90 --batch-size 1024 --lr 0.4\n",
    "#!/bin/bash\n#SBATCH --gres=gpu:2\npython train.py --model vit_b_16 "
    "--dataset cifar100 --epochs 300 --lr 0.003\n"};

static char *sdup(const char *s) { return s ? sm_strdup(s) : NULL; }

static int f_load(void *ud, sm_slurm_job **out, int *n, sm_err *err) {
  fake *f = ud;
  sm_slurm_job *js = sm_calloc((size_t)f->n, sizeof(*js));
  (void)err;
  for (int i = 0; i < f->n; i++) {
    js[i] = f->jobs[i];
    js[i].user = sdup(f->jobs[i].user);
    js[i].name = sdup(f->jobs[i].name);
    js[i].partition = sdup(f->jobs[i].partition);
    js[i].work_dir = sdup(f->jobs[i].work_dir);
    js[i].command = sdup(f->jobs[i].command);
    js[i].comment = sdup(f->jobs[i].comment);
    js[i].std_out = js[i].std_err = js[i].gpu_type = NULL;
    js[i].nodes = NULL;
  }
  *out = js;
  *n = f->n;
  return 0;
}

static int f_script(void *ud, uint32_t id, sm_buf *out, sm_err *err) {
  (void)ud;
  (void)err;
  return sm_buf_adds(out, scripts[id % 3]);
}

static int f_update(void *ud, const sm_slurm_update *u, sm_err *err) {
  fake *f = ud;
  (void)err;
  for (int i = 0; i < f->n; i++)
    if (f->jobs[i].id == u->job_id) {
      if (u->comment) {
        sm_free(f->jobs[i].comment);
        f->jobs[i].comment = sdup(u->comment);
      }
      if (u->priority)
        f->jobs[i].priority = u->priority;
    }
  f->updates++;
  return 0;
}

static const sm_slurm_ops ops = {f_load, f_script, f_update, NULL, NULL,
                                 NULL};

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* A history of h records: the three kinds of job with durations, and
 * h - 3 other workloads. */
static void fill_history(const char *db, const char *repo, int h) {
  sm_store *s = sm_store_open(db, SM_STORE_CREATE, 0, NULL);
  sm_rng r;
  sm_rng_seed(&r, 7);
  if (s == NULL)
    exit(2);
  sm_store_begin(s, NULL);
  for (int i = 0; i < h; i++) {
    sm_record rec;
    char id[32];
    sm_record_init(&rec);
    snprintf(id, sizeof(id), "past:%d", i);
    rec.id = sm_strdup(id);
    if (i < 2) {
      sm_extract_req q;
      sm_extract_res res;
      memset(&q, 0, sizeof(q));
      q.repo = repo;
      q.script = scripts[i];
      q.script_len = strlen(scripts[i]);
      if (sm_extract(&q, &res, NULL) == 0)
        sm_meta_copy(&rec.meta, &res.meta);
      sm_extract_res_release(&res);
      sm_meta_set_num(&rec.meta, SM_META_NODES, 1, "slurm:request");
      rec.duration_s = i == 0 ? 600 : 7200;
    } else {
      char m[32];
      snprintf(m, sizeof(m), "model-%d", (int)(sm_rng_next(&r) % 500));
      sm_meta_set_str(&rec.meta, SM_META_MODEL_NAME, m, NULL);
      sm_meta_set_num(&rec.meta, SM_META_GPUS,
                      (double)(1 << (sm_rng_next(&r) % 6)), NULL);
      sm_meta_set_num(&rec.meta, SM_META_ITERATIONS,
                      (double)(100 + sm_rng_next(&r) % 100000), NULL);
      rec.duration_s = 60 + (double)(sm_rng_next(&r) % 86400);
    }
    rec.end_state = SM_END_COMPLETED;
    rec.user = sm_strdup("ada");
    sm_record_fingerprint(&rec);
    sm_store_put(s, &rec, NULL);
    sm_record_release(&rec);
  }
  sm_store_end(s, NULL);
  sm_store_close(s);
}

int main(int argc, char **argv) {
  const char *repo;
  int h, reps, q;
  char dir[] = "/tmp/sm-bench-slurm.XXXXXX", db[128], req[4096];
  sm_slurm_opts o;
  sm_slurm_backend b;
  sm_slurm_agent *a;
  sm_err err = {0};
  fake f = {0};
  double *t, t0, pass1, pass2;
  struct stat st;

  if (argc != 5) {
    fprintf(stderr, "usage: bench_agent REPO HISTORY REQUESTS QUEUE\n");
    return 2;
  }
  repo = argv[1];
  h = atoi(argv[2]);
  reps = atoi(argv[3]);
  q = atoi(argv[4]);
  if (mkdtemp(dir) == NULL || stat(repo, &st) != 0 || h < 3 || reps < 1 ||
      q < 1)
    return 2;
  snprintf(db, sizeof(db), "%s/h.db", dir);
  fill_history(db, repo, h);
  memset(&o, 0, sizeof(o));
  memset(&b, 0, sizeof(b));
  o.enforce = 1;
  o.db = db;
  b.ops = &ops;
  b.ud = &f;
  snprintf(b.cluster, sizeof(b.cluster), "bench");
  f.repo = repo;
  f.jobs = sm_calloc((size_t)q, sizeof(*f.jobs));
  f.n = q;
  for (int i = 0; i < q; i++) {
    sm_slurm_job *j = &f.jobs[i];
    j->id = (uint32_t)(1000 + i);
    j->state = SM_SJ_PENDING;
    j->uid = st.st_uid;
    j->user = sdup("ada");
    j->name = sdup(i % 3 == 0 ? "r18" : i % 3 == 1 ? "r50" : "vit");
    j->partition = sdup("gpu");
    j->work_dir = sdup(repo);
    j->command = sdup("/home/ada/run.sh");
    j->priority = 4294901759u - (uint32_t)i;
    j->batch = 1;
    j->gpus_per_node = 2;
    j->req_nodes = 1;
    j->submit_time = 1000 + i;
  }
  a = sm_slurm_agent_new(&o, &b, &err);
  if (a == NULL) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  /* The plugin's request for a resnet50 job. */
  {
    sm_buf rb;
    sm_buf_init(&rb, sizeof(req));
    sm_buf_addf(&rb,
                "{\"op\":\"estimate\",\"uid\":%u,\"name\":\"r50\","
                "\"work_dir\":\"%s\",\"tres_per_node\":\"gres:gpu:2\","
                "\"min_nodes\":1,\"argv\":[],\"script\":",
                (unsigned)st.st_uid, repo);
    sm_json_quote(&rb, scripts[1], strlen(scripts[1]));
    sm_buf_adds(&rb, "}");
    snprintf(req, sizeof(req), "%s", sm_buf_str(&rb));
    sm_buf_release(&rb);
  }
  t = calloc((size_t)reps, sizeof(double));
  for (int i = 0; i < reps; i++) {
    sm_buf reply;
    sm_buf_init(&reply, 0);
    t0 = sm_now();
    sm_slurm_answer(a, req, strlen(req), &reply);
    t[i] = (sm_now() - t0) * 1000;
    if (i == 0)
      printf("answer: %s", sm_buf_str(&reply));
    sm_buf_release(&reply);
  }
  qsort(t, (size_t)reps, sizeof(double), cmp);
  printf("plugin answer (history %d, %d requests): median %.2f ms, p99 "
         "%.2f ms\n",
         h, reps, t[reps / 2], t[(int)(reps * 0.99)]);
  t0 = sm_now();
  if (sm_slurm_agent_pass(a, &err) != 0)
    fprintf(stderr, "pass: %s\n", err.msg);
  pass1 = sm_now() - t0;
  t0 = sm_now();
  sm_slurm_agent_pass(a, NULL);
  pass2 = sm_now() - t0;
  printf("submit pass over %d new jobs: %.1f ms (%.2f ms per job, %ld "
         "updates)\n",
         q, pass1 * 1000, pass1 * 1000 / q, f.updates);
  printf("steady pass over the same %d jobs: %.1f ms (%.3f ms per job)\n", q,
         pass2 * 1000, pass2 * 1000 / q);
  sm_slurm_agent_free(a);
  sm_slurm_jobs_free(f.jobs, q);
  free(t);
  unlink(db);
  {
    char p[160];
    snprintf(p, sizeof(p), "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", db);
    unlink(p);
  }
  rmdir(dir);
  return 0;
}
