/* fingerprint.c - a deterministic semantic fingerprint of a job.
 *
 * The reference design embeds the whole metadata JSON with a neural text
 * encoder.  Here each known metadata field contributes a small block of
 * hashed features whose squared norm equals the field's weight, so the
 * cosine of two fingerprints is about the weighted share of fields on
 * which the jobs agree:
 *
 *   strings  the whole normalised value (most of the weight) and its word
 *            pieces ("llama-3-8b" -> "llama", "3", "8b"), so a different
 *            model size under a similar name keeps little similarity;
 *   numbers  log2-spaced buckets, four per octave, with linear
 *            interpolation between the two nearest, so equal values agree
 *            fully, values within a few percent nearly, and a factor of
 *            two not at all.
 *
 * Only workload metadata enters: run names, output paths, seeds, ports and
 * log intervals cannot move a fingerprint.  A job known only from a trace
 * (no model, dataset or task) is recognised instead by its user, its job
 * name with digits folded ("train_resnet50_run17" -> "train_resnet0_run0")
 * and its virtual cluster, beside whatever metadata the trace has.
 *
 * The second half of the file is a job's identity: the fields on which
 * two jobs must not differ to be the same job, and how much of it must be
 * known on both sides before a cosine can be trusted (see sm_history.h
 * and docs/history.md, "Matching"). */
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "schedmate/sm_history.h"

/* Squared weight of each field (sum about 30).  Fields appended to the
 * schema later get DEFAULT_W2. */
static float field_w2(int f) {
  switch (f) {
  case SM_META_MODEL_NAME:
    return 5.0f;
  case SM_META_DATASET:
    return 3.0f;
  case SM_META_TASK:
    return 2.0f;
  case SM_META_DOMAIN:
    return 0.5f;
  case SM_META_ITERATIONS:
    return 2.0f;
  case SM_META_ITERATION_TYPE:
    return 0.5f;
  case SM_META_GLOBAL_BATCH_SIZE:
    return 2.0f;
  case SM_META_PER_DEVICE_BATCH_SIZE:
    return 1.0f;
  case SM_META_LR:
    return 1.5f;
  case SM_META_GPUS:
    return 2.0f;
  case SM_META_NODES:
    return 0.5f;
  case SM_META_D_MODEL:
    return 1.5f;
  case SM_META_N_LAYERS:
    return 1.5f;
  case SM_META_SEQ_LEN:
    return 2.0f;
  case SM_META_PRECISION:
    return 1.5f;
  case SM_META_PARALLELISM:
    return 1.5f;
  default:
    return 1.0f;
  }
}

#define W2_USER 1.0f
#define W2_NAME 2.0f
#define W2_VC 0.5f

/* Share of a string field's weight on the whole value; the rest goes to
 * its word pieces. */
#define FULL_SHARE 0.9f
#define BUCKETS_PER_OCTAVE 4.0

static void add(float *v, uint64_t h, float w) {
  v[h & (SM_FP_DIMS - 1)] += (h >> 63) ? -w : w;
}

static uint64_t tag_hash(uint64_t tag, const char *s, size_t n) {
  return sm_hash64(s, n, 0x6a09e667f3bcc909ULL ^ (tag * 0x9e3779b97f4a7c15ULL));
}

/* Lower-cased copy of s into buf (cap bytes); returns its length. */
static size_t lower(const char *s, char *buf, size_t cap) {
  size_t n = 0;

  for (; *s && n + 1 < cap; s++)
    buf[n++] = (char)tolower((unsigned char)*s);
  buf[n] = '\0';
  return n;
}

/* Splits on anything but letters and digits; drop_numbers skips pieces
 * made of digits only. */
