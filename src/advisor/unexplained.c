/* unexplained.c - the configuration provenance of a job: what the
 * command and the files the extractor read say, and how much of it the
 * metadata explains.
 *
 * Two jobs whose metadata is equal may still differ: an option the
 * extractor does not consume (a preset table's --batch, a scale factor)
 * or an edit in a file it read but a line it did not understand leaves
 * both with the same fields.  And two jobs whose metadata is too thin to
 * identify them may be the very same command and configuration.  So every
 * extraction also records:
 *
 *   units      the command's words as options (--key value, --key=value,
 *              key=value overrides, trailing KEY VALUE pairs of cosmetic
 *              keys) and positionals.  A value that names a file the
 *              extractor read stands for that file's content hash, not
 *              its path; numbers are canonical (1e-4 == 0.0001);
 *              CUDA_VISIBLE_DEVICES stands for its device count.
 *   cosmetic   units and config lines whose key the table below classes
 *              as cosmetic (output/log paths, run names, seeds, ports,
 *              logging/checkpoint/eval intervals, tracking on/off, resume
 *              paths): they do not enter either digest.
 *   files      every file read, by the hash of its normalised content
 *              (comments, blank lines and cosmetic lines dropped), never
 *              its path: a renamed copy of the repository or a config
 *              copied to a new path keeps its digest.
 *   explained  a unit or a token of a line is explained when it is the
 *              value of a metadata field whose evidence is that place
 *              ("command", or "path:line" of the file).
 *
 * config_digest is the hash of the non-cosmetic units and the files;
 * residue_digest the hash of what is left of them once the explained
 * units and tokens are taken out.  Equal config digests are the same job;
 * a residue that differs while the metadata agrees is a difference the
 * extractor did not read.  Explaining is strict (exact values only): what
 * is not explained stays in the residue, so an unknown can only keep two
 * jobs apart, never join them.
 *
 * Hashes are 128-bit (two chained 64-bit lanes of sm_hash64): enough to
 * tell configurations apart, not a defence against someone who crafts a
 * collision. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/unexplained.h"

#define MAX_NOTES 4096   /* files noted */
#define MAX_TOKENS 512   /* tokens of one line (the rest is one token) */
#define MAX_LISTED 200   /* options and files listed in the provenance */
#define MAX_EXPLAIN 64   /* field evidence places */
#define DIGEST_VERSION 1 /* the text before ':' in a digest */

/* ==== Notes ==== */

typedef struct note {
  const char *rel;  /* root-relative path (arena) */
  const char *data; /* its text (arena) */
  size_t len;       /* bytes */
} note;

struct sm__unexp {
  note *v;      /* files read, in order */
  int n, cap;   /* used, allocated */
  int overflow; /* a note was lost: the file set is not complete */
};

void sm__unexp_note_file(sm__ctx *c, const char *rel, const char *data,
                         size_t len) {
  struct sm__unexp *u = c->res->unexp_;

  if (u == NULL) {
    u = sm_calloc(1, sizeof(*u));
    if (u == NULL)
      return;
    c->res->unexp_ = u;
  }
  for (int i = 0; i < u->n; i++)
    if (strcmp(u->v[i].rel, rel) == 0)
      return;
  if (u->n == u->cap) {
    int cap = u->cap ? u->cap * 2 : 32;
    note *nv =
        cap <= MAX_NOTES ? sm_realloc(u->v, (size_t)cap * sizeof(*nv)) : NULL;
    if (nv == NULL) {
      u->overflow = 1;
      return;
    }
    u->v = nv;
    u->cap = cap;
  }
  u->v[u->n].rel = sm__strdup(c, rel);
  u->v[u->n].data = data;
  u->v[u->n].len = len;
  if (u->v[u->n].rel == NULL)
    u->overflow = 1;
  else
    u->n++;
}

/* ==== The cosmetic table ==== */

/* What a key's class is.  LEAF: the last dotted component equals it;
 * SUFFIX: the last component ends with it; TOKEN: a component or an
 * underscore piece of the key equals it; KEY: the whole key equals it. */
typedef enum { K_LEAF, K_SUFFIX, K_TOKEN, K_KEY } rule_kind;

typedef struct rule {
  rule_kind kind;
  const char *text;
  const char *why;
} rule;

