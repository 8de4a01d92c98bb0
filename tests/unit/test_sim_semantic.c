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
#include "sim/facts_int.h"
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
 * write-backs, with the run's facts.top_k and facts.threshold.  Every
 * answer must agree: hit or not, estimate, matches averaged, fallback
 * reason; so must the counts of answers that passed over a vetoed or a
 * too thin look-alike.  eq.user=U compares only the jobs of user U (the
 * others are still written back to both). */
typedef struct eq_state {
  sm__facts *f;        /* under test */
  sm_store *store;     /* the real engine */
  sm_sim_job **q;      /* FIFO */
  int n;               /* queued */
  int top_k;           /* facts.top_k */
  float threshold;     /* facts.threshold */
  int catalogue;       /* workloads= given: metadata from the templates */
  const char *only;    /* eq.user, or NULL */
  size_t asked, hits;  /* counts */
  size_t fb[8];        /* fallbacks by reason */
  size_t vetoed, thin; /* answers whose walk rejected a look-alike */
  size_t searches, frozen, protos; /* the facts' own counters */
} eq_state;

/* The metadata `schedmate advise` would get for the job: what the trace
 * says (written out here independently of facts.c), or the template's
 * extracted metadata with a catalogue. */
static void meta_of(const eq_state *e, const sm_sim_job *j, sm_meta *m,
                    sm_fp_extra *x) {
  const char *a;
  long long n;

  x->user = j->user;
  x->name = j->name;
  x->vc = j->vc_name;
  if (e->catalogue) {
    ASSERT_OK(sm__facts_job_meta(e->f, j, m));
    return;
  }
  sm_meta_init(m);
  if ((a = sm_sim_job_attr(j, "model")) != NULL && *a) {
    char b[128];
    size_t i;
    for (i = 0; a[i] && i + 1 < sizeof(b); i++)
      b[i] = (char)(a[i] >= 'A' && a[i] <= 'Z' ? a[i] + 32 : a[i]);
    b[i] = '\0';
    sm_meta_set_str(m, SM_META_MODEL_NAME, b, "trace");
  } else if ((a = sm_sim_job_attr(j, "model_name")) != NULL && *a) {
    sm_meta_set_str(m, SM_META_MODEL_NAME, a, "trace");
  }
  if ((a = sm_sim_job_attr(j, "dataset")) != NULL && *a)
    sm_meta_set_str(m, SM_META_DATASET, a, "trace");
  if ((a = sm_sim_job_attr(j, "batchsize")) != NULL &&
      sm_parse_i64(a, &n) == 0 && n > 0)
    sm_meta_set_num(m, SM_META_PER_DEVICE_BATCH_SIZE, (double)n, "trace");
  if (j->nodes > 0)
    sm_meta_set_num(m, SM_META_NODES, j->nodes, "trace");
  sm_meta_set_num(m, SM_META_GPUS, j->gpus, "trace");
}

static int eq_init(sm_sim *s, void **st, sm_err *err) {
  eq_state *e = sm_calloc(1, sizeof(*e));
  const char *wl = sm_sim_param_str(s, "workloads");
  int rc;

  *st = e;
  if (e == NULL)
    return SM_ENOMEM;
  e->q = sm_calloc(sm_sim_job_count(s) + 1, sizeof(*e->q));
  if (e->q == NULL)
    return SM_ENOMEM;
  e->top_k = (int)sm_sim_param_num(s, "facts.top_k", 3);
  e->threshold = (float)sm_sim_param_num(s, "facts.threshold", 0.95);
  e->catalogue = wl != NULL && *wl != '\0';
  e->only = sm_sim_param_str(s, "eq.user");
  rc = sm__facts_open(s, &e->f, err);
  if (rc != 0)
    return rc;
  e->store = sm_store_open("mem:", SM_STORE_CREATE, 0, err);
  return e->store ? 0 : SM_ENOMEM;
}

