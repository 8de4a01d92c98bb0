/* pyeval.c - a bounded partial evaluator of Python configuration code on
 * the tree-sitter syntax tree.
 *
 * It runs the statements of configuration modules (and the functions and
 * classes they call) over value trees: constants, arithmetic, strings and
 * f-strings, dict/list/tuple literals and comprehensions of constants,
 * attribute and item assignment, dict(...)/ConfigDict/OmegaConf.create/
 * EasyDict/Namespace constructors, LazyCall(X)(...) and L(X)(...),
 * OmegaConf.load/merge/from_dotlist, functions with defaults, classes with
 * inheritance (super().__init__, class attributes, dataclass fields) and
 * imports of the repository's own modules (lazy-module _import_structure
 * tables included).  What it cannot know stays SM__T_UNKNOWN: calls into
 * libraries become SM__T_CALL nodes that keep the callee and the keyword
 * arguments (so `model = ViT(embed_dim=384)` still says what is built),
 * and a branch on an unknown condition makes what it assigns unknown.
 *
 * Nothing is executed: there is no I/O but reading repository files
 * through the safe reader, and the work is bounded in steps, call depth,
 * loop iterations and sizes.  Every value keeps the file and line it was
 * written at. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "advisor/advisor_int.h"
#include "advisor/tsnode.h"

#define MAX_STEPS 400000
#define MAX_CALL_DEPTH 12
#define MAX_EXPR_DEPTH 80
#define MAX_LOOP 256
#define MAX_ITEMS 4096
#define MAX_STR (64 * 1024)
#define MAX_BASES 8

/* Evaluator-made containers may be changed in place; others are copied
 * first. */
#define VF_OWNED 0x100

/* ==== Evaluator objects ==== */

typedef struct pymod {
  const char *rel;  /* file */
  const char *dir;  /* its directory */
  const char *name; /* dotted module name, for __name__ */
  const char *src;  /* text */
  TSNode root;      /* module node */
  sm__vnode *ns;    /* namespace */
  int state;        /* 0 new, 1 running, 2 done */
  int loaded;       /* 1 parsed, -1 unreadable, 0 not yet */
} pymod;

typedef struct pyclass pyclass;

typedef struct pyfunc {
  pymod *m;         /* defining module */
  TSNode def;       /* function_definition */
  const char *name; /* its name */
  sm__vnode *self;  /* bound instance, or NULL */
  pyclass *owner;   /* class defining it (for super()), or NULL */
} pyfunc;

struct pyclass {
  pymod *m;                    /* defining module */
  const char *name;            /* class name */
  sm__vnode *bases[MAX_BASES]; /* base values (CLASS or SYM) */
  int nb;                      /* count */
  sm__vnode *attrs;            /* class body namespace */
  const char **fields;         /* dataclass field order */
  int nfields;                 /* count */
  int dataclass;               /* @dataclass / pydantic / attrs */
};

/* A super() proxy. */
typedef struct pysuper {
  pyclass *cls;    /* the class whose bases are searched */
  sm__vnode *self; /* the instance */
} pysuper;

typedef struct frame {
  sm__ctx *c;        /* context */
  pymod *m;          /* module of the code */
  sm__vnode *locals; /* function locals, NULL at module level */
  sm__vnode *cls_ns; /* class body being run, or NULL */
  pyclass *cls;      /* class of the method running (super()) */
  sm__vnode *self;   /* self in a method */
  sm__vnode *ret;    /* returned value */
  int depth;         /* call depth */
} frame;

/* Control flow of a statement. */
enum { FLOW_NEXT = 0, FLOW_RETURN, FLOW_BREAK, FLOW_CONTINUE };

static sm__vnode *eval(frame *f, TSNode n, int depth);
static int exec_block(frame *f, TSNode block);
static sm__vnode *call_value(frame *f, sm__vnode *fn, sm__vnode *args,
                             sm__vnode *kw, TSNode at);
static pymod *module_get(sm__ctx *c, const char *rel);
static sm__vnode *module_run(sm__ctx *c, pymod *m);

/* ==== Helpers ==== */

static const char *span(frame *f, TSNode n, size_t *len) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  *len = b - a;
  return f->m->src + a;
}

static char *dup_span(frame *f, TSNode n) {
  size_t len;
  const char *s = span(f, n, &len);
  if (len > 4096)
    len = 4096;
  return sm__strndup(f->c, s, len);
}

static int budget(frame *f) {
  if (++f->c->eval_steps > MAX_STEPS) {
    if (f->c->eval_steps == MAX_STEPS + 1)
      sm__warn(f->c, "Python evaluation stopped after %d steps", MAX_STEPS);
    return 0;
  }
  return !f->c->stopped;
}

static sm__vnode *unknown(frame *f, TSNode at) {
  return sm__vt_new(f->c, SM__T_UNKNOWN, f->m->rel,
                    ts_node_is_null(at) ? 0 : line_of(at));
}

static sm__vnode *none_at(frame *f, TSNode at) {
  return sm__vt_new(f->c, SM__T_NULL, f->m->rel,
                    ts_node_is_null(at) ? 0 : line_of(at));
}

static sm__vnode *owned(frame *f, int t, TSNode at) {
  sm__vnode *n =
      sm__vt_new(f->c, t, f->m->rel, ts_node_is_null(at) ? 0 : line_of(at));
  if (n != NULL)
    n->flags |= VF_OWNED;
  return n;
}

static int container(const sm__vnode *n) {
  return n != NULL && (n->t == SM__T_MAP || n->t == SM__T_OBJ ||
                       n->t == SM__T_CALL || n->t == SM__T_LIST);
}

/* An owned copy of a container (itself when already owned). */
static sm__vnode *own(frame *f, sm__vnode *n) {
  sm__vnode *k;
  if (n == NULL || (n->flags & VF_OWNED))
    return n;
  k = sm__vt_copy(f->c, n);
  if (k != NULL)
    k->flags |= VF_OWNED;
  return k;
}

/* The value's file and line, moved to where it is used when it has
 * none. */
static sm__vnode *at_line(frame *f, sm__vnode *v, TSNode at) {
  if (v != NULL && v->path == NULL && !ts_node_is_null(at) && !container(v)) {
    sm__vnode *k = sm__vt_copy(f->c, v);
    if (k != NULL) {
      k->path = f->m->rel;
      k->line = line_of(at);
      return k;
    }
  }
  return v;
}

static const char *last_comp(const char *s) {
  const char *d = strrchr(s, '.');
  return d ? d + 1 : s;
}

/* ==== Names ==== */

static sm__vnode *import_name(frame *f, sm__vnode *mv, const char *x,
                              TSNode at);

/* `from m import x` binds x lazily: m runs only when x is used, so the
 * work follows what the job's code touches, not every import. */
static int lazy_import(const sm__vnode *v) {
  return v != NULL && v->t == SM__T_MODULE && (v->flags & SM__VF_LAZY);
}

static sm__vnode *resolve_lazy(frame *f, sm__vnode *ns, const char *name,
                               sm__vnode *v) {
  sm__vnode mv, *r;
  TSNode none = {0};
  if (!lazy_import(v))
    return v;
  mv = *v;
  mv.flags &= ~(unsigned)SM__VF_LAZY;
  r = import_name(f, &mv, v->str, none);
  if (r == NULL)
    r = unknown(f, none);
  if (ns != NULL && (ns->flags & VF_OWNED))
    sm__vt_put(f->c, ns, name, r);
  return r;
}

static sm__vnode *lookup(frame *f, const char *name) {
  sm__vnode *v;
  if (f->cls_ns && (v = sm__vt_get(f->cls_ns, name)) != NULL)
    return resolve_lazy(f, f->cls_ns, name, v);
  if (f->locals && (v = sm__vt_get(f->locals, name)) != NULL)
    return resolve_lazy(f, f->locals, name, v);
  if ((v = sm__vt_get(f->m->ns, name)) != NULL)
    return resolve_lazy(f, f->m->ns, name, v);
  return NULL;
}

static void bind(frame *f, const char *name, sm__vnode *v) {
  sm__vnode *ns = f->cls_ns ? f->cls_ns : f->locals ? f->locals : f->m->ns;
  if (v == NULL || name == NULL)
    return;
  sm__vt_put(f->c, ns, sm__strdup(f->c, name), v);
}

/* ==== Classes ==== */

static sm__vnode *class_attr(pyclass *k, const char *name, pyclass **where,
                             int depth) {
  sm__vnode *v;
  if (k == NULL || depth > 16)
    return NULL;
  if ((v = sm__vt_get(k->attrs, name)) != NULL) {
    if (where)
      *where = k;
    return v;
  }
  for (int i = 0; i < k->nb; i++)
    if (k->bases[i]->t == SM__T_CLASS &&
        (v = class_attr(k->bases[i]->aux, name, where, depth + 1)) != NULL)
      return v;
  return NULL;
}

/* Bound method of f for self. */
static sm__vnode *bind_method(frame *fr, sm__vnode *fn, sm__vnode *self,
                              pyclass *owner) {
  pyfunc *pf, *orig = fn->aux;
  sm__vnode *b = sm__vt_copy(fr->c, fn);
  if (b == NULL || orig == NULL)
    return fn;
  pf = sm_arena_alloc(&fr->c->arena, sizeof(*pf));
  if (pf == NULL)
    return fn;
  *pf = *orig;
  pf->self = self;
  if (owner)
    pf->owner = owner;
  b->aux = pf;
  return b;
}

/* Submodule name of package module m (pkg/name.py or pkg/name/__init__.py,
 * when m is the package's __init__.py) as a module value, or NULL. */
static sm__vnode *submodule(frame *f, pymod *m, const char *name) {
  const char *p = sm__py_module_path(f->c, m->dir, name, 1);
  pymod *sub;
  sm__vnode *mv;
  if (p == NULL || strstr(m->rel, "__init__.py") == NULL ||
      (sub = module_get(f->c, p)) == NULL)
    return NULL;
  mv = sm__vt_new(f->c, SM__T_MODULE, p, 1);
  if (mv != NULL)
    mv->aux = sub;
  return mv;
}

/* Attribute name of v. */
static sm__vnode *getattr_v(frame *f, sm__vnode *v, const char *name,
                            TSNode at) {
  sm__vnode *r;
  if (v == NULL)
    return unknown(f, at);
  switch (v->t) {
  case SM__T_SYM: {
    sm__vnode *s = sm__vt_new(f->c, SM__T_SYM, f->m->rel, line_of(at));
    if (s != NULL)
      s->str = sm__printf(f->c, "%s.%s", v->str, name);
    return s;
  }
  case SM__T_MODULE: {
    pymod *m = v->aux;
    sm__vnode *ns = module_run(f->c, m);
    if ((r = sm__vt_get(ns, name)) != NULL) {
      if (lazy_import(r)) {
        frame g = *f;
        g.m = m;
        g.depth++;
        if (g.depth >= MAX_CALL_DEPTH)
          return unknown(f, at);
        r = resolve_lazy(&g, ns, name, r);
      }
      return r;
    }
    /* A submodule: pkg/name.py or pkg/name/__init__.py. */
    if ((r = submodule(f, m, name)) != NULL)
      return r;
    return unknown(f, at);
  }
  case SM__T_CLASS: {
    pyclass *k = v->aux;
    if ((r = class_attr(k, name, NULL, 0)) != NULL)
      return r;
    return unknown(f, at);
  }
  case SM__T_OBJ: {
    pyclass *k = v->aux, *where = NULL;
    if ((r = sm__vt_get(v, name)) != NULL)
      return r;
    if ((r = class_attr(k, name, &where, 0)) != NULL) {
      if (r->t == SM__T_FUNC)
        return bind_method(f, r, v, where);
      return r;
    }
    return unknown(f, at);
  }
  case SM__T_MAP:
  case SM__T_CALL:
    if ((r = sm__vt_get(v, name)) != NULL)
      return r;
    return unknown(f, at);
  case SM__T_STR:
    /* pathlib: Path(__file__).parent / .name / .stem */
    if (strcmp(name, "parent") == 0 || strcmp(name, "name") == 0 ||
        strcmp(name, "stem") == 0) {
      const char *s = v->str, *sl = strrchr(s, '/');
      if (strcmp(name, "parent") == 0)
        return sm__vt_strv(f->c,
                           sl ? sm__strndup(f->c, s, (size_t)(sl - s)) : "",
                           f->m->rel, line_of(at));
      {
        const char *base = sl ? sl + 1 : s;
        const char *dot = strrchr(base, '.');
        if (strcmp(name, "stem") == 0 && dot != NULL)
          return sm__vt_strv(f->c,
                             sm__strndup(f->c, base, (size_t)(dot - base)),
                             f->m->rel, line_of(at));
        return sm__vt_strv(f->c, base, f->m->rel, line_of(at));
      }
    }
    return unknown(f, at);
  default:
    if (v->t == SM__T_UNKNOWN && v->aux != NULL) {
      /* super() proxy */
      pysuper *sp = v->aux;
      pyclass *where = NULL;
      for (int i = 0; i < sp->cls->nb; i++)
        if (sp->cls->bases[i]->t == SM__T_CLASS &&
            (r = class_attr(sp->cls->bases[i]->aux, name, &where, 0)) != NULL) {
          if (r->t == SM__T_FUNC)
            return bind_method(f, r, sp->self, where);
          return r;
        }
    }
    return unknown(f, at);
  }
}

/* ==== Literals and operators ==== */

static const char *fmt_num(frame *f, double v) {
  if (v == floor(v) && fabs(v) < 1e15)
    return sm__printf(f->c, "%lld", (long long)v);
  return sm__printf(f->c, "%.17g", v);
}

/* str() of a scalar, or NULL. */
static const char *to_text(frame *f, const sm__vnode *v) {
  if (v == NULL)
    return NULL;
  switch (v->t) {
  case SM__T_STR:
    return v->str;
  case SM__T_NUM:
    return fmt_num(f, v->num);
  case SM__T_BOOL:
    return v->num ? "True" : "False";
  case SM__T_NULL:
    return "None";
  default:
    return NULL;
  }
}

