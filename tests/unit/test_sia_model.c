/* test_sia_model.c - Sia's tables and goodput model: the table reader on
 * the synthetic tables of tests/data/sia (made by make_tables.py from a
 * known step-time model, not measurements) and on malformed files, the
 * lookups (exact placements, rotations, interpolation, gradient
 * statistics), the bounded fit (it recovers the known model within 2 %
 * RMSLE; parameters the points cannot identify are pinned), the
 * statistical efficiency and the batch-size choice.  With Sia's own
 * tables staged in ../shared, the fit's error on them is checked too. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sim/sia_goodput_int.h"
#include "sim/sia_tables_int.h"

#define TABLES "tests/data/sia/tables"

static const char *const two_types[] = {"slow", "fast"};

static sm__sia_tables *open_synthetic(void) {
  sm__sia_tables *t;
  sm_err err = {0};
  if (sm__sia_tables_open(TABLES, two_types, 2, &t, &err) != 0)
    SM_FAIL_AT("open: %s", err.msg);
  return t;
}

static const sm__sia_app *app(sm__sia_tables *t, const char *name) {
  const sm__sia_app *a;
  sm_err err = {0};
  if (sm__sia_app_get(t, name, &a, &err) != 0)
    SM_FAIL_AT("%s: %s", name, err.msg);
  return a;
}

/* Every placement row of one type as observations. */
static int all_points(const sm__sia_gtab *g, sm__sia_obs *o, int max) {
  int n = 0;
  for (int i = 0; i < g->npl; i++)
    for (int k = 0; k < g->pl[i].n && n < max; k++) {
      o[n].nodes = g->pl[i].nodes;
      o[n].replicas = g->pl[i].replicas;
      o[n].bsz = (int)g->pl[i].pt[k].bsz;
      o[n].step = g->pl[i].pt[k].step;
      o[n].sync = g->pl[i].pt[k].sync;
      n++;
    }
  return n;
}

static double rmsle(const sm__sia_perf *p, const sm__sia_obs *o, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double e =
        log(sm__sia_perf_step(p, o[i].nodes, o[i].replicas, o[i].bsz, 0)) -
        log(o[i].step);
    s += e * e;
  }
  return sqrt(s / n);
}

/* ==== Reading the tables ==== */

SM_TEST(sia_tables_read_synthetic) {
  sm__sia_tables *t = open_synthetic();
  const sm__sia_app *a = app(t, "toyconv");

  ASSERT_EQ(a->nval, 5);
  ASSERT_EQ(a->epochs, 12);
  ASSERT_NEAR(a->init_bsz, 64, 0);
  ASSERT_NEAR(a->max_bsz, 1024, 0);
  /* Progress per epoch: the smallest of the validation runs. */
  ASSERT_NEAR(a->epoch_start[0], 0, 0);
  ASSERT_NEAR(a->epoch_start[1], 3000, 1e-6);
  ASSERT_NEAR(a->epoch_start[12], 36000, 1e-3);
  /* Unknown applications get the default delays. */
  ASSERT_NEAR(a->restore_s, 30, 0);
  ASSERT_NEAR(a->slowdown, 1.0, 0);
  ASSERT_NEAR(a->g[0]->min_lbsz, 16, 0);
  ASSERT_NEAR(a->g[0]->max_lbsz, 128, 0);
  ASSERT_EQ(a->g[0]->max_nodes, 4);
  ASSERT_EQ(a->g[1]->max_nodes, 2);
  /* Single-GPU throughput: largest batch / largest one-GPU step. */
  ASSERT(a->g[1]->xput1 > a->g[0]->xput1);
  /* The same application twice is the same object. */
  ASSERT(app(t, "toyconv") == a);
  ASSERT_EQ(sm__sia_tables_count(t), 1);
  sm__sia_tables_free(t);
}

