/* cmd_history.c - `schedmate history`: the job history the Advisor learns
 * from (add, perf, list, show, export, import). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "llmcli.h"

static const char usage_text[] =
    "usage: schedmate history add --db URI --id ID --duration S\n"
    "           [--sm-util U] [--end-state STATE] [--gpu-type T]\n"
    "           [--throughput X] [--submit-time T] [--sw VERSION]\n"
    "           [--user U] [--name N] [--vc V]\n"
    "           (--repo DIR [--cwd SUBDIR] [--config FILE]... -- COMMAND...\n"
    "            | --meta FILE)\n"
    "       schedmate history perf --db URI --id ID --gpu-type T --gpus N\n"
    "           [--batch B] --throughput X\n"
    "       schedmate history list [--json] --db URI\n"
    "       schedmate history show [--json] --db URI ID\n"
    "       schedmate history export --db URI [--out FILE]\n"
    "       schedmate history import --db URI [--format F]\n"
    "           [--assume-completed] FILE\n"
    "\n"
    "Keeps finished jobs with their real outcome, so that `schedmate "
    "advise`\n"
    "can estimate new jobs from similar past ones.\n"
    "\n"
    "  --db URI        a SQLite file (created if missing) or\n"
    "                  redis://host:port/db[?prefix=P]\n"
    "  --end-state S   completed (default), canceled, failed_user,\n"
    "                  failed_framework, failed_infra, failed\n"
    "  --sm-util U     mean SM utilisation in percent\n"
    "  --submit-time T Unix seconds\n"
    "  --meta FILE     metadata from `schedmate extract --json` instead of\n"
    "                  extracting from a repository\n"
    "export writes JSON lines (one record each); import reads them back,\n"
    "or builds a history from a cluster trace (--format auto, sia-philly,\n"
    "helios, lucid, acme, tiresias, chronus, sia, generic): each job\n"
    "becomes a record with its GPUs, duration and end state, and its model,\n"
    "dataset, batch or iterations where the trace has those columns.\n"
    "Trace jobs whose end state is not recorded stay \"unknown\" (never a\n"
    "duration estimate) unless --assume-completed says otherwise.\n"
    "Exit status: 0 ok, 2 bad usage, unreadable input or store failure.\n";

static int usage(void) {
  fputs(usage_text, stdout);
  return CLI_OK;
}

static sm_store *open_db(const char *cmd, const char *db, int create) {
  sm_err err = {0};
  sm_store *s;

  if (db == NULL) {
    cli_usage(cmd, "--db URI is required");
    return NULL;
  }
  s = sm_store_open(db, create ? SM_STORE_CREATE : 0, 0, &err);
  if (s == NULL)
    cli_error(cmd, CLI_USAGE, "%s", err.msg);
  return s;
}

/* ==== add ==== */

