/* tracker.c - the Metric Tracker: reading a log newest-first, replaying
 * its tail, following it as it grows, and the JSON answer.
 *
 * A scan reads lines backwards from the end of the file (sm_revlines),
 * cleans each carriage-return segment, classifies it and parses the
 * progress lines, counting the distinct samples of each counter.  It
 * stops as soon as the main counter has N of them (plus a few lines of
 * context above, where epoch and table heads live), or when the
 * look-back budget is spent: the cost depends on the log's recent
 * output, not on its size.  The tail found that way is then replayed in
 * file order through the same steps, with the context that only a
 * forward reading has (the last "Epoch 3/10" head, the column names of a
 * table), into the sample window (window.c).
 *
 * Following a file continues that forward replay with the bytes appended
 * since, noticing truncation (the size drops below the offset read) and
 * rotation (another inode at the path). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "track_int.h"

extern const sm_protoset sm__protoset_tracker;

const sm_protoset *sm_track_protoset(void) {
  return &sm__protoset_tracker;
}

const char *sm_track_class_name(int cls) {
  static const char *const names[SM_TRACK_NCLASSES] = {
      "progress", "eval", "init", "warning", "error", "info"};
  return cls >= 0 && cls < SM_TRACK_NCLASSES ? names[cls] : "unknown";
}

#define MAX_LINE ((size_t)1 << 20) /* longest line kept whole */
#define SEG_MAX TRK_MAX_INPUT      /* bytes of a segment looked at */
#define READ_CHUNK ((size_t)64 << 10)
#define MARGIN_LINES 64 /* context lines read above the window */
#define MARGIN_BYTES ((uint64_t)256 << 10)
#define EPOCH_SEEK 512 /* lines read above for an epoch head at most */
#define EPOCH_SEEK_BYTES ((uint64_t)64 << 10) /* and bytes */
/* Lines and bytes read above for the newest training loss at most, when
 * the counter followed prints none (a bar beside loss dicts printed
 * every few hundred steps). */
#define LOSS_SEEK 8192
#define LOSS_SEEK_BYTES ((uint64_t)2 << 20)
/* Bytes at the start of the log read for the batch size its start-up
 * output announces, when the answer needs it (a throughput without a
 * step time). */
#define HEAD_BYTES ((uint64_t)64 << 10)
#define SEEN_SLOTS                                                             \
  16384 /* distinct samples counted while                                      \
         * scanning backwards */

struct sm_tracker {
  sm_track_opts o;  /* options with defaults filled in */
  sm_linecls *cls;  /* the coarse filter */
  int cls_progress; /* class indexes in the prototype set */
  int cls_eval;
  trk_line *L;          /* parser scratch */
  trk_window win;       /* kept samples */
  trk_head head;        /* column names of the last table head */
  double ctx_epoch;     /* epoch of the last epoch head */
  int epoch_seq;        /* epoch heads seen */
  sm_rfile f;           /* the followed file */
  int open;             /* f is open */
  char *path;           /* its path */
  uint64_t off;         /* next byte to read */
  sm_buf part;          /* bytes of an unfinished segment */
  int skipping;         /* the unfinished segment was too long */
  uint64_t lines;       /* lines read */
  int scan_limited;     /* the last scan ran out of budget */
  sm_track_result last; /* the last answer reported */
  char sig[32];         /* the last bytes read, up to off */
  size_t sig_len;       /* how many of them */
  int eval_seq;         /* evaluation lines and phases seen */
  int eval_loop;        /* an evaluation loop printed its progress and no
                         * training sample followed yet */
  int summary_next;     /* the next sample is an epoch summary */
  int in_block;         /* inside a block of figures under a banner */
  int in_vrec;          /* inside a record of a vertical metric table */
  trk_vrec vrec;        /* its rows so far */
  trk_vheld vheld;      /* the record's rows as printed, held back */
  int vprov;            /* the window's records from vprov_from on
                         * came from a record not closed yet (the
                         * end of a scan): replaced when it is */
  uint64_t vprov_from;
  uint64_t vkv_keys;          /* keys of the last "key: value" record, or 0 */
  uint64_t vkv_pre[TRK_VPRE]; /* its hash after each of its first rows */
  int vkv_rows;               /* its rows */
  double head_bsz;            /* the batch size the start-up output announced */
  int head_bsz_conflict;      /* it announced more than one */
  int phase;                  /* a loop that is not training was announced */
  uint32_t phase_loop; /* the loop it announced, once seen (0: not yet) */
  uint64_t phase_sig;  /* hash of the last announcement's text */
  int phase_again;     /* the announcement repeats the one before it: it
                        * is printed by each step of the loop ("... for
                        * open-end generation.") */
  uint32_t loops[16];  /* loops (series and total) seen, newest last */
  int nloops;
  uint64_t text_bytes;   /* bytes of text segments looked at */
  uint64_t other_bytes;  /* bytes of segments that are not text */
  int prov;              /* the newest record came from an unfinished
                          * segment (it is replaced when that ends) */
  uint64_t prov_seq;     /* its sequence */
  long long bare[2];     /* steps of the last two bare pairs replayed */
  int nbare;             /* how many of them are set (0..2) */
  int bare_ok;           /* the verdict on the last of them */
  trk_bare bv;           /* the values of their run */
  int bare_head;         /* a head nearby named a metric that is no loss */
  int head_fresh;        /* an epoch head was replayed and no sample
                          * since: start-up output now makes it stale */
  int start_kinds;       /* start-up output (TRK_START_*) met since the
                          * newest sample */
  long long resume_step; /* the step the newest resume named, or -1 */
  char seg[SEG_MAX + 1]; /* cleaned segment */
};

sm_tracker *sm_tracker_new(const sm_track_opts *opts) {
  sm_tracker *t = sm_calloc(1, sizeof(*t));

  if (t == NULL)
    return NULL;
  if (opts)
    t->o = *opts;
  if (t->o.samples <= 0)
    t->o.samples = SM_TRACK_DEFAULT_SAMPLES;
  if (t->o.samples > TRK_RING / 4)
    t->o.samples = TRK_RING / 4;
  if (t->o.max_scan == 0)
    t->o.max_scan = SM_TRACK_DEFAULT_MAX_SCAN;
  if (t->o.protos == NULL)
    t->o.protos = &sm__protoset_tracker;
  t->f.fd = -1;
  t->ctx_epoch = NAN;
  t->resume_step = -1;
  sm_buf_init(&t->part, MAX_LINE + 1);
  t->cls = sm_linecls_new(t->o.protos);
  t->L = sm_malloc(sizeof(trk_line));
  if (t->cls == NULL || t->L == NULL || sm__trk_window_init(&t->win) != 0) {
    sm_tracker_free(t);
    return NULL;
  }
  t->cls_progress = sm_protoset_class(t->o.protos, "progress");
  t->cls_eval = sm_protoset_class(t->o.protos, "eval");
  return t;
}

void sm_tracker_free(sm_tracker *t) {
  if (t == NULL)
    return;
  if (t->open)
    sm_rfile_close(&t->f);
  sm_free(t->path);
  sm_buf_release(&t->part);
  sm__trk_window_release(&t->win);
  sm_linecls_free(t->cls);
  sm_free(t->L);
  sm_free(t);
}

static void reset_state(sm_tracker *t) {
  sm__trk_window_clear(&t->win);
  memset(&t->head, 0, sizeof(t->head));
  t->ctx_epoch = NAN;
  t->epoch_seq = 0;
  sm_buf_reset(&t->part);
  t->skipping = 0;
  t->lines = 0;
  t->scan_limited = 0;
  t->eval_seq = 0;
  t->eval_loop = 0;
  t->summary_next = 0;
  t->in_block = 0;
  t->in_vrec = 0;
  sm__trk_vrec_reset(&t->vrec);
  t->vheld.n = 0;
  t->vheld.len = 0;
  t->vprov = 0;
  t->vkv_keys = 0;
  t->vkv_rows = 0;
  memset(t->vkv_pre, 0, sizeof(t->vkv_pre));
  t->head_bsz = NAN;
  t->head_bsz_conflict = 0;
  t->phase = 0;
  t->phase_loop = 0;
  t->nbare = 0;
  memset(&t->bv, 0, sizeof(t->bv));
  t->bare_head = 0;
  t->phase_sig = 0;
  t->phase_again = 0;
  t->nloops = 0;
  t->text_bytes = t->other_bytes = 0;
  t->prov = 0;
  t->start_kinds = 0;
  t->resume_step = -1;
  t->head_fresh = 0;
}

void sm_tracker_reset(sm_tracker *t) {
  reset_state(t);
}

/* ==== One segment ==== */

/* Whether a parsed sample of a line of class cls is training progress.
 * The classifier says so; or it says evaluation of a line that also
 * names training explicitly: its clock ("step:3375/3375 val_loss:3.27
 * train_time:1633s step_avg:478ms" tells where training is, even if its
 * loss is a validation loss, which is never used) or a training loss
 * beside a validation one ("epoch 3: train loss 0.41, val loss 0.52");
 * or a table row, judged by its head; or the line is a near
 * miss: progress scores within ACCEPT_MARGIN of the winning class.  The
 * classifier is a coarse filter; the fine parse has already checked that
 * the line carries a counter or a loss and none of the evaluation or
 * start-up marks. */
#define ACCEPT_MARGIN 0.1f
#define ACCEPT_FLOOR 0.3f /* a near miss still resembles progress */