static int pieces(const char *s, size_t n, size_t *start, size_t *len, int max,
                  int drop_numbers) {
  int k = 0;
  size_t i = 0;

  while (i < n && k < max) {
    size_t j;
    int digits = 1;
    while (i < n && !isalnum((unsigned char)s[i]))
      i++;
    j = i;
    while (j < n && isalnum((unsigned char)s[j])) {
      digits &= isdigit((unsigned char)s[j]) != 0;
      j++;
    }
    if (j > i && !(drop_numbers && digits)) {
      start[k] = i;
      len[k] = j - i;
      k++;
    }
    i = j;
  }
  return k;
}

/* Job names: digit runs become one '0', so that run counters and dates
 * do not make two submissions of one job look different. */
static size_t fold_digits(char *s, size_t n) {
  size_t o = 0;

  for (size_t i = 0; i < n; i++) {
    if (isdigit((unsigned char)s[i])) {
      if (o > 0 && s[o - 1] == '0' &&
          (i > 0 && isdigit((unsigned char)s[i - 1])))
        continue;
      s[o++] = '0';
    } else {
      s[o++] = s[i];
    }
  }
  s[o] = '\0';
  return o;
}

static void add_string(float *v, uint64_t tag, const char *s, float w2,
                       float full_share, int trace_name) {
  char buf[256];
  size_t n = lower(s, buf, sizeof(buf));
  int drop_numbers = trace_name;

  if (trace_name)
    n = fold_digits(buf, n);
  size_t st[32], ln[32];
  int k = pieces(buf, n, st, ln, 32, drop_numbers);
  float w = sqrtf(w2);

  if (n == 0)
    return;
  if (k == 0)
    full_share = 1.0f;
  add(v, tag_hash(tag, buf, n), w * full_share);
  if (k > 0) {
    float rest = w * sqrtf(1.0f - full_share * full_share) / sqrtf((float)k);
    for (int i = 0; i < k; i++)
      add(v, tag_hash(tag + 1000, buf + st[i], ln[i]), rest);
  }
}

static void add_number(float *v, uint64_t tag, double x, float w2) {
  float w = sqrtf(w2);
  double pos, frac;
  long long b;
  uint64_t sign = x < 0 ? 1 : 0;
  float a0, a1, norm;

  if (x == 0) {
    add(v, tag_hash(tag, "zero", 4), w);
    return;
  }
  pos = log2(fabs(x)) * BUCKETS_PER_OCTAVE;
  b = (long long)floor(pos);
  frac = pos - (double)b;
  a0 = (float)(1.0 - frac);
  a1 = (float)frac;
  norm = sqrtf(a0 * a0 + a1 * a1);
  {
    long long key[2] = {b, (long long)sign};
    add(v, tag_hash(tag, (const char *)key, sizeof(key)), w * a0 / norm);
    key[0] = b + 1;
    add(v, tag_hash(tag, (const char *)key, sizeof(key)), w * a1 / norm);
  }
}

void sm_fingerprint(const sm_meta *m, const sm_fp_extra *x, float *out) {
  double ss = 0;

  memset(out, 0, SM_FP_DIMS * sizeof(float));
  for (int f = 0; f < SM_META_NFIELDS; f++) {
    const sm_meta_value *val = &m->f[f];
    if (!val->known)
      continue;
    if (sm_meta_type_of((sm_meta_field)f) == SM_META_STR) {
      if (val->str != NULL)
        add_string(out, (uint64_t)f + 1, val->str, field_w2(f), FULL_SHARE, 0);
    } else {
      add_number(out, (uint64_t)f + 1, val->num, field_w2(f));
    }
  }
  /* Trace attributes only where the metadata cannot identify the job. */
  if (x != NULL && !m->f[SM_META_MODEL_NAME].known &&
      !m->f[SM_META_DATASET].known && !m->f[SM_META_TASK].known) {
    if (x->user && *x->user)
      add_string(out, 201, x->user, W2_USER, 1.0f, 0);
    if (x->name && *x->name)
      add_string(out, 202, x->name, W2_NAME, 0.5f, 1);
    if (x->vc && *x->vc)
      add_string(out, 203, x->vc, W2_VC, 1.0f, 0);
  }
  for (int i = 0; i < SM_FP_DIMS; i++)
    ss += (double)out[i] * out[i];
  if (ss > 0) {
    float inv = (float)(1.0 / sqrt(ss));
    for (int i = 0; i < SM_FP_DIMS; i++)
      out[i] *= inv;
  }
}

