/* daemon.c - what the long-running parts (the Slurm agent, `schedmate
 * serve`) share: append-only JSON-lines files written one whole line per
 * write(), Prometheus label escaping, a UNIX socket listener that
 * replaces a stale socket file but never a live one, and the peer
 * credentials of a UNIX connection. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "schedmate/sm_util.h"

int sm_append_line(const char *path, const char *data, size_t n, sm_err *err) {
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  ssize_t w;

  if (fd < 0)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", path,
                      strerror(errno));
  w = write(fd, data, n);
  if (w != (ssize_t)n) {
    int e = w < 0 ? errno : EIO;
    close(fd);
    return sm_err_set(err, sm_err_from_errno(e), "%s: write failed: %s", path,
                      w < 0 ? strerror(e) : "short write");
  }
  if (close(fd) != 0)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", path,
                      strerror(errno));
  return 0;
}

void sm_prom_label(sm_buf *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '\\' || *s == '"')
      sm_buf_addc(b, '\\');
    if (*s == '\n')
      sm_buf_adds(b, "\\n");
    else
      sm_buf_addc(b, *s);
  }
}

int sm_unix_listen(const char *path, int mode, int backlog, sm_err *err) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  struct stat st;
  int fd;

  if (path == NULL || path[0] == '\0')
    return sm_err_set(err, SM_EINVAL, "socket: no path given");
  if (strlen(path) >= sizeof(sa.sun_path))
    return sm_err_set(err, SM_EINVAL, "%s: socket path too long", path);
  memcpy(sa.sun_path, path, strlen(path) + 1);
  if (lstat(path, &st) == 0) {
    int probe;
    if (!S_ISSOCK(st.st_mode))
      return sm_err_set(err, SM_EINVAL, "%s: exists and is not a socket", path);
    probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
      close(probe);
      return sm_err_set(err, SM_EBUSY, "%s: another process is listening",
                        path);
    }
    if (probe >= 0)
      close(probe);
    unlink(path); /* stale: left by a process that died */
  }
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sm_err_set(err, sm_err_from_errno(errno), "socket: %s",
                      strerror(errno));
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
      chmod(path, (mode_t)mode) != 0 ||
      listen(fd, backlog > 0 ? backlog : 64) != 0) {
    int e = errno;
    close(fd);
    unlink(path);
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
  }
  return fd;
}

int sm_unix_peer(int fd, unsigned *uid, unsigned *gid) {
  struct ucred cr;
  socklen_t l = sizeof(cr);

  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
    return sm_err_from_errno(errno);
  if (uid)
    *uid = (unsigned)cr.uid;
  if (gid)
    *gid = (unsigned)cr.gid;
  return 0;
}
