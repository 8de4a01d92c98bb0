/* shadow.c - the shadow report: what SchedMate said against what
 * happened, for every ended job whose record carries an outcome (written
 * back by `schedmate serve` or the Slurm agent), with the audit logs for
 * what the records do not hold.
 *
 *   estimates    relative error (estimate - real) / real of the duration
 *                given at submission, by end state (a cancelled job's
 *                "real" duration is when it was stopped);
 *   fallbacks    share of ended jobs (and of all answers in the audit)
 *                without an estimate, by reason;
 *   evictions    the run channel's interference flags: in shadow mode
 *                each is an eviction a co-location-aware scheduler would
 *                have made, with the slowdown that was measured;
 *   diagnoses    failed runs by diagnosed category against what happened
 *                next (runs of a job are ID, ID.1, ID.2, ...): restarted
 *                and completed, restarted and failed, not restarted;
 *   profiling    GPU-hours a profiling scheduler would have spent to
 *                learn what the estimate gave: jobs with an estimate x
 *                GPUs x the assumed profiling run (--profile-s);
 *   latency      of every answer in the audit, by channel.
 *
 * Nothing here reads the future: the estimate is the one recorded when
 * the job was submitted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "serve/shadow_base.h"
#include "serve/shadow_html.h"
#include "util/util_int.h"

static int channel_index(const char *ch) {
  for (int i = 0; ch && i < SH_CHANNELS; i++)
    if (strcmp(ch, sh__channel_names[i]) == 0)
      return i;
  return -1;
}

/* ==== The audit logs ==== */

/* Slurm jobs' fallback reasons from the submit channel's lines. */
typedef struct slurm_fb {
  long long job;   /* Slurm job id */
  char reason[40]; /* fallback reason */
} slurm_fb;

typedef struct collect {
  sh_report *r;
  slurm_fb *fb; /* Slurm submit fallbacks */
  size_t n_fb, cap_fb;
  struct run *runs; /* ended runs with an outcome */
  size_t n_runs, cap_runs;
  int rc; /* first failure */
} collect;

static void audit_line(collect *c, const char *line, size_t len) {
  sh_report *r = c->r;
  cJSON *o = cJSON_ParseWithLength(line, len);
  const cJSON *v;
  const char *ch, *dec;
  int ci;

  r->audit_lines++;
  if (!cJSON_IsObject(o)) {
    r->audit_bad++;
    cJSON_Delete(o);
    return;
  }
  ch = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "channel"));
  dec = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "decision"));
  ci = channel_index(ch);
  v = cJSON_GetObjectItemCaseSensitive(o, "latency_ms");
  if (ci >= 0 && cJSON_IsNumber(v) && isfinite(v->valuedouble))
    sh__vec_add(&r->lat[ci], v->valuedouble);
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "late")) && ci >= 0)
    r->late[ci]++;
  /* Answers to a submission: serve's advise/jobs, the agent's submit. */
  if (dec && (strcmp(dec, "estimate") == 0 || strcmp(dec, "fallback") == 0) &&
      (ci == 0 || ci == 3)) {
    const char *fr = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(o, "fallback_reason"));
    const cJSON *adv = cJSON_GetObjectItemCaseSensitive(o, "advice");
    if (fr == NULL && cJSON_IsObject(adv))
      fr = cJSON_GetStringValue(
          cJSON_GetObjectItemCaseSensitive(adv, "fallback_reason"));
    r->answers++;
    if (strcmp(dec, "fallback") == 0)
      sh__count(&r->fb_answers, fr ? fr : "unknown");
    v = cJSON_GetObjectItemCaseSensitive(o, "job");
    if (strcmp(dec, "fallback") == 0 && fr && cJSON_IsNumber(v) &&
        !cJSON_GetObjectItemCaseSensitive(o, "service")) {
      if (SM__GROW(c->fb, c->n_fb + 1, c->cap_fb) == 0) {
        c->fb[c->n_fb].job = (long long)v->valuedouble;
        snprintf(c->fb[c->n_fb].reason, sizeof(c->fb[0].reason), "%s", fr);
        c->n_fb++;
      }
    }
  }
  if (dec && strcmp(dec, "interference") == 0) {
    const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(o, "ratio");
    if (cJSON_IsNumber(ratio) && isfinite(ratio->valuedouble)) {
      if (SM__GROW(r->ev, (size_t)r->n_ev + 1, r->cap_ev) == 0) {
        sh_evict *e = &r->ev[r->n_ev++];
        const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "job");
        const cJSON *jb = cJSON_GetObjectItemCaseSensitive(o, "joined_by");
        const char *node =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "node"));
        memset(e, 0, sizeof(*e));
        if (cJSON_IsNumber(j))
          snprintf(e->job, sizeof(e->job), "%.0f", j->valuedouble);
        else if (cJSON_IsString(j))
          snprintf(e->job, sizeof(e->job), "%s", j->valuestring);
        if (cJSON_IsNumber(jb))
          snprintf(e->joined_by, sizeof(e->joined_by), "%.0f", jb->valuedouble);
        else if (cJSON_IsString(jb))
          snprintf(e->joined_by, sizeof(e->joined_by), "%s", jb->valuestring);
        snprintf(e->node, sizeof(e->node), "%s", node ? node : "");
        e->ratio = ratio->valuedouble;
      }
    }
  }
  cJSON_Delete(o);
}

