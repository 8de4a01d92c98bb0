/* parse.c - from the key/value fields of one line to a sample: which
 * counter is the step, which key is the training loss, what the step time
 * and the throughput are, and whether the line is training progress at
 * all.
 *
 * The structures that frameworks print around their numbers are found
 * here: tqdm bars ("450/1000 [01:23<01:42, 5.37it/s, loss=0.23]"), Keras
 * bars ("1407/1407 [====] - 7s 5ms/step - loss: 1.19"), bracketed epoch
 * counters ("Epoch: [13][ 0/391]", "Epoch(train) [1][70/1563]"), the
 * PyTorch-tutorial pair "[1,   100] loss: 2.17", and tables whose column
 * names come on an earlier line (YOLO: "Epoch GPU_mem box_loss ...").
 *
 * The guards that keep evaluation and start-up output out of the training
 * progress are explicit and cheap: words such as "Evaluating",
 * "Validation", "Test:" or "valid on" outside the keys, counters qualified
 * "(val)", a line whose only losses are validation losses, and, for
 * start-up, leading words such as "Downloading", "Loading checkpoint
 * shards", "Map" or bars counting bytes or examples.  A line that names
 * training explicitly ("train_loss", "train_time") is never taken for an
 * evaluation line. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "track_int.h"

static int lower(int c) {
  return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static void sample_init(sm_track_sample *o) {
  memset(o, 0, sizeof(*o));
  o->epoch = o->loss = o->lr = o->step_time = o->rate = NAN;
  o->throughput = o->cum_time = o->anon_time = o->ts = NAN;
  o->bar_elapsed = o->batch_size = o->batch_tokens = o->tp_time = NAN;
  o->epoch_total = NAN;
  o->counter_tok = -1;
  o->rank = -1;
}

static int unit_is(const char *u, const char *const *list) {
  if (u[0] == '\0')
    return 0;
  for (int i = 0; list[i]; i++)
    if (strcmp(u, list[i]) == 0)
      return 1;
  return 0;
}

/* Units of a time per step. */
static const char *const per_step_units[] = {
    "ms/step",  "s/step",  "us/step",  "ms/it", "ms/iter", "s/iter",
    "ms/batch", "s/batch", "sec/step", "us/it", NULL};
/* A time per step, in any spelling of a time over a step word
 * ("seconds/iter"); tqdm's "s/it" is the bar's rate (see rate_unit). */
static int per_step_unit(const char *u) {
  return unit_is(u, per_step_units) ||
         (strcmp(u, "s/it") != 0 && sm__trk_unit_per(u, NULL) == 1);
}

/* Units of steps per second. */
static const char *const rate_units[] = {"it/s",      "its/s",  "step/s",
                                         "steps/s",   "iter/s", "iters/s",
                                         "updates/s", NULL};
/* Units that count bytes or dataset examples: start-up work. */
static const char *const init_units[] = {
    "b/s",  "kb/s", "mb/s",       "gb/s",         "kib/s",   "mib/s", "gib/s",
    "ex/s", "ba/s", "examples/s", "examples/sec", "files/s", NULL};

/* Steps per second, in any spelling of a step word over a second. */
static int rate_unit(const char *u) {
  return unit_is(u, rate_units) || sm__trk_unit_per(u, NULL) == 2;
}

/* Maps a throughput unit as printed to the unit reported, or NULL. */
static const char *tput_unit(const char *u) {
  static const char *const map[][2] = {{"samples/s", "samples/s"},
                                       {"samples/sec", "samples/s"},
                                       {"sample/s", "samples/s"},
                                       {"tokens/s", "tokens/s"},
                                       {"tokens/sec", "tokens/s"},
                                       {"tok/s", "tokens/s"},
                                       {"token/s", "tokens/s"},
                                       {"img/s", "images/s"},
                                       {"imgs/s", "images/s"},
                                       {"images/s", "images/s"},
                                       {"images/sec", "images/s"},
                                       {"words/s", "words/s"},
                                       {"seq/s", "sequences/s"},
                                       {"sequences/s", "sequences/s"},
                                       {"tflops", "TFLOP/s"},
                                       {"tflop/s", "TFLOP/s"},
                                       {"/s", "/s"}};

  for (size_t i = 0; i < SM_ARRAY_LEN(map); i++)
    if (strcmp(u, map[i][0]) == 0)
      return map[i][1];
  return NULL;
}

/* ==== Tables ==== */

/* A line of column names: three to twelve words and nothing else, half
 * of them metric-like ("box_loss", "GPU_mem") or known keys. */
/* The columns of a head line: its words, or, where tabs separate the
 * columns, the words of each cell joined by '_' ("total loss<TAB>score
 * loss", "Learning Rate<TAB>Train Loss<TAB>Valid Acc.": a progress
 * logger's metrics file).  Lower case, '-' as '_'.  Returns the count,
 * or -1 when a token is neither a word nor a separator. */
static int head_columns(const trk_line *L, char col[][TRK_COL_MAX], int max) {
  int nw = 0, tabs = memchr(L->s, '\t', L->n) != NULL, cell = -1;
  size_t l = 0;

  for (int k = 0; k < L->ntok; k++) {
    const trk_tok *t = &L->tok[k];
    int c = 0;
    if (t->kind != TK_WORD) {
      if (t->kind == TK_PUNCT &&
          (strchr("|()", t->c) != NULL || (tabs && t->c == '.')))
        continue;
      return -1;
    }
    if (tabs) /* the cell: tabs before the word */
      for (size_t i = 0; i < t->off; i++)
        c += L->s[i] == '\t';
    if (tabs && c == cell && nw > 0) {
      /* another word of the same cell; a long name is cut, never split
       * into a column of its own */
      if (l + 1 < TRK_COL_MAX - 1)
        col[nw - 1][l++] = '_';
    } else {
      if (nw == max)
        return max + 1;
      nw++;
      l = 0;
    }
    cell = c;
    for (size_t i = 0; i < t->len && l < TRK_COL_MAX - 1; i++) {
      char ch = (char)lower((unsigned char)L->s[t->off + i]);
      col[nw - 1][l++] = ch == '-' ? '_' : ch;
    }
    col[nw - 1][l] = '\0';
  }
  return nw;
}

static int table_head(trk_line *L, trk_head *h) {
  int nw, metric = 0, known = 0, counter = 0, parts = 0, total = -1;
  char cols[TRK_MAX_COLS + 1][TRK_COL_MAX];

  if (L->nf > 0)
    return 0;
  nw = head_columns(L, cols, TRK_MAX_COLS);
  if (nw < 0)
    return 0;
  for (int k = 0; k < nw && k < TRK_MAX_COLS; k++) {
    char *col = cols[k];
    size_t l = strlen(col);
    trk_keyinfo ki;
    /* YOLOv5/v7 name their loss columns by bare component words and
     * the whole loss 'total' ("Epoch gpu_mem box obj cls total labels
     * img_size"). */
    if (sm__trk_is_part_word(col, l) && l + 5 < TRK_COL_MAX) {
      memcpy(col + l, "_loss", 6);
      l += 5;
      parts++;
    } else if (strcmp(col, "total") == 0) {
      total = k;
    }
    sm__trk_key_lookup(col, &ki);
    if (ki.role == R_EPOCH || ki.role == R_LOSS || ki.role == R_STEP ||
        ki.role == R_ITER || ki.role == R_LR || ki.role == R_EVAL_LOSS ||
        ki.role == R_BATCH || ki.role == R_IGNORE)
      known++;
    if (ki.role == R_STEP || ki.role == R_ITER || ki.role == R_EPOCH ||
        ki.role == R_BATCH)
      counter++;
    if (ki.role != R_NONE || strchr(col, '_') != NULL)
      metric++;
    if (h != NULL)
      memcpy(h->col[k], col, l + 1);
  }
  /* Two columns only where both are known and one counts: the head of
   * a metrics file ("step<TAB>loss", "iter loss"). */
  if (nw == 2 && (known < 2 || counter != 1))
    return 0;
  if (total >= 0 && parts >= 2 && total < TRK_MAX_COLS) {
    /* 'total' beside the components is the loss. */
    if (h != NULL)
      memcpy(h->col[total], "loss", 5);
    known++;
    metric++;
  }
  if (nw < 2 || nw > TRK_MAX_COLS || known == 0 || metric * 2 < nw)
    return 0;
  if (h != NULL)
    h->n = nw;
  return 1;
}

