/* cmd_advise.c - `schedmate advise`: what similar past jobs say about a new
 * one (duration, SM utilisation, performance model), with provenance, or
 * an explicit fallback so the scheduler uses its own estimator. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"

static const char usage_text[] =
    "usage: schedmate advise [--json] (--db URI | --server S) [--top-k K]\n"
    "           [--threshold T]\n"
    "           [--half-life S]\n"
    "           (--repo DIR [--cwd SUBDIR] [--config FILE]... -- COMMAND...\n"
    "            | --meta FILE)\n"
    "\n"
    "Extracts the job's workload metadata, finds the most similar past jobs\n"
    "in the history and estimates duration and SM utilisation from them\n"
    "(the plain mean over completed matches, with spread and weighted\n"
    "variants).  A match must be the same job: no identity field (model,\n"
    "d_model, n_layers, seq_len, dataset, task, domain, iterations) known\n"
    "on both sides with different values, and enough identity known on\n"
    "both sides: the model with its size (a sized name or d_model and\n"
    "n_layers) and two of dataset, task, length, or a model name without a\n"
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
    "\n"
    "  --db URI         SQLite file or redis://host:port/db\n"
    "  --top-k K        matches to use (default 5; 3 for SchedMate-SJF)\n"
    "  --threshold T    minimum cosine similarity (default 0.95)\n"
    "  --half-life S    weight older matches less (seconds; default off)\n"
    "  --meta FILE      metadata from `schedmate extract --json`\n"
    "  --server S       ask a running `schedmate serve` (unix:PATH or\n"
    "                   http://HOST:PORT) instead of --db\n"
    "Exit status: 0 with an answer (an estimate or a fallback), 2 bad usage\n"
    "or unreadable input.\n";

int cmd_advise(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, 'd'},
      {"json", no_argument, NULL, 'j'},
      {"top-k", required_argument, NULL, 'k'},
      {"threshold", required_argument, NULL, 't'},
      {"half-life", required_argument, NULL, 'l'},
      {"server", required_argument, NULL, 's'},
      {"help", no_argument, NULL, 'h'},
      CLI_JOB_LONGOPTS,
      CLI_LLM_LONGOPTS,
      {NULL, 0, NULL, 0}};
  const char *cmd = "advise", *db = NULL, *server = NULL;
  sm_advise_opts o = {0};
  cli_job job = {0};
  int json = 0, c, rc = 0;
  long k = 5;
  double thr = 0.95, hl = 0;
  sm_meta meta;
  sm_buf warn, out;
  sm_store *s = NULL;
  sm_err err = {0}, serr = {0};
  sm_advice a;
  cli_llm llm;
  double t0 = sm_now();

  optind = 0;
  cli_llm_init(&llm);
  while (rc == 0 && (c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
    switch (c) {
    case 'd':
      db = optarg;
      break;
    case 'j':
      json = 1;
      break;
    case 'k':
      rc = cli_parse_int(cmd, "--top-k", optarg, 1, 1000, &k);
      break;
    case 't':
      rc = cli_parse_num(cmd, "--threshold", optarg, &thr);
      if (rc == 0 && !(thr > 0 && thr <= 1))
        rc = cli_usage(cmd, "--threshold must be in (0, 1]");
      break;
    case 'l':
      rc = cli_parse_num(cmd, "--half-life", optarg, &hl);
      if (rc == 0 && hl < 0)
        rc = cli_usage(cmd, "--half-life must be >= 0");
      break;
    case 's': /* ask a running `schedmate serve` (cli/client.c) */
      server = optarg;
      break;
    case 'h':
      fputs(usage_text, stdout);
      fputs(cli_llm_help, stdout);
      return CLI_OK;
    default:
      if ((rc = cli_llm_option(&llm, cmd, c, optarg)) < 0)
        rc = cli_job_option(&job, cmd, c, optarg);
      if (rc < 0)
        rc = cli_usage(cmd, "unknown option");
    }
  }
  if (rc == 0)
    rc = cli_job_finish(&job, cmd, argc, argv, optind);
  if (rc == 0 && server != NULL)
    return cli_client_advise(server, &job, json, (int)k, thr, hl);
  if (rc == 0 && db == NULL)
    rc = cli_usage(cmd, "--db URI is required");
  if (rc == 0)
    rc = cli_llm_start(&llm, cmd);
  if (rc != 0)
    return rc;
  sm_meta_init(&meta);
  sm_buf_init(&warn, 0);
  rc = cli_job_read(&job, cmd, &meta, &warn);
  if (rc != 0) {
    sm_meta_release(&meta);
    sm_buf_release(&warn);
    cli_llm_release(&llm);
    return rc;
  }
  cli_llm_extract_job(&llm, job.repo, job.cwd, job.configs, job.n_configs,
                      job.argv, job.argc, &meta);
  o.top_k = (int)k;
  o.threshold = (float)thr;
  o.half_life_s = hl;
  /* A store that cannot be opened is an answer, not an error: the
   * scheduler falls back to its own estimator. */
  s = sm_store_open(db, 0, 0, &serr);
  sm_advice_init(&a);
  rc = cli_llm_advise(&llm, s, &meta, &o, &a, &err);
  if (rc != 0) {
    cli_llm_release(&llm);
    sm_meta_release(&meta);
    sm_buf_release(&warn);
    sm_store_close(s);
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  }
  if (s == NULL && a.fallback == SM_FALLBACK_UNAVAILABLE)
    snprintf(a.detail, sizeof(a.detail), "%s", serr.msg);
  sm_buf_init(&out, 0);
  if (json) {
    sm_jw w;
    sm_jw_init(&w, &out);
    sm_jw_obj_begin(&w);
    sm_jw_key(&w, "metadata");
    sm_meta_write_json(&meta, &w);
    sm_jw_key(&w, "evidence");
    sm_meta_write_evidence(&meta, &w);
    sm_advice_write_json(&a, &w);
    if (warn.len) {
      sm_jw_key(&w, "warnings");
      sm_jw_raw(&w, sm_buf_str(&warn));
    }
    sm_jw_key(&w, "elapsed_ms");
    sm_jw_num(&w, round((sm_now() - t0) * 1e4) / 10);
    cli_llm_members(&llm, &meta, &w);
    sm_jw_obj_end(&w);
    rc = sm_jw_finish(&w) == 0 ? cli_emit(&out) : CLI_USAGE;
  } else {
    const sm_meta_value *mv = &meta.f[SM_META_MODEL_NAME];
    printf("job: %s", mv->known ? mv->str : "(model unknown)");
    if (meta.f[SM_META_DATASET].known)
      printf(" on %s", meta.f[SM_META_DATASET].str);
    if (meta.f[SM_META_GPUS].known)
      printf(", %g GPUs", meta.f[SM_META_GPUS].num);
    printf("\n");
    if (a.fallback != SM_FALLBACK_EXTRACT_FAILED) {
      char g[64];
      printf("identity: %s\n", sm_identity_describe(a.identity, g, sizeof(g)));
    }
    for (int i = 0; i < a.n_matches; i++) {
      printf("  match %-24s score %.3f  %-16s %8.0f s", a.matches[i].id,
             a.scores[i], sm_end_state_name(a.matches[i].end_state),
             a.matches[i].duration_s);
      if (!isnan(a.matches[i].sm_util))
        printf("  util %.0f %%", a.matches[i].sm_util);
      printf("\n");
    }
    if (a.est.valid) {
      printf("estimate: %.0f s (mean of %d completed, stdev %.0f s, "
             "weighted %.0f s)",
             a.est.duration_s, a.est.n, a.est.stdev, a.est.weighted_duration_s);
      if (!isnan(a.est.sm_util))
        printf(", SM util %.1f %%", a.est.sm_util);
      if (a.est.p_early_end > 0)
        printf(", %.0f %% of matches ended early", 100 * a.est.p_early_end);
      printf("\n");
      for (int i = 0; a.est.n_util > 0 && i < a.n_matches; i++) {
        const sm_record *r = &a.matches[i];
        if (r->end_state != SM_END_COMPLETED || isnan(r->sm_util))
          continue;
        printf("  SM util of %d match(es), measured by %s on %s, driver %s",
               a.est.n_util, r->util_source ? r->util_source : "(unknown)",
               r->gpu_model ? r->gpu_model : "(unknown GPU)",
               r->driver_version ? r->driver_version : "(unknown)");
        if (!isnan(a.est.gpu_mem_mib))
          printf("; GPU memory %.0f MiB", a.est.gpu_mem_mib);
        printf("\n");
        break;
      }
    } else {
      printf("fallback: %s (%s)\n", sm_fallback_name(a.fallback), a.detail);
    }
    cli_llm_text(&llm, stdout);
  }
  cli_llm_release(&llm);
  sm_buf_release(&out);
  sm_buf_release(&warn);
  sm_advice_release(&a);
  sm_meta_release(&meta);
  sm_store_close(s);
  return rc;
}
