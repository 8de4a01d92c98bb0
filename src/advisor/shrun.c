/* shrun.c - launch scripts, interpreted on the tree-sitter bash syntax
 * tree without running anything.
 *
 * The interpreter walks the script in order with its variables,
 * positional arguments, exports, functions and working directory:
 * assignments and `export`/`local`/`declare`, parameter expansion
 * (${X:-d}, ${X:+alt}, ${X#p}, ${X%p}, ${X/a/b}, ${#X}, ${X:o:l},
 * ${@:3}, "$@"), arithmetic, `if`/`elif`/`case` on conditions it can
 * decide ([ ], [[ ]], -le/-ge/==, -z/-n, -f/-d on repository files),
 * `for` over known words, functions, `source`/`.` of repository scripts,
 * `shift`, `set --`, `read` from a here-string, `cd` and `exit`.  The
 * Kaldi/ESPnet `parse_options.sh` convention (--name value sets $name)
 * is applied when a script sources it.  Command substitution is never
 * run: dirname, basename, pwd, realpath and echo are computed, anything
 * else is unknown.  A branch on an unknown condition runs in both
 * directions and what the two disagree on becomes unknown.
 *
 * Every command the script would run is a candidate; the one that looks
 * most like the training launch (a launcher or the training entry, not
 * an evaluation or data preparation step) is handed to the launcher
 * reader with the line of each of its words.  Values keep the line they
 * were written at: an option collected in a multi-line variable points
 * to its own line in that variable. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "advisor/advisor_int.h"
#include "advisor/tsnode.h"

#define MAX_VARS 512
#define MAX_FUNCS 64
#define MAX_ARGS 512
#define MAX_FIELDS 1024
#define MAX_TEXT (256 * 1024)
#define MAX_SH_DEPTH 8
#define MAX_SH_STEPS 200000
#define MAX_LOOP 64
#define UNK '\x01'
/* Separates the elements of an array variable's value. */
#define SEP '\x02'

/* ==== Strings with the line of each byte ==== */

typedef struct lstr {
  char *s;  /* text, NUL-terminated */
  int *ln;  /* line of each byte */
  size_t n; /* length */
  size_t cap;
  int unk; /* contains something unknown */
} lstr;

static void ls_init(lstr *l) {
  memset(l, 0, sizeof(*l));
}

static void ls_free(lstr *l) {
  sm_free(l->s);
  sm_free(l->ln);
  ls_init(l);
}

static int ls_putc(lstr *l, char ch, int line) {
  if (l->n + 2 > l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    char *ns;
    int *nl;
    if (cap > MAX_TEXT)
      return -1;
    ns = sm_realloc(l->s, cap);
    if (ns == NULL)
      return -1;
    l->s = ns;
    nl = sm_realloc(l->ln, cap * sizeof(int));
    if (nl == NULL)
      return -1;
    l->ln = nl;
    l->cap = cap;
  }
  l->s[l->n] = ch;
  l->ln[l->n] = line;
  l->n++;
  l->s[l->n] = '\0';
  if (ch == UNK)
    l->unk = 1;
  return 0;
}

static void ls_puts(lstr *l, const char *s, int line) {
  while (s && *s)
    if (ls_putc(l, *s++, line) != 0)
      return;
}

/* ==== Variables ==== */

typedef struct svar {
  const char *name; /* name */
  const char *val;  /* value (arena) */
  const int *ln;    /* line of each byte, NULL: all on line */
  int line;         /* line of the assignment */
  int exported;     /* export */
  int multiline;    /* the value was written over several lines */
  int array;        /* an array: elements separated by SEP */
} svar;

typedef struct sfunc {
  const char *name; /* function name */
  TSNode body;      /* its body */
  const char *src;  /* its file's text */
  const char *rel;  /* its file */
} sfunc;

typedef struct cand {
  const char **w;  /* words */
  const char **ev; /* evidence of each word */
  int n;           /* count */
  const char *dir; /* directory it runs in */
  int score;       /* launch score */
  int maybe;       /* inside a branch that may not run */
} cand;

typedef struct sh {
  sm__ctx *c;             /* context */
  const char *rel;        /* file being run (evidence) */
  const char *src;        /* its text */
  svar *vars;             /* variables */
  int nvars;              /* count */
  sfunc funcs[MAX_FUNCS]; /* functions */
  int nfuncs;             /* count */
  const char **argv;      /* positional arguments $1.. */
  const char **argv_ev;   /* their evidence */
  int argc;               /* count */
  const char *arg0;       /* $0 */
  const char *dir;        /* working directory, root-relative */
  int depth;              /* function / source nesting */
  int steps;              /* work done */
  int maybe;              /* inside an undecided branch */
  int exited;             /* `exit` reached (or `break`, below) */
  int broke;              /* `break` reached: ends the innermost loop */
  int loops;              /* loops being run */
  cand best;              /* best launch candidate so far */
  int have_best;          /* a candidate was seen */
} sh;

static svar *var_find(sh *h, const char *name) {
  for (int i = h->nvars - 1; i >= 0; i--)
    if (strcmp(h->vars[i].name, name) == 0)
      return &h->vars[i];
  return NULL;
}

static void var_set(sh *h, const char *name, const lstr *v, int line,
                    int exported) {
  svar *s = var_find(h, name);
  int array = v->n > 0 && v->s[0] == SEP;
  sm__ctx *c = h->c;
  int multi = 0;
  if (s == NULL) {
    if (h->nvars >= MAX_VARS)
      return;
    s = &h->vars[h->nvars++];
    memset(s, 0, sizeof(*s));
    s->name = sm__strdup(c, name);
  }
  s->val = sm__strndup(c, v->s ? v->s : "", v->n);
  s->ln = NULL;
  if (v->n > 0 && v->ln != NULL) {
    for (size_t i = 1; i < v->n; i++)
      if (v->ln[i] != v->ln[0])
        multi = 1;
    if (multi) {
      int *ln = sm_arena_alloc(&c->arena, v->n * sizeof(int));
      if (ln != NULL) {
        memcpy(ln, v->ln, v->n * sizeof(int));
        s->ln = ln;
      }
    }
  }
  s->multiline = multi;
  s->array = array;
  s->line = line;
  if (exported)
    s->exported = 1;
}

static void var_set_str(sh *h, const char *name, const char *val, int line,
                        int exported) {
  lstr l;
  ls_init(&l);
  ls_puts(&l, val, line);
  var_set(h, name, &l, line, exported);
  ls_free(&l);
}

/* A value that cannot be known. */
static void var_set_unknown(sh *h, const char *name, int line) {
  char u[2] = {UNK, 0};
  var_set_str(h, name, u, line, 0);
}

/* ==== Nodes ==== */

static const char *span(sh *h, TSNode n, size_t *len) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  *len = b - a;
  return h->src + a;
}

static char *dup_span(sh *h, TSNode n) {
  size_t len;
  const char *s = span(h, n, &len);
  return sm__strndup(h->c, s, len > 4096 ? 4096 : len);
}

static int step(sh *h) {
  return ++h->steps < MAX_SH_STEPS && !h->exited && !h->c->stopped;
}

/* ==== Expansion ==== */

/* The fields a word expands to. */
typedef struct fields {
  lstr f[MAX_FIELDS]; /* fields */
  int n;              /* count (the last one may be open) */
  int open;           /* the last field continues */
} fields;

static lstr *cur_field(fields *fl) {
  if (!fl->open || fl->n == 0) {
    if (fl->n >= MAX_FIELDS)
      return NULL;
    ls_init(&fl->f[fl->n++]);
    fl->open = 1;
  }
  return &fl->f[fl->n - 1];
}

static void fields_free(fields *fl) {
  for (int i = 0; i < fl->n; i++)
    ls_free(&fl->f[i]);
  fl->n = 0;
  fl->open = 0;
}

/* Appends text to the fields: split at blanks unless quoted. */
static void emit(fields *fl, const char *s, const int *ln, size_t n, int line,
                 int quoted) {
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    int l = ln ? ln[i] : line;
    if (!quoted && (ch == ' ' || ch == '\t' || ch == '\n')) {
      fl->open = 0;
      continue;
    }
    {
      lstr *f = cur_field(fl);
      if (f == NULL || ls_putc(f, ch, l) != 0)
        return;
    }
  }
  if (quoted && n == 0)
    cur_field(fl); /* "" is a field of its own */
}

/* An expansion the interpreter cannot know: one unknown field. */
static void emit_unknown(fields *fl, int line) {
  char u[2] = {UNK, 0};
  emit(fl, u, NULL, 1, line, 1);
}

static void expand(sh *h, TSNode n, fields *fl, int quoted, int depth);

/* The positional arguments from index `from` (1-based), count `cnt`
 * (-1: all), as separate fields. */
static void emit_positional(sh *h, fields *fl, int from, int cnt, int line,
                            int quoted) {
  int k = 0;
  (void)quoted;
  for (int i = from - 1; i < h->argc && (cnt < 0 || k < cnt); i++, k++) {
    /* An argument of the command keeps "command" as its evidence. */
    int l = (h->argv_ev == NULL || strcmp(h->argv_ev[i], "command") == 0)
                ? -1
                : line;
    fl->open = 0;
    emit(fl, h->argv[i], NULL, strlen(h->argv[i]), l, 1);
    fl->open = 0;
  }
}

/* A positional index or count as the shell writes it ($12, ${@:3:2}):
 * the leading digits, clamped to [0, 1 << 20] (no overflow on $99999999999). */
static int posnum(const char *s) {
  long v = 0;
  while (isdigit((unsigned char)*s)) {
    if (v < (1L << 20))
      v = v * 10 + (*s - '0');
    s++;
  }
  return v > (1L << 20) ? (1 << 20) : (int)v;
}

/* The value of a parameter: a variable, $1, $#, $0... NULL when unset. */
static const char *param_value(sh *h, const char *name, const int **ln,
                               int *multi) {
  static const char unk[2] = {UNK, 0};
  svar *v;
  *ln = NULL;
  *multi = 0;
  if (isdigit((unsigned char)name[0])) {
    int k = posnum(name);
    if (k == 0)
      return h->arg0;
    return k <= h->argc ? h->argv[k - 1] : NULL;
  }
  if (strcmp(name, "#") == 0)
    return sm__printf(h->c, "%d", h->argc);
  if (strcmp(name, "?") == 0)
    return "0";
  if (strcmp(name, "$") == 0 || strcmp(name, "!") == 0 ||
      strcmp(name, "RANDOM") == 0 || strcmp(name, "PWD") == 0 ||
      strcmp(name, "HOSTNAME") == 0)
    return unk;
  if ((v = var_find(h, name)) != NULL) {
    *ln = v->ln;
    *multi = v->multiline;
    if (v->array) {
      /* $A is the first element. */
      const char *el = v->val[1] == SEP ? v->val + 2 : v->val + 1;
      const char *e = strchr(el, SEP);
      *ln = v->ln ? v->ln + (el - v->val) : NULL;
      return e ? sm__strndup(h->c, el, (size_t)(e - el)) : el;
    }
    return v->val;
  }
  {
    const char *e = sm__env(h->c, name);
    if (e != NULL)
      return e;
  }
  return NULL;
}