static void eq_release(sm_sim *s, void *st) {
  eq_state *e = st;
  (void)s;
  if (e == NULL)
    return;
  sm__facts_free(e->f);
  sm_store_close(e->store);
  sm_free(e->q);
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
  if (j->restarts > 0 || (e->only && strcmp(j->user, e->only) != 0))
    return;
  sm__facts_ask(e->f, j, &f);
  meta_of(e, j, &m, &x);
  memset(&o, 0, sizeof(o));
  o.top_k = e->top_k;
  o.threshold = e->threshold;
  o.now = 1;
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(e->store, &m, &x, &o, &a, &err));
  e->asked++;
  if (f.hit != a.est.valid)
    SM_FAIL_AT("job %s: facts hit %d (%s), advise valid %d (%s: %s)", j->id,
               f.hit, sm_fallback_name((sm_fallback)f.fallback), a.est.valid,
               sm_fallback_name(a.fallback), a.detail);
  if (f.hit) {
    e->hits++;
    ASSERT_NEAR(f.duration, a.est.duration_s, 1e-9 * a.est.duration_s);
    ASSERT_EQ(f.n, a.est.n);
    if (!isnan(a.est.sm_util))
      ASSERT_NEAR(f.util, a.est.sm_util, 1e-9);
  } else {
    if (f.fallback != (int)a.fallback)
      SM_FAIL_AT("job %s: facts %s, advise %s (%s)", j->id,
                 sm_fallback_name((sm_fallback)f.fallback),
                 sm_fallback_name(a.fallback), a.detail);
    if ((size_t)a.fallback < SM_ARRAY_LEN(e->fb))
      e->fb[a.fallback]++;
  }
  e->vetoed += a.n_different > 0;
  e->thin += a.n_thin > 0;
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
  sm_meta_release(&r.meta);
  meta_of(e, j, &r.meta, &x);
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
  size_t searches, frozen, protos;

  sm__facts_counters(e->f, &searches, &frozen, &protos);
  sm_sim_stat_add(s, "compared", (double)e->asked);
  sm_sim_stat_add(s, "hits", (double)e->hits);
  sm_sim_stat_add(s, "advise_too_little_known",
                  (double)e->fb[SM_FALLBACK_TOO_LITTLE_KNOWN]);
  sm_sim_stat_add(s, "advise_no_match", (double)e->fb[SM_FALLBACK_NO_MATCH]);
  sm_sim_stat_add(s, "advise_below_threshold",
                  (double)e->fb[SM_FALLBACK_BELOW_THRESHOLD]);
  sm_sim_stat_add(s, "advise_vetoed", (double)e->vetoed);
  sm_sim_stat_add(s, "advise_thin", (double)e->thin);
  sm_sim_stat_add(s, "searches", (double)searches);
  sm_sim_stat_add(s, "frozen", (double)frozen);
  sm_sim_stat_add(s, "prototypes", (double)protos);
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

/* Runs the parity policy; every job was compared and the facts' own
 * figures agree with the engine's. */
static run eq_run(const char *csv, const char *cluster,
                  const char *const *params, size_t njobs) {
  run x;

  if (sm_sim_policy_find("test-facts-eq") == NULL)
    ASSERT_OK(sm_sim_policy_register(&eq_policy));
  x = simulate(csv, cluster, "test-facts-eq", params);
  if (njobs > 0)
    ASSERT_EQ(figure(&x, "compared"), njobs);
  ASSERT_EQ(figure(&x, "fallback_too_little_known"),
            figure(&x, "advise_too_little_known"));
  ASSERT_EQ(figure(&x, "fallback_no_match"), figure(&x, "advise_no_match"));
  ASSERT_EQ(figure(&x, "fallback_below_threshold"),
            figure(&x, "advise_below_threshold"));
  ASSERT_EQ(figure(&x, "facts_vetoed_lookalikes"), figure(&x, "advise_vetoed"));
  ASSERT_EQ(figure(&x, "facts_thin_lookalikes"), figure(&x, "advise_thin"));
  ASSERT_EQ(figure(&x, "history_future_reads"), 0);
  return x;
}

