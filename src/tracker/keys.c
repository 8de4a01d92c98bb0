/* keys.c - the tracker's knowledge of key names and words, kept as data
 * (data/embed/tracker_keys.tsv, embedded in the binary at build time).
 *
 * Logs name the same fact in many ways: "lr", "learning_rate", "learning
 * rate", "LR"; "iter", "iteration", "s:"; "time", "dt", "took", "step_avg",
 * "elapsed time per iteration (ms)".  The parser canonicalises a key
 * (lower case, words joined by '_') and looks it up here.  This is data,
 * not per-file rules: adding a framework's spelling is one line of the
 * table, with a comment saying which class of formats it covers.  Keys
 * that are not in the table are still judged by their words: "val_acc"
 * names evaluation, "act_loss" is a loss, "loss_cls" and "box_loss" are
 * components of one, "loss/mean" is a statistic.  The table also holds
 * the word lists the guards use (evaluation, start-up, phase
 * announcements, loss-component prefixes, log levels). */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "track_int.h"

extern const char sm__embed_tracker_keys[];
extern const unsigned long sm__embed_tracker_keys_len;

typedef struct key_entry {
  const char *key;  /* canonical key */
  int role;         /* an trk_role */
  unsigned flags;   /* KF_* */
  const char *unit; /* R_TPUT: unit to report */
} key_entry;

/* A word with its length, so that lists are compared by length first. */
typedef struct word {
  const char *w; /* lower case */
  size_t n;      /* its length */
} word;

#define MAX_KEYS 1024
#define MAX_WORDS 256

/* The word classes of the table. */
enum {
  WC_EVAL,
  WC_INIT,
  WC_PHASE,
  WC_PART,
  WC_LEVEL,
  WC_AVERAGE,
  WC_STATS,
  WC_QUAL,
  WC_PER,
  WC_TERM,
  WC_GEN,
  WC_DISC,
  WC_LOSSQ,
  WC_WRAP,
  WC_SMOOTH,
  WC_BLOCK,
  WC_CKPT,
  WC_CKNAME,
  WC_SAVE,
  WC_RELOAD,
  WC_EVALQ,
  WC_COUNT
};
static const char *const wc_names[] = {
    "eval",   "init",  "phase", "part",   "level", "average", "stats",
    "qual",   "per",   "term",  "gen",    "disc",  "lossq",   "wrap",
    "smooth", "block", "ckpt",  "ckname", "save",  "reload",  "evalq"};
_Static_assert(sizeof(wc_names) / sizeof(wc_names[0]) == WC_COUNT,
               "a name for every word class");
_Static_assert(WC_COUNT <= sizeof(((trk_keys_stats *)0)->words) /
                               sizeof(((trk_keys_stats *)0)->words[0]),
               "room for every word class in the stats");

typedef struct keytab {
  key_entry keys[MAX_KEYS];
  int nkeys;
  word words[WC_COUNT][MAX_WORDS + 1]; /* each list ends with {NULL, 0} */
  int nwords[WC_COUNT];
  char *text; /* the table's text, owned: entries point into it */
  int status; /* entries, or -line of the first bad line */
} keytab;

static keytab tab;
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static const struct {
  const char *name;
  int role;
} role_names[] = {
    {"step", R_STEP},
    {"iter", R_ITER},
    {"micro", R_MICRO},
    {"batch", R_BATCH},
    {"epoch", R_EPOCH},
    {"loss", R_LOSS},
    {"eval_loss", R_EVAL_LOSS},
    {"lr", R_LR},
    {"time", R_TIME},
    {"cum", R_CUM},
    {"rate", R_RATE},
    {"tput", R_TPUT},
    {"bsz", R_BSZ},
    {"btok", R_BTOK},
    {"total", R_TOTAL},
    {"ignore", R_IGNORE},
};

static const struct {
  const char *name;
  unsigned flag;
} flag_names[] = {{"train", KF_TRAIN}, {"eval", KF_EVAL}, {"strict", KF_STRICT},
                  {"ms", KF_MS},       {"us", KF_US},     {"low", KF_LOW},
                  {"part", KF_PART},   {"disc", KF_DISC}, {"run", KF_RUN}};

