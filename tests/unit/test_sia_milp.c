/* test_sia_milp.c - one Sia round's allocation problem against brute
 * force: random small instances (up to 6 jobs, 3 GPU types, 4 sizes) are
 * solved by CBC (when the build has it), by the exact reductions alone,
 * and by enumerating every assignment; the optimum must agree, and the
 * greedy fallback must stay feasible and never beat it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "sim/sia_milp_int.h"

typedef struct inst {
  sm__sia_problem p;
  sm__sia_cand c[256];
} inst;

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A random instance: some candidates have no value (v <= 0), some do
 * not fit, several tie. */
static void make(inst *x, uint64_t seed) {
  static const int sizes[] = {1, 2, 4, 8};
  uint64_t s = seed * 2654435761u + 1;
  memset(x, 0, sizeof(*x));
  x->p.c = x->c;
  x->p.njobs = 1 + (int)(next(&s) % 6);
  x->p.ntypes = 1 + (int)(next(&s) % 3);
  for (int t = 0; t < x->p.ntypes; t++)
    x->p.cap[t] = (int)(next(&s) % 10);
  for (int j = 0; j < x->p.njobs; j++)
    for (int t = 0; t < x->p.ntypes; t++)
      for (int g = 0; g < 4; g++) {
        sm__sia_cand *c;
        if (next(&s) % 4 == 0)
          continue;
        c = &x->c[x->p.nc++];
        c->job = j;
        c->type = t;
        c->gpus = sizes[g];
        c->config = t * 4 + g;
        c->value = (double)(next(&s) % 200) / 100.0 - 0.3;
        if (next(&s) % 5 == 0)
          c->value = 0.5; /* ties */
      }
}

static int feasible(const sm__sia_problem *p, const int *choice) {
  int used[SM__SIA_MAX_TYPES] = {0};
  for (int j = 0; j < p->njobs; j++) {
    if (choice[j] < 0)
      continue;
    if (choice[j] >= p->nc || p->c[choice[j]].job != j)
      return 0;
    used[p->c[choice[j]].type] += p->c[choice[j]].gpus;
  }
  for (int t = 0; t < p->ntypes; t++)
    if (used[t] > p->cap[t])
      return 0;
  return 1;
}

static double value(const sm__sia_problem *p, const int *choice) {
  double v = 0;
  for (int j = 0; j < p->njobs; j++)
    if (choice[j] >= 0)
      v += p->c[choice[j]].value;
  return v;
}

/* The best value over every assignment of the candidates in use[]. */
static double brute(const sm__sia_problem *p, const int *use, int nuse) {
  int per[8][64], np[8] = {0}, idx[8] = {0}, choice[8] = {0};
  double best = 0;

  for (int k = 0; k < nuse; k++) {
    const sm__sia_cand *c = &p->c[use[k]];
    per[c->job][np[c->job]++] = use[k];
  }
  for (;;) {
    int j;
    for (j = 0; j < p->njobs; j++)
      choice[j] = idx[j] ? per[j][idx[j] - 1] : -1;
    if (feasible(p, choice) && value(p, choice) > best)
      best = value(p, choice);
    for (j = 0; j < p->njobs; j++) {
      if (++idx[j] <= np[j])
        break;
      idx[j] = 0;
    }
    if (j == p->njobs)
      return best;
  }
}

SM_TEST(sia_milp_reductions_keep_the_optimum) {
  for (uint64_t seed = 1; seed <= 400; seed++) {
    inst x;
    int all[256], keep[256], n;
    make(&x, seed);
    for (int i = 0; i < x.p.nc; i++)
      all[i] = i;
    n = sm__sia_reduce(&x.p, keep);
    ASSERT(n >= 0 && n <= x.p.nc);
    if (fabs(brute(&x.p, all, x.p.nc) - brute(&x.p, keep, n)) > 1e-9)
      SM_FAIL_AT("seed %llu: reductions lost the optimum",
                 (unsigned long long)seed);
  }
}

/* The class bound: with 2 GPUs in all, at most 2 jobs of the 1-GPU class
 * can matter, whatever the queue length. */
SM_TEST(sia_milp_reduction_bounds_long_queues) {
  inst x;
  int keep[256], n;

  memset(&x, 0, sizeof(x));
  x.p.c = x.c;
  x.p.njobs = 100;
  x.p.ntypes = 1;
  x.p.cap[0] = 2;
  for (int j = 0; j < 100; j++) {
    x.c[x.p.nc++] = (sm__sia_cand){j, 0, 1, 0, 0.1 + j * 0.001};
    x.c[x.p.nc++] = (sm__sia_cand){j, 0, 2, 1, 0.1 + j * 0.0015};
  }
  n = sm__sia_reduce(&x.p, keep);
  ASSERT(n <= 2 + 1);
  for (int k = 0; k < n; k++)
    ASSERT(x.c[keep[k]].job >= 97);
}

