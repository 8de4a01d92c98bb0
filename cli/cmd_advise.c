/* cmd_advise.c - `schedmate advise`: what similar past jobs say about a new
 * one (duration, SM utilisation, performance model), with provenance, or
 * an explicit fallback so the scheduler uses its own estimator. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"
#include "options.h"

static const cli_help help = {
    .head =
        "usage: schedmate advise [--json] (--db URI | --server S) [--top-k K]\n"
        "           [--threshold T]\n"
        "           [--half-life S]\n"
        "           (--repo DIR [--cwd SUBDIR] [--config FILE]... -- "
        "COMMAND...\n"
        "            | --meta FILE)\n"
        "\n"
        "Extracts the job's workload metadata, finds the most similar past "
        "jobs\n"
        "in the history and estimates duration and SM utilisation from them\n"
        "(the plain mean over completed matches, with spread and weighted\n"
        "variants).  A match must be the same job: no identity field (model,\n"
        "d_model, n_layers, seq_len, dataset, task, domain, iterations) known\n"
        "on both sides with different values, and enough identity known on\n"
        "both sides: the model with its size (a sized name or d_model and\n"
        "n_layers) and two of dataset, task, length, or a model name without "
        "a\n"
        "size and all three.  Unknown fields are never counted as agreement.\n"
        "When no estimate is possible it says so:\n"
        "fallback is true and fallback_reason is one of\n"
        "  no_match              empty history, only different jobs, or no\n"
        "                        match ever completed\n"
        "  below_threshold       the best match scores below --threshold\n"
        "  too_little_known      the job (or every similar job) does not know\n"
        "                        enough identity to be matched safely\n"
        "  extract_failed        no metadata could be extracted\n"
        "  inconsistent_history  the matches' durations disagree\n"
        "  history_unavailable   the store is missing, corrupt or unreachable\n"
        "\n",
    .tail = "Exit status: 0 with an answer (an estimate or a fallback), 2 bad "
            "usage\n"
            "or unreadable input.\n"};

/* What the command line asks for. */
typedef struct adv_args {
  const char *db, *server;
  int json;
  double k, thr, hl;
  cli_job job;
  cli_llm llm;
  cli_llm_ctx lctx;
} adv_args;

/* --repo, --cwd, --config, --meta (cli_job_option); defval is the code. */
static int opt_job(const cli_option *opt, const char *arg) {
  return cli_job_option(opt->value, "advise", opt->defval, arg);
}
#define PO_JOB(name, argh, job, code, help)                                    \
  { PO_T_CALLBACK, (name), (argh), (job), (help), 0, 0, (code), opt_job }

static int opt_threshold(const cli_option *opt, const char *arg) {
  double *t = opt->value;

  if (cli_parse_num("advise", "--threshold", arg, t))
    return CLI_USAGE;
  return *t > 0 && *t <= 1
             ? 0
             : cli_usage("advise", "--threshold must be in (0, 1]");
}

static int opt_half_life(const cli_option *opt, const char *arg) {
  double *h = opt->value;

  if (cli_parse_num("advise", "--half-life", arg, h))
    return CLI_USAGE;
  return *h >= 0 ? 0 : cli_usage("advise", "--half-life must be >= 0");
}

static int opt_top_k(const cli_option *opt, const char *arg) {
  long v;

  if (cli_parse_int("advise", "--top-k", arg, 1, 1000, &v))
    return CLI_USAGE;
  *(double *)opt->value = (double)v;
  return 0;
}

/* Parses the command line into a (initialised here): the options, then
 * the job (the command after "--", or --meta).  PO_OK, PO_HELP (help
 * printed) or CLI_USAGE. */
