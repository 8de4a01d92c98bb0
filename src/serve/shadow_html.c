/* shadow_html.c - the shadow report as one self-contained HTML page:
 * tables and inline SVG plots drawn here (no scripts, no fonts or styles
 * from the network), so it opens offline in any browser.  CDFs are drawn
 * from at most 400 quantiles, so the page stays small for any history;
 * every series has one colour in every report (by end state, by
 * channel), and legends sit below the plot area. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve/shadow_html.h"

#define W 720
#define H 280
#define ML 64
#define MR 20
#define MT 16
#define MB 44
#define QUANTILES 400

static const char *const state_colors[SM_END__COUNT] = {
    "#2ca02c", "#7f7f7f", "#d62728", "#ff7f0e",
    "#9467bd", "#8c564b", "#17becf"};
static const char *const channel_colors[SH_CHANNELS] = {"#1f77b4", "#ff7f0e",
                                                        "#2ca02c", "#9467bd"};

static void esc(sm_buf *b, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '<':
      sm_buf_adds(b, "&lt;");
      break;
    case '>':
      sm_buf_adds(b, "&gt;");
      break;
    case '&':
      sm_buf_adds(b, "&amp;");
      break;
    case '"':
      sm_buf_adds(b, "&quot;");
      break;
    default:
      sm_buf_addc(b, *s);
    }
  }
}

/* One line of a plot. */
typedef struct series {
  const char *name;  /* legend */
  const char *color; /* stroke */
  const double *x;   /* sorted values (the CDF's x) */
  size_t n;          /* their count */
} series;

typedef struct frame {
  double x0, x1; /* x range (log10 values when xlog) */
  int xlog;      /* log scale */
} frame;

static double px(const frame *f, double x) {
  double v = f->xlog ? log10(x > 0 ? x : 1e-9) : x;
  double t = (v - f->x0) / (f->x1 - f->x0);
  if (t < 0)
    t = 0;
  if (t > 1)
    t = 1;
  return ML + t * (W - ML - MR);
}

static double py(double y) {
  return MT + (1 - y) * (H - MT - MB);
}

/* Axes, ticks and labels of a CDF (y from 0 to 1). */
static void axes(sm_buf *b, const frame *f, const char *xlabel,
                 const char *ylabel, const char *xfmt, double xscale) {
  int nt = f->xlog ? (int)(f->x1 - f->x0) : 5;

  sm_buf_addf(b,
              "<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
              "stroke='#444'/>\n",
              ML, MT, W - ML - MR, H - MT - MB);
  for (int i = 0; i <= 4; i++) {
    double y = i / 4.0;
    sm_buf_addf(b,
                "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
                "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>"
                "%.0f%%</text>\n",
                ML, W - MR, py(y), py(y), ML - 6, py(y) + 4, y * 100);
  }
  /* Linear: five steps; logarithmic: one tick per decade. */
  for (int i = 0; i <= nt; i++) {
    double v = f->xlog ? f->x0 + i : f->x0 + (f->x1 - f->x0) * i / nt;
    double x = f->xlog ? pow(10, v) : v;
    char lab[32];
    snprintf(lab, sizeof(lab), xfmt, x * xscale);
    sm_buf_addf(b,
                "<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#ddd'/>"
                "<text x='%.1f' y='%d' text-anchor='middle' "
                "font-size='11'>%s</text>\n",
                px(f, x), px(f, x), MT, H - MB, px(f, x), H - MB + 15, lab);
  }
  sm_buf_addf(b, "<text x='%d' y='%d' text-anchor='middle' font-size='12'>",
              (ML + W - MR) / 2, H - 8);
  esc(b, xlabel);
  sm_buf_addf(b,
              "</text><text x='14' y='%d' font-size='12' "
              "transform='rotate(-90 14 %d)' text-anchor='middle'>",
              (MT + H - MB) / 2, (MT + H - MB) / 2);
  esc(b, ylabel);
  sm_buf_adds(b, "</text>\n");
}

/* An empirical CDF per series (sorted values), drawn as steps from at
 * most QUANTILES points, with a marker at each value when there are
 * few. */
