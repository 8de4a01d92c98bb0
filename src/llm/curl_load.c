/* curl_load.c - libcurl loaded on first use (curl_load_int.h). */
#define SM__CURL_LOADER
#include <pthread.h>

#include "llm/curl_load_int.h"
#include "util/dlib_int.h"

#ifndef SM_CURL_SONAME
#define SM_CURL_SONAME "libcurl.so.4" /* Debian bookworm's */
#endif

sm__curl_api sm__curl;

static sm__dlib lib = {"libcurl (the LLM client's HTTP library)",
                       SM_CURL_SONAME, "SCHEDMATE_CURL_LIB",
                       "install the Debian package libcurl4"};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  if (sm__dlib_open(&lib) != 0)
    return;
#define SM__XX(f) *(void **)&sm__curl.f = sm__dlib_sym(&lib, #f);
  SM__CURL_FUNCS(SM__XX)
#undef SM__XX
}

int sm__curl_load(sm_err *err) {
  pthread_once(&once, load);
  return sm__dlib_status(&lib, err);
}
