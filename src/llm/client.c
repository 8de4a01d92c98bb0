/* client.c - the OpenAI-compatible HTTP client: configuration, requests
 * through libcurl with deadlines and retries, the concurrency limit, the
 * token budget, the reply cache and the statistics.
 *
 * A logical request (one prompt) has one deadline.  Every attempt gets
 * what is left of it as its total timeout, and back-off sleeps are cut to
 * it, so no request outlives its deadline whatever the server does:
 * refuse connections, stall, drip bytes or answer 429/5xx forever.
 * Easy handles live in a small pool whose size is the concurrency limit;
 * taking one from the pool is the limit, and keeping them keeps the
 * connections alive between requests. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/curl_load_int.h"
#include "llm/llm_int.h"

#define MAX_POOL 64
#define KEY_MAX 4096

struct sm_llm {
  sm_llm_config cfg;    /* settings; strings below */
  char *s[6];           /* owned copies: url, model, key_file, embed_url,
                         * embed_model, cache_dir */
  char *key;            /* API key, or NULL */
  char *chat_ep;        /* .../v1/chat/completions, or NULL */
  char *embed_ep;       /* .../v1/embeddings, or NULL */
  char embedder[160];   /* "api:MODEL" */
  int json_off;         /* the server refused response_format */
  sm__llm_cache *cache; /* replies */
  pthread_mutex_t mu;   /* guards everything below */
  pthread_cond_t cv;    /* a handle came back */
  CURL *pool[MAX_POOL]; /* easy handles */
  int busy[MAX_POOL];   /* in use */
  int n_pool;           /* handles allowed */
  sm_llm_stats st[SM_LLM_NCOMP]; /* counters */
  uint64_t rng;                  /* jitter state */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc; /* 0, -1 init failed, 1 libcurl did not load */

/* Without libcurl a client is still made: its requests fail as for an
 * unreachable server (post). */
static void curl_init(void) {
  if (sm__curl_load(NULL) != 0)
    curl_init_rc = 1;
  else
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

/* ==== Names ==== */

const char *sm_llm_comp_name(int comp) {
  static const char *const n[] = {"advisor", "tracker", "failure", "embed"};
  return comp >= 0 && comp < SM_LLM_NCOMP ? n[comp] : "unknown";
}

const char *sm_llm_reason_name(int reason) {
  static const char *const n[] = {NULL,
#define SM__XX(id, name) name,
                                  SM_LLM_REASONS(SM__XX)
#undef SM__XX
  };
  return reason > 0 && reason < SM_LLM_NREASONS ? n[reason] : NULL;
}

/* ==== Configuration ==== */

void sm_llm_config_init(sm_llm_config *c) {
  memset(c, 0, sizeof(*c));
  c->connect_timeout_s = 3;
  c->timeout_s = 30;
  c->stage_timeout_s = 90;
  c->retries = 2;
  c->backoff_s = 0.25;
  c->max_backoff_s = 4;
  c->max_concurrency = 4;
  c->max_tokens = 1024;
  c->max_prompt_tokens = 12000;
  c->json_mode = 1;
  c->max_response = (size_t)4 << 20;
  c->context_lines = 200;
  c->max_tool_calls = 8;
  c->max_tool_bytes = (size_t)96 << 10;
}

void sm_llm_config_env(sm_llm_config *c) {
  const char *v;
  if (c->url == NULL && (v = getenv("SCHEDMATE_LLM_URL")) && *v)
    c->url = v;
  if (c->model == NULL && (v = getenv("SCHEDMATE_LLM_MODEL")) && *v)
    c->model = v;
  if (c->key_file == NULL && (v = getenv("SCHEDMATE_LLM_KEY_FILE")) && *v)
    c->key_file = v;
  if (c->cache_dir == NULL && (v = getenv("SCHEDMATE_LLM_CACHE")) && *v)
    c->cache_dir = v;
}

/* base + "/v1/" + path, or base + "/" + path when base already ends in
 * a version component ("/v1"). */
static char *endpoint(const char *base, const char *path, sm_err *err) {
  size_t n = strlen(base);
  sm_buf b;

  if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0) {
    sm_err_set(err, SM_EINVAL, "%s: the LLM URL must be http:// or https://",
               base);
    return NULL;
  }
  for (const char *p = base; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f) {
      sm_err_set(err, SM_EINVAL, "LLM URL: blank or control character");
      return NULL;
    }
  while (n > 0 && base[n - 1] == '/')
    n--;
  sm_buf_init(&b, 4096);
  sm_buf_add(&b, base, n);
  if (!(n >= 3 && strncmp(base + n - 3, "/v1", 3) == 0))
    sm_buf_adds(&b, "/v1");
  sm_buf_addc(&b, '/');
  if (sm_buf_adds(&b, path) != 0) {
    sm_buf_release(&b);
    sm_err_set(err, SM_EINVAL, "LLM URL too long");
    return NULL;
  }
  return sm_buf_take(&b);
}

