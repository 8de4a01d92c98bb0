/* test_sim_engine.c - the simulator engine and the baseline policies on
 * small traces whose schedules are computed by hand in the comments:
 * FIFO head-of-line blocking, SJF order, SRTF and Tiresias preemption and
 * demotion, multi-node placement, VC isolation, GPU speeds, and the engine
 * calls later policies rely on (sharing, restarts, node outages). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

/* ==== Helpers ==== */

typedef struct run {
  sm_sim_trace *t;
  sm_sim_cluster *c;
  sm_sim_result *r;
} run;

static sm_sim_trace *trace_of(const char *csv) {
  sm_sim_trace *t = NULL;
  sm_err err = {0};

  if (sm_sim_trace_load_mem(csv, strlen(csv), "test.csv", NULL, &t, &err))
    SM_FAIL_AT("trace: %s", err.msg);
  return t;
}

/* Runs policy on the generic-layout csv; params are "k=v" or NULL. */
static run simulate(const char *csv, const char *cluster, const char *pol,
                    const char *p1, const char *p2) {
  run x;
  sm_err err = {0};
  sm_sim_config cfg;

  x.t = trace_of(csv);
  if (sm_sim_cluster_parse(cluster, &x.c, &err))
    SM_FAIL_AT("cluster: %s", err.msg);
  sm_sim_config_init(&cfg);
  cfg.policy = pol;
  if (p1)
    sm_sim_config_param(&cfg, p1);
  if (p2)
    sm_sim_config_param(&cfg, p2);
  if (sm_sim_run(x.t, x.c, &cfg, &x.r, &err))
    SM_FAIL_AT("run %s: %s", pol, err.msg);
  return x;
}

static void done(run *x) {
  sm_sim_result_free(x->r);
  sm_sim_cluster_free(x->c);
  sm_sim_trace_free(x->t);
}

static const sm_sim_job *job(const run *x, const char *id) {
  for (size_t i = 0; i < sm_sim_result_job_count(x->r); i++) {
    const sm_sim_job *j = sm_sim_result_job(x->r, i);
    if (strcmp(j->id, id) == 0)
      return j;
  }
  SM_FAIL_AT("no job %s", id);
  return NULL;
}

#define ASSERT_RUN(x, id, t_start, t_end)                                      \
  do {                                                                         \
    const sm_sim_job *j_ = job(&(x), id);                                      \
    ASSERT_NEAR(j_->first_start, t_start, 1e-6);                               \
    ASSERT_NEAR(j_->end, t_end, 1e-6);                                         \
  } while (0)

/* ==== FIFO, SJF, backfill ==== */

/* One node of 4 GPUs.  A (2 GPUs) runs 0-100.  B (4 GPUs) arrives at 10
 * and cannot fit; C (1 GPU) arrives at 20 and would fit in the 2 free
 * GPUs, but FIFO keeps it behind B: B runs 100-150, C 150-160.  With
 * backfill C runs at once, 20-30. */
static const char *hol = "job_id,submit_s,duration_s,gpus\n"
                         "A,0,100,2\n"
                         "B,10,50,4\n"
                         "C,20,10,1\n";

SM_TEST(sim_fifo_head_of_line_blocking) {
  run x = simulate(hol, "1x4", "fifo", NULL, NULL);
  const sm_sim_summary *m = sm_sim_result_summary(x.r);

  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "B", 100, 150);
  ASSERT_RUN(x, "C", 150, 160);
  ASSERT_NEAR(m->avg_jct_s, (100.0 + 140 + 140) / 3, 1e-9);
  ASSERT_NEAR(m->avg_queue_s, (0.0 + 90 + 130) / 3, 1e-9);
  ASSERT_NEAR(m->makespan_s, 160, 1e-9);
  ASSERT_EQ(m->completed, 3);
  ASSERT_EQ(m->preemptions, 0);
  /* GPU-seconds: 2*100 + 4*50 + 1*10 = 410 over 4 GPUs x 160 s. */
  ASSERT_NEAR(m->avg_util, 410.0 / 640.0, 1e-9);
  done(&x);
}

SM_TEST(sim_fifo_backfill_skips_blocked_head) {
  run x = simulate(hol, "1x4", "fifo", "backfill=1", NULL);

  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "B", 100, 150);
  ASSERT_RUN(x, "C", 20, 30);
  done(&x);
}

