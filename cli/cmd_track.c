/* cmd_track.c - `schedmate track`: a training job's current progress from
 * its log (the Metric Tracker, include/schedmate/sm_tracker.h).
 *
 *   schedmate track [--json] [--samples N] [--max-scan BYTES] LOG
 *   schedmate track --follow [--interval S] [--max-updates N]
 *                   [--idle-exit S] [--json] LOG
 *   schedmate track --classify-all LOG      (diagnostics: counts per class)
 *
 * With --follow the command prints the answer, then one line each time it
 * changes, reading only the bytes appended to the log; it stops on SIGINT
 * or SIGTERM (exit 0), after --max-updates lines, or after --idle-exit
 * seconds without the file growing. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "llmcli.h"
#include "schedmate/sm_tracker.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: schedmate track [--json] [--samples N] [--max-scan BYTES] "
          "LOG\n"
          "       schedmate track --follow [--interval S] [--max-updates N] "
          "[--idle-exit S] [--json] LOG\n"
          "       schedmate track --classify-all LOG\n"
          "       schedmate track --server S [--json] (LOG | --job ID)\n"
          "\n"
          "Reports a training job's progress from its log: step, total "
          "steps,\nepoch, loss, learning rate, step time and throughput, "
          "from the newest\nN samples (default %d), or 'missing' when the "
          "log shows no training\nprogress.  Only the tail of the log is "
          "read.\n"
          "\n"
          "  --json            one JSON object (one per line with --follow)\n"
          "  --samples N       samples in the window (1..500)\n"
          "  --max-scan BYTES  look back at most this far (default 64 MiB)\n"
          "  --follow          keep watching the log; print each change\n"
          "  --interval S      seconds between polls (default 1)\n"
          "  --max-updates N   stop after N printed answers\n"
          "  --idle-exit S     stop after S seconds without new bytes\n"
          "  --classify-all    count the lines of every class (whole file)\n"
          "  --server S        ask a running `schedmate serve` (unix:PATH or\n"
          "                    http://HOST:PORT); --job ID: a registered job\n"
          "\n"
          "Exit status: 0 with an answer (also 'missing'; with --follow once\n"
          "stopped by SIGINT or SIGTERM, --max-updates or --idle-exit), 2 bad\n"
          "usage or unreadable input (one line naming the file).\n"
          "\n%s",
          SM_TRACK_DEFAULT_SAMPLES, cli_llm_help);
}

/* Formats a number for people: NAN as "-". */
static const char *fmt_num(char *buf, size_t n, double v, const char *fmt) {
  if (v != v)
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, fmt, v);
  return buf;
}

static int emit_text(const sm_track_result *r) {
  char a[64], b[64];

  if (!r->ok) {
    printf("status:      missing (%s)\n"
           "scanned:     %" PRIu64 " lines, %" PRIu64 " bytes%s\n",
           r->binary ? "the bytes read are not text"
                     : "no training progress in the log",
           r->lines_scanned, r->bytes_read,
           r->scan_limited ? " (look-back budget reached)" : "");
    return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
  }
  printf("status:      ok\n");
  if (r->has_step && r->has_total)
    printf("step:        %lld / %lld  (%s '%s', %s)\n", r->step, r->total_steps,
           r->scope ? r->scope : "counter", r->counter,
           r->step_scope ? r->step_scope : "?");
  else if (r->has_step)
    printf("step:        %lld  (%s '%s', %s)\n", r->step,
           r->scope ? r->scope : "counter", r->counter,
           r->step_scope ? r->step_scope : "?");
  else
    printf("step:        -\n");
  if (r->starting)
    printf("run:         restarted; only its start-up printed so far%s\n",
           r->has_step ? " (step: where it resumed)" : "");
  else if (r->restarts)
    printf("run:         the newest after a restart or resume\n");
  printf("epoch:       %s\n", fmt_num(a, sizeof(a), r->epoch, "%g"));
  if (r->loss_nonfinite)
    printf("loss:        nan/inf (the newest loss printed is not finite)\n");
  else
    printf("loss:        %s\n", fmt_num(a, sizeof(a), r->loss, "%.6g"));
  printf("lr:          %s\n", fmt_num(a, sizeof(a), r->lr, "%.6g"));
  if (r->step_time_basis)
    printf("step time:   %s  (%s: %s)\n",
           fmt_num(a, sizeof(a), r->step_time_s, "%.6g s"), r->step_time_basis,
           r->step_time_source ? r->step_time_source : "?");
  else
    printf("step time:   -\n");
  if (r->step_time_basis && r->step_time_weak)
    printf("             weak basis: %s\n", r->step_time_weak);
  if (r->throughput == r->throughput)
    printf("throughput:  %s %s\n", fmt_num(b, sizeof(b), r->throughput, "%.6g"),
           r->tp_unit);
  else
    printf("throughput:  -\n");
  printf("samples:     %d  (%" PRIu64 " lines, %" PRIu64 " bytes read)\n",
         r->samples, r->lines_scanned, r->bytes_read);
  printf("format:      %s\n", r->format);
  return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
}

