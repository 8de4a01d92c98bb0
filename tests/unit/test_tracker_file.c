/* test_tracker_file.c - the tracker on files: errors that name the file,
 * bad content, a cost that does not grow with the file, the look-back
 * budget, and following a file that grows, shrinks and is rotated. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_tracker.h"

/* A fresh temporary file name (the file exists, empty). */
static void tmpname(char *path) {
  int fd;
  strcpy(path, "/tmp/sm_track_test_XXXXXX");
  fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
}

static void write_file(const char *path, const char *mode, const char *text) {
  FILE *f = fopen(path, mode);
  ASSERT(f != NULL);
  ASSERT_EQ(fwrite(text, 1, strlen(text), f), strlen(text));
  ASSERT_OK(fclose(f));
}

static void progress_lines(const char *path, const char *mode, int from,
                           int to) {
  FILE *f = fopen(path, mode);
  ASSERT(f != NULL);
  for (int s = from; s <= to; s++)
    fprintf(f, "step=%d loss=%.4f lr=0.0003 step_time=0.50s\n", s,
            3.0 - s / 10000.0);
  ASSERT_OK(fclose(f));
}

SM_TEST(track_scan_errors_name_the_file) {
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  ASSERT_EQ(sm_tracker_scan(t, "/nonexistent/dir/train.log", &r, &e),
            SM_ENOENT);
  ASSERT(strstr(e.msg, "/nonexistent/dir/train.log") != NULL);
  sm_err_clear(&e);
  ASSERT_EQ(sm_tracker_scan(t, "/tmp", &r, &e), SM_EISDIR);
  ASSERT(strstr(e.msg, "/tmp") != NULL && strstr(e.msg, "directory"));
  sm_err_clear(&e);
  ASSERT(sm_tracker_poll(t, &r, &e) < 0); /* nothing open */
  sm_tracker_free(t);
}

SM_TEST(track_scan_empty_and_binary_files) {
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  FILE *f;
  sm_rng g;

  tmpname(path);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 0);
  ASSERT_EQ(r.bytes_read, 0);
  f = fopen(path, "w");
  sm_rng_seed(&g, 3);
  for (int i = 0; i < (1 << 20); i++)
    fputc((int)(sm_rng_next(&g) & 0xff), f);
  fclose(f);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT(r.bytes_read <= (1u << 20) + (64u << 10));
  /* Invalid UTF-8 in a progress line still gives valid JSON. */
  write_file(path, "w", "step=5 loss=1.0 lr=0.1 \xff\xfe\xc3\n");
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 5);
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_scan_reads_only_the_tail) {
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};

  tmpname(path);
  progress_lines(path, "w", 1, 200000); /* about 10 MB */
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 200000);
  ASSERT_NEAR(r.loss, 3.0 - 20.0, 1e-9);
  ASSERT_NEAR(r.step_time_s, 0.5, 1e-12);
  ASSERT(r.bytes_read < 256 * 1024); /* one 64 KiB block back, plus */
  /* The window's lines, its margin, and (no epoch printed) at most 512
   * lines more looked at only for an epoch head. */
  ASSERT(r.lines_scanned < 200 + 512);
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_scan_budget_and_unfinished_lines) {
  char path[64];
  sm_track_opts o = {0};
  sm_tracker *t;
  sm_track_result r;
  sm_err e = {0};
  FILE *f;

  tmpname(path);
  progress_lines(path, "w", 1, 20);
  f = fopen(path, "a");
  for (int i = 0; i < 60000; i++)
    fprintf(f, "node-1:1234:5678 [0] NCCL INFO Channel %02d/32 : 0 1 2 3\n",
            i % 32);
  fclose(f);
  o.max_scan = 1 << 20;
  t = sm_tracker_new(&o);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.ok, 0); /* progress only beyond the budget: not guessed */
  ASSERT_EQ(r.scan_limited, 1);
  ASSERT(r.bytes_read < 3u << 20);
  sm_tracker_free(t);

  /* The last line without a newline counts; a 4 MB line without one is
   * cut, and the lines before it still answer. */
  progress_lines(path, "w", 1, 30);
  write_file(path, "a", "step=31 loss=1.5 lr=0.1");
  t = sm_tracker_new(NULL);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 31);
  f = fopen(path, "a");
  fputc('\n', f);
  for (int i = 0; i < (4 << 20); i++)
    fputc('x', f);
  fclose(f);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 31);
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_scan_bar_without_newlines) {
  /* tqdm writing carriage returns only: one line of 10 MB.  The answer
   * comes from its tail; the line is not read back to its start. */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  FILE *f;

  tmpname(path);
  f = fopen(path, "w");
  for (int s = 1; s <= 120000; s++)
    fprintf(f,
            "\r %2d%%|#####     | %d/120000 [01:00<02:00, 12.%02dit/s, "
            "loss=%.4f]",
            s * 100 / 120000, s, s % 100, 3 - s / 100000.0);
  fclose(f);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 120000);
  ASSERT_EQ(r.total_steps, 120000);
  ASSERT_NEAR(r.loss, 1.8, 1e-9);
  ASSERT_EQ(r.samples, 10);
  ASSERT(r.bytes_read < (3u << 20) / 2);
  sm_tracker_free(t);
  unlink(path);
}

