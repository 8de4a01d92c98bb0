/* test_sim_params.c - the simulator's parameters: the settings of a
 * configuration (malformed ones refused, the limit, the last of a key
 * wins), their one parse into the run's typed parameters (defaults, text
 * that is not a number), and the record of what a run read, which decides
 * "params" and "params_ignored" in its result and the runs a sweep
 * repeats.  A policy registered by the test reads a key outside the
 * table through sm_sim_param_num. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"
#include "sim/params_int.h"

static const char *csv = "job_id,submit_s,duration_s,gpus\n"
                         "a,0,100,1\n"
                         "b,10,50,2\n"
                         "c,20,10,1\n";

/* Runs policy on csv on one node of 4 GPUs with cfg; returns the
 * result's JSON summary (caller frees) and the result in *out. */
static char *run_json(sm_sim_config *cfg, sm_sim_result **out) {
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  char *s;

  ASSERT_OK(sm_sim_trace_load_mem(csv, strlen(csv), "p.csv", NULL, &t, &err));
  ASSERT_OK(sm_sim_cluster_parse("1x4", &c, &err));
  if (sm_sim_run(t, c, cfg, out, &err) != 0)
    SM_FAIL_AT("run: %s", err.msg);
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_sim_result_json(*out, &w);
  ASSERT_OK(sm_jw_finish(&w));
  s = strdup(sm_buf_str(&b));
  sm_buf_release(&b);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
  return s;
}

SM_TEST(sim_params_malformed_settings_refused) {
  sm_sim_config c;
  static char keys[SM_SIM_MAX_PARAMS][16];

  sm_sim_config_init(&c);
  ASSERT_EQ(sm_sim_config_param(&c, NULL), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_param(&c, ""), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_param(&c, "noequals"), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_param(&c, "=value"), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_set(&c, "", "1"), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_set(&c, "a=b", "1"), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_set(&c, NULL, "1"), SM_EINVAL);
  ASSERT_EQ(sm_sim_config_set(&c, "backfill", NULL), SM_EINVAL);
  ASSERT_EQ(c.nparams, 0);
  /* An empty value is a setting (a policy decides what it means). */
  ASSERT_OK(sm_sim_config_param(&c, "estimator="));
  ASSERT_STREQ(sm_sim_config_get(&c, "estimator"), "");
  for (int i = 1; i < SM_SIM_MAX_PARAMS; i++) {
    snprintf(keys[i], sizeof(keys[i]), "k%d=1", i);
    ASSERT_OK(sm_sim_config_param(&c, keys[i]));
  }
  ASSERT_EQ(sm_sim_config_param(&c, "one=too_many"), SM_ELIMIT);
  ASSERT_EQ(sm_sim_config_set(&c, "one", "too_many"), SM_ELIMIT);
  ASSERT_EQ(c.nparams, SM_SIM_MAX_PARAMS);
}

