/* test_sim_lucid.c - Lucid and Lucid + SchedMate in the simulator, on
 * small traces whose schedules are worked out by hand in the comments:
 * the profiler (jobs that end inside it, progress lost after it), the
 * profiling partition carved from the cluster, packing by sharing score,
 * memory and priority, speeds from the co-location tables, the three
 * SchedMate changes (skipping the profiler on a history hit, the
 * matches' estimate, undoing harmful packing once and for good), the
 * Tracker's blind spot, the fast scheduling pass against the plain one,
 * and the table readers on malformed input.
 *
 * The co-location tables used here are tests/data/sim/lucid_*_test.csv,
 * made up for these tests (not Lucid's measurements). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_sim.h"
#include "sim/facts_int.h"
#include "sim_run.h"

#define PROFILES "tests/data/sim/lucid_profiles_test.csv"
#define PAIRS "tests/data/sim/lucid_pairs_test.csv"

static int has_note(const run *x, const char *needle) {
  for (size_t i = 0; i < sm_sim_result_note_count(x->r); i++)
    if (strstr(sm_sim_result_note(x->r, i), needle) != NULL)
      return 1;
  return 0;
}

/* ==== The profiler ==== */

/* Two one-GPU nodes; Lucid carves one as the profiler.  S (50 s) ends
 * inside the profiler (0-50); L (300 s) is profiled 50-150, loses that
 * progress, and runs 150-450 on the other node. */
SM_TEST(sim_lucid_profiler_short_jobs_end_inside) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "S,0,50,1\n"
                    "L,10,300,1\n";
  const char *p[] = {"lucid.tables=builtin", "profiler.nodes=1", NULL};
  run x = simulate(csv, "2x1", "lucid", p);

  ASSERT_NEAR(job(&x, "S")->end, 50, 1e-6);
  ASSERT_NEAR(job(&x, "L")->first_start, 50, 1e-6);
  ASSERT_NEAR(job(&x, "L")->end, 450, 1e-6);
  ASSERT_NEAR(job(&x, "L")->overhead, 100, 1e-6);
  ASSERT_EQ(figure(&x, "ended_in_profiler"), 1);
  ASSERT_EQ(figure(&x, "profiled"), 1);
  ASSERT_NEAR(figure(&x, "profiler_gpu_h"), 150.0 / 3600, 1e-9);
  ASSERT(has_note(&x, "profiling partition"));
  ASSERT(has_note(&x, "built-in model"));
  /* The partition is part of this run's cluster only. */
  ASSERT(strstr(sm_sim_cluster_describe(x.c), "profiler") == NULL);
  done(&x);
}

/* profiler.nodes=0: no partition, jobs run unprofiled (and alone). */
SM_TEST(sim_lucid_without_profiler) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "A,0,100,1\n"
                    "B,0,100,1\n";
  const char *p[] = {"lucid.tables=builtin", "profiler.nodes=0", NULL};
  run x = simulate(csv, "1x1", "lucid", p);

  ASSERT_NEAR(job(&x, "A")->end, 100, 1e-6);
  ASSERT_NEAR(job(&x, "B")->end, 200, 1e-6);
  ASSERT_EQ(figure(&x, "packed_pairs"), 0);
  ASSERT(has_note(&x, "no profiling partition"));
  done(&x);
}

SM_TEST(sim_lucid_carve_errors) {
  sm_sim_cluster *c = NULL, *d = NULL;
  sm_err err = {0};

  ASSERT_OK(sm_sim_cluster_parse("a=4x8,b=2x8", &c, &err));
  ASSERT_OK(sm_sim_cluster_carve(c, NULL, 2, "prof", &d, &err));
  ASSERT_EQ(sm_sim_cluster_vc_count(d), 3);
  ASSERT_STREQ(sm_sim_cluster_vc_name(d, 2), "prof");
  ASSERT_EQ(sm_sim_cluster_vc_gpus(d, 0), 16); /* a gave 2 of 4 nodes */
  ASSERT_EQ(sm_sim_cluster_gpus(d), 48);
  sm_sim_cluster_free(d);
  ASSERT_EQ(sm_sim_cluster_carve(c, "b", 2, "prof", &d, &err), SM_EINVAL);
  ASSERT(strstr(err.msg, "keep one") != NULL);
  sm_err_clear(&err);
  ASSERT_EQ(sm_sim_cluster_carve(c, "zz", 1, "prof", &d, &err), SM_EINVAL);
  sm_err_clear(&err);
  ASSERT_EQ(sm_sim_cluster_carve(c, "a", 1, "b", &d, &err), SM_EINVAL);
  sm_sim_cluster_free(c);
}

