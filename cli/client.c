/* client.c - `--server URL|unix:PATH` on advise, track and diagnose: the
 * same question asked of a running `schedmate serve` instead of being
 * answered in this process.  Paths are made absolute here (the server
 * does not share our working directory); with --json the server's answer
 * is printed as it came, otherwise it is turned into the command's own
 * text.  The bearer token for a TCP server comes from the file named by
 * SCHEDMATE_TOKEN_FILE (or the variable SCHEDMATE_TOKEN); the whole
 * exchange is bounded by SCHEDMATE_SERVER_TIMEOUT_MS (30000). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cli.h"
#include "schedmate/sm_serve.h"

/* ==== The exchange ==== */

static int token(const char *cmd, char **out) {
  const char *file = getenv("SCHEDMATE_TOKEN_FILE");
  const char *tok = getenv("SCHEDMATE_TOKEN");
  sm_err err = {0};
  size_t len;

  *out = NULL;
  if (file && *file) {
    if (sm_file_read_all(file, 4096, out, &len, &err) != 0)
      return cli_error(cmd, CLI_USAGE, "SCHEDMATE_TOKEN_FILE: %s", err.msg);
    while (len > 0 && strchr(" \t\r\n", (*out)[len - 1]))
      (*out)[--len] = '\0';
  } else if (tok && *tok) {
    *out = sm_strdup(tok);
  }
  return 0;
}

/* Sends one request; a transport failure or an HTTP error is printed and
 * returns CLI_USAGE; r holds a 2xx answer on 0. */
static int call(const char *cmd, const char *server, const char *method,
                const char *path, const sm_buf *body, sm_http_resp *r) {
  const char *tm = getenv("SCHEDMATE_SERVER_TIMEOUT_MS");
  int timeout = tm && atoi(tm) > 0 ? atoi(tm) : 30000, rc;
  sm_http_conn *c;
  sm_err err = {0};
  char *tok;

  memset(r, 0, sizeof(*r));
  if (token(cmd, &tok) != 0)
    return CLI_USAGE;
  c = sm_http_conn_new(server, tok, timeout, &err);
  sm_free(tok);
  if (c == NULL)
    return cli_usage(cmd, "--server: %s", err.msg);
  rc = sm_http_request(c, method, path, body ? body->data : NULL,
                       body ? body->len : 0, r, &err);
  sm_http_conn_free(c);
  if (rc != 0)
    return cli_error(cmd, CLI_USAGE, "server %s", err.msg);
  if (r->status < 200 || r->status > 299) {
    cJSON *o =
        cJSON_ParseWithLength(r->body.data ? r->body.data : "", r->body.len);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    cli_error(cmd, CLI_USAGE, "server %s: %d %s: %s", server, r->status,
              cJSON_IsString(e) ? e->valuestring : "error",
              cJSON_IsString(m) ? m->valuestring : sm_buf_str(&r->body));
    cJSON_Delete(o);
    sm_http_resp_release(r);
    return CLI_USAGE;
  }
  return 0;
}

/* Parses the answer's JSON object or prints why not. */
static cJSON *answer(const char *cmd, const sm_http_resp *r) {
  cJSON *o =
      cJSON_ParseWithLength(r->body.data ? r->body.data : "", r->body.len);

  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    cli_error(cmd, CLI_USAGE, "the server's answer is not a JSON object");
    return NULL;
  }
  return o;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* An absolute version of a path the user gave. */
static int absolute(const char *cmd, const char *what, const char *p, char *out,
                    size_t cap) {
  if (p[0] == '/') {
    snprintf(out, cap, "%s", p);
    return 0;
  }
  if (realpath(p, out) == NULL || strlen(out) >= cap)
    return cli_error(cmd, CLI_USAGE, "%s %s: cannot make the path absolute",
                     what, p);
  return 0;
}

/* ==== advise ==== */

