/* lex.c - the tracker's tokenizer and key/value pairing.
 *
 * A progress line is a sequence of words, numbers and punctuation in one
 * of a handful of layouts: "key: value", "key=value", "key value", Python
 * and JSON dicts, '|'-separated tables, "- key: value" (Keras), tqdm bars
 * ("37/500 [00:12<02:31, 3.05it/s, loss=0.42]").  Rather than a pattern
 * per framework, one tokenizer reads them all:
 *
 *   - numbers keep their unit suffix ("45.2ms", "3.05it/s", "4.76G") or a
 *     unit word after them ("603.03 ms", "12.3 samples/s"); "n/m" becomes
 *     one fraction token even with blanks around the slash; "12:34" and
 *     "1:02:03" are clocks; calendar dates are recognised and skipped;
 *   - words may contain '_', '-', '.', '/', '@' inside ("lm-loss",
 *     "loss/mean", "Acc@1") and a short "(qualifier)" ("Epoch(val)");
 *   - runs of bar glyphs ("=====>....", block elements) are one token.
 *
 * Pairing then gives each number the words right before it as its key
 * (at most four, so "elapsed time per iteration (ms)" is one key with a
 * unit), using ':' and '=' as separators and everything else ('|', ',',
 * brackets, " - ") as a boundary.  Words that end up in no key are kept
 * as free words: the guards look at them ("Evaluating", "Downloading"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "track_int.h"

static int dg(int c) {
  return c >= '0' && c <= '9';
}
static int al(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static int alnum_(int c) {
  return al(c) || dg(c) || c == '_';
}
static int lower(int c) {
  return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* Unit words that may follow a number after a blank. */
static const char *const unit_words[] = {
    "ms",         "s",        "sec",         "secs",
    "seconds",    "us",       "min",         "mins",
    "minutes",    "h",        "hrs",         "hours",
    "it/s",       "s/it",     "samples/s",   "samples/sec",
    "sample/s",   "tokens/s", "tokens/sec",  "tok/s",
    "token/s",    "img/s",    "imgs/s",      "images/s",
    "images/sec", "ex/s",     "examples/s",  "examples/sec",
    "words/s",    "steps/s",  "step/s",      "updates/s",
    "ba/s",       "seq/s",    "sequences/s", "tflops",
    "tflop/s",    "ms/step",  "ms/it",       "ms/iter",
    "s/step",     "s/iter",   "ms/batch",    "s/batch",
    "it",         "b/s",      "kb/s",        "mb/s",
    "gb/s",       "kib/s",    "mib/s",       "gib/s",
    NULL};

static int is_unit_word(const char *s, size_t n) {
  char u[16];

  /* A time over a step word or steps over a second, however spelled
   * ("sec/step", "seconds/iter", "steps/sec"). */
  if (n < sizeof(u) && memchr(s, '/', n) != NULL) {
    for (size_t i = 0; i < n; i++)
      u[i] = (char)lower((unsigned char)s[i]);
    u[n] = '\0';
    if (sm__trk_unit_per(u, NULL) > 0)
      return 1;
  }
  for (int i = 0; unit_words[i]; i++) {
    size_t l = strlen(unit_words[i]);
    if (l == n) {
      size_t j = 0;
      while (j < n && lower((unsigned char)s[j]) == unit_words[i][j])
        j++;
      if (j == n)
        return 1;
    }
  }
  return 0;
}

double sm__trk_count_scale(const char *u) {
  if (u[0] == '\0' || strcmp(u, "it") == 0)
    return 1;
  if (strcmp(u, "k") == 0 || strcmp(u, "kit") == 0)
    return 1e3;
  if (strcmp(u, "m") == 0 || strcmp(u, "mit") == 0)
    return 1e6;
  return 0;
}

static int is_time_unit(const char *u) {
  int ok;
  sm__trk_seconds(1, u, &ok);
  return ok;
}

/* ==== Tokens ==== */

static trk_tok *push(trk_line *L, int kind, size_t off, size_t len, int sp) {
  trk_tok *t;

  if (L->ntok >= TRK_MAX_TOKS)
    return NULL;
  t = &L->tok[L->ntok++];
  memset(t, 0, sizeof(*t));
  t->kind = (uint8_t)kind;
  t->off = (uint16_t)off;
  t->len = (uint16_t)len;
  t->sp = (uint8_t)sp;
  return t;
}

/* Parses digits (with thousands groups) and an optional decimal part and
 * exponent at s[i]; returns the end and the value. */
