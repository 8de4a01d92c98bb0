/* record.c - a job record with its outcome: life cycle, end states and the
 * JSON-lines form used by `history export` and `history import`. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "history/history_int.h"
#include "schedmate/sm_history.h"

static const char *const end_names[SM_END__COUNT] = {
    "completed",    "canceled", "failed_user", "failed_framework",
    "failed_infra", "failed",   "unknown"};

const char *sm_end_state_name(sm_end_state s) {
  return (unsigned)s < SM_END__COUNT ? end_names[s] : "unknown";
}

sm_end_state sm_end_state_of_category(const char *category,
                                      sm_end_state fallback) {
  if (category != NULL && strcmp(category, "infrastructure") == 0)
    return SM_END_FAILED_INFRA;
  if (category != NULL && strcmp(category, "framework") == 0)
    return SM_END_FAILED_FRAMEWORK;
  if (category != NULL && strcmp(category, "user") == 0)
    return SM_END_FAILED_USER;
  return fallback;
}

int sm_end_state_parse(const char *s, sm_end_state *out) {
  static const struct {
    const char *name;
    sm_end_state state;
  } aliases[] = {
      {"cancelled", SM_END_CANCELED},     {"timeout", SM_END_CANCELED},
      {"node_fail", SM_END_FAILED_INFRA}, {"success", SM_END_COMPLETED},
      {"pass", SM_END_COMPLETED},
  };

  if (s == NULL)
    return SM_EINVAL;
  for (int i = 0; i < SM_END__COUNT; i++)
    if (strcasecmp(s, end_names[i]) == 0) {
      *out = (sm_end_state)i;
      return 0;
    }
  for (size_t i = 0; i < SM_ARRAY_LEN(aliases); i++)
    if (strcasecmp(s, aliases[i].name) == 0) {
      *out = aliases[i].state;
      return 0;
    }
  return SM_EINVAL;
}

void sm_record_init(sm_record *r) {
  memset(r, 0, sizeof(*r));
  sm_meta_init(&r->meta);
  r->duration_s = NAN;
  r->sm_util = NAN;
  r->throughput = NAN;
  r->submit_time = NAN;
  r->added_at = NAN;
  r->gpu_mem_mib = NAN;
  r->end_state = SM_END_UNKNOWN;
}

void sm_record_release(sm_record *r) {
  sm_free(r->id);
  sm_meta_release(&r->meta);
  sm_free(r->user);
  sm_free(r->name);
  sm_free(r->vc);
  sm_free(r->gpu_type);
  sm_free(r->sw_version);
  for (int i = 0; i < r->n_perf; i++)
    sm_free(r->perf[i].gpu_type);
  sm_free(r->perf);
  sm_free(r->outcome);
  sm_free(r->util_source);
  sm_free(r->gpu_model);
  sm_free(r->driver_version);
  sm_free(r->embedder);
  sm_record_init(r);
}

int sm_record_add_perf(sm_record *r, const char *gpu_type, int gpus, int batch,
                       double throughput) {
  sm_perf_point *p = sm_realloc(r->perf, (size_t)(r->n_perf + 1) * sizeof(*p));
  char *g;

  if (p == NULL)
    return SM_ENOMEM;
  r->perf = p;
  g = sm_strdup(gpu_type ? gpu_type : "");
  if (g == NULL)
    return SM_ENOMEM;
  p[r->n_perf].gpu_type = g;
  p[r->n_perf].gpus = gpus;
  p[r->n_perf].batch = batch;
  p[r->n_perf].throughput = throughput;
  r->n_perf++;
  return 0;
}

void sm_record_fingerprint(sm_record *r) {
  sm_fp_extra x = {r->user, r->name, r->vc};
  sm_fingerprint(&r->meta, &x, r->fp);
}

/* ==== Ranges ==== */

/* What a number of a record may be.  Unknown (NAN) is allowed for every
 * field (duration_s is required by `history add`, not here). */