/* Removes the shortest / longest match of a glob pattern at the start
 * (#, ##) or end (%, %%) of s. */
static const char *trim(sh *h, const char *s, const char *pat, int end,
                        int longest) {
  size_t n = strlen(s);
  char *tmp = sm__strdup(h->c, s);
  if (tmp == NULL)
    return s;
  if (!end) {
    for (size_t k = 0; k <= n; k++) {
      size_t cut = longest ? n - k : k;
      char save = tmp[cut];
      tmp[cut] = '\0';
      if (fnmatch(pat, tmp, 0) == 0)
        return s + cut;
      tmp[cut] = save;
    }
  } else {
    for (size_t k = 0; k <= n; k++) {
      size_t cut = longest ? k : n - k;
      if (fnmatch(pat, s + cut, 0) == 0)
        return sm__strndup(h->c, s, cut);
    }
  }
  return s;
}

/* Integer arithmetic over text with variables: + - * / % ( ). */
static int arith(sh *h, const char **p, long long *out, int depth);

static int arith_atom(sh *h, const char **p, long long *out, int depth) {
  while (isspace((unsigned char)**p))
    (*p)++;
  if (depth > 32)
    return -1;
  if (**p == '(') {
    (*p)++;
    if (arith(h, p, out, depth + 1) != 0)
      return -1;
    while (isspace((unsigned char)**p))
      (*p)++;
    if (**p != ')')
      return -1;
    (*p)++;
    return 0;
  }
  if (**p == '-' || **p == '+') {
    int neg = **p == '-';
    (*p)++;
    if (arith_atom(h, p, out, depth + 1) != 0)
      return -1;
    if (neg)
      *out = -*out;
    return 0;
  }
  if (isdigit((unsigned char)**p)) {
    *out = strtoll(*p, (char **)p, 10);
    return 0;
  }
  if (**p == '$')
    (*p)++;
  if (**p == '{')
    (*p)++;
  if (isalpha((unsigned char)**p) || **p == '_' ||
      isdigit((unsigned char)**p)) {
    char name[64];
    size_t n = 0;
    const char *val;
    const int *ln;
    int multi;
    while ((isalnum((unsigned char)**p) || **p == '_') && n + 1 < sizeof(name))
      name[n++] = *(*p)++;
    name[n] = '\0';
    if (**p == '}')
      (*p)++;
    val = param_value(h, name, &ln, &multi);
    if (val == NULL || val[0] == '\0') {
      *out = 0;
      return 0;
    }
    {
      char *end;
      *out = strtoll(val, &end, 10);
      if (*end != '\0' || strchr(val, UNK))
        return -1;
    }
    return 0;
  }
  return -1;
}

/* One level of binary operators (ops) over operands read by next, left to
 * right.  Returns 0 and the value, or -1. */
static int arith_level(sh *h, const char **p, long long *out, int depth,
                       const char *ops,
                       int (*next)(sh *, const char **, long long *, int)) {
  if (next(h, p, out, depth) != 0)
    return -1;
  for (;;) {
    long long r;
    char op;
    while (isspace((unsigned char)**p))
      (*p)++;
    op = **p;
    if (op == '\0' || strchr(ops, op) == NULL)
      return 0;
    (*p)++;
    if (next(h, p, &r, depth) != 0 || sm__sh_arith_op(op, out, r) != 0)
      return -1;
  }
}

static int arith_term(sh *h, const char **p, long long *out, int depth) {
  return arith_level(h, p, out, depth, "*/%", arith_atom);
}

static int arith(sh *h, const char **p, long long *out, int depth) {
  return arith_level(h, p, out, depth, "+-", arith_term);
}

/* Expands the text of an argument-like word (a default value) into
 * fields, re-parsing nothing: $NAME and ${NAME} only. */
static void expand_text(sh *h, const char *t, size_t n, int line, fields *fl,
                        int quoted) {
  size_t i = 0;
  while (i < n) {
    if (t[i] == '$' && i + 1 < n &&
        (isalpha((unsigned char)t[i + 1]) || t[i + 1] == '_' ||
         t[i + 1] == '{' || isdigit((unsigned char)t[i + 1]))) {
      char name[128];
      size_t k = 0, j = i + 1;
      int brace = t[j] == '{';
      const char *v;
      const int *ln;
      int multi;
      if (brace)
        j++;
      while (j < n && (isalnum((unsigned char)t[j]) || t[j] == '_') &&
             k + 1 < sizeof(name))
        name[k++] = t[j++];
      name[k] = '\0';
      if (brace) {
        if (j < n && t[j] == '}')
          j++;
        else {
          /* Something more complex: unknown. */
          emit_unknown(fl, line);
          i = n;
          break;
        }
      }
      v = param_value(h, name, &ln, &multi);
      if (v)
        emit(fl, v, multi ? ln : NULL, strlen(v), line, quoted);
      i = j;
    } else if (t[i] == '"' || t[i] == '\'') {
      i++;
    } else {
      emit(fl, t + i, NULL, 1, line, 1);
      i++;
    }
  }
}

/* ${A[@]}, ${A[*]}, ${#A[@]}, ${A[2]}: arrays.  p is at the '['. */
static void expand_array(sh *h, fields *fl, const char *name, const char *p,
                         const char *e, int len_op, int quoted, int line) {
  const char *rb = memchr(p, ']', (size_t)(e - p));
  svar *av = var_find(h, name);
  char idx[32];
  /* Elements: each one follows a SEP after the leading marker; a scalar
   * is an array of one element. */
  int count = 0, want = -1, all;
  if (rb == NULL || (size_t)(rb - p - 1) >= sizeof(idx)) {
    emit_unknown(fl, line);
    return;
  }
  snprintf(idx, sizeof(idx), "%.*s", (int)(rb - p - 1), p + 1);
  if (av == NULL) {
    if (len_op)
      emit(fl, "0", NULL, 1, line, 1);
    else if (quoted && strcmp(idx, "@") != 0)
      cur_field(fl);
    return;
  }
  all = idx[0] == '@' || idx[0] == '*';
  if (!all) {
    char *end;
    want = (int)strtol(idx, &end, 10);
    if (*end != '\0' || want < 0) {
      emit_unknown(fl, line);
      return;
    }
  }
  for (const char *at = av->array ? av->val + 1 : av->val;
       av->array ? *at == SEP : count == 0; count++) {
    const char *el = av->array ? at + 1 : at;
    const char *nx = strchr(el, SEP);
    size_t en = nx ? (size_t)(nx - el) : strlen(el);
    if (!len_op && (all || count == want)) {
      if (all) {
        fl->open = 0;
        if (quoted)
          cur_field(fl);
      }
      emit(fl, el, av->multiline && av->ln ? av->ln + (el - av->val) : NULL, en,
           line, quoted);
      if (all)
        fl->open = 0;
    }
    at = el + en;
  }
  if (len_op) {
    char nb[32];
    snprintf(nb, sizeof(nb), "%d", all ? count : 0);
    emit(fl, nb, NULL, strlen(nb), line, 1);
  }
}

/* The value of a parameter being expanded with an operator. */
typedef struct pval {
  const char *name; /* the parameter */
  const char *val;  /* its value, or NULL when unset */
  const int *ln;    /* line of each byte when multi */
  int multi;        /* val spans lines */
  int line;         /* line of the expansion */
  int quoted;       /* inside double quotes */
} pval;

/* ${X:offset:length}; p is at the offset. */
static void expand_substring(fields *fl, const pval *v, const char *p,
                             const char *e) {
  long off = strtol(p, NULL, 10), cnt = -1;
  const char *c2 = memchr(p, ':', (size_t)(e - p));
  size_t vl = v->val ? strlen(v->val) : 0;
  if (c2 != NULL)
    cnt = strtol(c2 + 1, NULL, 10);
  if (off < 0)
    off += (long)vl;
  if (v->val == NULL || off < 0 || (size_t)off > vl)
    return;
  if (cnt < 0 || (size_t)(off + cnt) > vl)
    cnt = (long)(vl - (size_t)off);
  emit(fl, v->val + off, NULL, (size_t)cnt, v->line, v->quoted);
}

/* ${X-w} ${X:-w} ${X=w} ${X:=w} ${X?w}: the word when X is unset (or
 * empty, with the colon); = also assigns it. */
static void expand_default(sh *h, fields *fl, const pval *v, char op, int colon,
                           const char *arg, size_t an) {
  int empty = v->val == NULL || (colon && v->val[0] == '\0');
  if (!empty) {
    emit(fl, v->val, v->multi ? v->ln : NULL, strlen(v->val), v->line,
         v->quoted);
    return;
  }
  expand_text(h, arg, an, v->line, fl, v->quoted);
  if (op == '=') {
    fields tmp;
    memset(&tmp, 0, sizeof(tmp));
    expand_text(h, arg, an, v->line, &tmp, 1);
    if (tmp.n > 0)
      var_set(h, v->name, &tmp.f[0], v->line, 0);
    fields_free(&tmp);
  }
}

/* ${X/a/b}, ${X//a/b}: plain text patterns. */
static void expand_replace(sh *h, fields *fl, const pval *v, const char *arg,
                           size_t an, const char *e) {
  int all = an > 0 && arg[0] == '/';
  const char *a = arg + all, *slash = memchr(a, '/', (size_t)(e - a));
  char *from =
      sm__strndup(h->c, a, slash ? (size_t)(slash - a) : (size_t)(e - a));
  const char *to =
      slash ? sm__strndup(h->c, slash + 1, (size_t)(e - slash - 1)) : "";
  sm_buf out;
  size_t fnl = from ? strlen(from) : 0;
  sm_buf_init(&out, MAX_TEXT);
  for (const char *q = v->val; *q;) {
    if (fnl > 0 && strncmp(q, from, fnl) == 0) {
      sm_buf_adds(&out, to);
      q += fnl;
      if (!all) {
        sm_buf_adds(&out, q);
        break;
      }
    } else {
      sm_buf_addc(&out, *q++);
    }
  }
  emit(fl, sm_buf_str(&out), NULL, out.len, v->line, v->quoted);
  sm_buf_release(&out);
}

/* The operator after a parameter's name (p at it, e at the closing
 * brace); 0 when the interpreter does not know it (or the value it
 * needs is unset). */
