/* cli.h - what the subcommands of the schedmate command share: the command
 * table, exit codes, messages and output helpers.  Only cli/ prints and
 * exits; the library returns errors as values. */
#ifndef SM_CLI_H
#define SM_CLI_H

#include "schedmate/sm.h"

/* Exit codes, as docs/design.md section 3 (the command-line contract)
 * fixes them. */
#define CLI_OK 0    /* success */
#define CLI_CHECK 1 /* a check failed (e.g. a failure was found) */
#define CLI_USAGE 2 /* bad usage or unreadable input */

/* One subcommand: run(argc, argv) gets argv[0] == its own name. */
typedef struct cli_cmd {
  const char *name;                  /* e.g. "track" */
  int (*run)(int argc, char **argv); /* returns an exit code */
  const char *summary;               /* one line for `schedmate --help` */
} cli_cmd;

/* Prints "schedmate CMD: MESSAGE" and a hint to use --help; returns
 * CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) SM_PRINTF(2, 3);
/* Prints "schedmate CMD: MESSAGE" to stderr and returns code. */
int cli_error(const char *cmd, int code, const char *fmt, ...) SM_PRINTF(3, 4);
/* Writes buf and a newline to stdout; returns 0 or CLI_USAGE on a write
 * error. */
int cli_emit(const sm_buf *buf);
/* True when argv holds -h or --help before a "--". */
int cli_wants_help(int argc, char **argv);
/* Parses a non-negative integer option value in [lo, hi]. */
int cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                  long hi, long *out);
/* Parses a finite number option value. */
int cli_parse_num(const char *cmd, const char *opt, const char *s, double *out);

/* ==== A job given by repository + command, or by a metadata file ==== */

#define CLI_MAX_CONFIGS 32
/* getopt_long codes of the shared job options. */
enum { CLI_OPT_REPO = 1000, CLI_OPT_CWD, CLI_OPT_CONFIG, CLI_OPT_META };
#define CLI_JOB_LONGOPTS                                                       \
  {"repo", required_argument, NULL, CLI_OPT_REPO},                             \
      {"cwd", required_argument, NULL, CLI_OPT_CWD},                           \
      {"config", required_argument, NULL, CLI_OPT_CONFIG}, {                   \
    "meta", required_argument, NULL, CLI_OPT_META                              \
  }

typedef struct cli_job {
  const char *repo;                     /* --repo */
  const char *cwd;                      /* --cwd */
  const char *configs[CLI_MAX_CONFIGS]; /* --config, repeatable */
  int n_configs;                        /* their count */
  const char *meta_file;                /* --meta FILE instead of a repo */
  char **argv;                          /* the command after "--" */
  int argc;                             /* its words */
} cli_job;

/* Takes one of the shared options; returns 0, CLI_USAGE, or -1 when opt
 * is not one of them. */
int cli_job_option(cli_job *j, const char *cmd, int opt, const char *arg);
/* After option parsing (argv[first..] is the command): checks that the
 * job is complete.  0 or CLI_USAGE. */
int cli_job_finish(cli_job *j, const char *cmd, int argc, char **argv,
                   int first);
/* Extracts (or reads) the job's metadata into an initialised meta; the
 * extractor's warnings go into warnings_json as a JSON array (if not
 * NULL).  0 or CLI_USAGE (message printed). */
int cli_job_read(cli_job *j, const char *cmd, sm_meta *meta,
                 sm_buf *warnings_json);

/* Subcommands. */
int cmd_version(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_gpustat(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_track(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* ==== The --server client (client.c) ==== */

/* advise through a running `schedmate serve`; 0 or CLI_USAGE. */
int cli_client_advise(const char *server, const cli_job *job, int json,
                      int top_k, double threshold, double half_life);
/* track LOG, or the progress of a registered job (log NULL, job_id). */
int cli_client_track(const char *server, const char *log, const char *job_id,
                     int json);
/* diagnose LOG; CLI_OK, CLI_CHECK (a failure was found) or CLI_USAGE. */
int cli_client_diagnose(const char *server, const char *log, int context,
                        int json);

#endif /* SM_CLI_H */