static cli_llm lo; /* the optional LLM stage (first answer only) */

static int emit(const sm_track_result *r, int json) {
  sm_buf out;
  int rc;

  if (!json) {
    rc = emit_text(r);
    cli_llm_text(&lo, stdout);
    return rc;
  }
  sm_buf_init(&out, 0);
  if (sm_track_result_json(r, &out) != 0 || cli_llm_json(&lo, NULL, &out)) {
    sm_buf_release(&out);
    return cli_error("track", CLI_USAGE, "out of memory");
  }
  rc = cli_emit(&out);
  sm_buf_release(&out);
  return rc;
}

static int classify_all(const char *path, int json) {
  uint64_t counts[SM_TRACK_NCLASSES], unknown, lines, bytes;
  sm_err err = {0};
  double t0 = sm_now(), dt;

  if (sm_track_classify_file(path, NULL, counts, &unknown, &lines, &bytes,
                             &err) != 0)
    return cli_error("track", CLI_USAGE, "%s", err.msg);
  dt = sm_now() - t0;
  if (json) {
    sm_buf out;
    sm_jw w;
    int rc;
    sm_buf_init(&out, 0);
    sm_jw_init(&w, &out);
    sm_jw_obj_begin(&w);
    sm_jw_key(&w, "lines");
    sm_jw_int(&w, (long long)lines);
    sm_jw_key(&w, "bytes");
    sm_jw_int(&w, (long long)bytes);
    sm_jw_key(&w, "seconds");
    sm_jw_num(&w, dt);
    sm_jw_key(&w, "classes");
    sm_jw_obj_begin(&w);
    for (int i = 0; i < SM_TRACK_NCLASSES; i++) {
      sm_jw_key(&w, sm_track_class_name(i));
      sm_jw_int(&w, (long long)counts[i]);
    }
    sm_jw_key(&w, "unknown");
    sm_jw_int(&w, (long long)unknown);
    sm_jw_obj_end(&w);
    sm_jw_obj_end(&w);
    if (sm_jw_finish(&w) != 0) {
      sm_buf_release(&out);
      return cli_error("track", CLI_USAGE, "out of memory");
    }
    rc = cli_emit(&out);
    sm_buf_release(&out);
    return rc;
  }
  for (int i = 0; i < SM_TRACK_NCLASSES; i++)
    printf("%-10s %" PRIu64 "\n", sm_track_class_name(i), counts[i]);
  printf("%-10s %" PRIu64 "\n", "unknown", unknown);
  printf("%" PRIu64 " lines, %" PRIu64 " bytes in %.3f s (%.1f MB/s)\n", lines,
         bytes, dt, dt > 0 ? (double)bytes / dt / 1e6 : 0.0);
  return fflush(stdout) == 0 ? CLI_OK : CLI_USAGE;
}

