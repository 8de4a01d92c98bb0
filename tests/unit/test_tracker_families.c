/* test_tracker_families.c - format families the Tracker met on logs it was
 * not tuned on: abbreviated keys written with a period (C++ toolkits),
 * the time of a logging interval over the update counter's stride, a
 * loop's own timer printed on a line of its own, a step's summary line
 * whose only loss is an average, metrics files whose head names two
 * columns.  Every input is written here; malformed variants beside each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"

/* ==== Abbreviated keys ("Ep. 3 : Up. 1500 :") ==== */

SM_TEST(track_family_period_abbreviated_keys) {
  sm_track_sample s =
      P("[2021-03-04 10:00:00] Ep. 3 : Up. 1500 : Sen. 120,000 : Cost 2.5 : "
        "Time 310.00s : 5000.00 words/s");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.has_step, 1);
  ASSERT_EQ(s.step, 1500);
  ASSERT_STREQ(s.counter_name, "up");
  ASSERT_NEAR(s.epoch, 3, 0);
  ASSERT_NEAR(s.loss, 2.5, 1e-12);
  ASSERT_NEAR(s.throughput, 5000.0, 1e-9);
  /* A sentence's abbreviation is no key: "approx." then a number with a
   * unit, and a period that ends a sentence before a number. */
  s = P("Approx. 5 minutes left, loss 0.3");
  ASSERT_EQ(s.has_step, 0);
  ASSERT_NEAR(s.loss, 0.3, 1e-12);
  s = P("Done. 12 files written");
  ASSERT_EQ(s.kind, SM_TK_NONE);
  /* "Up.1500" (no blank after the period) and "Up . 1500" (a blank
   * before it) are not the abbreviated form. */
  s = P("Up.1500 : Cost 2.5");
  ASSERT_EQ(s.has_step, 0);
  s = P("Up . 1500 : Cost 2.5");
  ASSERT_EQ(s.has_step, 0);
  /* 'cost' is a loss only without a time unit, and a plain loss on the
   * line wins over it. */
  s = P("iter 100, cost 0.52s, loss 2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  s = P("iter 100 cost 1.5 loss 2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  ASSERT_NAN(P("iter 100 cost 0.52s").loss);
  ASSERT_NAN(P("step 5 loss 0.3s").loss);
  /* Malformed: a period and nothing after it, a lone period. */
  s = P("Ep.");
  ASSERT_EQ(s.kind, SM_TK_NONE);
  s = P(".");
  ASSERT_EQ(s.kind, SM_TK_NONE);
}

SM_TEST(track_family_interval_time_over_update_stride) {
  /* Every 200 updates: the time of the interval, not of one update. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 1; i <= 12; i++)
    sm_buf_addf(&b,
                "[2021-03-04 10:%02d:00] Ep. 2 : Up. %d : Sen. %d : Cost "
                "%.4f : Time %.2fs : 4100.50 words/s : L.r. 3.0e-04\n",
                i, 4000 + 200 * i, 1000 * i, 3.0 - i * 0.01, 60.0 + i % 3);
  sm_buf_addf(&b, "[2021-03-04 10:13:00] [valid] Ep. 2 : Up. 6400 : "
                  "cross-entropy : 55.1 : new best\n");
  r = feed(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 6400);
  ASSERT_NEAR(r.loss, 3.0 - 12 * 0.01, 1e-9);
  ASSERT_NEAR(r.epoch, 2, 0);
  ASSERT(r.step_time_s > 0.29 && r.step_time_s < 0.32); /* ~61 s / 200 */
  ASSERT_STREQ(r.step_time_basis, "explicit");
  ASSERT_STREQ(r.step_time_source, "interval");
  ASSERT_STREQ(r.step_scope, "global");
  sm_buf_release(&b);
}

/* ==== A loop's timer on a line of its own ==== */

SM_TEST(track_family_timer_line_above_each_sample) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int it = 100; it <= 300; it += 20)
    sm_buf_addf(&b,
                "Timer: %.4f\nepoch:4 || iter:%d || Loss:%.4f\n"
                "->> conf loss:1.2 || loc loss:0.8\n->>lr:0.001\n",
                0.52 + (it % 40) / 1000.0, it, 7.0 - it / 100.0);
  r = feed(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 300);
  ASSERT_NEAR(r.loss, 4.0, 1e-9);
  ASSERT(r.step_time_s > 0.51 && r.step_time_s < 0.57);
  ASSERT_STREQ(r.step_time_basis, "explicit");
  sm_buf_release(&b);
  /* A "Timer:" without a number, or with a word, is nothing. */
  ASSERT_EQ(P("Timer:").kind, SM_TK_NONE);
  ASSERT_EQ(P("Timer: started").kind, SM_TK_NONE);
}

