/* sia_goodput.c - the goodput model Sia plans with (from Pollux, OSDI'21):
 *
 *   goodput(nodes, replicas, batch) = throughput x statistical efficiency
 *
 * Throughput comes from a step-time model with a compute term per
 * micro-step and a network term per optimiser step, combined by a
 * gamma-norm that expresses how well the two overlap:
 *
 *   T_c = alpha_c + beta_c b
 *   T_n = alpha_n + beta_n max(r - 2, 0)   (replicas on several nodes)
 *         alpha_r + beta_r max(r - 2, 0)   (replicas on one node)
 *   T   = accum T_c + (T_c^gamma + T_n^gamma)^(1/gamma)
 *
 * Statistical efficiency comes from the gradient noise scale: with the
 * gradient's squared norm |g|^2 and variance s^2 measured at the initial
 * batch B0, a step at batch B = k B0 makes (s^2 + |g|^2) / (s^2/k + |g|^2)
 * times the progress of one step at B0.
 *
 * The step-time model is fitted to what a job has reported (one point per
 * distinct nodes, replicas and per-GPU batch) by minimising the RMS log
 * error of the compute and step times, with Pollux's two regularisers
 * (towards gamma = 1 and towards small retrogression slopes).  The fit is
 * a bounded quasi-Newton method (BFGS on the free parameters, projected
 * onto the bounds, active set reset when it changes), by default in log
 * space for the six positive parameters, run to convergence.  Pollux's
 * and Sia's fit (scipy's L-BFGS-B, tol 1e-5) works in the parameters
 * themselves; sm__sia_perf_fit_opt does that too (sia.fit=linear).
 *
 * What the points cannot identify is pinned first, by Pollux's rule
 * (sm__sia_perf_unidentified states it): a job whose batch tuning keeps
 * every per-GPU batch within 10 % cannot separate alpha_c from beta_c
 * (a valley of equally good fits whose log-space end has compute time
 * independent of the batch, so more GPUs look useless), so alpha_c is
 * held at half the mean compute time; network terms without the points
 * that carry them are held at the lower bound.  As points arrive the
 * rule frees them again. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_util.h"
#include "sim/sia_goodput_int.h"

#define LOWER 1e-8
#define GAMMA_MAX 10.0
#define MAX_ITER 400
#define EPS 1e-8

/* ==== The model ==== */

static double network(const double *p, int nodes, int replicas) {
  double k = SM_MAX((double)replicas - 2.0, 1e-8);
  if (nodes > 1)
    return p[SM__SIA_AN] + p[SM__SIA_BN] * k;
  if (replicas > 1)
    return p[SM__SIA_AR] + p[SM__SIA_BR] * k;
  return 1e-8 + 1e-8 * k;
}

/* log((a^g + n^g)^(1/g)) and the weights a^g / (a^g + n^g), n^g / (...). */
static double log_optim(double a, double n, double g, double *wa, double *wn) {
  double la = g * log(a), ln = g * log(n), m = SM_MAX(la, ln);
  double s = exp(la - m) + exp(ln - m), L = (m + log(s)) / g;
  if (wa)
    *wa = exp(la - m) / s;
  if (wn)
    *wn = exp(ln - m) / s;
  return L;
}

double sm__sia_perf_compute(const sm__sia_perf *p, double bsz) {
  return p->p[SM__SIA_AC] + p->p[SM__SIA_BC] * bsz;
}

double sm__sia_perf_step(const sm__sia_perf *p, int nodes, int replicas,
                         double bsz, int accum) {
  double a = sm__sia_perf_compute(p, bsz);
  double n = network(p->p, nodes, replicas);
  return accum * a + exp(log_optim(a, n, p->p[SM__SIA_GAMMA], NULL, NULL));
}

double sm__sia_efficiency(double sqr, double var, double init_bsz, double bsz) {
  double scale = bsz / init_bsz, denom = var / scale + sqr;
  double gain = denom > 0 ? (var + sqr) / denom : 1.0;
  return gain / scale;
}

