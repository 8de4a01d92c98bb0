/* sm_util.h - buffers, arenas, bounded file access, reverse line reading,
 * a JSON writer, hashing and small helpers shared by every component. */
#ifndef SM_UTIL_H
#define SM_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "schedmate/sm_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Growable byte buffer ==== */

/* A NUL-terminated growable buffer with a hard cap.  data and len may be
 * read directly; the fields with a leading underscore are private. */
typedef struct sm_buf {
  char *data;  /* contents, always NUL-terminated once non-empty */
  size_t len;  /* bytes used, without the NUL */
  size_t _cap; /* private: bytes allocated */
  size_t _max; /* private: growth cap (0 = SM_BUF_DEFAULT_MAX) */
} sm_buf;

#define SM_BUF_DEFAULT_MAX ((size_t)1 << 30)

/* Sets up an empty buffer that will never grow past max bytes (0: 1 GiB). */
SM_EXTERN void sm_buf_init(sm_buf *b, size_t max);
/* Frees the contents; the buffer may be reused after sm_buf_init. */
SM_EXTERN void sm_buf_release(sm_buf *b);
/* Empties the buffer, keeping its memory. */
SM_EXTERN void sm_buf_reset(sm_buf *b);
/* Makes room for n more bytes.  Returns 0, SM_ENOMEM or SM_ETOOBIG; on
 * failure the buffer is unchanged. */
SM_EXTERN int sm_buf_reserve(sm_buf *b, size_t n);
SM_EXTERN int sm_buf_add(sm_buf *b, const void *p, size_t n);
SM_EXTERN int sm_buf_addc(sm_buf *b, char c);
SM_EXTERN int sm_buf_adds(sm_buf *b, const char *s);
SM_EXTERN int sm_buf_addf(sm_buf *b, const char *fmt, ...) SM_PRINTF(2, 3);
SM_EXTERN int sm_buf_vaddf(sm_buf *b, const char *fmt, va_list ap);
/* Returns the contents as a string ("" when empty). */
SM_EXTERN const char *sm_buf_str(const sm_buf *b);
/* Hands the contents to the caller (free with sm_free) and empties b.
 * Returns NULL for an empty buffer that never allocated. */
SM_EXTERN char *sm_buf_take(sm_buf *b);

/* ==== Arena ==== */

/* Bump allocator for data that dies together (one file's records, one
 * simulation's events).  No per-object free. */
typedef struct sm_arena_block sm_arena_block;
typedef struct sm_arena {
  sm_arena_block *_head; /* private: newest block */
  size_t _block_size;    /* private: default block size */
  size_t _used;          /* private: bytes handed out, for limits */
  size_t _max;           /* private: 0 = unlimited */
} sm_arena;

/* block_size 0 picks 64 KiB; max 0 means no cap on the total. */
SM_EXTERN void sm_arena_init(sm_arena *a, size_t block_size, size_t max);
/* Returns 16-byte aligned memory, or NULL on exhaustion or past the cap. */
SM_EXTERN void *sm_arena_alloc(sm_arena *a, size_t size);
SM_EXTERN void *sm_arena_calloc(sm_arena *a, size_t count, size_t size);
SM_EXTERN char *sm_arena_strndup(sm_arena *a, const char *s, size_t n);
SM_EXTERN char *sm_arena_strdup(sm_arena *a, const char *s);
/* Bytes handed out so far. */
SM_EXTERN size_t sm_arena_used(const sm_arena *a);
/* Frees every block. */
SM_EXTERN void sm_arena_discard(sm_arena *a);

/* ==== Opening files on a user's behalf ==== */

/* What sm_open_path and sm_open_beneath open (one of the first three,
 * optionally with the flags after them). */
#define SM_OPEN_FILE 0 /* a regular file, for reading (blocking reads) */
#define SM_OPEN_DIR 1  /* a directory, as an O_PATH descriptor */
#define SM_OPEN_PROBE                                                          \
  2 /* anything, as an O_PATH descriptor (for fstat);                          \
     * nothing is opened for I/O */
