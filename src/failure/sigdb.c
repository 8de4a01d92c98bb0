/* sigdb.c - the Failure Handler's knowledge: parses signature files (an
 * INI-like, line-oriented format that operators can read and extend, see
 * docs/failure.md), compiles their regular expressions and matches log
 * lines against them.
 *
 * Matching many expressions per line is kept cheap by a literal index:
 * for every expression the parser works out literals that any match must
 * contain (one per top-level alternative); a line is scanned once for all
 * literals through a hash of their first three bytes, and only the
 * expressions whose literal occurs are run. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failure/failure_int.h"
#include "util/util_int.h"

extern const char sm__embed_signatures[];
extern const unsigned long sm__embed_signatures_len;

const char *const sm__cat_names[SM__CAT_COUNT] = {"unknown", "infrastructure",
                                                  "framework", "user"};
const char *const sm__comp_names[SM__COMP_COUNT] = {
    "none", "gpu", "nvlink", "network", "node", "storage", "gpu_memory"};
const char *const sm__role_names[3] = {"cause", "symptom", "benign"};
const char *const sm__ev_names[SM__EV_COUNT] = {"fault", "limit", "event",
                                                "inferred"};

#define MAX_LINE 4096
#define MAX_RECORDS 20000
#define MAX_FILE ((size_t)8 << 20)

/* ==== Literal extraction ==== */

/* Skips a bracket expression starting at re[i] == '['; returns the index
 * after its closing ']' (or the string's end). */
static size_t skip_bracket(const char *re, size_t i) {
  i++;
  if (re[i] == '^')
    i++;
  if (re[i] == ']')
    i++;
  while (re[i] && re[i] != ']') {
    if (re[i] == '[' &&
        (re[i + 1] == ':' || re[i + 1] == '=' || re[i + 1] == '.')) {
      char close = re[i + 1];
      i += 2;
      while (re[i] && !(re[i] == close && re[i + 1] == ']'))
        i++;
      if (re[i])
        i += 2;
      continue;
    }
    i++;
  }
  return re[i] ? i + 1 : i;
}

/* Skips a group starting at re[i] == '('; returns the index after ')'. */
static size_t skip_group(const char *re, size_t i) {
  int depth = 0;

  while (re[i]) {
    if (re[i] == '\\' && re[i + 1]) {
      i += 2;
      continue;
    }
    if (re[i] == '[') {
      i = skip_bracket(re, i);
      continue;
    }
    if (re[i] == '(')
      depth++;
    else if (re[i] == ')' && --depth == 0)
      return i + 1;
    i++;
  }
  return i;
}

static int range_needles(const char *re, size_t a, size_t b, char out[][64],
                         int max, int depth);

/* Required literals of one branch re[a..b): its longest literal run if it
 * has one of at least 3 bytes, else the alternatives of a group that must
 * match (not followed by '?', '*' or '{').  Returns the count, 0 if none. */
static int branch_needles(const char *re, size_t a, size_t b, char out[][64],
                          int max, int depth) {
  char run[64], best[64];
  int rl = 0, bl = 0, gn = 0;
  char(*grp)[64] = NULL;
  size_t i = a;

#define COMMIT()                                                               \
  do {                                                                         \
    if (rl > bl) {                                                             \
      memcpy(best, run, (size_t)rl);                                           \
      bl = rl;                                                                 \
    }                                                                          \
    rl = 0;                                                                    \
  } while (0)

  while (i < b) {
    char c = re[i];
    if (c == '\\') {
      char e = i + 1 < b ? re[i + 1] : '\0';
      i += 2;
      if (e != '\0' && !isalnum((unsigned char)e) && e != '<' && e != '>' &&
          e != '`' && e != '\'') {
        if (rl < 63)
          run[rl++] = (char)tolower((unsigned char)e);
        else
          COMMIT();
      } else {
        COMMIT();
      }
      continue;
    }
    if (c == '[') {
      COMMIT();
      i = skip_bracket(re, i);
      continue;
    }
    if (c == '(') {
      size_t g0 = i, g1 = skip_group(re, i);
      COMMIT();
      i = g1;
      if (g1 < b && (re[g1] == '?' || re[g1] == '*' || re[g1] == '{'))
        continue;
      if (gn == 0 && depth < 4 && g1 >= g0 + 2 && max <= 16) {
        char tmp[16][64];
        int k = range_needles(re, g0 + 1, g1 - 1, tmp, max, depth + 1);
        if (k > 0) {
          grp = sm_malloc((size_t)k * 64);
          if (grp != NULL) {
            memcpy(grp, tmp, (size_t)k * 64);
            gn = k;
          }
        }
      }
      continue;
    }
    if (c == '*' || c == '?' || c == '{') {
      /* The previous character is optional or repeated. */
      if (rl > 0)
        rl--;
      COMMIT();
      if (c == '{') {
        while (i < b && re[i] != '}')
          i++;
      }
      i++;
      continue;
    }
    if (c == '+' || c == '.' || c == '^' || c == '$' || c == ')' || c == '|') {
      COMMIT();
      i++;
      continue;
    }
    if (rl < 63)
      run[rl++] = (char)tolower((unsigned char)c);
    else
      COMMIT();
    i++;
  }
  COMMIT();
#undef COMMIT
  if (bl >= 3) {
    memcpy(out[0], best, (size_t)bl);
    out[0][bl] = '\0';
    sm_free(grp);
    return 1;
  }
  if (gn > 0 && gn <= max) {
    memcpy(out, grp, (size_t)gn * 64);
    sm_free(grp);
    return gn;
  }
  sm_free(grp);
  return 0;
}

/* Splits re[a..b) at its top-level '|' and collects the literals of every
 * alternative; 0 when one of them has none. */
static int range_needles(const char *re, size_t a, size_t b, char out[][64],
                         int max, int depth) {
  size_t i = a, start = a;
  int n = 0, d = 0;

  for (;;) {
    char c = i < b ? re[i] : '\0';
    if (c == '\\' && i + 1 < b) {
      i += 2;
      continue;
    }
    if (c == '[') {
      i = skip_bracket(re, i);
      continue;
    }
    if (c == '(')
      d++;
    else if (c == ')' && d > 0)
      d--;
    if (i >= b || (c == '|' && d == 0)) {
      int k;
      if (n >= max)
        return 0;
      k = branch_needles(re, start, i, out + n, max - n, depth);
      if (k == 0)
        return 0;
      n += k;
      if (i >= b)
        break;
      start = i + 1;
    }
    i++;
  }
  return n;
}

