/* params.c - the layered store of configuration values, the signals and
 * keyword families found in the code, and name candidates.
 *
 * A value is kept with the layer it was written in (code default, config
 * file, command line, preset) and its evidence; a lookup returns the one
 * the program would use: the highest layer wins, then the most specific
 * name, then the latest write. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_KEY 256

void sm__key_norm(const char *in, size_t n, char *out, size_t cap) {
  size_t o = 0, i = 0;

  while (i < n && (in[i] == '-' || in[i] == '+' || in[i] == '~'))
    i++;
  for (; i < n && o + 1 < cap; i++) {
    char ch = in[i];
    if (ch == '-')
      ch = '_';
    out[o++] = (char)tolower((unsigned char)ch);
  }
  out[o] = '\0';
}

static sm__param *add(sm__ctx *c, const char *key, int layer, const char *ev) {
  char norm[MAX_KEY];
  sm__param *p;
  const char *dot;

  if (key == NULL)
    return NULL;
  sm__key_norm(key, strlen(key), norm, sizeof(norm));
  if (norm[0] == '\0')
    return NULL;
  p = sm__vec_push(&c->params);
  if (p == NULL)
    return NULL;
  p->key = sm__strdup(c, norm);
  if (p->key == NULL) {
    c->params.n--;
    return NULL;
  }
  dot = strrchr(p->key, '.');
  p->leaf = dot ? dot + 1 : p->key;
  p->layer = layer;
  p->order = c->seq++;
  p->ev = ev ? ev : "command";
  return p;
}

sm__param *sm__param_num(sm__ctx *c, const char *key, double v, int kind,
                         int layer, const char *ev) {
  sm__param *p = add(c, key, layer, ev);
  if (p != NULL) {
    p->kind = kind;
    p->num = v;
  }
  return p;
}

sm__param *sm__param_str(sm__ctx *c, const char *key, const char *s, int kind,
                         int layer, const char *ev) {
  sm__param *p = add(c, key, layer, ev);
  if (p != NULL) {
    p->kind = kind;
    p->str = sm__strdup(c, s ? s : "");
  }
  return p;
}

int sm__config_num(const char *s, int hex, double *out) {
  char tmp[64];
  size_t o = 0;

  for (; *s && o + 1 < sizeof(tmp); s++)
    if (*s != '_')
      tmp[o++] = *s;
  tmp[o] = '\0';
  if (o == 0 || *s != '\0')
    return -1;
  if (!(isdigit((unsigned char)tmp[0]) || tmp[0] == '-' || tmp[0] == '+' ||
        tmp[0] == '.'))
    return -1;
  if (hex && o > 2 && tmp[0] == '0' && (tmp[1] == 'x' || tmp[1] == 'X')) {
    char *end;
    long long v = strtoll(tmp, &end, 16);
    if (*end != '\0')
      return -1;
    *out = (double)v;
    return 0;
  }
  return sm_parse_double(tmp, out);
}

/* Sums the numbers of a "[2, 2, 6, 2]" list; returns the count. */
static int list_sum(const char *s, double *sum) {
  int n = 0, numeric = 1;
  *sum = 0;
  s++;
  while (*s && *s != ']') {
    char item[64];
    size_t o = 0;
    double v;
    while (*s == ' ' || *s == '\t')
      s++;
    while (*s && *s != ',' && *s != ']' && o + 1 < sizeof(item))
      item[o++] = *s++;
    while (o > 0 && (item[o - 1] == ' ' || item[o - 1] == '\t'))
      o--;
    item[o] = '\0';
    if (o > 0) {
      n++;
      if (sm__config_num(item, 0, &v) == 0)
        *sum += v;
      else
        numeric = 0;
    }
    if (*s == ',')
      s++;
    else if (*s && *s != ']')
      s++;
  }
  if (!numeric)
    *sum = NAN;
  return n;
}

sm__param *sm__param_text(sm__ctx *c, const char *key, const char *text,
                          int layer, const char *ev) {
  char buf[1024];
  size_t n;
  double v;
  const char *s = text ? text : "";

  while (isspace((unsigned char)*s))
    s++;
  n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    n--;
  if (n >= sizeof(buf))
    n = sizeof(buf) - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  if (n >= 2 && (buf[0] == '"' || buf[0] == '\'') && buf[n - 1] == buf[0]) {
    buf[n - 1] = '\0';
    return sm__param_str(c, key, buf + 1, SM__V_STR, layer, ev);
  }
  if (n > 3 && buf[0] == '$' && buf[1] == '{' && buf[n - 1] == '}' &&
      strchr(buf + 2, '{') == NULL && strchr(buf, '}') == buf + n - 1 &&
      strchr(buf, ':') == NULL) {
    /* An OmegaConf interpolation ${paths.data_dir}: a reference. */
    char ref[256];
    sm__key_norm(buf + 2, n - 3, ref, sizeof(ref));
    return sm__param_str(c, key, ref, SM__V_REF, layer, ev);
  }
  if (n == 0 || strcmp(buf, "None") == 0 || strcmp(buf, "null") == 0 ||
      strcmp(buf, "~") == 0 || strcmp(buf, "Null") == 0 ||
      strcmp(buf, "NULL") == 0)
    return sm__param_num(c, key, 0, SM__V_NULL, layer, ev);
  if (strcasecmp(buf, "true") == 0 || strcasecmp(buf, "yes") == 0)
    return sm__param_num(c, key, 1, SM__V_BOOL, layer, ev);
  if (strcasecmp(buf, "false") == 0 || strcasecmp(buf, "no") == 0)
    return sm__param_num(c, key, 0, SM__V_BOOL, layer, ev);
  if (sm__config_num(buf, 0, &v) == 0)
    return sm__param_num(c, key, v, SM__V_NUM, layer, ev);
  if (buf[0] == '[' && buf[n - 1] == ']') {
    sm__param *p = sm__param_str(c, key, buf, SM__V_LIST, layer, ev);
    if (p != NULL)
      p->list_n = list_sum(buf, &p->num);
    return p;
  }
  return sm__param_str(c, key, buf, SM__V_STR, layer, ev);
}

