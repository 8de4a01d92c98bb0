/* track_int.h - what the tracker's source files share: the tokens and
 * key/value fields of one line, the key-synonym table and the sample
 * window.  Not installed; the public API is schedmate/sm_tracker.h. */
#ifndef SM_TRACK_INT_H
#define SM_TRACK_INT_H

#include <math.h>
#include <stdint.h>

#include "schedmate/sm_tracker.h"

/* Bytes of one segment that are looked at; the rest is ignored. */
#define TRK_MAX_INPUT 8192
#define TRK_MAX_TOKS 768
#define TRK_MAX_FIELDS 160
#define TRK_MAX_FREE 96
#define TRK_KEY_MAX 48
#define TRK_MAX_COLS 12
#define TRK_COL_MAX 24

/* ==== Tokens ==== */

enum trk_tok_kind {
  TK_WORD = 1, /* identifier-like word: "loss", "lm-loss", "train/loss" */
  TK_NUM,      /* number, with an optional unit suffix ("45.2ms") */
  TK_FRAC,     /* "n/m" (integers, blanks allowed around the slash) */
  TK_CLOCK,    /* "12:34", "1:02:03", "00:12.5": a duration or time */
  TK_PUNCT,    /* one ASCII punctuation character */
  TK_BAR,      /* a run of progress-bar glyphs: "=====>....", "████" */
  TK_UNITANN,  /* a unit annotation after a key: "(ms)", "[s]", "in s" */
  TK_DATE      /* a calendar date: "2022-11-24", "08/22" before a time */
};

typedef struct trk_tok {
  uint8_t kind;  /* an trk_tok_kind */
  uint8_t sp;    /* whitespace precedes the token */
  char c;        /* TK_PUNCT: the character */
  uint8_t isint; /* TK_NUM: written without '.' or exponent */
  uint16_t off;  /* offset of the token in the text */
  uint16_t len;  /* its length */
  double v;      /* number, numerator, or seconds of a clock */
  double total;  /* TK_FRAC: denominator */
  char unit[16]; /* number suffix or annotation, lower case ("ms") */
} trk_tok;

/* As sm_track_clean; *rank (may be NULL) gets the rank a launcher prefix
 * named ("[rank3]:", "3: ", "[default3]:", "[1,3]<stdout>:"), or -1. */
size_t sm__trk_clean(const char *s, size_t n, char *out, size_t cap, int *rank);

/* ==== Key roles (the synonym table) ==== */

enum trk_role {
  R_NONE = 0,  /* unknown key: ignored */
  R_STEP,      /* optimizer / global step counter */
  R_ITER,      /* iteration counter */
  R_MICRO,     /* micro-step counter */
  R_BATCH,     /* in-epoch batch index */
  R_EPOCH,     /* epoch */
  R_LOSS,      /* training loss */
  R_EVAL_LOSS, /* validation / test loss: never the training loss */
  R_LR,        /* learning rate */
  R_TIME,      /* time of one step (seconds unless a unit says) */
  R_CUM,       /* cumulative training time */
  R_RATE,      /* steps per second */
  R_TPUT,      /* throughput (samples, tokens, words, images per second) */
  R_BSZ,       /* samples per optimizer step printed on the line */
  R_BTOK,      /* tokens per optimizer step printed on the line */
  R_TOTAL,     /* the number of steps the run is to make */
  R_IGNORE     /* known but unused (eta, data_time, loss_scale...) */
};

/* Key flags. */
#define KF_TRAIN 0x01  /* the key names training explicitly */
#define KF_EVAL 0x02   /* the key names evaluation (val_, eval_, test_) */
#define KF_STRICT 0x04 /* only with ':' or '=' and an integer value */
#define KF_MS 0x08     /* value in milliseconds unless a unit says */
#define KF_US 0x10     /* value in microseconds unless a unit says */
#define KF_LOW 0x20    /* a running average: use only when nothing else */
#define KF_PART 0x40   /* a loss component (box_loss, loss_cls) */
/* A discriminator's loss: used only when no other loss is printed. */
#define KF_DISC 0x80
/* Named only by a GAN network ("G_GAN", "d:"): a loss only where the line
 * names both networks. */
#define KF_NET 0x100
/* A figure of the whole run ("train_runtime"): a line without a step that
 * prints it is a summary of the run. */
#define KF_RUN 0x200

typedef struct trk_keyinfo {
  int role;         /* an trk_role */
  unsigned flags;   /* KF_* */
  const char *unit; /* R_TPUT: the unit to report, or NULL */
} trk_keyinfo;

/* Looks up a canonical key (lower case, words joined by '_').  Unknown
 * keys get R_NONE, but their flags still say KF_EVAL / KF_TRAIN when the
 * words do, and loss-like keys get R_LOSS | KF_PART or R_EVAL_LOSS. */
