/* test_tracker_idioms.c - print idioms of training code found in an
 * audit of the field's frameworks (round 7 of issue 12): the newest loss
 * printed by another writer less often than the counter, units written
 * apart from their value in any spelling of a time over a step word,
 * ordinal counters, smoothed losses and step times told in sentences.
 * Each test checks the idiom in several shapes and the near misses it
 * must leave alone.  Every line is written for the test, with made-up
 * numbers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

/* ==== The loss of another writer, printed less often ==== */

SM_TEST(track_loss_printed_less_often_than_the_bar) {
  /* HF Trainer style: a bar updated every step, a loss dict every 500
   * steps; the newest dict is 300 updates above the end. */
  text t = {0};
  sm_track_result r;

  for (int i = 1; i <= 800; i++) {
    add(&t, "\r %2d%%|###  | %d/4000 [%02d:%02d<30:00,  2.20it/s]",
        i * 100 / 4000, i, i / 132, i / 2 % 60);
    if (i % 500 == 0)
      add(&t,
          "\n{'loss': 1.8%d, 'grad_norm': 0.9, 'learning_rate': 2e-05, "
          "'epoch': 0.%d}\n",
          i / 100, i / 40);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 800);
  ASSERT_EQ(r.total_steps, 4000);
  ASSERT_NEAR(r.loss, 1.85, 1e-9);
  ASSERT_NEAR(r.step_time_s, 1 / 2.2, 1e-3);

  /* A custom loop: a bar without its loss and a logger line every 50
   * steps (another counter). */
  t.n = 0;
  for (int i = 1; i <= 420; i++) {
    add(&t, "\rTraining: %d%%|##   | %d/3000 [%02d:%02d<12:00,  1.40it/s]",
        i * 100 / 3000, i, i / 60, i % 60);
    if (i % 50 == 0)
      add(&t, "\n[2024-05-01 12:00:%02d] INFO step %d: train_loss=%.3f\n",
          i % 60, i, 3 - i / 1000.0);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 420);
  ASSERT_NEAR(r.loss, 2.6, 1e-9);

  /* Only an evaluation loss above: no training loss is invented. */
  t.n = 0;
  for (int i = 1; i <= 420; i++) {
    add(&t, "\r %d%%|##   | %d/3000 [%02d:%02d<12:00,  1.40it/s]",
        i * 100 / 3000, i, i / 60, i % 60);
    if (i == 100)
      add(&t, "\n{'eval_loss': 1.21, 'eval_runtime': 3.3, 'epoch': 0.5}\n");
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 420);
  ASSERT_NAN(r.loss);

  /* The run restarted after its last loss (the bar went back to 1): the
   * older run's loss is not the newest run's. */
  t.n = 0;
  for (int i = 1; i <= 700; i++) {
    add(&t, "\r %d%%|##   | %d/3000 [%02d:%02d<12:00,  1.40it/s]",
        i * 100 / 3000, i, i / 60, i % 60);
    if (i == 600)
      add(&t, "\n{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.4}\n");
  }
  add(&t, "\n");
  for (int i = 1; i <= 300; i++)
    add(&t, "\r %d%%|##   | %d/3000 [%02d:%02d<12:00,  1.40it/s]",
        i * 100 / 3000, i, i / 60, i % 60);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 300);
  ASSERT_NAN(r.loss);
  free(t.s);
}

/* ==== Units written apart ==== */

