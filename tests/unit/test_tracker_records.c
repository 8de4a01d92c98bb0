/* test_tracker_records.c - round 9 of issue 12: records framed by rules
 * that turn out not to be records, a record the log ends in while it is
 * followed, and the checkpoint words of the knowledge table.  Every log
 * here is written for the project. */
#include "track_fixture.h"

static void tmpname(char *path) {
  int fd;
  strcpy(path, "/tmp/sm_track_rec_XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
}

static void write_file(const char *path, const char *mode, const char *text) {
  FILE *f = fopen(path, mode);
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(text, 1, strlen(text), f), strlen(text));
  ASSERT_OK(fclose(f));
}

/* ==== Rows held back behind a rule ==== */

SM_TEST(track_records_broken_rows_are_lines) {
  /* A banner of '=' above a step's lines, then a line of another shape:
   * the rows were no record, and they are read as the lines they are
   * (the step alone, its loss below), read forward and backwards. */
  text t = {0};
  sm_track_result r;

  for (int k = 1; k <= 8; k++)
    add(&t,
        "========================================\n"
        "step: %d\nloss: %.4f\nlr: 0.0003\n"
        "Validation accuracy 0.%d at step %d\n",
        k * 100, 1.0 - k * 0.05, 70 + k, k * 100);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 800);
  ASSERT_NEAR(r.loss, 0.6, 1e-9);
  r = feed(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 800);
  ASSERT_NEAR(r.loss, 0.6, 1e-9);

  /* Another shape: a rule of dashes, a heading and a spelled-out loss,
   * broken by a writer's notice each time. */
  t.n = 0;
  for (int k = 1; k <= 9; k++)
    add(&t,
        "------------------------------\n"
        "Iteration %d\ntrain loss: %.3f\n"
        "[info] wrote samples for iteration %d to out/\n",
        k, 2.0 - k * 0.1, k);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 9);
  ASSERT_NEAR(r.loss, 1.1, 1e-9);
  free(t.s);
}

SM_TEST(track_records_printed_once_are_lines) {
  /* A heading framed by rules once (no record repeats it): the epoch
   * head it is still names the epoch of the steps below. */
  text t = {0};
  sm_track_result r;

  add(&t, "==============================\nEpoch 4\n"
          "==============================\n");
  for (int i = 1; i <= 30; i++)
    add(&t, "[%d/30] loss=%.3f 0.2 s/it\n", i, 0.9 - i * 0.01);
  r = feed(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 30);
  ASSERT_NEAR(r.epoch, 4, 1e-9);
  /* A configuration dump framed once stays no progress. */
  r = scan_text("==============================\n"
                "warmup_steps: 100\nmax_steps: 1000\nlr: 0.001\n"
                "==============================\nstarting\n");
  ASSERT_EQ(r.ok, 0);
  free(t.s);
}

/* ==== A record the log ends in, followed ==== */

SM_TEST(track_records_unclosed_record_followed) {
  /* The scan ends in a record whose loss row is not printed yet; when
   * the rest comes, the record's own loss is reported with its step,
   * not the loss of the record before it. */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  text a = {0};

  for (int k = 1; k <= 6; k++)
    add(&a,
        "==================================================\n"
        "elapsed: %d\nupdates: %d\npolicy loss: 0.%d5\n",
        60 * k, 1000 * k, 9 - k);
  add(&a, "==================================================\n"
          "elapsed: 420\nupdates: 7000\n");
  tmpname(path);
  write_file(path, "w", a.s);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 7000);
  write_file(path, "a", "policy loss: 0.125\n");
  sm_tracker_poll(t, &r, &e);
  ASSERT_EQ(r.step, 7000);
  ASSERT_NEAR(r.loss, 0.125, 1e-9);
  write_file(path, "a",
             "==================================================\n"
             "elapsed: 480\nupdates: 8000\n");
  sm_tracker_poll(t, &r, &e);
  ASSERT_EQ(r.step, 8000);
  write_file(path, "a",
             "policy loss: 0.115\n"
             "==================================================\n");
  sm_tracker_poll(t, &r, &e);
  ASSERT_EQ(r.step, 8000);
  ASSERT_NEAR(r.loss, 0.115, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.06, 1e-6);
  /* A line of another shape breaks the open record: its rows are lines,
   * and the joined record read before is gone (no step twice). */
  write_file(path, "a", "elapsed: 540\nupdates: 9000\nSaving buffer\n");
  sm_tracker_poll(t, &r, &e);
  ASSERT_EQ(r.ok, 1);
  ASSERT(r.step == 9000 || r.step == 8000);
  sm_tracker_free(t);
  unlink(path);
  free(a.s);
}

