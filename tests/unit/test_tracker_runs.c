/* test_tracker_runs.c - step semantics and runs that ended: counters and
 * their scope, restarts and resumes, ranks, epoch summaries, loops that
 * are not training, stale bars, the bases of the step time, input that
 * is not text, and following a file that is truncated or rotated.  Every
 * line here is written for the test in the shape of a format class, with
 * made-up numbers. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

static void tmpname(char *path) {
  int fd;
  strcpy(path, "/tmp/sm_track_runs_XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
}

static void write_file(const char *path, const char *mode, const char *text,
                       size_t n) {
  FILE *f = fopen(path, mode);
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(text, 1, n, f), n);
  ASSERT_OK(fclose(f));
}

/* ==== Counters ==== */

SM_TEST(track_abbreviated_counters) {
  /* Compact robot-learning loggers print "step:12K"; tqdm's unit_scale
   * prints "12.9kit/200kit".  The episodes beside "ep:" are no epoch. */
  sm_track_sample s =
      P("INFO 2025-03-01 10:00:00 train.py:300 step:12K smpl:400K ep:30 "
        "epch:2.50 loss:0.512 grdn:3.1 lr:1.0e-04 updt_s:0.300 data_s:0.020");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 12000);
  ASSERT_EQ(s.coarse, 1);
  ASSERT_NEAR(s.epoch, 2.5, 0);
  ASSERT_NEAR(s.loss, 0.512, 1e-12);
  s = P("Progress on: 12.9kit/200kit rate:1.4it/s remaining:1.5h");
  ASSERT_EQ(s.step, 12900);
  ASSERT_EQ(s.total, 200000);
  /* A time unit is no count: "step 10ms" gives no step. */
  s = P("step 10ms loss 0.5");
  ASSERT_EQ(s.has_step, 0);
}

SM_TEST(track_abbreviated_counter_times_from_timestamps) {
  /* Every 100 steps, 40 s apart; "12K" is printed for 11.5K..12.4K.  The
   * first line of each rounded value dates it, so the step time comes
   * out of the timestamps at 0.4 s. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 11000; s <= 15000; s += 100) {
    int t = (s - 11000) / 100 * 40;
    sm_buf_addf(&b,
                "INFO 2025-03-01 %02d:%02d:%02d train.py:300 step:%dK "
                "smpl:%dK loss:0.4%02d lr:1.0e-04\n",
                10 + t / 3600, t / 60 % 60, t % 60, (s + 500) / 1000, s / 30,
                s % 97);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 15000);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  ASSERT(r.step_time_s > 0.3 && r.step_time_s < 0.5);
  sm_buf_release(&b);
}

SM_TEST(track_counter_past_its_total_is_no_position) {
  /* "[8/6": eight of six is nothing a loop prints. */
  ASSERT_EQ(P("[8/6").has_step, 0);
  ASSERT_EQ(feed("[8/6").ok, 0);
  ASSERT_EQ(feed("[8/6\n").ok, 0);
  ASSERT_EQ(P(" 12/10 [00:10<00:00, 1.2it/s]").has_step, 0);
  ASSERT_EQ(P("iteration 1200/ 1000 | lm loss: 2.1").has_step, 0);
  /* At its total it is. */
  ASSERT_EQ(P(" 10/10 [00:10<00:00, 1.2it/s]").step, 10);
}

SM_TEST(track_bracketed_epoch_and_batch_without_total) {
  /* SwAV/DINO-style meters: "Epoch: [e][i]" without batches per epoch,
   * after a day/month/year timestamp and an elapsed clock. */
  sm_track_sample s = P("INFO - 03/11/21 10:00:05 - 1:00:00 - Epoch: "
                        "[12][100]\tTime 0.512 (0.600)\tData 0.001 (0.020)\t"
                        "Loss 3.2100 (3.2500)\tLr: 0.0300");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 100);
  ASSERT_EQ(s.has_total, 0);
  ASSERT_NEAR(s.epoch, 12, 0);
  ASSERT_NEAR(s.loss, 3.21, 1e-12);
  ASSERT_NEAR(s.step_time, 0.512, 1e-12);
  ASSERT(s.ts == s.ts); /* the date is a timestamp, not a fraction */
}

SM_TEST(track_outer_inner_pairs_and_gan_losses) {
  /* "[scale : iteration]" of progressive GANs, like the tutorial's
   * "[epoch, batch]"; the generator's loss is the one reported, the
   * discriminator's only when it is alone. */
  sm_track_sample s = P("[2 :  4000] loss G : 3.210 loss D : -1.500");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 4000);
  ASSERT_NEAR(s.epoch, 2, 0);
  ASSERT_NEAR(s.loss, 3.21, 1e-12);
  s = P("[4/25][100/469] Loss_D: 0.4121 Loss_G: 2.9911 D(x): 0.81");
  ASSERT_NEAR(s.loss, 2.9911, 1e-12);
  s = P("2024-05-01 10:00:00 [3, 2000] loss: 1.234");
  ASSERT_EQ(s.step, 2000);
  ASSERT_NEAR(s.epoch, 3, 0);
  s = P("step 10 d_loss 0.71");
  ASSERT_NEAR(s.loss, 0.71, 1e-12);
}

