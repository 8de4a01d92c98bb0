/* test_history_match.c - matching is about identity: two unknowns are no
 * evidence, an identity field known on both sides with different values
 * vetoes a match whatever the cosine, near-duplicates (other evidence,
 * spelling, trace names) still match, and a job that knows too little is
 * not matched at all (too_little_known).  All metadata is written here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_history.h"

/* LLaMA-2-7B LoRA fine-tuning on a dataset of 4096-token samples. */
static void job_lora(sm_meta *m) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, "llama-2-7b", "command");
  sm_meta_set_str(m, SM_META_TASK, "llm_finetuning_lora", "train.py:88");
  sm_meta_set_str(m, SM_META_DOMAIN, "nlp", NULL);
  sm_meta_set_str(m, SM_META_DATASET, "ultrachat-200k", "recipe.yaml:4");
  sm_meta_set_num(m, SM_META_ITERATIONS, 2000, "recipe.yaml:9");
  sm_meta_set_str(m, SM_META_ITERATION_TYPE, "steps", "recipe.yaml:9");
  sm_meta_set_num(m, SM_META_GLOBAL_BATCH_SIZE, 64, "recipe.yaml:11");
  sm_meta_set_num(m, SM_META_PER_DEVICE_BATCH_SIZE, 8, "recipe.yaml:10");
  sm_meta_set_num(m, SM_META_LR, 2e-4, "recipe.yaml:12");
  sm_meta_set_num(m, SM_META_GPUS, 8, "command");
  sm_meta_set_num(m, SM_META_NODES, 1, "command");
  sm_meta_set_num(m, SM_META_D_MODEL, 4096, "config.json:12");
  sm_meta_set_num(m, SM_META_N_LAYERS, 32, "config.json:15");
  sm_meta_set_num(m, SM_META_SEQ_LEN, 4096, "recipe.yaml:6");
  sm_meta_set_str(m, SM_META_PRECISION, "bf16", "recipe.yaml:14");
  sm_meta_set_str(m, SM_META_PARALLELISM, "fsdp", "recipe.yaml:15");
}

static float cosine(const sm_meta *a, const sm_meta *b) {
  float fa[SM_FP_DIMS], fb[SM_FP_DIMS];
  sm_fingerprint(a, NULL, fa);
  sm_fingerprint(b, NULL, fb);
  return sm_fp_cosine(fa, fb);
}

static void put(sm_store *s, const char *id, const sm_meta *m,
                const sm_fp_extra *x, double dur) {
  sm_record r;
  sm_err err = {0};
  sm_record_init(&r);
  r.id = sm_strdup(id);
  ASSERT_OK(sm_meta_copy(&r.meta, m));
  if (x != NULL) {
    r.user = x->user ? sm_strdup(x->user) : NULL;
    r.name = x->name ? sm_strdup(x->name) : NULL;
    r.vc = x->vc ? sm_strdup(x->vc) : NULL;
  }
  r.duration_s = dur;
  r.end_state = SM_END_COMPLETED;
  sm_record_fingerprint(&r);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
}

/* ==== Two unknowns are no evidence ==== */

