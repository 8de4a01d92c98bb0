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

/* Diagnoses log and checks line, category, component and, when basis is
 * not NULL, the verdict's basis; line 0 means no failure.  where is the
 * caller's line for the message. */
static inline void expect_diag_at(int where, const char *log, long line,
                                  const char *cat, const char *comp,
                                  const char *basis) {
  sm_diagnosis d;

  run(log, &d);
  if (line == 0) {
    if (d.failure)
      SM_FAIL_AT("case at %d: failure at line %lld (%s), want none", where,
                 d.first_error_line, d.reason ? d.reason : "-");
  } else if (d.first_error_line != line || strcmp(d.category, cat) != 0 ||
             strcmp(d.component, comp) != 0 ||
             (basis != NULL &&
              (d.basis == NULL || strcmp(d.basis, basis) != 0))) {
    SM_FAIL_AT("case at %d: got line %lld %s/%s basis %s (%s), want %ld "
               "%s/%s%s%s",
               where, d.first_error_line, d.category, d.component,
               d.basis ? d.basis : "-", d.reason ? d.reason : "-", line, cat,
               comp, basis ? " basis " : "", basis ? basis : "");
  }
  sm_diagnosis_release(&d);
}

/* Diagnoses log and plans for it with node known at threshold th (0: the
 * default gate) into *p, or fails the test; release *p after use. */
static inline void plan_for(const char *log, const char *node, double th,
                            sm_plan *p) {
  sm_diagnosis d;
  sm_plan_opts o = {0};
  sm_err err = {0};

  run(log, &d);
  o.node = node;
  o.threshold = th;
  if (sm_plan_make(db_get(), &d, &o, p, &err) != 0)
    SM_FAIL_AT("plan: %s", err.msg);
  sm_diagnosis_release(&d);
}

/* 1 if the plan for log (node known, default gate) isolates, replaces or
 * restarts anything: more than report and diagnose steps. */
static inline int plan_acts(const char *log, const char *node) {
  sm_plan p;
  int r = 0;

  plan_for(log, node, 0, &p);
  for (int i = 0; i < p.n_steps; i++)
    r |= strcmp(p.steps[i].action, "report") != 0 &&
         strcmp(p.steps[i].action, "diagnose") != 0;
  sm_plan_release(&p);
  return r;
}

#endif
