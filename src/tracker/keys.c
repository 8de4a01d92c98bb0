/* keys.c - the key-synonym table of the tracker's fine parser.
 *
 * Logs name the same fact in many ways: "lr", "learning_rate", "learning
 * rate", "LR"; "iter", "iteration", "s:"; "time", "dt", "took", "step_avg",
 * "elapsed time per iteration (ms)".  The parser canonicalises a key
 * (lower case, words joined by '_') and looks it up here.  This is data,
 * not per-file rules: adding a framework's spelling is one line of the
 * table.  Keys that are not in the table are still judged by their words:
 * "val_acc" names evaluation, "act_loss" is a loss, "loss_cls" and
 * "box_loss" are components of one, "loss/mean" is a statistic. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "track_int.h"

typedef struct key_entry {
  const char *key;  /* canonical key */
  int role;         /* an trk_role */
  unsigned flags;   /* KF_* */
  const char *unit; /* R_TPUT: unit to report */
} key_entry;

/* Sorted by strcmp (the unit tests check it). */
static const key_entry table[] = {
    {"average_loss", R_LOSS, 0, NULL},
    {"average_train_loss", R_LOSS, KF_TRAIN, NULL},
    {"avg_loss", R_LOSS, 0, NULL},
    {"avg_step_time", R_TIME, 0, NULL},
    {"avg_train_loss", R_LOSS, KF_TRAIN, NULL},
    {"avgsamplespersec", R_TPUT, KF_LOW, "samples/s"},
    {"batch", R_BATCH, 0, NULL},
    {"batch_cost", R_TIME, 0, NULL},
    {"batch_id", R_BATCH, 0, NULL},
    {"batch_idx", R_BATCH, 0, NULL},
    {"batch_index", R_BATCH, 0, NULL},
    {"batch_loss", R_LOSS, 0, NULL},
    {"batch_num", R_BATCH, 0, NULL},
    {"batch_time", R_TIME, 0, NULL},
    {"cur_epoch", R_EPOCH, 0, NULL},
    {"cur_iter", R_ITER, 0, NULL},
    {"cur_lr", R_LR, 0, NULL},
    {"cur_step", R_STEP, 0, NULL},
    {"curr_iter", R_ITER, 0, NULL},
    {"current_epoch", R_EPOCH, 0, NULL},
    {"current_lr", R_LR, 0, NULL},
    {"current_step", R_STEP, 0, NULL},
    {"currsamplespersec", R_TPUT, 0, "samples/s"},
    {"cursamplespersec", R_TPUT, 0, "samples/s"},
    {"data_time", R_IGNORE, 0, NULL},
    {"dt", R_TIME, 0, NULL},
    {"e2e_latency", R_TIME, 0, NULL},
    {"elapsed", R_CUM, 0, NULL},
    {"elapsed_s", R_CUM, 0, NULL},
    {"elapsed_time", R_CUM, 0, NULL},
    {"elapsed_time_per_iteration", R_TIME, 0, NULL},
    {"ep", R_EPOCH, KF_STRICT, NULL},
    {"epoch", R_EPOCH, 0, NULL},
    {"epoch_num", R_EPOCH, 0, NULL},
    {"eta", R_IGNORE, 0, NULL},
    {"global_step", R_STEP, 0, NULL},
    {"global_step/sec", R_RATE, 0, NULL},
    {"global_steps", R_STEP, 0, NULL},
    {"globalstep", R_STEP, 0, NULL},
    {"grad_norm", R_IGNORE, 0, NULL},
    {"gstep", R_STEP, 0, NULL},
    {"images/s", R_TPUT, 0, "images/s"},
    {"images_per_sec", R_TPUT, 0, "images/s"},
    {"images_per_second", R_TPUT, 0, "images/s"},
    {"img/s", R_TPUT, 0, "images/s"},
    {"imgs/s", R_TPUT, 0, "images/s"},
    {"ips", R_TPUT, 0, "samples/s"},
    {"it", R_ITER, KF_STRICT, NULL},
    {"it/s", R_RATE, 0, NULL},
    {"it_time", R_TIME, 0, NULL},
    {"iter", R_ITER, 0, NULL},
    {"iter/s", R_RATE, 0, NULL},
    {"iter_num", R_ITER, 0, NULL},
    {"iter_time", R_TIME, 0, NULL},
    {"iter_time_ms", R_TIME, KF_MS, NULL},
    {"iteration", R_ITER, 0, NULL},
    {"iteration_latency", R_TIME, 0, NULL},
    {"iteration_number", R_ITER, 0, NULL},
    {"iteration_time", R_TIME, 0, NULL},
    {"iters/s", R_RATE, 0, NULL},
    {"itr", R_ITER, 0, NULL},
    {"learning_rate", R_LR, 0, NULL},
    {"learningrate", R_LR, 0, NULL},
    {"lm_loss", R_LOSS, 0, NULL},
    {"loss", R_LOSS, 0, NULL},
    {"loss(train)", R_LOSS, KF_TRAIN, NULL},
    {"loss/train", R_LOSS, KF_TRAIN, NULL},
    {"loss_avg", R_LOSS, 0, NULL},
    {"loss_scale", R_IGNORE, 0, NULL},
    {"loss_total", R_LOSS, 0, NULL},
    {"loss_train", R_LOSS, KF_TRAIN, NULL},
    {"lr", R_LR, 0, NULL},
    {"lr_0", R_LR, 0, NULL},
    {"lr_scale", R_IGNORE, 0, NULL},
    {"mean_loss", R_LOSS, 0, NULL},
    {"micro_batch", R_MICRO, 0, NULL},
    {"micro_step", R_MICRO, 0, NULL},
    {"micro_steps", R_MICRO, 0, NULL},
    {"microstep", R_MICRO, 0, NULL},
    {"minibatch", R_BATCH, 0, NULL},
    {"ms/iter", R_TIME, KF_MS, NULL},
    {"ms/step", R_TIME, KF_MS, NULL},
    {"ms_per_iter", R_TIME, KF_MS, NULL},
    {"ms_per_step", R_TIME, KF_MS, NULL},
    {"num_updates", R_STEP, 0, NULL},
    {"objective", R_LOSS, 0, NULL},
    {"opt_step", R_STEP, 0, NULL},
    {"optimizer_step", R_STEP, 0, NULL},
    {"overall_loss", R_LOSS, 0, NULL},
    {"reduced_train_loss", R_LOSS, KF_TRAIN, NULL},
    {"running_loss", R_LOSS, 0, NULL},
    {"runningavgsamplespersec", R_TPUT, KF_LOW, "samples/s"},
    {"s", R_ITER, KF_STRICT, NULL},
    {"s/iter", R_TIME, 0, NULL},
    {"s/step", R_TIME, 0, NULL},
    {"sample/s", R_TPUT, 0, "samples/s"},
    {"samples/s", R_TPUT, 0, "samples/s"},
    {"samples/sec", R_TPUT, 0, "samples/s"},
    {"samples_per_sec", R_TPUT, 0, "samples/s"},
    {"samples_per_second", R_TPUT, 0, "samples/s"},
    {"sec/iter", R_TIME, 0, NULL},
    {"sec/step", R_TIME, 0, NULL},
    {"smoothed_loss", R_LOSS, 0, NULL},
    {"speed", R_TPUT, 0, NULL},
    {"step", R_STEP, 0, NULL},
    {"step_avg", R_TIME, 0, NULL},
    {"step_duration", R_TIME, 0, NULL},
    {"step_latency", R_TIME, 0, NULL},
    {"step_ms", R_TIME, KF_MS, NULL},
    {"step_num", R_STEP, 0, NULL},
    {"step_time", R_TIME, 0, NULL},
    {"step_time_ms", R_TIME, KF_MS, NULL},
    {"steps/s", R_RATE, 0, NULL},
    {"steps/sec", R_RATE, 0, NULL},
    {"steps_per_sec", R_RATE, 0, NULL},
    {"steps_per_second", R_RATE, 0, NULL},
    {"steptime", R_TIME, 0, NULL},
    {"t_step", R_TIME, 0, NULL},
    {"tel", R_EVAL_LOSS, KF_EVAL, NULL},
    {"tflops", R_TPUT, 0, "TFLOP/s"},
    {"tgs", R_TPUT, 0, "tokens/s"},
    {"throughput", R_TPUT, 0, NULL},
    {"time", R_TIME, 0, NULL},
    {"time/batch", R_TIME, 0, NULL},
    {"time/iter", R_TIME, 0, NULL},
    {"time/step", R_TIME, 0, NULL},
    {"time_elapsed", R_CUM, 0, NULL},
    {"time_iter", R_TIME, 0, NULL},
    {"time_ms", R_TIME, KF_MS, NULL},
    {"time_per_batch", R_TIME, 0, NULL},
    {"time_per_iter", R_TIME, 0, NULL},
    {"time_per_iteration", R_TIME, 0, NULL},
    {"time_per_step", R_TIME, 0, NULL},
    {"tok/s", R_TPUT, 0, "tokens/s"},
    {"tok/sec", R_TPUT, 0, "tokens/s"},
    {"tokens/s", R_TPUT, 0, "tokens/s"},
    {"tokens/sec", R_TPUT, 0, "tokens/s"},
    {"tokens_per_sec", R_TPUT, 0, "tokens/s"},
    {"tokens_per_second", R_TPUT, 0, "tokens/s"},
    {"took", R_TIME, 0, NULL},
    {"total_elapsed", R_CUM, 0, NULL},
    {"total_loss", R_LOSS, 0, NULL},
    {"total_time", R_CUM, 0, NULL},
    {"tps", R_TPUT, 0, "tokens/s"},
    {"tr_loss", R_LOSS, KF_TRAIN, NULL},
    {"train/global_step", R_STEP, KF_TRAIN, NULL},
    {"train/learning_rate", R_LR, KF_TRAIN, NULL},
    {"train/loss", R_LOSS, KF_TRAIN, NULL},
    {"train/loss_step", R_LOSS, KF_TRAIN, NULL},
    {"train/lr", R_LR, KF_TRAIN, NULL},
    {"train/step", R_STEP, KF_TRAIN, NULL},
    {"train/step_time", R_TIME, KF_TRAIN, NULL},
    {"train/steps_per_second", R_RATE, KF_TRAIN, NULL},
    {"train_epoch", R_EPOCH, KF_TRAIN, NULL},
    {"train_iter", R_ITER, KF_TRAIN, NULL},
    {"train_lm_loss", R_LOSS, KF_TRAIN, NULL},
    {"train_loss", R_LOSS, KF_TRAIN, NULL},
    {"train_loss_avg", R_LOSS, KF_TRAIN, NULL},
    {"train_loss_step", R_LOSS, KF_TRAIN, NULL},
    {"train_runtime", R_CUM, KF_TRAIN, NULL},
    {"train_samples_per_second", R_TPUT, KF_TRAIN, "samples/s"},
    {"train_step", R_STEP, KF_TRAIN, NULL},
    {"train_step_time", R_TIME, KF_TRAIN, NULL},
    {"train_step_timing", R_TIME, KF_TRAIN, NULL},
    {"train_steps_per_second", R_RATE, KF_TRAIN, NULL},
    {"train_time", R_CUM, KF_TRAIN, NULL},
    {"train_wall", R_CUM, KF_TRAIN, NULL},
    {"trainer/global_step", R_STEP, 0, NULL},
    {"training_loss", R_LOSS, KF_TRAIN, NULL},
    {"trl", R_LOSS, KF_TRAIN, NULL},
    {"trn_loss", R_LOSS, KF_TRAIN, NULL},
    {"update", R_STEP, 0, NULL},
    {"updates", R_STEP, 0, NULL},
    {"ups", R_RATE, 0, NULL},
    {"wall", R_CUM, 0, NULL},
    {"wall_time", R_CUM, 0, NULL},
    {"walltime", R_CUM, 0, NULL},
    {"wps", R_TPUT, 0, "words/s"},
};