SM_TEST(sia_tables_lookups) {
  sm__sia_tables *t = open_synthetic();
  const sm__sia_app *a = app(t, "toylm");
  int one[] = {1}, four[] = {4, 4}, rot[] = {3, 1}, fresh[] = {4, 4, 4, 4, 4};
  double s1, y1, s2, y2, s3, y3, sq, va, sq2, va2;
  char id[16];

  /* Exact rows and linear interpolation between batch sizes. */
  ASSERT_OK(sm__sia_true_step(a, 0, one, 1, 4, &s1, &y1));
  ASSERT_OK(sm__sia_true_step(a, 0, one, 1, 6, &s2, &y2));
  ASSERT_OK(sm__sia_true_step(a, 0, one, 1, 5, &s3, &y3));
  ASSERT(s1 < s3 && s3 < s2);
  ASSERT_NEAR(s3, (s1 + s2) / 2, 1e-12);
  /* Placements are canonical rotations: 31 is the measured 13. */
  ASSERT_OK(sm__sia_placement_id(rot, 2, id, sizeof(id)));
  ASSERT_STREQ(id, "13");
  ASSERT_OK(sm__sia_true_step(a, 0, rot, 2, 8, &s1, &y1));
  /* Two nodes are slower than one for the same GPUs (network). */
  ASSERT_OK(sm__sia_true_step(a, 0, four, 2, 8, &s1, &y1));
  {
    int eight[] = {8};
    ASSERT_OK(sm__sia_true_step(a, 1, eight, 1, 8, &s2, &y2));
    ASSERT(y1 > 0 && s1 > 0);
  }
  /* Five nodes of four were never measured: between 4 x 4 and nothing
   * above, the nearest group answers. */
  ASSERT_OK(sm__sia_true_step(a, 0, fresh, 5, 8, &s1, &y1));
  ASSERT(isfinite(s1) && s1 > 0);
  /* A node of 12 GPUs has no placement id. */
  {
    int big[] = {12};
    ASSERT_EQ(sm__sia_placement_id(big, 1, id, sizeof(id)), -1);
  }
  ASSERT_NEAR(sm__sia_max_local_bsz(a, 0, one, 1), 16, 0);
  ASSERT_NEAR(sm__sia_max_bsz_replicas(a, 0, 8), 16, 0);
  ASSERT_NEAR(sm__sia_max_bsz_replicas(a, 0, 7), 0, 0);
  /* Gradient statistics: exact at a validated batch, interpolated
   * between, clamped outside. */
  sm__sia_grad(a, 8, 0, &sq, &va);
  ASSERT_NEAR(sq, 2.0, 1e-9);
  ASSERT_NEAR(va, 30.0, 1e-9);
  sm__sia_grad(a, 12, 1, &sq, &va);
  sm__sia_grad(a, 1e9, 99, &sq2, &va2);
  ASSERT_NEAR(sq2, 2.0 * exp(-3 / 4.0), 1e-6);
  ASSERT(sq > 0 && va > 0);
  sm__sia_tables_free(t);
}

/* Writes text into dir/rel (rel = "app/file"), creating dir/app. */
static void put(const char *dir, const char *rel, const char *text) {
  char path[512], sub[512];
  const char *slash = strchr(rel, '/');
  FILE *f;
  snprintf(sub, sizeof(sub), "%s/%.*s", dir, (int)(slash - rel), rel);
  mkdir(sub, 0700);
  snprintf(path, sizeof(path), "%s/%s", dir, rel);
  f = fopen(path, "wb");
  if (f == NULL)
    SM_FAIL_AT("cannot write %s", path);
  fwrite(text, 1, strlen(text), f);
  fclose(f);
}

static void rm_rf(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    SM_FAIL_AT("rm %s", dir);
}

#define VALID "progress,grad_sqr,grad_var\n10,1,2\n20,1,2\n"
#define PLACE "placement,local_bsz,step_time,sync_time\n1,4,0.1,0.01\n"

/* One application "a" with the given files (NULL: a good default) on
 * type "g"; returns the error message of reading it, "" when it read. */
static const char *try_tables(const char *valid, const char *place,
                              const char *scal) {
  static char msg[SM_ERR_MSG_SIZE + 64];
  char dir[] = "/tmp/sm-sia-test-XXXXXX";
  const char *const ty[] = {"g"};
  sm__sia_tables *t;
  const sm__sia_app *a;
  sm_err err = {0};

  if (mkdtemp(dir) == NULL)
    SM_FAIL_AT("mkdtemp");
  if (valid != (const char *)1)
    put(dir, "a/validation-8.csv", valid ? valid : VALID);
  put(dir, "a/placements-g.csv", place ? place : PLACE);
  if (scal != NULL)
    put(dir, "a/scalability-g.csv", scal);
  ASSERT_OK(sm__sia_tables_open(dir, ty, 1, &t, &err));
  if (sm__sia_app_get(t, "a", &a, &err) == 0)
    msg[0] = '\0';
  else
    snprintf(msg, sizeof(msg), "%s",
             err.msg +
                 (strncmp(err.msg, dir, strlen(dir)) == 0 ? strlen(dir) : 0));
  sm__sia_tables_free(t);
  rm_rf(dir);
  return msg;
}

static void expect(const char *msg, const char *where, const char *what) {
  if (strstr(msg, where) == NULL || strstr(msg, what) == NULL)
    SM_FAIL_AT("expected '%s' and '%s' in '%s'", where, what, msg);
  if (strchr(msg, '\n') != NULL)
    SM_FAIL_AT("not one line: '%s'", msg);
}

