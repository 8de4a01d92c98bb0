/* advisor_int.h - what the parts of the extractor share: the bounded,
 * read-only view of the repository, the layered store of configuration
 * values ("params") with their evidence, the signals found in the code,
 * and the entry points of each reader.
 *
 * One extraction owns one sm__ctx.  Every string in it lives in the
 * context's arena and dies with it. */
#ifndef SM_ADVISOR_INT_H
#define SM_ADVISOR_INT_H

#include <stddef.h>

#include "schedmate/sm_advisor.h"
#include "schedmate/sm_util.h"

/* ==== Layers of configuration, lowest first ==== */

/* Where a value was written decides which one the program uses: defaults
 * in imported code < defaults in the entry script < config files < the
 * command line < presets that the code applies after parsing. */
enum {
  SM__L_CODE = 1,   /* a default in a module the entry imports */
  SM__L_ENTRY = 2,  /* a default in the entry script itself */
  SM__L_CONFIG = 3, /* a config file (YAML, JSON, TOML, Python) */
  SM__L_CMD = 5,    /* the launch command (or the script that runs it) */
  SM__L_PRESET = 6  /* a preset table the code applies over the config */
};

/* Kinds of value. */
enum {
  SM__V_NULL = 0, /* None, null, ~ */
  SM__V_NUM,      /* a number */
  SM__V_BOOL,     /* true/false, num is 0 or 1 */
  SM__V_STR,      /* a string */
  SM__V_LIST,     /* a list: str is its text, num the sum of its numbers */
  SM__V_REF,      /* a reference to another key (str), e.g. args.lr */
  SM__V_EXPR,     /* arithmetic over keys: str is RPN ("a b * 2 /") */
  SM__V_UNKNOWN   /* set to something the extractor cannot know */
};

/* One configuration value. */
typedef struct sm__param {
  const char *key;  /* normalised dotted key: "trainer.batch_size" */
  const char *leaf; /* its last component: "batch_size" */
  int kind;         /* SM__V_* */
  double num;       /* value of NUM, BOOL and LIST */
  const char *str;  /* text of STR, LIST and REF */
  int list_n;       /* number of list elements */
  int layer;        /* SM__L_* */
  int order;        /* insertion sequence, later wins within a layer */
  int flag;         /* an argparse store_true/store_false option */
  int opt;          /* an argparse option's default */
  const char *ev;   /* evidence: "path:line" or "command" */
} sm__param;

typedef struct sm__ctx sm__ctx;

/* ==== The value tree (vtree.c) ====
 *
 * Every configuration document (YAML, JSON, TOML, gin, a Python config
 * module, a class instance) becomes a tree of values.  Each node carries
 * its provenance (file and line).  Inheritance (bases, includes, _base_
 * lists, OmegaConf merges) is an explicit merge of trees; the merged tree
 * is then published into the layered store (sm__param) at one layer.
 * Nodes may be shared between trees: a merge or a path update copies the
 * maps along the changed path and never modifies its inputs. */
enum {
  SM__T_UNKNOWN = 0, /* a value that cannot be known without running code */
  SM__T_NULL,        /* None, null, ~ */
  SM__T_NUM,         /* a number */
  SM__T_BOOL,        /* true/false: num is 0 or 1 */
  SM__T_STR,         /* a string */
  SM__T_LIST,        /* a list or tuple: items in e[] (keys NULL) */
  SM__T_MAP,         /* a mapping: members in e[] */
  SM__T_REF,         /* a reference to a dotted key: str (${a.b}, !ref) */
  SM__T_EXPR,        /* arithmetic over keys: str is RPN */
  SM__T_CALL,        /* a call not evaluated: str callee, members kwargs */
  SM__T_SYM,         /* an external name (torch.float16): str dotted */
  SM__T_FUNC,        /* a Python function (aux: evaluator data) */
  SM__T_CLASS,       /* a Python class (aux) */
  SM__T_MODULE,      /* a Python module of the repository (aux) */
  SM__T_OBJ          /* an instance: members are its attributes (aux) */
};

/* Node flags. */
enum {
  SM__VF_QUOTED = 1, /* a quoted scalar: always a string */
  SM__VF_DELETE = 2, /* replaces the base instead of merging (_delete_) */
  SM__VF_LAZY = 4    /* LazyCall(X) waiting for its arguments */
};

typedef struct sm__vnode sm__vnode;

/* One member of a map (key set) or item of a list (key NULL). */
typedef struct sm__vent {
  const char *key; /* member name, NULL for list items */
  sm__vnode *v;    /* value */
} sm__vent;

struct sm__vnode {
  int t;            /* SM__T_* */
  unsigned flags;   /* SM__VF_* */
  double num;       /* NUM, BOOL */
  const char *str;  /* STR text, REF key, EXPR RPN, CALL/SYM/FUNC name */
  sm__vent *e;      /* members or items */
  int n;            /* used entries */
  int cap;          /* allocated entries */
  const char *path; /* provenance: root-relative file, NULL command */
  int line;         /* 1-based line, 0 unknown */
  void *aux;        /* evaluator data (functions, classes, modules) */
};

/* Merge rules of sm__vt_merge. */
enum {
  SM__VM_DEEP = 0,       /* maps merge member by member, lists replace */
  SM__VM_DELETE_KEY = 1, /* honour `_delete_=True` (mmengine) */
  SM__VM_TOP_ONLY = 2    /* only top-level keys replace (maxtext) */
};

