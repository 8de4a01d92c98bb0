/* cmd_slurm.c - `schedmate slurm` (build/schedmate-slurm): the agent that
 * runs SchedMate beside a real Slurm cluster (submit, run, exit and
 * write-back channels), in shadow mode unless told to enforce, and answers
 * the job_submit plugin on a local socket.  SIGTERM or SIGINT stop it
 * cleanly.
 *
 * This is the main of its own executable, which `schedmate slurm ...`
 * runs (cli/main.c): it links libslurm (GPL-2.0-or-later) through
 * libslurm.c, and the schedmate command does not (README, Licence). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../cli/llmcli.h"
#include "../cli/options.h"
#include "agent.h"

static const cli_help help = {
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
    "\n",
    "\n"
    "Exit status: 0 stopped cleanly (or --once reached Slurm), 1 --once\n"
    "could not reach Slurm, 2 bad usage or an unusable option.\n"};

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

/* ==== Options ==== */

/* What the command line says, before it becomes the agent's options. */
typedef struct slurm_args {
  sm_slurm_opts o;  /* the agent's options */
  const char *conf; /* --slurm-conf */
  int once, json;   /* --once, --json */
  int mode_set;     /* --shadow or --enforce was given */
  double top_k;     /* --top-k, NAN when not given */
  double threshold; /* --threshold, NAN when not given */
  double samples;   /* --samples, NAN when not given */
  double retries;   /* --max-retries, NAN when not given */
  double quota;     /* --isolation-quota, NAN when not given */
} slurm_args;

static int opt_mode(const cli_option *opt, const char *arg) {
  slurm_args *s = opt->value;
  int enforce = strcmp(opt->name, "enforce") == 0;

  (void)arg;
  if (s->mode_set && s->o.enforce != enforce)
    return cli_usage("slurm", "--shadow and --enforce exclude each other");
  s->o.enforce = enforce;
  s->mode_set = 1;
  return 0;
}

static int opt_sacct(const cli_option *opt, const char *arg) {
  slurm_args *s = opt->value;

  if (arg == NULL) { /* --no-sacct */
    s->o.sacct = NULL;
    return 0;
  }
  if (arg[0] == '\0')
    return cli_usage("slurm", "--sacct needs a command");
  s->o.sacct = arg;
  return 0;
}

/* The optional LLM stage of the exit channel (lives as long as the
 * agent). */
static cli_llm slurm_llm;

/* --llm and its companions: the entry's defval is the shared option code
 * of cli/llmcli.h. */
static int opt_llm(const cli_option *opt, const char *arg) {
  int rc = cli_llm_option(&slurm_llm, "slurm", opt->defval, arg);
  return rc < 0 ? cli_usage("slurm", "--%s: not an LLM option", opt->name) : rc;
}

#define PO_LLM(name, argh, code, help)                                         \
  { PO_T_CALLBACK, (name), (argh), NULL, (help), 0, 0, (code), opt_llm }

static int opt_log_level(const cli_option *opt, const char *arg) {
  static const char *const names[] = {"error", "warn", "info", "debug"};
  static const int levels[] = {SM_SLURM_ERROR, SM_SLURM_WARN, SM_SLURM_INFO,
                               SM_SLURM_DEBUG};

  (void)opt;
  for (size_t i = 0; i < SM_ARRAY_LEN(names); i++)
    if (strcmp(arg, names[i]) == 0) {
      log_level = levels[i];
      return 0;
    }
  return cli_usage("slurm",
                   "--log-level: expected error, warn, info or "
                   "debug, got '%s'",
                   arg);
}

