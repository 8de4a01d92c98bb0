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

/* ==== Options ==== */

/* The options are one table, in the style of git's parse-options (the
 * layout of the command-line option tables of cli/options.h, to which it
 * is meant to move): an entry stores its value into a field of opts, sets
 * a flag, or calls a handler that checks the value and stores it. */
typedef struct sim_opt sim_opt;
typedef int (*sim_opt_cb)(const sim_opt *opt, const char *arg);

enum { SO_T_END = 0, SO_T_FLAG, SO_T_STRING, SO_T_CALLBACK };

struct sim_opt {
  int type;         /* SO_T_* */
  const char *name; /* long name without "--" */
  int has_arg;      /* 1: takes a value */
  void *value;      /* where it goes (the handler's data: opts) */
  int defval;       /* SO_T_FLAG: the value stored */
  sim_opt_cb cb;    /* SO_T_CALLBACK: the handler */
};

#define SO_FLAG(name, var, val)                                                \
  { SO_T_FLAG, (name), 0, (var), (val), NULL }
#define SO_STRING(name, var)                                                   \
  { SO_T_STRING, (name), 1, (var), 0, NULL }
#define SO_CALLBACK(name, o, cb)                                               \
  { SO_T_CALLBACK, (name), 1, (o), 0, (cb) }
#define SO_END()                                                               \
  { SO_T_END, NULL, 0, NULL, 0, NULL }

/* The options that set a policy parameter, and its key. */
static const struct {
  const char *option, *key;
} param_options[] = {{"estimator", "estimator"},
                     {"tiresias-thresholds", "tiresias.thresholds"},
                     {"tiresias-interval", "tiresias.interval"},
                     {"workloads", "workloads"},
                     {"lucid-tables", "lucid.tables"},
                     {"profiles", "lucid.profiles"},
                     {"colocate", "lucid.colocate"},
                     {"failures", "fail.model"}};

static int opt_param_option(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;
  double d;

  if (strcmp(opt->name, "tiresias-interval") == 0 &&
      cli_parse_num(CMD, "--tiresias-interval", arg, &d))
    return CLI_USAGE;
  if (strcmp(opt->name, "failures") == 0 && strcmp(arg, "trace") != 0 &&
      strcmp(arg, "resubmit") != 0)
    return cli_usage(CMD, "--failures: trace or resubmit");
  if (strcmp(opt->name, "lucid-tables") == 0 ||
      strcmp(opt->name, "profiles") == 0 || strcmp(opt->name, "colocate") == 0)
    o->lucid_tables = 1;
  for (size_t i = 0; i < SM_ARRAY_LEN(param_options); i++)
    if (strcmp(param_options[i].option, opt->name) == 0)
      return add_param(o, param_options[i].key, arg);
  return cli_usage(CMD, "--%s: not a parameter", opt->name);
}

static int opt_param(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  if (strchr(arg, '=') == NULL || arg[0] == '=')
    return cli_usage(CMD, "--param: expected KEY=VALUE, got '%s'", arg);
  if (sm_sim_config_param(&o->cfg, arg) != 0)
    return cli_usage(CMD, "too many --param");
  return 0;
}

static int opt_backfill(const sim_opt *opt, const char *arg) {
  (void)arg;
  return add_param(opt->value, "backfill", "1");
}

static int opt_format(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  o->load.format = sm_sim_format_parse(arg);
  if (o->load.format < 0)
    return cli_usage(CMD, "unknown --format '%s'", arg);
  return 0;
}

static int opt_limit(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;
  long v;

  if (cli_parse_int(CMD, "--limit", arg, 1, 100000000, &v))
    return CLI_USAGE;
  o->load.limit = (size_t)v;
  return 0;
}

static int opt_synth_days(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;
  double d;

  if (cli_parse_num(CMD, "--synthetic-days", arg, &d))
    return CLI_USAGE;
  if (!(d > 0 && d <= 3650))
    return cli_usage(CMD, "--synthetic-days: expected 0 < D <= 3650");
  o->synth.days = d;
  return 0;
}

static int opt_synth_jobs(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;
  long v;

  if (cli_parse_int(CMD, "--synthetic-jobs", arg, 1, 20000000, &v))
    return CLI_USAGE;
  o->synth.jobs = (size_t)v;
  return 0;
}

static int opt_gpn(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  return cli_parse_int(CMD, "--gpus-per-node", arg, 1, 1024, &o->gpn)
             ? CLI_USAGE
             : 0;
}

