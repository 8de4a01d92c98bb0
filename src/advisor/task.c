/* task.c - task and domain from what the job does.
 *
 * Each kind of evidence votes for a task family with a weight:
 *
 *   the model the job trains (its family's usual task)       4 (2 for a
 *   the dataset it reads (its usual task)                    4  backbone
 *   the training method (a causal-LM head, an SFT or DPO      4  family)
 *     trainer, a CTC loss, a diffusion scheduler: word families)
 *   words of the config files on the path (their names, the   2 per event,
 *     component types and keys they set)                        at most 3
 *   words of the command and the entry script                 2 per event,
 *                                                               at most 3
 *   words of modules the entry imports                        1 per event,
 *                                                               at most 2
 *
 * so that no stray keyword decides: a word in an imported module counts
 * once or twice, never a hundred times.  The family with the most votes
 * wins; when a family of another domain comes close, the answer is null.
 * Within language modelling the method decides the task (LoRA, SFT or
 * instruction data, preference optimisation, fine-tuning from pretrained
 * weights, pre-training from scratch); within dense vision the most
 * specific kind of output (panoptic, instance, semantic, boxes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define N(...) ((const char *const[]){__VA_ARGS__, NULL})

enum {
  F_LM,
  F_MM,
  F_DET,
  F_PANO,
  F_INST,
  F_SEM,
  F_TEXTDET,
  F_TEXTREC,
  F_POSE,
  F_DIFF,
  F_GAN,
  F_SSL,
  F_CLS,
  F_ACTION,
  F_CONTR,
  F_SPEECH,
  F_REC,
  F_TRANS,
  F_TEXTCLS,
  F_QA,
  F_SPEAKER,
  F_GRAPH,
  F_TS,
  F_SR,
  F_CODEC,
  F_TTS,
  NFAM
};

static const struct {
  const char *task;   /* task string */
  const char *domain; /* domain */
  int group;          /* families of one group do not contradict */
} fam[NFAM] = {
    [F_LM] = {"language_model_pretraining", "nlp", 1},
    [F_MM] = {"visual_instruction_tuning", "multimodal", 5},
    [F_DET] = {"object_detection", "cv", 2},
    [F_PANO] = {"panoptic_segmentation", "cv", 2},
    [F_INST] = {"instance_segmentation", "cv", 2},
    [F_SEM] = {"semantic_segmentation", "cv", 2},
    [F_TEXTDET] = {"text_detection", "cv", 2},
    [F_TEXTREC] = {"text_recognition", "cv", 2},
    [F_POSE] = {"pose_estimation", "cv", 2},
    [F_DIFF] = {"image_generation_diffusion", "cv", 3},
    [F_GAN] = {"image_generation_gan", "cv", 3},
    [F_SSL] = {"self_supervised_image_pretraining", "cv", 3},
    [F_CLS] = {"image_classification", "cv", 3},
    [F_ACTION] = {"action_recognition", "cv", 3},
    [F_CONTR] = {"contrastive_pretraining", "multimodal", 5},
    [F_SPEECH] = {"speech_recognition", "speech", 4},
    [F_REC] = {"recommendation", "recsys", 6},
    [F_TRANS] = {"machine_translation", "nlp", 1},
    [F_TEXTCLS] = {"text_classification", "nlp", 1},
    [F_QA] = {"question_answering", "nlp", 1},
    [F_SPEAKER] = {"speaker_recognition", "speech", 4},
    [F_GRAPH] = {"graph_property_prediction", "graph", 7},
    [F_TS] = {"time_series_forecasting", "timeseries", 8},
    [F_SR] = {"image_super_resolution", "cv", 3},
    [F_CODEC] = {"neural_audio_codec", "speech", 4},
    [F_TTS] = {"text_to_speech", "speech", 4},
};