SM_TEST(sia_tables_malformed) {
  char huge[70000 + 64];

  ASSERT_STREQ(try_tables(NULL, NULL, NULL), "");
  expect(try_tables("", NULL, NULL), "validation-8.csv:1", "empty file");
  expect(try_tables("progress,grad_var\n1,2\n", NULL, NULL),
         "validation-8.csv:1", "missing column 'grad_sqr'");
  expect(try_tables("progress,grad_sqr,grad_var\n1,x,2\n", NULL, NULL),
         "validation-8.csv:2", "'x' is not a number");
  expect(try_tables("progress,grad_sqr,grad_var\n10,1,2\n5,1,2\n", NULL, NULL),
         "validation-8.csv:3", "does not increase");
  expect(try_tables("progress,grad_sqr,grad_var\n1,1\n", NULL, NULL),
         "validation-8.csv:2", "expected 3 fields");
  expect(try_tables("progress,grad_sqr,grad_var\n", NULL, NULL),
         "validation-8.csv", "no rows");
  expect(
      try_tables("progress,grad_sqr,grad_var,grad_sqr\n1,1,1,1\n", NULL, NULL),
      "validation-8.csv:1", "appears twice");
  expect(try_tables("progress,grad_sqr,grad_var\n1,\xff\xfe,2\n", NULL, NULL),
         "validation-8.csv:2", "is not a number");
  expect(try_tables("progress,grad_sqr,grad_var\n1,-1,2\n", NULL, NULL),
         "validation-8.csv:2", "out of range");
  expect(try_tables((const char *)1, NULL, NULL), "/a",
         "no validation-<batch>.csv");
  expect(try_tables(NULL, "placement,local_bsz,step_time\n1,4,0.1\n", NULL),
         "placements-g.csv:1", "missing column 'sync_time'");
  expect(try_tables(NULL,
                    "placement,local_bsz,step_time,sync_time\n1a,4,0.1,0\n",
                    NULL),
         "placements-g.csv:2", "not a list of GPUs per node");
  expect(try_tables(NULL,
                    "placement,local_bsz,step_time,sync_time\n0,4,0.1,0\n",
                    NULL),
         "placements-g.csv:2", "not a list of GPUs per node");
  expect(try_tables(NULL, "placement,local_bsz,step_time,sync_time\n1,4,-1,0\n",
                    NULL),
         "placements-g.csv:2", "out of range");
  expect(try_tables(NULL,
                    "placement,local_bsz,step_time,sync_time\n2,4,0.1,0\n",
                    NULL),
         "placements-g.csv", "no single-GPU row");
  expect(try_tables(NULL, NULL,
                    "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                    "3,2,4,0.1,0\n"),
         "scalability-g.csv:2", "nodes <= replicas");
  expect(try_tables(NULL, NULL,
                    "num_nodes,num_replicas,local_bsz,step_time,sync_time\n"
                    "1.5,2,4,0.1,0\n"),
         "scalability-g.csv:2", "whole numbers");
  /* Binary data and huge lines. */
  {
    static const char bin[] =
        "placement,local_bsz,step_time,sync_time\n1,4,0.1,0\n1,\0,1\n";
    char dir[] = "/tmp/sm-sia-test-XXXXXX", path[600];
    const char *const ty[] = {"g"};
    sm__sia_tables *t;
    const sm__sia_app *a;
    sm_err err = {0};
    FILE *f;
    ASSERT(mkdtemp(dir) != NULL);
    put(dir, "a/validation-8.csv", VALID);
    snprintf(path, sizeof(path), "%s/a/placements-g.csv", dir);
    f = fopen(path, "wb");
    ASSERT(f != NULL);
    fwrite(bin, 1, sizeof(bin) - 1, f);
    fclose(f);
    ASSERT_OK(sm__sia_tables_open(dir, ty, 1, &t, &err));
    ASSERT_EQ(sm__sia_app_get(t, "a", &a, &err), SM_EPARSE);
    ASSERT(strstr(err.msg, "placements-g.csv:3") != NULL);
    ASSERT(strstr(err.msg, "NUL") != NULL);
    sm__sia_tables_free(t);
    rm_rf(dir);
  }
  memcpy(huge, "progress,grad_sqr,grad_var\n1,1,", 31);
  memset(huge + 31, '1', 70000);
  strcpy(huge + 31 + 70000, "\n");
  expect(try_tables(huge, NULL, NULL), "validation-8.csv:2", "longer than");
  /* A missing type table and a bad application name. */
  {
    const char *const ty[] = {"slow", "nosuch"};
    sm__sia_tables *t;
    const sm__sia_app *a;
    sm_err err = {0};
    ASSERT_OK(sm__sia_tables_open(TABLES, ty, 2, &t, &err));
    ASSERT(sm__sia_app_get(t, "toyconv", &a, &err) != 0);
    ASSERT(strstr(err.msg, "placements-nosuch.csv") != NULL);
    memset(&err, 0, sizeof(err));
    ASSERT_EQ(sm__sia_app_get(t, "../etc", &a, &err), SM_EINVAL);
    memset(&err, 0, sizeof(err));
    ASSERT(sm__sia_app_get(t, "absent", &a, &err) != 0);
    ASSERT(strstr(err.msg, "no tables for application 'absent'") != NULL);
    sm__sia_tables_free(t);
  }
}

/* ==== The goodput model ==== */

/* The synthetic tables follow known parameters with a +-0.5 % wobble:
 * the fit must predict their step times within 2 % RMSLE and find the
 * parameters close to the truth. */
SM_TEST(sia_goodput_fit_recovers_tables) {
  static const char *const apps[] = {"toyconv", "toylm"};
  static const double truth[2][2][7] = {
      {{0.020, 0.0012, 0.060, 0.004, 0.012, 0.0015, 1.6},
       {0.008, 0.0003, 0.030, 0.002, 0.004, 0.0006, 2.2}},
      {{0.080, 0.030, 0.400, 0.020, 0.060, 0.010, 1.3},
       {0.030, 0.008, 0.200, 0.010, 0.020, 0.004, 1.8}}};
  sm__sia_tables *t = open_synthetic();
  sm__sia_obs o[400];

  for (int a = 0; a < 2; a++)
    for (int ty = 0; ty < 2; ty++) {
      const sm__sia_app *ap = app(t, apps[a]);
      int n = all_points(ap->g[ty], o, 400);
      sm__sia_perf p;
      sm__sia_fitinfo fi;
      sm__sia_perf_fit(o, n, &p, &fi);
      ASSERT(n > 40);
      ASSERT(rmsle(&p, o, n) < 0.02);
      ASSERT_EQ(fi.pinned, 0);
      /* The compute and gamma terms are well identified. */
      ASSERT_NEAR(p.p[SM__SIA_AC], truth[a][ty][0], 0.05 * truth[a][ty][0]);
      ASSERT_NEAR(p.p[SM__SIA_BC], truth[a][ty][1], 0.05 * truth[a][ty][1]);
      ASSERT_NEAR(p.p[SM__SIA_GAMMA], truth[a][ty][6], 0.1);
    }
  sm__sia_tables_free(t);
}

/* Points from one placement cannot identify the network terms: they are
 * pinned at the lower bound, and with one batch size alpha_c is pinned
 * at half the mean compute time, as in Pollux (the rule itself is tested
 * on points from a known model below). */
SM_TEST(sia_goodput_fit_pins_unidentified) {
  sm__sia_obs o[4] = {{1, 1, 32, 0.10, 0.0}, {1, 1, 64, 0.16, 0.0}};
  sm__sia_perf p;
  sm__sia_fitinfo fi;

  sm__sia_perf_fit(o, 2, &p, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_AN));
  ASSERT(fi.pinned & (1u << SM__SIA_BN));
  ASSERT(fi.pinned & (1u << SM__SIA_AR));
  ASSERT(fi.pinned & (1u << SM__SIA_BR));
  ASSERT(!(fi.pinned & (1u << SM__SIA_AC)));
  ASSERT_NEAR(sm__sia_perf_compute(&p, 32), 0.10, 0.002);
  ASSERT_NEAR(sm__sia_perf_compute(&p, 64), 0.16, 0.003);
  /* Prior: the network across nodes is no faster than inside one. */
  ASSERT(p.p[SM__SIA_AN] >= p.p[SM__SIA_AR] * 1.1 - 1e-15);

  /* One batch size. */
  o[0] = (sm__sia_obs){1, 1, 32, 0.10, 0.0};
  o[1] = (sm__sia_obs){1, 2, 32, 0.13, 0.03};
  sm__sia_perf_fit(o, 2, &p, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_AC));
  ASSERT_NEAR(p.p[SM__SIA_AC], (0.10 + 0.10) / 2 / 2, 1e-12);
  /* Intra-node GPUs were seen (2), but no more than 2: slopes pinned. */
  ASSERT(!(fi.pinned & (1u << SM__SIA_AR)));
  ASSERT(fi.pinned & (1u << SM__SIA_BR));
  ASSERT_NEAR(sm__sia_perf_step(&p, 1, 2, 32, 0), 0.13, 0.005);

  /* Degenerate input: a step without compute time still fits. */
  o[0] = (sm__sia_obs){1, 1, 8, 0.05, 0.06};
  sm__sia_perf_fit(o, 1, &p, &fi);
  for (int k = 0; k < SM__SIA_NPARAM; k++)
    ASSERT(isfinite(p.p[k]) && p.p[k] > 0);
}

