/* sm_llm.h - the optional LLM stage: an OpenAI-compatible HTTP client
 * (vLLM, llama.cpp's server, Ollama) and three stages that run after the
 * deterministic engine, only where it is unsure, and whose every claim is
 * checked before it reaches an answer.
 *
 *   client     sm_llm: /v1/chat/completions (JSON mode where the server
 *              has it) and /v1/embeddings, with connect and total
 *              timeouts, retries with back-off on 429 and 5xx, a limit on
 *              concurrent requests, a per-request token budget and a
 *              content-addressed cache (the same request is never sent
 *              twice).
 *   Advisor    sm_llm_advise: fields the extractor left unknown, from a
 *              bounded read-only view of the repository (a filtered file
 *              tree and two tools, list and read, inside the root only);
 *              every value must cite path:line and is kept only when that
 *              line, read again here, holds it.
 *   Tracker    sm_llm_track: progress lines of a format the parser does
 *              not know; every number must be printed on its line.
 *   Failure    sm_llm_diagnose: a verdict on the located context; its
 *              quotes must be lines of that context.  It never makes a
 *              plan more actionable (sm_llm_diagnosis_merge).
 *   Embedder   sm_llm_fingerprint: fingerprints from an embeddings
 *              endpoint, tagged with the embedder that made them.
 *
 * Repository and log text is data, never instructions: it is quoted in
 * the user message between delimiters derived from its own hash, and any
 * reply outside the fixed JSON schemas is refused and counted.  Any
 * failure (connection, timeout, HTTP error, truncated or invalid JSON,
 * schema violation, unverifiable claim) leaves the deterministic answer
 * as it was and counts the reason.  Without a client nothing here runs
 * and nothing touches the network.  The library never prints. */
#ifndef SM_LLM_H
#define SM_LLM_H

#include <stdint.h>

#include "schedmate/sm_advisor.h"
#include "schedmate/sm_base.h"
#include "schedmate/sm_failure.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_tracker.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Components and counted reasons ==== */

/* Who made a request; statistics are kept per component. */
typedef enum sm_llm_comp {
  SM_LLM_ADVISOR = 0, /* sm_llm_advise */
  SM_LLM_TRACKER,     /* sm_llm_track */
  SM_LLM_FAILURE,     /* sm_llm_diagnose */
  SM_LLM_EMBED,       /* sm_llm_fingerprint */
  SM_LLM_NCOMP
} sm_llm_comp;

/* "advisor", "tracker", "failure", "embed". */
SM_EXTERN const char *sm_llm_comp_name(int comp);

/* Why a request or a claim was not used: name, meaning. */
#define SM_LLM_REASONS(XX)                                                     \
  XX(CONNECT, "connect")           /* no connection to the server */           \
  XX(TIMEOUT, "timeout")           /* the deadline passed */                   \
  XX(HTTP_429, "http_429")         /* still rate-limited after retries */      \
  XX(HTTP_5XX, "http_5xx")         /* still a server error after retries */    \
  XX(HTTP_OTHER, "http_error")     /* another HTTP status */                   \
  XX(TOO_LARGE, "too_large")       /* response over the size cap */            \
  XX(BAD_RESPONSE, "bad_response") /* not an OpenAI-shaped response */         \
  XX(BAD_JSON, "bad_json")         /* content not JSON (truncated...) */       \
  XX(SCHEMA, "schema")             /* JSON outside the stage's schema */       \
  XX(BUDGET, "over_budget")        /* prompt over the token budget */          \
  XX(TOOL_REFUSED, "tool_refused") /* a tool call outside schema or root */    \
  XX(TOOL_CAP, "tool_cap")         /* tool-call or byte cap reached */         \
  XX(UNVERIFIED, "unverified")     /* claims dropped by the verifier */        \
  XX(NO_ANSWER, "no_answer")       /* the model answered nothing usable */     \
  XX(INTERNAL, "internal")         /* out of memory, unreadable input */

/* clang-format off */
typedef enum sm_llm_reason {
  SM_LLM_R_NONE = 0,
#define SM__XX(id, name) SM_LLM_R_##id,
  SM_LLM_REASONS(SM__XX)
#undef SM__XX
  SM_LLM_NREASONS
} sm_llm_reason;
/* clang-format on */

/* "connect", "timeout", ...; NULL for SM_LLM_R_NONE. */
SM_EXTERN const char *sm_llm_reason_name(int reason);

/* ==== Client ==== */

