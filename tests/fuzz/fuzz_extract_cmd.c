/* fuzz_extract_cmd.c - libFuzzer target: arbitrary launch commands (one
 * word per line, or one shell string) against a small fixed repository
 * must give a result or a clean error, never a crash, a hang or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"

static char repo[64];

static void put(const char *rel, const char *text) {
  char path[256];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", repo, rel);
  f = fopen(path, "w");
  if (f != NULL) {
    fputs(text, f);
    fclose(f);
  }
}

/* Removes the scratch repository at exit. */
static void cleanup(void) {
  static const char *const files[] = {"train.py", "run.sh", "configs/a.yaml"};
  char path[256];
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    snprintf(path, sizeof(path), "%s/%s", repo, files[i]);
    remove(path);
  }
  snprintf(path, sizeof(path), "%s/configs", repo);
  rmdir(path);
  rmdir(repo);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  char dir[128];
  (void)argc;
  (void)argv;
  snprintf(repo, sizeof(repo), "/tmp/sm-fuzz-cmd-XXXXXX");
  if (mkdtemp(repo) == NULL)
    abort();
  atexit(cleanup);
  snprintf(dir, sizeof(dir), "%s/configs", repo);
  mkdir(dir, 0755);
  put("train.py", "import argparse\nimport torch\np = argparse.Argument"
                  "Parser()\np.add_argument('--lr', default=0.1)\n"
                  "p.add_argument('--amp', action='store_true')\n");
  put("run.sh", "#!/bin/bash\n#SBATCH --nodes=2\nN=${1:-4}\n"
                "torchrun --nproc_per_node=$N train.py \"$@\"\n");
  put("configs/a.yaml", "lr: 0.5\nepochs: 3\n");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  const char *argv[64];
  int argc = 0;
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};

  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  for (char *s = buf, *e; argc < 64 && s <= buf + size; s = e + 1) {
    e = strchr(s, '\n');
    if (e == NULL)
      e = buf + size;
    *e = '\0';
    argv[argc++] = s;
    if (e == buf + size)
      break;
  }
  memset(&q, 0, sizeof(q));
  q.repo = repo;
  q.argv = argv;
  q.argc = argc;
  q.max_files = 20;
  q.time_budget_s = 1.0;
  if (sm_extract(&q, &r, &err) == 0) {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_extract_write_json(&r, &w);
    if (sm_jw_finish(&w) != 0)
      abort();
    sm_buf_release(&b);
  }
  sm_extract_res_release(&r);
  free(buf);
  return 0;
}
