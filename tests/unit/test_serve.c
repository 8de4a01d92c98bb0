/* test_serve.c - the parts of `schedmate serve`: token buckets, the JSON
 * depth cap, job ids, the allowed roots (symbolic links, component
 * boundaries), the job table, the HTTP client against servers that
 * answer badly (chunked, cut short, too large, not HTTP, silent), the
 * shadow report's figures from crafted records and audit lines, and one
 * service in this process from start to stop. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_serve.h"
#include "serve/serve_int.h"

static void tmpdir(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/sm-test-serve.XXXXXX");
  if (mkdtemp(dir) == NULL)
    SM_FAIL_AT("mkdtemp failed");
}

static void rm_tree(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  (void)!system(cmd);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

/* ==== Limits ==== */

SM_TEST(serve_rate_bucket) {
  sv_rate r;
  double retry;

  ASSERT_OK(sv__rate_init(&r, 10, 3, 64));
  for (int i = 0; i < 3; i++)
    ASSERT(sv__rate_take(&r, "uid:1", 100.0, &retry));
  ASSERT(!sv__rate_take(&r, "uid:1", 100.0, &retry));
  ASSERT_NEAR(retry, 0.1, 1e-9);
  /* Another client has its own bucket. */
  ASSERT(sv__rate_take(&r, "uid:2", 100.0, &retry));
  /* One token comes back after 1 / rate. */
  ASSERT(sv__rate_take(&r, "uid:1", 100.15, &retry));
  ASSERT(!sv__rate_take(&r, "uid:1", 100.15, &retry));
  /* A clock that goes back does not add tokens. */
  ASSERT(!sv__rate_take(&r, "uid:1", 50.0, &retry));
  sv__rate_release(&r);
}

SM_TEST(serve_rate_table_is_bounded) {
  sv_rate r;
  double retry;
  char key[32];
  int allowed = 0;

  ASSERT_OK(sv__rate_init(&r, 1, 1, 64));
  /* Every client empties its bucket at once: the table fills up. */
  for (int i = 0; i < 200; i++) {
    snprintf(key, sizeof(key), "ip:10.0.0.%d", i);
    allowed += sv__rate_take(&r, key, 0.0, &retry);
  }
  ASSERT(allowed >= 40 && allowed <= 48);
  ASSERT(r.n <= r.cap * 3 / 4);
  /* Later the full buckets are dropped and new clients fit again. */
  for (int i = 200; i < 260; i++) {
    snprintf(key, sizeof(key), "ip:10.0.1.%d", i);
    ASSERT(sv__rate_take(&r, key, 10.0 + i, &retry));
  }
  ASSERT(r.n <= r.cap * 3 / 4);
  /* No limit at all. */
  sv__rate_release(&r);
  ASSERT_OK(sv__rate_init(&r, -1, 1, 64));
  for (int i = 0; i < 1000; i++)
    ASSERT(sv__rate_take(&r, "uid:0", 0, &retry));
  sv__rate_release(&r);
}

SM_TEST(serve_json_depth) {
  static const char deep[] = "[[[[[[[[[[[[[[[[[[[[";
  ASSERT_EQ(sv__json_depth("{}", 2, 16), 1);
  ASSERT_EQ(sv__json_depth("{\"a\":[1,{\"b\":2}]}", 16, 16), 3);
  /* Brackets inside strings, also after escaped quotes, do not count. */
  ASSERT_EQ(sv__json_depth("{\"a\":\"[[[\\\"[[[\"}", 16, 16), 1);
  ASSERT_EQ(sv__json_depth("\"{{{{\"", 6, 2), 0);
  /* Too deep: it stops just past the cap. */
  ASSERT_EQ(sv__json_depth(deep, strlen(deep), 4), 5);
  /* Unbalanced and binary input never crash. */
  ASSERT_EQ(sv__json_depth("]]]}}}", 6, 4), 0);
  ASSERT_EQ(sv__json_depth("\x00\xff[\x01", 4, 4), 1);
  ASSERT_EQ(sv__json_depth("\"\\", 2, 4), 0);
}