/* ==== A step's summary line: its average gives way ==== */

SM_TEST(track_family_step_summary_average_gives_way) {
  sm_track_result r = feed("Step: 41 | Loss: -0.0031 | KL: 0.012\n"
                           "[timing] sample processed in 300.5s\n"
                           "Step: 42 | Loss: -0.0012 | KL: 0.020\n"
                           "[step 42] avg_loss=0.0000 acc=0.61\n"
                           "[eval] question -> answer\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 42);
  ASSERT_NEAR(r.loss, -0.0012, 1e-12);
  /* Where the average is the only loss of the step, it is reported. */
  r = feed("[step 41] avg_loss=0.5000 acc=0.6\n"
           "[step 42] avg_loss=0.4000 acc=0.6\n");
  ASSERT_EQ(r.step, 42);
  ASSERT_NEAR(r.loss, 0.4, 1e-12);
  /* The average line printed first, the step's own loss after it. */
  r = feed("[step 42] avg_loss=0.0000 acc=0.61\n"
           "Step: 42 | Loss: 0.0120 | KL: 0.020\n");
  ASSERT_NEAR(r.loss, 0.012, 1e-12);
  ASSERT_EQ(P("[step 42] avg_loss=0.0000").loss_avg, 1);
  ASSERT_EQ(P("Step: 42 | Loss: 0.5 | avg_loss: 0.6").loss_avg, 0);
}

/* ==== A log that ends in a long evaluation loop ==== */

SM_TEST(track_family_eval_tail_with_counterless_losses) {
  /* Training lines in an epoch, each followed by a counter-less loss
   * term; then an evaluation loop whose blocks print the same term: its
   * counter-less losses are no training samples, the training counter
   * above them is found. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 0; i <= 300; i += 10)
    sm_buf_addf(&b,
                "Epoch: [12][%d/310]\tTime 0.802 (0.800)\tLoss %.4f "
                "(0.9000)\nacc@1 91.2 (90.0)\nsim_loss  0.210 (0.300)\n",
                i, 1.5 - i / 1000.0);
  for (int i = 0; i <= 290; i += 10)
    sm_buf_addf(&b,
                "Test: [%d/300]\tTime 0.300 (0.310)\tLoss 4.1000 (4.0000)\n"
                "acc@1 71.0 (70.0)\nsim_loss  0.650 (0.700)\n"
                "neg_sim_loss  0.410 (0.400)\n",
                i);
  sm_buf_addf(&b, " * acc@1 70.1 acc@5 90.3\n");
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 300);
  ASSERT_EQ(r.total_steps, 310);
  ASSERT_NEAR(r.epoch, 12, 0);
  ASSERT_NEAR(r.loss, 1.2, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.802, 1e-9);
  ASSERT_STREQ(r.step_scope, "epoch");
  sm_buf_release(&b);
  /* Counter-less training lines followed by an evaluation line are
   * still read as samples (the look-back stays bounded). */
  r = scan_text("epoch 1 train loss 0.90\nepoch 2 train loss 0.80\n"
                "Validation: val_loss 1.2\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 0.8, 1e-12);
  /* An evaluation summary (no position in a loop) between counter-less
   * training losses does not make the next one evaluation. */
  r = scan_text("loss: 0.50\nloss: 0.45\nValidation: loss 0.6 acc 0.8\n"
                "loss: 0.40\n");
  ASSERT_NEAR(r.loss, 0.4, 1e-12);
  /* Malformed: only evaluation lines and their terms: nothing. */
  r = scan_text("Test: [10/300]\tTime 0.3\tLoss 4.1\nsim_loss  0.65 (0.70)\n"
                "Test: [20/300]\tTime 0.3\tLoss 4.0\nsim_loss  0.64 (0.70)\n");
  ASSERT_EQ(r.ok, 0);
  ASSERT_EQ(r.has_step, 0);
}

/* ==== Table heads: metrics files, YOLOv5/v7 component columns ==== */

SM_TEST(track_family_two_column_metrics_file) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  sm_buf_addf(&b, "step\tloss\n");
  for (int s = 50; s <= 2000; s += 50)
    sm_buf_addf(&b, "%d\t%.6f\n", s, 5.0 - s / 1000.0);
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 2000);
  ASSERT_NEAR(r.loss, 3.0, 1e-9);
  ASSERT_STREQ(r.step_scope, "global");
  sm_buf_release(&b);
  /* "iter,loss" and "epoch loss" heads too; two columns that are not a
   * counter and a fact are no head: "loss acc", "hello world". */
  r = feed("iter loss\n10 2.5\n20 2.4\n");
  ASSERT_EQ(r.step, 20);
  ASSERT_NEAR(r.loss, 2.4, 1e-12);
  r = feed("loss acc\n0.5 0.9\n0.4 0.91\n");
  ASSERT_EQ(r.ok, 0);
  r = feed("hello world\n1 2\n3 4\n");
  ASSERT_EQ(r.ok, 0);
  /* Rows of a different width are not named by the head. */
  r = feed("step loss\n10 2.5 7\n20 2.4 8\n");
  ASSERT_EQ(r.ok, 0);
}

