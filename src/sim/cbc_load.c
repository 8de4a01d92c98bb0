/* cbc_load.c - COIN-OR CBC loaded on first use (cbc_load_int.h). */
#define SM__CBC_LOADER
#include <pthread.h>

#include "sim/cbc_load_int.h"
#include "util/dlib_int.h"

#ifdef SM_HAVE_CBC

#ifndef SM_CBC_SONAME
#define SM_CBC_SONAME "libCbcSolver.so.3" /* Debian bookworm's */
#endif

sm__cbc_api sm__cbc;

static sm__dlib lib = {
    "COIN-OR CBC (the MILP solver)", SM_CBC_SONAME, "SCHEDMATE_CBC_LIB",
    "install coinor-libcbc-dev, or run the greedy fallback with --param "
    "sia.solver=greedy"};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  if (sm__dlib_open(&lib) != 0)
    return;
#define SM__XX(f) *(void **)&sm__cbc.f = sm__dlib_sym(&lib, #f);
  SM__CBC_FUNCS(SM__XX)
#undef SM__XX
  sm__cbc.dl = lib.dl;
}

int sm__cbc_load(sm_err *err) {
  pthread_once(&once, load);
  if (sm__dlib_status(&lib, NULL) == 0)
    return 0;
  return sm_err_set(err, SM_EUNSUPP, "%s", lib.msg);
}

#else

int sm__cbc_load(sm_err *err) {
  return sm_err_set(err, SM_EUNSUPP,
                    "this build has no MILP solver (COIN-OR CBC, "
                    "Debian package coinor-libcbc-dev, was not found "
                    "when it was built); install it and rebuild, or run "
                    "the greedy fallback with --param sia.solver=greedy");
}

#endif