static int read_audit(collect *c, const char *path, sm_err *err) {
  sm_rfile f;
  sm_fwdlines fl;
  const char *line;
  size_t len;
  int rc, trunc;

  rc = sm_rfile_open(&f, path, err);
  if (rc != 0)
    return rc;
  rc = sm_fwdlines_init(&fl, &f, 0, UINT64_MAX, (size_t)1 << 20, err);
  if (rc != 0) {
    sm_rfile_close(&f);
    return rc;
  }
  while ((rc = sm_fwdlines_next(&fl, &line, &len, NULL, &trunc, err)) == 1) {
    if (trunc) {
      c->r->audit_lines++;
      c->r->audit_bad++;
      continue;
    }
    if (len > 0)
      audit_line(c, line, len);
  }
  sm_fwdlines_release(&fl);
  sm_rfile_close(&f);
  c->r->audit_files++;
  return rc < 0 ? rc : 0;
}

static int cmp_fb(const void *x, const void *y) {
  long long a = ((const slurm_fb *)x)->job, b = ((const slurm_fb *)y)->job;
  return a < b ? -1 : a > b;
}

static const char *slurm_reason(const collect *c, long long job) {
  slurm_fb key = {.job = job};
  const slurm_fb *f =
      c->n_fb ? bsearch(&key, c->fb, c->n_fb, sizeof(*c->fb), cmp_fb) : NULL;
  return f ? f->reason : NULL;
}

/* ==== The records ==== */

/* One ended run with an outcome. */
struct run {
  char *base;      /* job id without a ".N" restart suffix */
  int run;         /* N, 0 for the first */
  sm_end_state es; /* how it ended */
  char cat[32];    /* diagnosed category of a failure, or "" */
  int retryable;   /* the diagnosis said so */
};

static void add_run(collect *c, const char *id, sm_end_state es,
                    const char *cat, int retryable) {
  const char *dot = strrchr(id, '.');
  struct run *r;
  int n = 0;

  if (SM__GROW(c->runs, c->n_runs + 1, c->cap_runs) != 0) {
    c->rc = SM_ENOMEM;
    return;
  }
  r = &c->runs[c->n_runs];
  if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) {
    n = atoi(dot + 1);
    r->base = sm_strndup(id, (size_t)(dot - id));
  } else {
    r->base = sm_strdup(id);
  }
  if (r->base == NULL) {
    c->rc = SM_ENOMEM;
    return;
  }
  r->run = n;
  r->es = es;
  snprintf(r->cat, sizeof(r->cat), "%s", cat ? cat : "");
  r->retryable = retryable;
  c->n_runs++;
}