/* The family of a task string from the alias table. */
static int family_of(const char *task) {
  if (task == NULL)
    return -1;
  for (int f = 0; f < NFAM; f++)
    if (strcmp(fam[f].task, task) == 0)
      return f;
  if (strstr(task, "language_model") || strstr(task, "llm_") ||
      strstr(task, "sft"))
    return F_LM;
  if (strstr(task, "multimodal") || strstr(task, "visual_instruction"))
    return F_MM;
  if (strstr(task, "segmentation"))
    return F_SEM;
  if (strstr(task, "detection"))
    return F_DET;
  if (strstr(task, "classification"))
    return F_CLS;
  if (strstr(task, "synthesis") || strstr(task, "text_to_speech"))
    return F_TTS;
  if (strstr(task, "speaker"))
    return F_SPEAKER;
  if (strstr(task, "translation"))
    return F_TRANS;
  if (strstr(task, "speech"))
    return F_SPEECH;
  if (strstr(task, "recommend"))
    return F_REC;
  if (strstr(task, "contrastive"))
    return F_CONTR;
  if (strstr(task, "graph") || strstr(task, "node_class") ||
      strstr(task, "link_pred"))
    return F_GRAPH;
  if (strstr(task, "time_series") || strstr(task, "forecast"))
    return F_TS;
  if (strstr(task, "super_resolution"))
    return F_SR;
  if (strstr(task, "codec"))
    return F_CODEC;
  return -1;
}

/* The family a domain alone points to. */
static int family_of_domain(const char *d) {
  if (d == NULL)
    return -1;
  if (strcmp(d, "nlp") == 0)
    return F_LM;
  if (strcmp(d, "speech") == 0)
    return F_SPEECH;
  if (strcmp(d, "recsys") == 0)
    return F_REC;
  if (strcmp(d, "multimodal") == 0)
    return F_MM;
  if (strcmp(d, "graph") == 0)
    return F_GRAPH;
  if (strcmp(d, "timeseries") == 0)
    return F_TS;
  return -1;
}

/* Votes of one word family, capped per source; without the words of
 * imported modules when firm. */
static int word_votes_of(sm__ctx *c, sm__word w, int firm) {
  int *s = c->word_src[w];
  int local = firm ? s[1] - s[0] : s[1];
  int code = local > 2 ? 2 : local;
  int entry = s[2] > 3 ? 3 : s[2];
  int cfg = s[3] > 3 ? 3 : s[3];
  return code + 2 * entry + 2 * cfg;
}

static int word_votes(sm__ctx *c, sm__word w) {
  return word_votes_of(c, w, 0);
}

static int truthy(sm__ctx *c, const char *const *names, const char **ev) {
  const sm__param *p = sm__param_get(c, names);
  double v;
  if (p == NULL)
    return 0;
  if (p->kind == SM__V_STR) {
    if (p->str[0] != '\0' && strcasecmp(p->str, "false") != 0 &&
        strcmp(p->str, "0") != 0 && strcasecmp(p->str, "none") != 0) {
      *ev = p->ev;
      return 1;
    }
    return 0;
  }
  if (sm__param_value(c, p, &v) == 0 && v != 0) {
    *ev = p->ev;
    return 1;
  }
  return 0;
}

/* The words of the configuration the job reads: component types and
 * names (type='DBNet', META_ARCHITECTURE, _target_, encoder: conformer)
 * and the key paths it sets (ibot.loss_weight), each counted once. */
void sm__config_words(sm__ctx *c) {
  /* A task the job names (--task translation, task._name: masked_lm,
   * --task_type causal_lm) is a method of its own: two events. */
  {
    const sm__param *t = sm__param_get_min(
        c,
        (const char *const[]){"task", "task._name", "task_type", "task.name",
                              "objective", NULL},
        SM__L_ENTRY);
    if (t != NULL && t->kind == SM__V_STR && strlen(t->str) < 64)
      for (int k = 0; k < 2; k++)
        sm__words_in(c, t->str, strlen(t->str), t->ev, 3);
  }
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    if (p->layer < SM__L_CONFIG || strcmp(p->ev, "command") == 0)
      continue;
    if (p->kind == SM__V_STR && strlen(p->str) < 64 &&
        strchr(p->str, ' ') == NULL)
      sm__words_in(c, p->str, strlen(p->str), p->ev, 3);
    sm__words_in(c, p->key, strlen(p->key), p->ev, 3);
  }
}