SM_TEST(identity_null_vs_null_is_no_evidence) {
  sm_meta a, b;
  sm_identity_cmp c;

  /* Two jobs that agree on their resource shape only: the cosine cannot
   * tell them apart, the identity check can. */
  sm_meta_init(&a);
  sm_meta_set_num(&a, SM_META_GPUS, 8, "command");
  sm_meta_set_num(&a, SM_META_NODES, 1, "command");
  sm_meta_set_str(&a, SM_META_PARALLELISM, "ddp", "command");
  sm_meta_set_str(&a, SM_META_PRECISION, "fp16", "train.py:40");
  sm_meta_init(&b);
  ASSERT_OK(sm_meta_copy(&b, &a));
  ASSERT_NEAR(cosine(&a, &b), 1.0, 1e-5);
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0);
  ASSERT_EQ(c.shared, 0);
  ASSERT_EQ(c.veto, -1);
  ASSERT_EQ(sm_identity_known(&a, NULL), 0);

  /* Model and task known, dataset and length unknown on both sides:
   * the unknowns add nothing, so it is still not enough. */
  sm_meta_set_str(&a, SM_META_MODEL_NAME, "gpt2-124m", "command");
  sm_meta_set_str(&a, SM_META_TASK, "language_model_pretraining", NULL);
  ASSERT_OK(sm_meta_copy(&b, &a));
  ASSERT_NEAR(cosine(&a, &b), 1.0, 1e-5);
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0);
  ASSERT_EQ(c.shared, SM_IDENT_MODEL | SM_IDENT_TASK);

  /* Known on one side only is no agreement either. */
  sm_meta_set_str(&a, SM_META_DATASET, "openwebtext", "command");
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0);
  ASSERT_EQ(c.shared, SM_IDENT_MODEL | SM_IDENT_TASK);
  ASSERT_EQ(c.veto, -1);
  /* Known on both: enough. */
  sm_meta_set_str(&b, SM_META_DATASET, "openwebtext", "command");
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 1);
  ASSERT_EQ(c.shared, SM_IDENT_MODEL | SM_IDENT_TASK | SM_IDENT_DATASET);
  sm_meta_release(&a);
  sm_meta_release(&b);
}

/* ==== Each identity veto ==== */

typedef struct change {
  int field;       /* the field that changes */
  const char *str; /* its new value (strings) */
  double num;      /* its new value (numbers) */
  const char *why;
} change;

static const change vetoes[] = {
    {SM_META_MODEL_NAME, "llama-2-13b", 0, "another size of the model"},
    {SM_META_MODEL_NAME, "llava-v1.5-7b", 0, "another model version"},
    {SM_META_D_MODEL, NULL, 5120, "another width"},
    {SM_META_N_LAYERS, NULL, 40, "another depth"},
    {SM_META_SEQ_LEN, NULL, 2048, "another sequence length"},
    {SM_META_DATASET, "sharegpt", 0, "another dataset"},
    {SM_META_TASK, "llm_finetuning_sft", 0, "full fine-tuning, not LoRA"},
    {SM_META_DOMAIN, "multimodal", 0, "another domain"},
    {SM_META_ITERATIONS, NULL, 4000, "twice as long"},
    {SM_META_ITERATION_TYPE, "epochs", 0, "2000 epochs, not steps"},
};

static void apply(sm_meta *m, const change *c) {
  if (c->str != NULL)
    ASSERT_OK(sm_meta_set_str(m, (sm_meta_field)c->field, c->str, "command"));
  else
    ASSERT_OK(sm_meta_set_num(m, (sm_meta_field)c->field, c->num, "command"));
}

SM_TEST(identity_each_veto) {
  for (size_t i = 0; i < SM_ARRAY_LEN(vetoes); i++) {
    sm_meta a, b;
    sm_identity_cmp c;
    job_lora(&a);
    job_lora(&b);
    apply(&b, &vetoes[i]);
    if (sm_identity_compare(&a, NULL, &b, NULL, &c) != 0)
      SM_FAIL_AT("%s: matched", vetoes[i].why);
    if (c.veto != vetoes[i].field)
      SM_FAIL_AT("%s: veto %s, want %s", vetoes[i].why,
                 sm_identity_veto_name(c.veto),
                 sm_meta_name((sm_meta_field)vetoes[i].field));
    /* Symmetric. */
    ASSERT_EQ(sm_identity_compare(&b, NULL, &a, NULL, NULL), 0);
    sm_meta_release(&a);
    sm_meta_release(&b);
  }
  ASSERT_STREQ(sm_identity_veto_name(SM_META_SEQ_LEN), "seq_len");
  ASSERT_STREQ(sm_identity_veto_name(SM_IDENT_VETO_USER), "user");
  ASSERT_STREQ(sm_identity_veto_name(SM_IDENT_VETO_NAME), "job_name");
  ASSERT(sm_identity_veto_name(-1) == NULL);
}

