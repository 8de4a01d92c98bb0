/* cause.c - from the first failing line to the root cause and its class.
 *
 * Inside the window the locator read, this file applies what an operator
 * knows about cascades, then classifies the chosen line:
 *
 *   1. Python tracebacks are segmented (header, frames, source lines, the
 *      exception line that ends them; IPython and rich layouts too).
 *      Lines inside a traceback are structure, never the cause.
 *   2. From the first failing line, the first cause in its episode wins
 *      over symptoms printed before it (launcher teardown, SIGTERM, NCCL
 *      watchdog reports, scheduler kill notices).  A specific cause is
 *      preferred to a generic one ("CUDA error: unspecified launch
 *      failure") only for the class, not for the line.
 *   3. An exception reached through "During handling of the above
 *      exception" or "The above exception was the direct cause" goes back
 *      to the first exception of the chain.
 *   4. Where nearby causes carry timestamps, the earliest one wins
 *      (interleaved ranks).
 *   5. The class comes from the signature (an Xid code through the Xid
 *      table); a generic signature takes it from a specific one in the
 *      context; an exception without signature is judged from the
 *      exception table and the traceback frames (raised in the user's code
 *      or in a library called by it: user; only library frames: the
 *      library's class; the frames of an exception include those of the
 *      later tracebacks of its chain, and installer entry-point scripts
 *      are library frames); import errors from the module named (a
 *      third-party package: framework; the job's own module: user); an
 *      out-of-memory report from its arithmetic (memory of a shared GPU
 *      held by other processes: infrastructure).
 *   6. A setting of the job's communication stack shown before an
 *      infrastructure fault it governs, with no training progress in
 *      between, makes the fault the job's configuration.
 *   7. A worker's exception re-raised by its parent is reported at the
 *      parent's line, where the error first appears.
 *
 * Nothing here names a particular message: that is the signature file's
 * job. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "failure/failure_int.h"

#define EPISODE 256       /* lines after the first failing line */
#define TS_LOOKAHEAD 64   /* lines searched for an earlier timestamp */
#define MAX_CHAIN 16      /* exception-chain steps followed */
#define EVIDENCE_TEXT 512 /* bytes of a quoted line */

/* A classification. */
typedef struct verdict {
  int cat, comp;      /* SM__CAT_*, SM__COMP_* */
  double conf;        /* confidence */
  int retryable;      /* 1/0 */
  const sm__sig *sig; /* signature that decided, or NULL */
  int xid;            /* Xid code that decided, or -1 */
  int ev;             /* SM__EV_*: what an infrastructure verdict rests on */
  char cause[320];    /* root-cause sentence */
  char reason[320];   /* how it was decided */
} verdict;

/* Traceback segmentation of a window. */
typedef struct segs {
  char *in_tb; /* 1 for lines inside a traceback */
  int *start;  /* for an exception line ending a block: its first line */
  int *exc_of; /* for a line inside a block: the exception line, or -1 */
  int *prog;   /* prog[i]: lines of training progress in [0, i) */
} segs;

/* Lines of training progress strictly between lines i and j. */
static int progress_between(const segs *s, int i, int j) {
  int lo = i < j ? i : j, hi = i < j ? j : i;
  return hi - lo >= 2 ? s->prog[hi] - s->prog[lo + 1] : 0;
}

static const char *msg_of(const sm__line *l, size_t *n) {
  *n = l->len - l->msg;
  return l->text + l->msg;
}

static int indented(const sm__line *l) {
  size_t n;
  const char *m = msg_of(l, &n);
  size_t i = 0;

  if (n == 0 || (m[0] != ' ' && m[0] != '\t'))
    return 0;
  while (i < n && (m[i] == ' ' || m[i] == '\t'))
    i++;
  return i < n;
}

/* ==== Tracebacks ==== */

/* Length of a bare exception name ("queue.Empty", "mod.Stop: x") that ends
 * a traceback, or 0: a dotted identifier at the start of the message,
 * followed by ':' or the end of the line. */
static int bare_exception(const sm__line *l) {
  size_t n, i = 0;
  const char *m = msg_of(l, &n);
  int letter = 0;

  while (i < n &&
         (isalnum((unsigned char)m[i]) || m[i] == '_' || m[i] == '.')) {
    letter |= isalpha((unsigned char)m[i]) != 0;
    i++;
  }
  if (i == 0 || !letter || !isalpha((unsigned char)m[0]) || m[i - 1] == '.')
    return 0;
  return (i == n || m[i] == ':') && i < 200 ? (int)i : 0;
}

static void segment(sm__window *w, segs *s) {
  int i = 0;

  for (int k = 0; k < w->n; k++) {
    s->in_tb[k] = 0;
    s->start[k] = -1;
    s->exc_of[k] = -1;
  }
  while (i < w->n) {
    int k = w->lines[i].kind, j, e;
    if (k != SM__K_TB_HEADER && k != SM__K_TB_FRAME && k != SM__K_TB_CODE) {
      i++;
      continue;
    }
    for (j = i + 1; j < w->n; j++) {
      int kj = w->lines[j].kind;
      if (kj == SM__K_TB_FRAME || kj == SM__K_TB_CODE || kj == SM__K_BLANK)
        continue;
      if (kj == SM__K_TB_HEADER)
        break;
      if (indented(&w->lines[j]))
        continue;
      break;
    }
    e = j;
    while (e > i && w->lines[e - 1].kind == SM__K_BLANK)
      e--;
    for (int q = i; q < e; q++)
      s->in_tb[q] = 1;
    /* The line after the frames names the exception even when its type
     * does not end in Error or Exception. */
    if (j < w->n && w->lines[j].exc_len == 0 &&
        w->lines[j].kind != SM__K_BENIGN && w->lines[j].kind != SM__K_SYMPTOM &&
        w->lines[j].kind != SM__K_CAUSE) {
      int bl = bare_exception(&w->lines[j]);
      if (bl > 0) {
        w->lines[j].exc_len = bl;
        w->lines[j].kind = SM__K_EXC;
      }
    }
    if (j < w->n && w->lines[j].exc_len > 0 && e == j) {
      s->start[j] = i;
      for (int q = i; q < e; q++)
        s->exc_of[q] = j;
    } else if (j < w->n && w->lines[j].exc_len > 0) {
      /* Blank lines between the frames and the exception (IPython). */
      s->start[j] = i;
      for (int q = i; q < e; q++)
        s->exc_of[q] = j;
    }
    i = j > i ? j : i + 1;
  }
}

static int eff_strength(const sm__window *w, const segs *s, int i) {
  int st = sm__line_strength(&w->lines[i]);

  if (s->in_tb[i])
    return st >= 0 ? 0 : -1;
  return st;
}

/* The exception that an exception line's chain started with. */
static int chain_root(const sm__window *w, const segs *s, int x, int *steps) {
  for (int k = 0; k < MAX_CHAIN; k++) {
    int b = s->start[x], j;
    if (b < 0)
      break;
    j = b - 1;
    while (j >= 0 && w->lines[j].kind == SM__K_BLANK)
      j--;
    if (j < 0 || w->lines[j].kind != SM__K_CHAIN)
      break;
    j--;
    while (j >= 0 && w->lines[j].kind == SM__K_BLANK)
      j--;
    if (j < 0 || w->lines[j].exc_len == 0)
      break;
    x = j;
    (*steps)++;
  }
  return x;
}

/* Finds the file path in a frame line; returns its length (0 if none). */
static size_t frame_path(const sm__line *l, const char **path) {
  size_t n;
  const char *m = msg_of(l, &n);
  const char *p = m, *end = m + n;

  /* Python: File "PATH", line N, in NAME (the path may lack ".py"). */
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (end - p > 6 && memcmp(p, "File \"", 6) == 0) {
    const char *q = memchr(p + 6, '"', (size_t)(end - p - 6));
    if (q != NULL && q > p + 6) {
      *path = p + 6;
      return (size_t)(q - (p + 6));
    }
  }
  p = m;

  while ((p = memmem(p, (size_t)(end - p), ".py", 3)) != NULL) {
    const char *a = p, *b = p + 3;
    if (b < end && (isalnum((unsigned char)*b) || *b == '_')) {
      p = b;
      continue;
    }
    while (a > m && a[-1] != '"' && a[-1] != '\'' && a[-1] != ' ' &&
           a[-1] != '\t')
      a--;
    *path = a;
    return (size_t)(b - a);
  }
  p = memchr(m, '<', n);
  if (p != NULL) {
    const char *q = memchr(p, '>', (size_t)(end - p));
    if (q != NULL) {
      *path = p;
      return (size_t)(q - p) + 1;
    }
  }
  return 0;
}

/* A launcher script an installer wrote for a package's entry point
 * (".../env/bin/mace_run_train", "...\\Scripts\\accelerate"): a file
 * without an extension in a "bin" or "Scripts" directory.  It only calls
 * the package: not the job's code. */
static int entry_point_shim(const char *p, size_t n) {
  size_t e = n, b;

  while (e > 0 && p[e - 1] != '/' && p[e - 1] != '\\')
    e--;
  if (e == 0 || e == n || memchr(p + e, '.', n - e) != NULL)
    return 0;
  b = e - 1;
  while (b > 0 && p[b - 1] != '/' && p[b - 1] != '\\')
    b--;
  return (e - 1 - b == 3 && memcmp(p + b, "bin", 3) == 0) ||
         (e - 1 - b == 7 && memcmp(p + b, "Scripts", 7) == 0);
}

/* Directories of code that a library fetched at run time and imports as
 * its own (Hugging Face's trust_remote_code modules, torch.hub's cache):
 * the model author's code, written for some version of the library, not
 * the job's. */
static const char *const fetched_roots[] = {"transformers_modules", "torch/hub",
                                            "torch\\hub"};

static int path_sep(char ch) {
  return ch == '/' || ch == '\\';
}

/* The index of the fetched-code root that p[0..n) lies under, or -1: the
 * root only as whole directories with more path after them, so that the
 * library's own module of the same name (torch's hub.py, a
 * transformers_modules.py of one's own) is not taken for its cache. */
static int fetched_root(const char *p, size_t n) {
  for (size_t i = 0; i < SM_ARRAY_LEN(fetched_roots); i++) {
    size_t rl = strlen(fetched_roots[i]);
    for (const char *q = p;
         (q = memmem(q, (size_t)(p + n - q), fetched_roots[i], rl)) != NULL;
         q++) {
      size_t after = (size_t)(q - p) + rl;
      if ((q == p || path_sep(q[-1])) && after + 1 < n && path_sep(p[after]))
        return (int)i;
    }
  }
  return -1;
}

static int library_path(const char *p, size_t n) {
  static const char *const marks[] = {
      "site-packages", "dist-packages", "/lib/python", "\\lib\\python",
      "\\Lib\\",       "<frozen",       "<string>",    "/usr/lib/"};

  if (fetched_root(p, n) >= 0)
    return 1;
  for (size_t i = 0; i < SM_ARRAY_LEN(marks); i++)
    if (memmem(p, n, marks[i], strlen(marks[i])) != NULL)
      return 1;
  return entry_point_shim(p, n);
}

/* Frames of the traceback that ends at exception line x. */
typedef struct frames {
  int n;          /* frame lines */
  int n_user;     /* frames in the job's own code */
  int innermost;  /* index of the last frame, -1 */
  int inner_user; /* index of the last user frame, -1 */
  /* Of the exception's own traceback: the package of the first library
   * frame after the job's last frame (the library the job called) and the
   * package of the innermost frame (the code that raised); "" if none. */
  char called[48], raised[48];
} frames;

static void frames_init(frames *f) {
  memset(f, 0, sizeof(*f));
  f->innermost = f->inner_user = -1;
}

/* The package a library frame's path p[0..n) belongs to, into out: the
 * directory or module after site-packages/dist-packages, "stdlib" for the
 * interpreter's own library. */
static void frame_package(const char *p, size_t n, char *out, size_t cap) {
  static const char *const roots[] = {"site-packages", "dist-packages"};
  const char *q = NULL;
  size_t k = 0;
  int r = fetched_root(p, n);

  if (r >= 0) {
    snprintf(out, cap, "%s", fetched_roots[r]);
    return;
  }
  for (size_t i = 0; i < SM_ARRAY_LEN(roots) && q == NULL; i++) {
    size_t off;
    q = memmem(p, n, roots[i], strlen(roots[i]));
    if (q == NULL)
      continue;
    /* Past the root and its separator, as an offset: a path that ends
     * in the root has no package, and no pointer past its end is made. */
    off = (size_t)(q - p) + strlen(roots[i]) + 1;
    q = off < n ? p + off : p + n;
  }
  if (q == NULL || q >= p + n) {
    snprintf(out, cap, "stdlib");
    return;
  }
  while (q + k < p + n && k + 1 < cap && q[k] != '/' && q[k] != '\\' &&
         q[k] != '.')
    k++;
  memcpy(out, q, k);
  out[k] = '\0';
}

/* Counts line i in f when it is a frame with a path: the innermost so
 * far, and the job's own unless the path is a library's. */
static void add_frame(const sm__window *w, int i, frames *f) {
  const char *p;
  size_t pn;

  if (w->lines[i].kind != SM__K_TB_FRAME)
    return;
  pn = frame_path(&w->lines[i], &p);
  if (pn == 0)
    return;
  f->n++;
  f->innermost = i;
  if (!library_path(p, pn)) {
    f->n_user++;
    f->inner_user = i;
    f->called[0] = f->raised[0] = '\0';
    return;
  }
  frame_package(p, pn, f->raised, sizeof(f->raised));
  if (f->n_user > 0 && f->called[0] == '\0')
    memcpy(f->called, f->raised, sizeof(f->called));
}

static void collect_frames(const sm__window *w, const segs *s, int x,
                           frames *f) {
  frames_init(f);
  if (x < 0 || s->start[x] < 0)
    return;
  for (int i = s->start[x]; i < x; i++)
    add_frame(w, i, f);
}