SM_TEST(serve_job_ids) {
  char longid[300];

  ASSERT(sv__id_ok("smtest:17"));
  ASSERT(sv__id_ok("k8s:default/train-17.3"));
  ASSERT(sv__id_ok("a@b+c=d_e"));
  ASSERT(!sv__id_ok(""));
  ASSERT(!sv__id_ok(NULL));
  ASSERT(!sv__id_ok("../etc"));
  ASSERT(!sv__id_ok("a/../b"));
  ASSERT(!sv__id_ok("/abs"));
  ASSERT(!sv__id_ok(".hidden"));
  ASSERT(!sv__id_ok("a b"));
  ASSERT(!sv__id_ok("a\nb"));
  ASSERT(!sv__id_ok("caf\xc3\xa9"));
  memset(longid, 'a', sizeof(longid) - 1);
  longid[sizeof(longid) - 1] = '\0';
  ASSERT(!sv__id_ok(longid));
  longid[SV_ID_MAX] = '\0';
  ASSERT(sv__id_ok(longid));
}

/* ==== Allowed roots ==== */

SM_TEST(serve_roots_and_pins) {
  char dir[64], root[128], out[128], p[256], msg[SM_ERR_MSG_SIZE];
  const char *roots[1];
  sv_roots r;
  sv_pin pin;
  sm_err err = {0};

  tmpdir(dir, sizeof(dir));
  snprintf(root, sizeof(root), "%s/data", dir);
  snprintf(out, sizeof(out), "%s/database", dir);
  ASSERT_OK(mkdir(root, 0755));
  ASSERT_OK(mkdir(out, 0755));
  snprintf(p, sizeof(p), "%s/log.txt", root);
  write_file(p, "step 1\n");
  snprintf(p, sizeof(p), "%s/secret.txt", out);
  write_file(p, "no\n");
  snprintf(p, sizeof(p), "%s/link", root);
  ASSERT_OK(symlink("../database/secret.txt", p));
  snprintf(p, sizeof(p), "%s/inner", root);
  ASSERT_OK(symlink("log.txt", p));
  roots[0] = root;
  ASSERT_OK(sv__roots_init(&r, roots, 1, &err));

  snprintf(p, sizeof(p), "%s/log.txt", root);
  ASSERT_OK(sv__pin(&r, p, SV_PIN_FILE, &pin, &err));
  ASSERT(pin.fd >= 0);
  ASSERT(strncmp(pin.proc, "/proc/self/fd/", 14) == 0);
  /* The pinned name opens the very file. */
  {
    char buf[16] = {0};
    int fd = open(pin.proc, O_RDONLY);
    ASSERT(fd >= 0);
    ASSERT(read(fd, buf, sizeof(buf) - 1) > 0);
    ASSERT_STREQ(buf, "step 1\n");
    close(fd);
  }
  snprintf(msg, sizeof(msg), "%s: binary data", pin.proc);
  sv__pin_unname(&pin, "/the/user/path", msg, sizeof(msg));
  ASSERT_STREQ(msg, "/the/user/path: binary data");
  sv__pin_close(&pin);
  /* A link inside the root to a file inside it is fine. */
  snprintf(p, sizeof(p), "%s/inner", root);
  ASSERT_OK(sv__pin(&r, p, SV_PIN_FILE, &pin, &err));
  sv__pin_close(&pin);
  /* A sibling that shares the prefix, a link out, "..": refused. */
  snprintf(p, sizeof(p), "%s/secret.txt", out);
  ASSERT_EQ(sv__pin(&r, p, SV_PIN_FILE, &pin, &err), SM_EACCES);
  ASSERT(strstr(err.msg, "outside the allowed roots") != NULL);
  sm_err_clear(&err);
  snprintf(p, sizeof(p), "%s/link", root);
  ASSERT_EQ(sv__pin(&r, p, SV_PIN_FILE, &pin, &err), SM_EACCES);
  sm_err_clear(&err);
  snprintf(p, sizeof(p), "%s/../database/secret.txt", root);
  ASSERT_EQ(sv__pin(&r, p, SV_PIN_FILE, &pin, &err), SM_EACCES);
  sm_err_clear(&err);
  ASSERT_EQ(sv__pin(&r, "data/log.txt", SV_PIN_FILE, &pin, &err), SM_EINVAL);
  sm_err_clear(&err);
  /* Kinds. */
  ASSERT_EQ(sv__pin(&r, root, SV_PIN_FILE, &pin, &err), SM_EISDIR);
  sm_err_clear(&err);
  ASSERT_OK(sv__pin(&r, root, SV_PIN_DIR, &pin, &err));
  sv__pin_close(&pin);
  snprintf(p, sizeof(p), "%s/missing", root);
  ASSERT_EQ(sv__pin(&r, p, SV_PIN_FILE, &pin, &err), SM_ENOENT);
  sm_err_clear(&err);
  ASSERT(sv__roots_contain(&r, root));
  ASSERT(!sv__roots_contain(&r, out));
  sv__roots_release(&r);
  /* No roots: nothing is accepted. */
  ASSERT_OK(sv__roots_init(&r, roots, 0, &err));
  snprintf(p, sizeof(p), "%s/log.txt", root);
  ASSERT_EQ(sv__pin(&r, p, SV_PIN_FILE, &pin, &err), SM_EACCES);
  sv__roots_release(&r);
  rm_tree(dir);
}