sm__sia_bsz sm__sia_optimize(const sm__sia_perf *p, double sqr, double var,
                             double init_bsz, int nodes, int replicas,
                             double max_bsz, double lo, double hi, int tune) {
  sm__sia_bsz best = {0, 0, 0};
  double bmin = tune ? SM_MAX(init_bsz, lo * replicas) : max_bsz;
  double g = p->p[SM__SIA_GAMMA], ig = 1.0 / g;
  double ng = pow(network(p->p, nodes, replicas), g);
  double step = pow(max_bsz / bmin, 1.0 / (SM__SIA_NBSZ - 1)), b = bmin;

  if (replicas < 1 || nodes < 1 || !(max_bsz > 0) || !(hi >= lo))
    return best;
  /* The network term is the same for every batch: one pow per batch for
   * the compute term, one for the norm. */
  for (int i = 0; i < SM__SIA_NBSZ; i++, b *= step) {
    double local = b / replicas, a, total, batch, good;
    int accum = (int)ceil(local / hi - EPS) - 1, atomic;
    if (accum < 0)
      accum = 0;
    if (replicas == 1 && local > init_bsz + EPS && accum < 1)
      accum = 1;
    atomic = (int)ceil(local / (accum + 1) - EPS);
    if (atomic < lo || atomic > hi)
      continue;
    a = p->p[SM__SIA_AC] + p->p[SM__SIA_BC] * atomic;
    total = accum * a + pow(pow(a, g) + ng, ig);
    batch = (double)replicas * atomic * (accum + 1);
    good = batch / total * sm__sia_efficiency(sqr, var, init_bsz, batch);
    if (good > best.goodput) {
      best.goodput = good;
      best.atomic = atomic;
      best.accum = accum;
    }
  }
  return best;
}

/* ==== The fit ==== */

typedef struct fitdata {
  const sm__sia_obs *o; /* observations */
  int n;                /* their count */
  double *lc, *ls;      /* log compute time, log step time */
  int logspace;         /* the optimiser's variables: log p, else p */
} fitdata;

/* Objective and its gradient with respect to the parameters p. */
static double objective(const fitdata *d, const double *p, double *gp) {
  double s1 = 0, s2 = 0, e1, e2, f;
  double g = p[SM__SIA_GAMMA];
  int n = d->n;

  for (int i = 0; i < n; i++) {
    const sm__sia_obs *o = &d->o[i];
    double a = p[SM__SIA_AC] + p[SM__SIA_BC] * o->bsz;
    double nt = network(p, o->nodes, o->replicas);
    double L = log_optim(a, nt, g, NULL, NULL);
    double r1 = log(a) - d->lc[i], r2 = L - d->ls[i];
    s1 += r1 * r1;
    s2 += r2 * r2;
  }
  e1 = sqrt(s1 / n);
  e2 = sqrt(s2 / n);
  f = e1 + e2 + 1e-3 * (g - 1) * (g - 1) +
      1e-2 * (pow(p[SM__SIA_BN] / p[SM__SIA_AN], 2) +
              pow(p[SM__SIA_BR] / p[SM__SIA_AR], 2));
  if (gp == NULL)
    return f;
  memset(gp, 0, SM__SIA_NPARAM * sizeof(double));
  for (int i = 0; i < n; i++) {
    const sm__sia_obs *o = &d->o[i];
    double a = p[SM__SIA_AC] + p[SM__SIA_BC] * o->bsz;
    double nt = network(p, o->nodes, o->replicas), wa, wn;
    double L = log_optim(a, nt, g, &wa, &wn);
    double dA = 0, dN, k = SM_MAX((double)o->replicas - 2.0, 1e-8);
    if (e1 > 0)
      dA += (log(a) - d->lc[i]) / (n * e1 * a);
    if (e2 > 0) {
      double dL = (L - d->ls[i]) / (n * e2);
      dA += dL * wa / a;
      dN = dL * wn / nt;
      gp[SM__SIA_GAMMA] += dL * (wa * log(a) + wn * log(nt) - L) / g;
      if (o->nodes > 1) {
        gp[SM__SIA_AN] += dN;
        gp[SM__SIA_BN] += dN * k;
      } else if (o->replicas > 1) {
        gp[SM__SIA_AR] += dN;
        gp[SM__SIA_BR] += dN * k;
      }
    }
    gp[SM__SIA_AC] += dA;
    gp[SM__SIA_BC] += dA * o->bsz;
  }
  gp[SM__SIA_GAMMA] += 2e-3 * (g - 1);
  gp[SM__SIA_BN] += 2e-2 * p[SM__SIA_BN] / pow(p[SM__SIA_AN], 2);
  gp[SM__SIA_AN] -= 2e-2 * pow(p[SM__SIA_BN], 2) / pow(p[SM__SIA_AN], 3);
  gp[SM__SIA_BR] += 2e-2 * p[SM__SIA_BR] / pow(p[SM__SIA_AR], 2);
  gp[SM__SIA_AR] -= 2e-2 * pow(p[SM__SIA_BR], 2) / pow(p[SM__SIA_AR], 3);
  return f;
}