SM_TEST(track_spaced_units_of_a_time_over_a_step_word) {
  sm_track_sample s = P("Step 100 of 5000: loss = 1.49, 0.42 sec/step");
  ASSERT_NEAR(s.step_time, 0.42, 1e-12);
  ASSERT_EQ(s.total, 5000);
  s = P("step 10 loss 2.3 (0.42 sec/iter)");
  ASSERT_NEAR(s.step_time, 0.42, 1e-12);
  s = P("iter 30, loss 2.3, 0.42 seconds/step");
  ASSERT_NEAR(s.step_time, 0.42, 1e-12);
  s = P("update 12 | loss 4.1 | 350 msec/batch");
  ASSERT_NEAR(s.step_time, 0.35, 1e-12);
  s = P("it 12 | loss 4.1 | 700 us/update");
  ASSERT_NEAR(s.step_time, 0.0007, 1e-12);
  /* Steps over a second are a rate. */
  s = P("step 10, loss 2.3, 2.4 steps/sec");
  ASSERT_NAN(s.step_time);
  ASSERT_NEAR(s.rate, 2.4, 1e-12);
  s = P("batch 50 loss 0.3 | 12.5 batches/s");
  ASSERT_NEAR(s.rate, 12.5, 1e-12);
  /* Not a step: an epoch's time, a sample's time, throughput. */
  s = P("step 10 loss 2.3 31.5 sec/epoch");
  ASSERT_NAN(s.step_time);
  s = P("step 10 loss 2.3 4.1 ms/sample");
  ASSERT_NAN(s.step_time);
  s = P("step 10 loss 2.3 812.5 samples/sec");
  ASSERT_NAN(s.step_time);
  ASSERT_NEAR(s.throughput, 812.5, 1e-12);
  ASSERT_STREQ(s.tp_unit, "samples/s");
  ASSERT_EQ(sm__trk_unit_per("seconds/iteration", NULL), 1);
  ASSERT_EQ(sm__trk_unit_per("secs/it", NULL), 1);
  ASSERT_EQ(sm__trk_unit_per("it/sec", NULL), 2);
  ASSERT_EQ(sm__trk_unit_per("tokens/sec", NULL), 0);
  ASSERT_EQ(sm__trk_unit_per("min/step", NULL), 0);
}

/* ==== Ordinal counters ==== */

SM_TEST(track_ordinal_counters_out_of_a_total) {
  sm_track_sample s = P("Iteration 200 out of 20000 | train loss 0.899");
  ASSERT_EQ(s.counter, SM_TC_ITER);
  ASSERT_EQ(s.step, 200);
  ASSERT_EQ(s.total, 20000);
  s = P("Epoch 3 out of 10, batch 50 out of 500, loss 0.3");
  ASSERT_EQ(s.counter, SM_TC_BATCH);
  ASSERT_EQ(s.step, 50);
  ASSERT_EQ(s.total, 500);
  ASSERT_NEAR(s.epoch, 3, 0);
  s = P("[train] step 7 of 90: loss=1.25");
  ASSERT_EQ(s.total, 90);
  /* A count of other things is no sample. */
  s = P("processed 30 out of 100 files");
  ASSERT_EQ(s.kind, SM_TK_NONE);
}

/* ==== Smoothed losses ==== */

