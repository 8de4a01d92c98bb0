/* dlib.c - optional shared libraries loaded on first use (dlib_int.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dlib_int.h"

/* The reason is cut, never the hint, when the line is too long. */
static void failed(sm__dlib *d, int code, const char *why) {
  const char *hint = d->hint ? d->hint : "";
  int room;

  if (d->code != 0)
    return;
  d->code = code;
  room = (int)sizeof(d->msg) - 1 -
         (int)(strlen(d->what) + strlen(hint) +
               sizeof(" could not be loaded (); "));
  snprintf(d->msg, sizeof(d->msg), "%s could not be loaded (%.*s)%s%s", d->what,
           room > 16 ? room : 16, why, *hint ? "; " : "", hint);
}

int sm__dlib_open(sm__dlib *d) {
  const char *file = d->env ? secure_getenv(d->env) : NULL;
  const char *e;

  if (file == NULL || *file == '\0')
    file = d->file;
  snprintf(d->opened, sizeof(d->opened), "%s", file);
  dlerror();
  d->dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (d->dl == NULL) {
    e = dlerror();
    failed(d, SM_ENOENT, e ? e : file);
  }
  return d->code;
}

void *sm__dlib_sym(sm__dlib *d, const char *name) {
  char why[160];
  void *p = d->dl ? dlsym(d->dl, name) : NULL;

  if (p == NULL) {
    snprintf(why, sizeof(why), "%s has no %s", d->opened, name);
    failed(d, SM_EUNSUPP, why);
  }
  return p;
}

int sm__dlib_status(const sm__dlib *d, sm_err *err) {
  if (d->code == 0 && d->dl != NULL)
    return 0;
  if (d->code == 0)
    return sm_err_set(err, SM_ENOENT, "%s was never loaded", d->what);
  return sm_err_set(err, d->code, "%s", d->msg);
}
