/* cmd_simulate.c - `schedmate simulate`: replays a trace (or a synthetic
 * one) on a simulated cluster under one policy or several (--compare),
 * and prints a summary, one JSON object, a per-job CSV and an HTML
 * report. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "schedmate/sm_sia.h"
#include "schedmate/sm_sim.h"

#define CMD "simulate"
#define DEFAULT_LUCID "../shared/traces/lucid"
#define MAX_POLICIES 16

static void usage(FILE *out) {
  fputs(
      "usage: schedmate simulate [OPTIONS] (--trace FILE | --synthetic C)\n"
      "\n"
      "Replays a job trace on a simulated GPU cluster under a scheduling\n"
      "policy (event-driven) and reports JCT, queueing delay, makespan and\n"
      "utilisation.\n"
      "\n"
      "Trace:\n"
      "  --trace FILE|DIR      CSV trace, plain or gzip-compressed, or a\n"
      "                        directory of workload files (Sia's sets)\n"
      "  --format F            auto (default), sia-philly, helios, lucid,\n"
      "                        acme, tiresias, chronus, sia, generic\n"
      "  --from T, --to T      keep jobs submitted in [T, T] (datetime or\n"
      "                        seconds, as the trace writes them)\n"
      "  --limit N             keep the first N jobs\n"
      "  --estimates FILE      job_id,estimate CSV (or Lucid's priority file)\n"
      "  --synthetic C         a trace calibrated to a published summary:\n"
      "                        venus, earth, saturn, uranus, seren, kalos\n"
      "  --synthetic-days D    span of the synthetic trace (default 7)\n"
      "  --synthetic-jobs N    exact job count instead\n"
      "  --calibration FILE    summary CSV (Acme or Helios layout) to use\n"
      "\n"
      "Cluster (default: the calibrated size for synthetic traces, else one\n"
      "cluster sized so that the trace fills --load of it):\n"
      "  --cluster SPEC        [VC=]NODESxGPUS[:TYPE[@SPEED]],... e.g. 64x8,\n"
      "                        a=4x8,b=2x8 or 16x8:a100@1,16x8:v100@0.5\n"
      "  --vc-config FILE      VC table vc,nodes (Helios 'vc,node num' and\n"
      "                        Lucid ',num' layouts too)\n"
      "  --gpus-per-node G     GPUs per node for --vc-config and auto (8)\n"
      "  --load L              target load of the auto-sized cluster (0.8)\n"
      "  --placement P         consolidate (default) or first-fit\n"
      "  --oversize A          jobs larger than their VC: cap (default),\n"
      "                        drop, error\n"
      "  --unknown-vc A        jobs of VCs the cluster lacks: drop (default),\n"
      "                        error\n"
      "\n"
      "Policy:\n"
      "  --policy P            fifo (default), sjf, srtf, qssf, tiresias,\n"
      "                        lucid, lucid+schedmate, sjf-schedmate,\n"
      "                        sjf-schedmate+fh, sia, sia+schedmate\n"
      "  --compare P1,P2,...   run several policies on the same trace\n"
      "  --estimator E         qssf estimator: history (default), oracle,\n"
      "                        trace, noisy:lognormal:SIGMA, noisy:uniform:E\n"
      "  --backfill            fifo/sjf/qssf skip a blocked head job\n"
      "  --preempt-overhead S[,L]  restart overhead after a preemption, jobs\n"
      "                        of at most 8 GPUs / more (default 40,60)\n"
      "  --tiresias-thresholds LIST  attained GPU-seconds per level (18000)\n"
      "  --tiresias-interval S scheduling round of tiresias (60)\n"
      "  --param KEY=VALUE     policy parameter (repeatable)\n"
      "  --semantic on|off     use SchedMate's facts (policies that can)\n"
      "\n"
      "SchedMate integrations (lucid*, sjf-schedmate*):\n"
      "  --facts F             history (default: the history engine online\n"
      "                        over the trace) or calibrated (hit rate and\n"
      "                        estimate error as parameters)\n"
      "  --workloads DIR       map jobs onto the workload templates in DIR\n"
      "                        (e.g. data/workloads), fingerprinted from\n"
      "                        what the extractor reads in their code\n"
      "  --lucid-tables DIR    Lucid's single_data.csv + colocate_info.csv\n"
      "                        (default ../shared/traces/lucid when present),\n"
      "                        or 'builtin' for the built-in model\n"
      "  --profiles FILE, --colocate FILE   the two tables by name\n"
      "  --failures M          trace (default: failed jobs end as recorded)\n"
      "                        or resubmit (infrastructure failures are\n"
      "                        resubmitted by their users), for every policy\n"
      "  --seed N              seed of every random draw (default 1)\n"
      "\n"
      "Output:\n"
      "  --json                one JSON object ({trace,results} to compare)\n"
      "  --jobs-csv FILE       per-job outcomes (with --compare, one file per\n"
      "                        policy: FILE with .POLICY before the "
      "extension)\n"
      "  --series-csv FILE     busy GPUs and pending jobs over time (per\n"
      "                        policy with --compare, as --jobs-csv)\n"
      "  --report FILE.html    HTML report with plots (works offline)\n"
      "  --progress, --no-progress  progress on stderr (default: on a tty)\n"
      "\n"
      "Exit status: 0 ok, 2 bad usage or unreadable trace.\n",
      out);
}

typedef struct opts {
  sm_sim_load_opts load;   /* trace reading */
  sm_sim_synth_opts synth; /* synthetic generator */
  sm_sim_config cfg;       /* run configuration */
  const char *trace;       /* --trace */
  const char *synthetic;   /* --synthetic */
  const char *cluster;     /* --cluster */
  const char *vc_config;   /* --vc-config */
  const char *compare;     /* --compare */
  const char *jobs_csv;    /* --jobs-csv */
  const char *series_csv;  /* --series-csv */
  const char *report;      /* --report */
  long gpn;                /* --gpus-per-node */
  double load_target;      /* --load */
  int json;                /* --json */
  int progress;            /* -1 auto, 0 off, 1 on */
  char kv[16][300];        /* storage for generated parameters */
  int lucid_tables;        /* 1: tables (or builtin) were named */
  int nkv;                 /* used entries of kv */
} opts;