SM_TEST(track_smoothed_loss_gives_way_to_the_plain_loss) {
  sm_track_sample s = P("it: 10 | loss(ema) 2.30 | loss 2.399 | ms/it 120");
  ASSERT_NEAR(s.loss, 2.399, 1e-12);
  s = P("step 5 ema_loss 2.1 loss 2.5");
  ASSERT_NEAR(s.loss, 2.5, 1e-12);
  s = P("step 5 | loss (smoothed): 2.1 | loss: 2.5");
  ASSERT_NEAR(s.loss, 2.5, 1e-12);
  s = P("step 5 | smooth_loss 2.1 | loss_running 2.2 | loss 2.6");
  ASSERT_NEAR(s.loss, 2.6, 1e-12);
  /* Alone, a smoothed loss is the loss. */
  s = P("step 5 loss_ema=2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  /* A qualifier that names training is no smoothing; a statistic in a
   * namespace is no loss. */
  s = P("step 5 loss (train): 2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  s = P("step 5 loss/mean 2.0");
  ASSERT_NAN(s.loss);
  s = P("step 5 loss_rpn_ema 2.0");
  ASSERT_NAN(s.loss);
}

/* ==== Step times told in sentences ==== */

SM_TEST(track_step_time_told_in_a_sentence) {
  sm_track_sample s =
      P("INFO:root:Iteration 10 finished in 0.351 seconds, loss: 1.399");
  ASSERT_EQ(s.step, 10);
  ASSERT_NEAR(s.step_time, 0.351, 1e-12);
  s = P("step 40 completed in 1.2s loss 0.3");
  ASSERT_NEAR(s.step_time, 1.2, 1e-12);
  s = P("batch 30 done in 350 ms, loss 0.2");
  ASSERT_NEAR(s.step_time, 0.35, 1e-12);
  s = P("Step 5 - loss: 1.990 - time taken: 1.21 s");
  ASSERT_NEAR(s.step_time, 1.21, 1e-12);
  /* An epoch's or the run's time is no step's. */
  s = P("Epoch 3 finished in 152 s, loss 0.3");
  ASSERT_NAN(s.step_time);
  s = P("Training finished in 3600.0 seconds");
  ASSERT_NAN(s.step_time);
}

/* ==== Blocks of figures under a banner ==== */

SM_TEST(track_block_of_figures_under_a_banner_is_a_summary) {
  /* HF's log_metrics after the last bar, then an evaluation bar: the
   * block's "train_loss" is the run's average and its "epoch = 3.0" no
   * epoch head; the evaluation bar after it is a side loop. */
  text t = {0};
  sm_track_result r;

  for (int i = 1; i <= 300; i++) {
    add(&t, "\r%3d%%|#   | %d/300 [%02d:%02d<00:00,  2.50it/s]", i / 3, i,
        i / 150, i * 2 / 5 % 60);
    if (i % 100 == 0)
      add(&t, "\n{'loss': %.4f, 'learning_rate': 1e-05, 'epoch': %d.0}\n",
          0.9 - i / 1000.0, i / 100);
  }
  add(&t, "\n{'train_runtime': 120.0, 'train_loss': 0.75, 'epoch': 3.0}\n"
          "100%%|##########| 300/300 [02:00<00:00,  2.50it/s]\n"
          "***** train metrics *****\n"
          "  epoch                    =        3.0\n"
          "  train_loss               =     0.7500\n"
          "  train_runtime            = 0:02:00.00\n"
          "100%%|##########| 25/25 [00:03<00:00,  8.01it/s]\n"
          "***** eval metrics *****\n"
          "  epoch                   =        3.0\n"
          "  eval_loss               =     0.5100\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 300);
  ASSERT_EQ(r.total_steps, 300);
  ASSERT_NEAR(r.loss, 0.6, 1e-9);
  ASSERT_STREQ(r.step_scope, "global");
  free(t.s);

  /* Other banners and layouts: "==== Final results ====" with "key:
   * value" lines; "Summary:" alone. */
  r = scan_text("step 10 | loss 2.50 | 0.3 s/it\n"
                "step 20 | loss 2.40 | 0.3 s/it\n"
                "step 30 | loss 2.30 | 0.3 s/it\n"
                "==== Final results ====\n"
                "loss: 2.75\n"
                "epoch: 4\n");
  ASSERT_EQ(r.step, 30);
  ASSERT_NEAR(r.loss, 2.3, 1e-9);
  ASSERT(sm__trk_block_banner("Summary:", 8));
  ASSERT(sm__trk_block_banner("***** eval metrics *****", 24));
  /* Not a banner: numbers, many words, no rule and no colon. */
  ASSERT(!sm__trk_block_banner("***** eval metrics 3 *****", 26));
  ASSERT(!sm__trk_block_banner("train metrics", 13));
  ASSERT(!sm__trk_block_banner("=== we now print the metrics of every "
                               "batch of the run ===",
                               58));
}

/* ==== The whole loss named beside its terms ==== */

SM_TEST(track_whole_loss_named_by_a_total_word) {
  /* A "total" word before or after "_loss" names the whole loss, ahead
   * of the terms printed before it. */
  sm_track_sample s = P("Epoch: 20, Step: 800, accuracy: 0.98, det loss: "
                        "0.0239, bbox loss: 0.0071, all_loss: 0.0263");
  ASSERT_NEAR(s.loss, 0.0263, 1e-12);
  s = P("step 5 rec_loss 1.0 kl_loss 0.5 sum_loss 1.5");
  ASSERT_NEAR(s.loss, 1.5, 1e-12);
  s = P("it 7: loss_rec=1.0 loss_kl=0.5 loss_sum=1.5");
  ASSERT_NEAR(s.loss, 1.5, 1e-12);
  s = P("iter 9 | ce_loss 2.0 | aux_loss 0.1 | combined_loss 2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  /* Without a whole loss the first term stands; components by prefix
   * stay components. */
  s = P("Epoch: 20, Step: 800, det loss: 0.0239, bbox loss: 0.0071");
  ASSERT_NEAR(s.loss, 0.0239, 1e-12);
  s = P("iter 9 | loss_cls 0.3 | loss_bbox 0.2");
  ASSERT_NAN(s.loss);
}

/* ==== Counters of other training loops ==== */

SM_TEST(track_counters_of_other_loops) {
  /* NVIDIA's GAN and diffusion loops report ticks; federated learning
   * counts communication rounds, often as a heading of its own. */
  sm_track_sample s = P("tick 928   kimg 46444.6   time 3d 07h 55m   "
                        "sec/tick 307.0   sec/kimg 6.13    iters/sec 2.547");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 928);
  ASSERT_NEAR(s.rate, 2.547, 1e-12);
  s = P("[ROUND 12] train loss 0.52");
  ASSERT_EQ(s.step, 12);
  ASSERT_NEAR(s.loss, 0.52, 1e-12);
  s = P("comm_round: 40, loss=0.31");
  ASSERT_EQ(s.step, 40);
  /* A heading of one word and its number is a position; not in a
   * sentence. */
  ASSERT_EQ(P("Round 4999").kind, SM_TK_POSITION);
  ASSERT_EQ(P("=== Step 300 ===").kind, SM_TK_POSITION);
  ASSERT(P("moving to step 5").kind != SM_TK_POSITION);
  ASSERT(P("Round 2 of the tournament").kind != SM_TK_SAMPLE);
  {
    text t = {0};
    sm_track_result r;
    for (int i = 0; i < 40; i++)
      add(&t, "Round %d\nclients 10, local epochs 2\nserver loss: %.3f\n", i,
          0.9 - i * 0.01);
    r = scan_text(t.s);
    ASSERT_EQ(r.ok, 1);
    ASSERT_EQ(r.step, 39);
    ASSERT_NEAR(r.loss, 0.51, 1e-9);
    free(t.s);
  }
}

/* ==== Side loops longer than the window ==== */

SM_TEST(track_side_loop_after_a_finished_loop) {
  /* A training bar whose updates fill one long line, finished, then an
   * evaluation bar of many updates without a description, cut by a
   * kill: the evaluation is no training. */
  text t = {0};
  sm_track_result r;

  add(&t, "Epoch [7][0/3000] Loss 2.0 (2.0) :   0%%| 0/3000 [00:00<?, ?it/s]");
  for (int i = 1; i <= 3000; i++)
    add(&t,
        "\rEpoch [7][%d/3000] Loss %.3f (2.100) : %3d%%|###| %d/3000 "
        "[%02d:%02d<00:00,  4.10it/s]",
        i - 1, 2.5 - i / 10000.0, i / 30, i, i / 246, i / 4 % 60);
  add(&t, "\n");
  for (int i = 1; i <= 60; i++)
    add(&t, "\r %2d%%|#    | %d/400 [00:%02d<01:30,  3.30it/s]", i / 4, i,
        i / 3);
  add(&t, "slurmstepd: error: *** JOB 77 ON n3 CANCELLED AT 2025-02-02T10:00:00"
          " ***\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 3000);
  ASSERT_EQ(r.total_steps, 3000);
  ASSERT_NEAR(r.loss, 2.2, 1e-9);
  ASSERT_NEAR(r.step_time_s, 1 / 4.1, 1e-3);

  /* Keras: fit(), then evaluate() (with a loss) and predict() one after
   * the other, longer together than the window; the step time is the
   * training bar's, not the evaluation's. */
  t.n = 0;
  for (int e = 4; e <= 5; e++) {
    add(&t, "Epoch %d/5\n", e);
    for (int i = 1; i < 900; i += 100)
      add(&t, "\r%3d/900 [==>....] - ETA: 2s - loss: 0.4%02d", i, i / 10);
    add(&t,
        "\r900/900 [==============================] - 9s 10ms/step - "
        "loss: 0.3%d - val_loss: 0.41\n",
        e);
  }
  for (int i = 1; i <= 200; i += 25)
    add(&t, "\r%3d/200 [==>.....] - ETA: 0s - loss: 0.44", i);
  add(&t, "\r200/200 [==============================] - 1s 4ms/step - loss: "
          "0.4400\n");
  for (int i = 1; i <= 200; i += 50)
    add(&t, "\r%3d/200 [==>.....] - ETA: 0s", i);
  add(&t, "\r200/200 [==============================] - 0s 2ms/step\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 900);
  ASSERT_NEAR(r.epoch, 5, 0);
  ASSERT_NEAR(r.loss, 0.35, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.01, 1e-9);

  /* The training bar going on after an evaluation bar of its own is
   * the main loop, however long its newest stretch. */
  t.n = 0;
  for (int i = 1; i <= 30; i++)
    add(&t, "\r  %d%%|#  | %d/2000 [00:%02d<40:00,  1.10s/it]", i / 20, i, i);
  add(&t, "\n\r  0%%|  | 0/50 [00:00<?, ?it/s]\r100%%|###| 50/50 [00:05<00:00,"
          "  9.80it/s]\n{'eval_loss': 0.81, 'epoch': 0.02}\n");
  for (int i = 31; i <= 90; i++)
    add(&t, "\r  %d%%|#  | %d/2000 [01:%02d<40:00,  1.10s/it]", i / 20, i,
        i % 60);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 90);
  ASSERT_EQ(r.total_steps, 2000);

  /* A new training loop of another total that shows its learning rate
   * is not a side loop. */
  t.n = 0;
  for (int i = 100; i <= 1000; i += 100)
    add(&t, "stage 1 | iter %d/1000 | loss 1.%03d | lr 1e-3\n", i,
        900 - i / 10);
  for (int i = 50; i <= 1200; i += 50)
    add(&t, "stage 2 | iter %d/5000 | loss 0.%03d | lr 5e-4\n", i,
        900 - i / 10);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 1200);
  ASSERT_EQ(r.total_steps, 5000);
  free(t.s);
}

/* ==== A time alone is no progress ==== */

SM_TEST(track_time_alone_without_counter_or_loss_is_missing) {
  /* Data-loader debug lines with a time step, a download's pace: no
   * counter, no loss, no learning rate, no epoch. */
  text t = {0};
  sm_track_result r;

  for (int i = 0; i < 30; i++)
    add(&t,
        "2025-03-01 10:00:%02d - INFO - [Sampler] index=%d -> file=3, "
        "dt=6.0h\n",
        i, i * 7);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 0);
  ASSERT_NAN(r.step_time_s);
  t.n = 0;
  for (int i = 0; i < 30; i++)
    add(&t, "shard %d written, took 2.5s\n", i);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 0);
  /* With a loss the counter-less lines are progress. */
  t.n = 0;
  for (int i = 0; i < 30; i++)
    add(&t, "train loss %.3f, took 0.5s\n", 1 - i * 0.01);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 0.71, 1e-9);
  free(t.s);
}

