/* test_gpustat_series.c - one job's GPU series: the warm-up rule, mean and
 * percentiles over the steady state, short jobs, unknown values, bounded
 * memory past the cap, and the down-sampled series. */
#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm_gpustat.h"

/* A realistic job at 1 s: 90 s of loading and compiling at low
 * utilisation, then a steady state around 80 % with a periodic eval dip. */
SM_TEST(gpustat_warmup_is_excluded) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s = sm_gpu_series_new(&o);
  sm_gpu_summary sum;
  double t0 = 1.7e9;
  ASSERT(s != NULL);
  for (int i = 0; i < 600; i++) {
    double sm = i < 60 ? 5 + i * 0.5 : (i % 50 == 0 ? 20 : 80);
    double mem = i < 30 ? 1000 + i * 100 : 31000;
    ASSERT_OK(sm_gpu_series_add(s, t0 + i, &(sm_gpu_point){sm, 35, mem, 300}));
  }
  sm_gpu_series_summary(s, &sum);
  ASSERT_EQ(sum.samples, 600);
  ASSERT_EQ(sum.steady, 1);
  /* The default rule: min(60 s, 25 % of 599 s) = 60 s. */
  ASSERT_NEAR(sum.warmup_s, 60, 1e-9);
  ASSERT_EQ(sum.steady_samples, 540);
  /* 540 steady samples, 10 eval dips at 20 %: mean 78.9, median 80. */
  ASSERT_NEAR(sum.sm_util.mean, (530 * 80 + 10 * 20) / 540.0, 1e-9);
  ASSERT_NEAR(sum.sm_util.p50, 80, 1e-9);
  ASSERT_NEAR(sum.sm_util.p95, 80, 1e-9);
  ASSERT_EQ(sum.sm_util.n, 540);
  /* Without the warm-up the mean would be visibly lower. */
  ASSERT(sum.sm_util.mean > 78.5);
  ASSERT_NEAR(sum.mem_used_mib.mean, 31000, 1e-9);
  ASSERT_NEAR(sum.mem_peak_mib, 31000, 1e-9);
  ASSERT_NEAR(sum.power_w.p95, 300, 1e-9);
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_warmup_fraction_for_short_jobs) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s;
  sm_gpu_summary sum;
  o.warmup_s = 60;
  o.warmup_frac = 0.25;
  s = sm_gpu_series_new(&o);
  /* A 40 s job: the warm-up is 10 s, not 60 s. */
  for (int i = 0; i <= 40; i++)
    ASSERT_OK(sm_gpu_series_add(
        s, 100 + i, &(sm_gpu_point){i < 10 ? 0 : 50, NAN, 10, NAN}));
  sm_gpu_series_summary(s, &sum);
  ASSERT_NEAR(sum.warmup_s, 10, 1e-9);
  ASSERT_EQ(sum.steady, 1);
  ASSERT_EQ(sum.steady_samples, 31);
  ASSERT_NEAR(sum.sm_util.mean, 50, 1e-9);
  /* Unknown metrics stay unknown. */
  ASSERT_EQ(sum.mem_bw_util.n, 0);
  ASSERT(isnan(sum.mem_bw_util.mean));
  ASSERT(isnan(sum.power_w.p95));
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_too_short_uses_all_samples) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s;
  sm_gpu_summary sum;
  o.min_steady = 3;
  s = sm_gpu_series_new(&o);
  ASSERT_OK(sm_gpu_series_add(s, 10, &(sm_gpu_point){40, 1, 5, 2}));
  ASSERT_OK(sm_gpu_series_add(s, 11, &(sm_gpu_point){60, 1, 7, 2}));
  sm_gpu_series_summary(s, &sum);
  ASSERT_EQ(sum.steady, 0);
  ASSERT_EQ(sum.steady_samples, 2);
  ASSERT_NEAR(sum.sm_util.mean, 50, 1e-9);
  ASSERT_NEAR(sum.sm_util.p50, 50, 1e-9);
  ASSERT_NEAR(sum.sm_util.p95, 59, 1e-9);
  sm_gpu_series_free(s);
  /* No samples at all. */
  s = sm_gpu_series_new(NULL);
  sm_gpu_series_summary(s, &sum);
  ASSERT_EQ(sum.samples, 0);
  ASSERT(isnan(sum.sm_util.mean));
  ASSERT(isnan(sum.mem_peak_mib));
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_percentiles_interpolate) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s;
  sm_gpu_summary sum;
  o.warmup_s = -1; /* no warm-up */
  s = sm_gpu_series_new(&o);
  /* 1..100 in a shuffled order. */
  for (int i = 0; i < 100; i++)
    ASSERT_OK(sm_gpu_series_add(
        s, i, &(sm_gpu_point){(i * 37) % 100 + 1, NAN, NAN, NAN}));
  sm_gpu_series_summary(s, &sum);
  ASSERT_NEAR(sum.warmup_s, 0, 1e-12);
  ASSERT_EQ(sum.steady_samples, 100);
  ASSERT_NEAR(sum.sm_util.mean, 50.5, 1e-9);
  ASSERT_NEAR(sum.sm_util.p50, 50.5, 1e-9);
  ASSERT_NEAR(sum.sm_util.p95, 95.05, 1e-9);
  ASSERT_NEAR(sum.sm_util.max, 100, 1e-9);
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_bad_times_and_values) {
  sm_gpu_series *s = sm_gpu_series_new(NULL);
  sm_gpu_summary sum;
  ASSERT_OK(sm_gpu_series_add(s, 10, &(sm_gpu_point){50, 1, 100, 1}));
  ASSERT_EQ(sm_gpu_series_add(s, 9, &(sm_gpu_point){50, 1, 100, 1}), SM_EINVAL);
  ASSERT_EQ(sm_gpu_series_add(s, NAN, &(sm_gpu_point){50, 1, 100, 1}),
            SM_EINVAL);
  ASSERT_EQ(sm_gpu_series_add(s, INFINITY, &(sm_gpu_point){50, 1, 100, 1}),
            SM_EINVAL);
  /* Same time twice is fine; infinite values are unknown. */
  ASSERT_OK(sm_gpu_series_add(s, 10, &(sm_gpu_point){INFINITY, NAN, -5, 1}));
  sm_gpu_series_summary(s, &sum);
  ASSERT_EQ(sum.samples, 2);
  ASSERT_EQ(sum.sm_util.n, 1);
  ASSERT_NEAR(sum.mem_peak_mib, 100, 1e-9);
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_memory_is_bounded_past_the_cap) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s;
  sm_gpu_summary sum;
  o.cap = 1024;
  o.warmup_s = -1;
  s = sm_gpu_series_new(&o);
  /* 100,000 samples (28 h at 1 s): a ramp, one memory spike. */
  for (int i = 0; i < 100000; i++)
    ASSERT_OK(sm_gpu_series_add(
        s, i, &(sm_gpu_point){i % 100, NAN, i == 77777 ? 79000 : 40000, NAN}));
  sm_gpu_series_summary(s, &sum);
  ASSERT_EQ(sum.samples, 100000);
  ASSERT(sum.stored <= 1024 && sum.stored >= 512);
  ASSERT(sum.stride >= 128);
  /* The peak is exact even though that sample was dropped. */
  ASSERT_NEAR(sum.mem_peak_mib, 79000, 1e-9);
  /* The kept samples are evenly spread: the mean of the ramp stays. */
  ASSERT_NEAR(sum.sm_util.mean, 49.5, 2.0);
  sm_gpu_series_free(s);
}