#define MAX_DURATION_S (10.0 * 365 * 86400) /* ten years */
#define MAX_THROUGHPUT 1e12                 /* per second, any unit */
#define MAX_UNIX_TIME 1e11                  /* year 5138 */
#define MAX_PERF_GPUS 1000000
#define MAX_PERF_BATCH (1 << 30)
#define MAX_META_INT 9007199254740992.0 /* 2^53: exact in a double */
#define MAX_META_LR 1e3

/* 0 when v is unknown or finite in [lo, hi]. */
static int in_range(double v, double lo, double hi) {
  return isnan(v) || (isfinite(v) && v >= lo && v <= hi);
}

static int range_error(const sm_record *r, const char *field, double v,
                       double lo, double hi, sm_err *err) {
  return sm_err_set(err, SM_ERANGE,
                    "record %s: %s = %.17g is out of range [%g, %g]",
                    r->id ? r->id : "(no id)", field, v, lo, hi);
}

int sm_record_check(const sm_record *r, sm_err *err) {
  static const struct {
    const char *name;
    size_t off;
    double lo, hi;
  } nums[] = {
      {"duration_s", offsetof(sm_record, duration_s), 0, MAX_DURATION_S},
      {"sm_util", offsetof(sm_record, sm_util), 0, 100},
      {"throughput", offsetof(sm_record, throughput), 0, MAX_THROUGHPUT},
      {"submit_time", offsetof(sm_record, submit_time), 0, MAX_UNIX_TIME},
      {"added_at", offsetof(sm_record, added_at), 0, MAX_UNIX_TIME},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(nums); i++) {
    double v;
    memcpy(&v, (const char *)r + nums[i].off, sizeof(v));
    if (!in_range(v, nums[i].lo, nums[i].hi))
      return range_error(r, nums[i].name, v, nums[i].lo, nums[i].hi, err);
  }
  if ((unsigned)r->end_state >= SM_END__COUNT)
    return sm_err_set(err, SM_ERANGE, "record %s: end_state %d is not a state",
                      r->id ? r->id : "(no id)", (int)r->end_state);
  for (int i = 0; i < r->n_perf; i++) {
    const sm_perf_point *p = &r->perf[i];
    if (p->gpus < 1 || p->gpus > MAX_PERF_GPUS)
      return range_error(r, "perf gpus", p->gpus, 1, MAX_PERF_GPUS, err);
    if (p->batch < 0 || p->batch > MAX_PERF_BATCH)
      return range_error(r, "perf batch", p->batch, 0, MAX_PERF_BATCH, err);
    if (!(isfinite(p->throughput) && p->throughput > 0 &&
          p->throughput <= MAX_THROUGHPUT))
      return range_error(r, "perf throughput", p->throughput, 0, MAX_THROUGHPUT,
                         err);
  }
  for (int f = 0; f < SM_META_NFIELDS; f++) {
    const sm_meta_value *v = &r->meta.f[f];
    sm_meta_type t = sm_meta_type_of((sm_meta_field)f);
    double hi = t == SM_META_INT ? MAX_META_INT : MAX_META_LR;
    if (!v->known || t == SM_META_STR)
      continue;
    if (!(isfinite(v->num) && v->num >= 0 && v->num <= hi))
      return range_error(r, sm_meta_name((sm_meta_field)f), v->num, 0, hi, err);
  }
  return 0;
}

/* ==== JSON ==== */

void sm__record_write_usage(const sm_record *r, sm_jw *w) {
  sm_jw_kv_num(w, "duration_s", r->duration_s);
  sm_jw_kv_num(w, "sm_util", r->sm_util);
  sm_jw_kv_num(w, "gpu_mem_mib", r->gpu_mem_mib);
  sm_jw_kv_str(w, "util_source", r->util_source);
  sm_jw_kv_str(w, "gpu_model", r->gpu_model);
  sm_jw_kv_str(w, "driver_version", r->driver_version);
  sm_jw_kv_str(w, "end_state", sm_end_state_name(r->end_state));
}

