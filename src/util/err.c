/* err.c - error codes, messages and the replaceable allocator. */
#include "schedmate/sm_base.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

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

/* ==== Messages that do not fit ====
 *
 * A message quotes input (paths, cells, log lines) inside words that say
 * what went wrong.  When the whole does not fit in SM_ERR_MSG_SIZE, the
 * quoted inputs (the %s arguments) are shortened in the middle ("head...
 * tail") and the words of the format, the numbers and %m are kept whole.
 * The room left by the fixed parts is shared out water-filling: inputs
 * shorter than an equal share keep every byte, the longer ones split the
 * rest evenly. */

#define MAX_PIECES 48
#define SCRATCH_SIZE 2048
#define ELLIPSIS "..."
#define ELLIPSIS_LEN 3

typedef struct piece {
  const char *p; /* text (the format, an argument, or scratch) */
  size_t len;    /* its length */
  size_t width;  /* minimum field width (%s only), 0 none */
  int left;      /* '-' flag: pad on the right */
  int input;     /* a %s argument: may be shortened */
  size_t keep;   /* bytes it gets in the output */
} piece;

/* Copies a conversion spec without '*' (widths already substituted). */
static int build_spec(char *out, size_t cap, const char *flags, size_t nflags,
                      int width, int prec, const char *lenmod, size_t nlen,
                      char conv) {
  char w[16] = "", pr[16] = "";
  if (width >= 0)
    snprintf(w, sizeof(w), "%d", width);
  if (prec >= 0)
    snprintf(pr, sizeof(pr), ".%d", prec);
  return snprintf(out, cap, "%%%.*s%s%s%.*s%c", (int)nflags, flags, w, pr,
                  (int)nlen, lenmod, conv) < (int)cap
             ? 0
             : -1;
}

/* Formats one non-string conversion from ap into scratch.  Returns its
 * length, or -1 for a conversion this formatter does not know. */
static int format_other(char *dst, size_t room, const char *spec, char conv,
                        const char *lenmod, size_t nlen, va_list *ap) {
  int n;
  int l = nlen == 1 && lenmod[0] == 'l', ll = nlen == 2 && lenmod[0] == 'l';
  int hh = nlen == 2 && lenmod[0] == 'h', h = nlen == 1 && lenmod[0] == 'h';
  int q = nlen == 1 && lenmod[0] == 'q';
  int j = nlen == 1 && lenmod[0] == 'j', z = nlen == 1 && lenmod[0] == 'z';
  int t = nlen == 1 && lenmod[0] == 't', L = nlen == 1 && lenmod[0] == 'L';

  switch (conv) {
  case 'd':
  case 'i':
    if (ll || q)
      n = snprintf(dst, room, spec, va_arg(*ap, long long));
    else if (l)
      n = snprintf(dst, room, spec, va_arg(*ap, long));
    else if (j)
      n = snprintf(dst, room, spec, va_arg(*ap, intmax_t));
    else if (z)
      n = snprintf(dst, room, spec, va_arg(*ap, ssize_t));
    else if (t)
      n = snprintf(dst, room, spec, va_arg(*ap, ptrdiff_t));
    else if (nlen == 0 || hh || h)
      n = snprintf(dst, room, spec, va_arg(*ap, int));
    else
      return -1;
    break;
  case 'o':
  case 'u':
  case 'x':
  case 'X':
    if (ll || q)
      n = snprintf(dst, room, spec, va_arg(*ap, unsigned long long));
    else if (l)
      n = snprintf(dst, room, spec, va_arg(*ap, unsigned long));
    else if (j)
      n = snprintf(dst, room, spec, va_arg(*ap, uintmax_t));
    else if (z)
      n = snprintf(dst, room, spec, va_arg(*ap, size_t));
    else if (t)
      n = snprintf(dst, room, spec, va_arg(*ap, ptrdiff_t));
    else if (nlen == 0 || hh || h)
      n = snprintf(dst, room, spec, va_arg(*ap, unsigned int));
    else
      return -1;
    break;
  case 'e':
  case 'E':
  case 'f':
  case 'F':
  case 'g':
  case 'G':
  case 'a':
  case 'A':
    if (L)
      n = snprintf(dst, room, spec, va_arg(*ap, long double));
    else if (nlen == 0 || l)
      n = snprintf(dst, room, spec, va_arg(*ap, double));
    else
      return -1;
    break;
  case 'c':
    if (nlen != 0)
      return -1;
    n = snprintf(dst, room, spec, va_arg(*ap, int));
    break;
  case 'p':
    n = snprintf(dst, room, spec, va_arg(*ap, void *));
    break;
  default:
    return -1;
  }
  if (n < 0)
    return -1;
  return (size_t)n < room ? n : (int)(room ? room - 1 : 0);
}