/* Names the leading values of a row after the columns of the last table
 * head: "  2/2  4.76G  0.0436 ... 640: 100% 8/8 [...]". */
static int map_row(trk_line *L, const trk_head *h) {
  int nv = 0, k;

  for (k = 0; k < L->ntok; k++) {
    const trk_tok *t = &L->tok[k];
    if (t->kind == TK_NUM || t->kind == TK_FRAC || t->kind == TK_CLOCK) {
      /* A clock is a column too (fastai's "time" column: "00:12"). */
      if (nv >= L->nf || L->f[nv].tok != k || L->f[nv].key[0] != '\0')
        return 0;
      nv++;
    } else if (t->kind == TK_PUNCT && t->c == '|') {
      continue;
    } else if ((t->kind == TK_PUNCT && (t->c == ':' || t->c == '[')) ||
               t->kind == TK_BAR) {
      break;
    } else {
      return 0;
    }
  }
  /* A row cut before its last column ("  0/99  7.99G ... 0.1376  665",
   * the bar and image size lost where a capture truncates the line)
   * still names its leading values, when nothing else follows. */
  if (nv != h->n && !(nv == h->n - 1 && nv >= 4 && k == L->ntok))
    return 0;
  for (int i = 0; i < nv; i++) {
    memcpy(L->f[i].key, h->col[i], TRK_COL_MAX);
    L->f[i].sep = ':';
  }
  return 1;
}

/* ==== Bars ==== */

enum { BAR_NONE = 0, BAR_TQDM, BAR_KERAS, BAR_RICH };

typedef struct bar_info {
  int style;       /* BAR_* */
  int tok;         /* token of the counter */
  double elapsed;  /* elapsed seconds or NAN */
  double left;     /* tqdm: the remaining time ("<00:03") or NAN */
  double rate;     /* steps per second or NAN */
  int rate_tok;    /* token of the rate */
  int elapsed_tok; /* Keras: token of the elapsed time */
  int init_unit;   /* the rate counts bytes or examples */
} bar_info;

static int punct_at(const trk_line *L, int k, char c) {
  return k >= 0 && k < L->ntok && L->tok[k].kind == TK_PUNCT &&
         L->tok[k].c == c;
}

/* True when token k is the value of a keyed field ("Epoch 2/9"). */
static int keyed_value(const trk_line *L, int k) {
  for (int i = 0; i < L->nf; i++)
    if (L->f[i].tok == k)
      return L->f[i].key[0] != '\0';
  return 0;
}

static void find_bar(const trk_line *L, bar_info *b) {
  memset(b, 0, sizeof(*b));
  b->elapsed = b->left = b->rate = NAN;
  b->tok = b->rate_tok = b->elapsed_tok = -1;
  for (int k = 0; k < L->ntok; k++) {
    const trk_tok *t = &L->tok[k];
    int counter = t->kind == TK_FRAC ||
                  (t->kind == TK_NUM && t->isint && strcmp(t->unit, "it") == 0);
    if (!counter || keyed_value(L, k))
      continue;
    if (punct_at(L, k + 1, '[') && k + 2 < L->ntok &&
        L->tok[k + 2].kind == TK_CLOCK &&
        (punct_at(L, k + 3, '<') || punct_at(L, k + 3, ','))) {
      b->style = BAR_TQDM;
      b->tok = k;
      b->elapsed = L->tok[k + 2].v;
      if (punct_at(L, k + 3, '<') && k + 4 < L->ntok &&
          L->tok[k + 4].kind == TK_CLOCK)
        b->left = L->tok[k + 4].v;
      for (int m = k + 3; m < L->ntok && !punct_at(L, m, ']'); m++) {
        const trk_tok *r = &L->tok[m];
        if (r->kind != TK_NUM || r->unit[0] == '\0')
          continue;
        if (strcmp(r->unit, "s/it") == 0 && r->v > 0) {
          b->rate = 1.0 / r->v;
          b->rate_tok = m;
        } else if (unit_is(r->unit, rate_units)) {
          b->rate = r->v;
          b->rate_tok = m;
        } else if (unit_is(r->unit, init_units)) {
          b->init_unit = 1;
          b->rate_tok = m;
        } else if (strchr(r->unit, '/') != NULL) {
          b->rate_tok = m;
        } else {
          continue;
        }
        break;
      }
      return;
    }
    if (t->kind == TK_FRAC &&
        ((k + 1 < L->ntok && L->tok[k + 1].kind == TK_BAR) ||
         (punct_at(L, k + 1, '[') && k + 2 < L->ntok &&
          L->tok[k + 2].kind == TK_BAR))) {
      b->style = BAR_KERAS;
      b->tok = k;
      for (int m = k + 1; m < L->ntok && m < k + 8; m++) {
        const trk_tok *r = &L->tok[m];
        int ok;
        if (r->kind == TK_NUM && strchr(r->unit, '/') == NULL) {
          double s = sm__trk_seconds(r->v, r->unit, &ok);
          if (ok) {
            b->elapsed = s;
            b->elapsed_tok = m;
          }
          break;
        }
        if (r->kind == TK_WORD)
          break;
      }
      return;
    }
    if (t->kind == TK_FRAC && k > 0 && L->tok[k - 1].kind == TK_BAR) {
      /* rich: "Epoch 2/9 ━━━━━━━━ 121/1563 0:00:12 • 0:02:21 10.21it/s" */
      b->style = BAR_RICH;
      b->tok = k;
      return;
    }
  }
}

/* True when the percentage in front of the bar at token k has a key of
 * the given role ("Epoch:  33%|...| 1/3"). */
static int bar_describes(const trk_line *L, int k, int role) {
  for (int i = L->nf - 1; i >= 0; i--)
    if (L->f[i].tok < k && strcmp(L->f[i].unit, "%") == 0) {
      /* The description may name what the bar counts in the plural:
       * "Epochs:  30%|###  | 3/10". */
      const char *key = L->f[i].key;
      size_t l = strlen(key);
      char one[TRK_KEY_MAX];
      trk_keyinfo ki;
      if (L->f[i].ki.role == role)
        return 1;
      if (l < 2 || key[l - 1] != 's')
        return 0;
      memcpy(one, key, l - 1);
      one[l - 1] = '\0';
      sm__trk_key_lookup(one, &ki);
      return ki.role == role;
    }
  return 0;
}

/* ==== Guards ==== */

static int word_at(const trk_line *L, int k,
                   int (*pred)(const char *, size_t)) {
  const trk_tok *t = &L->tok[k];
  return t->kind == TK_WORD && pred(L->s + t->off, t->len);
}

static int key_has(const trk_line *L, const trk_field *f,
                   int (*pred)(const char *, size_t)) {
  for (int i = 0; i < f->nkw; i++)
    if (word_at(L, f->kw[i], pred))
      return 1;
  return 0;
}

/* ==== Keys ==== */

/* Marks a dropped word that may only stand before a counter. */
#define DROP_QUAL 0x10000

/* Words that may stand in front of a key without being part of it: log
 * levels ("INFO step 10", the table's "level" words), the qualifiers
 * train / eval ("Train Step 10", "Val Step 10"), which then mark the
 * key, and words that qualify a counter without changing what it
 * counts ("completed step: 3", the table's "qual" words). */