static int each_record(const sm_record *rec, void *arg) {
  collect *c = arg;
  sh_report *r = c->r;
  cJSON *o, *v, *adv, *dg;
  int said = 0, has_est = 0;
  double est = NAN;
  const char *reason = NULL;

  r->records++;
  if (rec->outcome == NULL)
    return 0;
  o = cJSON_Parse(rec->outcome);
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return 0;
  }
  r->with_outcome++;
  adv = cJSON_GetObjectItemCaseSensitive(o, "advice");
  v = cJSON_GetObjectItemCaseSensitive(o, "estimate_s");
  if (cJSON_IsObject(adv)) {
    /* Written back by `schedmate serve`. */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(adv, "estimate_s");
    said = 1;
    has_est = cJSON_IsNumber(e) && isfinite(e->valuedouble);
    est = has_est ? e->valuedouble : NAN;
    reason = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(adv, "fallback_reason"));
  } else if (v != NULL) {
    /* Written back by the Slurm agent: the reason is in its audit. */
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, "job_id");
    said = 1;
    has_est = cJSON_IsNumber(v) && isfinite(v->valuedouble);
    est = has_est ? v->valuedouble : NAN;
    if (!has_est && cJSON_IsNumber(j))
      reason = slurm_reason(c, (long long)j->valuedouble);
  }
  if (said) {
    r->advised++;
    if (has_est) {
      r->est_jobs++;
      if (rec->duration_s > 0 && isfinite(rec->duration_s))
        sh__vec_add(&r->err[rec->end_state],
                    (est - rec->duration_s) / rec->duration_s);
      {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "gpus");
        double gpus = cJSON_IsNumber(g) && g->valuedouble > 0 ? g->valuedouble
                      : rec->meta.f[SM_META_GPUS].known
                          ? rec->meta.f[SM_META_GPUS].num
                          : 0;
        if (!(gpus > 0)) {
          gpus = 1;
          r->gpus_unknown++;
        }
        r->gpu_hours_saved += gpus * r->profile_s / 3600.0;
      }
    } else {
      sh__count(&r->fb_jobs, reason ? reason : "unknown");
    }
  }
  dg = cJSON_GetObjectItemCaseSensitive(o, "diagnosis");
  {
    const char *cat = NULL;
    int retry = 0;
    if (cJSON_IsObject(dg) &&
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dg, "status")) &&
        strcmp(cJSON_GetStringValue(
                   cJSON_GetObjectItemCaseSensitive(dg, "status")),
               "failure") == 0) {
      cat = cJSON_GetStringValue(
          cJSON_GetObjectItemCaseSensitive(dg, "category"));
      retry = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(dg, "retryable"));
    }
    add_run(c, rec->id, rec->end_state, cat, retry);
  }
  cJSON_Delete(o);
  return c->rc != 0;
}

static int cmp_run(const void *x, const void *y) {
  const struct run *a = x, *b = y;
  int s = strcmp(a->base, b->base);
  return s ? s : (a->run > b->run) - (a->run < b->run);
}

static sh_diag_row *diag_row(sh_report *r, const char *cat) {
  for (int i = 0; i < r->n_diag; i++)
    if (strcmp(r->diag[i].category, cat) == 0)
      return &r->diag[i];
  if (r->n_diag == (int)SM_ARRAY_LEN(r->diag))
    return &r->diag[r->n_diag - 1];
  snprintf(r->diag[r->n_diag].category, sizeof(r->diag[0].category), "%s", cat);
  return &r->diag[r->n_diag++];
}

/* Failed, diagnosed runs against the job's next run. */
static void diagnoses(collect *c) {
  if (c->n_runs > 1)
    qsort(c->runs, c->n_runs, sizeof(*c->runs), cmp_run);
  for (size_t i = 0; i < c->n_runs; i++) {
    struct run *u = &c->runs[i];
    sh_diag_row *d;
    size_t last = i;
    if (u->cat[0] == '\0')
      continue;
    while (last + 1 < c->n_runs && strcmp(c->runs[last + 1].base, u->base) == 0)
      last++;
    d = diag_row(c->r, u->cat);
    d->n++;
    d->retryable += u->retryable;
    if (last == i)
      d->not_restarted++;
    else if (c->runs[last].es == SM_END_COMPLETED)
      d->restart_completed++;
    else
      d->restart_failed++;
  }
}

/* ==== JSON ==== */

static void counts_json(const sh_counts *c, sm_jw *w) {
  sm_jw_obj_begin(w);
  for (int i = 0; i < c->k; i++)
    sm_jw_kv_int(w, c->name[i], c->n[i]);
  sm_jw_obj_end(w);
}

