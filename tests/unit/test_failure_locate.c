/* test_failure_locate.c - the bisecting locator on long logs built in
 * memory: thousands of normal training lines with decoys (warnings,
 * "error_rate" metrics, NCCL plugin notices, loss-scale overflows) around
 * the hand-written fixture failures of tests/data/failure, and the cases
 * where the "clean, then failing" assumption breaks. */
#include "failure/failure_int.h"
#include "harness.h"

/* Root-cause lines of the fixtures used here (tests/data/failure/
 * expected.jsonl). */
#define ECC_LOG "gpu_ecc_deepspeed.log"
#define ECC_LINE 21
#define OOM_LOG "cuda_oom_fsdp.log"
#define OOM_LINE 14
#define IB_LOG "ib_retry_exceeded.log"
#define IB_LINE 8

typedef struct gen {
  sm_buf b;   /* the log */
  long lines; /* lines so far */
  sm_rng rng; /* values */
  long step;  /* training step */
} gen;

static void gen_init(gen *g, uint64_t seed) {
  sm_buf_init(&g->b, (size_t)1 << 30);
  g->lines = 0;
  g->step = 0;
  sm_rng_seed(&g->rng, seed);
}

static void line(gen *g, const char *fmt, ...) SM_PRINTF(2, 3);
static void line(gen *g, const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  if (sm_buf_vaddf(&g->b, fmt, ap) != 0 || sm_buf_addc(&g->b, '\n') != 0)
    SM_FAIL_AT("generator out of memory");
  va_end(ap);
  g->lines++;
}

static const char *const decoys[] = {
    "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:429: "
    "UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True "
    "or use_reentrant=False explicitly.",
    "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to "
    "32768.0",
    "gpu-a01:1201:1301 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: "
    "cannot open shared object file: No such file or directory",
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to "
    "[gpu-a01]:29500 (errno: 99 - Cannot assign requested address).",
    "wandb: Network error (ConnectionError), entering retry loop.",
    "skipping corrupted image /data/train/n01/n01_3.JPEG (cannot identify "
    "image file)",
    "[2024-05-02 10:11:12,001] [INFO] [fused_optimizer.py:344:_update_scale] "
    "Grad overflow on iteration 1212",
};

/* Normal training output: several shapes, decoys now and then. */
static void gen_normal(gen *g, long n) {
  for (long i = 0; i < n; i++) {
    double loss = 2.0 + sm_rng_uniform(&g->rng);
    int k = (int)(sm_rng_next(&g->rng) % 100);
    g->step++;
    if (k < 2) {
      line(g, "%s", decoys[sm_rng_next(&g->rng) % SM_ARRAY_LEN(decoys)]);
    } else if (k < 35) {
      line(g,
           "[2024-05-02 10:%02ld:%02ld,%03ld] [INFO] step %ld | loss %.4f |"
           " lr %.2e | grad_norm %.3f | %.1f ms/step",
           g->step / 60 % 60, g->step % 60, g->step % 1000, g->step, loss,
           3e-4 * sm_rng_uniform(&g->rng), sm_rng_uniform(&g->rng) + 0.5,
           400 + 20 * sm_rng_uniform(&g->rng));
    } else if (k < 60) {
      line(g,
           " iteration %8ld/ 1000000 | consumed samples: %10ld | elapsed "
           "time per iteration (ms): %.1f | learning rate: %.3E | lm "
           "loss: %.6E | loss scale: 65536.0 | grad norm: %.3f |",
           g->step, g->step * 512, 1400 + 20 * sm_rng_uniform(&g->rng), 3e-4,
           loss, sm_rng_uniform(&g->rng) + 0.4);
    } else if (k < 75) {
      line(g,
           "{'loss': %.4f, 'grad_norm': %.3f, 'learning_rate': %.2e, "
           "'epoch': %.2f}",
           loss, sm_rng_uniform(&g->rng), 2e-5, (double)g->step / 5000);
    } else if (k < 85) {
      line(g, "[rank%ld]: step %ld loss %.4f tokens/s %.0f", g->step % 8,
           g->step, loss, 38000 + 1000 * sm_rng_uniform(&g->rng));
    } else if (k < 92) {
      line(g,
           "eval: step %ld error_rate %.4f top1_error %.2f "
           "mean_squared_error %.4f",
           g->step, sm_rng_uniform(&g->rng) / 2, 30 * sm_rng_uniform(&g->rng),
           sm_rng_uniform(&g->rng) / 10);
    } else {
      line(g,
           "Epoch %ld:  %ld%%|####      | %ld/10000 [%02ld:%02ld<11:02, "
           " 3.3%ldit/s, loss=%.3f]",
           g->step / 10000, g->step % 100, g->step % 10000, g->step / 60 % 60,
           g->step % 60, g->step % 10, loss);
    }
  }
}

