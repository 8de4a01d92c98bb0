/* window.c - the sample window and the answer.
 *
 * Kept samples go into a ring in file order.  The answer follows one
 * counter (a "series": the key that printed the step, or the bar style):
 * the strongest kind of counter the log prints (optimizer step over
 * iteration over in-epoch batch over a bare fraction over micro-steps),
 * and among equals the one printed most often.  Then, per log:
 *
 *   - loops: when the series interleaves two loops that count to
 *     different totals (a training bar and a validation bar after every
 *     epoch), the loop that shows training (a loss) is followed, else the
 *     one printed most;
 *   - scope: whether the counter is global (it never goes back within a
 *     run) or counts within an epoch or outer loop (it goes back to its
 *     start when the epoch advances), decided from the records;
 *   - runs: a global counter that goes back by more than its usual
 *     stride, or an epoch that goes back, is a restart or a resume: only
 *     the newest run is used;
 *   - summaries: where nearly every line of the series prints its
 *     position in the epoch, a line that does not is an epoch summary
 *     (averages over the epoch), not a step;
 *   - side loops: newest samples that count to another total than the
 *     ones before, with no epoch boundary between (Keras evaluate()
 *     after fit()), are not training;
 *   - positions: a newer line that names the epoch and the global step
 *     without metrics (a checkpoint callback) supersedes a stale bar.
 *
 * Samples of the series with the same step (eight ranks printing the same
 * line, a step reported on two lines) are merged.  The newest N merged
 * samples form the window:
 *
 *   - step, total, epoch: from the newest sample;
 *   - loss, lr, throughput: the newest value in the window, else from a
 *     counter-less line of the same stretch of the log (Hugging Face
 *     prints its loss dict apart from its bar), else from another
 *     counter's lines of that stretch;
 *   - step time, and its basis: "explicit" (per-step times or rates
 *     printed, or the time of a logging interval over its steps),
 *     "throughput" (the batch over the throughput, both printed on the
 *     line), "timestamps" (line timestamps or an elapsed clock between
 *     samples, over the step delta; intervals with evaluation inside do
 *     not count), "bar" (a bar's elapsed time over its count); each time
 *     the median after dropping outliers by median absolute deviation.
 *     The first batch of an epoch (data-loader start-up) is left out of
 *     printed times when the window has others. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "track_int.h"

/* ==== Ring ==== */

int sm__trk_window_init(trk_window *w) {
  memset(w, 0, sizeof(*w));
  w->rec = sm_calloc(TRK_RING, sizeof(trk_rec));
  return w->rec ? 0 : SM_ENOMEM;
}

void sm__trk_window_release(trk_window *w) {
  sm_free(w->rec);
  w->rec = NULL;
}

void sm__trk_window_clear(trk_window *w) {
  w->count = 0;
  w->head = 0;
}

uint32_t sm__trk_series(const sm_track_sample *s) {
  uint64_t h;

  if (!s->has_step)
    return 0;
  h = sm_hash64(s->counter_name, strlen(s->counter_name), (uint64_t)s->counter);
  return (uint32_t)h | 1u;
}

void sm__trk_window_add(trk_window *w, const sm_track_sample *s, int epoch_seq,
                        double ctx_epoch, int eval_seq) {
  trk_rec *r = &w->rec[w->head];

  r->s = *s;
  r->seq = w->next_seq++;
  r->series = sm__trk_series(s);
  r->epoch_seq = epoch_seq;
  r->ctx_epoch = ctx_epoch;
  r->eval_seq = eval_seq;
  w->head = (w->head + 1) % TRK_RING;
  if (w->count < TRK_RING)
    w->count++;
}

void sm__trk_window_pop(trk_window *w, uint64_t seq) {
  size_t last = (w->head + TRK_RING - 1) % TRK_RING;

  if (w->count == 0 || w->rec[last].seq != seq)
    return;
  w->head = last;
  w->count--;
}

/* The i-th newest record (0 = newest). */
static const trk_rec *newest(const trk_window *w, size_t i) {
  return &w->rec[(w->head + TRK_RING - 1 - i) % TRK_RING];
}

/* ==== Robust statistics ==== */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sm__trk_robust_median(double *v, size_t n, size_t *kept) {
  double med, mad, lim;
  double *dev;
  size_t k = 0;

  if (kept)
    *kept = 0;
  if (n == 0)
    return NAN;
  qsort(v, n, sizeof(double), cmp_double);
  med = sm_median(v, n);
  dev = sm_malloc(n * sizeof(double));
  if (dev == NULL) {
    if (kept)
      *kept = n;
    return med;
  }
  for (size_t i = 0; i < n; i++)
    dev[i] = fabs(v[i] - med);
  mad = sm_median(dev, n);
  sm_free(dev);
  lim = 3.0 * 1.4826 * mad;
  if (lim < 0.05 * fabs(med))
    lim = 0.05 * fabs(med);
  for (size_t i = 0; i < n; i++)
    if (fabs(v[i] - med) <= lim)
      v[k++] = v[i];
  if (kept)
    *kept = k;
  return k ? sm_median(v, k) : med;
}

/* ==== Series ==== */

#define MAX_SERIES 32

typedef struct series {
  uint32_t id;     /* series identity */
  int strength;    /* its counter kind */
  int count;       /* records held */
  uint64_t newest; /* sequence of its newest record */
} series;

static int gather_series(const trk_window *w, series *S) {
  int ns = 0;

  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *r = newest(w, i);
    int j;
    if (r->series == 0 || r->s.kind != SM_TK_SAMPLE)
      continue;
    for (j = 0; j < ns; j++)
      if (S[j].id == r->series)
        break;
    if (j == ns) {
      if (ns == MAX_SERIES)
        continue;
      S[ns].id = r->series;
      S[ns].strength = r->s.counter;
      S[ns].count = 0;
      S[ns].newest = r->seq;
      ns++;
    }
    S[j].count++;
  }
  return ns;
}

static int better(const series *a, const series *b) {
  if (a->strength != b->strength)
    return a->strength > b->strength;
  if (a->count != b->count)
    return a->count > b->count;
  return a->newest > b->newest;
}

/* ==== Views: the records an answer is made of ==== */

typedef struct view {
  uint32_t id;     /* series */
  int kind;        /* SM_TK_SAMPLE, or SM_TK_POSITION */
  int by_total;    /* only the loop that counts to total (-1: no total) */
  long long total; /* its total */
  int rank;        /* only this rank's lines, or -1 */
} view;

static int in_view(const trk_rec *r, const view *v) {
  if (r->series != v->id || r->s.kind != v->kind)
    return 0;
  if (v->rank >= 0 && r->s.rank != v->rank)
    return 0;
  if (!v->by_total)
    return 1;
  return v->total < 0 ? !r->s.has_total
                      : r->s.has_total && r->s.total == v->total;
}

static double rec_epoch(const trk_rec *r) {
  return r->s.epoch == r->s.epoch ? r->s.epoch : r->ctx_epoch;
}

static int strong_rec(const trk_rec *r) {
  return r->s.loss == r->s.loss || r->s.loss_nonfinite;
}

/* Two loops printed alike (a training bar and a validation bar after each
 * epoch, counting to other totals) that alternate: the one that shows a
 * training loss is followed, else the one printed most.  Narrows v to
 * that loop's total. */