static int do_add(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, 'd'},
      {"id", required_argument, NULL, 'i'},
      {"duration", required_argument, NULL, 'D'},
      {"sm-util", required_argument, NULL, 'u'},
      {"end-state", required_argument, NULL, 'e'},
      {"gpu-type", required_argument, NULL, 'g'},
      {"throughput", required_argument, NULL, 't'},
      {"submit-time", required_argument, NULL, 's'},
      {"sw", required_argument, NULL, 'w'},
      {"user", required_argument, NULL, 'U'},
      {"name", required_argument, NULL, 'N'},
      {"vc", required_argument, NULL, 'V'},
      {"help", no_argument, NULL, 'h'},
      CLI_JOB_LONGOPTS,
      CLI_LLM_LONGOPTS,
      {NULL, 0, NULL, 0}};
  const char *cmd = "history add", *db = NULL;
  cli_job job = {0};
  cli_llm llm;
  sm_record r;
  sm_store *s;
  sm_err err = {0};
  int c, rc;

  sm_record_init(&r);
  cli_llm_init(&llm);
  r.end_state = SM_END_COMPLETED;
  optind = 0;
  while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
    rc = 0;
    switch (c) {
    case 'd':
      db = optarg;
      break;
    case 'i':
      sm_free(r.id);
      r.id = sm_strdup(optarg);
      break;
    case 'D':
      rc = cli_parse_num(cmd, "--duration", optarg, &r.duration_s);
      if (rc == 0 && r.duration_s < 0)
        rc = cli_usage(cmd, "--duration must be >= 0");
      break;
    case 'u':
      rc = cli_parse_num(cmd, "--sm-util", optarg, &r.sm_util);
      if (rc == 0 && (r.sm_util < 0 || r.sm_util > 100))
        rc = cli_usage(cmd, "--sm-util is a percentage in [0, 100]");
      break;
    case 'e':
      if (sm_end_state_parse(optarg, &r.end_state) != 0)
        rc = cli_usage(cmd, "--end-state: unknown state '%s'", optarg);
      break;
    case 'g':
      sm_free(r.gpu_type);
      r.gpu_type = sm_strdup(optarg);
      break;
    case 't':
      rc = cli_parse_num(cmd, "--throughput", optarg, &r.throughput);
      break;
    case 's':
      rc = cli_parse_num(cmd, "--submit-time", optarg, &r.submit_time);
      break;
    case 'w':
      sm_free(r.sw_version);
      r.sw_version = sm_strdup(optarg);
      break;
    case 'U':
      sm_free(r.user);
      r.user = sm_strdup(optarg);
      break;
    case 'N':
      sm_free(r.name);
      r.name = sm_strdup(optarg);
      break;
    case 'V':
      sm_free(r.vc);
      r.vc = sm_strdup(optarg);
      break;
    case 'h':
      sm_record_release(&r);
      return usage();
    default:
      if ((rc = cli_llm_option(&llm, cmd, c, optarg)) < 0)
        rc = cli_job_option(&job, cmd, c, optarg);
      if (rc < 0)
        rc = cli_usage(cmd, "unknown option");
    }
    if (rc != 0) {
      sm_record_release(&r);
      return rc;
    }
  }
  rc = cli_job_finish(&job, cmd, argc, argv, optind);
  if (rc == 0 && (r.id == NULL || r.id[0] == '\0'))
    rc = cli_usage(cmd, "--id ID is required");
  if (rc == 0 && isnan(r.duration_s))
    rc = cli_usage(cmd, "--duration S is required");
  if (rc == 0)
    rc = cli_llm_start(&llm, cmd);
  if (rc == 0)
    rc = cli_job_read(&job, cmd, &r.meta, NULL);
  if (rc == 0)
    cli_llm_extract_job(&llm, job.repo, job.cwd, job.configs, job.n_configs,
                        job.argv, job.argc, &r.meta);
  r.added_at = (double)time(NULL);
  sm_record_fingerprint(&r);
  if (rc == 0)
    rc = cli_llm_record(&llm, cmd, &r);
  cli_llm_release(&llm);
  if (rc != 0) {
    sm_record_release(&r);
    return rc;
  }
  /* Absurd numbers (1.7e308 s, 250 %) are refused before the store is
   * touched. */
  if (sm_record_check(&r, &err) != 0) {
    sm_record_release(&r);
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  }
  s = open_db(cmd, db, 1);
  if (s == NULL) {
    sm_record_release(&r);
    return CLI_USAGE;
  }
  rc = cli_llm_put(s, &r, &err);
  sm_store_close(s);
  if (rc != 0) {
    sm_record_release(&r);
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  }
  printf("added %s (%s, %.0f s)\n", r.id, sm_end_state_name(r.end_state),
         r.duration_s);
  sm_record_release(&r);
  return CLI_OK;
}

/* ==== perf ==== */