/* ==== Throughput beside the batch the start-up announced ==== */

SM_TEST(track_throughput_with_the_announced_batch_size) {
  /* A Speedometer-style line prints samples/s and its batch index; the
   * batch size is only in the argument dump at the top. */
  text t = {0};
  sm_track_result r;

  add(&t, "INFO:root:start with arguments Namespace(batch_size=64, "
          "lr=0.1, num_epochs=5, network='resnet')\n");
  for (int e = 0; e < 3; e++)
    for (int b = 20; b <= 400; b += 20)
      add(&t,
          "INFO:root:Epoch[%d] Batch [%d]\tSpeed: %d.5 samples/sec\t"
          "accuracy=0.8\n",
          e, b, 255 + b % 3);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.step_time_s, 64 / 256.5, 1e-4);
  ASSERT_STREQ(r.step_time_basis, "throughput");

  /* A JSON config dump, and a log longer than the head: the head is
   * read apart from the tail. */
  t.n = 0;
  add(&t, "{\"train_batch_size\": 32, \"gradient_accumulation_steps\": 1}\n");
  for (int i = 1; i <= 4000; i++)
    add(&t, "[Rank 0] step=%d, samples/sec=%d.0, acc=0.5\n", i, 160 + i % 2);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 4000);
  ASSERT_NEAR(r.step_time_s, 32 / 160.0, 0.01);

  /* Two different batch sizes announced (training and evaluation, two
   * runs): unknown rather than a guess; tokens per second need the
   * tokens of a step. */
  t.n = 0;
  add(&t, "batch_size: 64\nbatch size: 128\n");
  for (int b = 20; b <= 400; b += 20)
    add(&t, "Epoch[1] Batch [%d]\tSpeed: 250.0 samples/sec\n", b);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 400);
  ASSERT_NAN(r.step_time_s);
  t.n = 0;
  add(&t, "batch_size: 64\n");
  for (int b = 20; b <= 400; b += 20)
    add(&t, "step %d | loss 2.0 | 5000.0 tokens/s\n", b);
  r = scan_text(t.s);
  ASSERT_NAN(r.step_time_s);
  free(t.s);
}

