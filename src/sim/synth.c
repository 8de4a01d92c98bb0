/* synth.c - synthetic traces calibrated to published per-cluster
 * summaries, standing in for the Helios and Acme job logs that are not
 * available here.  Every trace made here is marked synthetic, and its
 * notes say what it was calibrated to and what came out.
 *
 * The model (also in docs/simulator.md):
 *   arrivals   Poisson at the published GPU-job rate (jobs / span);
 *   duration   log-normal with the published median and mean run time of
 *              GPU jobs (sigma = sqrt(2 ln(mean / median))), capped at the
 *              published maximum (30 days where none is published); the
 *              variance is split between a per-template part and a
 *              per-job part so that repeated (user, name) pairs carry
 *              information for history-based estimators;
 *   GPUs       1 GPU with probability 0.6 (the published medians are 1),
 *              otherwise a power of two up to the published maximum with
 *              geometric weights solved so the mean matches the
 *              published mean; fixed per template;
 *   users      Zipf-distributed users, each with Zipf-distributed job
 *              names (templates);
 *   end state  drawn with the published completion / cancel / fail
 *              shares of GPU jobs.
 * Queue times are outputs of scheduling, not inputs: the published ones
 * are quoted in the notes for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define TEMPLATES_PER_USER 12
#define DEFAULT_MAX_RUN (30.0 * 86400.0)

typedef struct calib {
  const char *name;   /* cluster */
  const char *source; /* where the figures come from */
  int gpus;           /* GPUs in the cluster */
  double days;        /* span of the published trace */
  double jobs;        /* GPU jobs in that span */
  double avg_run;     /* mean GPU-job run time, s */
  double med_run;     /* median, s */
  double max_run;     /* maximum, s (0: unknown) */
  double avg_gpu;     /* mean GPUs per GPU job */
  int max_gpu;        /* largest GPU count (0: unknown) */
  double p_done;      /* completion share of GPU jobs */
  double p_cancel;    /* cancel share */
  double p_fail;      /* failure share */
  double avg_queue;   /* published mean queue time, s */
  double med_queue;   /* published median queue time, s */
} calib;

/* Figures of helios/helios_cluster_summary.csv (HeliosArtifact, GPU-job
 * columns; spans from the 181 daily rows of the Helios GPU-count files)
 * and acme/cluster_summary.csv (AcmeTrace; GPU counts of Seren and Kalos
 * and their spans as stated in the Acme paper, NSDI'24). */
static const calib builtin[] = {
    {"venus", "helios_cluster_summary.csv (Helios, SC'21)", 1022, 181, 125303,
     13040.598, 204, 0, 6.736, 0, 0.526, 0.272, 0.202, 1253.288, 0},
    {"earth", "helios_cluster_summary.csv (Helios, SC'21)", 997, 181, 427148,
     5130.609, 234, 0, 2.101, 0, 0.735, 0.136, 0.129, 319.483, 0},
    {"saturn", "helios_cluster_summary.csv (Helios, SC'21)", 2080, 181, 698896,
     5252.927, 124, 0, 4.01, 0, 0.582, 0.272, 0.145, 611.561, 0},
    {"uranus", "helios_cluster_summary.csv (Helios, SC'21)", 2119, 181, 329117,
     9163.725, 280, 0, 4.038, 0, 0.607, 0.201, 0.192, 1949.182, 0},
    {"seren", "cluster_summary.csv (Acme, NSDI'24)", 2288, 184, 663813,
     1414.335, 122, 1209604, 5.68, 1024, 0.497, 0.075, 0.429, 445.984, 1},
    {"kalos", "cluster_summary.csv (Acme, NSDI'24)", 2416, 123, 19907, 1259.689,
     124, 625740, 26.77, 1024, 0.541, 0.062, 0.397, 214.179, 17}};

static const char *const names[] = {"venus", "earth", "saturn", "uranus",
                                    "seren", "kalos", NULL};

const char *const *sm_sim_synth_clusters(void) {
  return names;
}

void sm_sim_synth_opts_init(sm_sim_synth_opts *o) {
  memset(o, 0, sizeof(*o));
  o->days = 7;
  o->seed = 1;
}

/* Reads the row of cluster c->name from a summary CSV in either layout,
 * overriding the figures it has. */