static const rule cosmetic[] = {
    {K_LEAF, "seed", "seed"},
    {K_LEAF, "seed_everything", "seed"},
    {K_LEAF, "random_seed", "seed"},
    {K_LEAF, "manual_seed", "seed"},
    {K_SUFFIX, "_seed", "seed"},
    {K_LEAF, "port", "port"},
    {K_LEAF, "master_port", "port"},
    {K_LEAF, "main_process_port", "port"},
    {K_LEAF, "master_addr", "port"},
    {K_LEAF, "dist_url", "port"},
    {K_LEAF, "dist_port", "port"},
    {K_LEAF, "rdzv_id", "port"},
    {K_LEAF, "rdzv_endpoint", "port"},
    {K_SUFFIX, "_port", "port"},
    {K_LEAF, "output", "output_path"},
    {K_LEAF, "output_dir", "output_path"},
    {K_LEAF, "out_dir", "output_path"},
    {K_LEAF, "outdir", "output_path"},
    {K_LEAF, "output_path", "output_path"},
    {K_LEAF, "output_root", "output_path"},
    {K_LEAF, "save", "output_path"},
    {K_LEAF, "save_dir", "output_path"},
    {K_LEAF, "savedir", "output_path"},
    {K_LEAF, "save_path", "output_path"},
    {K_LEAF, "work_dir", "output_path"},
    {K_LEAF, "workdir", "output_path"},
    {K_LEAF, "dump_dir", "output_path"},
    {K_LEAF, "exp_dir", "output_path"},
    {K_LEAF, "run_dir", "output_path"},
    {K_LEAF, "results_dir", "output_path"},
    {K_LEAF, "result_dir", "output_path"},
    {K_LEAF, "ckpt_dir", "output_path"},
    {K_LEAF, "checkpoint_dir", "output_path"},
    {K_LEAF, "checkpoints_dir", "output_path"},
    {K_LEAF, "default_root_dir", "output_path"},
    {K_LEAF, "default_local_dir", "output_path"},
    {K_LEAF, "project", "output_path"},
    {K_SUFFIX, "_output_dir", "output_path"},
    {K_SUFFIX, "_save_dir", "output_path"},
    {K_SUFFIX, "_ckpt_dir", "output_path"},
    {K_SUFFIX, "_checkpoint_dir", "output_path"},
    {K_SUFFIX, "_work_dir", "output_path"},
    {K_LEAF, "log_dir", "log_path"},
    {K_LEAF, "logdir", "log_path"},
    {K_LEAF, "logging_dir", "log_path"},
    {K_LEAF, "log_path", "log_path"},
    {K_LEAF, "log_file", "log_path"},
    {K_LEAF, "tensorboard_dir", "log_path"},
    {K_LEAF, "tb_dir", "log_path"},
    {K_LEAF, "tb_log_dir", "log_path"},
    {K_SUFFIX, "_log_dir", "log_path"},
    {K_SUFFIX, "_logdir", "log_path"},
    {K_LEAF, "run_name", "run_name"},
    {K_LEAF, "exp_name", "run_name"},
    {K_LEAF, "experiment_name", "run_name"},
    {K_LEAF, "expn", "run_name"},
    {K_LEAF, "job_name", "run_name"},
    {K_LEAF, "run_id", "run_name"},
    {K_LEAF, "tag", "run_name"},
    {K_LEAF, "tags", "run_name"},
    {K_LEAF, "notes", "run_name"},
    {K_SUFFIX, "_run_name", "run_name"},
    {K_SUFFIX, "_exp_name", "run_name"},
    {K_LEAF, "logger", "tracking"},
    {K_LEAF, "report_to", "tracking"},
    {K_LEAF, "log_with", "tracking"},
    {K_LEAF, "log_level", "tracking"},
    {K_SUFFIX, "_log_level", "tracking"},
    {K_LEAF, "verbose", "tracking"},
    {K_LEAF, "disable_tqdm", "tracking"},
    {K_TOKEN, "wandb", "tracking"},
    {K_TOKEN, "tensorboard", "tracking"},
    {K_TOKEN, "mlflow", "tracking"},
    {K_TOKEN, "comet", "tracking"},
    {K_TOKEN, "neptune", "tracking"},
    {K_TOKEN, "swanlab", "tracking"},
    {K_LEAF, "resume", "resume"},
    {K_LEAF, "resume_from", "resume"},
    {K_LEAF, "resume_path", "resume"},
    {K_LEAF, "resume_from_checkpoint", "resume"},
    {K_LEAF, "auto_resume", "resume"},
    {K_LEAF, "local_rank", "port"},
    {K_LEAF, "node_rank", "port"},
    {K_LEAF, "machine_rank", "port"},
    {K_LEAF, "process_id", "port"},
    {K_LEAF, "nccl_debug", "tracking"},
    {K_KEY, "name", "run_name"},
    {K_LEAF, "logs", "log_path"},
    {K_LEAF, "save_model", "output_path"},
    {K_TOKEN, "hub", "output_path"},
    {K_KEY, "hydra.run.dir", "output_path"},
    {K_KEY, "hydra.sweep.dir", "output_path"},
    {K_KEY, "hydra.sweep.subdir", "output_path"},
    {K_KEY, "hydra.job.name", "run_name"},
};

/* Intervals: a key with a piece that says what is done now and then and
 * a piece that says how often (log_interval, eval_steps, save_freq,
 * checkpoint_config.interval, evaluation.eval_period_iterations,
 * trainer.max_ckpt_to_keep). */
static const char *const interval_what[] = {
    "log",          "logging",  "print",      "eval",        "evaluation",
    "val",          "valid",    "validation", "save",        "saveckp",
    "ckpt",         "ckpts",    "checkpoint", "checkpoints", "checkpointing",
    "checkpointer", "progress", "throughput", "display",     "report",
    "snapshot"};
static const char *const interval_when[] = {
    "interval", "intervals", "freq",    "frequency", "every",
    "steps",    "period",    "updates", "keep",      "limit"};

/* Output locations: a piece that says what is written and one that says
 * it is a place (save_folder, log_root, results_path, dist_addr). */
static const char *const place_what[] = {
    "output", "out",  "save",    "log",    "logging", "dump",
    "work",   "exp",  "results", "result", "run",     "runs",
    "master", "main", "dist",    "rdzv",   "snapshot"};
static const char *const place_where[] = {
    "dir",  "folder",  "path", "root",     "directory",
    "addr", "address", "host", "endpoint", "url"};

static int in_list(const char *s, size_t n, const char *const *l, size_t nl) {
  for (size_t i = 0; i < nl; i++)
    if (strlen(l[i]) == n && memcmp(l[i], s, n) == 0)
      return 1;
  return 0;
}

/* Lower case, '-' as '_', leading dashes and '+' dropped. */
static size_t norm_key(const char *k, size_t n, char *out, size_t cap) {
  size_t o = 0, i = 0;

  while (i < n && (k[i] == '-' || k[i] == '+'))
    i++;
  for (; i < n && o + 1 < cap; i++)
    out[o++] = k[i] == '-' ? '_' : (char)tolower((unsigned char)k[i]);
  out[o] = '\0';
  return o;
}

static int rule_hits(const rule *r, const char *key, size_t n, const char *leaf,
                     size_t ln) {
  size_t tl = strlen(r->text);

  if (r->kind == K_LEAF)
    return ln == tl && memcmp(leaf, r->text, tl) == 0;
  if (r->kind == K_KEY)
    return n == tl && memcmp(key, r->text, tl) == 0;
  if (r->kind == K_SUFFIX)
    return ln > tl && memcmp(leaf + ln - tl, r->text, tl) == 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && key[j] != '.' && key[j] != '_')
      j++;
    if (j - i == tl && memcmp(key + i, r->text, tl) == 0)
      return 1;
    i = j + 1;
  }
  return 0;
}

/* The name or id of a run, logger or experiment: trainer.logger.name,
 * wandb.run.id, experiment.name. */
