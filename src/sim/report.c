/* report.c - a self-contained HTML report of one or more runs on the same
 * trace: a heading that names the trace, the cluster (how it was sized)
 * and the offered load; a summary table; the SchedMate paths against
 * their baselines with the sources of their facts; an optional parameter
 * sweep; the JCT CDF of each policy, the queue length and the GPU
 * utilisation over time; the policies' figures as a labelled table; the
 * settings each policy used; the notes.
 *
 * Plots are inline SVG drawn here (no scripts, no fonts or styles from
 * the network), so the page opens offline in any browser.  Every policy
 * has one colour in every report (by name, not by position); a facts
 * source has one dash pattern; every series has its own marker, placed
 * at its own offsets, so series that coincide stay visible.  Legends sit
 * below the plot area, never on the data.  Time series are reduced to
 * time-weighted means over a fixed number of bins; CDFs to a fixed
 * number of quantiles, so the page stays small for any trace. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "schedmate/sm_sia.h"
#include "sim/figures_int.h"
#include "sim/sim_int.h"

#define W 760
#define H 300
#define ML 70
#define MR 20
#define MT 20
#define MB 45
#define BINS 600
#define QUANTILES 400
#define MAX_PLOT 16
#define LEGEND_COLS 3

/* One colour per policy, in every report. */
static const struct {
  const char *policy, *color;
} policy_colors[] = {{"fifo", "#7f7f7f"},
                     {"sjf", "#bcbd22"},
                     {"srtf", "#8c564b"},
                     {"qssf", "#2ca02c"},
                     {"tiresias", "#9467bd"},
                     {"lucid", "#1f77b4"},
                     {"lucid+schedmate", "#d62728"},
                     {"sjf-schedmate", "#ff7f0e"},
                     {"sjf-schedmate+fh", "#17becf"}};
/* Policies registered later get one of these, by a hash of the name. */
static const char *const spare_colors[] = {"#e377c2", "#393b79", "#637939",
                                           "#8c6d31", "#843c39", "#7b4173"};

static const char *policy_color(const char *policy) {
  uint64_t h;
  for (size_t i = 0; i < SM_ARRAY_LEN(policy_colors); i++)
    if (strcmp(policy_colors[i].policy, policy) == 0)
      return policy_colors[i].color;
  h = sm_hash64(policy, strlen(policy), 7);
  return spare_colors[h % SM_ARRAY_LEN(spare_colors)];
}

/* One dash pattern per facts source. */
static const char *facts_dash(const char *facts) {
  if (strcmp(facts, "calibrated") == 0)
    return "7 4";
  if (strcmp(facts, "oracle") == 0)
    return "2 3";
  return "none";
}

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
    static const double ticks[] = {1,    10,    60,     600,
                                   3600, 86400, 864000, 8640000};
    static const char *const labels[] = {"1 s", "10 s", "1 min", "10 min",
                                         "1 h", "1 d",  "10 d",  "100 d"};
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

/* A marker of shape k at (x, y). */
static void marker(sm_buf *b, int k, double x, double y, const char *color) {
  switch (k % 5) {
  case 0:
    sm_buf_addf(b, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'/>", x, y,
                color);
    break;
  case 1:
    sm_buf_addf(b,
                "<rect x='%.1f' y='%.1f' width='7' height='7' fill='none' "
                "stroke='%s' stroke-width='1.5'/>",
                x - 3.5, y - 3.5, color);
    break;
  case 2:
    sm_buf_addf(b, "<path d='M%.1f %.1fl4 7h-8z' fill='%s'/>", x, y - 4.5,
                color);
    break;
  case 3:
    sm_buf_addf(b,
                "<path d='M%.1f %.1fl4.5 4.5l-4.5 4.5l-4.5 -4.5z' fill='none' "
                "stroke='%s' stroke-width='1.5'/>",
                x, y - 4.5, color);
    break;
  default:
    sm_buf_addf(b,
                "<path d='M%.1f %.1fl7 7M%.1f %.1fl-7 7' stroke='%s' "
                "stroke-width='1.5'/>",
                x - 3.5, y - 3.5, x + 3.5, y - 3.5, color);
  }
}

