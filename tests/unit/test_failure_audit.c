/* test_failure_audit.c - classes of root cause added by the signature
 * audit, each on lines written for these tests in shapes other than the
 * ones first seen: MPI launchers' prose messages (InfiniBand retries
 * exhausted, a lost remote daemon); numerical divergence caught by a
 * library's own guard; version requirements and mismatches worded as
 * sentences; a runtime's heap limit; .NET and Julia error forms; an
 * object of a library's class lacking an attribute; a kernel failing
 * without a reason; the job's own CUDA context in an out-of-memory report
 * without the process's figure; the scheduler's record of a SIGKILL; Xid
 * 121-123.  Ambiguous verdicts never isolate or restart. */
#include <string.h>

#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

static void expect_at(int where, const char *log, long line, const char *cat,
                      const char *comp) {
  expect_diag_at(where, log, line, cat, comp, NULL);
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

static int acts(const char *log) {
  return plan_acts(log, "gn-07");
}

/* The reason of the diagnosis of log contains word (1) or not (0). */
static int reason_has(const char *log, const char *word) {
  sm_diagnosis d;
  int r;

  run(log, &d);
  r = d.reason != NULL && strstr(d.reason, word) != NULL;
  sm_diagnosis_release(&d);
  return r;
}

SM_TEST(failure_audit_mpi_prose_messages) {
  /* Open MPI's help text, under the launcher's dashes, after progress. */
  expect("iter 1200 | loss 1.04 | 0.31 s/iter\n"
         "iter 1210 | loss 1.03 | 0.31 s/iter\n"
         "------------------------------------------------------------\n"
         "The InfiniBand retry count between two MPI processes has been "
         "exceeded.  \"Retry count\" is defined in the InfiniBand spec.\n"
         "    Local host:   a100-n12\n"
         "    Local device: mlx5_3\n"
         "    Peer host:    a100-n31\n",
         4, "infrastructure", "network");
  /* The same, worded by another release as a counter towards a host. */
  expect("epoch 3 batch 90 loss 0.88\n"
         "[a100-n12:41120] transport retry counter to a100-n31 has been "
         "exceeded (mlx5_0:1)\n"
         "mpirun: Forwarding signal 18 to job\n",
         2, "infrastructure", "network");
  /* A launcher that lost its daemon on another node: the node, inferred,
   * never a reason to isolate. */
  expect("step 50 loss 2.2\n"
         "PRTE has lost communication with a remote daemon.\n"
         "  HNP daemon   : [prterun-login1-3321@0,0] on node login1\n"
         "  Remote daemon: [prterun-login1-3321@0,2] on node gpu-b04\n",
         2, "infrastructure", "node");
  if (acts("step 50 loss 2.2\n"
           "ORTE has lost communication with its daemon on node gpu-b04\n"))
    SM_FAIL_AT("a lost daemon must not isolate or restart");
}

SM_TEST(failure_audit_divergence_guards_are_the_jobs) {
  /* Keras' TerminateOnNaN callback, after a progress bar showing nan. */
  expect("Epoch 7/50\n"
         " 411/1563 [======>.......] - ETA: 1:02 - loss: nan - mae: nan\n"
         "Batch 411: Invalid loss, terminating training\n",
         3, "user", "none");
  /* Dynamic loss scaling at its floor, raised inside the library. */
  expect("[2025-02-01 09:00:01,000] [INFO] [loss_scaler.py:183:update_scale] "
         "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
         "1, reducing to 1\n"
         "Traceback (most recent call last):\n"
         "  File \"/usr/lib/python3/dist-packages/deepspeed/runtime/fp16/"
         "loss_scaler.py\", line 175, in update_scale\n"
         "    raise Exception(\n"
         "Exception: Current loss scale already at minimum - cannot decrease "
         "scale anymore. Exiting run.\n",
         5, "user", "none");
  /* Megatron's check of the local gradient norm. */
  expect(" iteration      900/  100000 | lm loss: 4.1E+00 |\n"
         "AssertionError: Rank 3: found NaN in local grad norm in backward "
         "pass before data-parallel communication collective. Device: 3, "
         "node: gpu-c11\n",
         2, "user", "none");
  /* torch's clip_grad_norm_(error_if_nonfinite=True). */
  expect("RuntimeError: The total norm of order 2.0 for gradients from "
         "`parameters` is non-finite, so it cannot be clipped. To disable "
         "this error and scale the gradients by the non-finite norm anyway, "
         "set `error_if_nonfinite=False`\n",
         1, "user", "none");
}

SM_TEST(failure_audit_versions_in_sentences_are_the_frameworks) {
  expect("ValueError: jaxlib is version 0.3.2, but this version of jax "
         "requires version 0.3.7.\n",
         1, "framework", "none");
  expect("RuntimeError: Found torch 1.12.1, but xformers requires torch "
         ">= 2.0 for memory-efficient attention\n",
         1, "framework", "none");
  /* A runtime library older than the build; the internal check after it
   * is its consequence. */
  expect("2025-01-09 10:00:00.000001: E external/xla/xla/stream_executor/"
         "cuda/cuda_dnn.cc:535] Loaded runtime cuDNN library: 8.1.0 but "
         "source was compiled with: 8.9.4.\n"
         "2025-01-09 10:00:00.000100: E external/xla/xla/service/gpu/"
         "gpu_compiler.cc:700] RET_CHECK failure dnn != nullptr\n",
         1, "framework", "none");
  /* Ranks on different NCCL builds, ahead of NCCL's usage error. */
  expect("h1:91:91 [0] NCCL WARN Mismatched NCCL version detected : rank 2 "
         "version 22005 rank 0 version 21903\n"
         "torch.distributed.DistBackendError: NCCL error: invalid usage, "
         "NCCL version 2.19.3\n",
         1, "framework", "none");
}

SM_TEST(failure_audit_runtime_heap_limits_are_the_jobs) {
  expect("epoch 1 loss 0.7\n"
         "<--- Last few GCs --->\n"
         "FATAL ERROR: Ineffective mark-compacts near heap limit Allocation "
         "failed - JavaScript heap out of memory\n",
         3, "user", "none");
  expect("INFO SparkContext: Running job 4\n"
         "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap "
         "space\n"
         "\tat java.util.Arrays.copyOf(Arrays.java:3236)\n",
         2, "user", "none");
}

SM_TEST(failure_audit_dotnet_and_julia_forms) {
  size_t skip;
  int tl;

  if (sm__runtime_error("Unhandled exception. System.IO.IOException: x", 45,
                        &skip, &tl) != SM__RT_DOTNET_HEAD ||
      skip != 21 || tl != 21)
    SM_FAIL_AT(".NET head: skip %zu type %d", skip, tl);
  if (sm__runtime_error(" ---> System.ArgumentException: y", 34, &skip, &tl) !=
      SM__RT_DOTNET_INNER)
    SM_FAIL_AT(".NET inner");
  if (sm__runtime_error("ERROR: LoadError: LoadError: DimensionMismatch: z", 49,
                        &skip, &tl) != SM__RT_JULIA ||
      skip != 29 || tl != 17)
    SM_FAIL_AT("Julia: skip %zu type %d", skip, tl);
  /* Not those forms: a plain "ERROR:" line, a lower-case word, an arrow
   * without a type, an unhandled exception without one. */
  if (sm__runtime_error("ERROR: the build failed", 23, &skip, &tl) ||
      sm__runtime_error("ERROR: LoadError: bad input", 27, &skip, &tl) ||
      sm__runtime_error("---> 12 x = f()", 15, &skip, &tl) ||
      sm__runtime_error("Unhandled exception. ", 21, &skip, &tl))
    SM_FAIL_AT("malformed forms recognised");

  /* .NET: the head with its frames; an inner exception is the root. */
  expect("info: Train[0] epoch 2 loss 0.30\n"
         "Unhandled exception. System.IO.DirectoryNotFoundException: Could "
         "not find a part of the path '/ckpt/run7'.\n"
         "   at System.IO.FileSystem.CreateDirectory(String fullPath) in "
         "/_/src/FileSystem.Unix.cs:line 313\n"
         "   at Train.Program.Main(String[] args) in /src/Train/Program.cs:"
         "line 48\n",
         2, "user", "none");
  expect("Unhandled exception. System.TypeInitializationException: The type "
         "initializer for 'TorchSharp.torch' threw an exception.\n"
         " ---> System.DllNotFoundException: Unable to load shared library "
         "'LibTorchSharp' or one of its dependencies.\n"
         "   at TorchSharp.torch.InitializeDeviceType(DeviceType t) in "
         "/src/TorchSharp/Torch.cs:line 120\n"
         "   --- End of inner exception stack trace ---\n"
         "   at Train.Program.Main(String[] args) in /src/Train/Program.cs:"
         "line 12\n",
         2, "framework", "none");
  /* Julia: the error over its stack; a missing package is the
   * environment's; CUDA.jl's out-of-memory is the job's sizing. */
  expect("[ Info: epoch 4, loss 0.0912\n"
         "ERROR: LoadError: DimensionMismatch: arrays could not be broadcast "
         "to a common size; got a dimension with lengths 32 and 64\n"
         "Stacktrace:\n"
         "  [1] _bcs1\n"
         "    @ ./broadcast.jl:555 [inlined]\n"
         "  [2] loss(m::Dense, x::Matrix{Float32})\n"
         "    @ Main /work/u/fit.jl:22\n"
         "in expression starting at /work/u/fit.jl:70\n",
         2, "user", "none");
  expect("ERROR: MethodError: no method matching forward(::Nothing)\n"
         "Stacktrace:\n"
         " [1] top-level scope\n"
         "   @ REPL[3]:1\n",
         1, "user", "none");
  expect("ERROR: LoadError: ArgumentError: Package Zygote not found in "
         "current path.\n"
         "- Run `import Pkg; Pkg.add(\"Zygote\")` to install the Zygote "
         "package.\n",
         1, "framework", "none");
  expect("ERROR: Out of GPU memory trying to allocate 512.000 MiB\n"
         "Effective GPU memory usage: 98.40% (23.3 GiB/23.7 GiB)\n",
         1, "user", "gpu_memory");
}

SM_TEST(failure_audit_library_object_attribute) {
  /* A bare line: an object of a class named after a package. */
  expect("AttributeError: 'LightningDataModule' object has no attribute "
         "'prepare_data_per_node'\n",
         1, "framework", "none");
  expect("AttributeError: 'HorovodOptimizer' object has no attribute "
         "'synchronize_grads'\n",
         1, "framework", "none");
  /* A short package name does not decide a class name (the job's own
   * TorchTrainer), nor does a class that only contains one. */
  if (reason_has("AttributeError: 'TorchTrainer' object has no attribute "
                 "'fit'\n",
                 "library's class") ||
      reason_has("AttributeError: 'MyDeepspeedWrapper' object has no "
                 "attribute 'step'\n",
                 "library's class") ||
      reason_has("AttributeError: 'Deepspeed' object has no attribute\n",
                 "library's class"))
    SM_FAIL_AT("the job's class read as a library's");
  /* With frames, the frames decide: raised in the job's code. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/u/fit.py\", line 9, in <module>\n"
         "    dm.setup_folds()\n"
         "AttributeError: 'LightningDataModule' object has no attribute "
         "'setup_folds'\n",
         4, "user", "none");
}

SM_TEST(failure_audit_kernel_failure_without_a_reason) {
  static const char *bare[] = {
      "RuntimeError: CUDA error: unspecified launch failure\n",
      "step 9 loss 1.1\nterminate called after throwing an instance of "
      "'c10::Error'\n  what():  CUDA error: unknown error\n",
      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: "
      "CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure\n",
  };
  sm_diagnosis d;

  for (size_t i = 0; i < SM_ARRAY_LEN(bare); i++) {
    run(bare[i], &d);
    if (!d.failure || strcmp(d.category, "infrastructure") != 0 ||
        strcmp(d.component, "gpu") != 0 || d.confidence >= 0.8)
      SM_FAIL_AT("case %zu: %s/%s %.2f (%s)", i, d.category, d.component,
                 d.confidence, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    if (acts(bare[i]))
      SM_FAIL_AT("case %zu: an inferred GPU fault must not act", i);
  }
  /* An application fault reported by the driver first decides. */
  expect("NVRM: Xid (PCI:0000:17:00): 13, pid=881, name=python3, Graphics "
         "Exception: ESR 0x50e730=0x8a000d 0x50e734=0x0\n"
         "RuntimeError: CUDA error: unspecified launch failure\n",
         1, "user", "none");
  /* A display watchdog or a fork after initialisation stays unknown. */
  expect("RuntimeError: CUDA error: the launch timed out and was "
         "terminated\n",
         1, "unknown", "none");
}

SM_TEST(failure_audit_oom_own_context_without_the_process_figure) {
  /* A small card: PyTorch holds nearly all of it; the rest is the job's
   * context. */
  expect("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB "
         "(GPU 0; 7.79 GiB total capacity; 5.90 GiB already allocated; "
         "20.31 MiB free; 6.30 GiB reserved in total by PyTorch)\n",
         1, "user", "gpu_memory");
  /* Most of the card is taken before the job holds much: others'. */
  expect("RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB "
         "(GPU 1; 10.76 GiB total capacity; 2.10 GiB already allocated; "
         "10.56 MiB free; 2.30 GiB reserved in total by PyTorch)\n",
         1, "infrastructure", "gpu");
  /* With the process's own figure, no allowance: its arithmetic stands. */
  expect("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
         "20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 10.00 "
         "MiB is free. Including non-PyTorch memory, this process has 5.40 "
         "GiB memory in use. Of the allocated memory 4.9 GiB is allocated "
         "by PyTorch, and 0.1 GiB is reserved by PyTorch but unallocated.\n",
         1, "infrastructure", "gpu");
}

SM_TEST(failure_audit_scheduler_sigkill_record_and_new_xids) {
  const char *ctld = "[2025-03-01T08:00:00.001] sched: Allocate JobId=9911 "
                     "NodeList=g017 #CPUs=8 Partition=gpu\n"
                     "[2025-03-01T09:12:44.310] _job_complete: JobId=9911 "
                     "WTERMSIG 9\n"
                     "[2025-03-01T09:12:44.311] _job_complete: JobId=9911 "
                     "done\n";
  expect(ctld, 2, "infrastructure", "node");
  if (acts(ctld))
    SM_FAIL_AT("a bare SIGKILL record must not act");
  /* Another signal is not a SIGKILL. */
  if (reason_has("_job_complete: JobId=9911 WTERMSIG 90\n", "node-sigkill"))
    SM_FAIL_AT("WTERMSIG 90 read as SIGKILL");
  expect("NVRM: Xid (PCI:0000:c1:00): 122, pid=0, SPI PMU RPC read failure\n"
         "RuntimeError: CUDA error: unknown error\n",
         1, "infrastructure", "gpu");
  if (acts("NVRM: Xid (PCI:0000:c1:00): 123, pid=0, SPI PMU RPC write "
           "failure\nRuntimeError: CUDA error: unknown error\n"))
    SM_FAIL_AT("Xid 123 is below the gate");
  if (acts("NVRM: Xid (PCI:0000:c1:00): 121, pid=0, C2C Link corrected "
           "error\nstep 3 loss 1.0\n"))
    SM_FAIL_AT("Xid 121 (corrected) must not act");
}

SM_TEST(failure_audit_scheduler_and_cluster_reports_of_a_node) {
  /* Slurm could not kill the step and drained the node. */
  expect("step 400 loss 1.2\n"
         "slurmstepd: error: *** STEP 811.0 STEPD TERMINATED ON a07 AT "
         "2025-04-01T03:00:00 DUE TO JOB NOT ENDING WITH SIGNALS ***\n",
         2, "infrastructure", "node");
  expect("[2025-04-01T03:00:00.000] error: Kill task failed for JobId=811 "
         "on node a07\n",
         1, "infrastructure", "node");
  /* The step could not be launched on a node, or credentials failed
   * (clock skew): inferred, never isolated. */
  expect("srun: error: Task launch for StepId=811.2 failed on node b12: "
         "Socket timed out on send/recv operation\n"
         "srun: error: Application launch failed: Socket timed out\n",
         1, "infrastructure", "node");
  if (acts("srun: error: Munge decode failed: Rewound credential\n"
           "srun: error: Unable to create step for job 811\n"))
    SM_FAIL_AT("a credential failure must not act");
  /* Ray's head losing a node, in two wordings. */
  expect("(RayTrainWorker pid=91) epoch 2 loss 0.4\n"
         "ray.exceptions.NodeDiedError: Node 10.2.3.4 died unexpectedly\n",
         2, "infrastructure", "node");
  expect("(raylet) The node 7c1f with address 10.2.3.4 has been marked dead "
         "because the detector has missed too many heartbeats from it.\n",
         1, "infrastructure", "node");
  /* A cloud's reclaim notice from Azure's metadata service. */
  expect("step 30 loss 1.0\n"
         "scheduled events: {\"EventType\": \"Preempt\", \"ResourceType\": "
         "\"VirtualMachine\"}\n",
         2, "infrastructure", "node");
}

SM_TEST(failure_audit_parallel_filesystems_and_held_accelerators) {
  expect("iter 10 loss 3.0\n"
         "mmfs: [E] Remote mounts of file system scratch2 lost: the cluster "
         "manager is not responding\n"
         "OSError: [Errno 107] Transport endpoint is not connected\n",
         2, "infrastructure", "storage");
  expect("beegfs-client: Communication error with storage server st04: "
         "connection lost\n"
         "OSError: [Errno 5] Input/output error\n",
         1, "infrastructure", "storage");
  /* An accelerator held by another process: a shared resource, below
   * the gate. */
  expect("RuntimeError: Unable to initialize backend 'tpu': ABORTED: The "
         "TPU is already in use by a process with pid 5521.\n",
         1, "infrastructure", "gpu");
  if (acts("libtpu.so already in use by process with pid 5521\n"))
    SM_FAIL_AT("a held accelerator must not act");
  /* TensorFlow failing to copy onto a full GPU: the job's memory, even
   * behind a generic error type. */
  expect("tensorflow.python.framework.errors_impl.InternalError: Failed "
         "copying input tensor to /device:GPU:1 in order to run "
         "AssignVariableOp: Dst tensor is not initialized. [Op:AssignVar]\n",
         1, "user", "gpu_memory");
}

SM_TEST(failure_audit_session_signals_and_coordinator_barriers) {
  expect("step 7 loss 2.0\n"
         "[2025-04-01 03:00:00,000] torch.distributed.elastic.agent.server"
         ".api: [WARNING] Received Signals.SIGHUP death signal, shutting "
         "down workers\n",
         2, "user", "none");
  /* JAX tasks that never reached the coordinator: the launch's
   * configuration, the job's. */
  expect("jaxlib.xla_extension.XlaRuntimeError: DEADLINE_EXCEEDED: Barrier "
         "timed out. Barrier_id: PjRT_Client_Connect. Timed out task names: "
         "/job:jax_worker/replica:0/task:1\n",
         1, "user", "none");
  expect("E0401 03:00:00.0 1 coordination_service_agent.cc:300] Failed to "
         "connect to coordination service. UNAVAILABLE: failed to connect "
         "to all addresses\n",
         1, "user", "none");
}

SM_TEST(failure_audit_capability_and_build_mismatches_in_words) {
  static const char *fw[] = {
      /* a library's minimum compute capability */
      "RuntimeError: Found Tesla P100-PCIE-16GB which is too old to be "
      "supported by the triton GPU compiler\n",
      "RuntimeError: fused kernels are supported only on GPUs with compute "
      "capability 8.0 or higher\n",
      "ValueError: this op requires devices of CUDA capability >= 8.9, but "
      "your device is of CUDA capability 8.0\n",
      /* an extension built for another major version of its host */
      "A module that was compiled using NumPy 1.x cannot be run in NumPy "
      "2.1.3 as it may crash.\n",
      "RuntimeError: apex was built for: PyTorch 2.1.0+cu121 (you have "
      "2.3.1+cu118)\n",
      "TypeError: Descriptors cannot be created directly. Your generated "
      "code is out of date and must be regenerated with protoc >= 3.19.0.\n",
      /* an API that changed, a feature not there yet */
      "ValueError: Unrecognized keyword arguments passed to LSTM: "
      "{'time_major': True}\n",
      "ValueError: MambaForCausalLM does not support an attention "
      "implementation through torch.nn.functional.sdpa yet.\n",
  };
  sm_diagnosis d;

  for (size_t i = 0; i < SM_ARRAY_LEN(fw); i++) {
    run(fw[i], &d);
    if (!d.failure || strcmp(d.category, "framework") != 0)
      SM_FAIL_AT("case %zu: %s (%s)", i, d.category, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
  }
  /* The architecture warning is the first error, ahead of the failure
   * it announces. */
  expect("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:173: "
         "UserWarning: NVIDIA B200 with CUDA capability sm_100 is not "
         "compatible with the current PyTorch installation.\n"
         "Traceback (most recent call last):\n"
         "  File \"/home/u/x.py\", line 3, in <module>\n"
         "    y = torch.ones(3, device='cuda') * 2\n"
         "RuntimeError: CUDA error: no kernel image is available for "
         "execution on the device\n",
         1, "framework", "none");
  /* A library's warning that it falls back is no failure. */
  expect("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. "
         "xFormers was built for: PyTorch 2.1.0+cu121 (you have "
         "2.2.0+cu121)\n"
         "UserWarning: this model does not support sdpa yet, using eager\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\ndone\n",
         0, NULL, NULL);
  /* Other warnings stay benign. */
  expect("/x/y.py:10: UserWarning: the default of foo will change\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\ndone\n",
         0, NULL, NULL);
}

SM_TEST(failure_audit_kernel_words_carry_no_level) {
  /* The kernel's hung-task report starts with "INFO:" but is an error
   * (printed at error level); after a dmesg stamp no level is read. */
  ASSERT_EQ(sm__line_level("[ 8123.402211] INFO: task python3:771 blocked "
                           "for more than 241 seconds.",
                           66),
            SM__LVL_NONE);
  ASSERT_EQ(sm__line_level("[2025-01-01 10:00:00] INFO: step 3", 34),
            SM__LVL_INFO);
  ASSERT_EQ(sm__line_level("[INFO] [ 8123.4] x", 18), SM__LVL_INFO);
  expect("step 40 loss 1.1\n"
         "[ 8123.402211] INFO: task pt_data_worker:7712 blocked for more "
         "than 362 seconds.\n"
         "[ 8123.402300]       Tainted: G           OE\n"
         "slurmstepd: error: *** JOB 77 ON q3 CANCELLED AT 2025-01-01T12:00:00 "
         "DUE TO TIME LIMIT ***\n",
         2, "infrastructure", "node");
  /* A program's own INFO line with the same words stays a notice. */
  expect("INFO: task scheduler blocked for more than 5 seconds, continuing\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\ndone\n",
         0, NULL, NULL);
}

SM_TEST(failure_audit_storage_reports_in_other_words) {
  expect("step 8 loss 1.0\n"
         "[ 91.2] XFS (md127): Metadata corruption detected at "
         "xfs_buf_ioend+0x5a/0x1c0, xfs_inode block 0x1c0\n"
         "OSError: [Errno 117] Structure needs cleaning: '/raid/x'\n",
         2, "infrastructure", "storage");
  expect("[ 91.2] nvme nvme3: I/O 77 QID 12 timeout, aborting\n"
         "[ 92.9] nvme nvme3: I/O 77 QID 12 timeout, reset controller\n",
         1, "infrastructure", "storage");
  expect("[ 91.2] WARNING: Pool 'scratch' has encountered an uncorrectable "
         "I/O failure and has been suspended.\n",
         1, "infrastructure", "storage");
  expect("OSError: [Errno 121] Remote I/O error: '/mnt/s3fs/ckpt'\n", 1,
         "infrastructure", "storage");
  /* Object stores and HDFS that do not answer: inferred, never acted on. */
  expect("botocore.exceptions.ConnectTimeoutError: Connect timeout on "
         "endpoint URL: \"https://minio.internal:9000/shards/00001.tar\"\n",
         1, "infrastructure", "storage");
  expect("Caused by: org.apache.hadoop.hdfs.BlockMissingException: Could "
         "not obtain block: BP-9-10.1.1.1-1:blk_1_1 file=/d/part-7\n",
         1, "infrastructure", "storage");
  if (acts("botocore.exceptions.ReadTimeoutError: Read timeout on endpoint "
           "URL: \"https://s3.example/b/k\"\n"))
    SM_FAIL_AT("an object store's timeout must not act");
}

SM_TEST(failure_audit_fabric_and_node_reports_in_other_words) {
  expect("iter 90 loss 0.9\n"
         "[1717236000.5] [q3:9:0] ucp_worker.c:1783 UCX  ERROR ep 0x55: error "
         "'Endpoint timeout' on dc_mlx5/mlx5_0:1 will not be handled\n",
         2, "infrastructure", "network");
  if (acts("iter 90 loss 0.9\nUCX  ERROR ep 0x1: error 'Endpoint timeout' "
           "on rc_mlx5/mlx5_0:1 will not be handled\n"))
    SM_FAIL_AT("a UCX endpoint timeout must not act");
  expect("tensorflow.python.framework.errors_impl.UnavailableError: failed "
         "to connect to all addresses (worker 3)\n",
         1, "infrastructure", "network");
  /* A health check's failure names the part, not a framework assert. */
  expect("dcgm: GPU 5 health check failed: DCGM_FR_VOLATILE_DBE_DETECTED\n", 1,
         "infrastructure", "gpu");
  expect("F0101 10:00:00.000 1 gpu_compiler.cc:80] Check failed: ok\n", 1,
         "framework", "none");
  expect("RuntimeError: No HIP GPUs are available\n", 1, "infrastructure",
         "gpu");
  expect("step 3 loss 1.0\n"
         "Pod worker-1 was terminated in response to imminent node shutdown.\n",
         2, "infrastructure", "node");
  expect("step 3 loss 1.0\n[ 9123.1] reboot: Restarting system\n", 2,
         "infrastructure", "node");
}

SM_TEST(failure_audit_named_mismatches_builds_and_launch_settings) {
  /* A library naming the version mismatch itself. */
  expect("mxnet.base.MXNetVersionMismatchError: runtime 1.9 against "
         "headers 1.8\n",
         1, "framework", "none");
  expect("Exception: Version mismatch: the head runs Ray 2.9.0 and this "
         "worker Ray 2.8.1\n",
         1, "framework", "none");
  expect("RuntimeError: Framework torch installed with version 2.1.0 but "
         "found version 2.2.1\n",
         1, "framework", "none");
  /* A build lacking a feature the job uses; JAX without a working GPU
   * plugin; a runtime library older than the one the build expects. */
  expect("RuntimeError: mpi4py was compiled without CUDA-aware MPI "
         "support\n",
         1, "framework", "none");
  expect("RuntimeError: Unable to initialize backend 'rocm': no supported "
         "devices found for platform ROCM\n",
         1, "framework", "none");
  expect("RuntimeError: Found NCCL 2.18.1, but this torch was built "
         "against version 2.21.5 and needs it at run time\n",
         1, "framework", "none");
  /* Resuming an optimizer's state from a checkpoint of other groups,
   * with only a trainer's frames on the stack: the job's checkpoint. */
  expect("Traceback (most recent call last):\n"
         "  File \"/usr/lib/python3/dist-packages/pytorch_lightning/"
         "trainer/trainer.py\", line 9, in fit\n"
         "    self._restore()\n"
         "ValueError: loaded state dict has a different number of parameter "
         "groups\n",
         4, "user", "none");
  /* A launcher telling the job what it must pass. */
  expect("ValueError: You must specify `--main_process_ip` when "
         "--num_machines is above 1\n",
         1, "user", "none");
  /* ...but what to install is the environment's. */
  expect("ImportError: You need to install accelerate>=0.26.0 to use this "
         "feature\n",
         1, "framework", "none");
}

SM_TEST(failure_audit_tensorflow_device_memory_at_start) {
  /* TensorFlow created its device with what was free: far below the
   * capacity the model's name states, so others held the rest. */
  expect("2025-01-01 10:00:00.1: I tensorflow/core/common_runtime/gpu/"
         "gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0"
         "/device:GPU:0 with 2310 MB memory:  -> device: 0, name: NVIDIA "
         "H100 80GB HBM3, pci bus id: 0000:1b:00.0, compute capability: "
         "9.0\n"
         "2025-01-01 10:00:02.7: W tensorflow/core/common_runtime/"
         "bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out of memory "
         "trying to allocate 4.00GiB\n"
         "tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
         "OOM when allocating tensor with shape[1024,1048576]\n",
         3, "infrastructure", "gpu");
  expect("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1120] Created "
         "TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 "
         "with 3100 MB memory) -> physical GPU (device: 0, name: Tesla "
         "V100-SXM2-32GB, pci bus id: 0000:3b:00.0)\n"
         "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to "
         "allocate 28.00G (30064771072 bytes) from device: "
         "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
         2, "infrastructure", "gpu");
  /* Nearly all of it free at start: the job's own sizing. */
  expect("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created "
         "device /job:localhost/replica:0/task:0/device:GPU:0 with 78912 MB "
         "memory:  -> device: 0, name: NVIDIA H100 80GB HBM3, pci bus id: "
         "0000:1b:00.0\n"
         "tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
         "OOM when allocating tensor with shape[1024,1048576]\n",
         2, "user", "gpu_memory");
  /* A name without a capacity, or training between, decides nothing. */
  expect("I gpu_device.cc:1886] Created device /device:GPU:0 with 900 MB "
         "memory:  -> device: 0, name: NVIDIA GeForce RTX 4090, pci bus id: "
         "0000:01:00.0\n"
         "tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
         "OOM when allocating tensor with shape[64,1048576]\n",
         2, "user", "gpu_memory");
  expect("I gpu_device.cc:1886] Created device /device:GPU:0 with 2310 MB "
         "memory:  -> device: 0, name: NVIDIA A100-SXM4-40GB, pci bus id: "
         "0000:01:00.0\n"
         "Epoch 1/5\n"
         "100/100 [==============================] - 9s 80ms/step - loss: "
         "0.51\n"
         "Epoch 2/5\n"
         " 90/100 [==========================>...] - ETA: 1s - loss: 0.40\n"
         " 95/100 [===========================>..] - ETA: 0s - loss: 0.39\n"
         "tensorflow.python.framework.errors_impl.ResourceExhaustedError: "
         "OOM when allocating tensor with shape[64,1048576]\n",
         7, "user", "gpu_memory");
}

SM_TEST(failure_audit_node_and_go_runtime_words) {
  /* Node.js: a package not installed is the environment's, the job's own
   * file or script its own. */
  expect("node:internal/modules/cjs/loader:1148\n"
         "  throw err;\n"
         "Error: Cannot find module 'onnxruntime-node'\n"
         "Require stack:\n"
         "- /srv/infer/run.js\n",
         3, "framework", "none");
  expect("Error: Cannot find module '/srv/infer/rnu.js'\n"
         "    at Module._resolveFilename (node:internal/modules/cjs/"
         "loader:1145:15)\n",
         1, "user", "none");
  expect("Error: Cannot find module '../utils/tokenize'\n", 1, "user", "none");
  /* Go: the host refusing memory is the node's limit (never acted on);
   * a data race or a deadlock is the program's. */
  expect("step 5\nfatal error: runtime: cannot allocate memory\n", 2,
         "infrastructure", "node");
  if (acts("fatal error: runtime: out of memory\n"))
    SM_FAIL_AT("a host memory limit must not act");
  expect("fatal error: concurrent map writes\n\ngoroutine 31 [running]:\n", 1,
         "user", "none");
  expect("fatal error: all goroutines are asleep - deadlock!\n", 1, "user",
         "none");
}

SM_TEST(failure_audit_mpi_fabric_faults_at_first_use_are_not_acted_on) {
  const char *first = "--------------------------------------------------\n"
                      "The InfiniBand retry count between two MPI processes "
                      "has been exceeded.\n"
                      "    Local host:   a100-n12\n";
  const char *later = "iter 1200 | loss 1.04 | 0.31 s/iter\n"
                      "iter 1210 | loss 1.03 | 0.31 s/iter\n"
                      "The InfiniBand retry count between two MPI processes "
                      "has been exceeded.\n"
                      "    Local host:   a100-n12\n";

  /* At the first use of the fabric a setting the log does not show is
   * as likely as a broken link: reported only. */
  expect(first, 2, "infrastructure", "network");
  if (acts(first))
    SM_FAIL_AT("a fabric fault at first use must not act");
  /* With the job's UCX setting shown before it, the setting is the
   * cause. */
  expect("UCX_NET_DEVICES=mlx5_9:1\n"
         "The InfiniBand retry count between two MPI processes has been "
         "exceeded.\n",
         2, "user", "none");
  /* After training the fabric had worked: a located fault. */
  if (!acts(later))
    SM_FAIL_AT("a fabric fault after training should be acted on");
}

SM_TEST(failure_audit_labels_before_pasted_errors) {
  static const struct {
    const char *line;
    size_t msg;
  } cases[] = {
      {"\xe6\x8a\xa5\xe9\x94\x99\xef\xbc\x9a"
       "KeyError: 'x'",
       9},                                            /* 报错： */
      {"\xe9\x94\x99\xe8\xaf\xaf: KeyError: 'x'", 8}, /* 错误: */
      {">>> KeyError: 'x'", 4},
      {"\xec\x98\xa4\xeb\xa5\x98: OSError: y", 8}, /* 오류: */
      /* not labels: ASCII words, a lone byte, no colon, too long */
      {"Error: KeyError: 'x'", 0},
      {"\xe6: KeyError", 0},
      {"\xe6\x8a\xa5\xe9\x94\x99 KeyError", 0},
      {"\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a"
       "\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6\x8a\xa5\xe6"
       "\x8a\xa5\xe6\x8a\xa5: x",
       0},
  };
  double ts;

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    size_t got = sm__line_prefix(cases[i].line, strlen(cases[i].line), &ts);
    if (got != cases[i].msg)
      SM_FAIL_AT("case %zu: message at %zu, want %zu", i, got, cases[i].msg);
  }
  expect("\xe6\x8a\xa5\xe9\x94\x99\xef\xbc\x9a"
         "FileNotFoundError: [Errno "
         "2] No such file or directory: 'data/train.json'\n",
         1, "user", "none");
  expect(">>> import flash_attn\n"
         ">>> ModuleNotFoundError: No module named 'flash_attn'\n",
         2, "framework", "none");
}

SM_TEST(failure_audit_config_driven_frameworks_words) {
  /* A framework run from its own entry point with the job's config: only
   * its frames on the stack, but the message addresses the job's inputs. */
  expect("Traceback (most recent call last):\n"
         "  File \"/opt/venv/bin/tune-cli\", line 8, in <module>\n"
         "    sys.exit(main())\n"
         "  File \"/opt/venv/lib/python3.11/site-packages/tunekit/args.py\", "
         "line 91, in check\n"
         "    raise ValueError(msg)\n"
         "ValueError: Please specify `template` when fine-tuning a chat "
         "model.\n",
         6, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/opt/venv/lib/python3.11/site-packages/seqkit/opts.py\", "
         "line 12, in parse\n"
         "    raise ValueError(f\"{a} ...\")\n"
         "ValueError: lr_scheduler 'cosine_restart' is not a known "
         "scheduler; choose one of cosine, linear, constant\n",
         4, "user", "none");
  expect("KeyError: 'ResNeXt50x is not in the mmpretrain::model registry. "
         "Please check whether the value is correct.'\n",
         1, "user", "none");
  expect("error: Parser key \"model\":\n"
         "  Key \"hidden_dimm\" is not expected\n",
         1, "user", "none");
  /* Version and install words stay the framework's; words in a warning
   * of a healthy run are no failure. */
  expect("ImportError: Please install the package with `pip install "
         "tunekit[flash]` to use this option\n",
         1, "framework", "none");
  expect("ValueError: seqkit>=0.9 is required for this option, but found "
         "seqkit==0.7; please choose one of the supported backends after "
         "upgrading\n",
         1, "framework", "none");
  expect("WARNING: Please specify `pad_token` for batched generation; using "
         "eos\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\ndone\n",
         0, NULL, NULL);
}

SM_TEST(failure_audit_imports_by_libraries_and_nfs_retries) {
  /* A package's own import of a dependency that does not fit: the
   * environment, though the module is not a known package. */
  expect("Traceback (most recent call last):\n"
         "  File \"/srv/me/fit.py\", line 2, in <module>\n"
         "    import segmenter\n"
         "  File \"/opt/py/lib/python3.11/site-packages/segmenter/"
         "__init__.py\", line 4, in <module>\n"
         "    from zoolib.ops import roi_align\n"
         "ModuleNotFoundError: No module named 'zoolib'\n",
         6, "framework", "none");
  /* The job's own import of an unknown module stays the job's. */
  expect("Traceback (most recent call last):\n"
         "  File \"/srv/me/fit.py\", line 2, in <module>\n"
         "    from zoolib.ops import roi_align\n"
         "ModuleNotFoundError: No module named 'zoolib'\n",
         4, "user", "none");
  /* NFS retrying a hard mount, then recovering, is no failure; the
   * mount timing out is. */
  expect("step 1 loss 2.0\n"
         "[ 77.1] nfs: server fs3 not responding, still trying\n"
         "[ 91.4] nfs: server fs3 OK\n"
         "step 2 loss 1.9\nstep 3 loss 1.8\ntraining done\n",
         0, NULL, NULL);
  expect("step 1 loss 2.0\n"
         "[ 77.1] nfs: server fs3 not responding, timed out\n"
         "OSError: [Errno 5] Input/output error: '/nfs/d/x.bin'\n",
         2, "infrastructure", "storage");
}

SM_TEST(failure_audit_advice_in_a_warning_is_no_failure) {
  /* What the job must pass, said by a warning of a run that goes on. */
  expect("WARNING: You must set `--seed` for reproducible runs; using 0\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\ndone\n",
         0, NULL, NULL);
  expect("ValueError: You have to specify either input_ids or "
         "inputs_embeds\n",
         1, "user", "none");
}

SM_TEST(failure_audit_harmless_lookalikes_of_new_classes) {
  /* Lines of healthy runs that resemble the audit's causes: a histogram
   * writer's NaN notice, a build notice with a fallback. */
  expect("NaN or Inf found in input tensor.\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\ndone\n",
         0, NULL, NULL);
  expect("W0101 numexpr was built without VML support, using the default\n"
         "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\ndone\n",
         0, NULL, NULL);
}
