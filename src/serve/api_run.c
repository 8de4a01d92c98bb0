/* api_run.c - the run channel (a job's progress from its log, a log's
 * progress) and the exit channel (a job's outcome written back into the
 * history, a log diagnosed).
 *
 * Progress follows the job's log with one tracker per job: the first
 * request scans the tail, later ones read only what was appended; a log
 * that was replaced (another inode at the path) starts a new tracker.
 *
 * The write-back builds the history record the Slurm agent would: the
 * metadata extracted at registration, the real duration and end state,
 * utilisation, throughput (the scheduler's figure, else the Tracker's),
 * and an "outcome" object with what the service said at submission (the
 * estimate or the fallback reason), the last progress and the diagnosis
 * (the scheduler's, or the Failure Handler's when a failed job's cause is
 * not given).  It is answered only once the store has committed it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve/serve_int.h"
#include "util/util_int.h"

/* Pins a log path (or fills res). */
static int pin_log(sm_serve *sv, const char *path, sv_pin *pin,
                   sv_result *res) {
  sm_err err = {0};

  if (sv__pin(&sv->roots, path, SV_PIN_FILE, pin, &err) == 0)
    return 0;
  if (err.code == SM_EACCES) {
    atomic_fetch_add(&sv->m.forbidden, 1);
    sv__error(res, 403, "forbidden", "%s", err.msg);
  } else if (err.code == SM_EINVAL) {
    sv__error(res, 400, "bad_request", "%s", err.msg);
  } else {
    sv__error(res, 422, "unreadable", "%s", err.msg);
  }
  return -1;
}

static int track_json(sm_serve *sv, const sm_track_result *t,
                      const sv_llm_run *run, sv_result *res) {
  if (sm_track_result_json(t, &res->body) != 0 ||
      sv__llm_append(sv, run, NULL, &res->body) != 0)
    return sv__error(res, 500, "internal", "out of memory");
  res->status = 200;
  res->decision = t->ok ? "progress" : "missing";
  return 200;
}

/* ==== Interference ==== */

static double rate_of(const sm_track_result *t) {
  if (!t->ok)
    return NAN;
  if (isfinite(t->throughput) && t->throughput > 0)
    return t->throughput;
  if (isfinite(t->step_time_s) && t->step_time_s > 0)
    return 1.0 / t->step_time_s;
  return NAN;
}

static const char *shared_node(const sv_job *a, const sv_job *b) {
  for (int x = 0; x < a->n_nodes; x++)
    for (int y = 0; y < b->n_nodes; y++)
      if (strcmp(a->nodes[x], b->nodes[y]) == 0)
        return a->nodes[x];
  return NULL;
}

/* The registered jobs that share a node with j, with a reference each
 * (release with sv__jobs_put), taken without locking any job, so that a
 * job busy reading its log never holds up the table. */
static int neighbours(sv_jobs *jobs, const sv_job *j, sv_job ***out) {
  sv_job **v = NULL;
  int n = 0;
  size_t cap = 0;

  pthread_mutex_lock(&jobs->mu);
  for (size_t i = 0; i < jobs->nb; i++)
    for (sv_job *p = jobs->b[i]; p; p = p->next) {
      if (p == j || shared_node(p, j) == NULL)
        continue;
      if (SM__GROW(v, (size_t)n + 1, cap) != 0)
        break;
      p->refs++;
      v[n++] = p;
    }
  pthread_mutex_unlock(&jobs->mu);
  *out = v;
  return n;
}

void sv__interference_join(sm_serve *sv, sv_job *nj) {
  sv_job **v;
  int n = neighbours(&sv->jobs, nj, &v);

  for (int i = 0; i < n; i++) {
    sv_job *p = v[i];
    pthread_mutex_lock(&p->mu);
    if (p->joined_by[0] == '\0' && isfinite(p->rate)) {
      snprintf(p->joined_by, sizeof(p->joined_by), "%s", nj->id);
      snprintf(p->joined_node, sizeof(p->joined_node), "%s",
               shared_node(p, nj));
      p->base_rate = p->rate;
      p->base_step = p->last.has_step ? p->last.step : 0;
      p->flagged = 0;
      p->slow_ratio = NAN;
    }
    pthread_mutex_unlock(&p->mu);
    sv__jobs_put(&sv->jobs, p);
  }
  sm_free(v);
}

