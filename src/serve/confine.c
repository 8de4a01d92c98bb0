/* confine.c - the roots under which request paths are accepted.
 *
 * A path a client names (a repository, a log) is opened first, with an
 * O_PATH descriptor (no driver code runs, a FIFO cannot block), and only
 * then is its real location read back from that descriptor
 * (/proc/self/fd/N) and compared with the roots.  The readers are then
 * handed /proc/self/fd/N, which names the very object that was checked:
 * renaming a directory or swapping a symbolic link after the check
 * cannot move them elsewhere.  A root matches on whole components
 * ("/data" does not contain "/database"). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve_int.h"

int sv__roots_init(sv_roots *r, const char *const *paths, int n, sm_err *err) {
  memset(r, 0, sizeof(*r));
  if (n <= 0)
    return 0;
  r->real = sm_calloc((size_t)n, sizeof(char *));
  if (r->real == NULL)
    return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
  for (int i = 0; i < n; i++) {
    char real[PATH_MAX];
    struct stat st;
    if (realpath(paths[i], real) == NULL)
      return sm_err_set(err, sm_err_from_errno(errno), "--allow-root %s: %s",
                        paths[i], strerror(errno));
    if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
      return sm_err_set(err, SM_EINVAL, "--allow-root %s: not a directory",
                        paths[i]);
    r->real[i] = sm_strdup(real);
    if (r->real[i] == NULL)
      return sm_err_set(err, SM_ENOMEM, "serve: out of memory");
    r->n++;
  }
  return 0;
}

void sv__roots_release(sv_roots *r) {
  for (int i = 0; i < r->n; i++)
    sm_free(r->real[i]);
  sm_free(r->real);
  memset(r, 0, sizeof(*r));
}

int sv__roots_contain(const sv_roots *r, const char *real) {
  for (int i = 0; i < r->n; i++) {
    const char *root = r->real[i];
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
      return 1;
    if (strncmp(real, root, n) == 0 && (real[n] == '\0' || real[n] == '/'))
      return 1;
  }
  return 0;
}

int sv__pin(const sv_roots *r, const char *path, int kind, sv_pin *out,
            sm_err *err) {
  struct stat st;
  ssize_t n;
  int fd;

  memset(out, 0, sizeof(*out));
  out->fd = -1;
  if (path == NULL || path[0] != '/')
    return sm_err_set(err, SM_EINVAL, "%s: not an absolute path",
                      path ? path : "(none)");
  if (r->n == 0)
    return sm_err_set(err, SM_EACCES,
                      "%s: no --allow-root was given, so no path is accepted",
                      path);
  fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
  }
  snprintf(out->proc, sizeof(out->proc), "/proc/self/fd/%d", fd);
  n = readlink(out->proc, out->real, sizeof(out->real) - 1);
  if (n <= 0 || fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return sm_err_set(err, sm_err_from_errno(e), "%s: cannot resolve: %s", path,
                      strerror(e));
  }
  out->real[n] = '\0';
  if (out->real[0] != '/' || !sv__roots_contain(r, out->real)) {
    close(fd);
    return sm_err_set(err, SM_EACCES, "%s is outside the allowed roots", path);
  }
  if (kind == SV_PIN_DIR && !S_ISDIR(st.st_mode)) {
    close(fd);
    return sm_err_set(err, SM_ENOTREG, "%s: not a directory", path);
  }
  if (kind == SV_PIN_FILE && !S_ISREG(st.st_mode)) {
    close(fd);
    return sm_err_set(err, S_ISDIR(st.st_mode) ? SM_EISDIR : SM_ENOTREG,
                      "%s: not a regular file", path);
  }
  out->fd = fd;
  out->dev = (uint64_t)st.st_dev;
  out->ino = (uint64_t)st.st_ino;
  return 0;
}

void sv__pin_close(sv_pin *p) {
  if (p->fd >= 0)
    close(p->fd);
  p->fd = -1;
}

void sv__pin_unname(const sv_pin *p, const char *user_path, char *msg,
                    size_t cap) {
  char out[SM_ERR_MSG_SIZE + 64];
  size_t k = 0, pl = strlen(p->proc);
  const char *s = msg;

  if (pl == 0)
    return;
  while (*s && k + 1 < sizeof(out)) {
    if (strncmp(s, p->proc, pl) == 0 && (s[pl] < '0' || s[pl] > '9')) {
      k += (size_t)snprintf(out + k, sizeof(out) - k, "%s", user_path);
      if (k >= sizeof(out))
        k = sizeof(out) - 1;
      s += pl;
    } else {
      out[k++] = *s++;
    }
  }
  out[k] = '\0';
  snprintf(msg, cap, "%s", out);
}
