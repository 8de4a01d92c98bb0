/* api.c - the requests of the submit channel (POST /v1/advise, POST
 * /v1/jobs), the answers given at once (GET /healthz, GET /v1/jobs/{id}),
 * the answers of late requests, body parsing with the depth cap and the
 * typed member readers of the request bodies.
 *
 * An advice request names a job as the command does: a repository (under
 * an allowed root) and the launch command, or metadata that `schedmate
 * extract --json` wrote.  The extraction gets what is left of the
 * deadline as its time budget; the search runs on the in-memory index;
 * the answer is the JSON of `schedmate advise --json`. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve/serve_int.h"

#define MAX_ARGS 256

/* An error from the library: 403 outside the roots, 422 unreadable. */
static void path_error(sm_serve *sv, sv_result *res, const sm_err *e) {
  if (e->code == SM_EACCES) {
    atomic_fetch_add(&sv->m.forbidden, 1);
    sv__error(res, 403, "forbidden", "%s", e->msg);
  } else if (e->code == SM_EINVAL) {
    sv__error(res, 400, "bad_request", "%s", e->msg);
  } else if (e->code == SM_ENOMEM) {
    sv__error(res, 500, "internal", "out of memory");
  } else {
    sv__error(res, 422, "unreadable", "%s", e->msg);
  }
}

/* ==== JSON members ==== */

/* A member that must be a string when present. */
static int opt_str(const cJSON *o, const char *k, const char **out,
                   sv_result *res) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

  *out = NULL;
  if (v == NULL || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsString(v) || v->valuestring[0] == '\0') {
    sv__error(res, 400, "bad_request", "\"%s\" must be a non-empty string", k);
    return -1;
  }
  *out = v->valuestring;
  return 0;
}

/* A member that must be a number in [lo, hi] when present. */
static int opt_num(const cJSON *o, const char *k, double lo, double hi,
                   double *out, sv_result *res) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

  *out = NAN;
  if (v == NULL || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
      v->valuedouble > hi) {
    sv__error(res, 400, "bad_request", "\"%s\" must be a number in [%g, %g]", k,
              lo, hi);
    return -1;
  }
  *out = v->valuedouble;
  return 0;
}

/* An array of at most max strings, when present. */
static int opt_words(const cJSON *o, const char *k, const char **words, int max,
                     int *n, sv_result *res) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

  *n = 0;
  if (v == NULL || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsArray(v)) {
    sv__error(res, 400, "bad_request", "\"%s\" must be an array of strings", k);
    return -1;
  }
  for (const cJSON *e = v->child; e; e = e->next) {
    if (!cJSON_IsString(e)) {
      sv__error(res, 400, "bad_request", "\"%s\" must be an array of strings",
                k);
      return -1;
    }
    if (*n == max) {
      sv__error(res, 400, "bad_request", "\"%s\": more than %d entries", k,
                max);
      return -1;
    }
    words[(*n)++] = e->valuestring;
  }
  return 0;
}

int sv__parse_body(sm_serve *sv, sv_req *r, sv_result *res) {
  const char *s = sm_buf_str(&r->body);
  int depth;

  if (r->body.len == 0) {
    sv__error(res, 400, "bad_json", "the request needs a JSON object body");
    return -1;
  }
  depth = sv__json_depth(s, r->body.len, sv->o.max_depth);
  if (depth > sv->o.max_depth) {
    sv__error(res, 400, "too_deep", "JSON nested deeper than %d levels",
              sv->o.max_depth);
    return -1;
  }
  if (memchr(s, '\0', r->body.len) != NULL) {
    sv__error(res, 400, "bad_json", "the body holds a NUL byte");
    return -1;
  }
  r->json = cJSON_ParseWithLength(s, r->body.len);
  if (r->json == NULL) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= s && at <= s + r->body.len ? (long)(at - s) : -1;
    sv__error(res, 400, "bad_json", "malformed JSON (near byte %ld)", off);
    return -1;
  }
  if (!cJSON_IsObject(r->json)) {
    sv__error(res, 400, "bad_json", "the body must be a JSON object");
    return -1;
  }
  return 0;
}

/* ==== Advice ==== */

/* Opens the answer of an advice in w (over body): the advice object, or
 * for a registration {"job_id", "registered", "advice": {...}}, whose
 * advice object the caller closes first. */
