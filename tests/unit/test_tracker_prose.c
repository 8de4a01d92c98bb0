/* test_tracker_prose.c - two log format families of small trainers:
 * prose key/value phrases ("avg loss so far is 0.31", "total used time
 * 812.5 (s)") and one-value-a-line metrics files ("<step> <split>
 * <value>").  Every line is written for the test with made-up numbers. */
#include <math.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

/* ==== Prose keys ==== */

SM_TEST(track_prose_keys_so_far_and_used) {
  trk_keyinfo k;

  sm__trk_key_lookup("avg_loss_so_far", &k);
  ASSERT_EQ(k.role, R_LOSS);
  ASSERT(k.flags & KF_LOW);
  sm__trk_key_lookup("loss_so_far", &k);
  ASSERT_EQ(k.role, R_LOSS);
  ASSERT(k.flags & KF_LOW);
  sm__trk_key_lookup("total_used_time", &k);
  ASSERT_EQ(k.role, R_CUM);
  sm__trk_key_lookup("elapsed_time_so_far", &k);
  ASSERT_EQ(k.role, R_CUM);
  /* A validation loss so far stays evaluation; words that are no loss
   * or time stay unknown. */
  sm__trk_key_lookup("val_loss_so_far", &k);
  ASSERT(k.role != R_LOSS);
  sm__trk_key_lookup("used_memory", &k);
  ASSERT_EQ(k.role, R_NONE);
  sm__trk_key_lookup("samples_so_far", &k);
  ASSERT_EQ(k.role, R_NONE);
  sm__trk_key_lookup("so_far", &k);
  ASSERT_EQ(k.role, R_NONE);
  sm__trk_key_lookup("used", &k);
  ASSERT_EQ(k.role, R_NONE);
}

SM_TEST(track_prose_line_gives_loss_and_clock) {
  sm_track_sample s =
      P("Epoch 7, Step 40, total used time 812.5 (s), avg loss so far is "
        "0.3125");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT(s.has_step);
  ASSERT_EQ(s.step, 40);
  ASSERT_NEAR(s.epoch, 7, 1e-9);
  ASSERT_NEAR(s.loss, 0.3125, 1e-9);
  ASSERT_NEAR(s.cum_time, 812.5, 1e-9);
  /* The plain loss of the line wins over the running one. */
  s = P("step 9, loss so far is 0.52, loss is 0.48");
  ASSERT_NEAR(s.loss, 0.48, 1e-9);
}

SM_TEST(track_prose_log_times_steps_by_its_clock) {
  sm_track_result r = feed(
      "Starting epoch 3 current lr is 0.01\n"
      "Epoch 3, Step 20, total used time 100.0 (s), avg loss so far is 0.90\n"
      "Epoch 3, Step 40, total used time 110.0 (s), avg loss so far is 0.80\n"
      "Epoch 3, Step 60, total used time 120.0 (s), avg loss so far is 0.70\n"
      "Epoch 3, Step 80, total used time 130.0 (s), avg loss so far is 0.60\n"
      "Epoch 3, val loss is 0.95, val mse is 0.2.\n");
  ASSERT(r.ok);
  ASSERT_EQ(r.step, 80);
  ASSERT_NEAR(r.loss, 0.60, 1e-9); /* not the validation loss after it */
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-9);
  ASSERT_STREQ(r.step_time_basis, "timestamps");
}

/* ==== Metrics files ==== */

SM_TEST(track_metric_rows_parse) {
  sm_track_sample s = P("1200 train 2.8125");
  ASSERT_EQ(s.kind, SM_TK_SAMPLE);
  ASSERT(s.has_step);
  ASSERT_EQ(s.step, 1200);
  ASSERT_NEAR(s.loss, 2.8125, 1e-9);
  s = P("1200 training 2.75");
  ASSERT_NEAR(s.loss, 2.75, 1e-9);
  /* Evaluation rows and other metrics are no training sample. */
  ASSERT(P("1200 val 3.1").kind != SM_TK_SAMPLE);
  ASSERT(P("1200 test 3.2").kind != SM_TK_SAMPLE);
  s = P("1200 accuracy 0.31");
  ASSERT(s.kind != SM_TK_SAMPLE);
  ASSERT_NAN(s.loss);
  /* Not rows: a unit on the step or the value, a fraction, more words,
   * a step that is not an integer, a missing value. */
  ASSERT_NAN(P("12ms train 2.5").loss);
  ASSERT_NAN(P("1200 train 2.5s").loss);
  ASSERT_NAN(P("1.5 train 2.5").loss);
  ASSERT(!P("1200 train").has_step);
  ASSERT(!P("train 2.5").has_step);
  ASSERT_NAN(P("1200 train now 2.5").loss);
}

SM_TEST(track_metric_file_newest_train_row) {
  sm_track_result r = feed("0 val 10.9\n"
                           "0 train 10.95\n"
                           "1 train 9.80\n"
                           "2 train 9.10\n"
                           "2 val 9.30\n"
                           "2 hella 0.25\n"
                           "3 train 8.70\n"
                           "4 val 8.90\n"
                           "4 hella 0.26\n");
  ASSERT(r.ok);
  ASSERT_EQ(r.step, 3); /* the evaluation rows of step 4 are no step */
  ASSERT_NEAR(r.loss, 8.70, 1e-9);
  ASSERT_NAN(r.step_time_s);
  ASSERT_STREQ(r.step_scope, "global");
}