sm__vnode *sm__vt_new(sm__ctx *c, int t, const char *path, int line);
sm__vnode *sm__vt_strv(sm__ctx *c, const char *s, const char *path, int line);
sm__vnode *sm__vt_numv(sm__ctx *c, int t, double v, const char *path, int line);
/* A scalar from text as configs write it (numbers, booleans, null,
 * ${a.b} references, strings). */
sm__vnode *sm__vt_text(sm__ctx *c, const char *text, const char *path,
                       int line);
/* Appends an item (list) or sets a member (map, replacing one of the same
 * key).  Only for nodes the caller has just made.  Returns 0 or
 * SM_ENOMEM. */
int sm__vt_push(sm__ctx *c, sm__vnode *list, sm__vnode *v);
int sm__vt_put(sm__ctx *c, sm__vnode *map, const char *key, sm__vnode *v);
/* Member of a map (NULL when absent or not a map). */
sm__vnode *sm__vt_get(const sm__vnode *map, const char *key);
/* Member at a dotted path ("train.batch_size"). */
sm__vnode *sm__vt_get_path(const sm__vnode *root, const char *dotted);
/* A shallow copy (the entry array is copied, values shared). */
sm__vnode *sm__vt_copy(sm__ctx *c, const sm__vnode *n);
/* base with over merged on top under rules; a new tree (inputs are not
 * modified).  Either may be NULL. */
sm__vnode *sm__vt_merge(sm__ctx *c, sm__vnode *base, sm__vnode *over,
                        int rules);
/* root with the value at a dotted path replaced (maps created along the
 * way); a new root.  root may be NULL. */
sm__vnode *sm__vt_set_path(sm__ctx *c, sm__vnode *root, const char *dotted,
                           sm__vnode *v);
/* Removes the member key of a map made by the caller. */
void sm__vt_del(sm__vnode *map, const char *key);
/* Truthiness of a value: 1, 0, or -1 unknown. */
int sm__vt_truth(const sm__vnode *n);
/* Writes every scalar, list and reference of the tree into the layered
 * store under prefix (may be NULL) at layer. */
void sm__vt_publish(sm__ctx *c, const sm__vnode *root, const char *prefix,
                    int layer);
/* YAML (libyaml) and JSON (cJSON) text into a tree; NULL with a warning
 * on a syntax error. */
sm__vnode *sm__vt_yaml(sm__ctx *c, const char *rel, const char *text,
                       size_t len);
sm__vnode *sm__vt_json(sm__ctx *c, const char *rel, const char *text,
                       size_t len);
/* TOML text (the tree-sitter TOML grammar) into a tree. */
sm__vnode *sm__vt_toml(sm__ctx *c, const char *rel, const char *text,
                       size_t len);
/* key=value words (a dotlist, Hydra/OmegaConf/maxtext overrides) as a
 * tree of dotted paths. */
sm__vnode *sm__vt_dotlist(sm__ctx *c, const char *const *words, int n,
                          const char *const *ev);

/* ==== Signals found in the code ==== */

#define SM__SIGNALS(XX)                                                        \
  XX(DDP)             /* DistributedDataParallel */                            \
  XX(FSDP)            /* FullyShardedDataParallel, --fsdp */                   \
  XX(DEEPSPEED)       /* deepspeed.initialize or a DeepSpeed config */         \
  XX(DP)              /* nn.DataParallel */                                    \
  XX(AMP)             /* autocast / GradScaler: fp16 unless bf16 */            \
  XX(BF16)            /* torch.bfloat16 as compute dtype */                    \
  XX(FP16)            /* .half() / torch.float16 compute */                    \
  XX(LORA)            /* peft / LoRA adapters */                               \
  XX(HF_TRAINER)      /* transformers.Trainer */                               \
  XX(TRANSFORMERS)    /* imports transformers */                               \
  XX(LIGHTNING)       /* PyTorch Lightning */                                  \
  XX(VISION)          /* torchvision / timm */                                 \
  XX(DEVICE_COUNT)    /* torch.cuda.device_count(): all visible GPUs */        \
  XX(DEVICE_MAP)      /* device_map="auto": one process, all GPUs */           \
  XX(DS_LAUNCHER)     /* runs the deepspeed launcher itself */                 \
  XX(ACCUM_DIV)       /* accumulation divided by the world size */             \
  XX(BATCH_DIV)       /* the batch option divided by the world size */         \
  XX(FROM_PRETRAINED) /* loads pre-trained weights */                          \
  XX(FROM_SCRATCH)    /* builds a model from a config */                       \
  XX(CAUSAL_LM)       /* a causal language model */                            \
  XX(QUANT)           /* 8/4-bit base weights */                               \
  XX(TORCH)           /* imports torch at all */                               \
  XX(SPAWN)           /* the code starts its own worker processes */           \
  XX(RELAUNCH)        /* the code runs a launcher on itself (torchrun ...) */  \
  XX(JAX)             /* imports jax (or flax, haliax, equinox) */

typedef enum sm__sig {
#define SM__XX(n) SM__SIG_##n,
  SM__SIGNALS(SM__XX)
#undef SM__XX
      SM__NSIG
} sm__sig;

