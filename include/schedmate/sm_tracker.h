/* sm_tracker.h - the Metric Tracker: reads a training job's log without
 * any help from the job and reports its current progress (step, total
 * steps, epoch, loss, learning rate, step time, throughput), or says that
 * the log shows no training progress.
 *
 * How it works, in short (docs/tracker.md has the long version):
 *
 *   1. The file is read backwards from its end in blocks.  Each line is
 *      cleaned (terminal escapes, multi-rank prefixes such as "[rank3]:"),
 *      split at carriage returns (progress-bar updates) and put through a
 *      coarse filter: a prototype classifier over hashed line features
 *      (sm_text.h) that keeps only "progress" lines, plus explicit guards
 *      that keep evaluation and download/loading bars out.
 *   2. Kept lines are parsed by a general key/value tokenizer driven by a
 *      table of key synonyms ("lr", "learning_rate", "learning rate"...),
 *      with the structures of progress bars, bracketed epoch counters and
 *      column tables.  Reading stops as soon as N samples of the main
 *      counter are known, so the cost does not grow with the file.
 *   3. The samples of the tail are replayed in file order; the newest
 *      sample gives step and loss, the median of the window (outliers
 *      dropped by median absolute deviation) gives the step time.
 *
 * Nothing is guessed: unknown values are reported as unknown (NAN here,
 * null in JSON), and a log without training progress has status
 * "missing". */
#ifndef SM_TRACKER_H
#define SM_TRACKER_H

#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Constants ==== */

#define SM_TRACK_DEFAULT_SAMPLES 10
/* Backward scan budget: a log that shows no progress in its last 64 MiB
 * is reported as missing (with scan_limited set). */
#define SM_TRACK_DEFAULT_MAX_SCAN ((uint64_t)64 << 20)

/* Line classes of the coarse filter, in the order of the corpus
 * data/classifier/tracker.tsv ("# classes:" line). */
typedef enum sm_track_class {
  SM_TRACK_PROGRESS = 0, /* a training step, bar update or metrics line */
  SM_TRACK_EVAL,         /* validation, evaluation, test, inference */
  SM_TRACK_INIT,         /* start-up: downloads, loading, configuration */
  SM_TRACK_WARNING,      /* warnings and deprecations */
  SM_TRACK_ERROR,        /* errors and tracebacks */
  SM_TRACK_INFO,         /* anything else */
  SM_TRACK_NCLASSES
} sm_track_class;

/* Returns the class name ("progress", ...) or "unknown" for -1. */
SM_EXTERN const char *sm_track_class_name(int cls);

/* ==== One parsed line ==== */

/* Where a sample's step counter came from, strongest first.  A line that
 * prints several counters reports the strongest; the window follows the
 * strongest counter of the log. */
typedef enum sm_track_counter {
  SM_TC_NONE = 0, /* no step counter (a loss-only line) */
  SM_TC_MICRO,    /* micro-step / micro-batch counter */
  SM_TC_FRACTION, /* a bare "n/m" with no key */
  SM_TC_BATCH,    /* in-epoch batch index: bars, [e][i/N], "batch" */
  SM_TC_ITER,     /* "iter", "iteration", "it", "s:" */
  SM_TC_STEP      /* optimizer step: "step", "global_step", "updates" */
} sm_track_counter;

/* Line kinds after the fine parse. */
typedef enum sm_track_kind {
  SM_TK_NONE = 0,   /* nothing usable */
  SM_TK_SAMPLE,     /* a training sample */
  SM_TK_EVAL,       /* evaluation output (never a training sample) */
  SM_TK_INIT,       /* download / loading / preprocessing bar */
  SM_TK_EPOCH_HEAD, /* "Epoch 3/10" alone: sets the epoch context */
  SM_TK_TABLE_HEAD, /* column names of a table of values */
  SM_TK_POSITION,   /* "Epoch 113, global step 40128: ..." (a checkpoint
                     * callback): where training is, without metrics */
  SM_TK_PHASE       /* a line without numbers that announces a loop that
                     * is not training ("Extracting features for train
                     * set...", "***** Running Evaluation *****") */
  ,
  SM_TK_CKPT, /* a checkpoint being saved that names the step it holds
               * ("Checkpoint global_step1971 is about to be saved!",
               * "Saving model checkpoint to out/checkpoint-500"):
               * ckpt_step */
  SM_TK_RUN   /* a summary of the whole run that prints its average step
               * rate (HF's final {'train_runtime': ...,
               * 'train_steps_per_second': 0.141, ...}): rate */
} sm_track_kind;

#define SM_TRACK_UNIT_MAX 16
#define SM_TRACK_NAME_MAX 40

/* The facts of one line (one carriage-return segment).  Numbers that the
 * line does not print are NAN; has_step / has_total say whether the
 * integer fields are set. */
