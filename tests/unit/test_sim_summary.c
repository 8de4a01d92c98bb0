/* test_sim_summary.c - the SchedMate summary of a comparison, the one
 * builder behind the command's text and JSON and the HTML report: when
 * there is something to show, the facts sources in order of first use,
 * the paths against their baselines, the failure model, and one line per
 * SchedMate run read from its typed figures (the same numbers the run's
 * figure list holds); the report carries the same lines. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

/* Users and job names that repeat, so that the history answers. */
static void trace_text(sm_buf *b, int n) {
  static const char *const states[] = {"completed", "completed", "failed",
                                       "completed", "canceled"};
  sm_buf_adds(b, "job_id,submit_s,duration_s,gpus,user,name,state\n");
  for (int i = 0; i < n; i++)
    sm_buf_addf(b, "j%d,%d,%d,%d,user%d,job%d,%s\n", i, i * 30,
                200 + 100 * (i % 7), 1 << (i % 3), i % 4, i % 5, states[i % 5]);
}

typedef struct cmp {
  sm_sim_trace *t;
  sm_sim_cluster *c;
  sm_sim_result *r[8];
  size_t n;
} cmp;

/* Runs the policies (NULL-terminated) on the same trace, each with the
 * settings kv (NULL-terminated) and, for those named with a facts
 * source after a colon ("sjf-schedmate:calibrated"), facts=SOURCE. */
static cmp compare(const char *const *pols, const char *const *kv) {
  cmp x;
  sm_buf b;
  sm_err err = {0};

  memset(&x, 0, sizeof(x));
  sm_buf_init(&b, 0);
  trace_text(&b, 120);
  ASSERT_OK(sm_sim_trace_load_mem(b.data, b.len, "s.csv", NULL, &x.t, &err));
  sm_buf_release(&b);
  ASSERT_OK(sm_sim_cluster_parse("4x4", &x.c, &err));
  for (; pols[x.n] != NULL; x.n++) {
    sm_sim_config cfg;
    char pol[48];
    const char *colon = strchr(pols[x.n], ':');
    sm_sim_config_init(&cfg);
    snprintf(pol, sizeof(pol), "%.*s",
             colon ? (int)(colon - pols[x.n]) : (int)strlen(pols[x.n]),
             pols[x.n]);
    cfg.policy = pol;
    for (int k = 0; kv[k] != NULL; k++)
      ASSERT_OK(sm_sim_config_param(&cfg, kv[k]));
    if (colon != NULL)
      ASSERT_OK(sm_sim_config_set(&cfg, "facts", colon + 1));
    if (sm_sim_run(x.t, x.c, &cfg, &x.r[x.n], &err) != 0)
      SM_FAIL_AT("%s: %s", pols[x.n], err.msg);
  }
  return x;
}

static void cmp_done(cmp *x) {
  for (size_t i = 0; i < x->n; i++)
    sm_sim_result_free(x->r[i]);
  sm_sim_cluster_free(x->c);
  sm_sim_trace_free(x->t);
}

#define RUNS(x) ((const sm_sim_result *const *)(x).r)

static double fig(const sm_sim_result *r, const char *name) {
  double v;
  if (!sm_sim_result_stat_get(r, name, &v))
    SM_FAIL_AT("no figure %s", name);
  return v;
}

SM_TEST(sim_summary_nothing_without_schedmate) {
  const char *pols[] = {"fifo", "qssf", NULL}, *kv[] = {NULL};
  cmp x = compare(pols, kv);
  sm_sim_schedmate_summary s;
  sm_buf b;

  sm_sim_schedmate_summarize(RUNS(x), x.n, &s);
  ASSERT_EQ(s.any, 0);
  ASSERT_EQ(s.nsources, 0);
  ASSERT_EQ(s.nspeedups, 0);
  sm_buf_init(&b, 0);
  ASSERT_EQ(sm_sim_schedmate_line(RUNS(x), x.n, 0, &b), 0);
  ASSERT_EQ(sm_sim_schedmate_line(RUNS(x), x.n, 5, &b), 0); /* past the end */
  ASSERT_EQ(b.len, 0);
  sm_buf_release(&b);
  sm_sim_schedmate_summarize(RUNS(x), 0, &s);
  ASSERT_EQ(s.any, 0);
  cmp_done(&x);
}

