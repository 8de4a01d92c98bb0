/* sigdb_fixture.h - the built-in signature database, loaded once per
 * test process, and a diagnosis of a log held in memory, for the
 * Failure Handler's unit tests. */
#ifndef SM_TEST_SIGDB_FIXTURE_H
#define SM_TEST_SIGDB_FIXTURE_H

#include <string.h>

#include "failure/failure_int.h"
#include "harness.h"

static inline sm_sigdb *db_get(void) {
  static sm_sigdb *db;
  sm_err err = {0};

  if (db == NULL) {
    db = sm_sigdb_new();
    if (db == NULL || sm_sigdb_load_builtin(db, &err) != 0)
      SM_FAIL_AT("built-in signatures: %s", err.msg);
  }
  return db;
}

/* Diagnoses log (named t.log) into d, or fails the test. */
static inline void run(const char *log, sm_diagnosis *d) {
  sm_err err = {0};

  if (sm_diagnose_mem(db_get(), log, strlen(log), "t.log", NULL, d, &err))
    SM_FAIL_AT("diagnose: %s", err.msg);
}

#endif
