/* test_failure_classes.c - root causes as classes, on lines written for
 * these tests: retried-and-recovered warnings are not failures; lines a
 * program logs as information are not causes; the job's configuration of
 * the communication stack is the job's (user); version mismatches of
 * libraries, runtimes and drivers are the framework's; memory of a shared
 * GPU held by other processes (also a GPU already full when the job
 * creates its CUDA context) is the infrastructure's; the rendezvous
 * method a program prints is one of its settings; a collective that
 * times out among the first of its group means the ranks were out of
 * step at setup (the job's); a worker's error
 * re-raised by its parent is reported where it first appears; frames of
 * an exception chain and installer shims decide user or framework; a
 * cascade never outranks the error that started it; libfabric finding no
 * fabric device at all is the job's container or environment (user). */
#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

/* Checks line, category and component; line 0 means no failure. */
static void expect_at(int where, const char *log, long line, const char *cat,
                      const char *comp) {
  expect_diag_at(where, log, line, cat, comp, NULL);
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

/* n lines of healthy training output. */
static void training(sm_buf *b, int from, int n) {
  for (int i = from; i < from + n; i++)
    sm_buf_addf(b,
                "[2025-03-04 11:%02d:%02d,120] step %d | loss %.3f | lr "
                "2.0e-04 | 512.3 ms/step\n",
                i / 60 % 60, i % 60, i, 3.0 - i * 0.001);
}

SM_TEST(failure_retry_notices_do_not_outrank_the_real_fault) {
  sm_buf b;
  long ecc;

  /* A rendezvous port taken for a moment early on, then hours of
   * training, then the GPU fails. */
  sm_buf_init(&b, (size_t)1 << 24);
  sm_buf_addf(&b, "launching 8 workers\n");
  sm_buf_addf(&b, "[W socket.cpp:464] [c10d] The server socket has failed "
                  "to listen on [::]:29500 (errno: 98 - Address already in "
                  "use) (retrying in 5s).\n");
  sm_buf_addf(&b, "store: connect to gpu-a3:29500 refused, retrying (attempt "
                  "2/10)\n");
  sm_buf_addf(&b, "wandb: Network error (ReadTimeout), will retry\n");
  training(&b, 1, 120);
  sm_buf_addf(&b, "Traceback (most recent call last):\n"
                  "  File \"/home/u/pretrain.py\", line 310, in <module>\n"
                  "    loss.backward()\n");
  ecc = 4 + 120 + 4;
  sm_buf_addf(&b, "RuntimeError: CUDA error: uncorrectable ECC error "
                  "encountered\n");
  sm_buf_addc(&b, '\0');
  expect(b.data, ecc, "infrastructure", "gpu");
  sm_buf_release(&b);
  /* The same notices in a log that ends well are no failure at all. */
  expect("[W socket.cpp:464] [c10d] The server socket has failed to listen "
         "on [::]:29500 (errno: 98 - Address already in use) (retrying in "
         "5s).\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\ntraining finished\n",
         0, NULL, NULL);
  /* When the retries run out, the port is the job's problem. */
  expect("[W socket.cpp:464] [c10d] The server socket has failed to listen "
         "on [::]:29500 (errno: 98 - Address already in use) (retrying in "
         "5s).\n"
         "[E socket.cpp:470] [c10d] The server socket has failed to listen "
         "on [::]:29500 after 5 attempts, giving up (errno: 98 - Address "
         "already in use).\n"
         "torch.distributed.DistNetworkError: The server socket has failed "
         "to listen on any local network address.\n",
         2, "user", "none");
}

SM_TEST(failure_line_levels) {
  static const struct {
    const char *line;
    int level;
  } cases[] = {
      {"INFO:2025-01-04 03:14:41,011:jax._src.xla_bridge:925: Unable to "
       "initialize backend 'tpu'",
       SM__LVL_INFO},
      {"03:14:41.011 [I] Unable to initialize backend 'rocm'", SM__LVL_INFO},
      {"2024-05-02 15:40:33.450 INFO: Epoch 132: loss=0.5665", SM__LVL_INFO},
      {"[2025-07-12 22:03:34,200] [INFO] [launch.py:315:sigkill_handler] "
       "Killing subprocess 1",
       SM__LVL_INFO},
      {"[\x1b[36m2023-03-05 20:57:38,409\x1b[0m][\x1b[34m__main__\x1b[0m][\x1b"
       "[32mINFO\x1b[0m] - Instantiating datamodule",
       SM__LVL_INFO},
      {"2024-01-01 10:00:00.000 | DEBUG    | app:run:12 - probing",
       SM__LVL_INFO},
      {"I0311 14:02:12.112233 140210 train.py:201] Step 5000", SM__LVL_INFO},
      {"[I ProcessGroupNCCL.cpp:835] [Rank 0] NCCL initialized", SM__LVL_INFO},
      {"[W socket.cpp:601] [c10d] The client socket has failed", SM__LVL_WARN},
      {"WARNING:root:slow data loader", SM__LVL_WARN},
      {"[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught",
       SM__LVL_ERROR},
      {"E0502 10:11:12.123456  4121 pg.cpp:12] Watchdog caught", SM__LVL_ERROR},
      {"ERROR:root:failed to read shard 12", SM__LVL_ERROR},
      {"2025-01-01 00:00:00 CRITICAL worker lost", SM__LVL_ERROR},
      /* No level: words of a message are not levels. */
      {"RuntimeError: INFO field missing", SM__LVL_NONE},
      {"Epoch 3: INFO 12", SM__LVL_NONE},
      {"I am done", SM__LVL_NONE},
      {"gpu-a01:1201:1301 [0] NCCL INFO NET/Plugin : No plugin found",
       SM__LVL_NONE},
      {"INFORMATION: x", SM__LVL_NONE},
      {"[rank0]: Traceback (most recent call last):", SM__LVL_NONE},
      {"", SM__LVL_NONE},
      {"[", SM__LVL_NONE},
      {"\x1b[", SM__LVL_NONE},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    int got = sm__line_level(cases[i].line, strlen(cases[i].line));
    if (got != cases[i].level)
      SM_FAIL_AT("case %zu '%s': level %d, want %d", i, cases[i].line, got,
                 cases[i].level);
  }
}

SM_TEST(failure_informational_lines_are_not_causes) {
  /* A framework probes optional backends and logs the misses as
   * information; the job then fails for its own reason. */
  expect("INFO:2025-01-04 03:14:41,003:jax._src.xla_bridge:925: Unable to "
         "initialize backend 'rocm': module 'jaxlib' has no attribute "
         "'GpuAllocatorConfig'\n"
         "INFO:2025-01-04 03:14:41,011:jax._src.xla_bridge:925: Unable to "
         "initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: "
         "libtpu.so: cannot open shared object file: No such file or "
         "directory\n"
         "03:14:41.011 [I] Unable to initialize backend 'tpu': cannot open "
         "shared object file (1:xla_bridge.py:925)\n"
         "step 0 loss 2.31\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/u/policy/train.py\", line 80, in <module>\n"
         "    mesh = make_mesh(cfg.fsdp_devices)\n"
         "ValueError: Number of devices 2 must be divisible by the number of "
         "FSDP devices 4.\n",
         8, "user", "none");
  /* On their own they are no failure. */
  expect("INFO:2025-01-04 03:14:41,011:jax._src.xla_bridge:925: Unable to "
         "initialize backend 'tpu': cannot open shared object file: No such "
         "file or directory\n"
         "step 0 loss 2.31\nstep 100 loss 1.2\n",
         0, NULL, NULL);
  /* The same message at error level is a cause. */
  expect("step 0 loss 2.31\n"
         "ERROR:loader: error while loading shared libraries: "
         "libcudnn_ops.so.9: cannot open shared object file: No such file "
         "or directory\n",
         2, "framework", "none");
}

SM_TEST(failure_communication_settings_of_the_job_are_user) {
  /* The error names the job's own setting. */
  expect("[1704067200.123] [n3:771 :0] ucp_context.c:1104 UCX  ERROR network "
         "device 'mlx5_9:1' is not available, please use one or more of: "
         "'eth0'(tcp), 'lo'(tcp)\n"
         "RuntimeError: UCX initialisation failed\n",
         1, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/ddp.py\", line 20, in <module>\n"
         "    dist.init_process_group('gloo')\n"
         "RuntimeError: [enforce fail at gloo/transport/tcp/device.cc:83] ifa "
         "!= nullptr. Unable to find address for: ib7\n",
         4, "user", "none");
  expect("n2:100:100 [0] NCCL WARN Invalid value 'fast' for NCCL_PROTO, "
         "using default\n"
         "n2:100:100 [0] NCCL WARN Error : no algorithm/protocol available\n",
         1, "user", "none");
  /* NCCL retrying a connection and getting through is no failure. */
  expect("n2:100:100 [0] NCCL WARN socketStartConnect: Connect to "
         "10.1.0.6<43215> failed : Connection refused, retrying...\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\n",
         0, NULL, NULL);
  /* A setting shown before a transport fault, with no training between:
   * the first use of the job's setting failed. */
  expect("n5:200:200 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to "
         "ens9\n"
         "n5:200:200 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to "
         "7\n"
         "n5:200:200 [0] NCCL INFO Channel 00/02 : 0 1 2 3\n"
         "n5:200:205 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
         "completion from peer 10.1.0.6<51234> with status=12 opcode=0 len=0 "
         "vendor err 129 (Send)\n"
         "n5:200:205 [0] NCCL INFO transport/net.cc:1008 -> 6\n",
         4, "user", "none");
  /* The same fault after hours of training with that setting: the
   * setting worked, the fabric failed. */
  {
    sm_buf b;
    sm_buf_init(&b, (size_t)1 << 24);
    sm_buf_addf(&b, "n5:200:200 [0] NCCL INFO NCCL_IB_GID_INDEX set by "
                    "environment to 3\n");
    training(&b, 1, 50);
    sm_buf_addf(&b, "n5:200:205 [0] transport/net_ib.cc:1295 NCCL WARN "
                    "NET/IB : Got completion from peer 10.1.0.6<51234> with "
                    "status=12 opcode=0 len=0 vendor err 129 (Send)\n");
    sm_buf_addc(&b, '\0');
    expect(b.data, 52, "infrastructure", "network");
    sm_buf_release(&b);
  }
  /* nccl-tests rows are progress too: the setting had worked. */
  expect("n5:200:200 [0] NCCL INFO NCCL_IB_GID_INDEX set by environment to "
         "3\n"
         "     8388608       2097152     float     sum      -1   812.1   "
         "10.33   19.37      0\n"
         "    16777216       4194304     float     sum      -1  1533.0   "
         "10.94   20.52      0\n"
         "n5:200:205 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
         "completion from peer 10.1.0.6<51234> with status=12 opcode=0 len=0 "
         "vendor err 129 (Send)\n",
         4, "infrastructure", "network");
  /* A launcher flag for the rendezvous, then the store never answers. */
  expect("+ torchrun --nnodes=2 --master_addr=10.9.9.9 --master_port=29400 "
         "train.py\n"
         "torch.distributed.DistNetworkError: The client socket has timed "
         "out after 900s while trying to connect to (10.9.9.9, 29400).\n",
         2, "user", "none");
}

SM_TEST(failure_rendezvous_init_method_is_a_setting_of_the_job) {
  /* The program prints its file:// rendezvous, NCCL's connect retries run
   * out before any training: the job's rendezvous (a stale store file
   * naming a dead master, a wrong address), not the network. */
  expect("world_size=2 rank=1\n"
         "using init_method='file:///shared/runs/r7/ddp.init'\n"
         "w2:3001:3090 [0] NCCL INFO Call to connect returned Connection "
         "refused, retrying\n"
         "w2:3001:3090 [0] NCCL INFO Call to connect returned Connection "
         "refused, retrying\n"
         "w2:3001:3090 [0] misc/socket.cc:512 NCCL WARN socketStartConnect: "
         "Connect to 172.16.4.20<40113> failed : Connection refused\n"
         "w2:3001:3090 [0] NCCL INFO bootstrap.cc:77 -> 6\n",
         5, "user", "none");
  expect("dist_url: tcp://172.16.4.1:23456\n"
         "w3:41:41 [0] NCCL WARN Connect to 172.16.4.1<23456> failed : No "
         "route to host\n",
         2, "user", "none");
  /* After training the same failure is the network's, below the gate. */
  {
    sm_buf b;
    sm_diagnosis d;
    sm_buf_init(&b, (size_t)1 << 24);
    sm_buf_addf(&b, "using init_method='tcp://172.16.4.1:23456'\n");
    training(&b, 1, 30);
    sm_buf_addf(&b, "w2:3001:3090 [0] NCCL WARN Connect to 172.16.4.9<40113> "
                    "failed : Connection timed out\n");
    sm_buf_addc(&b, '\0');
    expect(b.data, 32, "infrastructure", "network");
    run(b.data, &d);
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
}

SM_TEST(failure_collectives_timing_out_at_setup_are_the_jobs) {
  /* One rank prepares data for longer than the collective timeout while
   * the others wait in their third collective: the ranks were never in
   * step; no network fault is reported. */
  expect("Tokenizing shards:  96%|#########6| 48/50 [41:02<01:40, 51.3s/it]\n"
         "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=2, OpType=BROADCAST, "
         "NumelIn=4, NumelOut=4, Timeout(ms)=600000) ran for 600412 "
         "milliseconds before timing out.\n"
         "[rank3]:[E ProcessGroupNCCL.cpp:630] [Rank 3] Some NCCL operations "
         "have failed or timed out.\n",
         2, "user", "none");
  expect("[rank1]:[E1203 04:05:06.070809 ProcessGroupNCCL.cpp:1834] [PG ID "
         "0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 1, last "
         "enqueued NCCL work: 1, last completed NCCL work: 0.\n",
         1, "user", "none");
  /* A timeout deep into training keeps the generic reading. */
  {
    sm_buf b;
    sm_diagnosis d;
    sm_buf_init(&b, (size_t)1 << 24);
    training(&b, 1, 40);
    sm_buf_addf(&b, "[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog "
                    "caught collective operation timeout: "
                    "WorkNCCL(SeqNum=88213, OpType=ALLREDUCE, NumelIn=1024, "
                    "NumelOut=1024, Timeout(ms)=600000) ran for 600019 "
                    "milliseconds before timing out.\n");
    sm_buf_addc(&b, '\0');
    expect(b.data, 41, "infrastructure", "network");
    run(b.data, &d);
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
  /* An early timeout after a transport error: the transport error is the
   * cause and wins over the timeout. */
  expect("n7:900:950 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
         "completion from peer 10.2.0.8<50111> with status=12 opcode=0 "
         "len=0 vendor err 129 (Recv)\n"
         "[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, "
         "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600100 "
         "milliseconds before timing out.\n",
         1, "infrastructure", "network");
}

SM_TEST(failure_version_mismatches_are_framework) {
  expect("E0101 01:23:25.684156 2624 client.cc:3077] Execution of replica 0 "
         "failed: UNIMPLEMENTED: graph capture is not implemented for CUDA "
         "below version 12.3.\n"
         "jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: graph capture "
         "is not implemented for CUDA below version 12.3.\n",
         1, "framework", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/run.py\", line 3, in <module>\n"
         "    import fastkernels\n"
         "RuntimeError: fastkernels requires CUDA 12.1 or newer, found 11.8\n",
         4, "framework", "none");
  expect("ImportError: this build of the extension is only supported with "
         "torch>=2.3, please upgrade torch\n",
         1, "framework", "none");
}

SM_TEST(failure_gpu_memory_held_by_others_is_infrastructure) {
  /* PyTorch 2.x report: this process holds little of a full GPU. */
  expect("step 1 loss 2.0\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
         "GiB. GPU 0 has a total capacity of 79.10 GiB of which 312.00 MiB is "
         "free. Process 4411 has 71.20 GiB memory in use. Including "
         "non-PyTorch memory, this process has 7.50 GiB memory in use. Of the "
         "allocated memory 6.10 GiB is allocated by PyTorch, and 0.90 GiB is "
         "reserved by PyTorch but unallocated.\n",
         2, "infrastructure", "gpu");
  /* The job fills the GPU itself: its own sizing. */
  expect("step 1 loss 2.0\n"
         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
         "GiB. GPU 0 has a total capacity of 79.10 GiB of which 312.00 MiB is "
         "free. Process 4411 has 0.40 GiB memory in use. Including "
         "non-PyTorch memory, this process has 78.30 GiB memory in use. Of "
         "the allocated memory 75.10 GiB is allocated by PyTorch, and 2.10 "
         "GiB is reserved by PyTorch but unallocated.\n",
         2, "user", "gpu_memory");
  /* The older report: capacity, allocated, free, reserved. */
  expect("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU "
         "0; 15.78 GiB total capacity; 1.43 GiB already allocated; 11.88 MiB "
         "free; 1.55 GiB reserved in total by PyTorch)\n",
         1, "infrastructure", "gpu");
  expect("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU "
         "0; 15.78 GiB total capacity; 14.43 GiB already allocated; 11.88 MiB "
         "free; 14.55 GiB reserved in total by PyTorch)\n",
         1, "user", "gpu_memory");
  /* Several other processes: perhaps the job's own ranks, all on GPU 0;
   * still the GPU's memory, but not sure enough to fence off the node. */
  {
    sm_diagnosis d;
    run("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 "
        "GiB. GPU 0 has a total capacity of 39.40 GiB of which 20.00 MiB is "
        "free. Process 71 has 9.80 GiB memory in use. Process 72 has 9.80 "
        "GiB memory in use. Process 73 has 9.80 GiB memory in use. "
        "Including non-PyTorch memory, this process has 9.70 GiB memory in "
        "use.\n",
        &d);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
  }
  /* No arithmetic in the report: the job's. */
  expect("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of "
         "memory while trying to allocate 4294967296 bytes.\n",
         1, "user", "gpu_memory");
  /* Out of memory while the CUDA context is created: the job holds
   * nothing yet, so the GPU was already full (others'), below the gate. */
  {
    static const char *const ctx[] = {
        "2026-02-03 10:11:12.000001: E xla/stream_executor/cuda/"
        "cuda_driver.cc:268] failed initializing StreamExecutor for CUDA "
        "device ordinal 1: INTERNAL: failed call to cuCtxCreate: "
        "CUDA_ERROR_OUT_OF_MEMORY: out of memory; total memory reported: "
        "25438126080\n",
        "jcuda.CudaException: cuDevicePrimaryCtxRetain failed: "
        "CUDA_ERROR_OUT_OF_MEMORY\n",
        "fatal: error while creating the CUDA context on device 2: out of "
        "memory\n",
    };
    for (size_t i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
      sm_diagnosis d;
      run(ctx[i], &d);
      ASSERT_STREQ(d.category, "infrastructure");
      ASSERT_STREQ(d.component, "gpu");
      ASSERT(d.confidence < 0.8);
      sm_diagnosis_release(&d);
    }
  }
  /* The same driver error from an allocation in a running job: its own. */
  expect("step 40 loss 1.2\n"
         "RuntimeError: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: out of "
         "memory (requested 8589934592 bytes)\n",
         2, "user", "gpu_memory");
}

SM_TEST(failure_reraised_worker_error_is_reported_where_it_first_appears) {
  sm_diagnosis d;
  int chain = 0;

  run("step 40 loss 1.7\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/seg/train.py\", line 90, in <module>\n"
      "    for batch in loader:\n"
      "  File \"/opt/v/lib/python3.11/site-packages/torch/_utils.py\", line "
      "700, in reraise\n"
      "    raise exception\n"
      "FileNotFoundError: Caught FileNotFoundError in DataLoader worker "
      "process 1.\n"
      "Original Traceback (most recent call last):\n"
      "  File \"/home/u/seg/data.py\", line 31, in __getitem__\n"
      "    mask = load(self.masks[i])\n"
      "FileNotFoundError: [Errno 2] No such file or directory: "
      "'/data/masks/0042.png'\n",
      &d);
  ASSERT_EQ(d.first_error_line, 7);
  ASSERT_STREQ(d.category, "user");
  ASSERT_STREQ(d.evidence[0].role, "cause");
  ASSERT_EQ(d.evidence[0].line, 7);
  for (int i = 0; i < d.n_evidence; i++)
    if (strcmp(d.evidence[i].role, "chain") == 0 && d.evidence[i].line == 11)
      chain = 1;
  ASSERT(chain);
  sm_diagnosis_release(&d);
  /* A different exception type after the wrapper is not its original. */
  expect("KeyError: Caught KeyError in DataLoader worker process 0.\n"
         "Original Traceback (most recent call last):\n"
         "  File \"/home/u/d.py\", line 3, in f\n"
         "    x = int(s)\n"
         "ValueError: invalid literal for int() with base 10: 'x'\n",
         5, "user", "none");
}

SM_TEST(failure_chain_and_shim_frames_decide_user_or_framework) {
  /* The first exception's traceback shows only the config system's
   * frame; the chain's later traceback shows the job's code calling it:
   * the job's configuration. */
  expect("Traceback (most recent call last):\n"
         "  File \"/opt/env/lib/python3.10/site-packages/cfgsys/build.py\", "
         "line 92, in _call\n"
         "    return target(*args, **kwargs)\n"
         "TypeError: __init__() missing 1 required positional argument: "
         "'vocab_path'\n"
         "\n"
         "The above exception was the direct cause of the following "
         "exception:\n"
         "\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/u/nlp/train.py\", line 40, in main\n"
         "    model = cfgsys.build(cfg.model)\n"
         "  File \"/opt/env/lib/python3.10/site-packages/cfgsys/build.py\", "
         "line 97, in build\n"
         "    raise BuildError(msg) from e\n"
         "cfgsys.errors.BuildError: Error building 'nlp.Model'\n",
         4, "user", "none");
  /* A package's entry-point script and the package itself: no frame of
   * the job's code, so the package's own bug. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/venv/bin/fitmodel\", line 8, in <module>\n"
         "    sys.exit(main())\n"
         "  File \"/home/u/venv/lib/python3.9/site-packages/fitpkg/cli.py\", "
         "line 60, in main\n"
         "    run(args)\n"
         "  File \"/home/u/venv/lib/python3.9/site-packages/fitpkg/loop.py\", "
         "line 231, in run\n"
         "    if stop and epoch < swa.start:\n"
         "AttributeError: 'NoneType' object has no attribute 'start'\n",
         8, "framework", "none");
  /* A script of the job's own, with an extension, is the job's. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/proj/bin/train.py\", line 8, in <module>\n"
         "    main()\n"
         "  File \"/home/u/venv/lib/python3.9/site-packages/fitpkg/loop.py\", "
         "line 231, in run\n"
         "    if stop and epoch < swa.start:\n"
         "AttributeError: 'NoneType' object has no attribute 'start'\n",
         6, "user", "none");
}

SM_TEST(failure_pickling_the_jobs_objects_is_user) {
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/train.py\", line 200, in save\n"
         "    torch.save(state, path)\n"
         "  File \"/opt/v/lib/python3.11/site-packages/torch/serialization.py\""
         ", line 850, in _save\n"
         "    pickler.dump(obj)\n"
         "AttributeError: Can't pickle local object "
         "'build.<locals>.<lambda>'\n",
         6, "user", "none");
}

SM_TEST(failure_cascade_never_outranks_its_start) {
  /* An Xid, then every rank's teardown and watchdog reports. */
  expect("step 900 loss 1.1\n"
         "[Tue Mar  4 10:00:01 2025] NVRM: Xid (PCI:0000:b3:00): 79, pid=77, "
         "GPU has fallen off the bus.\n"
         "[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught "
         "collective operation timeout: WorkNCCL(SeqNum=88, "
         "OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
         "[rank2]: RuntimeError: CUDA error: unspecified launch failure\n"
         "W0304 10:10:01.000 1 api.py:858] Sending process 71 closing signal "
         "SIGTERM\n"
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
         "  exitcode  : 1 (pid: 71)\n",
         2, "infrastructure", "gpu");
}

/* ==== Round 2: classes met on logs the handler had not seen ==== */

SM_TEST(failure_signals_from_the_session_are_user) {
  /* The launcher's agent gets a hangup: its shell or SSH session ended. */
  expect("step 88 loss 0.41\n"
         "step 89 loss 0.40\n"
         "WARNING:torch.distributed.elastic.agent.server.api:Received 1 "
         "death signal, shutting down workers\n"
         "WARNING:torch.distributed.elastic.multiprocessing.api:Sending "
         "process 5120 closing signal SIGHUP\n"
         "Traceback (most recent call last):\n"
         "  File \"/opt/env/bin/torchrun\", line 8, in <module>\n"
         "    sys.exit(main())\n"
         "  File \"/opt/env/lib/python3.10/site-packages/torch/distributed/"
         "elastic/multiprocessing/api.py\", line 62, in _terminate\n"
         "    raise SignalException(f\"Process {os.getpid()} got signal\")\n"
         "torch.distributed.elastic.multiprocessing.api.SignalException: "
         "Process 5101 got signal: 1\n",
         3, "user", "none");
  /* The exception alone, an interrupt. */
  expect("epoch 3 | it 400 | loss 1.2\n"
         "torch.distributed.elastic.multiprocessing.api.SignalException: "
         "Process 77 got signal: 2\n",
         2, "user", "none");
  /* A shell's job report, and another launcher's wording. */
  expect("[1]+  Hangup                  python train.py --cfg cfg/b.yaml\n", 1,
         "user", "none");
  expect("[2025-02-01 10:00:00,001] [INFO] [launch.py:319:main] training "
         "started\n"
         "[2025-02-01 11:00:00,001] [ERROR] [launch.py:321:sigkill_handler] "
         "got SIGINT, killing subprocess 4410\n",
         2, "user", "none");
  /* A termination from outside (scheduler, preemption) is not the job's
   * and not the framework's: with nothing else, the class is unknown. */
  expect("step 88 loss 0.41\n"
         "WARNING:torch.distributed.elastic.agent.server.api:Received 15 "
         "death signal, shutting down workers\n"
         "torch.distributed.elastic.multiprocessing.api.SignalException: "
         "Process 5101 got signal: 15\n",
         2, "unknown", "none");
}

SM_TEST(failure_events_from_outside_are_the_nodes_but_not_faults) {
  static const char *const logs[] = {
      /* A cloud's reclaim notice for a spot or preemptible machine. */
      "2025-03-01T10:00:00Z agent: instance metadata: preemption notice "
      "received, shutting down in 30s\n",
      "2025-03-01T10:00:00Z watcher: EC2 Spot Instance interruption notice: "
      "instance-action terminate at 2025-03-01T10:02:00Z\n",
      "2025-03-01T10:00:00Z vm-agent: ScheduledEvents: EventType=Preempt "
      "Resources=[trainer-7]\n",
      /* The machine powered off or shut down under the job. */
      "Mar  1 10:00:00 trainer-7 systemd-logind[812]: Power button "
      "pressed.\n",
      "Mar  1 10:00:00 trainer-7 kubelet[990]: Shutdown manager detected new "
      "shutdown event, isNodeShuttingDownNow: true\n",
      /* The scheduler's own word. */
      "slurmstepd: error: *** JOB 812 ON gpu-c12 CANCELLED AT "
      "2025-03-01T10:00:00 DUE TO PREEMPTION ***\n",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(logs); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    sm_buf_addf(&b, "step 1200 loss 0.91\n%s", logs[i]);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (d.first_error_line != 2 || strcmp(d.category, "infrastructure") ||
        strcmp(d.component, "node") || d.basis == NULL ||
        strcmp(d.basis, "event") || !(d.confidence <= SM__EV_CEILING))
      SM_FAIL_AT("case %zu: line %lld %s/%s basis %s conf %.2f (%s)", i,
                 d.first_error_line, d.category, d.component,
                 d.basis ? d.basis : "-", d.confidence,
                 d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
}

SM_TEST(failure_worker_that_died_without_its_own_error) {
  /* Only the parent's notice: the system ended the worker (shared or host
   * memory), weakly the node's. */
  {
    sm_diagnosis d;
    run("Epoch 2:  41%|####      | 410/1000 [03:10<04:30]\n"
        "[rank0]: RuntimeError: DataLoader worker (pid(s) 3112, 3114) exited "
        "unexpectedly\n",
        &d);
    ASSERT_EQ(d.first_error_line, 2);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT_STREQ(d.component, "node");
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
  }
  /* The worker's own error says which resource. */
  expect("ERROR: Unexpected bus error encountered in worker. This might be "
         "caused by insufficient shared memory (shm).\n"
         "RuntimeError: DataLoader worker (pid(s) 901) exited unexpectedly\n",
         1, "infrastructure", "node");
  /* The worker's own exception is the cause. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/ds.py\", line 12, in __getitem__\n"
         "    return self.items[k]['img']\n"
         "KeyError: 'img'\n"
         "RuntimeError: DataLoader worker (pid(s) 901) exited unexpectedly\n",
         4, "user", "none");
}

SM_TEST(failure_api_drift_between_code_and_library_is_framework) {
  /* A keyword the installed library version does not take, at the job's
   * call site. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/lm/finetune.py\", line 61, in <module>\n"
         "    trainer = pl.Trainer(gpus=4, max_epochs=3)\n"
         "TypeError: Trainer.__init__() got an unexpected keyword argument "
         "'gpus'\n",
         4, "framework", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/sft.py\", line 90, in main\n"
         "    t = SFTTrainer(model=m, tokenizer=tok, args=cfg)\n"
         "TypeError: __init__() got an unexpected keyword argument "
         "'tokenizer'\n",
         4, "framework", "none");
  expect("  File \"/home/u/plot_hist.py\", line 7, in <module>\n"
         "    h, e = np.histogram(x, bins=50, normed=True)\n"
         "TypeError: histogram() got an unexpected keyword argument 'normed'\n",
         3, "framework", "none");
  /* A configuration system building the job's own class from its config:
   * the config has a key the class lacks. */
  expect("Error executing job with overrides: []\n"
         "hydra.errors.InstantiationException: Error in call to target "
         "'seg.nets.UNet':\n"
         "TypeError(\"__init__() got an unexpected keyword argument "
         "'depth'\")\n",
         2, "user", "none");
  /* An attribute missing from a module: a package's version, or the job's
   * own module. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/eval.py\", line 30, in <module>\n"
         "    labels = labels.astype(np.int)\n"
         "  File \"/opt/env/lib/python3.11/site-packages/numpy/__init__.py\", "
         "line 324, in __getattr__\n"
         "    raise AttributeError(__former_attrs__[attr])\n"
         "AttributeError: module 'numpy' has no attribute 'int'.\n",
         6, "framework", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/proj/train.py\", line 14, in <module>\n"
         "    loader = helpers.build_loader(cfg)\n"
         "  File \"/home/u/proj/helpers/__init__.py\", line 1, in <module>\n"
         "    pass\n"
         "AttributeError: module 'helpers' has no attribute 'build_loader'\n",
         6, "user", "none");
}

SM_TEST(failure_traceback_cut_before_its_exception) {
  /* A pasted traceback that stops at the raise statement, in a library the
   * job called. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/run.py\", line 20, in <module>\n"
         "    main()\n"
         "  File \"/opt/env/lib/python3.9/site-packages/tok/vocab.py\", line "
         "88, in load\n"
         "    raise KeyError(f'unknown token {t}')\n",
         5, "user", "none");
  /* Only library frames. */
  expect("Traceback (most recent call last):\n"
         "  File \"/opt/env/lib/python3.9/site-packages/tool/cli.py\", line 9, "
         "in main\n"
         "    run()\n"
         "  File \"/opt/env/lib/python3.9/site-packages/tool/core.py\", line "
         "40, in run\n"
         "    raise RuntimeError('bad state')\n",
         5, "framework", "none");
  /* No raise statement: the last line, judged by its frame (the job's
   * code here), weakly (test_failure_runtimes.c). */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/run.py\", line 20, in <module>\n"
         "    main()\n"
         "  File \"/home/u/run.py\", line 12, in main\n"
         "    model.fit(x)\n",
         5, "user", "none");
  /* No frames at all to judge by: unknown. */
  expect("Traceback (most recent call last):\n"
         "    model.fit(x)\n",
         2, "unknown", "none");
}

SM_TEST(failure_words_of_cascades_and_errnos_in_their_context) {
  /* "terminated" inside a CUDA message is not the scheduler's kill. */
  expect("step 5 loss 1.0\n"
         "RuntimeError: CUDA error: the launch timed out and was terminated\n",
         2, "unknown", "none");
  /* A shell's report of a terminated child is a symptom. */
  {
    sm_diagnosis d;
    run("step 5 loss 1.0\n"
        "/var/spool/slurmd/job77/slurm_script: line 9: 4121 Terminated      "
        "        python train.py\n",
        &d);
    ASSERT_EQ(d.first_error_line, 2);
    ASSERT_STREQ(d.signature, "scheduler-job-killed");
    sm_diagnosis_release(&d);
  }
  /* A C++ exception's what(): restating a generic CUDA error takes the
   * error's class. */
  expect("terminate called after throwing an instance of 'c10::Error'\n"
         "  what():  CUDA error: an illegal memory access was encountered\n",
         2, "framework", "none");
  /* The application's EIO: storage, but not sure enough to act on. */
  {
    sm_diagnosis d;
    run("step 5 loss 1.0\n"
        "OSError: [Errno 5] Input/output error: '/mnt/drive/data/shard_07'\n",
        &d);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT_STREQ(d.component, "storage");
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
    /* The kernel's report of the device is a fault of the storage. */
    run("step 5 loss 1.0\n"
        "[ 9001.22] blk_update_request: I/O error, dev nvme1n1, sector "
        "81920 op 0x0:(READ)\n",
        &d);
    ASSERT_STREQ(d.component, "storage");
    ASSERT(d.confidence >= 0.8);
    sm_diagnosis_release(&d);
  }
  /* ENOTCONN on a socket is a peer gone; on a file, a mount gone. */
  {
    sm_diagnosis d;
    run("step 5 loss 1.0\n"
        "RuntimeError: [c10d] recv failed on socket: Transport endpoint is "
        "not connected\n",
        &d);
    ASSERT_STREQ(d.signature, "nccl-remote-peer-gone");
    sm_diagnosis_release(&d);
    run("step 5 loss 1.0\n"
        "OSError: [Errno 107] Transport endpoint is not connected: "
        "'/content/drive/MyDrive/ds'\n",
        &d);
    ASSERT_STREQ(d.component, "storage");
    ASSERT(d.confidence < 0.8);
    sm_diagnosis_release(&d);
  }
  /* A build tool's failure reported through subprocess is the
   * extension build's, not a launcher's exit. */
  expect("subprocess.CalledProcessError: Command '['ninja', '-v']' returned "
         "non-zero exit status 1.\n",
         1, "framework", "none");
}

SM_TEST(failure_version_requirements_of_any_library_are_framework) {
  static const char *const lines[] = {
      "ImportError: tokenmill>=0.20.3 is required for a normal functioning "
      "of this module, but found tokenmill==0.19.0.",
      "RuntimeError: the plugin requires ops-kernels >= 2.4, but you have "
      "ops-kernels 2.1.0",
      "ValueError: The checkpoint you are trying to load has model type "
      "`zeta3` but Transformers does not recognize this architecture.",
      "RuntimeError: your version of fastloader is out of date; please "
      "upgrade fastloader to 1.8 or later",
      "_pickle.UnpicklingError: Weights only load failed. Re-running "
      "`torch.load` with `weights_only` set to `False` will likely succeed",
      "NotImplementedError: The operator 'aten::_foreach_norm' is not "
      "currently implemented for the MPS device.",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(lines); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 14);
    sm_buf_addf(&b, "step 1 loss 2.0\n%s\n", lines[i]);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (d.first_error_line != 2 || strcmp(d.category, "framework") != 0)
      SM_FAIL_AT("case %zu: line %lld %s (%s)", i, d.first_error_line,
                 d.category, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
  /* A lazy import's wrapper: the inner import error decides. */
  expect("RuntimeError: Failed to import pkgx.models.big because of the "
         "following error (look up to see its traceback):\n"
         "No module named 'flash_attn_2_cuda'\n",
         2, "framework", "none");
  /* Not a pickling error of the job: the word inside another. */
  {
    sm_sigmatch m;
    const char *l = "torch.serialization.pickle.UnpicklingError: Weights "
                    "only load failed";
    ASSERT(sm_sigdb_match(db_get(), l, strlen(l), &m));
    ASSERT(strcmp(m.name, "pickle-own-object") != 0);
  }
}

SM_TEST(failure_a_launchers_signal_exit_takes_the_signals_class) {
  /* torchrun's summary of a worker killed by a signal, with nothing else
   * in the log: the signal says what happened. */
  static const struct {
    int sig;
    const char *cat, *comp;
  } cases[] = {
      {9, "infrastructure", "node"}, /* SIGKILL: the OOM killer, weakly */
      {7, "infrastructure", "node"}, /* SIGBUS: shared memory */
      {11, "framework", "none"},     /* SIGSEGV: a native crash */
      {1, "user", "none"},           /* SIGHUP: the session ended */
      {15, "unknown", "none"},       /* SIGTERM: from outside */
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 14);
    sm_buf_addf(&b,
                "step 1 loss 2.0\n"
                "E0301 10:00:00.000 1 api.py:881] failed (exitcode: -%d) "
                "local_rank: 0 (pid: 4121) of binary: /usr/bin/python3\n",
                cases[i].sig);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (d.first_error_line != 2 || strcmp(d.category, cases[i].cat) ||
        strcmp(d.component, cases[i].comp) ||
        (strcmp(d.category, "infrastructure") == 0 && d.confidence >= 0.8))
      SM_FAIL_AT("signal %d: line %lld %s/%s conf %.2f (%s)", cases[i].sig,
                 d.first_error_line, d.category, d.component, d.confidence,
                 d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
}

SM_TEST(failure_an_error_the_job_survived_in_a_short_log) {
  /* A preamble's error, then training, then the job's own failure: in a
   * log shorter than one chunk too. */
  static const char *const decoys[] = {
      "df: /mnt/archive: Stale file handle",
      "tee: /logs/run.txt: No space left on device",
      "E0301 10:00:00.000000 1 cuda_driver.cc:152] failed call to cuInit: "
      "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
      "Failed to load image Python extension: libc10_cuda.so: cannot open "
      "shared object file: No such file or directory",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(decoys); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    sm_buf_addf(&b, "%s\n", decoys[i]);
    training(&b, 1, 12);
    sm_buf_addf(&b, "Traceback (most recent call last):\n"
                    "  File \"/home/u/train.py\", line 9, in <module>\n"
                    "    x = batch['img']\n"
                    "KeyError: 'img'\n");
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (d.first_error_line != 17 || strcmp(d.category, "user") != 0)
      SM_FAIL_AT("decoy %zu: line %lld %s (%s)", i, d.first_error_line,
                 d.category, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
  /* Other ranks train on after a GPU fault, then time out: symptoms do not
   * make the fault a survived one. */
  {
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    sm_buf_addf(&b, "[rank3]: RuntimeError: CUDA error: uncorrectable ECC "
                    "error encountered\n");
    training(&b, 1, 6);
    sm_buf_addf(&b, "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog "
                    "caught collective operation timeout: WorkNCCL(SeqNum=9, "
                    "OpType=ALLREDUCE) ran for 600000 milliseconds before "
                    "timing out.\n");
    sm_buf_addc(&b, '\0');
    expect(b.data, 1, "infrastructure", "gpu");
    sm_buf_release(&b);
  }
  /* The same error after every restart: the first occurrence. */
  {
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    for (int k = 0; k < 3; k++) {
      training(&b, 1, 5);
      sm_buf_addf(&b, "ValueError: bad shard header in /data/s_%d\n", k);
    }
    sm_buf_addc(&b, '\0');
    expect(b.data, 6, "user", "none");
    sm_buf_release(&b);
  }
}

SM_TEST(failure_wrapped_exceptions_and_launchers_signal_reports) {
  /* Ray names the original type in its wrapper. */
  expect("(TrainWorker pid=77, ip=10.0.0.1) epoch 1 step 30 loss 1.10\n"
         "ray.exceptions.RayTaskError(KeyError): ray::TrainWorker.run() "
         "(pid=77, ip=10.0.0.1)\n",
         2, "user", "none");
  expect("ray.exceptions.RayTaskError(ModuleNotFoundError): ray::f() "
         "(pid=9)\n"
         "ModuleNotFoundError: No module named 'flash_attn'\n",
         1, "framework", "none");
  /* A node running low on memory kills the task: a limit of the node. */
  expect("step 3 loss 1.0\n"
         "ray.exceptions.OutOfMemoryError: Task was killed due to the node "
         "running low on memory.\n",
         2, "infrastructure", "node");
  /* mpirun's report of a rank's signal. */
  expect("step 3 loss 1.0\n"
         "mpirun noticed that process rank 3 with PID 4121 on node gpu-a01 "
         "exited on signal 11 (Segmentation fault).\n",
         2, "framework", "none");
  expect("step 3 loss 1.0\n"
         "mpirun noticed that process rank 3 with PID 4121 on node gpu-a01 "
         "exited on signal 9 (Killed).\n",
         2, "infrastructure", "node");
}

SM_TEST(failure_fabric_devices_the_job_cannot_see_are_user) {
  /* libfabric finds no provider at all: the job's container or
   * environment does not expose the fabric devices. */
  expect("step 0 loading shards\n"
         "[2026-01-05 08:00:01] gpu-h7:4410:4418 [3] "
         "nccl_net_ofi_rdma_init:8100 NCCL WARN NET/OFI OFI fi_getinfo() "
         "call failed: No data available\n",
         2, "user", "none");
  expect("gpu-h7:4410:4418 [3] NCCL WARN NET/OFI fi_getinfo failed, rc "
         "-61\n",
         1, "user", "none");
  /* A provider probed and skipped while training goes on: no failure. */
  {
    sm_buf b;
    sm_buf_init(&b, 1 << 14);
    sm_buf_adds(&b, "libfabric:900:1767600000::core:core:fi_getinfo_():1400"
                    "<warn> fi_getinfo: provider efa output empty list\n");
    training(&b, 1, 8);
    sm_buf_addc(&b, '\0');
    expect(b.data, 0, NULL, NULL);
    sm_buf_release(&b);
  }
  /* A transfer that fails on a fabric the job does see stays the
   * network's. */
  expect("step 40 loss 2.1\n"
         "gpu-h7:4410:4418 [3] NCCL WARN NET/OFI Request 0x7f00 completed "
         "with error. RC: 21. Error: 5 (Input/output error)\n",
         2, "infrastructure", "network");
  /* Malformed: the words cut short (the plugin's start-up failure, no
   * answer about devices), or without the failure. */
  expect("NCCL WARN NET/OFI fi_getinfo\n", 1, "infrastructure", "network");
  expect("fi_getinfo No data avail\xff\xfe\n", 0, NULL, NULL);
}
