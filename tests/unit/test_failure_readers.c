/* test_failure_readers.c - the line readers of src/util/file.c
 * (sm_revlines, sm_fwdlines) read every byte of the file once, also where
 * lines are far longer than the cap or the file has no newline at all:
 * what they read is compared with the file size, and the lines with a
 * naive split. */
#include <stdint.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"

static char *tmp_file(const char *data, size_t n) {
  static char path[64];
  int fd;

  snprintf(path, sizeof(path), "/tmp/sm_readers.XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  ASSERT_EQ(write(fd, data, n), (ssize_t)n);
  close(fd);
  return path;
}

/* Long lines (a dumped tensor, a progress bar without newlines) between
 * short ones. */
static char *long_lines(size_t n_long, size_t long_len, size_t *n) {
  size_t cap = n_long * (long_len + 64) + 64, k = 0;
  char *d = malloc(cap);

  for (size_t i = 0; i < n_long; i++) {
    k += (size_t)snprintf(d + k, cap - k, "step %zu loss 2.%03zu\n", i, i);
    for (size_t j = 0; j < long_len; j++)
      d[k++] = (char)('a' + (i + j) % 26);
    d[k++] = '\n';
  }
  *n = k;
  return d;
}

SM_TEST(readers_read_each_byte_once_with_long_lines) {
  size_t n, lines = 0;
  char *d = long_lines(60, 200000, &n);
  char *path = tmp_file(d, n);
  sm_rfile f;
  sm_revlines rv;
  sm_fwdlines fw;
  sm_err err = {0};
  const char *line;
  size_t len;
  uint64_t off;
  int cut, rc;

  ASSERT_OK(sm_rfile_open(&f, path, &err));
  ASSERT_OK(sm_revlines_init(&rv, &f, 0, f.size, 65536, &err));
  while ((rc = sm_revlines_next(&rv, &line, &len, &off, &cut, &err)) == 1) {
    ASSERT(memcmp(line, d + off, len) == 0);
    ASSERT(len <= 65536);
    lines++;
  }
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(lines, 120);
  /* Skipping the head of a cut line reads it once, and the line before
   * it is taken from what that read left, not read again. */
  ASSERT(f.nread <= n + 1);
  sm_revlines_release(&rv);

  f.nread = 0;
  lines = 0;
  ASSERT_OK(sm_fwdlines_init(&fw, &f, 0, UINT64_MAX, 65536, &err));
  while ((rc = sm_fwdlines_next(&fw, &line, &len, &off, &cut, &err)) == 1) {
    ASSERT(memcmp(line, d + off, len) == 0);
    lines++;
  }
  ASSERT_EQ(rc, 0);
  ASSERT_EQ(lines, 120);
  ASSERT(f.nread <= n);
  sm_fwdlines_release(&fw);
  sm_rfile_close(&f);
  unlink(path);
  free(d);
}

SM_TEST(readers_file_without_newlines) {
  size_t n = (size_t)24 << 20;
  char *d = malloc(n);
  char *path;
  sm_rfile f;
  sm_revlines rv;
  sm_fwdlines fw;
  sm_err err = {0};
  const char *line;
  size_t len;
  uint64_t off;
  int cut;

  for (size_t i = 0; i < n; i++)
    d[i] = i % 80 == 0 ? '\r' : (char)('0' + i % 10);
  path = tmp_file(d, n);
  ASSERT_OK(sm_rfile_open(&f, path, &err));
  /* Backwards: the last max_line bytes, flagged, then nothing; the rest
   * of the line is read once to find that no newline precedes it. */
  ASSERT_OK(sm_revlines_init(&rv, &f, 0, f.size, 1 << 20, &err));
  ASSERT_EQ(sm_revlines_next(&rv, &line, &len, &off, &cut, &err), 1);
  ASSERT(cut);
  ASSERT_EQ(len, 1 << 20);
  ASSERT_EQ(off, n - (1 << 20));
  ASSERT_EQ(sm_revlines_next(&rv, &line, &len, &off, &cut, &err), 0);
  ASSERT(f.nread <= n + 1);
  sm_revlines_release(&rv);
  /* Forwards: the head, then the end. */
  f.nread = 0;
  ASSERT_OK(sm_fwdlines_init(&fw, &f, 0, UINT64_MAX, 1 << 20, &err));
  ASSERT_EQ(sm_fwdlines_next(&fw, &line, &len, &off, &cut, &err), 1);
  ASSERT(cut);
  ASSERT_EQ(off, 0);
  ASSERT_EQ(sm_fwdlines_next(&fw, &line, &len, &off, &cut, &err), 0);
  ASSERT(f.nread <= n);
  sm_fwdlines_release(&fw);
  sm_rfile_close(&f);
  unlink(path);
  free(d);
}
