/* jobs.c - jobs a scheduler registered (POST /v1/jobs) and has not ended
 * yet: what was asked, what the service answered, and the log the run
 * channel follows.
 *
 * The table is a fixed array of hash chains under one mutex, capped at
 * max jobs; a job is reference-counted, so a worker keeps using one that
 * ended meanwhile.  Followed logs hold an open descriptor and a tracker
 * each, so only max_followed of them stay open: past that the least
 * recently asked is closed (it is scanned again, from its tail, when
 * asked again).  The ids of recently ended jobs are remembered, so that a
 * retried write-back is recognised.
 *
 * With a journal file, every registration, answer, extraction and end is
 * appended as one JSON line (one write each); at start the journal is
 * replayed, so a restart keeps the jobs that had not ended, and it is
 * rewritten with only those. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve_int.h"

#define ENDED_RING 4096

sv_job *sv__job_new(const char *id) {
  sv_job *j = sm_calloc(1, sizeof(*j));

  if (j == NULL)
    return NULL;
  j->id = sm_strdup(id);
  if (j->id == NULL) {
    sm_free(j);
    return NULL;
  }
  j->refs = 1;
  pthread_mutex_init(&j->mu, NULL);
  sm_meta_init(&j->meta);
  j->submit_time = NAN;
  j->best_score = NAN;
  j->est_s = NAN;
  j->rate = NAN;
  j->base_rate = NAN;
  j->slow_ratio = NAN;
  j->pin.fd = -1;
  return j;
}

void sv__job_free(sv_job *j) {
  if (j == NULL)
    return;
  sm_free(j->id);
  sm_free(j->repo);
  sm_free(j->log);
  sm_free(j->user);
  sm_free(j->name);
  sm_free(j->gpu_type);
  sm_free(j->scheduler);
  for (int i = 0; i < j->n_nodes; i++)
    sm_free(j->nodes[i]);
  sm_free(j->nodes);
  sm_meta_release(&j->meta);
  sm_tracker_free(j->trk);
  sv__pin_close(&j->pin);
  pthread_mutex_destroy(&j->mu);
  sm_free(j);
}

int sv__jobs_init(sv_jobs *j, int max, int max_followed, const char *journal,
                  sm_err *err) {
  size_t nb = 64;

  memset(j, 0, sizeof(*j));
  while (nb < (size_t)max)
    nb *= 2;
  j->b = sm_calloc(nb, sizeof(*j->b));
  j->ended = sm_calloc(ENDED_RING, sizeof(char *));
  if (j->b == NULL || j->ended == NULL) {
    sm_free(j->b);
    sm_free(j->ended);
    return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  }
  j->nb = nb;
  j->max = max;
  j->max_followed = max_followed;
  j->ended_cap = ENDED_RING;
  if (journal) {
    j->journal = sm_strdup(journal);
    if (j->journal == NULL)
      return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  }
  pthread_mutex_init(&j->mu, NULL);
  pthread_mutex_init(&j->jmu, NULL);
  return 0;
}

void sv__jobs_release(sv_jobs *j) {
  if (j->b == NULL)
    return;
  for (size_t i = 0; i < j->nb; i++)
    for (sv_job *p = j->b[i], *nx; p; p = nx) {
      nx = p->next;
      sv__job_free(p);
    }
  for (int i = 0; i < j->ended_cap; i++)
    sm_free(j->ended[i]);
  sm_free(j->ended);
  sm_free(j->b);
  sm_free(j->journal);
  pthread_mutex_destroy(&j->mu);
  pthread_mutex_destroy(&j->jmu);
  memset(j, 0, sizeof(*j));
}

static size_t bucket(const sv_jobs *j, const char *id) {
  return sm_hash64(id, strlen(id), 11) & (j->nb - 1);
}

static void lru_unlink(sv_jobs *j, sv_job *job) {
  if (!job->in_lru)
    return;
  if (job->lru_prev)
    job->lru_prev->lru_next = job->lru_next;
  else
    j->lru_head = job->lru_next;
  if (job->lru_next)
    job->lru_next->lru_prev = job->lru_prev;
  else
    j->lru_tail = job->lru_prev;
  job->lru_prev = job->lru_next = NULL;
  job->in_lru = 0;
  j->n_followed--;
}

/* Unlinks job from its chain; caller holds mu.  Drops the table's
 * reference (the job may live on with its users). */
static void unlink_job(sv_jobs *j, sv_job *job) {
  sv_job **pp = &j->b[bucket(j, job->id)];

  while (*pp && *pp != job)
    pp = &(*pp)->next;
  if (*pp == NULL)
    return;
  *pp = job->next;
  job->next = NULL;
  job->gone = 1;
  j->n--;
  lru_unlink(j, job);
  if (--job->refs == 0)
    sv__job_free(job);
}