SM_TEST(sim_facts_history_equals_advise) {
  sm_buf b;
  const char *p[] = {"lucid.tables=builtin", NULL};
  run x;

  sm_buf_init(&b, 0);
  gen_trace(&b, 1500, 7, INFINITY, 1);
  x = eq_run(sm_buf_str(&b), "8x8", p, 1500);
  ASSERT(figure(&x, "hits") > 600);
  ASSERT(figure(&x, "fallback_inconsistent") + figure(&x, "fallback_no_match") >
         0);
  ASSERT(figure(&x, "frozen") > 0);
  done(&x);
  sm_buf_release(&b);
}

/* Jobs that know too little to be identified, beside jobs that do: trace
 * jobs with a user and a job name, with only one of them, with neither
 * (GPUs and VC only), and with a model name (and a dataset) but no
 * recipe.  Many users share the job names, so at a low threshold each
 * job has dozens of look-alikes of other users (vetoed on the user) and
 * of no user (too thin), in groups of equal score longer than the first
 * search returns.  With the defaults, the same trace: no look-alike
 * reaches the threshold. */
static void gen_thin_trace(sm_buf *b, int n, uint64_t seed) {
  sm_rng rng;
  static const char *const models[] = {"resnet50", "vgg16", "bert-base"};

  sm_rng_seed(&rng, seed);
  sm_buf_adds(b, "job_id,submit_s,duration_s,gpus,vc,user,name,model,dataset,"
                 "state\n");
  for (int i = 0; i < n; i++) {
    int u = (int)(sm_rng_uniform(&rng) * 40),
        k = (int)(sm_rng_uniform(&rng) * 3);
    int kind = (int)(sm_rng_uniform(&rng) * 10);
    int g = 1 << (int)(sm_rng_uniform(&rng) * 2);
    double d = 60 * pow(2, (u + k) % 7) * (0.9 + 0.2 * sm_rng_uniform(&rng));
    char user[16] = "", name[16] = "";
    const char *model = "", *data = "";
    if (kind < 5 || kind == 5) /* user and name; 5: name only */
      snprintf(name, sizeof(name), "train_%d_v%d", k, i % 9);
    if (kind < 5 || kind == 6) /* 6: user only */
      snprintf(user, sizeof(user), "u%d", u);
    if (kind == 8) /* a model name only, Tiresias-style */
      model = models[k];
    if (kind == 9) { /* model and dataset, no recipe */
      model = models[k];
      data = "imagenet";
    }
    sm_buf_addf(b, "j%d,%d,%.0f,%d,%s,%s,%s,%s,%s,%s\n", i, i * 20, d, g,
                i % 2 ? "a" : "b", user, name, model, data,
                sm_rng_uniform(&rng) < 0.9 ? "completed" : "failed");
  }
}

