/* failure_int.h - what the files of the Failure Handler share: the parsed
 * signature database, the per-line analysis record, the log source and the
 * entry points of each stage (sigdb.c, lines.c, locate.c, cause.c,
 * diagnose.c, plan.c). */
#ifndef SM_FAILURE_INT_H
#define SM_FAILURE_INT_H

#include <math.h>
#include <regex.h>
#include <stdint.h>

#include "schedmate/sm_failure.h"
#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"

/* The failure line classifier, learned at build time from
 * data/classifier/failure.tsv. */
extern const sm_protoset sm__protoset_failure;

/* ==== Vocabulary ==== */

enum { SM__ROLE_CAUSE = 0, SM__ROLE_SYMPTOM, SM__ROLE_BENIGN };

enum {
  SM__CAT_UNKNOWN = 0,
  SM__CAT_INFRA,
  SM__CAT_FRAMEWORK,
  SM__CAT_USER,
  SM__CAT_COUNT
};

enum {
  SM__COMP_NONE = 0,
  SM__COMP_GPU,
  SM__COMP_NVLINK,
  SM__COMP_NETWORK,
  SM__COMP_NODE,
  SM__COMP_STORAGE,
  SM__COMP_GPU_MEMORY,
  SM__COMP_COUNT
};

/* Special reasoning a signature may ask for (key "resolver"). */
enum {
  SM__RESOLVE_NONE = 0,
  SM__RESOLVE_IMPORT,    /* decide own module vs package from the name */
  SM__RESOLVE_TRACEBACK, /* decide user vs framework from the frames */
  SM__RESOLVE_OOM,       /* the job's own memory, or others' on a shared GPU */
  SM__RESOLVE_MEMORY,    /* a kill for host memory: the job's or the node's */
  SM__RESOLVE_CGROUP_MEMORY /* a cgroup's kill: also the job's request */
};

/* What an infrastructure verdict rests on (key "evidence").  Only a
 * report of a broken part earns the planner's gate: a resource that ran
 * out may have been used up by the job itself, and an event from outside
 * (a preemption, a shutdown) says nothing bad about the node. */
enum {
  SM__EV_FAULT = 0, /* a GPU, link, host or filesystem reports a fault */
  SM__EV_LIMIT,     /* a resource ran out or was sized too small */
  SM__EV_EVENT,     /* the job was stopped from outside */
  SM__EV_INFERRED,  /* deduced from a consequence or a generic message */
  SM__EV_COUNT
};

/* The highest confidence a verdict resting on a limit, an event or an
 * inference may have: below the planner's default gate (0.8). */
#define SM__EV_CEILING 0.75

extern const char *const sm__cat_names[SM__CAT_COUNT];
extern const char *const sm__ev_names[SM__EV_COUNT];
extern const char *const sm__comp_names[SM__COMP_COUNT];
extern const char *const sm__role_names[3];

/* ==== Signature database ==== */

/* One compiled regular expression and the literals that must occur in any
 * line it matches (lower case), used to skip it cheaply. */
typedef struct sm__pattern {
  regex_t re;     /* compiled, case-insensitive, extended syntax */
  int id;         /* index in the database's candidate bit set */
  int n_needles;  /* alternatives: one of them must occur; 0 = always run */
  char **needles; /* lower-case literals */
} sm__pattern;

/* A signature: what a family of lines means. */
typedef struct sm__sig {
  char *name;        /* unique name, e.g. "gpu-ecc-uncorrectable" */
  int role;          /* SM__ROLE_* */
  int category;      /* SM__CAT_* */
  int component;     /* SM__COMP_* */
  int retryable;     /* 1/0, or -1: the category's default */
  double confidence; /* how sure a match makes the category */
  int generic;       /* says that something failed, not why */
  int xid_group;     /* capture group with an Xid code, 0 none */
  int resolver;      /* SM__RESOLVE_* */
  int evidence;      /* SM__EV_*: what an infrastructure verdict rests on */
  char *cause;       /* root-cause sentence */
  char *advice;      /* one line for the operator, or NULL */
  char **diagnose;   /* commands overriding the component's */
  int n_diagnose;
  sm__pattern **match; /* any of them */
  int n_match;
  sm__pattern **unless; /* none of them */
  int n_unless;
  int load;  /* load number: later loads are tried first */
  int order; /* position in its file */
  int dead;  /* replaced by a later signature of the same name */
} sm__sig;

