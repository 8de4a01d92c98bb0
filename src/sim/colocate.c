/* colocate.c - the simulated jobs' GPU profiles and what happens when two
 * of them share GPUs, for Lucid and Lucid + SchedMate.
 *
 * Two sources, and every report says which one a run used:
 *
 *   Lucid's tables  single_data.csv (one row per model, dataset, batch
 *                   size and precision: utilisation, memory, throughput
 *                   and Lucid's sharing score) and colocate_info.csv
 *                   (measured speeds of 1,388 pairs on one RTX 3090).
 *                   They are under the S-Lab licence (non-commercial), so
 *                   SchedMate never ships them: an operator points at a
 *                   copy (../shared/traces/lucid/ here).
 *   built-in model  nine stylised profiles, three per GPU-time class,
 *                   written for this project (not measurements), used
 *                   when no tables are given.
 *
 * Pairs that were not measured (always, with the built-in model) run at
 * the speeds of a utilisation model: two jobs whose utilisations add up
 * to at most 100 % keep 0.955 of their speed each (the median of the
 * measured speeds), busier pairs share the SMs in proportion, 0.955 x
 * 100 / (u1 + u2) each.  Lucid's simulator assumes full speed for the
 * unmeasured pairs it meets (ResNet-50, BERT, Transformer, NeuMF). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/colocate_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_ROWS 4096
#define MEDIAN_SPEED 0.955
#define MEM_SCALE 24576.0

struct sm__coloc {
  sm__prof *rows;   /* profiles */
  int n;            /* their count */
  int builtin;      /* 1: the built-in model */
  double *speed;    /* n x n: speed of row i next to row j, NaN if not
                       measured */
  size_t measured;  /* pairs read from colocate_info.csv */
  size_t skipped;   /* pairs naming rows the profiles lack */
  char source[512]; /* for reports */
};

/* ==== Built-in model ==== */

/* Stylised single-job profiles, three per GPU-time class, spanning light
 * to compute-bound jobs; labels follow utilisation (< 50 % shares well,
 * < 85 % moderately, else poorly).  Figures chosen for this model, not
 * measured. */
static const sm__prof builtin_rows[] = {
    {"light-a", "", 0, 0, 25, 8, 2200, 0.05, 0, SM__GROUP_LIGHT},
    {"light-b", "", 0, 0, 45, 18, 2600, 0.05, 0, SM__GROUP_LIGHT},
    {"light-c", "", 0, 0, 70, 35, 3500, 0.04, 1, SM__GROUP_LIGHT},
    {"medium-a", "", 0, 0, 55, 25, 4000, 0.10, 1, SM__GROUP_MEDIUM},
    {"medium-b", "", 0, 0, 80, 45, 6000, 0.10, 1, SM__GROUP_MEDIUM},
    {"medium-c", "", 0, 0, 98, 70, 9000, 0.20, 2, SM__GROUP_MEDIUM},
    {"heavy-a", "", 0, 0, 95, 70, 12000, 0.40, 2, SM__GROUP_HEAVY},
    {"heavy-b", "", 0, 0, 100, 80, 20000, 0.60, 2, SM__GROUP_HEAVY},
    {"heavy-c", "", 0, 0, 100, 85, 30000, 1.00, 2, SM__GROUP_HEAVY}};

/* GPU-time class of Lucid's models, by their typical cost: CIFAR-10-scale
 * vision, reinforcement learning and recommendation are light; GANs,
 * point clouds, language models on small corpora, translation and
 * ImageNet-scale mobile networks medium; ResNet-50 on ImageNet and BERT
 * heavy.  Models not listed go by utilisation. */