/* One GPU.  A runs 0-100 (nothing else is there).  At 100 SJF picks by
 * true duration: C (10) 100-110, D (30) 110-140, B (50) 140-190; FIFO
 * keeps submit order: B 100-150, C 150-160, D 160-190. */
static const char *four = "job_id,submit_s,duration_s,gpus\n"
                          "A,0,100,1\n"
                          "B,1,50,1\n"
                          "C,2,10,1\n"
                          "D,3,30,1\n";

SM_TEST(sim_sjf_order) {
  run x = simulate(four, "1x1", "sjf", NULL, NULL);
  run y = simulate(four, "1x1", "fifo", NULL, NULL);

  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "C", 100, 110);
  ASSERT_RUN(x, "D", 110, 140);
  ASSERT_RUN(x, "B", 140, 190);
  ASSERT_RUN(y, "B", 100, 150);
  ASSERT_RUN(y, "C", 150, 160);
  ASSERT_RUN(y, "D", 160, 190);
  ASSERT(sm_sim_result_summary(x.r)->avg_jct_s <
         sm_sim_result_summary(y.r)->avg_jct_s);
  done(&x);
  done(&y);
}

/* QSSF with the oracle estimator orders by duration x GPUs.  Two GPUs; A
 * holds both 0-100.  Waiting at 100: B (2 GPUs x 30 = 60) and C (1 GPU x
 * 50 = 50): C goes first (100-150) although B is shorter, and B needs
 * both GPUs, so it waits until 150 (150-180).  SJF would run B first. */
SM_TEST(sim_qssf_orders_by_service) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,2\n"
                    "B,1,30,2\n"
                    "C,2,50,1\n";
  run x = simulate(csv, "1x2", "qssf", "estimator=oracle", NULL);
  run y = simulate(csv, "1x2", "sjf", NULL, NULL);

  ASSERT_RUN(x, "C", 100, 150);
  ASSERT_RUN(x, "B", 150, 180);
  ASSERT_RUN(y, "B", 100, 130);
  ASSERT_RUN(y, "C", 130, 180);
  done(&x);
  done(&y);
}

/* QSSF with the history estimator learns per user and name from jobs that
 * have ended.  One GPU.  u/long ran 1000 s and u/short 10 s earlier; at
 * time 2000 the next long and short jobs are queued behind a blocker;
 * short is estimated 10 s, long 1000 s, so short runs first although it
 * was submitted later. */
SM_TEST(sim_qssf_history_estimator) {
  const char *csv = "job_id,submit_s,duration_s,gpus,user,name\n"
                    "l1,0,1000,1,u,long\n"
                    "s1,1000,10,1,u,short\n"
                    "blk,1500,600,1,v,block\n"
                    "l2,1600,1000,1,u,long\n"
                    "s2,1700,10,1,u,short\n";
  run x = simulate(csv, "1x1", "qssf", NULL, NULL);

  ASSERT_RUN(x, "blk", 1500, 2100);
  ASSERT_RUN(x, "s2", 2100, 2110);
  ASSERT_RUN(x, "l2", 2110, 3110);
  done(&x);
}

/* ==== Preemptive policies ==== */

/* One GPU.  A (100 s) starts at 0; B (20 s) arrives at 10 with less
 * remaining than A's 90, so SRTF preempts A (overhead 40 s: A now needs
 * 90 + 40 = 130 s) and runs B 10-30; A resumes at 30 and ends at 160. */
SM_TEST(sim_srtf_preempts_longer_job) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,1\n"
                    "B,10,20,1\n";
  run x = simulate(csv, "1x1", "srtf", NULL, NULL);
  const sm_sim_job *a = job(&x, "A");

  ASSERT_RUN(x, "B", 10, 30);
  ASSERT_NEAR(a->first_start, 0, 1e-9);
  ASSERT_NEAR(a->end, 160, 1e-6);
  ASSERT_EQ(a->preemptions, 1);
  ASSERT_NEAR(a->overhead, 40, 1e-9);
  ASSERT_NEAR(a->queued, 20, 1e-6);
  ASSERT_EQ(sm_sim_result_summary(x.r)->preemptions, 1);
  done(&x);
}

