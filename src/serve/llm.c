/* llm.c - the optional LLM stage in the service (docs/llm.md): the same
 * stages as the command, at the same places, with every claim verified by
 * src/llm exactly as there:
 *
 *   submit  the Advisor, on advice whose extraction of a repository left
 *           fields null (a job given by metadata gets none, as with
 *           `advise --meta`);
 *   run     the Tracker, on a progress answer without progress;
 *   exit    the Failure Handler, on a located failure the engine is unsure
 *           of (POST /v1/diagnose and the write-back's diagnosis); the
 *           planner gets the merged, never more actionable, diagnosis.
 *
 * Two rules keep a slow or failing model from hurting the service:
 *
 *   - deadlines: a stage runs with the client's per-thread cap set to the
 *     request's deadline less a margin (a tenth of its budget, at least
 *     20 ms), so every request it makes ends in time for the worker to
 *     answer with what it has: the deterministic answer, and the model's
 *     verified values if they came in time;
 *   - slots: a worker never waits for the model.  A channel lets at most
 *     workers - 1 of its workers into a stage at once (one always stays
 *     for deterministic answers), and all channels together at most the
 *     client's own concurrency limit, so no stage queues for a client
 *     handle.  A stage that finds no slot is skipped at once ("busy"),
 *     like one whose request has no time left ("deadline"); both are
 *     counted and said in the answer.
 *
 * Without a client (no --llm, no SCHEDMATE_LLM_URL) nothing here runs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "serve/serve_int.h"

static const char *const skip_names[SV_LLM_NSKIP] = {"busy", "deadline"};

int sv__llm_chat(const sm_serve *sv) {
  return sv->o.llm != NULL && sm_llm_has_chat(sv->o.llm);
}

void sv__llm_run_init(sv_llm_run *run) {
  memset(run, 0, sizeof(*run));
}

void sv__llm_run_release(sv_llm_run *run) {
  sm_llm_advise_res_release(&run->adv);
  sm_llm_track_res_release(&run->trk);
  sm_llm_diag_res_release(&run->dg);
  sv__llm_run_init(run);
}

double sv__llm_cutoff(const sv_req *r) {
  double budget, margin;

  if (r == NULL || r->deadline <= 0)
    return 0;
  budget = r->deadline - r->t0;
  margin = 0.1 * budget > 0.02 ? 0.1 * budget : 0.02;
  return r->deadline - margin;
}

/* One slot of a counter below cap, or 0. */
static int slot_take(atomic_int *busy, int cap) {
  int cur = atomic_load(busy);

  do {
    if (cur >= cap)
      return 0;
  } while (!atomic_compare_exchange_weak(busy, &cur, cur + 1));
  return 1;
}

static void skip(sm_serve *sv, sv_req *r, sv_llm_run *run, int why) {
  run->skipped = skip_names[why];
  if (r->ch >= 0 && r->ch < SM_SERVE_NCHANNELS)
    atomic_fetch_add(&sv->m.llm_skipped[r->ch][why], 1);
}

/* Takes a slot for r's channel and caps the thread's requests at r's
 * cutoff; 0 (skipped, said in run) when there is no slot or no time. */
static int take(sm_serve *sv, sv_req *r, sv_llm_run *run) {
  sv_channel *c;
  double cut = sv__llm_cutoff(r);

  if (r->ch < 0 || r->ch >= SM_SERVE_NCHANNELS) {
    skip(sv, r, run, SV_LLM_BUSY);
    return 0;
  }
  c = &sv->ch[r->ch];
  if (cut > 0 && cut <= sm_now()) {
    skip(sv, r, run, SV_LLM_DEADLINE);
    return 0;
  }
  if (!slot_take(&c->llm_busy, c->llm_cap)) {
    skip(sv, r, run, SV_LLM_BUSY);
    return 0;
  }
  if (!slot_take(&sv->llm_busy, sv->llm_cap)) {
    atomic_fetch_sub(&c->llm_busy, 1);
    skip(sv, r, run, SV_LLM_BUSY);
    return 0;
  }
  sm_llm_thread_deadline(cut);
  return 1;
}

static void give(sm_serve *sv, sv_req *r) {
  sm_llm_thread_deadline(0);
  atomic_fetch_sub(&sv->ch[r->ch].llm_busy, 1);
  atomic_fetch_sub(&sv->llm_busy, 1);
}

/* Rewrites the pinned name of a path in a stage's message to the
 * client's. */
