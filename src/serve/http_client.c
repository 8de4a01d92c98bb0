/* http_client.c - a small HTTP/1.1 client for `schedmate serve`, over a
 * UNIX socket or TCP: what the command's --server option, the benchmark
 * and the tests use.  One request at a time per connection, kept alive;
 * bodies by Content-Length, chunked transfer or until the server closes;
 * every wait bounded by one deadline for the whole exchange; headers
 * capped at 64 KiB, bodies at 64 MiB. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "schedmate/sm_serve.h"
#include "util/util_int.h"

#define MAX_HEAD ((size_t)64 << 10)
#define MAX_BODY ((size_t)64 << 20)

struct sm_http_conn {
  int unix_sock;   /* 1: UNIX socket */
  char path[108];  /* its path */
  char host[256];  /* TCP host */
  char port[16];   /* TCP port */
  char *token;     /* bearer token or NULL */
  int timeout_ms;  /* whole exchange */
  int fd;          /* connection, -1 none */
  char where[300]; /* for messages */
};

void sm_http_resp_release(sm_http_resp *r) {
  sm_buf_release(&r->body);
  r->status = 0;
}

sm_http_conn *sm_http_conn_new(const char *server, const char *token,
                               int timeout_ms, sm_err *err) {
  sm_http_conn *c;
  const char *path;

  if (server == NULL || server[0] == '\0') {
    sm_err_set(err, SM_EINVAL, "no server given");
    return NULL;
  }
  c = sm_calloc(1, sizeof(*c));
  if (c == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  c->fd = -1;
  c->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
  snprintf(c->where, sizeof(c->where), "%s", server);
  if ((path = sm__str_after(server, "unix:")) != NULL) {
    if (strlen(path) == 0 || strlen(path) >= sizeof(c->path)) {
      sm_err_set(err, SM_EINVAL, "%s: bad socket path", server);
      sm_free(c);
      return NULL;
    }
    c->unix_sock = 1;
    snprintf(c->path, sizeof(c->path), "%s", path);
  } else {
    const char *h = sm__str_after(server, "http://"), *colon, *end;
    size_t hl;
    if (h == NULL)
      h = server;
    end = h + strcspn(h, "/");
    if (*h == '[') {
      const char *rb = memchr(h, ']', (size_t)(end - h));
      colon = rb && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
      hl = rb ? (size_t)(rb - h - 1) : 0;
      h++;
    } else {
      colon = memchr(h, ':', (size_t)(end - h));
      hl = (size_t)((colon ? colon : end) - h);
    }
    if (hl == 0 || hl >= sizeof(c->host) || colon == NULL ||
        (size_t)(end - colon - 1) == 0 ||
        (size_t)(end - colon - 1) >= sizeof(c->port)) {
      sm_err_set(err, SM_EINVAL, "%s: expected unix:PATH or http://HOST:PORT",
                 server);
      sm_free(c);
      return NULL;
    }
    memcpy(c->host, h, hl);
    memcpy(c->port, colon + 1, (size_t)(end - colon - 1));
  }
  if (token) {
    c->token = sm_strdup(token);
    if (c->token == NULL) {
      sm_free(c);
      sm_err_set(err, SM_ENOMEM, "out of memory");
      return NULL;
    }
  }
  return c;
}

static void drop(sm_http_conn *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

void sm_http_conn_free(sm_http_conn *c) {
  if (c == NULL)
    return;
  drop(c);
  sm_free(c->token);
  sm_free(c);
}

/* Milliseconds left before deadline (monotonic seconds), at least 0. */
static int left_ms(double deadline) {
  double l = (deadline - sm_now()) * 1000;
  return l > 0 ? (int)l + 1 : 0;
}

static int wait_fd(int fd, short ev, double deadline) {
  struct pollfd p = {fd, ev, 0};
  int rc;

  do
    rc = poll(&p, 1, left_ms(deadline));
  while (rc < 0 && errno == EINTR);
  return rc;
}

static int do_connect(sm_http_conn *c, double deadline, sm_err *err) {
  struct addrinfo hints = {0}, *ai = NULL, *a;
  int rc = SM_ECONN;

  if (c->unix_sock) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
      int e = errno;
      if (fd >= 0)
        close(fd);
      return sm_err_set(err, SM_ECONN, "%s: %s", c->where, strerror(e));
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    c->fd = fd;
    return 0;
  }
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(c->host, c->port, &hints, &ai) != 0 || ai == NULL)
    return sm_err_set(err, SM_ECONN, "%s: cannot resolve %s", c->where,
                      c->host);
  for (a = ai; a; a = a->ai_next) {
    int fd =
            socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
        e = 0;
    socklen_t el = sizeof(e);
    if (fd < 0)
      continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      e = errno;
    } else if (wait_fd(fd, POLLOUT, deadline) <= 0) {
      e = ETIMEDOUT;
    } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0) {
      e = errno;
    }
    if (e == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      c->fd = fd;
      rc = 0;
      break;
    }
    close(fd);
    rc = sm_err_set(err, e == ETIMEDOUT ? SM_ETIMEOUT : SM_ECONN, "%s: %s",
                    c->where, strerror(e));
  }
  freeaddrinfo(ai);
  return rc;
}

