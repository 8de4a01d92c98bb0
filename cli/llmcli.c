/* llmcli.c - the LLM stage's options, hooks and output for the
 * subcommands (llmcli.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "llmcli.h"

const char cli_llm_help[] =
    "Optional LLM stage (docs/llm.md; off unless asked for):\n"
    "  --llm URL           OpenAI-compatible server (vLLM, llama.cpp, Ollama)\n"
    "                      [$SCHEDMATE_LLM_URL]\n"
    "  --llm-model NAME    model name [$SCHEDMATE_LLM_MODEL]\n"
    "  --llm-key-file F    file holding the API key [$SCHEDMATE_LLM_KEY_FILE]\n"
    "  --llm-cache DIR     reply cache on disk [$SCHEDMATE_LLM_CACHE]\n"
    "  --llm-timeout S     one request, retries included (30)\n"
    "  --llm-retries N     retries on 429/5xx/connection errors (2)\n"
    "  --llm-max-tokens N  completion tokens per request (1024)\n"
    "  --llm-context N     failure context lines either side (200)\n"
    "  --llm-always        run the stage even where the engine is sure\n"
    "  --embed URL         embeddings server for fingerprints\n"
    "  --embed-model NAME  its model (default: the --llm-model)\n";

void cli_llm_init(cli_llm *o) {
  memset(o, 0, sizeof(*o));
  sm_llm_config_init(&o->cfg);
}

int cli_llm_option(cli_llm *o, const char *cmd, int opt, const char *arg) {
  long v;
  double d;

  switch (opt) {
  case CLI_OPT_LLM:
    o->cfg.url = arg;
    break;
  case CLI_OPT_LLM_MODEL:
    o->cfg.model = arg;
    break;
  case CLI_OPT_LLM_KEY:
    o->cfg.key_file = arg;
    break;
  case CLI_OPT_LLM_CACHE:
    o->cfg.cache_dir = arg;
    break;
  case CLI_OPT_LLM_TIMEOUT:
    if (cli_parse_num(cmd, "--llm-timeout", arg, &d))
      return CLI_USAGE;
    if (!(d > 0 && d <= 3600))
      return cli_usage(cmd, "--llm-timeout: expected (0, 3600] s");
    o->cfg.timeout_s = d;
    o->cfg.stage_timeout_s = 3 * d;
    o->cfg.connect_timeout_s = d < 3 ? d : 3;
    break;
  case CLI_OPT_LLM_RETRIES:
    if (cli_parse_int(cmd, "--llm-retries", arg, 0, 10, &v))
      return CLI_USAGE;
    o->cfg.retries = (int)v;
    break;
  case CLI_OPT_LLM_TOKENS:
    if (cli_parse_int(cmd, "--llm-max-tokens", arg, 16, 1000000, &v))
      return CLI_USAGE;
    o->cfg.max_tokens = (int)v;
    break;
  case CLI_OPT_LLM_CONTEXT:
    if (cli_parse_int(cmd, "--llm-context", arg, 1, 5000, &v))
      return CLI_USAGE;
    o->cfg.context_lines = (int)v;
    break;
  case CLI_OPT_LLM_ALWAYS:
    o->cfg.always = 1;
    break;
  case CLI_OPT_EMBED:
    o->cfg.embed_url = arg;
    break;
  case CLI_OPT_EMBED_MODEL:
    o->cfg.embed_model = arg;
    break;
  default:
    return -1;
  }
  o->given = 1;
  return 0;
}

int cli_llm_table_option(const cli_option *opt, const char *arg) {
  const cli_llm_ctx *c = opt->value;

  return cli_llm_option(c->llm, c->cmd, opt->defval, arg);
}

int cli_llm_start(cli_llm *o, const char *cmd) {
  sm_err err = {0};

  sm_llm_config_env(&o->cfg);
  if ((o->cfg.url == NULL || !*o->cfg.url) &&
      (o->cfg.embed_url == NULL || !*o->cfg.embed_url)) {
    if (o->given && (o->cfg.model || o->cfg.key_file || o->cfg.embed_model))
      return cli_usage(cmd, "--llm-* options need --llm URL (or "
                            "SCHEDMATE_LLM_URL) or --embed URL");
    return 0;
  }
  o->llm = sm_llm_new(&o->cfg, &err);
  if (o->llm == NULL)
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  return 0;
}

void cli_llm_release(cli_llm *o) {
  sm_llm_advise_res_release(&o->adv);
  sm_llm_track_res_release(&o->trk);
  sm_llm_diag_res_release(&o->dg);
  sm_llm_free(o->llm);
  o->llm = NULL;
}

/* ==== Hooks ==== */

