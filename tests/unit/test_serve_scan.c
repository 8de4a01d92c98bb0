/* test_serve_scan.c - the service's pre-search (src/serve/scan.c) never
 * changes an answer: its candidates always hold the rows the index's own
 * exact search ranks first (random, tied, near-tied, duplicated, zero and
 * non-finite vectors, rows replaced), and the advice it gives is, byte
 * for byte, sm_advise's over the whole history, for histories of
 * recurring jobs with duplicates, variants that the identity rule vetoes,
 * thin records, jobs below the threshold and records of another
 * embedder, under several top_k and thresholds. */
#include <math.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "serve/serve_int.h"

static void random_unit(sm_rng *g, float *v, int nnz) {
  double n = 0;
  memset(v, 0, SM_FP_DIMS * sizeof(float));
  for (int i = 0; i < nnz; i++) {
    int j = (int)(sm_rng_next(g) % SM_FP_DIMS);
    v[j] = (float)sm_rng_normal(g);
  }
  for (int j = 0; j < SM_FP_DIMS; j++)
    n += (double)v[j] * v[j];
  n = n > 0 ? sqrt(n) : 1;
  for (int j = 0; j < SM_FP_DIMS; j++)
    v[j] = (float)(v[j] / n);
}

/* A record with fingerprint v only (the candidate test). */
static void put_vec(sm_store *mem, sv_scan *sc, const char *id,
                    const float *v) {
  sm_record r;
  sm_record_init(&r);
  r.id = sm_strdup(id);
  memcpy(r.fp, v, sizeof(r.fp));
  ASSERT_OK(sm_store_put(mem, &r, NULL));
  ASSERT_OK(sv__scan_put(sc, mem, &r));
  sm_record_release(&r);
}

SM_TEST(serve_scan_candidates_hold_the_top) {
  sm_rng g;
  sm_err err = {0};
  sm_store *mem = sm_store_open("mem:", 0, 0, &err);
  sv_scan *sc = sv__scan_new();
  sm_index *ix = sm_index_new(SM_FP_DIMS);
  float(*vecs)[SM_FP_DIMS];
  const int n = 3000;
  char id[32];

  ASSERT(mem && sc && ix);
  vecs = sm_calloc((size_t)n, sizeof(*vecs));
  ASSERT(vecs);
  sm_rng_seed(&g, 17);
  for (int i = 0; i < n; i++) {
    int kind = (int)(sm_rng_next(&g) % 10);
    if (kind < 4 && i > 0) {
      /* A duplicate of an earlier row (a recurring job). */
      memcpy(vecs[i], vecs[sm_rng_next(&g) % (uint64_t)i], sizeof(vecs[i]));
    } else if (kind < 6 && i > 0) {
      /* A near-duplicate: one coordinate nudged by an ulp or so. */
      memcpy(vecs[i], vecs[sm_rng_next(&g) % (uint64_t)i], sizeof(vecs[i]));
      vecs[i][sm_rng_next(&g) % SM_FP_DIMS] += 1e-7f;
    } else if (kind == 6) {
      memset(vecs[i], 0, sizeof(vecs[i])); /* an empty fingerprint */
      if (i % 3 == 0)
        vecs[i][i % SM_FP_DIMS] = NAN; /* damaged: the index reads 0 */
    } else {
      random_unit(&g, vecs[i], 8 + (int)(sm_rng_next(&g) % 60));
    }
  }
  for (int i = 0; i < n; i++) {
    snprintf(id, sizeof(id), "r%d", i);
    put_vec(mem, sc, id, vecs[i]);
  }
  /* Replacements move rows between groups but keep their places. */
  for (int i = 0; i < 200; i++) {
    int row = (int)(sm_rng_next(&g) % (uint64_t)n);
    int from = (int)(sm_rng_next(&g) % (uint64_t)n);
    memcpy(vecs[row], vecs[from], sizeof(vecs[row]));
    snprintf(id, sizeof(id), "r%d", row);
    put_vec(mem, sc, id, vecs[row]);
  }
  ASSERT_EQ(sv__scan_rows(sc), n);
  ASSERT(sv__scan_groups(sc) < (size_t)n * 7 / 10);
  for (int i = 0; i < n; i++) {
    float v[SM_FP_DIMS];
    for (int j = 0; j < SM_FP_DIMS; j++)
      v[j] = isfinite(vecs[i][j]) ? vecs[i][j] : 0.0f;
    ASSERT_OK(sm_index_add(ix, v));
  }
  for (int t = 0; t < 300; t++) {
    float q[SM_FP_DIMS];
    int m = 1 + (int)(sm_rng_next(&g) % 40);
    sm_hit *hits = sm_calloc((size_t)m, sizeof(*hits));
    uint32_t *rows;
    size_t nr;
    int k;
    if (t % 3 == 0)
      memcpy(q, vecs[sm_rng_next(&g) % (uint64_t)n], sizeof(q));
    else
      random_unit(&g, q, 4 + (int)(sm_rng_next(&g) % 100));
    for (int j = 0; j < SM_FP_DIMS; j++)
      if (!isfinite(q[j])) { /* fingerprints are finite */
        random_unit(&g, q, 20);
        break;
      }
    {
      int zero = 1;
      for (int j = 0; j < SM_FP_DIMS; j++)
        zero &= q[j] == 0.0f || !isfinite(q[j]);
      if (zero) {
        ASSERT_EQ(sv__scan_candidates(sc, q, m, 100000, &rows, &nr), SM_EINVAL);
        sm_free(hits);
        continue;
      }
    }
    k = sm_index_search(ix, q, m, -2.0f, hits);
    ASSERT_EQ(k, m);
    ASSERT_OK(sv__scan_candidates(sc, q, m, 100000, &rows, &nr));
    ASSERT(nr >= (size_t)m);
    for (size_t i = 1; i < nr; i++)
      ASSERT(rows[i - 1] < rows[i]);
    for (int i = 0; i < k; i++) {
      int found = 0;
      for (size_t x = 0; x < nr && !found; x++)
        found = rows[x] == (uint32_t)hits[i].row;
      if (!found)
        SM_FAIL_AT("query %d: row %lld (rank %d, score %.9g) is not a "
                   "candidate (%zu candidates)",
                   t, (long long)hits[i].row, i, hits[i].score, nr);
    }
    /* A cap too small for them is said, not cut. */
    if (nr > 1) {
      uint32_t *r2;
      size_t n2;
      ASSERT_EQ(sv__scan_candidates(sc, q, m, nr - 1, &r2, &n2), 1);
    }
    sm_free(rows);
    sm_free(hits);
  }
  sm_free(vecs);
  sm_index_free(ix);
  sv__scan_free(sc);
  sm_store_close(mem);
}

