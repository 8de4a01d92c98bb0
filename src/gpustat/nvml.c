/* nvml.c - NVML loaded at run time: dlopen("libnvidia-ml.so.1") (the name
 * the driver installs; the dynamic loader's search path, LD_LIBRARY_PATH
 * included, decides which file), then the entry points the sampler uses,
 * preferring the newest versioned symbol the library exports.
 *
 * Process queries: nvmlDeviceGetComputeRunningProcesses_v3, then _v2, then
 * the unversioned one (whose entries have only pid and memory).  Drivers
 * disagree on the size of a _v3 entry (24 bytes as documented, or 32 with
 * one more 64-bit member), so the buffer is filled with a sentinel before
 * each query and the stride is read off the bytes the driver wrote. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "gpustat/gpustat_int.h"

static const struct {
  int code;
  const char *name;
} codes[] = {
    {0, "NVML_SUCCESS"},
    {1, "NVML_ERROR_UNINITIALIZED"},
    {2, "NVML_ERROR_INVALID_ARGUMENT"},
    {3, "NVML_ERROR_NOT_SUPPORTED"},
    {4, "NVML_ERROR_NO_PERMISSION"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED"},
    {6, "NVML_ERROR_NOT_FOUND"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED"},
    {10, "NVML_ERROR_TIMEOUT"},
    {11, "NVML_ERROR_IRQ_ISSUE"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM"},
    {15, "NVML_ERROR_GPU_IS_LOST"},
    {16, "NVML_ERROR_RESET_REQUIRED"},
    {17, "NVML_ERROR_OPERATING_SYSTEM"},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"},
    {19, "NVML_ERROR_IN_USE"},
    {20, "NVML_ERROR_MEMORY"},
    {21, "NVML_ERROR_NO_DATA"},
    {999, "NVML_ERROR_UNKNOWN"},
};

const char *sm__nvml_code_name(int code) {
  static __thread char other[32];
  for (size_t i = 0; i < SM_ARRAY_LEN(codes); i++)
    if (codes[i].code == code)
      return codes[i].name;
  snprintf(other, sizeof(other), "NVML_ERROR_%d", code);
  return other;
}

const char *sm__nvml_strerror(const sm__nvml *n, int code) {
  const char *s = n->error_string ? n->error_string(code) : NULL;
  return s && s[0] ? s : sm__nvml_code_name(code);
}

/* The first of the names the library exports. */
static void *sym(void *dl, const char *const *names, int *which) {
  for (int i = 0; names[i] != NULL; i++) {
    void *p = dlsym(dl, names[i]);
    if (p != NULL) {
      if (which)
        *which = i;
      return p;
    }
  }
  return NULL;
}

#define SYM(field, ...)                                                        \
  do {                                                                         \
    static const char *const names_[] = {__VA_ARGS__, NULL};                   \
    *(void **)&n->field = sym(n->dl, names_, NULL);                            \
  } while (0)

int sm__nvml_load(sm__nvml *n, const char *lib, sm_err *err) {
  static const char *const procs_names[] = {
      "nvmlDeviceGetComputeRunningProcesses_v3",
      "nvmlDeviceGetComputeRunningProcesses_v2",
      "nvmlDeviceGetComputeRunningProcesses", NULL};
  const char *missing = NULL;
  int which = 0, rc;

  memset(n, 0, sizeof(*n));
  snprintf(n->lib, sizeof(n->lib), "%s", lib ? lib : "libnvidia-ml.so.1");
  dlerror();
  n->dl = dlopen(n->lib, RTLD_NOW | RTLD_LOCAL);
  if (n->dl == NULL) {
    const char *e = dlerror();
    return sm_err_set(err, SM_ENOENT, "NVML is not available: %s",
                      e ? e : n->lib);
  }
  SYM(init, "nvmlInit_v2", "nvmlInit");
  SYM(shutdown, "nvmlShutdown");
  SYM(error_string, "nvmlErrorString");
  SYM(driver_version, "nvmlSystemGetDriverVersion");
  SYM(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
  SYM(handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
  SYM(name, "nvmlDeviceGetName");
  SYM(uuid, "nvmlDeviceGetUUID");
  SYM(util, "nvmlDeviceGetUtilizationRates");
  SYM(mem, "nvmlDeviceGetMemoryInfo");
  SYM(power, "nvmlDeviceGetPowerUsage");
  SYM(proc_util, "nvmlDeviceGetProcessUtilization");
  *(void **)&n->procs = sym(n->dl, procs_names, &which);
  n->procs_version = 3 - which;
  if (n->init == NULL)
    missing = "nvmlInit_v2";
  else if (n->count == NULL)
    missing = "nvmlDeviceGetCount_v2";
  else if (n->handle == NULL)
    missing = "nvmlDeviceGetHandleByIndex_v2";
  else if (n->util == NULL)
    missing = "nvmlDeviceGetUtilizationRates";
  else if (n->mem == NULL)
    missing = "nvmlDeviceGetMemoryInfo";
  if (missing != NULL) {
    rc = sm_err_set(err, SM_EUNSUPP, "%s: has no %s (not NVML, or too old)",
                    n->lib, missing);
    dlclose(n->dl);
    n->dl = NULL;
    return rc;
  }
  rc = n->init();
  if (rc != SM__NVML_SUCCESS) {
    sm_err_set(err, SM_EIO, "%s: nvmlInit failed: %s (%s)", n->lib,
               sm__nvml_code_name(rc), sm__nvml_strerror(n, rc));
    dlclose(n->dl);
    n->dl = NULL;
    return SM_EIO;
  }
  return 0;
}

void sm__nvml_unload(sm__nvml *n) {
  if (n->dl == NULL)
    return;
  if (n->shutdown)
    n->shutdown();
  dlclose(n->dl);
  n->dl = NULL;
}

#define SENTINEL 0xA5

sm__nvret sm__nvml_procs(const sm__nvml *n, sm__nvdev d, sm__nvproc *out,
                         unsigned int cap, unsigned int *count,
                         unsigned char *scratch) {
  unsigned int c = cap, stride;
  sm__nvret rc;

  if (n->procs == NULL)
    return SM__NVML_ERROR_NOT_SUPPORTED;
  memset(scratch, SENTINEL, (size_t)cap * 32);
  rc = n->procs(d, &c, scratch);
  if (rc == SM__NVML_ERROR_INSUFFICIENT_SIZE) {
    *count = c;
    return rc;
  }
  if (rc != SM__NVML_SUCCESS)
    return rc;
  if (c > cap)
    c = cap;
  if (n->procs_version == 1) {
    stride = 16;
  } else {
    /* A 24-byte layout leaves [24c, 32c) untouched; a 32-byte one has
     * written it (pid, memory, ids of later entries, the extra member). */
    stride = 24;
    for (size_t b = (size_t)c * 24; b < (size_t)c * 32; b++)
      if (scratch[b] != SENTINEL) {
        stride = 32;
        break;
      }
  }
  for (unsigned int i = 0; i < c; i++) {
    const unsigned char *e = scratch + (size_t)i * stride;
    memset(&out[i], 0, sizeof(out[i]));
    memcpy(&out[i].pid, e, sizeof(out[i].pid));
    memcpy(&out[i].usedGpuMemory, e + 8, sizeof(out[i].usedGpuMemory));
    if (stride >= 24) {
      memcpy(&out[i].gpuInstanceId, e + 16, sizeof(unsigned int));
      memcpy(&out[i].computeInstanceId, e + 20, sizeof(unsigned int));
    }
  }
  *count = c;
  return rc;
}
