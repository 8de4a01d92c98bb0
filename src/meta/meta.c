/* meta.c - the workload metadata record every component exchanges (the
 * schema of docs/design.md section 2): set, copy, JSON in and out.  It
 * has a module of its own so that history, the simulator, Slurm and the
 * service depend on the schema, not on the Advisor that is one producer
 * of it. */
#include <math.h>
#include <string.h>

#include <cJSON.h>

#include "schedmate/sm_meta.h"

static const char *const field_names[SM_META_NFIELDS] = {
#define SM__XX(id, name, type) name,
    SM_META_FIELDS(SM__XX)
#undef SM__XX
};

static const sm_meta_type field_types[SM_META_NFIELDS] = {
#define SM__XX(id, name, type) type,
    SM_META_FIELDS(SM__XX)
#undef SM__XX
};

void sm_meta_init(sm_meta *m) {
  memset(m, 0, sizeof(*m));
}

void sm_meta_unset(sm_meta *m, sm_meta_field f) {
  sm_free(m->f[f].str);
  sm_free(m->f[f].evidence);
  memset(&m->f[f], 0, sizeof(m->f[f]));
}

void sm_meta_release(sm_meta *m) {
  for (int i = 0; i < SM_META_NFIELDS; i++)
    sm_meta_unset(m, (sm_meta_field)i);
  sm_free(m->config_digest);
  sm_free(m->residue_digest);
  m->config_digest = m->residue_digest = NULL;
}

int sm_meta_set_digests(sm_meta *m, const char *config, const char *residue) {
  char *a = config ? sm_strdup(config) : NULL;
  char *b = residue ? sm_strdup(residue) : NULL;

  if ((config && !a) || (residue && !b)) {
    sm_free(a);
    sm_free(b);
    return SM_ENOMEM;
  }
  sm_free(m->config_digest);
  sm_free(m->residue_digest);
  m->config_digest = a;
  m->residue_digest = b;
  return 0;
}

void sm_meta_write_digests(const sm_meta *m, sm_jw *w) {
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "config_digest", m->config_digest);
  sm_jw_kv_str(w, "residue_digest", m->residue_digest);
  sm_jw_obj_end(w);
}

int sm_meta_copy(sm_meta *dst, const sm_meta *src) {
  if (dst == src)
    return 0;
  sm_meta_release(dst);
  for (int i = 0; i < SM_META_NFIELDS; i++) {
    const sm_meta_value *s = &src->f[i];
    sm_meta_value *d = &dst->f[i];
    d->known = s->known;
    d->num = s->num;
    d->str = s->str ? sm_strdup(s->str) : NULL;
    d->evidence = s->evidence ? sm_strdup(s->evidence) : NULL;
    if ((s->str && !d->str) || (s->evidence && !d->evidence)) {
      sm_meta_release(dst);
      return SM_ENOMEM;
    }
  }
  if (sm_meta_set_digests(dst, src->config_digest, src->residue_digest) != 0) {
    sm_meta_release(dst);
    return SM_ENOMEM;
  }
  return 0;
}

const char *sm_meta_name(sm_meta_field f) {
  return (unsigned)f < SM_META_NFIELDS ? field_names[f] : "?";
}

sm_meta_type sm_meta_type_of(sm_meta_field f) {
  return field_types[f];
}

int sm_meta_lookup(const char *name) {
  for (int i = 0; i < SM_META_NFIELDS; i++)
    if (strcmp(field_names[i], name) == 0)
      return i;
  return -1;
}

static int set_evidence(sm_meta_value *v, const char *evidence) {
  char *e = NULL;

  if (evidence != NULL && (e = sm_strdup(evidence)) == NULL)
    return SM_ENOMEM;
  sm_free(v->evidence);
  v->evidence = e;
  return 0;
}

int sm_meta_set_str(sm_meta *m, sm_meta_field f, const char *s,
                    const char *evidence) {
  sm_meta_value *v;
  char *copy;

  if ((unsigned)f >= SM_META_NFIELDS || field_types[f] != SM_META_STR ||
      s == NULL)
    return SM_EINVAL;
  v = &m->f[f];
  copy = sm_strdup(s);
  if (copy == NULL || set_evidence(v, evidence) != 0) {
    sm_free(copy);
    return SM_ENOMEM;
  }
  sm_free(v->str);
  v->str = copy;
  v->known = 1;
  return 0;
}