void sv__interference_leave(sm_serve *sv, sv_job *gone) {
  sv_job **v;
  int n = neighbours(&sv->jobs, gone, &v);

  for (int i = 0; i < n; i++) {
    sv_job *p = v[i];
    pthread_mutex_lock(&p->mu);
    if (strcmp(p->joined_by, gone->id) == 0) {
      p->joined_by[0] = '\0';
      p->base_rate = NAN;
      p->slow_ratio = NAN;
      p->flagged = 0;
    }
    pthread_mutex_unlock(&p->mu);
    sv__jobs_put(&sv->jobs, p);
  }
  sm_free(v);
}

void sv__slowdown_json(const sv_job *job, sm_jw *w) {
  sm_jw_key(w, "slowdown");
  if (job->joined_by[0] == '\0' || !isfinite(job->base_rate)) {
    sm_jw_null(w);
    return;
  }
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "joined_by", job->joined_by);
  sm_jw_kv_str(w, "node", job->joined_node);
  sm_jw_kv_num(w, "base_rate", job->base_rate);
  sm_jw_kv_num(w, "rate", job->rate);
  sm_jw_kv_num(w, "ratio",
               isfinite(job->slow_ratio) ? round(job->slow_ratio * 1000) / 1000
                                         : NAN);
  sm_jw_kv_bool(w, "flagged", job->flagged);
  sm_jw_obj_end(w);
}

/* After a new progress answer (job->mu held): a rate that fell below
 * (1 - slowdown) x the baseline once the window holds only samples from
 * after the join is flagged, once: an audit line "run"/"interference",
 * as the Slurm agent writes it, and a counter. */
static void check_slowdown(sm_serve *sv, sv_job *job) {
  const sm_track_result *t = &job->last;
  int settled;

  job->rate = rate_of(t);
  if (job->joined_by[0] == '\0' || !isfinite(job->base_rate) ||
      !isfinite(job->rate))
    return;
  job->slow_ratio = job->rate / job->base_rate;
  settled =
      t->has_step ? t->step - job->base_step >= SM_TRACK_DEFAULT_SAMPLES : 1;
  if (!settled || job->flagged || job->slow_ratio >= 1.0 - sv->o.slowdown)
    return;
  job->flagged = 1;
  atomic_fetch_add(&sv->m.interference, 1);
  sv__log(sv, SM_SERVE_WARN,
          "job %s: rate down to %.0f %% after job %s joined node %s", job->id,
          100 * job->slow_ratio, job->joined_by, job->joined_node);
  if (sv->o.audit_path) {
    sm_buf b;
    sm_jw w;
    sv__audit_begin(&b, 0, &w);
    sm_jw_kv_str(&w, "channel", "run");
    sm_jw_kv_str(&w, "decision", "interference");
    sm_jw_kv_str(&w, "job", job->id);
    sm_jw_kv_str(&w, "node", job->joined_node);
    sm_jw_kv_str(&w, "joined_by", job->joined_by);
    sm_jw_kv_num(&w, "base_rate", job->base_rate);
    sm_jw_kv_num(&w, "rate", job->rate);
    sm_jw_kv_num(&w, "ratio", round(job->slow_ratio * 1000) / 1000);
    sm_jw_kv_str(&w, "unit",
                 isfinite(t->throughput) && t->throughput > 0 ? t->tp_unit
                                                              : "steps/s");
    sm_jw_kv_bool(&w, "executed", 0);
    sm_jw_kv_str(&w, "result", "flagged");
    sv__audit_end(sv, &b, &w);
  }
}

/* Brings job's progress up to date (job->mu held).  keep: keep the
 * tracker for later requests.  Returns 0 or fills res. */
