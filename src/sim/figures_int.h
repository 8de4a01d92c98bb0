/* figures_int.h - the figures a run records besides its summary (how many
 * jobs Lucid profiled, SchedMate's hit rate, Sia's rounds ...) as one
 * typed struct (figures.c).
 *
 * Every figure the engine or a built-in policy records is an entry of the
 * table below: a field of sm__figs, recorded with SM__FIG_ADD and read as
 * a typed field by the summary of a comparison (summary.c), the report
 * and the command.  A result lists its figures in the order they were
 * first recorded (JSON "stats", the text and the report's table); a
 * figure recorded under another name (sm_sim_stat_add, by a policy a
 * program registers) keeps its name and value in that list. */
#ifndef SM_SIM_FIGURES_INT_H
#define SM_SIM_FIGURES_INT_H

#include <stdint.h>

#include "sim/sim_int.h"

/* X(field, label, kind): the field is also the figure's name; label is
 * what the report calls it (NULL: its name); kind is SM__FIG_COUNT for a
 * count or an amount, SM__FIG_RATE for a share shown in percent. */
#define SM__FIGS(X)                                                            \
  /* Lucid and Lucid + SchedMate (lucid.c). */                                 \
  X(profiled, "jobs profiled to Lucid's time limit", SM__FIG_COUNT)            \
  X(ended_in_profiler, "jobs that ended inside the profiler", SM__FIG_COUNT)   \
  X(profiler_gpu_h, "GPU-hours spent profiling", SM__FIG_COUNT)                \
  X(not_profiled_too_large, "jobs too large to profile", SM__FIG_COUNT)        \
  X(packed_pairs, "pairs packed onto shared GPUs", SM__FIG_COUNT)              \
  X(packed_pairs_measured, "of which with measured pair speeds",               \
    SM__FIG_COUNT)                                                             \
  X(profiles_skipped, "profiles skipped on a SchedMate hit", SM__FIG_COUNT)    \
  X(profiling_gpu_h_saved, "profiling GPU-hours saved", SM__FIG_COUNT)         \
  X(hits_with_wrong_score, "hits whose believed sharing score was wrong",      \
    SM__FIG_COUNT)                                                             \
  X(tracker_checks, "Tracker checks of packed pairs", SM__FIG_COUNT)           \
  X(checks_skipped_untracked, "checks skipped: host log not trackable",        \
    SM__FIG_COUNT)                                                             \
  X(evictions, "harmful packings undone (evictions)", SM__FIG_COUNT)           \
  /* SchedMate's facts (facts.c; Sia + SchedMate's own). */                    \
  X(facts_queries, "questions to SchedMate (jobs submitted)", SM__FIG_COUNT)   \
  X(facts_hits, "answers a scheduler may use (hits)", SM__FIG_COUNT)           \
  X(facts_hit_rate, "hit rate", SM__FIG_RATE)                                  \
  X(facts_within_2x, "share of hits within 2x of the true duration",           \
    SM__FIG_RATE)                                                              \
  X(fallback_no_match, "fallbacks: no similar past job", SM__FIG_COUNT)        \
  X(fallback_below_threshold, "fallbacks: matches below the threshold",        \
    SM__FIG_COUNT)                                                             \
  X(fallback_inconsistent, "fallbacks: inconsistent history", SM__FIG_COUNT)   \
  X(fallback_too_little_known,                                                 \
    "fallbacks: too little known to identify the job", SM__FIG_COUNT)          \
  X(facts_vetoed_lookalikes,                                                   \
    "answers that vetoed a look-alike (a different job)", SM__FIG_COUNT)       \
  X(facts_thin_lookalikes,                                                     \
    "answers that skipped a look-alike sharing too little identity",           \
    SM__FIG_COUNT)                                                             \
  X(history_records, "jobs written back to the history", SM__FIG_COUNT)        \
  X(history_fingerprints, "distinct fingerprints in the history",              \
    SM__FIG_COUNT)                                                             \
  X(history_future_reads, "answers that read the future (must be 0)",          \
    SM__FIG_COUNT)                                                             \
  /* QSSF's history estimator (ordered.c). */                                  \
  X(estimates_by_user_name, "estimates from the same user and job name",       \
    SM__FIG_COUNT)                                                             \
  X(estimates_by_user, "estimates from the same user", SM__FIG_COUNT)          \
  X(estimates_by_global_mean, "estimates from the mean of all jobs",           \
    SM__FIG_COUNT)                                                             \
  X(estimates_by_default, "estimates by the default (nothing ended yet)",      \
    SM__FIG_COUNT)                                                             \
  /* Tiresias (preemptive.c). */                                               \
  X(demotions, "demotions to a lower queue", SM__FIG_COUNT)                    \
  /* The failure model (the engine) and the Failure Handler. */                \
  X(infra_failures, "infrastructure failures met", SM__FIG_COUNT)              \
  X(infra_resubmitted_by_users,                                                \
    "infrastructure failures resubmitted by their users", SM__FIG_COUNT)       \
  X(infra_restarts, "restarted from a checkpoint by the Failure Handler",      \
    SM__FIG_COUNT)                                                             \
  X(nodes_isolated, "nodes isolated by the Failure Handler", SM__FIG_COUNT)    \
  X(progress_redone_gpu_h, "GPU-hours of progress redone after faults",        \
    SM__FIG_COUNT)                                                             \
  /* Sia and Sia + SchedMate (sia.c). */                                       \
  X(sia_workload_files, NULL, SM__FIG_COUNT)                                   \
  X(sia_rounds, NULL, SM__FIG_COUNT)                                           \
  X(sia_restarts, NULL, SM__FIG_COUNT)                                         \
  X(sia_restarts_per_job, NULL, SM__FIG_COUNT)                                 \
  X(sia_bootstrap_restarts, NULL, SM__FIG_COUNT)                               \
  X(sia_suspensions, NULL, SM__FIG_COUNT)                                      \
  X(sia_moves, NULL, SM__FIG_COUNT)                                            \
  X(sia_solves_optimal, NULL, SM__FIG_COUNT)                                   \
  X(sia_solves_time_limit, NULL, SM__FIG_COUNT)                                \
  X(sia_solves_fallback, NULL, SM__FIG_COUNT)                                  \
  X(sia_solves_greedy, NULL, SM__FIG_COUNT)                                    \
  X(sia_solves_node_limit, NULL, SM__FIG_COUNT)                                \
  X(sia_solves_stopped_by_clock, NULL, SM__FIG_COUNT)                          \
  X(sia_solve_nodes_avg, NULL, SM__FIG_COUNT)                                  \
  X(sia_solve_nodes_max, NULL, SM__FIG_COUNT)                                  \
  X(sia_solve_ms_avg, NULL, SM__FIG_COUNT)                                     \
  X(sia_solve_ms_max, NULL, SM__FIG_COUNT)                                     \
  X(sia_solve_cpu_ms_avg, NULL, SM__FIG_COUNT)                                 \
  X(sia_solve_cpu_ms_max, NULL, SM__FIG_COUNT)                                 \
  X(sia_round_ms_max, NULL, SM__FIG_COUNT)                                     \
  X(sia_columns_max, NULL, SM__FIG_COUNT)                                      \
  X(sia_active_max, NULL, SM__FIG_COUNT)                                       \
  X(sia_profiling_gpu_h, NULL, SM__FIG_COUNT)                                  \
  X(sia_seeded_points, NULL, SM__FIG_COUNT)                                    \
  X(sia_profiling_gpu_h_saved, NULL, SM__FIG_COUNT)