void sm_record_write_json(const sm_record *r, sm_jw *w) {
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "id", r->id);
  sm__record_write_usage(r, w);
  sm_jw_kv_str(w, "gpu_type", r->gpu_type);
  sm_jw_kv_num(w, "throughput", r->throughput);
  sm_jw_kv_num(w, "submit_time", r->submit_time);
  sm_jw_kv_str(w, "sw_version", r->sw_version);
  sm_jw_kv_str(w, "user", r->user);
  sm_jw_kv_str(w, "name", r->name);
  sm_jw_kv_str(w, "vc", r->vc);
  sm_jw_kv_num(w, "added_at", r->added_at);
  sm_jw_key(w, "metadata");
  sm_meta_write_json(&r->meta, w);
  sm_jw_key(w, "evidence");
  sm_meta_write_evidence(&r->meta, w);
  if (r->meta.config_digest != NULL || r->meta.residue_digest != NULL) {
    sm_jw_key(w, "configuration");
    sm_meta_write_digests(&r->meta, w);
  }
  sm_jw_key(w, "perf");
  sm_jw_arr_begin(w);
  for (int i = 0; i < r->n_perf; i++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "gpu_type", r->perf[i].gpu_type);
    sm_jw_kv_int(w, "gpus", r->perf[i].gpus);
    sm_jw_kv_int(w, "batch", r->perf[i].batch);
    sm_jw_kv_num(w, "throughput", r->perf[i].throughput);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  if (r->outcome != NULL) {
    sm_jw_key(w, "outcome");
    sm_jw_raw(w, r->outcome);
  }
  if (r->embedder != NULL) { /* another embedder: fp cannot be remade */
    sm_jw_kv_str(w, "embedder", r->embedder);
    sm_jw_key(w, "fp");
    sm_jw_arr_begin(w);
    for (int i = 0; i < SM_FP_DIMS; i++)
      sm_jw_num(w, r->fp[i]);
    sm_jw_arr_end(w);
  }
  sm_jw_obj_end(w);
}

/* Reads an optional number member: absent/null keeps NAN. */
static int get_num(cJSON *o, const char *key, double *out, sm_err *err) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

  if (v == NULL || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return sm_err_set(err, SM_EPARSE, "record: %s must be a number", key);
  *out = v->valuedouble;
  return 0;
}

static int get_str(cJSON *o, const char *key, char **out, sm_err *err) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

  if (v == NULL || cJSON_IsNull(v))
    return 0;
  if (!cJSON_IsString(v))
    return sm_err_set(err, SM_EPARSE, "record: %s must be a string", key);
  *out = sm_strdup(v->valuestring);
  return *out ? 0 : sm_err_set(err, SM_ENOMEM, "record: out of memory");
}

/* The fingerprint of another embedder: SM_FP_DIMS finite numbers. */
static int get_fp(cJSON *o, sm_record *r, sm_err *err) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "fp"), *x;
  int i = 0;

  if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != SM_FP_DIMS)
    return sm_err_set(err, SM_EPARSE,
                      "record %s: embedder %s needs \"fp\" with %d numbers",
                      r->id, r->embedder, SM_FP_DIMS);
  cJSON_ArrayForEach(x, v) {
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
        fabs(x->valuedouble) > 1.0001)
      return sm_err_set(err, SM_EPARSE, "record %s: bad fp value", r->id);
    r->fp[i++] = (float)x->valuedouble;
  }
  return 0;
}