SM_TEST(track_timestamps_with_a_year) {
  /* logging's %x (month first), day first where the first number is
   * over 12, day.month.year. */
  double a = sm_track_timestamp("09/03/20 02:40:21 x", 19, NULL);
  double b = sm_track_timestamp("09/03/20 02:40:55 x", 19, NULL);
  double c = sm_track_timestamp("09/04/20 02:40:55 x", 19, NULL);
  double d = sm_track_timestamp("[13/09/24 21:36:55] INFO", 24, NULL);
  double e = sm_track_timestamp("[14/09/24 21:36:55] INFO", 24, NULL);
  double f = sm_track_timestamp("24.07.2025 10:00:01 step", 24, NULL);
  double g = sm_track_timestamp("25.07.2025 10:00:01 step", 24, NULL);
  ASSERT_NEAR(b - a, 34, 1e-9);
  ASSERT_NEAR(c - b, 86400, 1e-9); /* Sept 3 -> Sept 4, month first */
  ASSERT_NEAR(e - d, 86400, 1e-9);
  ASSERT_NEAR(g - f, 86400, 1e-9);
  /* A decimal number is no date. */
  ASSERT_NAN(sm_track_timestamp("12.34 56:07:08", 14, NULL));
}

/* ==== Losses that are not numbers ==== */

SM_TEST(track_nonfinite_loss_as_a_tensor_prints_it) {
  sm_track_result r =
      feed("Epoch 0: :   1%| 100/10000 [01:00<99:00:00, v_num=1, "
           "reduced_train_loss=2.310, global_step=99.0, train_step_timing in "
           "s=0.500]\n"
           "Epoch 0: :   2%| 200/10000 [02:00<98:00:00, v_num=1, "
           "reduced_train_loss=nan.0, global_step=199.0, train_step_timing in "
           "s=0.500]\n");
  ASSERT_EQ(r.step, 199);
  ASSERT_NAN(r.loss); /* not the older 2.31 */
  ASSERT_EQ(r.loss_nonfinite, 1);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-12);
  r = feed("step: 5 loss: inf\n");
  ASSERT_EQ(r.loss_nonfinite, 1);
  r = feed("step 5 loss 1.5\n");
  ASSERT_EQ(r.loss_nonfinite, 0);
}

/* ==== Segments and text ==== */

SM_TEST(track_cursor_up_splits_a_glued_line) {
  /* A validation bar, the cursor moved up, and the epoch summary written
   * over it: two lines, not one. */
  sm_track_result r = feed(
      "\rValidation: |          | 0/? [00:00<?, ?it/s]\x1b[A[\x1b[37m12/05/24 "
      "10:00:00\x1b[0m] \x1b[34mINFO\x1b[0m   Epoch 6: v_loss 2.200e+00  loss "
      "3.600e-01\n"
      "\rValidation: |          | 0/? [00:00<?, ?it/s]\x1b[A[\x1b[37m12/05/24 "
      "10:04:00\x1b[0m] \x1b[34mINFO\x1b[0m   Epoch 7: v_loss 2.100e+00  loss "
      "3.500e-01\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0); /* epochs only: no step counter */
  ASSERT_NEAR(r.loss, 0.35, 1e-12);
  ASSERT_NEAR(r.epoch, 7, 0);
  ASSERT_NAN(r.step_time_s);
}

SM_TEST(track_input_that_is_not_text) {
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  sm_buf b;
  sm_rng g;

  tmpname(path);
  /* Random bytes with digits, slashes and brackets sprinkled in. */
  sm_buf_init(&b, 0);
  sm_rng_seed(&g, 12);
  for (int i = 0; i < 400000; i++) {
    unsigned v = (unsigned)(sm_rng_next(&g) & 0xff);
    char c = v % 7 == 0 ? "[8/6]0123456789\n"[v % 16] : (char)v;
    sm_buf_addc(&b, c);
  }
  write_file(path, "w", b.data, b.len);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 0);
  ASSERT_EQ(r.binary, 1);
  sm_buf_release(&b);

  /* A crashed writer's NUL padding after the last progress: the last
   * progress before the crash. */
  sm_buf_init(&b, 0);
  for (int s = 1; s <= 40; s++)
    sm_buf_addf(&b, "step=%d loss=%.2f lr=0.1 step_time=0.50s\n", s,
                3 - s / 100.0);
  for (int i = 0; i < (2 << 20); i++)
    sm_buf_addc(&b, '\0');
  write_file(path, "w", b.data, b.len);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 40);
  ASSERT_NEAR(r.loss, 2.6, 1e-12);
  sm_buf_release(&b);
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_scan_reads_each_byte_once) {
  /* The tail is read backwards once and replayed from memory: a small
   * log is read exactly once (the byte the reverse reader looks at to
   * drop a final newline included), however its lines are split. */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  sm_buf b;

  tmpname(path);
  sm_buf_init(&b, 0);
  sm_buf_adds(&b, "Epoch 1/3\n");
  for (int s = 1; s <= 300; s++)
    sm_buf_addf(&b, "\r%d/300 [==>...] - ETA: 1s - loss: 0.%03d", s, 999 - s);
  sm_buf_adds(&b, "\n300/300 [==============================] - 9s 30ms/step - "
                  "loss: 0.699\nEpoch 2/3\n");
  write_file(path, "w", b.data, b.len);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 300);
  ASSERT_EQ(r.bytes_read, b.len);
  sm_buf_release(&b);
  sm_tracker_free(t);
  unlink(path);
}

