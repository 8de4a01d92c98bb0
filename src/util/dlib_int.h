/* dlib_int.h - optional shared libraries loaded on first use (dlib.c).
 *
 * A heavy library that only one command needs (COIN-OR CBC for the Sia
 * MILP, libcurl for the LLM client, libmicrohttpd for `schedmate serve`)
 * is not linked: linking it makes every process map it and its
 * dependencies at start-up, whether it is used or not.  Its header stays a
 * build-time requirement (for the prototypes); at run time the module
 * that needs it opens it by soname once, under its own pthread_once, and
 * takes the addresses of the functions it calls into a table:
 *
 *   static sm__dlib lib = {"libcurl", "libcurl.so.4", "SCHEDMATE_CURL_LIB",
 *                          "install the Debian package libcurl4"};
 *   static void load(void) {
 *     if (sm__dlib_open(&lib) == 0)
 *       *(void **)&api.perform = sm__dlib_sym(&lib, "curl_easy_perform");
 *   }
 *   int load_curl(sm_err *err) {
 *     pthread_once(&once, load);
 *     return sm__dlib_status(&lib, err);
 *   }
 *
 * The environment variable, when set (and the process is not setuid),
 * names the file to open instead of the soname: a library installed
 * elsewhere, or a missing one in the tests. */
#ifndef SM_UTIL_DLIB_INT_H
#define SM_UTIL_DLIB_INT_H

#include "schedmate/sm_base.h"

typedef struct sm__dlib {
  const char *what;          /* the library, for messages ("COIN-OR CBC") */
  const char *file;          /* the soname to open ("libCbcSolver.so.3") */
  const char *env;           /* variable naming another file, or NULL */
  const char *hint;          /* what to do, appended to a failure, or NULL */
  void *dl;                  /* dlopen handle, NULL until opened */
  int code;                  /* 0 loaded, else an SM_E* code */
  char msg[SM_ERR_MSG_SIZE]; /* why it is not usable, one line */
  char opened[128];          /* the file opened, for messages */
} sm__dlib;

/* Opens the library (RTLD_NOW | RTLD_LOCAL).  Returns 0, or SM_ENOENT with
 * d->msg naming the file and the loader's reason.  Not thread-safe: call
 * it once, under the caller's pthread_once. */
int sm__dlib_open(sm__dlib *d);
/* The address of name in the opened library (or in its dependencies), or
 * NULL: then d becomes unusable (SM_EUNSUPP, "has no NAME") unless it
 * already failed.  Same thread rule as sm__dlib_open. */
void *sm__dlib_sym(sm__dlib *d, const char *name);
/* 0 when the library was opened with every symbol asked for, else its
 * code with its message in err (err may be NULL).  Call it after the
 * caller's pthread_once. */
int sm__dlib_status(const sm__dlib *d, sm_err *err);

#endif /* SM_UTIL_DLIB_INT_H */
