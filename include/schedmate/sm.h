/* sm.h - the SchedMate library: the one header to include.
 *
 * SchedMate is a semantic information layer for GPU cluster schedulers:
 * it reads a job's code, command, logs and the history of similar jobs and
 * turns them into checkable facts with provenance.  See docs/design.md
 * (section 1, components and channels) for the picture; each component
 * has its own header and its own page in docs/. */
#ifndef SM_SM_H
#define SM_SM_H

#include "schedmate/sm_advisor.h"
#include "schedmate/sm_base.h"
#include "schedmate/sm_failure.h"
#include "schedmate/sm_history.h"
#include "schedmate/sm_meta.h"
#include "schedmate/sm_sia.h"
#include "schedmate/sm_sim.h"
#include "schedmate/sm_text.h"
#include "schedmate/sm_tracker.h"
#include "schedmate/sm_util.h"

#endif /* SM_SM_H */
