/* summary.c - the SchedMate summary of a comparison, built once for every
 * writer (the command's text and JSON, the HTML report): which sources
 * the facts came from and what each means, the SchedMate paths against
 * their baselines, the failure model, and one line per SchedMate run with
 * what its facts did (hit rate, profiling saved, evictions, restarts ...),
 * read from the runs' typed figures and parameters. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_sia.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

static const char *const source_names[] = {"history", "calibrated", "oracle"};

const char *sm_sim_facts_meaning(const char *src) {
  if (strcmp(src, "calibrated") == 0)
    return "no history: each job is a hit with the reference design's "
           "measured rate (73 %) and its estimate lies within 2x of the "
           "truth as often as the reference measured (85.7 %); a model of "
           "accuracy, not a measurement of this trace";
  if (strcmp(src, "oracle") == 0)
    return "UPPER BOUND, not a result: fingerprints built from each job's "
           "true GPU time (the outcome), and a hit knows the job's own "
           "profile";
  return "the history engine online over the trace: fingerprints from "
         "what is known at submission (user, job name, VC, GPUs, and the "
         "workload template those choose), answers only from jobs that "
         "ended before it";
}

/* 1 when run r consumed SchedMate's facts (it counted its questions). */
static int asked(const sm_sim_result *r) {
  return r->figs != NULL && SM__FIG_HAS(r->figs, facts_queries);
}

/* The facts sources of the runs, in order of first use. */
static void sources_of(const sm_sim_result *const *runs, size_t n,
                       sm_sim_schedmate_summary *s) {
  for (size_t i = 0; i < n; i++) {
    int dup = 0;
    if (runs[i]->facts[0] == '\0')
      continue;
    for (size_t k = 0; k < s->nsources; k++)
      dup |= strcmp(s->sources[k], runs[i]->facts) == 0;
    for (size_t k = 0; k < SM_ARRAY_LEN(source_names) && !dup; k++)
      if (strcmp(source_names[k], runs[i]->facts) == 0 &&
          s->nsources < SM_ARRAY_LEN(s->sources))
        s->sources[s->nsources++] = source_names[k];
  }
}

void sm_sim_schedmate_summarize(const sm_sim_result *const *runs, size_t n,
                                sm_sim_schedmate_summary *s) {
  const sm_sim_result *r0;

  memset(s, 0, sizeof(*s));
  if (n == 0)
    return;
  r0 = runs[0];
  s->nspeedups = sm_sim_speedups(runs, n, s->speedups, SM_SIM_MAX_SPEEDUPS);
  s->any = s->nspeedups > 0;
  for (size_t i = 0; i < n; i++)
    s->any |= asked(runs[i]);
  s->synthetic = r0->sum.synthetic;
  s->workloads = r0->par->workloads;
  sources_of(runs, n, s);
  s->offered_load = r0->offered_load;
  s->util_lo = 1;
  s->util_hi = 0;
  for (size_t i = 0; i < n; i++) {
    s->util_lo = SM_MIN(s->util_lo, runs[i]->sum.avg_util);
    s->util_hi = SM_MAX(s->util_hi, runs[i]->sum.avg_util);
  }
  /* Every result keeps its parameters (params.c has the defaults). */
  s->fail_model = r0->par->fail_model != NULL ? r0->par->fail_model : "trace";
  s->fail_infra_share = r0->par->fail_infra_share;
  s->infra_failures = r0->figs != NULL ? r0->figs->v.infra_failures : 0;
}

void sm_sim_failures_line(const sm_sim_schedmate_summary *s, sm_buf *out) {
  sm_buf_addf(out,
              "failures: model %s; %.0f infrastructure failures (share %g "
              "of the trace's failed jobs)%s",
              s->fail_model, s->infra_failures, s->fail_infra_share,
              s->infra_failures == 0
                  ? ": the Failure Handler has nothing to do on this trace"
                  : "");
}

/* ==== One line per SchedMate run ==== */