/* Is a switch named after a method (sft, use_dpo, do_instruction_tuning)
 * set and off for this job?  A script that can run either method then
 * runs the other one, whatever its names and imports say. */
static int method_switched_off(sm__ctx *c, const char *tokens) {
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i), *top;
    const char *names[2];
    char rule[160];
    if (p->layer < SM__L_ENTRY || p->kind != SM__V_BOOL ||
        strchr(p->key, '~') != NULL)
      continue;
    snprintf(rule, sizeof(rule), "%s", tokens);
    {
      /* One of the method's tokens in the leaf, split at '_'. */
      int hit = 0;
      for (char *save = NULL, *t = strtok_r(rule, "|", &save); t && !hit;
           t = strtok_r(NULL, "|", &save)) {
        size_t tl = strlen(t);
        for (const char *q = strstr(p->leaf, t); q && !hit;
             q = strstr(q + 1, t))
          hit =
              (q == p->leaf || q[-1] == '_') && (q[tl] == '\0' || q[tl] == '_');
      }
      if (!hit)
        continue;
    }
    names[0] = p->key;
    names[1] = NULL;
    top = sm__param_get(c, names);
    if (top != NULL && top->kind == SM__V_BOOL && top->num == 0)
      return 1;
  }
  return 0;
}

/* Votes of the words of the job (its paths, code, configs) per family.
 * Classification words say nothing of the modality: they go to text
 * classification when the job's evidence is textual. */
static void vote_words(sm__ctx *c, int *score, const char **evf, int firm) {
  static const struct {
    sm__word w;
    int f;
  } map[] = {
      {SM__W_LM, F_LM},
      {SM__W_DETECTION, F_DET},
      {SM__W_SEGMENTATION, F_SEM},
      {SM__W_PANOPTIC, F_PANO},
      {SM__W_DIFFUSION, F_DIFF},
      {SM__W_GAN, F_GAN},
      {SM__W_SELFSUP, F_SSL},
      {SM__W_MULTIMODAL, F_MM},
      {SM__W_SPEECH, F_SPEECH},
      {SM__W_RECSYS, F_REC},
      {SM__W_TRANSLATION, F_TRANS},
      {SM__W_CONTRASTIVE, F_CONTR},
      {SM__W_CLASSIFICATION, F_CLS},
      {SM__W_TEXTDET, F_TEXTDET},
      {SM__W_TEXTREC, F_TEXTREC},
      {SM__W_INSTANCE, F_INST},
      {SM__W_POSE, F_POSE},
      {SM__W_ACTION, F_ACTION},
      {SM__W_INSTRUCT, F_LM},
      {SM__W_PREFERENCE, F_LM},
      {SM__W_SPEAKER, F_SPEAKER},
      {SM__W_GRAPH, F_GRAPH},
      {SM__W_GRAPHLEVEL, F_GRAPH},
      {SM__W_NODELEVEL, F_GRAPH},
      {SM__W_LINKLEVEL, F_GRAPH},
      {SM__W_TIMESERIES, F_TS},
      {SM__W_SUPERRES, F_SR},
      {SM__W_CODEC, F_CODEC},
      {SM__W_TTS, F_TTS},
  };
  int f;
  for (size_t i = 0; i < SM_ARRAY_LEN(map); i++) {
    int v = word_votes_of(c, map[i].w, firm);
    if (map[i].w == SM__W_CLASSIFICATION)
      continue;
    score[map[i].f] += v;
    if (v > 0 && evf[map[i].f] == NULL)
      evf[map[i].f] = c->word[map[i].w];
  }
  {
    int v = word_votes_of(c, SM__W_CLASSIFICATION, firm);
    int text = score[F_LM] +
               (c->ds_domain && !strcmp(c->ds_domain, "nlp")) * 4 +
               (c->hint_domain && !strcmp(c->hint_domain, "nlp")) * 4;
    int vision = (c->sig[SM__SIG_VISION] != NULL) * 2 +
                 (c->ds_domain && !strcmp(c->ds_domain, "cv")) * 4 +
                 (c->hint_domain && !strcmp(c->hint_domain, "cv")) * 4;
    f = text > vision ? F_TEXTCLS : F_CLS;
    /* Classification of series or of graphs (a labelled series set, a
     * graph classification benchmark) belongs to their modality. */
    if (score[F_TS] >= 2 && score[F_TS] > vision && score[F_TS] > text)
      f = F_TS;
    else if (score[F_GRAPH] >= 2 && score[F_GRAPH] > vision &&
             score[F_GRAPH] > text)
      f = F_GRAPH;
    score[f] += v;
    if (v > 0 && evf[f] == NULL)
      evf[f] = c->word[SM__W_CLASSIFICATION];
  }
}

