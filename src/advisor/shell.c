/* shell.c - POSIX shell words: quoting, escapes, line continuations,
 * comments, operators, and expansion of $VAR, ${VAR}, ${VAR:-default},
 * positional arguments ($1, "$@") and simple $((arithmetic)) from the
 * variables a script set.  Command substitution is never run: it expands
 * to nothing. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_WORD 4096

const char *sm__sh_get(const sm__shvars *vars, const char *name) {
  if (vars == NULL)
    return NULL;
  for (int i = vars->n - 1; i >= 0; i--)
    if (strcmp(vars->k[i], name) == 0)
      return vars->v[i];
  return NULL;
}

void sm__sh_set(sm__ctx *c, sm__shvars *vars, const char *name,
                const char *value) {
  for (int i = 0; i < vars->n; i++)
    if (strcmp(vars->k[i], name) == 0) {
      vars->v[i] = sm__strdup(c, value);
      return;
    }
  if (vars->n < (int)SM_ARRAY_LEN(vars->k)) {
    vars->k[vars->n] = sm__strdup(c, name);
    vars->v[vars->n] = sm__strdup(c, value);
    if (vars->k[vars->n] && vars->v[vars->n])
      vars->n++;
  }
}

/* A word being built. */
typedef struct word {
  char s[MAX_WORD]; /* text */
  size_t n;         /* length */
  int any;          /* something (even "") was quoted into it */
} word;

static void put(word *w, char ch) {
  if (w->n + 1 < sizeof(w->s))
    w->s[w->n++] = ch;
}

static void puts_w(word *w, const char *s) {
  while (s && *s)
    put(w, *s++);
}

/* Integer arithmetic of $(( )): numbers, variables, + - * / % and
 * parentheses.  Returns 0 and the value, or -1. */
static int arith(const char **s, const sm__shvars *v, long long *out);

static int arith_atom(const char **s, const sm__shvars *v, long long *out) {
  while (isspace((unsigned char)**s))
    (*s)++;
  if (**s == '(') {
    (*s)++;
    if (arith(s, v, out) != 0)
      return -1;
    while (isspace((unsigned char)**s))
      (*s)++;
    if (**s != ')')
      return -1;
    (*s)++;
    return 0;
  }
  if (**s == '-') {
    (*s)++;
    if (arith_atom(s, v, out) != 0)
      return -1;
    *out = -*out;
    return 0;
  }
  if (isdigit((unsigned char)**s)) {
    *out = strtoll(*s, (char **)s, 10);
    return 0;
  }
  if (**s == '$')
    (*s)++;
  if (**s == '{')
    (*s)++;
  if (isalpha((unsigned char)**s) || **s == '_') {
    char name[64];
    size_t n = 0;
    const char *val;
    while ((isalnum((unsigned char)**s) || **s == '_') && n + 1 < 64)
      name[n++] = *(*s)++;
    name[n] = '\0';
    if (**s == '}')
      (*s)++;
    val = sm__sh_get(v, name);
    if (val == NULL || !isdigit((unsigned char)val[0]))
      return -1;
    *out = strtoll(val, NULL, 10);
    return 0;
  }
  return -1;
}

int sm__sh_arith_op(char op, long long *acc, long long r) {
  if (op == '+')
    *acc += r;
  else if (op == '-')
    *acc -= r;
  else if (op == '*')
    *acc *= r;
  else if (r == 0)
    return -1;
  else if (op == '/')
    *acc /= r;
  else
    *acc %= r;
  return 0;
}

/* One level of binary operators (ops) over operands read by next, left to
 * right.  Returns 0 and the value, or -1 (a bad operand, a division by
 * zero). */
static int arith_level(const char **s, const sm__shvars *v, long long *out,
                       const char *ops,
                       int (*next)(const char **, const sm__shvars *,
                                   long long *)) {
  if (next(s, v, out) != 0)
    return -1;
  for (;;) {
    long long r;
    char op;
    while (isspace((unsigned char)**s))
      (*s)++;
    op = **s;
    if (op == '\0' || strchr(ops, op) == NULL)
      return 0;
    (*s)++;
    if (next(s, v, &r) != 0 || sm__sh_arith_op(op, out, r) != 0)
      return -1;
  }
}

static int arith_term(const char **s, const sm__shvars *v, long long *out) {
  return arith_level(s, v, out, "*/%", arith_atom);
}

static int arith(const char **s, const sm__shvars *v, long long *out) {
  return arith_level(s, v, out, "+-", arith_term);
}

/* Expands the $-form at *p (just past '$'); appends to w.  When "$@" is
 * met, *at is set so the caller can split positional arguments. */
