/* options.c - parsing argv against a table of options and printing the
 * table as the option list of --help (options.h). */
#include <string.h>

#include "cli.h"
#include "options.h"

/* Column where the help text of an option starts. */
#define HELP_COL 24

/* ==== Help ==== */

static void print_option(FILE *out, const cli_option *o) {
  char left[128];
  int n;
  const char *h = o->help ? o->help : "";

  n = snprintf(left, sizeof(left), "  --%s%s%s", o->name, o->argh ? " " : "",
               o->argh ? o->argh : "");
  fputs(left, out);
  if (n < 0)
    n = 0;
  do
    fputc(' ', out);
  while (++n < HELP_COL);
  for (; *h; h++) {
    fputc(*h, out);
    if (*h == '\n')
      fprintf(out, "%*s", HELP_COL, "");
  }
  fputc('\n', out);
}

void cli_print_help(FILE *out, const cli_option *opts, const cli_help *help) {
  if (help != NULL && help->head != NULL)
    fputs(help->head, out);
  for (const cli_option *o = opts; o->type != PO_T_END; o++) {
    if (o->type == PO_T_GROUP)
      fprintf(out, "%s\n", o->name);
    else if (o->help != NULL)
      print_option(out, o);
  }
  if (help != NULL && help->tail != NULL)
    fputs(help->tail, out);
}

/* ==== Parsing ==== */

/* The entry named by "--NAME" (n bytes of name): an exact match, else the
 * only entry the name is a prefix of.  *help is set for --help (or a
 * prefix only it has).  NULL with *ambiguous set when several match. */
static const cli_option *lookup(const cli_option *opts, const char *name,
                                size_t n, int *help, int *ambiguous) {
  const cli_option *hit = NULL;
  int count = 0;

  *help = 0;
  *ambiguous = 0;
  for (const cli_option *o = opts; o->type != PO_T_END; o++) {
    if (o->type == PO_T_GROUP)
      continue;
    if (strlen(o->name) == n && strncmp(o->name, name, n) == 0)
      return o;
    if (strncmp(o->name, name, n) == 0) {
      hit = o;
      count++;
    }
  }
  if (n <= 4 && strncmp("help", name, n) == 0) {
    if (n == 4 || count == 0) {
      *help = 1;
      return NULL;
    }
    count++;
  }
  if (count > 1) {
    *ambiguous = 1;
    return NULL;
  }
  return hit;
}

/* Takes one option's value. */
static int take(const char *cmd, const cli_option *o, const char *opt,
                const char *arg) {
  double v;

  switch (o->type) {
  case PO_T_FLAG:
    *(int *)o->value = o->defval;
    return 0;
  case PO_T_STRING:
    *(const char **)o->value = arg;
    return 0;
  case PO_T_NUMBER:
    if (cli_parse_num(cmd, opt, arg, &v) != 0)
      return CLI_USAGE;
    if (!(v >= o->lo && v <= o->hi))
      return cli_usage(cmd, "%s: expected a number in [%g, %g], got '%s'", opt,
                       o->lo, o->hi, arg);
    *(double *)o->value = v;
    return 0;
  case PO_T_CALLBACK:
    return o->cb(o, arg);
  default:
    return cli_usage(cmd, "unknown option '%s'", opt);
  }
}

/* One "--name[=value]" at argv[*i]; *i moves past a separate value. */
static int long_option(const char *cmd, int argc, char **argv, int *i,
                       const cli_option *opts, const cli_help *help) {
  const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
  size_t n = eq ? (size_t)(eq - name) : strlen(name);
  int want_help, ambiguous;
  const cli_option *o = lookup(opts, name, n, &want_help, &ambiguous);
  char opt[128];

  if (want_help && eq == NULL) {
    cli_print_help(stdout, opts, help);
    return PO_HELP;
  }
  if (ambiguous)
    return cli_usage(cmd, "option '%.*s' is ambiguous", (int)(n + 2), arg);
  if (o == NULL)
    return cli_usage(cmd, "unknown option '%s'", arg);
  snprintf(opt, sizeof(opt), "--%s", o->name);
  if (o->type == PO_T_FLAG || (o->type == PO_T_CALLBACK && o->argh == NULL)) {
    if (eq != NULL)
      return cli_usage(cmd, "%s takes no value", opt);
    return take(cmd, o, opt, NULL);
  }
  if (eq != NULL)
    return take(cmd, o, opt, eq + 1);
  if (*i + 1 >= argc)
    return cli_usage(cmd, "%.*s needs a value", (int)(n + 2), arg);
  (*i)++;
  return take(cmd, o, opt, argv[*i]);
}

int cli_parse_options(const char *cmd, int argc, char **argv,
                      const cli_option *opts, const cli_help *help,
                      int *nargs) {
  int kept = 0, only_args = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int rc;
    if (only_args || a[0] != '-' || a[1] == '\0') {
      argv[1 + kept++] = argv[i];
      continue;
    }
    if (strcmp(a, "--") == 0) {
      only_args = 1;
      continue;
    }
    if (strcmp(a, "-h") == 0) {
      cli_print_help(stdout, opts, help);
      return PO_HELP;
    }
    if (a[1] != '-')
      return cli_usage(cmd, "unknown option '%s'", a);
    rc = long_option(cmd, argc, argv, &i, opts, help);
    if (rc != 0)
      return rc;
  }
  *nargs = kept;
  return PO_OK;
}