static int read_key(sm_llm *l, const char *path, sm_err *err) {
  char *text = NULL;
  size_t len = 0, a = 0;
  int rc = sm_file_read_all(path, KEY_MAX, &text, &len, err);

  if (rc != 0)
    return rc;
  while (a < len && isspace((unsigned char)text[a]))
    a++;
  while (len > a && isspace((unsigned char)text[len - 1]))
    len--;
  for (size_t i = a; i < len; i++)
    if ((unsigned char)text[i] < 0x21 || (unsigned char)text[i] == 0x7f) {
      sm_free(text);
      return sm_err_set(err, SM_EPARSE,
                        "%s: the API key holds blanks or control bytes", path);
    }
  if (len == a) {
    sm_free(text);
    return sm_err_set(err, SM_EPARSE, "%s: empty API key file", path);
  }
  l->key = sm_strndup(text + a, len - a);
  memset(text, 0, len);
  sm_free(text);
  return l->key ? 0 : sm_err_set(err, SM_ENOMEM, "out of memory");
}

/* The client's own strings; the key is wiped before it is freed. */
static void free_settings(sm_llm *l) {
  for (int i = 0; i < 6; i++)
    sm_free(l->s[i]);
  if (l->key)
    memset(l->key, 0, strlen(l->key));
  sm_free(l->key);
  sm_free(l->chat_ep);
  sm_free(l->embed_ep);
}

sm_llm *sm_llm_new(const sm_llm_config *c, sm_err *err) {
  sm_llm *l;
  const char *src[6];

  if (c == NULL || ((c->url == NULL || !*c->url) &&
                    (c->embed_url == NULL || !*c->embed_url))) {
    sm_err_set(err, SM_EINVAL, "no LLM or embeddings URL given");
    return NULL;
  }
  pthread_once(&curl_once, curl_init);
  if (curl_init_rc < 0) {
    sm_err_set(err, SM_EIO, "libcurl could not be initialised");
    return NULL;
  }
  l = sm_calloc(1, sizeof(*l));
  if (l == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  l->cfg = *c;
  src[0] = c->url && *c->url ? c->url : NULL;
  src[1] = c->model;
  src[2] = c->key_file;
  src[3] = c->embed_url && *c->embed_url ? c->embed_url : NULL;
  src[4] = c->embed_model ? c->embed_model : c->model;
  src[5] = c->cache_dir;
  for (int i = 0; i < 6; i++)
    if (src[i] != NULL && (l->s[i] = sm_strdup(src[i])) == NULL)
      goto nomem;
  l->cfg.url = l->s[0];
  l->cfg.model = l->s[1] ? l->s[1] : "default";
  l->cfg.key_file = l->s[2];
  l->cfg.embed_url = l->s[3];
  l->cfg.embed_model = l->s[4] ? l->s[4] : "default";
  l->cfg.cache_dir = l->s[5];
  /* Bounds that keep a bad setting from making a request unbounded. */
  if (!(l->cfg.timeout_s > 0))
    l->cfg.timeout_s = 30;
  if (!(l->cfg.connect_timeout_s > 0))
    l->cfg.connect_timeout_s = 3;
  if (!(l->cfg.stage_timeout_s > 0))
    l->cfg.stage_timeout_s = 3 * l->cfg.timeout_s;
  if (l->cfg.retries < 0)
    l->cfg.retries = 0;
  if (l->cfg.retries > 10)
    l->cfg.retries = 10;
  if (!(l->cfg.backoff_s >= 0))
    l->cfg.backoff_s = 0.25;
  if (!(l->cfg.max_backoff_s > 0))
    l->cfg.max_backoff_s = 4;
  l->n_pool = l->cfg.max_concurrency < 1          ? 1
              : l->cfg.max_concurrency > MAX_POOL ? MAX_POOL
                                                  : l->cfg.max_concurrency;
  if (l->cfg.max_tokens < 16)
    l->cfg.max_tokens = 16;
  if (l->cfg.max_prompt_tokens < 256)
    l->cfg.max_prompt_tokens = 256;
  if (l->cfg.max_response < 4096)
    l->cfg.max_response = 4096;
  if (l->cfg.context_lines < 1)
    l->cfg.context_lines = 200;
  if (l->cfg.max_tool_calls < 0)
    l->cfg.max_tool_calls = 0;
  if (l->cfg.url &&
      (l->chat_ep = endpoint(l->cfg.url, "chat/completions", err)) == NULL)
    goto fail;
  if (l->cfg.embed_url &&
      (l->embed_ep = endpoint(l->cfg.embed_url, "embeddings", err)) == NULL)
    goto fail;
  snprintf(l->embedder, sizeof(l->embedder), "api:%.150s", l->cfg.embed_model);
  if (l->cfg.key_file && read_key(l, l->cfg.key_file, err) != 0)
    goto fail;
  if ((l->cache = sm__llm_cache_new(l->cfg.cache_dir, err)) == NULL)
    goto fail;
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  l->rng = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)l << 16);
  return l;