/* ==== Packing ==== */

/* Alpha (host) and Beta (guest) both score 0, so Lucid packs them; the
 * test tables say Alpha runs at 0.3 and Beta at 0.9 when they share.
 * One-GPU main node, one-GPU profiler, profiling 10 s:
 *   A profiled 0-10, runs alone from 10 (990 s of work after the lost 10);
 *   B waits for the profiler, profiled 10-20, packed onto A at 20.
 * Lucid: B ends at 20 + 100 / 0.9 = 131.11; A did 0.3 x 111.11 = 33.33
 * meanwhile and ends at 131.11 + 956.67 = 1087.78. */
static const char *pair_csv =
    "job_id,submit_s,duration_s,gpus,model,dataset,batchsize,amp\n"
    "A,0,1000,1,Alpha,SetA,32,0\n"
    "B,1,100,1,Beta,SetB,32,0\n";

SM_TEST(sim_lucid_packs_by_score_at_measured_speeds) {
  const char *p[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                     "profiler.nodes=1", "lucid.profile_s=10", NULL};
  run x = simulate(pair_csv, "2x1", "lucid", p);

  ASSERT_NEAR(job(&x, "B")->first_start, 10, 1e-6);
  ASSERT_NEAR(job(&x, "B")->end, 20 + 100 / 0.9, 1e-6);
  ASSERT_NEAR(job(&x, "A")->end, 20 + 100 / 0.9 + (990 - 0.3 * 100 / 0.9),
              1e-6);
  ASSERT_EQ(figure(&x, "packed_pairs"), 1);
  ASSERT_EQ(figure(&x, "packed_pairs_measured"), 1);
  ASSERT(has_note(&x, "Lucid's measured tables"));
  ASSERT(has_note(&x, "non-commercial"));
  done(&x);
}

/* Lucid + SchedMate: neither job has history (both profiled as above).
 * The Tracker checks A at 20 + max(60, 30 steps x 0.32 s / 0.3) = 80,
 * sees 0.3 < 0.5 of its speed alone, and evicts B: B did 0.9 x 60 = 54
 * s of work since its start, all after its last checkpoint, so lost.  A
 * gets full speed back: 990 - 0.3 x 60 = 972 left, ends at 1052.  B is
 * never packed again (it would fit on A at once): it waits for A and
 * runs 1052-1152. */
SM_TEST(sim_lucid_schedmate_evicts_harmful_pair_once) {
  const char *p[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                     "profiler.nodes=1",         "lucid.profile_s=10",
                     "lucid.untracked=0",        NULL};
  run x = simulate(pair_csv, "2x1", "lucid+schedmate", p);
  const sm_sim_job *b = job(&x, "B");

  ASSERT_EQ(figure(&x, "evictions"), 1);
  ASSERT_EQ(figure(&x, "tracker_checks"), 1);
  ASSERT_EQ(figure(&x, "packed_pairs"), 1);
  ASSERT_NEAR(job(&x, "A")->end, 1052, 1e-6);
  ASSERT_NEAR(b->end, 1152, 1e-6);
  ASSERT_NEAR(b->overhead, 10 + 54, 1e-6); /* profiler + lost progress */
  ASSERT_EQ(b->starts, 3);                 /* profiler, pack, alone */
  ASSERT_STREQ(sm_sim_result_summary(x.r)->semantic, "on");
  done(&x);
}

/* The same pair with a host whose log the Tracker cannot follow: no
 * check, the pair stays as Lucid made it. */
