/* test_sim_semantic.c - where a simulation's semantic facts come from and
 * what SchedMate-SJF does with them: the history mode against the real
 * history engine (sm_advise over a "mem:" store, answer for answer), the
 * history never read ahead of time (by construction: changing jobs of
 * the future changes no earlier answer), the calibrated mode's hit rate
 * and accuracy, the workload catalogue through the real extractor, the
 * failure model and the Failure Handler (an infrastructure failure
 * restarted from its checkpoint on another node, a user failure not
 * restarted), and the speed-up table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_sim.h"
#include "sim/schedmate_int.h"
#include "sim_run.h"

/* A trace of n jobs from a few users, each with a few job names whose
 * durations cluster (so that the history has something to find), with
 * some canceled and failed jobs.  Durations of jobs submitted after
 * change_after are multiplied by factor. */
static void gen_trace(sm_buf *b, int n, uint64_t seed, double change_after,
                      double factor) {
  sm_rng rng;
  static const char *const states[] = {"completed", "completed", "completed",
                                       "completed", "canceled",  "failed"};

  sm_rng_seed(&rng, seed);
  sm_buf_adds(b, "job_id,submit_s,duration_s,gpus,user,name,state\n");
  for (int i = 0; i < n; i++) {
    int u = (int)(sm_rng_uniform(&rng) * 5),
        k = (int)(sm_rng_uniform(&rng) * 4);
    double base = 60 * pow(3, (u + k) % 6), t = i * 37.0;
    double d = base * (0.8 + 0.4 * sm_rng_uniform(&rng));
    int g = 1 << (int)(sm_rng_uniform(&rng) * 3);
    if (t > change_after)
      d *= factor;
    sm_buf_addf(b, "j%d,%.0f,%.0f,%d,user%d,job_%d_run%d,%s\n", i, t, d, g, u,
                k, i, states[(int)(sm_rng_uniform(&rng) * 6)]);
  }
}

/* ==== History mode = the history engine ==== */

/* A test policy: FIFO that asks the facts (history mode) and, beside
 * them, the real engine: sm_advise over a "mem:" store that gets the same
 * write-backs.  Every answer must agree. */
typedef struct eq_state {
  sm__facts *f;                 /* under test */
  sm_store *store;              /* the real engine */
  sm_sim_job *q[4096];          /* FIFO */
  int n;                        /* queued */
  size_t asked, hits, compared; /* counts */
} eq_state;

static void meta_of(const sm_sim_job *j, sm_meta *m, sm_fp_extra *x) {
  sm_meta_init(m);
  sm_meta_set_num(m, SM_META_GPUS, j->gpus, "trace");
  x->user = j->user;
  x->name = j->name;
  x->vc = j->vc_name;
}

static int eq_init(sm_sim *s, void **st, sm_err *err) {
  eq_state *e = sm_calloc(1, sizeof(*e));
  int rc;

  *st = e;
  if (e == NULL)
    return SM_ENOMEM;
  rc = sm__facts_open(s, &e->f, err);
  if (rc != 0)
    return rc;
  e->store = sm_store_open("mem:", SM_STORE_CREATE, 0, err);
  return e->store ? 0 : SM_ENOMEM;
}

static void eq_release(sm_sim *s, void *st) {
  eq_state *e = st;
  (void)s;
  sm__facts_free(e->f);
  sm_store_close(e->store);
  sm_free(e);
}