static void advice_open(const sv_req *r, sm_buf *body, sm_jw *w) {
  sm_jw_init(w, body);
  sm_jw_obj_begin(w);
  if (r->ep == EP_REGISTER) {
    sm_jw_kv_str(w, "job_id", r->job);
    sm_jw_kv_bool(w, "registered", 1);
    sm_jw_key(w, "advice");
    sm_jw_obj_begin(w);
  }
}

/* What a request says about the job to advise. */
typedef struct adv_in {
  const char *repo, *cwd;     /* repository and subdirectory */
  const char *configs[32];    /* config files in it */
  int n_configs;              /* their count */
  const char *argv[MAX_ARGS]; /* the launch command */
  int argc;                   /* its words */
  const cJSON *meta;          /* or metadata */
  double gpus, nodes;         /* the request's GPUs and nodes */
  sm_advise_opts o;           /* search options */
} adv_in;

static int parse_advise(sm_serve *sv, const cJSON *o, adv_in *in,
                        sv_result *res) {
  const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
  double k, t, hl;

  memset(in, 0, sizeof(*in));
  if (opt_str(o, "repo", &in->repo, res) || opt_str(o, "cwd", &in->cwd, res) ||
      opt_words(o, "configs", in->configs, 32, &in->n_configs, res) ||
      opt_words(o, "command", in->argv, MAX_ARGS, &in->argc, res) ||
      opt_num(o, "gpus", 0, 1e6, &in->gpus, res) ||
      opt_num(o, "top_k", 1, 1000, &k, res) ||
      opt_num(o, "threshold", 1e-6, 1, &t, res) ||
      opt_num(o, "half_life_s", 0, 1e12, &hl, res))
    return -1;
  in->meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
  if (in->meta != NULL && !cJSON_IsObject(in->meta) &&
      !cJSON_IsNull(in->meta)) {
    sv__error(res, 400, "bad_request", "\"metadata\" must be an object");
    return -1;
  }
  if (cJSON_IsNull(in->meta))
    in->meta = NULL;
  in->nodes = NAN;
  if (cJSON_IsArray(nodes))
    in->nodes = cJSON_GetArraySize(nodes) > 0 ? cJSON_GetArraySize(nodes) : NAN;
  else if (cJSON_IsNumber(nodes) && nodes->valuedouble >= 1 &&
           nodes->valuedouble <= 1e6)
    in->nodes = nodes->valuedouble;
  else if (nodes != NULL && !cJSON_IsNull(nodes)) {
    sv__error(res, 400, "bad_request",
              "\"nodes\" must be a node list or a count");
    return -1;
  }
  if (in->meta && (in->repo || in->argc)) {
    sv__error(res, 400, "bad_request",
              "give \"metadata\" or \"repo\" and \"command\", not both");
    return -1;
  }
  if (in->repo && in->argc == 0) {
    sv__error(res, 400, "bad_request",
              "\"command\" (the launch command, an array of words) is "
              "required with \"repo\"");
    return -1;
  }
  if (!in->repo && in->argc > 0) {
    sv__error(res, 400, "bad_request", "\"repo\" is required with \"command\"");
    return -1;
  }
  in->o.top_k = !isnan(k) ? (int)k : sv->o.top_k;
  in->o.threshold = !isnan(t) ? (float)t : sv->o.threshold;
  in->o.half_life_s = !isnan(hl) ? hl : 0;
  return 0;
}

/* What the scheduler itself says wins over what was read. */
static void request_facts(const adv_in *in, sm_meta *meta) {
  if (!isnan(in->gpus))
    sm_meta_set_num(meta, SM_META_GPUS, in->gpus, "request:gpus");
  if (!isnan(in->nodes))
    sm_meta_set_num(meta, SM_META_NODES, in->nodes, "request:nodes");
}

/* Extracts (or reads) the metadata; warnings into warn (a JSON array);
 * the LLM stage on what the extraction left unknown into run.  Returns 0
 * or fills res. */