int sm_record_from_json(sm_record *r, const char *json, size_t n, sm_err *err) {
  cJSON *o = cJSON_ParseWithLength(json, n), *v;
  int rc = 0;

  sm_record_release(r);
  if (o == NULL || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return sm_err_set(err, SM_EPARSE, "record: not a JSON object");
  }
  rc = get_str(o, "id", &r->id, err);
  if (rc == 0 && (r->id == NULL || r->id[0] == '\0'))
    rc = sm_err_set(err, SM_EPARSE, "record: missing \"id\"");
  if (rc == 0)
    rc = get_num(o, "duration_s", &r->duration_s, err);
  if (rc == 0 && !(r->duration_s >= 0))
    rc = sm_err_set(err, SM_EPARSE,
                    "record %s: duration_s must be a number >= 0", r->id);
  if (rc == 0)
    rc = get_num(o, "sm_util", &r->sm_util, err);
  if (rc == 0)
    rc = get_num(o, "gpu_mem_mib", &r->gpu_mem_mib, err);
  if (rc == 0 && !isnan(r->gpu_mem_mib) && r->gpu_mem_mib < 0)
    rc = sm_err_set(err, SM_EPARSE, "record %s: gpu_mem_mib must be >= 0",
                    r->id);
  if (rc == 0)
    rc = get_str(o, "util_source", &r->util_source, err);
  if (rc == 0)
    rc = get_str(o, "gpu_model", &r->gpu_model, err);
  if (rc == 0)
    rc = get_str(o, "driver_version", &r->driver_version, err);
  if (rc == 0)
    rc = get_num(o, "throughput", &r->throughput, err);
  if (rc == 0)
    rc = get_num(o, "submit_time", &r->submit_time, err);
  if (rc == 0)
    rc = get_num(o, "added_at", &r->added_at, err);
  if (rc == 0)
    rc = get_str(o, "gpu_type", &r->gpu_type, err);
  if (rc == 0)
    rc = get_str(o, "sw_version", &r->sw_version, err);
  if (rc == 0)
    rc = get_str(o, "user", &r->user, err);
  if (rc == 0)
    rc = get_str(o, "name", &r->name, err);
  if (rc == 0)
    rc = get_str(o, "vc", &r->vc, err);
  if (rc == 0) {
    v = cJSON_GetObjectItemCaseSensitive(o, "end_state");
    if (v != NULL && !cJSON_IsNull(v) &&
        (!cJSON_IsString(v) ||
         sm_end_state_parse(v->valuestring, &r->end_state) != 0))
      rc = sm_err_set(err, SM_EPARSE, "record %s: bad end_state", r->id);
  }
  if (rc == 0) {
    v = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    if (v != NULL && !cJSON_IsNull(v)) {
      /* Re-serialise the metadata + evidence members for the meta reader. */
      cJSON *wrap = cJSON_CreateObject();
      char *txt;
      cJSON_AddItemReferenceToObject(wrap, "metadata", v);
      if (cJSON_GetObjectItemCaseSensitive(o, "evidence"))
        cJSON_AddItemReferenceToObject(
            wrap, "evidence", cJSON_GetObjectItemCaseSensitive(o, "evidence"));
      if (cJSON_GetObjectItemCaseSensitive(o, "configuration"))
        cJSON_AddItemReferenceToObject(
            wrap, "configuration",
            cJSON_GetObjectItemCaseSensitive(o, "configuration"));
      txt = cJSON_PrintUnformatted(wrap);
      cJSON_Delete(wrap);
      if (txt == NULL)
        rc = sm_err_set(err, SM_ENOMEM, "record: out of memory");
      else {
        rc = sm_meta_from_json(&r->meta, txt, strlen(txt), err);
        cJSON_free(txt);
      }
    }
  }
  if (rc == 0) {
    v = cJSON_GetObjectItemCaseSensitive(o, "perf");
    if (v != NULL && !cJSON_IsNull(v)) {
      cJSON *p;
      if (!cJSON_IsArray(v))
        rc = sm_err_set(err, SM_EPARSE, "record %s: perf must be an array",
                        r->id);
      cJSON_ArrayForEach(p, v) {
        cJSON *g = cJSON_GetObjectItemCaseSensitive(p, "gpu_type");
        cJSON *n1 = cJSON_GetObjectItemCaseSensitive(p, "gpus");
        cJSON *b = cJSON_GetObjectItemCaseSensitive(p, "batch");
        cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "throughput");
        if (rc != 0)
          break;
        if (!cJSON_IsString(g) || !cJSON_IsNumber(n1) || !cJSON_IsNumber(t) ||
            (b != NULL && !cJSON_IsNumber(b)))
          rc = sm_err_set(err, SM_EPARSE, "record %s: bad perf point", r->id);
        else if (!(n1->valuedouble >= 1 && n1->valuedouble <= MAX_PERF_GPUS &&
                   n1->valuedouble == floor(n1->valuedouble)))
          rc = range_error(r, "perf gpus", n1->valuedouble, 1, MAX_PERF_GPUS,
                           err);
        else if (b != NULL &&
                 !(b->valuedouble >= 0 && b->valuedouble <= MAX_PERF_BATCH &&
                   b->valuedouble == floor(b->valuedouble)))
          rc = range_error(r, "perf batch", b->valuedouble, 0, MAX_PERF_BATCH,
                           err);
        else
          rc = sm_record_add_perf(r, g->valuestring, n1->valueint,
                                  b ? b->valueint : 0, t->valuedouble);
      }
    }
  }
  if (rc == 0) {
    v = cJSON_GetObjectItemCaseSensitive(o, "outcome");
    if (v != NULL && !cJSON_IsNull(v)) {
      char *txt = cJSON_IsObject(v) ? cJSON_PrintUnformatted(v) : NULL;
      if (!cJSON_IsObject(v))
        rc = sm_err_set(err, SM_EPARSE, "record %s: outcome must be an object",
                        r->id);
      else if (txt == NULL || (r->outcome = sm_strdup(txt)) == NULL)
        rc = sm_err_set(err, SM_ENOMEM, "record: out of memory");
      cJSON_free(txt);
    }
  }
  if (rc == 0)
    rc = get_str(o, "embedder", &r->embedder, err);
  if (rc == 0 && r->embedder != NULL)
    rc = get_fp(o, r, err);
  cJSON_Delete(o);
  if (rc == 0 && sm_record_check(r, err) != 0)
    rc = SM_EPARSE;
  if (rc != 0) {
    sm_record_release(r);
    return rc;
  }
  if (r->embedder == NULL)
    sm_record_fingerprint(r);
  return 0;
}

