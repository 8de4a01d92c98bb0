/* pyscan.c - Python source through the tree-sitter Python grammar.
 *
 * From the syntax tree of the entry script and the local modules it
 * imports (breadth first, bounded) this reads: argparse options and their
 * defaults, dataclass and config-class fields, attribute assignments of
 * config objects (yacs `_C.TRAIN.BASE_LR = 5e-4`), module-level
 * assignments of the entry and of Python config files, keyword arguments
 * of config, trainer and optimizer calls, the defaults of the function
 * given to fire.Fire, preset tables ({'gpt-mini': dict(n_layer=6, ...)}),
 * model factories (def vit_small(): VisionTransformer(embed_dim=384,
 * ...)), model and dataset names in from_pretrained / create_model /
 * load_dataset / torchvision calls, learning-rate scaling expressions,
 * and signals: DDP, FSDP, DeepSpeed, AMP, bf16, LoRA, device counts.
 * Nothing is executed. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "advisor/advisor_int.h"
#include "advisor/tsnode.h"

const TSLanguage *tree_sitter_python(void);

#define MAX_IMPORT_DEPTH 3
/* Bytes of imported modules parsed before deeper ones are only scanned
 * for class names. */
#define MAX_CODE_BYTES (256 * 1024)
/* Modules deeper than this get a light line scan, not a parse. */
#define FULL_PARSE_DEPTH 2
#define MAX_TREE_DEPTH 300
#define MAX_RPN 400

/* One file being scanned. */
typedef struct scan {
  sm__ctx *c;              /* context */
  const char *rel;         /* root-relative path */
  const char *dir;         /* its directory */
  const char *src;         /* source text */
  int layer;               /* layer of its values */
  int depth;               /* import depth */
  int config_only;         /* a Python config file: module assignments only */
  const char *func;        /* enclosing function, NULL at module level */
  const char *cls;         /* enclosing class */
  int wweight;             /* weight of words found here */
  const char *lr_var;      /* variable holding a rescaled learning rate */
  int in_main;             /* inside `if __name__ == "__main__":` */
  const char *guard;       /* RPN of the enclosing if conditions, NULL none */
  uint64_t *reach;         /* names of the top-level definitions on the path */
  int skipped;             /* top-level definitions not read */
  const char *devvars[16]; /* variables holding the visible device count */
  int ndevvars;
  /* Imports wait until the file is read: a module is followed only when
   * a name it binds is used in the file. */
  struct pending {
    const char *path;  /* module file */
    const char *bound; /* the name it binds, NULL: always follow */
    const char *want;  /* ",x,": the names imported from it, NULL all */
  } * pend;
  int npend, cappend;
  uint64_t *used;        /* hashes of the identifiers used (open addressing) */
  size_t nused;          /* slots filled */
  int top;               /* index of the top-level definition being read */
  int ntop;              /* top-level definitions seen */
  const char *want;      /* ",a,b,": names the importers need, NULL all */
  const char *tops[512]; /* names of the top-level definitions */
} scan;

#define USED_CAP 16384

/* A call from one function of the entry to another: which parameters it
 * passes, so that the defaults of the rest are the job's values. */
typedef struct pycall {
  const char *caller; /* calling function, "" for the __main__ block */
  const char *callee; /* called function */
  int npos;           /* positional arguments given */
  const char *kw;     /* ",a,b," keyword names given */
  int splat;          /* *args or **kwargs passed: every parameter */
} pycall;

/* ==== Node helpers ==== */

static const char *ntype(TSNode n) {
  return ts_node_type(n);
}

static const char *text(scan *s, TSNode n, size_t *len) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  *len = b - a;
  return s->src + a;
}

static char *dup_text(scan *s, TSNode n) {
  size_t len;
  const char *t = text(s, n, &len);
  if (len > 4096)
    len = 4096;
  return sm__strndup(s->c, t, len);
}

static const char *ev(scan *s, TSNode n) {
  return sm__ev(s->c, s->rel, line_of(n));
}

/* Last component of a dotted name. */
static const char *last_comp(const char *s) {
  const char *d = strrchr(s, '.');
  return d ? d + 1 : s;
}

/* ==== Values ==== */

typedef struct val {
  int kind;        /* SM__V_*, or -1 for unknown */
  double num;      /* number */
  const char *str; /* string, ref, list text or RPN */
  int list_n;      /* list length */
} val;

/* The text of a string literal; NULL for f-strings with fields. */
static const char *string_value(scan *s, TSNode n) {
  sm_buf b;
  uint32_t nc = ts_node_named_child_count(n);
  const char *out;

  if (is(n, "concatenated_string")) {
    sm_buf_init(&b, 1 << 16);
    for (uint32_t i = 0; i < nc; i++) {
      const char *part = string_value(s, ts_node_named_child(n, i));
      if (part == NULL) {
        sm_buf_release(&b);
        return NULL;
      }
      sm_buf_adds(&b, part);
    }
    out = sm__strdup(s->c, sm_buf_str(&b));
    sm_buf_release(&b);
    return out;
  }
  sm_buf_init(&b, 1 << 16);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(n, i);
    size_t len;
    const char *t;
    if (is(k, "interpolation")) {
      sm_buf_release(&b);
      return NULL;
    }
    if (is(k, "string_content") || is(k, "escape_sequence")) {
      t = text(s, k, &len);
      sm_buf_add(&b, t, len);
    }
  }
  out = sm__strdup(s->c, sm_buf_str(&b));
  sm_buf_release(&b);
  return out;
}

/* A dotted reference name for identifiers and attributes: `args.lr` ->
 * "lr", `config.TRAIN.BASE_LR` -> "train.base_lr". */
static const char *ref_name(scan *s, TSNode n) {
  char *t = dup_text(s, n);
  return t ? sm__dotted_key(t, is(n, "attribute"), 0) : NULL;
}

static int rpn(scan *s, TSNode n, sm_buf *out, int depth);

static val eval(scan *s, TSNode n, int depth);

/* Names of calls that give the world size. */
static int world_call(const char *callee) {
  const char *l = last_comp(callee);
  return strcmp(l, "get_world_size") == 0 || strcmp(l, "device_count") == 0;
}

static int rpn_sub(void *s, TSNode n, sm_buf *out, int depth) {
  return rpn(s, n, out, depth);
}

static void cond_into(scan *s, TSNode n, sm_buf *out, int depth);

/* a if cond else b: " a b cond ?:", decided with the job's values (the
 * condition's undecidable parts are unknown). */
static int rpn_choice(scan *s, TSNode n, sm_buf *out, int depth) {
  if (ts_node_named_child_count(n) != 3 ||
      rpn(s, ts_node_named_child(n, 0), out, depth + 1) != 0 ||
      rpn(s, ts_node_named_child(n, 2), out, depth + 1) != 0)
    return -1;
  cond_into(s, ts_node_named_child(n, 1), out, depth + 1);
  sm_buf_adds(out, " ?:");
  return 0;
}

/* Is the node the integer literal 1? */
static int is_one(scan *s, TSNode n) {
  size_t len;
  const char *t = text(s, n, &len);
  return is(n, "integer") && len == 1 && t[0] == '1';
}

/* max(1, n_gpus): a guard against a zero count, which is n for every
 * count a job runs with. */
static int rpn_max_one(scan *s, TSNode args, sm_buf *out, int depth) {
  TSNode a = ts_node_named_child(args, 0), b = ts_node_named_child(args, 1);
  if (is_one(s, a))
    return rpn(s, b, out, depth + 1);
  if (is_one(s, b))
    return rpn(s, a, out, depth + 1);
  return -1;
}

/* Compiles arithmetic into RPN text; returns 0 or -1. */
static int rpn(scan *s, TSNode n, sm_buf *out, int depth) {
  if (depth > 20 || out->len > MAX_RPN)
    return -1;
  if (is(n, "parenthesized_expression"))
    return rpn(s, ts_node_named_child(n, 0), out, depth + 1);
  if (is(n, "conditional_expression"))
    return rpn_choice(s, n, out, depth);
  if (is(n, "binary_operator"))
    return sm__ts_rpn_binop(s->src, n, out, depth, rpn_sub, s);
  if (is(n, "boolean_operator")) {
    size_t len = 0;
    const char *o = text(s, field(n, "operator"), &len);
    if (rpn(s, field(n, "left"), out, depth + 1) != 0 ||
        rpn(s, field(n, "right"), out, depth + 1) != 0)
      return -1;
    sm_buf_adds(out, o[0] == 'a' ? " and" : " or");
    return 0;
  }
  if (is(n, "not_operator")) {
    if (rpn(s, field(n, "argument"), out, depth + 1) != 0)
      return -1;
    sm_buf_adds(out, " not");
    return 0;
  }
  if (is(n, "comparison_operator")) {
    /* a OP b (chains are not compiled). */
    char op[16];
    size_t o = 0, len;
    const char *t;
    TSNode a = ts_node_named_child(n, 0), b = ts_node_named_child(n, 1);
    if (ts_node_named_child_count(n) != 2)
      return -1;
    t = s->src + ts_node_end_byte(a);
    len = ts_node_start_byte(b) - ts_node_end_byte(a);
    for (size_t i = 0; i < len && o + 1 < sizeof(op); i++)
      if (!isspace((unsigned char)t[i]))
        op[o++] = t[i];
    op[o] = '\0';
    if (strcmp(op, "==") && strcmp(op, "!=") && strcmp(op, "<") &&
        strcmp(op, ">") && strcmp(op, "<=") && strcmp(op, ">=") &&
        strcmp(op, "is") && strcmp(op, "isnot"))
      return -1;
    if (rpn(s, a, out, depth + 1) != 0 || rpn(s, b, out, depth + 1) != 0)
      return -1;
    sm_buf_addc(out, ' ');
    sm_buf_adds(out, op);
    return 0;
  }
  if (is(n, "true") || is(n, "false")) {
    sm_buf_adds(out, is(n, "true") ? " 1" : " 0");
    return 0;
  }
  if (is(n, "none")) {
    sm_buf_adds(out, " @none");
    return 0;
  }
  if (is(n, "string")) {
    const char *v = string_value(s, n);
    if (v == NULL || strlen(v) > 60 || strchr(v, '\x03'))
      return -1;
    sm_buf_adds(out, " \"");
    for (const char *q = v; *q; q++)
      sm_buf_addc(out, *q == ' ' ? '\x03' : *q);
    return 0;
  }
  if (is(n, "call")) {
    char *callee = dup_text(s, field(n, "function"));
    TSNode args = field(n, "arguments");
    if (callee && world_call(callee)) {
      sm_buf_adds(out, " @world");
      return 0;
    }
    if (callee && strcmp(last_comp(callee), "is_available") == 0 &&
        (strstr(callee, "cuda") || strstr(callee, "accelerator"))) {
      /* The job runs where the scheduler places it: on GPUs. */
      sm_buf_adds(out, " 1");
      return 0;
    }
    if (callee && strcmp(last_comp(callee), "is_bf16_supported") == 0) {
      /* ... of the current generation, which have bf16 (A100, H100). */
      sm_buf_adds(out, " 1");
      return 0;
    }
    if (callee && strcmp(last_comp(callee), "is_available") == 0 &&
        (strstr(callee, "mps") || strstr(callee, "xpu") ||
         strstr(callee, "npu"))) {
      /* ... CUDA GPUs, not Apple, Intel or Ascend devices. */
      sm_buf_adds(out, " 0");
      return 0;
    }
    if (callee &&
        (strcmp(callee, "int") == 0 || strcmp(callee, "float") == 0) &&
        ts_node_named_child_count(args) == 1)
      return rpn(s, ts_node_named_child(args, 0), out, depth + 1);
    if (callee && strcmp(callee, "max") == 0 &&
        ts_node_named_child_count(args) == 2)
      return rpn_max_one(s, args, out, depth);
    if (callee && (strcmp(callee, "all") == 0 || strcmp(callee, "any") == 0) &&
        ts_node_named_child_count(args) == 1) {
      /* all([a, b, c]): a and b and c. */
      TSNode l = ts_node_named_child(args, 0);
      uint32_t ln = ts_node_named_child_count(l);
      if (!(is(l, "list") || is(l, "tuple")) || ln == 0 || ln > 16)
        return -1;
      for (uint32_t i = 0; i < ln; i++) {
        if (rpn(s, ts_node_named_child(l, i), out, depth + 1) != 0)
          return -1;
        if (i > 0)
          sm_buf_adds(out, callee[1] == 'l' ? " and" : " or");
      }
      return 0;
    }
    return -1;
  }
  if (is(n, "identifier") || is(n, "attribute")) {
    const char *r = ref_name(s, n);
    if (r == NULL || strlen(r) > 100)
      return -1;
    sm_buf_addc(out, ' ');
    sm_buf_adds(out, r);
    return 0;
  }
  {
    val v = eval(s, n, depth + 1);
    if (v.kind == SM__V_NUM) {
      sm_buf_addf(out, " %.17g", v.num);
      return 0;
    }
  }
  return -1;
}

/* An expression the guards read, as RPN (an SM__V_EXPR), or unknown. */
static val rpn_value(scan *s, TSNode n, int depth) {
  val v = {-1, 0, NULL, 0};
  sm_buf b2;
  sm_buf_init(&b2, 4096);
  if (rpn(s, n, &b2, depth) == 0) {
    v.kind = SM__V_EXPR;
    v.str = sm__strdup(s->c, sm_buf_str(&b2));
  }
  sm_buf_release(&b2);
  return v;
}

