/* cmd_simulate.c - `schedmate simulate`: replays a trace (or a synthetic
 * one) on a simulated cluster under one policy or several (--compare),
 * and prints a summary, one JSON object, a per-job CSV and an HTML
 * report. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "schedmate/sm_sia.h"
#include "schedmate/sm_sim.h"

#define CMD "simulate"
#define DEFAULT_LUCID "../shared/traces/lucid"
#define MAX_POLICIES 16
#define MAX_RUNS 48
#define MAX_SWEEP 24

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
      "  --facts LIST          where the facts come from, each SchedMate\n"
      "                        path run once per source (default history;\n"
      "                        history,calibrated with --compare):\n"
      "                        history (the history engine online over the\n"
      "                        trace, submission-time information only),\n"
      "                        calibrated (the reference's measured accuracy:\n"
      "                        73 % hits, 85.7 % within 2x), oracle (an upper\n"
      "                        bound that reads each job's outcome)\n"
      "  --sweep KEY=V1,V2,... rerun every SchedMate path that reads KEY with\n"
      "                        each value (e.g. lucid.untracked=1,0.5,0)\n"
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
  const char *facts;       /* --facts list, or NULL for the default */
  const char *sweep;       /* --sweep KEY=V1,V2,... */
  long gpn;                /* --gpus-per-node */
  double load_target;      /* --load */
  int json;                /* --json */
  int progress;            /* -1 auto, 0 off, 1 on */
  int lucid_tables;        /* 1: tables (or builtin) were named */
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

/* Sets parameter key to value (both borrowed: argv or constants). */
static int add_param(opts *o, const char *key, const char *value) {
  if (sm_sim_config_set(&o->cfg, key, value) != 0)
    return cli_usage(CMD, "too many parameters");
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
  O_FAILURES,
  O_SWEEP
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
    {"sweep", required_argument, 0, O_SWEEP},
    {0, 0, 0, 0}};

static const char *const sources[] = {"history", "calibrated", "oracle"};

/* Checks a --facts list: sources from `sources`, each once. */
static int check_sources(const char *list) {
  char seen[3] = {0};
  const char *p = list;

  for (;;) {
    size_t n = strcspn(p, ",");
    int k = -1;
    for (int i = 0; i < 3; i++)
      if (strlen(sources[i]) == n && strncmp(p, sources[i], n) == 0)
        k = i;
    if (k < 0 || seen[k])
      return cli_usage(CMD,
                       "--facts: a list of history, calibrated, oracle "
                       "(each once), got '%s'",
                       list);
    seen[k] = 1;
    if (p[n] == '\0')
      return 0;
    p += n + 1;
  }
}

/* Checks --sweep KEY=V1,V2,...: numbers, at most MAX_SWEEP. */
static int check_sweep(const char *s) {
  const char *eq = strchr(s, '=');
  int n = 0;

  if (eq == NULL || eq == s || eq[1] == '\0')
    return cli_usage(CMD, "--sweep: expected KEY=V1,V2,..., got '%s'", s);
  for (const char *p = eq + 1;; n++) {
    char tmp[64];
    size_t k = strcspn(p, ",");
    double d;
    if (k == 0 || k >= sizeof(tmp) || n == MAX_SWEEP)
      return cli_usage(CMD, "--sweep: expected up to %d numbers, got '%s'",
                       MAX_SWEEP, s);
    memcpy(tmp, p, k);
    tmp[k] = '\0';
    if (sm_parse_double(tmp, &d) != 0)
      return cli_usage(CMD, "--sweep: '%s' is not a number", tmp);
    if (p[k] == '\0')
      return 0;
    p += k + 1;
  }
}

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
      if (add_param(o, "estimator", optarg))
        return CLI_USAGE;
      break;
    case O_BACKFILL:
      if (add_param(o, "backfill", "1"))
        return CLI_USAGE;
      break;
    case O_OVERHEAD:
      if (parse_overheads(o, optarg))
        return CLI_USAGE;
      break;
    case O_TTHR:
      if (add_param(o, "tiresias.thresholds", optarg))
        return CLI_USAGE;
      break;
    case O_TINT:
      if (cli_parse_num(CMD, "--tiresias-interval", optarg, &d))
        return CLI_USAGE;
      if (add_param(o, "tiresias.interval", optarg))
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
      if (check_sources(optarg))
        return CLI_USAGE;
      o->facts = optarg;
      break;
    case O_SWEEP:
      if (check_sweep(optarg))
        return CLI_USAGE;
      o->sweep = optarg;
      break;
    case O_WORKLOADS:
      if (add_param(o, "workloads", optarg))
        return CLI_USAGE;
      break;
    case O_LTABLES:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.tables", optarg))
        return CLI_USAGE;
      break;
    case O_PROFILES:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.profiles", optarg))
        return CLI_USAGE;
      break;
    case O_COLOCATE:
      o->lucid_tables = 1;
      if (add_param(o, "lucid.colocate", optarg))
        return CLI_USAGE;
      break;
    case O_FAILURES:
      if (strcmp(optarg, "trace") != 0 && strcmp(optarg, "resubmit") != 0)
        return cli_usage(CMD, "--failures: trace or resubmit");
      if (add_param(o, "fail.model", optarg))
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