int sv__jobs_add(sv_jobs *j, sv_job *job) {
  size_t b = bucket(j, job->id);

  pthread_mutex_lock(&j->mu);
  for (sv_job *p = j->b[b]; p; p = p->next)
    if (strcmp(p->id, job->id) == 0) {
      unlink_job(j, p);
      break;
    }
  if (j->n >= j->max) {
    pthread_mutex_unlock(&j->mu);
    sv__job_free(job);
    return SM_ELIMIT;
  }
  job->next = j->b[b];
  j->b[b] = job;
  j->n++;
  /* A re-registered id is no longer "ended". */
  for (int i = 0; i < j->ended_cap; i++)
    if (j->ended[i] && strcmp(j->ended[i], job->id) == 0) {
      sm_free(j->ended[i]);
      j->ended[i] = NULL;
    }
  pthread_mutex_unlock(&j->mu);
  return 0;
}

sv_job *sv__jobs_get(sv_jobs *j, const char *id) {
  sv_job *p;

  pthread_mutex_lock(&j->mu);
  for (p = j->b[bucket(j, id)]; p; p = p->next)
    if (strcmp(p->id, id) == 0) {
      p->refs++;
      break;
    }
  pthread_mutex_unlock(&j->mu);
  return p;
}

void sv__jobs_put(sv_jobs *j, sv_job *job) {
  int last;

  if (job == NULL)
    return;
  pthread_mutex_lock(&j->mu);
  last = --job->refs == 0;
  pthread_mutex_unlock(&j->mu);
  if (last)
    sv__job_free(job);
}

void sv__jobs_remove(sv_jobs *j, sv_job *job) {
  char *id = sm_strdup(job->id);

  pthread_mutex_lock(&j->mu);
  if (!job->gone)
    unlink_job(j, job);
  if (id) {
    sm_free(j->ended[j->ended_pos]);
    j->ended[j->ended_pos] = id;
    j->ended_pos = (j->ended_pos + 1) % j->ended_cap;
  }
  pthread_mutex_unlock(&j->mu);
}

int sv__jobs_ended(sv_jobs *j, const char *id) {
  int found = 0;

  pthread_mutex_lock(&j->mu);
  for (int i = 0; i < j->ended_cap && !found; i++)
    found = j->ended[i] && strcmp(j->ended[i], id) == 0;
  pthread_mutex_unlock(&j->mu);
  return found;
}

int sv__jobs_count(sv_jobs *j) {
  int n;

  pthread_mutex_lock(&j->mu);
  n = j->n;
  pthread_mutex_unlock(&j->mu);
  return n;
}

int sv__jobs_followed(sv_jobs *j) {
  int n;

  pthread_mutex_lock(&j->mu);
  n = j->n_followed;
  pthread_mutex_unlock(&j->mu);
  return n;
}

void sv__jobs_touch(sv_jobs *j, sv_job *job) {
  pthread_mutex_lock(&j->mu);
  if (!job->gone) {
    lru_unlink(j, job);
    job->lru_next = j->lru_head;
    if (j->lru_head)
      j->lru_head->lru_prev = job;
    j->lru_head = job;
    if (j->lru_tail == NULL)
      j->lru_tail = job;
    job->in_lru = 1;
    j->n_followed++;
  }
  while (j->n_followed > j->max_followed && j->lru_tail) {
    sv_job *v = j->lru_tail;
    lru_unlink(j, v);
    v->refs++;
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_lock(&v->mu);
    sm_tracker_free(v->trk);
    v->trk = NULL;
    sv__pin_close(&v->pin);
    pthread_mutex_unlock(&v->mu);
    sv__jobs_put(j, v);
    pthread_mutex_lock(&j->mu);
  }
  pthread_mutex_unlock(&j->mu);
}

/* ==== The journal ==== */

void sv__job_said_json(const sv_job *job, int exact, sm_jw *w) {
  sm_jw_key(w, "metadata");
  if (job->has_meta)
    sm_meta_write_json(&job->meta, w);
  else
    sm_jw_null(w);
  sm_jw_key(w, "said");
  if (!job->said) {
    sm_jw_null(w);
    return;
  }
  sm_jw_obj_begin(w);
  sm_jw_kv_num(w, "estimate_s", job->has_est ? job->est_s : NAN);
  sm_jw_kv_str(w, "fallback_reason", job->has_est ? NULL : job->fallback);
  if (exact) {
    sm_jw_kv_num(w, "best_score", job->best_score);
    sm_jw_kv_int(w, "n", job->n_matches);
    sm_jw_kv_num(w, "advise_ms", job->advise_ms);
  } else {
    sm_jw_kv_num(w, "best_score", round(job->best_score * 1e6) / 1e6);
    sm_jw_kv_num(w, "advise_ms", round(job->advise_ms * 10) / 10);
  }
  sm_jw_obj_end(w);
}