static void eq_arrive(sm_sim *s, void *st, sm_sim_job *j) {
  eq_state *e = st;
  sm__fact f;
  sm_advice a;
  sm_advise_opts o;
  sm_meta m;
  sm_fp_extra x;
  sm_err err = {0};

  (void)s;
  e->q[e->n++] = j;
  if (j->restarts > 0)
    return;
  sm__facts_ask(e->f, j, &f);
  meta_of(j, &m, &x);
  memset(&o, 0, sizeof(o));
  o.top_k = 3;
  o.threshold = 0.95f;
  o.now = 1;
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(e->store, &m, &x, &o, &a, &err));
  e->asked++;
  if (f.hit != a.est.valid)
    SM_FAIL_AT("job %s: facts hit %d, advise valid %d (%s)", j->id, f.hit,
               a.est.valid, sm_fallback_name(a.fallback));
  if (f.hit) {
    e->hits++;
    ASSERT_NEAR(f.duration, a.est.duration_s, 1e-9 * a.est.duration_s);
    ASSERT_EQ(f.n, a.est.n);
    if (!isnan(a.est.sm_util))
      ASSERT_NEAR(f.util, a.est.sm_util, 1e-9);
  } else {
    ASSERT_EQ(f.fallback, a.fallback);
  }
  e->compared++;
  sm_advice_release(&a);
  sm_meta_release(&m);
}

static void eq_finish(sm_sim *s, void *st, sm_sim_job *j) {
  eq_state *e = st;
  sm_record r;
  sm_err err = {0};
  char id[32];
  int state = j->final_state == SM_SIM_END_COMPLETED  ? SM_END_COMPLETED
              : j->final_state == SM_SIM_END_CANCELED ? SM_END_CANCELED
                                                      : SM_END_FAILED;
  sm_fp_extra x;

  (void)s;
  sm__facts_done(e->f, j, j->duration, state);
  sm_record_init(&r);
  snprintf(id, sizeof(id), "%u", j->idx);
  r.id = sm_strdup(id);
  meta_of(j, &r.meta, &x);
  r.user = sm_strdup(j->user);
  r.name = sm_strdup(j->name);
  r.vc = sm_strdup(j->vc_name);
  r.duration_s = j->duration;
  r.sm_util =
      sm__coloc_prof(sm__facts_coloc(e->f), sm__facts_env(e->f, j)->prof)->util;
  r.end_state = (sm_end_state)state;
  r.submit_time = j->submit;
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_store_put(e->store, &r, &err));
  sm_record_release(&r);
}

static void eq_schedule(sm_sim *s, void *st, int vc) {
  eq_state *e = st;
  int k = 0;
  (void)vc;
  for (int i = 0; i < e->n; i++)
    if (k > 0 || !sm_sim_start(s, e->q[i]))
      e->q[k++] = e->q[i];
  e->n = k;
}

static void eq_finalize(sm_sim *s, void *st) {
  eq_state *e = st;
  sm_sim_stat_add(s, "compared", (double)e->compared);
  sm_sim_stat_add(s, "hits", (double)e->hits);
  sm__facts_report(e->f, s);
}

static const sm_sim_policy eq_policy = {"test-facts-eq",
                                        "facts vs sm_advise",
                                        0,
                                        eq_init,
                                        eq_release,
                                        eq_arrive,
                                        eq_finish,
                                        NULL,
                                        eq_schedule,
                                        eq_finalize};

SM_TEST(sim_facts_history_equals_advise) {
  sm_buf b;
  const char *p[] = {"lucid.tables=builtin", NULL};
  run x;

  if (sm_sim_policy_find("test-facts-eq") == NULL)
    ASSERT_OK(sm_sim_policy_register(&eq_policy));
  sm_buf_init(&b, 0);
  gen_trace(&b, 1500, 7, INFINITY, 1);
  x = simulate(sm_buf_str(&b), "8x8", "test-facts-eq", p);
  ASSERT_EQ(figure(&x, "compared"), 1500);
  ASSERT(figure(&x, "hits") > 600);
  ASSERT(figure(&x, "fallback_inconsistent") + figure(&x, "fallback_no_match") >
         0);
  ASSERT_EQ(figure(&x, "history_future_reads"), 0);
  done(&x);
  sm_buf_release(&b);
}

/* ==== Never the future ==== */

/* Two traces, the same up to time T and different after it (every later
 * job lasts three times as long): every job submitted up to T gets
 * exactly the same answer (its SJF key) in both runs, since no outcome
 * that depends on the future can have been written back yet. */