static int entry_cmp(const void *k, const void *e) {
  return strcmp((const char *)k, ((const key_entry *)e)->key);
}

static const key_entry *find(const char *key) {
  return bsearch(key, table, SM_ARRAY_LEN(table), sizeof(table[0]), entry_cmp);
}

int sm__trk_keytable_check(void) {
  for (size_t i = 1; i < SM_ARRAY_LEN(table); i++)
    if (strcmp(table[i - 1].key, table[i].key) >= 0)
      return -1;
  return (int)SM_ARRAY_LEN(table);
}

/* ==== Words ==== */

/* A word with its length, so that lists are compared by length first. */
typedef struct word {
  const char *w; /* lower case */
  size_t n;      /* its length */
} word;
#define W(s)                                                                   \
  { s, sizeof(s) - 1 }

static int word_in(const char *w, size_t n, const word *list) {
  for (size_t i = 0; list[i].w != NULL; i++)
    if (list[i].n == n && strncasecmp(w, list[i].w, n) == 0)
      return 1;
  return 0;
}

static const word eval_words[] = {
    W("eval"),      W("evaluate"), W("evaluating"), W("evaluation"),
    W("evaluator"), W("validate"), W("validating"), W("validation"),
    W("valid"),     W("val"),      W("test"),       W("testing"),
    W("inference"), W("predict"),  W("predicting"), W("prediction"),
    W("sanity"),    W("map50"),    W("map50-95"),   W("map75"),
    {NULL, 0}};