/* ==== Loops that are not training ==== */

SM_TEST(track_announced_feature_extraction_is_not_training) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  sm_buf_adds(&b, "Model vit_small built.\nExtracting features for train "
                  "set...\n");
  for (int i = 0; i < 200; i += 10)
    sm_buf_addf(&b,
                "  [%3d/200]  eta: 0:00:%02d    time: 0.%06d  data: 0.0003  "
                "max mem: 812\n",
                i, (200 - i) / 5, 150000 + i);
  sm_buf_adds(&b, " Total time: 0:00:31 (0.155 s / it)\nExtracting features "
                  "for val set...\n");
  for (int i = 0; i < 40; i += 10)
    sm_buf_addf(&b,
                "  [%2d/40]  eta: 0:00:05    time: 0.160000  data: 0.0003  "
                "max mem: 812\n",
                i);
  sm_buf_adds(&b, "20-NN classifier result: Top1: 61.2, Top5: 80.1\n");
  r = feed(b.data);
  ASSERT_EQ(r.ok, 0);
  sm_buf_release(&b);

  /* The same announcement before a training loop that prints its loss,
   * or before a loop that was running already, changes nothing. */
  r = feed("***** Running Evaluation *****\n"
           "step 10 | loss 2.5 | 0.41 s/step\nstep 20 | loss 2.4 | 0.40 "
           "s/step\n");
  ASSERT_EQ(r.step, 20);
  r = feed("[timer.py:215:stop] epoch=0/micro_step=20/global_step=10, "
           "RunningAvgSamplesPerSec=88.1, CurrSamplesPerSec=90.2\n"
           "***** Running Evaluation *****\n"
           "[timer.py:215:stop] epoch=0/micro_step=40/global_step=20, "
           "RunningAvgSamplesPerSec=88.3, CurrSamplesPerSec=89.9\n");
  ASSERT_EQ(r.step, 20);
}

SM_TEST(track_interleaved_training_and_validation_bars) {
  /* A notebook keeps only each bar's final state: a training bar with
   * its loss, then a validation bar without, every epoch, and a test bar
   * at the end. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 1; ep <= 6; ep++) {
    sm_buf_addf(&b, "100%% 60/60 [00:50<00:00,  1.%02dit/s, train_loss=0.%d]\n",
                18 + ep % 3, 90 - ep);
    sm_buf_adds(&b, "100% 8/8 [00:01<00:00,  7.50it/s]\n");
    sm_buf_addf(&b,
                "Epoch: %d, lr: 1.00e-03 - train loss: 8.%de-01 - valid "
                "loss: 5.0e-01\n",
                ep, 90 - ep);
  }
  sm_buf_adds(&b, "100% 8/8 [00:01<00:00,  7.80it/s]\nEpoch loaded: 6 - test "
                  "loss: 4.9e-01\n");
  r = feed(b.data);
  ASSERT_EQ(r.step, 60);
  ASSERT_EQ(r.total_steps, 60);
  ASSERT_NEAR(r.loss, 0.84, 1e-12);
  ASSERT(r.step_time_s > 0.8 && r.step_time_s < 0.86); /* 1/1.18..1.20 */
  ASSERT_STREQ(r.step_scope, "epoch");
  sm_buf_release(&b);
}