/* Appends a fixture; returns the line number its first line gets. */
static long gen_file(gen *g, const char *name) {
  char path[256], *text;
  size_t len;
  sm_err err = {0};
  long first = g->lines + 1;

  snprintf(path, sizeof(path), "tests/data/failure/%s", name);
  if (sm_file_read_all(path, (size_t)1 << 20, &text, &len, &err) != 0)
    SM_FAIL_AT("%s", err.msg);
  if (sm_buf_add(&g->b, text, len) != 0)
    SM_FAIL_AT("generator out of memory");
  g->lines += (long)sm__count_newlines(text, len);
  if (len > 0 && text[len - 1] != '\n') {
    sm_buf_addc(&g->b, '\n');
    g->lines++;
  }
  sm_free(text);
  return first;
}

/* What hung ranks print after a fault: heartbeats between watchdog
 * reports, never more than 40 quiet lines in a row. */
static void gen_after_fault(gen *g, long n) {
  long i = 0;
  while (i < n) {
    for (int k = 0; k < 30 && i < n; k++, i++)
      line(g, "heartbeat: rank %ld waiting in allreduce SeqNum=%ld for %ld s",
           i % 16, 4412 + i / 64, i / 3);
    for (int k = 0; k < 3 && i < n; k++, i++)
      line(g,
           "[rank%ld]:[E ProcessGroupNCCL.cpp:563] [Rank %ld] Watchdog "
           "caught collective operation timeout: WorkNCCL(SeqNum=%ld, "
           "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600%03ld "
           "milliseconds before timing out.",
           i % 16, i % 16, 4412 + i / 64, i % 1000);
  }
}

static void diagnose(gen *g, sm_diag_mode mode, long tail, sm_diagnosis *d) {
  sm_sigdb *db = sm_sigdb_new();
  sm_diag_opts o = {0};
  sm_err err = {0};

  if (sm_sigdb_load_builtin(db, &err) != 0)
    SM_FAIL_AT("%s", err.msg);
  o.mode = mode;
  o.tail_lines = tail;
  if (sm_diagnose_mem(db, g->b.data, g->b.len, "gen.log", &o, d, &err) != 0)
    SM_FAIL_AT("diagnose: %s", err.msg);
  sm_sigdb_free(db);
}

SM_TEST(failure_locate_long_log_failure_at_70_percent) {
  gen g;
  sm_diagnosis d;
  long at;

  gen_init(&g, 1);
  gen_normal(&g, 14000);
  at = gen_file(&g, ECC_LOG);
  gen_after_fault(&g, 6000);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.failure, 1);
  ASSERT_EQ(d.first_error_line, at + ECC_LINE - 1);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.component, "gpu");
  /* O(log n) chunks: a 20000-line log is ~320 chunks. */
  ASSERT(d.chunks_examined < 80);
  ASSERT(d.bytes_read - d.bytes_counted < ((uint64_t)1 << 20));
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_quiet_stretch_after_fault) {
  gen g;
  sm_diagnosis d;
  long at;

  gen_init(&g, 2);
  gen_normal(&g, 8000);
  at = gen_file(&g, OOM_LOG);
  /* Other ranks finish their evaluation loop before the teardown. */
  gen_normal(&g, 700);
  for (int i = 0; i < 12; i++)
    line(&g,
         "[2024-06-12 08:11:%02d,112] torch.distributed.elastic."
         "multiprocessing.api: [WARNING] Sending process %d closing "
         "signal SIGTERM",
         i, 9900 + i);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.first_error_line, at + OOM_LINE - 1);
  ASSERT_STREQ(d.category, "user");
  ASSERT_STREQ(d.component, "gpu_memory");
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

