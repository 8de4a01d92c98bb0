/* cmd_diagnose.c - `schedmate diagnose`: the first real error of a failed
 * job's log, its class, and a recovery plan behind safety gates. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"
#include "schedmate/sm_failure.h"

#define MAX_SIGFILES 16

static const char usage_text[] =
    "usage: schedmate diagnose [--json] [--context N] [--chunk-lines N]\n"
    "                          [--no-locator | --tail N]\n"
    "                          [--signatures FILE]... [--threshold X]\n"
    "                          [--state FILE] [--audit FILE] [--job ID]\n"
    "                          [--node NODE] [--max-retries N]\n"
    "                          [--isolation-quota N] [--quota-window S]\n"
    "                          [--shadow] [--server S] LOG\n"
    "\n"
    "Finds the first real error in the log of a job that ended badly (not\n"
    "the last line of the cascade), says whether it is an infrastructure\n"
    "fault (and which component: gpu, nvlink, network, node, storage), a\n"
    "framework or environment problem, or the job's own error, and plans\n"
    "the recovery.  Only an infrastructure fault with a located component\n"
    "and enough confidence gets automatic steps (diagnose, isolate the\n"
    "node, request a replacement, restart from the last checkpoint);\n"
    "framework and user errors are reported and never retried.\n"
    "\n"
    "Search:\n"
    "  --chunk-lines N     lines per chunk of the bisecting locator (64)\n"
    "  --context N         lines of context either side of the cause (200)\n"
    "  --no-locator        scan the whole log line by line (ablation)\n"
    "  --tail N            look only at the last N lines (ablation)\n"
    "  --signatures FILE   load extra signatures (tried before the built-in\n"
    "                      ones; may be repeated; format: docs/failure.md)\n"
    "Plan:\n"
    "  --threshold X       least confidence for automatic steps (0.8)\n"
    "  --state FILE        planner state shared across runs: retry counts\n"
    "                      per job, isolations per window\n"
    "  --audit FILE        append every decision as one JSON line\n"
    "  --job ID            job the retry cap counts against (the log path)\n"
    "  --node NODE         node to isolate (default: found in the log)\n"
    "  --max-retries N     automatic restarts per job (2)\n"
    "  --isolation-quota N node isolations per window (2)\n"
    "  --quota-window S    the isolation window in seconds (86400)\n"
    "  --shadow            plan, but mark nothing executable\n"
    "  --now EPOCH         the planner's clock (for tests)\n"
    "Output:\n"
    "  --json              one JSON object (DESIGN.md section 3)\n"
    "  --server S          ask a running `schedmate serve` (unix:PATH or\n"
    "                      http://HOST:PORT; its own planner settings)\n"
    "\n"
    "Exit status: 0 no failure found, 1 a failure was found (the check\n"
    "'did this job end cleanly' failed), 2 bad usage or unreadable input\n"
    "(missing, not a regular file, binary or compressed).\n";

enum {
  OPT_CONTEXT = 1000,
  OPT_CHUNK,
  OPT_NOLOC,
  OPT_TAIL,
  OPT_SIGS,
  OPT_THRESH,
  OPT_STATE,
  OPT_AUDIT,
  OPT_JOB,
  OPT_NODE,
  OPT_RETRIES,
  OPT_QUOTA,
  OPT_WINDOW,
  OPT_SHADOW,
  OPT_NOW,
  OPT_JSON,
  OPT_SERVER,
  OPT_HELP
};

static const struct option longopts[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"context", required_argument, NULL, OPT_CONTEXT},
    {"chunk-lines", required_argument, NULL, OPT_CHUNK},
    {"no-locator", no_argument, NULL, OPT_NOLOC},
    {"tail", required_argument, NULL, OPT_TAIL},
    {"signatures", required_argument, NULL, OPT_SIGS},
    {"threshold", required_argument, NULL, OPT_THRESH},
    {"state", required_argument, NULL, OPT_STATE},
    {"audit", required_argument, NULL, OPT_AUDIT},
    {"job", required_argument, NULL, OPT_JOB},
    {"node", required_argument, NULL, OPT_NODE},
    {"max-retries", required_argument, NULL, OPT_RETRIES},
    {"isolation-quota", required_argument, NULL, OPT_QUOTA},
    {"quota-window", required_argument, NULL, OPT_WINDOW},
    {"shadow", no_argument, NULL, OPT_SHADOW},
    {"now", required_argument, NULL, OPT_NOW},
    {"server", required_argument, NULL, OPT_SERVER},
    {"help", no_argument, NULL, OPT_HELP},
    CLI_LLM_LONGOPTS,
    {NULL, 0, NULL, 0}};

/* Prints a log line for people: control bytes shown as '?', cut. */
static void put_line(const char *s) {
  size_t n = 0;

  for (const unsigned char *p = (const unsigned char *)s; *p && n < 160;
       p++, n++)
    putchar(*p < 0x20 || *p == 0x7f ? '?' : *p);
  if (strlen(s) > 160)
    fputs("...", stdout);
  putchar('\n');
}

