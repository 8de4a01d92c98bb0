/* cmd_gpustat.c - `schedmate gpustat`: the per-node GPU sampler.  Every
 * --interval it samples each GPU and each GPU process through NVML, maps
 * the processes to Slurm jobs and keeps one series per job; a job's file
 * in --out (for the Slurm agent) is rewritten while it runs and completed
 * when it has left the GPUs.  SIGTERM or SIGINT stop it cleanly. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "cli.h"
#include "schedmate/sm_gpustat.h"

static const char usage_text[] =
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
    "Processes are mapped to Slurm jobs by their cgroup (job_<id>) or their\n"
    "SLURM_JOB_ID.  Per job it keeps the series and writes\n"
    "DIR/JOBID/NODE.START.json: mean, p50 and p95 over the steady state\n"
    "(after the warm-up), peak memory, a down-sampled series, and any GPU\n"
    "that was lost under the job.  The Slurm agent (schedmate slurm\n"
    "--gpustat DIR) stores these with the job's outcome.\n"
    "\n"
    "  --out DIR           job files (a directory the agent can read)\n"
    "  --interval S        seconds between rounds (1)\n"
    "  --node NAME         node name in the files (the short host name)\n"
    "  --status FILE       node status as JSON, rewritten every flush\n"
    "  --device-log FILE   append time,gpu,sm,bw,mem_mib,power_w per round\n"
    "  --proc-root DIR     where to read PID/cgroup and PID/environ (/proc)\n"
    "  --warmup S          warm-up excluded from the statistics (60; 0 uses\n"
    "                      the default, -1 none) ...\n"
    "  --warmup-frac F     ... but at most this share of the job (0.25)\n"
    "  --flush S           rewrite running jobs' files this often (10)\n"
    "  --idle-end S        a job on no GPU for this long has ended (60)\n"
    "  --points N          points of the down-sampled series (120)\n"
    "  --keep S            remove this node's job files older than S\n"
    "                      (604800; -1 never)\n"
    "  --nvml LIB          the NVML library to load (libnvidia-ml.so.1)\n"
    "  --once              one round: print the devices and jobs, exit\n"
    "  --rounds N          stop after N rounds\n"
    "  --duration S        stop after S seconds\n"
    "  --json              with --once: the status as JSON\n"
    "  --quiet             log errors only\n"
    "Exit status: 0 stopped cleanly, 2 bad usage, NVML not available (no\n"
    "driver) or an output that cannot be written.\n";

enum {
  OPT_OUT = 1000,
  OPT_INTERVAL,
  OPT_NODE,
  OPT_STATUS,
  OPT_DEVLOG,
  OPT_PROC,
  OPT_WARMUP,
  OPT_WFRAC,
  OPT_FLUSH,
  OPT_IDLE,
  OPT_POINTS,
  OPT_KEEP,
  OPT_NVML,
  OPT_ONCE,
  OPT_ROUNDS,
  OPT_DURATION,
  OPT_JSON,
  OPT_QUIET,
  OPT_HELP
};

static const struct option longopts[] = {
    {"out", required_argument, NULL, OPT_OUT},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"node", required_argument, NULL, OPT_NODE},
    {"status", required_argument, NULL, OPT_STATUS},
    {"device-log", required_argument, NULL, OPT_DEVLOG},
    {"proc-root", required_argument, NULL, OPT_PROC},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"warmup-frac", required_argument, NULL, OPT_WFRAC},
    {"flush", required_argument, NULL, OPT_FLUSH},
    {"idle-end", required_argument, NULL, OPT_IDLE},
    {"points", required_argument, NULL, OPT_POINTS},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"nvml", required_argument, NULL, OPT_NVML},
    {"once", no_argument, NULL, OPT_ONCE},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0}};

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

static int num_opt(const char *opt, const char *arg, double lo, double hi,
                   double *out) {
  if (cli_parse_num("gpustat", opt, arg, out) != 0)
    return CLI_USAGE;
  if (!(*out >= lo && *out <= hi))
    return cli_usage("gpustat", "%s: expected a number in [%g, %g], got '%s'",
                     opt, lo, hi, arg);
  return 0;
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

int cmd_gpustat(int argc, char **argv) {
  sm_gpustat_opts o;
  const char *status = NULL;
  int once = 0, json = 0, c, rc = 0;
  double v, rounds = 0, duration = 0;
  sm_gpustat *g;
  sm_err err = {0};
  struct sigaction sa;
  double start, next, last_status = 0;
  long long done = 0;

  memset(&o, 0, sizeof(o));
  optind = 0;
  opterr = 0;
  quiet = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case 'h':
    case OPT_HELP:
      fputs(usage_text, stdout);
      return CLI_OK;
    case OPT_OUT:
      o.out_dir = optarg;
      break;
    case OPT_INTERVAL:
      rc = num_opt("--interval", optarg, 0.01, 3600, &o.interval_s);
      break;
    case OPT_NODE:
      if (optarg[0] == '\0' || strlen(optarg) > 63)
        return cli_usage("gpustat", "--node: 1 to 63 characters");
      o.node = optarg;
      break;
    case OPT_STATUS:
      status = optarg;
      break;
    case OPT_DEVLOG:
      o.device_csv = optarg;
      break;
    case OPT_PROC:
      o.proc_root = optarg;
      break;
    case OPT_WARMUP:
      rc = num_opt("--warmup", optarg, -1, 86400, &o.series.warmup_s);
      break;
    case OPT_WFRAC:
      rc = num_opt("--warmup-frac", optarg, 0.001, 0.9, &o.series.warmup_frac);
      break;
    case OPT_FLUSH:
      rc = num_opt("--flush", optarg, 0.01, 86400, &o.flush_s);
      break;
    case OPT_IDLE:
      rc = num_opt("--idle-end", optarg, 0.01, 86400, &o.idle_end_s);
      break;
    case OPT_POINTS:
      rc = num_opt("--points", optarg, 1, 10000, &v);
      o.series_points = (int)v;
      break;
    case OPT_KEEP:
      rc = num_opt("--keep", optarg, -1, 1e9, &o.keep_s);
      if (rc == 0 && o.keep_s == 0)
        return cli_usage("gpustat", "--keep: 0 would remove every file");
      break;
    case OPT_NVML:
      o.nvml_lib = optarg;
      break;
    case OPT_ONCE:
      once = 1;
      break;
    case OPT_ROUNDS:
      rc = num_opt("--rounds", optarg, 1, 1e12, &rounds);
      break;
    case OPT_DURATION:
      rc = num_opt("--duration", optarg, 0.01, 1e9, &duration);
      break;
    case OPT_JSON:
      json = 1;
      break;
    case OPT_QUIET:
      quiet = 1;
      break;
    case ':':
      return cli_usage("gpustat", "%s needs a value", argv[optind - 1]);
    default:
      return cli_usage("gpustat", "unknown option '%s'", argv[optind - 1]);
    }
    if (rc != 0)
      return rc;
  }
  if (optind < argc)
    return cli_usage("gpustat", "unexpected argument '%s'", argv[optind]);
  if (json && !once)
    return cli_usage("gpustat", "--json goes with --once");
  if (once && (rounds > 0 || duration > 0))
    return cli_usage("gpustat", "--once excludes --rounds and --duration");
  if (!once && o.out_dir == NULL && status == NULL && o.device_csv == NULL)
    return cli_usage("gpustat", "nothing to write: give --out DIR (or "
                                "--status, --device-log, or --once)");
  o.log = log_line;
  g = sm_gpustat_open(&o, &err);
  if (g == NULL) {
    if (err.code == SM_ENOENT || err.code == SM_EUNSUPP || err.code == SM_EIO)
      return cli_error("gpustat", CLI_USAGE,
                       "%s (this node needs the NVIDIA driver's NVML; without "
                       "it the Slurm agent falls back to Slurm's accounting)",
                       err.msg);
    return cli_error("gpustat", CLI_USAGE, "%s", err.msg);
  }
  if (once) {
    sm_buf b;
    sm_jw w;
    rc = sm_gpustat_sample(g, wall(), &err);
    if (rc == 0 && o.out_dir != NULL)
      sm_gpustat_flush(g, wall(), 0, &err);
    if (rc == 0 && status != NULL &&
        sm_gpustat_write_status(g, status, &err) != 0)
      rc = CLI_USAGE;
    sm_buf_init(&b, 0);
    sm_jw_init(&w, &b);
    sm_gpustat_status_json(g, &w);
    if (rc != 0)
      rc = cli_error("gpustat", CLI_USAGE, "%s", err.msg);
    else if (sm_jw_finish(&w) != 0)
      rc = CLI_USAGE;
    else
      rc = json ? cli_emit(&b) : print_text(sm_buf_str(&b));
    sm_buf_release(&b);
    sm_gpustat_close(g);
    return rc;
  }
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
    double t = wall(), left;
    if (sm_gpustat_sample(g, t, &err) != 0) {
      log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
      rc = CLI_USAGE;
      break;
    }
    done++;
    if (status != NULL &&
        (t - last_status >= (o.flush_s > 0 ? o.flush_s : 10) || done == 1)) {
      sm_err e2 = {0};
      if (sm_gpustat_write_status(g, status, &e2) != 0)
        log_line(NULL, SM_GPUSTAT_ERROR, e2.msg);
      last_status = t;
    }
    if ((rounds > 0 && done >= (long long)rounds) ||
        (duration > 0 && sm_now() - start >= duration))
      break;
    /* Rounds on a fixed grid; a round that ran late skips ahead. */
    next += o.interval_s > 0 ? o.interval_s : 1;
    if (next < sm_now())
      next = sm_now();
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
    if (duration > 0 && sm_now() - start >= duration)
      break;
  }
  if (sm_gpustat_flush(g, wall(), 0, &err) != 0) {
    log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
    rc = CLI_USAGE;
  }
  if (status != NULL && sm_gpustat_write_status(g, status, &err) != 0)
    log_line(NULL, SM_GPUSTAT_ERROR, err.msg);
  sm_gpustat_close(g);
  log_line(NULL, SM_GPUSTAT_INFO, "stopped");
  return rc;
}
