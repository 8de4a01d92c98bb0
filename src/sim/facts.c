/* facts.c - where the semantic facts of a simulation come from, and the
 * simulated world they describe (each job's workload template, profile
 * and whether the Tracker can follow its log).
 *
 * The world is built from what a scheduler knows when a job is submitted
 * - user, job name, VC, GPUs, submit order, the model, dataset and batch
 * where the trace has them - and the run's seed, never from the job's
 * duration, end state or anything after its submission, so that no
 * answer can leak into the facts (the permutation test: shuffling
 * durations and end states among a trace's jobs changes no template, no
 * profile and no fingerprint).  It is the same for every source and
 * every policy of a comparison.
 *
 * Three sources, never mixed within a run, each named in its report:
 *
 *   history     the real history engine, online over the trace.  Each job
 *               is fingerprinted when it is submitted (sm_fingerprint) from
 *               what the trace gives - user, job name, VC, GPUs, and the
 *               model, dataset and batch where the trace has them - or,
 *               with a workload catalogue, from what the real extractor
 *               read in its template's repository and command.  The
 *               fingerprint is searched (exact top-k cosine, sm_index)
 *               among the jobs that have already ended, and the Advisor's
 *               rule (sm_estimate_compute: the plain mean of the completed
 *               matches, with its fallbacks) gives the answer.  A job is
 *               written back when it ends, with its end state, so an
 *               answer can only use outcomes known before the question
 *               (checked: every read compares the record's write time
 *               with the question's).
 *   calibrated  no history: each job is a hit with probability
 *               calibrated.hit (0.73) and its estimate is the true
 *               duration times e^N(0, s), where s makes a share
 *               calibrated.within (0.857) of the estimates fall within a
 *               factor of two (100 % relative error): the reference's
 *               measured module accuracy.  Seeded per job.
 *   oracle      an upper bound, never a default: the history engine over
 *               fingerprints of the outcome-based mapping (a job's
 *               template from its true GPU time, sm__wl_map_oracle), so
 *               the fingerprint encodes the answer; a hit also gets the
 *               job's own profile.
 *
 * The search keeps one index row per distinct fingerprint with the list
 * of its records in the order they were written, instead of one row per
 * record: trace jobs repeat the same fingerprint thousands of times.  The
 * answer is the same as a search over every record (the same scores, ties
 * broken by write order; tests compare it with sm_advise on a "mem:"
 * store), and once a fingerprint has top_k records of its own the answer
 * for it cannot change any more (no other fingerprint can score above an
 * identical one, later records lose ties), so it is kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/schedmate_int.h"
#include "sim/sim_int.h"

#define MAX_TOPK 64
#define EXTRA_PROTOS 8

/* One written-back job. */
typedef struct rec {
  double duration;  /* full-speed run time, s */
  double util;      /* SM utilisation, percent */
  double gmem_util; /* memory bandwidth utilisation, percent */
  double gmem;      /* memory, MiB */
  double submit;    /* its submission time */
  double written;   /* simulated time of the write-back */
  int state;        /* sm_end_state */
} rec;

/* One distinct fingerprint and the records that carry it. */
typedef struct proto {
  uint64_t h;    /* hash of the fingerprint's bytes */
  uint32_t *r;   /* record indices, in write order */
  int n, cap;    /* used / allocated */
  int frozen;    /* 1: ans is final */
  sm__fact ans;  /* the final answer for this fingerprint */
  double latest; /* latest write time among the records ans used */
} proto;