/* Adds the frames of the block that ends at exception line x to f,
 * keeping f's innermost frame: they are outer frames of the same stack. */
static void add_outer_frames(const sm__window *w, const segs *s, int x,
                             frames *f) {
  frames g;

  collect_frames(w, s, x, &g);
  f->n += g.n;
  f->n_user += g.n_user;
  if (f->inner_user < 0)
    f->inner_user = g.inner_user;
  if (f->innermost < 0)
    f->innermost = g.innermost;
}

/* The frames of exception x and of the exceptions its chain leads to
 * ("The above exception was the direct cause of the following
 * exception:", "During handling of the above exception, another exception
 * occurred:"): the later tracebacks show the outer part of the stack,
 * where the job's code called the library that raised x. */
/* The exception line of the traceback that a chain marker right after
 * exception line x leads to, or -1. */
static int chain_next(const sm__window *w, const segs *s, int x) {
  int j = x + 1;

  while (j < w->n && w->lines[j].kind == SM__K_BLANK)
    j++;
  if (j >= w->n || w->lines[j].kind != SM__K_CHAIN)
    return -1;
  j++;
  while (j < w->n && w->lines[j].kind == SM__K_BLANK)
    j++;
  return j < w->n ? s->exc_of[j] : -1;
}

static void chain_frames(const sm__window *w, const segs *s, int x, frames *f) {
  collect_frames(w, s, x, f);
  for (int k = 0; k < MAX_CHAIN; k++) {
    if ((x = chain_next(w, s, x)) < 0)
      break;
    add_outer_frames(w, s, x, f);
  }
}

/* The first later exception of x's chain that a cause signature of a
 * known class matches, or -1: an operating system's word for what
 * happened (TimeoutError, ConnectionRefusedError: no class, or a guess of
 * the network from the type alone) is explained by the library that
 * caught it and said where ("urllib3 ... HTTPSConnectionPool(host=...):
 * Read timed out", "host='localhost', port=8097 ... refused"), as a
 * generic line is by a specific one nearby. */
static int chain_explained(const sm__window *w, const segs *s, int x) {
  for (int k = 0; k < MAX_CHAIN; k++) {
    const sm__line *l;
    if ((x = chain_next(w, s, x)) < 0)
      return -1;
    l = &w->lines[x];
    if (l->sig != NULL && l->sig->role == SM__ROLE_CAUSE && !l->sig->generic &&
        l->sig->category != SM__CAT_UNKNOWN)
      return x;
  }
  return -1;
}

/* 1 if the top-level module name occurs as a directory or file of a user
 * frame (the job's own module). */
static int own_module(const sm__window *w, const segs *s, int x,
                      const char *mod, size_t mn) {
  if (s->start[x] < 0 || mn == 0)
    return 0;
  for (int i = s->start[x]; i < x; i++) {
    const char *p, *q;
    size_t pn;
    if (w->lines[i].kind != SM__K_TB_FRAME)
      continue;
    pn = frame_path(&w->lines[i], &p);
    if (pn == 0 || library_path(p, pn))
      continue;
    for (q = p; (q = memmem(q, (size_t)(p + pn - q), mod, mn)) != NULL; q++) {
      char before = q > p ? q[-1] : '/';
      char after = q + mn < p + pn ? q[mn] : '/';
      if ((before == '/' || before == '\\') &&
          (after == '/' || after == '\\' || after == '.'))
        return 1;
    }
  }
  return 0;
}

/* ==== Classification ==== */

static void set_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* Copies the text after "marker'" up to the next quote into out. */
static size_t quoted_after(const char *m, size_t n, const char *marker,
                           char *out, size_t cap) {
  const char *p = memmem(m, n, marker, strlen(marker));
  const char *q, *e;
  size_t l;

  if (p == NULL)
    return 0;
  q = p + strlen(marker);
  e = memchr(q, '\'', (size_t)(m + n - q));
  if (e == NULL)
    return 0;
  l = (size_t)(e - q);
  if (l >= cap)
    l = cap - 1;
  memcpy(out, q, l);
  out[l] = '\0';
  return l;
}

static void from_sig(const sm_sigdb *db, const sm__sig *sig, int xid,
                     verdict *v) {
  const sm__xid *x = xid >= 0 ? sm__sigdb_xid(db, xid) : NULL;

  v->sig = sig;
  v->cat = sig->category;
  v->comp = sig->component;
  v->conf = sig->confidence;
  v->retryable = sig->retryable;
  /* A generic message says that something failed, not that a part is
   * broken. */
  v->ev = sig->generic ? SM__EV_INFERRED : sig->evidence;
  set_text(v->cause, sizeof(v->cause), sig->cause ? sig->cause : sig->name);
  snprintf(v->reason, sizeof(v->reason), "signature %s", sig->name);
  if (x != NULL) {
    v->xid = xid;
    v->ev = SM__EV_FAULT; /* the driver's own report about the GPU */
    v->cat = x->category;
    v->comp = x->component;
    v->conf = x->confidence;
    v->retryable = x->retryable;
    snprintf(v->cause, sizeof(v->cause), "Xid %d%s%s: %s", xid,
             x->name ? " " : "", x->name ? x->name : "",
             x->cause ? x->cause : "GPU driver error");
    snprintf(v->reason, sizeof(v->reason), "signature %s, Xid %d table",
             sig->name, xid);
  } else if (xid >= 0) {
    v->xid = xid;
    v->ev = SM__EV_INFERRED;
    v->conf = SM_MIN(v->conf, 0.6);
    snprintf(v->cause, sizeof(v->cause), "Xid %d (not in the Xid table)", xid);
  }
}

/* Own module or third-party package behind an import error at x, or
 * behind an attribute missing from a module ("module 'numpy' has no
 * attribute 'float'"). */
/* 1 if the import that failed at exception line x ran in a library: the
 * innermost frame of its traceback is a library's (a package importing
 * its own dependency), and the job's code is further out. */
static int import_by_library(const sm__window *w, const segs *s, int x) {
  frames f;

  collect_frames(w, s, x, &f);
  return f.innermost >= 0 && f.innermost != f.inner_user && f.n_user > 0;
}

static void resolve_import(const sm_sigdb *db, const sm__window *w,
                           const segs *s, int x, verdict *v) {
  const sm__line *l = &w->lines[x];
  size_t n, mn;
  const char *m = msg_of(l, &n);
  char mod[160] = "", top[160];
  const char *dot, *what;
  int attr = 0;

  if (quoted_after(m, n, "No module named '", mod, sizeof(mod)) == 0 &&
      quoted_after(m, n, "from '", mod, sizeof(mod)) == 0)
    attr = quoted_after(m, n, "module '", mod, sizeof(mod)) > 0;
  what = attr ? "lacks an attribute the code uses" : "cannot be imported";
  dot = strchr(mod, '.');
  mn = dot ? (size_t)(dot - mod) : strlen(mod);
  memcpy(top, mod, mn);
  top[mn] = '\0';
  if (mn > 0 && own_module(w, s, x, top, mn)) {
    v->cat = SM__CAT_USER;
    v->conf = 0.8;
    snprintf(v->cause, sizeof(v->cause),
             "the job's own module '%s' %s (path or name error in the job)",
             mod, what);
    snprintf(v->reason, sizeof(v->reason),
             "signature %s: '%s' is a directory or file of the job's own "
             "frames",
             v->sig->name, top);
  } else if (mn > 0 && (sm__sigdb_is_package(db, top, mn) ||
                        memmem(m, n, "site-packages", 13) != NULL ||
                        memmem(m, n, "dist-packages", 13) != NULL)) {
    v->cat = SM__CAT_FRAMEWORK;
    v->conf = 0.8;
    snprintf(v->cause, sizeof(v->cause),
             attr ? "installed package '%s' lacks an attribute the code "
                    "uses: another version than the code was written for"
                  : "installed package '%s' is missing or incompatible with "
                    "the code or with another package",
             mod);
    snprintf(v->reason, sizeof(v->reason),
             "signature %s: '%s' is a third-party package", v->sig->name, top);
  } else if (mn > 0) {
    /* Not a known package: the job's own module or environment, unless a
     * package's own code imported it (its dependency, at a version or
     * under a name that does not fit: the wrong "apex" from the package
     * index importing 'pyramid'): then the environment's. */
    int lib = import_by_library(w, s, x);
    v->cat = lib ? SM__CAT_FRAMEWORK : SM__CAT_USER;
    v->conf = 0.6;
    snprintf(v->cause, sizeof(v->cause),
             lib ? "module '%s' %s where an installed package imports it: a "
                   "dependency of the environment is missing or of another "
                   "version"
                 : "module '%s' %s: not a known package, so the job's own "
                   "module or environment is at fault",
             mod, what);
    snprintf(v->reason, sizeof(v->reason),
             lib ? "signature %s: '%s' is imported by a library frame, not "
                   "by the job's code"
                 : "signature %s: '%s' is not a known third-party package",
             v->sig->name, top);
  }
}

/* 1 if the code that raised belongs to another package than the library
 * the job's code called (the standard library under a library too). */
static int library_handed(const frames *f) {
  return f->called[0] != '\0' && f->raised[0] != '\0' &&
         strcmp(f->called, f->raised) != 0 && strcmp(f->called, "stdlib") != 0;
}

/* Class of an exception of type tname (its last dotted part) from its
 * table entry and the frames f of its traceback. */
static void judge_exception(const sm_sigdb *db, const char *tname,
                            const frames *f, verdict *v, int have_sig) {
  const sm__exc *e = sm__sigdb_exc(db, tname);
  int cat_u, cat_l;
  double conf;
  const char *where;
  char wbuf[192]; /* the text below and two package names of 47 bytes */

  cat_u = e ? e->category : SM__CAT_USER;
  cat_l = e && e->library_category >= 0 ? e->library_category
                                        : (e ? e->category : SM__CAT_FRAMEWORK);
  conf = e ? e->confidence : 0.5;
  if (have_sig) {
    /* The signature gave the default; frames only refine user/framework. */
    cat_u = v->cat;
    cat_l = v->cat;
    conf = v->conf;
    if (v->cat == SM__CAT_USER || v->cat == SM__CAT_FRAMEWORK)
      cat_l = SM__CAT_FRAMEWORK;
  }
  if (f->n == 0) {
    v->cat = cat_u;
    v->conf = conf - 0.1;
    where = "no traceback frames";
  } else if (f->innermost == f->inner_user) {
    v->cat = cat_u;
    v->conf = conf + 0.1;
    where = "raised in the job's own code";
  } else if (f->n_user > 0 && !have_sig && cat_l == SM__CAT_FRAMEWORK &&
             library_handed(f)) {
    /* The job called one library and another package (or the standard
     * library) raised, called by the first: the value that failed is one
     * the library passed on, and the two disagree (versions that do not
     * fit, a library bug).  The library's class, weakly; where the table
     * gives a library's raise no class of its own (OSError: an errno about
     * the environment or the data), the handing-over decides nothing. */
    v->cat = cat_l;
    v->conf = conf - 0.15;
    snprintf(wbuf, sizeof(wbuf),
             "raised in %s under %s, which the job's code called: a value "
             "one library handed to another",
             f->raised, f->called);
    where = wbuf;
  } else if (f->n_user > 0) {
    v->cat = cat_u;
    v->conf = conf;
    where = "raised inside a library called from the job's code";
  } else {
    v->cat = cat_l;
    v->conf = conf - 0.05;
    where = "only library frames on the stack";
  }
  if (!have_sig) {
    v->comp = e ? e->component : SM__COMP_NONE;
    if (e && e->cause)
      snprintf(v->cause, sizeof(v->cause), "%s (%s)", e->cause, tname);
    else
      snprintf(v->cause, sizeof(v->cause), "%s %s", tname, where);
  }
  snprintf(v->reason, sizeof(v->reason), "%s%s%s: %s",
           have_sig ? "signature " : "exception ",
           have_sig ? v->sig->name : tname, e && !have_sig ? " (table)" : "",
           where);
}

/* The last dotted part of a type name s[0..n) into out; for a wrapper
 * that names the original type ("RayTaskError(KeyError)"), the
 * original's. */
static void type_tail(const char *s, size_t n, char *out, size_t cap) {
  const char *t = s,
             *open = n > 2 && s[n - 1] == ')' ? memchr(s, '(', n) : NULL;

  if (open != NULL) {
    n = (size_t)(s + n - 1 - (open + 1));
    s = t = open + 1;
  }

  for (size_t k = n; k > 0; k--)
    if (s[k - 1] == '.') {
      t = s + k;
      break;
    }
  n = (size_t)(s + n - t);
  if (n >= cap)
    n = cap - 1;
  memcpy(out, t, n);
  out[n] = '\0';
}

#define WORDS_MIN 0.45f /* cosine at which the message's words decide */

/* An exception without a signature and without frames (a pasted error
 * line, a launcher's one-line summary) of a type that is the job's or a
 * library's depending on where it was raised: with nothing to go by but
 * its message, the line classifier's reading of the words decides user or
 * framework when it is clear enough (the wording of version and API
 * problems against that of the job's data and arguments).  Never
 * infrastructure: words alone locate no part. */
static void words_decide(sm__lctx *c, const sm_sigdb *db, const sm__line *l,
                         const char *tname, verdict *v) {
  const sm__exc *e = sm__sigdb_exc(db, tname);
  float sc = 0;
  int cl, cat;

  if (e != NULL &&
      (e->library_category < 0 || e->library_category == e->category))
    return; /* the type alone decides */
  cl = sm_linecls_classify(c->cls, l->text + l->msg,
                           SM_MIN(l->len - l->msg, (size_t)4096), &sc);
  if (cl < 0 || sc < WORDS_MIN)
    return;
  cat = cl == c->c_framework ? SM__CAT_FRAMEWORK
        : cl == c->c_user    ? SM__CAT_USER
                             : -1;
  if (cat < 0 || cat == v->cat)
    return;
  v->cat = cat;
  v->conf = 0.35;
  snprintf(v->reason, sizeof(v->reason),
           "exception %s without frames: its words read as %s (line "
           "classifier, cosine %.2f)",
           tname, sm__protoset_failure.class_names[cl], (double)sc);
}

