/* test_history.c - fingerprints, the exact top-k index, the stores, the
 * estimates and their fallbacks. */
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_history.h"

/* A realistic job: LLaMA-7B SFT on Alpaca, FSDP on 4 GPUs. */
static void job_llama(sm_meta *m) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, "llama-7b", "command");
  sm_meta_set_str(m, SM_META_TASK, "sft", "README.md:110");
  sm_meta_set_str(m, SM_META_DOMAIN, "nlp", NULL);
  sm_meta_set_str(m, SM_META_DATASET, "alpaca-52k", "command");
  sm_meta_set_num(m, SM_META_ITERATIONS, 3, "command");
  sm_meta_set_str(m, SM_META_ITERATION_TYPE, "epochs", "command");
  sm_meta_set_num(m, SM_META_GLOBAL_BATCH_SIZE, 128, "command");
  sm_meta_set_num(m, SM_META_PER_DEVICE_BATCH_SIZE, 4, "command");
  sm_meta_set_num(m, SM_META_LR, 2e-5, "command");
  sm_meta_set_num(m, SM_META_GPUS, 4, "command");
  sm_meta_set_num(m, SM_META_NODES, 1, "command");
  sm_meta_set_num(m, SM_META_SEQ_LEN, 512, "train.py:60");
  sm_meta_set_str(m, SM_META_PRECISION, "bf16", "command");
  sm_meta_set_str(m, SM_META_PARALLELISM, "fsdp", "command");
}

static float cos_after(void (*change)(sm_meta *)) {
  sm_meta a, b;
  float fa[SM_FP_DIMS], fb[SM_FP_DIMS], c;
  job_llama(&a);
  job_llama(&b);
  if (change)
    change(&b);
  sm_fingerprint(&a, NULL, fa);
  sm_fingerprint(&b, NULL, fb);
  c = sm_fp_cosine(fa, fb);
  sm_meta_release(&a);
  sm_meta_release(&b);
  return c;
}

static void ch_model13b(sm_meta *m) {
  sm_meta_set_str(m, SM_META_MODEL_NAME, "llama-13b", NULL);
}
static void ch_dataset(sm_meta *m) {
  sm_meta_set_str(m, SM_META_DATASET, "sharegpt", NULL);
}
static void ch_task(sm_meta *m) {
  sm_meta_set_str(m, SM_META_TASK, "lm_pretraining", NULL);
}
static void ch_seq(sm_meta *m) {
  sm_meta_set_num(m, SM_META_SEQ_LEN, 1024, NULL);
}
static void ch_batch(sm_meta *m) {
  sm_meta_set_num(m, SM_META_GLOBAL_BATCH_SIZE, 256, NULL);
}
static void ch_epochs(sm_meta *m) {
  sm_meta_set_num(m, SM_META_ITERATIONS, 10, NULL);
}
static void ch_lr(sm_meta *m) {
  sm_meta_set_num(m, SM_META_LR, 1e-4, NULL);
}
static void ch_evidence(sm_meta *m) {
  /* Same values, other evidence (a renamed copy of the repository). */
  sm_meta_set_str(m, SM_META_TASK, "sft", "docs/README.md:3");
}

SM_TEST(fingerprint_same_job_matches_different_jobs_do_not) {
  float t = 0.95f;
  ASSERT_NEAR(cos_after(NULL), 1.0, 1e-5);
  ASSERT_NEAR(cos_after(ch_evidence), 1.0, 1e-5);
  ASSERT(cos_after(ch_model13b) < t);
  ASSERT(cos_after(ch_dataset) < t);
  ASSERT(cos_after(ch_task) < t);
  ASSERT(cos_after(ch_seq) < t);
  ASSERT(cos_after(ch_batch) < t);
  ASSERT(cos_after(ch_epochs) < t);
  ASSERT(cos_after(ch_lr) < t);
}