SM_TEST(sim_facts_history_never_reads_the_future) {
  double T = 400 * 37.0;
  sm_buf a, b;
  const char *p[] = {"lucid.tables=builtin", NULL};
  run x, y;
  size_t same = 0, differ = 0;

  sm_buf_init(&a, 0);
  sm_buf_init(&b, 0);
  gen_trace(&a, 900, 11, INFINITY, 1);
  gen_trace(&b, 900, 11, T, 3);
  x = simulate(sm_buf_str(&a), "3x8", "sjf-schedmate", p);
  y = simulate(sm_buf_str(&b), "3x8", "sjf-schedmate", p);
  ASSERT(figure(&x, "facts_hits") > 100);
  ASSERT_EQ(figure(&x, "history_future_reads"), 0);
  ASSERT_EQ(figure(&y, "history_future_reads"), 0);
  for (size_t i = 0; i < sm_sim_result_job_count(x.r); i++) {
    const sm_sim_job *p1 = sm_sim_result_job(x.r, i);
    const sm_sim_job *p2 = sm_sim_result_job(y.r, i);
    if (p1->submit <= T) {
      if (p1->pkey != p2->pkey)
        SM_FAIL_AT("job %s (submitted %.0f <= %.0f): key %.6f vs %.6f", p1->id,
                   p1->submit, T, p1->pkey, p2->pkey);
      same++;
    } else {
      differ += p1->pkey != p2->pkey;
    }
  }
  ASSERT(same > 300);
  ASSERT(differ > 0); /* the later answers did see the changed outcomes */
  done(&x);
  done(&y);
  sm_buf_release(&a);
  sm_buf_release(&b);
}

/* ==== Calibrated mode ==== */

SM_TEST(sim_facts_calibrated_rates) {
  sm_buf b;
  const char *p[] = {"lucid.tables=builtin", "facts=calibrated", NULL};
  const char *q[] = {"lucid.tables=builtin", "facts=calibrated",
                     "calibrated.hit=0.5", "calibrated.within=0.5", NULL};
  run x, y;

  sm_buf_init(&b, 0);
  gen_trace(&b, 20000, 3, INFINITY, 1);
  x = simulate(sm_buf_str(&b), "64x8", "sjf-schedmate", p);
  y = simulate(sm_buf_str(&b), "64x8", "sjf-schedmate", q);
  ASSERT_NEAR(figure(&x, "facts_hit_rate"), 0.73, 0.015);
  ASSERT_NEAR(figure(&x, "facts_within_2x"), 0.857, 0.015);
  ASSERT_NEAR(figure(&y, "facts_hit_rate"), 0.5, 0.015);
  ASSERT_NEAR(figure(&y, "facts_within_2x"), 0.5, 0.02);
  done(&x);
  done(&y);
  sm_buf_release(&b);
}

SM_TEST(sim_facts_bad_parameters) {
  const char *csv = "job_id,submit_s,duration_s,gpus\nA,0,10,1\n";
  const char *bad[][3] = {{"facts=magic", NULL, NULL},
                          {"facts=oracle", NULL, NULL}, /* no catalogue */
                          {"facts.top_k=0", NULL, NULL},
                          {"facts=calibrated", "calibrated.within=1", NULL},
                          {"workloads=/nonexistent/dir", NULL, NULL},
                          {"lucid.tables=/nonexistent/dir", NULL, NULL},
                          {"sjf.key=gpus", NULL, NULL},
                          {"fail.model=bogus", NULL, NULL},
                          {"fail.infra_share=2", NULL, NULL}};
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    sm_sim_trace *t = NULL;
    sm_sim_cluster *c = NULL;
    sm_sim_result *r = NULL;
    sm_sim_config cfg;
    sm_err err = {0};
    ASSERT_OK(sm_sim_trace_load_mem(csv, strlen(csv), "t.csv", NULL, &t, &err));
    ASSERT_OK(sm_sim_cluster_parse("1x1", &c, &err));
    sm_sim_config_init(&cfg);
    cfg.policy = "sjf-schedmate";
    for (int k = 0; k < 3 && bad[i][k]; k++)
      ASSERT_OK(sm_sim_config_param(&cfg, bad[i][k]));
    if (sm_sim_run(t, c, &cfg, &r, &err) == 0)
      SM_FAIL_AT("accepted %s", bad[i][0]);
    ASSERT(err.msg[0] != '\0');
    sm_sim_cluster_free(c);
    sm_sim_trace_free(t);
  }
}