/* Extensions of the files a training job reads and writes (images,
 * audio, video, tables, configs, arrays, checkpoints, archives): a name
 * without a directory counts as a file only with one of them, or with a
 * stem that is no identifier ("0042.webp", "part-7.dat"); a dotted
 * identifier of any other tail is a name in code ('torch.int8',
 * 'np.float32', 'self.proj'). */
static const char *const data_exts[] = {
    "jpg",     "jpeg",     "png",       "gif",    "bmp",     "tif",
    "tiff",    "webp",     "ppm",       "pgm",    "wav",     "mp3",
    "flac",    "ogg",      "m4a",       "opus",   "mp4",     "avi",
    "mov",     "mkv",      "webm",      "json",   "jsonl",   "yaml",
    "yml",     "csv",      "tsv",       "txt",    "xml",     "ini",
    "cfg",     "toml",     "pt",        "pth",    "ckpt",    "bin",
    "npy",     "npz",      "pkl",       "pickle", "h5",      "hdf5",
    "nc",      "mat",      "parquet",   "arrow",  "feather", "safetensors",
    "tar",     "gz",       "tgz",       "zip",    "zst",     "lmdb",
    "mdb",     "tfrecord", "tfrecords", "idx",    "onnx",    "gguf",
    "msgpack", "dat",      "raw"};

static int word_char(char ch) {
  return isalnum((unsigned char)ch) || ch == '_';
}

/* 1 if q[0..n) is a chain of identifiers joined by dots. */
static int dotted_identifier(const char *q, size_t n) {
  int start = 1;

  for (size_t i = 0; i < n; i++) {
    if (q[i] == '.') {
      if (start)
        return 0;
      start = 1;
    } else if (!word_char(q[i]) || (start && isdigit((unsigned char)q[i]))) {
      return 0;
    } else {
      start = 0;
    }
  }
  return !start;
}

static int ext_in(const char *e, size_t el, const char *const *list,
                  size_t nl) {
  for (size_t i = 0; i < nl; i++)
    if (strlen(list[i]) == el && strncasecmp(e, list[i], el) == 0)
      return 1;
  return 0;
}

/* 1 if the quoted text q[0..n) names a file of the job's: a path or a
 * name with a file's extension, not a library's own code or binaries,
 * not a dotted name in code. */
static int job_file_name(const char *q, size_t n) {
  static const char *const code[] = {"py",  "pyx",   "pyc", "pyd", "so",
                                     "dll", "dylib", "cc",  "cpp", "h"};
  const char *dot = NULL;
  size_t el;
  int sep = 0;

  if (n < 3 || memmem(q, n, "site-packages", 13) != NULL ||
      memmem(q, n, "dist-packages", 13) != NULL ||
      memmem(q, n, "/lib/python", 11) != NULL)
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (q[i] == ' ' && !sep)
      return 0; /* words, not a name */
    if (path_sep(q[i]))
      sep = 1;
    else if (q[i] == '.')
      dot = q + i;
  }
  el = dot ? (size_t)(q + n - dot - 1) : 0;
  if (el < 2 || el > 12)
    return sep;
  if (ext_in(dot + 1, el, code, SM_ARRAY_LEN(code)))
    return 0;
  for (size_t i = 1; i <= el; i++)
    if (!isalnum((unsigned char)dot[i]))
      return sep;
  return sep || ext_in(dot + 1, el, data_exts, SM_ARRAY_LEN(data_exts)) ||
         !dotted_identifier(q, n);
}

/* The next quoted text of m[0..n) from *i on, into *q and *qn, moving *i
 * past it; 0 when there is none.  An apostrophe inside or at the end of a
 * word ("can't", "doesn't", "the jobs' files") is no quote: a quote opens
 * where no letter or digit comes before it and closes where none comes
 * after it, and one without a partner within 512 bytes is passed over. */
static int next_quoted(const char *m, size_t n, size_t *i, const char **q,
                       size_t *qn) {
  for (; *i < n; (*i)++) {
    char ch = m[*i];
    size_t j, end = SM_MIN(n, *i + 513);
    if ((ch != '\'' && ch != '"') || (*i > 0 && word_char(m[*i - 1])))
      continue;
    for (j = *i + 1; j < end; j++)
      if (m[j] == ch && (j + 1 == n || !word_char(m[j + 1])))
        break;
    if (j >= end)
      continue;
    *q = m + *i + 1;
    *qn = j - *i - 1;
    *i = j + 1;
    return 1;
  }
  return 0;
}

/* 1 if the message m[0..n) quotes a file of the job's ("cannot identify
 * image file '/data/train/0042.jpg'", "Error opening 'clips/a.wav'"). */
static int quotes_job_file(const char *m, size_t n) {
  size_t i = 0, qn;
  const char *q;

  n = SM_MIN(n, (size_t)4096);
  while (next_quoted(m, n, &i, &q, &qn))
    if (job_file_name(q, qn))
      return 1;
  return 0;
}

/* 1 if t[0..tn) occurs in m[0..n) as a whole token: no letter, digit,
 * underscore or dot joined to it on either side. */
static int has_token(const char *m, size_t n, const char *t, size_t tn) {
  for (const char *q = m;
       tn > 0 && (q = memmem(q, (size_t)(m + n - q), t, tn)) != NULL; q++) {
    char b = q > m ? q[-1] : ' ', a = q + tn < m + n ? q[tn] : ' ';
    if (!word_char(b) && b != '.' && !word_char(a) &&
        (a != '.' || q + tn + 1 == m + n || q[tn + 1] == ' '))
      return 1;
  }
  return 0;
}

/* 1 if the job's source line j[0..jn) passes a value that the message
 * m[0..n) repeats: a quoted literal of two or more characters, or the
 * literal of a keyword argument ("lr=-1.0", "batch_size=0": a one-digit
 * value only with its keyword in the message too). */
static int line_value_echoed(const char *j, size_t jn, const char *m,
                             size_t n) {
  size_t i = 0, qn;
  const char *q;

  while (next_quoted(j, jn, &i, &q, &qn))
    if (qn >= 2 && has_token(m, n, q, qn))
      return 1;
  for (i = 1; i + 1 < jn; i++) {
    size_t k = i + 1, b = i;
    if (j[i] != '=' || j[i + 1] == '=' || !word_char(j[i - 1]) ||
        strchr("=!<>", j[i - 1]) != NULL)
      continue;
    while (b > 0 && word_char(j[b - 1]))
      b--;
    if (k < jn && (j[k] == '-' || j[k] == '+'))
      k++;
    if (k >= jn || !isdigit((unsigned char)j[k]))
      continue;
    while (k < jn && (isalnum((unsigned char)j[k]) || j[k] == '.' ||
                      ((j[k] == '-' || j[k] == '+') &&
                       (j[k - 1] == 'e' || j[k - 1] == 'E'))))
      k++;
    if (has_token(m, n, j + i + 1, k - i - 1) &&
        (k - i - 1 >= 2 || has_token(m, n, j + b, i - b)))
      return 1;
  }
  return 0;
}

/* 1 if the message of exception x repeats a value that a source line of
 * the job's own frames passes on (in x's traceback or the outer ones of
 * its chain): the value that failed is the job's, which the libraries
 * handed on unchanged ("lr_scheduler_type='cosine_warm'" and "'cosine_
 * warm' is not a valid SchedulerType"; "DataLoader(ds, batch_size=0)" and
 * "got batch_size=0"). */
static int job_value_echoed(const sm__window *w, const segs *s, int x) {
  size_t n, jn;
  const char *m = msg_of(&w->lines[x], &n), *j;

  n = SM_MIN(n, (size_t)4096);
  for (int k = 0, y = x; k <= MAX_CHAIN && y >= 0;
       k++, y = chain_next(w, s, y)) {
    if (s->start[y] < 0)
      continue;
    for (int i = s->start[y]; i + 1 < y; i++) {
      const char *p;
      size_t pn;
      if (w->lines[i].kind != SM__K_TB_FRAME ||
          w->lines[i + 1].kind == SM__K_TB_FRAME)
        continue;
      pn = frame_path(&w->lines[i], &p);
      if (pn == 0 || library_path(p, pn))
        continue;
      j = msg_of(&w->lines[i + 1], &jn);
      if (line_value_echoed(j, SM_MIN(jn, (size_t)1024), m, n))
        return 1;
    }
  }
  return 0;
}

#define LIB_PREFIX_MIN 6 /* shortest package name read in a class name */

/* 1 if the message m of an AttributeError says that an object of a class
 * named after a third-party package lacks an attribute ("'DeepSpeedZero
 * Optimizer_Stage3' object has no attribute 'train'", "'LightningModule'
 * object has no attribute ..."): one library calling another's object as
 * a different version of it has it.  The package name is a CamelCase
 * prefix of the class of LIB_PREFIX_MIN or more letters (short names such
 * as torch or jax also begin the job's own classes). */
static int library_object_attribute(const sm_sigdb *db, const char *m,
                                    size_t n) {
  const char *q = memchr(m, '\'', SM_MIN(n, (size_t)64)), *e;

  if (q == NULL)
    return 0;
  q++;
  e = memchr(q, '\'', (size_t)(m + n - q));
  if (e == NULL || e - q > 80 || e + 27 > m + n ||
      memcmp(e, "' object has no attribute ", 26) != 0)
    return 0;
  for (const char *b = q + LIB_PREFIX_MIN; b < e; b++)
    if ((isupper((unsigned char)*b) || *b == '_') &&
        islower((unsigned char)b[-1]) &&
        sm__sigdb_is_package(db, q, (size_t)(b - q)))
      return 1;
  return 0;
}

/* The callee a "missing N required positional argument" message names
 * ("Accuracy.__new__() missing 1 required ...", "accuracy() missing"),
 * into fn (the function, or the class of a constructor, "" for a bare
 * constructor) and *ctor; 0 if the message is not of that form. */
static int missing_argument_callee(const char *m, size_t n, char *fn,
                                   size_t cap, int *ctor) {
  const char *p = memmem(m, SM_MIN(n, (size_t)256), "() missing ", 11), *b, *e;
  size_t k;

  if (p == NULL || (memmem(p, (size_t)(m + n - p),
                           "required positional argument", 28) == NULL &&
                    memmem(p, (size_t)(m + n - p),
                           "required keyword-only argument", 30) == NULL))
    return 0;
  b = p;
  while (b > m && (word_char(b[-1]) || b[-1] == '.'))
    b--;
  e = p;
  *ctor = 0;
  for (const char *q = p; q > b; q--)
    if (q[-1] == '.') {
      size_t tl = (size_t)(p - q);
      if ((tl == 7 && memcmp(q, "__new__", 7) == 0) ||
          (tl == 8 && memcmp(q, "__init__", 8) == 0)) {
        *ctor = 1;
        e = q - 1;
      }
      break;
    }
  if (e == p && ((p - b == 7 && memcmp(b, "__new__", 7) == 0) ||
                 (p - b == 8 && memcmp(b, "__init__", 8) == 0))) {
    *ctor = 1;
    e = b;
  }
  while (e > b && memchr(b, '.', (size_t)(e - b)) != NULL)
    b = (const char *)memchr(b, '.', (size_t)(e - b)) + 1;
  k = SM_MIN((size_t)(e - b), cap - 1);
  memcpy(fn, b, k);
  fn[k] = '\0';
  return 1;
}

/* 1 if the source line j[0..jn) calls a third-party package's callable
 * by its dotted path ("torchmetrics.Accuracy(", "tm.classification...":
 * the first part a known package) whose last part is fn, or for a bare
 * constructor (fn "") a CamelCase class. */
static int calls_package_callable(const sm_sigdb *db, const char *j, size_t jn,
                                  const char *fn, int ctor) {
  size_t fl = strlen(fn);
  const char *top;

  for (size_t i = 0; i < jn; i++) {
    size_t a = i, last = i, parts = 1;
    if (!(isalpha((unsigned char)j[i]) || j[i] == '_') ||
        (i > 0 && (word_char(j[i - 1]) || j[i - 1] == '.')))
      continue;
    while (i < jn && (word_char(j[i]) || j[i] == '.')) {
      if (j[i] == '.') {
        parts++;
        last = i + 1;
      }
      i++;
    }
    if (i >= jn || j[i] != '(' || parts < 2 || last >= i)
      continue;
    top = (const char *)memchr(j + a, '.', i - a);
    if (!sm__sigdb_is_package(db, j + a, (size_t)(top - (j + a))))
      continue;
    if (fl > 0 ? (i - last == fl && memcmp(j + last, fn, fl) == 0)
               : (ctor && isupper((unsigned char)j[last])))
      return 1;
  }
  return 0;
}

/* 1 if exception x, raised in the job's own frame, says that a call
 * lacks a required argument and that frame's line calls a third-party
 * package's callable of that name: the code was written for another
 * version of the library, whose signature has changed (torchmetrics'
 * Accuracy requiring 'task' since 0.11, a constructor gaining a required
 * configuration).  A call of the job's own function is its own error. */
static int library_signature_changed(const sm_sigdb *db, const sm__window *w,
                                     const segs *s, int x, const frames *f) {
  size_t mn, jn;
  const char *m = msg_of(&w->lines[x], &mn), *j;
  char fn[96];
  int ctor, k = f->innermost + 1;

  if (f->innermost < 0 || f->innermost != f->inner_user || k >= x ||
      !s->in_tb[k] || w->lines[k].kind == SM__K_TB_FRAME ||
      !missing_argument_callee(m, mn, fn, sizeof(fn), &ctor))
    return 0;
  j = msg_of(&w->lines[k], &jn);
  return calls_package_callable(db, j, SM_MIN(jn, (size_t)1024), fn, ctor);
}