/* One group of answers under key: how many, how many fell back, the
 * share, and the fallbacks by reason. */
static void fallbacks_json(const char *key, long n, const sh_counts *c,
                           sm_jw *w) {
  sm_jw_key(w, key);
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "n", n);
  sm_jw_kv_int(w, "fallback", c->total);
  sm_jw_kv_num(w, "rate", n ? (double)c->total / n : NAN);
  sm_jw_key(w, "by_reason");
  counts_json(c, w);
  sm_jw_obj_end(w);
}

static void report_json(sh_report *r, sm_jw *w) {
  long n_err = 0;

  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "title", r->title);
  sm_jw_kv_str(w, "store", r->store_kind);
  sm_jw_kv_int(w, "records", r->records);
  sm_jw_kv_int(w, "with_outcome", r->with_outcome);
  sm_jw_kv_int(w, "advised", r->advised);
  sm_jw_key(w, "estimates");
  sm_jw_obj_begin(w);
  for (int s = 0; s < SM_END__COUNT; s++)
    n_err += (long)r->err[s].n;
  sm_jw_kv_int(w, "n", n_err);
  sm_jw_key(w, "by_end_state");
  sm_jw_obj_begin(w);
  for (int s = 0; s < SM_END__COUNT; s++) {
    sh_vec *e = &r->err[s], a = {0};
    long within = 0;
    if (e->n == 0)
      continue;
    for (size_t i = 0; i < e->n; i++) {
      sh__vec_add(&a, fabs(e->v[i]));
      within += fabs(e->v[i]) <= 0.25;
    }
    sh__vec_sort(&a);
    sh__vec_sort(e);
    sm_jw_key(w, sm_end_state_name((sm_end_state)s));
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "n", (long long)e->n);
    sm_jw_kv_num(w, "median_rel_error", sh__quantile(e, 0.5));
    sm_jw_kv_num(w, "median_abs_rel_error", sh__quantile(&a, 0.5));
    sm_jw_kv_num(w, "p90_abs_rel_error", sh__quantile(&a, 0.9));
    sm_jw_kv_num(w, "within_25pct", (double)within / (double)e->n);
    sm_jw_key(w, "cdf");
    sm_jw_arr_begin(w);
    for (int q = 0; q <= 20; q++) {
      sm_jw_arr_begin(w);
      sm_jw_num(w, sh__quantile(&a, q / 20.0));
      sm_jw_num(w, q / 20.0);
      sm_jw_arr_end(w);
    }
    sm_jw_arr_end(w);
    sm_jw_obj_end(w);
    sh__vec_release(&a);
  }
  sm_jw_obj_end(w);
  sm_jw_obj_end(w);
  sm_jw_key(w, "fallbacks");
  sm_jw_obj_begin(w);
  fallbacks_json("ended_jobs", r->advised, &r->fb_jobs, w);
  fallbacks_json("answers", r->answers, &r->fb_answers, w);
  sm_jw_obj_end(w);
  sm_jw_key(w, "evictions");
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "n", r->n_ev);
  {
    sh_vec s = {0};
    for (int i = 0; i < r->n_ev; i++)
      sh__vec_add(&s, 1 - r->ev[i].ratio);
    sh__vec_sort(&s);
    sm_jw_kv_num(w, "median_slowdown", sh__quantile(&s, 0.5));
    sm_jw_kv_num(w, "max_slowdown", sh__quantile(&s, 1));
    sh__vec_release(&s);
  }
  sm_jw_key(w, "items");
  sm_jw_arr_begin(w);
  for (int i = 0; i < r->n_ev; i++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "job", r->ev[i].job);
    sm_jw_kv_str(w, "joined_by", r->ev[i].joined_by);
    sm_jw_kv_str(w, "node", r->ev[i].node);
    sm_jw_kv_num(w, "ratio", r->ev[i].ratio);
    sm_jw_kv_num(w, "slowdown", 1 - r->ev[i].ratio);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_obj_end(w);
  sm_jw_key(w, "diagnoses");
  sm_jw_obj_begin(w);
  for (int i = 0; i < r->n_diag; i++) {
    const sh_diag_row *d = &r->diag[i];
    sm_jw_key(w, d->category);
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "n", d->n);
    sm_jw_kv_int(w, "retryable", d->retryable);
    sm_jw_kv_int(w, "not_restarted", d->not_restarted);
    sm_jw_kv_int(w, "restarted_completed", d->restart_completed);
    sm_jw_kv_int(w, "restarted_failed", d->restart_failed);
    sm_jw_obj_end(w);
  }
  sm_jw_obj_end(w);
  sm_jw_key(w, "profiling");
  sm_jw_obj_begin(w);
  sm_jw_kv_num(w, "profile_s", r->profile_s);
  sm_jw_kv_int(w, "jobs_with_estimate", r->est_jobs);
  sm_jw_kv_num(w, "gpu_hours_saved", round(r->gpu_hours_saved * 100) / 100);
  sm_jw_kv_int(w, "gpus_unknown", r->gpus_unknown);
  sm_jw_obj_end(w);
  sm_jw_key(w, "latency");
  sm_jw_obj_begin(w);
  for (int c = 0; c < SH_CHANNELS; c++) {
    sh_vec *l = &r->lat[c];
    if (l->n == 0)
      continue;
    sh__vec_sort(l);
    sm_jw_key(w, sh__channel_names[c]);
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "n", (long long)l->n);
    sm_jw_kv_num(w, "p50_ms", sh__quantile(l, 0.5));
    sm_jw_kv_num(w, "p90_ms", sh__quantile(l, 0.9));
    sm_jw_kv_num(w, "p99_ms", sh__quantile(l, 0.99));
    sm_jw_kv_num(w, "max_ms", sh__quantile(l, 1));
    sm_jw_kv_int(w, "late", r->late[c]);
    sm_jw_obj_end(w);
  }
  sm_jw_obj_end(w);
  sm_jw_key(w, "audit");
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "files", r->audit_files);
  sm_jw_kv_int(w, "lines", r->audit_lines);
  sm_jw_kv_int(w, "malformed", r->audit_bad);
  sm_jw_obj_end(w);
  sm_jw_obj_end(w);
}

