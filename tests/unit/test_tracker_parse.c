/* test_tracker_parse.c - the tracker's line cleaner, timestamp finder and
 * fine parser: one realistic line per format with the facts it must give,
 * the guards that keep evaluation and start-up output out, and malformed
 * input. */
#include <math.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

static const char *clean(const char *line) {
  static char out[1024];
  sm_track_clean(line, strlen(line), out, sizeof(out));
  return out;
}

/* ==== Cleaning ==== */

SM_TEST(track_clean_strips_escapes_and_rank_prefixes) {
  ASSERT_STREQ(clean("\x1b[32mINFO\x1b[0m step 3"), "INFO step 3");
  ASSERT_STREQ(clean("\x1b]0;title\x07loss=1"), "loss=1");
  ASSERT_STREQ(clean("[rank3]: step=10 loss=2.0"), "step=10 loss=2.0");
  ASSERT_STREQ(clean("[rank12]:[titan] step: 5"), "[titan] step: 5");
  ASSERT_STREQ(clean("0: iteration 5/10"), "iteration 5/10");
  ASSERT_STREQ(clean(" 12: iter 3"), "iter 3");
  ASSERT_STREQ(clean("[default0]:step 4"), "step 4");
  ASSERT_STREQ(clean("[1,0]<stdout>:step 4"), "step 4");
  ASSERT_STREQ(clean("worker-1: step 4"), "step 4");
  ASSERT_STREQ(clean("worker-0: [rank3]: step 4"), "step 4");
  /* A tab is a blank on a line with figures; a line without digits
   * keeps its tabs (the column separators of a head). */
  ASSERT_STREQ(clean("a\t1"), "a 1");
  ASSERT_STREQ(clean("a\tb"), "a\tb");
  /* Not prefixes: a time of day, a word label. */
  ASSERT_STREQ(clean("10:23:45 INFO x"), "10:23:45 INFO x");
  ASSERT_STREQ(clean("train: Scanning"), "train: Scanning");
  ASSERT_STREQ(clean(""), "");
}

SM_TEST(track_clean_bounds_its_output) {
  char big[5000], out[64];
  size_t n;
  memset(big, 'x', sizeof(big));
  n = sm_track_clean(big, sizeof(big), out, sizeof(out));
  ASSERT_EQ(n, 63);
  ASSERT_EQ(out[63], '\0');
  ASSERT_EQ(sm_track_clean(big, sizeof(big), out, 0), 0);
}

/* ==== Timestamps ==== */

SM_TEST(track_timestamps_of_common_loggers) {
  double a, b;
  size_t end = 0;
  a = sm_track_timestamp("[2022-11-24 01:45:35,701] [INFO] x", 34, &end);
  b = sm_track_timestamp("[2022-11-24 01:45:41,579] [INFO] x", 34, NULL);
  ASSERT_NEAR(b - a, 5.878, 1e-6);
  ASSERT_EQ(end, 24);
  a = sm_track_timestamp("2022/08/22 15:51:56 - mmengine", 30, NULL);
  b = sm_track_timestamp("2022/08/22 15:52:06 - mmengine", 30, NULL);
  ASSERT_NEAR(b - a, 10.0, 1e-9);
  a = sm_track_timestamp("[11/16 03:11:50] d2", 19, NULL);
  b = sm_track_timestamp("[11/17 03:11:50] d2", 19, NULL);
  ASSERT_NEAR(b - a, 86400.0, 1e-9);
  a = sm_track_timestamp("I0615 15:21:45.879393  1860 solver.cpp", 38, NULL);
  b = sm_track_timestamp("I0615 15:28:43.896898  1860 solver.cpp", 38, NULL);
  ASSERT_NEAR(b - a, 418.017505, 1e-5);
  a = sm_track_timestamp("I20250724 07:33:12 139 root", 27, NULL);
  ASSERT(a == a);
  a = sm_track_timestamp("2024-01-17T09:21:13.512Z | INFO", 31, NULL);
  ASSERT(a == a);
  a = sm_track_timestamp("[12:00:01] step 4", 17, NULL);
  ASSERT_NEAR(a, 43201.0, 1e-9);
  /* An eta further on is not a time of day; nor is a step counter. */
  ASSERT_NAN(sm_track_timestamp("eta: 3:16:01  iter: 939", 23, NULL));
  ASSERT_NAN(sm_track_timestamp("step 1200 loss 2.0", 18, NULL));
  ASSERT_NAN(sm_track_timestamp("", 0, NULL));
  ASSERT_NAN(sm_track_timestamp("2022-13-40 99:99:99", 19, NULL));
}

