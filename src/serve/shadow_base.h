/* shadow_base.h - the figures of the shadow report (shadow.c computes
 * them, shadow_html.c draws them; the containers are in shadow_base.c). */
#ifndef SM_SHADOW_BASE_H
#define SM_SHADOW_BASE_H

#include "schedmate/sm_history.h"
#include "schedmate/sm_serve.h"

/* A list of doubles. */
typedef struct sh_vec {
  double *v;  /* values */
  size_t n;   /* used */
  size_t cap; /* allocated */
} sh_vec;

int sh__vec_add(sh_vec *a, double x);
void sh__vec_release(sh_vec *a);
/* Sorts a ascending. */
void sh__vec_sort(sh_vec *a);
/* The q-quantile (0..1) of a sorted vector, NAN when empty. */
double sh__quantile(const sh_vec *a, double q);

/* Named counts (fallback reasons, categories). */
#define SH_MAX_NAMES 24
typedef struct sh_counts {
  char name[SH_MAX_NAMES][48]; /* names in order of appearance */
  long n[SH_MAX_NAMES];        /* their counts */
  int k;                       /* names used */
  long total;                  /* every count, also those past the table */
} sh_counts;

void sh__count(sh_counts *c, const char *name);

/* One would-be eviction (interference flagged in the audit log). */
typedef struct sh_evict {
  char job[64];       /* the slowed job */
  char joined_by[64]; /* the job that joined its node */
  char node[64];      /* the node */
  double ratio;       /* rate after / rate before */
} sh_evict;

/* Diagnoses of failed runs against what happened next. */
typedef struct sh_diag_row {
  char category[32];      /* infrastructure, framework, user, unknown */
  long n;                 /* failed runs with that diagnosis */
  long retryable;         /* of which retryable */
  long not_restarted;     /* the job's last run */
  long restart_completed; /* a later run of the job completed */
  long restart_failed;    /* a later run ended otherwise */
} sh_diag_row;

#define SH_CHANNELS 4 /* submit, run, exit, plugin */

typedef struct sh_report {
  const char *title;         /* page title */
  const char *store_kind;    /* "sqlite", "redis" */
  long records;              /* records in the store */
  long with_outcome;         /* with an outcome object */
  long advised;              /* ... and a recorded answer */
  sh_vec err[SM_END__COUNT]; /* relative errors (est - real) / real */
  sh_counts fb_jobs;         /* fallbacks of ended jobs */
  long est_jobs;             /* ended jobs that had an estimate */
  sh_counts fb_answers;      /* fallbacks of all answers (audit) */
  long answers;              /* advice answers in the audit */
  sh_evict *ev;              /* would-be evictions */
  int n_ev;                  /* their count */
  size_t cap_ev;             /* allocated */
  sh_diag_row diag[8];       /* by category */
  int n_diag;                /* rows used */
  double profile_s;          /* assumed profiling run */
  double gpu_hours_saved;    /* profiling avoided */
  long gpus_unknown;         /* estimated jobs counted as 1 GPU */
  sh_vec lat[SH_CHANNELS];   /* audit latencies, ms */
  long late[SH_CHANNELS];    /* answered by the deadline */
  long audit_files, audit_lines, audit_bad; /* what was read */
} sh_report;

extern const char *const sh__channel_names[SH_CHANNELS];

#endif /* SM_SHADOW_BASE_H */