static size_t scan_number(const char *s, size_t n, size_t i, double *v,
                          int *isint) {
  char buf[64];
  size_t j = i, b = 0, run = 0;

/* Appends a byte to buf, dropping what does not fit (a number of more
 * than 60 characters has no meaning in a log line anyway). */
#define PUT(c)                                                                 \
  do {                                                                         \
    if (b < sizeof(buf) - 1)                                                   \
      buf[b++] = (c);                                                          \
  } while (0)

  *isint = 1;
  if (j < n && (s[j] == '-' || s[j] == '+'))
    PUT(s[j++]);
  while (j < n && dg(s[j])) {
    PUT(s[j]);
    j++;
    run++;
  }
  /* "5,678" and "12,226,560": a comma followed by exactly three digits
   * that end the number. */
  while (run >= 1 && run <= 3 && j + 3 < n && s[j] == ',' && dg(s[j + 1]) &&
         dg(s[j + 2]) && dg(s[j + 3]) && (j + 4 >= n || !dg(s[j + 4]))) {
    for (size_t k = 1; k <= 3; k++)
      PUT(s[j + k]);
    j += 4;
    run = 3;
  }
  if (j + 1 < n && s[j] == '.' && dg(s[j + 1])) {
    *isint = 0;
    PUT('.');
    j++;
    while (j < n && dg(s[j])) {
      PUT(s[j]);
      j++;
    }
  }
  if (j + 1 < n && (s[j] == 'e' || s[j] == 'E') &&
      (dg(s[j + 1]) ||
       (j + 2 < n && (s[j + 1] == '-' || s[j + 1] == '+') && dg(s[j + 2])))) {
    *isint = 0;
    PUT('e');
    PUT(s[j + 1]);
    j += 2;
    while (j < n && dg(s[j])) {
      PUT(s[j]);
      j++;
    }
  }
#undef PUT
  buf[b] = '\0';
  *v = strtod(buf, NULL);
  return j;
}

/* A clock "H:MM", "MM:SS", "H:MM:SS" with an optional fraction at s[i]:
 * returns its end (0 when there is none) and the seconds. */
static size_t scan_clock(const char *s, size_t n, size_t i, double *secs) {
  size_t j = i;
  double part[3] = {0, 0, 0}, frac = 0;
  int np = 0;

  while (np < 3) {
    size_t k = j;
    double x = 0;
    while (k < n && dg(s[k]) && k - j < 3) {
      x = x * 10 + (s[k] - '0');
      k++;
    }
    if (k == j || (np > 0 && k - j != 2))
      return 0;
    part[np++] = x;
    j = k;
    if (j + 2 < n && s[j] == ':' && dg(s[j + 1]) && dg(s[j + 2]) && np < 3)
      j++;
    else
      break;
  }
  if (np < 2 || (j < n && dg(s[j])))
    return 0;
  if (j + 1 < n && s[j] == '.' && dg(s[j + 1])) {
    double sc = 0.1;
    j++;
    while (j < n && dg(s[j])) {
      frac += (s[j] - '0') * sc;
      sc /= 10;
      j++;
    }
  }
  if (np == 2)
    *secs = part[0] * 60 + part[1] + frac;
  else
    *secs = part[0] * 3600 + part[1] * 60 + part[2] + frac;
  return j;
}

/* A calendar date "2022-11-24" / "2022/08/22" at s[i]; returns its end
 * or 0. */
static size_t scan_date(const char *s, size_t n, size_t i) {
  size_t j = i;
  char sep;

  for (int k = 0; k < 4; k++, j++)
    if (j >= n || !dg(s[j]))
      return 0;
  if (j >= n || (s[j] != '-' && s[j] != '/'))
    return 0;
  sep = s[j++];
  if (j + 1 >= n || !dg(s[j]))
    return 0;
  while (j < n && dg(s[j]))
    j++;
  if (j >= n || s[j] != sep)
    return 0;
  j++;
  if (j >= n || !dg(s[j]))
    return 0;
  while (j < n && dg(s[j]))
    j++;
  if (j < n && s[j] == 'T')
    j++;
  return j;
}

/* True at s[u] == '/' for "/s" or "/sec" ending a word: a rate written
 * as "500.1/s" (per second) rather than "1440/global_step". */
static int bare_per_second(const char *s, size_t n, size_t u) {
  size_t e = u + 1;

  while (e < n && al(s[e]))
    e++;
  if (e < n && (dg(s[e]) || s[e] == '_'))
    return 0;
  return (e - u - 1 == 1 && s[u + 1] == 's') ||
         (e - u - 1 == 3 && memcmp(s + u + 1, "sec", 3) == 0);
}

