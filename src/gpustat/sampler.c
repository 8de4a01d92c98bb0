/* sampler.c - the per-node GPU sampler: one round per interval over every
 * device, processes mapped to Slurm jobs, one series per job, and the
 * files the Slurm agent reads when the job has ended.
 *
 * Attribution of a device's readings to the jobs on it:
 *   - memory: the job's processes' own usedGpuMemory (NVML lists compute
 *     processes with their memory);
 *   - SM utilisation: where the driver offers per-process samples
 *     (nvmlDeviceGetProcessUtilization), the sum of the job's processes'
 *     smUtil over the samples since the last round (a process without a
 *     sample had no utilisation in that period: NVML returns only
 *     processes with some), capped at 100; otherwise the device's
 *     utilisation, but only when the job is alone on the device;
 *   - memory bandwidth and power exist per device only: they count only
 *     when the job is alone on the device.
 * A value that cannot be attributed is unknown for that sample (never
 * split by guess).  A job's sample averages its devices (SM, bandwidth,
 * power per GPU) and takes its busiest GPU's memory.
 *
 * Files: OUT/JOBID/NODE.STARTMS.json, one per job and node and segment
 * (a job that leaves the GPUs for idle_end_s and comes back starts a new
 * segment), rewritten atomically every flush_s while the job runs and a
 * last time, "final": true, when it has ended on this node.  The format
 * is in docs/gpustat.md. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpustat/gpustat_int.h"
#include "util/util_int.h"

#define MAX_DEVICES 64
#define MAX_JOBS 1024
#define MAX_PROCS 4096
#define MAX_PSAMPLES 8192
#define MAX_ERRS 16
#define MAX_DEV_JOBS 32
#define MAX_HELD 128
#define CLEANUP_EVERY_S 3600.0

enum { DEV_OK = 0, DEV_LOST, DEV_ERROR };

typedef struct gdev {
  unsigned int index;           /* NVML index */
  sm__nvdev h;                  /* handle */
  char name[SM__NVML_NAME_LEN]; /* "NVIDIA A100-SXM4-80GB" */
  char uuid[SM__NVML_UUID_LEN]; /* "GPU-..." */
  double mem_total_mib;         /* NAN unknown */
  int state;                    /* DEV_* */
  int last_code;                /* last NVML error, 0 none */
  char last_call[48];           /* the call that gave it */
  double last_err_time;         /* when */
  int procutil;                 /* -1 untried, 0 not offered, 1 offered */
  unsigned long long last_ts;   /* newest per-process sample seen */
  uint32_t jobs[MAX_DEV_JOBS];  /* jobs on it in the last good round */
  int n_jobs;                   /* their count */
  double sm, bw, mem, pw;       /* last readings (status) */
  int nprocs;                   /* processes last round, -1 unknown */
  struct {
    uint32_t pid;          /* process */
    double sm;             /* its last per-process SM sample */
    unsigned long long ts; /* the sample's time (us) */
  } held[MAX_HELD];        /* last samples of the processes there */
  int n_held;              /* their count */
} gdev;

typedef struct gerr {
  double time;    /* when it was seen */
  int device;     /* NVML index */
  int code;       /* NVML code */
  char line[320]; /* the signal line for the Failure Handler */
} gerr;

typedef struct gjob {
  uint32_t id;                       /* Slurm job id */
  double seg_start;                  /* first sample (names the file) */
  double last_seen;                  /* last round it was on a GPU */
  double last_flush;                 /* last file write */
  sm_gpu_series *ser;                /* its samples */
  unsigned char on_dev[MAX_DEVICES]; /* devices it used */
  gerr errs[MAX_ERRS];               /* infrastructure signals */
  int n_errs;                        /* their count */
  int errs_dropped;                  /* more than MAX_ERRS */
  long long attr_proc, attr_dev;     /* samples attributed per process /
                                      * from the device */
  int mapped_cgroup, mapped_env;     /* how its processes were mapped */
} gjob;

typedef struct pmap {
  uint32_t pid; /* process */
  uint32_t job; /* 0: none */
  int how;      /* SM_GPU_MAP_* */
} pmap;

/* What a job collects in one round. */
typedef struct jacc {
  uint32_t job;
  double sm_sum, bw_sum, pw_sum, mem_max;
  int sm_n, bw_n, pw_n, mem_n, proc_attr, dev_attr;
  unsigned char on_dev[MAX_DEVICES];
} jacc;

struct sm_gpustat {
  sm_gpustat_opts o;
  char *s_lib, *s_proc, *s_out, *s_csv; /* owned option strings */
  char node[64];                        /* node name */
  sm__nvml nv;                          /* NVML */
  char driver[SM__NVML_VERSION_LEN];    /* driver version */
  gdev dev[MAX_DEVICES];                /* devices */
  int n_dev;                            /* their count */
  gjob *jobs;                           /* jobs being sampled */
  int n_jobs;                           /* count */
  size_t cap_jobs;                      /* allocated */
  pmap *pm;                             /* pid -> job, sorted by pid */
  int n_pm;                             /* count */
  size_t cap_pm;                        /* allocated */
  pmap *npm;                            /* this round's map */
  int n_npm;                            /* count */
  size_t cap_npm;                       /* allocated */
  jacc *acc;                            /* this round's jobs */
  int n_acc;                            /* count */
  size_t cap_acc;                       /* allocated */
  sm__nvproc *procs;                    /* process query result */
  unsigned char *scratch;               /* its raw buffer */
  unsigned int cap_procs;               /* entries both hold */
  sm__nvpsample *ps;                    /* per-process samples */
  unsigned int cap_ps;                  /* entries */
  long long rounds;                     /* rounds done */
  double last_round;                    /* time of the last one */
  double last_cleanup;                  /* last removal of old files */
  int unmapped;                         /* processes in no job, last round */
  double unmapped_mib;                  /* their memory */
  gerr node_errs[MAX_ERRS];             /* recent signals, for the status */
  int n_node_errs;                      /* ring count */
  FILE *csv;                            /* device log */
  int ended_jobs;                       /* jobs ended (files final) */
};

