/* sm_failure.h - the Failure Handler: finds the first real error in the log
 * of a job that ended badly, says what kind of fault it is and plans a safe
 * recovery.
 *
 * Three parts, each usable on its own:
 *
 *   knowledge  sm_sigdb: the signature file (data/embed/signatures.ini,
 *              built in) plus any operator files.  Everything the handler
 *              knows about particular messages lives there: patterns, Xid
 *              meanings, categories, components, whether a retry helps and
 *              which commands diagnose a component.
 *   diagnosis  sm_diagnose_file: locates the first root-cause line by
 *              bisecting the log over chunks (O(log n) chunk reads), applies
 *              cascade rules (tracebacks, exception chains, launcher
 *              teardown) and classifies the cause as infrastructure (with a
 *              component), framework, user or unknown.
 *   planning   sm_plan_make: turns a diagnosis into actions behind safety
 *              gates (confidence threshold, located component, retry cap,
 *              isolation quota, shadow mode) and appends every decision to
 *              an audit log.
 *
 * The library never prints; results are values, errors are sm_err. */
#ifndef SM_FAILURE_H
#define SM_FAILURE_H

#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Knowledge: the signature database ==== */

typedef struct sm_sigdb sm_sigdb;

/* Returns an empty database, or NULL on exhaustion. */
SM_EXTERN sm_sigdb *sm_sigdb_new(void);
/* Frees the database; NULL is a no-op. */
SM_EXTERN void sm_sigdb_free(sm_sigdb *db);

/* Loads the signature file compiled into the library.  Returns 0 or a
 * negative code (a broken built-in file is a bug, reported as SM_EPARSE). */
SM_EXTERN int sm_sigdb_load_builtin(sm_sigdb *db, sm_err *err);

/* Loads signature text (the format of docs/failure.md).  origin names the
 * text in messages ("FILE:LINE: problem").  Entries loaded later take
 * precedence: a signature is tried before every signature loaded earlier,
 * and one with the name of an earlier one replaces it.  On a parse error
 * nothing from this text is kept.  Returns 0, SM_EPARSE, SM_ENOMEM. */
SM_EXTERN int sm_sigdb_load_text(sm_sigdb *db, const char *text, size_t len,
                                 const char *origin, sm_err *err);

/* Loads a signature file (at most 8 MiB).  Returns 0 or a negative code
 * with a message naming the file. */
SM_EXTERN int sm_sigdb_load_file(sm_sigdb *db, const char *path, sm_err *err);

/* Number of signatures, Xid entries and other records loaded. */
SM_EXTERN size_t sm_sigdb_count(const sm_sigdb *db);

/* What one line matches, for tools and tests.  Strings belong to db. */
typedef struct sm_sigmatch {
  const char *name;      /* signature name */
  const char *role;      /* "cause", "symptom" or "benign" */
  const char *category;  /* "infrastructure", "framework", "user", ... */
  const char *component; /* "gpu", "network", ..., "none" */
  double confidence;     /* in [0, 1] */
  int retryable;         /* 1 if retrying can help */
  int xid;               /* the Xid code the line names, or -1 */
} sm_sigmatch;

/* Matches one raw log line.  Returns 1 and fills *out when a signature
 * matches, 0 when none does. */
SM_EXTERN int sm_sigdb_match(const sm_sigdb *db, const char *line, size_t n,
                             sm_sigmatch *out);

/* ==== Diagnosis ==== */

/* How the first error is searched for. */
typedef enum sm_diag_mode {
  SM_DIAG_LOCATE = 0, /* bisect over chunks (the default) */
  SM_DIAG_WHOLE,      /* scan the whole log line by line (ablation) */
  SM_DIAG_TAIL        /* look only at the last tail_lines lines (ablation) */
} sm_diag_mode;

/* Options; zero fields take the defaults in brackets. */
typedef struct sm_diag_opts {
  sm_diag_mode mode; /* [SM_DIAG_LOCATE] */
  int chunk_lines;   /* lines per chunk [64] */
  int context;       /* lines of context either side of the cause [200] */
  long tail_lines;   /* lines examined by SM_DIAG_TAIL [1000] */
  size_t max_line;   /* longer lines are cut for analysis [65536] */
} sm_diag_opts;

/* One line quoted as evidence. */
typedef struct sm_evidence {
  long long line;   /* 1-based line number */
  const char *role; /* "cause", "context", "frame", "symptom", "chain" */
  char *text;       /* the line (cut at 512 bytes), NUL-terminated */
} sm_evidence;

#define SM_DIAG_MAX_EVIDENCE 8
#define SM_DIAG_MAX_COMMANDS 8

/* The result of a diagnosis.  Strings live in the struct's arena and die
 * with sm_diagnosis_release. */
