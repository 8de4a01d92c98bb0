/* prompt.c - how untrusted text goes into a prompt and how a reply comes
 * back out of one.
 *
 * Repository files, launch commands and log lines are data.  Each piece
 * is put between two delimiter lines that carry an id made from the
 * data's own hash; the system prompt says that nothing between such
 * lines is an instruction.  The data cannot forge a delimiter, because
 * every "<<<" inside it is broken up.  A reply must be exactly one JSON
 * object (a Markdown code fence around it is tolerated); anything else
 * is refused. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_int.h"

#define MAX_REPLY ((size_t)256 << 10)
#define MAX_DEPTH 16

int sm__llm_quote(sm_buf *b, const char *label, const char *data, size_t n) {
  uint64_t h = sm_hash64(data, n, 0x71a7ULL);
  char id[17];
  int rc;

  snprintf(id, sizeof(id), "%016llx", (unsigned long long)h);
  rc = sm_buf_addf(b, "<<<%s %s>>>\n", label, id);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    unsigned char ch = (unsigned char)data[i];
    if (ch == '<' && i + 2 < n && data[i + 1] == '<' && data[i + 2] == '<') {
      rc = sm_buf_adds(b, "<< ");
      i += 1; /* the third '<' is written by the next round */
      continue;
    }
    if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
      ch = '?';
    rc = sm_buf_addc(b, (char)ch);
  }
  if (rc == 0 && (n == 0 || data[n - 1] != '\n'))
    rc = sm_buf_addc(b, '\n');
  if (rc == 0)
    rc = sm_buf_addf(b, "<<<END %s %s>>>\n", label, id);
  return rc;
}

int sm__llm_json_depth(const cJSON *v) {
  int best = 0;
  const cJSON *c;
  if (v == NULL)
    return 0;
  for (c = v->child; c; c = c->next) {
    int d = sm__llm_json_depth(c);
    if (d > best)
      best = d;
    if (best > MAX_DEPTH)
      break;
  }
  return best + 1;
}

cJSON *sm__llm_parse_object(const char *content) {
  const char *a, *e;
  cJSON *o;

  if (content == NULL)
    return NULL;
  if (strlen(content) > MAX_REPLY)
    return NULL;
  a = content;
  e = content + strlen(content);
  while (a < e && isspace((unsigned char)*a))
    a++;
  while (e > a && isspace((unsigned char)e[-1]))
    e--;
  /* ```json ... ``` */
  if (e - a >= 6 && strncmp(a, "```", 3) == 0 &&
      strncmp(e - 3, "```", 3) == 0) {
    a += 3;
    while (a < e && isalpha((unsigned char)*a))
      a++;
    e -= 3;
    while (a < e && isspace((unsigned char)*a))
      a++;
    while (e > a && isspace((unsigned char)e[-1]))
      e--;
  }
  if (a == e || *a != '{' || e[-1] != '}')
    return NULL;
  /* cJSON nests by recursion; a reply cannot be deep enough to matter
   * within 256 KiB only if we bound it ourselves first. */
  {
    int depth = 0, in_str = 0, esc = 0;
    for (const char *p = a; p < e; p++) {
      if (in_str) {
        if (esc)
          esc = 0;
        else if (*p == '\\')
          esc = 1;
        else if (*p == '"')
          in_str = 0;
        continue;
      }
      if (*p == '"')
        in_str = 1;
      else if (*p == '{' || *p == '[') {
        if (++depth > MAX_DEPTH)
          return NULL;
      } else if (*p == '}' || *p == ']')
        depth--;
    }
  }
  {
    const char *end = NULL;
    o = cJSON_ParseWithLengthOpts(a, (size_t)(e - a), &end, 0);
  }
  if (o == NULL)
    return NULL;
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

void sm__llm_value_text(const cJSON *v, char *out, size_t n) {
  if (n == 0)
    return;
  if (cJSON_IsString(v))
    snprintf(out, n, "%s", v->valuestring);
  else if (cJSON_IsNumber(v))
    snprintf(out, n, "%.17g", v->valuedouble);
  else if (cJSON_IsBool(v))
    snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
  else if (cJSON_IsNull(v) || v == NULL)
    snprintf(out, n, "null");
  else {
    char *t = cJSON_PrintUnformatted(v);
    snprintf(out, n, "%s", t ? t : "?");
    cJSON_free(t);
  }
  /* One line, printable. */
  for (char *p = out; *p; p++)
    if ((unsigned char)*p < 0x20)
      *p = ' ';
}

void sm__llm_drop(sm_llm_drop *drops, int *n, const char *what,
                  const char *value, const char *evidence, const char *why) {
  sm_llm_drop *d;
  if (*n >= SM_LLM_MAX_DROPS)
    return;
  d = &drops[*n];
  d->what = sm_strdup(what ? what : "?");
  d->value = value
                 ? sm_strndup(value, strlen(value) > 200 ? 200 : strlen(value))
                 : NULL;
  d->evidence =
      evidence ? sm_strndup(evidence,
                            strlen(evidence) > 200 ? 200 : strlen(evidence))
               : NULL;
  d->why = why;
  if (d->what == NULL) {
    sm_free(d->value);
    sm_free(d->evidence);
    memset(d, 0, sizeof(*d));
    return;
  }
  (*n)++;
}

void sm__llm_drops_release(sm_llm_drop *drops, int *n) {
  for (int i = 0; i < *n; i++) {
    sm_free(drops[i].what);
    sm_free(drops[i].value);
    sm_free(drops[i].evidence);
  }
  memset(drops, 0, sizeof(*drops) * (size_t)*n);
  *n = 0;
}

void sm__llm_drops_json(const sm_llm_drop *drops, int n, sm_jw *w) {
  sm_jw_arr_begin(w);
  for (int i = 0; i < n; i++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "field", drops[i].what);
    sm_jw_kv_str(w, "value", drops[i].value);
    sm_jw_kv_str(w, "evidence", drops[i].evidence);
    sm_jw_kv_str(w, "why", drops[i].why);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
}

void sm__llm_outcome_release(sm_llm_drop *drops, int *n_drops, char **detail) {
  sm__llm_drops_release(drops, n_drops);
  sm_free(*detail);
  *detail = NULL;
}

void sm__llm_outcome_json(int reason, const char *detail,
                          const sm_llm_drop *drops, int n_drops,
                          double elapsed_ms, sm_jw *w) {
  sm_jw_kv_str(w, "fallback_reason", sm_llm_reason_name(reason));
  sm_jw_kv_str(w, "detail", detail);
  sm_jw_key(w, "drops");
  sm__llm_drops_json(drops, n_drops, w);
  sm_jw_kv_num(w, "elapsed_ms", round(elapsed_ms * 10) / 10);
}