SM_TEST(track_family_yolo_component_columns_and_cut_rows) {
  /* YOLOv5/v7: bare component words and 'total' (the loss). */
  sm_track_result r =
      feed("     Epoch   gpu_mem       box       obj       cls     total    "
           "labels  img_size\n"
           "      3/49     5.10G   0.05120    0.0211   0.01800   0.09030     "
           "  212       640: 100% 40/40 [00:20<00:00,  1.98it/s]\n"
           "      4/49     5.10G   0.05010    0.0209   0.01700   0.08800     "
           "  230       640: 100% 40/40 [00:20<00:00,  2.00it/s]\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 40);
  ASSERT_NEAR(r.epoch, 4, 0);
  ASSERT_NEAR(r.loss, 0.088, 1e-12);
  ASSERT_NEAR(r.step_time_s, 0.5, 0.01);
  /* A row cut before its last column (the capture lost the bar):
   * still named; its epoch and loss are known, no batch counter. */
  r = feed("     Epoch   gpu_mem       box       obj       cls     total    "
           "labels  img_size\n"
           "      0/49     5.10G   0.05120    0.0211   0.01800   0.09030     "
           "  212\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
  ASSERT_NEAR(r.epoch, 0, 0);
  ASSERT_NEAR(r.loss, 0.0903, 1e-12);
  /* Cut by more than one column: not named (no guess at the shift). */
  r = feed("     Epoch   gpu_mem       box       obj       cls     total    "
           "labels  img_size\n"
           "      0/49     5.10G   0.05120    0.0211   0.01800\n");
  ASSERT_NAN(r.loss);
  /* 'total' without components is not a loss column. */
  r = feed("epoch total lr\n1 500 0.1\n2 500 0.1\n");
  ASSERT_NAN(r.loss);
}

/* ==== A loop whose every step prints its purpose ==== */

SM_TEST(track_family_generation_notice_each_step) {
  /* A text generator prints "... for open-end generation." at each
   * call: the bar it interleaves with is generation, not training,
   * wherever the window starts in it, and so is the end of an earlier
   * run of the same bar just above it. */
  const char *notice = "Setting `pad_token_id` to `eos_token_id`:2 for "
                       "open-end generation.";
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 1; i <= 3; i++)
    sm_buf_addf(&b, " %d%%| | %d/20 [00:0%d<00:30, 1.50s/it]%s\n%s\n", i * 5, i,
                i, notice, notice);
  sm_buf_addf(&b, " 15%%| | 3/20 [00:05<00:40, 1.90s/it]\n");
  for (int i = 0; i <= 20; i++)
    sm_buf_addf(&b, " %d%%| | %d/20 [00:%02d<00:30, 1.40s/it]%s\n%s\n", i * 5,
                i, i, notice, notice);
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 0);
  r = feed(b.data);
  ASSERT_EQ(r.ok, 0);
  sm_buf_release(&b);
  /* The notice is a phase line; a purpose named elsewhere is not. */
  ASSERT_EQ(P(notice).kind, SM_TK_PHASE);
  ASSERT_EQ(P("generation 5 loss 0.3").kind, SM_TK_SAMPLE);
  ASSERT(P("Time for generation: 3.2s").kind != SM_TK_PHASE);
  /* A training bar with a loss after one such notice is training. */
  r = feed("Setting `pad_token_id` to `eos_token_id`:2 for open-end "
           "generation.\n"
           " 50%| | 50/100 [00:50<00:50, 1.00it/s, loss=0.42]\n"
           " 51%| | 51/100 [00:51<00:49, 1.00it/s, loss=0.41]\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 51);
  ASSERT_NEAR(r.loss, 0.41, 1e-12);
}

SM_TEST(track_family_malformed_inputs) {
  /* A huge line of abbreviated keys, a line of periods, a head of two
   * columns followed by junk and invalid UTF-8: bounded, no facts
   * invented from the junk. */
  sm_buf b;
  sm_track_sample s;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 0; i < 5000; i++)
    sm_buf_addf(&b, "Up. %d : ", i);
  s = P(b.data);
  ASSERT(s.kind == SM_TK_SAMPLE || s.kind == SM_TK_NONE);
  sm_buf_release(&b);
  ASSERT_EQ(P("....... . . .").kind, SM_TK_NONE);
  ASSERT_EQ(P("Ep. . Up. :").kind, SM_TK_NONE);
  r = feed("step\tloss\n\xff\xfe\x80\x81\n12\tabc\n\x01\x02\x03\n");
  ASSERT_EQ(r.ok, 0);
  r = feed("Epoch gpu_mem box obj cls total labels img_size\n"
           "0/9 1G 0.1 0.2 0.3 x 4\n");
  ASSERT_EQ(r.ok, 0);
  r = scan_text("Test: [1/2] Loss 1.0\n\xff\xfe sim_loss 0.4\n");
  ASSERT_EQ(r.ok, 0);
}