static void narrow_loops(const trk_window *w, view *v, int n) {
  long long tot[8], prev = 0;
  int cnt[8], strong[8], runs_of[8], nt = 0, runs = 0, seen = 0, best = -1,
                                     groups = 0;

  for (size_t i = 0; i < w->count && seen < 8 * n; i++) {
    const trk_rec *r = newest(w, i);
    long long T;
    int j;
    if (!in_view(r, v))
      continue;
    seen++;
    T = r->s.has_total ? r->s.total : -1;
    for (j = 0; j < nt; j++)
      if (tot[j] == T)
        break;
    if (j == nt) {
      if (nt == 8)
        continue;
      tot[nt] = T;
      cnt[nt] = strong[nt] = runs_of[nt] = 0;
      nt++;
    }
    cnt[j]++;
    strong[j] |= strong_rec(r);
    if (runs == 0 || T != prev) {
      runs++;
      runs_of[j]++;
    }
    prev = T;
  }
  /* Loops that alternate: each comes back after the other (a total that
   * only changes from one epoch to the next, as with a dataset whose size
   * varies, is one loop). */
  for (int j = 0; j < nt; j++) {
    if (cnt[j] < 2 || runs_of[j] < 2)
      continue;
    groups++;
    if (best < 0 || strong[j] > strong[best] ||
        (strong[j] == strong[best] && cnt[j] > cnt[best]))
      best = j;
  }
  if (groups < 2 || runs < 3 || best < 0)
    return;
  v->by_total = 1;
  v->total = tot[best];
}

/* Several ranks print the series, each with its own copy of the counter
 * (a launcher's rank prefixes), and they need not be in step: the lowest
 * rank seen is followed (rank 0 is the one that logs in most
 * frameworks), so that a rank one step behind is not read as the
 * newest step or as a restart. */
static void narrow_ranks(const trk_window *w, view *v, int n) {
  int seen = 0, lowest = -1, other = 0;

  for (size_t i = 0; i < w->count && seen < 8 * n; i++) {
    const trk_rec *r = newest(w, i);
    if (!in_view(r, v))
      continue;
    seen++;
    if (r->s.rank < 0)
      continue;
    if (lowest >= 0 && r->s.rank != lowest)
      other = 1;
    if (lowest < 0 || r->s.rank < lowest)
      lowest = r->s.rank;
  }
  if (other)
    v->rank = lowest;
}

/* ==== Scope ==== */

enum { SCOPE_UNKNOWN = 0, SCOPE_GLOBAL, SCOPE_EPOCH };

/* Whether the counter of view v counts within an epoch (it goes back
 * when the epoch advances, or a finished loop starts again) or globally
 * (it goes on across epochs); without evidence, by its kind: in-epoch
 * positions of bars, brackets and bare fractions with an epoch are per
 * epoch, a bar without any epoch runs over the whole job. */
/* Whether a sample's count is beyond what a global counter with its
 * denominator could have reached by the end of the epoch printed beside
 * it, out of the run's printed epochs (either numbering; a tenth and a
 * step of slack). */
static int beyond_epoch_share(const sm_track_sample *s) {
  double e = s->epoch, et = s->epoch_total;

  if (!(e == e && et == et) || !s->has_total || et < 2 || e < 0 || e > et ||
      s->total <= 0 || s->step > s->total)
    return 0;
  return (double)s->step > (e + 1) * (double)s->total / et * 1.1 + 1;
}

/* True when the records between the i-th and the j-th newest (j < i)
 * have no counter: a loss dict or a run summary between two prints of a
 * bar's final state (HF's last refresh after its summary dict). */
static int only_stepless_between(const trk_window *w, size_t i, size_t j) {
  for (size_t k = j + 1; k < i; k++)
    if (newest(w, k)->series != 0)
      return 0;
  return 1;
}

static int detect_scope(const trk_window *w, const view *v, int counter,
                        int n) {
  const trk_rec *b = NULL;
  int resets = 0, grows = 0, seen = 0, epoch_known = 0, refinished = 0;
  int frac_epoch = 0, below_epoch = 0;
  size_t bi = 0;

  for (size_t i = 0; i < w->count && seen < 8 * n; i++) {
    const trk_rec *a = newest(w, i);
    if (!in_view(a, v))
      continue;
    seen++;
    if (rec_epoch(a) == rec_epoch(a) || a->epoch_seq > 0)
      epoch_known = 1;
    {
      double e = rec_epoch(a);
      /* A Trainer's fractional epoch (19.93) is the global step over the
       * steps of an epoch: no sign of a counter that restarts. */
      if (e == e && e != floor(e))
        frac_epoch = 1;
      /* "[Epoch 400/400][Iter: 90/97]": 90 steps cannot have run 399
       * epochs: the position counts inside the epoch. */
      if (e == e && a->s.has_total && e >= 3 && (double)a->s.step < e - 1)
        below_epoch = 1;
      /* "[Epoch 2/120][Iter: 30/50]": a counter global over 120 epochs
       * with 50 steps in all could not be past 1.25 at the end of epoch
       * 2: its denominator is the epoch's, and so is its count. */
      if (beyond_epoch_share(&a->s))
        below_epoch = 1;
    }
    if (b != NULL) {
      double ea = rec_epoch(a), eb = rec_epoch(b);
      /* An epoch boundary between them: a later epoch, or a later epoch
       * head; not the first head of the tail read (a->epoch_seq 0: what
       * came before it has no known epoch). */
      int up = (ea == ea && eb == eb && eb > ea) ||
               (!(ea == ea && eb == eb) && b->epoch_seq > a->epoch_seq &&
                a->epoch_seq > 0);
      if (up && b->s.step < a->s.step)
        resets++;
      else if (up && b->s.step > a->s.step)
        grows++;
      else if (!up && a->s.has_total && b->s.step < a->s.step &&
               a->s.step * 10 >= a->s.total * 9 &&
               b->s.step * 2 <= a->s.total &&
               !(b->s.has_total && b->s.total != a->s.total))
        resets++; /* from near its total back into its first half (of the
                   * same loop: "Upload 3 LFS files: 3/3" after the last
                   * training update is another bar) */
      /* A finished loop printed again: it restarted; not the same final
       * state printed twice in a row (two ranks, a last refresh). */
      if (a->s.has_total && a->s.step >= a->s.total && b->s.step <= a->s.step &&
          !(b->s.step == a->s.step && b->eval_seq == a->eval_seq &&
            only_stepless_between(w, i, bi)))
        refinished++;
    }
    b = a;
    bi = i;
  }
  if (resets > grows)
    return SCOPE_EPOCH;
  if (grows > resets)
    return SCOPE_GLOBAL;
  if (below_epoch)
    return SCOPE_EPOCH;
  /* A loop finished and printed again more than once restarts; once
   * (tqdm's final refresh after a summary) is no evidence. */
  if (counter == SM_TC_BATCH || counter == SM_TC_FRACTION)
    return (epoch_known && !frac_epoch) || refinished >= 2 ? SCOPE_EPOCH
                                                           : SCOPE_GLOBAL;
  return SCOPE_GLOBAL;
}

/* ==== Window of one view ==== */

typedef struct went {
  sm_track_sample s; /* merged facts */
  uint64_t seq;      /* sequence of the newest record merged */
  uint64_t seq_old;  /* sequence of the oldest record merged */
  double ep;         /* epoch key of in-epoch counters */
  double ctx_epoch;  /* epoch context of the newest record */
  int eval_seq;      /* evaluation count when the step was first dated */
  int first_batch;   /* the first batch of an epoch (start-up inside) */
} went;

/* The epoch key that tells batches of different epochs apart. */
static double epoch_key(const trk_rec *r) {
  double e = rec_epoch(r);
  return e == e ? e : -1e9 - (double)r->epoch_seq;
}

static void fill(sm_track_sample *d, const sm_track_sample *s) {
#define FILL(x)                                                                \
  if (d->x != d->x)                                                            \
  d->x = s->x
  /* An average printed on a step's summary line ("[step 110]
   * avg_loss=0.0000") gives way to the step's own loss printed on
   * another line of the same step. */
  if ((d->loss != d->loss && !d->loss_nonfinite) ||
      (d->loss_avg && !s->loss_avg &&
       (s->loss == s->loss || s->loss_nonfinite))) {
    d->loss = s->loss;
    d->loss_nonfinite = s->loss_nonfinite;
    d->loss_avg = s->loss_avg;
  }
  FILL(lr);
  FILL(rate);
  FILL(cum_time);
  FILL(anon_time);
  FILL(epoch);
  FILL(tp_time);
  FILL(bar_elapsed);
#undef FILL
  if (d->step_time != d->step_time) {
    d->step_time = s->step_time;
    memcpy(d->time_key, s->time_key, sizeof(d->time_key));
  }
  if (d->throughput != d->throughput) {
    d->throughput = s->throughput;
    memcpy(d->tp_unit, s->tp_unit, sizeof(d->tp_unit));
  }
  if (!d->has_total && s->has_total) {
    d->has_total = 1;
    d->total = s->total;
  }
}

