/* cmd_diagnose.c - `schedmate diagnose`: the first real error of a failed
 * job's log, its class, and a recovery plan behind safety gates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"
#include "options.h"
#include "schedmate/sm_failure.h"

#define MAX_SIGFILES 16

static const cli_help help = {
    .head =
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
        "\n",
    .tail =
        "\n"
        "Exit status: 0 no failure found, 1 a failure was found (the check\n"
        "'did this job end cleanly' failed), 2 bad usage or unreadable input\n"
        "(missing, not a regular file, binary or compressed).\n"};

/* An integer option and its range (cli_parse_int's message on error). */
typedef struct int_arg {
  long lo, hi, v;
  int given;
} int_arg;

/* What the command line asks for. */
typedef struct diag_args {
  const char *sigfiles[MAX_SIGFILES], *log, *server;
  int n_sig, json;
  sm_diag_opts dopt;
  sm_plan_opts popt;
  int_arg context, chunk, tail, retries, quota;
  cli_llm lo;
  cli_llm_ctx lctx;
} diag_args;

static int opt_int(const cli_option *opt, const char *arg) {
  int_arg *x = opt->value;
  char name[64];

  snprintf(name, sizeof(name), "--%s", opt->name);
  if (cli_parse_int("diagnose", name, arg, x->lo, x->hi, &x->v))
    return CLI_USAGE;
  x->given = 1;
  return 0;
}

/* --no-locator and --tail N: the search mode, one of them at most. */
static int opt_mode(const cli_option *opt, const char *arg) {
  diag_args *a = opt->value;
  int want = arg == NULL ? SM_DIAG_WHOLE : SM_DIAG_TAIL;

  if (a->dopt.mode != 0 && (int)a->dopt.mode != want)
    return cli_usage("diagnose", "--no-locator and --tail exclude each "
                                 "other");
  if (arg != NULL) {
    if (cli_parse_int("diagnose", "--tail", arg, 1, 1000000000L, &a->tail.v))
      return CLI_USAGE;
    a->dopt.tail_lines = a->tail.v;
  }
  a->dopt.mode = want;
  return 0;
}

static int opt_sigs(const cli_option *opt, const char *arg) {
  diag_args *a = opt->value;

  if (a->n_sig == MAX_SIGFILES)
    return cli_usage("diagnose", "at most %d --signatures files", MAX_SIGFILES);
  a->sigfiles[a->n_sig++] = arg;
  return 0;
}

static int opt_threshold(const cli_option *opt, const char *arg) {
  double *t = opt->value;

  if (cli_parse_num("diagnose", "--threshold", arg, t))
    return CLI_USAGE;
  if (*t <= 0 || *t > 1)
    return cli_usage("diagnose",
                     "--threshold: expected a number in (0, 1], got '%s'", arg);
  return 0;
}

static int opt_window(const cli_option *opt, const char *arg) {
  double *w = opt->value;

  if (cli_parse_num("diagnose", "--quota-window", arg, w))
    return CLI_USAGE;
  if (*w <= 0)
    return cli_usage("diagnose",
                     "--quota-window: expected seconds > 0, got '%s'", arg);
  return 0;
}

static int opt_now(const cli_option *opt, const char *arg) {
  return cli_parse_num("diagnose", "--now", arg, opt->value) ? CLI_USAGE : 0;
}

/* Parses the command line into a (initialised here).  PO_OK, PO_HELP
 * (help printed) or CLI_USAGE. */