static const char *expand(const char *p, const char *end,
                          const sm__shvars *vars, word *w, int *at) {
  char name[128];
  size_t n = 0;

  if (p < end && *p == '(' && p + 1 < end && p[1] == '(') {
    /* $(( arithmetic )) */
    const char *q = p + 2, *close = strstr(q, "))");
    char expr[256];
    long long val;
    if (close == NULL || close > end || (size_t)(close - q) >= sizeof(expr))
      return end;
    memcpy(expr, q, (size_t)(close - q));
    expr[close - q] = '\0';
    q = expr;
    if (arith(&q, vars, &val) == 0) {
      char num[32];
      snprintf(num, sizeof(num), "%lld", val);
      puts_w(w, num);
    }
    return close + 2;
  }
  if (p < end && (*p == '(' || *p == '`')) {
    /* Command substitution: never run; skip to the matching ')'. */
    int depth = 0;
    for (; p < end; p++) {
      if (*p == '(')
        depth++;
      else if (*p == ')' && --depth == 0)
        return p + 1;
    }
    return end;
  }
  if (p < end && (*p == '@' || *p == '*')) {
    *at = 1;
    return p + 1;
  }
  if (p < end && *p == '{') {
    const char *close = memchr(p, '}', (size_t)(end - p));
    const char *q = p + 1, *def = NULL;
    size_t dn = 0;
    const char *val;
    if (close == NULL)
      return end;
    while (q < close && (isalnum((unsigned char)*q) || *q == '_') &&
           n + 1 < sizeof(name))
      name[n++] = *q++;
    name[n] = '\0';
    if (q < close && (*q == ':' || *q == '-' || *q == '=')) {
      if (*q == ':')
        q++;
      if (q < close && (*q == '-' || *q == '=')) {
        def = q + 1;
        dn = (size_t)(close - def);
      }
    }
    if (strcmp(name, "@") == 0 || (n == 0 && q < close && *q == '@')) {
      *at = 1;
      return close + 1;
    }
    val = vars ? sm__sh_get(vars, name) : NULL;
    if ((val == NULL || val[0] == '\0') && def != NULL) {
      /* The default may itself hold $VAR: expand it recursively. */
      for (const char *d = def; d < def + dn;) {
        if (*d == '$')
          d = expand(d + 1, def + dn, vars, w, at);
        else if (*d == '"' || *d == '\'')
          d++;
        else
          put(w, *d++);
      }
    } else if (val != NULL) {
      puts_w(w, val);
    }
    return close + 1;
  }
  if (p < end && isdigit((unsigned char)*p)) {
    name[0] = *p;
    name[1] = '\0';
    puts_w(w, vars ? sm__sh_get(vars, name) : NULL);
    return p + 1;
  }
  while (p < end && (isalnum((unsigned char)*p) || *p == '_') &&
         n + 1 < sizeof(name))
    name[n++] = *p++;
  name[n] = '\0';
  if (n == 0) {
    put(w, '$');
    return p;
  }
  puts_w(w, vars ? sm__sh_get(vars, name) : NULL);
  return p;
}

/* The words of a line being split. */
typedef struct splitter {
  sm__ctx *c;
  const char **words; /* the words so far (arena) */
  int nw, max;        /* count, capacity */
  word *w;            /* the word being built */
} splitter;

/* Ends the word being built (if anything went into it). */
static void flush_word(splitter *sp) {
  word *w = sp->w;
  if ((w->n > 0 || w->any) && sp->nw < sp->max)
    sp->words[sp->nw++] = sm__strndup(sp->c, w->s, w->n);
  w->n = 0;
  w->any = 0;
}

/* "$@" / $@: each positional argument is its own word. */
static void positional_words(splitter *sp, const sm__shvars *vars) {
  char key[12];
  for (int i = 1; i <= 9; i++) {
    const char *a;
    snprintf(key, sizeof(key), "%d", i);
    if ((a = sm__sh_get(vars, key)) == NULL)
      break;
    flush_word(sp);
    puts_w(sp->w, a);
    sp->w->any = 1;
  }
}

/* A double-quoted string at p (just past the quote): escapes and
 * expansions inside it.  Returns the end of it, or NULL when it is not
 * closed. */