static int do_perf(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, 'd'},
      {"id", required_argument, NULL, 'i'},
      {"gpu-type", required_argument, NULL, 'g'},
      {"gpus", required_argument, NULL, 'n'},
      {"batch", required_argument, NULL, 'b'},
      {"throughput", required_argument, NULL, 't'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *cmd = "history perf", *db = NULL, *id = NULL, *gpu = NULL;
  long gpus = -1, batch = 0;
  double tp = NAN;
  sm_record r;
  sm_store *s;
  sm_err err = {0};
  int c, rc = 0;

  optind = 0;
  while (rc == 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd':
      db = optarg;
      break;
    case 'i':
      id = optarg;
      break;
    case 'g':
      gpu = optarg;
      break;
    case 'n':
      rc = cli_parse_int(cmd, "--gpus", optarg, 1, 1000000, &gpus);
      break;
    case 'b':
      rc = cli_parse_int(cmd, "--batch", optarg, 1, 1L << 30, &batch);
      break;
    case 't':
      rc = cli_parse_num(cmd, "--throughput", optarg, &tp);
      if (rc == 0 && !(tp > 0))
        rc = cli_usage(cmd, "--throughput must be > 0");
      break;
    case 'h':
      return usage();
    default:
      return cli_usage(cmd, "unknown option");
    }
  }
  if (rc != 0)
    return rc;
  if (!id || !gpu || gpus < 0 || isnan(tp))
    return cli_usage(cmd, "--id, --gpu-type, --gpus and --throughput are "
                          "required");
  s = open_db(cmd, db, 0);
  if (s == NULL)
    return CLI_USAGE;
  sm_record_init(&r);
  rc = sm_store_get(s, id, &r, &err);
  if (rc == 0)
    rc = sm_record_add_perf(&r, gpu, (int)gpus, (int)batch, tp);
  if (rc == 0)
    rc = sm_store_put(s, &r, &err);
  sm_store_close(s);
  sm_record_release(&r);
  if (rc != 0)
    return cli_error(cmd, CLI_USAGE, "%s",
                     err.msg[0] ? err.msg : sm_strerror(rc));
  printf("%s: %s x%ld batch %ld -> %g/s\n", id, gpu, gpus, batch, tp);
  return CLI_OK;
}

/* ==== list / show / export ==== */

/* After reading the whole history: one line on stderr when records had to
 * be skipped (the answer is still given, from the others). */
static void warn_skipped(const char *cmd, sm_store *s) {
  const char *first;
  long long n = sm_store_skipped(s, &first);

  if (n > 0)
    fprintf(stderr,
            "schedmate %s: warning: skipped %lld bad record%s; first: %s\n",
            cmd, n, n == 1 ? "" : "s", first ? first : "?");
}

typedef struct list_ctx {
  int json;  /* --json: one array */
  sm_jw *w;  /* JSON writer */
  FILE *out; /* export destination */
  long n;    /* records seen */
} list_ctx;

static const char *mstr(const sm_record *r, sm_meta_field f) {
  return r->meta.f[f].known ? r->meta.f[f].str : "-";
}

static int list_cb(const sm_record *r, void *arg) {
  list_ctx *c = arg;

  c->n++;
  if (c->json) {
    sm_record_write_json(r, c->w);
    return 0;
  }
  printf("%-24s %-16s %10.0f s  %-20s %-16s\n", r->id,
         sm_end_state_name(r->end_state), r->duration_s,
         mstr(r, SM_META_MODEL_NAME), mstr(r, SM_META_DATASET));
  return 0;
}

static int export_cb(const sm_record *r, void *arg) {
  list_ctx *c = arg;
  sm_buf b;
  sm_jw w;

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_record_write_json(r, &w);
  if (sm_jw_finish(&w) == 0) {
    fputs(sm_buf_str(&b), c->out);
    fputc('\n', c->out);
  }
  sm_buf_release(&b);
  c->n++;
  return ferror(c->out) ? 1 : 0;
}