static void unname(const sv_pin *pin, const char *user_path, char **detail) {
  char buf[SM_ERR_MSG_SIZE];
  char *d;

  if (pin == NULL || *detail == NULL || strstr(*detail, pin->proc) == NULL)
    return;
  snprintf(buf, sizeof(buf), "%s", *detail);
  sv__pin_unname(pin, user_path, buf, sizeof(buf));
  d = sm_strdup(buf);
  if (d) {
    sm_free(*detail);
    *detail = d;
  }
}

/* ==== The stages ==== */

void sv__llm_advise(sm_serve *sv, sv_req *r, const sm_extract_req *q,
                    const sv_pin *pin, const char *user_repo, sm_meta *meta,
                    sv_llm_run *run) {
  sm_err err = {0};
  int needs = 0;

  if (!sv__llm_chat(sv))
    return;
  run->stage = 'a';
  for (int f = 0; f < SM_META_NFIELDS; f++)
    needs |= !meta->f[f].known;
  /* Nothing unknown: the stage asks nothing (no slot needed). */
  if (needs && !take(sv, r, run))
    return;
  if (sm_llm_advise(sv->o.llm, q, meta, 0, &run->adv, &err) != 0)
    sv__log(sv, SM_SERVE_WARN, "llm advisor: %s", err.msg);
  if (needs)
    give(sv, r);
  unname(pin, user_repo, &run->adv.reason_detail);
}

void sv__llm_track(sm_serve *sv, sv_req *r, const char *path,
                   sm_track_result *t, sv_llm_run *run) {
  sm_err err = {0};
  int needs;

  if (!sv__llm_chat(sv))
    return;
  run->stage = 't';
  /* The stage's own rule (sm_llm_track), to know whether it asks. */
  needs = !t->binary && (sm_llm_get_config(sv->o.llm)->always || !t->ok ||
                         (!t->has_step && isnan(t->loss)));
  if (needs && !take(sv, r, run))
    return;
  if (sm_llm_track(sv->o.llm, path, t, &run->trk, &err) != 0)
    sv__log(sv, SM_SERVE_WARN, "llm tracker: %s", err.msg);
  if (needs)
    give(sv, r);
}

void sv__llm_diagnose(sm_serve *sv, sv_req *r, const char *path,
                      const sv_pin *pin, const char *user_path,
                      const sm_diagnosis *d, double threshold,
                      sm_diagnosis *for_plan, sm_diagnosis *for_output,
                      sv_llm_run *run) {
  sm_err err = {0};
  int needs;

  *for_plan = *for_output = *d;
  if (!sv__llm_chat(sv))
    return;
  run->stage = 'd';
  if (threshold <= 0)
    threshold = 0.8;
  /* The stage's own rule (sm_llm_diagnose), to know whether it asks. */
  needs = d->failure && d->first_error_line >= 1 &&
          (sm_llm_get_config(sv->o.llm)->always ||
           strcmp(d->category, "unknown") == 0 || d->confidence < threshold);
  if (needs && !take(sv, r, run))
    return;
  if (sm_llm_diagnose(sv->o.llm, path, d, threshold, &run->dg, &err) != 0)
    sv__log(sv, SM_SERVE_WARN, "llm failure handler: %s", err.msg);
  if (needs)
    give(sv, r);
  unname(pin, user_path, &run->dg.reason_detail);
  sm_llm_diagnosis_merge(d, &run->dg, for_plan, for_output);
}

void sv__llm_plan_note(sv_llm_run *run, sm_plan *p) {
  if (run->stage == 'd' && run->dg.disagreement[0] &&
      p->n_gates < SM_PLAN_MAX_GATES)
    p->gates[p->n_gates++] = run->dg.disagreement;
}

/* ==== Embeddings (--embed) ==== */

int sv__llm_embed(sm_serve *sv, sv_req *r, const sm_meta *m,
                  const sm_fp_extra *x, float *fp, sm_err *err) {
  sv_llm_run tmp;
  int rc;

  sv__llm_run_init(&tmp);
  if (!take(sv, r, &tmp))
    return sm_err_set(err, SM_EBUSY,
                      tmp.skipped && strcmp(tmp.skipped, "deadline") == 0
                          ? "no time left before the request's deadline"
                          : "every LLM slot is taken (busy)");
  rc = sm_llm_fingerprint(sv->o.llm, m, x, fp, err);
  give(sv, r);
  return rc;
}

int sv__llm_embedding(const sm_serve *sv) {
  return sv->o.llm != NULL && sm_llm_has_embed(sv->o.llm);
}

