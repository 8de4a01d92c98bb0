/* cmd_extract.c - `schedmate extract`: a job's repository and launch
 * command into workload metadata with evidence (docs/design.md sections 2,
 * the metadata schema, and 3, the CLI and JSON contract). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"
#include "schedmate/sm_advisor.h"

#define MAX_CONFIGS 64

static void usage(FILE *out) {
  fprintf(out,
          "usage: schedmate extract [--json] --repo DIR [--cwd SUBDIR]\n"
          "                         [--config FILE]... [--aliases FILE]\n"
          "                         [--max-files N] [--max-file-bytes N]\n"
          "                         [--max-bytes N] [--time-budget S]\n"
          "                         -- COMMAND...\n"
          "\n"
          "Reads the repository (read-only; nothing in it is run) and the\n"
          "launch command as a user submits it, and prints the workload\n"
          "metadata with the evidence (path:line or 'command') of every\n"
          "field.  Unknown fields stay null.\n"
          "\n"
          "  --repo DIR        repository root; nothing outside it is opened\n"
          "  --cwd SUBDIR      directory the command runs in, relative to\n"
          "                    the root (default: the root)\n"
          "  --config FILE     an extra config file (YAML, JSON, TOML, .py)\n"
          "  --aliases FILE    model/dataset alias table to use instead of\n"
          "                    the embedded one (kind<TAB>pattern<TAB>"
          "canonical...)\n"
          "  --max-files N     files read at most (default 2000)\n"
          "  --max-file-bytes N  bytes per file (default 1048576)\n"
          "  --max-bytes N     bytes in all (default 67108864)\n"
          "  --time-budget S   stop after S seconds with what was found "
          "(default 2)\n"
          "  --json            one JSON object: metadata, evidence,\n"
          "                    files_read, elapsed_ms, warnings\n\n%s",
          cli_llm_help);
}

static void print_text(const sm_extract_res *res) {
  for (int i = 0; i < SM_META_NFIELDS; i++) {
    const sm_meta_value *v = &res->meta.f[i];
    printf("%-22s ", sm_meta_name((sm_meta_field)i));
    if (!v->known)
      printf("%-28s", "-");
    else if (sm_meta_type_of((sm_meta_field)i) == SM_META_STR)
      printf("%-28s", v->str);
    else
      printf("%-28.10g", v->num);
    if (v->known && v->evidence)
      printf(" %s", v->evidence);
    putchar('\n');
  }
  printf("files read: %d, %.1f ms\n", res->files_read, res->elapsed_ms);
  for (int i = 0; i < res->n_warnings; i++)
    printf("warning: %s\n", res->warnings[i]);
}

int cmd_extract(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},
      {"repo", required_argument, NULL, 'r'},
      {"cwd", required_argument, NULL, 'C'},
      {"config", required_argument, NULL, 'c'},
      {"aliases", required_argument, NULL, 'a'},
      {"max-files", required_argument, NULL, 'F'},
      {"max-file-bytes", required_argument, NULL, 'B'},
      {"max-bytes", required_argument, NULL, 'T'},
      {"time-budget", required_argument, NULL, 't'},
      {"help", no_argument, NULL, 'h'},
      CLI_LLM_LONGOPTS,
      {NULL, 0, NULL, 0}};
  const char *configs[MAX_CONFIGS];
  cli_llm lo;
  sm_extract_req req;
  sm_extract_res res;
  sm_err err = {0};
  int json = 0, opt, rc;
  long v;

  memset(&req, 0, sizeof(req));
  cli_llm_init(&lo);
  optind = 0;
  opterr = 0;
  if (cli_wants_help(argc, argv)) {
    usage(stdout);
    return CLI_OK;
  }
  while ((opt = getopt_long(argc, argv, "+jr:C:c:a:h", opts, NULL)) != -1) {
    switch (opt) {
    case 'j':
      json = 1;
      break;
    case 'r':
      req.repo = optarg;
      break;
    case 'C':
      req.cwd = optarg;
      break;
    case 'c':
      if (req.n_configs == MAX_CONFIGS)
        return cli_usage("extract", "at most %d --config files", MAX_CONFIGS);
      configs[req.n_configs++] = optarg;
      break;
    case 'a': {
      char *text = NULL;
      size_t len = 0;
      if (sm_file_read_all(optarg, 1 << 20, &text, &len, &err) != 0)
        return cli_error("extract", CLI_USAGE, "%s", err.msg);
      rc = sm_extract_load_aliases(text, len, &err);
      sm_free(text);
      if (rc != 0)
        return cli_error("extract", CLI_USAGE, "%s: %s", optarg, err.msg);
      break;
    }
    case 'F':
      if (cli_parse_int("extract", "--max-files", optarg, 1, 1000000, &v))
        return CLI_USAGE;
      req.max_files = (int)v;
      break;
    case 'B':
      if (cli_parse_int("extract", "--max-file-bytes", optarg, 1, 1L << 30, &v))
        return CLI_USAGE;
      req.max_file_bytes = (size_t)v;
      break;
    case 'T':
      if (cli_parse_int("extract", "--max-bytes", optarg, 1, 1L << 34, &v))
        return CLI_USAGE;
      req.max_total_bytes = (size_t)v;
      break;
    case 't':
      if (cli_parse_num("extract", "--time-budget", optarg, &req.time_budget_s))
        return CLI_USAGE;
      if (req.time_budget_s <= 0 || req.time_budget_s > 3600)
        return cli_usage("extract", "--time-budget: expected (0, 3600] s");
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    default:
      if ((rc = cli_llm_option(&lo, "extract", opt, optarg)) >= 0) {
        if (rc != 0)
          return rc;
        break;
      }
      return cli_usage("extract", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (req.repo == NULL)
    return cli_usage("extract", "--repo DIR is required");
  if (optind >= argc)
    return cli_usage("extract", "no launch command (give it after --)");
  req.configs = configs;
  req.argv = (const char *const *)(argv + optind);
  req.argc = argc - optind;
  if (cli_llm_start(&lo, "extract") != 0)
    return CLI_USAGE;
  rc = sm_extract(&req, &res, &err);
  if (rc != 0) {
    sm_extract_res_release(&res);
    cli_llm_release(&lo);
    return cli_error("extract", CLI_USAGE, "%s", err.msg);
  }
  cli_llm_extract(&lo, &req, &res.meta);
  if (json) {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_extract_write_json(&res, &w);
    rc = sm_jw_finish(&w) == 0 && cli_llm_json(&lo, &res.meta, &b) == 0
             ? cli_emit(&b)
             : cli_error("extract", CLI_USAGE, "cannot write JSON output");
    sm_buf_release(&b);
  } else {
    print_text(&res);
    cli_llm_text(&lo, stdout);
    rc = CLI_OK;
  }
  cli_llm_release(&lo);
  sm_extract_res_release(&res);
  return rc;
}
