/* runner.c - runs the registered unit tests, each in a forked child with a
 * timeout, and ends with "N passed, N failed, N skipped".
 *
 *   sm_test [--list] [--timeout S] [PATTERN...]
 *
 * With patterns, only tests whose name contains one of them run. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_TESTS 4096

typedef struct test_entry {
  const char *name; /* test name */
  const char *file; /* source file */
  sm_test_fn fn;    /* body */
} test_entry;

static test_entry tests[MAX_TESTS];
static int n_tests;

void sm__test_register(const char *name, const char *file, sm_test_fn fn) {
  if (n_tests < MAX_TESTS) {
    tests[n_tests].name = name;
    tests[n_tests].file = file;
    tests[n_tests].fn = fn;
    n_tests++;
  }
}

static int by_file_then_name(const void *a, const void *b) {
  const test_entry *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

static int selected(const char *name, int npat, char **pat) {
  if (npat == 0)
    return 1;
  for (int i = 0; i < npat; i++)
    if (strstr(name, pat[i]) != NULL)
      return 1;
  return 0;
}

int main(int argc, char **argv) {
  int timeout = 60, list = 0, npat = 0;
  int passed = 0, failed = 0, skipped = 0;
  char **pat = calloc((size_t)argc, sizeof(char *));

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--list") == 0)
      list = 1;
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
      timeout = atoi(argv[++i]);
    else
      pat[npat++] = argv[i];
  }
  qsort(tests, (size_t)n_tests, sizeof(tests[0]), by_file_then_name);
  for (int i = 0; i < n_tests; i++) {
    test_entry *t = &tests[i];
    struct timespec t0, t1;
    pid_t pid;
    int status = 0;
    double ms;

    if (!selected(t->name, npat, pat))
      continue;
    if (list) {
      printf("%s\n", t->name);
      continue;
    }
    fflush(stdout);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) {
      alarm((unsigned)timeout);
      t->fn();
      fflush(NULL);
      _exit(0);
    }
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      printf("ok      %-40s %8.1f ms\n", t->name, ms);
      passed++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == SM_SKIP_EXIT) {
      printf("skip    %s\n", t->name);
      skipped++;
    } else {
      if (WIFSIGNALED(status))
        printf("FAIL    %s (%s)\n", t->name,
               WTERMSIG(status) == SIGALRM ? "timeout"
                                           : strsignal(WTERMSIG(status)));
      else
        printf("FAIL    %s\n", t->name);
      failed++;
    }
  }
  free(pat);
  if (!list)
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