int sm__regex_needles(const char *re, char out[][64], int max) {
  return range_needles(re, 0, strlen(re), out, max, 0);
}

/* ==== Database ==== */

sm_sigdb *sm_sigdb_new(void) {
  sm_sigdb *db = sm_calloc(1, sizeof(*db));

  if (db == NULL)
    return NULL;
  sm_arena_init(&db->arena, 0, 0);
  db->heads = sm_malloc(SM__NEEDLE_BUCKETS * sizeof(int));
  if (db->heads == NULL) {
    sm_free(db);
    return NULL;
  }
  for (int i = 0; i < SM__NEEDLE_BUCKETS; i++)
    db->heads[i] = -1;
  for (int c = 0; c < SM__COMP_COUNT; c++) {
    db->comps[c].isolate = -1;
    db->comps[c].replace = -1;
  }
  return db;
}

/* Frees the compiled patterns arr[from..n). */
static void free_patterns(sm__pattern **arr, int from, int n) {
  for (int i = from; i < n; i++)
    regfree(&arr[i]->re);
}

void sm_sigdb_free(sm_sigdb *db) {
  if (db == NULL)
    return;
  for (int i = 0; i < db->n_patterns; i++)
    regfree(&db->patterns[i]->re);
  for (int i = 0; i < db->n_sigs; i++)
    for (int j = 0; j < db->sigs[i]->n_unless; j++)
      regfree(&db->sigs[i]->unless[j]->re);
  free_patterns(db->hosts, 0, db->n_hosts);
  free_patterns(db->devs, 0, db->n_devs);
  free_patterns(db->progress, 0, db->n_progress);
  free_patterns(db->oomctx, 0, db->n_oomctx);
  for (int i = 0; i < db->n_settings; i++)
    for (int j = 0; j < db->settings[i]->n_match; j++)
      regfree(&db->settings[i]->match[j]->re);
  sm_free(db->progress);
  sm_free(db->oomctx);
  sm_free(db->settings);
  sm_free(db->devs);
  sm_free(db->sigs);
  sm_free(db->order);
  sm_free(db->patterns);
  sm_free(db->xids);
  sm_free(db->excs);
  sm_free(db->packages);
  sm_free(db->hosts);
  sm_free(db->needles);
  sm_free(db->heads);
  sm_arena_discard(&db->arena);
  sm_free(db);
}

size_t sm_sigdb_count(const sm_sigdb *db) {
  return (size_t)db->n_order + (size_t)db->n_xids + (size_t)db->n_excs;
}

static unsigned bucket_of(const unsigned char *s) {
  uint32_t h = (uint32_t)s[0] * 0x9e3779b1u ^ (uint32_t)s[1] * 0x85ebca6bu ^
               (uint32_t)s[2] * 0xc2b2ae35u;
  return (h ^ (h >> 15)) & (SM__NEEDLE_BUCKETS - 1);
}

/* ==== Parsing ==== */

/* The record being parsed. */
enum {
  SEC_NONE,
  SEC_SIG,
  SEC_XID,
  SEC_COMP,
  SEC_EXC,
  SEC_PKG,
  SEC_HOST,
  SEC_DEV,
  SEC_PROGRESS,
  SEC_OOMCTX,
  SEC_SETTING
};

typedef struct parser {
  sm_sigdb *db;       /* target */
  const char *origin; /* name for messages */
  int lineno;         /* current line */
  sm_err *err;        /* errors */
  int sec;            /* SEC_* */
  sm__sig *sig;       /* current signature */
  sm__xid *xid;       /* current Xid entry */
  sm__exc *exc;       /* current exception entry */
  sm__setting *set;   /* current setting */
  int comp;           /* current component */
  int order;          /* signatures so far in this text */
  int records;        /* records so far */
  /* Rollback marks: counts before this text. */
  int m_sigs, m_patterns, m_xids, m_excs, m_packages, m_hosts, m_devs;
  int m_progress, m_oomctx, m_settings;
  int m_needles;
  sm__comp saved_comps[SM__COMP_COUNT];
} parser;

static int perr(parser *p, const char *fmt, const char *arg) {
  char msg[200];

  snprintf(msg, sizeof(msg), fmt, arg);
  return sm_err_set(p->err, SM_EPARSE, "%s:%d: %s", p->origin, p->lineno, msg);
}

static int lookup(const char *const *names, int n, const char *v) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], v) == 0)
      return i;
  return -1;
}

static int parse_bool(parser *p, const char *v, int *out) {
  if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) {
    *out = 1;
    return 0;
  }
  if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) {
    *out = 0;
    return 0;
  }
  return perr(p, "expected yes or no, got '%s'", v);
}

static int parse_conf(parser *p, const char *v, double *out) {
  double d;

  if (sm_parse_double(v, &d) != 0 || d < 0 || d > 1)
    return perr(p, "confidence must be a number in [0, 1], got '%s'", v);
  *out = d;
  return 0;
}

static int parse_cat(parser *p, const char *v, int *out) {
  int c = lookup(sm__cat_names, SM__CAT_COUNT, v);

  if (c < 0)
    return perr(p,
                "unknown category '%s' (infrastructure, framework, "
                "user, unknown)",
                v);
  *out = c;
  return 0;
}

static int parse_comp(parser *p, const char *v, int *out) {
  int c = lookup(sm__comp_names, SM__COMP_COUNT, v);

  if (c < 0)
    return perr(p,
                "unknown component '%s' (gpu, nvlink, network, node, "
                "storage, gpu_memory, none)",
                v);
  *out = c;
  return 0;
}

#define REGEX_COST_MAX 20000.0

/* Estimates how many nodes the regex library builds for re[*i..] up to a
 * ')' or the end: every repetition copies its atom (glibc expands "a+" to
 * "aa*" and "a{m,n}" to n copies), so stacked or nested repetitions grow
 * multiplicatively.  Saturates far above REGEX_COST_MAX. */