SM_TEST(sim_facts_history_equals_advise_too_little_known) {
  sm_buf b;
  const char *p95[] = {"lucid.tables=builtin", NULL};
  const char *p60[] = {"lucid.tables=builtin", "facts.threshold=0.6", NULL};
  const char *p60k1[] = {"lucid.tables=builtin", "facts.threshold=0.6",
                         "facts.top_k=1", NULL};
  run x;

  sm_buf_init(&b, 0);
  gen_thin_trace(&b, 1200, 3);
  x = eq_run(sm_buf_str(&b), "8x8", p95, 1200);
  /* Half the jobs (name only, user only, neither, a bare model name)
   * cannot be identified; the others are matched on user and name. */
  ASSERT(figure(&x, "fallback_too_little_known") > 450);
  ASSERT(figure(&x, "hits") > 300);
  done(&x);
  x = eq_run(sm_buf_str(&b), "8x8", p60, 1200);
  ASSERT(figure(&x, "hits") > 300);
  ASSERT(figure(&x, "facts_vetoed_lookalikes") > 50);
  ASSERT(figure(&x, "facts_thin_lookalikes") > 50);
  /* Look-alikes outnumber the first search: it was widened. */
  ASSERT(figure(&x, "searches") > figure(&x, "compared") -
                                      figure(&x, "fallback_too_little_known") -
                                      figure(&x, "frozen"));
  done(&x);
  x = eq_run(sm_buf_str(&b), "8x8", p60k1, 1200);
  ASSERT(figure(&x, "hits") > 300);
  done(&x);
  sm_buf_release(&b);

  /* A catalogue-free Tiresias-style trace: a model name and nothing
   * else that identifies a job.  Nothing can be matched. */
  sm_buf_init(&b, 0);
  sm_buf_adds(&b, "job_id,num_gpu,submit_time,iterations,model_name,"
                  "duration,interval\n");
  for (int i = 0; i < 300; i++)
    sm_buf_addf(&b, "%d,%d,%d,%d,%s,%d,30\n", i, 1 << (i % 3), i * 30,
                100 + i % 7, i % 2 ? "vgg19" : "resnet50", 100 + i % 13);
  x = eq_run(sm_buf_str(&b), "4x8", p95, 300);
  ASSERT_EQ(figure(&x, "fallback_too_little_known"), 300);
  ASSERT_EQ(figure(&x, "facts_hits"), 0);
  done(&x);
  sm_buf_release(&b);
}

/* Two users whose fingerprints are identical (the feature hashing puts
 * both names in one bucket with one sign; found here, not assumed): the
 * cosine is 1, and the identity rule still tells them apart. */
SM_TEST(sim_facts_history_equals_advise_same_fingerprint_other_user) {
  static float fp[600][SM_FP_DIMS];
  int a = -1, c = -1;
  sm_buf b;
  const char *p[] = {"lucid.tables=builtin", NULL};
  run x;

  for (int i = 0; i < 600 && a < 0; i++) {
    sm_meta m;
    sm_fp_extra ex;
    char u[16];
    sm_meta_init(&m);
    sm_meta_set_num(&m, SM_META_GPUS, 1, "t");
    snprintf(u, sizeof(u), "user%d", i);
    ex.user = u;
    ex.name = "train";
    ex.vc = "a";
    sm_fingerprint(&m, &ex, fp[i]);
    for (int k = 0; k < i && a < 0; k++)
      if (memcmp(fp[k], fp[i], sizeof(fp[i])) == 0) {
        a = k;
        c = i;
      }
    sm_meta_release(&m);
  }
  ASSERT(a >= 0);
  sm_buf_init(&b, 0);
  sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,vc,user,name\n");
  for (int i = 0; i < 40; i++)
    sm_buf_addf(&b, "j%d,%d,%d,1,a,user%d,train\n", i, i * 100,
                i < 20 ? 50 : 60, i < 20 ? a : c);
  x = eq_run(sm_buf_str(&b), "1x8", p, 40);
  /* user<c>'s first job has user<a>'s 20 records at cosine 1 and none
   * of its own: no match.  Its later jobs walk past the same 20 to their
   * own (one group of equal scores, in write order). */
  ASSERT_EQ(figure(&x, "facts_vetoed_lookalikes"), 20);
  ASSERT_EQ(figure(&x, "prototypes"), 2);
  ASSERT_EQ(figure(&x, "hits"), 19 + 19);
  done(&x);
  sm_buf_release(&b);
  /* The same group of equal scores with more of user<a>'s records before
   * user<c>'s own than sm_advise examines: no match at 4,200, a match at
   * 4,000. */
  for (int n = 4200; n >= 4000; n -= 200) {
    char only[32];
    const char *q[] = {"lucid.tables=builtin", only, NULL};
    snprintf(only, sizeof(only), "eq.user=user%d", c);
    sm_buf_init(&b, 0);
    sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,vc,user,name\n");
    for (int i = 0; i < n; i++)
      sm_buf_addf(&b, "a%d,%d,10,1,a,user%d,train\n", i, i, a);
    sm_buf_addf(&b, "c0,%d,60,1,a,user%d,train\n", n, c);
    sm_buf_addf(&b, "c1,%d,60,1,a,user%d,train\n", n + 100, c);
    x = eq_run(sm_buf_str(&b), "8x8", q, 2);
    ASSERT_EQ(figure(&x, "hits"), n > 4096 ? 0 : 1);
    done(&x);
    sm_buf_release(&b);
  }
}

