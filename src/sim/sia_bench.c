/* sia_bench.c - one Sia scheduling round at scale for bench/sia: a
 * thousand active jobs with observations on every type, a cold round and
 * a warm one, timed (sia_bench_int.h). */
#include <math.h>
#include <string.h>

#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sia_bench_int.h"
#include "sim/sia_int.h"

/* ==== Benchmark round ==== */

int sm__sia_bench_round(const char *tables, const sm_sim_cluster *c, int njobs,
                        const char *solver, double time_limit, uint64_t seed,
                        sm__sia_bench *out, sm_err *err, int reduce) {
  static const char *const apps[] = {"cifar10", "deepspeech2", "bert",
                                     "yolov3",  "imagenet",    "toyconv",
                                     "toylm"};
  const sm__sia_app *ap[SM_ARRAY_LEN(apps)];
  sm_sim s;
  sm__sia_run S;
  sm__sia_scratch sc;
  sm__sia_world w;
  sm_rng rng;
  sm__params par;
  sm__figures figs;
  char limit[32];
  int rc, busy, pend, napps = 0;

  memset(&s, 0, sizeof(s));
  memset(&S, 0, sizeof(S));
  memset(&sc, 0, sizeof(sc));
  memset(&w, 0, sizeof(w));
  memset(out, 0, sizeof(*out));
  sm_sim_config_init(&s.cfg);
  snprintf(limit, sizeof(limit), "%g", time_limit);
  sm_sim_config_set(&s.cfg, "sia.solver", solver);
  sm_sim_config_set(&s.cfg, "sia.time_limit", limit);
  sm_sim_config_set(&s.cfg, "sia.tables", tables);
  sm_sim_config_set(&s.cfg, "sia.reduce", reduce ? "1" : "0");
  sm__params_parse(&par, &s.cfg);
  s.par = &par;
  memset(&figs, 0, sizeof(figs));
  s.figs = &figs;
  s.cl = c;
  s.pol = &sm__policy_sia;
  sm_rng_seed(&rng, seed);
  S.s = &s;
  S.cl = c;
  if ((rc = sm__sia_prepare(&S, err)) != 0)
    goto out;
  for (size_t i = 0; i < SM_ARRAY_LEN(apps); i++) {
    sm_err e2 = {0};
    if (sm__sia_app_get(S.tab, apps[i], &ap[napps], &e2) == 0)
      napps++;
  }
  if (napps == 0) {
    rc = sm_err_set(err, SM_ENOENT, "sia bench: no usable application in %s",
                    tables);
    goto out;
  }
  S.njobs = (size_t)njobs;
  S.jobs = sm_calloc((size_t)njobs, sizeof(sm__sia_job));
  s.jobs = sm_calloc((size_t)njobs, sizeof(sm_sim_job));
  w.jobs = sm_malloc((size_t)njobs * sizeof(sm__sia_job *));
  if (S.jobs == NULL || s.jobs == NULL || w.jobs == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto out;
  }
  S.nw = 1;
  w.n = njobs;
  for (int t = 0; t < S.ntypes; t++) {
    w.tfree[t] =
        sm_malloc((size_t)(S.nnodes[t] ? S.nnodes[t] : 1) * sizeof(int));
    if (w.tfree[t] == NULL) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      goto out;
    }
  }
  /* Every job has run on a few configurations of every type. */
  for (int i = 0; i < njobs; i++) {
    sm__sia_job *x = &S.jobs[i];
    const sm__sia_app *a = ap[sm_rng_next(&rng) % (uint64_t)napps];
    x->j = &s.jobs[i];
    x->j->idx = (uint32_t)i;
    x->j->submit = -3600.0 * sm_rng_uniform(&rng);
    x->j->first_start = x->j->end = NAN;
    x->app = a;
    x->target = a->max_bsz;
    x->type = x->cfg = -1;
    x->state = 1;
    x->profiled = 1;
    for (int t = 0; t < S.ntypes; t++) {
      x->ob[t].fit.logspace = 1;
      x->ob[t].fit.bsz_tol = SM__SIA_BSZ_TOL;
    }
    for (int t = 0; t < S.ntypes; t++) {
      int shapes[4][2] = {{1, 1}, {1, 2}, {1, S.gpn[t]}, {2, S.gpn[t]}};
      for (int q = 0; q < 4; q++) {
        int gpn[2] = {shapes[q][1], shapes[q][1]}, n = shapes[q][0];
        double b = a->g[t]->min_lbsz * (1 + (q % 2)), st, sy;
        if (n > S.nnodes[t] ||
            sm__sia_true_step(a, t, gpn, n, b, &st, &sy) != 0)
          continue;
        if (sm__sia_obs_add(&x->ob[t], n, n * shapes[q][1], (int)b, st, sy) <
            0) {
          rc = sm_err_set(err, SM_ENOMEM, "out of memory");
          goto out;
        }
      }
      if (x->ob[t].n > 0)
        sm__sia_refit(&x->ob[t]);
    }
    {
      double sq, va;
      sm__sia_grad(a, a->init_bsz, 0, &sq, &va);
      sm__sia_set_grad(x, sq, va);
    }
    w.jobs[i] = x;
  }
  {
    double t0 = sm_now();
    sm__sia_bench b2;
    rc = sm__sia_round(&S, &w, &sc, 0, &busy, &pend, out);
    if (rc != 0) {
      rc = sm_err_set(err, rc, "sia bench: the round failed");
      goto out;
    }
    (void)t0;
    /* The next round with nothing learnt in between: cached rows. */
    for (int i = 0; i < njobs; i++)
      S.jobs[i].restore = 0;
    t0 = sm_now();
    rc = sm__sia_round(&S, &w, &sc, 60, &busy, &pend, &b2);
    out->warm_s = sm_now() - t0;
    if (rc != 0)
      rc = sm_err_set(err, rc, "sia bench: the round failed");
  }
out:
  sm__sia_scratch_release(&sc);
  for (int t = 0; t < SM__SIA_MAX_TYPES; t++)
    sm_free(w.tfree[t]);
  sm_free(w.jobs);
  S.w = NULL;
  S.nw = 0;
  sm__sia_release(&S);
  sm_free(s.jobs);
  sm__figures_release(&figs);
  sm__notes_release(&s.notes);
  sm__params_release(&par);
  return rc;
}