SM_TEST(sim_lucid_schedmate_untracked_pair_left_alone) {
  const char *p[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                     "profiler.nodes=1",         "lucid.profile_s=10",
                     "lucid.untracked=1",        NULL};
  run x = simulate(pair_csv, "2x1", "lucid+schedmate", p);

  ASSERT_EQ(figure(&x, "evictions"), 0);
  ASSERT_EQ(figure(&x, "tracker_checks"), 0);
  ASSERT_EQ(figure(&x, "checks_skipped_untracked"), 1);
  ASSERT_NEAR(job(&x, "B")->end, 20 + 100 / 0.9, 1e-6);
  ASSERT_NEAR(job(&x, "A")->end, 20 + 100 / 0.9 + (990 - 0.3 * 100 / 0.9),
              1e-6);
  done(&x);
}

/* A pair above the threshold (Alpha with Alpha: 0.8 each) is checked and
 * kept. */
SM_TEST(sim_lucid_schedmate_keeps_good_pair) {
  const char *csv =
      "job_id,submit_s,duration_s,gpus,model,dataset,batchsize,amp\n"
      "A,0,1000,1,Alpha,SetA,32,0\n"
      "B,1,100,1,Alpha,SetA,32,0\n";
  const char *p[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                     "profiler.nodes=1",         "lucid.profile_s=10",
                     "lucid.untracked=0",        NULL};
  run x = simulate(csv, "2x1", "lucid+schedmate", p);

  ASSERT_EQ(figure(&x, "tracker_checks"), 1);
  ASSERT_EQ(figure(&x, "evictions"), 0);
  ASSERT_NEAR(job(&x, "B")->end, 20 + 100 / 0.8, 1e-6);
  done(&x);
}

/* Lucid's pair picker: Gamma and Delta score 2 (no pair with anything
 * but a 0), Gamma's 20,000 MiB do not fit next to Alpha's 4,000 in
 * 24,576 MiB... they do (24,000); with lucid.mem_mib=23000 they do not.
 * And a job whose priority is more than twice the host's waits. */
SM_TEST(sim_lucid_pair_rules) {
  const char *csv =
      "job_id,submit_s,duration_s,gpus,model,dataset,batchsize,amp\n"
      "A,0,1000,1,Alpha,SetA,32,0\n"
      "G,1,100,1,Gamma,SetC,64,0\n";
  const char *p1[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                      "profiler.nodes=1", "lucid.profile_s=10", NULL};
  const char *p2[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                      "profiler.nodes=1",         "lucid.profile_s=10",
                      "lucid.mem_mib=23000",      NULL};
  /* D scores 2 with G's 2: never together. */
  const char *csv2 =
      "job_id,submit_s,duration_s,gpus,model,dataset,batchsize,amp\n"
      "D,0,1000,1,Delta,SetD,32,0\n"
      "G,1,100,1,Gamma,SetC,64,0\n";
  /* Estimates from the trace: H's 10 s, W's 1000 s.  W's priority 1000
   * is more than twice H's: W may not join H, it waits for H's end. */
  const char *csv3 = "job_id,submit_s,duration_s,gpus,estimate_s,model,"
                     "dataset,batchsize,amp\n"
                     "H,0,1000,1,10,Alpha,SetA,32,0\n"
                     "W,1,100,1,1000,Alpha,SetA,32,0\n";
  const char *p3[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                      "profiler.nodes=1",         "lucid.profile_s=10",
                      "lucid.estimator=trace",    NULL};
  run x = simulate(csv, "2x1", "lucid", p1);
  run y = simulate(csv, "2x1", "lucid", p2);
  run z = simulate(csv2, "2x1", "lucid", p1);
  run w = simulate(csv3, "2x1", "lucid", p3);

  ASSERT_EQ(figure(&x, "packed_pairs"), 1);
  /* Unmeasured pair: the utilisation model, 30 + 90 > 100 % -> 0.955 x
   * 100 / 120 each. */
  ASSERT_EQ(figure(&x, "packed_pairs_measured"), 0);
  ASSERT_NEAR(job(&x, "G")->end, 20 + 100 / (0.955 * 100 / 120), 1e-6);
  ASSERT_EQ(figure(&y, "packed_pairs"), 0);
  ASSERT_EQ(figure(&z, "packed_pairs"), 0);
  ASSERT_EQ(figure(&w, "packed_pairs"), 0);
  ASSERT_NEAR(job(&w, "H")->end, 1010, 1e-6);
  ASSERT_NEAR(job(&w, "W")->end, 1110, 1e-6);
  done(&x);
  done(&y);
  done(&z);
  done(&w);
}