static int job_meta(sm_serve *sv, sv_req *r, const adv_in *in, sm_meta *meta,
                    sm_buf *warn, sv_llm_run *run, sv_result *res) {
  sm_err err = {0};

  if (in->meta) {
    char *t = cJSON_PrintUnformatted(in->meta);
    int rc = t ? sm_meta_from_json(meta, t, strlen(t), &err) : SM_ENOMEM;
    cJSON_free(t);
    if (rc != 0) {
      sv__error(res, 400, "bad_request", "\"metadata\": %s",
                err.msg[0] ? err.msg : "out of memory");
      return -1;
    }
  } else if (in->repo) {
    sm_extract_req q = {0};
    sm_extract_res er;
    sv_pin pin;
    double left = r->deadline > 0 ? r->deadline - sm_now() : 2.0;
    int rc = sv__pin(&sv->roots, in->repo, SV_PIN_DIR, &pin, &err);
    if (rc != 0) {
      path_error(sv, res, &err);
      return -1;
    }
    q.repo = pin.proc;
    q.cwd = in->cwd;
    q.configs = in->configs;
    q.n_configs = in->n_configs;
    q.argv = in->argv;
    q.argc = in->argc;
    /* What is left of the deadline, less room for the search.  A
     * registration answered already (late) still reads the job, for its
     * write-back, within a short budget of its own. */
    q.time_budget_s = left * 0.8 > 0.01      ? left * 0.8
                      : r->ep == EP_REGISTER ? 0.25
                                             : 0.01;
    if (q.time_budget_s > 2.0)
      q.time_budget_s = 2.0;
    rc = sm_extract(&q, &er, &err);
    if (rc != 0) {
      sv__pin_close(&pin);
      sm_extract_res_release(&er);
      sv__pin_unname(&pin, in->repo, err.msg, sizeof(err.msg));
      if (err.code == SM_EINVAL || err.code == SM_EESCAPE) {
        sv__error(res, 400, "bad_request", "%s", err.msg);
      } else {
        path_error(sv, res, &err);
      }
      return -1;
    }
    if (warn) {
      sm_jw w;
      sm_jw_init(&w, warn);
      sm_jw_arr_begin(&w);
      for (int i = 0; i < er.n_warnings; i++) {
        char line[SM_ERR_MSG_SIZE];
        snprintf(line, sizeof(line), "%s", er.warnings[i]);
        sv__pin_unname(&pin, in->repo, line, sizeof(line));
        sm_jw_str(&w, line);
      }
      sm_jw_arr_end(&w);
    }
    rc = sm_meta_copy(meta, &er.meta);
    sm_extract_res_release(&er);
    if (rc != 0) {
      sv__pin_close(&pin);
      sv__error(res, 500, "internal", "out of memory");
      return -1;
    }
    /* As `advise --repo --llm`: the model is asked for what neither the
     * extraction nor the scheduler said, inside the repository only,
     * until the request's deadline; every value it claims is verified. */
    request_facts(in, meta);
    sv__llm_advise(sv, r, &q, &pin, in->repo, meta, run);
    sv__pin_close(&pin);
  }
  request_facts(in, meta);
  return 0;
}

/* The advice as `schedmate advise --json` writes it, into an open
 * object. */
static void advice_json(const sm_meta *meta, const sm_advice *a,
                        const sm_buf *warn, double t0, sm_jw *w) {
  sm_jw_key(w, "metadata");
  sm_meta_write_json(meta, w);
  sm_jw_key(w, "evidence");
  sm_meta_write_evidence(meta, w);
  sm_advice_write_json(a, w);
  if (warn && warn->len) {
    sm_jw_key(w, "warnings");
    sm_jw_raw(w, sm_buf_str(warn));
  }
  sm_jw_kv_num(w, "elapsed_ms", round((sm_now() - t0) * 1e4) / 10);
}

/* Advises the request's job into res (201 + registration for
 * register). */