/* The job as one journal line; caller holds job->mu. */
static int job_line(const sv_job *job, const char *op, sm_buf *b) {
  sm_jw w;

  sm_jw_init(&w, b);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "op", op);
  sm_jw_kv_str(&w, "id", job->id);
  if (strcmp(op, "end") != 0) {
    sm_jw_kv_str(&w, "repo", job->repo);
    sm_jw_kv_str(&w, "log", job->log);
    sm_jw_kv_str(&w, "user", job->user);
    sm_jw_kv_str(&w, "name", job->name);
    sm_jw_kv_str(&w, "gpu_type", job->gpu_type);
    sm_jw_kv_str(&w, "scheduler", job->scheduler);
    sm_jw_key(&w, "nodes");
    sm_jw_arr_begin(&w);
    for (int i = 0; i < job->n_nodes; i++)
      sm_jw_str(&w, job->nodes[i]);
    sm_jw_arr_end(&w);
    sm_jw_kv_int(&w, "gpus", job->gpus);
    sm_jw_kv_num(&w, "submit_time", job->submit_time);
    sm_jw_kv_num(&w, "registered", job->registered);
    sv__job_said_json(job, 1, &w);
  }
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0)
    return SM_ENOMEM;
  return sm_buf_addc(b, '\n');
}

void sv__journal_job(sm_serve *sv, sv_job *job, const char *op) {
  sm_buf b;
  sm_err err = {0};
  int compact;

  if (sv->jobs.journal == NULL)
    return;
  sm_buf_init(&b, (size_t)4 << 20);
  pthread_mutex_lock(&job->mu);
  if (job_line(job, op, &b) != 0) {
    pthread_mutex_unlock(&job->mu);
    sm_buf_release(&b);
    sv__log(sv, SM_SERVE_ERROR, "journal: job %s: cannot format", job->id);
    return;
  }
  pthread_mutex_unlock(&job->mu);
  pthread_mutex_lock(&sv->jobs.jmu);
  if (sm_append_line(sv->jobs.journal, b.data, b.len, &err) != 0)
    sv__log(sv, SM_SERVE_ERROR, "journal: %s", err.msg);
  else
    sv->jobs.journal_lines++;
  compact =
      sv->jobs.journal_lines > 4 * (long)sv__jobs_count(&sv->jobs) + 10000;
  pthread_mutex_unlock(&sv->jobs.jmu);
  sm_buf_release(&b);
  if (compact && sv__journal_compact(sv, &err) != 0)
    sv__log(sv, SM_SERVE_ERROR, "journal: %s", err.msg);
}