/* Splits fmt into pieces.  Returns the count, or -1 when the format uses
 * something this formatter does not handle (the caller then keeps the
 * plainly cut message). */
static int split_format(const char *fmt, va_list *ap, int saved_errno,
                        piece *pc, char *scratch) {
  size_t used = 0;
  int np = 0;
  const char *s = fmt;

  while (*s) {
    const char *flags, *lenmod;
    size_t nflags, nlen;
    int width = -1, prec = -1, left = 0;
    char conv, spec[64];

    if (np == MAX_PIECES)
      return -1;
    if (*s != '%') {
      const char *e = strchr(s, '%');
      size_t n = e ? (size_t)(e - s) : strlen(s);
      pc[np++] = (piece){s, n, 0, 0, 0, 0};
      s += n;
      continue;
    }
    s++;
    if (*s == '%') {
      pc[np++] = (piece){"%", 1, 0, 0, 0, 0};
      s++;
      continue;
    }
    flags = s;
    while (*s && strchr("-+ #0'I", *s)) {
      left |= *s == '-';
      s++;
    }
    nflags = (size_t)(s - flags);
    if (*s == '*') {
      width = va_arg(*ap, int);
      if (width < 0) {
        left = 1;
        width = -width;
      }
      s++;
    } else if (*s >= '0' && *s <= '9') {
      width = 0;
      while (*s >= '0' && *s <= '9' && width < 100000)
        width = width * 10 + (*s++ - '0');
    }
    if (*s == '.') {
      s++;
      prec = 0;
      if (*s == '*') {
        prec = va_arg(*ap, int);
        s++;
      } else {
        while (*s >= '0' && *s <= '9' && prec < 100000)
          prec = prec * 10 + (*s++ - '0');
      }
    }
    lenmod = s;
    while (*s && strchr("hlLqjzt", *s))
      s++;
    nlen = (size_t)(s - lenmod);
    conv = *s;
    if (conv == '\0' || nlen > 2)
      return -1;
    s++;
    if (conv == 's') {
      const char *a;
      if (nlen != 0)
        return -1; /* wide strings */
      a = va_arg(*ap, const char *);
      if (a == NULL)
        a = "(null)";
      pc[np++] = (piece){a,
                         prec >= 0 ? strnlen(a, (size_t)prec) : strlen(a),
                         width > 0 ? (size_t)width : 0,
                         left,
                         1,
                         0};
      continue;
    }
    if (conv == 'm') {
      const char *m = strerror(saved_errno);
      pc[np++] = (piece){m, strlen(m), 0, 0, 0, 0};
      continue;
    }
    if (conv == 'n') {
      (void)va_arg(*ap, void *); /* never written */
      continue;
    }
    if (build_spec(spec, sizeof(spec), flags, nflags, width, prec, lenmod, nlen,
                   conv) != 0)
      return -1;
    {
      int n = format_other(scratch + used, SCRATCH_SIZE - used, spec, conv,
                           lenmod, nlen, ap);
      if (n < 0)
        return -1;
      pc[np++] = (piece){scratch + used, (size_t)n, 0, 0, 0, 0};
      used += (size_t)n + 1;
      if (used >= SCRATCH_SIZE)
        return -1;
    }
  }
  return np;
}

/* The length of a piece in the output when it keeps `keep` bytes. */
static size_t out_len(const piece *p, size_t keep) {
  return keep < p->width ? p->width : keep;
}

/* Moves a cut position back (head) or forward (tail) to the start of a
 * UTF-8 character. */