static int accept(sm_tracker *t, int cls, const sm_track_sample *s,
                  const char *seg, size_t m) {
  float sc[SM_TRACK_NCLASSES + 8], best = -2.0f;

  if (s->kind != SM_TK_SAMPLE)
    return 0;
  if (cls == t->cls_progress || s->table_row || s->bare_pair)
    return 1; /* a row is judged by the head that names its columns, a
               * bare pair by the run it is in */
  if (cls == t->cls_eval && (s->train_clock > 0 || s->train_named))
    return 1;
  if (t->o.protos->n_classes > (int)SM_ARRAY_LEN(sc) || t->cls_progress < 0)
    return 0;
  sm_linecls_scores(t->cls, seg, m, sc);
  for (int i = 0; i < t->o.protos->n_classes; i++)
    if (sc[i] > best)
      best = sc[i];
  return sc[t->cls_progress] >= best - ACCEPT_MARGIN &&
         sc[t->cls_progress] >= ACCEPT_FLOOR;
}

/* Whether a line the classifier did not call progress can still matter:
 * a sample (near miss) or an epoch head has digits; a table head names
 * an epoch or a loss; an announcement of evaluation or feature
 * extraction is classified as evaluation or start-up. */
static int worth_parsing(sm_tracker *t, int cls, const char *s, size_t m) {
  int words = 0;

  if (cls == t->cls_progress || cls == t->cls_eval)
    return 1;
  for (size_t i = 0; i < m; i++)
    if (s[i] >= '0' && s[i] <= '9')
      return 1;
  /* A phase word among the first words ("Extracting features ..."), or
   * a known key among the first words of a line without numbers: a
   * table head ("Epoch GPU_mem box_loss", "epoch train_loss valid_loss
   * time", "it mse lr time"). */
  for (size_t i = 0; i < m && words < 16;) {
    size_t j = i;
    while (j < m && (((s[j] | 32) >= 'a' && (s[j] | 32) <= 'z') ||
                     s[j] == '_' || s[j] == '/'))
      j++;
    if (j > i) {
      char key[TRK_KEY_MAX];
      size_t n = j - i < sizeof(key) - 1 ? j - i : sizeof(key) - 1;
      trk_keyinfo ki;
      if (words < 6 && sm__trk_is_phase_word(s + i, j - i))
        return 1;
      for (size_t q = 0; q < n; q++)
        key[q] = (char)((s[i + q] >= 'A' && s[i + q] <= 'Z') ? s[i + q] + 32
                                                             : s[i + q]);
      key[n] = '\0';
      sm__trk_key_lookup(key, &ki);
      if (ki.role != R_NONE)
        return 1;
      words++;
      i = j;
    } else {
      i++;
    }
  }
  return 0;
}

/* ==== Text or not ==== */

/* Whether raw bytes look like log text: valid UTF-8 and printable, with
 * a little slack (a stray invalid byte does not make a progress line
 * binary).  NUL bytes do not decide (a crashed writer leaves runs of
 * them before the text of the next run; the cleaner drops them), but
 * they are not text either.  Adds the bytes to the tracker's text or
 * other count and returns 1 for text. */
static int text_like(sm_tracker *t, const unsigned char *s, size_t n) {
  size_t bad = 0, real = 0, nul = 0;

  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c == 0) {
      nul++;
      i++;
      continue;
    }
    real++;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != 0x1b) || c == 0x7f)
        bad++;
      i++;
      continue;
    }
    {
      size_t need = c >= 0xf0 && c < 0xf5   ? 3
                    : c >= 0xe0 && c < 0xf0 ? 2
                    : c >= 0xc2 && c < 0xe0 ? 1
                                            : 0;
      size_t k = 1;
      if (need == 0) {
        bad++;
        i++;
        continue;
      }
      while (k <= need && i + k < n && (s[i + k] & 0xc0) == 0x80)
        k++;
      if (k <= need) {
        bad++;
        i++;
        continue;
      }
      real += need;
      i += need + 1;
    }
  }
  if (real > 0 && bad * 4 <= real) {
    t->text_bytes += real - bad;
    t->other_bytes += bad;
    return 1;
  }
  t->other_bytes += n - nul; /* NUL padding is neither */
  return 0;
}

/* ==== Segments ==== */

/* A byte after which the terminal writes over what the line showed: a
 * carriage return (tqdm, Keras' bars updated in place) or a backspace
 * (Keras' progress bar under a notebook or a pseudo-terminal erases the
 * previous update with backspaces).  Each ends a segment. */
static int overwrite(char c) {
  return c == '\r' || c == '\b';
}

/* The last overwrite byte in s[0..n), or NULL.  Scans back only to it,
 * so that splitting a line into its segments is linear in the line. */
static const char *last_overwrite(const char *s, size_t n) {
  while (n > 0) {
    if (overwrite(s[n - 1]))
      return s + n - 1;
    n--;
  }
  return NULL;
}

/* ==== Pieces of a segment ==== */

static int digit(char c) {
  return c >= '0' && c <= '9';
}

/* When s[i] opens a progress bar's bracket ("[00:12<02:31, 3.05it/s,
 * loss=0.4]", "[14:22, 2.68it/s]": a clock, then '<' or a rate), the
 * offset just past its closing bracket; else 0. */
static size_t bar_bracket_end(const char *s, size_t n, size_t i) {
  size_t j = i + 1, e = n < i + 512 ? n : i + 512;
  int parts = 0, depth = 0, rate = 0;

  for (;;) {
    size_t d = j;
    while (j < e && digit(s[j]))
      j++;
    if (j == d || (parts > 0 && j - d != 2))
      return 0;
    parts++;
    if (j < e && s[j] == ':' && parts < 3)
      j++;
    else
      break;
  }
  if (parts < 2 || j >= e || (s[j] != '<' && s[j] != ','))
    return 0;
  rate = s[j] == '<';
  for (; j < e; j++) {
    if (s[j] == '/')
      rate = 1;
    else if (s[j] == '[')
      depth++;
    else if (s[j] == ']' && depth-- == 0)
      return rate ? j + 1 : 0;
  }
  return 0;
}

/* A segment is split further where the terminal moved the cursor to
 * another line (ESC[A, ESC[nA, ESC[F: tqdm's nested bars, a bar glued to
 * the log line that overwrote it), and where another writer's output
 * follows a progress bar's closing bracket on the same line (a bar never
 * prints after it, so "... 7.03s/it]{'eval_loss': 0.51}" is a bar and a
 * line of its own).  Returns the pieces' bounds in b[] (start, end
 * pairs; at most max pieces, the rest joined into the last). */
static int split_pieces(const char *s, size_t n, size_t *b, int max) {
  int np = 0;
  size_t start = 0, i = 0;

  while (i < n) {
    const char *esc = memchr(s + i, 0x1b, n - i);
    const char *br = memchr(s + i, '[', (esc ? (size_t)(esc - s) : n) - i);
    size_t k;
    if (br != NULL) {
      size_t e = bar_bracket_end(s, n, (size_t)(br - s)), f = e;
      while (e > 0 && f < n && (s[f] == ' ' || s[f] == '\t'))
        f++;
      if (e > 0 && f < n && s[f] != 0x1b && np + 1 < max) {
        b[2 * np] = start;
        b[2 * np + 1] = e;
        np++;
        start = i = f;
        continue;
      }
      i = (size_t)(br - s) + 1;
      continue;
    }
    if (esc == NULL)
      break;
    i = (size_t)(esc - s);
    k = i + 1;
    if (k < n && s[k] == '[') {
      k++;
      while (k < n && s[k] >= '0' && s[k] <= '9')
        k++;
      if (k < n && (s[k] == 'A' || s[k] == 'F') && np + 1 < max) {
        b[2 * np] = start;
        b[2 * np + 1] = i;
        np++;
        start = k + 1;
        i = k + 1;
        continue;
      }
    }
    i++;
  }
  b[2 * np] = start;
  b[2 * np + 1] = n;
  return np + 1;
}

/* The pieces of a segment (split_pieces), and another writer's record
 * glued to the end of a line (glued.c) as a piece of its own. */
static int pieces(const char *s, size_t n, size_t *b, int max) {
  size_t w = sm__trk_glued_record(s, n);
  int np;

  if (w == 0 || max < 2)
    return split_pieces(s, n, b, max);
  np = split_pieces(s, w, b, max - 1);
  b[2 * np] = w;
  b[2 * np + 1] = n;
  return np + 1;
}

#define MAX_PIECES 16

/* The loop a sample belongs to: its counter and the total it counts to. */
static uint32_t loop_id(const sm_track_sample *s) {
  uint32_t id = sm__trk_series(s);
  if (id == 0)
    return 0;
  return (uint32_t)sm_hash_mix(
             id ^ ((uint64_t)(s->has_total ? s->total : -1) << 20)) |
         1u;
}

static int loop_seen(const sm_tracker *t, uint32_t id) {
  for (int i = 0; i < t->nloops; i++)
    if (t->loops[i] == id)
      return 1;
  return 0;
}

static void loop_remember(sm_tracker *t, uint32_t id) {
  if (id == 0 || loop_seen(t, id))
    return;
  if (t->nloops == (int)SM_ARRAY_LEN(t->loops)) {
    memmove(t->loops, t->loops + 1, sizeof(t->loops) - sizeof(t->loops[0]));
    t->nloops--;
  }
  t->loops[t->nloops++] = id;
}

/* Whether a sample shows training itself: a loss (also nan), a learning
 * rate, or a key that names training. */
static int strong_sample(const sm_track_sample *s) {
  return s->loss == s->loss || s->loss_nonfinite || s->lr == s->lr ||
         s->train_mark;
}