/* A veto holds whatever the threshold: the cosine of a job that differs
 * only in its domain or its iteration unit is high, and a threshold of
 * 0.1 lets everything through, yet the answer is no match. */
SM_TEST(advise_veto_whatever_the_threshold) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_advise_opts o = {.top_k = 5, .threshold = 0.1f};
  sm_meta q, m;
  sm_advice a;

  job_lora(&q);
  for (size_t i = 0; i < SM_ARRAY_LEN(vetoes); i++) {
    char id[16];
    job_lora(&m);
    apply(&m, &vetoes[i]);
    snprintf(id, sizeof(id), "v%zu", i);
    put(s, id, &m, NULL, 1000 + (double)i);
    sm_meta_release(&m);
  }
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NO_MATCH);
  ASSERT_EQ(a.n_matches, 0);
  ASSERT_EQ(a.n_different, (int)SM_ARRAY_LEN(vetoes));
  ASSERT(a.best_score > 0.95f); /* alike, and still not the same job */
  ASSERT(strstr(a.detail, "different jobs") != NULL);
  /* The same job joins: it alone is the match. */
  put(s, "same", &q, NULL, 3600);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_EQ(a.n_matches, 1);
  ASSERT_STREQ(a.matches[0].id, "same");
  ASSERT_NEAR(a.est.duration_s, 3600, 1e-9);
  ASSERT_EQ(a.shared[0], SM_IDENT_MODEL | SM_IDENT_DATASET | SM_IDENT_TASK |
                             SM_IDENT_LENGTH);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

/* ==== Near-duplicates still match ==== */

SM_TEST(identity_near_duplicates_match) {
  sm_meta a, b;
  sm_identity_cmp c;
  sm_fp_extra x1 = {"alice", "lora-run-3", "vc1"};
  sm_fp_extra x2 = {"bob", "copy_of_lora", "vc9"};

  job_lora(&a);
  /* Another copy of the repository: every evidence path differs, the
   * names are spelt differently, the schedule is one step longer. */
  sm_meta_init(&b);
  ASSERT_OK(sm_meta_copy(&b, &a));
  sm_meta_set_str(&b, SM_META_MODEL_NAME, "Llama_2_7B", "fork/train.sh:3");
  sm_meta_set_str(&b, SM_META_DATASET, "UltraChat-200K", "fork/recipe.yaml:4");
  sm_meta_set_str(&b, SM_META_TASK, "llm_finetuning_lora", "fork/train.py:90");
  sm_meta_set_num(&b, SM_META_ITERATIONS, 2001, "fork/recipe.yaml:9");
  ASSERT_EQ(sm_identity_compare(&a, &x1, &b, &x2, &c), 1);
  ASSERT_EQ(c.veto, -1);
  ASSERT_EQ(c.shared, SM_IDENT_MODEL | SM_IDENT_DATASET | SM_IDENT_TASK |
                          SM_IDENT_LENGTH);
  /* Other users, job names and partitions do not matter when the
   * metadata identifies the job. */
  ASSERT_EQ(sm_identity_known(&a, &x1), sm_identity_known(&a, NULL));
  /* 10 % longer is another length. */
  sm_meta_set_num(&b, SM_META_ITERATIONS, 2200, NULL);
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0);
  ASSERT_EQ(c.veto, SM_META_ITERATIONS);
  sm_meta_release(&a);
  sm_meta_release(&b);
}