/* Does name (a leaf or a dotted suffix) match the key of p? */
static int name_matches(const sm__param *p, const char *name) {
  size_t kn, nn;

  if (strchr(name, '.') == NULL)
    return strcmp(p->leaf, name) == 0;
  kn = strlen(p->key);
  nn = strlen(name);
  if (nn > kn)
    return 0;
  if (strcmp(p->key + kn - nn, name) != 0)
    return 0;
  return nn == kn || p->key[kn - nn - 1] == '.';
}

static int dots(const char *k) {
  int n = 0;
  for (; *k; k++)
    n += *k == '.';
  return n;
}

static const sm__param *get_if(sm__ctx *c, const char *const *names,
                               int min_layer, const sm__param *self,
                               int (*skip)(const sm__param *)) {
  const sm__param *best = NULL;
  int best_name = 0;

  for (int i = 0; i < c->params.n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    if (p == self || p->layer < min_layer || (skip != NULL && skip(p)))
      continue;
    /* "auto" defers to another source (DeepSpeed configs under HF). */
    if (p->kind == SM__V_STR && strcmp(p->str, "auto") == 0)
      continue;
    /* `batch_size = args.batch_size` only passes a value along (asked
     * for by its dotted path, zero_optimization.stage = args.stage is
     * followed). */
    if (p->kind == SM__V_REF && strcmp(p->str, p->key) == 0)
      continue;
    for (int j = 0; names[j]; j++) {
      if (!name_matches(p, names[j]))
        continue;
      if (p->kind == SM__V_REF && strchr(names[j], '.') == NULL &&
          strchr(p->str, '.') == NULL && strcmp(p->str, p->leaf) == 0)
        break;
      /* Same layer and name: a top-level key before one nested in a
       * component's section (d_model: 144 over lm_model.d_model), then
       * the latest write. */
      if (best == NULL || p->layer > best->layer ||
          (p->layer == best->layer &&
           (j < best_name ||
            (j == best_name &&
             (dots(p->key) < dots(best->key) ||
              (dots(p->key) == dots(best->key) && p->order > best->order)))))) {
        best = p;
        best_name = j;
      }
      break;
    }
  }
  return best;
}

static const sm__param *get(sm__ctx *c, const char *const *names, int min_layer,
                            const sm__param *self) {
  return get_if(c, names, min_layer, self, NULL);
}

/* A reference by dotted name ("data.batch_size"): the dotted key or, when
 * a higher layer sets the bare leaf ("--batch-size"), that one. */
static const sm__param *by_name(sm__ctx *c, const char *name,
                                const sm__param *self) {
  const char *names[2] = {name, NULL};
  const char *dot = strrchr(name, '.');
  const sm__param *q = get(c, names, 0, self), *q2;
  if (dot == NULL)
    return q;
  names[0] = dot + 1;
  q2 = get(c, names, 0, self);
  if (q == NULL || (q2 != NULL && q2->layer > q->layer))
    return q2;
  return q;
}

const sm__param *sm__param_deref(sm__ctx *c, const sm__param *p) {
  for (int hop = 0; p != NULL && p->kind == SM__V_REF && hop < 6; hop++) {
    p = by_name(c, p->str, p);
  }
  return (p != NULL && p->kind == SM__V_REF) ? NULL : p;
}

const sm__param *sm__param_get_min(sm__ctx *c, const char *const *names,
                                   int min_layer) {
  return sm__param_deref(c, get(c, names, min_layer, NULL));
}

const sm__param *sm__param_get(sm__ctx *c, const char *const *names) {
  return sm__param_get_min(c, names, 0);
}

const sm__param *sm__param_get_unless(sm__ctx *c, const char *const *names,
                                      int (*skip)(const sm__param *)) {
  return sm__param_deref(c, get_if(c, names, 0, NULL, skip));
}

/* Keys that stand for the data-parallel world size in expressions. */
static int is_world(const char *name) {
  const char *dot = strrchr(name, '.');
  const char *leaf = dot ? dot + 1 : name;
  return strcmp(leaf, "@world") == 0 || strcmp(leaf, "world_size") == 0 ||
         strcmp(leaf, "ddp_world_size") == 0 || strcmp(leaf, "n_gpu") == 0;
}

/* A value on the evaluator's stack: a number, a string, None, or
 * unknown (a key that is not set, a call that was not run). */
enum { EV_NUM, EV_STR, EV_NONE, EV_UNK };
typedef struct evv {
  int k;
  double num;
  const char *str; /* EV_STR: text, spaces as '\x03' */
} evv;

static evv eval_ref(sm__ctx *c, const sm__param *self, const char *tok,
                    int depth);

/* A value as a condition: 1, 0, or -1 when unknown. */
static int truth(evv x) {
  return x.k == EV_UNK    ? -1
         : x.k == EV_NUM  ? x.num != 0
         : x.k == EV_NONE ? 0
                          : x.str[0] != '\0';
}