/* ==== Workload catalogue ==== */

SM_TEST(sim_workloads_catalogue_through_the_extractor) {
  sm__wl *w = NULL;
  sm_err err = {0};
  int collapsed = 0;

  ASSERT_OK(sm__wl_load("data/workloads", &w, &err));
  ASSERT_EQ(w->n, 15);
  ASSERT_EQ(w->nvariants, 45);
  for (int i = 0; i < w->n; i++) {
    const sm__template *t = &w->t[i];
    float a[SM_FP_DIMS], b[SM_FP_DIMS];
    ASSERT(t->v[0].meta.f[SM_META_MODEL_NAME].known);
    ASSERT(t->v[0].meta.f[SM_META_TASK].known);
    /* Variants differ in their iterations, so their fingerprints do not
     * match; the extractor misses diffusers' --max_train_steps, so the
     * Stable Diffusion variants look the same (a known gap). */
    sm_fingerprint(&t->v[0].meta, NULL, a);
    sm_fingerprint(&t->v[1].meta, NULL, b);
    if (sm_fp_cosine(a, b) >= 0.95f) {
      collapsed++;
      ASSERT_STREQ(t->name, "sd-finetune");
    }
    for (int k = 0; k < w->n; k++)
      if (k != i) {
        sm_fingerprint(&w->t[k].v[0].meta, NULL, b);
        ASSERT(sm_fp_cosine(a, b) < 0.95f);
      }
  }
  ASSERT_EQ(collapsed, 1);
  sm__wl_free(w);
}

static int wl_error(const char *conf, const char *needle) {
  char dir[64], sub[128], path[160];
  FILE *f;
  sm__wl *w = NULL;
  sm_err err = {0};
  int rc;

  snprintf(dir, sizeof(dir), "/tmp/sm-wl-test-XXXXXX");
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(sub, sizeof(sub), "%s/t1", dir);
  ASSERT_OK(mkdir(sub, 0700) != 0);
  snprintf(path, sizeof(path), "%s/repo", sub);
  ASSERT_OK(mkdir(path, 0700) != 0);
  snprintf(path, sizeof(path), "%s/workload.conf", sub);
  f = fopen(path, "w");
  ASSERT(f != NULL);
  fwrite(conf, 1, strlen(conf) + (conf[0] == 'B'), f);
  fclose(f);
  rc = sm__wl_load(dir, &w, &err);
  sm__wl_free(w);
  unlink(path);
  snprintf(path, sizeof(path), "%s/repo", sub);
  rmdir(path);
  rmdir(sub);
  rmdir(dir);
  if (rc == 0)
    SM_FAIL_AT("accepted: %s", conf);
  if (strstr(err.msg, needle) == NULL)
    SM_FAIL_AT("message '%s' lacks '%s'", err.msg, needle);
  return rc;
}

SM_TEST(sim_workloads_bad_catalogues) {
  sm__wl *w = NULL;
  sm_err err = {0};

  wl_error("class = 1\ncommand = python x.py --epochs {ITERS}\n",
           "needs class, command and iterations");
  wl_error("class = 9\n", "class");
  wl_error("nonsense line\n", "expected 'key = value'");
  wl_error("colour = blue\n", "unknown");
  wl_error("class = 1\ncommand = python x.py --epochs 3\niterations = 1\n",
           "{ITERS}");
  wl_error("class = 1\ncommand = python x.py --epochs {ITERS}\n"
           "iterations = 1 two\n",
           "not a positive count");
  wl_error("B\n", "binary");
  ASSERT(sm__wl_load("/nonexistent/catalogue", &w, &err) < 0);
  ASSERT(strstr(err.msg, "/nonexistent/catalogue") != NULL);
  sm_err_clear(&err);
  ASSERT(sm__wl_load("tests/data/sim", &w, &err) < 0);
  ASSERT(strstr(err.msg, "no templates") != NULL);
}