static int lucid_group(const char *model, const char *dataset, double util) {
  static const char *const light[] = {
      "ResNet18", "MobileNetV2", "EfficientNet", "VGG", "PPO", "TD3", "NeuMF"};
  static const char *const medium[] = {"DCGAN", "PointNet", "LSTM",
                                       "Transformer", "MobileNetV3"};
  static const char *const heavy[] = {"ResNet50", "BERT"};

  (void)dataset;
  for (size_t i = 0; i < SM_ARRAY_LEN(light); i++)
    if (strcmp(model, light[i]) == 0)
      return SM__GROUP_LIGHT;
  for (size_t i = 0; i < SM_ARRAY_LEN(medium); i++)
    if (strcmp(model, medium[i]) == 0)
      return SM__GROUP_MEDIUM;
  for (size_t i = 0; i < SM_ARRAY_LEN(heavy); i++)
    if (strcmp(model, heavy[i]) == 0)
      return SM__GROUP_HEAVY;
  return util < 50   ? SM__GROUP_LIGHT
         : util < 90 ? SM__GROUP_MEDIUM
                     : SM__GROUP_HEAVY;
}

static int alloc_speed(sm__coloc *c, sm_err *err) {
  c->speed = sm_malloc((size_t)c->n * (size_t)c->n * sizeof(double));
  if (c->speed == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int i = 0; i < c->n * c->n; i++)
    c->speed[i] = NAN;
  return 0;
}

static int open_builtin(sm__coloc *c, sm_err *err) {
  c->builtin = 1;
  c->n = (int)SM_ARRAY_LEN(builtin_rows);
  c->rows = sm_malloc(sizeof(builtin_rows));
  if (c->rows == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  memcpy(c->rows, builtin_rows, sizeof(builtin_rows));
  snprintf(c->source, sizeof(c->source),
           "built-in model (%d stylised profiles; co-location by the "
           "utilisation model; no Lucid tables given)",
           c->n);
  return alloc_speed(c, err);
}

/* ==== Lucid's tables ==== */

/* Column index of name in the header, or -1. */
static int col(char **f, int nf, const char *name) {
  for (int i = 0; i < nf; i++)
    if (strcmp(f[i], name) == 0)
      return i;
  return -1;
}

/* Finds the columns of need[] in a header row (idx[k] = field index);
 * "expected" says which file was expected, for the message. */
static int map_header(char **f, int nf, const char *const *need, size_t n,
                      int *idx, const char *path, const char *expected,
                      sm_err *err) {
  for (size_t k = 0; k < n; k++) {
    idx[k] = col(f, nf, need[k]);
    if (idx[k] < 0)
      return sm_err_set(err, SM_EPARSE,
                        "%s:1: missing column '%s' (expected %s)", path,
                        need[k], expected);
  }
  return 0;
}

/* Checks that a data row has every needed column. */
static int row_complete(int nf, const char *const *need, size_t n,
                        const int *idx, const char *path, long line,
                        sm_err *err) {
  for (size_t k = 0; k < n; k++)
    if (idx[k] >= nf)
      return sm_err_set(err, SM_EPARSE,
                        "%s:%ld: %d fields, column '%s' missing", path, line,
                        nf, need[k]);
  return 0;
}

/* One of Lucid's tables being read: the columns it needs and where its
 * header puts them. */
typedef struct table {
  const char *path;
  const char *expected; /* which file was expected, for the message */
  const char *const *need;
  size_t n;
  int *idx;   /* idx[k]: the field index of need[k] */
  int header; /* 1 until the header row is read */
} table;

/* The next data row of l (*nf fields in f), the header row mapped on the
 * way: 1, 0 at the end, or a negative code with err set (a malformed row,
 * a missing column). */
static int next_row(table *t, sm__lsrc *l, char **f, int max, int *nf,
                    sm_err *err) {
  int rc;

  while ((rc = sm__csv_next(l, f, max, 1, nf, err)) == 1) {
    if (t->header) {
      rc = map_header(f, *nf, t->need, t->n, t->idx, t->path, t->expected, err);
      if (rc < 0)
        return rc;
      t->header = 0;
      continue;
    }
    rc = row_complete(*nf, t->need, t->n, t->idx, t->path, l->lineno, err);
    return rc < 0 ? rc : 1;
  }
  return rc;
}

static int num(const char *path, long line, const char *name, const char *v,
               double lo, double hi, double *out, sm_err *err) {
  if (sm_parse_double(v, out) != 0 || !(*out >= lo && *out <= hi))
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column '%s': expected a number in [%g, %g], "
                      "got '%.40s'",
                      path, line, name, lo, hi, v);
  return 0;
}