typedef struct sm_diagnosis {
  int failure;                 /* 1: a failure was found; 0: no_failure */
  long long first_error_line;  /* 1-based line of the root cause, 0 if none */
  uint64_t first_error_offset; /* byte offset of that line */
  const char *category;   /* "infrastructure", "framework", "user", "unknown" */
  const char *component;  /* "gpu", "nvlink", "network", "node", "storage",
                           * "gpu_memory" or "none" */
  const char *root_cause; /* one sentence, or NULL without a failure */
  const char *signature;  /* matched signature name, or NULL */
  const char *exception;  /* Python exception type of the cause, or NULL */
  const char *node;       /* host the fault is attributed to, or NULL */
  const char *device;     /* GPU PCI address or HCA name, or NULL */
  int xid;                /* Xid code behind the cause, or -1 */
  double confidence;      /* in [0, 1]: how sure the category is */
  int retryable;          /* 1 if restarting the job can help */
  const char *reason;     /* how the category was decided, one sentence */
  const char *basis;      /* for infrastructure: what the verdict rests on,
                           * "fault" (a part reports a fault), "limit" (a
                           * resource ran out), "event" (stopped from
                           * outside) or "inferred"; NULL otherwise.  The
                           * planner isolates a node only for a fault. */
  sm_evidence evidence[SM_DIAG_MAX_EVIDENCE]; /* cause first */
  int n_evidence;
  const char *commands[SM_DIAG_MAX_COMMANDS]; /* diagnosis commands */
  int n_commands;
  const char *mode;         /* "locator", "whole" or "tail" */
  uint64_t chunks_examined; /* chunks scored by the locator */
  uint64_t lines_examined;  /* lines classified in all */
  uint64_t bytes_read;      /* bytes read from the log, line count
                             * included */
  uint64_t bytes_counted;   /* bytes scanned only to count newlines */
  sm_arena _arena;          /* private: owns the strings */
} sm_diagnosis;

/* Diagnoses the log at path.  Returns 0 with *out filled (release it with
 * sm_diagnosis_release), or a negative code: the file cannot be read, is
 * not a regular file, or holds binary or compressed data (SM_EUNSUPP).  An
 * empty log or one without an error gives out->failure == 0. */
SM_EXTERN int sm_diagnose_file(const sm_sigdb *db, const char *path,
                               const sm_diag_opts *opts, sm_diagnosis *out,
                               sm_err *err);

/* The same on a log held in memory (data need not be NUL-terminated);
 * name is used in messages. */
SM_EXTERN int sm_diagnose_mem(const sm_sigdb *db, const char *data, size_t len,
                              const char *name, const sm_diag_opts *opts,
                              sm_diagnosis *out, sm_err *err);

/* Frees what a diagnosis holds; safe on a zeroed struct. */
SM_EXTERN void sm_diagnosis_release(sm_diagnosis *d);

/* ==== Recovery planning ==== */

/* Planner options; zero fields take the defaults in brackets. */
typedef struct sm_plan_opts {
  double threshold;       /* least confidence for automatic actions [0.8] */
  int max_retries;        /* automatic restarts per job [2] */
  int isolation_quota;    /* node isolations per window [2] */
  double quota_window_s;  /* the isolation window in seconds [86400] */
  int shadow;             /* 1: plan, but mark nothing executable */
  const char *state_path; /* planner state (retries, isolations); NULL:
                           * the caps apply to this call alone */
  const char *audit_path; /* append-only JSON-lines audit log, or NULL */
  const char *job_id;     /* job the retry cap counts against [log path] */
  const char *log_path;   /* for the audit record, or NULL */
  const char *node;       /* node to isolate, overriding the diagnosis */
  double now;             /* wall-clock seconds since the epoch [time()] */
} sm_plan_opts;

#define SM_PLAN_MAX_STEPS 6
#define SM_PLAN_MAX_GATES 8

/* One step of a plan. */
typedef struct sm_plan_step {
  const char *action;    /* "report", "diagnose", "isolate_node",
                          * "request_replacement", "restart_from_checkpoint" */
  const char *target;    /* node, device or job the step acts on, or NULL */
  const char *condition; /* when to carry it out ("the diagnosis confirms
                          * the fault"), or NULL: always */
  const char *commands[SM_DIAG_MAX_COMMANDS]; /* for "diagnose" */
  int n_commands;
} sm_plan_step;

/* A recovery plan.  Strings live in the struct's arena. */
typedef struct sm_plan {
  int executable; /* 1: the steps may be carried out automatically */
  int shadow;     /* 1: produced in shadow mode */
  int retryable;  /* 1: the plan restarts the job */
  sm_plan_step steps[SM_PLAN_MAX_STEPS]; /* in order */
  int n_steps;
  const char *gates[SM_PLAN_MAX_GATES]; /* why something was withheld */
  int n_gates;
  int retries_used;         /* restarts of this job before this plan */
  int isolations_in_window; /* isolations counted in the window before */
  sm_arena _arena;          /* private: owns the strings */
} sm_plan;

/* Plans the recovery for a diagnosis.  Only an infrastructure fault with a
 * located component and confidence >= threshold gets automatic steps;
 * framework, user and unknown faults get the single step "report" and
 * retryable 0.  With a state path the retry cap and isolation quota are
 * enforced across calls (the file is locked while it is read and
 * rewritten); outside shadow mode a plan's restart and isolation are
 * counted there.  With an audit path one JSON line per decision is
 * appended.  Returns 0 or a negative code (unreadable or corrupt state,
 * audit write failure); *out is released by sm_plan_release. */
SM_EXTERN int sm_plan_make(const sm_sigdb *db, const sm_diagnosis *d,
                           const sm_plan_opts *opts, sm_plan *out, sm_err *err);

/* Frees what a plan holds; safe on a zeroed struct. */
SM_EXTERN void sm_plan_release(sm_plan *p);

/* Appends the diagnosis (and the plan, if not NULL) as the members of the
 * JSON object the writer is in: the keys of the JSON contract
 * (docs/design.md section 3) and more ("actions" comes from the plan, or
 * ["report"] without one). */
SM_EXTERN void sm_diagnosis_json(const sm_diagnosis *d, const sm_plan *p,
                                 sm_jw *w);

#ifdef __cplusplus
}
#endif
#endif /* SM_FAILURE_H */
