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

/* Length of a valid UTF-8 sequence at p, or 0. */
static size_t utf8_seq(const unsigned char *p) {
  size_t len, i;

  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    len = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef)
    len = 3;
  else if (p[0] >= 0xf0 && p[0] <= 0xf4)
    len = 4;
  else
    return 0;
  for (i = 1; i < len; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

/* Messages quote input (file names, cells, log lines): keep them on one
 * line and printable whatever was formatted into them.  Line breaks become
 * spaces, other control bytes and invalid UTF-8 become '?'. */
static void sanitize(char *msg) {
  unsigned char *p = (unsigned char *)msg;

  while (*p) {
    if (*p == '\n' || *p == '\r' || *p == '\t') {
      *p++ = ' ';
    } else if (*p < 0x20 || *p == 0x7f) {
      *p++ = '?';
    } else if (*p >= 0x80) {
      size_t l = utf8_seq(p);
      if (l == 0)
        *p++ = '?';
      else
        p += l;
    } else {
      p++;
    }
  }
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
  sanitize(err->msg);
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