int sm_meta_set_num(sm_meta *m, sm_meta_field f, double x,
                    const char *evidence) {
  sm_meta_value *v;

  if ((unsigned)f >= SM_META_NFIELDS || field_types[f] == SM_META_STR ||
      !isfinite(x))
    return SM_EINVAL;
  v = &m->f[f];
  if (set_evidence(v, evidence) != 0)
    return SM_ENOMEM;
  v->num = field_types[f] == SM_META_INT ? round(x) : x;
  v->known = 1;
  return 0;
}

void sm_meta_write_json(const sm_meta *m, sm_jw *w) {
  sm_jw_obj_begin(w);
  for (int i = 0; i < SM_META_NFIELDS; i++) {
    const sm_meta_value *v = &m->f[i];
    sm_jw_key(w, field_names[i]);
    if (!v->known)
      sm_jw_null(w);
    else if (field_types[i] == SM_META_STR)
      sm_jw_str(w, v->str);
    else if (field_types[i] == SM_META_INT && fabs(v->num) < 9e15)
      sm_jw_int(w, (long long)v->num);
    else
      sm_jw_num(w, v->num);
  }
  sm_jw_obj_end(w);
}

void sm_meta_write_evidence(const sm_meta *m, sm_jw *w) {
  sm_jw_obj_begin(w);
  for (int i = 0; i < SM_META_NFIELDS; i++)
    if (m->f[i].known && m->f[i].evidence != NULL) {
      sm_jw_key(w, field_names[i]);
      sm_jw_str(w, m->f[i].evidence);
    }
  sm_jw_obj_end(w);
}

/* The digests of a "configuration" member: strings of at most 128 bytes, or
 * absent/null (a record of an older extractor). */
static int digests_from_json(sm_meta *m, cJSON *root, sm_err *err) {
  cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "configuration");
  const char *v[2] = {NULL, NULL};
  static const char *const keys[2] = {"config_digest", "residue_digest"};

  if (p == NULL || cJSON_IsNull(p))
    return 0;
  if (!cJSON_IsObject(p))
    return sm_err_set(err, SM_EPARSE,
                      "metadata: configuration is not an object");
  for (int i = 0; i < 2; i++) {
    cJSON *d = cJSON_GetObjectItemCaseSensitive(p, keys[i]);
    if (d == NULL || cJSON_IsNull(d))
      continue;
    if (!cJSON_IsString(d) || strlen(d->valuestring) > 128)
      return sm_err_set(err, SM_EPARSE,
                        "metadata: configuration.%s must be a short string",
                        keys[i]);
    v[i] = d->valuestring;
  }
  if (sm_meta_set_digests(m, v[0], v[1]) != 0)
    return sm_err_set(err, SM_ENOMEM, "metadata: out of memory");
  return 0;
}

int sm_meta_from_json(sm_meta *m, const char *json, size_t n, sm_err *err) {
  cJSON *root = cJSON_ParseWithLength(json, n), *md, *ev;
  int rc = 0;

  sm_meta_release(m);
  if (root == NULL || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return sm_err_set(err, SM_EPARSE, "metadata: not a JSON object");
  }
  md = cJSON_GetObjectItemCaseSensitive(root, "metadata");
  ev = cJSON_GetObjectItemCaseSensitive(root, "evidence");
  if (md == NULL)
    md = root;
  if (!cJSON_IsObject(md)) {
    cJSON_Delete(root);
    return sm_err_set(err, SM_EPARSE,
                      "metadata: \"metadata\" is not an "
                      "object");
  }
  for (int i = 0; i < SM_META_NFIELDS && rc == 0; i++) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(md, field_names[i]);
    cJSON *e = ev ? cJSON_GetObjectItemCaseSensitive(ev, field_names[i]) : NULL;
    const char *es = cJSON_IsString(e) ? e->valuestring : NULL;
    if (v == NULL || cJSON_IsNull(v))
      continue;
    if (field_types[i] == SM_META_STR) {
      if (!cJSON_IsString(v))
        rc = sm_err_set(err, SM_EPARSE, "metadata: %s must be a string",
                        field_names[i]);
      else
        rc = sm_meta_set_str(m, (sm_meta_field)i, v->valuestring, es);
    } else {
      if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        rc = sm_err_set(err, SM_EPARSE, "metadata: %s must be a number",
                        field_names[i]);
      else
        rc = sm_meta_set_num(m, (sm_meta_field)i, v->valuedouble, es);
    }
  }
  if (rc == 0)
    rc = digests_from_json(m, root, err);
  cJSON_Delete(root);
  if (rc == SM_ENOMEM)
    sm_err_set(err, rc, "metadata: out of memory");
  if (rc != 0)
    sm_meta_release(m);
  return rc;
}