void sv__work_advise(sm_serve *sv, sv_req *r, sv_result *res) {
  adv_in in;
  sm_meta meta;
  sm_buf warn;
  sm_advice a;
  sm_err err = {0};
  sv_llm_run run;
  float efp[SM_FP_DIMS];
  const float *fp = NULL;
  sm_jw w;

  if (parse_advise(sv, r->json, &in, res) != 0)
    return;
  sm_meta_init(&meta);
  sm_buf_init(&warn, 0);
  sv__llm_run_init(&run);
  if (job_meta(sv, r, &in, &meta, &warn, &run, res) != 0) {
    sv__llm_run_release(&run);
    sm_meta_release(&meta);
    sm_buf_release(&warn);
    return;
  }
  if (r->ep == EP_REGISTER) {
    /* The metadata goes with the job, for its write-back. */
    sv_job *job = sv__jobs_get(&sv->jobs, r->job);
    int done;
    pthread_mutex_lock(&r->mu);
    done = r->state == RQ_DONE;
    pthread_mutex_unlock(&r->mu);
    if (job) {
      pthread_mutex_lock(&job->mu);
      if (!job->has_meta && sm_meta_copy(&job->meta, &meta) == 0)
        job->has_meta = 1;
      pthread_mutex_unlock(&job->mu);
      /* Jobs already running on its nodes take their baselines. */
      if (job->n_nodes > 0)
        sv__interference_join(sv, job);
      if (done) /* answered by the deadline already */
        sv__journal_job(sv, job, "update");
      sv__jobs_put(&sv->jobs, job);
    }
    if (done) {
      sv__llm_run_release(&run);
      sm_meta_release(&meta);
      sm_buf_release(&warn);
      return;
    }
  }
  sm_advice_init(&a);
  if (sv__llm_embedding(sv)) {
    /* As `advise --embed`: the fingerprint from the endpoint; without
     * one, no search (the scheduler keeps its own estimator). */
    sm_err e = {0};
    if (sv__llm_embed(sv, r, &meta, NULL, efp, &e) == 0) {
      fp = efp;
    } else {
      a.fallback = SM_FALLBACK_UNAVAILABLE;
      snprintf(a.detail, sizeof(a.detail), "embeddings endpoint: %s", e.msg);
    }
  }
  if (a.fallback == SM_FALLBACK_NONE &&
      sv__hist_advise(&sv->hist, &meta, fp,
                      fp ? sm_llm_embedder(sv->o.llm) : NULL, &in.o, &a,
                      &err) != 0) {
    sm_advice_release(&a);
    sv__llm_run_release(&run);
    sm_meta_release(&meta);
    sm_buf_release(&warn);
    sv__error(res, 500, "internal", "%s", err.msg);
    return;
  }
  advice_open(r, &res->body, &w);
  advice_json(&meta, &a, &warn, r->t0, &w);
  sv__llm_members(sv, &run, &meta, &w);
  if (r->ep == EP_REGISTER)
    sm_jw_obj_end(&w);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0) {
    sv__error(res, 500, "internal", "cannot format the answer");
  } else {
    res->status = r->ep == EP_REGISTER ? 201 : 200;
    res->fallback = sm_fallback_name(a.fallback);
    res->decision = a.est.valid ? "estimate" : "fallback";
    res->estimate_s = a.est.valid ? a.est.duration_s : NAN;
    res->best_score = a.best_score;
    res->n_matches = a.est.valid ? a.est.n : 0;
    if (a.fallback)
      snprintf(res->note, sizeof(res->note), "%.*s", (int)sizeof(res->note) - 1,
               a.detail);
  }
  sm_advice_release(&a);
  sv__llm_run_release(&run);
  sm_meta_release(&meta);
  sm_buf_release(&warn);
}

/* ==== Registration ==== */

