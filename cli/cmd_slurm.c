/* cmd_slurm.c - `schedmate slurm`: the agent that runs SchedMate beside a
 * real Slurm cluster (submit, run, exit and write-back channels), in
 * shadow mode unless told to enforce, and answers the job_submit plugin
 * on a local socket.  SIGTERM or SIGINT stop it cleanly. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "llmcli.h"
#include "schedmate/sm_slurm.h"

static const char usage_text[] =
    "usage: schedmate slurm [--shadow | --enforce] --db URI [--interval S]\n"
    "           [--audit FILE] [--state FILE] [--status FILE]\n"
    "           [--metrics FILE] [--socket PATH] [--annotate]\n"
    "           [--slurm-conf FILE] [--once] [--json] [options]\n"
    "\n"
    "Runs SchedMate beside slurmctld.  Every pass (every --interval\n"
    "seconds) it advises new jobs from the history and writes the estimate\n"
    "into their comment, orders pending jobs shortest-expected-first\n"
    "(SchedMate-SJF; jobs without an estimate keep Slurm's order), follows\n"
    "running jobs' StdOut (step, step time, throughput, loss, slowdowns\n"
    "after another job joined the node), diagnoses FAILED and NODE_FAIL\n"
    "jobs (an infrastructure fault with a located component drains the\n"
    "node and requeues the job, within the planner's gates), and writes\n"
    "every ended job into the history (with its GPU utilisation and\n"
    "memory when the nodes sample them or Slurm accounts them).\n"
    "\n"
    "Shadow mode (the default) decides and audits everything but changes\n"
    "nothing in Slurm; --enforce acts, and audits every action.\n"
    "\n"
    "  --db URI              history: SQLite file or redis://host:port/db\n"
    "  --interval S          seconds between passes (10)\n"
    "  --max-backoff S       longest wait between attempts while Slurm\n"
    "                        cannot be reached (300)\n"
    "  --audit FILE          append-only JSON-lines audit log\n"
    "  --state FILE          planner state: retry counts and isolations\n"
    "                        (default: private to this run)\n"
    "  --status FILE         JSON status file, rewritten every pass\n"
    "  --metrics FILE        Prometheus text file, rewritten every pass\n"
    "  --socket PATH         answer the job_submit plugin on this UNIX\n"
    "                        socket (its SCHEDMATE_AGENT_SOCKET)\n"
    "  --annotate            write estimates into comments in shadow mode\n"
    "  --slurm-conf FILE     slurm.conf (default: $SLURM_CONF)\n"
    "  --once                one pass, then exit (no socket)\n"
    "  --json                with --once: print the counters as JSON\n"
    "Advisor:\n"
    "  --top-k K             matches per estimate (5)\n"
    "  --threshold T         least similarity (0.95)\n"
    "  --time-limit-margin X in enforce mode, give a job without a time\n"
    "                        limit estimate x X + pad (off)\n"
    "  --time-limit-pad S    the pad in seconds (600)\n"
    "  --any-owner           read repositories not owned by the job's user\n"
    "Run:\n"
    "  --samples N           Tracker samples (10)\n"
    "  --slowdown F          flag a throughput drop of F after a job joined\n"
    "                        the node (0.25)\n"
    "Exit:\n"
    "  --signatures FILE     extra failure signatures\n"
    "  --plan-threshold X    least diagnosis confidence to act (0.8)\n"
    "  --max-retries N       automatic requeues per job (2)\n"
    "  --isolation-quota N   node drains per window (2)\n"
    "  --quota-window S      the window in seconds (86400)\n"
    "GPU metrics (written back with each ended job):\n"
    "  --gpustat DIR         the directory the nodes' `schedmate gpustat\n"
    "                        --out DIR` write (shared); read first\n"
    "  --sacct CMD           sacct command for Slurm's GPU accounting\n"
    "                        (gres/gpuutil, gres/gpumem) where no sampler\n"
    "                        file exists (sacct)\n"
    "  --no-sacct            never ask Slurm's accounting\n"
    "Messages:\n"
    "  --log-level L         error, warn, info (default) or debug\n"
    "\n"
    "Exit status: 0 stopped cleanly (or --once reached Slurm), 1 --once\n"
    "could not reach Slurm, 2 bad usage or an unusable option.\n";

enum {
  OPT_SHADOW = 1000,
  OPT_ENFORCE,
  OPT_DB,
  OPT_INTERVAL,
  OPT_BACKOFF,
  OPT_AUDIT,
  OPT_STATE,
  OPT_STATUS,
  OPT_METRICS,
  OPT_SOCKET,
  OPT_ANNOTATE,
  OPT_CONF,
  OPT_ONCE,
  OPT_JSON,
  OPT_TOPK,
  OPT_THRESH,
  OPT_TLM,
  OPT_TLP,
  OPT_ANYOWNER,
  OPT_SAMPLES,
  OPT_SLOWDOWN,
  OPT_SIGS,
  OPT_PTHRESH,
  OPT_RETRIES,
  OPT_QUOTA,
  OPT_WINDOW,
  OPT_LOGLEVEL,
  OPT_GPUSTAT,
  OPT_SACCT,
  OPT_NOSACCT,
  OPT_HELP
};

static const struct option longopts[] = {
    {"shadow", no_argument, NULL, OPT_SHADOW},
    {"enforce", no_argument, NULL, OPT_ENFORCE},
    {"db", required_argument, NULL, OPT_DB},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"max-backoff", required_argument, NULL, OPT_BACKOFF},
    {"audit", required_argument, NULL, OPT_AUDIT},
    {"state", required_argument, NULL, OPT_STATE},
    {"status", required_argument, NULL, OPT_STATUS},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"socket", required_argument, NULL, OPT_SOCKET},
    {"annotate", no_argument, NULL, OPT_ANNOTATE},
    {"slurm-conf", required_argument, NULL, OPT_CONF},
    {"once", no_argument, NULL, OPT_ONCE},
    {"json", no_argument, NULL, OPT_JSON},
    {"top-k", required_argument, NULL, OPT_TOPK},
    {"threshold", required_argument, NULL, OPT_THRESH},
    {"time-limit-margin", required_argument, NULL, OPT_TLM},
    {"time-limit-pad", required_argument, NULL, OPT_TLP},
    {"any-owner", no_argument, NULL, OPT_ANYOWNER},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"slowdown", required_argument, NULL, OPT_SLOWDOWN},
    {"signatures", required_argument, NULL, OPT_SIGS},
    {"plan-threshold", required_argument, NULL, OPT_PTHRESH},
    {"max-retries", required_argument, NULL, OPT_RETRIES},
    {"isolation-quota", required_argument, NULL, OPT_QUOTA},
    {"quota-window", required_argument, NULL, OPT_WINDOW},
    {"log-level", required_argument, NULL, OPT_LOGLEVEL},
    {"gpustat", required_argument, NULL, OPT_GPUSTAT},
    {"sacct", required_argument, NULL, OPT_SACCT},
    {"no-sacct", no_argument, NULL, OPT_NOSACCT},
    {"help", no_argument, NULL, OPT_HELP},
    CLI_LLM_LONGOPTS,
    {NULL, 0, NULL, 0}};

static volatile sig_atomic_t stop_flag;
static int wake_pipe[2] = {-1, -1};
static int log_level = SM_SLURM_INFO;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_signal(int sig) {
  int e = errno;
  (void)sig;
  stop_flag = 1;
  if (wake_pipe[1] >= 0)
    (void)!write(wake_pipe[1], "s", 1);
  errno = e;
}

/* One line per message: time, level, text. */
static void log_line(void *ud, int level, const char *msg) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  char ts[32];
  time_t t = time(NULL);
  struct tm tm;

  (void)ud;
  if (level > log_level)
    return;
  gmtime_r(&t, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  pthread_mutex_lock(&log_mu);
  fprintf(stderr, "%s schedmate slurm: %s: %s\n", ts,
          names[level < 0   ? 0
                : level > 3 ? 3
                            : level],
          msg);
  fflush(stderr);
  pthread_mutex_unlock(&log_mu);
}

