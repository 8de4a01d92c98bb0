/* llm_int.h - what the parts of the LLM stage share: the client's
 * internals, the cache, prompt quoting and reply parsing, the claim
 * verifier and the bounded view of a repository. */
#ifndef SM_LLM_INT_H
#define SM_LLM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "schedmate/sm_llm.h"

/* ==== client.c ==== */

/* Counts a stage run's outcome and its reason (0 when used). */
void sm__llm_count_run(sm_llm *l, int comp, int used, int reason);
/* Adds verifier and tool counts of a run. */
void sm__llm_count_claims(sm_llm *l, int comp, int claims, int verified,
                          int tool_calls, int tool_refused);
/* Counts one reason without a run (a dropped claim's class). */
void sm__llm_count_reason(sm_llm *l, int comp, int reason);
/* One question: sm_llm_chat with two messages, the system prompt and
 * the user's text, deadline 0 (the configured timeout). */
int sm__llm_ask(sm_llm *l, int comp, const char *system, const char *user,
                sm_llm_reply *out, int *reason, sm_err *err);
/* Estimated prompt tokens of messages (4 bytes a token, plus framing). */
int sm__llm_estimate_tokens(const sm_llm_msg *msgs, int n);

/* ==== cache.c: content-addressed replies ==== */

typedef struct sm__llm_cache sm__llm_cache;

/* dir may be NULL (memory only).  Returns NULL on exhaustion or when dir
 * cannot be made (message in err). */
sm__llm_cache *sm__llm_cache_new(const char *dir, sm_err *err);
void sm__llm_cache_free(sm__llm_cache *c);
/* Looks the request (endpoint + body) up; on a hit *body (sm_free) gets
 * the stored response and 1 is returned, else 0. */
int sm__llm_cache_get(sm__llm_cache *c, const char *endpoint, const char *req,
                      size_t req_len, char **body, size_t *len);
/* Stores a response (best effort: a failed disk write is not an error). */
void sm__llm_cache_put(sm__llm_cache *c, const char *endpoint, const char *req,
                       size_t req_len, const char *body, size_t len);
/* The 32-hex-digit key of a request (for tests). */
void sm__llm_cache_key(const char *endpoint, const char *req, size_t req_len,
                       char out[33]);

/* ==== prompt.c: quoting data, reading replies ==== */

/* Appends data as a quoted block:
 *   <<<LABEL ID>>>\n...data...\n<<<END LABEL ID>>>\n
 * ID is derived from the data's hash, control bytes other than tab and
 * newline become '?', and any "<<<" inside becomes "<< <" so the data
 * cannot close the block or open another.  Returns 0 or a buffer code. */
int sm__llm_quote(sm_buf *b, const char *label, const char *data, size_t n);
/* Parses the JSON object of a reply's content: surrounding blanks and a
 * Markdown code fence are allowed, nothing else.  Returns the object
 * (cJSON_Delete) or NULL: not JSON, truncated, not an object, over 256
 * KiB or nested deeper than 16. */
cJSON *sm__llm_parse_object(const char *content);
/* Nesting depth of a cJSON value. */
int sm__llm_json_depth(const cJSON *v);
/* Records a dropped claim (at most SM_LLM_MAX_DROPS are kept). */
void sm__llm_drop(sm_llm_drop *drops, int *n, const char *what,
                  const char *value, const char *evidence, const char *why);
void sm__llm_drops_release(sm_llm_drop *drops, int *n);
void sm__llm_drops_json(const sm_llm_drop *drops, int n, sm_jw *w);
/* What the three stages' results (advise, track, diagnose) end with: the
 * reason a run fell back, its detail, the dropped claims and the wall
 * time.  The release frees the drops and the detail (left NULL); the
 * writer adds the closing members of a stage's "llm" object:
 * fallback_reason, detail, drops, elapsed_ms (to 0.1 ms). */
void sm__llm_outcome_release(sm_llm_drop *drops, int *n_drops, char **detail);
void sm__llm_outcome_json(int reason, const char *detail,
                          const sm_llm_drop *drops, int n_drops,
                          double elapsed_ms, sm_jw *w);