SM_TEST(sim_params_parse_typed_defaults_and_last_wins) {
  sm_sim_config c;
  sm__params p;

  sm_sim_config_init(&c);
  sm__params_parse(&p, &c);
  ASSERT_NEAR(p.fail_infra_share, 0.35, 0);
  ASSERT_NEAR(p.tiresias_interval, 60, 0);
  ASSERT_NEAR(p.sia_p, -0.5, 0);
  ASSERT_EQ(p.workloads == NULL, 1);
  ASSERT_EQ(p.text[SM__P_fail_infra_share] == NULL, 1);

  ASSERT_OK(sm_sim_config_param(&c, "fail.infra_share=0.5"));
  ASSERT_OK(sm_sim_config_set(&c, "workloads", "data/workloads"));
  ASSERT_OK(sm_sim_config_param(&c, "fail.infra_share=0.25"));
  /* Not a number: the default, and the text is kept for the checks. */
  ASSERT_OK(sm_sim_config_param(&c, "tiresias.interval=soon"));
  ASSERT_OK(sm_sim_config_param(&c, "sia.p=0x10"));
  ASSERT_OK(sm_sim_config_param(&c, "no.such.key=3"));
  sm__params_parse(&p, &c);
  ASSERT_NEAR(p.fail_infra_share, 0.25, 0);
  ASSERT_STREQ(p.text[SM__P_fail_infra_share], "0.25");
  ASSERT_STREQ(p.workloads, "data/workloads");
  ASSERT_NEAR(p.tiresias_interval, 60, 0);
  ASSERT_EQ(p.bad[SM__P_tiresias_interval], 1);
  ASSERT_STREQ(p.text[SM__P_tiresias_interval], "soon");
  ASSERT_EQ(p.bad[SM__P_fail_infra_share], 0);
  ASSERT_EQ(sm__params_find("no.such.key", 11), -1);
  ASSERT_EQ(sm__params_find("fail.infra_share", 16), SM__P_fail_infra_share);
  /* A prefix of a key is not the key. */
  ASSERT_EQ(sm__params_find("fail.infra", 10), -1);
  ASSERT_STREQ(sm__params_key(SM__P_lucid_untracked), "lucid.untracked");
  /* The last good setting of a key wins over an earlier bad one. */
  ASSERT_OK(sm_sim_config_param(&c, "tiresias.interval=30"));
  sm__params_parse(&p, &c);
  ASSERT_NEAR(p.tiresias_interval, 30, 0);
  ASSERT_EQ(p.bad[SM__P_tiresias_interval], 0);
  sm__params_release(&p);
}

/* Huge values, invalid UTF-8 and binary bytes in keys and values are kept
 * as given, never read past, and reported as they were given. */
SM_TEST(sim_params_odd_bytes_reported_as_given) {
  sm_sim_config c;
  sm_sim_result *r = NULL;
  size_t n = 1 << 20;
  char *huge = malloc(n + 16), *json;

  memcpy(huge, "x.huge=", 7);
  memset(huge + 7, 'v', n);
  huge[7 + n] = '\0';
  sm_sim_config_init(&c);
  c.policy = "fifo";
  ASSERT_OK(sm_sim_config_param(&c, huge));
  ASSERT_OK(sm_sim_config_param(&c, "\xff\xfe=\x01\x02"));
  ASSERT_OK(sm_sim_config_param(&c, "backfill=\xc3\x28"));
  json = run_json(&c, &r);
  /* Not numbers: backfill is read (as 0) and listed as given. */
  ASSERT_EQ(strstr(json, "\"params\":{\"backfill\":") != NULL, 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "backfill"), 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "x.huge"), 0);
  ASSERT_EQ(strstr(json, "vvvvvvvvvvvvvvvv") != NULL, 1);
  sm_sim_result_free(r);
  free(json);
  free(huge);
}

/* A run lists the settings it read under params (the last of a key
 * wins) and the others under params_ignored, in the order given; the
 * command's own options (--estimator, --backfill) are settings like any
 * other. */
SM_TEST(sim_params_used_and_ignored) {
  sm_sim_config c;
  sm_sim_result *r = NULL;
  char *json;

  sm_sim_config_init(&c);
  c.policy = "qssf";
  ASSERT_OK(sm_sim_config_set(&c, "estimator", "oracle"));
  ASSERT_OK(sm_sim_config_set(&c, "backfill", "1"));
  ASSERT_OK(sm_sim_config_param(&c, "tiresias.interval=30"));
  ASSERT_OK(sm_sim_config_param(&c, "typo.key=1"));
  ASSERT_OK(sm_sim_config_param(&c, "backfill=0"));
  json = run_json(&c, &r);
  /* fail.model is read too, but not given: not listed. */
  ASSERT_EQ(strstr(json, "\"params\":{\"estimator\":\"oracle\","
                         "\"backfill\":\"0\"}") != NULL,
            1);
  ASSERT_EQ(strstr(json, "\"params_ignored\":[\"tiresias.interval=30\","
                         "\"typo.key=1\"]") != NULL,
            1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "fail.model"), 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "estimator.default_s"), 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "tiresias.interval"), 0);
  ASSERT_EQ(sm_sim_result_reads_param(r, "typo.key"), 0);
  sm_sim_result_free(r);
  free(json);
  /* The same settings under Tiresias: the other way round. */
  c.policy = "tiresias";
  json = run_json(&c, &r);
  ASSERT_EQ(strstr(json, "\"params\":{\"tiresias.interval\":\"30\"}") != NULL,
            1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "estimator"), 0);
  sm_sim_result_free(r);
  free(json);
}