/* Keyword families that hint at task and domain. */
/* clang-format off */
#define SM__WORDS(XX)                                                          \
  XX(LM)                                                                       \
  XX(DETECTION)                                                                \
  XX(SEGMENTATION)                                                             \
  XX(PANOPTIC)                                                                 \
  XX(MASKS)                                                                    \
  XX(DIFFUSION)                                                                \
  XX(GAN)                                                                      \
  XX(SELFSUP)                                                                  \
  XX(MULTIMODAL)                                                               \
  XX(SPEECH)                                                                   \
  XX(RECSYS)                                                                   \
  XX(TRANSLATION)                                                              \
  XX(CONTRASTIVE)                                                              \
  XX(CLASSIFICATION)                                                           \
  XX(INSTRUCT)                                                                 \
  XX(FINETUNE)                                                                 \
  XX(PRETRAIN)                                                                 \
  XX(TEXTDET)                                                                  \
  XX(TEXTREC)                                                                  \
  XX(INSTANCE)                                                                 \
  XX(VIDEO)                                                                    \
  XX(POSE)                                                                     \
  XX(ACTION)                                                                   \
  XX(PREFERENCE)                                                               \
  XX(SPEAKER)                                                                  \
  XX(GRAPH)                                                                    \
  XX(GRAPHLEVEL)                                                               \
  XX(NODELEVEL)                                                                \
  XX(LINKLEVEL)                                                                \
  XX(TIMESERIES)                                                               \
  XX(SUPERRES)                                                                 \
  XX(CODEC)                                                                    \
  XX(TTS)
/* clang-format on */

typedef enum sm__word {
#define SM__XX(n) SM__W_##n,
  SM__WORDS(SM__XX)
#undef SM__XX
      SM__NWORD
} sm__word;

/* A candidate name (model or dataset) seen in code. */
typedef struct sm__cand {
  const char *name;  /* as written */
  const char *ev;    /* where */
  int weight;        /* higher is better */
  const char *guard; /* conditions it was seen under (RPN), NULL none */
} sm__cand;

/* key=value pairs of a preset (model_type table) or a factory function. */
typedef struct sm__kv {
  const char *group; /* preset name or function name */
  const char *key;   /* leaf key */
  double num;        /* numeric value (only numbers are kept) */
  const char *ev;    /* evidence */
  const char *guard; /* conditions the table is applied under, NULL none */
} sm__kv;

/* A call that turns a parallel strategy on (DDP(model), FSDP(...),
 * deepspeed.initialize, DataParallel, mp.spawn) and the condition the
 * code reaches it under, so that a wrapper in a branch the job's
 * options do not take does not count. */
typedef struct sm__use {
  int sig;           /* SM__SIG_* */
  const char *ev;    /* where */
  int layer;         /* layer of its file */
  const char *guard; /* RPN of the enclosing conditions, NULL: always */
} sm__use;

/* A value the code sets under conditions over the job's options (a
 * config call's keywords in one branch of `if args.card == ...`): the
 * param at index is ruled out once the options decide the guard false. */
typedef struct sm__guarded {
  int index;         /* into sm__ctx.params */
  const char *guard; /* RPN of the enclosing conditions */
} sm__guarded;

/* A Python file waiting to be scanned. */
typedef struct sm__pyfile {
  const char *path; /* root-relative */
  int layer;        /* SM__L_ENTRY or SM__L_CODE */
  int depth;        /* import depth from the entry */
  const char *want; /* ",a,b,": the names importers need, NULL all */
} sm__pyfile;

/* A growable array of fixed-size items in plain memory. */
typedef struct sm__vec {
  void *v;   /* items */
  int n;     /* used */
  int cap;   /* allocated */
  size_t sz; /* item size */
} sm__vec;

#define SM__MAX_ENV 64

/* The readers a lower file of the folder must reach although they sit
 * above it (a config base that is a Python or gin file, a script's launch
 * line, setup.py's package_dir).  The lower file calls through these; the
 * context's assembler (sm__ctx_init) fills them, so that every file
 * depends only on files below it. */
typedef struct sm__ctx_hooks {
  /* A Python config file as a tree (pyeval.c: sm__py_config_tree). */
  sm__vnode *(*py_config_tree)(sm__ctx *c, const char *rel, int depth);
  /* gin bindings as a tree (gin.c: sm__vt_gin). */
  sm__vnode *(*gin_tree)(sm__ctx *c, const char *rel, const char *text,
                         size_t len, int depth);
  /* setuptools package_dir of setup.py (pyeval.c: sm__py_package_dir). */
  const sm__vnode *(*package_dir)(sm__ctx *c);
  /* Interprets the launch words a script runs (command.c:
   * sm__launch_words). */
  int (*launch_words)(sm__ctx *c, const char **w, const char **ev, int n,
                      const char *dir, int depth);
  /* Notes a file read for the configuration provenance (unexplained.c:
   * sm__unexp_note_file); NULL outside an extraction (the LLM stage's
   * view reads through a context of its own). */
  void (*note_file)(sm__ctx *c, const char *rel, const char *data, size_t len);
} sm__ctx_hooks;

