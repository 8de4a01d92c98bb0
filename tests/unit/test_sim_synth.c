/* test_sim_synth.c - the synthetic trace generator: it matches the
 * published figures it is calibrated to, is deterministic for a seed,
 * reads an operator's summary file, and always says it is synthetic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

static sm_sim_trace *gen(const char *cluster, size_t jobs, uint64_t seed,
                         const char *calib) {
  sm_sim_synth_opts o;
  sm_sim_trace *t = NULL;
  sm_err err = {0};

  sm_sim_synth_opts_init(&o);
  o.jobs = jobs;
  o.seed = seed;
  o.calibration = calib;
  if (sm_sim_trace_synthetic(cluster, &o, &t, &err) != 0)
    SM_FAIL_AT("%s: %s", cluster, err.msg);
  return t;
}

typedef struct figs {
  double median_run, mean_gpus, done, cancel, fail, span;
} figs;

static figs measure(const sm_sim_trace *t) {
  size_t n = sm_sim_trace_count(t);
  double *d = malloc(n * sizeof(double));
  figs f = {0};

  for (size_t i = 0; i < n; i++) {
    const sm_sim_job *j = sm_sim_trace_job(t, i);
    d[i] = j->duration;
    f.mean_gpus += j->gpus;
    f.done += j->end_state == SM_SIM_END_COMPLETED;
    f.cancel += j->end_state == SM_SIM_END_CANCELED;
    f.fail += j->end_state == SM_SIM_END_FAILED;
  }
  f.median_run = sm_median(d, n);
  f.mean_gpus /= n;
  f.done /= n;
  f.cancel /= n;
  f.fail /= n;
  f.span = sm_sim_trace_job(t, n - 1)->submit;
  free(d);
  return f;
}

/* Published figures (helios_cluster_summary.csv, cluster_summary.csv). */
SM_TEST(sim_synth_matches_calibration) {
  static const struct {
    const char *name;
    double med, gpus, done, cancel, fail;
    int cluster_gpus;
  } want[] = {{"venus", 204, 6.736, 0.526, 0.272, 0.202, 1022},
              {"saturn", 124, 4.01, 0.582, 0.272, 0.145, 2080},
              {"seren", 122, 5.68, 0.497, 0.075, 0.429, 2288},
              {"kalos", 124, 26.77, 0.541, 0.062, 0.397, 2416}};

  for (size_t i = 0; i < SM_ARRAY_LEN(want); i++) {
    sm_sim_trace *t = gen(want[i].name, 40000, 5, NULL);
    figs f = measure(t);
    ASSERT(sm_sim_trace_synthetic_p(t));
    ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_SYNTHETIC);
    ASSERT_EQ(sm_sim_trace_calibrated_gpus(t), want[i].cluster_gpus);
    ASSERT(strstr(sm_sim_trace_note(t, 0), "SYNTHETIC") != NULL);
    ASSERT(fabs(f.median_run / want[i].med - 1) < 0.25);
    ASSERT(fabs(f.mean_gpus / want[i].gpus - 1) < 0.35);
    ASSERT_NEAR(f.done, want[i].done, 0.02);
    ASSERT_NEAR(f.cancel, want[i].cancel, 0.02);
    ASSERT_NEAR(f.fail, want[i].fail, 0.02);
    sm_sim_trace_free(t);
  }
}

SM_TEST(sim_synth_rate_and_days) {
  sm_sim_synth_opts o;
  sm_sim_trace *t = NULL;
  sm_err err = {0};
  size_t n;

  /* Venus: 125,303 GPU jobs in 181 days, about 692 a day. */
  sm_sim_synth_opts_init(&o);
  o.days = 2;
  ASSERT_OK(sm_sim_trace_synthetic("venus", &o, &t, &err));
  n = sm_sim_trace_count(t);
  ASSERT(n > 1300 && n < 1470);
  ASSERT(measure(t).span > 1.8 * 86400 && measure(t).span < 2.2 * 86400);
  sm_sim_trace_free(t);
}

