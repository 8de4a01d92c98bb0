/* unexplained.h - the job's configuration provenance (unexplained.c):
 * which of the command's options and which lines of the files read the
 * metadata explains, which are cosmetic, and the two digests matching
 * uses (sm_meta.h: config_digest, residue_digest).  Internal to the
 * Advisor; extract.c and repo.c call the two hooks. */
#ifndef SM_ADVISOR_UNEXPLAINED_H
#define SM_ADVISOR_UNEXPLAINED_H

#include <stddef.h>

#include "advisor/advisor_int.h"

/* Notes a file the extractor has read (rel root-relative; data lives in
 * the context's arena until the extraction ends).  A second read of the
 * same path is ignored. */
void sm__unexp_note_file(sm__ctx *c, const char *rel, const char *data,
                         size_t len);

/* At the end of an extraction: when ok, sets the digests of
 * c->res->meta and c->res->provenance_json (nothing when a read limit cut
 * the extraction short: which files were read is then not the job's);
 * always frees the notes. */
void sm__unexp_finish(sm__ctx *c, int ok);
/* Frees the notes a result still holds.  sm__unexp_finish frees them at
 * the end of every extraction, and no other context notes files (the
 * note hook is set by sm_extract only), so this is a safety net in the
 * result's release. */
void sm__unexp_drop(sm_extract_res *res);

/* 1 when a key (an option without its dashes, a dotted override, a
 * config key) is cosmetic by the table in unexplained.c: output and log
 * paths, run names, seeds, ports, logging/checkpoint/eval intervals,
 * tracking switches, resume paths.  *why (may be NULL) gets the class. */
int sm__cosmetic_key(const char *key, size_t n, const char **why);

#endif /* SM_ADVISOR_UNEXPLAINED_H */