static sm__vnode *string_lit(frame *f, TSNode n, int depth) {
  sm_buf b;
  sm__vnode *out;
  size_t len;
  const char *t = span(f, n, &len);
  int fstr = 0;
  TSTreeCursor cur;

  if (is(n, "concatenated_string")) {
    sm_buf_init(&b, MAX_STR);
    cur = ts_tree_cursor_new(n);
    if (ts_tree_cursor_goto_first_child(&cur)) {
      do {
        TSNode k = ts_tree_cursor_current_node(&cur);
        sm__vnode *part;
        if (!is(k, "string"))
          continue;
        part = string_lit(f, k, depth + 1);
        if (part == NULL || part->t != SM__T_STR) {
          ts_tree_cursor_delete(&cur);
          sm_buf_release(&b);
          return unknown(f, n);
        }
        sm_buf_adds(&b, part->str);
      } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
    out = sm__vt_strv(f->c, sm_buf_str(&b), f->m->rel, line_of(n));
    sm_buf_release(&b);
    return out;
  }
  for (size_t i = 0; i < len && i < 3; i++)
    if (t[i] == 'f' || t[i] == 'F')
      fstr = 1;
  sm_buf_init(&b, MAX_STR);
  cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      size_t kl;
      const char *kt;
      if (is(k, "interpolation")) {
        TSNode e = field(k, "expression");
        sm__vnode *v;
        const char *s;
        if (ts_node_is_null(e))
          e = ts_node_named_child(k, 0);
        v = eval(f, e, depth + 1);
        s = fstr ? to_text(f, v) : NULL;
        if (s == NULL || !ts_node_is_null(field(k, "format_specifier"))) {
          ts_tree_cursor_delete(&cur);
          sm_buf_release(&b);
          return unknown(f, n);
        }
        sm_buf_adds(&b, s);
      } else if (is(k, "string_content")) {
        kt = span(f, k, &kl);
        sm_buf_add(&b, kt, kl);
      } else if (is(k, "escape_sequence")) {
        kt = span(f, k, &kl);
        if (kl == 2 && kt[1] == 'n')
          sm_buf_addc(&b, '\n');
        else if (kl == 2 && kt[1] == 't')
          sm_buf_addc(&b, '\t');
        else if (kl == 2)
          sm_buf_addc(&b, kt[1]);
        else
          sm_buf_add(&b, kt, kl);
      }
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  out = sm__vt_strv(f->c, sm_buf_str(&b), f->m->rel, line_of(n));
  sm_buf_release(&b);
  if (out != NULL)
    out->flags |= SM__VF_QUOTED;
  return out;
}

static sm__vnode *num_node(frame *f, double v, TSNode at) {
  if (!isfinite(v))
    return unknown(f, at);
  return sm__vt_numv(f->c, SM__T_NUM, v, f->m->rel, line_of(at));
}

static int numeric(const sm__vnode *v) {
  return v != NULL && (v->t == SM__T_NUM || v->t == SM__T_BOOL);
}

/* Dotted key of a reference to configuration (args.lr -> "lr",
 * cfg.TRAIN.LR -> "train.lr"), for expressions kept symbolic. */
static const char *ref_key(frame *f, TSNode n) {
  char *t = dup_span(f, n);
  return t ? sm__dotted_key(t, is(n, "attribute"), 1) : NULL;
}

/* x OP y on numbers, Python's rules (% takes the divisor's sign, //
 * floors); unknown for a zero divisor or a huge power or shift. */
static sm__vnode *num_binop(frame *f, const char *op, size_t oplen, double x,
                            double y, TSNode at) {
  double r;
  if (oplen == 1) {
    switch (op[0]) {
    case '+':
      r = x + y;
      break;
    case '-':
      r = x - y;
      break;
    case '*':
      r = x * y;
      break;
    case '/':
      if (y == 0)
        return unknown(f, at);
      r = x / y;
      break;
    case '%':
      if (y == 0)
        return unknown(f, at);
      r = fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      break;
    case '&':
    case '|':
      /* Bitwise operators on integers a long long holds; beyond that
       * (1e63) the cast is undefined, so the value is unknown. */
      if (!(fabs(x) < 9.2e18 && fabs(y) < 9.2e18) || x != floor(x) ||
          y != floor(y))
        return unknown(f, at);
      r = op[0] == '&' ? (double)((long long)x & (long long)y)
                       : (double)((long long)x | (long long)y);
      break;
    default:
      return unknown(f, at);
    }
  } else if (oplen == 2 && op[0] == '/' && op[1] == '/') {
    if (y == 0)
      return unknown(f, at);
    r = floor(x / y);
  } else if (oplen == 2 && op[0] == '*' && op[1] == '*') {
    if (fabs(y) > 64)
      return unknown(f, at);
    r = pow(x, y);
  } else if (oplen == 2 && (op[0] == '<' || op[0] == '>')) {
    if (y < 0 || y > 62)
      return unknown(f, at);
    r = op[0] == '<' ? x * pow(2, y) : floor(x / pow(2, y));
  } else {
    return unknown(f, at);
  }
  return num_node(f, r, at);
}

/* "%d_%s" % (x, y) with %s/%d/%i/%g/%f conversions. */
static sm__vnode *percent_format(frame *f, sm__vnode *a, const sm__vnode *b,
                                 TSNode at) {
  sm__ctx *c = f->c;
  sm_buf out;
  const sm__vnode *args = b;
  int k = 0;
  sm__vnode *res;
  sm_buf_init(&out, MAX_STR);
  for (const char *p = a->str; *p; p++) {
    const sm__vnode *arg;
    const char *s;
    if (*p != '%') {
      sm_buf_addc(&out, *p);
      continue;
    }
    if (p[1] == '%') {
      sm_buf_addc(&out, '%');
      p++;
      continue;
    }
    while (p[1] && strchr("0123456789.-+ ", p[1]))
      p++;
    if (!p[1] || !strchr("sdifgr", p[1])) {
      sm_buf_release(&out);
      return unknown(f, at);
    }
    p++;
    arg = (args && args->t == SM__T_LIST) ? (k < args->n ? args->e[k].v : NULL)
                                          : (k == 0 ? args : NULL);
    k++;
    s = to_text(f, arg);
    if (s == NULL) {
      sm_buf_release(&out);
      return unknown(f, at);
    }
    sm_buf_adds(&out, s);
  }
  res = sm__vt_strv(c, sm_buf_str(&out), f->m->rel, line_of(at));
  sm_buf_release(&out);
  return res;
}

static sm__vnode *binop(frame *f, const char *op, size_t oplen, sm__vnode *a,
                        sm__vnode *b, TSNode at) {
  sm__ctx *c = f->c;
  if (numeric(a) && numeric(b))
    return num_binop(f, op, oplen, a->num, b->num, at);
  if (oplen == 1 && op[0] == '+' && a && b && a->t == SM__T_STR &&
      b->t == SM__T_STR) {
    if (strlen(a->str) + strlen(b->str) > MAX_STR)
      return unknown(f, at);
    return sm__vt_strv(c, sm__printf(c, "%s%s", a->str, b->str), f->m->rel,
                       line_of(at));
  }
  if (oplen == 1 && op[0] == '/' && a && b && a->t == SM__T_STR &&
      b->t == SM__T_STR) {
    /* pathlib: ROOT / "configs" */
    return sm__vt_strv(
        c, a->str[0] ? sm__printf(c, "%s/%s", a->str, b->str) : b->str,
        f->m->rel, line_of(at));
  }
  if (oplen == 1 && op[0] == '%' && a && a->t == SM__T_STR)
    return percent_format(f, a, b, at);
  if (oplen == 1 && op[0] == '*' && a && b &&
      ((a->t == SM__T_STR && numeric(b)) ||
       (a->t == SM__T_LIST && numeric(b)))) {
    double times = b->num;
    if (times < 0 || times > 1024)
      return unknown(f, at);
    if (a->t == SM__T_STR) {
      sm_buf out;
      sm__vnode *res;
      sm_buf_init(&out, MAX_STR);
      for (int i = 0; i < (int)times; i++)
        if (sm_buf_adds(&out, a->str) != 0)
          break;
      res = sm__vt_strv(c, sm_buf_str(&out), f->m->rel, line_of(at));
      sm_buf_release(&out);
      return res;
    } else {
      sm__vnode *l = owned(f, SM__T_LIST, at);
      for (int i = 0; i < (int)times && l && l->n < MAX_ITEMS; i++)
        for (int j = 0; j < a->n; j++)
          sm__vt_push(c, l, a->e[j].v);
      return l;
    }
  }
  if (oplen == 1 && op[0] == '+' && a && b && a->t == SM__T_LIST &&
      b->t == SM__T_LIST) {
    sm__vnode *l = owned(f, SM__T_LIST, at);
    for (int j = 0; j < a->n && l; j++)
      sm__vt_push(c, l, a->e[j].v);
    for (int j = 0; j < b->n && l && l->n < MAX_ITEMS; j++)
      sm__vt_push(c, l, b->e[j].v);
    return l;
  }
  if (oplen == 1 && op[0] == '|' && a && b && a->t == SM__T_MAP &&
      b->t == SM__T_MAP) {
    sm__vnode *m = own(f, sm__vt_copy(c, a));
    for (int j = 0; j < b->n && m; j++)
      if (b->e[j].key)
        sm__vt_put(c, m, b->e[j].key, b->e[j].v);
    return m;
  }
  return unknown(f, at);
}

/* Arithmetic over configuration keys kept as RPN ("lr batch_size * 256
 * /"), for rules whose operands the layered store decides. */
static int rpn_of(frame *f, TSNode n, sm_buf *out, int depth);

static int rpn_sub(void *f, TSNode n, sm_buf *out, int depth) {
  return rpn_of(f, n, out, depth);
}

static int rpn_of(frame *f, TSNode n, sm_buf *out, int depth) {
  if (depth > 20 || out->len > 400)
    return -1;
  if (is(n, "parenthesized_expression"))
    return rpn_of(f, ts_node_named_child(n, 0), out, depth + 1);
  if (is(n, "binary_operator"))
    return sm__ts_rpn_binop(f->m->src, n, out, depth, rpn_sub, f);
  {
    sm__vnode *v = eval(f, n, depth + 1);
    if (numeric(v)) {
      sm_buf_addf(out, " %.17g", v->num);
      return 0;
    }
  }
  if (is(n, "identifier") || is(n, "attribute")) {
    const char *r = ref_key(f, n);
    if (r == NULL || strlen(r) > 100)
      return -1;
    sm_buf_addc(out, ' ');
    sm_buf_adds(out, r);
    return 0;
  }
  return -1;
}

static int compare(frame *f, const char *op, sm__vnode *a, sm__vnode *b) {
  int eq;
  if (strcmp(op, "is") == 0 || strcmp(op, "is not") == 0) {
    int an = a && a->t == SM__T_NULL, bn = b && b->t == SM__T_NULL;
    if (!(an || bn) || (a && a->t == SM__T_UNKNOWN) ||
        (b && b->t == SM__T_UNKNOWN))
      return -1;
    eq = an && bn;
    return strcmp(op, "is") == 0 ? eq : !eq;
  }
  if (strcmp(op, "in") == 0 || strcmp(op, "not in") == 0) {
    int found = 0;
    if (b == NULL || a == NULL)
      return -1;
    if (b->t == SM__T_STR && a->t == SM__T_STR)
      found = strstr(b->str, a->str) != NULL;
    else if (b->t == SM__T_LIST) {
      const char *as = to_text(f, a);
      if (as == NULL)
        return -1;
      for (int i = 0; i < b->n && !found; i++) {
        const char *bs = to_text(f, b->e[i].v);
        if (bs == NULL)
          return -1;
        found = strcmp(as, bs) == 0;
      }
    } else if (b->t == SM__T_MAP && a->t == SM__T_STR)
      found = sm__vt_get(b, a->str) != NULL;
    else
      return -1;
    return strcmp(op, "in") == 0 ? found : !found;
  }
  if (numeric(a) && numeric(b)) {
    double x = a->num, y = b->num;
    if (strcmp(op, "==") == 0)
      return x == y;
    if (strcmp(op, "!=") == 0)
      return x != y;
    if (strcmp(op, "<") == 0)
      return x < y;
    if (strcmp(op, "<=") == 0)
      return x <= y;
    if (strcmp(op, ">") == 0)
      return x > y;
    if (strcmp(op, ">=") == 0)
      return x >= y;
    return -1;
  }
  if (a && b && (strcmp(op, "==") == 0 || strcmp(op, "!=") == 0)) {
    const char *as = to_text(f, a), *bs = to_text(f, b);
    if (as == NULL || bs == NULL || a->t == SM__T_UNKNOWN ||
        b->t == SM__T_UNKNOWN)
      return -1;
    if ((a->t == SM__T_STR) != (b->t == SM__T_STR))
      eq = 0;
    else
      eq = strcmp(as, bs) == 0;
    return op[0] == '=' ? eq : !eq;
  }
  return -1;
}

/* ==== Containers ==== */

static sm__vnode *iter_items(frame *f, sm__vnode *v, TSNode at) {
  /* A sequence to iterate: lists, dict keys, strings are not iterated. */
  if (v == NULL)
    return NULL;
  if (v->t == SM__T_LIST)
    return v;
  if (v->t == SM__T_MAP) {
    sm__vnode *l = owned(f, SM__T_LIST, at);
    for (int i = 0; i < v->n && l; i++)
      if (v->e[i].key)
        sm__vt_push(f->c, l,
                    sm__vt_strv(f->c, v->e[i].key, f->m->rel, line_of(at)));
    return l;
  }
  return NULL;
}

/* Binds a for/comprehension target to one item. */
static void bind_target(frame *f, TSNode target, sm__vnode *v);

static sm__vnode *comprehension(frame *f, TSNode n, int depth) {
  /* [body for x in it if cond] with one for clause over a known
   * sequence; the variables live in the enclosing frame (harmless for
   * configs). */
  int dict = is(n, "dictionary_comprehension");
  TSNode body = field(n, "body");
  TSNode forc = {0}, ifc = {0};
  sm__vnode *out = owned(f, dict ? SM__T_MAP : SM__T_LIST, n), *seq;
  uint32_t nc = ts_node_named_child_count(n);
  int nfor = 0;
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(n, i);
    if (is(k, "for_in_clause")) {
      forc = k;
      nfor++;
    } else if (is(k, "if_clause")) {
      ifc = k;
    }
  }
  if (nfor != 1 || out == NULL)
    return unknown(f, n);
  seq = iter_items(f, eval(f, field(forc, "right"), depth + 1), n);
  if (seq == NULL || seq->n > MAX_LOOP)
    return unknown(f, n);
  for (int i = 0; i < seq->n; i++) {
    bind_target(f, field(forc, "left"), seq->e[i].v);
    if (!ts_node_is_null(ifc)) {
      int t = sm__vt_truth(eval(f, ts_node_named_child(ifc, 0), depth + 1));
      if (t < 0)
        return unknown(f, n);
      if (!t)
        continue;
    }
    if (dict) {
      sm__vnode *k = eval(f, field(body, "key"), depth + 1);
      sm__vnode *v = eval(f, field(body, "value"), depth + 1);
      const char *ks = to_text(f, k);
      if (ks == NULL)
        return unknown(f, n);
      sm__vt_put(f->c, out, ks, v);
    } else {
      sm__vt_push(f->c, out, eval(f, body, depth + 1));
    }
  }
  return out;
}

