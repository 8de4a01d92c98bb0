/* metrics.c - the service's counters and latency histograms, and
 * GET /metrics in the Prometheus text format (version 0.0.4): requests by
 * endpoint and status code, request latency and queue wait as histograms,
 * advice fallbacks by reason, refusals, queue depths and capacities, busy
 * workers, registered jobs, followed logs, history size, write-backs,
 * other writers' records taken into the index.  Everything is a lock-free
 * counter; rendering reads them as they are.  What other parts keep
 * behind their locks (queue depths, jobs, followed logs, fingerprints)
 * the caller reads and passes in (sv_gauges): this file calls nothing
 * of the folder but base.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve/mhd_load_int.h"
#include "serve/serve_int.h"

/* Upper bounds of the latency buckets, seconds. */
static const double bounds[SV_NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                           0.025,  0.05,  0.1,    0.25,  0.5,
                                           1,      2.5,   5,      10};

static const int codes[SV_NCODES - 1] = {200, 201, 400, 401, 403, 404, 405,
                                         409, 413, 422, 429, 500, 503, 504};

static const char *const fallback_names[SV_NFALLBACKS] = {
    "no_match",
    "below_threshold",
    "extract_failed",
    "inconsistent_history",
    "history_unavailable",
    "too_little_known",
    "deadline",
    "other",
    NULL};

int sv__code_index(int status) {
  for (int i = 0; i < (int)SM_ARRAY_LEN(codes); i++)
    if (codes[i] == status)
      return i;
  return SV_NCODES - 1;
}

void sv__observe(sv_histo *h, double seconds) {
  int i = 0;

  if (!(seconds >= 0))
    seconds = 0;
  while (i < SV_NBUCKETS && seconds > bounds[i])
    i++;
  atomic_fetch_add(&h->b[i], 1);
  atomic_fetch_add(&h->n, 1);
  atomic_fetch_add(&h->sum_ns, (unsigned long long)(seconds * 1e9));
}

void sv__count_fallback(sv_metrics *m, const char *reason) {
  int i;

  if (reason == NULL)
    return;
  for (i = 0; i < SV_NFALLBACKS - 2; i++)
    if (strcmp(fallback_names[i], reason) == 0)
      break;
  atomic_fetch_add(&m->fallbacks[i], 1);
}

static void head(sm_buf *b, const char *name, const char *type,
                 const char *help) {
  sm_buf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter without labels: its header and its one sample. */
static void counter(sm_buf *b, const char *name, const char *help,
                    unsigned long long v) {
  head(b, name, "counter", help);
  sm_buf_addf(b, "%s %llu\n", name, v);
}

/* A gauge without labels, a whole number. */
static void gauge(sm_buf *b, const char *name, const char *help, long long v) {
  head(b, name, "gauge", help);
  sm_buf_addf(b, "%s %lld\n", name, v);
}

/* A counter with one sample a channel. */
static void channel_counter(sm_buf *b, const char *name, const char *help,
                            const atomic_ullong *v) {
  head(b, name, "counter", help);
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "%s{channel=\"%s\"} %llu\n", name, sv__channel_names[c],
                (unsigned long long)atomic_load(&v[c]));
}

static void histo(sm_buf *b, const char *name, const char *label,
                  const char *value, const sv_histo *h) {
  unsigned long long cum = 0;

  for (int i = 0; i <= SV_NBUCKETS; i++) {
    cum += atomic_load(&h->b[i]);
    sm_buf_addf(b, "%s_bucket{%s=\"%s\",le=\"", name, label, value);
    if (i < SV_NBUCKETS)
      sm_buf_addf(b, "%g", bounds[i]);
    else
      sm_buf_adds(b, "+Inf");
    sm_buf_addf(b, "\"} %llu\n", cum);
  }
  sm_buf_addf(b, "%s_sum{%s=\"%s\"} %.9g\n", name, label, value,
              (double)atomic_load(&h->sum_ns) / 1e9);
  sm_buf_addf(b, "%s_count{%s=\"%s\"} %llu\n", name, label, value,
              (unsigned long long)atomic_load(&h->n));
}