/* True when the bare fractions of a series read "epoch/step" (the
 * numerator stays, the denominator counts), as DeepSpeed's throughput
 * timer prints "0/1048". */
static int swapped_fraction(const trk_window *w, const view *v, int n) {
  long long num = -1, den = -1;
  int seen = 0, dens = 0;

  for (size_t i = 0; i < w->count && seen < 2 * n; i++) {
    const trk_rec *r = newest(w, i);
    if (!in_view(r, v) || !r->s.has_total)
      continue;
    if (seen == 0) {
      num = r->s.step;
      den = r->s.total;
    } else {
      if (r->s.step != num)
        return 0;
      if (r->s.total != den)
        dens++;
    }
    seen++;
  }
  return seen >= 2 && dens > 0;
}

typedef struct built {
  int nw;        /* merged samples in W */
  int scope;     /* SCOPE_* */
  int restarted; /* the window stops at a restart or resume */
  int swap;      /* "epoch/step" fractions read the other way round */
  uint64_t hi;   /* records of the view newer than this are a side loop */
} built;

static long long step_of(const trk_rec *r, int swap) {
  return swap ? r->s.total : r->s.step;
}

/* Where the newest samples of the view (idx, newest first, m of them)
 * are a side loop: the index of the first sample of the loop before it,
 * or 0.  B->hi gets the sequence of that loop's newest record. */
static size_t side_loop(const trk_window *w, const size_t *idx, size_t m, int n,
                        built *B) {
  const trk_rec *r0 = newest(w, idx[0]);
  size_t p = 1;
  while (p < m && newest(w, idx[p])->s.has_total == r0->s.has_total &&
         newest(w, idx[p])->s.total == r0->s.total)
    p++;
  if (p < m && r0->s.has_total && newest(w, idx[p])->s.has_total) {
    const trk_rec *a = newest(w, idx[p - 1]), *b = newest(w, idx[p]);
    double ea = rec_epoch(a), eb = rec_epoch(b);
    int boundary =
        a->epoch_seq != b->epoch_seq || (ea == ea && eb == eb && ea != eb);
    size_t q = p + 1;
    int newer_loss = 0, newer_lr = 0, older_loss = 0;
    while (q < m && newest(w, idx[q])->s.total == b->s.total)
      q++;
    int newer_epochs = 0;
    for (size_t k = 0; k < p; k++) {
      const trk_rec *x = newest(w, idx[k]);
      newer_loss |= strong_rec(x);
      newer_lr |= x->s.lr == x->s.lr;
      if (k > 0) {
        const trk_rec *y = newest(w, idx[k - 1]);
        double ex = rec_epoch(x), ey = rec_epoch(y);
        newer_epochs |=
            x->epoch_seq != y->epoch_seq || (ex == ex && ey == ey && ex != ey);
      }
    }
    for (size_t k = p; k < q; k++)
      older_loss |= strong_rec(newest(w, idx[k]));
    /* A side loop may run longer than the window (an evaluation bar
     * of thousands of updates cut by a kill, Keras evaluate() and
     * predict() one after the other) when it shows no training beside
     * a loop that did, or when it follows a loop that finished at its
     * total and prints no learning rate.  A loop's final state alone
     * establishes it (the scan keeps only the last update of a line
     * above a complete window). */
    int finished = b->s.step >= b->s.total, again = 0;
    /* A newer loop seen before the older one is the main loop going
     * on after a side loop of its own (an evaluation bar between two
     * stretches of the training bar). */
    for (size_t k = q; k < m && !again; k++)
      again = newest(w, idx[k])->s.has_total &&
              newest(w, idx[k])->s.total == r0->s.total;
    /* A loop that itself runs through epochs is the training loop (a
     * start-up tool's bar before it, AutoAnchor's, is the other). */
    if (!boundary && !newer_epochs && (q - p >= 2 || finished) &&
        (p < (size_t)n || (!again && ((!newer_loss && older_loss) ||
                                      (finished && !newer_lr))))) {
      B->hi = b->seq;
      return p;
    }
  }
  return 0;
}

/* Collects the newest n merged samples of view v into W (newest first). */
static void build(const trk_window *w, const view *v, int n, went *W,
                  built *B) {
  size_t *idx = sm_malloc(TRK_RING * sizeof(size_t));
  size_t m = 0, start = 0, pe = 0, considered = 0;
  int nw = 0, counter, skip_plain = 0;
  long long stride = 1, min_step = -1;

  memset(B, 0, sizeof(*B));
  B->hi = UINT64_MAX;
  if (idx == NULL)
    return;
  for (size_t i = 0; i < w->count; i++)
    if (in_view(newest(w, i), v))
      idx[m++] = i;
  if (m == 0) {
    sm_free(idx);
    return;
  }
  counter = newest(w, idx[0])->s.counter;
  if (counter == SM_TC_FRACTION)
    B->swap = swapped_fraction(w, v, n);
  B->scope = detect_scope(w, v, counter, n);

  /* Epoch summaries: lines without the position that nearly every line
   * of the series prints. */
  for (size_t j = 0; j < m && considered < (size_t)(4 * n); j++, considered++)
    pe += newest(w, idx[j])->s.pos_extra != 0;
  skip_plain = pe * 4 >= considered * 3 && pe < considered;
  if (skip_plain) {
    size_t k = 0;
    for (size_t j = 0; j < m; j++)
      if (newest(w, idx[j])->s.pos_extra)
        idx[k++] = idx[j];
    m = k;
  }

  /* The usual stride of a global counter, to tell a restart from ranks
   * printing slightly out of order. */
  if (B->scope == SCOPE_GLOBAL) {
    double d[64];
    size_t nd = 0;
    for (size_t j = 1; j < m && nd < 64; j++) {
      long long a = step_of(newest(w, idx[j]), B->swap),
                b = step_of(newest(w, idx[j - 1]), B->swap);
      if (b > a)
        d[nd++] = (double)(b - a);
    }
    if (nd > 0) {
      qsort(d, nd, sizeof(double), cmp_double);
      stride = (long long)sm_median(d, nd);
      if (stride < 1)
        stride = 1;
    }
  }

  /* Side loop: the newest samples count to another total, with no epoch
   * boundary between them and the established samples before. */
  if (!B->swap)
    start = side_loop(w, idx, m, n, B);
  for (size_t j = start; j < m; j++) {
    const trk_rec *r = newest(w, idx[j]);
    sm_track_sample s = r->s;
    double ep;
    int k;

    if (B->swap) {
      s.step = s.total;
      s.has_total = 0;
      s.total = 0;
    }
    /* A restart or a resume ends the run the window describes: a global
     * counter that goes back by more than its stride, an epoch that goes
     * back. */
    if (j > start) {
      const trk_rec *nr = newest(w, idx[j - 1]);
      long long sn = step_of(nr, B->swap);
      double en = rec_epoch(nr), eo = rec_epoch(r);
      if ((B->scope == SCOPE_GLOBAL && s.step > sn + stride) ||
          (en == en && eo == eo && eo > en)) {
        B->restarted = 1;
        break;
      }
    }
    ep = B->scope == SCOPE_EPOCH ? epoch_key(r) : 0;
    for (k = 0; k < nw; k++)
      if (W[k].s.step == s.step && W[k].ep == ep)
        break;
    if (k < nw) {
      fill(&W[k].s, &s);
      W[k].seq_old = r->seq;
      /* The first line printed for a step dates it. */
      if (s.ts == s.ts) {
        W[k].s.ts = s.ts;
        W[k].eval_seq = r->eval_seq;
      }
      continue;
    }
    if (nw == n)
      break;
    W[nw].s = s;
    W[nw].seq = W[nw].seq_old = r->seq;
    W[nw].ep = ep;
    W[nw].ctx_epoch = r->ctx_epoch;
    W[nw].eval_seq = r->eval_seq;
    W[nw].first_batch = 0;
    nw++;
  }
  /* The first batch of each epoch carries the data loader's start-up. */
  if (B->scope == SCOPE_EPOCH) {
    int others = 0;
    for (int i = 0; i < nw; i++)
      if (min_step < 0 || W[i].s.step < min_step)
        min_step = W[i].s.step;
    for (int i = 0; i < nw; i++)
      others += W[i].s.step != min_step;
    if (min_step >= 0 && min_step <= 1 && others >= 2)
      for (int i = 0; i < nw; i++)
        W[i].first_batch = W[i].s.step == min_step;
  }
  B->nw = nw;
  sm_free(idx);
}

