/* test_sim_registry.c - the policy table under concurrent use: threads
 * register policies while others look policies up and run simulations,
 * and every registration is seen whole (a name and a schedule callback)
 * or not at all; duplicates and a full table are refused.  And the
 * engine's per-job state stays behind the job's opaque _run: a trace's
 * jobs have none, a result's keep their placement. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

#define WRITERS 4
#define PER_WRITER 8

static void fifo_like(sm_sim *s, void *st, int vc) {
  (void)st;
  for (size_t i = 0; i < sm_sim_job_count(s); i++) {
    sm_sim_job *j = sm_sim_job_at(s, i);
    if (j->vc == vc && j->status == SM_SIM_JOB_PENDING)
      sm_sim_start(s, j);
  }
}

static sm_sim_policy pols[WRITERS][PER_WRITER];
static char names[WRITERS][PER_WRITER][32];
static volatile int stop;

static void *writer(void *arg) {
  int w = (int)(size_t)arg;
  for (int k = 0; k < PER_WRITER; k++) {
    snprintf(names[w][k], sizeof(names[w][k]), "test-reg-%d-%d", w, k);
    memset(&pols[w][k], 0, sizeof(pols[w][k]));
    pols[w][k].name = names[w][k];
    pols[w][k].summary = "registered by a test thread";
    pols[w][k].schedule = fifo_like;
    if (sm_sim_policy_register(&pols[w][k]) != 0)
      return (void *)1;
  }
  return NULL;
}

/* Walks the table over and over: every entry is complete. */
static void *reader(void *arg) {
  (void)arg;
  while (!stop) {
    const sm_sim_policy *p;
    for (size_t i = 0; (p = sm_sim_policy_at(i)) != NULL; i++)
      if (p->name == NULL || p->schedule == NULL ||
          sm_sim_policy_find(p->name) != p)
        return (void *)1;
  }
  return NULL;
}

SM_TEST(sim_registry_concurrent_registration) {
  pthread_t w[WRITERS], r[2];
  sm_sim_policy dup;
  void *ret;
  size_t before = 0, after = 0;

  while (sm_sim_policy_at(before) != NULL)
    before++;
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_create(&r[i], NULL, reader, NULL), 0);
  for (int i = 0; i < WRITERS; i++)
    ASSERT_EQ(pthread_create(&w[i], NULL, writer, (void *)(size_t)i), 0);
  for (int i = 0; i < WRITERS; i++) {
    ASSERT_EQ(pthread_join(w[i], &ret), 0);
    ASSERT(ret == NULL);
  }
  stop = 1;
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(pthread_join(r[i], &ret), 0);
    ASSERT(ret == NULL);
  }
  while (sm_sim_policy_at(after) != NULL)
    after++;
  ASSERT_EQ(after, before + WRITERS * PER_WRITER);
  ASSERT(sm_sim_policy_find("test-reg-3-7") == &pols[3][7]);
  /* The built-in ones come first and cannot be replaced. */
  ASSERT_STREQ(sm_sim_policy_at(0)->name, "fifo");
  dup = pols[0][0];
  dup.name = "fifo";
  ASSERT_EQ(sm_sim_policy_register(&dup), SM_EINVAL);
  dup.name = "test-reg-no-schedule";
  dup.schedule = NULL;
  ASSERT_EQ(sm_sim_policy_register(&dup), SM_EINVAL);
  ASSERT_EQ(sm_sim_policy_register(NULL), SM_EINVAL);
}

SM_TEST(sim_registry_full_table) {
  static sm_sim_policy many[80];
  static char nm[80][24];
  int rc = 0, k;

  for (k = 0; k < 80 && rc == 0; k++) {
    snprintf(nm[k], sizeof(nm[k]), "test-full-%d", k);
    many[k].name = nm[k];
    many[k].schedule = fifo_like;
    rc = sm_sim_policy_register(&many[k]);
  }
  ASSERT_EQ(rc, SM_ELIMIT);
  ASSERT(k < 80);
  ASSERT(sm_sim_policy_find(nm[k - 1]) == NULL);
  ASSERT(sm_sim_policy_find(nm[0]) == &many[0]);
}

SM_TEST(sim_job_engine_state_is_opaque) {
  const char *csv = "job_id,submit_s,duration_s,gpus\n"
                    "a,0,100,8\n"
                    "b,5,50,4\n";
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  sm_sim_result *r = NULL;
  sm_sim_config cfg;
  sm_err err = {0};
  int nodes[4];

  ASSERT_OK(sm_sim_trace_load_mem(csv, strlen(csv), "o.csv", NULL, &t, &err));
  ASSERT_OK(sm_sim_cluster_parse("3x4", &c, &err));
  ASSERT(sm_sim_trace_job(t, 0)->_run == NULL);
  ASSERT_EQ(sm_sim_job_nodes(sm_sim_trace_job(t, 0), nodes, 4), 0);
  sm_sim_config_init(&cfg);
  ASSERT_OK(sm_sim_run(t, c, &cfg, &r, &err));
  sm_sim_trace_free(t);
  /* a held two whole nodes; b the third one. */
  ASSERT_EQ(sm_sim_job_nodes(sm_sim_result_job(r, 0), nodes, 4), 2);
  ASSERT_EQ(sm_sim_job_nodes(sm_sim_result_job(r, 1), nodes, 4), 1);
  ASSERT_EQ(nodes[0], 2);
  ASSERT_EQ(sm_sim_job_nodes(sm_sim_result_job(r, 0), nodes, 1), 2);
  sm_sim_result_free(r);
  sm_sim_cluster_free(c);
}