/* An ordinal ("58036th step", "1st", "22nd", "3rd"; also the "1th" of
 * a format string that appends "th" to every count) is the count itself:
 * a plain integer, its suffix no unit. */
static void drop_ordinal(trk_tok *t, char first) {
  const char *u = t->unit;
  if (t->isint && first != '-' &&
      (strcmp(u, "th") == 0 || strcmp(u, "st") == 0 || strcmp(u, "nd") == 0 ||
       strcmp(u, "rd") == 0))
    t->unit[0] = '\0';
}

/* The integer total of " of N" or " out of N" at s[j] (ordinal counters:
 * "Step 3 of 10", "Iteration 200 out of 20000"): the end of N with *den
 * set, or 0. */
static size_t ordinal_total(const char *s, size_t n, size_t j, double *den) {
  size_t of = 0, e;
  int dint;

  if (j + 4 < n && s[j] == ' ' && s[j + 1] == 'o' && s[j + 2] == 'f' &&
      s[j + 3] == ' ' && dg(s[j + 4]))
    of = j + 4;
  else if (j + 8 < n && memcmp(s + j, " out of ", 8) == 0 && dg(s[j + 8]))
    of = j + 8;
  if (of == 0)
    return 0;
  e = scan_number(s, n, of, den, &dint);
  return dint && (e >= n || !al(s[e])) ? e : 0;
}

/* Lexes a number-like token at s[i] and returns the end. */
static size_t lex_number(trk_line *L, const char *s, size_t n, size_t i,
                         int sp) {
  size_t j, u;
  double v, secs;
  int isint;
  trk_tok *t;

  if ((j = scan_date(s, n, i)) > 0) {
    push(L, TK_DATE, i, j - i, sp);
    return j;
  }
  if (dg(s[i]) && (j = scan_clock(s, n, i, &secs)) > 0) {
    t = push(L, TK_CLOCK, i, j - i, sp);
    if (t)
      t->v = secs;
    return j;
  }
  j = scan_number(s, n, i, &v, &isint);
  t = push(L, TK_NUM, i, j - i, sp);
  if (t == NULL)
    return j;
  t->v = v;
  t->isint = (uint8_t)isint;
  /* Attached unit suffix: letters, '%', µ, and '/' between letters. */
  u = j;
  {
    size_t ul = 0;
    while (u < n && ul < sizeof(t->unit) - 1) {
      unsigned char c = (unsigned char)s[u];
      if (al(c) || c == '%') {
        t->unit[ul++] = (char)lower(c);
        u++;
      } else if (c == '/' && u + 1 < n && (al(s[u + 1]) || s[u + 1] == '%') &&
                 (ul > 0 || bare_per_second(s, n, u))) {
        /* "3.05it/s", "5ms/step"; a leading '/' only as in "500.1/s". */
        t->unit[ul++] = '/';
        u++;
      } else if ((c == 0xc2 && u + 1 < n && (unsigned char)s[u + 1] == 0xb5) ||
                 (c == 0xce && u + 1 < n && (unsigned char)s[u + 1] == 0xbc)) {
        t->unit[ul++] = 'u'; /* micro sign */
        u += 2;
      } else {
        break;
      }
    }
    t->unit[ul] = '\0';
    drop_ordinal(t, s[i]);
    /* An abbreviated count over another ("12.9k/200k", tqdm's
     * unit_scale): one fraction, in units. */
    if (ul > 0 && sm__trk_count_scale(t->unit) > 1 && u + 1 < n &&
        s[u] == '/' && dg(s[u + 1])) {
      double den;
      int dint;
      size_t e = scan_number(s, n, u + 1, &den, &dint), k = e;
      char du[8];
      size_t dl = 0;
      while (k < n && al(s[k]) && dl < sizeof(du) - 1)
        du[dl++] = (char)lower((unsigned char)s[k++]);
      du[dl] = '\0';
      if (k >= n || !al(s[k])) {
        double sn = sm__trk_count_scale(t->unit), sd = sm__trk_count_scale(du);
        if (sd > 0) {
          t->kind = TK_FRAC;
          t->v = v * sn;
          t->total = den * sd;
          t->isint = 1;
          t->unit[0] = '\0';
          t->len = (uint16_t)(k - i);
          return k;
        }
      }
    }
    /* A word glued to a number ("10epochs", "0x1f") is not a unit if it
     * goes on with digits; keep what was read, the pairing ignores it. */
    if (ul > 0) {
      t->len = (uint16_t)(u - i);
      return u;
    }
  }
  /* A fraction: "37/500", "70/    1000", "100 / 1000". */
  if (isint && s[i] != '-' && s[i] != '+') {
    size_t k = j, pre = 0;
    while (k < n && s[k] == ' ' && pre < 12) {
      k++;
      pre++;
    }
    if (k < n && s[k] == '/') {
      size_t m = k + 1, post = 0;
      while (m < n && s[m] == ' ' && post < 12) {
        m++;
        post++;
      }
      if (m < n && dg(s[m]) && (pre == 0 || post > 0)) {
        double den;
        int dint;
        size_t e = scan_number(s, n, m, &den, &dint);
        if (dint) {
          /* "08/22 15:51" is a date in front of a time of day. */
          double cs;
          if (pre == 0 && post == 0 && e < n && s[e] == ' ' && e + 1 < n &&
              dg(s[e + 1]) && scan_clock(s, n, e + 1, &cs) > 0 && v >= 1 &&
              v <= 12 && den >= 1 && den <= 31) {
            t->kind = TK_DATE;
            t->len = (uint16_t)(e - i);
            return e;
          }
          t->kind = TK_FRAC;
          t->total = den;
          t->len = (uint16_t)(e - i);
          return e;
        }
      }
    }
    /* "3 of 10", "3 out of 10" (ordinal counters of print loops). */
    double den;
    size_t e = ordinal_total(s, n, j, &den);
    if (e > 0) {
      t->kind = TK_FRAC;
      t->total = den;
      t->len = (uint16_t)(e - i);
      return e;
    }
  }
  /* A unit word after one or two blanks: "603.03 ms", "12 samples/s". */
  {
    size_t k = j, w;
    if (k < n && s[k] == ' ')
      k++;
    if (k < n && s[k] == ' ')
      k++;
    if (k > j && k < n && (al(s[k]) || s[k] == '%')) {
      w = k;
      while (w < n && (al(s[w]) || s[w] == '/' || s[w] == '%'))
        w++;
      if (w - k < sizeof(t->unit) && is_unit_word(s + k, w - k) &&
          (w >= n ||
           !(dg(s[w]) || s[w] == '_' || s[w] == '=' || s[w] == ':'))) {
        for (size_t q = k; q < w; q++)
          t->unit[q - k] = (char)lower((unsigned char)s[q]);
        t->unit[w - k] = '\0';
        return w;
      }
    }
  }
  return j;
}

