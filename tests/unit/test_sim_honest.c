/* test_sim_honest.c - no answer leaks into the facts.  The permutation
 * test: shuffle the durations and end states among the jobs of a trace
 * (everything a scheduler knows at submission stays where it was) and
 * run every policy under every facts source, with and without a workload
 * catalogue: every job keeps its workload template, its profile and the
 * fingerprint SchedMate built for it, and its identity (what the history
 * source matches it on: identity key and known groups).  The oracle
 * source, whose fingerprints are built from the outcome on purpose, must
 * fail the same checks: the test can tell a leak when there is one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_sim.h"
#include "sim/facts_int.h"
#include "sim_run.h"

#define NJOBS 600

/* Writes a trace of NJOBS jobs (users, names, VCs, Lucid-style model
 * attributes on some, end states) whose durations and states are taken
 * from dur[] and st[] in job order. */
static void write_trace(sm_buf *b, const double *dur, const int *st) {
  static const char *const states[] = {"completed", "canceled", "failed"};
  static const int gpus[] = {1, 1, 2, 4, 8, 8, 16};
  sm_rng rng;

  sm_rng_seed(&rng, 5);
  sm_buf_adds(b, "job_id,submit_s,duration_s,gpus,vc,user,name,state,model,"
                 "dataset,batchsize\n");
  for (int i = 0; i < NJOBS; i++) {
    int u = (int)(sm_rng_uniform(&rng) * 7);
    int k = (int)(sm_rng_uniform(&rng) * 4);
    int g = gpus[(int)(sm_rng_uniform(&rng) * 7)];
    int named = sm_rng_uniform(&rng) < 0.7;
    int lucid = sm_rng_uniform(&rng) < 0.2;
    sm_buf_addf(b, "j%d,%d,%.0f,%d,%s,%s%d,%s%d,%s,%s,%s,%s\n", i, i * 40,
                dur[i], g, i % 3 ? "a" : "b", named ? "u" : "", named ? u : 0,
                named ? "n" : "", named ? k : 0, states[st[i]],
                lucid ? "ResNet18" : "", lucid ? "CIFAR-10" : "",
                lucid ? "64" : "");
  }
}

typedef struct world {
  char workload[NJOBS][64];
  char profile[NJOBS][64];
  uint64_t fp[NJOBS];
} world;

static void capture(const run *x, world *w) {
  ASSERT_EQ(sm_sim_result_job_count(x->r), NJOBS);
  for (size_t i = 0; i < NJOBS; i++) {
    const sm_sim_job *j = sm_sim_result_job(x->r, i);
    int k = atoi(j->id + 1); /* by job id: the same job in both runs */
    snprintf(w->workload[k], sizeof(w->workload[k]), "%s", j->workload);
    snprintf(w->profile[k], sizeof(w->profile[k]), "%s", j->profile);
    w->fp[k] = j->fingerprint;
  }
}