/* Sleeps s seconds unless a stop signal arrives. */
static void nap(double s) {
  struct timespec ts;

  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (!stop_requested && nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static int follow(sm_tracker *t, const sm_track_result *first, int json,
                  double interval, long max_updates, double idle_exit) {
  struct sigaction sa;
  sm_track_result r;
  long printed = 1;
  uint64_t last_bytes = first->bytes_read;
  double last_growth = sm_now();
  sm_err err = {0};

  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  while (!stop_requested && (max_updates == 0 || printed < max_updates)) {
    int rc;
    nap(interval);
    if (stop_requested)
      break;
    rc = sm_tracker_poll(t, &r, &err);
    if (rc < 0)
      return cli_error("track", CLI_USAGE, "%s", err.msg);
    if (r.bytes_read != last_bytes) {
      last_bytes = r.bytes_read;
      last_growth = sm_now();
    } else if (idle_exit > 0 && sm_now() - last_growth >= idle_exit) {
      break;
    }
    if (rc == 1) {
      if (emit(&r, json) != CLI_OK)
        return CLI_USAGE;
      printed++;
    }
  }
  return CLI_OK;
}

int cmd_track(int argc, char **argv) {
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},
      {"samples", required_argument, NULL, 'n'},
      {"max-scan", required_argument, NULL, 'm'},
      {"follow", no_argument, NULL, 'f'},
      {"interval", required_argument, NULL, 'i'},
      {"max-updates", required_argument, NULL, 'u'},
      {"idle-exit", required_argument, NULL, 'x'},
      {"classify-all", no_argument, NULL, 'c'},
      {"server", required_argument, NULL, 'S'},
      {"job", required_argument, NULL, 'J'},
      {"help", no_argument, NULL, 'h'},
      CLI_LLM_LONGOPTS,
      {NULL, 0, NULL, 0}};
  int json = 0, do_follow = 0, do_classify = 0, c, rc;
  const char *server = NULL, *job_id = NULL;
  long samples = SM_TRACK_DEFAULT_SAMPLES, max_updates = 0;
  double interval = 1.0, idle_exit = 0, max_scan = 0;
  sm_track_opts o = {0};
  sm_track_result r;
  sm_tracker *t;
  sm_err err = {0};

  optind = 0;
  opterr = 0;
  cli_llm_init(&lo);
  while ((c = getopt_long(argc, argv, "jn:fh", opts, NULL)) != -1) {
    switch (c) {
    case 'j':
      json = 1;
      break;
    case 'n':
      if (cli_parse_int("track", "--samples", optarg, 1, 500, &samples))
        return CLI_USAGE;
      break;
    case 'm':
      if (cli_parse_num("track", "--max-scan", optarg, &max_scan))
        return CLI_USAGE;
      if (max_scan < 1)
        return cli_usage("track", "--max-scan: must be at least 1 byte");
      break;
    case 'f':
      do_follow = 1;
      break;
    case 'i':
      if (cli_parse_num("track", "--interval", optarg, &interval))
        return CLI_USAGE;
      if (interval < 0.001 || interval > 3600)
        return cli_usage("track", "--interval: expected 0.001..3600 s");
      break;
    case 'u':
      if (cli_parse_int("track", "--max-updates", optarg, 1, 1000000000L,
                        &max_updates))
        return CLI_USAGE;
      break;
    case 'x':
      if (cli_parse_num("track", "--idle-exit", optarg, &idle_exit))
        return CLI_USAGE;
      if (idle_exit <= 0)
        return cli_usage("track", "--idle-exit: expected seconds > 0");
      break;
    case 'c':
      do_classify = 1;
      break;
    case 'S': /* ask a running `schedmate serve` (cli/client.c) */
      server = optarg;
      break;
    case 'J':
      job_id = optarg;
      break;
    case 'h':
      usage(stdout);
      return CLI_OK;
    default:
      if ((rc = cli_llm_option(&lo, "track", c, optarg)) >= 0) {
        if (rc != 0)
          return rc;
        break;
      }
      return cli_usage("track", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (server != NULL && !do_follow && !do_classify &&
      optind == argc - (job_id ? 0 : 1))
    return cli_client_track(server, job_id ? NULL : argv[optind], job_id, json);
  if (server != NULL || job_id != NULL)
    return cli_usage("track", "--server takes one LOG or --job ID, without "
                              "--follow or --classify-all");
  if (optind != argc - 1)
    return cli_usage("track", optind >= argc ? "a LOG file is required"
                                             : "expected exactly one LOG");
  if (do_classify)
    return classify_all(argv[optind], json);
  o.samples = (int)samples;
  o.max_scan = (uint64_t)max_scan;
  if (cli_llm_start(&lo, "track") != 0)
    return CLI_USAGE;
  t = sm_tracker_new(&o);
  if (t == NULL)
    return cli_error("track", CLI_USAGE, "out of memory");
  if (sm_tracker_scan(t, argv[optind], &r, &err) != 0) {
    sm_tracker_free(t);
    cli_llm_release(&lo);
    return cli_error("track", CLI_USAGE, "%s", err.msg);
  }
  cli_llm_track(&lo, argv[optind], &r);
  rc = emit(&r, json);
  cli_llm_release(&lo);
  if (rc == CLI_OK && do_follow)
    rc = follow(t, &r, json, interval, max_updates, idle_exit);
  sm_tracker_free(t);
  return rc;
}
