/* buf.c - growable NUL-terminated byte buffer with a hard size cap, and a
 * bump arena for data that dies together. */
#include <stdio.h>
#include <string.h>

#include "schedmate/sm_util.h"

/* ==== Buffer ==== */

void sm_buf_init(sm_buf *b, size_t max) {
  b->data = NULL;
  b->len = 0;
  b->_cap = 0;
  b->_max = max ? max : SM_BUF_DEFAULT_MAX;
}

void sm_buf_release(sm_buf *b) {
  sm_free(b->data);
  b->data = NULL;
  b->len = 0;
  b->_cap = 0;
}

void sm_buf_reset(sm_buf *b) {
  b->len = 0;
  if (b->data != NULL)
    b->data[0] = '\0';
}

int sm_buf_reserve(sm_buf *b, size_t n) {
  size_t need, cap;
  char *p;

  if (n > b->_max || b->len > b->_max - n)
    return SM_ETOOBIG;
  need = b->len + n + 1;
  if (need <= b->_cap)
    return 0;
  cap = b->_cap ? b->_cap : 64;
  while (cap < need)
    cap = cap > ((size_t)-1) / 2 ? need : cap * 2;
  if (cap > b->_max + 1)
    cap = b->_max + 1;
  p = sm_realloc(b->data, cap);
  if (p == NULL)
    return SM_ENOMEM;
  b->data = p;
  b->_cap = cap;
  return 0;
}

int sm_buf_add(sm_buf *b, const void *p, size_t n) {
  int rc = sm_buf_reserve(b, n);

  if (rc != 0)
    return rc;
  if (n != 0)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

int sm_buf_addc(sm_buf *b, char c) {
  return sm_buf_add(b, &c, 1);
}

int sm_buf_adds(sm_buf *b, const char *s) {
  return sm_buf_add(b, s, strlen(s));
}

int sm_buf_vaddf(sm_buf *b, const char *fmt, va_list ap) {
  va_list cp;
  int n, rc;

  va_copy(cp, ap);
  n = vsnprintf(NULL, 0, fmt, cp);
  va_end(cp);
  if (n < 0)
    return SM_EINVAL;
  rc = sm_buf_reserve(b, (size_t)n);
  if (rc != 0)
    return rc;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return 0;
}

int sm_buf_addf(sm_buf *b, const char *fmt, ...) {
  va_list ap;
  int rc;

  va_start(ap, fmt);
  rc = sm_buf_vaddf(b, fmt, ap);
  va_end(ap);
  return rc;
}

const char *sm_buf_str(const sm_buf *b) {
  return b->data ? b->data : "";
}

char *sm_buf_take(sm_buf *b) {
  char *p = b->data;

  b->data = NULL;
  b->len = 0;
  b->_cap = 0;
  return p;
}

/* ==== Arena ==== */

struct sm_arena_block {
  sm_arena_block *next; /* older block */
  size_t size;          /* usable bytes in mem */
  size_t used;          /* bytes handed out from mem */
  _Alignas(16) unsigned char mem[];
};

void sm_arena_init(sm_arena *a, size_t block_size, size_t max) {
  a->_head = NULL;
  a->_block_size = block_size ? block_size : 64 * 1024;
  a->_used = 0;
  a->_max = max;
}

void *sm_arena_alloc(sm_arena *a, size_t size) {
  sm_arena_block *b = a->_head;
  size_t rounded = (size + 15) & ~(size_t)15;
  void *p;

  if (rounded < size)
    return NULL;
  if (a->_max && (rounded > a->_max || a->_used > a->_max - rounded))
    return NULL;
  if (b == NULL || b->size - b->used < rounded) {
    size_t bs = rounded > a->_block_size ? rounded : a->_block_size;
    b = sm_malloc(sizeof(*b) + bs);
    if (b == NULL)
      return NULL;
    b->size = bs;
    b->used = 0;
    /* A block made for one large object goes behind the current one so the
     * current block's free space is not wasted. */
    if (a->_head != NULL && bs > a->_block_size) {
      b->next = a->_head->next;
      a->_head->next = b;
    } else {
      b->next = a->_head;
      a->_head = b;
    }
  }
  p = b->mem + b->used;
  b->used += rounded;
  a->_used += rounded;
  return p;
}

void *sm_arena_calloc(sm_arena *a, size_t count, size_t size) {
  void *p;

  if (size != 0 && count > ((size_t)-1) / size)
    return NULL;
  p = sm_arena_alloc(a, count * size);
  if (p != NULL)
    memset(p, 0, count * size);
  return p;
}

char *sm_arena_strndup(sm_arena *a, const char *s, size_t n) {
  char *p = sm_arena_alloc(a, n + 1);

  if (p == NULL)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *sm_arena_strdup(sm_arena *a, const char *s) {
  return sm_arena_strndup(a, s, strlen(s));
}

size_t sm_arena_used(const sm_arena *a) {
  return a->_used;
}

void sm_arena_discard(sm_arena *a) {
  sm_arena_block *b = a->_head;

  while (b != NULL) {
    sm_arena_block *next = b->next;
    sm_free(b);
    b = next;
  }
  a->_head = NULL;
  a->_used = 0;
}
