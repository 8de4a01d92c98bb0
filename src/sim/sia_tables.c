/* sia_tables.c - the per-application tables Sia's simulations run on,
 * read at run time from a directory laid out as Sia's public artifact
 * lays out its traces (one subdirectory per application):
 *
 *   validation-<B>.csv     one training run at global batch B: per epoch
 *                          progress, metric, gradient squared norm and
 *                          variance (columns by name, any order)
 *   placements-<S>.csv     step and sync time per placement (GPUs per
 *                          node as digits) and per-GPU batch, on the GPU
 *                          type whose table suffix is S
 *   scalability-<S>.csv    the same per (nodes, replicas) for placements
 *                          that were not measured one by one (optional)
 *
 * The tables are the simulated world's truth: a job's real speed and
 * statistical efficiency.  The scheduler never reads them directly; it
 * learns from what its jobs report (sia_goodput.c), except for the one
 * figure Sia's profiling measures, the single-GPU throughput per type.
 *
 * Lookups that the tables cover are exact (linear interpolation along the
 * batch size of a measured placement).  Placements that were not measured
 * are interpolated between (nodes, replicas) groups: the nearest group at
 * or below and the nearest at or above, weighted by their distance in
 * nodes + GPUs.  Sia's artifact uses a Delaunay interpolation over the
 * same points; on the configurations Sia allocates the two agree where the
 * tables have the point and differ only between measured groups. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sia_tables_int.h"
#include "sim/sim_int.h"

#define MAX_APPS 64
#define MAX_VALIDATION 32
#define MAX_ROWS 200000

struct sm__sia_tables {
  char *dir;                          /* table directory */
  int ntypes;                         /* GPU types of the cluster */
  char suffix[SM__SIA_MAX_TYPES][24]; /* their table suffixes */
  sm__sia_app *apps[MAX_APPS];        /* applications read so far */
  int napps;                          /* their count */
};

/* Figures of the applications Sia's artifact measured on its physical
 * cluster: checkpoint-restore delay of one reallocation, the scheduler's
 * own estimate of it (its restart penalty), and how much slower real runs
 * were than the tables.  Applications not listed get 30 s, 30 s, 1.0. */
static const struct {
  const char *app;
  double restore_s, penalty_s, slowdown;
} known[] = {{"cifar10", 50, 30, 1.8},    {"deepspeech2", 25, 25, 1.2},
             {"bert", 120, 120, 1.2},     {"yolov3", 80, 45, 1.2},
             {"imagenet", 250, 250, 1.2}, {"ncf", 15, 30, 1.5}};

/* ==== Small helpers ==== */

static int cmp_pt(const void *a, const void *b) {
  double x = ((const sm__sia_pt *)a)->bsz, y = ((const sm__sia_pt *)b)->bsz;
  return x < y ? -1 : x > y;
}

/* Sorts points by batch size and averages points of equal batch size. */
static int sort_merge(sm__sia_pt *p, int n) {
  int k = 0;

  qsort(p, (size_t)n, sizeof(*p), cmp_pt);
  for (int i = 0; i < n;) {
    int j = i;
    double s = 0, y = 0;
    while (j < n && p[j].bsz == p[i].bsz) {
      s += p[j].step;
      y += p[j].sync;
      j++;
    }
    p[k].bsz = p[i].bsz;
    p[k].step = s / (j - i);
    p[k].sync = y / (j - i);
    k++;
    i = j;
  }
  return k;
}

/* Linear interpolation along the batch size, clamped to the group. */
static void grp_at(const sm__sia_grp *g, double bsz, double *step,
                   double *sync) {
  int lo = 0, hi = g->n - 1;

  if (bsz <= g->pt[0].bsz) {
    *step = g->pt[0].step;
    *sync = g->pt[0].sync;
    return;
  }
  if (bsz >= g->pt[hi].bsz) {
    *step = g->pt[hi].step;
    *sync = g->pt[hi].sync;
    return;
  }
  while (hi - lo > 1) {
    int m = (lo + hi) / 2;
    if (g->pt[m].bsz <= bsz)
      lo = m;
    else
      hi = m;
  }
  {
    double t = (bsz - g->pt[lo].bsz) / (g->pt[hi].bsz - g->pt[lo].bsz);
    *step = g->pt[lo].step + t * (g->pt[hi].step - g->pt[lo].step);
    *sync = g->pt[lo].sync + t * (g->pt[hi].sync - g->pt[lo].sync);
  }
}

