/* test_slurm_order.c - SchedMate-SJF priorities (order.c), the GPU part
 * of Slurm's TRES strings, and comments that carry the estimate. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_slurm.h"
#include "slurm/slurm_int.h"

/* Checks that targets follow the ranks strictly and stay in range. */
static void check_targets(const sm__oj *j, int n) {
  for (int a = 0; a < n; a++) {
    ASSERT(j[a].target >= SM__PRIO_MIN && j[a].target <= SM__PRIO_MAX);
    for (int b = 0; b < n; b++)
      if (j[a].rank < j[b].rank && !(j[a].target > j[b].target))
        SM_FAIL_AT("job %u (rank %d, %u) not above job %u (rank %d, %u)",
                   j[a].id, j[a].rank, j[a].target, j[b].id, j[b].rank,
                   j[b].target);
  }
}

static void apply(sm__oj *j, int n) {
  for (int i = 0; i < n; i++)
    j[i].cur = j[i].target;
}

static sm__oj job(uint32_t id, uint32_t prio, double est) {
  sm__oj o;
  memset(&o, 0, sizeof(o));
  o.id = id;
  o.native = o.cur = prio;
  o.submit = 1000 + id;
  o.has_est = est > 0;
  o.est = est;
  return o;
}

SM_TEST(slurm_order_fifo_queue) {
  /* priority/basic: consecutive priorities in submit order. */
  sm__oj j[5] = {job(1, 4294901759u, 3600), job(2, 4294901758u, 600),
                 job(3, 4294901757u, 0), job(4, 4294901756u, 60),
                 job(5, 4294901755u, 0)};
  int changed = sm__order_plan(j, 5);
  ASSERT(changed > 0);
  /* Fallback jobs 3 and 5 keep their places 2 and 4; the others take
   * places 0, 1, 3 shortest first: 4 (60 s), 2 (600 s), 1 (3600 s). */
  ASSERT_EQ(j[3].rank, 0);
  ASSERT_EQ(j[1].rank, 1);
  ASSERT_EQ(j[2].rank, 2);
  ASSERT_EQ(j[0].rank, 3);
  ASSERT_EQ(j[4].rank, 4);
  check_targets(j, 5);
  /* Enforced once, the next pass changes nothing. */
  apply(j, 5);
  ASSERT_EQ(sm__order_plan(j, 5), 0);
  check_targets(j, 5);
}

SM_TEST(slurm_order_no_change_when_already_ordered) {
  sm__oj j[4] = {job(1, 900, 10), job(2, 800, 20), job(3, 700, 0),
                 job(4, 600, 30)};
  ASSERT_EQ(sm__order_plan(j, 4), 0);
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(j[i].target, j[i].cur);
  ASSERT_EQ(sm__order_plan(j, 0), 0);
}

SM_TEST(slurm_order_new_job_costs_few_updates) {
  /* Ten ordered jobs 1000 apart; a new short job arrives at the end of
   * Slurm's order (lowest priority): only it moves. */
  sm__oj j[11];
  int changed;
  for (int i = 0; i < 10; i++) {
    j[i] = job((uint32_t)i + 1, 100000u - 1000u * (uint32_t)i, 100.0 * (i + 1));
  }
  ASSERT_EQ(sm__order_plan(j, 10), 0);
  j[10] = job(11, 50, 5);
  changed = sm__order_plan(j, 11);
  ASSERT_EQ(changed, 1);
  ASSERT_EQ(j[10].rank, 0);
  ASSERT(j[10].target > j[0].target);
  check_targets(j, 11);
}

SM_TEST(slurm_order_equal_priorities_and_extremes) {
  /* Equal priorities (multifactor can give them) and values at the ends
   * of the range still give a strict order. */
  sm__oj j[6] = {job(1, 7, 50), job(2, 7, 40),
                 job(3, 7, 0),  job(4, SM__PRIO_MAX, 30),
                 job(5, 3, 20), job(6, 2, 10)};
  ASSERT(sm__order_plan(j, 6) > 0);
  check_targets(j, 6);
  apply(j, 6);
  ASSERT_EQ(sm__order_plan(j, 6), 0);
}