/* Meaning of one NVIDIA Xid code. */
typedef struct sm__xid {
  int code;          /* the Xid number */
  int role;          /* SM__ROLE_*: a cause, or teardown noise */
  char *name;        /* mnemonic */
  char *cause;       /* meaning in one sentence */
  int category;      /* SM__CAT_* */
  int component;     /* SM__COMP_* */
  int retryable;     /* 1/0 */
  double confidence; /* how sure the code makes the category */
  int load;          /* load number (later wins) */
} sm__xid;

/* Diagnosis and isolation policy of one component. */
typedef struct sm__comp {
  char **diagnose; /* commands; "{node}" and "{device}" are filled in */
  int n_diagnose;
  int isolate; /* isolating the node can help */
  int replace; /* ask for a replacement node */
} sm__comp;

/* Default meaning of a Python exception type without a signature. */
typedef struct sm__exc {
  char *type;           /* last dotted part, e.g. "KeyError" */
  int category;         /* when user code is on the stack */
  int library_category; /* when only library frames are */
  int component;        /* SM__COMP_* */
  double confidence;    /* base confidence */
  char *cause;          /* sentence */
  int load;             /* later wins */
} sm__exc;

/* A setting of the job that can explain a failure: the communication
 * stack's environment variables and launcher flags.  When a line of the
 * window sets one before a cause that the setting governs, and the job
 * made no progress in between, the failure is the job's configuration. */
typedef struct sm__setting {
  char *name;          /* record name */
  sm__pattern **match; /* lines that show the setting */
  int n_match;
  char **explains; /* signature names of the faults it can cause */
  int n_explains;
  char *cause; /* sentence */
  int load;    /* load number */
} sm__setting;

typedef struct sm__needle_ent {
  const char *s; /* the needle (lower case) */
  uint32_t len;  /* its length, >= 3 */
  int pattern;   /* pattern id */
  int next;      /* next entry in the bucket, -1 ends */
} sm__needle_ent;

#define SM__NEEDLE_BUCKETS 16384

struct sm_sigdb {
  sm_arena arena; /* strings and arrays of every record */
  sm__sig **sigs; /* every signature (owned by the arena) */
  int n_sigs;
  size_t cap_sigs;
  sm__sig **order; /* live signatures in the order they are tried */
  int n_order;
  sm__pattern **patterns; /* every compiled pattern, by id */
  int n_patterns;
  size_t cap_patterns;
  sm__xid *xids; /* Xid table */
  int n_xids;
  size_t cap_xids;
  sm__comp comps[SM__COMP_COUNT]; /* per component */
  sm__exc *excs;                  /* exception defaults */
  int n_excs;
  size_t cap_excs;
  char **packages; /* third-party top-level module names */
  int n_packages;
  size_t cap_packages;
  sm__pattern **hosts; /* host-name patterns (group 1) */
  int n_hosts;
  size_t cap_hosts;
  sm__pattern **devs; /* device patterns (group 1): PCI address, HCA */
  int n_devs;
  size_t cap_devs;
  sm__pattern **progress; /* lines that show training progress */
  int n_progress;
  size_t cap_progress;
  sm__pattern **oomctx; /* calls that create a CUDA context ([oom-context]) */
  int n_oomctx;
  size_t cap_oomctx;
  sm__setting **settings; /* job settings that explain faults */
  int n_settings;
  size_t cap_settings;
  int loads;               /* texts loaded so far */
  int n_unfiltered;        /* patterns without a usable literal */
  sm__needle_ent *needles; /* the literal index */
  int n_needles;
  size_t cap_needles;
  int *heads; /* SM__NEEDLE_BUCKETS bucket heads */
};