static int droppable(const trk_line *L, int k, unsigned *flags) {
  const trk_tok *t = &L->tok[k];
  const char *w = L->s + t->off;
  char low[16];
  size_t n = t->len;

  if (t->kind != TK_WORD)
    return 0;
  if (n >= 2 && w[0] == '_' && w[1] == '_')
    return 1; /* "__main__" */
  if (memchr(w, '.', n) != NULL)
    return 1; /* "d2.utils.events", "trainer.py" */
  if (n >= sizeof(low))
    return 0;
  for (size_t i = 0; i < n; i++)
    low[i] = (char)lower((unsigned char)w[i]);
  low[n] = '\0';
  if (sm__trk_is_level_word(low, n))
    return 1;
  if (strcmp(low, "train") == 0 || strcmp(low, "training") == 0) {
    *flags |= KF_TRAIN;
    return 1;
  }
  if (sm__trk_is_eval_word(w, n)) {
    *flags |= KF_EVAL;
    return 1;
  }
  if (sm__trk_is_qual_word(low, n)) {
    *flags |= DROP_QUAL;
    return 1;
  }
  return 0;
}

/* Looks a field's key up; an unknown key of several words is tried again
 * without leading log levels and qualifiers. */
static void lookup_field(trk_line *L, trk_field *f) {
  unsigned extra = 0;

  sm__trk_key_lookup(f->key, &f->ki);
  if (f->ki.role != R_NONE || f->nkw < 2)
    return;
  for (int d = 1; d < f->nkw; d++) {
    char key[TRK_KEY_MAX];
    trk_keyinfo ki;
    if (!droppable(L, f->kw[d - 1], &extra))
      return;
    sm__trk_canon(L, f->kw + d, f->nkw - d, key, sizeof(key));
    sm__trk_key_lookup(key, &ki);
    /* A qualifier may only be dropped in front of a counter or a loss:
     * "Train Step 10", "Val Loss 0.3", but not "Training time: 11.2s"
     * (the whole run's time). */
    if (ki.role != R_NONE && (extra & (KF_TRAIN | KF_EVAL)) &&
        !(ki.role == R_STEP || ki.role == R_ITER || ki.role == R_BATCH ||
          ki.role == R_EPOCH || ki.role == R_LOSS))
      return;
    if (ki.role != R_NONE && (extra & DROP_QUAL) &&
        !(ki.role == R_STEP || ki.role == R_ITER || ki.role == R_BATCH ||
          ki.role == R_EPOCH))
      return;
    if (ki.role != R_NONE) {
      memcpy(f->key, key, sizeof(f->key));
      f->ki = ki;
      f->ki.flags |= extra & ~(unsigned)DROP_QUAL;
      if ((extra & KF_EVAL) && ki.role == R_LOSS)
        f->ki.role = R_EVAL_LOSS;
      return;
    }
  }
}

/* ==== The sample ==== */

static int integral(double v) {
  return v >= 0 && v < 1e15 && v == (double)(long long)v;
}

/* Sets the counter of the sample; returns 0 (and sets nothing) when the
 * value is past its own printed total: "8/6" is no position in a loop,
 * whatever bytes printed it. */
static int set_counter(sm_track_sample *o, int counter, const char *name,
                       double step, double total, int tok) {
  int has_total = total == total && total > 0 && integral(total);

  if (!integral(step) || (has_total && step > total))
    return 0;
  o->counter = counter;
  snprintf(o->counter_name, sizeof(o->counter_name), "%s", name);
  o->has_step = 1;
  o->step = (long long)step;
  o->has_total = has_total;
  o->total = has_total ? (long long)total : 0;
  o->counter_tok = tok;
  return 1;
}

/* Significant digits of the number token k as printed ("0.02" 1, "2s" 1,
 * "0.615" 3, "1.00s/it" 3): a value printed with one digit is rounded
 * too much to time a step by. */
static int sig_digits(const trk_line *L, int k) {
  const char *s;
  int n = 0, lead = 1;

  if (k < 0 || k >= L->ntok || L->tok[k].kind != TK_NUM)
    return 0;
  s = L->s + L->tok[k].off;
  for (size_t i = 0; i < L->tok[k].len; i++) {
    char c = s[i];
    if (c == '-' || c == '+' || c == '.' || c == ',')
      continue;
    if (c < '0' || c > '9')
      break;
    if (c == '0' && lead)
      continue;
    lead = 0;
    n++;
  }
  return n;
}

/* A throughput key that is per device ("throughput per GPU", "tgs",
 * "tokens_per_sec_per_gpu"): not to be divided into a global batch. */
static int per_device_key(const char *key) {
  return strstr(key, "gpu") != NULL || strstr(key, "device") != NULL ||
         strstr(key, "rank") != NULL || strcmp(key, "tgs") == 0;
}

/* A line that announces a loop that is not training: a phase word
 * ("Extracting features for train set...", "***** Running Evaluation
 * *****") after any logger prefix, with no value after it and nothing
 * of a progress line (no bar, no fraction, no known key). */
static int phase_line(const trk_line *L, const bar_info *bar) {
  int seen = 0, at = -1;

  if (bar->style != BAR_NONE)
    return 0;
  for (int i = 0; i < L->nf; i++)
    if (L->f[i].kind == TK_FRAC || L->f[i].ki.role != R_NONE)
      return 0;
  for (int i = 0; i < L->nfree && seen < 3 && at < 0; i++) {
    const trk_tok *t = &L->tok[L->free_tok[i]];
    const char *w = L->s + t->off;
    if (memchr(w, '.', t->len) != NULL || sm__trk_is_level_word(w, t->len))
      continue; /* "trainer.py", "INFO" */
    if (sm__trk_is_phase_word(w, t->len))
      at = L->free_tok[i];
    seen++;
  }
  /* "... for open-end generation." (a notice each call of a text
   * generator prints): the purpose named last, after "for", names the
   * loop too. */
  if (at < 0 && L->nfree >= 1) {
    int last = L->free_tok[L->nfree - 1];
    const trk_tok *t = &L->tok[last];
    for (int j = last - 1; j >= 0 && j >= last - 3; j--) {
      const trk_tok *f = &L->tok[j];
      if (f->kind == TK_WORD && f->len == 3 &&
          strncasecmp(L->s + f->off, "for", 3) == 0 &&
          sm__trk_is_phase_word(L->s + t->off, t->len)) {
        at = last;
        break;
      }
    }
  }
  if (at < 0)
    return 0;
  for (int i = 0; i < L->nf; i++)
    if (L->f[i].tok > at)
      return 0;
  return 1;
}

/* What the parse of one line has found so far, beside the sample: the
 * bar, the counter's rank (best), the line's marks (start-up, evaluation,
 * training keys) and which fields give the loss and the epoch. */
typedef struct pstate {
  bar_info bar;
  int best, eval, init, train, has_eval_loss;
  int loss_i, avg_i, part_i, disc_i, epoch_i;
  int tp_low, epoch_bar, tp_global, part_seen;
  int nonfinite_fact;
  double total_hint;
} pstate;

/* Looks the fields' keys up; notes training keys and losses of any kind,
 * and which GAN network losses count (both networks named). */