/* The line read last prints a position in a loop ("230/242"). */
static int has_position(const trk_line *L) {
  for (int i = 0; i < L->nf; i++)
    if (L->f[i].kind == TK_FRAC)
      return 1;
  return 0;
}

/* A counter-less loss below an evaluation loop's progress line, before
 * any training sample ("sim_loss  0.65 (0.70)" after "Test: [230/242]
 * ... Loss 4.1"), is that loop's output: unless it names training or
 * an epoch (an epoch-level line is a loop of its own). */
static int eval_output(sm_tracker *t, const sm_track_sample *smp) {
  if (smp->has_step || smp->train_named) {
    t->eval_loop = 0;
    return 0;
  }
  return t->eval_loop && smp->epoch != smp->epoch;
}

/* Where each step of a loop prints its announcement, the newest samples,
 * while they are updates of the same loop without a training fact, are
 * the end of an earlier run of that loop or its first update (the window
 * began after its announcements): not training either. */
static void drop_remnant(sm_tracker *t, uint32_t id) {
  if (!t->phase_again)
    return;
  while (t->win.count > 0) {
    const trk_rec *r = &t->win.rec[(t->win.head + TRK_RING - 1) % TRK_RING];
    if (loop_id(&r->s) != id || strong_sample(&r->s))
      return;
    sm__trk_window_pop(&t->win, r->seq);
  }
}

/* A non-training phase ("Extracting features for train set...") covers
 * the loop that starts right after it (its first sample at its first
 * position or within the first 5 % of its total),
 * when that loop is new and shows no training (no loss, no learning
 * rate); a sample that shows training, a loop seen before the
 * announcement or not at its start, another loop after the covered one,
 * or an epoch head ends it; an announcement repeated by each step
 * ("... for open-end generation.") covers its loop wherever the window
 * starts in it.  Returns 1 when the sample belongs to the phase. */
static int in_phase(sm_tracker *t, const sm_track_sample *s) {
  uint32_t id = loop_id(s);

  if (!t->phase)
    return 0;
  if (strong_sample(s) || id == 0) {
    t->phase = 0;
    return 0;
  }
  /* At its start: its first position, or within the first 5 % of its
   * total (a loop logged every few batches: "[ 10/782]"). */
  if (t->phase_loop == 0 && !loop_seen(t, id) &&
      (s->step <= 1 || (s->has_total && s->step * 20 <= s->total))) {
    t->phase_loop = id;
    drop_remnant(t, id);
    return 1;
  }
  /* An announcement each step prints names the loop wherever the
   * window starts in it. */
  if (t->phase_loop == 0 && t->phase_again) {
    t->phase_loop = id;
    drop_remnant(t, id);
    return 1;
  }
  if (t->phase_loop == id)
    return 1;
  t->phase = 0;
  return 0;
}

/* A bare "STEP VALUE" pair is a sample only as the third or later of a
 * run whose steps advance by one stride ("0 6.25", "1 6.25", "2 6.24"),
 * under no head that names another metric and with values that are not
 * an accuracy's (bare.c);
 * a step that goes back starts a new run, and the same step again (an
 * unfinished line replayed when it ends) keeps its verdict.  Other
 * samples pass. */
static int bare_run(sm_tracker *t, const sm_track_sample *s) {
  long long d;

  if (!s->bare_pair)
    return 1;
  if (t->nbare > 0 && s->step == t->bare[1])
    return t->bare_ok;
  if (t->nbare > 0 && s->step < t->bare[1])
    t->nbare = 0;
  sm__trk_bare_value(&t->bv, t->nbare == 0, s->loss);
  d = s->step - t->bare[1];
  /* A head that names an accuracy-like metric, or values that rise in
   * [0, 1]: a table or a print(step, accuracy), not a loss. */
  t->bare_ok = t->nbare == 2 && d > 0 && d == t->bare[1] - t->bare[0] &&
               !t->bare_head && !sm__trk_bare_metric_like(&t->bv);
  t->bare[0] = t->bare[1];
  t->bare[1] = s->step;
  if (t->nbare < 2)
    t->nbare++;
  return t->bare_ok;
}

/* Notes the start-up output (TRK_START_*) a line that is no sample
 * shows after the newest sample; returns its kinds. */
static int note_startup(sm_tracker *t, const char *seg, size_t m) {
  long long at;
  int k;

  if (t->win.count == 0)
    return 0;
  k = sm__trk_startup_mark(seg, m, &at);
  t->start_kinds |= k;
  if (k && at >= 0)
    t->resume_step = at;
  return k;
}

/* Whether the held rows have room for one more of m bytes. */
static int vroom(const sm_tracker *t, size_t m) {
  return t->vheld.n < TRK_VHOLD && m <= sizeof(t->vheld.text) - t->vheld.len;
}

/* Holds a row of the record back as printed (replayed line by line
 * when the record turns out not to be one); vroom said it fits. */
static void vhold(sm_tracker *t, const char *seg, size_t m, int cls, int rank) {
  trk_vheld *h = &t->vheld;

  memcpy(h->text + h->len, seg, m);
  h->off[h->n] = (uint16_t)h->len;
  h->olen[h->n] = (uint16_t)m;
  h->cls[h->n] = cls;
  h->rank[h->n] = rank;
  h->len += m;
  h->n++;
}

/* Removes the window's records of a record replayed before it was
 * closed (see vprov). */
static void drop_record_prov(sm_tracker *t) {
  trk_window *w = &t->win;

  while (t->vprov && w->count > 0 &&
         w->rec[(w->head + TRK_RING - 1) % TRK_RING].seq >= t->vprov_from)
    sm__trk_window_pop(w, w->rec[(w->head + TRK_RING - 1) % TRK_RING].seq);
  t->vprov = 0;
}

static void replay_piece(sm_tracker *t, const char *seg, size_t m, int cls,
                         int unfinished, int rank);

/* The rows held back replayed one by one, as the lines they are (a
 * record that a line of another shape broke, or one printed once). */
static void replay_held(sm_tracker *t, int unfinished) {
  trk_vheld h = t->vheld;

  t->vheld.n = 0;
  t->vheld.len = 0;
  for (int i = 0; i < h.n; i++)
    replay_piece(t, h.text + h.off[i], h.olen[i], h.cls[i], unfinished,
                 h.rank[i]);
}

/* A vertical table's record (RL loggers: "| total_timesteps | 2048 |"
 * rows between rules) or a print loop's ("key: value" rows between
 * rules): its rows are held and, when the closing rule comes, joined and
 * read as one line.  A print loop's record is read only where the one
 * before it had the same keys; a record printed once (a configuration
 * dump, a heading framed by rules) and a record that a line of another
 * shape breaks are replayed line by line, as if no rule had been seen.
 * 1 when the piece was taken here. */
static int record_piece(sm_tracker *t, const char *seg, size_t m, int cls,
                        int unfinished, int rank) {
  trk_vcell k, v;

  /* A piece not ended yet (the last bytes of a scan) is read as a line
   * for now: it comes again, whole, when it ends, and only then joins or
   * breaks a record. */
  if (unfinished)
    return 0;
  if (sm__trk_vrule(seg, m)) {
    drop_record_prov(t);
    if (t->in_vrec && t->vrec.rows > 0) {
      char line[sizeof(t->vrec.text)];
      size_t n = t->vrec.len;
      /* Its closing rule opens the next record. */
      int kv = t->vrec.kv, again = kv && t->vrec.keys == t->vkv_keys;
      if (kv) {
        t->vkv_keys = t->vrec.keys;
        t->vkv_rows = t->vrec.rows;
        memcpy(t->vkv_pre, t->vrec.pre, sizeof(t->vkv_pre));
      }
      memcpy(line, t->vrec.text, n + 1);
      sm__trk_vrec_reset(&t->vrec);
      t->in_vrec = 0;
      if (!kv || again) {
        t->vheld.n = 0;
        t->vheld.len = 0;
        replay_piece(t, line, n, t->cls_progress, unfinished, rank);
      } else {
        replay_held(t, unfinished);
      }
      t->in_vrec = kv;
      return 1;
    }
    replay_held(t, unfinished);
    sm__trk_vrec_reset(&t->vrec);
    t->in_vrec = 1;
    return 1;
  }
  /* A record longer than the rows held is no record read here: it
   * breaks, and its rows are lines. */
  if (t->in_vrec && !t->vrec.kv && vroom(t, m) &&
      sm__trk_vrow(seg, m, &k, &v)) {
    drop_record_prov(t);
    sm__trk_vrec_row(&t->vrec, seg, &k, &v);
    vhold(t, seg, m, cls, rank);
    return 1;
  }
  if (t->in_vrec && (t->vrec.kv || t->vrec.rows == 0) && vroom(t, m) &&
      (sm__trk_vkv(seg, m, &k, &v) ||
       (t->vrec.rows == 0 && sm__trk_vheading(seg, m, &k, &v)))) {
    drop_record_prov(t);
    sm__trk_vrec_kv(&t->vrec, seg, &k, &v);
    vhold(t, seg, m, cls, rank);
    return 1;
  }
  if (t->in_vrec) {
    /* Another line inside: no record; its rows are lines. */
    drop_record_prov(t);
    if (t->vrec.kv && t->vrec.rows > 0)
      t->vkv_keys = 0;
    t->in_vrec = 0;
    sm__trk_vrec_reset(&t->vrec);
    replay_held(t, unfinished);
  }
  return 0;
}

/* The log ends inside a record that no rule closed yet: a print loop's
 * is read where its keys so far begin the keys of the record before,
 * else its rows are read as lines.  Either is provisional: the next row,
 * the closing rule or a line that breaks the record replaces it. */