nomem:
  sm_err_set(err, SM_ENOMEM, "out of memory");
fail:
  free_settings(l);
  sm_free(l);
  return NULL;
}

void sm_llm_free(sm_llm *l) {
  if (l == NULL)
    return;
  for (int i = 0; i < l->n_pool; i++)
    if (l->pool[i])
      curl_easy_cleanup(l->pool[i]);
  sm__llm_cache_free(l->cache);
  free_settings(l);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  sm_free(l);
}

int sm_llm_has_chat(const sm_llm *l) {
  return l != NULL && l->chat_ep != NULL;
}

int sm_llm_has_embed(const sm_llm *l) {
  return l != NULL && l->embed_ep != NULL;
}

const sm_llm_config *sm_llm_get_config(const sm_llm *l) {
  return &l->cfg;
}

const char *sm_llm_embedder(const sm_llm *l) {
  return l->embedder;
}

/* ==== Statistics ==== */

void sm__llm_count_run(sm_llm *l, int comp, int used, int reason) {
  pthread_mutex_lock(&l->mu);
  l->st[comp].runs++;
  if (used)
    l->st[comp].used++;
  else
    l->st[comp].fallbacks++;
  if (reason > 0 && reason < SM_LLM_NREASONS)
    l->st[comp].reasons[reason]++;
  pthread_mutex_unlock(&l->mu);
}

void sm__llm_count_claims(sm_llm *l, int comp, int claims, int verified,
                          int tool_calls, int tool_refused) {
  pthread_mutex_lock(&l->mu);
  l->st[comp].claims += (uint64_t)claims;
  l->st[comp].verified += (uint64_t)verified;
  l->st[comp].dropped += (uint64_t)(claims - verified);
  l->st[comp].tool_calls += (uint64_t)tool_calls;
  l->st[comp].tool_refused += (uint64_t)tool_refused;
  pthread_mutex_unlock(&l->mu);
}

void sm__llm_count_reason(sm_llm *l, int comp, int reason) {
  if (reason <= 0 || reason >= SM_LLM_NREASONS)
    return;
  pthread_mutex_lock(&l->mu);
  l->st[comp].reasons[reason]++;
  pthread_mutex_unlock(&l->mu);
}

void sm_llm_stats_get(const sm_llm *l, int comp, sm_llm_stats *out) {
  sm_llm *m = (sm_llm *)l;

  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&m->mu);
  for (int c = 0; c < SM_LLM_NCOMP; c++) {
    const sm_llm_stats *s = &m->st[c];
    if (comp >= 0 && c != comp)
      continue;
    out->runs += s->runs;
    out->used += s->used;
    out->fallbacks += s->fallbacks;
    out->requests += s->requests;
    out->calls += s->calls;
    out->retries += s->retries;
    out->cache_hits += s->cache_hits;
    out->prompt_tokens += s->prompt_tokens;
    out->completion_tokens += s->completion_tokens;
    out->latency_s += s->latency_s;
    out->claims += s->claims;
    out->verified += s->verified;
    out->dropped += s->dropped;
    out->tool_calls += s->tool_calls;
    out->tool_refused += s->tool_refused;
    for (int r = 0; r < SM_LLM_NREASONS; r++)
      out->reasons[r] += s->reasons[r];
  }
  pthread_mutex_unlock(&m->mu);
}

