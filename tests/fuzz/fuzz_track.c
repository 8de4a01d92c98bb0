/* fuzz_track.c - libFuzzer target for the tracker's line parser and
 * window: every line of the input is cleaned and parsed on its own, then
 * the whole input is fed to a tracker whose answer is written as JSON.
 * Nothing may crash, read out of bounds or leak, and the facts must stay
 * sane: steps are never negative, totals never zero, the JSON is one
 * object. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"

static sm_tracker *tracker;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  static char cleaned[8193];
  sm_track_result r;
  sm_buf json;
  size_t i = 0;

  while (i < size) {
    const char *nl = memchr(s + i, '\n', size - i);
    size_t e = nl ? (size_t)(nl - s) : size;
    size_t m = sm_track_clean(s + i, e - i, cleaned, sizeof(cleaned));
    sm_track_sample smp;
    if (m >= sizeof(cleaned) || cleaned[m] != '\0')
      abort();
    sm_track_parse(cleaned, m, &smp);
    if (smp.kind < SM_TK_NONE || smp.kind > SM_TK_RUN)
      abort();
    if (smp.has_step && smp.step < 0)
      abort();
    if (smp.has_total && smp.total <= 0)
      abort();
    if (smp.step_time == smp.step_time && !(smp.step_time > 0))
      abort();
    (void)sm_track_timestamp(s + i, e - i, NULL);
    i = e + 1;
  }
  if (tracker == NULL)
    tracker = sm_tracker_new(NULL);
  if (tracker == NULL)
    abort();
  /* A fresh answer per input. */
  sm_tracker_reset(tracker);
  if (sm_tracker_feed(tracker, s, size) != 0)
    abort();
  sm_tracker_feed(tracker, "\n", 1);
  sm_tracker_result(tracker, &r);
  if (r.ok && r.has_step && r.step < 0)
    abort();
  if (r.step_time_s == r.step_time_s && !(r.step_time_s > 0))
    abort();
  sm_buf_init(&json, 0);
  if (sm_track_result_json(&r, &json) != 0 || json.data[0] != '{' ||
      json.data[json.len - 1] != '}')
    abort();
  sm_buf_release(&json);
  return 0;
}