/* ==== Step time ==== */

/* The rate a bar shows in its first seconds is the start-up's (data
 * loaders filling, compilation, caches): where the window also holds
 * states of the same bar that ran a minute or more, the states that ran
 * under 10 s are no measure of the pace (a log that kept only a few
 * states of a bar: "6/69763 [00:01<4:46:24, 4.06it/s]" and, two hours
 * on, "24263/69763 [2:03:48<7:09:28, 1.77it/s]").  Returns the elapsed
 * time below which a state's rate is left out: 10 s, or 0 when no state
 * with a rate ran 60 s. */
static double warm_elapsed(const trk_window *w, const view *v, uint64_t lo,
                           int cap, const built *B) {
  double most = 0;
  int k = 0;

  for (size_t i = 0; i < w->count && k < cap; i++) {
    const trk_rec *r = newest(w, i);
    if (r->seq < lo)
      break;
    if (!in_view(r, v) || r->seq > B->hi || !(r->s.rate > 0))
      continue;
    k++;
    if (r->s.bar_elapsed > most)
      most = r->s.bar_elapsed;
  }
  return most >= 60 ? 10 : 0;
}

/* Printed per-step times (which 0), 1/rates (1) or batch/throughput (2)
 * of the records of view v in [lo, now], newest first, at most cap of
 * them.  Every record counts, not only one per step: a log that prints a
 * line per micro-step and an optimizer step every few lines has its time
 * on each.  Records at step skip (the first batch of an epoch) are left
 * out while two others are there. */
static double raw_times(const trk_window *w, const view *v, uint64_t lo,
                        int cap, int which, long long skip, const built *B,
                        const char **key) {
  double *x = sm_malloc(TRK_RING * sizeof(double));
  double t, warm = which == 1 ? warm_elapsed(w, v, lo, cap, B) : 0;
  size_t k = 0;

  if (x == NULL)
    return NAN;
  for (int pass = 0; pass < 2 && k < 2; pass++) {
    k = 0;
    for (size_t i = 0; i < w->count && (int)k < cap; i++) {
      const trk_rec *r = newest(w, i);
      double val = NAN;
      if (r->seq < lo)
        break;
      if (!in_view(r, v) || r->seq > B->hi)
        continue;
      if (pass == 0 && skip >= 0 && step_of(r, B->swap) == skip)
        continue;
      if (r->s.bar_elapsed < warm)
        continue; /* a bar's first seconds (warm_elapsed) */
      if (which == 0)
        val = r->s.step_time;
      else if (which == 1 && r->s.rate == r->s.rate && r->s.rate > 0)
        val = 1.0 / r->s.rate;
      else if (which == 2)
        val = r->s.tp_time;
      if (val == val && val > 0) {
        if (k == 0 && key && which == 0)
          *key = r->s.time_key;
        x[k++] = val;
      }
    }
    if (skip < 0)
      break;
  }
  t = sm__trk_robust_median(x, k, NULL);
  sm_free(x);
  return t;
}

/* Differences of a clock (timestamps 0, cumulative times 1, unlabelled
 * times 2) between consecutive samples, divided by the step delta.  An
 * interval with evaluation output inside measures the evaluation too: it
 * is left out, and when at least half of the intervals have some, the
 * timestamps do not measure training at all. */
static double collect_deltas(const went *W, int nw, int which, int strict) {
  double v[TRK_RING], span = 0;
  size_t k = 0;
  int have = 0, dirty = 0, coarse = 0;
  long long steps = 0;

  for (int i = nw - 1; i > 0; i--) {
    const went *a = &W[i], *b = &W[i - 1];
    double ta, tb;
    long long ds = b->s.step - a->s.step;
    switch (which) {
    case 0:
      ta = a->s.ts;
      tb = b->s.ts;
      break;
    case 1:
      ta = a->s.cum_time;
      tb = b->s.cum_time;
      break;
    default:
      ta = a->s.anon_time;
      tb = b->s.anon_time;
    }
    if (ta != ta || tb != tb)
      continue;
    have++;
    if (ds <= 0 || a->ep != b->ep)
      continue;
    if (tb - ta < 0 || (strict && tb - ta <= 0))
      return NAN;
    if (which == 0 && b->eval_seq != a->eval_seq) {
      dirty++;
      continue;
    }
    v[k++] = (tb - ta) / (double)ds;
    coarse |= which == 0 && tb == ta;
    span += tb - ta;
    steps += ds;
  }
  if (strict && have < 2)
    return NAN;
  if (dirty > 0 && (size_t)dirty >= k)
    return NAN;
  /* Timestamps coarser than the logging interval ("[Mar 29, 16:34:28]"
   * whole seconds, a step of 0.74 s: deltas of 0 and 1 s): each delta is
   * rounded, their sum is not; the span over the steps it covers. */
  if (coarse && steps > 0 && span > 0)
    return span / (double)steps;
  return sm__trk_robust_median(v, k, NULL);
}

/* A clock keyed as cumulative that does not grow ("train_wall=418" of
 * fairseq, reset at every log line) is the time of the logging interval:
 * over the steps since the previous sample it is a step time.  NAN when
 * the clock grows (then it is cumulative, see collect_deltas). */
static double interval_times(const went *W, int nw) {
  double v[TRK_RING];
  size_t k = 0, vals = 0;
  int grows = 1;

  for (int i = nw - 1; i > 0; i--) {
    const went *a = &W[i], *b = &W[i - 1];
    if (a->s.cum_time != a->s.cum_time || b->s.cum_time != b->s.cum_time)
      continue;
    vals++;
    if (!(b->s.cum_time > a->s.cum_time))
      grows = 0;
  }
  if (grows || vals < 2)
    return NAN;
  for (int i = nw - 1; i > 0; i--) {
    const went *a = &W[i], *b = &W[i - 1];
    long long ds = b->s.step - a->s.step;
    if (b->s.cum_time != b->s.cum_time || ds <= 0 || a->ep != b->ep ||
        b->s.cum_time <= 0)
      continue;
    v[k++] = b->s.cum_time / (double)ds;
  }
  return sm__trk_robust_median(v, k, NULL);
}

/* An unlabelled time printed on every line ("| 342.12 ms |") is the time
 * of one step only where the lines are one step apart; otherwise it could
 * as well be the time of a logging interval. */
static double anon_per_step(const went *W, int nw) {
  double v[TRK_RING];
  size_t k = 0;

  for (int i = 0; i < nw; i++) {
    if (W[i].s.anon_time != W[i].s.anon_time)
      continue;
    if (i + 1 < nw && W[i].s.step - W[i + 1].s.step != 1)
      return NAN;
    v[k++] = W[i].s.anon_time;
  }
  if (k < 2)
    return NAN;
  return sm__trk_robust_median(v, k, NULL);
}

/* A bar's elapsed time over its count, where nothing else times a step
 * (a bar without a rate, a Keras epoch line without a per-step time);
 * only bars that ran at least min_elapsed seconds. */
static double bar_times(const went *W, int nw, double min_elapsed) {
  double v[TRK_RING];
  size_t k = 0;

  for (int i = 0; i < nw; i++) {
    const sm_track_sample *s = &W[i].s;
    if (s->bar_elapsed == s->bar_elapsed && s->bar_elapsed > 0 &&
        s->bar_elapsed >= min_elapsed && s->step > 0)
      v[k++] = s->bar_elapsed / (double)s->step;
  }
  return sm__trk_robust_median(v, k, NULL);
}