/* Per-caller scratch for matching (the database stays const). */
typedef struct sm__matcher {
  const sm_sigdb *db; /* the database */
  uint64_t *cand;     /* candidate pattern bits */
  int n_words;        /* words in cand */
  char *low;          /* lower-case copy of the line */
  size_t low_cap;     /* its capacity */
  char *buf;          /* NUL-terminated copy for regexec */
  size_t buf_cap;     /* its capacity */
} sm__matcher;

int sm__matcher_init(sm__matcher *m, const sm_sigdb *db);
void sm__matcher_release(sm__matcher *m);

/* Matches text[0..n) (a message with its prefix removed).  Returns the
 * first signature that matches, or NULL; *xid gets an Xid code when the
 * signature captures one (else -1). */
const sm__sig *sm__sigdb_match(sm__matcher *m, const char *text, size_t n,
                               int *xid);

/* As sm__sigdb_match, but only signatures of role SM__ROLE_CAUSE: the cause
 * a symptom line restates ("watchdog ... terminated with exception: CUDA
 * error: ..."). */
const sm__sig *sm__sigdb_match_cause(sm__matcher *m, const char *text, size_t n,
                                     int *xid);

/* Runs one pattern on text; returns 1 on a match and fills up to nsub
 * sub-matches. */
int sm__pattern_exec(sm__matcher *m, const sm__pattern *p, const char *text,
                     size_t n, regmatch_t *sub, size_t nsub);

const sm__xid *sm__sigdb_xid(const sm_sigdb *db, int code);
/* 1 if the line's message shows training progress ([progress]). */
int sm__sigdb_progress(sm__matcher *m, const char *text, size_t n);

/* 1 if the line names a call that creates a CUDA context
 * ([oom-context]): an out-of-memory error raised there found the GPU
 * already full. */
int sm__sigdb_oom_context(sm__matcher *m, const char *text, size_t n);
/* The first setting (latest load first) whose patterns match the line and
 * that explains signature sig, or NULL. */
const sm__setting *sm__sigdb_setting(sm__matcher *m, const sm__sig *sig,
                                     const char *text, size_t n);
const sm__exc *sm__sigdb_exc(const sm_sigdb *db, const char *type);
/* 1 if some [setting] record explains signature sig: a setting of the
 * job or the node can cause that fault. */
int sm__sigdb_configurable(const sm_sigdb *db, const sm__sig *sig);
int sm__sigdb_is_package(const sm_sigdb *db, const char *name, size_t n);

/* Literal extraction, exposed for tests: fills up to max needles of at
 * least 3 bytes that any match of the extended regex re must contain (one
 * per top-level alternative).  Returns their number, or 0 when some
 * alternative has none. */
int sm__regex_needles(const char *re, char out[][64], int max);

/* ==== Lines ==== */

/* Structural kind of a line. */
enum {
  SM__K_NORMAL = 0,
  SM__K_BLANK,     /* empty or whitespace only */
  SM__K_BENIGN,    /* a benign look-alike */
  SM__K_TB_HEADER, /* "Traceback (most recent call last):" and the like */
  SM__K_TB_FRAME,  /* a stack frame line of a traceback */
  SM__K_TB_CODE,   /* a source excerpt inside a traceback (indented) */
  SM__K_CHAIN,     /* "During handling ..." / "The above exception ..." */
  SM__K_EXC,       /* a Python exception line */
  SM__K_CAUSE,     /* a line a cause signature matches */
  SM__K_SYMPTOM,   /* a line a symptom signature matches */
  SM__K_WEAK,      /* the classifier calls it a failure line */
  SM__K_NOTICE     /* a cause signature matches a line its program logged
                    * as information (INFO, DEBUG): an optional backend or
                    * library it probed and did without */
};

/* Severity a line states for itself (its logger's level). */
enum {
  SM__LVL_NONE = 0, /* no level stated */
  SM__LVL_INFO,     /* TRACE, DEBUG, INFO, NOTICE, glog I */
  SM__LVL_WARN,     /* WARN, WARNING, glog W */
  SM__LVL_ERROR     /* ERROR, FATAL, CRITICAL, glog E and F */
};