static double regex_cost(const char *re, size_t *i, int depth) {
  double total = 0, seq = 0, atom = 0;

  while (re[*i] && total + seq < 1e12) {
    char c = re[*i];
    double f = 0;
    if (c == ')' && depth > 0)
      break;
    if (c == '|') {
      total += seq + atom;
      seq = atom = 0;
      (*i)++;
      continue;
    }
    if (c == '*' || c == '+' || c == '?') {
      f = c == '+' ? 2 : 1.5;
      (*i)++;
    } else if (c == '{') {
      double m = 0, n = 0, *cur = &m;
      for ((*i)++; re[*i] && re[*i] != '}'; (*i)++) {
        if (re[*i] >= '0' && re[*i] <= '9')
          *cur = *cur * 10 + (re[*i] - '0');
        else if (re[*i] == ',')
          cur = &n;
        if (m > 1e6 || n > 1e6)
          break;
      }
      if (re[*i])
        (*i)++;
      f = (n > m ? n : m) + 1;
    }
    if (f > 0) {
      atom = (atom > 0 ? atom : 1) * f;
      continue;
    }
    seq += atom;
    if (c == '(') {
      (*i)++;
      atom = 1 + regex_cost(re, i, depth + 1);
      if (re[*i] == ')')
        (*i)++;
    } else if (c == '[') {
      *i = skip_bracket(re, *i);
      atom = 1;
    } else {
      *i += (c == '\\' && re[*i + 1]) ? 2 : 1;
      atom = 1;
    }
  }
  return total + seq + atom;
}

/* Refuses what makes an expression slow to compile or to run: repetition
 * counts above 255, back-references, and stacked or nested repetitions
 * that would expand beyond REGEX_COST_MAX nodes. */
static int check_regex(parser *p, const char *re) {
  size_t at = 0;

  if (regex_cost(re, &at, 0) > REGEX_COST_MAX)
    return perr(p,
                "expression too complex (nested or stacked "
                "repetitions)%s",
                "");
  for (size_t i = 0; re[i]; i++) {
    if (re[i] == '\\' && re[i + 1]) {
      if (re[i + 1] >= '1' && re[i + 1] <= '9')
        return perr(p, "back-references are not allowed%s", "");
      i++;
      continue;
    }
    if (re[i] == '{') {
      long v = 0;
      for (i++; re[i] && re[i] != '}'; i++) {
        if (re[i] >= '0' && re[i] <= '9') {
          v = v * 10 + (re[i] - '0');
          if (v > 255)
            return perr(p, "repetition count above 255%s", "");
        } else {
          v = 0;
        }
      }
      if (!re[i])
        break;
    }
  }
  return 0;
}

/* Compiles re into *pat and indexes its literals. */
static int compile(parser *p, const char *re, sm__pattern *pat, int indexed) {
  sm_sigdb *db = p->db;
  char lits[16][64];
  int rc = check_regex(p, re), n;

  if (rc != 0)
    return rc;
  rc = regcomp(&pat->re, re, REG_EXTENDED | REG_ICASE);

  if (rc != 0) {
    char msg[128];
    regerror(rc, &pat->re, msg, sizeof(msg));
    return perr(p, "bad regular expression: %s", msg);
  }
  pat->id = -1;
  pat->n_needles = 0;
  pat->needles = NULL;
  if (!indexed)
    return 0;
  if (SM__GROW(db->patterns, (size_t)db->n_patterns + 1, db->cap_patterns) !=
      0) {
    regfree(&pat->re);
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  }
  pat->id = db->n_patterns;
  db->patterns[db->n_patterns++] = pat;
  n = sm__regex_needles(re, lits, 16);
  if (n == 0) {
    db->n_unfiltered++;
    return 0;
  }
  pat->needles = sm_arena_calloc(&db->arena, (size_t)n, sizeof(char *));
  if (pat->needles == NULL)
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  for (int i = 0; i < n; i++) {
    sm__needle_ent *e;
    pat->needles[i] = sm_arena_strdup(&db->arena, lits[i]);
    if (pat->needles[i] == NULL ||
        SM__GROW(db->needles, (size_t)db->n_needles + 1, db->cap_needles) != 0)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    e = &db->needles[db->n_needles];
    e->s = pat->needles[i];
    e->len = (uint32_t)strlen(lits[i]);
    e->pattern = pat->id;
    e->next = -1;
    db->n_needles++;
  }
  pat->n_needles = n;
  return 0;
}

/* Appends a pattern to a signature's list (match or unless).  Patterns
 * are allocated one by one so that a compiled expression never moves. */
static int add_pattern(parser *p, sm__pattern ***arr, int *n, const char *re,
                       int indexed) {
  sm__pattern **na =
      sm_arena_calloc(&p->db->arena, (size_t)*n + 1, sizeof(*na));
  sm__pattern *pat = sm_arena_calloc(&p->db->arena, 1, sizeof(*pat));
  int rc;

  if (na == NULL || pat == NULL)
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  if (*n)
    memcpy(na, *arr, (size_t)*n * sizeof(*na));
  rc = compile(p, re, pat, indexed);
  if (rc != 0)
    return rc;
  na[*n] = pat;
  *arr = na;
  (*n)++;
  return 0;
}

static int add_string(parser *p, char ***arr, int *n, const char *v) {
  char **na = sm_arena_calloc(&p->db->arena, (size_t)*n + 1, sizeof(char *));

  if (na == NULL)
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  if (*n)
    memcpy(na, *arr, (size_t)*n * sizeof(char *));
  na[*n] = sm_arena_strdup(&p->db->arena, v);
  if (na[*n] == NULL)
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  *arr = na;
  (*n)++;
  return 0;
}

static int valid_name(const char *s) {
  if (*s == '\0')
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
      return 0;
  return 1;
}

/* Ends the current record, checking that it is complete. */
static int finish_record(parser *p) {
  if (p->sec == SEC_SETTING && p->set != NULL &&
      (p->set->n_match == 0 || p->set->n_explains == 0))
    return perr(p, "setting '%s' needs 'match' and 'explains' lines",
                p->set->name);
  if (p->sec == SEC_SIG && p->sig != NULL) {
    if (p->sig->n_match == 0)
      return perr(p, "signature '%s' has no 'match' line", p->sig->name);
    if (p->sig->xid_group > 0 && (size_t)p->sig->xid_group > 9)
      return perr(p, "signature '%s': xid group must be 1-9", p->sig->name);
  }
  p->sig = NULL;
  p->xid = NULL;
  p->exc = NULL;
  p->set = NULL;
  return 0;
}