/* More vetoed look-alikes than sm_advise examines (4,096): user u0 runs
 * 4,200 jobs "x" on one GPU, u1 one job "x" on two GPUs, then u1 asks
 * for "x" on one GPU.  Its look-alikes of u0 (cosine 0.8, vetoed on the
 * user) come before its own job on two GPUs (cosine 0.6): sm_advise stops
 * after 4,096 of them and falls back, and so must the facts.  With 4,000
 * of u0's jobs the walk reaches u1's job: a hit. */
SM_TEST(sim_facts_history_equals_advise_beyond_the_widest_search) {
  const char *p[] = {"lucid.tables=builtin", "facts.threshold=0.55",
                     "eq.user=u1", NULL};
  const int counts[] = {4200, 4000};

  for (int c = 0; c < 2; c++) {
    sm_buf b;
    run x;
    int n = counts[c];
    sm_buf_init(&b, 0);
    sm_buf_adds(&b, "job_id,submit_s,duration_s,gpus,user,name\n");
    for (int i = 0; i < n; i++)
      sm_buf_addf(&b, "a%d,%d,10,1,u0,x\n", i, i);
    sm_buf_addf(&b, "b0,%d,10,2,u1,x\n", n);
    sm_buf_addf(&b, "b1,%d,10,1,u1,x\n", n + 100);
    x = eq_run(sm_buf_str(&b), "8x8", p, 2);
    ASSERT_EQ(figure(&x, "facts_vetoed_lookalikes"), 1);
    ASSERT_EQ(figure(&x, "hits"), c == 0 ? 0 : 1);
    done(&x);
    sm_buf_release(&b);
  }
}

/* A catalogue of look-alikes written for this test: one fine-tuning
 * script launched for LLaMA-7B and LLaMA-13B on Alpaca and for LLaMA-7B on
 * ShareGPT (each at two lengths), and a script whose command says nothing
 * about what it trains.  Returns the directory (a static buffer); rm_cat
 * removes it. */
static const char *const cat_names[] = {"l7-alpaca", "l13-alpaca",
                                        "l7-sharegpt", "loop"};

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

