/* lines.c - what one log line is: its severity, its structure inside a
 * Python traceback, the signature it matches and, for lines no signature
 * knows, what the failure line classifier makes of it (its prefix is
 * prefix.c's). */
#include <ctype.h>
#include <string.h>

#include "failure/failure_int.h"
#include "util/util_int.h"

/* Lines are matched against signatures on at most this many bytes. */
#define MATCH_CAP 8192

/* ==== Severity ==== */

/* Level of an upper-case level word s[0..n), or SM__LVL_NONE. */
static int level_word(const char *s, size_t n) {
  static const struct {
    const char *w;
    int lvl;
  } words[] = {{"TRACE", SM__LVL_INFO},  {"DEBUG", SM__LVL_INFO},
               {"INFO", SM__LVL_INFO},   {"NOTICE", SM__LVL_INFO},
               {"WARN", SM__LVL_WARN},   {"WARNING", SM__LVL_WARN},
               {"ERROR", SM__LVL_ERROR}, {"ERR", SM__LVL_ERROR},
               {"FATAL", SM__LVL_ERROR}, {"CRITICAL", SM__LVL_ERROR},
               {"CRIT", SM__LVL_ERROR},  {"SEVERE", SM__LVL_ERROR},
               {"PANIC", SM__LVL_ERROR}, {"ALERT", SM__LVL_ERROR},
               {"EMERG", SM__LVL_ERROR}};

  for (size_t k = 0; k < SM_ARRAY_LEN(words); k++)
    if (strlen(words[k].w) == n && memcmp(words[k].w, s, n) == 0)
      return words[k].lvl;
  return SM__LVL_NONE;
}

/* A glog severity letter. */
static int glog_level(char c) {
  return c == 'I'               ? SM__LVL_INFO
         : c == 'W'             ? SM__LVL_WARN
         : c == 'E' || c == 'F' ? SM__LVL_ERROR
                                : SM__LVL_NONE;
}

/* Skips ANSI colour sequences ("\x1b[32m") at s[i]. */
static size_t skip_ansi(const char *s, size_t n, size_t i) {
  while (i + 1 < n && s[i] == 0x1b && s[i + 1] == '[') {
    i += 2;
    while (i < n && !(s[i] >= '@' && s[i] <= '~'))
      i++;
    if (i < n)
      i++;
  }
  return i;
}

/* Level named by the body of a bracketed tag: "INFO", " WARNING ",
 * "I" (a one-letter level) or a glog tag "E ProcessGroupNCCL.cpp:563". */
static int tag_level(const char *s, size_t a, size_t b) {
  char t[64];
  size_t n = 0, i = a, w;

  /* The body without colour sequences and surrounding blanks. */
  while (i < b && n < sizeof(t)) {
    size_t j = skip_ansi(s, b, i);
    if (j != i) {
      i = j;
      continue;
    }
    t[n++] = s[i++];
  }
  i = 0;
  while (i < n && t[i] == ' ')
    i++;
  while (n > i && t[n - 1] == ' ')
    n--;
  if (n - i == 1)
    return glog_level(t[i]);
  if (n - i > 2 && t[i + 1] == ' ' && isalpha((unsigned char)t[i + 2]))
    return glog_level(t[i]);
  for (w = i; w < n && isupper((unsigned char)t[w]); w++)
    ;
  return w == n ? level_word(t + i, n - i) : SM__LVL_NONE;
}

/* 1 if s[a..b) is a kernel log stamp ("   81234.123456", dmesg's). */
static int dmesg_stamp(const char *s, size_t a, size_t b) {
  int digits = 0, dot = 0;

  for (size_t k = a; k < b; k++) {
    if (isdigit((unsigned char)s[k]))
      digits++;
    else if (s[k] == '.' && digits > 0 && !dot)
      dot = 1;
    else if (s[k] != ' ' || digits > 0)
      return 0;
  }
  return digits > 0 && dot;
}

