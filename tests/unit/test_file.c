/* test_file.c - bounded file access and the line readers, compared with a
 * naive split of the same bytes, including overlong lines and edge cases. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"

static char *write_tmp(const char *data, size_t n) {
  static char path[64];
  int fd;
  snprintf(path, sizeof(path), "/tmp/sm_test_file.XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, data, n), (ssize_t)n);
  close(fd);
  return path;
}

/* Splits like the readers do: on '\n'; a final newline ends the last line;
 * lines are cut to max bytes (the tail for reverse, the head forward). */
typedef struct line_ref {
  size_t off, len;
} line_ref;

static size_t naive_split(const char *d, size_t n, line_ref *out) {
  size_t k = 0, start = 0;
  for (size_t i = 0; i < n; i++)
    if (d[i] == '\n') {
      out[k].off = start;
      out[k].len = i - start;
      k++;
      start = i + 1;
    }
  if (start < n) {
    out[k].off = start;
    out[k].len = n - start;
    k++;
  }
  return k;
}

static void check_readers(const char *data, size_t n, size_t max_line) {
  char *path = write_tmp(data, n);
  sm_rfile f;
  sm_revlines rv;
  sm_fwdlines fw;
  sm_err err = {0};
  line_ref *want = calloc(n + 1, sizeof(line_ref));
  size_t nl = naive_split(data, n, want), k;
  const char *line;
  size_t len;
  uint64_t off;
  int trunc, rc;

  ASSERT_OK(sm_rfile_open(&f, path, &err));
  ASSERT_OK(sm_revlines_init(&rv, &f, 0, f.size, max_line, &err));
  k = nl;
  while ((rc = sm_revlines_next(&rv, &line, &len, &off, &trunc, &err)) == 1) {
    ASSERT(k > 0);
    k--;
    if (want[k].len > max_line) {
      ASSERT(trunc);
      ASSERT_EQ(len, max_line);
      ASSERT_EQ(off, want[k].off + want[k].len - max_line);
    } else {
      ASSERT(!trunc);
      ASSERT_EQ(len, want[k].len);
      ASSERT_EQ(off, want[k].off);
    }
    ASSERT(memcmp(line, data + off, len) == 0);
  }
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(k, 0);
  sm_revlines_release(&rv);

  ASSERT_OK(sm_fwdlines_init(&fw, &f, 0, UINT64_MAX, max_line, &err));
  k = 0;
  while ((rc = sm_fwdlines_next(&fw, &line, &len, &off, &trunc, &err)) == 1) {
    ASSERT(k < nl);
    ASSERT_EQ(off, want[k].off);
    ASSERT_EQ(len, want[k].len > max_line ? max_line : want[k].len);
    ASSERT_EQ(trunc, want[k].len > max_line);
    ASSERT(memcmp(line, data + off, len) == 0);
    k++;
  }
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(k, nl);
  sm_fwdlines_release(&fw);
  sm_rfile_close(&f);
  unlink(path);
  free(want);
}

SM_TEST(readers_simple_cases) {
  check_readers("", 0, 16);
  check_readers("\n", 1, 16);
  check_readers("a", 1, 16);
  check_readers("a\nb", 3, 16);
  check_readers("a\nb\n", 4, 16);
  check_readers("\n\n\nx\n\n", 6, 16);
  check_readers("abc\r\ndef\r\n", 10, 16);
}

SM_TEST(readers_random_files_cross_blocks) {
  sm_rng r;
  sm_rng_seed(&r, 11);
  for (int round = 0; round < 12; round++) {
    size_t n = (size_t)(sm_rng_next(&r) % 400000);
    size_t max_line = 1 + (size_t)(sm_rng_next(&r) % 3000);
    char *d = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
      uint64_t x = sm_rng_next(&r) % 1000;
      /* Mostly short lines, a few very long ones. */
      d[i] = x < (round % 3 == 0 ? 1 : 40) ? '\n' : (char)('a' + x % 26);
    }
    check_readers(d, n, max_line);
    free(d);
  }
}