static int entry_sort(const void *a, const void *b) {
  return strcmp(((const key_entry *)a)->key, ((const key_entry *)b)->key);
}

/* Splits line l (NUL-terminated, changed in place) at tabs into at most
 * max fields; returns their count. */
static int split_tabs(char *l, char **f, int max) {
  int nf = 0;
  while (nf < max) {
    char *p = strchr(l, '\t');
    f[nf++] = l;
    if (p == NULL)
      break;
    *p = '\0';
    l = p + 1;
  }
  return nf;
}

static int parse_flags(char *s, unsigned *out) {
  *out = 0;
  if (strcmp(s, "-") == 0)
    return 0;
  for (char *save = NULL, *t = strtok_r(s, ",", &save); t;
       t = strtok_r(NULL, ",", &save)) {
    size_t i;
    for (i = 0; i < SM_ARRAY_LEN(flag_names); i++)
      if (strcmp(t, flag_names[i].name) == 0)
        break;
    if (i == SM_ARRAY_LEN(flag_names))
      return -1;
    *out |= flag_names[i].flag;
  }
  return 0;
}

static int parse_into(keytab *T, char *text, trk_keys_stats *st) {
  int line = 0;
  char *next = text;

  memset(&T->nwords, 0, sizeof(T->nwords));
  T->nkeys = 0;
  memset(st, 0, sizeof(*st));
  while (next != NULL && *next != '\0') {
    char *f[6], *l = next, *nl = strchr(next, '\n');
    int nf;
    size_t len;
    line++;
    next = nl ? nl + 1 : NULL;
    if (nl)
      *nl = '\0';
    len = strlen(l);
    if (len > 0 && l[len - 1] == '\r')
      l[--len] = '\0';
    if (l[0] == '\0')
      continue;
    if (l[0] == '#')
      continue;
    nf = split_tabs(l, f, 6);
    if (strcmp(f[0], "key") == 0) {
      key_entry *e;
      size_t r;
      if (nf != 6 || f[1][0] == '\0' || strncmp(f[5], "# ", 2) != 0 ||
          strlen(f[1]) >= TRK_KEY_MAX || T->nkeys == MAX_KEYS)
        return -line;
      for (r = 0; r < SM_ARRAY_LEN(role_names); r++)
        if (strcmp(f[2], role_names[r].name) == 0)
          break;
      if (r == SM_ARRAY_LEN(role_names))
        return -line;
      e = &T->keys[T->nkeys];
      e->key = f[1];
      e->role = role_names[r].role;
      if (parse_flags(f[3], &e->flags) != 0)
        return -line;
      e->unit = strcmp(f[4], "-") == 0 ? NULL : f[4];
      if (e->unit != NULL && e->role != R_TPUT)
        return -line;
      if (T->nkeys > 0 && strcmp(T->keys[T->nkeys - 1].key, e->key) >= 0)
        st->unsorted++;
      T->nkeys++;
    } else if (strcmp(f[0], "word") == 0) {
      int c;
      if (nf != 4 || f[2][0] == '\0' || strncmp(f[3], "# ", 2) != 0)
        return -line;
      for (c = 0; c < WC_COUNT; c++)
        if (strcmp(f[1], wc_names[c]) == 0)
          break;
      if (c == WC_COUNT || T->nwords[c] == MAX_WORDS)
        return -line;
      T->words[c][T->nwords[c]].w = f[2];
      T->words[c][T->nwords[c]].n = strlen(f[2]);
      T->nwords[c]++;
    } else {
      return -line;
    }
  }
  for (int c = 0; c < WC_COUNT; c++) {
    T->words[c][T->nwords[c]].w = NULL;
    T->words[c][T->nwords[c]].n = 0;
    st->words[c] = T->nwords[c];
  }
  qsort(T->keys, (size_t)T->nkeys, sizeof(T->keys[0]), entry_sort);
  for (int i = 1; i < T->nkeys; i++)
    if (strcmp(T->keys[i - 1].key, T->keys[i].key) == 0)
      st->duplicates++;
  st->keys = T->nkeys;
  return T->nkeys;
}