static int dup_into(char **dst, const char *src) {
  *dst = NULL;
  if (src == NULL)
    return 0;
  *dst = sm_strdup(src);
  return *dst ? 0 : SM_ENOMEM;
}

int sm__record_copy(sm_record *dst, const sm_record *src) {
  int rc = 0;

  sm_record_release(dst);
  rc |= dup_into(&dst->id, src->id);
  rc |= dup_into(&dst->user, src->user);
  rc |= dup_into(&dst->name, src->name);
  rc |= dup_into(&dst->vc, src->vc);
  rc |= dup_into(&dst->gpu_type, src->gpu_type);
  rc |= dup_into(&dst->sw_version, src->sw_version);
  rc |= dup_into(&dst->outcome, src->outcome);
  rc |= dup_into(&dst->util_source, src->util_source);
  rc |= dup_into(&dst->gpu_model, src->gpu_model);
  rc |= dup_into(&dst->driver_version, src->driver_version);
  rc |= dup_into(&dst->embedder, src->embedder);
  if (rc == 0)
    rc = sm_meta_copy(&dst->meta, &src->meta);
  for (int i = 0; rc == 0 && i < src->n_perf; i++)
    rc = sm_record_add_perf(dst, src->perf[i].gpu_type, src->perf[i].gpus,
                            src->perf[i].batch, src->perf[i].throughput);
  dst->duration_s = src->duration_s;
  dst->sm_util = src->sm_util;
  dst->gpu_mem_mib = src->gpu_mem_mib;
  dst->end_state = src->end_state;
  dst->throughput = src->throughput;
  dst->submit_time = src->submit_time;
  dst->added_at = src->added_at;
  memcpy(dst->fp, src->fp, sizeof(dst->fp));
  if (rc != 0) {
    sm_record_release(dst);
    return SM_ENOMEM;
  }
  return 0;
}