static int opt_load(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  if (cli_parse_num(CMD, "--load", arg, &o->load_target))
    return CLI_USAGE;
  if (!(o->load_target > 0 && o->load_target <= 1))
    return cli_usage(CMD, "--load: expected 0 < L <= 1");
  return 0;
}

/* One of words (NULL-terminated) into *out as its index, else the
 * message "--OPTION: what". */
static int one_of(const char *arg, const char *const *words, int *out,
                  const char *option, const char *what) {
  for (int i = 0; words[i] != NULL; i++)
    if (strcmp(arg, words[i]) == 0) {
      *out = i;
      return 0;
    }
  return cli_usage(CMD, "--%s: %s", option, what);
}

static int opt_placement(const sim_opt *opt, const char *arg) {
  static const char *const w[] = {"consolidate", "first-fit", NULL};
  opts *o = opt->value;
  int k = 0, rc = one_of(arg, w, &k, "placement", "consolidate or first-fit");

  o->cfg.placement = k == 1 ? SM_SIM_PLACE_FIRST_FIT : SM_SIM_PLACE_CONSOLIDATE;
  return rc;
}

static int opt_oversize(const sim_opt *opt, const char *arg) {
  static const char *const w[] = {"cap", "drop", "error", NULL};
  static const int v[] = {SM_SIM_OVERSIZE_CAP, SM_SIM_OVERSIZE_DROP,
                          SM_SIM_OVERSIZE_ERROR};
  opts *o = opt->value;
  int k = 0, rc = one_of(arg, w, &k, "oversize", "cap, drop or error");

  if (rc == 0)
    o->cfg.oversize = v[k];
  return rc;
}

static int opt_unknown_vc(const sim_opt *opt, const char *arg) {
  static const char *const w[] = {"drop", "error", NULL};
  opts *o = opt->value;
  int k = 0, rc = one_of(arg, w, &k, "unknown-vc", "drop or error");

  if (rc == 0)
    o->cfg.unknown_vc_error = k == 1;
  return rc;
}

static int opt_semantic(const sim_opt *opt, const char *arg) {
  static const char *const w[] = {"on", "off", NULL};
  opts *o = opt->value;
  int k = 0, rc = one_of(arg, w, &k, "semantic", "on or off");

  if (rc == 0)
    o->cfg.semantic = arg;
  return rc;
}

static int opt_overhead(const sim_opt *opt, const char *arg) {
  return parse_overheads(opt->value, arg) ? CLI_USAGE : 0;
}

static int opt_seed(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;
  long long s;

  if (sm_parse_i64(arg, &s) != 0 || s < 0)
    return cli_usage(CMD, "--seed: expected a non-negative integer");
  o->cfg.seed = o->load.seed = o->synth.seed = (uint64_t)s;
  return 0;
}

static int opt_facts(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  if (check_sources(arg))
    return CLI_USAGE;
  o->facts = arg;
  return 0;
}

static int opt_sweep(const sim_opt *opt, const char *arg) {
  opts *o = opt->value;

  if (check_sweep(arg))
    return CLI_USAGE;
  o->sweep = arg;
  return 0;
}

static int opt_help(const sim_opt *opt, const char *arg) {
  (void)opt;
  (void)arg;
  usage(stdout);
  return -1;
}

#define MAX_OPTS 48

/* Parses argv against table with getopt_long: 0, -1 after --help, or
 * CLI_USAGE after the message. */
static int parse_table(int argc, char **argv, const sim_opt *table) {
  struct option lo[MAX_OPTS + 1];
  int n = 0, c;

  for (; table[n].type != SO_T_END; n++) {
    SM_ASSERT(n < MAX_OPTS);
    lo[n].name = table[n].name;
    lo[n].has_arg = table[n].has_arg ? required_argument : no_argument;
    lo[n].flag = NULL;
    lo[n].val = 256 + n;
  }
  memset(&lo[n], 0, sizeof(lo[n]));
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    const sim_opt *e;
    int rc;
    if (c == 'h')
      return opt_help(NULL, NULL);
    if (c < 256 || c >= 256 + n) {
      if (optopt)
        return cli_usage(CMD, "bad option or missing value near '%s'",
                         argv[optind - 1]);
      return cli_usage(CMD, "unknown option '%s'", argv[optind - 1]);
    }
    e = &table[c - 256];
    if (e->type == SO_T_FLAG)
      *(int *)e->value = e->defval;
    else if (e->type == SO_T_STRING)
      *(const char **)e->value = optarg;
    else if ((rc = e->cb(e, optarg)) != 0)
      return rc;
  }
  if (optind < argc)
    return cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
  return 0;
}