static int text(const char *path, long line, const char *name, const char *v,
                char *out, size_t cap, sm_err *err) {
  if (*v == '\0' || strlen(v) >= cap)
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column '%s': expected a name of 1..%zu "
                      "characters",
                      path, line, name, cap - 1);
  memcpy(out, v, strlen(v) + 1);
  return 0;
}

static int load_profiles(sm__coloc *c, const char *path, sm_err *err) {
  static const char *const need[] = {"model",     "dataset", "batchsize",
                                     "amp",       "speed",   "gpu_util",
                                     "gmem_util", "gmem",    "label"};
  int idx[SM_ARRAY_LEN(need)];
  table t = {path,
             "Lucid's single_data.csv: model,dataset,batchsize,amp,speed,"
             "gpu_util,gmem_util,gmem,label",
             need,
             SM_ARRAY_LEN(need),
             idx,
             1};
  sm__lsrc l;
  char *f[64];
  int rc, nf;
  size_t cap = 0;

  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0)
    return rc;
  while ((rc = next_row(&t, &l, f, 64, &nf, err)) == 1) {
    sm__prof p;
    double v;
    memset(&p, 0, sizeof(p));
    if ((rc = text(path, l.lineno, "model", f[idx[0]], p.model, sizeof(p.model),
                   err)) != 0 ||
        (rc = text(path, l.lineno, "dataset", f[idx[1]], p.dataset,
                   sizeof(p.dataset), err)) != 0 ||
        (rc = num(path, l.lineno, "batchsize", f[idx[2]], 1, 1e6, &v, err)) !=
            0)
      break;
    p.batch = (int)v;
    if ((rc = num(path, l.lineno, "amp", f[idx[3]], 0, 1, &v, err)) != 0)
      break;
    p.amp = (int)v;
    if ((rc = num(path, l.lineno, "speed", f[idx[4]], 1e-9, 1e12, &v, err)) !=
        0)
      break;
    p.step_s = p.batch / v;
    if ((rc = num(path, l.lineno, "gpu_util", f[idx[5]], 0, 100, &p.util,
                  err)) != 0 ||
        (rc = num(path, l.lineno, "gmem_util", f[idx[6]], 0, 100, &p.gmem_util,
                  err)) != 0 ||
        (rc = num(path, l.lineno, "gmem", f[idx[7]], 0, 1e7, &p.gmem, err)) !=
            0 ||
        (rc = num(path, l.lineno, "label", f[idx[8]], 0, 2, &v, err)) != 0)
      break;
    p.label = (int)v;
    p.group = lucid_group(p.model, p.dataset, p.util);
    if (sm__coloc_find(c, p.model, p.dataset, p.batch, p.amp) >= 0)
      continue; /* a repeated row: the first one stands */
    if (c->n == MAX_ROWS) {
      rc = sm_err_set(err, SM_ELIMIT, "%s: more than %d profiles", path,
                      MAX_ROWS);
      break;
    }
    if (SM__GROW(c->rows, (size_t)c->n + 1, cap) != 0) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      break;
    }
    c->rows[c->n++] = p;
  }
  sm__lsrc_close(&l);
  if (rc < 0)
    return rc;
  if (t.header || c->n == 0)
    return sm_err_set(err, SM_EPARSE, "%s: no profiles", path);
  return 0;
}

