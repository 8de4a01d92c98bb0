/* cmd_report.c - `schedmate report`: the shadow report (the reference
 * design's gray rollout): what SchedMate said at submission against what
 * happened, for the ended jobs of a history, with audit logs for answer
 * latencies and would-be evictions (include/schedmate/sm_serve.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "cli.h"
#include "schedmate/sm_serve.h"

#define MAX_AUDIT 16

static const char usage_text[] =
    "usage: schedmate report --db URI [--audit FILE]... [--html OUT]\n"
    "           [--json] [--profile-s S] [--title TEXT]\n"
    "\n"
    "Compares what SchedMate said with what happened, for every ended job\n"
    "whose record carries an outcome (written back by `schedmate serve` or\n"
    "`schedmate slurm`): the estimate error (CDF by end state), fallback\n"
    "rates and reasons, would-be evictions and their measured slowdowns,\n"
    "diagnoses against what happened next, GPU-hours of profiling saved,\n"
    "and the latency of each channel (from the audit logs).\n"
    "\n"
    "  --db URI       the history (SQLite file or redis://host:port/db)\n"
    "  --audit FILE   an audit log of serve or the Slurm agent (repeatable)\n"
    "  --html OUT     write a self-contained HTML page with SVG plots\n"
    "  --json         print the figures as one JSON object\n"
    "  --profile-s S  profiling run a job without an estimate would need\n"
    "                 (seconds on its GPUs; default 300)\n"
    "  --title TEXT   the page title\n"
    "Without --json a summary is printed.  Exit status: 0, 2 bad usage or\n"
    "an unreadable store or audit log.\n";

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The figures for people. */
static void summary(const char *db, const char *html, const sm_buf *js) {
  cJSON *o = cJSON_ParseWithLength(js->data ? js->data : "", js->len);
  const cJSON *est, *fb, *ev, *dg, *pr, *lat, *x;

  if (o == NULL)
    return;
  est = cJSON_GetObjectItemCaseSensitive(o, "estimates");
  fb = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(o, "fallbacks"), "ended_jobs");
  ev = cJSON_GetObjectItemCaseSensitive(o, "evictions");
  dg = cJSON_GetObjectItemCaseSensitive(o, "diagnoses");
  pr = cJSON_GetObjectItemCaseSensitive(o, "profiling");
  lat = cJSON_GetObjectItemCaseSensitive(o, "latency");
  printf("history %s: %.0f records, %.0f with an outcome, %.0f answered at "
         "submission\n",
         db, num(o, "records"), num(o, "with_outcome"), num(o, "advised"));
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(est, "by_end_state"))
      printf("  estimate error, %-16s %5.0f jobs, median |error| %5.1f %%, p90 "
             "%5.1f %%\n",
             x->string, num(x, "n"), 100 * num(x, "median_abs_rel_error"),
             100 * num(x, "p90_abs_rel_error"));
  printf("  fallbacks: %.0f of %.0f ended jobs", num(fb, "fallback"),
         num(fb, "n"));
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(fb, "by_reason"))
      printf(", %s %.0f", x->string, x->valuedouble);
  printf("\n  would-be evictions: %.0f", num(ev, "n"));
  if (num(ev, "n") > 0)
    printf(" (median slowdown %.0f %%)", 100 * num(ev, "median_slowdown"));
  printf("\n");
  cJSON_ArrayForEach(x, dg)
      printf("  diagnosed %-15s %4.0f failed runs: %.0f restarted and "
             "completed, %.0f restarted and failed, %.0f not restarted\n",
             x->string, num(x, "n"), num(x, "restarted_completed"),
             num(x, "restarted_failed"), num(x, "not_restarted"));
  printf("  profiling saved: %.1f GPU-hours (%.0f jobs with an estimate x "
         "%.0f s)\n",
         num(pr, "gpu_hours_saved"), num(pr, "jobs_with_estimate"),
         num(pr, "profile_s"));
  cJSON_ArrayForEach(x, lat)
      printf("  latency %-7s %6.0f answers: p50 %.2f ms, p99 %.2f ms, max %.2f "
             "ms\n",
             x->string, num(x, "n"), num(x, "p50_ms"), num(x, "p99_ms"),
             num(x, "max_ms"));
  if (html)
    printf("report: %s\n", html);
  cJSON_Delete(o);
}

int cmd_report(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, 'd'},
      {"audit", required_argument, NULL, 'a'},
      {"html", required_argument, NULL, 'o'},
      {"json", no_argument, NULL, 'j'},
      {"profile-s", required_argument, NULL, 'p'},
      {"title", required_argument, NULL, 't'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *db = NULL, *html_path = NULL, *audits[MAX_AUDIT];
  sm_shadow_opts so = {0};
  int json = 0, c, rc = 0, n_audit = 0;
  sm_buf js, html;
  sm_store *st;
  sm_err err = {0};

  optind = 0;
  opterr = 0;
  while (rc == 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'd':
      db = optarg;
      break;
    case 'a':
      if (n_audit == MAX_AUDIT)
        rc = cli_usage("report", "at most %d --audit files", MAX_AUDIT);
      else
        audits[n_audit++] = optarg;
      break;
    case 'o':
      html_path = optarg;
      break;
    case 'j':
      json = 1;
      break;
    case 'p':
      rc = cli_parse_num("report", "--profile-s", optarg, &so.profile_s);
      if (rc == 0 && !(so.profile_s > 0))
        rc = cli_usage("report", "--profile-s must be > 0");
      break;
    case 't':
      so.title = optarg;
      break;
    case 'h':
      fputs(usage_text, stdout);
      return CLI_OK;
    case ':':
      return cli_usage("report", "%s needs a value", argv[optind - 1]);
    default:
      return cli_usage("report", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (rc != 0)
    return rc;
  if (optind < argc)
    return cli_usage("report", "unexpected argument '%s'", argv[optind]);
  if (db == NULL)
    return cli_usage("report", "--db URI is required");
  st = sm_store_open(db, 0, 0, &err);
  if (st == NULL)
    return cli_error("report", CLI_USAGE, "%s", err.msg);
  so.audit_paths = audits;
  so.n_audit = n_audit;
  sm_buf_init(&js, 0);
  sm_buf_init(&html, 0);
  rc = sm_shadow_report(st, &so, &js, html_path ? &html : NULL, &err);
  sm_store_close(st);
  if (rc != 0) {
    sm_buf_release(&js);
    sm_buf_release(&html);
    return cli_error("report", CLI_USAGE, "%s", err.msg);
  }
  if (html_path) {
    FILE *f = fopen(html_path, "w");
    int ok = f != NULL && fwrite(html.data, 1, html.len, f) == html.len;
    if (f != NULL && fclose(f) != 0)
      ok = 0;
    if (!ok) {
      sm_buf_release(&js);
      sm_buf_release(&html);
      return cli_error("report", CLI_USAGE, "%s: cannot write: %s", html_path,
                       strerror(errno));
    }
  }
  if (json) {
    rc = cli_emit(&js);
  } else {
    summary(db, html_path, &js);
    rc = fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
  }
  sm_buf_release(&js);
  sm_buf_release(&html);
  return rc;
}
