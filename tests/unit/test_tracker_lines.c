/* test_tracker_lines.c - round 5: line shapes the Tracker met on logs it
 * was not tuned on.  A Python warning written onto the end of a progress
 * line (a print with end=''), ordinal counters ("1200th step"), a step
 * counter on a line of its own with its loss on the next line, and a
 * counter whose only losses are named terms (RL trainers).  Every input
 * is written here; malformed and near-miss variants beside each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"

/* ==== A warning glued to the end of a progress line ==== */

SM_TEST(track_lines_python_warning_glued_to_progress) {
  /* Every 10 iterations: the loop's timer, then its progress printed
   * without a newline, and the warnings module's report written after
   * it on the same line, its source line below. */
  sm_buf b;
  sm_track_result r, f;
  sm_buf_init(&b, 0);
  for (int i = 0; i <= 20; i++)
    sm_buf_addf(&b,
                "timer: 0.%04d sec.\n"
                "iter %d || Loss: %.4f || /home/u/det/utils/aug.py:91: "
                "RuntimeWarning: invalid value encountered in divide\n"
                "  ratio = area / union\n",
                4100 + i % 5 * 10, 5000 + 10 * i, 1.5 - i * 0.01);
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 5200);
  ASSERT_NEAR(r.loss, 1.3, 1e-9);
  ASSERT(r.step_time_s > 0.40 && r.step_time_s < 0.43);
  /* The same text read forward gives the same answer. */
  f = feed(b.data);
  ASSERT_EQ(f.ok, 1);
  ASSERT_EQ(f.step, 5200);
  ASSERT_NEAR(f.loss, 1.3, 1e-9);
  sm_buf_release(&b);
}