static int num_opt(const char *opt, const char *arg, double lo, double hi,
                   double *out) {
  if (cli_parse_num("slurm", opt, arg, out) != 0)
    return CLI_USAGE;
  if (!(*out >= lo && *out <= hi))
    return cli_usage("slurm", "%s: expected a number in [%g, %g], got '%s'",
                     opt, lo, hi, arg);
  return 0;
}

static int print_counters(const sm_slurm_counters *c, int ok) {
  sm_buf b;
  sm_jw w;
  int rc;
  struct {
    const char *k;
    uint64_t v;
  } f[] = {{"passes", c->passes},
           {"slurm_errors", c->slurm_errors},
           {"advised", c->advised},
           {"estimates", c->estimates},
           {"priority_sets", c->priority_sets},
           {"diagnosed", c->diagnosed},
           {"drains", c->drains},
           {"requeues", c->requeues},
           {"written_back", c->written_back},
           {"interference", c->interference},
           {"actions_failed", c->actions_failed}};

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "slurm_ok");
  sm_jw_bool(&w, ok);
  for (size_t i = 0; i < SM_ARRAY_LEN(f); i++) {
    sm_jw_key(&w, f[i].k);
    sm_jw_int(&w, (long long)f[i].v);
  }
  sm_jw_obj_end(&w);
  rc = sm_jw_finish(&w) == 0 ? cli_emit(&b) : CLI_USAGE;
  sm_buf_release(&b);
  return rc;
}

