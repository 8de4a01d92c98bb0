/* gpustat_int.h - what the parts of the GPU sampler share: NVML's types
 * and entry points (declared here from NVML's public API reference; no
 * NVIDIA header is used or needed), the loaded library, and small file
 * helpers.
 *
 * Types follow the API reference: nvmlReturn_t is an int-sized enum,
 * nvmlDevice_t an opaque pointer, the structs below have the documented
 * members in the documented order. */
#ifndef SM_GPUSTAT_INT_H
#define SM_GPUSTAT_INT_H

#include <stdint.h>

#include "schedmate/sm_gpustat.h"

/* ==== NVML, as documented ==== */

typedef int sm__nvret; /* nvmlReturn_t */

/* Return codes the sampler tells apart. */
#define SM__NVML_SUCCESS 0
#define SM__NVML_ERROR_UNINITIALIZED 1
#define SM__NVML_ERROR_INVALID_ARGUMENT 2
#define SM__NVML_ERROR_NOT_SUPPORTED 3
#define SM__NVML_ERROR_NO_PERMISSION 4
#define SM__NVML_ERROR_NOT_FOUND 6
#define SM__NVML_ERROR_INSUFFICIENT_SIZE 7
#define SM__NVML_ERROR_DRIVER_NOT_LOADED 9
#define SM__NVML_ERROR_TIMEOUT 10
#define SM__NVML_ERROR_GPU_IS_LOST 15
#define SM__NVML_ERROR_RESET_REQUIRED 16
#define SM__NVML_ERROR_UNKNOWN 999

/* "Not available" in a 64-bit memory field (NVML_VALUE_NOT_AVAILABLE). */
#define SM__NVML_NOT_AVAILABLE (~0ULL)

typedef struct sm__nvdev_st *sm__nvdev; /* nvmlDevice_t */

typedef struct sm__nvutil { /* nvmlUtilization_t */
  unsigned int gpu;         /* percent of time a kernel ran */
  unsigned int memory;      /* percent of time memory was read/written */
} sm__nvutil;

typedef struct sm__nvmem { /* nvmlMemory_t (v1) */
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} sm__nvmem;

/* nvmlProcessInfo_t as the _v2/_v3 process queries fill it.  Some drivers
 * write entries with one more 64-bit member; the stride is measured (see
 * nvml.c).  The oldest query fills only pid and usedGpuMemory. */
typedef struct sm__nvproc {
  unsigned int pid;
  unsigned long long usedGpuMemory; /* bytes */
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} sm__nvproc;

typedef struct sm__nvpsample { /* nvmlProcessUtilizationSample_t */
  unsigned int pid;
  unsigned long long timeStamp; /* CPU time, microseconds */
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
} sm__nvpsample;

/* Buffer sizes the reference guarantees to be large enough. */
#define SM__NVML_NAME_LEN 96    /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define SM__NVML_UUID_LEN 96    /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define SM__NVML_VERSION_LEN 80 /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

/* The loaded library. */
typedef struct sm__nvml {
  void *dl; /* dlopen handle */
  sm__nvret (*init)(void);
  sm__nvret (*shutdown)(void);
  const char *(*error_string)(sm__nvret);
  sm__nvret (*driver_version)(char *, unsigned int);
  sm__nvret (*count)(unsigned int *);
  sm__nvret (*handle)(unsigned int, sm__nvdev *);
  sm__nvret (*name)(sm__nvdev, char *, unsigned int);
  sm__nvret (*uuid)(sm__nvdev, char *, unsigned int);
  sm__nvret (*util)(sm__nvdev, sm__nvutil *);
  sm__nvret (*mem)(sm__nvdev, sm__nvmem *);
  sm__nvret (*power)(sm__nvdev, unsigned int *);
  sm__nvret (*procs)(sm__nvdev, unsigned int *, void *);
  int procs_version; /* 3, 2 or 1: which process query procs is */
  sm__nvret (*proc_util)(sm__nvdev, sm__nvpsample *, unsigned int *,
                         unsigned long long);
  char lib[256]; /* what was loaded, for messages */
} sm__nvml;

/* Loads lib (NULL: libnvidia-ml.so.1) and calls its init.  Returns 0, or
 * SM_ENOENT (not installed), SM_EUNSUPP (an entry point is missing), SM_EIO
 * (init failed) with a message. */
int sm__nvml_load(sm__nvml *n, const char *lib, sm_err *err);
/* Shuts NVML down and unloads it (safe on a zeroed struct). */
void sm__nvml_unload(sm__nvml *n);
/* "NVML_ERROR_GPU_IS_LOST" and so on, "NVML_ERROR_999" for others. */
const char *sm__nvml_code_name(int code);
/* NVML's own message for a code, or the code's name. */
const char *sm__nvml_strerror(const sm__nvml *n, int code);

/* Process query with the stride measured: fills out[0..*n) from a
 * scratch buffer of at least cap * 32 bytes.  Returns an NVML code;
 * SM__NVML_ERROR_INSUFFICIENT_SIZE sets *n to the count needed. */
sm__nvret sm__nvml_procs(const sm__nvml *n, sm__nvdev d, sm__nvproc *out,
                         unsigned int cap, unsigned int *count,
                         unsigned char *scratch);

/* ==== Files ==== */

/* Reads at most max bytes of dir_fd/name (no symbolic link followed,
 * nothing but a regular file) into buf (NUL-terminated).  Returns the
 * byte count, or -1. */
long sm__read_small_at(int dir_fd, const char *name, char *buf, size_t max);
/* Writes text to path atomically (a temporary file beside, renamed).
 * Returns 0 or a negative code with a message. */
int sm__write_atomic(const char *path, const char *text, size_t len,
                     sm_err *err);

/* The result file format name and version. */
#define SM__GPUSTAT_FORMAT "schedmate-gpustat/1"

#endif /* SM_GPUSTAT_INT_H */