/* A bar whose rate is its loop's average since the loop began
 * (Lightning draws its training bar with tqdm's smoothing off; tqdm's
 * own default is a moving average): on every state that ran 10 s or
 * more the rate is the count over the elapsed time, within the clock's
 * whole seconds and the rate's rounding.  Such a rate hides a change of
 * pace (a run that slowed down after an hour); the bar's elapsed clock
 * between the window's states measures the current one.  Returns that
 * pace in seconds per step when at least two states show an average
 * rate and the clock is fine enough (every delta 5 s or more, else a
 * span of 20 s or more over the states), else NAN. */
static double average_rate_pace(const went *W, int nw) {
  double v[TRK_RING], span = 0, most = 0;
  size_t k = 0;
  int avg = 0, coarse = 0;
  long long steps = 0;

  for (int i = 0; i < nw; i++) {
    const sm_track_sample *s = &W[i].s;
    double mean;
    if (!(s->rate > 0) || !(s->bar_elapsed >= 10) || s->step <= 0)
      continue;
    mean = (double)s->step / s->bar_elapsed;
    if (fabs(s->rate - mean) > (0.03 + 1.0 / s->bar_elapsed) * mean)
      return NAN; /* a moving average: the rate is the current pace */
    avg++;
  }
  if (avg < 2)
    return NAN;
  for (int i = nw - 1; i > 0; i--) {
    const went *a = &W[i], *b = &W[i - 1];
    long long ds = b->s.step - a->s.step;
    double de = b->s.bar_elapsed - a->s.bar_elapsed;
    /* Evaluation output between two states: the clock ran on it. */
    if (de != de || ds <= 0 || a->ep != b->ep || de < 0 ||
        a->eval_seq != b->eval_seq)
      continue;
    coarse |= de < 5;
    if (de > most)
      most = de;
    v[k++] = de / (double)ds;
    span += de;
    steps += ds;
  }
  if (k == 0)
    return NAN;
  if (!coarse)
    return sm__trk_robust_median(v, k, NULL);
  /* Whole seconds: the span, unless one interval holds most of it (a
   * pause the bar's clock ran through). */
  return span >= 20 && most <= 0.5 * span ? span / (double)steps : NAN;
}

typedef struct timing {
  double t;           /* seconds per step */
  const char *basis;  /* "explicit", "throughput", "timestamps", "bar" */
  const char *source; /* finer: "printed", "rate", "interval", ... */
  const char *key;    /* key of a printed time */
  const char *weak;   /* why the basis is weak, or NULL */
} timing;

/* Sets T to t with a basis when t is a number; returns whether it did. */
static int try_set(timing *T, double t, const char *basis, const char *source) {
  if (t != t || t <= 0)
    return 0;
  T->t = t;
  T->basis = basis;
  T->source = source;
  return 1;
}

/* Significant digits of the newest printed time (which 0) or rate (1)
 * of view v in [lo, now]. */
static int newest_sig(const trk_window *w, const view *v, uint64_t lo,
                      int which) {
  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *r = newest(w, i);
    if (r->seq < lo)
      break;
    if (!in_view(r, v))
      continue;
    if (which == 0 && r->s.step_time == r->s.step_time)
      return r->s.time_sig;
    if (which == 1 && r->s.rate == r->s.rate)
      return r->s.rate_sig;
  }
  return 0;
}

/* The range a value printed with one significant digit stands for:
 * "2s" is 1.5 to 2.5 s, a rate of "0.02" is 0.015 to 0.025. */
static void rounding_range(double v, double *lo, double *hi) {
  double mag = pow(10, floor(log10(v)));
  double d = floor(v / mag + 0.5), h;
  if (d < 1)
    d = 1;
  h = v * 0.5 / d;
  *lo = v - h;
  *hi = v + h;
}

/* The median step delta between consecutive samples of W. */
static long long window_stride(const went *W, int nw) {
  double d[TRK_RING];
  size_t k = 0;

  for (int i = 1; i < nw; i++)
    if (W[i - 1].s.step > W[i].s.step && W[i - 1].ep == W[i].ep)
      d[k++] = (double)(W[i - 1].s.step - W[i].s.step);
  if (k == 0)
    return 1;
  qsort(d, k, sizeof(double), cmp_double);
  return (long long)sm_median(d, k);
}

/* A time printed on lines logged every k > 1 steps may be the time of
 * the logging interval rather than of one step ("step 50 | loss 2.3 |
 * time 25.3s" every 50 steps).  Where the lines' clocks (timestamps, or
 * an elapsed clock) measure the same stretch, the two agree on which it
 * is: a printed time that matches the clock over the interval (within
 * 15 %) and is well above the clock's time per step is the interval's,
 * and over its steps a step time.  Rewrites E and returns 1 then. */
static int interval_printed(const went *W, int nw, timing *E) {
  long long k = window_stride(W, nw);
  double per = collect_deltas(W, nw, 0, 0);

  if (!(per == per && per > 0))
    per = collect_deltas(W, nw, 1, 0);
  if (k < 2 || !(per == per && per > 0))
    return 0;
  if (fabs(E->t - per * (double)k) > 0.15 * per * (double)k || E->t < 2 * per)
    return 0;
  E->t /= (double)k;
  E->source = "interval";
  return 1;
}

/* The step time of one view's window, by the bases in order.  A printed
 * time or rate rounded to one significant digit (Keras' "2s/step",
 * fairseq's "ups=0.02") gives way to a finer measure of the same window
 * (an interval clock, timestamps, a bar's elapsed time) that falls in
 * the range the rounded value stands for. */
static int view_timing(const trk_window *w, const view *v, uint64_t lo, int cap,
                       const went *W, const built *B, long long skip,
                       timing *T) {
  int nw = B->nw, which = -1;
  timing E = *T, A = *T;

  if (try_set(&E, raw_times(w, v, lo, cap, 0, skip, B, &E.key), "explicit",
              "printed"))
    which = 0;
  else if (try_set(&E, raw_times(w, v, lo, cap, 1, skip, B, NULL), "explicit",
                   "rate"))
    which = 1;
  if (which == 1) {
    /* An average rate that the bar's clock says is no longer the pace:
     * the pace (average_rate_pace). */
    double pace = average_rate_pace(W, nw);
    if (pace == pace && fabs(pace - E.t) > 0.25 * E.t &&
        try_set(T, pace, "timestamps", "bar elapsed clock"))
      return 1;
  }
  /* Finer than one digit: an interval clock, or a bar that ran long
   * enough for its whole seconds to be precise (100 s: 0.5 %). */
  if (which >= 0 && newest_sig(w, v, lo, which) == 1 &&
      (try_set(&A, interval_times(W, nw), "explicit", "interval") ||
       try_set(&A, bar_times(W, nw, 100), "bar", "bar elapsed"))) {
    double a, b;
    if (which == 0) {
      rounding_range(E.t, &a, &b);
    } else {
      double ra, rb;
      rounding_range(1.0 / E.t, &ra, &rb);
      a = 1.0 / rb;
      b = 1.0 / ra;
    }
    if (A.t >= a && A.t <= b) {
      *T = A;
      return 1;
    }
  }
  if (which == 0 && !interval_printed(W, nw, &E) && nw >= 2 &&
      W[0].s.time_bare && window_stride(W, nw) >= 2 &&
      collect_deltas(W, nw, 0, 0) != collect_deltas(W, nw, 0, 0) &&
      collect_deltas(W, nw, 1, 0) != collect_deltas(W, nw, 1, 0))
    /* A bare "time" on lines logged every few steps, with no clock to
     * tell a step's time from the interval's ("batch: 260, time: 8.56"
     * every 20 batches): unknown rather than a guess. */
    return 0;
  if (which >= 0) {
    *T = E;
    return 1;
  }
  return try_set(T, interval_times(W, nw), "explicit", "interval") ||
         try_set(T, raw_times(w, v, lo, cap, 2, skip, B, NULL), "throughput",
                 "batch/throughput") ||
         try_set(T, collect_deltas(W, nw, 0, 0), "timestamps", "timestamps");
}

