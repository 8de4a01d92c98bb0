/* audit.c - the agent's append-only audit log: one JSON object a line,
 * one line per decision, written with a single O_APPEND write so that
 * lines from the main thread and the socket server never mix. */
#include <math.h>
#include <time.h>

#include "slurm/slurm_int.h"

void sm__audit_begin(sm_slurm_agent *a, sm_jw *w, sm_buf *b,
                     const char *channel, const char *decision, uint32_t job) {
  char ts[32];
  double now = sm__wall();
  time_t t = (time_t)now;
  struct tm tm;

  sm_buf_init(b, (size_t)1 << 20);
  sm_jw_init(w, b);
  gmtime_r(&t, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "time", ts);
  sm_jw_kv_num(w, "epoch", floor(now * 1000) / 1000);
  sm_jw_kv_str(w, "mode", a->o.enforce ? "enforce" : "shadow");
  sm_jw_kv_str(w, "channel", channel);
  sm_jw_kv_str(w, "decision", decision);
  sm_jw_key(w, "job");
  if (job != 0)
    sm_jw_int(w, job);
  else
    sm_jw_null(w);
}

void sm__audit_end(sm_slurm_agent *a, sm_jw *w, sm_buf *b, int executed,
                   const char *result) {
  sm_err e = {0};

  sm_jw_kv_bool(w, "executed", executed);
  sm_jw_key(w, "result");
  if (result != NULL)
    sm_jw_str(w, result);
  else
    sm_jw_null(w);
  sm_jw_obj_end(w);
  if (sm_jw_finish(w) != 0 || sm_buf_addc(b, '\n') != 0) {
    sm__log(a, SM_SLURM_ERROR, "audit: cannot format a record");
    sm_buf_release(b);
    return;
  }
  if (a->o.audit_path != NULL &&
      sm_append_line(a->o.audit_path, b->data, b->len, &e) != 0)
    sm__log(a, SM_SLURM_ERROR, "audit: %s", e.msg);
  sm_buf_release(b);
}
