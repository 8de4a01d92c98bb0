/* order.c - SchedMate-SJF on a Slurm partition: which order the pending
 * jobs should start in, and the fewest priority changes that make
 * Slurm's scheduler follow it.
 *
 * The order.  Slurm's own order is its priority at the time the agent
 * first saw each job (descending), then submit time, then job id.  Jobs
 * without an estimate (the Advisor fell back) keep exactly their places
 * in that order.  The places held by jobs with an estimate are refilled
 * by those same jobs sorted by expected duration, shortest first (ties:
 * Slurm's order).  So a fallback job is never overtaken or held back
 * because of SchedMate, and among jobs SchedMate knows, shorter ones
 * start first.
 *
 * The priorities.  Along the target order, the longest run of jobs whose
 * current priorities are already strictly decreasing (a longest
 * decreasing subsequence, O(n log n)) keeps its values; every other job
 * gets a value strictly between its neighbours, spread evenly over the
 * gap (or 1000 apart past either end).  Only when a gap is too narrow are
 * all jobs relabelled 1000 apart below the highest current priority.
 * After one enforced pass the next pass changes nothing, and a newly
 * submitted job usually costs one update. */
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm_int.h"

#define GAP 1000u

/* Slurm's own order: priority first seen, submit time, id. */
static int native_cmp(const sm__oj *x, const sm__oj *y) {
  if (x->native != y->native)
    return x->native > y->native ? -1 : 1;
  if (x->submit != y->submit)
    return x->submit < y->submit ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int by_native(const void *p, const void *q, void *arg) {
  const sm__oj *jobs = arg;
  return native_cmp(&jobs[*(const int *)p], &jobs[*(const int *)q]);
}

/* By expected duration; ties keep Slurm's order (pairs of job index and
 * place in Slurm's order; the place is the tie-break). */
static int by_est(const void *p, const void *q, void *arg) {
  const sm__oj *jobs = arg;
  const int *a = p, *b = q;
  double x = jobs[a[0]].est, y = jobs[b[0]].est;
  if (x != y)
    return x < y ? -1 : 1;
  return a[1] - b[1];
}

/* Marks in keep[] a longest subsequence of v[0..n) that is strictly
 * decreasing.  tails[len] holds the index ending the best subsequence of
 * length len + 1 (the one with the largest last value). */
static int longest_decreasing(const uint32_t *v, int n, char *keep) {
  int *tails = sm_malloc((size_t)n * sizeof(int));
  int *prev = sm_malloc((size_t)n * sizeof(int));
  int len = 0;

  if (tails == NULL || prev == NULL) {
    sm_free(tails);
    sm_free(prev);
    return SM_ENOMEM;
  }
  for (int i = 0; i < n; i++) {
    /* First length whose tail value is <= v[i] (cannot be extended by
     * v[i]); tails' values decrease with the length. */
    int lo = 0, hi = len;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (v[tails[mid]] > v[i])
        lo = mid + 1;
      else
        hi = mid;
    }
    prev[i] = lo > 0 ? tails[lo - 1] : -1;
    tails[lo] = i;
    if (lo == len)
      len++;
  }
  memset(keep, 0, (size_t)n);
  for (int i = len > 0 ? tails[len - 1] : -1; i >= 0; i = prev[i])
    keep[i] = 1;
  sm_free(tails);
  sm_free(prev);
  return 0;
}

/* Values for m jobs strictly between hi and lo (hi > lo; UINT64_MAX for
 * no upper neighbour, 0 for no lower one), highest first.  Returns 0, or
 * -1 when the gap is too narrow. */