/* The label of run i: its policy, with its facts source when another run
 * of the same policy had another. */
static const char *label(const sm_sim_result *const *runs, size_t n, size_t i,
                         char *buf, size_t cap) {
  return sm_sim_result_label(runs, n, i, buf, cap);
}

static void series_style(sm_buf *b, const sm_sim_result *r, double width) {
  sm_buf_addf(b,
              "fill='none' stroke='%s' stroke-width='%.1f' "
              "stroke-dasharray='%s'",
              policy_color(r->policy), width, facts_dash(r->facts));
}

/* Height of the legend below a plot of n series. */
static int legend_h(size_t n) {
  return 12 + (int)((n + LEGEND_COLS - 1) / LEGEND_COLS) * 18;
}

/* Entry `slot` of a legend: a stretch of line in the style of run r with
 * the marker of series `mark`, and the text. */
static void legend_entry(sm_buf *b, size_t slot, const sm_sim_result *r,
                         int mark, const char *text) {
  int x = ML + (int)(slot % LEGEND_COLS) * 230,
      y = H + 8 + (int)(slot / LEGEND_COLS) * 18;

  sm_buf_addf(b, "<line x1='%d' y1='%d' x2='%d' y2='%d' ", x, y - 4, x + 30,
              y - 4);
  series_style(b, r, 2.5);
  sm_buf_adds(b, "/>");
  marker(b, mark, x + 15, y - 4, policy_color(r->policy));
  sm_buf_addf(b, "<text x='%d' y='%d' font-size='12'>", x + 36, y);
  sm__html_escape(b, text);
  sm_buf_adds(b, "</text>\n");
}

/* The legend, below the plot area and its axis label: never on the
 * data. */
static void legend(sm_buf *b, const sm_sim_result *const *runs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char lab[96];
    legend_entry(b, i, runs[i], (int)i, label(runs, n, i, lab, sizeof(lab)));
  }
}

static void svg_open(sm_buf *b, int h, const char *title) {
  sm_buf_addf(b,
              "<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
              "height='%d' viewBox='0 0 %d %d' role='img'><title>",
              W, h, W, h);
  sm__html_escape(b, title);
  sm_buf_adds(b, "</title>\n");
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
  svg_open(b, H + legend_h(n), "JCT distribution per policy");
  axes(b, &f, "job completion time (log scale)", "fraction of jobs", "%.1f");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_result *r = runs[i];
    size_t m = r->njct < QUANTILES ? r->njct : QUANTILES;
    if (m == 0)
      continue;
    sm_buf_adds(b, "<polyline ");
    series_style(b, r, 2);
    sm_buf_adds(b, " points='");
    for (size_t q = 0; q < m; q++) {
      size_t k = m == 1 ? r->njct - 1 : q * (r->njct - 1) / (m - 1);
      sm_buf_addf(b, "%.1f,%.1f ", px(&f, SM_MAX(r->jct[k], f.x0)),
                  py(&f, (double)(k + 1) / (double)r->njct));
    }
    sm_buf_adds(b, "'/>\n");
    /* Markers at fractions of jobs offset per series. */
    for (int q = 0; q < 6; q++) {
      double frac = (q + 0.5 + 0.9 * (double)i / (double)n) / 6.5;
      size_t k = (size_t)(frac * (double)(r->njct - 1));
      marker(b, (int)i, px(&f, SM_MAX(r->jct[k], f.x0)),
             py(&f, (double)(k + 1) / (double)r->njct),
             policy_color(r->policy));
    }
    sm_buf_adds(b, "\n");
  }
  legend(b, runs, n);
  sm_buf_adds(b, "</svg>\n");
}

