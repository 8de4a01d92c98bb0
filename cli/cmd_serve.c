/* cmd_serve.c - `schedmate serve`: SchedMate as a service for any
 * scheduler (include/schedmate/sm_serve.h, docs/serve.md).  Parses the
 * options, reads the token file, runs the service until SIGTERM or
 * SIGINT, and stops it cleanly (queued requests are answered, the socket
 * file is removed). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "llmcli.h"
#include "schedmate/sm_serve.h"

#define MAX_ROOTS 64
#define DEFAULT_SOCKET "/run/schedmate/serve.sock"

static const char usage_text[] =
    "usage: schedmate serve --db URI [--socket PATH]\n"
    "           [--listen [HOST:]PORT --token-file FILE]\n"
    "           [--allow-root DIR]... [--audit FILE] [--journal FILE]\n"
    "           [--advise-deadline-ms MS] [--deadline-ms MS]\n"
    "           [--queue CHANNEL=N]... [--workers CHANNEL=N]...\n"
    "           [--rate N] [--burst N] [--max-body BYTES] [--max-depth N]\n"
    "           [--max-connections N] [--max-jobs N] [--sync-interval S]\n"
    "           [--top-k K] [--threshold T] [--slowdown X]\n"
    "           [--ready-file FILE]\n"
    "           [--llm URL [--llm-model NAME] [--llm-key-file F] ...]\n"
    "           [--quiet | --verbose]\n"
    "\n"
    "Answers any scheduler over HTTP/1.1 + JSON (docs/serve.md): advice at\n"
    "submission (POST /v1/advise, /v1/jobs), progress while a job runs\n"
    "(GET /v1/jobs/ID/progress), diagnosis and write-back at its end\n"
    "(POST /v1/diagnose, /v1/jobs/ID/end), GET /metrics and /healthz.  The\n"
    "history is loaded once into memory and kept current by write-backs.\n"
    "\n"
    "  --db URI               SQLite file (created if missing) or\n"
    "                         redis://host:port/db[?prefix=P]\n"
    "  --socket PATH          UNIX socket (default " DEFAULT_SOCKET " when\n"
    "                         no --listen is given); its mode is 0660\n"
    "  --socket-mode MODE     another mode (octal)\n"
    "  --listen [HOST:]PORT   also TCP, on 127.0.0.1 unless HOST says\n"
    "                         otherwise; PORT 0 picks a free one\n"
    "  --token-file FILE      the bearer token TCP clients must send\n"
    "  --allow-root DIR       repositories and logs are accepted only under\n"
    "                         these directories (repeatable)\n"
    "  --audit FILE           append one JSON line per answered request\n"
    "  --journal FILE         keep registered jobs across restarts\n"
    "  --advise-deadline-ms MS  submit channel: answer or fall back (500)\n"
    "  --deadline-ms MS       run and exit channels (10000)\n"
    "  --queue CH=N           queue capacity of submit, run or exit\n"
    "                         (256, 64, 64)\n"
    "  --workers CH=N         worker threads of a channel (2, 1, 2)\n"
    "  --rate N, --burst N    requests per second per client (100, burst\n"
    "                         200); --rate 0 turns the limit off\n"
    "  --max-body BYTES       request body cap (1048576)\n"
    "  --max-depth N          JSON nesting cap (16)\n"
    "  --max-connections N    open connections (512)\n"
    "  --max-jobs N           registered jobs (100000)\n"
    "  --sync-interval S      poll for other writers' records (1; 0: off)\n"
    "  --top-k K, --threshold T  advise defaults (5, 0.95)\n"
    "  --slowdown X           flag a job whose rate drops by X after another\n"
    "                         job joined its node (0.25)\n"
    "  --ready-file FILE      write the addresses there once serving\n"
    "  --quiet, --verbose     fewer / more log lines on stderr\n"
    "The LLM options below add the command's LLM stages to the channels\n"
    "(advise, progress, diagnose), each within its request's deadline;\n"
    "with them every channel gets one more worker by default.\n"
    "Exit status: 0 after SIGTERM or SIGINT, 2 bad usage or a store or\n"
    "socket that cannot be opened.\n";

enum {
  OPT_DB = 1000,
  OPT_SOCKET,
  OPT_SOCKET_MODE,
  OPT_LISTEN,
  OPT_TOKEN,
  OPT_ROOT,
  OPT_AUDIT,
  OPT_JOURNAL,
  OPT_ADL,
  OPT_DL,
  OPT_QUEUE,
  OPT_WORKERS,
  OPT_RATE,
  OPT_BURST,
  OPT_BODY,
  OPT_DEPTH,
  OPT_CONNS,
  OPT_JOBS,
  OPT_SYNC,
  OPT_TOPK,
  OPT_THRESH,
  OPT_READY,
  OPT_SLOWDOWN,
  OPT_QUIET,
  OPT_VERBOSE,
  OPT_HELP
};

static int log_level = SM_SERVE_INFO;

static void log_line(void *ud, int level, const char *msg) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  char ts[32];
  time_t t = time(NULL);
  struct tm tm;

  (void)ud;
  if (level > log_level)
    return;
  localtime_r(&t, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
  fprintf(stderr, "%s schedmate serve: %s: %s\n", ts,
          names[level < 0   ? 0
                : level > 3 ? 3
                            : level],
          msg);
}

/* "submit=4" into the channel's slot. */
static int channel_value(const char *opt, const char *arg, int *slots) {
  static const char *const names[] = {"submit", "run", "exit"};
  const char *eq = strchr(arg, '=');
  long v;

  for (int c = 0; eq && c < SM_SERVE_NCHANNELS; c++)
    if (strlen(names[c]) == (size_t)(eq - arg) &&
        strncmp(arg, names[c], (size_t)(eq - arg)) == 0) {
      if (cli_parse_int("serve", opt, eq + 1, 1, 100000, &v))
        return CLI_USAGE;
      slots[c] = (int)v;
      return 0;
    }
  return cli_usage("serve", "%s: expected submit=N, run=N or exit=N, got '%s'",
                   opt, arg);
}