static void read_fields(trk_line *L, pstate *P, sm_track_sample *o) {
  for (int i = 0; i < L->nf; i++) {
    trk_field *f = &L->f[i];
    lookup_field(L, f);
    if ((f->ki.flags & KF_STRICT) &&
        (!(f->sep == ':' || f->sep == '=') || !f->isint || f->unit[0]))
      f->ki.role = R_NONE;
    /* "cost 0.52s": a loss is never a time. */
    if (f->ki.role == R_LOSS && f->unit[0]) {
      int secs = 0;
      sm__trk_seconds(f->v, f->unit, &secs);
      if (secs)
        f->ki.role = R_NONE;
    }
    /* "[epoch: 17/200, iter: 425/489] total: 1.355": a bare "total" with
     * a fraction is the total of the loss terms; as a count ("total:
     * 489"), with a unit or in a sentence it is none. */
    if (f->ki.role == R_NONE && strcmp(f->key, "total") == 0 &&
        f->kind == TK_NUM && !f->isint && !f->unit[0] &&
        (f->sep == ':' || f->sep == '='))
      f->ki.role = R_LOSS;
    /* A loss of any kind that is not an evaluation's (box_loss, loss_cls)
     * shows training, even where it is not the loss reported. */
    if (!(f->ki.flags & KF_EVAL) &&
        ((strstr(f->key, "loss") != NULL && f->ki.role != R_EVAL_LOSS &&
          strstr(f->key, "scale") == NULL) ||
         (f->ki.role == R_LOSS && !(f->ki.flags & KF_NET))))
      P->part_seen = 1;
    if (f->ki.flags & KF_TRAIN) {
      P->train++;
      if (f->ki.role == R_CUM || f->ki.role == R_TIME || f->ki.role == R_RATE)
        o->train_clock++;
    }
  }
  {
    /* Losses named only by a GAN's networks ("G_GAN: 1.2 ... D_real:
     * 0.5", "d: -0.001;gen: -0.008") are losses where the line names
     * both networks; alone, "d_model: 512" or "gen: 3" are not. */
    int gen = 0, disc = 0;
    for (int i = 0; i < L->nf; i++)
      if ((L->f[i].ki.flags & KF_NET) && L->f[i].kind == TK_NUM) {
        gen |= !(L->f[i].ki.flags & KF_DISC);
        disc |= (L->f[i].ki.flags & KF_DISC) != 0;
      }
    for (int i = 0; i < L->nf; i++)
      if (L->f[i].ki.flags & KF_NET) {
        if (gen && disc)
          P->part_seen = 1;
        else
          L->f[i].ki.role = R_NONE;
      }
  }
}

/* The line's progress bar; one that counts epochs gives the epoch. */
static void line_bar(trk_line *L, pstate *P, sm_track_sample *o) {
  find_bar(L, &P->bar);
  if (P->bar.style == BAR_TQDM && bar_describes(L, P->bar.tok, R_EPOCH)) {
    /* "Epoch:  33%|###  | 1/3 [...]": the bar counts epochs; its rate is
     * per epoch, not per step. */
    o->epoch = L->tok[P->bar.tok].v;
    P->bar.style = BAR_NONE;
    P->epoch_bar = 1;
  }
}

/* Start-up work and evaluation, from the line's words and keys. */
static void startup_or_eval(const trk_line *L, pstate *P) {
  /* Start-up work: leading words of the line or of the bar, and bars
   * that count bytes or examples. */
  for (int i = 0; i < L->nfree && !P->init; i++)
    if (L->free_tok[i] < L->head_end &&
        word_at(L, L->free_tok[i], sm__trk_is_init_word))
      P->init = 1;
  if (L->nf > 0 &&
      (L->f[0].ki.role == R_NONE || strcmp(L->f[0].unit, "%") == 0) &&
      key_has(L, &L->f[0], sm__trk_is_init_word))
    P->init = 1;
  if (P->bar.init_unit)
    P->init = 1;
  for (int i = 0; i < L->nf && !P->init; i++)
    if (unit_is(L->f[i].unit, init_units))
      P->init = 1;

  /* Evaluation words outside meaningful keys. */
  for (int i = 0; i < L->nfree && !P->eval; i++)
    if (word_at(L, L->free_tok[i], sm__trk_is_eval_word))
      P->eval = 1;
  /* A detection metric with its threshold written on ("mAP@.5",
   * "mAP_50", "AP@0.5"), in any token: a validation table's column, on
   * a line that prints no loss (an epoch line "mAP@0.5: 0.96, Loss: 0.4"
   * stays what its loss makes it). */
  {
    int loss = 0, q = 0;
    for (int i = 0; i < L->nf; i++)
      loss |= L->f[i].ki.role == R_LOSS;
    for (int i = 0; i < L->ntok && !loss && !q; i++)
      q = word_at(L, i, sm__trk_is_evalq_word);
    if (q)
      P->eval = 1;
  }
  for (int i = 0; i < L->nf && !P->eval; i++) {
    const trk_field *f = &L->f[i];
    if ((f->ki.role == R_NONE || strcmp(f->unit, "%") == 0 ||
         f->kind == TK_FRAC) &&
        key_has(L, f, sm__trk_is_eval_word))
      P->eval = 1;
    if ((f->ki.flags & KF_EVAL) &&
        (f->ki.role == R_EPOCH || f->ki.role == R_STEP ||
         f->ki.role == R_ITER || f->ki.role == R_BATCH))
      P->eval = 1;
  }
}

/* Facts a field gives by its unit, whatever its key: an unnamed
 * duration, a time per step ("1.2 s/it"), a rate, a throughput. */
static void unit_facts(const trk_line *L, const trk_field *f, pstate *P,
                       sm_track_sample *o) {
  int role = f->ki.role, ok;
  double s;

  /* Unkeyed, or keyed by one unknown letter ("t=  19788s" of compact
   * status lines): a duration whose meaning the window decides (a clock
   * that only grows, or one step's time). */
  int anon = f->key[0] == '\0' || (f->key[1] == '\0' && f->ki.role == R_NONE &&
                                   (f->sep == '=' || f->sep == ':'));
  if (anon && f->kind == TK_NUM && !f->paren && f->tok != P->bar.elapsed_tok &&
      f->tok != P->bar.rate_tok && !per_step_unit(f->unit) &&
      f->unit[0] != '\0' && o->anon_time != o->anon_time) {
    s = sm__trk_seconds(f->v, f->unit, &ok);
    if (ok)
      o->anon_time = s;
  }
  if (f->kind == TK_NUM && per_step_unit(f->unit) &&
      o->step_time != o->step_time && !(f->ki.flags & KF_EVAL)) {
    s = sm__trk_seconds(f->v, f->unit, &ok);
    if (ok && s > 0) {
      o->step_time = s;
      o->time_sig = sig_digits(L, f->tok);
      snprintf(o->time_key, sizeof(o->time_key), "%s", f->unit);
    }
  }
  if (f->kind == TK_NUM && f->tok != P->bar.rate_tok && o->rate != o->rate &&
      !(f->ki.flags & KF_EVAL)) {
    if (rate_unit(f->unit) && f->v > 0)
      o->rate = f->v;
    else if (strcmp(f->unit, "s/it") == 0 && f->v > 0)
      o->rate = 1.0 / f->v;
    if (o->rate == o->rate)
      o->rate_sig = sig_digits(L, f->tok);
  }
  if (f->kind == TK_NUM && o->throughput != o->throughput &&
      !(f->ki.flags & KF_EVAL) && role != R_TPUT && f->v > 0) {
    const char *u = tput_unit(f->unit);
    if (u != NULL) {
      o->throughput = f->v;
      snprintf(o->tp_unit, sizeof(o->tp_unit), "%s", u);
      P->tp_global = !per_device_key(f->key);
    }
  }
}

/* Facts a field gives by its key's role: the loss (and which kind), the
 * epoch, learning rate, step time, cumulative time, rate, throughput,
 * total and batch sizes. */