/* 1 if the source line j[0..jn) looks a name up in a table of known
 * names (an upper-case constant such as CONFIG_MAPPING, or a name ending
 * in mapping or registry) with a key read from another structure
 * ("CONFIG_MAPPING[config_dict[\"model_type\"]]", "REGISTRY[cfg.kind]"):
 * a name that a loaded file gives. */
static int table_lookup_of_loaded_name(const char *j, size_t jn) {
  for (size_t i = 0; i < jn; i++) {
    size_t a = i, k;
    int upper = 1, under = 0;
    if (!(isalpha((unsigned char)j[i]) || j[i] == '_') ||
        (i > 0 && (word_char(j[i - 1]) || j[i - 1] == '.')))
      continue;
    while (i < jn && word_char(j[i])) {
      upper &= !islower((unsigned char)j[i]);
      under |= j[i] == '_';
      i++;
    }
    if (i >= jn || j[i] != '[' || i - a < 3)
      continue;
    if (!(upper && under) &&
        !(i - a >= 7 && strncasecmp(j + i - 7, "MAPPING", 7) == 0) &&
        !(i - a >= 8 && strncasecmp(j + i - 8, "REGISTRY", 8) == 0))
      continue;
    for (k = i + 1; k < jn && j[k] != ']'; k++)
      if (j[k] == '[' || j[k] == '.')
        return 1;
  }
  return 0;
}

/* 1 if KeyError x was raised in a library whose frames above it look a
 * loaded name up in a table of known names: the installed library does
 * not know a name that a model or configuration file gives, written for
 * a newer version of it (a model type the registry of an older release
 * lacks).  A key the job's own call passes is the job's (a misspelt
 * name). */
static int library_table_lacks_name(const sm__window *w, const segs *s, int x,
                                    const frames *f) {
  if (f->n_user == 0 || f->innermost == f->inner_user || s->start[x] < 0 ||
      job_value_echoed(w, s, x))
    return 0;
  for (int i = s->start[x]; i + 1 < x; i++) {
    const char *p, *j;
    size_t pn, jn;
    if (w->lines[i].kind != SM__K_TB_FRAME ||
        w->lines[i + 1].kind == SM__K_TB_FRAME)
      continue;
    pn = frame_path(&w->lines[i], &p);
    if (pn == 0 || !library_path(p, pn))
      continue;
    j = msg_of(&w->lines[i + 1], &jn);
    if (table_lookup_of_loaded_name(j, SM_MIN(jn, (size_t)1024)))
      return 1;
  }
  return 0;
}

static void framework_weakly(verdict *v, const char *why) {
  v->cat = SM__CAT_FRAMEWORK;
  v->conf = 0.45;
  snprintf(v->reason, sizeof(v->reason), "%s", why);
}

/* 1 (and v set to framework, weakly) if exception x of type tname, which
 * its frames gave to the job, shows a library of another version than
 * the job's code or files were written for: a KeyError from a table of
 * known names that lacks a loaded name, a TypeError of a library's
 * callable that now requires an argument. */
static int version_mismatch(const sm_sigdb *db, const sm__window *w,
                            const segs *s, int x, const char *tname,
                            const frames *f, verdict *v) {
  if (strcmp(tname, "KeyError") == 0 && library_table_lacks_name(w, s, x, f)) {
    framework_weakly(v, "exception KeyError where a library looks a name "
                        "from a loaded file up in its table of known names: "
                        "the installed version does not know it (a file "
                        "for a newer release)");
    return 1;
  }
  if (strcmp(tname, "TypeError") == 0 &&
      library_signature_changed(db, w, s, x, f)) {
    framework_weakly(v, "exception TypeError in the job's call of a "
                        "library's callable that lacks a required argument: "
                        "the library's signature changed (another version "
                        "than the code was written for)");
    return 1;
  }
  return 0;
}

static void resolve_exception(sm__lctx *c, const sm_sigdb *db,
                              const sm__window *w, const segs *s, int x,
                              verdict *v, int have_sig) {
  const sm__line *l = &w->lines[x];
  char tname[128];
  frames f;

  type_tail(l->text + l->msg, (size_t)l->exc_len, tname, sizeof(tname));
  chain_frames(w, s, x, &f);
  judge_exception(db, tname, &f, v, have_sig);
  if (!have_sig && f.n_user > 0 && f.innermost != f.inner_user &&
      v->cat == SM__CAT_FRAMEWORK && library_handed(&f)) {
    /* A file the job names, failing in the decoder a loader called (a
     * corrupt image, an audio file of another format): the job's data. */
    size_t mn;
    const char *m = msg_of(l, &mn);
    int file = quotes_job_file(m, mn);
    if (file || job_value_echoed(w, s, x)) {
      const sm__exc *e = sm__sigdb_exc(db, tname);
      v->cat = e ? e->category : SM__CAT_USER;
      v->conf = 0.45;
      snprintf(v->reason, sizeof(v->reason),
               file ? "exception %s raised where one library called another, "
                      "on a file the message names: the job's data"
                    : "exception %s raised where one library called another, "
                      "on a value the job's own call passes and the message "
                      "repeats: the job's value, handed on unchanged",
               tname);
    }
  }
  if (!have_sig && v->cat == SM__CAT_USER &&
      version_mismatch(db, w, s, x, tname, &f, v))
    return;
  if (!have_sig && (v->cat == SM__CAT_UNKNOWN || v->cat == SM__CAT_INFRA)) {
    int y = chain_explained(w, s, x);
    if (y >= 0) {
      const sm__line *ly = &w->lines[y];
      from_sig(db, ly->sig, ly->xid, v);
      v->ev = SM__EV_INFERRED;
      v->conf = SM_MIN(v->conf, 0.6);
      snprintf(v->reason, sizeof(v->reason),
               "exception %s, an operating system's word for what happened, "
               "explained by %s later in its chain (line %lld)",
               tname, ly->sig->name, ly->no);
      return;
    }
  }
  if (!have_sig && f.n == 0) {
    size_t mn;
    const char *m = msg_of(l, &mn);
    if (strcmp(tname, "AttributeError") == 0 &&
        library_object_attribute(db, m, mn)) {
      framework_weakly(v, "exception AttributeError without frames: an "
                          "object of a library's class lacks the attribute "
                          "(versions of libraries that do not fit)");
      return;
    }
    words_decide(c, db, l, tname, v);
  }
}

/* A traceback cut before its exception line (a pasted excerpt, a process
 * killed while it printed): the last line of the block at [a, x] is the
 * closest the log comes to the error.  When it is a raise statement
 * ("raise ValueError(...)") the type it raises is judged like an
 * exception line, with the block's frames; else the class is unknown. */
static void resolve_cut(const sm_sigdb *db, const sm__window *w, int a, int x,
                        verdict *v) {
  size_t n, i = 0, b;
  const char *m = msg_of(&w->lines[x], &n);
  char tname[128];
  frames f;

  frames_init(&f);
  for (int k = a; k <= x; k++)
    add_frame(w, k, &f);
  while (i < n && (m[i] == ' ' || m[i] == '\t'))
    i++;
  if (n - i > 6 && memcmp(m + i, "raise ", 6) == 0) {
    i += 6;
    b = i;
    while (i < n &&
           (isalnum((unsigned char)m[i]) || m[i] == '_' || m[i] == '.'))
      i++;
    if (i > b && sm__exc_type_len(m + b, i - b) == (int)(i - b)) {
      type_tail(m + b, i - b, tname, sizeof(tname));
      judge_exception(db, tname, &f, v, 0);
      v->conf -= 0.1;
      strncat(v->reason,
              "; the traceback is cut before its exception line, the raise "
              "statement names it",
              sizeof(v->reason) - strlen(v->reason) - 1);
      return;
    }
  }
  snprintf(v->cause, sizeof(v->cause),
           "a traceback cut before its exception line");
  /* Without a type, where the last frame is decides, weakly: the job's
   * own code, or a library's with only library frames above it. */
  if (f.innermost >= 0 && f.innermost == f.inner_user) {
    v->cat = SM__CAT_USER;
    v->conf = 0.3;
  } else if (f.n > 0 && f.n_user == 0) {
    v->cat = SM__CAT_FRAMEWORK;
    v->conf = 0.3;
  } else if (f.n > 0) {
    v->cat = SM__CAT_USER; /* a library called from the job's code */
    v->conf = 0.25;
  } else {
    v->cat = SM__CAT_UNKNOWN;
    v->conf = 0.3;
  }
  snprintf(v->reason, sizeof(v->reason),
           "the traceback ends without an exception line; its last line is "
           "the closest to the error; %s",
           f.n == 0                      ? "no frames to judge by"
           : f.innermost == f.inner_user ? "its last frame is the job's code"
           : f.n_user == 0               ? "only library frames"
                                         : "a library called from the job's "
                                           "code");
}

#define SURVIVED_PROGRESS 3 /* progress lines that show the job went on */

/* Nearest specific cause within the context, or -1.  A network error
 * printed after the generic line is not its explanation but its
 * consequence: peers lose the connection to a rank that crashed.  (A
 * GPU's or host's own report may come later: the driver's Xid, the
 * kernel's messages in the epilog.)  A cause with training progress
 * between it and the generic line was survived: not its explanation. */
static int nearest_specific(const sm__window *w, const segs *s, int x,
                            int ctx) {
  for (int d = 1; d <= ctx; d++) {
    int c[2] = {x + d, x - d};
    for (int k = 0; k < 2; k++) {
      int i = c[k];
      const sm__line *l;
      if (i < 0 || i >= w->n)
        continue;
      l = &w->lines[i];
      if (l->kind == SM__K_CAUSE && !l->sig->generic &&
          eff_strength(w, s, i) == 3 && l->sig->category != SM__CAT_UNKNOWN &&
          !(i > x && l->sig->category == SM__CAT_INFRA &&
            l->sig->component == SM__COMP_NETWORK) &&
          progress_between(s, i, x) < SURVIVED_PROGRESS)
        return i;
    }
  }
  return -1;
}

/* The specific cause a generic symptom line restates ("watchdog thread
 * terminated with exception: CUDA error: ..."), or NULL. */
static const sm__sig *restated(sm__lctx *c, const sm__line *l,
                               int allow_generic) {
  const sm__sig *same;
  size_t mn;
  const char *m;
  int xid;

  if (l->kind != SM__K_SYMPTOM || !l->sig->generic)
    return NULL;
  m = msg_of(l, &mn);
  same = sm__sigdb_match_cause(&c->m, m, SM_MIN(mn, (size_t)8192), &xid);
  return same != NULL && (allow_generic || !same->generic) ? same : NULL;
}

static void resolve_oom(sm__lctx *c, const sm__window *w, const segs *s, int x,
                        verdict *v);

/* The line that words another runtime's error at x: the line itself, or
 * where the form puts its message on the next line (C++'s "what():  ...",
 * Rust's message under "panicked at src/x.rs:1:2:"), that line. */
static const sm__line *runtime_words(const sm__window *w, int x) {
  const sm__line *l = &w->lines[x];
  size_t n;
  const char *m = msg_of(l, &n);

  if (x + 1 < w->n &&
      (l->rt == SM__RT_CXX_THROW ||
       (l->rt == SM__RT_RUST_PANIC && n > 0 && m[n - 1] == ':')))
    return &w->lines[x + 1];
  return l;
}

/* Another runtime's error (a JVM chain's root, a Go or Rust panic, a C++
 * exception that ended the program) without a signature of its own: the
 * signature its message matches, else its type's table entry, then the
 * line classifier's reading of its words (never infrastructure). */
static void resolve_runtime(sm__lctx *c, const sm_sigdb *db,
                            const sm__window *w, int x, verdict *v) {
  const sm__line *l = &w->lines[x], *wl = runtime_words(w, x);
  const sm__sig *same;
  char tname[128];
  frames f;
  size_t mn;
  const char *m = msg_of(wl, &mn);
  int sx;

  same = sm__sigdb_match_cause(&c->m, m, SM_MIN(mn, (size_t)8192), &sx);
  if (same != NULL && !same->generic) {
    from_sig(db, same, sx, v);
    snprintf(v->reason, sizeof(v->reason),
             "error of another runtime classified by its message: %s",
             same->name);
    return;
  }
  if (l->rt == SM__RT_GO_PANIC || l->rt == SM__RT_RUST_PANIC)
    snprintf(tname, sizeof(tname), "panic");
  else
    type_tail(l->text + l->msg, (size_t)l->exc_len, tname, sizeof(tname));
  frames_init(&f);
  judge_exception(db, tname, &f, v, 0);
  /* A C++ exception of a type the table does not know: C++ programs
   * throw for every kind of error (unlike a Go or Rust panic, the
   * language's report of a bug, or a JVM type judged like Python's), so
   * only the message's words can tell the job's error from a library's. */
  if (l->rt == SM__RT_CXX_THROW && sm__sigdb_exc(db, tname) == NULL) {
    v->cat = SM__CAT_UNKNOWN;
    v->conf = 0.3;
    snprintf(v->reason, sizeof(v->reason),
             "error of another runtime (%s) without a signature or a known "
             "type",
             tname);
  }
  words_decide(c, db, wl, tname, v);
}

/* 1 (and v set) if exception x has no message on its own line and the
 * next line, its message's first line (a message that starts with a line
 * break: PyTorch's driver check, a library's "requires the X library but
 * it was not found"), matches a specific cause signature: that
 * signature's class. */