/* Votes of the model, the dataset, the head the code puts on the model
 * and the training method. */
static void vote_evidence(sm__ctx *c, int *score, const char **evf,
                          int lm_method) {
  const char *e2 = NULL;
  int f;
  /* The model and the dataset. */
  {
    const sm_meta_value *mv = &c->res->meta.f[SM_META_MODEL_NAME];
    const sm_meta_value *dv = &c->res->meta.f[SM_META_DATASET];
    int mf = family_of(c->hint_task), df = family_of(c->ds_task);
    if (mf < 0)
      mf = family_of_domain(c->hint_domain);
    if (df < 0)
      df = family_of_domain(c->ds_domain);
    if (mf >= 0) {
      score[mf] += mf == F_CLS || mf == F_ACTION ? 2 : 4;
      evf[mf] = mv->evidence;
    }
    if (df >= 0) {
      /* Data labelled for classification or QA is still language
       * modelling when the code trains a language model on it; labels
       * of images or clips suggest classification only by default (a
       * pre-training method on the same data beats them). */
      int w = df == F_CLS || df == F_ACTION ? 2 : 4;
      if ((df == F_TEXTCLS || df == F_QA) && lm_method)
        df = F_LM;
      score[df] += w;
      evf[df] = dv->evidence;
    }
  }
  /* The head the code puts on the model. */
  if (c->head_task != NULL && (f = family_of(c->head_task)) >= 0) {
    score[f] += 6;
    evf[f] = c->head_ev;
  }
  /* The training method. */
  if (c->sig[SM__SIG_CAUSAL_LM]) {
    score[F_LM] += 4;
    evf[F_LM] = c->sig[SM__SIG_CAUSAL_LM];
  }
  if (c->sig[SM__SIG_VISION] && c->sig_layer[SM__SIG_VISION] >= SM__L_ENTRY)
    score[F_CLS] += 1;
  if (truthy(c, N("masks"), &e2) && score[F_PANO] + score[F_SEM] > 0) {
    /* DETR-style --masks: the mask head is trained. */
    score[score[F_PANO] ? F_PANO : F_INST] += 4;
    evf[score[F_PANO] ? F_PANO : F_INST] = e2;
  }
}

/* The family chosen once the families of one group refine each other
 * and a modality overrides the text it is also the target of. */