static int job_progress(sm_serve *sv, sv_job *job, int keep, sv_result *res) {
  sv_pin pin;
  sm_track_result t;
  sm_err err = {0};
  int rc;

  if (pin_log(sv, job->log, &pin, res) != 0)
    return -1;
  if (job->trk && job->pin.dev == pin.dev && job->pin.ino == pin.ino) {
    sv__pin_close(&pin);
    rc = sm_tracker_poll(job->trk, &t, &err);
    if (rc < 0) {
      sv__pin_unname(&job->pin, job->log, err.msg, sizeof(err.msg));
      sv__error(res, 422, "unreadable", "%s", err.msg);
      return -1;
    }
  } else {
    sm_tracker *trk = sm_tracker_new(NULL);
    if (trk == NULL) {
      sv__pin_close(&pin);
      sv__error(res, 500, "internal", "out of memory");
      return -1;
    }
    if (sm_tracker_scan(trk, pin.proc, &t, &err) != 0) {
      sv__pin_unname(&pin, job->log, err.msg, sizeof(err.msg));
      sm_tracker_free(trk);
      sv__pin_close(&pin);
      sv__error(res, 422, "unreadable", "%s", err.msg);
      return -1;
    }
    if (keep) {
      sm_tracker_free(job->trk);
      sv__pin_close(&job->pin);
      job->trk = trk;
      job->pin = pin;
    } else {
      sm_tracker_free(trk);
      sv__pin_close(&pin);
    }
  }
  job->last = t;
  job->has_last = 1;
  check_slowdown(sv, job);
  return 0;
}

void sv__work_progress(sm_serve *sv, sv_req *r, sv_result *res) {
  sv_job *job = sv__jobs_get(&sv->jobs, r->job);
  sm_track_result t;
  sv_llm_run run;
  int rc;

  if (job == NULL) {
    sv__error(res, 404, "unknown_job", "no job %s is registered", r->job);
    return;
  }
  if (job->log == NULL) {
    sv__error(res, 409, "no_log", "job %s was registered without a log",
              r->job);
    sv__jobs_put(&sv->jobs, job);
    return;
  }
  pthread_mutex_lock(&job->mu);
  rc = job_progress(sv, job, 1, res);
  if (rc == 0)
    t = job->last;
  pthread_mutex_unlock(&job->mu);
  sv__llm_run_init(&run);
  if (rc == 0 && sv__llm_chat(sv)) {
    /* As `track --llm`, on the log pinned again: the job stays free for
     * other requests while the model thinks.  What the job keeps (its
     * record, the interference watch) is the Tracker's own answer. */
    sv_pin pin;
    sv_result tmp;
    sv__result_init(&tmp);
    if (pin_log(sv, job->log, &pin, &tmp) == 0) {
      sv__llm_track(sv, r, pin.proc, &t, &run);
      sv__pin_close(&pin);
    }
    sv__result_release(&tmp);
  }
  if (rc == 0) {
    track_json(sv, &t, &run, res);
    sv__jobs_touch(&sv->jobs, job);
  }
  sv__llm_run_release(&run);
  sv__jobs_put(&sv->jobs, job);
}

void sv__work_track(sm_serve *sv, sv_req *r, sv_result *res) {
  const char *log = sv__jstr(r->json, "log");
  double samples = sv__jnum(r->json, "samples");
  sm_track_opts o = {0};
  sm_track_result t;
  sm_tracker *trk;
  sm_err err = {0};
  sv_pin pin;

  if (log == NULL) {
    sv__error(res, 400, "bad_request",
              "\"log\" (an absolute path) is "
              "required");
    return;
  }
  if (!isnan(samples)) {
    if (samples < 1 || samples > 500) {
      sv__error(res, 400, "bad_request", "\"samples\" must be in [1, 500]");
      return;
    }
    o.samples = (int)samples;
  }
  if (pin_log(sv, log, &pin, res) != 0)
    return;
  trk = sm_tracker_new(&o);
  if (trk == NULL) {
    sv__pin_close(&pin);
    sv__error(res, 500, "internal", "out of memory");
    return;
  }
  if (sm_tracker_scan(trk, pin.proc, &t, &err) != 0) {
    sv__pin_unname(&pin, log, err.msg, sizeof(err.msg));
    sv__error(res, 422, "unreadable", "%s", err.msg);
  } else {
    sv_llm_run run;
    sv__llm_run_init(&run);
    sv__llm_track(sv, r, pin.proc, &t, &run);
    track_json(sv, &t, &run, res);
    sv__llm_run_release(&run);
  }
  sm_tracker_free(trk);
  sv__pin_close(&pin);
}

/* ==== Diagnosis ==== */

/* Diagnoses the log at path into d (the engine's), out (what is shown:
 * d merged with the LLM stage's verified verdict, run) and p (planned on
 * the merge, never more actionable than d).  Returns 0 or fills res. */
