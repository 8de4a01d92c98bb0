/* estimator.c - duration estimators that policies consult (QSSF now,
 * Lucid and SchedMate-SJF later): the oracle, an online history of
 * finished jobs keyed by user and job name, noisy versions of the truth
 * with a chosen error distribution, and the trace's own estimates.
 *
 * The history estimator only learns from jobs that have ended before the
 * estimate is asked for (sm_sim_estimator_observe is called from the
 * policy's finish callback), so it never sees the future.  Noise is drawn
 * per job from (seed, job index), so an estimate does not depend on the
 * order in which jobs are asked about. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/params_int.h"
#include "sim/sim_int.h"

enum { E_ORACLE, E_HISTORY, E_LOGNORMAL, E_UNIFORM, E_TRACE };

typedef struct hent {
  uint64_t h;       /* hash of the key, 0 for an empty slot */
  const char *user; /* key part (borrowed from the trace) */
  const char *name; /* key part, NULL for user-only entries */
  double sum;       /* sum of durations */
  long n;           /* count */
} hent;

typedef struct htab {
  hent *v;    /* slots */
  size_t cap; /* power of two */
  size_t n;   /* used */
} htab;

struct sm_sim_estimator {
  int kind;          /* E_* */
  double param;      /* sigma or relative error */
  double fallback_s; /* estimate when nothing is known */
  uint64_t seed;     /* noise seed */
  htab by_name;      /* (user, name) -> mean */
  htab by_user;      /* user -> mean */
  double gsum;       /* all finished jobs */
  long gn;
  size_t hits[4]; /* answered by: name, user, global, fallback */
  char name[48];  /* spec, for reports */
};

static uint64_t key_hash(const char *user, const char *name) {
  uint64_t h = sm_hash64(user, strlen(user), 11);
  if (name != NULL)
    h = sm_hash_mix(h ^ sm_hash64(name, strlen(name), 13));
  return h ? h : 1;
}