SM_TEST(fingerprint_numbers_degrade_smoothly) {
  sm_meta a, b;
  float fa[SM_FP_DIMS], fb[SM_FP_DIMS];
  float prev = 2;
  sm_meta_init(&a);
  sm_meta_init(&b);
  sm_meta_set_num(&a, SM_META_ITERATIONS, 100000, NULL);
  sm_fingerprint(&a, NULL, fa);
  for (double x = 100000; x <= 200000; x *= 1.05) {
    float c;
    sm_meta_set_num(&b, SM_META_ITERATIONS, x, NULL);
    sm_fingerprint(&b, NULL, fb);
    c = sm_fp_cosine(fa, fb);
    ASSERT(c <= prev + 1e-5);
    prev = c;
  }
  ASSERT(prev < 0.1);
  sm_meta_release(&a);
  sm_meta_release(&b);
}

SM_TEST(fingerprint_ignores_names_when_metadata_is_rich) {
  sm_meta m;
  float a[SM_FP_DIMS], b[SM_FP_DIMS];
  sm_fp_extra x1 = {"alice", "sft-run-3", "vc1"};
  sm_fp_extra x2 = {"bob", "my_other_name", "vc2"};
  job_llama(&m);
  sm_fingerprint(&m, &x1, a);
  sm_fingerprint(&m, &x2, b);
  ASSERT_NEAR(sm_fp_cosine(a, b), 1.0, 1e-5);
  sm_meta_release(&m);
}

SM_TEST(fingerprint_extra_trace_attributes) {
  sm_meta m;
  float a[SM_FP_DIMS], b[SM_FP_DIMS], c[SM_FP_DIMS];
  sm_fp_extra x1 = {"alice", "train_resnet50_run17", "vc6214e9"};
  sm_fp_extra x2 = {"alice", "train_resnet50_run18", "vc6214e9"};
  sm_fp_extra x3 = {"bob", "bert_finetune_squad", "vc6214e9"};
  sm_meta_init(&m);
  sm_meta_set_num(&m, SM_META_GPUS, 8, NULL);
  sm_fingerprint(&m, &x1, a);
  sm_fingerprint(&m, &x2, b);
  sm_fingerprint(&m, &x3, c);
  ASSERT(sm_fp_cosine(a, b) > 0.95);
  ASSERT(sm_fp_cosine(a, c) < 0.6);
  sm_meta_release(&m);
}

static void random_unit(sm_rng *r, float *v, uint32_t d, const float *near,
                        double noise) {
  double ss = 0;
  for (uint32_t j = 0; j < d; j++) {
    v[j] = (float)((near ? near[j] : 0) + noise * sm_rng_normal(r));
    ss += (double)v[j] * v[j];
  }
  for (uint32_t j = 0; j < d; j++)
    v[j] = (float)(v[j] / sqrt(ss));
}

SM_TEST(index_equals_flat_scan) {
  sm_rng r;
  uint32_t d = 256;
  sm_index *ix = sm_index_new(d);
  float centres[20][256], v[256];
  sm_hit a[10], b[10];
  sm_rng_seed(&r, 5);
  for (int c = 0; c < 20; c++)
    random_unit(&r, centres[c], d, NULL, 1.0);
  for (int i = 0; i < 20000; i++) {
    random_unit(&r, v, d, centres[i % 20], 0.04);
    ASSERT_OK(sm_index_add(ix, v));
    if (i % 1000 == 0) /* exact duplicates make ties */
      ASSERT_OK(sm_index_add(ix, v));
  }
  for (int qn = 0; qn < 50; qn++) {
    int na, nb;
    random_unit(&r, v, d, centres[qn % 20], qn % 2 ? 0.05 : 0.5);
    na = sm_index_search(ix, v, 10, -1.0f, a);
    nb = sm_index_search_flat(ix, v, 10, -1.0f, b);
    ASSERT_EQ(na, 10);
    ASSERT_EQ(na, nb);
    for (int i = 0; i < na; i++) {
      ASSERT_EQ(a[i].row, b[i].row);
      ASSERT(a[i].score == b[i].score);
      if (i)
        ASSERT(a[i].score <= a[i - 1].score);
    }
    /* A threshold cuts the list. */
    na = sm_index_search(ix, v, 10, a[4].score, a);
    ASSERT(na >= 5);
  }
  ASSERT_EQ(sm_index_search(ix, v, 0, -1.0f, a), 0);
  sm_index_free(ix);
}