static int diagnose(sm_serve *sv, sv_req *r, const char *path,
                    const char *job_id, int context, sm_diagnosis *d,
                    sm_diagnosis *out, sm_plan *p, sv_llm_run *run,
                    sv_result *res) {
  sm_diag_opts dopt = {0};
  sm_plan_opts popt = {0};
  sm_diagnosis for_plan;
  sm_err err = {0};
  sv_pin pin;

  if (pin_log(sv, path, &pin, res) != 0)
    return -1;
  dopt.context = context;
  if (sm_diagnose_file(sv->sigdb, pin.proc, &dopt, d, &err) != 0) {
    sv__pin_unname(&pin, path, err.msg, sizeof(err.msg));
    sv__pin_close(&pin);
    sv__error(res, 422, "unreadable", "%s", err.msg);
    return -1;
  }
  /* As `diagnose --llm`: the planner's default threshold (0.8). */
  sv__llm_diagnose(sv, r, pin.proc, &pin, path, d, 0, &for_plan, out, run);
  sv__pin_close(&pin);
  popt.log_path = path;
  popt.job_id = job_id ? job_id : path;
  if (sm_plan_make(sv->sigdb, &for_plan, &popt, p, &err) != 0) {
    sm_diagnosis_release(d);
    sv__llm_run_release(run);
    sv__error(res, 500, "internal", "planner: %s", err.msg);
    return -1;
  }
  sv__llm_plan_note(run, p);
  return 0;
}

void sv__work_diagnose(sm_serve *sv, sv_req *r, sv_result *res) {
  const char *log = sv__jstr(r->json, "log");
  const char *id = sv__jstr(r->json, "job");
  double context = sv__jnum(r->json, "context");
  char *job_log = NULL;
  sm_diagnosis d, out;
  sm_plan p;
  sv_llm_run run;
  sm_jw w;

  if (!isnan(context) && (context < 1 || context > 100000)) {
    sv__error(res, 400, "bad_request", "\"context\" must be in [1, 100000]");
    return;
  }
  if (log == NULL && id != NULL) {
    sv_job *job = sv__jobs_get(&sv->jobs, id);
    if (job == NULL) {
      sv__error(res, 404, "unknown_job", "no job %s is registered", id);
      return;
    }
    job_log = job->log ? sm_strdup(job->log) : NULL;
    sv__jobs_put(&sv->jobs, job);
    if (job_log == NULL) {
      sv__error(res, 409, "no_log", "job %s was registered without a log", id);
      return;
    }
    log = job_log;
  }
  if (log == NULL) {
    sv__error(res, 400, "bad_request",
              "\"log\" (an absolute path) or \"job\" is required");
    return;
  }
  memset(&d, 0, sizeof(d));
  memset(&p, 0, sizeof(p));
  sv__llm_run_init(&run);
  if (diagnose(sv, r, log, id, isnan(context) ? 0 : (int)context, &d, &out, &p,
               &run, res) != 0) {
    sm_free(job_log);
    return;
  }
  sm_jw_init(&w, &res->body);
  sm_jw_obj_begin(&w);
  sm_diagnosis_json(&out, &p, &w);
  sv__llm_members(sv, &run, NULL, &w);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0) {
    sv__error(res, 500, "internal", "cannot format the answer");
  } else {
    res->status = 200;
    res->decision = d.failure ? "failure" : "no_failure";
    if (d.failure)
      snprintf(res->note, sizeof(res->note), "%s/%s line %lld", out.category,
               out.component, out.first_error_line);
  }
  sm_plan_release(&p);
  sm_diagnosis_release(&d);
  sv__llm_run_release(&run);
  sm_free(job_log);
}

/* ==== Write-back ==== */

/* What an end request says. */
typedef struct end_in {
  sm_end_state es;      /* end state */
  const char *state;    /* the scheduler's own state name */
  double duration;      /* seconds */
  double sm_util;       /* percent */
  double throughput;    /* the job's unit per second */
  double exit_code;     /* or NAN */
  const char *gpu_type; /* or NULL */
  const char *note;     /* free text */
  const cJSON *diag;    /* the scheduler's diagnosis, or NULL */
  int want_diag;        /* -1 auto, 0 never, 1 always */
} end_in;