int sm__trk_keys_parse(char *text, trk_keys_stats *st) {
  keytab *T = sm_calloc(1, sizeof(*T));
  int rc;
  if (T == NULL)
    return 0;
  rc = parse_into(T, text, st);
  sm_free(T);
  return rc;
}

static void load_table(void) {
  trk_keys_stats st;
  tab.text = sm_strndup(sm__embed_tracker_keys, sm__embed_tracker_keys_len);
  if (tab.text == NULL) {
    tab.status = 0;
    return;
  }
  tab.status = parse_into(&tab, tab.text, &st);
  if (tab.status < 0) {
    /* A broken embedded table (caught by the unit tests): no keys rather
     * than half of them. */
    tab.nkeys = 0;
    memset(tab.nwords, 0, sizeof(tab.nwords));
    for (int c = 0; c < WC_COUNT; c++)
      tab.words[c][0].w = NULL;
  }
}

static const keytab *table(void) {
  pthread_once(&tab_once, load_table);
  return &tab;
}

static int entry_cmp(const void *k, const void *e) {
  return strcmp((const char *)k, ((const key_entry *)e)->key);
}

static const key_entry *find(const char *key) {
  const keytab *t = table();
  return bsearch(key, t->keys, (size_t)t->nkeys, sizeof(t->keys[0]), entry_cmp);
}

int sm__trk_keytable_check(trk_keys_stats *st) {
  const keytab *t = table();
  memset(st, 0, sizeof(*st));
  if (t->status < 0)
    return t->status;
  st->keys = t->nkeys;
  for (int c = 0; c < WC_COUNT; c++)
    st->words[c] = t->nwords[c];
  for (int i = 1; i < t->nkeys; i++)
    if (strcmp(t->keys[i - 1].key, t->keys[i].key) == 0)
      st->duplicates++;
  return t->nkeys;
}

/* ==== Words ==== */

static int word_in(const char *w, size_t n, const word *list) {
  for (size_t i = 0; list[i].w != NULL; i++)
    if (list[i].n == n && strncasecmp(w, list[i].w, n) == 0)
      return 1;
  return 0;
}

int sm__trk_is_eval_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_EVAL]);
}

int sm__trk_is_init_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_INIT]);
}

int sm__trk_is_phase_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_PHASE]);
}

int sm__trk_is_level_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_LEVEL]);
}

int sm__trk_is_average_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_AVERAGE]);
}

int sm__trk_is_stats_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_STATS]);
}

int sm__trk_is_qual_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_QUAL]);
}

int sm__trk_is_wrap_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_WRAP]);
}

int sm__trk_is_part_word(const char *w, size_t n) {
  return word_in(w, n, table()->words[WC_PART]);
}

int sm__trk_is_evalq_word(const char *w, size_t n) {
  const word *list = table()->words[WC_EVALQ];

  for (size_t k = 0; list[k].w != NULL; k++) {
    size_t l = list[k].n;
    if (n > l && strncasecmp(w, list[k].w, l) == 0 &&
        (w[l] == '@' || isdigit((unsigned char)w[l]) ||
         (w[l] == '_' && l + 1 < n && isdigit((unsigned char)w[l + 1]))))
      return 1;
  }
  return 0;
}

int sm__trk_ckpt_word_at(const char *t, size_t n, size_t i, int kind) {
  static const int cls[] = {WC_CKPT, WC_SAVE, WC_RELOAD};
  const word *list;

  if (kind < 0 || kind >= (int)SM_ARRAY_LEN(cls) || i >= n ||
      (i > 0 && isalpha((unsigned char)t[i - 1])))
    return 0;
  list = table()->words[cls[kind]];
  for (size_t k = 0; list[k].w != NULL; k++)
    if (n - i >= list[k].n && strncasecmp(t + i, list[k].w, list[k].n) == 0)
      return 1;
  return 0;
}

const char *sm__trk_ckpt_name_prefix(int k) {
  const keytab *T = table();
  return k >= 0 && k < T->nwords[WC_CKNAME] ? T->words[WC_CKNAME][k].w : NULL;
}