/* ==== A bare time on lines logged every few steps ==== */

static sm_track_result every_k(const char *fmt, int k) {
  text t = {0};
  sm_track_result r;
  for (int i = 1; i <= 15; i++)
    add(&t, fmt, i * k, 2.0 - i * 0.01);
  r = scan_text(t.s);
  free(t.s);
  return r;
}

SM_TEST(track_bare_time_every_few_steps_is_unclear) {
  /* No clock tells whether "time" is the step's or the interval's:
   * unknown rather than a guess. */
  sm_track_result r = every_k("ep: 0, batch: %d, time: 8.56, loss: %.3f\n", 20);
  ASSERT_EQ(r.step, 300);
  ASSERT_NAN(r.step_time_s);
  ASSERT(r.step_time_basis == NULL);
  r = every_k("step %d | loss %.3f | time 12.5\n", 50);
  ASSERT_NAN(r.step_time_s);
  /* What marks a per-step timer: a running average beside it, a data
   * time, a unit, an eta; or one line per step. */
  r = every_k("iter %d loss %.3f time 0.350 (0.362)\n", 50);
  ASSERT_NEAR(r.step_time_s, 0.35, 1e-9);
  r = every_k("iter: %d  total_loss: %.3f  time: 0.3500  data_time: 0.0100\n",
              20);
  ASSERT_NEAR(r.step_time_s, 0.35, 1e-9);
  r = every_k("step %d, loss %.3f, time 350ms\n", 10);
  ASSERT_NEAR(r.step_time_s, 0.35, 1e-9);
  r = every_k("step %d loss %.3f eta 0:10:00 time 0.41\n", 10);
  ASSERT_NEAR(r.step_time_s, 0.41, 1e-9);
  r = every_k("step %d | loss %.3f | time 0.41\n", 1);
  ASSERT_NEAR(r.step_time_s, 0.41, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "explicit");
}