/* The fit in the parameters themselves (sia.fit=linear, how Pollux's and
 * Sia's L-BFGS-B moves) recovers the synthetic tables as the log-space
 * fit does.  Where the points cannot separate alpha_c from beta_c (per-GPU
 * batches that differ by a few percent, as a job's batch tuning leaves
 * them), identifiability by one distinct batch only (bsz_tol 1, the
 * artifact's test) leaves both free, and both fits end in the valley
 * with beta_c at its bound: compute time independent of the batch, so
 * twice the GPUs at half the batch gain nothing.  With the default
 * tolerance alpha_c is pinned and both fits say what the rule implies. */
SM_TEST(sia_goodput_fit_linear_space) {
  sm__sia_tables *t = open_synthetic();
  sm__sia_obs o[400];
  /* A large model on one, two and four GPUs of a node and two nodes of
   * four, the per-GPU batch tuned between 182 and 190. */
  static const sm__sia_obs valley[] = {
      {1, 1, 190, 0.800, 0.002}, {1, 2, 188, 0.815, 0.014},
      {1, 4, 185, 0.850, 0.010}, {2, 8, 182, 0.860, 0.020},
      {2, 8, 184, 0.866, 0.018}, {2, 8, 190, 0.885, 0.008}};
  const sm__sia_fitopts lin_exact = {0, 1.0}, log_exact = {1, 1.0};
  const sm__sia_fitopts lin_tol = {0, SM__SIA_BSZ_TOL};
  int nv = (int)SM_ARRAY_LEN(valley);
  sm__sia_perf lin, lg;
  sm__sia_fitinfo fi;

  for (int ty = 0; ty < 2; ty++) {
    int n = all_points(app(t, "toyconv")->g[ty], o, 400);
    sm__sia_perf_fit_opt(o, n, &lin_tol, &lin, &fi);
    ASSERT(rmsle(&lin, o, n) < 0.02);
    ASSERT(fi.iterations > 0);
    ASSERT_EQ(fi.pinned, 0);
  }
  sm__sia_perf_fit_opt(valley, nv, &lin_exact, &lin, &fi);
  ASSERT(!(fi.pinned & (1u << SM__SIA_AC)));
  sm__sia_perf_fit_opt(valley, nv, &log_exact, &lg, &fi);
  ASSERT(!(fi.pinned & (1u << SM__SIA_AC)));
  ASSERT(rmsle(&lin, valley, nv) < 0.05);
  ASSERT(rmsle(&lg, valley, nv) < 0.05);
  /* Either way half the per-GPU batch computes as long. */
  ASSERT(sm__sia_perf_compute(&lg, 93) > 0.9 * sm__sia_perf_compute(&lg, 186));
  ASSERT(sm__sia_perf_compute(&lin, 93) >
         0.9 * sm__sia_perf_compute(&lin, 186));
  /* Batches within 10 %: alpha_c is pinned, and both fits say what the
   * rule implies, half of the compute time per sample. */
  sm__sia_perf_fit_opt(valley, nv, &lin_tol, &lin, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_AC));
  sm__sia_perf_fit(valley, nv, &lg, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_AC));
  ASSERT_NEAR(lin.p[SM__SIA_AC], lg.p[SM__SIA_AC], 1e-12);
  for (int k = 0; k < 2; k++) {
    const sm__sia_perf *q = k ? &lin : &lg;
    double r = sm__sia_perf_compute(q, 93) / sm__sia_perf_compute(q, 186);
    if (!(r > 0.72 && r < 0.78))
      SM_FAIL_AT("%s: compute(93) / compute(186) = %.3f", k ? "lin" : "log", r);
  }
  sm__sia_tables_free(t);
}

