/* test_text.c - normalisation, hashed features and the prototype
 * classifier trained on a small in-test corpus. */
#include <math.h>

#include "harness.h"
#include "schedmate/sm.h"

static const char *norm(const char *s) {
  static char out[SM_TEXT_MAX_NORM + 1];
  sm_text_normalize(s, strlen(s), out, sizeof(out), NULL);
  return out;
}

SM_TEST(normalize_folds_numbers_case_and_noise) {
  ASSERT_STREQ(norm("Epoch 3 [50/500]  Loss: 2.3071e-05"),
               "epoch 0 [0/0] loss: 0");
  ASSERT_STREQ(norm("\x1b[32mINFO\x1b[0m  step=12"), "info step=0");
  ASSERT_STREQ(norm("  37%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x8c   | 37/100"),
               "0%|# | 0/0");
  ASSERT_STREQ(norm("=====> done....."), "=> done.");
  /* Carriage-return updates: only the last one counts. */
  ASSERT_STREQ(norm("it 1\rit 2\rstep 30 loss 1.5\r\n"), "step 0 loss 0");
  ASSERT_STREQ(norm(""), "");
  ASSERT_STREQ(norm("\r\r\n"), "");
}

SM_TEST(normalize_shape_ignores_values) {
  char a[128], b[128];
  uint64_t ha, hb, hc;
  sm_text_normalize("step 10 loss 2.5", 16, a, sizeof(a), &ha);
  sm_text_normalize("step 99 loss 0.125", 18, b, sizeof(b), &hb);
  ASSERT_EQ(ha, hb);
  sm_text_normalize("eval 99 loss 0.125", 18, b, sizeof(b), &hc);
  ASSERT_NE(ha, hc);
}

SM_TEST(normalize_bounds_output_on_huge_input) {
  size_t n = 1 << 20;
  char *big = malloc(n);
  char out[SM_TEXT_MAX_NORM + 1];
  size_t m;
  for (size_t i = 0; i < n; i++)
    big[i] = (char)(i * 7919 % 251 + 1);
  m = sm_text_normalize(big, n, out, sizeof(out), NULL);
  ASSERT(m <= SM_TEXT_MAX_NORM);
  ASSERT_EQ(out[m], '\0');
  free(big);
}

SM_TEST(embed_is_unit_length_and_similar_for_similar_lines) {
  float a[1024], b[1024], c[1024];
  double ab = 0, ac = 0, na = 0;
  const char *l1 = "iteration 100/1000 | loss 2.31 | lr 1e-4 | 45.2 ms";
  const char *l2 = "iteration 200/1000 | loss 2.05 | lr 9e-5 | 44.9 ms";
  const char *l3 = "Traceback (most recent call last):";
  ASSERT_OK(sm_text_embed(l1, strlen(l1), a, 1024));
  ASSERT_OK(sm_text_embed(l2, strlen(l2), b, 1024));
  ASSERT_OK(sm_text_embed(l3, strlen(l3), c, 1024));
  for (int i = 0; i < 1024; i++) {
    ab += a[i] * b[i];
    ac += a[i] * c[i];
    na += a[i] * a[i];
  }
  ASSERT_NEAR(na, 1.0, 1e-4);
  ASSERT(ab > 0.99);
  ASSERT(ac < 0.3);
  ASSERT_EQ(sm_text_embed(l1, strlen(l1), a, 1000), SM_EINVAL);
}

static const char *const corpus[][2] = {
    {"progress", "step 100 loss 2.31 lr 0.0001"},
    {"progress", "Epoch 1 [20/300] loss: 0.541 time 0.21s"},
    {"progress", "iter 40: loss 3.12, time 45.2ms"},
    {"progress", " 12%|###   | 37/300 [00:12<01:31, 3.05it/s, loss=0.42]"},
    {"progress", "{'loss': 1.23, 'learning_rate': 4e-05, 'epoch': 0.5}"},
    {"progress", "train: step 5000, loss 1.9, 12000 tokens/s"},
    {"eval", "{'eval_loss': 1.10, 'eval_runtime': 3.2, 'epoch': 1.0}"},
    {"eval", "Epoch(val) [1][50/50] accuracy/top1: 76.5"},
    {"eval", "validation loss 2.1 | valid ppl 8.2"},
    {"eval", "Test: [ 100/ 196] Acc@1 75.0 Acc@5 92.0"},
    {"error", "Traceback (most recent call last):"},
    {"error", "RuntimeError: CUDA error: an illegal memory access"},
    {"error", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"},
    {"error", "ValueError: shapes (3,4) and (5,6) not aligned"},
    {"init", "Loading checkpoint shards: 100%|####| 2/2"},
    {"init", "Downloading data: 100% 10.2M/10.2M"},
    {"init", "Initializing process group backend nccl world size 8"},
    {"init", "Model parameters: 124M"},
};

SM_TEST(classifier_learns_small_corpus) {
  size_t n = SM_ARRAY_LEN(corpus);
  const char *lines[64];
  size_t lens[64];
  int labels[64];
  const char *names[] = {"progress", "eval", "error", "init"};
  sm_protoset *ps;
  sm_linecls *c;
  sm_err err = {0};
  double acc;
  float score, per[4];
  sm_train_opts o = {.dims = 1024, .lines_per_proto = 3};

  for (size_t i = 0; i < n; i++) {
    lines[i] = corpus[i][1];
    lens[i] = strlen(lines[i]);
    for (int k = 0; k < 4; k++)
      if (strcmp(corpus[i][0], names[k]) == 0)
        labels[i] = k;
  }
  ASSERT_OK(sm_protoset_train(lines, lens, labels, n, 4, names, &o, &ps, &acc,
                              &err));
  ASSERT(acc >= 0.99);
  ASSERT_EQ(sm_protoset_class(ps, "eval"), 1);
  ASSERT_EQ(sm_protoset_class(ps, "nope"), -1);
  c = sm_linecls_new(ps);
  ASSERT(c != NULL);
  /* Unseen lines of the same kinds. */
  ASSERT_EQ(sm_linecls_classify(c, "step 2500 loss 1.77 lr 0.0002", 29,
                                &score), 0);
  ASSERT(score > 0.5);
  ASSERT_EQ(sm_linecls_classify(c, "{'eval_loss': 0.9, 'eval_runtime': 2.0}",
                                39, NULL), 1);
  ASSERT_EQ(sm_linecls_classify(c, "RuntimeError: NCCL error in: nccl.cpp",
                                37, NULL), 2);
  /* The cache answers the same shape with other numbers. */
  ASSERT_EQ(sm_linecls_classify(c, "step 2600 loss 1.70 lr 0.0002", 29, NULL),
            0);
  {
    uint64_t hits, lookups;
    sm_linecls_stats(c, &hits, &lookups);
    ASSERT_EQ(hits, 1);
    ASSERT_EQ(lookups, 4);
  }
  ASSERT_EQ(sm_linecls_scores(c, "step 1 loss 2", 13, per), 0);
  ASSERT(per[0] > per[1] && per[0] > per[2]);
  /* Blank and featureless lines are unknown. */
  ASSERT_EQ(sm_linecls_classify(c, "   ", 3, NULL), -1);
  sm_linecls_free(c);
  sm_protoset_free(ps);
}
