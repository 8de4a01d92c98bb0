/* file.c - opening files on a user's behalf (a named path, or a path
 * beneath a root that must not be left), bounded access to regular files:
 * positioned reads, whole-file reads with a cap, and line readers that
 * walk a file backwards or forwards with a bounded window. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "schedmate/sm_util.h"

#define DEFAULT_MAX_LINE ((size_t)1 << 20)
#define READ_BLOCK ((size_t)64 << 10)

/* ==== Opening files on a user's behalf ====
 *
 * Nothing is opened for I/O before its type is known: the object is first
 * reached with an O_PATH descriptor (which runs no driver code, so a FIFO
 * cannot block and a device sees no open), fstat'ed, and only a regular
 * file is reopened for reading, through /proc/self/fd (the very inode
 * already held) or, without /proc, by name with O_NONBLOCK and a check
 * that the same inode came back.
 *
 * Beneath a root, every component is opened relative to a descriptor the
 * walk holds, so no rename elsewhere can move the walk outside.  openat2
 * with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does it in one call where the
 * kernel has it; a path with a symbolic link in it (ELOOP), a kernel
 * without openat2 (ENOSYS, or EPERM from a seccomp filter) or an old one
 * (EINVAL, E2BIG) fall back to the walk below, which opens one component
 * at a time with O_PATH | O_NOFOLLOW, keeps the directories it went
 * through (".." is the previous one, never the kernel's parent), reads
 * links with readlinkat on the link's own descriptor and resolves their
 * targets against those directories, so that nothing outside the root is
 * ever looked up. */

#define MAX_LINKS 40  /* as the kernel's ELOOP limit */
#define MAX_DEPTH 128 /* directories held open at once */

/* 0: not probed yet, 1: openat2 works, -1: it does not (or forced off). */
static atomic_int openat2_state;

int sm__open_force_walk(int on) {
  int old = atomic_load(&openat2_state) == -1;
  atomic_store(&openat2_state, on ? -1 : 0);
  return old;
}

#ifdef SYS_openat2
static long sys_openat2(int dirfd, const char *path, int flags,
                        unsigned long long resolve) {
  struct open_how how;
  memset(&how, 0, sizeof(how));
  how.flags = (unsigned long long)flags;
  how.resolve = resolve;
  return syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}
#endif

/* Whether openat2 with the resolve flags used here is available. */
static int have_openat2(void) {
#ifdef SYS_openat2
  int s = atomic_load(&openat2_state);
  if (s == 0) {
    long fd = sys_openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC,
                          RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
    /* "/" is absolute, so RESOLVE_BENEATH refuses it with EXDEV: that
     * proves the call and its flags are understood. */
    s = (fd < 0 && errno == EXDEV) || fd >= 0 ? 1 : -1;
    if (fd >= 0)
      close((int)fd);
    atomic_store(&openat2_state, s);
  }
  return s == 1;
#else
  return 0;
#endif
}