/* ==== Small helpers ==== */

static void logf_(sm_gpustat *g, int level, const char *fmt, ...)
    SM_PRINTF(3, 4);
static void logf_(sm_gpustat *g, int level, const char *fmt, ...) {
  char msg[640];
  va_list ap;
  if (g->o.log == NULL)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  g->o.log(g->o.log_ud, level, msg);
}

static char *dup_opt(const char *s) {
  return s ? sm_strdup(s) : NULL;
}

static int mkdir_p(const char *path) {
  char p[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof(p))
    return -1;
  memcpy(p, path, n + 1);
  for (size_t i = 1; i <= n; i++)
    if (p[i] == '/' || p[i] == '\0') {
      char c = p[i];
      p[i] = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST)
        return -1;
      p[i] = c;
    }
  return 0;
}

/* A name safe in a file name: [A-Za-z0-9._-], others become '_'. */
static void safe_name(const char *in, char *out, size_t cap) {
  size_t i = 0;
  for (; in[i] && i + 1 < cap; i++) {
    char c = in[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out[i] = ok ? c : '_';
  }
  out[i] = '\0';
  if (i == 0 || out[0] == '.')
    snprintf(out, cap, "node");
}

/* ==== Open and close ==== */

sm_gpustat *sm_gpustat_open(const sm_gpustat_opts *o, sm_err *err) {
  sm_gpustat *g = sm_calloc(1, sizeof(*g));
  unsigned int n = 0;
  int rc;

  if (g == NULL) {
    sm_err_set(err, SM_ENOMEM, "gpustat: out of memory");
    return NULL;
  }
  if (o)
    g->o = *o;
  g->s_lib = dup_opt(g->o.nvml_lib);
  g->s_proc = dup_opt(g->o.proc_root ? g->o.proc_root : "/proc");
  g->s_out = dup_opt(g->o.out_dir);
  g->s_csv = dup_opt(g->o.device_csv);
  g->o.nvml_lib = g->s_lib;
  g->o.proc_root = g->s_proc;
  g->o.out_dir = g->s_out;
  g->o.device_csv = g->s_csv;
  if (!(g->o.interval_s > 0))
    g->o.interval_s = 1;
  if (!(g->o.flush_s > 0))
    g->o.flush_s = 10;
  if (!(g->o.idle_end_s > 0))
    g->o.idle_end_s = 60;
  if (g->o.series_points <= 0)
    g->o.series_points = 120;
  if (g->o.keep_s == 0)
    g->o.keep_s = 7 * 86400.0;
  if (g->o.node && g->o.node[0]) {
    snprintf(g->node, sizeof(g->node), "%.63s", g->o.node);
  } else {
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    h[strcspn(h, ".")] = '\0';
    snprintf(g->node, sizeof(g->node), "%.63s", h[0] ? h : "localhost");
  }
  g->o.node = g->node;
  if (g->s_proc == NULL || (g->o.nvml_lib && !g->s_lib) ||
      (g->o.out_dir && !g->s_out)) {
    sm_err_set(err, SM_ENOMEM, "gpustat: out of memory");
    sm_gpustat_close(g);
    return NULL;
  }
  if (g->o.out_dir != NULL && mkdir_p(g->o.out_dir) != 0) {
    sm_err_set(err, sm_err_from_errno(errno), "%s: cannot create: %s",
               g->o.out_dir, strerror(errno));
    sm_gpustat_close(g);
    return NULL;
  }
  if (g->o.device_csv != NULL) {
    g->csv = fopen(g->o.device_csv, "a");
    if (g->csv == NULL) {
      sm_err_set(err, sm_err_from_errno(errno), "%s: %s", g->o.device_csv,
                 strerror(errno));
      sm_gpustat_close(g);
      return NULL;
    }
  }
  rc = sm__nvml_load(&g->nv, g->o.nvml_lib, err);
  if (rc != 0) {
    sm_gpustat_close(g);
    return NULL;
  }
  snprintf(g->driver, sizeof(g->driver), "unknown");
  if (g->nv.driver_version &&
      g->nv.driver_version(g->driver, sizeof(g->driver)) != 0)
    snprintf(g->driver, sizeof(g->driver), "unknown");
  g->driver[sizeof(g->driver) - 1] = '\0';
  rc = g->nv.count(&n);
  if (rc != SM__NVML_SUCCESS) {
    sm_err_set(err, SM_EIO, "%s: nvmlDeviceGetCount failed: %s", g->nv.lib,
               sm__nvml_code_name(rc));
    sm_gpustat_close(g);
    return NULL;
  }
  if (n > MAX_DEVICES)
    n = MAX_DEVICES;
  for (unsigned int i = 0; i < n; i++) {
    gdev *d = &g->dev[g->n_dev];
    sm__nvmem m;
    memset(d, 0, sizeof(*d));
    d->index = i;
    d->procutil = -1;
    d->mem_total_mib = NAN;
    d->sm = d->bw = d->mem = d->pw = NAN;
    rc = g->nv.handle(i, &d->h);
    if (rc != SM__NVML_SUCCESS) {
      /* A device that cannot even be opened is reported, not sampled. */
      logf_(g, SM_GPUSTAT_WARN, "GPU %u: nvmlDeviceGetHandleByIndex: %s", i,
            sm__nvml_code_name(rc));
      continue;
    }
    if (g->nv.name == NULL || g->nv.name(d->h, d->name, sizeof(d->name)) != 0)
      snprintf(d->name, sizeof(d->name), "unknown");
    if (g->nv.uuid == NULL || g->nv.uuid(d->h, d->uuid, sizeof(d->uuid)) != 0)
      snprintf(d->uuid, sizeof(d->uuid), "unknown");
    d->name[sizeof(d->name) - 1] = d->uuid[sizeof(d->uuid) - 1] = '\0';
    if (g->nv.mem(d->h, &m) == SM__NVML_SUCCESS)
      d->mem_total_mib = (double)m.total / (1024.0 * 1024.0);
    g->n_dev++;
  }
  g->cap_procs = 64;
  g->procs = sm_calloc(g->cap_procs, sizeof(*g->procs));
  g->scratch = sm_malloc((size_t)g->cap_procs * 32);
  g->cap_ps = 256;
  g->ps = sm_calloc(g->cap_ps, sizeof(*g->ps));
  if (g->procs == NULL || g->scratch == NULL || g->ps == NULL) {
    sm_err_set(err, SM_ENOMEM, "gpustat: out of memory");
    sm_gpustat_close(g);
    return NULL;
  }
  return g;
}

static void job_free(gjob *j) {
  sm_gpu_series_free(j->ser);
  j->ser = NULL;
}

void sm_gpustat_close(sm_gpustat *g) {
  if (g == NULL)
    return;
  sm__nvml_unload(&g->nv);
  for (int i = 0; i < g->n_jobs; i++)
    job_free(&g->jobs[i]);
  sm_free(g->jobs);
  sm_free(g->pm);
  sm_free(g->npm);
  sm_free(g->acc);
  sm_free(g->procs);
  sm_free(g->scratch);
  sm_free(g->ps);
  if (g->csv)
    fclose(g->csv);
  sm_free(g->s_lib);
  sm_free(g->s_proc);
  sm_free(g->s_out);
  sm_free(g->s_csv);
  sm_free(g);
}

int sm_gpustat_device_count(const sm_gpustat *g) {
  return g->n_dev;
}

/* ==== Jobs ==== */

static gjob *job_find(sm_gpustat *g, uint32_t id) {
  for (int i = 0; i < g->n_jobs; i++)
    if (g->jobs[i].id == id)
      return &g->jobs[i];
  return NULL;
}

static gjob *job_add(sm_gpustat *g, uint32_t id, double now) {
  gjob *j;
  if (g->n_jobs >= MAX_JOBS)
    return NULL;
  if (SM__GROW(g->jobs, (size_t)g->n_jobs + 1, g->cap_jobs) != 0)
    return NULL;
  j = &g->jobs[g->n_jobs];
  memset(j, 0, sizeof(*j));
  j->ser = sm_gpu_series_new(&g->o.series);
  if (j->ser == NULL)
    return NULL;
  j->id = id;
  j->seg_start = now;
  j->last_seen = now;
  j->last_flush = now;
  g->n_jobs++;
  return j;
}

static void job_signal(gjob *j, const gerr *e) {
  if (j->n_errs < MAX_ERRS)
    j->errs[j->n_errs++] = *e;
  else
    j->errs_dropped++;
}

/* ==== Device errors ==== */

static void device_error(sm_gpustat *g, gdev *d, const char *call, int code,
                         double now) {
  if (code == SM__NVML_ERROR_GPU_IS_LOST) {
    gerr e;
    if (d->state == DEV_LOST)
      return;
    memset(&e, 0, sizeof(e));
    e.time = now;
    e.device = (int)d->index;
    e.code = code;
    snprintf(e.line, sizeof(e.line),
             "schedmate gpustat: node %s: GPU %u (%s, %s): %s failed: %s (%s)",
             g->node, d->index, d->uuid, d->name, call,
             sm__nvml_code_name(code), sm__nvml_strerror(&g->nv, code));
    d->state = DEV_LOST;
    d->last_code = code;
    d->last_err_time = now;
    snprintf(d->last_call, sizeof(d->last_call), "%s", call);
    logf_(g, SM_GPUSTAT_ERROR, "%s", e.line);
    g->node_errs[g->n_node_errs % MAX_ERRS] = e;
    g->n_node_errs++;
    /* The jobs that were on the device are told. */
    for (int k = 0; k < d->n_jobs; k++) {
      gjob *j = job_find(g, d->jobs[k]);
      if (j != NULL)
        job_signal(j, &e);
    }
    return;
  }
  if (d->state == DEV_OK || d->last_code != code)
    logf_(g, SM_GPUSTAT_WARN, "GPU %u (%s): %s failed: %s", d->index, d->uuid,
          call, sm__nvml_code_name(code));
  if (d->state != DEV_LOST)
    d->state = DEV_ERROR;
  d->last_code = code;
  d->last_err_time = now;
  snprintf(d->last_call, sizeof(d->last_call), "%s", call);
}

/* ==== Process map ==== */

static int by_pid(const void *a, const void *b) {
  uint32_t x = ((const pmap *)a)->pid, y = ((const pmap *)b)->pid;
  return x < y ? -1 : x > y;
}

/* The job of a pid: last round's answer, or a fresh look in /proc. */
static const pmap *map_pid(sm_gpustat *g, uint32_t pid) {
  pmap key = {pid, 0, 0}, *hit;

  for (int i = 0; i < g->n_npm; i++)
    if (g->npm[i].pid == pid)
      return &g->npm[i];
  if (SM__GROW(g->npm, (size_t)g->n_npm + 1, g->cap_npm) != 0)
    return NULL;
  hit = g->n_pm ? bsearch(&key, g->pm, (size_t)g->n_pm, sizeof(*g->pm), by_pid)
                : NULL;
  if (hit != NULL) {
    key = *hit;
  } else {
    key.how = sm_gpu_pid_job(g->o.proc_root, pid, &key.job);
    if (key.how == SM_GPU_MAP_NONE)
      key.job = 0;
  }
  g->npm[g->n_npm] = key;
  return &g->npm[g->n_npm++];
}

static jacc *acc_get(sm_gpustat *g, uint32_t job) {
  for (int i = 0; i < g->n_acc; i++)
    if (g->acc[i].job == job)
      return &g->acc[i];
  if (g->n_acc >= MAX_JOBS)
    return NULL;
  if (SM__GROW(g->acc, (size_t)g->n_acc + 1, g->cap_acc) != 0)
    return NULL;
  memset(&g->acc[g->n_acc], 0, sizeof(jacc));
  g->acc[g->n_acc].job = job;
  g->acc[g->n_acc].mem_max = NAN;
  return &g->acc[g->n_acc++];
}

/* ==== One device in one round ==== */

/* Microseconds of the real clock, NVML's sample time base. */
static unsigned long long real_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000ULL +
         (unsigned long long)ts.tv_nsec / 1000;
}