typedef struct prog {
  const char *policy; /* current policy */
  int idx, n;         /* position in the comparison */
  double last;        /* last print time */
  int printed;        /* something is on the line */
} prog;

static void on_progress(void *ud, double done) {
  prog *p = ud;
  double now = sm_now();

  if (now - p->last < 0.2)
    return;
  p->last = now;
  p->printed = 1;
  fprintf(stderr, "\rsimulate: %s (%d/%d) %3.0f%% of jobs submitted ",
          p->policy, p->idx + 1, p->n, 100 * done);
  fflush(stderr);
}

static int add_param(opts *o, const char *fmt, const char *a, const char *b) {
  if (o->nkv >= (int)SM_ARRAY_LEN(o->kv))
    return cli_usage(CMD, "too many parameters");
  snprintf(o->kv[o->nkv], sizeof(o->kv[0]), fmt, a, b);
  if (sm_sim_config_param(&o->cfg, o->kv[o->nkv]) != 0)
    return cli_usage(CMD, "too many parameters");
  o->nkv++;
  return 0;
}

static int parse_overheads(opts *o, const char *s) {
  char tmp[64], *c;

  snprintf(tmp, sizeof(tmp), "%s", s);
  c = strchr(tmp, ',');
  if (c != NULL)
    *c = '\0';
  if (sm_parse_double(tmp, &o->cfg.preempt_small_s) != 0 ||
      o->cfg.preempt_small_s < 0)
    return cli_usage(CMD,
                     "--preempt-overhead: expected S[,L] seconds, "
                     "got '%s'",
                     s);
  o->cfg.preempt_large_s = o->cfg.preempt_small_s;
  if (c != NULL && (sm_parse_double(c + 1, &o->cfg.preempt_large_s) != 0 ||
                    o->cfg.preempt_large_s < 0))
    return cli_usage(CMD,
                     "--preempt-overhead: expected S[,L] seconds, "
                     "got '%s'",
                     s);
  return 0;
}

enum {
  O_TRACE = 256,
  O_FORMAT,
  O_FROM,
  O_TO,
  O_LIMIT,
  O_ESTIMATES,
  O_SYNTH,
  O_SDAYS,
  O_SJOBS,
  O_CALIB,
  O_CLUSTER,
  O_VCCONF,
  O_GPN,
  O_LOAD,
  O_PLACE,
  O_OVERSIZE,
  O_UNKVC,
  O_POLICY,
  O_COMPARE,
  O_ESTIM,
  O_BACKFILL,
  O_OVERHEAD,
  O_TTHR,
  O_TINT,
  O_PARAM,
  O_SEMANTIC,
  O_SEED,
  O_JSON,
  O_JOBSCSV,
  O_REPORT,
  O_PROGRESS,
  O_NOPROGRESS,
  O_HELP,
  O_SERIES,
  O_FACTS,
  O_WORKLOADS,
  O_LTABLES,
  O_PROFILES,
  O_COLOCATE,
  O_FAILURES
};