SM_TEST(track_stale_bar_and_checkpoint_positions) {
  /* A console capture kept one old bar; later only the checkpoint
   * callback says where training is. */
  sm_track_result r = feed(
      "Epoch 3: 100%|##########| 120/120 [00:40<00:00,  2.95it/s, v_num=1, "
      "train/loss_step=0.91]\n"
      "Epoch 28, global step 3480: 'val/acc' was not in top 1\n"
      "Epoch 29, global step 3600: 'val/acc' was not in top 1\n");
  ASSERT_EQ(r.step, 3600);
  ASSERT_EQ(r.has_total, 0);
  ASSERT_NEAR(r.epoch, 29, 0);
  ASSERT_NAN(r.loss); /* nothing newer than the bar measures it */
  ASSERT_NAN(r.step_time_s);
  ASSERT_STREQ(r.step_scope, "global");
  /* A bar newer than the callback stays the answer. */
  r = feed("Epoch 29, global step 3600: 'val/acc' was not in top 1\n"
           "Epoch 30:  50%|#####     | 60/120 [00:20<00:20,  2.95it/s, "
           "v_num=1, train/loss_step=0.88]\n");
  ASSERT_EQ(r.step, 60);
  ASSERT_NEAR(r.loss, 0.88, 1e-12);
  /* Positions alone. */
  r = feed("Epoch 4, global step 500: 'val_loss' was not in top 3\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 500);
  ASSERT_NAN(r.loss);
}

SM_TEST(track_epoch_summary_lines_are_not_steps) {
  /* fairseq-style inner lines carry the position in the epoch; the
   * end-of-epoch line averages the epoch and does not. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int u = 100; u <= 400; u += 100)
    sm_buf_addf(&b,
                "2024-01-01 10:%02d:00 | INFO | train_inner | epoch 003:    "
                "%d / 450 loss=2.%d, ups=0.5, wpb=2000, bsz=64, "
                "num_updates=%d, lr=0.001, train_wall=200, wall=%d\n",
                u / 100 * 4, u, 60 - u / 100, 900 + u, 4000 + u * 2);
  sm_buf_adds(&b,
              "2024-01-01 10:20:00 | INFO | valid | epoch 003 | valid on "
              "'valid' subset | loss 3.1 | num_updates 1350\n"
              "2024-01-01 10:20:00 | INFO | train | epoch 003 | loss 2.61 "
              "| ups 0.5 | num_updates 1350 | train_wall 1800 | wall 4900\n");
  r = feed(b.data);
  ASSERT_EQ(r.step, 1300);
  ASSERT_NEAR(r.loss, 2.56, 1e-12);
  ASSERT_NEAR(r.step_time_s, 2.0, 1e-9);
  sm_buf_release(&b);
}

/* ==== Scope, restarts, ranks ==== */

SM_TEST(track_scope_is_decided_per_log) {
  sm_track_result r;
  /* "Step" that goes back every epoch: per epoch. */
  r = feed("Epoch [1/5], Step [500/600], Loss: 0.40\n"
           "Epoch [1/5], Step [600/600], Loss: 0.38\n"
           "Epoch [2/5], Step [100/600], Loss: 0.36\n"
           "Epoch [2/5], Step [200/600], Loss: 0.35\n");
  ASSERT_EQ(r.step, 200);
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_NEAR(r.epoch, 2, 0);
  /* A step that goes on across epochs: global. */
  r = feed("epoch 1 step 1100 loss 0.40\nepoch 1 step 1200 loss 0.39\n"
           "epoch 2 step 1300 loss 0.38\nepoch 2 step 1400 loss 0.37\n");
  ASSERT_EQ(r.step, 1400);
  ASSERT_STREQ(r.step_scope, "global");
  /* A bar without an epoch that never goes back: the whole run. */
  r = feed(" 40%|####      | 400/1000 [04:00<06:00,  1.66it/s]\n"
           " 41%|####      | 410/1000 [04:06<05:54,  1.66it/s]\n");
  ASSERT_STREQ(r.step_scope, "global");
}

SM_TEST(track_restart_and_resume_use_the_newest_run) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  /* A run to step 1000 with its own timing, killed; a new launch from 0
   * that prints no loss yet: nothing of the old run leaks in. */
  for (int s = 100; s <= 1000; s += 100)
    sm_buf_addf(&b, "Step %d: grad_norm=1.2, loss=0.%03d, time=0.9s\n", s,
                500 - s / 10);
  sm_buf_adds(&b, "slurmstepd: error: *** JOB 42 CANCELLED AT 2025-01-01 "
                  "DUE TO TIME LIMIT ***\n");
  for (int s = 0; s <= 300; s += 100)
    sm_buf_addf(&b, "Step %d: grad_norm=1.0, time=0.5s\n", s);
  r = feed(b.data);
  ASSERT_EQ(r.step, 300);
  ASSERT_EQ(r.restarts, 1);
  ASSERT_NAN(r.loss);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-12);
  /* Resumed from a checkpoint at 13099 after reaching 13702. */
  sm_buf_reset(&b);
  for (int s = 13690; s <= 13702; s++)
    sm_buf_addf(&b,
                "[38/200], [%d/604], global_step: %d, loss: 1.%03d, "
                "time:0.80\n",
                s - 13098, s, s % 1000);
  for (int s = 13099; s <= 13104; s++)
    sm_buf_addf(&b,
                "[38/200], [%d/604], global_step: %d, loss: 2.%03d, "
                "time:0.90\n",
                s - 13098, s, s % 1000);
  r = feed(b.data);
  ASSERT_EQ(r.step, 13104);
  ASSERT_EQ(r.restarts, 1);
  ASSERT_NEAR(r.loss, 2.104, 1e-12);
  ASSERT_NEAR(r.step_time_s, 0.9, 1e-12);
  /* A run whose epoch goes back (a new launch of an epoch loop). */
  sm_buf_reset(&b);
  for (int ep = 97; ep <= 99; ep++)
    sm_buf_addf(&b, "Epoch: [%d][50]\tTime 0.700 (0.710)\tLoss 2.1 (2.1)\n",
                ep);
  sm_buf_adds(&b, "Epoch: [0][0]\tTime 2.700 (2.700)\tLoss 6.9 (6.9)\n"
                  "Epoch: [0][50]\tTime 0.650 (0.900)\tLoss 6.1 (6.3)\n");
  r = feed(b.data);
  ASSERT_EQ(r.step, 50);
  ASSERT_NEAR(r.epoch, 0, 0);
  ASSERT_NEAR(r.loss, 6.1, 1e-12);
  ASSERT_EQ(r.restarts, 1);
  sm_buf_release(&b);
}

