/* fuzz_failure_locate.c - libFuzzer target: the locator, the cascade
 * rules, the classifier and the JSON output on arbitrary bytes.  The first
 * byte picks the mode and a small chunk size (so that bisection, the
 * transient check and the back scan all run on small inputs); the rest is
 * the log.  A diagnosis must stay inside the input, number its line as
 * the line its offset is in, and serialise to balanced JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "schedmate/sm.h"
#include "schedmate/sm_failure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sm_sigdb *db;
  sm_diag_opts o = {0};
  sm_diagnosis d;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  uint64_t lines = 1;

  if (db == NULL) {
    db = sm_sigdb_new();
    if (db == NULL || sm_sigdb_load_builtin(db, &err) != 0)
      abort();
  }
  if (size == 0)
    return 0;
  o.mode = (sm_diag_mode)(data[0] % 3);
  o.chunk_lines = 1 + (data[0] >> 2) % 8;
  o.context = 1 + (data[0] >> 5) * 3;
  o.tail_lines = 1 + (data[0] >> 4);
  o.max_line = 256;
  data++;
  size--;
  if (sm_diagnose_mem(db, (const char *)data, size, "fuzz", &o, &d, &err) != 0)
    return 0;
  for (size_t i = 0; i < size; i++)
    lines += data[i] == '\n';
  if (d.failure &&
      (d.first_error_line < 1 || (uint64_t)d.first_error_line > lines ||
       d.first_error_offset > size || d.confidence < 0 || d.confidence > 1 ||
       d.n_evidence < 1))
    abort();
  if (!d.failure && (d.first_error_line != 0 || d.n_evidence != 0))
    abort();
  /* The line number is the line the offset is in (pieces of a long line
   * or of carriage-return updates share it). */
  if (d.failure) {
    uint64_t before = 1;
    for (size_t i = 0; i < d.first_error_offset; i++)
      before += data[i] == '\n';
    if ((uint64_t)d.first_error_line != before)
      abort();
  }
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_diagnosis_json(&d, NULL, &w);
  sm_jw_obj_end(&w);
  if (sm_jw_finish(&w) != 0)
    abort();
  sm_buf_release(&b);
  sm_diagnosis_release(&d);
  return 0;
}