static void cdf_plot(sm_buf *b, const char *title, const char *xlabel,
                     const char *ylabel, const series *s, int ns, frame f,
                     const char *xfmt, double xscale) {
  int legend_rows = (ns + 2) / 3;

  sm_buf_addf(b,
              "<figure><svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'><title>",
              W, H + 20 * legend_rows, W, H + 20 * legend_rows);
  esc(b, title);
  sm_buf_adds(b, "</title>\n");
  axes(b, &f, xlabel, ylabel, xfmt, xscale);
  for (int k = 0; k < ns; k++) {
    const series *q = &s[k];
    size_t steps = q->n < QUANTILES ? q->n : QUANTILES;
    double yprev = 0;
    if (q->n == 0)
      continue;
    sm_buf_addf(b,
                "<polyline fill='none' stroke='%s' stroke-width='2' "
                "points='",
                q->color);
    for (size_t i = 0; i < steps; i++) {
      size_t idx =
          steps == q->n
              ? i
              : (size_t)((double)i * (double)(q->n - 1) / (double)(steps - 1));
      double y = (double)(idx + 1) / (double)q->n;
      sm_buf_addf(b, "%.1f,%.1f %.1f,%.1f ", px(&f, q->x[idx]), py(yprev),
                  px(&f, q->x[idx]), py(y));
      yprev = y;
    }
    sm_buf_adds(b, "'/>\n");
    for (size_t i = 0; q->n <= 40 && i < q->n; i++)
      sm_buf_addf(b, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                  px(&f, q->x[i]), py((double)(i + 1) / (double)q->n),
                  q->color);
  }
  for (int k = 0; k < ns; k++) {
    int lx = ML + (k % 3) * 220, ly = H + 4 + 20 * (k / 3);
    sm_buf_addf(b,
                "<rect x='%d' y='%d' width='14' height='4' fill='%s'/>"
                "<text x='%d' y='%d' font-size='12'>",
                lx, ly + 4, s[k].color, lx + 20, ly + 9);
    esc(b, s[k].name);
    sm_buf_addf(b, " (%zu)</text>\n", s[k].n);
  }
  sm_buf_adds(b, "</svg><figcaption>");
  esc(b, title);
  sm_buf_adds(b, "</figcaption></figure>\n");
}

/* Horizontal bars of named counts. */
static void bar_plot(sm_buf *b, const char *title, const sh_counts *c,
                     long total) {
  int h = MT + 24 * c->k + 30;
  long mx = 1;

  for (int i = 0; i < c->k; i++)
    if (c->n[i] > mx)
      mx = c->n[i];
  sm_buf_addf(b,
              "<figure><svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'><title>",
              W, h, W, h);
  esc(b, title);
  sm_buf_adds(b, "</title>\n");
  for (int i = 0; i < c->k; i++) {
    double wbar = (double)c->n[i] / (double)mx * (W - 260 - MR);
    int y = MT + 24 * i;
    sm_buf_addf(b, "<text x='176' y='%d' text-anchor='end' font-size='12'>",
                y + 14);
    esc(b, c->name[i]);
    sm_buf_addf(b,
                "</text><rect x='184' y='%d' width='%.1f' height='16' "
                "fill='#1f77b4'/><text x='%.1f' y='%d' font-size='12'>%ld "
                "(%.1f%%)</text>\n",
                y, wbar, 190 + wbar, y + 13, c->n[i],
                total ? 100.0 * (double)c->n[i] / (double)total : 0.0);
  }
  sm_buf_adds(b, "</svg><figcaption>");
  esc(b, title);
  sm_buf_adds(b, "</figcaption></figure>\n");
}