int cli_client_advise(const char *server, const cli_job *job, int json,
                      int top_k, double threshold, double half_life) {
  const char *cmd = "advise";
  sm_buf body;
  sm_jw w;
  sm_http_resp r;
  cJSON *o;
  char repo[PATH_MAX];
  int rc;

  sm_buf_init(&body, 0);
  sm_jw_init(&w, &body);
  sm_jw_obj_begin(&w);
  if (job->meta_file) {
    sm_err err = {0};
    char *text;
    size_t len;
    cJSON *m;
    if (sm_file_read_all(job->meta_file, (size_t)4 << 20, &text, &len, &err))
      return cli_error(cmd, CLI_USAGE, "%s", err.msg);
    m = cJSON_ParseWithLength(text, len);
    sm_free(text);
    if (!cJSON_IsObject(m)) {
      cJSON_Delete(m);
      sm_buf_release(&body);
      return cli_error(cmd, CLI_USAGE, "%s: not a JSON object", job->meta_file);
    }
    text = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    sm_jw_key(&w, "metadata");
    sm_jw_raw(&w, text ? text : "null");
    cJSON_free(text);
  } else {
    if (absolute(cmd, "--repo", job->repo, repo, sizeof(repo)) != 0) {
      sm_buf_release(&body);
      return CLI_USAGE;
    }
    sm_jw_kv_str(&w, "repo", repo);
    if (job->cwd)
      sm_jw_kv_str(&w, "cwd", job->cwd);
    if (job->n_configs) {
      sm_jw_key(&w, "configs");
      sm_jw_arr_begin(&w);
      for (int i = 0; i < job->n_configs; i++)
        sm_jw_str(&w, job->configs[i]);
      sm_jw_arr_end(&w);
    }
    sm_jw_key(&w, "command");
    sm_jw_arr_begin(&w);
    for (int i = 0; i < job->argc; i++)
      sm_jw_str(&w, job->argv[i]);
    sm_jw_arr_end(&w);
  }
  sm_jw_kv_int(&w, "top_k", top_k);
  sm_jw_kv_num(&w, "threshold", threshold);
  if (half_life > 0)
    sm_jw_kv_num(&w, "half_life_s", half_life);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0) {
    sm_buf_release(&body);
    return cli_error(cmd, CLI_USAGE, "out of memory");
  }
  rc = call(cmd, server, "POST", "/v1/advise", &body, &r);
  sm_buf_release(&body);
  if (rc != 0)
    return rc;
  if (json) {
    rc = cli_emit(&r.body);
    sm_http_resp_release(&r);
    return rc;
  }
  o = answer(cmd, &r);
  sm_http_resp_release(&r);
  if (o == NULL)
    return CLI_USAGE;
  {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "estimate");
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "matches");
    const cJSON *x;
    printf("job: %s",
           str(m, "model_name") ? str(m, "model_name") : "(model unknown)");
    if (str(m, "dataset"))
      printf(" on %s", str(m, "dataset"));
    if (!isnan(num(m, "gpus")))
      printf(", %g GPUs", num(m, "gpus"));
    printf("\n");
    cJSON_ArrayForEach(x, ms) {
      printf("  match %-24s score %.3f  %-16s %8.0f s", str(x, "job_id"),
             num(x, "score"), str(x, "end_state") ? str(x, "end_state") : "",
             num(x, "duration_s"));
      if (!isnan(num(x, "sm_util")))
        printf("  util %.0f %%", num(x, "sm_util"));
      printf("\n");
    }
    if (cJSON_IsObject(e)) {
      printf("estimate: %.0f s (mean of %.0f completed, stdev %.0f s, "
             "weighted %.0f s)",
             num(e, "duration_s"), num(e, "n"), num(e, "stdev"),
             num(e, "weighted_duration_s"));
      if (!isnan(num(e, "sm_util")))
        printf(", SM util %.1f %%", num(e, "sm_util"));
      if (num(e, "p_early_end") > 0)
        printf(", %.0f %% of matches ended early", 100 * num(e, "p_early_end"));
      printf("\n");
    } else {
      printf("fallback: %s (%s)\n",
             str(o, "fallback_reason") ? str(o, "fallback_reason") : "?",
             str(o, "fallback_detail") ? str(o, "fallback_detail") : "");
    }
  }
  cJSON_Delete(o);
  return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
}

/* ==== track ==== */

static void print_track(const cJSON *o) {
  const cJSON *tp = cJSON_GetObjectItemCaseSensitive(o, "throughput");
  const char *st = str(o, "status");

  if (st == NULL || strcmp(st, "ok") != 0) {
    printf("status:      missing (no training progress in the log)\n"
           "scanned:     %.0f lines, %.0f bytes\n",
           num(o, "lines_scanned"), num(o, "bytes_read"));
    return;
  }
  printf("status:      ok\n");
  if (!isnan(num(o, "step")) && !isnan(num(o, "total_steps")))
    printf("step:        %.0f / %.0f\n", num(o, "step"), num(o, "total_steps"));
  else if (!isnan(num(o, "step")))
    printf("step:        %.0f\n", num(o, "step"));
  else
    printf("step:        -\n");
  printf(isnan(num(o, "epoch")) ? "epoch:       -\n" : "epoch:       %g\n",
         num(o, "epoch"));
  printf(isnan(num(o, "loss")) ? "loss:        -\n" : "loss:        %.6g\n",
         num(o, "loss"));
  printf(isnan(num(o, "lr")) ? "lr:          -\n" : "lr:          %.6g\n",
         num(o, "lr"));
  printf(isnan(num(o, "step_time_s")) ? "step time:   -\n"
                                      : "step time:   %.6g s\n",
         num(o, "step_time_s"));
  if (cJSON_IsObject(tp))
    printf("throughput:  %.6g %s\n", num(tp, "value"),
           str(tp, "unit") ? str(tp, "unit") : "");
  else
    printf("throughput:  -\n");
  printf("samples:     %.0f  (%.0f lines, %.0f bytes read)\n",
         num(o, "samples"), num(o, "lines_scanned"), num(o, "bytes_read"));
  printf("format:      %s\n", str(o, "format") ? str(o, "format") : "");
}