static sm__vnode *dict_lit(frame *f, TSNode n, int depth) {
  sm__vnode *m = owned(f, SM__T_MAP, n);
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (m == NULL)
        break;
      if (is(k, "pair")) {
        sm__vnode *kv = eval(f, field(k, "key"), depth + 1);
        const char *ks = to_text(f, kv);
        if (ks != NULL)
          sm__vt_put(f->c, m, ks, eval(f, field(k, "value"), depth + 1));
      } else if (is(k, "dictionary_splat")) {
        sm__vnode *s = eval(f, ts_node_named_child(k, 0), depth + 1);
        if (s && (s->t == SM__T_MAP || s->t == SM__T_OBJ))
          for (int i = 0; i < s->n; i++)
            if (s->e[i].key)
              sm__vt_put(f->c, m, s->e[i].key, s->e[i].v);
      }
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return m ? m : unknown(f, n);
}

static sm__vnode *list_lit(frame *f, TSNode n, int depth) {
  sm__vnode *l = owned(f, SM__T_LIST, n);
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (l == NULL || l->n >= MAX_ITEMS)
        break;
      if (!ts_node_is_named(k) || is(k, "comment"))
        continue;
      if (is(k, "list_splat")) {
        sm__vnode *s = eval(f, ts_node_named_child(k, 0), depth + 1);
        if (s && s->t == SM__T_LIST)
          for (int i = 0; i < s->n; i++)
            sm__vt_push(f->c, l, s->e[i].v);
        continue;
      }
      sm__vt_push(f->c, l, eval(f, k, depth + 1));
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return l ? l : unknown(f, n);
}

/* ==== Calls ==== */