/* ==== The runs ==== */

/* One run of a comparison: a policy, and the facts source of a policy
 * that consumes SchedMate's facts. */
typedef struct runspec {
  char policy[48];   /* policy name */
  const char *facts; /* facts source, NULL for a policy without facts */
  char label[80];    /* as printed: policy [facts] when it has twins */
} runspec;

static int consumes_facts(const opts *o, const char *policy) {
  const sm_sim_policy *p = sm_sim_policy_find(policy);
  return p != NULL &&
         ((p->flags & SM_SIM_POLICY_FACTS) ||
          ((p->flags & SM_SIM_POLICY_SEMANTIC) && o->cfg.semantic != NULL &&
           strcmp(o->cfg.semantic, "on") == 0));
}

/* Splits --compare (or --policy) into runs: one per policy, one per
 * facts source for the policies that consume facts.  Checks that every
 * policy exists. */
static int plan(const opts *o, runspec *rs, int *n) {
  const char *p = o->compare ? o->compare : o->cfg.policy;
  const char *src[3];
  int nsrc = 0, npol = 0, any = 0;
  char names[MAX_POLICIES][48];

  *n = 0;
  for (;;) {
    const char *c = strchr(p, ',');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len == 0 || len >= 48)
      return cli_usage(CMD, "bad policy list '%s'", o->compare);
    if (npol == MAX_POLICIES)
      return cli_usage(CMD, "at most %d policies", MAX_POLICIES);
    memcpy(names[npol], p, len);
    names[npol][len] = '\0';
    if (sm_sim_policy_find(names[npol]) == NULL) {
      fprintf(stderr,
              "schedmate simulate: unknown policy '%s'; known:", names[npol]);
      for (size_t i = 0; sm_sim_policy_at(i); i++)
        fprintf(stderr, " %s", sm_sim_policy_at(i)->name);
      fprintf(stderr, "\n");
      return CLI_USAGE;
    }
    any |= consumes_facts(o, names[npol]);
    npol++;
    if (c == NULL)
      break;
    p = c + 1;
  }
  {
    const char *list = o->facts            ? o->facts
                       : o->compare && any ? "history,calibrated"
                                           : "history";
    for (const char *q = list;;) {
      size_t k = strcspn(q, ",");
      for (int i = 0; i < 3; i++)
        if (strlen(sources[i]) == k && strncmp(q, sources[i], k) == 0)
          src[nsrc++] = sources[i];
      if (q[k] == '\0')
        break;
      q += k + 1;
    }
  }
  for (int i = 0; i < npol; i++) {
    int cf = consumes_facts(o, names[i]);
    const sm_sim_policy *pol = sm_sim_policy_find(names[i]);
    /* A policy with its own history runs once, under "history". */
    int own = cf && (pol->flags & SM_SIM_POLICY_HISTORY_ONLY);
    for (int k = 0; k < (cf && !own ? nsrc : 1); k++) {
      runspec *r = &rs[*n];
      const char *fs = own ? "history" : cf ? src[k] : NULL;
      if (*n == MAX_RUNS)
        return cli_usage(CMD, "at most %d runs (policies x facts sources)",
                         MAX_RUNS);
      memset(r, 0, sizeof(*r));
      snprintf(r->policy, sizeof(r->policy), "%.47s", names[i]);
      r->facts = fs;
      if (cf && !own && nsrc > 1)
        snprintf(r->label, sizeof(r->label), "%.47s [%.12s]", names[i], fs);
      else
        snprintf(r->label, sizeof(r->label), "%.47s", names[i]);
      (*n)++;
    }
  }
  return 0;
}

