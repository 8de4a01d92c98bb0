/* server.c - the agent's answers to the job_submit plugin.
 *
 * slurmctld calls the plugin with its job lock held, so the plugin gives
 * the agent a hard deadline (50 ms by default) and accepts the job
 * unchanged when it passes.  The answers therefore come from a thread of
 * their own that never waits on the main loop: it owns a history store
 * connection, extracts with a short time budget (30 ms by default) and
 * answers one request line per connection:
 *
 *   {"op":"estimate","uid":N,"name":"...","work_dir":"...","script":"...",
 *    "argv":[...],"partition":"...","tres_per_node":"...",
 *    "tres_per_job":"...","min_nodes":N}
 *   -> "OK <time_limit_minutes|-> <comment>\n" or "NO <reason>\n"
 *
 * In shadow mode (without --annotate) the answer is "NO shadow mode": the
 * submit channel still advises and audits the job once it is queued.
 * Only root and the owner of the socket's directory (the Slurm user, when
 * it is created that way) may connect: the peer's credentials are checked,
 * because an answer reveals facts about a user's repository.  A client
 * that sends nothing useful within a second, or more than 512 KiB, is
 * dropped. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cJSON.h>

#include "slurm/slurm_int.h"

#define MAX_CLIENTS 32
#define MAX_REQUEST ((size_t)512 << 10)
#define CLIENT_TIMEOUT_S 1.0
#define MAX_ARGS 64

/* ==== One answer ==== */

static const char *jstr(cJSON *o, const char *k) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int answer_no(sm_slurm_agent *a, sm_buf *reply, const char *why) {
  sm__count(a, &a->cnt.answers_no, 1);
  return sm_buf_addf(reply, "NO %s\n", why);
}

int sm_slurm_answer(sm_slurm_agent *a, const char *req, size_t len,
                    sm_buf *reply) {
  cJSON *o, *v;
  const char *op, *script;
  const char *argv[MAX_ARGS];
  sm__advise_in in;
  sm__advice_sum sum;
  sm_meta meta;
  sm_buf detail, ab;
  sm_jw dw, w;
  int rc, gpn = 0, gpt = 0;

  if (!a->o.enforce && !a->o.annotate)
    return answer_no(a, reply, "shadow mode");
  o = cJSON_ParseWithLength(req, len);
  if (o == NULL || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return answer_no(a, reply, "malformed request");
  }
  op = jstr(o, "op");
  v = cJSON_GetObjectItemCaseSensitive(o, "uid");
  if (op == NULL || strcmp(op, "estimate") != 0 || !cJSON_IsNumber(v) ||
      v->valuedouble < 0 || v->valuedouble > 4294967295.0) {
    cJSON_Delete(o);
    return answer_no(a, reply, "unknown request");
  }
  memset(&in, 0, sizeof(in));
  in.uid = (uint32_t)v->valuedouble;
  in.name = jstr(o, "name");
  in.work_dir = jstr(o, "work_dir");
  in.partition = jstr(o, "partition");
  script = jstr(o, "script");
  if (script != NULL) {
    in.script = script;
    in.script_len = strlen(script);
  }
  v = cJSON_GetObjectItemCaseSensitive(o, "argv");
  if (cJSON_IsArray(v)) {
    cJSON *e;
    cJSON_ArrayForEach(e, v) {
      if (cJSON_IsString(e) && in.argc < MAX_ARGS)
        argv[in.argc++] = e->valuestring;
    }
    in.argv = argv;
  }
  if (jstr(o, "tres_per_node") &&
      sm_slurm_parse_gpus(jstr(o, "tres_per_node"), &gpn, NULL, 0) == 0)
    in.gpus_per_node = gpn;
  if (jstr(o, "tres_per_job") &&
      sm_slurm_parse_gpus(jstr(o, "tres_per_job"), &gpt, NULL, 0) == 0)
    in.gpus_total = gpt;
  v = cJSON_GetObjectItemCaseSensitive(o, "min_nodes");
  if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble < 1e6)
    in.nodes = (int)v->valuedouble;
  in.budget_s = a->o.answer_budget_s;
  sm_meta_init(&meta);
  sm_buf_init(&detail, (size_t)1 << 20);
  sm_jw_init(&dw, &detail);
  sm_jw_obj_begin(&dw);
  rc = sm__advise_job(a, a->sstore ? a->sstore : a->store, &in, &sum, &meta,
                      &dw);
  sm_jw_obj_end(&dw);
  if (rc == 0) {
    sm__count(a, &a->cnt.answers, 1);
    if (sum.tl_min > 0 && a->o.enforce)
      rc = sm_buf_addf(reply, "OK %u %s\n", (unsigned)sum.tl_min, sum.note);
    else
      rc = sm_buf_addf(reply, "OK - %s\n", sum.note);
    sm__audit_begin(a, &w, &ab, "plugin", sum.has_est ? "estimate" : "fallback",
                    0);
    sm_jw_key(&w, "name");
    sm_jw_str(&w, in.name ? in.name : "");
    sm_jw_key(&w, "uid");
    sm_jw_int(&w, in.uid);
    sm_jw_key(&w, "estimate_s");
    sm_jw_num(&w, sum.has_est ? round(sum.est_s * 10) / 10 : NAN);
    sm_jw_key(&w, "comment");
    sm_jw_str(&w, sum.note);
    sm_jw_key(&w, "advice");
    if (sm_jw_finish(&dw) == 0)
      sm_jw_raw(&w, sm_buf_str(&detail));
    else
      sm_jw_null(&w);
    sm__audit_end(a, &w, &ab, 1, "answered");
  } else {
    rc = answer_no(a, reply, "out of memory");
  }
  sm_buf_release(&detail);
  sm_meta_release(&meta);
  cJSON_Delete(o);
  return rc;
}