int sm__trk_block_banner(const char *s, size_t n) {
  int words = 0, block = 0, deco = 0, run = 0;
  size_t last = n;

  while (last > 0 && s[last - 1] == ' ')
    last--;
  for (size_t i = 0; i < n;) {
    char c = s[i];
    if (c >= '0' && c <= '9')
      return 0;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
      size_t j = i;
      while (j < n &&
             (((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'z') || s[j] == '_'))
        j++;
      words++;
      block |= word_in(s + i, j - i, table()->words[WC_BLOCK]);
      run = 0;
      i = j;
      continue;
    }
    run = (c == '*' || c == '=' || c == '-' || c == '#') ? run + 1 : 0;
    deco |= run >= 3;
    i++;
  }
  return block && words <= 6 && (deco || (last > 0 && s[last - 1] == ':'));
}

int sm__trk_names_step(const char *key) {
  for (const char *c = key; *c;) {
    size_t n = strcspn(c, "_/");
    if (word_in(c, n, table()->words[WC_PER]))
      return 1;
    c += n;
    if (*c)
      c++;
  }
  return 0;
}

/* A key named by units: a time per step ("ms/batch", "secs_per_iter")
 * is R_TIME, steps per second ("batch/s", "iters_per_sec") R_RATE.  The
 * step words are the table's "per" class. */
static int unit_key(const char *key, trk_keyinfo *out) {
  const char *sl = strchr(key, '/'), *per = strstr(key, "_per_");
  const char *a = key, *b;
  size_t an, bn;
  char u[12];
  int ok;

  if (sl != NULL && strchr(sl + 1, '/') == NULL) {
    an = (size_t)(sl - key);
    b = sl + 1;
  } else if (per != NULL && sl == NULL) {
    an = (size_t)(per - key);
    b = per + 5;
  } else {
    return 0;
  }
  bn = strlen(b);
  if (an == 0 || bn == 0 || an >= sizeof(u) || bn >= sizeof(u))
    return 0;
  if (word_in(b, bn, table()->words[WC_PER])) {
    /* "ms/batch": a time unit over a step word. */
    memcpy(u, a, an);
    u[an] = '\0';
    sm__trk_seconds(1, u, &ok);
    if (!ok) {
      /* A namespace of timers and its step entry: "timing_s/step",
       * "time_ms/iter" (RL and W&B-style metric dicts), the unit after
       * the name. */
      char *us = strrchr(u, '_');
      const key_entry *stem;
      if (us != NULL) {
        *us++ = '\0';
        sm__trk_seconds(1, us, &ok);
      } else {
        ok = 1;
        us = u + an; /* "" */
      }
      stem = ok ? find(u) : NULL;
      if (stem == NULL || stem->role != R_TIME)
        return 0;
      memmove(u, us, strlen(us) + 1);
      if (u[0] == '\0')
        memcpy(u, "s", 2);
      sm__trk_seconds(1, u, &ok);
    }
    if (!ok || strcmp(u, "min") == 0 || u[0] == 'h')
      return 0; /* only s, ms, us: the parser's unit defaults */
    out->role = R_TIME;
    out->flags |= u[0] == 'm' ? KF_MS : u[0] == 'u' ? KF_US : 0;
    return 1;
  }
  if (word_in(a, an, table()->words[WC_PER])) {
    /* "batch/s", "iters_per_sec": steps over a second. */
    memcpy(u, b, bn);
    u[bn] = '\0';
    sm__trk_seconds(1, u, &ok);
    if (!ok || sm__trk_seconds(1, u, &ok) != 1)
      return 0;
    out->role = R_RATE;
    return 1;
  }
  return 0;
}

/* A step time spelled as words: "time" or "duration", then "per",
 * "this" or "each", then a step word (the table's "per" class), then a
 * time unit at most ("time_this_iter_s" of Ray Tune and RLlib results,
 * "time_per_batch_ms", "duration_each_step").  An epoch's or a run's
 * time ("time_this_epoch_s") is no step time. */