SM_TEST(track_metric_rows_malformed) {
  /* Empty, huge, binary and invalid UTF-8 rows give nothing made up. */
  char big[9000];
  memset(big, '7', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  ASSERT(!P("").has_step);
  ASSERT(!P(big).has_step || P(big).kind != SM_TK_SAMPLE);
  ASSERT(!P("12\x01 train \xff\xfe").has_step);
  sm_track_result r = feed("\xff\xfe\x00\x01 train 2.0\n");
  ASSERT(!r.ok);
}

/* ==== Loss modules named as metrics, multi-line metric blocks ==== */

SM_TEST(track_loss_class_names_as_keys) {
  trk_keyinfo k;

  sm__trk_key_lookup("train/crossentropyloss", &k);
  ASSERT_EQ(k.role, R_LOSS);
  sm__trk_key_lookup("train/mseloss", &k);
  ASSERT_EQ(k.role, R_LOSS);
  sm__trk_key_lookup("eval/crossentropyloss", &k);
  ASSERT_EQ(k.role, R_EVAL_LOSS);
  /* Not a loss class: a ratio named after a loss-like word. */
  sm__trk_key_lookup("train/closs_ratio", &k);
  ASSERT(k.role != R_LOSS);
}

SM_TEST(track_metric_block_under_a_step_header) {
  /* A header line with the step, then one indented metric a line. */
  sm_track_result r =
      feed("2024-03-02 10:00:00.000\tnode:0\ttrainer:90\tINFO\t[step=10/500,"
           "epoch=0]\n"
           "    optim/total_grad_norm=0.91\n"
           "    train/CrossEntropyLoss=4.125\n"
           "    train/Perplexity=61.9\n"
           "2024-03-02 10:00:05.000\tnode:0\ttrainer:90\tINFO\t[step=11/500,"
           "epoch=0]\n"
           "    optim/total_grad_norm=0.88\n"
           "    train/CrossEntropyLoss=4.0625\n"
           "    train/Perplexity=58.1\n"
           "2024-03-02 10:00:10.000\tnode:0\ttrainer:90\tINFO\t[step=12/500,"
           "epoch=0]\n"
           "    optim/total_grad_norm=0.87\n"
           "    train/CrossEntropyLoss=4.0\n"
           "    train/Perplexity=54.6\n");
  ASSERT(r.ok);
  ASSERT_EQ(r.step, 12);
  ASSERT_EQ(r.total_steps, 500);
  ASSERT_NEAR(r.loss, 4.0, 1e-9); /* not the perplexity */
  ASSERT_NEAR(r.step_time_s, 5.0, 1e-9);
}

/* ==== A "(total)" qualifier on a multi-part loss ==== */

SM_TEST(track_total_qualified_loss_is_the_whole) {
  trk_keyinfo k;
  sm_track_sample s;

  sm__trk_key_lookup("joint_loss(total)", &k);
  ASSERT_EQ(k.role, R_LOSS);
  ASSERT(!(k.flags & KF_PART));
  /* Without the qualifier it is one named part; a qualifier on a key
   * that is no loss gives nothing. */
  sm__trk_key_lookup("joint_loss", &k);
  ASSERT(k.flags & KF_PART);
  sm__trk_key_lookup("tokens(total)", &k);
  ASSERT_EQ(k.role, R_NONE);
  sm__trk_key_lookup("val_loss(total)", &k);
  ASSERT(k.role != R_LOSS);
  /* The whole loss wins over the term printed after it. */
  s = P("[4,   300/ 900] - Joint Loss (total): 12.5 - Recon/Cluster Loss: "
        "[0.25 / 12.25] - [lr: 1.0e-04]");
  ASSERT_NEAR(s.loss, 12.5, 1e-9);
}

/* ==== Loops that take under a second ==== */

SM_TEST(track_subsecond_bar_updates_are_no_progress) {
  sm_track_result r;

  /* Every update of a bar that runs and ends within a second is a
   * preparation loop, not only its last one. */
  ASSERT(P(" 40%|####      | 40/100 [00:00<00:00, 420.5it/s]").kind !=
         SM_TK_SAMPLE);
  /* A long bar's early update, or one that shows a loss, still is. */
  ASSERT_EQ(P("  0%|          | 4/9000 [00:00<31:02,  4.83it/s]").kind,
            SM_TK_SAMPLE);
  ASSERT_EQ(
      P(" 40%|####      | 40/100 [00:00<00:00, 420.5it/s, loss=0.71]").kind,
      SM_TK_SAMPLE);
  /* A statistics pass, then the training bar that never made a step,
   * then the job is cancelled: no progress. */
  r = feed("Computing dataset statistics.\n"
           "  0%|          | 0/100 [00:00<?, ?it/s] 37%|###7      | 37/100 "
           "[00:00<00:00, 365.1it/s]100%|##########| 100/100 [00:00<00:00, "
           "540.2it/s]\n"
           "  0%|          | 0/50000 [00:00<?, ?it/s]\n"
           "slurmstepd: error: *** JOB 77 ON n1 CANCELLED AT "
           "2025-01-01T00:00:00 ***\n");
  ASSERT(!r.ok);
}
