/* report.c - a self-contained HTML report of one or more runs on the same
 * trace: a summary table, the JCT CDF of each policy, the queue length
 * and the GPU utilisation over time, the extra figures and the notes.
 *
 * Plots are inline SVG drawn here (no scripts, no fonts or styles from
 * the network), so the page opens offline in any browser.  Time series
 * are reduced to time-weighted means over a fixed number of bins; CDFs to
 * a fixed number of quantiles, so the page stays small for any trace. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schedmate/sm_sia.h"
#include "sim/sim_int.h"

#define W 760
#define H 300
#define ML 70
#define MR 20
#define MT 20
#define MB 45
#define BINS 600
#define QUANTILES 400

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                     "#ff7f0e", "#9467bd", "#8c564b",
                                     "#e377c2", "#17becf"};

/* ==== Text ==== */

/* Escapes &<>"' and replaces invalid UTF-8 with U+FFFD. */
void sm__html_escape(sm_buf *out, const char *s) {
  const unsigned char *p = (const unsigned char *)s;

  while (*p) {
    unsigned c = *p;
    size_t len = 1;
    if (c == '&')
      sm_buf_adds(out, "&amp;");
    else if (c == '<')
      sm_buf_adds(out, "&lt;");
    else if (c == '>')
      sm_buf_adds(out, "&gt;");
    else if (c == '"')
      sm_buf_adds(out, "&quot;");
    else if (c == '\'')
      sm_buf_adds(out, "&#39;");
    else if (c < 0x80)
      sm_buf_addc(out, (char)c);
    else {
      size_t need = c >= 0xc2 && c <= 0xdf   ? 2
                    : c >= 0xe0 && c <= 0xef ? 3
                    : c >= 0xf0 && c <= 0xf4 ? 4
                                             : 0;
      size_t i;
      for (i = 1; i < need; i++)
        if ((p[i] & 0xc0) != 0x80)
          break;
      if (need == 0 || i < need) {
        sm_buf_adds(out, "\xef\xbf\xbd");
      } else {
        sm_buf_add(out, p, need);
        len = need;
      }
    }
    p += len;
  }
}

static void fmt_dur(char *b, size_t n, double s) {
  if (isnan(s))
    snprintf(b, n, "-");
  else if (s < 120)
    snprintf(b, n, "%.0f s", s);
  else if (s < 7200)
    snprintf(b, n, "%.1f min", s / 60);
  else if (s < 3 * 86400)
    snprintf(b, n, "%.2f h", s / 3600);
  else
    snprintf(b, n, "%.2f d", s / 86400);
}

/* ==== Axes ==== */

typedef struct frame {
  double x0, x1, y0, y1; /* data ranges */
  int logx;              /* log10 x axis */
} frame;

static double px(const frame *f, double x) {
  double a = f->logx ? log10(SM_MAX(x, 1e-9)) : x;
  double lo = f->logx ? log10(f->x0) : f->x0;
  double hi = f->logx ? log10(f->x1) : f->x1;
  return ML + (a - lo) / (hi - lo > 0 ? hi - lo : 1) * (W - ML - MR);
}

static double py(const frame *f, double y) {
  return H - MB -
         (y - f->y0) / (f->y1 - f->y0 > 0 ? f->y1 - f->y0 : 1) * (H - MT - MB);
}

