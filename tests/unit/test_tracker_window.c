/* test_tracker_window.c - the tracker's window and answer, fed with log
 * text: which counter is followed, merged samples, side loops, outliers,
 * the bases of the step time, counter-less logs, the JSON answer. */
#include <math.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "tracker/track_int.h"

#define ASSERT_NAN(x) ASSERT((x) != (x))

/* Feeds text to a new tracker and returns its answer. */
static sm_track_result feed(const char *text, int samples) {
  sm_track_opts o = {0};
  sm_track_result r;
  sm_tracker *t;

  o.samples = samples;
  t = sm_tracker_new(&o);
  ASSERT(t != NULL);
  ASSERT_OK(sm_tracker_feed(t, text, strlen(text)));
  sm_tracker_result(t, &r);
  sm_tracker_free(t);
  return r;
}

SM_TEST(track_robust_median_drops_outliers) {
  double v[] = {1.10, 1.21, 0.495};
  double w[] = {2.0, 2.0, 2.0, 2.0, 50.0};
  double x[] = {5.0};
  size_t kept;
  ASSERT_NEAR(sm__trk_robust_median(v, 3, &kept), 1.155, 1e-12);
  ASSERT_EQ(kept, 2);
  ASSERT_NEAR(sm__trk_robust_median(w, 5, &kept), 2.0, 1e-12);
  ASSERT_EQ(kept, 4);
  ASSERT_NEAR(sm__trk_robust_median(x, 1, NULL), 5.0, 0);
  ASSERT_NAN(sm__trk_robust_median(x, 0, NULL));
}

SM_TEST(track_window_megatron_median_without_warmup) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int it = 10; it <= 110; it += 10)
    sm_buf_addf(&b,
                " iteration %8d/   20000 | elapsed time per iteration (ms): "
                "%.1f | learning rate: 2.999E-04 | lm loss: %.6E | loss "
                "scale: 65536.0 |\ntime (ms) | forward-compute: 612.33 | "
                "backward-compute: 1201.12\n",
                it, it == 10 ? 9412.4 : 2200.0 + it % 30, 9 - it / 40.0);
  r = feed(b.data, 10);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 110);
  ASSERT_EQ(r.total_steps, 20000);
  ASSERT_NEAR(r.loss, 9 - 110 / 40.0, 1e-9);
  ASSERT(r.step_time_s > 2.19 && r.step_time_s < 2.24); /* 9.4 s dropped */
  ASSERT_STREQ(r.step_time_basis, "explicit");
  ASSERT_STREQ(r.step_time_source, "printed");
  ASSERT_EQ(r.samples, 10);
  sm_buf_release(&b);
}

SM_TEST(track_window_keras_evaluate_is_a_side_loop) {
  sm_track_result r =
      feed("Epoch 95/100\n"
           "363/363 [==============================] - 0s 676us/step - loss: "
           "0.3230 - val_loss: 0.3379\n"
           "Epoch 96/100\n"
           "363/363 [==============================] - 0s 676us/step - loss: "
           "0.3341 - val_loss: 0.3213\n"
           "162/162 [==============================] - 0s 440us/step - loss: "
           "0.3310\n",
           10);
  ASSERT_EQ(r.step, 363);
  ASSERT_EQ(r.total_steps, 363);
  ASSERT_NEAR(r.epoch, 96, 0);
  ASSERT_NEAR(r.loss, 0.3341, 1e-12);
  ASSERT_NEAR(r.step_time_s, 0.000676, 1e-12);
}

SM_TEST(track_window_merges_ranks_and_prefers_dense_counters) {
  sm_buf b;
  sm_track_result r;
  sm_buf_init(&b, 0);
  for (int s = 1; s <= 12; s++)
    for (int rank = 0; rank < 4; rank++)
      sm_buf_addf(&b, "[rank%d]: step=%d loss=%.3f lr=0.0003 step_time=0.8s\n",
                  rank, s * 10, 2.0 - s / 100.0);
  /* A stray summary with a stronger-looking counter, once. */
  sm_buf_adds(&b, "global_step=5 loss=9.9 lr=0.1\n");
  r = feed(b.data, 10);
  ASSERT_EQ(r.step, 120);
  ASSERT_NEAR(r.loss, 1.88, 1e-12);
  ASSERT_EQ(r.samples, 10); /* four ranks' copies of a step are one */
  sm_buf_release(&b);
}