/* A process's SM utilisation in this round: the mean of its new samples;
 * without one, its last sample while that is at most `hold` old (the
 * driver samples processes every 1/6 s to 1 s, so a faster sampler sees
 * rounds without a sample); else 0 (NVML returns only processes that had
 * some utilisation). */
static double proc_sm(gdev *d, const sm__nvpsample *ps, unsigned int nps,
                      uint32_t pid, unsigned long long now_us,
                      unsigned long long hold) {
  double sum = 0;
  unsigned long long ts = 0;
  int n = 0, k;

  for (unsigned int s = 0; s < nps; s++)
    if (ps[s].pid == pid && ps[s].smUtil <= 100) {
      sum += ps[s].smUtil;
      n++;
      if (ps[s].timeStamp > ts)
        ts = ps[s].timeStamp;
    }
  for (k = 0; k < d->n_held && d->held[k].pid != pid; k++)
    ;
  if (n > 0) {
    if (k == d->n_held && d->n_held < MAX_HELD)
      d->n_held++;
    if (k < d->n_held) {
      d->held[k].pid = pid;
      d->held[k].sm = sum / n;
      d->held[k].ts = ts;
    }
    return sum / n;
  }
  if (k < d->n_held && now_us >= d->held[k].ts &&
      now_us - d->held[k].ts <= hold)
    return d->held[k].sm;
  return 0;
}