/* ==== One line per format ==== */

SM_TEST(track_parse_megatron) {
  sm_track_sample s =
      P(" iteration       70/    1000 | consumed samples:          280 | "
        "elapsed time per iteration (ms): 2738.6 | learning rate: 1.490E-04 | "
        "global batch size:     4 | lm loss: 8.434969E+00 | loss scale: "
        "16384.0 | grad norm: 5.795 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.counter, SM_TC_ITER);
  ASSERT_STREQ(s.counter_name, "iteration");
  ASSERT_EQ(s.step, 70);
  ASSERT_EQ(s.total, 1000);
  ASSERT_NEAR(s.loss, 8.434969, 1e-9);
  ASSERT_NEAR(s.lr, 1.49e-4, 1e-12);
  ASSERT_NEAR(s.step_time, 2.7386, 1e-9);
}

SM_TEST(track_parse_hf_dict_and_bar) {
  sm_track_sample s =
      P("{'loss': 2.1534, 'grad_norm': 1.873, 'learning_rate': 4.95e-05, "
        "'epoch': 0.03}");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.has_step, 0);
  ASSERT_NEAR(s.loss, 2.1534, 1e-9);
  ASSERT_NEAR(s.lr, 4.95e-5, 1e-12);
  ASSERT_NEAR(s.epoch, 0.03, 1e-12);
  s = P(" 47%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8b  "
        "   | 2350/5000 [1:12:03<1:21:15,  1.84s/it]");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_STREQ(s.counter_name, "tqdm");
  ASSERT_EQ(s.step, 2350);
  ASSERT_EQ(s.total, 5000);
  ASSERT_NEAR(s.rate, 1 / 1.84, 1e-9);
  ASSERT_NEAR(s.bar_elapsed, 4323, 1e-9);
  s = P("  3%|3         | 37/500 [00:12<02:31,  3.05it/s, loss=0.42]");
  ASSERT_EQ(s.step, 37);
  ASSERT_NEAR(s.rate, 3.05, 1e-9);
  ASSERT_NEAR(s.loss, 0.42, 1e-9);
  ASSERT_STREQ(s.tp_unit, "it/s");
  s = P("2310it [14:22,  2.68it/s, loss=0.551]");
  ASSERT_EQ(s.step, 2310);
  ASSERT_EQ(s.has_total, 0);
}

SM_TEST(track_parse_lightning_and_nemo) {
  sm_track_sample s =
      P("Epoch 3:  45%|####5     | 450/1000 [01:23<01:42,  5.37it/s, "
        "v_num=0, train_loss=0.234, val_loss=0.31]");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE); /* a val_loss does not make it eval */
  ASSERT_EQ(s.step, 450);
  ASSERT_NEAR(s.epoch, 3, 0);
  ASSERT_NEAR(s.loss, 0.234, 1e-9);
  s = P("Epoch 0: :  12%|#1        | 120/1000 [02:00<14:40, "
        "reduced_train_loss=2.34, global_step=119.0, consumed_samples="
        "30720.0, train_step_timing in s=0.98]");
  ASSERT_EQ(s.counter, SM_TC_STEP); /* global_step beats the bar */
  ASSERT_EQ(s.step, 119);
  ASSERT_NEAR(s.loss, 2.34, 1e-9);
  ASSERT_NEAR(s.step_time, 0.98, 1e-9);
}

SM_TEST(track_parse_keras) {
  sm_track_sample s =
      P("1407/1407 [==============================] - 8s 5ms/step - loss: "
        "1.1925 - accuracy: 0.5701 - val_loss: 1.5532 - val_accuracy: 0.4686");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_STREQ(s.counter_name, "keras");
  ASSERT_EQ(s.step, 1407);
  ASSERT_NEAR(s.loss, 1.1925, 1e-9);
  ASSERT_NEAR(s.step_time, 0.005, 1e-12);
  ASSERT_NEAR(s.bar_elapsed, 8, 1e-12);
  ASSERT_NAN(s.anon_time); /* the epoch's 8s is the bar's, not a step's */
  s = P("  57/1875 [..............................] - ETA: 4s - loss: "
        "1.2345 - accuracy: 0.6543");
  ASSERT_EQ(s.step, 57);
  ASSERT_NEAR(s.loss, 1.2345, 1e-9);
  s = P("782/782 \xe2\x94\x81\xe2\x94\x81\xe2\x94\x81 9s 11ms/step - "
        "accuracy: 0.71 - loss: 0.85");
  ASSERT_STREQ(s.counter_name, "keras");
  ASSERT_NEAR(s.step_time, 0.011, 1e-12);
  s = P("Epoch 96/100");
  ASSERT_EQ(s.kind, SM_TK_EPOCH_HEAD);
  ASSERT_NEAR(s.epoch, 96, 0);
}

