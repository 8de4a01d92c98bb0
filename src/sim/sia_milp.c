/* sia_milp.c - one Sia round's allocation problem:
 *
 *   maximise  sum_ij v_ij x_ij
 *   s.t.      sum_j x_ij <= 1                   for every job i
 *             sum_ij gpus_j x_ij <= cap_t        for every GPU type t
 *             x_ij in {0, 1}
 *
 * where v_ij = lambda - A_ij^p is what choosing configuration j saves
 * against leaving job i without GPUs (Sia minimises the sum of A^p over
 * allocated jobs plus lambda for every job left out).
 *
 * Three exact reductions come first; none changes the optimum:
 *   1. a candidate with v <= 0 or more GPUs than its type has is never
 *      better than nothing;
 *   2. within one job and type, a candidate with at least as many GPUs
 *      and no more value than another is dominated (swap them);
 *   3. within one class (type, g GPUs), an optimal solution exists that
 *      uses only the G - g + 1 highest-valued jobs of the class, G being
 *      all free GPUs: the other allocated jobs hold at most G - g GPUs,
 *      so at most G - g jobs outrank a used one, and if more did, one of
 *      them would be idle and could take its place for no less value.
 * With 1,000 active jobs on 64 GPUs the third leaves a few hundred
 * columns whatever the queue length.
 *
 * The reduced problem goes to COIN-OR CBC through its C interface with a
 * time limit, a relative gap and the greedy solution as a MIP start.  A
 * round where CBC stops at the limit uses its best solution (counted);
 * one where CBC fails or finds nothing uses the greedy solution (counted
 * as a fallback).  Without CBC in the build, the greedy solution is all
 * there is, and the policy says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedmate/sm_util.h"
#include "sim/cbc_load_int.h"
#include "sim/sia_milp_int.h"

#ifdef SM_HAVE_CBC
#include <dlfcn.h>
#endif

int sm__sia_have_cbc(void) {
  return sm__cbc_load(NULL) == 0; /* built with CBC, and it loads */
}

/* ==== Reductions ==== */

/* Orders candidates by type, then GPUs, then value (highest first). */
static int cmp_tgv(const sm__sia_cand *x, const sm__sia_cand *y) {
  if (x->type != y->type)
    return x->type - y->type;
  if (x->gpus != y->gpus)
    return x->gpus - y->gpus;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  return 0;
}

/* Candidate indices a and b by job, type, GPUs, value, index. */
static int cmp_jtg(const void *a, const void *b, void *ud) {
  const sm__sia_cand *base = ud;
  const sm__sia_cand *x = &base[*(const int *)a];
  const sm__sia_cand *y = &base[*(const int *)b];
  int c = x->job != y->job ? x->job - y->job : cmp_tgv(x, y);
  return c != 0 ? c : *(const int *)a - *(const int *)b;
}

/* ... by type, GPUs, value, job, index (one class of configurations). */
static int cmp_class(const void *a, const void *b, void *ud) {
  const sm__sia_cand *base = ud;
  const sm__sia_cand *x = &base[*(const int *)a];
  const sm__sia_cand *y = &base[*(const int *)b];
  int c = cmp_tgv(x, y);
  if (c == 0)
    c = x->job - y->job;
  return c != 0 ? c : *(const int *)a - *(const int *)b;
}