SM_TEST(advise_near_duplicate_matches) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_meta q, m;
  sm_advice a;

  job_lora(&m);
  put(s, "first-run", &m, NULL, 5400);
  sm_meta_release(&m);
  /* Resubmitted from a renamed copy: the evidence differs, nothing else. */
  job_lora(&q);
  for (int f = 0; f < SM_META_NFIELDS; f++)
    if (q.f[f].known) {
      sm_free(q.f[f].evidence);
      q.f[f].evidence = sm_strdup("renamed-copy/train.sh:1");
    }
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_EQ(a.n_matches, 1);
  ASSERT_NEAR(a.scores[0], 1.0, 1e-5);
  ASSERT_NEAR(a.est.duration_s, 5400, 1e-9);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

/* ==== Enough identity ==== */

SM_TEST(identity_enough_rules) {
  sm_meta m;
  unsigned g;
  char buf[96];

  /* The model with its size and two of dataset, task, length. */
  ASSERT(sm_identity_enough(SM_IDENT_MODEL | SM_IDENT_DATASET | SM_IDENT_TASK));
  ASSERT(sm_identity_enough(SM_IDENT_MODEL | SM_IDENT_TASK | SM_IDENT_LENGTH));
  ASSERT(!sm_identity_enough(SM_IDENT_MODEL | SM_IDENT_TASK));
  ASSERT(
      !sm_identity_enough(SM_IDENT_DATASET | SM_IDENT_TASK | SM_IDENT_LENGTH));
  /* A family name needs all three. */
  ASSERT(
      !sm_identity_enough(SM_IDENT_FAMILY | SM_IDENT_DATASET | SM_IDENT_TASK));
  ASSERT(sm_identity_enough(SM_IDENT_FAMILY | SM_IDENT_DATASET | SM_IDENT_TASK |
                            SM_IDENT_LENGTH));
  ASSERT(sm_identity_enough(SM_IDENT_TRACE));
  ASSERT(!sm_identity_enough(0));

  /* A name with a size or version is a model; a bare family is not. */
  sm_meta_init(&m);
  sm_meta_set_str(&m, SM_META_MODEL_NAME, "unet", NULL);
  sm_meta_set_str(&m, SM_META_DATASET, "cifar-10", NULL);
  sm_meta_set_str(&m, SM_META_TASK, "image_generation_diffusion", NULL);
  g = sm_identity_known(&m, NULL);
  ASSERT_EQ(g, SM_IDENT_FAMILY | SM_IDENT_DATASET | SM_IDENT_TASK);
  ASSERT(!sm_identity_enough(g));
  ASSERT_STREQ(sm_identity_describe(g, buf, sizeof(buf)),
               "dataset, task, model_family");
  /* Its width and depth make it a model. */
  sm_meta_set_num(&m, SM_META_D_MODEL, 128, NULL);
  sm_meta_set_num(&m, SM_META_N_LAYERS, 3, NULL);
  g = sm_identity_known(&m, NULL);
  ASSERT(g & SM_IDENT_MODEL);
  ASSERT(sm_identity_enough(g));
  ASSERT_STREQ(sm_identity_describe(g, buf, sizeof(buf)),
               "model, dataset, task");
  sm_meta_unset(&m, SM_META_D_MODEL);
  sm_meta_unset(&m, SM_META_N_LAYERS);
  {
    static const char *const sized[] = {
        "resnet50", "vit-small-patch16", "bert-base-uncased",
        "gpt-nano", "mobilenet-v2",      "qwen2.5-0.5b"};
    static const char *const family[] = {"unet", "transformer", "detr",
                                         "whisper", "conformer"};
    for (size_t i = 0; i < SM_ARRAY_LEN(sized); i++) {
      sm_meta_set_str(&m, SM_META_MODEL_NAME, sized[i], NULL);
      if (!(sm_identity_known(&m, NULL) & SM_IDENT_MODEL))
        SM_FAIL_AT("%s has no size", sized[i]);
    }
    for (size_t i = 0; i < SM_ARRAY_LEN(family); i++) {
      sm_meta_set_str(&m, SM_META_MODEL_NAME, family[i], NULL);
      if (sm_identity_known(&m, NULL) & SM_IDENT_MODEL)
        SM_FAIL_AT("%s has a size", family[i]);
    }
  }

  /* An epoch count is a length only with its dataset; steps are one on
   * their own; a count of unknown unit counts as epochs. */
  sm_meta_release(&m);
  sm_meta_init(&m);
  sm_meta_set_str(&m, SM_META_MODEL_NAME, "llama-3.2-1b", NULL);
  sm_meta_set_str(&m, SM_META_TASK, "llm_finetuning_lora", NULL);
  sm_meta_set_num(&m, SM_META_ITERATIONS, 1, NULL);
  ASSERT(!(sm_identity_known(&m, NULL) & SM_IDENT_LENGTH));
  sm_meta_set_str(&m, SM_META_ITERATION_TYPE, "epochs", NULL);
  ASSERT(!(sm_identity_known(&m, NULL) & SM_IDENT_LENGTH));
  ASSERT(!sm_identity_enough(sm_identity_known(&m, NULL)));
  sm_meta_set_str(&m, SM_META_ITERATION_TYPE, "steps", NULL);
  ASSERT(sm_identity_known(&m, NULL) & SM_IDENT_LENGTH);
  ASSERT(sm_identity_enough(sm_identity_known(&m, NULL)));
  sm_meta_set_str(&m, SM_META_ITERATION_TYPE, "epochs", NULL);
  sm_meta_set_str(&m, SM_META_DATASET, "gpt4-llm-cleaned", NULL);
  ASSERT(sm_identity_known(&m, NULL) & SM_IDENT_LENGTH);
  sm_meta_release(&m);

  ASSERT_STREQ(sm_identity_describe(0, buf, sizeof(buf)), "none");
  /* A small buffer stays terminated. */
  ASSERT(strlen(sm_identity_describe(0x3f, buf, 8)) < 8);
}