/* Evaluates RPN text over the store: arithmetic (+ - * / // % **),
 * comparisons (== != < > <= >=, is, isnot), and, or, not, numbers,
 * strings ("text), @none, @world, ? (unknown) and key names.  Unknowns
 * propagate, except where and/or decide without them. */
static evv eval_rpn3(sm__ctx *c, const sm__param *self, const char *rpn,
                     int depth) {
  evv st[32], unk = {EV_UNK, 0, NULL};
  int sp = 0;
  const char *p = rpn;

  if (depth > 6 || rpn == NULL)
    return unk;
  while (*p) {
    char tok[128];
    size_t n = 0;
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    while (*p && *p != ' ' && n + 1 < sizeof(tok))
      tok[n++] = *p++;
    tok[n] = '\0';
    if (strcmp(tok, "not") == 0) {
      evv *a;
      if (sp < 1)
        return unk;
      a = &st[sp - 1];
      if (a->k == EV_NUM)
        a->num = a->num == 0;
      else if (a->k == EV_NONE || (a->k == EV_STR && a->str[0] == '\0'))
        *a = (evv){EV_NUM, 1, NULL};
      else if (a->k == EV_STR)
        *a = (evv){EV_NUM, 0, NULL};
      continue;
    }
    if (strcmp(tok, "?:") == 0) {
      /* a b cond ?: -- a where cond holds, b where it does not. */
      int t;
      if (sp < 3)
        return unk;
      t = truth(st[sp - 1]);
      sp -= 3;
      st[sp] = t < 0 ? unk : t ? st[sp] : st[sp + 1];
      sp++;
      continue;
    }
    if (strcmp(tok, "and") == 0 || strcmp(tok, "or") == 0) {
      evv a, b;
      int ta, tb, and = tok[0] == 'a';
      if (sp < 2)
        return unk;
      b = st[--sp];
      a = st[--sp];
      ta = truth(a);
      tb = truth(b);
      if (and)
        ta = (ta == 0 || tb == 0) ? 0 : (ta < 0 || tb < 0) ? -1 : 1;
      else
        ta = (ta == 1 || tb == 1) ? 1 : (ta < 0 || tb < 0) ? -1 : 0;
      st[sp++] = ta < 0 ? unk : (evv){EV_NUM, ta, NULL};
      continue;
    }
    if (strcmp(tok, "==") == 0 || strcmp(tok, "!=") == 0 ||
        strcmp(tok, "is") == 0 || strcmp(tok, "isnot") == 0 ||
        strcmp(tok, "<") == 0 || strcmp(tok, ">") == 0 ||
        strcmp(tok, "<=") == 0 || strcmp(tok, ">=") == 0) {
      evv a, b;
      int r, eqop = tok[0] == '=' || tok[0] == '!' || tok[0] == 'i';
      int neg = tok[0] == '!' || strcmp(tok, "isnot") == 0;
      if (sp < 2)
        return unk;
      b = st[--sp];
      a = st[--sp];
      if (a.k == EV_UNK || b.k == EV_UNK) {
        st[sp++] = unk;
        continue;
      }
      if (eqop) {
        if (a.k != b.k)
          r = 0;
        else if (a.k == EV_NUM)
          r = a.num == b.num;
        else if (a.k == EV_STR)
          r = strcmp(a.str, b.str) == 0;
        else
          r = 1;
        if (neg)
          r = !r;
      } else {
        if (a.k != EV_NUM || b.k != EV_NUM) {
          st[sp++] = unk;
          continue;
        }
        r = tok[0] == '<' ? (tok[1] ? a.num <= b.num : a.num < b.num)
                          : (tok[1] ? a.num >= b.num : a.num > b.num);
      }
      st[sp++] = (evv){EV_NUM, r, NULL};
      continue;
    }
    if (strchr("+-*/%", tok[0]) != NULL &&
        (n == 1 || strcmp(tok, "//") == 0 || strcmp(tok, "**") == 0)) {
      evv a, b;
      if (sp < 2)
        return unk;
      b = st[--sp];
      a = st[--sp];
      if (a.k != EV_NUM || b.k != EV_NUM) {
        st[sp++] = unk;
        continue;
      }
      if (strcmp(tok, "+") == 0)
        a.num += b.num;
      else if (strcmp(tok, "-") == 0)
        a.num -= b.num;
      else if (strcmp(tok, "*") == 0)
        a.num *= b.num;
      else if (strcmp(tok, "**") == 0)
        a.num = pow(a.num, b.num);
      else if (b.num == 0)
        a = unk;
      else if (strcmp(tok, "/") == 0)
        a.num /= b.num;
      else if (strcmp(tok, "//") == 0)
        a.num = floor(a.num / b.num);
      else
        a.num = fmod(a.num, b.num);
      st[sp++] = a;
      continue;
    }
    if (sp == 32)
      return unk;
    if (isdigit((unsigned char)tok[0]) || tok[0] == '.') {
      double v;
      if (sm__config_num(tok, 0, &v) != 0)
        return unk;
      st[sp++] = (evv){EV_NUM, v, NULL};
    } else if (tok[0] == '"') {
      st[sp++] = (evv){EV_STR, 0, sm__strdup(c, tok + 1)};
    } else if (strcmp(tok, "@none") == 0) {
      st[sp++] = (evv){EV_NONE, 0, NULL};
    } else if (strcmp(tok, "?") == 0) {
      st[sp++] = unk;
    } else {
      st[sp++] = eval_ref(c, self, tok, depth);
    }
  }
  if (sp != 1 || (st[0].k == EV_NUM && !isfinite(st[0].num)))
    return unk;
  return st[0];
}