/* ==== The epoch before a bracketed position ==== */

SM_TEST(track_epoch_keyed_by_a_training_word_before_the_position) {
  sm_track_sample s = P("Train: 12 [ 100/1251 (  8%)]  Loss: 3.500 (3.600)  "
                        "Time: 0.350s,  731.43/s  (0.362s,  707.18/s)");
  ASSERT_EQ(s.step, 100);
  ASSERT_EQ(s.total, 1251);
  ASSERT_NEAR(s.epoch, 12, 0);
  s = P("training: 3 [40/500] loss 0.3");
  ASSERT_NEAR(s.epoch, 3, 0);
  s = P("2023-11-14 22:13:20 INFO Train: 7 [ 100/1251 (  8%)]  Loss: 3.5");
  ASSERT_NEAR(s.epoch, 7, 0);
  s = P("train_acc: 5 [3/9] loss 2");
  ASSERT_NAN(s.epoch);
  /* A loss keyed by training is no epoch; an evaluation's position has
   * none. */
  s = P("train_loss: 5 [3/9]");
  ASSERT_NAN(s.epoch);
  s = P("Test: [ 10/100]  Loss 2.1");
  ASSERT_NAN(s.epoch);
}

/* ==== A duration keyed by one letter ==== */

SM_TEST(track_duration_keyed_by_one_letter_is_an_unlabelled_time) {
  /* Compact status lines: "t=" is a clock since the start, every 20
   * steps; the step time comes from it. */
  text t = {0};
  sm_track_result r;
  sm_track_sample s;

  for (int i = 1; i <= 15; i++)
    add(&t, "[ep 3 step %d t=%6ds mem= 5000MB] D=0.35 R=0.21 bpp\n", i * 20,
        1000 + i * 38);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 300);
  ASSERT_NEAR(r.step_time_s, 1.9, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  free(t.s);
  s = P("it 40 | T: 0.52s | loss 1.0");
  ASSERT_NEAR(s.anon_time, 0.52, 1e-12);
  /* Not with a blank (a word of a sentence), not a known key. */
  s = P("step 40 loss 1.0 x 3s");
  ASSERT_NAN(s.anon_time);
}