/* A data error that the job logged and survived, long before the fault. */
static void gen_recovered_error(gen *g) {
  line(g, "ERROR:data.shards:failed to read shard 12, will retry");
  line(g, "Traceback (most recent call last):");
  line(g, "  File \"/home/u/pipe/shards.py\", line 77, in open_shard");
  line(g, "    with open(path, \"rb\") as fh:");
  line(g, "OSError: [Errno 5] Input/output error: '/lustre/ds/shard_0012'");
  line(g, "retrying shard 12 (attempt 2/5) ... succeeded");
}

SM_TEST(failure_locate_skips_recovered_error_and_ablation_does_not) {
  gen g;
  sm_diagnosis d;
  long at, early;

  gen_init(&g, 3);
  gen_normal(&g, 5000);
  early = g.lines + 5;
  gen_recovered_error(&g);
  gen_normal(&g, 5000);
  at = gen_file(&g, ECC_LOG);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.first_error_line, at + ECC_LINE - 1);
  ASSERT_STREQ(d.component, "gpu");
  sm_diagnosis_release(&d);
  /* Scanning every line (the --no-locator ablation) stops at the first
   * error, the recovered one. */
  diagnose(&g, SM_DIAG_WHOLE, 0, &d);
  ASSERT_EQ(d.first_error_line, early);
  ASSERT_STREQ(d.component, "storage");
  ASSERT(d.lines_examined >= 5000);
  sm_diagnosis_release(&d);
  /* Looking only at the last 5 lines misses the cause. */
  diagnose(&g, SM_DIAG_TAIL, 5, &d);
  ASSERT(d.first_error_line != at + ECC_LINE - 1);
  ASSERT(d.lines_examined < 100);
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_restart_loop_reports_first_occurrence) {
  gen g;
  sm_diagnosis d;
  long first;

  gen_init(&g, 4);
  gen_normal(&g, 3000);
  first = gen_file(&g, IB_LOG);
  for (int k = 0; k < 4; k++) {
    /* The elastic agent restarts the workers, which train a while. */
    line(&g, "INFO:torch.distributed.elastic.agent.server.api:[default] "
             "Rendezvous complete for workers. Result:");
    line(&g, "  restart_count=%d", k + 1);
    gen_normal(&g, 400);
    gen_file(&g, IB_LOG);
  }
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.first_error_line, first + IB_LINE - 1);
  ASSERT_STREQ(d.component, "network");
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_decoys_only_is_no_failure) {
  gen g;
  sm_diagnosis d;

  gen_init(&g, 5);
  gen_normal(&g, 30000);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.failure, 0);
  ASSERT_EQ(d.first_error_line, 0);
  ASSERT_EQ(d.n_evidence, 0);
  sm_diagnosis_release(&d);
  diagnose(&g, SM_DIAG_WHOLE, 0, &d);
  ASSERT_EQ(d.failure, 0);
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_large_clean_log_is_probed_not_read) {
  gen g;
  sm_diagnosis d;

  /* Above 16 MiB a clean tail leads to 32 probes, not a full scan. */
  gen_init(&g, 6);
  gen_normal(&g, 200000);
  ASSERT(g.b.len > ((size_t)16 << 20));
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.failure, 0);
  ASSERT(d.bytes_read < g.b.len / 8);
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_chunk_reads_grow_logarithmically) {
  uint64_t chunks[3], reads[3];
  long sizes[3] = {8000, 64000, 256000};

  for (int k = 0; k < 3; k++) {
    gen g;
    sm_diagnosis d;
    long at;
    gen_init(&g, 7);
    gen_normal(&g, sizes[k] * 7 / 10);
    at = gen_file(&g, ECC_LOG);
    gen_after_fault(&g, sizes[k] * 3 / 10);
    diagnose(&g, SM_DIAG_LOCATE, 0, &d);
    ASSERT_EQ(d.first_error_line, at + ECC_LINE - 1);
    chunks[k] = d.chunks_examined;
    reads[k] = d.bytes_read - d.bytes_counted;
    /* The line count is the only pass over the prefix. */
    ASSERT(d.bytes_counted <= g.b.len);
    sm_diagnosis_release(&d);
    sm_buf_release(&g.b);
  }
  /* 32 times the lines: five more halvings, two probes each. */
  ASSERT(chunks[2] <= chunks[0] + 2 * 5 + 8);
  ASSERT(reads[2] < reads[0] * 4);
}

