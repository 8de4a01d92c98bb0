/* window.c - the sample window and the answer.
 *
 * Kept samples go into a ring in file order.  The answer follows one
 * counter (a "series": the key that printed the step, or the bar style):
 * the strongest kind of counter the log prints (optimizer step over
 * iteration over in-epoch batch over a bare fraction over micro-steps),
 * and among equals the one printed most often.  Samples of that series
 * with the same step (the same line printed by eight ranks, or a step
 * reported on two lines) are merged.  The newest N merged samples form
 * the window:
 *
 *   - step, total, epoch: from the newest sample;
 *   - loss, lr, throughput: the newest value in the window, else from a
 *     counter-less line of the same stretch of the log (Hugging Face
 *     prints its loss dict apart from its bar), else from another
 *     counter's lines of that stretch;
 *   - step time: the printed per-step times of the window, else its
 *     rates (it/s, s/it, updates/s), else the same from counter-less
 *     lines, else timestamps between samples divided by the step delta,
 *     else a cumulative time divided the same way; each time the median
 *     after dropping outliers by median absolute deviation.
 *
 * A side loop is recognised and left out: when the newest samples of a
 * series count to another total than the samples before them, without an
 * epoch boundary between (Keras evaluate() after fit(), an evaluation bar
 * among training bars), they are not training. */
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
                        double ctx_epoch) {
  trk_rec *r = &w->rec[w->head];

  r->s = *s;
  r->seq = w->next_seq++;
  r->series = sm__trk_series(s);
  r->epoch_seq = epoch_seq;
  r->ctx_epoch = ctx_epoch;
  w->head = (w->head + 1) % TRK_RING;
  if (w->count < TRK_RING)
    w->count++;
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
    if (r->series == 0)
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

/* ==== Window of one series ==== */

typedef struct went {
  sm_track_sample s; /* merged facts */
  uint64_t seq;      /* sequence of the newest record merged */
  uint64_t seq_old;  /* sequence of the oldest record merged */
  double ep;         /* epoch key of in-epoch counters */
  double ctx_epoch;  /* epoch context of the newest record */
} went;

static double rec_epoch(const trk_rec *r) {
  return r->s.epoch == r->s.epoch ? r->s.epoch : r->ctx_epoch;
}

/* The epoch key that tells batches of different epochs apart. */
static double epoch_key(const trk_rec *r) {
  double e = rec_epoch(r);
  return e == e ? e : -1e9 - (double)r->epoch_seq;
}

static void fill(sm_track_sample *d, const sm_track_sample *s) {
#define FILL(x)                                                                \
  if (d->x != d->x)                                                            \
  d->x = s->x
  if (d->loss != d->loss && !d->loss_nonfinite) {
    d->loss = s->loss;
    d->loss_nonfinite = s->loss_nonfinite;
  }
  FILL(lr);
  FILL(rate);
  FILL(cum_time);
  FILL(anon_time);
  FILL(epoch);
#undef FILL
  if (d->step_time != d->step_time) {
    d->step_time = s->step_time;
    memcpy(d->time_key, s->time_key, sizeof(d->time_key));
  }
  if (d->throughput != d->throughput) {
    d->throughput = s->throughput;
    memcpy(d->tp_unit, s->tp_unit, sizeof(d->tp_unit));
  }
  /* The first line printed for a step dates it. */
  if (s->ts == s->ts)
    d->ts = s->ts;
}

/* True when the bare fractions of a series read "epoch/step" (the
 * numerator stays, the denominator counts), as DeepSpeed's throughput
 * timer prints "0/1048". */
static int swapped_fraction(const trk_window *w, uint32_t id, int n) {
  long long num = -1, den = -1;
  int seen = 0, dens = 0;

  for (size_t i = 0; i < w->count && seen < 2 * n; i++) {
    const trk_rec *r = newest(w, i);
    if (r->series != id || !r->s.has_total)
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

/* Collects the newest n merged samples of series id into W (newest
 * first) and returns how many. */
static int build(const trk_window *w, uint32_t id, int n, went *W) {
  size_t idx[TRK_RING];
  size_t m = 0, start = 0;
  int nw = 0, swap = 0, counter = 0;

  for (size_t i = 0; i < w->count; i++)
    if (newest(w, i)->series == id)
      idx[m++] = i;
  if (m == 0)
    return 0;
  counter = newest(w, idx[0])->s.counter;
  if (counter == SM_TC_FRACTION)
    swap = swapped_fraction(w, id, n);
  /* Side loop: the newest samples count to another total, with no epoch
   * boundary between them and the established samples before. */
  if (!swap) {
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
      while (q < m && newest(w, idx[q])->s.total == b->s.total)
        q++;
      if (!boundary && p < (size_t)n && q - p >= 2)
        start = p;
    }
  }
  for (size_t j = start; j < m; j++) {
    const trk_rec *r = newest(w, idx[j]);
    sm_track_sample s = r->s;
    double ep;
    int k;

    if (swap) {
      s.step = s.total;
      s.has_total = 0;
      s.total = 0;
    }
    ep = counter == SM_TC_BATCH ? epoch_key(r) : 0;
    for (k = 0; k < nw; k++)
      if (W[k].s.step == s.step && W[k].ep == ep)
        break;
    if (k < nw) {
      fill(&W[k].s, &s);
      W[k].seq_old = r->seq;
      continue;
    }
    if (nw == n)
      break;
    W[nw].s = s;
    W[nw].seq = W[nw].seq_old = r->seq;
    W[nw].ep = ep;
    W[nw].ctx_epoch = r->ctx_epoch;
    nw++;
  }
  return nw;
}

/* ==== Step time ==== */

/* Printed per-step times (which 0) or 1/rates (which 1) of the records
 * of series id in [lo, now], newest first, at most cap of them.  Every
 * record counts, not only one per step: a log that prints a line per
 * micro-step and an optimizer step every few lines has its time on
 * each. */
static double raw_times(const trk_window *w, uint32_t id, uint64_t lo, int cap,
                        int which, const char **key) {
  double v[TRK_RING];
  size_t k = 0;

  for (size_t i = 0; i < w->count && (int)k < cap; i++) {
    const trk_rec *r = newest(w, i);
    if (r->seq < lo)
      break;
    if (r->series != id)
      continue;
    if (which == 0 && r->s.step_time == r->s.step_time) {
      if (k == 0 && key)
        *key = r->s.time_key;
      v[k++] = r->s.step_time;
    } else if (which == 1 && r->s.rate == r->s.rate && r->s.rate > 0) {
      v[k++] = 1.0 / r->s.rate;
    }
  }
  return sm__trk_robust_median(v, k, NULL);
}

/* Differences of a clock (timestamps, cumulative times) between
 * consecutive samples, divided by the step delta. */
static double collect_deltas(const went *W, int nw, int which, int strict) {
  double v[TRK_RING];
  size_t k = 0;
  int have = 0;

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
    v[k++] = (tb - ta) / (double)ds;
  }
  if (strict && have < 2)
    return NAN;
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

typedef struct timing {
  double t;          /* seconds per step */
  const char *basis; /* "printed", "rate", "timestamps", "cumulative" */
  const char *key;   /* key of a printed time */
} timing;

/* Sets T to t with a basis when t is a number; returns whether it did. */
static int try_set(timing *T, double t, const char *basis) {
  if (t != t)
    return 0;
  T->t = t;
  T->basis = basis;
  return 1;
}

static int series_timing(const trk_window *w, uint32_t id, uint64_t lo, int cap,
                         const went *W, int nw, timing *T) {
  return try_set(T, raw_times(w, id, lo, cap, 0, &T->key), "printed") ||
         try_set(T, raw_times(w, id, lo, cap, 1, NULL), "rate") ||
         try_set(T, collect_deltas(W, nw, 0, 0), "timestamps");
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

/* Newest counter-less or other-series record in [lo, now] with a value:
 * which 0 = loss, 1 = lr, 2 = throughput, 3 = epoch. */
static const trk_rec *fallback(const trk_window *w, uint64_t lo, uint32_t skip,
                               int which) {
  for (size_t i = 0; i < w->count; i++) {
    const trk_rec *r = newest(w, i);
    double v;
    if (r->seq < lo)
      break;
    if (r->series == skip)
      continue;
    v = which == 0   ? r->s.loss
        : which == 1 ? r->s.lr
        : which == 2 ? r->s.throughput
                     : r->s.epoch;
    if (v == v)
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
    if (r->series != 0)
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
  if (ne > 0) {
    T->t = sm__trk_robust_median(e, ne, NULL);
    T->basis = "printed";
    return 1;
  }
  if (nq > 0) {
    T->t = sm__trk_robust_median(q, nq, NULL);
    T->basis = "rate";
    return 1;
  }
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
static void answer_stepless(const trk_window *w, int n, sm_track_result *r) {
  double e[TRK_RING], q[TRK_RING];
  size_t ne = 0, nq = 0;
  int used = 0;
  const char *key = NULL;

  for (size_t i = 0; i < w->count && used < n; i++) {
    const trk_rec *x = newest(w, i);
    used++;
    if (r->loss != r->loss)
      r->loss = x->s.loss;
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
  r->ok = 1;
  r->samples = used;
  if (ne > 0) {
    r->step_time_s = six_digits(sm__trk_robust_median(e, ne, NULL));
    r->step_time_basis = "printed";
  } else if (nq > 0) {
    r->step_time_s = six_digits(sm__trk_robust_median(q, nq, NULL));
    r->step_time_basis = "rate";
  }
  snprintf(r->format, sizeof(r->format),
           "metrics without a step counter; step time %s",
           r->step_time_basis ? r->step_time_basis : "unknown");
}

void sm__trk_window_answer(const trk_window *w, int n, sm_track_result *r) {
  series S[MAX_SERIES];
  int ns, bi = -1, nw;
  went *W;
  timing T = {NAN, NULL, NULL};
  uint64_t lo;
  const trk_rec *x;
  const char *via = "";
  int loss_gone = 0;

  result_init(r);
  if (n < 1)
    n = 1;
  if (n > TRK_RING)
    n = TRK_RING;
  if (w->count == 0)
    return;
  ns = gather_series(w, S);
  {
    /* A counter printed far less often than another (an evaluation or
     * summary line that slipped through) is not followed. */
    int maxc = 0;
    for (int i = 0; i < ns; i++)
      maxc = SM_MAX(maxc, S[i].count);
    for (int i = 0; i < ns; i++)
      if ((S[i].count * 4 >= maxc || S[i].count >= n) &&
          (bi < 0 || better(&S[i], &S[bi])))
        bi = i;
  }
  if (bi < 0) {
    answer_stepless(w, n, r);
    return;
  }
  W = sm_malloc((size_t)n * sizeof(went));
  if (W == NULL)
    return;
  nw = build(w, S[bi].id, n, W);
  if (nw == 0) {
    sm_free(W);
    return;
  }
  lo = W[nw - 1].seq_old;
  r->ok = 1;
  r->samples = nw;
  r->has_step = 1;
  r->step = W[0].s.step;
  r->has_total = W[0].s.has_total;
  r->total_steps = W[0].s.total;
  r->epoch = W[0].s.epoch == W[0].s.epoch ? W[0].s.epoch : W[0].ctx_epoch;
  snprintf(r->counter, sizeof(r->counter), "%s", W[0].s.counter_name);
  r->scope = scope_name(W[0].s.counter);
  if (strcmp(r->counter, "tqdm") == 0 && r->epoch != r->epoch)
    r->scope = "progress bar"; /* a bar without an epoch: global steps */

  /* Loss, lr, throughput, epoch: the newest of the window, else nearby.
   * A newest loss of nan or inf is reported as unknown, not replaced by
   * an older one. */
  for (int i = 0; i < nw; i++) {
    if (r->epoch != r->epoch)
      r->epoch = W[i].s.epoch;
    if (r->loss != r->loss && !loss_gone) {
      r->loss = W[i].s.loss;
      loss_gone = W[i].s.loss_nonfinite && r->loss != r->loss;
    }
    if (r->lr != r->lr)
      r->lr = W[i].s.lr;
    if (r->throughput != r->throughput &&
        W[i].s.throughput == W[i].s.throughput)
      set_tp(r, W[i].s.throughput, W[i].s.tp_unit);
  }
  if (r->loss != r->loss && !loss_gone &&
      (x = fallback(w, lo, S[bi].id, 0)) != NULL)
    r->loss = x->s.loss;
  if (r->lr != r->lr && (x = fallback(w, lo, S[bi].id, 1)) != NULL)
    r->lr = x->s.lr;
  if (r->throughput != r->throughput &&
      (x = fallback(w, lo, S[bi].id, 2)) != NULL)
    set_tp(r, x->s.throughput, x->s.tp_unit);
  if (r->epoch != r->epoch && (x = fallback(w, lo, S[bi].id, 3)) != NULL)
    r->epoch = x->s.epoch;

  /* Step time. */
  {
    if (try_set(&T, raw_times(w, S[bi].id, lo, 4 * n, 0, &T.key), "printed"))
      ;
    else if (try_set(&T, raw_times(w, S[bi].id, lo, 4 * n, 1, NULL), "rate"))
      ;
    else if (stepless_timing(w, lo, n, &T))
      via = " (counter-less lines)";
    else if (try_set(&T, collect_deltas(W, nw, 0, 0), "timestamps"))
      ;
    else if (try_set(&T, collect_deltas(W, nw, 1, 0), "cumulative"))
      ;
    else if (try_set(&T, collect_deltas(W, nw, 2, 1), "cumulative"))
      via = " (unlabelled elapsed time)";
    else if (try_set(&T, anon_per_step(W, nw), "printed"))
      T.key = "unlabelled, one line per step";
    else {
      /* Another counter's lines of the same stretch of the log, the most
       * frequent first. */
      went *V = sm_malloc((size_t)n * sizeof(went));
      int order[MAX_SERIES], no = 0;
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
      for (int a = 0; V != NULL && a < no && T.basis == NULL; a++) {
        int nv = build(w, S[order[a]].id, n, V);
        T.key = NULL;
        if (nv > 0 && V[0].seq >= lo &&
            series_timing(w, S[order[a]].id, V[nv - 1].seq_old, 4 * n, V, nv,
                          &T))
          via = " (another counter's lines)";
      }
      sm_free(V);
    }
  }
  if (T.basis != NULL && T.t == T.t && T.t > 0) {
    r->step_time_s = T.t;
    r->step_time_basis = T.basis;
    r->step_time_s = six_digits(r->step_time_s);
  }
  {
    char tb[96];
    if (r->step_time_basis == NULL)
      snprintf(tb, sizeof(tb), "unknown");
    else if (strcmp(r->step_time_basis, "printed") == 0 && T.key && T.key[0])
      snprintf(tb, sizeof(tb), "printed ('%s')%s", T.key, via);
    else
      snprintf(tb, sizeof(tb), "from %s%s", r->step_time_basis, via);
    snprintf(r->format, sizeof(r->format),
             "%.40s; step = '%.32s' (%s); "
             "step time %.60s",
             style_name(r->counter), r->counter, r->scope ? r->scope : "?", tb);
  }
  sm_free(W);
}