/* Length of " (word)" at s[j] when a ':' or '=' and a value follow it
 * (blanks allowed between): a key's qualifier written apart from the
 * key.  0 when there is none, or when the word is a time unit. */
static size_t blank_qualifier(const char *s, size_t n, size_t j) {
  size_t k = j, w, e;
  char u[16];

  while (k < n && s[k] == ' ' && k - j < 2)
    k++;
  if (k == j || k >= n || s[k] != '(')
    return 0;
  w = k + 1;
  e = w;
  while (e < n && al(s[e]) && e - w < 12)
    e++;
  if (e == w || e >= n || s[e] != ')')
    return 0;
  for (size_t q = w; q < e; q++)
    u[q - w] = (char)lower((unsigned char)s[q]);
  u[e - w] = '\0';
  if (is_time_unit(u))
    return 0;
  k = e + 1;
  while (k < n && s[k] == ' ')
    k++;
  if (k >= n || (s[k] != ':' && s[k] != '='))
    return 0;
  k++;
  while (k < n && s[k] == ' ')
    k++;
  if (k >= n || !(dg(s[k]) || s[k] == '-' || s[k] == '(' || s[k] == '['))
    return 0;
  return e + 1 - j;
}

/* Lexes a word at s[i] (a letter or '_') and returns the end. */
static size_t lex_word(trk_line *L, const char *s, size_t n, size_t i, int sp) {
  static const char *const nonfinite[] = {"nan", "inf", "infinity", NULL};
  size_t j = i;

  while (j < n) {
    char c = s[j];
    if (alnum_(c) || c == '@')
      j++;
    else if ((c == '.' || c == '-' || c == '/' || c == '+') && j + 1 < n &&
             alnum_(s[j + 1]))
      j++;
    else if (c == '(') {
      /* "Epoch(train)", "Epoch(val)": a short letter qualifier. */
      size_t k = j + 1;
      while (k < n && al(s[k]) && k - j <= 12)
        k++;
      if (k < n && s[k] == ')' && k > j + 1)
        j = k + 1;
      break;
    } else
      break;
  }
  /* The same qualifier after a blank, when the key's value follows it:
   * "time (data): 1.631 (0.261)", "Loss (train) = 0.52".  A unit in
   * parentheses ("Time (s): 1.2") stays a unit annotation. */
  j += blank_qualifier(s, n, j);
  /* "loss: nan", "grad_norm=inf": a value that is not a number, also as
   * a tensor prints it ("nan.0"). */
  {
    size_t w = j;
    const char *dot = memchr(s + i, '.', j - i);
    if (dot != NULL) {
      size_t q = (size_t)(dot - s) + 1;
      while (q < j && dg(s[q]))
        q++;
      if (q == j && q > (size_t)(dot - s) + 1)
        w = (size_t)(dot - s);
    }
    for (int k = 0; nonfinite[k]; k++)
      if (strlen(nonfinite[k]) == w - i &&
          strncasecmp(s + i, nonfinite[k], w - i) == 0) {
        trk_tok *t = push(L, TK_NUM, i, j - i, sp);
        if (t)
          t->v = NAN;
        return j;
      }
  }
  push(L, TK_WORD, i, j - i, sp);
  return j;
}