static int open_section(parser *p, char *hdr) {
  char *name = strchr(hdr, ' ');
  sm_sigdb *db = p->db;
  int rc = finish_record(p);

  if (rc != 0)
    return rc;
  if (++p->records > MAX_RECORDS)
    return perr(p, "more than %s records", "20000");
  if (name != NULL) {
    *name++ = '\0';
    while (*name == ' ')
      name++;
  }
  if (strcmp(hdr, "signature") == 0) {
    sm__sig *s;
    if (name == NULL || !valid_name(name))
      return perr(p,
                  "signature needs a name of letters, digits, '-', '_', "
                  "'.'%s",
                  "");
    if (SM__GROW(db->sigs, (size_t)db->n_sigs + 1, db->cap_sigs) != 0)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    s = sm_arena_calloc(&db->arena, 1, sizeof(*s));
    if (s == NULL || (s->name = sm_arena_strdup(&db->arena, name)) == NULL)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    for (int i = p->m_sigs; i < db->n_sigs; i++)
      if (strcmp(db->sigs[i]->name, name) == 0)
        return perr(p, "signature '%s' defined twice", name);
    s->role = SM__ROLE_CAUSE;
    s->category = SM__CAT_UNKNOWN;
    s->component = SM__COMP_NONE;
    s->retryable = -1;
    s->confidence = 0.8;
    s->load = db->loads;
    s->order = p->order++;
    db->sigs[db->n_sigs++] = s;
    p->sig = s;
    p->sec = SEC_SIG;
  } else if (strcmp(hdr, "xid") == 0) {
    long long code;
    sm__xid *x;
    if (name == NULL || sm_parse_i64(name, &code) != 0 || code < 0 ||
        code > 100000)
      return perr(p, "xid needs a numeric code, got '%s'", name ? name : "");
    for (int i = p->m_xids; i < db->n_xids; i++)
      if (db->xids[i].code == (int)code)
        return perr(p, "xid %s defined twice", name);
    if (SM__GROW(db->xids, (size_t)db->n_xids + 1, db->cap_xids) != 0)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    x = &db->xids[db->n_xids++];
    memset(x, 0, sizeof(*x));
    x->code = (int)code;
    x->role = SM__ROLE_CAUSE;
    x->category = SM__CAT_INFRA;
    x->component = SM__COMP_GPU;
    x->retryable = 1;
    x->confidence = 0.8;
    x->load = db->loads;
    p->xid = x;
    p->sec = SEC_XID;
  } else if (strcmp(hdr, "component") == 0) {
    int c;
    if (name == NULL)
      return perr(p, "component needs a name%s", "");
    rc = parse_comp(p, name, &c);
    if (rc != 0)
      return rc;
    p->comp = c;
    p->sec = SEC_COMP;
  } else if (strcmp(hdr, "exception") == 0) {
    sm__exc *e;
    if (name == NULL || !valid_name(name))
      return perr(p, "exception needs a type name%s", "");
    if (SM__GROW(db->excs, (size_t)db->n_excs + 1, db->cap_excs) != 0)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    e = &db->excs[db->n_excs++];
    memset(e, 0, sizeof(*e));
    e->type = sm_arena_strdup(&db->arena, name);
    if (e->type == NULL)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    e->category = SM__CAT_UNKNOWN;
    e->library_category = -1;
    e->confidence = 0.6;
    e->load = db->loads;
    p->exc = e;
    p->sec = SEC_EXC;
  } else if (strcmp(hdr, "packages") == 0 && name == NULL) {
    p->sec = SEC_PKG;
  } else if (strcmp(hdr, "hostnames") == 0 && name == NULL) {
    p->sec = SEC_HOST;
  } else if (strcmp(hdr, "devices") == 0 && name == NULL) {
    p->sec = SEC_DEV;
  } else if (strcmp(hdr, "progress") == 0 && name == NULL) {
    p->sec = SEC_PROGRESS;
  } else if (strcmp(hdr, "oom-context") == 0 && name == NULL) {
    p->sec = SEC_OOMCTX;
  } else if (strcmp(hdr, "setting") == 0) {
    sm__setting *st;
    if (name == NULL || !valid_name(name))
      return perr(p, "setting needs a name%s", "");
    if (SM__GROW(db->settings, (size_t)db->n_settings + 1, db->cap_settings) !=
        0)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    st = sm_arena_calloc(&db->arena, 1, sizeof(*st));
    if (st == NULL || (st->name = sm_arena_strdup(&db->arena, name)) == NULL)
      return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
    st->load = db->loads;
    db->settings[db->n_settings++] = st;
    p->set = st;
    p->sec = SEC_SETTING;
  } else {
    return perr(p,
                "unknown section '[%s]' (signature, xid, component, "
                "exception, packages, hostnames, devices, progress, "
                "oom-context, setting)",
                hdr);
  }
  return 0;
}

/* class_key's answer for a key that is not one of its five. */
#define KEY_OTHER 1

/* The keys a signature and an Xid entry share: what a match says
 * (role, category, component, retryable, confidence).  Returns 0 or an
 * error for one of them, KEY_OTHER for any other key. */
static int class_key(parser *p, const char *k, const char *v, int *role,
                     int *category, int *component, int *retryable,
                     double *confidence) {
  if (!strcmp(k, "role")) {
    int r = lookup(sm__role_names, 3, v);
    if (r < 0)
      return perr(p, "role must be cause, symptom or benign, got '%s'", v);
    *role = r;
    return 0;
  }
  if (!strcmp(k, "category"))
    return parse_cat(p, v, category);
  if (!strcmp(k, "component"))
    return parse_comp(p, v, component);
  if (!strcmp(k, "retryable"))
    return parse_bool(p, v, retryable);
  if (!strcmp(k, "confidence"))
    return parse_conf(p, v, confidence);
  return KEY_OTHER;
}