/* ==== Registered jobs ==== */

SM_TEST(serve_jobs_table) {
  sv_jobs j;
  sm_err err = {0};
  sv_job *a, *b;

  ASSERT_OK(sv__jobs_init(&j, 2, 1, NULL, &err));
  ASSERT_OK(sv__jobs_add(&j, sv__job_new("a")));
  ASSERT_OK(sv__jobs_add(&j, sv__job_new("b")));
  ASSERT_EQ(sv__jobs_add(&j, sv__job_new("c")), SM_ELIMIT);
  /* Re-registering replaces. */
  ASSERT_OK(sv__jobs_add(&j, sv__job_new("a")));
  ASSERT_EQ(sv__jobs_count(&j), 2);
  a = sv__jobs_get(&j, "a");
  ASSERT(a != NULL);
  ASSERT(sv__jobs_get(&j, "c") == NULL);
  /* A removed job lives on while someone holds it. */
  sv__jobs_remove(&j, a);
  ASSERT_EQ(sv__jobs_count(&j), 1);
  ASSERT(sv__jobs_ended(&j, "a"));
  ASSERT(!sv__jobs_ended(&j, "b"));
  ASSERT_STREQ(a->id, "a");
  sv__jobs_put(&j, a);
  /* The followed-log cap: touching a second job closes the first's. */
  b = sv__jobs_get(&j, "b");
  sv__jobs_touch(&j, b);
  ASSERT_EQ(sv__jobs_followed(&j), 1);
  ASSERT_OK(sv__jobs_add(&j, sv__job_new("d")));
  a = sv__jobs_get(&j, "d");
  sv__jobs_touch(&j, a);
  ASSERT_EQ(sv__jobs_followed(&j), 1);
  ASSERT(!b->in_lru);
  ASSERT(a->in_lru);
  sv__jobs_put(&j, a);
  sv__jobs_put(&j, b);
  /* Re-registering an ended id forgets that it ended. */
  a = sv__jobs_get(&j, "d");
  sv__jobs_remove(&j, a);
  sv__jobs_put(&j, a);
  ASSERT_EQ(sv__jobs_followed(&j), 0);
  ASSERT_OK(sv__jobs_add(&j, sv__job_new("a")));
  ASSERT(!sv__jobs_ended(&j, "a"));
  ASSERT(sv__jobs_ended(&j, "d"));
  sv__jobs_release(&j);
}