SM_TEST(track_ranks_out_of_step) {
  /* Rank 1 prints one step behind rank 0: neither the newest step nor a
   * restart. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 1; s <= 20; s++) {
    sm_buf_addf(&b, "[rank0]: step=%d loss=2.%02d lr=0.1 step_time=0.5s\n", s,
                s);
    if (s > 1)
      sm_buf_addf(&b, "[rank1]: step=%d loss=2.%02d lr=0.1 step_time=0.5s\n",
                  s - 1, s - 1);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 20);
  ASSERT_EQ(r.restarts, 0);
  ASSERT_NEAR(r.loss, 2.2, 1e-12);
  /* The same with srun -l labels. */
  sm_buf_reset(&b);
  for (int s = 1; s <= 20; s++) {
    sm_buf_addf(&b, "0: iter %d: loss 3.%02d, time 120.0ms\n", s, s);
    if (s > 1)
      sm_buf_addf(&b, "1: iter %d: loss 3.%02d, time 120.0ms\n", s - 1, s - 1);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 20);
  sm_buf_release(&b);
}

/* ==== Step time ==== */

SM_TEST(track_step_time_from_throughput_and_batch) {
  /* No per-step time printed, a global batch and the samples per second
   * beside it. */
  sm_track_result r =
      feed("step 100 | loss 2.10 | global batch size: 256 | samples per "
           "second: 512.0\n"
           "step 110 | loss 2.09 | global batch size: 256 | samples per "
           "second: 510.0\n");
  ASSERT_STREQ(r.step_time_basis, "throughput");
  ASSERT(r.step_time_s > 0.49 && r.step_time_s < 0.51);
  /* Tokens per update over tokens per second (fairseq's wpb and wps). */
  r = feed("epoch 002:    10 / 50 loss=4.1, wps=4000, wpb=8000, "
           "num_updates=60\n"
           "epoch 002:    20 / 50 loss=4.0, wps=4000, wpb=8000, "
           "num_updates=70\n");
  ASSERT_STREQ(r.step_time_basis, "throughput");
  ASSERT_NEAR(r.step_time_s, 2.0, 1e-9);
  /* A per-GPU throughput is not divided into the global batch. */
  r = feed("step 100 | loss 2.1 | global batch size: 256 | throughput per "
           "GPU: 64.0\n"
           "step 110 | loss 2.0 | global batch size: 256 | throughput per "
           "GPU: 64.0\n");
  ASSERT_NAN(r.step_time_s);
}

SM_TEST(track_step_time_from_a_bar) {
  /* A bar that prints its elapsed time but no rate. */
  sm_track_result r =
      feed("Epoch 3: 100%|##########| 500/500 [04:10<00:00, v_num=3, "
           "loss=0.2]\n"
           "Epoch 4: 100%|##########| 500/500 [04:20<00:00, v_num=3, "
           "loss=0.19]\n");
  ASSERT_STREQ(r.step_time_basis, "bar");
  ASSERT(r.step_time_s >= 0.5 && r.step_time_s <= 0.52);
}

