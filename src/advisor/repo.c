/* repo.c - the repository as untrusted, read-only input.
 *
 * Every path is made relative to the real root and "." and ".." are
 * collapsed.  The root is opened once; every file and directory is then
 * reached through sm_open_beneath from that descriptor, one component at
 * a time (or openat2 RESOLVE_BENEATH), so that renaming a directory or
 * swapping it for a link while we read cannot lead outside.  Symbolic
 * links are followed only while they stay inside: their targets are
 * resolved against the directories already held, and a link that leads
 * out is refused without a look-up outside the root.  Files must be
 * regular (no FIFO, device or socket is opened), under the per-file cap,
 * and not binary.  The count of files, the total bytes and the time
 * budget are enforced here, so no reader can go past them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor/advisor_int.h"

#define DEFAULT_MAX_FILE ((size_t)1 << 20)
#define DEFAULT_MAX_FILES 2000
#define DEFAULT_MAX_TOTAL ((size_t)64 << 20)
#define DEFAULT_BUDGET_S 2.0

/* Directories never read: version control, environments, caches. */
static const char *const skip_dirs[] = {".git",
                                        ".hg",
                                        ".svn",
                                        "node_modules",
                                        "__pycache__",
                                        "site-packages",
                                        "dist-packages",
                                        ".venv",
                                        "venv",
                                        ".tox",
                                        ".mypy_cache",
                                        ".eggs",
                                        "wandb",
                                        ".ipynb_checkpoints",
                                        NULL};

/* Extensions of data and binary files, never opened. */
static const char *const skip_exts[] = {
    ".pt",   ".pth",      ".bin",   ".ckpt", ".safetensors", ".npy",   ".npz",
    ".pkl",  ".pickle",   ".h5",    ".hdf5", ".parquet",     ".arrow", ".png",
    ".jpg",  ".jpeg",     ".gif",   ".bmp",  ".webp",        ".mp4",   ".wav",
    ".flac", ".mp3",      ".zip",   ".gz",   ".tgz",         ".bz2",   ".xz",
    ".zst",  ".tar",      ".so",    ".o",    ".a",           ".pyc",   ".whl",
    ".onnx", ".tfrecord", ".jsonl", ".csv",  ".tsv",         ".pdf",   ".model",
    ".idx",  ".lmdb",     NULL};

static int refused_root(const char *real) {
  static const char *const bad[] = {"/proc", "/sys", "/dev", NULL};
  for (int i = 0; bad[i]; i++) {
    size_t n = strlen(bad[i]);
    if (strncmp(real, bad[i], n) == 0 && (real[n] == '/' || real[n] == 0))
      return 1;
  }
  return 0;
}