/* ==== Advice ==== */

static const char *const models[] = {"llama-7b",  "llama-13b", "gpt2-124m",
                                     "bert-base", "resnet50",  "unet"};
static const char *const datasets[] = {"alpaca-52k", "openwebtext", "c4",
                                       "imagenet-1k", "coco"};
static const char *const tasks[] = {"sft", "lm_pretraining",
                                    "image_classification", "diffusion"};

/* A job of kind k, variant v; some fields left out for thin records. */
static void job_meta(sm_meta *m, int k, int v, int thin) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, models[k % 6], "train.py:3");
  if (thin != 1)
    sm_meta_set_str(m, SM_META_DATASET, datasets[(k + v) % 5], "cfg.yaml:2");
  if (thin != 2)
    sm_meta_set_str(m, SM_META_TASK, tasks[k % 4], "train.py:9");
  if (thin == 0)
    sm_meta_set_num(m, SM_META_ITERATIONS, 1000.0 * (1 + v % 4), "cfg.yaml:5");
  sm_meta_set_str(m, SM_META_ITERATION_TYPE, "steps", "cfg.yaml:5");
  sm_meta_set_num(m, SM_META_GPUS, 1 << (v % 4), "command");
  sm_meta_set_num(m, SM_META_LR, 1e-4 * (1 + v % 3), "cfg.yaml:7");
  if (v % 2)
    sm_meta_set_str(m, SM_META_PRECISION, "bf16", "cfg.yaml:8");
}