static int run_label(const char *k, const char *leaf, size_t ln) {
  static const char *const owner[] = {"logger", "run",     "exp",
                                      "job",    "tracker", "experiment"};
  const char *dot = leaf > k ? leaf - 1 : NULL, *start;

  if (dot == NULL || !((ln == 4 && memcmp(leaf, "name", 4) == 0) ||
                       (ln == 2 && memcmp(leaf, "id", 2) == 0)))
    return 0;
  for (start = dot; start > k && start[-1] != '.'; start--)
    ;
  return in_list(start, (size_t)(dot - start), owner, SM_ARRAY_LEN(owner));
}

int sm__cosmetic_key(const char *key, size_t n, const char **why) {
  char k[256];
  const char *leaf;
  size_t kn = norm_key(key, n, k, sizeof(k)), ln;
  int what = 0, when = 0, pw = 0, pl = 0;

  if (kn == 0 || kn >= sizeof(k) - 1)
    return 0;
  leaf = strrchr(k, '.') ? strrchr(k, '.') + 1 : k;
  ln = strlen(leaf);
  for (size_t i = 0; i < SM_ARRAY_LEN(cosmetic); i++)
    if (rule_hits(&cosmetic[i], k, kn, leaf, ln)) {
      if (why != NULL)
        *why = cosmetic[i].why;
      return 1;
    }
  for (size_t i = 0; i < kn;) {
    size_t j = i;
    while (j < kn && k[j] != '.' && k[j] != '_')
      j++;
    what |= in_list(k + i, j - i, interval_what, SM_ARRAY_LEN(interval_what));
    when |= in_list(k + i, j - i, interval_when, SM_ARRAY_LEN(interval_when));
    pw |= in_list(k + i, j - i, place_what, SM_ARRAY_LEN(place_what));
    pl |= in_list(k + i, j - i, place_where, SM_ARRAY_LEN(place_where));
    i = j + 1;
  }
  if (why != NULL)
    *why = what && when ? "interval" : pw && pl ? "output_path" : "run_name";
  return (what && when) || (pw && pl) || run_label(k, leaf, ln);
}

/* ==== Hashing ==== */

typedef struct h128 {
  uint64_t a, b;
} h128;

static void h_add(h128 *h, const void *p, size_t n) {
  h->a = sm_hash_mix(sm_hash64(p, n, h->a) ^ (uint64_t)n);
  h->b = sm_hash_mix(sm_hash64(p, n, h->b ^ 0x9e3779b97f4a7c15ull) + n);
}

static h128 h_start(const char *tag) {
  h128 h = {0x5ce3d1a9c0ffee11ull, 0x1b873593cc9e2d51ull};
  h_add(&h, tag, strlen(tag));
  return h;
}

static int h_order(const void *x, const void *y) {
  const h128 *a = x, *b = y;
  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

/* A growable list of unit hashes. */
typedef struct hlist {
  h128 *v;
  int n, cap;
  int failed; /* out of memory: the digest is not made */
} hlist;

static void hl_push(hlist *l, h128 h) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 64;
    h128 *nv = sm_realloc(l->v, (size_t)cap * sizeof(*nv));
    if (nv == NULL) {
      l->failed = 1;
      return;
    }
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = h;
}

/* The digest of a multiset of units: sorted, so order does not count. */
static char *hl_digest(sm__ctx *c, hlist *l, const char *tag) {
  h128 h = h_start(tag);

  if (l->failed)
    return NULL;
  if (l->n > 1)
    qsort(l->v, (size_t)l->n, sizeof(h128), h_order);
  for (int i = 0; i < l->n; i++)
    h_add(&h, &l->v[i], sizeof(h128));
  return sm__printf(c, "%c%d:%016llx%016llx", tag[0], DIGEST_VERSION,
                    (unsigned long long)h.a, (unsigned long long)h.b);
}

/* ==== What the metadata explains ==== */

/* One metadata field's value with the place it came from. */
typedef struct placed {
  const char *path; /* file, or NULL for the command */
  size_t plen;      /* its length */
  long line;        /* line in it (0 for the command) */
  int field;        /* sm_meta_field */
} placed;

/* One option of the command as the provenance lists it. */
typedef struct listed {
  const char *key; /* as written, or NULL for a positional */
  const char *val; /* as written, or NULL for a bare flag */
  const char *why; /* cosmetic class, or NULL */
  int field;       /* the field that explains it, or -1 */
  int file;        /* it names a file the extractor read */
} listed;

/* One file's counts for the provenance. */
typedef struct fileinfo {
  h128 exact, residue; /* hashes of its normalised and unexplained text */
  int lines, explained, cosmetic;
} fileinfo;

typedef struct state {
  sm__ctx *c;
  const sm_meta *m;
  struct sm__unexp *u;
  placed ex[MAX_EXPLAIN];
  int nex;
  hlist all, residue; /* units of the two digests */
  fileinfo *files;    /* per note */
  listed opts[MAX_LISTED];
  int n_opts, n_positional, n_unexplained, n_cosmetic;
  sm_buf lx, lr; /* the line being hashed: normalised, unexplained */
} state;

static void collect_explained(state *s) {
  for (int f = 0; f < SM_META_NFIELDS && s->nex < MAX_EXPLAIN; f++) {
    const sm_meta_value *v = &s->m->f[f];
    const char *e = v->evidence, *colon;
    placed *x = &s->ex[s->nex];
    char *end;
    if (!v->known || e == NULL)
      continue;
    x->field = f;
    if (strcmp(e, "command") == 0) {
      x->path = NULL;
      x->plen = 0;
      x->line = 0;
      s->nex++;
      continue;
    }
    colon = strrchr(e, ':');
    if (colon == NULL || colon == e)
      continue;
    x->line = strtol(colon + 1, &end, 10);
    if (*end != '\0' || x->line <= 0)
      continue;
    x->path = e;
    x->plen = (size_t)(colon - e);
    s->nex++;
  }
}

/* Letters and digits of s[0..n), lower case. */
static size_t alnum_fold(const char *s, size_t n, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++)
    if (isalnum((unsigned char)s[i]))
      out[o++] = (char)tolower((unsigned char)s[i]);
  out[o] = '\0';
  return o;
}