void sm__trk_key_lookup(const char *key, trk_keyinfo *out);

/* True when a free word (not part of a key) names evaluation, or
 * start-up work (downloads, loading, preprocessing), or announces a loop
 * that is not training ("Extracting features ..."), or is a log level. */
int sm__trk_is_eval_word(const char *w, size_t n);
int sm__trk_is_init_word(const char *w, size_t n);
int sm__trk_is_phase_word(const char *w, size_t n);
int sm__trk_is_level_word(const char *w, size_t n);
/* An "average" word and a "stats" word among a line's words mark an
 * epoch summary ("average epoch stats below", "Averaged stats:"). */
int sm__trk_is_average_word(const char *w, size_t n);
int sm__trk_is_stats_word(const char *w, size_t n);
/* A word that may qualify a counter without changing what it counts
 * ("completed step: 3", "Finished iteration 10"). */
int sm__trk_is_qual_word(const char *w, size_t n);
/* A framework's repr around a value ("tensor(0.51, device=...)",
 * "array(0.51, dtype=float32)"): the value is the key's. */
int sm__trk_is_wrap_word(const char *w, size_t n);
/* A word that names a loss component when it prefixes "_loss" ("box",
 * "obj", "cls"): a table column of that name is a component. */
int sm__trk_is_part_word(const char *w, size_t n);
/* A word that starts with a metric of the table's evalq class and goes
 * on with a threshold ("mAP@.5", "mAP_50", "AP@0.5": '@', a digit, or
 * '_' and a digit): a detection validation column, evaluation. */
int sm__trk_is_evalq_word(const char *w, size_t n);
/* Checkpoint lines' words, matched at a word start as prefixes of the
 * word there (t[i..n)): kind TRK_CK_WORD names a checkpoint
 * ("checkpoint", "ckpt"), TRK_CK_SAVE a save ("Saving", "saved"),
 * TRK_CK_LOAD a load or a resume (a restart's start-up, not a save). */
enum { TRK_CK_WORD, TRK_CK_SAVE, TRK_CK_LOAD };
int sm__trk_ckpt_word_at(const char *t, size_t n, size_t i, int kind);
/* The k-th prefix of a checkpoint's name before the step it holds
 * ("global_step", "checkpoint-"), in the table's order; NULL past the
 * last. */
const char *sm__trk_ckpt_name_prefix(int k);
/* True when a line without numbers is the banner of a block of
 * figures, one per line ("***** train metrics *****" of HF's
 * log_metrics, "==== Final results ====", "Summary:"): a few words, one
 * of the table's "block" class, decorated by a rule of '*', '=', '-' or
 * '#' or ending with ':'. */
int sm__trk_block_banner(const char *s, size_t n);
/* True when a key (or a unit, "s/it") names a step among its parts
 * ("step_time", "ms/batch", "time_per_iteration"): a time under it is
 * the time of a step, not of an epoch or a run. */
int sm__trk_names_step(const char *key);

/* The multiplier of a count written with a magnitude suffix ("50K" of
 * LeRobot's "step:50K", tqdm's "12.9kit"): 1 for no suffix or "it", 1e3
 * for "k"/"kit", 1e6 for "m"/"mit", 0 for a unit that is not a count. */
double sm__trk_count_scale(const char *unit);

/* A unit written as a time over a step word ("sec/step", "ms/update",
 * "seconds/iteration": 1, *secs (may be NULL) the seconds of its time
 * unit) or a step word over a second ("steps/sec", "it/sec": 2); 0 for
 * any other unit.  The step words are the table's "per" class. */
int sm__trk_unit_per(const char *unit, double *secs);

/* Converts a time value with a unit ("ms", "s", "us", "min", "h") to
 * seconds; *ok is 0 when the unit is not a time unit. */
double sm__trk_seconds(double v, const char *unit, int *ok);

/* What a parsed knowledge table holds (data/embed/tracker_keys.tsv). */
typedef struct trk_keys_stats {
  int keys;       /* key entries */
  int words[24];  /* words per class: eval, init, phase, part, level,
                   * average, stats, qual, per, term, gen, disc, lossq,
                   * wrap, smooth, block, ckpt, ckname, save, reload,
                   * evalq */
  int unsorted;   /* keys out of order in the file */
  int duplicates; /* keys listed twice */
} trk_keys_stats;

/* Parses a knowledge table (text is changed in place and must outlive
 * the table) into the tracker's table.  Returns the number of keys, or
 * -N for a malformed line N (unknown kind, role or flag, a missing
 * comment, too many fields).  For the unit tests; the tracker loads the
 * embedded table itself on first use. */
