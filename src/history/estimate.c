/* estimate.c - from similar past jobs to an estimate, or an explicit
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
 *     not a confident average of two different kinds of job.
 *
 * Before any of that, a match must be the same job: the cosine finds the
 * candidates, and each candidate at or above the threshold must pass the
 * identity check (no identity field known on both sides with different
 * values, and enough identity known on both sides and equal).  A job
 * whose own metadata cannot establish enough identity is not matched at
 * all: "too_little_known".  Falling back costs the scheduler an estimate;
 * a wrong match hands it another job's duration. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "history/history_int.h"
#include "schedmate/sm_history.h"

static const char *const fallback_names[] = {NULL,
                                             "no_match",
                                             "below_threshold",
                                             "extract_failed",
                                             "inconsistent_history",
                                             "history_unavailable",
                                             "too_little_known"};

const char *sm_fallback_name(sm_fallback f) {
  return (unsigned)f < SM_ARRAY_LEN(fallback_names) ? fallback_names[f]
                                                    : "unknown";
}

void sm_advice_init(sm_advice *a) {
  memset(a, 0, sizeof(*a));
  a->best_score = NAN;
  a->first_veto = -1;
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
  sm_free(a->shared);
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

/* Candidates beyond top_k in the first search.  When every one of them
 * was at or above the threshold and rejected, a second search returns
 * every row at or above the threshold (at most MAX_CANDIDATES; the index
 * prunes by the threshold, so this costs little more than the first) and
 * the walk goes on where it stopped. */
#define EXTRA_CANDIDATES 16
#define MAX_CANDIDATES 4096

/* The walk over the candidates. */
typedef struct walk {
  char **seen;          /* ids examined so far, in order (owned) */
  int n_seen;           /* count */
  int more;             /* the last search ended on candidates at or above
                         * the threshold with the top-k not yet full */
  char first_veto[200]; /* the first vetoed candidate, explained */
  char first_thin[200]; /* the first thin candidate, explained */
  char best_id[64];     /* the best candidate's id */
  int n_hits;           /* hits of the first search */
  const char *embedder; /* the query's embedder (NULL: built-in) */
} walk;

/* Fingerprints of two embedders are never compared (NULL and "" are the
 * built-in hashing embedder). */
static int same_embedder(const char *a, const char *b) {
  return strcmp(a && *a ? a : "hash-v1", b && *b ? b : "hash-v1") == 0;
}

static void walk_release(walk *p) {
  for (int i = 0; i < p->n_seen; i++)
    sm_free(p->seen[i]);
  sm_free(p->seen);
  p->seen = NULL;
  p->n_seen = 0;
}

static void explain_veto(const sm_meta *q, const sm_fp_extra *qx,
                         const sm_record *r, int veto, char *buf, size_t n) {
  const char *f = sm_identity_veto_name(veto);
  char mine[64], theirs[64];

  if (veto == SM_IDENT_VETO_UNEXPLAINED) {
    snprintf(buf, n,
             "job %.40s agrees on the metadata but differs in options or "
             "configuration the extractor does not explain "
             "(unexplained_difference)",
             r->id);
    return;
  }
  if (veto >= 0 && veto < SM_META_NFIELDS) {
    const sm_meta_value *a = &q->f[veto], *b = &r->meta.f[veto];
    if (sm_meta_type_of((sm_meta_field)veto) == SM_META_STR) {
      snprintf(mine, sizeof(mine), "%.60s", a->str);
      snprintf(theirs, sizeof(theirs), "%.60s", b->str);
    } else {
      snprintf(mine, sizeof(mine), "%.10g", a->num);
      snprintf(theirs, sizeof(theirs), "%.10g", b->num);
    }
  } else {
    const char *a = veto == SM_IDENT_VETO_USER ? qx->user : qx->name;
    const char *b = veto == SM_IDENT_VETO_USER ? r->user : r->name;
    snprintf(mine, sizeof(mine), "%.60s", a ? a : "");
    snprintf(theirs, sizeof(theirs), "%.60s", b ? b : "");
  }
  snprintf(buf, n, "job %.40s has %s %s, this job %s", r->id, f ? f : "?",
           theirs, mine);
}

static void drop_matches(sm_advice *a) {
  for (int i = 0; i < a->n_matches; i++)
    sm_record_release(&a->matches[i]);
  a->n_matches = a->n_different = a->n_thin = a->n_unexplained = 0;
  a->first_veto = -1;
}

/* Searches the top `want` candidates with cosine >= min_score and walks
 * those at or above the threshold that p has not seen yet, keeping the
 * ones whose identity agrees (at most o->top_k, into a's arrays, which
 * hold that many).  If the history changed since the last search (the
 * seen ids are no longer its prefix), the walk starts over.  Returns 0,
 * SM_ENOMEM, or a store error (message in serr). */