SM_TEST(sim_synth_deterministic) {
  sm_sim_trace *a = gen("earth", 2000, 9, NULL),
               *b = gen("earth", 2000, 9, NULL);
  sm_sim_trace *c = gen("earth", 2000, 10, NULL);
  int same = 1, differ = 0;

  for (size_t i = 0; i < 2000; i++) {
    const sm_sim_job *x = sm_sim_trace_job(a, i), *y = sm_sim_trace_job(b, i);
    const sm_sim_job *z = sm_sim_trace_job(c, i);
    same &= x->duration == y->duration && x->submit == y->submit &&
            x->gpus == y->gpus && strcmp(x->name, y->name) == 0;
    differ |= x->duration != z->duration;
  }
  ASSERT(same);
  ASSERT(differ);
  sm_sim_trace_free(a);
  sm_sim_trace_free(b);
  sm_sim_trace_free(c);
}

/* Repeated (user, name) templates carry information: jobs of the same
 * template have closer durations than jobs picked at random. */
SM_TEST(sim_synth_templates_are_informative) {
  sm_sim_trace *t = gen("venus", 20000, 3, NULL);
  double within = 0, across = 0;
  size_t nw = 0, na = 0, n = sm_sim_trace_count(t);

  for (size_t i = 1; i < n; i++) {
    const sm_sim_job *x = sm_sim_trace_job(t, i);
    for (size_t k = i > 50 ? i - 50 : 0; k < i; k++) {
      const sm_sim_job *y = sm_sim_trace_job(t, k);
      double d = fabs(log(x->duration) - log(y->duration));
      if (strcmp(x->name, y->name) == 0) {
        within += d;
        nw++;
      } else {
        across += d;
        na++;
      }
    }
  }
  ASSERT(nw > 100);
  ASSERT(within / nw < 0.8 * (across / na));
  sm_sim_trace_free(t);
}

SM_TEST(sim_synth_calibration_file) {
  sm_sim_trace *t =
      gen("venus", 5000, 1, SM_TEST_DATA("sim/summary_helios_sample.csv"));
  figs f = measure(t);
  sm_sim_synth_opts o;
  sm_err err = {0};
  sm_sim_trace *u = NULL;

  ASSERT_EQ(sm_sim_trace_calibrated_gpus(t), 64);
  ASSERT(fabs(f.median_run / 500 - 1) < 0.25);
  ASSERT_NEAR(f.done, 0.8, 0.03);
  ASSERT(strstr(sm_sim_trace_note(t, 0), "summary_helios_sample.csv"));
  sm_sim_trace_free(t);
  sm_sim_synth_opts_init(&o);
  o.calibration = SM_TEST_DATA("sim/summary_helios_sample.csv");
  ASSERT_EQ(sm_sim_trace_synthetic("kalos", &o, &u, &err), SM_ENOTFOUND);
  ASSERT(strstr(err.msg, "no row for cluster 'kalos'"));
  ASSERT_EQ(sm_sim_trace_synthetic("mars", NULL, &u, &err), SM_EINVAL);
}

SM_TEST(sim_synth_shared_summaries) {
  const char *files[] = {"../shared/traces/helios/helios_cluster_summary.csv",
                         "../shared/traces/acme/cluster_summary.csv"};
  const char *clusters[] = {"uranus", "kalos"};

  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(files[i], "r");
    sm_sim_trace *t;
    if (f == NULL)
      SM_SKIP("../shared/traces not present");
    fclose(f);
    t = gen(clusters[i], 3000, 2, files[i]);
    ASSERT_EQ(sm_sim_trace_calibrated_gpus(t), i == 0 ? 2119 : 2416);
    sm_sim_trace_free(t);
  }
}

/* A run on a synthetic trace reports it. */
SM_TEST(sim_synth_run_says_synthetic) {
  sm_sim_trace *t = gen("kalos", 500, 1, NULL);
  sm_sim_cluster *c = NULL;
  sm_sim_result *r = NULL;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;

  ASSERT_OK(sm_sim_cluster_parse("302x8", &c, &err));
  ASSERT_OK(sm_sim_run(t, c, NULL, &r, &err));
  ASSERT(sm_sim_result_summary(r)->synthetic);
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_sim_result_json(r, &w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\"synthetic\":true") != NULL);
  ASSERT(strstr(b.data, "SYNTHETIC trace") != NULL);
  sm_buf_reset(&b);
  ASSERT_OK(sm_sim_report_html((const sm_sim_result *const *)&r, 1, &b));
  ASSERT(strstr(b.data, "SYNTHETIC TRACE") != NULL);
  sm_buf_release(&b);
  sm_sim_result_free(r);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
}
