/* common.c - messages, option-value parsing and output for subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_usage(const char *cmd, const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "schedmate %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'schedmate %s --help'.\n", cmd);
  return CLI_USAGE;
}

int cli_error(const char *cmd, int code, const char *fmt, ...) {
  va_list ap;

  fprintf(stderr, "schedmate %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return code;
}

int cli_emit(const sm_buf *buf) {
  if (fwrite(sm_buf_str(buf), 1, buf->len, stdout) != buf->len ||
      fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
    fprintf(stderr, "schedmate: cannot write output: %s\n", strerror(errno));
    return CLI_USAGE;
  }
  return CLI_OK;
}

int cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0)
      return 0;
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
      return 1;
  }
  return 0;
}

int cli_parse_int(const char *cmd, const char *opt, const char *s, long lo,
                  long hi, long *out) {
  long long v;

  if (sm_parse_i64(s, &v) != 0 || v < lo || v > hi)
    return cli_usage(cmd, "%s: expected an integer in [%ld, %ld], got '%s'",
                     opt, lo, hi, s);
  *out = (long)v;
  return 0;
}

int cli_parse_num(const char *cmd, const char *opt, const char *s,
                  double *out) {
  if (sm_parse_double(s, out) != 0)
    return cli_usage(cmd, "%s: expected a number, got '%s'", opt, s);
  return 0;
}
