/* mhd_load.c - libmicrohttpd loaded on first use (mhd_load_int.h). */
#define SM__MHD_LOADER
#include <pthread.h>

#include "serve/mhd_load_int.h"
#include "util/dlib_int.h"

#ifndef SM_MHD_SONAME
#define SM_MHD_SONAME "libmicrohttpd.so.12" /* Debian bookworm's */
#endif

sm__mhd_api sm__mhd;

static sm__dlib lib = {"libmicrohttpd (the HTTP server)", SM_MHD_SONAME,
                       "SCHEDMATE_MHD_LIB",
                       "install the Debian package libmicrohttpd12"};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  if (sm__dlib_open(&lib) != 0)
    return;
#define SM__XX(f) *(void **)&sm__mhd.f = sm__dlib_sym(&lib, #f);
  SM__MHD_FUNCS(SM__XX)
#undef SM__XX
}

int sm__mhd_load(sm_err *err) {
  pthread_once(&once, load);
  return sm__dlib_status(&lib, err);
}
