/* server.c - the HTTP side of `schedmate serve` (libmicrohttpd).
 *
 * Listeners are sockets made here and handed to libmicrohttpd: a UNIX
 * socket (its file mode and directory decide who may connect) and
 * optionally a TCP socket, by default on loopback, where every request
 * but /healthz must carry the bearer token.  One daemon per listener runs
 * an internal epoll thread that parses requests and routes them:
 *
 *   1. the first call of a request: route (404, 405), authenticate
 *      (401), rate-limit the client (429), refuse a declared body above
 *      the cap (413);
 *   2. body chunks are copied up to the cap (past it the rest is read
 *      and dropped, and the answer is 413);
 *   3. the last call: quick endpoints are answered at once; the others
 *      are parsed (400), put on their channel's queue (503 when full) and
 *      the connection is suspended until a worker or the deadline thread
 *      answers and resumes it;
 *   4. the call after the resume queues that answer.
 *
 * Every answer is counted (endpoint, code, latency) and, for /v1, written
 * to the audit log; refusals are logged. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "serve/mhd_load_int.h"
#include "serve/serve_int.h"

/* ==== Logging and audit ==== */

void sv__audit(sm_serve *sv, const sv_req *r) {
  sm_buf b;
  sm_jw w;

  if (sv->o.audit_path == NULL)
    return;
  sv__audit_begin(&b, (size_t)64 << 10, &w);
  sm_jw_kv_str(&w, "channel", r->ch >= 0 ? sv__channel_names[r->ch] : NULL);
  sm_jw_kv_str(&w, "endpoint", sv__ep_name(r->ep));
  sm_jw_kv_str(&w, "decision", r->res.decision);
  sm_jw_kv_str(&w, "job", r->job[0] ? r->job : NULL);
  sm_jw_kv_str(&w, "client", r->client);
  sm_jw_kv_int(&w, "status", r->res.status);
  sm_jw_kv_num(&w, "latency_ms", round((sm_now() - r->t0) * 1e5) / 100);
  sm_jw_kv_num(&w, "queue_ms",
               r->t_work > 0 ? round((r->t_work - r->t0) * 1e5) / 100 : NAN);
  sm_jw_kv_bool(&w, "late", r->late);
  if (r->res.fallback)
    sm_jw_kv_str(&w, "fallback_reason", r->res.fallback);
  if (!isnan(r->res.estimate_s))
    sm_jw_kv_num(&w, "estimate_s", round(r->res.estimate_s * 10) / 10);
  if (r->res.note[0])
    sm_jw_kv_str(&w, "note", r->res.note);
  sv__audit_end(sv, &b, &w);
}

/* ==== Requests ==== */

static sv_req *req_new(sm_serve *sv, struct MHD_Connection *conn, int tcp) {
  sv_req *r = sm_calloc(1, sizeof(*r));

  if (r == NULL)
    return NULL;
  pthread_mutex_init(&r->mu, NULL);
  r->refs = 1;
  r->sv = sv;
  r->conn = conn;
  r->tcp = tcp;
  r->ch = -1;
  r->ep = EP_OTHER;
  r->t0 = sm_now();
  sm_buf_init(&r->body, sv->o.max_body + 1);
  sv__result_init(&r->res);
  atomic_fetch_add(&sv->live, 1);
  return r;
}

/* Who is asking: the peer's uid on the UNIX socket, its address on
 * TCP. */
static void client_key(sv_req *r) {
  const union MHD_ConnectionInfo *ci;

  snprintf(r->client, sizeof(r->client), "unknown");
  if (r->tcp) {
    char a[INET6_ADDRSTRLEN] = "?";
    ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
      const struct sockaddr *sa = ci->client_addr;
      if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a,
                  sizeof(a));
      else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a,
                  sizeof(a));
    }
    snprintf(r->client, sizeof(r->client), "ip:%s", a);
  } else {
    unsigned uid;
    ci = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (ci && sm_unix_peer(ci->connect_fd, &uid, NULL) == 0)
      snprintf(r->client, sizeof(r->client), "uid:%u", uid);
  }
}