SM_TEST(sia_milp_cbc_matches_brute_force) {
  sm__sia_solve_opts o = {1, 10, 1e-9, 1, NULL};
  int solved = 0;

  if (!sm__sia_have_cbc())
    SM_SKIP("built without COIN-OR CBC");
  for (uint64_t seed = 1; seed <= 150; seed++) {
    inst x;
    int all[256], choice[8];
    sm__sia_solve_info info;
    double best;
    make(&x, seed);
    for (int i = 0; i < x.p.nc; i++)
      all[i] = i;
    best = brute(&x.p, all, x.p.nc);
    o.reduce = (int)(seed % 2);
    ASSERT_OK(sm__sia_solve(&x.p, &o, choice, &info));
    ASSERT(feasible(&x.p, choice));
    if (fabs(value(&x.p, choice) - best) > 1e-9)
      SM_FAIL_AT("seed %llu: CBC %.6f, brute force %.6f (how %d)",
                 (unsigned long long)seed, value(&x.p, choice), best, info.how);
    ASSERT_NEAR(info.objective, best, 1e-9);
    ASSERT(info.how == SM__SIA_SOLVED_OPTIMAL ||
           info.how == SM__SIA_SOLVED_EMPTY);
    solved += info.how == SM__SIA_SOLVED_OPTIMAL;
  }
  ASSERT(solved > 100);
}

SM_TEST(sia_milp_greedy_is_feasible_and_no_better) {
  sm__sia_solve_opts o = {0, 1, 1e-4, 1, NULL};
  int worse = 0;

  for (uint64_t seed = 1; seed <= 300; seed++) {
    inst x;
    int all[256], choice[8];
    sm__sia_solve_info info;
    double best;
    make(&x, seed);
    for (int i = 0; i < x.p.nc; i++)
      all[i] = i;
    best = brute(&x.p, all, x.p.nc);
    ASSERT_OK(sm__sia_solve(&x.p, &o, choice, &info));
    ASSERT(feasible(&x.p, choice));
    ASSERT(value(&x.p, choice) <= best + 1e-9);
    ASSERT(info.how == SM__SIA_SOLVED_GREEDY ||
           info.how == SM__SIA_SOLVED_EMPTY);
    worse += value(&x.p, choice) < best - 1e-9;
  }
  /* A greedy heuristic, not an exact method: it does miss sometimes. */
  ASSERT(worse > 0);
}

/* A round of njobs jobs on three types with the given free GPUs, each
 * offered 1-16 GPUs per type at Sia-like values lambda - A^p with A
 * random around the GPU count; spread > 0 also varies the power. */
static void big_round(sm__sia_problem *p, sm__sia_cand *c, int njobs,
                      const int cap[3], uint64_t s, double spread) {
  memset(p, 0, sizeof(*p));
  p->c = c;
  p->njobs = njobs;
  p->ntypes = 3;
  memcpy(p->cap, cap, 3 * sizeof(int));
  for (int j = 0; j < p->njobs; j++)
    for (int t = 0; t < 3; t++)
      for (int g = 1; g <= 16; g *= 2) {
        double a = (double)g * (1 + (double)(next(&s) % 1000) / 997.0);
        double pw = -0.5;
        if (spread > 0)
          pw -= spread * (double)(next(&s) % 100) / 100.0;
        c[p->nc++] = (sm__sia_cand){j, t, g, t * 8 + g, 1.1 - pow(a, pw)};
      }
}

/* A large round under a very short time limit: the answer is feasible
 * and says how it was found (optimal, stopped at the limit, or the
 * greedy fallback). */
SM_TEST(sia_milp_time_limit_is_reported) {
  static sm__sia_cand c[1500 * 3 * 5];
  sm__sia_problem p;
  sm__sia_solve_opts o = {1, 0.001, 0, 0, NULL};
  sm__sia_solve_info info;
  static int choice[2000];
  static const int cap[3] = {600, 700, 500};

  if (!sm__sia_have_cbc())
    SM_SKIP("built without COIN-OR CBC");
  big_round(&p, c, 1500, cap, 99, 0);
  ASSERT_OK(sm__sia_solve(&p, &o, choice, &info));
  ASSERT(feasible(&p, choice));
  ASSERT(info.how == SM__SIA_SOLVED_OPTIMAL ||
         info.how == SM__SIA_SOLVED_LIMIT ||
         info.how == SM__SIA_SOLVED_FALLBACK);
  ASSERT(info.objective > 0);
}

/* A deterministic work limit beside the wall clock: with a node limit
 * and a time limit far above what the solve needs, CBC stops on the
 * nodes, not on the clock, and two solves of the same round agree
 * candidate for candidate however busy the machine is. */
SM_TEST(sia_milp_node_limit_is_deterministic) {
  static sm__sia_cand c[250 * 3 * 5];
  sm__sia_problem p;
  sm__sia_solve_opts o = {1, 120, 0, 1, NULL, 10};
  sm__sia_solve_info a, b;
  static int ca[250], cb[250];
  static const int cap[3] = {501, 583, 417};

  if (!sm__sia_have_cbc())
    SM_SKIP("built without COIN-OR CBC");
  big_round(&p, c, 250, cap, 7, 0.3);
  ASSERT_OK(sm__sia_solve(&p, &o, ca, &a));
  ASSERT_OK(sm__sia_solve(&p, &o, cb, &b));
  ASSERT(feasible(&p, ca));
  ASSERT(a.by_time == 0 && b.by_time == 0);
  ASSERT(a.how == SM__SIA_SOLVED_OPTIMAL || a.how == SM__SIA_SOLVED_NODES ||
         a.how == SM__SIA_SOLVED_FALLBACK);
  ASSERT(a.how == b.how && a.nodes == b.nodes);
  ASSERT(memcmp(ca, cb, sizeof(ca)) == 0);
  ASSERT(a.objective == b.objective);
  /* More nodes continue the same search: never a worse answer. */
  o.max_nodes = 30;
  ASSERT_OK(sm__sia_solve(&p, &o, cb, &b));
  ASSERT(b.by_time == 0);
  ASSERT(b.nodes >= a.nodes);
  ASSERT(b.objective >= a.objective - 1e-9);
}
