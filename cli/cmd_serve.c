/* cmd_serve.c - `schedmate serve`: SchedMate as a service for any
 * scheduler (include/schedmate/sm_serve.h, docs/serve.md).  Parses the
 * options, reads the token file, runs the service until SIGTERM or
 * SIGINT, and stops it cleanly (queued requests are answered, the socket
 * file is removed). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "llmcli.h"
#include "options.h"
#include "schedmate/sm_serve.h"

#define MAX_ROOTS 64
#define DEFAULT_SOCKET "/run/schedmate/serve.sock"

/* The help is written by hand (its columns differ from the table's): the
 * table's entries carry no help text of their own. */
static const cli_help help = {
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
    "socket that cannot be opened.\n",
    cli_llm_help};

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

/* ==== Options ==== */

/* What the command line says, besides the service's options. */
typedef struct serve_args {
  sm_serve_opts o;              /* the service's options */
  const char *roots[MAX_ROOTS]; /* --allow-root */
  int n_roots;                  /* their count */
  const char *token_file;       /* --token-file */
  const char *ready;            /* --ready-file */
  cli_llm llm;                  /* --llm and its companions */
} serve_args;

/* An integer option in [opt->lo, opt->hi] into the int at opt->value. */
static int opt_int(const cli_option *opt, const char *arg) {
  char name[64];
  long v;

  snprintf(name, sizeof(name), "--%s", opt->name);
  if (cli_parse_int("serve", name, arg, (long)opt->lo, (long)opt->hi, &v))
    return CLI_USAGE;
  *(int *)opt->value = (int)v;
  return 0;
}

#define PO_INT(name, var, lo, hi)                                              \
  { PO_T_CALLBACK, (name), "N", (var), NULL, (lo), (hi), 0, opt_int }

static int opt_max_body(const cli_option *opt, const char *arg) {
  long v;

  if (cli_parse_int("serve", "--max-body", arg, 1024, 1L << 30, &v))
    return CLI_USAGE;
  *(size_t *)opt->value = (size_t)v;
  return 0;
}

static int opt_socket_mode(const cli_option *opt, const char *arg) {
  char *end;
  long v = strtol(arg, &end, 8);

  *(int *)opt->value = (int)v;
  if (*arg == '\0' || *end != '\0' || v <= 0 || v > 0777)
    return cli_usage("serve", "--socket-mode: expected an octal mode such "
                              "as 0660");
  return 0;
}

static int opt_root(const cli_option *opt, const char *arg) {
  serve_args *a = opt->value;

  if (a->n_roots == MAX_ROOTS)
    return cli_usage("serve", "at most %d --allow-root", MAX_ROOTS);
  a->roots[a->n_roots++] = arg;
  return 0;
}

static int opt_queue(const cli_option *opt, const char *arg) {
  return channel_value("--queue", arg, opt->value);
}

static int opt_workers(const cli_option *opt, const char *arg) {
  return channel_value("--workers", arg, opt->value);
}

/* The real-valued options, each with its own range and message. */
static int opt_real(const cli_option *opt, const char *arg) {
  sm_serve_opts *o = opt->value;
  char name[64];
  double d;

  snprintf(name, sizeof(name), "--%s", opt->name);
  if (cli_parse_num("serve", name, arg, &d) != 0)
    return CLI_USAGE;
  if (strcmp(opt->name, "rate") == 0) {
    o->rate = d == 0 ? -1 : d;
    if (d < 0)
      return cli_usage("serve", "--rate must be >= 0 (0: no limit)");
  } else if (strcmp(opt->name, "burst") == 0) {
    o->burst = d;
    if (d < 1)
      return cli_usage("serve", "--burst must be >= 1");
  } else if (strcmp(opt->name, "sync-interval") == 0) {
    o->sync_interval_s = d == 0 ? -1 : d;
    if (d < 0 || d > 86400)
      return cli_usage("serve", "--sync-interval: expected 0..86400 s");
  } else if (strcmp(opt->name, "threshold") == 0) {
    o->threshold = (float)d;
    if (!(d > 0 && d <= 1))
      return cli_usage("serve", "--threshold must be in (0, 1]");
  } else {
    o->slowdown = d;
    if (!(d > 0 && d < 1))
      return cli_usage("serve", "--slowdown must be in (0, 1)");
  }
  return 0;
}