/* A cJSON value as short text (numbers %.17g, strings as they are). */
void sm__llm_value_text(const cJSON *v, char *out, size_t n);

/* ==== verify.c: claims against text ==== */

#define SM__LLM_MAX_NUMS 64

/* The numbers printed in a line: decimal, with '_' or ',' thousands
 * groups (also read as separate numbers), fractions and exponents.  A
 * number glued to a preceding letter ("gpt2") is not one.  Returns the
 * count (at most max). */
int sm__llm_numbers(const char *s, size_t n, double *out, int max);
/* 1 when v is one of the numbers printed in the line (relative
 * tolerance 1e-9). */
int sm__llm_num_on_line(double v, const char *s, size_t n);
/* 1 when a step time v (seconds) is printed on the line as itself, in
 * milliseconds on a line that says "ms", or as a rate 1/v on a line that
 * says "/s" (0.5 % tolerance for the rounding of the rate). */
int sm__llm_time_on_line(double v, const char *s, size_t n);
/* Lower-case letters and digits of s only, into out (always
 * terminated).  Returns the length. */
size_t sm__llm_compact(const char *s, size_t n, char *out, size_t cap);
/* 1 when the value of a closed-vocabulary string field (task, domain,
 * precision, parallelism, iteration_type) is one of its values; the
 * table is data/embed/llm_forms.tsv. */
int sm__llm_form_known(const char *field, const char *value);
/* 1 when the line shows the value in one of its documented forms. */
int sm__llm_form_on_line(const char *field, const char *value, const char *s,
                         size_t n);
/* The values of a closed-vocabulary field, '|'-separated, into out;
 * returns 0 when the field has no closed vocabulary. */
int sm__llm_form_values(const char *field, char *out, size_t n);

/* ==== view.c: the repository as the model may see it ==== */

typedef struct sm__llm_view sm__llm_view;

/* Opens the repository through the Advisor's safe reader (its root,
 * limits and refusals).  max_bytes caps what is read.  Returns NULL with
 * a message. */
sm__llm_view *sm__llm_view_open(const char *repo, const char *cwd,
                                size_t max_bytes, double budget_s, sm_err *err);
void sm__llm_view_close(sm__llm_view *v);
/* Normalises a path the model gave: root-relative, "." and ".."
 * collapsed; NULL when it leaves the root (absolute paths outside it,
 * "..", "~"). The string lives as long as the view. */
const char *sm__llm_view_path(sm__llm_view *v, const char *path);
/* Reads a repository file (kept for later calls).  Returns 0, or a
 * negative code: refused (SM_EESCAPE, SM_EACCES: outside the root,
 * skipped kind, binary), missing, over a cap. */
int sm__llm_view_file(sm__llm_view *v, const char *rel, const char **data,
                      size_t *len);
/* Line n (1-based) of a repository file into *s and *len (not terminated).
 * Returns 0, SM_ERANGE (no such line) or the code of sm__llm_view_file. */
int sm__llm_view_line(sm__llm_view *v, const char *rel, long n, const char **s,
                      size_t *len);
/* Appends the entries of a directory (rel "" is the root), one a line,
 * directories with a trailing '/', filtered as the extractor filters
 * (hidden, environment and data entries left out).  Returns the count
 * or a negative code (not a directory of the repository). */
int sm__llm_view_list(sm__llm_view *v, const char *rel, sm_buf *out,
                      int max_entries);
/* Appends the file tree breadth first (depth <= 4), at most max_entries
 * lines and max_bytes bytes; returns the count. */
int sm__llm_view_tree(sm__llm_view *v, sm_buf *out, int max_entries,
                      size_t max_bytes);
/* The Advisor's canonical model (dataset 0) or dataset (1) name of raw,
 * or NULL. */
const char *sm__llm_view_norm(sm__llm_view *v, int dataset, const char *raw);

#endif /* SM_LLM_INT_H */
