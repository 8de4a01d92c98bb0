/* workloads.c - the catalogue of workload templates that gives trace jobs
 * the source code a trace does not carry.
 *
 * A catalogue is a directory with one folder per template:
 *
 *   NAME/workload.conf   key = value lines:
 *                          class = D        GPU-time decade 0..4 the
 *                                           template stands for (0: under
 *                                           0.1 GPU-hours ... 4: 100 and
 *                                           more)
 *                          cwd = SUBDIR     the command's directory
 *                                           (default: the repository root)
 *                          command = ...    the launch command, with
 *                                           {ITERS} where the variants
 *                                           differ
 *                          iterations = A B C   one variant per value,
 *                                           shortest first
 *   NAME/repo/           the training repository the command runs
 *
 * Every variant's command goes through the real extractor (sm_extract)
 * once, when the catalogue is loaded, so that simulated jobs carry the
 * metadata SchedMate would read from their code.  Jobs are mapped to a
 * template and a variant by sm__wl_map from submission-time information
 * only; sm__wl_map_oracle is the outcome-based mapping of the oracle
 * source (docs/simulator.md, 7.4 and 7.5). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schedmate/sm_advisor.h"
#include "sim/workloads_int.h"

#define MAX_TEMPLATES 256
#define MAX_VARIANTS 8
#define MAX_WORDS 128
#define CONF_MAX (64 * 1024)

static void variant_release(sm__variant *v) {
  sm_meta_release(&v->meta);
  sm_free(v->command);
}

void sm__wl_free(sm__wl *w) {
  if (w == NULL)
    return;
  for (int i = 0; i < w->n; i++) {
    for (int k = 0; k < w->t[i].nv; k++)
      variant_release(&w->t[i].v[k]);
    sm_free(w->t[i].v);
    sm_free(w->t[i].name);
  }
  sm_free(w->t);
  sm_free(w->dir);
  sm_free(w);
}

/* Strips blanks at both ends in place. */
static char *trim(char *s) {
  char *e;

  while (*s == ' ' || *s == '\t')
    s++;
  e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
    *--e = '\0';
  return s;
}

/* Splits a command into words (blanks separate; single or double quotes
 * group).  Returns the word count or -1 for an open quote or too many
 * words.  Words point into buf. */
static int split_words(char *buf, char **w, int max) {
  int n = 0;
  char *p = buf, *o;

  while (*p) {
    char q = 0;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\0')
      break;
    if (n == max)
      return -1;
    w[n++] = o = p;
    while (*p && (q || (*p != ' ' && *p != '\t'))) {
      if (!q && (*p == '"' || *p == '\'')) {
        q = *p++;
        continue;
      }
      if (q && *p == q) {
        q = 0;
        p++;
        continue;
      }
      *o++ = *p++;
    }
    if (q)
      return -1;
    if (*p)
      p++;
    *o = '\0';
  }
  return n;
}

/* Replaces every {ITERS} in cmd by iters into out. */
static void substitute(const char *cmd, const char *iters, char *out,
                       size_t cap) {
  size_t o = 0;

  while (*cmd && o + 1 < cap) {
    if (strncmp(cmd, "{ITERS}", 7) == 0) {
      size_t k = strlen(iters);
      if (o + k >= cap)
        break;
      memcpy(out + o, iters, k);
      o += k;
      cmd += 7;
    } else {
      out[o++] = *cmd++;
    }
  }
  out[o] = '\0';
}

static int extract_variant(const char *repo, const char *cwd,
                           const char *command, sm__variant *v, sm_err *err) {
  char buf[4096], *words[MAX_WORDS];
  const char *argv[MAX_WORDS];
  int n;
  sm_extract_req req;
  sm_extract_res res;
  int rc;

  snprintf(buf, sizeof(buf), "%s", command);
  n = split_words(buf, words, MAX_WORDS);
  if (n <= 0)
    return sm_err_set(err, SM_EPARSE, "bad command '%.60s'", command);
  for (int i = 0; i < n; i++)
    argv[i] = words[i];
  memset(&req, 0, sizeof(req));
  req.repo = repo;
  req.cwd = cwd;
  req.argv = argv;
  req.argc = n;
  rc = sm_extract(&req, &res, err);
  if (rc == 0) {
    sm_meta_init(&v->meta);
    rc = sm_meta_copy(&v->meta, &res.meta);
    /* The history facts match on metadata alone (their identity key holds
     * no configuration digests), so the simulated jobs carry none: facts
     * and sm_advise keep giving the same answers. */
    if (rc == 0)
      rc = sm_meta_set_digests(&v->meta, NULL, NULL);
    if (rc != 0)
      sm_err_set(err, rc, "out of memory");
  }
  sm_extract_res_release(&res);
  if (rc != 0)
    return rc;
  v->command = sm_strdup(command);
  return v->command ? 0 : sm_err_set(err, SM_ENOMEM, "out of memory");
}