/* NUL bytes inside a line and NUL padding after a crash. */
static const char nul_log[] = "nul \0 byte in a line\nFileNotFoundError: "
                              "[Errno 2] No such file or directory: 'x'\n"
                              "\0\0\0\0";

SM_TEST(failure_locate_edge_shapes) {
  static const struct {
    const char *log;
    long line;
  } cases[] = {
      {"RuntimeError: CUDA error: uncorrectable ECC error encountered", 1},
      {"step 1 loss 2\r\nstep 2 loss 1.9\r\nOSError: [Errno 116] Stale file "
       "handle\r\n",
       3},
      {"\n\n\n\nKeyError: 'x'\n\n", 5},
      {"a\xff\xfe bad utf-8 \xc3\x28 here\nOSError: [Errno 30] Read-only "
       "file system: '\xff'\n",
       2},
      {nul_log, 2},
  };
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};

  ASSERT_OK(sm_sigdb_load_builtin(db, &err));
  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    size_t n =
        cases[i].log == nul_log ? sizeof(nul_log) - 1 : strlen(cases[i].log);
    if (sm_diagnose_mem(db, cases[i].log, n, "edge", NULL, &d, &err) != 0)
      SM_FAIL_AT("case %zu: %s", i, err.msg);
    if (d.first_error_line != cases[i].line)
      SM_FAIL_AT("case %zu: line %lld, want %ld", i, d.first_error_line,
                 cases[i].line);
    sm_diagnosis_release(&d);
  }
  sm_sigdb_free(db);
}

SM_TEST(failure_locate_huge_line_is_cut_not_fatal) {
  gen g;
  sm_diagnosis d;
  long at;

  gen_init(&g, 8);
  gen_normal(&g, 500);
  /* A 3 MiB line without spaces (a dumped tensor), then the fault. */
  for (int i = 0; i < 3 << 20; i++)
    sm_buf_addc(&g.b, (char)('a' + i % 26));
  sm_buf_addc(&g.b, '\n');
  g.lines++;
  gen_normal(&g, 500);
  at = gen_file(&g, OOM_LOG);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.first_error_line, at + OOM_LINE - 1);
  sm_diagnosis_release(&d);
  diagnose(&g, SM_DIAG_WHOLE, 0, &d);
  ASSERT_EQ(d.first_error_line, at + OOM_LINE - 1);
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_refuses_binary_and_compressed) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  sm_diagnosis d;
  char *bin = malloc(65536);
  sm_rng r;

  ASSERT_OK(sm_sigdb_load_builtin(db, &err));
  sm_rng_seed(&r, 9);
  for (int i = 0; i < 65536; i++)
    bin[i] = (char)(sm_rng_next(&r) & 0xff);
  ASSERT_EQ(sm_diagnose_mem(db, bin, 65536, "rand.bin", NULL, &d, &err),
            SM_EUNSUPP);
  ASSERT(strstr(err.msg, "rand.bin: binary data") != NULL);
  sm_err_clear(&err);
  memcpy(bin, "\x1f\x8b\x08\x00", 4);
  ASSERT_EQ(sm_diagnose_mem(db, bin, 65536, "log.gz", NULL, &d, &err),
            SM_EUNSUPP);
  ASSERT(strstr(err.msg, "gzip") != NULL);
  sm_err_clear(&err);
  /* Empty is not an error: there is nothing to find. */
  ASSERT_OK(sm_diagnose_mem(db, "", 0, "empty", NULL, &d, &err));
  ASSERT_EQ(d.failure, 0);
  sm_diagnosis_release(&d);
  free(bin);
  sm_sigdb_free(db);
}