/* Positional arguments (list) and keyword arguments (map) of a call. */
static void call_args(frame *f, TSNode args, sm__vnode **pos, sm__vnode **kw,
                      int depth) {
  TSTreeCursor cur;
  *pos = owned(f, SM__T_LIST, args);
  *kw = owned(f, SM__T_MAP, args);
  if (ts_node_is_null(args) || *pos == NULL || *kw == NULL)
    return;
  if (is(args, "generator_expression")) {
    sm__vt_push(f->c, *pos, unknown(f, args));
    return;
  }
  cur = ts_tree_cursor_new(args);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode a = ts_tree_cursor_current_node(&cur);
      if (!ts_node_is_named(a) || is(a, "comment"))
        continue;
      if (is(a, "keyword_argument")) {
        char *k = dup_span(f, field(a, "name"));
        if (k != NULL)
          sm__vt_put(f->c, *kw, k, eval(f, field(a, "value"), depth + 1));
      } else if (is(a, "dictionary_splat")) {
        sm__vnode *s = eval(f, ts_node_named_child(a, 0), depth + 1);
        if (s && (s->t == SM__T_MAP || s->t == SM__T_OBJ))
          for (int i = 0; i < s->n; i++)
            if (s->e[i].key)
              sm__vt_put(f->c, *kw, s->e[i].key, s->e[i].v);
      } else if (is(a, "list_splat")) {
        sm__vnode *s = eval(f, ts_node_named_child(a, 0), depth + 1);
        if (s && s->t == SM__T_LIST)
          for (int i = 0; i < s->n; i++)
            sm__vt_push(f->c, *pos, s->e[i].v);
        else
          sm__vt_push(f->c, *pos, unknown(f, a));
      } else {
        sm__vt_push(f->c, *pos, eval(f, a, depth + 1));
      }
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

static sm__vnode *arg_at(sm__vnode *pos, sm__vnode *kw, int i,
                         const char *name) {
  sm__vnode *v = name ? sm__vt_get(kw, name) : NULL;
  if (v != NULL)
    return v;
  if (pos != NULL && i >= 0 && i < pos->n)
    return pos->e[i].v;
  return NULL;
}

/* A map made from the first positional (a mapping) and the keywords. */
static sm__vnode *make_map(frame *f, sm__vnode *pos, sm__vnode *kw, TSNode at) {
  sm__vnode *m = owned(f, SM__T_MAP, at), *a0 = arg_at(pos, NULL, 0, NULL);
  if (m == NULL)
    return unknown(f, at);
  if (a0 != NULL &&
      (a0->t == SM__T_MAP || a0->t == SM__T_OBJ || a0->t == SM__T_CALL)) {
    for (int i = 0; i < a0->n; i++)
      if (a0->e[i].key)
        sm__vt_put(f->c, m, a0->e[i].key, a0->e[i].v);
  } else if (a0 != NULL && a0->t == SM__T_LIST) {
    /* dict([("a", 1), ...]) */
    for (int i = 0; i < a0->n; i++) {
      sm__vnode *p = a0->e[i].v;
      const char *k;
      if (p->t == SM__T_LIST && p->n == 2 &&
          (k = to_text(f, p->e[0].v)) != NULL)
        sm__vt_put(f->c, m, k, p->e[1].v);
    }
  } else if (a0 != NULL && a0->t != SM__T_NULL) {
    return unknown(f, at);
  }
  for (int i = 0; kw && i < kw->n; i++)
    sm__vt_put(f->c, m, kw->e[i].key, kw->e[i].v);
  return m;
}

/* The name of a callable value (for LazyCall targets and CALL nodes). */
static const char *callable_name(frame *f, sm__vnode *v) {
  if (v == NULL)
    return NULL;
  if (v->t == SM__T_SYM || v->t == SM__T_STR)
    return v->str;
  if (v->t == SM__T_CLASS)
    return ((pyclass *)v->aux)->name;
  if (v->t == SM__T_FUNC)
    return ((pyfunc *)v->aux)->name;
  (void)f;
  return NULL;
}

static sm__vnode *instantiate(frame *f, sm__vnode *cls, sm__vnode *pos,
                              sm__vnode *kw, TSNode at);

/* Loads a config file named by a path value (OmegaConf.load). */
static sm__vnode *load_path(frame *f, sm__vnode *p, TSNode at) {
  const char *rel;
  sm__vnode *t;
  if (p == NULL || p->t != SM__T_STR)
    return unknown(f, at);
  rel = sm__repo_join(f->c, "", p->str);
  if (rel == NULL || !sm__fs_is_file(f->c, rel))
    rel = sm__repo_join(f->c, f->m->dir, p->str);
  if (rel == NULL || !sm__fs_is_file(f->c, rel))
    return unknown(f, at);
  t = sm__cfg_tree(f->c, rel);
  return t ? t : unknown(f, at);
}

/* "{} {name} {0}".format(...): plain fields only (no format spec or
 * conversion). */
static sm__vnode *str_format(frame *f, const char *t, sm__vnode *pos,
                             sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  int line = line_of(at);
  sm_buf out;
  sm__vnode *r;
  int k = 0;
  sm_buf_init(&out, MAX_STR);
  for (const char *p = t; *p; p++) {
    if (*p == '{' && p[1] == '{') {
      sm_buf_addc(&out, '{');
      p++;
    } else if (*p == '}' && p[1] == '}') {
      sm_buf_addc(&out, '}');
      p++;
    } else if (*p == '{') {
      const char *close = strchr(p, '}');
      char key[128];
      sm__vnode *v;
      const char *s2;
      if (close == NULL || (size_t)(close - p) >= sizeof(key)) {
        sm_buf_release(&out);
        return unknown(f, at);
      }
      snprintf(key, sizeof(key), "%.*s", (int)(close - p - 1), p + 1);
      if (strchr(key, ':') || strchr(key, '!')) {
        sm_buf_release(&out);
        return unknown(f, at);
      }
      if (key[0] == '\0')
        v = arg_at(pos, NULL, k++, NULL);
      else if (isdigit((unsigned char)key[0]))
        v = arg_at(pos, NULL, atoi(key), NULL);
      else
        v = sm__vt_get(kw, key);
      s2 = to_text(f, v);
      if (s2 == NULL) {
        sm_buf_release(&out);
        return unknown(f, at);
      }
      sm_buf_adds(&out, s2);
      p = close;
    } else {
      sm_buf_addc(&out, *p);
    }
  }
  r = sm__vt_strv(c, sm_buf_str(&out), f->m->rel, line);
  sm_buf_release(&out);
  return r;
}

static sm__vnode *str_method(frame *f, sm__vnode *s, const char *name,
                             sm__vnode *pos, sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  const char *t = s->str;
  int line = line_of(at);
  if (strcmp(name, "lower") == 0 || strcmp(name, "upper") == 0) {
    char *o = sm__strdup(c, t);
    for (char *p = o; p && *p; p++)
      *p = (char)(name[0] == 'l' ? tolower((unsigned char)*p)
                                 : toupper((unsigned char)*p));
    return sm__vt_strv(c, o, f->m->rel, line);
  }
  if (strcmp(name, "strip") == 0 || strcmp(name, "rstrip") == 0 ||
      strcmp(name, "lstrip") == 0) {
    size_t n = strlen(t);
    const char *b = t;
    if (arg_at(pos, NULL, 0, NULL) != NULL)
      return unknown(f, at);
    if (name[0] != 'r')
      while (*b && isspace((unsigned char)*b))
        b++;
    n = strlen(b);
    if (name[0] != 'l')
      while (n > 0 && isspace((unsigned char)b[n - 1]))
        n--;
    return sm__vt_strv(c, sm__strndup(c, b, n), f->m->rel, line);
  }
  if (strcmp(name, "replace") == 0) {
    sm__vnode *a = arg_at(pos, NULL, 0, NULL), *b = arg_at(pos, NULL, 1, NULL);
    sm_buf out;
    sm__vnode *r;
    size_t al;
    if (a == NULL || b == NULL || a->t != SM__T_STR || b->t != SM__T_STR ||
        (al = strlen(a->str)) == 0)
      return unknown(f, at);
    sm_buf_init(&out, MAX_STR);
    for (const char *p = t; *p;) {
      if (strncmp(p, a->str, al) == 0) {
        sm_buf_adds(&out, b->str);
        p += al;
      } else {
        sm_buf_addc(&out, *p++);
      }
    }
    r = sm__vt_strv(c, sm_buf_str(&out), f->m->rel, line);
    sm_buf_release(&out);
    return r;
  }
  if (strcmp(name, "format") == 0)
    return str_format(f, t, pos, kw, at);
  if (strcmp(name, "split") == 0 || strcmp(name, "rsplit") == 0) {
    sm__vnode *sep = arg_at(pos, kw, 0, "sep");
    sm__vnode *l = owned(f, SM__T_LIST, at);
    const char *p = t;
    size_t sl;
    if (sep == NULL || sep->t != SM__T_STR || (sl = strlen(sep->str)) == 0 ||
        arg_at(pos, kw, 1, "maxsplit") != NULL || l == NULL)
      return unknown(f, at);
    for (;;) {
      const char *hit = strstr(p, sep->str);
      size_t n = hit ? (size_t)(hit - p) : strlen(p);
      sm__vt_push(c, l, sm__vt_strv(c, sm__strndup(c, p, n), f->m->rel, line));
      if (hit == NULL || l->n >= MAX_ITEMS)
        break;
      p = hit + sl;
    }
    return l;
  }
  if (strcmp(name, "join") == 0) {
    sm__vnode *a = arg_at(pos, NULL, 0, NULL);
    sm_buf out;
    sm__vnode *r;
    if (a == NULL || a->t != SM__T_LIST)
      return unknown(f, at);
    sm_buf_init(&out, MAX_STR);
    for (int i = 0; i < a->n; i++) {
      const char *s2 = to_text(f, a->e[i].v);
      if (s2 == NULL || a->e[i].v->t != SM__T_STR) {
        sm_buf_release(&out);
        return unknown(f, at);
      }
      if (i)
        sm_buf_adds(&out, t);
      sm_buf_adds(&out, s2);
    }
    r = sm__vt_strv(c, sm_buf_str(&out), f->m->rel, line);
    sm_buf_release(&out);
    return r;
  }
  if (strcmp(name, "startswith") == 0 || strcmp(name, "endswith") == 0) {
    sm__vnode *a = arg_at(pos, NULL, 0, NULL);
    size_t n = strlen(t), an;
    if (a == NULL || a->t != SM__T_STR)
      return unknown(f, at);
    an = strlen(a->str);
    return sm__vt_numv(c, SM__T_BOOL,
                       an <= n &&
                           (name[0] == 's' ? strncmp(t, a->str, an) == 0
                                           : strcmp(t + n - an, a->str) == 0),
                       f->m->rel, line);
  }
  if (strcmp(name, "resolve") == 0 || strcmp(name, "absolute") == 0 ||
      strcmp(name, "expanduser") == 0)
    return s;
  if (strcmp(name, "joinpath") == 0) {
    sm__vnode *a = arg_at(pos, NULL, 0, NULL);
    return binop(f, "/", 1, s, a, at);
  }
  return unknown(f, at);
}

/* Mutating methods of maps and lists: the receiver must be owned. */
static sm__vnode *container_method(frame *f, sm__vnode *o, const char *name,
                                   sm__vnode *pos, sm__vnode *kw, TSNode at,
                                   int *handled) {
  sm__ctx *c = f->c;
  *handled = 1;
  if (o->t == SM__T_MAP || o->t == SM__T_OBJ || o->t == SM__T_CALL) {
    if (strcmp(name, "get") == 0) {
      sm__vnode *k = arg_at(pos, NULL, 0, NULL), *v;
      const char *ks = to_text(f, k);
      if (ks == NULL)
        return unknown(f, at);
      v = sm__vt_get(o, ks);
      if (v == NULL)
        v = arg_at(pos, NULL, 1, NULL);
      return v ? v : none_at(f, at);
    }
    if (strcmp(name, "copy") == 0 || strcmp(name, "deepcopy") == 0)
      return own(f, sm__vt_copy(c, o));
    if (strcmp(name, "update") == 0 || strcmp(name, "merge_from_dict") == 0) {
      sm__vnode *a0 = arg_at(pos, NULL, 0, NULL);
      if (!(o->flags & VF_OWNED))
        return none_at(f, at);
      if (a0 && container(a0) && a0->t != SM__T_LIST)
        for (int i = 0; i < a0->n; i++)
          if (a0->e[i].key) {
            sm__vnode *cur = sm__vt_get(o, a0->e[i].key);
            sm__vnode *nv = a0->e[i].v;
            if (strcmp(name, "merge_from_dict") == 0 && cur)
              nv = sm__vt_merge(c, cur, nv, SM__VM_DEEP);
            sm__vt_put(c, o, a0->e[i].key, nv);
          }
      for (int i = 0; kw && i < kw->n; i++)
        sm__vt_put(c, o, kw->e[i].key, kw->e[i].v);
      return none_at(f, at);
    }
    if (strcmp(name, "setdefault") == 0) {
      sm__vnode *k = arg_at(pos, NULL, 0, NULL);
      const char *ks = to_text(f, k);
      sm__vnode *v;
      if (ks == NULL)
        return unknown(f, at);
      if ((v = sm__vt_get(o, ks)) != NULL)
        return v;
      v = arg_at(pos, NULL, 1, NULL);
      if (v == NULL)
        v = none_at(f, at);
      if (o->flags & VF_OWNED)
        sm__vt_put(c, o, sm__strdup(c, ks), v);
      return v;
    }
    if (strcmp(name, "pop") == 0) {
      sm__vnode *k = arg_at(pos, NULL, 0, NULL), *v;
      const char *ks = to_text(f, k);
      if (ks == NULL)
        return unknown(f, at);
      v = sm__vt_get(o, ks);
      if (v != NULL && (o->flags & VF_OWNED))
        sm__vt_del(o, ks);
      if (v == NULL)
        v = arg_at(pos, NULL, 1, NULL);
      return v ? v : unknown(f, at);
    }
    if (strcmp(name, "items") == 0 || strcmp(name, "keys") == 0 ||
        strcmp(name, "values") == 0) {
      sm__vnode *l = owned(f, SM__T_LIST, at);
      for (int i = 0; i < o->n && l; i++) {
        sm__vnode *item;
        if (o->e[i].key == NULL)
          continue;
        if (name[0] == 'k')
          item = sm__vt_strv(c, o->e[i].key, f->m->rel, line_of(at));
        else if (name[0] == 'v')
          item = o->e[i].v;
        else {
          item = owned(f, SM__T_LIST, at);
          sm__vt_push(c, item,
                      sm__vt_strv(c, o->e[i].key, f->m->rel, line_of(at)));
          sm__vt_push(c, item, o->e[i].v);
        }
        sm__vt_push(c, l, item);
      }
      return l ? l : unknown(f, at);
    }
  }
  if (o->t == SM__T_LIST) {
    if (strcmp(name, "append") == 0) {
      sm__vnode *a = arg_at(pos, NULL, 0, NULL);
      if ((o->flags & VF_OWNED) && a && o->n < MAX_ITEMS)
        sm__vt_push(c, o, a);
      return none_at(f, at);
    }
    if (strcmp(name, "extend") == 0) {
      sm__vnode *a = arg_at(pos, NULL, 0, NULL);
      if ((o->flags & VF_OWNED) && a && a->t == SM__T_LIST)
        for (int i = 0; i < a->n && o->n < MAX_ITEMS; i++)
          sm__vt_push(c, o, a->e[i].v);
      return none_at(f, at);
    }
    if (strcmp(name, "copy") == 0)
      return own(f, sm__vt_copy(c, o));
  }
  *handled = 0;
  return NULL;
}

static sm__vnode *instantiate(frame *f, sm__vnode *cls, sm__vnode *pos,
                              sm__vnode *kw, TSNode at);

/* An instance of a dataclass handed to an argument parser, kept for the
 * caller (sm__py_dc_instances_publish). */
static int record_instance(frame *f, sm__vnode *cls, TSNode at) {
  sm__vnode *obj = instantiate(f, cls, NULL, NULL, at), **slot;
  if (obj == NULL || obj->t != SM__T_OBJ)
    return 0;
  if (f->c->dc_instances.sz == 0)
    sm__vec_init(&f->c->dc_instances, sizeof(sm__vnode *));
  if (f->c->dc_instances.n >= 32 ||
      (slot = sm__vec_push(&f->c->dc_instances)) == NULL)
    return 0;
  *slot = obj;
  return 1;
}

void sm__py_dc_instances_clear(sm__ctx *c) {
  c->dc_instances.n = 0;
}

void sm__py_dc_instances_publish(sm__ctx *c, int layer) {
  for (int i = 0; i < c->dc_instances.n; i++)
    sm__vt_publish(c, SM__AT(c->dc_instances, sm__vnode *, i), NULL, layer);
  c->dc_instances.n = 0;
}

/* Dataclass argument parsers: HfArgumentParser((A, B)), TrlParser(...),
 * tyro.cli(A), pyrallis/draccus parse(config_class=A).  1 when the call
 * was one. */
static int dataclass_parser_call(frame *f, const char *name, sm__vnode *pos,
                                 sm__vnode *kw, TSNode at) {
  const char *l = last_comp(name);
  sm__vnode *classes = arg_at(pos, NULL, 0, NULL);
  int any = 0;
  if (!(strstr(l, "Parser") || strcmp(name, "tyro.cli") == 0 ||
        strcmp(l, "parse") == 0))
    return 0;
  if (classes == NULL)
    classes = sm__vt_get(kw, "config_class");
  if (classes == NULL)
    classes = sm__vt_get(kw, "dataclass_types");
  if (classes != NULL && classes->t == SM__T_CLASS)
    any = record_instance(f, classes, at);
  else if (classes != NULL && classes->t == SM__T_LIST)
    for (int i = 0; i < classes->n; i++)
      if (classes->e[i].v->t == SM__T_CLASS)
        any |= record_instance(f, classes->e[i].v, at);
  return any;
}

/* Library calls the evaluator knows by name; NULL when it does not. */
/* Config objects: mapping constructors, OmegaConf, LazyCall, dataclass
 * fields.  NULL when name is none of them. */
static sm__vnode *config_call(frame *f, const char *name, sm__vnode *pos,
                              sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  const char *l = last_comp(name);
  sm__vnode *a0 = arg_at(pos, NULL, 0, NULL);
  int line = line_of(at);
  /* Mapping constructors. */
  if (strcmp(name, "dict") == 0 || strcmp(l, "OrderedDict") == 0 ||
      strcmp(l, "EasyDict") == 0 || strcmp(name, "edict") == 0 ||
      strcmp(l, "ConfigDict") == 0 || strcmp(l, "FrozenConfigDict") == 0 ||
      strcmp(l, "AttrDict") == 0 || strcmp(l, "SimpleNamespace") == 0 ||
      strcmp(l, "Namespace") == 0 || strcmp(name, "OmegaConf.create") == 0 ||
      strcmp(l, "DictConfig") == 0 || strcmp(name, "Config") == 0 ||
      strcmp(l, "CfgNode") == 0 || strcmp(name, "mmengine.Config") == 0)
    return make_map(f, pos, kw, at);
  if (strcmp(name, "OmegaConf.merge") == 0 ||
      strcmp(name, "OmegaConf.unsafe_merge") == 0) {
    sm__vnode *m = NULL;
    for (int i = 0; pos && i < pos->n; i++)
      m = sm__vt_merge(c, m, pos->e[i].v, SM__VM_DEEP);
    return m ? own(f, m) : unknown(f, at);
  }
  if (strcmp(name, "OmegaConf.load") == 0)
    return load_path(f, a0, at);
  if ((strcmp(name, "II") == 0 || strcmp(l, "II") == 0) && a0 != NULL &&
      a0->t == SM__T_STR && a0->str[0] != '\0' && strlen(a0->str) < 200) {
    /* omegaconf.II("a.b") is the interpolation ${a.b}. */
    sm__vnode *r = owned(f, SM__T_REF, at);
    char key[256];
    if (r == NULL)
      return unknown(f, at);
    sm__key_norm(a0->str, strlen(a0->str), key, sizeof(key));
    r->str = sm__strdup(c, key);
    return r;
  }
  if (strcmp(name, "OmegaConf.from_cli") == 0 ||
      strcmp(name, "OmegaConf.from_dotlist") == 0) {
    const char *words[128];
    int n = 0;
    if (a0 == NULL || a0->t != SM__T_LIST)
      return owned(f, SM__T_MAP, at);
    for (int i = 0; i < a0->n && n < 128; i++)
      if (a0->e[i].v->t == SM__T_STR)
        words[n++] = a0->e[i].v->str;
    return sm__vt_dotlist(c, words, n, NULL);
  }
  if (strcmp(name, "OmegaConf.to_container") == 0 ||
      strcmp(name, "OmegaConf.to_object") == 0 ||
      strcmp(name, "OmegaConf.structured") == 0 || strcmp(l, "deepcopy") == 0 ||
      strcmp(name, "copy.copy") == 0 || strcmp(l, "FieldReference") == 0 ||
      strcmp(name, "frozen") == 0)
    return a0 ? a0 : unknown(f, at);
  if (strcmp(l, "placeholder") == 0)
    return none_at(f, at);
  /* LazyCall(X) / L(X): a node waiting for X's arguments. */
  if ((strcmp(l, "LazyCall") == 0 || strcmp(name, "L") == 0) && a0 != NULL &&
      pos->n == 1) {
    sm__vnode *lz = sm__vt_new(c, SM__T_CALL, f->m->rel, line);
    if (lz == NULL)
      return unknown(f, at);
    lz->flags |= SM__VF_LAZY;
    lz->str = callable_name(f, a0);
    return lz;
  }
  /* dataclasses.field(default=..., default_factory=...) */
  if (strcmp(name, "field") == 0 || strcmp(name, "dataclasses.field") == 0 ||
      strcmp(name, "Field") == 0 || strcmp(name, "pydantic.Field") == 0 ||
      strcmp(name, "attr.ib") == 0 || strcmp(name, "attrs.field") == 0) {
    sm__vnode *d = sm__vt_get(kw, "default");
    sm__vnode *df = sm__vt_get(kw, "default_factory");
    if (d == NULL && (strcmp(l, "Field") == 0) && a0 != NULL)
      d = a0;
    if (d != NULL)
      return d;
    if (df != NULL)
      return call_value(f, df, NULL, NULL, at);
    return unknown(f, at);
  }
  return NULL;
}

/* Conversions and small builtins over known values (int, str, len, min,
 * range, list, getattr, print).  NULL when name is none of them. */
static sm__vnode *builtin_call(frame *f, const char *name, sm__vnode *pos,
                               sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  sm__vnode *a0 = arg_at(pos, NULL, 0, NULL);
  int line = line_of(at);
  if (strcmp(name, "int") == 0 || strcmp(name, "float") == 0 ||
      strcmp(name, "round") == 0) {
    double v;
    if (a0 == NULL)
      return num_node(f, 0, at);
    if (numeric(a0))
      v = a0->num;
    else if (a0->t == SM__T_STR && sm_parse_double(a0->str, &v) == 0)
      ;
    else
      return unknown(f, at);
    if (name[0] == 'i')
      v = v < 0 ? ceil(v) : floor(v);
    else if (name[0] == 'r' && arg_at(pos, NULL, 1, NULL) == NULL)
      v = nearbyint(v);
    return num_node(f, v, at);
  }
  if (strcmp(name, "str") == 0) {
    const char *s = to_text(f, a0);
    return s ? sm__vt_strv(c, s, f->m->rel, line) : unknown(f, at);
  }
  if (strcmp(name, "bool") == 0) {
    int t = sm__vt_truth(a0);
    return t < 0 ? unknown(f, at)
                 : sm__vt_numv(c, SM__T_BOOL, t, f->m->rel, line);
  }
  if (strcmp(name, "abs") == 0 && numeric(a0))
    return num_node(f, fabs(a0->num), at);
  if (strcmp(name, "len") == 0 && a0 != NULL) {
    if (a0->t == SM__T_STR)
      return num_node(f, (double)strlen(a0->str), at);
    if (a0->t == SM__T_LIST || a0->t == SM__T_MAP)
      return num_node(f, a0->n, at);
    return unknown(f, at);
  }
  if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0 ||
      strcmp(name, "sum") == 0) {
    sm__vnode *seq =
        (pos && pos->n == 1 && a0 && a0->t == SM__T_LIST) ? a0 : pos;
    double acc = 0;
    if (seq == NULL || seq->n == 0)
      return unknown(f, at);
    for (int i = 0; i < seq->n; i++) {
      sm__vnode *v = seq->e[i].v;
      if (!numeric(v))
        return unknown(f, at);
      if (i == 0 && name[1] != 'u')
        acc = v->num;
      else if (name[1] == 'i')
        acc = fmin(acc, v->num);
      else if (name[1] == 'a')
        acc = fmax(acc, v->num);
      else
        acc += v->num;
    }
    return num_node(f, acc, at);
  }
  if (strcmp(name, "range") == 0) {
    double a = 0, b, s = 1;
    sm__vnode *l;
    if (pos == NULL || pos->n < 1 || pos->n > 3)
      return unknown(f, at);
    for (int i = 0; i < pos->n; i++)
      if (!numeric(pos->e[i].v))
        return unknown(f, at);
    if (pos->n == 1)
      b = pos->e[0].v->num;
    else {
      a = pos->e[0].v->num;
      b = pos->e[1].v->num;
      if (pos->n == 3)
        s = pos->e[2].v->num;
    }
    if (s == 0 || fabs((b - a) / s) > MAX_LOOP)
      return unknown(f, at);
    l = owned(f, SM__T_LIST, at);
    for (double x = a; l && (s > 0 ? x < b : x > b); x += s)
      sm__vt_push(c, l, num_node(f, x, at));
    return l ? l : unknown(f, at);
  }
  if (strcmp(name, "list") == 0 || strcmp(name, "tuple") == 0 ||
      strcmp(name, "sorted") == 0 || strcmp(name, "set") == 0) {
    sm__vnode *it;
    if (a0 == NULL)
      return owned(f, SM__T_LIST, at);
    it = iter_items(f, a0, at);
    if (it == NULL || strcmp(name, "sorted") == 0)
      return it ? own(f, sm__vt_copy(c, it)) : unknown(f, at);
    return own(f, sm__vt_copy(c, it));
  }
  if (strcmp(name, "getattr") == 0 && a0 != NULL) {
    sm__vnode *nm = arg_at(pos, NULL, 1, NULL), *r;
    if (nm == NULL || nm->t != SM__T_STR)
      return unknown(f, at);
    r = getattr_v(f, a0, nm->str, at);
    if (r->t == SM__T_UNKNOWN && pos->n >= 3)
      return pos->e[2].v;
    return r;
  }
  if (dataclass_parser_call(f, name, pos, kw, at))
    return unknown(f, at);
  if (strcmp(name, "print") == 0 || strncmp(name, "logging.", 8) == 0 ||
      strncmp(name, "logger.", 7) == 0 || strcmp(name, "warnings.warn") == 0)
    return none_at(f, at);
  return NULL;
}

/* Paths and the environment (os.path, pathlib, os.environ,
 * importlib).  NULL when name is none of them. */
