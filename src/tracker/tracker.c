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
#include <string.h>
#include <sys/stat.h>

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
#define SEEN_SLOTS                                                             \
  16384 /* distinct samples counted while                                      \
         * scanning backwards */

struct sm_tracker {
  sm_track_opts o;  /* options with defaults filled in */
  sm_linecls *cls;  /* the coarse filter */
  int cls_progress; /* class indexes in the prototype set */
  int cls_eval;
  trk_line *L;           /* parser scratch */
  trk_window win;        /* kept samples */
  trk_head head;         /* column names of the last table head */
  double ctx_epoch;      /* epoch of the last epoch head */
  int epoch_seq;         /* epoch heads seen */
  sm_rfile f;            /* the followed file */
  int open;              /* f is open */
  char *path;            /* its path */
  uint64_t off;          /* next byte to read */
  sm_buf part;           /* bytes of an unfinished segment */
  int skipping;          /* the unfinished segment was too long */
  uint64_t lines;        /* lines read */
  int scan_limited;      /* the last scan ran out of budget */
  sm_track_result last;  /* the last answer reported */
  char sig[32];          /* the last bytes read, up to off */
  size_t sig_len;        /* how many of them */
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
}

void sm_tracker_reset(sm_tracker *t) {
  reset_state(t);
}

/* ==== One segment ==== */

/* Whether a parsed sample of a line of class cls is training progress.
 * The classifier says so; or it says evaluation of a line that also
 * reports the training clock ("step:3375/3375 val_loss:3.27
 * train_time:1633s step_avg:478ms" tells where training is, even if its
 * loss is a validation loss, which is never used); or the line is a near
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
  if (cls == t->cls_progress)
    return 1;
  if (cls == t->cls_eval && s->train_clock > 0)
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
 * an epoch or a loss. */
static int worth_parsing(const char *s, size_t m) {
  for (size_t i = 0; i < m; i++)
    if (s[i] >= '0' && s[i] <= '9')
      return 1;
  return memmem(s, m, "oss", 3) != NULL || memmem(s, m, "poch", 4) != NULL ||
         memmem(s, m, "OSS", 3) != NULL || memmem(s, m, "POCH", 4) != NULL;
}

/* Replays one segment in file order. */
static void forward_segment(sm_tracker *t, const char *s, size_t n) {
  size_t m =
      sm_track_clean(s, n > SEG_MAX ? SEG_MAX : n, t->seg, sizeof(t->seg));
  sm_track_sample smp;
  trk_head hd;
  int cls;

  if (m == 0)
    return;
  cls = sm_linecls_classify(t->cls, t->seg, m, NULL);
  if (cls != t->cls_progress && !worth_parsing(t->seg, m))
    return;
  sm__trk_parse(t->L, t->seg, m, &t->head, &smp, &hd);
  switch (smp.kind) {
  case SM_TK_TABLE_HEAD:
    t->head = hd;
    break;
  case SM_TK_EPOCH_HEAD:
    if (!(smp.epoch == t->ctx_epoch)) {
      t->epoch_seq++;
      t->ctx_epoch = smp.epoch;
    }
    break;
  case SM_TK_SAMPLE:
    if (accept(t, cls, &smp, t->seg, m))
      sm__trk_window_add(&t->win, &smp, t->epoch_seq, t->ctx_epoch);
    break;
  default:
    break;
  }
}

/* Replays one line: its carriage-return segments, oldest first. */
static void forward_line(sm_tracker *t, const char *s, size_t n) {
  size_t i = 0;

  while (i <= n) {
    const char *cr = i < n ? memchr(s + i, '\r', n - i) : NULL;
    size_t e = cr ? (size_t)(cr - s) : n;
    if (e > i)
      forward_segment(t, s + i, e - i);
    if (cr == NULL)
      break;
    i = e + 1;
  }
}

int sm_tracker_feed(sm_tracker *t, const char *data, size_t n) {
  size_t i = 0;

  while (i < n) {
    size_t j = i;
    while (j < n && data[j] != '\n' && data[j] != '\r')
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
      forward_segment(t, t->part.data, t->part.len);
      sm_buf_reset(&t->part);
    } else if (!t->skipping || j > i) {
      forward_segment(t, data + i, j - i);
    }
    t->skipping = 0;
    if (data[j] == '\n')
      t->lines++;
    i = j + 1;
  }
  return 0;
}

