/* advise.c - from similar past jobs to an estimate, or an explicit
 * fallback.
 *
 * The reference design's rule is the plain mean of the matches' durations
 * and SM utilisations.  That is kept as the headline figure, with three
 * corrections a scheduler needs:
 *   - only completed runs give durations: a cancelled or failed run says
 *     when the job was stopped, not how long it takes, and would teach SJF
 *     that the job is short; the share of early endings and the mean over
 *     all outcomes are reported separately;
 *   - a similarity- (and optionally time-) weighted mean and the median sit
 *     beside the plain mean, with the standard deviation;
 *   - a history that disagrees with itself (coefficient of variation or
 *     max/min ratio above a gate) is a fallback, "inconsistent_history",
 *     not a confident average of two different kinds of job. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "schedmate/sm_history.h"

static const char *const fallback_names[] = {NULL,
                                             "no_match",
                                             "below_threshold",
                                             "extract_failed",
                                             "inconsistent_history",
                                             "history_unavailable"};

const char *sm_fallback_name(sm_fallback f) {
  return (unsigned)f < SM_ARRAY_LEN(fallback_names) ? fallback_names[f]
                                                    : "unknown";
}

void sm_advice_init(sm_advice *a) {
  memset(a, 0, sizeof(*a));
  a->best_score = NAN;
}

static void estimate_release(sm_estimate *e) {
  for (int i = 0; i < e->n_perf; i++)
    sm_free(e->perf[i].gpu_type);
  sm_free(e->perf);
  memset(e, 0, sizeof(*e));
}

void sm_advice_release(sm_advice *a) {
  for (int i = 0; i < a->n_matches; i++)
    sm_record_release(&a->matches[i]);
  sm_free(a->matches);
  sm_free(a->scores);
  estimate_release(&a->est);
  sm_advice_init(a);
}

static void defaults(const sm_advise_opts *in, sm_advise_opts *o) {
  if (in)
    *o = *in;
  else
    memset(o, 0, sizeof(*o));
  if (o->top_k <= 0)
    o->top_k = 5;
  if (!(o->threshold > 0))
    o->threshold = 0.95f;
  if (!(o->max_cv > 0))
    o->max_cv = 1.0;
  if (!(o->max_ratio > 0))
    o->max_ratio = 20.0;
  if (!(o->now > 0))
    o->now = (double)time(NULL);
}

/* Aggregates the matches' perf points by (gpu type, GPUs, batch). */
static int aggregate_perf(sm_advice *a) {
  sm_estimate *e = &a->est;

  for (int i = 0; i < a->n_matches; i++)
    for (int j = 0; j < a->matches[i].n_perf; j++) {
      const sm_perf_point *p = &a->matches[i].perf[j];
      int k;
      for (k = 0; k < e->n_perf; k++)
        if (e->perf[k].gpus == p->gpus && e->perf[k].batch == p->batch &&
            strcmp(e->perf[k].gpu_type, p->gpu_type) == 0)
          break;
      if (k == e->n_perf) {
        sm_perf_agg *np = sm_realloc(e->perf, (size_t)(k + 1) * sizeof(*np));
        if (np == NULL)
          return SM_ENOMEM;
        e->perf = np;
        np[k].gpu_type = sm_strdup(p->gpu_type);
        if (np[k].gpu_type == NULL)
          return SM_ENOMEM;
        np[k].gpus = p->gpus;
        np[k].batch = p->batch;
        np[k].throughput = 0;
        np[k].n = 0;
        e->n_perf++;
      }
      /* Running mean. */
      e->perf[k].n++;
      e->perf[k].throughput +=
          (p->throughput - e->perf[k].throughput) / e->perf[k].n;
    }
  return 0;
}

