/* agent.h - what the files of the schedmate-slurm executable share: the
 * libslurm backend (libslurm.c) for the agent's options and main loop
 * (cmd_slurm.c).  The agent itself (channels, planner, socket server) is
 * the library's src/slurm; this folder is only what links libslurm. */
#ifndef SM_AGENT_H
#define SM_AGENT_H

#include "schedmate/sm_slurm.h"

/* The libslurm backend; conf is a slurm.conf path or NULL ($SLURM_CONF,
 * then the default).  Returns 0, SM_ENOENT when the configuration cannot
 * be read (checked first: libslurm ends the process on an unreadable
 * one), or SM_EUNSUPP when this build has no libslurm. */
int agent_backend_libslurm(sm_slurm_backend *b, const char *conf, sm_err *err);

#endif /* SM_AGENT_H */