/* 1_000, 0x10, 3e-4. */
static val eval_number(scan *s, TSNode n) {
  val v = {-1, 0, NULL, 0};
  size_t len;
  char buf[64];
  const char *x = text(s, n, &len);
  size_t o = 0;
  for (size_t i = 0; i < len && o + 1 < sizeof(buf); i++)
    if (x[i] != '_')
      buf[o++] = x[i];
  buf[o] = '\0';
  if (o > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X'))
    v.num = (double)strtoll(buf, NULL, 16);
  else if (sm_parse_double(buf, &v.num) != 0)
    return v;
  v.kind = SM__V_NUM;
  return v;
}

/* a + b, a // b, a ** b on numbers; ROOT / "file"; otherwise RPN. */
static val eval_binop(scan *s, TSNode n, int depth) {
  val v = {-1, 0, NULL, 0};
  size_t len;
  val a = eval(s, field(n, "left"), depth + 1);
  val b = eval(s, field(n, "right"), depth + 1);
  const char *op = text(s, field(n, "operator"), &len);
  if (len == 1 && op[0] == '/' && b.kind == SM__V_STR &&
      (a.kind == SM__V_STR || a.kind == SM__V_REF)) {
    /* pathlib: ROOT / "data/hyp.yaml" is a path next to the script. */
    v.kind = SM__V_STR;
    v.str =
        a.kind == SM__V_STR ? sm__printf(s->c, "%s/%s", a.str, b.str) : b.str;
    return v;
  }
  if (a.kind == SM__V_NUM && b.kind == SM__V_NUM) {
    v.kind = SM__V_NUM;
    if (len == 1 && op[0] == '+')
      v.num = a.num + b.num;
    else if (len == 1 && op[0] == '-')
      v.num = a.num - b.num;
    else if (len == 1 && op[0] == '*')
      v.num = a.num * b.num;
    else if (len == 1 && op[0] == '/' && b.num != 0)
      v.num = a.num / b.num;
    else if (len == 2 && op[0] == '/' && b.num != 0)
      v.num = (double)(long long)(a.num / b.num);
    else if (len == 2 && op[0] == '*' && b.num >= 0 && b.num < 64)
      v.num = __builtin_pow(a.num, b.num);
    else
      v.kind = -1;
  } else {
    v = rpn_value(s, n, depth);
  }
  return v;
}

/* [1, 2], (a, b): the text, the sum when all are numbers, the count. */
static val eval_list(scan *s, TSNode n, int depth) {
  val v = {-1, 0, NULL, 0};
  sm_buf b;
  uint32_t nc = ts_node_named_child_count(n);
  double sum = 0;
  int numeric = 1;
  sm_buf_init(&b, 4096);
  sm_buf_addc(&b, '[');
  for (uint32_t i = 0; i < nc && i < 64; i++) {
    val e = eval(s, ts_node_named_child(n, i), depth + 1);
    if (i)
      sm_buf_adds(&b, ", ");
    if (e.kind == SM__V_NUM) {
      sm_buf_addf(&b, "%.17g", e.num);
      sum += e.num;
    } else if (e.kind == SM__V_STR) {
      sm_buf_adds(&b, e.str);
      numeric = 0;
    } else {
      numeric = 0;
    }
  }
  sm_buf_addc(&b, ']');
  v.kind = SM__V_LIST;
  v.str = sm__strdup(s->c, sm_buf_str(&b));
  v.num = numeric ? sum : 0.0 / 0.0;
  v.list_n = (int)nc;
  sm_buf_release(&b);
  return v;
}

/* A name or attribute: a reference, or a torch dtype by name. */
static val eval_name(scan *s, TSNode n) {
  val v = {-1, 0, NULL, 0};
  char *full = dup_text(s, n);
  if (full &&
      (strcmp(full, "torch.bfloat16") == 0 ||
       strcmp(full, "torch.float16") == 0 || strcmp(full, "torch.half") == 0 ||
       strcmp(full, "torch.float32") == 0)) {
    v.kind = SM__V_STR;
    v.str = last_comp(full);
    return v;
  }
  v.str = ref_name(s, n);
  if (v.str != NULL)
    v.kind = SM__V_REF;
  return v;
}

/* int(x), field(default=...), os.environ.get(K, d), world-size calls,
 * all()/any(). */
static val eval_call(scan *s, TSNode n, int depth) {
  val v = {-1, 0, NULL, 0};
  char *callee = dup_text(s, field(n, "function"));
  TSNode args = field(n, "arguments");
  uint32_t nc = ts_node_named_child_count(args);
  if (callee == NULL)
    return v;
  if ((strcmp(callee, "int") == 0 || strcmp(callee, "float") == 0 ||
       strcmp(callee, "str") == 0 || strcmp(callee, "bool") == 0) &&
      nc >= 1)
    return eval(s, ts_node_named_child(args, 0), depth + 1);
  if (strcmp(last_comp(callee), "field") == 0) {
    for (uint32_t i = 0; i < nc; i++) {
      TSNode a = ts_node_named_child(args, i);
      if (is(a, "keyword_argument")) {
        size_t kl;
        const char *k = text(s, field(a, "name"), &kl);
        if (kl == 7 && strncmp(k, "default", 7) == 0)
          return eval(s, field(a, "value"), depth + 1);
      }
    }
    return v;
  }
  if ((strcmp(callee, "os.environ.get") == 0 ||
       strcmp(callee, "os.getenv") == 0) &&
      nc >= 1) {
    val name = eval(s, ts_node_named_child(args, 0), depth + 1);
    const char *e;
    if (name.kind == SM__V_STR && (e = sm__env(s->c, name.str)) != NULL) {
      v.kind = SM__V_STR;
      v.str = e;
      return v;
    }
    if (nc >= 2)
      return eval(s, ts_node_named_child(args, 1), depth + 1);
    return v;
  }
  if (world_call(callee)) {
    v.kind = SM__V_EXPR;
    v.str = "@world";
  } else if (strcmp(callee, "all") == 0 || strcmp(callee, "any") == 0) {
    v = rpn_value(s, n, depth);
  }
  return v;
}

static val eval(scan *s, TSNode n, int depth) {
  val v = {-1, 0, NULL, 0};
  const char *t = ntype(n);
  size_t len;

  if (ts_node_is_null(n) || depth > 30)
    return v;
  if (strcmp(t, "integer") == 0 || strcmp(t, "float") == 0) {
    v = eval_number(s, n);
  } else if (strcmp(t, "string") == 0 ||
             strcmp(t, "concatenated_string") == 0) {
    v.str = string_value(s, n);
    if (v.str != NULL)
      v.kind = SM__V_STR;
  } else if (strcmp(t, "true") == 0 || strcmp(t, "false") == 0) {
    v.kind = SM__V_BOOL;
    v.num = t[0] == 't';
  } else if (strcmp(t, "none") == 0) {
    v.kind = SM__V_NULL;
  } else if (strcmp(t, "unary_operator") == 0) {
    TSNode arg = field(n, "argument");
    const char *op = text(s, field(n, "operator"), &len);
    v = eval(s, arg, depth + 1);
    if (v.kind == SM__V_NUM && op[0] == '-')
      v.num = -v.num;
    else if (v.kind != SM__V_NUM)
      v.kind = -1;
  } else if (strcmp(t, "parenthesized_expression") == 0) {
    v = eval(s, ts_node_named_child(n, 0), depth + 1);
  } else if (strcmp(t, "conditional_expression") == 0) {
    /* `a if cond else b` over numbers: an expression the job's values
     * decide; otherwise the first branch, as the common case. */
    val a = eval(s, ts_node_named_child(n, 0), depth + 1);
    val b = eval(s, ts_node_named_child(n, 2), depth + 1);
    v = a;
    if ((a.kind == SM__V_NUM || a.kind == SM__V_REF || a.kind == SM__V_EXPR) &&
        (b.kind == SM__V_NUM || b.kind == SM__V_REF || b.kind == SM__V_EXPR) &&
        !(a.kind == SM__V_NUM && b.kind == SM__V_NUM && a.num == b.num)) {
      val e = rpn_value(s, n, depth);
      if (e.kind == SM__V_EXPR)
        v = e;
    }
  } else if (strcmp(t, "binary_operator") == 0) {
    v = eval_binop(s, n, depth);
  } else if (strcmp(t, "boolean_operator") == 0 ||
             strcmp(t, "comparison_operator") == 0 ||
             strcmp(t, "not_operator") == 0) {
    /* A condition over options: kept as RPN for the guards. */
    v = rpn_value(s, n, depth);
  } else if (strcmp(t, "list") == 0 || strcmp(t, "tuple") == 0) {
    v = eval_list(s, n, depth);
  } else if (strcmp(t, "identifier") == 0 || strcmp(t, "attribute") == 0) {
    v = eval_name(s, n);
  } else if (strcmp(t, "call") == 0) {
    v = eval_call(s, n, depth);
  }
  return v;
}

static sm__param *put(scan *s, const char *key, val v, int layer,
                      const char *e) {
  sm__param *p = NULL;
  switch (v.kind) {
  case SM__V_NUM:
  case SM__V_BOOL:
  case SM__V_NULL:
    p = sm__param_num(s->c, key, v.num, v.kind, layer, e);
    break;
  case SM__V_STR:
  case SM__V_REF:
  case SM__V_EXPR:
    p = sm__param_str(s->c, key, v.str, v.kind, layer, e);
    break;
  case SM__V_LIST:
    p = sm__param_str(s->c, key, v.str, v.kind, layer, e);
    if (p) {
      p->num = v.num;
      p->list_n = v.list_n;
    }
    break;
  default:
    break;
  }
  return p;
}

/* ==== Imports ==== */

static uint64_t ident_hash(const char *t, size_t n) {
  uint64_t h = sm_hash64(t, n, 0x5eed);
  return h ? h : 1;
}

/* Identifiers are kept per top-level definition, so that a module
 * imported for some names follows only the imports those definitions
 * (and its module-level code) use. */
static uint64_t in_top(uint64_t h, int top) {
  h ^= (uint64_t)(top + 2) * 0x9e3779b97f4a7c15ull;
  return h ? h : 1;
}

static void mark_used(scan *s, const char *t, size_t n) {
  uint64_t h;
  size_t k;
  if (s->used == NULL || s->nused * 2 >= USED_CAP)
    return;
  h = in_top(ident_hash(t, n), s->top);
  for (k = h % USED_CAP; s->used[k] != 0; k = (k + 1) % USED_CAP)
    if (s->used[k] == h)
      return;
  s->used[k] = h;
  s->nused++;
}

static int used_in(const scan *s, uint64_t h0, int top) {
  uint64_t h = in_top(h0, top);
  for (size_t k = h % USED_CAP; s->used[k] != 0; k = (k + 1) % USED_CAP)
    if (s->used[k] == h)
      return 1;
  return 0;
}

static int wanted(const char *want, const char *name) {
  char pat[256];
  if (want == NULL)
    return 1;
  snprintf(pat, sizeof(pat), ",%s,", name);
  return strstr(want, pat) != NULL;
}

/* Is name used by the module-level code or a wanted definition? */
static int is_used(const scan *s, const char *name) {
  uint64_t h0;
  if (s->used == NULL || s->nused * 2 >= USED_CAP)
    return 1; /* too many names to tell: follow */
  h0 = ident_hash(name, strlen(name));
  if (used_in(s, h0, -1))
    return 1;
  for (int t = 0; t < s->ntop; t++)
    if (wanted(s->want, s->tops[t]) && used_in(s, h0, t))
      return 1;
  return 0;
}

static void pend_import(scan *s, const char *path, const char *bound,
                        const char *want) {
  if (s->npend == s->cappend) {
    int cap = s->cappend ? s->cappend * 2 : 32;
    struct pending *np =
        sm_arena_alloc(&s->c->arena, (size_t)cap * sizeof(*np));
    if (np == NULL)
      return;
    if (s->npend)
      memcpy(np, s->pend, (size_t)s->npend * sizeof(*np));
    s->pend = np;
    s->cappend = cap;
  }
  s->pend[s->npend].path = path;
  s->pend[s->npend].bound = bound;
  s->pend[s->npend].want = want;
  s->npend++;
}

static void import_module(scan *s, const char *module, int level,
                          const char *name, const char *bound) {
  const char *path;
  if (s->depth + 1 > MAX_IMPORT_DEPTH || s->config_only)
    return;
  sm__words_in(s->c, module, strlen(module), s->rel, s->wweight);
  if (strncmp(module, "transformers", 12) == 0)
    sm__signal(s->c, SM__SIG_TRANSFORMERS, s->rel, s->layer);
  else if (strncmp(module, "torchvision", 11) == 0 ||
           strncmp(module, "timm", 4) == 0)
    sm__signal(s->c, SM__SIG_VISION, s->rel, s->layer);
  else if (strncmp(module, "peft", 4) == 0)
    sm__signal(s->c, SM__SIG_LORA, s->rel, s->layer);
  else if (strncmp(module, "lightning", 9) == 0 ||
           strncmp(module, "pytorch_lightning", 17) == 0)
    sm__signal(s->c, SM__SIG_LIGHTNING, s->rel, s->layer);
  else if (strcmp(module, "torch") == 0 || strncmp(module, "torch.", 6) == 0)
    sm__signal(s->c, SM__SIG_TORCH, s->rel, s->layer);
  else if (strcmp(module, "jax") == 0 || strncmp(module, "jax.", 4) == 0 ||
           strcmp(module, "flax") == 0 || strncmp(module, "flax.", 5) == 0 ||
           strcmp(module, "haliax") == 0 ||
           strncmp(module, "haliax.", 7) == 0 || strcmp(module, "equinox") == 0)
    sm__signal(s->c, SM__SIG_JAX, s->rel, s->layer);
  if (name != NULL) {
    /* `from pkg import mod` may name a module. */
    const char *full =
        module[0] ? sm__printf(s->c, "%s.%s", module, name) : name;
    path = sm__py_module_path(s->c, s->dir, full, level);
    if (path != NULL) {
      pend_import(s, path, bound, NULL); /* a submodule: all of it */
      return;
    }
  }
  if (module[0] == '\0')
    return;
  path = sm__py_module_path(s->c, s->dir, module, level);
  if (path != NULL)
    pend_import(s, path, bound,
                name != NULL ? sm__printf(s->c, ",%s,", name) : NULL);
}

static void visit_import(scan *s, TSNode n) {
  uint32_t nc = ts_node_named_child_count(n);
  if (is(n, "import_statement")) {
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(n, i), alias = {0};
      if (is(k, "aliased_import")) {
        alias = field(k, "alias");
        k = field(k, "name");
      }
      if (is(k, "dotted_name")) {
        char *m = dup_text(s, k), *bound;
        if (m == NULL)
          continue;
        /* import a.b binds a; import a.b as z binds z */
        if (!ts_node_is_null(alias)) {
          bound = dup_text(s, alias);
        } else {
          bound = sm__strdup(s->c, m);
          if (bound && strchr(bound, '.'))
            *strchr(bound, '.') = '\0';
        }
        import_module(s, m, 0, NULL, bound);
      }
    }
    return;
  }
  /* import_from_statement */
  {
    TSNode mn = field(n, "module_name");
    const char *module = "";
    int level = 0;
    if (is(mn, "relative_import")) {
      uint32_t rc = ts_node_named_child_count(mn);
      size_t len;
      for (uint32_t i = 0; i < rc; i++) {
        TSNode k = ts_node_named_child(mn, i);
        if (is(k, "import_prefix")) {
          text(s, k, &len);
          level = (int)len;
        } else if (is(k, "dotted_name")) {
          module = dup_text(s, k);
        }
      }
      if (level == 0)
        level = 1;
    } else if (!ts_node_is_null(mn)) {
      module = dup_text(s, mn);
    }
    if (module == NULL)
      return;
    {
      int any = 0;
      for (uint32_t i = 0; i < nc; i++) {
        TSNode k = ts_node_named_child(n, i), alias = {0};
        if (ts_node_eq(k, mn))
          continue;
        if (is(k, "aliased_import")) {
          alias = field(k, "alias");
          k = field(k, "name");
        }
        if (is(k, "dotted_name")) {
          char *nm = dup_text(s, k);
          if (nm)
            import_module(s, module, level, nm,
                          ts_node_is_null(alias) ? nm : dup_text(s, alias));
          any = 1;
        }
      }
      if (!any) /* from m import *: always followed */
        import_module(s, module, level, NULL, NULL);
    }
  }
}

/* ==== Calls ==== */

/* Names of keys that a learning-rate or batch expression mentions. */
static int is_lr_name(const char *leaf) {
  return strcmp(leaf, "lr") == 0 || strcmp(leaf, "learning_rate") == 0 ||
         strcmp(leaf, "base_lr") == 0 || strcmp(leaf, "blr") == 0 ||
         strcmp(leaf, "max_lr") == 0 || strcmp(leaf, "peak_lr") == 0;
}

static int is_batch_name(const char *leaf) {
  return strstr(leaf, "batch_size") != NULL || strcmp(leaf, "@world") == 0;
}

/* The next space-separated token of RPN text r into tok (at most cap-1
 * bytes kept); the rest of the text, or NULL when no token is left. */
static const char *rpn_token(const char *r, char *tok, size_t cap) {
  size_t n = 0;
  while (*r == ' ')
    r++;
  while (*r && *r != ' ' && n + 1 < cap)
    tok[n++] = *r++;
  tok[n] = '\0';
  return n == 0 ? NULL : r;
}

/* Does RPN text mention an lr key and a batch key? */
static int lr_rescale_expr(const char *r) {
  int lr = 0, batch = 0, num = 0;
  char tok[128];
  while (*r) {
    if ((r = rpn_token(r, tok, sizeof(tok))) == NULL)
      break;
    if (isdigit((unsigned char)tok[0]))
      num = 1;
    else if (is_lr_name(last_comp(tok)))
      lr = 1;
    else if (is_batch_name(last_comp(tok)))
      batch = 1;
  }
  return lr && batch && num;
}

static int config_callee(const char *callee) {
  const char *l = last_comp(callee);
  size_t n = strlen(l);
  if (strstr(l, "Tokenizer") != NULL || strstr(l, "Processor") != NULL)
    return 0;
  if ((n > 6 && strcmp(l + n - 6, "Config") == 0) ||
      (n > 9 && strcmp(l + n - 9, "Arguments") == 0) ||
      (n > 4 && strcmp(l + n - 4, "Args") == 0) ||
      (n >= 7 && strcmp(l + n - 7, "Trainer") == 0) || strcmp(l, "dict") == 0 ||
      strcmp(l, "Adam") == 0 || strcmp(l, "AdamW") == 0 ||
      strcmp(l, "SGD") == 0 || strcmp(l, "Adafactor") == 0 ||
      strcmp(l, "Lion") == 0 || strcmp(l, "LAMB") == 0 ||
      strcmp(l, "FusedAdam") == 0 || strcmp(l, "Accelerator") == 0 ||
      strcmp(l, "Fabric") == 0 || strcmp(l, "SimpleNamespace") == 0 ||
      strcmp(l, "Namespace") == 0)
    return 1;
  return 0;
}

/* Model names that torchvision and timm export as functions. */
static int model_fn_name(const char *l) {
  static const char *const pre[] = {
      "resnet",     "resnext",      "wide_resnet", "vgg",       "densenet",
      "mobilenet",  "efficientnet", "vit_",        "swin_",     "convnext",
      "regnet",     "alexnet",      "inception",   "googlenet", "shufflenet",
      "squeezenet", "mnasnet",      "deit_",       "beit_",     "maxvit",
      "fasterrcnn", "maskrcnn",     "retinanet",   "deeplabv3", "fcn_",
      "ssd",        "yolo",         NULL};
  for (int i = 0; pre[i]; i++)
    if (strncmp(l, pre[i], strlen(pre[i])) == 0)
      return 1;
  return 0;
}

static int optimizer_callee(const char *l) {
  return strcmp(l, "Adam") == 0 || strcmp(l, "AdamW") == 0 ||
         strcmp(l, "SGD") == 0 || strcmp(l, "Adafactor") == 0 ||
         strcmp(l, "Lion") == 0 || strcmp(l, "LAMB") == 0 ||
         strcmp(l, "FusedAdam") == 0 || strcmp(l, "LARS") == 0;
}

static void kwargs_to_params(scan *s, TSNode args, int layer, int factory) {
  uint32_t nc = ts_node_named_child_count(args);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    char *k;
    val v;
    if (!is(a, "keyword_argument"))
      continue;
    k = dup_text(s, field(a, "name"));
    v = eval(s, field(a, "value"), 0);
    if (k == NULL || v.kind < 0)
      continue;
    if (factory) {
      if (v.kind == SM__V_NUM && s->func != NULL) {
        sm__kv *kv = sm__vec_push(&s->c->factories);
        if (kv) {
          kv->group = s->func;
          kv->key = k;
          kv->num = v.num;
          kv->ev = ev(s, a);
        }
      }
    } else if (put(s, k, v, layer, ev(s, a)) != NULL && s->guard != NULL) {
      /* if args.card == 'small': cfg = Config(n_embd=768) elif ...: each
       * branch's keywords stand until the options rule the branch out
       * (decided when every layer is known). */
      sm__guarded *g;
      if (s->c->guarded.sz == 0)
        sm__vec_init(&s->c->guarded, sizeof(sm__guarded));
      if (s->c->guarded.n < 4096 &&
          (g = sm__vec_push(&s->c->guarded)) != NULL) {
        g->index = s->c->params.n - 1;
        g->guard = s->guard;
      }
    }
  }
}

/* The value node of the call's keyword argument NAME, or a null node. */
static TSNode kwarg_node(scan *s, TSNode args, const char *name) {
  uint32_t nc = ts_node_named_child_count(args);
  TSNode none = {0};
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    size_t len;
    const char *k;
    if (!is(a, "keyword_argument"))
      continue;
    k = text(s, field(a, "name"), &len);
    if (len == strlen(name) && strncmp(k, name, len) == 0)
      return field(a, "value");
  }
  return none;
}

static val kwarg(scan *s, TSNode args, const char *name) {
  TSNode n = kwarg_node(s, args, name);
  val none = {-1, 0, NULL, 0};
  return ts_node_is_null(n) ? none : eval(s, n, 0);
}

static TSNode first_pos(TSNode args) {
  uint32_t nc = ts_node_named_child_count(args);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    if (!is(a, "keyword_argument") && !is(a, "comment"))
      return a;
  }
  return (TSNode){0};
}

static void all_gpus_default(scan *s, const char *name, TSNode value);

/* An option with a closed set of values (choices=[...], click's
 * type=click.Choice([...])): a selector of presets, noted as
 * __choices.KEY. */
static void closed_choices(scan *s, const char *key, TSNode args,
                           const char *evs) {
  uint32_t nc = ts_node_named_child_count(args);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    size_t kl;
    const char *kt;
    char *vt;
    int closed = 0;
    if (!is(a, "keyword_argument"))
      continue;
    kt = text(s, field(a, "name"), &kl);
    if (kl == 7 && strncmp(kt, "choices", 7) == 0)
      closed = 1;
    else if (kl == 4 && strncmp(kt, "type", 4) == 0 &&
             (vt = dup_text(s, field(a, "value"))) != NULL)
      closed = strstr(vt, "Choice(") != NULL;
    if (closed) {
      sm__param_num(s->c, sm__printf(s->c, "__choices.%s", key), 1, SM__V_NUM,
                    SM__L_CODE, evs);
      return;
    }
  }
}

