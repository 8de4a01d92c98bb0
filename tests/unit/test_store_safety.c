/* test_store_safety.c - the history store against absurd values (refused
 * at the API boundary, in import and when read back), damaged rows (skipped
 * and counted, the store keeps answering), and a long batch of writes
 * beside another writer (committed in steps, nobody waits for the whole). */
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "harness.h"
#include "schedmate/sm.h"

static void job(sm_record *r, const char *id, const char *model, double dur) {
  sm_record_init(r);
  r->id = sm_strdup(id);
  sm_meta_set_str(&r->meta, SM_META_MODEL_NAME, model, NULL);
  sm_meta_set_str(&r->meta, SM_META_DATASET, "imagenet-1k", NULL);
  sm_meta_set_num(&r->meta, SM_META_GPUS, 8, NULL);
  sm_meta_set_num(&r->meta, SM_META_ITERATIONS, 90, NULL);
  r->duration_s = dur;
  r->sm_util = 70;
  r->end_state = SM_END_COMPLETED;
  r->submit_time = 1.7e9;
  sm_record_fingerprint(r);
}

static void tmpdir(char *dir, size_t cap, char *db, size_t dbcap) {
  snprintf(dir, cap, "/tmp/sm_store_safety.XXXXXX");
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(db, dbcap, "%s/h.db", dir);
}

static void rmdir_all(const char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ASSERT_OK(system(cmd));
}

/* ==== Absurd values ==== */

typedef struct bad_case {
  const char *what; /* the field the message must name */
  void (*apply)(sm_record *r);
} bad_case;

static void dur_huge(sm_record *r) {
  r->duration_s = 1.7e308;
}
static void dur_inf(sm_record *r) {
  r->duration_s = INFINITY;
}
static void dur_neg(sm_record *r) {
  r->duration_s = -1;
}
static void util_high(sm_record *r) {
  r->sm_util = 100.5;
}
static void util_nan_ok(sm_record *r) {
  r->sm_util = NAN;
}
static void tp_neg(sm_record *r) {
  r->throughput = -3;
}
static void tp_huge(sm_record *r) {
  r->throughput = 1e300;
}
static void submit_huge(sm_record *r) {
  r->submit_time = 1e300;
}
static void submit_neg(sm_record *r) {
  r->submit_time = -5;
}
static void added_inf(sm_record *r) {
  r->added_at = -INFINITY;
}
static void perf_tp(sm_record *r) {
  sm_record_add_perf(r, "a100", 8, 256, 1e300);
}
static void perf_gpus(sm_record *r) {
  sm_record_add_perf(r, "a100", 0, 256, 5);
}
static void perf_batch(sm_record *r) {
  sm_record_add_perf(r, "a100", 8, -2, 5);
}
static void meta_lr(sm_record *r) {
  r->meta.f[SM_META_LR].known = 1;
  r->meta.f[SM_META_LR].num = 1e300;
}
static void meta_iter(sm_record *r) {
  r->meta.f[SM_META_ITERATIONS].num = -90;
}
static void meta_batch_nan(sm_record *r) {
  r->meta.f[SM_META_GLOBAL_BATCH_SIZE].known = 1;
  r->meta.f[SM_META_GLOBAL_BATCH_SIZE].num = NAN;
}
static void end_state(sm_record *r) {
  r->end_state = (sm_end_state)42;
}

static const bad_case bad_cases[] = {
    {"duration_s", dur_huge},
    {"duration_s", dur_inf},
    {"duration_s", dur_neg},
    {"sm_util", util_high},
    {"throughput", tp_neg},
    {"throughput", tp_huge},
    {"submit_time", submit_huge},
    {"submit_time", submit_neg},
    {"added_at", added_inf},
    {"perf", perf_tp},
    {"perf", perf_gpus},
    {"perf", perf_batch},
    {"lr", meta_lr},
    {"iterations", meta_iter},
    {"global_batch_size", meta_batch_nan},
    {"end_state", end_state},
};

SM_TEST(record_check_refuses_absurd_values) {
  sm_record r;
  sm_err err = {0};

  job(&r, "ok-1", "resnet50", 3600);
  ASSERT_OK(sm_record_check(&r, &err));
  util_nan_ok(&r); /* unknown is not absurd */
  ASSERT_OK(sm_record_check(&r, &err));
  sm_record_release(&r);
  for (size_t i = 0; i < SM_ARRAY_LEN(bad_cases); i++) {
    job(&r, "bad-1", "resnet50", 3600);
    bad_cases[i].apply(&r);
    sm_err_clear(&err);
    if (sm_record_check(&r, &err) != SM_ERANGE)
      SM_FAIL_AT("case %zu (%s) accepted", i, bad_cases[i].what);
    if (strstr(err.msg, bad_cases[i].what) == NULL ||
        strstr(err.msg, "bad-1") == NULL)
      SM_FAIL_AT("case %zu: message '%s' does not name %s", i, err.msg,
                 bad_cases[i].what);
    sm_record_release(&r);
  }
}

