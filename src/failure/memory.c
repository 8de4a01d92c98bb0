/* memory.c - whose memory ran out when a job is killed for memory: the
 * job's own (its memory figures rising before the kill, a leak warning,
 * a request too small for it) or the node's. */
#include <ctype.h>
#include <string.h>

#include "failure_int.h"

#define GROWTH_MIN_LINES 3 /* memory figures that show a trend */
#define GROWTH_RATIO 1.3   /* last over first: the job's memory grew */

static int ci_has(const char *s, size_t n, const char *w) {
  size_t l = strlen(w);

  for (size_t i = 0; i + l <= n; i++) {
    size_t k = 0;
    while (k < l && tolower((unsigned char)s[i + k]) == w[k])
      k++;
    if (k == l)
      return 1;
  }
  return 0;
}

/* A unit at s[u]: G, M or T alone, or followed by B, iB (not "minutes"). */
static int unit_ok(const char *s, size_t n, size_t u) {
  char c = (char)toupper((unsigned char)s[u]);

  if (c != 'G' && c != 'M' && c != 'T')
    return 0;
  if (u + 1 >= n || !isalpha((unsigned char)s[u + 1]))
    return 1;
  if (s[u + 1] == 'B' || s[u + 1] == 'b')
    return u + 2 >= n || !isalpha((unsigned char)s[u + 2]);
  return s[u + 1] == 'i' && u + 2 < n && (s[u + 2] == 'B' || s[u + 2] == 'b');
}

/* The first memory figure of a line that speaks of host memory ("mem",
 * "memory", "RSS", "RAM"; not a GPU's), in MiB, or a negative value. */
double sm__host_mem_figure(const char *s, size_t n) {
  size_t i;

  if (n > 4096)
    n = 4096;
  if (!(ci_has(s, n, "mem") || ci_has(s, n, "rss") || ci_has(s, n, "ram")) ||
      ci_has(s, n, "gpu") || ci_has(s, n, "cuda") || ci_has(s, n, "vram"))
    return -1;
  for (i = 0; i < n; i++) {
    double v = 0, frac = 0, scale = 1;
    size_t k = i, u;
    if (!isdigit((unsigned char)s[i]) ||
        (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.')))
      continue;
    for (; k < n && isdigit((unsigned char)s[k]); k++)
      if (v < 1e12) /* saturates: a figure, not an exact count */
        v = v * 10 + (s[k] - '0');
    if (k < n && s[k] == '.') {
      k++;
      while (k < n && isdigit((unsigned char)s[k])) {
        scale /= 10;
        frac += (s[k++] - '0') * scale;
      }
    }
    v += frac;
    u = k;
    while (u < n && s[u] == ' ')
      u++;
    if (u < n && unit_ok(s, n, u)) {
      char c = (char)toupper((unsigned char)s[u]);
      if (c == 'G')
        return v * 1024;
      if (c == 'M')
        return v;
      if (c == 'T')
        return v * 1024 * 1024;
    }
    i = k;
  }
  return -1;
}

/* A line that shows the job's own memory request: Slurm's --mem,
 * --mem-per-cpu, --mem-per-gpu (as an option or an #SBATCH line), or a
 * printed mem= of the job's resources. */
int sm__mem_request(const char *s, size_t n) {
  static const char *const keys[] = {"--mem=", "--mem ", "--mem-per-cpu",
                                     "--mem-per-gpu", "mem="};
  if (n > 4096)
    n = 4096;
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
    size_t l = strlen(keys[k]);
    for (size_t i = 0; i + l < n; i++) {
      size_t j;
      if (memcmp(s + i, keys[k], l) != 0)
        continue;
      if (k == 4 && i > 0 &&
          (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_' ||
           s[i - 1] == '-'))
        continue;
      j = i + l;
      while (j < n && (s[j] == '=' || s[j] == ' '))
        j++;
      if (j < n && isdigit((unsigned char)s[j]))
        return 1;
    }
  }
  return 0;
}

int sm__job_memory(const sm__line *lines, int n, int x, int cgroup) {
  double first = -1, prev = -1;
  int figures = 0, rises = 0, steps = 0, evidence = 0;

  if (x > n)
    x = n;
  for (int i = 0; i < x; i++) {
    const char *m = lines[i].text + lines[i].msg;
    size_t mn = lines[i].len - lines[i].msg;
    double v;
    if (ci_has(m, SM_MIN(mn, (size_t)4096), "memory leak") ||
        ci_has(m, SM_MIN(mn, (size_t)4096), "leaking memory"))
      evidence |= SM__JOBMEM_LEAK;
    if (cgroup && sm__mem_request(m, mn))
      evidence |= SM__JOBMEM_REQUEST;
    v = sm__host_mem_figure(m, mn);
    if (v < 0)
      continue;
    if (figures == 0)
      first = v;
    else {
      steps++;
      rises += v > prev;
    }
    prev = v;
    figures++;
  }
  if (figures >= GROWTH_MIN_LINES && first > 0 &&
      prev >= first * GROWTH_RATIO && rises * 3 >= steps * 2)
    evidence |= SM__JOBMEM_GROWTH;
  return evidence;
}
