/* test_tracker_terms.c - round 8 of issue 12: how a log names its loss
 * when the name is composed (a logger's per-step / per-epoch suffixes,
 * a split namespace before a whole-loss key, a total written short) and
 * what is reported when a line prints only named loss terms.  Every line
 * is written for the test, with made-up numbers, in several shapes. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

/* ==== Per-step and per-epoch suffixes ==== */

SM_TEST(track_terms_step_suffix_is_the_steps_value) {
  /* A logger that logs a metric per step and per epoch names the two
   * NAME_step and NAME_epoch; the step's value is the loss, whatever
   * namespace or whole-loss key NAME is. */
  static const char *lines[] = {
      "Epoch 2:  40%|####      | 80/200 [00:10<00:15,  7.91it/s, v_num=a1, "
      "train/loss_total_step=1.240, train/loss_total_epoch=1.870]",
      "Epoch 2:  40%|####      | 80/200 [00:10<00:15,  7.91it/s, "
      "train_loss_epoch=1.870, train_loss_step=1.240]",
      "Epoch 2:  40%|####      | 80/200 [00:10<00:15,  7.91it/s, "
      "loss_step=1.240, loss_epoch=1.870, v_num=3]",
      "step: 80 | train/total_loss_step: 1.240 | lr_step: 3e-4",
  };
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
    sm_track_sample s = P(lines[i]);
    ASSERT_EQ(s.kind, SM_TK_SAMPLE);
    ASSERT_EQ(s.step, 80);
    ASSERT_NEAR(s.loss, 1.24, 1e-9);
  }
  ASSERT_NEAR(P(lines[3]).lr, 3e-4, 1e-12);
}

SM_TEST(track_terms_epoch_suffix_is_never_the_loss) {
  /* Only the epoch's mean is printed (the step value scrolled away or
   * was not logged): no loss, the step still counts. */
  sm_track_sample s =
      P("Epoch 4: 100%|##########| 200/200 [00:25<00:00,  7.90it/s, "
        "v_num=a1, train/loss_total_epoch=1.870]");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 200);
  ASSERT_NAN(s.loss);
  s = P("iter 300 | train_loss_epoch=0.91 | lr 1e-4");
  ASSERT_EQ(s.step, 300);
  ASSERT_NAN(s.loss);
  /* A validation metric with the suffix stays evaluation. */
  s = P("Epoch 4: 100%|##########| 50/50 [00:02<00:00, 20.1it/s, "
        "val/loss_total_step=2.2]");
  ASSERT(s.kind != SM_TK_SAMPLE || s.loss != s.loss);
}

SM_TEST(track_terms_suffix_near_misses) {
  /* The suffixes name other facts where their stem is no loss. */
  sm_track_sample s = P("global_step=40 time_step=0.5 loss=2.5");
  ASSERT_EQ(s.step, 40);
  ASSERT_NEAR(s.loss, 2.5, 1e-9);
  s = P("step 40 max_epoch=90 loss 2.5");
  ASSERT_EQ(s.step, 40);
  ASSERT_NEAR(s.loss, 2.5, 1e-9);
  ASSERT(s.epoch != 90);
  /* Suffix without a stem, or a stem cut to nothing. */
  s = P("step 40 _step=3 _epoch=4 loss 2.5");
  ASSERT_NEAR(s.loss, 2.5, 1e-9);
}

SM_TEST(track_terms_split_namespace_before_a_whole_loss) {
  /* "train" before a whole-loss key of the table, joined by '_' or '/'. */
  static const char *lines[] = {
      "step 12 train_loss_total=0.75 train_loss_cls=0.2",
      "step 12 train/loss_total=0.75 train/loss_cls=0.2",
      "step 12 training/total_loss=0.75 training/box_loss=0.2",
  };
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
    sm_track_sample s = P(lines[i]);
    ASSERT_EQ(s.step, 12);
    ASSERT_NEAR(s.loss, 0.75, 1e-9);
  }
  /* A component under the namespace is no loss of its own. */
  sm_track_sample s = P("step 12 train_loss_cls=0.2 lr=0.1");
  ASSERT_EQ(s.step, 12);
  ASSERT_NAN(s.loss);
}

