/* cmd_gpustat.c - `schedmate gpustat`: the per-node GPU sampler.  Every
 * --interval it samples each GPU and each GPU process through NVML, maps
 * the processes to Slurm jobs and keeps one series per job; a job's file
 * in --out (for the Slurm agent) is rewritten while it runs and completed
 * when it has left the GPUs.  SIGTERM or SIGINT stop it cleanly. */
#include <errno.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "cli.h"
#include "options.h"
#include "schedmate/sm_gpustat.h"

static const cli_help help = {
    .head =
        "usage: schedmate gpustat [--out DIR] [--interval S] [--node NAME]\n"
        "           [--status FILE] [--device-log FILE] [--proc-root DIR]\n"
        "           [--warmup S] [--warmup-frac F] [--flush S] [--idle-end S]\n"
        "           [--points N] [--keep S] [--nvml LIB]\n"
        "           [--once | --rounds N | --duration S] [--json]\n"
        "\n"
        "Samples every GPU of this node through NVML (loaded at run time:\n"
        "libnvidia-ml.so.1, from the NVIDIA driver): SM and memory bandwidth\n"
        "utilisation, memory used, power, and each compute process with its\n"
        "memory and, where the driver offers it, its own SM utilisation.\n"
        "Processes are mapped to Slurm jobs by their cgroup (job_<id>) or "
        "their\n"
        "SLURM_JOB_ID.  Per job it keeps the series and writes\n"
        "DIR/JOBID/NODE.START.json: mean, p50 and p95 over the steady state\n"
        "(after the warm-up), peak memory, a down-sampled series, and any GPU\n"
        "that was lost under the job.  The Slurm agent (schedmate slurm\n"
        "--gpustat DIR) stores these with the job's outcome.\n"
        "\n",
    .tail =
        "Exit status: 0 stopped cleanly, 2 bad usage, NVML not available (no\n"
        "driver) or an output that cannot be written.\n"};

static volatile sig_atomic_t stop_flag;
static int quiet;

static void on_signal(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void log_line(void *ud, int level, const char *msg) {
  static const char *const names[] = {"error", "warn", "info"};
  char ts[32];
  time_t t = time(NULL);
  struct tm tm;

  (void)ud;
  if (quiet && level > SM_GPUSTAT_ERROR)
    return;
  gmtime_r(&t, &tm);
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(stderr, "%s schedmate gpustat: %s: %s\n", ts,
          names[level < 0   ? 0
                : level > 2 ? 2
                            : level],
          msg);
  fflush(stderr);
}

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fmt_num(char *buf, size_t cap, const cJSON *o, const char *key,
                    const char *unit) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNumber(v))
    snprintf(buf, cap, "%.0f%s", v->valuedouble, unit);
  else
    snprintf(buf, cap, "-");
}

/* The text form of --once. */
static int print_text(const char *json) {
  cJSON *o = cJSON_Parse(json), *d, *x;
  const cJSON *devs, *jobs;
  char a[32], b[32], c[32], t[32], e[32];

  if (o == NULL)
    return CLI_USAGE;
  printf("node %s, driver %s, %d GPU(s)\n",
         cJSON_GetStringValue(cJSON_GetObjectItem(o, "node")),
         cJSON_GetStringValue(cJSON_GetObjectItem(o, "driver_version")),
         cJSON_GetArraySize(cJSON_GetObjectItem(o, "devices")));
  devs = cJSON_GetObjectItem(o, "devices");
  cJSON_ArrayForEach(d, devs) {
    fmt_num(a, sizeof(a), d, "sm_util", " %");
    fmt_num(b, sizeof(b), d, "mem_bw_util", " %");
    fmt_num(c, sizeof(c), d, "mem_used_mib", "");
    fmt_num(t, sizeof(t), d, "mem_total_mib", " MiB");
    fmt_num(e, sizeof(e), d, "power_w", " W");
    printf("  GPU %d  %-26s %-5s sm %-5s bw %-5s mem %s/%s  %s  jobs",
           (int)cJSON_GetNumberValue(cJSON_GetObjectItem(d, "index")),
           cJSON_GetStringValue(cJSON_GetObjectItem(d, "name")),
           cJSON_GetStringValue(cJSON_GetObjectItem(d, "state")), a, b, c, t,
           e);
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(d, "jobs"))
        printf(" %.0f", x->valuedouble);
    if (cJSON_IsString(cJSON_GetObjectItem(d, "error")))
      printf("  (%s)", cJSON_GetStringValue(cJSON_GetObjectItem(d, "error")));
    printf("\n");
  }
  jobs = cJSON_GetObjectItem(o, "jobs");
  cJSON_ArrayForEach(d, jobs) {
    const cJSON *smu = cJSON_GetObjectItem(d, "sm_util");
    fmt_num(a, sizeof(a), smu, "mean", " %");
    fmt_num(c, sizeof(c), d, "gpu_mem_mib", " MiB");
    printf("  job %.0f: %d GPU(s), sm %s, memory %s\n",
           cJSON_GetNumberValue(cJSON_GetObjectItem(d, "job_id")),
           cJSON_GetArraySize(cJSON_GetObjectItem(d, "devices")), a, c);
  }
  x = cJSON_GetObjectItem(o, "unattributed");
  if (cJSON_GetNumberValue(cJSON_GetObjectItem(x, "processes")) > 0)
    printf("  %.0f process(es) in no job\n",
           cJSON_GetNumberValue(cJSON_GetObjectItem(x, "processes")));
  cJSON_Delete(o);
  return CLI_OK;
}