/* Forgets the held samples of processes no longer on the device. */
static void prune_held(gdev *d, const sm__nvproc *procs, unsigned int np) {
  int k = 0;
  for (int i = 0; i < d->n_held; i++) {
    unsigned int p;
    for (p = 0; p < np && procs[p].pid != d->held[i].pid; p++)
      ;
    if (p < np)
      d->held[k++] = d->held[i];
  }
  d->n_held = k;
}

/* Runs the process query, growing the buffers once if needed. */
static int query_procs(sm_gpustat *g, gdev *d, unsigned int *n) {
  int rc = sm__nvml_procs(&g->nv, d->h, g->procs, g->cap_procs, n, g->scratch);
  if (rc == SM__NVML_ERROR_INSUFFICIENT_SIZE && *n > g->cap_procs &&
      *n <= MAX_PROCS) {
    unsigned int cap = *n + 16;
    sm__nvproc *p = sm_realloc(g->procs, (size_t)cap * sizeof(*p));
    unsigned char *s;
    if (p == NULL)
      return SM_ENOMEM;
    g->procs = p;
    s = sm_realloc(g->scratch, (size_t)cap * 32);
    if (s == NULL)
      return SM_ENOMEM;
    g->scratch = s;
    g->cap_procs = cap;
    rc = sm__nvml_procs(&g->nv, d->h, g->procs, g->cap_procs, n, g->scratch);
  }
  return rc;
}

/* Per-process samples since the last round.  Returns 1 with *n samples
 * (possibly 0), 0 when the device offers none, -1 lost. */
static int query_psamples(sm_gpustat *g, gdev *d, unsigned int *n, double now) {
  int rc;
  unsigned int c = g->cap_ps;

  *n = 0;
  if (g->nv.proc_util == NULL || d->procutil == 0)
    return 0;
  rc = g->nv.proc_util(d->h, g->ps, &c, d->last_ts);
  if (rc == SM__NVML_ERROR_INSUFFICIENT_SIZE && c > g->cap_ps &&
      c <= MAX_PSAMPLES) {
    sm__nvpsample *p = sm_realloc(g->ps, (size_t)(c + 16) * sizeof(*p));
    if (p == NULL)
      return 0;
    g->ps = p;
    g->cap_ps = c + 16;
    c = g->cap_ps;
    rc = g->nv.proc_util(d->h, g->ps, &c, d->last_ts);
  }
  switch (rc) {
  case SM__NVML_SUCCESS:
    d->procutil = 1;
    *n = c > g->cap_ps ? g->cap_ps : c;
    for (unsigned int i = 0; i < *n; i++)
      if (g->ps[i].timeStamp > d->last_ts)
        d->last_ts = g->ps[i].timeStamp;
    return 1;
  case SM__NVML_ERROR_NOT_FOUND:
    /* No process had any utilisation since the last round. */
    d->procutil = 1;
    return 1;
  case SM__NVML_ERROR_NOT_SUPPORTED:
    d->procutil = 0;
    return 0;
  case SM__NVML_ERROR_GPU_IS_LOST:
    device_error(g, d, "nvmlDeviceGetProcessUtilization", rc, now);
    return -1;
  default:
    device_error(g, d, "nvmlDeviceGetProcessUtilization", rc, now);
    return 0;
  }
}

static double csv_num(double v, char *buf, size_t cap) {
  if (isfinite(v))
    snprintf(buf, cap, "%.1f", v);
  else
    buf[0] = '\0';
  return v;
}

/* One round's readings of a device, for the attribution to its jobs. */
typedef struct dev_reading {
  double sm, bw, mem, pw;    /* device SM %, memory bandwidth %, MiB, W */
  int have_ps;               /* 1: per-process samples in g->ps */
  unsigned int np, nps;      /* processes, per-process samples */
  unsigned long long now_us; /* this round's time */
  unsigned long long hold;   /* how long a process sample holds (us) */
} dev_reading;

