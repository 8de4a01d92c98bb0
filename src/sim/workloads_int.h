/* workloads_int.h - the catalogue of workload templates that stands in
 * for the repositories a trace does not have (workloads.c): small
 * repositories whose launch commands the real extractor reads. */
#ifndef SM_SIM_WORKLOADS_INT_H
#define SM_SIM_WORKLOADS_INT_H

#include <stdint.h>

#include "schedmate/sm_meta.h"
#include "schedmate/sm_sim.h"

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

#endif /* SM_SIM_WORKLOADS_INT_H */