SM_TEST(store_put_refuses_absurd_values) {
  const char *uris[2] = {"mem:", NULL};
  char dir[64], db[96];
  tmpdir(dir, sizeof(dir), db, sizeof(db));
  uris[1] = db;
  for (int u = 0; u < 2; u++) {
    sm_err err = {0};
    sm_store *s = sm_store_open(uris[u], SM_STORE_CREATE, 0, &err);
    ASSERT(s != NULL);
    for (size_t i = 0; i < SM_ARRAY_LEN(bad_cases); i++) {
      sm_record r;
      job(&r, "bad-1", "resnet50", 3600);
      bad_cases[i].apply(&r);
      sm_err_clear(&err);
      ASSERT_EQ(sm_store_put(s, &r, &err), SM_ERANGE);
      sm_record_release(&r);
    }
    ASSERT_EQ(sm_store_count(s, &err), 0);
    sm_store_close(s);
  }
  rmdir_all(dir);
}

SM_TEST(record_from_json_refuses_absurd_values) {
  static const char *const bad[] = {
      "{\"id\":\"a\",\"duration_s\":1.7e308}",
      "{\"id\":\"a\",\"duration_s\":-4}",
      "{\"id\":\"a\",\"duration_s\":10,\"sm_util\":250}",
      "{\"id\":\"a\",\"duration_s\":10,\"throughput\":-1}",
      "{\"id\":\"a\",\"duration_s\":10,\"submit_time\":1e300}",
      "{\"id\":\"a\",\"duration_s\":10,\"perf\":[{\"gpu_type\":\"a100\","
      "\"gpus\":1e12,\"batch\":1,\"throughput\":3}]}",
      "{\"id\":\"a\",\"duration_s\":10,\"perf\":[{\"gpu_type\":\"a100\","
      "\"gpus\":2.5,\"batch\":1,\"throughput\":3}]}",
      "{\"id\":\"a\",\"duration_s\":10,\"metadata\":{\"lr\":1e300}}",
      "{\"id\":\"a\",\"duration_s\":10,\"metadata\":{\"iterations\":-7}}",
  };
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    sm_record r;
    sm_err err = {0};
    sm_record_init(&r);
    if (sm_record_from_json(&r, bad[i], strlen(bad[i]), &err) == 0)
      SM_FAIL_AT("accepted %s", bad[i]);
    sm_record_release(&r);
  }
}

/* ==== Damaged rows are skipped, counted and named ==== */

static int count_cb(const sm_record *r, void *arg) {
  (void)r;
  (*(long *)arg)++;
  return 0;
}

static void exec_sql(const char *db, const char *sql) {
  sqlite3 *h;
  char *msg = NULL;
  ASSERT_EQ(sqlite3_open(db, &h), SQLITE_OK);
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
    SM_FAIL_AT("%s: %s", sql, msg ? msg : "?");
  sqlite3_close(h);
}