static void role_fact(const trk_line *L, const trk_field *f, int i, pstate *P,
                      sm_track_sample *o) {
  int role = f->ki.role, ok;
  double s;

  switch (role) {
  case R_LOSS:
    if (f->kind != TK_NUM || strcmp(f->unit, "%") == 0)
      break;
    if (f->ki.flags & KF_DISC) {
      if (P->disc_i < 0)
        P->disc_i = i;
    } else if (f->ki.flags & KF_LOW) {
      /* "avg loss: 0.52 loss: 0.50": an average gives way to the
       * plain loss. */
      if (P->avg_i < 0)
        P->avg_i = i;
    } else if (!(f->ki.flags & KF_PART) && P->loss_i < 0)
      P->loss_i = i;
    else if ((f->ki.flags & KF_PART) && P->part_i < 0)
      P->part_i = i;
    break;
  case R_EVAL_LOSS:
    P->has_eval_loss = 1;
    break;
  case R_EPOCH:
    /* A short key ("ep") gives way to "epoch" on the same line: LeRobot
     * prints episodes as "ep:40" beside "epch:1.01". */
    if (f->kind != TK_CLOCK &&
        (P->epoch_i < 0 || ((L->f[P->epoch_i].ki.flags & KF_STRICT) &&
                            !(f->ki.flags & KF_STRICT))))
      P->epoch_i = i;
    break;
  case R_LR:
    if (o->lr != o->lr && f->kind == TK_NUM)
      o->lr = f->v;
    break;
  case R_TIME:
    if (o->step_time != o->step_time && f->kind == TK_NUM) {
      const char *u = f->unit;
      if (u[0] == '\0')
        u = (f->ki.flags & KF_MS) ? "ms" : (f->ki.flags & KF_US) ? "us" : "s";
      s = sm__trk_seconds(f->v, u, &ok);
      if (ok && s > 0 && s < 1e6) {
        o->step_time = s;
        o->time_sig = sig_digits(L, f->tok);
        snprintf(o->time_key, sizeof(o->time_key), "%s", f->key);
      }
    }
    break;
  case R_CUM:
    if (o->cum_time != o->cum_time &&
        (f->kind == TK_NUM || f->kind == TK_CLOCK)) {
      const char *u = f->unit[0] ? f->unit : (f->ki.flags & KF_MS) ? "ms" : "s";
      s = f->kind == TK_CLOCK ? f->v : sm__trk_seconds(f->v, u, &ok);
      if (f->kind == TK_CLOCK || ok)
        o->cum_time = s;
    }
    break;
  case R_RATE:
    if (o->rate != o->rate && f->kind == TK_NUM && f->v > 0) {
      o->rate = strcmp(f->unit, "s/it") == 0 ? 1.0 / f->v : f->v;
      o->rate_sig = sig_digits(L, f->tok);
    }
    break;
  case R_TPUT:
    if (f->kind != TK_NUM || f->v <= 0)
      break;
    if (rate_unit(f->unit)) {
      if (o->rate != o->rate) {
        o->rate = f->v;
        o->rate_sig = sig_digits(L, f->tok);
      }
      break;
    }
    if (f->ki.flags & KF_LOW) {
      if (P->tp_low < 0)
        P->tp_low = i;
      break;
    }
    if (o->throughput != o->throughput || strcmp(o->tp_unit, "/s") == 0) {
      const char *u = f->ki.unit ? f->ki.unit : tput_unit(f->unit);
      o->throughput = f->v;
      snprintf(o->tp_unit, sizeof(o->tp_unit), "%s", u ? u : "/s");
      P->tp_global = !per_device_key(f->key);
    }
    break;
  case R_TOTAL:
    if (f->kind == TK_NUM && f->isint && f->v > 0 && f->unit[0] == '\0')
      P->total_hint = f->v;
    break;
  case R_BSZ:
    if (o->batch_size != o->batch_size && f->kind == TK_NUM && f->v > 0 &&
        f->unit[0] == '\0')
      o->batch_size = f->v;
    break;
  case R_BTOK:
    if (o->batch_tokens != o->batch_tokens && f->kind == TK_NUM && f->v > 0 &&
        f->unit[0] == '\0')
      o->batch_tokens = f->v;
    break;
  default:
    break;
  }
}

/* The facts of every field not an evaluation's. */
static void field_facts(const trk_line *L, pstate *P, sm_track_sample *o) {
  for (int i = 0; i < L->nf; i++) {
    const trk_field *f = &L->f[i];
    int role = f->ki.role;

    unit_facts(L, f, P, o);
    if (f->ki.flags & KF_EVAL) {
      if (role == R_EVAL_LOSS)
        P->has_eval_loss = 1;
      continue;
    }
    if (strcmp(f->unit, "%") == 0 &&
        (role == R_EPOCH || role == R_STEP || role == R_ITER ||
         role == R_BATCH || role == R_MICRO))
      continue; /* "Epoch:  45%|...": a bar's description, not a value */
    role_fact(L, f, i, P, o);
  }
}

/* Whether the step time is a bare "time" figure that says nothing of
 * what it times: its key is "time" alone, without a unit, and nothing on
 * the line marks a per-step timer (a running average in parentheses
 * after it, a data-loading time, an eta, a throughput). */
static int bare_time(const trk_line *L, const sm_track_sample *o) {
  int ti = -1;

  if (o->step_time != o->step_time || strcmp(o->time_key, "time") != 0 ||
      o->throughput == o->throughput || o->table_row)
    return 0; /* a table's column is named by its head, not judged here */
  for (int i = 0; i < L->nf; i++) {
    const trk_field *f = &L->f[i];
    if (strstr(f->key, "data") != NULL || strcmp(f->key, "eta") == 0)
      return 0;
    if (ti < 0 && strcmp(f->key, "time") == 0)
      ti = i;
  }
  if (ti < 0 || L->f[ti].unit[0] != '\0' || L->f[ti].paren)
    return 0;
  return !(ti + 1 < L->nf && L->f[ti + 1].paren && L->f[ti + 1].key[0] == '\0');
}

/* Facts of the line as a whole: a step time from batch and throughput,
 * the loss among the candidates, the epoch, the bar's rate; evaluation
 * unless the line names training. */
static void settle_facts(const trk_line *L, pstate *P, sm_track_sample *o) {
  /* A step time from the batch and the throughput printed on the same
   * line (samples per step / samples per second, or tokens per step /
   * tokens per second); not from a per-device figure. */
  if (o->throughput == o->throughput && o->throughput > 0 && P->tp_global) {
    const char *u = o->tp_unit;
    if (o->batch_size == o->batch_size &&
        (strcmp(u, "samples/s") == 0 || strcmp(u, "images/s") == 0 ||
         strcmp(u, "sequences/s") == 0))
      o->tp_time = o->batch_size / o->throughput;
    else if (o->batch_tokens == o->batch_tokens &&
             (strcmp(u, "tokens/s") == 0 || strcmp(u, "words/s") == 0))
      o->tp_time = o->batch_tokens / o->throughput;
  }
  if (o->throughput != o->throughput && P->tp_low >= 0) {
    const trk_field *f = &L->f[P->tp_low];
    o->throughput = f->v;
    snprintf(o->tp_unit, sizeof(o->tp_unit), "%s",
             f->ki.unit ? f->ki.unit : "/s");
  }
  if (P->loss_i < 0 && P->avg_i >= 0) {
    P->loss_i = P->avg_i;
    o->loss_avg = 1;
  }
  /* Named terms and no whole loss ("act_loss ... cri_loss ...",
   * "l_pix ... l_percep ..."): the first term is the loss, the labelling
   * convention of the project's dev data (the actor's loss of an
   * actor-critic line, the first term of a restoration trainer's). */
  if (P->loss_i < 0)
    P->loss_i = P->part_i;
  if (P->loss_i < 0)
    P->loss_i = P->disc_i;
  if (P->loss_i >= 0) {
    o->loss = L->f[P->loss_i].v;
    o->loss_nonfinite = o->loss != o->loss;
    /* A nan printed as a metric ("loss: nan", "loss=nan.0") is a fact of
     * the step; in a sentence ("loss is nan") it is a warning's. */
    P->nonfinite_fact = o->loss_nonfinite && (L->f[P->loss_i].sep == ':' ||
                                              L->f[P->loss_i].sep == '=');
  }
  if (P->epoch_i >= 0) {
    o->epoch = L->f[P->epoch_i].v;
    if (L->f[P->epoch_i].kind == TK_FRAC)
      o->epoch_total = L->f[P->epoch_i].total;
  }
  if (P->bar.style != BAR_NONE) {
    o->bar_elapsed = P->bar.elapsed;
    if (P->bar.rate == P->bar.rate) {
      if (o->rate != o->rate) {
        o->rate = P->bar.rate;
        o->rate_sig = sig_digits(L, P->bar.rate_tok);
      }
      if (o->throughput != o->throughput) {
        o->throughput = P->bar.rate;
        snprintf(o->tp_unit, sizeof(o->tp_unit), "it/s");
      }
    }
  }

  /* Evaluation: words, qualified counters, or only validation losses. */
  if (P->has_eval_loss && P->loss_i < 0)
    P->eval = 1;
  if (P->train > 0)
    P->eval = 0;
}