SM_TEST(track_window_step_time_bases) {
  sm_track_result r;
  /* Timestamps between samples, divided by the step delta. */
  r = feed("2024-01-17 09:00:00.000 | INFO | step=100 loss=1.9 lr=0.1\n"
           "2024-01-17 09:02:30.000 | INFO | step=200 loss=1.8 lr=0.1\n"
           "2024-01-17 09:05:00.000 | INFO | step=300 loss=1.7 lr=0.1\n",
           10);
  ASSERT_NEAR(r.step_time_s, 1.5, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  /* A cumulative time column without a name. */
  r = feed("step 100 | loss 0.40 | 200.5s\nstep 110 | loss 0.39 | 220.5s\n"
           "step 120 | loss 0.38 | 240.5s\nstep 130 | loss 0.37 | 260.5s\n",
           10);
  ASSERT_NEAR(r.step_time_s, 2.0, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
  ASSERT_STREQ(r.step_time_source, "elapsed clock");
  /* The same column with values that do not grow: one line per step. */
  r = feed("step 100 | loss 0.40 | 2.5s\nstep 101 | loss 0.39 | 2.4s\n"
           "step 102 | loss 0.38 | 2.6s\n",
           10);
  ASSERT_NEAR(r.step_time_s, 2.5, 1e-9);
  /* ...but several steps apart it could be a logging interval's. */
  r = feed("step 100 | loss 0.40 | 2.5s\nstep 110 | loss 0.39 | 2.4s\n"
           "step 120 | loss 0.38 | 2.6s\n",
           10);
  ASSERT_NAN(r.step_time_s);
  /* A rate: tqdm's s/it. */
  r = feed(" 10%|#  | 10/100 [00:12<01:48,  1.20s/it]\n"
           " 11%|#  | 11/100 [00:13<01:47,  1.21s/it]\n",
           10);
  ASSERT_NEAR(r.step_time_s, 1.205, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "explicit");
  ASSERT_STREQ(r.step_time_source, "rate");
  /* Nothing to measure with: unknown, never guessed. */
  r = feed("Epoch [2/10], Step [300/600], Loss: 0.2\n"
           "Epoch [2/10], Step [400/600], Loss: 0.1\n",
           10);
  ASSERT_EQ(r.step, 400);
  ASSERT_NAN(r.step_time_s);
  ASSERT(r.step_time_basis == NULL);
}

SM_TEST(track_window_hf_bar_with_separate_loss_dicts) {
  sm_track_result r = feed(
      "\r  5%|5         | 50/1000 [01:05<20:40,  1.31s/it]\r  5%|5         "
      "| 51/1000 [01:06<20:39,  1.30s/it]\n"
      "{'loss': 2.2871, 'learning_rate': 4.59e-05, 'epoch': 0.08}\n"
      "\r  5%|5         | 52/1000 [01:08<20:38,  1.30s/it]\n"
      "100%|##########| 63/63 [00:08<00:00,  7.65it/s]\n",
      10);
  ASSERT_EQ(r.step, 52); /* the evaluation bar is a side loop */
  ASSERT_EQ(r.total_steps, 1000);
  ASSERT_NEAR(r.loss, 2.2871, 1e-12);
  ASSERT_NEAR(r.lr, 4.59e-5, 1e-15);
  ASSERT_NEAR(r.step_time_s, 1.30, 1e-9);
}

SM_TEST(track_window_stepless_and_missing) {
  sm_track_result r;
  r = feed("2025-01-02 10:00:01,100 - INFO - epoch 7 - batch loss: 0.011\n"
           "2025-01-02 10:00:02,100 - INFO - epoch 7 - batch loss: 0.012\n",
           10);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
  ASSERT_NEAR(r.loss, 0.012, 1e-12);
  ASSERT_NEAR(r.epoch, 7, 0);
  ASSERT_NAN(r.step_time_s); /* no step counter: no step time */
  r = feed("Downloading shards: 100%|#| 2/2 [01:31<00:00, 45.5s/it]\n"
           "{'eval_loss': 1.2, 'epoch': 1.0}\n"
           "Traceback (most recent call last):\n",
           10);
  ASSERT_EQ(r.ok, 0);
  ASSERT_EQ(r.has_step, 0);
  ASSERT_NAN(r.loss);
  r = feed("", 10);
  ASSERT_EQ(r.ok, 0);
}

SM_TEST(track_window_yolo_table) {
  sm_track_result r = feed(
      "      Epoch    GPU_mem  train_loss    val_loss    top1_acc    "
      "top5_acc\n"
      "      4/5     1.73G       0.766       0.664       0.951       0.998: "
      "100% 148/148 [00:36<00:00,  4.05it/s]\n"
      "      5/5     1.73G       0.724       0.634       0.959       0.997: "
      "100% 148/148 [00:37<00:00,  3.94it/s]\n",
      10);
  ASSERT_EQ(r.step, 148);
  ASSERT_NEAR(r.epoch, 5, 0);
  ASSERT_NEAR(r.loss, 0.724, 1e-12);
}

SM_TEST(track_window_feed_in_pieces) {
  /* The same log fed byte by byte gives the same answer. */
  const char *log = "step=10 loss=2.0 lr=0.1 step_time=0.5s\n"
                    "step=20 loss=1.9 lr=0.1 step_time=0.5s\n"
                    "\rstep=30 loss=1.8 lr=0.1 step_time=0.5s\r";
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  for (size_t i = 0; log[i]; i++)
    ASSERT_OK(sm_tracker_feed(t, log + i, 1));
  sm_tracker_result(t, &r);
  ASSERT_EQ(r.step, 30);
  ASSERT_NEAR(r.loss, 1.8, 1e-12);
  /* An unfinished segment waits; a huge one is cut, not stored. */
  {
    char *big = malloc(3 << 20);
    memset(big, 'x', 3 << 20);
    ASSERT_OK(sm_tracker_feed(t, big, 3 << 20));
    ASSERT_OK(sm_tracker_feed(t, "\nstep=40 loss=1.7 lr=0.1\n", 25));
    free(big);
  }
  sm_tracker_result(t, &r);
  ASSERT_EQ(r.step, 40);
  sm_tracker_free(t);
}

SM_TEST(track_result_json_contract) {
  sm_track_result r = feed("step=10 loss=2.0 lr=0.1 step_time=0.5s "
                           "throughput=120.5\nstep=20 loss=1.9 lr=0.1 "
                           "step_time=0.5s throughput=121.5\n",
                           10);
  sm_buf b;
  static const char *const keys[] = {
      "\"status\":\"ok\"",
      "\"step\":20",
      "\"total_steps\":null",
      "\"epoch\":null",
      "\"loss\":1.9",
      "\"lr\":0.1",
      "\"step_time_s\":0.5",
      "\"throughput\":{\"value\":121.5,\"unit\":",
      "\"samples\":2",
      "\"lines_scanned\":",
      "\"bytes_read\":",
      "\"format\":",
      NULL};
  sm_buf_init(&b, 0);
  ASSERT_OK(sm_track_result_json(&r, &b));
  for (int i = 0; keys[i]; i++)
    if (strstr(b.data, keys[i]) == NULL)
      SM_FAIL_AT("no %s in %s", keys[i], b.data);
  sm_buf_reset(&b);
  r = feed("nothing here\n", 10);
  ASSERT_OK(sm_track_result_json(&r, &b));
  ASSERT(strstr(b.data, "\"status\":\"missing\"") != NULL);
  ASSERT(strstr(b.data, "\"step\":null") != NULL);
  ASSERT(strstr(b.data, "\"loss\":null") != NULL);
  ASSERT(strstr(b.data, "\"throughput\":null") != NULL);
  sm_buf_release(&b);
}

SM_TEST(track_window_nonfinite_loss_and_epoch_bars) {
  sm_track_result r;
  /* The newest loss is nan: unknown, not the last finite one. */
  r = feed("step 10 loss 2.5 lr 0.1\nstep 11 loss nan lr 0.1\n", 10);
  ASSERT_EQ(r.step, 11);
  ASSERT_NAN(r.loss);
  ASSERT_NEAR(r.lr, 0.1, 1e-12);
  r = feed("step 10 loss inf lr 0.1\nstep 11 loss 2.4 lr 0.1\n", 10);
  ASSERT_NEAR(r.loss, 2.4, 1e-12);
  /* An outer epoch bar and an inner iteration bar (older examples). */
  r = feed("Epoch:  33%|###3      | 1/3 [05:00<10:00, 300.0s/it]\n"
           "Iteration:  12%|#2        | 120/1000 [00:40<04:53,  3.00it/s]\r"
           "Iteration:  13%|#3        | 130/1000 [00:43<04:50,  3.00it/s]\n",
           10);
  ASSERT_EQ(r.step, 130);
  ASSERT_EQ(r.total_steps, 1000);
  ASSERT_NEAR(r.epoch, 1, 0);
  ASSERT_NEAR(r.step_time_s, 1 / 3.0, 1e-6);
}