static const word init_words[] = {
    W("download"),      W("downloading"),  W("downloaded"),  W("loading"),
    W("load"),          W("loaded"),       W("map"),         W("tokenizing"),
    W("tokenize"),      W("tokenization"), W("tokenizer"),   W("extracting"),
    W("extract"),       W("resolving"),    W("generating"),  W("caching"),
    W("scanning"),      W("fetching"),     W("fetch"),       W("preprocessing"),
    W("processing"),    W("filter"),       W("filtering"),   W("shuffling"),
    W("packing"),       W("building"),     W("compiling"),   W("uploading"),
    W("saving"),        W("saved"),        W("writing"),     W("converting"),
    W("indexing"),      W("reading"),      W("creating"),    W("copying"),
    W("unpacking"),     W("verifying"),    W("prefetching"), W("grouping"),
    W("concatenating"), W("warming"),      W("checkpoint"),  W("shards"),
    {NULL, 0}};

int sm__trk_is_eval_word(const char *w, size_t n) {
  return word_in(w, n, eval_words);
}

int sm__trk_is_init_word(const char *w, size_t n) {
  return word_in(w, n, init_words);
}

/* Loss components of detection and segmentation models and auxiliary
 * terms: reported next to the total, never the training loss. */
static const char *const part_prefixes[] = {"box",        "obj",
                                            "cls",        "seg",
                                            "dfl",        "rpn",
                                            "bbox",       "mask",
                                            "dice",       "ce",
                                            "kl",         "aux",
                                            "z",          "giou",
                                            "iou",        "l1",
                                            "reg",        "ctr",
                                            "lb",         "balance",
                                            "router",     "moe",
                                            "centerness", "rpn_cls",
                                            "rpn_bbox",   "load_balancing",
                                            NULL};