#define PO_REAL(name, o)                                                       \
  { PO_T_CALLBACK, (name), "X", (o), NULL, 0, 0, 0, opt_real }

/* --llm and its companions: the entry's defval is the shared option code
 * of cli/llmcli.h. */
static int opt_llm(const cli_option *opt, const char *arg) {
  int rc = cli_llm_option(opt->value, "serve", opt->defval, arg);
  return rc < 0 ? cli_usage("serve", "unknown option '--%s'", opt->name) : rc;
}

#define PO_LLM(name, argh, llm, code)                                          \
  { PO_T_CALLBACK, (name), (argh), (llm), NULL, 0, 0, (code), opt_llm }

/* Parses argv into a (a->llm initialised).  PO_OK, PO_HELP or
 * CLI_USAGE. */
static int parse_args(int argc, char **argv, serve_args *a) {
  sm_serve_opts *o = &a->o;
  int nargs, rc;
  const cli_option opts[] = {
      PO_STRING("db", "URI", &o->db, NULL),
      PO_STRING("socket", "PATH", &o->socket_path, NULL),
      PO_CALLBACK("socket-mode", "MODE", &o->socket_mode, opt_socket_mode,
                  NULL),
      PO_STRING("listen", "[HOST:]PORT", &o->listen, NULL),
      PO_STRING("token-file", "FILE", &a->token_file, NULL),
      PO_CALLBACK("allow-root", "DIR", a, opt_root, NULL),
      PO_STRING("audit", "FILE", &o->audit_path, NULL),
      PO_STRING("journal", "FILE", &o->journal_path, NULL),
      PO_INT("advise-deadline-ms", &o->advise_deadline_ms, 1, 600000),
      PO_INT("deadline-ms", &o->deadline_ms, 1, 3600000),
      PO_CALLBACK("queue", "CH=N", o->queue, opt_queue, NULL),
      PO_CALLBACK("workers", "CH=N", o->workers, opt_workers, NULL),
      PO_REAL("rate", o),
      PO_REAL("burst", o),
      PO_CALLBACK("max-body", "BYTES", &o->max_body, opt_max_body, NULL),
      PO_INT("max-depth", &o->max_depth, 2, 30),
      PO_INT("max-connections", &o->max_connections, 1, 100000),
      PO_INT("max-jobs", &o->max_jobs, 1, 10000000),
      PO_REAL("sync-interval", o),
      PO_INT("top-k", &o->top_k, 1, 1000),
      PO_REAL("threshold", o),
      PO_STRING("ready-file", "FILE", &a->ready, NULL),
      PO_REAL("slowdown", o),
      PO_FLAG("quiet", &log_level, SM_SERVE_WARN, NULL),
      PO_FLAG("verbose", &log_level, SM_SERVE_DEBUG, NULL),
      PO_LLM("llm", "URL", &a->llm, CLI_OPT_LLM),
      PO_LLM("llm-model", "NAME", &a->llm, CLI_OPT_LLM_MODEL),
      PO_LLM("llm-key-file", "FILE", &a->llm, CLI_OPT_LLM_KEY),
      PO_LLM("llm-cache", "DIR", &a->llm, CLI_OPT_LLM_CACHE),
      PO_LLM("llm-timeout", "S", &a->llm, CLI_OPT_LLM_TIMEOUT),
      PO_LLM("llm-retries", "N", &a->llm, CLI_OPT_LLM_RETRIES),
      PO_LLM("llm-max-tokens", "N", &a->llm, CLI_OPT_LLM_TOKENS),
      PO_LLM("llm-context", "N", &a->llm, CLI_OPT_LLM_CONTEXT),
      PO_LLM("llm-always", NULL, &a->llm, CLI_OPT_LLM_ALWAYS),
      PO_LLM("embed", "URL", &a->llm, CLI_OPT_EMBED),
      PO_LLM("embed-model", "NAME", &a->llm, CLI_OPT_EMBED_MODEL),
      PO_END(),
  };

  rc = cli_parse_options("serve", argc, argv, opts, &help, &nargs);
  if (rc != PO_OK)
    return rc;
  if (nargs > 0)
    return cli_usage("serve", "unexpected argument '%s'", argv[1]);
  if (o->db == NULL)
    return cli_usage("serve", "--db URI is required");
  if (o->listen != NULL && a->token_file == NULL)
    return cli_usage("serve", "--listen needs --token-file (TCP clients "
                              "must send a bearer token)");
  if (a->token_file != NULL && o->listen == NULL)
    return cli_usage("serve", "--token-file only applies with --listen");
  if (o->socket_path == NULL && o->listen == NULL)
    o->socket_path = DEFAULT_SOCKET;
  return PO_OK;
}