static int time_per_words(const char *key, trk_keyinfo *out) {
  const char *w[5];
  size_t n[5], nw = 0;
  double secs = 1;
  int ok = 1;

  for (const char *c = key; *c && nw < 5;) {
    w[nw] = c;
    n[nw] = strcspn(c, "_");
    c += n[nw++];
    if (*c == '_')
      c++;
    else if (*c)
      return 0;
  }
  if (nw < 3 || nw > 4)
    return 0;
  if (!((n[0] == 4 && strncmp(w[0], "time", 4) == 0) ||
        (n[0] == 8 && strncmp(w[0], "duration", 8) == 0)))
    return 0;
  if (!((n[1] == 3 && strncmp(w[1], "per", 3) == 0) ||
        (n[1] == 4 && strncmp(w[1], "this", 4) == 0) ||
        (n[1] == 4 && strncmp(w[1], "each", 4) == 0)))
    return 0;
  if (!word_in(w[2], n[2], table()->words[WC_PER]))
    return 0;
  if (nw == 4) {
    char u[8];
    if (n[3] >= sizeof(u))
      return 0;
    memcpy(u, w[3], n[3]);
    u[n[3]] = '\0';
    secs = sm__trk_seconds(1, u, &ok);
    if (!ok || !(secs == 1 || secs == 1e-3 || secs == 1e-6))
      return 0;
  }
  out->role = R_TIME;
  out->flags |= secs == 1e-3 ? KF_MS : secs == 1e-6 ? KF_US : 0;
  return 1;
}

/* True when key[0..n) is the prefix of a loss component ("box" of
 * "box_loss"). */
static int is_part_prefix(const char *key, size_t n) {
  const word *list = table()->words[WC_PART];
  for (size_t i = 0; list[i].w != NULL; i++)
    if (list[i].n == n && strncmp(key, list[i].w, n) == 0)
      return 1;
  return 0;
}

/* True when c[0..n) is a table key of a whole loss ("loss_total",
 * "total_loss"), not of a component. */
static int whole_loss_entry(const char *c, size_t n) {
  char k[TRK_KEY_MAX];
  const key_entry *e;

  if (n == 0 || n >= sizeof(k))
    return 0;
  memcpy(k, c, n);
  k[n] = '\0';
  e = find(k);
  return e != NULL && e->role == R_LOSS &&
         !(e->flags & (KF_PART | KF_EVAL | KF_LOW));
}

/* A namespaced loss ("loss/train/total" of Composer, TensorBoard-style
 * "Loss/train", "losses/total"): one component names a loss, every
 * other is a namespace that leaves it the whole training loss (the
 * table's "lossq" words: train, total, ...) or names evaluation. */
static int namespaced_loss(const char *key, trk_keyinfo *out) {
  const keytab *t = table();
  int loss = 0, train = 0, eval = 0;

  for (const char *c = key; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 4 && strncmp(c, "loss", 4) == 0)
      loss = 1;
    else if (n == 6 && strncmp(c, "losses", 6) == 0)
      loss = 1;
    else if (n > 5 && strncmp(c + n - 5, "_loss", 5) == 0 &&
             !is_part_prefix(c, n - 5))
      loss = 1;
    else if (n > 4 && strncmp(c + n - 4, "loss", 4) == 0 && c[n - 5] != '_' &&
             !is_part_prefix(c, n - 4))
      /* A loss module's class name as the metric's name
       * ("train/CrossEntropyLoss", "train/MSELoss"). */
      loss = 1;
    else if (whole_loss_entry(c, n))
      loss = 1; /* "train/loss_total": a table key of a whole loss */
    else if (sm__trk_is_eval_word(c, n))
      eval = 1;
    else if (word_in(c, n, t->words[WC_LOSSQ]))
      train |= (n == 5 && strncmp(c, "train", 5) == 0) ||
               (n == 8 && strncmp(c, "training", 8) == 0);
    else
      return 0;
    c += n;
    if (*c == '/')
      c++;
  }
  if (!loss)
    return 0;
  out->role = eval ? R_EVAL_LOSS : R_LOSS;
  out->flags |= eval ? KF_EVAL : train ? KF_TRAIN : 0;
  return 1;
}