static char *dup_opt(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

int sv__register(sm_serve *sv, sv_req *r, sv_result *res) {
  const cJSON *o = r->json, *nodes;
  const char *id, *log, *user, *name, *gpu_type, *sched;
  adv_in in;
  double st;
  sv_job *job;

  if (opt_str(o, "id", &id, res) || opt_str(o, "log", &log, res) ||
      opt_str(o, "user", &user, res) || opt_str(o, "name", &name, res) ||
      opt_str(o, "gpu_type", &gpu_type, res) ||
      opt_str(o, "scheduler", &sched, res) ||
      opt_num(o, "submit_time", 0, 1e11, &st, res))
    return -1;
  if (id == NULL) {
    sv__error(res, 400, "bad_request", "\"id\" (the job id) is required");
    return -1;
  }
  if (!sv__id_ok(id)) {
    sv__error(res, 400, "bad_request",
              "\"id\": 1 to %d characters of A-Z a-z 0-9 . _ : @ / + = -, "
              "without \"..\"",
              SV_ID_MAX);
    return -1;
  }
  if (log && log[0] != '/') {
    sv__error(res, 400, "bad_request", "\"log\" must be an absolute path");
    return -1;
  }
  if (parse_advise(sv, o, &in, res) != 0)
    return -1;
  snprintf(r->job, sizeof(r->job), "%s", id);
  job = sv__job_new(id);
  if (job == NULL) {
    sv__error(res, 500, "internal", "out of memory");
    return -1;
  }
  job->repo = dup_opt(in.repo);
  job->log = dup_opt(log);
  job->user = dup_opt(user);
  job->name = dup_opt(name);
  job->gpu_type = dup_opt(gpu_type);
  job->scheduler = dup_opt(sched);
  job->submit_time = st;
  job->registered = sv__wall();
  job->gpus = isnan(in.gpus) ? 0 : (int)in.gpus;
  nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
  if (cJSON_IsArray(nodes) && cJSON_GetArraySize(nodes) > 0) {
    int k = cJSON_GetArraySize(nodes);
    job->nodes = sm_calloc((size_t)k, sizeof(char *));
    for (const cJSON *e = nodes->child; job->nodes && e; e = e->next) {
      if (!cJSON_IsString(e) || !sv__id_ok(e->valuestring)) {
        sv__job_free(job);
        sv__error(res, 400, "bad_request",
                  "\"nodes\" must be a list of node names");
        return -1;
      }
      job->nodes[job->n_nodes++] = sm_strdup(e->valuestring);
    }
  }
  if (sv__jobs_add(&sv->jobs, job) != 0) {
    sv__error(res, 503, "registry_full", "%d jobs are registered already",
              sv->o.max_jobs);
    return -1;
  }
  job = sv__jobs_get(&sv->jobs, id);
  if (job) {
    sv__journal_job(sv, job, "register");
    sv__jobs_put(&sv->jobs, job);
  }
  return 0;
}

void sv__register_answered(sm_serve *sv, sv_req *r) {
  sv_job *job;

  if (r->ep != EP_REGISTER)
    return;
  job = sv__jobs_get(&sv->jobs, r->job);
  if (job == NULL)
    return;
  pthread_mutex_lock(&job->mu);
  if (r->res.status == 201) {
    job->said = 1;
    job->has_est = !isnan(r->res.estimate_s);
    job->est_s = r->res.estimate_s;
    snprintf(job->fallback, sizeof(job->fallback), "%s",
             r->res.fallback ? r->res.fallback : "");
    job->best_score = r->res.best_score;
    job->n_matches = r->res.n_matches;
    job->advise_ms = (sm_now() - r->t0) * 1000;
  }
  pthread_mutex_unlock(&job->mu);
  sv__journal_job(sv, job, "update");
  sv__jobs_put(&sv->jobs, job);
}

/* ==== Answered at once ==== */

void sv__healthz(sm_serve *sv, sv_result *res) {
  sm_jw w;

  sm_jw_init(&w, &res->body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "status", "ok");
  sm_jw_kv_str(&w, "version", SM_VERSION_STRING);
  sm_jw_kv_str(&w, "store", sm_store_kind(sv->hist.store));
  sm_jw_kv_int(&w, "history_records", (long long)atomic_load(&sv->hist.n));
  sm_jw_kv_int(&w, "jobs", sv__jobs_count(&sv->jobs));
  sm_jw_kv_bool(&w, "llm", sv->o.llm != NULL);
  sm_jw_kv_num(&w, "uptime_s", round((sm_now() - sv->t_start) * 10) / 10);
  sm_jw_key(&w, "queues");
  sm_jw_obj_begin(&w);
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++) {
    sm_jw_key(&w, sv__channel_names[c]);
    sm_jw_obj_begin(&w);
    sm_jw_kv_int(&w, "depth", sv__chan_depth(&sv->ch[c]));
    sm_jw_kv_int(&w, "capacity", sv->ch[c].cap);
    sm_jw_kv_int(&w, "workers", sv->ch[c].n_thr);
    sm_jw_obj_end(&w);
  }
  sm_jw_obj_end(&w);
  sm_jw_obj_end(&w);
  res->status = sm_jw_finish(&w) == 0 ? 200 : 500;
  res->decision = "health";
}

