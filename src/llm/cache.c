/* cache.c - replies kept by the content of their request, so that the same
 * prompt (the same model, messages and settings to the same endpoint) is
 * never sent twice.
 *
 * The key is 128 bits of hash over the endpoint and the request body.  A
 * stored entry carries its whole request, and a hit must match it byte
 * for byte, so a hash collision can only cost a miss, never a wrong
 * answer.  Entries live in memory (at most 64, 8 MiB) and, with a cache
 * directory, on disk as DIR/ab/ABCDEF files written under a temporary
 * name and renamed into place, so that concurrent writers and a crash
 * leave only whole entries. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "llm/llm_int.h"

#define MEM_ENTRIES 64
#define MEM_BYTES ((size_t)8 << 20)
#define DISK_MAX ((size_t)32 << 20)
#define MAGIC "schedmate-llm-cache 1\n"

typedef struct entry {
  char key[33]; /* hex key, "" when free */
  char *req;    /* the request */
  size_t req_len;
  char *body; /* the response */
  size_t body_len;
} entry;

struct sm__llm_cache {
  char *dir;              /* on-disk directory, or NULL */
  pthread_mutex_t mu;     /* guards the memory entries */
  entry mem[MEM_ENTRIES]; /* ring */
  int next;               /* next slot to replace */
  size_t bytes;           /* held in memory */
};

void sm__llm_cache_key(const char *endpoint, const char *req, size_t req_len,
                       char out[33]) {
  uint64_t a = sm_hash64(endpoint, strlen(endpoint) + 1, 0x5eedULL);
  uint64_t b = sm_hash64(endpoint, strlen(endpoint) + 1, 0xfaceULL);
  a = sm_hash64(req, req_len, a);
  b = sm_hash64(req, req_len, b ^ 0x9e3779b97f4a7c15ULL);
  snprintf(out, 33, "%016llx%016llx", (unsigned long long)a,
           (unsigned long long)b);
}

static int mkdirs(const char *path) {
  char tmp[PATH_MAX];
  size_t n = strlen(path);

  if (n == 0 || n >= sizeof(tmp))
    return -1;
  memcpy(tmp, path, n + 1);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

sm__llm_cache *sm__llm_cache_new(const char *dir, sm_err *err) {
  sm__llm_cache *c = sm_calloc(1, sizeof(*c));
  struct stat st;

  if (c == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  pthread_mutex_init(&c->mu, NULL);
  if (dir != NULL && *dir) {
    if (mkdirs(dir) != 0 || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      sm_err_set(err, SM_EIO, "%s: cannot make the LLM cache directory: %s",
                 dir, strerror(errno));
      sm__llm_cache_free(c);
      return NULL;
    }
    if ((c->dir = sm_strdup(dir)) == NULL) {
      sm_err_set(err, SM_ENOMEM, "out of memory");
      sm__llm_cache_free(c);
      return NULL;
    }
  }
  return c;
}

static void entry_clear(entry *e) {
  sm_free(e->req);
  sm_free(e->body);
  memset(e, 0, sizeof(*e));
}

void sm__llm_cache_free(sm__llm_cache *c) {
  if (c == NULL)
    return;
  for (int i = 0; i < MEM_ENTRIES; i++)
    entry_clear(&c->mem[i]);
  pthread_mutex_destroy(&c->mu);
  sm_free(c->dir);
  sm_free(c);
}

static int mem_get(sm__llm_cache *c, const char *key, const char *req,
                   size_t req_len, char **body, size_t *len) {
  int hit = 0;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < MEM_ENTRIES && !hit; i++) {
    entry *e = &c->mem[i];
    if (strcmp(e->key, key) != 0 || e->req_len != req_len ||
        memcmp(e->req, req, req_len) != 0)
      continue;
    *body = sm_strndup(e->body, e->body_len);
    if (*body != NULL) {
      *len = e->body_len;
      hit = 1;
    }
  }
  pthread_mutex_unlock(&c->mu);
  return hit;
}

static void mem_put(sm__llm_cache *c, const char *key, const char *req,
                    size_t req_len, const char *body, size_t len) {
  entry *e;
  if (req_len + len > MEM_BYTES / 4)
    return;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < MEM_ENTRIES; i++)
    if (strcmp(c->mem[i].key, key) == 0 && c->mem[i].req_len == req_len &&
        memcmp(c->mem[i].req, req, req_len) == 0) {
      pthread_mutex_unlock(&c->mu);
      return;
    }
  /* Make room: the oldest entries go first. */
  while (c->bytes + req_len + len > MEM_BYTES || c->mem[c->next].req) {
    e = &c->mem[c->next];
    if (e->req == NULL) {
      c->next = (c->next + 1) % MEM_ENTRIES;
      continue;
    }
    c->bytes -= e->req_len + e->body_len;
    entry_clear(e);
  }
  e = &c->mem[c->next];
  e->req = sm_strndup(req, req_len);
  e->body = sm_strndup(body, len);
  if (e->req == NULL || e->body == NULL) {
    entry_clear(e);
  } else {
    memcpy(e->key, key, 33);
    e->req_len = req_len;
    e->body_len = len;
    c->bytes += req_len + len;
    c->next = (c->next + 1) % MEM_ENTRIES;
  }
  pthread_mutex_unlock(&c->mu);
}