static int refine_family(sm__ctx *c, const int *score, int best,
                         int lm_method) {
  int f;
  /* Families of one group refine each other: segmentation outputs are
   * more specific than boxes, text detection more than detection. */
  if (fam[best].group == 2) {
    static const int order[] = {F_PANO, F_INST, F_TEXTDET, F_TEXTREC,
                                F_POSE, F_SEM,  F_DET};
    int total = 0;
    for (f = 0; f < NFAM; f++)
      if (fam[f].group == 2)
        total += score[f];
    for (size_t k = 0; k < SM_ARRAY_LEN(order); k++)
      if (score[order[k]] * 3 >= total) {
        best = order[k];
        break;
      }
  }
  if (fam[best].group == 4 && best != F_CODEC && score[F_TTS] >= 4 &&
      score[F_TTS] * 2 >= score[best])
    /* Synthesis: transcripts, speaker embeddings and spectrograms are its
     * inputs and features; the method's own names decide. */
    best = F_TTS;
  else if (fam[best].group == 4 && score[F_SPEAKER] * 2 >= score[F_SPEECH] &&
           score[F_SPEAKER] >= 4)
    /* Speaker embeddings are a more specific output than transcripts. */
    best = F_SPEAKER;
  if (fam[best].group == 1) {
    int nlp = 0;
    for (f = 0; f < NFAM; f++)
      if (fam[f].group == 1)
        nlp += score[f];
    /* Text is also the target of speech and vision-language models: a
     * non-text input modality nearly as strong decides. */
    if (score[F_TTS] * 2 >= nlp && score[F_TTS] >= 4)
      best = F_TTS; /* text in, speech out */
    else if (score[F_SPEECH] * 2 >= nlp && score[F_SPEECH] >= 4)
      best = score[F_SPEAKER] * 2 >= score[F_SPEECH] ? F_SPEAKER : F_SPEECH;
    else if (score[F_MM] * 2 >= nlp && score[F_MM] >= 4)
      best = F_MM;
    else if (c->head_task != NULL &&
             (family_of(c->head_task) == F_TEXTCLS ||
              family_of(c->head_task) == F_QA) &&
             !lm_method)
      /* A classification or QA head on a language model: the words of
       * tokenizers and language models describe the backbone. */
      best = family_of(c->head_task);
    else if (lm_method || score[F_LM] >= score[best])
      best = score[F_TRANS] > score[F_LM] ? F_TRANS : F_LM;
  }
  if (best == F_DIFF || best == F_GAN) {
    /* Image generation: the data says generation, the method's words
     * say how (a discriminator, or a noise schedule). */
    int g = word_votes(c, SM__W_GAN), d = word_votes(c, SM__W_DIFFUSION);
    if (g != d && g + d >= 2)
      best = g > d ? F_GAN : F_DIFF;
  }
  if (fam[best].group == 3 && best != F_SR && score[F_SR] >= 4 &&
      score[F_SR] * 2 >= score[best])
    /* Super-resolution networks are trained as GANs or on ImageNet-style
     * data: the method's own names decide. */
    best = F_SR;
  if ((fam[best].group == 4 || (best == F_GAN && score[F_SPEECH] >= 4)) &&
      best != F_CODEC && score[F_CODEC] >= 4 && score[F_SPEECH] >= 4 &&
      score[F_CODEC] * 3 >= score[best])
    /* A codec of waveforms: audio in, audio out, usually trained against
     * discriminators. */
    best = F_CODEC;
  if (best == F_CLS) {
    /* Classification is what backbones and ImageNet suggest by default:
     * a method of its own (self-supervision, diffusion, detection heads)
     * with enough votes decides. */
    int alt = -1;
    for (f = 0; f < NFAM; f++)
      if (f != F_CLS && fam[f].domain && strcmp(fam[f].domain, "cv") == 0 &&
          score[f] >= 4 && (alt < 0 || score[f] > score[alt]))
        alt = f;
    if (alt >= 0 && score[alt] * 2 >= score[F_CLS])
      best = alt;
  }
  return best;
}

/* Does the job start from trained weights (a fine-tuning switch, a
 * pre-trained load on the job's path, a base model, the job's own
 * fine-tuning words)? */
