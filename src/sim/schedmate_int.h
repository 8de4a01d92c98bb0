/* schedmate_int.h - what the SchedMate integrations of the simulator share
 * (Lucid, Lucid + SchedMate, SchedMate-SJF with and without the Failure
 * Handler): the model of the jobs' GPU profiles and of co-location
 * (colocate.c), the catalogue of workload templates that stands in for
 * the repositories a trace does not have (workloads.c), and the source of
 * semantic facts, the real history engine or a calibrated model
 * (facts.c).
 *
 * None of this is a policy: it is the simulated world the policies act
 * in and the information SchedMate would hand them.  Everything is per
 * run and deterministic for the run's seed. */
#ifndef SM_SCHEDMATE_INT_H
#define SM_SCHEDMATE_INT_H

#include <stdint.h>

#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_sim.h"

/* ==== Job profiles and co-location (colocate.c) ==== */

/* GPU-time classes: the light class holds jobs under 1 GPU-hour, the
 * medium class 1 to 10 GPU-hours, the heavy class the rest. */
enum { SM__GROUP_LIGHT = 0, SM__GROUP_MEDIUM, SM__GROUP_HEAVY, SM__NGROUPS };

/* The single-job profile of a workload on one GPU. */
typedef struct sm__prof {
  char model[32];   /* model (Lucid's name, or the built-in row's) */
  char dataset[32]; /* dataset, "" for built-in rows */
  int batch;        /* batch size, 0 when not given */
  int amp;          /* 1 with mixed precision */
  double util;      /* GPU (SM) utilisation alone, percent */
  double gmem_util; /* GPU memory-bandwidth utilisation, percent */
  double gmem;      /* GPU memory in use, MiB */
  double step_s;    /* seconds per training step alone */
  int label;        /* sharing score 0 (shares well) .. 2 (poorly) */
  int group;        /* SM__GROUP_* this profile stands for */
} sm__prof;

typedef struct sm__coloc sm__coloc;

/* Opens the profile tables a run uses.  Parameters:
 *   lucid.tables=DIR|builtin   Lucid's single_data.csv + colocate_info.csv
 *                              in DIR, or the built-in model (default);
 *   lucid.profiles=FILE, lucid.colocate=FILE   the two files by name.
 * Errors name the file, the line and the column. */
int sm__coloc_open(sm_sim *s, sm__coloc **out, sm_err *err);
/* The same from explicit paths (NULL for both: the built-in model). */
int sm__coloc_load(const char *profiles, const char *colocate, sm__coloc **out,
                   sm_err *err);
void sm__coloc_free(sm__coloc *c);
/* "lucid tables (FILE, FILE)" or "built-in model". */
const char *sm__coloc_source(const sm__coloc *c);
int sm__coloc_builtin(const sm__coloc *c);
int sm__coloc_count(const sm__coloc *c);
const sm__prof *sm__coloc_prof(const sm__coloc *c, int row);
/* Row of (model, dataset, batch, amp), or -1. */
int sm__coloc_find(const sm__coloc *c, const char *model, const char *dataset,
                   int batch, int amp);
/* The profile a trace job runs with: the row its model/dataset/batchsize
 * attributes name, else a row of class group (SM__GROUP_*, or -1 for
 * any class) chosen by a seeded hash of identity (the same identity
 * always gets the same row).  Submission-time information only. */
int sm__coloc_for_job(const sm__coloc *c, const sm_sim_job *j,
                      const char *identity, int group, uint64_t seed);
/* GPU-time class of a job (SM__GROUP_*): reads its true duration, so
 * only the oracle source may use it. */
int sm__gpu_time_group(const sm_sim_job *j);
/* Class of profiles a workload template stands for: decades 0 and 1
 * light, 2 medium, 3 and 4 heavy. */
int sm__template_group(int gclass);
/* Speeds of a and b when they share GPUs, relative to running alone:
 * measured (colocate_info.csv) when both are Lucid rows and the pair was
 * measured, else the utilisation model.  *measured says which. */
void sm__coloc_pair(const sm__coloc *c, int a, int b, double *sa, double *sb,
                    int *measured);
/* Sharing score of a profile given by its figures: the label of the
 * nearest table row (utilisation, bandwidth and memory, scaled). */
int sm__coloc_label(const sm__coloc *c, double util, double gmem_util,
                    double gmem);

/* ==== Workload templates (workloads.c) ==== */

/* One launch command of a template (a configuration variant). */
typedef struct sm__variant {
  sm_meta meta;  /* what the real extractor found */
  char *command; /* the command, for reports */
} sm__variant;

/* A workload template: a small repository and its launch commands. */
typedef struct sm__template {
  char *name;     /* e.g. "resnet50-imagenet" */
  int gclass;     /* GPU-time decade 0..4 it stands for */
  sm__variant *v; /* variants, shortest first */
  int nv;         /* their count */
} sm__template;

typedef struct sm__wl {
  char *dir;         /* catalogue directory */
  sm__template *t;   /* templates */
  int n;             /* their count */
  int nvariants;     /* variants over all templates */
  double extract_ms; /* time spent extracting */
} sm__wl;

/* Loads a catalogue: every DIR/NAME/workload.conf with its repo/, each
 * command extracted by sm_extract.  Errors name the file and line. */
int sm__wl_load(const char *dir, sm__wl **out, sm_err *err);
void sm__wl_free(sm__wl *w);
/* The template and variant standing for job j in the simulated world
 * (docs/simulator.md, 7.4): both from a seeded hash of identity (the
 * trace's user and job name, else the job itself), never from what the
 * job did: submission-time information only. */
void sm__wl_map(const sm__wl *w, const char *identity, uint64_t seed, int *tmpl,
                int *variant);
/* GPU-time decade of a job: 0 under 0.1 GPU-hours, 1 under 1, 2 under 10,
 * 3 under 100, 4 above.  Reads the true duration (oracle only). */
int sm__gpu_time_decade(const sm_sim_job *j);
/* The outcome-based mapping of the oracle source: the template from the
 * job's GPU-time decade, chosen by a seeded hash of identity; the variant
 * from the position of the job's GPU time inside the decade.  An upper
 * bound: the fingerprint then encodes the answer. */
void sm__wl_map_oracle(const sm__wl *w, const sm_sim_job *j,
                       const char *identity, uint64_t seed, int *tmpl,
                       int *variant);

/* ==== Semantic facts (facts.c) ==== */

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

#endif /* SM_SCHEDMATE_INT_H */
