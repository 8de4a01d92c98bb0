/* fuzz_llm_reply.c - libFuzzer target for what the LLM stage reads from
 * a model and checks against text: the reply parser (one JSON object,
 * an optional code fence, bounded size and depth), the number reader of
 * the verifier and its forms, and the quoting of data into a prompt.
 * The input's first line is treated as a reply, the rest as a line of
 * text the claims are checked on.  Nothing may crash, leak or read out
 * of bounds; a quoted block must hold exactly its two delimiters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  const char *nl = memchr(s, '\n', size);
  size_t rl = nl ? (size_t)(nl - s) : size;
  const char *line = nl ? nl + 1 : s + size;
  size_t ll = size - (size_t)(line - s);
  char *reply = malloc(rl + 1);
  double nums[SM__LLM_MAX_NUMS];
  cJSON *o;
  sm_buf b;
  int k;

  memcpy(reply, s, rl);
  reply[rl] = '\0';
  o = sm__llm_parse_object(reply);
  if (o != NULL) {
    const cJSON *it;
    if (!cJSON_IsObject(o) || sm__llm_json_depth(o) > 17)
      abort();
    cJSON_ArrayForEach(it, o) {
      char t[128];
      sm__llm_value_text(it, t, sizeof(t));
      if (cJSON_IsNumber(it)) {
        (void)sm__llm_num_on_line(it->valuedouble, line, ll);
        (void)sm__llm_time_on_line(it->valuedouble, line, ll);
      } else if (cJSON_IsString(it) && it->string != NULL) {
        (void)sm__llm_form_known(it->string, it->valuestring);
        (void)sm__llm_form_on_line(it->string, it->valuestring, line, ll);
      }
    }
    cJSON_Delete(o);
  }
  free(reply);
  k = sm__llm_numbers(line, ll, nums, SM__LLM_MAX_NUMS);
  if (k < 0 || k > SM__LLM_MAX_NUMS)
    abort();
  sm_buf_init(&b, 0);
  if (sm__llm_quote(&b, "DATA", line, ll) == 0) {
    int opens = 0;
    for (const char *p = b.data; (p = strstr(p, "<<<")) != NULL; p += 3)
      opens++;
    if (opens != 2)
      abort();
  }
  sm_buf_release(&b);
  return 0;
}