SM_TEST(slurm_order_random_queues) {
  sm_rng r;
  sm_rng_seed(&r, 42);
  for (int round = 0; round < 200; round++) {
    sm__oj j[40];
    int n = 1 + (int)(sm_rng_next(&r) % 40);
    for (int i = 0; i < n; i++) {
      uint32_t p = (uint32_t)(SM__PRIO_MIN + sm_rng_next(&r) % 5000);
      if (round % 7 == 0)
        p = (uint32_t)(SM__PRIO_MAX - sm_rng_next(&r) % 3);
      j[i] =
          job((uint32_t)i + 1, p,
              sm_rng_next(&r) % 3 ? 1 + (double)(sm_rng_next(&r) % 9000) : 0);
    }
    ASSERT(sm__order_plan(j, n) >= 0);
    check_targets(j, n);
    apply(j, n);
    ASSERT_EQ(sm__order_plan(j, n), 0);
    /* Fallback jobs sit exactly where Slurm's own order put them. */
    for (int a = 0; a < n; a++) {
      int place = 0;
      if (j[a].has_est)
        continue;
      for (int b = 0; b < n; b++)
        if (j[b].native > j[a].native ||
            (j[b].native == j[a].native && j[b].id < j[a].id))
          place++;
      ASSERT_EQ(j[a].rank, place);
    }
  }
}

SM_TEST(slurm_parse_gpus) {
  int n;
  char type[16];
  ASSERT_OK(sm_slurm_parse_gpus("gres:gpu:2", &n, type, sizeof(type)));
  ASSERT_EQ(n, 2);
  ASSERT_STREQ(type, "");
  ASSERT_OK(sm_slurm_parse_gpus("gres:gpu:A100:4", &n, type, sizeof(type)));
  ASSERT_EQ(n, 4);
  ASSERT_STREQ(type, "a100");
  ASSERT_OK(sm_slurm_parse_gpus("gres/gpu=8", &n, NULL, 0));
  ASSERT_EQ(n, 8);
  ASSERT_OK(sm_slurm_parse_gpus("gres:nic:1,gres:gpu:1", &n, NULL, 0));
  ASSERT_EQ(n, 1);
  ASSERT_OK(sm_slurm_parse_gpus("gpu", &n, NULL, 0));
  ASSERT_EQ(n, 1);
  ASSERT_OK(sm_slurm_parse_gpus("gres:gpumem:4G", &n, NULL, 0));
  ASSERT_EQ(n, 0);
  ASSERT_OK(sm_slurm_parse_gpus("", &n, NULL, 0));
  ASSERT_EQ(n, 0);
  /* Malformed GPU entries. */
  ASSERT_EQ(sm_slurm_parse_gpus("gres:gpu:a:b:c", &n, NULL, 0), SM_EPARSE);
  ASSERT_EQ(sm_slurm_parse_gpus("gres:gpu:", &n, NULL, 0), SM_EPARSE);
  ASSERT_EQ(sm_slurm_parse_gpus("gres:gpu:99999999999", &n, NULL, 0),
            SM_EPARSE);
  ASSERT_EQ(sm_slurm_parse_gpus("gres:gpu:a100:x:\xff", &n, NULL, 0),
            SM_EPARSE);
}

SM_TEST(slurm_comment_merge) {
  char *c = sm__comment_merge(NULL, "schedmate: est 5m");
  ASSERT_STREQ(c, "schedmate: est 5m");
  sm_free(c);
  c = sm__comment_merge("my run", "schedmate: est 5m");
  ASSERT_STREQ(c, "my run | schedmate: est 5m");
  sm_free(c);
  /* Our earlier part is replaced, the user's kept. */
  c = sm__comment_merge("my run | schedmate: no estimate (no_match)",
                        "schedmate: est 5m");
  ASSERT_STREQ(c, "my run | schedmate: est 5m");
  ASSERT_STREQ(sm__comment_note(c), "schedmate: est 5m");
  sm_free(c);
  c = sm__comment_merge("schedmate: est 1m", "schedmate: est 5m");
  ASSERT_STREQ(c, "schedmate: est 5m");
  sm_free(c);
  ASSERT(sm__comment_note("nothing of ours") == NULL);
  ASSERT(sm__comment_note(NULL) == NULL);
  ASSERT_STREQ(sm_slurm_state_name(SM_SJ_NODE_FAIL), "NODE_FAIL");
  ASSERT_STREQ(sm_slurm_state_name(99), "UNKNOWN");
  ASSERT(sm_slurm_state_ended(SM_SJ_FAILED));
  ASSERT(!sm_slurm_state_ended(SM_SJ_RUNNING));
}