/* A length counted in thousands or millions of training images
 * (--kimg, --duration with metavar MIMG: the StyleGAN/EDM family): the
 * multiplier to images is noted for the option, and the steps are the
 * images over the global batch once both are known. */
static void image_unit(scan *s, const char *key, val metavar, val help,
                       const char *evs) {
  const char *leaf = strrchr(key, '.');
  const char *mv = metavar.kind == SM__V_STR ? metavar.str : "";
  const char *h = help.kind == SM__V_STR ? help.str : "";
  double mult = 0;
  size_t kl;
  leaf = leaf ? leaf + 1 : key;
  kl = strlen(leaf);
  if (strcasecmp(mv, "kimg") == 0 ||
      (kl >= 4 && strcmp(leaf + kl - 4, "kimg") == 0))
    mult = 1e3;
  else if (strcasecmp(mv, "mimg") == 0 ||
           (kl >= 4 && strcmp(leaf + kl - 4, "mimg") == 0))
    mult = 1e6;
  if (mult == 0)
    return;
  /* Only the run's length: a duration, or a total/training count; not a
   * tick, snapshot or ramp-up interval given in the same unit. */
  if (!(strcasestr(h, "duration") || strcasestr(h, "total") ||
        strcasestr(leaf, "total") || strcasestr(leaf, "duration") ||
        strcmp(leaf, "kimg") == 0) ||
      strcasestr(h, "rampup") || strcasestr(h, "how often") ||
      strcasestr(h, "half-life") || strcasestr(h, "every"))
    return;
  sm__param_num(s->c, sm__printf(s->c, "__imgunit.%s", key), mult, SM__V_NUM,
                SM__L_CODE, evs);
}

static void add_argument(scan *s, TSNode args, TSNode call) {
  uint32_t nc = ts_node_named_child_count(args);
  const char *key = NULL, *shortk = NULL;
  val def = kwarg(s, args, "default");
  val dest = kwarg(s, args, "dest");
  val action = kwarg(s, args, "action");
  int flag = 0;
  sm__param *p;

  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    val v;
    if (is(a, "keyword_argument"))
      continue;
    v = eval(s, a, 0);
    if (v.kind != SM__V_STR)
      continue;
    if (strncmp(v.str, "--", 2) == 0 && key == NULL)
      key = v.str;
    else if (v.str[0] == '-' && shortk == NULL)
      shortk = v.str;
  }
  if (dest.kind == SM__V_STR)
    key = dest.str;
  if (key == NULL)
    key = shortk;
  if (key != NULL) {
    uint32_t ac = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < ac; i++) {
      TSNode a = ts_node_named_child(args, i);
      size_t kl;
      const char *kt;
      char kn[128];
      if (!is(a, "keyword_argument"))
        continue;
      kt = text(s, field(a, "name"), &kl);
      if (kl == 7 && strncmp(kt, "default", 7) == 0) {
        sm__key_norm(key, strlen(key), kn, sizeof(kn));
        all_gpus_default(s, sm__strdup(s->c, kn), field(a, "value"));
      }
    }
  }
  if (key == NULL) {
    /* A positional argument: the command fills it in order. */
    TSNode a = first_pos(args);
    val v = ts_node_is_null(a) ? (val){-1, 0, NULL, 0} : eval(s, a, 0);
    const char **slot;
    {
      /* nargs=argparse.REMAINDER: the rest of the command, as KEY VALUE
       * pairs of config overrides (yacs / detectron2 / YOLOX opts). */
      TSNode na = kwarg_node(s, args, "nargs");
      if (!ts_node_is_null(na)) {
        char *vt = dup_text(s, na);
        if (vt && strstr(vt, "REMAINDER") && v.kind == SM__V_STR)
          s->c->remainder_pos = v.str;
      }
    }
    if (v.kind == SM__V_STR && v.str[0] != '-' && v.str[0] != '\0' &&
        (slot = sm__vec_push(&s->c->positionals)) != NULL)
      *slot = v.str;
    if (v.kind == SM__V_STR && def.kind >= 0) {
      sm__param *p2 = put(s, v.str, def, SM__L_ENTRY, ev(s, call));
      if (p2 != NULL)
        p2->opt = 1;
    }
    return;
  }
  /* Every spelling of the option (-b, --batch-size) names the key. */
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    val v;
    char kn[128], on[128];
    const char **pair;
    if (is(a, "keyword_argument"))
      continue;
    v = eval(s, a, 0);
    if (v.kind != SM__V_STR || v.str[0] != '-')
      continue;
    sm__key_norm(v.str, strlen(v.str), on, sizeof(on));
    sm__key_norm(key, strlen(key), kn, sizeof(kn));
    if (strcmp(on, kn) == 0 || (pair = sm__vec_push(&s->c->optalias)) == NULL)
      continue;
    pair[0] = sm__strdup(s->c, on);
    pair[1] = sm__strdup(s->c, kn);
  }
  {
    /* click's is_flag=True is argparse's store_true. */
    val isf = kwarg(s, args, "is_flag");
    if (isf.kind == SM__V_BOOL && isf.num != 0 && action.kind < 0) {
      action.kind = SM__V_STR;
      action.str = "store_true";
    }
  }
  if (action.kind == SM__V_STR) {
    if (strcmp(action.str, "store_true") == 0) {
      flag = 1;
      if (def.kind < 0) {
        def.kind = SM__V_BOOL;
        def.num = 0;
      }
    } else if (strcmp(action.str, "store_false") == 0) {
      flag = 2;
      if (def.kind < 0) {
        def.kind = SM__V_BOOL;
        def.num = 1;
      }
    }
  }
  if (flag) {
    const char **slot = sm__vec_push(&s->c->flags);
    char norm[128];
    sm__key_norm(key, strlen(key), norm, sizeof(norm));
    if (slot)
      *slot = sm__strdup(s->c, norm);
  }
  if (def.kind < 0)
    def.kind = SM__V_NULL;
  /* The program's options are its defaults wherever the parser is built
   * (wrappers such as submitit scripts import the real parser). */
  p = put(s, key, def, s->layer < SM__L_ENTRY ? SM__L_ENTRY : s->layer,
          ev(s, call));
  if (p != NULL) {
    p->flag = flag;
    p->opt = 1;
  }
  {
    val help = kwarg(s, args, "help");
    char kn[128];
    sm__key_norm(key, strlen(key), kn, sizeof(kn));
    if (help.kind == SM__V_STR)
      sm__help_roles(s->c, kn, help.str, ev(s, call));
    image_unit(s, kn, kwarg(s, args, "metavar"), help, ev(s, call));
    closed_choices(s, kn, args, ev(s, call));
  }
}

static void record_call(scan *s, const char *callee, TSNode args) {
  pycall *pc;
  sm_buf kw;
  uint32_t nc = ts_node_named_child_count(args);
  if (s->c->pycalls.sz == 0)
    sm__vec_init(&s->c->pycalls, sizeof(pycall));
  if (s->c->pycalls.n >= 4096 || (pc = sm__vec_push(&s->c->pycalls)) == NULL)
    return;
  pc->caller = s->in_main && s->func == NULL ? "" : s->func;
  pc->callee = callee;
  sm_buf_init(&kw, 4096);
  sm_buf_addc(&kw, ',');
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    if (is(a, "keyword_argument")) {
      size_t len;
      const char *k = text(s, field(a, "name"), &len);
      sm_buf_add(&kw, k, len);
      sm_buf_addc(&kw, ',');
    } else if (is(a, "list_splat") || is(a, "dictionary_splat")) {
      pc->splat = 1;
    } else if (!is(a, "comment")) {
      pc->npos++;
    }
  }
  pc->kw = sm__strdup(s->c, sm_buf_str(&kw));
  sm_buf_release(&kw);
}

/* Unwraps `X(...).to(device)`, `.cuda()`, `.half()`: the call that builds
 * the object. */
static TSNode builder_call(TSNode n) {
  for (int k = 0; k < 8 && is(n, "call"); k++) {
    TSNode fn = field(n, "function");
    if (is(fn, "attribute") && is(field(fn, "object"), "call"))
      n = field(fn, "object");
    else
      break;
  }
  return n;
}

static int is_model_var(sm__ctx *c, const char *name) {
  for (int i = 0; i < c->model_vars.n; i++)
    if (strcmp(SM__AT(c->model_vars, const char *, i), name) == 0)
      return 1;
  return 0;
}

/* A variable named like a model (model, dlrm_model, model_bert4rec, net,
 * student): what is assigned to it is the model, unless the call wraps a
 * model built before (DDP(model), DMP(module=model), Wrapper(model)). */
static int model_like_name(const char *name) {
  char low[128];
  size_t n = strlen(name);
  if (n >= sizeof(low))
    return 0;
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)name[i]);
  return strstr(low, "model") != NULL || strcmp(low, "net") == 0 ||
         strcmp(low, "network") == 0 || strcmp(low, "student") == 0;
}

static void add_model_var(sm__ctx *c, const char *name) {
  const char **slot;
  if (c->model_vars.sz == 0)
    sm__vec_init(&c->model_vars, sizeof(const char *));
  if (c->model_vars.n < 256 && (slot = sm__vec_push(&c->model_vars)) != NULL)
    *slot = name;
}

/* Parallel and compilation wrappers: never the model itself. */
static int wrapper_class(const char *l) {
  static const char *const w[] = {"DistributedDataParallel",
                                  "DataParallel",
                                  "FullyShardedDataParallel",
                                  "DDP",
                                  "FSDP",
                                  "DMP",
                                  "DistributedModelParallel",
                                  "ModelEma",
                                  "ModelEmaV2",
                                  "ModelEMA",
                                  "EMA",
                                  "ExponentialMovingAverage",
                                  "AveragedModel",
                                  "PeftModel",
                                  "Accelerator",
                                  NULL};
  for (int i = 0; w[i]; i++)
    if (strcmp(l, w[i]) == 0)
      return 1;
  return 0;
}

/* Objects built from a class into any variable (tower = TwoTower(...)):
 * a wrapper built around one of them wraps a model. */
static const char *built_class(sm__ctx *c, const char *var,
                               const char **ev_out) {
  for (int i = c->built.n - 1; i >= 0; i--) {
    const char **t = (const char **)c->built.v + 3 * i;
    if (strcmp(t[0], var) == 0) {
      if (ev_out)
        *ev_out = t[2];
      return t[1];
    }
  }
  return NULL;
}

static void note_built(scan *s, const char *var, TSNode right) {
  TSNode call = builder_call(right);
  char *callee;
  const char *l, **pair;
  if (!is(call, "call") ||
      (callee = dup_text(s, field(call, "function"))) == NULL)
    return;
  l = last_comp(callee);
  /* Configurations, data and optimizers are built too, but are no
   * model. */
  if (!isupper((unsigned char)l[0]) || strstr(l, "Config") ||
      strstr(l, "Args") || strstr(l, "Argument") || strstr(l, "Param") ||
      strstr(l, "Setting") || strstr(l, "Tokenizer") ||
      strstr(l, "Processor") || strstr(l, "Dataset") || strstr(l, "Loader") ||
      strstr(l, "Optim") || strstr(l, "Scheduler") || strstr(l, "Sampler") ||
      strstr(l, "Parser") || strstr(l, "Trainer") || strstr(l, "Logger") ||
      strstr(l, "Path"))
    return;
  if (s->c->built.sz == 0)
    sm__vec_init(&s->c->built, 3 * sizeof(const char *));
  if (s->c->built.n >= 512 || (pair = sm__vec_push(&s->c->built)) == NULL)
    return;
  pair[0] = var;
  pair[1] = l;
  pair[2] = ev(s, call);
}

/* A model class the code builds: preferred when the entry builds it and
 * when no condition guards it, then the first one read; the guard goes
 * with it, so that a branch the options rule out does not
 * name the model. */
static void ctor_cand(scan *s, const char *cls, const char *e) {
  const char *name = sm__printf(s->c, "ctor:%s", cls);
  int w = (s->layer >= SM__L_ENTRY ? 2 : 1) * 16 + (s->guard ? 0 : 8);
  sm__cand_add(s->c, &s->c->models, name, e, w);
  for (int i = 0; name && i < s->c->models.n; i++) {
    sm__cand *k = &SM__AT(s->c->models, sm__cand, i);
    if (strcmp(k->name, name) == 0 && k->weight == w)
      k->guard = s->guard;
  }
}

static void model_assignment(scan *s, const char *name, TSNode right,
                             const char *e) {
  TSNode call = builder_call(right), args;
  char *callee;
  const char *l;
  uint32_t nc;
  int wraps = 0;
  if (!is(call, "call"))
    return;
  callee = dup_text(s, field(call, "function"));
  if (callee == NULL)
    return;
  l = last_comp(callee);
  if (wrapper_class(l)) {
    add_model_var(s->c, name);
    return;
  }
  if (!isupper((unsigned char)l[0]))
    return;
  /* Two-letter helpers (OmegaConf's II, SI; LazyCall's L) build no
   * model. */
  if (strlen(l) <= 2)
    return;
  args = field(call, "arguments");
  nc = ts_node_named_child_count(args);
  for (uint32_t i = 0, npos = 0; i < nc && !wraps; i++) {
    TSNode a = ts_node_named_child(args, i);
    char *t;
    int wrap_slot = 0;
    if (is(a, "keyword_argument")) {
      /* Wrappers take the model as module=, model=, net=... */
      char *k = dup_text(s, field(a, "name"));
      wrap_slot =
          k != NULL && (strcmp(k, "module") == 0 || strcmp(k, "model") == 0 ||
                        strcmp(k, "net") == 0 || strcmp(k, "network") == 0 ||
                        strcmp(k, "base_model") == 0 ||
                        strcmp(k, "inner") == 0 || strcmp(k, "wrapped") == 0);
      a = field(a, "value");
    } else if (!is(a, "comment")) {
      /* ... or as the first positional argument. */
      wrap_slot = npos++ == 0;
    }
    a = builder_call(a);
    if (!is(a, "identifier"))
      continue;
    t = dup_text(s, a);
    wraps = t != NULL && is_model_var(s->c, t);
    if (!wraps && t != NULL && wrap_slot) {
      const char *bev = NULL, *bc = built_class(s->c, t, &bev);
      if (bc != NULL && !wrapper_class(bc)) {
        /* ShardedModel(module=tower): the object inside is the model. */
        ctor_cand(s, bc, bev);
        wraps = 1;
      }
    }
  }
  add_model_var(s->c, name);
  if (wraps)
    return;
  /* The first model the job's code builds names it. */
  ctor_cand(s, l, e);
}

/* Is the code being scanned on the job's path: the entry, the fire.Fire
 * target, or a function the __main__ block runs? */
static int on_path(scan *s) {
  if (s->layer >= SM__L_ENTRY)
    return 1;
  return s->func != NULL && s->c->fire_target != NULL &&
         strcmp(s->func, s->c->fire_target) == 0;
}

/* Is a class value a configuration (dataclass, pydantic model, plain
 * class of values), not a network? */
static int config_class(sm__vnode *cls) {
  const char *name = cls->str ? cls->str : "";
  size_t n = strlen(name);
  char low[128];
  if (n >= sizeof(low))
    return 0;
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)name[i]);
  if (strstr(low, "model") && !strstr(low, "config") && !strstr(low, "args"))
    return 0;
  return strstr(low, "config") || strstr(low, "args") ||
         strstr(low, "arguments") || strstr(low, "cfg") ||
         strstr(low, "settings") || strstr(low, "params") ||
         strstr(low, "hparams") || strstr(low, "options");
}

/* `cfg = TrainConfig()`, `train_config, fsdp_config = A(), B()`: the
 * defaults of configuration objects the job builds, under the name it
 * gives them (the command's --train_config.lr reaches them). */
static void config_object(scan *s, const char *var, TSNode call) {
  char *callee;
  sm__vnode *cls, *obj;
  if (!is(call, "call") || !on_path(s))
    return;
  callee = dup_text(s, field(call, "function"));
  if (callee == NULL || strchr(callee, '(') || strlen(callee) > 128)
    return;
  cls = sm__py_resolve(s->c, s->rel, callee);
  if (cls == NULL || cls->t != SM__T_CLASS) {
    /* cfg = TrainConfig.load(path, overrides): a constructor class
     * method of a configuration class (load, from_yaml, from_dict,
     * parse_args) also starts from the class's defaults. */
    char *dot = strrchr(callee, '.');
    if (dot == NULL || !(strncmp(dot + 1, "load", 4) == 0 ||
                         strncmp(dot + 1, "from_", 5) == 0 ||
                         strncmp(dot + 1, "parse", 5) == 0))
      return;
    *dot = '\0';
    cls = sm__py_resolve(s->c, s->rel, callee);
  }
  if (cls == NULL || cls->t != SM__T_CLASS || !config_class(cls))
    return;
  obj = sm__py_instantiate(s->c, cls);
  if (obj != NULL)
    sm__vt_publish(s->c, obj, var, SM__L_ENTRY);
}

/* Argument parsers built from dataclasses (HfArgumentParser((A, B)),
 * TrlParser, tyro.cli(Config)): the function that builds the parser is
 * run by the evaluator and the classes' defaults are the options'. */
static void dataclass_parser(scan *s, const char *callee, TSNode args) {
  const char *l = last_comp(callee);
  TSNode a0 = first_pos(args);
  if (!on_path(s) || ts_node_is_null(a0) || is(a0, "string"))
    return;
  if (!(strstr(l, "ArgumentParser") || strstr(l, "Parser") ||
        strcmp(callee, "tyro.cli") == 0 || strcmp(l, "parse") == 0))
    return;
  if (strcmp(l, "ArgumentParser") == 0 && strstr(callee, "argparse"))
    return;
  sm__py_dc_instances_clear(s->c);
  if (s->func != NULL)
    sm__py_call_fn(s->c, s->rel, s->func, NULL, 0);
  else
    sm__py_module_ns(s->c, s->rel);
  sm__py_dc_instances_publish(s->c, SM__L_ENTRY);
}

/* A value a factory or architecture function sets (group: the function
 * or registered name; key: the option, "?key" a default under the
 * options, "@alias:f", "@call:f", "@class:C"). */
static void factory_kv(scan *s, const char *group, const char *key, double v,
                       const char *e) {
  sm__kv *kv = sm__vec_push(&s->c->factories);
  if (kv != NULL) {
    kv->group = group;
    kv->key = key;
    kv->num = v;
    kv->ev = e;
  }
}