static void print_human(const sm_diagnosis *d, const sm_plan *p) {
  if (!d->failure) {
    printf("no failure found (%s: %llu chunks, %llu lines examined)\n", d->mode,
           (unsigned long long)d->chunks_examined,
           (unsigned long long)d->lines_examined);
    return;
  }
  printf("first error: line %lld (byte %llu)\n", d->first_error_line,
         (unsigned long long)d->first_error_offset);
  printf("category:    %s", d->category);
  if (strcmp(d->component, "none") != 0)
    printf(" / %s", d->component);
  printf(" (confidence %.2f", d->confidence);
  if (d->basis)
    printf(", basis: %s", d->basis);
  printf(")\n");
  printf("root cause:  %s\n", d->root_cause ? d->root_cause : "?");
  if (d->node || d->device)
    printf("located:     %s%s%s\n", d->node ? d->node : "",
           d->node && d->device ? ", " : "", d->device ? d->device : "");
  printf("reason:      %s\n", d->reason ? d->reason : "?");
  printf("retryable:   %s\n", p->retryable ? "yes" : "no");
  printf("evidence:\n");
  for (int i = 0; i < d->n_evidence; i++) {
    printf("  %7lld %-8s| ", d->evidence[i].line, d->evidence[i].role);
    put_line(d->evidence[i].text);
  }
  printf("plan (%s):\n", p->executable ? "executable"
                         : p->shadow   ? "shadow, not executed"
                                       : "not executable");
  for (int i = 0; i < p->n_steps; i++) {
    const sm_plan_step *s = &p->steps[i];
    printf("  %d. %s", i + 1, s->action);
    if (s->target)
      printf(" %s", s->target);
    if (s->condition)
      printf(" (if %s)", s->condition);
    putchar('\n');
    for (int k = 0; k < s->n_commands; k++)
      printf("       $ %s\n", s->commands[k]);
  }
  for (int i = 0; i < p->n_gates; i++)
    printf("  gate: %s\n", p->gates[i]);
  printf("(%s: %llu chunks, %llu lines examined, %llu bytes read)\n", d->mode,
         (unsigned long long)d->chunks_examined,
         (unsigned long long)d->lines_examined,
         (unsigned long long)d->bytes_read);
}