static void record_tail(sm_tracker *t) {
  const trk_vrec *r = &t->vrec;
  trk_vheld rows;
  char line[sizeof(r->text)];

  if (!t->in_vrec || r->rows == 0 || t->vprov)
    return;
  rows = t->vheld;
  memcpy(line, r->text, r->len + 1);
  t->vprov_from = t->win.next_seq;
  t->in_vrec = 0;
  if (t->vkv_keys != 0 && r->kv && r->rows <= t->vkv_rows &&
      r->rows <= TRK_VPRE && r->pre[r->rows - 1] == t->vkv_pre[r->rows - 1])
    replay_piece(t, line, r->len, t->cls_progress, 0, -1);
  else
    replay_held(t, 0);
  t->vheld = rows;
  t->in_vrec = 1;
  t->vprov = 1;
}

/* Replays one cleaned piece of class cls in file order; unfinished says
 * the piece was not ended yet (its record is replaced when it is). */
static void replay_piece(sm_tracker *t, const char *seg, size_t m, int cls,
                         int unfinished, int rank) {
  sm_track_sample smp;
  trk_head hd;

  /* A head of a few words naming a metric (or a loss) rules on the bare
   * pairs that follow it. */
  int h = sm__trk_metric_head(seg, m);

  if (h != 0)
    t->bare_head = h > 0;
  if (record_piece(t, seg, m, cls, unfinished, rank))
    return;
  /* A banner over a block of figures, one per line (HF's "***** train
   * metrics *****" then "  train_loss = 1.42", "  epoch = 3.0"): the
   * figures sum the run or an evaluation up; they are no step, no loss
   * and no epoch head. */
  if (sm__trk_block_banner(seg, m)) {
    t->in_block = 1;
    return;
  }
  /* The run's start-up output after an epoch head and before any
   * sample: the head was a configuration's ("epoch = 30" in an argument
   * dump) or another run's, and the epoch is unknown. */
  if (t->head_fresh) {
    long long at;
    if (sm__trk_startup_mark(seg, m, &at) != 0) {
      t->ctx_epoch = NAN;
      t->head_fresh = 0;
    }
  }
  if (!worth_parsing(t, cls, seg, m)) {
    note_startup(t, seg, m);
    return;
  }
  sm__trk_parse(t->L, seg, m, &t->head, &smp, &hd);
  smp.rank = rank;
  if (t->in_block) {
    if (t->L->nf == 1 && !smp.has_step && t->L->f[0].key[0] != '\0')
      return;
    t->in_block = 0; /* a line of another shape ends the block */
  }
  /* Start-up output after progress is a line that is no sample itself. */
  if (smp.kind != SM_TK_SAMPLE && smp.kind != SM_TK_POSITION &&
      smp.kind != SM_TK_CKPT && note_startup(t, seg, m))
    return;
  /* An epoch summary of averages, or the line announcing one, is no
   * step. */
  if (smp.kind == SM_TK_SAMPLE && (smp.summary || t->summary_next)) {
    t->summary_next = 0;
    /* The run's summary with its average step rate: kept aside (no
     * step, no loss) for a log whose metrics time no step. */
    if (smp.run_summary && smp.rate > 0 && !smp.has_step) {
      smp.kind = SM_TK_RUN;
      sm__trk_window_add(&t->win, &smp, t->epoch_seq, t->ctx_epoch,
                         t->eval_seq);
    }
    return;
  }
  if (smp.summary)
    t->summary_next = 1;
  switch (smp.kind) {
  case SM_TK_TABLE_HEAD:
    t->head = hd;
    break;
  case SM_TK_EPOCH_HEAD:
    if (!(smp.epoch == t->ctx_epoch)) {
      t->epoch_seq++;
      t->ctx_epoch = smp.epoch;
    }
    t->head_fresh = 1;
    t->phase = 0;
    t->eval_loop = 0;
    break;
  case SM_TK_PHASE: {
    uint64_t sig = sm_hash64(seg, m, 0x7068617365ULL) | 1;
    t->eval_seq++;
    t->phase_again = sig == t->phase_sig && t->phase;
    t->phase_sig = sig;
    t->phase = 1;
    if (!t->phase_again)
      t->phase_loop = 0;
    break;
  }
  case SM_TK_EVAL:
    t->eval_seq++;
    /* "Test: [230/242]  Time 0.654  Loss 3.02": the evaluation loop's
     * own progress (a position and a fact; a summary is not). */
    if ((smp.loss == smp.loss || smp.step_time == smp.step_time) &&
        has_position(t->L))
      t->eval_loop = 1;
    break;
  case SM_TK_POSITION:
  case SM_TK_CKPT:
    sm__trk_window_add(&t->win, &smp, t->epoch_seq, t->ctx_epoch, t->eval_seq);
    break;
  case SM_TK_SAMPLE:
    if (!accept(t, cls, &smp, seg, m) || !bare_run(t, &smp))
      break;
    if (in_phase(t, &smp) || eval_output(t, &smp)) {
      t->eval_seq++;
      break;
    }
    loop_remember(t, loop_id(&smp));
    t->head_fresh = 0;
    if (!smp.bare_pair)
      t->bare_head = 0; /* other output: the head was not the pairs' */
    t->start_kinds = 0;
    t->resume_step = -1;
    sm__trk_window_add(&t->win, &smp, t->epoch_seq, t->ctx_epoch, t->eval_seq);
    if (unfinished) {
      t->prov = 1;
      t->prov_seq = t->win.next_seq - 1;
    }
    break;
  default:
    break;
  }
}

/* Replays one raw segment in file order: its pieces, each checked for
 * text, cleaned and classified. */
static void forward_segment(sm_tracker *t, const char *s, size_t n) {
  size_t b[2 * MAX_PIECES];
  int np;

  if (n > SEG_MAX)
    n = SEG_MAX;
  np = pieces(s, n, b, MAX_PIECES);
  for (int i = 0; i < np; i++) {
    const char *p = s + b[2 * i];
    size_t len = b[2 * i + 1] - b[2 * i], m;
    int rank;
    if (len == 0)
      continue;
    if (!text_like(t, (const unsigned char *)p, len))
      continue;
    m = sm__trk_clean(p, len, t->seg, sizeof(t->seg), &rank);
    if (m > 0)
      replay_piece(t, t->seg, m, sm_linecls_classify(t->cls, t->seg, m, NULL),
                   0, rank);
  }
}

/* A completed segment replaces the record of its unfinished start. */
static void drop_provisional(sm_tracker *t) {
  if (t->prov)
    sm__trk_window_pop(&t->win, t->prov_seq);
  t->prov = 0;
}

static int feed_bytes(sm_tracker *t, const char *data, size_t n) {
  size_t i = 0;

  while (i < n) {
    size_t j = i;
    while (j < n && data[j] != '\n' && !overwrite(data[j]))
      j++;
    if (j == n) {
      /* An unfinished segment: keep it (the first SEG_MAX bytes are all
       * that is ever looked at). */
      size_t room = t->part.len < SEG_MAX ? SEG_MAX - t->part.len : 0;
      size_t take = n - i < room ? n - i : room;
      if (take > 0 && sm_buf_add(&t->part, data + i, take) != 0)
        return SM_ENOMEM;
      if (take < n - i)
        t->skipping = 1;
      return 0;
    }
    if (t->part.len > 0) {
      size_t room = SEG_MAX - t->part.len;
      if (room > j - i)
        room = j - i;
      if (sm_buf_add(&t->part, data + i, room) != 0)
        return SM_ENOMEM;
      drop_provisional(t);
      forward_segment(t, t->part.data, t->part.len);
      sm_buf_reset(&t->part);
    } else if (!t->skipping || j > i) {
      forward_segment(t, data + i, j - i);
    }
    t->prov = 0;
    t->skipping = 0;
    if (data[j] == '\n')
      t->lines++;
    i = j + 1;
  }
  return 0;
}

int sm_tracker_feed(sm_tracker *t, const char *data, size_t n) {
  int rc = feed_bytes(t, data, n);

  /* A record the bytes end in is read as far as it goes. */
  if (rc == 0)
    record_tail(t);
  return rc;
}

/* ==== What was read last ==== */

/* Reads the bytes just before the offset as the signature of what was
 * read (see same_tail). */
static void load_tail(sm_tracker *t) {
  size_t n = t->off < sizeof(t->sig) ? (size_t)t->off : sizeof(t->sig);
  ssize_t got = sm_rfile_pread(&t->f, t->sig, n, t->off - n, NULL);

  /* A check, not log content: bytes_read counts what the answer used. */
  if (got > 0)
    t->f.nread -= (uint64_t)got;
  t->sig_len = got == (ssize_t)n ? n : 0;
}

/* True when the bytes just before the offset are still those last read:
 * a file truncated and rewritten past the old offset between two polls
 * is noticed by its changed content. */
static int same_tail(sm_tracker *t) {
  char now[sizeof(t->sig)];
  uint64_t at;
  ssize_t got;

  if (t->sig_len == 0 || t->off < t->sig_len)
    return 1;
  at = t->off - t->sig_len;
  got = sm_rfile_pread(&t->f, now, t->sig_len, at, NULL);
  /* A check, not log content: bytes_read counts what the answer used. */
  if (got > 0)
    t->f.nread -= (uint64_t)got;
  if (got != (ssize_t)t->sig_len)
    return 0;
  return memcmp(now, t->sig, t->sig_len) == 0;
}