static int parse_end(const cJSON *o, end_in *in, sv_result *res) {
  const char *es = sv__jstr(o, "end_state");
  const cJSON *dg = cJSON_GetObjectItemCaseSensitive(o, "diagnose");
  double st = sv__jnum(o, "start_time"), et = sv__jnum(o, "end_time");

  memset(in, 0, sizeof(*in));
  if (es == NULL || sm_end_state_parse(es, &in->es) != 0) {
    sv__error(res, 400, "bad_request",
              "\"end_state\" is required: completed, canceled, failed, "
              "failed_user, failed_framework, failed_infra or unknown");
    return -1;
  }
  in->state = sv__jstr(o, "state");
  in->duration = sv__jnum(o, "duration_s");
  if (isnan(in->duration) && !isnan(st) && !isnan(et) && et >= st)
    in->duration = et - st;
  if (isnan(in->duration) || in->duration < 0 || in->duration > 1e9) {
    sv__error(res, 400, "bad_request",
              "\"duration_s\" (or \"start_time\" and \"end_time\") is "
              "required, in seconds");
    return -1;
  }
  in->sm_util = sv__jnum(o, "sm_util");
  if (!isnan(in->sm_util) && (in->sm_util < 0 || in->sm_util > 100)) {
    sv__error(res, 400, "bad_request", "\"sm_util\" must be in [0, 100]");
    return -1;
  }
  in->throughput = sv__jnum(o, "throughput");
  if (!isnan(in->throughput) && in->throughput < 0) {
    sv__error(res, 400, "bad_request", "\"throughput\" must be >= 0");
    return -1;
  }
  in->exit_code = sv__jnum(o, "exit_code");
  in->gpu_type = sv__jstr(o, "gpu_type");
  in->note = sv__jstr(o, "note");
  in->diag = cJSON_GetObjectItemCaseSensitive(o, "diagnosis");
  if (in->diag != NULL && !cJSON_IsObject(in->diag)) {
    if (!cJSON_IsNull(in->diag)) {
      sv__error(res, 400, "bad_request", "\"diagnosis\" must be an object");
      return -1;
    }
    in->diag = NULL;
  }
  in->want_diag = -1;
  if (cJSON_IsBool(dg))
    in->want_diag = cJSON_IsTrue(dg);
  else if (dg != NULL && !cJSON_IsNull(dg)) {
    sv__error(res, 400, "bad_request", "\"diagnose\" must be true or false");
    return -1;
  }
  return 0;
}