static int send_all(sm_http_conn *c, const char *p, size_t n, double deadline,
                    sm_err *err) {
  while (n > 0) {
    ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(c->fd, POLLOUT, deadline) <= 0)
        return sm_err_set(err, SM_ETIMEOUT, "%s: timed out sending", c->where);
      continue;
    }
    return sm_err_set(err, SM_ECONN, "%s: send: %s", c->where,
                      k < 0 ? strerror(errno) : "closed");
  }
  return 0;
}

/* Reads more bytes into in; returns the count, 0 at end, or a code. */
static ssize_t fill(sm_http_conn *c, sm_buf *in, double deadline, sm_err *err);

/* Reads more of an answer whose end is not there yet: 0, or a code (the
 * connection's end is "answer cut short"). */
static int fill_more(sm_http_conn *c, sm_buf *in, double deadline,
                     sm_err *err) {
  ssize_t k = fill(c, in, deadline, err);

  if (k > 0)
    return 0;
  return k < 0 ? (int)k
               : sm_err_set(err, SM_ECONN, "%s: answer cut short", c->where);
}

static ssize_t fill(sm_http_conn *c, sm_buf *in, double deadline, sm_err *err) {
  char buf[65536];

  for (;;) {
    ssize_t k = recv(c->fd, buf, sizeof(buf), 0);
    if (k > 0) {
      if (sm_buf_add(in, buf, (size_t)k) != 0)
        return sm_err_set(err, SM_ETOOBIG, "%s: answer too large", c->where);
      return k;
    }
    if (k == 0)
      return 0;
    if (errno == EAGAIN || errno == EINTR) {
      if (wait_fd(c->fd, POLLIN, deadline) <= 0)
        return sm_err_set(err, SM_ETIMEOUT, "%s: no answer in time", c->where);
      continue;
    }
    return sm_err_set(err, SM_ECONN, "%s: recv: %s", c->where, strerror(errno));
  }
}

/* A header's value in the head block (NUL-terminated copy), or 0. */
static int header(const char *head, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  const char *p = strstr(head, "\r\n");

  while (p && p[2] != '\r') {
    p += 2;
    if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
      const char *v = p + nl + 1, *e = strstr(v, "\r\n");
      size_t n;
      v = sm__str_skip_blanks(v);
      n = e ? (size_t)(e - v) : strlen(v);
      if (n >= cap)
        n = cap - 1;
      memcpy(out, v, n);
      out[n] = '\0';
      return 1;
    }
    p = strstr(p, "\r\n");
  }
  return 0;
}

/* Decodes a chunked body from raw; returns 1 when complete, 0 when more
 * bytes are needed, or a negative code. */
static int dechunk(const char *raw, size_t n, sm_buf *out) {
  size_t p = 0;

  sm_buf_reset(out);
  for (;;) {
    char *end;
    unsigned long long sz;
    const char *crlf = memmem(raw + p, n - p, "\r\n", 2);
    if (crlf == NULL)
      return 0;
    sz = strtoull(raw + p, &end, 16);
    if (end == raw + p)
      return SM_EPARSE;
    p = (size_t)(crlf - raw) + 2;
    if (sz == 0)
      return memmem(raw + p, n - p, "\r\n", 2) ? 1 : 0;
    if (sz > MAX_BODY || n - p < sz + 2)
      return sz > MAX_BODY ? SM_ETOOBIG : 0;
    if (sm_buf_add(out, raw + p, (size_t)sz) != 0)
      return SM_ETOOBIG;
    p += (size_t)sz + 2;
  }
}