int sm__line_level(const char *s, size_t n) {
  size_t i = 0, lim = n < 320 ? n : 320;
  int tags = 0;

  while (i < lim) {
    unsigned char c;
    i = skip_ansi(s, lim, i);
    if (i >= lim)
      break;
    c = (unsigned char)s[i];
    if (c == '[') {
      const char *e = memchr(s + i, ']', SM_MIN(lim - i, (size_t)96));
      int lv;
      if (e == NULL)
        return SM__LVL_NONE;
      /* The kernel states no level in its words: its "INFO: task x
       * blocked for more than 120 seconds" is an error report. */
      if (tags == 0 && dmesg_stamp(s, i + 1, (size_t)(e - s)))
        return SM__LVL_NONE;
      lv = tag_level(s, i + 1, (size_t)(e - s));
      if (lv != SM__LVL_NONE)
        return lv;
      if (++tags > 4)
        return SM__LVL_NONE;
      i = (size_t)(e - s) + 1;
      continue;
    }
    if (isdigit(c)) {
      /* Timestamps and numbers: "2024-05-02T10:11:12.5Z", "01:39:47,073". */
      while (
          i < lim &&
          (isdigit((unsigned char)s[i]) || strchr(":-.,/+TZ", s[i]) != NULL) &&
          s[i] != '\0')
        i++;
      continue;
    }
    if (isalpha(c)) {
      size_t j = i;
      int lv;
      while (j < lim && isalpha((unsigned char)s[j]))
        j++;
      /* glog: "E0502 10:11:12.123456  4121 file.cc:12]". */
      if (j == i + 1 && j < lim && isdigit((unsigned char)s[j]))
        return glog_level((char)c);
      lv = level_word(s + i, j - i);
      if (lv != SM__LVL_NONE &&
          (j == n || strchr(": ]|-),\t\x1b", s[j]) != NULL) && s[j] != '\0')
        return lv;
      return SM__LVL_NONE; /* the message starts with a word */
    }
    if (c == ' ' || c == '\t' || c == '|' || c == '-' || c == ':') {
      i++;
      continue;
    }
    return SM__LVL_NONE;
  }
  return SM__LVL_NONE;
}

/* ==== Python structure ==== */

#define EXC_INDENT 3 /* blanks before a quoted exception line */

static int ends_with(const char *s, size_t n, const char *suf) {
  size_t l = strlen(suf);
  return n >= l && memcmp(s + n - l, suf, l) == 0;
}