/* Jobs above 8 GPUs pay the large overhead (60 s).  Two nodes of 8.  A
 * (16 GPUs, 100 s) starts at 0; B (16 GPUs, 10 s) at 50 preempts it
 * (A needs 50 + 60 = 110 s more), runs 50-60; A ends at 170. */
SM_TEST(sim_srtf_large_job_overhead) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,16\n"
                    "B,50,10,16\n";
  run x = simulate(csv, "2x8", "srtf", NULL, NULL);

  ASSERT_RUN(x, "B", 50, 60);
  ASSERT_NEAR(job(&x, "A")->end, 170, 1e-6);
  ASSERT_NEAR(job(&x, "A")->overhead, 60, 1e-9);
  done(&x);
}

/* Tiresias with rounds at every event (interval 0) and one threshold of
 * 100 GPU-s on one GPU.  A (300 s) runs from 0 and is demoted at 100.
 * B arrives at 150 in the top queue and preempts A (A has 150 s left +
 * 40 s overhead = 190 s).  B runs 150-200, A resumes 200-390. */
static const char *tir = "job_id,submit_s,duration_s,gpus\n"
                         "A,0,300,1\n"
                         "B,150,50,1\n";

SM_TEST(sim_tiresias_demotion_and_preemption) {
  run x = simulate(tir, "1x1", "tiresias", "tiresias.thresholds=100",
                   "tiresias.interval=0");
  double v = -1;

  ASSERT_RUN(x, "B", 150, 200);
  ASSERT_NEAR(job(&x, "A")->end, 390, 1e-6);
  ASSERT_EQ(job(&x, "A")->preemptions, 1);
  for (size_t i = 0; i < sm_sim_result_stat_count(x.r); i++)
    if (strcmp(sm_sim_result_stat(x.r, i, NULL), "demotions") == 0)
      sm_sim_result_stat(x.r, i, &v);
  ASSERT_NEAR(v, 1, 0);
  done(&x);
}

/* Without the demotion (threshold 1000) A stays ahead of B (same queue,
 * earlier submission): A 0-300, B 300-350, no preemption. */
SM_TEST(sim_tiresias_no_demotion_keeps_fifo) {
  run x = simulate(tir, "1x1", "tiresias", "tiresias.thresholds=1000",
                   "tiresias.interval=0");

  ASSERT_RUN(x, "A", 0, 300);
  ASSERT_RUN(x, "B", 300, 350);
  ASSERT_EQ(sm_sim_result_summary(x.r)->preemptions, 0);
  done(&x);
}

/* With 60 s rounds (the default) decisions wait for the next multiple of
 * 60: B arrives at 150, the round at 180 preempts A (180 s done, 120 +
 * 40 left); B runs 180-230; the round at 240 restarts A, which ends at
 * 400. */
SM_TEST(sim_tiresias_rounds_every_60s) {
  run x = simulate(tir, "1x1", "tiresias", "tiresias.thresholds=100", NULL);

  ASSERT_RUN(x, "B", 180, 230);
  ASSERT_NEAR(job(&x, "A")->end, 400, 1e-6);
  ASSERT_NEAR(job(&x, "A")->queued, 60, 1e-6);
  done(&x);
}

/* Two-dimensional: attained service counts GPUs.  Threshold 100 GPU-s.
 * A (4 GPUs, 100 s) crosses it after 25 s; B (1 GPU) arrives at 30 on a
 * 4-GPU node and preempts A (70 s + 40 s left).  B runs 30-40, A 40-150. */
SM_TEST(sim_tiresias_attained_counts_gpus) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,4\n"
                    "B,30,10,1\n";
  run x = simulate(csv, "1x4", "tiresias", "tiresias.thresholds=100",
                   "tiresias.interval=0");

  ASSERT_RUN(x, "B", 30, 40);
  ASSERT_NEAR(job(&x, "A")->end, 150, 1e-6);
  done(&x);
}

/* ==== Placement ==== */

/* Four nodes of 8.  A (4) goes to one node; B (12) needs two nodes: a
 * whole free node plus the 4 left next to A; C (16) takes the two last
 * nodes; D (8) waits for a whole node: when A ends at 100 its node still
 * holds 4 GPUs of B, so D starts only when B ends at 101. */