/* A "nice" step for about n ticks over span. */
static double nice_step(double span, int n) {
  double raw = span / n, mag = pow(10, floor(log10(raw))), r = raw / mag;

  return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static void axes(sm_buf *b, const frame *f, const char *xlabel,
                 const char *ylabel, const char *yfmt) {
  double step;

  sm_buf_addf(b,
              "<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
              "stroke='#999'/>\n",
              ML, MT, W - ML - MR, H - MT - MB);
  if (f->logx) {
    static const double ticks[] = {1,     10,    60,     600,    3600,
                                   36000, 86400, 864000, 8640000};
    static const char *const labels[] = {"1 s",    "10 s", "1 min",
                                         "10 min", "1 h",  "10 h",
                                         "1 d",    "10 d", "100 d"};
    for (size_t k = 0; k < SM_ARRAY_LEN(ticks); k++) {
      double x;
      if (ticks[k] < f->x0 || ticks[k] > f->x1)
        continue;
      x = px(f, ticks[k]);
      sm_buf_addf(b,
                  "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' "
                  "stroke='#eee'/><text x='%.1f' y='%d' font-size='11' "
                  "text-anchor='middle'>%s</text>\n",
                  x, MT, x, H - MB, x, H - MB + 15, labels[k]);
    }
  } else {
    step = nice_step(f->x1 - f->x0, 8);
    for (double x = ceil(f->x0 / step) * step; x <= f->x1 + 1e-9; x += step)
      sm_buf_addf(b,
                  "<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' "
                  "stroke='#eee'/><text x='%.1f' y='%d' font-size='11' "
                  "text-anchor='middle'>%g</text>\n",
                  px(f, x), MT, px(f, x), H - MB, px(f, x), H - MB + 15, x);
  }
  step = nice_step(f->y1 - f->y0, 5);
  for (double y = ceil(f->y0 / step) * step; y <= f->y1 + 1e-9; y += step) {
    char tmp[32];
    snprintf(tmp, sizeof(tmp), yfmt, y);
    sm_buf_addf(b,
                "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#eee'/>"
                "<text x='%d' y='%.1f' font-size='11' "
                "text-anchor='end'>%s</text>\n",
                ML, py(f, y), W - MR, py(f, y), ML - 6, py(f, y) + 4, tmp);
  }
  sm_buf_addf(b,
              "<text x='%d' y='%d' font-size='12' "
              "text-anchor='middle'>%s</text>\n",
              (ML + W - MR) / 2, H - 8, xlabel);
  sm_buf_addf(b,
              "<text x='14' y='%d' font-size='12' text-anchor='middle' "
              "transform='rotate(-90 14 %d)'>%s</text>\n",
              (MT + H - MB) / 2, (MT + H - MB) / 2, ylabel);
}

static void legend(sm_buf *b, const sm_sim_result *const *runs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int x = ML + 10 + (int)(i % 4) * 150, y = MT + 14 + (int)(i / 4) * 16;
    sm_buf_addf(b,
                "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' "
                "stroke-width='2.5'/><text x='%d' y='%d' "
                "font-size='12'>",
                x, y - 4, x + 22, y - 4, colors[i % SM_ARRAY_LEN(colors)],
                x + 28, y);
    sm__html_escape(b, runs[i]->policy);
    sm_buf_adds(b, "</text>\n");
  }
}

/* ==== Plots ==== */

static void plot_cdf(sm_buf *b, const sm_sim_result *const *runs, size_t n) {
  frame f = {INFINITY, 0, 0, 1, 1};

  for (size_t i = 0; i < n; i++)
    if (runs[i]->njct > 0) {
      f.x0 = SM_MIN(f.x0, SM_MAX(1.0, runs[i]->jct[0]));
      f.x1 = SM_MAX(f.x1, runs[i]->jct[runs[i]->njct - 1]);
    }
  if (!isfinite(f.x0))
    f.x0 = 1;
  f.x0 = pow(10, floor(log10(f.x0)));
  f.x1 = pow(10, ceil(log10(SM_MAX(f.x1, f.x0 * 10))));
  sm_buf_addf(b,
              "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'>\n",
              W, H, W, H);
  axes(b, &f, "job completion time (log scale)", "fraction of jobs", "%.1f");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_result *r = runs[i];
    size_t m = r->njct < QUANTILES ? r->njct : QUANTILES;
    if (m == 0)
      continue;
    sm_buf_addf(b,
                "<polyline fill='none' stroke='%s' stroke-width='2' "
                "points='",
                colors[i % SM_ARRAY_LEN(colors)]);
    for (size_t q = 0; q < m; q++) {
      size_t k = m == 1 ? r->njct - 1 : q * (r->njct - 1) / (m - 1);
      sm_buf_addf(b, "%.1f,%.1f ", px(&f, SM_MAX(r->jct[k], f.x0)),
                  py(&f, (double)(k + 1) / (double)r->njct));
    }
    sm_buf_adds(b, "'/>\n");
  }
  legend(b, runs, n);
  sm_buf_adds(b, "</svg>\n");
}