/* Length of a UTF-8 progress-bar glyph at s[i] (block elements U+2580 to
 * U+259F, box drawing U+2500 to U+257F), or 0. */
static size_t bar_glyph(const unsigned char *s, size_t n, size_t i) {
  if (i + 2 < n && s[i] == 0xe2 &&
      ((s[i + 1] == 0x96 && s[i + 2] >= 0x80 && s[i + 2] <= 0x9f) ||
       ((s[i + 1] == 0x94 || s[i + 1] == 0x95) && s[i + 2] >= 0x80 &&
        s[i + 2] <= 0xbf)))
    return 3;
  return 0;
}

static int ascii_bar_char(char c) {
  return c == '=' || c == '>' || c == '.' || c == '#' || c == '-' || c == '*' ||
         c == '~';
}

static void lex_tokens(trk_line *L, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, ts0 = 0, ts1 = 0;
  int sp = 1;

  L->s = s;
  L->n = n;
  L->ntok = 0;
  L->ts = sm__trk_timestamp(s, n, &ts0, &ts1);
  if (!(L->ts == L->ts))
    ts0 = ts1 = 0;
  while (i < n && L->ntok < TRK_MAX_TOKS) {
    unsigned char c = u[i];
    size_t g;

    if (ts1 > ts0 && i == ts0) {
      push(L, TK_DATE, ts0, ts1 - ts0, sp);
      i = ts1;
      sp = 0;
      continue;
    }
    if (c == ' ' || c == '\t') {
      sp = 1;
      i++;
      continue;
    }
    if (dg(c) || ((c == '-' || c == '+') && i + 1 < n && dg(u[i + 1]) &&
                  (i == 0 || !(alnum_(u[i - 1]) || u[i - 1] == '.' ||
                               u[i - 1] == ')')))) {
      i = lex_number(L, s, n, i, sp);
      sp = 0;
      continue;
    }
    if (al(c) || c == '_') {
      i = lex_word(L, s, n, i, sp);
      sp = 0;
      continue;
    }
    if ((g = bar_glyph(u, n, i)) > 0) {
      size_t j = i;
      while (j < n && (g = bar_glyph(u, n, j)) > 0)
        j += g;
      push(L, TK_BAR, i, j - i, sp);
      i = j;
      sp = 0;
      continue;
    }
    if (c >= 0x80) {
      /* Other non-ASCII text: one boundary token per run. */
      size_t j = i;
      while (j < n && u[j] >= 0x80 && bar_glyph(u, n, j) == 0)
        j++;
      {
        trk_tok *t = push(L, TK_PUNCT, i, j - i, sp);
        if (t)
          t->c = '?';
      }
      i = j;
      sp = 0;
      continue;
    }
    if (ascii_bar_char((char)c) && i + 2 < n && ascii_bar_char(s[i + 1]) &&
        ascii_bar_char(s[i + 2])) {
      size_t j = i;
      while (j < n && ascii_bar_char(s[j]))
        j++;
      push(L, TK_BAR, i, j - i, sp);
      i = j;
      sp = 0;
      continue;
    }
    if ((c == '(' || c == '[') && i + 2 < n) {
      /* Unit annotation: "(ms)", "[s]". */
      char close = c == '(' ? ')' : ']';
      size_t j = i + 1;
      while (j < n && al(s[j]) && j - i <= 8)
        j++;
      if (j < n && s[j] == close && j > i + 1) {
        char unit[16];
        size_t l = j - i - 1;
        for (size_t q = 0; q < l; q++)
          unit[q] = (char)lower(u[i + 1 + q]);
        unit[l] = '\0';
        if (is_time_unit(unit)) {
          trk_tok *t = push(L, TK_UNITANN, i, j + 1 - i, sp);
          if (t)
            memcpy(t->unit, unit, l + 1);
          i = j + 1;
          sp = 0;
          continue;
        }
      }
    }
    if (c >= 0x20 && c < 0x7f) {
      trk_tok *t = push(L, TK_PUNCT, i, 1, sp);
      if (t)
        t->c = (char)c;
    }
    i++;
    sp = 0;
  }
}

