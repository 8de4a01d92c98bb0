/* bare.c - the guards on bare "STEP VALUE" pairs (a custom loop's
 * print(step, loss)): the same shape is printed by a two-column table or
 * a print(step, accuracy), whose values are no training loss.  Two
 * classes are told apart here: a head line nearby that names an
 * accuracy-like metric and no loss, and a run whose values stay in
 * [0, 1] and rise (a loss falls). */
#include <string.h>

#include "track_int.h"

/* Column words of metrics that are no loss, each a class of evaluation
 * or quality figure a script prints beside its step. */
static const char *const METRIC_WORDS[] = {
    "acc",       /* accuracy, abbreviated (Keras, timm, plain scripts) */
    "accuracy",  /* classification accuracy */
    "top1",      /* top-k accuracy of image classifiers */
    "top5",      /* top-k accuracy of image classifiers */
    "f1",        /* F1 score of classifiers and taggers */
    "precision", /* retrieval and detection precision */
    "recall",    /* retrieval and detection recall */
    "auc",       /* area under the ROC curve */
    "map",       /* detection mean average precision */
    "iou",       /* segmentation intersection over union */
    "miou",      /* its mean over classes */
    "bleu",      /* translation quality */
    "rouge",     /* summarisation quality */
    "score",     /* a generic score (higher is better) */
    "reward",    /* reinforcement learning return, not a loss */
};

/* Words that name a loss in a head: the pair is the loss after all. */
static const char *const LOSS_WORDS[] = {"loss", "nll", "mse", "cost"};

static int in_list(const char *w, size_t n, const char *const *list, size_t k) {
  for (size_t i = 0; i < k; i++)
    if (strlen(list[i]) == n && memcmp(list[i], w, n) == 0)
      return 1;
  return 0;
}

int sm__trk_metric_head(const char *s, size_t n) {
  int metric = 0, words = 0;
  size_t i = 0;

  if (n > 256)
    return 0; /* a head is short */
  while (i < n) {
    char w[16];
    size_t j = i, k = 0;
    unsigned char c = (unsigned char)s[i];
    if (!((c | 32) >= 'a' && (c | 32) <= 'z')) {
      /* A number standing alone: a row, not a head. */
      if (c >= '0' && c <= '9')
        return 0;
      if (c >= 0x80)
        return 0; /* not the plain words of a head */
      i++;
      continue;
    }
    while (j < n && ((((unsigned char)s[j] | 32) >= 'a' &&
                      ((unsigned char)s[j] | 32) <= 'z') ||
                     (s[j] >= '0' && s[j] <= '9'))) {
      if (k < sizeof(w))
        w[k++] = (char)(s[j] | ((s[j] >= 'A' && s[j] <= 'Z') ? 32 : 0));
      j++;
    }
    if (j - i <= sizeof(w)) {
      if (in_list(w, k, LOSS_WORDS, sizeof(LOSS_WORDS) / sizeof(*LOSS_WORDS)))
        return -1;
      if (in_list(w, k, METRIC_WORDS,
                  sizeof(METRIC_WORDS) / sizeof(*METRIC_WORDS)))
        metric = 1;
    }
    if (++words > 6)
      return 0; /* a column head has a few words; prose is no head */
    i = j;
  }
  return metric;
}

void sm__trk_bare_value(trk_bare *b, int new_run, double v) {
  int in01 = v >= 0.0 && v <= 1.0;

  if (new_run || b->n == 0) {
    b->n = 1;
    b->in01 = in01;
    b->first = b->last = v;
    b->rises = b->falls = 0;
    return;
  }
  b->in01 &= in01;
  if (v > b->last)
    b->rises++;
  else if (v < b->last)
    b->falls++;
  b->last = v;
  b->n++;
}

int sm__trk_bare_metric_like(const trk_bare *b) {
  return b->n >= 3 && b->in01 && b->rises >= 2 && 4 * b->falls <= b->rises &&
         b->last > b->first;
}