/* The world's mapping reads only the identity and the seed: the same
 * user and job name get the same template and variant whatever the job
 * did, and different identities spread over the catalogue.  The
 * oracle's mapping follows the GPU time: the decade picks the template's
 * class, the position inside it the variant. */
SM_TEST(sim_workloads_mapping) {
  sm__wl *w = NULL;
  sm_err err = {0};
  sm_sim_job j;
  int t1, v1, t2, v2, seen[256] = {0}, distinct = 0;

  ASSERT_OK(sm__wl_load("data/workloads", &w, &err));
  sm__wl_map(w, "u\x1fname", 1, &t1, &v1);
  sm__wl_map(w, "u\x1fname", 1, &t2, &v2);
  ASSERT_EQ(t1, t2);
  ASSERT_EQ(v1, v2);
  for (int i = 0; i < 300; i++) {
    char id[16];
    snprintf(id, sizeof(id), "#%d", i);
    sm__wl_map(w, id, 1, &t2, &v2);
    ASSERT(t2 >= 0 && t2 < w->n && v2 >= 0 && v2 < w->t[t2].nv);
    distinct += !seen[t2 * 8 + v2];
    seen[t2 * 8 + v2] = 1;
  }
  ASSERT(distinct > 40); /* nearly all 45 variants */
  memset(&j, 0, sizeof(j));
  j.gpus = 1;
  j.duration = 0.2 * 3600; /* 0.2 GPU-hours: decade 1, low third */
  sm__wl_map_oracle(w, &j, "u\x1fname", 1, &t1, &v1);
  ASSERT_EQ(w->t[t1].gclass, 1);
  ASSERT_EQ(v1, 0);
  j.duration = 0.9 * 3600; /* the same decade, top third */
  sm__wl_map_oracle(w, &j, "u\x1fname", 1, &t2, &v2);
  ASSERT_EQ(t2, t1);
  ASSERT_EQ(v2, 2);
  j.gpus = 8;
  j.duration = 100 * 3600; /* 800 GPU-hours: decade 4 */
  sm__wl_map_oracle(w, &j, "x", 1, &t2, &v2);
  ASSERT_EQ(w->t[t2].gclass, 4);
  ASSERT_EQ(sm__gpu_time_decade(&j), 4);
  sm__wl_free(w);
}

/* ==== Failures ==== */

/* F fails after 1000 s on one of two one-GPU nodes.  With the Failure
 * Handler and an infrastructure cause: diagnosed in 60 s, its node
 * isolated, restarted at 1060 from its last checkpoint (every 300 s: 100
 * s redone) with as much work again still to do (fail.rest 1): 1100 s on
 * the other node, to 2160, completed. */