static char *advice_text(const sm_advice *a) {
  sm_buf b;
  sm_jw w;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_advice_write_json(a, &w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  return sm_buf_take(&b);
}

SM_TEST(serve_scan_advice_equals_sm_advise) {
  sm_rng g;
  sm_err err = {0};
  sm_store *mem = sm_store_open("mem:", 0, 0, &err);
  sv_scan *sc = sv__scan_new();
  const int n = 4000;
  int prefix = 0, full = 0, estimates = 0, fallbacks[8] = {0}, vetoed = 0;
  char id[32];

  ASSERT(mem && sc);
  sm_rng_seed(&g, 99);
  for (int i = 0; i < n; i++) {
    sm_record r;
    int k = (int)(sm_rng_next(&g) % 6), v = (int)(sm_rng_next(&g) % 12);
    int thin = sm_rng_next(&g) % 9 == 0 ? 1 + (int)(sm_rng_next(&g) % 2) : 0;
    sm_record_init(&r);
    /* Some ids come again: a replaced record keeps its place. */
    snprintf(id, sizeof(id), "job-%d",
             i > 100 && i % 37 == 0 ? (int)(sm_rng_next(&g) % 100) : i);
    r.id = sm_strdup(id);
    job_meta(&r.meta, k, v, thin);
    r.duration_s = 1000 * (1 + k) * (0.9 + 0.2 * sm_rng_uniform(&g));
    r.end_state = sm_rng_next(&g) % 5 == 0 ? SM_END_CANCELED : SM_END_COMPLETED;
    r.sm_util = 40 + (double)(sm_rng_next(&g) % 50);
    r.submit_time = 1.7e9 + i;
    sm_record_fingerprint(&r);
    if (i % 101 == 7) {
      /* Another embedder's record: never matched, still ranked. */
      sm_free(r.embedder);
      r.embedder = sm_strdup("api:other");
    }
    ASSERT_OK(sm_store_put(mem, &r, NULL));
    ASSERT_OK(sv__scan_put(sc, mem, &r));
    sm_record_release(&r);
  }
  ASSERT_EQ(sv__scan_rows(sc), sm_store_count(mem, NULL));
  for (int t = 0; t < 600; t++) {
    sm_meta q;
    sm_advise_opts o = {0};
    sm_advice a, b;
    char *ta, *tb;
    int rc, k = (int)(sm_rng_next(&g) % 7), v = (int)(sm_rng_next(&g) % 14);
    job_meta(&q, k, v, t % 11 == 0 ? 1 : 0);
    if (t % 13 == 0)
      sm_meta_set_num(&q, SM_META_ITERATIONS, 777, "cfg.yaml:5");
    o.top_k = t % 5 == 0 ? 1 + (int)(sm_rng_next(&g) % 30) : 5;
    o.threshold = t % 4 == 0 ? 0.5f + 0.5f * (float)sm_rng_uniform(&g) : 0.95f;
    if (t % 13 == 0) /* similar jobs of another length: vetoed */
      o.threshold = 0.6f;
    o.now = 1.8e9;
    o.half_life_s = t % 6 == 0 ? 86400 : 0;
    sm_advice_init(&a);
    sm_advice_init(&b);
    ASSERT_OK(sm_advise(mem, &q, NULL, &o, &a, NULL));
    rc = sv__scan_advise(sc, mem, &q, NULL, NULL, &o, &b, NULL);
    ASSERT(rc == 0 || rc == 1);
    if (rc == 1) {
      full++;
      ASSERT_OK(sm_advise(mem, &q, NULL, &o, &b, NULL));
    } else {
      prefix++;
    }
    ta = advice_text(&a);
    tb = advice_text(&b);
    if (strcmp(ta, tb) != 0)
      SM_FAIL_AT("query %d (top_k %d, threshold %g) differs:\n  full   %s\n  "
                 "prefix %s",
                 t, o.top_k, o.threshold, ta, tb);
    estimates += a.est.valid;
    vetoed += a.n_different > 0;
    fallbacks[a.fallback < 8 ? a.fallback : 7]++;
    sm_free(ta);
    sm_free(tb);
    sm_advice_release(&a);
    sm_advice_release(&b);
    sm_meta_release(&q);
  }
  /* Both paths ran, and the answers were of every kind. */
  ASSERT(prefix > 300);
  ASSERT(full > 0);
  ASSERT(estimates > 100);
  ASSERT(vetoed > 0);
  ASSERT(fallbacks[SM_FALLBACK_BELOW_THRESHOLD] > 0);
  ASSERT(fallbacks[SM_FALLBACK_TOO_LITTLE_KNOWN] > 0);
  sv__scan_free(sc);
  sm_store_close(mem);
}