static int load_pairs(sm__coloc *c, const char *path, sm_err *err) {
  static const char *const need[] = {
      "model1", "dataset1", "batchsize1", "amp1", "speed1",
      "model2", "dataset2", "batchsize2", "amp2", "speed2"};
  int idx[SM_ARRAY_LEN(need)];
  table t = {path, "Lucid's colocate_info.csv", need, SM_ARRAY_LEN(need), idx,
             1};
  sm__lsrc l;
  char *f[64];
  int rc, nf;

  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0)
    return rc;
  while ((rc = next_row(&t, &l, f, 64, &nf, err)) == 1) {
    int a, b;
    double ba, bb, aa, ab, sa, sb;
    if ((rc = num(path, l.lineno, "batchsize1", f[idx[2]], 1, 1e6, &ba, err)) !=
            0 ||
        (rc = num(path, l.lineno, "amp1", f[idx[3]], 0, 1, &aa, err)) != 0 ||
        (rc = num(path, l.lineno, "speed1", f[idx[4]], 1e-3, 10, &sa, err)) !=
            0 ||
        (rc = num(path, l.lineno, "batchsize2", f[idx[7]], 1, 1e6, &bb, err)) !=
            0 ||
        (rc = num(path, l.lineno, "amp2", f[idx[8]], 0, 1, &ab, err)) != 0 ||
        (rc = num(path, l.lineno, "speed2", f[idx[9]], 1e-3, 10, &sb, err)) !=
            0)
      break;
    a = sm__coloc_find(c, f[idx[0]], f[idx[1]], (int)ba, (int)aa);
    b = sm__coloc_find(c, f[idx[5]], f[idx[6]], (int)bb, (int)ab);
    if (a < 0 || b < 0) {
      c->skipped++;
      continue;
    }
    if (!isnan(c->speed[a * c->n + b]))
      continue; /* measured twice: the first row stands */
    c->speed[a * c->n + b] = sa;
    c->speed[b * c->n + a] = sb;
    c->measured++;
  }
  sm__lsrc_close(&l);
  if (rc < 0)
    return rc;
  if (t.header)
    return sm_err_set(err, SM_EPARSE, "%s: empty file", path);
  return 0;
}