/* The first component of a key ("val" of "val_loss", "train" of
 * "train/loss"). */
static size_t first_part(const char *key) {
  size_t i = 0;

  while (key[i] && key[i] != '_' && key[i] != '/' && key[i] != '(')
    i++;
  return i;
}

/* True when the last component of key (after '_' or '/') is part. */
static int last_part_is(const char *key, const char *part) {
  size_t kl = strlen(key), pl = strlen(part);

  if (kl < pl || strcmp(key + kl - pl, part) != 0)
    return 0;
  return kl == pl || key[kl - pl - 1] == '_' || key[kl - pl - 1] == '/';
}

void sm__trk_key_lookup(const char *key, trk_keyinfo *out) {
  const key_entry *e;
  char base[TRK_KEY_MAX];
  const char *q;
  size_t fp;

  out->role = R_NONE;
  out->flags = 0;
  out->unit = NULL;
  if (key[0] == '\0')
    return;
  e = find(key);
  if (e == NULL && (q = strchr(key, '(')) != NULL) {
    /* "epoch(train)", "epoch(val)": the qualifier says train or eval. */
    size_t bl = (size_t)(q - key);
    if (bl > 0 && bl < sizeof(base)) {
      memcpy(base, key, bl);
      base[bl] = '\0';
      e = find(base);
      if (sm__trk_is_eval_word(q + 1, strcspn(q + 1, ")")))
        out->flags |= KF_EVAL;
      else if (strncmp(q + 1, "train", 5) == 0)
        out->flags |= KF_TRAIN;
    }
  }
  if (e != NULL) {
    out->role = e->role;
    out->flags |= e->flags;
    out->unit = e->unit;
    return;
  }
  fp = first_part(key);
  if (sm__trk_is_eval_word(key, fp))
    out->flags |= KF_EVAL;
  else if ((fp == 5 && strncmp(key, "train", 5) == 0) ||
           (fp == 8 && strncmp(key, "training", 8) == 0)) {
    out->flags |= KF_TRAIN;
    /* "train_lr", "train/tokens_per_second": look the rest up; but a
     * "training_time" is the whole run's, not a step's. */
    if (key[fp] == '_' || key[fp] == '/') {
      const key_entry *r = find(key + fp + 1);
      if (r != NULL && r->role != R_LOSS && r->role != R_TIME &&
          r->role != R_CUM) {
        out->role = r->role;
        out->unit = r->unit;
        return;
      }
    }
  }
  if (last_part_is(key, "loss") || last_part_is(key, "nll") ||
      strncmp(key, "loss_", 5) == 0 || strncmp(key, "loss/", 5) == 0) {
    const char *lp = strstr(key, "loss");
    if (out->flags & KF_EVAL)
      out->role = R_EVAL_LOSS;
    else if (lp != NULL && lp[4] == '/')
      out->role = R_IGNORE; /* loss/mean, loss/std: statistics */
    else if (strncmp(key, "loss_", 5) == 0)
      out->role = R_IGNORE; /* loss_cls, loss_bbox: components */
    else {
      size_t pl =
          (size_t)(strstr(key, "_loss") ? strstr(key, "_loss") - key : 0);
      int comp = 0;
      for (int i = 0; pl > 0 && part_prefixes[i]; i++)
        if (strlen(part_prefixes[i]) == pl &&
            strncmp(key, part_prefixes[i], pl) == 0)
          comp = 1;
      out->role = comp ? R_IGNORE : R_LOSS;
      out->flags |= comp ? 0 : KF_PART;
    }
    return;
  }
  if (out->flags & KF_EVAL)
    return;
  if ((strncmp(key, "lr_", 3) == 0 || strncmp(key, "lr/", 3) == 0) &&
      strstr(key, "sched") == NULL && strstr(key, "scale") == NULL)
    out->role = R_LR;
}

/* ==== Units ==== */

double sm__trk_seconds(double v, const char *unit, int *ok) {
  static const struct {
    const char *u; /* unit */
    double f;      /* seconds per unit */
  } units[] = {
      {"s", 1},          {"sec", 1},         {"secs", 1},       {"second", 1},
      {"seconds", 1},    {"ms", 1e-3},       {"msec", 1e-3},    {"us", 1e-6},
      {"ns", 1e-9},      {"min", 60},        {"mins", 60},      {"minutes", 60},
      {"h", 3600},       {"hr", 3600},       {"hrs", 3600},     {"hours", 3600},
      {"s/it", 1},       {"s/step", 1},      {"s/iter", 1},     {"s/batch", 1},
      {"sec/step", 1},   {"sec/it", 1},      {"ms/step", 1e-3}, {"ms/it", 1e-3},
      {"ms/iter", 1e-3}, {"ms/batch", 1e-3}, {"us/step", 1e-6}, {"us/it", 1e-6},
      {"s/img", 0},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(units); i++)
    if (strcmp(unit, units[i].u) == 0 && units[i].f > 0) {
      *ok = 1;
      return v * units[i].f;
    }
  *ok = 0;
  return v;
}