/* The distinct jobs of the np processes in g->procs (at most
 * MAX_DEV_JOBS; *overflow says there were more), counting the processes
 * of no job in *unmapped.  Returns their count, or SM_ENOMEM. */
static int device_jobs(sm_gpustat *g, unsigned int np, uint32_t *djobs,
                       int *unmapped, int *overflow) {
  int n_djobs = 0;

  for (unsigned int i = 0; i < np; i++) {
    const pmap *pm = map_pid(g, g->procs[i].pid);
    int k;
    if (pm == NULL)
      return SM_ENOMEM;
    if (pm->job == 0) {
      (*unmapped)++;
      g->unmapped++;
      if (g->procs[i].usedGpuMemory != SM__NVML_NOT_AVAILABLE)
        g->unmapped_mib += (double)g->procs[i].usedGpuMemory / 1048576.0;
      continue;
    }
    for (k = 0; k < n_djobs && djobs[k] != pm->job; k++)
      ;
    if (k == n_djobs) {
      if (n_djobs < MAX_DEV_JOBS)
        djobs[n_djobs++] = pm->job;
      else
        *overflow = 1;
    }
  }
  return n_djobs;
}

/* Adds the device's share of one job to the job's round (alone: the job
 * is the only thing on the device, so the device's own readings are its). */
static void attribute_job(sm_gpustat *g, gdev *d, uint32_t job, int alone,
                          const dev_reading *r) {
  double jmem = 0, jsm = 0, v;
  int mem_known = 1, nproc = 0;
  jacc *ac = acc_get(g, job);

  if (ac == NULL)
    return;
  for (unsigned int i = 0; i < r->np; i++) {
    const pmap *pm = map_pid(g, g->procs[i].pid);
    if (pm == NULL || pm->job != job)
      continue;
    nproc++;
    if (g->procs[i].usedGpuMemory == SM__NVML_NOT_AVAILABLE)
      mem_known = 0;
    else
      jmem += (double)g->procs[i].usedGpuMemory / 1048576.0;
    if (r->have_ps > 0)
      jsm += proc_sm(d, g->ps, r->nps, g->procs[i].pid, r->now_us, r->hold);
  }
  if (nproc == 0)
    return;
  /* SM: per process where offered, else the device's if alone. */
  v = r->have_ps > 0 ? fmin(jsm, 100.0) : alone ? r->sm : NAN;
  if (isfinite(v)) {
    ac->sm_sum += v;
    ac->sm_n++;
    if (r->have_ps > 0)
      ac->proc_attr++;
    else
      ac->dev_attr++;
  }
  v = mem_known ? jmem : alone ? r->mem : NAN;
  if (isfinite(v) && !(v <= ac->mem_max))
    ac->mem_max = v;
  if (isfinite(v))
    ac->mem_n++;
  if (alone && isfinite(r->bw)) {
    ac->bw_sum += r->bw;
    ac->bw_n++;
  }
  if (alone && isfinite(r->pw)) {
    ac->pw_sum += r->pw;
    ac->pw_n++;
  }
  ac->on_dev[d - g->dev] = 1;
}

static int sample_device(sm_gpustat *g, gdev *d, double now) {
  sm__nvutil u;
  sm__nvmem m;
  unsigned int pw_mw = 0, np = 0, nps = 0;
  double sm_dev = NAN, bw = NAN, mem = NAN, pw = NAN;
  int rc, have_ps, procs_ok;
  uint32_t djobs[MAX_DEV_JOBS];
  int n_djobs, unmapped = 0, overflow = 0;
  dev_reading r;
  unsigned long long now_us = real_us();
  unsigned long long hold =
      (unsigned long long)(fmax(1.0, 1.5 * g->o.interval_s) * 1e6);

  rc = g->nv.util(d->h, &u);
  if (rc == SM__NVML_ERROR_GPU_IS_LOST) {
    device_error(g, d, "nvmlDeviceGetUtilizationRates", rc, now);
    d->sm = d->bw = d->mem = d->pw = NAN;
    d->nprocs = -1;
    return 0;
  }
  if (d->state == DEV_LOST) {
    logf_(g, SM_GPUSTAT_WARN, "GPU %u (%s) answers again", d->index, d->uuid);
    d->state = DEV_OK;
    d->last_ts = 0;
  }
  if (rc == SM__NVML_SUCCESS) {
    sm_dev = u.gpu <= 100 ? u.gpu : NAN;
    bw = u.memory <= 100 ? u.memory : NAN;
  } else if (rc != SM__NVML_ERROR_NOT_SUPPORTED) {
    device_error(g, d, "nvmlDeviceGetUtilizationRates", rc, now);
  }
  rc = g->nv.mem(d->h, &m);
  if (rc == SM__NVML_SUCCESS)
    mem = (double)m.used / (1024.0 * 1024.0);
  else if (rc != SM__NVML_ERROR_NOT_SUPPORTED)
    device_error(g, d, "nvmlDeviceGetMemoryInfo", rc, now);
  if (d->state == DEV_LOST)
    return 0;
  if (g->nv.power != NULL) {
    rc = g->nv.power(d->h, &pw_mw);
    if (rc == SM__NVML_SUCCESS)
      pw = pw_mw / 1000.0;
    else if (rc != SM__NVML_ERROR_NOT_SUPPORTED)
      device_error(g, d, "nvmlDeviceGetPowerUsage", rc, now);
    if (d->state == DEV_LOST)
      return 0;
  }
  rc = query_procs(g, d, &np);
  if (rc == SM_ENOMEM)
    return SM_ENOMEM;
  procs_ok = rc == SM__NVML_SUCCESS;
  if (!procs_ok) {
    if (rc != SM__NVML_ERROR_NOT_SUPPORTED)
      device_error(g, d, "nvmlDeviceGetComputeRunningProcesses", rc, now);
    if (d->state == DEV_LOST)
      return 0;
    np = 0;
  }
  have_ps = np > 0 ? query_psamples(g, d, &nps, now) : 0;
  if (have_ps < 0)
    return 0;
  if (rc == SM__NVML_SUCCESS && d->state == DEV_ERROR && d->last_code != 0 &&
      now - d->last_err_time > 2 * g->o.interval_s)
    d->state = DEV_OK;
  d->sm = sm_dev;
  d->bw = bw;
  d->mem = mem;
  d->pw = pw;
  d->nprocs = procs_ok ? (int)np : -1;
  if (g->csv != NULL) {
    char a[24], b[24], c[24], e[24];
    csv_num(sm_dev, a, sizeof(a));
    csv_num(bw, b, sizeof(b));
    csv_num(mem, c, sizeof(c));
    csv_num(pw, e, sizeof(e));
    fprintf(g->csv, "%.3f,%u,%s,%s,%s,%s\n", now, d->index, a, b, c, e);
  }
  if (!procs_ok)
    return 0; /* nothing can be attributed this round */

  n_djobs = device_jobs(g, np, djobs, &unmapped, &overflow);
  if (n_djobs < 0)
    return SM_ENOMEM;
  d->n_jobs = n_djobs;
  memcpy(d->jobs, djobs, (size_t)n_djobs * sizeof(uint32_t));
  r.sm = sm_dev;
  r.bw = bw;
  r.mem = mem;
  r.pw = pw;
  r.have_ps = have_ps;
  r.np = np;
  r.nps = nps;
  r.now_us = now_us;
  r.hold = hold;
  for (int k = 0; k < n_djobs; k++)
    attribute_job(g, d, djobs[k], n_djobs == 1 && unmapped == 0 && !overflow,
                  &r);
  prune_held(d, g->procs, np);
  return 0;
}

