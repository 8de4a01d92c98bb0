/* test_safe_open.c - opening files on a user's behalf (sm_open_path) and
 * beneath a root (sm_open_beneath): kinds that must never be opened, links
 * that stay inside and links that leave, loops, and a rename race, each
 * with openat2 and with the per-component fallback. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"

/* Test hook of file.c: 1 forces the per-component walk (as on a kernel
 * without openat2), 0 restores detection.  Returns the previous value. */
int sm__open_force_walk(int on);

static char base[1024];     /* scratch directory of this test */
static char root[PATH_MAX]; /* base/root, the root the tests open beneath */

static void mkfile(const char *rel, const char *text) {
  char p[PATH_MAX * 2];
  FILE *f;
  snprintf(p, sizeof(p), "%s/%s", base, rel);
  f = fopen(p, "w");
  ASSERT(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void mkdirs(const char *rel) {
  char p[PATH_MAX * 2];
  snprintf(p, sizeof(p), "%s/%s", base, rel);
  ASSERT_OK(mkdir(p, 0755));
}

static void mklink(const char *target, const char *rel) {
  char p[PATH_MAX * 2];
  snprintf(p, sizeof(p), "%s/%s", base, rel);
  ASSERT_OK(symlink(target, p));
}

/* base/root/{a/b/c.yaml,fifo,dir}, base/outside.yaml, base/outdir/c.yaml */
static int setup(void) {
  char tmpl[] = "/tmp/sm_safe_open.XXXXXX";
  ASSERT(mkdtemp(tmpl) != NULL);
  {
    char real[PATH_MAX];
    ASSERT(realpath(tmpl, real) != NULL && strlen(real) < sizeof(base));
    memcpy(base, real, strlen(real) + 1);
  }
  snprintf(root, sizeof(root), "%s/root", base);
  mkdirs("root");
  mkdirs("root/a");
  mkdirs("root/a/b");
  mkfile("root/a/b/c.yaml", "inside\n");
  mkfile("outside.yaml", "outside\n");
  mkdirs("outdir");
  mkfile("outdir/c.yaml", "outside\n");
  {
    char p[PATH_MAX * 2];
    snprintf(p, sizeof(p), "%s/root/fifo", base);
    ASSERT_OK(mkfifo(p, 0644));
  }
  {
    int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT(fd >= 0);
    return fd;
  }
}

static void teardown(int rfd) {
  char cmd[PATH_MAX + 16];
  close(rfd);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
  ASSERT_OK(system(cmd));
}

/* Reads what an open descriptor holds (first line). */
static void read_fd(int fd, char *out, size_t cap) {
  ssize_t n = read(fd, out, cap - 1);
  ASSERT(n >= 0);
  out[n] = '\0';
  close(fd);
}

static void expect_inside(int rfd, const char *rel, int flags) {
  struct stat st;
  sm_err err = {0};
  char text[64];
  int fd = sm_open_beneath(rfd, root, rel, flags, &st, &err);
  if (fd < 0)
    SM_FAIL_AT("%s: %s", rel, err.msg);
  ASSERT(S_ISREG(st.st_mode));
  read_fd(fd, text, sizeof(text));
  ASSERT_STREQ(text, "inside\n");
}

static void expect_code(int rfd, const char *rel, int flags, int code) {
  sm_err err = {0};
  int fd = sm_open_beneath(rfd, root, rel, flags, NULL, &err);
  if (fd >= 0) {
    close(fd);
    SM_FAIL_AT("%s: opened, expected %s", rel, sm_errname(code));
  }
  if (fd != code)
    SM_FAIL_AT("%s: %s (%s), expected %s", rel, sm_errname(fd), err.msg,
               sm_errname(code));
  ASSERT(strstr(err.msg, rel) != NULL); /* the message names the path */
}

/* ==== sm_open_path ==== */

static void path_kinds(void) {
  int rfd = setup();
  char p[PATH_MAX * 2], text[64];
  struct stat st;
  sm_err err = {0};
  int fd, s;
  struct sockaddr_un sa = {0};

  snprintf(p, sizeof(p), "%s/root/a/b/c.yaml", base);
  fd = sm_open_path(p, SM_OPEN_FILE, &st, &err);
  ASSERT(fd >= 0);
  ASSERT_EQ(st.st_size, 7);
  ASSERT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  read_fd(fd, text, sizeof(text));
  ASSERT_STREQ(text, "inside\n");
  /* The user's own path may go through links. */
  mklink("root/a/b/c.yaml", "userlink");
  snprintf(p, sizeof(p), "%s/userlink", base);
  fd = sm_open_path(p, SM_OPEN_FILE, NULL, &err);
  ASSERT(fd >= 0);
  close(fd);
  /* A FIFO (without a writer: a plain open would block), a socket, a
   * device and a directory are refused by name. */
  snprintf(p, sizeof(p), "%s/root/fifo", base);
  ASSERT_EQ(sm_open_path(p, SM_OPEN_FILE, NULL, &err), SM_ENOTREG);
  ASSERT(strstr(err.msg, "FIFO") && strstr(err.msg, p));
  sm_err_clear(&err);
  ASSERT_EQ(sm_open_path("/dev/null", SM_OPEN_FILE, NULL, &err), SM_ENOTREG);
  ASSERT(strstr(err.msg, "device"));
  sm_err_clear(&err);
  snprintf(p, sizeof(p), "%s/sock", base);
  s = socket(AF_UNIX, SOCK_STREAM, 0);
  sa.sun_family = AF_UNIX;
  ASSERT(strlen(p) < sizeof(sa.sun_path));
  memcpy(sa.sun_path, p, strlen(p) + 1);
  ASSERT_OK(bind(s, (struct sockaddr *)&sa, sizeof(sa)));
  ASSERT_EQ(sm_open_path(p, SM_OPEN_FILE, NULL, &err), SM_ENOTREG);
  ASSERT(strstr(err.msg, "socket"));
  close(s);
  sm_err_clear(&err);
  ASSERT_EQ(sm_open_path(root, SM_OPEN_FILE, NULL, &err), SM_EISDIR);
  sm_err_clear(&err);
  fd = sm_open_path(root, SM_OPEN_DIR, &st, &err);
  ASSERT(fd >= 0 && S_ISDIR(st.st_mode));
  close(fd);
  snprintf(p, sizeof(p), "%s/missing.log", base);
  ASSERT_EQ(sm_open_path(p, SM_OPEN_FILE, NULL, &err), SM_ENOENT);
  ASSERT(strstr(err.msg, "missing.log"));
  /* The readers use it too: a FIFO as a log or a config fails at once. */
  {
    sm_rfile f;
    char *data;
    snprintf(p, sizeof(p), "%s/root/fifo", base);
    sm_err_clear(&err);
    ASSERT_EQ(sm_rfile_open(&f, p, &err), SM_ENOTREG);
    sm_err_clear(&err);
    ASSERT_EQ(sm_file_read_all(p, 100, &data, NULL, &err), SM_ENOTREG);
    sm_err_clear(&err);
    ASSERT(sm_file_fopen(p, &err) == NULL);
    ASSERT_EQ(err.code, SM_ENOTREG);
  }
  teardown(rfd);
}

SM_TEST(open_path_refuses_fifo_socket_device_dir) {
  path_kinds();
  sm__open_force_walk(1);
  path_kinds();
}

/* ==== sm_open_beneath ==== */

static void beneath_links(void) {
  int rfd = setup();
  char abs[PATH_MAX * 2];

  expect_inside(rfd, "a/b/c.yaml", SM_OPEN_FILE);
  expect_inside(rfd, "./a//b/./c.yaml", SM_OPEN_FILE);
  /* Links that stay inside are followed: relative, with "..", to a
   * directory, absolute through the root's real path, and chains. */
  mklink("a/b", "root/l_dir");
  mklink("../a/b/c.yaml", "root/a/l_up");
  snprintf(abs, sizeof(abs), "%s/a/b/c.yaml", root);
  mklink(abs, "root/l_abs");
  mklink("l_dir/c.yaml", "root/l_chain1");
  mklink("l_chain1", "root/l_chain2");
  expect_inside(rfd, "l_dir/c.yaml", SM_OPEN_FILE | SM_OPEN_FOLLOW);
  expect_inside(rfd, "a/l_up", SM_OPEN_FILE | SM_OPEN_FOLLOW);
  expect_inside(rfd, "l_abs", SM_OPEN_FILE | SM_OPEN_FOLLOW);
  expect_inside(rfd, "l_chain2", SM_OPEN_FILE | SM_OPEN_FOLLOW);
  /* Without SM_OPEN_FOLLOW a link is refused. */
  expect_code(rfd, "l_dir/c.yaml", SM_OPEN_FILE, SM_EESCAPE);
  /* Links and paths that leave: refused, whatever is behind them. */
  mklink("/etc/passwd", "root/l_etc");
  mklink("/etc", "root/a/l_etcdir");
  mklink("../outside.yaml", "root/l_out");
  mklink("../../../outdir", "root/a/b/l_outdir");
  mklink("l_out", "root/l_outchain");
  mklink("/nonexistent/x", "root/l_dangling");
  expect_code(rfd, "l_etc", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  expect_code(rfd, "a/l_etcdir/passwd", SM_OPEN_FILE | SM_OPEN_FOLLOW,
              SM_EESCAPE);
  expect_code(rfd, "l_out", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  expect_code(rfd, "a/b/l_outdir/c.yaml", SM_OPEN_FILE | SM_OPEN_FOLLOW,
              SM_EESCAPE);
  expect_code(rfd, "l_outchain", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  expect_code(rfd, "l_dangling", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  expect_code(rfd, "a/../../outside.yaml", SM_OPEN_FILE | SM_OPEN_FOLLOW,
              SM_EESCAPE);
  expect_code(rfd, "/etc/passwd", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  expect_code(rfd, "..", SM_OPEN_DIR | SM_OPEN_FOLLOW, SM_EESCAPE);
  /* An absolute path inside the root is taken relative to it. */
  expect_inside(rfd, abs, SM_OPEN_FILE | SM_OPEN_FOLLOW);
  teardown(rfd);
}

SM_TEST(open_beneath_follows_links_inside_refuses_links_out) {
  beneath_links();
  sm__open_force_walk(1);
  beneath_links();
}

static void beneath_kinds(void) {
  int rfd = setup();
  struct stat st;
  sm_err err = {0};
  int fd;

  mklink("l_loop2", "root/l_loop1");
  mklink("l_loop1", "root/l_loop2");
  mklink("fifo", "root/l_fifo");
  expect_code(rfd, "l_loop1", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_ELIMIT);
  expect_code(rfd, "fifo", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_ENOTREG);
  expect_code(rfd, "l_fifo", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_ENOTREG);
  expect_code(rfd, "a", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EISDIR);
  expect_code(rfd, "a/b/c.yaml/x", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_ENOENT);
  expect_code(rfd, "a/nope.yaml", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_ENOENT);
  expect_code(rfd, "a/b/c.yaml", SM_OPEN_DIR | SM_OPEN_FOLLOW, SM_ENOENT);
  /* A directory comes back as a descriptor to open beneath again. */
  fd = sm_open_beneath(rfd, root, "a", SM_OPEN_DIR | SM_OPEN_FOLLOW, &st, &err);
  ASSERT(fd >= 0 && S_ISDIR(st.st_mode));
  {
    int f2 = sm_open_beneath(fd, NULL, "b/c.yaml", SM_OPEN_FILE, NULL, &err);
    char text[64];
    ASSERT(f2 >= 0);
    read_fd(f2, text, sizeof(text));
    ASSERT_STREQ(text, "inside\n");
    /* Without a root path, ".." above this directory is refused. */
    expect_code(fd, "../a/b/c.yaml", SM_OPEN_FILE | SM_OPEN_FOLLOW, SM_EESCAPE);
  }
  close(fd);
  /* A probe opens nothing for reading; with SM_OPEN_LINK it sees a final
   * link itself, else what the link names. */
  fd = sm_open_beneath(rfd, root, "l_fifo", SM_OPEN_PROBE | SM_OPEN_LINK, &st,
                       &err);
  ASSERT(fd >= 0 && S_ISLNK(st.st_mode));
  close(fd);
  fd = sm_open_beneath(rfd, root, "l_fifo", SM_OPEN_PROBE | SM_OPEN_FOLLOW, &st,
                       &err);
  ASSERT(fd >= 0 && S_ISFIFO(st.st_mode));
  close(fd);
  fd = sm_open_beneath(rfd, root, "fifo", SM_OPEN_PROBE, &st, &err);
  ASSERT(fd >= 0 && S_ISFIFO(st.st_mode));
  close(fd);
  mkdirs("root/a/lnkdir");
  mklink("../lnkdir", "root/a/b/l_up_dir");
  fd = sm_open_beneath(rfd, root, "a/b/l_up_dir", SM_OPEN_PROBE | SM_OPEN_LINK,
                       &st, &err);
  ASSERT(fd >= 0 && S_ISLNK(st.st_mode));
  close(fd);
  /* A link out as the last component is seen, not followed. */
  fd =
      sm_open_beneath(rfd, root, "l_etc_last",
                      SM_OPEN_PROBE | SM_OPEN_LINK | SM_OPEN_FOLLOW, &st, &err);
  ASSERT(fd == SM_ENOENT);
  sm_err_clear(&err);
  mklink("/etc/passwd", "root/l_etc_last");
  fd =
      sm_open_beneath(rfd, root, "l_etc_last",
                      SM_OPEN_PROBE | SM_OPEN_LINK | SM_OPEN_FOLLOW, &st, &err);
  ASSERT(fd >= 0 && S_ISLNK(st.st_mode));
  close(fd);
  /* Over-long paths and components. */
  {
    char longp[PATH_MAX + 64];
    memset(longp, 'x', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    fd = sm_open_beneath(rfd, root, longp, SM_OPEN_FILE, NULL, &err);
    ASSERT(fd < 0);
    sm_err_clear(&err);
    for (size_t i = 1; i + 1 < sizeof(longp); i += 2)
      longp[i] = '/';
    fd = sm_open_beneath(rfd, root, longp, SM_OPEN_FILE, NULL, &err);
    ASSERT(fd < 0);
  }
  teardown(rfd);
}

SM_TEST(open_beneath_kinds_loops_and_probes) {
  beneath_kinds();
  sm__open_force_walk(1);
  beneath_kinds();
}

/* ==== The rename race ==== */

typedef struct swapper {
  char a[PATH_MAX * 2], b[PATH_MAX * 2]; /* exchanged again and again */
  atomic_int stop;                       /* set by the main thread */
  long swaps;                            /* exchanges done */
} swapper;

static void *swap_loop(void *arg) {
  swapper *s = arg;
  while (!atomic_load(&s->stop))
    if (renameat2(AT_FDCWD, s->a, AT_FDCWD, s->b, RENAME_EXCHANGE) == 0)
      s->swaps++;
  return NULL;
}

/* root/cfg is a directory and root/cfg_x a link to the outside directory;
 * a thread exchanges them while cfg/c.yaml is opened.  Every open must
 * give the inside file or a refusal, never the outside one. */
static void race(void) {
  int rfd = setup();
  swapper sw = {0};
  pthread_t th;
  long inside = 0, refused = 0, outside = 0;
  double t0 = sm_now();

  mkdirs("root/cfg");
  mkfile("root/cfg/c.yaml", "inside\n");
  {
    char target[PATH_MAX * 2];
    snprintf(target, sizeof(target), "%s/outdir", base);
    mklink(target, "root/cfg_x");
  }
  snprintf(sw.a, sizeof(sw.a), "%s/cfg", root);
  snprintf(sw.b, sizeof(sw.b), "%s/cfg_x", root);
  ASSERT_OK(pthread_create(&th, NULL, swap_loop, &sw));
  for (int i = 0; i < 20000 && sm_now() - t0 < 3.0; i++) {
    sm_err err = {0};
    int fd = sm_open_beneath(rfd, root, "cfg/c.yaml",
                             SM_OPEN_FILE | SM_OPEN_FOLLOW, NULL, &err);
    if (fd >= 0) {
      char text[64];
      read_fd(fd, text, sizeof(text));
      if (strcmp(text, "inside\n") == 0)
        inside++;
      else
        outside++;
    } else {
      refused++;
    }
  }
  atomic_store(&sw.stop, 1);
  pthread_join(th, NULL);
  fprintf(stderr, "  race: %ld inside, %ld refused, %ld outside, %ld swaps\n",
          inside, refused, outside, sw.swaps);
  ASSERT_EQ(outside, 0);
  ASSERT(inside > 0);
  ASSERT(sw.swaps > 0);
  teardown(rfd);
}

SM_TEST(open_beneath_rename_race_never_escapes) {
  race();
  sm__open_force_walk(1);
  race();
}