SM_TEST(revlines_reads_only_the_tail) {
  size_t n = 8u << 20;
  char *d = malloc(n);
  char *path;
  sm_rfile f;
  sm_revlines rv;
  sm_err err = {0};
  const char *line;
  size_t len;
  for (size_t i = 0; i < n; i++)
    d[i] = (i % 100 == 99) ? '\n' : 'x';
  path = write_tmp(d, n);
  ASSERT_OK(sm_rfile_open(&f, path, &err));
  ASSERT_OK(sm_revlines_init(&rv, &f, 0, f.size, 0, &err));
  for (int i = 0; i < 10; i++)
    ASSERT_EQ(sm_revlines_next(&rv, &line, &len, NULL, NULL, &err), 1);
  ASSERT(f.nread <= 128 * 1024 + 1);
  sm_revlines_release(&rv);
  sm_rfile_close(&f);
  unlink(path);
  free(d);
}

/* What the reverse reader holds below its next line are the file's own
 * bytes, ending where that line ends; nothing before the first call. */
SM_TEST(revlines_held_is_the_window_below_the_next_line) {
  const char *d = "head one\nhead two\nstep 1\nstep 2\n";
  char *path = write_tmp(d, strlen(d));
  sm_rfile f;
  sm_revlines rv;
  sm_err err = {0};
  const char *line, *held;
  size_t len, n;
  uint64_t off, start;
  ASSERT_OK(sm_rfile_open(&f, path, &err));
  ASSERT_OK(sm_revlines_init(&rv, &f, 0, f.size, 0, &err));
  ASSERT(sm_revlines_held(&rv, &start, &n) == NULL);
  ASSERT_EQ(sm_revlines_next(&rv, &line, &len, &off, NULL, &err), 1);
  ASSERT_EQ(sm_revlines_next(&rv, &line, &len, &off, NULL, &err), 1);
  ASSERT_EQ(len, 6);
  ASSERT(memcmp(line, "step 1", 6) == 0);
  held = sm_revlines_held(&rv, &start, &n);
  ASSERT(held != NULL);
  ASSERT_EQ(start, 0);
  ASSERT(start + n <= off);
  ASSERT(n >= strlen("head one\nhead two"));
  ASSERT(memcmp(held, d, strlen("head one\nhead two")) == 0);
  sm_revlines_release(&rv);
  sm_rfile_close(&f);
  unlink(path);
}

SM_TEST(rfile_refuses_non_regular_files) {
  sm_rfile f;
  sm_err err = {0};
  char fifo[64] = "/tmp/sm_test_fifo.XXXXXX";
  ASSERT_EQ(sm_rfile_open(&f, "/tmp", &err), SM_EISDIR);
  ASSERT(strstr(err.msg, "/tmp: is a directory") != NULL);
  sm_err_clear(&err);
  ASSERT_EQ(sm_rfile_open(&f, "/nonexistent/x.log", &err), SM_ENOENT);
  ASSERT(strstr(err.msg, "/nonexistent/x.log") != NULL);
  sm_err_clear(&err);
  ASSERT_EQ(sm_rfile_open(&f, "/dev/null", &err), SM_ENOTREG);
  sm_err_clear(&err);
  ASSERT(mkdtemp(fifo) != NULL);
  strcat(fifo, "/p");
  ASSERT_OK(mkfifo(fifo, 0600));
  ASSERT_EQ(sm_rfile_open(&f, fifo, &err), SM_ENOTREG);
  ASSERT(strstr(err.msg, "FIFO") != NULL);
  unlink(fifo);
}

SM_TEST(read_all_respects_cap) {
  char *path = write_tmp("0123456789", 10);
  char *out;
  size_t len;
  sm_err err = {0};
  ASSERT_OK(sm_file_read_all(path, 10, &out, &len, &err));
  ASSERT_EQ(len, 10);
  ASSERT_STREQ(out, "0123456789");
  sm_free(out);
  ASSERT_EQ(sm_file_read_all(path, 9, &out, &len, &err), SM_ETOOBIG);
  ASSERT(out == NULL);
  unlink(path);
}
