/* test_failure_neighbours.c - root causes decided by what stands around
 * the error line, on lines written for these tests: an out-of-memory
 * error raised while the job creates its CUDA context (a frame of its
 * stack names the call) or after an nvidia-smi snapshot that shows a GPU
 * already in use is memory others hold (infrastructure/gpu, never an
 * isolation); a data-loader worker killed without a host report is the
 * job's loader sizing (user), with the kernel's or cgroup's report it is
 * the node's limit; a rank that cannot reach the rendezvous store after
 * c10d's retries is the launch configuration (user); two parts of the
 * software stack at versions that do not fit are the framework's, in
 * whatever words the library says it; the [oom-context] table rejects
 * malformed entries; malformed nvidia-smi cells are ignored. */
#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

/* Checks line, category and component; returns the confidence. */
static double expect_at(int where, const char *log, long line, const char *cat,
                        const char *comp) {
  sm_diagnosis d;
  double conf;

  run(log, &d);
  if (!d.failure || d.first_error_line != line ||
      strcmp(d.category, cat) != 0 || strcmp(d.component, comp) != 0)
    SM_FAIL_AT("case at %d: got %s line %lld %s/%s (%s), want %ld %s/%s", where,
               d.failure ? "failure" : "no failure", d.first_error_line,
               d.category, d.component, d.reason ? d.reason : "-", line, cat,
               comp);
  conf = d.confidence;
  sm_diagnosis_release(&d);
  return conf;
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

/* 1 if planning for log (the node known) isolates or replaces a node. */
static int isolates(const char *log) {
  sm_plan p;
  int r = 0;

  /* A gate lower than the default: still no isolation. */
  plan_for(log, "gpu-b11", 0.5, &p);
  for (int i = 0; i < p.n_steps; i++)
    if (strcmp(p.steps[i].action, "isolate_node") == 0 ||
        strcmp(p.steps[i].action, "request_replacement") == 0)
      r = 1;
  sm_plan_release(&p);
  return r;
}

static const char ctx_python[] =
    "loading config from cfg/base.yaml\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ana/seg/train.py\", line 41, in <module>\n"
    "    net = build(cfg).to(\"cuda:0\")\n"
    "  File \"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/"
    "module.py\", line 1152, in to\n"
    "    return self._apply(convert)\n"
    "  File \"/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py\","
    " line 302, in _lazy_init\n"
    "    torch._C._cuda_init()\n"
    "RuntimeError: CUDA error: out of memory\n";

static const char ctx_java[] =
    "solver: probing devices\n"
    "jcuda.CudaException: CUDA_ERROR_OUT_OF_MEMORY\n"
    "\tat jcuda.driver.JCudaDriver.checkResult(JCudaDriver.java:330)\n"
    "\tat jcuda.driver.JCudaDriver.cuCtxCreate(JCudaDriver.java:1501)\n"
    "\tat org.lab.fold.GpuPool.<init>(GpuPool.java:57)\n";

/* The same error while the job's own model is copied: its own memory. */
static const char alloc_python[] =
    "Traceback (most recent call last):\n"
    "  File \"/home/ana/seg/train.py\", line 77, in <module>\n"
    "    out = net(batch)\n"
    "  File \"/opt/venv/lib/python3.11/site-packages/torch/nn/modules/"
    "conv.py\", line 456, in forward\n"
    "    return F.conv2d(x, w)\n"
    "RuntimeError: CUDA error: out of memory\n";

SM_TEST(failure_oom_at_context_creation_is_others_memory) {
  expect(ctx_python, 9, "infrastructure", "gpu");
  expect(ctx_java, 2, "infrastructure", "gpu");
  expect(alloc_python, 6, "user", "gpu_memory");
  /* A shared resource taken, not a broken part: never an isolation. */
  ASSERT(!isolates(ctx_python));
  ASSERT(!isolates(ctx_java));
  /* A context call far below the error (another stack) does not count. */
  {
    sm_buf b;
    sm_buf_init(&b, (size_t)1 << 20);
    sm_buf_addf(&b, "RuntimeError: CUDA error: out of memory\n");
    for (int i = 0; i < 5; i++)
      sm_buf_addf(&b, "epoch %d step %d loss 1.%03d lr 1e-4\n", 1, i, i);
    sm_buf_addf(&b, "\tat jcuda.driver.JCudaDriver.cuCtxCreate(x.java:1)\n");
    sm_buf_addc(&b, '\0');
    expect(b.data, 1, "user", "gpu_memory");
    sm_buf_release(&b);
  }
}

/* An nvidia-smi table printed by the job script before the program. */
static const char smi_busy[] =
    "job 8812 on gpu-b11\n"
    "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile "
    "Uncorr. ECC |\n"
    "|   0  Tesla V100-SXM2...  On   | 00000000:1A:00.0 Off |          "
    "          0 |\n"
    "| N/A   51C    P0   250W / 300W |  30710MiB / 32510MiB |    99%      "
    "Default |\n"
    "|   1  Tesla V100-SXM2...  On   | 00000000:1B:00.0 Off |          "
    "          0 |\n"
    "| N/A   33C    P0    41W / 300W |      3MiB / 32510MiB |      0%      "
    "Default |\n"
    "python fit.py --gpu 0\n"
    "RuntimeError: CUDA error: out of memory\n";

SM_TEST(failure_oom_after_a_busy_gpu_snapshot_is_others_memory) {
  sm_buf b;

  expect(smi_busy, 8, "infrastructure", "gpu");
  ASSERT(!isolates(smi_busy));
  /* Idle GPUs in the snapshot: the job filled the GPU itself. */
  expect("| N/A   33C    P0    41W / 300W |      3MiB / 32510MiB |      0%   "
         "   Default |\n"
         "RuntimeError: CUDA error: out of memory\n",
         2, "user", "gpu_memory");
  /* Training between the snapshot and the error: the memory in use may
   * be the job's own by then. */
  sm_buf_init(&b, (size_t)1 << 20);
  sm_buf_addf(&b, "%s", smi_busy);
  b.len -= strlen("RuntimeError: CUDA error: out of memory\n");
  for (int i = 1; i <= 3; i++)
    sm_buf_addf(&b, "step %d/900 loss 2.%d 1.1 it/s\n", i, i);
  sm_buf_addf(&b, "RuntimeError: CUDA error: out of memory\n");
  sm_buf_addc(&b, '\0');
  expect(b.data, 11, "user", "gpu_memory");
  sm_buf_release(&b);
  /* A report with figures decides by its own arithmetic, whatever the
   * snapshot says: here the job holds nearly all of it. */
  expect("| N/A   51C    P0   250W / 300W |  30710MiB / 32510MiB |    99%   "
         "   Default |\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 "
         "GiB. GPU 0 has a total capacity of 31.75 GiB of which 20.00 MiB is "
         "free. Including non-PyTorch memory, this process has 31.70 GiB "
         "memory in use.\n",
         2, "user", "gpu_memory");
}

SM_TEST(failure_malformed_smi_cells_are_ignored) {
  sm_buf b;

  /* Cells without numbers, with a used part above the total, a zero
   * total, a number that overflows, units cut off. */
  expect("| MiB / MiB | xMiB / 10MiB | 900MiB / 100MiB | 5MiB / 0MiB |\n"
         "| 99999999999999999999999999MiB / 1MiB | 7MiB / 8Mi\n"
         "RuntimeError: CUDA error: out of memory\n",
         3, "user", "gpu_memory");
  /* One huge line of cells, and binary bytes around them. */
  sm_buf_init(&b, (size_t)1 << 22);
  for (int i = 0; i < 20000; i++)
    sm_buf_addf(&b, "%s", i % 2 ? "1MiB / 900MiB \xff\xfe" : "MiB /");
  sm_buf_addf(&b, "\nRuntimeError: CUDA error: out of memory\n");
  sm_buf_addc(&b, '\0');
  expect(b.data, 2, "user", "gpu_memory");
  sm_buf_release(&b);
}

SM_TEST(failure_loader_kill_is_the_jobs_unless_the_host_reports_it) {
  static const char killed[] =
      "epoch 3 step 400 loss 0.81\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/ana/seg/train.py\", line 90, in <module>\n"
      "    for batch in loader:\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/torch/utils/data/"
      "_utils/signal_handling.py\", line 67, in handler\n"
      "    _error_if_any_worker_fails()\n"
      "RuntimeError: DataLoader worker (pid 7781) is killed by signal: "
      "Killed.\n";
  sm_buf b;

  expect(killed, 7, "user", "none");
  ASSERT(!isolates(killed));
  /* The kernel says the host ran out: the node's limit. */
  sm_buf_init(&b, (size_t)1 << 20);
  sm_buf_addf(&b,
              "%sMar  9 02:11:40 gpu-b11 kernel: Out of memory: Killed "
              "process 7781 (pt_data_worker) total-vm:40100000kB\n",
              killed);
  sm_buf_addc(&b, '\0');
  expect(b.data, 7, "infrastructure", "node");
  ASSERT(!isolates(b.data));
  sm_buf_release(&b);
  /* Shared memory of the container too small: the node's. */
  expect("RuntimeError: DataLoader worker (pid 90) is killed by signal: Bus "
         "error. It is possible that dataloader's workers are out of shared "
         "memory.\n",
         1, "infrastructure", "node");
}

SM_TEST(failure_unreachable_rendezvous_is_the_launch_configuration) {
  static const char log[] =
      "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
      "[::ffff:10.9.8.7]:29511 (errno: 110 - Connection timed out).\n"
      "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
      "10.9.8.7:29511 (errno: 110 - Connection timed out).\n"
      "RuntimeError: The client socket has failed to connect to any network "
      "address of (10.9.8.7, 29511). The client socket has failed to connect "
      "to 10.9.8.7:29511 (errno: 110 - Connection timed out).\n";

  expect(log, 3, "user", "none");
  ASSERT(!isolates(log));
  expect("torch.distributed.DistNetworkError: The client socket has timed "
         "out after 900s while trying to connect to (head-0, 29400).\n",
         1, "user", "none");
  /* The retries alone, in a run that then trains and ends: no failure. */
  {
    sm_diagnosis d;
    run("[W socket.cpp:663] [c10d] The client socket has failed to connect "
        "to 10.9.8.7:29511 (errno: 111 - Connection refused).\n"
        "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\ndone\n",
        &d);
    ASSERT(!d.failure);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_version_mismatch_in_the_librarys_words_is_framework) {
  static const char *const lines[] = {
      "RuntimeError: Triton version mismatch! Kernels were generated by 3.0, "
      "this runtime is 2.3",
      "RuntimeError: fused_adam ops were compiled and installed with a "
      "different version than what is being used at runtime",
      "OSError: libfoo.so was built against a different version of libtorch",
      "RuntimeError: The detected extension was built using a version of "
      "CUDA that does not match the version used to compile PyTorch",
      "ValueError: xformers 0.0.20 is incompatible with the installed "
      "PyTorch 2.3.0",
  };
  static const char *const not_framework[] = {
      /* A checkpoint or config at another version is the job's. */
      "ValueError: checkpoint format version mismatch: file 3, reader 2",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(lines); i++) {
    char log[512];
    snprintf(log, sizeof(log), "step 1 loss 2.0\n%s\n", lines[i]);
    expect(log, 2, "framework", "none");
  }
  for (size_t i = 0; i < SM_ARRAY_LEN(not_framework); i++) {
    sm_diagnosis d;
    char log[512];
    snprintf(log, sizeof(log), "step 1 loss 2.0\n%s\n", not_framework[i]);
    run(log, &d);
    ASSERT(d.failure);
    ASSERT(strcmp(d.category, "framework") != 0);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_oom_context_table_rejects_malformed_entries) {
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[oom-context]\nmatch = cuCtx(\n", "t.ini:2: bad regular expression"},
      {"[oom-context]\nwhen = cuInit\n", "unknown key 'when' in [oom-context]"},
      {"[oom-context x]\n", "unknown section"},
      {"[oom-context]\nmatch =\n", "has no value"},
  };
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};

  ASSERT(db != NULL);
  ASSERT_EQ(sm_sigdb_load_builtin(db, &err), 0);
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    int n = db->n_oomctx;
    int rc;
    memset(&err, 0, sizeof(err));
    rc =
        sm_sigdb_load_text(db, bad[i].text, strlen(bad[i].text), "t.ini", &err);
    if (rc != SM_EPARSE || strstr(err.msg, bad[i].msg) == NULL)
      SM_FAIL_AT("case %zu: rc %d '%s', want '%s'", i, rc, err.msg, bad[i].msg);
    ASSERT_EQ(db->n_oomctx, n); /* nothing of a broken text is kept */
  }
  /* An operator's entry is used. */
  ASSERT_EQ(sm_sigdb_load_text(db, "[oom-context]\nmatch = hipCtxCreate\n", 35,
                               "t.ini", &err),
            0);
  {
    sm__matcher m;
    ASSERT_EQ(sm__matcher_init(&m, db), 0);
    ASSERT(sm__sigdb_oom_context(&m, "at hip.Driver.hipCtxCreate(x)", 29));
    ASSERT(sm__sigdb_oom_context(&m, "  torch._C._cuda_init()", 23));
    ASSERT(!sm__sigdb_oom_context(&m, "model.cuda()", 12));
    ASSERT(!sm__sigdb_oom_context(&m, "", 0));
    sm__matcher_release(&m);
  }
  sm_sigdb_free(db);
}

SM_TEST(failure_launcher_summary_quotes_the_workers_error) {
  /* torchrun's summary quotes the worker's traceback as a field, its
   * exception line indented: the quoted error is the cause, the summary
   * around it the cascade. */
  static const char summary[] =
      "step 400/900 loss 1.31\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
      "============================================================\n"
      "fit.py FAILED\n"
      "------------------------------------------------------------\n"
      "Root Cause (first observed failure):\n"
      "[0]:\n"
      "  time      : 2025-03-04_11:22:01\n"
      "  host      : gpu-b11\n"
      "  rank      : 2 (local_rank: 2)\n"
      "  exitcode  : 1 (pid: 4411)\n"
      "  error_file: /tmp/torchelastic_q/none_r/attempt_0/2/error.json\n"
      "  traceback : Traceback (most recent call last):\n"
      "    File \"/home/ana/seg/fit.py\", line 77, in main\n"
      "      cfg = load(args.config)\n"
      "    File \"/home/ana/seg/cfg.py\", line 12, in load\n"
      "      return yaml.safe_load(open(path))[\"model\"]\n"
      "  KeyError: 'model'\n"
      "============================================================\n";

  expect(summary, 18, "user", "none");
  /* Source code shown deeper under a frame is not an exception line, and
   * a field named traceback without one is not a header. */
  {
    sm_diagnosis d;
    run("  traceback : see the error file\n"
        "        ValueError: not raised, only printed as code\n"
        "   traceback:\n"
        "step 1 loss 2.0\ndone\n",
        &d);
    ASSERT(!d.failure);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_indented_exception_lines) {
  static const struct {
    const char *msg;
    int exc; /* 1 if an exception line */
  } cases[] = {
      {"KeyError: 'a'", 1},
      {" KeyError: 'a'", 1},
      {"   KeyError: 'a'", 1},
      {"    KeyError: 'a'", 0},
      {"  keyerror: 'a'", 0},
      {"  KeyError 'a'", 0},
      {"   ", 0},
      {" ", 0},
      {"  \xff\xfe"
       "Error: x",
       0},
      {"  Error:", 1},
  };
  sm__lctx c;
  sm_err err = {0};

  ASSERT_EQ(sm__lctx_init(&c, db_get(), &err), 0);
  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm__line l;
    memset(&l, 0, sizeof(l));
    l.text = cases[i].msg;
    l.len = strlen(cases[i].msg);
    sm__line_eval(&c, &l);
    if ((l.exc_len > 0) != cases[i].exc || l.msg > l.len)
      SM_FAIL_AT("case %zu '%s': exc_len %d msg %zu", i, cases[i].msg,
                 l.exc_len, l.msg);
  }
  sm__lctx_release(&c);
}

SM_TEST(failure_words_decide_a_bare_exception_without_frames) {
  /* A pasted one-line error of a type that is the job's or a library's
   * depending on where it was raised: the message's wording decides when
   * the line classifier reads it clearly. */
  expect("TypeError: Trainer.__init__() got an unexpected argument "
         "'tokenizer' in this release\n",
         1, "framework", "none");
  expect("TypeError: Accelerator.__init__() got an unexpected argument "
         "'logging_dir'\n",
         1, "framework", "none");
  /* Unclear wording keeps the type's default (the job's). */
  expect("RuntimeError: Expected all tensors of the batch to be on cuda:1, "
         "but found cpu\n",
         1, "user", "none");
  /* With frames, the frames decide, not the words. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/ana/fit.py\", line 3, in <module>\n"
         "    acc = Accelerator(logging_dir=\"x\")\n"
         "TypeError: Accelerator.__init__() got an unexpected argument "
         "'logging_dir'\n",
         4, "user", "none");
}

/* The TensorFlow allocator's retries at start-up, then n epochs of
 * training, then tail. */
static void allocator_retries(sm_buf *b, int n, const char *tail) {
  sm_buf_init(b, (size_t)1 << 20);
  sm_buf_addf(b, "2025-03-04 10:00:01.300000: E tensorflow/stream_executor/"
                 "cuda/cuda_driver.cc:806] failed to allocate 10.22G "
                 "(10978731776 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: "
                 "out of memory\n"
                 "2025-03-04 10:00:01.300500: E tensorflow/stream_executor/"
                 "cuda/cuda_driver.cc:806] failed to allocate 9.20G "
                 "(9880858624 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: "
                 "out of memory\n");
  for (int i = 1; i <= n; i++)
    sm_buf_addf(b,
                "Epoch %d/%d\n938/938 [==============================] - 9s "
                "9ms/step - loss: 0.%04d - accuracy: 0.9%03d\n",
                i, n, 3000 - i * 10, i);
  sm_buf_addf(b, "%s", tail);
  sm_buf_addc(b, '\0');
}

SM_TEST(failure_an_error_the_job_outlived_is_no_failure) {
  sm_buf b;
  sm_diagnosis d;

  /* Sustained training after the allocator's complaints, a clean end. */
  allocator_retries(&b, 20, "Training finished.\n");
  run(b.data, &d);
  if (d.failure)
    SM_FAIL_AT("failure at line %lld (%s)", d.first_error_line,
               d.reason ? d.reason : "-");
  sm_diagnosis_release(&d);
  sm_buf_release(&b);
  /* A few steps only: the peers of a rank that died print some. */
  allocator_retries(&b, 4, "");
  expect(b.data, 1, "user", "gpu_memory");
  sm_buf_release(&b);
  /* Something fails after the training: the job did not end well. */
  allocator_retries(&b, 20,
                    "W0304 11:22:01.000000 4411 torch/distributed/elastic/"
                    "multiprocessing/api.py:897] Sending process 4412 closing "
                    "signal SIGTERM\n");
  run(b.data, &d);
  ASSERT(d.failure);
  sm_diagnosis_release(&d);
  sm_buf_release(&b);
  /* A rank's fatal error, its peers' last steps, the end of the paste. */
  expect("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
         "allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of "
         "which 1.02 GiB is free. Including non-PyTorch memory, this process "
         "has 78.10 GiB memory in use.\n"
         "[rank0]: step 401/900 loss 1.30\n[rank1]: step 401/900 loss 1.30\n"
         "[rank2]: step 401/900 loss 1.30\n[rank0]: step 402/900 loss 1.29\n",
         1, "user", "gpu_memory");
}
