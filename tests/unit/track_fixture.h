/* track_fixture.h - what the Tracker's unit tests share: a NaN check,
 * one line through the parser, and a text fed to a fresh tracker. */
#ifndef SM_TEST_TRACK_FIXTURE_H
#define SM_TEST_TRACK_FIXTURE_H

#include <string.h>

#include "harness.h"
#include "schedmate/sm_tracker.h"
#include "tracker/track_int.h"

#define ASSERT_NAN(x) ASSERT((x) != (x))

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

#endif