/* ==== Running ==== */

/* The service's first log lines: the LLM stage, the index. */
static void log_start(const serve_args *a, sm_serve *sv) {
  char msg[1024];

  if (a->llm.llm != NULL) {
    const sm_llm_config *lc = sm_llm_get_config(a->llm.llm);
    snprintf(msg, sizeof(msg),
             "LLM stage on: %.400s, model %.100s, %d request(s) at once, "
             "%.0f s per request at most (and never past a request's "
             "deadline)",
             lc->url, lc->model, lc->max_concurrency, lc->timeout_s);
    log_line(NULL, SM_SERVE_INFO, msg);
  }
  snprintf(msg, sizeof(msg), "%lld records loaded into the index",
           sm_serve_history_size(sv));
  log_line(NULL, SM_SERVE_INFO, msg);
}

/* Blocks SIGINT, SIGTERM and SIGHUP in every thread (the service's
 * threads inherit the mask) and ignores SIGPIPE. */
static void block_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, set, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* Waits for SIGINT or SIGTERM (SIGHUP is ignored); returns it. */
static int wait_stop(const sigset_t *set) {
  int sig = 0;

  for (;;) {
    if (sigwait(set, &sig) != 0)
      continue;
    if (sig == SIGHUP)
      continue;
    return sig;
  }
}

/* Makes, starts and runs the service until a stop signal. */
static int run(serve_args *a) {
  sm_err err = {0};
  sigset_t set;
  sm_serve *sv;
  int sig;

  block_signals(&set);
  sv = sm_serve_new(&a->o, &err);
  if (sv == NULL)
    return cli_error("serve", CLI_USAGE, "%s", err.msg);
  log_start(a, sv);
  if (sm_serve_start(sv, &err) != 0) {
    sm_serve_free(sv);
    return cli_error("serve", CLI_USAGE, "%s", err.msg);
  }
  if (a->ready && write_ready(a->ready, sv) != 0)
    fprintf(stderr, "schedmate serve: warning: %s: %s\n", a->ready,
            strerror(errno));
  sig = wait_stop(&set);
  log_line(NULL, SM_SERVE_INFO,
           sig == SIGINT ? "SIGINT: stopping" : "SIGTERM: stopping");
  sm_serve_free(sv);
  if (a->ready)
    unlink(a->ready);
  return CLI_OK;
}

int cmd_serve(int argc, char **argv) {
  serve_args a;
  char *token = NULL;
  int rc;

  memset(&a, 0, sizeof(a));
  cli_llm_init(&a.llm);
  rc = parse_args(argc, argv, &a);
  if (rc != PO_OK) {
    cli_llm_release(&a.llm);
    return rc == PO_HELP ? CLI_OK : rc;
  }
  if (a.token_file && read_token(a.token_file, &token) != 0) {
    cli_llm_release(&a.llm);
    return CLI_USAGE;
  }
  /* The client, when --llm or SCHEDMATE_LLM_URL asks for one. */
  if (cli_llm_start(&a.llm, "serve") != 0) {
    cli_llm_release(&a.llm);
    sm_free(token);
    return CLI_USAGE;
  }
  a.o.llm = a.llm.llm;
  a.o.token = token;
  a.o.roots = a.roots;
  a.o.n_roots = a.n_roots;
  a.o.log = log_line;
  rc = run(&a);
  cli_llm_release(&a.llm);
  sm_free(token);
  return rc;
}
