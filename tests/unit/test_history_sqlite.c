/* test_history_sqlite.c - the SQLite store under concurrent writers and a
 * writer killed with SIGKILL in the middle of its work. */
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"

static void fill(sm_record *r, const char *id, int i) {
  sm_record_init(r);
  r->id = sm_strdup(id);
  sm_meta_set_str(&r->meta, SM_META_MODEL_NAME, i % 2 ? "resnet50" : "bert",
                  NULL);
  sm_meta_set_num(&r->meta, SM_META_GPUS, 1 + i % 8, NULL);
  r->duration_s = 100 + i;
  r->end_state = SM_END_COMPLETED;
  sm_record_fingerprint(r);
}

static void writer(const char *path, const char *tag, int n, int report_fd) {
  sm_err err = {0};
  sm_store *s = sm_store_open(path, SM_STORE_CREATE, 10000, &err);
  if (s == NULL) {
    fprintf(stderr, "writer %s: %s\n", tag, err.msg);
    _exit(3);
  }
  for (int i = 0; i < n; i++) {
    sm_record r;
    char id[64];
    snprintf(id, sizeof(id), "%s-%d", tag, i);
    fill(&r, id, i);
    if (sm_store_put(s, &r, &err) != 0) {
      fprintf(stderr, "writer %s: %s\n", tag, err.msg);
      _exit(4);
    }
    sm_record_release(&r);
    if (report_fd >= 0) {
      /* Only after the commit returned: this id must survive. */
      char line[80];
      int len = snprintf(line, sizeof(line), "%s\n", id);
      if (write(report_fd, line, (size_t)len) != len)
        _exit(5);
    }
  }
  sm_store_close(s);
  _exit(0);
}

SM_TEST(sqlite_two_writers_lose_nothing) {
  char dir[] = "/tmp/sm_sqlc.XXXXXX", path[128];
  sm_err err = {0};
  sm_store *s;
  pid_t a, b;
  int st;
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/h.db", dir);
  s = sm_store_open(path, SM_STORE_CREATE, 0, &err);
  ASSERT(s != NULL);
  sm_store_close(s);
  if ((a = fork()) == 0)
    writer(path, "a", 150, -1);
  if ((b = fork()) == 0)
    writer(path, "b", 150, -1);
  ASSERT(waitpid(a, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ASSERT(waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  s = sm_store_open(path, 0, 0, &err);
  ASSERT(s != NULL);
  ASSERT_EQ(sm_store_count(s, &err), 300);
  sm_store_close(s);
  {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}

SM_TEST(sqlite_kill9_keeps_committed_records) {
  char dir[] = "/tmp/sm_sqlk.XXXXXX", path[128], rep[128];
  sm_err err = {0};
  sm_store *s;
  pid_t w;
  int fd, st, checked = 0;
  FILE *f;
  char line[80];
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/h.db", dir);
  snprintf(rep, sizeof(rep), "%s/committed", dir);
  fd = open(rep, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
  ASSERT(fd >= 0);
  if ((w = fork()) == 0)
    writer(path, "k", 1000000, fd);
  close(fd);
  /* Let it commit a good number of records, then kill it mid-stream. */
  for (int i = 0; i < 400; i++) {
    struct stat sb;
    if (stat(rep, &sb) == 0 && sb.st_size > 2000)
      break;
    usleep(10000);
  }
  kill(w, SIGKILL);
  ASSERT(waitpid(w, &st, 0) == w && WIFSIGNALED(st));
  s = sm_store_open(path, 0, 0, &err);
  if (s == NULL)
    SM_FAIL_AT("reopen after kill: %s", err.msg);
  f = fopen(rep, "r");
  ASSERT(f != NULL);
  while (fgets(line, sizeof(line), f)) {
    sm_record r;
    line[strcspn(line, "\n")] = '\0';
    sm_record_init(&r);
    if (sm_store_get(s, line, &r, &err) != 0)
      SM_FAIL_AT("committed record %s lost: %s", line, err.msg);
    sm_record_release(&r);
    checked++;
  }
  fclose(f);
  ASSERT(checked > 50);
  ASSERT(sm_store_count(s, &err) >= checked);
  sm_store_close(s);
  {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ASSERT_OK(system(cmd));
  }
}