/* Constant-time comparison of the presented token. */
static int token_ok(sm_serve *sv, struct MHD_Connection *conn) {
  const char *h =
      MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
  const char *want = sv->s_token;
  size_t n, m;
  unsigned diff = 0;

  if (h == NULL || want == NULL || strncasecmp(h, "Bearer ", 7) != 0)
    return 0;
  h += 7;
  while (*h == ' ')
    h++;
  n = strlen(h);
  m = strlen(want);
  diff = n != m;
  for (size_t i = 0; i < m; i++)
    diff |= (unsigned char)want[i] ^ (unsigned char)(i < n ? h[i] : 0);
  return diff == 0;
}

/* Sets r->ep and r->job from method and path; 0, or the status of a
 * routing error (404, 405) with *allow set. */
static int route(sv_req *r, const char *url, const char *method,
                 const char **allow) {
  int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  int post = strcmp(method, "POST") == 0;
  size_t n = strlen(url);

  *allow = NULL;
  if (strcmp(url, "/healthz") == 0) {
    r->ep = EP_HEALTHZ;
    *allow = "GET, HEAD";
    return get ? 0 : 405;
  }
  if (strcmp(url, "/metrics") == 0) {
    r->ep = EP_METRICS;
    *allow = "GET, HEAD";
    return get ? 0 : 405;
  }
  if (strcmp(url, "/v1/advise") == 0 || strcmp(url, "/v1/jobs") == 0 ||
      strcmp(url, "/v1/track") == 0 || strcmp(url, "/v1/diagnose") == 0) {
    r->ep = url[4] == 'a'   ? EP_ADVISE
            : url[4] == 'j' ? EP_REGISTER
            : url[4] == 't' ? EP_TRACK
                            : EP_DIAGNOSE;
    *allow = "POST";
    return post ? 0 : 405;
  }
  if (strncmp(url, "/v1/jobs/", 9) == 0 && n > 9) {
    const char *id = url + 9;
    size_t idn = n - 9;
    const char *allow_m = "GET";
    int want_post = 0;
    r->ep = EP_JOB;
    if (idn > 4 && strcmp(url + n - 4, "/end") == 0) {
      r->ep = EP_END;
      idn -= 4;
      allow_m = "POST";
      want_post = 1;
    } else if (idn > 9 && strcmp(url + n - 9, "/progress") == 0) {
      r->ep = EP_PROGRESS;
      idn -= 9;
    }
    if (idn > SV_ID_MAX) {
      r->ep = EP_OTHER;
      return 404;
    }
    memcpy(r->job, id, idn);
    r->job[idn] = '\0';
    if (!sv__id_ok(r->job)) {
      r->job[0] = '\0';
      r->ep = EP_OTHER;
      return 404;
    }
    *allow = allow_m;
    return (want_post ? post : get) ? 0 : 405;
  }
  r->ep = EP_OTHER;
  return 404;
}

/* Queues the answer res on r's connection. */
static enum MHD_Result respond(sm_serve *sv, sv_req *r, sv_result *res,
                               const char *allow) {
  struct MHD_Response *resp;
  enum MHD_Result ret;
  double lat = sm_now() - r->t0;
  int status = res->status ? res->status : 500;

  resp = MHD_create_response_from_buffer(
      res->body.len, res->body.data ? res->body.data : (char *)"",
      MHD_RESPMEM_MUST_COPY);
  if (resp == NULL)
    return MHD_NO;
  MHD_add_response_header(resp, "Content-Type",
                          r->ep == EP_METRICS && status == 200
                              ? "text/plain; version=0.0.4; charset=utf-8"
                              : "application/json");
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  if (res->retry_after >= 0) {
    char v[32];
    snprintf(v, sizeof(v), "%.0f",
             ceil(res->retry_after < 1 ? 1 : res->retry_after));
    MHD_add_response_header(resp, "Retry-After", v);
  }
  if (status == 401)
    MHD_add_response_header(resp, "WWW-Authenticate",
                            "Bearer realm=\"schedmate\"");
  if (status == 405 && allow)
    MHD_add_response_header(resp, "Allow", allow);
  ret = MHD_queue_response(r->conn, (unsigned)status, resp);
  MHD_destroy_response(resp);
  r->answered = 1;
  atomic_fetch_add(&sv->m.req[r->ep][sv__code_index(status)], 1);
  sv__observe(&sv->m.lat[r->ep], lat);
  if (r->ep >= EP_ADVISE && r->ep <= EP_DIAGNOSE) {
    if (res != &r->res) {
      /* Answered by the router: the audit reads r->res. */
      sv__result_release(&r->res);
      r->res = *res;
      sv__result_init(res);
    }
    sv__audit(sv, r);
    res = &r->res;
  }
  if (status == 403 || status >= 500)
    sv__log(sv, SM_SERVE_WARN, "%d %s %s%s%s: %s", status, sv__ep_name(r->ep),
            r->client, r->job[0] ? " job " : "", r->job, res->note);
  else if (status >= 400)
    sv__log(sv, SM_SERVE_INFO, "%d %s %s%s%s: %s", status, sv__ep_name(r->ep),
            r->client, r->job[0] ? " job " : "", r->job, res->note);
  return ret;
}

