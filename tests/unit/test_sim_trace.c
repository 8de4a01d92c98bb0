/* test_sim_trace.c - trace loaders on hand-written samples of every
 * layout (tests/data/sim/), cluster tables, and malformed input: missing
 * columns, negative durations, unsorted rows, non-numeric fields, short
 * rows, bad quotes, binary data, huge lines, truncated gzip, empty
 * files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "schedmate/sm_sim.h"
#include "sim/sim_int.h"

#define D(f) SM_TEST_DATA("sim/" f)

static sm_sim_trace *load(const char *path, const sm_sim_load_opts *o) {
  sm_sim_trace *t = NULL;
  sm_err err = {0};

  if (sm_sim_trace_load(path, o, &t, &err) != 0)
    SM_FAIL_AT("%s: %s", path, err.msg);
  return t;
}

static const sm_sim_job *by_id(const sm_sim_trace *t, const char *id) {
  for (size_t i = 0; i < sm_sim_trace_count(t); i++)
    if (strcmp(sm_sim_trace_job(t, i)->id, id) == 0)
      return sm_sim_trace_job(t, i);
  SM_FAIL_AT("no job %s", id);
  return NULL;
}

static int has_note(const sm_sim_trace *t, const char *s) {
  for (size_t i = 0; i < sm_sim_trace_note_count(t); i++)
    if (strstr(sm_sim_trace_note(t, i), s) != NULL)
      return 1;
  return 0;
}

/* Loads path expecting failure; returns the message. */
static const char *fails(const char *path, int code) {
  static sm_err err;
  sm_sim_trace *t = NULL;
  int rc;

  sm_err_clear(&err);
  rc = sm_sim_trace_load(path, NULL, &t, &err);
  if (rc == 0)
    SM_FAIL_AT("%s loaded but should fail", path);
  if (code != 0 && rc != code)
    SM_FAIL_AT("%s: code %d, expected %d (%s)", path, rc, code, err.msg);
  if (t != NULL)
    SM_FAIL_AT("%s: trace returned on failure", path);
  return err.msg;
}

static const char *fails_mem(const char *data, size_t len) {
  static sm_err err;
  sm_sim_trace *t = NULL;

  sm_err_clear(&err);
  if (sm_sim_trace_load_mem(data, len, "mem.csv", NULL, &t, &err) == 0)
    SM_FAIL_AT("memory trace loaded but should fail");
  return err.msg;
}

/* ==== Layouts ==== */

SM_TEST(sim_trace_helios_layout) {
  sm_sim_trace *t = load(D("helios_cluster_log.csv"), NULL);
  const sm_sim_job *j;

  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_HELIOS);
  ASSERT_EQ(sm_sim_trace_count(t), 6); /* the CPU job is skipped */
  ASSERT(has_note(t, "1 jobs without GPUs skipped"));
  j = sm_sim_trace_job(t, 0);
  ASSERT_STREQ(j->id, "9000001");
  ASSERT_NEAR(j->submit, 0, 0);
  ASSERT_NEAR(j->duration, 3600, 0);
  ASSERT_STREQ(j->user, "uAlice");
  ASSERT_STREQ(j->vc_name, "vcA");
  ASSERT_EQ(j->end_state, SM_SIM_END_COMPLETED);
  ASSERT_STREQ(sm_sim_job_attr(j, "cpu_num"), "4");
  j = by_id(t, "9000002");
  ASSERT_NEAR(j->submit, 30, 0);
  ASSERT_EQ(j->end_state, SM_SIM_END_FAILED);
  j = by_id(t, "9000004");
  ASSERT_EQ(j->gpus, 16);
  ASSERT_EQ(j->nodes, 2);
  ASSERT_EQ(j->end_state, SM_SIM_END_CANCELED);
  ASSERT_NEAR(j->submit, 120, 0);
  ASSERT_EQ(by_id(t, "9000005")->end_state, SM_SIM_END_FAILED); /* TIMEOUT */
  ASSERT_EQ(by_id(t, "9000006")->end_state, SM_SIM_END_FAILED); /* NODE_FAIL */
  ASSERT(sm_sim_job_attr(j, "queue") == NULL); /* known, not an attribute */
  sm_sim_trace_free(t);
}

