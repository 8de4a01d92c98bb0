/* sm_base.h - version, export macro, error codes and allocator hooks.
 *
 * Every other public header includes this one.  Functions that can fail
 * return an int: 0 on success, a negative SM_E* code on error.  Details go
 * into an optional caller-supplied sm_err, which is left untouched when no
 * error occurs, so that several calls can share one.
 */
#ifndef SM_BASE_H
#define SM_BASE_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SM_VERSION_MAJOR 0
#define SM_VERSION_MINOR 1
#define SM_VERSION_PATCH 0
#define SM_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define SM_EXTERN __attribute__((visibility("default")))
#define SM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SM_EXTERN
#define SM_PRINTF(f, a)
#endif

/* ==== Errors ==== */

/* One line per error: name, message.  Produces the enum and sm_strerror. */
#define SM_ERRNO_MAP(XX)                                                       \
  XX(NOMEM, "out of memory")                                                   \
  XX(INVAL, "invalid argument")                                                \
  XX(IO, "input/output error")                                                 \
  XX(NOENT, "no such file or directory")                                       \
  XX(ACCES, "permission denied")                                               \
  XX(ISDIR, "is a directory")                                                  \
  XX(NOTREG, "not a regular file")                                             \
  XX(TOOBIG, "input too large")                                                \
  XX(PARSE, "parse error")                                                     \
  XX(RANGE, "value out of range")                                              \
  XX(NOTFOUND, "not found")                                                    \
  XX(UNSUPP, "not supported")                                                  \
  XX(ESCAPE, "path leaves the allowed root")                                   \
  XX(TIMEOUT, "timed out")                                                     \
  XX(BUSY, "resource busy")                                                    \
  XX(SCHEMA, "schema version mismatch")                                        \
  XX(CONN, "connection failed")                                                \
  XX(CORRUPT, "corrupt data")                                                  \
  XX(LIMIT, "limit reached")

/* clang-format off */
enum sm__errno_index {
  SM__ERRNO_NONE = 0,
#define SM__XX(name, msg) SM__EI_##name,
  SM_ERRNO_MAP(SM__XX)
#undef SM__XX
  SM__ERRNO_COUNT
};

typedef enum sm_errno {
  SM_OK = 0,
#define SM__XX(name, msg) SM_E##name = -SM__EI_##name,
  SM_ERRNO_MAP(SM__XX)
#undef SM__XX
} sm_errno;
/* clang-format on */

#define SM_ERR_MSG_SIZE 256

/* Details of a failure.  Filled by the first failing call; untouched on
 * success. */
typedef struct sm_err {
  int code;                  /* an SM_E* value, 0 when nothing failed */
  char msg[SM_ERR_MSG_SIZE]; /* one line, no trailing newline */
} sm_err;

/* Returns the static message of an SM_E* code ("unknown error" for others). */
SM_EXTERN const char *sm_strerror(int code);

/* Returns the name of an SM_E* code, e.g. "SM_ENOMEM". */
SM_EXTERN const char *sm_errname(int code);

/* Records code and a printf-style message in err (if err is not NULL and
 * holds no earlier error) and returns code, so that callers can write
 * `return sm_err_set(err, SM_EIO, "...")`. */
SM_EXTERN int sm_err_set(sm_err *err, int code, const char *fmt, ...)
    SM_PRINTF(3, 4);

/* Maps an errno value to the closest SM_E* code. */
SM_EXTERN int sm_err_from_errno(int errnum);

/* Clears err so that it can be reused. */
SM_EXTERN void sm_err_clear(sm_err *err);

/* ==== Allocation ==== */

/* Replaceable allocator, as in libuv and hiredis.  All library memory goes
 * through these hooks.  On exhaustion the library returns SM_ENOMEM; it never
 * aborts, because it may run inside another daemon. */
typedef struct sm_allocator {
  void *(*malloc_fn)(size_t size);
  void *(*calloc_fn)(size_t count, size_t size);
  void *(*realloc_fn)(void *ptr, size_t size);
  void (*free_fn)(void *ptr);
} sm_allocator;

/* Installs hooks (NULL restores the C library's).  Call before any other
 * function.  Returns 0, or SM_EINVAL if a hook is missing. */
SM_EXTERN int sm_set_allocator(const sm_allocator *a);

SM_EXTERN void *sm_malloc(size_t size);
/* Returns NULL if count * size overflows. */
SM_EXTERN void *sm_calloc(size_t count, size_t size);
SM_EXTERN void *sm_realloc(void *ptr, size_t size);
/* sm_free(NULL) is a no-op. */
SM_EXTERN void sm_free(void *ptr);
/* Copies a NUL-terminated string; NULL on exhaustion or NULL input. */
SM_EXTERN char *sm_strdup(const char *s);
/* Copies n bytes and adds a NUL; NULL on exhaustion. */
SM_EXTERN char *sm_strndup(const char *s, size_t n);

/* ==== Invariants ==== */

/* Aborts with file and line: only for violated internal invariants, never
 * for bad input.  Called through SM_ASSERT and SM_BUG, which are public,
 * so it is exported under a public name. */
SM_EXTERN void sm_assert_fail(const char *file, int line, const char *expr);
#define SM_ASSERT(e) ((e) ? (void)0 : sm_assert_fail(__FILE__, __LINE__, #e))
#define SM_BUG(msg) sm_assert_fail(__FILE__, __LINE__, msg)

#define SM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define SM_MAX(a, b) ((a) > (b) ? (a) : (b))

#ifdef __cplusplus
}
#endif
#endif /* SM_BASE_H */
