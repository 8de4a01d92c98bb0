/* fuzz_serve_request.c - libFuzzer target: arbitrary bytes as the body of
 * every request of `schedmate serve` (advise, register, end, track,
 * diagnose, progress), run by the same code the workers run, on a service
 * with a small history that is never started (no sockets).  Every answer
 * must be a status with a JSON body; never a crash, a hang or unbounded
 * memory.  The body also goes through the depth scanner and, cut at its
 * first NUL, the job id check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedmate/sm.h"
#include "schedmate/sm_serve.h"
#include "serve/serve_int.h"

static sm_serve *sv;
static char dir[64];

static void cleanup(void) {
  char cmd[96];
  sm_serve_free(sv);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  (void)!system(cmd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  sm_serve_opts o = {0};
  char db[128], sock[128];
  const char *roots[1];
  sm_err err = {0};
  sm_store *st;
  sm_record r;

  (void)argc;
  (void)argv;
  snprintf(dir, sizeof(dir), "/tmp/sm-fuzz-serve.XXXXXX");
  if (mkdtemp(dir) == NULL)
    abort();
  snprintf(db, sizeof(db), "%s/h.db", dir);
  snprintf(sock, sizeof(sock), "%s/s.sock", dir);
  st = sm_store_open(db, SM_STORE_CREATE, 0, &err);
  if (st == NULL)
    abort();
  sm_record_init(&r);
  r.id = sm_strdup("h1");
  sm_meta_set_str(&r.meta, SM_META_MODEL_NAME, "bert-base", NULL);
  r.duration_s = 100;
  sm_record_fingerprint(&r);
  sm_store_put(st, &r, NULL);
  sm_record_release(&r);
  sm_store_close(st);
  roots[0] = dir;
  o.db = db;
  o.socket_path = sock;
  o.roots = roots;
  o.n_roots = 1;
  o.max_depth = 16;
  o.sync_interval_s = -1;
  sv = sm_serve_new(&o, &err);
  if (sv == NULL) {
    fprintf(stderr, "fuzz: %s\n", err.msg);
    abort();
  }
  atexit(cleanup);
  return 0;
}

static void one(int ep, const uint8_t *data, size_t size, char *job) {
  sv_req *r = calloc(1, sizeof(*r));
  sv_result res;

  pthread_mutex_init(&r->mu, NULL);
  r->sv = sv;
  r->ep = ep;
  r->ch = sv__ep_channel(ep);
  r->t0 = sm_now();
  r->deadline = r->t0 + 0.05;
  snprintf(r->job, sizeof(r->job), "%s", job);
  sm_buf_init(&r->body, sv->o.max_body + 1);
  sm_buf_add(&r->body, data, size);
  sv__result_init(&res);
  if (ep == EP_PROGRESS || sv__parse_body(sv, r, &res) == 0) {
    if (ep != EP_REGISTER || sv__register(sv, r, &res) == 0) {
      sv__work(sv, r, &res);
      if (ep == EP_REGISTER && res.status == 201)
        snprintf(job, SV_ID_MAX + 1, "%s", r->job);
    }
  }
  if (res.status < 200 || res.status > 599 || res.body.len == 0 ||
      (res.body.data[0] != '{'))
    abort();
  sv__result_release(&res);
  sm_buf_release(&r->body);
  cJSON_Delete(r->json);
  pthread_mutex_destroy(&r->mu);
  free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const int eps[] = {EP_ADVISE, EP_REGISTER, EP_PROGRESS,
                            EP_END,    EP_TRACK,    EP_DIAGNOSE};
  char job[SV_ID_MAX + 1] = "fz";
  char *s;

  if (size > 65536)
    return 0;
  for (size_t i = 0; i < SM_ARRAY_LEN(eps); i++)
    one(eps[i], data, size, job);
  (void)sv__json_depth((const char *)data, size, 16);
  s = sm_strndup((const char *)data, size);
  if (s) {
    (void)sv__id_ok(s);
    sm_free(s);
  }
  return 0;
}