/* ==== HTTP client ==== */

typedef struct fake {
  int lfd;            /* listening socket */
  const char *answer; /* what to send */
  size_t len;         /* its length */
  int silent;         /* read and never answer */
} fake;

static void *fake_server(void *arg) {
  fake *f = arg;
  int c = accept(f->lfd, NULL, NULL);
  char buf[4096];

  if (c < 0)
    return NULL;
  (void)!read(c, buf, sizeof(buf));
  if (f->silent) {
    usleep(700 * 1000);
  } else {
    size_t off = 0;
    while (off < f->len) {
      ssize_t k = write(c, f->answer + off, f->len - off);
      if (k <= 0)
        break;
      off += (size_t)k;
    }
  }
  close(c);
  return NULL;
}

/* Sends one request to a fake server that answers with text. */
static int ask_fake(const char *dir, const char *text, size_t len, int silent,
                    sm_http_resp *r, sm_err *err) {
  char path[128], server[160];
  fake f = {0};
  pthread_t t;
  sm_http_conn *c;
  int rc;

  snprintf(path, sizeof(path), "%s/fake.sock", dir);
  unlink(path);
  f.lfd = sm_unix_listen(path, 0600, 4, NULL);
  ASSERT(f.lfd >= 0);
  fcntl(f.lfd, F_SETFL, fcntl(f.lfd, F_GETFL) & ~O_NONBLOCK);
  f.answer = text;
  f.len = len;
  f.silent = silent;
  pthread_create(&t, NULL, fake_server, &f);
  snprintf(server, sizeof(server), "unix:%s", path);
  c = sm_http_conn_new(server, "tok", 500, err);
  ASSERT(c != NULL);
  rc = sm_http_request(c, "POST", "/v1/advise", "{}", 2, r, err);
  sm_http_conn_free(c);
  pthread_join(t, NULL);
  close(f.lfd);
  return rc;
}

SM_TEST(serve_http_client_answers) {
  char dir[64];
  sm_http_resp r;
  sm_err err = {0};
  static const char chunked[] =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
      "Content-Type: application/json\r\n\r\n"
      "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n";
  static const char closing[] = "HTTP/1.0 503 Busy\r\nRetry-After: 7\r\n\r\n"
                                "{\"error\":\"queue_full\"}";
  static const char cut[] = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
                            "{\"short\":";
  static const char huge[] = "HTTP/1.1 200 OK\r\nContent-Length: "
                             "99999999999\r\n\r\n{}";
  static const char nothttp[] = "SSH-2.0-OpenSSH_9.2\r\n\r\n";
  char *head = sm_malloc(70000);

  tmpdir(dir, sizeof(dir));
  ASSERT_OK(ask_fake(dir, chunked, strlen(chunked), 0, &r, &err));
  ASSERT_EQ(r.status, 200);
  ASSERT_STREQ(sm_buf_str(&r.body), "{\"a\":1}");
  ASSERT_STREQ(r.ctype, "application/json");
  sm_http_resp_release(&r);
  ASSERT_OK(ask_fake(dir, closing, strlen(closing), 0, &r, &err));
  ASSERT_EQ(r.status, 503);
  ASSERT_NEAR(r.retry_after, 7, 1e-9);
  ASSERT_STREQ(sm_buf_str(&r.body), "{\"error\":\"queue_full\"}");
  sm_http_resp_release(&r);
  ASSERT_EQ(ask_fake(dir, cut, strlen(cut), 0, &r, &err), SM_ECONN);
  sm_http_resp_release(&r);
  sm_err_clear(&err);
  ASSERT_EQ(ask_fake(dir, huge, strlen(huge), 0, &r, &err), SM_ETOOBIG);
  sm_http_resp_release(&r);
  sm_err_clear(&err);
  ASSERT_EQ(ask_fake(dir, nothttp, strlen(nothttp), 0, &r, &err), SM_EPARSE);
  sm_http_resp_release(&r);
  sm_err_clear(&err);
  /* A head that never ends. */
  memcpy(head, "HTTP/1.1 200 OK\r\n", 17);
  memset(head + 17, 'x', 70000 - 17);
  ASSERT_EQ(ask_fake(dir, head, 70000, 0, &r, &err), SM_EPARSE);
  sm_http_resp_release(&r);
  sm_err_clear(&err);
  /* A server that never answers: the deadline. */
  ASSERT_EQ(ask_fake(dir, "", 0, 1, &r, &err), SM_ETIMEOUT);
  sm_http_resp_release(&r);
  sm_err_clear(&err);
  /* Addresses. */
  ASSERT(sm_http_conn_new("ftp//x", NULL, 0, &err) == NULL);
  sm_err_clear(&err);
  ASSERT(sm_http_conn_new("http://host", NULL, 0, &err) == NULL);
  sm_err_clear(&err);
  ASSERT(sm_http_conn_new("unix:", NULL, 0, &err) == NULL);
  sm_free(head);
  rm_tree(dir);
}

