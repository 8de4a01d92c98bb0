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