/* Sia + SchedMate against a "sia" run of the same comparison. */
static void sia_line(const sm_sim_result *const *runs, size_t n,
                     const sm_sim_result *r, sm_buf *out) {
  const sm__figs *f = &r->figs->v, *b = NULL;
  double jobs = (double)SM_MAX(r->sum.jobs, (size_t)1), bjobs = 1;

  for (size_t k = 0; k < n; k++)
    if (strcmp(runs[k]->policy, "sia") == 0 && runs[k]->figs != NULL) {
      b = &runs[k]->figs->v;
      bjobs = (double)SM_MAX(runs[k]->sum.jobs, (size_t)1);
    }
  sm_buf_addf(out,
              "%s: hit rate %.1f%% (%.0f of %.0f jobs started from "
              "the history)",
              r->policy, 100 * f->facts_hit_rate, f->facts_hits,
              f->facts_queries);
  sm_buf_addf(out, "; restarts %.2f per job", f->sia_restarts / jobs);
  if (b != NULL)
    sm_buf_addf(out, " (sia %.2f: %.0f restarts avoided)",
                b->sia_restarts / bjobs, b->sia_restarts - f->sia_restarts);
  sm_buf_addf(out, "; restarts while capped by the growth limit %.0f",
              f->sia_bootstrap_restarts);
  if (b != NULL)
    sm_buf_addf(out, " (sia %.0f)", b->sia_bootstrap_restarts);
  sm_buf_addf(out,
              "; profiling GPU-hours saved %.2f (profiling used %.2f); "
              "information source: the history of each workload file "
              "(ended jobs of the same application, %.0f observations "
              "seeded)",
              f->sia_profiling_gpu_h_saved, f->sia_profiling_gpu_h,
              f->sia_seeded_points);
}

/* Lucid + SchedMate and SchedMate-SJF (with the Failure Handler). */
static void facts_line(const sm_sim_result *const *runs, size_t n, size_t i,
                       sm_buf *out) {
  const sm__figures *fg = runs[i]->figs;
  const sm__figs *f = &fg->v;
  char lab[96];

  sm_buf_addf(out,
              "%s: hit rate %.1f%% (%.0f of %.0f), estimates within 2x of "
              "the truth %.1f%%",
              sm_sim_result_label(runs, n, i, lab, sizeof(lab)),
              100 * f->facts_hit_rate, f->facts_hits, f->facts_queries,
              100 * f->facts_within_2x);
  if (SM__FIG_HAS(fg, profiles_skipped))
    sm_buf_addf(out,
                "; profiling GPU-hours saved %.1f (profiler used %.1f); "
                "evictions %.0f (%.0f Tracker checks, %.0f untracked)",
                f->profiling_gpu_h_saved, f->profiler_gpu_h, f->evictions,
                f->tracker_checks, f->checks_skipped_untracked);
  if (SM__FIG_HAS(fg, infra_restarts))
    sm_buf_addf(out,
                "; infrastructure failures restarted from their checkpoint "
                "by the Failure Handler %.0f, nodes isolated %.0f",
                f->infra_restarts, f->nodes_isolated);
}

int sm_sim_schedmate_line(const sm_sim_result *const *runs, size_t n, size_t i,
                          sm_buf *out) {
  if (i >= n || !asked(runs[i]))
    return 0;
  if (SM__FIG_HAS(runs[i]->figs, sia_rounds))
    sia_line(runs, n, runs[i], out);
  else
    facts_line(runs, n, i, out);
  return 1;
}

int sm_sia_facts_line(const sm_sim_result *const *runs, size_t n, size_t i,
                      sm_buf *out) {
  if (i >= n || !asked(runs[i]) || !SM__FIG_HAS(runs[i]->figs, sia_rounds))
    return 0;
  sia_line(runs, n, runs[i], out);
  return 1;
}

/* ==== Sweeps ==== */

sm_sim_sweep_point sm_sim_sweep_point_of(const sm_sim_result *r, size_t run,
                                         double value) {
  sm_sim_sweep_point p;

  p.run = run;
  p.value = value;
  p.avg_jct_s = r->sum.avg_jct_s;
  p.evictions = r->figs != NULL ? r->figs->v.evictions : 0;
  p.p99_jct_s = r->sum.p99_jct_s;
  return p;
}
