/* bench_llm.c - the LLM client's own cost per request, next to the bare
 * transport.  Against one OpenAI-compatible server (the replay server of
 * the tests), in one process:
 *
 *   client  N sm_llm_chat requests with distinct prompts (no cache hit):
 *           request JSON, pooled keep-alive handle, response parse,
 *           cache store, accounting;
 *   bare    the same N bodies POSTed with one reused libcurl handle and
 *           nothing else (the reference: what any client must pay);
 *   cached  N repeats of one prompt answered from the cache.
 *
 *   bench_llm URL N */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_llm.h"

static size_t sink(char *p, size_t s, size_t n, void *ud) {
  (void)p;
  (void)ud;
  return s * n;
}

static const char *prompt_of(int i, char *buf, size_t n) {
  snprintf(buf, n,
           "Lines of the log, oldest first:\n<<<DATA %016x>>>\n1: iter %d "
           "of 5000 :: obj 2.%d :: wall 0.41\n<<<END DATA %016x>>>\n",
           i, i, i, i);
  return buf;
}

int main(int argc, char **argv) {
  sm_llm_config c;
  sm_llm *l;
  sm_err err = {0};
  int n = argc > 2 ? atoi(argv[2]) : 200;
  char url[512], p[512];
  double t0, client, bare, cached;
  CURL *h;
  struct curl_slist *hd = NULL;

  if (argc < 2 || n < 1) {
    fprintf(stderr, "usage: bench_llm URL N\n");
    return 2;
  }
  sm_llm_config_init(&c);
  c.url = argv[1];
  c.model = "bench";
  l = sm_llm_new(&c, &err);
  if (l == NULL) {
    fprintf(stderr, "%s\n", err.msg);
    return 2;
  }
  /* One warm-up request opens the connection. */
  {
    sm_llm_msg m[2] = {{"system", "s"}, {"user", "warm-up"}};
    sm_llm_reply r;
    if (sm_llm_chat(l, SM_LLM_TRACKER, m, 2, 0, &r, NULL, &err) != 0) {
      fprintf(stderr, "warm-up: %s\n", err.msg);
      return 1;
    }
    sm_llm_reply_release(&r);
  }
  t0 = sm_now();
  for (int i = 0; i < n; i++) {
    sm_llm_msg m[2] = {{"system", "You read lines of a log."},
                       {"user", prompt_of(i, p, sizeof(p))}};
    sm_llm_reply r;
    if (sm_llm_chat(l, SM_LLM_TRACKER, m, 2, 0, &r, NULL, &err) != 0) {
      fprintf(stderr, "request %d: %s\n", i, err.msg);
      return 1;
    }
    sm_llm_reply_release(&r);
  }
  client = (sm_now() - t0) / n;
  t0 = sm_now();
  for (int i = 0; i < n; i++) {
    sm_llm_msg m[2] = {{"system", "You read lines of a log."},
                       {"user", prompt_of(0, p, sizeof(p))}};
    sm_llm_reply r;
    sm_llm_chat(l, SM_LLM_TRACKER, m, 2, 0, &r, NULL, &err);
    sm_llm_reply_release(&r);
  }
  cached = (sm_now() - t0) / n;
  /* The bare transport: the same kind of body, one handle, no parsing. */
  snprintf(url, sizeof(url), "%s/v1/chat/completions", argv[1]);
  h = curl_easy_init();
  hd = curl_slist_append(hd, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  t0 = sm_now();
  for (int i = 0; i < n; i++) {
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"model\":\"bench\",\"messages\":[{\"role\":\"system\","
             "\"content\":\"You read lines of a log.\"},{\"role\":\"user\","
             "\"content\":\"bare %d\"}],\"temperature\":0,"
             "\"max_tokens\":1024,\"stream\":false}",
             i);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(h) != CURLE_OK) {
      fprintf(stderr, "bare request %d failed\n", i);
      return 1;
    }
  }
  bare = (sm_now() - t0) / n;
  curl_slist_free_all(hd);
  curl_easy_cleanup(h);
  printf("per request over %d requests: client %.3f ms, bare libcurl "
         "%.3f ms (ratio %.2f, client's own cost %.3f ms); cache hit "
         "%.4f ms\n",
         n, client * 1e3, bare * 1e3, client / bare, (client - bare) * 1e3,
         cached * 1e3);
  sm_llm_free(l);
  return 0;
}