SM_TEST(track_parse_bracketed_epoch_counters) {
  sm_track_sample s =
      P("2022/08/22 15:51:56 - mmengine - INFO - Epoch(train) [1][70/1563]  "
        "lr: 1.0000e-03  eta: 0:06:28  time: 0.0348  data_time: 0.0072  "
        "memory: 392  loss: 2.7351");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_STREQ(s.counter_name, "bracket");
  ASSERT_EQ(s.step, 70);
  ASSERT_EQ(s.total, 1563);
  ASSERT_NEAR(s.epoch, 1, 0);
  ASSERT_NEAR(s.step_time, 0.0348, 1e-12); /* not data_time */
  ASSERT(s.ts == s.ts);
  s = P("Epoch: [13][  0/391]\tTime  2.094 ( 2.070)\tLoss 5.6260e-02 "
        "(5.6260e-02)\tAcc@1  96.88 ( 96.88)");
  ASSERT_EQ(s.step, 0);
  ASSERT_NEAR(s.epoch, 13, 0);
  ASSERT_NEAR(s.loss, 0.05626, 1e-12); /* not the average in brackets */
  ASSERT_NEAR(s.step_time, 2.094, 1e-12);
  s = P("[1,  2000] loss: 2.173");
  ASSERT_STREQ(s.counter_name, "pair");
  ASSERT_EQ(s.step, 2000);
  ASSERT_NEAR(s.epoch, 1, 0);
}

SM_TEST(track_parse_detectron2_loss_components) {
  sm_track_sample s =
      P("[11/16 03:12:16] d2.utils.events INFO:  eta: 3:15:23  iter: 979  "
        "total_loss: 0.3926  loss_cls: 0.2132  loss_box_reg: 0.108  "
        "time: 0.6724  data_time: 0.0622  lr: 0.0013054  max_mem: 11811M");
  ASSERT_EQ(s.counter, SM_TC_ITER);
  ASSERT_EQ(s.step, 979);
  ASSERT_NEAR(s.loss, 0.3926, 1e-12); /* total, not a component */
  ASSERT_NEAR(s.step_time, 0.6724, 1e-12);
  /* YOLO-style component losses alone give no loss. */
  s = P("box_loss: 0.04 obj_loss: 0.03 cls_loss: 0.01 step: 4");
  ASSERT_NAN(s.loss);
  /* Loss scale and loss statistics are not losses. */
  s = P("step 4 | loss scale: 65536.0 | loss/mean: 2.1 | lr: 0.1");
  ASSERT_NAN(s.loss);
  /* A model's own loss name is the loss; of two and no whole loss,
   * the first. */
  s = P("epoch: 0|step: 476|ppo_ep: 1|act_loss: -0.0387");
  ASSERT_NEAR(s.loss, -0.0387, 1e-12);
  s = P("epoch: 0|step: 476|ppo_ep: 1|act_loss: -0.0387|cri_loss: -0.0131");
  ASSERT_NEAR(s.loss, -0.0387, 1e-12);
  ASSERT_EQ(s.step, 476);
}