/* ==== The answer ==== */

static void result_init(sm_track_result *r) {
  memset(r, 0, sizeof(*r));
  r->epoch = r->loss = r->lr = r->step_time_s = r->throughput = NAN;
}

static const char *scope_name(int counter) {
  switch (counter) {
  case SM_TC_STEP:
    return "optimizer step";
  case SM_TC_ITER:
    return "iteration";
  case SM_TC_BATCH:
    return "in-epoch batch";
  case SM_TC_FRACTION:
    return "fraction";
  case SM_TC_MICRO:
    return "micro-step";
  default:
    return NULL;
  }
}

static const char *style_name(const char *counter) {
  if (strcmp(counter, "tqdm") == 0)
    return "tqdm bar";
  if (strcmp(counter, "keras") == 0)
    return "Keras bar";
  if (strcmp(counter, "bar") == 0)
    return "rich progress bar";
  if (strcmp(counter, "bracket") == 0)
    return "bracketed [epoch][batch/total]";
  if (strcmp(counter, "pair") == 0)
    return "[epoch, batch] pair";
  if (strcmp(counter, "fraction") == 0)
    return "bare n/m fraction";
  return "key/value line";
}

/* Newest counter-less or other-series sample in [lo, now] with a value:
 * which 0 = loss, 1 = lr, 2 = throughput, 3 = epoch.  only_stepless:
 * counter-less lines only. */
static const trk_rec *fallback(const trk_window *w, uint64_t lo,
                               const view *skip, int which, int only_stepless) {
  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *r = newest(w, i);
    double v;
    if (r->seq < lo)
      break;
    if (r->s.kind != SM_TK_SAMPLE || (skip && in_view(r, skip)) ||
        (skip && r->series == skip->id) || (only_stepless && r->series != 0))
      continue;
    v = which == 0   ? r->s.loss
        : which == 1 ? r->s.lr
        : which == 2 ? r->s.throughput
                     : r->s.epoch;
    if (v == v || (which == 0 && r->s.loss_nonfinite))
      return r;
  }
  return NULL;
}

/* The newest training loss older than the window (seq < lo) of a line
 * that is not the followed counter's, or NULL; the search stops where
 * the followed counter went back (read newest first, its step grew)
 * other than at an earlier epoch: a restart or the start of another
 * loop, whose losses are not the newest run's. */
static const trk_rec *older_loss(const trk_window *w, uint64_t lo,
                                 const view *V) {
  long long below = -1;
  double below_ep = NAN;

  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *r = newest(w, i);
    if (r->s.kind != SM_TK_SAMPLE)
      continue;
    if (r->series == V->id) {
      /* Going back at an earlier epoch is the loop of that epoch. */
      if (below >= 0 && r->s.step > below && !(rec_epoch(r) < below_ep))
        return NULL;
      below = r->s.step;
      below_ep = rec_epoch(r);
      continue;
    }
    if (r->seq < lo && (r->s.loss == r->s.loss || r->s.loss_nonfinite))
      return r;
  }
  return NULL;
}

/* Per-step times of counter-less lines in [lo, now]. */
static int stepless_timing(const trk_window *w, uint64_t lo, int n, timing *T) {
  double e[TRK_RING], q[TRK_RING];
  size_t ne = 0, nq = 0;

  for (size_t i = 0; i < w->count && (int)(ne + nq) < 4 * n; i++) {
    const trk_rec *r = newest(w, i);
    if (r->seq < lo)
      break;
    if (r->series != 0 || r->s.kind != SM_TK_SAMPLE)
      continue;
    if (r->s.step_time == r->s.step_time) {
      if (ne == 0)
        T->key = r->s.time_key;
      if ((int)ne < n)
        e[ne++] = r->s.step_time;
    } else if (r->s.rate == r->s.rate && r->s.rate > 0 && (int)nq < n) {
      q[nq++] = 1.0 / r->s.rate;
    }
  }
  /* Times that only grow, newest first decreasing, are a clock since
   * some start ("epoch at time 185s"), not the time of a step. */
  if (ne >= 4) {
    size_t up = 0;
    for (size_t i = 1; i < ne; i++)
      up += e[i] < e[i - 1];
    if (up == ne - 1)
      ne = 0;
  }
  if (ne > 0)
    return try_set(T, sm__trk_robust_median(e, ne, NULL), "explicit",
                   "printed");
  if (nq > 0)
    return try_set(T, sm__trk_robust_median(q, nq, NULL), "explicit", "rate");
  return 0;
}

/* A derived value (a median of two, an inverse) rounded to six
 * significant digits: no more precision than the log printed, and no
 * floating-point noise in the answer. */
static double six_digits(double v) {
  char buf[32];

  if (v != v)
    return v;
  snprintf(buf, sizeof(buf), "%.6g", v);
  return strtod(buf, NULL);
}

static void set_tp(sm_track_result *r, double v, const char *unit) {
  r->throughput = six_digits(v);
  snprintf(r->tp_unit, sizeof(r->tp_unit), "%s", unit);
}

/* Answer from counter-less samples only (a log that never prints a step:
 * loss and time may still be known). */
/* The step of the newest checkpoint saved after the newest metrics, when
 * an older save (metrics between them) names a smaller step: a cadence of
 * saves, not one line. */
static int ckpt_cadence(const trk_window *w, long long *step) {
  long long newer = -1;
  int between = 0;

  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *x = newest(w, i);
    if (x->s.kind == SM_TK_SAMPLE) {
      if (newer < 0)
        return 0; /* the newest metrics come after every save */
      between = 1;
    } else if (x->s.kind == SM_TK_CKPT) {
      if (newer < 0)
        newer = x->s.ckpt_step;
      else if (between) {
        if (x->s.ckpt_step >= newer)
          return 0;
        *step = newer;
        return 1;
      }
    }
  }
  return 0;
}

static void set_ckpt_step(sm_track_result *r, long long step) {
  r->has_step = 1;
  r->step = step;
  r->step_scope = "global";
  snprintf(r->counter, sizeof(r->counter), "checkpoint");
}

static void answer_stepless(const trk_window *w, int n, sm_track_result *r) {
  long long ck;
  double e[TRK_RING], q[TRK_RING], run_rate = NAN;
  size_t ne = 0, nq = 0;
  int used = 0, loss_done = 0;
  const char *key = NULL;

  for (size_t i = 0; i < w->count && used < n; i++) {
    const trk_rec *x = newest(w, i);
    if (x->s.kind != SM_TK_SAMPLE)
      continue;
    used++;
    if (!loss_done && (x->s.loss == x->s.loss || x->s.loss_nonfinite)) {
      r->loss = x->s.loss;
      r->loss_nonfinite = x->s.loss_nonfinite;
      loss_done = 1;
    }
    if (r->lr != r->lr)
      r->lr = x->s.lr;
    if (r->epoch != r->epoch)
      r->epoch = rec_epoch(x);
    if (r->throughput != r->throughput && x->s.throughput == x->s.throughput)
      set_tp(r, x->s.throughput, x->s.tp_unit);
    if (x->s.step_time == x->s.step_time) {
      if (key == NULL)
        key = x->s.time_key;
      e[ne++] = x->s.step_time;
    } else if (x->s.rate == x->s.rate && x->s.rate > 0) {
      q[nq++] = 1.0 / x->s.rate;
    }
  }
  /* Without a counter, a loss, a learning rate or an epoch, a time or a
   * rate alone is no training progress (a data loader's "dt=6.0h", a
   * download's pace): missing rather than a step time of nothing. */
  if (used == 0 || (!loss_done && r->lr != r->lr && r->epoch != r->epoch)) {
    result_init(r);
    return;
  }
  r->ok = 1;
  r->samples = used;
  /* A checkpoint saved after the newest metrics, naming its step: where
   * training was when it saved (a Trainer's loss dicts print no step);
   * the run's summary after them, its average step rate. */
  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *x = newest(w, i);
    if (x->s.kind == SM_TK_SAMPLE)
      break;
    if (x->s.kind == SM_TK_RUN && run_rate != run_rate)
      run_rate = x->s.rate;
  }
  /* Only a run's own saving cadence names the step: an earlier save,
   * metrics in between, with a smaller step.  One save line alone, or
   * the same one repeated, may be another process's chatter. */
  if (ckpt_cadence(w, &ck))
    set_ckpt_step(r, ck);
  if (ne > 0) {
    r->step_time_s = six_digits(sm__trk_robust_median(e, ne, NULL));
    r->step_time_basis = "explicit";
    r->step_time_source = "printed";
  } else if (nq > 0) {
    r->step_time_s = six_digits(sm__trk_robust_median(q, nq, NULL));
    r->step_time_basis = "explicit";
    r->step_time_source = "rate";
  } else if (run_rate > 0) {
    r->step_time_s = six_digits(1.0 / run_rate);
    r->step_time_basis = "explicit";
    r->step_time_source = "run average";
    r->step_time_weak = "the run's average rate, not the newest steps'";
  }
  snprintf(r->format, sizeof(r->format),
           "metrics without a step counter%s; step time %s",
           r->has_step ? "; step from the checkpoint saved after them" : "",
           r->step_time_source ? r->step_time_source : "unknown");
}