/* The configuration of one run: the options' settings, the run's facts
 * source and, for a sweep, one more setting. */
static int run_config(const opts *o, const runspec *r, const char *key,
                      const char *value, sm_sim_config *cfg) {
  *cfg = o->cfg;
  cfg->policy = r->policy;
  if (r->facts != NULL && sm_sim_config_set(cfg, "facts", r->facts) != 0)
    return cli_usage(CMD, "too many parameters");
  if (key != NULL && sm_sim_config_set(cfg, key, value) != 0)
    return cli_usage(CMD, "too many parameters");
  return 0;
}

/* ==== Output files: made before the runs, filled after ==== */

/* An output file is first a temporary file in the same directory, made
 * before anything runs (an unwritable path fails at once, not after a
 * long simulation), and renamed into place once written. */
typedef struct outfile {
  char path[4096]; /* where it goes */
  char tmp[4200];  /* the temporary file, "" when none */
  int fd;          /* its descriptor, -1 when closed */
} outfile;

static int out_open(outfile *f, const char *path) {
  const char *slash = strrchr(path, '/');
  int dl = slash ? (int)(slash - path) + 1 : 0;

  snprintf(f->path, sizeof(f->path), "%s", path);
  snprintf(f->tmp, sizeof(f->tmp), "%.*s.%s.XXXXXX", dl, path,
           slash ? slash + 1 : path);
  f->fd = mkstemp(f->tmp);
  if (f->fd < 0) {
    f->tmp[0] = '\0';
    return cli_error(CMD, CLI_USAGE, "%s: cannot create: %m", path);
  }
  return 0;
}

static void out_discard(outfile *f) {
  if (f->fd >= 0)
    close(f->fd);
  if (f->tmp[0])
    unlink(f->tmp);
  f->fd = -1;
  f->tmp[0] = '\0';
}

static int out_commit(outfile *f, const sm_buf *b) {
  size_t off = 0;
  mode_t mask;

  while (off < b->len) {
    ssize_t k = write(f->fd, b->data + off, b->len - off);
    if (k <= 0) {
      out_discard(f);
      return cli_error(CMD, CLI_USAGE, "%s: write failed", f->path);
    }
    off += (size_t)k;
  }
  mask = umask(0);
  umask(mask);
  if (fchmod(f->fd, 0666 & ~mask) != 0 || close(f->fd) != 0 ||
      rename(f->tmp, f->path) != 0) {
    f->fd = -1;
    out_discard(f);
    return cli_error(CMD, CLI_USAGE, "%s: write failed: %m", f->path);
  }
  f->fd = -1;
  f->tmp[0] = '\0';
  return 0;
}

/* FILE.csv -> FILE.POLICY[.FACTS].csv */
static void per_run_path(char *out, size_t n, const char *path,
                         const runspec *r) {
  const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
  char tag[96];

  if (strchr(r->label, '['))
    snprintf(tag, sizeof(tag), "%s.%s", r->policy, r->facts);
  else
    snprintf(tag, sizeof(tag), "%s", r->policy);
  if (dot == NULL || (slash != NULL && dot < slash))
    snprintf(out, n, "%s.%s", path, tag);
  else
    snprintf(out, n, "%.*s.%s%s", (int)(dot - path), path, tag, dot);
}

/* ==== Text ==== */

static void num_h(char *b, size_t n, double v) {
  if (isnan(v))
    snprintf(b, n, "-");
  else
    snprintf(b, n, "%.0f", v);
}

#define QUEUE_DEF                                                              \
  "queueing delay = all the time a job spends pending: before its first "      \
  "start and after every preemption or eviction (Lucid's measure)"

static void print_header(const sm_sim_result *r) {
  const sm_sim_summary *m = sm_sim_result_summary(r);

  if (m->synthetic)
    printf("SYNTHETIC trace (generated from published statistics, not "
           "real jobs)\n");
  printf("trace      %s: %zu jobs simulated, %zu left out%s%s%s\n", m->trace,
         m->jobs, m->dropped, sm_sim_result_dropped_why(r)[0] ? " (" : "",
         sm_sim_result_dropped_why(r),
         sm_sim_result_dropped_why(r)[0] ? ")" : "");
  printf("cluster    %d GPUs on %d nodes, %d VC%s: %s; offered load %.2f\n",
         m->gpus, m->nodes, m->vcs, m->vcs == 1 ? "" : "s",
         sm_sim_result_cluster_origin(r), m->offered_load);
}