SM_TEST(track_loss_printed_less_often_across_epochs) {
  /* A per-epoch bar without a loss ("Epoch 12: 40it [...]"), and a loss
   * line every few epochs: the newest loss is found across the epochs'
   * bars, which go back at every epoch start. */
  text t = {0};
  sm_track_result r;

  for (int e = 0; e <= 12; e++) {
    for (int i = 1; i <= 40; i++)
      add(&t, "\rEpoch %d: %dit [00:%02d,  5.10it/s]", e, i, i / 5);
    add(&t, "\n");
    if (e % 5 == 4)
      add(&t, "Step: %d | Loss: 0.%04d | Lr: 1e-4\n", (e + 1) * 20,
          900 - e * 10);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 40);
  ASSERT_NEAR(r.epoch, 12, 0);
  ASSERT_NEAR(r.loss, 0.081, 1e-9); /* the line after epoch 9 */
  /* The same bars without their epoch: going back is no proof of an
   * earlier epoch's loop, and no older loss is taken. */
  t.n = 0;
  for (int e = 0; e <= 12; e++) {
    for (int i = 1; i <= 40; i++)
      add(&t, "\r%dit [00:%02d,  5.10it/s]", i, i / 5);
    add(&t, "\n");
    if (e == 4)
      add(&t, "loss: 0.5\n");
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 40);
  ASSERT_NAN(r.loss);
  free(t.s);
}

/* ==== Vertical metric tables of RL loggers ==== */

SM_TEST(track_vertical_metric_tables) {
  /* Stable-Baselines3: a record between rules, namespaces above their
   * rows; the environment steps are the progress, the train/ loss the
   * loss (its terms stay terms). */
  text t = {0};
  sm_track_result r;

  for (int k = 1; k <= 14; k++)
    add(&t,
        "------------------------------------------\n"
        "| rollout/                |              |\n"
        "|    ep_len_mean          | 180          |\n"
        "|    ep_rew_mean          | -1%02d         |\n"
        "| time/                   |              |\n"
        "|    fps                  | 950          |\n"
        "|    iterations           | %d           |\n"
        "|    time_elapsed         | %d           |\n"
        "|    total_timesteps      | %d        |\n"
        "| train/                  |              |\n"
        "|    entropy_loss         | -1.2         |\n"
        "|    learning_rate        | 0.0003       |\n"
        "|    loss                 | 4.%d          |\n"
        "|    value_loss           | 9.5          |\n"
        "------------------------------------------\n",
        k, k, k * 2, k * 1024, k % 10);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 14336);
  ASSERT_STREQ(r.counter, "total_timesteps");
  ASSERT_NEAR(r.loss, 4.4, 1e-9);
  ASSERT_NEAR(r.lr, 3e-4, 1e-12);
  ASSERT_NEAR(r.step_time_s, 2.0 / 1024, 1e-6);
  r = feed(t.s);
  ASSERT_EQ(r.step, 14336);
  ASSERT_NEAR(r.loss, 4.4, 1e-9);

  /* OpenAI baselines' rows without namespaces, and an evaluation
   * record whose rows are left out. */
  t.n = 0;
  for (int k = 1; k <= 12; k++) {
    add(&t,
        "-------------------------------------\n"
        "| eplenmean          | 200          |\n"
        "| nupdates           | %d           |\n"
        "| policy_loss        | -0.0%d        |\n"
        "| serial_timesteps   | %d         |\n"
        "| total_timesteps    | %d        |\n"
        "| value_loss         | 0.5%d         |\n"
        "-------------------------------------\n",
        k, k % 10, k * 128, k * 1024, k % 10);
    if (k == 12)
      add(&t, "--------------------------------\n"
              "| eval/              |         |\n"
              "|    mean_reward     | 310     |\n"
              "|    total_timesteps | 99999   |\n"
              "--------------------------------\n");
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 12288);
  ASSERT_NEAR(r.loss, -0.02, 1e-9); /* the first term: no whole loss */

  /* Not a record: a markdown table of several columns, rows without a
   * rule above. */
  ASSERT(!sm__trk_vrow("| AP | AP50 | AP75 |", 20, &(trk_vcell){0},
                       &(trk_vcell){0}));
  ASSERT(sm__trk_vrule("-------------------", 19));
  ASSERT(!sm__trk_vrule("--- step 3 ---", 14));
  free(t.s);
}

