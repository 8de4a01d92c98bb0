/* sia_goodput_int.h - the Pollux-style goodput model of the Sia policies
 * (sia_goodput.c): the step-time model of data-parallel SGD, its bounded
 * fit to what a job reported, statistical efficiency and the batch-size
 * choice. */
#ifndef SM_SIM_SIA_GOODPUT_INT_H
#define SM_SIM_SIA_GOODPUT_INT_H

#define SM__SIA_NBSZ 50 /* batch sizes tried per configuration */

/* Step-time model of data-parallel SGD (Pollux):
 *   compute  T_c = alpha_c + beta_c * b            (per-GPU batch b)
 *   network  T_n = alpha_n + beta_n * max(r-2, 0)  across nodes
 *                  alpha_r + beta_r * max(r-2, 0)  inside one node
 *   step     T   = (T_c^gamma + T_n^gamma)^(1/gamma) + accum * T_c. */
enum {
  SM__SIA_AC = 0,
  SM__SIA_BC,
  SM__SIA_AN,
  SM__SIA_BN,
  SM__SIA_AR,
  SM__SIA_BR,
  SM__SIA_GAMMA,
  SM__SIA_NPARAM
};

typedef struct sm__sia_perf {
  double p[SM__SIA_NPARAM]; /* parameters, in the order above */
} sm__sia_perf;

/* One observation of a job on one GPU type. */
typedef struct sm__sia_obs {
  int nodes;    /* nodes */
  int replicas; /* GPUs */
  int bsz;      /* per-GPU (atomic) batch */
  double step;  /* step time, s */
  double sync;  /* of which synchronisation, s */
} sm__sia_obs;

/* What a fit did. */
typedef struct sm__sia_fitinfo {
  int iterations;   /* optimiser iterations */
  double objective; /* final objective */
  unsigned pinned;  /* bit i set: parameter i was held fixed */
  int used;         /* observations fitted (valid ones) */
  int fallback;     /* 1: no valid observation, the prior model returned */
} sm__sia_fitinfo;

/* How the fit runs. */
typedef struct sm__sia_fitopts {
  int logspace;   /* 1: the optimiser's variables are log p (default) */
  double bsz_tol; /* per-GPU batches within this ratio count as one */
} sm__sia_fitopts;

#define SM__SIA_BSZ_TOL 1.1 /* default bsz_tol */

/* Which parameters the observations identify (bit i set: parameter i is
 * not identified and is pinned).  The rule, from Pollux's fit:
 *   alpha_c  when every per-GPU batch lies within bsz_tol of the
 *            smallest (max / min < bsz_tol; with bsz_tol <= 1 only one
 *            distinct batch): pinned at half the mean compute time, so
 *            beta_c carries the other half;
 *   alpha_n, beta_n  without a multi-node point;
 *   alpha_r, beta_r  without a single-node point on several GPUs;
 *   beta_n (beta_r)  unless the multi-node (single-node multi-GPU)
 *            points have two distinct GPU counts, one of them above 2:
 *            with one count, a constant and a slope in the GPU count
 *            cannot be told apart;
 * the network terms are pinned at the lower bound (1e-8) as Pollux's and
 * Sia's fits do; without multi-node points the inter-node terms are
 * raised to 1.1 times the intra-node ones after the fit.  gamma stays in
 * [1, 10].  An observation is valid when nodes >= 1, replicas >= nodes,
 * bsz >= 1, the step time is finite and positive and the sync time
 * finite and >= 0 (a sync at or above the step counts the compute as
 * 1e-3 of the step); the others are left out. */
unsigned sm__sia_perf_unidentified(const sm__sia_obs *o, int n, double bsz_tol);

/* Fits the model to the valid ones of n observations with a bounded
 * quasi-Newton method (every parameter >= 1e-8, gamma in [1, 10]),
 * pinning what they cannot identify (above); in log space, batches
 * within SM__SIA_BSZ_TOL counted as one.  Without a valid observation
 * the result is the prior model (alpha_c 0.1 s, beta_c 0.01 s, no
 * network time, gamma 1) and info->fallback is set.  info may be NULL. */
void sm__sia_perf_fit(const sm__sia_obs *o, int n, sm__sia_perf *out,
                      sm__sia_fitinfo *info);
/* The same fit with its options: logspace 1, the logarithms of the six
 * positive parameters, run to convergence (what sm__sia_perf_fit does);
 * 0, the parameters themselves, stopped as L-BFGS-B with tol 1e-5
 * stops, each fresh direction starting with a step of unit length (how
 * Pollux's and Sia's fit moves). */
void sm__sia_perf_fit_opt(const sm__sia_obs *o, int n,
                          const sm__sia_fitopts *opt, sm__sia_perf *out,
                          sm__sia_fitinfo *info);
/* Predicted step time of one optimiser step (accum extra micro-steps). */
double sm__sia_perf_step(const sm__sia_perf *p, int nodes, int replicas,
                         double bsz, int accum);
/* Predicted compute time of one micro-step. */
double sm__sia_perf_compute(const sm__sia_perf *p, double bsz);

/* Statistical efficiency of global batch bsz given the gradient's
 * squared norm and variance measured at batch init_bsz: the progress per
 * sample relative to init_bsz (gradient noise scale). */
double sm__sia_efficiency(double sqr, double var, double init_bsz, double bsz);

/* A batch-size choice. */
typedef struct sm__sia_bsz {
  double goodput; /* samples/s x efficiency, 0 when nothing is valid */
  int atomic;     /* per-GPU micro-batch */
  int accum;      /* extra accumulation steps */
} sm__sia_bsz;

/* The best of SM__SIA_NBSZ global batch sizes (geometric, from
 * max(init_bsz, lo x replicas) to max_bsz; only max_bsz without tuning)
 * for a placement of `replicas` GPUs on `nodes` nodes, per-GPU batch in
 * [lo, hi], with gradient accumulation. */
sm__sia_bsz sm__sia_optimize(const sm__sia_perf *p, double sqr, double var,
                             double init_bsz, int nodes, int replicas,
                             double max_bsz, double lo, double hi, int tune);

#endif /* SM_SIM_SIA_GOODPUT_INT_H */