/* The newest position record ("Epoch 113, global step 40128: ..."). */
static const trk_rec *newest_position(const trk_window *w) {
  for (size_t i = 0; i < w->count; i++)
    if (newest(w, i)->s.kind == SM_TK_POSITION)
      return newest(w, i);
  return NULL;
}

/* Fills the answer's step, total, epoch and counter from W[0]. */
static void set_position(sm_track_result *r, const went *W0, int scope) {
  r->ok = 1;
  r->has_step = 1;
  r->step = W0->s.step;
  r->has_total = W0->s.has_total;
  r->total_steps = W0->s.total;
  r->epoch = W0->s.epoch == W0->s.epoch ? W0->s.epoch : W0->ctx_epoch;
  snprintf(r->counter, sizeof(r->counter), "%s", W0->s.counter_name);
  r->scope = scope_name(W0->s.counter);
  r->step_scope = scope == SCOPE_EPOCH ? "epoch" : "global";
}

/* The series to follow: the best of those printed often enough (a
 * counter printed far less often than another, an evaluation or summary
 * line that slipped through, is not followed).  Its index or -1. */
static int pick_series(const series *S, int ns, int n) {
  int maxc = 0, bi = -1;

  for (int i = 0; i < ns; i++)
    maxc = SM_MAX(maxc, S[i].count);
  for (int i = 0; i < ns; i++)
    if ((S[i].count * 4 >= maxc || S[i].count >= n) &&
        (bi < 0 || better(&S[i], &S[bi])))
      bi = i;
  return bi;
}

/* The total where the followed counter does not print it: another
 * counter of the same stretch that counts the same steps ("Progress on:
 * 12.9k/200k" beside "Step 12800:", Megatron's "iteration 2/1000" beside
 * DeepSpeed's "step=2"), else the total a bar counted to before it ran
 * past it. */
static void total_elsewhere(const trk_window *w, const view *V, uint64_t lo,
                            const went *W, int nw, sm_track_result *r) {
  for (size_t i = 0; i < w->count && !r->has_total; i++) {
    const trk_rec *o = newest(w, i);
    if (o->seq < lo)
      break;
    if (o->series == V->id || o->s.kind != SM_TK_SAMPLE || !o->s.has_total ||
        o->s.total < r->step || rec_epoch(o) > 0)
      continue;
    if (llabs(o->s.step - r->step) <= r->step / 100) {
      r->has_total = 1;
      r->total_steps = o->s.total;
    }
  }
  if (!r->has_total && nw > 1 && W[1].s.has_total && W[1].s.total < r->step) {
    /* tqdm's "20001it [...]" after "20000/20000": the total it counted to
     * stands. */
    r->has_total = 1;
    r->total_steps = W[1].s.total;
  }
}

/* A newer line names a later epoch and the global step without metrics
 * (a checkpoint callback after a bar that the log stopped printing): the
 * bar is stale.  The position P is reported; nothing newer measures the
 * loss or the step time (*lo moves past the window).  1 when stale. */
static int stale_bar(const trk_rec *P, const view *V, const went *W,
                     uint64_t *lo, sm_track_result *r) {
  double pe, we = r->epoch;
  int same;
  went pw;

  if (P == NULL || V->kind != SM_TK_SAMPLE || P->seq <= W[0].seq)
    return 0;
  pe = P->s.epoch;
  same = strcmp(P->s.counter_name, r->counter) == 0;
  if (!((same && P->s.step > r->step) ||
        (!same && pe == pe && we == we && pe > we) ||
        (!same && pe == pe && we != we && P->s.step > r->step)))
    return 0;
  memset(&pw, 0, sizeof(pw));
  pw.s = P->s;
  pw.ctx_epoch = P->ctx_epoch;
  set_position(r, &pw, SCOPE_GLOBAL);
  r->samples = 1;
  *lo = W[0].seq + 1;
  return 1;
}

/* Loss, lr, throughput, epoch: the newest of the window, else nearby.  A
 * newest loss of nan or inf is reported as such (loss_nonfinite), not
 * replaced by an older one. */
static void window_metrics(const trk_window *w, const view *V, uint64_t lo,
                           const went *W, int nw, int stale, int restarted,
                           sm_track_result *r) {
  const trk_rec *x;
  int loss_done = 0;

  for (int i = 0; i < nw && !stale; i++) {
    if (r->epoch != r->epoch)
      r->epoch = W[i].s.epoch;
    if (!loss_done && (W[i].s.loss == W[i].s.loss || W[i].s.loss_nonfinite)) {
      r->loss = W[i].s.loss;
      r->loss_nonfinite = W[i].s.loss_nonfinite;
      loss_done = 1;
    }
    if (r->lr != r->lr)
      r->lr = W[i].s.lr;
    if (r->throughput != r->throughput &&
        W[i].s.throughput == W[i].s.throughput)
      set_tp(r, W[i].s.throughput, W[i].s.tp_unit);
  }
  if (!loss_done && (x = fallback(w, lo, V, 0, stale)) != NULL) {
    r->loss = x->s.loss;
    r->loss_nonfinite = x->s.loss_nonfinite;
    loss_done = 1;
  }
  /* The counter prints no loss and no line of its stretch does: the
   * newest training loss above it is the run's newest (HF Trainer's
   * loss dict, printed every few hundred bar updates), unless the run
   * restarted in between. */
  if (!loss_done && !stale && !restarted &&
      (x = older_loss(w, lo, V)) != NULL) {
    r->loss = x->s.loss;
    r->loss_nonfinite = x->s.loss_nonfinite;
  }
  if (r->lr != r->lr && (x = fallback(w, lo, V, 1, stale)) != NULL)
    r->lr = x->s.lr;
  if (r->throughput != r->throughput &&
      (x = fallback(w, lo, V, 2, stale)) != NULL)
    set_tp(r, x->s.throughput, x->s.tp_unit);
  if (r->epoch != r->epoch && (x = fallback(w, lo, V, 3, stale)) != NULL)
    r->epoch = x->s.epoch;
}

/* The step time from another counter's lines of the same stretch of the
 * log, the most frequent first.  1 when one gave it. */