int sm__llm_estimate_tokens(const sm_llm_msg *msgs, int n) {
  size_t bytes = 0;
  for (int i = 0; i < n; i++)
    bytes += strlen(msgs[i].content) + 16;
  return (int)(bytes / 4 + 1);
}

/* ==== HTTP ==== */

typedef struct resp {
  sm_buf body;        /* response body */
  int too_large;      /* the body passed the cap */
  double retry_after; /* Retry-After seconds, or 0 */
} resp;

static size_t on_body(char *p, size_t sz, size_t n, void *ud) {
  resp *r = ud;
  size_t len = sz * n;
  if (sm_buf_add(&r->body, p, len) != 0) {
    r->too_large = 1;
    return 0;
  }
  return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud) {
  resp *r = ud;
  size_t len = sz * n;
  if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
    char tmp[32];
    size_t k = len - 12 < sizeof(tmp) - 1 ? len - 12 : sizeof(tmp) - 1;
    double v;
    memcpy(tmp, p + 12, k);
    tmp[k] = '\0';
    v = strtod(tmp, NULL);
    if (v > 0 && v < 86400)
      r->retry_after = v;
  }
  return len;
}

static void nap(double s) {
  struct timespec ts;
  if (!(s > 0))
    return;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Takes a pooled handle, waiting until deadline.  Returns the slot or -1. */
static int take_handle(sm_llm *l, double deadline) {
  int slot = -1;

  pthread_mutex_lock(&l->mu);
  for (;;) {
    for (int i = 0; i < l->n_pool; i++)
      if (!l->busy[i]) {
        slot = i;
        break;
      }
    if (slot >= 0)
      break;
    {
      double left = deadline - sm_now();
      struct timespec ts;
      if (left <= 0)
        break;
      clock_gettime(CLOCK_REALTIME, &ts);
      left = left > 0.1 ? 0.1 : left;
      ts.tv_nsec += (long)(left * 1e9);
      ts.tv_sec += ts.tv_nsec / 1000000000L;
      ts.tv_nsec %= 1000000000L;
      pthread_cond_timedwait(&l->cv, &l->mu, &ts);
    }
  }
  if (slot >= 0) {
    l->busy[slot] = 1;
    if (l->pool[slot] == NULL)
      l->pool[slot] = curl_easy_init();
    if (l->pool[slot] == NULL) {
      l->busy[slot] = 0;
      slot = -1;
    }
  }
  pthread_mutex_unlock(&l->mu);
  return slot;
}

static void give_handle(sm_llm *l, int slot) {
  pthread_mutex_lock(&l->mu);
  l->busy[slot] = 0;
  pthread_cond_signal(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

static double jitter(sm_llm *l) {
  uint64_t x;
  pthread_mutex_lock(&l->mu);
  x = l->rng = l->rng * 6364136223846793005ULL + 1442695040888963407ULL;
  pthread_mutex_unlock(&l->mu);
  return 0.5 + 0.5 * (double)(x >> 11) / 9007199254740992.0;
}

/* One attempt.  Returns the HTTP status, or -reason. */
static int attempt(sm_llm *l, int slot, const char *url, const char *body,
                   size_t len, double deadline, resp *r, char *msg,
                   size_t msg_n) {
  CURL *h = l->pool[slot];
  struct curl_slist *hd = NULL;
  char auth[KEY_MAX + 32];
  double left = deadline - sm_now();
  long status = 0, ms, cms;
  CURLcode cc;

  if (left <= 0)
    return -SM_LLM_R_TIMEOUT;
  ms = (long)(left * 1000) + 1;
  cms = (long)(l->cfg.connect_timeout_s * 1000);
  if (cms > ms)
    cms = ms;
  curl_easy_reset(h);
  hd = curl_slist_append(hd, "Content-Type: application/json");
  hd = curl_slist_append(hd, "Accept: application/json");
  hd = curl_slist_append(hd, "Expect:");
  if (l->key) {
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", l->key);
    hd = curl_slist_append(hd, auth);
    memset(auth, 0, sizeof(auth));
  }
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "schedmate/" SM_VERSION_STRING);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cms);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
                   (curl_off_t)l->cfg.max_response);
  cc = curl_easy_perform(h);
  /* The header list holds the key: wipe it before it is freed. */
  for (struct curl_slist *p = hd; p; p = p->next)
    if (strncmp(p->data, "Authorization:", 14) == 0)
      memset(p->data, 0, strlen(p->data));
  curl_slist_free_all(hd);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  if (cc != CURLE_OK) {
    snprintf(msg, msg_n, "%s", curl_easy_strerror(cc));
    switch (cc) {
    case CURLE_OPERATION_TIMEDOUT:
      return -SM_LLM_R_TIMEOUT;
    case CURLE_WRITE_ERROR:
    case CURLE_FILESIZE_EXCEEDED:
      if (r->too_large || cc == CURLE_FILESIZE_EXCEEDED)
        return -SM_LLM_R_TOO_LARGE;
      return -SM_LLM_R_CONNECT;
    default:
      return -SM_LLM_R_CONNECT;
    }
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  return (int)status;
}

static int retryable(int st) {
  return st == -SM_LLM_R_CONNECT || st == 429 || (st >= 500 && st <= 599);
}

static int reason_of(int st) {
  if (st < 0)
    return -st;
  if (st == 429)
    return SM_LLM_R_HTTP_429;
  if (st >= 500)
    return SM_LLM_R_HTTP_5XX;
  return SM_LLM_R_HTTP_OTHER;
}

/* POSTs body to url until a final answer or the deadline.  Returns 0 with
 * the body of a 200 in *out (sm_free), or a negative code with *reason.
 * *status gets the last HTTP status (0 for none). */
static int post(sm_llm *l, int comp, const char *url, const char *body,
                double deadline, char **out, size_t *out_len, int *status,
                double *latency, int *reason, sm_err *err) {
  size_t len = strlen(body);
  char msg[CURL_ERROR_SIZE + 64] = "";
  sm_err lib = {0};

  *status = 0;
  if (sm__curl_load(&lib) != 0) {
    *reason = SM_LLM_R_CONNECT;
    return sm_err_set(err, SM_ECONN, "%s: %s", url, lib.msg);
  }
  for (int a = 0;; a++) {
    resp r;
    double t0, dt;
    int st, slot;

    if (sm_now() >= deadline) {
      *reason = SM_LLM_R_TIMEOUT;
      return sm_err_set(err, SM_ETIMEOUT, "%s: deadline passed", url);
    }
    slot = take_handle(l, deadline);
    if (slot < 0) {
      *reason = SM_LLM_R_TIMEOUT;
      return sm_err_set(err, SM_ETIMEOUT,
                        "%s: no request slot before the deadline", url);
    }
    memset(&r, 0, sizeof(r));
    sm_buf_init(&r.body, l->cfg.max_response);
    t0 = sm_now();
    st = attempt(l, slot, url, body, len, deadline, &r, msg, sizeof(msg));
    dt = sm_now() - t0;
    give_handle(l, slot);
    *latency += dt;
    pthread_mutex_lock(&l->mu);
    l->st[comp].calls++;
    if (a > 0)
      l->st[comp].retries++;
    l->st[comp].latency_s += dt;
    pthread_mutex_unlock(&l->mu);
    if (st > 0)
      *status = st;
    if (st == 200) {
      *out_len = r.body.len;
      *out = sm_buf_take(&r.body);
      if (*out == NULL && (*out = sm_strdup("")) == NULL) {
        *reason = SM_LLM_R_INTERNAL;
        return sm_err_set(err, SM_ENOMEM, "out of memory");
      }
      return 0;
    }
    if (st > 0)
      snprintf(msg, sizeof(msg), "HTTP %d", st);
    sm_buf_release(&r.body);
    if (retryable(st) && a < l->cfg.retries) {
      double d = l->cfg.backoff_s * (double)(1u << (a < 16 ? a : 16));
      d *= jitter(l);
      if (r.retry_after > 0)
        d = r.retry_after;
      if (d > l->cfg.max_backoff_s)
        d = l->cfg.max_backoff_s;
      if (sm_now() + d < deadline) {
        nap(d);
        continue;
      }
    }
    *reason = reason_of(st);
    return sm_err_set(err, *reason == SM_LLM_R_TIMEOUT ? SM_ETIMEOUT : SM_ECONN,
                      "%s: %s%s", url, msg, a > 0 ? " (after retries)" : "");
  }
}

/* ==== Chat ==== */

static int chat_body(sm_llm *l, const sm_llm_msg *msgs, int n, int json,
                     sm_buf *b) {
  sm_jw w;
  sm_jw_init(&w, b);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "model", l->cfg.model);
  sm_jw_key(&w, "messages");
  sm_jw_arr_begin(&w);
  for (int i = 0; i < n; i++) {
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "role", msgs[i].role);
    sm_jw_kv_str(&w, "content", msgs[i].content);
    sm_jw_obj_end(&w);
  }
  sm_jw_arr_end(&w);
  sm_jw_kv_num(&w, "temperature", 0);
  sm_jw_kv_int(&w, "max_tokens", l->cfg.max_tokens);
  sm_jw_kv_bool(&w, "stream", 0);
  if (json) {
    sm_jw_key(&w, "response_format");
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "type", "json_object");
    sm_jw_obj_end(&w);
  }
  sm_jw_obj_end(&w);
  return sm_jw_finish(&w);
}