static int cmp_int(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

int sm__sia_reduce(const sm__sia_problem *p, int *keep) {
  int n = 0, m = 0, total = 0;

  for (int t = 0; t < p->ntypes; t++)
    total += p->cap[t];
  for (int i = 0; i < p->nc; i++) {
    const sm__sia_cand *c = &p->c[i];
    if (c->value > 0 && c->gpus >= 1 && c->type >= 0 && c->type < p->ntypes &&
        c->gpus <= p->cap[c->type])
      keep[n++] = i;
  }
  /* Dominance within (job, type): more GPUs must bring more value. */
  qsort_r(keep, (size_t)n, sizeof(int), cmp_jtg, (void *)p->c);
  for (int i = 0; i < n;) {
    int j = i;
    double best = -INFINITY;
    while (j < n && p->c[keep[j]].job == p->c[keep[i]].job &&
           p->c[keep[j]].type == p->c[keep[i]].type) {
      const sm__sia_cand *c = &p->c[keep[j]];
      int first_of_size = j == i || p->c[keep[j - 1]].gpus != c->gpus;
      if (first_of_size && c->value > best) {
        keep[m++] = keep[j];
        best = c->value;
      }
      j++;
    }
    i = j;
  }
  n = m;
  m = 0;
  /* At most G - g + 1 jobs per class. */
  qsort_r(keep, (size_t)n, sizeof(int), cmp_class, (void *)p->c);
  for (int i = 0; i < n;) {
    int j = i, lim = total - p->c[keep[i]].gpus + 1;
    while (j < n && p->c[keep[j]].type == p->c[keep[i]].type &&
           p->c[keep[j]].gpus == p->c[keep[i]].gpus) {
      if (j - i < lim)
        keep[m++] = keep[j];
      j++;
    }
    i = j;
  }
  qsort(keep, (size_t)m, sizeof(int), cmp_int);
  return m;
}

/* ==== Greedy ==== */

static int cmp_eff(const void *a, const void *b, void *ud) {
  const sm__sia_cand *base = ud;
  const sm__sia_cand *x = &base[*(const int *)a];
  const sm__sia_cand *y = &base[*(const int *)b];
  double ex = x->value / x->gpus, ey = y->value / y->gpus;
  if (ex != ey)
    return ex > ey ? -1 : 1;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  return *(const int *)a - *(const int *)b;
}

/* Best value per GPU first, then upgrades while any helps. */
static double greedy(const sm__sia_problem *p, const int *keep, int n,
                     int *choice, int *order) {
  int left[SM__SIA_MAX_TYPES];
  double total = 0;

  memcpy(left, p->cap, sizeof(left));
  memcpy(order, keep, (size_t)n * sizeof(int));
  qsort_r(order, (size_t)n, sizeof(int), cmp_eff, (void *)p->c);
  for (int k = 0; k < n; k++) {
    const sm__sia_cand *c = &p->c[order[k]];
    if (choice[c->job] < 0 && c->gpus <= left[c->type]) {
      choice[c->job] = order[k];
      left[c->type] -= c->gpus;
    }
  }
  for (int pass = 0; pass < 8; pass++) {
    int improved = 0;
    for (int k = 0; k < n; k++) {
      const sm__sia_cand *c = &p->c[keep[k]];
      int cur = choice[c->job], room;
      double gain;
      if (cur == keep[k])
        continue;
      room = left[c->type];
      gain = c->value;
      if (cur >= 0) {
        if (p->c[cur].type == c->type)
          room += p->c[cur].gpus;
        gain -= p->c[cur].value;
      }
      if (gain > 1e-12 && c->gpus <= room) {
        if (cur >= 0)
          left[p->c[cur].type] += p->c[cur].gpus;
        left[c->type] -= c->gpus;
        choice[c->job] = keep[k];
        improved = 1;
      }
    }
    if (!improved)
      break;
  }
  for (int j = 0; j < p->njobs; j++)
    if (choice[j] >= 0)
      total += p->c[choice[j]].value;
  return total;
}

#ifdef SM_HAVE_CBC
/* When every job can have its most valuable candidate at once, that is
 * the optimum: fills choice and returns 1. */
static int best_fits(const sm__sia_problem *p, const int *keep, int n,
                     int *choice) {
  int used[SM__SIA_MAX_TYPES] = {0};
  int *best = sm_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof(int));

  if (best == NULL)
    return 0;
  for (int j = 0; j < p->njobs; j++)
    best[j] = -1;
  for (int k = 0; k < n; k++) {
    const sm__sia_cand *c = &p->c[keep[k]];
    if (best[c->job] < 0 || c->value > p->c[best[c->job]].value)
      best[c->job] = keep[k];
  }
  for (int j = 0; j < p->njobs; j++)
    if (best[j] >= 0)
      used[p->c[best[j]].type] += p->c[best[j]].gpus;
  for (int t = 0; t < p->ntypes; t++)
    if (used[t] > p->cap[t]) {
      sm_free(best);
      return 0;
    }
  memcpy(choice, best, (size_t)p->njobs * sizeof(int));
  sm_free(best);
  return 1;
}
#endif

/* ==== CBC ==== */

#ifdef SM_HAVE_CBC
/* CBC's LU factorisation may call BLAS; a multi-threaded BLAS (OpenBLAS,
 * Debian's default when installed) then keeps worker threads spinning on
 * sched_yield after every tiny call, which cost a third of a simulation's
 * CPU.  Unless the user chose a thread count, ask OpenBLAS for one. */
static void quiet_blas(void) {
  static int done;
  void (*set)(int);

  if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
    return;
  if (getenv("OPENBLAS_NUM_THREADS") != NULL)
    return;
  *(void **)&set = dlsym(sm__cbc.dl, "openblas_set_num_threads");
  if (set != NULL)
    set(1);
}

/* Solves the reduced problem; fills choice and returns SM__SIA_SOLVED_*
 * (FALLBACK when CBC produced nothing usable). */
