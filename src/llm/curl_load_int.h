/* curl_load_int.h - libcurl, the LLM client's HTTP library, loaded on
 * first use (curl_load.c).
 *
 * libcurl and what it pulls in (GnuTLS, nettle, Kerberos, LDAP, SSH,
 * nghttp2, ...) cost every process about 3 ms at start-up when linked;
 * only a command given an LLM or embeddings URL uses them.  curl/curl.h
 * stays a build-time requirement; the curl_* names used after including
 * this header (instead of curl/curl.h) call through a table that
 * sm__curl_load fills from libcurl (the soname the build found,
 * SM_CURL_SONAME, or the file named by SCHEDMATE_CURL_LIB).
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic: they are called
 * through pointers of their own variadic type, so each call passes its
 * argument exactly as a direct call would.  curl.h's compile-time checks
 * of those arguments (typecheck-gcc.h) are macros named like the
 * functions, so they are turned off here (CURL_DISABLE_TYPECHECK): an
 * option's value must have the type its documentation gives (long,
 * curl_off_t, a pointer, a callback of the documented signature). */
#ifndef SM_LLM_CURL_LOAD_INT_H
#define SM_LLM_CURL_LOAD_INT_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "schedmate/sm_base.h"

/* The functions the LLM client calls. */
#define SM__CURL_FUNCS(XX)                                                     \
  XX(curl_global_init)                                                         \
  XX(curl_easy_init)                                                           \
  XX(curl_easy_cleanup)                                                        \
  XX(curl_easy_reset)                                                          \
  XX(curl_easy_setopt)                                                         \
  XX(curl_easy_perform)                                                        \
  XX(curl_easy_getinfo)                                                        \
  XX(curl_easy_strerror)                                                       \
  XX(curl_slist_append)                                                        \
  XX(curl_slist_free_all)

typedef struct sm__curl_api {
#define SM__XX(f) __typeof__(f) *f;
  SM__CURL_FUNCS(SM__XX)
#undef SM__XX
} sm__curl_api;

/* Filled by the first successful sm__curl_load; read only after one. */
extern sm__curl_api sm__curl;

/* Loads libcurl once (thread-safe).  Returns 0, or SM_ENOENT/SM_EUNSUPP
 * with one line saying why (the file and the loader's reason). */
int sm__curl_load(sm_err *err);

#ifndef SM__CURL_LOADER
/* curl.h's own macros for these two only check the argument count. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (*sm__curl.curl_global_init)
#define curl_easy_init (*sm__curl.curl_easy_init)
#define curl_easy_cleanup (*sm__curl.curl_easy_cleanup)
#define curl_easy_reset (*sm__curl.curl_easy_reset)
#define curl_easy_setopt (*sm__curl.curl_easy_setopt)
#define curl_easy_perform (*sm__curl.curl_easy_perform)
#define curl_easy_getinfo (*sm__curl.curl_easy_getinfo)
#define curl_easy_strerror (*sm__curl.curl_easy_strerror)
#define curl_slist_append (*sm__curl.curl_slist_append)
#define curl_slist_free_all (*sm__curl.curl_slist_free_all)
#endif

#endif /* SM_LLM_CURL_LOAD_INT_H */
