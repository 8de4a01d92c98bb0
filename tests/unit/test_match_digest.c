/* test_match_digest.c - matching on the configuration provenance
 * digests (sm_meta.h): an equal exact-configuration digest identifies a
 * job whose metadata is too thin; a differing residue under equal
 * metadata is the veto unexplained_difference; a metadata veto comes
 * first; a record without digests (an older history) keeps matching as
 * before.  The digests survive the SQLite, memory and (when a server is
 * given) Redis stores, and a schema-1 SQLite file is migrated.  All
 * metadata is written here. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_history.h"

/* Thin metadata: a launcher, GPUs, a family name; not enough identity. */
static void thin(sm_meta *m, const char *cd, const char *rd) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, "unet", "train.py:3");
  sm_meta_set_num(m, SM_META_GPUS, 8, "command");
  sm_meta_set_str(m, SM_META_PARALLELISM, "ddp", "command");
  ASSERT_OK(sm_meta_set_digests(m, cd, rd));
}

/* Rich metadata: a sized model, dataset, task and length. */
static void rich(sm_meta *m, const char *cd, const char *rd) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, "resnet50", "command");
  sm_meta_set_str(m, SM_META_DATASET, "imagenet-1k", "cfg.yaml:2");
  sm_meta_set_str(m, SM_META_TASK, "image_classification", "cfg.yaml:2");
  sm_meta_set_num(m, SM_META_ITERATIONS, 90, "cfg.yaml:3");
  sm_meta_set_str(m, SM_META_ITERATION_TYPE, "epochs", "cfg.yaml:3");
  sm_meta_set_num(m, SM_META_GPUS, 8, "command");
  ASSERT_OK(sm_meta_set_digests(m, cd, rd));
}