/* ==== Pairing ==== */

static int tok_is(const trk_line *L, int k, const char *w) {
  const trk_tok *t = &L->tok[k];
  size_t l = strlen(w);

  if (t->kind != TK_WORD || t->len != l)
    return 0;
  for (size_t i = 0; i < l; i++)
    if (lower((unsigned char)L->s[t->off + i]) != w[i])
      return 0;
  return 1;
}

static int is_value(const trk_tok *t) {
  return t->kind == TK_NUM || t->kind == TK_FRAC || t->kind == TK_CLOCK;
}

/* The next token that is not a quote, or -1. */
static int next_solid(const trk_line *L, int k) {
  for (k++; k < L->ntok; k++) {
    const trk_tok *t = &L->tok[k];
    if (!(t->kind == TK_PUNCT && (t->c == '\'' || t->c == '"')))
      return k;
  }
  return -1;
}

static void add_free(trk_line *L, int k) {
  if (L->nfree < TRK_MAX_FREE)
    L->free_tok[L->nfree++] = k;
}

void sm__trk_canon(const trk_line *L, const int *w, int nw, char *out,
                   size_t cap) {
  size_t o = 0;

  for (int i = 0; i < nw && o + 1 < cap; i++) {
    const trk_tok *t = &L->tok[w[i]];
    if (i > 0)
      out[o++] = '_';
    for (size_t j = 0; j < t->len && o + 1 < cap; j++) {
      char c = (char)lower((unsigned char)L->s[t->off + j]);
      if (c == ' ')
        continue; /* "time (data)": the qualifier written apart */
      out[o++] = c == '-' ? '_' : c;
    }
  }
  out[o] = '\0';
}

/* True when token k is a framework's repr around a value:
 * "tensor(0.51", "tensor([0.51]", "array(0.51", "tf.Tensor(0.51". */
static int wrapped_value(const trk_line *L, int k) {
  int v = k + 2;

  if (k + 2 >= L->ntok || L->tok[k].kind != TK_WORD ||
      L->tok[k + 1].kind != TK_PUNCT || L->tok[k + 1].c != '(' ||
      L->tok[k + 1].sp ||
      !sm__trk_is_wrap_word(L->s + L->tok[k].off, L->tok[k].len))
    return 0;
  if (L->tok[v].kind == TK_PUNCT && L->tok[v].c == '[' && v + 1 < L->ntok)
    v++;
  return is_value(&L->tok[v]);
}

/* Words that end a key instead of being part of one. */
static const char *const stop_words[] = {"and", "with",  "at",   "then",
                                         "for", "after", "from", "to",
                                         "on",  "of",    "by",   NULL};
/* Words that stand between a key and its value ("grpo_loss is 0.1"). */
static const char *const link_words[] = {"is", "was", "are", NULL};

static int in_list(const trk_line *L, int k, const char *const *list) {
  if (L->tok[k].len > 5) /* the longest stop or link word */
    return 0;
  for (int i = 0; list[i]; i++)
    if (tok_is(L, k, list[i]))
      return 1;
  return 0;
}

/* True when the number at token k ends a source location written
 * without blanks, "module:function:42" (loguru's default prefix, "%(name)s
 * :%(funcName)s:%(lineno)d"): a line of code, not the value of a key,
 * even when the function is called "step". */