SM_TEST(sim_fh_infra_failure_restarts_from_checkpoint) {
  const char *csv = "job_id,submit_s,duration_s,gpus,state\n"
                    "F,0,1000,1,failed\n"
                    "G,1500,10,1,completed\n";
  const char *p[] = {"lucid.tables=builtin", "fail.infra_share=1",
                     "ckpt.interval_s=300", "fh.isolate_s=5000", NULL};
  run x = simulate(csv, "2x1", "sjf-schedmate+fh", p);
  const sm_sim_job *f = job(&x, "F"), *g = job(&x, "G");
  int n1[2], n2[2];

  ASSERT_NEAR(f->end, 2160, 1e-6);
  ASSERT_EQ(f->final_state, SM_SIM_END_COMPLETED);
  ASSERT_EQ(f->restarts, 1);
  ASSERT_EQ(figure(&x, "infra_restarts"), 1);
  ASSERT_EQ(figure(&x, "nodes_isolated"), 1);
  ASSERT_EQ(figure(&x, "infra_failures"), 1);
  ASSERT_EQ(figure(&x, "infra_resubmitted_by_users"), 0);
  /* G arrives while F holds the healthy node and the other is isolated:
   * it waits for F. */
  ASSERT_NEAR(g->first_start, 2160, 1e-6);
  ASSERT_EQ(sm_sim_job_nodes(f, n1, 2), 1);
  ASSERT_EQ(sm_sim_job_nodes(g, n2, 2), 1);
  ASSERT_EQ(n1[0], n2[0]);
  done(&x);
}

/* The same job with a user (or framework) cause: it ends failed at 1000
 * and is not restarted, with or without the Handler. */
SM_TEST(sim_fh_user_failure_not_restarted) {
  const char *csv = "job_id,submit_s,duration_s,gpus,state\n"
                    "F,0,1000,1,failed\n";
  const char *p[] = {"lucid.tables=builtin", "fail.infra_share=0",
                     "fail.model=resubmit", NULL};
  run x = simulate(csv, "2x1", "sjf-schedmate+fh", p);

  ASSERT_NEAR(job(&x, "F")->end, 1000, 1e-6);
  ASSERT_EQ(job(&x, "F")->final_state, SM_SIM_END_FAILED);
  ASSERT_EQ(job(&x, "F")->restarts, 0);
  ASSERT_EQ(figure(&x, "infra_restarts"), 0);
  done(&x);
}

/* Without the Handler: the failure model.  "trace" ends F as recorded;
 * "resubmit" has its user resubmit it 600 s later to start over with all
 * 2000 s of work (1600-3600), for every policy alike. */
SM_TEST(sim_failure_model_resubmit) {
  const char *csv = "job_id,submit_s,duration_s,gpus,state\n"
                    "F,0,1000,1,failed\n";
  const char *pt[] = {"lucid.tables=builtin", "fail.infra_share=1", NULL};
  const char *pr[] = {"lucid.tables=builtin", "fail.infra_share=1",
                      "fail.model=resubmit", NULL};
  const char *pols[] = {"sjf-schedmate", "qssf", "fifo"};

  for (size_t i = 0; i < SM_ARRAY_LEN(pols); i++) {
    run x = simulate(csv, "2x1", pols[i], pt);
    run y = simulate(csv, "2x1", pols[i], pr);
    ASSERT_NEAR(job(&x, "F")->end, 1000, 1e-6);
    ASSERT_EQ(job(&x, "F")->final_state, SM_SIM_END_FAILED);
    ASSERT_NEAR(job(&y, "F")->end, 3600, 1e-6);
    ASSERT_EQ(job(&y, "F")->final_state, SM_SIM_END_COMPLETED);
    ASSERT_EQ(figure(&y, "infra_resubmitted_by_users"), 1);
    done(&x);
    done(&y);
  }
}

/* ==== Speed-ups ==== */

