/* bench_sia.c - one Sia scheduling round with many active jobs.
 *
 *   bench_sia TABLES CLUSTER JOBS [REPEATS]
 *
 * Builds JOBS active jobs of the applications in TABLES, each with
 * observations on every GPU type, and runs one round (goodput matrix,
 * allocation problem, placement) cold and once more warm (models
 * unchanged).  The reference run solves the same problem without the
 * exact reductions, every column handed to the solver.  Prints medians
 * over REPEATS (5) runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm.h"
#include "sim/sia_bench_int.h"
#include "sim/sia_milp_int.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *how_name(int how) {
  static const char *const names[] = {"empty",    "optimal", "time limit",
                                      "fallback", "greedy",  "node limit"};
  return how >= 0 && how < SM__SIA_SOLVED_N ? names[how] : "?";
}

int main(int argc, char **argv) {
  sm_sim_cluster *c;
  sm_err err = {0};
  int jobs, reps = 5;
  const char *solver;
  double mx[32], so[32], pl[32], wa[32], ref[32], cpu[32], rcpu[32];
  sm__sia_bench b = {0}, r = {0};

  if (argc < 4) {
    fprintf(stderr, "usage: bench_sia TABLES CLUSTER JOBS [REPEATS]\n");
    return 2;
  }
  jobs = atoi(argv[3]);
  if (argc > 4)
    reps = atoi(argv[4]);
  if (jobs < 1 || reps < 1 || reps > 32) {
    fprintf(stderr, "bench_sia: bad JOBS or REPEATS\n");
    return 2;
  }
  if (sm_sim_cluster_parse(argv[2], &c, &err) != 0) {
    fprintf(stderr, "bench_sia: %s\n", err.msg);
    return 2;
  }
  solver = sm__sia_have_cbc() ? "cbc" : "greedy";
  for (int i = 0; i < reps; i++) {
    if (sm__sia_bench_round(argv[1], c, jobs, solver, 10, 7 + i, &b, &err, 1) !=
            0 ||
        sm__sia_bench_round(argv[1], c, jobs, solver, 10, 7 + i, &r, &err, 0) !=
            0) {
      fprintf(stderr, "bench_sia: %s\n", err.msg);
      return 2;
    }
    mx[i] = b.matrix_s * 1e3;
    so[i] = b.solve_s * 1e3;
    pl[i] = b.place_s * 1e3;
    wa[i] = b.warm_s * 1e3;
    ref[i] = r.solve_s * 1e3;
    cpu[i] = b.solve_cpu_s * 1e3;
    rcpu[i] = r.solve_cpu_s * 1e3;
  }
  printf("%s, %d active jobs, solver %s (%s), %d GPUs allocated to %d "
         "jobs\n",
         sm_sim_cluster_describe(c), jobs, solver, how_name(b.how),
         sm_sim_cluster_gpus(c), b.allocated);
  printf("  round, cold:  goodput matrix %8.2f ms  solve %8.2f ms (CPU "
         "%.2f ms, %d columns)  placement %.2f ms\n",
         median(mx, reps), median(so, reps), median(cpu, reps), b.cols,
         median(pl, reps));
  printf("  round, warm:  %8.2f ms in all (cached goodput rows)\n",
         median(wa, reps));
  printf("  reference (no reductions): solve %8.2f ms (CPU %.2f ms, %d "
         "columns, %s)  speed-up %.1fx\n",
         median(ref, reps), median(rcpu, reps), r.cols, how_name(r.how),
         median(ref, reps) / median(so, reps));
  printf("  target: solve <= 100 ms -> %s\n",
         median(so, reps) <= 100 ? "met" : "NOT met");
  sm_sim_cluster_free(c);
  return 0;
}