/* Remembers the last bytes read up to t->off (see same_tail). */
static void remember_tail(sm_tracker *t, const char *buf, size_t n) {
  size_t cap = sizeof(t->sig);

  if (n >= cap) {
    memcpy(t->sig, buf + n - cap, cap);
    t->sig_len = cap;
  } else {
    size_t keep = t->sig_len + n > cap ? cap - n : t->sig_len;
    memmove(t->sig, t->sig + t->sig_len - keep, keep);
    memcpy(t->sig + keep, buf, n);
    t->sig_len = keep + n;
  }
}

/* The end of the file's data: a file whose tail is a hole (preallocated,
 * or extended by a writer that died) has nothing to read there.  Found
 * with SEEK_DATA/SEEK_HOLE, one pair of calls per data extent; where the
 * file system does not tell, the size. */
static uint64_t data_end(const sm_rfile *f) {
#if defined(SEEK_DATA) && defined(SEEK_HOLE)
  off_t off = 0, last = 0;
  int extents = 0;

  if (f->size == 0)
    return 0;
  for (;;) {
    off_t d = lseek(f->fd, off, SEEK_DATA), h;
    if (d < 0)
      return errno == ENXIO ? (uint64_t)last : f->size;
    h = lseek(f->fd, d, SEEK_HOLE);
    if (h < 0 || ++extents > 4096)
      return f->size;
    last = h;
    if ((uint64_t)h >= f->size)
      return f->size;
    off = h;
  }
#else
  return f->size;
#endif
}

/* ==== The head of the log ==== */

/* True when s[0..n) names a batch ("batch", "bsz") in any case. */
static int names_batch(const char *s, size_t n) {
  for (size_t i = 0; i + 3 <= n; i++) {
    char a = (char)(s[i] | 0x20), b = (char)(s[i + 1] | 0x20),
         c = (char)(s[i + 2] | 0x20);
    if ((a == 'b' && b == 's' && c == 'z') ||
        (i + 5 <= n && a == 'b' && b == 'a' && c == 't' &&
         (s[i + 3] | 0x20) == 'c' && (s[i + 4] | 0x20) == 'h'))
      return 1;
  }
  return 0;
}

/* One line of the start-up output: the batch size an argument or
 * configuration dump announces ("Namespace(batch_size=32, ...)",
 * "batch size: 128", a JSON config's "train_batch_size": 256).  Two
 * different announcements leave it unknown. */
static void head_line(sm_tracker *t, const char *s, size_t n) {
  sm_track_sample smp;
  size_t m;
  int rank;

  if (n > SEG_MAX)
    n = SEG_MAX;
  if (!names_batch(s, n))
    return;
  m = sm__trk_clean(s, n, t->seg, sizeof(t->seg), &rank);
  if (m == 0)
    return;
  sm__trk_parse(t->L, t->seg, m, NULL, &smp, NULL);
  if (smp.kind == SM_TK_SAMPLE || smp.batch_size != smp.batch_size)
    return;
  for (int i = 0; i < t->L->nf; i++)
    if (t->L->f[i].ki.role == R_BSZ && t->L->f[i].kind == TK_NUM &&
        t->L->f[i].v != smp.batch_size)
      t->head_bsz_conflict = 1; /* one line, two sizes */
  if (t->head_bsz != t->head_bsz)
    t->head_bsz = smp.batch_size;
  else if (t->head_bsz != smp.batch_size)
    t->head_bsz_conflict = 1;
}

/* Reads the head of the log not read yet, [0, min(end, HEAD_BYTES)),
 * for the batch size it announces. */
static int read_head(sm_tracker *t, uint64_t end, sm_err *err) {
  sm_fwdlines fw;
  const char *line;
  size_t len;
  uint64_t off;
  int cut, rc;

  if (end > HEAD_BYTES)
    end = HEAD_BYTES;
  if (end == 0)
    return 0;
  rc = sm_fwdlines_init(&fw, &t->f, 0, end, SEG_MAX, err);
  while (rc == 0 &&
         (rc = sm_fwdlines_next(&fw, &line, &len, &off, &cut, err)) == 1) {
    rc = 0;
    head_line(t, line, len);
  }
  sm_fwdlines_release(&fw);
  return rc < 0 ? rc : 0;
}

/* Whether the answer needs the batch size of the start-up output: a
 * throughput in samples and no step time. */
static int wants_head_batch(const sm_track_result *r) {
  return r->ok && r->step_time_basis == NULL && r->throughput > 0 &&
         (strcmp(r->tp_unit, "samples/s") == 0 ||
          strcmp(r->tp_unit, "images/s") == 0);
}

/* ==== Backward scan ==== */

typedef struct counter_stat {
  uint32_t id;    /* series */
  int strength;   /* counter kind */
  int distinct;   /* distinct samples seen */
  int strong;     /* a sample of it showed training (loss, lr) */
  int lossy;      /* a sample of it printed a loss (also nan) */
  long long prev; /* step of the sample met before (newer) */
  double prev_ep; /* its epoch, or NAN */
  int wraps;      /* times its step went up going back: loop starts */
  int odd_wraps;  /* of them, those not at an earlier epoch (a restart,
                   * or a loop whose epoch is not printed) */
} counter_stat;

/* One kept piece of the tail, cleaned, for the replay in file order. */
typedef struct kept {
  uint32_t off;  /* offset of its text in scan_state.text */
  uint16_t len;  /* its length */
  uint8_t cls;   /* its class */
  uint8_t flags; /* KEPT_UNFINISHED */
  int32_t rank;  /* the rank its prefix named, or -1 */
} kept;

#define KEPT_UNFINISHED 1
#define KEPT_MAX ((size_t)16 << 20) /* bytes of kept text at most */

typedef struct scan_state {
  uint64_t *seen;      /* open-addressing set of sample keys */
  int nseen;           /* keys in it */
  counter_stat cs[32]; /* per series */
  int ncs;
  int stepless;      /* counter-less samples seen */
  int eval_met;      /* an evaluation line was met before any counter */
  int eval_stepless; /* counter-less samples met since, not counted */
  int epoch_known;   /* a counted sample printed its epoch */
  int heads_only;    /* past the margin: only what is sought is kept */
  int want_epoch;    /* ... an epoch head */
  int start_met;     /* the run's start-up output was met while an epoch
                      * head was sought: a head above it is not this
                      * run's (a configuration dump's "epoch = 20") */
  int want_loss;     /* ... a training loss */
  int loss_met;      /* a sample with a training loss was counted */
  int loss_blocked;  /* the counter went back above: the loss seek ends */
  int best;          /* index of the main counter in cs, or -1 */
  int bwd_epoch;     /* epoch heads met, newest first */
  sm_buf text;       /* kept pieces' text, newest first */
  sm_buf idx;        /* their kept records */
  int full;          /* the kept text reached KEPT_MAX */
} scan_state;

static int seen_add(scan_state *st, uint64_t key) {
  size_t m = SEEN_SLOTS - 1, i;

  key |= 1;
  if (st->nseen >= SEEN_SLOTS / 2)
    return 0;
  for (i = key & m;; i = (i + 1) & m) {
    if (st->seen[i] == key)
      return 0;
    if (st->seen[i] == 0) {
      st->seen[i] = key;
      st->nseen++;
      return 1;
    }
  }
}

/* Keeps a cleaned piece for the replay. */
static void keep(scan_state *st, const char *seg, size_t m, int cls, int flags,
                 int rank) {
  kept k;

  memset(&k, 0, sizeof(k));
  k.rank = rank;
  if (st->full)
    return;
  k.off = (uint32_t)st->text.len;
  k.len = (uint16_t)m;
  k.cls = (uint8_t)(cls < 0 ? 255 : cls);
  k.flags = (uint8_t)flags;
  if (st->text.len + m > KEPT_MAX || sm_buf_add(&st->text, seg, m) != 0 ||
      sm_buf_add(&st->idx, &k, sizeof(k)) != 0) {
    st->full = 1;
    return;
  }
}

/* The loop a sample of the backward scan belongs to: its series and the
 * total it counts to (a global "step N/200000" and a per-epoch "(step
 * 80/324)" printed with the same key are two loops). */
static uint32_t scan_loop(const sm_track_sample *s) {
  uint32_t id = sm__trk_series(s);
  if (id != 0 && s->has_total)
    id ^= (uint32_t)sm_hash_mix((uint64_t)s->total) & ~1u;
  return id;
}

/* Counts a sample (or a position) of the backward scan. */
static void count_sample(scan_state *st, const sm_track_sample *smp,
                         int limit) {
  uint32_t id;
  uint64_t key;
  double ep;
  int j;

  if (smp->epoch == smp->epoch)
    st->epoch_known = 1;
  if (smp->loss == smp->loss || smp->loss_nonfinite)
    st->loss_met = 1;
  if (!smp->has_step) {
    if (st->eval_met && st->best < 0 && st->eval_stepless < 16 * limit) {
      st->eval_stepless++;
      return;
    }
    st->stepless++;
    return;
  }
  id = scan_loop(smp);
  key = sm_hash_mix((uint64_t)smp->step * 0x9e3779b97f4a7c15ULL ^ id ^
                    ((uint64_t)st->bwd_epoch << 40));
  ep = smp->epoch == smp->epoch ? smp->epoch : -1;
  key ^= sm_hash_mix((uint64_t)(int64_t)(ep * 1000.0));
  for (j = 0; j < st->ncs; j++)
    if (st->cs[j].id == id)
      break;
  if (j == st->ncs) {
    if (st->ncs == 32)
      return;
    memset(&st->cs[j], 0, sizeof(st->cs[j]));
    st->cs[j].id = id;
    st->cs[j].strength = smp->counter;
    st->cs[j].prev = -1;
    st->cs[j].prev_ep = NAN;
    st->ncs++;
  }
  if (st->cs[j].prev >= 0 && smp->step > st->cs[j].prev) {
    st->cs[j].wraps++;
    if (!(smp->epoch < st->cs[j].prev_ep))
      st->cs[j].odd_wraps++;
  }
  st->cs[j].prev = smp->step;
  st->cs[j].prev_ep = smp->epoch;
  st->cs[j].strong |= strong_sample(smp);
  st->cs[j].lossy |= smp->loss == smp->loss || smp->loss_nonfinite;
  if (seen_add(st, key))
    st->cs[j].distinct++;
  st->best = -1;
  for (int i = 0; i < st->ncs; i++)
    if (st->best < 0 || st->cs[i].strength > st->cs[st->best].strength ||
        (st->cs[i].strength == st->cs[st->best].strength &&
         (st->cs[i].lossy > st->cs[st->best].lossy ||
          (st->cs[i].lossy == st->cs[st->best].lossy &&
           st->cs[i].distinct > st->cs[st->best].distinct))))
      st->best = i; /* among equals, a loop that shows its loss first */
}

