/* series.c - one job's samples on one node and what they add up to.
 *
 * Samples are kept whole (time and four metrics) up to a cap; past it,
 * every other kept sample is dropped and only every 2nd (4th, ...) new one
 * is kept, so memory stays bounded and the kept samples stay evenly
 * spread over the run.  The peak memory is tracked over every sample.
 *
 * The warm-up rule (docs/gpustat.md): the steady state starts
 * min(warmup_s, warmup_frac x span) after the first sample, span being the
 * time from the first sample to the last.  Loading data, building the
 * model and compiling kernels make the first minute of a job look nothing
 * like the rest; a fixed 60 s covers that for real jobs, and the fraction
 * keeps a short job from losing most of its samples.  The statistics
 * (mean, and p50/p95 by linear interpolation between ranks) are over the
 * steady samples, or over all samples when fewer than min_steady remain
 * (steady 0 says so). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpustat/gpustat_int.h"

#define NMET 4

struct sm_gpu_series {
  sm_gpu_series_opts o; /* with defaults applied */
  double *t;            /* kept sample times */
  float *v[NMET];       /* kept values, NAN unknown */
  int n, cap;           /* kept, allocated */
  int stride;           /* keep every stride-th sample added */
  long long seen;       /* samples added */
  double first, last;   /* first and last sample time */
  double peak_mem;      /* highest memory of any sample, NAN none */
};

sm_gpu_series *sm_gpu_series_new(const sm_gpu_series_opts *o) {
  sm_gpu_series *s = sm_calloc(1, sizeof(*s));

  if (s == NULL)
    return NULL;
  if (o != NULL)
    s->o = *o;
  if (s->o.warmup_s == 0 || !isfinite(s->o.warmup_s))
    s->o.warmup_s = 60;
  else if (s->o.warmup_s < 0)
    s->o.warmup_s = 0; /* no warm-up */
  if (!(s->o.warmup_frac > 0 && s->o.warmup_frac < 1))
    s->o.warmup_frac = 0.25;
  if (s->o.min_steady <= 0)
    s->o.min_steady = 3;
  if (s->o.cap < 16)
    s->o.cap = 65536;
  s->o.cap &= ~1; /* even, for halving */
  s->stride = 1;
  s->peak_mem = NAN;
  return s;
}

void sm_gpu_series_free(sm_gpu_series *s) {
  if (s == NULL)
    return;
  sm_free(s->t);
  for (int m = 0; m < NMET; m++)
    sm_free(s->v[m]);
  sm_free(s);
}

static void point_values(const sm_gpu_point *p, double v[NMET]) {
  v[0] = p->sm_util;
  v[1] = p->mem_bw_util;
  v[2] = p->mem_used_mib;
  v[3] = p->power_w;
}

static int grow(sm_gpu_series *s) {
  int cap = s->cap ? s->cap * 2 : 256;
  double *t;

  if (cap > s->o.cap)
    cap = s->o.cap;
  t = sm_realloc(s->t, (size_t)cap * sizeof(*t));
  if (t == NULL)
    return SM_ENOMEM;
  s->t = t;
  for (int m = 0; m < NMET; m++) {
    float *v = sm_realloc(s->v[m], (size_t)cap * sizeof(float));
    if (v == NULL)
      return SM_ENOMEM;
    s->v[m] = v;
  }
  s->cap = cap;
  return 0;
}