/* A strategy the code turns on here, with the conditions it is under. */
/* A function whose name says it only evaluates or generates
 * (log_validation, evaluate, run_inference, generate_samples, predict):
 * the precision it casts to for that is not the training run's. */
static int eval_only_fn(const char *f) {
  static const char *const words[] = {"valid",   "eval",    "infer", "sampl",
                                      "predict", "generat", NULL};
  int hit = 0;
  if (f == NULL)
    return 0;
  /* By the words of the name (upsample is no sampling). */
  for (const char *w = f; *w;) {
    size_t n = 0;
    while (w[n] && w[n] != '_')
      n++;
    if (n >= 5 && strncasecmp(w, "train", 5) == 0)
      return 0;
    for (int i = 0; words[i] && !hit; i++)
      hit = n >= strlen(words[i]) &&
            strncasecmp(w, words[i], strlen(words[i])) == 0;
    w += n;
    while (*w == '_')
      w++;
  }
  return hit;
}

static void strategy_use(scan *s, sm__sig sig, const char *e) {
  sm__use *u;
  sm__signal(s->c, sig, e, s->layer);
  if (s->c->uses.sz == 0)
    sm__vec_init(&s->c->uses, sizeof(sm__use));
  if (s->c->uses.n >= 1024 || (u = sm__vec_push(&s->c->uses)) == NULL)
    return;
  u->sig = sig;
  u->ev = e;
  u->layer = s->layer;
  u->guard = s->guard;
}

/* The task a model class's head trains (AutoModelForSequenceClassification,
 * BertForMaskedLM, Wav2Vec2ForCTC): the library's naming convention for
 * heads, read from the class the code builds or loads. */
static void head_class(scan *s, const char *callee, const char *e) {
  static const struct {
    const char *suffix, *task;
  } heads[] = {
      {"ForSequenceClassification", "text_classification"},
      {"ForTokenClassification", "text_classification"},
      {"ForMultipleChoice", "text_classification"},
      {"ForQuestionAnswering", "question_answering"},
      {"ForImageClassification", "image_classification"},
      {"ForObjectDetection", "object_detection"},
      {"ForSemanticSegmentation", "semantic_segmentation"},
      {"ForInstanceSegmentation", "instance_segmentation"},
      {"ForUniversalSegmentation", "panoptic_segmentation"},
      {"ForCTC", "speech_recognition"},
      {"ForSpeechSeq2Seq", "speech_recognition"},
      {"ForAudioClassification", "speech_recognition"},
      {"ForCausalLM", "language_model_pretraining"},
      {"ForMaskedLM", "language_model_pretraining"},
      {"LMHeadModel", "language_model_pretraining"},
  };
  char cls[128];
  const char *dot;
  size_t n;
  snprintf(cls, sizeof(cls), "%s", callee);
  dot = strrchr(cls, '.');
  if (dot != NULL && (strcmp(dot, ".from_pretrained") == 0 ||
                      strcmp(dot, ".from_config") == 0))
    cls[dot - cls] = '\0';
  n = strlen(cls);
  for (size_t i = 0; i < SM_ARRAY_LEN(heads); i++) {
    size_t k = strlen(heads[i].suffix);
    if (n < k || strcmp(cls + n - k, heads[i].suffix) != 0)
      continue;
    if (s->c->head_task == NULL || s->layer > s->c->head_layer) {
      s->c->head_task = heads[i].task;
      s->c->head_ev = e;
      s->c->head_layer = s->layer;
    }
    return;
  }
}

/* One call being visited, for the readers of each call family. */
typedef struct callsite {
  scan *s;
  TSNode n;           /* the call */
  TSNode fn, args;    /* its function and argument list */
  const char *callee; /* the function's text (a.b.c) */
  const char *l;      /* its last component */
  const char *e;      /* evidence of the call, made on first use */
} callsite;

static const char *call_ev(callsite *k) {
  if (k->e == NULL)
    k->e = ev(k->s, k->n);
  return k->e;
}

static void cond_into(scan *s, TSNode n, sm_buf *out, int depth);
static const char *guard_and(scan *s, const char *outer, const char *cond);

/* A precision switched by the call's own `enabled=` argument
 * (GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION), autocast(enabled=
 * args.amp)): used under that condition, as under an if. */
static void use_if_enabled(scan *s, TSNode args, sm__sig sig, const char *e) {
  TSNode en = kwarg_node(s, args, "enabled");
  const char *save = s->guard;
  if (!ts_node_is_null(en) && !is(en, "true")) {
    sm_buf b;
    sm_buf_init(&b, 1024);
    cond_into(s, en, &b, 0);
    if (sm_buf_str(&b)[0] != '\0')
      s->guard = guard_and(s, save, sm__strdup(s->c, sm_buf_str(&b)));
    sm_buf_release(&b);
  }
  strategy_use(s, sig, e);
  s->guard = save;
}

#define EV() call_ev(k)
/* Calls that turn a strategy, a precision or a feature on (DDP, FSDP,
 * autocast, LoRA, device counts, Fire, LightningCLI). */
static void call_strategy(callsite *k, scan *s, TSNode args, const char *callee,
                          const char *l) {
  TSNode fn = k->fn;
  if (strcmp(l, "DistributedDataParallel") == 0 || strcmp(l, "DDP") == 0 ||
      strcmp(l, "DDPStrategy") == 0)
    strategy_use(s, SM__SIG_DDP, EV());
  else if (strcmp(l, "FullyShardedDataParallel") == 0 ||
           strcmp(l, "FSDP") == 0 || strcmp(l, "fully_shard") == 0 ||
           strcmp(l, "FSDPStrategy") == 0)
    /* The module wrapper, its functional form, or the strategy object a
     * trainer framework (Lightning Fabric/Trainer) applies it with. */
    strategy_use(s, SM__SIG_FSDP, EV());
  else if (strcmp(l, "DeepSpeedStrategy") == 0)
    strategy_use(s, SM__SIG_DEEPSPEED, EV());
  else if (strcmp(callee, "deepspeed.initialize") == 0)
    strategy_use(s, SM__SIG_DEEPSPEED, EV());
  else if (strcmp(l, "DataParallel") == 0)
    strategy_use(s, SM__SIG_DP, EV());
  else if ((strcmp(l, "replicate") == 0 || strcmp(l, "parallel_apply") == 0) &&
           strstr(callee, "parallel") != NULL)
    /* DataParallel's own parts used by hand (replicate the module over
     * the devices, apply in parallel): one process over the GPUs. */
    strategy_use(s, SM__SIG_DP, EV());
  else if (strcmp(l, "spawn") == 0 &&
           (strstr(callee, "mp.") || strstr(callee, "multiprocessing")))
    /* torch.multiprocessing.spawn(worker, nprocs=...): the script starts
     * one process per GPU itself. */
    strategy_use(s, SM__SIG_SPAWN, EV());
  else if (strcmp(l, "autocast") == 0) {
    val dt = kwarg(s, args, "dtype");
    val en = kwarg(s, args, "enabled");
    if (!(en.kind == SM__V_BOOL && en.num == 0) && !eval_only_fn(s->func)) {
      if (dt.kind == SM__V_STR && strstr(dt.str, "bfloat16"))
        use_if_enabled(s, args, SM__SIG_BF16, EV());
      else
        use_if_enabled(s, args, SM__SIG_AMP, EV());
    }
  } else if (strcmp(l, "GradScaler") == 0 ||
             strcmp(callee, "amp.initialize") == 0) {
    val en = kwarg(s, args, "enabled");
    if (!(en.kind == SM__V_BOOL && en.num == 0))
      use_if_enabled(s, args, SM__SIG_AMP, EV());
  } else if (strcmp(l, "MixedPrecision") == 0 ||
             strcmp(l, "MixedPrecisionPolicy") == 0) {
    /* FSDP's mixed precision: the dtype the sharded parameters compute
     * in (param_dtype), whatever the dtype they are kept in. */
    val pd = kwarg(s, args, "param_dtype");
    const char *t = pd.kind == SM__V_STR || pd.kind == SM__V_REF ? pd.str : "";
    if (strstr(t, "bfloat16") || strstr(t, "bf16"))
      strategy_use(s, SM__SIG_BF16, EV());
    else if (strstr(t, "float16") || strstr(t, "fp16") || strstr(t, "half"))
      strategy_use(s, SM__SIG_AMP, EV());
  } else if (strcmp(l, "half") == 0 && is(fn, "attribute") &&
             !eval_only_fn(s->func)) {
    strategy_use(s, SM__SIG_FP16, EV());
  } else if (strcmp(l, "LoraConfig") == 0 || strcmp(l, "get_peft_model") == 0 ||
             strcmp(l, "mark_only_lora_as_trainable") == 0) {
    /* PEFT's adapters, or loralib's (everything frozen but the low-rank
     * matrices), under the conditions the code applies them. */
    strategy_use(s, SM__SIG_LORA, EV());
  } else if (strcmp(l, "device_count") == 0 ||
             strcmp(l, "get_num_devices") == 0 ||
             strcmp(l, "get_num_gpus") == 0 ||
             strcmp(l, "local_device_count") == 0) {
    sm__signal(s->c, SM__SIG_DEVICE_COUNT, EV(), s->layer);
  } else if (strcmp(l, "Fire") == 0) {
    TSNode a = first_pos(args);
    if (!ts_node_is_null(a) && is(a, "identifier"))
      s->c->fire_target = dup_text(s, a);
  } else if (strcmp(l, "LightningCLI") == 0) {
    sm__signal(s->c, SM__SIG_LIGHTNING, EV(), s->layer);
  }
}

/* A DeepSpeed launcher, or a CLI that re-runs itself under a launcher. */
static void call_relaunch(callsite *k, scan *s, TSNode args, const char *callee,
                          const char *l) {
  if (strstr(callee, "deepspeed") != NULL &&
      (strstr(callee, "launcher") != NULL || strstr(callee, "runner") != NULL))
    sm__signal(s->c, SM__SIG_DS_LAUNCHER, EV(), s->layer);
  if ((strncmp(callee, "subprocess.", 11) == 0 ||
       strncmp(callee, "os.", 3) == 0 || strcmp(callee, "run") == 0 ||
       strcmp(callee, "Popen") == 0) &&
      (strcmp(l, "run") == 0 || strcmp(l, "Popen") == 0 ||
       strcmp(l, "call") == 0 || strcmp(l, "check_call") == 0 ||
       strcmp(l, "system") == 0 || strncmp(l, "exec", 4) == 0)) {
    /* A CLI that re-runs itself under a launcher (subprocess.run(
     * ["torchrun", "--nproc_per_node", n, __file__, ...])): one process
     * per GPU. */
    size_t al;
    const char *at = text(s, args, &al);
    if (al < 8192 && (memmem(at, al, "torchrun", 8) != NULL ||
                      memmem(at, al, "torch.distributed.run", 21) != NULL ||
                      memmem(at, al, "torch.distributed.launch", 24) != NULL))
      strategy_use(s, SM__SIG_RELAUNCH, EV());
  }
}

/* Keywords of a model load: device_map="auto", quantised loads, bf16
 * dtypes. */
static void call_model_load(callsite *k, scan *s, TSNode args) {
  val dm = kwarg(s, args, "device_map");
  val q8 = kwarg(s, args, "load_in_8bit");
  val q4 = kwarg(s, args, "load_in_4bit");
  val td = kwarg(s, args, "torch_dtype");
  val cd = kwarg(s, args, "bnb_4bit_compute_dtype");
  if (dm.kind == SM__V_REF) {
    /* device_map = "auto" set earlier in the function. */
    for (int i = s->c->params.n - 1; i >= 0; i--) {
      const sm__param *p = &SM__AT(s->c->params, sm__param, i);
      if (p->kind == SM__V_STR && strcmp(p->leaf, dm.str) == 0) {
        dm.kind = SM__V_STR;
        dm.str = p->str;
        break;
      }
    }
  }
  if (dm.kind == SM__V_STR && strcmp(dm.str, "auto") == 0)
    sm__signal(s->c, SM__SIG_DEVICE_MAP, EV(), s->layer);
  if ((q8.kind == SM__V_BOOL && q8.num) || (q4.kind == SM__V_BOOL && q4.num) ||
      q8.kind == SM__V_REF || q4.kind == SM__V_REF)
    sm__signal(s->c, SM__SIG_QUANT, EV(), s->layer);
  if ((td.kind == SM__V_STR && strstr(td.str, "bfloat16")) ||
      (cd.kind == SM__V_STR && strstr(cd.str, "bfloat16")))
    sm__signal(s->c, SM__SIG_BF16, EV(), s->layer);
}

/* A class that is a dataset of the field by its name (CIFAR10, MNIST,
 * ImageNet, CIFAR100DataModule: the alias table knows it) or by the
 * module it comes from (torchvision.datasets.X, datasets.X), unless it
 * names only a layout (ImageFolder, DatasetFolder, FakeData). */
static const char *dataset_class(scan *s, const char *callee, const char *l) {
  static const char *const layouts[] = {
      "ImageFolder", "DatasetFolder", "FakeData", "VisionDataset",
      "Dataset",     "DataLoader",    "Subset",   NULL};
  char stem[96];
  size_t n = strlen(l);
  if (n >= sizeof(stem))
    return NULL;
  for (int i = 0; layouts[i]; i++)
    if (strcmp(l, layouts[i]) == 0)
      return NULL;
  memcpy(stem, l, n + 1);
  if (n > 10 && strcmp(stem + n - 10, "DataModule") == 0)
    stem[n - 10] = '\0';
  else if (n > 7 && strcmp(stem + n - 7, "Dataset") == 0)
    return NULL; /* the *Dataset rule reads these */
  if ((strstr(callee, "datasets.") != NULL &&
       strncmp(callee, "datasets.load", 13) != 0) ||
      (strlen(stem) >= 3 && sm__known_dataset(s->c, stem, NULL, NULL) != NULL))
    return sm__strdup(s->c, stem);
  return NULL;
}

/* Is a string literal prose (words apart, as in a help text or a log
 * message) rather than a name? */
static int prose(const char *x, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (x[i] == ' ' || x[i] == '\t' || x[i] == '\n')
      return 1;
  return 0;
}

/* Are all the words of name[0..n) (split at CamelCase humps, an acronym
 * one word: PackedJSON is packed + json, HFTextDataset hf + text; '_'
 * and digits dropped) in the set? */
static int all_words_generic(const char *name, size_t n,
                             const char *const *set) {
  char w[64];
  size_t i = 0;
  int words = 0;
  while (i < n) {
    size_t k = 0;
    while (i < n && (name[i] == '_' || isdigit((unsigned char)name[i])))
      i++;
    if (i >= n)
      break;
    if (isupper((unsigned char)name[i]) && i + 1 < n &&
        isupper((unsigned char)name[i + 1])) {
      /* An acronym: the capitals up to the one that starts a word. */
      do
        w[k++] = (char)tolower((unsigned char)name[i++]);
      while (i < n && k < sizeof(w) - 1 && isupper((unsigned char)name[i]) &&
             !(i + 1 < n && islower((unsigned char)name[i + 1])));
    } else {
      do
        w[k++] = (char)tolower((unsigned char)name[i++]);
      while (i < n && k < sizeof(w) - 1 && islower((unsigned char)name[i]));
    }
    w[k] = '\0';
    {
      int hit = 0;
      for (int j = 0; set[j] && !hit; j++)
        hit = strcmp(w, set[j]) == 0;
      if (!hit)
        return 0;
    }
    words++;
  }
  return words > 0;
}

/* Does a dataset class name (the stem before "Dataset") only name a
 * format or a method, every CamelCase word of it generic (CharDataset,
 * PackedJSONDataset, BasicImageDataset)? */
int sm__dataset_class_generic(const char *stem, size_t sl) {
  static const char *const generic[] = {
      "char",         "text",        "token",       "tokens",     "image",
      "images",       "json",        "jsonl",       "csv",        "folder",
      "imagefolder",  "custom",      "my",          "base",       "lm",
      "seq",          "sequence",    "audio",       "video",      "file",
      "raw",          "simple",      "train",       "training",   "eval",
      "test",         "val",         "data",        "supervised", "instruction",
      "conversation", "pretrain",    "finetune",    "packed",     "concat",
      "hf",           "huggingface", "mapped",      "streaming",  "webdataset",
      "lazy",         "memory",      "fake",        "dummy",      "generic",
      "combined",     "mixed",       "interleaved", "weighted",   "merged",
      "multi",        "sft",         "dpo",         "chat",       "preference",
      "lmdb",         "parquet",     "arrow",       "tfrecord",   "mmap",
      "indexed",      "basic",       "paired",      "standard",   NULL};
  char low[128];
  if (sl == 0 || sl >= sizeof(low))
    return 1; /* nothing, or no name a table would know */
  for (size_t i = 0; i < sl; i++)
    low[i] = (char)tolower((unsigned char)stem[i]);
  low[sl] = '\0';
  for (int i = 0; generic[i]; i++)
    if (strcmp(low, generic[i]) == 0)
      return 1;
  return all_words_generic(stem, sl, generic);
}

/* Calls that name the model or the data (from_pretrained, from_config,
 * a *Dataset class, load_dataset, create_model, model factories). */