static const struct option longopts[] = {
    {"trace", required_argument, 0, O_TRACE},
    {"format", required_argument, 0, O_FORMAT},
    {"from", required_argument, 0, O_FROM},
    {"to", required_argument, 0, O_TO},
    {"limit", required_argument, 0, O_LIMIT},
    {"estimates", required_argument, 0, O_ESTIMATES},
    {"synthetic", required_argument, 0, O_SYNTH},
    {"synthetic-days", required_argument, 0, O_SDAYS},
    {"synthetic-jobs", required_argument, 0, O_SJOBS},
    {"calibration", required_argument, 0, O_CALIB},
    {"cluster", required_argument, 0, O_CLUSTER},
    {"vc-config", required_argument, 0, O_VCCONF},
    {"gpus-per-node", required_argument, 0, O_GPN},
    {"load", required_argument, 0, O_LOAD},
    {"placement", required_argument, 0, O_PLACE},
    {"oversize", required_argument, 0, O_OVERSIZE},
    {"unknown-vc", required_argument, 0, O_UNKVC},
    {"policy", required_argument, 0, O_POLICY},
    {"compare", required_argument, 0, O_COMPARE},
    {"estimator", required_argument, 0, O_ESTIM},
    {"backfill", no_argument, 0, O_BACKFILL},
    {"preempt-overhead", required_argument, 0, O_OVERHEAD},
    {"tiresias-thresholds", required_argument, 0, O_TTHR},
    {"tiresias-interval", required_argument, 0, O_TINT},
    {"param", required_argument, 0, O_PARAM},
    {"semantic", required_argument, 0, O_SEMANTIC},
    {"seed", required_argument, 0, O_SEED},
    {"json", no_argument, 0, O_JSON},
    {"jobs-csv", required_argument, 0, O_JOBSCSV},
    {"series-csv", required_argument, 0, O_SERIES},
    {"report", required_argument, 0, O_REPORT},
    {"progress", no_argument, 0, O_PROGRESS},
    {"no-progress", no_argument, 0, O_NOPROGRESS},
    {"help", no_argument, 0, O_HELP},
    {"facts", required_argument, 0, O_FACTS},
    {"workloads", required_argument, 0, O_WORKLOADS},
    {"lucid-tables", required_argument, 0, O_LTABLES},
    {"profiles", required_argument, 0, O_PROFILES},
    {"colocate", required_argument, 0, O_COLOCATE},
    {"failures", required_argument, 0, O_FAILURES},
    {0, 0, 0, 0}};