/* ==== Identifiability: points from a known model ==== */

static const sm__sia_perf known = {
    {0.050, 0.004, 0.080, 0.006, 0.020, 0.003, 1.5}};

/* The point a job running nodes x replicas at per-GPU batch bsz reports
 * under the known model. */
static sm__sia_obs point(int nodes, int replicas, int bsz) {
  sm__sia_obs o;
  double c = sm__sia_perf_compute(&known, bsz);
  o.nodes = nodes;
  o.replicas = replicas;
  o.bsz = bsz;
  o.step = sm__sia_perf_step(&known, nodes, replicas, bsz, 0);
  o.sync = o.step - c;
  return o;
}

/* Points of every placement (nodes, GPUs pairs) at every batch. */
static int grid(const int (*pl)[2], size_t npl, const int *bs, size_t nbs,
                sm__sia_obs *o) {
  int n = 0;
  for (size_t i = 0; i < npl; i++)
    for (size_t k = 0; k < nbs; k++)
      o[n++] = point(pl[i][0], pl[i][1], bs[k]);
  return n;
}

/* Enough placements and batches identify every parameter: the fit finds
 * the model within 2 % and predicts an unseen placement within 2 %. */
SM_TEST(sia_goodput_fit_identified_model) {
  static const int pl[][2] = {{1, 1}, {1, 2},  {1, 4}, {2, 2},
                              {2, 8}, {3, 12}, {4, 16}};
  static const int bs[] = {32, 64, 128};
  sm__sia_obs o[32];
  sm__sia_perf p;
  sm__sia_fitinfo fi;
  int n = grid(pl, SM_ARRAY_LEN(pl), bs, SM_ARRAY_LEN(bs), o);

  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT_EQ(fi.pinned, 0);
  ASSERT_EQ(fi.used, n);
  ASSERT(rmsle(&p, o, n) < 0.005);
  for (int k = 0; k < SM__SIA_NPARAM; k++)
    if (fabs(p.p[k] - known.p[k]) > 0.02 * known.p[k])
      SM_FAIL_AT("parameter %d: %g, truth %g", k, p.p[k], known.p[k]);
  {
    double s = sm__sia_perf_step(&p, 6, 24, 96, 1);
    double t = sm__sia_perf_step(&known, 6, 24, 96, 1);
    ASSERT_NEAR(s, t, 0.02 * t);
  }
}