static int sig_key(parser *p, const char *k, const char *v) {
  sm__sig *s = p->sig;
  int rc;

  if (!strcmp(k, "match"))
    return add_pattern(p, &s->match, &s->n_match, v, 1);
  if (!strcmp(k, "unless"))
    return add_pattern(p, &s->unless, &s->n_unless, v, 0);
  rc = class_key(p, k, v, &s->role, &s->category, &s->component, &s->retryable,
                 &s->confidence);
  if (rc != KEY_OTHER)
    return rc;
  if (!strcmp(k, "generic"))
    return parse_bool(p, v, &s->generic);
  if (!strcmp(k, "xid")) {
    long long g;
    if (sm_parse_i64(v, &g) != 0 || g < 1 || g > 9)
      return perr(p, "xid must name a capture group 1-9, got '%s'", v);
    s->xid_group = (int)g;
    return 0;
  }
  if (!strcmp(k, "resolver")) {
    if (!strcmp(v, "import"))
      s->resolver = SM__RESOLVE_IMPORT;
    else if (!strcmp(v, "traceback"))
      s->resolver = SM__RESOLVE_TRACEBACK;
    else if (!strcmp(v, "oom"))
      s->resolver = SM__RESOLVE_OOM;
    else if (!strcmp(v, "memory"))
      s->resolver = SM__RESOLVE_MEMORY;
    else if (!strcmp(v, "cgroup-memory"))
      s->resolver = SM__RESOLVE_CGROUP_MEMORY;
    else if (!strcmp(v, "none"))
      s->resolver = SM__RESOLVE_NONE;
    else
      return perr(
          p,
          "resolver must be import, traceback, oom, memory, cgroup-memory or "
          "none, got '%s'",
          v);
    return 0;
  }
  if (!strcmp(k, "evidence")) {
    int e = lookup(sm__ev_names, SM__EV_COUNT, v);
    if (e < 0)
      return perr(
          p, "evidence must be fault, limit, event or inferred, got '%s'", v);
    s->evidence = e;
    return 0;
  }
  if (!strcmp(k, "cause"))
    return (s->cause = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  if (!strcmp(k, "advice"))
    return (s->advice = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  if (!strcmp(k, "diagnose"))
    return add_string(p, &s->diagnose, &s->n_diagnose, v);
  return perr(p, "unknown key '%s' in a signature", k);
}

static int xid_key(parser *p, const char *k, const char *v) {
  sm__xid *x = p->xid;
  int rc;

  if (!strcmp(k, "name"))
    return (x->name = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  if (!strcmp(k, "cause"))
    return (x->cause = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  rc = class_key(p, k, v, &x->role, &x->category, &x->component, &x->retryable,
                 &x->confidence);
  if (rc != KEY_OTHER)
    return rc;
  return perr(p, "unknown key '%s' in an xid entry", k);
}

static int comp_key(parser *p, const char *k, const char *v) {
  sm__comp *c = &p->db->comps[p->comp];

  if (!strcmp(k, "diagnose"))
    return add_string(p, &c->diagnose, &c->n_diagnose, v);
  if (!strcmp(k, "isolate"))
    return parse_bool(p, v, &c->isolate);
  if (!strcmp(k, "replace"))
    return parse_bool(p, v, &c->replace);
  return perr(p, "unknown key '%s' in a component", k);
}

static int exc_key(parser *p, const char *k, const char *v) {
  sm__exc *e = p->exc;

  if (!strcmp(k, "category"))
    return parse_cat(p, v, &e->category);
  if (!strcmp(k, "library_category"))
    return parse_cat(p, v, &e->library_category);
  if (!strcmp(k, "component"))
    return parse_comp(p, v, &e->component);
  if (!strcmp(k, "confidence"))
    return parse_conf(p, v, &e->confidence);
  if (!strcmp(k, "cause"))
    return (e->cause = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  return perr(p, "unknown key '%s' in an exception entry", k);
}

static int pkg_key(parser *p, const char *k, char *v) {
  sm_sigdb *db = p->db;
  char *tok, *save = NULL;

  if (strcmp(k, "third_party") != 0)
    return perr(p, "unknown key '%s' in [packages]", k);
  for (tok = strtok_r(v, " \t,", &save); tok != NULL;
       tok = strtok_r(NULL, " \t,", &save)) {
    if (!valid_name(tok))
      return perr(p, "bad package name '%s'", tok);
    if (SM__GROW(db->packages, (size_t)db->n_packages + 1, db->cap_packages) !=
        0)
      return SM_ENOMEM;
    db->packages[db->n_packages] = sm_arena_strdup(&db->arena, tok);
    if (db->packages[db->n_packages] == NULL)
      return SM_ENOMEM;
    db->n_packages++;
  }
  return 0;
}

/* A pattern of [progress]: a line of a job that is training. */
/* Compiles v into a new pattern appended to the table *arr (*n of them,
 * room for *cap); *out is the pattern.  0, SM_ENOMEM or a parse error. */
static int append_pattern(parser *p, const char *v, sm__pattern ***arr, int *n,
                          size_t *cap, sm__pattern **out) {
  sm__pattern *pat;
  int rc;

  if (SM__GROW(*arr, (size_t)*n + 1, *cap) != 0)
    return SM_ENOMEM;
  pat = sm_arena_calloc(&p->db->arena, 1, sizeof(*pat));
  if (pat == NULL)
    return SM_ENOMEM;
  rc = compile(p, v, pat, 0);
  if (rc != 0)
    return rc;
  (*arr)[(*n)++] = pat;
  *out = pat;
  return 0;
}

static int progress_key(parser *p, const char *k, const char *v) {
  sm__pattern *pat;

  if (strcmp(k, "match") != 0)
    return perr(p, "unknown key '%s' in [progress]", k);
  return append_pattern(p, v, &p->db->progress, &p->db->n_progress,
                        &p->db->cap_progress, &pat);
}

/* A pattern of [oom-context]: a call that creates a CUDA context. */
static int oomctx_key(parser *p, const char *k, const char *v) {
  sm__pattern *pat;

  if (strcmp(k, "match") != 0)
    return perr(p, "unknown key '%s' in [oom-context]", k);
  return append_pattern(p, v, &p->db->oomctx, &p->db->n_oomctx,
                        &p->db->cap_oomctx, &pat);
}

static int setting_key(parser *p, const char *k, char *v) {
  sm__setting *st = p->set;

  if (!strcmp(k, "match")) {
    sm__pattern **na =
        sm_arena_calloc(&p->db->arena, (size_t)st->n_match + 1, sizeof(*na));
    sm__pattern *pat = sm_arena_calloc(&p->db->arena, 1, sizeof(*pat));
    int rc;
    if (na == NULL || pat == NULL)
      return SM_ENOMEM;
    rc = compile(p, v, pat, 0);
    if (rc != 0)
      return rc;
    if (st->n_match)
      memcpy(na, st->match, (size_t)st->n_match * sizeof(*na));
    na[st->n_match++] = pat;
    st->match = na;
    return 0;
  }
  if (!strcmp(k, "explains")) {
    char *tok, *save = NULL;
    for (tok = strtok_r(v, " \t,", &save); tok != NULL;
         tok = strtok_r(NULL, " \t,", &save)) {
      int rc;
      if (!valid_name(tok))
        return perr(p, "bad signature name '%s'", tok);
      rc = add_string(p, &st->explains, &st->n_explains, tok);
      if (rc != 0)
        return rc;
    }
    return 0;
  }
  if (!strcmp(k, "cause"))
    return (st->cause = sm_arena_strdup(&p->db->arena, v)) ? 0 : SM_ENOMEM;
  return perr(p, "unknown key '%s' in a setting", k);
}

/* A pattern of [hostnames] or [devices]: group 1 is what it finds. */
static int capture_key(parser *p, const char *k, const char *v,
                       sm__pattern ***arr, int *n, size_t *cap) {
  sm__pattern *pat;
  int rc;

  if (strcmp(k, "match") != 0)
    return perr(p, "unknown key '%s' in [hostnames] or [devices]", k);
  rc = append_pattern(p, v, arr, n, cap, &pat);
  if (rc != 0)
    return rc;
  if (pat->re.re_nsub < 1) {
    regfree(&pat->re);
    (*n)--;
    return perr(p, "a host or device pattern needs a capture group%s", "");
  }
  return 0;
}

static int parse_line(parser *p, char *line) {
  char *s = sm__str_trim(line), *eq, *k, *v;
  int rc;

  if (*s == '\0' || *s == '#' || *s == ';')
    return 0;
  if (*s == '[') {
    char *end = strchr(s, ']');
    if (end == NULL || *sm__str_trim(end + 1) != '\0')
      return perr(p, "section header must be '[kind name]'%s", "");
    *end = '\0';
    return open_section(p, sm__str_trim(s + 1));
  }
  eq = strchr(s, '=');
  if (eq == NULL)
    return perr(p, "expected 'key = value'%s", "");
  *eq = '\0';
  k = sm__str_trim(s);
  v = sm__str_trim(eq + 1);
  for (char *q = k; *q; q++)
    if (!islower((unsigned char)*q) && *q != '_')
      return perr(p, "bad key '%s'", k);
  if (*v == '\0')
    return perr(p, "key '%s' has no value", k);
  switch (p->sec) {
  case SEC_SIG:
    rc = sig_key(p, k, v);
    break;
  case SEC_XID:
    rc = xid_key(p, k, v);
    break;
  case SEC_COMP:
    rc = comp_key(p, k, v);
    break;
  case SEC_EXC:
    rc = exc_key(p, k, v);
    break;
  case SEC_PKG:
    rc = pkg_key(p, k, v);
    break;
  case SEC_HOST:
    rc =
        capture_key(p, k, v, &p->db->hosts, &p->db->n_hosts, &p->db->cap_hosts);
    break;
  case SEC_DEV:
    rc = capture_key(p, k, v, &p->db->devs, &p->db->n_devs, &p->db->cap_devs);
    break;
  case SEC_PROGRESS:
    rc = progress_key(p, k, v);
    break;
  case SEC_OOMCTX:
    rc = oomctx_key(p, k, v);
    break;
  case SEC_SETTING:
    rc = setting_key(p, k, v);
    break;
  default:
    return perr(p, "key '%s' outside a section", k);
  }
  if (rc == SM_ENOMEM)
    return sm_err_set(p->err, SM_ENOMEM, "%s: out of memory", p->origin);
  return rc;
}

/* Undoes everything a failed text added (the arena keeps the bytes). */
static void rollback(parser *p) {
  sm_sigdb *db = p->db;

  for (int i = p->m_patterns; i < db->n_patterns; i++)
    regfree(&db->patterns[i]->re);
  /* Unless-patterns and host patterns are not in the pattern table. */
  for (int i = p->m_sigs; i < db->n_sigs; i++)
    for (int j = 0; j < db->sigs[i]->n_unless; j++)
      regfree(&db->sigs[i]->unless[j]->re);
  free_patterns(db->hosts, p->m_hosts, db->n_hosts);
  free_patterns(db->devs, p->m_devs, db->n_devs);
  free_patterns(db->progress, p->m_progress, db->n_progress);
  free_patterns(db->oomctx, p->m_oomctx, db->n_oomctx);
  for (int i = p->m_settings; i < db->n_settings; i++)
    for (int j = 0; j < db->settings[i]->n_match; j++)
      regfree(&db->settings[i]->match[j]->re);
  db->n_progress = p->m_progress;
  db->n_oomctx = p->m_oomctx;
  db->n_settings = p->m_settings;
  db->n_sigs = p->m_sigs;
  db->n_patterns = p->m_patterns;
  db->n_xids = p->m_xids;
  db->n_excs = p->m_excs;
  db->n_packages = p->m_packages;
  db->n_hosts = p->m_hosts;
  db->n_devs = p->m_devs;
  db->n_needles = p->m_needles;
  memcpy(db->comps, p->saved_comps, sizeof(db->comps));
}

static int by_precedence(const void *a, const void *b) {
  const sm__sig *x = *(const sm__sig *const *)a;
  const sm__sig *y = *(const sm__sig *const *)b;

  if (x->load != y->load)
    return y->load - x->load;
  return x->order - y->order;
}

/* Rebuilds the try order and the literal index after a load. */
static int rebuild(sm_sigdb *db) {
  sm__sig **ord =
      sm_realloc(db->order, ((size_t)db->n_sigs + 1) * sizeof(*ord));
  int n = 0;

  if (ord == NULL)
    return SM_ENOMEM;
  db->order = ord;
  /* A later signature with the same name replaces an earlier one. */
  for (int i = 0; i < db->n_sigs; i++) {
    db->sigs[i]->dead = 0;
    for (int j = i + 1; j < db->n_sigs; j++)
      if (db->sigs[j]->load > db->sigs[i]->load &&
          strcmp(db->sigs[i]->name, db->sigs[j]->name) == 0) {
        db->sigs[i]->dead = 1;
        break;
      }
    if (!db->sigs[i]->dead)
      ord[n++] = db->sigs[i];
  }
  qsort(ord, (size_t)n, sizeof(*ord), by_precedence);
  db->n_order = n;
  for (int i = 0; i < SM__NEEDLE_BUCKETS; i++)
    db->heads[i] = -1;
  for (int i = db->n_needles - 1; i >= 0; i--) {
    unsigned b = bucket_of((const unsigned char *)db->needles[i].s);
    db->needles[i].next = db->heads[b];
    db->heads[b] = i;
  }
  return 0;
}

int sm_sigdb_load_text(sm_sigdb *db, const char *text, size_t len,
                       const char *origin, sm_err *err) {
  parser p;
  char line[MAX_LINE + 1];
  size_t i = 0;
  int rc = 0;

  memset(&p, 0, sizeof(p));
  p.db = db;
  p.origin = origin ? origin : "signatures";
  p.err = err;
  p.comp = -1;
  p.m_sigs = db->n_sigs;
  p.m_patterns = db->n_patterns;
  p.m_xids = db->n_xids;
  p.m_excs = db->n_excs;
  p.m_packages = db->n_packages;
  p.m_hosts = db->n_hosts;
  p.m_devs = db->n_devs;
  p.m_progress = db->n_progress;
  p.m_oomctx = db->n_oomctx;
  p.m_settings = db->n_settings;
  p.m_needles = db->n_needles;
  memcpy(p.saved_comps, db->comps, sizeof(db->comps));
  db->loads++;
  if (memchr(text, '\0', len) != NULL) {
    p.lineno = 1;
    rc = perr(&p, "binary data (NUL byte) in a signature file%s", "");
  }
  while (rc == 0 && i < len) {
    const char *nl = memchr(text + i, '\n', len - i);
    size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
    p.lineno++;
    if (l > MAX_LINE) {
      rc = perr(&p, "line longer than %s bytes", "4096");
      break;
    }
    memcpy(line, text + i, l);
    line[l] = '\0';
    rc = parse_line(&p, line);
    i += l + 1;
  }
  if (rc == 0)
    rc = finish_record(&p);
  if (rc == 0)
    rc = rebuild(db);
  if (rc != 0) {
    rollback(&p);
    db->loads--;
    rebuild(db);
    if (rc == SM_ENOMEM)
      sm_err_set(err, SM_ENOMEM, "%s: out of memory", p.origin);
  }
  return rc;
}

int sm_sigdb_load_builtin(sm_sigdb *db, sm_err *err) {
  return sm_sigdb_load_text(db, sm__embed_signatures,
                            (size_t)sm__embed_signatures_len,
                            "(built-in signatures)", err);
}

int sm_sigdb_load_file(sm_sigdb *db, const char *path, sm_err *err) {
  char *text;
  size_t len;
  int rc = sm_file_read_all(path, MAX_FILE, &text, &len, err);

  if (rc != 0)
    return rc;
  rc = sm_sigdb_load_text(db, text, len, path, err);
  sm_free(text);
  return rc;
}

/* ==== Lookups ==== */

const sm__xid *sm__sigdb_xid(const sm_sigdb *db, int code) {
  const sm__xid *best = NULL;

  for (int i = 0; i < db->n_xids; i++)
    if (db->xids[i].code == code &&
        (best == NULL || db->xids[i].load >= best->load))
      best = &db->xids[i];
  return best;
}

const sm__exc *sm__sigdb_exc(const sm_sigdb *db, const char *type) {
  const sm__exc *best = NULL;

  for (int i = 0; i < db->n_excs; i++)
    if (strcmp(db->excs[i].type, type) == 0 &&
        (best == NULL || db->excs[i].load >= best->load))
      best = &db->excs[i];
  return best;
}

int sm__sigdb_configurable(const sm_sigdb *db, const sm__sig *sig) {
  for (int i = 0; sig != NULL && i < db->n_settings; i++)
    for (int k = 0; k < db->settings[i]->n_explains; k++)
      if (strcmp(db->settings[i]->explains[k], sig->name) == 0)
        return 1;
  return 0;
}

int sm__sigdb_is_package(const sm_sigdb *db, const char *name, size_t n) {
  for (int i = 0; i < db->n_packages; i++)
    if (strlen(db->packages[i]) == n &&
        strncasecmp(db->packages[i], name, n) == 0)
      return 1;
  return 0;
}

/* ==== Matching ==== */

int sm__matcher_init(sm__matcher *m, const sm_sigdb *db) {
  memset(m, 0, sizeof(*m));
  m->db = db;
  m->n_words = (db->n_patterns + 63) / 64 + 1;
  m->cand = sm_calloc((size_t)m->n_words, sizeof(uint64_t));
  return m->cand ? 0 : SM_ENOMEM;
}

void sm__matcher_release(sm__matcher *m) {
  sm_free(m->cand);
  sm_free(m->low);
  sm_free(m->buf);
  memset(m, 0, sizeof(*m));
}

/* Copies text into a NUL-terminated buffer (NUL bytes become spaces). */
static const char *cstr(sm__matcher *m, const char *text, size_t n) {
  if (n + 1 > m->buf_cap) {
    size_t cap = n + 1 < 256 ? 256 : n + 1;
    char *b = sm_realloc(m->buf, cap);
    if (b == NULL)
      return NULL;
    m->buf = b;
    m->buf_cap = cap;
  }
  for (size_t i = 0; i < n; i++)
    m->buf[i] = text[i] ? text[i] : ' ';
  m->buf[n] = '\0';
  return m->buf;
}

int sm__pattern_exec(sm__matcher *m, const sm__pattern *p, const char *text,
                     size_t n, regmatch_t *sub, size_t nsub) {
  const char *s = cstr(m, text, n);

  if (s == NULL)
    return 0;
  return regexec(&p->re, s, nsub, sub, 0) == 0;
}

/* Marks the patterns whose literal occurs in the lower-cased line. */
static int scan_needles(sm__matcher *m, const char *text, size_t n) {
  const sm_sigdb *db = m->db;
  const unsigned char *s;

  if (n + 1 > m->low_cap) {
    size_t cap = n + 1 < 256 ? 256 : n + 1;
    char *b = sm_realloc(m->low, cap);
    if (b == NULL)
      return SM_ENOMEM;
    m->low = b;
    m->low_cap = cap;
  }
  for (size_t i = 0; i < n; i++)
    m->low[i] = (char)tolower((unsigned char)text[i]);
  m->low[n] = '\0';
  memset(m->cand, 0, (size_t)m->n_words * sizeof(uint64_t));
  s = (const unsigned char *)m->low;
  for (size_t i = 0; i + 3 <= n; i++) {
    int e = db->heads[bucket_of(s + i)];
    while (e >= 0) {
      const sm__needle_ent *ne = &db->needles[e];
      if (ne->len <= n - i && memcmp(s + i, ne->s, ne->len) == 0)
        m->cand[ne->pattern >> 6] |= (uint64_t)1 << (ne->pattern & 63);
      e = ne->next;
    }
  }
  return 0;
}

static const sm__sig *match_role(sm__matcher *m, const char *text, size_t n,
                                 int *xid, int only_causes) {
  const sm_sigdb *db = m->db;
  regmatch_t sub[10];

  *xid = -1;
  if (n == 0 || scan_needles(m, text, n) != 0)
    return NULL;
  for (int i = 0; i < db->n_order; i++) {
    const sm__sig *s = db->order[i];
    int hit = -1;
    if (only_causes && s->role != SM__ROLE_CAUSE)
      continue;
    for (int j = 0; j < s->n_match && hit < 0; j++) {
      const sm__pattern *p = s->match[j];
      if (p->n_needles > 0 &&
          !(m->cand[p->id >> 6] & ((uint64_t)1 << (p->id & 63))))
        continue;
      if (sm__pattern_exec(m, p, text, n, sub, 10))
        hit = j;
    }
    if (hit < 0)
      continue;
    if (s->xid_group > 0 && sub[s->xid_group].rm_so >= 0) {
      long long code = 0;
      for (regoff_t k = sub[s->xid_group].rm_so;
           k < sub[s->xid_group].rm_eo && code < 1000000; k++)
        if (m->buf[k] >= '0' && m->buf[k] <= '9')
          code = code * 10 + (m->buf[k] - '0');
      *xid = (int)code;
    }
    for (int j = 0; j < s->n_unless; j++)
      if (sm__pattern_exec(m, s->unless[j], text, n, NULL, 0)) {
        hit = -1;
        break;
      }
    if (hit < 0) {
      *xid = -1;
      continue;
    }
    return s;
  }
  return NULL;
}

const sm__sig *sm__sigdb_match(sm__matcher *m, const char *text, size_t n,
                               int *xid) {
  return match_role(m, text, n, xid, 0);
}

const sm__sig *sm__sigdb_match_cause(sm__matcher *m, const char *text, size_t n,
                                     int *xid) {
  return match_role(m, text, n, xid, 1);
}

int sm_sigdb_match(const sm_sigdb *db, const char *line, size_t n,
                   sm_sigmatch *out) {
  sm__matcher m;
  const sm__sig *s;
  double ts;
  size_t pre;
  int xid;

  if (sm__matcher_init(&m, db) != 0)
    return 0;
  if (n > SM_TEXT_MAX_INPUT * 4)
    n = SM_TEXT_MAX_INPUT * 4;
  pre = sm__line_prefix(line, n, &ts);
  s = sm__sigdb_match(&m, line + pre, n - pre, &xid);
  sm__matcher_release(&m);
  if (s == NULL)
    return 0;
  memset(out, 0, sizeof(*out));
  out->name = s->name;
  out->role = sm__role_names[s->role];
  out->category = sm__cat_names[s->category];
  out->component = sm__comp_names[s->component];
  out->confidence = s->confidence;
  out->retryable =
      s->retryable >= 0 ? s->retryable : s->category == SM__CAT_INFRA;
  out->xid = xid;
  if (xid >= 0) {
    const sm__xid *x = sm__sigdb_xid(db, xid);
    if (x != NULL) {
      out->role = sm__role_names[x->role];
      out->category = sm__cat_names[x->category];
      out->component = sm__comp_names[x->component];
      out->confidence = x->confidence;
      out->retryable = x->retryable;
    }
  }
  return 1;
}

static int any_match(sm__matcher *m, sm__pattern *const *pats, int np,
                     const char *text, size_t n) {
  for (int i = 0; i < np; i++)
    if (sm__pattern_exec(m, pats[i], text, n, NULL, 0))
      return 1;
  return 0;
}

int sm__sigdb_progress(sm__matcher *m, const char *text, size_t n) {
  return any_match(m, m->db->progress, m->db->n_progress, text, n);
}

int sm__sigdb_oom_context(sm__matcher *m, const char *text, size_t n) {
  return any_match(m, m->db->oomctx, m->db->n_oomctx, text, n);
}

const sm__setting *sm__sigdb_setting(sm__matcher *m, const sm__sig *sig,
                                     const char *text, size_t n) {
  const sm_sigdb *db = m->db;
  const sm__setting *best = NULL;

  if (sig == NULL)
    return NULL;
  for (int i = 0; i < db->n_settings; i++) {
    const sm__setting *st = db->settings[i];
    int applies = 0;
    if (best != NULL && st->load < best->load)
      continue;
    for (int k = 0; k < st->n_explains && !applies; k++)
      applies = strcmp(st->explains[k], sig->name) == 0;
    for (int k = 0; k < st->n_match && applies; k++)
      if (sm__pattern_exec(m, st->match[k], text, n, NULL, 0)) {
        best = st;
        break;
      }
  }
  return best;
}