/* The extraction context. */
struct sm__ctx {
  const sm_extract_req *req;   /* the request (borrowed) */
  sm_extract_res *res;         /* the result being filled (borrowed) */
  sm_arena arena;              /* every string below */
  char *root;                  /* real path of the repository root */
  int root_fd;                 /* O_PATH descriptor of the root, or -1 */
  size_t root_len;             /* its length */
  const char *cwd;             /* root-relative command directory ("" root) */
  size_t max_file;             /* per-file cap */
  int max_files;               /* file count cap */
  size_t max_total;            /* byte cap */
  double deadline;             /* sm_now() past which we stop */
  size_t bytes_read;           /* total so far */
  int stopped;                 /* a limit was hit: read nothing more */
  sm__vec read_paths;          /* const char *: files already read */
  sm__vec params;              /* sm__param */
  int seq;                     /* next param order */
  const char *sig[SM__NSIG];   /* evidence of each signal, NULL if absent */
  int sig_layer[SM__NSIG];     /* layer of the file the signal came from */
  const char *word[SM__NWORD]; /* evidence of each word family */
  int word_n[SM__NWORD];       /* weighted count of each word family */
  int word_strong[SM__NWORD];  /* the same from the command and entry */
  int word_src[SM__NWORD][4];  /* events by source: 1 code (imported
                                * modules, the entry's string literals),
                                * 2 entry and command, 3 config files;
                                * 0 those of 1 from imported modules */
  int words_module;            /* words now come from an imported module */
  sm__vec models;              /* sm__cand from code */
  sm__vec datasets;            /* sm__cand from code */
  sm__vec presets;             /* sm__kv */
  sm__vec factories;           /* sm__kv */
  sm__vec pyqueue;             /* sm__pyfile: files to scan */
  int pyqueue_done;            /* files of pyqueue already scanned */
  int promoted;                /* function defaults were promoted */
  size_t code_bytes;           /* bytes of imported modules parsed */
  const char *remainder_pos;   /* positional taking the rest (opts) */
  const char *primary_cfg;     /* the first config file the command names */
  void *fs_cache;              /* answers of file tests (source.c) */
  size_t fs_used;              /* entries in it */
  sm__vec flags;               /* const char *: store_true option names */
  sm__vec optalias;            /* const char *[2]: option spelling, key */
  sm__vec positionals;     /* const char *: argparse positionals, in order */
  sm__vec classes;         /* const char *: classes defined in the code */
  const char *fire_target; /* function given to fire.Fire, or NULL */
  const char *hydra_path;  /* @hydra.main config_path, root-relative */
  const char *hydra_name;  /* @hydra.main config_name */
  const char *entry;       /* root-relative entry script, or NULL */
  const char *entry_dir;   /* its directory */
  const char *entry_pkg;   /* top package directory of a console entry */
  /* Environment of the command: VAR=value prefixes and exports. */
  const char *env_k[SM__MAX_ENV]; /* names */
  const char *env_v[SM__MAX_ENV]; /* values */
  int n_env;                      /* count */
  /* Resources from the launcher. */
  double gpus_per_node;      /* processes (GPUs) per node, 0 unknown */
  const char *gpn_ev;        /* its evidence */
  double nodes;              /* nodes, 0 unknown */
  const char *nodes_ev;      /* its evidence */
  int gpus_unfixed;          /* the launcher takes all visible GPUs */
  int one_process;           /* one process drives every visible device
                              * (DataParallel, a JAX program): its batch
                              * is the batch of all of them */
  int nodes_unfixed;         /* a hostfile or range decides the nodes */
  int launcher;              /* a multi-process launcher was used */
  int multiproc;             /* the program starts a process per GPU */
  const char *launcher_name; /* "torchrun", "deepspeed", ... */
  double gpus_total;         /* total processes (mpirun -np), 0 unknown */
  const char *gt_ev;         /* its evidence */
  /* The entry script's own arguments, with the evidence of each. */
  const char **sargs;    /* words after the script or module */
  const char **sargs_ev; /* "command" or "path:line" per word */
  int n_sargs;           /* count */
  const char *cmd_dir;   /* directory the entry runs in */
  double world;          /* data-parallel world size, 0 unknown */
  /* Launcher-level facts (accelerate / deepspeed flags). */
  const char *precision;    /* "bf16", "fp16" from the launcher */
  const char *precision_ev; /* its evidence */
  const char *strategy;     /* "fsdp", "deepspeed_zero2" ... */
  const char *strategy_ev;  /* its evidence */
  /* Hints of the alias table for task and domain. */
  const char *hint_task;   /* from the model name */
  const char *head_task;   /* from the head class the code builds */
  const char *head_ev;     /* its evidence */
  int head_layer;          /* its layer */
  const char *hint_domain; /* from the model name */
  const char *ds_task;     /* from the dataset name */
  const char *ds_domain;   /* from the dataset name */
  /* Caches: every file is read and parsed once per extraction. */
  sm__vec srcs;         /* sm__src: file text and syntax trees */
  sm__vec cfgs;         /* config trees by path (cfgfile.c) */
  sm__vec pymods;       /* evaluated Python modules (pyeval.c) */
  int eval_steps;       /* evaluator work done, bounded */
  sm__vec pycalls;      /* calls between the entry's functions (pyscan.c) */
  sm__vec model_vars;   /* const char *: variables holding the model */
  sm__vec dc_instances; /* sm__vnode *: dataclasses given to parsers */
  sm__vec built;      /* const char *[3]: variable, class it holds, evidence */
  sm__vec uses;       /* sm__use: where the code turns a strategy on */
  sm__vec guarded;    /* sm__guarded: values set under option guards */
  sm__vnode *pkg_dir; /* setuptools package_dir map, or NULL */
  int pkg_dir_done;   /* pkg_dir was looked for */
  const char *cfg_arg_rel; /* config file given with ":arg" */
  const char *cfg_arg;     /* that argument */
  /* Keys of each role with the token-rule matches (sm__role_keys),
   * valid while the store holds role_params values. */
  const char *role_name[16];
  const char *const *role_list[16];
  int role_params[16];
  int n_role;
  const char *void_sel; /* a preset selector whose presets are ruled out */
  /* Upcalls: the lower files of the folder reach the readers above them
   * only through these, set by sm__ctx_init (extract.c). */
  sm__ctx_hooks up;
};