static char *dup_str(const cJSON *v) {
  return cJSON_IsString(v) && v->valuestring ? sm_strdup(v->valuestring) : NULL;
}

/* Reads an OpenAI chat response.  Returns 0 or -1 (not that shape). */
static int parse_chat(const char *body, size_t len, sm_llm_reply *out) {
  cJSON *o = cJSON_ParseWithLength(body, len);
  cJSON *ch, *c0, *m, *u, *tc;
  int rc = -1;

  if (o == NULL)
    return -1;
  ch = cJSON_GetObjectItemCaseSensitive(o, "choices");
  c0 = cJSON_IsArray(ch) ? cJSON_GetArrayItem(ch, 0) : NULL;
  m = cJSON_IsObject(c0) ? cJSON_GetObjectItemCaseSensitive(c0, "message")
                         : NULL;
  if (cJSON_IsObject(m)) {
    cJSON *ct = cJSON_GetObjectItemCaseSensitive(m, "content");
    out->content = cJSON_IsString(ct) ? dup_str(ct) : sm_strdup("");
    out->finish_reason =
        dup_str(cJSON_GetObjectItemCaseSensitive(c0, "finish_reason"));
    tc = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    if (cJSON_IsArray(tc) && cJSON_GetArraySize(tc) > 0) {
      cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(tc, 0),
                                                  "function");
      if (cJSON_IsObject(f)) {
        cJSON *a = cJSON_GetObjectItemCaseSensitive(f, "arguments");
        out->tool_name = dup_str(cJSON_GetObjectItemCaseSensitive(f, "name"));
        if (cJSON_IsString(a))
          out->tool_args = dup_str(a);
        else if (cJSON_IsObject(a)) {
          char *t = cJSON_PrintUnformatted(a);
          out->tool_args = t ? sm_strdup(t) : NULL;
          cJSON_free(t);
        }
        if (out->tool_name == NULL)
          out->tool_name = sm_strdup("");
      }
    }
    if (out->content != NULL)
      rc = 0;
  }
  u = cJSON_GetObjectItemCaseSensitive(o, "usage");
  if (rc == 0 && cJSON_IsObject(u)) {
    cJSON *p = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens");
    cJSON *c = cJSON_GetObjectItemCaseSensitive(u, "completion_tokens");
    if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble < 1e9)
      out->prompt_tokens = (int)p->valuedouble;
    if (cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble < 1e9)
      out->completion_tokens = (int)c->valuedouble;
  }
  cJSON_Delete(o);
  return rc;
}