static char *dup_opt(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

/* What the end of a job adds to the scheduler's report: the last
 * progress, a diagnosis of SchedMate's own or the scheduler's. */
typedef struct end_facts {
  sm_diagnosis d;       /* SchedMate's diagnosis (have_diag) */
  sm_diagnosis dout;    /* d as shown: merged with the LLM stage's verdict */
  sm_plan p;            /* its plan (have_diag) */
  sv_llm_run run;       /* the LLM stage's run on the diagnosis */
  int have_diag;        /* d and p hold one */
  int have_progress;    /* last holds the Tracker's last answer */
  sm_track_result last; /* the last progress */
  char *diag_text;      /* the scheduler's diagnosis as JSON, or NULL */
} end_facts;

/* The answer to a retry of a write-back that was committed. */
static void answer_duplicate(const sv_req *r, sv_result *res) {
  sm_jw w;

  sm_jw_init(&w, &res->body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "job_id", r->job);
  sm_jw_kv_bool(&w, "committed", 1);
  sm_jw_kv_bool(&w, "duplicate", 1);
  sm_jw_obj_end(&w);
  res->status = sm_jw_finish(&w) == 0 ? 200 : 500;
  res->decision = "duplicate";
}

/* The last progress, and the diagnosis of a failure whose cause the
 * scheduler does not give. */
static void end_facts_read(sm_serve *sv, sv_req *r, sv_job *job,
                           const end_in *in, end_facts *f) {
  sv_result tmp;

  if (job->log == NULL)
    return;
  sv__result_init(&tmp);
  pthread_mutex_lock(&job->mu);
  if (job_progress(sv, job, 0, &tmp) == 0 || job->has_last) {
    f->last = job->last;
    f->have_progress = 1;
  }
  pthread_mutex_unlock(&job->mu);
  sv__result_release(&tmp);
  if (in->want_diag == 1 ||
      (in->want_diag == -1 && in->diag == NULL && in->es == SM_END_FAILED)) {
    sv__result_init(&tmp);
    f->have_diag = diagnose(sv, r, job->log, job->id, 0, &f->d, &f->dout, &f->p,
                            &f->run, &tmp) == 0;
    sv__result_release(&tmp);
  }
}

static const char *diagnosed_by(const end_facts *f) {
  return f->have_diag ? "schedmate" : f->diag_text ? "scheduler" : NULL;
}

/* The job's part of the outcome object (job->mu held). */
static void outcome_job(const sv_job *job, const end_in *in, const end_facts *f,
                        sm_jw *w) {
  sm_jw_kv_str(w, "scheduler", job->scheduler ? job->scheduler : "serve");
  sm_jw_kv_str(w, "source", "serve");
  sm_jw_kv_str(w, "job_id", job->id);
  sm_jw_kv_str(w, "state", in->state);
  sm_jw_kv_num(w, "exit_code", in->exit_code);
  sm_jw_key(w, "nodes");
  sm_jw_arr_begin(w);
  for (int i = 0; i < job->n_nodes; i++)
    sm_jw_str(w, job->nodes[i]);
  sm_jw_arr_end(w);
  sm_jw_kv_int(w, "gpus",
               job->gpus > 0 ? job->gpus
               : job->has_meta && job->meta.f[SM_META_GPUS].known
                   ? (long long)job->meta.f[SM_META_GPUS].num
                   : 0);
  sm_jw_kv_num(w, "estimate_s",
               job->said && job->has_est ? round(job->est_s * 10) / 10 : NAN);
  sm_jw_key(w, "advice");
  if (job->said) {
    sm_jw_obj_begin(w);
    sm_jw_kv_num(w, "estimate_s", job->has_est ? job->est_s : NAN);
    sm_jw_kv_str(w, "fallback_reason", job->has_est ? NULL : job->fallback);
    sm_jw_kv_num(w, "best_score", round(job->best_score * 1e6) / 1e6);
    sm_jw_kv_int(w, "n", job->n_matches);
    sm_jw_kv_num(w, "advise_ms", round(job->advise_ms * 100) / 100);
    sm_jw_obj_end(w);
  } else {
    sm_jw_null(w);
  }
  sm_jw_kv_str(w, "log", job->log);
  sm_jw_key(w, "progress");
  if (f->have_progress) {
    sm_buf t;
    sm_buf_init(&t, 0);
    if (sm_track_result_json(&f->last, &t) == 0)
      sm_jw_raw(w, sm_buf_str(&t));
    else
      sm_jw_null(w);
    sm_buf_release(&t);
  } else {
    sm_jw_null(w);
  }
}

/* The history record of the ended run, outcome included.  0, or -1 when
 * it could not be built (rec is then released). */
static int end_record(sv_job *job, const end_in *in, const end_facts *f,
                      sm_record *rec) {
  sm_buf ob;
  sm_jw w;

  sm_record_init(rec);
  pthread_mutex_lock(&job->mu);
  rec->id = sm_strdup(job->id);
  if (job->has_meta)
    sm_meta_copy(&rec->meta, &job->meta);
  rec->user = dup_opt(job->user);
  rec->name = dup_opt(job->name);
  rec->gpu_type = dup_opt(in->gpu_type ? in->gpu_type : job->gpu_type);
  rec->duration_s = in->duration;
  rec->sm_util = in->sm_util;
  rec->end_state = in->es;
  rec->throughput = !isnan(in->throughput)           ? in->throughput
                    : f->have_progress && f->last.ok ? f->last.throughput
                                                     : NAN;
  rec->submit_time = job->submit_time;
  rec->added_at = sv__wall();
  sm_buf_init(&ob, (size_t)4 << 20);
  sm_jw_init(&w, &ob);
  sm_jw_obj_begin(&w);
  outcome_job(job, in, f, &w);
  pthread_mutex_unlock(&job->mu);
  sm_jw_key(&w, "diagnosis");
  if (f->have_diag && f->d.category != NULL) {
    sm_jw_obj_begin(&w);
    sm_diagnosis_json(&f->dout, &f->p, &w);
    sv__llm_stage_json(&f->run, NULL, &w);
    sm_jw_obj_end(&w);
  } else if (f->diag_text) {
    sm_jw_raw(&w, f->diag_text);
  } else {
    sm_jw_null(&w);
  }
  sm_jw_kv_str(&w, "diagnosed_by", diagnosed_by(f));
  if (in->note)
    sm_jw_kv_str(&w, "note", in->note);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) == 0)
    rec->outcome = sm_buf_take(&ob);
  sm_buf_release(&ob);
  if (rec->id == NULL || rec->outcome == NULL) {
    sm_record_release(rec);
    return -1;
  }
  return 0;
}