/* Whether text t[0..n) is exactly the value of field f. */
static int is_value(const sm_meta *m, int f, const char *t, size_t n) {
  const sm_meta_value *v = &m->f[f];
  char buf[128], fv[128];
  double d;

  while (n > 0 && strchr("\"'`,;()[]{}", t[0]) != NULL)
    t++, n--;
  while (n > 0 && strchr("\"'`,;()[]{}", t[n - 1]) != NULL)
    n--;
  if (n == 0 || n >= sizeof(buf))
    return 0;
  memcpy(buf, t, n);
  buf[n] = '\0';
  if (sm_meta_type_of((sm_meta_field)f) != SM_META_STR)
    return sm_parse_double(buf, &d) == 0 &&
           (d == v->num ||
            (v->num != 0 && fabs(d - v->num) <= 1e-9 * fabs(v->num)));
  if (v->str == NULL)
    return 0;
  {
    size_t a = alnum_fold(buf, n, buf, sizeof(buf));
    size_t b = alnum_fold(v->str, strlen(v->str), fv, sizeof(fv));
    return a > 0 && a == b && memcmp(buf, fv, a) == 0;
  }
}

/* The field whose value a token (or its part after the last '=' or
 * ':') is, among those explained at this place (path NULL: the command);
 * -1 for none. */
static int explains(const state *s, const char *path, long line, const char *t,
                    size_t n) {
  for (int i = 0; i < s->nex; i++) {
    const placed *x = &s->ex[i];
    const char *p = t;
    size_t k = n;
    if (path == NULL
            ? x->path != NULL
            : (x->path == NULL || x->line != line || x->plen != strlen(path) ||
               memcmp(x->path, path, x->plen) != 0))
      continue;
    for (size_t j = n; j > 0; j--)
      if (t[j - 1] == '=' || (t[j - 1] == ':' && j < n && t[j] != '/')) {
        p = t + j;
        k = n - j;
        break;
      }
    if (is_value(s->m, x->field, t, n) || is_value(s->m, x->field, p, k))
      return x->field;
  }
  return -1;
}

/* ==== Words: options, overrides, positionals ==== */

typedef struct tok {
  const char *p;
  size_t n;
  int drop; /* part of a cosmetic unit */
  int dev;  /* a KEY=devices word (device_norm) */
} tok;

/* One unit: an option with its value, an override, or a positional. */
typedef struct unit {
  tok *first;      /* its first token */
  int ntok;        /* tokens it spans */
  const char *key; /* NULL for a positional */
  size_t klen;
  const char *val; /* NULL for a bare flag */
  size_t vlen;
} unit;

typedef void (*unit_fn)(void *arg, const unit *u);

static int is_option(const tok *t) {
  if (t->n < 2 || t->p[0] != '-')
    return 0;
  if (t->p[1] == '-')
    return t->n >= 3 && isalpha((unsigned char)t->p[2]);
  return isalpha((unsigned char)t->p[1]);
}

/* The offset of '=' in a key=value word whose left side is a key
 * (letters, digits, _ . - /, after optional '+'), or 0. */
static size_t assign_at(const tok *t) {
  size_t i = 0;

  while (i < t->n && t->p[i] == '+')
    i++;
  if (i >= t->n || !(isalpha((unsigned char)t->p[i]) || t->p[i] == '_'))
    return 0;
  for (; i < t->n; i++) {
    char ch = t->p[i];
    if (ch == '=')
      return i + 1 < t->n && t->p[i + 1] == '=' ? 0 : i;
    if (!isalnum((unsigned char)ch) && !strchr("_.-/", ch))
      return 0;
  }
  return 0;
}

static int bare_key(const tok *t) {
  if (t->n == 0 || !(isalpha((unsigned char)t->p[0]) || t->p[0] == '_'))
    return 0;
  for (size_t i = 0; i < t->n; i++)
    if (!isalnum((unsigned char)t->p[i]) && !strchr("_.-", t->p[i]))
      return 0;
  return 1;
}

/* A word that can be an option's value: not an option, not an override
 * of its own. */
static int value_word(const tok *t) {
  return !is_option(t) && assign_at(t) == 0;
}

/* pairs: also read trailing KEY VALUE pairs of cosmetic keys (the
 * command only: in a file every identifier would be asked). */
static void parse_units(tok *t, int n, int pairs, unit_fn fn, void *arg) {
  for (int i = 0; i < n;) {
    unit u = {&t[i], 1, NULL, 0, NULL, 0};
    size_t eq;
    if (is_option(&t[i])) {
      const char *b = t[i].p;
      size_t bn = t[i].n;
      const char *e = memchr(b, '=', bn);
      u.key = b;
      u.klen = e ? (size_t)(e - b) : bn;
      if (e != NULL) {
        u.val = e + 1;
        u.vlen = bn - u.klen - 1;
      } else if (i + 1 < n && value_word(&t[i + 1])) {
        u.val = t[i + 1].p;
        u.vlen = t[i + 1].n;
        u.ntok = 2;
      }
    } else if ((eq = assign_at(&t[i])) > 0) {
      u.key = t[i].p;
      u.klen = eq;
      u.val = t[i].p + eq + 1;
      u.vlen = t[i].n - eq - 1;
    } else if (pairs && bare_key(&t[i]) && i + 1 < n && value_word(&t[i + 1]) &&
               sm__cosmetic_key(t[i].p, t[i].n, NULL)) {
      /* Trailing KEY VALUE pairs (yacs/detectron2 opts). */
      u.key = t[i].p;
      u.klen = t[i].n;
      u.val = t[i + 1].p;
      u.vlen = t[i + 1].n;
      u.ntok = 2;
    }
    fn(arg, &u);
    i += u.ntok;
  }
}

/* ==== Files ==== */

/* Finds the note of a file a value names (from the command's directory,
 * the entry's, or the root); -1 for none. */