SM_TEST(track_parse_deepspeed_counters) {
  sm_track_sample s =
      P("[2023-04-18 03:20:25,144] [INFO] [timer.py:199:stop] epoch=15/"
        "micro_step=460/global_step=7360, RunningAvgSamplesPerSec=171.74, "
        "CurrSamplesPerSec=171.46, MemAllocated=3.96GB");
  ASSERT_EQ(s.counter, SM_TC_STEP); /* global_step over micro_step */
  ASSERT_STREQ(s.counter_name, "global_step");
  ASSERT_EQ(s.step, 7360);
  ASSERT_NEAR(s.throughput, 171.46, 1e-9); /* current over running avg */
  ASSERT_STREQ(s.tp_unit, "samples/s");
  s = P("[2022-11-24 01:45:47,461] [INFO] [timer.py:198:stop] 0/1020, "
        "RunningAvgSamplesPerSec=12.14, CurrSamplesPerSec=9.19");
  ASSERT_EQ(s.counter, SM_TC_FRACTION);
  s = P("[2022-11-24 01:45:47,458] [INFO] [logging.py:68:log_dist] [Rank 0] "
        "step=510, skipped=0, lr=[5e-05, 5e-05], mom=[(0.9, 0.999)]");
  ASSERT_EQ(s.step, 510);
  ASSERT_NEAR(s.lr, 5e-5, 1e-15);
}

SM_TEST(track_parse_small_formats) {
  sm_track_sample s = P("iter 100: loss 2.3456, time 45.23ms, mfu 32.10%");
  ASSERT_EQ(s.step, 100);
  ASSERT_NEAR(s.step_time, 0.04523, 1e-12);
  s = P("step 4: train loss 4.123000 (took 1234.500000 ms)");
  ASSERT_NEAR(s.step_time, 1.2345, 1e-12);
  ASSERT_NEAR(s.loss, 4.123, 1e-12);
  s = P("step:6199/6200 train_loss:3.2344 train_time:1338853ms "
        "step_avg:216.33ms");
  ASSERT_NEAR(s.step_time, 0.21633, 1e-12);
  ASSERT_NEAR(s.cum_time, 1338.853, 1e-9);
  ASSERT_EQ(s.train_clock, 1);
  s = P("s:19559 trl:3.2217 lr:0.000000 norm:0.22");
  ASSERT_EQ(s.step, 19559);
  ASSERT_NEAR(s.loss, 3.2217, 1e-12);
  s = P("[rank0]:2024-05-01 12:00:00,000 - root - INFO - step: 100  loss:  "
        "5.1234  memory: 30.12GiB(31.72%)  tps: 5,678  mfu: 40.12%");
  ASSERT_EQ(s.step, 100);
  ASSERT_NEAR(s.throughput, 5678, 0);
  ASSERT_STREQ(s.tp_unit, "tokens/s");
  s = P("Epoch 1 | iter 10 step 5 | loss train: 1.524, val: n/a | iter "
        "time: 603.03 ms (step)");
  ASSERT_EQ(s.counter, SM_TC_STEP); /* optimizer step over iterations */
  ASSERT_EQ(s.step, 5);
  ASSERT_EQ(s.kind, SM_TK_SAMPLE); /* "val: n/a" with a train loss */
  ASSERT_NEAR(s.step_time, 0.60303, 1e-12);
  s = P("I0301 10:00:00.123456 140000000 train.py:123] [1000] train/loss="
        "2.345, train/learning_rate=0.001, train/steps_per_second=4.5");
  ASSERT_STREQ(s.counter_name, "[step]");
  ASSERT_EQ(s.step, 1000);
  ASSERT_NEAR(s.rate, 4.5, 1e-12);
  s = P("2023-01-01 12:00:00 | INFO | train_inner | epoch 001:    100 / "
        "1000 loss=9.876, ppl=723.4, wps=12345.6, ups=2.34, num_updates=100,"
        " lr=1.25e-05");
  ASSERT_STREQ(s.counter_name, "num_updates");
  ASSERT_NEAR(s.rate, 2.34, 1e-12);
  ASSERT_NEAR(s.epoch, 1, 0);
  s = P("INFO step 3/100 loss=0.7 time=0.21s");
  ASSERT_STREQ(s.counter_name, "step"); /* a log level is no part of it */
  ASSERT_EQ(s.step, 3);
  s = P("step   312 | loss 3.123456 | lr 5.9e-04 | 342.12 ms | 12 tok/s");
  ASSERT_NEAR(s.anon_time, 0.34212, 1e-12);
}