SM_TEST(track_lines_python_warning_near_misses) {
  /* A warning on a line of its own (no text before its location), a
   * file name that merely ends in ".py:" and a location without a
   * warning category are not split off; none of them is progress. */
  sm_track_result r;
  r = feed("/opt/lib/x.py:12: UserWarning: argument 'size_average' is "
           "deprecated\n  warnings.warn(msg)\n"
           "/opt/lib/x.py:12: UserWarning: argument 'size_average' is "
           "deprecated\n  warnings.warn(msg)\n");
  ASSERT_EQ(r.ok, 0);
  /* A progress line is still read when its tail is not a warning's
   * location ("run.py:3: note"), and it is not cut. */
  r = feed("step 10 loss 0.50 see run.py:3: note\n"
           "step 11 loss 0.49 see run.py:3: note\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 11);
  ASSERT_NEAR(r.loss, 0.49, 1e-12);
  /* A line of the warning alone after the progress: the progress stays. */
  r = feed("step 10 loss 0.50\n"
           "step 11 loss 0.49 /a/b.py:7: FutureWarning: x\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 11);
  ASSERT_NEAR(r.loss, 0.49, 1e-12);
  /* Malformed: the location cut short at the end of the line, digits
   * missing, a category without its colon, a huge run without blanks. */
  ASSERT_EQ(feed("step 3 loss 0.4 x.py:\n").step, 3);
  ASSERT_EQ(feed("step 3 loss 0.4 x.py:: UserWarning: y\n").step, 3);
  ASSERT_EQ(feed("step 3 loss 0.4 x.py:9: UserWarning\n").step, 3);
  {
    sm_buf b;
    sm_buf_init(&b, 0);
    sm_buf_addf(&b, "step 4 loss 0.4 ");
    for (int i = 0; i < 20000; i++)
      sm_buf_addf(&b, ".py:");
    sm_buf_addf(&b, "\n");
    r = feed(b.data);
    ASSERT_EQ(r.ok, 1);
    ASSERT_EQ(r.step, 4);
    sm_buf_release(&b);
  }
}

/* ==== Ordinal counters and a step counter on a line of its own ==== */

SM_TEST(track_lines_ordinal_counter) {
  sm_track_sample s = P("Iteration 1200th: loss 0.31");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 1200);
  ASSERT_NEAR(s.loss, 0.31, 1e-12);
  s = P("epoch 3rd, step: 22nd, loss=0.5");
  ASSERT_EQ(s.step, 22);
  ASSERT_NEAR(s.epoch, 3, 0);
  s = P("step: 1st loss 2.0");
  ASSERT_EQ(s.step, 1);
  /* Not an ordinal: a fraction's total, a word going on ("5thousand"),
   * a negative count, other two-letter units. */
  s = P("step: 5ms loss 2.0");
  ASSERT(s.step != 5 || s.has_step == 0);
  ASSERT_EQ(P("step: -3rd loss 2.0").step == -3, 0);
  s = P("batch 7theta 0.3");
  ASSERT_EQ(s.has_step == 1 && s.step == 7, 0);
}

SM_TEST(track_lines_counter_alone_loss_below) {
  /* "current step: Nth step", then the step's loss on its own line; the
   * log ends after a step line whose loss was not printed yet. */
  sm_buf b;
  sm_track_result r, f;
  sm_track_sample s = P("current step: 58th step");
  ASSERT_EQ(s.kind, SM_TK_POSITION);
  ASSERT_EQ(s.step, 58);
  ASSERT_EQ(P("iteration: 1200").kind, SM_TK_POSITION);
  /* Not alone: a second number, a fraction, a unit, a blank separator
   * ("step 5" in a sentence), a checkpoint notice. */
  ASSERT(P("step: 5 of 9").kind != SM_TK_POSITION);
  ASSERT(P("step: 5/9").kind != SM_TK_POSITION);
  ASSERT(P("step: 5ms").kind != SM_TK_POSITION);
  ASSERT(P("moving to step 5").kind != SM_TK_POSITION);
  ASSERT(P("Saving checkpoint at step: 5000").kind != SM_TK_SAMPLE);
  sm_buf_init(&b, 0);
  for (int i = 1; i <= 30; i++)
    sm_buf_addf(&b, "current step: %dth step\nbatch loss:%.6f\n", 900 + i,
                0.5 - i * 0.001);
  sm_buf_addf(&b, "model saved in file: ./ckpt/model-930 / 930 th step\n"
                  "current step: 931th step\n");
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 931);
  ASSERT_NEAR(r.loss, 0.47, 1e-9);
  ASSERT_STREQ(r.step_scope, "global");
  f = feed(b.data);
  ASSERT_EQ(f.ok, 1);
  ASSERT_EQ(f.step, 931);
  ASSERT_NEAR(f.loss, 0.47, 1e-9);
  sm_buf_release(&b);
  /* Step lines alone and nothing else: where the loop is, no loss. */
  r = feed("step: 10\nstep: 11\nstep: 12\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 12);
  ASSERT_NAN(r.loss);
}

/* ==== A counter whose only losses are named terms ==== */

SM_TEST(track_lines_counter_with_loss_terms_only) {
  /* An RL trainer's metrics line: the objective, the critic's and the
   * entropy terms, no whole loss.  A training step, its loss unknown. */
  sm_buf b;
  sm_track_result r;
  sm_track_sample s =
      P("2025-01-02 10:00:01.500 | INFO | train:log:30 - iter=0042 "
        "reward=0.31 entropy=1.5 loss_critic=0.0100 loss_entropy=-0.0150 "
        "loss_objective=0.2500 clip_fraction=0.05");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 42);
  ASSERT_NAN(s.loss);
  s = P("Iter 40 loss_cls 0.31 loss_bbox 0.12");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 40);
  /* A counter beside figures that are not losses stays no sample, and
   * an evaluation's terms are not training. */
  ASSERT(P("iter=0042 reward=0.31 entropy=1.5").kind != SM_TK_SAMPLE);
  ASSERT(P("iter=42 val_loss_cls=0.3").kind != SM_TK_SAMPLE);
  ASSERT(P("iter=42 loss_scale=65536").kind != SM_TK_SAMPLE);
  sm_buf_init(&b, 0);
  for (int i = 0; i < 20; i++)
    sm_buf_addf(&b,
                "2025-01-02 10:%02d:%02d.000 | INFO | train:log:30 - "
                "iter=%04d reward=0.3 loss_critic=0.01 loss_objective=0.2\n",
                i * 2 / 60, i * 2 % 60, 100 + i);
  /* The run restarted at the end and printed only its start-up. */
  sm_buf_addf(&b, "2025-01-02 11:00:00.000 | INFO | main:33 - Logger "
                  "initialized (level=INFO)\n"
                  "2025-01-02 11:00:00.010 | INFO | main:98 - config "
                  "Config(max_iterations=100, gamma=0.99)\n");
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 119);
  ASSERT_NAN(r.loss);
  ASSERT_NEAR(r.step_time_s, 2.0, 1e-6);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  sm_buf_release(&b);
  /* Malformed: terms without values, a term that is text. */
  ASSERT(P("iter=5 loss_critic= loss_objective=").kind != SM_TK_SAMPLE);
  ASSERT(P("iter=5 loss_critic=abc").kind != SM_TK_SAMPLE);
}

