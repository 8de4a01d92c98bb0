/* test_slurm_agent.c - the Slurm agent's channels against a fake cluster
 * (a backend that keeps jobs in memory and records what the agent asks
 * of it): estimates and SchedMate-SJF priorities from a history the agent
 * wrote itself, shadow mode changing nothing while deciding the same,
 * drain and requeue after an ECC failure (and never after a user error),
 * the retry cap, vanished logs, Slurm going away, the plugin's answers
 * and the socket they come through. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_slurm.h"

/* ==== The fake cluster ==== */

#define MAXJ 32
#define MAXOPS 128

typedef struct fake {
  sm_slurm_job jobs[MAXJ]; /* the cluster's jobs (owned strings) */
  char *scripts[MAXJ];     /* batch script per job */
  int n;                   /* job count */
  int down;                /* 1: slurmctld unreachable */
  char ops[MAXOPS][320];   /* what the agent asked, in order */
  int nops;                /* count */
} fake;

static char *sdup(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

static void op(fake *f, const char *fmt, const char *a, unsigned id) {
  if (f->nops < MAXOPS)
    snprintf(f->ops[f->nops++], sizeof(f->ops[0]), fmt, a, id);
}

static sm_slurm_job *fjob(fake *f, uint32_t id) {
  for (int i = 0; i < f->n; i++)
    if (f->jobs[i].id == id)
      return &f->jobs[i];
  return NULL;
}

static int f_load(void *ud, sm_slurm_job **out, int *n, sm_err *err) {
  fake *f = ud;
  sm_slurm_job *js;
  if (f->down)
    return sm_err_set(err, SM_ECONN,
                      "cannot load the job list: Unable to "
                      "contact slurm controller");
  js = sm_calloc((size_t)f->n + 1, sizeof(*js));
  for (int i = 0; i < f->n; i++) {
    const sm_slurm_job *s = &f->jobs[i];
    sm_slurm_job *d = &js[i];
    *d = *s;
    d->user = sdup(s->user);
    d->name = sdup(s->name);
    d->partition = sdup(s->partition);
    d->work_dir = sdup(s->work_dir);
    d->std_out = sdup(s->std_out);
    d->std_err = sdup(s->std_err);
    d->command = sdup(s->command);
    d->comment = sdup(s->comment);
    d->gpu_type = sdup(s->gpu_type);
    d->nodes =
        s->n_nodes ? sm_calloc((size_t)s->n_nodes, sizeof(char *)) : NULL;
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
  sm_slurm_job *j = fjob(f, u->job_id);
  if (f->down)
    return sm_err_set(err, SM_ECONN, "down");
  if (j == NULL)
    return sm_err_set(err, SM_ENOTFOUND, "Invalid job id specified");
  if (u->comment) {
    sm_free(j->comment);
    j->comment = sdup(u->comment);
    op(f, "comment %s %u", u->comment, u->job_id);
  }
  if (u->priority) {
    char p[32];
    snprintf(p, sizeof(p), "%u", u->priority);
    j->priority = u->priority;
    op(f, "priority %s %u", p, u->job_id);
  }
  if (u->time_limit) {
    char p[32];
    snprintf(p, sizeof(p), "%u", u->time_limit);
    j->time_limit = u->time_limit;
    op(f, "time_limit %s %u", p, u->job_id);
  }
  if (u->start_now)
    op(f, "start_now%s %u", "", u->job_id);
  return 0;
}

static int f_drain(void *ud, const char *node, const char *reason,
                   sm_err *err) {
  fake *f = ud;
  char t[300];
  (void)err;
  snprintf(t, sizeof(t), "%s %s", node, reason);
  op(f, "drain %s%u", t, 0);
  return 0;
}

static int f_requeue(void *ud, uint32_t id, sm_err *err) {
  fake *f = ud;
  sm_slurm_job *j = fjob(f, id);
  if (j == NULL)
    return sm_err_set(err, SM_ENOTFOUND, "Invalid job id specified");
  j->state = SM_SJ_PENDING;
  j->restarts++;
  j->start_time = j->end_time = 0;
  op(f, "requeue%s %u", "", id);
  return 0;
}

static const sm_slurm_ops fake_ops = {f_load,  f_script,  f_update,
                                      f_drain, f_requeue, NULL};

static sm_slurm_job *add(fake *f, uint32_t id, int state, const char *name,
                         const char *script, const char *work_dir,
                         uint32_t prio) {
  sm_slurm_job *j = &f->jobs[f->n];
  struct stat st;
  memset(j, 0, sizeof(*j));
  j->id = id;
  j->state = state;
  j->uid = stat(work_dir, &st) == 0 ? st.st_uid : 0;
  j->user = sdup("ada");
  j->name = sdup(name);
  j->partition = sdup("gpu");
  j->work_dir = sdup(work_dir);
  j->command = sdup("/home/ada/run.sh");
  j->priority = prio;
  j->batch = 1;
  j->gpus_per_node = 2;
  j->req_nodes = 1;
  j->submit_time = 1000 + id;
  f->scripts[f->n] = sdup(script);
  f->n++;
  return j;
}

static void set_nodes(sm_slurm_job *j, const char *node) {
  j->nodes = sm_calloc(1, sizeof(char *));
  j->nodes[0] = sdup(node);
  j->n_nodes = 1;
}

static void fake_free(fake *f) {
  sm_slurm_jobs_free(NULL, 0);
  for (int i = 0; i < f->n; i++) {
    sm_slurm_job_release(&f->jobs[i]);
    sm_free(f->scripts[i]);
  }
  f->n = 0;
}

static int count_ops(const fake *f, const char *prefix) {
  int n = 0;
  for (int i = 0; i < f->nops; i++)
    n += strncmp(f->ops[i], prefix, strlen(prefix)) == 0;
  return n;
}

/* ==== A scratch directory with a small repository ==== */

typedef struct scratch {
  char dir[256];   /* the scratch directory */
  char repo[300];  /* a repository with train.py */
  char db[300];    /* history file */
  char audit[300]; /* audit log */
  char status[300];
} scratch;

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void scratch_init(scratch *s) {
  char p[400];
  snprintf(s->dir, sizeof(s->dir), "/tmp/sm-slurm-test.XXXXXX");
  ASSERT(mkdtemp(s->dir) != NULL);
  snprintf(s->repo, sizeof(s->repo), "%s/repo", s->dir);
  ASSERT_OK(mkdir(s->repo, 0755));
  snprintf(p, sizeof(p), "%s/train.py", s->repo);
  write_file(p, "import argparse\n"
                "import torch\n"
                "import torchvision\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--model', default='resnet18')\n"
                "p.add_argument('--dataset', default='imagenet')\n"
                "p.add_argument('--epochs', type=int, default=10)\n"
                "p.add_argument('--batch-size', type=int, default=256)\n"
                "p.add_argument('--lr', type=float, default=0.1)\n"
                "args = p.parse_args()\n"
                "model = torchvision.models.__dict__[args.model]()\n");
  snprintf(s->db, sizeof(s->db), "%s/history.db", s->dir);
  snprintf(s->audit, sizeof(s->audit), "%s/audit.jsonl", s->dir);
  snprintf(s->status, sizeof(s->status), "%s/status.json", s->dir);
}

static void scratch_free(scratch *s) {
  char cmd[400];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
  ASSERT_EQ(system(cmd), 0);
}

static const char script_r18[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:2\n#SBATCH --time=02:00:00\n"
    "srun python train.py --model resnet18 --epochs 5 --lr 0.1\n";
static const char script_r50[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:2\n"
    "srun python train.py --model resnet50 --epochs 90 --batch-size 1024 "
    "--lr 0.4\n";
static const char script_vit[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:2\n"
    "srun python train.py --model vit_b_16 --dataset cifar100 --epochs 300 "
    "--lr 0.003\n";

static sm_slurm_agent *agent(fake *f, const scratch *s, int enforce,
                             const char *audit) {
  sm_slurm_opts o;
  sm_slurm_backend b;
  sm_err err = {0};
  sm_slurm_agent *a;
  memset(&o, 0, sizeof(o));
  memset(&b, 0, sizeof(b));
  o.enforce = enforce;
  o.db = s->db;
  o.audit_path = audit;
  o.status_path = s->status;
  o.interval_s = 0.001;
  b.ops = &fake_ops;
  b.ud = f;
  snprintf(b.cluster, sizeof(b.cluster), "fake");
  a = sm_slurm_agent_new(&o, &b, &err);
  if (a == NULL)
    SM_FAIL_AT("agent: %s", err.msg);
  return a;
}

/* Two finished jobs teach the history: resnet18 takes 100 s, resnet50
 * 300 s. */
static void teach(fake *f, const scratch *s) {
  sm_slurm_job *j = add(f, 1, SM_SJ_COMPLETED, "r18", script_r18, s->repo, 0);
  j->start_time = 2000;
  j->end_time = 2100;
  j = add(f, 2, SM_SJ_COMPLETED, "r50", script_r50, s->repo, 0);
  j->start_time = 2000;
  j->end_time = 2300;
}

/* Three queued jobs: r50 first in Slurm's order, then r18, then vit
 * (never seen before). */
static void queue3(fake *f, const scratch *s) {
  add(f, 3, SM_SJ_PENDING, "r50", script_r50, s->repo, 4294901000u);
  add(f, 4, SM_SJ_PENDING, "r18", script_r18, s->repo, 4294900999u);
  add(f, 5, SM_SJ_PENDING, "vit", script_vit, s->repo, 4294900998u);
}

/* The audit lines of one channel as "decision job to" strings. */
static int decisions(const char *audit, const char *channel, char out[][64],
                     int max) {
  char *text = NULL;
  size_t len;
  int n = 0;
  sm_err err = {0};
  if (sm_file_read_all(audit, 1 << 24, &text, &len, &err) != 0)
    return 0;
  for (char *line = strtok(text, "\n"); line && n < max;
       line = strtok(NULL, "\n")) {
    cJSON *o = cJSON_Parse(line);
    cJSON *ch = cJSON_GetObjectItem(o, "channel");
    if (cJSON_IsString(ch) && strcmp(ch->valuestring, channel) == 0) {
      cJSON *to = cJSON_GetObjectItem(o, "to");
      snprintf(out[n++], 64, "%s %d %.0f",
               cJSON_GetObjectItem(o, "decision")->valuestring,
               cJSON_GetObjectItem(o, "job")->valueint,
               cJSON_IsNumber(to) ? to->valuedouble : -1.0);
    }
    cJSON_Delete(o);
  }
  sm_free(text);
  return n;
}

static sm_end_state history_state(const scratch *s, const char *id) {
  sm_store *st = sm_store_open(s->db, 0, 0, NULL);
  sm_record r;
  sm_end_state es = SM_END__COUNT;
  ASSERT(st != NULL);
  sm_record_init(&r);
  if (sm_store_get(st, id, &r, NULL) == 0)
    es = r.end_state;
  sm_record_release(&r);
  sm_store_close(st);
  return es;
}

static char *history_outcome(const scratch *s, const char *id) {
  sm_store *st = sm_store_open(s->db, 0, 0, NULL);
  sm_record r;
  char *out = NULL;
  sm_record_init(&r);
  if (sm_store_get(st, id, &r, NULL) == 0 && r.outcome)
    out = sm_strdup(r.outcome);
  sm_record_release(&r);
  sm_store_close(st);
  return out;
}

/* ==== Submit, order, write-back ==== */

SM_TEST(slurm_agent_sjf_from_its_own_history) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_slurm_job *j3, *j4, *j5;
  sm_slurm_counters c;

  scratch_init(&s);
  teach(&f, &s);
  a = agent(&f, &s, 1, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(history_state(&s, "fake:1"), SM_END_COMPLETED);
  ASSERT_EQ(history_state(&s, "fake:2"), SM_END_COMPLETED);
  queue3(&f, &s);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  j3 = fjob(&f, 3);
  j4 = fjob(&f, 4);
  j5 = fjob(&f, 5);
  /* Estimates with provenance in the comments. */
  ASSERT(strstr(j3->comment, "schedmate: est 5m00s (300s, n=1") != NULL);
  ASSERT(strstr(j3->comment, "like fake:2") != NULL);
  ASSERT(strstr(j4->comment, "(100s, n=1") != NULL);
  ASSERT(strstr(j5->comment, "schedmate: no estimate") != NULL);
  /* Shortest first: r18 (100 s) before r50 (300 s); vit has no estimate
   * and keeps its place (last). */
  ASSERT(j4->priority > j3->priority);
  ASSERT(j3->priority > j5->priority);
  ASSERT_EQ(count_ops(&f, "time_limit"), 0);
  /* A second pass changes nothing. */
  f.nops = 0;
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(f.nops, 0);
  sm_slurm_agent_counters(a, &c);
  ASSERT_EQ(c.passes, 3);
  ASSERT_EQ(c.advised, 3);
  ASSERT_EQ(c.estimates, 2);
  ASSERT_EQ(c.written_back, 2);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(slurm_agent_shadow_changes_nothing_and_decides_the_same) {
  fake fe = {0}, fs = {0};
  scratch s1, s2;
  char ae[300], as[300];
  char de[16][64], ds[16][64];
  int ne, ns;
  sm_slurm_agent *a;

  scratch_init(&s1);
  scratch_init(&s2);
  snprintf(ae, sizeof(ae), "%s/audit.jsonl", s1.dir);
  snprintf(as, sizeof(as), "%s/audit.jsonl", s2.dir);
  teach(&fe, &s1);
  teach(&fs, &s2);
  a = agent(&fe, &s1, 1, ae);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  queue3(&fe, &s1);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  sm_slurm_agent_free(a);
  a = agent(&fs, &s2, 0, as);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  queue3(&fs, &s2);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_OK(sm_slurm_agent_pass(a, NULL)); /* decisions are not repeated */
  sm_slurm_agent_free(a);
  ASSERT(fe.nops > 0);
  ASSERT_EQ(fs.nops, 0);
  for (int i = 0; i < fs.n; i++)
    ASSERT(fs.jobs[i].comment == NULL);
  ne = decisions(ae, "order", de, 16);
  ns = decisions(as, "order", ds, 16);
  /* One update suffices: r18 moves above r50 (the fewest changes). */
  ASSERT_EQ(ne, 1);
  ASSERT(strncmp(de[0], "set_priority 4 ", 15) == 0);
  ASSERT_EQ(ne, ns);
  for (int i = 0; i < ne; i++)
    ASSERT_STREQ(de[i], ds[i]);
  ne = decisions(ae, "submit", de, 16);
  ns = decisions(as, "submit", ds, 16);
  ASSERT_EQ(ne, 3);
  ASSERT_EQ(ne, ns);
  for (int i = 0; i < ne; i++)
    ASSERT_STREQ(de[i], ds[i]);
  fake_free(&fe);
  fake_free(&fs);
  scratch_free(&s1);
  scratch_free(&s2);
}

SM_TEST(slurm_agent_time_limit_from_estimate) {
  fake f = {0};
  scratch s;
  sm_slurm_opts o;
  sm_slurm_backend b = {0};
  sm_slurm_agent *a;
  sm_err err = {0};

  scratch_init(&s);
  teach(&f, &s);
  memset(&o, 0, sizeof(o));
  o.enforce = 1;
  o.db = s.db;
  o.tl_margin = 1.5;
  o.tl_pad_s = 300;
  b.ops = &fake_ops;
  b.ud = &f;
  snprintf(b.cluster, sizeof(b.cluster), "fake");
  a = sm_slurm_agent_new(&o, &b, &err);
  ASSERT(a != NULL);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  queue3(&f, &s);
  fjob(&f, 4)->time_limit = 120; /* the user's own limit stays */
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  /* 300 s x 1.5 + 300 s = 750 s = 12.5 min -> 13 min, for job 3 only. */
  ASSERT_EQ(fjob(&f, 3)->time_limit, 13);
  ASSERT_EQ(fjob(&f, 4)->time_limit, 120);
  ASSERT_EQ(fjob(&f, 5)->time_limit, 0);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

/* ==== Exit channel ==== */

static char *failed_log(const scratch *s, const char *name, const char *fixture,
                        const char *host) {
  char path[400], *tail = NULL, *out;
  size_t len;
  FILE *f;
  sm_err err = {0};
  snprintf(path, sizeof(path), "tests/fixtures/slurm/%s", fixture);
  ASSERT_OK(sm_file_read_all(path, 1 << 20, &tail, &len, &err));
  snprintf(path, sizeof(path), "%s/%s", s->dir, name);
  f = fopen(path, "w");
  for (int i = 1; i <= 30; i++)
    fprintf(f,
            "step %d/400 | loss %.4f | lr 3.0e-04 | 0.105 s/it | "
            "609.5 samples/s\n",
            i * 10, 4.0 / i);
  /* The job names its own node in the cascade. */
  for (char *p = tail; *p; p++) {
    if (strncmp(p, "gpu-node-2", 10) == 0 ||
        strncmp(p, "gpu-node-3", 10) == 0) {
      fputs(host, f);
      p += 9;
    } else {
      fputc(*p, f);
    }
  }
  fclose(f);
  sm_free(tail);
  out = sm_strdup(path);
  return out;
}

static sm_slurm_job *failed(fake *f, const scratch *s, uint32_t id,
                            const char *name, char *log, const char *node) {
  sm_slurm_job *j = add(f, id, SM_SJ_FAILED, name, script_r50, s->repo, 0);
  j->std_out = log;
  j->std_err = sdup(log);
  j->start_time = 3000;
  j->end_time = 3400;
  j->exit_status = 1 << 8;
  set_nodes(j, node);
  return j;
}

SM_TEST(slurm_agent_ecc_drains_and_requeues_user_error_does_not) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  char *out;
  int drain = -1;

  scratch_init(&s);
  failed(&f, &s, 7, "ecc", failed_log(&s, "ecc.out", "ecc_nccl.tail", "n2"),
         "n2");
  failed(&f, &s, 8, "shape",
         failed_log(&s, "shape.out", "shape_mismatch.tail", "n3"), "n3");
  a = agent(&f, &s, 1, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  for (int i = 0; i < f.nops; i++)
    if (strncmp(f.ops[i], "drain ", 6) == 0)
      drain = i;
  ASSERT(drain >= 0);
  ASSERT(strncmp(f.ops[drain], "drain n2 schedmate: gpu uncorrectable ECC",
                 41) == 0);
  ASSERT(strstr(f.ops[drain], "(job 7, line ") != NULL);
  ASSERT_EQ(count_ops(&f, "drain"), 1);
  ASSERT_EQ(count_ops(&f, "requeue"), 1);
  ASSERT_STREQ(f.ops[f.nops - 1], "start_now 7");
  ASSERT_EQ(fjob(&f, 7)->state, SM_SJ_PENDING);
  ASSERT_EQ(fjob(&f, 8)->state, SM_SJ_FAILED);
  ASSERT_EQ(history_state(&s, "fake:7"), SM_END_FAILED_INFRA);
  ASSERT_EQ(history_state(&s, "fake:8"), SM_END_FAILED_USER);
  /* The root cause is in the record. */
  out = history_outcome(&s, "fake:8");
  ASSERT(out != NULL);
  ASSERT(strstr(out, "\"category\":\"user\"") != NULL);
  ASSERT(strstr(out, "shapes cannot be multiplied") != NULL);
  ASSERT(strstr(out, "\"actions\":[\"report") != NULL);
  sm_free(out);
  out = history_outcome(&s, "fake:7");
  ASSERT(strstr(out, "isolate_node n2") != NULL);
  ASSERT(strstr(out, "\"exit_code\":1") != NULL);
  sm_free(out);

  /* The requeued job fails twice more: the second restart is the last
   * one the retry cap (2) allows. */
  for (int round = 1; round <= 2; round++) {
    sm_slurm_job *j = fjob(&f, 7);
    j->state = SM_SJ_FAILED;
    j->start_time = 4000;
    j->end_time = 4100;
    f.nops = 0;
    ASSERT_OK(sm_slurm_agent_pass(a, NULL));
    ASSERT_EQ(count_ops(&f, "requeue"), round == 1 ? 1 : 0);
  }
  ASSERT_EQ(history_state(&s, "fake:7.1"), SM_END_FAILED_INFRA);
  ASSERT_EQ(history_state(&s, "fake:7.2"), SM_END_FAILED_INFRA);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

/* A job's log is read with its user's rights: a log path that points at a
 * file the user cannot read (here root's, mode 0600) is not read, however
 * telling its content; the same file owned by the user is. */
SM_TEST(slurm_agent_reads_logs_with_the_job_users_rights) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_slurm_job *j;
  char *secret, *own, *out;
  const uint32_t nobody = 65534;

  if (geteuid() != 0)
    SM_SKIP("needs root (the agent's rights are the point)");
  scratch_init(&s);
  ASSERT_OK(chmod(s.dir, 0755));
  /* Root's file: an ECC fault the user must not be able to plant or read. */
  secret = failed_log(&s, "root-only.out", "ecc_nccl.tail", "n2");
  ASSERT_OK(chmod(secret, 0600));
  own = failed_log(&s, "own.out", "ecc_nccl.tail", "n3");
  ASSERT_OK(chmod(own, 0600));
  ASSERT_OK(chown(own, nobody, nobody));
  j = failed(&f, &s, 21, "peek", secret, "n2");
  j->uid = nobody;
  j = failed(&f, &s, 22, "mine", own, "n3");
  j->uid = nobody;
  a = agent(&f, &s, 1, s.audit);
  for (int i = 0; i < 20 && history_state(&s, "fake:21") == SM_END__COUNT;
       i++) {
    usleep(5000);
    ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  }
  /* Unreadable for its user: recorded without a diagnosis, nothing done. */
  ASSERT_EQ(history_state(&s, "fake:21"), SM_END_FAILED);
  out = history_outcome(&s, "fake:21");
  ASSERT(out != NULL);
  ASSERT(strstr(out, "log unavailable") != NULL);
  ASSERT(strstr(out, "ECC") == NULL);
  sm_free(out);
  ASSERT_EQ(count_ops(&f, "drain n2"), 0);
  /* Its own log is read and acted on as before. */
  ASSERT_EQ(history_state(&s, "fake:22"), SM_END_FAILED_INFRA);
  ASSERT_EQ(count_ops(&f, "drain n3"), 1);
  /* The agent is root again afterwards. */
  ASSERT_EQ(setfsuid((uid_t)-1), 0);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(slurm_agent_exit_in_shadow_mode_acts_on_nothing) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  char d[16][64];
  int n, drains = 0, requeues = 0;

  scratch_init(&s);
  failed(&f, &s, 7, "ecc", failed_log(&s, "ecc.out", "ecc_nccl.tail", "n2"),
         "n2");
  a = agent(&f, &s, 0, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(f.nops, 0);
  ASSERT_EQ(history_state(&s, "fake:7"), SM_END_FAILED_INFRA);
  n = decisions(s.audit, "exit", d, 16);
  for (int i = 0; i < n; i++) {
    drains += strncmp(d[i], "drain_node 7", 12) == 0;
    requeues += strncmp(d[i], "requeue 7", 9) == 0;
  }
  ASSERT_EQ(drains, 1);
  ASSERT_EQ(requeues, 1);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(slurm_agent_end_states_and_vanished_logs) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_slurm_job *j;
  char *out;

  scratch_init(&s);
  j = add(&f, 11, SM_SJ_CANCELLED, "c", script_r18, s.repo, 0);
  j->start_time = 0; /* cancelled while queued */
  j->end_time = 5000;
  j = add(&f, 12, SM_SJ_TIMEOUT, "t", script_r18, s.repo, 0);
  j->start_time = 5000;
  j->end_time = 5600;
  j = add(&f, 13, SM_SJ_FAILED, "gone", script_r18, s.repo, 0);
  j->std_out = sdup("/nonexistent/dir/slurm-13.out");
  j->start_time = 5000;
  j->end_time = 5010;
  j = add(&f, 14, SM_SJ_NODE_FAIL, "nodefail", script_r18, s.repo, 0);
  j->std_out = sdup("/nonexistent/dir/slurm-14.out");
  j->start_time = 5000;
  j->end_time = 5010;
  j = add(&f, 15, SM_SJ_OOM, "oom", script_r18, s.repo, 0);
  j = add(&f, 16, SM_SJ_FAILED, "noscript", NULL, s.repo, 0);
  j->std_out = sdup(s.repo); /* a directory, not a log */
  a = agent(&f, &s, 1, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(history_state(&s, "fake:11"), SM_END_CANCELED);
  ASSERT_EQ(history_state(&s, "fake:12"), SM_END_CANCELED);
  ASSERT_EQ(history_state(&s, "fake:15"), SM_END_FAILED_USER);
  /* Unreadable logs are retried before the run is recorded. */
  ASSERT_EQ(history_state(&s, "fake:13"), SM_END__COUNT);
  for (int i = 0; i < 20 && history_state(&s, "fake:14") == SM_END__COUNT;
       i++) {
    usleep(5000);
    ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  }
  ASSERT_EQ(history_state(&s, "fake:13"), SM_END_FAILED);
  ASSERT_EQ(history_state(&s, "fake:14"), SM_END_FAILED_INFRA);
  ASSERT_EQ(history_state(&s, "fake:16"), SM_END_FAILED);
  out = history_outcome(&s, "fake:13");
  ASSERT(strstr(out, "log unavailable") != NULL);
  sm_free(out);
  ASSERT_EQ(f.nops, 0);
  sm_slurm_agent_free(a);

  /* A restarted agent does not handle the same runs again. */
  a = agent(&f, &s, 1, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  {
    sm_slurm_counters c;
    sm_slurm_agent_counters(a, &c);
    ASSERT_EQ(c.written_back, 0);
  }
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

/* ==== Slurm away ==== */

SM_TEST(slurm_agent_survives_slurm_going_away) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_err err = {0};
  char *status = NULL;
  size_t len;

  scratch_init(&s);
  queue3(&f, &s);
  a = agent(&f, &s, 1, s.audit);
  f.down = 1;
  ASSERT_EQ(sm_slurm_agent_pass(a, &err), SM_ECONN);
  ASSERT(strstr(err.msg, "Unable to contact") != NULL);
  ASSERT_OK(sm_file_read_all(s.status, 1 << 20, &status, &len, NULL));
  ASSERT(strstr(status, "\"ok\":false") != NULL);
  sm_free(status);
  f.down = 0;
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_OK(sm_file_read_all(s.status, 1 << 20, &status, &len, NULL));
  ASSERT(strstr(status, "\"ok\":true") != NULL);
  ASSERT(strstr(status, "\"job_id\":5") != NULL);
  sm_free(status);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

/* ==== Plugin answers ==== */

static void answer(sm_slurm_agent *a, const char *req, char *out, size_t cap) {
  sm_buf b;
  sm_buf_init(&b, 0);
  ASSERT_OK(sm_slurm_answer(a, req, strlen(req), &b));
  snprintf(out, cap, "%s", sm_buf_str(&b));
  sm_buf_release(&b);
}

static char *request(const scratch *s, const char *script) {
  sm_buf b;
  struct stat st;
  sm_buf_init(&b, 0);
  ASSERT_OK(stat(s->repo, &st));
  sm_buf_addf(&b,
              "{\"op\":\"estimate\",\"uid\":%u,\"name\":\"r50\","
              "\"work_dir\":\"%s\",\"partition\":\"gpu\","
              "\"tres_per_node\":\"gres:gpu:2\",\"min_nodes\":1,"
              "\"argv\":[],\"script\":",
              (unsigned)st.st_uid, s->repo);
  sm_json_quote(&b, script, strlen(script));
  sm_buf_adds(&b, "}");
  return sm_buf_take(&b);
}

SM_TEST(slurm_agent_plugin_answers) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  char out[512];
  char *req;
  static char huge[300000];

  scratch_init(&s);
  teach(&f, &s);
  a = agent(&f, &s, 0, s.audit);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  req = request(&s, script_r50);
  answer(a, req, out, sizeof(out));
  ASSERT_STREQ(out, "NO shadow mode\n");
  sm_slurm_agent_free(a);
  a = agent(&f, &s, 1, s.audit);
  answer(a, req, out, sizeof(out));
  ASSERT(strncmp(out, "OK - schedmate: est 5m00s (300s, n=1", 36) == 0);
  ASSERT(out[strlen(out) - 1] == '\n');
  sm_free(req);
  req = request(&s, script_vit);
  answer(a, req, out, sizeof(out));
  ASSERT(strncmp(out, "OK - schedmate: no estimate", 27) == 0);
  sm_free(req);
  /* Malformed requests. */
  answer(a, "", out, sizeof(out));
  ASSERT_STREQ(out, "NO malformed request\n");
  answer(a, "{\"op\":\"estimate\"", out, sizeof(out));
  ASSERT_STREQ(out, "NO malformed request\n");
  answer(a, "[1,2]", out, sizeof(out));
  ASSERT_STREQ(out, "NO malformed request\n");
  answer(a, "{\"op\":\"delete\",\"uid\":0}", out, sizeof(out));
  ASSERT_STREQ(out, "NO unknown request\n");
  answer(a, "{\"op\":\"estimate\",\"uid\":\"root\"}", out, sizeof(out));
  ASSERT_STREQ(out, "NO unknown request\n");
  answer(a, "{\"op\":\"estimate\",\"uid\":-5}", out, sizeof(out));
  ASSERT_STREQ(out, "NO unknown request\n");
  /* Wrong types inside are ignored; no work_dir, binary script. */
  answer(a,
         "{\"op\":\"estimate\",\"uid\":0,\"name\":7,\"work_dir\":[1],"
         "\"script\":\"\\u0001\\u0002\\ufffd\",\"argv\":\"x\","
         "\"min_nodes\":\"2\",\"tres_per_node\":\"gres:gpu:a:b:c\"}",
         out, sizeof(out));
  ASSERT(strncmp(out, "OK - schedmate: no estimate", 27) == 0);
  /* A huge script (one line) within the extractor's caps. */
  memset(huge, 'x', sizeof(huge) - 1);
  memcpy(huge, "{\"op\":\"estimate\",\"uid\":0,\"script\":\"", 35);
  memcpy(huge + sizeof(huge) - 3, "\"}", 3);
  answer(a, huge, out, sizeof(out));
  ASSERT(strncmp(out, "OK ", 3) == 0);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(slurm_agent_socket) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_slurm_opts o;
  sm_slurm_backend b = {0};
  sm_err err = {0};
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  char path[300], reply[512];
  char *req;
  int fd, got = 0;

  scratch_init(&s);
  teach(&f, &s);
  snprintf(path, sizeof(path), "%s/agent.sock", s.dir);
  memset(&o, 0, sizeof(o));
  o.enforce = 1;
  o.db = s.db;
  o.socket_path = path;
  b.ops = &fake_ops;
  b.ud = &f;
  snprintf(b.cluster, sizeof(b.cluster), "fake");
  /* A regular file in the way is not removed. */
  write_file(path, "not a socket\n");
  a = sm_slurm_agent_new(&o, &b, &err);
  ASSERT(a != NULL);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(sm_slurm_serve_start(a, &err), SM_EINVAL);
  ASSERT(strstr(err.msg, "not a socket") != NULL);
  unlink(path);
  /* A stale socket (nobody listening) is replaced. */
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  strcpy(sa.sun_path, path);
  ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
  close(fd);
  ASSERT_OK(sm_slurm_serve_start(a, &err));
  /* One request, one reply line. */
  req = request(&s, script_r18);
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
  ASSERT(write(fd, req, strlen(req)) == (ssize_t)strlen(req));
  ASSERT(write(fd, "\n", 1) == 1);
  for (;;) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    ssize_t r;
    ASSERT(poll(&p, 1, 5000) == 1);
    r = read(fd, reply + got, sizeof(reply) - 1 - (size_t)got);
    if (r <= 0)
      break;
    got += (int)r;
  }
  close(fd);
  reply[got] = '\0';
  ASSERT(strncmp(reply, "OK - schedmate: est 1m40s (100s, n=1", 36) == 0);
  /* A second agent on the same socket is refused. */
  {
    sm_slurm_agent *b2 = sm_slurm_agent_new(&o, &b, &err);
    ASSERT(b2 != NULL);
    ASSERT_EQ(sm_slurm_serve_start(b2, &err), SM_EBUSY);
    /* b2 shares the fake; do not let it close anything of a's. */
    sm_slurm_agent_free(b2);
  }
  /* A client that says nothing is dropped; the thread stops on request. */
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
  sm_slurm_serve_stop(a);
  close(fd);
  ASSERT(access(path, F_OK) != 0);
  sm_free(req);
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}

SM_TEST(slurm_agent_bad_options) {
  sm_slurm_opts o;
  sm_slurm_backend b = {0};
  fake f = {0};
  sm_err err = {0};
  memset(&o, 0, sizeof(o));
  ASSERT(sm_slurm_agent_new(&o, &b, &err) == NULL);
  ASSERT(strstr(err.msg, "backend") != NULL);
  b.ops = &fake_ops;
  b.ud = &f;
  sm_err_clear(&err);
  ASSERT(sm_slurm_agent_new(&o, &b, &err) == NULL);
  ASSERT(strstr(err.msg, "--db") != NULL);
  o.db = "/nonexistent/dir/h.db";
  sm_err_clear(&err);
  ASSERT(sm_slurm_agent_new(&o, &b, &err) == NULL);
  ASSERT(strstr(err.msg, "/nonexistent/dir/h.db") != NULL);
  o.db = "mem:";
  o.signatures = "/nonexistent/sigs.ini";
  sm_err_clear(&err);
  ASSERT(sm_slurm_agent_new(&o, &b, &err) == NULL);
  ASSERT(strstr(err.msg, "sigs.ini") != NULL);
  o.signatures = NULL;
  o.socket_path = "/tmp/x.sock";
  {
    sm_slurm_agent *a = sm_slurm_agent_new(&o, &b, &err);
    ASSERT(a != NULL);
    sm_err_clear(&err);
    ASSERT_EQ(sm_slurm_serve_start(a, &err), SM_EINVAL);
    ASSERT(strstr(err.msg, "mem:") != NULL);
    sm_slurm_agent_free(a);
  }
  /* The libslurm backend is the agent executable's (agent/libslurm.c);
   * slurm_unreachable.sh checks its unreadable-configuration error. */
}

/* ==== Run channel ==== */

static void append_steps(const char *path, int from, int to, double dt) {
  FILE *f = fopen(path, "a");
  ASSERT(f != NULL);
  for (int i = from; i <= to; i++)
    fprintf(f,
            "[2026-11-29 10:00:00] step %d/400 | loss %.4f | lr 1.00e-01 | "
            "%.3f s/it | %.1f samples/s\n",
            i, 6.9 / (1 + i / 10.0), dt, 256 / dt);
  fclose(f);
}

static cJSON *status_job(const scratch *s, uint32_t id) {
  char *text = NULL;
  size_t len;
  cJSON *o, *jobs, *j, *out = NULL;
  ASSERT_OK(sm_file_read_all(s->status, 1 << 22, &text, &len, NULL));
  o = cJSON_Parse(text);
  sm_free(text);
  jobs = cJSON_GetObjectItem(o, "jobs");
  cJSON_ArrayForEach(j, jobs) {
    if (cJSON_GetObjectItem(j, "job_id")->valueint == (int)id)
      out = cJSON_Duplicate(j, 1);
  }
  cJSON_Delete(o);
  return out;
}

SM_TEST(slurm_agent_run_progress_and_interference) {
  fake f = {0};
  scratch s;
  sm_slurm_agent *a;
  sm_slurm_opts o;
  sm_slurm_backend b = {0};
  sm_err err = {0};
  sm_slurm_job *ja, *jb;
  char log_a[400], log_b[400], metrics[400];
  cJSON *st;
  char *prom = NULL;
  size_t len;
  sm_slurm_counters c;

  scratch_init(&s);
  snprintf(log_a, sizeof(log_a), "%s/a.out", s.dir);
  snprintf(log_b, sizeof(log_b), "%s/b.out", s.dir);
  snprintf(metrics, sizeof(metrics), "%s/metrics.prom", s.dir);
  memset(&o, 0, sizeof(o));
  o.db = s.db;
  o.audit_path = s.audit;
  o.status_path = s.status;
  o.metrics_path = metrics;
  o.interval_s = 0.001;
  o.track_samples = 5;
  b.ops = &fake_ops;
  b.ud = &f;
  snprintf(b.cluster, sizeof(b.cluster), "fake");
  a = sm_slurm_agent_new(&o, &b, &err);
  ASSERT(a != NULL);
  /* Job A runs alone on n1; its log appears a little later. */
  ja = add(&f, 21, SM_SJ_RUNNING, "a", script_r18, s.repo, 0);
  ja->std_out = sdup(log_a);
  ja->start_time = 1000;
  set_nodes(ja, "n1");
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  st = status_job(&s, 21);
  ASSERT_STREQ(cJSON_GetObjectItem(st, "log_status")->valuestring,
               "unreadable");
  cJSON_Delete(st);
  append_steps(log_a, 1, 20, 0.1);
  usleep(20000);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  st = status_job(&s, 21);
  ASSERT_STREQ(cJSON_GetObjectItem(st, "log_status")->valuestring, "ok");
  ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "progress"), "step")
                ->valueint,
            20);
  ASSERT_NEAR(
      cJSON_GetObjectItem(cJSON_GetObjectItem(st, "progress"), "step_time_s")
          ->valuedouble,
      0.1, 1e-9);
  cJSON_Delete(st);
  ASSERT_OK(sm_file_read_all(metrics, 1 << 20, &prom, &len, NULL));
  ASSERT(strstr(prom, "schedmate_job_step{job=\"21\",name=\"a\",node=\"n1\"} "
                      "20\n") != NULL);
  ASSERT(strstr(prom, "schedmate_job_step_time_seconds{job=\"21\",name=\"a\","
                      "node=\"n1\"} 0.1\n") != NULL);
  ASSERT(strstr(prom, "schedmate_slurm_up 1\n") != NULL);
  sm_free(prom);
  /* Job B joins n1; A slows down to a third over a full window. */
  jb = add(&f, 22, SM_SJ_RUNNING, "b", script_r18, s.repo, 0);
  jb->std_out = sdup(log_b);
  jb->start_time = 1100;
  set_nodes(jb, "n1");
  append_steps(log_b, 1, 3, 0.1);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  append_steps(log_a, 21, 23, 0.3);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  sm_slurm_agent_counters(a, &c);
  ASSERT_EQ(c.interference, 0); /* the window still mixes before/after */
  append_steps(log_a, 24, 30, 0.3);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  sm_slurm_agent_counters(a, &c);
  ASSERT_EQ(c.interference, 1);
  st = status_job(&s, 21);
  {
    cJSON *sl = cJSON_GetObjectItem(st, "slowdown");
    ASSERT_EQ(cJSON_GetObjectItem(sl, "joined_by")->valueint, 22);
    ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(sl, "flagged")));
    ASSERT_NEAR(cJSON_GetObjectItem(sl, "ratio")->valuedouble, 0.333, 0.01);
  }
  cJSON_Delete(st);
  {
    char d[16][64];
    int n = decisions(s.audit, "run", d, 16);
    ASSERT_EQ(n, 1);
    ASSERT_STREQ(d[0], "interference 21 -1");
  }
  /* Flagged once; B ends, the watch ends. */
  append_steps(log_a, 31, 40, 0.3);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  sm_slurm_agent_counters(a, &c);
  ASSERT_EQ(c.interference, 1);
  fjob(&f, 22)->state = SM_SJ_COMPLETED;
  fjob(&f, 22)->end_time = 1200;
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  st = status_job(&s, 21);
  ASSERT(cJSON_IsNull(cJSON_GetObjectItem(st, "slowdown")));
  cJSON_Delete(st);
  /* The log vanishes: the job is reported unreadable, nothing breaks. */
  unlink(log_a);
  fjob(&f, 21)->state = SM_SJ_COMPLETED;
  fjob(&f, 21)->end_time = 1300;
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  ASSERT_EQ(history_state(&s, "fake:22"), SM_END_COMPLETED);
  ASSERT_EQ(history_state(&s, "fake:21"), SM_END_COMPLETED);
  {
    char *out = history_outcome(&s, "fake:21");
    ASSERT(strstr(out, "\"step\":40") != NULL);
    sm_free(out);
  }
  {
    char *out = history_outcome(&s, "fake:22");
    ASSERT(strstr(out, "\"step\":3") != NULL);
    sm_free(out);
  }
  sm_slurm_agent_free(a);
  fake_free(&f);
  scratch_free(&s);
}