static int message_on_next_line(sm__lctx *c, const sm_sigdb *db,
                                const sm__window *w, const segs *s, int x,
                                verdict *v) {
  const sm__line *l = &w->lines[x], *ln;
  const sm__sig *sig;
  size_t n, i;
  const char *m = msg_of(l, &n);
  int sx;

  i = (size_t)l->exc_len;
  while (i < n && (m[i] == ':' || m[i] == ' ' || m[i] == '\t'))
    i++;
  if (i < n || x + 1 >= w->n)
    return 0;
  ln = &w->lines[x + 1];
  if (ln->kind == SM__K_TB_HEADER || ln->kind == SM__K_TB_FRAME ||
      ln->kind == SM__K_CHAIN || ln->kind == SM__K_BLANK)
    return 0;
  /* The message below is the same writer's: the same prefix (rank, host,
   * logger) or an indented continuation; another rank's or the kernel's
   * line interleaved there is not this exception's message. */
  if (!indented(ln) &&
      (ln->msg != l->msg || memcmp(ln->text, l->text, l->msg) != 0))
    return 0;
  m = msg_of(ln, &n);
  sig = sm__sigdb_match_cause(&c->m, m, SM_MIN(n, (size_t)8192), &sx);
  if (sig == NULL || sig->generic || sig->category == SM__CAT_UNKNOWN)
    return 0;
  from_sig(db, sig, sx, v);
  if (sig->resolver == SM__RESOLVE_IMPORT)
    resolve_import(db, w, s, x + 1, v);
  snprintf(v->reason, sizeof(v->reason),
           "exception without a message on its line; its message below "
           "(line %lld) matches signature %s",
           ln->no, sig->name);
  return 1;
}

static void classify(sm__lctx *c, const sm_sigdb *db, const sm__window *w,
                     const segs *s, int x, int ctx, verdict *v, int *explain) {
  const sm__line *l = &w->lines[x];

  memset(v, 0, sizeof(*v));
  v->xid = -1;
  v->retryable = -1;
  v->ev = SM__EV_INFERRED; /* until a signature says what it rests on */
  *explain = -1;
  if (l->sig != NULL && l->sig->generic) {
    int y, sx;
    const sm__sig *same;
    size_t mn;
    const char *m = msg_of(l, &mn);
    /* A generic line that restates a cause ("... terminated with
     * exception: CUDA error: ...") is classified by that cause. */
    same = sm__sigdb_match_cause(&c->m, m, SM_MIN(mn, (size_t)8192), &sx);
    if (same != NULL && same != l->sig && !same->generic) {
      from_sig(db, same, sx, v);
      snprintf(v->reason, sizeof(v->reason),
               "generic signature %s restates %s on the same line",
               l->sig->name, same->name);
      return;
    }
    y = nearest_specific(w, s, x, ctx);
    if (y >= 0) {
      const sm__line *ly = &w->lines[y];
      from_sig(db, ly->sig, ly->xid, v);
      v->conf *= 0.95;
      snprintf(v->reason, sizeof(v->reason),
               "generic signature %s explained by %s%s on line %lld",
               l->sig->name, ly->sig->name, v->xid >= 0 ? " (Xid)" : "",
               ly->no);
      *explain = y;
      if (ly->sig->resolver == SM__RESOLVE_IMPORT)
        resolve_import(db, w, s, y, v);
      return;
    }
    /* A symptom that restates a generic cause ("what():  CUDA error: an
     * illegal memory access"): the cause's class, not the symptom's. */
    if (same != NULL && same != l->sig && l->sig->role == SM__ROLE_SYMPTOM) {
      from_sig(db, same, sx, v);
      snprintf(v->reason, sizeof(v->reason),
               "symptom %s restates %s on the same line", l->sig->name,
               same->name);
      return;
    }
  }
  if (l->sig != NULL) {
    from_sig(db, l->sig, l->xid, v);
    if (l->sig->resolver == SM__RESOLVE_IMPORT)
      resolve_import(db, w, s, x, v);
    else if (l->sig->resolver == SM__RESOLVE_TRACEBACK && l->exc_len > 0)
      resolve_exception(c, db, w, s, x, v, 1);
    else if (l->sig->resolver == SM__RESOLVE_OOM)
      resolve_oom(c, w, s, x, v);
    if (l->kind == SM__K_NOTICE) {
      v->conf *= 0.5;
      strncat(v->reason,
              "; the line is logged as information, so it is weak evidence",
              sizeof(v->reason) - strlen(v->reason) - 1);
    }
    return;
  }
  if (l->rt != SM__RT_NONE) {
    resolve_runtime(c, db, w, x, v);
    return;
  }
  if (l->exc_len > 0) {
    if (!message_on_next_line(c, db, w, s, x, v))
      resolve_exception(c, db, w, s, x, v, 0);
    return;
  }
  if (l->kind == SM__K_WEAK && l->cls >= 0) {
    v->cat = l->cls == c->c_infra       ? SM__CAT_INFRA
             : l->cls == c->c_framework ? SM__CAT_FRAMEWORK
             : l->cls == c->c_user      ? SM__CAT_USER
                                        : SM__CAT_UNKNOWN;
    v->conf = 0.2 + 0.4 * (double)l->cls_score;
    snprintf(v->cause, sizeof(v->cause),
             "unrecognised failure line (no signature)");
    snprintf(v->reason, sizeof(v->reason), "line classifier: %s (cosine %.2f)",
             sm__protoset_failure.class_names[l->cls], (double)l->cls_score);
    return;
  }
  v->cat = SM__CAT_UNKNOWN;
  v->conf = 0.2;
  snprintf(v->cause, sizeof(v->cause), "failure without a recognised cause");
  snprintf(v->reason, sizeof(v->reason), "no signature or exception");
}

/* Raises confidence when other lines agree, lowers it when hardware
 * evidence contradicts a software verdict. */
static void corroborate(const sm__window *w, const segs *s, int x, int ctx,
                        verdict *v) {
  int agree = 0, hw = 0;
  int lo = x - ctx < 0 ? 0 : x - ctx, hi = x + ctx >= w->n ? w->n - 1 : x + ctx;

  for (int i = lo; i <= hi; i++) {
    const sm__line *l = &w->lines[i];
    if (i == x || l->kind != SM__K_CAUSE || l->sig->generic ||
        eff_strength(w, s, i) < 3)
      continue;
    if (l->sig == v->sig)
      continue;
    /* For infrastructure, only an independent report of a broken part
     * that is strong on its own agrees: two lines of one ambiguous family
     * (a driver mismatch and the container runtime's account of it) are
     * one piece of evidence. */
    if (l->sig->category == v->cat &&
        (v->cat != SM__CAT_INFRA ||
         (l->sig->component == v->comp && l->sig->evidence == SM__EV_FAULT &&
          l->sig->confidence >= 0.8)))
      agree = 1;
    if (l->sig->category == SM__CAT_INFRA && l->sig->confidence >= 0.85 &&
        l->sig->evidence == SM__EV_FAULT &&
        (l->sig->component == SM__COMP_GPU ||
         l->sig->component == SM__COMP_NVLINK ||
         l->sig->component == SM__COMP_NODE))
      hw = 1;
  }
  if (agree)
    v->conf += 0.05;
  if (hw && v->cat != SM__CAT_INFRA) {
    v->conf -= 0.2;
    strncat(v->reason, "; hardware errors nearby lower the confidence",
            sizeof(v->reason) - strlen(v->reason) - 1);
  }
  if (v->conf > 0.99)
    v->conf = 0.99;
  if (v->conf < 0.05)
    v->conf = 0.05;
}

/* Narrows the name *t[0..*n) to its last dotted part. */
static void last_dotted_part(const char **t, size_t *n) {
  const char *d;

  while (*n > 0 && (d = memchr(*t, '.', *n)) != NULL) {
    *n -= (size_t)(d + 1 - *t);
    *t = d + 1;
  }
}

/* A worker's exception re-raised by its parent: the parent's traceback
 * ends in an exception line of the same type that a generic symptom
 * signature marks as a re-raise ("KeyError: Caught KeyError in DataLoader
 * worker process 2."), and the worker's original traceback follows it and
 * ends at x.  Returns the parent's line, the first report of the error,
 * or -1. */
static int reraised_in_parent(const sm__window *w, const segs *s, int x) {
  const sm__line *lx = &w->lines[x], *lj;
  int h = s->start[x], j;
  const char *tx, *tj;
  size_t nx, nj;

  if (h < 0 || lx->exc_len == 0)
    return -1;
  j = h - 1;
  while (j >= 0 && w->lines[j].kind == SM__K_BLANK)
    j--;
  if (j < 0)
    return -1;
  lj = &w->lines[j];
  if (lj->kind != SM__K_SYMPTOM || lj->sig == NULL || !lj->sig->generic ||
      lj->exc_len == 0)
    return -1;
  /* The same exception type, by its last dotted part, as x or a later
   * exception of x's chain: the worker caught what its chain ended in
   * ("During handling of the above exception, another exception
   * occurred:"), while x is the chain's first. */
  tj = lj->text + lj->msg;
  nj = (size_t)lj->exc_len;
  last_dotted_part(&tj, &nj);
  for (int k = 0, y = x; k <= MAX_CHAIN && y >= 0;
       k++, y = chain_next(w, s, y)) {
    lx = &w->lines[y];
    tx = lx->text + lx->msg;
    nx = (size_t)lx->exc_len;
    last_dotted_part(&tx, &nx);
    if (nx > 0 && nx == nj && memcmp(tx, tj, nx) == 0)
      return j;
  }
  return -1;
}

/* The job's own setting of the communication stack (an environment
 * variable, a launcher flag) shown in the window before an infrastructure
 * fault that the setting governs, with no training progress between the
 * two: the first use of the setting failed, so the setting is the cause.
 * After progress the same fault is the infrastructure's: the setting had
 * worked. */
static void job_setting(sm__lctx *c, const sm__window *w, int x, verdict *v) {
  const sm__setting *st = NULL;
  int at = -1;

  if (v->cat != SM__CAT_INFRA || v->sig == NULL)
    return;
  for (int i = x - 1; i >= 0 && st == NULL; i--) {
    const sm__line *l = &w->lines[i];
    size_t n;
    const char *m = msg_of(l, &n);
    if (sm__sigdb_progress(&c->m, m, SM_MIN(n, (size_t)2048)))
      return; /* the job trained after the setting */
    st = sm__sigdb_setting(&c->m, v->sig, m, SM_MIN(n, (size_t)2048));
    at = i;
  }
  if (st == NULL)
    return;
  v->cat = SM__CAT_USER;
  v->comp = SM__COMP_NONE;
  v->retryable = 0;
  v->conf = 0.75;
  snprintf(v->cause, sizeof(v->cause), "%s",
           st->cause ? st->cause
                     : "the job's own setting of the communication stack");
  snprintf(v->reason, sizeof(v->reason),
           "signature %s, but the job sets the %s stack on line %lld and "
           "failed before any training progress (setting %s)",
           v->sig->name, st->name, w->lines[at].no, st->name);
}

/* ==== CUDA out-of-memory arithmetic ==== */

/* Bytes of the size written just before s[pos] ("44.53 GiB") or just
 * after it (after = 1), or -1. */
static double size_near(const char *s, size_t n, size_t pos, int after) {
  static const struct {
    const char *u;
    double f;
  } units[] = {{"TiB", 1099511627776.0},
               {"GiB", 1073741824.0},
               {"MiB", 1048576.0},
               {"KiB", 1024.0},
               {"TB", 1e12},
               {"GB", 1e9},
               {"MB", 1e6},
               {"KB", 1e3},
               {"bytes", 1.0},
               {"B", 1.0}};
  size_t i = pos, a, b, u;
  char num[32];

  if (after) {
    while (i < n && s[i] == ' ')
      i++;
    a = i;
    while (i < n && (isdigit((unsigned char)s[i]) || s[i] == '.'))
      i++;
    b = i;
    while (i < n && s[i] == ' ')
      i++;
    u = i;
  } else {
    /* "... 14.43 GiB already allocated": back over the unit and number. */
    while (i > 0 && s[i - 1] == ' ')
      i--;
    u = i;
    while (u > 0 && isalpha((unsigned char)s[u - 1]))
      u--;
    i = u;
    while (i > 0 && s[i - 1] == ' ')
      i--;
    b = i;
    while (i > 0 && (isdigit((unsigned char)s[i - 1]) || s[i - 1] == '.'))
      i--;
    a = i;
  }
  if (b == a || b - a >= sizeof(num))
    return -1;
  memcpy(num, s + a, b - a);
  num[b - a] = '\0';
  for (size_t k = 0; k < SM_ARRAY_LEN(units); k++) {
    size_t ul = strlen(units[k].u);
    if (u + ul <= n && memcmp(s + u, units[k].u, ul) == 0 &&
        (u + ul == n || !isalpha((unsigned char)s[u + ul]))) {
      double v;
      if (sm_parse_double(num, &v) != 0 || !(v >= 0))
        return -1;
      return v * units[k].f;
    }
  }
  return -1;
}

/* The size next to the first occurrence of key in s, or -1. */
static double size_at(const char *s, size_t n, const char *key, int after) {
  const char *p = memmem(s, n, key, strlen(key));

  if (p == NULL)
    return -1;
  return size_near(
      s, n, after ? (size_t)(p - s) + strlen(key) : (size_t)(p - s), after);
}

/* From PyTorch's out-of-memory report, the memory of the GPU that other
 * processes hold: capacity minus free minus what this process holds
 * ("this process has X memory in use", else what PyTorch allocated and
 * reserved).  Returns the fraction of the capacity, or -1 when the
 * report does not say. */
/* GPU memory of a process outside PyTorch's allocator (its CUDA context,
 * library workspaces): 1 GiB. */
#define OOM_CONTEXT_ALLOWANCE 1073741824.0

