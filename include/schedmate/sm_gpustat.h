/* sm_gpustat.h - hardware metrics per job: a per-node GPU sampler over
 * NVML, the mapping of GPU processes to Slurm jobs, per-job aggregation
 * (mean, p50, p95 over the steady state, a down-sampled series), the
 * files the sampler leaves for the Slurm agent, and Slurm's own
 * accounting (sacct TRES usage) where a node has no NVML.
 *
 *   NVML (dlopen) --sm_gpustat_sample--> per device, per process
 *        --/proc/PID/cgroup, SLURM_JOB_ID--> per job series
 *        --sm_gpustat_flush--> DIR/JOBID/NODE.START.json
 *        --sm_gpu_usage_read--> sm_util, gpu_mem_mib with provenance
 *
 * NVML is loaded at run time (libnvidia-ml.so.1, from the GPU driver): the
 * library has no build dependency on it, and a node without it is told so
 * by a return code and a message.  Nothing here prints. */
#ifndef SM_GPUSTAT_H
#define SM_GPUSTAT_H

#include <stdint.h>

#include "schedmate/sm_base.h"
#include "schedmate/sm_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Processes to jobs ==== */

/* How a process was mapped to its job. */
enum {
  SM_GPU_MAP_NONE = 0, /* no job (not a Slurm job's process) */
  SM_GPU_MAP_CGROUP,   /* a job_<id> component of a Slurm cgroup path */
  SM_GPU_MAP_ENV       /* SLURM_JOB_ID in the process's environment */
};

/* Finds the Slurm job in the text of a /proc/PID/cgroup file (cgroup v1:
 * "4:devices:/slurm/uid_1000/job_42/step_0", v2:
 * "0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0"): a
 * path component job_<digits> below a component that starts with
 * "slurm".  Lines that disagree about the job make it unknown.  Returns 1
 * with *job, 0 when no line names a Slurm job (or the text is malformed:
 * binary, overlong numbers, no hierarchy fields). */
SM_EXTERN int sm_gpu_cgroup_job(const char *text, size_t len, uint32_t *job);

/* Finds SLURM_JOB_ID (or the older SLURM_JOBID) in the NUL-separated text
 * of a /proc/PID/environ file.  Returns 1 with *job, 0 when absent or not
 * a job id. */
SM_EXTERN int sm_gpu_environ_job(const char *data, size_t len, uint32_t *job);

/* Maps a process below proc_root ("/proc", or a directory laid out like
 * it, for tests): its cgroup file first, then its environment.  Reads at
 * most 64 KiB of cgroup and 1 MiB of environment, opens nothing outside
 * proc_root/PID and follows no symbolic link there.  Returns
 * SM_GPU_MAP_CGROUP or SM_GPU_MAP_ENV with *job, SM_GPU_MAP_NONE when the
 * process belongs to no job or has gone. */
SM_EXTERN int sm_gpu_pid_job(const char *proc_root, uint32_t pid,
                             uint32_t *job);

/* ==== A job's series and its summary ==== */

/* One sample of a job (its GPUs on one node at one time).  NAN: unknown. */
typedef struct sm_gpu_point {
  double sm_util;      /* SM utilisation, percent, mean over its GPUs */
  double mem_bw_util;  /* memory bandwidth utilisation, percent */
  double mem_used_mib; /* memory used, MiB, on its busiest GPU */
  double power_w;      /* power, watts, mean per GPU */
} sm_gpu_point;

/* Statistics of one metric over the steady state. */
typedef struct sm_gpu_stat {
  int n;       /* samples with a known value */
  double mean; /* NAN when n is 0 */
  double p50;  /* median (linear interpolation between ranks) */
  double p95;  /* 95th percentile (same) */
  double max;  /* largest value */
} sm_gpu_stat;

typedef struct sm_gpu_summary {
  long long samples;        /* samples added */
  int stored;               /* samples kept (all, up to the cap) */
  int stride;               /* 1, or the decimation past the cap */
  int steady;               /* 1: statistics over the steady state; 0:
                             * too few samples after the warm-up, all
                             * samples used */
  int steady_samples;       /* kept samples the statistics are over */
  double first, last;       /* times of the first and last sample */
  double warmup_s;          /* warm-up excluded (seconds after first) */
  sm_gpu_stat sm_util;      /* percent */
  sm_gpu_stat mem_bw_util;  /* percent */
  sm_gpu_stat mem_used_mib; /* MiB */
  sm_gpu_stat power_w;      /* watts */
  double mem_peak_mib;      /* highest memory over the whole run, warm-up
                             * included (NAN unknown) */
} sm_gpu_summary;