/* ==== ctx.c: vectors, strings, warnings, limits ==== */

void sm__vec_init(sm__vec *v, size_t sz);
void sm__vec_release(sm__vec *v);
/* Returns a zeroed new item, or NULL on exhaustion. */
void *sm__vec_push(sm__vec *v);
#define SM__AT(vec, type, i) (((type *)(vec).v)[i])

char *sm__strdup(sm__ctx *c, const char *s);
char *sm__strndup(sm__ctx *c, const char *s, size_t n);
char *sm__printf(sm__ctx *c, const char *fmt, ...) SM_PRINTF(2, 3);
/* Evidence string "path:line". */
const char *sm__ev(sm__ctx *c, const char *path, int line);
void sm__warn(sm__ctx *c, const char *fmt, ...) SM_PRINTF(2, 3);
/* Sets up / frees a context's arena and vectors (extract.c). */
void sm__ctx_init(sm__ctx *c, const sm_extract_req *req, sm_extract_res *res);
void sm__ctx_release(sm__ctx *c);
/* True when the time budget is spent (warns once). */
int sm__expired(sm__ctx *c);

/* ==== repo.c: the read-only repository ==== */

/* Sets root, cwd and limits from the request.  Returns 0 or an error. */
int sm__repo_open(sm__ctx *c, sm_err *err);
/* Closes the root descriptor (sm__ctx_release calls it). */
void sm__repo_close(sm__ctx *c);
/* Joins base (root-relative directory) and path, collapses "." and "..",
 * and returns the root-relative result, or NULL when it leaves the root
 * (absolute paths are accepted only inside the root). */
const char *sm__repo_join(sm__ctx *c, const char *base, const char *path);
/* True when rel names a regular file inside the root whose real path stays
 * inside the root (no symlink escape) and that is not skipped. */
int sm__repo_is_file(sm__ctx *c, const char *rel);
/* True when something (even a dangling link or a FIFO) is at rel. */
int sm__repo_exists(sm__ctx *c, const char *rel);
/* True when rel is a directory inside the root (same checks). */
int sm__repo_is_dir(sm__ctx *c, const char *rel);
/* Reads a file (once: a second read gives SM_EBUSY).  *data is
 * NUL-terminated and lives in the arena.  Problems become warnings and a
 * negative return. */
int sm__repo_read(sm__ctx *c, const char *rel, const char **data, size_t *len);
/* Like sm__repo_read but a file already read is read again (for configs
 * used twice). */
int sm__repo_read_again(sm__ctx *c, const char *rel, const char **data,
                        size_t *len);

/* ==== source.c: each file read and parsed once ==== */

/* Grammars of the syntax trees kept per file. */
enum { SM__G_PYTHON = 0, SM__G_BASH, SM__G_TOML, SM__NGRAMMAR };

/* Text of a repository file, read at most once (later calls return the
 * same text).  Returns 0, or the negative code of sm__repo_read. */
int sm__src_text(sm__ctx *c, const char *rel, const char **text, size_t *len);
/* The syntax tree of a file in grammar g (SM__G_*), parsed once; NULL
 * when the file cannot be read or the grammar does not load.  *text gets
 * the source.  The tree belongs to the context. */
struct TSTree;
struct TSTree *sm__src_tree(sm__ctx *c, const char *rel, int g,
                            const char **text);
/* Parses text that is not a file (an inline script) in grammar g; the
 * tree belongs to the context. */
struct TSTree *sm__src_tree_text(sm__ctx *c, const char *text, size_t len,
                                 int g);
/* sm__repo_is_file / sm__repo_is_dir with the answers kept for the
 * extraction. */
int sm__fs_is_file(sm__ctx *c, const char *rel);
int sm__fs_is_dir(sm__ctx *c, const char *rel);
/* Frees the trees (sm__ctx_release calls it). */
void sm__src_release(sm__ctx *c);
/* Lists the entries of a repository directory (names only, skipped
 * directories left out); returns the count or a negative code. */
int sm__src_list(sm__ctx *c, const char *dir, const char ***names, int max);

/* ==== params.c: the layered value store ==== */

/* Normalises a key into out: lower case, '-' to '_', leading dashes and
 * '+'/'~' dropped. */
void sm__key_norm(const char *in, size_t n, char *out, size_t cap);
/* Adds a value parsed from text (numbers, booleans, None/null, lists,
 * strings). */
sm__param *sm__param_text(sm__ctx *c, const char *key, const char *text,
                          int layer, const char *ev);
sm__param *sm__param_num(sm__ctx *c, const char *key, double v, int kind,
                         int layer, const char *ev);
sm__param *sm__param_str(sm__ctx *c, const char *key, const char *s, int kind,
                         int layer, const char *ev);