/* Analysis of one line. */
typedef struct sm__line {
  const char *text;   /* raw bytes (not NUL-terminated) */
  size_t len;         /* bytes, capped at max_line */
  size_t msg;         /* start of the message after prefixes */
  uint64_t off;       /* file offset of the line */
  long long no;       /* 1-based line number, 0 when not known yet */
  double ts;          /* timestamp in seconds, NAN if none */
  int kind;           /* SM__K_* */
  const sm__sig *sig; /* matching signature or NULL */
  int xid;            /* Xid code the line names, -1 */
  int exc_len;        /* length of the exception type at msg, 0 none */
  int cls;            /* classifier class (weak lines), -1 */
  float cls_score;    /* its cosine */
  int level;          /* SM__LVL_* the line states */
  int rt;             /* SM__RT_*: another runtime's error form, 0 none */
} sm__line;

/* Error lines of runtimes other than Python (sm__line.rt). */
enum {
  SM__RT_NONE = 0,
  SM__RT_JAVA_CAUSE,   /* JVM "Caused by: T: msg": the last one is the root */
  SM__RT_JAVA_HEAD,    /* JVM 'Exception in thread "main" T: msg' */
  SM__RT_GO_PANIC,     /* Go "panic: msg" */
  SM__RT_RUST_PANIC,   /* Rust "thread 'main' panicked at ..." */
  SM__RT_CXX_THROW,    /* C++ "terminate called after throwing ..." */
  SM__RT_DOTNET_HEAD,  /* .NET "Unhandled exception. T: msg" */
  SM__RT_DOTNET_INNER, /* .NET " ---> T: msg": the last one is the root */
  SM__RT_JULIA         /* Julia "ERROR: [LoadError: ]T: msg" */
};

/* Recognises another runtime's error line in the message s[0..n): returns
 * SM__RT_* and sets *skip (bytes before the exception type, for the JVM
 * forms) and *type_len (length of the type or the form's keyword). */
int sm__runtime_error(const char *s, size_t n, size_t *skip, int *type_len);

/* Line analysis context: matcher, classifier and the class indices. */
typedef struct sm__lctx {
  sm__matcher m;   /* signature matching scratch */
  sm_linecls *cls; /* classifier over sm__protoset_failure */
  int c_normal, c_benign, c_cascade, c_infra, c_framework, c_user;
  float weak_min; /* least cosine for a weak failure line */
  uint64_t lines; /* lines analysed */
} sm__lctx;

int sm__lctx_init(sm__lctx *c, const sm_sigdb *db, sm_err *err);
void sm__lctx_release(sm__lctx *c);

/* Length of the prefix (timestamps, rank tags, launcher labels) before the
 * message of a line; *ts receives a timestamp in seconds or NAN
 * (prefix.c). */
size_t sm__line_prefix(const char *s, size_t n, double *ts);

/* The severity a line states for itself: a level word (INFO, WARNING,
 * ERROR, ...) or a glog letter at the start of the line, bare, bracketed
 * or coloured, after timestamps and up to three bracketed tags. */
int sm__line_level(const char *s, size_t n);

/* Analyses one line into *l (text, len, off must be set). */
void sm__line_eval(sm__lctx *c, sm__line *l);

/* Length of a Python exception type at the start of s ("KeyError",
 * "torch.cuda.OutOfMemoryError"), or 0. */
int sm__exc_type_len(const char *s, size_t n);

/* Strength of a line as the root cause: 3 a specific cause, 2 a generic
 * cause, 1 a symptom or weak line, 0 structure only, -1 not failing. */
int sm__line_strength(const sm__line *l);

/* 1 if a line counts as failure evidence for the locator. */
int sm__line_failing(const sm__line *l);

/* 1 if a line is strong evidence (a signature, an exception, a traceback
 * header): a failure is only reported when its episode holds one. */
int sm__line_strong(const sm__line *l);

/* ==== Log source ==== */

