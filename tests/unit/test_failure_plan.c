/* test_failure_plan.c - the recovery planner's safety gates: only a
 * located infrastructure fault above the threshold gets automatic steps;
 * the retry cap and the isolation quota hold across calls through the
 * state file; shadow mode changes nothing; every decision is audited. */
#include <unistd.h>

#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

static void diag(sm_diagnosis *d, const char *cat, const char *comp,
                 double conf, int retryable, const char *node) {
  memset(d, 0, sizeof(*d));
  d->failure = 1;
  d->first_error_line = 42;
  d->category = cat;
  d->component = comp;
  d->confidence = conf;
  d->retryable = retryable;
  d->node = node;
  d->xid = -1;
  d->root_cause = "test cause";
  d->commands[0] = "ssh n1 nvidia-smi -q -d ECC";
  d->n_commands = 1;
}

static int has(const sm_plan *p, const char *action) {
  for (int i = 0; i < p->n_steps; i++)
    if (strcmp(p->steps[i].action, action) == 0)
      return 1;
  return 0;
}

static int gate_has(const sm_plan *p, const char *text) {
  for (int i = 0; i < p->n_gates; i++)
    if (strstr(p->gates[i], text) != NULL)
      return 1;
  return 0;
}

static char *tmp_dir(void) {
  static char dir[64];
  snprintf(dir, sizeof(dir), "/tmp/sm-plan-XXXXXX");
  if (mkdtemp(dir) == NULL)
    SM_FAIL_AT("mkdtemp failed");
  return dir;
}