SM_TEST(track_parse_table_heads_and_rows) {
  trk_line *L = malloc(sizeof(trk_line));
  trk_head h = {0};
  sm_track_sample s;
  const char *head =
      "      Epoch    GPU_mem  train_loss    val_loss    top1_acc";
  const char *row = "      3/5     1.73G        0.82       0.704       0.934: "
                    "100% 148/148 [00:35<00:00,  4.20it/s]";
  sm__trk_parse(L, head, strlen(head), NULL, &s, &h);
  ASSERT_EQ(s.kind, SM_TK_TABLE_HEAD);
  ASSERT_EQ(h.n, 5);
  ASSERT_STREQ(h.col[2], "train_loss");
  sm__trk_parse(L, row, strlen(row), &h, &s, NULL);
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 148);
  ASSERT_NEAR(s.epoch, 3, 0);
  ASSERT_NEAR(s.loss, 0.82, 1e-12); /* train_loss, not val_loss */
  /* Prose with a metric word is no head; nor is a row without one. */
  sm__trk_parse(L, "the loss of the model was", 25, NULL, &s, &h);
  ASSERT(s.kind != SM_TK_TABLE_HEAD);
  sm__trk_parse(L, row, strlen(row), NULL, &s, NULL);
  ASSERT_NAN(s.loss);
  free(L);
}

/* ==== Guards ==== */

SM_TEST(track_guards_keep_evaluation_out) {
  static const char *const eval[] = {
      "{'eval_loss': 1.2345, 'eval_runtime': 12.34, 'epoch': 1.0}",
      "Evaluating:  40%|####      | 25/63 [00:03<00:05,  7.12it/s]",
      "Validation DataLoader 0:  50%|#####     | 50/100 [00:02<00:02, 20it/s]",
      "epoch 003 | valid on 'valid' subset | loss 4.567 | num_updates 3000",
      "Test: [   0/48]  Time: 2.345 (2.345)  Loss:  0.7654 (0.7654)",
      "2024/03/01 10:05:00 - mmengine - INFO - Epoch(val)  [3][ 50/500]    "
      "eta: 0:00:30  time: 0.0612",
      "s:19560 tel:3.2722",
      "validation: val_loss=2.0112 val_acc=0.6011",
      "[03/01] d2.evaluation.evaluator: Inference done 11/3334. Total: "
      "0.0443 s/iter. ETA=0:02:27",
      "val[ 0/40]\tTime  2.171 ( 2.171)\tLoss 7.1221e-02 (7.1221e-02)",
      "Class Images Instances P R mAP50 mAP50-95: 100% 4/4 "
      "[00:01<00:00,  2.01it/s]",
      "Val Step 10 loss 0.3",
      NULL};
  for (int i = 0; eval[i]; i++) {
    sm_track_sample s = P(eval[i]);
    if (s.kind != SM_TK_EVAL)
      SM_FAIL_AT("not evaluation (kind %d): %s", s.kind, eval[i]);
  }
}

SM_TEST(track_guards_keep_startup_out) {
  static const char *const init[] = {
      "Downloading shards: 100%|##########| 2/2 [01:31<00:00, 45.53s/it]",
      "Loading checkpoint shards:  50%|#####     | 1/2 [00:03<00:03,  3.0s/it]",
      "Map (num_proc=8):  45%|####5     | 4500/10000 [00:01<00:02, 2468.42 "
      "examples/s]",
      "100%|##########| 97.8M/97.8M [00:01<00:00, 88.5MB/s]",
      "Generating train split: 100%|####| 36718/36718 [00:00<00:00, 123456 "
      "examples/s]",
      "train: Scanning /data/labels... 126 images: 100% 128/128 "
      "[00:00<00:00, 1709.36it/s]",
      NULL};
  for (int i = 0; init[i]; i++) {
    sm_track_sample s = P(init[i]);
    if (s.kind != SM_TK_INIT)
      SM_FAIL_AT("not start-up (kind %d): %s", s.kind, init[i]);
  }
}

SM_TEST(track_guards_need_evidence) {
  /* A step counter alone, a bare fraction alone, trivial or empty bars,
   * a run's total time: no training sample. */
  static const char *const none[] = {
      "Saving checkpoint at step 5000",
      "node-8:92682:60217 [7] NCCL INFO Channel 13/32 :    0   1   2   3",
      "  0%|          | 0/2 [00:00<?, ?it/s]",
      "100%|##########| 2/2 [00:00<00:00, 354.85it/s]",
      "Training time: 11.20s",
      "skipped iteration 3012: loss is nan",
      "Step at 1020 with Perplexity: 24.1",
      "'step':1020, 'ppl': 24.15, 'seq_len': 1024",
      "[2023-04-18 03:15:04,569] [INFO] [loss_scaler.py:188:update_scale] "
      "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
      "65536, reducing to 32768",
      NULL};
  for (int i = 0; none[i]; i++) {
    sm_track_sample s = P(none[i]);
    if (s.kind == SM_TK_SAMPLE)
      SM_FAIL_AT("taken for a sample: %s", none[i]);
  }
}