static void print_one(const sm_sim_result *r) {
  const sm_sim_summary *m = sm_sim_result_summary(r);
  char a[32], b[32], c[32];

  print_header(r);
  printf("policy     %s (semantic %s%s%s)\n", m->policy, m->semantic,
         m->facts[0] ? ", facts " : "", m->facts);
  num_h(a, sizeof(a), m->avg_jct_s);
  num_h(b, sizeof(b), m->median_jct_s);
  num_h(c, sizeof(c), m->p99_jct_s);
  printf("JCT        avg %s s, median %s s, p99 %s s\n", a, b, c);
  num_h(a, sizeof(a), m->avg_wait_s);
  num_h(b, sizeof(b), m->median_wait_s);
  num_h(c, sizeof(c), m->p99_wait_s);
  printf("queueing   avg %s s, median %s s, p99 %s s (all time pending)\n", a,
         b, c);
  num_h(a, sizeof(a), m->avg_queue_s);
  printf("first start avg %s s after submission\n", a);
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

static int label_width(const runspec *spec, int n, int min) {
  int w = min;
  for (int i = 0; i < n; i++)
    if ((int)strlen(spec[i].label) > w)
      w = (int)strlen(spec[i].label);
  return w;
}

static void print_table(sm_sim_result **rs, const runspec *spec, int n) {
  int w = label_width(spec, n, 6);

  print_header(rs[0]);
  printf("\n%-*s %11s %11s %11s %11s %11s %11s %6s %8s %8s\n", w, "policy",
         "avg JCT s", "median JCT", "p99 JCT s", "avg queue s", "p99 queue s",
         "makespan s", "util", "preempt", "wall s");
  for (int i = 0; i < n; i++) {
    const sm_sim_summary *m = sm_sim_result_summary(rs[i]);
    printf("%-*s %11.0f %11.0f %11.0f %11.0f %11.0f %11.0f %5.1f%% %8zu "
           "%8.3f\n",
           w, spec[i].label, m->avg_jct_s, m->median_jct_s, m->p99_jct_s,
           m->avg_wait_s, m->p99_wait_s, m->makespan_s, 100 * m->avg_util,
           m->preemptions, m->wall_s);
  }
  printf("queue: " QUEUE_DEF "\n");
  for (int i = 0; i < n; i++) {
    size_t k, ns = sm_sim_result_stat_count(rs[i]);
    if (ns == 0)
      continue;
    printf("stats (%s):", spec[i].label);
    for (k = 0; k < ns; k++) {
      double v;
      const char *name = sm_sim_result_stat(rs[i], k, &v);
      printf("%s %s=%g", k ? "," : "", name, v);
    }
    printf("\n");
  }
  /* Notes every run shares (the trace's) once, the others per run. */
  for (int i = 0; i < n; i++)
    for (size_t k = 0; k < sm_sim_result_note_count(rs[i]); k++) {
      const char *note = sm_sim_result_note(rs[i], k);
      if (note_everywhere(rs, n, note)) {
        if (i == 0)
          printf("note: %s\n", note);
      } else {
        printf("note (%s): %s\n", spec[i].label, note);
      }
    }
}

/* ==== SchedMate paths ==== */

typedef struct sweep {
  char key[64];           /* the parameter */
  double v[MAX_SWEEP];    /* its values */
  int nv;                 /* their count */
  sm_sim_sweep_point *pt; /* points, run-major */
  int npt;                /* their count */
} sweep;

#define RUNS(rs) ((const sm_sim_result *const *)(rs))

/* Where the fingerprints and the facts come from, and what each source
 * means. */
static void print_sources(const sm_sim_schedmate_summary *sum) {
  printf("\nSchedMate in the schedulers (%s trace; fingerprints from %s%s)\n",
         sum->synthetic ? "SYNTHETIC" : "real",
         sum->workloads ? "the workload templates in "
                        : "the trace's attributes only",
         sum->workloads ? sum->workloads : "");
  for (size_t k = 0; k < sum->nsources; k++)
    printf("facts %-10s %s\n", sum->sources[k],
           sm_sim_facts_meaning(sum->sources[k]));
}

/* The headline figures of every run, the load and the failure model. */
static void print_headline(sm_sim_result **rs, const runspec *spec, int n,
                           const sm_sim_schedmate_summary *sum) {
  int w = label_width(spec, n, 6);
  sm_buf b;

  printf("%-*s %12s %12s %14s %12s\n", w, "policy", "avg JCT s", "p99 JCT s",
         "avg queue s", "makespan s");
  for (int i = 0; i < n; i++) {
    const sm_sim_summary *m = sm_sim_result_summary(rs[i]);
    printf("%-*s %12.0f %12.0f %14.0f %12.0f\n", w, spec[i].label, m->avg_jct_s,
           m->p99_jct_s, m->avg_wait_s, m->makespan_s);
  }
  printf("queue: " QUEUE_DEF "\n");
  printf("offered load %.2f; GPU utilisation %.1f-%.1f%% over the "
         "makespan%s\n",
         sum->offered_load, 100 * sum->util_lo, 100 * sum->util_hi,
         sum->util_hi < 0.3 ? ": queues are short, so the order of the queue "
                              "matters little here"
                            : "");
  sm_buf_init(&b, 0);
  sm_sim_failures_line(sum, &b);
  printf("%s\n", sm_buf_str(&b));
  sm_buf_release(&b);
}

/* Each SchedMate path against its baseline. */
static void print_speedups(const runspec *spec,
                           const sm_sim_schedmate_summary *sum) {
  const sm_sim_speedup *sp = sum->speedups;
  int pw = 26;

  if (sum->nspeedups == 0)
    return;
  for (size_t k = 0; k < sum->nspeedups; k++) {
    int l = (int)(strlen(spec[sp[k].path_run].label) +
                  strlen(spec[sp[k].base_run].label) + 4);
    pw = l > pw ? l : pw;
  }
  printf("%-*s %8s %8s %9s %9s %14s\n", pw, "speed-up (baseline / path)",
         "avg JCT", "p99 JCT", "avg queue", "makespan", "avg JCT change");
  for (size_t k = 0; k < sum->nspeedups; k++) {
    char name[192], r[4][16];
    const double v[4] = {sp[k].avg_jct_speedup, sp[k].p99_jct_speedup,
                         sp[k].avg_wait_speedup, sp[k].makespan_speedup};
    snprintf(name, sizeof(name), "%s vs %s", spec[sp[k].path_run].label,
             spec[sp[k].base_run].label);
    for (int q = 0; q < 4; q++)
      if (isfinite(v[q]))
        snprintf(r[q], sizeof(r[q]), "%.3fx", v[q]);
      else
        snprintf(r[q], sizeof(r[q]), "-"); /* nothing to divide by */
    printf("%-*s %8s %8s %9s %9s %+13.1f%%\n", pw, name, r[0], r[1], r[2], r[3],
           100 * sp[k].avg_jct_change);
  }
}

static void print_sweep(const runspec *spec, const sweep *sw) {
  int det = strcmp(sw->key, "lucid.untracked") == 0;

  printf("sweep of %s%s:\n", sw->key,
         det ? " (Tracker detection rate = 1 - lucid.untracked)" : "");
  for (int k = 0; k < sw->npt; k += sw->nv) {
    const sm_sim_sweep_point *p0 = &sw->pt[k];
    printf("  %s:", spec[p0->run].label);
    for (int v = 0; v < sw->nv; v++) {
      const sm_sim_sweep_point *p = &sw->pt[k + v];
      printf("%s %s %.2f: avg JCT %.0f s (%+.1f%%)", v ? "," : "",
             det ? "detection" : "value", det ? 1 - p->value : p->value,
             p->avg_jct_s, 100 * (p->avg_jct_s / p0->avg_jct_s - 1));
    }
    printf("\n");
  }
  printf("  (%% change against the first value of the sweep)\n");
}

/* The paper-style comparison: the headline figures of every run, the
 * speed-up of each SchedMate path over its baseline, where the facts
 * came from and what they did in each run. */
static void print_schedmate(sm_sim_result **rs, const runspec *spec, int n,
                            const sweep *sw) {
  sm_sim_schedmate_summary sum;
  sm_buf b;

  sm_sim_schedmate_summarize(RUNS(rs), (size_t)n, &sum);
  if (!sum.any)
    return;
  print_sources(&sum);
  print_headline(rs, spec, n, &sum);
  print_speedups(spec, &sum);
  sm_buf_init(&b, 0);
  for (int i = 0; i < n; i++) {
    sm_buf_reset(&b);
    if (sm_sim_schedmate_line(RUNS(rs), (size_t)n, (size_t)i, &b))
      printf("%s\n", sm_buf_str(&b));
  }
  sm_buf_release(&b);
  if (sw != NULL && sw->npt > 0)
    print_sweep(spec, sw);
}

static void json_sweep(const runspec *spec, const sweep *sw, sm_jw *w) {
  sm_jw_key(w, "sweep");
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "param", sw->key);
  sm_jw_key(w, "points");
  sm_jw_arr_begin(w);
  for (int k = 0; k < sw->npt; k++) {
    const sm_sim_sweep_point *p = &sw->pt[k];
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "path", spec[p->run].policy);
    sm_jw_kv_str(w, "facts", spec[p->run].facts);
    sm_jw_kv_num(w, "value", p->value);
    sm_jw_kv_num(w, "avg_jct_s", p->avg_jct_s);
    sm_jw_kv_num(w, "p99_jct_s", p->p99_jct_s);
    sm_jw_kv_num(w, "evictions", p->evictions);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_obj_end(w);
}