/* The optimiser works on x: the parameters themselves (as Pollux's and
 * Sia's L-BFGS-B does), or log p for the six positive ones; gamma is
 * itself either way; bounds lo[] .. hi[]. */
static void to_p(int logspace, const double *x, double *p) {
  for (int k = 0; k < SM__SIA_GAMMA; k++)
    p[k] = logspace ? exp(x[k]) : x[k];
  p[SM__SIA_GAMMA] = x[SM__SIA_GAMMA];
}

static double fx(const fitdata *d, const double *x, double *gx) {
  double p[SM__SIA_NPARAM], gp[SM__SIA_NPARAM], f;

  to_p(d->logspace, x, p);
  f = objective(d, p, gx ? gp : NULL);
  if (gx) {
    for (int k = 0; k < SM__SIA_GAMMA; k++)
      gx[k] = d->logspace ? gp[k] * p[k] : gp[k];
    gx[SM__SIA_GAMMA] = gp[SM__SIA_GAMMA];
  }
  return f;
}

/* Projected BFGS over the free variables (free[k] = 1).  In the
 * parameters themselves it stops as L-BFGS-B with tol 1e-5 does
 * (relative decrease or projected gradient below 1e-5) and starts each
 * fresh direction with a step of unit length; in log space it runs to
 * convergence, the first step within a few log units. */
static int minimise(const fitdata *d, double *x, const int *free,
                    const double *lo, const double *hi, double *fout) {
  enum { N = SM__SIA_NPARAM };
  double H[N][N], g[N], f, gn[N], xn[N], dir[N];
  double ftol = d->logspace ? 1e-12 : 1e-5, pgtol = d->logspace ? 1e-9 : 1e-5;
  int act[N], it, fresh = 1;

  memset(H, 0, sizeof(H));
  for (int i = 0; i < N; i++)
    H[i][i] = 1;
  memset(act, 0, sizeof(act));
  f = fx(d, x, g);
  for (it = 0; it < MAX_ITER; it++) {
    int changed = 0, ok = 0;
    double slope = 0, step = 1, fn = f, pg = 0;
    for (int i = 0; i < N; i++) {
      int a = !free[i] || (x[i] <= lo[i] + 1e-12 && g[i] > 0) ||
              (x[i] >= hi[i] - 1e-12 && g[i] < 0);
      if (a != act[i])
        changed = 1;
      act[i] = a;
      if (!a)
        pg = SM_MAX(pg, fabs(g[i]));
    }
    if (pg < pgtol)
      break;
    if (changed) {
      memset(H, 0, sizeof(H));
      for (int i = 0; i < N; i++)
        H[i][i] = 1;
      fresh = 1;
    }
    for (int i = 0; i < N; i++) {
      dir[i] = 0;
      if (act[i])
        continue;
      for (int j = 0; j < N; j++)
        if (!act[j])
          dir[i] -= H[i][j] * g[j];
      slope += dir[i] * g[i];
    }
    if (!(slope < 0)) {
      memset(H, 0, sizeof(H));
      slope = 0;
      fresh = 1;
      for (int i = 0; i < N; i++) {
        H[i][i] = 1;
        dir[i] = act[i] ? 0 : -g[i];
        slope += dir[i] * g[i];
      }
    }
    if (d->logspace) {
      /* Keep the first trial step within a few units of log space. */
      double mx = 0;
      for (int i = 0; i < N; i++)
        mx = SM_MAX(mx, fabs(dir[i]));
      if (mx > 4)
        step = 4 / mx;
    } else if (fresh) {
      double nd = 0;
      for (int i = 0; i < N; i++)
        nd += dir[i] * dir[i];
      nd = sqrt(nd);
      if (nd > 1)
        step = 1 / nd;
    }
    fresh = 0;
    for (int ls = 0; ls < 60; ls++) {
      double dec = 0;
      for (int i = 0; i < N; i++) {
        xn[i] = x[i] + step * dir[i];
        if (xn[i] < lo[i])
          xn[i] = lo[i];
        if (xn[i] > hi[i])
          xn[i] = hi[i];
        dec += g[i] * (xn[i] - x[i]);
      }
      fn = fx(d, xn, NULL);
      if (isfinite(fn) && fn <= f + 1e-4 * dec) {
        ok = 1;
        break;
      }
      step *= 0.5;
    }
    if (!ok)
      break;
    fx(d, xn, gn);
    {
      double s[N], y[N], sy = 0, Hy[N], yHy = 0;
      for (int i = 0; i < N; i++) {
        s[i] = act[i] ? 0 : xn[i] - x[i];
        y[i] = act[i] ? 0 : gn[i] - g[i];
        sy += s[i] * y[i];
      }
      if (sy > 1e-14) {
        for (int i = 0; i < N; i++) {
          Hy[i] = 0;
          for (int j = 0; j < N; j++)
            Hy[i] += H[i][j] * y[j];
          yHy += y[i] * Hy[i];
        }
        for (int i = 0; i < N; i++)
          for (int j = 0; j < N; j++)
            H[i][j] += (sy + yHy) * s[i] * s[j] / (sy * sy) -
                       (Hy[i] * s[j] + s[i] * Hy[j]) / sy;
      }
    }
    memcpy(x, xn, sizeof(xn));
    memcpy(g, gn, sizeof(gn));
    if (f - fn <= ftol * SM_MAX(1.0, SM_MAX(fabs(f), fabs(fn)))) {
      f = fn;
      it++;
      break;
    }
    f = fn;
  }
  *fout = f;
  return it;
}