struct sm__facts {
  sm_sim *s;            /* the run */
  int mode;             /* SM__FACTS_* */
  int calibrated;       /* 1: calibrated mode */
  int top_k;            /* matches kept */
  float threshold;      /* minimum cosine */
  double cal_hit;       /* calibrated hit rate */
  double cal_within;    /* calibrated share within a factor of two */
  double cal_sigma;     /* derived log-error spread */
  double fail_rest;     /* fail.rest: work still needed after a fault */
  uint64_t seed;        /* run seed */
  sm__coloc *coloc;     /* profile tables */
  sm__wl *wl;           /* workload catalogue, or NULL */
  sm__jobenv *env;      /* per job */
  size_t njobs;         /* job count */
  sm_index *ix;         /* one row per proto */
  proto *protos;        /* distinct fingerprints */
  size_t np, capp;      /* used / allocated */
  uint32_t *slots;      /* hash table: proto index + 1, 0 empty */
  size_t nslots;        /* power of two */
  rec *recs;            /* written-back jobs */
  size_t nr, capr;      /* used / allocated */
  size_t queries, hits; /* questions and usable answers */
  size_t fb[SM_FALLBACK_UNAVAILABLE + 1]; /* fallbacks by reason */
  size_t searches;                        /* index searches */
  size_t frozen_answers;                  /* answers from a final fingerprint */
  size_t future_reads;    /* reads of later records (must stay 0) */
  size_t records_read;    /* records read by answers */
  double sum_abs_log_err; /* over hits with a known truth */
  size_t within2;         /* hits within a factor of two */
  char attrs[256];        /* what the fingerprints are made of */
};

static double uni(const sm__facts *f, uint64_t salt, uint64_t i) {
  return sm__job_uniform(f->seed, salt, i);
}

/* Inverse of the standard normal CDF (Acklam's rational approximation,
 * relative error below 1.2e-9), to turn calibrated.within into a
 * spread. */
static double norm_inv(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                             -2.759285104469687e+02, 1.383577518672690e+02,
                             -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                             -1.556989798598866e+02, 6.680131188771972e+01,
                             -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                             -2.400758277161838e+00, -2.549732539343734e+00,
                             4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                             2.445134137142996e+00, 3.754408661907416e+00};
  double q, r;

  if (p < 0.02425) {
    q = sqrt(-2 * log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q +
            c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - 0.02425)
    return -norm_inv(1 - p);
  q = p - 0.5;
  r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) *
         q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* ==== The world ==== */

/* Identity of a job's workload when the trace names it (user and job
 * name), else the job itself (its place in submission order). */
static void identity(const sm_sim_job *j, char *buf, size_t n) {
  if (j->user[0] || j->name[0])
    snprintf(buf, n, "%s\x1f%s", j->user, j->name);
  else
    snprintf(buf, n, "#%u", j->idx);
}

/* Names of the world's templates and profiles, kept for the run's
 * per-job output (run memory: the result keeps it). */
static int world_names(sm__facts *f, const char ***wl, const char ***pr) {
  int np = sm__coloc_count(f->coloc), nv = 0;

  *wl = NULL;
  *pr = sm_sim_alloc_mem(f->s, (size_t)np * sizeof(char *));
  if (*pr == NULL)
    return SM_ENOMEM;
  for (int i = 0; i < np; i++) {
    const sm__prof *p = sm__coloc_prof(f->coloc, i);
    char b[96];
    char *c;
    if (p->dataset[0])
      snprintf(b, sizeof(b), "%s/%s/%d%s", p->model, p->dataset, p->batch,
               p->amp ? "/amp" : "");
    else
      snprintf(b, sizeof(b), "%s", p->model);
    c = sm_sim_alloc_mem(f->s, strlen(b) + 1);
    if (c == NULL)
      return SM_ENOMEM;
    memcpy(c, b, strlen(b) + 1);
    (*pr)[i] = c;
  }
  if (f->wl == NULL)
    return 0;
  for (int t = 0; t < f->wl->n; t++)
    nv += f->wl->t[t].nv;
  *wl = sm_sim_alloc_mem(f->s, (size_t)nv * sizeof(char *));
  if (*wl == NULL)
    return SM_ENOMEM;
  nv = 0;
  for (int t = 0; t < f->wl->n; t++)
    for (int v = 0; v < f->wl->t[t].nv; v++) {
      char b[160];
      char *c;
      snprintf(b, sizeof(b), "%s/%d", f->wl->t[t].name, v);
      c = sm_sim_alloc_mem(f->s, strlen(b) + 1);
      if (c == NULL)
        return SM_ENOMEM;
      memcpy(c, b, strlen(b) + 1);
      (*wl)[nv++] = c;
    }
  return 0;
}