static int expand_op(sh *h, fields *fl, const pval *v, const char *p,
                     const char *e) {
  int colon = *p == ':';
  char op;
  const char *arg;
  size_t an;
  if (colon)
    p++;
  op = p < e ? *p : 0;
  arg = p + 1;
  an = (size_t)(e - arg);
  if (colon && (isdigit((unsigned char)op) || op == ' ')) {
    expand_substring(fl, v, p, e);
  } else if (op == '-' || op == '=' || op == '?') {
    expand_default(h, fl, v, op, colon, arg, an);
  } else if (op == '+') {
    if (v->val != NULL && !(colon && v->val[0] == '\0'))
      expand_text(h, arg, an, v->line, fl, v->quoted);
  } else if ((op == '#' || op == '%') && v->val != NULL) {
    int longest = an > 0 && arg[0] == op;
    char *pat = sm__strndup(h->c, arg + longest, an - (size_t)longest);
    const char *r = pat ? trim(h, v->val, pat, op == '%', longest) : v->val;
    emit(fl, r, NULL, strlen(r), v->line, v->quoted);
  } else if (op == '/' && v->val != NULL) {
    expand_replace(h, fl, v, arg, an, e);
  } else if ((op == '^' || op == ',') && v->val != NULL) {
    char *v2 = sm__strdup(h->c, v->val);
    for (char *q = v2; q && *q; q++)
      *q = (char)(op == '^' ? toupper((unsigned char)*q)
                            : tolower((unsigned char)*q));
    if (v2)
      emit(fl, v2, NULL, strlen(v2), v->line, v->quoted);
  } else {
    return 0;
  }
  return 1;
}

/* ${...}: the raw text is parsed here (operators are anonymous tokens in
 * the grammar). */
static void expand_param(sh *h, TSNode n, fields *fl, int quoted) {
  size_t len;
  const char *t = span(h, n, &len), *p, *e;
  char name[128];
  size_t k = 0;
  int line = line_of(n), len_op = 0, indirect = 0;
  pval v;
  if (len < 3 || t[0] != '$' || t[1] != '{' || t[len - 1] != '}') {
    emit_unknown(fl, line);
    return;
  }
  p = t + 2;
  e = t + len - 1;
  if (*p == '#' && p + 1 < e && p[1] != '}') {
    len_op = 1;
    p++;
  } else if (*p == '!') {
    indirect = 1;
    p++;
  }
  if (p < e && (*p == '@' || *p == '*' || *p == '#' || *p == '?' || *p == '$' ||
                *p == '!'))
    name[k++] = *p++;
  else
    while (p < e && (isalnum((unsigned char)*p) || *p == '_') &&
           k + 1 < sizeof(name))
      name[k++] = *p++;
  name[k] = '\0';
  if (p < e && *p == '[' && !indirect) {
    expand_array(h, fl, name, p, e, len_op, quoted, line);
    return;
  }
  if (strcmp(name, "@") == 0 || strcmp(name, "*") == 0) {
    /* ${@}, ${@:3}, ${@:2:1} */
    int from = 1, cnt = -1;
    if (p < e && *p == ':') {
      from = posnum(p + 1);
      if (from <= 0)
        from = 1;
      p = strchr(p + 1, ':');
      if (p != NULL && p < e)
        cnt = posnum(p + 1);
    }
    emit_positional(h, fl, from, cnt, line, quoted);
    return;
  }
  v.name = name;
  v.line = line;
  v.quoted = quoted;
  v.val = param_value(h, name, &v.ln, &v.multi);
  if (indirect && v.val != NULL)
    v.val = param_value(h, v.val, &v.ln, &v.multi);
  if (len_op) {
    char num[32];
    snprintf(num, sizeof(num), "%zu", v.val ? strlen(v.val) : 0);
    emit(fl, num, NULL, strlen(num), line, 1);
    return;
  }
  if (p >= e) {
    if (v.val)
      emit(fl, v.val, v.multi ? v.ln : NULL, strlen(v.val), line, quoted);
    return;
  }
  if (!expand_op(h, fl, &v, p, e))
    emit_unknown(fl, line);
}

/* Words of a command, expanded (for command substitution). */
static int expand_words(sh *h, TSNode cmd, const char ***out, int **lines);

/* The text of a here-document, with the line of each byte: expanded
 * unless its delimiter is quoted, backslash-newlines joined. */
static void heredoc_text(sh *h, TSNode redirect, lstr *out) {
  TSNode body = {0}, start = {0};
  uint32_t nc = ts_node_named_child_count(redirect), a, b;
  int raw;
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(redirect, i);
    if (is(k, "heredoc_body"))
      body = k;
    else if (is(k, "heredoc_start"))
      start = k;
  }
  if (ts_node_is_null(body))
    return;
  {
    size_t sl;
    const char *st = ts_node_is_null(start) ? "" : span(h, start, &sl);
    raw = st[0] == '\'' || st[0] == '"' || st[0] == '\\';
  }
  a = ts_node_start_byte(body);
  b = ts_node_end_byte(body);
  {
    fields *fl = sm_calloc(1, sizeof(*fl));
    uint32_t bc = ts_node_named_child_count(body), at = a;
    int line = line_of(body);
    if (fl == NULL)
      return;
    cur_field(fl);
    for (uint32_t i = 0; i <= bc; i++) {
      TSNode k = i < bc ? ts_node_named_child(body, i) : (TSNode){0};
      uint32_t ks = i < bc ? ts_node_start_byte(k) : b;
      if (i < bc && is(k, "heredoc_content"))
        continue;
      for (uint32_t q = at; q < ks && q < b; q++) {
        char ch = h->src[q];
        if (!raw && ch == '\\' && q + 1 < ks && h->src[q + 1] == '\n') {
          q++;
          line++;
          continue;
        }
        fl->open = 1;
        emit(fl, &ch, NULL, 1, line, 1);
        if (ch == '\n')
          line++;
      }
      if (i == bc)
        break;
      if (raw) {
        at = ks;
        continue;
      }
      fl->open = 1;
      expand(h, k, fl, 1, 1);
      at = ts_node_end_byte(k);
      line = (int)ts_node_end_point(k).row + 1;
    }
    for (int i = 0; i < fl->n; i++)
      for (size_t q = 0; q < fl->f[i].n; q++)
        ls_putc(out, fl->f[i].s[q], fl->f[i].ln[q]);
    fields_free(fl);
    sm_free(fl);
  }
}

/* $(...) and `...`: only pure commands are computed. */
static void expand_subst(sh *h, TSNode n, fields *fl, int quoted) {
  TSNode cmd = ts_node_named_child(n, 0);
  const char **w = NULL;
  int *wl = NULL, nw;
  int line = line_of(n);
  const char *r = NULL;
  char u[2] = {UNK, 0};
  if (is(cmd, "redirected_statement")) {
    /* $(cat <<EOF ... EOF): the document. */
    TSNode body = field(cmd, "body");
    uint32_t rc = ts_node_named_child_count(cmd);
    TSNode doc = {0};
    char *nm = NULL;
    for (uint32_t i = 0; i < rc; i++)
      if (is(ts_node_named_child(cmd, i), "heredoc_redirect"))
        doc = ts_node_named_child(cmd, i);
    if (is(body, "command") && !ts_node_is_null(field(body, "name")))
      nm = dup_span(h, field(body, "name"));
    if (!ts_node_is_null(doc) && nm != NULL && strcmp(nm, "cat") == 0 &&
        ts_node_named_child_count(body) == 1) {
      lstr t;
      ls_init(&t);
      heredoc_text(h, doc, &t);
      /* Trailing newlines go, as in any command substitution. */
      while (t.n > 0 && t.s[t.n - 1] == '\n')
        t.s[--t.n] = '\0';
      emit(fl, t.s ? t.s : "", t.ln, t.n, line, quoted);
      ls_free(&t);
      return;
    }
  }
  if (!is(cmd, "command")) {
    emit(fl, u, NULL, 1, line, 1);
    return;
  }
  nw = expand_words(h, cmd, &w, &wl);
  if (nw >= 1) {
    const char *b = strrchr(w[0], '/');
    b = b ? b + 1 : w[0];
    if (strcmp(b, "dirname") == 0 && nw == 2 && !strchr(w[1], UNK)) {
      const char *s = strrchr(w[1], '/');
      r = s ? sm__strndup(h->c, w[1], (size_t)(s - w[1])) : ".";
    } else if (strcmp(b, "basename") == 0 && nw >= 2 && !strchr(w[1], UNK)) {
      const char *s = strrchr(w[1], '/');
      r = s ? s + 1 : w[1];
      if (nw == 3) {
        size_t rl = strlen(r), sl = strlen(w[2]);
        if (sl < rl && strcmp(r + rl - sl, w[2]) == 0)
          r = sm__strndup(h->c, r, rl - sl);
      }
    } else if (strcmp(b, "pwd") == 0 && nw == 1) {
      r = h->dir[0] ? h->dir : ".";
    } else if ((strcmp(b, "realpath") == 0 || strcmp(b, "readlink") == 0) &&
               nw >= 2 && !strchr(w[nw - 1], UNK)) {
      r = w[nw - 1];
    } else if (strcmp(b, "echo") == 0) {
      sm_buf out;
      sm_buf_init(&out, MAX_TEXT);
      for (int i = 1; i < nw; i++) {
        if (i > 1)
          sm_buf_addc(&out, ' ');
        sm_buf_adds(&out, w[i]);
      }
      r = sm__strdup(h->c, sm_buf_str(&out));
      sm_buf_release(&out);
    }
  }
  if (r == NULL)
    r = u;
  emit(fl, r, NULL, strlen(r), line, quoted);
}

/* Literal text of a word or string part, with backslashes handled. */
static void emit_literal(sh *h, const char *t, size_t n, int line0, fields *fl,
                         int in_dq) {
  int line = line0;
  for (size_t i = 0; i < n; i++) {
    char ch = t[i];
    if (ch == '\\' && i + 1 < n) {
      char nx = t[i + 1];
      if (nx == '\n') {
        line++;
        i++;
        continue;
      }
      if (!in_dq || strchr("\"\\$`", nx)) {
        emit(fl, &t[i + 1], NULL, 1, line, 1);
        i++;
        continue;
      }
    }
    if (ch == '\n') {
      /* Newlines inside quotes are text; the line moves on. */
      emit(fl, "\n", NULL, 1, line, 1);
      line++;
      continue;
    }
    emit(fl, &ch, NULL, 1, line, 1);
  }
  (void)h;
}

/* The parts of a double-quoted string: literal text between the child
 * nodes, expansions in them. */
static void expand_string(sh *h, TSNode n, fields *fl, int depth) {
  uint32_t a = ts_node_start_byte(n) + 1, b = ts_node_end_byte(n);
  uint32_t nc = ts_node_named_child_count(n);
  int line = line_of(n);
  if (b > a)
    b--; /* closing quote */
  {
    /* "$@" with no arguments gives no word at all. */
    size_t len;
    const char *t = span(h, n, &len);
    if (!((len == 4 && strncmp(t, "\"$@\"", 4) == 0) ||
          (len > 5 && strncmp(t, "\"${@", 4) == 0 && t[len - 2] == '}') ||
          (len > 7 && strncmp(t, "\"${", 3) == 0 &&
           strncmp(t + len - 5, "[@]}\"", 5) == 0)))
      cur_field(fl);
  }
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(n, i);
    uint32_t ks = ts_node_start_byte(k), ke = ts_node_end_byte(k);
    if (is(k, "string_content"))
      continue;
    if (ks > a)
      emit_literal(h, h->src + a, ks - a, line, fl, 1);
    expand(h, k, fl, 1, depth + 1);
    a = ke;
    line = (int)ts_node_end_point(k).row + 1;
  }
  if (b > a) {
    /* The line of the text after the last child. */
    int l2 = line;
    emit_literal(h, h->src + a, b - a, l2, fl, 1);
  }
}