/* ==== Month-name timestamps ==== */

static double stamp(const char *s) {
  return sm_track_timestamp(s, strlen(s), NULL);
}

SM_TEST(track_lines_month_name_timestamps) {
  /* strftime's "%b %d, %H:%M:%S" and syslog's "%b %d %H:%M:%S": only the
   * differences matter (the year is not printed). */
  double a = stamp("[Mar 29, 16:34:19] 1004 5.31");
  double b = stamp("[Mar 29, 16:34:28] 1016 5.29");
  ASSERT(a == a && b == b);
  ASSERT_NEAR(b - a, 9, 1e-9);
  ASSERT_NEAR(stamp("Mar 30, 00:00:01 x") - stamp("Mar 29, 23:59:59 x"), 2,
              1e-9);
  ASSERT_NEAR(stamp("Dec  3 01:02:03 host kernel: x") -
                  stamp("Dec  3 01:02:00 host kernel: x"),
              3, 1e-9);
  ASSERT_NEAR(stamp("Mar 29, 2024 16:34:28 step 5") -
                  stamp("Mar 29, 2024 16:34:27 step 4"),
              1, 1e-9);
  /* Not a date: a word ending in a month's letters, a day past 31, a
   * clock without seconds, no clock at all, a month name cut short. */
  ASSERT_NAN(stamp("Summar 29 12:00:00 x"));
  ASSERT_NAN(stamp("Mar 32, 16:34:28 x"));
  ASSERT_NAN(stamp("Mar 29, 16:34 x"));
  ASSERT_NAN(stamp("Mar 29, step 5"));
  ASSERT_NAN(stamp("ar 29, 16:34:28"));
  ASSERT_NAN(stamp("Mar 2"));
}

/* ==== Bare "STEP VALUE" lines ==== */

