/* fuzz_extract_cfg.c - libFuzzer target: arbitrary bytes as a config file
 * (YAML, JSON, TOML, Python config or Python script, gin, a launch
 * script, or the source of a compiled trainer with its usage text, chosen
 * by the first byte) read by the extractor: warnings at most, never a crash, a
 * hang or unbounded memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"

static char repo[64];

static void cleanup(void) {
  rmdir(repo);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  snprintf(repo, sizeof(repo), "/tmp/sm-fuzz-cfg-XXXXXX");
  if (mkdtemp(repo) == NULL)
    abort();
  atexit(cleanup);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"c.yaml", "c.json",   "c.toml",
                                      "c.py",   "train.py", "c.gin",
                                      "run.sh", "trainer.c"};
  const char *name;
  char path[256];
  const char *argv[4];
  const char *cfg[1];
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};
  FILE *f;

  if (size == 0)
    return 0;
  name = names[data[0] % 8];
  snprintf(path, sizeof(path), "%s/%s", repo, name);
  f = fopen(path, "w");
  if (f == NULL)
    return 0;
  fwrite(data + 1, 1, size - 1, f);
  fclose(f);
  argv[0] = strcmp(name, "run.sh") == 0 ? "bash" : "python";
  argv[1] = strcmp(name, "run.sh") == 0 ? "run.sh" : "train.py";
  if (strcmp(name, "trainer.c") == 0) {
    argv[0] = "./trainer";
    argv[1] = "-x";
  }
  argv[2] = "--config";
  argv[3] = name;
  cfg[0] = name;
  memset(&q, 0, sizeof(q));
  q.repo = repo;
  q.argv = argv;
  q.argc = 4;
  q.configs = cfg;
  q.n_configs = (strcmp(name, "train.py") == 0 || strcmp(name, "run.sh") == 0 ||
                 strcmp(name, "trainer.c") == 0)
                    ? 0
                    : 1;
  q.time_budget_s = 1.0;
  sm_extract(&q, &r, &err);
  sm_extract_res_release(&r);
  unlink(path);
  return 0;
}