SM_TEST(match_digest_identity_rules) {
  sm_meta a, b;
  sm_identity_cmp c;

  /* Thin metadata alone: too little. */
  thin(&a, NULL, NULL);
  thin(&b, NULL, NULL);
  ASSERT(!sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, -1);
  sm_meta_release(&a);
  sm_meta_release(&b);
  /* The same exact configuration: enough. */
  thin(&a, "c1:00aa", "r1:0011");
  thin(&b, "c1:00aa", "r1:0011");
  ASSERT(sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT(c.shared & SM_IDENT_CONFIG);
  ASSERT(!sm_identity_enough(sm_identity_known(&a, NULL)));
  ASSERT(sm_identity_config_known(&a));
  sm_meta_release(&b);
  /* Metadata that names no model, dataset or task: the extractor did not
   * find the job's configuration, so its digest is no identity. */
  {
    sm_meta x, y;
    sm_meta_init(&x);
    sm_meta_init(&y);
    sm_meta_set_num(&x, SM_META_GPUS, 1, "command");
    sm_meta_set_num(&y, SM_META_GPUS, 1, "command");
    ASSERT_OK(sm_meta_set_digests(&x, "c1:00aa", "r1:0011"));
    ASSERT_OK(sm_meta_set_digests(&y, "c1:00aa", "r1:0011"));
    ASSERT(!sm_identity_compare(&x, NULL, &y, NULL, &c));
    ASSERT(!(c.shared & SM_IDENT_CONFIG));
    ASSERT(!sm_identity_config_known(&x));
    sm_meta_release(&x);
    sm_meta_release(&y);
  }
  /* Another configuration, same residue: thin again, no veto. */
  thin(&b, "c1:00bb", "r1:0011");
  ASSERT(!sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, -1);
  sm_meta_release(&b);
  /* Another residue: the unexplained veto. */
  thin(&b, "c1:00bb", "r1:0022");
  ASSERT(!sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, SM_IDENT_VETO_UNEXPLAINED);
  ASSERT_STREQ(sm_identity_veto_name(c.veto), "unexplained_difference");
  sm_meta_release(&a);
  sm_meta_release(&b);
  /* Rich metadata that agrees, residues that differ: kept apart. */
  rich(&a, "c1:01", "r1:01");
  rich(&b, "c1:02", "r1:02");
  ASSERT(!sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, SM_IDENT_VETO_UNEXPLAINED);
  /* A metadata difference is reported as itself, first. */
  sm_meta_set_str(&b, SM_META_MODEL_NAME, "resnet101", "cfg.yaml:1");
  ASSERT(!sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, SM_META_MODEL_NAME);
  sm_meta_release(&b);
  /* An older record without digests, or digests of another version:
   * unknown, neither agreement nor veto. */
  rich(&b, NULL, NULL);
  ASSERT(sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT(!(c.shared & SM_IDENT_CONFIG));
  sm_meta_release(&b);
  rich(&b, "c2:01", "r2:09");
  ASSERT(sm_identity_compare(&a, NULL, &b, NULL, &c));
  ASSERT_EQ(c.veto, -1);
  ASSERT(!(c.shared & SM_IDENT_CONFIG));
  sm_meta_release(&a);
  sm_meta_release(&b);
}

static void put(sm_store *s, const char *id, const sm_meta *m, double dur) {
  sm_record r;
  sm_err err = {0};

  sm_record_init(&r);
  r.id = sm_strdup(id);
  ASSERT_OK(sm_meta_copy(&r.meta, m));
  r.duration_s = dur;
  r.end_state = SM_END_COMPLETED;
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
}

static char *advice_json(const sm_advice *a) {
  sm_buf b;
  sm_jw w;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_advice_write_json(a, &w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  return b.data;
}

SM_TEST(match_digest_advise_basis_and_veto) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_advise_opts o = {.top_k = 5, .threshold = 0.95f};
  sm_advice a;
  sm_meta m, q;
  char *js;

  ASSERT(s != NULL);
  thin(&m, "c1:5a", "r1:5a");
  put(s, "first", &m, 3600);
  /* The same configuration resubmitted: matched on it. */
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &m, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_NEAR(a.est.duration_s, 3600, 1e-9);
  js = advice_json(&a);
  ASSERT(strstr(js, "\"identity_basis\":\"configuration\"") != NULL);
  ASSERT(strstr(js, "\"configuration\":true") != NULL);
  sm_free(js);
  sm_advice_release(&a);
  /* Another configuration with thin metadata: too little known. */
  thin(&q, "c1:6b", "r1:5a");
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_TOO_LITTLE_KNOWN);
  sm_advice_release(&a);
  sm_meta_release(&q);
  /* Rich equal metadata, another residue: no_match, named veto. */
  rich(&m, "c1:77", "r1:77");
  put(s, "rich", &m, 7200);
  sm_meta_release(&m);
  rich(&q, "c1:78", "r1:78");
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NO_MATCH);
  ASSERT_EQ(a.n_unexplained, 1);
  ASSERT_EQ(a.first_veto, SM_IDENT_VETO_UNEXPLAINED);
  ASSERT(strstr(a.detail, "unexplained_difference") != NULL);
  js = advice_json(&a);
  ASSERT(strstr(js, "\"first_veto\":\"unexplained_difference\"") != NULL);
  ASSERT(strstr(js, "\"rejected_unexplained_difference\":1") != NULL);
  sm_free(js);
  sm_advice_release(&a);
  sm_meta_release(&q);
  /* The same rich job without digests (an old extractor): matched on its
   * metadata. */
  rich(&q, NULL, NULL);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  js = advice_json(&a);
  ASSERT(strstr(js, "\"identity_basis\":\"metadata\"") != NULL);
  sm_free(js);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

/* Puts a record with digests and one without, reads both back. */
static void roundtrip(sm_store *s) {
  sm_err err = {0};
  sm_record r;
  sm_meta m;

  rich(&m, "c1:0123456789abcdef0123456789abcdef",
       "r1:fedcba9876543210fedcba9876543210");
  put(s, "with", &m, 10);
  sm_meta_release(&m);
  rich(&m, NULL, NULL);
  put(s, "without", &m, 20);
  sm_meta_release(&m);
  sm_record_init(&r);
  ASSERT_OK(sm_store_get(s, "with", &r, &err));
  ASSERT_STREQ(r.meta.config_digest, "c1:0123456789abcdef0123456789abcdef");
  ASSERT_STREQ(r.meta.residue_digest, "r1:fedcba9876543210fedcba9876543210");
  sm_record_release(&r);
  sm_record_init(&r);
  ASSERT_OK(sm_store_get(s, "without", &r, &err));
  ASSERT(r.meta.config_digest == NULL);
  ASSERT(r.meta.residue_digest == NULL);
  sm_record_release(&r);
}

SM_TEST(match_digest_store_roundtrips) {
  sm_err err = {0};
  char dir[] = "/tmp/sm-digest-XXXXXX", path[96];
  sm_store *s;
  const char *url = getenv("SM_REDIS_URL");

  s = sm_store_open("mem:", 0, 0, &err);
  ASSERT(s != NULL);
  roundtrip(s);
  sm_store_close(s);
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/h.db", dir);
  s = sm_store_open(path, SM_STORE_CREATE, 0, &err);
  ASSERT(s != NULL);
  roundtrip(s);
  sm_store_close(s);
  /* The digests are also columns. */
  {
    sqlite3 *db;
    sqlite3_stmt *st;
    ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT config_digest FROM jobs WHERE "
                                 "id = 'with'",
                                 -1, &st, NULL),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    ASSERT_STREQ((const char *)sqlite3_column_text(st, 0),
                 "c1:0123456789abcdef0123456789abcdef");
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  unlink(path);
  {
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
  if (url != NULL && url[0] != '\0') {
    char uri[256];
    snprintf(uri, sizeof(uri), "%s%sprefix=digest%d", url,
             strchr(url, '?') ? "&" : "?", (int)getpid());
    s = sm_store_open(uri, SM_STORE_CREATE, 0, &err);
    ASSERT(s != NULL);
    roundtrip(s);
    sm_store_close(s);
  }
}

/* A history written by the schema-1 build: its records (without
 * digests) keep being read and matched, and the file is migrated. */
SM_TEST(match_digest_sqlite_migration) {
  sm_err err = {0};
  char dir[] = "/tmp/sm-migr-XXXXXX", path[96];
  const char *rec =
      "{\"id\":\"old\",\"duration_s\":500,\"end_state\":\"completed\","
      "\"metadata\":{\"model_name\":\"resnet50\",\"dataset\":\"imagenet-1k\","
      "\"task\":\"image_classification\",\"iterations\":90,"
      "\"iteration_type\":\"epochs\",\"gpus\":8},\"evidence\":{}}";
  sqlite3 *db;
  sqlite3_stmt *st;
  sm_store *s;
  sm_record r;
  sm_meta q;
  sm_advice a;
  sm_advise_opts o = {.top_k = 5, .threshold = 0.95f};
  unsigned char blob[1 + SM_FP_DIMS * 4] = {0};
  char sql[1024];

  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/v1.db", dir);
  ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE jobs (seq INTEGER PRIMARY KEY "
                         "AUTOINCREMENT, id TEXT NOT NULL UNIQUE, record TEXT "
                         "NOT NULL, fp BLOB NOT NULL, end_state TEXT, "
                         "duration_s REAL, submit_time REAL, added_at REAL);"
                         "PRAGMA user_version = 1;",
                         NULL, NULL, NULL),
            SQLITE_OK);
  snprintf(sql, sizeof(sql),
           "INSERT INTO jobs(id, record, fp, end_state, duration_s) "
           "VALUES('old', ?1, ?2, 'completed', 500)");
  ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, rec, -1, SQLITE_STATIC);
  /* A fingerprint of another version byte: recomputed on load. */
  blob[0] = 0xee;
  sqlite3_bind_blob(st, 2, blob, sizeof(blob), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);

  s = sm_store_open(path, SM_STORE_CREATE, 0, &err);
  ASSERT(s != NULL);
  sm_record_init(&r);
  ASSERT_OK(sm_store_get(s, "old", &r, &err));
  ASSERT(r.meta.config_digest == NULL);
  sm_record_release(&r);
  /* A new job with digests still matches the old record on metadata. */
  rich(&q, "c1:aa", "r1:aa");
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_NEAR(a.est.duration_s, 500, 1e-9);
  sm_advice_release(&a);
  put(s, "new", &q, 600);
  sm_meta_release(&q);
  sm_store_close(s);
  ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  ASSERT_EQ(sqlite3_column_int(st, 0), SM_STORE_SCHEMA);
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT residue_digest FROM jobs WHERE id = "
                               "'new'",
                               -1, &st, NULL),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  ASSERT_STREQ((const char *)sqlite3_column_text(st, 0), "r1:aa");
  sqlite3_finalize(st);
  sqlite3_close(db);
  {
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}