static const char *double_quoted(splitter *sp, const char *p, const char *end,
                                 const sm__shvars *vars) {
  word *w = sp->w;
  w->any = 1;
  while (p < end && *p != '"') {
    int at = 0;
    if (*p == '\\' && p + 1 < end && strchr("\"\\$`\n", p[1]) != NULL) {
      if (p[1] != '\n')
        put(w, p[1]);
      p += 2;
    } else if (*p == '$' && vars != NULL) {
      p = expand(p + 1, end, vars, w, &at);
    } else {
      put(w, *p++);
    }
    if (at) {
      /* "$@": no argument at all gives no word. */
      if (w->n == 0)
        w->any = 0;
      positional_words(sp, vars);
    }
  }
  return p < end ? p + 1 : NULL;
}

/* An unquoted expansion at p (just past '$'): split into words at
 * blanks.  Returns the end of it, or NULL on exhaustion. */
static const char *unquoted_expansion(splitter *sp, const char *p,
                                      const char *end, const sm__shvars *vars) {
  word *tmp = sm_malloc(sizeof(*tmp));
  int at = 0;
  if (tmp == NULL)
    return NULL;
  tmp->n = 0;
  p = expand(p, end, vars, tmp, &at);
  for (size_t i = 0; i < tmp->n; i++) {
    char x = tmp->s[i];
    if (x == ' ' || x == '\t' || x == '\n' || x == '\r')
      flush_word(sp);
    else
      put(sp->w, x);
  }
  sm_free(tmp);
  if (at)
    positional_words(sp, vars);
  return p;
}

/* A redirection at p ('>' or '<'): dropped, with its file descriptor and
 * its target.  Returns the end of it. */
static const char *redirection(splitter *sp, const char *p, const char *end) {
  word *w = sp->w;
  int digits = w->n > 0 && !w->any;
  for (size_t i = 0; i < w->n; i++)
    if (!isdigit((unsigned char)w->s[i]))
      digits = 0;
  if (digits)
    w->n = 0;
  flush_word(sp);
  while (p < end && (*p == '>' || *p == '<' || *p == '&'))
    p++;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  while (p < end && !isspace((unsigned char)*p) && *p != ';' && *p != '|' &&
         *p != '&')
    p++;
  return p;
}

int sm__sh_split(sm__ctx *c, const char *line, size_t len, sm__shvars *vars,
                 const char ***words_out, int max_words) {
  const char *p = line, *end = line + len;
  splitter sp;
  word *w = sm_malloc(sizeof(*w));

  sp.c = c;
  sp.words = sm_arena_calloc(&c->arena, (size_t)max_words + 1, sizeof(char *));
  sp.nw = 0;
  sp.max = max_words;
  sp.w = w;
  if (sp.words == NULL || w == NULL) {
    sm_free(w);
    return -1;
  }
  *words_out = sp.words;
  w->n = 0;
  w->any = 0;
  while (p != NULL && p < end) {
    char ch = *p;
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      flush_word(&sp);
      p++;
    } else if (ch == '#' && w->n == 0 && !w->any) {
      while (p < end && *p != '\n')
        p++;
    } else if (ch == '\\') {
      if (p + 1 < end && p[1] == '\n')
        p += 2;
      else if (p + 2 < end && p[1] == '\r' && p[2] == '\n')
        p += 3;
      else {
        if (p + 1 < end)
          put(w, p[1]);
        p += 2;
      }
    } else if (ch == '\'') {
      const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));
      if (q == NULL)
        break;
      for (const char *r = p + 1; r < q; r++)
        put(w, *r);
      w->any = 1;
      p = q + 1;
    } else if (ch == '"') {
      p = double_quoted(&sp, p + 1, end, vars);
    } else if (ch == '$' && vars != NULL) {
      p = unquoted_expansion(&sp, p + 1, end, vars);
    } else if (ch == '`') {
      const char *q = memchr(p + 1, '`', (size_t)(end - p - 1));
      p = q ? q + 1 : end;
    } else if (ch == '>' || ch == '<') {
      p = redirection(&sp, p, end);
    } else if (ch == '&' && p + 1 < end && p[1] == '>') {
      p++;
      while (p < end && *p == '>')
        p++;
      while (p < end && (*p == ' ' || *p == '\t'))
        p++;
      while (p < end && !isspace((unsigned char)*p))
        p++;
    } else if (ch == ';' || ch == '|' || ch == '&') {
      char op[3] = {ch, 0, 0};
      flush_word(&sp);
      if (p + 1 < end && p[1] == ch && ch != ';') {
        op[1] = ch;
        p++;
      }
      p++;
      if (sp.nw < max_words)
        sp.words[sp.nw++] = sm__strdup(c, op);
    } else {
      put(w, ch);
      p++;
    }
  }
  if (p == NULL || p < end) {
    /* An unbalanced quote (or no memory for an expansion). */
    sm_free(w);
    return -1;
  }
  flush_word(&sp);
  sm_free(w);
  return sp.nw;
}
