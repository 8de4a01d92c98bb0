/* llmcli.h - the optional LLM stage in the schedmate command: the shared
 * options (--llm URL, --llm-model, --llm-key-file, --embed URL, ...; or
 * SCHEDMATE_LLM_URL, SCHEDMATE_LLM_MODEL, SCHEDMATE_LLM_KEY_FILE,
 * SCHEDMATE_LLM_CACHE), one hook per subcommand and the output of the
 * stage.  Without an LLM option or variable no client is made and none
 * of the hooks does anything: the deterministic path stays as it is and
 * touches no network. */
#ifndef SM_CLI_LLM_H
#define SM_CLI_LLM_H

#include <getopt.h>
#include <stdio.h>

#include "options.h"
#include "schedmate/sm_llm.h"

/* getopt_long codes (clear of every subcommand's own). */
enum {
  CLI_OPT_LLM = 1100,
  CLI_OPT_LLM_MODEL,
  CLI_OPT_LLM_KEY,
  CLI_OPT_LLM_CACHE,
  CLI_OPT_LLM_TIMEOUT,
  CLI_OPT_LLM_RETRIES,
  CLI_OPT_LLM_TOKENS,
  CLI_OPT_LLM_CONTEXT,
  CLI_OPT_LLM_ALWAYS,
  CLI_OPT_EMBED,
  CLI_OPT_EMBED_MODEL
};

#define CLI_LLM_LONGOPTS                                                       \
  {"llm", required_argument, NULL, CLI_OPT_LLM},                               \
      {"llm-model", required_argument, NULL, CLI_OPT_LLM_MODEL},               \
      {"llm-key-file", required_argument, NULL, CLI_OPT_LLM_KEY},              \
      {"llm-cache", required_argument, NULL, CLI_OPT_LLM_CACHE},               \
      {"llm-timeout", required_argument, NULL, CLI_OPT_LLM_TIMEOUT},           \
      {"llm-retries", required_argument, NULL, CLI_OPT_LLM_RETRIES},           \
      {"llm-max-tokens", required_argument, NULL, CLI_OPT_LLM_TOKENS},         \
      {"llm-context", required_argument, NULL, CLI_OPT_LLM_CONTEXT},           \
      {"llm-always", no_argument, NULL, CLI_OPT_LLM_ALWAYS},                   \
      {"embed", required_argument, NULL, CLI_OPT_EMBED}, {                     \
    "embed-model", required_argument, NULL, CLI_OPT_EMBED_MODEL                \
  }

/* The same options as entries of an option table (cli/options.h), for a
 * command parsed with cli_parse_options: ctx is a cli_llm_ctx.  They are
 * left out of the table's option list; --help prints cli_llm_help. */
typedef struct cli_llm_ctx {
  struct cli_llm *llm;
  const char *cmd;
} cli_llm_ctx;
int cli_llm_table_option(const cli_option *opt, const char *arg);
#define CLI_LLM_PO(name, argh, ctx, code)                                      \
  {                                                                            \
    PO_T_CALLBACK, (name), (argh), (ctx), NULL, 0, 0, (code),                  \
        cli_llm_table_option                                                   \
  }
#define CLI_LLM_TABLE(ctx)                                                     \
  CLI_LLM_PO("llm", "URL", ctx, CLI_OPT_LLM),                                  \
      CLI_LLM_PO("llm-model", "NAME", ctx, CLI_OPT_LLM_MODEL),                 \
      CLI_LLM_PO("llm-key-file", "FILE", ctx, CLI_OPT_LLM_KEY),                \
      CLI_LLM_PO("llm-cache", "DIR", ctx, CLI_OPT_LLM_CACHE),                  \
      CLI_LLM_PO("llm-timeout", "S", ctx, CLI_OPT_LLM_TIMEOUT),                \
      CLI_LLM_PO("llm-retries", "N", ctx, CLI_OPT_LLM_RETRIES),                \
      CLI_LLM_PO("llm-max-tokens", "N", ctx, CLI_OPT_LLM_TOKENS),              \
      CLI_LLM_PO("llm-context", "N", ctx, CLI_OPT_LLM_CONTEXT),                \
      CLI_LLM_PO("llm-always", NULL, ctx, CLI_OPT_LLM_ALWAYS),                 \
      CLI_LLM_PO("embed", "URL", ctx, CLI_OPT_EMBED),                          \
      CLI_LLM_PO("embed-model", "NAME", ctx, CLI_OPT_EMBED_MODEL)

