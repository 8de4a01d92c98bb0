/* test_failure_cause.c - what an operator knows about cascades, and the
 * classification of the cause: tracebacks and their chains, symptoms
 * printed before the cause, interleaved ranks with timestamps, generic
 * errors explained by specific ones, traceback frames as evidence, and the
 * line prefixes (timestamps, rank tags) under all of it. */
#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

/* Checks line, category and component of a diagnosis of log. */
static void expect(const char *log, long line, const char *cat,
                   const char *comp) {
  sm_diagnosis d;

  run(log, &d);
  if (d.first_error_line != line || strcmp(d.category, cat) != 0 ||
      strcmp(d.component, comp) != 0)
    SM_FAIL_AT("got line %lld %s/%s (%s), want %ld %s/%s", d.first_error_line,
               d.category, d.component, d.reason ? d.reason : "-", line, cat,
               comp);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_prefixes_and_timestamps) {
  static const struct {
    const char *line, *msg;
    int has_ts;
  } cases[] = {
      {"[rank3]: Traceback (most recent call last):",
       "Traceback (most recent call last):", 0},
      {"[rank3]:   File \"x.py\", line 1, in f",
       "  File \"x.py\", line 1, in f", 0},
      {"[default7]:KeyError: 'a'", "KeyError: 'a'", 0},
      {"[1,3]<stderr>:OSError: [Errno 5] x", "OSError: [Errno 5] x", 0},
      {"12: RuntimeError: boom", "RuntimeError: boom", 0},
      {"(RayTrainWorker pid=312, ip=10.0.0.2) ValueError: v", "ValueError: v",
       0},
      {"2024-05-02 10:11:12,123 - INFO - step 3", "INFO - step 3", 1},
      {"[2024-05-02T10:11:12.5Z] x", "x", 1},
      {"[10:11:12] WARNING  y", "WARNING  y", 1},
      {"May  2 10:11:12 gpu7 kernel: NVRM: Xid 79", "NVRM: Xid 79", 1},
      {"[ 8123.456789] NVRM: Xid (PCI:0000:3b:00): 79",
       "NVRM: Xid (PCI:0000:3b:00): 79", 0},
      {"E0502 10:11:12.123456  4121 pg.cpp:12] Watchdog caught",
       "Watchdog caught", 1},
      {"[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog", "Watchdog", 0},
      {"Mar  1 10:00:00 gpu7 python3[4121]: Traceback (most recent call "
       "last):",
       "Traceback (most recent call last):", 1},
      {"2024-05-02T10:11:12.123456789Z stderr F KeyError: 'x'", "KeyError: 'x'",
       1},
      {"> RuntimeError: CUDA error: out of memory",
       "RuntimeError: CUDA error: out of memory", 0},
      {">   File \"x.py\", line 3, in f", "  File \"x.py\", line 3, in f", 0},
      {"gpu014: OSError: [Errno 5] x", "OSError: [Errno 5] x", 0},
      {"trainer-1  | Traceback (most recent call last):",
       "Traceback (most recent call last):", 0},
      {"RuntimeError: CUDA error: x", "RuntimeError: CUDA error: x", 0},
      {"train | epoch 001 | loss 8.4", "train | epoch 001 | loss 8.4", 0},
      {"plain message", "plain message", 0},
      {"", "", 0},
      {"[not a tag] x", "[not a tag] x", 0},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    double ts;
    size_t n = strlen(cases[i].line);
    size_t p = sm__line_prefix(cases[i].line, n, &ts);
    if (strcmp(cases[i].line + p, cases[i].msg) != 0)
      SM_FAIL_AT("case %zu: message '%s', want '%s'", i, cases[i].line + p,
                 cases[i].msg);
    ASSERT_EQ(!isnan(ts), cases[i].has_ts);
  }
}

SM_TEST(failure_timestamps_order) {
  double a, b, c;
  const char *l1 = "2024-05-02 10:11:12,500 x";
  const char *l2 = "2024-05-02 10:11:13,001 x";
  const char *l3 = "2024-05-03 00:00:00,000 x";

  sm__line_prefix(l1, strlen(l1), &a);
  sm__line_prefix(l2, strlen(l2), &b);
  sm__line_prefix(l3, strlen(l3), &c);
  ASSERT(a < b && b < c);
  ASSERT_NEAR(b - a, 0.501, 1e-6);
}

SM_TEST(failure_exception_type_detection) {
  static const struct {
    const char *s;
    int len;
  } cases[] = {
      {"KeyError: 'x'", 8},
      {"torch.cuda.OutOfMemoryError: CUDA out of memory", 27},
      {"StopIteration", 13},
      {"jaxlib.xla_extension.XlaRuntimeError: INTERNAL", 36},
      {"KeyError", 8},
      {"Error: something", 5},
      {"keyError: x", 0},
      {"RuntimeError boom", 0},
      {"  KeyError: x", 0},
      {"Some text: here", 0},
      {"ValueError(", 0},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++)
    if (sm__exc_type_len(cases[i].s, strlen(cases[i].s)) != cases[i].len)
      SM_FAIL_AT("case %zu '%s': %d, want %d", i, cases[i].s,
                 sm__exc_type_len(cases[i].s, strlen(cases[i].s)),
                 cases[i].len);
}

