/* test_tracker_general.c - the tracker's general mechanisms of round 2:
 * each test takes one class of log lines (a way of spelling a key, a
 * value, a loss or a line ending) and checks several variants of it, in
 * the spellings of different frameworks, other orders and other units,
 * and the near misses the mechanism must leave alone.  Every line here is
 * written for the test, with made-up numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

/* The answer of a scan of a file holding text (newest first, the way
 * `schedmate track` reads a log). */
static sm_track_result scan(const char *text) {
  char path[] = "/tmp/sm_track_general_XXXXXX";
  int fd = mkstemp(path);
  size_t n = strlen(text);
  sm_track_result r;
  sm_err err = {0};
  sm_tracker *t = sm_tracker_new(NULL);

  ASSERT(fd >= 0 && t != NULL);
  ASSERT_EQ(write(fd, text, n), (long long)n);
  close(fd);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &err));
  sm_tracker_free(t);
  unlink(path);
  return r;
}

/* ==== Keys ==== */

SM_TEST(track_counter_qualified_by_a_participle) {
  /* A word that says the step is done or current does not change what
   * the counter counts: "completed step", "Finished iteration", "current
   * step" spelled apart. */
  sm_track_sample s =
      P("I0301 10:00:05.123456 1234 metric_logger.py:226] completed step: 7, "
        "seconds: 1.631, TFLOP/s/device: 340.1, loss: 2.979");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.counter, SM_TC_STEP);
  ASSERT_EQ(s.step, 7);
  ASSERT_NEAR(s.step_time, 1.631, 1e-12);
  ASSERT_NEAR(s.loss, 2.979, 1e-12);
  s = P("Finished iteration 40 | loss 0.73 | 0.25 s/it");
  ASSERT_EQ(s.counter, SM_TC_ITER);
  ASSERT_EQ(s.step, 40);
  s = P("[train] current step 120/5000, lr 2e-4, loss 1.05");
  ASSERT_EQ(s.step, 120);
  ASSERT_EQ(s.total, 5000);
  s = P("Done epoch 2 batch 30 loss 0.40");
  ASSERT_EQ(s.counter, SM_TC_BATCH);
  ASSERT_EQ(s.step, 30);
  ASSERT_NEAR(s.epoch, 2, 0);
  /* Only before counters: "completed loss" or "finished time" are no
   * facts, and words that are not qualifiers keep a key unknown. */
  s = P("completed time: 12.5 loss 0.3");
  ASSERT_NAN(s.step_time);
  s = P("sampling step 50, 0.12 s/it");
  ASSERT_EQ(s.has_step, 0);
}

SM_TEST(track_plural_counter_keys) {
  sm_track_sample s = P("Steps: 300, loss: 0.512");
  ASSERT_EQ(s.step, 300);
  s = P("steps=400 loss=0.5 secs/step=1.2");
  ASSERT_EQ(s.step, 400);
  ASSERT_NEAR(s.step_time, 1.2, 1e-12);
  s = P("(epoch: 3, iters: 300, time: 1.200, data: 0.010) G_GAN: 1.234 "
        "G_L1: 5.678 D_real: 0.512 D_fake: 0.498");
  ASSERT_EQ(s.counter, SM_TC_ITER);
  ASSERT_EQ(s.step, 300);
  ASSERT_NEAR(s.epoch, 3, 0);
  /* Plurals only as "key: N": "Training for steps 500" is no step. */
  s = P("steps 500 loss 0.5");
  ASSERT_EQ(s.has_step, 0);
  s = P("iterations: 12.5 loss 0.5");
  ASSERT_EQ(s.has_step, 0);
}

SM_TEST(track_number_sign_between_key_and_value) {
  sm_track_sample s = P("Step #300: loss=0.512");
  ASSERT_EQ(s.step, 300);
  ASSERT_NEAR(s.loss, 0.512, 1e-12);
  s = P("Epoch #3 batch #20 loss 0.4");
  ASSERT_EQ(s.step, 20);
  ASSERT_NEAR(s.epoch, 3, 0);
  /* A numbered key is no value: "loss #1: 0.3" is the first loss. */
  s = P("step 5 loss #1: 0.3");
  ASSERT_NAN(s.loss);
  ASSERT_EQ(s.step, 5);
}