/* ==== Shadow report ==== */

static void put(sm_store *s, const char *id, double dur, sm_end_state es,
                const char *outcome) {
  sm_record r;
  sm_record_init(&r);
  r.id = sm_strdup(id);
  /* Enough identity for a match: a sized model, its task and dataset. */
  sm_meta_set_str(&r.meta, SM_META_MODEL_NAME, "bert-base", NULL);
  sm_meta_set_str(&r.meta, SM_META_TASK, "lm_pretraining", NULL);
  sm_meta_set_str(&r.meta, SM_META_DATASET, "wikipedia", NULL);
  r.duration_s = dur;
  r.end_state = es;
  r.outcome = outcome ? sm_strdup(outcome) : NULL;
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_store_put(s, &r, NULL));
  sm_record_release(&r);
}

SM_TEST(serve_shadow_figures) {
  char dir[64], audit[128];
  sm_store *s = sm_store_open("mem:", 0, 0, NULL);
  sm_shadow_opts o = {0};
  const char *audits[1];
  sm_buf js, html;
  sm_err err = {0};
  FILE *f;

  tmpdir(dir, sizeof(dir));
  snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
  f = fopen(audit, "w");
  ASSERT(f != NULL);
  fputs("{\"channel\":\"submit\",\"decision\":\"fallback\",\"job\":7,"
        "\"advice\":{\"fallback_reason\":\"below_threshold\"}}\n",
        f);
  fputs("{\"service\":\"serve\",\"channel\":\"submit\",\"decision\":"
        "\"estimate\",\"latency_ms\":2.5}\n",
        f);
  fputs("{\"channel\":\"exit\",\"latency_ms\":\"slow\"}\n", f);
  fputs("\x01\x02\xff binary\n[1,2\n\n", f);
  fclose(f);
  ASSERT(s != NULL);
  /* Imported history: no outcome, not counted. */
  put(s, "old", 100, SM_END_COMPLETED, NULL);
  /* serve: an estimate of 120 for a run of 100 (+20 %). */
  put(s, "a", 100, SM_END_COMPLETED,
      "{\"gpus\":4,\"advice\":{\"estimate_s\":120,\"fallback_reason\":null}}");
  /* The Slurm agent: a fallback whose reason is in its audit. */
  put(s, "c:7", 50, SM_END_FAILED_INFRA,
      "{\"scheduler\":\"slurm\",\"job_id\":7,\"estimate_s\":null,"
      "\"diagnosis\":{\"status\":\"failure\",\"category\":\"infrastructure\","
      "\"retryable\":true}}");
  put(s, "c:7.1", 90, SM_END_COMPLETED,
      "{\"scheduler\":\"slurm\",\"job_id\":7,\"estimate_s\":80}");
  /* Broken or odd outcomes are skipped, not fatal. */
  put(s, "bad", 10, SM_END_COMPLETED, "{not json");
  put(s, "arr", 10, SM_END_COMPLETED, "[1,2,3]");
  audits[0] = audit;
  o.audit_paths = audits;
  o.n_audit = 1;
  o.profile_s = 3600;
  sm_buf_init(&js, 0);
  sm_buf_init(&html, 0);
  ASSERT_OK(sm_shadow_report(s, &o, &js, &html, &err));
  {
    cJSON *j = cJSON_Parse(sm_buf_str(&js)), *e, *fb, *dg, *pr;
    ASSERT(j != NULL);
    ASSERT_EQ(cJSON_GetObjectItem(j, "records")->valuedouble, 6);
    ASSERT_EQ(cJSON_GetObjectItem(j, "with_outcome")->valuedouble, 3);
    ASSERT_EQ(cJSON_GetObjectItem(j, "advised")->valuedouble, 3);
    e = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "estimates"),
                            "by_end_state"),
        "completed");
    ASSERT_EQ(cJSON_GetObjectItem(e, "n")->valuedouble, 2);
    /* Errors +0.2 and -0.111: the median of the two. */
    ASSERT_NEAR(cJSON_GetObjectItem(e, "median_rel_error")->valuedouble,
                (0.2 - 1.0 / 9) / 2, 1e-9);
    fb = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "fallbacks"), "ended_jobs");
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(fb, "by_reason"),
                                  "below_threshold")
                  ->valuedouble,
              1);
    dg = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "diagnoses"),
                             "infrastructure");
    ASSERT_EQ(cJSON_GetObjectItem(dg, "restarted_completed")->valuedouble, 1);
    pr = cJSON_GetObjectItem(j, "profiling");
    /* a: 4 GPUs; c:7.1: GPUs unknown, counted as one; one hour each. */
    ASSERT_NEAR(cJSON_GetObjectItem(pr, "gpu_hours_saved")->valuedouble, 5,
                1e-9);
    ASSERT_EQ(cJSON_GetObjectItem(pr, "gpus_unknown")->valuedouble, 1);
    ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "audit"), "malformed")
                  ->valuedouble,
              2);
    cJSON_Delete(j);
  }
  ASSERT(strstr(sm_buf_str(&html), "<svg") != NULL);
  ASSERT(strstr(sm_buf_str(&html), "</html>") != NULL);
  sm_buf_release(&js);
  sm_buf_release(&html);
  /* A missing audit log is an error naming it. */
  audits[0] = "/nonexistent/audit.jsonl";
  sm_buf_init(&js, 0);
  ASSERT(sm_shadow_report(s, &o, &js, NULL, &err) != 0);
  ASSERT(strstr(err.msg, "/nonexistent/audit.jsonl") != NULL);
  sm_buf_release(&js);
  sm_store_close(s);
  rm_tree(dir);
}