int sm_gpu_series_add(sm_gpu_series *s, double t, const sm_gpu_point *p) {
  double v[NMET];

  if (!isfinite(t) || (s->seen > 0 && t < s->last))
    return SM_EINVAL;
  point_values(p, v);
  if (s->seen == 0)
    s->first = t;
  s->last = t;
  if (isfinite(v[2]) && v[2] >= 0 && !(v[2] <= s->peak_mem))
    s->peak_mem = v[2];
  s->seen++;
  if ((s->seen - 1) % s->stride != 0)
    return 0;
  if (s->n == s->o.cap) {
    /* Keep every other sample; keep every 2*stride-th from now on. */
    for (int i = 0; i < s->n / 2; i++) {
      s->t[i] = s->t[2 * i];
      for (int m = 0; m < NMET; m++)
        s->v[m][i] = s->v[m][2 * i];
    }
    s->n /= 2;
    s->stride *= 2;
    if ((s->seen - 1) % s->stride != 0)
      return 0;
  }
  if (s->n == s->cap && grow(s) != 0)
    return SM_ENOMEM;
  s->t[s->n] = t;
  for (int m = 0; m < NMET; m++)
    s->v[m][s->n] = isfinite(v[m]) ? (float)v[m] : NAN;
  s->n++;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Linear interpolation between closest ranks of sorted v[0..n). */
static double quantile(const double *v, int n, double q) {
  double pos = q * (n - 1);
  int lo = (int)floor(pos);
  if (lo >= n - 1)
    return v[n - 1];
  return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

static void stat_of(const sm_gpu_series *s, int m, int from, double *tmp,
                    sm_gpu_stat *st) {
  int n = 0;
  double sum = 0;

  for (int i = from; i < s->n; i++)
    if (isfinite(s->v[m][i]))
      tmp[n++] = s->v[m][i];
  st->n = n;
  if (n == 0) {
    st->mean = st->p50 = st->p95 = st->max = NAN;
    return;
  }
  qsort(tmp, (size_t)n, sizeof(double), cmp_double);
  for (int i = 0; i < n; i++)
    sum += tmp[i];
  st->mean = sum / n;
  st->p50 = quantile(tmp, n, 0.50);
  st->p95 = quantile(tmp, n, 0.95);
  st->max = tmp[n - 1];
}

void sm_gpu_series_summary(const sm_gpu_series *s, sm_gpu_summary *out) {
  double span, cut, *tmp;
  int from = 0;

  memset(out, 0, sizeof(*out));
  out->samples = s->seen;
  out->stored = s->n;
  out->stride = s->stride;
  out->mem_peak_mib = s->peak_mem;
  out->first = s->first;
  out->last = s->last;
  span = s->seen ? s->last - s->first : 0;
  out->warmup_s = fmin(s->o.warmup_s, s->o.warmup_frac * span);
  cut = s->first + out->warmup_s;
  while (from < s->n && s->t[from] < cut)
    from++;
  out->steady = s->n - from >= s->o.min_steady;
  if (!out->steady)
    from = 0;
  out->steady_samples = s->n - from;
  tmp = s->n ? sm_malloc((size_t)s->n * sizeof(double)) : NULL;
  if (tmp == NULL) {
    sm_gpu_stat *st[NMET] = {&out->sm_util, &out->mem_bw_util,
                             &out->mem_used_mib, &out->power_w};
    for (int m = 0; m < NMET; m++) {
      st[m]->n = 0;
      st[m]->mean = st[m]->p50 = st[m]->p95 = st[m]->max = NAN;
    }
    return;
  }
  stat_of(s, 0, from, tmp, &out->sm_util);
  stat_of(s, 1, from, tmp, &out->mem_bw_util);
  stat_of(s, 2, from, tmp, &out->mem_used_mib);
  stat_of(s, 3, from, tmp, &out->power_w);
  sm_free(tmp);
}

static double r1(double v) {
  return isfinite(v) ? round(v * 10) / 10 : NAN;
}

void sm_gpu_series_write_json(const sm_gpu_series *s, int points, sm_jw *w) {
  static const char *const names[NMET] = {"sm_util", "mem_bw_util",
                                          "mem_used_mib", "power_w"};
  sm_gpu_summary sum;
  double span = s->seen ? s->last - s->first : 0, step;
  int bins;

  if (points < 1)
    points = 1;
  sm_gpu_series_summary(s, &sum);
  bins = s->n == 0 ? 0 : span > 0 ? SM_MIN(points, s->n) : 1;
  step = bins > 0 ? span / bins : 0;
  sm_jw_obj_begin(w);
  sm_jw_kv_num(w, "t0", s->seen ? round(s->first * 1000) / 1000 : NAN);
  sm_jw_kv_num(w, "step_s", round(step * 1000) / 1000);
  sm_jw_kv_num(w, "warmup_s", round(sum.warmup_s * 1000) / 1000);
  sm_jw_kv_int(w, "points", bins);
  for (int m = 0; m < NMET; m++) {
    int i = 0;
    sm_jw_key(w, names[m]);
    sm_jw_arr_begin(w);
    for (int b = 0; b < bins; b++) {
      double hi = b == bins - 1 ? INFINITY : s->first + (b + 1) * step;
      double acc = 0;
      int k = 0;
      for (; i < s->n && s->t[i] < hi; i++)
        if (isfinite(s->v[m][i])) {
          acc += s->v[m][i];
          k++;
        }
      sm_jw_num(w, k ? r1(acc / k) : NAN);
    }
    sm_jw_arr_end(w);
  }
  sm_jw_obj_end(w);
}

static void stat_json(sm_jw *w, const char *key, const sm_gpu_stat *st) {
  sm_jw_key(w, key);
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "n", st->n);
  sm_jw_kv_num(w, "mean", r1(st->mean));
  sm_jw_kv_num(w, "p50", r1(st->p50));
  sm_jw_kv_num(w, "p95", r1(st->p95));
  sm_jw_kv_num(w, "max", r1(st->max));
  sm_jw_obj_end(w);
}

void sm_gpu_summary_write_json(const sm_gpu_summary *s, sm_jw *w) {
  sm_jw_kv_int(w, "samples", s->samples);
  sm_jw_kv_int(w, "stride", s->stride);
  sm_jw_kv_bool(w, "steady", s->steady);
  sm_jw_kv_int(w, "steady_samples", s->steady_samples);
  sm_jw_kv_num(w, "warmup_s", round(s->warmup_s * 1000) / 1000);
  stat_json(w, "sm_util", &s->sm_util);
  stat_json(w, "mem_bw_util", &s->mem_bw_util);
  stat_json(w, "mem_used_mib", &s->mem_used_mib);
  stat_json(w, "power_w", &s->power_w);
  sm_jw_kv_num(w, "gpu_mem_mib", r1(s->mem_peak_mib));
}