SM_TEST(track_records_unclosed_record_fed_in_pieces) {
  /* The same through sm_tracker_feed, one row at a time, in the shape of
   * a pipe-drawn table: the answer after each piece is the one of the
   * text so far. */
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  char row[128];

  ASSERT(t != NULL);
  for (int k = 1; k <= 5; k++) {
    snprintf(row, sizeof(row),
             "-------------------------\n| total_timesteps | %d |\n"
             "| loss            | 0.%d |\n-------------------------\n",
             2048 * k, 9 - k);
    ASSERT_OK(sm_tracker_feed(t, row, strlen(row)));
  }
  sm_tracker_result(t, &r);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 10240);
  ASSERT_NEAR(r.loss, 0.4, 1e-9);
  ASSERT_OK(sm_tracker_feed(t, "-------------------------\n", 26));
  ASSERT_OK(sm_tracker_feed(t, "| total_timesteps | 12288 |\n", 28));
  ASSERT_OK(sm_tracker_feed(t, "| loss            | 0.3 |\n", 26));
  ASSERT_OK(sm_tracker_feed(t, "-------------------------\n", 26));
  sm_tracker_result(t, &r);
  ASSERT_EQ(r.step, 12288);
  ASSERT_NEAR(r.loss, 0.3, 1e-9);
  sm_tracker_free(t);
}

/* ==== Checkpoint words are the table's ==== */

SM_TEST(track_records_checkpoint_words_from_the_table) {
  ASSERT(sm__trk_ckpt_name_prefix(0) != NULL);
  ASSERT(sm__trk_ckpt_word_at("Saved ckpt", 10, 6, TRK_CK_WORD));
  ASSERT(!sm__trk_ckpt_word_at("unsaved", 7, 2, TRK_CK_SAVE));
  ASSERT(sm__trk_ckpt_word_at("Restored", 8, 0, TRK_CK_LOAD));
  ASSERT(!sm__trk_ckpt_word_at("Saving", 6, 0, TRK_CK_LOAD));
  ASSERT(!sm__trk_ckpt_word_at("x", 1, 5, TRK_CK_WORD)); /* past the end */
  ASSERT(!sm__trk_ckpt_word_at("checkpoint", 10, 0, 7)); /* no such kind */
  /* Each prefix of a name gives the step it holds. */
  const char *lines[] = {"Saving checkpoint to runs/a/checkpoint-1500",
                         "saved ckpt: out/ckpt-1500.index",
                         "Saving model to out/model_step_1500.pt (checkpoint)",
                         "Checkpoint global_step1500 is about to be saved!"};
  for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
    sm_track_sample s = P(lines[i]);
    ASSERT_EQ(s.kind, SM_TK_CKPT);
    ASSERT_EQ(s.ckpt_step, 1500);
  }
  ASSERT(P("Loading checkpoint from out/checkpoint-1500").kind != SM_TK_CKPT);
}

/* ==== Positions that count samples ==== */

SM_TEST(track_records_sample_counter_shows_its_batch) {
  /* The quickstart loop's "[current/size]", current = (batch + 1) * 64,
   * every 100 batches, with logging timestamps 6.4 s apart: the step is
   * the batch, the total the batches of the dataset, the step time per
   * batch. */
  text t = {0};
  sm_track_result r;

  for (int e = 1; e <= 3; e++) {
    add(&t, "2024-03-02 11:%02d:00,000 INFO Epoch %d\n", e * 5, e);
    for (int b = 0; b < 900; b += 100)
      add(&t, "2024-03-02 11:%02d:%02d,%03d INFO loss: %.6f  [%5d/60000]\n",
          e * 5 + (b / 100 * 64) / 600, (b / 100 * 64) / 10 % 60,
          (b / 100 * 64) % 10 * 100, 0.9 - b * 0.0001, (b + 1) * 64);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 801);
  ASSERT_EQ(r.total_steps, 938); /* ceil(60000 / 64) */
  ASSERT_NEAR(r.step_time_s, 0.064, 1e-6);
  ASSERT(strstr(r.format, "batches of 64") != NULL);

  /* Another shape: an elapsed clock in front, a bar-less bracket with a
   * percentage, batch 32 every 50 batches, 8 s per line. */
  t.n = 0;
  for (int b = 0; b < 600; b += 50)
    add(&t, "[%02d:%02d] train epoch 4 [%5d/20000 (%d%%)] loss=%.3f\n",
        (b / 50 * 8) / 60, (b / 50 * 8) % 60, (b + 1) * 32,
        (b + 1) * 32 * 100 / 20000, 1.2 - b * 0.001);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 551);
  ASSERT_EQ(r.total_steps, 625);
  free(t.s);
}

