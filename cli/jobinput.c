/* jobinput.c - how subcommands that take "a job" read it: a repository, a
 * working directory, config files and the launch command after "--" (run
 * through the extractor), or a metadata file that `schedmate extract
 * --json` wrote earlier. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "schedmate/sm_advisor.h"

int cli_job_option(cli_job *j, const char *cmd, int opt, const char *arg) {
  switch (opt) {
  case CLI_OPT_REPO:
    j->repo = arg;
    return 0;
  case CLI_OPT_CWD:
    j->cwd = arg;
    return 0;
  case CLI_OPT_CONFIG:
    if (j->n_configs == CLI_MAX_CONFIGS)
      return cli_usage(cmd, "too many --config files (at most %d)",
                       CLI_MAX_CONFIGS);
    j->configs[j->n_configs++] = arg;
    return 0;
  case CLI_OPT_META:
    j->meta_file = arg;
    return 0;
  default:
    return -1;
  }
}

int cli_job_finish(cli_job *j, const char *cmd, int argc, char **argv,
                   int first) {
  if (first < argc) {
    j->argv = argv + first;
    j->argc = argc - first;
  }
  if (j->meta_file != NULL) {
    if (j->repo != NULL || j->argc > 0)
      return cli_usage(cmd, "--meta cannot be combined with --repo or a "
                            "command");
    return 0;
  }
  if (j->repo == NULL)
    return cli_usage(cmd, "--repo DIR (or --meta FILE) is required");
  if (j->argc == 0)
    return cli_usage(cmd, "the launch command is missing (put it after --)");
  return 0;
}

int cli_job_read(cli_job *j, const char *cmd, sm_meta *meta,
                 sm_buf *warnings_json) {
  sm_err err = {0};

  if (j->meta_file != NULL) {
    char *text;
    size_t len;
    int rc = sm_file_read_all(j->meta_file, (size_t)4 << 20, &text, &len, &err);
    if (rc != 0)
      return cli_error(cmd, CLI_USAGE, "%s", err.msg);
    rc = sm_meta_from_json(meta, text, len, &err);
    sm_free(text);
    if (rc != 0)
      return cli_error(cmd, CLI_USAGE, "%s: %s", j->meta_file, err.msg);
    return 0;
  }
  {
    sm_extract_req req = {0};
    sm_extract_res res;
    int rc;
    req.repo = j->repo;
    req.cwd = j->cwd;
    req.configs = j->configs;
    req.n_configs = j->n_configs;
    req.argv = (const char *const *)j->argv;
    req.argc = j->argc;
    rc = sm_extract(&req, &res, &err);
    if (rc != 0) {
      sm_extract_res_release(&res);
      return cli_error(cmd, CLI_USAGE, "%s", err.msg);
    }
    if (warnings_json != NULL) {
      sm_jw w;
      sm_jw_init(&w, warnings_json);
      sm_jw_arr_begin(&w);
      for (int i = 0; i < res.n_warnings; i++)
        sm_jw_str(&w, res.warnings[i]);
      sm_jw_arr_end(&w);
    }
    rc = sm_meta_copy(meta, &res.meta);
    sm_extract_res_release(&res);
    if (rc != 0)
      return cli_error(cmd, CLI_USAGE, "out of memory");
  }
  return 0;
}