/* One local batch (every per-GPU batch within 10 %, as batch tuning on a
 * growing job leaves them): alpha_c is pinned at half the mean compute
 * time and beta_c carries the rest, so half the per-GPU batch computes
 * in about 3/4 of the time and 16 GPUs beat 8 (not the bound beta_c ->
 * 1e-8, under which compute time ignores the batch and 16 GPUs gain
 * nothing).  Points at another batch free alpha_c again. */
SM_TEST(sia_goodput_fit_one_local_batch) {
  static const int pl[][3] = {
      {1, 1, 200}, {1, 2, 197}, {1, 4, 194}, {2, 8, 192}, {2, 8, 196}};
  const sm__sia_fitopts exact = {1, 1.0};
  sm__sia_obs o[16];
  sm__sia_perf p;
  sm__sia_fitinfo fi;
  double cmean = 0, bmean = 0, r8, r16;
  int n = 0;

  for (size_t i = 0; i < SM_ARRAY_LEN(pl); i++) {
    o[n] = point(pl[i][0], pl[i][1], pl[i][2]);
    cmean += o[n].step - o[n].sync;
    bmean += o[n].bsz;
    n++;
  }
  cmean /= n;
  bmean /= n;
  ASSERT(sm__sia_perf_unidentified(o, n, SM__SIA_BSZ_TOL) & (1u << SM__SIA_AC));
  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_AC));
  ASSERT_NEAR(p.p[SM__SIA_AC], cmean / 2, 1e-12);
  /* beta_c: the other half of the mean compute time per sample. */
  ASSERT_NEAR(p.p[SM__SIA_BC], cmean / 2 / bmean, 0.02 * cmean / 2 / bmean);
  ASSERT(p.p[SM__SIA_BC] > 1e-4);
  ASSERT_NEAR(sm__sia_perf_compute(&p, 98) / sm__sia_perf_compute(&p, 196),
              0.75, 0.01);
  /* Throughput: 4 nodes of 4 at per-GPU 98 against 2 nodes at 196. */
  r8 = 8 * 196 / sm__sia_perf_step(&p, 2, 8, 196, 0);
  r16 = 16 * 98 / sm__sia_perf_step(&p, 4, 16, 98, 0);
  if (!(r16 > 1.2 * r8))
    SM_FAIL_AT("16 GPUs %.1f samples/s, 8 GPUs %.1f", r16, r8);
  /* The same points with the exact test (one distinct batch): free. */
  ASSERT(
      !(sm__sia_perf_unidentified(o, n, exact.bsz_tol) & (1u << SM__SIA_AC)));
  /* A point at half the batch identifies alpha_c: unpinned, found. */
  o[n++] = point(1, 4, 98);
  o[n++] = point(2, 8, 100);
  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT(!(fi.pinned & (1u << SM__SIA_AC)));
  ASSERT_NEAR(p.p[SM__SIA_AC], known.p[SM__SIA_AC], 0.02 * known.p[SM__SIA_AC]);
  ASSERT_NEAR(p.p[SM__SIA_BC], known.p[SM__SIA_BC], 0.02 * known.p[SM__SIA_BC]);
}

/* No multi-node point: the inter-node terms are pinned and then raised
 * to 1.1 times the fitted intra-node ones, so two nodes are predicted
 * no faster than one; the intra-node terms are fitted.  One intra-node
 * GPU count cannot separate alpha_r from beta_r: beta_r is pinned. */
SM_TEST(sia_goodput_fit_no_multi_node) {
  static const int pl[][2] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}};
  static const int bs[] = {48, 96};
  sm__sia_obs o[16];
  sm__sia_perf p;
  sm__sia_fitinfo fi;
  int n = grid(pl, SM_ARRAY_LEN(pl), bs, SM_ARRAY_LEN(bs), o);

  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT_EQ(fi.pinned, (1u << SM__SIA_AN) | (1u << SM__SIA_BN));
  ASSERT_NEAR(p.p[SM__SIA_AR], known.p[SM__SIA_AR], 0.02 * known.p[SM__SIA_AR]);
  ASSERT_NEAR(p.p[SM__SIA_BR], known.p[SM__SIA_BR], 0.02 * known.p[SM__SIA_BR]);
  ASSERT_NEAR(p.p[SM__SIA_AN], 1.1 * p.p[SM__SIA_AR], 1e-12);
  ASSERT_NEAR(p.p[SM__SIA_BN], 1.1 * p.p[SM__SIA_BR], 1e-12);
  for (int r = 2; r <= 32; r *= 2)
    ASSERT(sm__sia_perf_step(&p, 2, r, 64, 0) >
           sm__sia_perf_step(&p, 1, r, 64, 0));
  /* One GPU count inside a node (4): beta_r is pinned, alpha_r fitted. */
  n = 0;
  o[n++] = point(1, 1, 64);
  o[n++] = point(1, 4, 64);
  o[n++] = point(1, 4, 128);
  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_BR));
  ASSERT(!(fi.pinned & (1u << SM__SIA_AR)));
  ASSERT_NEAR(sm__sia_perf_step(&p, 1, 4, 96, 0),
              sm__sia_perf_step(&known, 1, 4, 96, 0),
              0.02 * sm__sia_perf_step(&known, 1, 4, 96, 0));
  /* Multi-node points at one GPU count: beta_n pinned, alpha_n fitted. */
  o[n++] = point(2, 8, 64);
  o[n++] = point(2, 8, 128);
  sm__sia_perf_fit(o, n, &p, &fi);
  ASSERT(fi.pinned & (1u << SM__SIA_BN));
  ASSERT(!(fi.pinned & (1u << SM__SIA_AN)));
}