static int candidates(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
                      const float *fp, const sm_advise_opts *o, int want,
                      float min_score, sm_advice *a, walk *p, sm_err *serr) {
  sm_store_hit *hits = sm_calloc((size_t)want, sizeof(*hits));
  int n, i, start = 0, cap = o->top_k;

  if (hits == NULL)
    return SM_ENOMEM;
  n = sm_store_search(s, fp, want, min_score, hits, serr);
  if (n < 0) {
    sm_free(hits);
    return n;
  }
  if (p->seen == NULL) {
    p->n_hits = n;
    if (n > 0) {
      a->best_score = hits[0].score > 1.0f ? 1.0f : hits[0].score;
      snprintf(p->best_id, sizeof(p->best_id), "%s", hits[0].id);
    }
    p->seen = sm_calloc((size_t)want, sizeof(char *));
  } else {
    char **ns = sm_realloc(p->seen, (size_t)want * sizeof(char *));
    if (ns == NULL) {
      sm_free(hits);
      return SM_ENOMEM;
    }
    p->seen = ns;
    start = p->n_seen;
    for (i = 0; i < p->n_seen; i++)
      if (i >= n || strcmp(hits[i].id, p->seen[i]) != 0) {
        start = 0;
        break;
      }
    if (start == 0) { /* the history changed: start over */
      drop_matches(a);
      for (i = 0; i < p->n_seen; i++)
        sm_free(p->seen[i]);
      p->n_seen = 0;
      p->first_veto[0] = p->first_thin[0] = '\0';
    }
  }
  if (p->seen == NULL) {
    sm_free(hits);
    return SM_ENOMEM;
  }
  for (i = start; i < n && a->n_matches < cap; i++) {
    sm_record *r = &a->matches[a->n_matches];
    sm_fp_extra rx;
    sm_identity_cmp c;
    int rc;
    if (hits[i].score < o->threshold)
      break;
    p->seen[p->n_seen] = sm_strdup(hits[i].id);
    if (p->seen[p->n_seen] == NULL) {
      sm_free(hits);
      return SM_ENOMEM;
    }
    p->n_seen++;
    sm_record_init(r);
    rc = sm_store_get(s, hits[i].id, r, serr);
    if (rc != 0) {
      sm_record_release(r);
      if (rc != SM_ENOTFOUND) {
        sm_free(hits);
        return rc;
      }
      /* Gone between search and read: skip it. */
      sm_err_clear(serr);
      continue;
    }
    if (!same_embedder(r->embedder, p->embedder)) {
      sm_record_release(r);
      continue;
    }
    rx.user = r->user;
    rx.name = r->name;
    rx.vc = r->vc;
    if (!sm_identity_compare(m, x, &r->meta, &rx, &c)) {
      if (c.veto >= 0) {
        a->n_unexplained += c.veto == SM_IDENT_VETO_UNEXPLAINED;
        if (a->n_different++ == 0) {
          a->first_veto = c.veto;
          explain_veto(m, x, r, c.veto, p->first_veto, sizeof(p->first_veto));
        }
      } else if (a->n_thin++ == 0) {
        char g[64];
        snprintf(p->first_thin, sizeof(p->first_thin),
                 "job %.40s shares only %s", r->id,
                 sm_identity_describe(c.shared, g, sizeof(g)));
      }
      sm_record_release(r);
      continue;
    }
    a->shared[a->n_matches] = c.shared;
    /* Rounding can put a self-match a hair above 1. */
    a->scores[a->n_matches++] = hits[i].score > 1.0f ? 1.0f : hits[i].score;
  }
  p->more = i == n && n == want && a->n_matches < cap;
  sm_free(hits);
  return 0;
}

int sm_advise(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
              const sm_advise_opts *in, sm_advice *a, sm_err *err) {
  return sm_advise_fp(s, m, x, NULL, NULL, in, a, err);
}