/* Reads go through a cache of aligned blocks (logsrc.c). */
#define SM__SRC_BLOCK ((size_t)64 << 10)
#define SM__SRC_CACHE_BLOCKS 256
#define SM__SRC_MEMO_MAX ((uint64_t)1 << 20) /* blocks: logs up to 64 GiB */

typedef struct sm__cblock sm__cblock;

/* A log readable at any offset: a regular file or a memory buffer. */
typedef struct sm__logsrc {
  sm_rfile *f;       /* the file, or NULL for memory */
  const char *mem;   /* the buffer when f is NULL */
  uint64_t size;     /* bytes */
  const char *name;  /* for messages */
  uint64_t nread;    /* bytes read (analysis), each cached block once */
  uint64_t ncounted; /* bytes read only to count lines */
  sm__cblock *cache; /* block cache */
  int n_cache;       /* blocks in it */
  uint64_t tick;     /* use clock for eviction */
  uint32_t *nl_memo; /* per block: newlines + 1, 0 not known */
  int memo_failed;   /* no memory for the table: do without */
} sm__logsrc;

/* Zeroes a source (then set f or mem, size and name). */
void sm__logsrc_init(sm__logsrc *s);
/* Frees the cache. */
void sm__logsrc_release(sm__logsrc *s);

/* Reads up to n bytes at off; returns the count or a negative code. */
ssize_t sm__logsrc_read(sm__logsrc *s, void *buf, size_t n, uint64_t off,
                        sm_err *err);

/* Counts the newlines in [0, end): the only pass over a prefix; blocks
 * still in the cache are counted from memory, not read again. */
int sm__logsrc_count_lines(sm__logsrc *s, uint64_t end, uint64_t *count,
                           sm_err *err);

/* Counts '\n' bytes in p[0..n): sixteen bytes at a time with SSE2 where
 * the compiler targets it, else eight at a time in a 64-bit word. */
uint64_t sm__count_newlines(const char *p, size_t n);
/* The word-at-a-time version, always available (tested on its own). */
uint64_t sm__count_newlines_portable(const char *p, size_t n);

/* ==== Locating ==== */

/* A window of analysed lines around the cause. */
typedef struct sm__window {
  sm__line *lines; /* in file order */
  int n;           /* lines */
  int first_fail;  /* index of the first failing line found */
  int at_end;      /* 1 if the window's last line is the log's last */
  char *buf;       /* bytes the lines point into */
} sm__window;

typedef struct sm__locate_stats {
  uint64_t chunks; /* chunks scored */
} sm__locate_stats;

/* Finds the first failing line and reads the window around it.  Returns 1
 * with *w filled, 0 when no failing line exists, or a negative code. */
int sm__locate(sm__lctx *c, sm__logsrc *src, const sm_diag_opts *o,
               sm__window *w, sm__locate_stats *st, sm_err *err);
void sm__window_release(sm__window *w);

/* ==== Whose memory (memory.c) ==== */

/* What the lines before a memory kill show of the job's own memory. */
enum {
  SM__JOBMEM_GROWTH = 1, /* its memory figures rose before the kill */
  SM__JOBMEM_LEAK = 2,   /* a warning of a memory leak */
  SM__JOBMEM_REQUEST = 4 /* its own memory request (cgroup kills only) */
};

/* The first host-memory figure of a line in MiB, or a negative value. */
double sm__host_mem_figure(const char *s, size_t n);
/* 1 if the line shows the job's memory request (--mem=4G, mem=16G). */
int sm__mem_request(const char *s, size_t n);
/* SM__JOBMEM_* evidence in lines [0, x); cgroup: look for the request. */
int sm__job_memory(const sm__line *lines, int n, int x, int cgroup);

/* ==== Cause ==== */

/* Resolves the root-cause line in a window and classifies it into d. */
int sm__cause_resolve(sm__lctx *c, const sm_sigdb *db, sm__window *w,
                      const sm_diag_opts *o, sm_diagnosis *d, sm_err *err);

#endif /* SM_FAILURE_INT_H */