void sv__metrics_render(sm_serve *sv, const sv_gauges *g, sm_buf *b) {
  sv_metrics *m = &sv->m;
  static const char req_name[] = "schedmate_serve_requests_total";
  static const char lat_name[] = "schedmate_serve_request_duration_seconds";
  static const char wait_name[] = "schedmate_serve_queue_wait_seconds";

  head(b, req_name, "counter", "HTTP requests answered, by endpoint and code.");
  for (int e = 0; e < EP__COUNT; e++)
    for (int c = 0; c < SV_NCODES; c++) {
      unsigned long long v = atomic_load(&m->req[e][c]);
      if (v == 0 && !(c == 0 && e != EP_OTHER))
        continue;
      sm_buf_addf(b, "%s{endpoint=\"%s\",code=\"", req_name, sv__ep_name(e));
      if (c < SV_NCODES - 1)
        sm_buf_addf(b, "%d", codes[c]);
      else
        sm_buf_adds(b, "other");
      sm_buf_addf(b, "\"} %llu\n", v);
    }
  head(b, lat_name, "histogram",
       "Time from a request's arrival to its answer, by endpoint.");
  for (int e = 0; e < EP__COUNT; e++)
    if (e != EP_OTHER)
      histo(b, lat_name, "endpoint", sv__ep_name(e), &m->lat[e]);
  head(b, wait_name, "histogram",
       "Time a request waited in its channel's queue, by channel.");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    histo(b, wait_name, "channel", sv__channel_names[c], &m->wait[c]);

  head(b, "schedmate_serve_fallbacks_total", "counter",
       "Advice answered with a fallback, by reason.");
  for (int i = 0; i < SV_NFALLBACKS - 1; i++)
    sm_buf_addf(b, "schedmate_serve_fallbacks_total{reason=\"%s\"} %llu\n",
                fallback_names[i],
                (unsigned long long)atomic_load(&m->fallbacks[i]));
  channel_counter(
      b, "schedmate_serve_queue_full_total",
      "Requests refused because their channel's queue was full (503).",
      m->full);
  channel_counter(
      b, "schedmate_serve_deadline_exceeded_total",
      "Requests answered by their deadline rather than their worker.", m->late);
  head(b, "schedmate_serve_queue_depth", "gauge",
       "Requests waiting in each channel's queue.");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_queue_depth{channel=\"%s\"} %d\n",
                sv__channel_names[c], g->depth[c]);
  head(b, "schedmate_serve_queue_capacity", "gauge",
       "Capacity of each channel's queue.");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_queue_capacity{channel=\"%s\"} %d\n",
                sv__channel_names[c], sv->ch[c].cap);
  head(b, "schedmate_serve_workers_busy", "gauge",
       "Workers of each channel inside a request.");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_workers_busy{channel=\"%s\"} %d\n",
                sv__channel_names[c], atomic_load(&sv->ch[c].busy));
  head(b, "schedmate_serve_workers", "gauge", "Workers of each channel.");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_workers{channel=\"%s\"} %d\n",
                sv__channel_names[c], sv->ch[c].n_thr);

  counter(b, "schedmate_serve_rate_limited_total",
          "Requests refused by a client's rate limit (429).",
          (unsigned long long)atomic_load(&m->rate_limited));
  counter(b, "schedmate_serve_forbidden_total",
          "Requests naming a path outside the allowed roots (403).",
          (unsigned long long)atomic_load(&m->forbidden));
  counter(b, "schedmate_serve_unauthorized_total",
          "TCP requests without the right bearer token (401).",
          (unsigned long long)atomic_load(&m->unauthorized));
  head(b, "schedmate_serve_writebacks_total", "counter",
       "Job outcomes written back, by result.");
  sm_buf_addf(b,
              "schedmate_serve_writebacks_total{result=\"committed\"} %llu\n",
              (unsigned long long)atomic_load(&m->writebacks_ok));
  sm_buf_addf(b, "schedmate_serve_writebacks_total{result=\"failed\"} %llu\n",
              (unsigned long long)atomic_load(&m->writebacks_failed));
  counter(b, "schedmate_serve_interference_total",
          "Jobs whose rate dropped after another job joined their node.",
          (unsigned long long)atomic_load(&m->interference));
  gauge(b, "schedmate_serve_history_records",
        "Records in the in-memory history index.",
        (long long)atomic_load(&sv->hist.n));
  head(b, "schedmate_serve_advise_searches_total", "counter",
       "Advice answered by the exact pre-search from a few records "
       "(presearch) or by a search of the whole index (full).");
  sm_buf_addf(
      b, "schedmate_serve_advise_searches_total{path=\"presearch\"} %llu\n",
      (unsigned long long)atomic_load(&sv->hist.presearched));
  sm_buf_addf(b, "schedmate_serve_advise_searches_total{path=\"full\"} %llu\n",
              (unsigned long long)atomic_load(&sv->hist.full_search));
  gauge(b, "schedmate_serve_history_fingerprints",
        "Distinct fingerprints among the index's records (the pre-search's "
        "groups; 0 without it).",
        (long long)g->fingerprints);
  counter(b, "schedmate_serve_history_synced_total",
          "Records other writers added that were taken into the index.",
          (unsigned long long)atomic_load(&sv->hist.syncs));
  counter(b, "schedmate_serve_history_reloads_total",
          "Full reloads of the index after other writers replaced records.",
          (unsigned long long)atomic_load(&sv->hist.reloads));
  counter(b, "schedmate_serve_history_sync_errors_total",
          "Polls of the store for other writers' records that failed.",
          (unsigned long long)atomic_load(&sv->hist.sync_errors));
  gauge(b, "schedmate_serve_jobs_registered", "Jobs registered and not ended.",
        g->jobs);
  gauge(b, "schedmate_serve_logs_followed",
        "Job logs followed by the run channel right now.", g->followed);
  {
    unsigned n = 0;
    for (int i = 0; i < sv->n_lis; i++) {
      const union MHD_DaemonInfo *di =
          sv->lis[i].d ? MHD_get_daemon_info(
                             sv->lis[i].d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS)
                       : NULL;
      if (di)
        n += di->num_connections;
    }
    gauge(b, "schedmate_serve_connections", "Open HTTP connections.", n);
  }
  head(b, "schedmate_serve_start_time_seconds", "gauge",
       "Unix time the service started.");
  sm_buf_addf(b, "schedmate_serve_start_time_seconds %.3f\n", sv->wall_start);
}