int sm__sia_placement_id(const int *gpn, int n, char *out, size_t outn) {
  char s[64], best[64];
  int m = 0;

  for (int i = 0; i < n; i++) {
    if (gpn[i] <= 0)
      continue;
    if (gpn[i] > 9 || m >= 63)
      return -1;
    s[m++] = (char)('0' + gpn[i]);
  }
  s[m] = '\0';
  memcpy(best, s, (size_t)m + 1);
  for (int r = 1; r < m; r++) {
    char rot[64];
    memcpy(rot, s + r, (size_t)(m - r));
    memcpy(rot + (m - r), s, (size_t)r);
    rot[m] = '\0';
    if (strcmp(rot, best) < 0)
      memcpy(best, rot, (size_t)m + 1);
  }
  if ((size_t)m + 1 > outn)
    return -1;
  memcpy(out, best, (size_t)m + 1);
  return 0;
}

/* ==== CSV files with named columns ==== */

typedef struct table {
  sm__lsrc l;       /* line source */
  const char *path; /* for messages */
  int ncol;         /* header fields */
  int col[8];       /* position of each wanted column, -1 if absent */
} table;

/* Opens path and maps the wanted column names (NULL-terminated) onto the
 * header; the first `required` of them must be present. */
static int table_open(table *t, const char *path, const char *const *want,
                      int required, sm_err *err) {
  char *line, *f[SM__CSV_MAX_FIELDS];
  size_t len;
  int rc, n;

  memset(t, 0, sizeof(*t));
  t->path = path;
  rc = sm__lsrc_open_file(&t->l, path, err);
  if (rc != 0)
    return rc;
  rc = sm__lsrc_next(&t->l, &line, &len, err);
  if (rc < 0)
    goto fail;
  if (rc == 0) {
    rc =
        sm_err_set(err, SM_EPARSE, "%s:1: empty file, expected a header", path);
    goto fail;
  }
  n = sm__csv_split(line, f, SM__CSV_MAX_FIELDS);
  if (n < 0) {
    rc = sm_err_set(err, SM_EPARSE, "%s:1: malformed header", path);
    goto fail;
  }
  t->ncol = n;
  for (int w = 0; want[w] != NULL; w++) {
    t->col[w] = -1;
    for (int i = 0; i < n; i++)
      if (strcmp(f[i], want[w]) == 0) {
        if (t->col[w] >= 0) {
          rc = sm_err_set(err, SM_EPARSE, "%s:1: column '%s' appears twice",
                          path, want[w]);
          goto fail;
        }
        t->col[w] = i;
      }
    if (w < required && t->col[w] < 0) {
      rc = sm_err_set(err, SM_EPARSE, "%s:1: missing column '%s'", path,
                      want[w]);
      goto fail;
    }
  }
  return 0;
fail:
  sm__lsrc_close(&t->l);
  return rc;
}

/* Reads the next row into f; 1, 0 at the end, < 0 on error. */
static int table_row(table *t, char **f, sm_err *err) {
  for (;;) {
    char *line;
    size_t len;
    int rc = sm__lsrc_next(&t->l, &line, &len, err), n;
    if (rc <= 0)
      return rc;
    if (len == 0)
      continue;
    n = sm__csv_split(line, f, SM__CSV_MAX_FIELDS);
    if (n < 0)
      return sm_err_set(err, SM_EPARSE, "%s:%ld: malformed row (quotes)",
                        t->path, t->l.lineno);
    if (n != t->ncol)
      return sm_err_set(err, SM_EPARSE,
                        "%s:%ld: expected %d fields as in the header, found "
                        "%d",
                        t->path, t->l.lineno, t->ncol, n);
    if (t->l.lineno > MAX_ROWS)
      return sm_err_set(err, SM_ETOOBIG, "%s:%ld: more than %d rows", t->path,
                        t->l.lineno, MAX_ROWS);
    return 1;
  }
}

