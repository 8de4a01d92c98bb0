/* params_int.h - the parameters of a run as one typed struct (params.c).
 *
 * A configuration carries its "key=value" settings as given (the --param
 * interface, sm_sim_config_param / _set); sm__params_parse reads them
 * once, at the start of a run, into sm__params through the table below:
 * one entry per parameter the engine or a built-in policy reads, with its
 * type and default.  The engine and the policies read the typed fields
 * with SM__PARAM, which also records that the run read the parameter:
 * a result lists a setting under "params" when its run read it and under
 * "params_ignored" otherwise, and a sweep reruns only the runs that read
 * the swept key.  Keys outside the table (a policy registered by a
 * program, a test's) go through sm_sim_param_str/_num, which record them
 * too.
 *
 * A number that is not one counts as absent (the default is used), except
 * where a policy checks the text (sm__params_num_in: Sia's parameters). */
#ifndef SM_SIM_PARAMS_INT_H
#define SM_SIM_PARAMS_INT_H

#include <stdint.h>

#include "sim/sim_int.h"

/* Every parameter: N(field, key, default) for a number (double),
 * S(field, key) for text (NULL when not given). */
#define SM__PARAMS(N, S)                                                       \
  /* The failure model (the engine, every policy). */                          \
  S(fail_model, "fail.model")                   /* trace | resubmit */         \
  N(fail_infra_share, "fail.infra_share", 0.35) /* failed jobs with an         \
                                                   infrastructure cause */     \
  N(fail_rest, "fail.rest", 1.0)                /* work still needed after a   \
                                                   fault, x the run time */    \
  N(fail_resubmit_s, "fail.resubmit_s", 600)    /* users resubmit after */     \
  N(ckpt_interval_s, "ckpt.interval_s", 1800)   /* checkpoint interval */      \
  /* The profiling partition of the profiler policies (Lucid). */              \
  S(profiler_vc, "profiler.vc")          /* its name ("profiler") */           \
  S(profiler_from, "profiler.from")      /* donor VC (the largest) */          \
  N(profiler_nodes, "profiler.nodes", 2) /* nodes, 0: none */                  \
  /* The queue policies and their estimators. */                               \
  N(backfill, "backfill", 0) /* 1: skip a blocked head */                      \
  S(estimator, "estimator")  /* QSSF's (history) */                            \
  N(estimator_default_s, "estimator.default_s", 3600) /* nothing known */      \
  N(srtf_interval, "srtf.interval", 0)          /* SRTF's rounds, 0: none */   \
  S(tiresias_thresholds, "tiresias.thresholds") /* GPU-s per level */          \
  N(tiresias_interval, "tiresias.interval", 60) /* Tiresias' rounds */         \
  /* SchedMate's facts and the simulated world (facts.c, colocate.c). */       \
  S(facts, "facts")                                /* history | calibrated |   \
                                                      oracle */                \
  S(workloads, "workloads")                        /* workload catalogue */    \
  N(facts_top_k, "facts.top_k", 3)                 /* matches averaged */      \
  N(facts_threshold, "facts.threshold", 0.95)      /* minimum cosine */        \
  N(calibrated_hit, "calibrated.hit", 0.73)        /* calibrated hit rate */   \
  N(calibrated_within, "calibrated.within", 0.857) /* hits within 2x */        \
  S(lucid_tables, "lucid.tables")                  /* DIR or builtin */        \
  S(lucid_profiles, "lucid.profiles")              /* single_data.csv */       \
  S(lucid_colocate, "lucid.colocate")              /* colocate_info.csv */     \
  /* Lucid and Lucid + SchedMate (lucid.c). */                                 \
  N(lucid_profile_s, "lucid.profile_s", 100) /* profiling time limit */        \
  N(lucid_profile_max_gpus, "lucid.profile_max_gpus", 8) /* largest job */     \
  N(lucid_mem_mib, "lucid.mem_mib", 24576)   /* memory of a shared set */      \
  N(lucid_share, "lucid.share", 1)           /* 0: never pack */               \
  N(lucid_naive_pass, "lucid.naive_pass", 0) /* 1: plain passes */             \
  N(lucid_evict_threshold, "lucid.evict_threshold", 0.5) /* TP share */        \
  N(lucid_track_steps, "lucid.track_steps", 30)          /* Tracker steps */   \
  N(lucid_track_min_s, "lucid.track_min_s", 60)          /* and seconds */     \
  S(lucid_estimator, "lucid.estimator")       /* Lucid's estimator */          \
  N(lucid_untracked, "lucid.untracked", 0.15) /* logs not trackable */         \
  /* SchedMate-SJF and the Failure Handler (sjf_schedmate.c). */               \
  S(sjf_fallback, "sjf.fallback")       /* history | fifo */                   \
  S(sjf_key, "sjf.key")                 /* duration | service */               \
  N(fh_diagnose_s, "fh.diagnose_s", 60) /* diagnosis and restart */            \
  N(fh_isolate_s, "fh.isolate_s", 3600) /* node isolation */                   \
  N(fh_recall, "fh.recall", 1.0)        /* faults recognised */                \
  /* Sia and Sia + SchedMate (sia*.c; ranges checked there). */                \
  N(sia_interval, "sia.interval", 60)    /* round length, s */                 \
  N(sia_p, "sia.p", -0.5)                /* fairness power */                  \
  N(sia_lambda, "sia.lambda", 1.1)       /* cost of no allocation */           \
  N(sia_growth, "sia.growth", 2)         /* growth cap factor */               \
  N(sia_time_limit, "sia.time_limit", 1) /* CBC's, s */                        \
  N(sia_gap, "sia.gap", 1e-4)            /* CBC's relative gap */              \
  N(sia_max_nodes, "sia.max_nodes", 0)   /* CBC's node limit, 0: none */       \
  N(sia_match_threshold, "sia.match_threshold", 0.95) /* cosine */             \
  N(sia_max_gpus, "sia.max_gpus", 64)      /* largest configuration */         \
  N(sia_match_top_k, "sia.match_top_k", 3) /* matches merged */                \
  N(sia_calibrate, "sia.calibrate", 1)     /* 1: the slowdown applies */       \
  N(sia_reduce, "sia.reduce", 1)           /* 1: exact reductions */           \
  S(sia_solver, "sia.solver")              /* cbc | greedy */                  \
  S(sia_cbc_options, "sia.cbc_options")    /* CBC's name=value,... */          \
  S(sia_match, "sia.match")                /* application[+batch] */           \
  S(sia_exec_batch, "sia.exec_batch")      /* application | job */             \
  S(sia_profile_s, "sia.profile_s")        /* S, or TYPE:S,... */              \
  S(sia_type_map, "sia.type_map")          /* NAME:SUFFIX,... */               \
  S(sia_fit, "sia.fit")                    /* log | linear */                  \
  S(sia_tables, "sia.tables")              /* table directory */