SM_TEST(track_interval_clock_over_its_steps) {
  /* "train_wall" of the logging interval (it does not grow) over the
   * updates since the line before. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int u = 100; u <= 600; u += 100)
    sm_buf_addf(&b,
                "train_inner | epoch 001:  %d / 900 loss=5.%d, "
                "num_updates=%d, train_wall=%d, wall=%d\n",
                u, 9 - u / 100, u, 420 + u % 300 / 100, 400 + u * 4);
  r = feed(b.data);
  ASSERT_STREQ(r.step_time_basis, "explicit");
  ASSERT_STREQ(r.step_time_source, "interval");
  ASSERT(r.step_time_s > 4.19 && r.step_time_s < 4.23);
  sm_buf_release(&b);
}

SM_TEST(track_timestamps_with_evaluation_inside) {
  /* Validation runs inside every other logging interval: timestamps do
   * not time training here. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 0; ep < 4; ep++) {
    sm_buf_addf(&b,
                "2024-02-01 10:0%d:00,000 INFO [train.py:400] Epoch %d, "
                "batch 0, loss[loss=0.5%d], batch size: 4\n",
                ep * 2, ep, ep);
    sm_buf_addf(&b,
                "2024-02-01 10:0%d:10,000 INFO [train.py:400] Epoch %d, "
                "batch 10, loss[loss=0.4%d], batch size: 4\n",
                ep * 2, ep, ep);
    sm_buf_addf(&b,
                "2024-02-01 10:0%d:40,000 INFO [train.py:420] Epoch %d, "
                "validation loss=0.6%d\n",
                ep * 2, ep, ep);
    sm_buf_addf(&b,
                "2024-02-01 10:0%d:50,000 INFO [train.py:400] Epoch %d, "
                "batch 20, loss[loss=0.3%d], batch size: 4\n",
                ep * 2, ep, ep);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 20);
  ASSERT_NAN(r.step_time_s);
  /* Evaluation once in a while: only that interval is left out. */
  sm_buf_reset(&b);
  for (int s = 1; s <= 12; s++) {
    sm_buf_addf(&b, "2024-02-01 10:%02d:00 | step %d | loss 1.%02d\n", s * 2,
                s * 100, 50 - s);
    if (s == 6)
      sm_buf_adds(&b, "2024-02-01 10:13:00 | Evaluating: val_loss 1.7\n");
  }
  r = feed(b.data);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  ASSERT_NEAR(r.step_time_s, 1.2, 1e-9);
  sm_buf_release(&b);
}

SM_TEST(track_first_batch_of_an_epoch_is_left_out) {
  /* Printed at batch 0 and 50 only; batch 0 waits for the data loader. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 390; ep < 396; ep++) {
    sm_buf_addf(&b, "Epoch: [%d][0]\tTime 2.8%d0 (2.8%d0)\tLoss 2.11 (2.11)\n",
                ep, ep % 10, ep % 10);
    sm_buf_addf(&b, "Epoch: [%d][50]\tTime 0.6%d0 (0.7%d0)\tLoss 2.10 (2.12)\n",
                ep, ep % 10, ep % 10);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 50);
  ASSERT_NEAR(r.epoch, 395, 0);
  ASSERT(r.step_time_s > 0.6 && r.step_time_s < 0.7);
  sm_buf_release(&b);
}

/* ==== Following ==== */

SM_TEST(track_follow_forgets_what_truncation_and_rotation_removed) {
  char path[64], rotated[80];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  const char *old = "step=10 loss=2.0 lr=0.1 step_time=0.5s\n"
                    "step=20 loss=1.9 lr=0.1 step_time=0.5s\n";

  tmpname(path);
  write_file(path, "w", old, strlen(old));
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 20);
  /* Truncated and written again with lines that print no loss: the old
   * loss and step time are gone with the old bytes. */
  ASSERT_OK(truncate(path, 0));
  write_file(path, "a", "step=3 lr=0.2\n", 14);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 3);
  ASSERT_NAN(r.loss);
  ASSERT_NAN(r.step_time_s);
  ASSERT_EQ(r.samples, 1);
  /* Rotated: the new file alone. */
  snprintf(rotated, sizeof(rotated), "%s.1", path);
  ASSERT_OK(rename(path, rotated));
  write_file(path, "w", "step=1 lr=0.3\n", 14);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 1);
  ASSERT_NEAR(r.lr, 0.3, 1e-12);
  ASSERT_EQ(r.samples, 1);
  sm_tracker_free(t);
  unlink(path);
  unlink(rotated);
}

SM_TEST(track_follow_unfinished_bar_is_replaced_not_repeated) {
  /* The scan uses the bar being drawn; when its line ends, the finished
   * text replaces it (no second sample, nothing read twice). */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  const char *a = "step=1 loss=2.0 step_time=0.5s\nstep=2 loss=1.9 step_tim";
  uint64_t before;

  tmpname(path);
  write_file(path, "w", a, strlen(a));
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 2);
  before = r.bytes_read;
  write_file(path, "a", "e=0.7s\n", 7);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 2);
  ASSERT_EQ(r.samples, 2);
  ASSERT_NEAR(r.step_time_s, 0.6, 1e-12); /* median of 0.5 and 0.7 */
  ASSERT_EQ(r.bytes_read - before, 7);
  sm_tracker_free(t);
  unlink(path);
}

/* ==== The knowledge table ==== */