static int cbc(const sm__sia_problem *p, const int *keep, int n,
               const sm__sia_solve_opts *o, int *choice,
               sm__sia_solve_info *info) {
  char *why = info->why;
  size_t whyn = sizeof(info->why);
  int *jrow = NULL, nrows = 0, trow[SM__SIA_MAX_TYPES], how;
  int *starts = NULL, *idx = NULL;
  double *val = NULL, *obj = NULL, *lb = NULL, *ub = NULL, *rlb = NULL;
  double *rub = NULL;
  const double *x;
  Cbc_Model *m = NULL;

  how = SM__SIA_SOLVED_FALLBACK;
  jrow = sm_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof(int));
  starts = sm_malloc((size_t)(n + 1) * sizeof(int));
  idx = sm_malloc((size_t)(2 * n + 1) * sizeof(int));
  val = sm_malloc((size_t)(2 * n + 1) * sizeof(double));
  obj = sm_malloc((size_t)(n + 1) * sizeof(double));
  lb = sm_malloc((size_t)(n + 1) * sizeof(double));
  ub = sm_malloc((size_t)(n + 1) * sizeof(double));
  rlb = sm_malloc((size_t)(p->njobs + SM__SIA_MAX_TYPES + 1) * sizeof(double));
  rub = sm_malloc((size_t)(p->njobs + SM__SIA_MAX_TYPES + 1) * sizeof(double));
  if (!jrow || !starts || !idx || !val || !obj || !lb || !ub || !rlb || !rub) {
    snprintf(why, whyn, "out of memory building the model");
    goto out;
  }
  for (int j = 0; j < p->njobs; j++)
    jrow[j] = -1;
  for (int t = 0; t < SM__SIA_MAX_TYPES; t++)
    trow[t] = -1;
  for (int k = 0; k < n; k++) {
    const sm__sia_cand *c = &p->c[keep[k]];
    if (jrow[c->job] < 0) {
      rlb[nrows] = -INFINITY;
      rub[nrows] = 1;
      jrow[c->job] = nrows++;
    }
  }
  for (int k = 0; k < n; k++) {
    const sm__sia_cand *c = &p->c[keep[k]];
    if (trow[c->type] < 0) {
      rlb[nrows] = -INFINITY;
      rub[nrows] = p->cap[c->type];
      trow[c->type] = nrows++;
    }
  }
  for (int k = 0; k < n; k++) {
    const sm__sia_cand *c = &p->c[keep[k]];
    starts[k] = 2 * k;
    idx[2 * k] = jrow[c->job];
    val[2 * k] = 1;
    idx[2 * k + 1] = trow[c->type];
    val[2 * k + 1] = c->gpus;
    obj[k] = c->value;
    lb[k] = 0;
    ub[k] = 1;
  }
  starts[n] = 2 * n;
  if (sm__cbc_load(NULL) != 0) {
    snprintf(why, whyn, "CBC could not be loaded");
    goto out;
  }
  quiet_blas();
  m = Cbc_newModel();
  if (m == NULL) {
    snprintf(why, whyn, "CBC could not create a model");
    goto out;
  }
  Cbc_loadProblem(m, n, nrows, starts, idx, val, lb, ub, obj, rlb, rub);
  for (int k = 0; k < n; k++)
    Cbc_setInteger(m, k);
  Cbc_setObjSense(m, -1); /* maximise */
  Cbc_setLogLevel(m, 0);
  Cbc_setMaximumSeconds(m, o->time_limit > 0 ? o->time_limit : 1e9);
  /* A deterministic limit beside the wall clock: the nodes explored do
   * not depend on the machine's load. */
  if (o->max_nodes > 0)
    Cbc_setMaximumNodes(m, o->max_nodes);
  Cbc_setAllowableFractionGap(m, o->gap > 0 ? o->gap : 1e-4);
  /* A round's problem is a small multiple-choice knapsack whose LP bound
   * is tight: branch and bound alone solves it; CBC's preprocessing, cut
   * generation and heuristics only add time (measured: twice the CPU). */
  if (o->options != NULL && *o->options) {
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", o->options);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
      char *eq = strchr(tok, '=');
      if (eq != NULL) {
        *eq = '\0';
        Cbc_setParameter(m, tok, eq + 1);
      }
    }
  }
  /* No MIP start: CBC 2.10 maps one through column names that its
   * preprocessing renumbers (it reports illegal indices); the greedy
   * solution is compared with CBC's afterwards instead. */
  Cbc_solve(m);
  info->nodes = Cbc_getNodeCount(m);
  info->by_time = Cbc_isSecondsLimitReached(m) != 0;
  x = Cbc_getColSolution(m);
  if (x == NULL || Cbc_isProvenInfeasible(m) || Cbc_isAbandoned(m)) {
    snprintf(why, whyn, "CBC returned no solution (status %d)", Cbc_status(m));
    goto out;
  }
  {
    int left[SM__SIA_MAX_TYPES], ok = 1;
    memcpy(left, p->cap, sizeof(left));
    for (int j = 0; j < p->njobs; j++)
      choice[j] = -1;
    for (int k = 0; k < n && ok; k++) {
      const sm__sia_cand *c = &p->c[keep[k]];
      if (x[k] < 0.5)
        continue;
      if (choice[c->job] >= 0 || (left[c->type] -= c->gpus) < 0)
        ok = 0;
      choice[c->job] = keep[k];
    }
    if (!ok) {
      snprintf(why, whyn, "CBC's solution breaks a constraint");
      goto out;
    }
  }
  if (Cbc_isProvenOptimal(m))
    how = SM__SIA_SOLVED_OPTIMAL;
  else if (!info->by_time && Cbc_isNodeLimitReached(m))
    how = SM__SIA_SOLVED_NODES;
  else
    how = SM__SIA_SOLVED_LIMIT;