/* True when s[0..n) has "epoch" in any case: the only pieces worth
 * parsing while an epoch head is looked for above the margin. */
static int names_epoch(const char *s, size_t n) {
  for (size_t i = 0; i + 5 <= n; i++)
    if ((s[i] | 0x20) == 'e' && (s[i + 1] | 0x20) == 'p' &&
        (s[i + 2] | 0x20) == 'o' && (s[i + 3] | 0x20) == 'c' &&
        (s[i + 4] | 0x20) == 'h')
      return 1;
  return 0;
}

/* Looks at one raw piece while scanning backwards: keeps what the replay
 * needs and counts the samples; returns 1 when enough are known. */
static int backward_piece(sm_tracker *t, scan_state *st, const char *s,
                          size_t n, int flags) {
  size_t m;
  sm_track_sample smp;
  int cls, rank, marked = 0, kvrow = 0;

  if (st->heads_only && st->want_epoch && st->bwd_epoch == 0) {
    long long at;
    if (sm__trk_startup_mark(s, n, &at) != 0) {
      st->start_met = 1;
      return 0;
    }
  }
  if (st->heads_only && !st->want_loss && !names_epoch(s, n))
    return 0;

  if (!text_like(t, (const unsigned char *)s, n))
    return 0;
  m = sm__trk_clean(s, n, t->seg, sizeof(t->seg), &rank);
  if (m == 0)
    return 0;
  cls = sm_linecls_classify(t->cls, t->seg, m, NULL);
  {
    /* A vertical table's rules and rows are kept for the replay, which
     * joins each record; a counter row counts its record here. */
    trk_vcell k, v;
    if (!st->heads_only && sm__trk_vrule(t->seg, m)) {
      keep(st, t->seg, m, cls, flags, rank);
      return 0;
    }
    if (!st->heads_only && sm__trk_vrow(t->seg, m, &k, &v)) {
      char row[TRK_KEY_MAX + 48];
      int l;
      keep(st, t->seg, m, cls, flags, rank);
      if (v.len == 0 || v.len > 40)
        return 0;
      l = snprintf(row, sizeof(row), "%.*s=%.*s", (int)k.len, t->seg + k.off,
                   (int)v.len, t->seg + v.off);
      sm__trk_parse(t->L, row, (size_t)l, NULL, &smp, NULL);
      if (smp.kind != SM_TK_POSITION)
        return 0;
      count_sample(st, &smp, t->o.samples);
      return st->best >= 0 && st->cs[st->best].distinct >= t->o.samples;
    }
  }
  if (!st->heads_only &&
      sm__trk_vkv(t->seg, m, &(trk_vcell){0}, &(trk_vcell){0})) {
    /* A "key: value" line may be a row of a print loop's record: kept
     * for the replay, which joins the rows (and counted below as any
     * line). */
    keep(st, t->seg, m, cls, flags, rank);
    kvrow = 1;
  }
  if (st->ncs == 0 && st->stepless == 0) {
    /* Newer than any progress: start-up output of a new run is kept for
     * the replay to judge. */
    long long at;
    marked = sm__trk_startup_mark(t->seg, m, &at) != 0;
  }
  /* A head of words that names a metric other than a loss: the replay
   * judges bare pairs below it by it (it is never a sample). */
  if (sm__trk_metric_head(t->seg, m) > 0 || sm__trk_block_banner(t->seg, m)) {
    keep(st, t->seg, m, cls, flags, rank);
    return 0;
  }
  if (!worth_parsing(t, cls, t->seg, m)) {
    if (marked && !kvrow)
      keep(st, t->seg, m, cls, flags, rank);
    return 0;
  }
  sm__trk_parse(t->L, t->seg, m, NULL, &smp, NULL);
  if (st->heads_only) {
    if (st->want_epoch && smp.kind == SM_TK_EPOCH_HEAD) {
      keep(st, t->seg, m, cls, flags, rank);
      st->bwd_epoch++;
    } else if (st->want_loss && smp.kind == SM_TK_SAMPLE && smp.has_step &&
               st->best >= 0 && scan_loop(&smp) == st->cs[st->best].id) {
      /* The counter followed, met again above: once it goes up (read
       * backwards: a restart or the start of a loop), what lies above
       * is another run's or loop's, and its loss is not looked for. */
      counter_stat *c = &st->cs[st->best];
      if (c->prev >= 0 && smp.step > c->prev && !(smp.epoch < c->prev_ep))
        st->loss_blocked = 1; /* not an earlier epoch's loop */
      c->prev = smp.step;
      c->prev_ep = smp.epoch;
    } else if (st->want_loss && smp.kind == SM_TK_SAMPLE &&
               (smp.loss == smp.loss || smp.loss_nonfinite) && !smp.summary &&
               accept(t, cls, &smp, t->seg, m)) {
      /* The newest training loss above a counter that prints none. */
      keep(st, t->seg, m, cls, flags, rank);
      st->loss_met = 1;
    }
    return 0;
  }
  /* Kept: whatever the replay may use, and rows that a table head above
   * may name. */
  if (!kvrow && (marked || smp.kind != SM_TK_NONE || smp.summary ||
                 (t->L->nf > 0 && t->L->f[0].key[0] == '\0')))
    keep(st, t->seg, m, cls, flags, rank);
  if (smp.kind == SM_TK_EPOCH_HEAD) {
    st->bwd_epoch++;
    return 0;
  }
  /* The log ends in an evaluation loop: the counter-less losses met
   * before and among its lines ("cos_sim_loss 0.43" after "Test:
   * [230/242]") are its output, so they do not end the scan before the
   * training counter above is found (at most 16N of them are read). */
  if (smp.kind == SM_TK_EVAL && st->best < 0 && !st->eval_met) {
    st->eval_met = 1;
    st->stepless = 0;
  }
  if (smp.kind == SM_TK_POSITION)
    count_sample(st, &smp, t->o.samples);
  else if (smp.kind == SM_TK_SAMPLE && accept(t, cls, &smp, t->seg, m))
    count_sample(st, &smp, t->o.samples);
  else
    return 0;
  if (st->best >= 0 && st->cs[st->best].distinct >= t->o.samples)
    return 1;
  if (st->nseen >= 8 * t->o.samples)
    return 1;
  return st->best < 0 && st->stepless >= 4 * t->o.samples;
}

/* Looks at one line's pieces, newest (last) first; returns 1 when enough
 * samples are known.  unfinished: the line is the last of the file and
 * not ended, so its last segment is not either. */
static int backward_line(sm_tracker *t, scan_state *st, const char *s, size_t n,
                         int unfinished, int whole) {
  size_t e = n;
  int done = 0, more = 0;

  for (;;) {
    const char *cr = e > 0 ? last_overwrite(s, e) : NULL;
    size_t b = cr ? (size_t)(cr - s) + 1 : 0;
    if (e > b) {
      size_t pb[2 * MAX_PIECES], len = e - b;
      int np;
      if (len > SEG_MAX)
        len = SEG_MAX;
      np = pieces(s + b, len, pb, MAX_PIECES);
      for (int i = np - 1; i >= 0 && (!done || more); i--) {
        int fl = unfinished && e == n && i == np - 1 ? KEPT_UNFINISHED : 0;
        if (pb[2 * i + 1] > pb[2 * i] &&
            backward_piece(t, st, s + b + pb[2 * i], pb[2 * i + 1] - pb[2 * i],
                           fl) &&
            !done) {
          /* A loop that shows no training is judged by its start and
           * the line that announced it: the rest of a line already read
           * (a bar's earlier updates) is kept too, unless the line was
           * cut. */
          const counter_stat *c = st->best >= 0 ? &st->cs[st->best] : NULL;
          done = 1;
          more = whole && c != NULL && !c->strong;
        }
      }
      if (unfinished && e == n) {
        /* The unfinished segment waits in part for its end (following). */
        size_t take = e - b < SEG_MAX ? e - b : SEG_MAX;
        sm_buf_reset(&t->part);
        if (sm_buf_add(&t->part, s + b, take) == 0)
          t->skipping = e - b > SEG_MAX;
      }
    }
    if ((done && !more) || cr == NULL)
      return done;
    e = b - 1;
  }
}

/* Replays the kept pieces in file order (oldest first). */
static void replay_kept(sm_tracker *t, scan_state *st) {
  size_t nk = st->idx.len / sizeof(kept);

  for (size_t i = nk; i-- > 0;) {
    kept k;
    memcpy(&k, st->idx.data + i * sizeof(kept), sizeof(k));
    replay_piece(t, st->text.data + k.off, k.len, k.cls == 255 ? -1 : k.cls,
                 (k.flags & KEPT_UNFINISHED) != 0, k.rank);
  }
  record_tail(t);
}