/* Reads NAME/workload.conf and extracts its variants into t. */
static int load_template(const char *dir, const char *name, sm__template *t,
                         sm_err *err) {
  char path[4096], repo[4096], *text = NULL, *line, *save = NULL;
  char command[2048] = "", iters[512] = "", cwd[512] = "";
  size_t len;
  long lineno = 0;
  int rc, have_class = 0;

  snprintf(path, sizeof(path), "%s/%s/workload.conf", dir, name);
  snprintf(repo, sizeof(repo), "%s/%s/repo", dir, name);
  rc = sm_file_read_all(path, CONF_MAX, &text, &len, err);
  if (rc != 0)
    return rc;
  if (memchr(text, '\0', len) != NULL) {
    sm_free(text);
    return sm_err_set(err, SM_EPARSE, "%s: binary data", path);
  }
  for (line = strtok_r(text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char *eq, *k, *v;
    lineno++;
    line = trim(line);
    if (*line == '\0' || *line == '#')
      continue;
    eq = strchr(line, '=');
    if (eq == NULL) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: expected 'key = value'", path,
                      lineno);
      break;
    }
    *eq = '\0';
    k = trim(line);
    v = trim(eq + 1);
    if (strcmp(k, "class") == 0) {
      long long c;
      if (sm_parse_i64(v, &c) != 0 || c < 0 || c > 4) {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:%ld: class: expected a GPU-time decade 0..4, "
                        "got '%.40s'",
                        path, lineno, v);
        break;
      }
      t->gclass = (int)c;
      have_class = 1;
    } else if (strcmp(k, "command") == 0 && strlen(v) < sizeof(command)) {
      strcpy(command, v);
    } else if (strcmp(k, "iterations") == 0 && strlen(v) < sizeof(iters)) {
      strcpy(iters, v);
    } else if (strcmp(k, "cwd") == 0 && strlen(v) < sizeof(cwd)) {
      strcpy(cwd, v);
    } else if (strcmp(k, "about") != 0) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: unknown or overlong key '%.40s' (class, cwd, "
                      "command, iterations, about)",
                      path, lineno, k);
      break;
    }
  }
  sm_free(text);
  if (rc != 0)
    return rc;
  if (!have_class || command[0] == '\0' || iters[0] == '\0')
    return sm_err_set(err, SM_EPARSE, "%s: needs class, command and iterations",
                      path);
  if (strstr(command, "{ITERS}") == NULL)
    return sm_err_set(err, SM_EPARSE, "%s: the command has no {ITERS}", path);
  t->name = sm_strdup(name);
  t->v = sm_calloc(MAX_VARIANTS, sizeof(*t->v));
  if (t->name == NULL || t->v == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (char *it = strtok_r(iters, " \t,", &save); it != NULL;
       it = strtok_r(NULL, " \t,", &save)) {
    char cmd[4096];
    long long x;
    if (t->nv == MAX_VARIANTS)
      return sm_err_set(err, SM_EPARSE, "%s: more than %d iterations values",
                        path, MAX_VARIANTS);
    if (sm_parse_i64(it, &x) != 0 || x < 1)
      return sm_err_set(err, SM_EPARSE,
                        "%s: iterations: '%.20s' is not a positive count", path,
                        it);
    substitute(command, it, cmd, sizeof(cmd));
    rc = extract_variant(repo, cwd[0] && strcmp(cwd, ".") ? cwd : NULL, cmd,
                         &t->v[t->nv], err);
    if (rc != 0) {
      sm_err m = *err;
      return sm_err_set(err, rc, "%s: %s", path, m.msg);
    }
    t->nv++;
  }
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int sm__wl_load(const char *dir, sm__wl **out, sm_err *err) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char *names[MAX_TEMPLATES];
  int nn = 0, rc = 0;
  sm__wl *w;
  double t0 = sm_now();

  if (d == NULL)
    return sm_err_set(err, SM_ENOENT,
                      "%s: cannot open the workload "
                      "catalogue: %m",
                      dir);
  while ((e = readdir(d)) != NULL) {
    char p[4096];
    struct stat st;
    if (e->d_name[0] == '.')
      continue;
    snprintf(p, sizeof(p), "%s/%s/workload.conf", dir, e->d_name);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (nn == MAX_TEMPLATES) {
      rc = sm_err_set(err, SM_ELIMIT, "%s: more than %d templates", dir,
                      MAX_TEMPLATES);
      break;
    }
    names[nn] = sm_strdup(e->d_name);
    if (names[nn] == NULL) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      break;
    }
    nn++;
  }
  closedir(d);
  if (rc == 0 && nn == 0)
    rc = sm_err_set(err, SM_EPARSE,
                    "%s: no templates (NAME/workload.conf) found", dir);
  w = rc == 0 ? sm_calloc(1, sizeof(*w)) : NULL;
  if (rc == 0 && w != NULL) {
    w->t = sm_calloc((size_t)nn, sizeof(*w->t));
    w->dir = sm_strdup(dir);
  }
  if (rc == 0 && (w == NULL || w->t == NULL || w->dir == NULL))
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
  if (rc == 0) {
    qsort(names, (size_t)nn, sizeof(char *), by_name);
    for (int i = 0; i < nn && rc == 0; i++) {
      rc = load_template(dir, names[i], &w->t[w->n], err);
      w->n++;
      if (rc == 0)
        w->nvariants += w->t[w->n - 1].nv;
    }
  }
  for (int i = 0; i < nn; i++)
    sm_free(names[i]);
  if (rc != 0) {
    sm__wl_free(w);
    return rc;
  }
  w->extract_ms = (sm_now() - t0) * 1000;
  *out = w;
  return 0;
}