static void expand(sh *h, TSNode n, fields *fl, int quoted, int depth) {
  const char *t;
  size_t len;
  const char *s;
  int line;
  if (ts_node_is_null(n) || depth > 40)
    return;
  t = ts_node_type(n);
  line = line_of(n);
  if (strcmp(t, "word") == 0 || strcmp(t, "number") == 0 ||
      strcmp(t, "extglob_pattern") == 0 || strcmp(t, "regex") == 0) {
    if (strcmp(t, "number") == 0 && ts_node_named_child_count(n) > 0) {
      uint32_t nc = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < nc; i++)
        expand(h, ts_node_named_child(n, i), fl, quoted, depth + 1);
      return;
    }
    s = span(h, n, &len);
    emit_literal(h, s, len, line, fl, quoted);
    return;
  }
  if (strcmp(t, "raw_string") == 0) {
    s = span(h, n, &len);
    cur_field(fl);
    if (len >= 2) {
      int l = line;
      for (size_t i = 1; i + 1 < len; i++) {
        emit(fl, s + i, NULL, 1, l, 1);
        if (s[i] == '\n')
          l++;
      }
    }
    return;
  }
  if (strcmp(t, "ansi_c_string") == 0) {
    s = span(h, n, &len);
    cur_field(fl);
    for (size_t i = 2; i + 1 < len; i++) {
      char ch = s[i];
      if (ch == '\\' && i + 2 < len) {
        char e = s[++i];
        ch = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      emit(fl, &ch, NULL, 1, line, 1);
    }
    return;
  }
  if (strcmp(t, "string") == 0 || strcmp(t, "translated_string") == 0) {
    if (strcmp(t, "translated_string") == 0)
      n = ts_node_named_child(n, 0);
    expand_string(h, n, fl, depth);
    return;
  }
  if (strcmp(t, "concatenation") == 0) {
    uint32_t nc = ts_node_child_count(n);
    uint32_t at = ts_node_start_byte(n);
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_child(n, i);
      uint32_t ks = ts_node_start_byte(k);
      if (ks > at)
        emit_literal(h, h->src + at, ks - at, line, fl, quoted);
      if (ts_node_is_named(k))
        expand(h, k, fl, quoted, depth + 1);
      else {
        s = span(h, k, &len);
        emit_literal(h, s, len, line_of(k), fl, quoted);
      }
      at = ts_node_end_byte(k);
    }
    return;
  }
  if (strcmp(t, "simple_expansion") == 0) {
    TSNode v = ts_node_named_child(n, 0);
    char *name = ts_node_is_null(v) ? NULL : dup_span(h, v);
    const char *val;
    const int *ln;
    int multi;
    if (name == NULL) {
      emit(fl, "$", NULL, 1, line, 1);
      return;
    }
    if (strcmp(name, "@") == 0 || strcmp(name, "*") == 0) {
      emit_positional(h, fl, 1, -1, line, quoted);
      return;
    }
    val = param_value(h, name, &ln, &multi);
    if (val != NULL)
      emit(fl, val, multi ? ln : NULL, strlen(val), line, quoted);
    else if (quoted)
      cur_field(fl);
    return;
  }
  if (strcmp(t, "expansion") == 0) {
    expand_param(h, n, fl, quoted);
    return;
  }
  if (strcmp(t, "arithmetic_expansion") == 0) {
    size_t n2;
    const char *x = span(h, n, &n2), *p;
    char buf[512];
    long long v;
    if (n2 < 5 || n2 - 5 >= sizeof(buf)) {
      emit_unknown(fl, line);
      return;
    }
    memcpy(buf, x + 3, n2 - 5);
    buf[n2 - 5] = '\0';
    p = buf;
    if (arith(h, &p, &v, 0) == 0) {
      char num[32];
      snprintf(num, sizeof(num), "%lld", v);
      emit(fl, num, NULL, strlen(num), line, quoted);
    } else {
      emit_unknown(fl, line);
    }
    return;
  }
  if (strcmp(t, "command_substitution") == 0) {
    expand_subst(h, n, fl, quoted);
    return;
  }
  if (strcmp(t, "process_substitution") == 0 || strcmp(t, "array") == 0 ||
      strcmp(t, "brace_expression") == 0) {
    emit_unknown(fl, line);
    return;
  }
  /* Anything else: its text. */
  s = span(h, n, &len);
  emit_literal(h, s, len, line, fl, quoted);
}

/* Expands one argument node into a fresh field list. */
static void expand_arg(sh *h, TSNode n, fields *fl) {
  fl->open = 0;
  expand(h, n, fl, 0, 0);
  fl->open = 0;
}

static int expand_words(sh *h, TSNode cmd, const char ***out, int **lines) {
  fields *fl = sm_calloc(1, sizeof(*fl));
  const char **w;
  int *wl, n = 0;
  uint32_t nc = ts_node_named_child_count(cmd);
  *out = NULL;
  *lines = NULL;
  if (fl == NULL)
    return 0;
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(cmd, i);
    if (is(k, "variable_assignment") || is(k, "file_redirect") ||
        is(k, "herestring_redirect") || is(k, "comment"))
      continue;
    if (is(k, "command_name"))
      k = ts_node_named_child(k, 0);
    expand_arg(h, k, fl);
  }
  w = sm_arena_calloc(&h->c->arena, (size_t)fl->n + 1, sizeof(*w));
  wl = sm_arena_calloc(&h->c->arena, (size_t)fl->n + 1, sizeof(*wl));
  if (w != NULL && wl != NULL)
    for (int i = 0; i < fl->n; i++) {
      w[n] = sm__strndup(h->c, fl->f[i].s ? fl->f[i].s : "", fl->f[i].n);
      wl[n] = fl->f[i].n > 0 ? fl->f[i].ln[0] : line_of(cmd);
      if (w[n] != NULL)
        n++;
    }
  fields_free(fl);
  sm_free(fl);
  *out = w;
  *lines = wl;
  return n;
}

/* ==== Conditions ==== */

static int run_stmt(sh *h, TSNode s);

/* One word of a test, expanded to a string (NULL: unknown). */
static const char *test_word(sh *h, TSNode n) {
  fields *fl = sm_calloc(1, sizeof(*fl));
  const char *r = NULL;
  if (fl == NULL)
    return NULL;
  expand(h, n, fl, 1, 0);
  if (fl->n <= 1) {
    r = fl->n == 1 ? sm__strndup(h->c, fl->f[0].s ? fl->f[0].s : "", fl->f[0].n)
                   : "";
    if (r && strchr(r, UNK))
      r = NULL;
  }
  fields_free(fl);
  sm_free(fl);
  return r;
}

static int num_of(const char *s, long long *v) {
  char *end;
  if (s == NULL || *s == '\0')
    return -1;
  *v = strtoll(s, &end, 10);
  return *end == '\0' ? 0 : -1;
}

/* 1 true, 0 false, -1 unknown. */
static int test_expr(sh *h, TSNode n, int depth) {
  const char *t;
  if (ts_node_is_null(n) || depth > 20)
    return -1;
  t = ts_node_type(n);
  if (strcmp(t, "parenthesized_expression") == 0)
    return test_expr(h, ts_node_named_child(n, 0), depth + 1);
  if (strcmp(t, "binary_expression") == 0) {
    TSNode op = field(n, "operator");
    size_t ol;
    const char *o;
    const char *a, *b;
    long long x, y;
    if (ts_node_is_null(op))
      return -1;
    o = span(h, op, &ol);
    if ((ol == 2 && strncmp(o, "&&", 2) == 0) ||
        (ol == 2 && strncmp(o, "||", 2) == 0) ||
        (ol == 2 && strncmp(o, "-a", 2) == 0) ||
        (ol == 2 && strncmp(o, "-o", 2) == 0)) {
      int l = test_expr(h, field(n, "left"), depth + 1);
      int r = test_expr(h, field(n, "right"), depth + 1);
      int and = o[1] == '&' || o[1] == 'a';
      if (and)
        return (l == 0 || r == 0) ? 0 : (l < 0 || r < 0) ? -1 : 1;
      return (l == 1 || r == 1) ? 1 : (l < 0 || r < 0) ? -1 : 0;
    }
    a = test_word(h, field(n, "left"));
    b = test_word(h, field(n, "right"));
    if (a == NULL || b == NULL)
      return -1;
    if ((ol == 2 && strncmp(o, "==", 2) == 0) || (ol == 1 && o[0] == '='))
      return fnmatch(b, a, 0) == 0;
    if (ol == 2 && strncmp(o, "!=", 2) == 0)
      return fnmatch(b, a, 0) != 0;
    if (ol == 1 && (o[0] == '<' || o[0] == '>'))
      return o[0] == '<' ? strcmp(a, b) < 0 : strcmp(a, b) > 0;
    if (ol == 3 && o[0] == '-') {
      if (num_of(a, &x) != 0 || num_of(b, &y) != 0)
        return -1;
      if (strncmp(o, "-eq", 3) == 0)
        return x == y;
      if (strncmp(o, "-ne", 3) == 0)
        return x != y;
      if (strncmp(o, "-lt", 3) == 0)
        return x < y;
      if (strncmp(o, "-le", 3) == 0)
        return x <= y;
      if (strncmp(o, "-gt", 3) == 0)
        return x > y;
      if (strncmp(o, "-ge", 3) == 0)
        return x >= y;
    }
    return -1;
  }
  if (strcmp(t, "unary_expression") == 0) {
    TSNode op = field(n, "operator");
    size_t ol;
    const char *o = ts_node_is_null(op) ? "" : span(h, op, &ol);
    TSNode arg = ts_node_named_child(n, ts_node_named_child_count(n) - 1);
    const char *a;
    if (ts_node_is_null(op))
      return -1;
    if (o[0] == '!') {
      int r = test_expr(h, arg, depth + 1);
      return r < 0 ? -1 : !r;
    }
    a = test_word(h, arg);
    if (a == NULL)
      return -1;
    if (strncmp(o, "-z", 2) == 0)
      return a[0] == '\0';
    if (strncmp(o, "-n", 2) == 0)
      return a[0] != '\0';
    if (strncmp(o, "-f", 2) == 0 || strncmp(o, "-d", 2) == 0 ||
        strncmp(o, "-e", 2) == 0) {
      const char *p = sm__repo_join(h->c, h->dir, a);
      if (p == NULL)
        return -1; /* outside the repository: cannot know */
      if (o[1] == 'f')
        return sm__fs_is_file(h->c, p);
      if (o[1] == 'd')
        return sm__fs_is_dir(h->c, p);
      return sm__repo_exists(h->c, p);
    }
    return -1;
  }
  if (strcmp(t, "word") == 0 || strcmp(t, "string") == 0 ||
      strcmp(t, "simple_expansion") == 0 || strcmp(t, "expansion") == 0) {
    const char *a = test_word(h, n);
    return a == NULL ? -1 : a[0] != '\0';
  }
  return -1;
}