SM_TEST(sim_trace_lucid_layout_with_estimates) {
  sm_sim_load_opts o;
  sm_sim_trace *t;
  const sm_sim_job *j;

  sm_sim_load_opts_init(&o);
  o.estimates = D("estimates.csv");
  t = load(D("lucid_cluster_log.csv"), &o);
  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_HELIOS);
  ASSERT_EQ(sm_sim_trace_count(t), 4);
  j = by_id(t, "503");
  ASSERT_STREQ(j->name, "bert, finetune");
  ASSERT_STREQ(sm_sim_job_attr(j, "model"), "BERT");
  ASSERT_STREQ(sm_sim_job_attr(j, "batchsize"), "32");
  ASSERT_STREQ(sm_sim_job_attr(j, "gmem"), "21000");
  ASSERT_NEAR(by_id(t, "501")->estimate, 4500, 0);
  ASSERT(isnan(by_id(t, "502")->estimate)); /* negative: ignored */
  ASSERT(isnan(j->estimate));
  ASSERT(has_note(t, "3 rows, 1 matched a job, 1 non-positive"));
  sm_sim_trace_free(t);
}

SM_TEST(sim_trace_acme_layouts) {
  sm_sim_trace *s = load(D("acme_trace_seren.csv"), NULL);
  sm_sim_trace *k = load(D("acme_trace_kalos.csv"), NULL);

  ASSERT_EQ(sm_sim_trace_format(s), SM_SIM_FMT_ACME);
  ASSERT_EQ(sm_sim_trace_count(s), 3);
  /* Offsets: 02:04 UTC is 10:04 +08:00, 240 s after the first job. */
  ASSERT_NEAR(by_id(s, "7100003")->submit, 180, 0);
  ASSERT_NEAR(by_id(s, "7100004")->submit, 240, 0);
  ASSERT_STREQ(sm_sim_job_attr(by_id(s, "7100001"), "type"), "Pretrain");
  ASSERT_EQ(by_id(s, "7100003")->gpus, 32);
  ASSERT_EQ(by_id(s, "7100003")->nodes, 4);
  ASSERT_EQ(sm_sim_trace_format(k), SM_SIM_FMT_ACME);
  ASSERT_EQ(sm_sim_trace_count(k), 3);
  ASSERT_EQ(by_id(k, "dlcaaaa00002")->end_state, SM_SIM_END_FAILED);
  ASSERT_EQ(by_id(k, "dlcaaaa00003")->end_state, SM_SIM_END_CANCELED);
  ASSERT_STREQ(sm_sim_job_attr(by_id(k, "dlcaaaa00001"), "mem_per_pod_GB"),
               "800");
  ASSERT(!has_note(k, "gpu_time")); /* consistent gpu_time column */
  sm_sim_trace_free(s);
  sm_sim_trace_free(k);
}

SM_TEST(sim_trace_tiresias_and_chronus) {
  sm_sim_trace *t = load(D("tiresias_jobs.csv"), NULL);
  sm_sim_trace *c = load(D("chronus_jobs.csv"), NULL);

  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_TIRESIAS);
  ASSERT_EQ(sm_sim_trace_count(t), 4);
  ASSERT_NEAR(by_id(t, "3")->submit, 75, 0);
  ASSERT_EQ(by_id(t, "3")->gpus, 8);
  ASSERT_STREQ(sm_sim_job_attr(by_id(t, "1"), "model_name"), "vgg16");
  ASSERT_STREQ(sm_sim_job_attr(by_id(t, "1"), "iterations"), "300");
  ASSERT_EQ(sm_sim_trace_format(c), SM_SIM_FMT_TIRESIAS);
  ASSERT(has_note(c, "not in submit order"));
  ASSERT_STREQ(sm_sim_trace_job(c, 0)->id, "1"); /* submitted first */
  ASSERT_STREQ(sm_sim_trace_job(c, 0)->user, "vc_bb22");
  ASSERT_NEAR(by_id(c, "0")->submit, 80, 0);
  ASSERT_STREQ(sm_sim_job_attr(by_id(c, "0"), "job_type"), "strict");
  sm_sim_trace_free(t);
  sm_sim_trace_free(c);
}