static evv eval_ref(sm__ctx *c, const sm__param *self, const char *tok,
                    int depth) {
  evv unk = {EV_UNK, 0, NULL};
  const sm__param *q;
  if (is_world(tok))
    return c->world > 0 ? (evv){EV_NUM, c->world, NULL} : unk;
  q = sm__param_deref(c, by_name(c, tok, self));
  if (q == NULL || q == self)
    return unk;
  if (q->kind == SM__V_EXPR)
    return eval_rpn3(c, q, q->str, depth + 1);
  if (q->kind == SM__V_NUM || q->kind == SM__V_BOOL ||
      (q->kind == SM__V_LIST && isfinite(q->num)))
    return (evv){EV_NUM, q->num, NULL};
  if (q->kind == SM__V_NULL)
    return (evv){EV_NONE, 0, NULL};
  if (q->kind == SM__V_STR) {
    /* Strings compare in the RPN spelling (spaces as '\x03'). */
    char *t = sm__strdup(c, q->str);
    for (char *x = t; x && *x; x++)
      if (*x == ' ')
        *x = '\x03';
    return t ? (evv){EV_STR, 0, t} : unk;
  }
  return unk;
}

static int eval_rpn(sm__ctx *c, const sm__param *self, const char *rpn,
                    double *out, int depth) {
  evv r = eval_rpn3(c, self, rpn, depth);
  if (r.k != EV_NUM)
    return -1;
  *out = r.num;
  return 0;
}

int sm__cond_value(sm__ctx *c, const char *rpn) {
  evv r = eval_rpn3(c, NULL, rpn, 0);
  if (r.k == EV_UNK)
    return -1;
  if (r.k == EV_NUM)
    return r.num != 0;
  if (r.k == EV_NONE)
    return 0;
  return r.str[0] != '\0';
}

int sm__param_value(sm__ctx *c, const sm__param *p, double *out) {
  p = sm__param_deref(c, p);
  if (p == NULL)
    return -1;
  if (p->kind == SM__V_NUM || p->kind == SM__V_BOOL ||
      (p->kind == SM__V_LIST && p->list_n > 0 && isfinite(p->num))) {
    /* A list counts as the sum of its numbers (Swin's DEPTHS). */
    *out = p->num;
    return 0;
  }
  if (p->kind == SM__V_EXPR)
    return eval_rpn(c, p, p->str, out, 0);
  return -1;
}

const char *sm__env(sm__ctx *c, const char *name) {
  for (int i = c->n_env - 1; i >= 0; i--)
    if (strcmp(c->env_k[i], name) == 0)
      return c->env_v[i];
  return NULL;
}

void sm__signal(sm__ctx *c, sm__sig s, const char *ev, int layer) {
  if (c->sig[s] == NULL || layer > c->sig_layer[s]) {
    c->sig[s] = ev ? ev : "command";
    c->sig_layer[s] = layer;
  }
}

void sm__word_add(sm__ctx *c, sm__word w, const char *ev, int weight) {
  /* "?" marks evidence that sm__words_at fills in. */
  if (c->word[w] == NULL)
    c->word[w] = ev ? ev : "?";
  c->word_n[w] += weight;
  if (weight >= 2)
    c->word_strong[w] += weight;
  c->word_src[w][weight < 1 ? 1 : weight > 3 ? 3 : weight]++;
  if (c->words_module && weight <= 1)
    c->word_src[w][0]++;
}

/* Substrings that hint at a word family.  A leading '=' asks for the
 * whole word (between non-letters). */