/* Parses column w of the current row as a finite number >= lo. */
static int table_num(table *t, char **f, int w, const char *name, double lo,
                     double *out, sm_err *err) {
  const char *v = f[t->col[w]];
  double d;

  if (sm_parse_double(v, &d) != 0 || !isfinite(d))
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column '%s': '%.40s' is not a number", t->path,
                      t->l.lineno, name, v);
  if (d < lo)
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column '%s': %.6g is out of range (at least "
                      "%g)",
                      t->path, t->l.lineno, name, d, lo);
  *out = d;
  return 0;
}

/* ==== Validation runs ==== */

static int read_validation(sm_arena *ar, const char *path, double bsz,
                           sm__sia_val *v, sm_err *err) {
  static const char *const want[] = {"progress", "grad_sqr", "grad_var",
                                     "metric", NULL};
  table t;
  char *f[SM__CSV_MAX_FIELDS];
  int rc;
  size_t cap[4] = {0, 0, 0, 0};
  double *prog = NULL, *sqr = NULL, *var = NULL, *met = NULL;

  rc = table_open(&t, path, want, 3, err);
  if (rc != 0)
    return rc;
  v->bsz = bsz;
  v->n = 0;
  while ((rc = table_row(&t, f, err)) == 1) {
    double p, s, q, m = NAN;
    if ((rc = table_num(&t, f, 0, "progress", 0, &p, err)) != 0 ||
        (rc = table_num(&t, f, 1, "grad_sqr", 0, &s, err)) != 0 ||
        (rc = table_num(&t, f, 2, "grad_var", 0, &q, err)) != 0)
      break;
    if (t.col[3] >= 0 &&
        (rc = table_num(&t, f, 3, "metric", -INFINITY, &m, err)) != 0)
      break;
    if (v->n > 0 && !(p > prog[v->n - 1])) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: progress %.6g does not increase (previous "
                      "%.6g)",
                      path, t.l.lineno, p, prog[v->n - 1]);
      break;
    }
    if (p <= 0) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: progress must be positive", path,
                      t.l.lineno);
      break;
    }
    if (SM__GROW(prog, (size_t)v->n + 1, cap[0]) != 0 ||
        SM__GROW(sqr, (size_t)v->n + 1, cap[1]) != 0 ||
        SM__GROW(var, (size_t)v->n + 1, cap[2]) != 0 ||
        SM__GROW(met, (size_t)v->n + 1, cap[3]) != 0) {
      rc = sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
      break;
    }
    prog[v->n] = p;
    sqr[v->n] = s;
    var[v->n] = q;
    met[v->n] = m;
    v->n++;
  }
  sm__lsrc_close(&t.l);
  if (rc == 0 && v->n == 0)
    rc = sm_err_set(err, SM_EPARSE, "%s: no rows after the header", path);
  if (rc == 0) {
    size_t sz = (size_t)v->n * sizeof(double);
    v->progress = sm_arena_alloc(ar, sz);
    v->sqr = sm_arena_alloc(ar, sz);
    v->var = sm_arena_alloc(ar, sz);
    v->metric = sm_arena_alloc(ar, sz);
    if (!v->progress || !v->sqr || !v->var || !v->metric)
      rc = sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
    else {
      memcpy(v->progress, prog, sz);
      memcpy(v->sqr, sqr, sz);
      memcpy(v->var, var, sz);
      memcpy(v->metric, met, sz);
    }
  }
  sm_free(prog);
  sm_free(sqr);
  sm_free(var);
  sm_free(met);
  return rc < 0 ? rc : 0;
}

/* ==== Throughput tables ==== */

/* A growable array of raw rows before grouping. */
typedef struct raw {
  char id[24]; /* canonical placement, "" for scalability rows */
  int nodes, replicas;
  sm__sia_pt pt;
} raw;

static int push_raw(raw **v, int *n, size_t *cap, const raw *r) {
  if (SM__GROW(*v, (size_t)*n + 1, *cap) != 0)
    return SM_ENOMEM;
  (*v)[(*n)++] = *r;
  return 0;
}

static int cmp_raw_id(const void *a, const void *b) {
  const raw *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  if (c)
    return c;
  return x->pt.bsz < y->pt.bsz ? -1 : x->pt.bsz > y->pt.bsz;
}