SM_TEST(sim_multinode_consolidated_placement) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,4\n"
                    "B,1,100,12\n"
                    "C,2,100,16\n"
                    "D,3,10,8\n";
  run x = simulate(csv, "4x8", "fifo", NULL, NULL);

  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "B", 1, 101);
  ASSERT_RUN(x, "C", 2, 102);
  ASSERT_RUN(x, "D", 101, 111);
  done(&x);
}

/* Two nodes of 8: A and B take 6 GPUs on each.  C (4) sees 4 free GPUs,
 * 2 per node.  Consolidate keeps C to one node, so it waits for A's end
 * (100); first-fit spreads it over both nodes at once. */
SM_TEST(sim_consolidate_vs_first_fit) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,6\n"
                    "B,0,200,6\n"
                    "C,1,10,4\n";
  run x = simulate(csv, "2x8", "fifo", NULL, NULL);
  run y;
  sm_err err = {0};
  sm_sim_config cfg;

  ASSERT_RUN(x, "C", 100, 110);
  y.t = trace_of(csv);
  ASSERT_OK(sm_sim_cluster_parse("2x8", &y.c, &err));
  sm_sim_config_init(&cfg);
  cfg.placement = SM_SIM_PLACE_FIRST_FIT;
  ASSERT_OK(sm_sim_run(y.t, y.c, &cfg, &y.r, &err));
  ASSERT_RUN(y, "C", 1, 11);
  done(&x);
  done(&y);
}

/* VCs are isolated: a (4 GPUs) and b (4 GPUs).  A fills a; B waits in a
 * although b is idle; C runs in b at once; D's VC does not exist and is
 * left out, with a note. */
SM_TEST(sim_vc_isolation) {
  const char *csv = "job_id,submit_s,duration_s,gpus,vc\n"
                    "A,0,100,4,a\n"
                    "B,1,10,1,a\n"
                    "C,2,10,1,b\n"
                    "D,3,10,1,zz\n";
  run x = simulate(csv, "a=1x4,b=1x4", "fifo", NULL, NULL);
  const sm_sim_summary *m = sm_sim_result_summary(x.r);
  int noted = 0;

  ASSERT_RUN(x, "B", 100, 110);
  ASSERT_RUN(x, "C", 2, 12);
  ASSERT_EQ(job(&x, "D")->status, SM_SIM_JOB_DROPPED);
  ASSERT_EQ(m->jobs, 3);
  ASSERT_EQ(m->dropped, 1);
  for (size_t i = 0; i < sm_sim_result_note_count(x.r); i++)
    noted |= strstr(sm_sim_result_note(x.r, i), "'zz'") != NULL;
  ASSERT(noted);
  done(&x);
}

/* A job larger than its VC is capped to the VC (and noted), or refused
 * with its line when --oversize error. */
SM_TEST(sim_oversize_cap_and_error) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,32\n";
  run x = simulate(csv, "2x8", "fifo", NULL, NULL);
  sm_sim_config cfg;
  sm_sim_result *r = NULL;
  sm_err err = {0};

  ASSERT_EQ(job(&x, "A")->gpus, 16);
  ASSERT_EQ(job(&x, "A")->trace_gpus, 32);
  ASSERT(strstr(sm_sim_result_note(x.r, 0), "capped") != NULL);
  sm_sim_config_init(&cfg);
  cfg.oversize = SM_SIM_OVERSIZE_ERROR;
  ASSERT_EQ(sm_sim_run(x.t, x.c, &cfg, &r, &err), SM_ERANGE);
  ASSERT(strstr(err.msg, "test.csv:2") != NULL);
  ASSERT(strstr(err.msg, "32 GPUs") != NULL);
  done(&x);
}

/* GPU types run at their speed: the fast node (speed 2) takes A first:
 * 100 s of work in 50 s; B goes to the slow node (0.5): 200 s.  C asks
 * for the slow type and waits for it (200-400). */
SM_TEST(sim_heterogeneous_speeds) {
  const char *csv = "job_id,submit_s,duration_s,gpus,gpu_type\n"
                    "A,0,100,1,\n"
                    "B,0,100,1,\n"
                    "C,0,100,1,slow\n";
  run x = simulate(csv, "1x1:fast@2,1x1:slow@0.5", "fifo", NULL, NULL);

  ASSERT_RUN(x, "A", 0, 50);
  ASSERT_RUN(x, "B", 0, 200);
  ASSERT_RUN(x, "C", 200, 400);
  done(&x);
}

