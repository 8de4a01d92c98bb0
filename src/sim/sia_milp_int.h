/* sia_milp_int.h - one scheduling round's allocation problem of the Sia
 * policies (sia_milp.c): exact reductions, the MILP through COIN-OR CBC
 * with a time limit, and the greedy fallback. */
#ifndef SM_SIM_SIA_MILP_INT_H
#define SM_SIM_SIA_MILP_INT_H

#include "sim/sia_tables_int.h"

/* A candidate: job i on configuration c (type, GPUs) with a value
 * lambda - A^p > 0 to maximise. */
typedef struct sm__sia_cand {
  int job;      /* job index in the problem */
  int type;     /* GPU type */
  int gpus;     /* GPUs of the configuration */
  int config;   /* configuration index (the caller's) */
  double value; /* objective contribution when chosen */
} sm__sia_cand;

typedef struct sm__sia_problem {
  int njobs;                  /* jobs */
  int ntypes;                 /* GPU types */
  int cap[SM__SIA_MAX_TYPES]; /* free GPUs per type */
  sm__sia_cand *c;            /* candidates */
  int nc;                     /* their count */
} sm__sia_problem;

/* How a round was solved. */
enum {
  SM__SIA_SOLVED_EMPTY = 0, /* nothing to decide */
  SM__SIA_SOLVED_OPTIMAL,   /* CBC proved optimality (within the gap) */
  SM__SIA_SOLVED_LIMIT,     /* time limit: CBC's best solution */
  SM__SIA_SOLVED_FALLBACK,  /* greedy: CBC failed or found nothing */
  SM__SIA_SOLVED_GREEDY,    /* greedy by configuration (no CBC) */
  SM__SIA_SOLVED_NODES,     /* node limit: CBC's best solution */
  SM__SIA_SOLVED_N          /* count of the above */
};

typedef struct sm__sia_solve_opts {
  int use_cbc;         /* 1: CBC (needs SM_HAVE_CBC), 0: greedy */
  double time_limit;   /* seconds for CBC (wall clock) */
  double gap;          /* relative optimality gap */
  int reduce;          /* 1: apply the exact reductions first */
  const char *options; /* CBC parameters "name=value,...", or NULL */
  int max_nodes;       /* CBC's branch-and-bound nodes, 0: no limit */
} sm__sia_solve_opts;

typedef struct sm__sia_solve_info {
  int how;            /* SM__SIA_SOLVED_* */
  int cols;           /* candidates after the reductions */
  int nodes;          /* branch-and-bound nodes CBC explored */
  int by_time;        /* 1: CBC stopped at the wall-clock limit */
  double objective;   /* value of the solution */
  double seconds;     /* wall time */
  double cpu_seconds; /* CPU time of the calling thread */
  char why[96];       /* reason of a fallback, "" otherwise */
} sm__sia_solve_info;

/* Chooses at most one candidate per job within the capacities,
 * maximising the total value.  choice[j] gets the index (into p->c) of
 * job j's candidate or -1.  Returns 0 or SM_ENOMEM. */
int sm__sia_solve(const sm__sia_problem *p, const sm__sia_solve_opts *o,
                  int *choice, sm__sia_solve_info *info);
/* The exact reductions alone (for tests): writes the indices of the
 * candidates kept into keep, returns their count (or < 0 on ENOMEM). */
int sm__sia_reduce(const sm__sia_problem *p, int *keep);
/* 1 when the library was built with CBC and CBC loads (cbc_load.c). */
int sm__sia_have_cbc(void);

#endif /* SM_SIM_SIA_MILP_INT_H */
