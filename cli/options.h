/* options.h - a table of a command's options, in the style of git's
 * parse-options: one entry per option says its name, the value's name in
 * the help, where the value goes, how it is checked and its help text;
 * the same table parses argv and prints the option list of --help.
 *
 *   double interval = 10;
 *   const char *db = NULL;
 *   int once = 0;
 *   const cli_option opts[] = {
 *       PO_STRING("db", "URI", &db, "history: SQLite file or redis://..."),
 *       PO_NUMBER("interval", "S", &interval, 0.05, 86400,
 *                 "seconds between passes (10)"),
 *       PO_GROUP("Run:"),
 *       PO_FLAG("once", &once, 1, "one pass, then exit"),
 *       PO_END(),
 *   };
 *   int nargs, rc = cli_parse_options("slurm", argc, argv, opts, &help,
 *                                     &nargs);
 *
 * Long options only (--name VALUE, --name=VALUE, or an unambiguous prefix
 * of the name, as getopt_long allows); -h and --help print the help.
 * Arguments that are not options are kept, in order, in argv[1..nargs]
 * (argv[0] stays), and everything after "--" is such an argument. */
#ifndef SM_CLI_OPTIONS_H
#define SM_CLI_OPTIONS_H

#include <stdio.h>

/* What an entry does with its option. */
typedef enum cli_opt_type {
  PO_T_END = 0,  /* ends the table */
  PO_T_GROUP,    /* a heading in the help ("Advisor:"), not an option */
  PO_T_FLAG,     /* no value: stores defval into *(int *)value */
  PO_T_STRING,   /* stores the value into *(const char **)value */
  PO_T_NUMBER,   /* a finite number in [lo, hi] into *(double *)value */
  PO_T_CALLBACK, /* calls cb (arg is NULL when the entry has no argh) */
} cli_opt_type;

typedef struct cli_option cli_option;

/* A callback's answer: 0, or CLI_USAGE with the message printed. */
typedef int (*cli_opt_cb)(const cli_option *opt, const char *arg);

struct cli_option {
  cli_opt_type type; /* see above */
  const char *name;  /* long name without "--"; the heading of a group */
  const char *argh;  /* the value's name in the help; NULL: no value */
  void *value;       /* where the value goes (the callback's data) */
  const char *help;  /* help text; '\n' starts an indented line */
  double lo, hi;     /* PO_T_NUMBER: the accepted range */
  int defval;        /* PO_T_FLAG: the value stored */
  cli_opt_cb cb;     /* PO_T_CALLBACK: what to call */
};

#define PO_END()                                                               \
  { PO_T_END, NULL, NULL, NULL, NULL, 0, 0, 0, NULL }
#define PO_GROUP(heading)                                                      \
  { PO_T_GROUP, (heading), NULL, NULL, NULL, 0, 0, 0, NULL }
#define PO_FLAG(name, var, val, help)                                          \
  { PO_T_FLAG, (name), NULL, (var), (help), 0, 0, (val), NULL }
#define PO_STRING(name, argh, var, help)                                       \
  { PO_T_STRING, (name), (argh), (var), (help), 0, 0, 0, NULL }
#define PO_NUMBER(name, argh, var, lo, hi, help)                               \
  { PO_T_NUMBER, (name), (argh), (var), (help), (lo), (hi), 0, NULL }
#define PO_CALLBACK(name, argh, data, cb, help)                                \
  { PO_T_CALLBACK, (name), (argh), (data), (help), 0, 0, 0, (cb) }

/* The text around the option list in --help. */
typedef struct cli_help {
  const char *head; /* usage lines and description, up to the options */
  const char *tail; /* after the options (exit status), or NULL */
} cli_help;

/* What cli_parse_options returns besides CLI_USAGE. */
#define PO_OK 0    /* parsed: go on */
#define PO_HELP -1 /* --help was asked for and printed: exit CLI_OK */

/* Parses argv[1..argc) against opts for command cmd ("slurm").  Returns
 * PO_OK with the other arguments in argv[1..*nargs], PO_HELP after
 * printing the help to stdout, or CLI_USAGE after a one-line message
 * ("schedmate CMD: ...") for an unknown or ambiguous option, a missing or
 * unexpected value, a bad number or a callback's refusal. */
int cli_parse_options(const char *cmd, int argc, char **argv,
                      const cli_option *opts, const cli_help *help, int *nargs);

/* Prints the help: head, the option list built from opts, tail. */
void cli_print_help(FILE *out, const cli_option *opts, const cli_help *help);

#endif /* SM_CLI_OPTIONS_H */