SM_TEST(sim_summary_paths_sources_and_lines) {
  const char *pols[] = {"qssf", "sjf-schedmate:history",
                        "sjf-schedmate:calibrated", "sjf-schedmate+fh:history",
                        NULL};
  const char *kv[] = {"lucid.tables=builtin", "fail.infra_share=1",
                      "fail.model=resubmit", NULL};
  cmp x = compare(pols, kv);
  sm_sim_schedmate_summary s;
  sm_buf b, html;
  char want[256];

  sm_sim_schedmate_summarize(RUNS(x), x.n, &s);
  ASSERT_EQ(s.any, 1);
  ASSERT_EQ(s.synthetic, 0);
  ASSERT(s.workloads == NULL);
  ASSERT_EQ(s.nsources, 2);
  ASSERT_STREQ(s.sources[0], "history");
  ASSERT_STREQ(s.sources[1], "calibrated");
  ASSERT_STREQ(s.fail_model, "resubmit");
  ASSERT_NEAR(s.fail_infra_share, 1, 0);
  ASSERT_NEAR(s.infra_failures, fig(x.r[0], "infra_failures"), 0);
  ASSERT(s.infra_failures > 0);
  ASSERT(s.util_lo <= s.util_hi);
  /* sjf-schedmate against qssf (twice: one per source), sjf-schedmate+fh
   * against the sjf-schedmate run with the same facts. */
  ASSERT_EQ(s.nspeedups, 3);
  ASSERT_STREQ(s.speedups[2].path, "sjf-schedmate+fh");
  ASSERT_EQ(s.speedups[2].base_run, 1);

  sm_buf_init(&b, 0);
  ASSERT_EQ(sm_sim_schedmate_line(RUNS(x), x.n, 0, &b), 0);
  ASSERT_EQ(sm_sim_schedmate_line(RUNS(x), x.n, 1, &b), 1);
  snprintf(want, sizeof(want),
           "sjf-schedmate [history]: hit rate %.1f%% (%.0f of %.0f), "
           "estimates within 2x of the truth %.1f%%",
           100 * fig(x.r[1], "facts_hit_rate"), fig(x.r[1], "facts_hits"),
           fig(x.r[1], "facts_queries"), 100 * fig(x.r[1], "facts_within_2x"));
  ASSERT_STREQ(sm_buf_str(&b), want);
  sm_buf_reset(&b);
  ASSERT_EQ(sm_sim_schedmate_line(RUNS(x), x.n, 3, &b), 1);
  snprintf(want, sizeof(want),
           "; infrastructure failures restarted from their checkpoint by "
           "the Failure Handler %.0f, nodes isolated %.0f",
           fig(x.r[3], "infra_restarts"), fig(x.r[3], "nodes_isolated"));
  ASSERT(strstr(sm_buf_str(&b), want) != NULL);
  ASSERT(fig(x.r[3], "infra_restarts") > 0);
  sm_buf_reset(&b);
  sm_sim_failures_line(&s, &b);
  snprintf(want, sizeof(want),
           "failures: model resubmit; %.0f infrastructure failures (share 1 "
           "of the trace's failed jobs)",
           s.infra_failures);
  ASSERT_STREQ(sm_buf_str(&b), want);

  /* The report writes the same lines (escaped). */
  sm_buf_init(&html, 0);
  ASSERT_OK(sm_sim_report_html(RUNS(x), x.n, &html));
  sm_buf_reset(&b);
  sm_sim_schedmate_line(RUNS(x), x.n, 1, &b);
  ASSERT(strstr(sm_buf_str(&html), sm_buf_str(&b)) != NULL);
  ASSERT(strstr(sm_buf_str(&html), "failures: model resubmit") != NULL);
  ASSERT(strstr(sm_buf_str(&html), "(dashed lines): no history") != NULL);
  sm_buf_release(&html);
  sm_buf_release(&b);
  cmp_done(&x);
}

SM_TEST(sim_summary_sweep_point_from_typed_figures) {
  const char *pols[] = {"lucid+schedmate", NULL};
  const char *kv[] = {"lucid.tables=builtin", "profiler.nodes=1", NULL};
  cmp x = compare(pols, kv);
  sm_sim_sweep_point p = sm_sim_sweep_point_of(x.r[0], 3, 0.5);

  ASSERT_EQ(p.run, 3);
  ASSERT_NEAR(p.value, 0.5, 0);
  ASSERT_NEAR(p.avg_jct_s, sm_sim_result_summary(x.r[0])->avg_jct_s, 0);
  ASSERT_NEAR(p.p99_jct_s, sm_sim_result_summary(x.r[0])->p99_jct_s, 0);
  ASSERT_NEAR(p.evictions, fig(x.r[0], "evictions"), 0);
  cmp_done(&x);
}