int sm__trk_keys_parse(char *text, trk_keys_stats *st);

/* The embedded table: the number of keys (st filled in), or -N when its
 * line N is malformed. */
int sm__trk_keytable_check(trk_keys_stats *st);

/* ==== Fields ==== */

typedef struct trk_field {
  char key[TRK_KEY_MAX]; /* canonical key, "" when unkeyed */
  int nkw;               /* words in the key */
  int kw[4];             /* token indexes of the key's words */
  int tok;               /* token index of the value */
  int kind;              /* TK_NUM, TK_FRAC or TK_CLOCK */
  double v;              /* value or numerator */
  double total;          /* denominator of a fraction */
  int isint;             /* integer literal */
  char unit[16];         /* unit suffix, or the key's unit annotation */
  int sep;               /* ':' or '=' between key and value, ' ', or 0 */
  int paren;             /* inside parentheses */
  int bracket;           /* inside square brackets */
  trk_keyinfo ki;        /* the key's role */
} trk_field;

/* One segment, tokenised and paired. */
typedef struct trk_line {
  const char *s;             /* the text (borrowed) */
  size_t n;                  /* its length, at most TRK_MAX_INPUT */
  double ts;                 /* timestamp or NAN */
  trk_tok tok[TRK_MAX_TOKS]; /* tokens */
  int ntok;
  trk_field f[TRK_MAX_FIELDS]; /* key/value fields in line order */
  int nf;
  int free_tok[TRK_MAX_FREE]; /* token indexes of words outside keys */
  int nfree;
  int head_end; /* token index of the first value */
} trk_line;

/* Tokenises s[0..n) (n is cut to TRK_MAX_INPUT) and pairs keys with
 * values.  Keys are canonical but not yet looked up. */
void sm__trk_lex(trk_line *L, const char *s, size_t n);

/* Writes the canonical key of the words w[0..nw) (token indexes): lower
 * case, '-' as '_', words joined by '_'. */
void sm__trk_canon(const trk_line *L, const int *w, int nw, char *out,
                   size_t cap);

/* ==== Parsing with context ==== */

/* Column names of the last table head seen (YOLO-style tables). */
typedef struct trk_head {
  int n;                               /* columns, 0 = none */
  char col[TRK_MAX_COLS][TRK_COL_MAX]; /* canonical names */
} trk_head;

/* As sm_track_parse, with the scratch line given and an optional table
 * head to name the leading values of a row; a table head line fills
 * *head_out (may be NULL). */
void sm__trk_parse(trk_line *L, const char *seg, size_t n, const trk_head *head,
                   sm_track_sample *out, trk_head *head_out);

/* Internal timestamp finder: also reports where the stamp starts. */
double sm__trk_timestamp(const char *s, size_t n, size_t *start, size_t *end);

/* ==== The window ==== */

/* One kept sample and where it sat. */
typedef struct trk_rec {
  sm_track_sample s; /* the parsed facts */
  uint64_t seq;      /* arrival order */
  uint32_t series;   /* counter identity, 0 for step-less samples */
  int epoch_seq;     /* epoch-boundary count when it arrived */
  double ctx_epoch;  /* epoch from the last epoch head, or NAN */
  int eval_seq;      /* evaluation lines and phases seen before it */
} trk_rec;

#define TRK_RING 2048

typedef struct trk_window {
  trk_rec *rec;      /* ring of TRK_RING records */
  uint64_t next_seq; /* sequence of the next record */
  size_t count;      /* records held (<= TRK_RING) */
  size_t head;       /* index of the next slot */
} trk_window;

int sm__trk_window_init(trk_window *w);
void sm__trk_window_release(trk_window *w);
void sm__trk_window_clear(trk_window *w);
/* Adds a sample (or a position); the oldest is dropped when the ring is
 * full. */
void sm__trk_window_add(trk_window *w, const sm_track_sample *s, int epoch_seq,
                        double ctx_epoch, int eval_seq);
/* Removes the newest record when its sequence is seq (a provisional
 * record of an unfinished segment). */
void sm__trk_window_pop(trk_window *w, uint64_t seq);
/* The series identity of a sample (0 when it has no counter). */
uint32_t sm__trk_series(const sm_track_sample *s);
/* Computes the answer over the newest n samples of the main counter. */
void sm__trk_window_answer(const trk_window *w, int n, sm_track_result *r);

/* Robust centre: drops values further than max(3 * 1.4826 * MAD, 5 % of
 * the median) from the median and returns the median of the rest (NAN
 * for no values).  Reorders v; *kept (may be NULL) gets the count kept. */
double sm__trk_robust_median(double *v, size_t n, size_t *kept);

/* ==== Start-up of a run ==== */

