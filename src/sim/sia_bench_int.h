/* sia_bench_int.h - one Sia scheduling round at scale, for bench/sia
 * (sia_bench.c). */
#ifndef SM_SIM_SIA_BENCH_INT_H
#define SM_SIM_SIA_BENCH_INT_H

#include <stdint.h>

#include "schedmate/sm_sim.h"
#include "sim/sia_round_int.h"

/* A synthetic round for the benchmark: njobs active jobs of the
 * applications in the table directory, each with observations on every
 * type, on the cluster; one scheduling round is run cold (every model
 * fitted and every goodput computed) and once more warm, with or without
 * the exact reductions.  The times (sm__sia_bench, sia_round_int.h) are in
 * seconds. */

int sm__sia_bench_round(const char *tables, const sm_sim_cluster *c, int njobs,
                        const char *solver, double time_limit, uint64_t seed,
                        sm__sia_bench *out, sm_err *err, int reduce);

#endif /* SM_SIM_SIA_BENCH_INT_H */