/* The value the program uses for any of names (leaf names, or dotted
 * suffixes such as "train.epochs"): highest layer, then the earliest name
 * in the list, then the latest written.  References are followed.
 * Returns NULL when none is set. */
const sm__param *sm__param_get(sm__ctx *c, const char *const *names);
/* As sm__param_get, passing over the keys skip() rejects (a key of another
 * component), so that another key of the same name is still found. */
const sm__param *sm__param_get_unless(sm__ctx *c, const char *const *names,
                                      int (*skip)(const sm__param *));
/* As sm__param_get, restricted to layers >= min_layer. */
const sm__param *sm__param_get_min(sm__ctx *c, const char *const *names,
                                   int min_layer);
/* Follows a reference; returns p itself when it is not one. */
const sm__param *sm__param_deref(sm__ctx *c, const sm__param *p);
/* The numeric value of p (numbers, booleans, expressions over other
 * keys, references).  Returns 0, or -1 when it is not a known number. */
int sm__param_value(sm__ctx *c, const sm__param *p, double *out);
/* Records the roles an option's help text gives it that its name does
 * not (--b with help "total batch size of all GPUs" is the global
 * batch). */
void sm__help_roles(sm__ctx *c, const char *key, const char *help,
                    const char *ev);
/* The truth of a condition in RPN (comparisons, and/or/not, keys):
 * 1, 0, or -1 when it depends on something unknown. */
int sm__cond_value(sm__ctx *c, const char *rpn);
/* Environment lookup (VAR=value prefixes, exports); NULL if unset. */
const char *sm__env(sm__ctx *c, const char *name);
/* Marks a signal / word family with its evidence (the first one stays,
 * but a higher layer replaces a lower). */
void sm__signal(sm__ctx *c, sm__sig s, const char *ev, int layer);
void sm__word_add(sm__ctx *c, sm__word w, const char *ev, int weight);
/* Scans text (an identifier, a path, a command word) for word families. */
void sm__words_in(sm__ctx *c, const char *s, size_t n, const char *ev,
                  int weight);
/* The same with the evidence made only when a family is found. */
void sm__words_at(sm__ctx *c, const char *s, size_t n, const char *path,
                  int line, int weight);
void sm__cand_add(sm__ctx *c, sm__vec *v, const char *name, const char *ev,
                  int weight);

/* ==== shell.c: shell words and scripts ==== */

/* Splits one command line into words with POSIX quoting; $VAR, ${VAR},
 * ${VAR:-x} and $1.. are expanded from the script's variables when vars
 * is not NULL.  Returns the count, or -1 on unbalanced quotes.  Words are
 * arena strings. */
typedef struct sm__shvars {
  const char *k[128]; /* names ("1".."9" for positional arguments) */
  const char *v[128]; /* values */
  int n;              /* count */
} sm__shvars;
int sm__sh_split(sm__ctx *c, const char *line, size_t n, sm__shvars *vars,
                 const char ***words, int max_words);
const char *sm__sh_get(const sm__shvars *vars, const char *name);
/* acc = acc OP r for $(( )) (+ - * / %, C's integer rules); -1 on a
 * division by zero. */
int sm__sh_arith_op(char op, long long *acc, long long r);
void sm__sh_set(sm__ctx *c, sm__shvars *vars, const char *name,
                const char *value);

/* ==== launchwords.c: launcher words, options, Slurm resources ==== */

/* The last component of a path. */
const char *sm__base_name(const char *s);
/* Is w a shell assignment NAME=value? */
int sm__is_assignment(const char *w);
/* How much words look like a training launch; launcher / wrapper words. */
int sm__launch_score(const char *const *w, int n);
int sm__is_launch_word(const char *const *w, int n);
int sm__is_wrapper(const char *w);
/* Is w[0] a trainer installed from another package (fairseq-train and
 * its kind: TOOL-train, TOOL_finetune, TOOL-pretrain) that is passed a
 * training option or a configuration file among w[1..n-1]?  Nothing of it
 * is in the repository, but its options are the job's.
 * sm__is_trainer_word: the word form only. */
int sm__is_external_trainer(const char *const *w, int n);
int sm__is_trainer_word(const char *w);
/* Does the stem of a dataset class (stem[0..n), the name before
 * "Dataset") only name a format or a method (Char, PackedJSON,
 * BasicImage)? */
int sm__dataset_class_generic(const char *stem, size_t n);
/* Environment of the launch (name of kn bytes, or NUL-terminated). */
void sm__set_envn(sm__ctx *c, const char *k, size_t kn, const char *v);
void sm__set_env(sm__ctx *c, const char *k, const char *v);
/* A positive count up to a million, or -1. */
int sm__parse_count(const char *s, double *out);
/* "--opt=value" or "--opt value" at words[*i] of nw: returns the value
 * and advances *i, or NULL. */
const char *sm__opt_value(const char *const *words, int nw, int *i,
                          const char *name);
/* GPUs per node / nodes from an option value (force: over a value set). */
void sm__set_gpn(sm__ctx *c, const char *v, const char *ev, int force);
void sm__set_nodes(sm__ctx *c, const char *v, const char *ev, int force);
/* Applies one sbatch/srun option at words[*i]; 0 when words[*i] is not an
 * option (the command starts there). */
int sm__slurm_opt(sm__ctx *c, const char *const *w, int n, int *i,
                  const char *ev);