static int parse(int argc, char **argv, opts *o) {
  int c;
  long v;
  double d;

  memset(o, 0, sizeof(*o));
  sm_sim_load_opts_init(&o->load);
  sm_sim_synth_opts_init(&o->synth);
  sm_sim_config_init(&o->cfg);
  o->gpn = 8;
  o->load_target = 0.8;
  o->progress = -1;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case O_TRACE:
      o->trace = optarg;
      break;
    case O_FORMAT:
      o->load.format = sm_sim_format_parse(optarg);
      if (o->load.format < 0)
        return cli_usage(CMD, "unknown --format '%s'", optarg);
      break;
    case O_FROM:
      o->load.from = optarg;
      break;
    case O_TO:
      o->load.to = optarg;
      break;
    case O_LIMIT:
      if (cli_parse_int(CMD, "--limit", optarg, 1, 100000000, &v))
        return CLI_USAGE;
      o->load.limit = (size_t)v;
      break;
    case O_ESTIMATES:
      o->load.estimates = optarg;
      break;
    case O_SYNTH:
      o->synthetic = optarg;
      break;
    case O_SDAYS:
      if (cli_parse_num(CMD, "--synthetic-days", optarg, &d))
        return CLI_USAGE;
      if (!(d > 0 && d <= 3650))
        return cli_usage(CMD, "--synthetic-days: expected 0 < D <= 3650");
      o->synth.days = d;
      break;
    case O_SJOBS:
      if (cli_parse_int(CMD, "--synthetic-jobs", optarg, 1, 20000000, &v))
        return CLI_USAGE;
      o->synth.jobs = (size_t)v;
      break;
    case O_CALIB:
      o->synth.calibration = optarg;
      break;
    case O_CLUSTER:
      o->cluster = optarg;
      break;
    case O_VCCONF:
      o->vc_config = optarg;
      break;
    case O_GPN:
      if (cli_parse_int(CMD, "--gpus-per-node", optarg, 1, 1024, &o->gpn))
        return CLI_USAGE;
      break;
    case O_LOAD:
      if (cli_parse_num(CMD, "--load", optarg, &o->load_target))
        return CLI_USAGE;
      if (!(o->load_target > 0 && o->load_target <= 1))
        return cli_usage(CMD, "--load: expected 0 < L <= 1");
      break;
    case O_PLACE:
      if (strcmp(optarg, "consolidate") == 0)
        o->cfg.placement = SM_SIM_PLACE_CONSOLIDATE;
      else if (strcmp(optarg, "first-fit") == 0)
        o->cfg.placement = SM_SIM_PLACE_FIRST_FIT;
      else
        return cli_usage(CMD, "--placement: consolidate or first-fit");
      break;
    case O_OVERSIZE:
      if (strcmp(optarg, "cap") == 0)
        o->cfg.oversize = SM_SIM_OVERSIZE_CAP;
      else if (strcmp(optarg, "drop") == 0)
        o->cfg.oversize = SM_SIM_OVERSIZE_DROP;
      else if (strcmp(optarg, "error") == 0)
        o->cfg.oversize = SM_SIM_OVERSIZE_ERROR;
      else
        return cli_usage(CMD, "--oversize: cap, drop or error");
      break;
    case O_UNKVC:
      if (strcmp(optarg, "drop") != 0 && strcmp(optarg, "error") != 0)
        return cli_usage(CMD, "--unknown-vc: drop or error");
      o->cfg.unknown_vc_error = strcmp(optarg, "error") == 0;
      break;
    case O_POLICY:
      o->cfg.policy = optarg;
      break;
    case O_COMPARE:
      o->compare = optarg;
      break;
    case O_ESTIM:
      if (add_param(o, "estimator=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_BACKFILL:
      if (add_param(o, "backfill=1%s%s", "", ""))
        return CLI_USAGE;
      break;
    case O_OVERHEAD:
      if (parse_overheads(o, optarg))
        return CLI_USAGE;
      break;
    case O_TTHR:
      if (add_param(o, "tiresias.thresholds=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_TINT:
      if (cli_parse_num(CMD, "--tiresias-interval", optarg, &d))
        return CLI_USAGE;
      if (add_param(o, "tiresias.interval=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_PARAM:
      if (strchr(optarg, '=') == NULL || optarg[0] == '=')
        return cli_usage(CMD, "--param: expected KEY=VALUE, got '%s'", optarg);
      if (sm_sim_config_param(&o->cfg, optarg) != 0)
        return cli_usage(CMD, "too many --param");
      break;
    case O_SEMANTIC:
      if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0)
        return cli_usage(CMD, "--semantic: on or off");
      o->cfg.semantic = optarg;
      break;
    case O_SEED: {
      long long s;
      if (sm_parse_i64(optarg, &s) != 0 || s < 0)
        return cli_usage(CMD, "--seed: expected a non-negative integer");
      o->cfg.seed = o->load.seed = o->synth.seed = (uint64_t)s;
      break;
    }
    case O_JSON:
      o->json = 1;
      break;
    case O_JOBSCSV:
      o->jobs_csv = optarg;
      break;
    case O_SERIES:
      o->series_csv = optarg;
      break;
    case O_REPORT:
      o->report = optarg;
      break;
    case O_PROGRESS:
      o->progress = 1;
      break;
    case O_FACTS:
      if (strcmp(optarg, "history") != 0 && strcmp(optarg, "calibrated") != 0)
        return cli_usage(CMD, "--facts: history or calibrated");
      if (add_param(o, "facts=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_WORKLOADS:
      if (add_param(o, "workloads=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_LTABLES:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.tables=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_PROFILES:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.profiles=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_COLOCATE:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.colocate=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_FAILURES:
      if (strcmp(optarg, "trace") != 0 && strcmp(optarg, "resubmit") != 0)
        return cli_usage(CMD, "--failures: trace or resubmit");
      if (add_param(o, "fail.model=%s%s", optarg, ""))
        return CLI_USAGE;
      break;
    case O_NOPROGRESS:
      o->progress = 0;
      break;
    case O_HELP:
    case 'h':
      usage(stdout);
      return -1;
    default:
      if (optopt)
        return cli_usage(CMD, "bad option or missing value near '%s'",
                         argv[optind - 1]);
      return cli_usage(CMD, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc)
    return cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
  if ((o->trace == NULL) == (o->synthetic == NULL))
    return cli_usage(CMD, "give exactly one of --trace FILE and "
                          "--synthetic CLUSTER");
  if (o->synthetic != NULL &&
      (o->load.from || o->load.to || o->load.limit || o->load.estimates ||
       o->load.format != SM_SIM_FMT_AUTO))
    return cli_usage(CMD, "--from, --to, --limit, --estimates and --format "
                          "apply to --trace, not --synthetic");
  if (o->trace != NULL &&
      (o->synth.calibration || o->synth.jobs || o->synth.days != 7))
    return cli_usage(CMD, "--synthetic-days, --synthetic-jobs and "
                          "--calibration apply to --synthetic");
  if (o->cluster != NULL && o->vc_config != NULL)
    return cli_usage(CMD, "give --cluster or --vc-config, not both");
  return 0;
}

/* Splits --compare (or --policy) into names; checks each exists. */
static int policies(const opts *o, char names[][48], int *n) {
  const char *p = o->compare ? o->compare : o->cfg.policy;

  *n = 0;
  for (;;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == 0 || len >= 48)
      return cli_usage(CMD, "bad policy list '%s'", o->compare);
    if (*n == MAX_POLICIES)
      return cli_usage(CMD, "at most %d policies", MAX_POLICIES);
    memcpy(names[*n], p, len);
    names[*n][len] = '\0';
    if (sm_sim_policy_find(names[*n]) == NULL) {
      fprintf(stderr,
              "schedmate simulate: unknown policy '%s'; known:", names[*n]);
      for (size_t i = 0; sm_sim_policy_at(i); i++)
        fprintf(stderr, " %s", sm_sim_policy_at(i)->name);
      fprintf(stderr, "\n");
      return CLI_USAGE;
    }
    (*n)++;
    if (c == NULL)
      break;
    p = c + 1;
  }
  return 0;
}

static int write_file(const char *path, const sm_buf *b) {
  FILE *f = fopen(path, "wb");
  int bad;

  if (f == NULL)
    return cli_error(CMD, CLI_USAGE, "%s: cannot create: %m", path);
  bad = fwrite(sm_buf_str(b), 1, b->len, f) != b->len;
  bad |= fclose(f) != 0;
  if (bad)
    return cli_error(CMD, CLI_USAGE, "%s: write failed", path);
  return 0;
}

/* FILE.csv -> FILE.POLICY.csv */
static void per_policy_path(char *out, size_t n, const char *path,
                            const char *pol) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

  if (dot == NULL || (slash != NULL && dot < slash))
    snprintf(out, n, "%s.%s", path, pol);
  else
    snprintf(out, n, "%.*s.%s%s", (int)(dot - path), path, pol, dot);
}

static void num_h(char *b, size_t n, double v) {
  if (isnan(v))
    snprintf(b, n, "-");
  else
    snprintf(b, n, "%.0f", v);
}

static void print_one(const sm_sim_result *r) {
  const sm_sim_summary *m = sm_sim_result_summary(r);
  char a[32], b[32], c[32];

  if (m->synthetic)
    printf("SYNTHETIC trace (generated from published statistics, not "
           "real jobs)\n");
  printf("trace      %s, %zu jobs (%zu left out)\n", m->trace, m->jobs,
         m->dropped);
  printf("cluster    %d GPUs on %d nodes, %d VC%s\n", m->gpus, m->nodes, m->vcs,
         m->vcs == 1 ? "" : "s");
  printf("policy     %s (semantic %s)\n", m->policy, m->semantic);
  num_h(a, sizeof(a), m->avg_jct_s);
  num_h(b, sizeof(b), m->median_jct_s);
  num_h(c, sizeof(c), m->p99_jct_s);
  printf("JCT        avg %s s, median %s s, p99 %s s\n", a, b, c);
  num_h(a, sizeof(a), m->avg_queue_s);
  num_h(b, sizeof(b), m->median_queue_s);
  num_h(c, sizeof(c), m->p99_queue_s);
  printf("queue      avg %s s, median %s s, p99 %s s (first start)\n", a, b, c);
  num_h(a, sizeof(a), m->avg_wait_s);
  printf("wait       avg %s s (all time pending, after preemptions too)\n", a);
  printf("makespan   %.0f s (%.2f days), GPU utilisation %.1f%%\n",
         m->makespan_s, m->makespan_s / 86400, 100 * m->avg_util);
  printf("jobs       %zu completed, %zu canceled, %zu failed, %zu "
         "unfinished; %zu preemptions\n",
         m->completed, m->canceled, m->failed, m->unfinished, m->preemptions);
  printf("run        %.3f s wall, %.0f jobs/s, %zu events\n", m->wall_s,
         m->jobs_per_s, m->events);
  for (size_t i = 0; i < sm_sim_result_stat_count(r); i++) {
    double v;
    const char *k = sm_sim_result_stat(r, i, &v);
    printf("stat       %s = %g\n", k, v);
  }
  for (size_t i = 0; i < sm_sim_result_note_count(r); i++)
    printf("note       %s\n", sm_sim_result_note(r, i));
}

static int note_everywhere(sm_sim_result **rs, int n, const char *note) {
  for (int i = 0; i < n; i++) {
    int found = 0;
    for (size_t k = 0; k < sm_sim_result_note_count(rs[i]) && !found; k++)
      found = strcmp(sm_sim_result_note(rs[i], k), note) == 0;
    if (!found)
      return 0;
  }
  return 1;
}

static void print_table(sm_sim_result **rs, int n) {
  const sm_sim_summary *m0 = sm_sim_result_summary(rs[0]);

  if (m0->synthetic)
    printf("SYNTHETIC trace (generated from published statistics, not "
           "real jobs)\n");
  printf("trace %s: %zu jobs (%zu left out); %d GPUs on %d nodes, %d "
         "VC%s\n\n",
         m0->trace, m0->jobs, m0->dropped, m0->gpus, m0->nodes, m0->vcs,
         m0->vcs == 1 ? "" : "s");
  printf("%-12s %11s %11s %11s %11s %11s %11s %6s %8s %8s\n", "policy",
         "avg JCT s", "median JCT", "p99 JCT s", "avg queue s", "avg wait s",
         "makespan s", "util", "preempt", "wall s");
  for (int i = 0; i < n; i++) {
    const sm_sim_summary *m = sm_sim_result_summary(rs[i]);
    printf("%-12s %11.0f %11.0f %11.0f %11.0f %11.0f %11.0f %5.1f%% %8zu "
           "%8.3f\n",
           m->policy, m->avg_jct_s, m->median_jct_s, m->p99_jct_s,
           m->avg_queue_s, m->avg_wait_s, m->makespan_s, 100 * m->avg_util,
           m->preemptions, m->wall_s);
  }
  for (int i = 0; i < n; i++) {
    size_t k, ns = sm_sim_result_stat_count(rs[i]);
    if (ns == 0)
      continue;
    printf("stats (%s):", sm_sim_result_summary(rs[i])->policy);
    for (k = 0; k < ns; k++) {
      double v;
      const char *name = sm_sim_result_stat(rs[i], k, &v);
      printf("%s %s=%g", k ? "," : "", name, v);
    }
    printf("\n");
  }
  /* Notes every run shares (the trace's) once, the others per policy. */
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < sm_sim_result_note_count(rs[i]); k++) {
      const char *note = sm_sim_result_note(rs[i], k);
      if (note_everywhere(rs, n, note)) {
        if (i == 0)
          printf("note: %s\n", note);
      } else {
        printf("note (%s): %s\n", sm_sim_result_summary(rs[i])->policy, note);
      }
    }
}

/* ==== SchedMate paths ==== */

static double stat_or(const sm_sim_result *r, const char *k, double def) {
  double v;
  return sm_sim_result_stat_get(r, k, &v) ? v : def;
}

static const char *param_of(const opts *o, const char *key) {
  size_t n = strlen(key);
  for (int i = o->cfg.nparams - 1; i >= 0; i--)
    if (strncmp(o->cfg.params[i], key, n) == 0 && o->cfg.params[i][n] == '=')
      return o->cfg.params[i] + n + 1;
  return NULL;
}

static int is_schedmate(const sm_sim_result *r) {
  double v;
  return sm_sim_result_stat_get(r, "facts_queries", &v);
}

/* The paper-style comparison: the headline figures of every run, the
 * speed-up of each SchedMate path over its baseline, and where the facts
 * came from. */
static void print_schedmate(sm_sim_result **rs, int n, const opts *o) {
  sm_sim_speedup sp[8];
  size_t ns = sm_sim_speedups((const sm_sim_result *const *)rs, (size_t)n, sp,
                              SM_ARRAY_LEN(sp));
  const sm_sim_summary *m0 = sm_sim_result_summary(rs[0]);
  const char *facts = param_of(o, "facts");
  const char *wl = param_of(o, "workloads");
  int any = 0;

  for (int i = 0; i < n; i++)
    any |= is_schedmate(rs[i]);
  if (!any && ns == 0)
    return;
  printf("\nSchedMate in the schedulers (%s trace; facts: %s%s%s)\n",
         m0->synthetic ? "SYNTHETIC" : "real", facts ? facts : "history",
         wl ? ", workload templates from " : ", trace attributes only",
         wl ? wl : "");
  printf("%-18s %12s %12s %14s %12s\n", "policy", "avg JCT s", "p99 JCT s",
         "avg queue s*", "makespan s");
  for (int i = 0; i < n; i++) {
    const sm_sim_summary *m = sm_sim_result_summary(rs[i]);
    printf("%-18s %12.0f %12.0f %14.0f %12.0f\n", m->policy, m->avg_jct_s,
           m->p99_jct_s, m->avg_wait_s, m->makespan_s);
  }
  printf("* all time pending (Lucid's queueing delay)\n");
  {
    double lo = 1, hi = 0;
    for (int i = 0; i < n; i++) {
      double u = sm_sim_result_summary(rs[i])->avg_util;
      lo = u < lo ? u : lo;
      hi = u > hi ? u : hi;
    }
    printf("GPU utilisation %.1f-%.1f%% over the makespan%s\n", 100 * lo,
           100 * hi,
           hi < 0.3 ? ": queues are short, so the order of the queue "
                      "matters little here"
                    : "");
  }
  {
    const char *fm = param_of(o, "fail.model");
    double inf = stat_or(rs[0], "infra_failures", 0);
    printf("failures: model %s; %.0f infrastructure failures (share %s of "
           "the trace's failed jobs)%s\n",
           fm ? fm : "trace", inf,
           param_of(o, "fail.infra_share") ? param_of(o, "fail.infra_share")
                                           : "0.35",
           inf == 0 ? ": the Failure Handler has nothing to do on this trace"
                    : "");
  }
  if (ns > 0) {
    printf("%-34s %8s %8s %9s %9s %8s\n", "speed-up (baseline / path)",
           "avg JCT", "p99 JCT", "avg queue", "makespan", "avg JCT");
    for (size_t k = 0; k < ns; k++) {
      char name[64];
      snprintf(name, sizeof(name), "%s vs %s", sp[k].path, sp[k].baseline);
      printf("%-34s %7.3fx %7.3fx %8.3fx %8.3fx %+7.1f%%\n", name,
             sp[k].avg_jct_speedup, sp[k].p99_jct_speedup,
             sp[k].avg_wait_speedup, sp[k].makespan_speedup,
             100 * sp[k].avg_jct_change);
    }
  }
  for (int i = 0; i < n; i++) {
    const sm_sim_result *r = rs[i];
    const char *pol = sm_sim_result_summary(r)->policy;
    double q = stat_or(r, "facts_queries", 0);
    if (!is_schedmate(r))
      continue;
    {
      sm_buf sb;
      sm_buf_init(&sb, 0);
      if (sm_sia_facts_line((const sm_sim_result *const *)rs, (size_t)n,
                            (size_t)i, &sb))
        printf("%s\n", sm_buf_str(&sb));
      sm_buf_release(&sb);
      if (stat_or(r, "sia_rounds", -1) >= 0)
        continue;
    }
    printf("%s: hit rate %.1f%% (%.0f of %.0f), estimates within 2x of the "
           "truth %.1f%%",
           pol, 100 * stat_or(r, "facts_hit_rate", 0),
           stat_or(r, "facts_hits", 0), q,
           100 * stat_or(r, "facts_within_2x", 0));
    if (stat_or(r, "profiles_skipped", -1) >= 0)
      printf("; profiling GPU-hours saved %.1f (profiler used %.1f); "
             "evictions %.0f (%.0f Tracker checks, %.0f untracked)",
             stat_or(r, "profiling_gpu_h_saved", 0),
             stat_or(r, "profiler_gpu_h", 0), stat_or(r, "evictions", 0),
             stat_or(r, "tracker_checks", 0),
             stat_or(r, "checks_skipped_untracked", 0));
    if (stat_or(r, "infra_restarts", -1) >= 0)
      printf("; infrastructure failures restarted from their checkpoint by "
             "the Failure Handler %.0f, nodes isolated %.0f",
             stat_or(r, "infra_restarts", 0), stat_or(r, "nodes_isolated", 0));
    printf("\n");
  }
}

static void json_schedmate(sm_sim_result **rs, int n, const opts *o, sm_jw *w) {
  sm_sim_speedup sp[8];
  size_t ns = sm_sim_speedups((const sm_sim_result *const *)rs, (size_t)n, sp,
                              SM_ARRAY_LEN(sp));
  const char *facts = param_of(o, "facts");

  sm_jw_key(w, "schedmate");
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "facts", facts ? facts : "history");
  sm_jw_key(w, "workloads");
  if (param_of(o, "workloads"))
    sm_jw_str(w, param_of(o, "workloads"));
  else
    sm_jw_null(w);
  sm_jw_key(w, "speedups");
  sm_jw_arr_begin(w);
  for (size_t k = 0; k < ns; k++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "path", sp[k].path);
    sm_jw_kv_str(w, "baseline", sp[k].baseline);
    sm_jw_kv_num(w, "avg_jct_speedup", sp[k].avg_jct_speedup);
    sm_jw_kv_num(w, "p99_jct_speedup", sp[k].p99_jct_speedup);
    sm_jw_kv_num(w, "avg_queue_speedup", sp[k].avg_wait_speedup);
    sm_jw_kv_num(w, "makespan_speedup", sp[k].makespan_speedup);
    sm_jw_kv_num(w, "avg_jct_change", sp[k].avg_jct_change);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_obj_end(w);
}

/* Loads the trace and builds the cluster. */
static int inputs(opts *o, sm_sim_trace **t, sm_sim_cluster **c) {
  sm_err err = {0};
  int rc;

  if (o->synthetic)
    rc = sm_sim_trace_synthetic(o->synthetic, &o->synth, t, &err);
  else
    rc = sm_sim_trace_load_set(o->trace, &o->load, t, &err);
  if (rc != 0)
    return cli_error(CMD, CLI_USAGE, "%s", err.msg);
  if (o->cluster)
    rc = sm_sim_cluster_parse(o->cluster, c, &err);
  else if (o->vc_config)
    rc = sm_sim_cluster_load_vcs(o->vc_config, (int)o->gpn, c, &err);
  else if (sm_sim_trace_calibrated_gpus(*t) > 0) {
    char spec[64];
    int g = sm_sim_trace_calibrated_gpus(*t);
    snprintf(spec, sizeof(spec), "%ldx%ld", (g + o->gpn - 1) / o->gpn, o->gpn);
    rc = sm_sim_cluster_parse(spec, c, &err);
  } else
    rc = sm_sim_cluster_auto(*t, (int)o->gpn, o->load_target, c, &err);
  if (rc != 0) {
    sm_sim_trace_free(*t);
    *t = NULL;
    return cli_error(CMD, CLI_USAGE, "%s", err.msg);
  }
  return 0;
}

int cmd_simulate(int argc, char **argv) {
  opts o;
  char names[MAX_POLICIES][48];
  sm_sim_result *rs[MAX_POLICIES] = {0};
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  prog pr = {0};
  int n = 0, rc, ret = CLI_OK;
  int auto_cluster;

  rc = parse(argc, argv, &o);
  if (rc != 0)
    return rc < 0 ? CLI_OK : rc;
  /* Lucid's tables are not shipped (non-commercial licence): use the
   * staged copy when it is there, else the built-in model. */
  if (!o.lucid_tables && param_of(&o, "lucid.tables") == NULL &&
      param_of(&o, "lucid.profiles") == NULL &&
      param_of(&o, "lucid.colocate") == NULL &&
      access(DEFAULT_LUCID "/single_data.csv", R_OK) == 0 &&
      access(DEFAULT_LUCID "/colocate_info.csv", R_OK) == 0 &&
      add_param(&o, "lucid.tables=%s%s", DEFAULT_LUCID, ""))
    return CLI_USAGE;
  if (policies(&o, names, &n))
    return CLI_USAGE;
  auto_cluster = !o.cluster && !o.vc_config;
  if (inputs(&o, &t, &c))
    return CLI_USAGE;
  if (o.progress < 0)
    o.progress = isatty(STDERR_FILENO);
  if (o.progress) {
    o.cfg.progress = on_progress;
    o.cfg.progress_ud = &pr;
  }
  for (int i = 0; i < n; i++) {
    sm_err err = {0};
    sm_sim_config cfg = o.cfg;
    cfg.policy = names[i];
    pr.policy = names[i];
    pr.idx = i;
    pr.n = n;
    rc = sm_sim_run(t, c, &cfg, &rs[i], &err);
    if (rc != 0) {
      if (pr.printed)
        fprintf(stderr, "\n");
      ret = cli_error(CMD, CLI_USAGE, "%s: %s", names[i], err.msg);
      goto out;
    }
  }
  if (pr.printed)
    fprintf(stderr, "\r%60s\r", "");
  if (auto_cluster && !sm_sim_trace_synthetic_p(t) && !o.json)
    fprintf(stderr,
            "schedmate simulate: no --cluster given: sized to %s so the "
            "trace offers a load of %.2f\n",
            sm_sim_cluster_describe(c), o.load_target);
  if (o.jobs_csv) {
    for (int i = 0; i < n; i++) {
      sm_buf b;
      char path[4096];
      sm_buf_init(&b, 0);
      if (n > 1)
        per_policy_path(path, sizeof(path), o.jobs_csv, names[i]);
      else
        snprintf(path, sizeof(path), "%s", o.jobs_csv);
      if (sm_sim_result_jobs_csv(rs[i], &b) != 0)
        ret = cli_error(CMD, CLI_USAGE, "out of memory writing %s", path);
      else if (write_file(path, &b))
        ret = CLI_USAGE;
      sm_buf_release(&b);
      if (ret != CLI_OK)
        goto out;
    }
  }
  if (o.series_csv) {
    for (int i = 0; i < n && ret == CLI_OK; i++) {
      sm_buf b;
      char path[4096];
      const double *t;
      const int *busy, *pend;
      size_t ns = sm_sim_result_series(rs[i], &t, &busy, &pend);
      int gpus = sm_sim_result_summary(rs[i])->gpus;
      sm_buf_init(&b, 0);
      if (n > 1)
        per_policy_path(path, sizeof(path), o.series_csv, names[i]);
      else
        snprintf(path, sizeof(path), "%s", o.series_csv);
      sm_buf_adds(&b, "time_s,busy_gpus,pending_jobs,util\n");
      for (size_t k = 0; k < ns; k++)
        sm_buf_addf(&b, "%.3f,%d,%d,%.6f\n", t[k], busy[k], pend[k],
                    gpus > 0 ? (double)busy[k] / gpus : 0.0);
      if (write_file(path, &b))
        ret = CLI_USAGE;
      sm_buf_release(&b);
    }
    if (ret != CLI_OK)
      goto out;
  }
  if (o.report) {
    sm_buf b;
    sm_buf_init(&b, 0);
    if (sm_sim_report_html((const sm_sim_result *const *)rs, (size_t)n, &b) !=
        0)
      ret = cli_error(CMD, CLI_USAGE, "out of memory writing the report");
    else if (write_file(o.report, &b))
      ret = CLI_USAGE;
    sm_buf_release(&b);
    if (ret != CLI_OK)
      goto out;
  }
  if (o.json) {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    if (o.compare) {
      sm_jw_obj_begin(&w);
      sm_jw_key(&w, "trace");
      sm_jw_str(&w, sm_sim_trace_name(t));
      sm_jw_key(&w, "synthetic");
      sm_jw_bool(&w, sm_sim_trace_synthetic_p(t));
      sm_jw_key(&w, "cluster");
      sm_jw_str(&w, sm_sim_cluster_describe(c));
      if (o.report) {
        sm_jw_key(&w, "report");
        sm_jw_str(&w, o.report);
      }
      sm_jw_key(&w, "results");
      sm_jw_arr_begin(&w);
      for (int i = 0; i < n; i++)
        sm_sim_result_json(rs[i], &w);
      sm_jw_arr_end(&w);
      json_schedmate(rs, n, &o, &w);
      sm_jw_obj_end(&w);
    } else {
      sm_sim_result_json(rs[0], &w);
    }
    if (sm_jw_finish(&w) != 0)
      ret = cli_error(CMD, CLI_USAGE, "out of memory writing JSON");
    else
      ret = cli_emit(&b);
    sm_buf_release(&b);
  } else {
    if (o.compare) {
      print_table(rs, n);
      print_schedmate(rs, n, &o);
    } else {
      print_one(rs[0]);
    }
    if (o.report)
      printf("report     %s\n", o.report);
  }
out:
  for (int i = 0; i < n; i++)
    sm_sim_result_free(rs[i]);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
  return ret;
}