/* Time-weighted mean of a step series over BINS bins of [0, end]. */
static void bin_series(const sm_sim_result *r, int which, double end,
                       double *out) {
  double w = end / BINS;
  size_t k = 0;

  for (int i = 0; i < BINS; i++) {
    double a = i * w, bnd = a + w, acc = 0;
    while (k + 1 < r->sn && r->st[k + 1] <= a)
      k++;
    for (size_t m = k; m < r->sn && r->st[m] < bnd; m++) {
      double s0 = SM_MAX(a, r->st[m]);
      double s1 = m + 1 < r->sn ? SM_MIN(bnd, r->st[m + 1]) : bnd;
      double v = which ? r->spend[m] : r->sbusy[m];
      if (s1 > s0)
        acc += v * (s1 - s0);
    }
    out[i] = w > 0 ? acc / w : 0;
  }
}

static void plot_series(sm_buf *b, const sm_sim_result *const *runs, size_t n,
                        int which) {
  double(*v)[BINS] = sm_malloc(8 * sizeof(*v));
  double end = 0, top = 0, unit;
  frame f;
  size_t nn = n > 8 ? 8 : n;

  if (v == NULL)
    return;

  for (size_t i = 0; i < nn; i++)
    if (runs[i]->sn > 0)
      end = SM_MAX(end, runs[i]->st[runs[i]->sn - 1]);
  if (end <= 0)
    end = 1;
  unit = end > 3 * 86400 ? 86400 : 3600;
  for (size_t i = 0; i < nn; i++) {
    bin_series(runs[i], which, end, v[i]);
    for (int k = 0; k < BINS; k++) {
      if (!which)
        v[i][k] = 100.0 * v[i][k] / SM_MAX(1, runs[i]->sum.gpus);
      top = SM_MAX(top, v[i][k]);
    }
  }
  f.x0 = 0;
  f.x1 = end / unit;
  f.y0 = 0;
  f.y1 = which ? SM_MAX(1.0, top * 1.05) : 100;
  f.logx = 0;
  sm_buf_addf(b,
              "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'>\n",
              W, H, W, H);
  axes(b, &f, unit == 86400 ? "time (days)" : "time (hours)",
       which ? "pending jobs" : "GPUs busy (%)", which ? "%.0f" : "%.0f");
  for (size_t i = 0; i < nn; i++) {
    sm_buf_addf(b,
                "<polyline fill='none' stroke='%s' stroke-width='1.5' "
                "points='",
                colors[i % SM_ARRAY_LEN(colors)]);
    for (int k = 0; k < BINS; k++)
      sm_buf_addf(b, "%.1f,%.1f ", px(&f, (k + 0.5) * end / BINS / unit),
                  py(&f, v[i][k]));
    sm_buf_adds(b, "'/>\n");
  }
  legend(b, runs, nn);
  sm_buf_adds(b, "</svg>\n");
  sm_free(v);
}

/* ==== Page ==== */

static void cell_dur(sm_buf *b, double s) {
  char tmp[32];

  fmt_dur(tmp, sizeof(tmp), s);
  sm_buf_addf(b, "<td>%s</td>", tmp);
}

static double stat_or(const sm_sim_result *r, const char *k, double def) {
  double v;
  return sm_sim_result_stat_get(r, k, &v) ? v : def;
}

/* The SchedMate paths against their baselines, and what the facts were
 * worth in each SchedMate run. */