static sm__vnode *path_call(frame *f, const char *name, sm__vnode *pos,
                            sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  const char *l = last_comp(name);
  sm__vnode *a0 = arg_at(pos, NULL, 0, NULL);
  int line = line_of(at);
  if (strcmp(name, "os.path.join") == 0 || strcmp(name, "osp.join") == 0) {
    sm__vnode *r = NULL;
    for (int i = 0; pos && i < pos->n; i++) {
      sm__vnode *p = pos->e[i].v;
      if (p->t != SM__T_STR)
        return unknown(f, at);
      if (r == NULL || p->str[0] == '/')
        r = p;
      else
        r = binop(f, "/", 1, r, p, at);
    }
    return r ? r : unknown(f, at);
  }
  if ((strcmp(l, "dirname") == 0 || strcmp(l, "basename") == 0) &&
      strstr(name, "path") && a0 && a0->t == SM__T_STR) {
    const char *sl = strrchr(a0->str, '/');
    if (l[0] == 'd')
      return sm__vt_strv(
          c, sl ? sm__strndup(c, a0->str, (size_t)(sl - a0->str)) : "",
          f->m->rel, line);
    return sm__vt_strv(c, sl ? sl + 1 : a0->str, f->m->rel, line);
  }
  if ((strcmp(name, "os.path.split") == 0 || strcmp(name, "osp.split") == 0) &&
      a0 && a0->t == SM__T_STR) {
    const char *sl = strrchr(a0->str, '/');
    sm__vnode *l2 = owned(f, SM__T_LIST, at);
    if (l2 == NULL)
      return unknown(f, at);
    sm__vt_push(
        c, l2,
        sm__vt_strv(c,
                    sl ? sm__strndup(c, a0->str, (size_t)(sl - a0->str)) : "",
                    f->m->rel, line));
    sm__vt_push(c, l2, sm__vt_strv(c, sl ? sl + 1 : a0->str, f->m->rel, line));
    return l2;
  }
  if ((strcmp(l, "abspath") == 0 || strcmp(l, "realpath") == 0 ||
       strcmp(l, "normpath") == 0 || strcmp(l, "expanduser") == 0) &&
      a0 && a0->t == SM__T_STR)
    return a0;
  if (strcmp(l, "Path") == 0 || strcmp(l, "PurePath") == 0) {
    if (a0 != NULL && a0->t == SM__T_STR) {
      sm__vnode *r = a0;
      for (int i = 1; i < pos->n; i++)
        r = binop(f, "/", 1, r, pos->e[i].v, at);
      return r;
    }
    return unknown(f, at);
  }
  if (strcmp(name, "os.environ.get") == 0 || strcmp(name, "os.getenv") == 0) {
    const char *e;
    if (a0 && a0->t == SM__T_STR && (e = sm__env(c, a0->str)) != NULL)
      return sm__vt_text(c, e, NULL, 0);
    {
      sm__vnode *d = arg_at(pos, kw, 1, "default");
      return d ? d : none_at(f, at);
    }
  }
  if (strcmp(name, "importlib.import_module") == 0 && a0 &&
      a0->t == SM__T_STR) {
    const char *p = sm__py_module_path(c, "", a0->str, 0);
    pymod *m = p ? module_get(c, p) : NULL;
    sm__vnode *mv;
    if (m == NULL)
      return unknown(f, at);
    mv = sm__vt_new(c, SM__T_MODULE, p, 1);
    if (mv != NULL)
      mv->aux = m;
    return mv;
  }
  return NULL;
}

static sm__vnode *known_call(frame *f, const char *name, sm__vnode *pos,
                             sm__vnode *kw, TSNode at) {
  sm__vnode *r = config_call(f, name, pos, kw, at);
  if (r == NULL)
    r = builtin_call(f, name, pos, kw, at);
  if (r == NULL)
    r = path_call(f, name, pos, kw, at);
  return r;
}

static sm__vnode *invoke(frame *f, sm__vnode *fn, sm__vnode *pos, sm__vnode *kw,
                         TSNode at);

/* A model-zoo config by its name under the package's configs folder
 * (detectron2's model_zoo.get_config("common/train.py"), detrex's
 * get_config, whatever their own lookup does): the nearest configs/NAME
 * above the calling file.  NULL when the call is not of that shape. */
static sm__vnode *zoo_config(frame *f, const char *name, sm__vnode *pos) {
  sm__vnode *a0 = arg_at(pos, NULL, 0, NULL), *t;
  const char *rel;
  if (name == NULL || strcmp(last_comp(name), "get_config") != 0 ||
      a0 == NULL || a0->t != SM__T_STR || pos->n != 1 ||
      !sm__cfg_is_config_name(a0->str) || strlen(a0->str) >= 200)
    return NULL;
  rel = sm__cfg_find_near(f->c, f->m->rel,
                          sm__printf(f->c, "configs/%s", a0->str));
  t = rel ? sm__cfg_tree(f->c, rel) : NULL;
  return t;
}

static sm__vnode *call_value(frame *f, sm__vnode *fn, sm__vnode *pos,
                             sm__vnode *kw, TSNode at) {
  sm__ctx *c = f->c;
  if (pos == NULL)
    pos = owned(f, SM__T_LIST, at);
  if (kw == NULL)
    kw = owned(f, SM__T_MAP, at);
  if (fn == NULL || pos == NULL || kw == NULL)
    return unknown(f, at);
  if (fn->t == SM__T_FUNC || fn->t == SM__T_SYM) {
    sm__vnode *z = zoo_config(f, callable_name(f, fn), pos);
    if (z != NULL)
      return z;
  }
  switch (fn->t) {
  case SM__T_FUNC:
    return invoke(f, fn, pos, kw, at);
  case SM__T_CLASS:
    dataclass_parser_call(f, callable_name(f, fn), pos, kw, at);
    return instantiate(f, fn, pos, kw, at);
  case SM__T_CALL:
    if (fn->flags & SM__VF_LAZY) {
      /* LazyCall(X)(kwargs): the config of an object to build. */
      sm__vnode *m = make_map(f, NULL, kw, at);
      if (m->t == SM__T_MAP && fn->str != NULL)
        sm__vt_put(c, m, "_target_",
                   sm__vt_strv(c, fn->str, fn->path, fn->line));
      return m;
    }
    return unknown(f, at);
  case SM__T_SYM: {
    sm__vnode *r = known_call(f, fn->str, pos, kw, at);
    if (r != NULL)
      return r;
    /* A library call: what is called and with which keywords. */
    r = sm__vt_copy(c, kw);
    if (r == NULL)
      return unknown(f, at);
    r->t = SM__T_CALL;
    r->str = fn->str;
    r->path = f->m->rel;
    r->line = line_of(at);
    r->flags |= VF_OWNED;
    if (pos->n > 0)
      sm__vt_put(c, r, "_args_", pos);
    return r;
  }
  default:
    return unknown(f, at);
  }
}

static void bind_params(frame *callee, frame *caller, pyfunc *pf,
                        sm__vnode *pos, sm__vnode *kw) {
  TSNode ps = field(pf->def, "parameters");
  TSTreeCursor cur;
  int pi = 0, self_bound = pf->self == NULL;
  sm__vnode *used = owned(callee, SM__T_MAP, ps);
  (void)caller;
  if (ts_node_is_null(ps))
    return;
  cur = ts_tree_cursor_new(ps);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode p = ts_tree_cursor_current_node(&cur);
      const char *t;
      char *name = NULL;
      TSNode dv = {0};
      sm__vnode *v;
      if (!ts_node_is_named(p))
        continue;
      t = ts_node_type(p);
      if (strcmp(t, "identifier") == 0) {
        name = dup_span(callee, p);
      } else if (strcmp(t, "typed_parameter") == 0) {
        TSNode k = ts_node_named_child(p, 0);
        if (is(k, "list_splat_pattern") || is(k, "dictionary_splat_pattern")) {
          p = k;
          t = ts_node_type(p);
        } else {
          name = dup_span(callee, k);
        }
      } else if (strcmp(t, "default_parameter") == 0 ||
                 strcmp(t, "typed_default_parameter") == 0) {
        name = dup_span(callee, field(p, "name"));
        dv = field(p, "value");
      }
      if (strcmp(t, "list_splat_pattern") == 0) {
        sm__vnode *rest = owned(callee, SM__T_LIST, p);
        for (; pos && pi < pos->n && rest; pi++)
          sm__vt_push(callee->c, rest, pos->e[pi].v);
        bind(callee, dup_span(callee, ts_node_named_child(p, 0)), rest);
        continue;
      }
      if (strcmp(t, "dictionary_splat_pattern") == 0) {
        sm__vnode *rest = owned(callee, SM__T_MAP, p);
        for (int i = 0; kw && rest && i < kw->n; i++)
          if (sm__vt_get(used, kw->e[i].key) == NULL)
            sm__vt_put(callee->c, rest, kw->e[i].key, kw->e[i].v);
        bind(callee, dup_span(callee, ts_node_named_child(p, 0)), rest);
        continue;
      }
      if (name == NULL)
        continue;
      if (!self_bound) {
        bind(callee, name, pf->self);
        self_bound = 1;
        continue;
      }
      v = sm__vt_get(kw, name);
      if (v != NULL && used)
        sm__vt_put(callee->c, used, name, v);
      if (v == NULL && pos && pi < pos->n)
        v = pos->e[pi++].v;
      if (v == NULL && !ts_node_is_null(dv)) {
        /* Defaults are read in the defining module. */
        frame df = *callee;
        df.locals = NULL;
        df.cls_ns = NULL;
        v = eval(&df, dv, 0);
      }
      if (v == NULL)
        v = unknown(callee, p);
      bind(callee, name, v);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

static sm__vnode *invoke(frame *f, sm__vnode *fn, sm__vnode *pos, sm__vnode *kw,
                         TSNode at) {
  pyfunc *pf = fn->aux;
  frame g;
  if (pf == NULL || f->depth >= MAX_CALL_DEPTH || !budget(f))
    return unknown(f, at);
  memset(&g, 0, sizeof(g));
  g.c = f->c;
  g.m = pf->m;
  g.locals = owned(f, SM__T_MAP, pf->def);
  g.cls = pf->owner;
  g.self = pf->self;
  g.depth = f->depth + 1;
  if (g.locals == NULL)
    return unknown(f, at);
  bind_params(&g, f, pf, pos, kw);
  exec_block(&g, field(pf->def, "body"));
  return g.ret ? g.ret : none_at(f, at);
}

static void apply_fields(frame *f, sm__vnode *obj, pyclass *k, sm__vnode *pos,
                         sm__vnode *kw, int depth) {
  /* Dataclass-like constructor: fields by position, then keywords. */
  int pi = 0;
  if (k == NULL || depth > 16)
    return;
  /* Base fields come first in a dataclass's order. */
  for (int i = 0; i < k->nb; i++)
    if (k->bases[i]->t == SM__T_CLASS)
      apply_fields(f, obj, k->bases[i]->aux, NULL, NULL, depth + 1);
  if (pos != NULL)
    for (int i = 0; i < k->nfields && pi < pos->n; i++)
      sm__vt_put(f->c, obj, k->fields[i], pos->e[pi++].v);
  for (int i = 0; kw && i < kw->n; i++)
    sm__vt_put(f->c, obj, kw->e[i].key, kw->e[i].v);
}

/* Class attributes of k and its bases, base first, into obj. */
static void class_defaults(frame *f, sm__vnode *obj, pyclass *k, int depth) {
  if (k == NULL || depth > 16)
    return;
  for (int i = k->nb - 1; i >= 0; i--)
    if (k->bases[i]->t == SM__T_CLASS)
      class_defaults(f, obj, k->bases[i]->aux, depth + 1);
    else if (k->bases[i]->t == SM__T_SYM) {
      /* A library base class: its documented defaults. */
      sm__vnode *d = sm__framework_defaults(f->c, k->bases[i]->str);
      for (int j = 0; d && j < d->n; j++)
        sm__vt_put(f->c, obj, d->e[j].key, d->e[j].v);
    }
  for (int i = 0; k->attrs && i < k->attrs->n; i++) {
    sm__vnode *v = k->attrs->e[i].v;
    const char *key = k->attrs->e[i].key;
    if (key == NULL || key[0] == '_' || v->t == SM__T_FUNC ||
        v->t == SM__T_CLASS || v->t == SM__T_MODULE)
      continue;
    sm__vt_put(f->c, obj, key, v);
  }
}

static sm__vnode *instantiate(frame *f, sm__vnode *cls, sm__vnode *pos,
                              sm__vnode *kw, TSNode at) {
  pyclass *k = cls->aux, *where = NULL;
  sm__vnode *obj, *init, *post;
  if (k == NULL || f->depth >= MAX_CALL_DEPTH || !budget(f))
    return unknown(f, at);
  obj = owned(f, SM__T_OBJ, at);
  if (obj == NULL)
    return unknown(f, at);
  obj->aux = k;
  obj->str = k->name;
  class_defaults(f, obj, k, 0);
  init = class_attr(k, "__init__", &where, 0);
  if (init != NULL && init->t == SM__T_FUNC && !k->dataclass) {
    call_value(f, bind_method(f, init, obj, where), pos, kw, at);
  } else {
    apply_fields(f, obj, k, pos, kw, 0);
  }
  post = class_attr(k, "__post_init__", &where, 0);
  if (post != NULL && post->t == SM__T_FUNC)
    call_value(f, bind_method(f, post, obj, where), NULL, NULL, at);
  return obj;
}

static sm__vnode *eval_call(frame *f, TSNode n, int depth) {
  TSNode fnn = field(n, "function");
  TSNode args = field(n, "arguments");
  sm__vnode *pos, *kw, *fn;

  if (is(fnn, "identifier")) {
    size_t len;
    const char *t = span(f, fnn, &len);
    if (len == 5 && strncmp(t, "super", 5) == 0) {
      pysuper *sp;
      sm__vnode *v;
      if (f->cls == NULL || f->self == NULL)
        return unknown(f, n);
      sp = sm_arena_alloc(&f->c->arena, sizeof(*sp));
      v = sm__vt_new(f->c, SM__T_UNKNOWN, f->m->rel, line_of(n));
      if (sp == NULL || v == NULL)
        return unknown(f, n);
      sp->cls = f->cls;
      sp->self = f->self;
      v->aux = sp;
      return v;
    }
  }
  call_args(f, args, &pos, &kw, depth);
  if (is(fnn, "attribute")) {
    sm__vnode *obj = eval(f, field(fnn, "object"), depth + 1);
    char *name = dup_span(f, field(fnn, "attribute"));
    if (name == NULL)
      return unknown(f, n);
    if (obj->t == SM__T_STR)
      return str_method(f, obj, name, pos, kw, n);
    if (container(obj) &&
        !(obj->t == SM__T_CALL && (obj->flags & SM__VF_LAZY))) {
      int handled = 0;
      sm__vnode *r;
      sm__vnode *member = sm__vt_get(obj, name);
      if (member == NULL || member->t != SM__T_FUNC) {
        r = container_method(f, obj, name, pos, kw, n, &handled);
        if (handled)
          return r;
      }
    }
    fn = getattr_v(f, obj, name, fnn);
  } else {
    fn = eval(f, fnn, depth + 1);
  }
  return call_value(f, fn, pos, kw, n);
}

/* ==== Expressions ==== */

/* An integer or float literal (1_000, 3e-4; 0x10, 0o7, 0b1 when
 * prefixed is set: an integer). */
static sm__vnode *number_lit(frame *f, TSNode n, int prefixed) {
  char buf[64];
  size_t o = 0, len;
  const char *x = span(f, n, &len);
  double v;
  for (size_t i = 0; i < len && o + 1 < sizeof(buf); i++)
    if (x[i] != '_')
      buf[o++] = x[i];
  buf[o] = '\0';
  if (prefixed && o > 2 && buf[0] == '0' && strchr("xXoObB", buf[1])) {
    int base = strchr("xX", buf[1]) ? 16 : strchr("oO", buf[1]) ? 8 : 2;
    v = (double)strtoll(buf + 2, NULL, base);
  } else if (sm_parse_double(buf, &v) != 0) {
    return unknown(f, n);
  }
  return num_node(f, v, n);
}

/* A name: its binding, __file__ / __name__, or a symbol (a builtin or a
 * name the module does not define). */
static sm__vnode *eval_identifier(frame *f, TSNode n) {
  sm__ctx *c = f->c;
  char *name = dup_span(f, n);
  sm__vnode *v;
  if (name == NULL)
    return unknown(f, n);
  if ((v = lookup(f, name)) != NULL)
    return v;
  if (strcmp(name, "__file__") == 0)
    return sm__vt_strv(c, f->m->rel, f->m->rel, line_of(n));
  if (strcmp(name, "__name__") == 0)
    return sm__vt_strv(c, f->m->name, f->m->rel, line_of(n));
  /* A builtin or a name the module does not define. */
  v = sm__vt_new(c, SM__T_SYM, f->m->rel, line_of(n));
  if (v != NULL)
    v->str = name;
  return v;
}

/* v[k]: a list element, a mapping's key, os.environ[K]. */
static sm__vnode *eval_subscript(frame *f, TSNode n, int depth) {
  sm__ctx *c = f->c;
  sm__vnode *v = eval(f, field(n, "value"), depth + 1);
  sm__vnode *k = eval(f, field(n, "subscript"), depth + 1);
  if (v->t == SM__T_LIST && numeric(k)) {
    int i = (int)k->num;
    if (i < 0)
      i += v->n;
    if (i >= 0 && i < v->n)
      return v->e[i].v;
    return unknown(f, n);
  }
  if (container(v) && k->t == SM__T_STR) {
    sm__vnode *r = sm__vt_get(v, k->str);
    return r ? r : unknown(f, n);
  }
  if (v->t == SM__T_SYM && k->t == SM__T_STR &&
      strcmp(v->str, "os.environ") == 0) {
    const char *e = sm__env(c, k->str);
    return e ? sm__vt_text(c, e, NULL, 0) : unknown(f, n);
  }
  return unknown(f, n);
}

/* a < b < c: every link must hold. */
static sm__vnode *eval_comparison(frame *f, TSNode n, int depth) {
  sm__ctx *c = f->c;
  size_t len;
  uint32_t nc = ts_node_child_count(n);
  sm__vnode *left = NULL;
  int result = 1;
  char op[16] = "";
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_child(n, i);
    if (ts_node_is_named(k)) {
      sm__vnode *v = eval(f, k, depth + 1);
      if (left != NULL && op[0]) {
        int r = compare(f, op, left, v);
        if (r < 0)
          return unknown(f, n);
        result = result && r;
        op[0] = '\0';
      }
      left = v;
    } else {
      const char *o = span(f, k, &len);
      if (op[0] && len + strlen(op) + 2 < sizeof(op)) {
        /* "not in", "is not" */
        size_t ol = strlen(op);
        op[ol] = ' ';
        memcpy(op + ol + 1, o, len);
        op[ol + 1 + len] = '\0';
      } else if (len < sizeof(op)) {
        memcpy(op, o, len);
        op[len] = '\0';
      }
    }
  }
  return sm__vt_numv(c, SM__T_BOOL, result, f->m->rel, line_of(n));
}