out:
  if (m != NULL)
    Cbc_deleteModel(m);
  sm_free(jrow);
  sm_free(starts);
  sm_free(idx);
  sm_free(val);
  sm_free(obj);
  sm_free(lb);
  sm_free(ub);
  sm_free(rlb);
  sm_free(rub);
  return how;
}
#endif

/* ==== Entry point ==== */

static double thread_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sm__sia_solve(const sm__sia_problem *p, const sm__sia_solve_opts *o,
                  int *choice, sm__sia_solve_info *info) {
  double t0 = sm_now(), c0 = thread_cpu(), gv;
  int *keep = sm_malloc((size_t)(p->nc ? p->nc : 1) * sizeof(int));
  int *order = sm_malloc((size_t)(p->nc ? p->nc : 1) * sizeof(int));
  int *start = sm_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof(int));
  int n;

  memset(info, 0, sizeof(*info));
  if (keep == NULL || order == NULL || start == NULL) {
    sm_free(keep);
    sm_free(order);
    sm_free(start);
    return SM_ENOMEM;
  }
  for (int j = 0; j < p->njobs; j++)
    choice[j] = start[j] = -1;
  if (o->reduce) {
    n = sm__sia_reduce(p, keep);
  } else {
    n = 0;
    for (int i = 0; i < p->nc; i++)
      if (p->c[i].value > 0 && p->c[i].gpus >= 1 &&
          p->c[i].gpus <= p->cap[p->c[i].type])
        keep[n++] = i;
  }
  info->cols = n;
  if (n == 0) {
    info->how = SM__SIA_SOLVED_EMPTY;
    goto done;
  }
  gv = greedy(p, keep, n, start, order);
  info->how = SM__SIA_SOLVED_GREEDY;
  memcpy(choice, start, (size_t)p->njobs * sizeof(int));
#ifdef SM_HAVE_CBC
  if (o->use_cbc && best_fits(p, keep, n, choice)) {
    info->how = SM__SIA_SOLVED_OPTIMAL; /* no constraint binds */
  } else if (o->use_cbc) {
    int *sol = sm_malloc((size_t)(p->njobs ? p->njobs : 1) * sizeof(int));
    int how;
    if (sol == NULL) {
      info->how = SM__SIA_SOLVED_FALLBACK;
      snprintf(info->why, sizeof(info->why), "out of memory");
    } else {
      how = cbc(p, keep, n, o, sol, info);
      if (how == SM__SIA_SOLVED_FALLBACK) {
        info->how = SM__SIA_SOLVED_FALLBACK;
      } else {
        double sv = 0;
        for (int j = 0; j < p->njobs; j++)
          if (sol[j] >= 0)
            sv += p->c[sol[j]].value;
        info->how = how;
        /* At the time limit the greedy start may still be the better. */
        if (sv >= gv - 1e-9 || how == SM__SIA_SOLVED_OPTIMAL)
          memcpy(choice, sol, (size_t)p->njobs * sizeof(int));
      }
      sm_free(sol);
    }
  }
#else
  (void)gv;
#endif
done:
  info->objective = 0;
  for (int j = 0; j < p->njobs; j++)
    if (choice[j] >= 0)
      info->objective += p->c[choice[j]].value;
  info->seconds = sm_now() - t0;
  info->cpu_seconds = thread_cpu() - c0;
  sm_free(keep);
  sm_free(order);
  sm_free(start);
  return 0;
}