#define SM_OPEN_FOLLOW                                                         \
  4 /* sm_open_beneath: follow symbolic links whose                            \
     * target stays beneath the root */
#define SM_OPEN_LINK                                                           \
  8 /* with SM_OPEN_PROBE: a final symbolic link is                            \
     * returned as itself (as lstat sees it) */

/* Opens a path that a user named (a log, a trace, a config, a --meta
 * file).  Symbolic links in it are followed, since the user chose the
 * path, but what it names is looked at before anything is opened for
 * I/O: an O_PATH descriptor is fstat'ed and only a regular file is
 * reopened for reading, so that a FIFO, a device or a socket is never
 * opened.  Returns the descriptor (O_CLOEXEC) with *st filled (st may be
 * NULL), or a negative code with a message naming the path: SM_ENOENT,
 * SM_EACCES, SM_EISDIR, SM_ENOTREG (FIFO, device, socket), ... */
SM_EXTERN int sm_open_path(const char *path, int flags, struct stat *st,
                           sm_err *err);

/* Opens rel beneath the directory rootfd and never outside it.  Every
 * component is opened relative to a descriptor: openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it (checked
 * at run time), else openat with O_PATH | O_NOFOLLOW one component at a
 * time.  "..", absolute paths and (with SM_OPEN_FOLLOW) symbolic links are
 * resolved here, inside the root, from descriptors already held: a link
 * is read with readlinkat on the link itself and a target that leads out
 * is refused without being looked at (SM_EESCAPE); so are ".." above the
 * root and links met without SM_OPEN_FOLLOW.  root_path, the root's real
 * path (may be NULL), lets an absolute link that names a place inside the
 * root be followed.  More than 40 links give SM_ELIMIT.  Types as for
 * sm_open_path.  Returns the descriptor or a negative code. */
SM_EXTERN int sm_open_beneath(int rootfd, const char *root_path,
                              const char *rel, int flags, struct stat *st,
                              sm_err *err);

/* fopen(path, "r") through sm_open_path; NULL with err set. */
SM_EXTERN FILE *sm_file_fopen(const char *path, sm_err *err);

/* ==== Files ==== */

/* A regular file opened for positioned reads.  Opening goes through
 * sm_open_path: directories, FIFOs, devices and sockets are refused with a
 * message naming the path, and never opened. */
typedef struct sm_rfile {
  int fd;         /* descriptor, -1 when closed */
  uint64_t size;  /* size at open time (refresh with sm_rfile_stat) */
  uint64_t ino;   /* inode, to notice rotation */
  uint64_t dev;   /* device of the inode */
  uint64_t nread; /* bytes read through this handle */
  char *path;     /* copy of the path, for messages */
} sm_rfile;

SM_EXTERN int sm_rfile_open(sm_rfile *f, const char *path, sm_err *err);
/* Reads up to n bytes at off; returns the count (0 at end) or a negative
 * code.  Retries short reads and EINTR. */
SM_EXTERN ssize_t sm_rfile_pread(sm_rfile *f, void *buf, size_t n, uint64_t off,
                                 sm_err *err);
/* Refreshes size/ino/dev from fstat.  Returns 0 or a negative code. */
SM_EXTERN int sm_rfile_stat(sm_rfile *f, sm_err *err);
SM_EXTERN void sm_rfile_close(sm_rfile *f);

/* Reads a whole regular file of at most max bytes into *out (NUL-added,
 * free with sm_free).  Larger files give SM_ETOOBIG. */
SM_EXTERN int sm_file_read_all(const char *path, size_t max, char **out,
                               size_t *len, sm_err *err);

/* ==== Reverse line reader ==== */

/* Yields the lines of a file from the last to the first, reading blocks
 * backwards, so that the cost depends on how many lines the caller takes,
 * not on the file size.  A trailing '\n' does not make an empty last line.
 * Lines longer than max_line are cut to their last max_line bytes and
 * flagged; memory stays bounded by about 2 * max_line + block.  Every byte
 * is read from the file once and searched for newlines once. */