/* The truth of a condition statement. */
static int condition(sh *h, TSNode n, int depth) {
  const char *t;
  if (ts_node_is_null(n) || depth > 20)
    return -1;
  t = ts_node_type(n);
  if (strcmp(t, "test_command") == 0) {
    TSNode e = ts_node_named_child(n, 0);
    return test_expr(h, e, depth + 1);
  }
  if (strcmp(t, "negated_command") == 0) {
    int r = condition(h, ts_node_named_child(n, 0), depth + 1);
    return r < 0 ? -1 : !r;
  }
  if (strcmp(t, "list") == 0) {
    uint32_t nc = ts_node_child_count(n);
    int acc = -2, and = 1;
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_child(n, i);
      if (!ts_node_is_named(k)) {
        size_t ol;
        const char *o = span(h, k, &ol);
        and = !(ol == 2 && o[0] == '|');
        continue;
      }
      {
        int r = condition(h, k, depth + 1);
        if (acc == -2)
          acc = r;
        else if (and)
          acc = (acc == 0 || r == 0) ? 0 : (acc < 0 || r < 0) ? -1 : 1;
        else
          acc = (acc == 1 || r == 1) ? 1 : (acc < 0 || r < 0) ? -1 : 0;
      }
    }
    return acc == -2 ? -1 : acc;
  }
  if (strcmp(t, "command") == 0) {
    TSNode nm = field(n, "name");
    char *w = ts_node_is_null(nm) ? NULL : dup_span(h, nm);
    if (w && (strcmp(w, "true") == 0 || strcmp(w, ":") == 0))
      return 1;
    if (w && strcmp(w, "false") == 0)
      return 0;
    if (w && (strcmp(w, "[") == 0 || strcmp(w, "test") == 0))
      return -1;
    return -1;
  }
  if (strcmp(t, "redirected_statement") == 0)
    return condition(h, field(n, "body"), depth + 1);
  return -1;
}

/* ==== Branches that may or may not run ==== */

typedef struct snap {
  svar *vars; /* copy of the variables */
  int n;      /* count */
  const char *dir;
} snap;

static int snap_take(sh *h, snap *s) {
  s->vars = sm_calloc((size_t)h->nvars + 1, sizeof(svar));
  if (s->vars == NULL)
    return -1;
  memcpy(s->vars, h->vars, (size_t)h->nvars * sizeof(svar));
  s->n = h->nvars;
  s->dir = h->dir;
  return 0;
}

static void snap_restore(sh *h, const snap *s) {
  memcpy(h->vars, s->vars, (size_t)s->n * sizeof(svar));
  h->nvars = s->n;
  h->dir = s->dir;
}

/* After two ways through a branch (a and b), variables they disagree on
 * become unknown. */
static void snap_join(sh *h, const snap *a, const snap *b) {
  snap_restore(h, a);
  for (int i = 0; i < b->n; i++) {
    svar *v = var_find(h, b->vars[i].name);
    if (v == NULL)
      var_set_unknown(h, b->vars[i].name, b->vars[i].line);
    else if (strcmp(v->val, b->vars[i].val) != 0)
      var_set_unknown(h, v->name, v->line);
  }
  for (int i = 0; i < a->n; i++) {
    int found = 0;
    for (int j = 0; j < b->n && !found; j++)
      found = strcmp(a->vars[i].name, b->vars[j].name) == 0;
    if (!found)
      var_set_unknown(h, a->vars[i].name, a->vars[i].line);
  }
  if (a->dir != b->dir && strcmp(a->dir, b->dir) != 0)
    h->dir = a->dir;
}

/* Runs `yes` (and `no`, which may be null) as the two ways of an
 * undecided branch. */
static void run_both(sh *h, TSNode yes, TSNode no, int (*run)(sh *, TSNode)) {
  snap s0, sa, sb;
  int ex;
  if (snap_take(h, &s0) != 0)
    return;
  h->maybe++;
  run(h, yes);
  ex = h->exited;
  h->exited = 0;
  if (snap_take(h, &sa) != 0) {
    h->maybe--;
    sm_free(s0.vars);
    return;
  }
  snap_restore(h, &s0);
  if (!ts_node_is_null(no))
    run(h, no);
  h->exited = ex && h->exited;
  h->maybe--;
  if (snap_take(h, &sb) == 0) {
    snap_join(h, &sa, &sb);
    sm_free(sb.vars);
  }
  sm_free(sa.vars);
  sm_free(s0.vars);
}

/* ==== Commands ==== */

static int run_block(sh *h, TSNode n);

/* Every named child statement of n, in order. */
static int run_children(sh *h, TSNode n) {
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (!ts_node_is_named(k) || is(k, "comment"))
        continue;
      run_stmt(h, k);
      if (h->exited)
        break;
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return 0;
}

static int run_block(sh *h, TSNode n) {
  if (ts_node_is_null(n))
    return 0;
  if (is(n, "do_group") || is(n, "compound_statement") ||
      is(n, "else_clause") || is(n, "program"))
    return run_children(h, n);
  return run_stmt(h, n);
}

/* The current value of a variable into l with the line of each byte
 * (appends: X+=...). */
static void ls_var(lstr *l, const svar *v) {
  for (size_t k = 0; v->val[k]; k++)
    if (ls_putc(l, v->val[k], v->ln ? v->ln[k] : v->line) != 0)
      return;
}

/* An assignment node: NAME=value, NAME+=value, NAME=(a b), NAME+=(c). */
static void assignment(sh *h, TSNode n, int exported) {
  TSNode nm = field(n, "name"), val = field(n, "value");
  char *name;
  fields *fl;
  lstr joined;
  int append;
  svar *old;
  if (ts_node_is_null(nm))
    return;
  if (is(nm, "subscript")) {
    /* A[i]=v: the array is no longer what it was. */
    TSNode an = field(nm, "name");
    char *aname = ts_node_is_null(an) ? NULL : dup_span(h, an);
    if (aname != NULL && var_find(h, aname) != NULL)
      var_set_unknown(h, aname, line_of(n));
    return;
  }
  name = dup_span(h, nm);
  if (name == NULL)
    return;
  append = h->src[ts_node_end_byte(nm)] == '+';
  old = append ? var_find(h, name) : NULL;
  if (ts_node_is_null(val)) {
    if (old == NULL)
      var_set_str(h, name, "", line_of(n), exported);
    return;
  }
  fl = sm_calloc(1, sizeof(*fl));
  if (fl == NULL)
    return;
  ls_init(&joined);
  if (is(val, "array")) {
    /* Each word of the list is an element (unquoted words split), kept
     * with its line; the value is SEP elem SEP elem ... */
    uint32_t nc = ts_node_named_child_count(val);
    if (old != NULL && old->array) {
      ls_var(&joined, old);
    } else {
      ls_putc(&joined, SEP, line_of(n));
      if (old != NULL) {
        ls_putc(&joined, SEP, old->line);
        ls_var(&joined, old);
      }
    }
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(val, i);
      if (is(k, "comment"))
        continue;
      expand_arg(h, k, fl);
      for (int j = 0; j < fl->n; j++) {
        ls_putc(&joined, SEP, line_of(k));
        for (size_t q = 0; q < fl->f[j].n; q++)
          ls_putc(&joined, fl->f[j].s[q], fl->f[j].ln[q]);
      }
      fields_free(fl);
    }
  } else {
    /* An assignment is not split into words. */
    expand(h, val, fl, 1, 0);
    if (old != NULL)
      ls_var(&joined, old);
    for (int i = 0; i < fl->n; i++)
      for (size_t k = 0; k < fl->f[i].n; k++)
        ls_putc(&joined, fl->f[i].s[k], fl->f[i].ln[k]);
  }
  var_set(h, name, &joined, line_of(n), exported);
  ls_free(&joined);
  fields_free(fl);
  sm_free(fl);
}

static void declaration(sh *h, TSNode n) {
  char *kw = NULL;
  uint32_t nc = ts_node_child_count(n);
  int exported;
  {
    TSNode first = ts_node_child(n, 0);
    kw = dup_span(h, first);
  }
  exported = kw && strcmp(kw, "export") == 0;
  for (uint32_t i = 1; i < nc; i++) {
    TSNode k = ts_node_child(n, i);
    if (!ts_node_is_named(k))
      continue;
    if (is(k, "variable_assignment")) {
      assignment(h, k, exported);
    } else if (is(k, "variable_name")) {
      char *name = dup_span(h, k);
      svar *v = name ? var_find(h, name) : NULL;
      if (v != NULL && exported)
        v->exported = 1;
      else if (v == NULL && name)
        var_set_str(h, name, "", line_of(k), exported);
    } else if (is(k, "word") && span(h, k, &(size_t){0})[0] == '-') {
      continue; /* declare -a, export -n */
    } else {
      /* export "$KEY"="$VALUE" */
      fields fl0, *fl = sm_calloc(1, sizeof(*fl));
      (void)fl0;
      if (fl == NULL)
        continue;
      expand(h, k, fl, 1, 0);
      for (int j = 0; j < fl->n; j++) {
        const char *s = fl->f[j].s ? fl->f[j].s : "";
        const char *eq = strchr(s, '=');
        if (eq != NULL && eq != s && !strchr(s, UNK)) {
          char *name = sm__strndup(h->c, s, (size_t)(eq - s));
          lstr v;
          ls_init(&v);
          for (size_t q = (size_t)(eq - s) + 1; q < fl->f[j].n; q++)
            ls_putc(&v, fl->f[j].s[q], fl->f[j].ln[q]);
          if (name)
            var_set(h, name, &v, line_of(k), exported);
          ls_free(&v);
        }
      }
      fields_free(fl);
      sm_free(fl);
    }
  }
}

static void sh_file(sm__ctx *c, const char *rel, const char *text, size_t len,
                    const char *const *args, int nargs, const char *dir,
                    int depth, sh *parent);

/* The Kaldi-style option parser: --name value / --name=value set $name
 * for variables the script defined; the rest stay positional. */
