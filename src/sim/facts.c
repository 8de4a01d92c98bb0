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
 *               read in its template's repository and command.  As in
 *               sm_advise, a job whose metadata cannot establish enough
 *               identity (sm_identity_known / sm_identity_enough) is not
 *               matched at all (too_little_known); otherwise the
 *               fingerprint is searched (exact top-k cosine, sm_index)
 *               among the jobs that have already ended, each candidate at
 *               or above the threshold must pass the identity check
 *               (sm_identity_compare: no veto, enough shared identity),
 *               and the Advisor's rule (sm_estimate_compute: the plain
 *               mean of the completed matches, with its fallbacks) gives
 *               the answer.  A job is written back when it ends, with its
 *               end state, so an answer can only use outcomes known
 *               before the question (checked: every read compares the
 *               record's write time with the question's).
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
 * The search keeps one index row per prototype - a distinct fingerprint
 * with a distinct identity - with the list of its records in the order
 * they were written, instead of one row per record: trace jobs repeat the
 * same fingerprint thousands of times.  The prototype also keeps one copy
 * of its records' metadata and trace attributes, so the identity check
 * runs once per prototype, not once per record.  Its identity key holds
 * every metadata value (strings case-folded, numbers exactly) and, for a
 * job known only from the trace, the user and the job name with its
 * digits folded (and the VC, as the fingerprint): all that
 * sm_identity_compare reads, so two records of one prototype are
 * accepted or rejected together by any question (two different users can
 * share a fingerprint by a hash collision of the feature hashing; the key
 * keeps them apart).
 *
 * The walk is sm_advise's: candidates by score, ties by write order, the
 * rejected ones skipped, until top_k are kept or 4,096 candidates at or
 * above the threshold have been examined (sm_advise's widest search), so
 * vetoed look-alikes cannot hide a real match and cannot make the two
 * disagree either.  The answer is the same as a search over every record
 * (tests compare it with sm_advise on a "mem:" store, job by job), and
 * once the top_k records of a prototype's own are the answer for it, the
 * answer cannot change any more (no other fingerprint can score above an
 * identical one, later records lose ties, and a record's identity never
 * changes), so it is kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/facts_int.h"
#include "sim/figures_int.h"
#include "sim/params_int.h"
#include "sim/sim_int.h"

#define MAX_TOPK 64
#define EXTRA_PROTOS 8
/* The most candidates at or above the threshold sm_advise examines
 * (MAX_CANDIDATES in src/history/estimate.c; the parity test has a case
 * beyond it). */
#define WALK_MAX 4096
/* Verdicts a prototype remembers about the candidates of its jobs. */
#define VERDICTS 8
/* Fallback reasons counted (sm_fallback values). */
#define N_FALLBACKS (SM_FALLBACK_TOO_LITTLE_KNOWN + 1)
/* What an answer's walk passed over (bits). */
#define PASSED_DIFFERENT 1u /* a candidate vetoed as a different job */
#define PASSED_THIN 2u      /* a candidate sharing too little identity */

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

/* One distinct fingerprint with one identity, and the records that carry
 * them. */
typedef struct proto {
  uint64_t h;              /* hash of the fingerprint and the identity key */
  uint32_t *r;             /* record indices, in write order */
  int n;                   /* used */
  size_t cap;              /* allocated */
  int frozen;              /* 1: ans is final */
  sm__fact ans;            /* the final answer for this prototype */
  double latest;           /* latest write time among the records ans used */
  unsigned passed;         /* PASSED_* of the walk that gave ans */
  char *key;               /* identity key (owned; may hold NULs) */
  size_t keylen;           /* its length */
  sm_meta meta;            /* the records' metadata (one copy for all) */
  char *user, *name;       /* their trace attributes (owned, "" if none) */
  char *vc;                /* their VC (owned) */
  int enough;              /* their own identity is enough to match on */
  uint32_t seen[VERDICTS]; /* prototypes judged for this one's jobs */
  unsigned char said[VERDICTS]; /* their verdicts (see judge) */
  int nseen;                    /* entries used (round robin when full) */
} proto;

/* A job as the history sees it: metadata, trace attributes, fingerprint
 * and the hashes that find its prototype (the identity key itself is in
 * sm__facts.key). */
typedef struct jobq {
  sm_meta m;            /* metadata at submission */
  sm_fp_extra x;        /* user, job name, VC (borrowed from the job) */
  float fp[SM_FP_DIMS]; /* fingerprint */
  uint64_t hfp;         /* hash of the fingerprint (per-job output) */
  uint64_t h;           /* hash of fingerprint and identity key */
} jobq;

struct sm__facts {
  sm_sim *s;               /* the run */
  int mode;                /* SM__FACTS_* */
  int calibrated;          /* 1: calibrated mode */
  int top_k;               /* matches kept */
  float threshold;         /* minimum cosine */
  double cal_hit;          /* calibrated hit rate */
  double cal_within;       /* calibrated share within a factor of two */
  double cal_sigma;        /* derived log-error spread */
  double fail_rest;        /* fail.rest: work still needed after a fault */
  uint64_t seed;           /* run seed */
  sm__coloc *coloc;        /* profile tables */
  sm__wl *wl;              /* workload catalogue, or NULL */
  sm__jobenv *env;         /* per job */
  size_t njobs;            /* job count */
  sm_index *ix;            /* one row per proto */
  proto *protos;           /* distinct fingerprints */
  size_t np, capp;         /* used / allocated */
  uint32_t *slots;         /* hash table: proto index + 1, 0 empty */
  size_t nslots;           /* power of two */
  rec *recs;               /* written-back jobs */
  size_t nr, capr;         /* used / allocated */
  size_t queries, hits;    /* questions and usable answers */
  size_t fb[N_FALLBACKS];  /* fallbacks by reason */
  size_t searches;         /* index searches */
  size_t frozen_answers;   /* answers from a final prototype */
  size_t passed_different; /* answers whose walk vetoed a look-alike */
  size_t passed_thin;      /* answers whose walk skipped a thin one */
  char *key;               /* identity key of the job at hand */
  size_t keylen, keycap;   /* its length / allocated */
  uint32_t *jproto;        /* per job: its prototype + 1, 0 not yet */
  sm_hit *cand;            /* search results (prototypes) */
  unsigned char *verdict;  /* per hit: 0 accepted, else PASSED_* */
  size_t capcand;          /* capacity of cand */
  size_t capverdict;       /* capacity of verdict */
  size_t future_reads;     /* reads of later records (must stay 0) */
  size_t records_read;     /* records read by answers */
  double sum_abs_log_err;  /* over hits with a known truth */
  size_t within2;          /* hits within a factor of two */
  char attrs[256];         /* what the fingerprints are made of */
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

/* ==== Identity ==== */

/* A string with a letter or a digit (sm_identity_compare's "known"). */
static int has_alnum(const char *s) {
  for (; s != NULL && *s; s++)
    if ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
        (*s >= 'A' && *s <= 'Z'))
      return 1;
  return 0;
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

static char lower_c(char c) {
  return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* Writes a tag, s case-folded (its first max bytes; digit runs as one
 * '0' when fold) and a NUL at o; returns the end. */
static char *key_str(char *o, char tag, const char *s, size_t max, int fold) {
  *o++ = tag;
  for (size_t i = 0; s[i] && i < max; i++) {
    if (fold && is_digit(s[i]) && i > 0 && is_digit(s[i - 1]))
      continue;
    *o++ = fold && is_digit(s[i]) ? '0' : lower_c(s[i]);
  }
  *o++ = '\0';
  return o;
}

static int str_known(const sm_meta *m, int f) {
  return m->f[f].known && has_alnum(m->f[f].str);
}

/* The identity key of a job (into f->key, f->keylen): every metadata
 * value (strings case-folded, numbers by their bits; finer than any
 * equality sm_identity_compare applies) and, when the metadata names no
 * model, dataset or task, the trace attributes the way the comparison
 * reads them (the user case-folded, the job name's first 255 bytes
 * case-folded with digit runs folded, whether each has a letter or digit
 * at all) and the VC.  Jobs with equal keys are accepted or rejected
 * alike by every question; the fingerprint makes the same distinctions,
 * so the key splits no prototype that the fingerprint would keep
 * together (bar hash collisions).  0 or SM_ENOMEM. */
static int identity_key(sm__facts *f, const sm_meta *m, const sm_fp_extra *x) {
  const char *u = x->user ? x->user : "", *n = x->name ? x->name : "";
  const char *vc = x->vc ? x->vc : "";
  int trace = !str_known(m, SM_META_MODEL_NAME) &&
              !str_known(m, SM_META_DATASET) && !str_known(m, SM_META_TASK);
  size_t need = 1;
  char *o;

  for (int i = 0; i < SM_META_NFIELDS; i++)
    if (m->f[i].known)
      need +=
          2 + (sm_meta_type_of((sm_meta_field)i) != SM_META_STR ? sizeof(double)
               : m->f[i].str ? strlen(m->f[i].str)
                             : 0);
  if (trace)
    need += 6 + strlen(u) + strlen(n) + strlen(vc);
  if (SM__GROW(f->key, need, f->keycap) != 0)
    return SM_ENOMEM;
  o = f->key;
  for (int i = 0; i < SM_META_NFIELDS; i++) {
    const sm_meta_value *v = &m->f[i];
    if (!v->known)
      continue;
    if (sm_meta_type_of((sm_meta_field)i) != SM_META_STR) {
      *o++ = (char)('A' + i);
      memcpy(o, &v->num, sizeof(v->num));
      o += sizeof(v->num);
    } else if (v->str == NULL) {
      *o++ = (char)('a' + i);
    } else {
      o = key_str(o, (char)('A' + i), v->str, (size_t)-1, 0);
    }
  }
  if (trace) {
    o = key_str(o, has_alnum(u) ? '1' : '0', u, (size_t)-1, 0);
    o = key_str(o, has_alnum(n) ? '3' : '2', n, 255, 1);
    o = key_str(o, '4', vc, (size_t)-1, 0);
  }
  f->keylen = (size_t)(o - f->key);
  return 0;
}

/* ==== Prototypes ==== */

/* The metadata, fingerprint and identity key (into f->key) of j.  The
 * caller releases q->m.  0 or SM_ENOMEM. */
static int job_prepare(sm__facts *f, const sm_sim_job *j, jobq *q) {
  if (job_meta(f, j, &q->m) != 0)
    return SM_ENOMEM;
  q->x.user = j->user;
  q->x.name = j->name;
  q->x.vc = j->vc_name;
  sm_fingerprint(&q->m, &q->x, q->fp);
  q->hfp = sm_hash64(q->fp, SM_FP_DIMS * sizeof(float), 0x1dea5ULL);
  if (q->hfp == 0)
    q->hfp = 1;
  if (identity_key(f, &q->m, &q->x) != 0)
    return SM_ENOMEM;
  q->h = sm_hash64(f->key, f->keylen, q->hfp);
  if (q->h == 0)
    q->h = 1;
  return 0;
}

static proto *proto_find(const sm__facts *f, const jobq *q) {
  size_t mask = f->nslots - 1;

  if (f->nslots == 0)
    return NULL;
  for (size_t i = q->h & mask;; i = (i + 1) & mask) {
    uint32_t v = f->slots[i];
    proto *p;
    if (v == 0)
      return NULL;
    p = &f->protos[v - 1];
    if (p->h == q->h && p->keylen == f->keylen &&
        memcmp(p->key, f->key, p->keylen) == 0 &&
        memcmp(sm_index_row(f->ix, v - 1), q->fp, SM_FP_DIMS * sizeof(float)) ==
            0)
      return p;
  }
}

static void slots_put(uint32_t *slots, size_t nslots, uint64_t h, uint32_t v) {
  size_t mask = nslots - 1;

  for (size_t i = h & mask;; i = (i + 1) & mask)
    if (slots[i] == 0) {
      slots[i] = v;
      return;
    }
}

static void proto_release(proto *p) {
  sm_free(p->r);
  sm_free(p->key);
  sm_meta_release(&p->meta);
  sm_free(p->user);
  sm_free(p->name);
  sm_free(p->vc);
}

static proto *proto_add(sm__facts *f, const jobq *q) {
  proto *p;

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
  if (SM__GROW(f->protos, f->np + 1, f->capp) != 0)
    return NULL;
  p = &f->protos[f->np];
  memset(p, 0, sizeof(*p));
  sm_meta_init(&p->meta);
  p->h = q->h;
  p->keylen = f->keylen;
  p->key = sm_malloc(p->keylen ? p->keylen : 1);
  p->user = sm_strdup(q->x.user ? q->x.user : "");
  p->name = sm_strdup(q->x.name ? q->x.name : "");
  p->vc = sm_strdup(q->x.vc ? q->x.vc : "");
  if (p->key == NULL || p->user == NULL || p->name == NULL || p->vc == NULL ||
      sm_meta_copy(&p->meta, &q->m) != 0 || sm_index_add(f->ix, q->fp) != 0) {
    proto_release(p);
    return NULL;
  }
  memcpy(p->key, f->key, p->keylen);
  p->enough = sm_identity_enough(sm_identity_known(&q->m, &q->x));
  slots_put(f->slots, f->nslots, q->h, (uint32_t)f->np + 1);
  f->np++;
  return p;
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

/* The walk over the candidates, as sm_advise's. */
typedef struct walk {
  pick *out;       /* matches kept, in walk order */
  int k;           /* at most this many */
  int got;         /* kept so far */
  long walked;     /* candidates (records) examined */
  unsigned passed; /* PASSED_* of the rejected candidates examined */
  int done;        /* top-k full, or WALK_MAX examined */
} walk;

/* Records of p written before record rec. */
static long before(const proto *p, uint32_t rec) {
  int lo = 0, hi = p->n;

  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (p->r[mid] < rec)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* 0 when the records of prototype c may stand for the job q, else why
 * not (PASSED_*).  The verdict depends on the two identities only, so
 * the job's own prototype qp (may be NULL) remembers it. */
static unsigned char judge(sm__facts *f, proto *qp, uint32_t c, const jobq *q) {
  const proto *p = &f->protos[c];
  sm_fp_extra px;
  sm_identity_cmp cmp;
  unsigned char v;

  if (qp != NULL)
    for (int i = 0; i < qp->nseen && i < VERDICTS; i++)
      if (qp->seen[i] == c)
        return qp->said[i];
  px.user = p->user;
  px.name = p->name;
  px.vc = p->vc;
  v = sm_identity_compare(&q->m, &q->x, &p->meta, &px, &cmp) ? 0
      : cmp.veto >= 0                                        ? PASSED_DIFFERENT
                                                             : PASSED_THIN;
  if (qp != NULL) {
    int slot = qp->nseen++ % VERDICTS;
    qp->seen[slot] = c;
    qp->said[slot] = v;
  }
  return v;
}

/* Walks one group of prototypes of equal score, h[i..g) with verdicts
 * v[i..g): their records merged in write order, the rejected skipped,
 * the accepted kept while the top-k has room and fewer than WALK_MAX
 * candidates have been examined in all.  Rejected prototypes are
 * counted by their place in the merge, never one record at a time. */
static void walk_group(const sm__facts *f, const sm_hit *h,
                       const unsigned char *v, int i, int g, walk *w) {
  long rem = WALK_MAX - w->walked, tot = 0, limit;
  int nacc = 0, start = w->got;

  for (int q = i; q < g; q++) {
    tot += f->protos[h[q].row].n;
    nacc += v[q] == 0;
  }
  limit = tot < rem ? tot : rem;
  if (nacc > 0) {
    int got = start, taken = 0;
    long last = -1;
    for (int q = i; q < g; q++) {
      const proto *p = &f->protos[h[q].row];
      if (v[q] != 0)
        continue;
      for (int r = 0; r < p->n; r++) {
        pick pk = {p->r[r], h[q].score};
        /* Keep the group's earliest accepted records: at most k - start. */
        if (got - start < w->k - start) {
          w->out[got++] = pk;
        } else {
          int worst = start;
          for (int z = start + 1; z < got; z++)
            if (w->out[z].rec > w->out[worst].rec)
              worst = z;
          if (pk.rec < w->out[worst].rec)
            w->out[worst] = pk;
          else
            break; /* records of a proto come in write order */
        }
      }
    }
    qsort(w->out + start, (size_t)(got - start), sizeof(pick), by_rec);
    /* The t-th accepted record's place in the merge: t, plus the
     * rejected records written before it. */
    for (int t = 0; t < got - start; t++) {
      long pos = t;
      for (int q = i; q < g; q++)
        if (v[q] != 0)
          pos += before(&f->protos[h[q].row], w->out[start + t].rec);
      if (pos >= rem)
        break;
      taken++;
      last = pos;
    }
    w->got = start + taken;
    if (taken < got - start)
      w->done = 1; /* WALK_MAX reached inside the group */
    else if (w->got == w->k) {
      limit = last + 1;
      w->done = 1;
    }
  }
  if (nacc < g - i) {
    /* A rejected prototype was examined when its first record lies
     * within the part of the merge walked. */
    for (int q = i; q < g; q++) {
      const proto *p = &f->protos[h[q].row];
      long pos = 0;
      if (v[q] == 0 || (w->passed & v[q]))
        continue;
      if (limit < tot)
        for (int z = i; z < g; z++)
          pos += before(&f->protos[h[z].row], p->r[0]);
      if (pos < limit)
        w->passed |= v[q];
    }
  }
  w->walked += limit;
  if (w->walked >= WALK_MAX)
    w->done = 1;
}

/* The want best prototypes for q's fingerprint into f->cand (room made
 * for as many verdicts): their count, or -1 without memory. */
static int search(sm__facts *f, const jobq *q, size_t want) {
  if (SM__GROW(f->cand, want, f->capcand) != 0 ||
      SM__GROW(f->verdict, want, f->capverdict) != 0)
    return -1;
  f->searches++;
  return sm_index_search(f->ix, q->fp, (int)want, f->threshold, f->cand);
}

/* The matches for q: candidates at or above the threshold by score, ties
 * by write order, whose identity agrees (at most k), as sm_advise walks
 * them over a store of every record.  The first search asks for a few
 * prototypes beyond k; when the walk reaches the end of what it returned
 * (the top-k not yet full, or a group of equal scores that may go on), it
 * asks for WALK_MAX prototypes, then for all.  Returns the count, or -1
 * without memory; w->passed says what was rejected on the way. */
static int top_records(sm__facts *f, const jobq *q, proto *qp, walk *w) {
  size_t want = (size_t)w->k + EXTRA_PROTOS;
  int n, i = 0;

  if (f->np == 0)
    return 0;
  if (want > f->np)
    want = f->np;
  if ((n = search(f, q, want)) < 0)
    return -1;
  while (i < n && !w->done) {
    int g = i;
    while (g < n && f->cand[g].score == f->cand[i].score)
      g++;
    if (g == n && (size_t)n == want && want < f->np) {
      /* The results are a prefix of any longer search's. */
      want = want < WALK_MAX && f->np > WALK_MAX ? WALK_MAX : f->np;
      if ((n = search(f, q, want)) < 0)
        return -1;
      continue;
    }
    for (int z = i; z < g; z++)
      f->verdict[z] = judge(f, qp, (uint32_t)f->cand[z].row, q);
    walk_group(f, f->cand, f->verdict, i, g, w);
    i = g;
  }
  return w->got;
}

/* The Advisor's answer from the selected records; with none, the
 * fallback sm_advise gives: the history is empty, nothing reaches the
 * threshold, or every candidate that does was rejected (too little
 * shared identity before a veto, as there). */
static void answer(sm__facts *f, const pick *pk, int n, const walk *w,
                   double now, sm__fact *out, double *latest) {
  sm_record m[MAX_TOPK];
  float sc[MAX_TOPK];
  sm_advice a;
  sm_advise_opts o;
  double gu = 0, gm = 0;
  int ng = 0;

  memset(out, 0, sizeof(*out));
  out->duration = out->util = out->gmem_util = out->gmem = NAN;
  *latest = -INFINITY;
  if (n == 0) {
    out->fallback = f->np == 0                ? SM_FALLBACK_NO_MATCH
                    : w->passed & PASSED_THIN ? SM_FALLBACK_TOO_LITTLE_KNOWN
                    : w->passed & PASSED_DIFFERENT
                        ? SM_FALLBACK_NO_MATCH
                        : SM_FALLBACK_BELOW_THRESHOLD;
    return;
  }
  for (int i = 0; i < n; i++) {
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
  a.n_matches = n;
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

static void count_passed(sm__facts *f, unsigned passed) {
  f->passed_different += (passed & PASSED_DIFFERENT) != 0;
  f->passed_thin += (passed & PASSED_THIN) != 0;
}

static void ask_history(sm__facts *f, const sm_sim_job *j, sm__fact *out) {
  jobq q;
  pick pk[MAX_TOPK];
  walk w;
  proto *p;
  double latest, now = sm_sim_now(f->s);
  int n, zero = 1;

  memset(out, 0, sizeof(*out));
  out->duration = out->util = out->gmem_util = out->gmem = NAN;
  sm_meta_init(&q.m);
  if (job_prepare(f, j, &q) != 0) {
    out->fallback = SM_FALLBACK_UNAVAILABLE;
    goto end;
  }
  for (int i = 0; i < SM_FP_DIMS && zero; i++)
    zero = q.fp[i] == 0.0f;
  if (zero) {
    out->fallback = SM_FALLBACK_EXTRACT_FAILED;
    goto end;
  }
  sm_sim_job_at(f->s, j->idx)->fingerprint = q.hfp;
  p = proto_find(f, &q);
  if (p != NULL)
    f->jproto[j->idx] = (uint32_t)(p - f->protos) + 1;
  /* As sm_advise: a job that cannot be identified is not searched. */
  if (!(p != NULL ? p->enough
                  : sm_identity_enough(sm_identity_known(&q.m, &q.x)))) {
    out->fallback = SM_FALLBACK_TOO_LITTLE_KNOWN;
    goto end;
  }
  if (p != NULL && p->frozen) {
    f->frozen_answers++;
    *out = p->ans;
    count_passed(f, p->passed);
    f->records_read += (size_t)(out->n > 0 ? out->n : 0);
    if (p->latest > now)
      f->future_reads++;
    goto end;
  }
  memset(&w, 0, sizeof(w));
  w.out = pk;
  w.k = f->top_k;
  n = top_records(f, &q, p, &w);
  if (n < 0) {
    out->fallback = SM_FALLBACK_UNAVAILABLE;
    goto end;
  }
  answer(f, pk, n, &w, now, out, &latest);
  count_passed(f, w.passed);
  if (p != NULL && p->n >= f->top_k && n == f->top_k) {
    /* The prototype's own first top_k records are the answer: nothing
     * written later can come before them. */
    int own = 1;
    for (int i = 0; i < n && own; i++) {
      own = 0;
      for (int r = 0; r < f->top_k && !own; r++)
        own = p->r[r] == pk[i].rec;
    }
    if (own) {
      p->frozen = 1;
      p->ans = *out;
      p->latest = latest;
      p->passed = w.passed;
    }
  }
end:
  sm_meta_release(&q.m);
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
  } else if (out->fallback >= 0 && out->fallback < N_FALLBACKS) {
    f->fb[out->fallback]++;
  }
}

void sm__facts_done(sm__facts *f, const sm_sim_job *j, double work, int state) {
  jobq q;
  proto *p;
  rec *r;
  const sm__prof *pr = sm__coloc_prof(f->coloc, f->env[j->idx].prof);

  if (f->calibrated)
    return;
  sm_meta_init(&q.m);
  if (f->jproto[j->idx] != 0) {
    /* Found when the job was asked about: a job's metadata, fingerprint
     * and identity are those of its submission. */
    p = &f->protos[f->jproto[j->idx] - 1];
  } else {
    if (job_prepare(f, j, &q) != 0)
      goto oom;
    p = proto_find(f, &q);
    if (p == NULL && (p = proto_add(f, &q)) == NULL)
      goto oom;
    f->jproto[j->idx] = (uint32_t)(p - f->protos) + 1;
  }
  if (SM__GROW(f->recs, f->nr + 1, f->capr) != 0 ||
      SM__GROW(p->r, (size_t)p->n + 1, p->cap) != 0)
    goto oom;
  r = &f->recs[f->nr];
  r->duration = work;
  r->util = pr->util;
  r->gmem_util = pr->gmem_util;
  r->gmem = pr->gmem;
  r->submit = j->submit;
  r->written = sm_sim_now(f->s);
  r->state = state;
  p->r[p->n++] = (uint32_t)f->nr++;
  sm_meta_release(&q.m);
  return;
oom:
  sm_meta_release(&q.m);
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
  const char *mode = SM__PARAM(s, facts);
  const char *wl = SM__PARAM(s, workloads);
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
  k = SM__PARAM(s, facts_top_k);
  t = SM__PARAM(s, facts_threshold);
  f->cal_hit = SM__PARAM(s, calibrated_hit);
  f->cal_within = SM__PARAM(s, calibrated_within);
  f->fail_rest = SM__PARAM(s, fail_rest);
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
  if (rc == 0 && (f->jproto = sm_calloc(f->njobs ? f->njobs : 1,
                                        sizeof(uint32_t))) == NULL)
    rc = sm_err_set(err, SM_ENOMEM, "out of memory");
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
    proto_release(&f->protos[i]);
  sm_free(f->protos);
  sm_free(f->cand);
  sm_free(f->verdict);
  sm_free(f->key);
  sm_free(f->jproto);
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

int sm__facts_job_meta(const sm__facts *f, const sm_sim_job *j, sm_meta *m) {
  return job_meta(f, j, m);
}

uint64_t sm__facts_identity(sm__facts *f, const sm_sim_job *j,
                            unsigned *known) {
  jobq q;
  uint64_t h = 0;

  sm_meta_init(&q.m);
  if (job_prepare(f, j, &q) == 0) {
    h = sm_hash64(f->key, f->keylen, 0x1d ^ f->keylen);
    if (known != NULL)
      *known = sm_identity_known(&q.m, &q.x);
  }
  sm_meta_release(&q.m);
  return h;
}

void sm__facts_counters(const sm__facts *f, size_t *searches, size_t *frozen,
                        size_t *prototypes) {
  *searches = f->searches;
  *frozen = f->frozen_answers;
  *prototypes = f->np;
}

size_t sm__facts_future_reads(const sm__facts *f, size_t *records_read) {
  if (records_read != NULL)
    *records_read = f->records_read;
  return f->future_reads;
}

void sm__facts_report(sm__facts *f, sm_sim *s) {
  SM__FIG_ADD(s, facts_queries, (double)f->queries);
  SM__FIG_ADD(s, facts_hits, (double)f->hits);
  SM__FIG_ADD(s, facts_hit_rate, f->queries ? (double)f->hits / f->queries : 0);
  SM__FIG_ADD(s, facts_within_2x, f->hits ? (double)f->within2 / f->hits : 0);
  SM__FIG_ADD(s, fallback_no_match, (double)f->fb[SM_FALLBACK_NO_MATCH]);
  SM__FIG_ADD(s, fallback_below_threshold,
              (double)f->fb[SM_FALLBACK_BELOW_THRESHOLD]);
  SM__FIG_ADD(s, fallback_inconsistent,
              (double)f->fb[SM_FALLBACK_INCONSISTENT]);
  if (!f->calibrated) {
    SM__FIG_ADD(s, fallback_too_little_known,
                (double)f->fb[SM_FALLBACK_TOO_LITTLE_KNOWN]);
    SM__FIG_ADD(s, facts_vetoed_lookalikes, (double)f->passed_different);
    SM__FIG_ADD(s, facts_thin_lookalikes, (double)f->passed_thin);
  }
  if (f->calibrated) {
    sm_sim_note(s,
                "facts: calibrated (no history): hit rate %.3g, %.3g of "
                "the estimates within a factor of two (log-error sigma "
                "%.3f), seeded per job",
                f->cal_hit, f->cal_within, f->cal_sigma);
  } else {
    SM__FIG_ADD(s, history_records, (double)f->nr);
    SM__FIG_ADD(s, history_fingerprints, (double)f->np);
    SM__FIG_ADD(s, history_future_reads, (double)f->future_reads);
    sm_sim_note(s,
                "facts: %s - the history engine online over the "
                "trace (fingerprint, exact top-%d search at cosine >= "
                "%.2f, identity checked as in advise: a job that cannot "
                "be identified and a look-alike with a different or too "
                "little known identity are not matched; plain mean of the "
                "completed matches); only jobs that ended before a "
                "submission are searched; fingerprints from %s%s",
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
