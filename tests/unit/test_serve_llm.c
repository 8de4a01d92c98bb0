/* test_serve_llm.c - what the service relies on to keep the LLM stage
 * inside a request: the client's per-thread deadline cap ends a request
 * to a server that never answers at the cap (not at the client's own
 * timeout), only on the thread that set it, and the cut of a request's
 * budget (sv__llm_cutoff) leaves a tenth, at least 20 ms, for the
 * deterministic answer. */
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_llm.h"
#include "serve/serve_int.h"

/* A server that accepts and never answers. */
typedef struct mute {
  int fd, port, stop;
  pthread_t thr;
} mute;

static void *mute_run(void *arg) {
  mute *m = arg;
  int conns[16], n = 0;
  while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
    int c = accept(m->fd, NULL, NULL);
    if (c >= 0 && n < 16)
      conns[n++] = c;
    else if (c >= 0)
      close(c);
  }
  for (int i = 0; i < n; i++)
    close(conns[i]);
  return NULL;
}

static void mute_start(mute *m) {
  struct sockaddr_in a = {0};
  socklen_t l = sizeof(a);
  struct timeval tv = {0, 100000};
  m->fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT(m->fd >= 0);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT(bind(m->fd, (struct sockaddr *)&a, sizeof(a)) == 0);
  ASSERT(listen(m->fd, 16) == 0);
  ASSERT(getsockname(m->fd, (struct sockaddr *)&a, &l) == 0);
  setsockopt(m->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  m->port = ntohs(a.sin_port);
  m->stop = 0;
  ASSERT(pthread_create(&m->thr, NULL, mute_run, m) == 0);
}

static void mute_stop(mute *m) {
  __atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
  pthread_join(m->thr, NULL);
  close(m->fd);
}

typedef struct ask {
  sm_llm *l;
  double cap;     /* thread cap, 0 none */
  double took;    /* seconds */
  int rc, reason; /* result */
} ask;

static void *ask_run(void *arg) {
  ask *k = arg;
  sm_llm_msg m = {"user", "hello"};
  sm_llm_reply rep;
  double t0 = sm_now();
  if (k->cap > 0)
    sm_llm_thread_deadline(t0 + k->cap);
  k->rc = sm_llm_chat(k->l, SM_LLM_ADVISOR, &m, 1, t0 + 1.5, &rep, &k->reason,
                      NULL);
  k->took = sm_now() - t0;
  sm_llm_reply_release(&rep);
  sm_llm_thread_deadline(0);
  return NULL;
}

SM_TEST(serve_llm_thread_deadline) {
  mute m;
  sm_llm_config c;
  char url[64];
  sm_llm *l;
  ask capped = {0}, plain = {0};
  pthread_t a, b;

  mute_start(&m);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d", m.port);
  sm_llm_config_init(&c);
  c.url = url;
  c.timeout_s = 30;
  c.retries = 0;
  l = sm_llm_new(&c, NULL);
  ASSERT(l != NULL);
  capped.l = plain.l = l;
  capped.cap = 0.3;
  /* Two threads at once: the cap is the capped thread's only. */
  ASSERT(pthread_create(&a, NULL, ask_run, &capped) == 0);
  ASSERT(pthread_create(&b, NULL, ask_run, &plain) == 0);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  ASSERT(capped.rc != 0 && capped.reason == SM_LLM_R_TIMEOUT);
  ASSERT(plain.rc != 0 && plain.reason == SM_LLM_R_TIMEOUT);
  if (!(capped.took >= 0.25 && capped.took < 1.0))
    SM_FAIL_AT("capped request took %.3f s (cap 0.3 s)", capped.took);
  if (!(plain.took >= 1.4 && plain.took < 3.0))
    SM_FAIL_AT("uncapped request took %.3f s (deadline 1.5 s)", plain.took);
  /* A cap already past: nothing is sent, at once. */
  {
    sm_llm_msg mm = {"user", "again"};
    sm_llm_reply rep;
    int reason = 0;
    double t0 = sm_now();
    sm_llm_thread_deadline(t0 - 1);
    ASSERT(sm_llm_chat(l, SM_LLM_ADVISOR, &mm, 1, 0, &rep, &reason, NULL) != 0);
    ASSERT(reason == SM_LLM_R_TIMEOUT && sm_now() - t0 < 0.2);
    sm_llm_reply_release(&rep);
    sm_llm_thread_deadline(0);
  }
  sm_llm_free(l);
  mute_stop(&m);
}

SM_TEST(serve_llm_cutoff) {
  sv_req r;
  memset(&r, 0, sizeof(r));
  ASSERT(sv__llm_cutoff(&r) == 0); /* no deadline: no cap */
  r.t0 = 100;
  r.deadline = 110; /* 10 s: a second for the answer */
  ASSERT_NEAR(sv__llm_cutoff(&r), 109, 1e-9);
  r.deadline = 100.1; /* 100 ms: at least 20 ms */
  ASSERT_NEAR(sv__llm_cutoff(&r), 100.08, 1e-9);
}
