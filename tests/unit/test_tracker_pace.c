/* test_tracker_pace.c - round 8 of issue 12: what a progress bar's rate
 * measures.  A bar drawn with smoothing off shows its loop's average
 * since it began (the current pace is in its elapsed clock); a bar's
 * first seconds show the start-up's rate.  Every log is written for the
 * test, with made-up numbers, in several bar shapes. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

/* h:mm:ss of whole seconds, as tqdm prints an elapsed time. */
static const char *clock_of(double secs, char *b, size_t cap) {
  long s = (long)secs;
  if (s >= 3600)
    snprintf(b, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(b, cap, "%02ld:%02ld", s / 60, s % 60);
  return b;
}

/* ==== Average rates ==== */

SM_TEST(track_pace_average_rate_bar_that_slowed_down) {
  /* A Lightning-style bar (s/it, metrics after the rate) whose rate is
   * the elapsed time over the count: 1000 steps at 3 s, then 12 steps
   * at 30 s.  The pace is the clock's, not the average. */
  text t = {0};
  char c[32];
  double el = 0;
  sm_track_result r;

  for (int i = 1; i <= 1012; i++) {
    el += i <= 1000 ? 3.0 : 30.0;
    add(&t,
        "\rEpoch 0:  %d%%|##   | %d/4000 [%s<2:00:00, %.2fs/it, v_num=7, "
        "train_loss=0.%03d]",
        i * 100 / 4000, i, clock_of(el, c, sizeof(c)), el / i, 900 - i / 2);
  }
  add(&t, "\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 1012);
  ASSERT_NEAR(r.step_time_s, 30.0, 1.5);
  ASSERT_STREQ(r.step_time_basis, "timestamps");

  /* An it/s bar on its own lines (a notebook's kept states) that sped
   * up from 3 s to 1 s a step: the pace over the clock's span (deltas
   * of 4 s, a span of 36 s). */
  t.n = 0;
  el = 0;
  for (int i = 1; i <= 640; i++) {
    el += i <= 600 ? 3.0 : 1.0;
    if (i % 4 == 0)
      add(&t, "Training: %d%%|###  | %d/2000 [%s<40:00, %.2fit/s]\n",
          i * 100 / 2000, i, clock_of(el, c, sizeof(c)), i / el);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 640);
  ASSERT_NEAR(r.step_time_s, 1.0, 0.05);
  free(t.s);
}

SM_TEST(track_pace_moving_average_and_coarse_clocks_keep_the_rate) {
  /* A moving-average bar (tqdm's default): the rate is the current pace
   * and differs from count / elapsed; it is kept. */
  text t = {0};
  char c[32];
  double el = 0;
  sm_track_result r;

  for (int i = 1; i <= 1012; i++) {
    el += i <= 1000 ? 3.0 : 30.0;
    add(&t, "\r %d%%|##   | %d/4000 [%s<2:00:00, %.2fs/it]", i * 100 / 4000, i,
        clock_of(el, c, sizeof(c)), i <= 1000 ? 3.0 : 28.0);
  }
  add(&t, "\n");
  r = scan_text(t.s);
  ASSERT_NEAR(r.step_time_s, 28.0, 0.01);
  ASSERT_STREQ(r.step_time_basis, "explicit");

  /* An average rate in steady state: the rate. */
  t.n = 0;
  el = 0;
  for (int i = 1; i <= 300; i++) {
    el += 1.25;
    add(&t, "\rEpoch 3:  %d%%|#  | %d/900 [%s<12:00, %.2fit/s, v_num=1]",
        i * 100 / 900, i, clock_of(el, c, sizeof(c)), i / el);
  }
  add(&t, "\n");
  r = scan_text(t.s);
  ASSERT_NEAR(r.step_time_s, 1.25, 0.02);
  ASSERT_STREQ(r.step_time_basis, "explicit");

  /* A fast bar: its whole-second clock cannot time a step; the rate. */
  t.n = 0;
  el = 0;
  for (int i = 1; i <= 3000; i++) {
    el += i <= 2990 ? 0.05 : 0.2;
    add(&t, "\rEpoch 1:  %d%%|#  | %d/9000 [%s<12:00, %.2fit/s, v_num=1]",
        i * 100 / 9000, i, clock_of(el, c, sizeof(c)), i / el);
  }
  add(&t, "\n");
  r = scan_text(t.s);
  ASSERT(r.step_time_s > 0.04 && r.step_time_s < 0.06);
  free(t.s);
}

/* ==== A bar's first seconds ==== */

SM_TEST(track_pace_first_seconds_of_a_bar_are_no_measure) {
  /* Two kept states of one bar: its start and two hours on. */
  sm_track_result r =
      scan_text("  0%|          | 6/69000 [00:01<4:46:24,  4.06it/s]\n"
                "log line of another writer\n"
                " 35%|###       | 24000/69000 [2:03:48<7:09:28,  1.77it/s]\n");
  ASSERT_EQ(r.step, 24000);
  ASSERT_NEAR(r.step_time_s, 1 / 1.77, 1e-3);

  /* s/it bars, three states, the first at 2 s. */
  r = scan_text("Epoch 2:   0%| | 2/500 [00:02<10:00, 0.90s/it]\n"
                "Epoch 2:  40%| | 200/500 [04:10<06:15, 1.25s/it]\n"
                "Epoch 2:  60%| | 300/500 [06:15<04:10, 1.25s/it]\n");
  ASSERT_EQ(r.step, 300);
  ASSERT_NEAR(r.step_time_s, 1.25, 1e-3);

  /* Near miss: a bar that has run under a minute keeps every state. */
  r = scan_text("  1%| | 5/900 [00:05<15:00, 1.00it/s]\n"
                "  3%| | 25/900 [00:20<12:00, 1.25it/s]\n"
                "  5%| | 45/900 [00:36<11:00, 1.25it/s]\n");
  ASSERT_EQ(r.step, 45);
  ASSERT_NEAR(r.step_time_s, 0.8, 1e-3);
}

SM_TEST(track_pace_malformed_clocks) {
  /* Clocks that go back, zero and absurd values: no crash, a positive
   * step time or none. */
  sm_track_result r = scan_text(
      "Epoch 0: 10%| | 100/1000 [10:00<90:00, 6.00s/it, v_num=1]\n"
      "Epoch 0: 10%| | 110/1000 [00:00<90:00, 6.00s/it, v_num=1]\n"
      "Epoch 0: 12%| | 120/1000 [99:59:59<0:00, 0.00s/it, v_num=1]\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT(r.step_time_s != r.step_time_s || r.step_time_s > 0);
}

/* ==== A bar's description that prints its position ==== */

SM_TEST(track_pace_description_fraction_gives_the_total_every_epoch) {
  /* A bar without a total whose description prints the position as a
   * fraction: the fraction's denominator is the loop's total in every
   * epoch, so an evaluation bar of another total between epochs is a
   * loop of its own, not the newest training step. */
  text t = {0};
  sm_track_result r;
  sm_track_sample s;

  for (int ep = 0; ep < 3; ep++) {
    for (int i = 398; i <= 400; i++)
      add(&t,
          "Train Epoch: %d [%d/400 (%d%%)] Loss: %d.%02d: : %dit [06:%02d, "
          " 1.10s/it]\n",
          ep, i, i / 4, 9 - ep, i % 100, i, i % 60);
    add(&t, "100%%|#####| 512/512 [01:40<00:00,  5.10it/s]\n");
  }
  add(&t, "Traceback (most recent call last):\n"
          "RuntimeError: CUDA out of memory.\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 400);
  ASSERT_EQ(r.total_steps, 400);
  ASSERT_NEAR(r.loss, 7.0, 1e-9);

  s = P("epoch 3 batch [120/400] loss 0.5: 120it [00:40,  3.00it/s]");
  ASSERT_EQ(s.step, 120);
  ASSERT_EQ(s.has_total, 1);
  ASSERT_EQ(s.total, 400);
  /* A global counter keeps its rule: a fraction of a later epoch is
   * that epoch's batches. */
  s = P("Epoch 2: 9000/12000 [05:00<01:40, 30.0it/s, global_step=9000]");
  ASSERT_EQ(s.step, 9000);
  free(t.s);
}

SM_TEST(track_pace_a_pause_in_the_clock_keeps_the_rate) {
  /* An average-rate bar at 0.5 s a step whose clock ran through a
   * one-minute pause inside the window (a checkpoint written, a
   * validation run between updates): the whole-second span is the
   * pause's, not the pace; the rate is kept. */
  text t = {0};
  char c[32];
  double el = 3000;
  sm_track_result r;

  for (int i = 6000; i <= 6012; i++) {
    el += i == 6008 ? 60.0 : 0.5;
    add(&t, "\rEpoch 1:  %d%%|##   | %d/9000 [%s<25:00, %.2fit/s, v_num=2]",
        i * 100 / 9000, i, clock_of(el, c, sizeof(c)), i / el);
  }
  add(&t, "\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 6012);
  ASSERT(r.step_time_s > 0.45 && r.step_time_s < 0.56);
  free(t.s);
}