static int file_named(state *s, const char *v, size_t n) {
  const char *bases[3];
  char *w;

  if (s->u == NULL || n == 0 || n > 1024 || memchr(v, '\x01', n))
    return -1;
  {
    /* configs/x.py:arg (ml_collections) names configs/x.py. */
    const char *colon = memchr(v, ':', n);
    if (colon != NULL && colon - v > 3 && memcmp(colon - 3, ".py", 3) == 0)
      n = (size_t)(colon - v);
  }
  w = sm__strndup(s->c, v, n);
  bases[0] = s->c->cmd_dir ? s->c->cmd_dir : s->c->cwd;
  bases[1] = s->c->cwd;
  bases[2] = "";
  for (int b = 0; w != NULL && b < 3; b++) {
    const char *rel = bases[b] ? sm__repo_join(s->c, bases[b], w) : NULL;
    for (int i = 0; rel != NULL && i < s->u->n; i++)
      if (strcmp(s->u->v[i].rel, rel) == 0)
        return i;
  }
  /* A config named without its folder (Hydra's --config-name NAME.yaml):
   * the one file read by that name. */
  if (w != NULL && strchr(w, '/') == NULL && strchr(w, '.') != NULL) {
    int hit = -1;
    for (int i = 0; i < s->u->n; i++) {
      const char *b = strrchr(s->u->v[i].rel, '/');
      if (strcmp(b ? b + 1 : s->u->v[i].rel, w) == 0) {
        if (hit >= 0)
          return -1;
        hit = i;
      }
    }
    return hit;
  }
  return -1;
}

/* The key a line sets, if it sets one: `key: v`, `key = v`, `"key": v`,
 * `export KEY=v`, `- key: v`, and the option an argparse / absl flag
 * declaration names.  Returns its length (0: none). */
static size_t line_key(const char *l, size_t n, const char **key) {
  const char *q = NULL, *lp = NULL;
  const char *aa = memmem(l, n, "add_argument(", 13);
  const char *df = aa ? NULL : memmem(l, n, "DEFINE_", 7);
  size_t i = 0, k;

  if (aa != NULL) {
    lp = aa + 13;
  } else if (df != NULL) {
    const char *par = memchr(df, '(', (size_t)(l + n - df));
    if (par != NULL)
      lp = par + 1;
  }
  if (lp != NULL) {
    for (q = lp; q < l + n && *q != '"' && *q != '\''; q++)
      ;
    if (q < l + n) {
      const char *e = memchr(q + 1, *q, (size_t)(l + n - q - 1));
      if (e != NULL) {
        *key = q + 1;
        return (size_t)(e - q - 1);
      }
    }
    return 0;
  }
  if (n > 7 && memcmp(l, "export ", 7) == 0)
    i = 7;
  else if (n > 2 && l[0] == '-' && l[1] == ' ')
    i = 2;
  if (i < n && (l[i] == '"' || l[i] == '\''))
    i++;
  k = i;
  while (i < n && (isalnum((unsigned char)l[i]) || strchr("_.-", l[i])))
    i++;
  if (i == k)
    return 0;
  *key = l + k;
  k = i - k;
  if (i < n && (l[i] == '"' || l[i] == '\''))
    i++;
  while (i < n && (l[i] == ' ' || l[i] == '\t'))
    i++;
  /* `key: type = v` (a dataclass field) is a key too. */
  if (i < n &&
      (l[i] == ':' || (l[i] == '=' && (i + 1 >= n || l[i + 1] != '='))))
    return k;
  return 0;
}

/* Drops a comment: a line that starts with '#' or "//" is empty; a '#'
 * after white space outside quotes ends it.  Returns the length kept. */
static size_t strip_comment(const char *l, size_t n) {
  char q = 0;

  if (n > 0 && l[0] == '#')
    return 0;
  if (n > 1 && l[0] == '/' && l[1] == '/')
    return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = l[i];
    if (q != 0) {
      if (ch == '\\')
        i++;
      else if (ch == q)
        q = 0;
    } else if (ch == '"' || ch == '\'') {
      q = ch;
    } else if (ch == '#' && i > 0 && (l[i - 1] == ' ' || l[i - 1] == '\t')) {
      return i;
    }
  }
  return n;
}

static void mark_cosmetic(void *arg, const unit *u) {
  (void)arg;
  if (u->key != NULL && sm__cosmetic_key(u->key, u->klen, NULL))
    for (int j = 0; j < u->ntok; j++)
      u->first[j].drop = 1;
}

/* Splits a line at white space (at most MAX_TOKENS; the rest is one). */
static int tokenise(const char *l, size_t n, tok *t) {
  int nt = 0;

  for (size_t i = 0; i < n;) {
    size_t j;
    while (i < n && isspace((unsigned char)l[i]))
      i++;
    if (i >= n)
      break;
    j = i;
    if (nt == MAX_TOKENS - 1)
      j = n;
    while (j < n && !isspace((unsigned char)l[j]))
      j++;
    t[nt].p = l + i;
    t[nt].n = j - i;
    t[nt].dev = 0;
    t[nt++].drop = 0;
    i = j;
  }
  return nt;
}

/* A choice of devices stands for how many: CUDA_VISIBLE_DEVICES=0,1 and
 * =2,3 are the same job, as are --gpu_ids 0,1 and 2,3 and cuda:0 and
 * cuda:4.  Writes the normalised value into out and returns its length,
 * or 0 when the value is not a device choice. */
static size_t device_norm(const char *key, size_t kn, const char *v, size_t vn,
                          char *out, size_t cap) {
  char k[128];
  size_t n = norm_key(key ? key : "", key ? kn : 0, k, sizeof(k));
  int commas = 0, ints = vn > 0;

  if (vn > 5 && memcmp(v, "cuda:", 5) == 0)
    return (size_t)snprintf(out, cap, "cuda:*");
  for (size_t i = 0; i < vn; i++) {
    commas += v[i] == ',';
    ints &= isdigit((unsigned char)v[i]) || v[i] == ',' || v[i] == ' ';
  }
  if (n == 20 && strcmp(k, "cuda_visible_devices") == 0)
    return (size_t)snprintf(out, cap, "n=%d", vn > 0 ? commas + 1 : 0);
  if (ints && commas > 0 && n > 0 &&
      (strstr(k, "gpu") != NULL || strstr(k, "device") != NULL))
    return (size_t)snprintf(out, cap, "n=%d", commas + 1);
  return 0;
}

static void mark_devices(void *arg, const unit *u) {
  (void)arg;
  if (u->key != NULL && u->val != NULL && u->ntok == 1 &&
      u->first->p == u->key) {
    char b[32];
    if (device_norm(u->key, u->klen, u->val, u->vlen, b, sizeof(b)) > 0)
      u->first->dev = 1;
  }
}