float sm_fp_cosine(const float *a, const float *b) {
  double ab = 0, aa = 0, bb = 0;

  for (int i = 0; i < SM_FP_DIMS; i++) {
    ab += (double)a[i] * b[i];
    aa += (double)a[i] * a[i];
    bb += (double)b[i] * b[i];
  }
  if (aa <= 0 || bb <= 0)
    return 0.0f;
  return (float)(ab / sqrt(aa * bb));
}

/* ==== Identity ==== */

/* Relative tolerance on iteration counts (a schedule of 150,000 steps and
 * one of 150,001 are one schedule); architecture sizes must be equal. */
#define LENGTH_RTOL 0.01

/* Words that give a model's size in the field's naming conventions
 * (timm, HF, torchvision, YOLO-style presets spelt out). */
static const char *const size_words[] = {
    "tiny", "small", "base",   "large", "huge", "giant",  "mini",
    "nano", "micro", "medium", "xl",    "xxl",  "xlarge", "xxlarge"};

/* Equal as letters and digits, case folded: "Llama_7B" and "llama-7b"
 * are one name.  Reads the whole of both strings. */
static int str_equal(const char *a, const char *b) {
  for (;;) {
    while (*a && !isalnum((unsigned char)*a))
      a++;
    while (*b && !isalnum((unsigned char)*b))
      b++;
    if (*a == '\0' || *b == '\0')
      return *a == *b;
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return 0;
    a++;
    b++;
  }
}

/* A string with at least one letter or digit ("" and "---" say nothing). */
static int has_alnum(const char *s) {
  for (; s != NULL && *s; s++)
    if (isalnum((unsigned char)*s))
      return 1;
  return 0;
}

/* A job name as the fingerprint sees it: lower case, digit runs folded. */
static int name_equal(const char *a, const char *b) {
  char x[256], y[256];
  size_t nx = lower(a, x, sizeof(x)), ny = lower(b, y, sizeof(y));

  nx = fold_digits(x, nx);
  ny = fold_digits(y, ny);
  return nx == ny && memcmp(x, y, nx) == 0;
}

/* Whether a model name says which size of its family it is: a piece with
 * a digit ("7b", "resnet50", "patch16", "v2") or a size word ("base",
 * "small").  "unet", "transformer" or "detr" name a family whose members
 * differ by orders of magnitude in cost. */
static int name_has_size(const char *s) {
  char buf[256];
  size_t n = lower(s, buf, sizeof(buf)), st[32], ln[32];
  int k = pieces(buf, n, st, ln, 32, 0);

  for (int i = 0; i < k; i++) {
    for (size_t j = 0; j < ln[i]; j++)
      if (isdigit((unsigned char)buf[st[i] + j]))
        return 1;
    for (size_t w = 0; w < SM_ARRAY_LEN(size_words); w++)
      if (strlen(size_words[w]) == ln[i] &&
          memcmp(size_words[w], buf + st[i], ln[i]) == 0)
        return 1;
  }
  return 0;
}

static int known(const sm_meta *m, int f) {
  const sm_meta_value *v = &m->f[f];
  if (!v->known)
    return 0;
  if (sm_meta_type_of((sm_meta_field)f) == SM_META_STR)
    return has_alnum(v->str);
  return 1;
}

static int has(const char *s) {
  return has_alnum(s);
}

/* Known on both sides.  Values: equal (1) or not (0). */
static int both(const sm_meta *a, const sm_meta *b, int f) {
  return known(a, f) && known(b, f);
}