static int read_token(const char *path, char **out) {
  sm_err err = {0};
  struct stat st;
  char *text;
  size_t len;

  if (sm_file_read_all(path, 4096, &text, &len, &err) != 0)
    return cli_error("serve", CLI_USAGE, "--token-file: %s", err.msg);
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' ||
                     text[len - 1] == ' ' || text[len - 1] == '\t'))
    text[--len] = '\0';
  if (len < 16 || strpbrk(text, " \t\r\n") != NULL) {
    sm_free(text);
    return cli_error("serve", CLI_USAGE,
                     "--token-file %s: the token must be one word of at "
                     "least 16 characters",
                     path);
  }
  if (stat(path, &st) == 0 && (st.st_mode & 0044))
    fprintf(stderr,
            "schedmate serve: warning: %s is readable by group or others\n",
            path);
  *out = text;
  return 0;
}

static int write_ready(const char *path, sm_serve *sv) {
  char tmp[4096];
  FILE *f;
  int ok;

  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
    return -1;
  f = fopen(tmp, "w");
  if (f == NULL)
    return -1;
  for (int i = 0; sm_serve_address(sv, i); i++)
    fprintf(f, "%s\n", sm_serve_address(sv, i));
  ok = fclose(f) == 0;
  return ok && rename(tmp, path) == 0 ? 0 : -1;
}