static int fine_tuning(sm__ctx *c) {
  const char *e2 = NULL;
  return truthy(c, N("finetune", "fine_tune", "finetuning"), &e2) ||
         (c->sig[SM__SIG_FROM_PRETRAINED] != NULL &&
          c->sig_layer[SM__SIG_FROM_PRETRAINED] >= SM__L_ENTRY) ||
         sm__param_get(c, N("model_name_or_path", "base_model",
                            "pretrained_model_name_or_path")) != NULL ||
         c->word_strong[SM__W_FINETUNE] >= 2;
}

/* The task of a language model: LoRA, SFT or preference tuning,
 * fine-tuning or pre-training. */
static const char *lm_task(sm__ctx *c) {
  const char *e2 = NULL;
  const sm__param *lora_flag =
      sm__param_get(c, N("lora_enable", "use_lora", "lora", "use_peft", "peft",
                         "enable_lora", "adapter"));
  int lora = truthy(c, N("q_lora", "qlora"), &e2) ||
             (lora_flag != NULL
                  ? truthy(c,
                           N("lora_enable", "use_lora", "lora", "use_peft",
                             "peft", "enable_lora", "adapter"),
                           &e2)
                  : (c->sig[SM__SIG_LORA] != NULL &&
                     c->sig_layer[SM__SIG_LORA] >= SM__L_ENTRY));
  int finetune = fine_tuning(c);
  if (lora)
    return "llm_finetuning_lora";
  /* A method only an imported library names (its SFT data builder
   * beside the pre-training one) is not the job's. */
  if (word_votes_of(c, SM__W_INSTRUCT, 1) >= 2 ||
      word_votes_of(c, SM__W_PREFERENCE, 1) >= 2 ||
      (c->ds_task && strstr(c->ds_task, "sft")))
    return "llm_finetuning_sft";
  if (finetune && !c->sig[SM__SIG_FROM_SCRATCH])
    return "language_model_finetuning";
  return "language_model_pretraining";
}

/* The task of a graph model: what it predicts (a property of whole
 * graphs, of nodes, of links), from the words of its benchmark, its
 * pooling and its evaluator; none of them, or a tie: null. */
static const char *graph_task(sm__ctx *c) {
  int g = word_votes(c, SM__W_GRAPHLEVEL), n = word_votes(c, SM__W_NODELEVEL),
      l = word_votes(c, SM__W_LINKLEVEL);
  if (g > n && g > l)
    return "graph_property_prediction";
  if (n > g && n > l)
    return "node_classification";
  if (l > g && l > n)
    return "link_prediction";
  return NULL;
}

/* The task of a time-series model: the task the job names (a
 * --task_name long_term_forecast / classification / anomaly_detection /
 * imputation switch), else forecasting unless classification words
 * outnumber forecasting words. */
static const char *series_task(sm__ctx *c) {
  const sm__param *t = sm__param_get_min(
      c, N("task_name", "task", "task_type", "task.name"), SM__L_ENTRY);
  if (t != NULL && t->kind == SM__V_STR) {
    if (strstr(t->str, "classif"))
      return "time_series_classification";
    if (strstr(t->str, "anomaly"))
      return "time_series_anomaly_detection";
    if (strstr(t->str, "imput"))
      return "time_series_imputation";
    if (strstr(t->str, "forecast"))
      return "time_series_forecasting";
  }
  if (word_votes(c, SM__W_CLASSIFICATION) > word_votes(c, SM__W_TIMESERIES))
    return "time_series_classification";
  return "time_series_forecasting";
}

/* The task of a vision-language model, or task. */
static const char *mm_task(sm__ctx *c, const char *task) {
  const char *e3 = NULL;
  if (truthy(c, N("lora_enable", "use_lora", "lora"), &e3))
    return "visual_instruction_tuning_lora";
  if (truthy(c,
             N("tune_mm_mlp_adapter", "freeze_backbone",
               "pretrain_mm_mlp_adapter"),
             &e3) &&
      !sm__param_get(c, N("pretrain_mm_mlp_adapter")))
    return "multimodal_pretraining_feature_alignment";
  if (c->ds_task && family_of(c->ds_task) == F_MM)
    return c->ds_task;
  return task;
}