SM_TEST(track_follow_growth_truncation_rotation) {
  char path[64], rotated[80];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};
  uint64_t before;

  tmpname(path);
  progress_lines(path, "w", 1, 50);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 50);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 0); /* nothing new */

  /* Growth: only the new bytes are read. */
  before = r.bytes_read;
  progress_lines(path, "a", 51, 60);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 60);
  ASSERT(r.bytes_read - before < 1024);

  /* A half-written line waits for its end. */
  write_file(path, "a", "step=61 loss=1.");
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 0);
  write_file(path, "a", "5 lr=0.1\n");
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 61);
  ASSERT_NEAR(r.loss, 1.5, 1e-12);

  /* Truncated in place and written again: read from the start. */
  ASSERT_OK(truncate(path, 0));
  progress_lines(path, "a", 5000, 5003);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 5003);

  /* Truncated and written past the old offset before the next poll:
   * noticed by the changed bytes before the offset. */
  ASSERT_OK(truncate(path, 0));
  progress_lines(path, "a", 6000, 6009);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 6009);

  /* Rotated: the rest of the old file, then the new one. */
  snprintf(rotated, sizeof(rotated), "%s.1", path);
  progress_lines(path, "a", 5004, 5004);
  ASSERT_OK(rename(path, rotated));
  progress_lines(path, "w", 7000, 7002);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 7002);

  /* Gone for now: no error, no change. */
  unlink(path);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 0);
  ASSERT_EQ(r.step, 7002);
  sm_tracker_free(t);
  unlink(rotated);
}

SM_TEST(track_classify_file_counts_lines) {
  char path[64];
  uint64_t counts[SM_TRACK_NCLASSES], unknown, lines, bytes, total = 0;
  sm_err e = {0};

  tmpname(path);
  progress_lines(path, "w", 1, 100);
  write_file(path, "a", "Traceback (most recent call last):\nno newline");
  ASSERT_OK(
      sm_track_classify_file(path, NULL, counts, &unknown, &lines, &bytes, &e));
  ASSERT_EQ(lines, 102);
  for (int i = 0; i < SM_TRACK_NCLASSES; i++)
    total += counts[i];
  ASSERT_EQ(total + unknown, 102);
  ASSERT(counts[SM_TRACK_PROGRESS] >= 100);
  ASSERT(counts[SM_TRACK_ERROR] >= 1);
  ASSERT_EQ(sm_track_classify_file("/nonexistent", NULL, counts, &unknown,
                                   &lines, &bytes, &e),
            SM_ENOENT);
  unlink(path);
}

/* Size of a file in bytes. */
static uint64_t file_size(const char *path) {
  struct stat st;
  ASSERT_OK(stat(path, &st));
  return (uint64_t)st.st_size;
}

SM_TEST(track_bytes_read_never_exceed_the_file) {
  /* bytes_read is what the answer cost in reads: each byte of the file at
   * most once, whether the log ends with a newline or inside its last
   * line, and after a copytruncate only the new content's bytes. */
  const char *demo = "data/examples/train.log"; /* a tqdm run, 74,981 B */
  char path[64];
  sm_tracker *t = sm_tracker_new(NULL);
  sm_track_result r;
  sm_err e = {0};

  ASSERT_OK(sm_tracker_scan(t, demo, &r, &e));
  ASSERT_EQ(r.ok, 1);
  ASSERT(r.bytes_read > 0 && r.bytes_read <= file_size(demo));

  tmpname(path);
  progress_lines(path, "w", 1, 40);
  write_file(path, "a", "step=41 loss=2.9959 lr=0.0003 step_time=0.50s");
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.step, 41);
  ASSERT_EQ(r.bytes_read, file_size(path)); /* all of it, once */

  progress_lines(path, "w", 1, 400);
  ASSERT_OK(sm_tracker_scan(t, path, &r, &e));
  ASSERT_EQ(r.bytes_read, file_size(path));
  /* Truncated in place and written again, shorter: read from 0. */
  ASSERT_OK(truncate(path, 0));
  progress_lines(path, "a", 9000, 9100);
  ASSERT_EQ(sm_tracker_poll(t, &r, &e), 1);
  ASSERT_EQ(r.step, 9100);
  ASSERT_EQ(r.bytes_read, file_size(path));
  sm_tracker_free(t);
  unlink(path);
}
