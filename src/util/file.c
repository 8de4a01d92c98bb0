/* file.c - bounded access to regular files: positioned reads, whole-file
 * reads with a cap, and line readers that walk a file backwards or
 * forwards with a bounded window. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedmate/sm_util.h"

#define DEFAULT_MAX_LINE ((size_t)1 << 20)
#define READ_BLOCK ((size_t)64 << 10)

/* ==== Regular files ==== */

static int kind_error(const char *path, mode_t mode, sm_err *err) {
  if (S_ISDIR(mode))
    return sm_err_set(err, SM_EISDIR, "%s: is a directory", path);
  if (S_ISFIFO(mode))
    return sm_err_set(err, SM_ENOTREG, "%s: is a FIFO, not a regular file",
                      path);
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return sm_err_set(err, SM_ENOTREG, "%s: is a device, not a regular file",
                      path);
  return sm_err_set(err, SM_ENOTREG, "%s: not a regular file", path);
}

int sm_rfile_open(sm_rfile *f, const char *path, sm_err *err) {
  struct stat st;
  int fd;

  f->fd = -1;
  f->size = f->ino = f->dev = f->nread = 0;
  f->path = NULL;
  /* O_NONBLOCK keeps a FIFO from blocking the open; the type check below
   * then refuses it. */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
  }
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return kind_error(path, st.st_mode, err);
  }
  /* Back to blocking reads for a regular file. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
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
