/* err.c - error codes, messages and the replaceable allocator. */
#include "schedmate/sm_base.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Errors ==== */

static const char *const err_msgs[SM__ERRNO_COUNT] = {"success",
#define SM__XX(name, msg) msg,
                                                      SM_ERRNO_MAP(SM__XX)
#undef SM__XX
};

static const char *const err_names[SM__ERRNO_COUNT] = {"SM_OK",
#define SM__XX(name, msg) "SM_E" #name,
                                                       SM_ERRNO_MAP(SM__XX)
#undef SM__XX
};

const char *sm_strerror(int code) {
  if (code > 0 || -code >= SM__ERRNO_COUNT)
    return "unknown error";
  return err_msgs[-code];
}

const char *sm_errname(int code) {
  if (code > 0 || -code >= SM__ERRNO_COUNT)
    return "SM_E?";
  return err_names[-code];
}

int sm_err_set(sm_err *err, int code, const char *fmt, ...) {
  va_list ap;

  if (err == NULL || err->code != 0)
    return code;
  err->code = code;
  if (fmt == NULL) {
    snprintf(err->msg, sizeof(err->msg), "%s", sm_strerror(code));
    return code;
  }
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
  va_end(ap);
  /* Keep messages on one line whatever was formatted into them. */
  for (char *p = err->msg; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return code;
}

void sm_err_clear(sm_err *err) {
  if (err != NULL) {
    err->code = 0;
    err->msg[0] = '\0';
  }
}

int sm_err_from_errno(int errnum) {
  switch (errnum) {
  case 0:
    return SM_OK;
  case ENOMEM:
    return SM_ENOMEM;
  case ENOENT:
  case ENOTDIR:
    return SM_ENOENT;
  case EACCES:
  case EPERM:
    return SM_EACCES;
  case EISDIR:
    return SM_EISDIR;
  case EINVAL:
    return SM_EINVAL;
  case EFBIG:
  case E2BIG:
  case EOVERFLOW:
    return SM_ETOOBIG;
  case ETIMEDOUT:
    return SM_ETIMEOUT;
  case EBUSY:
  case EAGAIN:
    return SM_EBUSY;
  case ECONNREFUSED:
  case ECONNRESET:
  case EHOSTUNREACH:
  case ENETUNREACH:
    return SM_ECONN;
  case ELOOP:
    return SM_EESCAPE;
  default:
    return SM_EIO;
  }
}

void sm__bug(const char *file, int line, const char *expr) {
  fprintf(stderr, "schedmate: internal error at %s:%d: %s\n", file, line, expr);
  abort();
}

/* ==== Allocation ==== */

static sm_allocator alloc_hooks = {malloc, calloc, realloc, free};

int sm_set_allocator(const sm_allocator *a) {
  if (a == NULL) {
    alloc_hooks.malloc_fn = malloc;
    alloc_hooks.calloc_fn = calloc;
    alloc_hooks.realloc_fn = realloc;
    alloc_hooks.free_fn = free;
    return 0;
  }
  if (!a->malloc_fn || !a->calloc_fn || !a->realloc_fn || !a->free_fn)
    return SM_EINVAL;
  alloc_hooks = *a;
  return 0;
}

void *sm_malloc(size_t size) {
  return alloc_hooks.malloc_fn(size ? size : 1);
}

void *sm_calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  return alloc_hooks.calloc_fn(count ? count : 1, size ? size : 1);
}

void *sm_realloc(void *ptr, size_t size) {
  return alloc_hooks.realloc_fn(ptr, size ? size : 1);
}

void sm_free(void *ptr) {
  if (ptr != NULL)
    alloc_hooks.free_fn(ptr);
}

char *sm_strndup(const char *s, size_t n) {
  char *p;

  if (s == NULL)
    return NULL;
  p = sm_malloc(n + 1);
  if (p == NULL)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *sm_strdup(const char *s) {
  return s ? sm_strndup(s, strlen(s)) : NULL;
}