static const struct {
  const char *pat;
  sm__word w;
} word_pats[] = {
    {"causallm", SM__W_LM},
    {"causal_lm", SM__W_LM},
    {"gpt", SM__W_LM},
    {"llama", SM__W_LM},
    {"language_model", SM__W_LM},
    {"tokenizer", SM__W_LM},
    {"vocab_size", SM__W_LM},
    {"lm_head", SM__W_LM},
    {"maskedlm", SM__W_LM},
    {"detection", SM__W_DETECTION},
    {"detector", SM__W_DETECTION},
    {"bbox", SM__W_DETECTION},
    {"yolo", SM__W_DETECTION},
    {"detr", SM__W_DETECTION},
    {"rcnn", SM__W_DETECTION},
    {"retinanet", SM__W_DETECTION},
    {"mmdet", SM__W_DETECTION},
    {"detectron", SM__W_DETECTION},
    {"segmentation", SM__W_SEGMENTATION},
    {"deeplab", SM__W_SEGMENTATION},
    {"ade20k", SM__W_SEGMENTATION},
    {"cityscapes", SM__W_SEGMENTATION},
    {"mask2former", SM__W_SEGMENTATION},
    {"semseg", SM__W_SEGMENTATION},
    {"panoptic", SM__W_PANOPTIC},
    {"=masks", SM__W_MASKS},
    {"diffusion", SM__W_DIFFUSION},
    {"ddpm", SM__W_DIFFUSION},
    {"ddim", SM__W_DIFFUSION},
    {"noise_schedule", SM__W_DIFFUSION},
    {"denois", SM__W_DIFFUSION},
    /* Score-based models: noise-level preconditioning and its losses
     * (EDM's Precond/VPLoss/VELoss, sigma_data). */
    {"precond", SM__W_DIFFUSION},
    {"sigma_data", SM__W_DIFFUSION},
    {"score_model", SM__W_DIFFUSION},
    /* Adversarial training: a discriminator beside the generator. */
    {"discriminator", SM__W_GAN},
    {"stylegan", SM__W_GAN},
    {"=gan", SM__W_GAN},
    {"r1_gamma", SM__W_GAN},
    {"=dino", SM__W_SELFSUP},
    {"=moco", SM__W_SELFSUP},
    {"simclr", SM__W_SELFSUP},
    {"byol", SM__W_SELFSUP},
    {"self_supervised", SM__W_SELFSUP},
    {"selfsup", SM__W_SELFSUP},
    {"ibot", SM__W_SELFSUP},
    /* Not "mae" alone: mean absolute error is the loss and metric of
     * regression (graphs, time series); masked autoencoders are named
     * with their backbone or their masking. */
    {"mae_vit", SM__W_SELFSUP},
    {"maevit", SM__W_SELFSUP},
    {"mae_pretrain", SM__W_SELFSUP},
    {"pretrain_mae", SM__W_SELFSUP},
    /* Joint-embedding methods: two augmented views of one image, a
     * momentum or target encoder, multi-crop. */
    {"simsiam", SM__W_SELFSUP},
    {"barlow", SM__W_SELFSUP},
    {"=swav", SM__W_SELFSUP},
    {"vicreg", SM__W_SELFSUP},
    {"jepa", SM__W_SELFSUP},
    {"twocrop", SM__W_SELFSUP},
    {"two_crop", SM__W_SELFSUP},
    {"multicrop", SM__W_SELFSUP},
    {"multi_crop", SM__W_SELFSUP},
    {"target_encoder", SM__W_SELFSUP},
    {"momentum_encoder", SM__W_SELFSUP},
    {"mask_ratio", SM__W_SELFSUP},
    {"norm_pix_loss", SM__W_SELFSUP},
    {"llava", SM__W_MULTIMODAL},
    {"vision_tower", SM__W_MULTIMODAL},
    {"mm_projector", SM__W_MULTIMODAL},
    {"multimodal", SM__W_MULTIMODAL},
    {"blip", SM__W_MULTIMODAL},
    {"flamingo", SM__W_MULTIMODAL},
    {"speech", SM__W_SPEECH},
    {"audio", SM__W_SPEECH},
    {"wav2vec", SM__W_SPEECH},
    {"whisper", SM__W_SPEECH},
    {"librispeech", SM__W_SPEECH},
    {"=asr", SM__W_SPEECH},
    {"recommend", SM__W_RECSYS},
    {"dlrm", SM__W_RECSYS},
    {"criteo", SM__W_RECSYS},
    {"movielens", SM__W_RECSYS},
    {"translation", SM__W_TRANSLATION},
    {"=wmt", SM__W_TRANSLATION},
    {"contrastive", SM__W_CONTRASTIVE},
    {"open_clip", SM__W_CONTRASTIVE},
    {"infonce", SM__W_CONTRASTIVE},
    {"siglip", SM__W_CONTRASTIVE},
    {"classif", SM__W_CLASSIFICATION},
    {"imagenet", SM__W_CLASSIFICATION},
    {"cifar", SM__W_CLASSIFICATION},
    {"num_classes", SM__W_CLASSIFICATION},
    {"instruction", SM__W_INSTRUCT},
    {"alpaca", SM__W_INSTRUCT},
    {"sharegpt", SM__W_INSTRUCT},
    {"conversation", SM__W_INSTRUCT},
    {"=sft", SM__W_INSTRUCT},
    {"supervised_finetun", SM__W_INSTRUCT}, /* SFT spelled out */
    {"supervised_fine_tun", SM__W_INSTRUCT},
    {"vicuna", SM__W_INSTRUCT},
    {"finetun", SM__W_FINETUNE},
    {"fine_tun", SM__W_FINETUNE},
    {"pretrain", SM__W_PRETRAIN},
    {"pre_train", SM__W_PRETRAIN},
    {"textdet", SM__W_TEXTDET},
    {"text_det", SM__W_TEXTDET},
    /* Whole words: RRDBNet (a super-resolution network) holds "dbnet". */
    {"=dbnet", SM__W_TEXTDET},
    {"=dbnetpp", SM__W_TEXTDET},
    {"psenet", SM__W_TEXTDET},
    {"fcenet", SM__W_TEXTDET},
    {"textrecog", SM__W_TEXTREC},
    {"text_recog", SM__W_TEXTREC},
    {"=crnn", SM__W_TEXTREC},
    {"satrn", SM__W_TEXTREC},
    {"abinet", SM__W_TEXTREC},
    {"instance_seg", SM__W_INSTANCE},
    {"instance-seg", SM__W_INSTANCE},
    {"insseg", SM__W_INSTANCE},
    {"ytvis", SM__W_VIDEO},
    {"youtubevis", SM__W_VIDEO},
    {"=video", SM__W_VIDEO},
    {"keypoint", SM__W_POSE},
    {"pose_estim", SM__W_POSE},
    {"topdown", SM__W_POSE},
    {"action_recog", SM__W_ACTION},
    {"kinetics", SM__W_ACTION},
    {"ucf101", SM__W_ACTION},
    {"hmdb", SM__W_ACTION},
    {"ssv2", SM__W_ACTION},
    {"sthv2", SM__W_ACTION},
    {"something_something", SM__W_ACTION},
    {"num_frames", SM__W_VIDEO},
    {"tubelet", SM__W_VIDEO},
    {"=ssl", SM__W_SELFSUP},
    {"=ibot", SM__W_SELFSUP},
    {"=ctc", SM__W_SPEECH},
    {"fbank", SM__W_SPEECH},
    {"wenet", SM__W_SPEECH},
    {"espnet", SM__W_SPEECH},
    {"conformer", SM__W_SPEECH},
    {"sfttrainer", SM__W_INSTRUCT},
    {"sftconfig", SM__W_INSTRUCT},
    {"dpotrainer", SM__W_PREFERENCE},
    {"dpoconfig", SM__W_PREFERENCE},
    {"=dpo", SM__W_PREFERENCE},
    {"orpo", SM__W_PREFERENCE},
    {"reward_model", SM__W_PREFERENCE},
    {"=ctr", SM__W_RECSYS},
    {"embedding_bag", SM__W_RECSYS},
    {"embeddingbag", SM__W_RECSYS},
    {"torchrec", SM__W_RECSYS},
    {"speaker", SM__W_SPEAKER},
    {"=spk", SM__W_SPEAKER},
    {"ecapa", SM__W_SPEAKER},
    {"xvector", SM__W_SPEAKER},
    {"speaker_verif", SM__W_SPEAKER},
    /* Graph learning: the libraries, message passing, OGB's three kinds
     * of prediction (graph, node, link). */
    {"torch_geometric", SM__W_GRAPH},
    {"=pyg", SM__W_GRAPH},
    {"=dgl", SM__W_GRAPH},
    {"=ogb", SM__W_GRAPH},
    {"=gnn", SM__W_GRAPH},
    {"=gcn", SM__W_GRAPH},
    {"graphsage", SM__W_GRAPH},
    {"edge_index", SM__W_GRAPH},
    {"messagepassing", SM__W_GRAPH},
    {"message_passing", SM__W_GRAPH},
    {"graphormer", SM__W_GRAPH},
    {"graphproppred", SM__W_GRAPHLEVEL},
    {"graph_pred", SM__W_GRAPHLEVEL},
    {"graph_class", SM__W_GRAPHLEVEL},
    {"graph_regress", SM__W_GRAPHLEVEL},
    {"molhiv", SM__W_GRAPHLEVEL},
    {"molpcba", SM__W_GRAPHLEVEL},
    {"=zinc", SM__W_GRAPHLEVEL},
    {"=qm9", SM__W_GRAPHLEVEL},
    {"ogbg", SM__W_GRAPHLEVEL},
    {"global_mean_pool", SM__W_GRAPHLEVEL},
    {"global_add_pool", SM__W_GRAPHLEVEL},
    {"global_max_pool", SM__W_GRAPHLEVEL},
    {"pcqm4m", SM__W_GRAPHLEVEL},
    {"nodeproppred", SM__W_NODELEVEL},
    {"ogbn", SM__W_NODELEVEL},
    {"planetoid", SM__W_NODELEVEL},
    {"linkproppred", SM__W_LINKLEVEL},
    {"ogbl", SM__W_LINKLEVEL},
    {"link_pred", SM__W_LINKLEVEL},
    /* Time series: forecasting horizons and the usual benchmark sets. */
    {"forecast", SM__W_TIMESERIES},
    {"time_series", SM__W_TIMESERIES},
    {"timeseries", SM__W_TIMESERIES},
    {"pred_len", SM__W_TIMESERIES},
    {"label_len", SM__W_TIMESERIES},
    {"etth1", SM__W_TIMESERIES},
    {"etth2", SM__W_TIMESERIES},
    {"ettm1", SM__W_TIMESERIES},
    {"ettm2", SM__W_TIMESERIES},
    {"ett_small", SM__W_TIMESERIES},
    /* Super-resolution: the method, its networks and its data. */
    {"super_resol", SM__W_SUPERRES},
    {"superresol", SM__W_SUPERRES},
    {"esrgan", SM__W_SUPERRES},
    {"esrnet", SM__W_SUPERRES},
    {"=edsr", SM__W_SUPERRES},
    {"swinir", SM__W_SUPERRES},
    {"=rcan", SM__W_SUPERRES},
    {"srgan", SM__W_SUPERRES}, /* SRGAN, ESRGAN, SRGANModel */
    {"rrdbnet", SM__W_SUPERRES},
    {"=div2k", SM__W_SUPERRES},
    {"=df2k", SM__W_SUPERRES},
    {"=srmodel", SM__W_SUPERRES},
    {"=sr_model", SM__W_SUPERRES},
    /* Neural audio codecs: residual vector quantisation of waveforms. */
    {"=codec", SM__W_CODEC}, /* not Python's codecs module */
    {"audio_codec", SM__W_CODEC},
    {"encodec", SM__W_CODEC},
    {"soundstream", SM__W_CODEC},
    {"=rvq", SM__W_CODEC},
    {"codebook", SM__W_CODEC}, /* an audio job's codebooks: see task.c */
    {"residual_vq", SM__W_CODEC},
    {"residualvq", SM__W_CODEC},
    {"residual_vector_quant", SM__W_CODEC},
    {"masked_lm", SM__W_LM},
    {"=mlm", SM__W_LM},
    /* Speech synthesis: text in, a waveform or a spectrogram out (the
     * model kinds and their vocoders). */
    {"=tts", SM__W_TTS},
    {"text_to_speech", SM__W_TTS},
    {"texttospeech", SM__W_TTS},
    {"speech_synthesis", SM__W_TTS},
    {"vocoder", SM__W_TTS},
    {"hifigan", SM__W_TTS},
    {"hifi_gan", SM__W_TTS},
    {"tacotron", SM__W_TTS},
    {"fastspeech", SM__W_TTS},
    {"fastpitch", SM__W_TTS},
    {"glowtts", SM__W_TTS},
    {"glow_tts", SM__W_TTS},
    {"styletts", SM__W_TTS},
    {"xtts", SM__W_TTS},
    {"=vits", SM__W_TTS},
    {"melgan", SM__W_TTS},
    {"waveglow", SM__W_TTS},
    {"bigvgan", SM__W_TTS},
    {"=vocos", SM__W_TTS},
    {"istftnet", SM__W_TTS},
    {"=phonemizer", SM__W_TTS},
    {"=g2p", SM__W_TTS},
};

