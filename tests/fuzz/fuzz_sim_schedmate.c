/* fuzz_sim_schedmate.c - libFuzzer target for the SchedMate integrations
 * of the simulator: any bytes given as a trace either load or fail with a
 * message; a trace that loads runs under Lucid + SchedMate and
 * SchedMate-SJF with the Failure Handler (history facts, users
 * resubmitting failures) with the run's invariants intact.  The same
 * bytes are also read as a Lucid profile table, which must load or fail
 * with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedmate/sm_sim.h"
#include "sim/facts_int.h"

static sm_sim_cluster *cluster;

static void run(const sm_sim_trace *t, const char *policy) {
  sm_sim_config cfg;
  sm_sim_result *r = NULL;
  sm_err err = {0};
  int rc;

  sm_sim_config_init(&cfg);
  cfg.policy = policy;
  sm_sim_config_param(&cfg, "lucid.tables=builtin");
  sm_sim_config_param(&cfg, "fail.model=resubmit");
  sm_sim_config_param(&cfg, "fail.infra_share=0.5");
  sm_sim_config_param(&cfg, "lucid.profile_s=20");
  rc = sm_sim_run(t, cluster, &cfg, &r, &err);
  if (rc == SM_ECORRUPT)
    abort(); /* an invariant broke */
  sm_sim_result_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sm_sim_trace *t = NULL;
  sm_err err = {0};
  char path[64];
  FILE *f;

  if (cluster == NULL && sm_sim_cluster_parse("3x8", &cluster, &err) != 0)
    abort();
  if (sm_sim_trace_load_mem((const char *)data, size, "fuzz.csv", NULL, &t,
                            &err) == 0) {
    if (sm_sim_trace_count(t) <= 2000) {
      run(t, "lucid+schedmate");
      run(t, "sjf-schedmate+fh");
    }
    sm_sim_trace_free(t);
  } else if (err.msg[0] == '\0') {
    abort(); /* a failure must say why */
  }
  snprintf(path, sizeof(path), "/tmp/sm-fuzz-prof-%d.csv", (int)getpid());
  f = fopen(path, "wb");
  if (f != NULL) {
    sm__coloc *c = NULL;
    sm_err e2 = {0};
    fwrite(data, 1, size, f);
    fclose(f);
    if (sm__coloc_load(path, "tests/data/sim/lucid_pairs_test.csv", &c, &e2) ==
        0)
      sm__coloc_free(c);
    else if (e2.msg[0] == '\0')
      abort();
    unlink(path);
  }
  return 0;
}