static int value_equal(const sm_meta *a, const sm_meta *b, int f) {
  const sm_meta_value *x = &a->f[f], *y = &b->f[f];

  if (sm_meta_type_of((sm_meta_field)f) == SM_META_STR)
    return str_equal(x->str, y->str);
  if (f == SM_META_ITERATIONS)
    return fabs(x->num - y->num) <=
           LENGTH_RTOL * fmax(fabs(x->num), fabs(y->num));
  return x->num == y->num;
}

/* The identity fields whose known-and-different values are a veto, in
 * the order a veto is reported. */
static const int veto_fields[] = {
    SM_META_MODEL_NAME, SM_META_D_MODEL,    SM_META_N_LAYERS,
    SM_META_SEQ_LEN,    SM_META_DATASET,    SM_META_TASK,
    SM_META_DOMAIN,     SM_META_ITERATIONS, SM_META_ITERATION_TYPE};

/* Metadata that names none of model, dataset, task: only a trace's user
 * and job name can identify the job (the fingerprint's own switch). */
static int trace_only(const sm_meta *m) {
  return !known(m, SM_META_MODEL_NAME) && !known(m, SM_META_DATASET) &&
         !known(m, SM_META_TASK);
}

/* The extractor found the job's configuration: it names the model, the
 * dataset or the task.  An exact digest over files that do not say even
 * that covers what the extractor read, not what the job reads (a preset
 * file it never opened), so it is no evidence of identity. */
static int found_job(const sm_meta *m) {
  return known(m, SM_META_MODEL_NAME) || known(m, SM_META_DATASET) ||
         known(m, SM_META_TASK);
}

/* Compares two provenance digests: 1 equal, 0 different, -1 unknown (one
 * is missing, or they are of different versions: the text before ':'). */
static int digest_cmp(const char *a, const char *b) {
  const char *ca, *cb;

  if (a == NULL || b == NULL || a[0] == '\0' || b[0] == '\0')
    return -1;
  ca = strchr(a, ':');
  cb = strchr(b, ':');
  if (ca == NULL || cb == NULL || ca - a != cb - b ||
      memcmp(a, b, (size_t)(ca - a)) != 0)
    return -1;
  return strcmp(a, b) == 0;
}

int sm_identity_compare(const sm_meta *a, const sm_fp_extra *ax,
                        const sm_meta *b, const sm_fp_extra *bx,
                        sm_identity_cmp *out) {
  sm_identity_cmp c = {0, -1};

  for (size_t i = 0; i < SM_ARRAY_LEN(veto_fields); i++) {
    int f = veto_fields[i];
    if (both(a, b, f) && !value_equal(a, b, f)) {
      c.veto = f;
      break;
    }
  }
  /* The model: an equal name that carries a size, or an equal
   * architecture (width and depth); an equal name without a size only
   * names the family. */
  if (both(a, b, SM_META_MODEL_NAME) && value_equal(a, b, SM_META_MODEL_NAME))
    c.shared |= name_has_size(a->f[SM_META_MODEL_NAME].str) ? SM_IDENT_MODEL
                                                            : SM_IDENT_FAMILY;
  if (both(a, b, SM_META_D_MODEL) && both(a, b, SM_META_N_LAYERS) &&
      value_equal(a, b, SM_META_D_MODEL) && value_equal(a, b, SM_META_N_LAYERS))
    c.shared |= SM_IDENT_MODEL;
  if (both(a, b, SM_META_DATASET) && value_equal(a, b, SM_META_DATASET))
    c.shared |= SM_IDENT_DATASET;
  if (both(a, b, SM_META_TASK) && value_equal(a, b, SM_META_TASK))
    c.shared |= SM_IDENT_TASK;
  /* The length: iterations; an epoch count is a length only with the
   * dataset it counts over, and a count of unknown unit is treated as
   * epochs. */
  if (both(a, b, SM_META_ITERATIONS) && value_equal(a, b, SM_META_ITERATIONS)) {
    int steps = both(a, b, SM_META_ITERATION_TYPE) &&
                value_equal(a, b, SM_META_ITERATION_TYPE) &&
                str_equal(a->f[SM_META_ITERATION_TYPE].str, "steps");
    if (steps || (c.shared & SM_IDENT_DATASET))
      c.shared |= SM_IDENT_LENGTH;
  }
  /* The configuration provenance: an equal exact digest is the same
   * command and configuration, however little the metadata says; a
   * residue (what the metadata does not explain) that differs while the
   * metadata agrees is a difference the extractor cannot read. */
  if (digest_cmp(a->config_digest, b->config_digest) == 1 && found_job(a) &&
      found_job(b))
    c.shared |= SM_IDENT_CONFIG;
  if (c.veto < 0 && digest_cmp(a->residue_digest, b->residue_digest) == 0)
    c.veto = SM_IDENT_VETO_UNEXPLAINED;
  /* A job known only by its trace attributes. */
  if (trace_only(a) && trace_only(b) && ax != NULL && bx != NULL &&
      has(ax->user) && has(bx->user) && has(ax->name) && has(bx->name)) {
    if (c.veto < 0 && !str_equal(ax->user, bx->user))
      c.veto = SM_IDENT_VETO_USER;
    else if (c.veto < 0 && !name_equal(ax->name, bx->name))
      c.veto = SM_IDENT_VETO_NAME;
    else if (c.veto < 0)
      c.shared |= SM_IDENT_TRACE;
  }
  if (out != NULL)
    *out = c;
  return c.veto < 0 && sm_identity_enough(c.shared);
}