void sm_estimate_compute(sm_advice *a, const sm_advise_opts *in) {
  sm_advise_opts o;
  sm_estimate *e = &a->est;
  double sum = 0, sum_all = 0, sum_util = 0, wsum = 0, wdur = 0, sum_mem = 0;
  double mn = INFINITY, mx = 0, durs[256];
  int n_all = 0, n_util = 0, nc = 0, n_mem = 0;

  defaults(in, &o);
  estimate_release(e);
  if (a->n_matches == 0)
    return;
  for (int i = 0; i < a->n_matches; i++) {
    const sm_record *r = &a->matches[i];
    if (isnan(r->duration_s))
      continue;
    sum_all += r->duration_s;
    n_all++;
    if (r->end_state != SM_END_COMPLETED)
      continue;
    {
      double w = a->scores ? a->scores[i] : 1.0;
      double t = !isnan(r->submit_time) ? r->submit_time : r->added_at;
      if (o.half_life_s > 0 && !isnan(t) && t < o.now)
        w *= pow(0.5, (o.now - t) / o.half_life_s);
      wsum += w;
      wdur += w * r->duration_s;
    }
    sum += r->duration_s;
    if (nc < (int)SM_ARRAY_LEN(durs))
      durs[nc] = r->duration_s;
    nc++;
    if (r->duration_s < mn)
      mn = r->duration_s;
    if (r->duration_s > mx)
      mx = r->duration_s;
    if (!isnan(r->sm_util)) {
      sum_util += r->sm_util;
      n_util++;
    }
    if (!isnan(r->gpu_mem_mib)) {
      sum_mem += r->gpu_mem_mib;
      n_mem++;
    }
  }
  e->n_completed = nc;
  e->p_early_end = (double)(a->n_matches - nc) / (double)a->n_matches;
  e->expected_duration_s = n_all ? sum_all / n_all : NAN;
  if (aggregate_perf(a) != 0) {
    snprintf(a->detail, sizeof(a->detail), "out of memory");
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    return;
  }
  if (nc == 0) {
    a->fallback = SM_FALLBACK_NO_MATCH;
    snprintf(a->detail, sizeof(a->detail),
             "%d similar job(s) found, none completed: their durations are "
             "not run times",
             a->n_matches);
    return;
  }
  e->n = nc;
  e->duration_s = sum / nc;
  e->sm_util = n_util ? sum_util / n_util : NAN;
  e->n_util = n_util;
  e->gpu_mem_mib = n_mem ? sum_mem / n_mem : NAN;
  e->weighted_duration_s = wsum > 0 ? wdur / wsum : e->duration_s;
  e->median_duration_s =
      sm_median(durs, (size_t)SM_MIN(nc, (int)SM_ARRAY_LEN(durs)));
  {
    double ss = 0;
    for (int i = 0; i < a->n_matches; i++) {
      const sm_record *r = &a->matches[i];
      if (r->end_state == SM_END_COMPLETED && !isnan(r->duration_s))
        ss += (r->duration_s - e->duration_s) * (r->duration_s - e->duration_s);
    }
    e->stdev = nc > 1 ? sqrt(ss / (nc - 1)) : 0.0;
  }
  if (nc >= 2 && e->duration_s > 0 &&
      (e->stdev / e->duration_s > o.max_cv ||
       (mn > 0 ? mx / mn : INFINITY) > o.max_ratio)) {
    a->fallback = SM_FALLBACK_INCONSISTENT;
    snprintf(a->detail, sizeof(a->detail),
             "matches disagree: durations %.0f..%.0f s (cv %.2f)", mn, mx,
             e->stdev / e->duration_s);
    return;
  }
  e->valid = 1;
  a->fallback = SM_FALLBACK_NONE;
  a->detail[0] = '\0';
}

static int is_zero(const float *fp) {
  for (int i = 0; i < SM_FP_DIMS; i++)
    if (fp[i] != 0.0f)
      return 0;
  return 1;
}

int sm_advise(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
              const sm_advise_opts *in, sm_advice *a, sm_err *err) {
  sm_advise_opts o;
  float fp[SM_FP_DIMS];
  sm_store_hit *hits;
  int n, keep = 0;
  sm_err serr = {0};

  defaults(in, &o);
  sm_advice_release(a);
  sm_fingerprint(m, x, fp);
  if (is_zero(fp)) {
    a->fallback = SM_FALLBACK_EXTRACT_FAILED;
    snprintf(a->detail, sizeof(a->detail), "no workload metadata to match on");
    return 0;
  }
  if (s == NULL) {
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    snprintf(a->detail, sizeof(a->detail), "history store not open");
    return 0;
  }
  hits = sm_calloc((size_t)o.top_k, sizeof(*hits));
  if (hits == NULL)
    return sm_err_set(err, SM_ENOMEM, "advise: out of memory");
  n = sm_store_search(s, fp, o.top_k, -2.0f, hits, &serr);
  if (n < 0) {
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    snprintf(a->detail, sizeof(a->detail), "%s", serr.msg);
    sm_err_set(err, n, "%s", serr.msg);
    sm_free(hits);
    return 0;
  }
  if (n == 0) {
    a->fallback = SM_FALLBACK_NO_MATCH;
    snprintf(a->detail, sizeof(a->detail), "the history is empty");
    sm_free(hits);
    return 0;
  }
  a->best_score = hits[0].score > 1.0f ? 1.0f : hits[0].score;
  while (keep < n && hits[keep].score >= o.threshold)
    keep++;
  if (keep == 0) {
    a->fallback = SM_FALLBACK_BELOW_THRESHOLD;
    snprintf(a->detail, sizeof(a->detail),
             "best match %.3f (job %.60s) is below the threshold %.3f",
             hits[0].score, hits[0].id, o.threshold);
    sm_free(hits);
    return 0;
  }
  a->matches = sm_calloc((size_t)keep, sizeof(sm_record));
  a->scores = sm_calloc((size_t)keep, sizeof(float));
  if (a->matches == NULL || a->scores == NULL) {
    sm_free(hits);
    return sm_err_set(err, SM_ENOMEM, "advise: out of memory");
  }
  for (int i = 0; i < keep; i++) {
    sm_record_init(&a->matches[a->n_matches]);
    if (sm_store_get(s, hits[i].id, &a->matches[a->n_matches], &serr) != 0) {
      /* Gone between search and read: skip it. */
      sm_record_release(&a->matches[a->n_matches]);
      if (serr.code != SM_ENOTFOUND) {
        a->fallback = SM_FALLBACK_UNAVAILABLE;
        snprintf(a->detail, sizeof(a->detail), "%s", serr.msg);
        sm_free(hits);
        return 0;
      }
      sm_err_clear(&serr);
      continue;
    }
    /* Rounding can put a self-match a hair above 1. */
    a->scores[a->n_matches++] = hits[i].score > 1.0f ? 1.0f : hits[i].score;
  }
  sm_free(hits);
  if (a->n_matches == 0) {
    a->fallback = SM_FALLBACK_NO_MATCH;
    snprintf(a->detail, sizeof(a->detail), "matches vanished while reading");
    return 0;
  }
  sm_estimate_compute(a, &o);
  return 0;
}

