/* test_sia_policy.c - Sia and Sia + SchedMate end to end on the synthetic
 * tables of tests/data/sia (two made-up applications on two made-up GPU
 * types): bootstrapping and the growth cap, the checkpoint-restore delay
 * of every allocation, profiling time, a history hit that skips
 * bootstrapping (and a miss, or an outcome not known yet, that changes
 * nothing), longer rounds, sets of workload files, and the errors.
 * The MILP runs through CBC when the build has it, else the greedy
 * fallback; both policies of a comparison use the same. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_sia.h"
#include "schedmate/sm_sim.h"

#define TABLES "sia.tables=tests/data/sia/tables"
#define CLUSTER "2x4:slow,1x8:fast"
/* The trace reader draws durations only for Sia's own applications; the
 * made-up ones carry a (meaningless for Sia) duration column. */
#define HDR "name,time,application,num_replicas,batch_size,duration\n"

typedef struct srun {
  sm_sim_trace *t;
  sm_sim_cluster *c;
  sm_sim_result *r;
  char err[SM_ERR_MSG_SIZE];
  int rc;
} srun;

static const char *solver(void) {
  return sm_sia_have_solver() ? "sia.solver=cbc" : "sia.solver=greedy";
}

/* Runs pol on an in-memory Sia workload with extra "k=v" parameters
 * (NULL-terminated); a failed run keeps its message. */
static srun run_sia(const char *csv, const char *cluster, const char *pol,
                    const char *const *params) {
  srun x;
  sm_err err = {0};
  sm_sim_config cfg;

  memset(&x, 0, sizeof(x));
  if (sm_sim_trace_load_mem(csv, strlen(csv), "w.csv", NULL, &x.t, &err))
    SM_FAIL_AT("trace: %s", err.msg);
  if (sm_sim_cluster_parse(cluster, &x.c, &err))
    SM_FAIL_AT("cluster: %s", err.msg);
  sm_sim_config_init(&cfg);
  cfg.policy = pol;
  ASSERT_OK(sm_sim_config_param(&cfg, TABLES));
  ASSERT_OK(sm_sim_config_param(&cfg, solver()));
  for (int i = 0; params && params[i]; i++)
    ASSERT_OK(sm_sim_config_param(&cfg, params[i]));
  x.rc = sm_sim_run(x.t, x.c, &cfg, &x.r, &err);
  snprintf(x.err, sizeof(x.err), "%s", err.msg);
  return x;
}

static void done(srun *x) {
  sm_sim_result_free(x->r);
  sm_sim_cluster_free(x->c);
  sm_sim_trace_free(x->t);
}

static const sm_sim_job *job(const srun *x, const char *id) {
  for (size_t i = 0; i < sm_sim_result_job_count(x->r); i++) {
    const sm_sim_job *j = sm_sim_result_job(x->r, i);
    if (strcmp(j->id, id) == 0)
      return j;
  }
  SM_FAIL_AT("no job %s", id);
  return NULL;
}

static double figure(const srun *x, const char *k) {
  double v;
  if (!sm_sim_result_stat_get(x->r, k, &v))
    SM_FAIL_AT("no figure %s", k);
  return v;
}

static int has_note(const srun *x, const char *needle) {
  for (size_t i = 0; i < sm_sim_result_note_count(x->r); i++)
    if (strstr(sm_sim_result_note(x->r, i), needle) != NULL)
      return 1;
  return 0;
}

/* ==== Sia ==== */

/* A job alone: one GPU of each type is on offer in its first round
 * (nothing is known about it), then at most twice the GPUs it has been
 * seen on; every allocation costs the restore delay (30 s for an
 * application without measured figures) with the GPUs held. */