/* Whether a field's evidence is line ln of rel. */
static int line_has_ev(const state *s, const char *rel, long ln) {
  size_t rl = strlen(rel);
  for (int i = 0; i < s->nex; i++)
    if (s->ex[i].path != NULL && s->ex[i].line == ln && s->ex[i].plen == rl &&
        memcmp(s->ex[i].path, rel, rl) == 0)
      return 1;
  return 0;
}

/* Adds one line of a file to its two hashes. */
static void file_line(state *s, const char *rel, int any_ev, long ln,
                      const char *l, size_t n, fileinfo *fi) {
  int bad = 0;
  tok t[MAX_TOKENS];
  const char *key;
  uint32_t ind = 0;
  size_t kn;
  int nt, explained = 0;

  while (n > 0 && (*l == ' ' || *l == '\t'))
    l++, n--, ind++;
  n = strip_comment(l, n);
  while (n > 0 && isspace((unsigned char)l[n - 1]))
    n--;
  if (n == 0)
    return;
  fi->lines++;
  kn = line_key(l, n, &key);
  if (kn > 0 && sm__cosmetic_key(key, kn, NULL)) {
    fi->cosmetic++;
    return;
  }
  nt = tokenise(l, n, t);
  parse_units(t, nt, 0, mark_cosmetic, NULL);
  parse_units(t, nt, 0, mark_devices, NULL);
  any_ev = any_ev && line_has_ev(s, rel, ln);
  sm_buf_reset(&s->lx);
  sm_buf_reset(&s->lr);
  bad |= sm_buf_addf(&s->lx, "%u|", (unsigned)ind);
  bad |= sm_buf_addf(&s->lr, "%u|", (unsigned)ind);
  for (int i = 0; i < nt; i++) {
    int f;
    if (t[i].drop)
      continue;
    if (t[i].dev) {
      char b[48];
      const char *eq = memchr(t[i].p, '=', t[i].n);
      size_t k = (size_t)(eq - t[i].p);
      size_t m = device_norm(t[i].p, k, eq + 1, t[i].n - k - 1, b, sizeof(b));
      bad |= sm_buf_add(&s->lx, t[i].p, k + 1);
      bad |= sm_buf_add(&s->lx, b, m);
      bad |= sm_buf_add(&s->lr, t[i].p, k + 1);
      bad |= sm_buf_add(&s->lr, b, m);
    } else {
      bad |= sm_buf_add(&s->lx, t[i].p, t[i].n);
      f = any_ev ? explains(s, rel, ln, t[i].p, t[i].n) : -1;
      if (f >= 0) {
        bad |= sm_buf_addf(&s->lr, "#%d", f);
        explained = 1;
      } else {
        bad |= sm_buf_add(&s->lr, t[i].p, t[i].n);
      }
    }
    bad |= sm_buf_addc(&s->lx, ' ');
    bad |= sm_buf_addc(&s->lr, ' ');
  }
  /* A line longer than the scratch buffers would be hashed in part, so
   * two files differing past the cut would share a digest: no digest. */
  if (bad)
    s->all.failed = 1;
  h_add(&fi->exact, s->lx.data, s->lx.len);
  h_add(&fi->residue, s->lr.data, s->lr.len);
  fi->explained += explained;
}

static void process_text(state *s, const char *rel, const char *data,
                         size_t len, fileinfo *fi) {
  int any_ev = 0;
  long ln = 0;

  for (int i = 0; i < s->nex && !any_ev; i++)
    any_ev = s->ex[i].path != NULL && s->ex[i].plen == strlen(rel) &&
             memcmp(s->ex[i].path, rel, s->ex[i].plen) == 0;
  fi->exact = h_start("file");
  fi->residue = h_start("file");
  for (size_t i = 0; i < len;) {
    const char *e = memchr(data + i, '\n', len - i);
    size_t n = e ? (size_t)(e - (data + i)) : len - i;
    file_line(s, rel, any_ev, ++ln, data + i, n, fi);
    i += n + 1;
  }
  hl_push(&s->all, fi->exact);
  hl_push(&s->residue, fi->residue);
}

/* ==== The command ==== */

static int bool_word(const char *v, size_t n) {
  static const char *const w[] = {"true", "false", "yes", "no"};
  char b[8];
  if (n == 0 || n >= sizeof(b))
    return n == 0;
  for (size_t i = 0; i < n; i++)
    b[i] = (char)tolower((unsigned char)v[i]);
  return in_list(b, n, w, SM_ARRAY_LEN(w));
}

/* The argument a config file is given with (configs/x.py:arg). */
static void h_add_arg(h128 *h, const char *v, size_t n) {
  const char *colon = v ? memchr(v, ':', n) : NULL;
  if (colon != NULL && colon - v > 3 && memcmp(colon - 3, ".py", 3) == 0)
    h_add(h, colon, n - (size_t)(colon - v));
}

/* Adds a value to a unit's hash: a file read stands for its content, a
 * number for its canonical form, a device list for its size. */
static void hash_value(state *s, h128 *h, const char *kb, const unit *u,
                       int fidx) {
  char vb[64];
  double d;

  if (fidx >= 0) {
    h_add(h, "@", 1);
    h_add(h, &s->files[fidx].exact, sizeof(h128));
    h_add_arg(h, u->val, u->vlen);
    return;
  }
  if (u->val == NULL) {
    h_add(h, "", 0);
    return;
  }
  {
    size_t m = device_norm(kb, strlen(kb), u->val, u->vlen, vb, sizeof(vb));
    if (m > 0) {
      h_add(h, vb, m);
      return;
    }
  }
  if (u->vlen < sizeof(vb)) {
    memcpy(vb, u->val, u->vlen);
    vb[u->vlen] = '\0';
    if (sm_parse_double(vb, &d) == 0) {
      snprintf(vb, sizeof(vb), "%.17g", d);
      h_add(h, vb, strlen(vb));
      return;
    }
  }
  h_add(h, u->val, u->vlen);
}

static void list_unit(state *s, const unit *u, const char *why, int field,
                      int fidx) {
  listed *o;

  if (s->n_opts >= MAX_LISTED)
    return;
  o = &s->opts[s->n_opts++];
  o->key = u->key ? sm__strndup(s->c, u->key, u->klen) : NULL;
  o->val = u->val ? sm__strndup(s->c, u->val, u->vlen) : NULL;
  o->why = why;
  o->field = field;
  o->file = fidx >= 0;
}