void sm_llm_reply_release(sm_llm_reply *r) {
  if (r == NULL)
    return;
  sm_free(r->content);
  sm_free(r->tool_name);
  sm_free(r->tool_args);
  sm_free(r->finish_reason);
  memset(r, 0, sizeof(*r));
}

/* The calling thread's cap on every deadline (sm_llm_thread_deadline). */
static _Thread_local double thread_deadline;

void sm_llm_thread_deadline(double t) {
  thread_deadline = t > 0 ? t : 0;
}

static double capped(double deadline) {
  return thread_deadline > 0 && deadline > thread_deadline ? thread_deadline
                                                           : deadline;
}

int sm_llm_chat(sm_llm *l, int comp, const sm_llm_msg *msgs, int n,
                double deadline, sm_llm_reply *out, int *reason, sm_err *err) {
  int dummy, json, rc = 0;
  sm_buf body;

  if (reason == NULL)
    reason = &dummy;
  *reason = 0;
  memset(out, 0, sizeof(*out));
  if (l == NULL || l->chat_ep == NULL || comp < 0 || comp >= SM_LLM_NCOMP) {
    *reason = SM_LLM_R_INTERNAL;
    return sm_err_set(err, SM_EINVAL, "no chat server configured");
  }
  if (deadline <= 0)
    deadline = sm_now() + l->cfg.timeout_s;
  deadline = capped(deadline);
  pthread_mutex_lock(&l->mu);
  l->st[comp].requests++;
  json = l->cfg.json_mode && !l->json_off;
  pthread_mutex_unlock(&l->mu);
  if (sm__llm_estimate_tokens(msgs, n) > l->cfg.max_prompt_tokens) {
    *reason = SM_LLM_R_BUDGET;
    return sm_err_set(
        err, SM_ELIMIT, "prompt of about %d tokens is over the budget of %d",
        sm__llm_estimate_tokens(msgs, n), l->cfg.max_prompt_tokens);
  }
  for (;;) {
    char *resp_body = NULL;
    size_t resp_len = 0;
    int status = 0;
    double lat = 0;

    sm_buf_init(&body, 0);
    if (chat_body(l, msgs, n, json, &body) != 0) {
      sm_buf_release(&body);
      *reason = SM_LLM_R_INTERNAL;
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    }
    if (sm__llm_cache_get(l->cache, l->chat_ep, body.data, body.len, &resp_body,
                          &resp_len)) {
      if (parse_chat(resp_body, resp_len, out) == 0) {
        sm_free(resp_body);
        sm_buf_release(&body);
        out->cached = 1;
        pthread_mutex_lock(&l->mu);
        l->st[comp].cache_hits++;
        pthread_mutex_unlock(&l->mu);
        return 0;
      }
      sm_llm_reply_release(out);
      sm_free(resp_body);
      resp_body = NULL;
    }
    rc = post(l, comp, l->chat_ep, body.data, deadline, &resp_body, &resp_len,
              &status, &lat, reason, err);
    out->latency_s += lat;
    if (rc != 0 && status == 400 && json) {
      /* A server without JSON mode: ask again without it, once, and
       * remember.  The schema is in the prompt either way. */
      pthread_mutex_lock(&l->mu);
      l->json_off = 1;
      pthread_mutex_unlock(&l->mu);
      if (err)
        sm_err_clear(err);
      sm_buf_release(&body);
      json = 0;
      continue;
    }
    if (rc == 0 && parse_chat(resp_body, resp_len, out) != 0) {
      sm_llm_reply_release(out);
      *reason = SM_LLM_R_BAD_RESPONSE;
      rc = sm_err_set(err, SM_EPARSE,
                      "%s: the answer is not an OpenAI chat response",
                      l->chat_ep);
    }
    if (rc == 0) {
      out->latency_s = lat;
      sm__llm_cache_put(l->cache, l->chat_ep, body.data, body.len, resp_body,
                        resp_len);
      pthread_mutex_lock(&l->mu);
      l->st[comp].prompt_tokens += (uint64_t)out->prompt_tokens;
      l->st[comp].completion_tokens += (uint64_t)out->completion_tokens;
      pthread_mutex_unlock(&l->mu);
    }
    sm_free(resp_body);
    sm_buf_release(&body);
    return rc;
  }
}

