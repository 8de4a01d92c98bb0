/* colocate_int.h - the simulated world of the SchedMate integrations
 * (Lucid, Lucid + SchedMate, SchedMate-SJF): the jobs' GPU profiles and
 * the model of two jobs sharing GPUs (colocate.c).  Per run and
 * deterministic for the run's seed. */
#ifndef SM_SIM_COLOCATE_INT_H
#define SM_SIM_COLOCATE_INT_H

#include <stdint.h>

#include "schedmate/sm_sim.h"

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

#endif /* SM_SIM_COLOCATE_INT_H */
