/* stats.c - the cost accounting of the LLM stage as JSON (for --json
 * outputs and the Slurm agent's status file) and in the Prometheus text
 * format (for a /metrics endpoint or a node-exporter text file). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_int.h"

typedef struct counter {
  const char *name; /* metric and JSON key */
  const char *help; /* Prometheus HELP */
  size_t off;       /* offset in sm_llm_stats */
} counter;

static const counter counters[] = {
    {"runs", "Stage runs.", offsetof(sm_llm_stats, runs)},
    {"used", "Stage runs whose verified answer was used.",
     offsetof(sm_llm_stats, used)},
    {"fallbacks", "Stage runs that left the deterministic answer.",
     offsetof(sm_llm_stats, fallbacks)},
    {"requests", "Logical requests (prompts).",
     offsetof(sm_llm_stats, requests)},
    {"calls", "HTTP requests sent, retries included.",
     offsetof(sm_llm_stats, calls)},
    {"retries", "HTTP retries after 429, 5xx or a failed connection.",
     offsetof(sm_llm_stats, retries)},
    {"cache_hits", "Requests answered from the cache.",
     offsetof(sm_llm_stats, cache_hits)},
    {"prompt_tokens", "Prompt tokens reported by the server.",
     offsetof(sm_llm_stats, prompt_tokens)},
    {"completion_tokens", "Completion tokens reported by the server.",
     offsetof(sm_llm_stats, completion_tokens)},
    {"claims", "Values the model claimed.", offsetof(sm_llm_stats, claims)},
    {"verified", "Claims kept by the verifier.",
     offsetof(sm_llm_stats, verified)},
    {"dropped", "Claims dropped by the verifier.",
     offsetof(sm_llm_stats, dropped)},
    {"tool_calls", "Advisor tool calls served.",
     offsetof(sm_llm_stats, tool_calls)},
    {"tool_refused", "Tool calls refused (outside the schema or the root).",
     offsetof(sm_llm_stats, tool_refused)},
};

static uint64_t get(const sm_llm_stats *s, size_t off) {
  return *(const uint64_t *)((const char *)s + off);
}

static void one_json(const sm_llm_stats *s, sm_jw *w) {
  sm_jw_obj_begin(w);
  for (size_t i = 0; i < SM_ARRAY_LEN(counters); i++)
    sm_jw_kv_int(w, counters[i].name, (long long)get(s, counters[i].off));
  sm_jw_kv_num(w, "latency_s", round(s->latency_s * 1e4) / 1e4);
  sm_jw_kv_num(w, "mean_latency_ms",
               s->calls ? round(s->latency_s / (double)s->calls * 1e5) / 100
                        : NAN);
  sm_jw_key(w, "reasons");
  sm_jw_obj_begin(w);
  for (int r = 1; r < SM_LLM_NREASONS; r++)
    if (s->reasons[r])
      sm_jw_kv_int(w, sm_llm_reason_name(r), (long long)s->reasons[r]);
  sm_jw_obj_end(w);
  sm_jw_obj_end(w);
}

void sm_llm_stats_write_json(const sm_llm *l, sm_jw *w) {
  sm_jw_obj_begin(w);
  for (int c = 0; c < SM_LLM_NCOMP; c++) {
    sm_llm_stats s;
    sm_llm_stats_get(l, c, &s);
    sm_jw_key(w, sm_llm_comp_name(c));
    one_json(&s, w);
  }
  sm_jw_obj_end(w);
}

int sm_llm_stats_write_prom(const sm_llm *l, const char *prefix, sm_buf *out) {
  sm_llm_stats s[SM_LLM_NCOMP];
  int rc = 0;

  if (prefix == NULL)
    prefix = "schedmate_llm";
  for (int c = 0; c < SM_LLM_NCOMP; c++)
    sm_llm_stats_get(l, c, &s[c]);
  for (size_t i = 0; rc == 0 && i < SM_ARRAY_LEN(counters); i++) {
    rc = sm_buf_addf(out, "# HELP %s_%s_total %s\n# TYPE %s_%s_total counter\n",
                     prefix, counters[i].name, counters[i].help, prefix,
                     counters[i].name);
    for (int c = 0; rc == 0 && c < SM_LLM_NCOMP; c++)
      rc = sm_buf_addf(out, "%s_%s_total{component=\"%s\"} %llu\n", prefix,
                       counters[i].name, sm_llm_comp_name(c),
                       (unsigned long long)get(&s[c], counters[i].off));
  }
  if (rc == 0)
    rc = sm_buf_addf(out,
                     "# HELP %s_latency_seconds_total Wall time in HTTP "
                     "exchanges.\n# TYPE %s_latency_seconds_total counter\n",
                     prefix, prefix);
  for (int c = 0; rc == 0 && c < SM_LLM_NCOMP; c++)
    rc = sm_buf_addf(out, "%s_latency_seconds_total{component=\"%s\"} %.6f\n",
                     prefix, sm_llm_comp_name(c), s[c].latency_s);
  if (rc == 0)
    rc = sm_buf_addf(out,
                     "# HELP %s_reasons_total Counted reasons a request or "
                     "a claim was not used.\n# TYPE %s_reasons_total "
                     "counter\n",
                     prefix, prefix);
  for (int c = 0; rc == 0 && c < SM_LLM_NCOMP; c++)
    for (int r = 1; rc == 0 && r < SM_LLM_NREASONS; r++)
      if (s[c].reasons[r])
        rc = sm_buf_addf(out,
                         "%s_reasons_total{component=\"%s\",reason=\"%s\"} "
                         "%llu\n",
                         prefix, sm_llm_comp_name(c), sm_llm_reason_name(r),
                         (unsigned long long)s[c].reasons[r]);
  return rc;
}