static const char *write_cat(void) {
  static char dir[64];
  static const char *const cmds[] = {
      "torchrun --nproc_per_node=4 sft.py --model_name_or_path "
      "huggyllama/llama-7b --dataset alpaca --max_steps {ITERS} "
      "--per_device_train_batch_size 4",
      "torchrun --nproc_per_node=4 sft.py --model_name_or_path "
      "huggyllama/llama-13b --dataset alpaca --max_steps {ITERS} "
      "--per_device_train_batch_size 4",
      "torchrun --nproc_per_node=4 sft.py --model_name_or_path "
      "huggyllama/llama-7b --dataset sharegpt --max_steps {ITERS} "
      "--per_device_train_batch_size 4",
      "python loop.py --workers 8 --rounds {ITERS}"};
  char path[160], text[512];

  snprintf(dir, sizeof(dir), "/tmp/sm-simcat-XXXXXX");
  ASSERT(mkdtemp(dir) != NULL);
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof(path), "%s/%s", dir, cat_names[i]);
    ASSERT_OK(mkdir(path, 0700) != 0);
    snprintf(path, sizeof(path), "%s/%s/repo", dir, cat_names[i]);
    ASSERT_OK(mkdir(path, 0700) != 0);
    snprintf(path, sizeof(path), "%s/%s/workload.conf", dir, cat_names[i]);
    snprintf(text, sizeof(text),
             "about = test template\nclass = %d\ncommand = %s\n"
             "iterations = %s\n",
             i == 3 ? 0 : 2, cmds[i], i == 3 ? "5 10" : "1000 2000");
    write_file(path, text);
    snprintf(path, sizeof(path), "%s/%s/repo/%s", dir, cat_names[i],
             i == 3 ? "loop.py" : "sft.py");
    write_file(
        path, i == 3 ? "import argparse\n\np = argparse.ArgumentParser()\n"
                       "p.add_argument(\"--workers\", default=4, type=int)\n"
                       "p.add_argument(\"--rounds\", default=10, type=int)\n"
                       "print(p.parse_args())\n"
                     : "import argparse\n\n\ndef main():\n"
                       "    p = argparse.ArgumentParser()\n"
                       "    p.add_argument(\"--model_name_or_path\")\n"
                       "    p.add_argument(\"--dataset\", default=\"alpaca\")\n"
                       "    p.add_argument(\"--max_steps\", default=1000, "
                       "type=int)\n"
                       "    p.add_argument(\"--per_device_train_batch_size\", "
                       "default=4, type=int)\n"
                       "    print(p.parse_args())\n\n\n"
                       "if __name__ == \"__main__\":\n    main()\n");
  }
  return dir;
}

static void rm_cat(const char *dir) {
  char path[160];

  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof(path), "%s/%s/workload.conf", dir, cat_names[i]);
    unlink(path);
    snprintf(path, sizeof(path), "%s/%s/repo/%s", dir, cat_names[i],
             i == 3 ? "loop.py" : "sft.py");
    unlink(path);
    snprintf(path, sizeof(path), "%s/%s/repo", dir, cat_names[i]);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/%s", dir, cat_names[i]);
    rmdir(path);
  }
  rmdir(dir);
}

/* With a catalogue the metadata is the extractor's.  The look-alikes are
 * what they claim to be: LLaMA-7B and -13B on one recipe are within the
 * test's threshold of each other and vetoed on the model, Alpaca and
 * ShareGPT on the dataset, the two lengths on the iterations; the loop
 * cannot be identified.  Then job by job over a trace, with the test
 * catalogue and with data/workloads, at the default threshold and at one
 * that lets the look-alikes in. */
