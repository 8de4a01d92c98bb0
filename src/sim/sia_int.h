/* sia_int.h - what the Sia policy (sia.c) offers the other Sia modules:
 * a run's state set up from the cluster, the parameters and the tables
 * without any job (for the benchmark round, sia_bench.c), and its
 * release. */
#ifndef SM_SIM_SIA_INT_H
#define SM_SIM_SIA_INT_H

#include "sim/sia_job_int.h"

/* Sets S up for the cluster S->cl and the run S->s (its parameters):
 * types and configurations, parameters, tables.  0 or an error with err
 * filled. */
int sm__sia_prepare(sm__sia_run *S, sm_err *err);
/* Frees what S holds (jobs, workload files, tables). */
void sm__sia_release(sm__sia_run *S);

#endif /* SM_SIM_SIA_INT_H */