static void make_record(sm_record *r, const char *id, double dur,
                        sm_end_state es, double util) {
  sm_record_init(r);
  r->id = sm_strdup(id);
  job_llama(&r->meta);
  r->duration_s = dur;
  r->end_state = es;
  r->sm_util = util;
  r->submit_time = 1.7e9;
  r->gpu_type = sm_strdup("a100");
  sm_record_fingerprint(r);
}

static int count_cb(const sm_record *r, void *arg) {
  (void)r;
  (*(int *)arg)++;
  return 0;
}

static void store_roundtrip(const char *uri) {
  sm_err err = {0};
  sm_store *s = sm_store_open(uri, SM_STORE_CREATE, 0, &err);
  sm_record r, g;
  sm_store_hit hits[5];
  int n = 0;
  if (s == NULL)
    SM_FAIL_AT("open %s: %s", uri, err.msg);
  make_record(&r, "job-1", 3600, SM_END_COMPLETED, 80);
  ASSERT_OK(sm_record_add_perf(&r, "a100", 4, 128, 55.5));
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  make_record(&r, "job-2", 4000, SM_END_COMPLETED, 75);
  sm_meta_set_str(&r.meta, SM_META_MODEL_NAME, "opt-6.7b", NULL);
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  /* Replacing keeps the place in insertion order. */
  make_record(&r, "job-1", 3700, SM_END_COMPLETED, 81);
  ASSERT_OK(sm_store_put(s, &r, &err));
  ASSERT_EQ(sm_store_count(s, &err), 2);
  sm_record_init(&g);
  ASSERT_OK(sm_store_get(s, "job-1", &g, &err));
  ASSERT_NEAR(g.duration_s, 3700, 1e-9);
  ASSERT_STREQ(g.meta.f[SM_META_MODEL_NAME].str, "llama-7b");
  ASSERT(memcmp(g.fp, r.fp, sizeof(r.fp)) == 0);
  ASSERT_EQ(sm_store_get(s, "nope", &g, &err), SM_ENOTFOUND);
  ASSERT_OK(sm_store_each(s, count_cb, &n, &err));
  ASSERT_EQ(n, 2);
  n = sm_store_search(s, r.fp, 5, -1.0f, hits, &err);
  ASSERT_EQ(n, 2);
  ASSERT_STREQ(hits[0].id, "job-1");
  ASSERT_NEAR(hits[0].score, 1.0, 1e-5);
  ASSERT(hits[1].score < 0.95);
  sm_record_release(&r);
  sm_record_release(&g);
  sm_store_close(s);
}

SM_TEST(store_mem_roundtrip) {
  store_roundtrip("mem:");
}

SM_TEST(store_sqlite_roundtrip_and_reopen) {
  char dir[] = "/tmp/sm_hist.XXXXXX", path[128];
  sm_err err = {0};
  sm_store *s;
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/h.db", dir);
  store_roundtrip(path);
  /* Reopen read-only: the records are there. */
  s = sm_store_open(path, 0, 0, &err);
  ASSERT(s != NULL);
  ASSERT_EQ(sm_store_count(s, &err), 2);
  sm_store_close(s);
  unlink(path);
  snprintf(path, sizeof(path), "%s/h.db-wal", dir);
  unlink(path);
  snprintf(path, sizeof(path), "%s/h.db-shm", dir);
  unlink(path);
  rmdir(dir);
}

SM_TEST(store_redis_roundtrip) {
  const char *url = getenv("SM_REDIS_URL");
  char uri[256];
  if (url == NULL)
    SM_SKIP("SM_REDIS_URL not set (tests/services.sh starts Redis)");
  /* A private key prefix: other tests share the server. */
  snprintf(uri, sizeof(uri), "%s?prefix=unit%d", url, (int)getpid());
  store_roundtrip(uri);
}

