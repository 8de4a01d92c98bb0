/* base.c - what every part of the service shares, at the bottom of the
 * folder: the endpoint and channel name tables, answers and error bodies,
 * the JSON member readers, the wall clock, the log and the frame of an
 * audit line.  It calls no other file of src/serve; every other file may
 * call it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serve/serve_int.h"

/* ==== Endpoints and channels ==== */

static const char *const ep_names[EP__COUNT] = {
    "healthz", "metrics",  "advise", "jobs",     "job",
    "end",     "progress", "track",  "diagnose", "other"};

const char *const sv__channel_names[SM_SERVE_NCHANNELS] = {"submit", "run",
                                                           "exit"};

const char *sv__ep_name(int ep) {
  return ep >= 0 && ep < EP__COUNT ? ep_names[ep] : "other";
}

int sv__ep_channel(int ep) {
  switch (ep) {
  case EP_ADVISE:
  case EP_REGISTER:
    return SM_SERVE_SUBMIT;
  case EP_JOB:
  case EP_PROGRESS:
  case EP_TRACK:
    return SM_SERVE_RUN;
  case EP_END:
  case EP_DIAGNOSE:
    return SM_SERVE_EXIT;
  default:
    return -1;
  }
}

/* ==== Answers ==== */

void sv__result_init(sv_result *r) {
  memset(r, 0, sizeof(*r));
  sm_buf_init(&r->body, 0);
  r->retry_after = -1;
  r->estimate_s = NAN;
  r->best_score = NAN;
}

void sv__result_release(sv_result *r) {
  sm_buf_release(&r->body);
  sv__result_init(r);
}

int sv__error(sv_result *r, int status, const char *code, const char *fmt,
              ...) {
  va_list ap;
  sm_jw w;

  va_start(ap, fmt);
  vsnprintf(r->note, sizeof(r->note), fmt, ap);
  va_end(ap);
  sm_buf_reset(&r->body);
  sm_jw_init(&w, &r->body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "error", code);
  sm_jw_kv_str(&w, "message", r->note);
  sm_jw_kv_int(&w, "status", status);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0)
    sm_buf_reset(&r->body);
  r->status = status;
  r->decision = status == 403 ? "refused" : "error";
  if (status == 503 && r->retry_after < 0)
    r->retry_after = 1;
  return status;
}

/* ==== JSON ==== */

const char *sv__jstr(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

double sv__jnum(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* ==== Clock and log ==== */

double sv__wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sv__log(sm_serve *sv, int level, const char *fmt, ...) {
  char msg[1024];
  va_list ap;

  if (sv->o.log == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  sv->o.log(sv->o.log_ud, level, msg);
}

/* ==== Audit lines ==== */

void sv__audit_begin(sm_buf *b, size_t cap, sm_jw *w) {
  char ts[32];
  double now = sv__wall();
  time_t t = (time_t)now;
  struct tm tm;

  gmtime_r(&t, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  sm_buf_init(b, cap);
  sm_jw_init(w, b);
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "time", ts);
  sm_jw_kv_num(w, "epoch", floor(now * 1000) / 1000);
  sm_jw_kv_str(w, "service", "serve");
}

void sv__audit_end(sm_serve *sv, sm_buf *b, sm_jw *w) {
  sm_err err = {0};

  sm_jw_obj_end(w);
  if (sm_jw_finish(w) == 0 && sm_buf_addc(b, '\n') == 0 &&
      sm_append_line(sv->o.audit_path, b->data, b->len, &err) != 0)
    sv__log(sv, SM_SERVE_ERROR, "audit: %s", err.msg);
  sm_buf_release(b);
}