SM_TEST(sim_trace_sia_workload_durations) {
  sm_sim_load_opts o;
  sm_sim_trace *a, *b, *c;

  sm_sim_load_opts_init(&o);
  a = load(D("sia_workload.csv"), &o);
  b = load(D("sia_workload.csv"), &o);
  o.seed = 99;
  c = load(D("sia_workload.csv"), &o);
  ASSERT_EQ(sm_sim_trace_format(a), SM_SIM_FMT_SIA);
  ASSERT_EQ(sm_sim_trace_count(a), 5);
  ASSERT(has_note(a, "5 durations drawn"));
  /* cifar10: GPU time 60 s .. 1 h over 2 GPUs. */
  ASSERT(by_id(a, "cifar10-0")->duration >= 30);
  ASSERT(by_id(a, "cifar10-0")->duration <= 1800);
  /* imagenet: 100 .. 1000 GPU-hours over 16 GPUs. */
  ASSERT(by_id(a, "imagenet-2")->duration >= 22500);
  ASSERT(by_id(a, "imagenet-2")->duration <= 225000);
  ASSERT_STREQ(by_id(a, "bert-1")->name, "bert");
  ASSERT_STREQ(sm_sim_job_attr(by_id(a, "bert-1"), "application"), "bert");
  ASSERT_STREQ(sm_sim_job_attr(by_id(a, "bert-1"), "batch_size"), "96");
  ASSERT_NEAR(by_id(a, "bert-1")->submit, 38.5, 1e-9);
  for (size_t i = 0; i < 5; i++)
    ASSERT_NEAR(sm_sim_trace_job(a, i)->duration,
                sm_sim_trace_job(b, i)->duration, 0);
  {
    int differ = 0;
    for (size_t i = 0; i < 5; i++)
      differ |=
          sm_sim_trace_job(a, i)->duration != sm_sim_trace_job(c, i)->duration;
    ASSERT(differ);
  }
  sm_sim_trace_free(a);
  sm_sim_trace_free(b);
  sm_sim_trace_free(c);
}

SM_TEST(sim_trace_sia_philly_unsorted_and_window) {
  sm_sim_load_opts o;
  sm_sim_trace *t = load(D("sia_philly_sample.csv"), NULL), *w;

  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_SIA_PHILLY);
  ASSERT_EQ(sm_sim_trace_count(t), 5);
  ASSERT(has_note(t, "not in submit order"));
  ASSERT(has_note(t, "1 rows whose gpu_time differs"));
  /* Ties keep file order: line 3 before line 5. */
  ASSERT_EQ(sm_sim_trace_job(t, 0)->line, 3);
  ASSERT_EQ(sm_sim_trace_job(t, 1)->line, 5);
  ASSERT_STREQ(sm_sim_trace_job(t, 0)->vc_name, "bb2222");
  ASSERT_STREQ(sm_sim_trace_job(t, 0)->id, "L3");
  for (size_t i = 1; i < 5; i++)
    ASSERT(sm_sim_trace_job(t, i)->submit >=
           sm_sim_trace_job(t, i - 1)->submit);
  sm_sim_load_opts_init(&o);
  o.from = "2017-10-01 00:00:00";
  o.to = "2017-10-07 23:59:00";
  w = load(D("sia_philly_sample.csv"), &o);
  ASSERT_EQ(sm_sim_trace_count(w), 4);
  ASSERT(has_note(w, "4 jobs kept, 1 outside"));
  sm_sim_trace_free(w);
  o.limit = 2;
  w = load(D("sia_philly_sample.csv"), &o);
  ASSERT_EQ(sm_sim_trace_count(w), 2);
  sm_sim_trace_free(w);
  sm_sim_trace_free(t);
}