static enum MHD_Result answer_now(sm_serve *sv, sv_req *r, sv_result *res,
                                  const char *allow) {
  enum MHD_Result ret = respond(sv, r, res, allow);
  sv__result_release(res);
  return ret;
}

/* The last call of a request: answer at once or queue it. */
static enum MHD_Result dispatch(sm_serve *sv, sv_req *r) {
  sv_result res;
  sv_channel *c;
  double dl;

  sv__result_init(&res);
  if (r->body_over) {
    sv__error(&res, 413, "body_too_large", "the body is over %zu bytes",
              sv->o.max_body);
    return answer_now(sv, r, &res, NULL);
  }
  switch (r->ep) {
  case EP_HEALTHZ:
    sv__healthz(sv, &res);
    return answer_now(sv, r, &res, NULL);
  case EP_METRICS: {
    sv_gauges g;
    for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
      g.depth[c] = sv__chan_depth(&sv->ch[c]);
    g.fingerprints = sv__hist_fingerprints(&sv->hist);
    g.jobs = sv__jobs_count(&sv->jobs);
    g.followed = sv__jobs_followed(&sv->jobs);
    sv__metrics_render(sv, &g, &res.body);
    if (sv->o.llm != NULL)
      sv__llm_metrics(sv, &res.body);
    res.status = 200;
    return answer_now(sv, r, &res, NULL);
  }
  case EP_JOB:
  case EP_PROGRESS:
    break;
  default:
    if (sv__parse_body(sv, r, &res) != 0)
      return answer_now(sv, r, &res, NULL);
  }
  if (r->ep == EP_REGISTER && sv__register(sv, r, &res) != 0)
    return answer_now(sv, r, &res, NULL);
  r->ch = sv__ep_channel(r->ep);
  c = &sv->ch[r->ch];
  dl = c->deadline_s;
  if (r->ch == SM_SERVE_SUBMIT && r->json) {
    /* A scheduler may ask for less time than the service allows. */
    double want = sv__jnum(r->json, "deadline_ms");
    if (want >= 1 && want / 1000 < dl)
      dl = want / 1000;
  }
  r->deadline = r->t0 + dl;
  pthread_mutex_lock(&r->mu);
  sv__deadline_add(sv, r);
  if (sv__chan_push(c, r) != 0) {
    /* Answered here: nobody else may answer it. */
    r->state = RQ_DONE;
    pthread_mutex_unlock(&r->mu);
    sv__deadline_remove(sv, r);
    res.retry_after = 1;
    if (sv->stopped) {
      sv__error(&res, 503, "stopping", "the service is stopping");
      return answer_now(sv, r, &res, NULL);
    }
    atomic_fetch_add(&sv->m.full[r->ch], 1);
    sv__error(&res, 503, "queue_full", "the %s channel's queue is full (%d)",
              sv__channel_names[r->ch], c->cap);
    return answer_now(sv, r, &res, NULL);
  }
  r->state = RQ_QUEUED;
  r->suspended = 1;
  MHD_suspend_connection(r->conn);
  pthread_mutex_unlock(&r->mu);
  return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
                               const char *url, const char *method,
                               const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls) {
  sv_listener *L = cls;
  sm_serve *sv = L->sv;
  sv_req *r = *con_cls;
  int state;

  (void)version;
  if (r == NULL) {
    sv_result res;
    const char *allow, *cl;
    double retry;
    int st;
    r = req_new(sv, conn, L->tcp);
    if (r == NULL)
      return MHD_NO;
    *con_cls = r;
    client_key(r);
    sv__result_init(&res);
    if (L->tcp && strcmp(url, "/healthz") != 0 && !token_ok(sv, conn)) {
      atomic_fetch_add(&sv->m.unauthorized, 1);
      route(r, url, method, &allow);
      sv__error(&res, 401, "unauthorized",
                "a valid \"Authorization: Bearer TOKEN\" header is needed");
      return answer_now(sv, r, &res, NULL);
    }
    st = route(r, url, method, &allow);
    if (st != 0) {
      if (st == 405)
        sv__error(&res, 405, "method_not_allowed", "%s %s: use %s", method, url,
                  allow);
      else
        sv__error(&res, 404, "not_found", "no endpoint %s", url);
      return answer_now(sv, r, &res, allow);
    }
    if (r->ep >= EP_ADVISE &&
        !sv__rate_take(&sv->rate, r->client, r->t0, &retry)) {
      atomic_fetch_add(&sv->m.rate_limited, 1);
      res.retry_after = retry;
      sv__error(&res, 429, "rate_limited",
                "%s is over %g requests per second (burst %g)", r->client,
                sv->rate.rate, sv->rate.burst);
      return answer_now(sv, r, &res, NULL);
    }
    cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > sv->o.max_body) {
      sv__error(&res, 413, "body_too_large", "the body is over %zu bytes",
                sv->o.max_body);
      return answer_now(sv, r, &res, NULL);
    }
    return MHD_YES;
  }
  if (r->answered) {
    /* Answered before the body: drop what still comes. */
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (*upload_data_size > 0) {
    size_t n = *upload_data_size;
    r->body_seen += n;
    if (!r->body_over && sm_buf_add(&r->body, upload_data, n) != 0)
      r->body_over = 1;
    if (r->body.len > sv->o.max_body)
      r->body_over = 1;
    *upload_data_size = 0;
    /* Read and dropped up to a point; a client that goes on is cut. */
    return r->body_seen > 16 * sv->o.max_body + (1 << 20) ? MHD_NO : MHD_YES;
  }
  pthread_mutex_lock(&r->mu);
  state = r->state;
  pthread_mutex_unlock(&r->mu);
  if (state == RQ_NEW)
    return dispatch(sv, r);
  if (state == RQ_DONE)
    return respond(sv, r, &r->res, NULL);
  return MHD_YES; /* still waiting */
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe) {
  sv_req *r = *con_cls;

  (void)cls;
  (void)conn;
  (void)toe;
  if (r == NULL)
    return;
  pthread_mutex_lock(&r->mu);
  r->conn = NULL;
  r->suspended = 0;
  pthread_mutex_unlock(&r->mu);
  *con_cls = NULL;
  sv__req_unref(r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
  sm_serve *sv = cls;
  char msg[512];
  size_t n;

  vsnprintf(msg, sizeof(msg), fmt, ap);
  n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
    msg[--n] = '\0';
  sv__log(sv, SM_SERVE_DEBUG, "http: %s", msg);
}

/* ==== Listeners ==== */

static int tcp_listen(const char *spec, char *addr, size_t cap, sm_err *err) {
  char host[256] = "127.0.0.1", port[16];
  const char *colon = strrchr(spec, ':');
  struct addrinfo hints = {0}, *ai = NULL;
  struct sockaddr_storage ss;
  socklen_t sl = sizeof(ss);
  int fd, rc, one = 1;
  char *end;
  long pv;

  if (colon) {
    size_t hl = (size_t)(colon - spec);
    if (hl >= sizeof(host))
      return sm_err_set(err, SM_EINVAL, "--listen %s: host too long", spec);
    if (hl > 0) {
      memcpy(host, spec, hl);
      host[hl] = '\0';
    }
    spec = colon + 1;
  }
  if (host[0] == '[') {
    size_t hl = strlen(host);
    if (hl < 2 || host[hl - 1] != ']')
      return sm_err_set(err, SM_EINVAL, "--listen: bad address %s", host);
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = '\0';
  }
  pv = strtol(spec, &end, 10);
  if (*spec == '\0' || *end != '\0' || pv < 0 || pv > 65535)
    return sm_err_set(err, SM_EINVAL, "--listen: bad port '%s'", spec);
  snprintf(port, sizeof(port), "%ld", pv);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  rc = getaddrinfo(host, port, &hints, &ai);
  if (rc != 0 || ai == NULL)
    return sm_err_set(err, SM_EINVAL, "--listen %s: %s", host,
                      rc ? gai_strerror(rc) : "no address");
  fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(ai);
    return sm_err_set(err, sm_err_from_errno(errno), "socket: %s",
                      strerror(errno));
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
    int e = errno;
    close(fd);
    freeaddrinfo(ai);
    return sm_err_set(err, sm_err_from_errno(e), "--listen %s:%s: %s", host,
                      port, strerror(e));
  }
  freeaddrinfo(ai);
  if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
    char a[INET6_ADDRSTRLEN] = "?";
    int p = 0;
    if (ss.ss_family == AF_INET) {
      inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
      p = ntohs(((struct sockaddr_in *)&ss)->sin_port);
      snprintf(addr, cap, "http://%s:%d", a, p);
    } else if (ss.ss_family == AF_INET6) {
      inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, a,
                sizeof(a));
      p = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
      snprintf(addr, cap, "http://[%s]:%d", a, p);
    }
  }
  return fd;
}