SM_TEST(sim_permutation_test_no_answer_in_the_facts) {
  static const char *const sources[] = {"history", "calibrated", "oracle"};
  double dur[NJOBS], pdur[NJOBS];
  int st[NJOBS], pst[NJOBS];
  sm_buf a, b;
  sm_rng rng;
  world *w1 = malloc(sizeof(world)), *w2 = malloc(sizeof(world));
  int checked = 0;

  ASSERT(w1 != NULL && w2 != NULL);
  sm_rng_seed(&rng, 17);
  for (int i = 0; i < NJOBS; i++) {
    dur[i] = pdur[i] = round(30 * exp(sm_rng_uniform(&rng) * 9));
    st[i] = pst[i] = sm_rng_uniform(&rng) < 0.8   ? 0
                     : sm_rng_uniform(&rng) < 0.5 ? 1
                                                  : 2;
  }
  /* Fisher-Yates over (duration, state) pairs. */
  for (int i = NJOBS - 1; i > 0; i--) {
    int k = (int)(sm_rng_uniform(&rng) * (i + 1));
    double d = pdur[i];
    int s = pst[i];
    pdur[i] = pdur[k];
    pst[i] = pst[k];
    pdur[k] = d;
    pst[k] = s;
  }
  sm_buf_init(&a, 0);
  sm_buf_init(&b, 0);
  write_trace(&a, dur, st);
  write_trace(&b, pdur, pst);
  for (size_t p = 0; sm_sim_policy_at(p) != NULL; p++) {
    const sm_sim_policy *pol = sm_sim_policy_at(p);
    if (strncmp(pol->name, "test-", 5) == 0)
      continue; /* policies other tests registered */
    if (pol->run != NULL)
      continue; /* its own job model (Sia): test_sia_policy.c permutes it */
    for (size_t s = 0; s < SM_ARRAY_LEN(sources); s++)
      for (int wl = 0; wl < 2; wl++) {
        char fp[32];
        const char *params[] = {"lucid.tables=builtin", fp,
                                wl ? "workloads=data/workloads" : "backfill=0",
                                "fail.model=resubmit", NULL};
        run x, y;
        int fp_differ = 0, have_fp = 0, have_world = 0;
        if (!wl && strcmp(sources[s], "oracle") == 0)
          continue; /* the oracle needs a catalogue */
        snprintf(fp, sizeof(fp), "facts=%s", sources[s]);
        x = simulate(sm_buf_str(&a), "a=6x8,b=3x8", pol->name, params);
        y = simulate(sm_buf_str(&b), "a=6x8,b=3x8", pol->name, params);
        capture(&x, w1);
        capture(&y, w2);
        for (int i = 0; i < NJOBS; i++) {
          if (strcmp(w1->workload[i], w2->workload[i]) != 0 ||
              strcmp(w1->profile[i], w2->profile[i]) != 0)
            SM_FAIL_AT("%s, facts %s%s: job j%d runs %s (%s) but %s (%s) "
                       "once the outcomes are shuffled",
                       pol->name, sources[s], wl ? ", templates" : "", i,
                       w1->workload[i], w1->profile[i], w2->workload[i],
                       w2->profile[i]);
          have_world |= w1->profile[i][0] != '\0';
          have_fp |= w1->fp[i] != 0;
          fp_differ += w1->fp[i] != w2->fp[i];
        }
        if (strcmp(sources[s], "oracle") == 0 && have_fp) {
          /* The outcome-based mapping is caught by the same check. */
          if (fp_differ < NJOBS / 4)
            SM_FAIL_AT("%s, facts oracle: only %d fingerprints moved with "
                       "the outcomes",
                       pol->name, fp_differ);
        } else if (fp_differ != 0) {
          SM_FAIL_AT("%s, facts %s%s: %d fingerprints changed when only "
                     "outcomes were shuffled",
                     pol->name, sources[s], wl ? ", templates" : "", fp_differ);
        }
        /* The SchedMate policies model a world, and the history and
         * oracle sources fingerprint every job. */
        if (pol->flags & SM_SIM_POLICY_FACTS) {
          ASSERT(have_world);
          ASSERT_EQ(have_fp, strcmp(sources[s], "calibrated") != 0);
          checked++;
        }
        done(&x);
        done(&y);
      }
  }
  ASSERT(checked >= 3 * 5); /* lucid+schedmate, sjf-schedmate(+fh) */
  free(w1);
  free(w2);
  sm_buf_release(&a);
  sm_buf_release(&b);
}

/* ==== Identity ==== */

/* A test policy: FIFO that opens the run's facts and, at the end, writes
 * every job's identity (hash of its identity key, groups known) into
 * id_out, by job id. */
typedef struct id_state {
  sm__facts *f;
  sm_sim_job **q;
  int n;
} id_state;

static uint64_t id_hash[NJOBS];
static unsigned id_known[NJOBS];

static int id_init(sm_sim *s, void **st, sm_err *err) {
  id_state *e = sm_calloc(1, sizeof(*e));

  *st = e;
  if (e == NULL || (e->q = sm_calloc(NJOBS + 1, sizeof(*e->q))) == NULL)
    return SM_ENOMEM;
  return sm__facts_open(s, &e->f, err);
}

static void id_release(sm_sim *s, void *st) {
  id_state *e = st;
  (void)s;
  if (e == NULL)
    return;
  sm__facts_free(e->f);
  sm_free(e->q);
  sm_free(e);
}

