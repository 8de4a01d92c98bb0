/* test_tracker_glued.c - other writers' records glued to a progress line
 * (a print with end='' and then a logging record, an NCCL INFO line, a
 * wandb message): where each starts, and that the progress before it is
 * read on its own.  Every line is written for the test, with made-up
 * numbers and host names. */
#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "track_fixture.h"
#include "tracker/track_int.h"

static size_t at(const char *s) {
  return sm__trk_glued_record(s, strlen(s));
}

/* Offset of the needle in s. */
static size_t off(const char *s, const char *needle) {
  const char *p = strstr(s, needle);
  ASSERT(p != NULL);
  return (size_t)(p - s);
}

SM_TEST(track_glued_record_starts) {
  const char *a = "iter 40 loss 0.31 2025-03-01 10:00:00,123 - INFO - saved";
  const char *b = "iter 40 loss 0.31s/it2025-03-01 10:00:00 INFO ok";
  const char *c = "iter 40 loss 0.31 node7:4411:4502 [3] NCCL INFO Channel 01";
  const char *d = "iter 40 loss 0.31 NCCL WARN Cuda failure 'out of memory'";
  const char *e = "iter 40 loss 0.31INFO:torch.distributed:worker group ok";
  const char *f = "iter 40 loss 0.31 wandb: Waiting for W&B process";
  const char *g = "iter 40 loss 0.31 /x/aug.py:238: UserWarning: deprecated";

  ASSERT_EQ(at(a), off(a, "2025"));
  ASSERT_EQ(at(b), off(b, "2025"));
  ASSERT_EQ(at(c), off(c, "node7"));
  ASSERT_EQ(at(d), off(d, "NCCL"));
  ASSERT_EQ(at(e), off(e, "INFO"));
  ASSERT_EQ(at(f), off(f, "wandb"));
  ASSERT_EQ(at(g), off(g, "/x/"));
  /* At the start of a line, or after a launcher's prefix, the record is
   * the line itself. */
  ASSERT_EQ(at("2025-03-01 10:00:00 - INFO - step 5 loss 0.2"), 0);
  ASSERT_EQ(at("INFO:root:step 5 loss 0.2"), 0);
  ASSERT_EQ(at("[rank3]: 2025-03-01 10:00:00 - INFO - step 5"), 0);
  ASSERT_EQ(at("[rank3]:INFO:root:step 5"), 0);
  ASSERT_EQ(at("0: node7:4411:4502 [3] NCCL INFO Channel 01"), 0);
  /* A date inside progress without a logging separator, and words that
   * only look like levels, are no records. */
  ASSERT_EQ(at("step 5 loss 0.2 eta 2025-03-01 10:00:00 done"), 0);
  ASSERT_EQ(at("step 5 INFORMATION: 3 loss 0.2"), 0);
  ASSERT_EQ(at("step 5 loss 0.2 INFO 3"), 0);
}

SM_TEST(track_glued_record_malformed) {
  static char big[1 << 16];
  const char bin[] = "\x00\xff iter 4 \x80NCCL INFO\x00 2025-03-01 10:00:0";

  ASSERT_EQ(sm__trk_glued_record("", 0), 0);
  ASSERT_EQ(at("NCCL INFO"), 0);
  ASSERT_EQ(at("x ]NCCL INFO"), 3);
  ASSERT_EQ(at("x [NCCL INFO"), 3);
  /* Cut in the middle of a stamp or a level: nothing read past the end. */
  ASSERT_EQ(sm__trk_glued_record("loss 1 2025-03-01 10:00", 23), 0);
  ASSERT_EQ(sm__trk_glued_record("loss 1 INFO:", 12), 0);
  ASSERT_EQ(sm__trk_glued_record(bin, sizeof(bin) - 1),
            (size_t)(strstr(bin + 2, "iter") - bin) + 8);
  /* A huge line of blanks and colons: one pass, no record. */
  for (size_t i = 0; i < sizeof(big); i++)
    big[i] = i % 3 == 0 ? ':' : (i % 3 == 1 ? ' ' : 'N');
  ASSERT_EQ(sm__trk_glued_record(big, sizeof(big)), 0);
}

#define RUN3                                                                   \
  "Epoch 3 | iter 100 | loss 0.5100 | 0.50 s/it\n"                             \
  "Epoch 3 | iter 200 | loss 0.4900 | 0.50 s/it\n"                             \
  "Epoch 3 | iter 300 | loss 0.4700 | 0.50 s/it\n"

SM_TEST(track_glued_records_leave_the_progress) {
  sm_track_result r;

  /* A logging record about evaluation glued after the newest step: the
   * step is still training's. */
  r = scan_text(RUN3 "Epoch 3 | iter 400 | loss 0.4500 | 0.50 s/it"
                     "2025-03-01 10:00:00,123 - INFO - Evaluating on the "
                     "validation set: 500 batches, eval loss 0.61\n");
  ASSERT_EQ(r.ok, 1);
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.loss, 0.45, 1e-12);
  /* A wandb summary glued after it: its numbers are not the step's. */
  r = scan_text(RUN3 "Epoch 3 | iter 400 | loss 0.4500 | 0.50 s/it wandb: "
                     "Waiting for W&B process to finish... (success). wandb: "
                     "Run history: loss 0.9 step 12\n");
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.loss, 0.45, 1e-12);
  r = feed(RUN3 "Epoch 3 | iter 400 | loss 0.4500 | 0.50 s/it wandb: "
                "Waiting for W&B process to finish... (success). wandb: "
                "Run history: loss 0.9 step 12\n");
  ASSERT_EQ(r.step, 400);
  /* An NCCL line glued to it is no progress either. */
  r = scan_text(RUN3 "Epoch 3 | iter 400 | loss 0.4500 | 0.50 s/it "
                     "node7:4411:4502 [3] NCCL INFO comm 0x5581 rank 3 nranks "
                     "8 cudaDev 3 busId 6d000 - Init COMPLETE\n");
  ASSERT_EQ(r.step, 400);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-9);
}