static void json_schedmate(sm_sim_result **rs, const runspec *spec, int n,
                           const sweep *sw, sm_jw *w) {
  sm_sim_schedmate_summary sum;
  char list[64] = "";

  sm_sim_schedmate_summarize(RUNS(rs), (size_t)n, &sum);
  for (size_t k = 0; k < sum.nsources; k++) {
    size_t l = strlen(list);
    snprintf(list + l, sizeof(list) - l, "%s%s", l ? "," : "", sum.sources[k]);
  }
  sm_jw_key(w, "schedmate");
  sm_jw_obj_begin(w);
  /* "history" for one source, "history,calibrated" for two. */
  sm_jw_kv_str(w, "facts", list[0] ? list : "history");
  sm_jw_key(w, "sources");
  sm_jw_arr_begin(w);
  for (size_t k = 0; k < sum.nsources; k++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "name", sum.sources[k]);
    sm_jw_kv_str(w, "meaning", sm_sim_facts_meaning(sum.sources[k]));
    sm_jw_kv_bool(w, "upper_bound", strcmp(sum.sources[k], "oracle") == 0);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_key(w, "workloads");
  if (sum.workloads)
    sm_jw_str(w, sum.workloads);
  else
    sm_jw_null(w);
  sm_jw_key(w, "speedups");
  sm_jw_arr_begin(w);
  for (size_t k = 0; k < sum.nspeedups; k++) {
    const sm_sim_speedup *sp = &sum.speedups[k];
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "path", sp->path);
    sm_jw_kv_str(w, "baseline", sp->baseline);
    sm_jw_kv_str(w, "facts", sp->facts);
    sm_jw_kv_num(w, "avg_jct_speedup", sp->avg_jct_speedup);
    sm_jw_kv_num(w, "p99_jct_speedup", sp->p99_jct_speedup);
    sm_jw_kv_num(w, "avg_queue_speedup", sp->avg_wait_speedup);
    sm_jw_kv_num(w, "makespan_speedup", sp->makespan_speedup);
    sm_jw_kv_num(w, "avg_jct_change", sp->avg_jct_change);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  if (sw != NULL && sw->npt > 0)
    json_sweep(spec, sw, w);
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
    char spec[64], why[160];
    int g = sm_sim_trace_calibrated_gpus(*t);
    snprintf(spec, sizeof(spec), "%ldx%ld", (g + o->gpn - 1) / o->gpn, o->gpn);
    rc = sm_sim_cluster_parse(spec, c, &err);
    snprintf(why, sizeof(why),
             "the published size of the cluster the trace is calibrated to "
             "(%d GPUs)",
             g);
    if (rc == 0)
      sm_sim_cluster_set_origin(*c, why);
  } else
    rc = sm_sim_cluster_auto(*t, (int)o->gpn, o->load_target, c, &err);
  if (rc != 0) {
    sm_sim_trace_free(*t);
    *t = NULL;
    return cli_error(CMD, CLI_USAGE, "%s", err.msg);
  }
  return 0;
}