static int is_alpha(int ch) {
  return isalpha(ch) != 0;
}

/* Does s hold a letter sequence any pattern could start with?  A quick
 * filter: every pattern has at least 3 letters. */
void sm__words_at(sm__ctx *c, const char *s, size_t n, const char *path,
                  int line, int weight) {
  int before = 0, after = 0;
  for (int i = 0; i < SM__NWORD; i++)
    before += c->word_n[i];
  if (n < 3)
    return;
  sm__words_in(c, s, n, NULL, weight);
  for (int i = 0; i < SM__NWORD; i++)
    after += c->word_n[i];
  if (after != before)
    /* Fill in the evidence of the families that were just seen. */
    for (int i = 0; i < SM__NWORD; i++)
      if (c->word[i] != NULL && strcmp(c->word[i], "?") == 0)
        c->word[i] = sm__ev(c, path, line);
}

void sm__words_in(sm__ctx *c, const char *s, size_t n, const char *ev,
                  int weight) {
  char low[256];

  if (n >= sizeof(low))
    n = sizeof(low) - 1;
  for (size_t i = 0; i < n; i++)
    low[i] = (char)tolower((unsigned char)s[i]);
  low[n] = '\0';
  for (size_t k = 0; k < SM_ARRAY_LEN(word_pats); k++) {
    const char *pat = word_pats[k].pat;
    int whole = pat[0] == '=';
    const char *hit;
    if (whole)
      pat++;
    hit = strstr(low, pat);
    if (hit == NULL)
      continue;
    if (whole) {
      size_t pl = strlen(pat);
      int ok = 0;
      for (; hit; hit = strstr(hit + 1, pat))
        if ((hit == low || !is_alpha((unsigned char)hit[-1])) &&
            !is_alpha((unsigned char)hit[pl])) {
          ok = 1;
          break;
        }
      if (!ok)
        continue;
    }
    /* "pretrained" weights say nothing about pre-training. */
    if (word_pats[k].w == SM__W_PRETRAIN) {
      const char *e = hit + strlen(pat);
      if (strncmp(e, "ed", 2) == 0)
        continue;
    }
    sm__word_add(c, word_pats[k].w, ev, weight);
  }
}