/* Malformed provenance members in a record or a --meta file. */
SM_TEST(match_digest_bad_provenance_json) {
  sm_err err = {0};
  sm_meta m;
  static const char *const bad[] = {
      "{\"metadata\":{},\"configuration\":[1]}",
      "{\"metadata\":{},\"configuration\":{\"config_digest\":5}}",
      "{\"metadata\":{},\"configuration\":{\"residue_digest\":{}}}",
  };

  sm_meta_init(&m);
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    sm_err_clear(&err);
    ASSERT(sm_meta_from_json(&m, bad[i], strlen(bad[i]), &err) == SM_EPARSE);
    ASSERT(strstr(err.msg, "configuration") != NULL);
  }
  {
    char big[400];
    memset(big, 'a', sizeof(big));
    memcpy(big, "{\"configuration\":{\"config_digest\":\"", 35);
    memcpy(big + sizeof(big) - 4, "\"}}", 4);
    ASSERT(sm_meta_from_json(&m, big, strlen(big), &err) == SM_EPARSE);
  }
  {
    const char *ok = "{\"metadata\":{\"gpus\":2},\"configuration\":"
                     "{\"config_digest\":\"c1:ab\",\"residue_digest\":null}}";
    ASSERT_OK(sm_meta_from_json(&m, ok, strlen(ok), &err));
    ASSERT_STREQ(m.config_digest, "c1:ab");
    ASSERT(m.residue_digest == NULL);
  }
  sm_meta_release(&m);
}
