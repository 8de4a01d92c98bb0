/* test_llm_client.c - the LLM client's retries, deadlines, cache, token
 * budget, concurrency limit and response checks, against a small HTTP
 * server in this file (a thread on 127.0.0.1 and a port the system
 * picks) that answers from a script: statuses, delays, a body dripped a
 * byte at a time, a connection that hangs, a truncated body. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "llm/llm_int.h"
#include "schedmate/sm_llm.h"

/* ==== The scripted server ==== */

typedef struct step {
  int status;       /* HTTP status (0: 200) */
  const char *body; /* body ("" default: a chat answer of content) */
  int delay_ms;     /* before answering */
  int drip_ms;      /* between body bytes */
  int hang;         /* never answer */
  int truncate;     /* promise the body, send this many bytes, close */
  int retry_after;  /* Retry-After header, seconds */
  int reject_json;  /* 400 when the request asks for JSON mode */
} step;

#define MAX_STEPS 16

typedef struct server {
  int fd;                /* listening socket */
  int port;              /* its port */
  pthread_mutex_t mu;    /* guards the rest */
  step steps[MAX_STEPS]; /* the script, in order */
  int n_steps;
  step dflt;    /* after the script */
  int next;     /* next step */
  int requests; /* requests read */
  int in_flight, max_in_flight;
  char last_auth[256]; /* Authorization header of the last request */
  int last_json_mode;  /* the last request asked for JSON mode */
  int conns;           /* connection threads alive */
  volatile int stop;
} server;

static const char ok_chat[] =
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":\"{\\\"ok\\\":1}\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":3}}";

typedef struct conn {
  server *s;
  int fd;
} conn;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0)
      return;
    p += w;
    n -= (size_t)w;
  }
}

/* Reads one request; returns its body (malloc) or NULL at EOF. */
static char *read_request(int fd, char *auth, size_t auth_n) {
  char buf[65536];
  size_t n = 0;
  char *hdr_end = NULL, *body;
  long clen = 0;

  while (hdr_end == NULL) {
    ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
    if (r <= 0)
      return NULL;
    n += (size_t)r;
    buf[n] = '\0';
    hdr_end = strstr(buf, "\r\n\r\n");
    if (n >= sizeof(buf) - 1)
      return NULL;
  }
  {
    char *cl = strcasestr(buf, "Content-Length:");
    char *au = strcasestr(buf, "Authorization:");
    if (cl && cl < hdr_end)
      clen = strtol(cl + 15, NULL, 10);
    auth[0] = '\0';
    if (au && au < hdr_end) {
      char *e = strstr(au, "\r\n");
      size_t k = (size_t)(e - au);
      if (k >= auth_n)
        k = auth_n - 1;
      memcpy(auth, au, k);
      auth[k] = '\0';
    }
  }
  body = malloc((size_t)clen + 1);
  {
    size_t have = n - (size_t)(hdr_end + 4 - buf);
    if (have > (size_t)clen)
      have = (size_t)clen;
    memcpy(body, hdr_end + 4, have);
    while (have < (size_t)clen) {
      ssize_t r = recv(fd, body + have, (size_t)clen - have, 0);
      if (r <= 0) {
        free(body);
        return NULL;
      }
      have += (size_t)r;
    }
  }
  body[clen] = '\0';
  return body;
}