/* The warm-up rule: the steady state starts min(warmup_s, warmup_frac x
 * span) after a job's first sample, span being first to last sample; a
 * job with fewer than min_steady samples after that is summarised over
 * all its samples (steady 0).  Zero fields take the defaults. */
typedef struct sm_gpu_series_opts {
  double warmup_s;    /* [60]; negative: no warm-up */
  double warmup_frac; /* [0.25] */
  int min_steady;     /* [3] */
  int cap;            /* samples kept before every other one is dropped
                       * [65536] */
} sm_gpu_series_opts;

typedef struct sm_gpu_series sm_gpu_series;

SM_EXTERN sm_gpu_series *sm_gpu_series_new(const sm_gpu_series_opts *o);
SM_EXTERN void sm_gpu_series_free(sm_gpu_series *s);
/* Appends a sample at time t (seconds; not before the previous one).
 * Returns 0, SM_EINVAL for a time that goes back or is not finite, or
 * SM_ENOMEM. */
SM_EXTERN int sm_gpu_series_add(sm_gpu_series *s, double t,
                                const sm_gpu_point *p);
SM_EXTERN void sm_gpu_series_summary(const sm_gpu_series *s,
                                     sm_gpu_summary *out);
/* Writes the series down-sampled to at most `points` equal time bins (the
 * mean of each bin) as one JSON object: t0, step_s, warmup_s and one
 * array per metric (null for an empty bin or an unknown value). */
SM_EXTERN void sm_gpu_series_write_json(const sm_gpu_series *s, int points,
                                        sm_jw *w);
/* Writes a summary as JSON members (samples, steady, warmup_s, sm_util,
 * mem_bw_util, mem_used_mib, power_w as {n, mean, p50, p95, max},
 * gpu_mem_mib) into an open object. */
SM_EXTERN void sm_gpu_summary_write_json(const sm_gpu_summary *s, sm_jw *w);

/* ==== The per-node sampler ==== */

typedef struct sm_gpustat sm_gpustat;

typedef void (*sm_gpustat_log_fn)(void *ud, int level, const char *msg);
/* Levels of the callback. */
enum { SM_GPUSTAT_ERROR = 0, SM_GPUSTAT_WARN, SM_GPUSTAT_INFO };

/* Options; zero fields take the defaults in brackets. */
typedef struct sm_gpustat_opts {
  const char *nvml_lib;      /* library to load ["libnvidia-ml.so.1", found
                              * the way the dynamic loader finds it] */
  const char *proc_root;     /* ["/proc"] */
  const char *out_dir;       /* where job files go (created); NULL: none */
  const char *node;          /* node name [short host name] */
  const char *device_csv;    /* append one CSV line per device and round
                              * (time,index,sm,bw,mem_mib,power_w), or
                              * NULL */
  double interval_s;         /* the sampling interval, recorded in the
                              * files (the caller paces rounds) [1] */
  double flush_s;            /* rewrite an active job's file this often
                              * [10] */
  double idle_end_s;         /* a job seen on no GPU for this long has
                              * ended on this node [60] */
  int series_points;         /* points of the down-sampled series [120] */
  double keep_s;             /* remove this node's job files older than
                              * this [7 days]; < 0: never */
  sm_gpu_series_opts series; /* the warm-up rule */
  sm_gpustat_log_fn log;     /* events (device lost, recovered, write
                              * errors), or NULL */
  void *log_ud;              /* for the callback */
} sm_gpustat_opts;

/* Loads NVML, initialises it and lists the devices.  Returns NULL with a
 * message: SM_ENOENT when the library is not installed, SM_EUNSUPP when
 * it lacks an entry point the sampler needs, SM_EIO when NVML does not
 * initialise (no driver loaded), SM_EACCES/SM_EIO for an output directory
 * that cannot be created. */
SM_EXTERN sm_gpustat *sm_gpustat_open(const sm_gpustat_opts *o, sm_err *err);
/* Shuts NVML down and frees everything (NULL is a no-op); write the last
 * files first with sm_gpustat_flush. */
SM_EXTERN void sm_gpustat_close(sm_gpustat *g);