void sm__task_domain(sm__ctx *c) {
  int score[NFAM] = {0}, firm[NFAM] = {0};
  const char *evf[NFAM] = {0};
  const char *task, *domain, *ev;
  int best = -1, second = -1, f, top, first;
  int lm_method;

  if (method_switched_off(c, "sft|instruct|instruction|chat"))
    memset(c->word_src[SM__W_INSTRUCT], 0, sizeof(c->word_src[0]));
  if (method_switched_off(c, "dpo|orpo|kto|ppo|rlhf|preference|reward"))
    memset(c->word_src[SM__W_PREFERENCE], 0, sizeof(c->word_src[0]));
  lm_method = c->sig[SM__SIG_CAUSAL_LM] != NULL ||
              word_votes_of(c, SM__W_INSTRUCT, 1) >= 2 ||
              word_votes_of(c, SM__W_PREFERENCE, 1) >= 2;

  vote_words(c, score, evf, 0);
  vote_evidence(c, score, evf, lm_method);
  /* The same without the words of imported modules: a family only they
   * vote for is a stray keyword (rotation and translation in geometry
   * code), which does not decide alone. */
  {
    const char *unused[NFAM] = {0};
    vote_words(c, firm, unused, 1);
    vote_evidence(c, firm, unused, lm_method);
  }
  for (f = 0; f < NFAM; f++)
    if (best < 0 || score[f] > score[best])
      best = f;
  if (best < 0 || score[best] < 2)
    return;
  top = score[best];
  first = best;
  best = refine_family(c, score, best, lm_method);
  /* Disagreement: another domain nearly as strong.  Text is also the
   * target of speech and vision-language models, so it agrees with
   * them. */
  second = -1;
  for (f = 0; f < NFAM; f++) {
    int agrees = fam[f].group == fam[best].group ||
                 ((best == F_SPEECH || best == F_MM || best == F_TTS) &&
                  fam[f].group == 1) ||
                 (best == F_TTS && (f == F_GAN || f == F_DIFF)) ||
                 (best == F_CODEC && f == F_GAN);
    if (!agrees && (second < 0 || score[f] > score[second]))
      second = f;
  }
  /* A refinement inside a group keeps the group's strength. */
  if (fam[best].group != fam[first].group || score[best] > top)
    top = score[best];
  if (second >= 0 && score[second] * 4 > top * 3)
    return;
  if (firm[best] == 0)
    return;
  task = fam[best].task;
  domain = fam[best].domain;
  ev = evf[best] ? evf[best] : "command";
  /* Video models of instance masks. */
  if ((best == F_INST || best == F_PANO || best == F_SEM) &&
      word_votes(c, SM__W_VIDEO) >= 2 && score[F_INST] > 0)
    task = "video_instance_segmentation";
  if (best == F_GRAPH) {
    task = graph_task(c);
  } else if (best == F_TS) {
    task = series_task(c);
  } else if (best == F_LM) {
    task = lm_task(c);
  } else if (best == F_MM) {
    task = mm_task(c, task);
  } else if (best == F_TTS && fine_tuning(c)) {
    task = "text_to_speech_finetuning";
  } else if (best == F_CLS && (family_of(c->ds_task) == F_ACTION ||
                               word_votes(c, SM__W_VIDEO) >= 2)) {
    /* Classification of clips (labelled clips, frame counts, tubelets)
     * is action recognition. */
    task = fam[F_ACTION].task;
  } else if (best == F_CLS && fam[best].group == 3 && c->ds_domain &&
             strcmp(c->ds_domain, "nlp") == 0) {
    task = "text_classification";
    domain = "nlp";
  }
  if (task != NULL)
    sm_meta_set_str(&c->res->meta, SM_META_TASK, task, ev);
  sm_meta_set_str(&c->res->meta, SM_META_DOMAIN, domain, ev);
}