static hent *lookup(htab *t, const char *user, const char *name, int add) {
  uint64_t h = key_hash(user, name);
  size_t k;

  if (add && (t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    hent *v = sm_calloc(cap, sizeof(*v));
    if (v == NULL)
      return NULL;
    for (size_t i = 0; i < t->cap; i++) {
      if (t->v[i].h == 0)
        continue;
      k = t->v[i].h & (cap - 1);
      while (v[k].h != 0)
        k = (k + 1) & (cap - 1);
      v[k] = t->v[i];
    }
    sm_free(t->v);
    t->v = v;
    t->cap = cap;
  }
  if (t->cap == 0)
    return NULL;
  k = h & (t->cap - 1);
  while (t->v[k].h != 0) {
    hent *e = &t->v[k];
    if (e->h == h && strcmp(e->user, user) == 0 &&
        ((name == NULL && e->name == NULL) ||
         (name != NULL && e->name != NULL && strcmp(e->name, name) == 0)))
      return e;
    k = (k + 1) & (t->cap - 1);
  }
  if (!add)
    return NULL;
  t->v[k].h = h;
  t->v[k].user = user;
  t->v[k].name = name;
  t->n++;
  return &t->v[k];
}

int sm_sim_estimator_new(sm_sim *s, const char *spec, sm_sim_estimator **out,
                         sm_err *err) {
  sm_sim_estimator *e;
  const char *p;

  if (spec == NULL || *spec == '\0')
    spec = "history";
  e = sm_calloc(1, sizeof(*e));
  if (e == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  snprintf(e->name, sizeof(e->name), "%s", spec);
  e->seed = s ? sm_sim_config_of(s)->seed : 1;
  e->fallback_s = s ? SM__PARAM(s, estimator_default_s) : 3600;
  if (strcmp(spec, "oracle") == 0) {
    e->kind = E_ORACLE;
  } else if (strcmp(spec, "history") == 0) {
    e->kind = E_HISTORY;
  } else if (strcmp(spec, "trace") == 0) {
    e->kind = E_TRACE;
  } else if (strncmp(spec, "noisy:lognormal:", 16) == 0 ||
             strncmp(spec, "noisy:uniform:", 14) == 0) {
    e->kind = spec[6] == 'l' ? E_LOGNORMAL : E_UNIFORM;
    p = spec + (e->kind == E_LOGNORMAL ? 16 : 14);
    if (sm_parse_double(p, &e->param) != 0 || e->param < 0 ||
        (e->kind == E_UNIFORM && e->param >= 1) || e->param > 10) {
      sm_free(e);
      return sm_err_set(err, SM_EINVAL,
                        "estimator '%.40s': expected noisy:lognormal:SIGMA "
                        "(0..10) or noisy:uniform:E (0 <= E < 1)",
                        spec);
    }
  } else {
    sm_free(e);
    return sm_err_set(err, SM_EINVAL,
                      "unknown estimator '%.40s' (oracle, history, trace, "
                      "noisy:lognormal:SIGMA, noisy:uniform:E)",
                      spec);
  }
  *out = e;
  return 0;
}

static double history(sm_sim_estimator *e, const sm_sim_job *j) {
  hent *h;

  if (j->user[0] != '\0' || j->name[0] != '\0') {
    h = lookup(&e->by_name, j->user, j->name, 0);
    if (h != NULL && h->n > 0) {
      e->hits[0]++;
      return h->sum / (double)h->n;
    }
  }
  if (j->user[0] != '\0') {
    h = lookup(&e->by_user, j->user, NULL, 0);
    if (h != NULL && h->n > 0) {
      e->hits[1]++;
      return h->sum / (double)h->n;
    }
  }
  if (e->gn > 0) {
    e->hits[2]++;
    return e->gsum / (double)e->gn;
  }
  e->hits[3]++;
  return e->fallback_s;
}

double sm_sim_estimate(sm_sim_estimator *e, const sm_sim_job *j) {
  double v, u1, u2;

  switch (e->kind) {
  case E_ORACLE:
    v = j->duration;
    break;
  case E_LOGNORMAL:
    u1 = sm__job_uniform(e->seed, 101, j->idx);
    u2 = sm__job_uniform(e->seed, 102, j->idx);
    if (u1 <= 0)
      u1 = 0x1.0p-53;
    v = j->duration *
        exp(e->param * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    break;
  case E_UNIFORM:
    u1 = sm__job_uniform(e->seed, 103, j->idx);
    v = j->duration * (1.0 + e->param * (2.0 * u1 - 1.0));
    break;
  case E_TRACE:
    if (isfinite(j->estimate) && j->estimate > 0) {
      v = j->estimate;
      break;
    }
    v = history(e, j);
    break;
  default:
    v = history(e, j);
    break;
  }
  return v >= 1.0 ? v : 1.0;
}

void sm_sim_estimator_observe(sm_sim_estimator *e, const sm_sim_job *j) {
  hent *h;

  if (e->kind != E_HISTORY && e->kind != E_TRACE)
    return;
  e->gsum += j->duration;
  e->gn++;
  h = lookup(&e->by_name, j->user, j->name, 1);
  if (h != NULL) {
    h->sum += j->duration;
    h->n++;
  }
  if (j->user[0] != '\0') {
    h = lookup(&e->by_user, j->user, NULL, 1);
    if (h != NULL) {
      h->sum += j->duration;
      h->n++;
    }
  }
}

const char *sm_sim_estimator_name(const sm_sim_estimator *e) {
  return e->name;
}

/* How many estimates the history answered at each level (name, user,
 * global, fallback); used for run statistics. */
void sm__estimator_hits(const sm_sim_estimator *e, size_t out[4]) {
  memcpy(out, e->hits, sizeof(e->hits));
}

void sm_sim_estimator_free(sm_sim_estimator *e) {
  if (e == NULL)
    return;
  sm_free(e->by_name.v);
  sm_free(e->by_user.v);
  sm_free(e);
}