static int cmp_raw_nr(const void *a, const void *b) {
  const raw *x = a, *y = b;
  if (x->nodes != y->nodes)
    return x->nodes - y->nodes;
  if (x->replicas != y->replicas)
    return x->replicas - y->replicas;
  return x->pt.bsz < y->pt.bsz ? -1 : x->pt.bsz > y->pt.bsz;
}

/* Groups sorted raw rows into groups (by id, or by nodes and replicas). */
static int group(sm_arena *ar, raw *v, int n, int by_id, sm__sia_grp **out,
                 int *nout) {
  int ng = 0;
  sm__sia_grp *g;

  for (int i = 0; i < n; i++)
    if (i == 0 || (by_id ? strcmp(v[i].id, v[i - 1].id) != 0
                         : (v[i].nodes != v[i - 1].nodes ||
                            v[i].replicas != v[i - 1].replicas)))
      ng++;
  g = sm_arena_calloc(ar, (size_t)(ng ? ng : 1), sizeof(*g));
  if (g == NULL)
    return SM_ENOMEM;
  ng = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && (by_id ? strcmp(v[j].id, v[i].id) == 0
                           : (v[j].nodes == v[i].nodes &&
                              v[j].replicas == v[i].replicas)))
      j++;
    g[ng].pt = sm_arena_alloc(ar, (size_t)(j - i) * sizeof(sm__sia_pt));
    if (g[ng].pt == NULL)
      return SM_ENOMEM;
    snprintf(g[ng].id, sizeof(g[ng].id), "%s", by_id ? v[i].id : "");
    g[ng].nodes = v[i].nodes;
    g[ng].replicas = v[i].replicas;
    for (int k = i; k < j; k++)
      g[ng].pt[k - i] = v[k].pt;
    g[ng].n = sort_merge(g[ng].pt, j - i);
    ng++;
    i = j;
  }
  *out = g;
  *nout = ng;
  return 0;
}

static int parse_placement(const char *v, char *id, size_t idn, int *nodes,
                           int *replicas) {
  int gpn[32], n = 0;

  for (const char *p = v; *p; p++) {
    if (*p < '1' || *p > '9' || n == 32)
      return -1;
    gpn[n++] = *p - '0';
  }
  if (n == 0)
    return -1;
  *nodes = n;
  *replicas = 0;
  for (int i = 0; i < n; i++)
    *replicas += gpn[i];
  return sm__sia_placement_id(gpn, n, id, idn);
}