static int other_counter_timing(const trk_window *w, const series *S, int ns,
                                int bi, int n, uint64_t lo, timing *T) {
  went *U = sm_malloc((size_t)n * sizeof(went));
  int order[MAX_SERIES], no = 0, found = 0;

  for (int i = 0; i < ns; i++)
    if (i != bi)
      order[no++] = i;
  for (int a = 0; a < no; a++)
    for (int b = a + 1; b < no; b++)
      if (S[order[b]].count > S[order[a]].count) {
        int tmp = order[a];
        order[a] = order[b];
        order[b] = tmp;
      }
  for (int a = 0; U != NULL && a < no && T->basis == NULL; a++) {
    view V2 = {S[order[a]].id, SM_TK_SAMPLE, 0, 0, -1};
    built B2;
    build(w, &V2, n, U, &B2);
    T->key = NULL;
    if (B2.nw > 0 && U[0].seq >= lo &&
        view_timing(w, &V2, U[B2.nw - 1].seq_old, 4 * n, U, &B2, -1, T))
      found = 1;
  }
  sm_free(U);
  return found;
}

/* The step time, from the first source that gives one: the followed
 * view, counter-less lines, timestamps, elapsed clocks, unlabelled
 * times, the bar, another counter.  Returns how it was reached (for the
 * format line: "" or " (...)"). */
static const char *step_timing(const trk_window *w, const view *V, uint64_t lo,
                               int n, const went *W, const built *B,
                               const series *S, int ns, int bi, timing *T) {
  long long skip = -1;
  int nw = B->nw;

  for (int i = 0; i < nw; i++)
    if (W[i].first_batch)
      skip = W[i].s.step;
  if (view_timing(w, V, lo, 4 * n, W, B, skip, T))
    return "";
  if (stepless_timing(w, lo, n, T))
    return " (counter-less lines)";
  if (try_set(T, collect_deltas(W, nw, 1, 0), "timestamps", "elapsed clock"))
    return "";
  if (try_set(T, collect_deltas(W, nw, 2, 1), "timestamps", "elapsed clock")) {
    T->weak = "an unlabelled column read as an elapsed clock";
    return " (unlabelled elapsed time)";
  }
  if (try_set(T, anon_per_step(W, nw), "explicit", "printed")) {
    T->key = "unlabelled, one line per step";
    T->weak = "an unlabelled time read as the step's";
    return "";
  }
  if (try_set(T, bar_times(W, nw, 0), "bar", "bar elapsed"))
    return "";
  if (other_counter_timing(w, S, ns, bi, n, lo, T)) {
    T->weak = "another counter's lines";
    return " (another counter's lines)";
  }
  return "";
}

/* The answer's step time and its format line. */
static void describe(const timing *T, const char *via, int stale, int restarted,
                     sm_track_result *r) {
  char tb[96];

  if (T->basis != NULL && T->t == T->t && T->t > 0) {
    r->step_time_s = six_digits(T->t);
    r->step_time_basis = T->basis;
    r->step_time_source = T->source;
    r->step_time_weak = T->weak;
  }
  if (r->step_time_basis == NULL)
    snprintf(tb, sizeof(tb), "unknown");
  else if (strcmp(r->step_time_source, "printed") == 0 && T->key && T->key[0])
    snprintf(tb, sizeof(tb), "printed ('%s')%s", T->key, via);
  else
    snprintf(tb, sizeof(tb), "from %s%s", r->step_time_source, via);
  snprintf(r->format, sizeof(r->format),
           "%.40s; step = '%.32s' (%.16s, %.8s)%s; step time %.60s",
           stale ? "checkpoint message" : style_name(r->counter), r->counter,
           r->scope ? r->scope : "?", r->step_scope ? r->step_scope : "?",
           restarted ? " after a restart" : "", tb);
}

/* A position that counts samples, not steps: PyTorch's quickstart loop
 * prints "[current/size]" with current = (batch + 1) * batch_size and
 * size the dataset's, every k batches, so its values are r + j * d with
 * r the batch size (r >= 2) dividing the stride d = k * r (k >= 2).  The
 * batch size is then known from the values alone: the positions are
 * re-counted in batches (step, total, and the deltas that time them).
 * A count of samples that does not show its batch (values that are
 * multiples of the stride, MNIST's batch_idx * len(data)) and a bar's
 * count are left as printed; the pattern must show the epoch's first
 * batch (current = r) or hold over four strides.  Returns r, or 0 when the view
 * is no such counter. */
static long long sample_batch(const went *W, int nw) {
  long long d = 0, r;
  int steps = 0, first = 0;
  const char *c = W[0].s.counter_name;

  /* A progress bar counts what it is given (batches, as a rule). */
  if (nw < 3 || !W[0].s.has_total ||
      (W[0].s.counter != SM_TC_BATCH && W[0].s.counter != SM_TC_FRACTION) ||
      strcmp(c, "tqdm") == 0 || strcmp(c, "keras") == 0 ||
      strcmp(c, "bar") == 0)
    return 0;
  for (int i = 0; i + 1 < nw; i++) {
    long long a = W[i].s.step - W[i + 1].s.step;
    if (a <= 0 || !(W[i].ep == W[i + 1].ep ||
                    (W[i].ep != W[i].ep && W[i + 1].ep != W[i + 1].ep)))
      continue;
    while (a != 0) { /* d = gcd(d, a) */
      long long t = d % a;
      d = a;
      a = t;
    }
    steps++;
  }
  if (steps < 2 || d < 4)
    return 0;
  r = W[0].s.step % d;
  if (r < 2 || d % r != 0 || d / r < 2)
    return 0;
  for (int i = 0; i < nw; i++) {
    if (W[i].s.step % d != r)
      return 0;
    first += W[i].s.step == r;
  }
  /* The first batch of an epoch logged (current = the batch size), or a
   * long run of the pattern. */
  return first > 0 || steps >= 4 ? r : 0;
}

/* Re-counts a sample counter's positions in batches of r. */
static void count_batches(went *W, int nw, long long r) {
  for (int i = 0; i < nw; i++) {
    W[i].s.step /= r;
    if (W[i].s.has_total)
      W[i].s.total = (W[i].s.total + r - 1) / r;
  }
}

void sm__trk_window_answer(const trk_window *w, int n, sm_track_result *r) {
  series S[MAX_SERIES];
  int ns, bi, nw, stale;
  went *W;
  timing T = {NAN, NULL, NULL, NULL, NULL};
  uint64_t lo;
  const trk_rec *P;
  const char *via = "";
  view V = {0, SM_TK_SAMPLE, 0, 0, -1};
  built B;
  long long batch;

  result_init(r);
  if (n < 1)
    n = 1;
  if (n > TRK_RING)
    n = TRK_RING;
  if (w->count == 0)
    return;
  ns = gather_series(w, S);
  bi = pick_series(S, ns, n);
  P = newest_position(w);
  if (bi >= 0) {
    V.id = S[bi].id;
    narrow_loops(w, &V, n);
    narrow_ranks(w, &V, n);
  } else if (P != NULL) {
    /* Only positions: where training is, without metrics. */
    V.id = P->series;
    V.kind = SM_TK_POSITION;
  } else {
    answer_stepless(w, n, r);
    return;
  }
  W = sm_malloc((size_t)n * sizeof(went));
  if (W == NULL)
    return;
  build(w, &V, n, W, &B);
  nw = B.nw;
  if (nw == 0) {
    sm_free(W);
    return;
  }
  lo = W[nw - 1].seq_old;
  if ((batch = sample_batch(W, nw)) > 0)
    count_batches(W, nw, batch);
  r->samples = nw;
  r->restarts = B.restarted;
  set_position(r, &W[0], B.scope);
  total_elsewhere(w, &V, lo, W, nw, r);
  if (strcmp(r->counter, "tqdm") == 0 && B.scope == SCOPE_GLOBAL)
    r->scope = "progress bar"; /* a bar without an epoch: global steps */
  stale = stale_bar(P, &V, W, &lo, r);
  window_metrics(w, &V, lo, W, nw, stale, B.restarted, r);
  if (!stale)
    via = step_timing(w, &V, lo, n, W, &B, S, ns, bi, &T);
  describe(&T, via, stale, B.restarted, r);
  if (batch > 0) {
    size_t fl = strlen(r->format);
    snprintf(r->format + fl, sizeof(r->format) - fl,
             "; the position counts samples, re-counted in batches of %lld",
             batch);
  }
  sm_free(W);
}