/* Bars of slowdowns, one per would-be eviction (at most 60 drawn). */
static void evict_plot(sm_buf *b, const sh_report *r) {
  int n = r->n_ev < 60 ? r->n_ev : 60;
  double bw = (double)(W - ML - MR) / (n > 0 ? n : 1);

  sm_buf_addf(b,
              "<figure><svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'><title>measured "
              "slowdowns</title>\n",
              W, H, W, H);
  sm_buf_addf(b,
              "<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
              "stroke='#444'/>\n",
              ML, MT, W - ML - MR, H - MT - MB);
  for (int i = 0; i <= 4; i++)
    sm_buf_addf(b,
                "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
                "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>"
                "%d%%</text>\n",
                ML, W - MR, py(i / 4.0), py(i / 4.0), ML - 6, py(i / 4.0) + 4,
                i * 25);
  for (int i = 0; i < n; i++) {
    double s = 1 - r->ev[i].ratio;
    if (s < 0)
      s = 0;
    if (s > 1)
      s = 1;
    sm_buf_addf(b,
                "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                "fill='#d62728'><title>",
                ML + i * bw + 1, py(s), bw > 3 ? bw - 2 : 1, py(0) - py(s));
    esc(b, r->ev[i].job);
    sm_buf_adds(b, " slowed by ");
    esc(b, r->ev[i].joined_by);
    sm_buf_addf(b, ": %.0f%%</title></rect>\n", s * 100);
  }
  sm_buf_addf(b,
              "<text x='%d' y='%d' text-anchor='middle' font-size='12'>"
              "flagged jobs, in the order of the audit log</text>",
              (ML + W - MR) / 2, H - 8);
  sm_buf_adds(b, "</svg><figcaption>Measured slowdown (1 - rate after / "
                 "rate before) of each job whose throughput dropped after "
                 "another job joined its node</figcaption></figure>\n");
}

static void pct(sm_buf *b, double v) {
  if (isnan(v))
    sm_buf_adds(b, "<td>-</td>");
  else
    sm_buf_addf(b, "<td>%.1f%%</td>", v * 100);
}

/* ==== The page, section by section ==== */

/* The page's head and its opening paragraph. */
static void html_head(const sh_report *r, sm_buf *b) {
  sm_buf_adds(b, "<!DOCTYPE html>\n<html lang='en'><head><meta "
                 "charset='utf-8'><title>");
  esc(b, r->title);
  sm_buf_adds(b, "</title><style>body{font-family:sans-serif;max-width:780px;"
                 "margin:2em auto;color:#222}table{border-collapse:collapse;"
                 "margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
                 "text-align:right}th{background:#f3f3f3}td:first-child,"
                 "th:first-child{text-align:left}figure{margin:1em 0}"
                 "figcaption{font-size:13px;color:#555}p.note{font-size:13px;"
                 "color:#555}</style></head><body>\n<h1>");
  esc(b, r->title);
  sm_buf_addf(
      b,
      "</h1>\n<p>History store: %s, %ld records, %ld with an outcome "
      "(jobs that ended while SchedMate watched), %ld of them "
      "answered at submission: %ld with an estimate, %ld with a "
      "fallback.  Audit: %ld file(s), %ld lines (%ld unreadable).</p>\n",
      r->store_kind, r->records, r->with_outcome, r->advised, r->est_jobs,
      r->fb_jobs.total, r->audit_files, r->audit_lines, r->audit_bad);
}

