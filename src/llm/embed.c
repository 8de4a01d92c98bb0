/* embed.c - fingerprints from an embeddings endpoint.
 *
 * The metadata becomes one line of text ("model_name=gpt2-124m;
 * dataset=openwebtext; ..."), only known fields, in the schema's order,
 * so that the same job always sends the same text (and the cache answers
 * it the second time).  The endpoint's vector, whatever its length, is
 * folded to SM_FP_DIMS coordinates by a fixed signed hashing of the
 * coordinate indices (inner products are kept in expectation) and
 * L2-normalised, so it fits the history's index.  Records made this way
 * carry the embedder's name, and a history keeps one embedder: the
 * matcher never compares fingerprints of two embedders. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_int.h"

static int meta_text(const sm_meta *m, const sm_fp_extra *x, sm_buf *b) {
  int n = 0;
  for (int f = 0; f < SM_META_NFIELDS; f++) {
    const sm_meta_value *v = &m->f[f];
    if (!v->known)
      continue;
    if (n++)
      sm_buf_adds(b, "; ");
    if (sm_meta_type_of((sm_meta_field)f) == SM_META_STR)
      sm_buf_addf(b, "%s=%s", sm_meta_name((sm_meta_field)f), v->str);
    else
      sm_buf_addf(b, "%s=%.10g", sm_meta_name((sm_meta_field)f), v->num);
  }
  if (x != NULL) {
    if (x->user && *x->user && n++ >= 0)
      sm_buf_addf(b, "%suser=%s", n > 1 ? "; " : "", x->user);
    if (x->name && *x->name && n++ >= 0)
      sm_buf_addf(b, "%sjob_name=%s", n > 1 ? "; " : "", x->name);
    if (x->vc && *x->vc && n++ >= 0)
      sm_buf_addf(b, "%svc=%s", n > 1 ? "; " : "", x->vc);
  }
  return n;
}

int sm_llm_fingerprint(sm_llm *l, const sm_meta *m, const sm_fp_extra *x,
                       float *out, sm_err *err) {
  sm_buf text;
  float *vec = NULL;
  int dims = 0, reason = 0, rc;
  double norm = 0;

  memset(out, 0, sizeof(float) * SM_FP_DIMS);
  if (l == NULL || !sm_llm_has_embed(l))
    return sm_err_set(err, SM_EINVAL, "no embeddings server configured");
  sm_buf_init(&text, (size_t)64 << 10);
  if (meta_text(m, x, &text) == 0) {
    /* Nothing known: the zero vector, as the built-in embedder gives. */
    sm_buf_release(&text);
    return 0;
  }
  rc = sm_llm_embed(l, sm_buf_str(&text), 0, &vec, &dims, &reason, err);
  sm_buf_release(&text);
  if (rc != 0) {
    sm__llm_count_run(l, SM_LLM_EMBED, 0, reason);
    return rc;
  }
  for (int i = 0; i < dims; i++) {
    uint32_t k = (uint32_t)i;
    uint64_t h = sm_hash64(&k, sizeof(k), 0xe4bedULL);
    double s = (h >> 40) & 1 ? -1.0 : 1.0;
    out[h % SM_FP_DIMS] += (float)(s * vec[i]);
  }
  sm_free(vec);
  for (int i = 0; i < SM_FP_DIMS; i++)
    norm += (double)out[i] * out[i];
  if (!(norm > 0) || !isfinite(norm)) {
    sm__llm_count_run(l, SM_LLM_EMBED, 0, SM_LLM_R_BAD_RESPONSE);
    memset(out, 0, sizeof(float) * SM_FP_DIMS);
    return sm_err_set(err, SM_EPARSE, "the embedding is the zero vector");
  }
  norm = sqrt(norm);
  for (int i = 0; i < SM_FP_DIMS; i++)
    out[i] = (float)(out[i] / norm);
  sm__llm_count_run(l, SM_LLM_EMBED, 1, 0);
  return 0;
}

typedef struct first_emb {
  char *buf;
  size_t n;
  int seen;
} first_emb;

static int first_cb(const sm_record *r, void *arg) {
  first_emb *f = arg;
  snprintf(f->buf, f->n, "%s",
           r->embedder && *r->embedder ? r->embedder : SM_LLM_EMBEDDER_BUILTIN);
  f->seen = 1;
  return 1;
}

int sm_llm_history_embedder(sm_store *s, char *buf, size_t n, sm_err *err) {
  first_emb f = {buf, n, 0};
  int rc;
  if (n == 0)
    return SM_EINVAL;
  buf[0] = '\0';
  rc = sm_store_each(s, first_cb, &f, err);
  return rc < 0 ? rc : 0;
}