SM_TEST(track_records_sample_counter_near_misses) {
  /* Counts that do not show a batch are reported as printed: MNIST's
   * batch_idx * len(data) (multiples of the stride), a keyed global step
   * logged at 50, 150, 250 (a step, not a position), positions one batch
   * apart. */
  text t = {0};
  sm_track_result r;

  for (int b = 0; b <= 900; b += 100)
    add(&t, "Train Epoch: 2 [%d/60000 (%d%%)]\tLoss: %.6f\n", b * 64,
        b * 64 * 100 / 60000, 0.5 - b * 0.0001);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 57600);
  t.n = 0;
  for (int s = 50; s <= 1050; s += 100)
    add(&t, "step %d/5000 | loss %.3f | 0.31 s/it\n", s, 2.0 - s * 0.001);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 1050);
  ASSERT_EQ(r.total_steps, 5000);
  t.n = 0;
  for (int b = 1; b <= 12; b++)
    add(&t, "loss: %.4f [%4d/4000]\n", 1.0 - b * 0.01, b * 32);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 384);
  free(t.s);
}

/* ==== Weak bases of the step time are named ==== */

SM_TEST(track_records_weak_step_time_basis_is_named) {
  text t = {0};
  sm_track_result r;

  /* A throughput beside a batch size that only the start-up announced. */
  add(&t, "args: Namespace(batch_size=48, epochs=3, arch='vgg')\n");
  for (int b = 50; b <= 600; b += 50)
    add(&t, "Epoch[2] Batch [%d]\tSpeed: 192.0 samples/sec\tacc=0.61\n", b);
  r = scan_text(t.s);
  ASSERT_NEAR(r.step_time_s, 0.25, 1e-6);
  ASSERT(r.step_time_weak != NULL);
  ASSERT(strstr(r.step_time_weak, "announced") != NULL);

  /* Stepless metrics timed by the run's average rate. */
  t.n = 0;
  for (int k = 1; k <= 6; k++)
    add(&t, "{'loss': 1.%02d, 'epoch': 0.%d}\n", 50 - k, k);
  add(&t, "Saving model checkpoint to run/checkpoint-50\n"
          "Saving model checkpoint to run/checkpoint-100\n"
          "{'train_runtime': 400.0, 'train_steps_per_second': 0.25, "
          "'train_loss': 1.47}\n");
  r = scan_text(t.s);
  ASSERT_NEAR(r.step_time_s, 4.0, 1e-6);
  ASSERT(r.step_time_weak != NULL);

  /* Near misses: a time printed per step, a bar's rate: no weak basis. */
  t.n = 0;
  for (int s = 10; s <= 120; s += 10)
    add(&t, "step %d | loss %.3f | step_time 0.42s\n", s, 3.0 - s * 0.01);
  r = scan_text(t.s);
  ASSERT_NEAR(r.step_time_s, 0.42, 1e-9);
  ASSERT(r.step_time_weak == NULL);
  r = scan_text(" 40%|####      | 400/1000 [03:20<05:00,  2.00it/s]\n");
  ASSERT(r.step_time_weak == NULL);
  free(t.s);
}

