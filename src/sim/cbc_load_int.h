/* cbc_load_int.h - COIN-OR CBC, the Sia policy's MILP solver, loaded on
 * first use (cbc_load.c).
 *
 * The solver and what it pulls in (Clp, LAPACK, OpenBLAS, which starts a
 * thread when it is loaded, libgfortran, libstdc++) cost every process
 * about 11 ms at start-up when linked; only `--policy sia` uses them.
 * Cbc_C_Interface.h stays a build-time requirement (SM_HAVE_CBC): it gives
 * the prototypes, and the Cbc_* names used after including this header
 * call through a table that sm__cbc_load fills from libCbcSolver (the
 * soname the build found, SM_CBC_SONAME, or the file named by
 * SCHEDMATE_CBC_LIB). */
#ifndef SM_SIM_CBC_LOAD_INT_H
#define SM_SIM_CBC_LOAD_INT_H

#include "schedmate/sm_base.h"

/* Loads CBC once (thread-safe).  Returns 0, or SM_EUNSUPP with one line
 * saying why `--policy sia` cannot run: a build without CBC, or a library
 * that cannot be loaded (each naming the greedy fallback). */
int sm__cbc_load(sm_err *err);

#ifdef SM_HAVE_CBC
#include <Cbc_C_Interface.h>

/* The functions the Sia MILP calls. */
#define SM__CBC_FUNCS(XX)                                                      \
  XX(Cbc_newModel)                                                             \
  XX(Cbc_deleteModel)                                                          \
  XX(Cbc_loadProblem)                                                          \
  XX(Cbc_setInteger)                                                           \
  XX(Cbc_setObjSense)                                                          \
  XX(Cbc_setLogLevel)                                                          \
  XX(Cbc_setMaximumSeconds)                                                    \
  XX(Cbc_setMaximumNodes)                                                      \
  XX(Cbc_getNodeCount)                                                         \
  XX(Cbc_isNodeLimitReached)                                                   \
  XX(Cbc_isSecondsLimitReached)                                                \
  XX(Cbc_setAllowableFractionGap)                                              \
  XX(Cbc_setParameter)                                                         \
  XX(Cbc_solve)                                                                \
  XX(Cbc_getColSolution)                                                       \
  XX(Cbc_isProvenInfeasible)                                                   \
  XX(Cbc_isAbandoned)                                                          \
  XX(Cbc_status)                                                               \
  XX(Cbc_isProvenOptimal)

typedef struct sm__cbc_api {
#define SM__XX(f) __typeof__(f) *f;
  SM__CBC_FUNCS(SM__XX)
#undef SM__XX
  void *dl; /* the library's handle (dlsym for its dependencies) */
} sm__cbc_api;

/* Filled by the first successful sm__cbc_load; read only after one. */
extern sm__cbc_api sm__cbc;

#ifndef SM__CBC_LOADER
#define Cbc_newModel (*sm__cbc.Cbc_newModel)
#define Cbc_deleteModel (*sm__cbc.Cbc_deleteModel)
#define Cbc_loadProblem (*sm__cbc.Cbc_loadProblem)
#define Cbc_setInteger (*sm__cbc.Cbc_setInteger)
#define Cbc_setObjSense (*sm__cbc.Cbc_setObjSense)
#define Cbc_setLogLevel (*sm__cbc.Cbc_setLogLevel)
#define Cbc_setMaximumSeconds (*sm__cbc.Cbc_setMaximumSeconds)
#define Cbc_setMaximumNodes (*sm__cbc.Cbc_setMaximumNodes)
#define Cbc_getNodeCount (*sm__cbc.Cbc_getNodeCount)
#define Cbc_isNodeLimitReached (*sm__cbc.Cbc_isNodeLimitReached)
#define Cbc_isSecondsLimitReached (*sm__cbc.Cbc_isSecondsLimitReached)
#define Cbc_setAllowableFractionGap (*sm__cbc.Cbc_setAllowableFractionGap)
#define Cbc_setParameter (*sm__cbc.Cbc_setParameter)
#define Cbc_solve (*sm__cbc.Cbc_solve)
#define Cbc_getColSolution (*sm__cbc.Cbc_getColSolution)
#define Cbc_isProvenInfeasible (*sm__cbc.Cbc_isProvenInfeasible)
#define Cbc_isAbandoned (*sm__cbc.Cbc_isAbandoned)
#define Cbc_status (*sm__cbc.Cbc_status)
#define Cbc_isProvenOptimal (*sm__cbc.Cbc_isProvenOptimal)
#endif
#endif /* SM_HAVE_CBC */

#endif /* SM_SIM_CBC_LOAD_INT_H */