SM_TEST(sqlite_bad_rows_are_skipped_and_named) {
  char dir[64], db[96];
  sm_err err = {0};
  sm_store *s;
  sm_meta q;
  sm_advice a;
  sm_advise_opts o = {0};
  const char *first = NULL;
  long n = 0;

  tmpdir(dir, sizeof(dir), db, sizeof(db));
  s = sm_store_open(db, SM_STORE_CREATE, 0, &err);
  ASSERT(s != NULL);
  ASSERT_OK(sm_store_begin(s, &err));
  for (int i = 0; i < 10000; i++) {
    sm_record r;
    char id[32];
    snprintf(id, sizeof(id), "job-%d", i);
    job(&r, id, i % 2 ? "resnet50" : "bert-base", 1000 + i % 7);
    ASSERT_OK(sm_store_put(s, &r, &err));
    sm_record_release(&r);
  }
  ASSERT_OK(sm_store_end(s, &err));
  sm_store_close(s);
  /* Five damaged rows: not JSON, not an object, an absurd duration, an
   * absurd value with a damaged fingerprint, a record without id. */
  exec_sql(db, "UPDATE jobs SET record = 'garbage{' WHERE id = 'job-16';"
               "UPDATE jobs SET record = '[1,2]' WHERE id = 'job-2000';"
               "UPDATE jobs SET record = json_set(record, '$.duration_s',"
               " 1.7e308) WHERE id = 'job-4000';"
               "UPDATE jobs SET fp = x'00', record = json_set(record,"
               " '$.sm_util', 500) WHERE id = 'job-6000';"
               "UPDATE jobs SET record = json_remove(record, '$.id')"
               " WHERE id = 'job-8000';");
  s = sm_store_open(db, 0, 0, &err);
  ASSERT(s != NULL);
  ASSERT_OK(sm_store_each(s, count_cb, &n, &err));
  ASSERT_EQ(n, 9995);
  ASSERT_EQ(sm_store_skipped(s, &first), 5);
  ASSERT(first != NULL);
  /* The first bad row is named by file, row and id. */
  if (strstr(first, db) == NULL || strstr(first, "row 17") == NULL ||
      strstr(first, "job-16") == NULL)
    SM_FAIL_AT("first bad record: '%s'", first);
  /* Advice still works and never returns a damaged row, though all five
   * have the fingerprint of the bert-base jobs asked for. */
  sm_meta_init(&q);
  sm_meta_set_str(&q, SM_META_MODEL_NAME, "bert-base", NULL);
  sm_meta_set_str(&q, SM_META_DATASET, "imagenet-1k", NULL);
  sm_meta_set_num(&q, SM_META_GPUS, 8, NULL);
  sm_meta_set_num(&q, SM_META_ITERATIONS, 90, NULL);
  sm_advice_init(&a);
  o.top_k = 5000;
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  if (a.fallback != SM_FALLBACK_NONE)
    SM_FAIL_AT("fallback %s: %s", sm_fallback_name(a.fallback), a.detail);
  ASSERT_EQ(a.n_matches, 5000 - 5);
  for (int i = 0; i < a.n_matches; i++)
    ASSERT(strcmp(a.matches[i].id, "job-16") != 0 &&
           strcmp(a.matches[i].id, "job-2000") != 0 &&
           strcmp(a.matches[i].id, "job-4000") != 0 &&
           strcmp(a.matches[i].id, "job-6000") != 0 &&
           strcmp(a.matches[i].id, "job-8000") != 0);
  ASSERT(a.est.valid && isfinite(a.est.duration_s) && a.est.duration_s < 1100);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
  rmdir_all(dir);
}

/* ==== Long batches commit in steps ==== */

SM_TEST(sqlite_batch_commits_in_steps_beside_another_writer) {
  char dir[64], db[96];
  sm_err err = {0};
  sm_store *s;
  int st;
  pid_t w;

  tmpdir(dir, sizeof(dir), db, sizeof(db));
  s = sm_store_open(db, SM_STORE_CREATE, 0, &err);
  ASSERT(s != NULL);
  /* Another process, while the batch below runs (3 s at least), sees the
   * steps already committed and adds a record of its own, with its lock
   * wait bounded to 1 s: one transaction for the whole batch would keep
   * it out. */
  w = fork();
  if (w == 0) {
    sm_err e2 = {0};
    sm_store *s2;
    sm_record r;
    long long n;
    usleep(800 * 1000);
    s2 = sm_store_open(db, 0, 1000, &e2);
    if (s2 == NULL) {
      fprintf(stderr, "open: %s\n", e2.msg);
      _exit(3);
    }
    n = sm_store_count(s2, &e2);
    if (n < 100) {
      fprintf(stderr, "only %lld committed records seen\n", n);
      _exit(4);
    }
    job(&r, "other-writer", "bert-base", 77);
    if (sm_store_put(s2, &r, &e2) != 0) {
      fprintf(stderr, "put: %s\n", e2.msg);
      _exit(5);
    }
    sm_record_release(&r);
    sm_store_close(s2);
    _exit(0);
  }
  ASSERT_OK(sm_store_begin(s, &err));
  for (int i = 0; i < 2500; i++) {
    sm_record r;
    char id[32];
    snprintf(id, sizeof(id), "batch-%d", i);
    job(&r, id, "resnet50", 100 + i);
    ASSERT_OK(sm_store_put(s, &r, &err));
    sm_record_release(&r);
    usleep(1200);
  }
  ASSERT(sm_store_batch_done(s) >= 1000);
  ASSERT_OK(sm_store_end(s, &err));
  ASSERT_EQ(sm_store_batch_done(s), 2500);
  ASSERT(waitpid(w, &st, 0) == w);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    SM_FAIL_AT("the other writer failed (status %d)", st);
  ASSERT_EQ(sm_store_count(s, &err), 2501);
  sm_store_close(s);
  rmdir_all(dir);
}
