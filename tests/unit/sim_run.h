/* sim_run.h - helpers shared by the simulator's policy tests: run one
 * policy on an in-memory trace, find a job of the result, read a policy
 * figure. */
#ifndef SM_TEST_SIM_RUN_H
#define SM_TEST_SIM_RUN_H

#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

typedef struct run {
  sm_sim_trace *t;
  sm_sim_cluster *c;
  sm_sim_result *r;
} run;

/* Runs policy on the generic-layout csv with up to 8 "k=v" parameters
 * (NULL-terminated). */
static inline run simulate(const char *csv, const char *cluster,
                           const char *pol, const char *const *params) {
  run x;
  sm_err err = {0};
  sm_sim_config cfg;

  if (sm_sim_trace_load_mem(csv, strlen(csv), "test.csv", NULL, &x.t, &err))
    SM_FAIL_AT("trace: %s", err.msg);
  if (sm_sim_cluster_parse(cluster, &x.c, &err))
    SM_FAIL_AT("cluster: %s", err.msg);
  sm_sim_config_init(&cfg);
  cfg.policy = pol;
  for (int i = 0; params && params[i]; i++)
    ASSERT_OK(sm_sim_config_param(&cfg, params[i]));
  if (sm_sim_run(x.t, x.c, &cfg, &x.r, &err))
    SM_FAIL_AT("run %s: %s", pol, err.msg);
  return x;
}

static inline void done(run *x) {
  sm_sim_result_free(x->r);
  sm_sim_cluster_free(x->c);
  sm_sim_trace_free(x->t);
}

static inline const sm_sim_job *job(const run *x, const char *id) {
  for (size_t i = 0; i < sm_sim_result_job_count(x->r); i++) {
    const sm_sim_job *j = sm_sim_result_job(x->r, i);
    if (strcmp(j->id, id) == 0)
      return j;
  }
  SM_FAIL_AT("no job %s", id);
  return NULL;
}

static inline double figure(const run *x, const char *k) {
  double v;
  if (!sm_sim_result_stat_get(x->r, k, &v))
    SM_FAIL_AT("no figure %s", k);
  return v;
}

#endif /* SM_TEST_SIM_RUN_H */