SM_TEST(track_values_in_tuples_and_lists) {
  /* "lr:(2.973e-05,)" (a tuple of parameter groups), "lr: (1e-4, 5e-5)",
   * "lr=[5e-05, 5e-05]": the first value is the key's. */
  sm_track_sample s =
      P("2024-03-01 10:00:00,000 INFO: [exp..][epoch:  6, iter:     700, "
        "lr:(2.973e-05,)] [eta: 4:34:17]");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 700);
  ASSERT_NEAR(s.lr, 2.973e-05, 1e-15);
  s = P("iter 10 lr: (1e-4, 5e-5) loss 0.2");
  ASSERT_NEAR(s.lr, 1e-4, 1e-15);
  s = P("step 11 lr=[5e-05, 5e-05] loss 0.3");
  ASSERT_NEAR(s.lr, 5e-05, 1e-15);
  /* Running averages in parentheses after a value stay unkeyed. */
  s = P("Epoch: [3][30/100]  Time 0.512 (0.600)  Loss 2.10 (2.30)");
  ASSERT_NEAR(s.loss, 2.10, 1e-12);
  ASSERT_NEAR(s.step_time, 0.512, 1e-12);
}

SM_TEST(track_key_qualifier_written_apart) {
  /* "time (data): 1.631 (0.261)": the time of the step, the data time in
   * parentheses after it; "Loss (train) = 0.52"; "Acc (val): 0.9"
   * marks evaluation; "(s)" stays a unit. */
  sm_track_sample s = P("[epoch:  6, iter:     700] [eta: 4:34:17, time "
                        "(data): 1.631 (0.261)] l_mos: 3.19e-03");
  ASSERT_NEAR(s.step_time, 1.631, 1e-12);
  ASSERT_EQ(s.step, 700);
  s = P("step 30 | Loss (train) = 0.52 | lr 1e-3");
  ASSERT_NEAR(s.loss, 0.52, 1e-12);
  s = P("step 30 | Loss (val): 0.61");
  ASSERT_NAN(s.loss);
  s = P("step 30 | Time (ms): 412.5 | loss 0.5");
  ASSERT_NEAR(s.step_time, 0.4125, 1e-12);
  s = P("step 31 | Time (s): 1.25 | loss 0.5");
  ASSERT_NEAR(s.step_time, 1.25, 1e-12);
}

SM_TEST(track_keys_named_by_units) {
  /* A time unit over a step word is the time of a step, a step word
   * over seconds a rate, whatever the framework calls it. */
  sm_track_sample s = P("| epoch   3 |   200/ 2983 batches | lr 20.00 | "
                        "ms/batch 45.21 | loss  5.12 | ppl   167.3");
  ASSERT_EQ(s.step, 200);
  ASSERT_NEAR(s.step_time, 0.04521, 1e-12);
  s = P("iter 30 loss 0.5 secs_per_iter=1.25");
  ASSERT_NEAR(s.step_time, 1.25, 1e-12);
  s = P("update 30 loss 0.5 s/update: 0.75");
  ASSERT_NEAR(s.step_time, 0.75, 1e-12);
  s = P("step 30 loss 0.5 us/step: 870");
  ASSERT_NEAR(s.step_time, 870e-6, 1e-15);
  s = P("step 30 loss 0.5 batch/s: 4.0");
  ASSERT_NEAR(s.rate, 4.0, 1e-12);
  s = P("step 30 loss 0.5 iters_per_sec 2.5");
  ASSERT_NEAR(s.rate, 2.5, 1e-12);
  /* Per epoch, per sample or per minute is not a step time. */
  s = P("step 30 loss 0.5 sec/epoch: 300");
  ASSERT_NAN(s.step_time);
  s = P("step 30 loss 0.5 ms/sample: 3.2");
  ASSERT_NAN(s.step_time);
  s = P("step 30 loss 0.5 min/step: 3");
  ASSERT_NAN(s.step_time);
  s = P("step 30 loss 0.5 batch/min: 3");
  ASSERT_NAN(s.rate);
}

/* ==== Losses named as terms ==== */

SM_TEST(track_loss_terms_by_prefix) {
  /* Restoration and quality-assessment trainers name each term "l_X";
   * without a whole loss the first term is reported (the dev data's
   * convention), a single term alone is the loss. */
  sm_track_sample s = P("[epoch:  2, iter:   1,200, lr:(1.0e-04,)] "
                        "l_pix: 1.2e-02 l_percep: 3.4e-01");
  ASSERT_NEAR(s.loss, 1.2e-02, 1e-15);
  s = P("[epoch:  2, iter:   1,200, lr:(1.0e-04,)] l_percep: 3.4e-01");
  ASSERT_NEAR(s.loss, 3.4e-01, 1e-15);
  s = P("iter 40 l_g_pix: 0.02 l_g_gan: 0.11 l_d_real: 0.6 loss: 0.9");
  ASSERT_NEAR(s.loss, 0.9, 1e-12); /* a whole loss wins */
  /* Not a prefix: "l1", "lambda_l1", "l_" alone. */
  s = P("iter 40 l1: 0.02");
  ASSERT_NAN(s.loss);
  s = P("iter 40 l_: 0.02");
  ASSERT_NAN(s.loss);
}