static int read_calibration(calib *c, const char *path, sm_err *err) {
  sm__lsrc l;
  char *line, *f[SM__CSV_MAX_FIELDS], *hdr[SM__CSV_MAX_FIELDS];
  char hbuf[8192];
  size_t len;
  int rc, nh = 0, found = 0;

  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0)
    return rc;
  while ((rc = sm__lsrc_next(&l, &line, &len, err)) == 1) {
    int nf = sm__csv_split(line, f, SM__CSV_MAX_FIELDS);
    if (nf < 0) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: malformed CSV row", path,
                      l.lineno);
      break;
    }
    if (nh == 0) {
      size_t off = 0;
      for (int i = 0; i < nf; i++) {
        size_t n = strlen(f[i]) + 1;
        if (off + n > sizeof(hbuf)) {
          nf = i;
          break;
        }
        memcpy(hbuf + off, f[i], n);
        hdr[i] = hbuf + off;
        off += n;
      }
      nh = nf;
      continue;
    }
    if (nf < 1 || strcasecmp(f[0], c->name) != 0)
      continue;
    found = 1;
    for (int i = 1; i < nf && i < nh; i++) {
      double v;
      const char *k = hdr[i];
      if (sm_parse_double(f[i], &v) != 0)
        continue;
      if (strcmp(k, "gpu_num") == 0)
        c->gpus = (int)v;
      else if (strcmp(k, "gpu_job_num") == 0)
        c->jobs = v;
      else if (strcmp(k, "avg_run_time_gpu") == 0)
        c->avg_run = v;
      else if (strcmp(k, "med_run_time_gpu") == 0)
        c->med_run = v;
      else if (strcmp(k, "max_run_time_gpu") == 0)
        c->max_run = v;
      else if (strcmp(k, "avg_gpu_num") == 0)
        c->avg_gpu = v;
      else if (strcmp(k, "max_gpu") == 0)
        c->max_gpu = (int)v;
      else if (strcmp(k, "complete_rate_gpu") == 0)
        c->p_done = v;
      else if (strcmp(k, "cancel_rate_gpu") == 0)
        c->p_cancel = v;
      else if (strcmp(k, "fail_rate_gpu") == 0)
        c->p_fail = v;
      else if (strcmp(k, "avg_que_time_gpu") == 0)
        c->avg_queue = v;
      else if (strcmp(k, "med_que_time_gpu") == 0)
        c->med_queue = v;
    }
    break;
  }
  sm__lsrc_close(&l);
  if (rc < 0)
    return rc;
  if (!found)
    return sm_err_set(err, SM_ENOTFOUND, "%s: no row for cluster '%s'", path,
                      c->name);
  if (c->jobs <= 0 || c->avg_run <= 0 || c->med_run <= 0 || c->avg_gpu < 1 ||
      c->gpus < 1)
    return sm_err_set(err, SM_EPARSE,
                      "%s: the row of '%s' lacks positive job count, run "
                      "times or GPU figures",
                      path, c->name);
  return 0;
}

/* Mean GPU count of the mix for geometric ratio q. */
static double mix_mean(double q, int kmax, double p1) {
  double w = 0, m = 0;

  for (int k = 1; k <= kmax; k++) {
    double x = pow(q, k);
    w += x;
    m += x * ldexp(1.0, k);
  }
  return p1 + (1 - p1) * m / w;
}

/* Fills cdf[0..kmax] of the GPU mix (sizes 2^k). */
static void gpu_mix(double avg, int maxg, double *cdf, int *kmax_out) {
  int kmax = 0;
  double p1 = 0.6, lo = 1e-3, hi = 1e3, q, w = 0, acc;

  while (kmax < 20 && ldexp(1.0, kmax + 1) <= maxg)
    kmax++;
  *kmax_out = kmax;
  if (kmax == 0) {
    cdf[0] = 1;
    return;
  }
  for (int it = 0; it < 200; it++) {
    q = sqrt(lo * hi);
    if (mix_mean(q, kmax, p1) < avg)
      lo = q;
    else
      hi = q;
  }
  q = sqrt(lo * hi);
  for (int k = 1; k <= kmax; k++)
    w += pow(q, k);
  acc = p1;
  cdf[0] = acc;
  for (int k = 1; k <= kmax; k++) {
    acc += (1 - p1) * pow(q, k) / w;
    cdf[k] = acc;
  }
  cdf[kmax] = 1;
}