SM_TEST(track_lines_bare_step_value_pairs) {
  /* print_message(step, loss): the step and a running loss, unlabelled,
   * stamped to the second; other output between the lines. */
  sm_buf b;
  sm_track_result r, f;
  sm_track_sample s = P("[Mar 29, 16:34:28] 1016 5.2992431529");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.bare_pair, 1);
  ASSERT_EQ(s.step, 1016);
  ASSERT_NEAR(s.loss, 5.2992431529, 1e-12);
  /* Not a pair: a key, a word, two integers, a fraction first, a unit,
   * three values, a value in brackets. */
  ASSERT_EQ(P("loss 1016 5.29").bare_pair, 0);
  ASSERT_EQ(P("1016 5.29 done").bare_pair, 0);
  ASSERT_EQ(P("1016 5").bare_pair, 0);
  ASSERT_EQ(P("5.29 1016").bare_pair, 0);
  ASSERT_EQ(P("1016 5.29s").bare_pair, 0);
  ASSERT_EQ(P("7.7 13.3 13.2").bare_pair, 0);
  ASSERT_EQ(P("1016 [5.29]").bare_pair, 0);
  ASSERT_EQ(P("-3 5.29").bare_pair, 0);
  sm_buf_init(&b, 0);
  for (int i = 0; i <= 40; i++)
    sm_buf_addf(&b, "[Mar 29, 16:%02d:%02d] %d %.10f\nTrue\n%s",
                34 + (int)(i * 0.75) / 60, (int)(i * 0.75) % 60, 980 + i,
                5.4 - i * 0.001,
                i % 2 ? "#>>>    6.19 6.33 \t\t|\t\t -0.14\n" : "");
  sm_buf_addf(&b, "#> Done with all triples!\n");
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 1020);
  ASSERT_NEAR(r.loss, 5.36, 1e-9);
  /* Whole seconds over 0.75 s steps: the span, not rounded deltas. */
  ASSERT(r.step_time_s > 0.6 && r.step_time_s < 0.9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  f = feed(b.data);
  ASSERT_EQ(f.ok, 1);
  ASSERT_EQ(f.step, 1020);
  sm_buf_release(&b);
  /* Pairs that do not advance by one stride are no run: a table of
   * values, a histogram printed out of order, two pairs only. */
  ASSERT_EQ(feed("3 0.12\n1 0.40\n7 0.33\n2 0.90\n5 0.10\n").ok, 0);
  ASSERT_EQ(feed("0 0.12\n1 0.40\n").ok, 0);
  ASSERT_EQ(feed("10 0.5\n20 0.4\n25 0.3\n27 0.2\n").ok, 0);
  /* A run that restarts: the newest run's steps once it has three. */
  r = feed("0 0.9\n1 0.8\n2 0.7\n3 0.6\n0 0.95\n1 0.85\n2 0.75\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 2);
  ASSERT_NEAR(r.loss, 0.75, 1e-12);
  /* Malformed: a pair of nan, of inf, huge integers, a stride of 0. */
  ASSERT_EQ(P("5 nan").bare_pair, 0);
  ASSERT_EQ(P("5 inf").bare_pair, 0);
  ASSERT_EQ(feed("99999999999999999999 0.5\n99999999999999999999 0.4\n").ok, 0);
  ASSERT_EQ(feed("4 0.5\n4 0.4\n4 0.3\n4 0.2\n").ok, 0);
}

/* ==== A bare "total" as the loss ==== */

SM_TEST(track_lines_bare_total_is_the_loss) {
  /* The total of the loss terms printed under "total" alone. */
  sm_track_result r;
  sm_track_sample s = P("[epoch: 17/200, iter: 425/489] total: 1.355443 ");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 425);
  ASSERT_NEAR(s.loss, 1.355443, 1e-12);
  ASSERT_NEAR(s.epoch, 17, 0);
  r = feed("[epoch: 3/9, iter: 25/50] total: 1.3\n"
           "[epoch: 3/9, iter: 50/50] total: 1.2\n"
           "Percentage of used data: 21.25%\n"
           "[epoch: 4/9, iter: 0/50] total: 1.1\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 1.1, 1e-12);
  /* A count, a unit, a sentence, a total beside the loss: not the loss. */
  ASSERT_NEAR(P("step: 5 total: 489 loss: 0.3").loss, 0.3, 1e-12);
  ASSERT_NAN(P("step: 5 total: 489").loss);
  ASSERT_NAN(P("step: 5 total: 4.5MB").loss);
  ASSERT_NAN(P("step 5 in total 4.5 of them").loss);
  ASSERT_NEAR(P("step: 5 loss: 0.3 total: 0.9").loss, 0.3, 1e-12);
  /* Malformed: no value, text, nan. */
  ASSERT_NAN(P("step: 5 total:").loss);
  ASSERT_NAN(P("step: 5 total: abc").loss);
}