SM_TEST(failure_count_newlines_matches_a_plain_loop) {
  sm_rng r;
  char buf[5000];

  sm_rng_seed(&r, 10);
  for (int t = 0; t < 50; t++) {
    size_t n = (size_t)(sm_rng_next(&r) % sizeof(buf)), want = 0;
    size_t off = (size_t)(sm_rng_next(&r) % 8);
    for (size_t i = 0; i < sizeof(buf); i++)
      buf[i] = (sm_rng_next(&r) % 7 == 0) ? '\n' : (char)(sm_rng_next(&r));
    if (off + n > sizeof(buf))
      n = sizeof(buf) - off;
    for (size_t i = 0; i < n; i++)
      want += buf[off + i] == '\n';
    ASSERT_EQ(sm__count_newlines(buf + off, n), want);
    ASSERT_EQ(sm__count_newlines_portable(buf + off, n), want);
  }
  memset(buf, '\n', sizeof(buf));
  ASSERT_EQ(sm__count_newlines(buf, sizeof(buf)), sizeof(buf));
  ASSERT_EQ(sm__count_newlines_portable(buf, sizeof(buf)), sizeof(buf));
}

/* A progress bar that only ever writes '\r' leaves a log without
 * newlines; the reader hands it out in pieces and reads each byte once. */
static void gen_cr_progress(gen *g, size_t bytes) {
  long i = 0;
  while (g->b.len < bytes) {
    if (sm_buf_addf(&g->b,
                    "\r %3ld%%|%-10.*s| %ld/100000 [%02ld:%02ld<09:59, "
                    "47.%02ldit/s, loss=2.%03ld]",
                    i % 100, (int)(i % 10), "##########", i, i / 60 % 60,
                    i % 60, i % 100, i % 1000) != 0)
      SM_FAIL_AT("generator out of memory");
    i++;
  }
}

