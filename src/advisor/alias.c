/* alias.c - canonical model and dataset names through the alias table
 * kept as data (data/embed/aliases.tsv, embedded in the binary; an
 * operator's own table may replace it).  A raw value (a path, a Hub id,
 * an argument) is cleaned to a name-like key first, then matched against
 * the table's shell-style patterns in order. */
#include <ctype.h>
#include <fnmatch.h>
#include <pthread.h>
#include <string.h>

#include "advisor/advisor_int.h"

extern const char sm__embed_aliases[];
extern const unsigned long sm__embed_aliases_len;

#define MAX_ALIASES 2048

typedef struct alias {
  char kind;             /* 'm' model, 'd' dataset */
  const char *pattern;   /* fnmatch pattern over the cleaned name */
  const char *canonical; /* canonical name; '*' keeps the cleaned name */
  const char *task;      /* task hint or NULL */
  const char *domain;    /* domain hint or NULL */
} alias;

static alias table[MAX_ALIASES];
static int n_table;
static char *table_text;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Parses text (taken over) into the table; returns the count or -1 with
 * the bad line in *bad. */
static int parse_table(char *text, alias *out, int *bad) {
  int n = 0, line = 0;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save)) {
    char *f[5] = {0};
    int nf = 0;
    line++;
    if (l[0] == '#' || l[0] == '\0' || l[0] == '\r')
      continue;
    for (char *p = l; nf < 5;) {
      f[nf++] = p;
      p = strchr(p, '\t');
      if (p == NULL)
        break;
      *p++ = '\0';
    }
    for (int i = 0; i < nf; i++) {
      size_t k = strlen(f[i]);
      while (k > 0 && (f[i][k - 1] == '\r' || f[i][k - 1] == ' '))
        f[i][--k] = '\0';
    }
    if (nf < 3 ||
        (strcmp(f[0], "model") != 0 && strcmp(f[0], "dataset") != 0) ||
        f[1][0] == '\0' || f[2][0] == '\0') {
      *bad = line;
      return -1;
    }
    if (n == MAX_ALIASES)
      break;
    out[n].kind = f[0][0] == 'm' ? 'm' : 'd';
    out[n].pattern = f[1];
    out[n].canonical = f[2];
    out[n].task = (nf > 3 && strcmp(f[3], "-") != 0 && f[3][0]) ? f[3] : NULL;
    out[n].domain = (nf > 4 && strcmp(f[4], "-") != 0 && f[4][0]) ? f[4] : NULL;
    n++;
  }
  return n;
}

static void load_embedded(void) {
  int bad = 0, n;
  char *t = sm_strndup(sm__embed_aliases, sm__embed_aliases_len);
  if (t == NULL)
    return;
  n = parse_table(t, table, &bad);
  if (n < 0) {
    sm_free(t);
    return;
  }
  n_table = n;
  table_text = t;
}

int sm__alias_load(const char *text, size_t len, sm_err *err) {
  alias *tmp = sm_calloc(MAX_ALIASES, sizeof(*tmp));
  char *t = sm_strndup(text, len), *old;
  int bad = 0, n;
  if (tmp == NULL || t == NULL) {
    sm_free(tmp);
    sm_free(t);
    return sm_err_set(err, SM_ENOMEM, "aliases: out of memory");
  }
  if (memchr(text, '\0', len) != NULL) {
    sm_free(tmp);
    sm_free(t);
    return sm_err_set(err, SM_EPARSE, "aliases: binary content");
  }
  n = parse_table(t, tmp, &bad);
  if (n < 0) {
    sm_free(tmp);
    sm_free(t);
    return sm_err_set(err, SM_EPARSE,
                      "aliases: line %d: expected kind<TAB>pattern<TAB>"
                      "canonical[<TAB>task<TAB>domain]",
                      bad);
  }
  pthread_once(&once, load_embedded);
  pthread_mutex_lock(&lock);
  memcpy(table, tmp, (size_t)n * sizeof(*tmp));
  n_table = n;
  /* Results are copied into each extraction's arena, so the old text is
   * no longer referenced. */
  old = table_text;
  table_text = t;
  pthread_mutex_unlock(&lock);
  sm_free(old);
  sm_free(tmp);
  return 0;
}

/* ==== Cleaning ==== */