#define TRK_START_BANNER 0x01  /* a launcher's or trainer's start banner */
#define TRK_START_CONFIG 0x02  /* a configuration dump */
#define TRK_START_CKPT 0x04    /* a checkpoint loaded */
#define TRK_START_SUMMARY 0x08 /* a model summary (parameter counts) */
#define TRK_START_RESUME 0x10  /* a resume */

/* The start-up kinds (TRK_START_*) a cleaned line shows, 0 for none;
 * *resume gets the step a resume names, or -1. */
int sm__trk_startup_mark(const char *s, size_t n, long long *resume);
/* Whether the start-up lines met after the newest progress (kinds OR-ed,
 * the newest resumed step) show that a new run started: a resume that
 * names its step, or two kinds of start-up output. */
int sm__trk_startup_decided(int kinds, long long resume);

/* ==== Bare pairs ==== */

/* The values of a run of bare "STEP VALUE" pairs. */
typedef struct trk_bare {
  int n;            /* values in the run */
  int in01;         /* all of them in [0, 1] */
  int rises, falls; /* changes up and down */
  double first, last;
} trk_bare;

/* 1 when a line of at most six words (no number standing alone) names an
 * accuracy-like metric (acc, f1, map, bleu ...) and no loss; -1 when it
 * names a loss; 0 otherwise. */
int sm__trk_metric_head(const char *s, size_t n);
/* Adds a value to the run (new_run: the step went back, a new run). */
void sm__trk_bare_value(trk_bare *b, int new_run, double v);
/* Whether the run's values look like an accuracy: at least three, all in
 * [0, 1], rising (at least two rises, four for each fall) and ending
 * above where they began. */
int sm__trk_bare_metric_like(const trk_bare *b);

/* ==== Other writers' records ==== */

/* Where another writer's record glued to a line starts (a Python
 * warning's "FILE.py:LINE: NAMEWarning:", a logging record's
 * "LEVEL:logger:" or "YYYY-MM-DD HH:MM:SS -", an NCCL INFO/WARN line, a
 * wandb message): its offset when text precedes it, else 0.  One pass. */
size_t sm__trk_glued_record(const char *s, size_t n);

/* ==== Vertical metric tables ==== */

/* A cell of a table row: s[off .. off + len). */
typedef struct trk_vcell {
  size_t off, len;
} trk_vcell;

#define TRK_VPRE 32

/* The rows of one record joined into one line of "key=value" pairs. */
typedef struct trk_vrec {
  char text[2048];
  size_t len;
  int rows;               /* rows joined */
  int skip;               /* under an evaluation namespace ("eval/") */
  int kv;                 /* its rows are "key: value" lines, not table rows */
  uint64_t keys;          /* hash of the keys of a "key: value" record */
  uint64_t pre[TRK_VPRE]; /* the hash after each of its first rows */
} trk_vrec;

/* The rows of a record as printed, held back until the record is
 * known to be one (at most TRK_VHOLD rows, 8 KiB). */
#define TRK_VHOLD 64
typedef struct trk_vheld {
  char text[8192];
  size_t len;
  int n;
  uint16_t off[TRK_VHOLD], olen[TRK_VHOLD];
  int cls[TRK_VHOLD], rank[TRK_VHOLD];
} trk_vheld;

/* A rule of dashes or of '=' alone on its line (at least ten): the edge
 * of a record of an RL logger's vertical table or a print loop's. */
int sm__trk_vrule(const char *s, size_t n);
/* A line "key: value" and nothing else: a key of one to four words, one
 * number or clock with a unit of at most three letters ("time elapsed:
 * 0:51:28", "ret loss: 0.78261"); 1 with the cells. */
int sm__trk_vkv(const char *s, size_t n, trk_vcell *key, trk_vcell *val);
/* A heading of one word and an integer alone on its line ("Iteration
 * 12"): the first row of a print loop's record after its rule. */
int sm__trk_vheading(const char *s, size_t n, trk_vcell *key, trk_vcell *val);
/* Adds a "key: value" row to a record, noting its key. */
void sm__trk_vrec_kv(trk_vrec *r, const char *s, const trk_vcell *key,
                     const trk_vcell *val);
/* A row of two cells, "| key | value |" (the value may be empty: a
 * namespace row "| train/ | |"); 1 with the cells trimmed. */
int sm__trk_vrow(const char *s, size_t n, trk_vcell *key, trk_vcell *val);
/* Adds a row to the record (a namespace row names the rows below it). */
void sm__trk_vrec_row(trk_vrec *r, const char *s, const trk_vcell *key,
                      const trk_vcell *val);
void sm__trk_vrec_reset(trk_vrec *r);

#endif /* SM_TRACK_INT_H */