/* ==== Skipping the profiler ==== */

/* J1 and J2 are the same job of the same user.  Lucid profiles both: J1
 * 0-100 then 100-400, J2 (at 1000) 1000-1100 then 1100-1400.  With
 * SchedMate, J2 finds J1 in the history (ended at 400, completed): it
 * skips the profiler and runs 1000-1300, its JCT 100 s shorter. */
SM_TEST(sim_lucid_schedmate_hit_skips_profiler) {
  const char *csv = "job_id,submit_s,duration_s,gpus,user,name\n"
                    "J1,0,300,1,ana,train_bert\n"
                    "J2,1000,300,1,ana,train_bert\n";
  const char *p[] = {"lucid.tables=builtin", "profiler.nodes=1", NULL};
  run x = simulate(csv, "2x1", "lucid", p);
  run y = simulate(csv, "2x1", "lucid+schedmate", p);
  const sm_sim_job *a = job(&x, "J2"), *b = job(&y, "J2");

  ASSERT_NEAR(a->end - a->submit, 400, 1e-6);
  ASSERT_NEAR(b->end - b->submit, 300, 1e-6);
  ASSERT_NEAR(job(&y, "J1")->end, 400, 1e-6);
  ASSERT_EQ(figure(&y, "facts_hits"), 1);
  ASSERT_EQ(figure(&y, "profiles_skipped"), 1);
  ASSERT_NEAR(figure(&y, "profiling_gpu_h_saved"), 100.0 / 3600, 1e-9);
  ASSERT_EQ(figure(&y, "history_future_reads"), 0);
  ASSERT(sm_sim_result_summary(y.r)->avg_jct_s <
         sm_sim_result_summary(x.r)->avg_jct_s);
  done(&x);
  done(&y);
}

/* ==== The fast pass equals the plain one ==== */

SM_TEST(sim_lucid_fast_pass_equals_plain_pass) {
  const char *models[][4] = {{"Alpha", "SetA", "32", "0"},
                             {"Beta", "SetB", "32", "0"},
                             {"Gamma", "SetC", "64", "0"},
                             {"Delta", "SetD", "32", "0"},
                             {"Eps", "SetE", "16", "1"}};
  static const int gpus[] = {1, 1, 1, 2, 2, 4, 8, 12, 16};
  const char *pols[] = {"lucid", "lucid+schedmate"};
  sm_buf b;
  sm_rng rng;

  for (int trial = 0; trial < 3; trial++) {
    sm_buf_init(&b, 0);
    sm_rng_seed(&rng, 100 + trial);
    sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,vc,user,name,model,"
                    "dataset,batchsize,amp\n");
    for (int i = 0; i < 600; i++) {
      int m = (int)(sm_rng_uniform(&rng) * 5);
      sm_buf_addf(&b, "j%d,%d,%d,%d,%s,u%d,n%d,%s,%s,%s,%s\n", i, i * 20,
                  5 + (int)(exp(sm_rng_uniform(&rng) * 8)),
                  gpus[(int)(sm_rng_uniform(&rng) * 9)], i % 3 ? "a" : "b",
                  (int)(sm_rng_uniform(&rng) * 4),
                  (int)(sm_rng_uniform(&rng) * 3), models[m][0], models[m][1],
                  models[m][2], models[m][3]);
    }
    for (int k = 0; k < 2; k++) {
      const char *pf[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                          "lucid.profile_s=30",       "lucid.untracked=0.3",
                          "lucid.naive_pass=0",       NULL};
      const char *pp[] = {"lucid.profiles=" PROFILES, "lucid.colocate=" PAIRS,
                          "lucid.profile_s=30",       "lucid.untracked=0.3",
                          "lucid.naive_pass=1",       NULL};
      run x = simulate(sm_buf_str(&b), "a=3x8,b=2x8", pols[k], pf);
      run y = simulate(sm_buf_str(&b), "a=3x8,b=2x8", pols[k], pp);
      ASSERT(figure(&x, "packed_pairs") > 0);
      for (size_t i = 0; i < sm_sim_result_job_count(x.r); i++) {
        const sm_sim_job *p = sm_sim_result_job(x.r, i);
        const sm_sim_job *q = sm_sim_result_job(y.r, i);
        if (p->first_start != q->first_start || p->end != q->end)
          SM_FAIL_AT("%s trial %d job %s: fast %.3f-%.3f, plain %.3f-%.3f",
                     pols[k], trial, p->id, p->first_start, p->end,
                     q->first_start, q->end);
      }
      ASSERT_EQ(figure(&x, "packed_pairs"), figure(&y, "packed_pairs"));
      done(&x);
      done(&y);
    }
    sm_buf_release(&b);
  }
}