static void parse_options(sh *h) {
  int i = 0, k = 0;
  const char **rest =
      sm_arena_calloc(&h->c->arena, (size_t)h->argc + 1, sizeof(*rest));
  const char **rest_ev =
      sm_arena_calloc(&h->c->arena, (size_t)h->argc + 1, sizeof(*rest_ev));
  if (rest == NULL || rest_ev == NULL)
    return;
  while (i < h->argc) {
    const char *a = h->argv[i];
    if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
      char name[128];
      const char *eq = strchr(a, '=');
      size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      const char *val = NULL;
      if (n >= sizeof(name))
        n = sizeof(name) - 1;
      for (size_t j = 0; j < n; j++)
        name[j] = a[2 + j] == '-' ? '_' : a[2 + j];
      name[n] = '\0';
      if (var_find(h, name) != NULL) {
        if (eq)
          val = eq + 1;
        else if (i + 1 < h->argc)
          val = h->argv[++i];
        if (val != NULL)
          var_set_str(h, name, val, -1, 0);
        i++;
        continue;
      }
    }
    rest[k] = a;
    rest_ev[k] = h->argv_ev ? h->argv_ev[i] : "command";
    k++;
    i++;
  }
  h->argv = rest;
  h->argv_ev = rest_ev;
  h->argc = k;
}

/* source FILE: the file runs in this shell. */
static void source_file(sh *h, const char *word, const char *const *args,
                        int nargs) {
  const char *p = sm__repo_join(h->c, h->dir, word), *text, *base;
  size_t len;
  base = strrchr(word, '/');
  base = base ? base + 1 : word;
  if (strcmp(base, "parse_options.sh") == 0) {
    parse_options(h);
    return;
  }
  if (p == NULL || !sm__fs_is_file(h->c, p) || h->depth >= MAX_SH_DEPTH)
    return;
  if (sm__src_text(h->c, p, &text, &len) != 0)
    return;
  {
    const char *save_rel = h->rel, *save_src = h->src;
    const char **sv = h->argv, **sve = h->argv_ev;
    int sc = h->argc;
    if (nargs > 0) {
      h->argv = (const char **)args;
      h->argv_ev = NULL;
      h->argc = nargs;
    }
    h->depth++;
    sh_file(h->c, p, text, len, NULL, 0, h->dir, h->depth, h);
    h->depth--;
    h->rel = save_rel;
    h->src = save_src;
    if (nargs > 0) {
      h->argv = sv;
      h->argv_ev = sve;
      h->argc = sc;
    }
  }
}

static void call_function(sh *h, sfunc *fn, const char **args,
                          const char **args_ev, int nargs) {
  const char **sv = h->argv, **sve = h->argv_ev;
  const char *save_rel = h->rel, *save_src = h->src;
  int sc = h->argc;
  if (h->depth >= MAX_SH_DEPTH)
    return;
  h->argv = args;
  h->argv_ev = args_ev;
  h->argc = nargs;
  h->rel = fn->rel;
  h->src = fn->src;
  h->depth++;
  run_block(h, fn->body);
  h->depth--;
  h->exited = 0; /* `return` ends only the function */
  h->argv = sv;
  h->argv_ev = sve;
  h->argc = sc;
  h->rel = save_rel;
  h->src = save_src;
}

/* Is w a shell keyword or builtin that is never the launch? */
static int plain_builtin(const char *b) {
  static const char *const names[] = {
      "echo",     "printf", "mkdir",    "rm",
      "cp",       "mv",     "ln",       "cat",
      "touch",    "chmod",  "test",     "[",
      "true",     "false",  ":",        "wait",
      "sleep",    "trap",   "ulimit",   "umask",
      "module",   "conda",  "pip",      "pip3",
      "git",      "wget",   "curl",     "tar",
      "unzip",    "grep",   "sed",      "awk",
      "tee",      "date",   "hostname", "sort",
      "head",     "tail",   "ls",       "find",
      "xargs",    "kill",   "pkill",    "return",
      "eval",     "alias",  "unset",    "nvidia-smi",
      "scontrol", "squeue", "seq",      "wc",
      "which",    "type",   "command",  "source_if_exists",
      NULL};
  for (int i = 0; names[i]; i++)
    if (strcmp(b, names[i]) == 0)
      return 1;
  return 0;
}

static void candidate(sh *h, const char **w, const char **ev, int n) {
  int score;
  cand *b = &h->best;
  if (n == 0)
    return;
  score = sm__launch_score(w, n);
  if (h->maybe)
    score -= 1; /* a branch that may not run */
  if (h->have_best && score <= b->score)
    return;
  b->w = sm_arena_calloc(&h->c->arena, (size_t)n + 1, sizeof(*b->w));
  b->ev = sm_arena_calloc(&h->c->arena, (size_t)n + 1, sizeof(*b->ev));
  if (b->w == NULL || b->ev == NULL)
    return;
  memcpy(b->w, w, (size_t)n * sizeof(*w));
  memcpy(b->ev, ev, (size_t)n * sizeof(*ev));
  b->n = n;
  b->dir = h->dir;
  b->score = score;
  b->maybe = h->maybe;
  h->have_best = 1;
}

/* The prefix assignments of a command (A=1 B=2 cmd): the environment of
 * this command only, as "NAME=value" words with their evidence.  Returns
 * the count. */
static int prefix_assignments(sh *h, TSNode n, const char **assign_w,
                              const char **assign_ev, int max) {
  uint32_t nc = ts_node_named_child_count(n);
  int na = 0;
  for (uint32_t i = 0; i < nc && na < max; i++) {
    TSNode k2 = ts_node_named_child(n, i);
    fields *fl;
    char *name;
    TSNode val;
    const char *v = "";
    if (!is(k2, "variable_assignment"))
      continue;
    fl = sm_calloc(1, sizeof(*fl));
    name = dup_span(h, field(k2, "name"));
    val = field(k2, "value");
    if (fl == NULL || name == NULL) {
      sm_free(fl);
      continue;
    }
    if (!ts_node_is_null(val)) {
      expand(h, val, fl, 1, 0);
      if (fl->n > 0)
        v = sm__strndup(h->c, fl->f[0].s ? fl->f[0].s : "", fl->f[0].n);
    }
    fields_free(fl);
    sm_free(fl);
    assign_w[na] = sm__printf(h->c, "%s=%s", name, v ? v : "");
    assign_ev[na] = sm__ev(h->c, h->rel, line_of(k2));
    na++;
  }
  return na;
}

/* shift [N]: the positional arguments move. */
static void builtin_shift(sh *h, const char **w, int nw) {
  int s = nw >= 2 ? atoi(w[1]) : 1;
  if (s < 0)
    s = 0;
  if (s > h->argc)
    s = h->argc;
  h->argv += s;
  if (h->argv_ev)
    h->argv_ev += s;
  h->argc -= s;
}

/* set -- ARGS: new positional arguments. */
static void builtin_set(sh *h, const char **w, const char **ev, int nw) {
  for (int i = 1; i < nw; i++)
    if (strcmp(w[i], "--") == 0) {
      h->argv = w + i + 1;
      h->argv_ev = ev + i + 1;
      h->argc = nw - i - 1;
      break;
    }
}

/* read [-r] [-d DELIM] NAMES: from a here-string or here-document, split
 * at the IFS of the command's prefix; unknown without input. */
static void builtin_read(sh *h, const char **w, const int *wl, int nw,
                         const char *const *assign_w, int na, TSNode here) {
  /* IFS='=' read -r A B <<< "$X" */
  const char *ifs = " \t\n", *in = NULL;
  int first = 1, whole = 0;
  for (int i = 0; i < na; i++)
    if (strncmp(assign_w[i], "IFS=", 4) == 0)
      ifs = assign_w[i] + 4;
  while (first < nw && w[first][0] == '-') {
    /* Options with an argument: -d DELIM (-d '' reads to the end),
     * -p PROMPT, -t, -n, -N, -u, -a. */
    if (strchr("dptnNua", w[first][1]) != NULL && w[first][2] == '\0' &&
        first + 1 < nw) {
      if (w[first][1] == 'd' && w[first + 1][0] == '\0')
        whole = 1;
      first++;
    }
    first++;
  }
  if (!ts_node_is_null(here) && is(here, "heredoc_redirect")) {
    /* read -r -d '' CMD <<EOF ... EOF: the document (its first line
     * without -d ''), kept with its lines. */
    lstr t;
    ls_init(&t);
    heredoc_text(h, here, &t);
    if (!whole && t.s != NULL) {
      char *nl = strchr(t.s, '\n');
      if (nl != NULL) {
        t.n = (size_t)(nl - t.s);
        *nl = '\0';
      }
    }
    if (first < nw) {
      var_set(h, w[first], &t, wl[first], 0);
      for (int i = first + 1; i < nw; i++)
        var_set_str(h, w[i], "", wl[i], 0);
    }
    ls_free(&t);
    return;
  }
  if (!ts_node_is_null(here)) {
    in = test_word(h, ts_node_named_child(here, 0));
  }
  for (int i = first; i < nw; i++) {
    const char *val = "";
    if (in == NULL) {
      var_set_unknown(h, w[i], wl[i]);
      continue;
    }
    if (i == nw - 1) {
      val = in;
      in = "";
    } else {
      size_t span_n = strcspn(in, ifs);
      val = sm__strndup(h->c, in, span_n);
      in += span_n;
      if (*in)
        in++;
    }
    var_set_str(h, w[i], val, wl[i], 0);
  }
}

/* A command that may be the launch: with its environment prefix, after
 * any wrappers (nohup, time, env, numactl ...). */
static void launch_candidate(sh *h, const char *const *assign_w,
                             const char *const *assign_ev, int na,
                             const char **w, const char **ev, int nw) {
  const char **all =
      sm_arena_calloc(&h->c->arena, (size_t)(na + nw) + 1, sizeof(*all));
  const char **all_ev =
      sm_arena_calloc(&h->c->arena, (size_t)(na + nw) + 1, sizeof(*all_ev));
  int j = na, k = 0;
  if (all == NULL || all_ev == NULL)
    return;
  for (int i = 0; i < na; i++) {
    all[k] = assign_w[i];
    all_ev[k++] = assign_ev[i];
  }
  for (int i = 0; i < nw; i++) {
    all[k] = w[i];
    all_ev[k++] = ev[i];
  }
  while (j < k && sm__is_wrapper(all[j])) {
    j++;
    while (j < k && all[j][0] == '-')
      j++;
  }
  if (j < k && sm__is_launch_word(all + j, k - j))
    candidate(h, all, all_ev, k);
}