/* ==== The socket thread ==== */

typedef struct client {
  int fd;       /* connection, -1 when free */
  double since; /* accept time */
  sm_buf in;    /* request bytes so far */
} client;

static void client_close(client *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  sm_buf_release(&c->in);
}

/* Root and the owner of the socket's directory may ask. */
static int peer_allowed(sm_slurm_agent *a, int fd) {
  unsigned uid;
  char dir[4096];
  struct stat st;
  char *slash;

  if (sm_unix_peer(fd, &uid, NULL) != 0)
    return 0;
  if (uid == 0 || uid == getuid())
    return 1;
  snprintf(dir, sizeof(dir), "%s", a->o.socket_path);
  slash = strrchr(dir, '/');
  if (slash != NULL && slash != dir)
    *slash = '\0';
  else if (slash == dir)
    dir[1] = '\0';
  else
    snprintf(dir, sizeof(dir), ".");
  return stat(dir, &st) == 0 && st.st_uid == uid;
}

static void serve_request(sm_slurm_agent *a, client *c) {
  sm_buf reply;
  char *nl = memchr(c->in.data, '\n', c->in.len);
  size_t off = 0;

  sm_buf_init(&reply, 4096);
  if (sm_slurm_answer(a, c->in.data, (size_t)(nl - c->in.data), &reply) != 0)
    sm_buf_adds(&reply, "NO out of memory\n");
  /* The reply is small; a client that cannot take it at once is gone. */
  while (off < reply.len) {
    ssize_t k = send(c->fd, reply.data + off, reply.len - off, MSG_NOSIGNAL);
    if (k <= 0)
      break;
    off += (size_t)k;
  }
  sm_buf_release(&reply);
  client_close(c);
}