SM_TEST(track_terms_total_written_short) {
  sm_track_sample s =
      P("Train step:400/900,Loc Loss: 0.2100,Cls Loss: 0.6000,Tot Loss: "
        "0.4100");
  ASSERT_EQ(s.step, 400);
  ASSERT_NEAR(s.loss, 0.41, 1e-9);
  s = P("iter 400 loss_a 0.21 loss_b 0.60 loss_tot 0.41");
  ASSERT_NEAR(s.loss, 0.41, 1e-9);
  /* "tot" alone is no loss. */
  s = P("iter 400 tot 7 loss 0.5");
  ASSERT_NEAR(s.loss, 0.5, 1e-9);
}

/* ==== Named terms without a whole loss ==== */

SM_TEST(track_terms_named_terms_give_the_first) {
  /* Actor-critic, multi-head and RL losses printed as terms only: the
   * first term is the loss (the dev data's labelling convention: the
   * actor's loss of an actor-critic line); the step and the other facts
   * stay. */
  static const struct {
    const char *line;
    double loss;
  } cases[] = {
      {"epoch: 0|step: 476|act_loss: -0.0387|cri_loss: -0.0131", -0.0387},
      {"iter 50 | actor_loss -665.0 | critic_loss 718.2 | lr 3e-4", -665.0},
      {"step=9 policy loss=0.12 value loss=0.88 time 0.4s", 0.12},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    sm_track_sample s = P(cases[i].line);
    ASSERT_EQ(s.kind, SM_TK_SAMPLE);
    ASSERT(s.has_step);
    ASSERT_NEAR(s.loss, cases[i].loss, 1e-9);
  }
  /* One named loss alone is the loss. */
  sm_track_sample s = P("iter 50 | actor_loss -665.0 | lr 3e-4");
  ASSERT_NEAR(s.loss, -665.0, 1e-9);
  /* A whole loss beside the terms wins. */
  s = P("iter 50 | actor_loss 1.5 | critic_loss 2.0 | total_loss 3.5");
  ASSERT_NEAR(s.loss, 3.5, 1e-9);
  /* A GAN's networks keep their rule: the generator's loss. */
  s = P("[3/10][100/500] Loss_D: 0.41 Loss_G: 2.37");
  ASSERT_NEAR(s.loss, 2.37, 1e-9);
}

SM_TEST(track_terms_malformed) {
  /* Suffix-like keys of every length around the key limit, empty values
   * and binary bytes: no crash, no invented loss. */
  char line[600];
  sm_track_sample s;

  memset(line, 'a', sizeof(line));
  memcpy(line, "step 3 ", 7);
  memcpy(line + 300, "_loss_step=1.5", 14);
  line[sizeof(line) - 1] = '\0';
  s = P(line);
  (void)s;
  s = P("step 3 train/loss_total_step= train_loss_epoch=");
  ASSERT_NAN(s.loss);
  s = P("step 3 \xff\xfe_loss_step=1.0");
  (void)s;
  s = P("");
  ASSERT(s.kind != SM_TK_SAMPLE);
}

/* ==== Epoch counters with loss terms only ==== */