SM_TEST(sia_policy_bootstrap_growth_and_restore) {
  const char *csv = HDR "a,0,toyconv,1,1024,600\n";
  const char *uncapped[] = {"sia.growth=1000", NULL};
  srun x = run_sia(csv, CLUSTER, "sia", NULL), y;
  const sm_sim_job *j, *k;

  ASSERT_OK(x.rc);
  j = job(&x, "a");
  ASSERT_EQ(j->status, SM_SIM_JOB_DONE);
  ASSERT_NEAR(j->first_start, 0, 0);
  ASSERT(j->starts >= 4); /* 1, 2, 4, 8 ... GPUs */
  ASSERT_NEAR(j->overhead, 30.0 * j->starts, 1e-6);
  ASSERT_NEAR(figure(&x, "sia_restarts"), j->starts - 1, 0);
  ASSERT(figure(&x, "sia_bootstrap_restarts") >= 2);
  ASSERT(j->executed >= j->overhead);
  ASSERT_NEAR(j->end - j->submit, sm_sim_result_summary(x.r)->avg_jct_s, 1e-6);
  ASSERT(has_note(&x, "elastic jobs train to the epochs"));

  /* Without the growth cap it jumps from its bootstrap GPU to its best
   * configuration at once. */
  y = run_sia(csv, CLUSTER, "sia", uncapped);
  ASSERT_OK(y.rc);
  k = job(&y, "a");
  ASSERT(k->starts < j->starts);
  ASSERT(k->end < j->end);
  done(&x);
  done(&y);
}

/* Every job ends, none before it starts, and the GPUs held never exceed
 * the cluster. */
SM_TEST(sia_policy_busy_workload_invariants) {
  char csv[8192];
  size_t n = 0;
  srun x;
  const sm_sim_summary *m;
  const double *t;
  const int *busy, *pend;
  size_t ns;

  n += (size_t)snprintf(csv + n, sizeof(csv) - n, HDR);
  for (int i = 0; i < 40; i++)
    n +=
        (size_t)snprintf(csv + n, sizeof(csv) - n, "j%d,%d,%s,1,%d,600\n", i,
                         i * 45, i % 3 ? "toyconv" : "toylm", i % 3 ? 512 : 64);
  x = run_sia(csv, CLUSTER, "sia", NULL);
  ASSERT_OK(x.rc);
  m = sm_sim_result_summary(x.r);
  ASSERT_EQ(m->completed, 40);
  ASSERT_EQ(m->unfinished, 0);
  ASSERT(m->avg_util > 0 && m->avg_util <= 1.0 + 1e-9);
  for (size_t i = 0; i < sm_sim_result_job_count(x.r); i++) {
    const sm_sim_job *j = sm_sim_result_job(x.r, i);
    ASSERT(j->first_start >= j->submit);
    ASSERT(j->end > j->first_start);
    ASSERT(j->attained > 0);
  }
  ns = sm_sim_result_series(x.r, &t, &busy, &pend);
  ASSERT(ns > 10);
  for (size_t i = 0; i < ns; i++)
    ASSERT(busy[i] >= 0 && busy[i] <= 16);
  ASSERT(figure(&x, "sia_rounds") > 10);
  ASSERT_EQ(figure(&x, "sia_solves_fallback"), 0);
  done(&x);
}

/* Rounds of 300 s react later than rounds of 60 s: higher average JCT. */
SM_TEST(sia_policy_longer_rounds_cost_jct) {
  char csv[8192];
  size_t n = 0;
  const char *p300[] = {"sia.interval=300", NULL};
  srun a, b;

  n += (size_t)snprintf(csv + n, sizeof(csv) - n, HDR);
  for (int i = 0; i < 30; i++)
    n += (size_t)snprintf(csv + n, sizeof(csv) - n, "j%d,%d,%s,1,%d,600\n", i,
                          i * 70, i % 4 ? "toyconv" : "toylm",
                          i % 4 ? 1024 : 128);
  a = run_sia(csv, CLUSTER, "sia", NULL);
  b = run_sia(csv, CLUSTER, "sia", p300);
  ASSERT_OK(a.rc);
  ASSERT_OK(b.rc);
  ASSERT(sm_sim_result_summary(b.r)->avg_jct_s >
         sm_sim_result_summary(a.r)->avg_jct_s);
  done(&a);
  done(&b);
}

/* Profiling on one GPU of each type before the first round: the job
 * starts later and the GPU-hours are counted. */
