/* lines.c - what one log line is: its prefix (timestamps, rank tags and
 * launcher labels, with the time they carry), its structure inside a
 * Python traceback, the signature it matches and, for lines no signature
 * knows, what the failure line classifier makes of it. */
#include <ctype.h>
#include <string.h>

#include "failure/failure_int.h"

/* Lines are matched against signatures on at most this many bytes. */
#define MATCH_CAP 8192

/* ==== Prefixes and timestamps ==== */

static int dig(const char *s, size_t n, size_t i, int count) {
  for (int k = 0; k < count; k++)
    if (i + (size_t)k >= n || !isdigit((unsigned char)s[i + (size_t)k]))
      return 0;
  return 1;
}

static int num(const char *s, size_t i, int count) {
  int v = 0;

  for (int k = 0; k < count; k++)
    v = v * 10 + (s[i + (size_t)k] - '0');
  return v;
}

/* Parses "HH:MM:SS[.,frac]" at s[i]; returns its length (0 if none) and
 * the seconds of the day in *sec. */
static size_t parse_hms(const char *s, size_t n, size_t i, double *sec) {
  size_t j = i + 8;
  double frac = 0, scale = 0.1;

  if (!dig(s, n, i, 2) || i + 8 > n || s[i + 2] != ':' ||
      !dig(s, n, i + 3, 2) || s[i + 5] != ':' || !dig(s, n, i + 6, 2))
    return 0;
  if (j + 1 < n && (s[j] == '.' || s[j] == ',') &&
      isdigit((unsigned char)s[j + 1])) {
    j++;
    while (j < n && isdigit((unsigned char)s[j])) {
      frac += (s[j] - '0') * scale;
      scale /= 10;
      j++;
    }
  }
  *sec =
      num(s, i, 2) * 3600.0 + num(s, i + 3, 2) * 60.0 + num(s, i + 6, 2) + frac;
  return j - i;
}

/* Parses "YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|+HH:MM]" (also with '/'). */
static size_t parse_iso(const char *s, size_t n, size_t i, double *ts) {
  double sec;
  size_t l, j;

  if (!dig(s, n, i, 4) || i + 10 > n || (s[i + 4] != '-' && s[i + 4] != '/') ||
      !dig(s, n, i + 5, 2) || s[i + 7] != s[i + 4] || !dig(s, n, i + 8, 2) ||
      i + 11 > n || (s[i + 10] != ' ' && s[i + 10] != 'T'))
    return 0;
  l = parse_hms(s, n, i + 11, &sec);
  if (l == 0)
    return 0;
  j = i + 11 + l;
  if (j < n && s[j] == 'Z')
    j++;
  else if (j + 5 < n && (s[j] == '+' || s[j] == '-') && dig(s, n, j + 1, 2)) {
    j += 3;
    if (j < n && s[j] == ':')
      j++;
    if (dig(s, n, j, 2))
      j += 2;
  }
  *ts = ((num(s, i, 4) * 12.0 + num(s, i + 5, 2)) * 31.0 + num(s, i + 8, 2)) *
            86400.0 +
        sec;
  return j - i;
}

static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";

/* Parses a syslog stamp "Mon dd HH:MM:SS". */
static size_t parse_syslog(const char *s, size_t n, size_t i, double *ts) {
  const char *m;
  size_t j = i + 4;
  double sec;
  size_t l;
  int day;

  if (i + 15 > n || s[i + 3] != ' ')
    return 0;
  m = NULL;
  for (int k = 0; k < 12; k++)
    if (memcmp(s + i, months + 3 * k, 3) == 0)
      m = months + 3 * k;
  if (m == NULL)
    return 0;
  if (s[j] == ' ')
    j++;
  if (!dig(s, n, j, 1))
    return 0;
  day = s[j] - '0';
  j++;
  if (dig(s, n, j, 1)) {
    day = day * 10 + (s[j] - '0');
    j++;
  }
  if (j >= n || s[j] != ' ')
    return 0;
  l = parse_hms(s, n, j + 1, &sec);
  if (l == 0)
    return 0;
  *ts = (((double)(m - months) / 3 + 1) * 31.0 + day) * 86400.0 + sec;
  return j + 1 + l - i;
}