SM_TEST(track_records_malformed) {
  /* Records of more rows than are held, rows longer than the held
   * space, rules alone, a rule at every line, binary bytes inside a
   * record, a record left open by an empty file's end: no crash, no read
   * past a row, and a record longer than the rows held breaks (its rows
   * are lines). */
  text t = {0};
  sm_track_result r;
  char big[3000];

  for (int k = 1; k <= 3; k++) {
    add(&t, "==========\n");
    for (int i = 0; i < 80; i++)
      add(&t, "metric %d: %d.5\n", i, k);
    add(&t, "step: %d\nloss: 0.%d\nfree text breaks it\n", k * 10, 9 - k);
  }
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 30);
  ASSERT_NEAR(r.loss, 0.6, 1e-9);
  r = feed(t.s);
  ASSERT_EQ(r.step, 30);

  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  t.n = 0;
  for (int k = 1; k <= 4; k++)
    add(&t, "==========\nnote: %d\n%s: 1\n%s: 2\n==========\n", k, big, big);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 0);
  r = feed(t.s);
  ASSERT_EQ(r.ok, 0);

  t.n = 0;
  for (int k = 0; k < 200; k++)
    add(&t, k % 2 ? "----------\n" : "==========\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 0);
  r = feed("==========\n");
  ASSERT_EQ(r.ok, 0);
  r = feed("==========\nstep: 5\n\xff\xfe\x01\x02 binary\nloss: 0.5\n");
  ASSERT(r.ok == 0 || r.step == 5);
  r = feed("");
  ASSERT_EQ(r.ok, 0);
  free(t.s);
}

/* ==== Detection metrics with a threshold name evaluation ==== */

SM_TEST(track_records_thresholded_detection_metrics_are_evaluation) {
  text t = {0};
  sm_track_result r;

  /* A validation bar named by its columns after each epoch's training
   * bar (an older detection trainer's "mAP@.5 mAP@.5:.95"). */
  for (int e = 0; e < 3; e++)
    add(&t,
        "   %d/2   2.1G   0.08%d   0.01   0.02   40   512: 100%%|####| "
        "200/200 [01:40<00:00,  2.00it/s]\n"
        "      Class   Images   Targets   P   R   mAP@.5 mAP@.5:.95: "
        "100%%|####| 30/30 [00:10<00:00,  3.00it/s]\n"
        "        all      960      4000  0.5 0.4  0.35  0.2\n",
        e, e);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 200);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-6);
  /* Another shape: COCO-style "AP@0.5 AP_75" columns of an evaluation
   * bar after a training bar with a loss. */
  t.n = 0;
  for (int e = 1; e <= 3; e++)
    add(&t,
        "Epoch %d: 100%%|####| 400/400 [03:20<00:00, 2.00it/s, loss=0.%d]\n"
        "AP@0.5 AP_75: 100%%|####| 25/25 [00:05<00:00, 5.00it/s]\n",
        e, 9 - e);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.loss, 0.6, 1e-9);
  /* Near misses: an epoch line with a loss beside its mAP@0.5 stays a
   * training line; "mAP" alone (a trainer announcing its next mAP
   * calculation) names nothing; "Map" is no metric. */
  ASSERT_EQ(P("Epoch 4/200 | mAP@0.5: 0.9623, Loss: 0.4120").kind,
            SM_TK_SAMPLE);
  ASSERT(sm__trk_is_evalq_word("mAP@.5", 6));
  ASSERT(sm__trk_is_evalq_word("mAP_50", 6));
  ASSERT(!sm__trk_is_evalq_word("mAP", 3));
  ASSERT(!sm__trk_is_evalq_word("mAP_x", 5));
  ASSERT(!sm__trk_is_evalq_word("apple", 5));
  ASSERT(!sm__trk_is_evalq_word("map_", 4));
  free(t.s);
}

/* ==== A loop that runs through epochs is no side loop ==== */