static int setup_env(sm__facts *f, sm_err *err) {
  const char **wlname, **prname;
  int *first = NULL;

  f->njobs = sm_sim_job_count(f->s);
  f->env = sm_calloc(f->njobs ? f->njobs : 1, sizeof(*f->env));
  if (f->env == NULL || world_names(f, &wlname, &prname) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  if (f->wl != NULL) {
    first = sm_sim_alloc_mem(f->s, (size_t)f->wl->n * sizeof(int));
    if (first == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    for (int t = 1; t < f->wl->n; t++)
      first[t] = first[t - 1] + f->wl->t[t - 1].nv;
  }
  for (size_t i = 0; i < f->njobs; i++) {
    sm_sim_job *j = sm_sim_job_at(f->s, i);
    sm__jobenv *e = &f->env[i];
    char id[256];
    identity(j, id, sizeof(id));
    e->tmpl = e->otmpl = -1;
    if (f->wl != NULL) {
      sm__wl_map(f->wl, id, f->seed, &e->tmpl, &e->variant);
      /* Jobs of a template run the same kind of model (its class of
       * profiles); which row is the job's own (batch, precision, input
       * pipeline) the template does not say. */
      e->prof = sm__coloc_for_job(f->coloc, j, id,
                                  sm__template_group(f->wl->t[e->tmpl].gclass),
                                  f->seed);
      if (f->mode == SM__FACTS_ORACLE)
        sm__wl_map_oracle(f->wl, j, id, f->seed, &e->otmpl, &e->ovariant);
      j->workload = wlname[first[e->tmpl] + e->variant];
    } else {
      e->prof = sm__coloc_for_job(f->coloc, j, id, -1, f->seed);
    }
    j->profile = prname[e->prof];
  }
  return 0;
}

/* ==== Fingerprints ==== */

/* Lower-cased copy of an attribute into buf, or NULL. */
static const char *attr_lower(const sm_sim_job *j, const char *k, char *buf,
                              size_t n) {
  const char *v = sm_sim_job_attr(j, k);
  size_t i = 0;

  if (v == NULL || *v == '\0')
    return NULL;
  for (; v[i] && i + 1 < n; i++)
    buf[i] = (char)(v[i] >= 'A' && v[i] <= 'Z' ? v[i] + 32 : v[i]);
  buf[i] = '\0';
  return buf;
}

/* The metadata SchedMate would have for j at its submission. */
static int job_meta(const sm__facts *f, const sm_sim_job *j, sm_meta *m) {
  const sm__jobenv *e = &f->env[j->idx];
  char b[128];
  const char *a;
  long long n;

  int t = f->mode == SM__FACTS_ORACLE ? e->otmpl : e->tmpl;
  int v = f->mode == SM__FACTS_ORACLE ? e->ovariant : e->variant;

  sm_meta_init(m);
  if (t >= 0) {
    if (sm_meta_copy(m, &f->wl->t[t].v[v].meta) != 0)
      return SM_ENOMEM;
    /* The trace says how many GPUs the job got; the template's command
     * was written for some other count. */
    sm_meta_unset(m, SM_META_NODES);
    if (j->nodes > 0)
      sm_meta_set_num(m, SM_META_NODES, j->nodes, "trace");
  } else {
    if ((a = attr_lower(j, "model", b, sizeof(b))) != NULL ||
        (a = attr_lower(j, "model_name", b, sizeof(b))) != NULL)
      sm_meta_set_str(m, SM_META_MODEL_NAME, a, "trace");
    if ((a = attr_lower(j, "dataset", b, sizeof(b))) != NULL)
      sm_meta_set_str(m, SM_META_DATASET, a, "trace");
    if ((a = sm_sim_job_attr(j, "batchsize")) != NULL &&
        sm_parse_i64(a, &n) == 0 && n > 0)
      sm_meta_set_num(m, SM_META_PER_DEVICE_BATCH_SIZE, (double)n, "trace");
    if (j->nodes > 0)
      sm_meta_set_num(m, SM_META_NODES, j->nodes, "trace");
  }
  sm_meta_set_num(m, SM_META_GPUS, j->gpus, "trace");
  return 0;
}

static int job_fp(const sm__facts *f, const sm_sim_job *j, float *fp) {
  sm_meta m;
  sm_fp_extra x;

  if (job_meta(f, j, &m) != 0) {
    sm_meta_release(&m);
    return SM_ENOMEM;
  }
  x.user = j->user;
  x.name = j->name;
  x.vc = j->vc_name;
  sm_fingerprint(&m, &x, fp);
  sm_meta_release(&m);
  return 0;
}

static uint64_t fp_hash(const float *fp) {
  uint64_t h = sm_hash64(fp, SM_FP_DIMS * sizeof(float), 0x1dea5ULL);
  return h ? h : 1;
}

static proto *proto_find(const sm__facts *f, const float *fp, uint64_t h) {
  size_t mask = f->nslots - 1;

  if (f->nslots == 0)
    return NULL;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint32_t v = f->slots[i];
    proto *p;
    if (v == 0)
      return NULL;
    p = &f->protos[v - 1];
    if (p->h == h &&
        memcmp(sm_index_row(f->ix, v - 1), fp, SM_FP_DIMS * sizeof(float)) == 0)
      return p;
  }
}

static int slots_put(uint32_t *slots, size_t nslots, uint64_t h, uint32_t v) {
  size_t mask = nslots - 1;

  for (size_t i = h & mask;; i = (i + 1) & mask)
    if (slots[i] == 0) {
      slots[i] = v;
      return 0;
    }
}

static proto *proto_add(sm__facts *f, const float *fp, uint64_t h) {
  if ((f->np + 1) * 2 > f->nslots) {
    size_t ns = f->nslots ? f->nslots * 2 : 1024;
    uint32_t *nsl = sm_calloc(ns, sizeof(uint32_t));
    if (nsl == NULL)
      return NULL;
    for (size_t i = 0; i < f->np; i++)
      slots_put(nsl, ns, f->protos[i].h, (uint32_t)i + 1);
    sm_free(f->slots);
    f->slots = nsl;
    f->nslots = ns;
  }
  if (f->np == f->capp) {
    size_t nc = f->capp ? f->capp * 2 : 256;
    proto *np = sm_realloc(f->protos, nc * sizeof(*np));
    if (np == NULL)
      return NULL;
    f->protos = np;
    f->capp = nc;
  }
  if (sm_index_add(f->ix, fp) != 0)
    return NULL;
  memset(&f->protos[f->np], 0, sizeof(proto));
  f->protos[f->np].h = h;
  slots_put(f->slots, f->nslots, h, (uint32_t)f->np + 1);
  return &f->protos[f->np++];
}

/* ==== Answers ==== */

typedef struct pick {
  uint32_t rec; /* record index */
  float score;  /* its cosine */
} pick;

static int by_rec(const void *a, const void *b) {
  uint32_t x = ((const pick *)a)->rec, y = ((const pick *)b)->rec;
  return x < y ? -1 : x > y;
}

/* Top-k records for fp, by score, ties by write order: the result of a
 * search over every record.  Returns the count, or -1 without memory. */
static int top_records(sm__facts *f, const float *fp, pick *out, int k) {
  sm_hit hits[MAX_TOPK + EXTRA_PROTOS];
  int want = k + EXTRA_PROTOS, n, got = 0;
  sm_hit *all = NULL;
  sm_hit *h = hits;

  if (f->np == 0)
    return 0;
  f->searches++;
  if ((size_t)want > f->np)
    want = (int)f->np;
  n = sm_index_search(f->ix, fp, want, -2.0f, h);
  if (n < 0)
    return -1;
  for (int i = 0; i < n && got < k;) {
    int g = i, start = got;
    /* A group of prototypes with the same score; if it may go on past
     * what the search returned, ask for everything. */
    while (g < n && h[g].score == h[i].score)
      g++;
    if (g == n && (size_t)n < f->np && h != all) {
      all = sm_malloc(f->np * sizeof(sm_hit));
      if (all == NULL)
        return -1;
      n = sm_index_search(f->ix, fp, (int)f->np, -2.0f, all);
      h = all;
      got = 0;
      i = 0;
      continue;
    }
    for (int q = i; q < g; q++) {
      const proto *p = &f->protos[h[q].row];
      for (int r = 0; r < p->n; r++) {
        pick pk = {p->r[r], h[q].score};
        /* Keep the group's earliest records: at most k - start. */
        if (got - start < k - start) {
          out[got++] = pk;
        } else {
          int worst = start;
          for (int z = start + 1; z < got; z++)
            if (out[z].rec > out[worst].rec)
              worst = z;
          if (pk.rec < out[worst].rec)
            out[worst] = pk;
          else
            break; /* records of a proto come in write order */
        }
      }
    }
    qsort(out + start, (size_t)(got - start), sizeof(pick), by_rec);
    i = g;
  }
  sm_free(all);
  return got;
}

/* The Advisor's answer from the selected records. */
static void answer(sm__facts *f, const pick *pk, int n, double now,
                   sm__fact *out, double *latest) {
  sm_record m[MAX_TOPK];
  float sc[MAX_TOPK];
  sm_advice a;
  sm_advise_opts o;
  int keep = 0;
  double gu = 0, gm = 0;
  int ng = 0;

  memset(out, 0, sizeof(*out));
  out->duration = out->util = out->gmem_util = out->gmem = NAN;
  *latest = -INFINITY;
  if (n == 0) {
    out->fallback = SM_FALLBACK_NO_MATCH;
    return;
  }
  while (keep < n && pk[keep].score >= f->threshold)
    keep++;
  if (keep == 0) {
    out->fallback = SM_FALLBACK_BELOW_THRESHOLD;
    return;
  }
  for (int i = 0; i < keep; i++) {
    const rec *r = &f->recs[pk[i].rec];
    sm_record_init(&m[i]);
    m[i].duration_s = r->duration;
    m[i].sm_util = r->util;
    m[i].end_state = (sm_end_state)r->state;
    m[i].submit_time = r->submit;
    sc[i] = pk[i].score > 1.0f ? 1.0f : pk[i].score;
    f->records_read++;
    if (r->written > now)
      f->future_reads++;
    if (r->written > *latest)
      *latest = r->written;
    if (r->state == SM_END_COMPLETED) {
      gu += r->gmem_util;
      gm += r->gmem;
      ng++;
    }
  }
  sm_advice_init(&a);
  a.matches = m;
  a.scores = sc;
  a.n_matches = keep;
  memset(&o, 0, sizeof(o));
  o.top_k = f->top_k;
  o.threshold = f->threshold;
  o.now = 1; /* no time decay: any positive value */
  sm_estimate_compute(&a, &o);
  out->fallback = a.fallback;
  if (a.est.valid) {
    out->hit = 1;
    out->duration = a.est.duration_s;
    out->util = a.est.sm_util;
    out->n = a.est.n;
    out->gmem_util = ng ? gu / ng : NAN;
    out->gmem = ng ? gm / ng : NAN;
  }
  sm_free(a.est.perf); /* none: the records carry no perf points */
}

static void ask_history(sm__facts *f, const sm_sim_job *j, sm__fact *out) {
  float fp[SM_FP_DIMS];
  pick pk[MAX_TOPK];
  uint64_t h;
  proto *p;
  double latest, now = sm_sim_now(f->s);
  int n, zero = 1;

  memset(out, 0, sizeof(*out));
  if (job_fp(f, j, fp) != 0) {
    out->fallback = SM_FALLBACK_UNAVAILABLE;
    return;
  }
  for (int i = 0; i < SM_FP_DIMS && zero; i++)
    zero = fp[i] == 0.0f;
  if (zero) {
    out->fallback = SM_FALLBACK_EXTRACT_FAILED;
    return;
  }
  h = fp_hash(fp);
  sm_sim_job_at(f->s, j->idx)->fingerprint = h;
  p = proto_find(f, fp, h);
  if (p != NULL && p->frozen) {
    f->frozen_answers++;
    *out = p->ans;
    f->records_read += (size_t)(out->n > 0 ? out->n : 0);
    if (p->latest > now)
      f->future_reads++;
    return;
  }
  n = top_records(f, fp, pk, f->top_k);
  if (n < 0) {
    out->fallback = SM_FALLBACK_UNAVAILABLE;
    return;
  }
  answer(f, pk, n, now, out, &latest);
  if (p != NULL && p->n >= f->top_k) {
    int own = 1;
    for (int i = 0; i < n && own; i++) {
      own = 0;
      for (int r = 0; r < f->top_k && !own; r++)
        own = p->r[r] == pk[i].rec;
    }
    if (own && n == f->top_k) {
      p->frozen = 1;
      p->ans = *out;
      p->latest = latest;
    }
  }
}

static void ask_calibrated(sm__facts *f, const sm_sim_job *j, sm__fact *out) {
  const sm__jobenv *e = &f->env[j->idx];
  double u1, u2, eps;
  const sm__prof *p;
  int row = e->prof;

  memset(out, 0, sizeof(*out));
  out->duration = out->util = out->gmem_util = out->gmem = NAN;
  if (uni(f, 301, j->idx) >= f->cal_hit) {
    out->fallback = SM_FALLBACK_NO_MATCH;
    return;
  }
  u1 = uni(f, 302, j->idx);
  u2 = uni(f, 303, j->idx);
  if (u1 <= 0)
    u1 = 0x1.0p-53;
  eps = f->cal_sigma * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
  out->hit = 1;
  out->n = f->top_k;
  out->duration = j->duration * exp(eps);
  if (out->duration < 1)
    out->duration = 1;
  /* The matched profile is the job's own when the estimate is within a
   * factor of two, else another workload's. */
  if (fabs(eps) > log(2.0))
    row = (int)(uni(f, 304, j->idx) * sm__coloc_count(f->coloc));
  p = sm__coloc_prof(f->coloc, row);
  out->util = p->util;
  out->gmem_util = p->gmem_util;
  out->gmem = p->gmem;
}

void sm__facts_ask(sm__facts *f, const sm_sim_job *j, sm__fact *out) {
  f->queries++;
  if (f->calibrated)
    ask_calibrated(f, j, out);
  else
    ask_history(f, j, out);
  if (out->hit && f->mode == SM__FACTS_ORACLE) {
    /* The upper bound knows the job's own profile too. */
    const sm__prof *p = sm__coloc_prof(f->coloc, f->env[j->idx].prof);
    out->util = p->util;
    out->gmem_util = p->gmem_util;
    out->gmem = p->gmem;
  }
  if (out->hit) {
    double e = fabs(log(out->duration / (j->duration > 1 ? j->duration : 1)));
    f->hits++;
    f->sum_abs_log_err += e;
    f->within2 += e <= log(2.0) + 1e-12;
  } else if (out->fallback >= 0 && out->fallback <= SM_FALLBACK_UNAVAILABLE) {
    f->fb[out->fallback]++;
  }
}

void sm__facts_done(sm__facts *f, const sm_sim_job *j, double work, int state) {
  float fp[SM_FP_DIMS];
  uint64_t h;
  proto *p;
  rec *r;
  const sm__prof *pr = sm__coloc_prof(f->coloc, f->env[j->idx].prof);

  if (f->calibrated || job_fp(f, j, fp) != 0)
    return;
  h = fp_hash(fp);
  p = proto_find(f, fp, h);
  if (p == NULL && (p = proto_add(f, fp, h)) == NULL)
    goto oom;
  if (f->nr == f->capr) {
    size_t nc = f->capr ? f->capr * 2 : 1024;
    rec *nr = sm_realloc(f->recs, nc * sizeof(*nr));
    if (nr == NULL)
      goto oom;
    f->recs = nr;
    f->capr = nc;
  }
  if (p->n == p->cap) {
    int nc = p->cap ? p->cap * 2 : 4;
    uint32_t *np = sm_realloc(p->r, (size_t)nc * sizeof(uint32_t));
    if (np == NULL)
      goto oom;
    p->r = np;
    p->cap = nc;
  }
  r = &f->recs[f->nr];
  r->duration = work;
  r->util = pr->util;
  r->gmem_util = pr->gmem_util;
  r->gmem = pr->gmem;
  r->submit = j->submit;
  r->written = sm_sim_now(f->s);
  r->state = state;
  p->r[p->n++] = (uint32_t)f->nr++;
  return;
oom:
  sm_sim_note(f->s, "history: out of memory writing job %s back", j->id);
}

void sm__facts_done_job(sm__facts *f, const sm_sim_job *j, int diagnosed) {
  int infra = sm_sim_job_infra(f->s, j), out;
  double work = j->duration;

  switch (j->final_state) {
  case SM_SIM_END_COMPLETED:
    out = SM_END_COMPLETED;
    if (infra && j->restarts > 0)
      work *= 1 + f->fail_rest;
    break;
  case SM_SIM_END_CANCELED:
    out = SM_END_CANCELED;
    break;
  default:
    out = !diagnosed ? SM_END_FAILED
          : infra    ? SM_END_FAILED_INFRA
                     : SM_END_FAILED_USER;
  }
  sm__facts_done(f, j, work, out);
}

/* ==== Set-up and report ==== */

int sm__facts_open(sm_sim *s, sm__facts **out, sm_err *err) {
  const char *mode = sm_sim_param_str(s, "facts");
  const char *wl = sm_sim_param_str(s, "workloads");
  sm__facts *f = sm_calloc(1, sizeof(*f));
  double k, t;
  int rc;

  if (f == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  f->s = s;
  f->seed = sm_sim_config_of(s)->seed;
  if (mode == NULL || strcmp(mode, "history") == 0) {
    f->mode = SM__FACTS_HISTORY;
  } else if (strcmp(mode, "calibrated") == 0) {
    f->mode = SM__FACTS_CALIBRATED;
  } else if (strcmp(mode, "oracle") == 0) {
    f->mode = SM__FACTS_ORACLE;
  } else {
    sm_free(f);
    return sm_err_set(err, SM_EINVAL,
                      "facts: expected history, calibrated or oracle, got "
                      "'%.40s'",
                      mode);
  }
  f->calibrated = f->mode == SM__FACTS_CALIBRATED;
  if (f->mode == SM__FACTS_ORACLE && (wl == NULL || *wl == '\0')) {
    sm_free(f);
    return sm_err_set(err, SM_EINVAL,
                      "facts=oracle maps jobs onto workload templates by "
                      "their true GPU time: it needs a catalogue "
                      "(--workloads DIR)");
  }
  k = sm_sim_param_num(s, "facts.top_k", 3);
  t = sm_sim_param_num(s, "facts.threshold", 0.95);
  f->cal_hit = sm_sim_param_num(s, "calibrated.hit", 0.73);
  f->cal_within = sm_sim_param_num(s, "calibrated.within", 0.857);
  f->fail_rest = sm_sim_param_num(s, "fail.rest", 1.0);
  if (!(k >= 1 && k <= MAX_TOPK && k == floor(k)) || !(t > 0 && t <= 1) ||
      !(f->cal_hit >= 0 && f->cal_hit <= 1) ||
      !(f->cal_within > 0 && f->cal_within < 1)) {
    sm_free(f);
    return sm_err_set(err, SM_EINVAL,
                      "facts.top_k must be 1..%d, facts.threshold in (0, 1], "
                      "calibrated.hit in [0, 1], calibrated.within in "
                      "(0, 1)",
                      MAX_TOPK);
  }
  f->top_k = (int)k;
  f->threshold = (float)t;
  /* P(|N(0, s)| <= ln 2) = within. */
  f->cal_sigma = log(2.0) / norm_inv(0.5 + f->cal_within / 2);
  rc = sm__coloc_open(s, &f->coloc, err);
  if (rc == 0 && wl != NULL && *wl != '\0')
    rc = sm__wl_load(wl, &f->wl, err);
  if (rc == 0 && (f->ix = sm_index_new(SM_FP_DIMS)) == NULL)
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
  if (rc == 0)
    rc = setup_env(f, err);
  if (rc != 0) {
    sm__facts_free(f);
    return rc;
  }
  if (f->wl != NULL) {
    snprintf(f->attrs, sizeof(f->attrs),
             "workload templates (%d templates, %d commands extracted from "
             "%.60s) %s",
             f->wl->n, f->wl->nvariants, f->wl->dir,
             f->mode == SM__FACTS_ORACLE
                 ? "mapped by each job's true GPU time"
                 : "assigned by user and job name, else per job");
  } else {
    int user = 0, name = 0, model = 0;
    for (size_t i = 0; i < f->njobs; i++) {
      const sm_sim_job *j = sm_sim_job_at(s, i);
      user |= j->user[0] != '\0';
      name |= j->name[0] != '\0';
      model |= sm_sim_job_attr(j, "model") != NULL ||
               sm_sim_job_attr(j, "model_name") != NULL;
    }
    snprintf(f->attrs, sizeof(f->attrs),
             "trace attributes only (GPUs, VC%s%s%s; no workload "
             "catalogue)",
             user ? ", user" : "", name ? ", job name" : "",
             model ? ", model/dataset/batch" : "");
  }
  *out = f;
  return 0;
}

void sm__facts_free(sm__facts *f) {
  if (f == NULL)
    return;
  for (size_t i = 0; i < f->np; i++)
    sm_free(f->protos[i].r);
  sm_free(f->protos);
  sm_free(f->slots);
  sm_free(f->recs);
  sm_free(f->env);
  sm_index_free(f->ix);
  sm__wl_free(f->wl);
  sm__coloc_free(f->coloc);
  sm_free(f);
}

const sm__coloc *sm__facts_coloc(const sm__facts *f) {
  return f->coloc;
}

const sm__jobenv *sm__facts_env(const sm__facts *f, const sm_sim_job *j) {
  return &f->env[j->idx];
}

const char *sm__facts_mode(const sm__facts *f) {
  return f->mode == SM__FACTS_CALIBRATED ? "calibrated"
         : f->mode == SM__FACTS_ORACLE   ? "oracle"
                                         : "history";
}

size_t sm__facts_future_reads(const sm__facts *f, size_t *records_read) {
  if (records_read != NULL)
    *records_read = f->records_read;
  return f->future_reads;
}

void sm__facts_report(sm__facts *f, sm_sim *s) {
  sm_sim_stat_add(s, "facts_queries", (double)f->queries);
  sm_sim_stat_add(s, "facts_hits", (double)f->hits);
  sm_sim_stat_add(s, "facts_hit_rate",
                  f->queries ? (double)f->hits / f->queries : 0);
  sm_sim_stat_add(s, "facts_within_2x",
                  f->hits ? (double)f->within2 / f->hits : 0);
  sm_sim_stat_add(s, "fallback_no_match", (double)f->fb[SM_FALLBACK_NO_MATCH]);
  sm_sim_stat_add(s, "fallback_below_threshold",
                  (double)f->fb[SM_FALLBACK_BELOW_THRESHOLD]);
  sm_sim_stat_add(s, "fallback_inconsistent",
                  (double)f->fb[SM_FALLBACK_INCONSISTENT]);
  if (f->calibrated) {
    sm_sim_note(s,
                "facts: calibrated (no history): hit rate %.3g, %.3g of "
                "the estimates within a factor of two (log-error sigma "
                "%.3f), seeded per job",
                f->cal_hit, f->cal_within, f->cal_sigma);
  } else {
    sm_sim_stat_add(s, "history_records", (double)f->nr);
    sm_sim_stat_add(s, "history_fingerprints", (double)f->np);
    sm_sim_stat_add(s, "history_future_reads", (double)f->future_reads);
    sm_sim_note(s,
                "facts: %s - the history engine online over the "
                "trace (fingerprint, exact top-%d search at cosine >= "
                "%.2f, plain mean of the completed matches); only jobs "
                "that ended before a submission are searched; fingerprints "
                "from %s%s",
                f->mode == SM__FACTS_ORACLE ? "ORACLE (an upper bound, "
                                              "reads the outcome)"
                                            : "history",
                f->top_k, f->threshold, f->attrs,
                f->mode == SM__FACTS_ORACLE
                    ? "; a hit also knows the job's own profile"
                    : "");
  }
  sm_sim_note(s, "profiles and co-location: %s", sm__coloc_source(f->coloc));
  if (f->wl != NULL)
    sm_sim_note(s,
                "world: every job runs a workload template of %s chosen by a "
                "seeded hash of its user and job name (else of the job "
                "itself), and a profile of that template's class chosen "
                "the same way; nothing a job did after its submission "
                "enters either",
                f->wl->dir);
}