static void run_command(sh *h, TSNode n, TSNode here) {
  const char **w = NULL, **ev;
  int *wl = NULL, nw, na;
  uint32_t nc = ts_node_named_child_count(n);
  const char *assign_w[64];
  const char *assign_ev[64];
  const char *b;
  sfunc *fn = NULL;

  if (ts_node_is_null(here))
    for (uint32_t i = 0; i < nc; i++)
      if (is(ts_node_named_child(n, i), "herestring_redirect"))
        here = ts_node_named_child(n, i);
  na = prefix_assignments(h, n, assign_w, assign_ev, 64);
  nw = expand_words(h, n, &w, &wl);
  if (nw == 0) {
    /* Only assignments: they set shell variables. */
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k2 = ts_node_named_child(n, i);
      if (is(k2, "variable_assignment"))
        assignment(h, k2, 0);
    }
    return;
  }
  ev = sm_arena_calloc(&h->c->arena, (size_t)nw + 1, sizeof(*ev));
  if (ev == NULL)
    return;
  for (int i = 0; i < nw; i++)
    ev[i] = wl[i] < 0 ? "command" : sm__ev(h->c, h->rel, wl[i]);
  b = strrchr(w[0], '/');
  b = b ? b + 1 : w[0];
  for (int i = 0; i < h->nfuncs; i++)
    if (strcmp(h->funcs[i].name, w[0]) == 0)
      fn = &h->funcs[i];
  if (fn != NULL) {
    call_function(h, fn, w + 1, ev + 1, nw - 1);
    return;
  }
  if (strcmp(b, "cd") == 0) {
    if (nw >= 2 && !strchr(w[1], UNK)) {
      const char *d = sm__repo_join(h->c, h->dir, w[1]);
      if (d != NULL)
        h->dir = d;
    }
    return;
  }
  if (strcmp(w[0], "exit") == 0) {
    if (!h->maybe)
      h->exited = 1;
    else
      h->exited = 1;
    return;
  }
  if (strcmp(w[0], "break") == 0 && h->loops > 0) {
    /* Ends the loop: the statements after it do not run (as after
     * `exit`), the loop itself clears it. */
    h->exited = 1;
    h->broke = 1;
    return;
  }
  if (strcmp(w[0], "shift") == 0) {
    builtin_shift(h, w, nw);
    return;
  }
  if (strcmp(w[0], "set") == 0) {
    builtin_set(h, w, ev, nw);
    return;
  }
  if (strcmp(w[0], "read") == 0) {
    builtin_read(h, w, wl, nw, assign_w, na, here);
    return;
  }
  if (strcmp(b, "source") == 0 || strcmp(w[0], ".") == 0) {
    if (nw >= 2)
      source_file(h, w[1], w + 2, nw - 2);
    return;
  }
  if (plain_builtin(b))
    return;
  launch_candidate(h, assign_w, assign_ev, na, w, ev, nw);
}

/* unset NAME...: the variables become empty. */
static void run_unset(sh *h, TSNode s) {
  uint32_t nc = ts_node_named_child_count(s);
  for (uint32_t i = 0; i < nc; i++) {
    char *name = dup_span(h, ts_node_named_child(s, i));
    svar *v = name ? var_find(h, name) : NULL;
    if (v != NULL)
      v->val = "";
  }
}

/* A statement with redirections; a here-string or here-document feeds
 * the command it redirects. */
static void run_redirected(sh *h, TSNode s) {
  TSNode body = field(s, "body");
  TSNode here = {0};
  uint32_t nc = ts_node_named_child_count(s);
  for (uint32_t i = 0; i < nc; i++)
    if (is(ts_node_named_child(s, i), "herestring_redirect") ||
        is(ts_node_named_child(s, i), "heredoc_redirect"))
      here = ts_node_named_child(s, i);
  if (is(body, "command"))
    run_command(h, body, here);
  else
    run_stmt(h, body);
}

/* A pipeline, subshell, { group } or ! command: its statements in order;
 * a subshell's assignments do not outlive it. */
static void run_group(sh *h, TSNode s) {
  if (is(s, "subshell")) {
    snap s0;
    if (snap_take(h, &s0) == 0) {
      run_children(h, s);
      h->exited = 0;
      snap_restore(h, &s0);
      sm_free(s0.vars);
    }
  } else {
    run_children(h, s);
  }
}

/* a && b: both run; a || b: b is the failure path. */
static void run_list(sh *h, TSNode s) {
  uint32_t nc = ts_node_child_count(s);
  int skip = 0;
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_child(s, i);
    if (!ts_node_is_named(k)) {
      size_t ol;
      const char *o = span(h, k, &ol);
      skip = ol == 2 && o[0] == '|';
      continue;
    }
    if (!skip)
      run_stmt(h, k);
  }
}

/* if: the consequence when the condition holds, the alternative when it
 * fails; both, joined, when it is undecided. */
static void run_if(sh *h, TSNode s) {
  int r = condition(h, field(s, "condition"), 0);
  uint32_t nc = ts_node_named_child_count(s);
  TSNode cond = field(s, "condition");
  /* Statements of the consequence: named children after the
   * condition, before any elif/else. */
  TSNode alt = {0};
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(s, i);
    if (is(k, "elif_clause") || is(k, "else_clause")) {
      alt = k;
      break;
    }
  }
  if (r == 1 || r == -1) {
    /* Run the consequence statements in order. */
    snap s0 = {0}, sa = {0};
    int taken_ok = 1;
    if (r == -1 && snap_take(h, &s0) != 0)
      return;
    if (r == -1)
      h->maybe++;
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(s, i);
      if (ts_node_eq(k, cond) || is(k, "comment"))
        continue;
      if (is(k, "elif_clause") || is(k, "else_clause"))
        break;
      run_stmt(h, k);
      if (h->exited)
        break;
    }
    if (r == -1) {
      int ex = h->exited;
      h->exited = 0;
      taken_ok = snap_take(h, &sa) == 0;
      snap_restore(h, &s0);
      if (!ts_node_is_null(alt))
        run_stmt(h, alt);
      h->maybe--;
      h->exited = ex && h->exited;
      if (taken_ok) {
        snap sb;
        if (snap_take(h, &sb) == 0) {
          snap_join(h, &sa, &sb);
          sm_free(sb.vars);
        }
        sm_free(sa.vars);
      }
      sm_free(s0.vars);
    }
  } else if (!ts_node_is_null(alt)) {
    run_stmt(h, alt);
  }
}

/* elif: same shape as an if statement (condition, statements, then the
 * next clause among the if's children). */
static void run_elif(sh *h, TSNode s) {
  int r = condition(h, field(s, "condition"), 0);
  TSNode cond = field(s, "condition");
  uint32_t nc = ts_node_named_child_count(s);
  TSNode next = ts_node_next_named_sibling(s);
  if (r == 0) {
    if (!ts_node_is_null(next))
      run_stmt(h, next);
    return;
  }
  if (r == -1) {
    snap s0, sa;
    if (snap_take(h, &s0) != 0)
      return;
    h->maybe++;
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(s, i);
      if (!ts_node_eq(k, cond))
        run_stmt(h, k);
    }
    h->exited = 0;
    if (snap_take(h, &sa) == 0) {
      snap sb;
      snap_restore(h, &s0);
      if (!ts_node_is_null(next))
        run_stmt(h, next);
      if (snap_take(h, &sb) == 0) {
        snap_join(h, &sa, &sb);
        sm_free(sb.vars);
      }
      sm_free(sa.vars);
    }
    h->maybe--;
    sm_free(s0.vars);
    return;
  }
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(s, i);
    if (!ts_node_eq(k, cond))
      run_stmt(h, k);
  }
}

/* case: the first item whose pattern matches; when the value is unknown
 * every item runs and nothing it sets survives. */
static void run_case(sh *h, TSNode s) {
  const char *v = test_word(h, field(s, "value"));
  uint32_t nc = ts_node_named_child_count(s);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode item = ts_node_named_child(s, i);
    int match = 0;
    uint32_t ic;
    if (!is(item, "case_item"))
      continue;
    ic = ts_node_child_count(item);
    if (v != NULL)
      for (uint32_t j = 0; j < ic && !match; j++) {
        TSNode p = ts_node_child(item, j);
        const char *fn = ts_node_field_name_for_child(item, j);
        const char *pat;
        if (fn == NULL || strcmp(fn, "value") != 0)
          continue;
        pat = test_word(h, p);
        match = pat != NULL && fnmatch(pat, v, 0) == 0;
      }
    if (v == NULL || match) {
      snap s0 = {0};
      int undecided = v == NULL;
      if (undecided && snap_take(h, &s0) != 0)
        continue;
      if (undecided)
        h->maybe++;
      for (uint32_t j = 0; j < ic; j++) {
        const char *fn = ts_node_field_name_for_child(item, j);
        TSNode k = ts_node_child(item, j);
        if (!ts_node_is_named(k) || (fn && strcmp(fn, "value") == 0))
          continue;
        run_stmt(h, k);
      }
      if (undecided) {
        h->maybe--;
        h->exited = 0;
        snap_restore(h, &s0);
        sm_free(s0.vars);
        continue;
      }
      break;
    }
  }
}

/* Ends one pass of a loop body; 1 when `break` ended the loop. */
static int loop_broke(sh *h) {
  if (!h->broke)
    return 0;
  h->broke = 0;
  h->exited = 0;
  return 1;
}

/* for NAME in WORDS: the body once per known item; the body on both
 * paths when the items are unknown or too many. */
static void run_for(sh *h, TSNode s) {
  TSNode var = field(s, "variable"), body = field(s, "body");
  char *name = dup_span(h, var);
  const char **items = NULL;
  int ni = 0, unknown_items = 0;
  uint32_t nc = ts_node_child_count(s);
  int any_value = 0;
  fields *fl = sm_calloc(1, sizeof(*fl));
  if (fl == NULL || name == NULL) {
    sm_free(fl);
    return;
  }
  for (uint32_t i = 0; i < nc; i++) {
    const char *fn = ts_node_field_name_for_child(s, i);
    if (fn && strcmp(fn, "value") == 0) {
      any_value = 1;
      expand_arg(h, ts_node_child(s, i), fl);
    }
  }
  if (!any_value)
    emit_positional(h, fl, 1, -1, line_of(s), 1);
  items = sm_arena_calloc(&h->c->arena, (size_t)fl->n + 1, sizeof(*items));
  for (int i = 0; items && i < fl->n; i++) {
    items[ni] = sm__strndup(h->c, fl->f[i].s ? fl->f[i].s : "", fl->f[i].n);
    if (items[ni] && strchr(items[ni], UNK))
      unknown_items = 1;
    ni++;
  }
  fields_free(fl);
  sm_free(fl);
  if (unknown_items || ni > MAX_LOOP || items == NULL) {
    h->loops++;
    run_both(h, body, (TSNode){0}, run_block);
    loop_broke(h);
    h->loops--;
    return;
  }
  h->loops++;
  for (int i = 0; i < ni && !h->exited; i++) {
    var_set_str(h, name, items[i], line_of(s), 0);
    run_block(h, body);
    if (loop_broke(h))
      break;
  }
  h->loops--;
}

/* Removes a variable (getopts clears OPTARG). */
static void var_unset(sh *h, const char *name) {
  for (int i = h->nvars - 1; i >= 0; i--)
    if (strcmp(h->vars[i].name, name) == 0) {
      memmove(&h->vars[i], &h->vars[i + 1],
              (size_t)(h->nvars - i - 1) * sizeof(h->vars[0]));
      h->nvars--;
    }
}

/* One letter of a getopts word: sets NAME and OPTARG.  *i and *k are the
 * word and the letter within it, moved past what was read. */