static int do_list_show_export(const char *what, int argc, char **argv) {
  static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                       {"json", no_argument, NULL, 'j'},
                                       {"out", required_argument, NULL, 'o'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  char cmd[32];
  const char *db = NULL, *outpath = NULL;
  list_ctx ctx = {0};
  sm_store *s;
  sm_err err = {0};
  sm_buf b;
  sm_jw w;
  int c, rc;

  snprintf(cmd, sizeof(cmd), "history %s", what);
  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'd':
      db = optarg;
      break;
    case 'j':
      ctx.json = 1;
      break;
    case 'o':
      outpath = optarg;
      break;
    case 'h':
      return usage();
    default:
      return cli_usage(cmd, "unknown option");
    }
  }
  if (strcmp(what, "show") == 0 && optind != argc - 1)
    return cli_usage(cmd, "expected one job ID");
  if (strcmp(what, "show") != 0 && optind != argc)
    return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
  s = open_db(cmd, db, 0);
  if (s == NULL)
    return CLI_USAGE;
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  ctx.w = &w;
  if (strcmp(what, "show") == 0) {
    sm_record r;
    sm_record_init(&r);
    rc = sm_store_get(s, argv[optind], &r, &err);
    if (rc == 0) {
      sm_record_write_json(&r, &w);
      if (!ctx.json) {
        /* The record is small: show it as indented key: value lines. */
        printf("%-22s %s\n%-22s %s\n%-22s %.0f s\n", "id", r.id, "end_state",
               sm_end_state_name(r.end_state), "duration", r.duration_s);
        if (!isnan(r.sm_util))
          printf("%-22s %.1f %%\n", "sm_util", r.sm_util);
        if (r.gpu_type)
          printf("%-22s %s\n", "gpu_type", r.gpu_type);
        for (int f = 0; f < SM_META_NFIELDS; f++) {
          const sm_meta_value *v = &r.meta.f[f];
          if (!v->known)
            continue;
          if (v->str)
            printf("%-22s %s", sm_meta_name((sm_meta_field)f), v->str);
          else
            printf("%-22s %g", sm_meta_name((sm_meta_field)f), v->num);
          printf("%s%s%s\n", v->evidence ? "  (" : "",
                 v->evidence ? v->evidence : "", v->evidence ? ")" : "");
        }
        for (int i = 0; i < r.n_perf; i++)
          printf("%-22s %s x%d batch %d: %g/s\n", "perf", r.perf[i].gpu_type,
                 r.perf[i].gpus, r.perf[i].batch, r.perf[i].throughput);
      }
    }
    sm_record_release(&r);
  } else if (strcmp(what, "export") == 0) {
    ctx.out = outpath ? fopen(outpath, "w") : stdout;
    if (ctx.out == NULL) {
      sm_store_close(s);
      sm_buf_release(&b);
      return cli_error(cmd, CLI_USAGE, "%s: cannot write", outpath);
    }
    rc = sm_store_each(s, export_cb, &ctx, &err);
    if (outpath && fclose(ctx.out) != 0 && rc == 0)
      rc = sm_err_set(&err, SM_EIO, "%s: write failed", outpath);
    if (rc == 0) {
      warn_skipped(cmd, s);
      fprintf(stderr, "exported %ld records\n", ctx.n);
    }
  } else {
    if (ctx.json) {
      sm_jw_obj_begin(&w);
      sm_jw_key(&w, "jobs");
      sm_jw_arr_begin(&w);
    }
    rc = sm_store_each(s, list_cb, &ctx, &err);
    if (rc == 0)
      warn_skipped(cmd, s);
    if (ctx.json) {
      const char *first;
      long long skipped = sm_store_skipped(s, &first);
      sm_jw_arr_end(&w);
      sm_jw_key(&w, "count");
      sm_jw_int(&w, ctx.n);
      sm_jw_kv_int(&w, "skipped", skipped);
      sm_jw_kv_str(&w, "first_skipped", first);
      sm_jw_obj_end(&w);
    }
  }
  sm_store_close(s);
  if (rc == 0 && ctx.json && sm_jw_finish(&w) == 0)
    rc = cli_emit(&b);
  sm_buf_release(&b);
  if (rc < 0)
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  return rc;
}

/* ==== import ==== */