void cli_llm_extract(cli_llm *o, const sm_extract_req *req, sm_meta *meta) {
  sm_err err = {0};
  if (o->llm == NULL || !sm_llm_has_chat(o->llm))
    return;
  o->ran = 'a';
  if (sm_llm_advise(o->llm, req, meta, 0, &o->adv, &err) != 0)
    fprintf(stderr, "schedmate: llm stage: %s\n", err.msg);
}

void cli_llm_extract_job(cli_llm *o, const char *repo, const char *cwd,
                         const char *const *configs, int n_configs, char **argv,
                         int argc, sm_meta *meta) {
  sm_extract_req req = {0};
  if (o->llm == NULL || repo == NULL)
    return;
  req.repo = repo;
  req.cwd = cwd;
  req.configs = configs;
  req.n_configs = n_configs;
  req.argv = (const char *const *)argv;
  req.argc = argc;
  cli_llm_extract(o, &req, meta);
}

void cli_llm_track(cli_llm *o, const char *log, sm_track_result *r) {
  sm_err err = {0};
  if (o->llm == NULL || !sm_llm_has_chat(o->llm))
    return;
  o->ran = 't';
  if (sm_llm_track(o->llm, log, r, &o->trk, &err) != 0)
    fprintf(stderr, "schedmate: llm stage: %s\n", err.msg);
}

void cli_llm_diagnose(cli_llm *o, const char *log, const sm_diagnosis *d,
                      double threshold, sm_diagnosis *for_plan,
                      sm_diagnosis *for_output) {
  sm_err err = {0};
  if (o->llm == NULL || !sm_llm_has_chat(o->llm)) {
    *for_plan = *for_output = *d;
    return;
  }
  o->ran = 'd';
  if (sm_llm_diagnose(o->llm, log, d, threshold > 0 ? threshold : 0.8, &o->dg,
                      &err) != 0)
    fprintf(stderr, "schedmate: llm stage: %s\n", err.msg);
  sm_llm_diagnosis_merge(d, &o->dg, for_plan, for_output);
}

void cli_llm_plan_note(cli_llm *o, sm_plan *p) {
  if (o->ran == 'd' && o->dg.disagreement[0] && p->n_gates < SM_PLAN_MAX_GATES)
    p->gates[p->n_gates++] = o->dg.disagreement;
}

int cli_llm_advise(cli_llm *o, sm_store *s, const sm_meta *m,
                   const sm_advise_opts *ao, sm_advice *a, sm_err *err) {
  float fp[SM_FP_DIMS];
  sm_err e = {0};

  if (o->llm == NULL || !sm_llm_has_embed(o->llm))
    return sm_advise(s, m, NULL, ao, a, err);
  if (sm_llm_fingerprint(o->llm, m, NULL, fp, &e) != 0) {
    /* No fingerprint, no search: the scheduler keeps its own estimator. */
    sm_advice_release(a);
    a->fallback = SM_FALLBACK_UNAVAILABLE;
    snprintf(a->detail, sizeof(a->detail), "embeddings endpoint: %s", e.msg);
    o->embed_failed = 1;
    snprintf(o->embed_msg, sizeof(o->embed_msg), "%s", e.msg);
    return 0;
  }
  return sm_advise_fp(s, m, NULL, fp, sm_llm_embedder(o->llm), ao, a, err);
}

int cli_llm_record(cli_llm *o, const char *cmd, sm_record *r) {
  sm_err e = {0};
  sm_fp_extra x = {r->user, r->name, r->vc};
  if (o->llm == NULL || !sm_llm_has_embed(o->llm))
    return 0;
  if (sm_llm_fingerprint(o->llm, &r->meta, &x, r->fp, &e) != 0)
    return cli_error(cmd, CLI_USAGE, "embeddings endpoint: %s (nothing added)",
                     e.msg);
  sm_free(r->embedder);
  r->embedder = sm_strdup(sm_llm_embedder(o->llm));
  return r->embedder ? 0 : cli_error(cmd, CLI_USAGE, "out of memory");
}

/* The history's embedder, once known, cannot change: it is remembered
 * for the store (the command uses one store at a time). */
static const sm_store *known_store;
static char known[160];

int cli_llm_history_open(sm_store *s, sm_err *err) {
  int rc = sm_llm_history_embedder(s, known, sizeof(known), err);
  known_store = rc == 0 ? s : NULL;
  return rc;
}