/* Reruns every SchedMate path that reads the swept parameter, once per
 * value. */
static int run_sweep(const opts *o, const sm_sim_trace *t,
                     const sm_sim_cluster *c, const runspec *spec, int n,
                     sm_sim_result **rs, sweep *sw) {
  const char *eq = strchr(o->sweep, '=');
  char val[MAX_SWEEP][64];
  int paths = 0;

  snprintf(sw->key, sizeof(sw->key), "%.*s", (int)(eq - o->sweep), o->sweep);
  for (const char *p = eq + 1; sw->nv < MAX_SWEEP;) {
    size_t k = strcspn(p, ",");
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%.*s", (int)k, p);
    sm_parse_double(tmp, &sw->v[sw->nv]);
    snprintf(val[sw->nv], sizeof(val[0]), "%.30s", tmp);
    sw->nv++;
    if (p[k] == '\0')
      break;
    p += k + 1;
  }
  for (int i = 0; i < n; i++)
    paths += spec[i].facts != NULL && sm_sim_result_reads_param(rs[i], sw->key);
  if (paths == 0)
    return cli_usage(CMD,
                     "--sweep: no SchedMate path of the comparison "
                     "reads '%s'",
                     sw->key);
  sw->pt = calloc((size_t)(paths * sw->nv), sizeof(*sw->pt));
  if (sw->pt == NULL)
    return cli_error(CMD, CLI_USAGE, "out of memory");
  for (int i = 0; i < n; i++) {
    if (spec[i].facts == NULL || !sm_sim_result_reads_param(rs[i], sw->key))
      continue;
    for (int v = 0; v < sw->nv; v++) {
      sm_sim_config cfg;
      sm_sim_result *r = NULL;
      sm_err err = {0};
      sm_sim_sweep_point *p = &sw->pt[sw->npt++];
      if (run_config(o, &spec[i], sw->key, val[v], &cfg))
        return CLI_USAGE;
      cfg.progress = NULL;
      if (sm_sim_run(t, c, &cfg, &r, &err) != 0)
        return cli_error(CMD, CLI_USAGE, "%s (%s=%s): %s", spec[i].label,
                         sw->key, val[v], err.msg);
      *p = sm_sim_sweep_point_of(r, (size_t)i, sw->v[v]);
      sm_sim_result_free(r);
    }
  }
  return 0;
}