static void call_model_data(callsite *k, scan *s, TSNode args,
                            const char *callee, const char *l) {
  const char *dsname;
  if (strcmp(l, "from_pretrained") == 0) {
    TSNode a = first_pos(args);
    int model_class = strstr(callee, "Tokenizer") == NULL &&
                      strstr(callee, "Processor") == NULL &&
                      strstr(callee, "Config") == NULL &&
                      strstr(callee, "FeatureExtractor") == NULL;
    if (model_class) {
      sm__signal(s->c, SM__SIG_FROM_PRETRAINED, EV(), s->layer);
      if (strstr(callee, "CausalLM") != NULL)
        sm__signal(s->c, SM__SIG_CAUSAL_LM, EV(), s->layer);
      if (!ts_node_is_null(a)) {
        val v = eval(s, a, 0);
        if (v.kind == SM__V_STR)
          sm__cand_add(s->c, &s->c->models, v.str, EV(), 3 + s->layer);
        else if (v.kind == SM__V_REF)
          sm__param_str(s->c, "__model_ref", v.str, SM__V_REF, s->layer, EV());
      }
    }
  } else if (strcmp(l, "from_config") == 0) {
    sm__signal(s->c, SM__SIG_FROM_SCRATCH, EV(), s->layer);
    if (strstr(callee, "CausalLM") != NULL)
      sm__signal(s->c, SM__SIG_CAUSAL_LM, EV(), s->layer);
  } else if (s->layer >= SM__L_ENTRY && strlen(l) > 7 &&
             strcmp(l + strlen(l) - 7, "Dataset") == 0 &&
             isupper((unsigned char)l[0]) && strcmp(l, "IterableDataset") &&
             strcmp(l, "TensorDataset") && strcmp(l, "ConcatDataset") &&
             strcmp(l, "ChainDataset") && strcmp(l, "StackDataset") &&
             strcmp(l, "MapDataset")) {
    /* A dataset class the job builds names its data (RandomRecDataset,
     * AdditionDataset), unless it only names a format (CharDataset,
     * TextDataset, ImageFolderDataset). */
    size_t sl = strlen(l) - 7;
    /* A class built from other datasets (datasets=[...]) mixes them;
     * it names none. */
    int gen = sm__dataset_class_generic(l, sl) ||
              kwarg(s, args, "datasets").kind != -1;
    if (!gen)
      sm__cand_add(s->c, &s->c->datasets, sm__strndup(s->c, l, sl), EV(), 1);
  } else if (s->layer >= SM__L_ENTRY && strncmp(callee, "tfds.", 5) == 0 &&
             (strcmp(l, "load") == 0 || strcmp(l, "builder") == 0 ||
              strcmp(l, "data_source") == 0)) {
    /* tfds.load('imagenet2012'), tfds.builder('cifar10'). */
    TSNode a = first_pos(args);
    val v = ts_node_is_null(a) ? kwarg(s, args, "name") : eval(s, a, 0);
    if (v.kind == SM__V_STR)
      sm__cand_add(s->c, &s->c->datasets, v.str, EV(), 3 + s->layer);
  } else if (s->layer >= SM__L_ENTRY && isupper((unsigned char)l[0]) &&
             (dsname = dataset_class(s, callee, l)) != NULL) {
    /* torchvision.datasets.CIFAR10(root, train=True), a datamodule of a
     * known dataset (CIFAR10DataModule): the class names the data. */
    sm__cand_add(s->c, &s->c->datasets, dsname, EV(), 2 + s->layer);
  } else if (strcmp(l, "load_dataset") == 0) {
    TSNode a = first_pos(args);
    if (ts_node_is_null(a))
      a = kwarg_node(s, args, "path");
    if (!ts_node_is_null(a)) {
      val v = eval(s, a, 0), sub = {-1, 0, NULL, 0};
      /* load_dataset("glue", "mrpc"): the configuration names the
       * subset (its second positional argument, or name=). */
      uint32_t ac = ts_node_named_child_count(args), pos = 0;
      for (uint32_t i = 0; i < ac; i++) {
        TSNode k = ts_node_named_child(args, i);
        if (is(k, "keyword_argument") || is(k, "comment"))
          continue;
        if (pos++ == 1)
          sub = eval(s, k, 0);
      }
      if (sub.kind < 0)
        sub = kwarg(s, args, "name");
      if (v.kind == SM__V_STR && sub.kind == SM__V_STR && sub.str[0] &&
          strlen(sub.str) < 48 && v.str[0] != '/' && v.str[0] != '.' &&
          (!strchr(v.str, '/') || strchr(v.str, '/') == strrchr(v.str, '/')) &&
          !strchr(sub.str, '/') && strcmp(sub.str, "default") != 0)
        /* A subset the alias table knows by itself (mrpc) is that
         * dataset; otherwise the pair names it. */
        sm__cand_add(s->c, &s->c->datasets,
                     sm__known_dataset(s->c, sub.str, NULL, NULL)
                         ? sub.str
                         : sm__printf(s->c, "%s-%s", v.str, sub.str),
                     EV(), 3 + s->layer);
      else if (v.kind == SM__V_STR)
        sm__cand_add(s->c, &s->c->datasets, v.str, EV(), 3 + s->layer);
    }
  } else if (strcmp(l, "create_model") == 0) {
    TSNode a = first_pos(args);
    if (!ts_node_is_null(a)) {
      val v = eval(s, a, 0);
      if (v.kind == SM__V_STR)
        sm__cand_add(s->c, &s->c->models, v.str, EV(), 3 + s->layer);
    }
  } else if (model_fn_name(l) && strchr(callee, '.') != NULL &&
             (strstr(callee, "models") != NULL ||
              strstr(callee, "timm") != NULL)) {
    sm__cand_add(s->c, &s->c->models, l, EV(), 2 + s->layer);
  } else if (strstr(l, "UNet") != NULL && isupper((unsigned char)l[0])) {
    sm__cand_add(s->c, &s->c->models, "unet", EV(), 1);
  }
}

/* Calls whose keywords are settings (Trainer(...), *Config(...), dict):
 * their keywords become params. */
static void call_config(callsite *k, scan *s, TSNode args, const char *callee,
                        const char *l) {
  TSNode n = k->n;
  if (config_callee(callee)) {
    if (strcmp(l, "Trainer") == 0 || strcmp(l, "SFTTrainer") == 0 ||
        strcmp(l, "Seq2SeqTrainer") == 0) {
      if (strchr(callee, '.') != NULL &&
          (strncmp(callee, "pl.", 3) == 0 || strncmp(callee, "L.", 2) == 0 ||
           strstr(callee, "lightning")))
        sm__signal(s->c, SM__SIG_LIGHTNING, EV(), s->layer);
      else
        sm__signal(s->c, SM__SIG_HF_TRAINER, EV(), s->layer);
    }
    if (strstr(l, "Config") != NULL && strcmp(l, "LoraConfig") != 0 &&
        strcmp(l, "BitsAndBytesConfig") != 0 &&
        strcmp(l, "DeepSpeedConfig") != 0)
      sm__signal(s->c, SM__SIG_FROM_SCRATCH, EV(), SM__L_CODE);
    /* Optimizer keywords are often placeholders (lr=0 set by a
     * scheduler): they sit under the declared defaults.  The entries of
     * a preset table ({'gpt2': dict(n_layer=12)}) are presets, not
     * values. */
    if (!(strcmp(l, "dict") == 0 && is(ts_node_parent(n), "pair")))
      kwargs_to_params(s, args, optimizer_callee(l) ? SM__L_CODE : s->layer, 0);
    if (strcmp(l, "dict") == 0 && s->func != NULL && s->cls == NULL)
      /* def llama_7b(): return dict(dim=4096, n_layers=32): the values a
       * size function gives, applied when a name selects it. */
      kwargs_to_params(s, args, s->layer, 1);
  } else if (s->func != NULL) {
    kwargs_to_params(s, args, s->layer, 1);
  }
}

#undef EV
#define EV() call_ev(&k)

static void batch_division(scan *s, const char *target, const char *rpn,
                           const char *e);

static void visit_call(scan *s, TSNode n) {
  TSNode fn = field(n, "function");
  TSNode args = field(n, "arguments");
  char *callee = dup_text(s, fn);
  const char *l;
  callsite k;

  if (callee == NULL || !is(args, "argument_list"))
    return;
  l = last_comp(callee);
  k.s = s;
  k.n = n;
  k.fn = fn;
  k.args = args;
  k.callee = callee;
  k.l = l;
  k.e = NULL;
  sm__words_at(s->c, callee, strlen(callee), s->rel, line_of(n), s->wweight);
  if (s->config_only)
    return;
  if (s->layer >= SM__L_ENTRY && is(fn, "identifier") &&
      (s->func != NULL || s->in_main))
    record_call(s, callee, args);
  if (strcmp(l, "add_argument") == 0) {
    add_argument(s, args, n);
    return;
  }
  if (strcmp(l, "spawn") != 0) {
    /* Config(distributed_world_size=n_visible): a process count set to
     * the visible devices (a spawn call is a strategy use of its own). */
    uint32_t ac = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < ac; i++) {
      TSNode a = ts_node_named_child(args, i);
      if (is(a, "keyword_argument")) {
        char *kn = dup_text(s, field(a, "name"));
        TSNode kv = field(a, "value");
        all_gpus_default(s, kn, kv);
        /* DataLoader(batch_size=int(cfg.TRAIN.BATCH_SIZE / cfg.NUM_GPUS)):
         * the division of a total batch written as an argument. */
        if (kn && strstr(kn, "batch") &&
            (is(kv, "binary_operator") || is(kv, "call"))) {
          val dv = rpn_value(s, kv, 0);
          if (dv.kind == SM__V_EXPR)
            batch_division(s, kn, dv.str, EV());
        }
      }
    }
  }
  dataclass_parser(s, callee, args);
  if (strcmp(l, "set_defaults") == 0) {
    kwargs_to_params(s, args, s->layer, 0);
    return;
  }
  call_strategy(&k, s, args, callee, l);
  call_relaunch(&k, s, args, callee, l);
  call_model_load(&k, s, args);
  if (on_path(s) && isupper((unsigned char)callee[0]) && !s->guard)
    head_class(s, callee, EV());
  call_model_data(&k, s, args, callee, l);
  call_config(&k, s, args, callee, l);
  if (s->func != NULL && s->cls == NULL && is(fn, "identifier") &&
      ts_node_named_child_count(args) >= 1 && strcmp(callee, s->func) != 0 &&
      islower((unsigned char)callee[0]))
    /* An architecture function finishing with base_architecture(args):
     * the defaults of the one it calls apply under its own. */
    factory_kv(s, s->func, sm__printf(s->c, "@call:%s", callee), 0, EV());
}
#undef EV

/* ==== Statements ==== */

/* Cheap test before compiling an expression: does its text name a
 * learning rate and a batch size or world size? */
static int mentions_lr(scan *s, TSNode n) {
  size_t len;
  const char *t = text(s, n, &len);
  int lr = 0, other = 0;
  for (size_t i = 0; i + 1 < len; i++) {
    char a = (char)(t[i] | 0x20), b = (char)(t[i + 1] | 0x20);
    if (a == 'l' && b == 'r')
      lr = 1;
    else if ((a == 'b' && b == 'a' && i + 4 < len &&
              strncasecmp(t + i, "batch", 5) == 0) ||
             (a == 'w' && b == 'o' && i + 4 < len &&
              strncasecmp(t + i, "world", 5) == 0))
      other = 1;
  }
  return lr && other;
}

/* The numeric keyword arguments of a preset's call (dict(n_layer=32,
 * ...), Config(...)) as presets of GROUP, seen under GUARD. */
static void preset_kwargs(scan *s, TSNode args, const char *group,
                          const char *guard) {
  uint32_t ac = ts_node_named_child_count(args);
  for (uint32_t j = 0; j < ac; j++) {
    TSNode a = ts_node_named_child(args, j);
    val av;
    sm__kv *p;
    if (!is(a, "keyword_argument"))
      continue;
    av = eval(s, field(a, "value"), 0);
    if (av.kind != SM__V_NUM || (p = sm__vec_push(&s->c->presets)) == NULL)
      continue;
    p->group = group;
    p->key = dup_text(s, field(a, "name"));
    p->num = av.num;
    p->ev = ev(s, a);
    p->guard = guard;
  }
}

/* A table of named presets as a list (configs = [dict(name="7b",
 * n_layer=32, ...), Config(name="tiny", ...), {"name": ...}]): each
 * element's numbers under its name. */
static void visit_named_list(scan *s, TSNode n) {
  uint32_t nc = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < nc && i < 4096; i++) {
    TSNode el = ts_node_named_child(n, i);
    const char *name = NULL;
    uint32_t ac;
    TSNode args;
    if (is(el, "call")) {
      args = field(el, "arguments");
      val nm = kwarg(s, args, "name");
      if (nm.kind == SM__V_STR)
        name = nm.str;
      if (name != NULL)
        preset_kwargs(s, args, name, NULL);
    } else if (is(el, "dictionary")) {
      ac = ts_node_named_child_count(el);
      for (uint32_t j = 0; j < ac && name == NULL; j++) {
        TSNode pr = ts_node_named_child(el, j);
        val k, v;
        if (!is(pr, "pair"))
          continue;
        k = eval(s, field(pr, "key"), 0);
        v = eval(s, field(pr, "value"), 0);
        if (k.kind == SM__V_STR && strcmp(k.str, "name") == 0 &&
            v.kind == SM__V_STR)
          name = v.str;
      }
      for (uint32_t j = 0; name && j < ac; j++) {
        TSNode pr = ts_node_named_child(el, j);
        val k, v;
        sm__kv *p;
        if (!is(pr, "pair"))
          continue;
        k = eval(s, field(pr, "key"), 0);
        v = eval(s, field(pr, "value"), 0);
        if (k.kind != SM__V_STR || v.kind != SM__V_NUM ||
            (p = sm__vec_push(&s->c->presets)) == NULL)
          continue;
        p->group = name;
        p->key = k.str;
        p->num = v.num;
        p->ev = ev(s, pr);
      }
    }
  }
}

/* A dictionary literal of presets: {"name": dict(k=v, ...), ...}. */
static void visit_dict(scan *s, TSNode n) {
  uint32_t nc = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode pr = ts_node_named_child(n, i);
    TSNode k, v;
    val kv;
    if (!is(pr, "pair"))
      continue;
    k = field(pr, "key");
    v = field(pr, "value");
    kv = eval(s, k, 0);
    if (kv.kind == SM__V_STR && is(v, "identifier") && s->func == NULL &&
        s->cls == NULL && !s->config_only) {
      /* {"8B": _8b, "small": small_config}: a table of named sizes whose
       * entries are the functions that build them. */
      sm__kv *f = sm__vec_push(&s->c->factories);
      if (f != NULL) {
        f->group = kv.str;
        f->key = sm__printf(s->c, "@alias:%s", dup_text(s, v));
        f->ev = ev(s, pr);
      }
      continue;
    }
    if (kv.kind != SM__V_STR || !is(v, "call"))
      continue;
    {
      char *callee = dup_text(s, field(v, "function"));
      if (callee == NULL || strcmp(callee, "dict") != 0)
        continue;
      preset_kwargs(s, field(v, "arguments"), kv.str, s->guard);
    }
  }
}

/* Does a name stand for the data-parallel world (world_size,
 * num_replicas, dp_size, data_parallel_size, num_processes)? */
static int world_word(const char *t) {
  static const char *const words[] = {
      "world",   "num_replicas",       "num_gpus",      "ngpus", "num_devices",
      "dp_size", "data_parallel_size", "num_processes", NULL};
  for (int i = 0; words[i]; i++)
    if (strstr(t, words[i]) != NULL)
      return 1;
  return 0;
}

/* `per_device = batch_size // world_size`: the batch option is the total
 * over the ranks, and the code divides it (YOLOX, Lightning datamodules
 * that split by trainer.world_size). */
static void batch_division(scan *s, const char *target, const char *rpn,
                           const char *e) {
  char tok[128];
  const char *p = rpn;
  int first_batch = -1, world = 0, div = 0, k = 0;
  if (target == NULL || strcasestr(target, "batch") == NULL)
    return;
  while (*p) {
    if ((p = rpn_token(p, tok, sizeof(tok))) == NULL)
      break;
    if (k == 0)
      first_batch = strstr(tok, "batch") != NULL;
    if (world_word(tok))
      world = 1;
    if (tok[0] == '/' && world)
      div = 1;
    k++;
  }
  if (first_batch == 1 && world && div)
    sm__signal(s->c, SM__SIG_BATCH_DIV, e, s->layer);
}

/* Locals of imported code worth keeping: the ones derived fields use. */
static int derived_name(const char *name) {
  static const char *const part[] = {"batch", "accum", "lr",     "world",
                                     "iters", "steps", "epochs", NULL};
  for (int i = 0; part[i]; i++)
    if (strcasestr(name, part[i]) != NULL)
      return 1;
  return 0;
}

/* Members of a dictionary literal with string keys into tree t (nested
 * dictionaries as maps); returns how many are literal constants. */
static int dict_tree(scan *s, TSNode d, sm__vnode *t, int depth) {
  uint32_t nc = ts_node_named_child_count(d);
  int lit = 0;
  if (depth > 8)
    return 0;
  for (uint32_t i = 0; i < nc && i < 512; i++) {
    TSNode pr = ts_node_named_child(d, i), v;
    val k, x;
    sm__vnode *node = NULL;
    if (!is(pr, "pair"))
      continue;
    k = eval(s, field(pr, "key"), 0);
    v = field(pr, "value");
    if (k.kind != SM__V_STR || k.str[0] == '\0' || strlen(k.str) > 80 ||
        strchr(k.str, '.') || strchr(k.str, ' '))
      continue;
    if (is(v, "dictionary")) {
      node = sm__vt_new(s->c, SM__T_MAP, s->rel, line_of(v));
      if (node != NULL)
        lit += dict_tree(s, v, node, depth + 1);
    } else {
      x = eval(s, v, 0);
      switch (x.kind) {
      case SM__V_NUM:
      case SM__V_BOOL:
        node = sm__vt_numv(s->c, x.kind == SM__V_NUM ? SM__T_NUM : SM__T_BOOL,
                           x.num, s->rel, line_of(v));
        lit++;
        break;
      case SM__V_STR:
        node = sm__vt_strv(s->c, x.str, s->rel, line_of(v));
        if (node != NULL)
          node->flags |= SM__VF_QUOTED;
        lit++;
        break;
      case SM__V_NULL:
        node = sm__vt_new(s->c, SM__T_NULL, s->rel, line_of(v));
        break;
      case SM__V_REF:
        node = sm__vt_new(s->c, SM__T_REF, s->rel, line_of(v));
        if (node != NULL)
          node->str = x.str;
        break;
      case SM__V_EXPR:
        node = sm__vt_new(s->c, SM__T_EXPR, s->rel, line_of(v));
        if (node != NULL)
          node->str = x.str;
        break;
      default:
        break;
      }
    }
    if (node != NULL)
      sm__vt_put(s->c, t, k.str, node);
  }
  return lit;
}

/* A dictionary of hyper-parameters written in the job's code (`config =
 * {"lr": 2e-5, "num_epochs": 3}` handed to the training function, a
 * DeepSpeed config dict returned to deepspeed.initialize): its constant
 * members are the job's values.  Only the entry's code, and only
 * dictionaries with at least two constants (a log record of variables
 * is no configuration). */
