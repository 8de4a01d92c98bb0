/* fuzz_trace.c - libFuzzer target: any bytes given as a trace (plain or
 * gzip, any layout) either load or fail with a message; a trace that
 * loads runs under a non-preemptive and a preemptive policy with the
 * run's invariants intact, and its outputs stay well-formed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_sim.h"

static sm_sim_cluster *cluster;

static void run(const sm_sim_trace *t, const char *policy, int first_fit) {
  sm_sim_config cfg;
  sm_sim_result *r = NULL;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  int rc;

  sm_sim_config_init(&cfg);
  cfg.policy = policy;
  cfg.placement = first_fit ? SM_SIM_PLACE_FIRST_FIT : SM_SIM_PLACE_CONSOLIDATE;
  sm_sim_config_param(&cfg, "tiresias.thresholds=100,1000");
  rc = sm_sim_run(t, cluster, &cfg, &r, &err);
  if (rc == SM_ECORRUPT)
    abort(); /* an invariant broke */
  if (rc != 0)
    return;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_sim_result_json(r, &w);
  if (sm_jw_finish(&w) != 0)
    abort();
  sm_buf_reset(&b);
  if (sm_sim_result_jobs_csv(r, &b) != 0)
    abort();
  sm_buf_reset(&b);
  if (sm_sim_report_html((const sm_sim_result *const *)&r, 1, &b) != 0)
    abort();
  sm_buf_release(&b);
  sm_sim_result_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sm_sim_trace *t = NULL;
  sm_err err = {0};

  if (cluster == NULL && sm_sim_cluster_parse("3x8", &cluster, &err) != 0)
    abort();
  if (sm_sim_trace_load_mem((const char *)data, size, "fuzz", NULL, &t, &err) !=
      0) {
    if (err.msg[0] == '\0')
      abort(); /* every failure explains itself */
    return 0;
  }
  if (sm_sim_trace_count(t) == 0)
    abort();
  if (sm_sim_trace_count(t) <= 2000) {
    run(t, "fifo", size & 1);
    run(t, "tiresias", size & 2);
  }
  sm_sim_trace_free(t);
  return 0;
}