int sm_advise_fp(sm_store *s, const sm_meta *m, const sm_fp_extra *x,
                 const float *qfp, const char *embedder,
                 const sm_advise_opts *in, sm_advice *a, sm_err *err) {
  sm_advise_opts o;
  float fp[SM_FP_DIMS];
  sm_err serr = {0};
  walk p;
  char g[64];
  int rc;

  defaults(in, &o);
  sm_advice_release(a);
  if (qfp != NULL)
    memcpy(fp, qfp, sizeof(fp));
  else
    sm_fingerprint(m, x, fp);
  if (is_zero(fp)) {
    a->fallback = SM_FALLBACK_EXTRACT_FAILED;
    snprintf(a->detail, sizeof(a->detail), "no workload metadata to match on");
    return 0;
  }
  a->identity = sm_identity_known(m, x);
  a->config_known = sm_identity_config_known(m);
  if (s == NULL) {
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    snprintf(a->detail, sizeof(a->detail), "history store not open");
    return 0;
  }
  if (!sm_identity_enough(a->identity) && !sm_identity_config_known(m)) {
    a->fallback = SM_FALLBACK_TOO_LITTLE_KNOWN;
    snprintf(a->detail, sizeof(a->detail),
             "identity known: %s; a match needs the model with its size "
             "and two of dataset, task, length, or the model family and "
             "all three (a trace job: user and job name)",
             sm_identity_describe(a->identity, g, sizeof(g)));
    return 0;
  }
  a->matches = sm_calloc((size_t)o.top_k, sizeof(sm_record));
  a->scores = sm_calloc((size_t)o.top_k, sizeof(float));
  a->shared = sm_calloc((size_t)o.top_k, sizeof(unsigned));
  if (a->matches == NULL || a->scores == NULL || a->shared == NULL)
    return sm_err_set(err, SM_ENOMEM, "advise: out of memory");
  memset(&p, 0, sizeof(p));
  p.embedder = embedder;
  rc = candidates(s, m, x, fp, &o, o.top_k + EXTRA_CANDIDATES, -2.0f, a, &p,
                  &serr);
  if (rc == 0 && p.more)
    rc = candidates(s, m, x, fp, &o, MAX_CANDIDATES, o.threshold, a, &p, &serr);
  walk_release(&p);
  if (rc == SM_ENOMEM) {
    drop_matches(a);
    return sm_err_set(err, SM_ENOMEM, "advise: out of memory");
  }
  if (rc != 0) {
    drop_matches(a);
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    snprintf(a->detail, sizeof(a->detail), "%s", serr.msg);
    sm_err_set(err, rc, "%s", serr.msg);
    return 0;
  }
  if (p.n_hits == 0) {
    a->fallback = SM_FALLBACK_NO_MATCH;
    snprintf(a->detail, sizeof(a->detail), "the history is empty");
    return 0;
  }
  if (a->n_matches == 0) {
    if (a->n_thin > 0) {
      a->fallback = SM_FALLBACK_TOO_LITTLE_KNOWN;
      snprintf(a->detail, sizeof(a->detail),
               "%d similar job(s) do not share enough known identity with "
               "this job (%.120s): a match needs the model with its size and "
               "two of dataset, task, length, or the family and all three",
               a->n_thin, p.first_thin);
    } else if (a->n_different > 0) {
      a->fallback = SM_FALLBACK_NO_MATCH;
      snprintf(a->detail, sizeof(a->detail),
               "%d similar job(s) are different jobs (%.200s)", a->n_different,
               p.first_veto);
    } else if (a->best_score < o.threshold) {
      a->fallback = SM_FALLBACK_BELOW_THRESHOLD;
      snprintf(a->detail, sizeof(a->detail),
               "best match %.3f (job %.60s) is below the threshold %.3f",
               a->best_score, p.best_id, o.threshold);
    } else {
      a->fallback = SM_FALLBACK_NO_MATCH;
      snprintf(a->detail, sizeof(a->detail), "matches vanished while reading");
    }
    return 0;
  }
  sm_estimate_compute(a, &o);
  return 0;
}

/* The names of identity groups as a JSON array. */
static void write_groups(sm_jw *w, unsigned g) {
  static const char *const names[] = {"model",        "dataset", "task",
                                      "length",       "trace",   "model_family",
                                      "configuration"};
  if (g & SM_IDENT_MODEL)
    g &= ~SM_IDENT_FAMILY;
  sm_jw_arr_begin(w);
  for (size_t i = 0; i < SM_ARRAY_LEN(names); i++)
    if (g & (1u << i))
      sm_jw_str(w, names[i]);
  sm_jw_arr_end(w);
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
    sm__record_write_usage(r, w);
    sm_jw_kv_num(w, "submit_time", r->submit_time);
    sm_jw_kv_str(w, "gpu_type", r->gpu_type);
    sm_jw_kv_str(w, "sw_version", r->sw_version);
    sm_jw_kv_num(w, "throughput", r->throughput);
    if (a->shared != NULL) {
      sm_jw_key(w, "identity");
      write_groups(w, a->shared[i]);
      /* What the match rests on: the metadata's identity, or only the
       * equal exact-configuration digest. */
      sm_jw_kv_str(w, "identity_basis",
                   sm_identity_enough(a->shared[i] & ~SM_IDENT_CONFIG)
                       ? "metadata"
                       : "configuration");
    }
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
  sm_jw_key(w, "identity");
  sm_jw_obj_begin(w);
  sm_jw_key(w, "known");
  write_groups(w, a->identity);
  sm_jw_kv_bool(w, "enough", sm_identity_enough(a->identity));
  sm_jw_kv_bool(w, "configuration", a->config_known);
  sm_jw_kv_int(w, "rejected_different", a->n_different);
  sm_jw_kv_int(w, "rejected_too_little_known", a->n_thin);
  sm_jw_kv_int(w, "rejected_unexplained_difference", a->n_unexplained);
  sm_jw_kv_str(w, "first_veto", sm_identity_veto_name(a->first_veto));
  sm_jw_obj_end(w);
  sm_jw_kv_bool(w, "fallback", a->fallback != SM_FALLBACK_NONE);
  sm_jw_kv_str(w, "fallback_reason", sm_fallback_name(a->fallback));
  sm_jw_kv_str(w, "fallback_detail", a->fallback ? a->detail : NULL);
}