void sm__wl_map(const sm__wl *w, const char *identity, uint64_t seed, int *tmpl,
                int *variant) {
  size_t n = strlen(identity);
  uint64_t a = sm_hash64(identity, n, seed ^ 0x3c6ef372fe94f82bULL);
  uint64_t b = sm_hash64(identity, n, seed ^ 0xa54ff53a5f1d36f1ULL);

  *tmpl = (int)(a % (uint64_t)w->n);
  *variant = (int)(b % (uint64_t)w->t[*tmpl].nv);
}

int sm__gpu_time_decade(const sm_sim_job *j) {
  double h = j->duration * j->gpus / 3600.0;

  if (!(h >= 0.1))
    return 0;
  if (h < 1)
    return 1;
  if (h < 10)
    return 2;
  if (h < 100)
    return 3;
  return 4;
}

void sm__wl_map_oracle(const sm__wl *w, const sm_sim_job *j,
                       const char *identity, uint64_t seed, int *tmpl,
                       int *variant) {
  int d = sm__gpu_time_decade(j), k = 0, pick, best = -1, bestdist = 99;
  double h = j->duration * j->gpus / 3600.0, lo, frac;
  uint64_t hv;

  /* The decade's templates, or those of the nearest decade that has. */
  for (int i = 0; i < w->n; i++) {
    int dist = abs(w->t[i].gclass - d);
    if (dist < bestdist) {
      bestdist = dist;
      best = w->t[i].gclass;
    }
  }
  for (int i = 0; i < w->n; i++)
    k += w->t[i].gclass == best;
  hv = sm_hash64(identity, strlen(identity), seed ^ 0x7e3a1b5cULL);
  pick = (int)(hv % (uint64_t)k);
  *tmpl = 0;
  for (int i = 0; i < w->n; i++)
    if (w->t[i].gclass == best && pick-- == 0) {
      *tmpl = i;
      break;
    }
  /* Variant: where the job's GPU time lies inside its decade (the open
   * decades 0 and 4 are taken as one decade wide). */
  lo = d - 2.0; /* log10 of the decade's lower bound, in GPU-hours */
  frac = h > 0 ? log10(h) - lo : 0;
  if (!(frac >= 0))
    frac = 0;
  if (frac > 0.999)
    frac = 0.999;
  *variant = (int)(frac * w->t[*tmpl].nv);
}