void sm__cand_add(sm__ctx *c, sm__vec *v, const char *name, const char *ev,
                  int weight) {
  sm__cand *k;

  if (name == NULL || name[0] == '\0')
    return;
  for (int i = 0; i < v->n; i++) {
    k = &SM__AT(*v, sm__cand, i);
    if (strcmp(k->name, name) == 0) {
      if (weight > k->weight) {
        k->weight = weight;
        k->ev = ev;
      }
      return;
    }
  }
  k = sm__vec_push(v);
  if (k == NULL)
    return;
  k->name = sm__strdup(c, name);
  k->ev = ev;
  k->weight = weight;
}

static int inside_component(const char *key) {
  static const char *const comp[] = {
      "model",      "decoder", "encoder",   "backbone",      "neck",
      "head",       "net",     "network",   "loss",          "criterion",
      "teacher",    "student", "eval",      "val",           "test",
      "evaluation", "ema",     "generator", "discriminator", NULL};
  const char *last = strrchr(key, '.');
  for (const char *a = key; last != NULL && a < last;) {
    const char *b = strchr(a, '.');
    size_t n = (size_t)(b - a);
    for (int i = 0; comp[i]; i++)
      if (strlen(comp[i]) == n && strncmp(a, comp[i], n) == 0)
        return 1;
    a = b + 1;
  }
  return 0;
}

/* Does a key name a stop bound (max_update, max_train_steps: its 'max'
 * word between '_', '-' or '.')? */
static int stop_bound(const char *k) {
  for (const char *q = strstr(k, "max"); q; q = strstr(q + 1, "max"))
    if ((q == k || q[-1] == '_' || q[-1] == '-' || q[-1] == '.') &&
        (q[3] == '_' || q[3] == '-'))
      return 1;
  return 0;
}

/* Step keys found by their naming convention, stop bounds first (a
 * stable reorder): fairseq's --max-update stops the run, its
 * --total-num-update is the learning-rate schedule's horizon, whichever
 * the command writes first. */
static void stop_bounds_first(const char **k, int n) {
  for (int i = 1; i < n; i++) {
    const char *x = k[i];
    int j = i;
    if (!stop_bound(x))
      continue;
    while (j > 0 && !stop_bound(k[j - 1])) {
      k[j] = k[j - 1];
      j--;
    }
    k[j] = x;
  }
}