/* A record from one trace job: only what the trace says. */
static int trace_record(const sm_sim_job *j, int assume_completed,
                        sm_record *r) {
  static const struct {
    const char *col;
    sm_meta_field field;
  } cols[] = {
      {"model_name", SM_META_MODEL_NAME},
      {"model", SM_META_MODEL_NAME},
      {"application", SM_META_MODEL_NAME},
      {"dataset", SM_META_DATASET},
      {"batch_size", SM_META_GLOBAL_BATCH_SIZE},
      {"batchsize", SM_META_GLOBAL_BATCH_SIZE},
      {"iterations", SM_META_ITERATIONS},
      {"num_iteration", SM_META_ITERATIONS},
  };
  char id[64];
  int rc = 0;

  if (j->id != NULL && j->id[0] != '\0')
    r->id = sm_strdup(j->id);
  else {
    snprintf(id, sizeof(id), "line-%d", j->line);
    r->id = sm_strdup(id);
  }
  r->user = j->user[0] ? sm_strdup(j->user) : NULL;
  r->name = j->name[0] ? sm_strdup(j->name) : NULL;
  r->vc = j->vc_name[0] ? sm_strdup(j->vc_name) : NULL;
  r->gpu_type = j->gpu_type[0] ? sm_strdup(j->gpu_type) : NULL;
  r->duration_s = j->duration;
  r->submit_time = j->submit;
  switch (j->end_state) {
  case SM_SIM_END_COMPLETED:
    r->end_state = SM_END_COMPLETED;
    break;
  case SM_SIM_END_CANCELED:
    r->end_state = SM_END_CANCELED;
    break;
  case SM_SIM_END_FAILED:
    r->end_state = SM_END_FAILED;
    break;
  default:
    r->end_state = assume_completed ? SM_END_COMPLETED : SM_END_UNKNOWN;
  }
  if (r->id == NULL)
    return SM_ENOMEM;
  rc = sm_meta_set_num(&r->meta, SM_META_GPUS, j->gpus, "trace");
  for (size_t i = 0; rc == 0 && i < SM_ARRAY_LEN(cols); i++) {
    const char *v = sm_sim_job_attr(j, cols[i].col);
    double x;
    if (v == NULL || *v == '\0' || r->meta.f[cols[i].field].known)
      continue;
    if (sm_meta_type_of(cols[i].field) == SM_META_STR) {
      char low[128];
      size_t k = 0;
      for (; v[k] && k + 1 < sizeof(low); k++)
        low[k] = (char)((v[k] >= 'A' && v[k] <= 'Z') ? v[k] + 32 : v[k]);
      low[k] = '\0';
      rc = sm_meta_set_str(&r->meta, cols[i].field, low, "trace");
    } else if (sm_parse_double(v, &x) == 0 && x > 0) {
      rc = sm_meta_set_num(&r->meta, cols[i].field, x, "trace");
    }
  }
  if (rc == 0 && r->meta.f[SM_META_ITERATIONS].known)
    rc = sm_meta_set_str(&r->meta, SM_META_ITERATION_TYPE, "steps", "trace");
  sm_record_fingerprint(r);
  return rc;
}

static int import_trace(const char *cmd, sm_store *s, const char *path,
                        int format, int assume_completed, long *added,
                        sm_err *err) {
  sm_sim_load_opts lo;
  sm_sim_trace *t = NULL;
  int rc;

  sm_sim_load_opts_init(&lo);
  lo.format = format;
  rc = sm_sim_trace_load(path, &lo, &t, err);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < sm_sim_trace_note_count(t); i++)
    fprintf(stderr, "schedmate %s: note: %s\n", cmd, sm_sim_trace_note(t, i));
  rc = sm_store_begin(s, err);
  for (size_t i = 0; rc == 0 && i < sm_sim_trace_count(t); i++) {
    sm_record r;
    sm_record_init(&r);
    rc = trace_record(sm_sim_trace_job(t, i), assume_completed, &r);
    if (rc != 0) {
      rc = sm_err_set(err, rc, "%s: out of memory", path);
    } else {
      sm_err e1 = {0};
      rc = cli_llm_put(s, &r, &e1);
      if (rc != 0)
        sm_err_set(err, rc, "%s:%d: %s", path, sm_sim_trace_job(t, i)->line,
                   e1.msg);
    }
    sm_record_release(&r);
  }
  {
    /* The batch commits in steps: what reached the store is counted by
     * the store, not by the puts that returned. */
    sm_err e2 = {0};
    int rc2 = sm_store_end(s, &e2);
    if (rc2 != 0 && rc == 0)
      rc = sm_err_set(err, rc2, "%s", e2.msg);
    *added = (long)sm_store_batch_done(s);
  }
  sm_sim_trace_free(t);
  return rc;
}