/* ==== Invariants and determinism on random traces ==== */

static char *random_trace(uint64_t seed, int n) {
  sm_buf b;
  sm_rng r;
  double t = 0;

  sm_buf_init(&b, 0);
  sm_rng_seed(&r, seed);
  sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,vc,user,name,state\n");
  for (int i = 0; i < n; i++) {
    static const int g[] = {1, 1, 1, 2, 4, 8, 12, 16};
    static const char *const st[] = {"completed", "failed", "canceled"};
    t += floor(-log(1 - sm_rng_uniform(&r)) * 30);
    sm_buf_addf(&b, "j%d,%.0f,%.0f,%d,%s,u%d,n%d,%s\n", i, t,
                floor(exp(3 + 3 * sm_rng_uniform(&r))), g[sm_rng_next(&r) % 8],
                sm_rng_uniform(&r) < 0.6 ? "a" : "b",
                (int)(sm_rng_next(&r) % 5), (int)(sm_rng_next(&r) % 3),
                st[sm_rng_next(&r) % 3]);
  }
  return sm_buf_take(&b);
}

SM_TEST(sim_invariants_all_policies_random_traces) {
  static const char *const pols[] = {"fifo", "sjf", "srtf", "qssf", "tiresias"};
  static const char *const clusters[] = {"a=3x8,b=2x8", "a=2x4,b=5x2",
                                         "a=2x8:x@1,b=1x8:y@2"};

  for (uint64_t seed = 1; seed <= 6; seed++) {
    char *csv = random_trace(seed, 300);
    for (size_t p = 0; p < SM_ARRAY_LEN(pols); p++)
      for (size_t c = 0; c < SM_ARRAY_LEN(clusters); c++) {
        run x =
            simulate(csv, clusters[c], pols[p], seed % 2 ? "backfill=1" : NULL,
                     seed % 3 ? "tiresias.interval=0" : NULL);
        const sm_sim_summary *m = sm_sim_result_summary(x.r);
        double busy = 0;
        ASSERT_EQ(m->jobs, 300);
        ASSERT_EQ(m->unfinished, 0);
        for (size_t i = 0; i < sm_sim_result_job_count(x.r); i++) {
          const sm_sim_job *j = sm_sim_result_job(x.r, i);
          ASSERT(j->first_start >= j->submit);
          ASSERT(j->end >= j->first_start);
          ASSERT(j->end - j->submit >= j->duration / 2 - 1e-6);
          busy += j->executed * j->gpus;
        }
        /* No GPU over-allocated: the time series never exceeds the
         * cluster, and the average utilisation is at most 1. */
        {
          const double *t;
          const int *bz, *pd;
          size_t n = sm_sim_result_series(x.r, &t, &bz, &pd);
          for (size_t i = 0; i < n; i++) {
            ASSERT(bz[i] >= 0 && bz[i] <= m->gpus);
            ASSERT(pd[i] >= 0 && pd[i] <= 300);
            ASSERT(i == 0 || t[i] > t[i - 1]);
          }
        }
        ASSERT(m->avg_util <= 1 + 1e-9);
        ASSERT(busy > 0);
        done(&x);
      }
    free(csv);
  }
}

SM_TEST(sim_deterministic_for_a_seed) {
  char *csv = random_trace(42, 500);
  sm_buf a, b;

  sm_buf_init(&a, 0);
  sm_buf_init(&b, 0);
  for (int k = 0; k < 2; k++) {
    sm_sim_trace *t = trace_of(csv);
    sm_sim_cluster *c = NULL;
    sm_sim_result *r = NULL;
    sm_sim_config cfg;
    sm_err err = {0};
    ASSERT_OK(sm_sim_cluster_parse("a=2x8,b=2x8", &c, &err));
    sm_sim_config_init(&cfg);
    cfg.policy = "qssf";
    cfg.seed = 7;
    sm_sim_config_param(&cfg, "estimator=noisy:lognormal:1");
    ASSERT_OK(sm_sim_run(t, c, &cfg, &r, &err));
    ASSERT_OK(sm_sim_result_jobs_csv(r, k ? &b : &a));
    sm_sim_result_free(r);
    sm_sim_cluster_free(c);
    sm_sim_trace_free(t);
  }
  ASSERT(a.len > 1000);
  ASSERT_EQ(a.len, b.len);
  ASSERT(memcmp(a.data, b.data, a.len) == 0);
  sm_buf_release(&a);
  sm_buf_release(&b);
  free(csv);
}