static int source_line(const trk_line *L, int k) {
  const trk_tok *t = &L->tok[k];

  if (t->kind != TK_NUM || !t->isint || t->sp || t->unit[0] || k < 4)
    return 0;
  for (int q = k - 1; q >= k - 3; q--)
    if (L->tok[q].sp)
      return 0;
  return L->tok[k - 1].kind == TK_PUNCT && L->tok[k - 1].c == ':' &&
         L->tok[k - 2].kind == TK_WORD && L->tok[k - 3].kind == TK_PUNCT &&
         L->tok[k - 3].c == ':' && L->tok[k - 4].kind == TK_WORD;
}

#define MAX_PENDING 8
#define MAX_KEY_WORDS 4
#define MAX_NEST 16

/* The lexer's state between tokens: key words not yet used (pend), the
 * separator seen after them, the annotated unit ("in s"), and the
 * brackets open around the position. */
typedef struct lexst {
  int pend[MAX_PENDING], np;
  int sep, paren, bracket;
  char nest[MAX_NEST]; /* '(' '[' or 'T' (a transparent bracket) */
  int nn;
  char ann[16];
} lexst;

/* The pending words are no key: free words of the line. */
static void flush(trk_line *L, lexst *F) {
  for (int q = 0; q < F->np; q++)
    add_free(L, F->pend[q]);
  F->np = 0;
  F->sep = 0;
  F->ann[0] = '\0';
}

/* A word at k: a wrapped value's repr, a link or stop word, a unit
 * annotation, or one more key word.  Returns the last token used. */
static int key_word(trk_line *L, lexst *F, int k) {
  if (F->np > 0 && wrapped_value(L, k)) {
    /* "loss: tensor(0.5123, device='cuda:0')": the repr's value is
     * the key's; its parenthesis is transparent. */
    if (!F->sep)
      F->sep = ' ';
    if (F->nn < MAX_NEST)
      F->nest[F->nn++] = 't';
    return k + 1;
  }
  if (in_list(L, k, link_words)) {
    if (F->np > 0)
      F->sep = ' ';
    return k;
  }
  if (in_list(L, k, stop_words)) {
    /* "in s" is a unit annotation: "train_step_timing in s=0.6". */
    flush(L, F);
    return k;
  }
  if (tok_is(L, k, "in") && k + 1 < L->ntok && L->tok[k + 1].kind == TK_WORD) {
    char u[16];
    const trk_tok *w = &L->tok[k + 1];
    size_t l = w->len < sizeof(u) - 1 ? w->len : sizeof(u) - 1;
    for (size_t q = 0; q < l; q++)
      u[q] = (char)lower((unsigned char)L->s[w->off + q]);
    u[l] = '\0';
    if (is_time_unit(u) && F->np > 0) {
      memcpy(F->ann, u, l + 1);
      return k + 1;
    }
  }
  if (F->np == MAX_PENDING) {
    add_free(L, F->pend[0]);
    memmove(F->pend, F->pend + 1, (MAX_PENDING - 1) * sizeof(int));
    F->np--;
  }
  F->pend[F->np++] = k;
  F->sep = 0;
  return k;
}

/* Punctuation at k: a separator before a value, a number sign, brackets
 * and parentheses (transparent around a key's value), or the end of a
 * key. */