static void id_arrive(sm_sim *s, void *st, sm_sim_job *j) {
  id_state *e = st;
  (void)s;
  e->q[e->n++] = j;
}

static void id_schedule(sm_sim *s, void *st, int vc) {
  id_state *e = st;
  int k = 0;
  (void)vc;
  for (int i = 0; i < e->n; i++)
    if (k > 0 || !sm_sim_start(s, e->q[i]))
      e->q[k++] = e->q[i];
  e->n = k;
}

static void id_finalize(sm_sim *s, void *st) {
  id_state *e = st;

  for (size_t i = 0; i < sm_sim_job_count(s); i++) {
    const sm_sim_job *j = sm_sim_job_at(s, i);
    int k = atoi(j->id + 1);
    id_hash[k] = sm__facts_identity(e->f, j, &id_known[k]);
  }
}

static const sm_sim_policy id_policy = {"test-identity",
                                        "identity of every job",
                                        0,
                                        id_init,
                                        id_release,
                                        id_arrive,
                                        NULL,
                                        NULL,
                                        id_schedule,
                                        id_finalize};

/* The permutation test for identity: the same key and the same known
 * groups for every job when durations and end states are shuffled, in
 * the history source with and without a catalogue; the oracle's moves. */
SM_TEST(sim_permutation_test_no_answer_in_the_identity) {
  static uint64_t h1[NJOBS];
  static unsigned k1[NJOBS];
  double dur[NJOBS], pdur[NJOBS];
  int st[NJOBS], pst[NJOBS];
  sm_buf a, b;
  sm_rng rng;

  if (sm_sim_policy_find("test-identity") == NULL)
    ASSERT_OK(sm_sim_policy_register(&id_policy));
  sm_rng_seed(&rng, 23);
  for (int i = 0; i < NJOBS; i++) {
    dur[i] = pdur[i] = round(30 * exp(sm_rng_uniform(&rng) * 9));
    st[i] = pst[i] = sm_rng_uniform(&rng) < 0.8 ? 0 : 2;
  }
  for (int i = NJOBS - 1; i > 0; i--) {
    int k = (int)(sm_rng_uniform(&rng) * (i + 1));
    double d = pdur[i];
    int s = pst[i];
    pdur[i] = pdur[k];
    pst[i] = pst[k];
    pdur[k] = d;
    pst[k] = s;
  }
  sm_buf_init(&a, 0);
  sm_buf_init(&b, 0);
  write_trace(&a, dur, st);
  write_trace(&b, pdur, pst);
  for (int v = 0; v < 3; v++) {
    const char *params[] = {
        "lucid.tables=builtin", v == 2 ? "facts=oracle" : "facts=history",
        v ? "workloads=data/workloads" : "backfill=0", NULL};
    int moved = 0, enough = 0;
    run x = simulate(sm_buf_str(&a), "a=6x8,b=3x8", "test-identity", params);
    memcpy(h1, id_hash, sizeof(h1));
    memcpy(k1, id_known, sizeof(k1));
    done(&x);
    x = simulate(sm_buf_str(&b), "a=6x8,b=3x8", "test-identity", params);
    done(&x);
    for (int i = 0; i < NJOBS; i++) {
      ASSERT(h1[i] != 0);
      moved += h1[i] != id_hash[i] || k1[i] != id_known[i];
      enough += sm_identity_enough(k1[i]);
    }
    if (v == 2) {
      if (moved < NJOBS / 4)
        SM_FAIL_AT("facts oracle: only %d identities moved with the outcomes",
                   moved);
    } else if (moved != 0) {
      SM_FAIL_AT("facts history%s: %d identities changed when only outcomes "
                 "were shuffled",
                 v ? ", templates" : "", moved);
    }
    /* From the trace, some jobs can be identified and some cannot (no
     * user, no name); every template of the catalogue can. */
    ASSERT(enough > NJOBS / 4);
    ASSERT(v > 0 || enough < NJOBS);
  }
  sm_buf_release(&a);
  sm_buf_release(&b);
}