/* The answer once the record is committed. */
static void answer_committed(sm_serve *sv, const sv_job *job,
                             const sm_record *rec, const end_facts *f,
                             sv_result *res) {
  sm_jw w;

  sm_jw_init(&w, &res->body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "job_id", job->id);
  sm_jw_kv_bool(&w, "committed", 1);
  sm_jw_kv_str(&w, "end_state", sm_end_state_name(rec->end_state));
  sm_jw_kv_num(&w, "duration_s", rec->duration_s);
  sm_jw_kv_num(&w, "estimate_s", job->said && job->has_est ? job->est_s : NAN);
  sm_jw_kv_str(&w, "diagnosed_by", diagnosed_by(f));
  sm_jw_kv_int(&w, "history_records", (long long)atomic_load(&sv->hist.n));
  sm_jw_obj_end(&w);
  res->status = sm_jw_finish(&w) == 0 ? 200 : 500;
  res->decision = "record";
  snprintf(res->note, sizeof(res->note), "%s %.0f s",
           sm_end_state_name(rec->end_state), rec->duration_s);
}

void sv__work_end(sm_serve *sv, sv_req *r, sv_result *res) {
  sv_job *job;
  end_in in;
  end_facts f;
  sm_record rec;
  int rc;
  sm_err err = {0};

  if (parse_end(r->json, &in, res) != 0)
    return;
  job = sv__jobs_get(&sv->jobs, r->job);
  if (job == NULL) {
    if (sv__jobs_ended(&sv->jobs, r->job))
      answer_duplicate(r, res);
    else
      sv__error(res, 404, "unknown_job", "no job %s is registered", r->job);
    return;
  }
  memset(&f, 0, sizeof(f));
  sv__llm_run_init(&f.run);
  end_facts_read(sv, r, job, &in, &f);
  if (in.es == SM_END_FAILED) {
    if (f.have_diag && f.d.failure)
      in.es = sm_end_state_of_category(f.d.category, SM_END_FAILED);
    else if (in.diag)
      in.es = sm_end_state_of_category(sv__jstr(in.diag, "category"),
                                       SM_END_FAILED);
  }
  if (in.diag) {
    f.diag_text = cJSON_PrintUnformatted(in.diag);
    if (f.diag_text == NULL) {
      sv__error(res, 500, "internal", "out of memory");
      goto out;
    }
  }
  if (end_record(job, &in, &f, &rec) != 0) {
    sv__error(res, 500, "internal", "cannot build the record");
    goto out;
  }
  sm_record_fingerprint(&rec);
  if (sv__llm_embedding(sv)) {
    /* As `history add --embed`: the record's fingerprint from the
     * endpoint, or nothing is committed. */
    sm_fp_extra x = {rec.user, rec.name, rec.vc};
    if (sv__llm_embed(sv, r, &rec.meta, &x, rec.fp, &err) != 0 ||
        (rec.embedder = sm_strdup(sm_llm_embedder(sv->o.llm))) == NULL) {
      res->retry_after = 1;
      sv__error(res, 503, "history_unavailable",
                "embeddings endpoint: %s (not committed; send it again)",
                err.msg[0] ? err.msg : "out of memory");
      sm_record_release(&rec);
      goto out;
    }
  }
  rc = sv__hist_commit(&sv->hist, &rec, &err);
  if (rc != 0) {
    atomic_fetch_add(&sv->m.writebacks_failed, 1);
    res->retry_after = 1;
    sv__error(res, 503, "history_unavailable",
              "not committed (send it again): %s", err.msg);
    sv__log(sv, SM_SERVE_ERROR, "job %s: write-back failed: %s", job->id,
            err.msg);
    sm_record_release(&rec);
    goto out;
  }
  atomic_fetch_add(&sv->m.writebacks_ok, 1);
  sv__jobs_remove(&sv->jobs, job);
  sv__interference_leave(sv, job);
  sv__journal_job(sv, job, "end");
  answer_committed(sv, job, &rec, &f, res);
  sm_record_release(&rec);
out:
  cJSON_free(f.diag_text);
  if (f.have_diag) {
    sm_plan_release(&f.p);
    sm_diagnosis_release(&f.d);
  }
  sv__llm_run_release(&f.run);
  sv__jobs_put(&sv->jobs, job);
}