static int read_throughput(sm_arena *ar, const char *dir, const char *app,
                           const char *suffix, sm__sia_gtab *g, sm_err *err) {
  static const char *const want_p[] = {"placement", "local_bsz", "step_time",
                                       "sync_time", NULL};
  static const char *const want_s[] = {"num_nodes", "num_replicas", "local_bsz",
                                       "step_time", "sync_time",    NULL};
  char path[4096], *f[SM__CSV_MAX_FIELDS];
  raw *pl = NULL, *nr = NULL, r;
  int npl = 0, nnr = 0, rc;
  size_t cpl = 0, cnr = 0;
  table t;
  double best_b = 0, best_s = 0;

  snprintf(g->suffix, sizeof(g->suffix), "%s", suffix);
  snprintf(path, sizeof(path), "%s/%s/placements-%s.csv", dir, app, suffix);
  rc = table_open(&t, path, want_p, 4, err);
  if (rc != 0)
    return rc;
  g->min_lbsz = INFINITY;
  g->max_lbsz = 0;
  while ((rc = table_row(&t, f, err)) == 1) {
    memset(&r, 0, sizeof(r));
    if (parse_placement(f[t.col[0]], r.id, sizeof(r.id), &r.nodes,
                        &r.replicas) != 0) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column 'placement': '%.40s' is not a list of "
                      "GPUs per node (digits 1-9)",
                      path, t.l.lineno, f[t.col[0]]);
      break;
    }
    if ((rc = table_num(&t, f, 1, "local_bsz", 1, &r.pt.bsz, err)) != 0 ||
        (rc = table_num(&t, f, 2, "step_time", 1e-12, &r.pt.step, err)) != 0 ||
        (rc = table_num(&t, f, 3, "sync_time", 0, &r.pt.sync, err)) != 0)
      break;
    if ((rc = push_raw(&pl, &npl, &cpl, &r)) != 0) {
      rc = sm_err_set(err, rc, "%s: out of memory", path);
      break;
    }
    g->min_lbsz = SM_MIN(g->min_lbsz, r.pt.bsz);
    g->max_lbsz = SM_MAX(g->max_lbsz, r.pt.bsz);
    if (r.replicas == 1) {
      best_b = SM_MAX(best_b, r.pt.bsz);
      best_s = SM_MAX(best_s, r.pt.step);
    }
  }
  sm__lsrc_close(&t.l);
  if (rc == 0 && npl == 0)
    rc = sm_err_set(err, SM_EPARSE, "%s: no rows after the header", path);
  if (rc == 0 && best_s <= 0)
    rc = sm_err_set(err, SM_EPARSE,
                    "%s: no single-GPU row (placement 1): the throughput of "
                    "one GPU is needed",
                    path);
  if (rc != 0)
    goto out;
  g->xput1 = best_b / best_s;
  /* (nodes, replicas) groups: the placements' points... */
  for (int i = 0; i < npl; i++) {
    r = pl[i];
    r.id[0] = '\0';
    if ((rc = push_raw(&nr, &nnr, &cnr, &r)) != 0)
      break;
  }
  /* ...and the scalability rows. */
  snprintf(path, sizeof(path), "%s/%s/scalability-%s.csv", dir, app, suffix);
  if (rc == 0) {
    sm_err e2 = {0};
    rc = table_open(&t, path, want_s, 5, &e2);
    if (rc == SM_ENOENT) {
      rc = 0; /* optional */
    } else if (rc != 0) {
      *err = e2;
    } else {
      while ((rc = table_row(&t, f, err)) == 1) {
        double n, k;
        memset(&r, 0, sizeof(r));
        if ((rc = table_num(&t, f, 0, "num_nodes", 1, &n, err)) != 0 ||
            (rc = table_num(&t, f, 1, "num_replicas", 1, &k, err)) != 0 ||
            (rc = table_num(&t, f, 2, "local_bsz", 1, &r.pt.bsz, err)) != 0 ||
            (rc = table_num(&t, f, 3, "step_time", 1e-12, &r.pt.step, err)) !=
                0 ||
            (rc = table_num(&t, f, 4, "sync_time", 0, &r.pt.sync, err)) != 0)
          break;
        if (n != floor(n) || k != floor(k) || n > k || k > 1e5) {
          rc = sm_err_set(err, SM_EPARSE,
                          "%s:%ld: %g nodes and %g replicas: expected whole "
                          "numbers with nodes <= replicas",
                          path, t.l.lineno, n, k);
          break;
        }
        r.nodes = (int)n;
        r.replicas = (int)k;
        if ((rc = push_raw(&nr, &nnr, &cnr, &r)) != 0) {
          rc = sm_err_set(err, rc, "%s: out of memory", path);
          break;
        }
      }
      sm__lsrc_close(&t.l);
    }
  }
  if (rc != 0)
    goto out;
  qsort(pl, (size_t)npl, sizeof(raw), cmp_raw_id);
  qsort(nr, (size_t)nnr, sizeof(raw), cmp_raw_nr);
  if (group(ar, pl, npl, 1, &g->pl, &g->npl) != 0 ||
      group(ar, nr, nnr, 0, &g->nr, &g->nnr) != 0) {
    rc = sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
    goto out;
  }
  g->max_nodes = 0;
  for (int i = 0; i < g->nnr; i++)
    g->max_nodes = SM_MAX(g->max_nodes, g->nr[i].nodes);
out:
  sm_free(pl);
  sm_free(nr);
  return rc < 0 ? rc : 0;
}

/* ==== Applications ==== */

static int cmp_val(const void *a, const void *b) {
  double x = ((const sm__sia_val *)a)->bsz, y = ((const sm__sia_val *)b)->bsz;
  return x < y ? -1 : x > y;
}

/* An application and the arena that holds its tables. */
typedef struct appbox {
  sm__sia_app a; /* first: the application handed out */
  sm_arena mem;  /* its memory */
} appbox;

