/* limits.c - what keeps one client from taking the service: a token
 * bucket per client (rate tokens per second, at most burst), the JSON
 * nesting cap checked before any parser sees a body, and the job ids the
 * service accepts.
 *
 * The bucket table has a fixed number of slots.  A bucket that has
 * refilled to the brim carries no state (a new one would be the same),
 * so when the table gets crowded it is rebuilt with only the buckets
 * that are below the brim; if every slot is still busy, a new client is
 * refused until some bucket refills.  Memory is fixed whatever the number
 * of clients. */
#include <stdio.h>
#include <string.h>

#include "serve/serve_int.h"

int sv__rate_init(sv_rate *r, double rate, double burst, size_t cap) {
  size_t c = 64;

  memset(r, 0, sizeof(*r));
  while (c < cap)
    c *= 2;
  r->rate = rate;
  r->burst = burst;
  r->cap = c;
  r->tab = sm_calloc(c, sizeof(*r->tab));
  if (r->tab == NULL)
    return SM_ENOMEM;
  pthread_mutex_init(&r->mu, NULL);
  return 0;
}

void sv__rate_release(sv_rate *r) {
  if (r->tab == NULL)
    return;
  pthread_mutex_destroy(&r->mu);
  sm_free(r->tab);
  r->tab = NULL;
}

static void refill(const sv_rate *r, sv_bucket *b, double now) {
  if (now > b->last) {
    b->tokens += (now - b->last) * r->rate;
    if (b->tokens > r->burst)
      b->tokens = r->burst;
    b->last = now;
  }
}

static sv_bucket *slot_for(sv_rate *r, uint64_t h, const char *key) {
  size_t mask = r->cap - 1;

  for (size_t i = h & mask;; i = (i + 1) & mask) {
    sv_bucket *b = &r->tab[i];
    if (b->h == 0 || (b->h == h && strcmp(b->key, key) == 0))
      return b;
  }
}

/* Keeps only the buckets below the brim. */
static void purge(sv_rate *r, double now) {
  sv_bucket *old = r->tab, *nt = sm_calloc(r->cap, sizeof(*nt));

  if (nt == NULL)
    return;
  r->tab = nt;
  r->n = 0;
  for (size_t i = 0; i < r->cap; i++) {
    sv_bucket *b = &old[i];
    if (b->h == 0)
      continue;
    refill(r, b, now);
    if (b->tokens >= r->burst)
      continue;
    *slot_for(r, b->h, b->key) = *b;
    r->n++;
  }
  sm_free(old);
}

int sv__rate_take(sv_rate *r, const char *key, double now, double *retry) {
  uint64_t h;
  sv_bucket *b;
  int ok;

  *retry = 0;
  if (r->rate < 0)
    return 1;
  h = sm_hash64(key, strlen(key), 3) | 1;
  pthread_mutex_lock(&r->mu);
  b = slot_for(r, h, key);
  if (b->h == 0) {
    if ((r->n + 1) * 4 > r->cap * 3) {
      purge(r, now);
      b = slot_for(r, h, key);
    }
    if ((r->n + 1) * 4 > r->cap * 3) {
      /* Every slot holds a client that is using its bucket. */
      pthread_mutex_unlock(&r->mu);
      *retry = r->rate > 0 ? 1.0 / r->rate : 1.0;
      return 0;
    }
    b->h = h;
    snprintf(b->key, sizeof(b->key), "%s", key);
    b->tokens = r->burst;
    b->last = now;
    r->n++;
  }
  refill(r, b, now);
  ok = b->tokens >= 1.0;
  if (ok)
    b->tokens -= 1.0;
  else
    *retry = r->rate > 0 ? (1.0 - b->tokens) / r->rate : 1.0;
  pthread_mutex_unlock(&r->mu);
  return ok;
}

int sv__json_depth(const char *s, size_t n, int max) {
  int depth = 0, deepest = 0, in_str = 0;

  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (in_str) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_str = 0;
      continue;
    }
    if (c == '"') {
      in_str = 1;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > max)
          return deepest;
      }
    } else if (c == '}' || c == ']') {
      depth--;
    }
  }
  return deepest;
}

int sv__id_ok(const char *id) {
  size_t n = id ? strlen(id) : 0;

  if (n == 0 || n > SV_ID_MAX || id[0] == '/' || id[0] == '.')
    return 0;
  if (strstr(id, "..") != NULL)
    return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)id[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || strchr("._:@/+=-", c) != NULL))
      return 0;
  }
  return 1;
}