static double oom_others_share(const char *s, size_t n, double *total_out,
                               double *others_out) {
  double total = size_at(s, n, "total capacity of", 1);
  double freeb = size_at(s, n, " is free", 0);
  double own = size_at(s, n, "this process has", 1);
  int exact = own >= 0;

  if (total < 0)
    total = size_at(s, n, "total capacty of", 1); /* PyTorch 2.1's spelling */
  if (total < 0)
    total = size_at(s, n, " total capacity", 0);
  if (freeb < 0)
    freeb = size_at(s, n, " free;", 0);
  if (freeb < 0)
    freeb = size_at(s, n, " free)", 0);
  if (own < 0) {
    double alloc = size_at(s, n, " is allocated by PyTorch", 0);
    double unal = size_at(s, n, " is reserved by PyTorch but unallocated", 0);
    double res = size_at(s, n, " reserved in total by PyTorch", 0);
    double al2 = size_at(s, n, " already allocated", 0);
    /* PyTorch 1.0-1.3 ("...; 1.75 GiB free; 3.78 GiB cached)"): the
     * allocator's cache beyond what is allocated, so held on top of it */
    double cached = size_at(s, n, " cached)", 0);
    if (alloc >= 0)
      own = alloc + (unal > 0 ? unal : 0);
    if (res > own)
      own = res;
    if (al2 > own)
      own = al2;
    if (al2 >= 0 && cached > 0 && al2 + cached > own)
      own = al2 + cached;
  }
  if (total <= 0 || freeb < 0 || own < 0 || freeb > total)
    return -1;
  /* Without the report's own figure for the process, what PyTorch holds
   * leaves out the process's own CUDA context and library workspaces
   * (cuBLAS, cuDNN: up to about 1 GiB before CUDA's lazy loading): that
   * much is the job's, not others'.  A desktop's display is another
   * process and stays in others' share. */
  if (!exact)
    own += OOM_CONTEXT_ALLOWANCE;
  *total_out = total;
  *others_out = total - freeb - own > 0 ? total - freeb - own : 0;
  return *others_out / total;
}

#define OOM_STACK_BEFORE 40 /* lines of a traceback before the error */
#define OOM_STACK_AFTER 12  /* lines of a Java/C++ stack after it */

/* 1 if the out-of-memory error at x was raised while the job created its
 * CUDA context: a frame of its stack (the Python traceback before it, a
 * Java or C++ stack after it) names a context-creating call
 * ([oom-context]).  The job held no memory yet, so the GPU was full
 * before it started. */
static int oom_at_context(sm__lctx *c, const sm__window *w, const segs *s,
                          int x) {
  int lo = s->start[x] >= 0 ? s->start[x] : x - OOM_STACK_BEFORE;

  if (lo < x - OOM_STACK_BEFORE)
    lo = x - OOM_STACK_BEFORE;
  if (lo < 0)
    lo = 0;
  for (int i = lo; i < w->n && i <= x + OOM_STACK_AFTER; i++) {
    size_t n;
    const char *m = msg_of(&w->lines[i], &n);
    if (i > x && progress_between(s, x, i + 1) > 0)
      break;
    if (sm__sigdb_oom_context(&c->m, m, SM_MIN(n, (size_t)2048)))
      return 1;
  }
  return 0;
}

/* The used and total MiB of one nvidia-smi memory cell ("15514MiB /
 * 16130MiB") at or after p in m[0..n), with *next after it; 0 if none. */
static int smi_cell(const char *m, size_t n, size_t *pos, double *used,
                    double *total) {
  const char *p = m + *pos, *end = m + n, *q;

  while ((q = memmem(p, (size_t)(end - p), "MiB /", 5)) != NULL) {
    const char *a = q, *b = q + 5;
    double u = 0, t = 0, f = 1;
    while (a > m && isdigit((unsigned char)a[-1]))
      a--;
    while (b < end && *b == ' ')
      b++;
    p = q + 5;
    if (a == q || b >= end || !isdigit((unsigned char)*b))
      continue;
    for (const char *d = q - 1; d >= a; d--, f *= 10)
      u += (*d - '0') * f;
    while (b < end && isdigit((unsigned char)*b))
      t = t * 10 + (*b++ - '0');
    if (end - b < 3 || memcmp(b, "MiB", 3) != 0 || t <= 0 || u > t)
      continue;
    *pos = (size_t)(b + 3 - m);
    *used = u;
    *total = t;
    return 1;
  }
  return 0;
}

#define SMI_BUSY 0.5 /* share of a GPU's memory in use that makes it busy */

/* The number before a suffix ending at e (m <= e): digits back from e. */
static double number_before(const char *m, const char *e) {
  double v = 0, f = 1;
  const char *d = e;

  while (d > m && isdigit((unsigned char)d[-1]))
    d--;
  if (d == e || e - d > 9)
    return -1;
  for (const char *k = e - 1; k >= d; k--, f *= 10)
    v += (*k - '0') * f;
  return v;
}

/* TensorFlow's device creation ("Created device /job:.../device:GPU:0
 * with 1200 MB memory: -> device: 0, name: NVIDIA A100-SXM4-40GB, ...",
 * TensorFlow 1's "Created TensorFlow device (... with 1200 MB memory) ->
 * physical GPU (device: 0, name: Tesla V100-SXM2-16GB, ..."): it takes
 * the memory that is free, so a device created with much less than the
 * capacity its model name states found the rest in use.  The used and
 * total MiB as an nvidia-smi cell would give them; 0 if the line is not
 * one or the name states no capacity. */
static int tf_device_cell(const char *m, size_t n, double *used,
                          double *total) {
  const char *end = m + n, *w, *nm, *g;
  double mb, gb;

  if (memmem(m, n, "Created ", 8) == NULL ||
      (w = memmem(m, n, " MB memory", 10)) == NULL ||
      (nm = memmem(w, (size_t)(end - w), "name: ", 6)) == NULL)
    return 0;
  mb = number_before(m, w);
  for (g = nm + 6; g + 2 <= end && *g != ',' && *g != ')'; g++)
    if (g[0] == 'G' && g[1] == 'B' && g > nm + 6 &&
        isdigit((unsigned char)g[-1]))
      break;
  if (g + 2 > end || g[0] != 'G' || g[1] != 'B')
    return 0;
  gb = number_before(nm + 6, g);
  if (mb <= 0 || gb <= 0 || mb > gb * 1024)
    return 0;
  *total = gb * 1024;
  *used = *total - mb;
  return 1;
}

/* The largest share of a GPU's memory in use in an nvidia-smi snapshot
 * printed before the out-of-memory error at x with no training progress
 * between the two (the job had not run yet: the memory is others'), or
 * -1 without one. */
static double busy_before(const sm__window *w, const segs *s, int x) {
  double best = -1;

  for (int i = x - 1; i >= 0; i--) {
    size_t n, pos = 0;
    double u, t;
    const char *m = msg_of(&w->lines[i], &n);
    if (progress_between(s, i - 1, x) > 0)
      break;
    while (smi_cell(m, n, &pos, &u, &t))
      if (u / t > best)
        best = u / t;
    if (tf_device_cell(m, SM_MIN(n, (size_t)1024), &u, &t) && u / t > best)
      best = u / t;
  }
  return best;
}

/* An out-of-memory report that gives no figures: raised at context
 * creation, or after a snapshot that shows a GPU already in use, it is
 * memory others hold (a shared GPU); else the job's own.  1 if it set
 * the verdict. */
static int oom_without_figures(sm__lctx *c, const sm__window *w, const segs *s,
                               int x, verdict *v) {
  int at_ctx = oom_at_context(c, w, s, x);
  double busy = at_ctx ? -1 : busy_before(w, s, x);

  if (!at_ctx && busy < SMI_BUSY)
    return 0;
  v->cat = SM__CAT_INFRA;
  v->comp = SM__COMP_GPU;
  v->retryable = 1;
  v->ev = SM__EV_LIMIT;
  v->conf = at_ctx ? 0.65 : 0.55;
  snprintf(v->cause, sizeof(v->cause), "the GPU was not free: %s",
           at_ctx ? "creating the job's CUDA context ran out of memory, so "
                    "other processes held it"
                  : "a snapshot (nvidia-smi, TensorFlow's device creation) "
                    "showed its memory in use by others before the job "
                    "ran");
  if (at_ctx)
    snprintf(v->reason, sizeof(v->reason),
             "signature %s raised while creating the CUDA context (a shared "
             "GPU)",
             v->sig ? v->sig->name : "cuda-oom");
  else
    snprintf(v->reason, sizeof(v->reason),
             "signature %s without figures; a snapshot before it shows "
             "%.0f%% of a GPU's memory in use (a shared GPU)",
             v->sig ? v->sig->name : "cuda-oom", busy * 100);
  return 1;
}

/* A CUDA out-of-memory error on a GPU that other processes fill is the
 * shared resource's fault, not the job's sizing. */
static void resolve_oom(sm__lctx *c, const sm__window *w, const segs *s, int x,
                        verdict *v) {
  char text[4096];
  size_t k = 0;
  double total = 0, others = 0, share;
  int procs = 0, exact;

  /* The report may be wrapped over the next lines. */
  for (int i = x; i < w->n && i <= x + 3 && k + 1 < sizeof(text); i++) {
    size_t n;
    const char *m = msg_of(&w->lines[i], &n);
    n = SM_MIN(n, sizeof(text) - 1 - k);
    memcpy(text + k, m, n);
    k += n;
    text[k++] = ' ';
  }
  share = oom_others_share(text, k, &total, &others);
  if (share < 0 && oom_without_figures(c, w, s, x, v))
    return;
  if (share < 0.25)
    return;
  exact = memmem(text, k, "this process has", 16) != NULL;
  /* Several other processes may be the job's own ranks on one GPU (a
   * device-placement bug): then the verdict stays below the planner's
   * gate. */
  for (const char *p = text;
       (p = memmem(p, (size_t)(text + k - p), "Process ", 8)) != NULL; p += 8)
    if (p + 8 < text + k && isdigit((unsigned char)p[8]))
      procs++;
  /* Memory others hold is a shared resource taken, not a broken GPU.
   * Without the report's own figure for this process ("this process has
   * X memory in use"), the part that is not PyTorch's (its CUDA context,
   * other allocators in the same process) counts as others': less sure. */
  v->cat = SM__CAT_INFRA;
  v->comp = SM__COMP_GPU;
  v->retryable = 1;
  v->ev = SM__EV_LIMIT;
  v->conf = procs >= 2 ? 0.6 : exact ? 0.75 : 0.7;
  snprintf(v->cause, sizeof(v->cause),
           "the GPU was not free: other processes held %.1f of its %.1f GiB "
           "when the job ran out of memory",
           others / 1073741824.0, total / 1073741824.0);
  snprintf(v->reason, sizeof(v->reason),
           "signature %s: %.0f%% of the GPU's memory was held by other "
           "processes (a shared GPU)%s",
           v->sig ? v->sig->name : "cuda-oom", share * 100,
           procs >= 2 ? "; several processes: they may be the job's own "
                        "ranks on one GPU"
                      : "");
}

/* ==== Nodes and devices ==== */

/* 1 if the capture t[so..eo) of line l names code, not a machine: it
 * lies in the line's exception type ("urllib3.exceptions.MaxRetryError:"
 * read by a "host: " label pattern), or it is a dotted name whose last
 * part is a CamelCase class ("boto3.exceptions.S3UploadFailedError"). */
static int names_code(const sm__line *l, const char *t, regoff_t so,
                      regoff_t eo) {
  size_t at = (size_t)(t - l->text) + (size_t)so, last = (size_t)so;

  if (l->exc_len > 0 && at < l->msg + (size_t)l->exc_len &&
      at + (size_t)(eo - so) > l->msg)
    return 1;
  for (regoff_t i = so; i < eo; i++)
    if (t[i] == '.')
      last = (size_t)i + 1;
  if (last == (size_t)so || last + 1 >= (size_t)eo ||
      !isupper((unsigned char)t[last]))
    return 0;
  for (size_t i = last + 1; i < (size_t)eo; i++)
    if (islower((unsigned char)t[i]))
      return 1;
  return 0;
}

/* Group 1 of the first pattern that matches the line's message (after
 * its prefix) or, failing that, the whole line, unless it names code:
 * its length (0 without a match) and *at, in the matcher's buffer. */
static size_t group1(sm__lctx *c, sm__pattern *const *pats, int np,
                     const sm__line *l, const char **at) {
  regmatch_t sub[2];

  for (int pass = 0; pass < 2; pass++) {
    const char *t = pass == 0 ? l->text + l->msg : l->text;
    size_t n = SM_MIN(pass == 0 ? l->len - l->msg : l->len, (size_t)4096);
    if (pass == 1 && l->msg == 0)
      break;
    for (int k = 0; k < np; k++)
      if (sm__pattern_exec(&c->m, pats[k], t, n, sub, 2) && sub[1].rm_so >= 0 &&
          sub[1].rm_eo > sub[1].rm_so &&
          !names_code(l, t, sub[1].rm_so, sub[1].rm_eo)) {
        *at = c->m.buf + sub[1].rm_so;
        return (size_t)(sub[1].rm_eo - sub[1].rm_so);
      }
  }
  return 0;
}

/* group1's text copied into the arena, or NULL. */
static const char *capture(sm__lctx *c, sm__pattern *const *pats, int np,
                           const sm__line *l, sm_arena *a) {
  const char *at;
  size_t n = group1(c, pats, np, l, &at);

  return n > 0 ? sm_arena_strndup(a, at, n) : NULL;
}

static const char *find_near(sm__lctx *c, sm__pattern *const *pats, int np,
                             const sm__window *w, int x, int y, int ctx,
                             sm_arena *a) {
  const char *r;

  if (np == 0)
    return NULL;
  if ((r = capture(c, pats, np, &w->lines[x], a)) != NULL)
    return r;
  if (y >= 0 && (r = capture(c, pats, np, &w->lines[y], a)) != NULL)
    return r;
  for (int d = 1; d <= ctx; d++) {
    if (x - d >= 0 && (r = capture(c, pats, np, &w->lines[x - d], a)))
      return r;
    if (x + d < w->n && (r = capture(c, pats, np, &w->lines[x + d], a)))
      return r;
  }
  return NULL;
}