SM_TEST(advise_too_little_known) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_meta q, m;
  sm_advice a;

  /* The history holds a job with the same thin metadata: the cosine is
   * 1.0, and it is still not a match. */
  sm_meta_init(&q);
  sm_meta_set_str(&q, SM_META_MODEL_NAME, "llama-3.1-8b", "command");
  sm_meta_set_str(&q, SM_META_TASK, "llm_finetuning_lora", "train.py:12");
  sm_meta_set_num(&q, SM_META_GPUS, 4, "command");
  sm_meta_set_str(&q, SM_META_PARALLELISM, "fsdp", "command");
  put(s, "thin", &q, NULL, 7200);
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_TOO_LITTLE_KNOWN);
  ASSERT_STREQ(sm_fallback_name(a.fallback), "too_little_known");
  ASSERT_EQ(a.n_matches, 0);
  ASSERT(!a.est.valid);
  ASSERT_EQ(a.identity, SM_IDENT_MODEL | SM_IDENT_TASK);
  ASSERT(strstr(a.detail, "model, task") != NULL);
  /* Even an empty history gives the same answer: it is the job's. */
  {
    sm_store *e = sm_store_open("mem:", 0, 0, &err);
    ASSERT_OK(sm_advise(e, &q, NULL, NULL, &a, &err));
    ASSERT_EQ(a.fallback, SM_FALLBACK_TOO_LITTLE_KNOWN);
    sm_store_close(e);
  }
  /* Still: no metadata is extract_failed, no store history_unavailable. */
  sm_meta_init(&m);
  ASSERT_OK(sm_advise(s, &m, NULL, NULL, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_EXTRACT_FAILED);
  ASSERT_OK(sm_advise(NULL, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_UNAVAILABLE);

  /* A rich job whose similar past job lacks what the query knows: the
   * candidate shares too little, so the answer is too_little_known. */
  sm_meta_release(&q);
  job_lora(&q);
  job_lora(&m);
  sm_meta_unset(&m, SM_META_DATASET);
  sm_meta_unset(&m, SM_META_ITERATIONS);
  sm_meta_unset(&m, SM_META_ITERATION_TYPE);
  put(s, "old-extractor", &m, NULL, 5000);
  {
    sm_advise_opts o = {.top_k = 5, .threshold = 0.5f};
    ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  }
  ASSERT_EQ(a.fallback, SM_FALLBACK_TOO_LITTLE_KNOWN);
  ASSERT_EQ(a.n_thin, 1);
  ASSERT(strstr(a.detail, "old-extractor") != NULL);
  {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_jw_obj_begin(&w);
    sm_advice_write_json(&a, &w);
    sm_jw_obj_end(&w);
    ASSERT_OK(sm_jw_finish(&w));
    ASSERT(strstr(sm_buf_str(&b), "\"fallback_reason\":\"too_little_known\"") !=
           NULL);
    ASSERT(strstr(sm_buf_str(&b), "\"known\":[\"model\",\"dataset\",\"task\","
                                  "\"length\"]") != NULL);
    ASSERT(strstr(sm_buf_str(&b), "\"rejected_too_little_known\":1") != NULL);
    sm_buf_release(&b);
  }
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_meta_release(&m);
  sm_store_close(s);
}

/* ==== Jobs known only from a trace ==== */

SM_TEST(identity_trace_jobs) {
  sm_meta m;
  sm_identity_cmp c;
  sm_fp_extra a = {"alice", "train_resnet50_run17", "vc1"};
  sm_fp_extra b = {"alice", "train_resnet50_run18", "vc2"};
  sm_fp_extra o = {"bob", "train_resnet50_run17", "vc1"};
  sm_fp_extra n = {"alice", "eval_resnet50_run17", "vc1"};
  sm_fp_extra none = {NULL, NULL, NULL};

  sm_meta_init(&m);
  sm_meta_set_num(&m, SM_META_GPUS, 8, "trace");
  ASSERT_EQ(sm_identity_known(&m, &a), SM_IDENT_TRACE);
  ASSERT_EQ(sm_identity_known(&m, &none), 0);
  ASSERT_EQ(sm_identity_known(&m, NULL), 0);
  /* Run counters are folded; the partition is not identity. */
  ASSERT_EQ(sm_identity_compare(&m, &a, &m, &b, &c), 1);
  ASSERT_EQ(c.shared, SM_IDENT_TRACE);
  ASSERT_EQ(sm_identity_compare(&m, &a, &m, &o, &c), 0);
  ASSERT_EQ(c.veto, SM_IDENT_VETO_USER);
  ASSERT_EQ(sm_identity_compare(&m, &a, &m, &n, &c), 0);
  ASSERT_EQ(c.veto, SM_IDENT_VETO_NAME);
  /* Once the metadata names the model, it must identify the job itself:
   * a name and a user do not make up for a missing dataset and length. */
  sm_meta_set_str(&m, SM_META_MODEL_NAME, "resnet50", "trace");
  ASSERT_EQ(sm_identity_known(&m, &a), SM_IDENT_MODEL);
  sm_meta_release(&m);
}

SM_TEST(advise_trace_jobs) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_fp_extra a = {"alice", "train_resnet50_run17", NULL};
  sm_fp_extra q = {"alice", "train_resnet50_run18", NULL};
  sm_fp_extra b = {"bob", "bert_squad", NULL};
  sm_meta m;
  sm_advice adv;

  sm_meta_init(&m);
  sm_meta_set_num(&m, SM_META_GPUS, 8, "trace");
  put(s, "a1", &m, &a, 3000);
  put(s, "b1", &m, &b, 90);
  sm_advice_init(&adv);
  ASSERT_OK(sm_advise(s, &m, &q, NULL, &adv, &err));
  ASSERT_EQ(adv.fallback, SM_FALLBACK_NONE);
  ASSERT_EQ(adv.n_matches, 1);
  ASSERT_STREQ(adv.matches[0].id, "a1");
  /* Without user and job name there is nothing to go on. */
  ASSERT_OK(sm_advise(s, &m, NULL, NULL, &adv, &err));
  ASSERT_EQ(adv.fallback, SM_FALLBACK_TOO_LITTLE_KNOWN);
  sm_advice_release(&adv);
  sm_meta_release(&m);
  sm_store_close(s);
}