const char *const *sm__role_keys(sm__ctx *c, const char *role) {
  const char *const *base = sm__keys(role);
  int arch = strcmp(role, "d_model") == 0 || strcmp(role, "n_layers") == 0 ||
             strcmp(role, "seq_len") == 0;
  const char **out;
  int nb = 0, n, cap, slot = -1;
  for (int i = 0; i < c->n_role; i++)
    if (strcmp(c->role_name[i], role) == 0) {
      if (c->role_params[i] == c->params.n)
        return c->role_list[i];
      slot = i;
    }
  while (base[nb])
    nb++;
  cap = nb + 201;
  out = sm_arena_calloc(&c->arena, (size_t)cap, sizeof(*out));
  if (out == NULL)
    return base;
  memcpy(out, base, (size_t)nb * sizeof(*out));
  n = nb;
  /* Options whose help text says they carry the role (-b "total batch
   * size of all GPUs", -e "number of epochs"). */
  for (int i = 0; i < c->params.n && n + 1 < cap; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    int dup = 0;
    if (strncmp(p->key, "__help.", 7) != 0 || strcmp(p->key + 7, role) != 0 ||
        p->kind != SM__V_STR)
      continue;
    for (int k = 0; k < n && !dup; k++)
      dup = strcmp(out[k], p->str) == 0;
    if (!dup)
      out[n++] = p->str;
  }
  /* Values of configs and the command first, then the code's defaults:
   * what the job sets is never crowded out. */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < c->params.n && n + 1 < cap; i++) {
      const sm__param *p = &SM__AT(c->params, sm__param, i);
      int dup = 0;
      if ((pass == 0) != (p->layer >= SM__L_CONFIG))
        continue;
      /* Internal keys (fn~f~x, __lr_rescale) are not configuration. */
      if ((p->key[0] == '_' && p->key[1] == '_') ||
          strchr(p->key, '~') != NULL || p->layer < SM__L_ENTRY)
        continue;
      /* A training quantity set inside a model or loss section describes
       * that component (model.decoder.num_iters), not the run. */
      if (!arch && inside_component(p->key))
        continue;
      for (int k = 0; k < n && !dup; k++)
        dup = strcmp(out[k], p->leaf) == 0;
      if (!dup && sm__key_role(p->leaf, role))
        out[n++] = p->leaf;
    }
  if (strcmp(role, "steps") == 0)
    stop_bounds_first(out + nb, n - nb);
  out[n] = NULL;
  if (slot < 0 && c->n_role < 16)
    slot = c->n_role++;
  if (slot >= 0) {
    c->role_name[slot] = role;
    c->role_list[slot] = out;
    c->role_params[slot] = c->params.n;
  }
  return out;
}

/* The help text of an option, read as its name: words joined by '_'
 * (at most 24), so that the token rules of keys.tsv apply to it. */
static void help_key(const char *help, char *out, size_t cap) {
  size_t o = 0;
  int words = 0, in = 0, paren = 0;
  for (const char *p = help; *p && o + 2 < cap && words < 24; p++) {
    /* Parenthesised asides ("(default = 4)", "(per-GPU)") are left out:
     * the description is the rest. */
    if (*p == '(' || *p == '[') {
      paren++;
      in = 0;
      continue;
    }
    if ((*p == ')' || *p == ']') && paren > 0) {
      paren--;
      continue;
    }
    if (paren > 0)
      continue;
    if (isalnum((unsigned char)*p)) {
      if (!in && o > 0)
        out[o++] = '_';
      out[o++] = (char)tolower((unsigned char)*p);
      if (!in)
        words++;
      in = 1;
    } else {
      in = 0;
    }
  }
  out[o] = '\0';
}

void sm__help_roles(sm__ctx *c, const char *key, const char *help,
                    const char *ev) {
  static const char *const roles[] = {"global",  "steps",      "epochs", "lr",
                                      "seq_len", "per_device", NULL};
  char hk[512];
  const char *leaf = strrchr(key, '.');
  leaf = leaf ? leaf + 1 : key;
  if (help == NULL || strlen(help) > 1024)
    return;
  help_key(help, hk, sizeof(hk));
  {
    /* A batch option whose help says it is the total of all GPUs. */
    int batch = sm__key_role(leaf, "per_device");
    const char *const *list = sm__keys("per_device");
    for (int k = 0; list[k] && !batch; k++)
      batch = strcmp(list[k], leaf) == 0;
    /* An option named only for the batch (--batch, --batchsize). */
    batch =
        batch || strcmp(leaf, "batch") == 0 || strcmp(leaf, "batchsize") == 0;
    if (batch && sm__key_role(hk, "global")) {
      sm__param_str(c, "__help.global", leaf, SM__V_STR, SM__L_CODE, ev);
      return;
    }
  }
  /* Otherwise only an option whose name says nothing (-e, -x, --it),
   * described in a few words ("number of epochs"). */
  {
    int words = 1;
    for (const char *q = hk; *q; q++)
      words += *q == '_';
    if (strlen(leaf) > 3 || words > 10)
      return;
  }
  for (int i = 0; roles[i]; i++) {
    int named = 0;
    for (int r = 0; roles[r] && !named; r++) {
      const char *const *list = sm__keys(roles[r]);
      named = sm__key_role(leaf, roles[r]);
      for (int k = 0; list[k] && !named; k++)
        named = strcmp(list[k], leaf) == 0;
    }
    if (named || !sm__key_role(hk, roles[i]))
      continue;
    if (strcmp(roles[i], "per_device") == 0 && sm__key_role(hk, "global"))
      continue;
    sm__param_str(c, sm__printf(c, "__help.%s", roles[i]), leaf, SM__V_STR,
                  SM__L_CODE, ev);
    break;
  }
}
