/* tmprepo.h - a throw-away repository under /tmp for unit tests that
 * write their own fixture files: make it, put files (parent folders
 * made), drop it. */
#ifndef SM_TEST_TMPREPO_H
#define SM_TEST_TMPREPO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

typedef struct repo {
  char dir[64];
} repo;

static inline void repo_make(repo *r) {
  snprintf(r->dir, sizeof(r->dir), "/tmp/sm-repo-XXXXXX");
  if (mkdtemp(r->dir) == NULL)
    SM_FAIL_AT("mkdtemp failed");
}

/* Writes text to rel inside the repository, making its folders. */
static inline void put(repo *r, const char *rel, const char *text) {
  char path[512], *slash;
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", r->dir, rel);
  for (slash = strchr(path + strlen(r->dir) + 1, '/'); slash;
       slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    mkdir(path, 0755);
    *slash = '/';
  }
  f = fopen(path, "w");
  if (f == NULL)
    SM_FAIL_AT("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static inline void repo_drop(repo *r) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cleanup of %s failed\n", r->dir);
}

#endif