/* ==== What the points identify ==== */

static int valid_obs(const sm__sia_obs *o) {
  return o->nodes >= 1 && o->replicas >= o->nodes && o->bsz >= 1 &&
         isfinite(o->step) && o->step > 0 && isfinite(o->sync) && o->sync >= 0;
}

/* Distinct GPU counts of a group of points, and whether one is above 2:
 * what a slope in the GPU count needs besides a constant. */
typedef struct repset {
  int first, distinct, above2;
} repset;

static void repset_add(repset *r, int replicas) {
  if (r->distinct == 0)
    r->first = replicas;
  if (r->distinct == 0 || (r->distinct == 1 && replicas != r->first))
    r->distinct++;
  r->above2 |= replicas > 2;
}

static int repset_slope(const repset *r) {
  return r->distinct >= 2 && r->above2;
}

unsigned sm__sia_perf_unidentified(const sm__sia_obs *o, int n,
                                   double bsz_tol) {
  repset inter = {0, 0, 0}, intra = {0, 0, 0};
  int bmin = 0, bmax = 0, any = 0;
  unsigned pin = 0;

  for (int i = 0; i < n; i++) {
    if (!valid_obs(&o[i]))
      continue;
    if (!any || o[i].bsz < bmin)
      bmin = o[i].bsz;
    if (!any || o[i].bsz > bmax)
      bmax = o[i].bsz;
    any = 1;
    if (o[i].nodes > 1)
      repset_add(&inter, o[i].replicas);
    else if (o[i].replicas > 1)
      repset_add(&intra, o[i].replicas);
  }
  if (!any || bmax == bmin || (double)bmax < bsz_tol * bmin)
    pin |= 1u << SM__SIA_AC;
  if (inter.distinct == 0)
    pin |= 1u << SM__SIA_AN;
  if (!repset_slope(&inter))
    pin |= 1u << SM__SIA_BN;
  if (intra.distinct == 0)
    pin |= 1u << SM__SIA_AR;
  if (!repset_slope(&intra))
    pin |= 1u << SM__SIA_BR;
  return pin;
}

/* ==== The fit ==== */

void sm__sia_perf_fit(const sm__sia_obs *o, int n, sm__sia_perf *out,
                      sm__sia_fitinfo *info) {
  sm__sia_fitopts opt = {1, SM__SIA_BSZ_TOL};
  sm__sia_perf_fit_opt(o, n, &opt, out, info);
}

/* The valid observations, their log compute and log step times. */
typedef struct fitbuf {
  sm__sia_obs ob[64], *o;
  double lcb[64], lsb[64], *lc, *ls;
  int m;
} fitbuf;