static void schedmate_section(sm_buf *b, const sm_sim_result *const *runs,
                              size_t n) {
  sm_sim_speedup sp[8];
  size_t ns = sm_sim_speedups(runs, n, sp, SM_ARRAY_LEN(sp));
  int any = 0;

  for (size_t i = 0; i < n; i++)
    any |= stat_or(runs[i], "facts_queries", -1) >= 0;
  if (ns == 0 && !any)
    return;
  sm_buf_adds(b, "<h2>SchedMate paths</h2>\n");
  if (ns > 0) {
    sm_buf_adds(b, "<table><tr><th>path</th><th>baseline</th><th>avg JCT "
                   "speed-up</th><th>p99 JCT</th><th>avg queueing delay"
                   "</th><th>makespan</th><th>avg JCT change</th></tr>\n");
    for (size_t k = 0; k < ns; k++) {
      sm_buf_adds(b, "<tr><td>");
      sm__html_escape(b, sp[k].path);
      sm_buf_adds(b, "</td><td>");
      sm__html_escape(b, sp[k].baseline);
      sm_buf_addf(b,
                  "</td><td>%.3fx</td><td>%.3fx</td><td>%.3fx</td><td>"
                  "%.3fx</td><td>%+.1f%%</td></tr>\n",
                  sp[k].avg_jct_speedup, sp[k].p99_jct_speedup,
                  sp[k].avg_wait_speedup, sp[k].makespan_speedup,
                  100 * sp[k].avg_jct_change);
    }
    sm_buf_adds(b, "</table>\n<p>Speed-up = the baseline's figure / the "
                   "path's (above 1: better).  Queueing delay = all time "
                   "pending.</p>\n");
  }
  sm_buf_adds(b, "<ul>\n");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_result *r = runs[i];
    if (stat_or(r, "facts_queries", -1) < 0)
      continue;
    if (stat_or(r, "sia_rounds", -1) >= 0) {
      sm_buf line;
      sm_buf_init(&line, 0);
      sm_sia_facts_line(runs, n, i, &line);
      sm_buf_adds(b, "<li>");
      sm__html_escape(b, sm_buf_str(&line));
      sm_buf_adds(b, ".</li>\n");
      sm_buf_release(&line);
      continue;
    }
    sm_buf_adds(b, "<li><b>");
    sm__html_escape(b, r->policy);
    sm_buf_addf(b,
                "</b>: hit rate %.1f%% (%.0f of %.0f), estimates within 2x "
                "of the truth %.1f%%",
                100 * stat_or(r, "facts_hit_rate", 0),
                stat_or(r, "facts_hits", 0), stat_or(r, "facts_queries", 0),
                100 * stat_or(r, "facts_within_2x", 0));
    if (stat_or(r, "profiles_skipped", -1) >= 0)
      sm_buf_addf(b,
                  "; profiling GPU-hours saved %.1f; evictions %.0f (%.0f "
                  "Tracker checks)",
                  stat_or(r, "profiling_gpu_h_saved", 0),
                  stat_or(r, "evictions", 0), stat_or(r, "tracker_checks", 0));
    if (stat_or(r, "infra_restarts", -1) >= 0)
      sm_buf_addf(b,
                  "; infrastructure failures %.0f, restarted from their "
                  "checkpoint by the Failure Handler %.0f",
                  stat_or(r, "infra_failures", 0),
                  stat_or(r, "infra_restarts", 0));
    sm_buf_adds(b, ".</li>\n");
  }
  sm_buf_adds(b, "</ul>\n<p>Information source: ");
  sm_buf_adds(b,
              runs[0]->sum.synthetic ? "<b>SYNTHETIC</b> trace" : "real trace");
  {
    const char *facts = "history", *wl = NULL;
    for (size_t k = 0; k < runs[0]->params.n; k++) {
      const char *p = runs[0]->params.v[k];
      if (strncmp(p, "facts=", 6) == 0)
        facts = p + 6;
      else if (strncmp(p, "workloads=", 10) == 0)
        wl = p + 10;
    }
    sm_buf_adds(b, "; facts: ");
    sm__html_escape(b, facts);
    sm_buf_adds(b, wl ? ", fingerprints from the workload templates in "
                      : ", fingerprints from the trace's attributes");
    if (wl)
      sm__html_escape(b, wl);
  }
  sm_buf_adds(b, ".  The notes below say more (profile tables and their "
                 "licence, parameters, failure model).</p>\n");
}