static void *conn_main(void *arg) {
  conn *c = arg;
  server *s = c->s;
  char auth[256];
  char *req;

  while (!s->stop && (req = read_request(c->fd, auth, sizeof(auth))) != NULL) {
    step st;
    char head[512];
    const char *body;
    size_t bl;
    int status, json = strstr(req, "response_format") != NULL;

    pthread_mutex_lock(&s->mu);
    st = s->next < s->n_steps ? s->steps[s->next++] : s->dflt;
    s->requests++;
    snprintf(s->last_auth, sizeof(s->last_auth), "%s", auth);
    s->last_json_mode = json;
    if (++s->in_flight > s->max_in_flight)
      s->max_in_flight = s->in_flight;
    pthread_mutex_unlock(&s->mu);
    free(req);
    if (st.hang) {
      while (!s->stop)
        sleep_ms(20);
      break;
    }
    if (st.delay_ms)
      sleep_ms(st.delay_ms);
    status = st.status ? st.status : 200;
    body = st.body ? st.body : ok_chat;
    if (st.reject_json && json) {
      status = 400;
      body = "{\"error\":\"response_format not supported\"}";
    }
    bl = strlen(body);
    snprintf(head, sizeof(head),
             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\n%s%s%s\r\n",
             status, bl, st.retry_after ? "Retry-After: " : "",
             st.retry_after ? (st.retry_after == 1 ? "1" : "2") : "",
             st.retry_after ? "\r\n" : "");
    send_all(c->fd, head, strlen(head));
    if (st.truncate) {
      send_all(c->fd, body,
               (size_t)st.truncate < bl ? (size_t)st.truncate : bl);
      pthread_mutex_lock(&s->mu);
      s->in_flight--;
      pthread_mutex_unlock(&s->mu);
      break;
    }
    if (st.drip_ms) {
      for (size_t i = 0; i < bl && !s->stop; i++) {
        send_all(c->fd, body + i, 1);
        sleep_ms(st.drip_ms);
      }
    } else {
      send_all(c->fd, body, bl);
    }
    pthread_mutex_lock(&s->mu);
    s->in_flight--;
    pthread_mutex_unlock(&s->mu);
  }
  close(c->fd);
  free(c);
  pthread_mutex_lock(&s->mu);
  s->conns--;
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static void *accept_main(void *arg) {
  server *s = arg;
  while (!s->stop) {
    int fd = accept(s->fd, NULL, NULL);
    pthread_t t;
    conn *c;
    if (fd < 0) {
      if (s->stop)
        break;
      continue;
    }
    c = malloc(sizeof(*c));
    c->s = s;
    c->fd = fd;
    pthread_mutex_lock(&s->mu);
    s->conns++;
    pthread_mutex_unlock(&s->mu);
    pthread_create(&t, NULL, conn_main, c);
    pthread_detach(t);
  }
  return NULL;
}

static server *server_start(void) {
  server *s = calloc(1, sizeof(*s));
  struct sockaddr_in a = {0};
  socklen_t al = sizeof(a);
  pthread_t t;

  pthread_mutex_init(&s->mu, NULL);
  s->fd = socket(AF_INET, SOCK_STREAM, 0);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_OK(bind(s->fd, (struct sockaddr *)&a, sizeof(a)));
  ASSERT_OK(listen(s->fd, 64));
  getsockname(s->fd, (struct sockaddr *)&a, &al);
  s->port = ntohs(a.sin_port);
  pthread_create(&t, NULL, accept_main, s);
  pthread_detach(t);
  return s;
}

/* Stops the server once the clients are gone (their connections closed):
 * waits for the connection threads, then frees it. */
static void server_stop(server *s) {
  s->stop = 1;
  shutdown(s->fd, SHUT_RDWR);
  for (int i = 0; i < 300; i++) {
    int n;
    pthread_mutex_lock(&s->mu);
    n = s->conns;
    pthread_mutex_unlock(&s->mu);
    if (n == 0)
      break;
    sleep_ms(10);
  }
  close(s->fd);
  sleep_ms(20); /* the accept thread returns */
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static void server_script(server *s, const step *st, int n) {
  pthread_mutex_lock(&s->mu);
  memcpy(s->steps, st, sizeof(*st) * (size_t)n);
  s->n_steps = n;
  s->next = 0;
  pthread_mutex_unlock(&s->mu);
}

static int server_requests(server *s) {
  int n;
  pthread_mutex_lock(&s->mu);
  n = s->requests;
  pthread_mutex_unlock(&s->mu);
  return n;
}

static sm_llm *client(server *s, sm_llm_config *c) {
  static char url[64];
  sm_err err = {0};
  sm_llm *l;
  snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
  c->url = url;
  c->embed_url = url;
  if (c->model == NULL)
    c->model = "replay";
  l = sm_llm_new(c, &err);
  if (l == NULL)
    SM_FAIL_AT("sm_llm_new: %s", err.msg);
  return l;
}

static int chat(sm_llm *l, const char *prompt, int *reason, sm_llm_reply *rep) {
  sm_llm_msg m[2] = {{"system", "answer JSON"}, {"user", prompt}};
  sm_err err = {0};
  return sm_llm_chat(l, SM_LLM_TRACKER, m, 2, 0, rep, reason, &err);
}

/* ==== Tests ==== */

SM_TEST(llm_client_retries_5xx_then_answers) {
  server *s = server_start();
  step st[] = {{.status = 500}, {.status = 503}, {0}};
  sm_llm_config c;
  sm_llm_reply rep;
  sm_llm_stats x;
  int reason = 0;
  sm_llm *l;

  server_script(s, st, 3);
  sm_llm_config_init(&c);
  c.backoff_s = 0.01;
  l = client(s, &c);
  ASSERT_OK(chat(l, "hello", &reason, &rep));
  ASSERT_STREQ(rep.content, "{\"ok\":1}");
  ASSERT_EQ(rep.prompt_tokens, 11);
  sm_llm_stats_get(l, SM_LLM_TRACKER, &x);
  ASSERT_EQ(x.calls, 3);
  ASSERT_EQ(x.retries, 2);
  ASSERT_EQ(x.requests, 1);
  ASSERT_EQ(x.prompt_tokens, 11);
  sm_llm_reply_release(&rep);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_gives_up_after_retries) {
  server *s = server_start();
  step st[] = {
      {.status = 500}, {.status = 500}, {.status = 500}, {.status = 500}};
  sm_llm_config c;
  sm_llm_reply rep;
  sm_llm_stats x;
  int reason = 0;
  sm_llm *l;

  server_script(s, st, 4);
  sm_llm_config_init(&c);
  c.backoff_s = 0.01;
  c.retries = 2;
  l = client(s, &c);
  ASSERT(chat(l, "hello", &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_HTTP_5XX);
  sm_llm_stats_get(l, SM_LLM_TRACKER, &x);
  ASSERT_EQ(x.calls, 3);
  ASSERT_EQ(server_requests(s), 3);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_429_retry_after_and_4xx_not_retried) {
  server *s = server_start();
  step st[] = {{.status = 429, .retry_after = 1}, {0}, {.status = 404}};
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;
  double t0;

  server_script(s, st, 3);
  sm_llm_config_init(&c);
  c.backoff_s = 0.01;
  l = client(s, &c);
  t0 = sm_now();
  ASSERT_OK(chat(l, "one", &reason, &rep));
  /* Retry-After was obeyed (the back-off alone would be 10 ms). */
  ASSERT(sm_now() - t0 >= 0.9);
  sm_llm_reply_release(&rep);
  ASSERT(chat(l, "two", &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_HTTP_OTHER);
  ASSERT_EQ(server_requests(s), 3);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_deadline_bounds_hangs_and_drips) {
  server *s = server_start();
  step st[] = {{.hang = 1}, {.drip_ms = 200}, {.delay_ms = 3000}};
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;
  double t0;

  server_script(s, st, 3);
  sm_llm_config_init(&c);
  c.timeout_s = 0.5;
  c.retries = 3;
  l = client(s, &c);
  for (int i = 0; i < 3; i++) {
    char p[16];
    snprintf(p, sizeof(p), "p%d", i);
    t0 = sm_now();
    ASSERT(chat(l, p, &reason, &rep) != 0);
    ASSERT_EQ(reason, SM_LLM_R_TIMEOUT);
    /* Never past the deadline by more than scheduling noise. */
    ASSERT(sm_now() - t0 < 2.5);
  }
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_connection_refused_is_bounded) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  socklen_t al = sizeof(a);
  char url[64];
  sm_llm_config c;
  sm_llm_reply rep;
  sm_llm_msg m = {"user", "x"};
  sm_err err = {0};
  int reason = 0;
  sm_llm *l;
  sm_llm_stats x;

  /* A port that was free a moment ago and has no listener now. */
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, (struct sockaddr *)&a, sizeof(a));
  getsockname(fd, (struct sockaddr *)&a, &al);
  close(fd);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1", ntohs(a.sin_port));
  sm_llm_config_init(&c);
  c.url = url;
  c.backoff_s = 0.01;
  c.retries = 2;
  l = sm_llm_new(&c, &err);
  ASSERT(l != NULL);
  ASSERT(sm_llm_chat(l, SM_LLM_FAILURE, &m, 1, 0, &rep, &reason, &err) != 0);
  ASSERT_EQ(reason, SM_LLM_R_CONNECT);
  sm_llm_stats_get(l, SM_LLM_FAILURE, &x);
  ASSERT_EQ(x.calls, 3);
  sm_llm_free(l);
}

SM_TEST(llm_client_cache_answers_the_same_prompt) {
  server *s = server_start();
  char dir[] = "/tmp/sm-llm-cache-XXXXXX";
  sm_llm_config c;
  sm_llm_reply rep;
  sm_llm_stats x;
  int reason = 0;
  sm_llm *l;

  ASSERT(mkdtemp(dir) != NULL);
  sm_llm_config_init(&c);
  c.cache_dir = dir;
  l = client(s, &c);
  ASSERT_OK(chat(l, "same", &reason, &rep));
  ASSERT_EQ(rep.cached, 0);
  sm_llm_reply_release(&rep);
  ASSERT_OK(chat(l, "same", &reason, &rep));
  ASSERT_EQ(rep.cached, 1);
  ASSERT_STREQ(rep.content, "{\"ok\":1}");
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 1);
  ASSERT_OK(chat(l, "other", &reason, &rep));
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 2);
  sm_llm_stats_get(l, SM_LLM_TRACKER, &x);
  ASSERT_EQ(x.cache_hits, 1);
  ASSERT_EQ(x.requests, 3);
  sm_llm_free(l);
  /* A new client (a new process) finds it on disk. */
  l = client(s, &c);
  ASSERT_OK(chat(l, "same", &reason, &rep));
  ASSERT_EQ(rep.cached, 1);
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 2);
  sm_llm_free(l);
  /* A damaged entry is a miss, never a wrong answer. */
  {
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "for f in %s/*/*; do printf 'garbage' > \"$f\"; done", dir);
    ASSERT_OK(system(cmd));
  }
  l = client(s, &c);
  ASSERT_OK(chat(l, "same", &reason, &rep));
  ASSERT_EQ(rep.cached, 0);
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 3);
  sm_llm_free(l);
  server_stop(s);
  {
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}