/* Lines of context read above the window once it is complete: in-epoch
 * counters need their epoch and table heads, and a loop that shows no
 * training (no loss, no learning rate) the line that announced it, above
 * its start; other counters carry what they need. */
static int margin_lines(const scan_state *st) {
  const counter_stat *b = st->best >= 0 ? &st->cs[st->best] : NULL;
  if (b == NULL || b->strength != SM_TC_BATCH)
    return 8;
  return b->strong ? MARGIN_LINES : 4096;
}

/* What the reverse reader holds below the lowest line returned was read
 * from the file already: the head is looked at there, not read again.
 * Returns the lowest offset read. */
static uint64_t peek_head(sm_tracker *t, const sm_revlines *rv,
                          uint64_t lowest) {
  uint64_t start;
  size_t held, hi, b = 0;
  const char *buf = sm_revlines_held(rv, &start, &held);

  if (buf == NULL || start >= lowest || start >= HEAD_BYTES)
    return lowest;
  hi = lowest - start < held ? (size_t)(lowest - start) : held;
  for (size_t i = 0; i < hi; i++)
    if (buf[i] == '\n' || i + 1 == hi) {
      size_t e = buf[i] == '\n' ? i : i + 1;
      if (start + b < HEAD_BYTES)
        head_line(t, buf + b, e - b);
      b = i + 1;
    }
  return start;
}

/* The answer after a scan; the start-up output above what was read
 * (lowest) is read when it may announce the batch the answer needs. */
static int scan_answer(sm_tracker *t, uint64_t lowest, sm_track_result *res,
                       sm_err *err) {
  load_tail(t);
  sm_tracker_result(t, res);
  if (wants_head_batch(res) && lowest > 0) {
    int rc = read_head(t, lowest, err);
    if (rc != 0)
      return rc;
    sm_tracker_result(t, res);
  }
  t->last = *res;
  return 0;
}

int sm_tracker_scan(sm_tracker *t, const char *path, sm_track_result *res,
                    sm_err *err) {
  sm_revlines rv;
  scan_state st;
  uint64_t size, stop, done_at = 0;
  int rc, done = 0, margin = 0, cut = 0, wraps_at_done = 0, lines_left = 0;
  int odd_wraps_at_done = 0;
  int seek_epoch = 0, seek_loss = 0, epochs_at_done = 0, margin_left = 0;
  uint64_t lowest;
  const char *line;
  size_t len;
  uint64_t off;
  char lastc = '\n';

  reset_state(t);
  if (t->open) {
    sm_rfile_close(&t->f);
    t->open = 0;
  }
  sm_free(t->path);
  t->path = sm_strdup(path);
  if (t->path == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  rc = sm_rfile_open(&t->f, path, err);
  if (rc != 0)
    return rc;
  t->open = 1;
  size = data_end(&t->f);
  lowest = size;
  stop = size > t->o.max_scan ? size - t->o.max_scan : 0;
  memset(&st, 0, sizeof(st));
  st.best = -1;
  sm_buf_init(&st.text, KEPT_MAX + SEG_MAX);
  sm_buf_init(&st.idx, 0);
  st.seen = sm_calloc(SEEN_SLOTS, sizeof(uint64_t));
  if (st.seen == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  rc = sm_revlines_init(&rv, &t->f, stop, size, MAX_LINE, err);
  while (rc == 0 &&
         (rc = sm_revlines_next(&rv, &line, &len, &off, &cut, err)) == 1) {
    int unfinished = 0;
    rc = 0;
    t->lines++;
    if (t->lines == 1 && off + len == size && len > 0) {
      /* The file ends inside this line: its last segment is unfinished
       * unless a carriage return ended it. */
      lastc = line[len - 1];
      unfinished = !overwrite(lastc);
    }
    if (done) {
      const counter_stat *b = st.best >= 0 ? &st.cs[st.best] : NULL;
      int over;
      uint64_t above;
      /* A loop that shows no training: once its start is passed, a few
       * lines more are enough. */
      if (b != NULL && b->wraps > wraps_at_done && lines_left > 16) {
        /* ... and while a loss is looked for above, only it is kept. */
        if (seek_loss && margin_left > 16)
          margin_left = 16;
        else if (!seek_loss)
          lines_left = 16;
      }
      /* What is looked for is found, or its budget spent: when nothing
       * else is sought, a line more is enough. */
      if (seek_epoch && (st.bwd_epoch > epochs_at_done || st.start_met ||
                         (st.heads_only && (done_at - off > EPOCH_SEEK_BYTES ||
                                            margin >= EPOCH_SEEK)))) {
        seek_epoch = 0;
        if (!seek_loss)
          lines_left = margin + 1;
      }
      if (seek_loss && (st.loss_met || st.loss_blocked ||
                        (b != NULL && b->odd_wraps > odd_wraps_at_done) ||
                        (st.heads_only && done_at - off > LOSS_SEEK_BYTES))) {
        seek_loss = 0;
        if (!seek_epoch)
          lines_left = SM_MAX(margin + 1, margin_left);
      }
      st.want_epoch = seek_epoch;
      st.want_loss = seek_loss;
      /* The budget counts the bytes above the line: the line right
       * above the window is looked at even when it is long (a training
       * bar's updates on one line before an evaluation bar). */
      above = off + len < done_at ? done_at - (off + len) : 0;
      over = above > MARGIN_BYTES * 4 ||
             (lines_left <= MARGIN_LINES && above > MARGIN_BYTES);
      /* Past the usual margin only the epoch head or the loss is looked
       * for: what the replay reads is otherwise the same. */
      if ((seek_epoch || seek_loss) && (margin >= margin_left || over))
        st.heads_only = 1;
      if (++margin >= lines_left || (!st.heads_only && over))
        break;
    }
    if (off < HEAD_BYTES)
      head_line(t, line, len);
    lowest = off;
    if (backward_line(t, &st, line, len, unfinished, !cut) && !done) {
      done = 1;
      done_at = off;
      lines_left = margin_lines(&st);
      wraps_at_done = st.best >= 0 ? st.cs[st.best].wraps : 0;
      odd_wraps_at_done = st.best >= 0 ? st.cs[st.best].odd_wraps : 0;
      /* No sample printed its epoch and no epoch head was met: the
       * "Epoch 50/50" (or "=== Epoch 10/10 ===") above a long loop is
       * looked for further up, within the margin's byte budget. */
      epochs_at_done = st.bwd_epoch;
      margin_left = lines_left;
      if (!st.epoch_known && st.bwd_epoch == 0 && lines_left < EPOCH_SEEK) {
        seek_epoch = 1;
        lines_left = EPOCH_SEEK;
      }
      /* The counter followed prints no loss and no line beside it did:
       * the newest training loss is looked for further up (HF Trainer's
       * loss dicts every few hundred bar updates, a logger's loss line
       * every N steps beside a bar). */
      if (st.best >= 0 && !st.cs[st.best].lossy && !st.loss_met) {
        seek_loss = 1;
        lines_left = SM_MAX(lines_left, LOSS_SEEK);
      }
      /* The samples were found in the tail of an over-long line (a bar
       * that never printed a newline): what lies before it is that same
       * line, and skipping back through it would read it all. */
      if (cut)
        break;
    }
    if (st.full)
      break;
  }
  lowest = peek_head(t, &rv, lowest);
  sm_revlines_release(&rv);
  sm_free(st.seen);
  if (rc < 0) {
    sm_buf_release(&st.text);
    sm_buf_release(&st.idx);
    return rc;
  }
  t->scan_limited = (!done && stop > 0) || st.full;

  /* Replay the kept pieces in file order: nothing is read twice. */
  replay_kept(t, &st);
  sm_buf_release(&st.text);
  sm_buf_release(&st.idx);
  t->off = size;
  if (size > 0 && (lastc == '\n' || overwrite(lastc))) {
    sm_buf_reset(&t->part);
    t->skipping = 0;
  }
  return scan_answer(t, lowest, res, err);
}

/* ==== Following ==== */

/* Reads [t->off, end) of the open file into the replay. */
static int drain(sm_tracker *t, uint64_t end, sm_err *err) {
  char *buf = sm_malloc(READ_CHUNK);

  if (buf == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", t->path);
  while (t->off < end) {
    size_t want;
#if defined(SEEK_DATA)
    {
      /* A hole is not read: its bytes are zeros nobody wrote. */
      off_t d = lseek(t->f.fd, (off_t)t->off, SEEK_DATA);
      if (d < 0 && errno == ENXIO)
        break; /* only a hole up to the end: nothing written yet */
      if (d > (off_t)t->off) {
        t->off = (uint64_t)d < end ? (uint64_t)d : end;
        sm_buf_reset(&t->part);
        t->skipping = 0;
        continue;
      }
    }
#endif
    want = end - t->off < READ_CHUNK ? (size_t)(end - t->off) : READ_CHUNK;
    ssize_t got = sm_rfile_pread(&t->f, buf, want, t->off, err);
    if (got <= 0) {
      sm_free(buf);
      return got < 0 ? (int)got : 0;
    }
    if (sm_tracker_feed(t, buf, (size_t)got) != 0) {
      sm_free(buf);
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", t->path);
    }
    remember_tail(t, buf, (size_t)got);
    t->off += (uint64_t)got;
  }
  sm_free(buf);
  return 0;
}

/* The facts an update is printed for (not the counters of work done). */
static int same_answer(const sm_track_result *a, const sm_track_result *b) {
#define SAMEF(x) ((a->x == b->x) || (a->x != a->x && b->x != b->x))
  return a->ok == b->ok && a->has_step == b->has_step && a->step == b->step &&
         a->has_total == b->has_total && a->total_steps == b->total_steps &&
         SAMEF(epoch) && SAMEF(loss) && SAMEF(lr) && SAMEF(step_time_s) &&
         SAMEF(throughput);
#undef SAMEF
}

int sm_tracker_poll(sm_tracker *t, sm_track_result *res, sm_err *err) {
  struct stat st;
  int rc;

  if (t->path == NULL || !t->open)
    return sm_err_set(err, SM_EINVAL, "tracker: nothing to follow");
  if (stat(t->path, &st) != 0) {
    /* Moved away and not yet recreated: finish what the old file holds. */
    if ((rc = sm_rfile_stat(&t->f, err)) == 0 && t->f.size > t->off)
      rc = drain(t, t->f.size, err);
    if (rc < 0)
      return rc;
  } else if ((uint64_t)st.st_ino != t->f.ino ||
             (uint64_t)st.st_dev != t->f.dev) {
    /* Rotated: a new file at the path is a new stream.  The window is
     * emptied (no sample of the old file is reported as the new file's),
     * and the new file is read from its start. */
    sm_rfile nf;
    if (sm_rfile_open(&nf, t->path, NULL) == 0) {
      sm_rfile_close(&t->f);
      t->f = nf;
      t->off = 0;
      t->sig_len = 0;
      reset_state(t);
      if ((rc = drain(t, t->f.size, err)) < 0)
        return rc;
    }
  } else {
    if ((rc = sm_rfile_stat(&t->f, err)) < 0)
      return rc;
    if (t->f.size < t->off || !same_tail(t)) {
      /* Truncated in place (copytruncate), maybe already written past
       * the old offset again: what was read is gone, so is the window;
       * start again from 0.  The bytes read count the new content only,
       * as for a rotated file. */
      t->off = 0;
      t->sig_len = 0;
      t->f.nread = 0;
      reset_state(t);
    }
    if ((rc = drain(t, t->f.size, err)) < 0)
      return rc;
  }
  sm_tracker_result(t, res);
  if (same_answer(res, &t->last))
    return 0;
  t->last = *res;
  return 1;
}

/* The newest run restarted and printed only its start-up: its step is
 * the one it resumed from, or unknown; what the run before printed last
 * (its loss, learning rate, epoch) is not the newest run's.  The step
 * time and the total are the job's and stay. */
static void newest_run_starting(const sm_tracker *t, sm_track_result *res) {
  size_t k = strlen(res->format);
  res->starting = 1;
  res->restarts++;
  res->has_step = t->resume_step >= 0;
  res->step = t->resume_step >= 0 ? t->resume_step : 0;
  res->loss = res->lr = res->epoch = NAN;
  res->loss_nonfinite = 0;
  snprintf(res->format + k, sizeof(res->format) - k, "%s",
           t->resume_step >= 0 ? "; newest run resumed, starting"
                               : "; newest run starting");
}

void sm_tracker_result(sm_tracker *t, sm_track_result *res) {
  /* Mostly bytes that are not text (a binary file, a core dump): said so,
   * and never a progress found in them.  Random bytes hold an odd
   * "step=3"-like run often enough that the window alone cannot be
   * trusted to stay empty. */
  int binary = t->other_bytes > t->text_bytes;

  sm__trk_window_answer(&t->win, t->o.samples, res);
  if (binary) {
    memset(res, 0, sizeof(*res));
    res->epoch = res->loss = res->lr = res->step_time_s = res->throughput = NAN;
  }
  res->lines_scanned = t->lines;
  res->bytes_read = t->open ? t->f.nread : 0;
  res->scan_limited = t->scan_limited;
  res->binary = binary;
  res->starting = 0;
  if (res->ok && sm__trk_startup_decided(t->start_kinds, t->resume_step))
    newest_run_starting(t, res);
  /* Throughput beside the batch its start-up announced (MXNet's
   * Speedometer "Speed: 138.7 samples/sec" under "Namespace(batch_size=32,
   * ...)", DeepSpeed's samples/sec under its config dump). */
  if (wants_head_batch(res) && t->head_bsz > 0 && !t->head_bsz_conflict &&
      !res->starting) {
    char v[32];
    snprintf(v, sizeof(v), "%.6g", t->head_bsz / res->throughput);
    res->step_time_s = strtod(v, NULL);
    res->step_time_basis = "throughput";
    res->step_time_source = "announced batch/throughput";
    res->step_time_weak = "a batch size announced at start-up";
  }
}

/* ==== JSON ==== */

static void num_or_null(sm_jw *w, const char *key, double v) {
  sm_jw_key(w, key);
  if (v != v)
    sm_jw_null(w);
  else
    sm_jw_num(w, v);
}

int sm_track_result_json(const sm_track_result *r, sm_buf *out) {
  sm_jw w;

  sm_jw_init(&w, out);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "status");
  sm_jw_str(&w, r->ok ? "ok" : "missing");
  sm_jw_key(&w, "step");
  if (r->has_step)
    sm_jw_int(&w, r->step);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "total_steps");
  if (r->has_total)
    sm_jw_int(&w, r->total_steps);
  else
    sm_jw_null(&w);
  num_or_null(&w, "epoch", r->epoch);
  num_or_null(&w, "loss", r->loss);
  num_or_null(&w, "lr", r->lr);
  num_or_null(&w, "step_time_s", r->step_time_s);
  sm_jw_key(&w, "throughput");
  if (r->throughput == r->throughput) {
    sm_jw_obj_begin(&w);
    sm_jw_key(&w, "value");
    sm_jw_num(&w, r->throughput);
    sm_jw_key(&w, "unit");
    sm_jw_str(&w, r->tp_unit);
    sm_jw_obj_end(&w);
  } else {
    sm_jw_null(&w);
  }
  sm_jw_key(&w, "samples");
  sm_jw_int(&w, r->samples);
  sm_jw_key(&w, "lines_scanned");
  sm_jw_int(&w, (long long)r->lines_scanned);
  sm_jw_key(&w, "bytes_read");
  sm_jw_int(&w, (long long)r->bytes_read);
  sm_jw_key(&w, "format");
  if (r->ok)
    sm_jw_str(&w, r->format);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "counter");
  if (r->ok && r->has_step)
    sm_jw_str(&w, r->counter);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "step_time_basis");
  sm_jw_str(&w, r->step_time_basis);
  sm_jw_key(&w, "step_time_source");
  sm_jw_str(&w, r->step_time_source);
  sm_jw_key(&w, "step_time_weak");
  sm_jw_str(&w, r->step_time_basis ? r->step_time_weak : NULL);
  sm_jw_key(&w, "step_scope");
  sm_jw_str(&w, r->ok && r->has_step ? r->step_scope : NULL);
  sm_jw_key(&w, "loss_nonfinite");
  sm_jw_bool(&w, r->loss_nonfinite);
  sm_jw_key(&w, "starting");
  sm_jw_bool(&w, r->starting);
  sm_jw_key(&w, "restarts");
  sm_jw_int(&w, r->restarts);
  sm_jw_key(&w, "scan_limited");
  sm_jw_bool(&w, r->scan_limited);
  sm_jw_key(&w, "binary");
  sm_jw_bool(&w, r->binary);
  sm_jw_obj_end(&w);
  return sm_jw_finish(&w);
}