typedef struct sm_revlines {
  sm_rfile *_f;     /* private: the file (borrowed) */
  char *_buf;       /* private: window of the file */
  size_t _cap;      /* private: window capacity */
  uint64_t _wstart; /* private: file offset of _buf[0] */
  size_t _wlen;     /* private: valid bytes in the window */
  uint64_t _end;    /* private: offset where the next line ends */
  uint64_t _stop;   /* private: stop reading below this offset */
  size_t _block;    /* private: read size */
  size_t _max_line; /* private: cap on one line */
  int _skip_nl;     /* private: the next line ends with '\n' to drop */
  size_t _clean;    /* private: bytes before _end known to hold no '\n' */
} sm_revlines;

/* Starts at offset end (the file size for a whole file) and stops at
 * offset stop (0 for the whole file).  max_line 0 picks 1 MiB. */
SM_EXTERN int sm_revlines_init(sm_revlines *r, sm_rfile *f, uint64_t stop,
                               uint64_t end, size_t max_line, sm_err *err);
/* Returns 1 with the next older line in *line and *len (valid until the next
 * call; not NUL-terminated), its file offset in *off (may be NULL) and
 * *truncated set when the line was cut; 0 when no line is left; or a
 * negative code. */
SM_EXTERN int sm_revlines_next(sm_revlines *r, const char **line, size_t *len,
                               uint64_t *off, int *truncated, sm_err *err);
SM_EXTERN void sm_revlines_release(sm_revlines *r);
/* The bytes the reader already holds below the next line it will return:
 * [*start, *start + *len) of the file, read only and valid until the next
 * call; NULL when it holds none. */
SM_EXTERN const char *sm_revlines_held(const sm_revlines *r, uint64_t *start,
                                       size_t *len);

/* ==== Forward line reader ==== */

/* Reads lines from an offset forward, with the same cap on line length. */
typedef struct sm_fwdlines {
  sm_rfile *_f;     /* private */
  char *_buf;       /* private */
  size_t _cap;      /* private */
  size_t _pos;      /* private: next unread byte in _buf */
  size_t _len;      /* private: valid bytes in _buf */
  uint64_t _foff;   /* private: file offset of _buf[0] */
  uint64_t _limit;  /* private: stop at this offset */
  size_t _max_line; /* private */
  int _eof;         /* private */
  int _skipping;    /* private: inside the rest of a cut line */
  size_t _clean;    /* private: bytes after _pos known to hold no '\n' */
} sm_fwdlines;

/* Reads [start, limit); limit UINT64_MAX means to the end of the file. */
SM_EXTERN int sm_fwdlines_init(sm_fwdlines *r, sm_rfile *f, uint64_t start,
                               uint64_t limit, size_t max_line, sm_err *err);
/* As sm_revlines_next, forward.  A line cut at max_line reports the first
 * max_line bytes and the rest is skipped. */
SM_EXTERN int sm_fwdlines_next(sm_fwdlines *r, const char **line, size_t *len,
                               uint64_t *off, int *truncated, sm_err *err);
/* Offset just past the last line returned. */
SM_EXTERN uint64_t sm_fwdlines_tell(const sm_fwdlines *r);
SM_EXTERN void sm_fwdlines_release(sm_fwdlines *r);

/* ==== JSON writer ==== */

#define SM_JW_MAX_DEPTH 32

/* Writes compact JSON into a buffer, inserting commas and escaping
 * strings.  Invalid UTF-8 becomes U+FFFD so the output is always valid. */
typedef struct sm_jw {
  sm_buf *out;                          /* destination (borrowed) */
  int depth;                            /* current nesting */
  unsigned char first[SM_JW_MAX_DEPTH]; /* no element yet at that depth */
  int after_key;                        /* a key was just written */
  int err;                              /* first error, sticky */
} sm_jw;