/* Zipf draw over 1..n with exponent 1.1 by inversion of a table. */
static int zipf(const double *cdf, int n, double u) {
  int lo = 0, hi = n - 1;

  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (cdf[mid] < u)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static double *zipf_table(int n) {
  double *c = sm_malloc((size_t)n * sizeof(double)), acc = 0;

  if (c == NULL)
    return NULL;
  for (int i = 0; i < n; i++) {
    acc += 1.0 / pow(i + 1, 1.1);
    c[i] = acc;
  }
  for (int i = 0; i < n; i++)
    c[i] /= acc;
  return c;
}

typedef struct tmpl {
  const char *user; /* user name */
  const char *name; /* job name */
  double mu;        /* log-duration centre */
  int gpus;         /* GPU count */
} tmpl;

/* A generator at work. */
typedef struct gen {
  calib c;                       /* the figures it is calibrated to */
  const sm_sim_synth_opts *o;    /* options */
  sm_sim_trace *t;               /* the trace being made */
  size_t n;                      /* jobs to make */
  int users;                     /* users drawn from (Zipf) */
  double *ucdf, *tcdf;           /* Zipf tables: users, templates per user */
  tmpl *tp;                      /* templates, users x TEMPLATES_PER_USER */
  double gcdf[24];               /* GPU count mix */
  int kmax;                      /* its largest power of two */
  double sigma, st, sj;          /* log-duration spread: all, per template,
                                    per job */
  double cap;                    /* longest run time */
  double rate;                   /* submissions per second */
  double now;                    /* time of the last submission */
  double sum_run, sum_gpu, gsec; /* over the jobs made */
  double *runs;                  /* their run times */
  sm_rng rng;                    /* the draws */
} gen;

/* The calibration (built in, or read from o->calibration) and what
 * follows from it. */
static int gen_setup(gen *g, const char *cluster, sm_err *err) {
  const calib *b = NULL;
  const sm_sim_synth_opts *o = g->o;
  int rc;

  for (size_t i = 0; i < SM_ARRAY_LEN(builtin); i++)
    if (strcasecmp(cluster, builtin[i].name) == 0)
      b = &builtin[i];
  if (b == NULL)
    return sm_err_set(err, SM_EINVAL,
                      "unknown synthetic cluster '%.40s' (venus, earth, "
                      "saturn, uranus, seren, kalos)",
                      cluster);
  g->c = *b;
  if (o->calibration != NULL &&
      (rc = read_calibration(&g->c, o->calibration, err)) != 0)
    return rc;
  if (!(o->days > 0) && o->jobs == 0)
    return sm_err_set(err, SM_EINVAL, "synthetic: days must be > 0");
  g->rate = g->c.jobs / (g->c.days * 86400.0);
  g->n = o->jobs ? o->jobs : (size_t)llround(g->rate * o->days * 86400.0);
  if (g->n < 1)
    g->n = 1;
  if (g->n > 20000000)
    return sm_err_set(err, SM_ELIMIT, "synthetic: more than 20M jobs");
  g->sigma = g->c.avg_run > g->c.med_run
                 ? sqrt(2 * log(g->c.avg_run / g->c.med_run))
                 : 0.5;
  g->st = g->sigma * sqrt(0.7);
  g->sj = g->sigma * sqrt(0.3);
  g->cap = g->c.max_run > 0 ? g->c.max_run : DEFAULT_MAX_RUN;
  gpu_mix(g->c.avg_gpu,
          g->c.max_gpu > 0 ? SM_MIN(g->c.max_gpu, g->c.gpus) : g->c.gpus / 2,
          g->gcdf, &g->kmax);
  g->users = (int)SM_MIN(100000.0, SM_MAX(8.0, (double)g->n / 40.0));
  return 0;
}

/* Template ti of user ui, made on first use with its own seeded draws. */
static tmpl *template_of(gen *g, int ui, int ti, sm_err *err) {
  tmpl *k = &g->tp[(size_t)ui * TEMPLATES_PER_USER + ti];
  sm_rng kr;
  char tmp[48];
  double u;
  int gi = 0;

  if (k->user != NULL)
    return k;
  sm_rng_seed(&kr, g->o->seed ^ sm_hash_mix(((uint64_t)ui << 8) | ti));
  snprintf(tmp, sizeof(tmp), "u%04d", ui);
  k->user = sm_arena_strdup(&g->t->arena, tmp);
  snprintf(tmp, sizeof(tmp), "u%04d-job%02d", ui, ti);
  k->name = sm_arena_strdup(&g->t->arena, tmp);
  if (k->user == NULL || k->name == NULL) {
    k->user = NULL;
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  k->mu = log(g->c.med_run) + g->st * sm_rng_normal(&kr);
  u = sm_rng_uniform(&kr);
  while (gi < g->kmax && g->gcdf[gi] < u)
    gi++;
  k->gpus = 1 << gi;
  return k;
}

/* Job i: its submission after the last, its user's template, its run
 * time and end state. */
static int gen_job(gen *g, size_t i, sm_err *err) {
  const calib *c = &g->c;
  sm_sim_job j;
  double u = sm_rng_uniform(&g->rng), d;
  int ui = zipf(g->ucdf, g->users, sm_rng_uniform(&g->rng));
  int ti = zipf(g->tcdf, TEMPLATES_PER_USER, sm_rng_uniform(&g->rng));
  tmpl *k;
  char tmp[48];

  g->now += -log(1.0 - u) / g->rate;
  if ((k = template_of(g, ui, ti, err)) == NULL)
    return SM_ENOMEM;
  sm__job_defaults(&j);
  snprintf(tmp, sizeof(tmp), "s%zu", i + 1);
  j.id = sm_arena_strdup(&g->t->arena, tmp);
  if (j.id == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  j.user = k->user;
  j.name = k->name;
  j.submit = round(g->now);
  d = exp(k->mu + g->sj * sm_rng_normal(&g->rng));
  d = round(SM_MIN(SM_MAX(d, 1.0), g->cap));
  j.duration = d;
  j.gpus = j.trace_gpus = k->gpus;
  u = sm_rng_uniform(&g->rng) * (c->p_done + c->p_cancel + c->p_fail);
  j.end_state = u < c->p_done                 ? SM_SIM_END_COMPLETED
                : u < c->p_done + c->p_cancel ? SM_SIM_END_CANCELED
                                              : SM_SIM_END_FAILED;
  g->runs[i] = d;
  g->sum_run += d;
  g->sum_gpu += j.gpus;
  g->gsec += d * j.gpus;
  return sm__trace_push(g->t, &j, 20000000, err);
}

/* What the trace is and how it compares with its calibration. */
static void gen_notes(gen *g) {
  const calib *c = &g->c;
  sm_sim_trace *t = g->t;
  double n = (double)g->n;

  sm__notes_add(&t->notes,
                "SYNTHETIC trace, not real jobs: %zu jobs over %.1f days "
                "calibrated to the published summary of %s (%s%s%s)",
                g->n, t->n ? t->jobs[t->n - 1].submit / 86400.0 : 0.0, c->name,
                c->source, g->o->calibration ? ", figures from " : "",
                g->o->calibration ? g->o->calibration : "");
  sm__notes_add(&t->notes,
                "calibration: %d GPUs, %.0f GPU jobs in %.0f days, run time "
                "median %.0f s mean %.0f s, %.2f GPUs per job, end states "
                "%.1f%% / %.1f%% / %.1f%% completed / canceled / failed",
                c->gpus, c->jobs, c->days, c->med_run, c->avg_run, c->avg_gpu,
                100 * c->p_done, 100 * c->p_cancel, 100 * c->p_fail);
  sm__notes_add(&t->notes,
                "generated: run time median %.0f s mean %.0f s (log-normal "
                "sigma %.2f, cap %.0f s), %.2f GPUs per job, offered load "
                "%.2f of %d GPUs",
                sm_median(g->runs, g->n), g->sum_run / n, g->sigma, g->cap,
                g->sum_gpu / n,
                g->gsec / (SM_MAX(1.0, g->now) * (double)c->gpus), c->gpus);
  sm__notes_add(&t->notes,
                "published queue time of GPU jobs for comparison: mean "
                "%.0f s, median %.0f s",
                c->avg_queue, c->med_queue);
}

int sm_sim_trace_synthetic(const char *cluster, const sm_sim_synth_opts *o,
                           sm_sim_trace **out, sm_err *err) {
  sm_sim_synth_opts def;
  gen g;
  char tname[64];
  int rc;

  if (o == NULL) {
    sm_sim_synth_opts_init(&def);
    o = &def;
  }
  memset(&g, 0, sizeof(g));
  g.o = o;
  if ((rc = gen_setup(&g, cluster, err)) != 0)
    return rc;
  snprintf(tname, sizeof(tname), "synthetic:%s", g.c.name);
  g.t = sm__trace_new(tname, SM_SIM_FMT_SYNTHETIC);
  g.ucdf = zipf_table(g.users);
  g.tcdf = zipf_table(TEMPLATES_PER_USER);
  g.tp = sm_calloc((size_t)g.users * TEMPLATES_PER_USER, sizeof(*g.tp));
  g.runs = sm_malloc(g.n * sizeof(double));
  if (g.t == NULL || g.ucdf == NULL || g.tcdf == NULL || g.tp == NULL ||
      g.runs == NULL)
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
  if (rc == 0) {
    g.t->synthetic = 1;
    g.t->calibrated_gpus = g.c.gpus;
    sm_rng_seed(&g.rng, o->seed);
  }
  for (size_t i = 0; i < g.n && rc == 0; i++)
    rc = gen_job(&g, i, err);
  if (rc == 0) {
    sm__trace_finish(g.t);
    gen_notes(&g);
  }
  sm_free(g.ucdf);
  sm_free(g.tcdf);
  sm_free(g.tp);
  sm_free(g.runs);
  if (rc != 0) {
    sm_sim_trace_free(g.t);
    return rc;
  }
  *out = g.t;
  return 0;
}
