/* prefix.c - the prefix of a log line before its message: timestamps
 * (ISO 8601, syslog, glog, bare clock times) with the time they carry,
 * rank tags of launchers ([rank3]:, [1,0]<stderr>:, 0:), program and host
 * labels.  Pure text work on one line: the line evaluator (lines.c) and
 * the one-line signature matcher (sigdb.c) both start from it. */
#include <ctype.h>
#include <string.h>

#include "failure/failure_int.h"

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

/* A label in the reporter's own script before a pasted error ("报错：",
 * "错误: ", "エラー: "): 1 to 12 characters of UTF-8 beyond ASCII, then an
 * ASCII colon or a full-width one (U+FF1A).  Its length with the colon,
 * or 0. */
static size_t native_label(const char *s, size_t n, size_t i) {
  size_t k = i;

  while (k < n && k < i + 36 && (unsigned char)s[k] >= 0x80) {
    if (k + 3 <= n && (unsigned char)s[k] == 0xef &&
        (unsigned char)s[k + 1] == 0xbc && (unsigned char)s[k + 2] == 0x9a)
      return k > i ? k + 3 - i : 0;
    k++;
  }
  if (k > i + 2 && k < n && s[k] == ':')
    return k + 1 - i;
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
    /* Markdown quotes of pasted logs: "> ", and Python's prompt ">>> ". */
    if (s[i] == '>' && (i + 1 == n || s[i + 1] == ' ')) {
      i = skip_one(s, n, i + 1);
      continue;
    }
    if (i + 4 <= n && memcmp(s + i, ">>> ", 4) == 0) {
      i = skip_one(s, n, i + 3);
      continue;
    }
    if ((l = native_label(s, n, i)) > 0) {
      i = skip_blanks(s, n, i + l);
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