SM_TEST(sim_trace_generic_layout) {
  sm_sim_trace *t = load(D("generic.csv"), NULL);
  const sm_sim_job *j = by_id(t, "g2");

  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_GENERIC);
  ASSERT_EQ(sm_sim_trace_count(t), 4);
  ASSERT_STREQ(j->name, "imagenet, big");
  ASSERT_NEAR(j->duration, 200.5, 0);
  ASSERT_EQ(j->end_state, SM_SIM_END_FAILED);
  ASSERT(isnan(j->estimate));
  ASSERT_NEAR(by_id(t, "g4")->estimate, 60, 0);
  ASSERT_NEAR(by_id(t, "g3")->duration, 0, 0);
  ASSERT_STREQ(sm_sim_job_attr(by_id(t, "g4"), "model"), "gpt");
  ASSERT_STREQ(sm_sim_job_attr(by_id(t, "g3"), "model"), "");
  sm_sim_trace_free(t);
}

SM_TEST(sim_trace_gzip_file_and_memory) {
  char path[] = "/tmp/sm_sim_gz_XXXXXX";
  int fd = mkstemp(path);
  gzFile gz;
  char *data = NULL;
  size_t len = 0;
  sm_sim_trace *t;
  sm_err err = {0};
  const char *msg;

  ASSERT(fd >= 0);
  ASSERT_OK(sm_file_read_all(D("generic.csv"), 1 << 20, &data, &len, &err));
  gz = gzdopen(fd, "wb9");
  ASSERT(gz != NULL);
  ASSERT_EQ(gzwrite(gz, data, (unsigned)len), (int)len);
  ASSERT_EQ(gzclose(gz), Z_OK);
  t = load(path, NULL);
  ASSERT_EQ(sm_sim_trace_count(t), 4);
  ASSERT_STREQ(by_id(t, "g2")->name, "imagenet, big");
  sm_sim_trace_free(t);
  {
    char *gzdata = NULL;
    size_t gzlen = 0;
    ASSERT_OK(sm_file_read_all(path, 1 << 20, &gzdata, &gzlen, &err));
    ASSERT_OK(sm_sim_trace_load_mem(gzdata, gzlen, "mem.gz", NULL, &t, &err));
    ASSERT_EQ(sm_sim_trace_count(t), 4);
    sm_sim_trace_free(t);
    /* Truncated compressed data is refused, from memory and from disk. */
    msg = fails_mem(gzdata, gzlen / 2);
    ASSERT(strstr(msg, "gzip") != NULL);
    ASSERT_OK(truncate(path, (off_t)(gzlen / 2)));
    msg = fails(path, 0);
    ASSERT(strstr(msg, "gzip") != NULL);
    sm_free(gzdata);
  }
  unlink(path);
  sm_free(data);
}

SM_TEST(sim_trace_crlf_and_invalid_utf8) {
  const char *csv = "job_id,submit_s,duration_s,gpus,user\r\n"
                    "a,0,10,1,\xff\xfe bad\r\n"
                    "b,1,10,1,ok\r\n";
  sm_sim_trace *t = NULL;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;

  ASSERT_OK(
      sm_sim_trace_load_mem(csv, strlen(csv), "crlf.csv", NULL, &t, &err));
  ASSERT_EQ(sm_sim_trace_count(t), 2);
  ASSERT_STREQ(sm_sim_trace_job(t, 1)->user, "ok");
  /* Bytes are kept; JSON output replaces what is not UTF-8. */
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_str(&w, sm_sim_trace_job(t, 0)->user);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\xef\xbf\xbd") != NULL);
  sm_buf_release(&b);
  sm_sim_trace_free(t);
}

/* ==== Malformed traces ==== */