static int disk_path(const sm__llm_cache *c, const char *key, char *out,
                     size_t n, int dir_only) {
  int w = dir_only ? snprintf(out, n, "%s/%.2s", c->dir, key)
                   : snprintf(out, n, "%s/%.2s/%s", c->dir, key, key);
  return w > 0 && (size_t)w < n ? 0 : -1;
}

static int disk_get(sm__llm_cache *c, const char *key, const char *req,
                    size_t req_len, char **body, size_t *len) {
  char path[PATH_MAX], *text = NULL, *p, *end;
  size_t n = 0, ml = strlen(MAGIC);
  unsigned long long rl;

  if (c->dir == NULL || disk_path(c, key, path, sizeof(path), 0) != 0)
    return 0;
  if (access(path, F_OK) != 0 ||
      sm_file_read_all(path, DISK_MAX, &text, &n, NULL) != 0)
    return 0;
  if (n < ml || memcmp(text, MAGIC, ml) != 0)
    goto miss;
  p = text + ml;
  errno = 0;
  rl = strtoull(p, &end, 10);
  if (errno != 0 || end == p || *end != '\n' || rl != req_len)
    goto miss;
  p = end + 1;
  if ((size_t)(text + n - p) < req_len || memcmp(p, req, req_len) != 0)
    goto miss;
  p += req_len;
  *len = (size_t)(text + n - p);
  *body = sm_strndup(p, *len);
  sm_free(text);
  return *body != NULL;
miss:
  sm_free(text);
  return 0;
}

static void disk_put(sm__llm_cache *c, const char *key, const char *req,
                     size_t req_len, const char *body, size_t len) {
  char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 16], head[64];
  FILE *f;
  int fd, ok;

  if (c->dir == NULL || req_len + len + 64 > DISK_MAX ||
      disk_path(c, key, dir, sizeof(dir), 1) != 0 ||
      disk_path(c, key, path, sizeof(path), 0) != 0)
    return;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return;
  snprintf(tmp, sizeof(tmp), "%s/.tmp.XXXXXX", dir);
  fd = mkstemp(tmp);
  if (fd < 0)
    return;
  f = fdopen(fd, "wb");
  if (f == NULL) {
    close(fd);
    unlink(tmp);
    return;
  }
  snprintf(head, sizeof(head), "%s%zu\n", MAGIC, req_len);
  ok = fputs(head, f) >= 0 && fwrite(req, 1, req_len, f) == req_len &&
       fwrite(body, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}

int sm__llm_cache_get(sm__llm_cache *c, const char *endpoint, const char *req,
                      size_t req_len, char **body, size_t *len) {
  char key[33];
  if (c == NULL)
    return 0;
  sm__llm_cache_key(endpoint, req, req_len, key);
  if (mem_get(c, key, req, req_len, body, len))
    return 1;
  if (disk_get(c, key, req, req_len, body, len)) {
    mem_put(c, key, req, req_len, *body, *len);
    return 1;
  }
  return 0;
}

void sm__llm_cache_put(sm__llm_cache *c, const char *endpoint, const char *req,
                       size_t req_len, const char *body, size_t len) {
  char key[33];
  if (c == NULL)
    return;
  sm__llm_cache_key(endpoint, req, req_len, key);
  mem_put(c, key, req, req_len, body, len);
  disk_put(c, key, req, req_len, body, len);
}
