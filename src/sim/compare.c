/* compare.c - SchedMate paths against their baselines: which runs of a
 * comparison answer which question of the evaluation, and by how much.
 *
 *   lucid+schedmate   against lucid         (the three changes)
 *   sjf-schedmate     against qssf, tiresias (standalone)
 *   sjf-schedmate+fh  against sjf-schedmate  (the Failure Handler)
 *   sia+schedmate     against sia            (history-seeded models) */
#include <math.h>
#include <string.h>

#include "sim/sim_int.h"

static const struct {
  const char *path;     /* SchedMate policy */
  const char *baseline; /* its baseline */
} pairs[] = {{"lucid+schedmate", "lucid"},
             {"sjf-schedmate", "qssf"},
             {"sjf-schedmate", "tiresias"},
             {"sjf-schedmate+fh", "sjf-schedmate"},
             {"sia+schedmate", "sia"}};

static double ratio(double base, double path) {
  return path > 0 && isfinite(base) && isfinite(path) ? base / path : NAN;
}

/* A baseline run fits a path run when it consumes no facts (Lucid, QSSF,
 * Tiresias) or the same facts (SchedMate-SJF under the Failure
 * Handler). */
static int fits(const sm_sim_result *path, const sm_sim_result *base) {
  return base->facts[0] == '\0' || strcmp(base->facts, path->facts) == 0;
}

size_t sm_sim_speedups(const sm_sim_result *const *runs, size_t n,
                       sm_sim_speedup *out, size_t max) {
  size_t k = 0;

  for (size_t p = 0; p < SM_ARRAY_LEN(pairs); p++)
    for (size_t a = 0; a < n; a++) {
      size_t b = n;
      if (strcmp(runs[a]->policy, pairs[p].path) != 0)
        continue;
      for (size_t i = 0; i < n && b == n; i++)
        if (strcmp(runs[i]->policy, pairs[p].baseline) == 0 &&
            fits(runs[a], runs[i]))
          b = i;
      if (b == n || k == max)
        continue;
      {
        const sm_sim_summary *x = &runs[a]->sum, *y = &runs[b]->sum;
        sm_sim_speedup *s = &out[k++];
        s->path = pairs[p].path;
        s->baseline = pairs[p].baseline;
        s->facts = runs[a]->facts;
        s->path_run = a;
        s->base_run = b;
        s->avg_jct_speedup = ratio(y->avg_jct_s, x->avg_jct_s);
        s->p99_jct_speedup = ratio(y->p99_jct_s, x->p99_jct_s);
        s->avg_wait_speedup = ratio(y->avg_wait_s, x->avg_wait_s);
        s->makespan_speedup = ratio(y->makespan_s, x->makespan_s);
        s->avg_jct_change = y->avg_jct_s > 0 && isfinite(x->avg_jct_s)
                                ? x->avg_jct_s / y->avg_jct_s - 1
                                : NAN;
      }
    }
  return k;
}

const char *sm_sim_result_label(const sm_sim_result *const *runs, size_t n,
                                size_t i, char *buf, size_t cap) {
  int twin = 0;

  for (size_t k = 0; k < n && !twin; k++)
    twin = k != i && strcmp(runs[k]->policy, runs[i]->policy) == 0 &&
           strcmp(runs[k]->facts, runs[i]->facts) != 0;
  if (twin && runs[i]->facts[0])
    snprintf(buf, cap, "%s [%s]", runs[i]->policy, runs[i]->facts);
  else
    snprintf(buf, cap, "%s", runs[i]->policy);
  return buf;
}