SM_EXTERN void sm_jw_init(sm_jw *w, sm_buf *out);
SM_EXTERN void sm_jw_obj_begin(sm_jw *w);
SM_EXTERN void sm_jw_obj_end(sm_jw *w);
SM_EXTERN void sm_jw_arr_begin(sm_jw *w);
SM_EXTERN void sm_jw_arr_end(sm_jw *w);
SM_EXTERN void sm_jw_key(sm_jw *w, const char *key);
SM_EXTERN void sm_jw_str(sm_jw *w, const char *s);
SM_EXTERN void sm_jw_strn(sm_jw *w, const char *s, size_t n);
/* Non-finite numbers are written as null. */
SM_EXTERN void sm_jw_num(sm_jw *w, double v);
SM_EXTERN void sm_jw_int(sm_jw *w, long long v);
SM_EXTERN void sm_jw_bool(sm_jw *w, int v);
SM_EXTERN void sm_jw_null(sm_jw *w);
/* A key and its value in one call (non-finite numbers and NULL strings are
 * written as null). */
SM_EXTERN void sm_jw_kv_num(sm_jw *w, const char *key, double v);
SM_EXTERN void sm_jw_kv_int(sm_jw *w, const char *key, long long v);
SM_EXTERN void sm_jw_kv_str(sm_jw *w, const char *key, const char *s);
SM_EXTERN void sm_jw_kv_bool(sm_jw *w, const char *key, int v);
/* Appends an already-serialised JSON value verbatim. */
SM_EXTERN void sm_jw_raw(sm_jw *w, const char *json);
/* Returns 0 if every write succeeded and nesting is balanced. */
SM_EXTERN int sm_jw_finish(sm_jw *w);
/* Writes a JSON string literal (with quotes) for s into out. */
SM_EXTERN int sm_json_quote(sm_buf *out, const char *s, size_t n);

/* ==== Hashing ==== */

/* A fast 64-bit non-cryptographic hash of n bytes. */
SM_EXTERN uint64_t sm_hash64(const void *p, size_t n, uint64_t seed);
/* Mixes a 64-bit value (a finaliser); useful to combine hashes. */
SM_EXTERN uint64_t sm_hash_mix(uint64_t x);

/* Deterministic PRNG (xoshiro-style), for seeded runs. */
typedef struct sm_rng {
  uint64_t s[4]; /* state */
} sm_rng;
SM_EXTERN void sm_rng_seed(sm_rng *r, uint64_t seed);
SM_EXTERN uint64_t sm_rng_next(sm_rng *r);
/* Uniform in [0, 1). */
SM_EXTERN double sm_rng_uniform(sm_rng *r);
/* Standard normal. */
SM_EXTERN double sm_rng_normal(sm_rng *r);

/* ==== Misc ==== */

/* Monotonic time in seconds. */
SM_EXTERN double sm_now(void);
/* Parses a whole string as a finite double / int64; 0 or SM_EPARSE. */
SM_EXTERN int sm_parse_double(const char *s, double *out);
SM_EXTERN int sm_parse_i64(const char *s, long long *out);
/* Median of n doubles; reorders v.  NaN when n is 0. */
SM_EXTERN double sm_median(double *v, size_t n);

/* ==== Daemon helpers (src/util/daemon.c) ==== */

/* Appends one line (data must end with '\n') to path with a single
 * O_APPEND write, creating the file with mode 0640, so that lines from
 * several threads or processes never interleave.  Returns 0 or a negative
 * code with a message naming the path. */
SM_EXTERN int sm_append_line(const char *path, const char *data, size_t n,
                             sm_err *err);
/* Appends s to b escaped as a Prometheus label value (backslash, double
 * quote and newline). */
SM_EXTERN void sm_prom_label(sm_buf *b, const char *s);
/* Creates a listening UNIX stream socket at path (non-blocking,
 * close-on-exec) with the given file mode: a stale socket file left by a
 * dead process is replaced; a socket another process still listens on is
 * SM_EBUSY; any other file is SM_EINVAL.  Returns the descriptor or a
 * negative code with a message. */
SM_EXTERN int sm_unix_listen(const char *path, int mode, int backlog,
                             sm_err *err);
/* The user and group ids of the process at the other end of a connected
 * UNIX socket.  Returns 0 or a negative code. */
SM_EXTERN int sm_unix_peer(int fd, unsigned *uid, unsigned *gid);

#ifdef __cplusplus
}
#endif
#endif /* SM_UTIL_H */