SM_TEST(llm_client_cache_key_and_failures_not_cached) {
  server *s = server_start();
  step st[] = {{.status = 500}, {0}};
  char k1[33], k2[33], k3[33];
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;

  sm__llm_cache_key("http://a/v1/chat", "{x}", 3, k1);
  sm__llm_cache_key("http://a/v1/chat", "{x}", 3, k2);
  sm__llm_cache_key("http://b/v1/chat", "{x}", 3, k3);
  ASSERT_STREQ(k1, k2);
  ASSERT(strcmp(k1, k3) != 0);
  ASSERT_EQ(strlen(k1), 32);
  server_script(s, st, 2);
  sm_llm_config_init(&c);
  c.retries = 0;
  l = client(s, &c);
  ASSERT(chat(l, "p", &reason, &rep) != 0);
  ASSERT_OK(chat(l, "p", &reason, &rep)); /* the failure was not kept */
  ASSERT_EQ(rep.cached, 0);
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 2);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_token_budget_sends_nothing) {
  server *s = server_start();
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;
  char *big = malloc(200000);

  memset(big, 'a', 199999);
  big[199999] = '\0';
  sm_llm_config_init(&c);
  c.max_prompt_tokens = 1000;
  l = client(s, &c);
  ASSERT(chat(l, big, &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_BUDGET);
  ASSERT_EQ(server_requests(s), 0);
  free(big);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_json_mode_fallback_and_key) {
  server *s = server_start();
  char keyf[] = "/tmp/sm-llm-key-XXXXXX";
  int fd = mkstemp(keyf);
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;

  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, "  sekrit-123\n", 13), 13);
  close(fd);
  s->dflt.reject_json = 1;
  sm_llm_config_init(&c);
  c.key_file = keyf;
  l = client(s, &c);
  ASSERT_OK(chat(l, "one", &reason, &rep));
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 2);
  ASSERT_EQ(s->last_json_mode, 0);
  ASSERT_STREQ(s->last_auth, "Authorization: Bearer sekrit-123");
  ASSERT_OK(chat(l, "two", &reason, &rep)); /* remembered: one request */
  sm_llm_reply_release(&rep);
  ASSERT_EQ(server_requests(s), 3);
  sm_llm_free(l);
  server_stop(s);
  unlink(keyf);
}