/* ==== Vetoed candidates do not hide the match ==== */

/* Fifty jobs that score above the real match (they differ only in their
 * domain, a light field) are all vetoed; the search widens until it
 * reaches the one that is the same job. */
SM_TEST(advise_widens_past_vetoed_candidates) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", 0, 0, &err);
  sm_meta q, m;
  sm_advice a;
  sm_advise_opts o = {.top_k = 3, .threshold = 0.85f};
  float cv, cm;

  job_lora(&q);
  job_lora(&m);
  sm_meta_set_str(&m, SM_META_DOMAIN, "cv", NULL);
  cv = cosine(&q, &m);
  for (int i = 0; i < 50; i++) {
    char id[16];
    snprintf(id, sizeof(id), "cv-%d", i);
    put(s, id, &m, NULL, 100);
  }
  sm_meta_release(&m);
  job_lora(&m);
  sm_meta_set_num(&m, SM_META_LR, 2.3e-4, NULL);
  sm_meta_set_num(&m, SM_META_GPUS, 16, NULL);
  cm = cosine(&q, &m);
  if (!(cv > cm && cm >= 0.85f)) /* the vetoed ones rank first */
    SM_FAIL_AT("cosines: vetoed %.4f, same job %.4f", cv, cm);
  put(s, "same", &m, NULL, 4000);
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, &o, &a, &err));
  ASSERT_EQ(a.fallback, SM_FALLBACK_NONE);
  ASSERT_EQ(a.n_matches, 1);
  ASSERT_STREQ(a.matches[0].id, "same");
  ASSERT_EQ(a.n_different, 50);
  ASSERT_NEAR(a.best_score, cv, 1e-6);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_meta_release(&m);
  sm_store_close(s);
}