static const char *const generic_dirs[] = {
    "train",     "training", "val",      "valid",  "validation", "test",
    "data",      "dataset",  "datasets", "images", "image",      "raw",
    "processed", "files",    "input",    "inputs", "text",       "corpus",
    "",          ".",        "..",       NULL};

static const char *const generic_names[] = {
    "model",      "models",     "checkpoint",  "checkpoints",
    "ckpt",       "output",     "outputs",     "pretrained",
    "scratch",    "resume",     "none",        "null",
    "auto",       "custom",     "base",        "default",
    "path",       "dir",        "data",        "dataset",
    "true",       "false",      "weights",     "model-weights",
    "asr-model",  "lm-model",   "ctc-model",   "seq2seq-model",
    "main-model", "base-model", "transformer", "train",
    "training",   "val",        "valid",       "validation",
    "test",       "eval",       "pretrain",    "finetune",
    "pre-train",  "fine-tune",  NULL};

static int in(const char *const *list, const char *s, size_t n) {
  for (int i = 0; list[i]; i++)
    if (strlen(list[i]) == n && strncmp(list[i], s, n) == 0)
      return 1;
  return 0;
}

static void strip_suffix(char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  if (n > k + 1 && strcmp(s + n - k, suf) == 0)
    s[n - k] = '\0';
}

/* A shard of a dataset rather than its name: digits, brace ranges and
 * the words shards are numbered by (part-000-00000.npy, shard-00012.tar,
 * {0000..2175}.tar, train-00001-of-00064). */
/* Is a path component the name of a list or annotation file
 * (train_list.txt, meta_info_X_GT.txt, metadata.csv, filelist.scp)
 * rather than of data?  Its directory may still name the dataset; a
 * folder (list_kinetics-400/, no extension) is read as before. */
static int list_file_like(const char *s, size_t n) {
  static const char *const words[] = {
      "list",      "lists",      "filelist",    "filelists", "manifest",
      "manifests", "metadata",   "meta",        "index",     "ann",
      "anns",      "annotation", "annotations", NULL};
  size_t i = 0, k = n;
  /* A file: a name with an extension (list_kinetics-400/ is a folder). */
  while (k > 0 && s[k - 1] != '.')
    k--;
  if (k <= 1 || k == n || !isalpha((unsigned char)s[k]))
    return 0;
  n = k - 1;
  while (i < n) {
    size_t j = i;
    while (j < n && isalpha((unsigned char)s[j]))
      j++;
    for (int w = 0; words[w] && j > i; w++)
      if (strlen(words[w]) == j - i && strncmp(s + i, words[w], j - i) == 0)
        return 1;
    i = j < n ? j + 1 : j;
  }
  return 0;
}

static int shard_like(const char *s, size_t n) {
  static const char *const words[] = {"part",  "shard", "chunk", "split", "of",
                                      "train", "val",   "valid", "test",  NULL};
  size_t i = 0, digits = 0;
  const char *dot = NULL;
  for (size_t k = 0; k < n; k++)
    if (s[k] == '.' && k + 1 < n && isalpha((unsigned char)s[k + 1]))
      dot = s + k;
  if (dot != NULL)
    n = (size_t)(dot - s); /* the extension */
  while (i < n) {
    if (isdigit((unsigned char)s[i])) {
      digits++;
      i++;
    } else if (isalpha((unsigned char)s[i])) {
      size_t j = i;
      int hit = 0;
      while (j < n && isalpha((unsigned char)s[j]))
        j++;
      for (int w = 0; words[w] && !hit; w++)
        hit = strlen(words[w]) == j - i && strncmp(s + i, words[w], j - i) == 0;
      if (!hit)
        return 0;
      i = j;
    } else {
      i++;
    }
  }
  return digits > 0;
}