/* Trace end states carry over; JCT counts every job that ended. */
SM_TEST(sim_end_states_counted) {
  const char *csv = "job_id,submit_s,duration_s,gpus,state\n"
                    "A,0,10,1,completed\n"
                    "B,0,10,1,failed\n"
                    "C,0,10,1,canceled\n"
                    "D,0,10,1,\n";
  run x = simulate(csv, "1x4", "fifo", NULL, NULL);
  const sm_sim_summary *m = sm_sim_result_summary(x.r);

  ASSERT_EQ(m->completed, 2);
  ASSERT_EQ(m->failed, 1);
  ASSERT_EQ(m->canceled, 1);
  ASSERT_NEAR(m->avg_jct_s, 10, 1e-9);
  done(&x);
}

/* ==== Engine calls for later policies ==== */

/* A test policy: FIFO that packs the second arrival onto the first at
 * half speed each, restarts failed jobs once from scratch after 30 s,
 * and takes node 0 down for the first 50 s. */
typedef struct tp_state {
  sm_sim_job *q[16]; /* pending, FIFO */
  int n;             /* count */
} tp_state;

static int tp_init(sm_sim *s, void **st, sm_err *err) {
  (void)err;
  *st = sm_sim_alloc_mem(s, sizeof(tp_state));
  if (sm_sim_param_num(s, "test.down", 0) > 0)
    sm_sim_node_down(s, 0, 50);
  return *st ? 0 : SM_ENOMEM;
}

static void tp_arrive(sm_sim *s, void *st, sm_sim_job *j) {
  tp_state *p = st;
  (void)s;
  p->q[p->n++] = j;
}

static void tp_finish(sm_sim *s, void *st, sm_sim_job *j) {
  (void)st;
  if (j->final_state == SM_SIM_END_FAILED && j->restarts == 0 &&
      sm_sim_param_num(s, "test.restart", 0) > 0) {
    ASSERT_OK(sm_sim_job_restart(s, j, j->duration, 30));
    sm_sim_stat_add(s, "restarts_done", 1);
    return;
  }
  /* A peer left alone gets its full speed back. */
  for (size_t i = 0; i < sm_sim_job_count(s); i++) {
    sm_sim_job *o = sm_sim_job_at(s, i);
    if (o != j && o->status == SM_SIM_JOB_RUNNING && o->rate < 1)
      sm_sim_set_rate(s, o, 1);
  }
}

static void tp_schedule(sm_sim *s, void *st, int vc) {
  tp_state *p = st;
  int k = 0;
  (void)vc;
  for (int i = 0; i < p->n; i++) {
    sm_sim_job *j = p->q[i];
    sm_sim_job *host = NULL;
    if (sm_sim_param_num(s, "test.share", 0) > 0)
      for (size_t h = 0; h < sm_sim_job_count(s); h++) {
        sm_sim_job *o = sm_sim_job_at(s, h);
        if (o->status == SM_SIM_JOB_RUNNING && !o->shared)
          host = o;
      }
    if (host != NULL && sm_sim_start_shared(s, j, host, 0.5, 0.5))
      continue;
    if (sm_sim_start(s, j))
      continue;
    if (sm_sim_param_num(s, "test.borrow", 0) > 0 && sm_sim_start_in(s, j, 1))
      continue;
    p->q[k++] = j;
  }
  p->n = k;
}

static const sm_sim_policy test_policy = {
    "test-engine", "engine calls", 0,    tp_init,     NULL,
    tp_arrive,     tp_finish,      NULL, tp_schedule, NULL};

static void ensure_test_policy(void) {
  if (sm_sim_policy_find("test-engine") == NULL)
    ASSERT_OK(sm_sim_policy_register(&test_policy));
}