enum { SM__FIG_COUNT = 0, SM__FIG_RATE = 1 };

/* Figure ids: SM__F_<field>. */
enum {
#define SM__F_ID(f, label, kind) SM__F_##f,
  SM__FIGS(SM__F_ID)
#undef SM__F_ID
      SM__F_NUM
};

#define SM__F_WORDS ((SM__F_NUM + 63) / 64)

/* The values of the figures of the table (0 until recorded). */
typedef struct sm__figs {
#define SM__F_FIELD(f, label, kind) double f;
  SM__FIGS(SM__F_FIELD)
#undef SM__F_FIELD
} sm__figs;

/* One figure in the order of first recording: an id of the table, or -1
 * with its own name and value. */
typedef struct sm__fig_rec {
  int id;       /* SM__F_*, or -1 */
  char *name;   /* a figure outside the table: its name (owned) */
  double value; /* ... and its value */
} sm__fig_rec;

/* The figures of one run. */
typedef struct sm__figures {
  sm__figs v;                /* values of the table's figures */
  uint64_t has[SM__F_WORDS]; /* which of them were recorded */
  sm__fig_rec *rec;          /* every figure, in order of first record */
  size_t n, cap;             /* used / allocated */
} sm__figures;

/* Adds delta to figure id (recorded at 0 first).  0 or SM_ENOMEM. */
int sm__figures_add(sm__figures *f, int id, double delta);
/* The same by name: a table figure, or one of its own. */
int sm__figures_add_name(sm__figures *f, const char *name, double delta);
void sm__figures_release(sm__figures *f);
/* Name and value of the i-th figure recorded; NULL past the end. */
const char *sm__figures_at(const sm__figures *f, size_t i, double *value);
/* 1 and *value when figure name was recorded, else 0. */
int sm__figures_get(const sm__figures *f, const char *name, double *value);
/* The report's label of figure name (its name when the table has none)
 * and whether it is a rate. */
const char *sm__figures_label(const char *name);
int sm__figures_is_rate(const char *name);

/* Adds d to figure field of the run s (an sm_sim *). */
#define SM__FIG_ADD(s, field, d) sm__figures_add((s)->figs, SM__F_##field, (d))
/* 1 when the figures f recorded figure field. */
#define SM__FIG_HAS(f, field)                                                  \
  ((int)(((f)->has[SM__F_##field / 64] >> (SM__F_##field % 64)) & 1))

#endif /* SM_SIM_FIGURES_INT_H */