SM_TEST(track_vertical_tables_and_head_malformed) {
  /* A record far longer than the joined line holds, rows with bytes that
   * are not text, a rule with no rows, a record never closed, a head
   * without newlines: no crash, no invented progress. */
  text t = {0};
  sm_track_result r;

  add(&t, "------------------------------\n");
  for (int i = 0; i < 600; i++)
    add(&t, "|    metric_%04d_with_a_long_name | %d.25 |\n", i, i);
  add(&t, "|    total_timesteps | 4096 |\n------------------------------\n");
  add(&t, "------------------------------\n------------------------------\n");
  add(&t, "| \x01\x02\xff\xfe | \x80\x81 |\n");
  add(&t, "------------------------------\n| total_timesteps | 8192 |\n");
  r = scan_text(t.s);
  ASSERT(r.ok == 0 || r.step == 4096);
  t.n = 0;
  for (int i = 0; i < 70000; i++)
    add(&t, "batch_size=%d ", i % 3 + 1);
  add(&t, "\n");
  for (int b = 20; b <= 400; b += 20)
    add(&t, "Epoch[1] Batch [%d]\tSpeed: 250.0 samples/sec\n", b);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 400);
  ASSERT_NAN(r.step_time_s); /* the announcements disagree */
  free(t.s);
}

/* ==== Two loops printed with one counter key ==== */

SM_TEST(track_two_loops_of_one_key_the_one_with_a_loss_is_read_far_enough) {
  /* A global "step N/T | loss" every 100 steps and a per-epoch text bar
   * "(step i/E)" every 16: the scan reads until the loop that shows its
   * loss has its window, so its step time comes from its timestamps. */
  text t = {0};
  sm_track_result r;
  long long g = 0;
  int sec = 0;

  for (int e = 1; e <= 30; e++)
    for (int i = 16; i <= 320; i += 16) {
      g += 16;
      sec += 8;
      add(&t,
          "2025-01-01 %02d:%02d:%02d | INFO | Epoch %d/30 |||... (step "
          "%d/320)\n",
          sec / 3600, sec / 60 % 60, sec % 60, e, i);
      if (g % 400 == 0)
        add(&t,
            "2025-01-01 %02d:%02d:%02d | INFO | Epoch %d | step %lld/9600"
            " | loss=0.%04lld\n",
            sec / 3600, sec / 60 % 60, sec % 60, e, g, 9000 - g / 2);
    }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 9600);
  ASSERT_EQ(r.total_steps, 9600);
  ASSERT_NEAR(r.loss, 0.42, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");

  /* Another family: "iter" for training every 100 iterations and for a
   * data-preparation loop of 64 in between, more often. */
  t.n = 0;
  for (int k = 1; k <= 40; k++) {
    for (int j = 8; j <= 64; j += 8)
      add(&t, "iter %d/64 prefetch\n", j);
    add(&t, "iter %d/50000 | loss %.3f | 0.45 s/it\n", k * 100, 3 - k * 0.01);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 4000);
  ASSERT_EQ(r.total_steps, 50000);
  ASSERT_NEAR(r.step_time_s, 0.45, 1e-9);
  free(t.s);
}