/* One sampling round at wall-clock time now (Unix seconds, increasing).
 * Per device: SM and memory bandwidth utilisation, memory used, power,
 * the compute processes with their memory and, where the driver offers
 * it, their own SM utilisation; each process is mapped to its job.  A
 * device that fails is not an error: NVML_ERROR_GPU_IS_LOST marks it lost
 * (an infrastructure signal in the files of the jobs that were on it and
 * in the status), other errors leave the metric unknown.  Due job files
 * are written.  Returns 0, or SM_ENOMEM. */
SM_EXTERN int sm_gpustat_sample(sm_gpustat *g, double now, sm_err *err);

/* Writes every job's file now.  final 1 also ends every job (for a
 * sampler that stops while jobs still run, use 0: the files say that the
 * sampler stopped).  Returns 0 or the first write error (every file is
 * still tried). */
SM_EXTERN int sm_gpustat_flush(sm_gpustat *g, double now, int final,
                               sm_err *err);

/* Writes the node's state as one JSON object: node, driver_version,
 * rounds, devices (index, name, uuid, state "ok"/"lost"/"error", last
 * error, attribution "process"/"device"), jobs being sampled, processes
 * not in any job, cpu_s (this process's CPU time). */
SM_EXTERN void sm_gpustat_status_json(const sm_gpustat *g, sm_jw *w);
/* Rewrites path atomically with the status object.  0 or a negative
 * code with a message. */
SM_EXTERN int sm_gpustat_write_status(const sm_gpustat *g, const char *path,
                                      sm_err *err);
/* Devices found at open. */
SM_EXTERN int sm_gpustat_device_count(const sm_gpustat *g);

/* ==== What the agent reads back ==== */

/* GPU metrics of one run of a job, merged over its nodes. */
typedef struct sm_gpu_usage {
  int found;            /* 1: metrics for the run exist */
  double sm_util;       /* steady-state mean SM utilisation, % (NAN) */
  double gpu_mem_mib;   /* peak memory on one GPU, MiB (NAN) */
  char source[8];       /* "nvml" or "sacct" */
  char *gpu_model;      /* GPU model(s), comma-separated, or NULL */
  char *driver_version; /* driver version(s), or NULL */
  int partial;          /* some node's file did not cover the whole run */
  int nodes;            /* node files merged */
  char *json;           /* JSON object for the record's outcome */
  char *signals;        /* infrastructure signal lines ("...:
                         * NVML_ERROR_GPU_IS_LOST"), one per line, or
                         * NULL */
  char signal_node[64]; /* node of the first signal */
} sm_gpu_usage;

SM_EXTERN void sm_gpu_usage_init(sm_gpu_usage *u);
SM_EXTERN void sm_gpu_usage_release(sm_gpu_usage *u);

/* Reads the files node samplers wrote for job into dir/JOB/ and merges
 * those that overlap the run [start, end] (Unix seconds).  A file that
 * does not cover the run yet (its sampler has not sampled past end and
 * has not ended the job) makes the call return SM_EBUSY until
 * end + a wait derived from the file's own interval and flush period
 * (at most 300 s) has passed; after that what is there is used and
 * u->partial is set.  Unreadable or malformed files are skipped (the
 * first problem goes to err, with 0 returned).  Returns 0 (u->found says
 * whether anything was found), SM_EBUSY, or SM_ENOMEM. */
SM_EXTERN int sm_gpu_usage_read(const char *dir, uint32_t job, double start,
                                double end, double now, sm_gpu_usage *u,
                                sm_err *err);

/* Reads Slurm's accounting of a job: the output of
 *   sacct -n -P --noconvert -j JOB -o
 * JobID,AllocTRES,TRESUsageInAve,TRESUsageInMax The job's GPU step is the step
 * with the largest gres/gpumem maximum; its gres/gpuutil average is the SM
 * utilisation (divided by the step's GPUs when it is above 100, capped at 100)
 * and its gres/gpumem maximum the memory.  A cluster that reports no GPU usage
 * (no such keys, or zeros everywhere) gives u->found 0.  Returns 0 or SM_EPARSE
 * for text that is not sacct's parsable output. */
SM_EXTERN int sm_gpu_usage_sacct(const char *text, size_t len, uint32_t job,
                                 sm_gpu_usage *u, sm_err *err);

#ifdef __cplusplus
}
#endif
#endif /* SM_GPUSTAT_H */