/* The options' help, for usage texts. */
extern const char cli_llm_help[];

typedef struct cli_llm {
  sm_llm_config cfg;     /* from options, then the environment */
  int given;             /* an --llm* or --embed option was given */
  sm_llm *llm;           /* the client, or NULL: no LLM stage */
  int ran;               /* which stage ran: 'a', 't', 'd' or 0 */
  sm_llm_advise_res adv; /* Advisor stage */
  sm_llm_track_res trk;  /* Tracker stage */
  sm_llm_diag_res dg;    /* Failure Handler stage */
  int embed_failed;      /* the embeddings endpoint failed */
  char embed_msg[SM_ERR_MSG_SIZE];
} cli_llm;

void cli_llm_init(cli_llm *o);
/* Takes one of the shared options; returns 0, CLI_USAGE, or -1 when opt
 * is not one of them. */
int cli_llm_option(cli_llm *o, const char *cmd, int opt, const char *arg);
/* Makes the client when an option or SCHEDMATE_LLM_URL asks for one.
 * Returns 0 or CLI_USAGE (message printed). */
int cli_llm_start(cli_llm *o, const char *cmd);
void cli_llm_release(cli_llm *o);

/* ==== Hooks ==== */

/* extract: the Advisor stage on the extractor's result. */
void cli_llm_extract(cli_llm *o, const sm_extract_req *req, sm_meta *meta);
/* advise: the Advisor stage on a job given by repository and command
 * (the job as cli_job holds it: repo, cwd, configs, argv). */
void cli_llm_extract_job(cli_llm *o, const char *repo, const char *cwd,
                         const char *const *configs, int n_configs, char **argv,
                         int argc, sm_meta *meta);
/* track: the Tracker stage on the Tracker's answer. */
void cli_llm_track(cli_llm *o, const char *log, sm_track_result *r);
/* diagnose: the Failure Handler stage; for_plan goes to the planner,
 * for_output to the report (both shallow copies of d). */
void cli_llm_diagnose(cli_llm *o, const char *log, const sm_diagnosis *d,
                      double threshold, sm_diagnosis *for_plan,
                      sm_diagnosis *for_output);
/* diagnose: names a disagreement among the plan's gates. */
void cli_llm_plan_note(cli_llm *o, sm_plan *p);
/* advise: sm_advise, or with --embed sm_advise_fp on the endpoint's
 * fingerprint (a failed endpoint is the history_unavailable fallback). */
int cli_llm_advise(cli_llm *o, sm_store *s, const sm_meta *m,
                   const sm_advise_opts *ao, sm_advice *a, sm_err *err);
/* history add: with --embed, the record's fingerprint from the endpoint.
 * Returns 0 or CLI_USAGE (message printed; nothing is written). */
int cli_llm_record(cli_llm *o, const char *cmd, sm_record *r);
/* history add/import: reads which embedder the history's fingerprints
 * are by (before a batch starts).  Returns 0 or the store's code. */
int cli_llm_history_open(sm_store *s, sm_err *err);
/* history add/import: sm_store_put that refuses a record whose embedder
 * is not the history's (a history never mixes embedders). */
int cli_llm_put(sm_store *s, const sm_record *r, sm_err *err);

/* ==== Output ==== */

/* Appends the stage's members ("provenance", "llm", "llm_stats",
 * "embedder") to a JSON object that is still open. */
void cli_llm_members(cli_llm *o, const sm_meta *meta, sm_jw *w);
/* The same for a complete object in buf (its closing brace is moved). */
int cli_llm_json(cli_llm *o, const sm_meta *meta, sm_buf *buf);
/* A few lines for people. */
void cli_llm_text(cli_llm *o, FILE *out);

#endif /* SM_CLI_LLM_H */