/* ==== Earned confidence ==== */

/* 1 if the exception at x was raised by a raise statement in the job's
 * own code: its innermost frame is the job's and the source line shown
 * under that frame starts with "raise". */
static int raised_by_job(const sm__window *w, const segs *s, int x) {
  frames f;
  int k;
  size_t n, i = 0;
  const char *m;

  collect_frames(w, s, x, &f);
  if (f.innermost < 0 || f.innermost != f.inner_user)
    return 0;
  k = f.innermost + 1;
  if (k >= x || !s->in_tb[k] || w->lines[k].kind == SM__K_TB_FRAME)
    return 0;
  m = msg_of(&w->lines[k], &n);
  while (i < n && (m[i] == ' ' || m[i] == '\t'))
    i++;
  return n - i >= 6 && memcmp(m + i, "raise", 5) == 0 &&
         (m[i + 5] == ' ' || m[i + 5] == '(');
}

#define LOCAL_LINES 64 /* lines of the same fault whose host is looked up */
#define LOCAL_HOSTS 4  /* distinct hosts remembered */

/* Group 1 of the first host pattern that matches line l, into out;
 * returns its length or 0. */
static size_t host_of(sm__lctx *c, const sm_sigdb *db, const sm__line *l,
                      char *out, size_t cap) {
  const char *at;
  size_t hl = group1(c, db->hosts, db->n_hosts, l, &at);

  if (hl == 0)
    return 0;
  if (hl >= cap)
    hl = cap - 1;
  memcpy(out, at, hl);
  out[hl] = '\0';
  return hl;
}

/* Distinct hosts that report the same fault as the cause (the same
 * signature and Xid code) in the window, up to LOCAL_HOSTS. */
static int fault_hosts(sm__lctx *c, const sm_sigdb *db, const sm__window *w,
                       const verdict *v) {
  char hosts[LOCAL_HOSTS][96];
  int nh = 0, seen = 0;

  for (int i = 0; i < w->n && seen < LOCAL_LINES && nh < LOCAL_HOSTS; i++) {
    const sm__line *l = &w->lines[i];
    char h[96];
    int dup = 0;
    if ((l->kind != SM__K_CAUSE && l->kind != SM__K_SYMPTOM) ||
        l->sig != v->sig || (v->xid >= 0 && l->xid != v->xid))
      continue;
    seen++;
    if (host_of(c, db, l, h, sizeof(h)) == 0)
      continue;
    for (int k = 0; k < nh && !dup; k++)
      dup = strcmp(hosts[k], h) == 0;
    if (!dup)
      snprintf(hosts[nh++], sizeof(hosts[0]), "%s", h);
  }
  return nh;
}

/* An infrastructure verdict's confidence must be earned before it can
 * reach the planner's gate:
 *
 *   - only a report of a broken part (evidence "fault") may; a resource
 *     that ran out (the job may have used it up), an event from outside
 *     and anything inferred stay at or below SM__EV_CEILING;
 *   - a fault of one GPU, link or host is reported from one host (a
 *     network fault from the two ends of a path): the same fault from
 *     more hosts is not located on one node (a fabric-wide problem, or
 *     the same command failing the same way everywhere), so it is not a
 *     reason to fence off one;
 *   - an exception that the job's own code raised (a raise statement in
 *     the innermost frame, a frame of the job) carries the job's words,
 *     not a report of the system's: its check failed. */
static void earn(sm__lctx *c, const sm_sigdb *db, const sm__window *w,
                 const segs *s, int x, verdict *v) {
  int nh, most;

  if (v->cat != SM__CAT_INFRA)
    return;
  if (w->lines[x].exc_len > 0 && raised_by_job(w, s, x) && v->conf > 0.6) {
    v->conf = 0.6;
    strncat(v->reason,
            "; the job's own code raised it (its words, not a report of "
            "the system)",
            sizeof(v->reason) - strlen(v->reason) - 1);
  }
  if (v->ev != SM__EV_FAULT && v->conf > SM__EV_CEILING) {
    v->conf = SM__EV_CEILING;
    snprintf(v->reason + strlen(v->reason),
             sizeof(v->reason) - strlen(v->reason),
             "; it rests on %s evidence, not on a report of a broken part",
             sm__ev_names[v->ev]);
  }
  if (v->sig == NULL || v->comp == SM__COMP_STORAGE ||
      v->comp == SM__COMP_NONE || v->comp == SM__COMP_GPU_MEMORY)
    return;
  most = v->comp == SM__COMP_NETWORK ? 2 : 1;
  nh = fault_hosts(c, db, w, v);
  if (nh > most && v->conf > 0.6) {
    v->conf = 0.6;
    snprintf(v->reason + strlen(v->reason),
             sizeof(v->reason) - strlen(v->reason),
             "; the same fault is reported from %s%d hosts, so it is not "
             "located on one node",
             nh >= LOCAL_HOSTS ? "at least " : "", nh);
  }
}

/* A fault that a setting can cause (a [setting] record explains its
 * signature: the fabric's adapters, GID index, interfaces, transports),
 * with no training progress before it in the window: the job's first use
 * of the fabric failed.  A setting of the job or of the node that the log
 * does not show (a site profile, a container's environment) is then as
 * likely as a broken link, so the verdict stays below the gate.  After
 * progress the same fault is the fabric's. */
static void first_use(const sm_sigdb *db, const segs *s, int x, verdict *v) {
  if (v->cat != SM__CAT_INFRA || v->sig == NULL || v->conf <= SM__EV_CEILING ||
      !sm__sigdb_configurable(db, v->sig) || s->prog[x] > 0)
    return;
  v->conf = SM__EV_CEILING;
  strncat(v->reason,
          "; a fault that a setting can cause, with no training progress "
          "before it: the job's first use of the fabric failed, and a "
          "setting is as likely as a broken part",
          sizeof(v->reason) - strlen(v->reason) - 1);
}

/* ==== Output ==== */

static void add_evidence(sm_diagnosis *d, const sm__line *l, const char *role) {
  sm_evidence *e;

  if (d->n_evidence >= SM_DIAG_MAX_EVIDENCE)
    return;
  for (int i = 0; i < d->n_evidence; i++)
    if (d->evidence[i].line == l->no)
      return;
  e = &d->evidence[d->n_evidence];
  e->line = l->no;
  e->role = role;
  e->text = sm_arena_strndup(&d->_arena, l->text,
                             SM_MIN(l->len, (size_t)EVIDENCE_TEXT));
  if (e->text != NULL)
    d->n_evidence++;
}

