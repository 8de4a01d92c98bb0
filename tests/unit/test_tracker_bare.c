/* test_tracker_bare.c - bare "STEP VALUE" pairs that are no training
 * loss: a two-column table or a print(step, accuracy) under a head that
 * names the metric, and values that rise in [0, 1].  Every line is
 * written for the test, with made-up numbers. */
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

static int head(const char *s) {
  return sm__trk_metric_head(s, strlen(s));
}

SM_TEST(track_bare_metric_heads) {
  char big[400];

  ASSERT_EQ(head("step accuracy"), 1);
  ASSERT_EQ(head("# epoch  val_acc"), 1);
  ASSERT_EQ(head("iter,F1"), 1);
  ASSERT_EQ(head("Step BLEU"), 1);
  ASSERT_EQ(head("step mAP"), 1);
  ASSERT_EQ(head("step loss"), -1);
  ASSERT_EQ(head("epoch train_loss val_acc"), -1);
  ASSERT_EQ(head("step time"), 0);
  /* A row, prose and malformed input are no heads. */
  ASSERT_EQ(head("3 0.91"), 0);
  ASSERT_EQ(head("accuracy 0.91"), 0);
  ASSERT_EQ(head("the best accuracy so far was reached at this point"), 0);
  ASSERT_EQ(head(""), 0);
  ASSERT_EQ(sm__trk_metric_head("acc\xff\xfe", 5), 0);
  ASSERT_EQ(sm__trk_metric_head("\x00\x01\x02", 3), 0);
  memset(big, ' ', sizeof(big));
  memcpy(big, "step acc", 8);
  ASSERT_EQ(sm__trk_metric_head(big, sizeof(big)), 0);
  /* A word longer than any metric is no metric. */
  ASSERT_EQ(head("step accuracyaccuracyaccuracy"), 0);
}

SM_TEST(track_bare_metric_like_runs) {
  trk_bare b;
  const double acc[] = {0.12, 0.35, 0.51, 0.49, 0.62, 0.70, 0.74, 0.80};
  const double loss[] = {0.93, 0.71, 0.55, 0.58, 0.49, 0.47};
  const double big[] = {2.1, 2.4, 2.9, 3.5};

  memset(&b, 0, sizeof(b));
  for (size_t i = 0; i < SM_ARRAY_LEN(acc); i++)
    sm__trk_bare_value(&b, i == 0, acc[i]);
  ASSERT_EQ(sm__trk_bare_metric_like(&b), 1);
  for (size_t i = 0; i < SM_ARRAY_LEN(loss); i++)
    sm__trk_bare_value(&b, i == 0, loss[i]);
  ASSERT_EQ(sm__trk_bare_metric_like(&b), 0);
  /* A diverging loss rises, but beyond [0, 1]. */
  for (size_t i = 0; i < SM_ARRAY_LEN(big); i++)
    sm__trk_bare_value(&b, i == 0, big[i]);
  ASSERT_EQ(sm__trk_bare_metric_like(&b), 0);
  /* Two values are too few to say. */
  sm__trk_bare_value(&b, 1, 0.1);
  sm__trk_bare_value(&b, 0, 0.2);
  ASSERT_EQ(sm__trk_bare_metric_like(&b), 0);
}

SM_TEST(track_bare_pairs_that_are_no_loss) {
  sm_track_result r;

  /* print(step, accuracy): rising in [0, 1], no loss, no progress. */
  r = scan_text("0 0.12\n1 0.35\n2 0.51\n3 0.62\n4 0.70\n5 0.74\n");
  ASSERT_EQ(r.ok, 0);
  r = feed("0 0.12\n1 0.35\n2 0.51\n3 0.62\n4 0.70\n5 0.74\n");
  ASSERT_EQ(r.ok, 0);
  /* An error rate falls like a loss, but its head names the metric. */
  r = scan_text("step top1\n0 0.88\n1 0.61\n2 0.43\n3 0.40\n4 0.31\n");
  ASSERT_EQ(r.ok, 0);
  /* A falling loss in [0, 1] is read, under a loss head or none. */
  r = scan_text("0 0.93\n1 0.71\n2 0.55\n3 0.58\n4 0.49\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 4);
  ASSERT_NEAR(r.loss, 0.49, 1e-12);
  r = scan_text("step acc\n0 0.40\n1 0.50\n2 0.60\nstep loss\n"
                "0 2.93\n1 2.71\n2 2.55\n3 2.40\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 3);
  ASSERT_NEAR(r.loss, 2.40, 1e-12);
}