SM_TEST(llm_client_bad_key_file_and_urls) {
  sm_llm_config c;
  sm_err err = {0};

  sm_llm_config_init(&c);
  ASSERT(sm_llm_new(&c, &err) == NULL); /* nothing to talk to */
  c.url = "ftp://example";
  sm_err_clear(&err);
  ASSERT(sm_llm_new(&c, &err) == NULL);
  ASSERT(strstr(err.msg, "http") != NULL);
  c.url = "http://127.0.0.1:1";
  c.key_file = "/nonexistent/key";
  sm_err_clear(&err);
  ASSERT(sm_llm_new(&c, &err) == NULL);
  ASSERT(strstr(err.msg, "/nonexistent/key") != NULL);
  c.key_file = "/dev/null";
  sm_err_clear(&err);
  ASSERT(sm_llm_new(&c, &err) == NULL);
}

SM_TEST(llm_client_rejects_bad_responses) {
  server *s = server_start();
  step st[] = {{.body = "{\"not\":\"openai\"}"},
               {.body = "not json at all"},
               {.truncate = 20},
               {.body = "{\"data\":[{\"embedding\":[1,2,\"x\"]}]}"},
               {.body = "{\"data\":[{\"embedding\":[0.5,0.25,1e400]}]}"},
               {.body = "{\"data\":[{\"embedding\":[0.5,0.25,0.75]}]}"}};
  sm_llm_config c;
  sm_llm_reply rep;
  sm_err err = {0};
  float *v;
  int reason = 0, d;
  sm_llm *l;

  server_script(s, st, 6);
  sm_llm_config_init(&c);
  c.retries = 0;
  l = client(s, &c);
  ASSERT(chat(l, "a", &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_BAD_RESPONSE);
  ASSERT(chat(l, "b", &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_BAD_RESPONSE);
  ASSERT(chat(l, "c", &reason, &rep) != 0);
  ASSERT(reason == SM_LLM_R_CONNECT || reason == SM_LLM_R_BAD_RESPONSE);
  ASSERT(sm_llm_embed(l, "x", 0, &v, &d, &reason, &err) != 0);
  ASSERT(sm_llm_embed(l, "y", 0, &v, &d, &reason, &err) != 0);
  ASSERT_OK(sm_llm_embed(l, "z", 0, &v, &d, &reason, &err));
  ASSERT_EQ(d, 3);
  ASSERT_NEAR(v[2], 0.75, 1e-6);
  sm_free(v);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_response_size_cap) {
  server *s = server_start();
  static char huge[300000];
  step st[1];
  sm_llm_config c;
  sm_llm_reply rep;
  int reason = 0;
  sm_llm *l;

  memset(huge, ' ', sizeof(huge) - 1);
  huge[0] = '{';
  huge[sizeof(huge) - 2] = '}';
  memset(st, 0, sizeof(st));
  st[0].body = huge;
  server_script(s, st, 1);
  sm_llm_config_init(&c);
  c.max_response = 65536;
  c.retries = 0;
  l = client(s, &c);
  ASSERT(chat(l, "a", &reason, &rep) != 0);
  ASSERT_EQ(reason, SM_LLM_R_TOO_LARGE);
  sm_llm_free(l);
  server_stop(s);
}

typedef struct job {
  sm_llm *l;
  int i, rc;
} job;

static void *one_request(void *arg) {
  job *j = arg;
  char p[32];
  sm_llm_reply rep;
  int reason;
  snprintf(p, sizeof(p), "prompt %d", j->i);
  j->rc = chat(j->l, p, &reason, &rep);
  if (j->rc == 0)
    sm_llm_reply_release(&rep);
  return NULL;
}

SM_TEST(llm_client_concurrency_limit) {
  server *s = server_start();
  sm_llm_config c;
  pthread_t t[6];
  job j[6];
  sm_llm *l;

  s->dflt.delay_ms = 150;
  sm_llm_config_init(&c);
  c.max_concurrency = 2;
  l = client(s, &c);
  for (int i = 0; i < 6; i++) {
    j[i].l = l;
    j[i].i = i;
    pthread_create(&t[i], NULL, one_request, &j[i]);
  }
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    ASSERT_OK(j[i].rc);
  }
  ASSERT_EQ(server_requests(s), 6);
  ASSERT(s->max_in_flight <= 2);
  ASSERT(s->max_in_flight >= 1);
  sm_llm_free(l);
  server_stop(s);
}

SM_TEST(llm_client_stats_prom_and_json) {
  server *s = server_start();
  sm_llm_config c;
  sm_llm_reply rep;
  sm_buf b;
  sm_jw w;
  int reason;
  sm_llm *l;

  sm_llm_config_init(&c);
  l = client(s, &c);
  ASSERT_OK(chat(l, "x", &reason, &rep));
  sm_llm_reply_release(&rep);
  sm_buf_init(&b, 0);
  ASSERT_OK(sm_llm_stats_write_prom(l, NULL, &b));
  ASSERT(strstr(b.data, "schedmate_llm_calls_total{component=\"tracker\"} 1") !=
         NULL);
  ASSERT(strstr(b.data, "# TYPE schedmate_llm_cache_hits_total counter") !=
         NULL);
  sm_buf_reset(&b);
  sm_jw_init(&w, &b);
  sm_llm_stats_write_json(l, &w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\"tracker\":{\"runs\":0") != NULL);
  ASSERT(strstr(b.data, "\"prompt_tokens\":11") != NULL);
  sm_buf_release(&b);
  sm_llm_free(l);
  server_stop(s);
}