/* ==== Malformed metadata ==== */

/* Empty strings, huge names and extreme numbers neither crash nor count
 * as identity. */
SM_TEST(identity_odd_values) {
  sm_meta a, b;
  char big[4096];
  sm_identity_cmp c;

  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  sm_meta_init(&a);
  sm_meta_set_str(&a, SM_META_MODEL_NAME, "", NULL);
  sm_meta_set_str(&a, SM_META_DATASET, "", NULL);
  sm_meta_set_str(&a, SM_META_TASK, "---", NULL);
  ASSERT_EQ(sm_identity_known(&a, NULL), 0);
  sm_meta_set_str(&a, SM_META_MODEL_NAME, big, NULL);
  sm_meta_set_num(&a, SM_META_ITERATIONS, 1e300, NULL);
  sm_meta_set_str(&a, SM_META_ITERATION_TYPE, "steps", NULL);
  sm_meta_init(&b);
  ASSERT_OK(sm_meta_copy(&b, &a));
  big[4000] = 'y'; /* names are compared whole */
  sm_meta_set_str(&b, SM_META_MODEL_NAME, big, NULL);
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0);
  ASSERT_EQ(c.veto, SM_META_MODEL_NAME);
  sm_meta_set_str(&b, SM_META_MODEL_NAME, a.f[SM_META_MODEL_NAME].str, NULL);
  ASSERT_EQ(sm_identity_compare(&a, NULL, &b, NULL, &c), 0); /* too thin */
  ASSERT_EQ(c.veto, -1);
  sm_meta_set_num(&b, SM_META_ITERATIONS, -1e300, NULL);
  sm_identity_compare(&a, NULL, &b, NULL, &c);
  ASSERT_EQ(c.veto, SM_META_ITERATIONS);
  sm_meta_release(&a);
  sm_meta_release(&b);
}