SM_TEST(sia_policy_profiling_time) {
  const char *csv = HDR "a,0,toyconv,1,1024,600\n";
  const char *p[] = {"sia.profile_s=120", NULL};
  const char *q[] = {"sia.profile_s=slow:60,fast:180", NULL};
  srun x = run_sia(csv, CLUSTER, "sia", p), y;

  ASSERT_OK(x.rc);
  ASSERT_NEAR(job(&x, "a")->first_start, 120, 0);
  ASSERT_NEAR(figure(&x, "sia_profiling_gpu_h"), 2 * 120 / 3600.0, 1e-9);
  ASSERT(has_note(&x, "profiling on one GPU of each type"));
  y = run_sia(csv, CLUSTER, "sia", q);
  ASSERT_OK(y.rc);
  ASSERT_NEAR(job(&y, "a")->first_start, 180, 0);
  ASSERT_NEAR(figure(&y, "sia_profiling_gpu_h"), (60 + 180) / 3600.0, 1e-9);
  done(&x);
  done(&y);
}

/* ==== Sia + SchedMate ==== */

static char *two_jobs(char *buf, size_t n, const char *app2, double t2) {
  snprintf(buf, n, HDR "a,0,toyconv,1,1024,600\nb,%.3f,%s,1,1024,600\n", t2,
           app2);
  return buf;
}

/* b is submitted after a (same application) has ended: a hit.  It starts
 * from a's observations, skips bootstrapping and finishes sooner, with
 * fewer restarts; a itself is untouched. */
SM_TEST(sia_policy_schedmate_hit_skips_bootstrap) {
  char csv[512];
  const char *prof[] = {"sia.profile_s=120", NULL};
  srun one = run_sia(HDR "a,0,toyconv,1,1024,600\n", CLUSTER, "sia", NULL);
  double a_end = job(&one, "a")->end;
  srun s, m, sp, mp;

  two_jobs(csv, sizeof(csv), "toyconv", a_end + 100);
  s = run_sia(csv, CLUSTER, "sia", NULL);
  m = run_sia(csv, CLUSTER, "sia+schedmate", NULL);
  ASSERT_OK(s.rc);
  ASSERT_OK(m.rc);
  ASSERT_NEAR(job(&m, "a")->end, job(&s, "a")->end, 1e-9);
  ASSERT_EQ(figure(&m, "facts_queries"), 2);
  ASSERT_EQ(figure(&m, "facts_hits"), 1);
  ASSERT_NEAR(figure(&m, "facts_hit_rate"), 0.5, 1e-12);
  ASSERT(figure(&m, "sia_seeded_points") > 0);
  ASSERT(job(&m, "b")->starts < job(&s, "b")->starts);
  ASSERT(job(&m, "b")->end - job(&m, "b")->submit <
         job(&s, "b")->end - job(&s, "b")->submit);
  ASSERT(figure(&m, "sia_restarts") < figure(&s, "sia_restarts"));
  ASSERT(has_note(&m, "1 of 2 jobs hit"));
  ASSERT_STREQ(sm_sim_result_summary(m.r)->semantic, "on");

  /* With profiling, the hit skips it and the GPU-hours are saved. */
  {
    srun onep = run_sia(HDR "a,0,toyconv,1,1024,600\n", CLUSTER, "sia", prof);
    two_jobs(csv, sizeof(csv), "toyconv", job(&onep, "a")->end + 100);
    done(&onep);
  }
  sp = run_sia(csv, CLUSTER, "sia", prof);
  mp = run_sia(csv, CLUSTER, "sia+schedmate", prof);
  ASSERT_OK(sp.rc);
  ASSERT_OK(mp.rc);
  ASSERT_NEAR(figure(&mp, "sia_profiling_gpu_h_saved"), 2 * 120 / 3600.0, 1e-9);
  ASSERT_NEAR(job(&mp, "b")->first_start - job(&mp, "b")->submit,
              job(&sp, "b")->first_start - job(&sp, "b")->submit - 120, 61);
  {
    const sm_sim_result *runs[2] = {s.r, m.r};
    sm_buf b;
    sm_buf_init(&b, 0);
    ASSERT_EQ(sm_sia_facts_line(runs, 2, 1, &b), 1);
    ASSERT(strstr(sm_buf_str(&b), "hit rate 50.0%") != NULL);
    ASSERT(strstr(sm_buf_str(&b), "restarts avoided") != NULL);
    ASSERT_EQ(sm_sia_facts_line(runs, 2, 0, &b), 0);
    sm_buf_release(&b);
  }
  {
    const sm_sim_result *runs[2] = {s.r, m.r};
    sm_sim_speedup sp2[4];
    ASSERT_EQ(sm_sim_speedups(runs, 2, sp2, 4), 1);
    ASSERT_STREQ(sp2[0].baseline, "sia");
    ASSERT(sp2[0].avg_jct_speedup > 1.0);
  }
  done(&one);
  done(&s);
  done(&m);
  done(&sp);
  done(&mp);
}