/* Parses the command line into s.  PO_OK, PO_HELP or CLI_USAGE. */
static int parse_args(int argc, char **argv, slurm_args *s) {
  sm_slurm_opts *o = &s->o;
  int nargs, rc;
  const cli_option opts[] = {
      PO_CALLBACK("shadow", NULL, s, opt_mode, NULL),
      PO_CALLBACK("enforce", NULL, s, opt_mode, NULL),
      PO_STRING("db", "URI", &o->db,
                "history: SQLite file or redis://host:port/db"),
      PO_NUMBER("interval", "S", &o->interval_s, 0.05, 86400,
                "seconds between passes (10)"),
      PO_NUMBER("max-backoff", "S", &o->max_backoff_s, 0.05, 86400,
                "longest wait between attempts while Slurm\n"
                "cannot be reached (300)"),
      PO_STRING("audit", "FILE", &o->audit_path,
                "append-only JSON-lines audit log"),
      PO_STRING("state", "FILE", &o->state_path,
                "planner state: retry counts and isolations\n"
                "(default: private to this run)"),
      PO_STRING("status", "FILE", &o->status_path,
                "JSON status file, rewritten every pass"),
      PO_STRING("metrics", "FILE", &o->metrics_path,
                "Prometheus text file, rewritten every pass"),
      PO_STRING("socket", "PATH", &o->socket_path,
                "answer the job_submit plugin on this UNIX\n"
                "socket (its SCHEDMATE_AGENT_SOCKET)"),
      PO_FLAG("annotate", &o->annotate, 1,
              "write estimates into comments in shadow mode"),
      PO_STRING("slurm-conf", "FILE", &s->conf,
                "slurm.conf (default: $SLURM_CONF)"),
      PO_FLAG("once", &s->once, 1, "one pass, then exit (no socket)"),
      PO_FLAG("json", &s->json, 1, "with --once: print the counters as JSON"),
      PO_GROUP("Advisor:"),
      PO_NUMBER("top-k", "K", &s->top_k, 1, 1000, "matches per estimate (5)"),
      PO_NUMBER("threshold", "T", &s->threshold, 0.01, 1,
                "least similarity (0.95)"),
      PO_NUMBER("time-limit-margin", "X", &o->tl_margin, 1, 100,
                "in enforce mode, give a job without a time\n"
                "limit estimate x X + pad (off)"),
      PO_NUMBER("time-limit-pad", "S", &o->tl_pad_s, 0, 1e7,
                "the pad in seconds (600)"),
      PO_FLAG("any-owner", &o->check_owner, -1,
              "read repositories not owned by the job's user"),
      PO_GROUP("Run:"),
      PO_NUMBER("samples", "N", &s->samples, 1, 1000, "Tracker samples (10)"),
      PO_NUMBER("slowdown", "F", &o->slowdown, 0.01, 0.99,
                "flag a throughput drop of F after a job joined\n"
                "the node (0.25)"),
      PO_GROUP("Exit:"),
      PO_STRING("signatures", "FILE", &o->signatures,
                "extra failure signatures"),
      PO_NUMBER("plan-threshold", "X", &o->plan_threshold, 0.01, 1,
                "least diagnosis confidence to act (0.8)"),
      PO_NUMBER("max-retries", "N", &s->retries, 0, 1000,
                "automatic requeues per job (2)"),
      PO_NUMBER("isolation-quota", "N", &s->quota, 0, 100000,
                "node drains per window (2)"),
      PO_NUMBER("quota-window", "S", &o->quota_window_s, 1, 1e9,
                "the window in seconds (86400)"),
      PO_GROUP("GPU metrics (written back with each ended job):"),
      PO_STRING("gpustat", "DIR", &o->gpustat_dir,
                "the directory the nodes' `schedmate gpustat\n"
                "--out DIR` write (shared); read first"),
      PO_CALLBACK("sacct", "CMD", s, opt_sacct,
                  "sacct command for Slurm's GPU accounting\n"
                  "(gres/gpuutil, gres/gpumem) where no sampler\n"
                  "file exists (sacct)"),
      PO_CALLBACK("no-sacct", NULL, s, opt_sacct,
                  "never ask Slurm's accounting"),
      PO_GROUP("Optional LLM stage of the exit channel (docs/llm.md):"),
      PO_LLM("llm", "URL", CLI_OPT_LLM,
             "OpenAI-compatible server (or SCHEDMATE_LLM_URL)"),
      PO_LLM("llm-model", "NAME", CLI_OPT_LLM_MODEL, "model name"),
      PO_LLM("llm-key-file", "FILE", CLI_OPT_LLM_KEY, "API key file"),
      PO_LLM("llm-cache", "DIR", CLI_OPT_LLM_CACHE, "on-disk answer cache"),
      PO_LLM("llm-timeout", "S", CLI_OPT_LLM_TIMEOUT, "total seconds per call"),
      PO_LLM("llm-retries", "N", CLI_OPT_LLM_RETRIES, "retries on 429/5xx"),
      PO_LLM("llm-max-tokens", "N", CLI_OPT_LLM_TOKENS,
             "token budget per request"),
      PO_LLM("llm-context", "N", CLI_OPT_LLM_CONTEXT,
             "lines around the located error"),
      PO_LLM("llm-always", NULL, CLI_OPT_LLM_ALWAYS,
             "ask even where the engine is sure"),
      PO_GROUP("Messages:"),
      PO_CALLBACK("log-level", "L", NULL, opt_log_level,
                  "error, warn, info (default) or debug"),
      PO_END(),
  };

  memset(s, 0, sizeof(*s));
  o->check_owner = 1;
  o->sacct = "sacct";
  s->top_k = s->threshold = s->samples = s->retries = s->quota = NAN;
  rc = cli_parse_options("slurm", argc, argv, opts, &help, &nargs);
  if (rc != PO_OK)
    return rc;
  if (nargs > 0)
    return cli_usage("slurm", "unexpected argument '%s'", argv[1]);
  if (o->db == NULL)
    return cli_usage("slurm", "--db URI is required");
  if (s->json && !s->once)
    return cli_usage("slurm", "--json goes with --once");
  if (!isnan(s->top_k))
    o->top_k = (int)s->top_k;
  if (!isnan(s->threshold))
    o->threshold = (float)s->threshold;
  if (!isnan(s->samples))
    o->track_samples = (int)s->samples;
  if (!isnan(s->retries))
    o->max_retries = s->retries == 0 ? -1 : (int)s->retries;
  if (!isnan(s->quota))
    o->isolation_quota = s->quota == 0 ? -1 : (int)s->quota;
  o->log = log_line;
  return PO_OK;
}