/* ==== Lifecycle ==== */

static char *dup_opt(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

static void defaults(sm_serve_opts *o) {
  static const int q[SM_SERVE_NCHANNELS] = {256, 64, 64};
  static const int wk[SM_SERVE_NCHANNELS] = {2, 1, 2};

  if (o->socket_mode <= 0)
    o->socket_mode = 0660;
  if (o->advise_deadline_ms <= 0)
    o->advise_deadline_ms = 500;
  if (o->deadline_ms <= 0)
    o->deadline_ms = 10000;
  /* With the LLM stage each channel gets one more worker, for the
   * stage: one always stays for deterministic answers (llm.c). */
  int extra = o->llm != NULL;

  for (int c = 0; c < SM_SERVE_NCHANNELS; c++) {
    if (o->queue[c] <= 0)
      o->queue[c] = q[c];
    if (o->workers[c] <= 0)
      o->workers[c] = wk[c] + extra;
  }
  if (o->rate == 0)
    o->rate = 100;
  if (o->burst <= 0)
    o->burst = o->rate > 0 ? SM_MAX(10, 2 * o->rate) : 10;
  if (o->max_body == 0)
    o->max_body = (size_t)1 << 20;
  if (o->max_depth <= 0)
    o->max_depth = 16;
  if (o->max_connections <= 0)
    o->max_connections = 512;
  if (o->max_jobs <= 0)
    o->max_jobs = 100000;
  if (o->max_followed <= 0)
    o->max_followed = 256;
  if (o->sync_interval_s == 0)
    o->sync_interval_s = 1;
  if (!(o->slowdown > 0 && o->slowdown < 1))
    o->slowdown = 0.25;
  if (o->top_k <= 0)
    o->top_k = 5;
  if (!(o->threshold > 0))
    o->threshold = 0.95f;
}

sm_serve *sm_serve_new(const sm_serve_opts *in, sm_err *err) {
  sm_serve *sv;
  int rc;

  if (in == NULL || in->db == NULL || in->db[0] == '\0') {
    sm_err_set(err, SM_EINVAL, "serve: --db URI is required");
    return NULL;
  }
  if (in->socket_path == NULL && in->listen == NULL) {
    sm_err_set(err, SM_EINVAL, "serve: give --socket PATH or --listen");
    return NULL;
  }
  if (in->listen != NULL && (in->token == NULL || strlen(in->token) < 16)) {
    sm_err_set(err, SM_EINVAL,
               "serve: --listen needs a bearer token of at least 16 "
               "characters (--token-file)");
    return NULL;
  }
  sv = sm_calloc(1, sizeof(*sv));
  if (sv == NULL) {
    sm_err_set(err, SM_ENOMEM, "serve: out of memory");
    return NULL;
  }
  sv->o = *in;
  defaults(&sv->o);
  sv->s_db = dup_opt(in->db);
  sv->s_socket = dup_opt(in->socket_path);
  sv->s_listen = dup_opt(in->listen);
  sv->s_token = dup_opt(in->token);
  sv->s_audit = dup_opt(in->audit_path);
  sv->s_journal = dup_opt(in->journal_path);
  sv->o.db = sv->s_db;
  sv->o.socket_path = sv->s_socket;
  sv->o.listen = sv->s_listen;
  sv->o.token = sv->s_token;
  sv->o.audit_path = sv->s_audit;
  sv->o.journal_path = sv->s_journal;
  sv->o.roots = NULL;
  for (int i = 0; i < 2; i++)
    sv->lis[i].fd = -1;
  /* What the channels' workers and the deadline thread do with a
   * request: given to channel.c, which calls nothing above it. */
  sv->hooks.work = sv__work;
  sv->hooks.late = sv__late_result;
  sv->hooks.answered = sv__register_answered;
  pthread_mutex_init(&sv->dl_mu, NULL);
  pthread_cond_init(&sv->dl_cv, NULL);
  pthread_mutex_init(&sv->sy_mu, NULL);
  pthread_cond_init(&sv->sy_cv, NULL);
  atomic_init(&sv->live, 0);
  sv->t_start = sm_now();
  sv->wall_start = sv__wall();
  rc = sv__roots_init(&sv->roots, in->roots, in->n_roots, err);
  if (rc == 0) {
    sv->sigdb = sm_sigdb_new();
    rc = sv->sigdb ? sm_sigdb_load_builtin(sv->sigdb, err)
                   : sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  }
  if (rc == 0)
    rc = sv__hist_open(&sv->hist, sv->s_db, 0, err);
  if (rc == 0)
    rc = sv__llm_check_history(sv, err);
  if (rc == 0)
    rc = sv__jobs_init(&sv->jobs, sv->o.max_jobs, sv->o.max_followed,
                       sv->s_journal, err);
  if (rc == 0)
    rc = sv__journal_replay(sv, err);
  for (int c = 0; rc == 0 && c < SM_SERVE_NCHANNELS; c++) {
    double dl =
        (c == SM_SERVE_SUBMIT ? sv->o.advise_deadline_ms : sv->o.deadline_ms) /
        1000.0;
    rc = sv__chan_init(&sv->ch[c], sv, c, sv->o.queue[c], sv->o.workers[c], dl);
    if (rc != 0)
      sm_err_set(err, rc, "serve: out of memory");
    else if (sv->o.llm != NULL)
      sv->ch[c].llm_cap = sv->o.workers[c] - 1;
  }
  if (rc == 0 && sv->o.llm != NULL) {
    sv->llm_cap = sm_llm_get_config(sv->o.llm)->max_concurrency;
    for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
      if (sv->ch[c].llm_cap < 1)
        sv__log(sv, SM_SERVE_WARN,
                "--workers %s=%d: no worker is left for the LLM stage on the "
                "%s channel (it needs two: one stays for deterministic "
                "answers); that channel's stage is off",
                sv__channel_names[c], sv->o.workers[c], sv__channel_names[c]);
  }
  if (rc == 0 && sv__rate_init(&sv->rate, sv->o.rate, sv->o.burst, 4096) != 0)
    rc = sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  if (rc == 0 && sv->s_socket) {
    sv_listener *L = &sv->lis[sv->n_lis];
    int fd = sm_unix_listen(sv->s_socket, sv->o.socket_mode, 1024, err);
    if (fd < 0) {
      rc = fd;
    } else {
      L->fd = fd;
      L->sv = sv;
      snprintf(L->addr, sizeof(L->addr), "unix:%s", sv->s_socket);
      sv->n_lis++;
    }
  }
  if (rc == 0 && sv->s_listen) {
    sv_listener *L = &sv->lis[sv->n_lis];
    int fd = tcp_listen(sv->s_listen, L->addr, sizeof(L->addr), err);
    if (fd < 0) {
      rc = fd;
    } else {
      L->fd = fd;
      L->sv = sv;
      L->tcp = 1;
      sv->n_lis++;
    }
  }
  if (rc != 0) {
    sm_serve_free(sv);
    return NULL;
  }
  if (sv->roots.n == 0)
    sv__log(sv, SM_SERVE_WARN,
            "no --allow-root: requests that name a repository or a log are "
            "refused (metadata-only advice works)");
  return sv;
}

int sm_serve_start(sm_serve *sv, sm_err *err) {
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                   MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  int rc = 0;

  if (sv->started)
    return 0;
  if ((rc = sm__mhd_load(err)) != 0) /* not installed */
    return rc;
  sv->started = 1;
  for (int c = 0; rc == 0 && c < SM_SERVE_NCHANNELS; c++)
    rc = sv__chan_start(&sv->ch[c], err);
  if (rc == 0)
    rc = sv__deadlines_start(sv, err);
  if (rc == 0)
    rc = sv__sync_start(sv, err);
  for (int i = 0; rc == 0 && i < sv->n_lis; i++) {
    sv_listener *L = &sv->lis[i];
    L->d = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, L, MHD_OPTION_LISTEN_SOCKET, L->fd,
        MHD_OPTION_NOTIFY_COMPLETED, completed, sv, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)sv->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)30, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 << 10),
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, sv, MHD_OPTION_END);
    if (L->d == NULL)
      rc = sm_err_set(err, SM_EIO, "serve: %s: cannot start the HTTP daemon",
                      L->addr);
  }
  if (rc != 0)
    sm_serve_stop(sv);
  else
    for (int i = 0; i < sv->n_lis; i++)
      sv__log(sv, SM_SERVE_INFO, "listening on %s", sv->lis[i].addr);
  return rc;
}