/* Fills "{node}" and "{device}" in a command. */
static const char *fill(sm_arena *a, const char *cmd, const char *node,
                        const char *dev) {
  char out[512];
  size_t o = 0;

  for (const char *p = cmd; *p && o + 1 < sizeof(out);) {
    const char *val = NULL;
    size_t skip = 0;
    if (strncmp(p, "{node}", 6) == 0) {
      val = node ? node : "<node>";
      skip = 6;
    } else if (strncmp(p, "{device}", 8) == 0) {
      val = dev ? dev : "<device>";
      skip = 8;
    }
    if (val != NULL) {
      size_t l = strlen(val);
      if (o + l >= sizeof(out))
        break;
      memcpy(out + o, val, l);
      o += l;
      p += skip;
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = '\0';
  return sm_arena_strdup(a, out);
}

/* The cause at x was survived when at least SURVIVED_PROGRESS lines of
 * training progress follow it (the job went on: a warning that looked bad,
 * a retried read, a decoy in a preamble) and a later cause of another
 * signature, or an exception of another type, follows them.  (Ranks of a
 * data-parallel job cannot train on for long past a rank that died: they
 * wait for it at the next collective.)  Symptoms
 * after the progress do not count: other ranks train on for a while before they
 * notice that one died.  Returns the later cause, or -1.  (The locator does the
 * same across chunks; this holds within the window, for logs of any size.) */
/* 1 if lines a and b report the same fault: the same signature, or
 * exceptions of the same type without one. */
static int same_fault(const sm__line *a, const sm__line *b) {
  if (a->sig != NULL || b->sig != NULL)
    return a->sig == b->sig;
  return a->exc_len > 0 && a->exc_len == b->exc_len &&
         memcmp(a->text + a->msg, b->text + b->msg, (size_t)a->exc_len) == 0;
}

static int survived(const sm__window *w, const segs *s, int x) {
  int later = -1;
  const sm__line *lx = &w->lines[x];

  for (int i = x + 1; i < w->n; i++) {
    const sm__line *l = &w->lines[i];
    if (progress_between(s, x, i) >= SURVIVED_PROGRESS && !s->in_tb[i] &&
        (l->kind == SM__K_CAUSE || l->kind == SM__K_EXC)) {
      if (same_fault(lx, l))
        return -1; /* the same fault again: a restart loop, the first
                    * counts */
      if (later < 0 && sm__line_strength(l) >= 2)
        later = i;
    }
  }
  return later;
}

#define SURVIVED_TO_END 16 /* progress lines after an outlived error */

/* 1 if the job survived the error at x and nothing failed after it: the
 * window reaches the end of the log, sustained training progress follows
 * the error (SURVIVED_TO_END lines or more: the peers of a rank that died
 * print a few steps before they hang) and no failing line follows the
 * last progress.  A warning the job recovered from (an allocator that
 * retried smaller, a shard read again) is not a failure. */
static int survived_to_the_end(const sm__window *w, const segs *s, int x) {
  int last = -1;

  if (!w->at_end || x < 0)
    return 0;
  for (int i = w->n - 1; i > x && last < 0; i--)
    if (s->prog[i + 1] > s->prog[i])
      last = i;
  if (last < 0 || progress_between(s, x, last + 1) < SURVIVED_TO_END)
    return 0;
  for (int i = last + 1; i < w->n; i++)
    if (eff_strength(w, s, i) >= 1 && w->lines[i].kind != SM__K_NOTICE)
      return 0;
  return 1;
}

/* A network fault at x and, later in its episode, an error of the
 * program: a specific user or framework signature, or an exception raised
 * in the job's own code.  When a rank dies of its own error, its peers
 * see the connection fail (InfiniBand retries exceeded, resets) and may
 * print that first; a network fault does not make the job's code raise.
 * Returns the program error's line, or -1. */
static int program_error_after(const sm__window *w, const segs *s, int x,
                               int end) {
  const sm__line *lx = &w->lines[x];

  if (lx->kind != SM__K_CAUSE || lx->sig->category != SM__CAT_INFRA ||
      lx->sig->component != SM__COMP_NETWORK)
    return -1;
  for (int i = x + 1; i < end; i++) {
    const sm__line *l = &w->lines[i];
    if (s->in_tb[i])
      continue;
    if (l->kind == SM__K_CAUSE && !l->sig->generic &&
        (l->sig->category == SM__CAT_USER ||
         l->sig->category == SM__CAT_FRAMEWORK))
      return i;
    if (l->kind == SM__K_EXC && s->start[i] >= 0) {
      frames f;
      collect_frames(w, s, i, &f);
      if (f.n > 0 && f.innermost == f.inner_user)
        return i;
    }
  }
  return -1;
}

static void segs_release(segs *s) {
  sm_free(s->prog);
  sm_free(s->in_tb);
  sm_free(s->start);
  sm_free(s->exc_of);
}

/* 1 if the "what():" message m[0..n) restates a cascade of a known class
 * ("NCCL error: remote process exited or there was a network error", a
 * watchdog's timeout): a symptom signature of its own with a category,
 * so the throw above it is the cascade's restatement too, and the cause
 * is looked for where the cascade began. */
static int restates_cascade(sm__lctx *c, const char *m, size_t n) {
  const sm__sig *sig;
  size_t i = 0;
  int sx;

  while (i < n && (m[i] == ' ' || m[i] == '\t'))
    i++;
  if (n - i < 7 || memcmp(m + i, "what():", 7) != 0)
    return 0;
  i += 7;
  while (i < n && (m[i] == ' ' || m[i] == '\t'))
    i++;
  sig = sm__sigdb_match(&c->m, m + i, SM_MIN(n - i, (size_t)8192), &sx);
  return sig != NULL && sig->role == SM__ROLE_SYMPTOM &&
         sig->category != SM__CAT_UNKNOWN;
}

/* The window's traceback segments and its training progress, counted
 * once: which errors the job went on after, and whether a fault came at
 * the job's first use of the fabric.  0 or -1 (out of memory). */
/* A C++ "terminate called after throwing an instance of 'T'" is a
 * cascade's restatement when the "what():" message under it reports a
 * cause of its own (a CUDA or NCCL error the signatures know); else it is
 * the program's own error, the first of its episode, classified by the
 * message's words (resolve_runtime). */
static void promote_cxx_throws(sm__lctx *c, sm__window *w) {
  for (int i = 0; i < w->n; i++) {
    sm__line *l = &w->lines[i];
    const sm__line *wl;
    size_t n, skip;
    const char *m;
    int sx, tl;
    if (l->rt != SM__RT_CXX_THROW || l->exc_len > 0 ||
        (l->kind != SM__K_SYMPTOM && l->kind != SM__K_NORMAL &&
         l->kind != SM__K_WEAK))
      continue;
    if (i + 1 < w->n) {
      wl = &w->lines[i + 1];
      m = msg_of(wl, &n);
      if (wl->kind == SM__K_CAUSE ||
          sm__sigdb_match_cause(&c->m, m, SM_MIN(n, (size_t)8192), &sx) ||
          restates_cascade(c, m, n))
        continue;
    }
    m = msg_of(l, &n);
    if (sm__runtime_error(m, n, &skip, &tl) != SM__RT_CXX_THROW)
      continue;
    l->msg += skip;
    l->exc_len = tl;
    l->kind = SM__K_EXC;
    l->sig = NULL;
  }
}

static int segs_build(sm__lctx *c, sm__window *w, segs *s) {
  s->in_tb = sm_calloc((size_t)w->n + 1, 1);
  s->start = sm_calloc((size_t)w->n + 1, sizeof(int));
  s->exc_of = sm_calloc((size_t)w->n + 1, sizeof(int));
  s->prog = sm_calloc((size_t)w->n + 1, sizeof(int));
  if (!s->in_tb || !s->start || !s->exc_of || !s->prog) {
    segs_release(s);
    return -1;
  }
  promote_cxx_throws(c, w);
  segment(w, s);
  for (int i = 0; i < w->n; i++) {
    const sm__line *l = &w->lines[i];
    int k = l->kind;
    size_t n;
    const char *m = msg_of(l, &n);
    s->prog[i + 1] =
        s->prog[i] + ((k == SM__K_NORMAL || k == SM__K_WEAK ||
                       k == SM__K_BENIGN || k == SM__K_NOTICE) &&
                      sm__sigdb_progress(&c->m, m, SM_MIN(n, (size_t)2048)));
  }
  return 0;
}

/* The cause line of the episode that starts at the first failing line:
 * its first cause (past errors the job survived, and before a network
 * fault the program's own error after it); else a symptom that restates
 * a specific cause; else its first symptom; else what ends a traceback.
 * *end receives the episode's end, *cut a traceback cut at its start
 * (or -1), *strong whether the episode has a strong line at all. */
static int pick_cause(sm__lctx *c, const sm__window *w, const segs *s, int *end,
                      int *cut, int *strong) {
  int a = w->first_fail, x = -1;

  *end = a + EPISODE < w->n ? a + EPISODE : w->n;
  *cut = -1;
  *strong = 0;
  for (int i = a; i < *end && x < 0; i++)
    if (eff_strength(w, s, i) >= 2)
      x = i;
  /* An error the job survived: training went on after it and the job
   * failed later of another cause. */
  for (int round = 0; x >= 0 && round < 8; round++) {
    int y = survived(w, s, x);
    if (y < 0)
      break;
    x = y;
    *end = x + EPISODE < w->n ? x + EPISODE : w->n;
  }
  if (x >= 0) {
    int y = program_error_after(w, s, x, *end);
    if (y >= 0)
      x = y;
  }
  for (int i = a; i < *end && x < 0; i++)
    if (!s->in_tb[i] && restated(c, &w->lines[i], 0) != NULL)
      x = i;
  for (int i = a; i < *end && x < 0; i++)
    if (!s->in_tb[i] && restated(c, &w->lines[i], 1) != NULL)
      x = i;
  for (int i = a; i < *end && x < 0; i++)
    if (eff_strength(w, s, i) >= 1 && w->lines[i].kind != SM__K_NOTICE)
      x = i;
  for (int i = a; i < *end && x < 0; i++)
    if (eff_strength(w, s, i) >= 1)
      x = i;
  for (int i = a; i < *end; i++)
    if (sm__line_strong(&w->lines[i]))
      *strong = 1;
  if (x >= 0)
    return x;
  /* Only traceback structure: the exception that ends it. */
  for (int i = a; i < *end && x < 0; i++)
    if (s->in_tb[i] && s->exc_of[i] >= 0)
      x = s->exc_of[i];
  /* A traceback without its exception line: its last line. */
  if (x < 0 && s->in_tb[a]) {
    *cut = a;
    x = a;
    while (x + 1 < w->n && s->in_tb[x + 1])
      x++;
  }
  return x < 0 ? a : x;
}

/* From the picked line to the first report of the fault: back to the
 * first exception of a chain (*chain_steps: how far), else, among
 * interleaved ranks, a cause as strong just after with an earlier
 * timestamp. */
/* The root of a JVM exception chain that starts at line x: the last
 * "Caused by:" of the block of frames and causes after it (Spark, Hadoop,
 * Ray's Java workers wrap the error that started it in each layer). */
static int java_root(const sm__window *w, int x, int *steps) {
  int root = x;

  for (int i = x + 1; i < w->n && i <= x + 4096; i++) {
    const sm__line *l = &w->lines[i];
    if (l->rt == SM__RT_JAVA_CAUSE || l->rt == SM__RT_DOTNET_INNER) {
      root = i;
      (*steps)++;
      continue;
    }
    if (l->kind != SM__K_TB_FRAME && l->kind != SM__K_BLANK &&
        l->kind != SM__K_TB_CODE && !indented(l)) {
      size_t n;
      const char *m = msg_of(&w->lines[root], &n);
      /* A Python worker's traceback quoted by its JVM driver (PySpark's
       * "Caused by: ...PythonException: Traceback (most recent call
       * last):"): the Python exception that ends it is the root. */
      if (l->exc_len > 0 && l->rt == SM__RT_NONE &&
          memmem(m, SM_MIN(n, (size_t)4096), "Traceback (most recent call",
                 27) != NULL) {
        root = i;
        (*steps)++;
      }
      break;
    }
  }
  return root;
}

static int first_report(const sm__window *w, const segs *s, int x, int end,
                        int *chain_steps) {
  int best, sx;

  *chain_steps = 0;
  if (w->lines[x].rt == SM__RT_JAVA_HEAD ||
      w->lines[x].rt == SM__RT_JAVA_CAUSE ||
      w->lines[x].rt == SM__RT_DOTNET_HEAD ||
      w->lines[x].rt == SM__RT_DOTNET_INNER)
    return java_root(w, x, chain_steps);
  if (w->lines[x].exc_len > 0)
    x = chain_root(w, s, x, chain_steps);
  if (*chain_steps != 0 || isnan(w->lines[x].ts))
    return x;
  sx = eff_strength(w, s, x);
  best = x;
  for (int i = x + 1; i < end && i <= x + TS_LOOKAHEAD; i++) {
    const sm__line *li = &w->lines[i];
    if (eff_strength(w, s, i) >= sx && sx >= 2 && !isnan(li->ts) &&
        li->ts < w->lines[best].ts && w->lines[best].ts - li->ts < 86400)
      best = i;
  }
  return best;
}

/* The diagnosis's fields from the verdict on the cause line x (rx: the
 * parent's re-raise that reported it first, or -1). */
static void fill_verdict(sm__lctx *c, const sm_sigdb *db, const sm__window *w,
                         int x, int rx, int explain, const verdict *v,
                         const sm_diag_opts *o, sm_diagnosis *d) {
  const sm__line *lx = &w->lines[x];

  d->failure = 1;
  d->first_error_line = rx >= 0 ? w->lines[rx].no : lx->no;
  d->first_error_offset = rx >= 0 ? w->lines[rx].off : lx->off;
  d->category = sm__cat_names[v->cat];
  d->component =
      sm__comp_names[v->cat == SM__CAT_INFRA || v->comp == SM__COMP_GPU_MEMORY
                         ? v->comp
                         : SM__COMP_NONE];
  d->confidence = v->conf;
  d->retryable = v->cat == SM__CAT_INFRA && v->retryable != 0;
  d->xid = v->xid;
  d->root_cause = sm_arena_strdup(&d->_arena, v->cause);
  d->reason = sm_arena_strdup(&d->_arena, v->reason);
  d->basis = v->cat == SM__CAT_INFRA ? sm__ev_names[v->ev] : NULL;
  d->signature = v->sig ? v->sig->name : NULL;
  if (lx->exc_len > 0)
    d->exception =
        sm_arena_strndup(&d->_arena, lx->text + lx->msg, (size_t)lx->exc_len);
  d->node = find_near(c, db->hosts, db->n_hosts, w, x, explain, o->context,
                      &d->_arena);
  d->device = find_near(c, db->devs, db->n_devs, w, x, explain, 8, &d->_arena);
}

/* Evidence: the cause, what explained it, the chain, the user frame, the
 * first symptoms. */
static void collect_evidence(const sm__window *w, const segs *s, int x, int rx,
                             int explain, int chain_steps, int end,
                             sm_diagnosis *d) {
  frames f;

  if (rx >= 0) {
    /* The first report of the error (the parent's re-raise), then the
     * original exception it names. */
    add_evidence(d, &w->lines[rx], "cause");
    add_evidence(d, &w->lines[x], "chain");
  } else {
    add_evidence(d, &w->lines[x], "cause");
  }
  if (explain >= 0)
    add_evidence(d, &w->lines[explain], "context");
  if (chain_steps > 0 && s->start[x] >= 0) {
    for (int i = x + 1; i < w->n && i < x + EPISODE; i++)
      if (w->lines[i].exc_len > 0 && s->start[i] >= 0) {
        add_evidence(d, &w->lines[i], "chain");
        break;
      }
  }
  collect_frames(w, s, x, &f);
  if (f.inner_user >= 0)
    add_evidence(d, &w->lines[f.inner_user], "frame");
  else if (f.innermost >= 0)
    add_evidence(d, &w->lines[f.innermost], "frame");
  for (int i = x + 1, k = 0; i < end && k < 2; i++)
    if (w->lines[i].kind == SM__K_SYMPTOM && !s->in_tb[i]) {
      add_evidence(d, &w->lines[i], "symptom");
      k++;
    }
}

/* Commands that diagnose an infrastructure component: the signature's,
 * else the component's, filled with the node and the device. */
static void diagnose_commands(const sm_sigdb *db, const verdict *v,
                              sm_diagnosis *d) {
  const sm__sig *sg = v->sig;
  char *const *cmds;
  int nc;

  if (v->cat != SM__CAT_INFRA)
    return;
  cmds = sg && sg->n_diagnose ? sg->diagnose : db->comps[v->comp].diagnose;
  nc = sg && sg->n_diagnose ? sg->n_diagnose : db->comps[v->comp].n_diagnose;
  for (int i = 0; i < nc && d->n_commands < SM_DIAG_MAX_COMMANDS; i++) {
    const char *f = fill(&d->_arena, cmds[i], d->node, d->device);
    if (f != NULL)
      d->commands[d->n_commands++] = f;
  }
}

/* A kill for host memory (the kernel's or a cgroup's OOM killer, a bare
 * SIGKILL) after the job's own memory figures rose, after a leak
 * warning, or, for a cgroup's kill, with the job's own request in the
 * log, is the job's: a leak in its code or framework, or a request too
 * small for it; never the node's.  Without such evidence the verdict
 * stays (the node's limit, below the gate). */
static void own_memory(const sm__window *w, int x, verdict *v) {
  int ev, lib = 0, frames_seen = 0;
  const char *why;

  if (v->sig == NULL || v->cat != SM__CAT_INFRA ||
      (v->sig->resolver != SM__RESOLVE_MEMORY &&
       v->sig->resolver != SM__RESOLVE_CGROUP_MEMORY))
    return;
  ev = sm__job_memory(w->lines, w->n, x,
                      v->sig->resolver == SM__RESOLVE_CGROUP_MEMORY);
  if (ev == 0)
    return;
  /* The frames of the last traceback before the kill say whose code
   * held the memory: a framework's alone, or the job's. */
  for (int i = x - 1; i >= 0 && i >= x - 256; i--) {
    const char *p;
    size_t pn;
    if (w->lines[i].kind != SM__K_TB_FRAME ||
        (pn = frame_path(&w->lines[i], &p)) == 0)
      continue;
    frames_seen++;
    if (!library_path(p, pn)) {
      lib = -1;
      break;
    }
    lib = 1;
  }
  why = ev & SM__JOBMEM_REQUEST  ? "the job's own memory request is in the log"
        : ev & SM__JOBMEM_GROWTH ? "the job's memory figures rose before it"
                                 : "a memory leak was reported before it";
  v->cat = frames_seen > 0 && lib == 1 && !(ev & SM__JOBMEM_REQUEST)
               ? SM__CAT_FRAMEWORK
               : SM__CAT_USER;
  v->comp = SM__COMP_NONE;
  v->retryable = 0;
  v->conf = 0.55;
  snprintf(v->cause, sizeof(v->cause), "%s",
           ev & SM__JOBMEM_REQUEST
               ? "the job used more host memory than it requested"
               : "the job's own host memory grew until it was killed (a leak "
                 "or unbounded growth)");
  snprintf(v->reason, sizeof(v->reason), "signature %s: %s, so the job's",
           v->sig->name, why);
}

int sm__cause_resolve(sm__lctx *c, const sm_sigdb *db, sm__window *w,
                      const sm_diag_opts *o, sm_diagnosis *d, sm_err *err) {
  segs s;
  int end, x, chain_steps, explain, strong, rx, cut;
  verdict v;

  if (segs_build(c, w, &s) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  x = pick_cause(c, w, &s, &end, &cut, &strong);
  x = first_report(w, &s, x, end, &chain_steps);
  if (strong && survived_to_the_end(w, &s, x))
    strong = 0;
  if (!strong) {
    d->failure = 0;
    segs_release(&s);
    return 0;
  }
  classify(c, db, w, &s, x, o->context, &v, &explain);
  if (cut >= 0 && v.sig == NULL)
    resolve_cut(db, w, cut, x, &v);
  own_memory(w, x, &v);
  corroborate(w, &s, explain >= 0 ? explain : x, o->context, &v);
  job_setting(c, w, x, &v);
  first_use(db, &s, x, &v);
  earn(c, db, w, &s, x, &v);
  rx = reraised_in_parent(w, &s, x);
  if (rx >= 0)
    strncat(v.reason, "; first reported where the parent re-raised it",
            sizeof(v.reason) - strlen(v.reason) - 1);
  fill_verdict(c, db, w, x, rx, explain, &v, o, d);
  collect_evidence(w, &s, x, rx, explain, chain_steps, end, d);
  diagnose_commands(db, &v, d);
  segs_release(&s);
  if (d->root_cause == NULL || d->reason == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  return 0;
}