/* Estimate error by end state: a table and the CDF of |error|. */
static void html_estimates(const sh_report *r, sm_buf *b) {
  series s[SM_END__COUNT];
  sh_vec abs_err[SM_END__COUNT];
  int ns = 0;
  double mx = 0.05;

  memset(abs_err, 0, sizeof(abs_err));
  sm_buf_adds(b, "<h2>Estimate error</h2>\n<table><tr><th>end state</th>"
                 "<th>jobs</th><th>median error</th><th>median |error|</th>"
                 "<th>p90 |error|</th><th>within 25%</th></tr>\n");
  for (int st = 0; st < SM_END__COUNT; st++) {
    const sh_vec *e = &r->err[st];
    long within = 0;
    if (e->n == 0)
      continue;
    for (size_t i = 0; i < e->n; i++) {
      sh__vec_add(&abs_err[st], fabs(e->v[i]));
      within += fabs(e->v[i]) <= 0.25;
    }
    sh__vec_sort(&abs_err[st]);
    if (sh__quantile(&abs_err[st], 0.95) > mx)
      mx = sh__quantile(&abs_err[st], 0.95);
    sm_buf_addf(b, "<tr><td>%s</td><td>%zu</td>",
                sm_end_state_name((sm_end_state)st), e->n);
    pct(b, sh__quantile(e, 0.5));
    pct(b, sh__quantile(&abs_err[st], 0.5));
    pct(b, sh__quantile(&abs_err[st], 0.9));
    pct(b, (double)within / (double)e->n);
    sm_buf_adds(b, "</tr>\n");
    s[ns].name = sm_end_state_name((sm_end_state)st);
    s[ns].color = state_colors[st];
    s[ns].x = abs_err[st].v;
    s[ns].n = abs_err[st].n;
    ns++;
  }
  sm_buf_adds(b, "</table>\n");
  if (ns > 0) {
    frame f = {0, mx * 1.1 > 2 ? 2 : mx * 1.1, 0};
    cdf_plot(b,
             "CDF of |estimate - real duration| / real duration, by end "
             "state",
             "relative error of the estimate given at submission",
             "share of jobs", s, ns, f, "%.0f%%", 100);
    sm_buf_adds(b, "<p class='note'>A cancelled or failed run's real "
                   "duration is when it stopped, so its error says how "
                   "early it ended, not how good the estimate was.</p>\n");
  } else {
    sm_buf_adds(b, "<p>No ended job had an estimate.</p>\n");
  }
  for (int st = 0; st < SM_END__COUNT; st++)
    sh__vec_release(&abs_err[st]);
}

/* Fallback shares and reasons. */
static void html_fallbacks(const sh_report *r, sm_buf *b) {
  sm_buf_addf(b,
              "<h2>Fallbacks</h2>\n<p>Ended jobs: %ld of %ld answered "
              "without an estimate (%.1f%%).  All answers in the audit: %ld "
              "of %ld (%.1f%%).</p>\n",
              r->fb_jobs.total, r->advised,
              r->advised ? 100.0 * r->fb_jobs.total / r->advised : 0.0,
              r->fb_answers.total, r->answers,
              r->answers ? 100.0 * r->fb_answers.total / r->answers : 0.0);
  if (r->fb_jobs.k)
    bar_plot(b, "Fallback reasons of ended jobs", &r->fb_jobs, r->advised);
  if (r->fb_answers.k)
    bar_plot(b, "Fallback reasons of every answer in the audit", &r->fb_answers,
             r->answers);
}

/* Jobs flagged after another job joined their node. */
static void html_evictions(const sh_report *r, sm_buf *b) {
  sm_buf_addf(b,
              "<h2>Would-be evictions</h2>\n<p>%d job(s) slowed down "
              "after another job joined their node (flagged by the run "
              "channel; in shadow mode nothing was evicted).</p>\n",
              r->n_ev);
  if (r->n_ev > 0) {
    evict_plot(b, r);
    sm_buf_adds(b, "<table><tr><th>job</th><th>node</th><th>joined by</th>"
                   "<th>rate after / before</th></tr>\n");
    for (int i = 0; i < r->n_ev && i < 200; i++) {
      sm_buf_adds(b, "<tr><td>");
      esc(b, r->ev[i].job);
      sm_buf_adds(b, "</td><td>");
      esc(b, r->ev[i].node);
      sm_buf_adds(b, "</td><td>");
      esc(b, r->ev[i].joined_by);
      sm_buf_addf(b, "</td><td>%.3f</td></tr>\n", r->ev[i].ratio);
    }
    sm_buf_adds(b, "</table>\n");
  }
}

