/* sm_sia.h - what the simulator's Sia policies add to the public API.
 *
 * The policies themselves ("sia", "sia+schedmate") are used through
 * sm_sim_run like every other policy (see sm_sim.h and
 * docs/simulator.md, "Sia and Sia + SchedMate").  Sia's figures are
 * defined over a set of workload files, each replayed on its own copy of
 * the cluster; sm_sim_trace_load_set reads such a set as one trace. */
#ifndef SM_SIA_H
#define SM_SIA_H

#include "schedmate/sm_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads path as sm_sim_trace_load does when it is a file.  When it is a
 * directory, every *.csv and *.csv.gz in it (in natural order:
 * workload-2 before workload-10) is read with o and the files become one
 * trace: each job carries the attribute "workload" (its file name without
 * the extension) and an id prefixed with it, and keeps the submission
 * times of its own file (every file starts at 0).  The Sia policies run
 * each workload on its own copy of the cluster; other policies replay the
 * merged trace, which the notes say.  Errors name the file and line. */
SM_EXTERN int sm_sim_trace_load_set(const char *path, const sm_sim_load_opts *o,
                                    sm_sim_trace **out, sm_err *err);

/* For a comparison's report: when run i is a Sia + SchedMate run, appends
 * one line (plain text) with its hit rate, the restarts it avoided against
 * a "sia" run of the same comparison, the profiling GPU-hours saved and
 * the information source, and returns 1; else returns 0.  The same line
 * as sm_sim_schedmate_line writes for such a run. */
SM_EXTERN int sm_sia_facts_line(const sm_sim_result *const *runs, size_t n,
                                size_t i, sm_buf *out);

/* 1 when the library was built with the MILP solver the Sia policy needs
 * (COIN-OR CBC); without it only --param sia.solver=greedy runs. */
SM_EXTERN int sm_sia_have_solver(void);

#ifdef __cplusplus
}
#endif
#endif /* SM_SIA_H */