/* a OP b over known values; arithmetic over keys the store may know (lr *
 * batch) is kept as an expression. */
static sm__vnode *eval_binary(frame *f, TSNode n, int depth) {
  sm__ctx *c = f->c;
  size_t len;
  sm__vnode *a = eval(f, field(n, "left"), depth + 1);
  sm__vnode *b = eval(f, field(n, "right"), depth + 1);
  const char *op = span(f, field(n, "operator"), &len);
  sm__vnode *r = binop(f, op, len, a, b, n);
  if (r->t == SM__T_UNKNOWN &&
      (a->t == SM__T_UNKNOWN || b->t == SM__T_UNKNOWN || a->t == SM__T_SYM ||
       b->t == SM__T_SYM)) {
    /* Keep arithmetic over keys the store may know (lr * batch). */
    sm_buf rb;
    sm_buf_init(&rb, 4096);
    if (rpn_of(f, n, &rb, depth) == 0) {
      r = sm__vt_new(c, SM__T_EXPR, f->m->rel, line_of(n));
      if (r != NULL)
        r->str = sm__strdup(c, sm_buf_str(&rb));
    }
    sm_buf_release(&rb);
    if (r == NULL)
      r = unknown(f, n);
  }
  return r;
}

static sm__vnode *eval(frame *f, TSNode n, int depth) {
  const char *t;
  sm__ctx *c = f->c;
  size_t len;

  if (ts_node_is_null(n) || depth > MAX_EXPR_DEPTH || !budget(f))
    return unknown(f, n);
  t = ts_node_type(n);
  switch (t[0]) {
  case 'i':
    if (strcmp(t, "integer") == 0)
      return number_lit(f, n, 1);
    if (strcmp(t, "identifier") == 0)
      return eval_identifier(f, n);
    break;
  case 'f':
    if (strcmp(t, "float") == 0)
      return number_lit(f, n, 0);
    if (strcmp(t, "false") == 0)
      return sm__vt_numv(c, SM__T_BOOL, 0, f->m->rel, line_of(n));
    break;
  case 't':
    if (strcmp(t, "true") == 0)
      return sm__vt_numv(c, SM__T_BOOL, 1, f->m->rel, line_of(n));
    if (strcmp(t, "tuple") == 0)
      return list_lit(f, n, depth);
    break;
  case 'n':
    if (strcmp(t, "none") == 0)
      return none_at(f, n);
    if (strcmp(t, "not_operator") == 0) {
      int tr = sm__vt_truth(eval(f, field(n, "argument"), depth + 1));
      return tr < 0 ? unknown(f, n)
                    : sm__vt_numv(c, SM__T_BOOL, !tr, f->m->rel, line_of(n));
    }
    if (strcmp(t, "named_expression") == 0) {
      sm__vnode *v = eval(f, field(n, "value"), depth + 1);
      bind(f, dup_span(f, field(n, "name")), v);
      return v;
    }
    break;
  case 's':
    if (strcmp(t, "string") == 0)
      return string_lit(f, n, depth);
    if (strcmp(t, "set") == 0) {
      /* mmcv's {{_base_.name}}: the value itself. */
      if (ts_node_named_child_count(n) == 1 &&
          is(ts_node_named_child(n, 0), "set") &&
          ts_node_named_child_count(ts_node_named_child(n, 0)) == 1)
        return eval(f, ts_node_named_child(ts_node_named_child(n, 0), 0),
                    depth + 1);
      return list_lit(f, n, depth);
    }
    if (strcmp(t, "subscript") == 0)
      return eval_subscript(f, n, depth);
    break;
  case 'c':
    if (strcmp(t, "concatenated_string") == 0)
      return string_lit(f, n, depth);
    if (strcmp(t, "call") == 0)
      return eval_call(f, n, depth);
    if (strcmp(t, "conditional_expression") == 0) {
      /* a if cond else b */
      TSNode a = ts_node_named_child(n, 0), cond = ts_node_named_child(n, 1),
             b = ts_node_named_child(n, 2);
      int tr = sm__vt_truth(eval(f, cond, depth + 1));
      if (tr < 0)
        return unknown(f, n);
      return eval(f, tr ? a : b, depth + 1);
    }
    if (strcmp(t, "comparison_operator") == 0)
      return eval_comparison(f, n, depth);
    break;
  case 'p':
    if (strcmp(t, "parenthesized_expression") == 0)
      return eval(f, ts_node_named_child(n, 0), depth + 1);
    break;
  case 'u':
    if (strcmp(t, "unary_operator") == 0) {
      sm__vnode *v = eval(f, field(n, "argument"), depth + 1);
      const char *op = span(f, field(n, "operator"), &len);
      if (!numeric(v))
        return unknown(f, n);
      if (op[0] == '-')
        return num_node(f, -v->num, n);
      if (op[0] == '~')
        return num_node(f, (double)~(long long)v->num, n);
      return v;
    }
    break;
  case 'b':
    if (strcmp(t, "binary_operator") == 0)
      return eval_binary(f, n, depth);
    if (strcmp(t, "boolean_operator") == 0) {
      sm__vnode *a = eval(f, field(n, "left"), depth + 1);
      const char *op = span(f, field(n, "operator"), &len);
      int tr = sm__vt_truth(a);
      if (tr < 0)
        return unknown(f, n);
      if ((op[0] == 'a' && !tr) || (op[0] == 'o' && tr))
        return a;
      return eval(f, field(n, "right"), depth + 1);
    }
    break;
  case 'a':
    if (strcmp(t, "attribute") == 0) {
      sm__vnode *o = eval(f, field(n, "object"), depth + 1);
      char *name = dup_span(f, field(n, "attribute"));
      if (name == NULL)
        return unknown(f, n);
      return getattr_v(f, o, name, n);
    }
    break;
  case 'l':
    if (strcmp(t, "list") == 0)
      return list_lit(f, n, depth);
    if (strcmp(t, "list_comprehension") == 0)
      return comprehension(f, n, depth);
    if (strcmp(t, "lambda") == 0)
      return unknown(f, n);
    break;
  case 'd':
    if (strcmp(t, "dictionary") == 0)
      return dict_lit(f, n, depth);
    if (strcmp(t, "dictionary_comprehension") == 0)
      return comprehension(f, n, depth);
    break;
  case 'e':
    if (strcmp(t, "expression_list") == 0)
      return list_lit(f, n, depth);
    if (strcmp(t, "ellipsis") == 0)
      return none_at(f, n);
    break;
  case 'k':
    if (strcmp(t, "keyword_argument") == 0)
      return eval(f, field(n, "value"), depth + 1);
    break;
  default:
    break;
  }
  return unknown(f, n);
}

/* ==== Assignment ==== */

/* Splits an attribute/subscript target into a base name and keys.
 * Returns the count of keys, or -1 when it is not a chain from a name. */
static int target_chain(frame *f, TSNode n, char **base, const char **keys,
                        int max) {
  int k = 0;
  const char *rev[32];
  while (k < 32) {
    if (is(n, "attribute")) {
      rev[k++] = dup_span(f, field(n, "attribute"));
      n = field(n, "object");
    } else if (is(n, "subscript")) {
      sm__vnode *s = eval(f, field(n, "subscript"), 0);
      const char *ks = to_text(f, s);
      if (ks == NULL)
        return -1;
      rev[k++] = ks;
      n = field(n, "value");
    } else if (is(n, "identifier")) {
      *base = dup_span(f, n);
      if (k > max)
        return -1;
      for (int i = 0; i < k; i++)
        keys[i] = rev[k - 1 - i];
      return k;
    } else {
      return -1;
    }
  }
  return -1;
}

/* root with keys[0..nk) set to v, copying what is not owned; the new
 * root (the same one when it was owned). */
static sm__vnode *set_chain(frame *f, sm__vnode *root, const char **keys,
                            int nk, sm__vnode *v, TSNode at) {
  sm__vnode *cur;
  if (nk == 0)
    return v;
  if (!container(root))
    return root;
  root = own(f, root);
  cur = root;
  for (int i = 0; i < nk && cur != NULL; i++) {
    if (cur->t == SM__T_LIST) {
      char *end;
      long idx = strtol(keys[i], &end, 10);
      if (*end != '\0' || idx < 0 || idx >= cur->n)
        return root;
      if (i == nk - 1) {
        cur->e[idx].v = v;
        return root;
      }
      cur->e[idx].v = own(f, cur->e[idx].v);
      cur = cur->e[idx].v;
      if (!container(cur))
        return root;
      continue;
    }
    if (i == nk - 1) {
      sm__vt_put(f->c, cur, sm__strdup(f->c, keys[i]), v);
      return root;
    }
    {
      sm__vnode *next = sm__vt_get(cur, keys[i]);
      if (!container(next) || next->t == SM__T_LIST)
        next = container(next) ? own(f, next) : owned(f, SM__T_MAP, at);
      else
        next = own(f, next);
      if (next == NULL)
        return root;
      sm__vt_put(f->c, cur, sm__strdup(f->c, keys[i]), next);
      cur = next;
    }
  }
  return root;
}

static void assign(frame *f, TSNode target, sm__vnode *v) {
  if (v == NULL || ts_node_is_null(target))
    return;
  if (is(target, "identifier")) {
    bind(f, dup_span(f, target), v);
    return;
  }
  if (is(target, "pattern_list") || is(target, "tuple_pattern") ||
      is(target, "list_pattern") || is(target, "expression_list") ||
      is(target, "tuple") || is(target, "list")) {
    uint32_t nc = ts_node_named_child_count(target);
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(target, i);
      sm__vnode *item =
          (v->t == SM__T_LIST && (int)nc == v->n) ? v->e[i].v : unknown(f, k);
      assign(f, k, item);
    }
    return;
  }
  if (is(target, "attribute") || is(target, "subscript")) {
    char *base = NULL;
    const char *keys[32];
    int nk = target_chain(f, target, &base, keys, 32);
    sm__vnode *root, *nr;
    if (nk <= 0 || base == NULL)
      return;
    if (strcmp(base, "self") == 0 && f->self != NULL) {
      root = f->self;
      nr = set_chain(f, root, keys, nk, v, target);
      if (nr != root)
        f->self = nr;
      if (nr != root && f->locals)
        bind(f, "self", nr);
      return;
    }
    root = lookup(f, base);
    if (root == NULL)
      return;
    nr = set_chain(f, root, keys, nk, v, target);
    if (nr != root)
      bind(f, base, nr);
  }
}

static void bind_target(frame *f, TSNode target, sm__vnode *v) {
  assign(f, target, v);
}

/* Names a block assigns, made unknown (a branch taken or not). */
static void forget(frame *f, TSNode n, int depth);

static void forget_one(void *f, TSNode k, int depth) {
  forget(f, k, depth);
}

static void forget(frame *f, TSNode n, int depth) {
  if (ts_node_is_null(n) || depth > 40)
    return;
  if (is(n, "function_definition") || is(n, "class_definition"))
    return;
  if (is(n, "assignment") || is(n, "augmented_assignment")) {
    TSNode left = field(n, "left");
    if (is(left, "identifier") || is(left, "attribute") ||
        is(left, "subscript"))
      assign(f, left, unknown(f, n));
    if (is(n, "assignment") && is(field(n, "right"), "assignment"))
      forget(f, field(n, "right"), depth + 1);
    return;
  }
  sm__ts_each_named(n, forget_one, f, depth);
}