SM_TEST(failure_locate_no_newlines_is_read_once) {
  gen g;
  sm_diagnosis d;
  const uint64_t mib = (uint64_t)1 << 20;

  /* 40 MiB in one line, then the fault on the lines after it. */
  gen_init(&g, 11);
  gen_cr_progress(&g, (size_t)40 << 20);
  sm_buf_addc(&g.b, '\n');
  g.lines = 1;
  line(&g, "Traceback (most recent call last):");
  line(&g, "  File \"/home/u/train.py\", line 88, in <module>");
  line(&g, "RuntimeError: CUDA error: uncorrectable ECC error encountered");
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.failure, 1);
  ASSERT_EQ(d.first_error_line, 4);
  ASSERT_STREQ(d.component, "gpu");
  /* One read of the file: the count of the newlines before the window,
   * plus what the probes and the window read, each byte at most once. */
  ASSERT(d.bytes_read <= g.b.len + mib);
  ASSERT(d.bytes_read - d.bytes_counted < 64 * mib);
  sm_diagnosis_release(&d);
  /* The whole-log ablation reads it once too. */
  diagnose(&g, SM_DIAG_WHOLE, 0, &d);
  ASSERT_EQ(d.first_error_line, 4);
  ASSERT(d.bytes_read <= g.b.len + mib);
  sm_diagnosis_release(&d);
  sm_buf_release(&g.b);

  /* No newline at all and nothing wrong: the tail and the probes read a
   * chunk of at most 1 MiB each (8 + 31), whatever the size. */
  gen_init(&g, 12);
  gen_cr_progress(&g, (size_t)64 << 20);
  diagnose(&g, SM_DIAG_LOCATE, 0, &d);
  ASSERT_EQ(d.failure, 0);
  ASSERT(d.bytes_read < 42 * mib);
  sm_diagnosis_release(&d);
  /* A fault inside the long line (a piece of it) is found and numbered
   * with the line it is in. */
  {
    static const char msg[] =
        "\rRuntimeError: CUDA error: uncorrectable ECC error encountered\r";
    size_t at = g.b.len / 3;
    memcpy(g.b.data + at, msg, sizeof(msg) - 1);
    diagnose(&g, SM_DIAG_WHOLE, 0, &d);
    ASSERT_EQ(d.failure, 1);
    ASSERT_EQ(d.first_error_line, 1);
    ASSERT_STREQ(d.component, "gpu");
    ASSERT(d.first_error_offset <= at + 1 &&
           at + 1 - d.first_error_offset < ((uint64_t)64 << 10));
    ASSERT(d.bytes_read <= g.b.len + mib);
    sm_diagnosis_release(&d);
  }
  sm_buf_release(&g.b);
}

SM_TEST(failure_locate_carriage_return_bars_end_clean) {
  /* Progress bars redrawn with a lone carriage return (tqdm, NeMo,
   * ColossalAI) end the log in pieces, not lines: reaching the end with
   * the last piece is no failure found, in every mode, whether the bar
   * ends with a newline, a carriage return or neither; a fault after the
   * bar is still found on its line. */
  static const char *const clean[] = {
      "\rEpoch 0:  10%|#         | 100/1000 [01:00<09:00, loss=2.40]"
      "\rEpoch 0:  11%|#         | 110/1000 [01:06<08:54, loss=2.39]\n",
      "\rEpoch 0:  10%|#         | 100/1000 [01:00<09:00, loss=2.40]"
      "\rEpoch 0:  11%|#         | 110/1000 [01:06<08:54, loss=2.39]\r",
      "warmup done\rstep 1/9 loss 2.1\rstep 2/9 loss 2.0\rstep 3/9 loss 1.9",
  };
  static const sm_diag_mode modes[] = {SM_DIAG_LOCATE, SM_DIAG_WHOLE,
                                       SM_DIAG_TAIL};
  const char *bad = "\rEpoch 0:  12%|#         | 120/1000 [01:12<08:48]\n"
                    "RuntimeError: CUDA error: an illegal memory access was "
                    "encountered\n";
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  sm_diagnosis d;

  ASSERT_OK(sm_sigdb_load_builtin(db, &err));
  for (size_t m = 0; m < SM_ARRAY_LEN(modes); m++) {
    sm_diag_opts o = {0};
    o.mode = modes[m];
    o.tail_lines = 100;
    for (size_t i = 0; i < SM_ARRAY_LEN(clean); i++) {
      if (sm_diagnose_mem(db, clean[i], strlen(clean[i]), "bar.log", &o, &d,
                          &err) != 0)
        SM_FAIL_AT("mode %zu, log %zu: %s", m, i, err.msg);
      ASSERT_EQ(d.failure, 0);
      sm_diagnosis_release(&d);
    }
    ASSERT_OK(sm_diagnose_mem(db, bad, strlen(bad), "bar.log", &o, &d, &err));
    ASSERT_EQ(d.failure, 1);
    ASSERT_EQ(d.first_error_line, 2);
    sm_diagnosis_release(&d);
  }
  sm_sigdb_free(db);
}