static size_t char_start_back(const char *s, size_t i) {
  while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
    i--;
  return i;
}
static size_t char_start_fwd(const char *s, size_t i, size_t n) {
  while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
    i++;
  return i;
}

/* Writes the pieces into out (cap bytes) with the inputs shortened to fit.
 * Returns 0, or -1 when the fixed parts alone do not fit. */
static int assemble(piece *pc, int np, char *out, size_t cap) {
  size_t fixed = 0, room, o = 0;
  int n_in = 0;

  for (int i = 0; i < np; i++) {
    if (pc[i].input)
      n_in++;
    else
      fixed += pc[i].len;
  }
  if (n_in == 0 || fixed + (size_t)n_in * (ELLIPSIS_LEN + 2) >= cap)
    return -1;
  room = cap - 1 - fixed;
  /* Water-filling: give the shortest inputs all they need first. */
  {
    int left = n_in;
    int done[MAX_PIECES] = {0};
    for (;;) {
      size_t share = room / (size_t)left;
      int best = -1;
      for (int i = 0; i < np; i++)
        if (pc[i].input && !done[i] &&
            (best < 0 ||
             out_len(&pc[i], pc[i].len) < out_len(&pc[best], pc[best].len)))
          best = i;
      if (best < 0)
        break;
      if (out_len(&pc[best], pc[best].len) <= share) {
        pc[best].keep = pc[best].len;
        room -= out_len(&pc[best], pc[best].len);
        done[best] = 1;
        if (--left == 0)
          break;
        continue;
      }
      /* Every input left is longer than its share: split the rest. */
      for (int i = 0; i < np; i++)
        if (pc[i].input && !done[i]) {
          size_t give = room / (size_t)left;
          pc[i].keep = give;
          room -= give;
          left--;
          done[i] = 1;
        }
      break;
    }
  }
  for (int i = 0; i < np; i++) {
    const piece *p = &pc[i];
    size_t pad = 0;
    if (!p->input) {
      memcpy(out + o, p->p, p->len);
      o += p->len;
      continue;
    }
    if (p->keep >= p->len) {
      pad = p->width > p->len ? p->width - p->len : 0;
      if (!p->left) {
        memset(out + o, ' ', pad);
        o += pad;
      }
      memcpy(out + o, p->p, p->len);
      o += p->len;
      if (p->left) {
        memset(out + o, ' ', pad);
        o += pad;
      }
      continue;
    }
    {
      /* head...tail, cut at character starts. */
      size_t body = p->keep > ELLIPSIS_LEN ? p->keep - ELLIPSIS_LEN : 0;
      size_t head = char_start_back(p->p, body / 2);
      size_t tail = char_start_fwd(p->p, p->len - (body - body / 2), p->len);
      memcpy(out + o, p->p, head);
      o += head;
      memcpy(out + o, ELLIPSIS, ELLIPSIS_LEN);
      o += ELLIPSIS_LEN;
      memcpy(out + o, p->p + tail, p->len - tail);
      o += p->len - tail;
    }
  }
  out[o] = '\0';
  return 0;
}

int sm_err_set(sm_err *err, int code, const char *fmt, ...) {
  va_list ap, ap2;
  int saved_errno = errno, n;

  if (err == NULL || err->code != 0)
    return code;
  err->code = code;
  if (fmt == NULL) {
    snprintf(err->msg, sizeof(err->msg), "%s", sm_strerror(code));
    return code;
  }
  va_start(ap, fmt);
  va_copy(ap2, ap);
  n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof(err->msg)) {
    piece pc[MAX_PIECES];
    char scratch[SCRATCH_SIZE];
    char out[SM_ERR_MSG_SIZE];
    int np = split_format(fmt, &ap2, saved_errno, pc, scratch);
    if (np > 0 && assemble(pc, np, out, sizeof(out)) == 0) {
      memcpy(err->msg, out, sizeof(out));
    } else {
      /* Nothing to shorten: cut the end and say so. */
      memcpy(err->msg + sizeof(err->msg) - 1 - ELLIPSIS_LEN, ELLIPSIS,
             ELLIPSIS_LEN + 1);
    }
  }
  va_end(ap2);
  sanitize(err->msg);
  errno = saved_errno;
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

void sm_assert_fail(const char *file, int line, const char *expr) {
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