/* The counter from a keyed field (step, iteration, batch, micro-batch)
 * or else the bar. */
static void keyed_counter(const trk_line *L, pstate *P, sm_track_sample *o) {
  /* The counter: keyed counters, bars, bracketed and bare fractions.  A
   * counter may be printed with a magnitude suffix ("step:50K"). */
  for (int i = 0; i < L->nf; i++) {
    const trk_field *f = &L->f[i];
    int role = f->ki.role, st = 0, c = 0;
    double scale = sm__trk_count_scale(f->unit);
    if ((f->ki.flags & KF_EVAL) || scale == 0)
      continue;
    switch (role) {
    case R_STEP:
      st = 6;
      c = SM_TC_STEP;
      break;
    case R_ITER:
      st = 5;
      c = SM_TC_ITER;
      break;
    case R_BATCH:
      st = 4;
      c = SM_TC_BATCH;
      break;
    case R_MICRO:
      st = 1;
      c = SM_TC_MICRO;
      break;
    default:
      break;
    }
    if (st > P->best && f->kind != TK_CLOCK &&
        set_counter(o, c, f->key, f->v * scale, f->total * scale, f->tok)) {
      P->best = st;
      o->coarse = scale > 1 && f->kind == TK_NUM;
    }
  }
  if (P->best < 4 && P->bar.style != BAR_NONE) {
    const trk_tok *t = &L->tok[P->bar.tok];
    if (set_counter(o, SM_TC_BATCH,
                    P->bar.style == BAR_TQDM    ? "tqdm"
                    : P->bar.style == BAR_KERAS ? "keras"
                                                : "bar",
                    t->v, t->kind == TK_FRAC ? t->total : NAN, P->bar.tok))
      P->best = 4;
  }
}

/* A counter from the line's positions where no key names one: an
 * (epoch, batch) pair, a bracketed step, bracketed fractions, a
 * bracketed epoch and batch, a bare fraction. */
static void positional_counter(const trk_line *L, pstate *P,
                               sm_track_sample *o) {
  {
    /* "[1,   100] loss: 2.173" (epoch and batch), "[5 :  96000] loss G :
     * 22.8" (an outer loop and its iteration), after a timestamp at
     * most. */
    int k = 0;
    while (k < L->ntok && L->tok[k].kind == TK_DATE)
      k++;
    if (P->best < 4 && k + 4 < L->ntok && punct_at(L, k, '[') &&
        L->tok[k + 1].kind == TK_NUM && L->tok[k + 1].isint &&
        L->tok[k + 1].unit[0] == '\0' &&
        (punct_at(L, k + 2, ',') || punct_at(L, k + 2, ':')) &&
        L->tok[k + 3].kind == TK_NUM && L->tok[k + 3].isint &&
        L->tok[k + 3].unit[0] == '\0' && punct_at(L, k + 4, ']') &&
        set_counter(o, SM_TC_BATCH, "pair", L->tok[k + 3].v, NAN, k + 3)) {
      P->best = 4;
      if (o->epoch != o->epoch)
        o->epoch = L->tok[k + 1].v;
    }
  }
  for (int i = 0; i + 1 < L->nf && P->best < 5; i++) {
    /* "[1000] train/loss=2.34, ...": a step alone in brackets before the
     * metrics (JAX/Flax metric writers), after only a logger prefix. */
    const trk_field *f = &L->f[i];
    if (f->ki.role != R_NONE)
      break;
    if (f->kind == TK_NUM && f->key[0] == '\0' && f->isint &&
        f->unit[0] == '\0' && punct_at(L, f->tok - 1, '[') &&
        punct_at(L, f->tok + 1, ']') && L->f[i + 1].ki.role != R_NONE &&
        L->f[i + 1].ki.role != R_IGNORE &&
        set_counter(o, SM_TC_ITER, "[step]", f->v, NAN, f->tok))
      P->best = 5;
  }
  {
    /* "[e][i/N]", and "[38/200], [54/604]": of two bracketed fractions the
     * first counts epochs, the second the batches of one. */
    int b1 = -1, b2 = -1;
    for (int i = 0; i < L->nf; i++) {
      const trk_field *f = &L->f[i];
      /* The first may carry a logger's words as its key ("DBNet INFO:
       * [38/200], [54/604]"); the second stands alone. */
      if (f->kind == TK_FRAC && f->bracket && !f->paren &&
          f->tok != P->bar.tok &&
          (f->key[0] == '\0' || (b1 < 0 && f->ki.role == R_NONE))) {
        if (b1 < 0)
          b1 = i;
        else if (b2 < 0)
          b2 = i;
      }
    }
    if (b2 < 0 && b1 >= 0 && L->f[b1].key[0] != '\0')
      b1 = -1; /* a keyed bracket alone is not a position */
    if (b2 < 0 && b1 > 0 && P->epoch_i < 0 && o->epoch != o->epoch) {
      /* "Train: 12 [ 100/1251 (8%)]" (timm), "Training: 3 [40/500]": a
       * number keyed by a word that names training, right before the
       * bracketed position, is the epoch. */
      const trk_field *e = &L->f[b1 - 1];
      size_t kl = strlen(e->key);
      int tw = (kl >= 5 && strcmp(e->key + kl - 5, "train") == 0) ||
               (kl >= 8 && strcmp(e->key + kl - 8, "training") == 0);
      if (e->ki.role == R_NONE && tw && e->kind == TK_NUM && e->isint &&
          e->unit[0] == '\0' && e->tok + 2 == L->f[b1].tok &&
          punct_at(L, e->tok + 1, '['))
        o->epoch = e->v;
    }
    if (b2 >= 0 && P->epoch_i < 0 && o->epoch != o->epoch) {
      o->epoch = L->f[b1].v;
      if (L->f[b1].kind == TK_FRAC)
        o->epoch_total = L->f[b1].total;
    }
    if (b2 >= 0 && P->best < 4 &&
        set_counter(o, SM_TC_BATCH, "bracket", L->f[b2].v, L->f[b2].total,
                    L->f[b2].tok)) {
      P->best = 4;
    } else if (b1 >= 0 && P->best < 4 &&
               set_counter(o, SM_TC_BATCH, "bracket", L->f[b1].v,
                           L->f[b1].total, L->f[b1].tok)) {
      P->best = 4;
    }
  }
  for (int i = 0; i + 1 < L->nf && P->best < 4; i++) {
    /* "Epoch: [399][50]" (SwAV, DINO-style loggers without a total): the
     * bracketed epoch, then the batch in its own brackets. */
    const trk_field *e = &L->f[i], *f = &L->f[i + 1];
    int k = e->tok;
    if (e->ki.role == R_EPOCH && e->kind == TK_NUM && e->bracket &&
        f->kind == TK_NUM && f->key[0] == '\0' && f->isint &&
        f->unit[0] == '\0' && f->tok == k + 3 && punct_at(L, k + 1, ']') &&
        punct_at(L, k + 2, '[') && punct_at(L, k + 4, ']') &&
        set_counter(o, SM_TC_BATCH, "bracket", f->v, NAN, f->tok))
      P->best = 4;
  }
  for (int i = 0; i < L->nf && P->best < 3; i++) {
    const trk_field *f = &L->f[i];
    if (f->kind == TK_FRAC && f->key[0] == '\0' && !f->bracket && !f->paren &&
        f->tok != P->bar.tok &&
        set_counter(o, SM_TC_FRACTION, "fraction", f->v, f->total, f->tok))
      P->best = 3;
  }
}

/* Metrics files of minimal trainers write one value a line, "<step>
 * <split> <value>" ("19071 train 3.0727", "19072 val 3.0316", "19072
 * hella 0.3032"): the middle word names the value.  A training row is
 * the training loss at that step; an evaluation row is evaluation (the
 * evaluation words mark it already); any other split is some metric and
 * no progress. */