static void exec_assignment(frame *f, TSNode n) {
  TSNode right = field(n, "right");
  sm__vnode *v;
  TSNode targets[16];
  int nt = 0;
  /* a = b = value */
  targets[nt++] = field(n, "left");
  while (is(right, "assignment") && nt < 16) {
    targets[nt++] = field(right, "left");
    right = field(right, "right");
  }
  if (ts_node_is_null(right)) {
    /* An annotation without a value (a dataclass field with no
     * default). */
    return;
  }
  if (nt == 1 && is(targets[0], "identifier") && f->locals == NULL &&
      f->cls_ns == NULL) {
    /* mmengine: `_base_` already holds the merged bases. */
    size_t len;
    const char *t = span(f, targets[0], &len);
    sm__vnode *cur;
    if (len == 6 && strncmp(t, "_base_", 6) == 0 &&
        (cur = sm__vt_get(f->m->ns, "_base_")) != NULL && cur->t == SM__T_MAP)
      return;
  }
  v = eval(f, right, 0);
  v = at_line(f, v, right);
  for (int i = 0; i < nt; i++)
    assign(f, targets[i], v);
}

static void exec_augmented(frame *f, TSNode n) {
  TSNode left = field(n, "left");
  size_t len;
  const char *op = span(f, field(n, "operator"), &len);
  sm__vnode *cur = eval(f, left, 0);
  sm__vnode *r = eval(f, field(n, "right"), 0);
  if (len < 2)
    return;
  assign(f, left, binop(f, op, len - 1, cur, r, n));
}

/* ==== Definitions and imports ==== */

static int decorated_dataclass(frame *f, TSNode decorated) {
  uint32_t nc;
  if (ts_node_is_null(decorated))
    return 0;
  nc = ts_node_named_child_count(decorated);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode d = ts_node_named_child(decorated, i);
    char *t;
    if (!is(d, "decorator"))
      continue;
    t = dup_span(f, d);
    if (t && (strstr(t, "dataclass") || strstr(t, "attr.s") ||
              strstr(t, "define") || strstr(t, "frozen") ||
              strstr(t, "configclass") || strstr(t, "struct")))
      return 1;
  }
  return 0;
}

static void exec_class(frame *f, TSNode n, TSNode decorated) {
  pyclass *k = sm_arena_calloc(&f->c->arena, 1, sizeof(*k));
  sm__vnode *cv;
  TSNode sup = field(n, "superclasses");
  frame g;
  const char *fields[256];
  int nf = 0;
  TSTreeCursor cur;

  if (k == NULL)
    return;
  k->m = f->m;
  k->name = dup_span(f, field(n, "name"));
  k->dataclass = decorated_dataclass(f, decorated);
  if (!ts_node_is_null(sup)) {
    uint32_t nc = ts_node_named_child_count(sup);
    for (uint32_t i = 0; i < nc && k->nb < MAX_BASES; i++) {
      TSNode b = ts_node_named_child(sup, i);
      sm__vnode *bv;
      if (is(b, "keyword_argument"))
        continue;
      bv = eval(f, b, 0);
      if (bv->t == SM__T_CLASS || bv->t == SM__T_SYM) {
        k->bases[k->nb++] = bv;
        if (bv->t == SM__T_CLASS && ((pyclass *)bv->aux)->dataclass)
          k->dataclass = 1;
        if (bv->t == SM__T_SYM &&
            (strstr(bv->str, "BaseModel") || strstr(bv->str, "BaseSettings")))
          k->dataclass = 1;
      }
    }
  }
  k->attrs = owned(f, SM__T_MAP, n);
  /* The body runs with the class namespace as its locals. */
  g = *f;
  g.cls_ns = k->attrs;
  g.cls = k;
  cur = ts_tree_cursor_new(field(n, "body"));
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode s = ts_tree_cursor_current_node(&cur);
      if (!ts_node_is_named(s))
        continue;
      if (is(s, "expression_statement")) {
        TSNode a = ts_node_named_child(s, 0);
        if (is(a, "assignment") && !ts_node_is_null(field(a, "type")) &&
            is(field(a, "left"), "identifier") && nf < 256)
          fields[nf++] = dup_span(f, field(a, "left"));
      }
      exec_block(&g, s);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  k->fields = sm_arena_calloc(&f->c->arena, (size_t)nf + 1, sizeof(char *));
  if (k->fields != NULL) {
    memcpy(k->fields, fields, (size_t)nf * sizeof(char *));
    k->nfields = nf;
  }
  /* Methods defined in the body belong to the class (for super()). */
  for (int i = 0; i < k->attrs->n; i++) {
    sm__vnode *v = k->attrs->e[i].v;
    if (v->t == SM__T_FUNC && v->aux && ((pyfunc *)v->aux)->owner == NULL)
      ((pyfunc *)v->aux)->owner = k;
  }
  cv = sm__vt_new(f->c, SM__T_CLASS, f->m->rel, line_of(n));
  if (cv == NULL)
    return;
  cv->aux = k;
  cv->str = k->name;
  bind(f, k->name, cv);
}

static void exec_def(frame *f, TSNode n) {
  pyfunc *pf = sm_arena_calloc(&f->c->arena, 1, sizeof(*pf));
  sm__vnode *v;
  if (pf == NULL)
    return;
  pf->m = f->m;
  pf->def = n;
  pf->name = dup_span(f, field(n, "name"));
  v = sm__vt_new(f->c, SM__T_FUNC, f->m->rel, line_of(n));
  if (v == NULL || pf->name == NULL)
    return;
  v->aux = pf;
  v->str = pf->name;
  bind(f, pf->name, v);
}

/* A module value for a root-relative file, or an external symbol. */
static sm__vnode *module_value(frame *f, const char *dotted, int level,
                               TSNode at) {
  const char *p = sm__py_module_path(f->c, f->m->dir, dotted, level);
  sm__vnode *v;
  if (p != NULL) {
    pymod *m = module_get(f->c, p);
    if (m != NULL) {
      v = sm__vt_new(f->c, SM__T_MODULE, p, 1);
      if (v != NULL)
        v->aux = m;
      return v;
    }
  }
  v = sm__vt_new(f->c, SM__T_SYM, f->m->rel, line_of(at));
  if (v != NULL)
    v->str = sm__strdup(f->c, dotted);
  return v;
}

/* Name x of module value mv: from its namespace, a lazy-module
 * _import_structure table, or a submodule. */
static sm__vnode *import_name(frame *f, sm__vnode *mv, const char *x,
                              TSNode at) {
  pymod *m;
  sm__vnode *ns, *v, *table;
  if (mv->t == SM__T_SYM) {
    v = sm__vt_new(f->c, SM__T_SYM, f->m->rel, line_of(at));
    if (v != NULL)
      v->str = sm__printf(f->c, "%s.%s", mv->str, x);
    return v;
  }
  m = mv->aux;
  ns = module_run(f->c, m);
  if ((v = sm__vt_get(ns, x)) != NULL && lazy_import(v)) {
    frame g = *f;
    if (f->depth >= MAX_CALL_DEPTH)
      return unknown(f, at);
    g.depth++;
    g.m = m;
    v = resolve_lazy(&g, ns, x, v);
  }
  if (v != NULL && v->t != SM__T_UNKNOWN)
    return v;
  /* from pkg import submodule */
  if ((v = submodule(f, m, x)) != NULL)
    return v;
  table = sm__vt_get(ns, "_import_structure");
  if (table != NULL && table->t == SM__T_MAP) {
    for (int i = 0; i < table->n; i++) {
      sm__vnode *names = table->e[i].v;
      if (names->t != SM__T_LIST)
        continue;
      for (int j = 0; j < names->n; j++)
        if (names->e[j].v->t == SM__T_STR &&
            strcmp(names->e[j].v->str, x) == 0) {
          const char *p = sm__py_module_path(f->c, m->dir, table->e[i].key, 1);
          pymod *sub = p ? module_get(f->c, p) : NULL;
          sm__vnode *sv;
          if (sub == NULL || sub == m || f->depth >= MAX_CALL_DEPTH)
            continue;
          sv = sm__vt_new(f->c, SM__T_MODULE, p, 1);
          if (sv == NULL)
            continue;
          sv->aux = sub;
          {
            /* The submodule may be lazy in turn. */
            frame g = *f;
            g.depth++;
            v = import_name(&g, sv, x, at);
          }
          if (v != NULL && v->t != SM__T_UNKNOWN)
            return v;
        }
    }
  }
  return v ? v : unknown(f, at);
}

static void exec_import(frame *f, TSNode n) {
  uint32_t nc = ts_node_named_child_count(n);
  if (is(n, "import_statement")) {
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(n, i), alias = {0};
      char *dotted;
      if (is(k, "aliased_import")) {
        alias = field(k, "alias");
        k = field(k, "name");
      }
      dotted = dup_span(f, k);
      if (dotted == NULL)
        continue;
      if (!ts_node_is_null(alias)) {
        bind(f, dup_span(f, alias), module_value(f, dotted, 0, n));
      } else {
        /* import a.b binds a */
        char *dot = strchr(dotted, '.');
        if (dot)
          *dot = '\0';
        bind(f, dotted, module_value(f, dotted, 0, n));
      }
    }
    return;
  }
  if (is(n, "import_from_statement")) {
    TSNode mn = field(n, "module_name");
    const char *module = "";
    int level = 0;
    sm__vnode *mv;
    if (is(mn, "relative_import")) {
      uint32_t rc = ts_node_named_child_count(mn);
      for (uint32_t i = 0; i < rc; i++) {
        TSNode k = ts_node_named_child(mn, i);
        size_t len;
        if (is(k, "import_prefix")) {
          span(f, k, &len);
          level = (int)len;
        } else if (is(k, "dotted_name")) {
          module = dup_span(f, k);
        }
      }
    } else {
      module = dup_span(f, mn);
    }
    if (module == NULL)
      return;
    mv = module_value(f, module, level, n);
    if (mv == NULL)
      return;
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(n, i), alias = {0};
      char *x;
      if (ts_node_eq(k, mn))
        continue;
      if (is(k, "wildcard_import")) {
        if (mv->t == SM__T_MODULE) {
          sm__vnode *ns = module_run(f->c, mv->aux);
          for (int j = 0; ns && j < ns->n; j++)
            if (ns->e[j].key && ns->e[j].key[0] != '_')
              bind(f, ns->e[j].key, ns->e[j].v); /* placeholders stay lazy */
        }
        continue;
      }
      if (is(k, "aliased_import")) {
        alias = field(k, "alias");
        k = field(k, "name");
      }
      x = dup_span(f, k);
      if (x == NULL)
        continue;
      if (mv->t == SM__T_MODULE) {
        sm__vnode *lz = sm__vt_new(f->c, SM__T_MODULE, f->m->rel, line_of(n));
        if (lz == NULL)
          continue;
        *lz = *mv;
        lz->flags |= SM__VF_LAZY;
        lz->str = x;
        bind(f, ts_node_is_null(alias) ? x : dup_span(f, alias), lz);
      } else {
        bind(f, ts_node_is_null(alias) ? x : dup_span(f, alias),
             import_name(f, mv, x, n));
      }
    }
  }
}

/* ==== Statements ==== */

static int exec_stmt(frame *f, TSNode s);

static int exec_block(frame *f, TSNode block) {
  TSTreeCursor cur;
  int flow = FLOW_NEXT;
  if (ts_node_is_null(block))
    return FLOW_NEXT;
  if (!is(block, "block") && !is(block, "module"))
    return exec_stmt(f, block);
  cur = ts_tree_cursor_new(block);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode s = ts_tree_cursor_current_node(&cur);
      if (!ts_node_is_named(s))
        continue;
      flow = exec_stmt(f, s);
      if (flow != FLOW_NEXT || f->c->eval_steps > MAX_STEPS)
        break;
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return flow;
}

static int exec_if(frame *f, TSNode n) {
  int tr = sm__vt_truth(eval(f, field(n, "condition"), 0));
  uint32_t nc;
  if (tr > 0)
    return exec_block(f, field(n, "consequence"));
  if (tr < 0) {
    /* Unknown: what either branch assigns is unknown. */
    forget(f, n, 0);
    return FLOW_NEXT;
  }
  nc = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(n, i);
    if (is(k, "elif_clause")) {
      int t2 = sm__vt_truth(eval(f, field(k, "condition"), 0));
      if (t2 > 0)
        return exec_block(f, field(k, "consequence"));
      if (t2 < 0) {
        for (uint32_t j = i; j < nc; j++)
          forget(f, ts_node_named_child(n, j), 0);
        return FLOW_NEXT;
      }
    } else if (is(k, "else_clause")) {
      return exec_block(f, field(k, "body"));
    }
  }
  return FLOW_NEXT;
}

static int exec_for(frame *f, TSNode n) {
  sm__vnode *seq = iter_items(f, eval(f, field(n, "right"), 0), n);
  TSNode body = field(n, "body");
  if (seq == NULL || seq->n > MAX_LOOP) {
    forget(f, body, 0);
    return FLOW_NEXT;
  }
  for (int i = 0; i < seq->n; i++) {
    int flow;
    bind_target(f, field(n, "left"), seq->e[i].v);
    flow = exec_block(f, body);
    if (flow == FLOW_RETURN)
      return flow;
    if (flow == FLOW_BREAK)
      break;
  }
  return FLOW_NEXT;
}

static int exec_stmt(frame *f, TSNode s) {
  const char *t = ts_node_type(s);
  if (!budget(f))
    return FLOW_RETURN;
  if (strcmp(t, "expression_statement") == 0) {
    TSNode e = ts_node_named_child(s, 0);
    if (is(e, "assignment"))
      exec_assignment(f, e);
    else if (is(e, "augmented_assignment"))
      exec_augmented(f, e);
    else if (is(e, "call"))
      eval(f, e, 0);
    return FLOW_NEXT;
  }
  if (strcmp(t, "return_statement") == 0) {
    TSNode e = ts_node_named_child(s, 0);
    f->ret = ts_node_is_null(e) ? none_at(f, s) : eval(f, e, 0);
    return FLOW_RETURN;
  }
  if (strcmp(t, "if_statement") == 0)
    return exec_if(f, s);
  if (strcmp(t, "for_statement") == 0)
    return exec_for(f, s);
  if (strcmp(t, "while_statement") == 0) {
    forget(f, s, 0);
    return FLOW_NEXT;
  }
  if (strcmp(t, "function_definition") == 0) {
    exec_def(f, s);
    return FLOW_NEXT;
  }
  if (strcmp(t, "class_definition") == 0) {
    exec_class(f, s, (TSNode){0});
    return FLOW_NEXT;
  }
  if (strcmp(t, "decorated_definition") == 0) {
    TSNode d = field(s, "definition");
    if (is(d, "class_definition"))
      exec_class(f, d, s);
    else if (is(d, "function_definition"))
      exec_def(f, d);
    return FLOW_NEXT;
  }
  if (strcmp(t, "import_statement") == 0 ||
      strcmp(t, "import_from_statement") == 0) {
    exec_import(f, s);
    return FLOW_NEXT;
  }
  if (strcmp(t, "with_statement") == 0)
    return exec_block(f, field(s, "body"));
  if (strcmp(t, "try_statement") == 0) {
    int flow = exec_block(f, field(s, "body"));
    uint32_t nc = ts_node_named_child_count(s);
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(s, i);
      if (is(k, "finally_clause") && flow == FLOW_NEXT)
        flow = exec_block(f, ts_node_named_child(k, 0));
    }
    return flow;
  }
  if (strcmp(t, "raise_statement") == 0)
    return FLOW_RETURN;
  if (strcmp(t, "break_statement") == 0)
    return FLOW_BREAK;
  if (strcmp(t, "continue_statement") == 0)
    return FLOW_CONTINUE;
  if (strcmp(t, "delete_statement") == 0) {
    TSNode k = ts_node_named_child(s, 0);
    if (is(k, "identifier")) {
      sm__vnode *ns = f->cls_ns ? f->cls_ns : f->locals ? f->locals : f->m->ns;
      char *name = dup_span(f, k);
      if (name && (ns->flags & VF_OWNED))
        sm__vt_del(ns, name);
    }
    return FLOW_NEXT;
  }
  if (strcmp(t, "block") == 0)
    return exec_block(f, s);
  return FLOW_NEXT;
}

