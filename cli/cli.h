/* cli.h - what the subcommands of the schedmate command share: the command
 * table, exit codes, messages and output helpers.  Only cli/ prints and
 * exits; the library returns errors as values. */
#ifndef SM_CLI_H
#define SM_CLI_H

#include "schedmate/sm.h"

/* Exit codes, as DESIGN.md section 3 fixes them. */
#define CLI_OK 0     /* success */
#define CLI_CHECK 1  /* a check failed (e.g. a failure was found) */
#define CLI_USAGE 2  /* bad usage or unreadable input */

/* One subcommand: run(argc, argv) gets argv[0] == its own name. */
typedef struct cli_cmd {
  const char *name;                 /* e.g. "track" */
  int (*run)(int argc, char **argv); /* returns an exit code */
  const char *summary;              /* one line for `schedmate --help` */
} cli_cmd;

/* Prints "schedmate CMD: MESSAGE" and a hint to use --help; returns
 * CLI_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) SM_PRINTF(2, 3);
/* Prints "schedmate CMD: MESSAGE" to stderr and returns code. */
int cli_error(const char *cmd, int code, const char *fmt, ...)
    SM_PRINTF(3, 4);
/* Writes buf and a newline to stdout; returns 0 or CLI_USAGE on a write
 * error. */
int cli_emit(const sm_buf *buf);
/* True when argv holds -h or --help before a "--". */
int cli_wants_help(int argc, char **argv);
/* Parses a non-negative integer option value in [lo, hi]. */
int cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                  long hi, long *out);
/* Parses a finite number option value. */
int cli_parse_num(const char *cmd, const char *opt, const char *s,
                  double *out);

/* Subcommands. */
int cmd_version(int argc, char **argv);
int cmd_track(int argc, char **argv);

#endif /* SM_CLI_H */