/* Time-weighted mean of a step series over BINS bins of [0, end]. */
static void bin_series(const sm_sim_result *r, int which, double end,
                       double *out) {
  const sm__series *sr = &r->ser;
  double w = end / BINS;
  size_t k = 0;

  for (int i = 0; i < BINS; i++) {
    double a = i * w, bnd = a + w, acc = 0;
    while (k + 1 < sr->n && sr->t[k + 1] <= a)
      k++;
    for (size_t m = k; m < sr->n && sr->t[m] < bnd; m++) {
      double s0 = SM_MAX(a, sr->t[m]);
      double s1 = m + 1 < sr->n ? SM_MIN(bnd, sr->t[m + 1]) : bnd;
      double v = which ? sr->pending[m] : sr->busy[m];
      if (s1 > s0)
        acc += v * (s1 - s0);
    }
    out[i] = w > 0 ? acc / w : 0;
  }
}

static void plot_series(sm_buf *b, const sm_sim_result *const *runs, size_t n,
                        int which) {
  size_t nn = n > MAX_PLOT ? MAX_PLOT : n;
  double(*v)[BINS] = sm_malloc((nn ? nn : 1) * sizeof(*v));
  double end = 0, top = 0, unit;
  frame f;

  if (v == NULL)
    return;
  for (size_t i = 0; i < nn; i++)
    if (runs[i]->ser.n > 0)
      end = SM_MAX(end, runs[i]->ser.t[runs[i]->ser.n - 1]);
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
  svg_open(b, H + legend_h(nn),
           which ? "pending jobs over time" : "GPU utilisation over time");
  axes(b, &f, unit == 86400 ? "time (days)" : "time (hours)",
       which ? "pending jobs" : "GPUs busy (%)", which ? "%.0f" : "%.0f");
  for (size_t i = 0; i < nn; i++) {
    sm_buf_adds(b, "<polyline ");
    series_style(b, runs[i], 1.5);
    sm_buf_adds(b, " points='");
    for (int k = 0; k < BINS; k++)
      sm_buf_addf(b, "%.1f,%.1f ", px(&f, (k + 0.5) * end / BINS / unit),
                  py(&f, v[i][k]));
    sm_buf_adds(b, "'/>\n");
    for (int q = 0; q < 8; q++) {
      int k = (int)((q + 0.5 + 0.9 * (double)i / (double)nn) / 8.5 * BINS);
      marker(b, (int)i, px(&f, (k + 0.5) * end / BINS / unit), py(&f, v[i][k]),
             policy_color(runs[i]->policy));
    }
    sm_buf_adds(b, "\n");
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

/* The name cell of a run: its colour and marker, then its label. */
static void cell_name(sm_buf *b, const sm_sim_result *const *runs, size_t n,
                      size_t i) {
  char lab[96];

  sm_buf_adds(b, "<td><svg width='34' height='12' aria-hidden='true'>"
                 "<line x1='1' y1='6' x2='33' y2='6' ");
  series_style(b, runs[i], 2.5);
  sm_buf_adds(b, "/>");
  marker(b, (int)i, 17, 6, policy_color(runs[i]->policy));
  sm_buf_adds(b, "</svg> ");
  sm__html_escape(b, label(runs, n, i, lab, sizeof(lab)));
  sm_buf_adds(b, "</td>");
}

#define QUEUE_DEF                                                              \
  "Queueing delay = all the time a job spends pending: before its first "      \
  "start and again after every preemption or eviction (Lucid's measure; "      \
  "the same in every table of this report)."

/* The SchedMate paths against their baselines. */
static void speedup_table(sm_buf *b, const sm_sim_result *const *runs, size_t n,
                          const sm_sim_schedmate_summary *sum) {
  const sm_sim_speedup *sp = sum->speedups;

  sm_buf_adds(b, "<table><tr><th>path</th><th>baseline</th><th>avg JCT "
                 "speed-up</th><th>p99 JCT speed-up</th><th>avg queueing "
                 "delay speed-up</th><th>makespan speed-up</th><th>avg JCT "
                 "change (%)</th></tr>\n");
  for (size_t k = 0; k < sum->nspeedups; k++) {
    sm_buf_adds(b, "<tr>");
    cell_name(b, runs, n, sp[k].path_run);
    cell_name(b, runs, n, sp[k].base_run);
    const double v[4] = {sp[k].avg_jct_speedup, sp[k].p99_jct_speedup,
                         sp[k].avg_wait_speedup, sp[k].makespan_speedup};
    for (int q = 0; q < 4; q++)
      if (isfinite(v[q]))
        sm_buf_addf(b, "<td>%.3fx</td>", v[q]);
      else
        sm_buf_adds(b, "<td>&ndash;</td>");
    sm_buf_addf(b, "<td>%+.1f %%</td></tr>\n", 100 * sp[k].avg_jct_change);
  }
  sm_buf_adds(b, "</table>\n<p>Speed-up = the baseline's figure / the "
                 "path's (above 1: the path is better); avg JCT change = "
                 "the path's average JCT / the baseline's &minus; 1 "
                 "(negative: better); &ndash;: both queueing delays are "
                 "zero.  The queueing delay is the one defined under the "
                 "summary.</p>\n");
}

/* The SchedMate paths against their baselines, and what the facts were
 * worth in each SchedMate run. */
static void schedmate_section(sm_buf *b, const sm_sim_result *const *runs,
                              size_t n) {
  sm_sim_schedmate_summary sum;
  sm_buf line;

  sm_sim_schedmate_summarize(runs, n, &sum);
  if (!sum.any)
    return;
  sm_buf_adds(b, "<h2>SchedMate paths</h2>\n<p>Where the facts come from:"
                 "</p>\n<ul>\n");
  for (size_t k = 0; k < sum.nsources; k++) {
    const char *src = sum.sources[k];
    sm_buf_addf(b, "<li><b>%s</b> (%s): ", src,
                strcmp(src, "calibrated") == 0 ? "dashed lines"
                : strcmp(src, "oracle") == 0   ? "dotted lines"
                                               : "solid lines");
    sm__html_escape(b, sm_sim_facts_meaning(src));
    sm_buf_adds(b, ".</li>\n");
  }
  sm_buf_adds(b, "</ul>\n");
  if (sum.nspeedups > 0)
    speedup_table(b, runs, n, &sum);
  sm_buf_init(&line, 0);
  sm_buf_adds(b, "<ul>\n");
  for (size_t i = 0; i < n; i++) {
    sm_buf_reset(&line);
    if (!sm_sim_schedmate_line(runs, n, i, &line))
      continue;
    sm_buf_adds(b, "<li>");
    sm__html_escape(b, sm_buf_str(&line));
    sm_buf_adds(b, ".</li>\n");
  }
  sm_buf_reset(&line);
  sm_sim_failures_line(&sum, &line);
  sm_buf_adds(b, "</ul>\n<p>");
  sm__html_escape(b, sm_buf_str(&line));
  sm_buf_release(&line);
  sm_buf_adds(b, ".</p>\n<p>Information source: ");
  sm_buf_adds(b, sum.synthetic ? "<b>SYNTHETIC</b> trace" : "real trace");
  sm_buf_adds(b, sum.workloads
                     ? "; fingerprints from the workload templates in "
                     : "; fingerprints from the trace's attributes");
  if (sum.workloads)
    sm__html_escape(b, sum.workloads);
  sm_buf_adds(b, ".  The notes below say more (profile tables and their "
                 "licence, failure model).</p>\n");
}

/* The sweep: the average JCT of each swept path against the parameter,
 * as % change from the sweep's first value, with a table of the
 * values. */
static void sweep_section(sm_buf *b, const sm_sim_result *const *runs, size_t n,
                          const sm_sim_report_opts *o) {
  int det = strcmp(o->sweep_param, "lucid.untracked") == 0;
  frame f = {INFINITY, -INFINITY, 0, 0, 0};
  size_t groups = 0;
  const sm_sim_result *gr[MAX_PLOT];
  size_t gstart[MAX_PLOT], glen[MAX_PLOT];

  for (size_t k = 0; k < o->nsweep;) {
    size_t e = k;
    while (e < o->nsweep && o->sweep[e].run == o->sweep[k].run)
      e++;
    if (groups < MAX_PLOT && o->sweep[k].run < n) {
      gr[groups] = runs[o->sweep[k].run];
      gstart[groups] = k;
      glen[groups++] = e - k;
    }
    k = e;
  }
  if (groups == 0)
    return;
  sm_buf_adds(b, "<h2>Sweep of ");
  sm__html_escape(b, o->sweep_param);
  sm_buf_adds(b, "</h2>\n");
  if (det)
    sm_buf_adds(b, "<p>Average JCT of Lucid + SchedMate against the share "
                   "of jobs whose logs the Tracker can follow (detection "
                   "rate = 1 &minus; lucid.untracked): a harmful packing "
                   "is undone only when the host's log is tracked.  The "
                   "reference design reports that a detection rate of 0.5 "
                   "already cuts the average JCT by 12.5 % and that little "
                   "is gained above 0.6 (the black cross).</p>\n");
  for (size_t g = 0; g < groups; g++)
    for (size_t k = gstart[g]; k < gstart[g] + glen[g]; k++) {
      double x = det ? 1 - o->sweep[k].value : o->sweep[k].value;
      double y =
          100 * (o->sweep[k].avg_jct_s / o->sweep[gstart[g]].avg_jct_s - 1);
      f.x0 = SM_MIN(f.x0, x);
      f.x1 = SM_MAX(f.x1, x);
      f.y0 = SM_MIN(f.y0, y);
      f.y1 = SM_MAX(f.y1, y);
    }
  if (det) {
    f.y0 = SM_MIN(f.y0, -12.5);
    f.x0 = SM_MIN(f.x0, 0);
    f.x1 = SM_MAX(f.x1, 1);
  }
  f.y0 -= 1;
  f.y1 += 1;
  if (!(f.x1 > f.x0))
    f.x1 = f.x0 + 1;
  svg_open(b, H + legend_h(groups), "average JCT against the swept parameter");
  axes(b, &f,
       det ? "Tracker detection rate (1 - lucid.untracked)" : o->sweep_param,
       "avg JCT change from the first value (%)", "%.0f");
  for (size_t g = 0; g < groups; g++) {
    sm_buf_adds(b, "<polyline ");
    series_style(b, gr[g], 2);
    sm_buf_adds(b, " points='");
    for (size_t k = gstart[g]; k < gstart[g] + glen[g]; k++) {
      double x = det ? 1 - o->sweep[k].value : o->sweep[k].value;
      sm_buf_addf(
          b, "%.1f,%.1f ", px(&f, x),
          py(&f, 100 * (o->sweep[k].avg_jct_s / o->sweep[gstart[g]].avg_jct_s -
                        1)));
    }
    sm_buf_adds(b, "'/>\n");
    for (size_t k = gstart[g]; k < gstart[g] + glen[g]; k++) {
      double x = det ? 1 - o->sweep[k].value : o->sweep[k].value;
      marker(
          b, (int)o->sweep[k].run, px(&f, x),
          py(&f,
             100 * (o->sweep[k].avg_jct_s / o->sweep[gstart[g]].avg_jct_s - 1)),
          policy_color(gr[g]->policy));
    }
  }
  if (det)
    sm_buf_addf(b,
                "<path d='M%.1f %.1fl5 5m0 -5l-5 5' transform='translate(-2.5 "
                "-2.5)' stroke='black' stroke-width='2'/>\n",
                px(&f, 0.5), py(&f, -12.5));
  /* The legend, by run. */
  for (size_t g = 0; g < groups; g++) {
    char lab[96];
    size_t run = o->sweep[gstart[g]].run;
    legend_entry(b, g, gr[g], (int)run, label(runs, n, run, lab, sizeof(lab)));
  }
  sm_buf_adds(b, "</svg>\n<table><tr><th>path</th>");
  for (size_t k = gstart[0]; k < gstart[0] + glen[0]; k++)
    sm_buf_addf(b, "<th>%s %.2f</th>", det ? "detection" : "value",
                det ? 1 - o->sweep[k].value : o->sweep[k].value);
  sm_buf_adds(b, "</tr>\n");
  for (size_t g = 0; g < groups; g++) {
    sm_buf_adds(b, "<tr>");
    cell_name(b, runs, n, o->sweep[gstart[g]].run);
    for (size_t k = gstart[g]; k < gstart[g] + glen[g]; k++) {
      char tmp[32];
      fmt_dur(tmp, sizeof(tmp), o->sweep[k].avg_jct_s);
      sm_buf_addf(
          b, "<td>%s (%+.1f %%)<br>%.0f evictions</td>", tmp,
          100 * (o->sweep[k].avg_jct_s / o->sweep[gstart[g]].avg_jct_s - 1),
          o->sweep[k].evictions);
    }
    sm_buf_adds(b, "</tr>\n");
  }
  sm_buf_adds(b, "</table>\n<p>Each cell: average JCT, its change from the "
                 "first column, and the packings the Tracker undid.</p>\n");
}

/* The label of a figure: the table's words, else its name with spaces
 * for underscores. */
static void stat_label(sm_buf *b, const char *name) {
  const char *l = sm__figures_label(name);

  if (l != NULL) {
    sm_buf_adds(b, l);
    return;
  }
  for (const char *p = name; *p; p++)
    sm_buf_addc(b, *p == '_' ? ' ' : *p);
}

/* One row per figure any run recorded, one column per run. */
static void stats_table(sm_buf *b, const sm_sim_result *const *runs, size_t n) {
  const char *names[128];
  size_t nn = 0;

  for (size_t i = 0; i < n; i++)
    for (size_t k = 0;
         k < sm_sim_result_stat_count(runs[i]) && nn < SM_ARRAY_LEN(names);
         k++) {
      const char *name = sm_sim_result_stat(runs[i], k, NULL);
      int dup = 0;
      for (size_t q = 0; q < nn && !dup; q++)
        dup = strcmp(names[q], name) == 0;
      if (!dup)
        names[nn++] = name;
    }
  if (nn == 0)
    return;
  sm_buf_adds(b, "<h2>Figures per policy</h2>\n<table><tr><th>figure</th>");
  for (size_t i = 0; i < n; i++) {
    char lab[96];
    sm_buf_adds(b, "<th>");
    sm__html_escape(b, label(runs, n, i, lab, sizeof(lab)));
    sm_buf_adds(b, "</th>");
  }
  sm_buf_adds(b, "</tr>\n");
  for (size_t q = 0; q < nn; q++) {
    int rate = sm__figures_is_rate(names[q]);
    sm_buf_adds(b, "<tr><td>");
    stat_label(b, names[q]);
    sm_buf_adds(b, "</td>");
    for (size_t i = 0; i < n; i++) {
      double v;
      if (!sm_sim_result_stat_get(runs[i], names[q], &v))
        sm_buf_adds(b, "<td>&ndash;</td>");
      else if (rate)
        sm_buf_addf(b, "<td>%.1f %%</td>", 100 * v);
      else
        sm_buf_addf(b, "<td>%.6g</td>", v);
    }
    sm_buf_adds(b, "</tr>\n");
  }
  sm_buf_adds(b, "</table>\n<p>&ndash;: the policy does not record this "
                 "figure.</p>\n");
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

int sm_sim_report_html(const sm_sim_result *const *runs, size_t n, sm_buf *b) {
  return sm_sim_report_html_ex(runs, n, NULL, b);
}

/* The title, the page's head and the paragraph on the trace, the
 * cluster and the settings every run shares. */
static void page_head(sm_buf *b, const sm_sim_result *const *runs, size_t n) {
  const sm_sim_result *r0 = runs[0];
  char title[512];

  snprintf(title, sizeof(title), "%s%s on %s, offered load %.2f",
           r0->sum.synthetic ? "SYNTHETIC " : "", base_name(r0->trace_name),
           r0->cluster, r0->offered_load);
  sm_buf_adds(b, "<!DOCTYPE html>\n<html lang='en'><head><meta "
                 "charset='utf-8'><title>SchedMate simulation: ");
  sm__html_escape(b, title);
  sm_buf_adds(b,
              "</title>\n<style>body{font-family:sans-serif;margin:24px;"
              "max-width:1100px}table{border-collapse:collapse;margin:6px "
              "0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:"
              "right;white-space:nowrap}th{background:#f4f4f4}"
              "td:first-child{text-align:left}.warn{background:#fff3cd;border:"
              "1px solid #e0c060;padding:8px;font-weight:bold}.head{"
              "color:#333}</style></head><body>\n");
  sm_buf_adds(b, "<h1>");
  sm__html_escape(b, title);
  sm_buf_adds(b, "</h1>\n");
  if (r0->sum.synthetic)
    sm_buf_adds(b, "<p class='warn'>SYNTHETIC TRACE: the jobs below were "
                   "generated from published summary statistics, not "
                   "taken from a real job log.</p>\n");
  sm_buf_adds(b, "<p class='head'>Trace <b>");
  sm__html_escape(b, r0->trace_name);
  sm_buf_addf(b, "</b> (%s): %zu jobs simulated, %zu left out", r0->format,
              r0->sum.jobs, r0->sum.dropped);
  if (r0->dropped_why[0]) {
    sm_buf_adds(b, " (");
    sm__html_escape(b, r0->dropped_why);
    sm_buf_adds(b, ")");
  }
  sm_buf_adds(b, ".<br>Cluster: ");
  sm__html_escape(b, r0->cluster);
  sm_buf_adds(b, ", ");
  sm__html_escape(b, r0->cluster_origin);
  sm_buf_addf(b,
              ".<br>Offered load %.2f: the jobs' GPU-time divided by the "
              "cluster's GPUs times the span from the first submission to "
              "the last job's submission plus run time.<br>",
              r0->offered_load);
  for (size_t i = 0; i < n; i++)
    if (runs[i]->carved_nodes > 0) {
      sm_buf_addf(b,
                  "Lucid's profiler: in the runs of lucid and "
                  "lucid+schedmate only, %d node%s of VC '",
                  runs[i]->carved_nodes, runs[i]->carved_nodes == 1 ? "" : "s");
      sm__html_escape(b, runs[i]->carved_from);
      sm_buf_adds(b, "' form the profiling partition (taken from the "
                     "cluster's capacity, as in Lucid's simulator); every "
                     "other policy uses all nodes.<br>");
      break;
    }
  sm_buf_addf(b,
              "Placement %s; preemption overhead %g s (at most %d GPUs) / "
              "%g s (more).</p>\n",
              r0->placement, r0->preempt_small, r0->overhead_gpus,
              r0->preempt_large);
}

static void summary_table(sm_buf *b, const sm_sim_result *const *runs,
                          size_t n) {
  sm_buf_adds(b, "<h2>Summary</h2>\n<table><tr><th>policy</th><th>jobs"
                 "</th><th>avg JCT</th><th>median JCT</th><th>p99 JCT</th>"
                 "<th>avg queueing delay</th><th>p99 queueing delay</th>"
                 "<th>makespan</th><th>GPU util</th><th>preemptions</th>"
                 "<th>simulation time</th></tr>\n");
  for (size_t i = 0; i < n; i++) {
    const sm_sim_summary *m = &runs[i]->sum;
    sm_buf_adds(b, "<tr>");
    cell_name(b, runs, n, i);
    sm_buf_addf(b, "<td>%zu</td>", m->jobs);
    cell_dur(b, m->avg_jct_s);
    cell_dur(b, m->median_jct_s);
    cell_dur(b, m->p99_jct_s);
    cell_dur(b, m->avg_wait_s);
    cell_dur(b, m->p99_wait_s);
    cell_dur(b, m->makespan_s);
    sm_buf_addf(b, "<td>%.1f %%</td><td>%zu</td><td>%.3f s</td></tr>\n",
                100 * m->avg_util, m->preemptions, m->wall_s);
  }
  sm_buf_adds(b, "</table>\n<p>JCT = end &minus; submission, over the jobs "
                 "that ended; p99 by nearest rank.  " QUEUE_DEF "</p>\n");
}

/* The settings each run read. */
static void settings_section(sm_buf *b, const sm_sim_result *const *runs,
                             size_t n) {
  int any = 0;

  for (size_t i = 0; i < n; i++)
    any |= runs[i]->params.n > 0;
  if (!any)
    return;
  sm_buf_adds(b, "<h2>Settings each policy used</h2>\n<ul>\n");
  for (size_t i = 0; i < n; i++) {
    char lab[96];
    if (runs[i]->params.n == 0)
      continue;
    sm_buf_adds(b, "<li><b>");
    sm__html_escape(b, label(runs, n, i, lab, sizeof(lab)));
    sm_buf_adds(b, "</b>: ");
    for (size_t k = 0; k < runs[i]->params.n; k++) {
      if (k)
        sm_buf_adds(b, ", ");
      sm_buf_adds(b, "<code>");
      sm__html_escape(b, runs[i]->params.v[k]);
      sm_buf_adds(b, "</code>");
    }
    sm_buf_adds(b, "</li>\n");
  }
  sm_buf_adds(b, "</ul>\n<p>A setting a policy never reads is not "
                 "listed under it.</p>\n");
}

/* Every note once, in the order of the runs. */
static void notes_section(sm_buf *b, const sm_sim_result *const *runs,
                          size_t n) {
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
  sm_buf_adds(b, "</ul>\n");
}

int sm_sim_report_html_ex(const sm_sim_result *const *runs, size_t n,
                          const sm_sim_report_opts *o, sm_buf *b) {
  if (n == 0)
    return SM_EINVAL;
  page_head(b, runs, n);
  summary_table(b, runs, n);
  schedmate_section(b, runs, n);
  if (o != NULL && o->sweep_param != NULL && o->nsweep > 0)
    sweep_section(b, runs, n, o);
  sm_buf_adds(b, "<h2>JCT distribution</h2>\n");
  plot_cdf(b, runs, n);
  sm_buf_adds(b, "<h2>Queue length over time</h2>\n");
  plot_series(b, runs, n, 1);
  sm_buf_adds(b, "<h2>GPU utilisation over time</h2>\n");
  plot_series(b, runs, n, 0);
  if (n > MAX_PLOT)
    sm_buf_addf(b, "<p>Time plots show the first %d runs.</p>\n", MAX_PLOT);
  stats_table(b, runs, n);
  settings_section(b, runs, n);
  notes_section(b, runs, n);
  sm_buf_adds(b, "<p>Written by schedmate simulate " SM_VERSION_STRING
                 ".</p>\n</body></html>\n");
  return b->len > 0 && b->data != NULL ? 0 : SM_ENOMEM;
}
