/* fuzz_failure_sigdb.c - libFuzzer target: the signature file parser on
 * arbitrary text.  A text either loads or is refused whole (the database
 * keeps its size); what loads must then match and diagnose a small log
 * without trouble. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm.h"
#include "schedmate/sm_failure.h"

static const char log_text[] =
    "step 1 loss 2.0\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/u/t.py\", line 3, in <module>\n"
    "    run()\n"
    "RuntimeError: CUDA error: unspecified launch failure\n"
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
    "node1:1:2 [0] NCCL WARN NET/IB : Got completion from peer x with "
    "status=12\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  sm_sigmatch m;
  sm_diagnosis d;
  int rc;

  if (db == NULL)
    return 0;
  rc = sm_sigdb_load_text(db, (const char *)data, size, "fuzz.ini", &err);
  if (rc != 0 && (sm_sigdb_count(db) != 0 || err.msg[0] == '\0'))
    abort();
  if (rc == 0) {
    for (const char *p = log_text; *p;) {
      const char *nl = strchr(p, '\n');
      sm_sigdb_match(db, p, (size_t)(nl - p), &m);
      p = nl + 1;
    }
    if (sm_diagnose_mem(db, log_text, sizeof(log_text) - 1, "log", NULL, &d,
                        &err) == 0)
      sm_diagnosis_release(&d);
  }
  sm_sigdb_free(db);
  return 0;
}