/* ==== Files ==== */

static void job_path(const sm_gpustat *g, const gjob *j, char *dir, size_t dcap,
                     char *file, size_t fcap) {
  char node[64];
  safe_name(g->node, node, sizeof(node));
  snprintf(dir, dcap, "%s/%u", g->o.out_dir, (unsigned)j->id);
  snprintf(file, fcap, "%s/%s.%lld.json", dir, node,
           (long long)llround(j->seg_start * 1000));
}

static void job_json(const sm_gpustat *g, const gjob *j, double now, int final,
                     int stopped, sm_jw *w) {
  sm_gpu_summary s;

  sm_gpu_series_summary(j->ser, &s);
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "format", SM__GPUSTAT_FORMAT);
  sm_jw_kv_int(w, "job_id", j->id);
  sm_jw_kv_str(w, "node", g->node);
  sm_jw_kv_num(w, "first_sample", round(s.first * 1000) / 1000);
  sm_jw_kv_num(w, "last_sample", round(s.last * 1000) / 1000);
  sm_jw_kv_num(w, "sampled_until", round(now * 1000) / 1000);
  sm_jw_kv_num(w, "interval_s", g->o.interval_s);
  sm_jw_kv_num(w, "flush_s", g->o.flush_s);
  sm_jw_kv_num(w, "idle_end_s", g->o.idle_end_s);
  sm_jw_kv_bool(w, "final", final);
  sm_jw_kv_bool(w, "sampler_stopped", stopped);
  sm_jw_kv_str(w, "source", "nvml");
  sm_jw_kv_str(w, "driver_version", g->driver);
  sm_jw_kv_str(w, "attribution",
               j->attr_proc && j->attr_dev ? "mixed"
               : j->attr_proc              ? "process"
               : j->attr_dev               ? "device"
                                           : NULL);
  sm_jw_kv_str(w, "mapped_by",
               j->mapped_cgroup ? "cgroup"
               : j->mapped_env  ? "environ"
                                : NULL);
  sm_jw_key(w, "devices");
  sm_jw_arr_begin(w);
  for (int i = 0; i < g->n_dev; i++) {
    const gdev *d = &g->dev[i];
    if (!j->on_dev[i])
      continue;
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "index", d->index);
    sm_jw_kv_str(w, "name", d->name);
    sm_jw_kv_str(w, "uuid", d->uuid);
    sm_jw_kv_num(w, "mem_total_mib", round(d->mem_total_mib));
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_key(w, "summary");
  sm_jw_obj_begin(w);
  sm_gpu_summary_write_json(&s, w);
  sm_jw_obj_end(w);
  sm_jw_key(w, "series");
  sm_gpu_series_write_json(j->ser, g->o.series_points, w);
  sm_jw_key(w, "errors");
  sm_jw_arr_begin(w);
  for (int i = 0; i < j->n_errs; i++) {
    const gerr *e = &j->errs[i];
    const gdev *d = NULL;
    for (int k = 0; k < g->n_dev; k++)
      if ((int)g->dev[k].index == e->device)
        d = &g->dev[k];
    sm_jw_obj_begin(w);
    sm_jw_kv_num(w, "time", round(e->time * 1000) / 1000);
    sm_jw_kv_int(w, "device", e->device);
    sm_jw_kv_str(w, "uuid", d ? d->uuid : NULL);
    sm_jw_kv_str(w, "error", sm__nvml_code_name(e->code));
    sm_jw_kv_str(w, "category", "infrastructure");
    sm_jw_kv_str(w, "component", "gpu");
    sm_jw_kv_str(w, "line", e->line);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_kv_int(w, "errors_dropped", j->errs_dropped);
  sm_jw_obj_end(w);
}