static void code_dict(scan *s, const char *prefix, TSNode d) {
  sm__vnode *t;
  if (s->layer < SM__L_ENTRY || s->config_only || !is(d, "dictionary"))
    return;
  t = sm__vt_new(s->c, SM__T_MAP, s->rel, line_of(d));
  if (t == NULL || dict_tree(s, d, t, 0) < 2)
    return;
  t = sm__ds_config(s->c, t);
  sm__vt_publish(s->c, t, prefix, SM__L_ENTRY);
}

/* An option for the number of processes whose default is the number of
 * visible devices (world_size = max(1, torch.cuda.device_count())): when
 * the job does not set it, the program starts one process per visible
 * GPU, however many the node has. */
static void all_gpus_default(scan *s, const char *name, TSNode value) {
  size_t len;
  const char *t;
  if (name == NULL || ts_node_is_null(value) || s->config_only ||
      s->guard != NULL ||
      !(sm__key_role(name, "gpus") || strstr(name, "world_size") ||
        strstr(name, "nproc") || strstr(name, "num_processes")))
    return;
  t = text(s, value, &len);
  if (is(value, "identifier"))
    for (int i = 0; i < s->ndevvars; i++)
      if (strlen(s->devvars[i]) == len && strncmp(s->devvars[i], t, len) == 0)
        t = "device_count", len = 12;
  if (len < 4096 && memmem(t, len, "device_count", 12) != NULL)
    sm__param_str(s->c, "__all_gpus_option", name, SM__V_STR, SM__L_CODE,
                  ev(s, value));
}

/* x //= world_size, batch /= num_replicas, lr *= k: divisions over the
 * ranks and rescaled learning rates. */
static void assign_augmented(scan *s, TSNode n, TSNode left, TSNode right,
                             const char *e) {
  /* x //= world_size: accumulation divided over ranks. */
  char *lt = dup_text(s, left), *rt = dup_text(s, right);
  size_t len;
  const char *op = text(s, field(n, "operator"), &len);
  if (lt && rt && strstr(lt, "accum") && strstr(rt, "world") && op[0] == '/')
    sm__signal(s->c, SM__SIG_ACCUM_DIV, e, s->layer);
  if (lt && rt && strstr(lt, "batch") && op[0] == '/' && world_word(rt))
    sm__signal(s->c, SM__SIG_BATCH_DIV, e, s->layer);
  if (lt && rt && s->lr_var && strcmp(lt, s->lr_var) == 0 && op[0] == '*') {
    const char *r = ref_name(s, right);
    if (r)
      sm__param_str(s->c, "__lr_rescale2", sm__printf(s->c, "@prev %s *", r),
                    SM__V_EXPR, s->layer, e);
  }
}

/* a, b = x, y: each name its value; model, criterion = build(args): a
 * model built elsewhere. */
static void assign_tuple(scan *s, TSNode left, TSNode right) {
  if ((is(left, "pattern_list") || is(left, "tuple_pattern")) &&
      (is(right, "expression_list") || is(right, "tuple")) &&
      ts_node_named_child_count(left) == ts_node_named_child_count(right)) {
    uint32_t nc = ts_node_named_child_count(left);
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(left, i);
      char *nm = is(k, "identifier") ? dup_text(s, k) : NULL;
      if (nm != NULL)
        config_object(s, nm, ts_node_named_child(right, i));
    }
  }
  if (is(left, "pattern_list") || is(left, "tuple_pattern")) {
    /* model, criterion = build_model(args): a model built elsewhere. */
    uint32_t nc = ts_node_named_child_count(left);
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(left, i);
      char *nm = is(k, "identifier") ? dup_text(s, k) : NULL;
      if (nm != NULL && model_like_name(nm))
        add_model_var(s->c, nm);
    }
  }
}

/* name = EXPR: an accumulation divided over the ranks, a batch division,
 * a learning rate rescaled (lr = base_lr * batch / 256, lr = lr * k). */
static void assign_expr(scan *s, const char *name, const char *expr,
                        const char *e) {
  /* x = x // world_size */
  if (strstr(name, "accum") && strstr(expr, "world") && strstr(expr, "/"))
    sm__signal(s->c, SM__SIG_ACCUM_DIV, e, s->layer);
  batch_division(s, name, expr, e);
  if (lr_rescale_expr(expr)) {
    sm__param_str(s->c, "__lr_rescale", expr, SM__V_EXPR, s->layer, e);
    s->lr_var = name;
  } else if (s->lr_var && strcmp(name, s->lr_var) == 0) {
    /* lr = lr * accumulation_steps */
    const char *r = expr;
    char *tmp = sm__strdup(s->c, r);
    char *hit = tmp ? strstr(tmp, name) : NULL;
    if (hit != NULL) {
      char lname[128];
      snprintf(lname, sizeof(lname), "%s", name);
      for (char *q = lname; *q; q++)
        *q = (char)tolower((unsigned char)*q);
      hit = strstr(tmp, lname);
    }
    if (hit != NULL)
      sm__param_str(s->c, "__lr_rescale2",
                    sm__printf(s->c, "%.*s@prev%s", (int)(hit - tmp), tmp,
                               hit + strlen(name)),
                    SM__V_EXPR, s->layer, e);
  }
}

/* Publishes name = v into the store at the layer its place in the code
 * gives it (a config file's top level, a config-class field, the entry's
 * module, a local of the entry, a derived batch or a condition).  Returns
 * 0 when the file is read as config only (nothing more to do). */
static int publish_name(scan *s, const char *name, TSNode right, val v,
                        const char *e) {
  if (s->func != NULL && s->cls == NULL && !s->config_only &&
      v.kind == SM__V_NUM && is(right, "integer"))
    /* def _8b(): dim = 4096; n_layers = 32; ...: the sizes a size
     * function sets, applied when a name selects the function. */
    factory_kv(s, s->func, name, v.num, e);
  if (s->config_only) {
    if (s->func == NULL && s->cls == NULL && v.kind >= 0)
      put(s, name, v, s->layer, e);
    return 0;
  }
  if (s->cls != NULL && s->func == NULL) {
    /* A dataclass / config-class field. */
    put(s, name, v, s->layer, e);
  } else if (s->func == NULL) {
    if (s->layer >= SM__L_ENTRY)
      put(s, name, v, s->layer, e);
  } else if (s->layer >= SM__L_ENTRY) {
    /* Locals of the entry sit under its declared defaults. */
    if (v.kind == SM__V_EXPR || v.kind == SM__V_NUM || v.kind == SM__V_STR ||
        v.kind == SM__V_REF)
      put(s, name, v, SM__L_CODE, e);
  } else if (v.kind == SM__V_EXPR && derived_name(name)) {
    /* eff_batch_size = batch_size * accum_iter * get_world_size() */
    put(s, name, v, SM__L_CODE, e);
  } else if (v.kind == SM__V_EXPR &&
             (is(right, "boolean_operator") ||
              is(right, "comparison_operator") || is(right, "not_operator") ||
              is(right, "call"))) {
    /* type_given = config.model_type is not None: a condition the
     * guards of presets and strategies read. */
    put(s, name, v, SM__L_CODE, e);
  }
  return 1;
}

/* name = value. */
static void assign_name(scan *s, TSNode n, TSNode left, TSNode right, val v,
                        const char *e) {
  char *name = dup_text(s, left);
  if (name == NULL)
    return;
  if (s->cls != NULL && s->func == NULL)
    all_gpus_default(s, name, right);
  {
    size_t rl;
    const char *rt = text(s, right, &rl);
    if (rl < 4096 && memmem(rt, rl, "device_count", 12) != NULL &&
        s->ndevvars < 16)
      s->devvars[s->ndevvars++] = name;
  }
  if (s->func == NULL && s->cls == NULL && is(right, "identifier") &&
      !s->config_only) {
    /* mae_vit_large_patch16 = mae_vit_large_patch16_dec512d8b */
    sm__kv *kv = sm__vec_push(&s->c->factories);
    if (kv != NULL) {
      kv->group = name;
      kv->key = sm__printf(s->c, "@alias:%s", dup_text(s, right));
      kv->ev = e;
    }
  }
  sm__words_at(s->c, name, strlen(name), s->rel, line_of(n), s->wweight);
  if (!s->config_only && is(right, "call"))
    config_object(s, name, right);
  if (v.kind == SM__V_EXPR)
    assign_expr(s, name, v.str, e);
  if (!publish_name(s, name, right, v, e))
    return;
  if (is(right, "dictionary")) {
    visit_dict(s, right);
    code_dict(s, name, right);
  }
  if (is(right, "list") && s->func == NULL && s->cls == NULL)
    visit_named_list(s, right);
  /* model = DETR(...): the class the job builds as its model. */
  /* (A class attribute, such as a dataclass field, is no model the job
   * builds.) */
  if (!s->config_only && model_like_name(name) && is(right, "call") &&
      (s->cls == NULL || s->func != NULL))
    model_assignment(s, name, right, e);
  else if (!s->config_only && s->layer >= SM__L_ENTRY && is(right, "call"))
    note_built(s, name, right);
}

/* args.decoder_layers = getattr(args, "decoder_layers", 6): what an
 * architecture function sets, as a default under the options (a plain
 * assignment sets it whatever the options say). */
static void assign_arch_attribute(scan *s, TSNode left, TSNode right,
                                  const char *e) {
  TSNode rv = right;
  int dflt = 0;
  if (is(rv, "call")) {
    char *cn = dup_text(s, field(rv, "function"));
    TSNode ra = field(rv, "arguments");
    if (cn &&
        (strcmp(last_comp(cn), "getattr") == 0 ||
         strcmp(last_comp(cn), "safe_getattr") == 0) &&
        ts_node_named_child_count(ra) == 3) {
      rv = ts_node_named_child(ra, 2);
      dflt = 1;
    }
  }
  {
    val fv = eval(s, rv, 0);
    TSNode an = field(left, "attribute");
    if ((fv.kind == SM__V_NUM || fv.kind == SM__V_BOOL) && !ts_node_is_null(an))
      factory_kv(s, s->func,
                 sm__printf(s->c, "%s%s", dflt ? "?" : "", dup_text(s, an)),
                 fv.num, e);
  }
}

/* obj.attr = value: the attribute's reference name gets the value. */
static void assign_attribute(scan *s, TSNode left, TSNode right, val v,
                             const char *e) {
  const char *r = ref_name(s, left);
  char *full = dup_text(s, left);
  if (r == NULL || full == NULL)
    return;
  if (v.kind == SM__V_REF && s->lr_var && strcmp(v.str, s->lr_var) == 0 &&
      is_lr_name(last_comp(r)))
    return;
  if (v.kind == SM__V_NUM || v.kind == SM__V_STR || v.kind == SM__V_BOOL ||
      v.kind == SM__V_LIST || v.kind == SM__V_NULL ||
      (v.kind == SM__V_EXPR && is(right, "conditional_expression")))
    put(s, strncmp(full, "self.", 5) == 0 ? r : r, v,
        s->func && strncmp(full, "self.", 5) == 0 ? SM__L_CODE : s->layer, e);
  if (v.kind == SM__V_EXPR && lr_rescale_expr(v.str))
    sm__param_str(s->c, "__lr_rescale", v.str, SM__V_EXPR, s->layer, e);
  if (v.kind == SM__V_EXPR)
    batch_division(s, r, v.str, e);
  if (v.kind == SM__V_EXPR &&
      (is(right, "boolean_operator") || is(right, "comparison_operator") ||
       is(right, "not_operator")) &&
      !strstr(v.str, last_comp(r)))
    /* args.distributed = args.world_size > 1 or args.mp: a switch the
     * guards of the strategies read. */
    put(s, r, v, s->layer, e);
}

/* Is an RPN guard made of constants only (numbers, strings, operators),
 * so that its value does not wait for the job's options? */
static int const_guard(const char *rpn) {
  const char *p = rpn;
  while (*p) {
    size_t n;
    while (*p == ' ')
      p++;
    n = strcspn(p, " ");
    if (n == 0)
      break;
    if (!(isdigit((unsigned char)p[0]) || p[0] == '"' ||
          (n == 3 && strncmp(p, "and", 3) == 0) ||
          (n == 3 && strncmp(p, "not", 3) == 0) ||
          (n == 2 && strncmp(p, "or", 2) == 0)))
      return 0;
    p += n;
  }
  return 1;
}

static void visit_assignment(scan *s, TSNode n, int augmented) {
  TSNode left = field(n, "left");
  TSNode right = field(n, "right");
  const char *e = ev(s, n);
  val v;

  if (ts_node_is_null(right))
    return;
  if (s->guard != NULL && const_guard(s->guard) &&
      sm__cond_value(s->c, s->guard) == 0)
    /* if not torch.cuda.is_available(): cfg.strategy = "single" -- a
     * fallback for hardware the job does not run on. */
    return;
  if (augmented) {
    assign_augmented(s, n, left, right, e);
    return;
  }
  v = eval(s, right, 0);
  assign_tuple(s, left, right);
  if (is(left, "subscript") && !s->config_only && !is(right, "string")) {
    /* os.environ['CUDA_VISIBLE_DEVICES'] = device: the code makes an
     * option's device list the visible GPUs (YOLO-style --device 0,1). */
    char *lt = dup_text(s, left);
    if (lt != NULL && strstr(lt, "environ") != NULL &&
        strstr(lt, "CUDA_VISIBLE_DEVICES") != NULL)
      sm__param_num(s->c, "__visible_from_code", 1, SM__V_NUM, SM__L_CODE, e);
  }
  if (is(left, "identifier")) {
    assign_name(s, n, left, right, v, e);
    return;
  }
  if (is(left, "attribute") && !s->config_only && s->func != NULL &&
      s->cls == NULL)
    assign_arch_attribute(s, left, right, e);
  if (is(left, "attribute") && !s->config_only)
    assign_attribute(s, left, right, v, e);
}

static void visit(scan *s, TSNode n, int depth);
static void visit_children(scan *s, TSNode n, int depth);
static int off_path(scan *s, TSNode n);

/* A condition as RPN; the parts that cannot be compiled (calls, `in`)
 * are unknown ("?"), so that and/or/not still decide around them. */
static void cond_into(scan *s, TSNode n, sm_buf *out, int depth) {
  if (depth > 20) {
    sm_buf_adds(out, " ?");
    return;
  }
  if (is(n, "parenthesized_expression")) {
    cond_into(s, ts_node_named_child(n, 0), out, depth + 1);
  } else if (is(n, "boolean_operator")) {
    size_t len = 0;
    const char *o = text(s, field(n, "operator"), &len);
    cond_into(s, field(n, "left"), out, depth + 1);
    cond_into(s, field(n, "right"), out, depth + 1);
    sm_buf_adds(out, o[0] == 'a' ? " and" : " or");
  } else if (is(n, "not_operator")) {
    cond_into(s, field(n, "argument"), out, depth + 1);
    sm_buf_adds(out, " not");
  } else {
    sm_buf t;
    sm_buf_init(&t, 4096);
    if (rpn(s, n, &t, depth) == 0)
      sm_buf_adds(out, sm_buf_str(&t));
    else
      sm_buf_adds(out, " ?");
    sm_buf_release(&t);
  }
}

/* The guard of a branch: the enclosing guard and this condition. */
static const char *guard_and(scan *s, const char *outer, const char *cond) {
  if (outer == NULL)
    return cond;
  if (strlen(outer) + strlen(cond) > 2048)
    return outer; /* too deep to follow: the outer conditions only */
  return sm__printf(s->c, "%s %s and", outer, cond);
}

/* Does a condition test a debugging switch (if args.debug:, if
 * cfg.train.fast_dev_run.enabled:, if dry_run:)?  Such a branch shrinks
 * the run to a smoke test; it is not the job unless the job asks. */
static int debug_condition(scan *s, TSNode cond) {
  static const char *const words[] = {
      "debug",        "fast_dev_run", "dry_run", "smoke_test",
      "sanity_check", "quick_test",   NULL};
  char low[256];
  size_t len;
  const char *t = text(s, cond, &len);
  if (t == NULL || len >= sizeof(low) || memchr(t, '=', len) != NULL)
    return 0; /* a comparison (args.mode == 'debug') is decided as usual */
  for (size_t i = 0; i < len; i++)
    low[i] = (char)tolower((unsigned char)t[i]);
  low[len] = '\0';
  for (int k = 0; words[k]; k++)
    if (strstr(low, words[k]))
      return 1;
  return 0;
}

/* Does a condition's RPN text negate (a token "not", not a word that
 * contains it: args.debug_annotations)? */
static int rpn_has_not(const char *rpn) {
  for (const char *t = rpn; (t = strstr(t, "not")) != NULL; t += 3)
    if ((t == rpn || t[-1] == ' ') && (t[3] == '\0' || t[3] == ' '))
      return 1;
  return 0;
}

/* if / elif / else: each branch is read under its condition (and the
 * negation of the ones before it); a debugging branch is not read. */
static void visit_if(scan *s, TSNode n, int depth) {
  const char *save = s->guard, *before = NULL;
  uint32_t nc = ts_node_named_child_count(n);
  TSNode cond = field(n, "condition");
  sm_buf b;
  const char *c0;
  sm_buf_init(&b, 8192);
  cond_into(s, cond, &b, 0);
  c0 = sm__strdup(s->c, sm_buf_str(&b));
  sm_buf_release(&b);
  visit(s, cond, depth + 1);
  if (c0 == NULL) {
    visit_children(s, n, depth);
    return;
  }
  s->guard = guard_and(s, save, c0);
  if (!debug_condition(s, cond) || rpn_has_not(c0))
    visit(s, field(n, "consequence"), depth + 1);
  before = sm__printf(s->c, "%s not", c0);
  for (uint32_t i = 0; i < nc && before != NULL; i++) {
    TSNode k = ts_node_named_child(n, i);
    if (is(k, "elif_clause")) {
      TSNode ec = field(k, "condition");
      const char *ci;
      sm_buf_init(&b, 8192);
      cond_into(s, ec, &b, 0);
      ci = sm__strdup(s->c, sm_buf_str(&b));
      sm_buf_release(&b);
      s->guard = save;
      visit(s, ec, depth + 1);
      if (ci == NULL)
        break;
      s->guard = guard_and(s, save, sm__printf(s->c, "%s %s and", before, ci));
      visit(s, field(k, "consequence"), depth + 1);
      before = sm__printf(s->c, "%s %s not and", before, ci);
    } else if (is(k, "else_clause")) {
      s->guard = guard_and(s, save, before);
      visit(s, field(k, "body"), depth + 1);
    }
  }
  s->guard = save;
}

