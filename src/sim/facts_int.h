/* facts_int.h - the source of SchedMate's facts in a run (facts.c): the
 * real history engine online over the trace, a calibrated model of its
 * accuracy, or the oracle upper bound; and each job's place in the
 * simulated world (its profile, colocate_int.h, and its template,
 * workloads_int.h).  None of this is a policy: it is the information
 * SchedMate would hand the policies. */
#ifndef SM_SIM_FACTS_INT_H
#define SM_SIM_FACTS_INT_H

#include <stdint.h>

#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_sim.h"
#include "sim/colocate_int.h"
#include "sim/workloads_int.h"

/* The Advisor's answer for one job at its submission. */
typedef struct sm__fact {
  int hit;          /* 1: an estimate the scheduler may use */
  double duration;  /* estimated duration, s (hit) */
  double util;      /* mean SM utilisation of the matches, percent */
  double gmem_util; /* mean memory-bandwidth utilisation, percent */
  double gmem;      /* mean GPU memory, MiB */
  int n;            /* matches averaged */
  int fallback;     /* sm_fallback when not a hit */
} sm__fact;

/* A job's place in the simulated world: its profile and template, fixed
 * for the run. */
typedef struct sm__jobenv {
  int prof;     /* profile row */
  int tmpl;     /* template index, -1 without a catalogue */
  int variant;  /* variant index */
  int otmpl;    /* oracle source: outcome-based template, -1 otherwise */
  int ovariant; /* oracle source: its variant */
} sm__jobenv;

typedef struct sm__facts sm__facts;

/* The sources of facts (parameter facts=). */
enum { SM__FACTS_HISTORY = 0, SM__FACTS_CALIBRATED, SM__FACTS_ORACLE };

/* The world and the facts of one run.  Parameters: facts=history|
 * calibrated|oracle, facts.top_k, facts.threshold, calibrated.hit,
 * calibrated.within, workloads=DIR,
 * and the profile tables' (sm__coloc_open). */
int sm__facts_open(sm_sim *s, sm__facts **out, sm_err *err);
void sm__facts_free(sm__facts *f);
const sm__coloc *sm__facts_coloc(const sm__facts *f);
const sm__jobenv *sm__facts_env(const sm__facts *f, const sm_sim_job *j);
/* The answer for j now (at its submission).  History mode reads only
 * jobs already written back. */
void sm__facts_ask(sm__facts *f, const sm_sim_job *j, sm__fact *out);
/* Writes j's outcome back to the history: work is the run time it needed
 * at full speed, state an sm_end_state. */
void sm__facts_done(sm__facts *f, const sm_sim_job *j, double work, int state);
/* Writes back an attempt that just ended, as its end state says: a
 * failure as failed (failed_infra or failed_user when diagnosed says the
 * Failure Handler named the cause), a job completed after recovering
 * from an infrastructure fault with its run time and the rest it needed
 * (fail.rest). */
void sm__facts_done_job(sm__facts *f, const sm_sim_job *j, int diagnosed);
/* Adds the facts' figures (queries, hits, ...) and notes to the run. */
void sm__facts_report(sm__facts *f, sm_sim *s);
/* "history", "calibrated" or "oracle". */
const char *sm__facts_mode(const sm__facts *f);

/* For tests: answers so far that read a record written after the
 * question was asked (history mode; must stay 0), and records read. */
size_t sm__facts_future_reads(const sm__facts *f, size_t *records_read);
/* For tests: the metadata the history source builds for j at its
 * submission (m need not be initialised; the caller releases it), 0 or
 * SM_ENOMEM; a hash of j's identity key with the identity groups its
 * metadata knows (0 without memory); index searches, answers kept from a
 * final prototype and prototypes so far. */
int sm__facts_job_meta(const sm__facts *f, const sm_sim_job *j, sm_meta *m);
uint64_t sm__facts_identity(sm__facts *f, const sm_sim_job *j, unsigned *known);
void sm__facts_counters(const sm__facts *f, size_t *searches, size_t *frozen,
                        size_t *prototypes);

#endif /* SM_SIM_FACTS_INT_H */