SM_TEST(store_sqlite_bad_files) {
  char dir[] = "/tmp/sm_hist.XXXXXX", path[128];
  sm_err err = {0};
  FILE *f;
  ASSERT(mkdtemp(dir) != NULL);
  /* Missing file without CREATE. */
  snprintf(path, sizeof(path), "%s/missing.db", dir);
  ASSERT(sm_store_open(path, 0, 0, &err) == NULL);
  ASSERT_EQ(err.code, SM_ENOENT);
  /* Garbage. */
  sm_err_clear(&err);
  snprintf(path, sizeof(path), "%s/garbage.db", dir);
  f = fopen(path, "w");
  for (int i = 0; i < 4096; i++)
    fputc(i * 31 % 256, f);
  fclose(f);
  ASSERT(sm_store_open(path, SM_STORE_CREATE, 0, &err) == NULL);
  ASSERT_EQ(err.code, SM_ECORRUPT);
  ASSERT(strstr(err.msg, "garbage.db") != NULL);
  unlink(path);
  /* A newer schema version. */
  sm_err_clear(&err);
  snprintf(path, sizeof(path), "%s/new.db", dir);
  {
    sm_store *s = sm_store_open(path, SM_STORE_CREATE, 0, &err);
    ASSERT(s != NULL);
    sm_store_close(s);
  }
  {
    sqlite3 *db;
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL),
              SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT(sm_store_open(path, SM_STORE_CREATE, 0, &err) == NULL);
  ASSERT_EQ(err.code, SM_ESCHEMA);
  ASSERT(strstr(err.msg, "99") != NULL);
  /* A directory. */
  sm_err_clear(&err);
  ASSERT(sm_store_open(dir, SM_STORE_CREATE, 0, &err) == NULL);
  ASSERT_EQ(err.code, SM_ENOTREG);
  {
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}

SM_TEST(advise_estimates_and_fallbacks) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_record r;
  sm_meta q;
  sm_advice a;
  sm_advise_opts o = {.top_k = 5, .threshold = 0.95f};
  const double durs[] = {3000, 3600, 4200};
  char id[16];

  sm_advice_init(&a);
  job_llama(&q);
  /* Empty history. */
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NO_MATCH);
  /* Three completed runs and one cancelled early. */
  for (int i = 0; i < 3; i++) {
    snprintf(id, sizeof(id), "ok-%d", i);
    make_record(&r, id, durs[i], SM_END_COMPLETED, 70 + i);
    ASSERT_OK(sm_record_add_perf(&r, "a100", 4, 128, 50 + 10 * i));
    ASSERT_OK(sm_store_put(s, &r, &err));
    sm_record_release(&r);
  }
  make_record(&r, "cancelled", 60, SM_END_CANCELED, 10);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_EQ(a.n_matches, 4);
  ASSERT(a.est.valid);
  ASSERT_EQ(a.est.n, 3);
  /* The cancelled run does not pose as a short duration. */
  ASSERT_NEAR(a.est.duration_s, 3600, 1e-9);
  ASSERT_NEAR(a.est.median_duration_s, 3600, 1e-9);
  ASSERT_NEAR(a.est.stdev, 600, 1e-9);
  ASSERT_NEAR(a.est.sm_util, 71, 1e-9);
  ASSERT_NEAR(a.est.p_early_end, 0.25, 1e-12);
  ASSERT_NEAR(a.est.expected_duration_s, (3000 + 3600 + 4200 + 60) / 4.0, 1e-9);
  ASSERT_EQ(a.est.n_perf, 1);
  ASSERT_NEAR(a.est.perf[0].throughput, 60, 1e-9);
  ASSERT_EQ(a.est.perf[0].n, 3);
  /* A different job is below the threshold. */
  sm_meta_set_str(&q, SM_META_MODEL_NAME, "llama-70b", NULL);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_BELOW_THRESHOLD);
  ASSERT(a.best_score < 0.95);
  ASSERT(strstr(a.detail, "below the threshold") != NULL);
  /* Nothing known: extract_failed. */
  sm_meta_release(&q);
  sm_meta_init(&q);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_EXTRACT_FAILED);
  /* No store: history_unavailable. */
  job_llama(&q);
  ASSERT_OK(sm_advise(NULL, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_UNAVAILABLE);
  /* Two modes of duration: inconsistent. */
  make_record(&r, "ok-huge", 360000, SM_END_COMPLETED, 70);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_INCONSISTENT);
  ASSERT(!a.est.valid);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