/* ==== Tables ==== */

static char *tmpfile_with(const char *text, size_t n) {
  static char path[64];
  int fd;

  snprintf(path, sizeof(path), "/tmp/sm-lucid-test-XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, text, n), (long long)n);
  close(fd);
  return path;
}

static void expect_bad(const char *prof, size_t np, const char *pairs,
                       const char *needle) {
  char p1[64], p2[64];
  sm__coloc *c = NULL;
  sm_err err = {0};
  int rc;

  snprintf(p1, sizeof(p1), "%s", tmpfile_with(prof, np));
  snprintf(p2, sizeof(p2), "%s",
           tmpfile_with(pairs, pairs ? strlen(pairs) : 0));
  rc = sm__coloc_load(p1, p2, &c, &err);
  unlink(p1);
  unlink(p2);
  if (rc == 0)
    SM_FAIL_AT("accepted a bad table (expected '%s')", needle);
  if (strstr(err.msg, needle) == NULL)
    SM_FAIL_AT("message '%s' lacks '%s'", err.msg, needle);
}

SM_TEST(sim_lucid_tables_malformed) {
  const char *hdr = "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,"
                    "gmem,label\n";
  const char *good_pairs = "model1,dataset1,batchsize1,amp1,speed1,model2,"
                           "dataset2,batchsize2,amp2,speed2\n";
  char big[80000];
  sm_buf b;

  expect_bad("", 0, good_pairs, "no profiles");
  expect_bad("model,dataset\nA,B\n", 18, good_pairs, "missing column");
  sm_buf_init(&b, 0);
  sm_buf_addf(&b, "%sA,B,32,0,fast,50,10,100,0\n", hdr);
  expect_bad(sm_buf_str(&b), b.len, good_pairs, "speed");
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%sA,B,32,0,100,150,10,100,0\n", hdr);
  expect_bad(sm_buf_str(&b), b.len, good_pairs, "gpu_util");
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%sA,B,32,0,100,50,10,100,7\n", hdr);
  expect_bad(sm_buf_str(&b), b.len, good_pairs, "label");
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%sA,B,32,0,100\n", hdr); /* truncated row */
  expect_bad(sm_buf_str(&b), b.len, good_pairs, "missing");
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%sA,B,32,0,1#0,50,10,100,0\n", hdr);
  b.data[b.len - 15] = '\0'; /* a NUL byte in a field */
  expect_bad(b.data, b.len, good_pairs, "");
  memset(big, 'x', sizeof(big));
  big[sizeof(big) - 1] = '\n';
  expect_bad(big, sizeof(big), good_pairs, "");
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%s\xff\xfe,B,32,0,100,50,10,100,0\n", hdr);
  {
    /* Invalid UTF-8 in a name is just a name nobody matches. */
    char p1[64], p2[64];
    sm__coloc *c = NULL;
    sm_err err = {0};
    snprintf(p1, sizeof(p1), "%s", tmpfile_with(sm_buf_str(&b), b.len));
    snprintf(p2, sizeof(p2), "%s",
             tmpfile_with(good_pairs, strlen(good_pairs)));
    ASSERT_OK(sm__coloc_load(p1, p2, &c, &err));
    ASSERT_EQ(sm__coloc_count(c), 1);
    sm__coloc_free(c);
    unlink(p1);
    unlink(p2);
  }
  sm_buf_reset(&b);
  sm_buf_addf(&b, "%sA,B,32,0,100,50,10,100,0\n", hdr);
  expect_bad(sm_buf_str(&b), b.len, "", "empty");
  expect_bad(sm_buf_str(&b), b.len, "model1,speed1\n", "missing column");
  expect_bad(sm_buf_str(&b), b.len,
             "model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,"
             "batchsize2,amp2,speed2\nA,B,32,0,-1,A,B,32,0,1\n",
             "speed1");
  sm_buf_release(&b);
  {
    sm__coloc *c = NULL;
    sm_err err = {0};
    ASSERT_EQ(sm__coloc_load(PROFILES, NULL, &c, &err), SM_EINVAL);
    ASSERT(strstr(err.msg, "pairs") != NULL);
    sm_err_clear(&err);
    ASSERT(sm__coloc_load("/nonexistent/x.csv", PAIRS, &c, &err) < 0);
    ASSERT(strstr(err.msg, "/nonexistent/x.csv") != NULL);
  }
}

SM_TEST(sim_lucid_tables_read_and_model) {
  sm__coloc *c = NULL;
  sm_err err = {0};
  double a, b;
  int m;
  int alpha, beta, eps;

  ASSERT_OK(sm__coloc_load(PROFILES, PAIRS, &c, &err));
  ASSERT_EQ(sm__coloc_count(c), 5);
  alpha = sm__coloc_find(c, "Alpha", "SetA", 32, 0);
  beta = sm__coloc_find(c, "Beta", "SetB", 32, 0);
  eps = sm__coloc_find(c, "Eps", "SetE", 16, 1);
  ASSERT(alpha >= 0 && beta >= 0 && eps >= 0);
  sm__coloc_pair(c, alpha, beta, &a, &b, &m);
  ASSERT(m == 1);
  ASSERT_NEAR(a, 0.3, 1e-6); /* the first row of a repeated pair stands */
  ASSERT_NEAR(b, 0.9, 1e-6);
  sm__coloc_pair(c, beta, alpha, &a, &b, &m);
  ASSERT_NEAR(a, 0.9, 1e-6);
  sm__coloc_pair(c, alpha, eps, &a, &b, &m);
  ASSERT_NEAR(a, 0.6, 1e-6);
  ASSERT_NEAR(b, 0.7, 1e-6);
  /* Nearest-row sharing score of measured figures. */
  ASSERT_EQ(sm__coloc_label(c, 31, 11, 4100), 0);
  ASSERT_EQ(sm__coloc_label(c, 94, 69, 6100), 2);
  ASSERT_EQ(sm__coloc_label(c, NAN, 0, 0), 2);
  sm__coloc_free(c);
  /* The built-in model: unmeasured pairs by utilisation. */
  ASSERT_OK(sm__coloc_load(NULL, NULL, &c, &err));
  ASSERT(sm__coloc_builtin(c));
  ASSERT_EQ(sm__coloc_count(c), 9);
  sm__coloc_pair(c, 0, 1, &a, &b, &m); /* 25 + 45 <= 100 */
  ASSERT(m == 0);
  ASSERT_NEAR(a, 0.955, 1e-12);
  sm__coloc_pair(c, 7, 7, &a, &b, &m); /* 100 + 100 */
  ASSERT_NEAR(a, 0.955 / 2, 1e-12);
  ASSERT(strstr(sm__coloc_source(c), "built-in") != NULL);
  sm__coloc_free(c);
}

/* With Lucid's real tables (when staged in ../shared), a full run on a
 * sample of the Philly trace keeps the invariants and packs with
 * measured speeds. */
SM_TEST(sim_lucid_real_tables_smoke) {
  const char *csv;
  char *text = NULL;
  size_t len;
  sm_err err = {0};
  const char *p[] = {"lucid.tables=../shared/traces/lucid", NULL};
  run x;

  if (access("../shared/traces/lucid/colocate_info.csv", R_OK) != 0)
    SM_SKIP("../shared/traces/lucid not present");
  ASSERT_OK(sm_file_read_all("tests/data/sim/sia_philly_sample.csv", 1 << 20,
                             &text, &len, &err));
  csv = text;
  x = simulate(csv, "4x8", "lucid", p);
  ASSERT(has_note(&x, "Lucid's measured tables"));
  ASSERT(figure(&x, "profiled") > 0);
  done(&x);
  sm_free(text);
}
