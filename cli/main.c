/* main.c - the schedmate command: git-style dispatch to subcommands.
 *
 * `schedmate slurm ...` runs the Slurm agent's own executable,
 * schedmate-slurm, from the directory of this one: the agent is the only
 * program linked with libslurm (GPL-2.0-or-later), and this command is
 * not (README, Licence). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The agent's executable, beside this one. */
#define AGENT_EXE "schedmate-slurm"

/* `schedmate slurm ARGS`: execs schedmate-slurm ARGS; returns only when
 * it cannot (CLI_USAGE, one line). */
static int cmd_slurm(int argc, char **argv) {
  char self[PATH_MAX], agent[PATH_MAX + sizeof(AGENT_EXE)];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  char *slash;

  (void)argc;
  if (n <= 0)
    return cli_error("slurm", CLI_USAGE,
                     "cannot find this program's directory (/proc/self/exe: "
                     "%s), so not its " AGENT_EXE,
                     n < 0 ? strerror(errno) : "empty");
  self[n] = '\0';
  slash = strrchr(self, '/');
  if (slash != NULL)
    *slash = '\0';
  snprintf(agent, sizeof(agent), "%s/" AGENT_EXE, slash ? self : ".");
  if (access(agent, X_OK) != 0)
    return cli_error("slurm", CLI_USAGE,
                     "%s: the Slurm agent is not installed beside this "
                     "schedmate (%s; `make` builds it)",
                     agent, strerror(errno));
  argv[0] = agent;
  execv(agent, argv);
  return cli_error("slurm", CLI_USAGE, "%s: %s", agent, strerror(errno));
}

static const cli_cmd commands[] = {
    {"advise", cmd_advise, "estimate a job from similar past jobs"},
    {"diagnose", cmd_diagnose, "find the first real error of a failed job"},
    {"extract", cmd_extract, "read a job's code and command into metadata"},
    {"gpustat", cmd_gpustat, "sample this node's GPUs per job (NVML)"},
    {"history", cmd_history, "the job history: add, list, show, import..."},
    {"report", cmd_report,
     "shadow report: what SchedMate said vs. what "
     "happened"},
    {"serve", cmd_serve, "SchedMate as a service for any scheduler (HTTP)"},
    {"simulate", cmd_simulate, "replay a job trace on a simulated cluster"},
    {"slurm", cmd_slurm, "run SchedMate beside a Slurm cluster (agent)"},
    {"track", cmd_track, "a training job's progress from its log"},
    {"version", cmd_version, "print the version"},
};

static void print_help(FILE *out) {
  fprintf(out,
          "usage: schedmate [--version] [--help] COMMAND [ARGS]\n"
          "\n"
          "SchedMate reads what GPU cluster schedulers ignore (a job's code,\n"
          "its logs, the history of similar jobs) and turns it into facts\n"
          "a scheduler can use.\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < SM_ARRAY_LEN(commands); i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nRun 'schedmate COMMAND --help' for a command's options.\n"
               "Exit status: 0 success, 1 a check failed, 2 bad usage or "
               "unreadable input.\n");
}

int cmd_version(int argc, char **argv) {
  (void)argv;
  if (argc > 1 && cli_wants_help(argc, argv)) {
    printf("usage: schedmate version\n");
    return CLI_OK;
  }
  if (argc > 1)
    return cli_usage("version", "takes no arguments");
  printf("schedmate %s\n", SM_VERSION_STRING);
  return CLI_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return CLI_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    if (argc > 2 && strcmp(argv[1], "help") == 0) {
      for (size_t i = 0; i < SM_ARRAY_LEN(commands); i++)
        if (strcmp(argv[2], commands[i].name) == 0) {
          char *hargv[] = {argv[2], (char *)"--help", NULL};
          return commands[i].run(2, hargv);
        }
      fprintf(stderr, "schedmate: unknown command '%s'\n", argv[2]);
      return CLI_USAGE;
    }
    print_help(stdout);
    return CLI_OK;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
    printf("schedmate %s\n", SM_VERSION_STRING);
    return CLI_OK;
  }
  for (size_t i = 0; i < SM_ARRAY_LEN(commands); i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "schedmate: '%s' is not a command. See 'schedmate --help'.\n",
          argv[1]);
  return CLI_USAGE;
}