/* ==== Malformed input ==== */

SM_TEST(track_parse_malformed_input) {
  sm_track_sample s;
  char *big;
  unsigned char bin[4096];
  sm_rng r;

  sm_track_parse("", 0, &s);
  ASSERT_EQ(s.kind, SM_TK_NONE);
  sm_track_parse("   \t ", 5, &s);
  ASSERT_EQ(s.kind, SM_TK_NONE);
  /* Invalid UTF-8 and stray bytes around a real line. */
  s = P("\xff\xfe step \xc3\x28 10 loss=\xe2\x82 1.5");
  ASSERT(s.kind == SM_TK_NONE || s.kind == SM_TK_SAMPLE);
  /* Numbers beyond any counter. */
  s = P("step 99999999999999999999 loss 1e999999 lr -");
  ASSERT_EQ(s.has_step, 0);
  s = P("step -5 loss 2.0");
  ASSERT_EQ(s.has_step, 0);
  /* A megabyte of one line: only its start is looked at. */
  big = malloc(1 << 20);
  for (size_t i = 0; i < (1u << 20); i++)
    big[i] = "step 1 loss=2.5 | "[i % 18];
  sm_track_parse(big, 1 << 20, &s);
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 1);
  free(big);
  /* Random bytes never crash and never give impossible values. */
  sm_rng_seed(&r, 7);
  for (int round = 0; round < 200; round++) {
    for (size_t i = 0; i < sizeof(bin); i++)
      bin[i] = (unsigned char)(sm_rng_next(&r) & 0xff);
    sm_track_parse((const char *)bin, (size_t)(round * 20), &s);
    ASSERT(s.kind >= SM_TK_NONE && s.kind <= SM_TK_TABLE_HEAD);
    if (s.has_step)
      ASSERT(s.step >= 0);
  }
}

SM_TEST(track_key_table_is_sorted) {
  trk_keyinfo ki;
  trk_keys_stats st;
  ASSERT(sm__trk_keytable_check(&st) > 100);
  ASSERT_EQ(st.duplicates, 0);
  for (int c = 0; c < 14; c++)
    ASSERT(st.words[c] > 0);
  /* Keys that are units need no entry. */
  sm__trk_key_lookup("ms/iter", &ki);
  ASSERT_EQ(ki.role, R_TIME);
  ASSERT(ki.flags & KF_MS);
  sm__trk_key_lookup("sec/step", &ki);
  ASSERT_EQ(ki.role, R_TIME);
  ASSERT(!(ki.flags & (KF_MS | KF_US)));
  sm__trk_key_lookup("steps_per_second", &ki);
  ASSERT_EQ(ki.role, R_RATE);
  sm__trk_key_lookup("it/s", &ki);
  ASSERT_EQ(ki.role, R_RATE);
  sm__trk_key_lookup("time/epoch", &ki);
  ASSERT_EQ(ki.role, R_NONE);
  sm__trk_key_lookup("learning_rate", &ki);
  ASSERT_EQ(ki.role, R_LR);
  sm__trk_key_lookup("val_loss", &ki);
  ASSERT_EQ(ki.role, R_EVAL_LOSS);
  sm__trk_key_lookup("loss_cls", &ki);
  ASSERT_EQ(ki.role, R_IGNORE);
  sm__trk_key_lookup("act_loss", &ki);
  ASSERT_EQ(ki.role, R_LOSS);
  ASSERT(ki.flags & KF_PART);
  sm__trk_key_lookup("epoch(val)", &ki);
  ASSERT_EQ(ki.role, R_EPOCH);
  ASSERT(ki.flags & KF_EVAL);
  sm__trk_key_lookup("train_lr", &ki);
  ASSERT_EQ(ki.role, R_LR);
  sm__trk_key_lookup("training_time", &ki);
  ASSERT(ki.role != R_TIME);
  sm__trk_key_lookup("no_such_key", &ki);
  ASSERT_EQ(ki.role, R_NONE);
}
