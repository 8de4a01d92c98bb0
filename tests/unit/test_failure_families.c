/* test_failure_families.c - signature families added for logs of other
 * vendors and services, on lines written for these tests: AMD ROCm/HIP
 * (binaries without this GPU's code object, memory access faults, the
 * driver's uncorrectable RAS errors and GPU resets) and object stores
 * (throttling and server-side failures, refused credentials and names). */
#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

#define check(...) expect_diag_at(__LINE__, __VA_ARGS__)

SM_TEST(failure_rocm_hip_errors_by_class) {
  /* No code object for the GPU's gfx target: the build's (framework). */
  check("epoch 0 start\n"
        "RuntimeError: HIP error: invalid device function\n",
        2, "framework", "none", NULL);
  check("rocBLAS error: Cannot find CodeObject for gfx1101 in "
        "/opt/rocm/lib/rocblas/library\n",
        1, "framework", "none", NULL);
  /* A memory access fault: a kernel's, like CUDA's illegal address. */
  check("step 12 loss 0.80\n"
        "Memory access fault by GPU node-2 (Agent handle: 0x55d0) on "
        "address 0x7f10. Reason: Page not present or supervisor "
        "privilege.\n",
        2, "framework", "none", NULL);
  /* The driver's uncorrectable RAS error: the GPU's. */
  check("step 900 loss 0.41\n"
        "[81234.5] amdgpu 0000:c1:00.0: amdgpu: 3 uncorrectable hardware "
        "errors detected in UMC block\n"
        "Memory access fault by GPU node-2 (Agent handle: 0x55d0) on "
        "address 0x7f10. Reason: Unknown.\n",
        2, "infrastructure", "gpu", "fault");
  /* A ring timeout and reset: the GPU's, but only inferred. */
  check("step 900 loss 0.41\n"
        "[9.1] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 "
        "timeout, signaled seq=88, emitted seq=90\n"
        "[9.2] amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!\n",
        2, "infrastructure", "gpu", "inferred");
  /* Malformed: the words without the driver or cut short. */
  check("step 1 loss 1.0\nuncorrectable hardware errors\n", 0, NULL, NULL,
        NULL);
  check("amdgpu: ring \xff\xfe tim\n", 0, NULL, NULL, NULL);
}

SM_TEST(failure_object_store_errors_by_class) {
  /* Throttling: the shared service's limit, a retry helps. */
  check("step 300 loss 1.2 | saving shard 4\n"
        "botocore.exceptions.ClientError: An error occurred (SlowDown) "
        "when calling the PutObject operation (reached max retries: 4): "
        "Please reduce your request rate.\n",
        2, "infrastructure", "storage", "limit");
  check("google.api_core.exceptions.TooManyRequests: 429 POST "
        "https://storage.googleapis.com/upload/storage/v1/b/ckpt/o: The "
        "rate of change requests to the object ckpt/last.pt exceeds the "
        "rate limit. Please reduce the rate of create, update, and delete "
        "requests.\n",
        1, "infrastructure", "storage", "limit");
  /* Refused credentials or names: the job's. */
  check("Traceback (most recent call last):\n"
        "  File \"/home/u/fetch.py\", line 9, in <module>\n"
        "    s3.download_file(bucket, key, dst)\n"
        "botocore.exceptions.NoCredentialsError: Unable to locate "
        "credentials\n",
        4, "user", "none", NULL);
  check("botocore.exceptions.ClientError: An error occurred (AccessDenied) "
        "when calling the GetObject operation: Access Denied\n",
        1, "user", "none", NULL);
  /* Malformed: the operation's name missing, binary bytes. */
  check("An error occurred (SlowDown) when calling the\n", 0, NULL, NULL, NULL);
  check("(AccessDenied) \x80\x81 when calling\n", 0, NULL, NULL, NULL);
}

SM_TEST(failure_dcgm_failure_reasons_by_component) {
  check("step 4100 loss 0.77\n"
        "dcgm health: GPU 3: DCGM_FR_VOLATILE_DBE_DETECTED: Detected 2 "
        "volatile double-bit ECC error(s) in GPU 3.\n",
        2, "infrastructure", "gpu", "fault");
  check("step 4100 loss 0.77\n"
        "dcgm health: GPU 5: DCGM_FR_NVLINK_DOWN: GPU 5's NvLink link 7 is "
        "currently down\n",
        2, "infrastructure", "nvlink", "fault");
  check("step 4100 loss 0.77\n"
        "dcgm health: GPU 1: DCGM_FR_PCI_REPLAY_RATE: Detected more than 8 "
        "PCIe replays per minute for GPU 1 : 12\n",
        2, "infrastructure", "gpu", "inferred");
  /* A code name inside another word, and one cut short. */
  check("step 1 loss 1.0\nsee MYDCGM_FR_VOLATILE_DBE_DETECTEDX in docs\n", 0,
        NULL, NULL, NULL);
  check("step 1 loss 1.0\nDCGM_FR_NVLINK_DO\n", 0, NULL, NULL, NULL);
}

SM_TEST(failure_kubernetes_and_lsf_events_by_class) {
  /* The job's image, spec and deadline are the job's. */
  check("Warning  Failed     12s  kubelet  Failed to pull image "
        "\"registry.example.org/team/trainer:v9\": rpc error: code = "
        "NotFound desc = failed to resolve reference: not found\n",
        1, "user", "none", NULL);
  check("Warning  Failed  3s  kubelet  Error: CreateContainerConfigError: "
        "secret \"wandb-key\" not found\n",
        1, "user", "none", NULL);
  check("step 9000 loss 0.33\n"
        "Warning  DeadlineExceeded  job-controller  Job was active longer "
        "than specified deadline\n",
        2, "user", "none", NULL);
  /* A registry's rate limit: a shared service, retried. */
  check("Warning  Failed  kubelet  Failed to pull image \"trainer:v9\": "
        "toomanyrequests: You have reached your pull rate limit.\n",
        1, "infrastructure", "network", "limit");
  /* The node stopped reporting: inferred, never a fault. */
  check("step 10 loss 2.0\n"
        "Normal  NodeNotReady  node-controller  Node gpu-w12 status is now: "
        "NodeNotReady\n",
        2, "infrastructure", "node", "inferred");
  /* LSF's exit terms: preemption is the node's event, a CPU-time limit
   * the job's. */
  check("step 10 loss 2.0\n"
        "TERM_PREEMPT: job killed after preemption.\n",
        2, "infrastructure", "node", "event");
  check("step 10 loss 2.0\n"
        "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.\n",
        2, "user", "none", NULL);
  /* Killed by its owner: a cancellation, as Slurm's reasonless cancel. */
  check("step 10 loss 2.0\nTERM_OWNER: job killed by owner.\n", 2, "unknown",
        "none", NULL);
  /* Malformed: words inside other words, binary bytes. */
  check("step 1 loss 1.0\nXTERM_PREEMPTED ok\n", 0, NULL, NULL, NULL);
  check("ErrImagePul\xc3\x28\n", 0, NULL, NULL, NULL);
}