void sm_advice_write_json(const sm_advice *a, sm_jw *w) {
  const sm_estimate *e = &a->est;

  sm_jw_key(w, "matches");
  sm_jw_arr_begin(w);
  for (int i = 0; i < a->n_matches; i++) {
    const sm_record *r = &a->matches[i];
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "job_id", r->id);
    sm_jw_kv_num(w, "score", round(a->scores[i] * 1e6) / 1e6);
    sm_jw_kv_num(w, "duration_s", r->duration_s);
    sm_jw_kv_num(w, "sm_util", r->sm_util);
    sm_jw_kv_num(w, "gpu_mem_mib", r->gpu_mem_mib);
    sm_jw_kv_str(w, "util_source", r->util_source);
    sm_jw_kv_str(w, "gpu_model", r->gpu_model);
    sm_jw_kv_str(w, "driver_version", r->driver_version);
    sm_jw_kv_str(w, "end_state", sm_end_state_name(r->end_state));
    sm_jw_kv_num(w, "submit_time", r->submit_time);
    sm_jw_kv_str(w, "gpu_type", r->gpu_type);
    sm_jw_kv_str(w, "sw_version", r->sw_version);
    sm_jw_kv_num(w, "throughput", r->throughput);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_key(w, "estimate");
  if (!e->valid) {
    sm_jw_null(w);
  } else {
    sm_jw_obj_begin(w);
    sm_jw_kv_num(w, "duration_s", e->duration_s);
    sm_jw_kv_num(w, "sm_util", e->sm_util);
    sm_jw_kv_num(w, "gpu_mem_mib", e->gpu_mem_mib);
    sm_jw_key(w, "sm_util_provenance");
    sm_advice_write_util_provenance(a, w);
    sm_jw_kv_int(w, "n", e->n);
    sm_jw_kv_num(w, "stdev", e->stdev);
    sm_jw_kv_num(w, "weighted_duration_s", e->weighted_duration_s);
    sm_jw_kv_num(w, "median_duration_s", e->median_duration_s);
    sm_jw_kv_num(w, "p_early_end", e->p_early_end);
    sm_jw_kv_num(w, "expected_duration_s", e->expected_duration_s);
    sm_jw_key(w, "perf_model");
    if (e->n_perf == 0) {
      sm_jw_null(w);
    } else {
      sm_jw_arr_begin(w);
      for (int i = 0; i < e->n_perf; i++) {
        sm_jw_obj_begin(w);
        sm_jw_kv_str(w, "gpu_type", e->perf[i].gpu_type);
        sm_jw_kv_int(w, "gpus", e->perf[i].gpus);
        sm_jw_key(w, "batch");
        if (e->perf[i].batch > 0)
          sm_jw_int(w, e->perf[i].batch);
        else
          sm_jw_null(w);
        sm_jw_kv_num(w, "throughput", e->perf[i].throughput);
        sm_jw_kv_int(w, "n", e->perf[i].n);
        sm_jw_obj_end(w);
      }
      sm_jw_arr_end(w);
    }
    sm_jw_obj_end(w);
  }
  sm_jw_key(w, "outcomes");
  if (a->n_matches == 0) {
    sm_jw_null(w);
  } else {
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "n_matches", a->n_matches);
    sm_jw_kv_int(w, "n_completed", e->n_completed);
    sm_jw_kv_num(w, "p_early_end", e->p_early_end);
    sm_jw_kv_num(w, "expected_duration_s", e->expected_duration_s);
    sm_jw_obj_end(w);
  }
  sm_jw_kv_num(w, "best_score", round(a->best_score * 1e6) / 1e6);
  sm_jw_kv_bool(w, "fallback", a->fallback != SM_FALLBACK_NONE);
  sm_jw_kv_str(w, "fallback_reason", sm_fallback_name(a->fallback));
  sm_jw_kv_str(w, "fallback_detail", a->fallback ? a->detail : NULL);
}