SM_TEST(track_key_table_file_is_checked) {
  trk_keys_stats st;
  char ok[] = "# a comment\n\nkey\tlr\tlr\t-\t-\t# the learning rate\n"
              "key\tbsz\tbsz\t-\t-\t# samples per step\n"
              "word\teval\tvalid\t# fairseq valid\n";
  char bad_role[] = "key\tlr\tnope\t-\t-\t# x\n";
  char no_comment[] = "# c\nkey\tlr\tlr\t-\t-\n";
  char bad_flag[] = "\n\nkey\tlr\tlr\tfast\t-\t# x\n";
  char unit_not_tput[] = "key\tlr\tlr\t-\ts\t# x\n";
  char bad_kind[] = "keys\tlr\tlr\t-\t-\t# x\n";
  char bad_class[] = "word\tnoise\tfoo\t# x\n";
  char binary[] = "key\t\x01\xff\tlr\t-\t-\t# x\n";
  char dup[] = "key\tlr\tlr\t-\t-\t# a\nkey\tlr\tlr\t-\t-\t# b\n";
  ASSERT_EQ(sm__trk_keys_parse(ok, &st), 2);
  ASSERT_EQ(st.words[0], 1);
  ASSERT_EQ(sm__trk_keys_parse(bad_role, &st), -1);
  ASSERT_EQ(sm__trk_keys_parse(no_comment, &st), -2);
  ASSERT_EQ(sm__trk_keys_parse(bad_flag, &st), -3);
  ASSERT_EQ(sm__trk_keys_parse(unit_not_tput, &st), -1);
  ASSERT_EQ(sm__trk_keys_parse(bad_kind, &st), -1);
  ASSERT_EQ(sm__trk_keys_parse(bad_class, &st), -1);
  ASSERT(sm__trk_keys_parse(binary, &st) >= 0); /* a key of odd bytes */
  ASSERT_EQ(sm__trk_keys_parse(dup, &st), 2);
  ASSERT_EQ(st.duplicates, 1);
  /* The embedded table: every entry parsed, no duplicates, sorted. */
  ASSERT(sm__trk_keytable_check(&st) > 150);
  ASSERT_EQ(st.duplicates, 0);
}

SM_TEST(track_rounded_times_give_way_to_finer_ones) {
  /* Keras rounds a per-step time above a second to whole seconds; the
   * epoch's elapsed seconds over its steps are finer. */
  sm_track_result r =
      feed("Epoch 7/50\n"
           "800/800 [==============================] - 1530s 2s/step - loss: "
           "1.2100 - val_loss: 1.3300\n"
           "Epoch 8/50\n"
           "800/800 [==============================] - 1510s 2s/step - loss: "
           "1.2000 - val_loss: 1.3100\n");
  ASSERT_STREQ(r.step_time_basis, "bar");
  ASSERT(r.step_time_s > 1.88 && r.step_time_s < 1.92);
  /* A rate with one digit ("ups=0.02") and the interval's wall time. */
  r = feed("train_inner | epoch 001:  1 / 20 loss=19.1, ups=0.02, "
           "num_updates=1, train_wall=41, wall=60\n"
           "train_inner | epoch 001:  2 / 20 loss=18.2, ups=0.02, "
           "num_updates=2, train_wall=42, wall=102\n"
           "train_inner | epoch 001:  3 / 20 loss=17.9, ups=0.03, "
           "num_updates=3, train_wall=40, wall=142\n");
  ASSERT_NEAR(r.step_time_s, 41, 1e-9);
  ASSERT_STREQ(r.step_time_source, "interval");
  /* A short Keras epoch keeps its printed time (7 s are no finer). */
  r = feed("1407/1407 [==============================] - 7s 5ms/step - loss: "
           "1.1925\n");
  ASSERT_NEAR(r.step_time_s, 0.005, 1e-12);
  ASSERT_STREQ(r.step_time_basis, "explicit");
}

SM_TEST(track_announced_epoch_averages_are_no_step) {
  sm_track_result r = feed(
      "train_inner | {\"epoch\": 1, \"loss\": \"16.9\", \"ups\": \"0.02\", "
      "\"num_updates\": \"9\", \"train_wall\": \"40\"}\n"
      "train_inner | {\"epoch\": 1, \"loss\": \"16.5\", \"ups\": \"0.02\", "
      "\"num_updates\": \"10\", \"train_wall\": \"41\"}\n"
      "end of epoch 1 (average epoch stats below)\n"
      "train | {\"epoch\": 1, \"train_loss\": \"18.1\", "
      "\"train_num_updates\": \"10\", \"train_wall\": \"500\"}\n");
  ASSERT_EQ(r.step, 10);
  ASSERT_NEAR(r.loss, 16.5, 1e-12);
  r = feed("Epoch: [3]  [390/391]  eta: 0:00:00  lr: 0.001  loss: 1.2345 "
           "(1.3000)  time: 0.2000\n"
           "Averaged stats: lr: 0.001000  loss: 1.3000 (1.3000)\n");
  ASSERT_EQ(r.step, 390);
  ASSERT_NEAR(r.loss, 1.2345, 1e-12);
}

