/* fsid.c - the agent reads a job's files with the job user's rights.
 *
 * The agent runs as root beside slurmctld, and a job's StdOut/StdErr
 * paths are chosen by its user.  Opened with root's rights, a log path
 * pointing at a file the user cannot read (another user's log, a key
 * file) would put that file's lines into the status file, the audit log
 * and the history.  So every open of a job's log happens with the file
 * system identity of the job's user: setfsgid() to the user's primary
 * group and setfsuid() to the user, then back.  Both act on the calling
 * thread only (glibc does not broadcast them to other threads), and the
 * logs are read on the main thread only.  Supplementary groups are not
 * taken on: a log the user can read only through one of them is treated
 * as unreadable, which errs on the side of reading less.
 *
 * Without root (a test, an agent run by a user) nothing changes: the
 * kernel's own checks already apply to the agent's user. */
#include <grp.h>
#include <pwd.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "slurm/slurm_int.h"

/* The uid and gid of nobody, used when the user has no passwd entry. */
#define NOBODY 65534u

void sm__fsid_enter(sm__fsid *s, uint32_t uid) {
  struct passwd pw, *pp = NULL;
  char buf[1024];
  gid_t gid = (gid_t)NOBODY;

  s->active = 0;
  if (geteuid() != 0 || uid == 0)
    return;
  if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &pp) == 0 && pp != NULL)
    gid = pp->pw_gid;
  s->gid = (gid_t)setfsgid(gid);
  s->uid = (uid_t)setfsuid((uid_t)uid);
  s->active = 1;
}

void sm__fsid_leave(sm__fsid *s) {
  if (!s->active)
    return;
  setfsuid(s->uid);
  setfsgid(s->gid);
  s->active = 0;
}