SM_TEST(failure_traceback_points_at_the_exception_line) {
  expect(
      "step 1 loss 2.0\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/run.py\", line 9, in <module>\n"
      "    main()\n"
      "  File \"/home/u/run.py\", line 5, in main\n"
      "    raise ValueError(\"Target size must be the same as input size\")\n"
      "ValueError: bad learning-rate schedule: warmup > total steps\n",
      7, "user", "none");
}

SM_TEST(failure_chains_go_back_to_the_first_exception) {
  expect("Traceback (most recent call last):\n"
         "  File \"/srv/a.py\", line 3, in load\n"
         "    f = open(p)\n"
         "OSError: [Errno 116] Stale file handle: '/nfs/x'\n"
         "\n"
         "During handling of the above exception, another exception "
         "occurred:\n"
         "\n"
         "Traceback (most recent call last):\n"
         "  File \"/srv/a.py\", line 7, in load\n"
         "    log.write(msg)\n"
         "ValueError: I/O operation on closed file.\n"
         "\n"
         "The above exception was the direct cause of the following "
         "exception:\n"
         "\n"
         "Traceback (most recent call last):\n"
         "  File \"/srv/train.py\", line 70, in <module>\n"
         "    run()\n"
         "RuntimeError: checkpoint loader failed\n",
         4, "infrastructure", "storage");
}