/* ==== What was read last ==== */

/* Reads the bytes just before the offset as the signature of what was
 * read (see same_tail). */
static void load_tail(sm_tracker *t) {
  size_t n = t->off < sizeof(t->sig) ? (size_t)t->off : sizeof(t->sig);
  ssize_t got = sm_rfile_pread(&t->f, t->sig, n, t->off - n, NULL);

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

/* ==== Backward scan ==== */

typedef struct counter_stat {
  uint32_t id;  /* series */
  int strength; /* counter kind */
  int distinct; /* distinct samples seen */
} counter_stat;

typedef struct scan_state {
  uint64_t *seen;      /* open-addressing set of sample keys */
  int nseen;           /* keys in it */
  counter_stat cs[32]; /* per series */
  int ncs;
  int stepless;     /* counter-less samples seen */
  int best_counter; /* kind of the main counter when done */
  int bwd_epoch;    /* epoch heads met, newest first */
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

/* Looks at one segment while scanning backwards; returns 1 when enough
 * samples are known. */
static int backward_segment(sm_tracker *t, scan_state *st, const char *s,
                            size_t n) {
  size_t m =
      sm_track_clean(s, n > SEG_MAX ? SEG_MAX : n, t->seg, sizeof(t->seg));
  sm_track_sample smp;
  int cls, best = -1;

  if (m == 0)
    return 0;
  cls = sm_linecls_classify(t->cls, t->seg, m, NULL);
  if (cls != t->cls_progress && !worth_parsing(t->seg, m))
    return 0;
  sm__trk_parse(t->L, t->seg, m, NULL, &smp, NULL);
  if (smp.kind == SM_TK_EPOCH_HEAD) {
    st->bwd_epoch++;
    return 0;
  }
  if (!accept(t, cls, &smp, t->seg, m))
    return 0;
  if (!smp.has_step) {
    st->stepless++;
  } else {
    uint32_t id = sm__trk_series(&smp);
    uint64_t key = sm_hash_mix((uint64_t)smp.step * 0x9e3779b97f4a7c15ULL ^ id ^
                               ((uint64_t)st->bwd_epoch << 40));
    double ep = smp.epoch == smp.epoch ? smp.epoch : -1;
    int j;
    key ^= sm_hash_mix((uint64_t)(int64_t)(ep * 1000.0));
    for (j = 0; j < st->ncs; j++)
      if (st->cs[j].id == id)
        break;
    if (j == st->ncs && st->ncs < 32) {
      st->cs[j].id = id;
      st->cs[j].strength = smp.counter;
      st->cs[j].distinct = 0;
      st->ncs++;
    }
    if (j < st->ncs && seen_add(st, key))
      st->cs[j].distinct++;
  }
  for (int j = 0; j < st->ncs; j++)
    if (best < 0 || st->cs[j].strength > st->cs[best].strength ||
        (st->cs[j].strength == st->cs[best].strength &&
         st->cs[j].distinct > st->cs[best].distinct))
      best = j;
  if (best >= 0)
    st->best_counter = st->cs[best].strength;
  if (best >= 0 && st->cs[best].distinct >= t->o.samples)
    return 1;
  if (st->nseen >= 8 * t->o.samples)
    return 1;
  return best < 0 && st->stepless >= 4 * t->o.samples;
}

/* Looks at one line's carriage-return segments, newest (last) first;
 * returns 1 when enough samples are known, with *seg the offset in the
 * line of the segment that completed them. */
static int backward_line(sm_tracker *t, scan_state *st, const char *s, size_t n,
                         size_t *seg) {
  size_t e = n;

  for (;;) {
    const char *cr = e > 0 ? memrchr(s, '\r', e) : NULL;
    size_t b = cr ? (size_t)(cr - s) + 1 : 0;
    *seg = b;
    if (e > b && backward_segment(t, st, s + b, e - b))
      return 1;
    if (cr == NULL)
      return 0;
    e = b - 1;
  }
}

int sm_tracker_scan(sm_tracker *t, const char *path, sm_track_result *res,
                    sm_err *err) {
  sm_revlines rv;
  sm_fwdlines fw;
  scan_state st;
  uint64_t size, stop, first = 0, done_at = 0;
  int rc, done = 0, margin = 0, cut = 0;
  size_t seg = 0;
  const char *line;
  size_t len;
  uint64_t off;

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
  size = t->f.size;
  first = size;
  stop = size > t->o.max_scan ? size - t->o.max_scan : 0;
  memset(&st, 0, sizeof(st));
  st.seen = sm_calloc(SEEN_SLOTS, sizeof(uint64_t));
  if (st.seen == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  rc = sm_revlines_init(&rv, &t->f, stop, size, MAX_LINE, err);
  while (rc == 0 &&
         (rc = sm_revlines_next(&rv, &line, &len, &off, &cut, err)) == 1) {
    rc = 0;
    t->lines++;
    first = off;
    if (done) {
      /* Context above the window: in-epoch counters need their epoch
       * and table heads; other counters carry what they need. */
      int lines = st.best_counter == SM_TC_BATCH ? MARGIN_LINES : 8;
      if (++margin >= lines || done_at - off > MARGIN_BYTES)
        break;
      continue;
    }
    if (backward_line(t, &st, line, len, &seg)) {
      done = 1;
      done_at = off;
      /* The samples were found in the tail of an over-long line (a bar
       * that never printed a newline): what lies before it is that same
       * line, and skipping back through it would read it all.  The
       * replay starts at the segment that completed the window. */
      if (cut) {
        first = off + seg;
        break;
      }
    }
  }
  sm_revlines_release(&rv);
  sm_free(st.seen);
  if (rc < 0)
    return rc;
  t->scan_limited = !done && stop > 0;

  /* Replay the tail in file order (not when the backward scan found no
   * sample at all: the replay would find none either). */
  if (st.nseen == 0 && st.stepless == 0)
    first = size;
  rc = sm_fwdlines_init(&fw, &t->f, first, size, MAX_LINE, err);
  t->off = first;
  while (rc == 0 &&
         (rc = sm_fwdlines_next(&fw, &line, &len, &off, NULL, err)) == 1) {
    rc = 0;
    forward_line(t, line, len);
    /* Follow from the end of the last complete line. */
    if (off + len < size)
      t->off = off + len + 1;
  }
  sm_fwdlines_release(&fw);
  if (rc < 0)
    return rc;
  if (size > 0 && t->off < size) {
    /* The file does not end with a newline: its last line was used for
     * the answer and will be read again when it is finished. */
    char c;
    if (sm_rfile_pread(&t->f, &c, 1, size - 1, err) == 1 && c == '\n')
      t->off = size;
  }
  load_tail(t);
  sm_tracker_result(t, res);
  t->last = *res;
  return 0;
}

/* ==== Following ==== */

/* Reads [t->off, end) of the open file into the replay. */
static int drain(sm_tracker *t, uint64_t end, sm_err *err) {
  char *buf = sm_malloc(READ_CHUNK);

  if (buf == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", t->path);
  while (t->off < end) {
    size_t want =
        end - t->off < READ_CHUNK ? (size_t)(end - t->off) : READ_CHUNK;
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
    /* Rotated: the rest of the old file, then the new one from 0. */
    sm_rfile nf;
    if (sm_rfile_stat(&t->f, NULL) == 0 && t->f.size > t->off &&
        (rc = drain(t, t->f.size, err)) < 0)
      return rc;
    if (sm_rfile_open(&nf, t->path, NULL) == 0) {
      sm_rfile_close(&t->f);
      t->f = nf;
      t->off = 0;
      t->sig_len = 0;
      sm_buf_reset(&t->part);
      t->skipping = 0;
      if ((rc = drain(t, t->f.size, err)) < 0)
        return rc;
    }
  } else {
    if ((rc = sm_rfile_stat(&t->f, err)) < 0)
      return rc;
    if (t->f.size < t->off || !same_tail(t)) {
      /* Truncated in place (copytruncate), maybe already written past
       * the old offset again: start again from 0. */
      t->off = 0;
      t->sig_len = 0;
      sm_buf_reset(&t->part);
      t->skipping = 0;
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

void sm_tracker_result(sm_tracker *t, sm_track_result *res) {
  sm__trk_window_answer(&t->win, t->o.samples, res);
  res->lines_scanned = t->lines;
  res->bytes_read = t->open ? t->f.nread : 0;
  res->scan_limited = t->scan_limited;
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
  sm_jw_key(&w, "scan_limited");
  sm_jw_bool(&w, r->scan_limited);
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
