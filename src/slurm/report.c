/* report.c - what the agent tells people after every pass: the JSON
 * status file and the Prometheus text file, both rewritten atomically
 * (written beside, then renamed).  Each running job's part comes from the
 * run channel (run.c); the audit log is audit.c's. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "schedmate/sm_llm.h"
#include "slurm/slurm_int.h"

/* ==== Files rewritten every pass ==== */

static int write_atomic(sm_slurm_agent *a, const char *path, const sm_buf *b) {
  char tmp[4096];
  FILE *f;
  int ok;

  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
    return -1;
  f = fopen(tmp, "w");
  if (f == NULL) {
    sm__log(a, SM_SLURM_WARN, "%s: %s", tmp, strerror(errno));
    return -1;
  }
  ok = fwrite(b->data ? b->data : "", 1, b->len, f) == b->len;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, path) != 0) {
    sm__log(a, SM_SLURM_WARN, "%s: cannot write: %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

static void counters_json(const sm_slurm_counters *c, sm_jw *w) {
  static const char *const names[] = {
      "passes",        "slurm_errors", "advised", "estimates",
      "priority_sets", "diagnosed",    "drains",  "requeues",
      "written_back",  "interference", "answers", "answers_no",
      "actions_failed"};
  const uint64_t v[] = {c->passes,        c->slurm_errors,  c->advised,
                        c->estimates,     c->priority_sets, c->diagnosed,
                        c->drains,        c->requeues,      c->written_back,
                        c->interference,  c->answers,       c->answers_no,
                        c->actions_failed};
  sm_jw_obj_begin(w);
  for (size_t i = 0; i < SM_ARRAY_LEN(names); i++) {
    sm_jw_key(w, names[i]);
    sm_jw_int(w, (long long)v[i]);
  }
  sm_jw_obj_end(w);
}

static void status_write(sm_slurm_agent *a, const sm_slurm_counters *c) {
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, (size_t)64 << 20);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "time");
  sm_jw_num(&w, floor(sm__wall()));
  sm_jw_key(&w, "mode");
  sm_jw_str(&w, a->o.enforce ? "enforce" : "shadow");
  sm_jw_key(&w, "cluster");
  sm_jw_str(&w, a->be.cluster);
  sm_jw_key(&w, "slurm");
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "ok");
  sm_jw_bool(&w, a->slurm_ok);
  sm_jw_key(&w, "message");
  if (a->slurm_ok)
    sm_jw_null(&w);
  else
    sm_jw_str(&w, a->slurm_msg);
  sm_jw_key(&w, "last_pass");
  sm_jw_num(&w, a->last_pass > 0 ? floor(a->last_pass) : NAN);
  sm_jw_obj_end(&w);
  sm_jw_key(&w, "counters");
  counters_json(c, &w);
  if (a->o.llm != NULL) {
    sm_jw_key(&w, "llm");
    sm_llm_stats_write_json(a->o.llm, &w);
  }
  sm_jw_key(&w, "jobs");
  sm_jw_arr_begin(&w);
  for (int i = 0; i < a->n_jobs; i++) {
    const sm__sjob *j = &a->jobs[i];
    if (j->seen != a->pass || sm_slurm_state_ended(j->state))
      continue;
    sm_jw_obj_begin(&w);
    sm_jw_key(&w, "job_id");
    sm_jw_int(&w, j->id);
    sm_jw_key(&w, "state");
    sm_jw_str(&w, sm_slurm_state_name(j->state));
    sm_jw_key(&w, "name");
    if (j->name)
      sm_jw_str(&w, j->name);
    else
      sm_jw_null(&w);
    sm_jw_key(&w, "estimate_s");
    sm_jw_num(&w, j->has_est ? j->est_s : NAN);
    sm_jw_key(&w, "note");
    if (j->note)
      sm_jw_str(&w, j->note);
    else
      sm_jw_null(&w);
    sm__run_json(j, &w);
    sm_jw_obj_end(&w);
  }
  sm_jw_arr_end(&w);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) == 0 && sm_buf_addc(&b, '\n') == 0)
    write_atomic(a, a->o.status_path, &b);
  else
    sm__log(a, SM_SLURM_WARN, "%s: status too large", a->o.status_path);
  sm_buf_release(&b);
}

static void metrics_write(sm_slurm_agent *a, const sm_slurm_counters *c) {
  sm_buf b;
  static const struct {
    const char *name, *help;
    size_t off;
  } ctr[] = {
      {"passes", "Passes that loaded the job list.",
       offsetof(sm_slurm_counters, passes)},
      {"slurm_errors", "Passes that could not reach slurmctld.",
       offsetof(sm_slurm_counters, slurm_errors)},
      {"advised", "Jobs advised by the submit channel.",
       offsetof(sm_slurm_counters, advised)},
      {"estimates", "Advised jobs that got a duration estimate.",
       offsetof(sm_slurm_counters, estimates)},
      {"priority_decisions", "Priority decisions (SchedMate-SJF).",
       offsetof(sm_slurm_counters, priority_sets)},
      {"diagnosed", "Ended jobs whose log was diagnosed.",
       offsetof(sm_slurm_counters, diagnosed)},
      {"drains", "Node drain decisions.", offsetof(sm_slurm_counters, drains)},
      {"requeues", "Job requeue decisions.",
       offsetof(sm_slurm_counters, requeues)},
      {"written_back", "Ended runs written into the history.",
       offsetof(sm_slurm_counters, written_back)},
      {"interference", "Slowdowns flagged after a job joined a node.",
       offsetof(sm_slurm_counters, interference)},
      {"plugin_answers", "Plugin requests answered with an annotation.",
       offsetof(sm_slurm_counters, answers)},
      {"plugin_refusals", "Plugin requests answered NO.",
       offsetof(sm_slurm_counters, answers_no)},
      {"actions_failed", "Enforce-mode actions that Slurm refused.",
       offsetof(sm_slurm_counters, actions_failed)},
  };

  sm_buf_init(&b, (size_t)64 << 20);
  sm_buf_addf(&b,
              "# HELP schedmate_slurm_up 1 when the last pass reached "
              "slurmctld.\n# TYPE schedmate_slurm_up gauge\n"
              "schedmate_slurm_up %d\n",
              a->slurm_ok);
  sm_buf_addf(&b,
              "# HELP schedmate_agent_enforce 1 in enforce mode, 0 in "
              "shadow mode.\n# TYPE schedmate_agent_enforce gauge\n"
              "schedmate_agent_enforce %d\n",
              a->o.enforce ? 1 : 0);
  for (size_t i = 0; i < SM_ARRAY_LEN(ctr); i++)
    sm_buf_addf(
        &b,
        "# HELP schedmate_agent_%s_total %s\n"
        "# TYPE schedmate_agent_%s_total counter\n"
        "schedmate_agent_%s_total %llu\n",
        ctr[i].name, ctr[i].help, ctr[i].name, ctr[i].name,
        (unsigned long long)*(const uint64_t *)((const char *)c + ctr[i].off));
  sm__run_prom(a, &b);
  if (a->o.llm != NULL)
    sm_llm_stats_write_prom(a->o.llm, NULL, &b);
  write_atomic(a, a->o.metrics_path, &b);
  sm_buf_release(&b);
}

void sm__report_write(sm_slurm_agent *a) {
  sm_slurm_counters c;

  sm_slurm_agent_counters(a, &c);
  if (a->o.status_path != NULL)
    status_write(a, &c);
  if (a->o.metrics_path != NULL)
    metrics_write(a, &c);
}
