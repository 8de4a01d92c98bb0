/* track_fixture.h - what the Tracker's unit tests share: a NaN check,
 * one line through the parser, a text fed to a fresh tracker, and a
 * text written to a file and scanned backwards, and a text builder. */
#ifndef SM_TEST_TRACK_FIXTURE_H
#define SM_TEST_TRACK_FIXTURE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "tracker/track_int.h"

#define ASSERT_NAN(x) ASSERT((x) != (x))

/* A text built by appending formatted pieces (the tests' logs). */
typedef struct text {
  char *s;
  size_t n, cap;
} text;

static inline void add(text *t, const char *fmt, ...) {
  va_list ap;
  int k;

  if (t->cap - t->n < 4096) {
    t->cap = t->cap ? 2 * t->cap : 1 << 16;
    t->s = realloc(t->s, t->cap);
    ASSERT(t->s != NULL);
  }
  va_start(ap, fmt);
  k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
  va_end(ap);
  ASSERT(k >= 0 && (size_t)k < t->cap - t->n);
  t->n += (size_t)k;
}

/* The sample the line parser reads from one line. */
static inline sm_track_sample P(const char *line) {
  sm_track_sample s;
  sm_track_parse(line, strlen(line), &s);
  return s;
}

/* The answer of a tracker fed text oldest line first. */
static inline sm_track_result feed(const char *text) {
  sm_track_result r;
  sm_tracker *t = sm_tracker_new(NULL);

  ASSERT(t != NULL);
  ASSERT_OK(sm_tracker_feed(t, text, strlen(text)));
  sm_tracker_result(t, &r);
  sm_tracker_free(t);
  return r;
}

/* Scans a text written to a temporary file (the backward reader). */
static inline sm_track_result scan_text(const char *text) {
  char path[64];
  sm_track_result r;
  sm_err e = {0};
  sm_tracker *t = sm_tracker_new(NULL);
  FILE *f;
  int fd;
  strcpy(path, "/tmp/sm_track_scan_XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  f = fdopen(fd, "w");
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(text, 1, strlen(text), f), strlen(text));
  ASSERT_OK(fclose(f));
  ASSERT(t != NULL);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  sm_tracker_free(t);
  unlink(path);
  return r;
}

#endif