int sm__repo_open(sm__ctx *c, sm_err *err) {
  const sm_extract_req *q = c->req;
  char real[PATH_MAX];
  struct stat st;

  if (q->repo == NULL || q->repo[0] == '\0')
    return sm_err_set(err, SM_EINVAL, "no repository given");
  /* The root itself is the caller's path: resolving it may follow links. */
  if (realpath(q->repo, real) == NULL) {
    int e = errno;
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", q->repo,
                      strerror(e));
  }
  if (refused_root(real))
    return sm_err_set(err, SM_EACCES, "%s: refusing a system directory",
                      q->repo);
  c->root_fd = open(real, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (c->root_fd < 0 || fstat(c->root_fd, &st) != 0 || !S_ISDIR(st.st_mode))
    return sm_err_set(err, SM_ENOTREG, "%s: not a directory", q->repo);
  c->root = sm__strdup(c, real);
  if (c->root == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  c->root_len = strlen(c->root);
  /* "/" as root would make every path "inside". */
  if (c->root_len == 1)
    return sm_err_set(err, SM_EACCES, "%s: refusing / as repository", q->repo);
  c->max_file = q->max_file_bytes ? q->max_file_bytes : DEFAULT_MAX_FILE;
  c->max_files = q->max_files > 0 ? q->max_files : DEFAULT_MAX_FILES;
  c->max_total = q->max_total_bytes ? q->max_total_bytes : DEFAULT_MAX_TOTAL;
  c->deadline =
      sm_now() + (q->time_budget_s > 0 ? q->time_budget_s : DEFAULT_BUDGET_S);
  c->cwd = "";
  if (q->cwd != NULL && q->cwd[0] != '\0') {
    const char *cwd = sm__repo_join(c, "", q->cwd);
    if (cwd == NULL)
      return sm_err_set(err, SM_EESCAPE, "%s: --cwd leaves the repository",
                        q->cwd);
    if (!sm__repo_is_dir(c, cwd))
      return sm_err_set(err, SM_ENOENT,
                        "%s: --cwd is not a directory in the repository",
                        q->cwd);
    c->cwd = cwd;
  }
  return 0;
}

const char *sm__repo_join(sm__ctx *c, const char *base, const char *path) {
  char buf[PATH_MAX];
  const char *comp[256];
  size_t clen[256];
  int nc = 0;
  size_t o = 0;
  const char *s;

  if (path == NULL || path[0] == '\0' || path[0] == '~')
    return NULL;
  if (path[0] == '/') {
    if (strncmp(path, c->root, c->root_len) != 0 ||
        (path[c->root_len] != '/' && path[c->root_len] != '\0'))
      return NULL;
    path += c->root_len;
    base = "";
  }
  if (strlen(base) + strlen(path) + 2 >= sizeof(buf))
    return NULL;
  snprintf(buf, sizeof(buf), "%s/%s", base ? base : "", path);
  s = buf;
  while (*s) {
    const char *e;
    while (*s == '/')
      s++;
    if (!*s)
      break;
    e = strchr(s, '/');
    if (e == NULL)
      e = s + strlen(s);
    if (e - s == 1 && s[0] == '.') {
      /* "." */
    } else if (e - s == 2 && s[0] == '.' && s[1] == '.') {
      if (nc == 0)
        return NULL;
      nc--;
    } else {
      if (nc == 256)
        return NULL;
      comp[nc] = s;
      clen[nc++] = (size_t)(e - s);
    }
    s = e;
  }
  {
    char out[PATH_MAX];
    for (int i = 0; i < nc; i++) {
      if (o + clen[i] + 2 >= sizeof(out))
        return NULL;
      if (i)
        out[o++] = '/';
      memcpy(out + o, comp[i], clen[i]);
      o += clen[i];
    }
    out[o] = '\0';
    return sm__strdup(c, out);
  }
}

/* True when a component of rel is a skipped directory. */
static int skipped_path(const char *rel) {
  const char *s = rel;
  while (*s) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    if (e != NULL)
      for (int i = 0; skip_dirs[i]; i++)
        if (strlen(skip_dirs[i]) == n && strncmp(s, skip_dirs[i], n) == 0)
          return 1;
    if (e == NULL)
      break;
    s = e + 1;
  }
  return 0;
}

static int skipped_ext(const char *rel) {
  const char *dot = strrchr(rel, '.');
  if (dot == NULL || strchr(dot, '/') != NULL)
    return 0;
  for (int i = 0; skip_exts[i]; i++)
    if (strcasecmp(dot, skip_exts[i]) == 0)
      return 1;
  return 0;
}

void sm__repo_close(sm__ctx *c) {
  if (c->root_fd >= 0)
    close(c->root_fd);
  c->root_fd = -1;
}

/* Opens rel beneath the root (links followed while they stay inside).
 * Returns a descriptor or a negative code (SM_EESCAPE, SM_ENOENT,
 * SM_ENOTREG, ...). */
static int open_in(sm__ctx *c, const char *rel, int kind, struct stat *st) {
  if (c->root_fd < 0)
    return SM_ENOENT;
  return sm_open_beneath(c->root_fd, c->root, rel, kind | SM_OPEN_FOLLOW, st,
                         NULL);
}

int sm__repo_is_file(sm__ctx *c, const char *rel) {
  struct stat st;
  int fd;

  if (rel == NULL || skipped_path(rel) || skipped_ext(rel))
    return 0;
  fd = open_in(c, rel, SM_OPEN_PROBE, &st);
  if (fd < 0)
    return 0;
  close(fd);
  return S_ISREG(st.st_mode);
}