int sm_sim_report_html(const sm_sim_result *const *runs, size_t n, sm_buf *b) {
  const sm_sim_result *r0;

  if (n == 0)
    return SM_EINVAL;
  r0 = runs[0];
  sm_buf_adds(b, "<!DOCTYPE html>\n<html lang='en'><head><meta "
                 "charset='utf-8'><title>SchedMate simulation: ");
  sm__html_escape(b, r0->trace_name);
  sm_buf_adds(b, "</title>\n<style>body{font-family:sans-serif;margin:24px;"
                 "max-width:1000px}table{border-collapse:collapse}"
                 "td,th{border:1px solid #ccc;padding:3px 8px;text-align:"
                 "right}th{background:#f4f4f4}td:first-child{text-align:"
                 "left}.warn{background:#fff3cd;border:1px solid #e0c060;"
                 "padding:8px;font-weight:bold}</style></head><body>\n");
  sm_buf_adds(b, "<h1>Trace-driven simulation</h1>\n");
  if (r0->sum.synthetic)
    sm_buf_adds(b, "<p class='warn'>SYNTHETIC TRACE: the jobs below were "
                   "generated from published summary statistics, not "
                   "taken from a real job log.</p>\n");
  sm_buf_adds(b, "<p>Trace <b>");
  sm__html_escape(b, r0->trace_name);
  sm_buf_addf(b, "</b> (%s), %zu jobs simulated, %zu left out.<br>Cluster ",
              r0->format, r0->sum.jobs, r0->sum.dropped);
  sm__html_escape(b, r0->cluster);
  sm_buf_addf(b,
              ", placement %s.<br>Preemption overhead %g s (at most %d "
              "GPUs) / %g s (more).</p>\n",
              r0->placement, r0->preempt_small, r0->overhead_gpus,
              r0->preempt_large);

  sm_buf_adds(b, "<h2>Summary</h2>\n<table><tr><th>policy</th><th>jobs"
                 "</th><th>avg JCT</th><th>median JCT</th><th>p99 JCT</th>"
                 "<th>avg queue</th><th>p99 queue</th><th>makespan</th>"
                 "<th>GPU util</th><th>preemptions</th><th>sim time</th>"
                 "</tr>\n");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_summary *m = &runs[i]->sum;
    sm_buf_addf(b, "<tr><td><span style='color:%s'>&#9632;</span> ",
                colors[i % SM_ARRAY_LEN(colors)]);
    sm__html_escape(b, runs[i]->policy);
    sm_buf_addf(b, "</td><td>%zu</td>", m->jobs);
    cell_dur(b, m->avg_jct_s);
    cell_dur(b, m->median_jct_s);
    cell_dur(b, m->p99_jct_s);
    cell_dur(b, m->avg_queue_s);
    cell_dur(b, m->p99_queue_s);
    cell_dur(b, m->makespan_s);
    sm_buf_addf(b, "<td>%.1f%%</td><td>%zu</td><td>%.3f s</td></tr>\n",
                100 * m->avg_util, m->preemptions, m->wall_s);
  }
  sm_buf_adds(b, "</table>\n");
  schedmate_section(b, runs, n);
  sm_buf_adds(b, "<h2>JCT distribution</h2>\n");
  plot_cdf(b, runs, n);
  sm_buf_adds(b, "<h2>Queue length over time</h2>\n");
  plot_series(b, runs, n, 1);
  sm_buf_adds(b, "<h2>GPU utilisation over time</h2>\n");
  plot_series(b, runs, n, 0);
  if (n > 8)
    sm_buf_adds(b, "<p>Time plots show the first 8 policies.</p>\n");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_result *r = runs[i];
    if (r->nstats == 0 && r->params.n == 0)
      continue;
    sm_buf_adds(b, "<h3>");
    sm__html_escape(b, r->policy);
    sm_buf_adds(b, "</h3><ul>\n");
    for (size_t k = 0; k < r->params.n; k++) {
      sm_buf_adds(b, "<li>parameter ");
      sm__html_escape(b, r->params.v[k]);
      sm_buf_adds(b, "</li>\n");
    }
    for (size_t k = 0; k < r->nstats; k++) {
      sm_buf_adds(b, "<li>");
      sm__html_escape(b, r->stats[k].name);
      sm_buf_addf(b, ": %.6g</li>\n", r->stats[k].value);
    }
    sm_buf_adds(b, "</ul>\n");
  }
  sm_buf_adds(b, "<h2>Notes</h2>\n<ul>\n");
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < runs[i]->notes.n; k++) {
      int dup = 0;
      for (size_t p = 0; p < i && !dup; p++)
        for (size_t q = 0; q < runs[p]->notes.n && !dup; q++)
          dup = strcmp(runs[p]->notes.v[q], runs[i]->notes.v[k]) == 0;
      if (dup)
        continue;
      sm_buf_adds(b, "<li>");
      sm__html_escape(b, runs[i]->notes.v[k]);
      sm_buf_adds(b, "</li>\n");
    }
  sm_buf_adds(b, "</ul>\n<p>Written by schedmate simulate " SM_VERSION_STRING
                 ". JCT = end - submit over jobs that ended; queue = first "
                 "start - submit; p99 by nearest rank.</p>\n</body></html>\n");
  return b->len > 0 && b->data != NULL ? 0 : SM_ENOMEM;
}