int sm__llm_ask(sm_llm *l, int comp, const char *system, const char *user,
                sm_llm_reply *out, int *reason, sm_err *err) {
  sm_llm_msg m[2] = {{"system", system}, {"user", user}};

  return sm_llm_chat(l, comp, m, 2, 0, out, reason, err);
}

/* ==== Embeddings ==== */

int sm_llm_embed(sm_llm *l, const char *text, double deadline, float **vec,
                 int *dims, int *reason, sm_err *err) {
  char *resp_body = NULL;
  size_t resp_len = 0;
  int status, rc, dummy, cached = 0;
  double lat = 0;
  cJSON *o = NULL, *d0, *e;
  sm_buf body;
  sm_jw w;

  if (reason == NULL)
    reason = &dummy;
  *reason = 0;
  *vec = NULL;
  *dims = 0;
  if (l == NULL || l->embed_ep == NULL) {
    *reason = SM_LLM_R_INTERNAL;
    return sm_err_set(err, SM_EINVAL, "no embeddings server configured");
  }
  if (deadline <= 0)
    deadline = sm_now() + l->cfg.timeout_s;
  deadline = capped(deadline);
  pthread_mutex_lock(&l->mu);
  l->st[SM_LLM_EMBED].requests++;
  pthread_mutex_unlock(&l->mu);
  sm_buf_init(&body, 0);
  sm_jw_init(&w, &body);
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "model", l->cfg.embed_model);
  sm_jw_kv_str(&w, "input", text);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0) {
    sm_buf_release(&body);
    *reason = SM_LLM_R_INTERNAL;
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  if (sm__llm_cache_get(l->cache, l->embed_ep, body.data, body.len, &resp_body,
                        &resp_len)) {
    cached = 1;
    rc = 0;
  } else {
    rc = post(l, SM_LLM_EMBED, l->embed_ep, body.data, deadline, &resp_body,
              &resp_len, &status, &lat, reason, err);
  }
  if (rc == 0) {
    cJSON *data;
    o = cJSON_ParseWithLength(resp_body, resp_len);
    data = o ? cJSON_GetObjectItemCaseSensitive(o, "data") : NULL;
    d0 = cJSON_IsArray(data) ? cJSON_GetArrayItem(data, 0) : NULL;
    e = d0 ? cJSON_GetObjectItemCaseSensitive(d0, "embedding") : NULL;
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) < 2 ||
        cJSON_GetArraySize(e) > 65536) {
      *reason = SM_LLM_R_BAD_RESPONSE;
      rc = sm_err_set(err, SM_EPARSE,
                      "%s: no embedding of 2..65536 numbers in the answer",
                      l->embed_ep);
    } else {
      int k = 0, nd = cJSON_GetArraySize(e);
      cJSON *x;
      *vec = sm_calloc((size_t)nd, sizeof(float));
      if (*vec == NULL) {
        *reason = SM_LLM_R_INTERNAL;
        rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      }
      cJSON_ArrayForEach(x, e) {
        if (rc != 0)
          break;
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
            fabs(x->valuedouble) > 1e30) {
          *reason = SM_LLM_R_BAD_RESPONSE;
          rc = sm_err_set(err, SM_EPARSE,
                          "%s: a coordinate of the embedding is not a "
                          "finite number",
                          l->embed_ep);
          break;
        }
        (*vec)[k++] = (float)x->valuedouble;
      }
      if (rc == 0)
        *dims = nd;
      else {
        sm_free(*vec);
        *vec = NULL;
      }
    }
  }
  if (rc == 0) {
    if (cached) {
      pthread_mutex_lock(&l->mu);
      l->st[SM_LLM_EMBED].cache_hits++;
      pthread_mutex_unlock(&l->mu);
    } else {
      cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "usage");
      cJSON *p = u ? cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens") : 0;
      sm__llm_cache_put(l->cache, l->embed_ep, body.data, body.len, resp_body,
                        resp_len);
      pthread_mutex_lock(&l->mu);
      if (cJSON_IsNumber(p) && p->valuedouble >= 0 && p->valuedouble < 1e9)
        l->st[SM_LLM_EMBED].prompt_tokens += (uint64_t)p->valuedouble;
      pthread_mutex_unlock(&l->mu);
    }
  }
  cJSON_Delete(o);
  sm_free(resp_body);
  sm_buf_release(&body);
  return rc;
}