/* Options that belong to the other source of jobs, or exclude each
 * other. */
static int check_combination(const opts *o) {
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

static int parse(int argc, char **argv, opts *o) {
  const sim_opt table[] = {
      /* Trace. */
      SO_STRING("trace", &o->trace),
      SO_CALLBACK("format", o, opt_format),
      SO_STRING("from", &o->load.from),
      SO_STRING("to", &o->load.to),
      SO_CALLBACK("limit", o, opt_limit),
      SO_STRING("estimates", &o->load.estimates),
      SO_STRING("synthetic", &o->synthetic),
      SO_CALLBACK("synthetic-days", o, opt_synth_days),
      SO_CALLBACK("synthetic-jobs", o, opt_synth_jobs),
      SO_STRING("calibration", &o->synth.calibration),
      /* Cluster. */
      SO_STRING("cluster", &o->cluster),
      SO_STRING("vc-config", &o->vc_config),
      SO_CALLBACK("gpus-per-node", o, opt_gpn),
      SO_CALLBACK("load", o, opt_load),
      SO_CALLBACK("placement", o, opt_placement),
      SO_CALLBACK("oversize", o, opt_oversize),
      SO_CALLBACK("unknown-vc", o, opt_unknown_vc),
      /* Policy. */
      SO_STRING("policy", &o->cfg.policy),
      SO_STRING("compare", &o->compare),
      SO_CALLBACK("estimator", o, opt_param_option),
      {SO_T_CALLBACK, "backfill", 0, o, 0, opt_backfill},
      SO_CALLBACK("preempt-overhead", o, opt_overhead),
      SO_CALLBACK("tiresias-thresholds", o, opt_param_option),
      SO_CALLBACK("tiresias-interval", o, opt_param_option),
      SO_CALLBACK("param", o, opt_param),
      SO_CALLBACK("semantic", o, opt_semantic),
      /* SchedMate integrations. */
      SO_CALLBACK("facts", o, opt_facts),
      SO_CALLBACK("sweep", o, opt_sweep),
      SO_CALLBACK("workloads", o, opt_param_option),
      SO_CALLBACK("lucid-tables", o, opt_param_option),
      SO_CALLBACK("profiles", o, opt_param_option),
      SO_CALLBACK("colocate", o, opt_param_option),
      SO_CALLBACK("failures", o, opt_param_option),
      SO_CALLBACK("seed", o, opt_seed),
      /* Output. */
      SO_FLAG("json", &o->json, 1),
      SO_STRING("jobs-csv", &o->jobs_csv),
      SO_STRING("series-csv", &o->series_csv),
      SO_STRING("report", &o->report),
      SO_FLAG("progress", &o->progress, 1),
      SO_FLAG("no-progress", &o->progress, 0),
      {SO_T_CALLBACK, "help", 0, NULL, 0, opt_help},
      SO_END()};
  int rc;

  memset(o, 0, sizeof(*o));
  sm_sim_load_opts_init(&o->load);
  sm_sim_synth_opts_init(&o->synth);
  sm_sim_config_init(&o->cfg);
  o->gpn = 8;
  o->load_target = 0.8;
  o->progress = -1;
  if ((rc = parse_table(argc, argv, table)) != 0)
    return rc;
  return check_combination(o);
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

/* ==== The command ==== */

/* Everything one invocation holds. */
typedef struct session {
  opts o;                      /* the options */
  runspec spec[MAX_RUNS];      /* the runs */
  int n;                       /* their count */
  sm_sim_result *rs[MAX_RUNS]; /* their results */
  int ran;                     /* results made */
  outfile report;              /* --report */
  outfile jobs[MAX_RUNS];      /* --jobs-csv, per run */
  outfile series[MAX_RUNS];    /* --series-csv, per run */
  sm_sim_trace *t;             /* the trace */
  sm_sim_cluster *c;           /* the cluster */
  sweep sw;                    /* --sweep */
  prog pr;                     /* progress line */
} session;

/* Lucid's tables are not shipped (non-commercial licence): the staged
 * copy when it is there and no other tables were named, else the
 * built-in model. */
static int default_lucid_tables(opts *o) {
  if (o->lucid_tables || sm_sim_config_get(&o->cfg, "lucid.tables") != NULL ||
      sm_sim_config_get(&o->cfg, "lucid.profiles") != NULL ||
      sm_sim_config_get(&o->cfg, "lucid.colocate") != NULL ||
      access(DEFAULT_LUCID "/single_data.csv", R_OK) != 0 ||
      access(DEFAULT_LUCID "/colocate_info.csv", R_OK) != 0)
    return 0;
  return add_param(o, "lucid.tables", DEFAULT_LUCID);
}

/* Opens the output file of run i for --jobs-csv or --series-csv FILE
 * (FILE.POLICY... when several runs). */
static int open_run_file(const session *ss, int i, const char *file,
                         outfile *f) {
  char path[4096];

  if (ss->n > 1)
    per_run_path(path, sizeof(path), file, &ss->spec[i]);
  else
    snprintf(path, sizeof(path), "%s", file);
  return out_open(f, path);
}

/* Every output file exists (as a temporary file) before anything runs. */
static int open_outputs(session *ss) {
  if (ss->o.report && out_open(&ss->report, ss->o.report))
    return CLI_USAGE;
  for (int i = 0; i < ss->n; i++) {
    if (ss->o.jobs_csv && open_run_file(ss, i, ss->o.jobs_csv, &ss->jobs[i]))
      return CLI_USAGE;
    if (ss->o.series_csv &&
        open_run_file(ss, i, ss->o.series_csv, &ss->series[i]))
      return CLI_USAGE;
  }
  return CLI_OK;
}

/* Runs every run of the plan, then the sweep. */
static int run_all(session *ss) {
  opts *o = &ss->o;

  if (o->progress < 0)
    o->progress = isatty(STDERR_FILENO);
  if (o->progress) {
    o->cfg.progress = on_progress;
    o->cfg.progress_ud = &ss->pr;
  }
  for (int i = 0; i < ss->n; i++) {
    sm_err err = {0};
    sm_sim_config cfg;
    if (run_config(o, &ss->spec[i], NULL, NULL, &cfg))
      return CLI_USAGE;
    ss->pr.policy = ss->spec[i].label;
    ss->pr.idx = i;
    ss->pr.n = ss->n;
    if (sm_sim_run(ss->t, ss->c, &cfg, &ss->rs[i], &err) != 0) {
      if (ss->pr.printed)
        fprintf(stderr, "\n");
      return cli_error(CMD, CLI_USAGE, "%s: %s", ss->spec[i].label, err.msg);
    }
    ss->ran++;
  }
  if (o->sweep != NULL &&
      run_sweep(o, ss->t, ss->c, ss->spec, ss->n, ss->rs, &ss->sw))
    return CLI_USAGE;
  if (ss->pr.printed)
    fprintf(stderr, "\r%60s\r", "");
  return CLI_OK;
}

/* The per-run CSV files. */
static int write_csvs(session *ss) {
  int ret = CLI_OK;

  for (int i = 0; i < ss->n && ret == CLI_OK; i++) {
    sm_buf b;
    sm_buf_init(&b, 0);
    if (ss->o.jobs_csv) {
      if (sm_sim_result_jobs_csv(ss->rs[i], &b) != 0)
        ret = cli_error(CMD, CLI_USAGE, "out of memory writing %s",
                        ss->jobs[i].path);
      else
        ret = out_commit(&ss->jobs[i], &b);
    }
    if (ss->o.series_csv && ret == CLI_OK) {
      const double *st;
      const int *busy, *pend;
      size_t ns = sm_sim_result_series(ss->rs[i], &st, &busy, &pend);
      int gpus = sm_sim_result_summary(ss->rs[i])->gpus;
      sm_buf_reset(&b);
      sm_buf_adds(&b, "time_s,busy_gpus,pending_jobs,util\n");
      for (size_t k = 0; k < ns; k++)
        sm_buf_addf(&b, "%.3f,%d,%d,%.6f\n", st[k], busy[k], pend[k],
                    gpus > 0 ? (double)busy[k] / gpus : 0.0);
      ret = out_commit(&ss->series[i], &b);
    }
    sm_buf_release(&b);
  }
  return ret;
}

static int write_report(session *ss) {
  sm_sim_report_opts ro;
  sm_buf b;
  int ret;

  memset(&ro, 0, sizeof(ro));
  if (ss->sw.npt > 0) {
    ro.sweep_param = ss->sw.key;
    ro.sweep = ss->sw.pt;
    ro.nsweep = (size_t)ss->sw.npt;
  }
  sm_buf_init(&b, 0);
  if (sm_sim_report_html_ex(RUNS(ss->rs), (size_t)ss->n, &ro, &b) != 0)
    ret = cli_error(CMD, CLI_USAGE, "out of memory writing the report");
  else
    ret = out_commit(&ss->report, &b);
  sm_buf_release(&b);
  return ret;
}

/* One JSON object: the run's summary, or {trace, ..., results, schedmate}
 * for a comparison. */
static int write_json(const session *ss) {
  sm_buf b;
  sm_jw w;
  int ret;

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  if (ss->o.compare) {
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "trace", sm_sim_trace_name(ss->t));
    sm_jw_kv_bool(&w, "synthetic", sm_sim_trace_synthetic_p(ss->t));
    sm_jw_kv_str(&w, "cluster", sm_sim_cluster_describe(ss->c));
    sm_jw_kv_str(&w, "cluster_origin", sm_sim_cluster_origin(ss->c));
    if (ss->o.report)
      sm_jw_kv_str(&w, "report", ss->o.report);
    sm_jw_key(&w, "results");
    sm_jw_arr_begin(&w);
    for (int i = 0; i < ss->n; i++)
      sm_sim_result_json(ss->rs[i], &w);
    sm_jw_arr_end(&w);
    json_schedmate((sm_sim_result **)ss->rs, ss->spec, ss->n, &ss->sw, &w);
    sm_jw_obj_end(&w);
  } else {
    sm_sim_result_json(ss->rs[0], &w);
  }
  if (sm_jw_finish(&w) != 0)
    ret = cli_error(CMD, CLI_USAGE, "out of memory writing JSON");
  else
    ret = cli_emit(&b);
  sm_buf_release(&b);
  return ret;
}

static void write_text(session *ss) {
  if (ss->o.compare) {
    print_table(ss->rs, ss->spec, ss->n);
    print_schedmate(ss->rs, ss->spec, ss->n, &ss->sw);
  } else {
    print_one(ss->rs[0]);
  }
  if (ss->o.report)
    printf("report     %s\n", ss->o.report);
}

/* Writes everything the options asked for. */
static int write_outputs(session *ss, int auto_cluster) {
  int ret;

  if (auto_cluster && !sm_sim_trace_synthetic_p(ss->t) && !ss->o.json)
    fprintf(stderr,
            "schedmate simulate: no --cluster given: sized to %s so the "
            "trace offers a load of %.2f\n",
            sm_sim_cluster_describe(ss->c), ss->o.load_target);
  if ((ret = write_csvs(ss)) != CLI_OK)
    return ret;
  if (ss->o.report && (ret = write_report(ss)) != CLI_OK)
    return ret;
  if (ss->o.json)
    return write_json(ss);
  write_text(ss);
  return CLI_OK;
}

static void session_free(session *ss) {
  out_discard(&ss->report);
  for (int i = 0; i < MAX_RUNS; i++) {
    out_discard(&ss->jobs[i]);
    out_discard(&ss->series[i]);
  }
  for (int i = 0; i < ss->ran; i++)
    sm_sim_result_free(ss->rs[i]);
  free(ss->sw.pt);
  sm_sim_cluster_free(ss->c);
  sm_sim_trace_free(ss->t);
}

/* Checks the options and plans the runs: 0, -1 after --help, or
 * CLI_USAGE. */
static int prepare(session *ss, int argc, char **argv) {
  int rc = parse(argc, argv, &ss->o);

  if (rc != 0)
    return rc;
  if (default_lucid_tables(&ss->o) || plan(&ss->o, ss->spec, &ss->n))
    return CLI_USAGE;
  if (ss->o.sweep != NULL && !ss->o.compare)
    return cli_usage(CMD, "--sweep needs --compare");
  return 0;
}

int cmd_simulate(int argc, char **argv) {
  session *ss = calloc(1, sizeof(*ss)); /* large: not on the stack */
  int rc, ret, auto_cluster;

  if (ss == NULL)
    return cli_error(CMD, CLI_USAGE, "out of memory");
  ss->report.fd = -1;
  for (int i = 0; i < MAX_RUNS; i++)
    ss->jobs[i].fd = ss->series[i].fd = -1;
  rc = prepare(ss, argc, argv);
  ret = rc < 0 ? CLI_OK : rc;
  auto_cluster = !ss->o.cluster && !ss->o.vc_config;
  if (rc == 0)
    ret = open_outputs(ss);
  if (rc == 0 && ret == CLI_OK && inputs(&ss->o, &ss->t, &ss->c))
    ret = CLI_USAGE;
  if (rc == 0 && ret == CLI_OK)
    ret = run_all(ss);
  if (rc == 0 && ret == CLI_OK)
    ret = write_outputs(ss, auto_cluster);
  session_free(ss);
  free(ss);
  return ret;
}
