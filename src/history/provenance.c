/* provenance.c - where an estimate's SM utilisation comes from: the
 * matches it is the mean of and what measured them (the node samplers'
 * NVML or Slurm's accounting, the GPU models, the driver versions), so
 * that a scheduler can tell a measured figure from a remembered one. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "schedmate/sm_history.h"

/* Writes the distinct non-empty values of one string field of the
 * completed matches that have an SM utilisation. */
static void distinct(const sm_advice *a, size_t off, sm_jw *w) {
  sm_jw_arr_begin(w);
  for (int i = 0; i < a->n_matches; i++) {
    const sm_record *r = &a->matches[i];
    const char *v = *(char *const *)((const char *)r + off);
    int seen = 0;
    if (v == NULL || v[0] == '\0' || r->end_state != SM_END_COMPLETED ||
        isnan(r->sm_util) || isnan(r->duration_s))
      continue;
    for (int k = 0; k < i && !seen; k++) {
      const sm_record *q = &a->matches[k];
      const char *u = *(char *const *)((const char *)q + off);
      seen = u != NULL && strcmp(u, v) == 0 &&
             q->end_state == SM_END_COMPLETED && !isnan(q->sm_util) &&
             !isnan(q->duration_s);
    }
    if (!seen)
      sm_jw_str(w, v);
  }
  sm_jw_arr_end(w);
}

/* Where the estimate's SM utilisation comes from: the matches it is the
 * mean of, their measurement sources, GPU models and driver versions
 * (null when no match has one). */
void sm_advice_write_util_provenance(const sm_advice *a, sm_jw *w) {
  if (a->est.n_util == 0) {
    sm_jw_null(w);
    return;
  }
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "n", a->est.n_util);
  sm_jw_key(w, "jobs");
  distinct(a, offsetof(sm_record, id), w);
  sm_jw_key(w, "sources");
  distinct(a, offsetof(sm_record, util_source), w);
  sm_jw_key(w, "gpu_models");
  distinct(a, offsetof(sm_record, gpu_model), w);
  sm_jw_key(w, "gpu_types");
  distinct(a, offsetof(sm_record, gpu_type), w);
  sm_jw_key(w, "driver_versions");
  distinct(a, offsetof(sm_record, driver_version), w);
  sm_jw_obj_end(w);
}