int cmd_diagnose(int argc, char **argv) {
  const char *sigfiles[MAX_SIGFILES], *log, *server = NULL;
  int n_sig = 0, json = 0, c, rc;
  sm_diag_opts dopt = {0};
  sm_plan_opts popt = {0};
  sm_diagnosis d, d_plan, d_out;
  cli_llm lo;
  sm_plan p;
  sm_sigdb *db;
  sm_err err = {0};
  long v;

  optind = 0;
  opterr = 0;
  cli_llm_init(&lo);
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
    case 'h':
    case OPT_HELP:
      fputs(usage_text, stdout);
      fputs(cli_llm_help, stdout);
      return CLI_OK;
    case OPT_JSON:
      json = 1;
      break;
    case OPT_CONTEXT:
      if (cli_parse_int("diagnose", "--context", optarg, 1, 100000, &v))
        return CLI_USAGE;
      dopt.context = (int)v;
      break;
    case OPT_CHUNK:
      if (cli_parse_int("diagnose", "--chunk-lines", optarg, 1, 100000, &v))
        return CLI_USAGE;
      dopt.chunk_lines = (int)v;
      break;
    case OPT_NOLOC:
      if (dopt.mode == SM_DIAG_TAIL)
        return cli_usage("diagnose", "--no-locator and --tail exclude each "
                                     "other");
      dopt.mode = SM_DIAG_WHOLE;
      break;
    case OPT_TAIL:
      if (dopt.mode == SM_DIAG_WHOLE)
        return cli_usage("diagnose", "--no-locator and --tail exclude each "
                                     "other");
      if (cli_parse_int("diagnose", "--tail", optarg, 1, 1000000000L, &v))
        return CLI_USAGE;
      dopt.mode = SM_DIAG_TAIL;
      dopt.tail_lines = v;
      break;
    case OPT_SIGS:
      if (n_sig == MAX_SIGFILES)
        return cli_usage("diagnose", "at most %d --signatures files",
                         MAX_SIGFILES);
      sigfiles[n_sig++] = optarg;
      break;
    case OPT_THRESH:
      if (cli_parse_num("diagnose", "--threshold", optarg, &popt.threshold))
        return CLI_USAGE;
      if (popt.threshold <= 0 || popt.threshold > 1)
        return cli_usage("diagnose",
                         "--threshold: expected a number in "
                         "(0, 1], got '%s'",
                         optarg);
      break;
    case OPT_STATE:
      popt.state_path = optarg;
      break;
    case OPT_AUDIT:
      popt.audit_path = optarg;
      break;
    case OPT_JOB:
      popt.job_id = optarg;
      break;
    case OPT_NODE:
      popt.node = optarg;
      break;
    case OPT_RETRIES:
      if (cli_parse_int("diagnose", "--max-retries", optarg, 0, 1000, &v))
        return CLI_USAGE;
      popt.max_retries = v == 0 ? -1 : (int)v;
      break;
    case OPT_QUOTA:
      if (cli_parse_int("diagnose", "--isolation-quota", optarg, 0, 100000, &v))
        return CLI_USAGE;
      popt.isolation_quota = v == 0 ? -1 : (int)v;
      break;
    case OPT_WINDOW:
      if (cli_parse_num("diagnose", "--quota-window", optarg,
                        &popt.quota_window_s))
        return CLI_USAGE;
      if (popt.quota_window_s <= 0)
        return cli_usage("diagnose",
                         "--quota-window: expected seconds > 0, "
                         "got '%s'",
                         optarg);
      break;
    case OPT_SHADOW:
      popt.shadow = 1;
      break;
    case OPT_NOW:
      if (cli_parse_num("diagnose", "--now", optarg, &popt.now))
        return CLI_USAGE;
      break;
    case OPT_SERVER: /* ask a running `schedmate serve` (cli/client.c) */
      server = optarg;
      break;
    case ':':
      return cli_usage("diagnose", "%s needs a value", argv[optind - 1]);
    default:
      if ((rc = cli_llm_option(&lo, "diagnose", c, optarg)) >= 0) {
        if (rc != 0)
          return rc;
        break;
      }
      return cli_usage("diagnose", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli_usage("diagnose",
                     optind >= argc ? "missing LOG" : "expected one LOG");
  log = argv[optind];
  popt.log_path = log;
  if (server != NULL)
    return cli_client_diagnose(server, log, dopt.context, json);

  db = sm_sigdb_new();
  if (db == NULL)
    return cli_error("diagnose", CLI_USAGE, "out of memory");
  rc = sm_sigdb_load_builtin(db, &err);
  for (int i = 0; rc == 0 && i < n_sig; i++)
    rc = sm_sigdb_load_file(db, sigfiles[i], &err);
  if (rc != 0) {
    sm_sigdb_free(db);
    return cli_error("diagnose", CLI_USAGE, "%s", err.msg);
  }
  if (cli_llm_start(&lo, "diagnose") != 0) {
    sm_sigdb_free(db);
    return CLI_USAGE;
  }
  rc = sm_diagnose_file(db, log, &dopt, &d, &err);
  if (rc != 0) {
    sm_sigdb_free(db);
    cli_llm_release(&lo);
    return cli_error("diagnose", CLI_USAGE, "%s", err.msg);
  }
  cli_llm_diagnose(&lo, log, &d, popt.threshold, &d_plan, &d_out);
  rc = sm_plan_make(db, &d_plan, &popt, &p, &err);
  cli_llm_plan_note(&lo, &p);
  if (rc != 0) {
    cli_llm_release(&lo);
    sm_diagnosis_release(&d);
    sm_sigdb_free(db);
    return cli_error("diagnose", CLI_USAGE, "%s", err.msg);
  }
  if (json) {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_jw_obj_begin(&w);
    sm_diagnosis_json(&d_out, &p, &w);
    cli_llm_members(&lo, NULL, &w);
    sm_jw_obj_end(&w);
    rc = sm_jw_finish(&w) == 0 ? cli_emit(&b)
                               : cli_error("diagnose", CLI_USAGE,
                                           "cannot format the JSON output");
    sm_buf_release(&b);
  } else {
    print_human(&d_out, &p);
    cli_llm_text(&lo, stdout);
    rc = fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
  }
  if (rc == CLI_OK && d.failure)
    rc = CLI_CHECK;
  sm_plan_release(&p);
  cli_llm_release(&lo);
  sm_diagnosis_release(&d);
  sm_sigdb_free(db);
  return rc;
}