/* Cleans raw into out; returns 0 or -1 when nothing name-like is left. */
static int clean(const char *raw, int dataset, char *out, size_t cap) {
  char buf[512];
  size_t n = 0;
  const char *s = raw, *e, *start;
  char *dot;

  if (raw == NULL)
    return -1;
  /* A tuple or list literal kept as text ("('coco_2017_train',)"): its
   * first element. */
  while (*s == ' ' || *s == '"' || *s == '\'' || *s == '(' || *s == '[')
    s++;
  if (strstr(s, "://"))
    s = strstr(s, "://") + 3;
  for (; *s && n + 1 < sizeof(buf); s++) {
    /* Interpolations (${paths.data_dir}) say nothing about the name. */
    if (s[0] == '$' && s[1] == '{') {
      const char *close = strchr(s, '}');
      if (close == NULL)
        break;
      s = close;
      continue;
    }
    buf[n++] = (char)tolower((unsigned char)*s);
  }
  {
    /* Up to the end of a first tuple/list element. */
    char *comma = memchr(buf, ',', n);
    if (comma != NULL && (strchr(raw, '(') || strchr(raw, '[')))
      n = (size_t)(comma - buf);
  }
  while (n > 0 &&
         (buf[n - 1] == '/' || buf[n - 1] == ' ' || buf[n - 1] == '"' ||
          buf[n - 1] == '\'' || buf[n - 1] == ')' || buf[n - 1] == ']'))
    n--;
  buf[n] = '\0';
  /* TFDS names: "c4/en:3.0.1" is the dataset c4 (config en, version
   * 3.0.1). */
  if (dataset) {
    char *sl = strrchr(buf, '/'), *colon = sl ? strchr(sl, ':') : NULL;
    if (sl != NULL && colon != NULL && isdigit((unsigned char)colon[1])) {
      *sl = '\0';
      n = (size_t)(sl - buf);
    }
  }
  /* A model named with its patch after a slash (DiT-XL/2, ViT-B/16):
   * one name, not a path whose last part is a number. */
  if (!dataset) {
    char *sl = strrchr(buf, '/');
    size_t k = 1;
    while (sl != NULL && isdigit((unsigned char)sl[k]))
      k++;
    if (sl != NULL && sl > buf && k > 1 && k <= 3 && sl[k] == '\0' &&
        strchr(buf, '/') == sl && isalpha((unsigned char)sl[-1]))
      *sl = '-';
  }
  /* The last component that is not a generic directory name. */
  e = buf + n;
  for (;;) {
    start = e;
    while (start > buf && start[-1] != '/')
      start--;
    if (!(dataset && (in(generic_dirs, start, (size_t)(e - start)) ||
                      shard_like(start, (size_t)(e - start)) ||
                      list_file_like(start, (size_t)(e - start)))) &&
        e - start > 0 && !(e - start == 1 && *start == '.'))
      break;
    if (start == buf)
      return -1;
    e = start - 1;
  }
  n = (size_t)(e - start);
  memmove(buf, start, n);
  buf[n] = '\0';
  dot = strrchr(buf, '.');
  if (dot != NULL &&
      (strcmp(dot, ".json") == 0 || strcmp(dot, ".jsonl") == 0 ||
       strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0 ||
       strcmp(dot, ".txt") == 0 || strcmp(dot, ".py") == 0 ||
       strcmp(dot, ".csv") == 0 || strcmp(dot, ".parquet") == 0 ||
       strcmp(dot, ".arrow") == 0 || strcmp(dot, ".bin") == 0 ||
       strcmp(dot, ".pt") == 0 || strcmp(dot, ".pth") == 0 ||
       strcmp(dot, ".tar") == 0 || strcmp(dot, ".gz") == 0 ||
       strcmp(dot, ".zip") == 0 || strcmp(dot, ".npy") == 0 ||
       strcmp(dot, ".ckpt") == 0 || strcmp(dot, ".safetensors") == 0 ||
       strcmp(dot, ".list") == 0 || strcmp(dot, ".lst") == 0 ||
       strcmp(dot, ".scp") == 0 || strcmp(dot, ".tsv") == 0))
    *dot = '\0';
  {
    size_t o = 0;
    for (size_t i = 0; buf[i] && o + 1 < cap; i++) {
      char ch = buf[i];
      if (ch == '_' || ch == ' ')
        ch = '-';
      if (ch == '-' && (o == 0 || out[o - 1] == '-'))
        continue;
      out[o++] = ch;
    }
    while (o > 0 && out[o - 1] == '-')
      o--;
    out[o] = '\0';
  }
  strip_suffix(out, "-hf");
  if (dataset) {
    strip_suffix(out, "-text-document");
    strip_suffix(out, "-train");
    strip_suffix(out, "-data");
    strip_suffix(out, "-text");
  }
  n = strlen(out);
  if (n == 0 || in(generic_names, out, n))
    return -1;
  {
    /* Kinds of data, not datasets (wenet's dataset: asr). */
    static const char *const kinds[] = {
        "asr",    "tts",         "lm",           "seq2seq",     "audio",
        "speech", "image",       "video",        "text",        "jsonl",
        "hf",     "huggingface", "webdataset",   "wds",         "raw",
        "shard",  "tfds",        "grain",        "local",       "json",
        "csv",    "parquet",     "image-folder", "imagefolder", "folder",
        "custom", "lmdb",        "arrow",        NULL};
    if (dataset && in(kinds, out, n))
      return -1;
  }
  {
    int alpha = 0;
    for (size_t i = 0; i < n; i++)
      alpha |= isalpha((unsigned char)out[i]) != 0;
    if (!alpha)
      return -1;
  }
  return 0;
}