int sv__llm_check_history(sm_serve *sv, sm_err *err) {
  const char *mine = sv__llm_embedding(sv) ? sm_llm_embedder(sv->o.llm)
                                           : SM_LLM_EMBEDDER_BUILTIN;
  char theirs[160];
  int rc = sm_llm_history_embedder(sv->hist.store, theirs, sizeof(theirs), err);

  if (rc != 0)
    return rc;
  if (theirs[0] != '\0' && strcmp(theirs, mine) != 0)
    return sm_err_set(err, SM_EINVAL,
                      "serve: the history's fingerprints are by embedder %s, "
                      "the service's write-backs would be by %s; a history "
                      "never mixes embedders (%s, or another --db)",
                      theirs, mine,
                      strcmp(theirs, SM_LLM_EMBEDDER_BUILTIN) == 0
                          ? "drop --embed"
                          : "give the same --embed and --embed-model");
  return 0;
}

/* ==== Output ==== */

void sv__llm_stage_json(const sv_llm_run *run, const sm_meta *meta, sm_jw *w) {
  if (run == NULL)
    return;
  if (run->stage == 'a' && meta != NULL)
    sm_llm_advise_write_json(&run->adv, meta, w);
  else if (run->stage == 't')
    sm_llm_track_write_json(&run->trk, w);
  else if (run->stage == 'd')
    sm_llm_diag_write_json(&run->dg, w);
  if (run->stage && run->skipped)
    sm_jw_kv_str(w, "llm_skipped", run->skipped);
}

void sv__llm_members(sm_serve *sv, const sv_llm_run *run, const sm_meta *meta,
                     sm_jw *w) {
  sm_llm *l = sv->o.llm;

  if (l == NULL)
    return;
  sv__llm_stage_json(run, meta, w);
  if (sm_llm_has_embed(l))
    sm_jw_kv_str(w, "embedder", sm_llm_embedder(l));
  /* The service's client: its counters since the start. */
  sm_jw_key(w, "llm_stats");
  sm_llm_stats_write_json(l, w);
}

int sv__llm_append(sm_serve *sv, const sv_llm_run *run, const sm_meta *meta,
                   sm_buf *buf) {
  sm_jw w;
  size_t n = buf->len;

  if (sv->o.llm == NULL)
    return 0;
  while (n > 0 && (buf->data[n - 1] == '\n' || buf->data[n - 1] == ' '))
    n--;
  if (n < 2 || buf->data[n - 1] != '}')
    return SM_EINVAL;
  buf->len = n - 1;
  buf->data[buf->len] = '\0';
  /* Reopen the object: one level deep, members already written. */
  sm_jw_init(&w, buf);
  w.depth = 1;
  w.first[1] = buf->data[buf->len - 1] == '{';
  sv__llm_members(sv, run, meta, &w);
  sm_jw_obj_end(&w);
  return sm_jw_finish(&w);
}

void sv__llm_metrics(sm_serve *sv, sm_buf *b) {
  static const char name[] = "schedmate_serve_llm_skipped_total";

  sm_buf_addf(b,
              "# HELP %s LLM stages a request needed but did not run: no "
              "free slot (busy) or no time left before its deadline.\n"
              "# TYPE %s counter\n",
              name, name);
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    for (int k = 0; k < SV_LLM_NSKIP; k++)
      sm_buf_addf(b, "%s{channel=\"%s\",reason=\"%s\"} %llu\n", name,
                  sv__channel_names[c], skip_names[k],
                  (unsigned long long)atomic_load(&sv->m.llm_skipped[c][k]));
  sm_buf_addf(b,
              "# HELP schedmate_serve_llm_busy Workers of each channel inside "
              "an LLM stage.\n# TYPE schedmate_serve_llm_busy gauge\n");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_llm_busy{channel=\"%s\"} %d\n",
                sv__channel_names[c], atomic_load(&sv->ch[c].llm_busy));
  sm_buf_addf(b,
              "# HELP schedmate_serve_llm_slots Workers of each channel that "
              "may be inside an LLM stage at once.\n"
              "# TYPE schedmate_serve_llm_slots gauge\n");
  for (int c = 0; c < SM_SERVE_NCHANNELS; c++)
    sm_buf_addf(b, "schedmate_serve_llm_slots{channel=\"%s\"} %d\n",
                sv__channel_names[c],
                sv->ch[c].llm_cap < sv->llm_cap ? sv->ch[c].llm_cap
                                                : sv->llm_cap);
  sm_llm_stats_write_prom(sv->o.llm, NULL, b);
}