typedef struct sm_track_sample {
  int kind;                             /* an sm_track_kind */
  int counter;                          /* an sm_track_counter */
  char counter_name[SM_TRACK_NAME_MAX]; /* the counter's key as printed
                                         * (canonical), "tqdm", "keras"... */
  int has_step;                         /* step is set */
  long long step;                       /* the counter's value */
  int has_total;                        /* total is set */
  long long total;                      /* the counter's printed denominator */
  double epoch;                         /* epoch as printed */
  double epoch_total; /* the epochs of the run printed beside it ("Epoch
                       * 2/120"), or NAN */
  double loss;        /* training loss */
  int loss_nonfinite; /* the loss printed was nan or inf (loss is NAN) */
  double lr;          /* learning rate */
  double step_time;   /* printed time per step, seconds */
  char time_key[SM_TRACK_NAME_MAX]; /* key the step time came from */
  double rate;                      /* steps per second (it/s, 1/(s/it), ups) */
  double throughput;                /* newest throughput figure as printed */
  char tp_unit[SM_TRACK_UNIT_MAX];  /* its unit ("samples/s", "it/s"...) */
  double cum_time;                  /* cumulative training time, seconds */
  double anon_time;                 /* an unkeyed time value ("| 2241.1s"), s */
  double ts;                        /* the line's timestamp, seconds, or NAN */
  double bar_elapsed;  /* a progress bar's elapsed time, s, or NAN */
  int n_cols;          /* table rows: leading values; table heads: names */
  int train_clock;     /* the line names its training clock
                        * ("train_time", "train_wall") */
  int train_mark;      /* the line shows training (a loss of any kind, or
                        * a key that names training) */
  int train_named;     /* a key names training explicitly ("train_loss",
                        * "Train Loss", "loss train:") */
  int coarse;          /* the counter was printed abbreviated ("50K") */
  int pos_extra;       /* the line prints a position in a loop besides its
                        * counter (a fraction, a bar, a batch index) */
  int counter_tok;     /* token index of the counter (parser internal) */
  double batch_size;   /* samples per step printed on the line, or NAN */
  double batch_tokens; /* tokens per step printed on the line, or NAN */
  double tp_time;      /* step time from batch / throughput, or NAN */
  int rank;            /* the rank a launcher prefix named, or -1 */
  int time_sig;        /* significant digits of the printed step time */
  int rate_sig;        /* significant digits of the printed rate */
  int summary;         /* the line is, or announces, an epoch summary
                        * ("(average epoch stats below)") */
  int table_row;       /* its values were named by the columns of a table
                        * head above (YOLO, fastai) */
  int loss_avg;        /* the loss is a running or epoch average, the only
                        * loss the line prints ("avg_loss=0.0000") */
  int time_bare;       /* the step time is a bare "time" figure with no
                        * sign of what it times (no unit, no running
                        * average beside it, no data time, eta or
                        * throughput on the line): on lines logged every
                        * few steps it may be the interval's */
  long long ckpt_step; /* SM_TK_CKPT: the step the checkpoint holds */
  int run_summary;     /* the line sums the whole run up (a figure of the
                        * run: "train_runtime") */
  int bare_pair;       /* an unkeyed "STEP VALUE" line ("[ts] 1016 5.29"):
                        * a sample only inside a run of such lines whose
                        * steps advance by one stride */
} sm_track_sample;

/* Cleans one raw segment into out (cap bytes): drops terminal escapes,
 * control bytes and multi-rank prefixes ("[rank3]:", "0: ",
 * "[default0]:", "[1,0]<stdout>:").  Returns the length written (out is
 * NUL-terminated). */
SM_EXTERN size_t sm_track_clean(const char *s, size_t n, char *out, size_t cap);

/* Parses one cleaned segment (no newline or carriage return inside) into
 * *out.  Never fails: a line without facts gives kind SM_TK_NONE.  At most
 * the first 8 KiB of the segment are looked at. */
SM_EXTERN void sm_track_parse(const char *seg, size_t n, sm_track_sample *out);

/* Parses a timestamp at the start of a line (ISO dates, "2022/08/22
 * 15:51:53", "[11/16 03:11:50]", glog "I0615 15:21:45.879393").  Returns
 * seconds on a monotonic-within-a-log scale, or NAN; *end (may be NULL)
 * receives the offset just past it. */
SM_EXTERN double sm_track_timestamp(const char *s, size_t n, size_t *end);

/* ==== The tracker ==== */

typedef struct sm_track_opts {
  int samples;               /* N samples to collect [10] */
  uint64_t max_scan;         /* bytes to look back at most [64 MiB] */
  const sm_protoset *protos; /* line classifier [built-in tracker set] */
} sm_track_opts;

