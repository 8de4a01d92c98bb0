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

size_t sm_sim_speedups(const sm_sim_result *const *runs, size_t n,
                       sm_sim_speedup *out, size_t max) {
  size_t k = 0;

  for (size_t p = 0; p < SM_ARRAY_LEN(pairs); p++) {
    size_t a = n, b = n;
    for (size_t i = 0; i < n; i++) {
      if (a == n && strcmp(runs[i]->policy, pairs[p].path) == 0)
        a = i;
      if (b == n && strcmp(runs[i]->policy, pairs[p].baseline) == 0)
        b = i;
    }
    if (a == n || b == n || k == max)
      continue;
    {
      const sm_sim_summary *x = &runs[a]->sum, *y = &runs[b]->sum;
      sm_sim_speedup *s = &out[k++];
      s->path = pairs[p].path;
      s->baseline = pairs[p].baseline;
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

int sm_sim_result_stat_get(const sm_sim_result *r, const char *name,
                           double *value) {
  for (size_t i = 0; i < r->nstats; i++)
    if (strcmp(r->stats[i].name, name) == 0) {
      *value = r->stats[i].value;
      return 1;
    }
  return 0;
}