int cli_llm_put(sm_store *s, const sm_record *r, sm_err *err) {
  const char *mine =
      r->embedder && *r->embedder ? r->embedder : SM_LLM_EMBEDDER_BUILTIN;
  int rc;

  if (known_store != s && (rc = cli_llm_history_open(s, err)) != 0)
    return rc;
  if (known[0] != '\0' && strcmp(known, mine) != 0)
    return sm_err_set(err, SM_EINVAL,
                      "record %s: its fingerprint is by embedder %s, the "
                      "history's by %s; a history never mixes embedders (use "
                      "another --db, or the same --embed)",
                      r->id, mine, known);
  rc = sm_store_put(s, r, err);
  if (rc == 0 && known[0] == '\0')
    snprintf(known, sizeof(known), "%s", mine);
  return rc;
}

/* ==== Output ==== */

void cli_llm_members(cli_llm *o, const sm_meta *meta, sm_jw *w) {
  if (o->llm == NULL)
    return;
  if (o->ran == 'a' && meta != NULL)
    sm_llm_advise_write_json(&o->adv, meta, w);
  else if (o->ran == 't')
    sm_llm_track_write_json(&o->trk, w);
  else if (o->ran == 'd')
    sm_llm_diag_write_json(&o->dg, w);
  if (sm_llm_has_embed(o->llm))
    sm_jw_kv_str(w, "embedder", sm_llm_embedder(o->llm));
  sm_jw_key(w, "llm_stats");
  sm_llm_stats_write_json(o->llm, w);
}

int cli_llm_json(cli_llm *o, const sm_meta *meta, sm_buf *buf) {
  sm_jw w;
  size_t n = buf->len;

  if (o->llm == NULL)
    return 0;
  while (n > 0 && (buf->data[n - 1] == '\n' || buf->data[n - 1] == ' '))
    n--;
  if (n < 2 || buf->data[n - 1] != '}')
    return SM_EINVAL;
  buf->len = n - 1;
  buf->data[buf->len] = '\0';
  /* Reopen the object: one level deep, members already written. */
  sm_jw_init(&w, buf);
  w.depth = 1;
  w.first[1] = buf->data[buf->len - 1] == '{';
  cli_llm_members(o, meta, &w);
  sm_jw_obj_end(&w);
  return sm_jw_finish(&w);
}

static void drops_text(const sm_llm_drop *d, int n, FILE *out) {
  for (int i = 0; i < n; i++)
    fprintf(out, "  dropped %s = %s (%s): %s\n", d[i].what,
            d[i].value ? d[i].value : "?", d[i].evidence ? d[i].evidence : "-",
            d[i].why);
}

void cli_llm_text(cli_llm *o, FILE *out) {
  const char *why = NULL;
  if (o->llm == NULL)
    return;
  if (o->ran == 'a' && o->adv.ran) {
    fprintf(out, "llm: %d claim(s), %d verified, %d tool call(s), %d refused",
            o->adv.claims, o->adv.verified, o->adv.tool_calls,
            o->adv.tool_refused);
    why = sm_llm_reason_name(o->adv.reason);
    fprintf(out, "%s%s\n", why ? "; fallback: " : "", why ? why : "");
    for (int f = 0; f < SM_META_NFIELDS; f++)
      if (o->adv.filled & (1u << f))
        fprintf(out, "  filled %s (llm)\n", sm_meta_name((sm_meta_field)f));
    drops_text(o->adv.drops, o->adv.n_drops, out);
  } else if (o->ran == 't' && o->trk.ran) {
    why = sm_llm_reason_name(o->trk.reason);
    fprintf(out,
            "llm:         %s (%d line(s) sent, %d verified number(s), %d "
            "dropped)%s%s\n",
            o->trk.used ? "used" : "not used", o->trk.candidates,
            o->trk.verified, o->trk.claims - o->trk.verified,
            why ? "; fallback: " : "", why ? why : "");
    drops_text(o->trk.drops, o->trk.n_drops, out);
  } else if (o->ran == 'd' && o->dg.ran) {
    why = sm_llm_reason_name(o->dg.reason);
    if (o->dg.verified)
      fprintf(out, "llm:         %s / %s (%s)%s%s\n", o->dg.category,
              o->dg.component, o->dg.agrees ? "agrees" : "disagrees",
              o->dg.disagreement[0] ? ": " : "", o->dg.disagreement);
    else
      fprintf(out, "llm:         no verified verdict (%s)\n", why ? why : "?");
    drops_text(o->dg.drops, o->dg.n_drops, out);
  }
  if (o->embed_failed)
    fprintf(out, "llm: embeddings endpoint failed: %s\n", o->embed_msg);
}
