/* sia_round_int.h - one scheduling round of Sia (sia_round.c): the
 * goodput matrix of the active jobs, the allocation problem, placement
 * and its application; and a workload file run round by round. */
#ifndef SM_SIM_SIA_ROUND_INT_H
#define SM_SIM_SIA_ROUND_INT_H

#include "sim/sia_job_int.h"

/* What one round decides for one job (or one profiling GPU). */
typedef struct sm__sia_want {
  sm__sia_job *x;           /* the job */
  int prof;                 /* 1: a GPU for profiling, not an allocation */
  int type;                 /* GPU type */
  int gpus;                 /* GPUs */
  int cfg;                  /* global configuration index, -1 for profiling */
  int keep;                 /* 1: same type and GPUs as now (may keep nodes) */
  int nh;                   /* nodes placed */
  int hn[SM__SIA_HELD_MAX]; /* their indices */
  int hg[SM__SIA_HELD_MAX]; /* GPUs on each */
} sm__sia_want;

/* Scratch of one round, reused. */
typedef struct sm__sia_scratch {
  sm__sia_job **act; /* active jobs */
  sm__sia_want *v;   /* decisions */
  int *pj;           /* problem job -> act index */
  int *choice;       /* solver output per problem job */
  int *bind;         /* growth cap binding, per act index */
  sm__sia_cand *c;   /* candidates */
  size_t cap_act, cap_pj, cap_ch, cap_bind, cap_v, cap_c; /* capacities */
} sm__sia_scratch;

/* The times of one round (seconds) and what it decided, for the
 * benchmark (sia_bench.c). */
typedef struct sm__sia_bench {
  double matrix_s;    /* goodput matrix, cold */
  double solve_s;     /* the allocation problem, reductions included */
  double solve_cpu_s; /* the same in CPU time */
  double place_s;     /* placement */
  double warm_s;      /* the next round, models unchanged */
  int cols;           /* candidates after the reductions */
  int how;            /* SM__SIA_SOLVED_* */
  int allocated;      /* jobs given GPUs */
} sm__sia_bench;

void sm__sia_scratch_release(sm__sia_scratch *sc);
/* One round of workload file w at time now: *busy gets the GPUs given
 * out, *pending the active jobs left without; bench (or NULL) the times.
 * 0, SM_ENOMEM, or SM_ECORRUPT when the placement did not fit. */
int sm__sia_round(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                  double now, int *busy, int *pending, sm__sia_bench *bench);
/* Runs workload file w to the end of its last job. */
int sm__sia_run_world(sm__sia_run *S, sm__sia_world *w, sm__sia_scratch *sc,
                      sm_err *err);

#endif /* SM_SIM_SIA_ROUND_INT_H */