static size_t skip_blanks(const char *s, size_t n, size_t i) {
  while (i < n && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i;
}

/* Skips one separating blank: what follows a rank tag keeps its
 * indentation (traceback frames and source lines are indented). */
static size_t skip_one(const char *s, size_t n, size_t i) {
  return i < n && s[i] == ' ' ? i + 1 : i;
}

/* Skips "- ", "| ", ": " separators after a stamp. */
static size_t skip_sep(const char *s, size_t n, size_t i) {
  i = skip_blanks(s, n, i);
  if (i + 1 < n && (s[i] == '-' || s[i] == '|' || s[i] == ':') &&
      s[i + 1] == ' ')
    i = skip_blanks(s, n, i + 1);
  return i;
}

/* A bracketed tag at s[i] == '[' whose body satisfies a rule; returns the
 * length including a following ':' and blanks, or 0. */
static size_t rank_tag(const char *s, size_t n, size_t i) {
  size_t j = i + 1, k;

  if (i >= n || s[i] != '[')
    return 0;
  /* [rank3]: [Rank 3]: [default3]: [local_rank0]: */
  for (k = j; k < n && k < j + 16 &&
              (isalpha((unsigned char)s[k]) || s[k] == '_' || s[k] == ' ');
       k++)
    ;
  if (k > j && k < n && isdigit((unsigned char)s[k])) {
    size_t w = k - j;
    int ok = (w >= 4 && strncasecmp(s + j, "rank", 4) == 0) ||
             (w >= 5 && strncasecmp(s + j, "local", 5) == 0) ||
             (w == 7 && strncasecmp(s + j, "default", 7) == 0) ||
             (w >= 6 && strncasecmp(s + j, "worker", 6) == 0);
    while (k < n && isdigit((unsigned char)s[k]))
      k++;
    if (ok && k < n && s[k] == ']') {
      k++;
      if (k < n && s[k] == ':')
        k++;
      return k - i;
    }
    return 0;
  }
  /* mpirun: [1,0]<stderr>: */
  k = j;
  while (k < n && isdigit((unsigned char)s[k]))
    k++;
  if (k > j && k < n && s[k] == ',') {
    k++;
    while (k < n && isdigit((unsigned char)s[k]))
      k++;
    if (k < n && s[k] == ']') {
      k++;
      if (k + 8 <= n && (memcmp(s + k, "<stderr>", 8) == 0 ||
                         memcmp(s + k, "<stdout>", 8) == 0))
        k += 8;
      if (k < n && s[k] == ':')
        k++;
      return k - i;
    }
  }
  return 0;
}

/* glog and PyTorch C++ prefixes: "[E ProcessGroupNCCL.cpp:475] ",
 * "E0102 03:04:05.123456  1234 file.cc:12] ", "[W506 12:00:00.1 x.cpp:9] ".
 * Returns the length (with trailing blanks) or 0; *ts may be set. */
static size_t glog_tag(const char *s, size_t n, size_t i, double *ts) {
  size_t j = i, end, lim;
  int br = 0;

  if (j < n && s[j] == '[') {
    br = 1;
    j++;
  }
  if (j + 2 > n || !strchr("IWEF", s[j]) ||
      !(s[j + 1] == ' ' || isdigit((unsigned char)s[j + 1])))
    return 0;
  if (dig(s, n, j + 1, 4) && j + 6 < n && s[j + 5] == ' ') {
    double sec;
    if (parse_hms(s, n, j + 6, &sec) > 0)
      *ts = (num(s, j + 1, 2) * 31.0 + num(s, j + 3, 2)) * 86400.0 + sec;
  }
  lim = j + 120 < n ? j + 120 : n;
  for (end = j; end < lim && s[end] != ']'; end++)
    ;
  if (end >= lim || end < j + 3)
    return 0;
  /* The tag ends with "file:line]". */
  {
    size_t d = end;
    while (d > j && isdigit((unsigned char)s[d - 1]))
      d--;
    if (d == end || s[d - 1] != ':')
      return 0;
  }
  if (!br && (end + 1 >= n || s[end + 1] != ' '))
    return 0;
  return skip_blanks(s, n, end + 1) - i;
}

/* A program tag "name:" or "name[pid]:" at s[i]; returns the index after
 * the colon (and one blank), or 0. */
static size_t program_tag(const char *s, size_t n, size_t i) {
  size_t j = i;

  while (j < n && j < i + 64 &&
         (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '-' ||
          s[j] == '.' || s[j] == '/'))
    j++;
  if (j == i)
    return 0;
  if (j < n && s[j] == '[') {
    size_t k = j + 1;
    while (k < n && isdigit((unsigned char)s[k]))
      k++;
    if (k == j + 1 || k >= n || s[k] != ']')
      return 0;
    j = k + 1;
  }
  if (j >= n || s[j] != ':')
    return 0;
  j++;
  return j < n && s[j] == ' ' ? j + 1 : j;
}

/* A host label "gpu014: " (pdsh, clush) or a compose service
 * "trainer-1  | ": a lower-case name with a digit, then ": " or blanks and
 * "| ".  Returns the length or 0. */
static size_t host_label(const char *s, size_t n, size_t i) {
  size_t j = i;
  int digit = 0;

  if (i >= n || !islower((unsigned char)s[i]))
    return 0;
  while (j < n && j < i + 64 &&
         (islower((unsigned char)s[j]) || isdigit((unsigned char)s[j]) ||
          s[j] == '-' || s[j] == '_' || s[j] == '.')) {
    digit |= isdigit((unsigned char)s[j]) != 0;
    j++;
  }
  if (!digit || j >= n)
    return 0;
  if (s[j] == ':' && j + 1 < n && s[j + 1] == ' ')
    return j + 2 - i;
  if (s[j] == ' ') {
    size_t k = skip_blanks(s, n, j);
    if (k + 1 < n && s[k] == '|' && s[k + 1] == ' ')
      return k + 2 - i;
  }
  return 0;
}

size_t sm__line_prefix(const char *s, size_t n, double *ts) {
  size_t i = 0;
  int rounds = 0;

  *ts = NAN;
  while (rounds++ < 6 && i < n) {
    size_t l = 0, j = i;
    double t;
    int bracket = 0;

    if (s[j] == '[') {
      bracket = 1;
      j++;
    }
    /* Dates and times, bare or bracketed. */
    if ((l = parse_iso(s, n, j, &t)) > 0 ||
        (l = parse_syslog(s, n, j, &t)) > 0 ||
        (l = parse_hms(s, n, j, &t)) > 0) {
      size_t k = j + l;
      if (bracket) {
        if (k >= n || s[k] != ']')
          goto tags;
        k++;
      } else if (k < n && s[k] != ' ' && s[k] != '\t' && s[k] != ']' &&
                 s[k] != '|' && s[k] != ',') {
        goto tags;
      }
      *ts = t;
      i = skip_sep(s, n, k);
      /* A syslog stamp is followed by the host and the program tag
       * ("kernel:", "python3[4121]:"). */
      if (!bracket && l == 15) {
        size_t h = i, t;
        while (h < n && s[h] != ' ' && s[h] != ':')
          h++;
        if (h < n && s[h] == ' ')
          i = skip_blanks(s, n, h);
        t = program_tag(s, n, i);
        if (t > 0)
          i = t + (s[t] == ' ' && t + 1 < n && s[t + 1] == ' ' ? 1 : 0);
      }
      /* Container runtimes add the stream: "stdout F ", "stderr P ". */
      if (i + 9 <= n &&
          (memcmp(s + i, "stdout ", 7) == 0 ||
           memcmp(s + i, "stderr ", 7) == 0) &&
          (s[i + 7] == 'F' || s[i + 7] == 'P') && s[i + 8] == ' ')
        i += 9;
      continue;
    }
  tags:
    /* dmesg "[ 1234.567890] ". */
    if (s[i] == '[') {
      size_t k = skip_blanks(s, n, i + 1), d = k;
      while (k < n && isdigit((unsigned char)s[k]))
        k++;
      if (k > d && k < n && s[k] == '.') {
        k++;
        while (k < n && isdigit((unsigned char)s[k]))
          k++;
        if (k < n && s[k] == ']') {
          i = skip_blanks(s, n, k + 1);
          continue;
        }
      }
    }
    if ((l = rank_tag(s, n, i)) > 0) {
      i = skip_one(s, n, i + l);
      continue;
    }
    if ((l = glog_tag(s, n, i, ts)) > 0) {
      i += l;
      continue;
    }
    /* srun --label "12: " and Ray "(pid=123) " / "(Worker pid=1, ip=x) ". */
    if (isdigit((unsigned char)s[i])) {
      size_t k = i;
      while (k < n && k < i + 5 && isdigit((unsigned char)s[k]))
        k++;
      if (k + 1 < n && s[k] == ':' && s[k + 1] == ' ') {
        i = skip_one(s, n, k + 1);
        continue;
      }
    }
    /* Markdown quotes of pasted logs: "> ". */
    if (s[i] == '>' && (i + 1 == n || s[i + 1] == ' ')) {
      i = skip_one(s, n, i + 1);
      continue;
    }
    if ((l = host_label(s, n, i)) > 0) {
      i += l;
      continue;
    }
    if (s[i] == '(') {
      const char *close = memchr(s + i, ')', SM_MIN(n - i, (size_t)96));
      const char *pid =
          close ? memmem(s + i, (size_t)(close - (s + i)), "pid=", 4) : NULL;
      if (pid != NULL) {
        i = skip_one(s, n, (size_t)(close - s) + 1);
        continue;
      }
    }
    break;
  }
  return i;
}

/* ==== Severity ==== */

/* Level of an upper-case level word s[0..n), or SM__LVL_NONE. */
static int level_word(const char *s, size_t n) {
  static const struct {
    const char *w;
    int lvl;
  } words[] = {{"TRACE", SM__LVL_INFO},  {"DEBUG", SM__LVL_INFO},
               {"INFO", SM__LVL_INFO},   {"NOTICE", SM__LVL_INFO},
               {"WARN", SM__LVL_WARN},   {"WARNING", SM__LVL_WARN},
               {"ERROR", SM__LVL_ERROR}, {"ERR", SM__LVL_ERROR},
               {"FATAL", SM__LVL_ERROR}, {"CRITICAL", SM__LVL_ERROR},
               {"CRIT", SM__LVL_ERROR},  {"SEVERE", SM__LVL_ERROR},
               {"PANIC", SM__LVL_ERROR}, {"ALERT", SM__LVL_ERROR},
               {"EMERG", SM__LVL_ERROR}};

  for (size_t k = 0; k < SM_ARRAY_LEN(words); k++)
    if (strlen(words[k].w) == n && memcmp(words[k].w, s, n) == 0)
      return words[k].lvl;
  return SM__LVL_NONE;
}

/* A glog severity letter. */
static int glog_level(char c) {
  return c == 'I'               ? SM__LVL_INFO
         : c == 'W'             ? SM__LVL_WARN
         : c == 'E' || c == 'F' ? SM__LVL_ERROR
                                : SM__LVL_NONE;
}

/* Skips ANSI colour sequences ("\x1b[32m") at s[i]. */
static size_t skip_ansi(const char *s, size_t n, size_t i) {
  while (i + 1 < n && s[i] == 0x1b && s[i + 1] == '[') {
    i += 2;
    while (i < n && !(s[i] >= '@' && s[i] <= '~'))
      i++;
    if (i < n)
      i++;
  }
  return i;
}

/* Level named by the body of a bracketed tag: "INFO", " WARNING ",
 * "I" (a one-letter level) or a glog tag "E ProcessGroupNCCL.cpp:563". */
static int tag_level(const char *s, size_t a, size_t b) {
  char t[64];
  size_t n = 0, i = a, w;

  /* The body without colour sequences and surrounding blanks. */
  while (i < b && n < sizeof(t)) {
    size_t j = skip_ansi(s, b, i);
    if (j != i) {
      i = j;
      continue;
    }
    t[n++] = s[i++];
  }
  i = 0;
  while (i < n && t[i] == ' ')
    i++;
  while (n > i && t[n - 1] == ' ')
    n--;
  if (n - i == 1)
    return glog_level(t[i]);
  if (n - i > 2 && t[i + 1] == ' ' && isalpha((unsigned char)t[i + 2]))
    return glog_level(t[i]);
  for (w = i; w < n && isupper((unsigned char)t[w]); w++)
    ;
  return w == n ? level_word(t + i, n - i) : SM__LVL_NONE;
}

int sm__line_level(const char *s, size_t n) {
  size_t i = 0, lim = n < 320 ? n : 320;
  int tags = 0;

  while (i < lim) {
    unsigned char c;
    i = skip_ansi(s, lim, i);
    if (i >= lim)
      break;
    c = (unsigned char)s[i];
    if (c == '[') {
      const char *e = memchr(s + i, ']', SM_MIN(lim - i, (size_t)96));
      int lv;
      if (e == NULL)
        return SM__LVL_NONE;
      lv = tag_level(s, i + 1, (size_t)(e - s));
      if (lv != SM__LVL_NONE)
        return lv;
      if (++tags > 4)
        return SM__LVL_NONE;
      i = (size_t)(e - s) + 1;
      continue;
    }
    if (isdigit(c)) {
      /* Timestamps and numbers: "2024-05-02T10:11:12.5Z", "01:39:47,073". */
      while (
          i < lim &&
          (isdigit((unsigned char)s[i]) || strchr(":-.,/+TZ", s[i]) != NULL) &&
          s[i] != '\0')
        i++;
      continue;
    }
    if (isalpha(c)) {
      size_t j = i;
      int lv;
      while (j < lim && isalpha((unsigned char)s[j]))
        j++;
      /* glog: "E0502 10:11:12.123456  4121 file.cc:12]". */
      if (j == i + 1 && j < lim && isdigit((unsigned char)s[j]))
        return glog_level((char)c);
      lv = level_word(s + i, j - i);
      if (lv != SM__LVL_NONE &&
          (j == n || strchr(": ]|-),\t\x1b", s[j]) != NULL) && s[j] != '\0')
        return lv;
      return SM__LVL_NONE; /* the message starts with a word */
    }
    if (c == ' ' || c == '\t' || c == '|' || c == '-' || c == ':') {
      i++;
      continue;
    }
    return SM__LVL_NONE;
  }
  return SM__LVL_NONE;
}

/* ==== Python structure ==== */

static int ends_with(const char *s, size_t n, const char *suf) {
  size_t l = strlen(suf);
  return n >= l && memcmp(s + n - l, suf, l) == 0;
}

int sm__exc_type_len(const char *s, size_t n) {
  size_t i = 0, seg = 0;
  static const char *const plain[] = {"StopIteration", "KeyboardInterrupt",
                                      "SystemExit", "GeneratorExit"};

  for (;;) {
    size_t st = i;
    if (i >= n || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
      return 0;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
      i++;
    seg = st;
    if (i < n && s[i] == '.' && i + 1 < n &&
        (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_')) {
      i++;
      continue;
    }
    break;
  }
  if (i > 200 || !isupper((unsigned char)s[seg]))
    return 0;
  /* A wrapper that names the original type: Ray's
   * "ray.exceptions.RayTaskError(KeyError): ...". */
  if (i < n && s[i] == '(') {
    size_t j = i + 1;
    while (j < n && j < i + 100 &&
           (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '.'))
      j++;
    if (j > i + 1 && j < n && s[j] == ')' && isupper((unsigned char)s[i + 1]) &&
        (j + 1 == n || s[j + 1] == ':')) {
      if (ends_with(s + seg, i - seg, "Error") ||
          ends_with(s + seg, i - seg, "Exception"))
        return (int)(j + 1);
    }
    return 0;
  }
  if (i < n && s[i] != ':')
    return 0;
  if (ends_with(s + seg, i - seg, "Error") ||
      ends_with(s + seg, i - seg, "Exception") ||
      ends_with(s + seg, i - seg, "Interrupt") ||
      ends_with(s + seg, i - seg, "Fault") ||
      ends_with(s + seg, i - seg, "Failure") ||
      ends_with(s + seg, i - seg, "Warning") ||
      ends_with(s + seg, i - seg, "Exit") ||
      ends_with(s + seg, i - seg, "Timeout") ||
      ends_with(s + seg, i - seg, "Expired"))
    return (int)i;
  for (size_t k = 0; k < SM_ARRAY_LEN(plain); k++)
    if (i - seg == strlen(plain[k]) && memcmp(s + seg, plain[k], i - seg) == 0)
      return (int)i;
  return 0;
}

static int starts(const char *s, size_t n, const char *p) {
  size_t l = strlen(p);
  return n >= l && memcmp(s, p, l) == 0;
}

/* Rich (box-drawing) traceback characters: U+2502, U+256D, U+2570. */
static int rich_box(const char *s, size_t n) {
  return n >= 3 && (unsigned char)s[0] == 0xe2 &&
         (((unsigned char)s[1] == 0x94 && (unsigned char)s[2] == 0x82) ||
          ((unsigned char)s[1] == 0x95 &&
           ((unsigned char)s[2] == 0xad || (unsigned char)s[2] == 0xb0)));
}

/* Structural kind of a message, or SM__K_NORMAL. */
static int structure(const char *m, size_t n) {
  size_t i = skip_blanks(m, n, 0);
  const char *t = m + i;
  size_t tn = n - i;

  if (tn == 0)
    return SM__K_BLANK;
  if (starts(t, tn, "Traceback (most recent call last)") ||
      starts(t, tn, "Original Traceback (most recent call last)") ||
      starts(t, tn, "Stack (most recent call"))
    return SM__K_TB_HEADER;
  if (rich_box(t, tn)) {
    if (memmem(t, tn, "Traceback", 9) != NULL)
      return SM__K_TB_HEADER;
    return SM__K_TB_FRAME;
  }
  if (starts(t, tn, "During handling of the above exception") ||
      starts(t, tn, "The above exception was the direct cause"))
    return SM__K_CHAIN;
  /* IPython: "KeyError          Traceback (most recent call last)". */
  if (i == 0 && memmem(t, SM_MIN(tn, (size_t)160),
                       "Traceback (most recent call last)", 33) != NULL) {
    const char *sp = memchr(t, ' ', tn);
    if (sp != NULL && sm__exc_type_len(t, (size_t)(sp - t)) > 0)
      return SM__K_TB_HEADER;
  }
  if (starts(t, tn, "File \"") && memmem(t, tn, "\", line ", 8) != NULL)
    return SM__K_TB_FRAME;
  /* IPython frames: "File ~/x.py:3", "File /a/b.py:12, in f()",
   * "/a/b.py in f(x)", "<ipython-input-2-abc> in <module>". */
  if (i == 0 && starts(t, tn, "File ") && tn > 5 &&
      (t[5] == '/' || t[5] == '~' || t[5] == '<' || t[5] == '.' ||
       (tn > 7 && t[6] == ':' && (t[7] == '\\' || t[7] == '/')))) {
    const char *c = memchr(t + 5, ':', tn - 5);
    while (c != NULL && !(c + 1 < t + tn && isdigit((unsigned char)c[1])))
      c = memchr(c + 1, ':', (size_t)(t + tn - c - 1));
    if (c != NULL)
      return SM__K_TB_FRAME;
  }
  if (i == 0 && (t[0] == '/' || t[0] == '<' || t[0] == '~') &&
      memmem(t, SM_MIN(tn, (size_t)400), " in ", 4) != NULL) {
    const char *in = memmem(t, SM_MIN(tn, (size_t)400), " in ", 4);
    if ((in - t > 3 && memcmp(in - 3, ".py", 3) == 0) || in[-1] == '>')
      return SM__K_TB_FRAME;
  }
  /* IPython source arrows "----> 12 x = f()". */
  if (tn > 3 && t[0] == '-' && t[1] == '-' && memchr(t, '>', SM_MIN(tn, 12))) {
    size_t k = 0;
    while (k < tn && t[k] == '-')
      k++;
    if (k < tn && t[k] == '>')
      return SM__K_TB_CODE;
  }
  return SM__K_NORMAL;
}

/* ==== Line evaluation ==== */

int sm__lctx_init(sm__lctx *c, const sm_sigdb *db, sm_err *err) {
  const sm_protoset *ps = &sm__protoset_failure;

  memset(c, 0, sizeof(*c));
  if (sm__matcher_init(&c->m, db) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  c->cls = sm_linecls_new(ps);
  if (c->cls == NULL) {
    sm__matcher_release(&c->m);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  c->c_normal = sm_protoset_class(ps, "normal");
  c->c_benign = sm_protoset_class(ps, "benign");
  c->c_cascade = sm_protoset_class(ps, "cascade");
  c->c_infra = sm_protoset_class(ps, "infrastructure");
  c->c_framework = sm_protoset_class(ps, "framework");
  c->c_user = sm_protoset_class(ps, "user");
  c->weak_min = 0.55f;
  return 0;
}

void sm__lctx_release(sm__lctx *c) {
  sm__matcher_release(&c->m);
  sm_linecls_free(c->cls);
  c->cls = NULL;
}

void sm__line_eval(sm__lctx *c, sm__line *l) {
  const char *m;
  size_t mn, mcap;
  int kind, xid;
  const sm__sig *sig;

  c->lines++;
  l->msg = sm__line_prefix(l->text, l->len, &l->ts);
  l->level = sm__line_level(l->text, l->len);
  m = l->text + l->msg;
  mn = l->len - l->msg;
  l->sig = NULL;
  l->xid = -1;
  l->cls = -1;
  l->cls_score = 0;
  l->exc_len = 0;
  kind = structure(m, mn);
  if (kind == SM__K_BLANK || kind == SM__K_TB_HEADER ||
      kind == SM__K_TB_FRAME || kind == SM__K_CHAIN || kind == SM__K_TB_CODE) {
    l->kind = kind;
    return;
  }
  l->exc_len = sm__exc_type_len(m, mn);
  mcap = mn < MATCH_CAP ? mn : MATCH_CAP;
  sig = sm__sigdb_match(&c->m, m, mcap, &xid);
  if (sig != NULL) {
    int role = sig->role;
    if (xid >= 0) {
      const sm__xid *x = sm__sigdb_xid(c->m.db, xid);
      if (x != NULL)
        role = x->role;
    }
    l->sig = sig;
    l->xid = xid;
    l->kind = role == SM__ROLE_BENIGN    ? SM__K_BENIGN
              : role == SM__ROLE_SYMPTOM ? SM__K_SYMPTOM
                                         : SM__K_CAUSE;
    /* A program that logs a message as information did not fail on it
     * ("INFO: Unable to initialize backend 'tpu': ... cannot open shared
     * object file"): weak evidence at most, never a cause. */
    if (l->kind == SM__K_CAUSE && l->level == SM__LVL_INFO)
      l->kind = SM__K_NOTICE;
    return;
  }
  if (l->exc_len > 0) {
    l->kind =
        ends_with(m, (size_t)l->exc_len, "Warning") ? SM__K_BENIGN : SM__K_EXC;
    return;
  }
  l->kind = SM__K_NORMAL;
  if (c->cls != NULL && l->level != SM__LVL_INFO) {
    float sc;
    int cl =
        sm_linecls_classify(c->cls, l->text, SM_MIN(l->len, (size_t)4096), &sc);
    if (cl >= 0 && sc >= c->weak_min &&
        (cl == c->c_infra || cl == c->c_framework || cl == c->c_user ||
         cl == c->c_cascade)) {
      l->kind = SM__K_WEAK;
      l->cls = cl;
      l->cls_score = sc;
    }
  }
}

int sm__line_strength(const sm__line *l) {
  switch (l->kind) {
  case SM__K_CAUSE:
    return l->sig->generic ? 2 : 3;
  case SM__K_EXC:
    return 3;
  case SM__K_SYMPTOM:
  case SM__K_WEAK:
  case SM__K_NOTICE:
    return 1;
  case SM__K_TB_HEADER:
  case SM__K_TB_FRAME:
  case SM__K_TB_CODE:
  case SM__K_CHAIN:
    return 0;
  default:
    return -1;
  }
}

int sm__line_failing(const sm__line *l) {
  return sm__line_strength(l) >= 0;
}

int sm__line_strong(const sm__line *l) {
  return l->kind == SM__K_CAUSE || l->kind == SM__K_EXC ||
         l->kind == SM__K_SYMPTOM || l->kind == SM__K_TB_HEADER;
}
