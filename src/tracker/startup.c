/* startup.c - lines that mark the start of a run: a launcher's banner, a
 * configuration dump, a checkpoint being loaded, a resume that names its
 * step, a model summary.  Met after the newest progress of a log, they
 * say that the run restarted and has printed only its start-up so far
 * (see the tracker's answer: the newest run's step is the resumed one,
 * or unknown, never the older run's last). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "track_int.h"

typedef struct startup_phrase {
  const char *text; /* lower case, matched where a word starts */
  int kind;         /* TRK_START_* */
} startup_phrase;

/* Each entry names the class of start-up output it covers. */
static const startup_phrase PHRASES[] = {
    /* Launchers and process-group set-up (torchrun, accelerate, DeepSpeed
     * and Megatron banners). */
    {"initializing torch distributed", TRK_START_BANNER},
    {"initializing distributed", TRK_START_BANNER},
    {"init_process_group", TRK_START_BANNER},
    {"added key: store_based_barrier_key", TRK_START_BANNER},
    {"distributed environment:", TRK_START_BANNER},
    {"master_addr", TRK_START_BANNER},
    {"world_size", TRK_START_BANNER},
    /* Trainers announcing the loop before its first step (Hugging Face's
     * "***** Running training *****", plain scripts). */
    {"running training", TRK_START_BANNER},
    {"starting training", TRK_START_BANNER},
    {"start training", TRK_START_BANNER},
    /* Configuration dumps: argparse's repr, OmegaConf/Hydra headings,
     * Megatron's argument block. */
    {"namespace(", TRK_START_CONFIG},
    {"------------------------ arguments", TRK_START_CONFIG},
    {"hyperparameters:", TRK_START_CONFIG},
    {"training arguments", TRK_START_CONFIG},
    {"config:", TRK_START_CONFIG},
    /* Checkpoints loaded at start-up (weights, optimizer state, shards). */
    {"loading checkpoint", TRK_START_CKPT},
    {"load checkpoint", TRK_START_CKPT},
    {"loaded checkpoint", TRK_START_CKPT},
    {"restoring checkpoint", TRK_START_CKPT},
    {"restored checkpoint", TRK_START_CKPT},
    {"loading pretrained", TRK_START_CKPT},
    {"loading weights", TRK_START_CKPT},
    /* Model summaries: parameter counts, Keras/Lightning tables. */
    {"total params", TRK_START_SUMMARY},
    {"trainable params", TRK_START_SUMMARY},
    {"number of parameters", TRK_START_SUMMARY},
    {"num params", TRK_START_SUMMARY},
    {"model summary", TRK_START_SUMMARY},
    /* Resumes ("Resuming from step 1200", "resumed training at global
     * step 4000", "Resuming from checkpoint ..."). */
    {"resuming", TRK_START_RESUME},
    {"resumed", TRK_START_RESUME},
    {"resume from", TRK_START_RESUME},
    {"resume training", TRK_START_RESUME},
    {"continuing training from", TRK_START_RESUME},
};

/* Counter words after which a resume names its step. */
static const char *const STEP_WORDS[] = {
    "global step", "global_step", "step", "iteration", "iter", "update"};

/* Whether p[0..n) equals lower-case w, ignoring the case of p. */
static int same_lower(const char *p, size_t n, const char *w) {
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)p[i]) != (unsigned char)w[i])
      return 0;
  return 1;
}

/* Offset of lower-case w in s[from..n) at a word start, or n. */
static size_t find_word(const char *s, size_t n, size_t from, const char *w) {
  size_t k = strlen(w);

  for (size_t i = from; i + k <= n; i++) {
    if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))
      continue;
    if (same_lower(s + i, k, w))
      return i;
  }
  return n;
}

/* The step a resume names after one of the counter words: digits after
 * the word and blanks, ':' or '=' (at most 12 of them), or -1. */
static long long resumed_step(const char *s, size_t n, size_t from) {
  for (size_t w = 0; w < sizeof(STEP_WORDS) / sizeof(STEP_WORDS[0]); w++) {
    size_t i = find_word(s, n, from, STEP_WORDS[w]), k, d;
    long long v = 0;
    if (i >= n)
      continue;
    k = i + strlen(STEP_WORDS[w]);
    if (k < n && isalpha((unsigned char)s[k]))
      continue; /* "steps", "iterations": a count, not the position */
    while (k < n && (s[k] == ' ' || s[k] == ':' || s[k] == '=' || s[k] == '#'))
      k++;
    for (d = 0; k + d < n && d < 13 && isdigit((unsigned char)s[k + d]); d++)
      v = v * 10 + (s[k + d] - '0');
    if (d > 0 && d <= 12 &&
        !(k + d < n && (s[k + d] == '.' || isalpha((unsigned char)s[k + d]))))
      return v;
  }
  return -1;
}

int sm__trk_startup_mark(const char *s, size_t n, long long *resume) {
  int kinds = 0;

  *resume = -1;
  if (n > TRK_MAX_INPUT)
    n = TRK_MAX_INPUT;
  /* One pass over the word starts; a phrase is compared only where its
   * first letter stands. */
  for (size_t i = 0; i < n; i++) {
    int c;
    if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))
      continue;
    c = tolower((unsigned char)s[i]);
    for (size_t p = 0; p < sizeof(PHRASES) / sizeof(PHRASES[0]); p++) {
      size_t k;
      if ((unsigned char)PHRASES[p].text[0] != c || (kinds & PHRASES[p].kind))
        continue;
      k = strlen(PHRASES[p].text);
      if (i + k > n || !same_lower(s + i, k, PHRASES[p].text))
        continue;
      kinds |= PHRASES[p].kind;
      if (PHRASES[p].kind == TRK_START_RESUME)
        *resume = resumed_step(s, n, i);
    }
  }
  return kinds;
}

int sm__trk_startup_decided(int kinds, long long resume) {
  int k = 0;

  if ((kinds & TRK_START_RESUME) && resume >= 0)
    return 1;
  for (int b = kinds; b; b &= b - 1)
    k++;
  return k >= 2;
}