SM_TEST(sim_trace_bad_inputs_name_file_line_column) {
  const char *m;

  m = fails(D("bad_missing_column.csv"), SM_EPARSE);
  ASSERT(strstr(m, "bad_missing_column.csv:1: missing column 'duration'"));
  m = fails(D("bad_negative_duration.csv"), SM_EPARSE);
  ASSERT(strstr(m, "bad_negative_duration.csv:3: column 'duration_s' "
                   "(field 3): negative duration '-5'"));
  m = fails(D("bad_nonnumeric.csv"), SM_EPARSE);
  ASSERT(strstr(m, "bad_nonnumeric.csv:3: column 'gpu_num' (field 4)"));
  ASSERT(strstr(m, "'two'"));
  m = fails(D("bad_short_row.csv"), SM_EPARSE);
  ASSERT(strstr(m, ":3: expected 5 fields as in the header, found 3"));
  m = fails(D("bad_quote.csv"), SM_EPARSE);
  ASSERT(strstr(m, "bad_quote.csv:2: malformed quoted field"));
  m = fails(D("bad_header.csv"), SM_EPARSE);
  ASSERT(strstr(m, ":1: unrecognised trace header"));
  m = fails(D("bad_time.csv"), SM_EPARSE);
  ASSERT(strstr(m, ":3: column 'timestamp' (field 1): 'yesterday' is not "
                   "a time"));
  m = fails(D("bad_fractional_gpus.csv"), SM_EPARSE);
  ASSERT(strstr(m, ":2: column 'num_gpu'"));
  ASSERT(strstr(m, "whole number"));
  m = fails(D("empty.csv"), SM_EPARSE);
  ASSERT(strstr(m, "empty file"));
  m = fails(D("header_only.csv"), SM_EPARSE);
  ASSERT(strstr(m, "no GPU jobs"));
  m = fails(D("no_such_file.csv"), SM_ENOENT);
  ASSERT(strstr(m, "no_such_file.csv"));
  m = fails(SM_TEST_DATA("sim"), SM_EISDIR);
  ASSERT(strstr(m, "sim"));
}

SM_TEST(sim_trace_format_mismatch) {
  sm_sim_load_opts o;
  sm_sim_trace *t = NULL;
  sm_err err = {0};

  sm_sim_load_opts_init(&o);
  o.format = SM_SIM_FMT_SIA_PHILLY;
  ASSERT_EQ(sm_sim_trace_load(D("generic.csv"), &o, &t, &err), SM_EPARSE);
  ASSERT(strstr(err.msg, "missing column 'timestamp' (format sia-philly)"));
  ASSERT_EQ(sm_sim_format_parse("lucid"), SM_SIM_FMT_HELIOS);
  ASSERT_EQ(sm_sim_format_parse("chronus"), SM_SIM_FMT_TIRESIAS);
  ASSERT_EQ(sm_sim_format_parse("nope"), -1);
}

SM_TEST(sim_trace_binary_and_huge_line) {
  char bin[] = "job_id,submit_s,duration_s,gpus\na,0,1\0\0,1\n";
  char *huge;
  size_t n = 70000;
  const char *m;

  m = fails_mem(bin, sizeof(bin) - 1);
  ASSERT(strstr(m, "mem.csv:2: binary data"));
  huge = malloc(n + 64);
  strcpy(huge, "job_id,submit_s,duration_s,gpus\n");
  memset(huge + strlen(huge), 'x', n);
  huge[32 + n] = '\n';
  m = fails_mem(huge, 33 + n);
  ASSERT(strstr(m, "mem.csv:2: line longer than 65536 bytes"));
  free(huge);
  /* Random bytes never crash the loader. */
  {
    sm_rng r;
    char buf[512];
    sm_rng_seed(&r, 3);
    for (int k = 0; k < 200; k++) {
      sm_sim_trace *t = NULL;
      sm_err err = {0};
      size_t len = (size_t)(sm_rng_next(&r) % sizeof(buf));
      for (size_t i = 0; i < len; i++)
        buf[i] = (char)(sm_rng_next(&r) & 0xff);
      if (sm_sim_trace_load_mem(buf, len, "rnd", NULL, &t, &err) == 0)
        sm_sim_trace_free(t);
      else
        ASSERT(err.msg[0] != '\0');
    }
  }
}

/* ==== Times and fields ==== */