int cmd_serve(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, OPT_DB},
      {"socket", required_argument, NULL, OPT_SOCKET},
      {"socket-mode", required_argument, NULL, OPT_SOCKET_MODE},
      {"listen", required_argument, NULL, OPT_LISTEN},
      {"token-file", required_argument, NULL, OPT_TOKEN},
      {"allow-root", required_argument, NULL, OPT_ROOT},
      {"audit", required_argument, NULL, OPT_AUDIT},
      {"journal", required_argument, NULL, OPT_JOURNAL},
      {"advise-deadline-ms", required_argument, NULL, OPT_ADL},
      {"deadline-ms", required_argument, NULL, OPT_DL},
      {"queue", required_argument, NULL, OPT_QUEUE},
      {"workers", required_argument, NULL, OPT_WORKERS},
      {"rate", required_argument, NULL, OPT_RATE},
      {"burst", required_argument, NULL, OPT_BURST},
      {"max-body", required_argument, NULL, OPT_BODY},
      {"max-depth", required_argument, NULL, OPT_DEPTH},
      {"max-connections", required_argument, NULL, OPT_CONNS},
      {"max-jobs", required_argument, NULL, OPT_JOBS},
      {"sync-interval", required_argument, NULL, OPT_SYNC},
      {"top-k", required_argument, NULL, OPT_TOPK},
      {"threshold", required_argument, NULL, OPT_THRESH},
      {"ready-file", required_argument, NULL, OPT_READY},
      {"slowdown", required_argument, NULL, OPT_SLOWDOWN},
      {"quiet", no_argument, NULL, OPT_QUIET},
      {"verbose", no_argument, NULL, OPT_VERBOSE},
      {"help", no_argument, NULL, OPT_HELP},
      CLI_LLM_LONGOPTS,
      {NULL, 0, NULL, 0}};
  const char *roots[MAX_ROOTS], *token_file = NULL, *ready = NULL;
  sm_serve_opts o = {0};
  char *token = NULL;
  sm_serve *sv;
  sm_err err = {0};
  sigset_t set;
  cli_llm llm;
  int c, rc = 0, n_roots = 0, sig = 0;
  long v;
  double d;

  optind = 0;
  opterr = 0;
  cli_llm_init(&llm);
  while (rc == 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_DB:
      o.db = optarg;
      break;
    case OPT_SOCKET:
      o.socket_path = optarg;
      break;
    case OPT_SOCKET_MODE: {
      char *end;
      v = strtol(optarg, &end, 8);
      if (*optarg == '\0' || *end != '\0' || v <= 0 || v > 0777)
        rc = cli_usage("serve", "--socket-mode: expected an octal mode such "
                                "as 0660");
      o.socket_mode = (int)v;
      break;
    }
    case OPT_LISTEN:
      o.listen = optarg;
      break;
    case OPT_TOKEN:
      token_file = optarg;
      break;
    case OPT_ROOT:
      if (n_roots == MAX_ROOTS)
        rc = cli_usage("serve", "at most %d --allow-root", MAX_ROOTS);
      else
        roots[n_roots++] = optarg;
      break;
    case OPT_AUDIT:
      o.audit_path = optarg;
      break;
    case OPT_JOURNAL:
      o.journal_path = optarg;
      break;
    case OPT_ADL:
      rc =
          cli_parse_int("serve", "--advise-deadline-ms", optarg, 1, 600000, &v);
      o.advise_deadline_ms = (int)v;
      break;
    case OPT_DL:
      rc = cli_parse_int("serve", "--deadline-ms", optarg, 1, 3600000, &v);
      o.deadline_ms = (int)v;
      break;
    case OPT_QUEUE:
      rc = channel_value("--queue", optarg, o.queue);
      break;
    case OPT_WORKERS:
      rc = channel_value("--workers", optarg, o.workers);
      break;
    case OPT_RATE:
      rc = cli_parse_num("serve", "--rate", optarg, &d);
      if (rc == 0 && d < 0)
        rc = cli_usage("serve", "--rate must be >= 0 (0: no limit)");
      o.rate = d == 0 ? -1 : d;
      break;
    case OPT_BURST:
      rc = cli_parse_num("serve", "--burst", optarg, &d);
      if (rc == 0 && d < 1)
        rc = cli_usage("serve", "--burst must be >= 1");
      o.burst = d;
      break;
    case OPT_BODY:
      rc = cli_parse_int("serve", "--max-body", optarg, 1024, 1L << 30, &v);
      o.max_body = (size_t)v;
      break;
    case OPT_DEPTH:
      rc = cli_parse_int("serve", "--max-depth", optarg, 2, 30, &v);
      o.max_depth = (int)v;
      break;
    case OPT_CONNS:
      rc = cli_parse_int("serve", "--max-connections", optarg, 1, 100000, &v);
      o.max_connections = (int)v;
      break;
    case OPT_JOBS:
      rc = cli_parse_int("serve", "--max-jobs", optarg, 1, 10000000, &v);
      o.max_jobs = (int)v;
      break;
    case OPT_SYNC:
      rc = cli_parse_num("serve", "--sync-interval", optarg, &d);
      if (rc == 0 && (d < 0 || d > 86400))
        rc = cli_usage("serve", "--sync-interval: expected 0..86400 s");
      o.sync_interval_s = d == 0 ? -1 : d;
      break;
    case OPT_TOPK:
      rc = cli_parse_int("serve", "--top-k", optarg, 1, 1000, &v);
      o.top_k = (int)v;
      break;
    case OPT_THRESH:
      rc = cli_parse_num("serve", "--threshold", optarg, &d);
      if (rc == 0 && !(d > 0 && d <= 1))
        rc = cli_usage("serve", "--threshold must be in (0, 1]");
      o.threshold = (float)d;
      break;
    case OPT_READY:
      ready = optarg;
      break;
    case OPT_SLOWDOWN:
      rc = cli_parse_num("serve", "--slowdown", optarg, &d);
      if (rc == 0 && !(d > 0 && d < 1))
        rc = cli_usage("serve", "--slowdown must be in (0, 1)");
      o.slowdown = d;
      break;
    case OPT_QUIET:
      log_level = SM_SERVE_WARN;
      break;
    case OPT_VERBOSE:
      log_level = SM_SERVE_DEBUG;
      break;
    case 'h':
    case OPT_HELP:
      fputs(usage_text, stdout);
      fputs(cli_llm_help, stdout);
      return CLI_OK;
    case ':':
      return cli_usage("serve", "%s needs a value", argv[optind - 1]);
    default:
      if ((rc = cli_llm_option(&llm, "serve", c, optarg)) < 0)
        return cli_usage("serve", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (rc != 0)
    return rc;
  if (optind < argc)
    return cli_usage("serve", "unexpected argument '%s'", argv[optind]);
  if (o.db == NULL)
    return cli_usage("serve", "--db URI is required");
  if (o.listen != NULL && token_file == NULL)
    return cli_usage("serve", "--listen needs --token-file (TCP clients "
                              "must send a bearer token)");
  if (token_file != NULL && o.listen == NULL)
    return cli_usage("serve", "--token-file only applies with --listen");
  if (o.socket_path == NULL && o.listen == NULL)
    o.socket_path = DEFAULT_SOCKET;
  if (token_file && read_token(token_file, &token) != 0)
    return CLI_USAGE;
  /* The client, when --llm or SCHEDMATE_LLM_URL asks for one. */
  if (cli_llm_start(&llm, "serve") != 0) {
    sm_free(token);
    return CLI_USAGE;
  }
  o.llm = llm.llm;
  o.token = token;
  o.roots = roots;
  o.n_roots = n_roots;
  o.log = log_line;

  /* The threads inherit a mask that leaves these signals to sigwait. */
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  sv = sm_serve_new(&o, &err);
  if (sv == NULL) {
    sm_free(token);
    cli_llm_release(&llm);
    return cli_error("serve", CLI_USAGE, "%s", err.msg);
  }
  if (llm.llm != NULL) {
    const sm_llm_config *lc = sm_llm_get_config(llm.llm);
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "LLM stage on: %.400s, model %.100s, %d request(s) at once, "
             "%.0f s per request at most (and never past a request's "
             "deadline)",
             lc->url, lc->model, lc->max_concurrency, lc->timeout_s);
    log_line(NULL, SM_SERVE_INFO, msg);
  }
  {
    char msg[96];
    snprintf(msg, sizeof(msg), "%lld records loaded into the index",
             sm_serve_history_size(sv));
    log_line(NULL, SM_SERVE_INFO, msg);
  }
  if (sm_serve_start(sv, &err) != 0) {
    sm_serve_free(sv);
    sm_free(token);
    cli_llm_release(&llm);
    return cli_error("serve", CLI_USAGE, "%s", err.msg);
  }
  if (ready && write_ready(ready, sv) != 0)
    fprintf(stderr, "schedmate serve: warning: %s: %s\n", ready,
            strerror(errno));
  for (;;) {
    if (sigwait(&set, &sig) != 0)
      continue;
    if (sig == SIGHUP)
      continue;
    break;
  }
  log_line(NULL, SM_SERVE_INFO,
           sig == SIGINT ? "SIGINT: stopping" : "SIGTERM: stopping");
  sm_serve_free(sv);
  cli_llm_release(&llm);
  if (ready)
    unlink(ready);
  sm_free(token);
  return CLI_OK;
}