SM_TEST(track_totals_from_beside_the_counter) {
  /* A keyed total ("max_update"), another counter of the same steps
   * (Megatron's iteration n/N beside DeepSpeed's step=n), a bar beside a
   * keyed global step, and "[e/E], [i/N]" (epoch, then batch). */
  sm_track_result r =
      feed("2023-05-01 10:00:00 | INFO | train_inner | epoch 001:   19 / 40 "
           "loss=5.1, ups=0.5, num_updates=19, train_wall=2\n"
           "2023-05-01 10:00:02 | INFO | train_inner | epoch 001:   20 / 40 "
           "loss=5.0, ups=0.5, num_updates=20, train_wall=2\n"
           "2023-05-01 10:00:02 | INFO | fairseq_cli.train | Stopping training "
           "due to num_updates: 20 >= max_update: 20\n");
  ASSERT_EQ(r.step, 20);
  ASSERT_EQ(r.total_steps, 20);
  r = feed("[Rank 0] step=2, skipped=0, lr=[3.75e-05, 3.75e-05]\n"
           "steps: 2 loss: 12.8004 iter time (s): 145.206 samples/sec: 7.052\n"
           " iteration        2/    1000 | elapsed time per iteration (ms): "
           "145207.0 | lm loss: 1.280042E+01 |\n");
  ASSERT_EQ(r.step, 2);
  ASSERT_EQ(r.total_steps, 1000);
  r = feed("Epoch 0: :   4%| 400/10000 [10:00<4:00:00, v_num=1, "
           "reduced_train_loss=3.1, global_step=4e+2, train_step_timing in "
           "s=1.5]\n");
  ASSERT_EQ(r.step, 400);
  ASSERT_EQ(r.total_steps, 10000);
  r = feed("2021-01-01 10:00:00 MyNet INFO: [12/100], [40/500], global_step: "
           "5540, loss: 0.91, time:0.30\n");
  ASSERT_EQ(r.step, 5540);
  ASSERT_NEAR(r.epoch, 12, 0);
}

/* Pure random bytes hold a "step=3"-like run now and then; whatever the
 * window made of it, a file that is mostly not text reports no progress.
 * Forty seeds, so the rare case is met (it was met about once in a
 * hundred 2 MB files). */
SM_TEST(track_random_bytes_never_report_progress) {
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  sm_buf b;
  sm_rng g;

  tmpname(path);
  for (int seed = 1; seed <= 40; seed++) {
    sm_buf_init(&b, 0);
    sm_rng_seed(&g, (uint64_t)seed);
    for (int i = 0; i < 300000; i++) {
      unsigned v = (unsigned)(sm_rng_next(&g) & 0xff);
      /* every so often a progress-looking fragment */
      if (v == 0x42)
        sm_buf_addf(&b, "\nstep=%d loss=2.5\n", seed);
      else
        sm_buf_addc(&b, (char)v);
    }
    write_file(path, "w", b.data, b.len);
    ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
    ASSERT_EQ(r.binary, 1);
    ASSERT_EQ(r.ok, 0);
    ASSERT_EQ(r.has_step, 0);
    sm_buf_release(&b);
  }
  unlink(path);
  sm_tracker_free(t);
}

SM_TEST(track_hole_at_the_end_is_not_read) {
  /* A log extended by a writer that died (a hole, no bytes on disk): the
   * progress before it, without reading the hole; following skips it
   * too. */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  const char *log = "step=10 loss=2.0 lr=0.1 step_time=0.5s\n"
                    "step=20 loss=1.9 lr=0.1 step_time=0.5s\n";

  tmpname(path);
  write_file(path, "w", log, strlen(log));
  ASSERT_OK(truncate(path, (off_t)1 << 30));
  {
    /* Only where the file system reports holes. */
    int fd = open(path, O_RDONLY);
    off_t h = fd >= 0 ? lseek(fd, 0, SEEK_HOLE) : -1;
    if (fd >= 0)
      close(fd);
    if (h < 0 || h >= (off_t)1 << 30) {
      sm_tracker_free(t);
      unlink(path);
      SM_SKIP("the file system does not report holes");
    }
  }
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 20);
  ASSERT(r.bytes_read < (1u << 20));
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 0);
  ASSERT(r.bytes_read < (1u << 20));
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_loops_that_change_total_are_one_loop) {
  /* A dataset whose batches per epoch vary (dynamic batching): the total
   * changes from one epoch to the next, it does not alternate. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 1; ep <= 4; ep++)
    for (int i = 100; i <= 400; i += 100)
      sm_buf_addf(&b, "Epoch %d: %d/%d [00:%02d<00:10, 9.%dit/s, loss=0.%d]\n",
                  ep, i, 400 + ep * 3, i / 10, ep, 90 - ep * 4 - i / 100);
  r = feed(b.data);
  ASSERT_EQ(r.step, 400);
  ASSERT_EQ(r.total_steps, 412);
  ASSERT_NEAR(r.epoch, 4, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_EQ(r.restarts, 0);
  /* A position that goes from its total back to its start without any
   * epoch printed: the next epoch, not a restart. */
  sm_buf_reset(&b);
  for (int ep = 1; ep <= 3; ep++)
    for (int i = 100; i <= 500; i += 200)
      sm_buf_addf(&b, "Step [%d/500], Loss: 0.%d\n", i, 80 - ep * 5 - i / 100);
  r = feed(b.data);
  ASSERT_EQ(r.step, 500);
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_EQ(r.restarts, 0);
  sm_buf_release(&b);
}