/* ==== Classify every line (diagnostics, benchmark) ==== */

int sm_track_classify_file(const char *path, const sm_protoset *protos,
                           uint64_t *counts, uint64_t *unknown, uint64_t *lines,
                           uint64_t *bytes, sm_err *err) {
  sm_rfile f;
  sm_linecls *c;
  char *buf;
  size_t cap = MAX_LINE + READ_CHUNK * 16, have = 0;
  uint64_t off = 0;
  int rc;

  memset(counts, 0, SM_TRACK_NCLASSES * sizeof(uint64_t));
  *unknown = *lines = *bytes = 0;
  if (protos == NULL)
    protos = &sm__protoset_tracker;
  if (protos->n_classes > SM_TRACK_NCLASSES)
    return sm_err_set(err, SM_EINVAL, "classifier has too many classes");
  rc = sm_rfile_open(&f, path, err);
  if (rc != 0)
    return rc;
  c = sm_linecls_new(protos);
  buf = sm_malloc(cap);
  if (c == NULL || buf == NULL) {
    sm_linecls_free(c);
    sm_free(buf);
    sm_rfile_close(&f);
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  }
  for (;;) {
    ssize_t got = sm_rfile_pread(&f, buf + have, cap - have, off, err);
    size_t i = 0;
    if (got < 0) {
      rc = (int)got;
      break;
    }
    off += (uint64_t)got;
    have += (size_t)got;
    while (i < have) {
      const char *nl = memchr(buf + i, '\n', have - i);
      size_t e;
      int k;
      if (nl == NULL) {
        if (got > 0 && have - i < MAX_LINE)
          break;
        e = have; /* the last line, or an over-long one cut */
      } else {
        e = (size_t)(nl - buf);
      }
      k = sm_linecls_classify(c, buf + i, e - i, NULL);
      if (k >= 0)
        counts[k]++;
      else
        (*unknown)++;
      (*lines)++;
      i = nl ? e + 1 : e;
    }
    memmove(buf, buf + i, have - i);
    have -= i;
    if (got == 0)
      break;
  }
  *bytes = f.nread;
  sm_linecls_free(c);
  sm_free(buf);
  sm_rfile_close(&f);
  return rc < 0 ? rc : 0;
}