/* Loss terms named by a prefix or by a GAN's networks: "l_pix" (the
 * table's "term" words), "G_GAN" / "D_real", "gen:" / "d:" ("gen" and
 * "disc" words).  A generator's terms are loss parts, a discriminator's
 * come last; both need the other network on the line (KF_NET).  Not
 * where the rest of the key is a known fact of another kind ("g_lr",
 * "d_model" stays unknown as no table key). */
static int term_key(const char *key, size_t fp, trk_keyinfo *out) {
  const key_entry *rest = key[fp] == '_' ? find(key + fp + 1) : NULL;
  const keytab *t = table();

  if (rest != NULL && rest->role != R_LOSS)
    return 0;
  if (key[fp] == '_' && key[fp + 1] != '\0' &&
      word_in(key, fp, t->words[WC_TERM])) {
    out->role = R_LOSS;
    out->flags |= KF_PART;
    return 1;
  }
  if (key[fp] != '\0' && key[fp] != '_')
    return 0;
  if (word_in(key, fp, t->words[WC_GEN])) {
    out->role = R_LOSS;
    out->flags |= KF_PART | KF_NET;
    return 1;
  }
  if (word_in(key, fp, t->words[WC_DISC])) {
    out->role = R_LOSS;
    out->flags |= KF_DISC | KF_NET;
    return 1;
  }
  return 0;
}

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

/* Prose keys of print loops ("avg loss so far is 0.02", "total used
 * time 6133.4 (s)"): a trailing "so far" marks a running value of the
 * run so far, and "used" is a filler word of a clock ("total used time"
 * is "total time").  Looks the key up without them: a loss so far is a
 * running average (KF_LOW), a time so far is cumulative.  Returns 0
 * when the key has neither qualifier or the rest is no loss or time. */
static int prose_key(const char *key, trk_keyinfo *out) {
  char rest[TRK_KEY_MAX];
  size_t kl = strlen(key), o = 0;
  int running = 0, filler = 0;

  if (kl >= sizeof(rest))
    return 0;
  if (kl > 7 && strcmp(key + kl - 7, "_so_far") == 0) {
    running = 1;
    kl -= 7;
  }
  for (size_t i = 0; i < kl;) {
    size_t w = i;
    while (w < kl && key[w] != '_')
      w++;
    if (w - i == 4 && strncmp(key + i, "used", 4) == 0) {
      filler = 1;
    } else {
      if (o > 0)
        rest[o++] = '_';
      memcpy(rest + o, key + i, w - i);
      o += w - i;
    }
    i = w < kl ? w + 1 : w;
  }
  rest[o] = '\0';
  if ((!running && !filler) || o == 0)
    return 0;
  sm__trk_key_lookup(rest, out);
  if (out->role == R_LOSS && !(out->flags & KF_PART)) {
    if (running)
      out->flags |= KF_LOW;
    return 1;
  }
  if (out->role == R_TIME || out->role == R_CUM) {
    if (running)
      out->role = R_CUM;
    return 1;
  }
  out->role = R_NONE;
  out->flags = 0;
  out->unit = NULL;
  return 0;
}

/* A loss named with a smoothing qualifier ("loss(ema)", "loss
 * (smoothed)", "ema_loss", "loss_ema", "smooth_loss"): one component
 * is the loss, every other a word of the table's "smooth" class (not in
 * a namespace: "loss/mean" is a statistic).  It is a running value, which gives
 * way to the plain loss on the line (KF_LOW). */
static int smoothed_loss(const char *key, trk_keyinfo *out) {
  int loss = 0, smooth = 0;

  if (strchr(key, '/') != NULL)
    return 0;
  for (const char *c = key; *c;) {
    size_t n = strcspn(c, "_()");
    if (n == 4 && strncmp(c, "loss", 4) == 0)
      loss++;
    else if (n > 0 && word_in(c, n, table()->words[WC_SMOOTH]))
      smooth++;
    else if (n > 0)
      return 0;
    c += n;
    if (*c)
      c++;
  }
  if (loss != 1 || smooth == 0)
    return 0;
  out->role = R_LOSS;
  out->flags |= KF_LOW;
  return 1;
}