/* ==== The Slurm agent's exit channel with the stage ==== */

#include "schedmate/sm_slurm.h"

typedef struct mini {
  sm_slurm_job job; /* one ended job */
  int drains, requeues;
} mini;

static char *dup0(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

static int m_load(void *ud, sm_slurm_job **out, int *n, sm_err *err) {
  mini *m = ud;
  sm_slurm_job *j = sm_calloc(1, sizeof(*j));
  (void)err;
  *j = m->job;
  j->user = dup0(m->job.user);
  j->name = dup0(m->job.name);
  j->work_dir = dup0(m->job.work_dir);
  j->std_out = dup0(m->job.std_out);
  j->nodes = sm_calloc(1, sizeof(char *));
  j->nodes[0] = dup0(m->job.nodes[0]);
  *out = j;
  *n = 1;
  return 0;
}

static int m_script(void *ud, uint32_t id, sm_buf *out, sm_err *err) {
  (void)ud;
  (void)id;
  (void)err;
  return sm_buf_adds(out, "#!/bin/bash\nsrun python train.py\n");
}

static int m_update(void *ud, const sm_slurm_update *u, sm_err *err) {
  (void)ud;
  (void)u;
  (void)err;
  return 0;
}

static int m_drain(void *ud, const char *node, const char *reason,
                   sm_err *err) {
  (void)node;
  (void)reason;
  (void)err;
  ((mini *)ud)->drains++;
  return 0;
}

static int m_requeue(void *ud, uint32_t id, sm_err *err) {
  (void)id;
  (void)err;
  ((mini *)ud)->requeues++;
  return 0;
}

static const sm_slurm_ops mini_ops = {m_load,  m_script,  m_update,
                                      m_drain, m_requeue, NULL};

/* Runs one enforce-mode pass over one FAILED job whose log is text;
 * returns the status file's contents (sm_free). */
static char *agent_pass(const char *dir, const char *text, sm_llm *l, mini *m,
                        char **metrics) {
  char log[300], db[300], status[300], prom[300], *out = NULL;
  sm_slurm_opts o;
  sm_slurm_backend b;
  sm_slurm_agent *a;
  sm_err err = {0};
  size_t len;
  FILE *f;

  snprintf(log, sizeof(log), "%s/job.out", dir);
  snprintf(db, sizeof(db), "%s/h.db", dir);
  snprintf(status, sizeof(status), "%s/status.json", dir);
  snprintf(prom, sizeof(prom), "%s/m.prom", dir);
  f = fopen(log, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
  memset(m, 0, sizeof(*m));
  m->job.id = 42;
  m->job.state = SM_SJ_FAILED;
  m->job.user = (char *)"ada";
  m->job.name = (char *)"train";
  m->job.work_dir = (char *)dir;
  m->job.std_out = log;
  {
    static char *nodes[] = {(char *)"gpu-n7"};
    m->job.nodes = nodes;
  }
  m->job.n_nodes = 1;
  m->job.batch = 1;
  m->job.start_time = 1000;
  m->job.end_time = 2000;
  m->job.exit_status = 1 << 8;
  memset(&o, 0, sizeof(o));
  memset(&b, 0, sizeof(b));
  o.enforce = 1;
  o.db = db;
  o.status_path = status;
  o.metrics_path = prom;
  o.interval_s = 0.001;
  o.check_owner = -1;
  o.llm = l;
  b.ops = &mini_ops;
  b.ud = m;
  snprintf(b.cluster, sizeof(b.cluster), "mini");
  a = sm_slurm_agent_new(&o, &b, &err);
  if (a == NULL)
    SM_FAIL_AT("agent: %s", err.msg);
  ASSERT_OK(sm_slurm_agent_pass(a, NULL));
  sm_slurm_agent_free(a);
  ASSERT_OK(sm_file_read_all(status, 1 << 20, &out, &len, NULL));
  ASSERT_OK(sm_file_read_all(prom, 1 << 20, metrics, &len, NULL));
  unlink(db);
  return out;
}

static const char ecc_log[] =
    "step 100/5000 loss 2.10\n"
    "step 101/5000 loss 2.09\n"
    "NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable "
    "double bit error (DBE) has been detected on GPU\n"
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n";

SM_TEST(llm_slurm_agent_exit_channel_and_status) {
  server *s = server_start();
  char dir[] = "/tmp/sm-llm-agent-XXXXXX", *st, *prom;
  /* The model says: the job's own fault. */
  step say_user[] = {
      {.body = "{\"choices\":[{\"message\":{\"content\":\"{\\\"category\\\": "
               "\\\"user\\\", \\\"component\\\": \\\"none\\\", "
               "\\\"root_cause\\\": \\\"x\\\", \\\"evidence\\\": "
               "[{\\\"line\\\": 4, \\\"quote\\\": \\\"uncorrectable ECC "
               "error\\\"}]}\"}}]}"}};
  sm_llm_config c;
  sm_llm *l;
  mini m;

  ASSERT(mkdtemp(dir) != NULL);
  /* Without the stage the engine drains and requeues. */
  st = agent_pass(dir, ecc_log, NULL, &m, &prom);
  ASSERT_EQ(m.drains, 1);
  ASSERT_EQ(m.requeues, 1);
  ASSERT(strstr(st, "\"llm\"") == NULL);
  sm_free(st);
  sm_free(prom);
  /* The engine is sure, so a plain stage asks nothing and acts the same. */
  sm_llm_config_init(&c);
  l = client(s, &c);
  st = agent_pass(dir, ecc_log, l, &m, &prom);
  ASSERT_EQ(m.drains, 1);
  ASSERT_EQ(server_requests(s), 0);
  ASSERT(strstr(st, "\"llm\":{\"advisor\"") != NULL);
  ASSERT(strstr(prom, "schedmate_llm_runs_total{component=\"failure\"} 0") !=
         NULL);
  sm_free(st);
  sm_free(prom);
  sm_llm_free(l);
  /* Asked anyway, a verified disagreement withholds the actions. */
  server_script(s, say_user, 1);
  sm_llm_config_init(&c);
  c.always = 1;
  l = client(s, &c);
  st = agent_pass(dir, ecc_log, l, &m, &prom);
  ASSERT_EQ(server_requests(s), 1);
  ASSERT_EQ(m.drains, 0);
  ASSERT_EQ(m.requeues, 0);
  ASSERT(strstr(st, "\"failure\":{\"runs\":1,\"used\":1") != NULL);
  ASSERT(strstr(prom, "schedmate_llm_calls_total{component=\"failure\"} 1") !=
         NULL);
  sm_free(st);
  sm_free(prom);
  sm_llm_free(l);
  server_stop(s);
  {
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}