static int load_app(sm__sia_tables *T, const char *name, sm__sia_app **out,
                    sm_err *err) {
  char path[4096];
  DIR *d;
  struct dirent *e;
  appbox *box;
  sm__sia_app *a;
  int rc = 0;

  if (strlen(name) >= sizeof(box->a.name) || strchr(name, '/') != NULL ||
      name[0] == '.' || name[0] == '\0')
    return sm_err_set(err, SM_EINVAL, "%s: bad application name '%.40s'",
                      T->dir, name);
  box = sm_calloc(1, sizeof(*box));
  if (box == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  sm_arena_init(&box->mem, 1 << 16, 0);
  a = &box->a;
#define ar (box->mem)
  snprintf(a->name, sizeof(a->name), "%s", name);
  a->val = sm_arena_calloc(&ar, MAX_VALIDATION, sizeof(sm__sia_val));
  if (a->val == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto fail;
  }
  snprintf(path, sizeof(path), "%s/%s", T->dir, name);
  d = opendir(path);
  if (d == NULL) {
    rc = sm_err_set(err, sm_err_from_errno(errno),
                    "%s: no tables for application '%s' (%s)", path, name,
                    strerror(errno));
    goto fail;
  }
  while (rc == 0 && (e = readdir(d)) != NULL) {
    const char *n = e->d_name;
    long long b;
    char num[32], file[4200];
    size_t L = strlen(n);
    if (strncmp(n, "validation-", 11) != 0 || L < 16 ||
        strcmp(n + L - 4, ".csv") != 0 || L - 15 >= sizeof(num))
      continue;
    memcpy(num, n + 11, L - 15);
    num[L - 15] = '\0';
    if (sm_parse_i64(num, &b) != 0 || b < 1) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s/%s: the batch size in the name is not a positive "
                      "whole number",
                      path, n);
      break;
    }
    if (a->nval == MAX_VALIDATION) {
      rc = sm_err_set(err, SM_ELIMIT, "%s: more than %d validation runs", path,
                      MAX_VALIDATION);
      break;
    }
    if ((size_t)snprintf(file, sizeof(file), "%s/%s", path, n) >=
        sizeof(file)) {
      rc = sm_err_set(err, SM_ELIMIT, "%s/%s: path too long", path, n);
      break;
    }
    rc = read_validation(&ar, file, (double)b, &a->val[a->nval], err);
    if (rc == 0)
      a->nval++;
  }
  closedir(d);
  if (rc != 0)
    goto fail;
  if (a->nval == 0) {
    rc = sm_err_set(err, SM_EPARSE,
                    "%s: no validation-<batch>.csv files: the training "
                    "progress of '%s' is unknown",
                    path, name);
    goto fail;
  }
  qsort(a->val, (size_t)a->nval, sizeof(sm__sia_val), cmp_val);
  a->init_bsz = a->val[0].bsz;
  a->max_bsz = a->val[a->nval - 1].bsz;
  a->epochs = a->val[0].n;
  for (int i = 1; i < a->nval; i++)
    a->epochs = SM_MIN(a->epochs, a->val[i].n);
  a->epoch_start =
      sm_arena_alloc(&ar, (size_t)(a->epochs + 1) * sizeof(double));
  if (a->epoch_start == NULL) {
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
    goto fail;
  }
  a->epoch_start[0] = 0;
  for (int ep = 1; ep <= a->epochs; ep++) {
    double m = INFINITY;
    for (int i = 0; i < a->nval; i++)
      m = SM_MIN(m, a->val[i].progress[ep - 1]);
    if (!(m > a->epoch_start[ep - 1])) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s: progress at the end of epoch %d does not exceed "
                      "the previous epoch's in every validation run",
                      path, ep);
      goto fail;
    }
    a->epoch_start[ep] = m;
  }
  a->restore_s = a->penalty_s = 30;
  a->slowdown = 1.0;
  for (size_t i = 0; i < SM_ARRAY_LEN(known); i++)
    if (strcmp(known[i].app, name) == 0) {
      a->restore_s = known[i].restore_s;
      a->penalty_s = known[i].penalty_s;
      a->slowdown = known[i].slowdown;
    }
  for (int ty = 0; ty < T->ntypes; ty++) {
    int dup = -1;
    for (int k = 0; k < ty; k++)
      if (strcmp(T->suffix[k], T->suffix[ty]) == 0)
        dup = k;
    if (dup >= 0) {
      a->g[ty] = a->g[dup];
      continue;
    }
    a->g[ty] = sm_arena_calloc(&ar, 1, sizeof(sm__sia_gtab));
    if (a->g[ty] == NULL) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      goto fail;
    }
    rc = read_throughput(&ar, T->dir, name, T->suffix[ty], a->g[ty], err);
    if (rc != 0)
      goto fail;
  }
  *out = a;
  return 0;