static int job_write(sm_gpustat *g, gjob *j, double now, int final, int stopped,
                     sm_err *err) {
  char dir[4200], file[4400];
  sm_buf b;
  sm_jw w;
  int rc;

  j->last_flush = now;
  if (g->o.out_dir == NULL)
    return 0;
  job_path(g, j, dir, sizeof(dir), file, sizeof(file));
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", dir,
                      strerror(errno));
  sm_buf_init(&b, (size_t)4 << 20);
  sm_jw_init(&w, &b);
  job_json(g, j, now, final, stopped, &w);
  if (sm_jw_finish(&w) != 0 || sm_buf_addc(&b, '\n') != 0) {
    sm_buf_release(&b);
    return sm_err_set(err, SM_ENOMEM, "%s: cannot format", file);
  }
  rc = sm__write_atomic(file, b.data, b.len, err);
  sm_buf_release(&b);
  return rc;
}

/* Removes this node's job files older than keep_s, and job directories
 * left empty. */
static void cleanup(sm_gpustat *g, double now) {
  char node[64], path[4608];
  DIR *top;
  struct dirent *e;
  size_t nl;
  int scanned = 0;

  g->last_cleanup = now;
  if (g->o.out_dir == NULL || g->o.keep_s < 0)
    return;
  safe_name(g->node, node, sizeof(node));
  nl = strlen(node);
  top = opendir(g->o.out_dir);
  if (top == NULL)
    return;
  while ((e = readdir(top)) != NULL && scanned < 100000) {
    DIR *jd;
    struct dirent *f;
    char jdir[4200];
    int removed = 0;
    if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
        strspn(e->d_name, "0123456789") != strlen(e->d_name))
      continue;
    snprintf(jdir, sizeof(jdir), "%s/%s", g->o.out_dir, e->d_name);
    jd = opendir(jdir);
    if (jd == NULL)
      continue;
    while ((f = readdir(jd)) != NULL && scanned++ < 100000) {
      struct stat st;
      size_t fl = strlen(f->d_name);
      if (fl <= nl + 6 || strncmp(f->d_name, node, nl) != 0 ||
          f->d_name[nl] != '.' || strcmp(f->d_name + fl - 5, ".json") != 0)
        continue;
      snprintf(path, sizeof(path), "%s/%s", jdir, f->d_name);
      if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
          (double)st.st_mtime < now - g->o.keep_s && unlink(path) == 0)
        removed = 1;
    }
    closedir(jd);
    if (removed)
      rmdir(jdir); /* only succeeds when no other node's file is left */
  }
  closedir(top);
}

/* ==== Rounds ==== */

int sm_gpustat_sample(sm_gpustat *g, double now, sm_err *err) {
  int rc = 0;
  sm_err werr = {0};

  if (!isfinite(now) || (g->rounds > 0 && now < g->last_round))
    return sm_err_set(err, SM_EINVAL, "gpustat: time went back");
  g->n_npm = 0;
  g->n_acc = 0;
  g->unmapped = 0;
  g->unmapped_mib = 0;
  for (int i = 0; i < g->n_dev && rc == 0; i++)
    rc = sample_device(g, &g->dev[i], now);
  if (rc != 0)
    return sm_err_set(err, rc, "gpustat: out of memory");
  if (g->csv)
    fflush(g->csv);
  /* This round's process map replaces the last one. */
  if (g->n_npm > 1)
    qsort(g->npm, (size_t)g->n_npm, sizeof(*g->npm), by_pid);
  {
    pmap *t = g->pm;
    size_t c = g->cap_pm;
    g->pm = g->npm;
    g->n_pm = g->n_npm;
    g->cap_pm = g->cap_npm;
    g->npm = t;
    g->cap_npm = c;
    g->n_npm = 0;
  }
  for (int i = 0; i < g->n_pm; i++) {
    gjob *j;
    if (g->pm[i].job == 0 || (j = job_find(g, g->pm[i].job)) == NULL)
      continue;
    if (g->pm[i].how == SM_GPU_MAP_CGROUP)
      j->mapped_cgroup = 1;
    else if (g->pm[i].how == SM_GPU_MAP_ENV)
      j->mapped_env = 1;
  }
  for (int a = 0; a < g->n_acc; a++) {
    const jacc *ac = &g->acc[a];
    gjob *j = job_find(g, ac->job);
    sm_gpu_point p;
    if (j == NULL) {
      j = job_add(g, ac->job, now);
      if (j == NULL) {
        logf_(g, SM_GPUSTAT_WARN, "job %u: not sampled (too many jobs)",
              (unsigned)ac->job);
        continue;
      }
      for (int i = 0; i < g->n_pm; i++)
        if (g->pm[i].job == ac->job)
          *(g->pm[i].how == SM_GPU_MAP_CGROUP ? &j->mapped_cgroup
                                              : &j->mapped_env) = 1;
    }
    p.sm_util = ac->sm_n ? ac->sm_sum / ac->sm_n : NAN;
    p.mem_bw_util = ac->bw_n ? ac->bw_sum / ac->bw_n : NAN;
    p.mem_used_mib = ac->mem_max;
    p.power_w = ac->pw_n ? ac->pw_sum / ac->pw_n : NAN;
    if (sm_gpu_series_add(j->ser, now, &p) == SM_ENOMEM)
      return sm_err_set(err, SM_ENOMEM, "gpustat: out of memory");
    j->last_seen = now;
    j->attr_proc += ac->proc_attr;
    j->attr_dev += ac->dev_attr;
    for (int i = 0; i < MAX_DEVICES; i++)
      j->on_dev[i] |= ac->on_dev[i];
  }
  g->rounds++;
  g->last_round = now;
  /* Jobs that left the GPUs end; due files are written. */
  for (int i = 0; i < g->n_jobs;) {
    gjob *j = &g->jobs[i];
    if (now - j->last_seen >= g->o.idle_end_s) {
      if (job_write(g, j, now, 1, 0, &werr) != 0) {
        logf_(g, SM_GPUSTAT_ERROR, "job %u: %s", (unsigned)j->id, werr.msg);
        sm_err_clear(&werr);
      }
      job_free(j);
      g->jobs[i] = g->jobs[--g->n_jobs];
      g->ended_jobs++;
      continue;
    }
    if (now - j->last_flush >= g->o.flush_s &&
        job_write(g, j, now, 0, 0, &werr) != 0) {
      logf_(g, SM_GPUSTAT_ERROR, "job %u: %s", (unsigned)j->id, werr.msg);
      sm_err_clear(&werr);
    }
    i++;
  }
  if (now - g->last_cleanup >= CLEANUP_EVERY_S)
    cleanup(g, now);
  return 0;
}