static void finite_model(const sm__sia_perf *p) {
  for (int k = 0; k < SM__SIA_NPARAM; k++)
    if (!(isfinite(p->p[k]) && p->p[k] > 0))
      SM_FAIL_AT("parameter %d is %g", k, p->p[k]);
  for (int r = 1; r <= 64; r *= 2) {
    double s = sm__sia_perf_step(p, (r + 3) / 4, r, 64, 1);
    if (!(isfinite(s) && s > 0))
      SM_FAIL_AT("step on %d GPUs is %g", r, s);
  }
}

/* Malformed and degenerate points end in a defined model: invalid points
 * (zero or negative sizes, NaN or infinite times, zero step) are left
 * out; without a valid one the prior model comes back, flagged. */
SM_TEST(sia_goodput_fit_degenerate) {
  sm__sia_obs o[130];
  sm__sia_perf p;
  sm__sia_fitinfo fi;
  sm__sia_fitopts lin = {0, SM__SIA_BSZ_TOL};

  sm__sia_perf_fit(NULL, 0, &p, &fi);
  ASSERT(fi.fallback);
  ASSERT_EQ(fi.used, 0);
  finite_model(&p);
  sm__sia_perf_fit(o, -3, &p, &fi);
  ASSERT(fi.fallback);
  o[0] = (sm__sia_obs){0, 0, 0, 0.0, 0.0};
  o[1] = (sm__sia_obs){1, 1, 64, NAN, 0.0};
  o[2] = (sm__sia_obs){1, 1, 64, 0.1, NAN};
  o[3] = (sm__sia_obs){1, 1, 64, INFINITY, 0.0};
  o[4] = (sm__sia_obs){1, 1, 64, -0.1, 0.0};
  o[5] = (sm__sia_obs){2, 1, 64, 0.1, 0.0}; /* more nodes than GPUs */
  o[6] = (sm__sia_obs){1, 1, -8, 0.1, 0.0};
  o[7] = (sm__sia_obs){1, 1, 64, 0.1, -1.0};
  for (int lg = 0; lg < 2; lg++) {
    if (lg)
      sm__sia_perf_fit(o, 8, &p, &fi);
    else
      sm__sia_perf_fit_opt(o, 8, &lin, &p, &fi);
    ASSERT(fi.fallback);
    ASSERT_EQ(fi.used, 0);
    finite_model(&p);
  }
  /* One valid point among them: it alone is fitted, alpha_c pinned. */
  o[8] = (sm__sia_obs){1, 1, 64, 0.2, 0.0};
  sm__sia_perf_fit(o, 9, &p, &fi);
  ASSERT(!fi.fallback);
  ASSERT_EQ(fi.used, 1);
  ASSERT_NEAR(p.p[SM__SIA_AC], 0.1, 1e-12);
  ASSERT_NEAR(sm__sia_perf_step(&p, 1, 1, 64, 0), 0.2, 0.004);
  finite_model(&p);
  /* A sync time above the step (no compute time): still a model. */
  o[0] = (sm__sia_obs){1, 2, 8, 0.05, 0.06};
  sm__sia_perf_fit(o, 1, &p, &fi);
  ASSERT_EQ(fi.used, 1);
  finite_model(&p);
  /* Many points (over the stack buffer), one in three invalid. */
  for (int i = 0; i < 130; i++) {
    o[i] = point(1 + i % 3, (1 + i % 3) * (1 + i % 4), 16 + i);
    if (i % 3 == 0)
      o[i].step = NAN;
  }
  sm__sia_perf_fit(o, 130, &p, &fi);
  ASSERT_EQ(fi.used, 130 - 44);
  ASSERT(rmsle(&p, &o[1], 2) < 0.02);
  finite_model(&p);
}

