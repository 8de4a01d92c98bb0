/* test_tracker_startup.c - a run that restarted and has printed only its
 * start-up so far (launcher banner, configuration dump, checkpoint
 * loading, resume, model summary) after older progress.  Every line is
 * written for the test in the shape of a class of start-up output, with
 * made-up numbers. */
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

static int mark(const char *s, long long *at) {
  return sm__trk_startup_mark(s, strlen(s), at);
}

SM_TEST(track_startup_marks) {
  long long at;

  ASSERT_EQ(mark("Resuming from step 300", &at), TRK_START_RESUME);
  ASSERT_EQ(at, 300);
  ASSERT_EQ(mark("INFO resumed training at global step 4000 (epoch 3)", &at),
            TRK_START_RESUME);
  ASSERT_EQ(at, 4000);
  ASSERT_EQ(mark("Resuming from iteration: 12000", &at), TRK_START_RESUME);
  ASSERT_EQ(at, 12000);
  /* A checkpoint's name is no step; a count of steps is no position. */
  mark("Resuming from checkpoint ckpt/last.pt", &at);
  ASSERT_EQ(at, -1);
  mark("resuming: 5000 steps left", &at);
  ASSERT_EQ(at, -1);
  mark("Resuming from step 1.5e3", &at);
  ASSERT_EQ(at, -1);
  ASSERT_EQ(
      mark("[launcher] Initializing torch distributed, world_size=8", &at),
      TRK_START_BANNER);
  ASSERT_EQ(mark("Namespace(lr=0.001, batch_size=64)", &at), TRK_START_CONFIG);
  ASSERT_EQ(mark("Loading checkpoint shards: 100%| 4/4", &at), TRK_START_CKPT);
  ASSERT_EQ(mark("Trainable params: 1,204,224", &at), TRK_START_SUMMARY);
  ASSERT_EQ(mark("model: 12.3M params, loading checkpoint ok", &at),
            TRK_START_CKPT);
  /* Words inside identifiers and progress lines are no marks. */
  ASSERT_EQ(mark("step 400/5000 loss 1.91 lr 1e-4", &at), 0);
  ASSERT_EQ(mark("my_load_checkpoint() took 3s", &at), 0);
  ASSERT_EQ(mark("unresumed=3", &at), 0);
}

SM_TEST(track_startup_marks_malformed) {
  long long at = 7;
  char big[TRK_MAX_INPUT + 64];
  const char bin[] = "\x00\xff\xfe resuming from step \x80\x81 9";

  ASSERT_EQ(sm__trk_startup_mark("", 0, &at), 0);
  ASSERT_EQ(at, -1);
  /* Binary and invalid UTF-8 around the words: no step read from them. */
  ASSERT_EQ(sm__trk_startup_mark(bin, sizeof(bin) - 1, &at), TRK_START_RESUME);
  ASSERT_EQ(at, -1);
  /* Digits beyond any step count are no step. */
  mark("Resuming from step 99999999999999999999", &at);
  ASSERT_EQ(at, -1);
  /* Only the first TRK_MAX_INPUT bytes of a huge line are looked at. */
  memset(big, 'a', sizeof(big));
  memcpy(big + TRK_MAX_INPUT + 2, " resuming from step 5", 21);
  ASSERT_EQ(sm__trk_startup_mark(big, sizeof(big), &at), 0);
  /* The rule: a resume with its step, or two kinds. */
  ASSERT_EQ(sm__trk_startup_decided(TRK_START_RESUME, 10), 1);
  ASSERT_EQ(sm__trk_startup_decided(TRK_START_RESUME, -1), 0);
  ASSERT_EQ(sm__trk_startup_decided(TRK_START_CKPT, -1), 0);
  ASSERT_EQ(sm__trk_startup_decided(TRK_START_CKPT | TRK_START_CONFIG, -1), 1);
  ASSERT_EQ(sm__trk_startup_decided(0, -1), 0);
}

#define OLD_RUN                                                                \
  "2026-03-01 10:00:00 | step 100/5000 | loss 2.3100 | 0.51 s/step\n"          \
  "2026-03-01 10:00:51 | step 200/5000 | loss 2.1100 | 0.50 s/step\n"          \
  "2026-03-01 10:01:41 | step 300/5000 | loss 2.0100 | 0.50 s/step\n"          \
  "2026-03-01 10:02:31 | step 400/5000 | loss 1.9100 | 0.50 s/step\n"          \
  "RuntimeError: NCCL communicator was aborted\n"

SM_TEST(track_restart_that_printed_only_its_start_up) {
  sm_track_result r;

  /* Resumed, naming its step: that step, no loss of the older run. */
  r = scan_text(OLD_RUN "[launcher] initializing torch distributed\n"
                        "Namespace(lr=0.0001, max_steps=5000)\n"
                        "Loading checkpoint from ckpt/step_300.pt\n"
                        "Resuming from step 300\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.starting, 1);
  ASSERT_EQ(r.has_step, 1);
  ASSERT_EQ(r.step, 300);
  ASSERT_NAN(r.loss);
  ASSERT_EQ(r.restarts, 1);
  ASSERT_EQ(r.total_steps, 5000);
  /* A fresh start that names no step: no current step. */
  r = scan_text(OLD_RUN "Namespace(lr=0.0001, max_steps=5000)\n"
                        "Total params: 124,439,808\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.starting, 1);
  ASSERT_EQ(r.has_step, 0);
  ASSERT_NAN(r.loss);
  /* The same through the forward reader (following). */
  r = feed(OLD_RUN "Namespace(lr=0.0001, max_steps=5000)\n"
                   "Total params: 124,439,808\n");
  ASSERT_EQ(r.starting, 1);
  ASSERT_EQ(r.has_step, 0);
}

SM_TEST(track_restart_start_up_then_progress_or_single_mark) {
  sm_track_result r;

  /* Once the new run prints progress, it is reported as usual. */
  r = scan_text(OLD_RUN "Namespace(lr=0.0001, max_steps=5000)\n"
                        "Resuming from step 300\n"
                        "2026-03-01 10:05:00 | step 310/5000 | loss 2.0000 | "
                        "0.50 s/step\n");
  ASSERT_EQ(r.starting, 0);
  ASSERT_EQ(r.step, 310);
  ASSERT_NEAR(r.loss, 2.0, 1e-12);
  /* One kind of start-up-like output after training (a best checkpoint
   * loaded for a final evaluation) is no restart. */
  r = scan_text(OLD_RUN "Loading checkpoint from ckpt/best.pt\n");
  ASSERT_EQ(r.starting, 0);
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.loss, 1.91, 1e-12);
  /* A progress line that names start-up words is progress. */
  r = scan_text(OLD_RUN "Namespace(lr=0.0001, max_steps=5000)\n"
                        "2026-03-01 10:05:00 | step 500/5000 | loss 1.8000 | "
                        "0.50 s/step | world_size 8 | resumed 0 | config: a\n");
  ASSERT_EQ(r.starting, 0);
  ASSERT_EQ(r.step, 500);
  r = feed(OLD_RUN "Namespace(lr=0.0001, max_steps=5000)\n"
                   "2026-03-01 10:05:00 | step 500/5000 | loss 1.8000 | "
                   "0.50 s/step | world_size 8 | resumed 0 | config: a\n");
  ASSERT_EQ(r.starting, 0);
  ASSERT_EQ(r.step, 500);
  /* Start-up output before any progress is no restart: no progress. */
  r = scan_text("Namespace(lr=0.0001)\nTotal params: 1,000\n");
  ASSERT_EQ(r.ok, 0);
  ASSERT_EQ(r.starting, 0);
}