SM_TEST(failure_symptoms_before_the_cause_are_skipped) {
  /* The launcher's teardown and a peer disconnect are printed before the
   * rank that failed flushes its traceback. */
  expect("step 10 loss 3.1\n"
         "W0101 00:00:01.000000 1 api.py:858] Sending process 7 closing "
         "signal SIGTERM\n"
         "node3:1:2 [0] NCCL WARN Net : Connection closed by remote peer "
         "node4<1234>\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/u/t.py\", line 4, in <module>\n"
         "    x = batch['image']\n"
         "KeyError: 'image'\n",
         8, "user", "none");
  /* Only symptoms: the first one is reported, without confidence. */
  {
    sm_diagnosis d;
    run("step 1\n"
        "[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for "
        "600031 milliseconds before timing out.\n"
        "Sending process 12 closing signal SIGTERM\n",
        &d);
    ASSERT_EQ(d.first_error_line, 2);
    ASSERT(d.confidence < 0.6);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_watchdog_restatement_yields_to_the_direct_report) {
  expect("[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Process group "
         "watchdog thread terminated with exception: CUDA error: "
         "uncorrectable ECC error encountered\n"
         "[rank1]: Traceback (most recent call last):\n"
         "[rank1]:   File \"/w/train.py\", line 40, in <module>\n"
         "[rank1]:     loss.backward()\n"
         "[rank1]: RuntimeError: CUDA error: uncorrectable ECC error "
         "encountered\n",
         5, "infrastructure", "gpu");
  /* With no direct report, the restated cause classifies the line. */
  expect("step 4\n"
         "terminate called after throwing an instance of "
         "'c10::DistBackendError'\n"
         "  what():  [PG 0 Rank 2] Process group watchdog thread terminated "
         "with exception: CUDA error: an uncorrectable NVLink error was "
         "detected during the execution\n",
         3, "infrastructure", "nvlink");
}

SM_TEST(failure_interleaved_ranks_use_timestamps) {
  expect("2024-03-01 10:00:09,100 [rank0] RuntimeError: CUDA error: an "
         "illegal memory access was encountered\n"
         "2024-03-01 10:00:09,200 [rank0] CUDA kernel errors might be "
         "asynchronously reported\n"
         "2024-03-01 10:00:08,950 [rank5] OSError: [Errno 5] Input/output "
         "error: '/data/s1'\n",
         3, "infrastructure", "storage");
}

SM_TEST(failure_generic_errors_take_the_class_of_specific_context) {
  /* An unspecified launch failure is explained by Xid 79 in context... */
  expect("RuntimeError: CUDA error: unspecified launch failure\n"
         "more output\n"
         "Jan  1 00:00:00 g7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=9, "
         "GPU has fallen off the bus.\n",
         1, "infrastructure", "gpu");
  /* ...by an application-side Xid 13... */
  expect("RuntimeError: CUDA error: unspecified launch failure\n"
         "NVRM: Xid (PCI:0000:3b:00): 13, pid=9, Graphics Exception\n",
         1, "user", "none");
  /* ...or, alone, is read as the GPU's, inferred (below the gate). */
  expect("step 3\nRuntimeError: CUDA error: unspecified launch failure\n", 2,
         "infrastructure", "gpu");
}

SM_TEST(failure_frames_decide_user_or_framework) {
  /* Raised in the job's own code. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/data.py\", line 8, in parse\n"
         "    raise TypeError('bad record')\n"
         "TypeError: bad record\n",
         4, "user", "none");
  /* Only library frames: the library's own error. */
  expect("Traceback (most recent call last):\n"
         "  File \"/usr/lib/python3.10/runpy.py\", line 196, in _run\n"
         "    exec(code)\n"
         "  File \"/opt/venv/lib/python3.10/site-packages/lib_x/cli.py\", line "
         "3, in main\n"
         "    opts.merge(None)\n"
         "TypeError: 'NoneType' object is not iterable\n",
         6, "framework", "none");
  /* A type no table knows, raised in user code. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/t.py\", line 2, in <module>\n"
         "    raise ShardIndexMismatch(3)\n"
         "mylib.errors.ShardIndexMismatchError: 3\n",
         4, "user", "none");
}

SM_TEST(failure_bare_exception_names_end_tracebacks) {
  expect("Exception in thread Thread-2:\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/u/app/prefetch.py\", line 33, in run\n"
         "    item = self.q.get_nowait()\n"
         "queue.Empty\n"
         "shutting down\n",
         5, "user", "none");
}

SM_TEST(failure_import_errors_own_module_or_package) {
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/proj/tools/train.py\", line 3, in <module>\n"
         "    import proj.models\n"
         "ModuleNotFoundError: No module named 'proj'\n",
         4, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/proj/train.py\", line 3, in <module>\n"
         "    import deepspeed\n"
         "ModuleNotFoundError: No module named 'deepspeed'\n",
         4, "framework", "none");
  expect("ImportError: cannot import name 'cached_download' from "
         "'huggingface_hub' (/usr/lib/python3/dist-packages/huggingface_hub/"
         "__init__.py)\n",
         1, "framework", "none");
}

SM_TEST(failure_ipython_and_rich_tracebacks) {
  expect("---------------------------------------------------------------\n"
         "KeyError                                  Traceback (most recent "
         "call last)\n"
         "<ipython-input-3-0f1e> in <module>\n"
         "----> 1 df['labels']\n"
         "\n"
         "/opt/conda/lib/python3.10/site-packages/pandas/core/frame.py in "
         "__getitem__(self, key)\n"
         "   3761     indexer = self.columns.get_loc(key)\n"
         "\n"
         "KeyError: 'labels'\n",
         9, "user", "none");
  expect("\xe2\x95\xad\xe2\x94\x80 Traceback (most recent call last) "
         "\xe2\x94\x80\xe2\x95\xae\n"
         "\xe2\x94\x82 /home/u/x.py:3 in <module> \xe2\x94\x82\n"
         "\xe2\x95\xb0\xe2\x94\x80\xe2\x94\x80\xe2\x95\xaf\n"
         "OSError: [Errno 30] Read-only file system: '/ckpt'\n",
         4, "infrastructure", "storage");
}

SM_TEST(failure_evidence_node_device_and_commands) {
  sm_diagnosis d;
  int frame = 0;

  run("gpu-b7:12:40 [3] NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.9<1234> with status=12 opcode=0 len=0 vendor err 129 (Recv) "
      "hca mlx5_3\n"
      "gpu-b7:12:40 [3] NCCL INFO proxy.cc:1421 -> 6\n",
      &d);
  ASSERT_STREQ(d.component, "network");
  ASSERT_STREQ(d.node, "gpu-b7");
  ASSERT_STREQ(d.device, "mlx5_3");
  ASSERT(d.n_commands > 0);
  ASSERT(strstr(d.commands[0], "gpu-b7") != NULL);
  ASSERT_STREQ(d.evidence[0].role, "cause");
  ASSERT_EQ(d.evidence[0].line, 1);
  sm_diagnosis_release(&d);
  run("Traceback (most recent call last):\n"
      "  File \"/home/u/train.py\", line 9, in <module>\n"
      "    model.fit(x)\n"
      "  File \"/opt/v/lib/python3.11/site-packages/k/fit.py\", line 3, in "
      "fit\n"
      "    raise ValueError('x')\n"
      "ValueError: Shapes (None, 10) and (None, 1) are incompatible\n",
      &d);
  ASSERT_STREQ(d.category, "user");
  for (int i = 0; i < d.n_evidence; i++)
    if (strcmp(d.evidence[i].role, "frame") == 0) {
      ASSERT_EQ(d.evidence[i].line, 2);
      frame = 1;
    }
  ASSERT(frame);
  ASSERT_EQ(d.n_commands, 0);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_benign_lookalikes_are_not_failures) {
  sm_diagnosis d;

  run("g1:1:1 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot "
      "open shared object file: No such file or directory\n"
      "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale "
      "to 16384.0\n"
      "[W socket.cpp:601] [c10d] The client socket has failed to connect to "
      "[g1]:29500 (errno: 99 - Cannot assign requested address).\n"
      "/x/site-packages/y.py:3: FutureWarning: `foo` is deprecated and will "
      "be removed in v5\n"
      "step 1 loss 2.1 error_rate 0.31\n",
      &d);
  ASSERT_EQ(d.failure, 0);
  sm_diagnosis_release(&d);
}