/* ==== The epoch head above a long loop ==== */

SM_TEST(track_family_epoch_head_above_the_window) {
  /* "Epoch 7/7" and then a hundred updates of the epoch's bar, each on a
   * line of its own: the head lies above the window and its margin, it
   * is looked for (epoch heads only) and names the epoch and the scope. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  sm_buf_addf(&b, "Epoch 6/7\n120/120 [==============================] - 3s "
                  "25ms/step - loss: 0.3100 - val_loss: 0.3300\nEpoch 7/7\n");
  for (int i = 1; i <= 120; i++)
    sm_buf_addf(&b,
                "%3d/120 [=============>................] - ETA: 2s - "
                "loss: %.4f\n",
                i, 0.3 - i / 10000.0);
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 120);
  ASSERT_NEAR(r.epoch, 7, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  sm_buf_release(&b);
  /* A decorated head above a global counter's lines of text. */
  sm_buf_init(&b, 0);
  sm_buf_addf(&b, "=== Epoch 3/3 ===\n");
  for (int s = 23; s <= 33; s++)
    sm_buf_addf(&b,
                "Step: %d | Loss: 0.0%d | KL: 0.01\nthe model wrote a "
                "line\nand another one\nand a third\nand a fourth\nand a "
                "fifth\nand a sixth\nand a seventh\n",
                s, s);
  r = scan_text(b.data);
  ASSERT_EQ(r.step, 33);
  ASSERT_NEAR(r.epoch, 3, 0);
  sm_buf_release(&b);
  /* No head within the bound: the epoch stays unknown, and the lines
   * above are not replayed (a wrapped counter up there changes nothing). */
  sm_buf_init(&b, 0);
  sm_buf_addf(&b, "Epoch 1/2\n");
  for (int s = 1; s <= 2000; s++)
    sm_buf_addf(&b, "step %d loss %.3f\n", s % 1000, 1.0);
  r = scan_text(b.data);
  ASSERT_EQ(r.step, 0);
  ASSERT_NAN(r.epoch);
  sm_buf_release(&b);
}

/* ==== Step scope without an epoch boundary in the window ==== */