/* Diagnoses and whether restarted runs completed. */
static void html_diagnoses(const sh_report *r, sm_buf *b) {
  sm_buf_adds(b, "<h2>Diagnoses and what happened next</h2>\n");
  if (r->n_diag == 0) {
    sm_buf_adds(b, "<p>No failed run carries a diagnosis.</p>\n");
  } else {
    sm_buf_adds(b, "<table><tr><th>diagnosed category</th><th>failed "
                   "runs</th><th>retryable</th><th>restarted, "
                   "completed</th><th>restarted, failed</th><th>not "
                   "restarted</th></tr>\n");
    for (int i = 0; i < r->n_diag; i++) {
      const sh_diag_row *d = &r->diag[i];
      sm_buf_adds(b, "<tr><td>");
      esc(b, d->category);
      sm_buf_addf(b,
                  "</td><td>%ld</td><td>%ld</td><td>%ld</td><td>%ld</td>"
                  "<td>%ld</td></tr>\n",
                  d->n, d->retryable, d->restart_completed, d->restart_failed,
                  d->not_restarted);
    }
    sm_buf_adds(b, "</table><p class='note'>Runs of one job are ID, ID.1, "
                   "ID.2, ...; \"restarted\" compares a diagnosed run with "
                   "the job's last run.</p>\n");
  }
}

/* GPU-hours a profiling scheduler would have spent. */
static void html_profiling(const sh_report *r, sm_buf *b) {
  sm_buf_addf(b,
              "<h2>Profiling saved</h2>\n<p>%ld ended job(s) had an "
              "estimate at submission.  A scheduler that profiles a job "
              "before placing it would have run each of them for %.0f s on "
              "its GPUs: <b>%.1f GPU-hours</b> not spent (%ld job(s) "
              "without a GPU count counted as one GPU).  The profiling "
              "time is an assumption (--profile-s).</p>\n",
              r->est_jobs, r->profile_s, r->gpu_hours_saved, r->gpus_unknown);
}

/* Answer latency by channel: a table and the CDF. */
static void html_latency(const sh_report *r, sm_buf *b) {
  series s[SH_CHANNELS];
  int ns = 0;

  sm_buf_adds(b, "<h2>Latency by channel</h2>\n");
  {
    double lo = INFINITY, hi = 0;
    sm_buf_adds(b, "<table><tr><th>channel</th><th>answers</th><th>p50</th>"
                   "<th>p90</th><th>p99</th><th>max</th><th>past "
                   "deadline</th></tr>\n");
    for (int c = 0; c < SH_CHANNELS; c++) {
      const sh_vec *l = &r->lat[c];
      if (l->n == 0)
        continue;
      sm_buf_addf(b,
                  "<tr><td>%s</td><td>%zu</td><td>%.2f ms</td><td>%.2f "
                  "ms</td><td>%.2f ms</td><td>%.2f ms</td><td>%ld</td></tr>\n",
                  sh__channel_names[c], l->n, sh__quantile(l, 0.5),
                  sh__quantile(l, 0.9), sh__quantile(l, 0.99),
                  sh__quantile(l, 1), r->late[c]);
      if (l->v[0] < lo)
        lo = l->v[0];
      if (l->v[l->n - 1] > hi)
        hi = l->v[l->n - 1];
      s[ns].name = sh__channel_names[c];
      s[ns].color = channel_colors[c];
      s[ns].x = l->v;
      s[ns].n = l->n;
      ns++;
    }
    sm_buf_adds(b, "</table>\n");
    if (ns > 0) {
      frame f;
      f.xlog = 1;
      f.x0 = floor(log10(lo > 0.01 ? lo : 0.01));
      f.x1 = ceil(log10(hi > lo ? hi : lo * 10));
      if (f.x1 <= f.x0)
        f.x1 = f.x0 + 1;
      cdf_plot(b, "CDF of answer latency by channel (from the audit log)",
               "milliseconds from arrival to answer (log scale)",
               "share of answers", s, ns, f, "%g", 1);
    } else {
      sm_buf_adds(b, "<p>No audit line carries a latency (give --audit "
                     "with the service's audit log).</p>\n");
    }
  }
}

int sh__html(const sh_report *r, sm_buf *b) {
  html_head(r, b);
  html_estimates(r, b);
  html_fallbacks(r, b);
  html_evictions(r, b);
  html_diagnoses(r, b);
  html_profiling(r, b);
  html_latency(r, b);
  sm_buf_adds(b, "</body></html>\n");
  return b->len > 0 ? 0 : SM_ENOMEM;
}