unsigned sm_identity_known(const sm_meta *m, const sm_fp_extra *x) {
  sm_identity_cmp c;

  sm_identity_compare(m, x, m, x, &c);
  return c.shared & ~SM_IDENT_CONFIG;
}

int sm_identity_config_known(const sm_meta *m) {
  return digest_cmp(m->config_digest, m->config_digest) == 1 && found_job(m);
}

int sm_identity_enough(unsigned g) {
  int rest = ((g & SM_IDENT_DATASET) != 0) + ((g & SM_IDENT_TASK) != 0) +
             ((g & SM_IDENT_LENGTH) != 0);

  /* The less the model says, the more the rest must: a sized model and
   * two of the three, a model family and all three. */
  if (g & (SM_IDENT_TRACE | SM_IDENT_CONFIG))
    return 1;
  if (g & SM_IDENT_MODEL)
    return rest >= 2;
  return (g & SM_IDENT_FAMILY) && rest == 3;
}

char *sm_identity_describe(unsigned g, char *buf, size_t n) {
  static const char *const names[] = {"model",        "dataset", "task",
                                      "length",       "trace",   "model_family",
                                      "configuration"};
  size_t o = 0;

  if (g & SM_IDENT_MODEL)
    g &= ~SM_IDENT_FAMILY; /* the sized model says it all */

  if (n == 0)
    return buf;
  buf[0] = '\0';
  for (size_t i = 0; i < SM_ARRAY_LEN(names); i++)
    if (g & (1u << i)) {
      int w = snprintf(buf + o, n - o, "%s%s", o ? ", " : "", names[i]);
      if (w < 0 || (size_t)w >= n - o)
        break;
      o += (size_t)w;
    }
  if (o == 0)
    snprintf(buf, n, "none");
  return buf;
}

const char *sm_identity_veto_name(int veto) {
  if (veto >= 0 && veto < SM_META_NFIELDS)
    return sm_meta_name((sm_meta_field)veto);
  if (veto == SM_IDENT_VETO_USER)
    return "user";
  if (veto == SM_IDENT_VETO_NAME)
    return "job_name";
  if (veto == SM_IDENT_VETO_UNEXPLAINED)
    return "unexplained_difference";
  return NULL;
}