SM_TEST(track_gan_losses_named_by_networks) {
  /* pix2pix: generator terms first; CycleGAN prints a discriminator
   * first: the generator's is still reported; a bar description with
   * "d:" and "gen:". */
  sm_track_sample s = P("(epoch: 3, iters: 300, time: 1.200, data: 0.010) "
                        "G_GAN: 1.234 G_L1: 5.678 D_real: 0.512 D_fake: 0.498");
  ASSERT_NEAR(s.loss, 1.234, 1e-12);
  s = P("(epoch: 1, iters: 100, time: 0.3) D_A: 0.251 G_A: 0.602 cycle_A: 1.1 "
        "D_B: 0.240 G_B: 0.588");
  ASSERT_NEAR(s.loss, 0.602, 1e-12);
  s = P("d: -0.001;gen: -0.008:  10%|#         | 2001/20000 "
        "[1:13:32<17:03:31,  3.41s/it]");
  ASSERT_EQ(s.step, 2001);
  ASSERT_NEAR(s.loss, -0.008, 1e-12);
  s = P("Epoch 2 step 40 netD: 0.7 netG: 2.1");
  ASSERT_NEAR(s.loss, 2.1, 1e-12);
  /* Only both networks together make them losses. */
  s = P("step 3 d_model: 512 lr 1e-4");
  ASSERT_NAN(s.loss);
  s = P("step 4 gen: 3 lr 1e-4");
  ASSERT_NAN(s.loss);
  s = P("step 5 g_lr: 1e-4 d_lr: 4e-4");
  ASSERT_NAN(s.loss);
  /* A discriminator loss alone is still the loss printed. */
  s = P("step 6 d_loss: 0.31");
  ASSERT_NEAR(s.loss, 0.31, 1e-12);
  s = P("step 7 d_loss: 0.31 g_loss: 1.7");
  ASSERT_NEAR(s.loss, 1.7, 1e-12);
}

/* ==== Lines glued together ==== */