/* Packing: A (100 s) and B (50 s) share one GPU at half speed from 0.  B
 * ends at 100 (50 s of work at 0.5); A has done 50 and gets full speed
 * back: it ends at 150.  The GPU counts once. */
SM_TEST(sim_engine_shared_gpus_and_rates) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,1\n"
                    "B,0,50,1\n";
  run x;
  const sm_sim_summary *m;

  ensure_test_policy();
  x = simulate(csv, "1x1", "test-engine", "test.share=1", NULL);
  m = sm_sim_result_summary(x.r);
  ASSERT_RUN(x, "A", 0, 150);
  ASSERT_RUN(x, "B", 0, 100);
  ASSERT_NEAR(m->avg_util, 1.0, 1e-9);
  ASSERT(sm_sim_policy_register(&test_policy) == SM_EINVAL);
  done(&x);
}

/* Restart after a failure: F fails after 40 s, comes back 30 s later with
 * all its work (70-110); the engine counts one restart. */
SM_TEST(sim_engine_restart_after_failure) {
  const char *csv = "job_id,submit_s,duration_s,gpus,state\n"
                    "F,0,40,1,failed\n";
  run x;
  const sm_sim_job *f;

  ensure_test_policy();
  x = simulate(csv, "1x1", "test-engine", "test.restart=1", NULL);
  f = job(&x, "F");
  ASSERT_NEAR(f->first_start, 0, 1e-9);
  ASSERT_NEAR(f->end, 110, 1e-6);
  ASSERT_EQ(f->restarts, 1);
  ASSERT_EQ(sm_sim_result_summary(x.r)->restarts, 1);
  done(&x);
}

/* Node outage: node 0 is down until 50.  A takes node 1 (0-100); B
 * arrives at 10 and waits for node 0 to return at 50 (50-60). */
SM_TEST(sim_engine_node_down) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,1\n"
                    "B,10,10,1\n";
  run x;

  ensure_test_policy();
  x = simulate(csv, "2x1", "test-engine", "test.down=1", NULL);
  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "B", 50, 60);
  done(&x);
}

/* Borrowing another VC's nodes (a profiling partition): B does not fit
 * in VC main and runs on VC prof's node (node 1) at once; after its end
 * its last placement is still readable. */
SM_TEST(sim_engine_start_in_other_vc) {
  const char *csv = "job_id,submit_s,duration_s,gpus,vc\n"
                    "A,0,100,1,main\n"
                    "B,0,100,1,main\n";
  run x;
  int nodes[4] = {-1, -1, -1, -1};

  ensure_test_policy();
  x = simulate(csv, "main=1x1,prof=1x1", "test-engine", "test.borrow=1", NULL);
  ASSERT_RUN(x, "A", 0, 100);
  ASSERT_RUN(x, "B", 0, 100);
  ASSERT_EQ(sm_sim_job_nodes(job(&x, "B"), nodes, 4), 1);
  ASSERT_EQ(nodes[0], 1);
  ASSERT_EQ(sm_sim_job_nodes(job(&x, "A"), nodes, 4), 1);
  ASSERT_EQ(nodes[0], 0);
  done(&x);
}

SM_TEST(sim_unknown_policy_and_semantic) {
  sm_sim_trace *t = trace_of(hol);
  sm_sim_cluster *c = NULL;
  sm_sim_result *r = NULL;
  sm_sim_config cfg;
  sm_err err = {0};

  ASSERT_OK(sm_sim_cluster_parse("1x4", &c, &err));
  sm_sim_config_init(&cfg);
  cfg.policy = "nope";
  ASSERT_EQ(sm_sim_run(t, c, &cfg, &r, &err), SM_EINVAL);
  sm_err_clear(&err);
  cfg.policy = "fifo";
  cfg.semantic = "on";
  ASSERT_EQ(sm_sim_run(t, c, &cfg, &r, &err), SM_EINVAL);
  ASSERT(strstr(err.msg, "semantic") != NULL);
  sm_err_clear(&err);
  cfg.semantic = "off";
  sm_sim_config_param(&cfg, "estimator=bogus");
  cfg.policy = "qssf";
  ASSERT_EQ(sm_sim_run(t, c, &cfg, &r, &err), SM_EINVAL);
  ASSERT(strstr(err.msg, "bogus") != NULL);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
}