/* ==== Modules ==== */

/* Reads and parses a module when it is first run (an import alone does
 * not read the file).  Returns 0 or -1. */
static int module_load(sm__ctx *c, pymod *m) {
  const char *src;
  TSTree *tree;
  if (m->loaded)
    return m->loaded > 0 ? 0 : -1;
  tree = sm__src_tree(c, m->rel, SM__G_PYTHON, &src);
  if (tree == NULL) {
    m->loaded = -1;
    return -1;
  }
  m->src = src;
  m->root = ts_tree_root_node(tree);
  m->loaded = 1;
  return 0;
}

static pymod *module_get(sm__ctx *c, const char *rel) {
  pymod *m;
  for (int i = 0; i < c->pymods.n; i++) {
    m = SM__AT(c->pymods, pymod *, i);
    if (strcmp(m->rel, rel) == 0)
      return m;
  }
  m = sm_arena_calloc(&c->arena, 1, sizeof(*m));
  if (m == NULL)
    return NULL;
  m->rel = sm__strdup(c, rel);
  {
    const char *slash = strrchr(rel, '/');
    char *name;
    size_t n;
    m->dir = slash ? sm__strndup(c, rel, (size_t)(slash - rel)) : "";
    name = sm__strdup(c, rel);
    n = name ? strlen(name) : 0;
    if (n > 3 && strcmp(name + n - 3, ".py") == 0)
      name[n - 3] = '\0';
    for (char *p = name; p && *p; p++)
      if (*p == '/')
        *p = '.';
    m->name = name ? name : "module";
  }
  m->ns = sm__vt_new(c, SM__T_MAP, rel, 1);
  if (m->ns == NULL)
    return NULL;
  m->ns->flags |= VF_OWNED;
  if (c->pymods.sz == 0)
    sm__vec_init(&c->pymods, sizeof(pymod *));
  {
    pymod **slot = sm__vec_push(&c->pymods);
    if (slot == NULL)
      return NULL;
    *slot = m;
  }
  return m;
}

static sm__vnode *module_run(sm__ctx *c, pymod *m) {
  frame f;
  if (m == NULL)
    return NULL;
  if (m->state != 0)
    return m->ns; /* done, or running (an import cycle): as far as it got */
  m->state = 1;
  if (module_load(c, m) != 0) {
    m->state = 2;
    return m->ns;
  }
  memset(&f, 0, sizeof(f));
  f.c = c;
  f.m = m;
  exec_block(&f, m->root);
  m->state = 2;
  return m->ns;
}

sm__vnode *sm__py_module_ns(sm__ctx *c, const char *rel) {
  pymod *m = module_get(c, rel);
  return m ? module_run(c, m) : NULL;
}

sm__vnode *sm__py_call_fn(sm__ctx *c, const char *rel, const char *fn,
                          sm__vnode **args, int nargs) {
  pymod *m = module_get(c, rel);
  sm__vnode *ns = m ? module_run(c, m) : NULL, *f, *pos, *r;
  frame fr;
  TSNode none = {0};
  if (ns == NULL || (f = sm__vt_get(ns, fn)) == NULL ||
      (f->t != SM__T_FUNC && f->t != SM__T_CLASS))
    return NULL;
  memset(&fr, 0, sizeof(fr));
  fr.c = c;
  fr.m = m;
  pos = sm__vt_new(c, SM__T_LIST, rel, 1);
  for (int i = 0; i < nargs && pos; i++)
    sm__vt_push(c, pos, args[i]);
  r = call_value(&fr, f, pos, NULL, none);
  return r;
}

sm__vnode *sm__py_instantiate(sm__ctx *c, sm__vnode *cls) {
  frame fr;
  pyclass *k;
  TSNode none = {0};
  if (cls == NULL || cls->t != SM__T_CLASS || (k = cls->aux) == NULL)
    return NULL;
  memset(&fr, 0, sizeof(fr));
  fr.c = c;
  fr.m = k->m;
  return instantiate(&fr, cls, NULL, NULL, none);
}

sm__vnode *sm__py_resolve(sm__ctx *c, const char *rel, const char *dotted) {
  pymod *m = module_get(c, rel);
  sm__vnode *v;
  char part[256];
  const char *p = dotted;
  frame fr;
  TSNode none = {0};
  if (m == NULL)
    return NULL;
  module_run(c, m);
  memset(&fr, 0, sizeof(fr));
  fr.c = c;
  fr.m = m;
  v = m->ns;
  while (p && *p && v) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (n >= sizeof(part))
      return NULL;
    memcpy(part, p, n);
    part[n] = '\0';
    if (v == m->ns) {
      char *key = sm__strdup(c, part);
      v = key ? resolve_lazy(&fr, m->ns, key, sm__vt_get(m->ns, key)) : NULL;
    } else {
      v = getattr_v(&fr, v, part, none);
    }
    p = dot ? dot + 1 : NULL;
  }
  return v;
}

/* ==== Config files ==== */

/* Does the module run as a script (if __name__ == "__main__":)? */
static int is_script(sm__ctx *c, pymod *m) {
  uint32_t nc;
  if (module_load(c, m) != 0)
    return 0;
  nc = ts_node_named_child_count(m->root);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode s = ts_node_named_child(m->root, i);
    if (is(s, "if_statement")) {
      TSNode cond = field(s, "condition");
      uint32_t a = ts_node_start_byte(cond), b = ts_node_end_byte(cond);
      if (b - a < 64 && memmem(m->src + a, b - a, "__main__", 8) != NULL)
        return 1;
    }
  }
  return 0;
}

/* Public values of a namespace (no modules, functions, classes, library
 * symbols, or names starting with '_'). */
static sm__vnode *values_of(sm__ctx *c, pymod *m, sm__vnode *ns,
                            int keep_base) {
  sm__vnode *out = sm__vt_new(c, SM__T_MAP, ns->path, 1);
  frame f;
  memset(&f, 0, sizeof(f));
  f.c = c;
  f.m = m;
  for (int i = 0; out && i < ns->n; i++) {
    const char *k = ns->e[i].key;
    sm__vnode *v = ns->e[i].v;
    if (lazy_import(v) && k != NULL && k[0] != '_')
      v = resolve_lazy(&f, ns, k, v);
    if (k == NULL || (k[0] == '_' && !(keep_base && strcmp(k, "_base_") == 0)))
      continue;
    if (v->t == SM__T_MODULE || v->t == SM__T_FUNC || v->t == SM__T_CLASS ||
        (v->t == SM__T_CALL && (v->flags & SM__VF_LAZY)))
      continue;
    if (v->t == SM__T_SYM) {
      /* An imported library name (import torch, from x import y). */
      size_t kl = strlen(k), sl = strlen(v->str);
      if (strcmp(v->str, k) == 0 ||
          (sl > kl && v->str[sl - kl - 1] == '.' &&
           strcmp(v->str + sl - kl, k) == 0) ||
          strchr(v->str, '.') == NULL)
        continue;
    }
    sm__vt_put(c, out, k, v);
  }
  return out;
}

/* mmengine: `_base_ = [...]` is read first so that the rest of the file
 * can refer to `_base_.name`; the module is then merged over its
 * bases. */
static sm__vnode *mmengine_bases(sm__ctx *c, pymod *m, int depth,
                                 sm__vnode **base_ns) {
  uint32_t nc = module_load(c, m) == 0 ? ts_node_named_child_count(m->root) : 0;
  frame f;
  sm__vnode *merged = NULL;
  memset(&f, 0, sizeof(f));
  f.c = c;
  f.m = m;
  for (uint32_t i = 0; i < nc && i < 64; i++) {
    TSNode s = ts_node_named_child(m->root, i), a, left;
    sm__vnode *v;
    if (!is(s, "expression_statement"))
      continue;
    a = ts_node_named_child(s, 0);
    if (!is(a, "assignment"))
      continue;
    left = field(a, "left");
    if (!is(left, "identifier"))
      continue;
    {
      size_t len;
      const char *t = span(&f, left, &len);
      if (len != 6 || strncmp(t, "_base_", 6) != 0)
        continue;
    }
    v = eval(&f, field(a, "right"), 0);
    for (int k = 0; k < (v->t == SM__T_LIST ? v->n : 1); k++) {
      sm__vnode *item = v->t == SM__T_LIST ? v->e[k].v : v;
      const char *p;
      sm__vnode *bt;
      if (item->t != SM__T_STR)
        continue;
      p = sm__cfg_find_near(c, m->rel, item->str);
      if (p == NULL) {
        sm__warn(c, "%s:%d: base %s not found in the repository", m->rel,
                 item->line, item->str);
        continue;
      }
      bt = sm__cfg_tree_depth(c, p, depth + 1);
      if (bt != NULL)
        merged = sm__vt_merge(c, merged, bt, SM__VM_DELETE_KEY);
    }
    *base_ns = merged ? merged : sm__vt_new(c, SM__T_MAP, m->rel, 1);
    return merged;
  }
  return NULL;
}

static void queue_class_code(sm__ctx *c, pyclass *k, int depth) {
  if (k == NULL || depth > 8)
    return;
  sm__py_queue(c, k->m->rel, SM__L_CODE, 1);
  for (int i = 0; i < k->nb; i++)
    if (k->bases[i]->t == SM__T_CLASS)
      queue_class_code(c, k->bases[i]->aux, depth + 1);
}

/* The value after the last ':' of a config argument (big_vision-style
 * `config.py:arg`) is passed to get_config; sm__py_config_arg sets it. */
sm__vnode *sm__py_config_tree(sm__ctx *c, const char *rel, int depth) {
  pymod *m = module_get(c, rel);
  sm__vnode *base_ns = NULL, *bases = NULL, *ns, *fn, *vals;
  int nclass = 0, nvals = 0;
  pyclass *last = NULL;

  if (m == NULL)
    return NULL;
  if (m->state == 0 && is_script(c, m))
    return NULL;
  if (m->state == 0) {
    bases = mmengine_bases(c, m, depth, &base_ns);
    if (base_ns != NULL)
      sm__vt_put(c, m->ns, "_base_", base_ns);
  }
  ns = module_run(c, m);
  if (ns == NULL)
    return NULL;
  /* ml_collections: get_config(arg), defined in this file (an imported
   * get_config is a loader the file calls, not its config). */
  fn = sm__vt_get(ns, "get_config");
  if (fn != NULL && fn->t == SM__T_FUNC && fn->aux != NULL &&
      ((pyfunc *)fn->aux)->m == m) {
    sm__vnode *arg = NULL, *r;
    const char *a = sm__py_config_arg(c, rel);
    if (a != NULL)
      arg = sm__vt_strv(c, a, NULL, 0);
    r = sm__py_call_fn(c, rel, "get_config", arg ? &arg : NULL, arg ? 1 : 0);
    if (r != NULL && container(r))
      return r;
  }
  vals = values_of(c, m, ns, 0);
  for (int i = 0; i < ns->n; i++) {
    sm__vnode *v = ns->e[i].v;
    if (v->t == SM__T_CLASS && ((pyclass *)v->aux)->m == m) {
      pyclass *k = v->aux;
      for (int j = 0; j < k->nb; j++)
        if (k->bases[j]->t == SM__T_CLASS) {
          nclass++;
          last = k;
        }
    }
  }
  for (int i = 0; i < vals->n; i++)
    if (strcmp(vals->e[i].key, "_base_") != 0)
      nvals++;
  if (nclass > 0 && nvals == 0 && last != NULL) {
    /* An experiment class (class Exp(BaseExp): ...): its instance.  The
     * code of the class and its bases (data loaders, optimizers) is on
     * the job's path: it is scanned like imported code. */
    sm__vnode *cv = sm__vt_get(ns, last->name);
    sm__vnode *obj = sm__py_instantiate(c, cv);
    queue_class_code(c, last, 0);
    if (obj != NULL)
      return obj;
  }
  if (bases != NULL)
    return sm__vt_merge(c, bases, vals, SM__VM_DELETE_KEY);
  return vals;
}

const char *sm__py_config_arg(sm__ctx *c, const char *rel) {
  if (c->cfg_arg_rel != NULL && strcmp(c->cfg_arg_rel, rel) == 0)
    return c->cfg_arg;
  return NULL;
}

void sm__py_set_config_arg(sm__ctx *c, const char *rel, const char *arg) {
  c->cfg_arg_rel = sm__strdup(c, rel);
  c->cfg_arg = sm__strdup(c, arg);
}

const sm__vnode *sm__py_package_dir(sm__ctx *c) {
  pymod *m;
  uint32_t nc;
  frame f;
  if (c->pkg_dir_done)
    return c->pkg_dir;
  c->pkg_dir_done = 1;
  if (!sm__fs_is_file(c, "setup.py") || (m = module_get(c, "setup.py")) == NULL)
    return NULL;
  module_run(c, m);
  if (m->loaded <= 0)
    return NULL;
  memset(&f, 0, sizeof(f));
  f.c = c;
  f.m = m;
  nc = ts_node_named_child_count(m->root);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode s = ts_node_named_child(m->root, i), call, args;
    char *callee;
    if (!is(s, "expression_statement"))
      continue;
    call = ts_node_named_child(s, 0);
    if (!is(call, "call"))
      continue;
    callee = dup_span(&f, field(call, "function"));
    if (callee == NULL || strcmp(last_comp(callee), "setup") != 0)
      continue;
    args = field(call, "arguments");
    for (uint32_t k = 0; k < ts_node_named_child_count(args); k++) {
      TSNode a = ts_node_named_child(args, k);
      size_t len;
      const char *t;
      sm__vnode *v;
      if (!is(a, "keyword_argument"))
        continue;
      t = span(&f, field(a, "name"), &len);
      if (len != 11 || strncmp(t, "package_dir", 11) != 0)
        continue;
      v = eval(&f, field(a, "value"), 0);
      if (v->t == SM__T_MAP)
        c->pkg_dir = v;
    }
  }
  return c->pkg_dir;
}