int sm__repo_exists(sm__ctx *c, const char *rel) {
  struct stat st;
  int fd;

  if (rel == NULL)
    return 0;
  /* As lstat: a final link counts, whatever it names.  A path that would
   * leave the root counts too, so that the caller can say it was refused. */
  fd = open_in(c, rel, SM_OPEN_PROBE | SM_OPEN_LINK, &st);
  if (fd >= 0)
    close(fd);
  return fd >= 0 || fd == SM_EESCAPE || fd == SM_ELIMIT;
}

int sm__repo_is_dir(sm__ctx *c, const char *rel) {
  struct stat st;
  int fd;

  if (rel == NULL || skipped_path(rel))
    return 0;
  if (rel[0] == '\0')
    return 1;
  fd = open_in(c, rel, SM_OPEN_DIR, &st);
  if (fd < 0)
    return 0;
  close(fd);
  return 1;
}

static int read_file(sm__ctx *c, const char *rel, const char **data,
                     size_t *len) {
  struct stat st;
  char *buf;
  size_t got = 0;
  int fd;

  if (c->stopped || sm__expired(c))
    return SM_ELIMIT;
  if (skipped_path(rel) || skipped_ext(rel)) {
    sm__warn(c, "%s: skipped (data, binary or environment file)", rel);
    return SM_EACCES;
  }
  fd = open_in(c, rel, SM_OPEN_FILE, &st);
  if (fd == SM_EESCAPE) {
    sm__warn(c, "%s: refused: resolves outside the repository", rel);
    return fd;
  }
  if (fd == SM_ELIMIT) {
    sm__warn(c, "%s: refused: too many symbolic links", rel);
    return SM_EESCAPE;
  }
  if (fd == SM_ENOENT) {
    sm__warn(c, "%s: no such file in the repository", rel);
    return fd;
  }
  if (fd == SM_ENOTREG || fd == SM_EISDIR) {
    sm__warn(c, "%s: refused: not a regular file", rel);
    return SM_ENOTREG;
  }
  if (fd < 0) {
    sm__warn(c, "%s: cannot open: %s", rel, sm_strerror(fd));
    return fd;
  }
  if (c->res->files_read >= c->max_files) {
    close(fd);
    c->stopped = 1;
    sm__warn(c, "file limit of %d reached: stopped reading", c->max_files);
    return SM_ELIMIT;
  }
  if ((uint64_t)st.st_size > c->max_file) {
    close(fd);
    sm__warn(c, "%s: skipped: %lld bytes is over the %zu-byte file cap", rel,
             (long long)st.st_size, c->max_file);
    return SM_ETOOBIG;
  }
  if (c->bytes_read + (size_t)st.st_size > c->max_total) {
    close(fd);
    c->stopped = 1;
    sm__warn(c, "byte limit of %zu reached: stopped reading", c->max_total);
    return SM_ELIMIT;
  }
  buf = sm_arena_alloc(&c->arena, (size_t)st.st_size + 1);
  if (buf == NULL) {
    close(fd);
    return SM_ENOMEM;
  }
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = '\0';
  c->res->files_read++;
  c->bytes_read += got;
  if (memchr(buf, '\0', got < 8192 ? got : 8192) != NULL) {
    sm__warn(c, "%s: skipped: binary content", rel);
    return SM_EPARSE;
  }
  *data = buf;
  *len = got;
  if (c->up.note_file != NULL)
    c->up.note_file(c, rel, buf, got);
  return 0;
}

int sm__repo_read(sm__ctx *c, const char *rel, const char **data, size_t *len) {
  const char **slot;

  for (int i = 0; i < c->read_paths.n; i++)
    if (strcmp(SM__AT(c->read_paths, const char *, i), rel) == 0)
      return SM_EBUSY;
  slot = sm__vec_push(&c->read_paths);
  if (slot != NULL)
    *slot = rel;
  return read_file(c, rel, data, len);
}

int sm__repo_read_again(sm__ctx *c, const char *rel, const char **data,
                        size_t *len) {
  return read_file(c, rel, data, len);
}
