/* runner.c - runs the registered unit tests, each in a forked child with a
 * timeout, and ends with "N passed, N failed, N skipped".  A skipped test
 * says why on its "skip" line (the reason comes back through a pipe).
 *
 *   sm_test [--list] [--timeout S] [PATTERN...]
 *
 * With patterns, only tests whose name contains one of them run. */
#include <fcntl.h>
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
/* The command line's patterns (see main). */
static char **patterns;
/* Write end of the pipe that carries a skipped test's reason (child). */
static int skip_fd = -1;

void sm__test_skip(const char *reason) {
  if (skip_fd >= 0 && reason != NULL)
    (void)!write(skip_fd, reason, strnlen(reason, 400));
  exit(SM_SKIP_EXIT);
}

/* The reason a skipped child sent, or a note that it gave none. */
static void skip_reason(int fd, char *out, size_t cap) {
  ssize_t n = read(fd, out, cap - 1);

  if (n <= 0)
    snprintf(out, cap, "(no reason given)");
  else
    out[n] = '\0';
  for (char *p = out; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
}

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
  char **pat;

  /* Kept in a static that the children read, so that one that exits from
   * inside a test (a skip) still reaches it for the leak checker. */
  patterns = calloc((size_t)argc, sizeof(char *));
  pat = patterns;
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
    int status = 0, pipefd[2];
    double ms;

    if (!selected(t->name, npat, patterns))
      continue;
    if (list) {
      printf("%s\n", t->name);
      continue;
    }
    fflush(stdout);
    if (pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) {
      perror("pipe");
      return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) {
      close(pipefd[0]);
      skip_fd = pipefd[1];
      alarm((unsigned)timeout);
      t->fn();
      fflush(NULL);
      _exit(0);
    }
    close(pipefd[1]);
    waitpid(pid, &status, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      printf("ok      %-40s %8.1f ms\n", t->name, ms);
      passed++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == SM_SKIP_EXIT) {
      char why[512];
      skip_reason(pipefd[0], why, sizeof(why));
      printf("skip    %-40s %s\n", t->name, why);
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
    close(pipefd[0]);
  }
  free(pat);
  if (!list)
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