SM_TEST(track_terms_epoch_rows_with_terms_only) {
  /* A detector's epoch rows whose bar was cut to the terminal's width,
   * under a head of component columns: training epochs, no step, no
   * loss. */
  sm_track_result r = scan_text(
      "      Epoch   gpu_mem       box       obj       cls    labels  size\n"
      "      3/150     10.2G    0.0810    0.0120    0.0090        44   640: "
      "100%|#|\n"
      "      Epoch   gpu_mem       box       obj       cls    labels  size\n"
      "      4/150     10.2G    0.0790    0.0118    0.0087        31   640: "
      "100%|#|\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
  ASSERT_NEAR(r.epoch, 4, 1e-9);
  ASSERT_NAN(r.loss);

  /* Keyed terms after an epoch counter, in two spellings. */
  r = scan_text("Epoch 7/40 box_loss=0.051 cls_loss=0.310\n"
                "Epoch 8/40 box_loss=0.049 cls_loss=0.300\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.epoch, 8, 1e-9);
  ASSERT_NAN(r.loss);
  r = scan_text("epoch: 8, loss_rpn: 0.2, loss_mask: 0.4\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_NAN(r.loss);

  /* Near misses: evaluation terms, or an epoch alone. */
  r = scan_text("Epoch 8/40 val_box_loss=0.049 val_cls_loss=0.300\n");
  ASSERT_EQ(r.ok, 0);
  r = scan_text("Validation epoch 8: box_loss=0.05 cls_loss=0.3\n");
  ASSERT_EQ(r.ok, 0);
  r = scan_text("Epoch 8/40\n");
  ASSERT_EQ(r.ok, 0);
}

/* ==== Print loops' records, one "key: value" per line ==== */

SM_TEST(track_terms_kv_records_between_rules) {
  /* Records between rules of '=': an elapsed clock first, the counter,
   * named terms; the log ends with a closing rule and a summary. */
  text t = {0};
  sm_track_result r;

  for (int k = 1; k <= 14; k++)
    add(&t,
        "==================================================\n"
        "time elapsed: 0:%02d:%02d\n"
        "num of updates: %d\n"
        "ret loss: 0.7%02d\n"
        "action loss: 0.02%d\n",
        k * 80 / 60, k * 80 % 60, k * 500, 90 - k, k % 10);
  add(&t, "==================================================\n"
          "finished training!\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 7000);
  ASSERT_NEAR(r.step_time_s, 80.0 / 500, 1e-3);
  ASSERT_NEAR(r.loss, 0.776, 1e-9); /* the newest record's first term */

  /* A heading after each rule, slash keys, one loss; the log ends in a
   * record that no rule has closed yet. */
  t.n = 0;
  for (int k = 1; k <= 12; k++)
    add(&t,
        "--------------------------------------------------------------\n"
        "Iteration %d\n"
        "time/training: %d.5\n"
        "time/total: %d.0\n"
        "training/train_loss: 0.%02d\n",
        k, 40 + k % 3, 41 * k, 80 - k);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 12);
  ASSERT_NEAR(r.loss, 0.68, 1e-9);
  free(t.s);
}

SM_TEST(track_terms_kv_records_near_misses) {
  /* A configuration dump between two rules, printed once: no progress. */
  sm_track_result r = scan_text("==============================\n"
                                "batch_size: 32\n"
                                "max_steps: 1000\n"
                                "lr: 0.001\n"
                                "==============================\n"
                                "starting\n");
  ASSERT_EQ(r.ok, 0);
  /* Lines of other shapes: not rows. */
  trk_vcell k, v;
  ASSERT(sm__trk_vkv("loss: 0.5", 9, &k, &v));
  ASSERT(sm__trk_vkv("time elapsed: 0:51:28", 21, &k, &v));
  ASSERT(sm__trk_vkv("lr: 1.5e-04", 11, &k, &v));
  ASSERT(!sm__trk_vkv("loss: 0.5 acc: 0.9", 18, &k, &v));
  ASSERT(!sm__trk_vkv("a very long key of words: 3", 27, &k, &v));
  ASSERT(!sm__trk_vkv("path: /x/y", 10, &k, &v));
  ASSERT(!sm__trk_vkv(": 3", 3, &k, &v));
  ASSERT(!sm__trk_vkv("loss: 0.5 seconds", 17, &k, &v));
  ASSERT(sm__trk_vheading("Iteration 12", 12, &k, &v));
  ASSERT(!sm__trk_vheading("Iteration 12 done", 17, &k, &v));
  ASSERT(!sm__trk_vheading("Iteration", 9, &k, &v));
  ASSERT(sm__trk_vrule("==========", 10));
  ASSERT(!sm__trk_vrule("=====-----", 10));
  /* A record broken by another writer's line is not read whole; the
   * step of the lines is still seen. */
  text t = {0};
  for (int i = 1; i <= 6; i++)
    add(&t,
        "==========\nstep: %d\nloss: 0.%d\nWARNING something\n"
        "==========\n",
        i * 10, 9 - i);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 60);
  free(t.s);
}

/* ==== Checkpoints that name their step ==== */

SM_TEST(track_terms_checkpoint_saved_after_stepless_metrics) {
  /* A Trainer's loss dicts print no step; the run's saves after them
   * (a cadence: an earlier save with a smaller step, metrics between)
   * name it, in the spellings of three savers. */
  static const char *saves[] = {
      "[2025-01-02 03:04:05,678] [INFO] [logging.py:96:log_dist] [Rank 0] "
      "[Torch] Checkpoint global_step%d is about to be saved!\n",
      "Saving model checkpoint to /runs/exp1/checkpoint-%d\n",
      "INFO: saving checkpoint at step %d to ckpt/\n",
  };
  for (size_t i = 0; i < sizeof(saves) / sizeof(saves[0]); i++) {
    text t = {0};
    sm_track_result r;
    for (int k = 1; k <= 12; k++) {
      add(&t,
          "{'loss': 3.%02d, 'grad_norm': 0.4, 'learning_rate': 1e-05, "
          "'epoch': 0.%02d}\n",
          60 - k, k * 8);
      if (k == 6)
        add(&t, saves[i], 1200);
    }
    add(&t, saves[i], 2400);
    r = scan_text(t.s);
    ASSERT_EQ(r.ok, 1);
    ASSERT_EQ(r.has_step, 1);
    ASSERT_EQ(r.step, 2400);
    ASSERT_NEAR(r.loss, 3.48, 1e-9);
    free(t.s);
  }
  /* One save alone, or the same save line repeated, names nothing: it
   * may be another process's output woven into the log. */
  sm_track_result r =
      scan_text("{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
                "{'loss': 2.4, 'learning_rate': 1e-05, 'epoch': 0.6}\n"
                "Saving model checkpoint to ./out/checkpoint-12\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
  r = scan_text("Saving model checkpoint to ./out/checkpoint-12\n"
                "{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
                "{'loss': 2.4, 'learning_rate': 1e-05, 'epoch': 0.6}\n"
                "Saving model checkpoint to ./out/checkpoint-12\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
}

SM_TEST(track_terms_checkpoint_near_misses) {
  /* A checkpoint saved before the newest metrics is older than them: no
   * step.  A checkpoint loaded is a restart's, not a position; a save
   * without a step names nothing. */
  sm_track_result r =
      scan_text("Saving model checkpoint to /runs/exp1/checkpoint-500\n"
                "{'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.5}\n"
                "{'loss': 2.4, 'learning_rate': 1e-05, 'epoch': 0.6}\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.has_step, 0);
  sm_track_sample s = P("Loading checkpoint from /runs/exp1/checkpoint-500");
  ASSERT(s.kind != SM_TK_CKPT);
  s = P("Resuming from checkpoint global_step500 saved earlier");
  ASSERT(s.kind != SM_TK_CKPT);
  s = P("Saving checkpoint to /runs/best.pt");
  ASSERT(s.kind != SM_TK_CKPT);
  s = P("Saving model checkpoint to /runs/checkpoint-500abc");
  ASSERT(s.kind != SM_TK_CKPT);
  s = P("Saving model checkpoint to /runs/checkpoint-99999999999999999999");
  ASSERT(s.kind != SM_TK_CKPT); /* 20 digits: no step, none made up */
  /* Words at their start only: "unsaved" saves nothing, a folder named
   * downloads loads nothing; a line cut inside a word reads no further. */
  s = P("Unsaved changes in ckpt_dir/step_300 ignored");
  ASSERT(s.kind != SM_TK_CKPT);
  s = P("Saving model checkpoint to /downloads/out/checkpoint-500");
  ASSERT_EQ(s.kind, SM_TK_CKPT);
  ASSERT_EQ(s.ckpt_step, 500);
  s = P("Saving the model now, please chec");
  ASSERT(s.kind != SM_TK_CKPT);
  /* A counter's line that also saves stays a sample of its counter. */
  s = P("step 300 | loss 2.1 | saved checkpoint-300");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT_EQ(s.step, 300);
}

SM_TEST(track_terms_run_summary_times_stepless_metrics) {
  /* The run's summary after stepless loss dicts prints its average step
   * rate: with nothing else timing a step, the step time is the run's
   * average.  Two spellings of the summary. */
  static const char *ends[] = {
      "{'train_runtime': 1200.5, 'train_samples_per_second': 85.3, "
      "'train_steps_per_second': 0.25, 'train_loss': 3.1, 'epoch': 1.0}\n",
      "{\"train_runtime\": 1200.5, \"train_steps_per_second\": 0.25, "
      "\"train_loss\": 3.1}\n",
  };
  for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
    text t = {0};
    sm_track_result r;
    for (int k = 1; k <= 8; k++) {
      add(&t, "{'loss': 3.%02d, 'learning_rate': 1e-05, 'epoch': 0.%d}\n",
          40 - k, k);
      if (k == 4)
        add(&t, "Saving model checkpoint to out/checkpoint-150\n");
    }
    add(&t, "Saving model checkpoint to out/checkpoint-300\n%s", ends[i]);
    r = scan_text(t.s);
    ASSERT_EQ(r.ok, 1);
    ASSERT_EQ(r.step, 300);
    ASSERT_NEAR(r.loss, 3.32, 1e-9); /* not the run's average loss */
    ASSERT_NEAR(r.step_time_s, 4.0, 1e-6);
    ASSERT_STREQ(r.step_time_source, "run average");
    free(t.s);
  }
  /* A per-step time printed by the metrics wins over the average; a
   * summary alone is no progress. */
  sm_track_result r =
      scan_text("{'loss': 3.1, 'step_time': 2.0}\n"
                "{'loss': 3.0, 'step_time': 2.0}\n"
                "{'train_runtime': 1200.5, 'train_steps_per_second': 0.25}\n");
  ASSERT_NEAR(r.step_time_s, 2.0, 1e-9);
  r = scan_text("{'train_runtime': 1200.5, 'train_steps_per_second': 0.25}\n");
  ASSERT_EQ(r.ok, 0);
}

/* ==== Step times spelled as words ==== */

SM_TEST(track_terms_time_per_step_words) {
  /* "time" or "duration", then "per"/"this"/"each", a step word and a
   * unit at most: a step time, in a result dict's and a print loop's
   * spelling. */
  sm_track_sample s = P("training_iteration: 324, time_this_iter_s: 1.38");
  ASSERT_NEAR(s.step_time, 1.38, 1e-9);
  s = P("step 40 | time_per_batch_ms: 412 | loss 0.5");
  ASSERT_NEAR(s.step_time, 0.412, 1e-9);
  s = P("iter 40 duration_each_step=0.9 loss=0.5");
  ASSERT_NEAR(s.step_time, 0.9, 1e-9);
  /* An epoch's time, an hour unit, other words: none. */
  s = P("iter 40 time_this_epoch_s: 120.5 loss 0.5");
  ASSERT_NAN(s.step_time);
  s = P("iter 40 time_this_iter_h: 1.5 loss 0.5");
  ASSERT_NAN(s.step_time);
  s = P("iter 40 time_since_iter_s: 1.5 loss 0.5");
  ASSERT_NAN(s.step_time);
  s = P("iter 40 time_per_: 1.5 loss 0.5");
  ASSERT_NAN(s.step_time);
}