static int parse_args(int argc, char **argv, diag_args *a) {
  sm_plan_opts *p = &a->popt;
  const cli_option opts[] = {
      PO_GROUP("Search:"),
      PO_CALLBACK("chunk-lines", "N", &a->chunk, opt_int,
                  "lines per chunk of the bisecting locator (64)"),
      PO_CALLBACK("context", "N", &a->context, opt_int,
                  "lines of context either side of the cause (200)"),
      PO_CALLBACK("no-locator", NULL, a, opt_mode,
                  "scan the whole log line by line (ablation)"),
      PO_CALLBACK("tail", "N", a, opt_mode,
                  "look only at the last N lines (ablation)"),
      PO_CALLBACK("signatures", "FILE", a, opt_sigs,
                  "load extra signatures (tried before the built-in\n"
                  "ones; may be repeated; format: docs/failure.md)"),
      PO_GROUP("Plan:"),
      PO_CALLBACK("threshold", "X", &p->threshold, opt_threshold,
                  "least confidence for automatic steps (0.8)"),
      PO_STRING("state", "FILE", &p->state_path,
                "planner state shared across runs: retry counts\n"
                "per job, isolations per window"),
      PO_STRING("audit", "FILE", &p->audit_path,
                "append every decision as one JSON line"),
      PO_STRING("job", "ID", &p->job_id,
                "job the retry cap counts against (the log path)"),
      PO_STRING("node", "NODE", &p->node,
                "node to isolate (default: found in the log)"),
      PO_CALLBACK("max-retries", "N", &a->retries, opt_int,
                  "automatic restarts per job (2)"),
      PO_CALLBACK("isolation-quota", "N", &a->quota, opt_int,
                  "node isolations per window (2)"),
      PO_CALLBACK("quota-window", "S", &p->quota_window_s, opt_window,
                  "the isolation window in seconds (86400)"),
      PO_FLAG("shadow", &p->shadow, 1, "plan, but mark nothing executable"),
      PO_CALLBACK("now", "EPOCH", &p->now, opt_now,
                  "the planner's clock (for tests)"),
      PO_GROUP("Output:"),
      PO_FLAG("json", &a->json, 1,
              "one JSON object (docs/design.md section 3)"),
      PO_STRING("server", "S", &a->server,
                "ask a running `schedmate serve` (unix:PATH or\n"
                "http://HOST:PORT; its own planner settings)"),
      CLI_LLM_TABLE(&a->lctx),
      PO_END(),
  };
  int nargs, rc;

  memset(a, 0, sizeof(*a));
  a->context = (int_arg){1, 100000, 0, 0};
  a->chunk = (int_arg){1, 100000, 0, 0};
  a->retries = (int_arg){0, 1000, 0, 0};
  a->quota = (int_arg){0, 100000, 0, 0};
  cli_llm_init(&a->lo);
  a->lctx = (cli_llm_ctx){&a->lo, "diagnose"};
  rc = cli_parse_options("diagnose", argc, argv, opts, &help, &nargs);
  if (rc == PO_HELP)
    fputs(cli_llm_help, stdout);
  if (rc != PO_OK)
    return rc;
  if (nargs != 1)
    return cli_usage("diagnose",
                     nargs == 0 ? "missing LOG" : "expected one LOG");
  a->log = argv[1];
  p->log_path = a->log;
  if (a->context.given)
    a->dopt.context = (int)a->context.v;
  if (a->chunk.given)
    a->dopt.chunk_lines = (int)a->chunk.v;
  /* 0 turns the cap off (the planner's -1); no option keeps its default. */
  if (a->retries.given)
    p->max_retries = a->retries.v == 0 ? -1 : (int)a->retries.v;
  if (a->quota.given)
    p->isolation_quota = a->quota.v == 0 ? -1 : (int)a->quota.v;
  return PO_OK;
}

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

/* The signature database: the built-in signatures after the --signatures
 * files (tried first).  NULL after printing the error. */
static sm_sigdb *load_sigdb(const diag_args *a) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  int rc;

  if (db == NULL) {
    cli_error("diagnose", CLI_USAGE, "out of memory");
    return NULL;
  }
  rc = sm_sigdb_load_builtin(db, &err);
  for (int i = 0; rc == 0 && i < a->n_sig; i++)
    rc = sm_sigdb_load_file(db, a->sigfiles[i], &err);
  if (rc != 0) {
    sm_sigdb_free(db);
    cli_error("diagnose", CLI_USAGE, "%s", err.msg);
    return NULL;
  }
  return db;
}

/* Prints the diagnosis and its plan (JSON or text).  CLI_OK or
 * CLI_USAGE. */
static int emit(diag_args *a, const sm_diagnosis *d, const sm_plan *p) {
  int rc;

  if (a->json) {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_jw_obj_begin(&w);
    sm_diagnosis_json(d, p, &w);
    cli_llm_members(&a->lo, NULL, &w);
    sm_jw_obj_end(&w);
    rc = sm_jw_finish(&w) == 0 ? cli_emit(&b)
                               : cli_error("diagnose", CLI_USAGE,
                                           "cannot format the JSON output");
    sm_buf_release(&b);
    return rc;
  }
  print_human(d, p);
  cli_llm_text(&a->lo, stdout);
  return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
}

/* Diagnoses the log, lets the LLM stage (if any) have its say and plans
 * the recovery; prints the answer.  CLI_OK, CLI_CHECK (a failure was
 * found) or CLI_USAGE. */
static int run(diag_args *a, const sm_sigdb *db) {
  sm_diagnosis d, d_plan, d_out;
  sm_err err = {0};
  sm_plan p;
  int rc;

  if (sm_diagnose_file(db, a->log, &a->dopt, &d, &err) != 0)
    return cli_error("diagnose", CLI_USAGE, "%s", err.msg);
  cli_llm_diagnose(&a->lo, a->log, &d, a->popt.threshold, &d_plan, &d_out);
  rc = sm_plan_make(db, &d_plan, &a->popt, &p, &err);
  cli_llm_plan_note(&a->lo, &p);
  if (rc != 0) {
    sm_diagnosis_release(&d);
    return cli_error("diagnose", CLI_USAGE, "%s", err.msg);
  }
  rc = emit(a, &d_out, &p);
  if (rc == CLI_OK && d.failure)
    rc = CLI_CHECK;
  sm_plan_release(&p);
  sm_diagnosis_release(&d);
  return rc;
}

int cmd_diagnose(int argc, char **argv) {
  diag_args a;
  sm_sigdb *db;
  int rc = parse_args(argc, argv, &a);

  if (rc != PO_OK)
    return rc == PO_HELP ? CLI_OK : rc;
  if (a.server != NULL)
    return cli_client_diagnose(a.server, a.log, a.dopt.context, a.json);
  db = load_sigdb(&a);
  if (db == NULL)
    return CLI_USAGE;
  rc = cli_llm_start(&a.lo, "diagnose");
  if (rc == 0)
    rc = run(&a, db);
  cli_llm_release(&a.lo);
  sm_sigdb_free(db);
  return rc;
}