/* "Autoencoder Loss (total): 75.7" beside its terms: a loss named by
 * the generic rules with a "(total)" qualifier is the whole loss of a
 * multi-part loss, not one of its parts.  bl is the length before '('. */
static int qualified_total(const char *key, size_t bl, trk_keyinfo *out) {
  char base[TRK_KEY_MAX];

  if (bl == 0 || bl >= sizeof(base) || strncmp(key + bl, "(total", 6) != 0)
    return 0;
  memcpy(base, key, bl);
  base[bl] = '\0';
  sm__trk_key_lookup(base, out);
  if (out->role == R_LOSS) {
    out->flags &= ~(unsigned)KF_PART;
    return 1;
  }
  out->role = R_NONE;
  out->flags = 0;
  out->unit = NULL;
  return 0;
}

/* The value of a metric logged both per step and per epoch: Lightning's
 * self.log(..., on_step=True, on_epoch=True) names them NAME_step and
 * NAME_epoch ("train_loss_step", "train/loss_total_epoch"), and so do
 * loggers that copy it.  NAME_step is NAME's value at this step; a loss's
 * NAME_epoch is the mean of the epoch so far or of the last one, never
 * the step's loss (R_IGNORE).  Only where NAME is a loss or a learning
 * rate: "global_step", "time_step" and "max_epoch" are other facts. */
static int aggregate_suffix(const char *key, trk_keyinfo *out) {
  char stem[TRK_KEY_MAX];
  size_t kl = strlen(key), sl;
  int per_epoch;

  if (kl > 5 && strcmp(key + kl - 5, "_step") == 0) {
    sl = kl - 5;
    per_epoch = 0;
  } else if (kl > 6 && strcmp(key + kl - 6, "_epoch") == 0) {
    sl = kl - 6;
    per_epoch = 1;
  } else {
    return 0;
  }
  if (sl >= sizeof(stem))
    return 0;
  memcpy(stem, key, sl);
  stem[sl] = '\0';
  sm__trk_key_lookup(stem, out);
  if (out->role == R_LOSS || out->role == R_EVAL_LOSS ||
      (out->role == R_LR && !per_epoch)) {
    if (per_epoch && out->role == R_LOSS) {
      out->role = R_IGNORE;
      out->flags &= ~(unsigned)(KF_PART | KF_LOW);
    }
    return 1;
  }
  out->role = R_NONE;
  out->flags = 0;
  out->unit = NULL;
  return 0;
}