/* The answer (the JSON contract of docs/design.md section 3). */
typedef struct sm_track_result {
  int ok;                          /* 1: status "ok", 0: "missing" */
  int has_step;                    /* step is set */
  long long step;                  /* newest step counter as printed */
  int has_total;                   /* total_steps is set */
  long long total_steps;           /* its printed denominator */
  double epoch;                    /* NAN when unknown */
  double loss;                     /* newest training loss, NAN when unknown */
  double lr;                       /* newest learning rate, NAN when unknown */
  double step_time_s;              /* median step time of the window, or NAN */
  const char *step_time_basis;     /* where the step time comes from:
                                    * "explicit" (a per-step time or rate
                                    * printed), "throughput" (batch size /
                                    * throughput), "timestamps" (clocks of
                                    * consecutive lines / step delta), "bar"
                                    * (a bar's elapsed time / its count), or
                                    * NULL */
  const char *step_time_source;    /* finer: "printed", "rate", "interval",
                                    * "batch/throughput", "timestamps",
                                    * "elapsed clock", "bar elapsed" */
  const char *step_time_weak;      /* why the basis is weak, or NULL: the
                                    * step time rests on something other
                                    * than the followed counter's own
                                    * lines (another counter's lines, an
                                    * unlabelled figure, the run's average,
                                    * a batch announced at start-up) */
  int loss_nonfinite;              /* the newest training loss printed was
                                    * nan or inf (loss is NAN) */
  const char *step_scope;          /* "global" (never restarts within a
                                    * run), "epoch" (restarts every epoch or
                                    * outer loop) or NULL */
  int restarts;                    /* runs seen in the window's stretch
                                    * before the newest (a counter that went
                                    * back: restart, resume) */
  int starting;                    /* the newest run restarted and printed
                                    * only its start-up (step: the step it
                                    * resumed from, or unknown) */
  int binary;                      /* the bytes read were not text */
  double throughput;               /* newest throughput, NAN when unknown */
  char tp_unit[SM_TRACK_UNIT_MAX]; /* its unit */
  char counter[SM_TRACK_NAME_MAX]; /* the counter followed */
  const char *scope;               /* "optimizer step", "iteration", "in-epoch
                                    * batch", "micro-step", "fraction" or NULL */
  int samples;                     /* samples in the window */
  uint64_t lines_scanned;          /* lines read from the log */
  uint64_t bytes_read;             /* bytes read from the log */
  int scan_limited;                /* the look-back budget ran out */
  char format[256];                /* what was recognised, in words */
} sm_track_result;

typedef struct sm_tracker sm_tracker;

/* A tracker with the given options (NULL: defaults).  Returns NULL on
 * exhaustion. */
SM_EXTERN sm_tracker *sm_tracker_new(const sm_track_opts *opts);
/* Frees the tracker and closes its file; NULL is a no-op. */
SM_EXTERN void sm_tracker_free(sm_tracker *t);

/* Reads the tail of the log at path, newest lines first, and computes the
 * answer into *res.  The file stays open for sm_tracker_poll.  Returns 0,
 * or a negative code with a message naming the file in err (unreadable
 * path, a directory, a device...). */
SM_EXTERN int sm_tracker_scan(sm_tracker *t, const char *path,
                              sm_track_result *res, sm_err *err);

/* After sm_tracker_scan: reads only the bytes appended since, follows a
 * truncated file from its start and a rotated one (a new inode at the
 * path) from the start of the new file.  Returns 1 when the answer in
 * *res changed, 0 when not, or a negative code (the file vanished and did
 * not come back is not an error: it returns 0). */
SM_EXTERN int sm_tracker_poll(sm_tracker *t, sm_track_result *res, sm_err *err);

/* Feeds log bytes in file order without a file (streams, tests).  Only
 * complete lines (ended by '\n' or '\r') are used; the rest waits for the
 * next call.  Returns 0 or SM_ENOMEM. */
SM_EXTERN int sm_tracker_feed(sm_tracker *t, const char *data, size_t n);

/* Forgets every sample and the context (the followed file stays open);
 * for a new stream through the same tracker. */
SM_EXTERN void sm_tracker_reset(sm_tracker *t);

/* Computes the current answer from what was scanned or fed. */
SM_EXTERN void sm_tracker_result(sm_tracker *t, sm_track_result *res);

/* Writes the answer as one JSON object (the contract's keys plus
 * "counter", "step_time_basis" and "scan_limited").  Returns 0 or
 * SM_ENOMEM / SM_ETOOBIG from the buffer. */
SM_EXTERN int sm_track_result_json(const sm_track_result *r, sm_buf *out);

/* ==== Diagnostics ==== */

/* Classifies every line of a file (the whole file, forward) and counts
 * the lines per class into counts[SM_TRACK_NCLASSES]; *unknown gets the
 * lines below the classifier's threshold or blank.  For the benchmark and
 * for corpus work.  Returns 0 or a negative code. */
SM_EXTERN int sm_track_classify_file(const char *path,
                                     const sm_protoset *protos,
                                     uint64_t *counts, uint64_t *unknown,
                                     uint64_t *lines, uint64_t *bytes,
                                     sm_err *err);

/* The built-in tracker prototype set (learned from
 * data/classifier/tracker.tsv at build time). */
SM_EXTERN const sm_protoset *sm_track_protoset(void);

#ifdef __cplusplus
}
#endif
#endif /* SM_TRACKER_H */