SM_TEST(sim_schedmate_speedups_and_sjf_order) {
  /* One GPU; A runs first; then B (long) and C (short) of users with a
   * history: SJF on the estimates runs C before B. */
  const char *csv = "job_id,submit_s,duration_s,gpus,user,name\n"
                    "B0,0,500,1,bob,long\n"
                    "C0,0,50,1,cat,short\n"
                    "A,600,100,1,ann,x\n"
                    "B,601,500,1,bob,long\n"
                    "C,602,50,1,cat,short\n";
  const char *p[] = {"lucid.tables=builtin", NULL};
  run x = simulate(csv, "1x1", "sjf-schedmate", p);
  run y = simulate(csv, "1x1", "fifo", p);
  const sm_sim_result *rs[2];
  sm_sim_speedup sp[4];

  ASSERT_NEAR(job(&x, "C")->first_start, 700, 1e-6);
  ASSERT_NEAR(job(&x, "B")->first_start, 750, 1e-6);
  ASSERT_NEAR(job(&y, "B")->first_start, 700, 1e-6);
  ASSERT_EQ(figure(&x, "facts_hits"), 2);
  rs[0] = x.r;
  rs[1] = y.r;
  ASSERT_EQ(sm_sim_speedups(rs, 2, sp, 4), 0); /* fifo is no baseline */
  done(&y);
  y = simulate(csv, "1x1", "qssf", p);
  rs[1] = y.r;
  ASSERT_EQ(sm_sim_speedups(rs, 2, sp, 4), 1);
  ASSERT_STREQ(sp[0].path, "sjf-schedmate");
  ASSERT_STREQ(sp[0].baseline, "qssf");
  ASSERT_NEAR(sp[0].avg_jct_speedup,
              sm_sim_result_summary(y.r)->avg_jct_s /
                  sm_sim_result_summary(x.r)->avg_jct_s,
              1e-12);
  done(&x);
  done(&y);
}

/* ==== Invariants ==== */

/* Every SchedMate policy on random traces (several VCs, GPU types of two
 * speeds, multi-node jobs, canceled and failed jobs, both failure models,
 * both facts sources, a workload catalogue): sm_sim_run checks the
 * engine's invariants at the end of each run; the same seed gives the
 * same schedule. */
SM_TEST(sim_schedmate_policies_keep_invariants) {
  static const char *const pols[] = {"lucid", "lucid+schedmate",
                                     "sjf-schedmate", "sjf-schedmate+fh"};
  static const char *const states[] = {"completed", "completed", "canceled",
                                       "failed"};
  static const int gpus[] = {1, 1, 2, 4, 8, 8, 12, 16, 32};
  sm_buf b;
  sm_rng rng;

  sm_buf_init(&b, 0);
  sm_rng_seed(&rng, 99);
  sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,vc,user,name,state\n");
  for (int i = 0; i < 700; i++)
    sm_buf_addf(&b, "j%d,%d,%d,%d,%s,u%d,n%d,%s\n", i,
                i * 30 + (int)(sm_rng_uniform(&rng) * 30),
                10 + (int)exp(sm_rng_uniform(&rng) * 9),
                gpus[(int)(sm_rng_uniform(&rng) * 9)], i % 4 ? "a" : "b",
                (int)(sm_rng_uniform(&rng) * 6),
                (int)(sm_rng_uniform(&rng) * 3),
                states[(int)(sm_rng_uniform(&rng) * 4)]);
  for (size_t k = 0; k < SM_ARRAY_LEN(pols); k++)
    for (int v = 0; v < 3; v++) {
      const char *p[] = {"lucid.tables=builtin",
                         v == 0 ? "fail.model=resubmit" : "fail.model=trace",
                         v == 1 ? "facts=calibrated" : "facts=history",
                         v == 2 ? "workloads=data/workloads" : "facts.top_k=3",
                         "fail.infra_share=0.5",
                         NULL};
      run x = simulate(sm_buf_str(&b), "a=4x8:a100@1,a=2x8:v100@0.5,b=3x8",
                       pols[k], p);
      run y = simulate(sm_buf_str(&b), "a=4x8:a100@1,a=2x8:v100@0.5,b=3x8",
                       pols[k], p);
      const sm_sim_summary *m = sm_sim_result_summary(x.r);
      ASSERT_EQ(m->unfinished, 0);
      ASSERT_EQ(m->completed + m->canceled + m->failed, 700);
      ASSERT_NEAR(m->avg_jct_s, sm_sim_result_summary(y.r)->avg_jct_s, 0);
      ASSERT_NEAR(m->makespan_s, sm_sim_result_summary(y.r)->makespan_s, 0);
      done(&x);
      done(&y);
    }
  sm_buf_release(&b);
}