static int parse_args(int argc, char **argv, adv_args *a) {
  const cli_option opts[] = {
      PO_STRING("db", "URI", &a->db, "SQLite file or redis://host:port/db"),
      PO_FLAG("json", &a->json, 1, NULL),
      PO_CALLBACK("top-k", "K", &a->k, opt_top_k,
                  "matches to use (default 5; 3 for SchedMate-SJF)"),
      PO_CALLBACK("threshold", "T", &a->thr, opt_threshold,
                  "minimum cosine similarity (default 0.95)"),
      PO_CALLBACK("half-life", "S", &a->hl, opt_half_life,
                  "weight older matches less (seconds; default off)"),
      PO_JOB("meta", "FILE", &a->job, CLI_OPT_META,
             "metadata from `schedmate extract --json`"),
      PO_STRING("server", "S", &a->server,
                "ask a running `schedmate serve` (unix:PATH or\n"
                "http://HOST:PORT) instead of --db"),
      PO_JOB("repo", "DIR", &a->job, CLI_OPT_REPO, NULL),
      PO_JOB("cwd", "SUBDIR", &a->job, CLI_OPT_CWD, NULL),
      PO_JOB("config", "FILE", &a->job, CLI_OPT_CONFIG, NULL),
      CLI_LLM_TABLE(&a->lctx),
      PO_END(),
  };
  int nargs, rc;

  memset(a, 0, sizeof(*a));
  a->k = 5;
  a->thr = 0.95;
  cli_llm_init(&a->llm);
  a->lctx = (cli_llm_ctx){&a->llm, "advise"};
  rc = cli_parse_options("advise", argc, argv, opts, &help, &nargs);
  if (rc == PO_HELP)
    fputs(cli_llm_help, stdout);
  if (rc != PO_OK)
    return rc;
  return cli_job_finish(&a->job, "advise", nargs + 1, argv, 1);
}

/* The text answer: the job, its matches, the estimate or the fallback. */
static void print_text(cli_llm *llm, const sm_meta *meta, const sm_advice *a) {
  const sm_meta_value *mv = &meta->f[SM_META_MODEL_NAME];

  printf("job: %s", mv->known ? mv->str : "(model unknown)");
  if (meta->f[SM_META_DATASET].known)
    printf(" on %s", meta->f[SM_META_DATASET].str);
  if (meta->f[SM_META_GPUS].known)
    printf(", %g GPUs", meta->f[SM_META_GPUS].num);
  printf("\n");
  if (a->fallback != SM_FALLBACK_EXTRACT_FAILED) {
    char g[64];
    printf("identity: %s\n", sm_identity_describe(a->identity, g, sizeof(g)));
  }
  for (int i = 0; i < a->n_matches; i++) {
    printf("  match %-24s score %.3f  %-16s %8.0f s", a->matches[i].id,
           a->scores[i], sm_end_state_name(a->matches[i].end_state),
           a->matches[i].duration_s);
    if (!isnan(a->matches[i].sm_util))
      printf("  util %.0f %%", a->matches[i].sm_util);
    printf("\n");
  }
  if (!a->est.valid) {
    printf("fallback: %s (%s)\n", sm_fallback_name(a->fallback), a->detail);
    cli_llm_text(llm, stdout);
    return;
  }
  printf("estimate: %.0f s (mean of %d completed, stdev %.0f s, "
         "weighted %.0f s)",
         a->est.duration_s, a->est.n, a->est.stdev, a->est.weighted_duration_s);
  if (!isnan(a->est.sm_util))
    printf(", SM util %.1f %%", a->est.sm_util);
  if (a->est.p_early_end > 0)
    printf(", %.0f %% of matches ended early", 100 * a->est.p_early_end);
  printf("\n");
  for (int i = 0; a->est.n_util > 0 && i < a->n_matches; i++) {
    const sm_record *r = &a->matches[i];
    if (r->end_state != SM_END_COMPLETED || isnan(r->sm_util))
      continue;
    printf("  SM util of %d match(es), measured by %s on %s, driver %s",
           a->est.n_util, r->util_source ? r->util_source : "(unknown)",
           r->gpu_model ? r->gpu_model : "(unknown GPU)",
           r->driver_version ? r->driver_version : "(unknown)");
    if (!isnan(a->est.gpu_mem_mib))
      printf("; GPU memory %.0f MiB", a->est.gpu_mem_mib);
    printf("\n");
    break;
  }
  cli_llm_text(llm, stdout);
}