fail:
  sm_arena_discard(&box->mem);
  sm_free(box);
  return rc;
#undef ar
}

static void app_free(sm__sia_app *a) {
  appbox *box = (appbox *)a; /* a is the first member */
  sm_arena_discard(&box->mem);
  sm_free(box);
}

int sm__sia_tables_open(const char *dir, const char *const *suffixes,
                        int ntypes, sm__sia_tables **out, sm_err *err) {
  sm__sia_tables *t;

  if (ntypes < 1 || ntypes > SM__SIA_MAX_TYPES)
    return sm_err_set(err, SM_EINVAL, "sia: %d GPU types (1 to %d allowed)",
                      ntypes, SM__SIA_MAX_TYPES);
  t = sm_calloc(1, sizeof(*t));
  if (t == NULL || (t->dir = sm_strdup(dir)) == NULL) {
    sm_free(t);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  t->ntypes = ntypes;
  for (int i = 0; i < ntypes; i++) {
    if (strlen(suffixes[i]) >= sizeof(t->suffix[i]) ||
        strchr(suffixes[i], '/') != NULL || suffixes[i][0] == '\0') {
      sm__sia_tables_free(t);
      return sm_err_set(err, SM_EINVAL, "sia: bad table suffix '%.40s'",
                        suffixes[i]);
    }
    snprintf(t->suffix[i], sizeof(t->suffix[i]), "%s", suffixes[i]);
  }
  *out = t;
  return 0;
}

void sm__sia_tables_free(sm__sia_tables *t) {
  if (t == NULL)
    return;
  for (int i = 0; i < t->napps; i++)
    app_free(t->apps[i]);
  sm_free(t->dir);
  sm_free(t);
}

int sm__sia_app_get(sm__sia_tables *t, const char *name,
                    const sm__sia_app **out, sm_err *err) {
  sm__sia_app *a;
  int rc;

  for (int i = 0; i < t->napps; i++)
    if (strcmp(t->apps[i]->name, name) == 0) {
      *out = t->apps[i];
      return 0;
    }
  if (t->napps == MAX_APPS)
    return sm_err_set(err, SM_ELIMIT, "sia: more than %d applications",
                      MAX_APPS);
  rc = load_app(t, name, &a, err);
  if (rc != 0)
    return rc;
  t->apps[t->napps++] = a;
  *out = a;
  return 0;
}

int sm__sia_tables_count(const sm__sia_tables *t) {
  return t->napps;
}
const sm__sia_app *sm__sia_tables_app(const sm__sia_tables *t, int i) {
  return i >= 0 && i < t->napps ? t->apps[i] : NULL;
}
const char *sm__sia_tables_dir(const sm__sia_tables *t) {
  return t->dir;
}

/* ==== Lookups ==== */

static const sm__sia_grp *find_pl(const sm__sia_gtab *g, const char *id) {
  int lo = 0, hi = g->npl - 1;
  while (lo <= hi) {
    int m = (lo + hi) / 2, c = strcmp(g->pl[m].id, id);
    if (c == 0)
      return &g->pl[m];
    if (c < 0)
      lo = m + 1;
    else
      hi = m - 1;
  }
  return NULL;
}

int sm__sia_true_step(const sm__sia_app *a, int t, const int *gpn, int n,
                      double bsz, double *step, double *sync) {
  const sm__sia_gtab *g = a->g[t];
  const sm__sia_grp *lo = NULL, *hi = NULL;
  char id[64];
  int nodes = 0, reps = 0, dlo = 0, dhi = 0;

  if (g == NULL || !(bsz > 0))
    return -1;
  if (sm__sia_placement_id(gpn, n, id, sizeof(id)) == 0) {
    const sm__sia_grp *p = find_pl(g, id);
    if (p != NULL) {
      grp_at(p, bsz, step, sync);
      return 0;
    }
  }
  for (int i = 0; i < n; i++)
    if (gpn[i] > 0) {
      nodes++;
      reps += gpn[i];
    }
  if (reps == 0)
    return -1;
  /* The nearest measured (nodes, replicas) at or below and at or above. */
  for (int i = 0; i < g->nnr; i++) {
    const sm__sia_grp *x = &g->nr[i];
    int d = abs(x->nodes - nodes) + abs(x->replicas - reps);
    if (x->nodes <= nodes && x->replicas <= reps && (!lo || d < dlo)) {
      lo = x;
      dlo = d;
    }
    if (x->nodes >= nodes && x->replicas >= reps && (!hi || d < dhi)) {
      hi = x;
      dhi = d;
    }
  }
  if (lo == NULL && hi == NULL)
    return -1;
  if (lo == NULL || hi == NULL || lo == hi) {
    grp_at(lo ? lo : hi, bsz, step, sync);
    return 0;
  }
  {
    double s1, y1, s2, y2, w = (double)dlo / (double)(dlo + dhi);
    grp_at(lo, bsz, &s1, &y1);
    grp_at(hi, bsz, &s2, &y2);
    *step = s1 + w * (s2 - s1);
    *sync = y1 + w * (y2 - y1);
  }
  return 0;
}

double sm__sia_max_local_bsz(const sm__sia_app *a, int t, const int *gpn,
                             int n) {
  const sm__sia_gtab *g = a->g[t];
  char id[64];
  int nodes = 0, reps = 0;
  double m = 0;

  if (sm__sia_placement_id(gpn, n, id, sizeof(id)) == 0) {
    const sm__sia_grp *p = find_pl(g, id);
    if (p != NULL)
      return p->pt[p->n - 1].bsz;
  }
  for (int i = 0; i < n; i++)
    if (gpn[i] > 0) {
      nodes++;
      reps += gpn[i];
    }
  for (int i = 0; i < g->nnr; i++)
    if (g->nr[i].nodes >= nodes && g->nr[i].replicas >= reps)
      m = SM_MAX(m, g->nr[i].pt[g->nr[i].n - 1].bsz);
  return m > 0 ? m : g->max_lbsz;
}

double sm__sia_max_bsz_replicas(const sm__sia_app *a, int t, int replicas) {
  const sm__sia_gtab *g = a->g[t];
  double m = 0;

  for (int i = 0; i < g->npl; i++)
    if (g->pl[i].replicas == replicas)
      m = SM_MAX(m, g->pl[i].pt[g->pl[i].n - 1].bsz);
  return m;
}

void sm__sia_grad(const sm__sia_app *a, double bsz, int epoch, double *sqr,
                  double *var) {
  int lo = 0, hi = a->nval - 1;

  if (epoch < 0)
    epoch = 0;
  if (epoch >= a->epochs)
    epoch = a->epochs - 1;
  if (bsz <= a->val[0].bsz) {
    hi = 0;
  } else if (bsz >= a->val[a->nval - 1].bsz) {
    lo = hi;
  } else {
    for (int i = 0; i < a->nval; i++) {
      if (a->val[i].bsz <= bsz)
        lo = i;
      if (a->val[i].bsz >= bsz) {
        hi = i;
        break;
      }
    }
  }
  if (lo == hi || a->val[hi].bsz == a->val[lo].bsz) {
    *sqr = a->val[lo].sqr[epoch];
    *var = a->val[lo].var[epoch];
    return;
  }
  {
    double w = (bsz - a->val[lo].bsz) / (a->val[hi].bsz - a->val[lo].bsz);
    *sqr = a->val[lo].sqr[epoch] +
           w * (a->val[hi].sqr[epoch] - a->val[lo].sqr[epoch]);
    *var = a->val[lo].var[epoch] +
           w * (a->val[hi].var[epoch] - a->val[lo].var[epoch]);
  }
}