/* Removes what the tests write into a temporary directory. */
static void rm_tmp(const char *dir) {
  static const char *const names[] = {"state", "state.lock", "audit.jsonl"};
  char path[128];

  for (size_t i = 0; i < SM_ARRAY_LEN(names); i++) {
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

static void plan(const sm_diagnosis *d, const sm_plan_opts *o, sm_plan *p) {
  sm_err err = {0};
  if (sm_plan_make(db_get(), d, o, p, &err) != 0)
    SM_FAIL_AT("plan: %s", err.msg);
}

SM_TEST(failure_plan_user_and_framework_are_only_reported) {
  const char *cats[] = {"user", "framework", "unknown"};
  sm_diagnosis d;
  sm_plan p;

  for (int i = 0; i < 3; i++) {
    diag(&d, cats[i], "gpu_memory", 0.99, 1, "n1");
    plan(&d, NULL, &p);
    ASSERT_EQ(p.n_steps, 1);
    ASSERT_STREQ(p.steps[0].action, "report");
    ASSERT_EQ(p.executable, 0);
    ASSERT_EQ(p.retryable, 0);
    ASSERT(gate_has(&p, "never retried"));
    sm_plan_release(&p);
  }
}

SM_TEST(failure_plan_infrastructure_gets_steps_behind_gates) {
  sm_diagnosis d;
  sm_plan p;

  diag(&d, "infrastructure", "gpu", 0.95, 1, "gpu-b07");
  plan(&d, NULL, &p);
  ASSERT_EQ(p.executable, 1);
  ASSERT_EQ(p.retryable, 1);
  ASSERT_STREQ(p.steps[0].action, "diagnose");
  ASSERT_STREQ(p.steps[0].target, "gpu-b07");
  ASSERT_EQ(p.steps[0].n_commands, 1);
  ASSERT_STREQ(p.steps[1].action, "isolate_node");
  ASSERT(p.steps[1].condition != NULL);
  ASSERT_STREQ(p.steps[2].action, "request_replacement");
  ASSERT_STREQ(p.steps[3].action, "restart_from_checkpoint");
  sm_plan_release(&p);
  /* Below the threshold: reported with the commands, nothing executed. */
  diag(&d, "infrastructure", "gpu", 0.6, 1, "gpu-b07");
  plan(&d, NULL, &p);
  ASSERT_EQ(p.executable, 0);
  ASSERT_EQ(p.n_steps, 1);
  ASSERT_STREQ(p.steps[0].action, "report");
  ASSERT_EQ(p.steps[0].n_commands, 1);
  ASSERT(gate_has(&p, "below the threshold"));
  sm_plan_release(&p);
  /* A lower threshold lets it through. */
  {
    sm_plan_opts o = {0};
    o.threshold = 0.5;
    plan(&d, &o, &p);
    ASSERT_EQ(p.executable, 1);
    sm_plan_release(&p);
  }
  /* No located component. */
  diag(&d, "infrastructure", "none", 0.99, 1, "gpu-b07");
  plan(&d, NULL, &p);
  ASSERT_EQ(p.executable, 0);
  ASSERT(!has(&p, "restart_from_checkpoint"));
  sm_plan_release(&p);
  /* Storage: no node isolation; unknown node: no isolation. */
  diag(&d, "infrastructure", "storage", 0.9, 1, "n2");
  plan(&d, NULL, &p);
  ASSERT(!has(&p, "isolate_node"));
  ASSERT(has(&p, "restart_from_checkpoint"));
  sm_plan_release(&p);
  diag(&d, "infrastructure", "gpu", 0.95, 1, NULL);
  plan(&d, NULL, &p);
  ASSERT(!has(&p, "isolate_node"));
  ASSERT(gate_has(&p, "node is not known"));
  sm_plan_release(&p);
  /* Not retryable (e.g. /dev/shm too small): no restart. */
  diag(&d, "infrastructure", "node", 0.9, 0, "n3");
  plan(&d, NULL, &p);
  ASSERT(!has(&p, "restart_from_checkpoint"));
  ASSERT(has(&p, "isolate_node"));
  sm_plan_release(&p);
  /* No failure: nothing to do. */
  memset(&d, 0, sizeof(d));
  d.category = "unknown";
  d.component = "none";
  plan(&d, NULL, &p);
  ASSERT_EQ(p.n_steps, 0);
  sm_plan_release(&p);
}

SM_TEST(failure_plan_retry_cap_and_shadow_with_state) {
  char *dir = tmp_dir(), state[128], text[4096];
  sm_diagnosis d;
  sm_plan p;
  sm_plan_opts o = {0};
  FILE *f;
  size_t n;

  snprintf(state, sizeof(state), "%s/state", dir);
  o.state_path = state;
  o.job_id = "job 77";
  o.max_retries = 2;
  o.now = 1000;
  diag(&d, "infrastructure", "network", 0.9, 1, NULL);
  /* Shadow mode plans but counts nothing. */
  o.shadow = 1;
  plan(&d, &o, &p);
  ASSERT_EQ(p.executable, 0);
  ASSERT(has(&p, "restart_from_checkpoint"));
  ASSERT(gate_has(&p, "shadow"));
  sm_plan_release(&p);
  ASSERT(access(state, F_OK) != 0);
  o.shadow = 0;
  for (int i = 0; i < 2; i++) {
    plan(&d, &o, &p);
    ASSERT_EQ(p.retries_used, i);
    ASSERT(has(&p, "restart_from_checkpoint"));
    sm_plan_release(&p);
  }
  plan(&d, &o, &p);
  ASSERT_EQ(p.retries_used, 2);
  ASSERT(!has(&p, "restart_from_checkpoint"));
  ASSERT(gate_has(&p, "retry cap reached"));
  sm_plan_release(&p);
  /* Another job has its own count. */
  o.job_id = "job-78";
  plan(&d, &o, &p);
  ASSERT(has(&p, "restart_from_checkpoint"));
  sm_plan_release(&p);
  f = fopen(state, "r");
  n = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[n] = '\0';
  ASSERT(strstr(text, "retry job_77 2 1000") != NULL);
  ASSERT(strstr(text, "retry job-78 1 1000") != NULL);
  rm_tmp(dir);
}

SM_TEST(failure_plan_isolation_quota_window) {
  char *dir = tmp_dir(), state[128];
  sm_diagnosis d;
  sm_plan p;
  sm_plan_opts o = {0};

  snprintf(state, sizeof(state), "%s/state", dir);
  o.state_path = state;
  o.isolation_quota = 1;
  o.quota_window_s = 3600;
  diag(&d, "infrastructure", "gpu", 0.95, 1, "n1");
  o.now = 10000;
  o.job_id = "a";
  plan(&d, &o, &p);
  ASSERT(has(&p, "isolate_node"));
  sm_plan_release(&p);
  d.node = "n2";
  o.now = 11000;
  o.job_id = "b";
  plan(&d, &o, &p);
  ASSERT(!has(&p, "isolate_node"));
  ASSERT(gate_has(&p, "quota reached"));
  ASSERT_EQ(p.isolations_in_window, 1);
  /* The fault is still diagnosed and the job restarted. */
  ASSERT(has(&p, "diagnose"));
  ASSERT(has(&p, "restart_from_checkpoint"));
  sm_plan_release(&p);
  o.now = 10000 + 3600 + 1;
  o.job_id = "c";
  plan(&d, &o, &p);
  ASSERT(has(&p, "isolate_node"));
  sm_plan_release(&p);
  rm_tmp(dir);
}

SM_TEST(failure_plan_rejects_corrupt_state) {
  char *dir = tmp_dir(), state[128];
  static const char *const bad[] = {
      "# schedmate planner state v1\nretry job 1\n",
      "retry job x 12\n",
      "isolate soon n1\n",
      "launch the missiles\n",
      "retry job -4 10\n",
  };
  sm_diagnosis d;
  sm_plan p;
  sm_plan_opts o = {0};

  snprintf(state, sizeof(state), "%s/state", dir);
  o.state_path = state;
  diag(&d, "infrastructure", "gpu", 0.95, 1, "n1");
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    sm_err err = {0};
    FILE *f = fopen(state, "w");
    fputs(bad[i], f);
    fclose(f);
    ASSERT_EQ(sm_plan_make(db_get(), &d, &o, &p, &err), SM_ECORRUPT);
    ASSERT(strstr(err.msg, state) != NULL);
    ASSERT(strstr(err.msg, "corrupt") != NULL);
  }
  {
    sm_err err = {0};
    FILE *f = fopen(state, "w");
    fwrite("retry a\0b 1 2\n", 1, 14, f);
    fclose(f);
    ASSERT_EQ(sm_plan_make(db_get(), &d, &o, &p, &err), SM_ECORRUPT);
  }
  rm_tmp(dir);
}

SM_TEST(failure_plan_audit_is_appended_json_lines) {
  char *dir = tmp_dir(), audit[128], line[65536];
  sm_diagnosis d;
  sm_plan p;
  sm_plan_opts o = {0};
  FILE *f;
  int n = 0;

  snprintf(audit, sizeof(audit), "%s/audit.jsonl", dir);
  o.audit_path = audit;
  o.now = 1700000000;
  o.log_path = "/logs/job \"7\".log";
  diag(&d, "infrastructure", "gpu", 0.95, 1, "n1");
  plan(&d, &o, &p);
  sm_plan_release(&p);
  diag(&d, "user", "none", 0.9, 0, NULL);
  plan(&d, &o, &p);
  sm_plan_release(&p);
  o.shadow = 1;
  diag(&d, "infrastructure", "node", 0.9, 1, "n4");
  plan(&d, &o, &p);
  sm_plan_release(&p);
  f = fopen(audit, "r");
  ASSERT(f != NULL);
  while (fgets(line, sizeof(line), f) != NULL) {
    size_t l = strlen(line);
    n++;
    ASSERT(l > 2 && line[0] == '{' && line[l - 2] == '}' &&
           line[l - 1] == '\n');
    ASSERT(strstr(line, "\"time\":\"2023-11-14T22:13:20Z\"") != NULL);
    ASSERT(strstr(line, "job \\\"7\\\".log") != NULL);
  }
  fclose(f);
  ASSERT_EQ(n, 3);
  /* An unwritable audit log is an error, not a silent skip. */
  {
    sm_err err = {0};
    o.audit_path = "/nonexistent-dir/audit.jsonl";
    ASSERT(sm_plan_make(db_get(), &d, &o, &p, &err) < 0);
    ASSERT(strstr(err.msg, "/nonexistent-dir/audit.jsonl") != NULL);
  }
  rm_tmp(dir);
}

/* The safety rule, over every combination of what the planner is given:
 * category (the four, and names it does not know), component (every one,
 * none, unknown), confidence (below, at and above the thresholds, out of
 * range, NaN, infinite), retryable, node known or not, shadow mode,
 * threshold (default, low, high, invalid), retry cap and isolation quota
 * (default or none left).  A plan may isolate a node, ask for a
 * replacement or restart the job only for a failure that is
 * infrastructure, with a located component and a confidence in [0, 1] at
 * or above the threshold; every other failure gets exactly one step,
 * "report", and is neither retryable nor executable. */
SM_TEST(failure_plan_never_isolates_or_restarts_outside_the_rule) {
  static const char *const cats[] = {
      "infrastructure", "framework",      "user", "unknown", "", NULL,
      "Infrastructure", "infrastructure "};
  static const char *const comps[] = {
      "gpu",        "nvlink", "network", "node", "storage",
      "gpu_memory", "none",   "",        NULL,   "rack"};
  const double confs[] = {-1,   0,    0.5, 0.79, 0.7999, 0.8,      0.8001,
                          0.95, 0.99, 1.0, 1.5,  NAN,    INFINITY, -INFINITY};
  const double thresholds[] = {0, 0.5, 0.95, NAN, -1};
  static const char *const located[] = {"gpu", "nvlink", "network", "node",
                                        "storage"};
  /* What the verdict rests on: not stated (a diagnosis built by hand),
   * a fault, a resource limit, an outside event, an inference, a word the
   * planner does not know. */
  static const char *const bases[] = {NULL,    "fault",    "limit",
                                      "event", "inferred", "Fault"};
  long plans = 0, acted = 0, isolated = 0;

  for (size_t ci = 0; ci < SM_ARRAY_LEN(cats); ci++)
    for (size_t ki = 0; ki < SM_ARRAY_LEN(comps); ki++)
      for (size_t fi = 0; fi < SM_ARRAY_LEN(confs); fi++)
        for (int bits = 0; bits < 16; bits++)
          for (size_t ti = 0; ti < SM_ARRAY_LEN(thresholds); ti++)
            for (size_t bi = 0; bi < SM_ARRAY_LEN(bases); bi++) {
              sm_diagnosis d;
              sm_plan p;
              sm_plan_opts o = {0};
              double th = thresholds[ti] > 0 ? thresholds[ti] : 0.8;
              int allowed, loc = 0, acts, fault;
              diag(&d, cats[ci], comps[ki], confs[fi], bits & 1,
                   bits & 2 ? "gpu-b07" : NULL);
              d.basis = bases[bi];
              fault = bases[bi] == NULL || strcmp(bases[bi], "fault") == 0;
              o.shadow = (bits & 4) != 0;
              o.threshold = thresholds[ti];
              if (bits & 8) { /* no restart and no isolation left */
                o.max_retries = -1;
                o.isolation_quota = -1;
              }
              for (size_t li = 0; li < SM_ARRAY_LEN(located); li++)
                loc |= comps[ki] && strcmp(comps[ki], located[li]) == 0;
              allowed = cats[ci] && strcmp(cats[ci], "infrastructure") == 0 &&
                        loc && isfinite(confs[fi]) && confs[fi] >= 0 &&
                        confs[fi] <= 1 && confs[fi] >= th;
              plan(&d, &o, &p);
              plans++;
              acts = has(&p, "isolate_node") + has(&p, "request_replacement") +
                     has(&p, "restart_from_checkpoint");
              acted += acts > 0;
              if (acts > 0 && !allowed)
                SM_FAIL_AT("unsafe plan: %s/%s conf %g threshold %g bits %d "
                           "basis %s",
                           cats[ci] ? cats[ci] : "(null)",
                           comps[ki] ? comps[ki] : "(null)", confs[fi],
                           thresholds[ti], bits,
                           bases[bi] ? bases[bi] : "(null)");
              /* A node is fenced off only for a fault. */
              if ((has(&p, "isolate_node") || has(&p, "request_replacement")) &&
                  !fault)
                SM_FAIL_AT("isolation on %s evidence: %s/%s conf %g", bases[bi],
                           cats[ci] ? cats[ci] : "(null)",
                           comps[ki] ? comps[ki] : "(null)", confs[fi]);
              isolated += has(&p, "isolate_node");
              if (!allowed) {
                ASSERT_EQ(p.n_steps, 1);
                ASSERT_STREQ(p.steps[0].action, "report");
                ASSERT_EQ(p.retryable, 0);
                ASSERT_EQ(p.executable, 0);
                ASSERT(p.n_gates >= 1);
              } else {
                /* Allowed is not forced: gates still apply. */
                ASSERT(has(&p, "diagnose"));
                ASSERT_EQ(p.executable, !o.shadow);
                if (has(&p, "isolate_node"))
                  ASSERT((bits & 2) && !(bits & 8) &&
                         strcmp(comps[ki], "storage") != 0);
                if (has(&p, "restart_from_checkpoint"))
                  ASSERT((bits & 1) && !(bits & 8));
              }
              sm_plan_release(&p);
            }
  /* The rule lets some through: the test is not vacuous. */
  ASSERT(acted > 0);
  ASSERT(isolated > 0);
  ASSERT(plans ==
         (long)(SM_ARRAY_LEN(cats) * SM_ARRAY_LEN(comps) * SM_ARRAY_LEN(confs) *
                16 * SM_ARRAY_LEN(thresholds) * SM_ARRAY_LEN(bases)));
  /* Without a failure nothing at all is planned. */
  {
    sm_diagnosis d;
    sm_plan p;
    diag(&d, "infrastructure", "gpu", 0.99, 1, "n1");
    d.failure = 0;
    plan(&d, NULL, &p);
    ASSERT_EQ(p.n_steps, 0);
    ASSERT_EQ(p.executable, 0);
    sm_plan_release(&p);
  }
}