static int import_jsonl(sm_store *s, const char *path, long *added,
                        sm_err *err) {
  sm_rfile f;
  sm_fwdlines lr;
  const char *line;
  size_t len;
  long lineno = 0;
  int rc, trunc;

  if (sm_rfile_open(&f, path, err) != 0)
    return err->code;
  rc = sm_fwdlines_init(&lr, &f, 0, UINT64_MAX, (size_t)4 << 20, err);
  if (rc == 0)
    rc = sm_store_begin(s, err);
  while (rc == 0 &&
         (rc = sm_fwdlines_next(&lr, &line, &len, NULL, &trunc, err)) == 1) {
    sm_record r;
    lineno++;
    rc = 0;
    if (len == 0)
      continue;
    if (trunc) {
      rc = sm_err_set(err, SM_ETOOBIG, "%s:%ld: line too long", path, lineno);
      break;
    }
    sm_record_init(&r);
    {
      sm_err e1 = {0};
      if (sm_record_from_json(&r, line, len, &e1) != 0) {
        rc = sm_err_set(err, SM_EPARSE, "%s:%ld: %s", path, lineno, e1.msg);
      } else if ((rc = cli_llm_put(s, &r, &e1)) != 0) {
        sm_err_set(err, rc, "%s:%ld: %s", path, lineno, e1.msg);
      }
    }
    sm_record_release(&r);
  }
  sm_fwdlines_release(&lr);
  sm_rfile_close(&f);
  {
    /* Ends the batch: on an earlier error the records read so far still
     * commit, and the message says how many did (counted by the store,
     * which commits in steps). */
    sm_err e2 = {0};
    int rc2 = sm_store_end(s, &e2);
    if (rc2 != 0 && rc >= 0)
      rc = sm_err_set(err, rc2, "%s", e2.msg);
    *added = (long)sm_store_batch_done(s);
  }
  return rc < 0 ? rc : 0;
}

static int do_import(int argc, char **argv) {
  static const struct option opts[] = {
      {"db", required_argument, NULL, 'd'},
      {"format", required_argument, NULL, 'f'},
      {"assume-completed", no_argument, NULL, 'c'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *cmd = "history import", *db = NULL, *fmt = NULL, *path;
  int c, rc, assume = 0, format = -1;
  long added = 0;
  sm_store *s;
  sm_err err = {0};

  optind = 0;
  while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    if (c == 'h')
      return usage();
    if (c == 'd')
      db = optarg;
    else if (c == 'f')
      fmt = optarg;
    else if (c == 'c')
      assume = 1;
    else
      return cli_usage(cmd, "unknown option");
  }
  if (optind != argc - 1)
    return cli_usage(cmd, "expected one FILE");
  path = argv[optind];
  /* JSON lines unless a trace format is named, or the file says trace. */
  if (fmt == NULL) {
    size_t n = strlen(path);
    int jsonl = (n > 6 && strcmp(path + n - 6, ".jsonl") == 0) ||
                (n > 5 && strcmp(path + n - 5, ".json") == 0);
    fmt = jsonl ? "jsonl" : "auto";
  }
  if (strcmp(fmt, "jsonl") != 0) {
    format = sm_sim_format_parse(fmt);
    if (format < 0)
      return cli_usage(cmd, "--format: unknown format '%s'", fmt);
  }
  s = open_db(cmd, db, 1);
  if (s == NULL)
    return CLI_USAGE;
  if (cli_llm_history_open(s, &err) != 0) {
    sm_store_close(s);
    return cli_error(cmd, CLI_USAGE, "%s", err.msg);
  }
  if (format < 0)
    rc = import_jsonl(s, path, &added, &err);
  else
    rc = import_trace(cmd, s, path, format, assume, &added, &err);
  sm_store_close(s);
  if (rc < 0)
    return cli_error(cmd, CLI_USAGE, "%s (%ld records imported before)",
                     err.msg, added);
  printf("imported %ld records\n", added);
  return CLI_OK;
}

int cmd_history(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "-h") == 0) {
    if (argc < 2) {
      fputs(usage_text, stderr);
      return CLI_USAGE;
    }
    return usage();
  }
  if (strcmp(argv[1], "add") == 0)
    return do_add(argc - 1, argv + 1);
  if (strcmp(argv[1], "perf") == 0)
    return do_perf(argc - 1, argv + 1);
  if (strcmp(argv[1], "list") == 0 || strcmp(argv[1], "show") == 0 ||
      strcmp(argv[1], "export") == 0)
    return do_list_show_export(argv[1], argc - 1, argv + 1);
  if (strcmp(argv[1], "import") == 0)
    return do_import(argc - 1, argv + 1);
  return cli_usage("history", "unknown subcommand '%s'", argv[1]);
}