static void metric_row(const trk_line *L, pstate *P, sm_track_sample *o) {
  const trk_tok *a, *w, *v;
  int k = 0;

  while (k < L->ntok && L->tok[k].kind == TK_DATE)
    k++;
  if (o->has_step || P->bar.style != BAR_NONE || L->ntok - k != 3)
    return;
  a = &L->tok[k];
  w = &L->tok[k + 1];
  v = &L->tok[k + 2];
  if (a->kind != TK_NUM || !a->isint || a->unit[0] != '\0' ||
      w->kind != TK_WORD || !w->sp || v->kind != TK_NUM || !v->sp ||
      v->unit[0] != '\0')
    return;
  if (!((w->len == 5 && strncmp(L->s + w->off, "train", 5) == 0) ||
        (w->len == 8 && strncmp(L->s + w->off, "training", 8) == 0)))
    return;
  if (set_counter(o, SM_TC_STEP, "row", a->v, NAN, k)) {
    o->loss = v->v;
    o->train_mark = o->train_named = 1;
  }
}

/* The counter's total printed elsewhere on the line. */
static void counter_total(const trk_line *L, pstate *P, sm_track_sample *o) {
  /* NeMo's bar "9000/301500 [...global_step=9e+3...]": the keyed counter
   * wins, and a fraction on the line that counts the same steps gives its
   * total. */
  if (o->has_step && !o->has_total &&
      (o->counter == SM_TC_BATCH ||
       (!(P->epoch_i >= 0 && L->f[P->epoch_i].v > 0) && !(o->epoch > 0)))) {
    /* Not past the first epoch for a global counter: a fraction of a
     * later epoch counts that epoch's batches, whatever its numerator.
     * An in-epoch position (a bar without a total whose description
     * prints "[659/661 (99%)]") counts the same loop in every epoch. */
    for (int k = 0; k < L->ntok; k++) {
      const trk_tok *t = &L->tok[k];
      if (t->kind != TK_FRAC || k == o->counter_tok || t->total < o->step ||
          !integral(t->total))
        continue;
      if (fabs(t->v - (double)o->step) <= 0.01 * (double)o->step) {
        o->has_total = 1;
        o->total = (long long)t->total;
        break;
      }
    }
  }
  /* "num_updates: 10 >= max_update: 10": a total printed beside the
   * counter under its own key. */
  if (o->has_step && !o->has_total && P->total_hint == P->total_hint &&
      P->total_hint >= (double)o->step && integral(P->total_hint)) {
    o->has_total = 1;
    o->total = (long long)P->total_hint;
  }
}

/* Marks of the line: another position besides the counter, training
 * named, a summary; an epoch's time is no step time. */
static void line_marks(const trk_line *L, pstate *P, sm_track_sample *o) {
  /* Does the line print a position in a loop besides its counter (an
   * unkeyed fraction, a bar, a batch index)?  fairseq's "epoch 036: 560 /
   * 644 ... num_updates=23100" does; its end-of-epoch summary "epoch 036 |
   * loss 3.39 | ... | num_updates 23184" does not. */
  if (o->has_step) {
    if (P->bar.style != BAR_NONE && P->bar.tok != o->counter_tok)
      o->pos_extra = 1;
    for (int i = 0; i < L->nf && !o->pos_extra; i++) {
      const trk_field *f = &L->f[i];
      if (f->tok == o->counter_tok || f->paren)
        continue;
      if ((f->kind == TK_FRAC && f->key[0] == '\0') ||
          (f->ki.role == R_BATCH && f->kind != TK_CLOCK))
        o->pos_extra = 1;
    }
  }

  o->train_mark = P->train > 0 || P->part_seen;
  o->train_named = P->train > 0;
  {
    int avg = 0, stats = 0;
    for (int i = 0; i < L->nfree; i++) {
      const trk_tok *t = &L->tok[L->free_tok[i]];
      avg |= sm__trk_is_average_word(L->s + t->off, t->len);
      stats |= sm__trk_is_stats_word(L->s + t->off, t->len);
    }
    o->summary = avg && stats;
    /* A line without a step that prints a figure of the whole run (HF's
     * final {'train_runtime': ..., 'train_loss': ...}) sums the run up:
     * its loss is the run's average. */
    for (int i = 0; i < L->nf && !o->summary; i++)
      if ((L->f[i].ki.flags & KF_RUN) && !o->has_step)
        o->summary = o->run_summary = 1;
  }
  /* A line that counts epochs and no step ("Epoch 12 | loss 0.31 | took
   * 152 s") prints the time of an epoch, unless its key or unit names a
   * step ("1.2 s/it", "step_time"). */
  if (!o->has_step && o->epoch == o->epoch && o->step_time == o->step_time &&
      !sm__trk_names_step(o->time_key))
    o->step_time = NAN;
}

/* The kind of the line from what was found (o->kind stays as
 * sample_init set it for a line that is none of them). */
static void line_kind(const trk_line *L, pstate *P, sm_track_sample *o) {
  if (phase_line(L, &P->bar)) {
    o->kind = SM_TK_PHASE;
    return;
  }
  if (P->init) {
    o->kind = SM_TK_INIT;
    return;
  }
  if (P->eval) {
    o->kind = SM_TK_EVAL;
    return;
  }
  /* A bar that finished within a second is a trivial loop, and a bar
   * without a rate or metrics says nothing yet. */
  if (P->bar.style == BAR_TQDM && o->counter == SM_TC_BATCH &&
      strcmp(o->counter_name, "tqdm") == 0) {
    if (o->has_total && o->step >= o->total && P->bar.elapsed < 1.0)
      return;
    /* So is every update of it that shows no training fact: one that
     * has run under a second and shows under a second left ("45/100
     * [00:00<00:00, 375it/s]", a preparation loop). */
    if (o->has_total && P->bar.elapsed < 1.0 && P->bar.left < 1.0 &&
        o->loss != o->loss && !P->nonfinite_fact)
      return;
    if (P->bar.rate != P->bar.rate && o->loss != o->loss && o->lr != o->lr)
      return;
  }
  {
    int facts = o->loss == o->loss || P->nonfinite_fact || o->lr == o->lr ||
                o->step_time == o->step_time || o->rate == o->rate ||
                o->throughput == o->throughput || o->cum_time == o->cum_time ||
                o->anon_time == o->anon_time;
    if (o->counter == SM_TC_FRACTION) {
      /* A bare "n/m" needs a named fact beside it. */
      facts = o->loss == o->loss || P->nonfinite_fact || o->lr == o->lr ||
              o->step_time == o->step_time || o->rate == o->rate ||
              o->throughput == o->throughput || o->cum_time == o->cum_time;
    }
    /* A keyed counter whose only training facts are loss terms
     * ("iter=0219 ... loss_critic=0.0000 loss_objective=9.5890", RL
     * trainers; "Iter 40 loss_cls 0.31 loss_bbox 0.12"): the terms show a
     * training step, though none of them is the loss reported. */
    if (P->part_seen && o->counter != SM_TC_FRACTION && !P->has_eval_loss)
      facts = 1;
    if (o->has_step) {
      if (facts || (o->has_total && o->counter != SM_TC_FRACTION)) {
        o->kind = SM_TK_SAMPLE;
        return;
      }
    } else if (o->loss == o->loss || P->nonfinite_fact ||
               o->step_time == o->step_time || o->rate == o->rate ||
               (P->part_seen && P->epoch_i >= 0 && !P->has_eval_loss)) {
      /* An epoch counter with loss terms only ("Epoch 3/100 box_loss
       * 0.05 cls_loss 0.3", a YOLO row whose bar was cut off): a
       * training epoch, no step and no loss. */
      o->kind = SM_TK_SAMPLE;
      return;
    }
  }
  /* "Epoch 113, global step 40128: 'val/accuracy' was not in top 1"
   * (Lightning's checkpoint callbacks): the epoch and the optimizer step
   * named together, no metrics. */
  if (o->has_step && o->counter == SM_TC_STEP && P->epoch_i >= 0 &&
      o->counter_tok != L->f[P->epoch_i].tok) {
    o->kind = SM_TK_POSITION;
    return;
  }
  /* "current step: 58036th step", "iteration: 1200", "Round 4999" (a
   * heading of one word and its number) on a line of its own: a step
   * counter alone, whose metrics are printed on the lines
   * around it ("batch loss: 0.0047" below).  Where the loop is, without
   * metrics of its own. */
  if (o->has_step && !o->has_total &&
      (o->counter == SM_TC_STEP || o->counter == SM_TC_ITER) && L->nf == 1 &&
      L->f[0].tok == o->counter_tok && L->f[0].kind == TK_NUM &&
      (L->f[0].sep == ':' || L->f[0].sep == '=' ||
       (L->f[0].sep == ' ' && L->nfree == 0 && L->f[0].nkw == 1)) &&
      L->f[0].unit[0] == '\0') {
    o->kind = SM_TK_POSITION;
    return;
  }
  /* "Epoch 3/10" alone, or an epoch bar. */
  if ((P->epoch_i >= 0 && L->nf == 1) || (P->epoch_bar && !o->has_step)) {
    o->kind = SM_TK_EPOCH_HEAD;
    return;
  }
}