/* Parameter ids: SM__P_<field>. */
enum {
#define SM__P_ID_N(f, k, d) SM__P_##f,
#define SM__P_ID_S(f, k) SM__P_##f,
  SM__PARAMS(SM__P_ID_N, SM__P_ID_S)
#undef SM__P_ID_N
#undef SM__P_ID_S
      SM__P_COUNT
};

#define SM__P_WORDS ((SM__P_COUNT + 63) / 64)

/* The typed parameters of one run. */
typedef struct sm__params {
#define SM__P_FIELD_N(f, k, d) double f;
#define SM__P_FIELD_S(f, k) const char *f;
  SM__PARAMS(SM__P_FIELD_N, SM__P_FIELD_S)
#undef SM__P_FIELD_N
#undef SM__P_FIELD_S
  const char *text[SM__P_COUNT];  /* the last setting as given, or NULL */
  unsigned char bad[SM__P_COUNT]; /* 1: a number's text is not a number */
  uint64_t read[SM__P_WORDS];     /* parameters the run read */
  sm__notes ext_read;             /* keys outside the table it read */
} sm__params;

/* Fills p from the settings of cfg (borrowed: p points into them).  The
 * defaults first, then every setting in order (the last of a key wins). */
void sm__params_parse(sm__params *p, const sm_sim_config *cfg);
/* Copies every string p points to into arena, so that p outlives the
 * configuration it was parsed from.  0 or SM_ENOMEM. */
int sm__params_own(sm__params *p, sm_arena *arena);
void sm__params_release(sm__params *p);
/* The id of key (n bytes), or -1 when the table has no such parameter. */
int sm__params_find(const char *key, size_t n);
/* The key of parameter id. */
const char *sm__params_key(int id);

/* Records that the run read parameter id. */
static inline void sm__params_mark(sm__params *p, int id) {
  p->read[id / 64] |= (uint64_t)1 << (id % 64);
}
/* 1 when the run read parameter id. */
static inline int sm__params_was_read(const sm__params *p, int id) {
  return (p->read[id / 64] >> (id % 64)) & 1;
}
/* 1 when the run read key (a table key or another). */
int sm__params_read_key(const sm__params *p, const char *key, size_t n);

/* The typed value of parameter field of the run s (an sm_sim *), marked
 * as read. */
#define SM__PARAM(s, field)                                                    \
  (sm__params_mark((s)->par, SM__P_##field), (s)->par->field)

/* The number parameter id of s, checked: *out gets it (the default when
 * absent); SM_EINVAL with "--param KEY=TEXT: expected a number in
 * [lo, hi]" when it is given and not a number in that range. */
int sm__params_num_in(sm_sim *s, int id, double lo, double hi, double *out,
                      sm_err *err);

#endif /* SM_SIM_PARAMS_INT_H */