/* #SBATCH option text. */
void sm__slurm_line(sm__ctx *c, const char *text, size_t n, const char *ev);

/* ==== command.c: the launch command ==== */

/* Parses argv (and any scripts it runs) into launcher facts, the entry
 * script and its arguments, and queues the entry for scanning.  Returns
 * 0; problems are warnings. */
int sm__command(sm__ctx *c, const char *const *argv, int argc);
/* The same for an inline script (sm_extract_req.script): text is read as
 * the script `bash NAME ARGS...` runs in the command's directory.
 * Returns 0 or SM_ENOMEM; problems are warnings. */
int sm__command_script(sm__ctx *c, const char *text, size_t len,
                       const char *name, const char *const *args, int nargs);
/* Applies the entry script's arguments (after the code scan has told
 * which options are flags).  */
void sm__command_args(sm__ctx *c);
/* Reads a launch given as words with their evidence, run in dir (a
 * script's chosen command).  Returns 0 or -1 with a warning.  Reached
 * from shrun.c through sm__ctx_hooks.launch_words. */
int sm__launch_words(sm__ctx *c, const char **w, const char **ev, int n,
                     const char *dir, int depth);

/* ==== shrun.c: launch scripts on the bash syntax tree ==== */

/* Interprets the shell script rel (or inline text when text is not NULL,
 * named rel in evidence) with positional args in directory dir and reads
 * the training launch it runs.  Problems are warnings. */
void sm__sh_run(sm__ctx *c, const char *rel, const char *text, size_t len,
                const char *const *args, int nargs, const char *dir, int depth);

/* ==== cfgtree.c: configuration files as trees, by path ==== */

/* Is p named like a config file the extractor reads (.yaml .yml .json
 * .toml .py .gin)? */
int sm__cfg_is_config_name(const char *p);
/* The tree of a config file with its inheritance resolved (bases merged
 * under it by the rule of its system), loaded once; NULL with a warning
 * when it cannot be read.  depth counts nested bases.  Python and gin
 * files are read through sm__ctx_hooks. */
sm__vnode *sm__cfg_tree(sm__ctx *c, const char *rel);
sm__vnode *sm__cfg_tree_depth(sm__ctx *c, const char *rel, int depth);
/* The path of the i-th config file loaded so far (0 <= i < c->cfgs.n),
 * or NULL. */
const char *sm__cfg_loaded(sm__ctx *c, int i);
/* Merges the bases that tree t of file rel names (_BASE_, _base_,
 * base_config, __include__, ...) under it. */
sm__vnode *sm__cfg_inherit(sm__ctx *c, const char *rel, sm__vnode *t,
                           int depth);
/* A file named in rel: next to it, in each directory above, at the root.
 * Root-relative path or NULL. */
const char *sm__cfg_find_near(sm__ctx *c, const char *rel, const char *name);
/* A DeepSpeed config tree with train_batch_size read as the total batch
 * of all ranks (a copy), or t itself. */
sm__vnode *sm__ds_config(sm__ctx *c, sm__vnode *t);

/* ==== cfgfile.c: configuration files into the store ==== */

/* Loads a config file (any format above) and publishes it into params at
 * layer, keys prefixed by prefix (may be NULL).  Returns 0, or a negative
 * code with a warning. */
int sm__config_load(sm__ctx *c, const char *rel, const char *prefix, int layer);
/* Launcher facts of an accelerate config tree; 1 when t is one. */
int sm__accelerate_tree(sm__ctx *c, const sm__vnode *t);
/* Preset files named by a value (model_name: llama2-7b with
 * configs/models/llama2-7b.yml) are loaded over the config. */
void sm__named_presets(sm__ctx *c);
/* The modules of the classes config `_target_`s (Hydra, LazyConfig,
 * Lightning class_path) instantiate join the code scan. */
void sm__config_targets(sm__ctx *c);
/* Hydra: composes config_name from dir with its defaults list and the
 * command's group overrides. */
void sm__hydra(sm__ctx *c, const char *dir, const char *name,
               const char *const *overrides, int n_overrides);
/* gin bindings (Class.param = value, include, macros) as a tree. */
sm__vnode *sm__vt_gin(sm__ctx *c, const char *rel, const char *text, size_t len,
                      int depth);
/* Console entry point `name` from pyproject.toml / setup.py / setup.cfg:
 * returns the module path ("pkg.cli:main" -> "pkg.cli") or NULL. */
const char *sm__console_entry(sm__ctx *c, const char *name);

/* ==== pymodule.c: Python modules by name, the scan queue ==== */

/* Resolves a module name (dots) from a directory to a file, or NULL;
 * level counts the leading dots of a relative import. */
const char *sm__py_module_path(sm__ctx *c, const char *dir, const char *module,
                               int level);
/* Queues a Python file for scanning. */
void sm__py_queue(sm__ctx *c, const char *rel, int layer, int depth);
/* The same for a module imported for some names only (want ",a,b,"). */
void sm__py_queue_want(sm__ctx *c, const char *rel, int layer, int depth,
                       const char *want);

/* ==== pyscan.c: Python source ==== */

/* Scans the queued Python files (entry first, then imports, bounded). */
void sm__py_scan_all(sm__ctx *c);
/* A name the job selects (--arch NAME, model._name) that no preset or
 * factory read so far defines: the registry directories of the
 * repository (models/, archs/, ...) are searched for the file that
 * registers or defines it, which joins the code scan. */