const char *sm_serve_address(const sm_serve *sv, int i) {
  return i >= 0 && i < sv->n_lis ? sv->lis[i].addr : NULL;
}

long long sm_serve_history_size(sm_serve *sv) {
  return (long long)atomic_load(&sv->hist.n);
}

void sm_serve_stop(sm_serve *sv) {
  double t;

  if (sv == NULL || sv->stopped || !sv->started)
    return;
  sv->stopped = 1;
  /* No new connections; then every queued request is answered. */
  for (int i = 0; i < sv->n_lis; i++)
    if (sv->lis[i].d)
      MHD_quiesce_daemon(sv->lis[i].d);
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sv__chan_stop(&sv->ch[c]);
  sv__deadlines_stop(sv);
  sv__sync_stop(sv);
  /* Let the daemons send the answers still on their way. */
  for (t = sm_now(); atomic_load(&sv->live) > 0 && sm_now() - t < 2.0;) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  for (int i = 0; i < sv->n_lis; i++)
    if (sv->lis[i].d) {
      MHD_stop_daemon(sv->lis[i].d);
      sv->lis[i].d = NULL;
    }
}

void sm_serve_free(sm_serve *sv) {
  if (sv == NULL)
    return;
  sm_serve_stop(sv);
  for (int i = 0; i < 2; i++)
    if (sv->lis[i].fd >= 0)
      close(sv->lis[i].fd);
  if (sv->s_socket && sv->n_lis > 0 && !sv->lis[0].tcp)
    unlink(sv->s_socket);
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sv__chan_release(&sv->ch[c]);
  sv__rate_release(&sv->rate);
  sv__jobs_release(&sv->jobs);
  if (sv->hist.uri)
    sv__hist_close(&sv->hist);
  sm_sigdb_free(sv->sigdb);
  sv__roots_release(&sv->roots);
  pthread_mutex_destroy(&sv->dl_mu);
  pthread_cond_destroy(&sv->dl_cv);
  pthread_mutex_destroy(&sv->sy_mu);
  pthread_cond_destroy(&sv->sy_cv);
  sm_free(sv->s_db);
  sm_free(sv->s_socket);
  sm_free(sv->s_listen);
  sm_free(sv->s_token);
  sm_free(sv->s_audit);
  sm_free(sv->s_journal);
  sm_free(sv);
}