static void getopts_letter(sh *h, const char *spec, const char *name,
                           const char **argv, int argc, int *i, size_t *k,
                           int line) {
  int silent = spec[0] == ':';
  const char *a = argv[*i];
  char letter[2] = {a[*k], 0};
  const char *opt = letter[0] == ':' ? NULL : strchr(spec + silent, a[*k]);
  (*k)++;
  var_unset(h, "OPTARG");
  if (opt == NULL) {
    var_set_str(h, name, "?", line, 0);
    if (silent)
      var_set_str(h, "OPTARG", letter, line, 0);
  } else if (opt[1] != ':') {
    var_set_str(h, name, letter, line, 0);
  } else if (a[*k] != '\0') {
    var_set_str(h, name, letter, line, 0);
    var_set_str(h, "OPTARG", a + *k, line, 0);
    *k = strlen(a);
  } else if (*i + 1 < argc) {
    var_set_str(h, name, letter, line, 0);
    var_set_str(h, "OPTARG", argv[++*i], line, 0);
    *k = strlen(argv[*i]);
  } else {
    var_set_str(h, name, silent ? ":" : "?", line, 0);
    if (silent)
      var_set_str(h, "OPTARG", letter, line, 0);
  }
}

/* while getopts "a:bc:" NAME: the body once per option letter of the
 * script's arguments, as the shell's getopts reads them: letters bundled
 * in one word (-ae 30 is -a then -e 30), a value attached or in the next
 * word, NAME '?' for a letter the spec lacks (':' for a missing value
 * under a spec that starts with ':'), OPTARG cleared for a letter
 * without a value; it stops at the first word that is no option or after
 * `--`, and OPTIND is left at the first word not read (past the `--`).
 * 1 when the condition was of that shape (a literal spec), else 0. */
static int run_getopts(sh *h, TSNode cond, TSNode body) {
  char spec[64], name[64];
  size_t len, k = 1;
  const char *t = span(h, cond, &len);
  const char **argv;
  int i = 0, argc = h->argc, line = line_of(cond), rounds = 0;
  if (t == NULL || len >= 160 || len < 9 || strncmp(t, "getopts", 7) != 0 ||
      memchr(t, '$', len) != NULL)
    return 0;
  {
    char buf[160];
    memcpy(buf, t, len);
    buf[len] = '\0';
    for (char *q = buf; *q; q++)
      if (*q == '"' || *q == '\'' || *q == ';')
        *q = ' ';
    if (sscanf(buf + 7, "%63s %63s", spec, name) != 2)
      return 0;
  }
  /* The arguments as the loop starts: a body that shifts does not move
   * the words getopts reads. */
  argv = sm_arena_calloc(&h->c->arena, (size_t)argc + 1, sizeof(*argv));
  if (argv == NULL)
    return 0;
  memcpy(argv, h->argv, (size_t)argc * sizeof(*argv));
  while (i < argc && rounds++ < MAX_LOOP && !h->exited) {
    const char *a = argv[i];
    if (k == 1 && (a[0] != '-' || a[1] == '\0'))
      break;
    if (k == 1 && strcmp(a, "--") == 0) {
      i++;
      break;
    }
    getopts_letter(h, spec, name, argv, argc, &i, &k, line);
    if (argv[i][k] == '\0') {
      i++;
      k = 1;
    }
    run_block(h, body);
    if (loop_broke(h))
      break;
  }
  var_set_str(h, name, "?", line, 0);
  var_set_str(h, "OPTIND", sm__printf(h->c, "%d", i + 1), line, 0);
  return 1;
}

/* while / until CONDITION: the body while the condition is decided true
 * (the option loops of launch scripts: `while [[ "$1" != "" ]]; do case
 * $1 in -m) shift; MODEL=$1;; esac; shift; done`), at most MAX_LOOP
 * times; a condition that cannot be decided runs the body on both paths
 * once, as before. */
static void run_while(sh *h, TSNode s) {
  TSNode cond = field(s, "condition"), body = field(s, "body");
  size_t len;
  const char *kw = span(h, ts_node_child(s, 0), &len);
  int until = len == 5 && strncmp(kw, "until", 5) == 0;
  if (!until && !ts_node_is_null(cond)) {
    int done;
    h->loops++;
    done = run_getopts(h, cond, body);
    h->loops--;
    if (done)
      return;
  }
  h->loops++;
  for (int i = 0; i < MAX_LOOP && !h->exited; i++) {
    int r = ts_node_is_null(cond) ? -1 : condition(h, cond, 0);
    if (r >= 0 && until)
      r = !r;
    if (r == 0)
      break;
    if (r < 0) {
      run_both(h, body, (TSNode){0}, run_block);
      loop_broke(h);
      break;
    }
    run_block(h, body);
    if (loop_broke(h))
      break;
  }
  h->loops--;
}

/* A function definition is remembered for later calls. */
static void define_function(sh *h, TSNode s) {
  if (h->nfuncs < MAX_FUNCS) {
    sfunc *f = &h->funcs[h->nfuncs++];
    f->name = dup_span(h, field(s, "name"));
    f->body = field(s, "body");
    f->src = h->src;
    f->rel = h->rel;
    if (f->name == NULL)
      h->nfuncs--;
  }
}

static int run_stmt(sh *h, TSNode s) {
  const char *t;
  if (ts_node_is_null(s) || !step(h))
    return 0;
  t = ts_node_type(s);
  if (strcmp(t, "command") == 0) {
    run_command(h, s, (TSNode){0});
  } else if (strcmp(t, "variable_assignment") == 0) {
    assignment(h, s, 0);
  } else if (strcmp(t, "variable_assignments") == 0) {
    run_children(h, s);
  } else if (strcmp(t, "declaration_command") == 0) {
    declaration(h, s);
  } else if (strcmp(t, "unset_command") == 0) {
    run_unset(h, s);
  } else if (strcmp(t, "redirected_statement") == 0) {
    run_redirected(h, s);
  } else if (strcmp(t, "pipeline") == 0 || strcmp(t, "subshell") == 0 ||
             strcmp(t, "compound_statement") == 0 ||
             strcmp(t, "negated_command") == 0) {
    run_group(h, s);
  } else if (strcmp(t, "list") == 0) {
    run_list(h, s);
  } else if (strcmp(t, "if_statement") == 0) {
    run_if(h, s);
  } else if (strcmp(t, "elif_clause") == 0) {
    run_elif(h, s);
  } else if (strcmp(t, "else_clause") == 0) {
    run_children(h, s);
  } else if (strcmp(t, "case_statement") == 0) {
    run_case(h, s);
  } else if (strcmp(t, "for_statement") == 0) {
    run_for(h, s);
  } else if (strcmp(t, "while_statement") == 0) {
    run_while(h, s);
  } else if (strcmp(t, "c_style_for_statement") == 0) {
    run_both(h, field(s, "body"), (TSNode){0}, run_block);
  } else if (strcmp(t, "function_definition") == 0) {
    define_function(h, s);
  } else if (strcmp(t, "test_command") == 0) {
    /* [ ... ] as a statement: nothing to do. */
  }
  return 0;
}

/* #SBATCH lines among the comments before the first command. */
static void sbatch_lines(sh *h, TSNode root) {
  uint32_t nc = ts_node_named_child_count(root);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(root, i);
    size_t len;
    const char *t;
    if (!is(k, "comment"))
      continue;
    t = span(h, k, &len);
    if (len > 7 && strncmp(t, "#SBATCH", 7) == 0)
      sm__slurm_line(h->c, t + 7, len - 7, sm__ev(h->c, h->rel, line_of(k)));
  }
}

/* Does the text end inside a quoted string (comments and escapes
 * considered)? */
static int quotes_open(const char *t, size_t n) {
  char q = 0;
  int comment = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = t[i];
    if (comment) {
      if (ch == '\n')
        comment = 0;
      continue;
    }
    if (q == 0 && ch == '#' &&
        (i == 0 || t[i - 1] == ' ' || t[i - 1] == '\n' || t[i - 1] == '\t')) {
      comment = 1;
      continue;
    }
    if (ch == '\\' && q != '\'' && i + 1 < n) {
      i++;
      continue;
    }
    if (q == 0 && (ch == '"' || ch == '\''))
      q = ch;
    else if (q != 0 && ch == q)
      q = 0;
  }
  return q != 0;
}

static void sh_file(sm__ctx *c, const char *rel, const char *text, size_t len,
                    const char *const *args, int nargs, const char *dir,
                    int depth, sh *parent) {
  TSTree *tree;
  TSNode root;
  sh *h = parent;
  const char *src = text;

  /* A repository file is parsed once; an inline script as given. */
  if (text == NULL || (parent != NULL && rel != NULL))
    tree = rel ? sm__src_tree(c, rel, SM__G_BASH, &src) : NULL;
  else
    tree = sm__src_tree_text(c, text, len, SM__G_BASH);
  if (tree == NULL)
    return;
  root = ts_tree_root_node(tree);
  if (ts_node_has_error(root))
    sm__warn(c, "%s: shell syntax errors%s, read what parsed",
             rel ? rel : "script",
             quotes_open(src, strlen(src)) ? " (unbalanced quotes)" : "");
  if (h == NULL) {
    h = sm_calloc(1, sizeof(*h));
    if (h == NULL)
      return;
    h->vars = sm_calloc(MAX_VARS, sizeof(svar));
    if (h->vars == NULL) {
      sm_free(h);
      return;
    }
    h->c = c;
    h->dir = dir;
    h->depth = depth;
    h->arg0 = rel;
    h->argv = sm_arena_calloc(&c->arena, (size_t)nargs + 1, sizeof(char *));
    h->argv_ev = sm_arena_calloc(&c->arena, (size_t)nargs + 1, sizeof(char *));
    for (int i = 0; i < nargs && h->argv && h->argv_ev; i++) {
      h->argv[i] = args[i];
      h->argv_ev[i] = "command";
    }
    h->argc = h->argv ? nargs : 0;
    /* The command's environment is the script's. */
    for (int i = 0; i < c->n_env; i++)
      var_set_str(h, c->env_k[i], c->env_v[i], -1, 1);
  }
  h->rel = rel ? rel : "script";
  h->src = src;
  sbatch_lines(h, root);
  run_children(h, root);
  if (parent != NULL)
    return;
  /* Exports reach the launch's environment. */
  for (int i = 0; i < h->nvars; i++)
    if (h->vars[i].exported && !strchr(h->vars[i].val, UNK))
      sm__set_env(c, h->vars[i].name, h->vars[i].val);
  if (h->have_best) {
    if (c->up.launch_words != NULL)
      c->up.launch_words(c, h->best.w, h->best.ev, h->best.n, h->best.dir,
                         depth + 1);
  } else {
    sm__warn(c, "%s: no launch command found in the script",
             rel ? rel : "script");
  }
  sm_free(h->vars);
  sm_free(h);
}

void sm__sh_run(sm__ctx *c, const char *rel, const char *text, size_t len,
                const char *const *args, int nargs, const char *dir,
                int depth) {
  sh_file(c, rel, text, len, args, nargs, dir, depth, NULL);
}