/* The permutation test for Sia's job model: a trace's duration column is
 * not known at submission and Sia's jobs end after their training
 * progress, so shuffling the durations among the jobs changes nothing in
 * either policy: every job ends at the same time, with the same starts,
 * and the same jobs are hits. */
SM_TEST(sia_policy_permuting_durations_changes_nothing) {
  static const char *const pols[] = {"sia", "sia+schedmate"};
  static const double d[8] = {60, 7200, 300, 86400, 45, 1800, 900, 20000};
  char a[1024], b[1024];
  size_t la = 0, lb = 0;

  la += (size_t)snprintf(a, sizeof(a), HDR);
  lb += (size_t)snprintf(b, sizeof(b), HDR);
  for (int i = 0; i < 8; i++) {
    const char *app = i % 3 ? "toyconv" : "toylm";
    int bs = i % 3 ? 1024 : 64;
    la += (size_t)snprintf(a + la, sizeof(a) - la, "j%d,%d,%s,1,%d,%.0f\n", i,
                           i * 400, app, bs, d[i]);
    lb += (size_t)snprintf(b + lb, sizeof(b) - lb, "j%d,%d,%s,1,%d,%.0f\n", i,
                           i * 400, app, bs, d[(i * 5 + 3) % 8]);
  }
  for (size_t p = 0; p < SM_ARRAY_LEN(pols); p++) {
    srun x = run_sia(a, CLUSTER, pols[p], NULL);
    srun y = run_sia(b, CLUSTER, pols[p], NULL);
    ASSERT_OK(x.rc);
    ASSERT_OK(y.rc);
    ASSERT_EQ(sm_sim_result_job_count(x.r), sm_sim_result_job_count(y.r));
    for (size_t i = 0; i < sm_sim_result_job_count(x.r); i++) {
      const sm_sim_job *jx = sm_sim_result_job(x.r, i);
      const sm_sim_job *jy = sm_sim_result_job(y.r, i);
      ASSERT_NEAR(jx->end, jy->end, 1e-9);
      ASSERT_NEAR(jx->first_start, jy->first_start, 1e-9);
      ASSERT_EQ(jx->starts, jy->starts);
    }
    if (p == 1)
      ASSERT_EQ(figure(&x, "facts_hits"), figure(&y, "facts_hits"));
    done(&x);
    done(&y);
  }
}

/* A miss (another application), or a match whose outcome is not known
 * when the job is submitted (a is still running), changes nothing. */
SM_TEST(sia_policy_schedmate_miss_is_sia) {
  char csv[512];
  srun one = run_sia(HDR "a,0,toyconv,1,1024,600\n", CLUSTER, "sia", NULL);
  double a_end = job(&one, "a")->end;
  const char *cases[2][2] = {{"toylm", NULL}, {"toyconv", NULL}};
  double when[2] = {a_end + 100, a_end - 1};

  for (int c = 0; c < 2; c++) {
    srun s, m;
    two_jobs(csv, sizeof(csv), cases[c][0], when[c]);
    s = run_sia(csv, CLUSTER, "sia", NULL);
    m = run_sia(csv, CLUSTER, "sia+schedmate", NULL);
    ASSERT_OK(s.rc);
    ASSERT_OK(m.rc);
    ASSERT_EQ(figure(&m, "facts_hits"), 0);
    for (size_t i = 0; i < sm_sim_result_job_count(s.r); i++) {
      const sm_sim_job *x = sm_sim_result_job(s.r, i);
      const sm_sim_job *y = sm_sim_result_job(m.r, i);
      ASSERT_NEAR(x->end, y->end, 1e-9);
      ASSERT_EQ(x->starts, y->starts);
    }
    done(&s);
    done(&m);
  }
  done(&one);
}