/* Settings.  sm_llm_config_init fills the defaults in brackets. */
typedef struct sm_llm_config {
  const char *url;          /* chat server base URL ("http://h:8000" or
                             * ".../v1"), or NULL: no chat stages */
  const char *model;        /* model name sent with every request */
  const char *key_file;     /* file holding the API key, or NULL */
  const char *embed_url;    /* embeddings base URL, or NULL: none */
  const char *embed_model;  /* embeddings model [model] */
  const char *cache_dir;    /* on-disk cache directory, or NULL (an
                             * in-memory cache is always kept) */
  double connect_timeout_s; /* TCP/TLS connect [3] */
  double timeout_s;         /* one request, retries included [30] */
  double stage_timeout_s;   /* one stage run, all requests [90] */
  int retries;              /* extra attempts on 429/5xx/connect [2] */
  double backoff_s;         /* first back-off, doubled per retry [0.25] */
  double max_backoff_s;     /* longest back-off (Retry-After too) [4] */
  int max_concurrency;      /* requests in flight per client [4] */
  int max_tokens;           /* completion tokens asked per request [1024] */
  int max_prompt_tokens;    /* prompt budget per request, estimated at
                             * 4 bytes a token [12000] */
  int json_mode;            /* send response_format json_object [1] */
  size_t max_response;      /* response bytes [4 MiB] */
  int context_lines;        /* failure context either side [200] */
  int max_tool_calls;       /* Advisor tool calls per run [8] */
  size_t max_tool_bytes;    /* Advisor bytes shown to the model [96 KiB] */
  int always;               /* run the stages even where the engine is
                             * sure (evaluation) [0] */
} sm_llm_config;

SM_EXTERN void sm_llm_config_init(sm_llm_config *c);
/* Fills url, model and key_file from SCHEDMATE_LLM_URL,
 * SCHEDMATE_LLM_MODEL and SCHEDMATE_LLM_KEY_FILE, and cache_dir from
 * SCHEDMATE_LLM_CACHE, where they are still NULL.  The strings are the
 * environment's. */
SM_EXTERN void sm_llm_config_env(sm_llm_config *c);

typedef struct sm_llm sm_llm;

/* A client.  The configuration's strings are copied; the key file is read
 * now (at most 4 KiB, surrounding blanks dropped).  Connects to nothing.
 * Returns NULL with a message when neither url nor embed_url is set, a
 * URL is not http(s), the key file is unreadable or the cache directory
 * cannot be made.  Thread-safe. */
SM_EXTERN sm_llm *sm_llm_new(const sm_llm_config *c, sm_err *err);
/* Frees the client; NULL is a no-op. */
SM_EXTERN void sm_llm_free(sm_llm *l);
/* 1 when the client has a chat server / an embeddings server. */
SM_EXTERN int sm_llm_has_chat(const sm_llm *l);
SM_EXTERN int sm_llm_has_embed(const sm_llm *l);
/* The client's settings (defaults applied; strings owned by the client). */
SM_EXTERN const sm_llm_config *sm_llm_get_config(const sm_llm *l);

/* One chat message. */
typedef struct sm_llm_msg {
  const char *role;    /* "system", "user", "assistant" */
  const char *content; /* text */
} sm_llm_msg;

/* A chat reply.  Strings are owned (sm_llm_reply_release). */
typedef struct sm_llm_reply {
  char *content;         /* message content ("" when none) */
  char *tool_name;       /* first native tool call's function, or NULL */
  char *tool_args;       /* its arguments (JSON text), or NULL */
  char *finish_reason;   /* "stop", "length", ... or NULL */
  int cached;            /* answered from the cache, no request sent */
  int prompt_tokens;     /* usage the server reported (0 unknown) */
  int completion_tokens; /* likewise */
  double latency_s;      /* wall time of the HTTP exchange(s) */
} sm_llm_reply;

SM_EXTERN void sm_llm_reply_release(sm_llm_reply *r);

/* Sends one chat request for comp and waits at most until deadline (an
 * sm_now() time; 0: the client's timeout_s from now).  Returns 0 with
 * *out filled, or a negative code with *reason (an sm_llm_reason) and a
 * message: the server could not be reached, kept failing, answered past
 * the deadline, or not in the OpenAI shape.  Counts everything in the
 * client's statistics. */
SM_EXTERN int sm_llm_chat(sm_llm *l, int comp, const sm_llm_msg *msgs, int n,
                          double deadline, sm_llm_reply *out, int *reason,
                          sm_err *err);

/* Caps the deadline of every request the calling thread makes from now
 * on (the stages' included) at t, an sm_now() time; 0 removes the cap.  A
 * service sets it to what is left of the request it is answering, so
 * that no stage outlives it (a request past it fails at once, "timeout";
 * a cached answer is still used). */
SM_EXTERN void sm_llm_thread_deadline(double t);

/* Embeds text through the embeddings endpoint: *vec (sm_free) gets *dims
 * floats.  Returns 0 or a negative code with *reason. */
SM_EXTERN int sm_llm_embed(sm_llm *l, const char *text, double deadline,
                           float **vec, int *dims, int *reason, sm_err *err);

/* ==== Accounting ==== */