SM_TEST(sim_parse_time) {
  double v;

  ASSERT_OK(sm__parse_time("1970-01-01 00:00:00", &v));
  ASSERT_NEAR(v, 0, 0);
  ASSERT_OK(sm__parse_time("2017-10-01 00:00:00", &v));
  ASSERT_NEAR(v, 1506816000, 0);
  ASSERT_OK(sm__parse_time("2017-10-01T00:00:01.5Z", &v));
  ASSERT_NEAR(v, 1506816001.5, 1e-6);
  ASSERT_OK(sm__parse_time("2023-03-01 08:00:00+08:00", &v));
  ASSERT_NEAR(v, 1677628800, 0);
  ASSERT_OK(sm__parse_time("2020-02-29", &v));
  ASSERT_NEAR(v, 1582934400, 0);
  ASSERT_OK(sm__parse_time("12.5", &v));
  ASSERT_NEAR(v, 12.5, 0);
  ASSERT_EQ(sm__parse_time("2017-13-01 00:00:00", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("2017-10-01 25:00:00", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("2017-10-01 00:00:00 junk", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("nan", &v), SM_EPARSE);
  /* Only plain decimals: strtod would take all of these. */
  ASSERT_EQ(sm__parse_time("0x10", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("inf", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time(" 5", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time("1e", &v), SM_EPARSE);
  ASSERT_EQ(sm__parse_time(".", &v), SM_EPARSE);
  ASSERT_OK(sm__parse_time("-2.5e2", &v));
  ASSERT_NEAR(v, -250, 0);
  ASSERT_OK(sm__parse_time(".5", &v));
  ASSERT_NEAR(v, 0.5, 0);
}

/* A repeated column name, and numbers strtod reads but a trace should
 * not carry (hexadecimal, infinities), are refused with the file, the
 * line and the column. */
SM_TEST(sim_trace_duplicate_columns_and_hex_numbers) {
  static const struct {
    const char *csv, *want;
  } bad[] = {
      {"job_id,submit_s,duration_s,gpus,submit_s\na,0,10,1,5\n",
       "mem.csv:1: column 'submit_s' appears twice (fields 2 and 5)"},
      {"job_id,user,submit_s,duration_s,gpus,user\na,u,0,10,1,v\n",
       "mem.csv:1: column 'user' appears twice (fields 2 and 6)"},
      {"timestamp,duration,num_gpus,gpu_time,cluster,duration\n"
       "2017-10-01 00:00:00,10,1,10,a,10\n",
       "mem.csv:1: column 'duration' appears twice"},
      {"job_id,submit_s,duration_s,gpus\na,0,10,1\nb,0x10,10,1\n",
       "mem.csv:3: column 'submit_s' (field 2): '0x10' is not a time"},
      {"job_id,submit_s,duration_s,gpus\na,0,0x10,1\n",
       "mem.csv:2: column 'duration_s' (field 3): '0x10' is not a number"},
      {"job_id,submit_s,duration_s,gpus\na,0,10,0x2\n",
       "mem.csv:2: column 'gpus' (field 4): '0x2' is not a whole number"},
      {"job_id,submit_s,duration_s,gpus\na,0,infinity,1\n",
       "mem.csv:2: column 'duration_s' (field 3): 'infinity' is not a number"},
      {"job_id,submit_s,duration_s,gpus,estimate_s\na,0,10,1,0x1p4\n",
       "mem.csv:2: column 'estimate_s' (field 5): '0x1p4' is not a number"},
      {"timestamp,duration,num_gpus,gpu_time,cluster\n"
       "2017-10-01 00:00:00,10,1,0xa,a\n",
       "mem.csv:2: column 'gpu_time' (field 4): '0xa' is not a number"}};

  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    const char *m = fails_mem(bad[i].csv, strlen(bad[i].csv));
    if (strstr(m, bad[i].want) == NULL)
      SM_FAIL_AT("case %zu: '%s' lacks '%s'", i, m, bad[i].want);
  }
}

SM_TEST(sim_csv_split) {
  char a[] = " x , \"y, z\" ,\"q\"\"r\",";
  char b[] = "\"open";
  char c[] = "\"a\"b";
  char *f[8];

  ASSERT_EQ(sm__csv_split(a, f, 8), 4);
  ASSERT_STREQ(f[0], "x");
  ASSERT_STREQ(f[1], "y, z");
  ASSERT_STREQ(f[2], "q\"r");
  ASSERT_STREQ(f[3], "");
  ASSERT_EQ(sm__csv_split(b, f, 8), SM_EPARSE);
  ASSERT_EQ(sm__csv_split(c, f, 8), SM_EPARSE);
  {
    char d[] = "1,2,3";
    ASSERT_EQ(sm__csv_split(d, f, 2), SM_ETOOBIG);
  }
}

/* ==== Clusters ==== */

SM_TEST(sim_cluster_specs) {
  sm_sim_cluster *c = NULL;
  sm_err err = {0};

  ASSERT_OK(sm_sim_cluster_parse("64x8", &c, &err));
  ASSERT_EQ(sm_sim_cluster_gpus(c), 512);
  ASSERT_EQ(sm_sim_cluster_vc_count(c), 1);
  ASSERT_STREQ(sm_sim_cluster_describe(c), "64 nodes x 8 GPUs");
  sm_sim_cluster_free(c);
  ASSERT_OK(sm_sim_cluster_parse("a=4x8,b=2x4,a=1x8", &c, &err));
  ASSERT_EQ(sm_sim_cluster_vc_count(c), 2);
  ASSERT_EQ(sm_sim_cluster_vc_gpus(c, 0), 40);
  ASSERT_EQ(sm_sim_cluster_vc_gpus(c, 1), 8);
  ASSERT_EQ(sm_sim_cluster_nodes(c), 7);
  sm_sim_cluster_free(c);
  ASSERT_OK(sm_sim_cluster_parse("2x8:a100@1.5,1x4:v100", &c, &err));
  ASSERT(strstr(sm_sim_cluster_describe(c), "a100@1.5") != NULL);
  sm_sim_cluster_free(c);
  ASSERT_EQ(sm_sim_cluster_parse("", &c, &err), SM_EINVAL);
  ASSERT_EQ(sm_sim_cluster_parse("8", &c, &err), SM_EINVAL);
  ASSERT_EQ(sm_sim_cluster_parse("0x8", &c, &err), SM_EINVAL);
  ASSERT_EQ(sm_sim_cluster_parse("2x8:t@-1", &c, &err), SM_EINVAL);
  ASSERT_EQ(sm_sim_cluster_parse("a=1x8,2x8", &c, &err), SM_EINVAL);
  ASSERT_EQ(sm_sim_cluster_parse("1x8:t@1,1x8:t@2", &c, &err), SM_EINVAL);
}

SM_TEST(sim_cluster_vc_tables) {
  sm_sim_cluster *c = NULL;
  sm_err err = {0};

  ASSERT_OK(sm_sim_cluster_load_vcs(D("vcs_helios.csv"), 8, &c, &err));
  ASSERT_EQ(sm_sim_cluster_vc_count(c), 2);
  ASSERT_EQ(sm_sim_cluster_gpus(c), 40);
  ASSERT_STREQ(sm_sim_cluster_vc_name(c, 1), "vcB");
  sm_sim_cluster_free(c);
  ASSERT_OK(sm_sim_cluster_load_vcs(D("vcs_lucid.csv"), 8, &c, &err));
  ASSERT_EQ(sm_sim_cluster_gpus(c), 24);
  sm_sim_cluster_free(c);
  ASSERT_OK(sm_sim_cluster_load_vcs(D("vcs_typed.csv"), 8, &c, &err));
  ASSERT_EQ(sm_sim_cluster_vc_count(c), 2); /* the empty VC is skipped */
  ASSERT_EQ(sm_sim_cluster_gpus(c), 32);
  ASSERT(strstr(sm_sim_cluster_describe(c), "v100@0.7") != NULL);
  sm_sim_cluster_free(c);
  ASSERT_EQ(sm_sim_cluster_load_vcs(D("generic.csv"), 8, &c, &err), SM_EPARSE);
  ASSERT(strstr(err.msg, "expected a VC table") != NULL);
}

SM_TEST(sim_cluster_auto_size) {
  sm_sim_trace *t = load(D("tiresias_jobs.csv"), NULL);
  sm_sim_cluster *c = NULL;
  sm_err err = {0};

  /* GPU-seconds 2*400 + 4*250 + 90 + 8*600 = 6690 over the span to the
   * last job's end at 675 s: 6690 / 675 / 8 / 0.5 = 2.5 -> 3 nodes. */
  ASSERT_OK(sm_sim_cluster_auto(t, 8, 0.5, &c, &err));
  ASSERT_EQ(sm_sim_cluster_nodes(c), 3);
  sm_sim_cluster_free(c);
  /* Never smaller than the largest job: 8 GPUs on 4-GPU nodes. */
  ASSERT_OK(sm_sim_cluster_auto(t, 4, 1.0, &c, &err));
  ASSERT(sm_sim_cluster_nodes(c) >= 2);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
}