static void *serve_thread(void *arg) {
  sm_slurm_agent *a = arg;
  client cl[MAX_CLIENTS];
  sm_err err = {0};

  for (int i = 0; i < MAX_CLIENTS; i++) {
    cl[i].fd = -1;
    sm_buf_init(&cl[i].in, MAX_REQUEST);
  }
  a->sstore = sm_store_open(a->o.db, 0, 500, &err);
  if (a->sstore == NULL)
    sm__log(a, SM_SLURM_WARN, "socket: history: %s (answers fall back)",
            err.msg);
  for (;;) {
    struct pollfd p[MAX_CLIENTS + 2];
    int np = 0, map[MAX_CLIENTS + 2];
    double now = sm_now();
    p[np].fd = a->stop_pipe[0];
    p[np++].events = POLLIN;
    p[np].fd = a->listen_fd;
    p[np++].events = POLLIN;
    for (int i = 0; i < MAX_CLIENTS; i++) {
      if (cl[i].fd < 0)
        continue;
      if (now - cl[i].since > CLIENT_TIMEOUT_S) {
        client_close(&cl[i]);
        continue;
      }
      map[np] = i;
      p[np].fd = cl[i].fd;
      p[np++].events = POLLIN;
    }
    if (poll(p, (nfds_t)np, 250) < 0) {
      if (errno == EINTR)
        continue;
      sm__log(a, SM_SLURM_ERROR, "socket: poll: %s", strerror(errno));
      break;
    }
    if (p[0].revents)
      break;
    if (p[1].revents & POLLIN) {
      int fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      int slot = -1;
      for (int i = 0; fd >= 0 && i < MAX_CLIENTS && slot < 0; i++)
        if (cl[i].fd < 0)
          slot = i;
      if (fd >= 0 && (slot < 0 || !peer_allowed(a, fd))) {
        if (slot >= 0)
          (void)!write(fd, "NO not allowed\n", 15);
        close(fd);
      } else if (fd >= 0) {
        cl[slot].fd = fd;
        cl[slot].since = now;
        sm_buf_reset(&cl[slot].in);
      }
    }
    for (int k = 2; k < np; k++) {
      client *c = &cl[map[k]];
      char buf[65536];
      ssize_t r;
      if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      r = recv(c->fd, buf, sizeof(buf), 0);
      if (r <= 0) {
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
          continue;
        client_close(c);
        continue;
      }
      if (sm_buf_add(&c->in, buf, (size_t)r) != 0) {
        (void)!write(c->fd, "NO request too large\n", 21);
        client_close(c);
        continue;
      }
      if (memchr(c->in.data, '\n', c->in.len) != NULL)
        serve_request(a, c);
    }
  }
  for (int i = 0; i < MAX_CLIENTS; i++)
    client_close(&cl[i]);
  sm_store_close(a->sstore);
  a->sstore = NULL;
  return NULL;
}

int sm_slurm_serve_start(sm_slurm_agent *a, sm_err *err) {
  const char *path = a->o.socket_path;
  sigset_t all, old;
  int fd, rc;

  if (a->serving)
    return 0;
  if (path == NULL || path[0] == '\0')
    return sm_err_set(err, SM_EINVAL, "socket: no path given");
  if (strncmp(a->o.db, "mem:", 4) == 0)
    return sm_err_set(err, SM_EINVAL,
                      "socket: a mem: history cannot be shared with the "
                      "answering thread; use a file or redis://");
  fd = sm_unix_listen(path, 0666, 64, err);
  if (fd < 0)
    return fd;
  if (pipe2(a->stop_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    close(fd);
    unlink(path);
    return sm_err_set(err, sm_err_from_errno(e), "pipe: %s", strerror(e));
  }
  a->listen_fd = fd;
  /* Signals go to the main thread, which stops the agent. */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  rc = pthread_create(&a->thr, NULL, serve_thread, a);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    close(fd);
    unlink(path);
    close(a->stop_pipe[0]);
    close(a->stop_pipe[1]);
    a->stop_pipe[0] = a->stop_pipe[1] = a->listen_fd = -1;
    return sm_err_set(err, SM_ENOMEM, "socket: cannot start the thread");
  }
  a->serving = 1;
  sm__log(a, SM_SLURM_INFO, "socket: answering the plugin on %s", path);
  return 0;
}

void sm_slurm_serve_stop(sm_slurm_agent *a) {
  if (a == NULL || !a->serving)
    return;
  (void)!write(a->stop_pipe[1], "x", 1);
  pthread_join(a->thr, NULL);
  close(a->stop_pipe[0]);
  close(a->stop_pipe[1]);
  close(a->listen_fd);
  unlink(a->o.socket_path);
  a->stop_pipe[0] = a->stop_pipe[1] = a->listen_fd = -1;
  a->serving = 0;
}