/* ==== Sets of workload files ==== */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    SM_FAIL_AT("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

SM_TEST(sia_policy_workload_set) {
  char dir[] = "/tmp/sm-sia-set-XXXXXX", p1[128], p2[128], p3[128];
  sm_sim_trace *t;
  sm_sim_cluster *c;
  sm_sim_result *r;
  sm_sim_config cfg;
  sm_err err = {0};
  double end[2] = {0, 0};
  const sm_sim_summary *m;

  ASSERT(mkdtemp(dir) != NULL);
  snprintf(p1, sizeof(p1), "%s/workload-2.csv", dir);
  snprintf(p2, sizeof(p2), "%s/workload-10.csv", dir);
  snprintf(p3, sizeof(p3), "%s/notes.txt", dir);
  write_file(p1, HDR "a,5,toyconv,1,512,600\nb,30,toylm,1,64,600\n");
  write_file(p2, HDR "a,0,toylm,1,64,600\n");
  write_file(p3, "not a workload\n");
  ASSERT_OK(sm_sim_trace_load_set(dir, NULL, &t, &err));
  ASSERT_EQ(sm_sim_trace_count(t), 3);
  /* Natural order of the files, each from its own time 0. */
  ASSERT_STREQ(sm_sim_job_attr(sm_sim_trace_job(t, 0), "workload"),
               "workload-2");
  ASSERT_STREQ(sm_sim_trace_job(t, 0)->id, "workload-2/a");
  ASSERT_STREQ(sm_sim_job_attr(sm_sim_trace_job(t, 1), "workload"),
               "workload-10");
  ASSERT_NEAR(sm_sim_trace_job(t, 2)->submit, 25, 1e-9);
  ASSERT_OK(sm_sim_cluster_parse(CLUSTER, &c, &err));
  sm_sim_config_init(&cfg);
  cfg.policy = "sia";
  ASSERT_OK(sm_sim_config_param(&cfg, TABLES));
  ASSERT_OK(sm_sim_config_param(&cfg, solver()));
  ASSERT_OK(sm_sim_run(t, c, &cfg, &r, &err));
  m = sm_sim_result_summary(r);
  ASSERT_EQ(m->completed, 3);
  ASSERT_EQ(figure(&(srun){t, c, r, "", 0}, "sia_workload_files"), 2);
  /* Makespan: the mean over the files of last end - first submission. */
  for (size_t i = 0; i < sm_sim_result_job_count(r); i++) {
    const sm_sim_job *j = sm_sim_result_job(r, i);
    int w = strcmp(sm_sim_job_attr(j, "workload"), "workload-2") == 0;
    end[w] = fmax(end[w], j->end);
  }
  ASSERT_NEAR(m->makespan_s, (end[0] - 0 + end[1] - 0) / 2, 1e-6);
  sm_sim_result_free(r);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
  /* A file of another layout in the set is refused. */
  write_file(p3, "not a workload\n");
  rename(p3, p1);
  memset(&err, 0, sizeof(err));
  ASSERT(sm_sim_trace_load_set(dir, NULL, &t, &err) != 0);
  ASSERT(strstr(err.msg, "workload-2.csv") != NULL);
  unlink(p1);
  unlink(p2);
  memset(&err, 0, sizeof(err));
  ASSERT_EQ(sm_sim_trace_load_set(dir, NULL, &t, &err), SM_ENOENT);
  ASSERT(strstr(err.msg, "without .csv files") != NULL);
  rmdir(dir);
}

/* ==== Errors ==== */

SM_TEST(sia_policy_errors) {
  const char *csv = HDR "a,0,toyconv,1,1024,600\n";
  const char *bad_p[] = {"sia.p=0", NULL};
  const char *half_nodes[] = {"sia.max_nodes=2.5", NULL};
  const char *half_gpus[] = {"sia.max_gpus=7.9", NULL};
  const char *bad_solver[] = {"sia.solver=simplex", NULL};
  const char *bad_prof[] = {"sia.profile_s=gpu:1", NULL};
  const char *no_tables[] = {"sia.tables=/nonexistent/tables", NULL};
  srun x;

  x = run_sia(csv, "4x4", "sia", NULL);
  ASSERT(x.rc != 0 && strstr(x.err, "must be named") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", bad_p);
  ASSERT(x.rc != 0 && strstr(x.err, "sia.p") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", half_nodes);
  ASSERT(x.rc != 0 && strstr(x.err, "sia.max_nodes") != NULL &&
         strstr(x.err, "whole number") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", half_gpus);
  ASSERT(x.rc != 0 && strstr(x.err, "sia.max_gpus=7.9") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", bad_solver);
  ASSERT(x.rc != 0 && strstr(x.err, "cbc or greedy") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", bad_prof);
  ASSERT(x.rc != 0 && strstr(x.err, "sia.profile_s") != NULL);
  done(&x);
  x = run_sia(csv, CLUSTER, "sia", no_tables);
  ASSERT(x.rc != 0 && strstr(x.err, "/nonexistent/tables/toyconv") != NULL);
  done(&x);
  x = run_sia(HDR "a,0,resnet,1,1024,600\n", CLUSTER, "sia", NULL);
  ASSERT(x.rc != 0 && strstr(x.err, "'resnet'") != NULL);
  done(&x);
  x = run_sia(HDR "a,0,toyconv,1,big,600\n", CLUSTER, "sia", NULL);
  ASSERT(x.rc != 0 && strstr(x.err, "w.csv:2") != NULL &&
         strstr(x.err, "batch_size") != NULL);
  done(&x);
  {
    /* A trace without applications (the generic layout). */
    sm_sim_trace *t;
    sm_sim_cluster *c;
    sm_sim_result *r;
    sm_sim_config cfg;
    sm_err err = {0};
    const char *g = "job_id,submit_s,duration_s,gpus\nj1,0,100,1\n";
    ASSERT_OK(sm_sim_trace_load_mem(g, strlen(g), "g.csv", NULL, &t, &err));
    ASSERT_OK(sm_sim_cluster_parse(CLUSTER, &c, &err));
    sm_sim_config_init(&cfg);
    cfg.policy = "sia";
    ASSERT_OK(sm_sim_config_param(&cfg, TABLES));
    ASSERT_OK(sm_sim_config_param(&cfg, solver()));
    ASSERT(sm_sim_run(t, c, &cfg, &r, &err) != 0);
    ASSERT(strstr(err.msg, "g.csv:2") != NULL);
    ASSERT(strstr(err.msg, "no application") != NULL);
    sm_sim_cluster_free(c);
    sm_sim_trace_free(t);
  }
}

/* Without CBC the default solver is refused with the reason; the greedy
 * fallback runs and says it is not Sia's MILP. */
SM_TEST(sia_policy_solver_availability) {
  const char *csv = HDR "a,0,toyconv,1,1024,600\nb,10,toylm,1,64,600\n";
  const char *greedy[] = {"sia.solver=greedy", NULL};
  srun x;

  if (!sm_sia_have_solver()) {
    const char *cbc[] = {"sia.solver=cbc", NULL};
    x = run_sia(csv, CLUSTER, "sia", cbc);
    ASSERT_EQ(x.rc, SM_EUNSUPP);
    ASSERT(strstr(x.err, "coinor-libcbc-dev") != NULL);
    ASSERT(strstr(x.err, "sia.solver=greedy") != NULL);
    done(&x);
  }
  x = run_sia(csv, CLUSTER, "sia", greedy);
  ASSERT_OK(x.rc);
  ASSERT(figure(&x, "sia_solves_greedy") > 0);
  ASSERT_EQ(figure(&x, "sia_solves_optimal"), 0);
  ASSERT(has_note(&x, "greedy allocation (sia.solver=greedy)"));
  done(&x);
}

/* A year without submissions costs no rounds: the empty cluster waits
 * for the next submission's round (on the same 60 s grid). */
SM_TEST(sia_policy_idle_gap_is_skipped) {
  const char *csv = HDR "a,0,toyconv,1,1024,600\n"
                        "b,31536000,toylm,1,64,600\n";
  srun x = run_sia(csv, CLUSTER, "sia", NULL);
  const sm_sim_job *b;

  ASSERT_OK(x.rc);
  b = job(&x, "b");
  ASSERT_EQ(sm_sim_result_summary(x.r)->completed, 2);
  ASSERT(figure(&x, "sia_rounds") < 2000);
  ASSERT(b->first_start >= b->submit);
  ASSERT(b->first_start - b->submit < 60);
  ASSERT_NEAR(fmod(b->first_start, 60), 0, 1e-6);
  done(&x);
}
