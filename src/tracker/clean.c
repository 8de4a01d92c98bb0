/* clean.c - what the tracker does to a raw log line before looking at
 * it: terminal escapes and control bytes go, multi-rank prefixes that
 * launchers put in front of every line go ("[rank3]:", "0: ",
 * "[default0]:", "[1,0]<stdout>:", "worker-1: "), and the timestamp of the
 * line is found, so that step times can be measured between lines. */
#include <ctype.h>
#include <string.h>

#include "track_int.h"
#include "util/util_int.h"

/* ==== Cleaning ==== */

static int dg(int c) {
  return c >= '0' && c <= '9';
}
static int al(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Reads the decimal digits s[a..b) (at most 9) as a rank. */
static int rank_num(const char *s, size_t a, size_t b) {
  int v = 0;
  if (b <= a || b - a > 9)
    return -1;
  for (size_t i = a; i < b; i++)
    v = v * 10 + (s[i] - '0');
  return v;
}

/* Length of a launcher prefix at s[0..n), or 0; *rank gets the rank it
 * names, or is left alone (host labels name no rank). */
static size_t rank_prefix(const char *s, size_t n, int *rank) {
  size_t i = 0, j;

  while (i < n && s[i] == ' ')
    i++;
  if (i < n && s[i] == '[') {
    static const char *const tags[] = {"rank", "Rank", "RANK", "default", NULL};
    j = i + 1;
    for (int t = 0; tags[t]; t++) {
      size_t tl = strlen(tags[t]);
      if (j + tl < n && memcmp(s + j, tags[t], tl) == 0) {
        size_t k = j + tl;
        if (k < n && s[k] == ' ')
          k++;
        if (k < n && dg(s[k])) {
          size_t d0 = k;
          while (k < n && dg(s[k]))
            k++;
          if (k + 1 < n && s[k] == ']' && s[k + 1] == ':') {
            *rank = rank_num(s, d0, k);
            k += 2;
            while (k < n && s[k] == ' ')
              k++;
            return k;
          }
        }
      }
    }
    /* OpenMPI --tag-output: "[1,0]<stdout>:" or "[1,0]:". */
    if (j < n && dg(s[j])) {
      size_t k = j;
      while (k < n && dg(s[k]))
        k++;
      if (k < n && s[k] == ',') {
        k++;
        if (k < n && dg(s[k])) {
          size_t d0 = k;
          while (k < n && dg(s[k]))
            k++;
          if (k < n && s[k] == ']') {
            *rank = rank_num(s, d0, k);
            k++;
            if (k + 8 <= n && (memcmp(s + k, "<stdout>", 8) == 0 ||
                               memcmp(s + k, "<stderr>", 8) == 0))
              k += 8;
            if (k < n && s[k] == ':') {
              k++;
              while (k < n && s[k] == ' ')
                k++;
              return k;
            }
          }
        }
      }
    }
    return 0;
  }
  /* srun -l / torchrun --tee labels: "0: ", " 12: ", "rank3: ". */
  j = i;
  if (j + 4 < n && memcmp(s + j, "rank", 4) == 0)
    j += 4;
  if (j < n && dg(s[j])) {
    size_t k = j;
    while (k < n && dg(s[k]) && k - j < 5)
      k++;
    if (k - j <= 4 && k + 1 < n && s[k] == ':' && s[k + 1] == ' ') {
      *rank = rank_num(s, j, k);
      k += 2;
      while (k < n && s[k] == ' ')
        k++;
      return k;
    }
    return 0;
  }
  /* pdsh-style host labels of multi-node launchers: "worker-1: ",
   * "node-8: ", "localhost: ". */
  if (j < n && al(s[j])) {
    size_t k = j;
    int dash_digit = 0;
    while (k < n && k - j < 64 &&
           (al(s[k]) || dg(s[k]) || s[k] == '-' || s[k] == '_' || s[k] == '.'))
      k++;
    if (k - j >= 3 && (s[k - 1] >= '0' && s[k - 1] <= '9')) {
      size_t d = k;
      while (d > j && dg(s[d - 1]))
        d--;
      dash_digit = d > j && (s[d - 1] == '-' || s[d - 1] == '_');
    }
    if (k - j == 9 && memcmp(s + j, "localhost", 9) == 0)
      dash_digit = 1;
    if (dash_digit && k + 1 < n && s[k] == ':' && s[k + 1] == ' ') {
      k += 2;
      while (k < n && s[k] == ' ')
        k++;
      return k;
    }
  }
  return 0;
}

size_t sm_track_clean(const char *s, size_t n, char *out, size_t cap) {
  return sm__trk_clean(s, n, out, cap, NULL);
}

size_t sm__trk_clean(const char *s, size_t n, char *out, size_t cap,
                     int *rank_out) {
  int rank = -1;
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, o = 0, cut;
  int rounds, digits = 0;

  if (cap == 0)
    return 0;
  /* A line without digits keeps its tabs: they separate the columns of
   * a head ("total loss<TAB>score loss"); elsewhere a tab is a blank. */
  for (size_t k = 0; k < n && !digits; k++)
    digits = p[k] >= '0' && p[k] <= '9';
  while (i < n && o + 1 < cap) {
    unsigned c = p[i];
    if (c == 0x1b) {
      /* CSI "ESC [ ... final", OSC "ESC ] ... BEL|ESC \", or ESC x. */
      if (i + 1 < n && p[i + 1] == '[') {
        i += 2;
        while (i < n && !(p[i] >= 0x40 && p[i] <= 0x7e))
          i++;
        i++;
      } else if (i + 1 < n && p[i + 1] == ']') {
        i += 2;
        while (i < n && p[i] != 0x07 && !(p[i] == 0x1b))
          i++;
        i += (i < n && p[i] == 0x1b) ? 2 : 1;
      } else {
        i += 2;
      }
      continue;
    }
    if (c == '\t') {
      out[o++] = digits ? ' ' : '\t';
      i++;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      i++;
      continue;
    }
    out[o++] = (char)c;
    i++;
  }
  out[o] = '\0';
  /* A launcher may stack labels ("worker-0: [rank3]: ..."). */
  for (rounds = 0; rounds < 3 && (cut = rank_prefix(out, o, &rank)) > 0;
       rounds++) {
    memmove(out, out + cut, o - cut + 1);
    o -= cut;
  }
  if (rank_out)
    *rank_out = rank;
  return o;
}

/* ==== Timestamps ==== */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (m in 1..12 and d in 1..31, checked by every caller). */
static long days_from_civil(long y, unsigned m, unsigned d) {
  return sm__days_from_civil(y, (long)m, (long)d);
}

/* Reads exactly k digits at s[*i]; returns the value or -1. */
static long digits(const char *s, size_t n, size_t *i, int k) {
  long v = 0;

  for (int j = 0; j < k; j++) {
    if (*i >= n || !dg(s[*i]))
      return -1;
    v = v * 10 + (s[*i] - '0');
    (*i)++;
  }
  return v;
}

/* Parses "HH:MM[:SS[.frac|,frac]]" at s[*i]; returns seconds or -1. */
static double clock_at(const char *s, size_t n, size_t *i, int need_sec) {
  size_t j = *i;
  long h, m, sec = 0;
  double frac = 0;

  h = digits(s, n, &j, 2);
  if (h < 0 || h > 23 || j >= n || s[j] != ':')
    return -1;
  j++;
  m = digits(s, n, &j, 2);
  if (m < 0 || m > 59)
    return -1;
  if (j < n && s[j] == ':') {
    j++;
    sec = digits(s, n, &j, 2);
    if (sec < 0 || sec > 60)
      return -1;
    if (j + 1 < n && (s[j] == '.' || s[j] == ',') && dg(s[j + 1])) {
      double scale = 0.1;
      j++;
      while (j < n && dg(s[j])) {
        frac += (s[j] - '0') * scale;
        scale /= 10;
        j++;
      }
    }
  } else if (need_sec) {
    return -1;
  }
  if (j < n && (al(s[j]) || dg(s[j])) && s[j] != 'Z')
    return -1;
  if (j < n && s[j] == 'Z')
    j++;
  *i = j;
  return (double)(h * 3600 + m * 60 + sec) + frac;
}

#define DEFAULT_YEAR 2000
#define SCAN_BYTES 64

/* "Mar 29, 16:34:28" (strftime's "%b %d, %H:%M:%S"), syslog's "Mar 29
 * 16:34:28", with a year: "Mar 29, 2024 16:34:28": p is at the day, the
 * month's name right before it.  Seconds or -1; the year, when not
 * printed, is DEFAULT_YEAR (only differences are used). */
static double month_day_stamp(const char *s, size_t n, size_t p, size_t *start,
                              size_t *end) {
  static const char months[] = "janfebmaraprmayjunjulaugsepoctnovdec";
  size_t j = p, q = p; /* q: just past the month's name */
  long mo = 0, d, y = DEFAULT_YEAR;
  double t;

  if (p < 4 || s[p - 1] != ' ')
    return -1;
  q = s[p - 2] == ' ' ? p - 2 : p - 1; /* syslog pads the day: "Dec  3" */
  if (q < 3 || (q > 3 && (al(s[q - 4]) || dg(s[q - 4]))))
    return -1;
  for (long m = 0; m < 12 && mo == 0; m++)
    if ((s[q - 3] | 32) == months[3 * m] &&
        (s[q - 2] | 32) == months[3 * m + 1] &&
        (s[q - 1] | 32) == months[3 * m + 2])
      mo = m + 1;
  d = digits(s, n, &j, p + 1 < n && dg(s[p + 1]) ? 2 : 1);
  if (mo == 0 || d < 1 || d > 31)
    return -1;
  if (j < n && s[j] == ',')
    j++;
  while (j < n && s[j] == ' ')
    j++;
  if (j + 4 < n && dg(s[j]) && dg(s[j + 3]) && s[j + 4] == ' ') {
    size_t k = j;
    long yy = digits(s, n, &k, 4);
    if (yy >= 1970) {
      y = yy;
      j = k + 1;
    }
  }
  if ((t = clock_at(s, n, &j, 1)) < 0)
    return -1;
  if (start)
    *start = q - 3;
  if (end)
    *end = j;
  return (double)days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400.0 + t;
}

double sm__trk_timestamp(const char *s, size_t n, size_t *start, size_t *end) {
  size_t lim = n < SCAN_BYTES ? n : SCAN_BYTES;

  for (size_t p = 0; p < lim; p++) {
    size_t i = p;
    long y = DEFAULT_YEAR, mo, d;
    double t;

    if (!dg(s[p]) || (p > 0 && (dg(s[p - 1]) || s[p - 1] == '.')))
      continue;
    if ((t = month_day_stamp(s, n, p, start, end)) >= 0)
      return t;
    /* glog: "I0615 15:21:45.879393" or "I20250724 07:33:12". */
    if (p > 0 && strchr("IWEF", s[p - 1]) != NULL &&
        (p == 1 || !(al(s[p - 2]) || dg(s[p - 2])))) {
      size_t j = p, k = p;
      while (k < n && dg(s[k]))
        k++;
      if (k - p == 4 || k - p == 8) {
        if (k - p == 8)
          y = digits(s, n, &j, 4);
        mo = digits(s, n, &j, 2);
        d = digits(s, n, &j, 2);
        while (j < n && s[j] == ' ')
          j++;
        if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31 &&
            (t = clock_at(s, n, &j, 1)) >= 0) {
          if (start)
            *start = p - 1;
          if (end)
            *end = j;
          return (double)days_from_civil(y, (unsigned)mo, (unsigned)d) *
                     86400.0 +
                 t;
        }
      }
    }
    /* "2022-11-24 01:45:35,701", "2022/08/22 15:51:53", ISO "T". */
    if (i + 10 <= n && dg(s[i + 3]) && (s[i + 4] == '-' || s[i + 4] == '/')) {
      char sep = s[i + 4];
      size_t j = i;
      y = digits(s, n, &j, 4);
      if (y >= 1970 && j < n && s[j] == sep) {
        j++;
        mo = digits(s, n, &j, 2);
        if (mo >= 1 && mo <= 12 && j < n && s[j] == sep) {
          j++;
          d = digits(s, n, &j, 2);
          if (d >= 1 && d <= 31 && j < n && (s[j] == ' ' || s[j] == 'T')) {
            j++;
            if ((t = clock_at(s, n, &j, 0)) >= 0) {
              if (start)
                *start = p;
              if (end)
                *end = j;
              return (double)days_from_civil(y, (unsigned)mo, (unsigned)d) *
                         86400.0 +
                     t;
            }
          }
        }
      }
      continue;
    }
    /* "08/22 15:51:53" (mmengine), "[11/16 03:11:50]" (detectron2), and
     * with a year after them: "09/03/20 02:40:55" (logging's %x, month
     * first), "13/09/24 21:36:55" (day first: the first number is over
     * 12), "24.07.2025 10:00:01" (day.month.year). */
    if (i + 5 < n && dg(s[i + 1]) &&
        (s[i + 2] == '/' || s[i + 2] == '-' || s[i + 2] == '.')) {
      size_t j = i;
      char sep = s[i + 2];
      long a, b, yy = -1;
      a = digits(s, n, &j, 2);
      j++;
      b = digits(s, n, &j, 2);
      if (j + 2 < n && s[j] == sep && dg(s[j + 1]) && dg(s[j + 2])) {
        size_t k = j + 1, e = j + 1;
        while (e < n && dg(s[e]))
          e++;
        if (e - k == 2)
          yy = 2000 + digits(s, n, &k, 2);
        else if (e - k == 4)
          yy = digits(s, n, &k, 4);
        if (yy >= 1970)
          j = k;
      }
      if (sep == '.' && yy < 0)
        continue; /* "12.34 56:07": a number, not a date */
      mo = a;
      d = b;
      if (sep == '.' || (a > 12 && b <= 12)) {
        mo = b;
        d = a;
      }
      if (yy >= 1970)
        y = yy;
      if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && j < n && s[j] == ' ') {
        j++;
        if ((t = clock_at(s, n, &j, 1)) >= 0) {
          if (start)
            *start = p;
          if (end)
            *end = j;
          return (double)days_from_civil(y, (unsigned)mo, (unsigned)d) *
                     86400.0 +
                 t;
        }
      }
    }
    /* A bare "HH:MM:SS" only at the very start ("[12:00:01] ..."), so
     * that an "eta: 3:16:01" further on is never taken for a time. */
    {
      size_t q = 0;
      while (q < p && (s[q] == ' ' || s[q] == '['))
        q++;
      if (q == p) {
        size_t j = p;
        if ((t = clock_at(s, n, &j, 1)) >= 0) {
          if (start)
            *start = p;
          if (end)
            *end = j;
          return t;
        }
      }
    }
  }
  return NAN;
}

double sm_track_timestamp(const char *s, size_t n, size_t *end) {
  return sm__trk_timestamp(s, n, NULL, end);
}