int sm__exc_type_len(const char *s, size_t n) {
  size_t i = 0, seg = 0;
  static const char *const plain[] = {"StopIteration", "KeyboardInterrupt",
                                      "SystemExit", "GeneratorExit"};

  for (;;) {
    size_t st = i;
    if (i >= n || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
      return 0;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
      i++;
    seg = st;
    if (i < n && s[i] == '.' && i + 1 < n &&
        (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_')) {
      i++;
      continue;
    }
    break;
  }
  if (i > 200 || !isupper((unsigned char)s[seg]))
    return 0;
  /* A wrapper that names the original type: Ray's
   * "ray.exceptions.RayTaskError(KeyError): ...". */
  if (i < n && s[i] == '(') {
    size_t j = i + 1;
    while (j < n && j < i + 100 &&
           (isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == '.'))
      j++;
    if (j > i + 1 && j < n && s[j] == ')' && isupper((unsigned char)s[i + 1]) &&
        (j + 1 == n || s[j + 1] == ':')) {
      if (ends_with(s + seg, i - seg, "Error") ||
          ends_with(s + seg, i - seg, "Exception"))
        return (int)(j + 1);
    }
    return 0;
  }
  if (i < n && s[i] != ':')
    return 0;
  if (ends_with(s + seg, i - seg, "Error") ||
      ends_with(s + seg, i - seg, "Exception") ||
      ends_with(s + seg, i - seg, "Interrupt") ||
      ends_with(s + seg, i - seg, "Fault") ||
      ends_with(s + seg, i - seg, "Failure") ||
      ends_with(s + seg, i - seg, "Warning") ||
      ends_with(s + seg, i - seg, "Exit") ||
      ends_with(s + seg, i - seg, "Timeout") ||
      ends_with(s + seg, i - seg, "Expired"))
    return (int)i;
  for (size_t k = 0; k < SM_ARRAY_LEN(plain); k++)
    if (i - seg == strlen(plain[k]) && memcmp(s + seg, plain[k], i - seg) == 0)
      return (int)i;
  return 0;
}

static int starts(const char *s, size_t n, const char *p) {
  size_t l = strlen(p);
  return n >= l && memcmp(s, p, l) == 0;
}

/* Rich (box-drawing) traceback characters: U+2502, U+256D, U+2570. */
static int rich_box(const char *s, size_t n) {
  return n >= 3 && (unsigned char)s[0] == 0xe2 &&
         (((unsigned char)s[1] == 0x94 && (unsigned char)s[2] == 0x82) ||
          ((unsigned char)s[1] == 0x95 &&
           ((unsigned char)s[2] == 0xad || (unsigned char)s[2] == 0xb0)));
}

/* An indented frame line of the JVM, Go or Rust (t is after the blanks). */
static int runtime_frame(const char *t, size_t tn) {
  size_t k;

  if (starts(t, tn, "at ") && tn > 5 && t[tn - 1] == ')' &&
      memchr(t, '(', tn) != NULL) {
    for (k = 3; k < tn && t[k] != '('; k++)
      if (!(isalnum((unsigned char)t[k]) || t[k] == '.' || t[k] == '_' ||
            t[k] == '$' || t[k] == '<' || t[k] == '>' || t[k] == '/'))
        return 0;
    return 1;
  }
  if (starts(t, tn, "... ") && tn > 9 && isdigit((unsigned char)t[4]) &&
      (memmem(t, tn, " more", 5) != NULL || memmem(t, tn, " common", 7)))
    return 1;
  if (t[0] == '/' && memmem(t, SM_MIN(tn, (size_t)400), ".go:", 4) != NULL)
    return 1;
  if (starts(t, tn, "at /") && memmem(t, tn, ".rs:", 4) != NULL)
    return 1;
  /* .NET: "at Ns.Cls.M(String x) in /src/P.cs:line 22", and the markers
   * between the stacks of an exception and its inner one. */
  if (starts(t, tn, "at ") && memmem(t, tn, ") in ", 5) != NULL &&
      memmem(t, tn, ":line ", 6) != NULL)
    return 1;
  if (starts(t, tn, "--- End of inner exception stack trace ---") ||
      starts(t, tn, "--- End of stack trace from previous location"))
    return 1;
  /* Julia: "[2] train!(model::Chain)" and "@ Main /x/train.jl:41". */
  if (t[0] == '[' && tn > 4 && isdigit((unsigned char)t[1])) {
    for (k = 1; k < tn && k < 6 && isdigit((unsigned char)t[k]); k++)
      ;
    if (k + 1 < tn && t[k] == ']' && t[k + 1] == ' ')
      return 1;
  }
  if (starts(t, tn, "@ ") && tn > 4 && memchr(t + 2, ' ', tn - 2) != NULL &&
      (memmem(t, tn, ".jl:", 4) != NULL || memmem(t, tn, "none:", 5) != NULL))
    return 1;
  for (k = 0; k < tn && k < 4 && isdigit((unsigned char)t[k]); k++)
    ;
  if (k > 0 && k + 2 < tn && t[k] == ':' && t[k + 1] == ' ' &&
      memmem(t, tn, "::", 2) != NULL)
    return 1;
  return 0;
}

/* Julia's "ERROR: [LoadError: ...]T: msg": the length of the prefix
 * before the type at s, and the type's length (it ends in Error,
 * Exception or Mismatch, Julia's DimensionMismatch), or 0. */
static int julia_error(const char *s, size_t n, size_t *skip) {
  size_t i = 7, k;

  if (!starts(s, n, "ERROR: "))
    return 0;
  while (starts(s + i, n - i, "LoadError: "))
    i += 11;
  for (k = i; k < n && k < i + 120 &&
              (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.');
       k++)
    ;
  if (k == i || !isupper((unsigned char)s[i]) || (k < n && s[k] != ':'))
    return 0;
  if (!ends_with(s + i, k - i, "Error") &&
      !ends_with(s + i, k - i, "Exception") &&
      !ends_with(s + i, k - i, "Mismatch"))
    return 0;
  *skip = i;
  return (int)(k - i);
}

int sm__runtime_error(const char *s, size_t n, size_t *skip, int *type_len) {
  static const char thr[] = "terminate called after throwing an instance of '";
  size_t k;

  *skip = 0;
  *type_len = 0;
  /* .NET: "Unhandled exception. System.IO.IOException: ..." (.NET Core),
   * "Unhandled Exception: ..." (.NET Framework), and an inner exception
   * " ---> System.X: ..." under it. */
  if (starts(s, n, "Unhandled exception. ") ||
      starts(s, n, "Unhandled Exception: ")) {
    *skip = 21;
    *type_len = sm__exc_type_len(s + 21, n - 21);
    return *type_len > 0 ? SM__RT_DOTNET_HEAD : SM__RT_NONE;
  }
  for (k = 0; k < n && k < 8 && s[k] == ' '; k++)
    ;
  if (starts(s + k, n - k, "---> ")) {
    *skip = k + 5;
    *type_len = sm__exc_type_len(s + *skip, n - *skip);
    return *type_len > 0 ? SM__RT_DOTNET_INNER : SM__RT_NONE;
  }
  if ((*type_len = julia_error(s, n, skip)) > 0)
    return SM__RT_JULIA;
  if (starts(s, n, "Caused by: ")) {
    *skip = 11;
    *type_len = sm__exc_type_len(s + 11, n - 11);
    return *type_len > 0 ? SM__RT_JAVA_CAUSE : SM__RT_NONE;
  }
  if (starts(s, n, "Exception in thread \"")) {
    const char *q = memchr(s + 21, '"', n - 21);
    if (q == NULL || (size_t)(q - s) + 2 >= n || q[1] != ' ')
      return SM__RT_NONE;
    *skip = (size_t)(q - s) + 2;
    *type_len = sm__exc_type_len(s + *skip, n - *skip);
    return *type_len > 0 ? SM__RT_JAVA_HEAD : SM__RT_NONE;
  }
  if (starts(s, n, "panic: ") && n > 7) {
    *type_len = 5;
    return SM__RT_GO_PANIC;
  }
  if (starts(s, n, "thread '")) {
    const char *q = memchr(s + 8, '\'', n - 8);
    if (q != NULL && starts(q, (size_t)(s + n - q), "' panicked at")) {
      *type_len = (int)(q - s) + 10;
      return SM__RT_RUST_PANIC;
    }
    return SM__RT_NONE;
  }
  if (starts(s, n, thr)) {
    for (k = sizeof(thr) - 1; k < n && k < 300 && s[k] != '\''; k++)
      ;
    if (k >= n || s[k] != '\'' || k == sizeof(thr) - 1)
      return SM__RT_NONE;
    *skip = sizeof(thr) - 1;
    *type_len = (int)(k - *skip);
    return SM__RT_CXX_THROW;
  }
  return SM__RT_NONE;
}

/* Structural kind of a message, or SM__K_NORMAL. */
static int structure(const char *m, size_t n) {
  size_t i = 0, tn;
  const char *t;

  while (i < n && SM__IS_BLANK(m[i]))
    i++;
  t = m + i;
  tn = n - i;

  if (tn == 0)
    return SM__K_BLANK;
  if (starts(t, tn, "Traceback (most recent call last)") ||
      starts(t, tn, "Original Traceback (most recent call last)") ||
      starts(t, tn, "Stack (most recent call"))
    return SM__K_TB_HEADER;
  /* A launcher's failure summary quotes the worker's traceback as a
   * field: torchrun's "traceback : Traceback (most recent call last):". */
  if (starts(t, tn, "traceback")) {
    size_t k = 9;
    while (k < tn && t[k] == ' ')
      k++;
    if (k < tn && t[k] == ':') {
      k++;
      while (k < tn && t[k] == ' ')
        k++;
      if (starts(t + k, tn - k, "Traceback (most recent call last)"))
        return SM__K_TB_HEADER;
    }
  }
  if (rich_box(t, tn)) {
    if (memmem(t, tn, "Traceback", 9) != NULL)
      return SM__K_TB_HEADER;
    return SM__K_TB_FRAME;
  }
  if (starts(t, tn, "During handling of the above exception") ||
      starts(t, tn, "The above exception was the direct cause"))
    return SM__K_CHAIN;
  /* IPython: "KeyError          Traceback (most recent call last)". */
  if (i == 0 && memmem(t, SM_MIN(tn, (size_t)160),
                       "Traceback (most recent call last)", 33) != NULL) {
    const char *sp = memchr(t, ' ', tn);
    if (sp != NULL && sm__exc_type_len(t, (size_t)(sp - t)) > 0)
      return SM__K_TB_HEADER;
  }
  if (starts(t, tn, "File \"") && memmem(t, tn, "\", line ", 8) != NULL)
    return SM__K_TB_FRAME;
  /* IPython frames: "File ~/x.py:3", "File /a/b.py:12, in f()",
   * "/a/b.py in f(x)", "<ipython-input-2-abc> in <module>". */
  if (i == 0 && starts(t, tn, "File ") && tn > 5 &&
      (t[5] == '/' || t[5] == '~' || t[5] == '<' || t[5] == '.' ||
       (tn > 7 && t[6] == ':' && (t[7] == '\\' || t[7] == '/')))) {
    const char *c = memchr(t + 5, ':', tn - 5);
    while (c != NULL && !(c + 1 < t + tn && isdigit((unsigned char)c[1])))
      c = memchr(c + 1, ':', (size_t)(t + tn - c - 1));
    if (c != NULL)
      return SM__K_TB_FRAME;
  }
  if (i == 0 && (t[0] == '/' || t[0] == '<' || t[0] == '~') &&
      memmem(t, SM_MIN(tn, (size_t)400), " in ", 4) != NULL) {
    const char *in = memmem(t, SM_MIN(tn, (size_t)400), " in ", 4);
    if ((in - t > 3 && memcmp(in - 3, ".py", 3) == 0) || in[-1] == '>')
      return SM__K_TB_FRAME;
  }
  /* Frames of other runtimes, indented: the JVM's "at pkg.Cls.m(F.java:41)"
   * and "... 12 more", Go's "/src/main.go:42 +0x1d", Rust's numbered
   * backtrace entries "  3: std::rt::lang_start" and their "at /path". */
  if (i > 0 && runtime_frame(t, tn))
    return SM__K_TB_FRAME;
  /* Go: "goroutine 1 [running]:" opens the panicking goroutine's stack. */
  if (i == 0 && starts(t, tn, "goroutine ") && tn > 11 &&
      isdigit((unsigned char)t[10]) && memchr(t, '[', tn) != NULL &&
      t[tn - 1] == ':')
    return SM__K_TB_FRAME;
  /* IPython source arrows "----> 12 x = f()" (not .NET's inner
   * exception "---> System.IO.IOException: ..."). */
  if (tn > 3 && t[0] == '-' && t[1] == '-' && memchr(t, '>', SM_MIN(tn, 12))) {
    size_t k = 0;
    while (k < tn && t[k] == '-')
      k++;
    if (k < tn && t[k] == '>' &&
        !(k + 2 < tn && t[k + 1] == ' ' && isupper((unsigned char)t[k + 2])))
      return SM__K_TB_CODE;
  }
  /* Julia's stack header and the file it was running, under its error. */
  if (i == 0 && ((tn <= 12 && starts(t, tn, "Stacktrace:")) ||
                 starts(t, tn, "in expression starting at ")))
    return SM__K_TB_FRAME;
  return SM__K_NORMAL;
}

/* ==== Line evaluation ==== */

int sm__lctx_init(sm__lctx *c, const sm_sigdb *db, sm_err *err) {
  const sm_protoset *ps = &sm__protoset_failure;

  memset(c, 0, sizeof(*c));
  if (sm__matcher_init(&c->m, db) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  c->cls = sm_linecls_new(ps);
  if (c->cls == NULL) {
    sm__matcher_release(&c->m);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  c->c_normal = sm_protoset_class(ps, "normal");
  c->c_benign = sm_protoset_class(ps, "benign");
  c->c_cascade = sm_protoset_class(ps, "cascade");
  c->c_infra = sm_protoset_class(ps, "infrastructure");
  c->c_framework = sm_protoset_class(ps, "framework");
  c->c_user = sm_protoset_class(ps, "user");
  c->weak_min = 0.55f;
  return 0;
}

void sm__lctx_release(sm__lctx *c) {
  sm__matcher_release(&c->m);
  sm_linecls_free(c->cls);
  c->cls = NULL;
}

void sm__line_eval(sm__lctx *c, sm__line *l) {
  const char *m;
  size_t mn, mcap;
  int kind, xid;
  const sm__sig *sig;

  c->lines++;
  l->msg = sm__line_prefix(l->text, l->len, &l->ts);
  l->level = sm__line_level(l->text, l->len);
  m = l->text + l->msg;
  mn = l->len - l->msg;
  l->sig = NULL;
  l->xid = -1;
  l->cls = -1;
  l->cls_score = 0;
  l->exc_len = 0;
  l->rt = SM__RT_NONE;
  kind = structure(m, mn);
  if (kind == SM__K_BLANK || kind == SM__K_TB_HEADER ||
      kind == SM__K_TB_FRAME || kind == SM__K_CHAIN || kind == SM__K_TB_CODE) {
    l->kind = kind;
    return;
  }
  {
    size_t skip;
    int tl, rt = sm__runtime_error(m, mn, &skip, &tl);
    if (rt != SM__RT_NONE) {
      /* Another runtime's error: its signature, if any, is matched on
       * what follows the form's words. */
      l->rt = rt;
      /* The C++ form only says that something was thrown: a cascade
       * symptom until the window shows the message under it has no
       * cause of its own (cause.c promotes it then). */
      if (rt != SM__RT_CXX_THROW) {
        l->msg += skip;
        m += skip;
        mn -= skip;
        l->exc_len = tl;
      }
      goto match;
    }
  }
  l->exc_len = sm__exc_type_len(m, mn);
  /* An exception line quoted with a small indentation (a launcher's
   * failure summary, a pasted excerpt): the type after the blanks.  Deeper
   * indentation is source code shown under a frame. */
  if (l->exc_len == 0 && mn > 0 && m[0] == ' ') {
    size_t k = 0;
    while (k < mn && k <= EXC_INDENT && m[k] == ' ')
      k++;
    if (k <= EXC_INDENT && (l->exc_len = sm__exc_type_len(m + k, mn - k)) > 0) {
      l->msg += k;
      m += k;
      mn -= k;
    }
  }
match:
  mcap = mn < MATCH_CAP ? mn : MATCH_CAP;
  sig = sm__sigdb_match(&c->m, m, mcap, &xid);
  if (sig != NULL) {
    int role = sig->role;
    if (xid >= 0) {
      const sm__xid *x = sm__sigdb_xid(c->m.db, xid);
      if (x != NULL)
        role = x->role;
    }
    l->sig = sig;
    l->xid = xid;
    l->kind = role == SM__ROLE_BENIGN    ? SM__K_BENIGN
              : role == SM__ROLE_SYMPTOM ? SM__K_SYMPTOM
                                         : SM__K_CAUSE;
    /* A program that logs a message as information did not fail on it
     * ("INFO: Unable to initialize backend 'tpu': ... cannot open shared
     * object file"): weak evidence at most, never a cause. */
    if (l->kind == SM__K_CAUSE && l->level == SM__LVL_INFO)
      l->kind = SM__K_NOTICE;
    return;
  }
  if (l->exc_len > 0) {
    l->kind =
        ends_with(m, (size_t)l->exc_len, "Warning") ? SM__K_BENIGN : SM__K_EXC;
    return;
  }
  l->kind = SM__K_NORMAL;
  if (c->cls != NULL && l->level != SM__LVL_INFO) {
    float sc;
    int cl =
        sm_linecls_classify(c->cls, l->text, SM_MIN(l->len, (size_t)4096), &sc);
    if (cl >= 0 && sc >= c->weak_min &&
        (cl == c->c_infra || cl == c->c_framework || cl == c->c_user ||
         cl == c->c_cascade)) {
      l->kind = SM__K_WEAK;
      l->cls = cl;
      l->cls_score = sc;
    }
  }
}

int sm__line_strength(const sm__line *l) {
  switch (l->kind) {
  case SM__K_CAUSE:
    return l->sig->generic ? 2 : 3;
  case SM__K_EXC:
    return 3;
  case SM__K_SYMPTOM:
  case SM__K_WEAK:
  case SM__K_NOTICE:
    return 1;
  case SM__K_TB_HEADER:
  case SM__K_TB_FRAME:
  case SM__K_TB_CODE:
  case SM__K_CHAIN:
    return 0;
  default:
    return -1;
  }
}

int sm__line_failing(const sm__line *l) {
  return sm__line_strength(l) >= 0;
}

int sm__line_strong(const sm__line *l) {
  return l->kind == SM__K_CAUSE || l->kind == SM__K_EXC ||
         l->kind == SM__K_SYMPTOM || l->kind == SM__K_TB_HEADER;
}