int cmd_simulate(int argc, char **argv) {
  opts o;
  runspec spec[MAX_RUNS];
  sm_sim_result *rs[MAX_RUNS] = {0};
  outfile report = {"", "", -1}, jobs[MAX_RUNS], series[MAX_RUNS];
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  sweep sw;
  prog pr = {0};
  int n = 0, ran = 0, rc, ret = CLI_OK;
  int auto_cluster;

  memset(&sw, 0, sizeof(sw));
  for (int i = 0; i < MAX_RUNS; i++)
    jobs[i].fd = series[i].fd = -1, jobs[i].tmp[0] = series[i].tmp[0] = '\0';
  rc = parse(argc, argv, &o);
  if (rc != 0)
    return rc < 0 ? CLI_OK : rc;
  /* Lucid's tables are not shipped (non-commercial licence): use the
   * staged copy when it is there, else the built-in model. */
  if (!o.lucid_tables && sm_sim_config_get(&o.cfg, "lucid.tables") == NULL &&
      sm_sim_config_get(&o.cfg, "lucid.profiles") == NULL &&
      sm_sim_config_get(&o.cfg, "lucid.colocate") == NULL &&
      access(DEFAULT_LUCID "/single_data.csv", R_OK) == 0 &&
      access(DEFAULT_LUCID "/colocate_info.csv", R_OK) == 0 &&
      add_param(&o, "lucid.tables", DEFAULT_LUCID))
    return CLI_USAGE;
  if (plan(&o, spec, &n))
    return CLI_USAGE;
  if (o.sweep != NULL && !o.compare)
    return cli_usage(CMD, "--sweep needs --compare");
  /* Every output file exists (as a temporary file) before anything
   * runs. */
  if (o.report && out_open(&report, o.report))
    return CLI_USAGE;
  for (int i = 0; i < n && ret == CLI_OK; i++) {
    char path[4096];
    if (o.jobs_csv) {
      if (n > 1)
        per_run_path(path, sizeof(path), o.jobs_csv, &spec[i]);
      else
        snprintf(path, sizeof(path), "%s", o.jobs_csv);
      ret = out_open(&jobs[i], path);
    }
    if (o.series_csv && ret == CLI_OK) {
      if (n > 1)
        per_run_path(path, sizeof(path), o.series_csv, &spec[i]);
      else
        snprintf(path, sizeof(path), "%s", o.series_csv);
      ret = out_open(&series[i], path);
    }
  }
  if (ret != CLI_OK)
    goto out;
  auto_cluster = !o.cluster && !o.vc_config;
  if (inputs(&o, &t, &c)) {
    ret = CLI_USAGE;
    goto out;
  }
  if (o.progress < 0)
    o.progress = isatty(STDERR_FILENO);
  if (o.progress) {
    o.cfg.progress = on_progress;
    o.cfg.progress_ud = &pr;
  }
  for (int i = 0; i < n; i++) {
    sm_err err = {0};
    sm_sim_config cfg;
    if (run_config(&o, &spec[i], NULL, NULL, &cfg)) {
      ret = CLI_USAGE;
      goto out;
    }
    pr.policy = spec[i].label;
    pr.idx = i;
    pr.n = n;
    rc = sm_sim_run(t, c, &cfg, &rs[i], &err);
    if (rc != 0) {
      if (pr.printed)
        fprintf(stderr, "\n");
      ret = cli_error(CMD, CLI_USAGE, "%s: %s", spec[i].label, err.msg);
      goto out;
    }
    ran++;
  }
  if (o.sweep != NULL && run_sweep(&o, t, c, spec, n, rs, &sw)) {
    ret = CLI_USAGE;
    goto out;
  }
  if (pr.printed)
    fprintf(stderr, "\r%60s\r", "");
  if (auto_cluster && !sm_sim_trace_synthetic_p(t) && !o.json)
    fprintf(stderr,
            "schedmate simulate: no --cluster given: sized to %s so the "
            "trace offers a load of %.2f\n",
            sm_sim_cluster_describe(c), o.load_target);
  for (int i = 0; i < n && ret == CLI_OK; i++) {
    if (o.jobs_csv) {
      sm_buf b;
      sm_buf_init(&b, 0);
      if (sm_sim_result_jobs_csv(rs[i], &b) != 0)
        ret =
            cli_error(CMD, CLI_USAGE, "out of memory writing %s", jobs[i].path);
      else
        ret = out_commit(&jobs[i], &b);
      sm_buf_release(&b);
    }
    if (o.series_csv && ret == CLI_OK) {
      sm_buf b;
      const double *st;
      const int *busy, *pend;
      size_t ns = sm_sim_result_series(rs[i], &st, &busy, &pend);
      int gpus = sm_sim_result_summary(rs[i])->gpus;
      sm_buf_init(&b, 0);
      sm_buf_adds(&b, "time_s,busy_gpus,pending_jobs,util\n");
      for (size_t k = 0; k < ns; k++)
        sm_buf_addf(&b, "%.3f,%d,%d,%.6f\n", st[k], busy[k], pend[k],
                    gpus > 0 ? (double)busy[k] / gpus : 0.0);
      ret = out_commit(&series[i], &b);
      sm_buf_release(&b);
    }
  }
  if (ret != CLI_OK)
    goto out;
  if (o.report) {
    sm_buf b;
    sm_sim_report_opts ro;
    memset(&ro, 0, sizeof(ro));
    if (sw.npt > 0) {
      ro.sweep_param = sw.key;
      ro.sweep = sw.pt;
      ro.nsweep = (size_t)sw.npt;
    }
    sm_buf_init(&b, 0);
    if (sm_sim_report_html_ex((const sm_sim_result *const *)rs, (size_t)n, &ro,
                              &b) != 0)
      ret = cli_error(CMD, CLI_USAGE, "out of memory writing the report");
    else
      ret = out_commit(&report, &b);
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
      sm_jw_key(&w, "cluster_origin");
      sm_jw_str(&w, sm_sim_cluster_origin(c));
      if (o.report) {
        sm_jw_key(&w, "report");
        sm_jw_str(&w, o.report);
      }
      sm_jw_key(&w, "results");
      sm_jw_arr_begin(&w);
      for (int i = 0; i < n; i++)
        sm_sim_result_json(rs[i], &w);
      sm_jw_arr_end(&w);
      json_schedmate(rs, spec, n, &sw, &w);
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
      print_table(rs, spec, n);
      print_schedmate(rs, spec, n, &sw);
    } else {
      print_one(rs[0]);
    }
    if (o.report)
      printf("report     %s\n", o.report);
  }
out:
  out_discard(&report);
  for (int i = 0; i < MAX_RUNS; i++) {
    out_discard(&jobs[i]);
    out_discard(&series[i]);
  }
  for (int i = 0; i < ran; i++)
    sm_sim_result_free(rs[i]);
  free(sw.pt);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
  return ret;
}