/* Refitting online: more points, better predictions of the unseen. */
SM_TEST(sia_goodput_fit_improves_with_points) {
  sm__sia_tables *t = open_synthetic();
  const sm__sia_app *a = app(t, "toyconv");
  sm__sia_obs all[400], seen[400];
  int n = all_points(a->g[0], all, 400), m = 0;
  double before, after;
  sm__sia_perf p;

  for (int i = 0; i < n; i++)
    if (all[i].replicas == 1)
      seen[m++] = all[i];
  sm__sia_perf_fit(seen, m, &p, NULL);
  before = rmsle(&p, all, n);
  /* What a job sees as Sia grows it: 2 and 4 GPUs in a node, then two
   * and three whole nodes. */
  for (int i = 0; i < n; i++)
    if ((all[i].nodes == 1 && (all[i].replicas == 2 || all[i].replicas == 4)) ||
        (all[i].nodes == 2 && all[i].replicas == 8) ||
        (all[i].nodes == 3 && all[i].replicas == 12))
      seen[m++] = all[i];
  sm__sia_perf_fit(seen, m, &p, NULL);
  after = rmsle(&p, all, n);
  if (!(after < before / 2 && after < 0.02))
    SM_FAIL_AT("RMSLE %.4f with one-GPU points, %.4f with more", before, after);
  sm__sia_tables_free(t);
}

SM_TEST(sia_goodput_efficiency_and_batch) {
  sm__sia_perf p = {{0.02, 0.001, 0.05, 0.004, 0.01, 0.001, 1.5}};
  sm__sia_bsz b, fixed, one;

  /* Efficiency: 1 at the initial batch, falls with larger batches, and
   * without noise (var 0) a larger batch buys nothing. */
  ASSERT_NEAR(sm__sia_efficiency(1, 10, 64, 64), 1.0, 1e-12);
  ASSERT(sm__sia_efficiency(1, 10, 64, 128) < 1.0);
  ASSERT(sm__sia_efficiency(1, 10, 64, 256) <
         sm__sia_efficiency(1, 10, 64, 128));
  ASSERT_NEAR(sm__sia_efficiency(1, 0, 64, 256), 0.25, 1e-12);
  /* Pure noise: efficiency stays 1 (linear scaling). */
  ASSERT_NEAR(sm__sia_efficiency(0, 5, 64, 256), 1.0, 1e-12);

  b = sm__sia_optimize(&p, 1, 10, 64, 2, 8, 1024, 16, 128, 1);
  ASSERT(b.goodput > 0);
  ASSERT(b.atomic >= 16 && b.atomic <= 128);
  /* No tuning: only the largest batch is tried. */
  fixed = sm__sia_optimize(&p, 1, 10, 64, 2, 8, 1024, 16, 128, 0);
  ASSERT_EQ(fixed.atomic * 8 * (fixed.accum + 1) >= 1024, 1);
  ASSERT(fixed.goodput <= b.goodput + 1e-9);
  /* One GPU above the initial batch accumulates at least once. */
  one = sm__sia_optimize(&p, 1, 1000, 64, 1, 1, 1024, 16, 1024, 0);
  ASSERT(one.accum >= 1);
  /* Nothing valid: a per-GPU range the batches cannot meet. */
  b = sm__sia_optimize(&p, 1, 10, 64, 1, 1, 64, 200, 300, 1);
  ASSERT_NEAR(b.goodput, 0, 0);
}

/* With Sia's own tables (../shared), the same fit on every placement of
 * every type: measurements are noisy (non-monotone step times), so the
 * model's error is larger than on the synthetic tables; it must still be
 * a usable model (RMSLE under 35 %) and match a fit from a different
 * start. */
SM_TEST(sia_goodput_fit_shared_tables) {
  static const char *const apps[] = {"cifar10", "bert", "deepspeech2", "yolov3",
                                     "imagenet"};
  const char *const ty[] = {"aws", "rtx", "dgx-ext"};
  const char *dir = getenv("SM_SHARED");
  char path[512];
  sm__sia_tables *t;
  sm_err err = {0};
  static sm__sia_obs o[4000];

  snprintf(path, sizeof(path), "%s/traces/sia/traces", dir ? dir : "../shared");
  if (access(path, R_OK) != 0)
    SM_SKIP("Sia's tables are not staged (../shared/traces/sia)");
  ASSERT_OK(sm__sia_tables_open(path, ty, 3, &t, &err));
  for (size_t a = 0; a < SM_ARRAY_LEN(apps); a++) {
    const sm__sia_app *ap = app(t, apps[a]);
    for (int k = 0; k < 3; k++) {
      int n = all_points(ap->g[k], o, 4000);
      sm__sia_perf p;
      double e;
      sm__sia_perf_fit(o, n, &p, NULL);
      e = rmsle(&p, o, n);
      if (!(e < 0.35))
        SM_FAIL_AT("%s on %s: RMSLE %.3f", apps[a], ty[k], e);
    }
  }
  sm__sia_tables_free(t);
}
