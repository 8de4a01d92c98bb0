/* sm_advisor.h - the Advisor's extractor: reads a job's repository
 * (read-only) and launch command into workload metadata (sm_meta.h) with
 * evidence for every field.
 *
 * Nothing outside the repository root is ever opened, nothing in it is
 * executed, and the walk is bounded in files, bytes and time. */
#ifndef SM_ADVISOR_H
#define SM_ADVISOR_H

#include "schedmate/sm_base.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to extract from.  Zero limits take the defaults in brackets. */
typedef struct sm_extract_req {
  const char *repo;           /* repository root */
  const char *cwd;            /* command's directory, relative to the
                               * root, or NULL for the root */
  const char *const *configs; /* extra config files (--config) */
  int n_configs;              /* number of configs */
  const char *const *argv;    /* the launch command as submitted */
  int argc;                   /* number of words in argv */
  size_t max_file_bytes;      /* per file [1 MiB] */
  int max_files;              /* files read [2000] */
  size_t max_total_bytes;     /* all files [64 MiB] */
  double time_budget_s;       /* stop with what was found [2 s] */
  /* An inline launch script that is not a file of the repository, such
   * as a Slurm batch script.  When script is not NULL the job is read as
   * if the user had run `bash SCRIPT ARGV...` in cwd: its #SBATCH lines
   * and its launch line are followed like those of a script file, and
   * argv/argc are the script's own arguments (argc may be 0). */
  const char *script;      /* script text, or NULL */
  size_t script_len;       /* its length in bytes (no NUL needed) */
  const char *script_name; /* its name in evidence ["batch_script"] */
} sm_extract_req;

/* What was extracted. */
typedef struct sm_extract_res {
  sm_meta meta;      /* the metadata with evidence */
  int files_read;    /* files opened and read */
  double elapsed_ms; /* wall time of the extraction */
  char **warnings;   /* owned one-line warnings (bad command, unparsable
                      * file, limit reached) */
  int n_warnings;    /* number of warnings */
  /* The configuration provenance (src/advisor/unexplained.c): the
   * command's options, consumed or not, cosmetic or not, and the files
   * read by content hash, as one JSON object; its two digests are also
   * in meta.  Owned; NULL when none was made. */
  char *provenance_json;
  struct sm__unexp *unexp_; /* internal, during an extraction */
} sm_extract_res;

/* Extracts metadata.  res is initialised by the call; release it with
 * sm_extract_res_release whatever the result.  Returns 0 (possibly with
 * warnings and unknown fields), or a negative code when the request itself
 * is unusable (no such repository, empty command). */
SM_EXTERN int sm_extract(const sm_extract_req *req, sm_extract_res *res,
                         sm_err *err);
SM_EXTERN void sm_extract_res_release(sm_extract_res *res);

/* Writes the result as the JSON object of docs/design.md section 3:
 * {"metadata": {...}, "evidence": {...}, "files_read": N,
 *  "elapsed_ms": X, "warnings": [...], "configuration": {...}}
 * (configuration: docs/history.md, "Configuration provenance"). */
SM_EXTERN void sm_extract_write_json(const sm_extract_res *res, sm_jw *w);

/* Replaces the embedded model/dataset alias table with an operator's own
 * (same format as data/embed/aliases.tsv: kind, pattern, canonical, task,
 * domain, tab-separated).  Call it before extracting, not during.  Returns
 * 0, SM_EPARSE (bad line in err) or SM_ENOMEM. */
SM_EXTERN int sm_extract_load_aliases(const char *text, size_t len,
                                      sm_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SM_ADVISOR_H */