void sm__trk_key_lookup(const char *key, trk_keyinfo *out) {
  const key_entry *e;
  char base[TRK_KEY_MAX];
  const char *q = NULL;
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
      else if (e != NULL && e->role == R_LOSS &&
               word_in(q + 1, strcspn(q + 1, ")"), table()->words[WC_SMOOTH]))
        out->flags |= KF_LOW; /* "loss(ema)", "loss (smoothed)" */
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
  if (q != NULL && qualified_total(key, (size_t)(q - key), out))
    return;
  if (aggregate_suffix(key, out))
    return;
  if (smoothed_loss(key, out))
    return;
  if (prose_key(key, out))
    return;
  if (strchr(key, '/') != NULL && namespaced_loss(key, out))
    return;
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
      trk_keyinfo rest;
      if (r != NULL && r->role != R_LOSS && r->role != R_TIME &&
          r->role != R_CUM) {
        out->role = r->role;
        out->unit = r->unit;
        return;
      }
      /* "train_loss_total", "train/loss_total": the training loss named
       * by a rest that is the whole loss of its own ("loss_total"). */
      if (r != NULL && r->role == R_LOSS && !(r->flags & KF_PART) &&
          strcmp(key + fp + 1, "loss") != 0) {
        out->role = R_LOSS;
        out->flags |= r->flags & ~(unsigned)KF_EVAL;
        return;
      }
      if (r == NULL) {
        sm__trk_key_lookup(key + fp + 1, &rest);
        if (rest.role == R_LOSS && !(rest.flags & (KF_PART | KF_EVAL)) &&
            strncmp(key + fp + 1, "loss_", 5) == 0) {
          out->role = R_LOSS;
          out->flags |= rest.flags;
          return;
        }
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
      /* loss_cls, loss_bbox: components; loss_all, loss_sum: the whole
       * loss (the "lossq" words). */
      out->role = word_in(key + 5, strlen(key + 5), table()->words[WC_LOSSQ])
                      ? R_LOSS
                      : R_IGNORE;
    else {
      size_t pl =
          (size_t)(strstr(key, "_loss") ? strstr(key, "_loss") - key : 0);
      size_t kl = strlen(key);
      /* "actor/loss": the whole loss of a namespace, above its named
       * terms ("actor/pg_loss", "actor/kl_loss"). */
      int leaf = kl > 5 && strcmp(key + kl - 5, "/loss") == 0;
      int part_ns = leaf && is_part_prefix(key, first_part(key));
      int whole = leaf && !part_ns;
      int comp = (pl > 0 && is_part_prefix(key, pl)) || part_ns;
      /* "all_loss", "sum_loss" beside "det_loss", "bbox_loss": a prefix
       * that is a "lossq" word names the whole loss, not a term. */
      if (pl > 0 && kl == pl + 5 &&
          word_in(key, pl, table()->words[WC_LOSSQ]) &&
          !word_in(key, pl, table()->words[WC_SMOOTH]))
        whole = 1;
      out->role = comp ? R_IGNORE : R_LOSS;
      out->flags |= comp || whole ? 0 : KF_PART;
    }
    return;
  }
  if (out->flags & KF_EVAL)
    return;
  if (unit_key(key, out) || time_per_words(key, out) || term_key(key, fp, out))
    return;
  if ((strncmp(key, "lr_", 3) == 0 || strncmp(key, "lr/", 3) == 0) &&
      strstr(key, "sched") == NULL && strstr(key, "scale") == NULL)
    out->role = R_LR;
}

/* ==== Units ==== */

/* Time units a per-step unit may be written in, and their seconds. */
static double time_word(const char *u, size_t n) {
  static const struct {
    const char *u;
    double f;
  } t[] = {{"s", 1},       {"sec", 1},      {"secs", 1},
           {"second", 1},  {"seconds", 1},  {"ms", 1e-3},
           {"msec", 1e-3}, {"msecs", 1e-3}, {"us", 1e-6}};
  for (size_t i = 0; i < SM_ARRAY_LEN(t); i++)
    if (strlen(t[i].u) == n && strncmp(u, t[i].u, n) == 0)
      return t[i].f;
  return 0;
}

int sm__trk_unit_per(const char *unit, double *secs) {
  const char *sl = strchr(unit, '/');
  size_t an, bn;
  double f;

  if (sl == NULL || strchr(sl + 1, '/') != NULL)
    return 0;
  an = (size_t)(sl - unit);
  bn = strlen(sl + 1);
  if (an == 0 || bn == 0)
    return 0;
  if ((f = time_word(unit, an)) > 0 &&
      word_in(sl + 1, bn, table()->words[WC_PER])) {
    if (secs)
      *secs = f;
    return 1; /* "sec/step", "seconds/iteration", "ms/update" */
  }
  if (word_in(unit, an, table()->words[WC_PER]) && time_word(sl + 1, bn) == 1) {
    if (secs)
      *secs = 1;
    return 2; /* "steps/sec", "it/sec", "batches/s" */
  }
  return 0;
}

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

  double f;

  for (size_t i = 0; i < SM_ARRAY_LEN(units); i++)
    if (strcmp(unit, units[i].u) == 0 && units[i].f > 0) {
      *ok = 1;
      return v * units[i].f;
    }
  /* Any time unit over a step word ("seconds/iteration"). */
  if (strchr(unit, '/') != NULL && sm__trk_unit_per(unit, &f) == 1) {
    *ok = 1;
    return v * f;
  }
  *ok = 0;
  return v;
}