/* What the command line asks for. */
typedef struct gp_args {
  sm_gpustat_opts o;
  const char *status; /* --status FILE */
  int once, json;
  double points, rounds, duration;
} gp_args;

/* Parses the command line into a.  PO_OK, PO_HELP or CLI_USAGE. */
static int parse_args(int argc, char **argv, gp_args *a) {
  sm_gpustat_opts *o = &a->o;
  const cli_option opts[] = {
      PO_STRING("out", "DIR", &o->out_dir,
                "job files (a directory the agent can read)"),
      PO_NUMBER("interval", "S", &o->interval_s, 0.01, 3600,
                "seconds between rounds (1)"),
      PO_STRING("node", "NAME", &o->node,
                "node name in the files (the short host name)"),
      PO_STRING("status", "FILE", &a->status,
                "node status as JSON, rewritten every flush"),
      PO_STRING("device-log", "FILE", &o->device_csv,
                "append time,gpu,sm,bw,mem_mib,power_w per round"),
      PO_STRING("proc-root", "DIR", &o->proc_root,
                "where to read PID/cgroup and PID/environ (/proc)"),
      PO_NUMBER("warmup", "S", &o->series.warmup_s, -1, 86400,
                "warm-up excluded from the statistics (60; 0 uses\n"
                "the default, -1 none) ..."),
      PO_NUMBER("warmup-frac", "F", &o->series.warmup_frac, 0.001, 0.9,
                "... but at most this share of the job (0.25)"),
      PO_NUMBER("flush", "S", &o->flush_s, 0.01, 86400,
                "rewrite running jobs' files this often (10)"),
      PO_NUMBER("idle-end", "S", &o->idle_end_s, 0.01, 86400,
                "a job on no GPU for this long has ended (60)"),
      PO_NUMBER("points", "N", &a->points, 1, 10000,
                "points of the down-sampled series (120)"),
      PO_NUMBER("keep", "S", &o->keep_s, -1, 1e9,
                "remove this node's job files older than S\n"
                "(604800; -1 never)"),
      PO_STRING("nvml", "LIB", &o->nvml_lib,
                "the NVML library to load (libnvidia-ml.so.1)"),
      PO_FLAG("once", &a->once, 1,
              "one round: print the devices and jobs, exit"),
      PO_NUMBER("rounds", "N", &a->rounds, 1, 1e12, "stop after N rounds"),
      PO_NUMBER("duration", "S", &a->duration, 0.01, 1e9,
                "stop after S seconds"),
      PO_FLAG("json", &a->json, 1, "with --once: the status as JSON"),
      PO_FLAG("quiet", &quiet, 1, "log errors only"),
      PO_END(),
  };
  int nargs, rc;

  memset(a, 0, sizeof(*a));
  o->keep_s = NAN; /* tells "--keep 0" from no --keep */
  quiet = 0;
  rc = cli_parse_options("gpustat", argc, argv, opts, &help, &nargs);
  if (rc != PO_OK)
    return rc;
  o->series_points = (int)a->points;
  if (o->keep_s == 0)
    return cli_usage("gpustat", "--keep: 0 would remove every file");
  if (isnan(o->keep_s))
    o->keep_s = 0;
  if (nargs > 0)
    return cli_usage("gpustat", "unexpected argument '%s'", argv[1]);
  if (o->node != NULL && (o->node[0] == '\0' || strlen(o->node) > 63))
    return cli_usage("gpustat", "--node: 1 to 63 characters");
  if (a->json && !a->once)
    return cli_usage("gpustat", "--json goes with --once");
  if (a->once && (a->rounds > 0 || a->duration > 0))
    return cli_usage("gpustat", "--once excludes --rounds and --duration");
  if (!a->once && o->out_dir == NULL && a->status == NULL &&
      o->device_csv == NULL)
    return cli_usage("gpustat", "nothing to write: give --out DIR (or "
                                "--status, --device-log, or --once)");
  return PO_OK;
}
/* --once: one round, the status printed (JSON or text). */
static int run_once(sm_gpustat *g, const gp_args *a) {
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  int rc = sm_gpustat_sample(g, wall(), &err);

  if (rc == 0 && a->o.out_dir != NULL)
    sm_gpustat_flush(g, wall(), 0, &err);
  if (rc == 0 && a->status != NULL &&
      sm_gpustat_write_status(g, a->status, &err) != 0)
    rc = CLI_USAGE;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_gpustat_status_json(g, &w);
  if (rc != 0)
    rc = cli_error("gpustat", CLI_USAGE, "%s", err.msg);
  else if (sm_jw_finish(&w) != 0)
    rc = CLI_USAGE;
  else
    rc = a->json ? cli_emit(&b) : print_text(sm_buf_str(&b));
  sm_buf_release(&b);
  return rc;
}