SM_TEST(track_family_scope_from_the_epoch_beside_the_counter) {
  /* 30 iterations cannot have run 119 epochs: the position counts inside
   * the epoch, though no boundary is in the window. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 3; i <= 30; i += 3)
    sm_buf_addf(&b,
                "[Train][Epoch 120/120][Iter: %d/50] loss: %.3f, "
                "batch_cost: 0.40000 s\n",
                i, 2.0 - i / 100.0);
  r = feed(b.data);
  ASSERT_EQ(r.step, 30);
  ASSERT_EQ(r.total_steps, 50);
  ASSERT_NEAR(r.epoch, 120, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  sm_buf_release(&b);
  /* At epoch 2 the denominator says it: a counter global over 120
   * epochs with 50 steps in all could not be past 1.25 by the end of
   * epoch 2. */
  r = feed("[Train][Epoch 2/120][Iter: 27/50] loss: 1.7, batch_cost: 0.4 s\n"
           "[Train][Epoch 2/120][Iter: 30/50] loss: 1.6, batch_cost: 0.4 s\n");
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_EQ(r.step, 30);
  ASSERT_EQ(r.total_steps, 50);
  ASSERT_NEAR(r.epoch, 2, 0);
}

SM_TEST(track_family_scope_from_the_denominator_and_the_epochs) {
  sm_track_result r;
  sm_track_sample s;

  /* In the first epoch of three, 9200 of 10000: beyond a third of the
   * run, so the denominator is the epoch's. */
  r = scan_text("Epoch 0/3 | iter 9000/10000 | loss 0.812 | 0.31 s/it\n"
                "Epoch 0/3 | iter 9100/10000 | loss 0.801 | 0.31 s/it\n"
                "Epoch 0/3 | iter 9200/10000 | loss 0.793 | 0.31 s/it\n");
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_EQ(r.total_steps, 10000);
  /* 5200 of 30000 in epoch 1 of 3 fits a global counter. */
  r = scan_text("Epoch 1/3 | iter 5000/30000 | loss 0.812 | 0.31 s/it\n"
                "Epoch 1/3 | iter 5100/30000 | loss 0.801 | 0.31 s/it\n"
                "Epoch 1/3 | iter 5200/30000 | loss 0.793 | 0.31 s/it\n");
  ASSERT_STREQ(r.step_scope, "global");
  ASSERT_EQ(r.step, 5200);
  /* The parser keeps the epochs of the run printed beside the epoch. */
  s = P("Epoch 2/120 | iter 30/50 | loss 0.5");
  ASSERT_NEAR(s.epoch, 2, 0);
  ASSERT_NEAR(s.epoch_total, 120, 0);
  s = P("epoch 2 | iter 30/50 | loss 0.5");
  ASSERT_NAN(s.epoch_total);
  /* Malformed fractions decide nothing: no epochs in all, an epoch past
   * them, a count past its denominator. */
  r = feed("Epoch 2/0 | iter 30/50 | loss 0.5\nEpoch 2/0 | iter 31/50 | "
           "loss 0.5\n");
  ASSERT_STREQ(r.step_scope, "global");
  r = feed("Epoch 9/3 | iter 30/50 | loss 0.5\nEpoch 9/3 | iter 31/50 | "
           "loss 0.5\n");
  ASSERT(r.step_scope != NULL);
  r = feed("Epoch 1/3 | iter 90/50 | loss 0.5\nEpoch 1/3 | iter 91/50 | "
           "loss 0.5\n");
  ASSERT(r.step_scope == NULL || strcmp(r.step_scope, "epoch") != 0);
}

SM_TEST(track_family_trainer_bar_with_fractional_epochs_is_global) {
  /* A Trainer's bar over the whole run, its loss dicts' fractional epoch,
   * and an upload bar after the last update (another loop, another
   * total): the run's bar stays global. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 960; s <= 1000; s += 4)
    sm_buf_addf(&b,
                " 99%%|#########| %d/1000 [3:00:00<00:10, 10.50s/it]\n\n"
                "{'loss': 0.%03d, 'grad_norm': 0.2, 'learning_rate': 1e-06, "
                "'epoch': %.4f}\n\n",
                s, 100 + s % 7, s / 50.0);
  sm_buf_addf(&b, "{'train_runtime': 10500.0, 'train_loss': 0.41, "
                  "'epoch': 20.0}\n"
                  "Upload 3 LFS files: 100%%|##########| 3/3 [00:19<00:00, "
                  " 6.66s/it]\n");
  r = scan_text(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 1000);
  ASSERT_EQ(r.total_steps, 1000);
  ASSERT_STREQ(r.step_scope, "global");
  ASSERT_NEAR(r.step_time_s, 10.5, 1e-9);
  sm_buf_release(&b);
}