static void key_punct(trk_line *L, lexst *F, int k) {
  const trk_tok *t = &L->tok[k];
  int nx;

  switch (t->c) {
  case '\'':
  case '"':
    break;
  case ':':
  case '=':
    /* "lr: 0.1", "lr=[5e-05, 5e-05]", "lr:(2.973e-05,)": a value, or
     * a list or tuple of values, follows. */
    nx = next_solid(L, k);
    if (nx >= 0 && (is_value(&L->tok[nx]) || wrapped_value(L, nx) ||
                    (L->tok[nx].kind == TK_PUNCT &&
                     (L->tok[nx].c == '[' || L->tok[nx].c == '(') &&
                     nx + 1 < L->ntok && is_value(&L->tok[nx + 1]))))
      F->sep = t->c;
    else
      flush(L, F);
    break;
  case '#':
    /* "Step #300", "Epoch #3": a number sign between a key and its
     * value. */
    nx = next_solid(L, k);
    if (!(F->np > 0 && nx == k + 1 && L->tok[nx].kind == TK_NUM &&
          L->tok[nx].isint &&
          !(nx + 2 < L->ntok && L->tok[nx + 1].kind == TK_PUNCT &&
            (L->tok[nx + 1].c == ':' || L->tok[nx + 1].c == '=') &&
            is_value(&L->tok[nx + 2]))))
      flush(L, F); /* "loss #1: 0.3" numbers a loss, it is no value */
    break;
  case '.':
    /* "Ep. 24 : Up. 1229500 : Cost 1.97" (Marian and other C++
     * toolkits): an abbreviated key, its period written right after the
     * word, then the value; it separates like ':'. */
    nx = next_solid(L, k);
    if (F->np > 0 && F->sep == 0 && nx >= 0 && is_value(&L->tok[nx]) &&
        L->tok[F->pend[F->np - 1]].off + L->tok[F->pend[F->np - 1]].len ==
            t->off &&
        (k + 1 >= L->ntok || L->tok[k + 1].off > t->off + 1))
      F->sep = ':';
    else
      flush(L, F);
    break;
  case '[':
    nx = next_solid(L, k);
    if (F->np > 0 && nx >= 0 && is_value(&L->tok[nx])) {
      if (F->nn < MAX_NEST)
        F->nest[F->nn++] = 'T';
    } else {
      flush(L, F);
      if (F->nn < MAX_NEST)
        F->nest[F->nn++] = '[';
      F->bracket++;
    }
    break;
  case '(':
    nx = next_solid(L, k);
    if (F->np > 0 && F->sep && nx >= 0 && is_value(&L->tok[nx])) {
      /* The tuple of "lr:(2.973e-05,)": its first value is the
       * key's. */
      if (F->nn < MAX_NEST)
        F->nest[F->nn++] = 't';
      break;
    }
    flush(L, F);
    if (F->nn < MAX_NEST)
      F->nest[F->nn++] = '(';
    F->paren++;
    break;
  case ']':
  case ')':
    flush(L, F);
    if (F->nn > 0) {
      char o = F->nest[--F->nn];
      if (o == '[')
        F->bracket--;
      else if (o == '(')
        F->paren--;
    }
    break;
  default:
    flush(L, F);
  }
}

/* A value at k (number, fraction, clock): a field with the pending words
 * as its key, unless the line is source code. */
static void key_value(trk_line *L, lexst *F, int k) {
  const trk_tok *t = &L->tok[k];
  trk_field *f;
  int nk = F->np > MAX_KEY_WORDS ? MAX_KEY_WORDS : F->np;
  if (source_line(L, k)) {
    flush(L, F);
    return;
  }
  if (L->head_end == L->ntok)
    L->head_end = k;
  for (int q = 0; q < F->np - nk; q++)
    add_free(L, F->pend[q]);
  if (L->nf >= TRK_MAX_FIELDS) {
    F->np = 0;
    F->sep = 0;
    F->ann[0] = '\0';
    return;
  }
  f = &L->f[L->nf++];
  memset(f, 0, sizeof(*f));
  sm__trk_canon(L, F->pend + (F->np - nk), nk, f->key, sizeof(f->key));
  f->nkw = nk;
  for (int q = 0; q < nk; q++)
    f->kw[q] = F->pend[F->np - nk + q];
  f->tok = k;
  f->kind = t->kind;
  f->v = t->v;
  f->total = t->kind == TK_FRAC ? t->total : NAN;
  f->isint = t->isint || t->kind == TK_FRAC;
  memcpy(f->unit, t->unit[0] ? t->unit : F->ann, sizeof(f->unit));
  f->sep = F->sep ? F->sep : (nk ? ' ' : 0);
  f->paren = F->paren > 0;
  f->bracket = F->bracket > 0 || (F->nn > 0 && F->nest[F->nn - 1] == 'T');
  F->np = 0;
  F->sep = 0;
  F->ann[0] = '\0';
}

void sm__trk_lex(trk_line *L, const char *s, size_t n) {
  lexst F;

  F.np = F.sep = F.paren = F.bracket = F.nn = 0;
  F.ann[0] = '\0';
  if (n > TRK_MAX_INPUT)
    n = TRK_MAX_INPUT;
  lex_tokens(L, s, n);
  L->nf = 0;
  L->nfree = 0;
  L->head_end = L->ntok;
  for (int k = 0; k < L->ntok; k++) {
    switch (L->tok[k].kind) {
    case TK_WORD:
      k = key_word(L, &F, k);
      break;
    case TK_UNITANN:
      memcpy(F.ann, L->tok[k].unit, sizeof(F.ann));
      break;
    case TK_PUNCT:
      key_punct(L, &F, k);
      break;
    case TK_NUM:
    case TK_FRAC:
    case TK_CLOCK:
      key_value(L, &F, k);
      break;
    default: /* TK_BAR, TK_DATE */
      flush(L, &F);
    }
  }
  flush(L, &F);
}