void sv__job_info(sm_serve *sv, const char *id, sv_result *res) {
  sv_job *job = sv__jobs_get(&sv->jobs, id);
  sm_jw w;

  if (job == NULL) {
    if (sv__jobs_ended(&sv->jobs, id))
      sv__error(res, 404, "unknown_job", "job %s has ended", id);
    else
      sv__error(res, 404, "unknown_job", "no job %s is registered", id);
    return;
  }
  sm_jw_init(&w, &res->body);
  pthread_mutex_lock(&job->mu);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "job_id", job->id);
  sm_jw_kv_str(&w, "repo", job->repo);
  sm_jw_kv_str(&w, "log", job->log);
  sm_jw_kv_str(&w, "user", job->user);
  sm_jw_kv_str(&w, "name", job->name);
  sm_jw_kv_str(&w, "scheduler", job->scheduler);
  sm_jw_kv_int(&w, "gpus", job->gpus);
  sm_jw_key(&w, "nodes");
  sm_jw_arr_begin(&w);
  for (int i = 0; i < job->n_nodes; i++)
    sm_jw_str(&w, job->nodes[i]);
  sm_jw_arr_end(&w);
  sm_jw_kv_num(&w, "registered", job->registered);
  sv__job_said_json(job, 0, &w);
  sm_jw_key(&w, "progress");
  if (job->has_last) {
    sm_buf t;
    sm_buf_init(&t, 0);
    if (sm_track_result_json(&job->last, &t) == 0)
      sm_jw_raw(&w, sm_buf_str(&t));
    else
      sm_jw_null(&w);
    sm_buf_release(&t);
  } else {
    sm_jw_null(&w);
  }
  sv__slowdown_json(job, &w);
  sm_jw_obj_end(&w);
  pthread_mutex_unlock(&job->mu);
  sv__jobs_put(&sv->jobs, job);
  res->status = sm_jw_finish(&w) == 0 ? 200 : 500;
  res->decision = "job";
}

/* ==== Late answers ==== */

void sv__late_result(sm_serve *sv, sv_req *r, sv_result *res) {
  double ms = (sm_now() - r->t0) * 1000;
  sm_jw w;

  if (r->ep == EP_ADVISE || r->ep == EP_REGISTER) {
    char detail[128];
    snprintf(detail, sizeof(detail), "no answer within %d ms%s",
             r->ep == EP_REGISTER || r->ep == EP_ADVISE
                 ? sv->o.advise_deadline_ms
                 : sv->o.deadline_ms,
             r->t_work == 0 ? " (still queued)" : "");
    advice_open(r, &res->body, &w);
    sm_jw_key(&w, "metadata");
    sm_jw_null(&w);
    sm_jw_key(&w, "matches");
    sm_jw_arr_begin(&w);
    sm_jw_arr_end(&w);
    sm_jw_key(&w, "estimate");
    sm_jw_null(&w);
    sm_jw_key(&w, "outcomes");
    sm_jw_null(&w);
    sm_jw_key(&w, "best_score");
    sm_jw_null(&w);
    sm_jw_kv_bool(&w, "fallback", 1);
    sm_jw_kv_str(&w, "fallback_reason", "deadline");
    sm_jw_kv_str(&w, "fallback_detail", detail);
    sm_jw_kv_num(&w, "elapsed_ms", round(ms * 10) / 10);
    if (r->ep == EP_REGISTER)
      sm_jw_obj_end(&w);
    sm_jw_obj_end(&w);
    if (sm_jw_finish(&w) != 0) {
      sv__error(res, 500, "internal", "cannot format the answer");
      return;
    }
    res->status = r->ep == EP_REGISTER ? 201 : 200;
    res->decision = "fallback";
    res->fallback = "deadline";
    snprintf(res->note, sizeof(res->note), "%s", detail);
    return;
  }
  res->retry_after = 1;
  if (r->ep == EP_END)
    sv__error(res, 503, "deadline",
              "no answer within %d ms: the write-back is not acknowledged "
              "(it may still be committed; sending it again is safe)",
              sv->o.deadline_ms);
  else
    sv__error(res, 503, "deadline", "no answer within %d ms",
              sv->o.deadline_ms);
}

/* ==== Dispatch ==== */

void sv__work(sm_serve *sv, sv_req *r, sv_result *res) {
  switch (r->ep) {
  case EP_ADVISE:
  case EP_REGISTER:
    sv__work_advise(sv, r, res);
    break;
  case EP_JOB:
    sv__job_info(sv, r->job, res);
    break;
  case EP_PROGRESS:
    sv__work_progress(sv, r, res);
    break;
  case EP_TRACK:
    sv__work_track(sv, r, res);
    break;
  case EP_END:
    sv__work_end(sv, r, res);
    break;
  case EP_DIAGNOSE:
    sv__work_diagnose(sv, r, res);
    break;
  default:
    sv__error(res, 500, "internal", "no worker for %s", sv__ep_name(r->ep));
  }
}
