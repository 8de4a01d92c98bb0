/* store_util.c - what the history store backends share: the counter of
 * records skipped because they could not be read back, the fingerprint
 * blob format and a record's JSON text.  Depends on records only, so
 * that store.c (the front end) and every backend sit above it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "history/history_int.h"

/* ==== Skipped records ==== */

void sm__skip_note(sm__skips *k, const char *fmt, ...) {
  if (k->n++ == 0) {
    /* Through sm_err_set, so that a long message keeps its problem. */
    sm_err e = {0};
    char tmp[SM_ERR_MSG_SIZE * 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    sm_err_set(&e, SM_ECORRUPT, "%s", tmp);
    memcpy(k->first, e.msg, sizeof(k->first));
  }
}

void sm__skip_reset(sm__skips *k) {
  k->n = 0;
  k->first[0] = '\0';
}

/* ==== Fingerprint blobs ==== */

void sm__fp_pack(const float *fp, unsigned char *out) {
  out[0] = SM_FP_VERSION;
  for (int i = 0; i < SM_FP_DIMS; i++) {
    uint32_t u;
    memcpy(&u, &fp[i], 4);
    out[1 + 4 * i] = (unsigned char)u;
    out[2 + 4 * i] = (unsigned char)(u >> 8);
    out[3 + 4 * i] = (unsigned char)(u >> 16);
    out[4 + 4 * i] = (unsigned char)(u >> 24);
  }
}

int sm__fp_unpack(const unsigned char *in, size_t n, float *fp) {
  if (n != SM__FP_BLOB_LEN || in[0] != SM_FP_VERSION)
    return SM_ECORRUPT;
  for (int i = 0; i < SM_FP_DIMS; i++) {
    uint32_t u = (uint32_t)in[1 + 4 * i] | (uint32_t)in[2 + 4 * i] << 8 |
                 (uint32_t)in[3 + 4 * i] << 16 | (uint32_t)in[4 + 4 * i] << 24;
    memcpy(&fp[i], &u, 4);
    if (!isfinite(fp[i]))
      return SM_ECORRUPT;
  }
  return 0;
}

static char *record_json(const sm_record *r) {
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_record_write_json(r, &w);
  if (sm_jw_finish(&w) != 0) {
    sm_buf_release(&b);
    return NULL;
  }
  return sm_buf_take(&b);
}

int sm__record_encode(const sm_record *r, char **json, unsigned char *blob,
                      sm_err *err) {
  *json = record_json(r);
  if (*json == NULL)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  sm__fp_pack(r->fp, blob);
  return 0;
}