static void command_unit(state *s, const unit *u, const char *why) {
  char kb[256] = "";
  char db[48];
  int cosm = why != NULL;
  int fidx = u->val ? file_named(s, u->val, u->vlen)
                    : (u->key ? -1 : file_named(s, u->first->p, u->first->n));
  int field = -1, pi = -1;
  h128 h = h_start(u->key ? "o" : "p"), r;
  unit pos = *u;

  if (u->key == NULL) { /* a positional: its word is its value */
    pos.val = u->first->p;
    pos.vlen = u->first->n;
    pi = s->n_positional++;
    h_add(&h, &pi, sizeof(pi));
  } else {
    size_t kn = norm_key(u->key, u->klen, kb, sizeof(kb));
    h_add(&h, kb, kn);
  }
  if (cosm) {
    s->n_cosmetic++;
    list_unit(s, &pos, why, -1, -1);
    return;
  }
  r = h;
  hash_value(s, &h, kb, &pos, fidx);
  hl_push(&s->all, h);
  if (fidx < 0 && pos.val != NULL &&
      device_norm(kb, strlen(kb), pos.val, pos.vlen, db, sizeof(db)) > 0) {
    /* A device choice is never explained by a count: both sides are
     * normalised alike. */
  } else if (fidx < 0) {
    if (pos.val != NULL && !bool_word(pos.val, pos.vlen))
      field = explains(s, NULL, 0, pos.val, pos.vlen);
    else if (u->key != NULL)
      field = explains(s, NULL, 0, u->key, u->klen);
  }
  if (fidx >= 0) { /* the file's own residue stands for it */
    h_add(&r, "@", 1);
    h_add(&r, &s->files[fidx].residue, sizeof(h128));
    h_add_arg(&r, pos.val, pos.vlen);
    hl_push(&s->residue, r);
  } else if (field >= 0) {
    char ph[16];
    int w = snprintf(ph, sizeof(ph), "#%d", field);
    h_add(&r, ph, (size_t)w);
    hl_push(&s->residue, r);
  } else {
    hl_push(&s->residue, h);
    s->n_unexplained++;
  }
  list_unit(s, &pos, NULL, field, fidx);
}

/* The command's units, collected before they are classed. */
typedef struct ulist {
  unit *v;
  int n, cap;
  int failed;
} ulist;

static void collect(void *arg, const unit *u) {
  ulist *l = arg;
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 32;
    unit *nv = sm_realloc(l->v, (size_t)cap * sizeof(*nv));
    if (nv == NULL) {
      l->failed = 1;
      return;
    }
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = *u;
}

/* A unit's value, or a positional's word. */
static const char *unit_value(const unit *u, size_t *n) {
  if (u->key == NULL) {
    *n = u->first->n;
    return u->first->p;
  }
  *n = u->vlen;
  return u->val;
}

/* Cosmetic by relation to other units: an option without a value that
 * opens a run of overrides (--cfg-options a=b c=d, --opts KEY VALUE) all
 * of them cosmetic, and a value that repeats a cosmetic one (--load DIR
 * beside --save DIR). */
static void related_cosmetic(const ulist *l, const char **why) {
  for (int i = 0; i + 1 < l->n; i++) {
    int j = i + 1, all = 1;
    if (l->v[i].key == NULL || l->v[i].val != NULL || why[i] != NULL ||
        !is_option(l->v[i].first))
      continue;
    for (; j < l->n && l->v[j].key != NULL && !is_option(l->v[j].first); j++)
      all &= why[j] != NULL;
    if (j > i + 1 && all)
      why[i] = "override_group";
  }
  for (int i = 0; i < l->n; i++) {
    size_t n, m;
    const char *v = unit_value(&l->v[i], &n);
    double d;
    char b[32];
    if (why[i] != NULL || v == NULL || n < 6)
      continue;
    if (n < sizeof(b)) {
      memcpy(b, v, n);
      b[n] = '\0';
      if (sm_parse_double(b, &d) == 0)
        continue;
    }
    for (int j = 0; j < l->n && why[i] == NULL; j++) {
      const char *w = why[j] && l->v[j].key ? unit_value(&l->v[j], &m) : NULL;
      if (w != NULL && m == n && memcmp(v, w, n) == 0)
        why[i] = "repeats_cosmetic";
    }
  }
}

/* Whether a command word names a file the extraction read ("run.sh",
 * "./run.sh", or a path below the command's directory). */
static int noted_file(const state *s, const char *w) {
  size_t n;

  if (s->u == NULL || w[0] == '-')
    return 0;
  if (w[0] == '.' && w[1] == '/')
    w += 2;
  n = strlen(w);
  for (int i = 0; i < s->u->n; i++) {
    const char *rel = s->u->v[i].rel;
    size_t rn = strlen(rel);
    if (strcmp(rel, w) == 0 ||
        (rn > n && rel[rn - n - 1] == '/' && strcmp(rel + rn - n, w) == 0))
      return 1;
  }
  return 0;
}

/* The words that only run a shell launch script: `bash run.sh ARGS`,
 * `sh run.sh`, `./run.sh`, after any environment assignments
 * (`PORT=29501 bash run.sh`).  The script's text is among the files
 * read, so these words add nothing to the configuration, and the job
 * reads the same as the script given inline (a Slurm batch script is
 * `bash SCRIPT ARGS` without those words).  Sets *at to the first of
 * them and returns how many there are. */
static int script_words(const state *s, int *at) {
  static const char *const shells[] = {"bash", "sh", "zsh", "dash", "ksh"};
  const sm_extract_req *q = s->c->req;
  const char *w0, *base;
  int k = 0;
  size_t n;

  *at = 0;
  if (q->script != NULL)
    return 0;
  while (k < q->argc && sm__is_assignment(q->argv[k]))
    k++;
  if (k >= q->argc)
    return 0;
  *at = k;
  w0 = q->argv[k];
  base = sm__base_name(w0);
  if (in_list(base, strlen(base), shells, SM_ARRAY_LEN(shells)))
    return k + 1 < q->argc && noted_file(s, q->argv[k + 1]) ? 2 : 0;
  n = strlen(w0);
  return n > 3 && strcmp(w0 + n - 3, ".sh") == 0 && noted_file(s, w0) ? 1 : 0;
}