int sm__coloc_load(const char *profiles, const char *colocate, sm__coloc **out,
                   sm_err *err) {
  sm__coloc *c = sm_calloc(1, sizeof(*c));
  int rc;

  if (c == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  if (profiles == NULL && colocate == NULL) {
    rc = open_builtin(c, err);
  } else if (profiles == NULL || colocate == NULL) {
    rc = sm_err_set(err, SM_EINVAL,
                    "Lucid's tables come in pairs: give both the profiles "
                    "(single_data.csv) and the pairs (colocate_info.csv)");
  } else {
    rc = load_profiles(c, profiles, err);
    if (rc == 0)
      rc = alloc_speed(c, err);
    if (rc == 0)
      rc = load_pairs(c, colocate, err);
    if (rc == 0)
      snprintf(c->source, sizeof(c->source),
               "Lucid's measured tables: %s (%d profiles), %s (%zu pairs%s); "
               "S-Lab License 1.0, non-commercial use only",
               profiles, c->n, colocate, c->measured,
               c->skipped ? ", some naming unknown profiles skipped" : "");
  }
  if (rc != 0) {
    sm__coloc_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int sm__coloc_open(sm_sim *s, sm__coloc **out, sm_err *err) {
  const char *dir = SM__PARAM(s, lucid_tables);
  const char *p = SM__PARAM(s, lucid_profiles);
  const char *q = SM__PARAM(s, lucid_colocate);
  char pp[4096], qq[4096];

  if (dir != NULL && strcmp(dir, "builtin") != 0 && p == NULL && q == NULL) {
    snprintf(pp, sizeof(pp), "%s/single_data.csv", dir);
    snprintf(qq, sizeof(qq), "%s/colocate_info.csv", dir);
    p = pp;
    q = qq;
  }
  return sm__coloc_load(p, q, out, err);
}

void sm__coloc_free(sm__coloc *c) {
  if (c == NULL)
    return;
  sm_free(c->rows);
  sm_free(c->speed);
  sm_free(c);
}

const char *sm__coloc_source(const sm__coloc *c) {
  return c->source;
}
int sm__coloc_builtin(const sm__coloc *c) {
  return c->builtin;
}
int sm__coloc_count(const sm__coloc *c) {
  return c->n;
}
const sm__prof *sm__coloc_prof(const sm__coloc *c, int row) {
  return row >= 0 && row < c->n ? &c->rows[row] : NULL;
}

int sm__coloc_find(const sm__coloc *c, const char *model, const char *dataset,
                   int batch, int amp) {
  for (int i = 0; i < c->n; i++)
    if (c->rows[i].batch == batch && c->rows[i].amp == amp &&
        strcmp(c->rows[i].model, model) == 0 &&
        strcmp(c->rows[i].dataset, dataset) == 0)
      return i;
  return -1;
}

/* ==== Jobs ==== */

int sm__gpu_time_group(const sm_sim_job *j) {
  double h = j->duration * j->gpus / 3600.0;
  return h < 1 ? SM__GROUP_LIGHT : h < 10 ? SM__GROUP_MEDIUM : SM__GROUP_HEAVY;
}

int sm__template_group(int gclass) {
  return gclass <= 1   ? SM__GROUP_LIGHT
         : gclass == 2 ? SM__GROUP_MEDIUM
                       : SM__GROUP_HEAVY;
}

int sm__coloc_for_job(const sm__coloc *c, const sm_sim_job *j,
                      const char *identity, int g, uint64_t seed) {
  const char *m = sm_sim_job_attr(j, "model");
  const char *d = sm_sim_job_attr(j, "dataset");
  const char *b = sm_sim_job_attr(j, "batchsize");
  const char *a = sm_sim_job_attr(j, "amp");
  int k = 0, pick;
  uint64_t h;

  if (m != NULL && d != NULL && b != NULL) {
    long long bv = 0, av = 0;
    if (sm_parse_i64(b, &bv) == 0 && (a == NULL || sm_parse_i64(a, &av) == 0)) {
      int r = sm__coloc_find(c, m, d, (int)bv, (int)av);
      if (r >= 0)
        return r;
    }
  }
  for (int i = 0; i < c->n; i++)
    k += g < 0 || c->rows[i].group == g;
  if (k == 0) { /* a table without this class: any row */
    g = -1;
    k = c->n;
  }
  h = sm_hash64(identity, strlen(identity), seed ^ 0x5eed0c01ULL);
  pick = (int)(h % (uint64_t)k);
  for (int i = 0; i < c->n; i++)
    if ((g < 0 || c->rows[i].group == g) && pick-- == 0)
      return i;
  return 0;
}

void sm__coloc_pair(const sm__coloc *c, int a, int b, double *sa, double *sb,
                    int *measured) {
  double x = c->speed[a * c->n + b], y = c->speed[b * c->n + a];
  double u;

  if (!isnan(x) && !isnan(y)) {
    *sa = x;
    *sb = y;
    *measured = 1;
    return;
  }
  *measured = 0;
  u = c->rows[a].util + c->rows[b].util;
  *sa = *sb = u <= 100 ? MEDIAN_SPEED : MEDIAN_SPEED * 100.0 / u;
}

int sm__coloc_label(const sm__coloc *c, double util, double gmem_util,
                    double gmem) {
  double best = INFINITY;
  int label = 2;

  if (isnan(util) || isnan(gmem))
    return 2;
  if (isnan(gmem_util))
    gmem_util = 0;
  for (int i = 0; i < c->n; i++) {
    const sm__prof *p = &c->rows[i];
    double du = (p->util - util) / 100, db = (p->gmem_util - gmem_util) / 100;
    double dm = (p->gmem - gmem) / MEM_SCALE;
    double d = du * du + db * db + dm * dm;
    if (d < best) {
      best = d;
      label = p->label;
    }
  }
  return label;
}