void sm__registry_lookup(sm__ctx *c);
/* --config NAME / --preset NAME naming a registry function: its
 * returned config object is published as a config layer (pyscan.c). */
void sm__config_registry(sm__ctx *c);
/* Scans one Python file as a config file (plain assignments) at layer. */
int sm__py_config(sm__ctx *c, const char *rel, int layer);

/* ==== pyeval.c: the partial evaluator of Python configuration code ==== */

/* The tree of a Python config file: an mmengine/mmcv module with its
 * _base_ files merged, an ml_collections get_config() result, a LazyConfig
 * module, an experiment class instance, or the module's names. */
sm__vnode *sm__py_config_tree(sm__ctx *c, const char *rel, int depth);
/* Evaluates a module of the repository (once) and returns its namespace
 * (a map of its names), or NULL. */
sm__vnode *sm__py_module_ns(sm__ctx *c, const char *rel);
/* Calls function fn of module rel with positional args; the result or
 * NULL. */
sm__vnode *sm__py_call_fn(sm__ctx *c, const char *rel, const char *fn,
                          sm__vnode **args, int nargs);
/* An instance of a class value (constructor defaults, __init__,
 * dataclass fields, documented defaults of library base classes). */
sm__vnode *sm__py_instantiate(sm__ctx *c, sm__vnode *cls);
/* The value a dotted name has in module rel (after its imports), or
 * NULL. */
sm__vnode *sm__py_resolve(sm__ctx *c, const char *rel, const char *dotted);
/* The argument given with a config file on the command line
 * (`--config cfg.py:arg`), or NULL. */
const char *sm__py_config_arg(sm__ctx *c, const char *rel);
/* Dataclasses handed to argument parsers while evaluating: cleared, and
 * published (their defaults) at layer. */
void sm__py_dc_instances_clear(sm__ctx *c);
/* setuptools package_dir of setup.py (package name -> directory), read
 * once; NULL when there is none. */
const sm__vnode *sm__py_package_dir(sm__ctx *c);
void sm__py_dc_instances_publish(sm__ctx *c, int layer);
void sm__py_set_config_arg(sm__ctx *c, const char *rel, const char *arg);

/* ==== keys.c: the keys that carry each field ==== */

/* The keys of a role ("per_device", "global", "accum", "steps", "epochs",
 * "lr", "d_model", "n_layers", "seq_len", "gpus", "nodes", "tp", "pp",
 * "vocab", "model", "dataset"), in order of preference; NULL-terminated,
 * never NULL. */
const char *const *sm__keys(const char *role);
/* Does a key's leaf carry role by the token rules of keys.tsv (ROLE~
 * lines: max_train_steps, number_of_epochs)? */
int sm__key_role(const char *leaf, const char *role);
/* A number as configs write it (3e-4, 1_000, .5, -2; 0x10 with hex):
 * 0 and *out, or -1. */
int sm__config_num(const char *s, int hex, double *out);
/* The configuration key a reference in code stands for, lower-cased in
 * place in t: `args.lr` (an attribute) -> "lr", `config.TRAIN.LR` ->
 * "train.lr".  NULL when t holds a space, or with names_only any
 * character outside names and dots. */
const char *sm__dotted_key(char *t, int attribute, int names_only);
/* The keys of a role for this extraction: the list of sm__keys, then
 * the leaves of the values set that the token rules give the role
 * (arena, NULL-terminated). */
const char *const *sm__role_keys(sm__ctx *c, const char *role);

/* ==== frameworks.c: documented defaults of library classes ==== */

/* Documented defaults of a library class the repository builds on
 * (transformers.TrainingArguments, ...) as a map, or NULL. */
sm__vnode *sm__framework_defaults(sm__ctx *c, const char *dotted);

/* ==== task.c: task and domain from what the job does ==== */

/* Sets task and domain from the votes of the model, the dataset, the
 * training method and the words of the job's path; null when they
 * disagree. */
void sm__task_domain(sm__ctx *c);
/* Counts the words of the job's config values and keys (weight 3). */
void sm__config_words(sm__ctx *c);

/* ==== resolve.c: fields from the evidence ==== */

void sm__resolve(sm__ctx *c);

/* ==== alias.c: normalisation ==== */

/* Canonical model / dataset name of a raw value (a path, a Hub id, an
 * argument).  Returns an arena string, or NULL when nothing name-like is
 * left.  *hint_task / *hint_domain get the alias table's hints (may be
 * NULL). */
const char *sm__norm_model(sm__ctx *c, const char *raw, const char **hint_task,
                           const char **hint_domain);
const char *sm__norm_dataset(sm__ctx *c, const char *raw,
                             const char **hint_task, const char **hint_domain);
/* The canonical name of a dataset the alias table knows, or NULL (unlike
 * sm__norm_dataset, an unknown name is not kept). */
const char *sm__known_dataset(sm__ctx *c, const char *raw,
                              const char **hint_task, const char **hint_domain);
/* Looks a canonical-ish name up as a known model (1) or not (0). */
int sm__is_known_model(sm__ctx *c, const char *name);
const char *sm__model_prefix(sm__ctx *c, const char *raw);
/* Loads an operator's alias file in place of the embedded one. */
int sm__alias_load(const char *text, size_t n, sm_err *err);

#endif /* SM_ADVISOR_INT_H */