static void fitbuf_fill(fitbuf *b, const sm__sia_obs *o, int n) {
  int cap = 64;
  b->o = b->ob;
  b->lc = b->lcb;
  b->ls = b->lsb;
  b->m = 0;
  if (n > 64) {
    sm__sia_obs *po = sm_malloc((size_t)n * sizeof(*po));
    double *lc = sm_malloc((size_t)n * sizeof(double));
    double *ls = sm_malloc((size_t)n * sizeof(double));
    if (po != NULL && lc != NULL && ls != NULL) {
      b->o = po;
      b->lc = lc;
      b->ls = ls;
      cap = n;
    } else {
      /* Out of memory: fit the first 64 valid points. */
      sm_free(po);
      sm_free(lc);
      sm_free(ls);
    }
  }
  for (int i = 0; i < n && b->m < cap; i++) {
    double c;
    if (!valid_obs(&o[i]))
      continue;
    /* A compute time of zero or less cannot be logged: count it as a
     * tiny share of the step. */
    c = o[i].step - o[i].sync;
    b->o[b->m] = o[i];
    b->lc[b->m] = log(c > 0 ? c : o[i].step * 1e-3);
    b->ls[b->m] = log(o[i].step);
    b->m++;
  }
}

static void fitbuf_free(fitbuf *b) {
  if (b->o != b->ob) {
    sm_free(b->o);
    sm_free(b->lc);
    sm_free(b->ls);
  }
}

void sm__sia_perf_fit_opt(const sm__sia_obs *o, int n,
                          const sm__sia_fitopts *opt, sm__sia_perf *out,
                          sm__sia_fitinfo *info) {
  double p[SM__SIA_NPARAM] = {1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3};
  double x[SM__SIA_NPARAM], lo[SM__SIA_NPARAM], hi[SM__SIA_NPARAM];
  double f = 0, csum = 0;
  int free[SM__SIA_NPARAM], iters = 0, logspace = opt->logspace;
  unsigned pinned;
  fitbuf b;
  fitdata d;

  fitbuf_fill(&b, o, n > 0 ? n : 0);
  pinned = sm__sia_perf_unidentified(b.o, b.m, opt->bsz_tol);
  for (int i = 0; i < b.m; i++)
    csum += exp(b.lc[i]);
  if (b.m > 0 && (pinned & (1u << SM__SIA_AC)))
    p[SM__SIA_AC] = SM_MAX(csum / b.m / 2, LOWER);
  for (int k = SM__SIA_AN; k < SM__SIA_GAMMA; k++)
    if (pinned & (1u << k))
      p[k] = LOWER;
  if (b.m == 0) {
    /* Nothing to fit: the prior model, flagged. */
    pinned = (1u << SM__SIA_NPARAM) - 1;
    p[SM__SIA_GAMMA] = 1.0;
  }
  for (int k = 0; k < SM__SIA_NPARAM; k++)
    free[k] = !(pinned & (1u << k));
  for (int k = 0; k < SM__SIA_GAMMA; k++) {
    x[k] = logspace ? log(p[k]) : p[k];
    lo[k] = logspace ? log(LOWER) : LOWER;
    hi[k] = INFINITY;
  }
  x[SM__SIA_GAMMA] = p[SM__SIA_GAMMA];
  lo[SM__SIA_GAMMA] = 1.0;
  hi[SM__SIA_GAMMA] = GAMMA_MAX;
  if (b.m > 0) {
    d.o = b.o;
    d.n = b.m;
    d.lc = b.lc;
    d.ls = b.ls;
    d.logspace = logspace;
    iters = minimise(&d, x, free, lo, hi, &f);
    to_p(logspace, x, p);
  }
  if (pinned & (1u << SM__SIA_AN)) {
    /* Prior: the network across nodes is no faster than inside one. */
    p[SM__SIA_AN] = SM_MAX(p[SM__SIA_AN], p[SM__SIA_AR] * 1.1);
    p[SM__SIA_BN] = SM_MAX(p[SM__SIA_BN], p[SM__SIA_BR] * 1.1);
  }
  memcpy(out->p, p, sizeof(p));
  fitbuf_free(&b);
  if (info != NULL) {
    info->iterations = iters;
    info->objective = f;
    info->pinned = pinned;
    info->used = b.m;
    info->fallback = b.m == 0;
  }
}