/* Per component.  Safe to read while other threads make requests. */
typedef struct sm_llm_stats {
  uint64_t runs;              /* stage runs */
  uint64_t used;              /* runs whose verified answer was used */
  uint64_t fallbacks;         /* runs that left the deterministic answer */
  uint64_t requests;          /* logical requests (prompts) */
  uint64_t calls;             /* HTTP requests sent, retries included */
  uint64_t retries;           /* of which retries */
  uint64_t cache_hits;        /* requests answered from the cache */
  uint64_t prompt_tokens;     /* reported by the server */
  uint64_t completion_tokens; /* likewise */
  double latency_s;           /* wall time in HTTP exchanges */
  uint64_t claims;            /* values the model claimed */
  uint64_t verified;          /* claims kept */
  uint64_t dropped;           /* claims dropped by the verifier */
  uint64_t tool_calls;        /* Advisor tool calls served */
  uint64_t tool_refused;      /* tool calls refused */
  uint64_t reasons[SM_LLM_NREASONS]; /* counted reasons */
} sm_llm_stats;

/* Copies comp's counters (or the sum over components for -1). */
SM_EXTERN void sm_llm_stats_get(const sm_llm *l, int comp, sm_llm_stats *out);
/* Writes {"advisor": {...}, "tracker": ..., "failure": ..., "embed": ...}
 * with the counters, the reasons by name and the mean latency. */
SM_EXTERN void sm_llm_stats_write_json(const sm_llm *l, sm_jw *w);
/* Appends the counters in the Prometheus text format, metric names
 * starting with prefix ("schedmate_llm" when NULL), one label
 * component="..." (and reason="..." for the reasons).  This is the
 * function a /metrics endpoint calls.  Returns 0 or SM_ENOMEM. */
SM_EXTERN int sm_llm_stats_write_prom(const sm_llm *l, const char *prefix,
                                      sm_buf *out);

/* ==== A dropped claim, for the reports ==== */

typedef struct sm_llm_drop {
  char *what;      /* field or key the claim was for */
  char *value;     /* the claimed value as text */
  char *evidence;  /* what it cited, or NULL */
  const char *why; /* "outside_root", "no_such_line", "not_on_line", ... */
} sm_llm_drop;

#define SM_LLM_MAX_DROPS 32

/* ==== Advisor stage ==== */

/* Result of one Advisor run.  Strings owned (sm_llm_advise_res_release). */
typedef struct sm_llm_advise_res {
  int ran;             /* a request was made (or answered from cache) */
  unsigned asked;      /* bit (1u << field): fields asked for */
  unsigned filled;     /* fields the verified answer filled (llm) */
  int claims;          /* values claimed */
  int verified;        /* values kept */
  int tool_calls;      /* list/read calls served */
  int tool_refused;    /* calls refused (outside root, unknown tool...) */
  int requests;        /* chat requests of this run */
  int reason;          /* sm_llm_reason that ended the run without an
                        * answer, or 0 */
  char *reason_detail; /* one line, or NULL */
  sm_llm_drop drops[SM_LLM_MAX_DROPS]; /* dropped claims */
  int n_drops;                         /* their count */
  double elapsed_ms;                   /* wall time of the run */
} sm_llm_advise_res;

/* Asks the model for the fields of meta that are unknown, plus those in
 * unsure (bits 1u << field: fields the extractor holds but doubts; a
 * verified answer replaces them).  req is the extraction request (its
 * repository, command directory and command); meta is the extractor's
 * result, changed in place only by verified values, each with the
 * evidence the model cited.  Returns 0 (also when the model failed: see
 * res->reason), or SM_EINVAL / SM_ENOMEM.  res is initialised here;
 * release it. */
SM_EXTERN int sm_llm_advise(sm_llm *l, const sm_extract_req *req, sm_meta *meta,
                            unsigned unsure, sm_llm_advise_res *res,
                            sm_err *err);
SM_EXTERN void sm_llm_advise_res_release(sm_llm_advise_res *r);
/* Writes the members "provenance" ({field: "static" | "llm"} for every
 * known field) and "llm" (the run) into an open object. */
SM_EXTERN void sm_llm_advise_write_json(const sm_llm_advise_res *r,
                                        const sm_meta *meta, sm_jw *w);

/* ==== Tracker stage ==== */

typedef struct sm_llm_track_res {
  int ran;             /* a request was made */
  int used;            /* the verified sample filled the answer */
  int candidates;      /* progress-like lines sent */
  int claims;          /* numbers claimed */
  int verified;        /* numbers kept */
  int samples;         /* lines with a verified step or loss */
  int reason;          /* sm_llm_reason, or 0 */
  char *reason_detail; /* one line, or NULL */
  sm_llm_drop drops[SM_LLM_MAX_DROPS];
  int n_drops;
  double elapsed_ms;
} sm_llm_track_res;