static int exchange(sm_http_conn *c, const char *method, const char *path,
                    const char *body, size_t len, sm_http_resp *r,
                    double deadline, int *got_any, sm_err *err) {
  sm_buf req, in;
  char v[128];
  size_t hend = 0;
  int rc, close_after = 0, fail = 0;

  *got_any = 0;
  sm_buf_init(&req, 0);
  sm_buf_addf(&req,
              "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: schedmate/%s\r\n"
              "Accept: application/json\r\n",
              method, path, c->unix_sock ? "localhost" : c->host,
              SM_VERSION_STRING);
  if (c->token)
    sm_buf_addf(&req, "Authorization: Bearer %s\r\n", c->token);
  if (body)
    sm_buf_addf(
        &req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", len);
  sm_buf_adds(&req, "\r\n");
  /* Head and body in one write: two small writes would wait for the
   * peer's delayed acknowledgement (Nagle). */
  if (body && len && sm_buf_add(&req, body, len) != 0) {
    sm_buf_release(&req);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  rc = send_all(c, req.data, req.len, deadline, err);
  sm_buf_release(&req);
  if (rc != 0)
    return rc;
  sm_buf_init(&in, MAX_HEAD + MAX_BODY);
  /* The head. */
  for (;;) {
    const char *e = in.len ? memmem(in.data, in.len, "\r\n\r\n", 4) : NULL;
    ssize_t k;
    if (e) {
      hend = (size_t)(e - in.data) + 4;
      break;
    }
    if (in.len > MAX_HEAD) {
      sm_buf_release(&in);
      return sm_err_set(err, SM_EPARSE, "%s: header too large", c->where);
    }
    k = fill(c, &in, deadline, err);
    if (k < 0) {
      sm_buf_release(&in);
      return (int)k;
    }
    if (k == 0) {
      sm_buf_release(&in);
      return sm_err_set(err, SM_ECONN, "%s: connection closed", c->where);
    }
    *got_any = 1;
  }
  in.data[hend - 2] = '\0'; /* the head as a string (ends "\r\n") */
  if (strncmp(in.data, "HTTP/1.", 7) != 0 || strlen(in.data) < 12) {
    sm_buf_release(&in);
    return sm_err_set(err, SM_EPARSE, "%s: not an HTTP answer", c->where);
  }
  r->status = atoi(in.data + 9);
  close_after = in.data[7] == '0';
  if (header(in.data, "Connection", v, sizeof(v)) &&
      strcasecmp(v, "close") == 0)
    close_after = 1;
  if (header(in.data, "Retry-After", v, sizeof(v)))
    r->retry_after = atof(v);
  if (header(in.data, "Content-Type", v, sizeof(v)))
    snprintf(r->ctype, sizeof(r->ctype), "%.*s", (int)sizeof(r->ctype) - 1, v);
  if (header(in.data, "Content-Length", v, sizeof(v))) {
    unsigned long long n = strtoull(v, NULL, 10);
    if (n > MAX_BODY) {
      sm_buf_release(&in);
      return sm_err_set(err, SM_ETOOBIG, "%s: answer too large", c->where);
    }
    while (fail == 0 && in.len - hend < n)
      fail = fill_more(c, &in, deadline, err);
    if (fail == 0)
      rc = sm_buf_add(&r->body, in.data + hend, (size_t)n);
  } else if (header(in.data, "Transfer-Encoding", v, sizeof(v)) &&
             strcasecmp(v, "chunked") == 0) {
    while (fail == 0 &&
           (rc = dechunk(in.data + hend, in.len - hend, &r->body)) == 0)
      fail = fill_more(c, &in, deadline, err);
    rc = rc == 1 ? 0 : rc;
  } else {
    ssize_t k;
    while ((k = fill(c, &in, deadline, err)) > 0)
      ;
    if (k < 0) {
      sm_buf_release(&in);
      return (int)k;
    }
    rc = sm_buf_add(&r->body, in.data + hend, in.len - hend);
    close_after = 1;
  }
  sm_buf_release(&in);
  if (fail != 0) /* the answer was cut short or could not be read */
    return fail;
  if (rc != 0)
    return sm_err_set(err, rc, "%s: bad answer body", c->where);
  if (close_after)
    drop(c);
  return 0;
}

int sm_http_request(sm_http_conn *c, const char *method, const char *path,
                    const char *body, size_t len, sm_http_resp *r,
                    sm_err *err) {
  double deadline = sm_now() + c->timeout_ms / 1000.0;
  int reused, rc, got_any;

  memset(r, 0, sizeof(*r));
  sm_buf_init(&r->body, MAX_BODY);
  r->retry_after = -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    sm_err e = {0};
    reused = c->fd >= 0;
    if (c->fd < 0 && (rc = do_connect(c, deadline, err)) != 0)
      return rc;
    rc = exchange(c, method, path, body, len, r, deadline, &got_any, &e);
    if (rc == 0)
      return 0;
    drop(c);
    sm_buf_reset(&r->body);
    /* A kept connection the server had closed: once more, afresh. */
    if (!(reused && !got_any && rc == SM_ECONN)) {
      sm_err_set(err, rc, "%s", e.msg);
      return rc;
    }
  }
  return sm_err_set(err, SM_ECONN, "%s: connection lost", c->where);
}