/* The optional LLM stage of the exit channel (lives as long as the
 * agent). */
static cli_llm slurm_llm;

int cmd_slurm(int argc, char **argv) {
  sm_slurm_opts o = {0};
  const char *conf = NULL;
  int once = 0, json = 0, c, rc = 0, mode_set = 0;
  double v;
  sm_slurm_backend be;
  sm_slurm_agent *a;
  sm_err err = {0};
  struct sigaction sa;

  optind = 0;
  cli_llm_init(&slurm_llm);
  opterr = 0;
  o.check_owner = 1;
  o.sacct = "sacct";
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case 'h':
    case OPT_HELP:
      fputs(usage_text, stdout);
      fputs(cli_llm_help, stdout); /* the exit channel's stage */
      return CLI_OK;
    case OPT_SHADOW:
    case OPT_ENFORCE:
      if (mode_set && o.enforce != (c == OPT_ENFORCE))
        return cli_usage("slurm", "--shadow and --enforce exclude each other");
      o.enforce = c == OPT_ENFORCE;
      mode_set = 1;
      break;
    case OPT_DB:
      o.db = optarg;
      break;
    case OPT_INTERVAL:
      rc = num_opt("--interval", optarg, 0.05, 86400, &o.interval_s);
      break;
    case OPT_BACKOFF:
      rc = num_opt("--max-backoff", optarg, 0.05, 86400, &o.max_backoff_s);
      break;
    case OPT_AUDIT:
      o.audit_path = optarg;
      break;
    case OPT_STATE:
      o.state_path = optarg;
      break;
    case OPT_STATUS:
      o.status_path = optarg;
      break;
    case OPT_METRICS:
      o.metrics_path = optarg;
      break;
    case OPT_SOCKET:
      o.socket_path = optarg;
      break;
    case OPT_ANNOTATE:
      o.annotate = 1;
      break;
    case OPT_CONF:
      conf = optarg;
      break;
    case OPT_ONCE:
      once = 1;
      break;
    case OPT_JSON:
      json = 1;
      break;
    case OPT_TOPK:
      rc = num_opt("--top-k", optarg, 1, 1000, &v);
      o.top_k = (int)v;
      break;
    case OPT_THRESH:
      rc = num_opt("--threshold", optarg, 0.01, 1, &v);
      o.threshold = (float)v;
      break;
    case OPT_TLM:
      rc = num_opt("--time-limit-margin", optarg, 1, 100, &o.tl_margin);
      break;
    case OPT_TLP:
      rc = num_opt("--time-limit-pad", optarg, 0, 1e7, &o.tl_pad_s);
      break;
    case OPT_ANYOWNER:
      o.check_owner = -1;
      break;
    case OPT_SAMPLES:
      rc = num_opt("--samples", optarg, 1, 1000, &v);
      o.track_samples = (int)v;
      break;
    case OPT_SLOWDOWN:
      rc = num_opt("--slowdown", optarg, 0.01, 0.99, &o.slowdown);
      break;
    case OPT_SIGS:
      o.signatures = optarg;
      break;
    case OPT_PTHRESH:
      rc = num_opt("--plan-threshold", optarg, 0.01, 1, &o.plan_threshold);
      break;
    case OPT_RETRIES:
      rc = num_opt("--max-retries", optarg, 0, 1000, &v);
      o.max_retries = v == 0 ? -1 : (int)v;
      break;
    case OPT_QUOTA:
      rc = num_opt("--isolation-quota", optarg, 0, 100000, &v);
      o.isolation_quota = v == 0 ? -1 : (int)v;
      break;
    case OPT_WINDOW:
      rc = num_opt("--quota-window", optarg, 1, 1e9, &o.quota_window_s);
      break;
    case OPT_GPUSTAT:
      o.gpustat_dir = optarg;
      break;
    case OPT_SACCT:
      if (optarg[0] == '\0')
        return cli_usage("slurm", "--sacct needs a command");
      o.sacct = optarg;
      break;
    case OPT_NOSACCT:
      o.sacct = NULL;
      break;
    case OPT_LOGLEVEL:
      if (strcmp(optarg, "error") == 0)
        log_level = SM_SLURM_ERROR;
      else if (strcmp(optarg, "warn") == 0)
        log_level = SM_SLURM_WARN;
      else if (strcmp(optarg, "info") == 0)
        log_level = SM_SLURM_INFO;
      else if (strcmp(optarg, "debug") == 0)
        log_level = SM_SLURM_DEBUG;
      else
        rc = cli_usage("slurm",
                       "--log-level: expected error, warn, info or "
                       "debug, got '%s'",
                       optarg);
      break;
    case ':':
      return cli_usage("slurm", "%s needs a value", argv[optind - 1]);
    default:
      if ((rc = cli_llm_option(&slurm_llm, "slurm", c, optarg)) < 0)
        return cli_usage("slurm", "unknown option '%s'", argv[optind - 1]);
    }
    if (rc != 0)
      return rc;
  }
  if (optind < argc)
    return cli_usage("slurm", "unexpected argument '%s'", argv[optind]);
  if (o.db == NULL)
    return cli_usage("slurm", "--db URI is required");
  if (json && !once)
    return cli_usage("slurm", "--json goes with --once");
  o.log = log_line;

  /* sacct, run for the GPU accounting, reads the same configuration. */
  if (conf != NULL)
    setenv("SLURM_CONF", conf, 1);
  if (cli_llm_start(&slurm_llm, "slurm") != 0)
    return CLI_USAGE;
  o.llm = slurm_llm.llm;
  if (sm_slurm_backend_libslurm(&be, conf, &err) != 0)
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  a = sm_slurm_agent_new(&o, &be, &err);
  if (a == NULL) {
    if (be.ops && be.ops->close)
      be.ops->close(be.ud);
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  }
  if (once) {
    sm_slurm_counters cnt;
    int ok = sm_slurm_agent_pass(a, &err) == 0;
    sm_slurm_agent_counters(a, &cnt);
    sm_slurm_agent_free(a);
    if (json && print_counters(&cnt, ok) != 0)
      return CLI_USAGE;
    if (!json)
      printf("%s pass (%s mode): %llu advised (%llu with an estimate), "
             "%llu priority decisions, %llu diagnosed, %llu drains, "
             "%llu requeues, %llu written back, %llu slowdowns\n",
             ok ? "one" : "failed", o.enforce ? "enforce" : "shadow",
             (unsigned long long)cnt.advised, (unsigned long long)cnt.estimates,
             (unsigned long long)cnt.priority_sets,
             (unsigned long long)cnt.diagnosed, (unsigned long long)cnt.drains,
             (unsigned long long)cnt.requeues,
             (unsigned long long)cnt.written_back,
             (unsigned long long)cnt.interference);
    return ok ? CLI_OK : CLI_CHECK;
  }
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    sm_slurm_agent_free(a);
    return cli_error("slurm", CLI_USAGE, "pipe: %s", strerror(errno));
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  if (o.socket_path != NULL && sm_slurm_serve_start(a, &err) != 0) {
    sm_slurm_agent_free(a);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  }
  log_line(NULL, SM_SLURM_INFO,
           o.enforce ? "started in enforce mode" : "started in shadow mode");
  sm_slurm_agent_run(a, &stop_flag, wake_pipe[0]);
  log_line(NULL, SM_SLURM_INFO, "stopping");
  sm_slurm_agent_free(a);
  cli_llm_release(&slurm_llm);
  close(wake_pipe[0]);
  close(wake_pipe[1]);
  log_line(NULL, SM_SLURM_INFO, "stopped");
  return CLI_OK;
}