SM_TEST(advise_only_failed_matches_is_a_fallback) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_record r;
  sm_meta q;
  sm_advice a;
  sm_advice_init(&a);
  make_record(&r, "f1", 120, SM_END_FAILED_USER, 5);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  job_llama(&q);
  ASSERT_OK(sm_advise(s, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NO_MATCH);
  ASSERT_EQ(a.n_matches, 1);
  ASSERT_NEAR(a.est.p_early_end, 1.0, 1e-12);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

SM_TEST(record_json_roundtrip_and_errors) {
  sm_record r, g;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  make_record(&r, "rt", 123.5, SM_END_FAILED_INFRA, NAN);
  r.user = sm_strdup("alice");
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_record_add_perf(&r, "h100", 8, 256, 1000));
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_record_write_json(&r, &w);
  ASSERT_OK(sm_jw_finish(&w));
  sm_record_init(&g);
  ASSERT_OK(sm_record_from_json(&g, b.data, b.len, &err));
  ASSERT_STREQ(g.id, "rt");
  ASSERT_EQ(g.end_state, SM_END_FAILED_INFRA);
  ASSERT(isnan(g.sm_util));
  ASSERT_STREQ(g.user, "alice");
  ASSERT_EQ(g.n_perf, 1);
  ASSERT(memcmp(g.fp, r.fp, sizeof(r.fp)) == 0);
  ASSERT_EQ(sm_record_from_json(&g, "{\"duration_s\":1}", 16, &err), SM_EPARSE);
  sm_err_clear(&err);
  ASSERT_EQ(
      sm_record_from_json(&g, "{\"id\":\"x\",\"duration_s\":-1}", 27, &err),
      SM_EPARSE);
  sm_err_clear(&err);
  ASSERT_EQ(
      sm_record_from_json(&g, "{\"id\":\"x\",\"end_state\":\"meh\"}", 30, &err),
      SM_EPARSE);
  sm_err_clear(&err);
  ASSERT_EQ(sm_record_from_json(&g, "\x01\x02", 2, &err), SM_EPARSE);
  {
    sm_end_state es;
    ASSERT_OK(sm_end_state_parse("CANCELLED", &es));
    ASSERT_EQ(es, SM_END_CANCELED);
    ASSERT_OK(sm_end_state_parse("FAILED", &es));
    ASSERT_EQ(es, SM_END_FAILED);
    ASSERT_OK(sm_end_state_parse("NODE_FAIL", &es));
    ASSERT_EQ(es, SM_END_FAILED_INFRA);
    ASSERT_EQ(sm_end_state_parse("exploded", &es), SM_EINVAL);
  }
  sm_buf_release(&b);
  sm_record_release(&r);
  sm_record_release(&g);
}

/* A Failure Handler category gives the failed end state; anything else
 * (no diagnosis, an unknown word, a model's free text) keeps the
 * caller's fallback, never a guessed cause. */
SM_TEST(end_state_of_category) {
  ASSERT_EQ(sm_end_state_of_category("infrastructure", SM_END_FAILED),
            SM_END_FAILED_INFRA);
  ASSERT_EQ(sm_end_state_of_category("framework", SM_END_FAILED),
            SM_END_FAILED_FRAMEWORK);
  ASSERT_EQ(sm_end_state_of_category("user", SM_END_FAILED),
            SM_END_FAILED_USER);
  ASSERT_EQ(sm_end_state_of_category(NULL, SM_END_FAILED), SM_END_FAILED);
  ASSERT_EQ(sm_end_state_of_category("Infrastructure", SM_END_FAILED),
            SM_END_FAILED);
  ASSERT_EQ(sm_end_state_of_category("hardware", SM_END_FAILED_INFRA),
            SM_END_FAILED_INFRA);
}