/* The digits right after s[i..i+pl) = pre in t (case-insensitive), then
 * not a letter or digit: the step a checkpoint's name holds
 * ("global_step1971", "checkpoint-500/"); -1 when none. */
static long long named_step(const char *t, size_t n, const char *pre) {
  size_t pl = strlen(pre);

  for (size_t i = 0; i + pl < n; i++) {
    size_t j = i + pl;
    long long v = 0;
    if (strncasecmp(t + i, pre, pl) != 0 ||
        (i > 0 && isalnum((unsigned char)t[i - 1]) && pre[0] != '_' &&
         pre[0] != '-'))
      continue;
    if (!isdigit((unsigned char)t[j]))
      continue;
    while (j < n && isdigit((unsigned char)t[j]) && v < 1000000000000LL)
      v = v * 10 + (t[j++] - '0');
    if (j < n && isdigit((unsigned char)t[j]))
      return -1; /* more than 13 digits: no step, not a made-up one */
    if (j < n && isalpha((unsigned char)t[j]))
      continue;
    return v;
  }
  return -1;
}

/* A checkpoint being saved that names the step it holds, on a line that
 * is no sample (DeepSpeed's "Checkpoint global_step1971 is about to be
 * saved!", HF Trainer's "Saving model checkpoint to out/checkpoint-500",
 * "Saving checkpoint at step 5000"): where training was when it saved.
 * Not a checkpoint loaded (a restart's start-up).  The words and the
 * name prefixes are the table's ckpt, save, reload and ckname classes. */
static void checkpoint_save(const trk_line *L, sm_track_sample *o) {
  const char *t = L->s, *pre;
  size_t n = L->n;
  long long v = -1;
  int ckpt = 0, save = 0;

  /* "Saving ..." reads as start-up work: a save is not, here. */
  if ((o->kind != SM_TK_NONE && o->kind != SM_TK_INIT) || n < 12)
    return;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && isalpha((unsigned char)t[i - 1]))
      continue; /* words are matched at their start only */
    ckpt = ckpt || sm__trk_ckpt_word_at(t, n, i, TRK_CK_WORD);
    save = save || sm__trk_ckpt_word_at(t, n, i, TRK_CK_SAVE);
    if (sm__trk_ckpt_word_at(t, n, i, TRK_CK_LOAD))
      return;
  }
  if (!ckpt || !save)
    return;
  for (int k = 0; v < 0 && (pre = sm__trk_ckpt_name_prefix(k)) != NULL; k++)
    v = named_step(t, n, pre);
  /* "at step 5000", "iteration 12000": the line's own counter. */
  if (v < 0 && o->has_step &&
      (o->counter == SM_TC_STEP || o->counter == SM_TC_ITER))
    v = o->step;
  if (v < 0)
    return;
  o->kind = SM_TK_CKPT;
  o->ckpt_step = v;
}

/* A stepless line whose text starts with a lone '*' before its first
 * value, after any logger prefix: the summary marker of the ImageNet
 * example's family (" * Acc@1 76.1 Acc@5 92.8", " * Prec@1 ...", Swin's
 * and DeiT's " * Train Acc 99.5 Train Loss 0.017"): the figures are the
 * loop's averages, not a step's.  A rule of stars ("*****") is not one.
 * Only a line read as a sample is marked (an evaluation summary stays
 * evaluation, and never announces the line after it). */
static void star_summary(const trk_line *L, sm_track_sample *o) {
  int first = L->ntok;

  if (o->kind != SM_TK_SAMPLE || o->has_step || L->nf == 0)
    return;
  /* Before the first figure that means something (a logger's clock or
   * source line is none). */
  for (int i = 0; i < L->nf && first == L->ntok; i++)
    if (L->f[i].ki.role != R_NONE)
      first = L->f[i].tok;
  for (int k = 0; k < first && k < L->ntok; k++) {
    const trk_tok *t = &L->tok[k];
    size_t e = t->off + 1;
    if (t->kind != TK_PUNCT || t->c != '*')
      continue;
    if ((t->off == 0 || L->s[t->off - 1] == ' ' || L->s[t->off - 1] == '\t') &&
        e + 1 < L->n && L->s[e] == ' ' && isalpha((unsigned char)L->s[e + 1]))
      o->summary = 1;
    return;
  }
}

/* A line that prints only an integer and a fraction, no key, no word
 * (after its logger prefix): "[Mar 29, 16:34:28] 1016 5.2992", a
 * print(step, loss) of a custom loop.  The step and, tentatively, the
 * loss; the reader takes it for a sample only inside a run of such lines
 * whose steps advance by one stride. */
static void bare_pair(const trk_line *L, sm_track_sample *o) {
  const trk_field *a = &L->f[0], *b = &L->f[1];

  if (o->kind != SM_TK_NONE || L->nf != 2 || L->nfree != 0 || a->key[0] ||
      b->key[0] || a->kind != TK_NUM || b->kind != TK_NUM || !a->isint ||
      b->isint || a->unit[0] || b->unit[0] || a->paren || b->paren ||
      a->bracket || b->bracket || !(b->v == b->v) || isinf(b->v) ||
      !set_counter(o, SM_TC_FRACTION, "bare", a->v, NAN, a->tok))
    return;
  o->loss = b->v;
  o->bare_pair = 1;
  o->kind = SM_TK_SAMPLE;
}

void sm__trk_parse(trk_line *L, const char *seg, size_t n, const trk_head *head,
                   sm_track_sample *o, trk_head *head_out) {
  pstate P = {0};

  P.loss_i = P.avg_i = P.part_i = P.disc_i = P.epoch_i = P.tp_low = -1;
  P.tp_global = 1;
  P.total_hint = NAN;
  sample_init(o);
  sm__trk_lex(L, seg, n);
  o->ts = L->ts;
  if (table_head(L, head_out)) {
    o->kind = SM_TK_TABLE_HEAD;
    o->n_cols = head_out ? head_out->n : 0;
    return;
  }
  if (head != NULL && head->n >= 2)
    o->table_row = map_row(L, head);
  read_fields(L, &P, o);
  line_bar(L, &P, o);
  startup_or_eval(L, &P);
  field_facts(L, &P, o);
  settle_facts(L, &P, o);
  o->time_bare = bare_time(L, o);
  keyed_counter(L, &P, o);
  positional_counter(L, &P, o);
  metric_row(L, &P, o);
  counter_total(L, &P, o);
  line_marks(L, &P, o);
  line_kind(L, &P, o);
  star_summary(L, o);
  if (head == NULL || head->n < 2)
    bare_pair(L, o);
  checkpoint_save(L, o);
}

void sm_track_parse(const char *seg, size_t n, sm_track_sample *out) {
  static _Thread_local trk_line L;

  sm__trk_parse(&L, seg, n, NULL, out, NULL);
}