/* When r (the Tracker's answer for the log at path) shows no progress, or
 * no step and no loss, sends the newest progress-like lines that the
 * parser did not read (at most 16, oldest first) and fills r from the
 * newest line whose numbers all verify; step_time_source becomes "llm".
 * Returns 0 (see out->reason), or a negative code for an unreadable log. */
SM_EXTERN int sm_llm_track(sm_llm *l, const char *path, sm_track_result *r,
                           sm_llm_track_res *out, sm_err *err);
SM_EXTERN void sm_llm_track_res_release(sm_llm_track_res *r);
/* Writes the member "llm" into an open object. */
SM_EXTERN void sm_llm_track_write_json(const sm_llm_track_res *r, sm_jw *w);

/* ==== Failure Handler stage ==== */

#define SM_LLM_MAX_QUOTES 8

typedef struct sm_llm_diag_res {
  int ran;             /* a request was made */
  int verified;        /* the verdict passed every check */
  int agrees;          /* verified and the same category/component */
  int filled;          /* the answer shown is the verdict (the engine
                        * said unknown; set by the merge) */
  int claims;          /* the verdict and its quotes */
  int verified_quotes; /* quotes found on their lines */
  char category[24];   /* the model's verdict ("" when none) */
  char component[16];  /* likewise */
  char *root_cause;    /* its sentence, or NULL */
  long long quotes[SM_LLM_MAX_QUOTES]; /* verified evidence lines */
  int n_quotes;                        /* their count */
  long long context_first;             /* first line sent */
  long long context_last;              /* last line sent */
  double confidence_before;            /* the engine's confidence */
  double confidence_after;             /* after the merge */
  char disagreement[256];              /* one line, or "" */
  int reason;                          /* sm_llm_reason, or 0 */
  char *reason_detail;                 /* one line, or NULL */
  sm_llm_drop drops[SM_LLM_MAX_DROPS];
  int n_drops;
  double elapsed_ms;
} sm_llm_diag_res;

/* Confidence factor of a disagreement: the engine's confidence times
 * this (so a sure 0.95 falls to 0.475, below the planner's 0.8 gate). */
#define SM_LLM_DISAGREE_FACTOR 0.5

/* When d located a failure and is unsure (category unknown, or
 * confidence below threshold; always with config.always), sends the
 * lines first_error_line +- context_lines of the log at path and checks
 * the verdict: category and component from the closed vocabulary and
 * consistent, at least one quote that is a line of the context sent.
 * Returns 0 (see out->reason), or a negative code for an unreadable log. */
SM_EXTERN int sm_llm_diagnose(sm_llm *l, const char *path,
                              const sm_diagnosis *d, double threshold,
                              sm_llm_diag_res *out, sm_err *err);
SM_EXTERN void sm_llm_diag_res_release(sm_llm_diag_res *r);

/* Merges a verdict into shallow copies of d (strings stay d's; release
 * only d).  for_plan is what the planner gets: the engine's category and
 * component, with its confidence times SM_LLM_DISAGREE_FACTOR when a
 * verified verdict disagrees; it is never more actionable than d.
 * for_output is what is reported: the same, except that where the engine
 * said "unknown" the verified verdict's category, component and root
 * cause are shown (their provenance is "llm"; the root cause points into
 * v, so release v after for_output). */
SM_EXTERN void sm_llm_diagnosis_merge(const sm_diagnosis *d, sm_llm_diag_res *v,
                                      sm_diagnosis *for_plan,
                                      sm_diagnosis *for_output);
/* Writes the members "provenance" and "llm" into an open object. */
SM_EXTERN void sm_llm_diag_write_json(const sm_llm_diag_res *r, sm_jw *w);

/* ==== Embeddings ==== */

/* Name of the built-in hashing embedder in records and reports. */
#define SM_LLM_EMBEDDER_BUILTIN "hash-v1"

/* The embedder name of the client's endpoint: "api:MODEL". */
SM_EXTERN const char *sm_llm_embedder(const sm_llm *l);

/* A fingerprint of metadata (and x, may be NULL) from the embeddings
 * endpoint: the metadata as one line of text, embedded, folded to
 * SM_FP_DIMS by a fixed signed hashing of the coordinates and
 * L2-normalised.  Returns 0, or a negative code with a message (the
 * endpoint failed: the caller falls back, nothing is written). */
SM_EXTERN int sm_llm_fingerprint(sm_llm *l, const sm_meta *m,
                                 const sm_fp_extra *x, float *out, sm_err *err);

/* The embedder of a history: the one named by its first record
 * (SM_LLM_EMBEDDER_BUILTIN for records without one) into buf, or "" for
 * an empty history.  Returns 0 or the store's negative code. */
SM_EXTERN int sm_llm_history_embedder(sm_store *s, char *buf, size_t n,
                                      sm_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SM_LLM_H */