/* ==== A service in this process ==== */

static int ask(sm_http_conn *c, const char *method, const char *path,
               const char *body, sm_http_resp *r) {
  sm_err err = {0};
  int rc =
      sm_http_request(c, method, path, body, body ? strlen(body) : 0, r, &err);
  if (rc != 0)
    SM_FAIL_AT("request %s %s: %s", method, path, err.msg);
  return r->status;
}

SM_TEST(serve_in_process) {
  char dir[64], db[128], sock[128], server[160], log[128], body[512];
  const char *roots[1];
  sm_serve_opts o = {0};
  sm_serve *sv;
  sm_store *st;
  sm_http_conn *c;
  sm_http_resp r;
  sm_err err = {0};

  tmpdir(dir, sizeof(dir));
  snprintf(db, sizeof(db), "%s/h.db", dir);
  snprintf(sock, sizeof(sock), "%s/s.sock", dir);
  snprintf(log, sizeof(log), "%s/run.log", dir);
  write_file(log, "iter 10/500 | loss 2.5012 | lr 0.0001 | 121.3 ms/iter\n"
                  "iter 20/500 | loss 2.4017 | lr 0.0001 | 120.9 ms/iter\n"
                  "iter 30/500 | loss 2.3203 | lr 0.0001 | 121.0 ms/iter\n");
  st = sm_store_open(db, SM_STORE_CREATE, 0, &err);
  ASSERT(st != NULL);
  put(st, "h1", 1000, SM_END_COMPLETED, NULL);
  put(st, "h2", 1200, SM_END_COMPLETED, NULL);
  sm_store_close(st);
  roots[0] = dir;
  o.db = db;
  o.socket_path = sock;
  o.roots = roots;
  o.n_roots = 1;
  o.rate = -1;
  sv = sm_serve_new(&o, &err);
  if (sv == NULL)
    SM_FAIL_AT("serve: %s", err.msg);
  ASSERT_EQ(sm_serve_history_size(sv), 2);
  ASSERT_OK(sm_serve_start(sv, &err));
  snprintf(server, sizeof(server), "unix:%s", sock);
  ASSERT_STREQ(sm_serve_address(sv, 0), server);
  ASSERT(sm_serve_address(sv, 1) == NULL);
  c = sm_http_conn_new(server, NULL, 10000, &err);
  ASSERT(c != NULL);
  ASSERT_EQ(ask(c, "GET", "/healthz", NULL, &r), 200);
  sm_http_resp_release(&r);
  ASSERT_EQ(ask(c, "POST", "/v1/advise",
                "{\"metadata\":{\"model_name\":\"bert-base\",\"task\":"
                "\"lm_pretraining\",\"dataset\":\"wikipedia\"}}",
                &r),
            200);
  ASSERT(strstr(sm_buf_str(&r.body), "\"duration_s\":1100") != NULL);
  sm_http_resp_release(&r);
  snprintf(body, sizeof(body),
           "{\"id\":\"j1\",\"metadata\":{\"model_name\":\"bert-base\","
           "\"task\":\"lm_pretraining\",\"dataset\":\"wikipedia\"},"
           "\"log\":\"%s\"}",
           log);
  ASSERT_EQ(ask(c, "POST", "/v1/jobs", body, &r), 201);
  sm_http_resp_release(&r);
  ASSERT_EQ(ask(c, "GET", "/v1/jobs/j1/progress", NULL, &r), 200);
  ASSERT(strstr(sm_buf_str(&r.body), "\"step\":30") != NULL);
  sm_http_resp_release(&r);
  ASSERT_EQ(ask(c, "POST", "/v1/jobs/j1/end",
                "{\"end_state\":\"completed\",\"duration_s\":1400}", &r),
            200);
  sm_http_resp_release(&r);
  ASSERT_EQ(sm_serve_history_size(sv), 3);
  ASSERT_EQ(ask(c, "POST", "/v1/advise",
                "{\"metadata\":{\"model_name\":\"bert-base\",\"task\":"
                "\"lm_pretraining\",\"dataset\":\"wikipedia\"}}",
                &r),
            200);
  ASSERT(strstr(sm_buf_str(&r.body), "\"duration_s\":1200") != NULL);
  sm_http_resp_release(&r);
  ASSERT_EQ(ask(c, "POST", "/v1/advise", "{\"metadata\":", &r), 400);
  sm_http_resp_release(&r);
  sm_http_conn_free(c);
  sm_serve_stop(sv);
  sm_serve_stop(sv); /* idempotent */
  sm_serve_free(sv);
  ASSERT(access(sock, F_OK) != 0);
  /* The write-back is in the file. */
  st = sm_store_open(db, 0, 0, &err);
  ASSERT(st != NULL);
  ASSERT_EQ(sm_store_count(st, &err), 3);
  sm_store_close(st);
  /* Unusable options. */
  memset(&o, 0, sizeof(o));
  ASSERT(sm_serve_new(&o, &err) == NULL);
  o.db = db;
  o.listen = "127.0.0.1:0";
  o.token = "short";
  ASSERT(sm_serve_new(&o, &err) == NULL);
  sm_serve_free(NULL);
  rm_tree(dir);
}