SM_TEST(gpustat_series_json_is_down_sampled) {
  sm_gpu_series_opts o = {0};
  sm_gpu_series *s = sm_gpu_series_new(&o);
  sm_buf b;
  sm_jw w;
  cJSON *j, *a;
  for (int i = 0; i < 1000; i++)
    ASSERT_OK(sm_gpu_series_add(
        s, 5000 + i, &(sm_gpu_point){i < 500 ? 10 : 90, NAN, 100, 250}));
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_gpu_series_write_json(s, 10, &w);
  ASSERT_OK(sm_jw_finish(&w));
  j = cJSON_Parse(b.data);
  ASSERT(j != NULL);
  ASSERT_EQ(cJSON_GetObjectItem(j, "points")->valueint, 10);
  a = cJSON_GetObjectItem(j, "sm_util");
  ASSERT_EQ(cJSON_GetArraySize(a), 10);
  ASSERT_NEAR(cJSON_GetArrayItem(a, 0)->valuedouble, 10, 1e-9);
  ASSERT_NEAR(cJSON_GetArrayItem(a, 9)->valuedouble, 90, 1e-9);
  ASSERT(cJSON_IsNull(
      cJSON_GetArrayItem(cJSON_GetObjectItem(j, "mem_bw_util"), 3)));
  ASSERT_NEAR(cJSON_GetObjectItem(j, "step_s")->valuedouble, 99.9, 1e-9);
  ASSERT_NEAR(cJSON_GetObjectItem(j, "warmup_s")->valuedouble, 60, 1e-9);
  cJSON_Delete(j);
  sm_buf_release(&b);
  sm_gpu_series_free(s);
  /* An empty series writes empty arrays. */
  s = sm_gpu_series_new(NULL);
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_gpu_series_write_json(s, 10, &w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\"sm_util\":[]") != NULL);
  ASSERT(strstr(b.data, "\"points\":0") != NULL);
  sm_buf_release(&b);
  sm_gpu_series_free(s);
}