static int spread(uint64_t hi, uint64_t lo, int m, uint32_t *out) {
  uint64_t top = hi, bottom = lo;

  if (hi == UINT64_MAX) {
    uint64_t room = SM__PRIO_MAX - lo;
    uint64_t g = room / (uint64_t)m >= GAP ? GAP : room / (uint64_t)m;
    if (g == 0)
      return -1;
    for (int i = 0; i < m; i++)
      out[i] = (uint32_t)(lo + g * (uint64_t)(m - i));
    return 0;
  }
  if (lo == 0) {
    uint64_t room = hi > SM__PRIO_MIN ? hi - SM__PRIO_MIN : 0;
    uint64_t g = room / (uint64_t)m >= GAP ? GAP : room / (uint64_t)m;
    if (g == 0)
      return -1;
    for (int i = 0; i < m; i++)
      out[i] = (uint32_t)(hi - g * (uint64_t)(i + 1));
    return 0;
  }
  if (top - bottom < (uint64_t)m + 1)
    return -1;
  for (int i = 0; i < m; i++)
    out[i] = (uint32_t)(top - ((uint64_t)(i + 1) * (top - bottom)) /
                                  (uint64_t)(m + 1));
  return 0;
}

/* All jobs GAP apart (or closer, if need be) below the highest current
 * priority. */
static void relabel(sm__oj *jobs, const int *pi, int n) {
  uint64_t top = SM__PRIO_MIN, g = GAP;

  for (int i = 0; i < n; i++)
    if (jobs[i].cur > top)
      top = jobs[i].cur;
  if (top > SM__PRIO_MAX)
    top = SM__PRIO_MAX;
  if (n > 1 && top < SM__PRIO_MIN + g * (uint64_t)(n - 1))
    top = SM__PRIO_MIN + g * (uint64_t)(n - 1);
  if (top > SM__PRIO_MAX) {
    top = SM__PRIO_MAX;
    g = (top - SM__PRIO_MIN) / (uint64_t)(n - 1);
  }
  for (int k = 0; k < n; k++)
    jobs[pi[k]].target = (uint32_t)(top - g * (uint64_t)k);
}

int sm__order_plan(sm__oj *jobs, int n) {
  int *idx, *pi, *est, ne = 0, changed = 0, rc = 0;
  uint32_t *v, *vals;
  char *keep;

  if (n <= 0)
    return 0;
  idx = sm_malloc((size_t)n * sizeof(int));
  pi = sm_malloc((size_t)n * sizeof(int));
  est = sm_malloc((size_t)n * 2 * sizeof(int));
  v = sm_malloc((size_t)n * sizeof(uint32_t));
  vals = sm_malloc((size_t)n * sizeof(uint32_t));
  keep = sm_malloc((size_t)n);
  if (!idx || !pi || !est || !v || !vals || !keep) {
    rc = SM_ENOMEM;
    goto out;
  }
  for (int i = 0; i < n; i++)
    idx[i] = i;
  qsort_r(idx, (size_t)n, sizeof(int), by_native, jobs);
  for (int k = 0; k < n; k++)
    if (jobs[idx[k]].has_est) {
      est[2 * ne] = idx[k];
      est[2 * ne + 1] = k;
      ne++;
    }
  qsort_r(est, (size_t)ne, 2 * sizeof(int), by_est, jobs);
  for (int k = 0, e = 0; k < n; k++)
    pi[k] = jobs[idx[k]].has_est ? est[2 * e++] : idx[k];
  for (int k = 0; k < n; k++) {
    jobs[pi[k]].rank = k;
    v[k] = jobs[pi[k]].cur;
  }
  rc = longest_decreasing(v, n, keep);
  if (rc != 0)
    goto out;
  for (int k = 0; k < n && rc == 0;) {
    int m = 0;
    uint64_t hi, lo;
    if (keep[k]) {
      jobs[pi[k]].target = v[k];
      k++;
      continue;
    }
    while (k + m < n && !keep[k + m])
      m++;
    hi = k > 0 ? jobs[pi[k - 1]].target : UINT64_MAX;
    lo = k + m < n ? v[k + m] : 0;
    if (spread(hi, lo, m, vals) != 0) {
      relabel(jobs, pi, n);
      break;
    }
    for (int i = 0; i < m; i++)
      jobs[pi[k + i]].target = vals[i];
    k += m;
  }
  for (int i = 0; i < n; i++)
    changed += jobs[i].target != jobs[i].cur;
  rc = changed;
out:
  sm_free(idx);
  sm_free(pi);
  sm_free(est);
  sm_free(v);
  sm_free(vals);
  sm_free(keep);
  return rc;
}