static const char *kind_name(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

static int kind_error(const char *path, mode_t mode, sm_err *err) {
  if (S_ISDIR(mode))
    return sm_err_set(err, SM_EISDIR, "%s: is a directory", path);
  if (S_ISREG(mode) || S_ISLNK(mode) || S_ISFIFO(mode) || S_ISCHR(mode) ||
      S_ISBLK(mode) || S_ISSOCK(mode))
    return sm_err_set(err, SM_ENOTREG, "%s: is %s, not a regular file", path,
                      kind_name(mode));
  return sm_err_set(err, SM_ENOTREG, "%s: not a regular file", path);
}

static int errno_error(const char *path, int e, sm_err *err) {
  if (e == ENAMETOOLONG)
    return sm_err_set(err, SM_ETOOBIG, "%s: %s", path, strerror(e));
  return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
}

/* Checks the type of an O_PATH descriptor against flags.  0 or a code. */
static int check_kind(const char *path, const struct stat *st, int flags,
                      sm_err *err) {
  int want = flags & 3;
  if (want == SM_OPEN_PROBE)
    return 0;
  if (want == SM_OPEN_DIR)
    return S_ISDIR(st->st_mode)
               ? 0
               : sm_err_set(err, SM_ENOENT, "%s: not a directory", path);
  return S_ISREG(st->st_mode) ? 0 : kind_error(path, st->st_mode, err);
}

/* Reopens the regular file behind the O_PATH descriptor pfd for reading.
 * fallback_dir/fallback_name (with fallback_flags) reach it again by name
 * when /proc is not mounted; the inode must be the same.  Closes pfd.
 * Returns the new descriptor or a negative code. */
static int reopen_read(int pfd, const struct stat *st, int fallback_dir,
                       const char *fallback_name, int fallback_flags,
                       const char *path, sm_err *err) {
  char proc[64];
  struct stat st2;
  int fd;

  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
  fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    fd = openat(fallback_dir, fallback_name,
                O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | fallback_flags);
    if (fd >= 0)
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  if (fd < 0) {
    int e = errno;
    close(pfd);
    return errno_error(path, e, err);
  }
  close(pfd);
  if (fstat(fd, &st2) != 0 || st2.st_dev != st->st_dev ||
      st2.st_ino != st->st_ino || !S_ISREG(st2.st_mode)) {
    close(fd);
    return sm_err_set(err, SM_EIO, "%s: changed while being opened", path);
  }
  return fd;
}

/* Turns an O_PATH descriptor of the wanted kind into the result. */
static int finish(int pfd, struct stat *st, int flags, int dirfd,
                  const char *name, int name_flags, const char *path,
                  struct stat *out, sm_err *err) {
  int rc = check_kind(path, st, flags, err);

  if (rc != 0) {
    close(pfd);
    return rc;
  }
  if ((flags & 3) == SM_OPEN_FILE) {
    pfd = reopen_read(pfd, st, dirfd, name, name_flags, path, err);
    if (pfd < 0)
      return pfd;
  }
  if (out)
    *out = *st;
  return pfd;
}

int sm_open_path(const char *path, int flags, struct stat *st, sm_err *err) {
  struct stat s;
  int pfd;

  if (path == NULL || path[0] == '\0')
    return sm_err_set(err, SM_ENOENT, "empty file name");
  pfd = open(path, O_PATH | O_CLOEXEC);
  if (pfd < 0)
    return errno_error(path, errno, err);
  if (fstat(pfd, &s) != 0) {
    int e = errno;
    close(pfd);
    return errno_error(path, e, err);
  }
  return finish(pfd, &s, flags, AT_FDCWD, path, 0, path, st, err);
}

FILE *sm_file_fopen(const char *path, sm_err *err) {
  int fd = sm_open_path(path, SM_OPEN_FILE, NULL, err);
  FILE *f;

  if (fd < 0)
    return NULL;
  f = fdopen(fd, "r");
  if (f == NULL) {
    int e = errno;
    close(fd);
    errno_error(path, e, err);
  }
  return f;
}

/* The walk's state: the directories held (dirs[0] is the root, borrowed)
 * and the path still to resolve. */
typedef struct walk {
  int dirs[MAX_DEPTH]; /* directory descriptors, dirs[0] borrowed */
  int depth;           /* dirs in use */
  char rest[PATH_MAX * 2];
  size_t pos; /* start of the unresolved part of rest */
} walk;

static void walk_pop_to(walk *w, int depth) {
  while (w->depth > depth)
    close(w->dirs[--w->depth]);
}

/* Replaces the unresolved part with target + "/" + what followed the
 * component just read (at rest[next..]).  0 or -1 when too long. */
static int walk_splice(walk *w, const char *target, size_t tlen, size_t next) {
  char tmp[PATH_MAX * 2];
  size_t tail = strlen(w->rest + next);

  if (tlen + 1 + tail + 1 > sizeof(tmp))
    return -1;
  memcpy(tmp, target, tlen);
  tmp[tlen] = '/';
  memcpy(tmp + tlen + 1, w->rest + next, tail + 1);
  memcpy(w->rest, tmp, tlen + 1 + tail + 1);
  w->pos = 0;
  return 0;
}

/* An absolute path (rel or a link's target): inside only through
 * root_path.  Returns the offset of the root-relative remainder, or -1. */
static long inside_root(const char *root_path, const char *abs, size_t n) {
  size_t rl;
  if (root_path == NULL)
    return -1;
  rl = strlen(root_path);
  while (rl > 1 && root_path[rl - 1] == '/')
    rl--;
  if (rl == 1 && root_path[0] == '/')
    return 1; /* the root is "/" */
  if (n < rl || memcmp(abs, root_path, rl) != 0 || (n > rl && abs[rl] != '/'))
    return -1;
  return (long)rl;
}

/* The path named a directory the walk holds (the root itself, "a/.."):
 * opens that one. */
static int walk_finish_held(walk *w, int flags, const char *rel,
                            struct stat *out, sm_err *err) {
  int top = w->dirs[w->depth - 1], rc;
  struct stat st;
  int pfd = openat(top, ".", O_PATH | O_CLOEXEC | O_DIRECTORY);

  if (pfd < 0)
    return errno_error(rel, errno, err);
  if (fstat(pfd, &st) != 0) {
    rc = errno_error(rel, errno, err);
    close(pfd);
    return rc;
  }
  return finish(pfd, &st, flags, top, ".", 0, rel, out, err);
}

/* The component just read (ending at rest[next]) is a symbolic link,
 * held by pfd (closed here): when links may be followed, at most
 * MAX_LINKS of them, its target replaces it in what is left to resolve,
 * an absolute target only inside the root.  0 or an error. */
static int walk_link(walk *w, int pfd, const char *root_path, int flags,
                     const char *rel, size_t next, int *links, sm_err *err) {
  char target[PATH_MAX];
  ssize_t tl;

  if (!(flags & SM_OPEN_FOLLOW)) {
    close(pfd);
    return sm_err_set(err, SM_EESCAPE, "%s: refused: a symbolic link", rel);
  }
  if (++*links > MAX_LINKS) {
    close(pfd);
    return sm_err_set(err, SM_ELIMIT,
                      "%s: refused: more than %d symbolic links", rel,
                      MAX_LINKS);
  }
  /* The link itself, through its own descriptor: nothing is looked up by
   * name. */
  tl = readlinkat(pfd, "", target, sizeof(target));
  close(pfd);
  if (tl < 0 || (size_t)tl >= sizeof(target))
    return tl < 0 ? errno_error(rel, errno, err)
                  : sm_err_set(err, SM_ETOOBIG, "%s: link too long", rel);
  if (tl == 0)
    return sm_err_set(err, SM_ENOENT, "%s: empty symbolic link", rel);
  if (target[0] == '/') {
    long off = inside_root(root_path, target, (size_t)tl);
    if (off < 0)
      return sm_err_set(err, SM_EESCAPE,
                        "%s: refused: a symbolic link leads outside the root",
                        rel);
    walk_pop_to(w, 1);
    if (walk_splice(w, target + off, (size_t)(tl - off), next) != 0)
      return sm_err_set(err, SM_ETOOBIG, "%s: path too long", rel);
  } else if (walk_splice(w, target, (size_t)tl, next) != 0) {
    return sm_err_set(err, SM_ETOOBIG, "%s: path too long", rel);
  }
  return 0;
}

static int walk_open(int rootfd, const char *root_path, const char *rel,
                     int flags, struct stat *out, sm_err *err) {
  walk w;
  int links = 0, rc = 0;

  w.dirs[0] = rootfd;
  w.depth = 1;
  if (strlen(rel) >= sizeof(w.rest))
    return sm_err_set(err, SM_ETOOBIG, "%s: path too long", rel);
  snprintf(w.rest, sizeof(w.rest), "%s", rel);
  w.pos = 0;
  if (w.rest[0] == '/') {
    long off = inside_root(root_path, w.rest, strlen(w.rest));
    if (off < 0)
      return sm_err_set(err, SM_EESCAPE, "%s: refused: outside the root", rel);
    w.pos = (size_t)off;
  }
  for (;;) {
    char *s = w.rest + w.pos, *e;
    size_t n, next;
    int last, pfd;
    struct stat st;

    while (*s == '/')
      s++;
    if (*s == '\0') {
      /* The path named a directory we hold (the root itself, "a/.."). */
      rc = walk_finish_held(&w, flags, rel, out, err);
      break;
    }
    e = strchr(s, '/');
    n = e ? (size_t)(e - s) : strlen(s);
    next = (size_t)(s - w.rest) + n;
    {
      /* Is anything but slashes left after this component? */
      const char *t = s + n;
      while (*t == '/')
        t++;
      last = *t == '\0';
    }
    if (n == 1 && s[0] == '.') {
      w.pos = next;
      if (last) {
        w.rest[next] = '\0';
        w.pos = next;
      }
      continue;
    }
    if (n == 2 && s[0] == '.' && s[1] == '.') {
      if (w.depth == 1) {
        rc = sm_err_set(err, SM_EESCAPE, "%s: refused: \"..\" leaves the root",
                        rel);
        break;
      }
      walk_pop_to(&w, w.depth - 1);
      w.pos = next;
      continue;
    }
    if (n > NAME_MAX) {
      rc = sm_err_set(err, SM_ETOOBIG, "%s: file name too long", rel);
      break;
    }
    {
      char name[NAME_MAX + 1];
      int top = w.dirs[w.depth - 1];
      memcpy(name, s, n);
      name[n] = '\0';
      pfd = openat(top, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (pfd < 0) {
        rc = errno_error(rel, errno, err);
        break;
      }
      if (fstat(pfd, &st) != 0) {
        rc = errno_error(rel, errno, err);
        close(pfd);
        break;
      }
      if (S_ISLNK(st.st_mode) &&
          !(last && (flags & 3) == SM_OPEN_PROBE && (flags & SM_OPEN_LINK))) {
        rc = walk_link(&w, pfd, root_path, flags, rel, next, &links, err);
        if (rc != 0)
          break;
        continue;
      }
      if (last) {
        rc = finish(pfd, &st, flags, top, name, O_NOFOLLOW, rel, out, err);
        break;
      }
      if (!S_ISDIR(st.st_mode)) {
        close(pfd);
        rc = sm_err_set(err, SM_ENOENT, "%s: %s", rel, strerror(ENOTDIR));
        break;
      }
      if (w.depth == MAX_DEPTH) {
        close(pfd);
        rc = sm_err_set(err, SM_ELIMIT, "%s: more than %d directories deep",
                        rel, MAX_DEPTH);
        break;
      }
      w.dirs[w.depth++] = pfd;
      w.pos = next;
    }
  }
  walk_pop_to(&w, 1);
  return rc;
}

int sm_open_beneath(int rootfd, const char *root_path, const char *rel,
                    int flags, struct stat *st, sm_err *err) {
  if (rel == NULL)
    return sm_err_set(err, SM_EINVAL, "no path given");
  if (rootfd < 0)
    return sm_err_set(err, SM_EINVAL, "%s: no root directory", rel);
#ifdef SYS_openat2
  if (rel[0] != '/' && rel[0] != '\0' && have_openat2()) {
    /* One call for a path without links.  O_NOFOLLOW with O_PATH makes a
     * final link come back as itself (for probes). */
    int oflags =
        O_PATH | O_CLOEXEC | ((flags & 3) == SM_OPEN_PROBE ? O_NOFOLLOW : 0);
    long fd = sys_openat2(rootfd, rel, oflags,
                          RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                              RESOLVE_NO_MAGICLINKS);
    if (fd >= 0) {
      struct stat s;
      if (fstat((int)fd, &s) != 0) {
        int e = errno;
        close((int)fd);
        return errno_error(rel, e, err);
      }
      if (S_ISLNK(s.st_mode) &&
          !((flags & 3) == SM_OPEN_PROBE && (flags & SM_OPEN_LINK))) {
        /* Some kernels hand back an O_PATH descriptor of a final link
         * even without O_NOFOLLOW: the walk follows it, or refuses. */
        close((int)fd);
        return walk_open(rootfd, root_path, rel, flags, st, err);
      }
      if ((flags & 3) != SM_OPEN_FILE || !S_ISREG(s.st_mode))
        return finish((int)fd, &s, flags, rootfd, rel, 0, rel, st, err);
      /* Regular file: reopened through /proc; without it, by openat2
       * again (the walk's fallback would pass a whole path to openat). */
      {
        char proc[64];
        int rfd;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", (int)fd);
        rfd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (rfd < 0 && (errno == ENOENT || errno == ENOTDIR))
          rfd = (int)sys_openat2(
              rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (rfd < 0) {
          int e = errno;
          close((int)fd);
          return errno_error(rel, e, err);
        }
        close((int)fd);
        {
          struct stat s2;
          fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) & ~O_NONBLOCK);
          if (fstat(rfd, &s2) != 0 || s2.st_dev != s.st_dev ||
              s2.st_ino != s.st_ino || !S_ISREG(s2.st_mode)) {
            close(rfd);
            return sm_err_set(err, SM_EIO, "%s: changed while being opened",
                              rel);
          }
        }
        if (st)
          *st = s;
        return rfd;
      }
    }
    switch (errno) {
    case ENOENT:
    case ENOTDIR:
    case EACCES:
    case ENAMETOOLONG:
      return errno_error(rel, errno, err);
    case ENOSYS:
    case EPERM:
    case EINVAL:
    case E2BIG:
      atomic_store(&openat2_state, -1);
      break;
    default:
      /* ELOOP (a link on the way), EXDEV, EAGAIN (a rename meanwhile):
       * the walk decides. */
      break;
    }
  }
#endif
  return walk_open(rootfd, root_path, rel, flags, st, err);
}

/* ==== Regular files ==== */

int sm_rfile_open(sm_rfile *f, const char *path, sm_err *err) {
  struct stat st;
  int fd;

  f->fd = -1;
  f->size = f->ino = f->dev = f->nread = 0;
  f->path = NULL;
  fd = sm_open_path(path, SM_OPEN_FILE, &st, err);
  if (fd < 0)
    return fd;
  f->path = sm_strdup(path);
  if (f->path == NULL) {
    close(fd);
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  }
  f->fd = fd;
  f->size = (uint64_t)st.st_size;
  f->ino = (uint64_t)st.st_ino;
  f->dev = (uint64_t)st.st_dev;
  return 0;
}

ssize_t sm_rfile_pread(sm_rfile *f, void *buf, size_t n, uint64_t off,
                       sm_err *err) {
  size_t got = 0;

  while (got < n) {
    ssize_t r = pread(f->fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0) {
      int e = errno;
      if (e == EINTR)
        continue;
      return sm_err_set(err, sm_err_from_errno(e), "%s: read failed: %s",
                        f->path ? f->path : "?", strerror(e));
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  f->nread += got;
  return (ssize_t)got;
}

int sm_rfile_stat(sm_rfile *f, sm_err *err) {
  struct stat st;

  if (fstat(f->fd, &st) != 0) {
    int e = errno;
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s",
                      f->path ? f->path : "?", strerror(e));
  }
  f->size = (uint64_t)st.st_size;
  f->ino = (uint64_t)st.st_ino;
  f->dev = (uint64_t)st.st_dev;
  return 0;
}

void sm_rfile_close(sm_rfile *f) {
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
  sm_free(f->path);
  f->path = NULL;
}

int sm_file_read_all(const char *path, size_t max, char **out, size_t *len,
                     sm_err *err) {
  sm_rfile f;
  char *p;
  ssize_t n;
  int rc;

  *out = NULL;
  if (len)
    *len = 0;
  rc = sm_rfile_open(&f, path, err);
  if (rc != 0)
    return rc;
  if (f.size > max) {
    sm_rfile_close(&f);
    return sm_err_set(err, SM_ETOOBIG, "%s: file is larger than %zu bytes",
                      path, max);
  }
  p = sm_malloc((size_t)f.size + 1);
  if (p == NULL) {
    sm_rfile_close(&f);
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  }
  n = sm_rfile_pread(&f, p, (size_t)f.size, 0, err);
  sm_rfile_close(&f);
  if (n < 0) {
    sm_free(p);
    return (int)n;
  }
  p[n] = '\0';
  *out = p;
  if (len)
    *len = (size_t)n;
  return 0;
}

/* ==== Reverse line reader ==== */

/* Invariant: the bytes of the file in [_wstart, _end) are in
 * _buf[0 .. _end - _wstart).  Lines are handed out from the end of that
 * range; _end then moves down to the newline before them.  _skip_nl == 2
 * means the previous line was cut and the rest of it (towards the start of
 * the file) must be skipped first; _skip_nl == 3 means no line is left. */

int sm_revlines_init(sm_revlines *r, sm_rfile *f, uint64_t stop, uint64_t end,
                     size_t max_line, sm_err *err) {
  memset(r, 0, sizeof(*r));
  if (stop > end)
    return sm_err_set(err, SM_EINVAL, "%s: bad range", f->path);
  r->_f = f;
  r->_max_line = max_line ? max_line : DEFAULT_MAX_LINE;
  r->_block = READ_BLOCK;
  r->_cap = r->_max_line + r->_block;
  r->_buf = sm_malloc(r->_cap);
  if (r->_buf == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", f->path);
  r->_stop = stop;
  r->_end = end;
  r->_wstart = end;
  r->_wlen = 0;
  r->_skip_nl = 0;
  if (end > stop) {
    /* Drop one trailing newline: it ends the last line, it is not an
     * empty line of its own. */
    char c;
    ssize_t n = sm_rfile_pread(f, &c, 1, end - 1, err);
    if (n < 0)
      return (int)n;
    if (n == 1 && c == '\n') {
      r->_end = end - 1;
      r->_wstart = end - 1;
    } else if (n == 1) {
      /* The byte is the last line's and is read again with it: counted
       * once in the file's bytes read. */
      f->nread--;
    }
  } else {
    r->_skip_nl = 3;
  }
  return 0;
}

/* Prepends up to one block before _wstart.  Returns bytes added or < 0. */
static ssize_t rev_extend(sm_revlines *r, sm_err *err) {
  size_t have = (size_t)(r->_end - r->_wstart);
  size_t room = r->_cap - have;
  size_t want = r->_block < room ? r->_block : room;
  uint64_t avail = r->_wstart - r->_stop;
  ssize_t n;

  if (want > avail)
    want = (size_t)avail;
  if (want == 0)
    return 0;
  memmove(r->_buf + want, r->_buf, have);
  n = sm_rfile_pread(r->_f, r->_buf, want, r->_wstart - want, err);
  if (n < 0)
    return n;
  if ((size_t)n != want) /* the file shrank under us */
    return sm_err_set(err, SM_EIO, "%s: file changed while reading",
                      r->_f->path);
  r->_wstart -= want;
  return n;
}

/* Skips backwards to the newline that ends the line before a cut line. */
static int rev_skip(sm_revlines *r, sm_err *err) {
  uint64_t pos = r->_wstart;

  while (pos > r->_stop) {
    size_t n = r->_block;
    const char *q;
    ssize_t got;

    if (n > pos - r->_stop)
      n = (size_t)(pos - r->_stop);
    got = sm_rfile_pread(r->_f, r->_buf, n, pos - n, err);
    if (got < 0)
      return (int)got;
    if ((size_t)got != n)
      return sm_err_set(err, SM_EIO, "%s: file changed while reading",
                        r->_f->path);
    q = memrchr(r->_buf, '\n', n);
    if (q != NULL) {
      /* The bytes before the newline stay in the window: the next line
       * is taken from them, not read again. */
      r->_end = pos - n + (uint64_t)(q - r->_buf);
      r->_wstart = pos - n;
      r->_clean = 0;
      r->_skip_nl = 0;
      return 0;
    }
    pos -= n;
  }
  r->_skip_nl = 3;
  return 0;
}

const char *sm_revlines_held(const sm_revlines *r, uint64_t *start,
                             size_t *len) {
  if (r->_buf == NULL || r->_end <= r->_wstart)
    return NULL;
  *start = r->_wstart;
  *len = (size_t)(r->_end - r->_wstart);
  return r->_buf;
}

int sm_revlines_next(sm_revlines *r, const char **line, size_t *len,
                     uint64_t *off, int *truncated, sm_err *err) {
  if (truncated)
    *truncated = 0;
  if (r->_skip_nl == 2) {
    int rc = rev_skip(r, err);
    if (rc < 0)
      return rc;
  }
  if (r->_skip_nl == 3)
    return 0;
  for (;;) {
    size_t have = (size_t)(r->_end - r->_wstart);
    /* Only the bytes prepended since the last search are searched. */
    size_t fresh = have > r->_clean ? have - r->_clean : 0;
    const char *q = fresh ? memrchr(r->_buf, '\n', fresh) : NULL;

    if (q == NULL)
      r->_clean = have;
    if (q != NULL || r->_wstart == r->_stop) {
      /* A whole line is in the window (or the first line of the range). */
      size_t start = q ? (size_t)(q - r->_buf) + 1 : 0;
      if (have - start > r->_max_line) {
        start = have - r->_max_line;
        if (truncated)
          *truncated = 1;
      }
      *line = r->_buf + start;
      *len = have - start;
      if (off)
        *off = r->_wstart + start;
      if (q != NULL)
        r->_end = r->_wstart + (uint64_t)(q - r->_buf);
      else
        r->_skip_nl = 3;
      r->_clean = 0;
      return 1;
    }
    if (have >= r->_max_line) {
      *line = r->_buf + have - r->_max_line;
      *len = r->_max_line;
      if (off)
        *off = r->_end - r->_max_line;
      if (truncated)
        *truncated = 1;
      r->_skip_nl = 2;
      r->_clean = 0;
      return 1;
    }
    {
      ssize_t n = rev_extend(r, err);
      if (n < 0)
        return (int)n;
    }
  }
}

void sm_revlines_release(sm_revlines *r) {
  sm_free(r->_buf);
  r->_buf = NULL;
}

/* ==== Forward line reader ==== */

int sm_fwdlines_init(sm_fwdlines *r, sm_rfile *f, uint64_t start,
                     uint64_t limit, size_t max_line, sm_err *err) {
  memset(r, 0, sizeof(*r));
  r->_f = f;
  r->_max_line = max_line ? max_line : DEFAULT_MAX_LINE;
  r->_cap = r->_max_line + READ_BLOCK;
  r->_buf = sm_malloc(r->_cap);
  if (r->_buf == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", f->path);
  r->_foff = start;
  r->_limit = limit;
  return 0;
}

/* Reads more bytes after the valid ones.  Returns bytes read or < 0. */
static ssize_t fwd_fill(sm_fwdlines *r, sm_err *err) {
  uint64_t at = r->_foff + r->_len;
  size_t room = r->_cap - r->_len;
  ssize_t n;

  if (at >= r->_limit || room == 0) {
    r->_eof = at >= r->_limit;
    return 0;
  }
  if (room > r->_limit - at)
    room = (size_t)(r->_limit - at);
  if (room > READ_BLOCK)
    room = READ_BLOCK;
  n = sm_rfile_pread(r->_f, r->_buf + r->_len, room, at, err);
  if (n < 0)
    return n;
  if (n == 0)
    r->_eof = 1;
  r->_len += (size_t)n;
  return n;
}

int sm_fwdlines_next(sm_fwdlines *r, const char **line, size_t *len,
                     uint64_t *off, int *truncated, sm_err *err) {
  if (truncated)
    *truncated = 0;
  /* After a cut line, discard bytes up to and including its newline. */
  while (r->_skipping) {
    size_t have = r->_len - r->_pos;
    const char *q = have ? memchr(r->_buf + r->_pos, '\n', have) : NULL;
    ssize_t n;

    if (q != NULL) {
      r->_pos = (size_t)(q - r->_buf) + 1;
      r->_skipping = 0;
      break;
    }
    r->_foff += r->_len;
    r->_pos = r->_len = 0;
    if (r->_eof)
      return 0;
    n = fwd_fill(r, err);
    if (n < 0)
      return (int)n;
    if (n == 0 && r->_eof)
      return 0;
  }
  for (;;) {
    size_t have = r->_len - r->_pos;
    const char *s = r->_buf + r->_pos;
    /* Only the bytes read since the last search are searched. */
    const char *q =
        have > r->_clean ? memchr(s + r->_clean, '\n', have - r->_clean) : NULL;
    ssize_t n;

    if (q == NULL)
      r->_clean = have;
    else
      r->_clean = 0;
    if (q != NULL) {
      size_t l = (size_t)(q - s);
      *line = s;
      *len = l > r->_max_line ? r->_max_line : l;
      if (truncated)
        *truncated = l > r->_max_line;
      if (off)
        *off = r->_foff + r->_pos;
      r->_pos += l + 1;
      return 1;
    }
    if (have >= r->_max_line) {
      *line = s;
      *len = r->_max_line;
      if (off)
        *off = r->_foff + r->_pos;
      if (truncated)
        *truncated = 1;
      r->_pos += r->_max_line;
      r->_skipping = 1;
      r->_clean = 0;
      return 1;
    }
    if (!r->_eof) {
      if (r->_pos > 0) {
        memmove(r->_buf, s, have);
        r->_foff += r->_pos;
        r->_len = have;
        r->_pos = 0;
      }
      n = fwd_fill(r, err);
      if (n < 0)
        return (int)n;
      continue;
    }
    if (have == 0)
      return 0;
    *line = s;
    *len = have;
    if (off)
      *off = r->_foff + r->_pos;
    r->_pos += have;
    r->_clean = 0;
    return 1;
  }
}

uint64_t sm_fwdlines_tell(const sm_fwdlines *r) {
  return r->_foff + r->_pos;
}

void sm_fwdlines_release(sm_fwdlines *r) {
  sm_free(r->_buf);
  r->_buf = NULL;
}