int sm_shadow_report(sm_store *st, const sm_shadow_opts *o, sm_buf *json,
                     sm_buf *html, sm_err *err) {
  sh_report *r = sm_calloc(1, sizeof(*r));
  collect c = {0};
  int rc = 0;

  if (r == NULL)
    return sm_err_set(err, SM_ENOMEM, "report: out of memory");
  c.r = r;
  r->title = o && o->title ? o->title : "SchedMate shadow report";
  r->store_kind = sm_store_kind(st);
  r->profile_s = o && o->profile_s > 0 ? o->profile_s : 300;
  for (int i = 0; rc == 0 && o && i < o->n_audit; i++)
    rc = read_audit(&c, o->audit_paths[i], err);
  if (rc == 0 && c.n_fb > 1)
    qsort(c.fb, c.n_fb, sizeof(*c.fb), cmp_fb);
  if (rc == 0)
    rc = sm_store_each(st, each_record, &c, err);
  if (rc == 0 && c.rc != 0)
    rc = sm_err_set(err, c.rc, "report: out of memory");
  if (rc == 0) {
    diagnoses(&c);
    for (int s = 0; s < SM_END__COUNT; s++)
      sh__vec_sort(&r->err[s]);
    for (int i = 0; i < SH_CHANNELS; i++)
      sh__vec_sort(&r->lat[i]);
    if (json) {
      sm_jw w;
      sm_jw_init(&w, json);
      report_json(r, &w);
      if (sm_jw_finish(&w) != 0)
        rc = sm_err_set(err, SM_ENOMEM, "report: cannot format the JSON");
    }
    if (rc == 0 && html && sh__html(r, html) != 0)
      rc = sm_err_set(err, SM_ENOMEM, "report: cannot format the HTML");
  }
  for (size_t i = 0; i < c.n_runs; i++)
    sm_free(c.runs[i].base);
  sm_free(c.runs);
  sm_free(c.fb);
  for (int s = 0; s < SM_END__COUNT; s++)
    sh__vec_release(&r->err[s]);
  for (int i = 0; i < SH_CHANNELS; i++)
    sh__vec_release(&r->lat[i]);
  sm_free(r->ev);
  sm_free(r);
  return rc;
}