/* The JSON answer: metadata, evidence, the advice, warnings, the time. */
static int print_json(cli_llm *llm, const sm_meta *meta, const sm_advice *a,
                      const sm_buf *warn, double t0) {
  sm_buf out;
  sm_jw w;
  int rc;

  sm_buf_init(&out, 0);
  sm_jw_init(&w, &out);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "metadata");
  sm_meta_write_json(meta, &w);
  sm_jw_key(&w, "evidence");
  sm_meta_write_evidence(meta, &w);
  sm_advice_write_json(a, &w);
  if (warn->len) {
    sm_jw_key(&w, "warnings");
    sm_jw_raw(&w, sm_buf_str(warn));
  }
  sm_jw_key(&w, "elapsed_ms");
  sm_jw_num(&w, round((sm_now() - t0) * 1e4) / 10);
  cli_llm_members(llm, meta, &w);
  sm_jw_obj_end(&w);
  rc = sm_jw_finish(&w) == 0 ? cli_emit(&out) : CLI_USAGE;
  sm_buf_release(&out);
  return rc;
}

/* Reads the job's metadata and asks the history (and the LLM stage, if
 * any); prints the answer. */
static int run(adv_args *aa, double t0) {
  const char *cmd = "advise";
  sm_advise_opts o = {0};
  sm_err err = {0}, serr = {0};
  sm_store *s = NULL;
  sm_meta meta;
  sm_advice a;
  sm_buf warn;
  int rc;

  sm_meta_init(&meta);
  sm_buf_init(&warn, 0);
  rc = cli_job_read(&aa->job, cmd, &meta, &warn);
  if (rc != 0) {
    sm_meta_release(&meta);
    sm_buf_release(&warn);
    return rc;
  }
  cli_llm_extract_job(&aa->llm, aa->job.repo, aa->job.cwd, aa->job.configs,
                      aa->job.n_configs, aa->job.argv, aa->job.argc, &meta);
  o.top_k = (int)aa->k;
  o.threshold = (float)aa->thr;
  o.half_life_s = aa->hl;
  /* A store that cannot be opened is an answer, not an error: the
   * scheduler falls back to its own estimator. */
  s = sm_store_open(aa->db, 0, 0, &serr);
  sm_advice_init(&a);
  rc = cli_llm_advise(&aa->llm, s, &meta, &o, &a, &err);
  if (rc != 0) {
    rc = cli_error(cmd, CLI_USAGE, "%s", err.msg);
  } else {
    if (s == NULL && a.fallback == SM_FALLBACK_UNAVAILABLE)
      snprintf(a.detail, sizeof(a.detail), "%s", serr.msg);
    if (aa->json) {
      rc = print_json(&aa->llm, &meta, &a, &warn, t0);
    } else {
      print_text(&aa->llm, &meta, &a);
      rc = CLI_OK;
    }
  }
  sm_buf_release(&warn);
  sm_advice_release(&a);
  sm_meta_release(&meta);
  sm_store_close(s);
  return rc;
}

int cmd_advise(int argc, char **argv) {
  double t0 = sm_now();
  adv_args a;
  int rc = parse_args(argc, argv, &a);

  if (rc == PO_HELP)
    return CLI_OK;
  if (rc == 0 && a.server != NULL)
    return cli_client_advise(a.server, &a.job, a.json, (int)a.k, a.thr, a.hl);
  if (rc == 0 && a.db == NULL)
    rc = cli_usage("advise", "--db URI is required");
  if (rc == 0)
    rc = cli_llm_start(&a.llm, "advise");
  if (rc == 0)
    rc = run(&a, t0);
  cli_llm_release(&a.llm);
  return rc;
}