/* A policy outside the table reads its own key by name. */
static int ext_init(sm_sim *s, void **st, sm_err *err) {
  (void)err;
  *st = sm_sim_alloc_mem(s, 1);
  ASSERT_NEAR(sm_sim_param_num(s, "ext.speed", 7), 2.5, 0);
  ASSERT_NEAR(sm_sim_param_num(s, "ext.absent", 7), 7, 0);
  ASSERT_NEAR(sm_sim_param_num(s, "ext.word", 7), 7, 0);
  ASSERT_STREQ(sm_sim_param_str(s, "ext.word"), "fast");
  /* A table key by name is the typed parameter's text. */
  ASSERT_STREQ(sm_sim_param_str(s, "fail.rest"), "2");
  return *st ? 0 : SM_ENOMEM;
}

static void ext_schedule(sm_sim *s, void *st, int vc) {
  (void)st;
  for (size_t i = 0; i < sm_sim_job_count(s); i++) {
    sm_sim_job *j = sm_sim_job_at(s, i);
    if (j->vc == vc && j->status == SM_SIM_JOB_PENDING)
      sm_sim_start(s, j);
  }
}

static const sm_sim_policy ext_policy = {
    "test-params", "reads its own keys", 0,   ext_init, NULL, NULL, NULL,
    NULL,          ext_schedule,         NULL};

SM_TEST(sim_params_extension_policy_keys) {
  sm_sim_config c;
  sm_sim_result *r = NULL;
  char *json;

  if (sm_sim_policy_find("test-params") == NULL)
    ASSERT_OK(sm_sim_policy_register(&ext_policy));
  sm_sim_config_init(&c);
  c.policy = "test-params";
  ASSERT_OK(sm_sim_config_param(&c, "ext.speed=2.5"));
  ASSERT_OK(sm_sim_config_param(&c, "ext.word=fast"));
  ASSERT_OK(sm_sim_config_param(&c, "ext.unread=1"));
  ASSERT_OK(sm_sim_config_param(&c, "fail.rest=2"));
  json = run_json(&c, &r);
  ASSERT_EQ(strstr(json, "\"params\":{\"ext.speed\":\"2.5\",\"ext.word\":"
                         "\"fast\",\"fail.rest\":\"2\"}") != NULL,
            1);
  ASSERT_EQ(strstr(json, "\"params_ignored\":[\"ext.unread=1\"]") != NULL, 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "ext.absent"), 1);
  ASSERT_EQ(sm_sim_result_reads_param(r, "ext.unread"), 0);
  sm_sim_result_free(r);
  free(json);
}

/* Sia checks its numbers: text that is not one names the setting. */
SM_TEST(sim_params_checked_numbers_name_the_setting) {
  sm_sim_config c;
  sm_sim sim;
  sm__params p;
  sm_err err = {0};
  double v = 0;

  sm_sim_config_init(&c);
  ASSERT_OK(sm_sim_config_param(&c, "sia.p=abc"));
  ASSERT_OK(sm_sim_config_param(&c, "sia.gap=2"));
  sm__params_parse(&p, &c);
  memset(&sim, 0, sizeof(sim));
  sim.par = &p;
  ASSERT_EQ(sm__params_num_in(&sim, SM__P_sia_p, -10, 10, &v, &err), SM_EINVAL);
  ASSERT_STREQ(err.msg, "--param sia.p=abc: expected a number in [-10, 10]");
  ASSERT_EQ(sm__params_num_in(&sim, SM__P_sia_gap, 0, 1, &v, &err), SM_EINVAL);
  ASSERT_OK(sm__params_num_in(&sim, SM__P_sia_lambda, -1e6, 1e6, &v, &err));
  ASSERT_NEAR(v, 1.1, 0);
  ASSERT_EQ(sm__params_was_read(&p, SM__P_sia_lambda), 1);
  ASSERT_EQ(sm__params_was_read(&p, SM__P_sia_interval), 0);
  sm__params_release(&p);
}