int sm_gpustat_flush(sm_gpustat *g, double now, int final, sm_err *err) {
  int first = 0;

  for (int i = 0; i < g->n_jobs; i++) {
    /* A job that was not on a GPU in the last round has ended. */
    int gone = g->jobs[i].last_seen < g->last_round;
    int rc =
        job_write(g, &g->jobs[i], now, final || gone, !final && !gone, err);
    if (rc != 0 && first == 0)
      first = rc;
  }
  if (final) {
    for (int i = 0; i < g->n_jobs; i++)
      job_free(&g->jobs[i]);
    g->ended_jobs += g->n_jobs;
    g->n_jobs = 0;
  }
  return first;
}

/* ==== Status ==== */

void sm_gpustat_status_json(const sm_gpustat *g, sm_jw *w) {
  static const char *const states[] = {"ok", "lost", "error"};
  struct rusage ru;
  double cpu = NAN;

  if (getrusage(RUSAGE_SELF, &ru) == 0)
    cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
          (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  sm_jw_obj_begin(w);
  sm_jw_kv_str(w, "node", g->node);
  sm_jw_kv_str(w, "nvml", g->nv.lib);
  sm_jw_kv_str(w, "driver_version", g->driver);
  sm_jw_kv_int(w, "rounds", g->rounds);
  sm_jw_kv_num(w, "last_round", round(g->last_round * 1000) / 1000);
  sm_jw_kv_num(w, "interval_s", g->o.interval_s);
  sm_jw_kv_num(w, "cpu_s", round(cpu * 1e4) / 1e4);
  sm_jw_key(w, "devices");
  sm_jw_arr_begin(w);
  for (int i = 0; i < g->n_dev; i++) {
    const gdev *d = &g->dev[i];
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "index", d->index);
    sm_jw_kv_str(w, "name", d->name);
    sm_jw_kv_str(w, "uuid", d->uuid);
    sm_jw_kv_str(w, "state", states[d->state]);
    sm_jw_kv_str(w, "error",
                 d->last_code ? sm__nvml_code_name(d->last_code) : NULL);
    sm_jw_kv_str(w, "error_call", d->last_code ? d->last_call : NULL);
    sm_jw_kv_str(w, "attribution",
                 d->procutil == 1   ? "process"
                 : d->procutil == 0 ? "device"
                                    : NULL);
    sm_jw_kv_num(w, "sm_util", d->sm);
    sm_jw_kv_num(w, "mem_bw_util", d->bw);
    sm_jw_kv_num(w, "mem_used_mib", isfinite(d->mem) ? round(d->mem) : NAN);
    sm_jw_kv_num(w, "mem_total_mib", round(d->mem_total_mib));
    sm_jw_kv_num(w, "power_w", isfinite(d->pw) ? round(d->pw * 10) / 10 : NAN);
    sm_jw_key(w, "processes");
    if (d->nprocs >= 0)
      sm_jw_int(w, d->nprocs);
    else
      sm_jw_null(w);
    sm_jw_key(w, "jobs");
    sm_jw_arr_begin(w);
    for (int k = 0; k < d->n_jobs; k++)
      sm_jw_int(w, d->jobs[k]);
    sm_jw_arr_end(w);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_key(w, "jobs");
  sm_jw_arr_begin(w);
  for (int i = 0; i < g->n_jobs; i++) {
    const gjob *j = &g->jobs[i];
    sm_gpu_summary s;
    sm_gpu_series_summary(j->ser, &s);
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "job_id", j->id);
    sm_jw_key(w, "devices");
    sm_jw_arr_begin(w);
    for (int k = 0; k < g->n_dev; k++)
      if (j->on_dev[k])
        sm_jw_int(w, g->dev[k].index);
    sm_jw_arr_end(w);
    sm_gpu_summary_write_json(&s, w);
    sm_jw_kv_int(w, "signals", j->n_errs);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_kv_int(w, "jobs_ended", g->ended_jobs);
  sm_jw_key(w, "unattributed");
  sm_jw_obj_begin(w);
  sm_jw_kv_int(w, "processes", g->unmapped);
  sm_jw_kv_num(w, "mem_mib", round(g->unmapped_mib));
  sm_jw_obj_end(w);
  sm_jw_key(w, "signals");
  sm_jw_arr_begin(w);
  for (int i = 0; i < g->n_node_errs && i < MAX_ERRS; i++) {
    int k = g->n_node_errs <= MAX_ERRS ? i : (g->n_node_errs + i) % MAX_ERRS;
    sm_jw_str(w, g->node_errs[k].line);
  }
  sm_jw_arr_end(w);
  sm_jw_obj_end(w);
}

int sm_gpustat_write_status(const sm_gpustat *g, const char *path,
                            sm_err *err) {
  sm_buf b;
  sm_jw w;
  int rc;

  sm_buf_init(&b, (size_t)4 << 20);
  sm_jw_init(&w, &b);
  sm_gpustat_status_json(g, &w);
  if (sm_jw_finish(&w) != 0 || sm_buf_addc(&b, '\n') != 0) {
    sm_buf_release(&b);
    return sm_err_set(err, SM_ENOMEM, "%s: cannot format the status", path);
  }
  rc = sm__write_atomic(path, b.data, b.len, err);
  sm_buf_release(&b);
  return rc;
}