static void process_command(state *s) {
  const sm_extract_req *q = s->c->req;
  ulist l = {0};
  const char **why;
  tok *t;
  int at, skip = script_words(s, &at);
  int n = q->argc > skip ? q->argc - skip : 0;

  if (n == 0)
    return;
  t = sm_calloc((size_t)n, sizeof(*t));
  if (t == NULL) {
    s->all.failed = 1;
    return;
  }
  for (int i = 0, j = 0; i < q->argc; i++) {
    if (i >= at && i < at + skip)
      continue;
    t[j].p = q->argv[i];
    t[j].n = strlen(q->argv[i]);
    j++;
  }
  parse_units(t, n, 1, collect, &l);
  why = sm_calloc((size_t)l.n + 1, sizeof(*why));
  if (why == NULL || l.failed) {
    s->all.failed = 1;
  } else {
    for (int i = 0; i < l.n; i++)
      if (l.v[i].key != NULL &&
          !sm__cosmetic_key(l.v[i].key, l.v[i].klen, &why[i]))
        why[i] = NULL;
    related_cosmetic(&l, why);
    for (int i = 0; i < l.n; i++)
      command_unit(s, &l.v[i], why[i]);
  }
  sm_free(why);
  sm_free(l.v);
  sm_free(t);
}

/* ==== The provenance ==== */

static void write_hash(sm_jw *w, const char *key, h128 h) {
  char b[40];
  snprintf(b, sizeof(b), "%016llx%016llx", (unsigned long long)h.a,
           (unsigned long long)h.b);
  sm_jw_kv_str(w, key, b);
}

static void write_options(const state *s, sm_jw *w) {
  sm_jw_key(w, "options");
  sm_jw_arr_begin(w);
  for (int i = 0; i < s->n_opts; i++) {
    const listed *o = &s->opts[i];
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "key", o->key);
    sm_jw_kv_str(w, "value", o->val);
    sm_jw_kv_bool(w, "consumed", o->field >= 0 || o->file);
    sm_jw_kv_str(w, "explained_by",
                 o->field >= 0 ? sm_meta_name((sm_meta_field)o->field)
                 : o->file     ? "file"
                               : NULL);
    sm_jw_kv_str(w, "cosmetic", o->why);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
}

static void write_provenance(const state *s, const char *cd, const char *rd) {
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, (size_t)4 << 20);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_kv_bool(&w, "complete", 1);
  sm_jw_kv_str(&w, "config_digest", cd);
  sm_jw_kv_str(&w, "residue_digest", rd);
  sm_jw_kv_int(&w, "unexplained_options", s->n_unexplained);
  sm_jw_kv_int(&w, "cosmetic_options", s->n_cosmetic);
  write_options(s, &w);
  sm_jw_key(&w, "files");
  sm_jw_arr_begin(&w);
  for (int i = 0; s->u != NULL && i < s->u->n && i < MAX_LISTED; i++) {
    const fileinfo *f = &s->files[i];
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "path", s->u->v[i].rel);
    write_hash(&w, "content_hash", f->exact);
    sm_jw_kv_int(&w, "lines", f->lines);
    sm_jw_kv_int(&w, "explained_lines", f->explained);
    sm_jw_kv_int(&w, "cosmetic_lines", f->cosmetic);
    sm_jw_obj_end(&w);
  }
  sm_jw_arr_end(&w);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) == 0 && b.data != NULL)
    s->c->res->provenance_json = sm_strdup(b.data);
  sm_buf_release(&b);
}

static void incomplete(sm__ctx *c, const char *why) {
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, 4096);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_kv_bool(&w, "complete", 0);
  sm_jw_kv_str(&w, "why", why);
  sm_jw_kv_str(&w, "config_digest", NULL);
  sm_jw_kv_str(&w, "residue_digest", NULL);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) == 0 && b.data != NULL)
    c->res->provenance_json = sm_strdup(b.data);
  sm_buf_release(&b);
}

static void build(sm__ctx *c, struct sm__unexp *u) {
  state *s = sm_calloc(1, sizeof(*s));
  int nf = u ? u->n : 0;
  char *cd, *rd;

  if (s == NULL)
    return;
  s->c = c;
  s->m = &c->res->meta;
  s->u = u;
  s->files = sm_calloc((size_t)nf + 1, sizeof(fileinfo));
  if (s->files == NULL) {
    sm_free(s);
    return;
  }
  sm_buf_init(&s->lx, (size_t)8 << 20);
  sm_buf_init(&s->lr, (size_t)8 << 20);
  collect_explained(s);
  for (int i = 0; i < nf; i++)
    process_text(s, u->v[i].rel, u->v[i].data, u->v[i].len, &s->files[i]);
  if (c->req->script != NULL) {
    fileinfo fi = {0};
    const char *name = c->req->script_name && c->req->script_name[0]
                           ? c->req->script_name
                           : "batch_script";
    process_text(s, name, c->req->script, c->req->script_len, &fi);
  }
  process_command(s);
  cd = hl_digest(c, &s->all, "c");
  rd = hl_digest(c, &s->residue, "r");
  if (cd != NULL && rd != NULL &&
      sm_meta_set_digests(&c->res->meta, cd, rd) == 0)
    write_provenance(s, cd, rd);
  sm_buf_release(&s->lx);
  sm_buf_release(&s->lr);
  sm_free(s->all.v);
  sm_free(s->residue.v);
  sm_free(s->files);
  sm_free(s);
}

void sm__unexp_finish(sm__ctx *c, int ok) {
  struct sm__unexp *u = c->res->unexp_;

  if (ok && c->stopped)
    incomplete(c, "a read limit stopped the extraction: the files read are "
                  "not all of the job's");
  else if (ok && u != NULL && u->overflow)
    incomplete(c, "too many files to record");
  else if (ok)
    build(c, u);
  sm__unexp_drop(c->res);
}

void sm__unexp_drop(sm_extract_res *res) {
  struct sm__unexp *u = res->unexp_;

  if (u != NULL) {
    sm_free(u->v);
    sm_free(u);
  }
  res->unexp_ = NULL;
}