SM_TEST(track_output_glued_after_a_bar) {
  /* A bar never prints after its closing bracket: what follows on the
   * same line is another writer's (a loss dict, a log line) and is read
   * on its own, so the bar's position is not lost to it. */
  sm_track_result r =
      feed("\r  3%|2 | 242/8000 [39:26<16:02:27,  7.20s/it]"
           "\r  3%|2 | 243/8000 [39:33<15:52:08,  7.12s/it]"
           "\r  3%|2 | 244/8000 [39:40<15:39:22,  7.03s/it]"
           "{'eval_loss': 0.5166, 'eval_runtime': 642.6, 'epoch': 0.06}\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 244);
  ASSERT_EQ(r.total_steps, 8000);
  ASSERT_NAN(r.loss); /* the evaluation loss is not a training loss */
  r = feed("Epoch 1: 50%|#####| 50/100 [00:10<00:10, 5.00it/s, loss=0.9, "
           "lr=[0.1]]2024-03-01 10:00:00 INFO saving checkpoint\n"
           "Epoch 1: 51%|#####| 51/100 [00:10<00:10, 5.00it/s, loss=0.8, "
           "lr=[0.1]]  {'loss': 0.8}\n");
  ASSERT_EQ(r.step, 51);
  ASSERT_NEAR(r.loss, 0.8, 1e-12);
  /* A bar without a total ("2310it [14:22, 2.68it/s]") ends the same
   * way. */
  r = feed("2309it [14:21, 2.68it/s]\r2310it [14:22, 2.68it/s]Traceback "
           "(most recent call last):\n");
  ASSERT_EQ(r.step, 2310);
  /* Brackets that are no bar are not split: a time of day with
   * milliseconds before a log line. */
  sm_track_sample s = P("[12:34:56,123] INFO step 40 loss 0.5");
  ASSERT_EQ(s.step, 40);
  r = feed("[12:34:56,123] step 40 loss 0.5\n[12:34:57,123] step 41 loss "
           "0.4\n");
  ASSERT_EQ(r.step, 41);
  ASSERT_NEAR(r.loss, 0.4, 1e-12);
}

/* ==== Malformed input ==== */

SM_TEST(track_general_mechanisms_on_malformed_lines) {
  /* Cut-off qualifiers, tuples and brackets, a '#' at the end, keys of
   * units alone, very long qualifiers: nothing is invented and nothing
   * reads past the line. */
  static const char *const lines[] = {
      "time (",
      "time (data",
      "time (data)",
      "time (data):",
      "time (data): ",
      "time (abcdefghijklmnopqrstuvwxyz): 1.2 step 3",
      "lr:(",
      "lr:(,)",
      "lr:((((((((((((((((((((((((1e-4",
      "step #",
      "step ##3 loss 1",
      "#",
      "ms/",
      "/s: 3",
      "ms/batch",
      "_per_: 3 step 1",
      "l_",
      "G_: 1 D_: 2",
      "[00:00<",
      "[00:00<00:00, 1.0it/s",
      "[00:00<00:00, 1.0it/s]]]]]]",
      "[99:99:99:99<]x",
      "3/10 [00:01<00:02, 1.0it/s]\x1b[A{",
  };
  for (size_t i = 0; i < SM_ARRAY_LEN(lines); i++) {
    sm_track_sample s = P(lines[i]);
    sm_track_result r = feed(lines[i]);
    ASSERT(s.kind >= SM_TK_NONE && s.kind <= SM_TK_RUN);
    if (s.has_step)
      ASSERT(s.step >= 0);
    if (r.ok && r.has_step)
      ASSERT(r.step >= 0);
  }
  ASSERT_EQ(P("time (abcdefghijklmnopqrstuvwxyz): 1.2 step 3").step_time !=
                P("time (abcdefghijklmnopqrstuvwxyz): 1.2 step 3").step_time,
            1);
  ASSERT_EQ(P("step ##3 loss 1").has_step, 0);
  {
    /* A line of brackets and clocks, 8 KiB long, and a bar followed by
     * 8 KiB of glued text. */
    char big[9000];
    size_t o = 0;
    while (o + 24 < sizeof(big)) {
      memcpy(big + o, "[00:01<00:02, 1.0it/s]x", 23);
      o += 23;
    }
    big[o] = '\0';
    ASSERT_EQ(feed(big).ok, 0);
    o = (size_t)snprintf(big, sizeof(big), "5/10 [00:05<00:05, 1.0it/s]");
    memset(big + o, 'a', sizeof(big) - o - 2);
    big[sizeof(big) - 2] = '\n';
    big[sizeof(big) - 1] = '\0';
    ASSERT_EQ(feed(big).step, 5);
  }
}

/* ==== Lines written over ==== */

SM_TEST(track_backspaces_end_segments_like_carriage_returns) {
  /* Keras' bar under a notebook or a pseudo-terminal erases the previous
   * update with backspaces instead of a carriage return: each update is
   * a segment, and the bytes are text, not binary. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 1; ep <= 3; ep++) {
    sm_buf_addf(&b, "Epoch %d/20\n", ep);
    for (int s = 10; s <= 100; s += 10) {
      if (s > 10)
        for (int k = 0; k < 60; k++)
          sm_buf_add(&b, "\b", 1);
      if (s < 100)
        sm_buf_addf(&b, " %3d/100 [====>.....] - ETA: 3s - loss: 1.%04d", s,
                    9000 - ep * 100 - s);
      else
        sm_buf_addf(&b,
                    "100/100 [==========] - 5s 48ms/step - loss: 1.%04d - "
                    "val_loss: 1.9",
                    9000 - ep * 100 - s);
    }
    sm_buf_add(&b, "\n", 1);
  }
  r = feed(b.data);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.binary, 0);
  ASSERT_EQ(r.step, 100);
  ASSERT_NEAR(r.epoch, 3, 0);
  ASSERT_NEAR(r.loss, 1.86, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.048, 1e-9);
  /* A spinner erased character by character is no progress. */
  ASSERT_EQ(feed("|\b/\b-\b\\\b|\b/\n").ok, 0);
  sm_buf_release(&b);
}

/* ==== Logger prefixes ==== */

SM_TEST(track_source_location_is_no_value) {
  /* loguru's "module:function:line" (and logging's
   * "%(name)s:%(funcName)s:%(lineno)d"): the line number is not the
   * value of a key, even of a function called "step". */
  sm_track_sample s = P("2024-03-01 10:00:00.123 | INFO     | "
                        "train:step:42 - step=100 loss=1.5");
  ASSERT_EQ(s.step, 100);
  s = P("INFO:__main__:train_step:88 - epoch:3 step:200 loss:0.5");
  ASSERT_EQ(s.step, 200);
  ASSERT_NEAR(s.epoch, 3, 0);
  /* "file.py:300" (two parts) and "step:12K" keep their meaning. */
  s = P("INFO 2024-03-01 10:00:00 train.py:300 step:12K loss:0.5");
  ASSERT_EQ(s.step, 12000);
  s = P("epoch:3:step:40 loss 0.5"); /* numbers between: no location */
  ASSERT_EQ(s.step, 40);
}

/* ==== Tables ==== */

SM_TEST(track_table_rows_are_judged_by_their_head) {
  /* fastai prints a head once and a row of numbers per epoch (the last
   * column a clock): the head names the columns, the classifier is not
   * asked what a row of bare numbers is. */
  sm_track_result r =
      feed("epoch     train_loss  valid_loss  accuracy  time    \n"
           "0         0.612345    0.523456    0.776543  00:12     \n"
           "1         0.512345    0.423456    0.816543  00:12     \n"
           "2         0.462345    0.403456    0.836543  00:11     \n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0); /* epochs only: no step */
  ASSERT_NEAR(r.epoch, 2, 0);
  ASSERT_NEAR(r.loss, 0.462345, 1e-12);
  /* Rows whose head names only evaluation are evaluation. */
  r = feed("epoch     valid_loss  accuracy  time    \n"
           "0         0.523456    0.776543  00:12     \n"
           "1         0.423456    0.816543  00:12     \n");
  ASSERT_EQ(r.ok, 0);
  /* A head that names neither a loss nor an epoch is read too. */
  r = feed("   it     mse      lr    time\n  100  0.0123  0.0010  1.2\n"
           "  200  0.0113  0.0010  1.2\n");
  ASSERT_EQ(r.step, 200);
  ASSERT_NEAR(r.lr, 0.001, 1e-12);
  ASSERT_NEAR(r.step_time_s, 1.2, 1e-12);
  /* A row that does not fit the head (a value more) is not named. */
  r = feed("epoch     train_loss  valid_loss  time    \n"
           "0  0.61  0.52  0.77  00:12\n");
  ASSERT_EQ(r.ok, 0);
}

/* ==== Namespaced keys ==== */

SM_TEST(track_namespaced_losses) {
  /* Composer prints a header with the counter and one "key: value" per
   * line under it; TensorBoard-style tags put the split after the
   * loss. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 1; i <= 12; i++)
    sm_buf_addf(&b,
                "[batch=%d/500]:\n\t Train time/batch: %d\n\t Train "
                "loss/train/total: 2.%03d\n\t Train metrics/train/Accuracy: "
                "0.5\n",
                10 * i, 10 * i - 1, 500 - i);
  r = feed(b.data);
  ASSERT_EQ(r.step, 120);
  ASSERT_EQ(r.total_steps, 500);
  ASSERT_NEAR(r.loss, 2.488, 1e-12);
  sm_buf_release(&b);
  ASSERT_NEAR(P("step 3 Loss/train: 0.7").loss, 0.7, 1e-12);
  ASSERT_NEAR(P("step 3 losses/total: 0.8").loss, 0.8, 1e-12);
  ASSERT_NAN(P("step 3 loss/val: 0.9").loss);
  ASSERT_NAN(P("step 3 loss/mean: 0.9").loss); /* a statistic */
  ASSERT_NAN(P("step 3 loss/train/box: 0.9").loss);
}

SM_TEST(track_namespaced_metric_dicts) {
  /* RL trainers print one dict per step, "ns/key:value" joined by " - ":
   * the namespace's whole loss ("actor/loss") above its named terms, the
   * step entry of the namespace of timers ("timing_s/step") as the step
   * time, its phases not. */
  sm_track_sample s =
      P("(TaskRunner pid=123) step:21 - actor/pg_loss:0.0 - "
        "actor/entropy_loss:11.6 - actor/kl_loss:0.93 - actor/loss:-0.0107 "
        "- timing_s/gen:2.54 - timing_s/update_actor:2.93 - "
        "timing_s/step:11.03 - perf/throughput:216.1");
  ASSERT_EQ(s.step, 21);
  ASSERT_NEAR(s.loss, -0.0107, 1e-12);
  ASSERT_NEAR(s.step_time, 11.03, 1e-12);
  s = P("iter 5 - time_ms/iter: 412.0 - loss: 0.3");
  ASSERT_NEAR(s.step_time, 0.412, 1e-12);
  s = P("iter 5 - timing/step: 0.7 - loss: 0.3");
  ASSERT_NEAR(s.step_time, 0.7, 1e-12);
  /* Phases of a step and other namespaces are no step time. */
  s = P("step:3 - timing_s/gen:2.54 - data/time: 0.1 - loss: 0.3");
  ASSERT_NAN(s.step_time);
  s = P("step:3 - timing_per_token_ms/step:1.2 - loss: 0.3");
  ASSERT_NAN(s.step_time);
  /* A namespace that names a component keeps it a component. */
  s = P("step:3 - box/loss:0.2 - obj/loss:0.1");
  ASSERT_NAN(s.loss);
}

/* ==== Step semantics ==== */

SM_TEST(track_bar_described_in_the_plural_counts_epochs) {
  /* "Epochs:  20%| 2/10" is the outer bar of nested tqdm bars (the
   * inner one drawn below it, ESC[A between): it sets the epoch, and the
   * inner bar is per epoch. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int ep = 0; ep < 3; ep++)
    for (int s = 0; s <= 100; s += 5)
      sm_buf_addf(&b,
                  "\rEpochs:  %d%%|#  | %d/10 [0%d:00<07:00, 60.00s/it]\x1b[A"
                  "\rBatches: %d%%|#  | %d/100 [%02d:%02d<00:30,  1.67it/s, "
                  "loss=%.3f]\x1b[B",
                  ep * 10, ep, ep, s, s, s * 6 / 600, s * 6 / 10 % 60,
                  1 - s * 0.001);
  sm_buf_add(&b, "\n", 1);
  r = feed(b.data);
  ASSERT_EQ(r.step, 100);
  ASSERT_NEAR(r.epoch, 2, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  /* Read newest first, the tail starts inside an epoch: the first epoch
   * head of the tail is no boundary between epochs. */
  r = scan(b.data);
  ASSERT_EQ(r.step, 100);
  ASSERT_NEAR(r.epoch, 2, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  sm_buf_release(&b);
}

SM_TEST(track_announced_loop_cut_by_a_crash_read_backwards) {
  /* An evaluation bar announced by "***** Running Evaluation *****"
   * and cut by a crash, its updates on one line: the scan that finds
   * enough samples inside that line still keeps the line's earlier
   * updates, so the loop's start is seen and it is not training. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 50; s <= 500; s += 50)
    sm_buf_addf(&b,
                "\r %2d%%|#    | %d/1000 [%02d:%02d<10:00,  1.20s/it]\n"
                "{'loss': %.4f, 'learning_rate': 4e-05, 'epoch': %.2f}\n",
                s / 10, s, s / 60, s % 60, 2 - s / 1000.0, s / 1000.0);
  sm_buf_addf(&b, "***** Running Evaluation *****\n  Num examples = 300\n");
  for (int i = 1; i <= 30; i++)
    sm_buf_addf(&b, "\r %2d%%|#  | %d/100 [00:%02d<00:30,  3.50it/s]", i, i,
                i / 3);
  sm_buf_addf(&b, "\nTraceback (most recent call last):\nRuntimeError: "
                  "CUDA error: an illegal memory access\n");
  r = scan(b.data);
  ASSERT_EQ(r.step, 500);
  ASSERT_EQ(r.total_steps, 1000);
  ASSERT_NEAR(r.loss, 1.5, 1e-12);
  ASSERT_EQ(r.restarts, 0);
  sm_buf_release(&b);
}

SM_TEST(track_same_final_state_twice_is_no_restart) {
  /* Two ranks print the finished bar twice in a row, then it runs past
   * its total ("20001it"): one global loop that counted to 20000. */
  sm_track_result r = feed("\r 99%|#| 19998/20000 [12:14:47<00:04,  2.06s/it]"
                           "\r 99%|#| 19999/20000 [12:14:50<00:02,  2.06s/it]"
                           "\r100%|#| 20000/20000 [12:14:52<00:00,  2.06s/it]"
                           "\r100%|#| 20000/20000 [12:14:52<00:00,  2.06s/it]\n"
                           "saving model to out/gen_00010.pth ...\n"
                           "\r: 20001it [12:17:02,  3.35s/it]\n");
  ASSERT_EQ(r.step, 20001);
  ASSERT_EQ(r.total_steps, 20000);
  ASSERT_STREQ(r.step_scope, "global");
  /* The final bars of two epochs with validation between: a loop that
   * restarts every epoch. */
  r = feed("100% 76/76 [01:12<00:00, 1.05it/s, train_loss=0.0986]\n"
           "Validating: 100% 10/10 [00:02<00:00, 4.00it/s]\n"
           "100% 76/76 [01:12<00:00, 1.05it/s, train_loss=0.0912]\n"
           "Validating: 100% 10/10 [00:02<00:00, 4.00it/s]\n"
           "100% 76/76 [01:11<00:00, 1.06it/s, train_loss=0.0899]\n");
  ASSERT_STREQ(r.step_scope, "epoch");
}

/* ==== Epoch-level logs ==== */

SM_TEST(track_epoch_lines_time_epochs_not_steps) {
  /* Lines that count epochs and no step: the loss and the epoch are
   * reported, no step, and a time printed there is an epoch's, whatever
   * it is called; a time named per step still is a step time. */
  static const char *const fmt[] = {
      "Epoch [%d/1500]\tloss=1.%04d\tlr=0.000100\tepoch_time=152.516\n",
      "epoch %d: train loss 1.%04d, val loss 1.9, time 150.1s\n",
      "==> Epoch %d, avg loss 1.%04d, took 151.2 sec\n",
      "Epoch %03d | loss 1.%04d | acc 0.91 | 152.3 s\n",
  };
  for (size_t f = 0; f < SM_ARRAY_LEN(fmt); f++) {
    sm_buf b;
    sm_track_result r;
    sm_buf_init(&b, 0);
    for (int e = 1; e <= 12; e++)
      sm_buf_addf(&b, fmt[f], e, 9000 - e);
    r = feed(b.data);
    ASSERT_EQ(r.ok, 1);
    ASSERT_EQ(r.has_step, 0);
    ASSERT_NEAR(r.epoch, 12, 0);
    ASSERT_NEAR(r.loss, 1.8988, 1e-12);
    ASSERT_NAN(r.step_time_s);
    sm_buf_release(&b);
  }
  ASSERT_NEAR(P("epoch 3 loss 0.5 1.25 s/it").rate, 0.8, 1e-12);
  ASSERT_NEAR(P("epoch 3 loss 0.5 0.4 s/step").step_time, 0.4, 1e-12);
  ASSERT_NEAR(P("epoch 3 loss 0.5 step_time 1.5").step_time, 1.5, 1e-12);
  ASSERT_NAN(P("epoch 3 loss 0.5 time 150.0").step_time);
  /* Without an epoch, a time beside a loss is still taken per step. */
  ASSERT_NEAR(P("loss 0.5 time 0.25").step_time, 0.25, 1e-12);
}

SM_TEST(track_training_beside_validation_passes_the_classifier) {
  /* The classifier calls a line that prints validation metrics
   * evaluation; where the line also names its training loss, the fine
   * parse (which never reports the validation loss) decides. */
  sm_track_result r = feed("epoch 1: train loss 1.9900, val loss 2.1, val "
                           "acc 0.40, time 150.1s\n"
                           "epoch 2: train loss 1.8800, val loss 2.0, val "
                           "acc 0.45, time 150.2s\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 1.88, 1e-12);
  /* Only validation: not training. */
  r = feed("epoch 1: val loss 2.1, val acc 0.40\nepoch 2: val loss 2.0, val "
           "acc 0.45\n");
  ASSERT_EQ(r.ok, 0);
}

/* ==== Runs that ended ==== */

SM_TEST(track_run_summary_is_no_step) {
  /* A finished Trainer prints a summary of the whole run (its clock,
   * its average rates and its average loss), then refreshes the bar
   * once: the newest loss is the last logged one, and one refresh of a
   * finished bar is no restart of the loop. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 100; s <= 1000; s += 100)
    sm_buf_addf(&b,
                "\r%3d%%|#| %d/1000 [%02d:%02d<00:00,  9.50it/s]\n"
                "{'loss': %.4f, 'learning_rate': 1e-05, 'epoch': %.2f}\n",
                s / 10, s, s / 600, s / 10 % 60, 1.0 - s / 2000.0,
                s * 3 / 1000.0);
  sm_buf_addf(&b, "\nTraining completed.\n\n{'train_runtime': 105.2, "
                  "'train_samples_per_second': 76.1, "
                  "'train_steps_per_second': 9.5, 'train_loss': 0.7712, "
                  "'epoch': 3.0}\n\r100%%|#| 1000/1000 [01:45<00:00,  "
                  "9.51it/s]\n");
  r = feed(b.data);
  ASSERT_EQ(r.step, 1000);
  ASSERT_NEAR(r.loss, 0.5, 1e-12);
  ASSERT_STREQ(r.step_scope, "global");
  r = scan(b.data);
  ASSERT_NEAR(r.loss, 0.5, 1e-12);
  sm_buf_release(&b);
  /* Without a step, the run's clock makes the line a summary; with one
   * (a step line that prints the run's clock) it stays a sample. */
  ASSERT_EQ(P("{'train_runtime': 105.2, 'train_loss': 0.77}").summary, 1);
  ASSERT_EQ(P("step 40 loss 0.5 train_runtime 105.2").summary, 0);
}

SM_TEST(track_bare_fraction_under_epoch_heads_is_per_epoch) {
  /* Keras with verbose=2 prints one "N/N - 5s - loss ..." line per
   * epoch under its "Epoch k/K" head: a position in the epoch. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int e = 1; e <= 5; e++)
    sm_buf_addf(&b,
                "Epoch %d/10\n1563/1563 - 5s - loss: 0.%04d - accuracy: "
                "0.9 - val_loss: 0.5 - 5s/epoch - 3ms/step\n",
                e, 5000 - e * 100);
  r = feed(b.data);
  ASSERT_EQ(r.step, 1563);
  ASSERT_NEAR(r.epoch, 5, 0);
  ASSERT_STREQ(r.step_scope, "epoch");
  ASSERT_NEAR(r.step_time_s, 0.003, 1e-12);
  sm_buf_release(&b);
}

/* ==== Values inside reprs, averages beside values ==== */

SM_TEST(track_values_printed_as_tensor_reprs) {
  /* A loss printed as the framework's object: PyTorch tensors (with a
   * device and a grad_fn, also a one-element list), NumPy/JAX arrays,
   * TensorFlow tensors, NumPy 2 scalars. */
  static const char *const lines[] = {
      "Epoch 1 step 100 loss tensor(0.5123, device='cuda:0', "
      "grad_fn=<NllLossBackward0>)",
      "step 100 loss: tensor(0.5123, device='cuda:0')",
      "step=100 loss=tensor([0.5123], device='cuda:0')",
      "step 100 {'loss': tensor(0.5123, grad_fn=<AddBackward0>), 'lr': 1e-3}",
      "step 100 loss: Array(0.5123, dtype=float32)",
      "step 100 loss: DeviceArray(0.5123, dtype=float32)",
      "step 100 loss tf.Tensor(0.5123, shape=(), dtype=float32)",
      "step 100 loss: np.float32(0.5123)",
  };
  for (size_t i = 0; i < SM_ARRAY_LEN(lines); i++) {
    sm_track_sample s = P(lines[i]);
    ASSERT_EQ(s.kind, SM_TK_SAMPLE);
    ASSERT_EQ(s.step, 100);
    ASSERT_NEAR(s.loss, 0.5123, 1e-12);
  }
  ASSERT(P("step 100 loss: tensor(nan, device='cuda:0')").loss_nonfinite);
  /* Not a repr: a word before a parenthesis, a repr without a value. */
  ASSERT_NAN(P("step 100 loss: mean(0.5)").loss);
  ASSERT_NAN(P("step 100 loss: tensor(x)").loss);
  ASSERT_NAN(P("step 100 loss: tensor(").loss);
}

SM_TEST(track_averages_give_way_to_the_plain_loss) {
  /* A running average printed before the current value does not hide
   * it; alone, it is the loss printed. */
  ASSERT_NEAR(P("step 100 avg loss: 0.52 loss: 0.50").loss, 0.50, 1e-12);
  ASSERT_NEAR(P("step 100 running_loss 0.61 | loss 0.55").loss, 0.55, 1e-12);
  ASSERT_NEAR(P("step 100 | mean_loss=0.61").loss, 0.61, 1e-12);
  ASSERT_NEAR(P("[1,  2000] running_loss: 2.173").loss, 2.173, 1e-12);
  /* Below a plain loss, above a component. */
  ASSERT_NEAR(P("step 100 box_loss 0.1 avg_loss 0.7").loss, 0.7, 1e-12);
}

/* ==== Step time ==== */

SM_TEST(track_printed_interval_time_checked_against_clocks) {
  /* Lines every 50 steps, 25.3 s apart, each printing "time 25.3s": the
   * time of the logging interval, 0.506 s a step.  Lines every 10 steps,
   * 5.1 s apart, printing "time 0.51": a step's time, kept. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int i = 1; i <= 14; i++) {
    int t = i * 253 / 10;
    sm_buf_addf(&b,
                "2024-03-01 10:%02d:%02d | step %d | loss 1.%03d | time "
                "25.3s\n",
                t / 60, t % 60, 50 * i, 900 - i);
  }
  r = feed(b.data);
  ASSERT_EQ(r.step, 700);
  ASSERT_STREQ(r.step_time_basis, "explicit");
  ASSERT_STREQ(r.step_time_source, "interval");
  ASSERT(r.step_time_s > 0.48 && r.step_time_s < 0.53);
  sm_buf_reset(&b);
  for (int i = 1; i <= 14; i++) {
    int t = i * 51 / 10;
    sm_buf_addf(&b,
                "2024-03-01 10:00:%02d | iter %d | loss 1.%03d | time 0.51\n",
                t, 10 * i, 900 - i);
  }
  r = feed(b.data);
  ASSERT_STREQ(r.step_time_source, "printed");
  ASSERT_NEAR(r.step_time_s, 0.51, 1e-12);
  sm_buf_release(&b);
}

SM_TEST(track_announced_loop_logged_every_few_batches) {
  /* A feature-extraction loop announced on its own line and logged
   * every 10 of its 782 batches starts at "[ 10/782]", not at 0: still
   * at its start, still not training. */
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 100; s <= 1000; s += 100)
    sm_buf_addf(&b, "Epoch: [3]  [%d/1000]  loss: 1.%03d  time: 0.21\n", s,
                900 - s / 100);
  sm_buf_adds(&b, "Extracting features for train set...\n");
  for (int s = 10; s <= 200; s += 10)
    sm_buf_addf(&b, "  [%3d/782]  eta: 0:00:30  time: 0.04  max mem: 900\n", s);
  r = feed(b.data);
  ASSERT_EQ(r.step, 1000);
  ASSERT_NEAR(r.loss, 1.89, 1e-12);
  /* Starting at a tenth of its total it is not at its start. */
  sm_buf_reset(&b);
  sm_buf_adds(&b, "Extracting features for train set...\n");
  for (int s = 80; s <= 200; s += 10)
    sm_buf_addf(&b, "  [%3d/782]  eta: 0:00:30  time: 0.04  max mem: 900\n", s);
  r = feed(b.data);
  ASSERT_EQ(r.step, 200);
  sm_buf_release(&b);
}