/* a if cond else b: each side is read under its half of the condition,
 * as an if statement's branches are (FSDPStrategy() if shard else
 * DDPStrategy()).  -1 when the expression is not of that shape. */
static int visit_ternary(scan *s, TSNode n, int depth) {
  const char *save = s->guard, *c0;
  sm_buf b;
  if (ts_node_named_child_count(n) != 3)
    return -1;
  sm_buf_init(&b, 8192);
  cond_into(s, ts_node_named_child(n, 1), &b, 0);
  c0 = sm__strdup(s->c, sm_buf_str(&b));
  sm_buf_release(&b);
  if (c0 == NULL || c0[0] == '\0')
    return -1;
  visit(s, ts_node_named_child(n, 1), depth + 1);
  s->guard = guard_and(s, save, c0);
  visit(s, ts_node_named_child(n, 0), depth + 1);
  s->guard = guard_and(s, save, sm__printf(s->c, "%s not", c0));
  visit(s, ts_node_named_child(n, 2), depth + 1);
  s->guard = save;
  return 0;
}

static void visit_one(void *s, TSNode k, int depth) {
  visit(s, k, depth);
}

static void visit_children(scan *s, TSNode n, int depth) {
  /* A cursor walks siblings in constant time each; indexing children
   * would restart from the first one every time. */
  sm__ts_each_named(n, visit_one, s, depth);
}

static void visit_def(scan *s, TSNode n, int depth) {
  const char *save_f = s->func, *save_c = s->cls, *save_lr = s->lr_var;
  char *name = dup_text(s, field(n, "name"));
  int save_top = s->top;
  if (name == NULL)
    return;
  if (s->func == NULL && s->cls == NULL && s->ntop < 512) {
    s->tops[s->ntop] = name;
    s->top = s->ntop++;
  }
  sm__words_at(s->c, name, strlen(name), s->rel, line_of(n), s->wweight);
  if (is(n, "class_definition")) {
    const char **slot = sm__vec_push(&s->c->classes);
    if (slot)
      *slot = name;
    s->cls = name;
    s->func = NULL;
    visit(s, field(n, "body"), depth + 1);
  } else {
    /* Parameter defaults, kept under the function's name so that fire
     * targets and factories can find them. */
    TSNode ps = field(n, "parameters");
    uint32_t pc = ts_node_named_child_count(ps);
    /* Only the entry's functions can be fire.Fire targets. */
    if (!s->config_only && s->layer >= SM__L_ENTRY)
      for (uint32_t i = 0, pos = 0; i < pc; i++) {
        TSNode p = ts_node_named_child(ps, i);
        if (is(p, "identifier") || is(p, "typed_parameter")) {
          pos++;
        } else if (is(p, "default_parameter") ||
                   is(p, "typed_default_parameter")) {
          char *pn = dup_text(s, field(p, "name"));
          val v = eval(s, field(p, "value"), 0);
          sm__param *q = NULL;
          if (pn && v.kind >= 0)
            q = put(s, sm__printf(s->c, "fn~%s~%s", name, pn), v, s->layer,
                    ev(s, p));
          /* Its position, for callers that pass it positionally. */
          if (q != NULL)
            q->flag = (int)pos;
          pos++;
        }
      }
    s->func = name;
    visit(s, field(n, "body"), depth + 1);
  }
  s->func = save_f;
  s->cls = save_c;
  s->lr_var = save_lr;
  s->top = save_top;
}

/* A registry decorator (@register_model("name"), @register_model_
 * architecture("model", "arch"), @ARCH.register("name", config=Cfg)):
 * each name it registers selects the decorated function (whose
 * assignments set the architecture) or the configuration class it
 * names. */
static void registry_decorator(scan *s, TSNode call, TSNode def) {
  char *callee = dup_text(s, field(call, "function"));
  TSNode args = field(call, "arguments");
  TSNode dn = field(def, "name");
  uint32_t nc = ts_node_named_child_count(args);
  char low[128];
  const char *cfg_cls = NULL, *target;
  size_t n;
  if (callee == NULL || ts_node_is_null(dn) || s->config_only)
    return;
  n = strlen(last_comp(callee));
  if (n >= sizeof(low))
    return;
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)last_comp(callee)[i]);
  if (strstr(low, "register") == NULL)
    return;
  target = dup_text(s, dn);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode a = ts_node_named_child(args, i);
    if (is(a, "keyword_argument")) {
      char *k = dup_text(s, field(a, "name"));
      TSNode v = field(a, "value");
      if (k &&
          (strcmp(k, "dataclass") == 0 || strcmp(k, "config") == 0 ||
           strcmp(k, "config_class") == 0 || strcmp(k, "cfg") == 0) &&
          (is(v, "identifier") || is(v, "attribute")))
        cfg_cls = dup_text(s, v);
    }
  }
  /* The name it registers: name=, or the last string argument (the
   * first ones name what it belongs to: register_model_architecture(
   * "model", "arch")). */
  {
    TSNode last = {0};
    val v = {-1, 0, NULL, 0};
    for (uint32_t i = 0; i < nc; i++) {
      TSNode a = ts_node_named_child(args, i);
      if (is(a, "keyword_argument")) {
        char *k = dup_text(s, field(a, "name"));
        if (k != NULL && strcmp(k, "name") == 0) {
          last = field(a, "value");
          break;
        }
        continue;
      }
      if (is(a, "string"))
        last = a;
    }
    if (!ts_node_is_null(last))
      v = eval(s, last, 0);
    if (v.kind != SM__V_STR || v.str[0] == '\0' || strlen(v.str) > 100)
      return;
    if (is(def, "function_definition") && target != NULL &&
        strcmp(v.str, target) != 0)
      factory_kv(s, v.str, sm__printf(s->c, "@alias:%s", target), 0,
                 ev(s, last));
    if (cfg_cls != NULL)
      factory_kv(s, v.str, sm__printf(s->c, "@class:%s", cfg_cls), 0,
                 ev(s, last));
  }
}

static void visit_decorated(scan *s, TSNode n, int depth) {
  uint32_t nc = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < nc; i++) {
    TSNode d = ts_node_named_child(n, i);
    TSNode call;
    char *callee;
    if (!is(d, "decorator"))
      continue;
    call = ts_node_named_child(d, 0);
    if (!is(call, "call"))
      continue;
    registry_decorator(s, call, field(n, "definition"));
    callee = dup_text(s, field(call, "function"));
    /* A click option (@click.option('--batch', default=512, help=...))
     * declares an option as add_argument does: same names, default,
     * flag and help. */
    if (callee && strcmp(last_comp(callee), "option") == 0 &&
        is(field(call, "arguments"), "argument_list") && !s->config_only) {
      TSNode a0 = first_pos(field(call, "arguments"));
      val v0 = ts_node_is_null(a0) ? (val){-1, 0, NULL, 0} : eval(s, a0, 0);
      if (v0.kind == SM__V_STR && v0.str[0] == '-')
        add_argument(s, field(call, "arguments"), call);
    }
    if (callee && strcmp(last_comp(callee), "main") == 0 &&
        strstr(callee, "hydra") != NULL) {
      TSNode args = field(call, "arguments");
      val p = kwarg(s, args, "config_path");
      val nm = kwarg(s, args, "config_name");
      if (p.kind == SM__V_STR)
        s->c->hydra_path = sm__repo_join(s->c, s->dir, p.str);
      else
        s->c->hydra_path = s->dir;
      if (nm.kind == SM__V_STR)
        s->c->hydra_name = nm.str;
    }
  }
  visit(s, field(n, "definition"), depth + 1);
}

static void visit(scan *s, TSNode n, int depth) {
  const char *t;
  if (ts_node_is_null(n) || depth > MAX_TREE_DEPTH)
    return;
  t = ntype(n);
  if (t[0] == 'i' && strcmp(t, "identifier") == 0) {
    size_t len;
    const char *x = text(s, n, &len);
    mark_used(s, x, len);
    return;
  }
  if (s->func == NULL && s->cls == NULL && !s->in_main &&
      strcmp(t, "if_statement") == 0) {
    size_t len;
    const char *cond = text(s, field(n, "condition"), &len);
    if (len < 64 && memmem(cond, len, "__main__", 8) != NULL) {
      s->in_main = 1;
      visit_children(s, n, depth);
      s->in_main = 0;
      return;
    }
  }
  if (depth == 1 && s->reach != NULL && s->func == NULL && s->cls == NULL &&
      off_path(s, n))
    return;
  if (strcmp(t, "class_definition") == 0 ||
      strcmp(t, "function_definition") == 0) {
    visit_def(s, n, depth);
    return;
  }
  switch (t[0]) {
  case 'i':
    if (strcmp(t, "if_statement") == 0 && !s->config_only) {
      visit_if(s, n, depth);
      return;
    }
    if (strcmp(t, "import_statement") == 0 ||
        strcmp(t, "import_from_statement") == 0) {
      visit_import(s, n);
      return;
    }
    break;
  case 'c':
    if (strcmp(t, "call") == 0) {
      visit_call(s, n);
      visit_children(s, n, depth);
      return;
    }
    if (strcmp(t, "comment") == 0)
      return;
    if (strcmp(t, "conditional_expression") == 0 && !s->config_only &&
        visit_ternary(s, n, depth) == 0)
      return;
    break;
  case 'd':
    if (strcmp(t, "decorated_definition") == 0) {
      visit_decorated(s, n, depth);
      return;
    }
    if (strcmp(t, "dictionary") == 0 && !s->config_only)
      visit_dict(s, n);
    break;
  case 'a':
    if (strcmp(t, "assignment") == 0) {
      visit_assignment(s, n, 0);
      visit(s, field(n, "right"), depth + 1);
      return;
    }
    if (strcmp(t, "augmented_assignment") == 0) {
      visit_assignment(s, n, 1);
      return;
    }
    break;
  case 'r':
    if (strcmp(t, "return_statement") == 0 && s->func != NULL &&
        is(ts_node_named_child(n, 0), "dictionary"))
      code_dict(s, NULL, ts_node_named_child(n, 0));
    break;
  case 'b':
    if (strcmp(t, "binary_operator") == 0 && !s->config_only &&
        mentions_lr(s, n)) {
      /* A learning-rate scaling rule inside a call argument. */
      sm_buf b;
      sm_buf_init(&b, 4096);
      if (rpn(s, n, &b, 0) == 0 && lr_rescale_expr(sm_buf_str(&b)))
        sm__param_str(s->c, "__lr_rescale_free", sm_buf_str(&b), SM__V_EXPR,
                      s->layer, ev(s, n));
      sm_buf_release(&b);
    }
    break;
  case 's':
    if (strcmp(t, "string") == 0) {
      size_t len;
      const char *x = text(s, n, &len);
      /* String literals (dictionary keys, registry names) say less than
       * the names the code defines and calls; prose (a help text, a log
       * message: words apart) says nothing of what the job computes. */
      if (len < 80 && s->layer >= SM__L_ENTRY && !prose(x, len))
        sm__words_at(s->c, x, len, s->rel, line_of(n), 1);
      return;
    }
    break;
  default:
    break;
  }
  visit_children(s, n, depth);
}

/* ==== Files ==== */

static TSParser *new_parser(void) {
  TSParser *p = ts_parser_new();
  if (p != NULL && !ts_parser_set_language(p, tree_sitter_python())) {
    ts_parser_delete(p);
    return NULL;
  }
  return p;
}

/* Does the module hold code (defs, classes, calls) rather than plain
 * assignments? */
static int has_code(TSNode root) {
  uint32_t nc = ts_node_named_child_count(root);
  for (uint32_t i = 0; i < nc; i++) {
    const char *t = ts_node_type(ts_node_named_child(root, i));
    if (strcmp(t, "function_definition") == 0 ||
        strcmp(t, "class_definition") == 0 ||
        strcmp(t, "decorated_definition") == 0 ||
        strcmp(t, "for_statement") == 0 || strcmp(t, "while_statement") == 0)
      return 1;
  }
  return 0;
}

/* ==== Definitions on the job's path ==== */

#define REACH_CAP 4096

static void reach_add(uint64_t *set, uint64_t h) {
  size_t k;
  for (k = h % REACH_CAP; set[k] != 0; k = (k + 1) % REACH_CAP)
    if (set[k] == h)
      return;
  set[k] = h;
}

static int reach_has(const uint64_t *set, uint64_t h) {
  for (size_t k = h % REACH_CAP; set[k] != 0; k = (k + 1) % REACH_CAP)
    if (set[k] == h)
      return 1;
  return 0;
}

/* The definition itself of a top-level statement (decorators
 * unwrapped), or a null node. */
static TSNode top_def(TSNode n) {
  if (is(n, "decorated_definition"))
    n = field(n, "definition");
  if (is(n, "function_definition") || is(n, "class_definition"))
    return n;
  return (TSNode){0};
}

/* Every identifier under n into set (bounded). */
static void idents_into(scan *s, TSNode n, uint64_t *set, size_t *used,
                        int depth) {
  TSTreeCursor cur;
  if (depth > MAX_TREE_DEPTH || *used * 2 >= REACH_CAP)
    return;
  if (is(n, "identifier")) {
    size_t len;
    const char *t = text(s, n, &len);
    reach_add(set, ident_hash(t, len));
    (*used)++;
    return;
  }
  cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (ts_node_is_named(k))
        idents_into(s, k, set, used, depth + 1);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}

/* A module imported for some of its names: the top-level definitions
 * that those names, the module-level code and what they use in turn
 * reach.  The others are not on the job's path and are not read (a
 * wrapper function nobody calls enables nothing).  Returns the set of
 * reachable names, or NULL when everything is read. */
static uint64_t *reachable_defs(scan *s, TSNode root) {
  uint32_t nc = ts_node_named_child_count(root);
  uint64_t *reach, *seen;
  size_t used = 0;
  int changed = 1, rounds = 0;
  if (s->want == NULL || nc > 4096)
    return NULL;
  reach = sm_calloc(REACH_CAP, sizeof(uint64_t));
  seen = sm_calloc(REACH_CAP, sizeof(uint64_t));
  if (reach == NULL || seen == NULL) {
    sm_free(reach);
    sm_free(seen);
    return NULL;
  }
  /* The names the importers want, and what module-level code uses. */
  for (const char *a = s->want + 1; *a;) {
    const char *b = strchr(a, ',');
    if (b == NULL)
      break;
    if (b > a)
      reach_add(reach, ident_hash(a, (size_t)(b - a)));
    a = b + 1;
  }
  for (uint32_t i = 0; i < nc; i++) {
    TSNode k = ts_node_named_child(root, i);
    if (ts_node_is_null(top_def(k)))
      idents_into(s, k, reach, &used, 0);
  }
  /* What the reachable definitions use, until nothing changes. */
  while (changed && rounds++ < 64 && used * 2 < REACH_CAP) {
    changed = 0;
    for (uint32_t i = 0; i < nc; i++) {
      TSNode k = ts_node_named_child(root, i), d = top_def(k);
      size_t len;
      const char *t;
      uint64_t h;
      if (ts_node_is_null(d))
        continue;
      t = text(s, field(d, "name"), &len);
      h = ident_hash(t, len);
      if (!reach_has(reach, h) || reach_has(seen, h))
        continue;
      reach_add(seen, h);
      idents_into(s, d, reach, &used, 0);
      changed = 1;
    }
  }
  sm_free(seen);
  if (used * 2 >= REACH_CAP) {
    /* Too many names to tell: read everything. */
    sm_free(reach);
    return NULL;
  }
  return reach;
}

/* Is the top-level definition n off the job's path? */
static int off_path(scan *s, TSNode n) {
  TSNode d = top_def(n);
  size_t len;
  const char *t;
  if (s->reach == NULL || ts_node_is_null(d))
    return 0;
  t = text(s, field(d, "name"), &len);
  if (reach_has(s->reach, ident_hash(t, len)))
    return 0;
  if (is(d, "class_definition")) {
    /* Its name still says which classes the repository defines. */
    const char **slot = sm__vec_push(&s->c->classes);
    if (slot)
      *slot = sm__strndup(s->c, t, len);
  }
  s->skipped++;
  return 1;
}

static int scan_file(sm__ctx *c, TSParser *parser, const char *rel, int layer,
                     int depth, int config_only, const char *want) {
  const char *src;
  TSTree *tree;
  TSNode root;
  scan s;

  (void)parser;
  /* The tree is shared with the evaluator: each file is parsed once. */
  tree = sm__src_tree(c, rel, SM__G_PYTHON, &src);
  if (tree == NULL)
    return SM_EPARSE;
  root = ts_tree_root_node(tree);
  if (ts_node_has_error(root)) {
    /* Partial trees are still read; the error is reported. */
    sm__warn(c, "%s: Python syntax errors, read what parsed", rel);
  }
  if (config_only && has_code(root)) {
    /* Not a plain config: read it as code imported by the entry. */
    config_only = 0;
    layer = SM__L_CODE;
  }
  memset(&s, 0, sizeof(s));
  s.c = c;
  s.rel = rel;
  {
    const char *slash = strrchr(rel, '/');
    s.dir = slash ? sm__strndup(c, rel, (size_t)(slash - rel)) : "";
  }
  s.src = src;
  s.layer = layer;
  s.depth = depth;
  s.config_only = config_only;
  s.wweight = layer >= SM__L_ENTRY ? 2 : 1;
  s.used = sm_calloc(USED_CAP, sizeof(uint64_t));
  s.top = -1;
  s.want = want;
  if (depth >= 1 && !config_only)
    s.reach = reachable_defs(&s, root);
  {
    int save_module = c->words_module;
    c->words_module = layer < SM__L_ENTRY;
    visit(&s, root, 0);
    c->words_module = save_module;
  }
  sm_free(s.reach);
  /* Only what the file's needed code uses is on the job's path; a name
   * the importers want that the file only re-exports counts too. */
  for (int i = 0; i < s.npend; i++)
    if (s.pend[i].bound == NULL || is_used(&s, s.pend[i].bound) ||
        (want != NULL && wanted(want, s.pend[i].bound)))
      sm__py_queue_want(c, s.pend[i].path, SM__L_CODE, depth + 1,
                        s.pend[i].want);
  sm_free(s.used);
  return 0;
}

/* A light scan of a deep module: class definitions and `model =
 * Class(...)`, line by line, without a parse (parsing every module of a
 * large package would cost more than it tells). */