SM_TEST(track_records_loop_through_epochs_is_not_a_side_loop) {
  text t = {0};
  sm_track_result r;

  /* A start-up tool's bar with a figure of its own, then one final bar
   * state per epoch of another total (a trainer captured by a logger
   * that keeps only each bar's last state). */
  add(&t, "Anchors: evolving with a genetic search: fitness = 0.77: "
          "100%%|####| 1000/1000 [01:31<00:00, 10.98it/s]\n"
          "Starting training for 2 epochs...\n");
  for (int e = 0; e < 2; e++)
    add(&t,
        "     Epoch   gpu_mem   box   obj   cls   labels  img_size\n"
        "      %d/1   3.1G   0.15   0.007   0.04   11   128: "
        "100%%|####| 329/329 [03:11<00:00,  1.72it/s]\n",
        e);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 329);
  ASSERT_NEAR(r.epoch, 1, 1e-9);
  /* Another shape: a vocabulary bar with a score, then epoch bars. */
  t.n = 0;
  add(&t, "Building vocab: score=0.91: 100%%|####| 200/200 [00:30<00:00, "
          "6.67it/s]\n");
  for (int e = 1; e <= 3; e++)
    add(&t, "Epoch %d: 100%%|####| 50/50 [00:25<00:00, 2.00it/s, loss=0.%d]\n",
        e, 8 - e);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 50);
  ASSERT_NEAR(r.loss, 0.5, 1e-9);
  /* Near miss: an evaluation bar of one epoch after the training bar
   * that finished is still a side loop. */
  t.n = 0;
  for (int b = 100; b <= 500; b += 100)
    add(&t, "Epoch 3: %d%%|###| %d/500 [00:%02d<00:00, 5.00it/s, loss=0.4]\n",
        b / 5, b, b / 25);
  add(&t, " 50%%|###| 40/80 [00:04<00:04, 10.00it/s]\n"
          " 100%%|###| 80/80 [00:08<00:00, 10.00it/s]\n");
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 500);
  free(t.s);
}

/* ==== Summaries marked by a lone star ==== */

SM_TEST(track_records_star_summaries_are_averages) {
  text t = {0};
  sm_track_result r;

  /* A colourised logger: the epoch's last batch line, then the loop's
   * summary " * Train Acc ... Train Loss" (averages) and validation. */
  for (int e = 0; e < 4; e++)
    add(&t,
        "[2024-05-01 10:%02d:00 vit](main.py 180): INFO Train: [%d/4]\t"
        "lr 0.0001\ttime 0.21%d (0.250)\tloss 0.%d12 (0.%d50)\n"
        "[2024-05-01 10:%02d:01 vit](main.py 111): INFO  * Train Acc 9%d.0 "
        "Train Loss 0.%d50\n"
        "[2024-05-01 10:%02d:02 vit](main.py 116): INFO  * Val Acc 80.0 "
        "Val Loss 0.9\n",
        e, e, e, 8 - e, 8 - e, e, e, 8 - e, e);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 0.512, 1e-9); /* the batch line's, not the average */
  /* Another shape: the ImageNet example's meters and its " * Acc@1"
   * lines (an evaluation summary) do not stop the next epoch's lines. */
  t.n = 0;
  for (int e = 0; e < 3; e++)
    add(&t,
        "Epoch: [%d][ 90/100]\tTime  0.300 ( 0.310)\tLoss 2.%d00e+00 "
        "(2.500e+00)\n"
        " * Acc@1 %d.250 Acc@5 80.100\n",
        e, 5 - e, 40 + e);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 90);
  ASSERT_NEAR(r.loss, 2.3, 1e-9);
  ASSERT_NEAR(r.epoch, 2, 1e-9);
  /* Near misses: a rule of stars, a star glued to a word, a step line
   * with a star, and a star after the figures. */
  ASSERT_EQ(P("***** Train Loss 0.5 *****").summary, 0);
  ASSERT_EQ(P("*Train Loss 0.5").summary, 0);
  ASSERT_EQ(P(" * step 40 loss 0.5").summary, 0);
  ASSERT_EQ(P("Train Loss 0.5 * 2 runs").summary, 0);
  ASSERT_EQ(P(" * Train Loss 0.5").summary, 1);
  free(t.s);
}

/* ==== Heads whose columns are separated by tabs ==== */