/* Sleeps until next (a point of the rounds' grid), or until --duration
 * ends or a signal stops the sampler. */
static void wait_until(double next, double start, double duration) {
  double left;

  while (!stop_flag && (left = next - sm_now()) > 0) {
    struct timespec ts;
    if (duration > 0 && start + duration - sm_now() < left)
      left = fmax(0, start + duration - sm_now());
    ts.tv_sec = (time_t)left;
    ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
    if (nanosleep(&ts, NULL) != 0 && errno != EINTR)
      break;
    if (duration > 0 && sm_now() - start >= duration)
      break;
  }
}

/* The sampler's loop: a round every --interval until a signal, --rounds
 * or --duration; then the last flush. */
static int run_loop(sm_gpustat *g, const gp_args *a) {
  const sm_gpustat_opts *o = &a->o;
  double start, next, last_status = 0;
  long long done = 0;
  sm_err err = {0};
  struct sigaction sa;
  int rc = CLI_OK;

  stop_flag = 0;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGHUP, SIG_IGN);
  log_line(NULL, SM_GPUSTAT_INFO, "started");
  start = sm_now();
  next = start;
  while (!stop_flag) {
    double t = wall();
    if (sm_gpustat_sample(g, t, &err) != 0) {
      log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
      rc = CLI_USAGE;
      break;
    }
    done++;
    if (a->status != NULL &&
        (t - last_status >= (o->flush_s > 0 ? o->flush_s : 10) || done == 1)) {
      sm_err e2 = {0};
      if (sm_gpustat_write_status(g, a->status, &e2) != 0)
        log_line(NULL, SM_GPUSTAT_ERROR, e2.msg);
      last_status = t;
    }
    if ((a->rounds > 0 && done >= (long long)a->rounds) ||
        (a->duration > 0 && sm_now() - start >= a->duration))
      break;
    /* Rounds on a fixed grid; a round that ran late skips ahead. */
    next += o->interval_s > 0 ? o->interval_s : 1;
    if (next < sm_now())
      next = sm_now();
    wait_until(next, start, a->duration);
    if (a->duration > 0 && sm_now() - start >= a->duration)
      break;
  }
  if (sm_gpustat_flush(g, wall(), 0, &err) != 0) {
    log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
    rc = CLI_USAGE;
  }
  if (a->status != NULL && sm_gpustat_write_status(g, a->status, &err) != 0)
    log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
  log_line(NULL, SM_GPUSTAT_INFO, "stopped");
  return rc;
}

int cmd_gpustat(int argc, char **argv) {
  gp_args a;
  sm_gpustat *g;
  sm_err err = {0};
  int rc = parse_args(argc, argv, &a);

  if (rc != PO_OK)
    return rc == PO_HELP ? CLI_OK : rc;
  a.o.log = log_line;
  g = sm_gpustat_open(&a.o, &err);
  if (g == NULL) {
    if (err.code == SM_ENOENT || err.code == SM_EUNSUPP || err.code == SM_EIO)
      return cli_error("gpustat", CLI_USAGE,
                       "%s (this node needs the NVIDIA driver's NVML; without "
                       "it the Slurm agent falls back to Slurm's accounting)",
                       err.msg);
    return cli_error("gpustat", CLI_USAGE, "%s", err.msg);
  }
  rc = a.once ? run_once(g, &a) : run_loop(g, &a);
  sm_gpustat_close(g);
  return rc;
}
