/* load.c - a bounded load generator for `schedmate serve`: C clients
 * (threads, one kept-alive connection each) send N requests in all,
 * cycling through the request bodies of a file (one JSON object a line),
 * and the latency of every request is kept.  Prints one JSON object:
 * count, errors (transport failures and non-2xx answers), latency
 * quantiles, throughput, and the server's resident memory before and
 * after when its pid is given.
 *
 *   load SERVER N CLIENTS BODIES [--path P] [--token-file F] [--pid PID]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_serve.h"

typedef struct shared {
  const char *server, *path;
  char *token;
  char **bodies;
  size_t n_bodies;
  long n;
  atomic_long next;
  atomic_long errors;
  atomic_long codes[6]; /* 1xx..5xx, transport */
  double *lat;
} shared;

static void *client(void *arg) {
  shared *s = arg;
  sm_err err = {0};
  sm_http_conn *c = sm_http_conn_new(s->server, s->token, 30000, &err);

  if (c == NULL) {
    fprintf(stderr, "load: %s\n", err.msg);
    exit(2);
  }
  for (;;) {
    long i = atomic_fetch_add(&s->next, 1);
    const char *b;
    sm_http_resp r;
    double t0;
    int rc;
    if (i >= s->n)
      break;
    b = s->bodies[(size_t)i % s->n_bodies];
    t0 = sm_now();
    rc = sm_http_request(c, "POST", s->path, b, strlen(b), &r, &err);
    s->lat[i] = (sm_now() - t0) * 1000;
    if (rc != 0) {
      atomic_fetch_add(&s->errors, 1);
      atomic_fetch_add(&s->codes[5], 1);
      if (atomic_load(&s->errors) <= 3)
        fprintf(stderr, "load: %s\n", err.msg);
      sm_err_clear(&err);
      continue;
    }
    if (r.status < 200 || r.status > 299) {
      atomic_fetch_add(&s->errors, 1);
      if (atomic_load(&s->errors) <= 3)
        fprintf(stderr, "load: HTTP %d: %.200s\n", r.status,
                sm_buf_str(&r.body));
    }
    if (r.status >= 100 && r.status < 600)
      atomic_fetch_add(&s->codes[r.status / 100 - 1], 1);
    sm_http_resp_release(&r);
  }
  sm_http_conn_free(c);
  return NULL;
}

static long rss_kb(long pid) {
  char p[64], line[256];
  long kb = -1;
  FILE *f;

  if (pid <= 0)
    return -1;
  snprintf(p, sizeof(p), "/proc/%ld/status", pid);
  f = fopen(p, "r");
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, "VmRSS:", 6) == 0)
      kb = strtol(line + 6, NULL, 10);
  fclose(f);
  return kb;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  shared s = {0};
  const char *tokf = NULL;
  long clients, pid = 0, rss0, rss1;
  pthread_t *th;
  char *text, *line, *save;
  size_t len;
  sm_err err = {0};
  double t0, wall, sum = 0;

  if (argc < 5) {
    fprintf(stderr, "usage: load SERVER N CLIENTS BODIES [--path P] "
                    "[--token-file F] [--pid PID]\n");
    return 2;
  }
  s.server = argv[1];
  s.n = atol(argv[2]);
  clients = atol(argv[3]);
  s.path = "/v1/advise";
  for (int i = 5; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--path") == 0)
      s.path = argv[i + 1];
    else if (strcmp(argv[i], "--token-file") == 0)
      tokf = argv[i + 1];
    else if (strcmp(argv[i], "--pid") == 0)
      pid = atol(argv[i + 1]);
  }
  if (s.n <= 0 || clients <= 0) {
    fprintf(stderr, "load: N and CLIENTS must be positive\n");
    return 2;
  }
  if (tokf) {
    if (sm_file_read_all(tokf, 4096, &s.token, &len, &err) != 0) {
      fprintf(stderr, "load: %s\n", err.msg);
      return 2;
    }
    while (len > 0 && strchr(" \r\n\t", s.token[len - 1]))
      s.token[--len] = '\0';
  }
  if (sm_file_read_all(argv[4], (size_t)256 << 20, &text, &len, &err) != 0) {
    fprintf(stderr, "load: %s\n", err.msg);
    return 2;
  }
  for (line = strtok_r(text, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    s.bodies = realloc(s.bodies, (s.n_bodies + 1) * sizeof(char *));
    s.bodies[s.n_bodies++] = line;
  }
  if (s.n_bodies == 0) {
    fprintf(stderr, "load: %s: no request bodies\n", argv[4]);
    return 2;
  }
  s.lat = calloc((size_t)s.n, sizeof(double));
  th = calloc((size_t)clients, sizeof(pthread_t));
  rss0 = rss_kb(pid);
  t0 = sm_now();
  for (long i = 0; i < clients; i++)
    pthread_create(&th[i], NULL, client, &s);
  for (long i = 0; i < clients; i++)
    pthread_join(th[i], NULL);
  wall = sm_now() - t0;
  rss1 = rss_kb(pid);
  for (long i = 0; i < s.n; i++)
    sum += s.lat[i];
  qsort(s.lat, (size_t)s.n, sizeof(double), cmp);
  printf("{\"n\":%ld,\"clients\":%ld,\"errors\":%ld,\"p50_ms\":%.3f,"
         "\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f,"
         "\"wall_s\":%.3f,\"throughput_rps\":%.1f,\"codes\":{\"2xx\":%ld,"
         "\"4xx\":%ld,\"5xx\":%ld,\"transport\":%ld},\"rss_before_kb\":%ld,"
         "\"rss_after_kb\":%ld}\n",
         s.n, clients, atomic_load(&s.errors), s.lat[(s.n - 1) / 2],
         s.lat[(long)((s.n - 1) * 0.9)], s.lat[(long)((s.n - 1) * 0.99)],
         s.lat[s.n - 1], sum / (double)s.n, wall, (double)s.n / wall,
         atomic_load(&s.codes[1]), atomic_load(&s.codes[3]),
         atomic_load(&s.codes[4]), atomic_load(&s.codes[5]), rss0, rss1);
  free(s.lat);
  free(th);
  free(s.bodies);
  sm_free(text);
  sm_free(s.token);
  return atomic_load(&s.errors) == 0 ? 0 : 1;
}