/* ==== Running ==== */

/* --once: one pass, the counters printed. */
static int run_once(sm_slurm_agent *a, const slurm_args *s) {
  sm_slurm_counters cnt;
  sm_err err = {0};
  int ok = sm_slurm_agent_pass(a, &err) == 0;

  sm_slurm_agent_counters(a, &cnt);
  sm_slurm_agent_free(a);
  if (s->json && print_counters(&cnt, ok) != 0)
    return CLI_USAGE;
  if (!s->json)
    printf("%s pass (%s mode): %llu advised (%llu with an estimate), "
           "%llu priority decisions, %llu diagnosed, %llu drains, "
           "%llu requeues, %llu written back, %llu slowdowns\n",
           ok ? "one" : "failed", s->o.enforce ? "enforce" : "shadow",
           (unsigned long long)cnt.advised, (unsigned long long)cnt.estimates,
           (unsigned long long)cnt.priority_sets,
           (unsigned long long)cnt.diagnosed, (unsigned long long)cnt.drains,
           (unsigned long long)cnt.requeues,
           (unsigned long long)cnt.written_back,
           (unsigned long long)cnt.interference);
  return ok ? CLI_OK : CLI_CHECK;
}

/* The daemon: signals, the plugin's socket, passes until told to stop. */
static int run_forever(sm_slurm_agent *a, const slurm_args *s) {
  struct sigaction sa;
  sm_err err = {0};

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
  if (s->o.socket_path != NULL && sm_slurm_serve_start(a, &err) != 0) {
    sm_slurm_agent_free(a);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  }
  log_line(NULL, SM_SLURM_INFO,
           s->o.enforce ? "started in enforce mode" : "started in shadow mode");
  sm_slurm_agent_run(a, &stop_flag, wake_pipe[0]);
  log_line(NULL, SM_SLURM_INFO, "stopping");
  sm_slurm_agent_free(a);
  close(wake_pipe[0]);
  close(wake_pipe[1]);
  log_line(NULL, SM_SLURM_INFO, "stopped");
  return CLI_OK;
}

static int cmd_slurm(int argc, char **argv) {
  slurm_args s;
  sm_slurm_backend be;
  sm_slurm_agent *a;
  sm_err err = {0};
  int rc;

  cli_llm_init(&slurm_llm);
  rc = parse_args(argc, argv, &s);
  if (rc == PO_HELP)
    return CLI_OK;
  if (rc != PO_OK)
    return rc;
  /* sacct, run for the GPU accounting, reads the same configuration. */
  if (s.conf != NULL)
    setenv("SLURM_CONF", s.conf, 1);
  if (cli_llm_start(&slurm_llm, "slurm") != 0)
    return CLI_USAGE;
  s.o.llm = slurm_llm.llm;
  if (agent_backend_libslurm(&be, s.conf, &err) != 0) {
    cli_llm_release(&slurm_llm);
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  }
  a = sm_slurm_agent_new(&s.o, &be, &err);
  if (a == NULL) {
    if (be.ops && be.ops->close)
      be.ops->close(be.ud);
    cli_llm_release(&slurm_llm);
    return cli_error("slurm", CLI_USAGE, "%s", err.msg);
  }
  rc = s.once ? run_once(a, &s) : run_forever(a, &s);
  cli_llm_release(&slurm_llm);
  return rc;
}

int main(int argc, char **argv) {
  return cmd_slurm(argc, argv);
}