SM_TEST(track_records_tab_separated_heads_of_several_words) {
  /* A progress logger's metrics file: a head of multi-word names
   * separated by tabs, then one row per epoch (a trailing tab each). */
  text t = {0};
  sm_track_result r;

  add(&t, "total loss\tscore loss\tborder loss\tctc loss\t\n");
  for (int e = 0; e < 700; e++)
    add(&t, "%.6f\t0.2%02d\t0.1%02d\t3.%02d\t\n", 40.0 - e * 0.03, e % 100,
        e % 100, e % 100);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 40.0 - 699 * 0.03, 1e-6);
  /* Another shape: learning rate and train/valid columns (the valid
   * loss is evaluation, never the loss). */
  t.n = 0;
  add(&t, "Learning Rate\tTrain Loss\tValid Loss\tTrain Acc.\tValid Acc.\n");
  for (int e = 0; e < 30; e++)
    add(&t, "0.100000\t%.6f\t%.6f\t%.3f\t%.3f\n", 2.0 - e * 0.05,
        2.5 - e * 0.04, 40.0 + e, 35.0 + e);
  r = scan_text(t.s);
  ASSERT_EQ(r.ok, 1);
  ASSERT_NEAR(r.loss, 2.0 - 29 * 0.05, 1e-6);
  ASSERT_NEAR(r.lr, 0.1, 1e-9);
  /* Near misses: single-spaced words stay one column each; a head of
   * tab-separated cells that name nothing known is no head. */
  r = scan_text("alpha beta\tgamma delta\n1.0\t2.0\n1.1\t2.1\n1.2\t2.2\n");
  ASSERT_EQ(r.ok, 0);
  free(t.s);
}

SM_TEST(track_records_scan_ends_inside_a_row) {
  /* The scan's last bytes are a row not ended yet; when the row ends,
   * it joins its record once (no row counted twice, no stale step). */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  text a = {0};

  for (int k = 1; k <= 5; k++)
    add(&a,
        "==============================\n"
        "updates: %d\nvalue loss: 0.%d1\n",
        100 * k, 9 - k);
  add(&a, "==============================\nupdates: 600\nvalue lo");
  tmpname(path);
  write_file(path, "w", a.s);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 1);
  write_file(path, "a", "ss: 0.31\n==============================\n");
  sm_tracker_poll(t, &r, &e);
  ASSERT_EQ(r.step, 600);
  ASSERT_NEAR(r.loss, 0.31, 1e-9);
  sm_tracker_free(t);
  unlink(path);
  free(a.s);
}

/* ==== An epoch head above the run's start-up is not the run's ==== */

SM_TEST(track_records_epoch_head_above_startup_is_not_the_runs) {
  text t = {0};
  sm_track_result r;

  /* An argument dump printed one "key = value" per line: its "epoch = 30"
   * reads as an epoch head; the run's start-up follows, then steps that
   * print no epoch.  The epoch is unknown, not 30. */
  add(&t, "hidden = 256\nbatch = 128\nepoch = 30\nprint_freq = 50\n"
          "------- start training -------\n"
          "=> loading checkpoint './ckpt/last.pt'\n");
  for (int i = 1; i <= 40; i++)
    add(&t, "Iteration: %d\tLoss: %.3f\n", 1000 + 50 * i, 2.0 - i * 0.01);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 3000);
  ASSERT_NAN(r.epoch);
  r = feed(t.s); /* read forward: the same */
  ASSERT_EQ(r.step, 3000);
  ASSERT_NAN(r.epoch);
  /* Another shape: a YAML-like dump with "epoch: 12", a checkpoint
   * loaded, bracketed steps. */
  t.n = 0;
  add(&t, "config:\n  lr: 0.01\n  epoch: 12\n"
          "Loading checkpoint from runs/exp/last.ckpt\n");
  for (int i = 1; i <= 40; i++)
    add(&t, "[step %d] loss=%.3f\n", 20 * i, 1.5 - i * 0.01);
  r = scan_text(t.s);
  ASSERT_EQ(r.step, 800);
  ASSERT_NAN(r.epoch);
  /* Near misses: an epoch head between the start-up and the steps is
   * the run's; so is one with no start-up output below it. */
  t.n = 0;
  add(&t, "epoch = 30\n------- start training -------\nEpoch 7/30\n");
  for (int i = 1; i <= 40; i++)
    add(&t, "Iteration: %d\tLoss: %.3f\n", 1000 + 50 * i, 2.0 - i * 0.01);
  r = scan_text(t.s);
  ASSERT_NEAR(r.epoch, 7, 1e-9);
  r = feed(t.s);
  ASSERT_NEAR(r.epoch, 7, 1e-9);
  t.n = 0;
  add(&t, "Epoch 5/30\n");
  for (int i = 1; i <= 40; i++)
    add(&t, "Iteration: %d\tLoss: %.3f\n", 1000 + 50 * i, 2.0 - i * 0.01);
  r = scan_text(t.s);
  ASSERT_NEAR(r.epoch, 5, 1e-9);
  free(t.s);
}