static void light_scan(sm__ctx *c, const char *rel) {
  const char *src, *p, *end;
  size_t len;
  int line = 0, rc = sm__src_text(c, rel, &src, &len);
  if (rc != 0)
    return;
  for (p = src, end = src + len; p < end;) {
    const char *le = memchr(p, '\n', (size_t)(end - p)), *q = p;
    if (le == NULL)
      le = end;
    line++;
    while (q < le && (*q == ' ' || *q == '\t'))
      q++;
    if (le - q > 6 && strncmp(q, "class ", 6) == 0) {
      const char *a = q + 6, *b = a;
      const char **slot;
      while (b < le && (isalnum((unsigned char)*b) || *b == '_'))
        b++;
      if (b > a && (slot = sm__vec_push(&c->classes)) != NULL)
        *slot = sm__strndup(c, a, (size_t)(b - a));
    } else if (le - q > 9 && strncmp(q, "model = ", 8) == 0 &&
               isupper((unsigned char)q[8])) {
      const char *a = q + 8, *b = a;
      while (b < le && (isalnum((unsigned char)*b) || *b == '_'))
        b++;
      if (b < le && *b == '(')
        sm__cand_add(c, &c->models,
                     sm__printf(c, "class:%.*s", (int)(b - a), a),
                     sm__ev(c, rel, line), 0);
    }
    p = le < end ? le + 1 : end;
  }
}

/* Copies the parameter defaults of function fn to real keys, except the
 * parameters a caller passes (positions below npos, names in kw). */
static void promote_fn(sm__ctx *c, const char *fn, int npos, const char *kw) {
  char prefix[256];
  size_t pn;
  int n = c->params.n, idx = 0;
  snprintf(prefix, sizeof(prefix), "fn~%s~", fn);
  for (pn = 0; prefix[pn]; pn++)
    prefix[pn] = (char)tolower((unsigned char)prefix[pn]);
  for (int i = 0; i < n; i++) {
    sm__param p = SM__AT(c->params, sm__param, i);
    sm__param *q;
    char pat[160];
    if (strncmp(p.key, prefix, pn) != 0)
      continue;
    idx++;
    snprintf(pat, sizeof(pat), ",%s,", p.key + pn);
    if (p.flag < npos || (kw != NULL && strstr(kw, pat) != NULL))
      continue;
    q = sm__vec_push(&c->params);
    if (q == NULL)
      return;
    *q = p;
    q->key = sm__strdup(c, p.key + pn);
    q->leaf = q->key;
    q->order = c->seq++;
  }
  (void)idx;
}

/* The defaults of the functions the job runs: the fire.Fire target, the
 * functions called from the __main__ block, and those they call in turn
 * without passing the parameter. */
static void promote_calls(sm__ctx *c) {
  const char *done[64];
  const char *queue[64];
  int nd = 0, nq = 0;
  if (c->promoted)
    return;
  c->promoted = 1;
  if (c->fire_target != NULL) {
    promote_fn(c, c->fire_target, 0, NULL);
    queue[nq++] = c->fire_target;
    done[nd++] = c->fire_target;
  }
  for (int i = 0; i < c->pycalls.n && nq < 64; i++) {
    pycall *pc = &SM__AT(c->pycalls, pycall, i);
    if (pc->caller == NULL || pc->caller[0] != '\0' || pc->splat)
      continue;
    promote_fn(c, pc->callee, pc->npos, pc->kw);
    queue[nq++] = pc->callee;
    if (nd < 64)
      done[nd++] = pc->callee;
  }
  for (int q = 0; q < nq && q < 64; q++)
    for (int i = 0; i < c->pycalls.n; i++) {
      pycall *pc = &SM__AT(c->pycalls, pycall, i);
      int seen = 0;
      if (pc->caller == NULL || strcmp(pc->caller, queue[q]) != 0 || pc->splat)
        continue;
      for (int k = 0; k < nd && !seen; k++)
        seen = strcmp(done[k], pc->callee) == 0;
      if (seen || nd >= 64 || nq >= 64)
        continue;
      promote_fn(c, pc->callee, pc->npos, pc->kw);
      done[nd++] = pc->callee;
      queue[nq++] = pc->callee;
    }
}

void sm__py_scan_all(sm__ctx *c) {
  TSParser *parser = new_parser();
  if (parser == NULL) {
    sm__warn(c, "the Python grammar does not load: Python not read");
    return;
  }
  /* The queue grows while it is read: breadth first.  A later call
   * (code that configs bring onto the path) continues where it was. */
  for (int i = c->pyqueue_done;
       i < c->pyqueue.n && !sm__expired(c) && !c->stopped;
       i = ++c->pyqueue_done) {
    sm__pyfile f = SM__AT(c->pyqueue, sm__pyfile, i);
    const char *src;
    size_t len = 0;
    /* Past the entry's own imports, parsing is bounded in bytes: a
     * large library under the job is read for its class names only. */
    if (f.depth >= 2 && c->code_bytes > MAX_CODE_BYTES) {
      light_scan(c, f.path);
      continue;
    }
    if (f.depth > FULL_PARSE_DEPTH) {
      light_scan(c, f.path);
      continue;
    }
    scan_file(c, parser, f.path, f.layer, f.depth, 0, f.want);
    if (f.depth >= 1 && sm__src_text(c, f.path, &src, &len) == 0)
      c->code_bytes += len;
  }
  ts_parser_delete(parser);
  promote_calls(c);
}

int sm__py_config(sm__ctx *c, const char *rel, int layer) {
  TSParser *parser = new_parser();
  int rc;
  if (parser == NULL)
    return SM_EUNSUPP;
  rc = scan_file(c, parser, rel, layer, MAX_IMPORT_DEPTH, 1, NULL);
  ts_parser_delete(parser);
  return rc;
}

/* ==== Registries looked up by name ==== */

#define REG_MAX_FILES 400
#define REG_MAX_BYTES (12u << 20)

/* Does the text register or define name (a decorator's "name", 'name',
 * or def name(...))? */
static int names_it(const char *text, size_t len, const char *name) {
  char pat[3][128];
  size_t nl = strlen(name);
  snprintf(pat[0], sizeof(pat[0]), "\"%s\"", name);
  snprintf(pat[1], sizeof(pat[1]), "'%s'", name);
  snprintf(pat[2], sizeof(pat[2]), "def %s(", name);
  for (int i = 0; i < 3; i++)
    if (nl + 5 < sizeof(pat[i]) && memmem(text, len, pat[i], strlen(pat[i])))
      return 1;
  return 0;
}

typedef struct regsearch {
  sm__ctx *c;
  const char *name;
  int files;
  size_t bytes;
  int hits;
  int call; /* call the function named name and publish what it returns */
} regsearch;

/* The tree without the members whose value the code computes at run
 * time or leaves unset (None), and without its evaluation sections
 * (validator.steps is not the training length): a default that cannot
 * be known says nothing about the job and must not hide a known value of
 * a like-named key. */
static int eval_section(const char *k) {
  static const char *const w[] = {"eval",       "evaluation", "evaluator",
                                  "validation", "validator",  "val",
                                  "valid",      "test",       NULL};
  for (int i = 0; k && w[i]; i++)
    if (strcasecmp(k, w[i]) == 0)
      return 1;
  return 0;
}

static sm__vnode *known_only(sm__ctx *c, sm__vnode *n, int depth) {
  sm__vnode *out;
  if (n == NULL || (n->t != SM__T_MAP && n->t != SM__T_OBJ) || depth > 32)
    return n;
  out = sm__vt_new(c, n->t, n->path, n->line);
  if (out == NULL)
    return n;
  out->aux = n->aux;
  for (int i = 0; i < n->n; i++)
    if (n->e[i].v != NULL && n->e[i].v->t != SM__T_UNKNOWN &&
        n->e[i].v->t != SM__T_NULL && !eval_section(n->e[i].key))
      sm__vt_put(c, out, n->e[i].key, known_only(c, n->e[i].v, depth + 1));
  return out;
}

/* A list of per-layer config objects (layers=[Block.Config(...) for
 * each layer]) says how many layers there are: its length is published
 * under its key when the key names layers. */
static int layers_key(const char *k) {
  const char *const *keys = sm__keys("n_layers");
  for (int i = 0; keys[i]; i++)
    if (strcmp(keys[i], k) == 0)
      return 1;
  return sm__key_role(k, "n_layers");
}

static void layer_lists(sm__ctx *c, const sm__vnode *n, const char *prefix,
                        int depth) {
  if (n == NULL || (n->t != SM__T_MAP && n->t != SM__T_OBJ) || depth > 16)
    return;
  for (int i = 0; i < n->n; i++) {
    const sm__vnode *v = n->e[i].v;
    const char *k = n->e[i].key;
    const char *full;
    int objs = 0;
    if (k == NULL || v == NULL || eval_section(k))
      continue;
    full = sm__printf(c, "%s%s%s", prefix, prefix[0] ? "." : "", k);
    if (full == NULL)
      continue;
    if (v->t != SM__T_LIST) {
      layer_lists(c, v, full, depth + 1);
      continue;
    }
    for (int j = 0; j < v->n; j++)
      objs += v->e[j].v && v->e[j].v->t == SM__T_OBJ;
    if (objs > 0 && objs == v->n && layers_key(k))
      sm__param_num(c, full, v->n, SM__V_NUM, SM__L_CONFIG,
                    sm__ev(c, v->path, v->line));
  }
}

/* A model spec object that names a family and its size variant
 * (name="llama3", flavor="8B"; variant, size): the model is the family
 * at that size.  The outermost such object counts (members in order). */
static int spec_name(sm__ctx *c, const sm__vnode *n, int depth) {
  static const char *const var[] = {"flavor", "flavour", "variant", "size",
                                    NULL};
  const sm__vnode *nm, *fl = NULL;
  if (n == NULL || (n->t != SM__T_MAP && n->t != SM__T_OBJ) || depth > 6)
    return 0;
  nm = sm__vt_get((sm__vnode *)n, "name");
  for (int i = 0; var[i] && fl == NULL; i++)
    fl = sm__vt_get((sm__vnode *)n, var[i]);
  if (nm != NULL && fl != NULL && nm->t == SM__T_STR && fl->t == SM__T_STR &&
      nm->str[0] && fl->str[0] && strlen(nm->str) + strlen(fl->str) < 120) {
    sm__param_str(c, "model_name", sm__printf(c, "%s-%s", nm->str, fl->str),
                  SM__V_STR, SM__L_CONFIG, sm__ev(c, fl->path, fl->line));
    return 1;
  }
  for (int i = 0; i < n->n; i++)
    if (n->e[i].key != NULL && !eval_section(n->e[i].key) &&
        spec_name(c, n->e[i].v, depth + 1))
      return 1;
  return 0;
}

/* Does a key count the tokens of one rank's micro-batch
 * (num_tokens_per_microbatch_per_dp_rank, tokens_per_device_batch)? */
static int rank_tokens_key(const char *k) {
  int tok = strstr(k, "token") != NULL, per = strstr(k, "per_") != NULL;
  int batch = strstr(k, "batch") != NULL;
  int rank = strstr(k, "rank") || strstr(k, "device") || strstr(k, "gpu");
  return tok && per && batch && rank && strstr(k, "step") == NULL &&
         strstr(k, "global") == NULL && strstr(k, "total") == NULL;
}

/* A micro-batch counted in tokens per rank beside the context length of
 * the same section: the per-device batch in sequences is their quotient
 * (when it is a whole number). */
static void token_batches(sm__ctx *c, const sm__vnode *n, const char *prefix,
                          int depth) {
  const sm__vnode *tok = NULL, *len = NULL;
  if (n == NULL || (n->t != SM__T_MAP && n->t != SM__T_OBJ) || depth > 16)
    return;
  for (int i = 0; i < n->n; i++) {
    const char *k = n->e[i].key;
    const sm__vnode *v = n->e[i].v;
    const char *full;
    if (k == NULL || v == NULL || eval_section(k))
      continue;
    if (v->t == SM__T_NUM && rank_tokens_key(k))
      tok = v;
    else if (v->t == SM__T_NUM && sm__key_role(k, "seq_len"))
      len = v;
    else if ((full = sm__printf(c, "%s%s%s", prefix, prefix[0] ? "." : "",
                                k)) != NULL)
      token_batches(c, v, full, depth + 1);
  }
  if (tok != NULL && len != NULL && len->num >= 1 && tok->num >= len->num &&
      tok->num / len->num == floor(tok->num / len->num) &&
      tok->num / len->num <= 1e6)
    sm__param_num(c,
                  sm__printf(c, "%s%sper_device_batch_size", prefix,
                             prefix[0] ? "." : ""),
                  tok->num / len->num, SM__V_NUM, SM__L_CONFIG,
                  sm__ev(c, tok->path, tok->line));
}

/* A config chosen by name (--config NAME, --preset NAME): a function of
 * a registry module that takes no argument and returns the job's config
 * object.  The bounded evaluator runs it; what it returns (nested
 * config objects, dicts) is the job's config layer.  Returns 1 when a
 * container came back. */
static int reg_call(regsearch *r, const char *p, const char *text, size_t len) {
  char pat[160];
  sm__vnode *v;
  snprintf(pat, sizeof(pat), "\ndef %s(", r->name);
  if (memmem(text, len, pat, strlen(pat)) == NULL)
    return 0;
  v = sm__py_call_fn(r->c, p, r->name, NULL, 0);
  if (v == NULL || (v->t != SM__T_OBJ && v->t != SM__T_MAP))
    return 0;
  sm__vt_publish(r->c, known_only(r->c, v, 0), NULL, SM__L_CONFIG);
  layer_lists(r->c, v, "", 0);
  spec_name(r->c, v, 0);
  token_batches(r->c, v, "", 0);
  return 1;
}

static void reg_dir(regsearch *r, const char *dir, int depth) {
  const char **names;
  int n = sm__src_list(r->c, dir, &names, 512);
  for (int i = 0; i < n && r->files < REG_MAX_FILES && r->hits < 4; i++) {
    const char *p =
        sm__printf(r->c, "%s%s%s", dir, dir[0] ? "/" : "", names[i]);
    size_t nl = strlen(names[i]);
    const char *text;
    size_t len;
    if (p == NULL)
      continue;
    if (nl > 3 && strcmp(names[i] + nl - 3, ".py") == 0) {
      if (r->bytes > REG_MAX_BYTES || !sm__fs_is_file(r->c, p))
        continue;
      r->files++;
      if (sm__src_text(r->c, p, &text, &len) != 0)
        continue;
      r->bytes += len;
      if (r->call) {
        if (reg_call(r, p, text, len))
          r->hits = 4; /* one config is the job's */
      } else if (names_it(text, len, r->name)) {
        sm__py_queue(r->c, p, SM__L_CODE, 1);
        r->hits++;
      }
    } else if (depth == 0 && strchr(names[i], '.') == NULL &&
               sm__fs_is_dir(r->c, p)) {
      reg_dir(r, p, depth + 1);
    }
  }
}

static int identifier(const char *s) {
  if (s == NULL || !(isalpha((unsigned char)s[0]) || s[0] == '_') ||
      strlen(s) > 100)
    return 0;
  for (const char *q = s; *q; q++)
    if (!(isalnum((unsigned char)*q) || *q == '_'))
      return 0;
  return 1;
}

static void registry_search(sm__ctx *c, regsearch *r, const char *const *regs) {
  const char *bases[4], **kids;
  int nb = 0, nk;
  /* Registry directories near the entry, at the root, and one level
   * under the root (pkg/models). */
  if (c->entry_dir && c->entry_dir[0])
    bases[nb++] = c->entry_dir;
  if (c->entry_pkg && c->entry_pkg[0])
    bases[nb++] = c->entry_pkg;
  bases[nb++] = "";
  for (int b = 0; b < nb && r->hits < 4; b++)
    for (int g = 0; regs[g] && r->hits < 4; g++) {
      const char *d =
          sm__printf(c, "%s%s%s", bases[b], bases[b][0] ? "/" : "", regs[g]);
      if (d && sm__fs_is_dir(c, d))
        reg_dir(r, d, 0);
    }
  nk = sm__src_list(c, "", &kids, 256);
  for (int i = 0; i < nk && r->hits < 4; i++)
    for (int g = 0; regs[g] && r->hits < 4; g++) {
      const char *d = sm__printf(c, "%s/%s", kids[i], regs[g]);
      if (d && strchr(kids[i], '.') == NULL && sm__fs_is_dir(c, d))
        reg_dir(r, d, 0);
    }
}

/* --config NAME / --preset NAME that names no file: the registry
 * function of that name builds the job's config. */
void sm__config_registry(sm__ctx *c) {
  static const char *const sel[] = {"config",     "config_name", "preset",
                                    "experiment", "recipe",      NULL};
  static const char *const regs[] = {"models",  "model",   "configs",
                                     "config",  "presets", "experiments",
                                     "recipes", NULL};
  for (int k = 0; sel[k]; k++) {
    const char *names[2] = {sel[k], NULL};
    const sm__param *p = sm__param_get_min(c, names, SM__L_CMD);
    regsearch r;
    if (p == NULL || p->kind != SM__V_STR || !identifier(p->str))
      continue;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.name = p->str;
    r.call = 1;
    registry_search(c, &r, regs);
    if (r.hits > 0)
      return;
  }
}

void sm__registry_lookup(sm__ctx *c) {
  static const char *const sel[] = {"model_type",  "arch",    "model",
                                    "model_name",  "network", "architecture",
                                    "model._name", NULL};
  static const char *const regs[] = {"models",   "model", "modeling",
                                     "archs",    "arch",  "architectures",
                                     "networks", "nets",  NULL};
  for (int k = 0; sel[k]; k++) {
    const char *names[2] = {sel[k], NULL};
    const sm__param *p = sm__param_get_min(c, names, SM__L_ENTRY);
    int known = 0;
    regsearch r;
    if (p == NULL || p->kind != SM__V_STR || strlen(p->str) < 2 ||
        strlen(p->str) > 100 || strpbrk(p->str, "/ .:") != NULL)
      continue;
    for (int i = 0; i < c->factories.n && !known; i++)
      known = strcasecmp(SM__AT(c->factories, sm__kv, i).group, p->str) == 0;
    for (int i = 0; i < c->presets.n && !known; i++)
      known = strcmp(SM__AT(c->presets, sm__kv, i).group, p->str) == 0;
    if (known)
      continue;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.name = p->str;
    registry_search(c, &r, regs);
  }
}