SM_TEST(sim_facts_history_equals_advise_vetoes_with_a_catalogue) {
  const char *dir = write_cat();
  char wl[96];
  sm__wl *w = NULL;
  sm_err err = {0};
  float a[SM_FP_DIMS], b[SM_FP_DIMS];
  sm_identity_cmp c;
  sm_buf t;
  const char *cats[] = {wl, "workloads=data/workloads"};

  ASSERT_OK(sm__wl_load(dir, &w, &err));
  ASSERT_EQ(w->n, 4);
  {
    const sm_meta *m7 = NULL, *m13 = NULL, *msg = NULL, *loop = NULL;
    for (int i = 0; i < 4; i++) {
      if (strcmp(w->t[i].name, "l7-alpaca") == 0)
        m7 = &w->t[i].v[0].meta;
      else if (strcmp(w->t[i].name, "l13-alpaca") == 0)
        m13 = &w->t[i].v[0].meta;
      else if (strcmp(w->t[i].name, "l7-sharegpt") == 0)
        msg = &w->t[i].v[0].meta;
      else
        loop = &w->t[i].v[0].meta;
    }
    ASSERT(m7 && m13 && msg && loop);
    ASSERT(sm_identity_enough(sm_identity_known(m7, NULL)));
    ASSERT(!sm_identity_enough(sm_identity_known(loop, NULL)));
    sm_fingerprint(m7, NULL, a);
    sm_fingerprint(m13, NULL, b);
    /* The published width and depth of each size set them further
     * apart than the names alone. */
    ASSERT(sm_fp_cosine(a, b) >= 0.6f);
    ASSERT(!sm_identity_compare(m7, NULL, m13, NULL, &c));
    ASSERT_EQ(c.veto, SM_META_MODEL_NAME);
    sm_fingerprint(msg, NULL, b);
    ASSERT(sm_fp_cosine(a, b) >= 0.7f);
    ASSERT(!sm_identity_compare(m7, NULL, msg, NULL, &c));
    ASSERT_EQ(c.veto, SM_META_DATASET);
    for (int i = 0; i < 4; i++)
      if (strcmp(w->t[i].name, "l7-alpaca") == 0) {
        sm_fingerprint(&w->t[i].v[1].meta, NULL, b);
        ASSERT(sm_fp_cosine(a, b) >= 0.7f);
        ASSERT(!sm_identity_compare(m7, NULL, &w->t[i].v[1].meta, NULL, &c));
        ASSERT_EQ(c.veto, SM_META_ITERATIONS);
      }
  }
  sm__wl_free(w);
  snprintf(wl, sizeof(wl), "workloads=%s", dir);
  for (int anon = 0; anon < 2; anon++) {
    /* The trace with users and job names, and without: then every job
     * draws its own template, and the loop's jobs cannot be identified
     * (with a user and a job name they are, by those). */
    sm_buf_init(&t, 0);
    gen_trace(&t, 1200, 5, INFINITY, 1);
    if (anon) {
      sm_buf u;
      const char *l = sm_buf_str(&t);
      sm_buf_init(&u, 0);
      sm_buf_adds(&u, "job_id,submit_s,duration_s,gpus,state\n");
      for (l = strchr(l, '\n') + 1; *l; l = strchr(l, '\n') + 1) {
        char id[16], user[16], name[40], st[16];
        int sub, dur, g;
        ASSERT_EQ(sscanf(l, "%15[^,],%d,%d,%d,%15[^,],%39[^,],%15[^\n]", id,
                         &sub, &dur, &g, user, name, st),
                  7);
        sm_buf_addf(&u, "%s,%d,%d,%d,%s\n", id, sub, dur, g, st);
      }
      sm_buf_release(&t);
      t = u;
    }
    for (int k = 0; k < 2; k++)
      for (int lo = 0; lo < 2; lo++) {
        const char *p[] = {"lucid.tables=builtin", cats[k],
                           lo ? "facts.threshold=0.7" : "facts.threshold=0.95",
                           NULL};
        run x = eq_run(sm_buf_str(&t), "8x8", p, 1200);
        ASSERT(figure(&x, "hits") > (anon ? 100 : 300));
        if (k == 0 && anon)
          ASSERT(figure(&x, "fallback_too_little_known") > 200); /* loop */
        else
          ASSERT_EQ(figure(&x, "fallback_too_little_known"), 0);
        if (lo)
          ASSERT(figure(&x, "facts_vetoed_lookalikes") > 50);
        done(&x);
      }
    sm_buf_release(&t);
  }
  rm_cat(dir);
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
     * match (diffusers' --max_train_steps included). */
    sm_fingerprint(&t->v[0].meta, NULL, a);
    sm_fingerprint(&t->v[1].meta, NULL, b);
    if (sm_fp_cosine(a, b) >= 0.95f) {
      collapsed++;
      fprintf(stderr, "  variants of %s look the same\n", t->name);
    }
    for (int k = 0; k < w->n; k++)
      if (k != i) {
        sm_fingerprint(&w->t[k].v[0].meta, NULL, b);
        ASSERT(sm_fp_cosine(a, b) < 0.95f);
      }
  }
  ASSERT_EQ(collapsed, 0);
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