static const char *norm(sm__ctx *c, const char *raw, char kind,
                        const char **task, const char **domain) {
  char key[256];
  const char *res = NULL;

  if (task)
    *task = NULL;
  if (domain)
    *domain = NULL;
  if (clean(raw, kind == 'd', key, sizeof(key)) != 0)
    return NULL;
  pthread_once(&once, load_embedded);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_table; i++) {
    const alias *a = &table[i];
    if (a->kind != kind || fnmatch(a->pattern, key, 0) != 0)
      continue;
    res = strchr(a->canonical, '*') ? sm__strdup(c, key)
                                    : sm__strdup(c, a->canonical);
    if (task)
      *task = a->task ? sm__strdup(c, a->task) : NULL;
    if (domain)
      *domain = a->domain ? sm__strdup(c, a->domain) : NULL;
    break;
  }
  pthread_mutex_unlock(&lock);
  return res ? res : sm__strdup(c, key);
}

const char *sm__known_dataset(sm__ctx *c, const char *raw, const char **task,
                              const char **domain) {
  char key[256];
  const char *res = NULL;
  if (task)
    *task = NULL;
  if (domain)
    *domain = NULL;
  if (clean(raw, 1, key, sizeof(key)) != 0)
    return NULL;
  pthread_once(&once, load_embedded);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_table && res == NULL; i++) {
    const alias *a = &table[i];
    if (a->kind != 'd' || fnmatch(a->pattern, key, 0) != 0)
      continue;
    res = strchr(a->canonical, '*') ? sm__strdup(c, key)
                                    : sm__strdup(c, a->canonical);
    if (task)
      *task = a->task ? sm__strdup(c, a->task) : NULL;
    if (domain)
      *domain = a->domain ? sm__strdup(c, a->domain) : NULL;
  }
  pthread_mutex_unlock(&lock);
  return res;
}

const char *sm__norm_model(sm__ctx *c, const char *raw, const char **task,
                           const char **domain) {
  return norm(c, raw, 'm', task, domain);
}

const char *sm__norm_dataset(sm__ctx *c, const char *raw, const char **task,
                             const char **domain) {
  return norm(c, raw, 'd', task, domain);
}

int sm__is_known_model(sm__ctx *c, const char *name) {
  char key[256];
  int hit = 0;
  (void)c;
  if (clean(name, 0, key, sizeof(key)) != 0)
    return 0;
  pthread_once(&once, load_embedded);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < n_table && !hit; i++)
    hit = table[i].kind == 'm' && fnmatch(table[i].pattern, key, 0) == 0;
  pthread_mutex_unlock(&lock);
  return hit;
}

/* The longest leading part of a name, cut at '_' or '-', that names a
 * known model (gpt2_124M_bf16.bin: gpt2), as its canonical name; NULL
 * when no part does. */
const char *sm__model_prefix(sm__ctx *c, const char *raw) {
  char part[128];
  size_t n;
  if (raw == NULL || (n = strlen(raw)) >= sizeof(part))
    return NULL;
  memcpy(part, raw, n + 1);
  while (strlen(part) >= 3) {
    char *cut = NULL;
    if (sm__is_known_model(c, part))
      return sm__norm_model(c, part, NULL, NULL);
    for (char *q = part; *q; q++)
      if (*q == '_' || *q == '-')
        cut = q;
    if (cut == NULL)
      break;
    *cut = '\0';
  }
  return NULL;
}