int cli_client_track(const char *server, const char *log, const char *job_id,
                     int json) {
  const char *cmd = "track";
  sm_buf body;
  sm_http_resp r;
  char path[PATH_MAX + 64];
  cJSON *o;
  int rc;

  sm_buf_init(&body, 0);
  if (job_id) {
    /* Job ids are plain ASCII; anything else is refused by the server. */
    snprintf(path, sizeof(path), "/v1/jobs/%s/progress", job_id);
    rc = call(cmd, server, "GET", path, NULL, &r);
  } else {
    char abs[PATH_MAX];
    sm_jw w;
    if (absolute(cmd, "LOG", log, abs, sizeof(abs)) != 0)
      return CLI_USAGE;
    sm_jw_init(&w, &body);
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "log", abs);
    sm_jw_obj_end(&w);
    rc = sm_jw_finish(&w) == 0
             ? call(cmd, server, "POST", "/v1/track", &body, &r)
             : cli_error(cmd, CLI_USAGE, "out of memory");
  }
  sm_buf_release(&body);
  if (rc != 0)
    return rc;
  if (json) {
    rc = cli_emit(&r.body);
    sm_http_resp_release(&r);
    return rc;
  }
  o = answer(cmd, &r);
  sm_http_resp_release(&r);
  if (o == NULL)
    return CLI_USAGE;
  print_track(o);
  cJSON_Delete(o);
  return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
}

/* ==== diagnose ==== */

static void print_diagnosis(const cJSON *o) {
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "evidence");
  const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan");
  const cJSON *x;
  const char *comp = str(o, "component");
  int k = 0;

  if (str(o, "status") == NULL || strcmp(str(o, "status"), "failure") != 0) {
    printf("no failure found (%.0f lines examined)\n",
           num(o, "lines_examined"));
    return;
  }
  printf("first error: line %.0f\n", num(o, "first_error_line"));
  printf("category:    %s", str(o, "category") ? str(o, "category") : "?");
  if (comp && strcmp(comp, "none") != 0)
    printf(" / %s", comp);
  printf(" (confidence %.2f)\n", num(o, "confidence"));
  printf("root cause:  %s\n",
         str(o, "root_cause") ? str(o, "root_cause") : "?");
  printf("reason:      %s\n", str(o, "reason") ? str(o, "reason") : "?");
  printf("retryable:   %s\n",
         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "retryable")) ? "yes"
                                                                        : "no");
  printf("evidence:\n");
  cJSON_ArrayForEach(x, ev) {
    printf("  %7.0f %-8s| %.160s\n", num(x, "line"),
           str(x, "role") ? str(x, "role") : "",
           str(x, "text") ? str(x, "text") : "");
  }
  if (cJSON_IsObject(plan)) {
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(plan, "steps");
    const cJSON *gates = cJSON_GetObjectItemCaseSensitive(plan, "gates");
    printf("plan (%s):\n",
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(plan, "executable"))
               ? "executable"
               : "not executable");
    cJSON_ArrayForEach(x, steps) {
      const cJSON *c;
      printf("  %d. %s", ++k, str(x, "action") ? str(x, "action") : "?");
      if (str(x, "target"))
        printf(" %s", str(x, "target"));
      printf("\n");
      cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(x, "commands")) {
        if (cJSON_IsString(c))
          printf("       $ %s\n", c->valuestring);
      }
    }
    cJSON_ArrayForEach(x, gates) {
      if (cJSON_IsString(x))
        printf("  gate: %s\n", x->valuestring);
    }
  }
}

int cli_client_diagnose(const char *server, const char *log, int context,
                        int json) {
  const char *cmd = "diagnose";
  char abs[PATH_MAX];
  sm_buf body;
  sm_http_resp r;
  sm_jw w;
  cJSON *o;
  int rc, failure;

  if (absolute(cmd, "LOG", log, abs, sizeof(abs)) != 0)
    return CLI_USAGE;
  sm_buf_init(&body, 0);
  sm_jw_init(&w, &body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "log", abs);
  if (context > 0)
    sm_jw_kv_int(&w, "context", context);
  sm_jw_obj_end(&w);
  rc = sm_jw_finish(&w) == 0
           ? call(cmd, server, "POST", "/v1/diagnose", &body, &r)
           : cli_error(cmd, CLI_USAGE, "out of memory");
  sm_buf_release(&body);
  if (rc != 0)
    return rc;
  o = answer(cmd, &r);
  if (o == NULL) {
    sm_http_resp_release(&r);
    return CLI_USAGE;
  }
  failure = str(o, "status") && strcmp(str(o, "status"), "failure") == 0;
  if (json)
    rc = cli_emit(&r.body);
  else {
    print_diagnosis(o);
    rc = fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
  }
  sm_http_resp_release(&r);
  cJSON_Delete(o);
  return rc == CLI_OK && failure ? CLI_CHECK : rc;
}