static char *dup_or_null(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

/* Applies one journal line. */
static void replay_line(sm_serve *sv, const char *line, size_t n) {
  cJSON *o = cJSON_ParseWithLength(line, n), *v;
  const char *op = o ? sv__jstr(o, "op") : NULL;
  const char *id = o ? sv__jstr(o, "id") : NULL;
  sv_job *job;

  if (op == NULL || id == NULL || !sv__id_ok(id)) {
    cJSON_Delete(o);
    return;
  }
  if (strcmp(op, "end") == 0) {
    job = sv__jobs_get(&sv->jobs, id);
    if (job) {
      sv__jobs_remove(&sv->jobs, job);
      sv__jobs_put(&sv->jobs, job);
    }
    cJSON_Delete(o);
    return;
  }
  job = sv__job_new(id);
  if (job == NULL) {
    cJSON_Delete(o);
    return;
  }
  job->repo = dup_or_null(sv__jstr(o, "repo"));
  job->log = dup_or_null(sv__jstr(o, "log"));
  job->user = dup_or_null(sv__jstr(o, "user"));
  job->name = dup_or_null(sv__jstr(o, "name"));
  job->gpu_type = dup_or_null(sv__jstr(o, "gpu_type"));
  job->scheduler = dup_or_null(sv__jstr(o, "scheduler"));
  v = cJSON_GetObjectItemCaseSensitive(o, "nodes");
  if (cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
    int k = cJSON_GetArraySize(v);
    job->nodes = sm_calloc((size_t)k, sizeof(char *));
    for (cJSON *e = v->child; job->nodes && e; e = e->next)
      if (cJSON_IsString(e))
        job->nodes[job->n_nodes++] = sm_strdup(e->valuestring);
  }
  if (!isnan(sv__jnum(o, "gpus")))
    job->gpus = (int)sv__jnum(o, "gpus");
  job->submit_time = sv__jnum(o, "submit_time");
  job->registered = sv__jnum(o, "registered");
  v = cJSON_GetObjectItemCaseSensitive(o, "metadata");
  if (cJSON_IsObject(v)) {
    char *t = cJSON_PrintUnformatted(v);
    if (t && sm_meta_from_json(&job->meta, t, strlen(t), NULL) == 0)
      job->has_meta = 1;
    cJSON_free(t);
  }
  v = cJSON_GetObjectItemCaseSensitive(o, "said");
  if (cJSON_IsObject(v)) {
    const char *fb = sv__jstr(v, "fallback_reason");
    job->said = 1;
    job->est_s = sv__jnum(v, "estimate_s");
    job->has_est = !isnan(job->est_s);
    snprintf(job->fallback, sizeof(job->fallback), "%s", fb ? fb : "");
    job->best_score = sv__jnum(v, "best_score");
    job->n_matches = isnan(sv__jnum(v, "n")) ? 0 : (int)sv__jnum(v, "n");
    job->advise_ms = sv__jnum(v, "advise_ms");
  }
  cJSON_Delete(o);
  sv__jobs_add(&sv->jobs, job);
}

/* Rewrites the journal with one line per live job.  Appends wait. */
int sv__journal_compact(sm_serve *sv, sm_err *err) {
  sv_jobs *j = &sv->jobs;
  char tmp[4096];
  FILE *out;
  sv_job **all;
  long n_live = 0;
  int ok;

  if (j->journal == NULL)
    return 0;
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", j->journal) >= (int)sizeof(tmp))
    return sm_err_set(err, SM_EINVAL, "%s: path too long", j->journal);
  pthread_mutex_lock(&j->jmu);
  out = fopen(tmp, "w");
  if (out == NULL) {
    pthread_mutex_unlock(&j->jmu);
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", tmp,
                      strerror(errno));
  }
  /* The live jobs, each with a reference: the table is not held while a
   * job is busy. */
  pthread_mutex_lock(&j->mu);
  all = sm_calloc((size_t)j->n + 1, sizeof(*all));
  for (size_t i = 0; all && i < j->nb; i++)
    for (sv_job *p = j->b[i]; p; p = p->next) {
      p->refs++;
      all[n_live++] = p;
    }
  pthread_mutex_unlock(&j->mu);
  for (long i = 0; i < n_live; i++) {
    sm_buf b;
    sm_buf_init(&b, (size_t)4 << 20);
    pthread_mutex_lock(&all[i]->mu);
    if (job_line(all[i], "register", &b) == 0)
      fwrite(b.data, 1, b.len, out);
    pthread_mutex_unlock(&all[i]->mu);
    sm_buf_release(&b);
    sv__jobs_put(j, all[i]);
  }
  sm_free(all);
  ok = fflush(out) == 0 && fsync(fileno(out)) == 0;
  ok &= fclose(out) == 0;
  if (!ok || rename(tmp, j->journal) != 0) {
    int e = errno;
    unlink(tmp);
    pthread_mutex_unlock(&j->jmu);
    return sm_err_set(err, sm_err_from_errno(e), "%s: cannot rewrite: %s",
                      j->journal, strerror(e));
  }
  j->journal_lines = n_live;
  j->journal_live = n_live;
  pthread_mutex_unlock(&j->jmu);
  return 0;
}

int sv__journal_replay(sm_serve *sv, sm_err *err) {
  sv_jobs *j = &sv->jobs;
  sm_rfile f;
  sm_fwdlines fl;
  const char *line;
  size_t len;
  int rc, trunc;

  if (j->journal == NULL || access(j->journal, F_OK) != 0)
    return 0;
  rc = sm_rfile_open(&f, j->journal, err);
  if (rc != 0)
    return rc;
  rc = sm_fwdlines_init(&fl, &f, 0, UINT64_MAX, (size_t)4 << 20, err);
  if (rc != 0) {
    sm_rfile_close(&f);
    return rc;
  }
  while ((rc = sm_fwdlines_next(&fl, &line, &len, NULL, &trunc, err)) == 1)
    if (!trunc)
      replay_line(sv, line, len);
  sm_fwdlines_release(&fl);
  sm_rfile_close(&f);
  if (rc < 0)
    return rc;
  return sv__journal_compact(sv, err);
}
