/* trace.c - the trace container and the loaders of every supported
 * layout.  Each layout is a table of column roles; one row reader turns a
 * CSV row into an sm_sim_job using the roles the header provides, so that
 * errors always name the file, the line and the column.
 *
 * Layouts (columns and units as documented in docs/simulator.md):
 *   sia-philly  timestamp,duration,num_gpus,gpu_time,cluster
 *   helios      job_id,user,vc,[jobname,]gpu_num,cpu_num,node_num,state,
 *               submit_time,start_time,end_time,duration,queue (Helios
 *               and Lucid; Lucid adds model,dataset,batchsize,amp,...)
 *   acme        job_id,user,node_num,gpu_num,cpu_num,type,state,
 *               submit_time,...,duration,queue,gpu_time
 *   tiresias    job_id,num_gpu,submit_time,iterations,model_name,
 *               duration,interval (Chronus adds user and more)
 *   sia         name,time,application,num_replicas,batch_size
 *   generic     job_id,submit_s,duration_s,gpus[,user,name,vc,state,
 *               gpu_type,nodes,estimate_s]
 * Columns a layout does not use become job attributes. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define DEFAULT_MAX_JOBS ((size_t)20000000)
/* Bounds of the time domain: beyond them doubles lose the millisecond
 * resolution the invariants check (ten thousand years of submissions,
 * a thousand years of run time). */
#define MAX_SPAN_S 3e11
#define MAX_DURATION_S 3e10
#define ARENA_MAX ((size_t)8 << 30)

/* ==== Container ==== */

void sm__job_defaults(sm_sim_job *j) {
  memset(j, 0, sizeof(*j));
  j->id = j->user = j->name = j->vc_name = j->gpu_type = "";
  j->workload = j->profile = "";
  j->estimate = NAN;
  j->end_state = SM_SIM_END_UNKNOWN;
  j->first_start = NAN;
  j->end = NAN;
}

sm_sim_trace *sm__trace_new(const char *name, int format) {
  sm_sim_trace *t = sm_calloc(1, sizeof(*t));

  if (t == NULL)
    return NULL;
  sm_arena_init(&t->arena, 0, ARENA_MAX);
  t->name = sm_strdup(name);
  t->format = format;
  t->refs = 1;
  if (t->name == NULL) {
    sm_free(t);
    return NULL;
  }
  return t;
}

int sm__trace_push(sm_sim_trace *t, const sm_sim_job *j, size_t max_jobs,
                   sm_err *err) {
  if (t->n >= max_jobs)
    return sm_err_set(err, SM_ELIMIT, "%s: more than %zu jobs", t->name,
                      max_jobs);
  if (SM__GROW(t->jobs, t->n + 1, t->cap) != 0)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", t->name);
  t->jobs[t->n++] = *j;
  return 0;
}

static int by_submit(const void *a, const void *b) {
  const sm_sim_job *x = a, *y = b;

  if (x->submit != y->submit)
    return x->submit < y->submit ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void sm__trace_finish(sm_sim_trace *t) {
  size_t disorder = 0;
  double base;

  for (size_t i = 0; i < t->n; i++) {
    t->jobs[i].idx = (uint32_t)i;
    if (i > 0 && t->jobs[i].submit < t->jobs[i - 1].submit)
      disorder++;
  }
  if (disorder > 0) {
    qsort(t->jobs, t->n, sizeof(*t->jobs), by_submit);
    sm__notes_add(&t->notes,
                  "rows were not in submit order (%zu out of place): "
                  "sorted by submit time, ties in file order",
                  disorder);
  }
  base = t->n ? t->jobs[0].submit : 0;
  for (size_t i = 0; i < t->n; i++) {
    t->jobs[i].idx = (uint32_t)i;
    t->jobs[i].submit -= base;
  }
}

void sm_sim_trace_free(sm_sim_trace *t) {
  if (t == NULL || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  sm_arena_discard(&t->arena);
  sm__notes_release(&t->notes);
  sm_free(t->jobs);
  sm_free(t->name);
  sm_free(t);
}

size_t sm_sim_trace_count(const sm_sim_trace *t) {
  return t->n;
}

const sm_sim_job *sm_sim_trace_job(const sm_sim_trace *t, size_t i) {
  return i < t->n ? &t->jobs[i] : NULL;
}

const char *sm_sim_trace_name(const sm_sim_trace *t) {
  return t->name;
}
int sm_sim_trace_format(const sm_sim_trace *t) {
  return t->format;
}
int sm_sim_trace_synthetic_p(const sm_sim_trace *t) {
  return t->synthetic;
}
int sm_sim_trace_calibrated_gpus(const sm_sim_trace *t) {
  return t->calibrated_gpus;
}
size_t sm_sim_trace_note_count(const sm_sim_trace *t) {
  return t->notes.n;
}
const char *sm_sim_trace_note(const sm_sim_trace *t, size_t i) {
  return i < t->notes.n ? t->notes.v[i] : NULL;
}

const char *sm_sim_end_name(int s) {
  switch (s) {
  case SM_SIM_END_COMPLETED:
    return "completed";
  case SM_SIM_END_CANCELED:
    return "canceled";
  case SM_SIM_END_FAILED:
    return "failed";
  default:
    return "unknown";
  }
}

const char *sm_sim_job_attr(const sm_sim_job *j, const char *key) {
  for (int i = 0; i < j->nattrs; i++)
    if (strcmp(j->attrs[i].key, key) == 0)
      return j->attrs[i].value;
  return NULL;
}

static const char *const format_names[] = {"auto",    "sia-philly", "helios",
                                           "acme",    "tiresias",   "sia",
                                           "generic", "synthetic"};

const char *sm_sim_format_name(int f) {
  if (f < 0 || f >= (int)SM_ARRAY_LEN(format_names))
    return "unknown";
  return format_names[f];
}

int sm_sim_format_parse(const char *s) {
  for (int i = 0; i < (int)SM_ARRAY_LEN(format_names) - 1; i++)
    if (strcmp(s, format_names[i]) == 0)
      return i;
  if (strcmp(s, "lucid") == 0)
    return SM_SIM_FMT_HELIOS;
  if (strcmp(s, "chronus") == 0)
    return SM_SIM_FMT_TIRESIAS;
  if (strcmp(s, "philly") == 0)
    return SM_SIM_FMT_SIA_PHILLY;
  return -1;
}

void sm_sim_load_opts_init(sm_sim_load_opts *o) {
  memset(o, 0, sizeof(*o));
  o->format = SM_SIM_FMT_AUTO;
  o->seed = 1;
}

/* ==== Column roles ==== */

enum role {
  R_NONE = 0, /* becomes an attribute */
  R_IGNORE,   /* known, derived or unused (kept out of attributes) */
  R_SUBMIT,   /* submission time */
  R_DURATION, /* run time, seconds */
  R_GPUS,     /* GPU count */
  R_ID,       /* job id */
  R_USER,     /* user */
  R_NAME,     /* job name */
  R_VC,       /* virtual cluster */
  R_STATE,    /* end state */
  R_GPU_TYPE, /* GPU type */
  R_NODES,    /* node count */
  R_ESTIMATE, /* duration estimate, seconds */
  R_APP,      /* Sia application (name also kept as attribute) */
  R_GPU_TIME  /* GPU-seconds (checked against duration x GPUs) */
};

typedef struct colspec {
  const char *name; /* header text */
  int role;         /* enum role */
  int required;     /* 1 when the layout needs it */
} colspec;

static const colspec cols_sia_philly[] = {
    {"timestamp", R_SUBMIT, 1}, {"duration", R_DURATION, 1},
    {"num_gpus", R_GPUS, 1},    {"gpu_time", R_GPU_TIME, 0},
    {"cluster", R_VC, 0},       {NULL, 0, 0}};

static const colspec cols_helios[] = {
    {"submit_time", R_SUBMIT, 1}, {"duration", R_DURATION, 1},
    {"gpu_num", R_GPUS, 1},       {"job_id", R_ID, 0},
    {"user", R_USER, 0},          {"vc", R_VC, 0},
    {"jobname", R_NAME, 0},       {"state", R_STATE, 0},
    {"node_num", R_NODES, 0},     {"gpu_type", R_GPU_TYPE, 0},
    {"start_time", R_IGNORE, 0},  {"end_time", R_IGNORE, 0},
    {"queue", R_IGNORE, 0},       {"gpu_time", R_GPU_TIME, 0},
    {"fail_time", R_IGNORE, 0},   {"stop_time", R_IGNORE, 0},
    {"remain", R_IGNORE, 0},      {NULL, 0, 0}};

static const colspec cols_tiresias[] = {{"submit_time", R_SUBMIT, 1},
                                        {"duration", R_DURATION, 1},
                                        {"num_gpu", R_GPUS, 1},
                                        {"job_id", R_ID, 0},
                                        {"user", R_USER, 0},
                                        {"model_name", R_NONE, 0},
                                        {"interval", R_IGNORE, 0},
                                        {"start_time", R_IGNORE, 0},
                                        {NULL, 0, 0}};

static const colspec cols_sia[] = {
    {"time", R_SUBMIT, 1},       {"num_replicas", R_GPUS, 1},
    {"application", R_APP, 1},   {"name", R_ID, 0},
    {"duration", R_DURATION, 0}, {NULL, 0, 0}};

static const colspec cols_generic[] = {{"submit_s", R_SUBMIT, 1},
                                       {"duration_s", R_DURATION, 1},
                                       {"gpus", R_GPUS, 1},
                                       {"job_id", R_ID, 0},
                                       {"user", R_USER, 0},
                                       {"name", R_NAME, 0},
                                       {"vc", R_VC, 0},
                                       {"state", R_STATE, 0},
                                       {"gpu_type", R_GPU_TYPE, 0},
                                       {"nodes", R_NODES, 0},
                                       {"estimate_s", R_ESTIMATE, 0},
                                       {NULL, 0, 0}};

static const colspec *layout_cols(int f) {
  switch (f) {
  case SM_SIM_FMT_SIA_PHILLY:
    return cols_sia_philly;
  case SM_SIM_FMT_HELIOS:
  case SM_SIM_FMT_ACME:
    return cols_helios;
  case SM_SIM_FMT_TIRESIAS:
    return cols_tiresias;
  case SM_SIM_FMT_SIA:
    return cols_sia;
  case SM_SIM_FMT_GENERIC:
    return cols_generic;
  default:
    return NULL;
  }
}

static int has(char **h, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(h[i], name) == 0)
      return 1;
  return 0;
}

/* Picks the layout from the header names. */
static int detect(char **h, int n) {
  if (has(h, n, "submit_s") && has(h, n, "duration_s"))
    return SM_SIM_FMT_GENERIC;
  if (has(h, n, "timestamp") && has(h, n, "num_gpus"))
    return SM_SIM_FMT_SIA_PHILLY;
  if (has(h, n, "application") && has(h, n, "num_replicas"))
    return SM_SIM_FMT_SIA;
  if (has(h, n, "num_gpu") && has(h, n, "submit_time"))
    return SM_SIM_FMT_TIRESIAS;
  if (has(h, n, "gpu_num") && has(h, n, "submit_time")) {
    if (!has(h, n, "vc") && (has(h, n, "type") || has(h, n, "gpu_time")))
      return SM_SIM_FMT_ACME;
    return SM_SIM_FMT_HELIOS;
  }
  return SM_SIM_FMT_AUTO;
}

/* ==== Row reading ==== */

typedef struct loader {
  sm_sim_trace *t;           /* trace being built */
  const sm_sim_load_opts *o; /* options */
  const char *file;          /* for messages */
  int ncols;                 /* header width */
  char **hdr;                /* header names (arena) */
  int *role;                 /* role per column */
  int nattr;                 /* columns that become attributes */
  int has_app;               /* 1 when a Sia application column exists */
  double from, to;           /* window in trace time units */
  int has_from, has_to;      /* window ends given */
  size_t cpu_jobs;           /* rows with 0 GPUs skipped */
  size_t outside;            /* rows outside the window */
  size_t gpu_time_bad;       /* rows whose gpu_time disagrees */
  size_t unknown_states;     /* state text not recognised */
  size_t drawn;              /* durations drawn (Sia) */
  int submit_is_date;        /* submit column holds datetimes */
} loader;

/* "FILE:LINE: column 'NAME' (field K): MESSAGE" */
static int col_error(loader *L, sm_err *err, long line, int col,
                     const char *fmt, const char *val) {
  char msg[160];
  size_t n = strlen(val);

  snprintf(msg, sizeof(msg), fmt, n > 40 ? 40 : (int)n, val);
  return sm_err_set(err, SM_EPARSE, "%s:%ld: column '%s' (field %d): %s%s",
                    L->file, line, L->hdr[col], col + 1, msg,
                    n > 40 ? "..." : "");
}

static int map_state(const char *s) {
  static const char *const done[] = {"completed", "pass", "success",
                                     "succeeded", "finished"};
  static const char *const canc[] = {"cancelled", "canceled", "killed"};
  static const char *const fail[] = {"failed",        "timeout", "node_fail",
                                     "out_of_memory", "oom",     "error"};
  for (size_t i = 0; i < SM_ARRAY_LEN(done); i++)
    if (strcasecmp(s, done[i]) == 0)
      return SM_SIM_END_COMPLETED;
  for (size_t i = 0; i < SM_ARRAY_LEN(canc); i++)
    if (strcasecmp(s, canc[i]) == 0)
      return SM_SIM_END_CANCELED;
  for (size_t i = 0; i < SM_ARRAY_LEN(fail); i++)
    if (strcasecmp(s, fail[i]) == 0)
      return SM_SIM_END_FAILED;
  return SM_SIM_END_UNKNOWN;
}

/* GPU-time classes (GPU-hours) that Sia's workload generator used to
 * choose each application; a job's GPU time is drawn log-uniformly in its
 * class because the workload files carry no durations. */
typedef struct sia_class {
  const char *app; /* application */
  double lo, hi;   /* GPU-hours */
} sia_class;

static const sia_class sia_classes[] = {{"cifar10", 60.0 / 3600.0, 1.0},
                                        {"deepspeech2", 1.0, 10.0},
                                        {"bert", 1.0, 10.0},
                                        {"yolov3", 10.0, 100.0},
                                        {"imagenet", 100.0, 1000.0},
                                        {"ncf", 60.0 / 3600.0, 1.0},
                                        {"gpt_pmp", 100.0, 1000.0}};

static const sia_class *sia_class_of(const char *app) {
  for (size_t i = 0; i < SM_ARRAY_LEN(sia_classes); i++)
    if (strcmp(app, sia_classes[i].app) == 0)
      return &sia_classes[i];
  return NULL;
}

/* Parses a non-negative integer that may be written as "8" or "8.0". */
static int parse_count(const char *s, long long *out) {
  double v;

  if (sm_parse_i64(s, out) == 0)
    return *out >= 0 ? 0 : SM_ERANGE;
  if (sm__parse_num(s, &v) != 0)
    return SM_EPARSE;
  if (v != floor(v) || v > 1e9)
    return SM_EPARSE;
  if (v < 0)
    return SM_ERANGE;
  *out = (long long)v;
  return 0;
}

/* One row being read. */
typedef struct row {
  sm_sim_job j;       /* the job */
  sm_sim_attr *attrs; /* its extra columns (arena) */
  int na;             /* attributes used */
  double gpu_time;    /* the gpu_time column, NaN without */
  double raw_submit;  /* submit time in the trace's units */
  int have_dur;       /* a duration was given */
  const char *app;    /* Sia's application column, or NULL */
} row;

/* A number column: submit time, duration, GPUs, nodes, estimate or GPU
 * time. */
static int read_number(loader *L, row *r, int c, const char *v, long line,
                       sm_err *err) {
  long long n;
  double d;
  int rc;

  switch (L->role[c]) {
  case R_SUBMIT:
    if (*v == '\0')
      return col_error(L, err, line, c, "empty submit time%.*s", v);
    if (sm__parse_time(v, &r->raw_submit) != 0)
      return col_error(L, err, line, c, "'%.*s' is not a time", v);
    if (sm__parse_num(v, &d) != 0)
      L->submit_is_date = 1;
    return 0;
  case R_DURATION:
    if (*v == '\0' && L->t->format == SM_SIM_FMT_SIA)
      return 0;
    if (sm__parse_num(v, &d) != 0)
      return col_error(L, err, line, c, "'%.*s' is not a number", v);
    if (d < 0)
      return col_error(L, err, line, c, "negative duration '%.*s'", v);
    if (d > MAX_DURATION_S)
      return col_error(L, err, line, c,
                       "duration '%.*s' out of range (at most 3e10 s)", v);
    r->j.duration = d;
    r->have_dur = 1;
    return 0;
  case R_GPUS:
    rc = parse_count(v, &n);
    if (rc == SM_ERANGE)
      return col_error(L, err, line, c, "negative GPU count '%.*s'", v);
    if (rc != 0)
      return col_error(L, err, line, c, "'%.*s' is not a whole number of GPUs",
                       v);
    if (n > 1000000)
      return col_error(L, err, line, c, "implausible GPU count '%.*s'", v);
    r->j.gpus = r->j.trace_gpus = (int)n;
    return 0;
  case R_NODES:
    if (*v == '\0')
      return 0;
    rc = parse_count(v, &n);
    if (rc != 0 || n > 1000000)
      return col_error(L, err, line, c, "'%.*s' is not a node count", v);
    r->j.nodes = (int)n;
    return 0;
  default: /* R_ESTIMATE, R_GPU_TIME */
    if (*v == '\0')
      return 0;
    if (sm__parse_num(v, &d) != 0)
      return col_error(L, err, line, c, "'%.*s' is not a number", v);
    if (L->role[c] == R_GPU_TIME)
      r->gpu_time = d;
    else if (d > 0)
      r->j.estimate = d;
    return 0;
  }
}

/* The text field of the job that column c fills, or NULL. */
static const char **text_field(int role, sm_sim_job *j) {
  switch (role) {
  case R_ID:
    return &j->id;
  case R_USER:
    return &j->user;
  case R_NAME:
  case R_APP:
    return &j->name;
  case R_VC:
    return &j->vc_name;
  case R_GPU_TYPE:
    return &j->gpu_type;
  default:
    return NULL;
  }
}

/* Column c of a row. */
static int read_field(loader *L, row *r, int c, const char *v, long line,
                      sm_err *err) {
  const char **dst = text_field(L->role[c], &r->j);

  switch (L->role[c]) {
  case R_SUBMIT:
  case R_DURATION:
  case R_GPUS:
  case R_NODES:
  case R_ESTIMATE:
  case R_GPU_TIME:
    return read_number(L, r, c, v, line, err);
  case R_STATE:
    r->j.end_state = map_state(v);
    if (r->j.end_state == SM_SIM_END_UNKNOWN && *v != '\0')
      L->unknown_states++;
    return 0;
  case R_APP:
    r->app = v;
    break;
  case R_IGNORE:
    return 0;
  default:
    if (dst == NULL && r->na < L->nattr) {
      r->attrs[r->na].key = L->hdr[c];
      r->attrs[r->na].value = sm_arena_strdup(&L->t->arena, v);
      if (r->attrs[r->na++].value == NULL)
        return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
    }
    break;
  }
  if (dst != NULL && *v != '\0' &&
      (*dst = sm_arena_strdup(&L->t->arena, v)) == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
  return 0;
}

/* A Sia workload row has no duration: it is drawn log-uniformly in the
 * GPU-time class of its application. */
static int draw_duration(loader *L, row *r, long line, sm_err *err) {
  const sia_class *k = sia_class_of(r->app ? r->app : "");
  double u, gt;

  if (k == NULL)
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: unknown application '%.40s' and no "
                      "duration column",
                      L->file, line, r->app ? r->app : "");
  u = sm__job_uniform(L->o->seed, sm_hash64(r->j.id, strlen(r->j.id), 7),
                      (uint64_t)line);
  gt = k->lo * pow(k->hi / k->lo, u) * 3600.0;
  r->j.duration = round(gt / r->j.gpus);
  L->drawn++;
  return 0;
}

static int read_row(loader *L, char **f, int nf, long line, sm_err *err) {
  row r;
  int rc;

  if (nf != L->ncols)
    return sm_err_set(err, SM_EPARSE,
                      "%s:%ld: expected %d fields as in the header, found %d",
                      L->file, line, L->ncols, nf);
  memset(&r, 0, sizeof(r));
  r.gpu_time = NAN;
  sm__job_defaults(&r.j);
  r.j.line = (int)(line > INT32_MAX ? INT32_MAX : line);
  if (L->nattr + L->has_app > 0) {
    r.attrs = sm_arena_alloc(&L->t->arena, (size_t)(L->nattr + L->has_app) *
                                               sizeof(*r.attrs));
    if (r.attrs == NULL)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
  }
  for (int c = 0; c < nf; c++)
    if ((rc = read_field(L, &r, c, f[c], line, err)) != 0)
      return rc;
  if (r.app != NULL && r.attrs != NULL) {
    /* Sia workloads: the application also stays an attribute. */
    r.attrs[r.na].key = "application";
    r.attrs[r.na++].value = r.j.name;
  }
  r.j.attrs = r.attrs;
  r.j.nattrs = r.na;
  if (r.j.gpus == 0) {
    L->cpu_jobs++;
    return 0;
  }
  if (!r.have_dur && (rc = draw_duration(L, &r, line, err)) != 0)
    return rc;
  if (!isnan(r.gpu_time) && fabs(r.gpu_time - r.j.duration * r.j.trace_gpus) >
                                1e-6 * SM_MAX(1.0, fabs(r.gpu_time)))
    L->gpu_time_bad++;
  if ((L->has_from && r.raw_submit < L->from) ||
      (L->has_to && r.raw_submit > L->to)) {
    L->outside++;
    return 0;
  }
  if (r.j.id[0] == '\0') {
    char tmp[24];
    snprintf(tmp, sizeof(tmp), "L%ld", line);
    r.j.id = sm_arena_strdup(&L->t->arena, tmp);
    if (r.j.id == NULL)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
  }
  r.j.submit = r.raw_submit;
  r.j.idx = (uint32_t)L->t->n;
  return sm__trace_push(
      L->t, &r.j, L->o->max_jobs ? L->o->max_jobs : DEFAULT_MAX_JOBS, err);
}

/* ==== Estimates file ==== */

typedef struct est_slot {
  const char *id; /* job id (trace arena), NULL when empty */
  uint64_t h;     /* its hash */
  size_t job;     /* index in the trace */
} est_slot;

/* Attaches "job_id,<estimate>" rows to the trace's jobs by id. */
static int attach_estimates(sm_sim_trace *t, const char *path, sm_err *err) {
  sm__lsrc l;
  est_slot *tab;
  size_t cap = 16, matched = 0, negative = 0, rows = 0;
  char *line, *f[SM__CSV_MAX_FIELDS];
  size_t len;
  int rc, nf, idc = -1, vc = -1;

  while (cap < t->n * 2)
    cap *= 2;
  tab = sm_calloc(cap, sizeof(*tab));
  if (tab == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
  for (size_t i = 0; i < t->n; i++) {
    uint64_t h = sm_hash64(t->jobs[i].id, strlen(t->jobs[i].id), 1);
    size_t k = h & (cap - 1);
    while (tab[k].id != NULL)
      k = (k + 1) & (cap - 1);
    tab[k].id = t->jobs[i].id;
    tab[k].h = h;
    tab[k].job = i;
  }
  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0) {
    sm_free(tab);
    return rc;
  }
  while ((rc = sm__lsrc_next(&l, &line, &len, err)) == 1) {
    double v;
    nf = sm__csv_split(line, f, SM__CSV_MAX_FIELDS);
    if (nf < 0) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: malformed CSV row", path,
                      l.lineno);
      break;
    }
    if (l.lineno == 1) {
      for (int c = 0; c < nf; c++) {
        if (strcmp(f[c], "job_id") == 0)
          idc = c;
        else if (vc < 0 && (strcmp(f[c], "estimate_s") == 0 ||
                            strcmp(f[c], "estimate") == 0 ||
                            strcmp(f[c], "priority") == 0 ||
                            strcmp(f[c], "duration") == 0))
          vc = c;
      }
      if (idc < 0 || vc < 0) {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:1: expected columns job_id and estimate_s "
                        "(or estimate, priority, duration)",
                        path);
        break;
      }
      continue;
    }
    if (nf <= idc || nf <= vc) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: too few fields", path, l.lineno);
      break;
    }
    if (sm__parse_num(f[vc], &v) != 0) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column %d: '%.40s' is not a number", path,
                      l.lineno, vc + 1, f[vc]);
      break;
    }
    rows++;
    {
      uint64_t h = sm_hash64(f[idc], strlen(f[idc]), 1);
      size_t k = h & (cap - 1);
      while (tab[k].id != NULL) {
        if (tab[k].h == h && strcmp(tab[k].id, f[idc]) == 0) {
          if (v > 0) {
            t->jobs[tab[k].job].estimate = v;
            matched++;
          } else {
            negative++;
          }
          break;
        }
        k = (k + 1) & (cap - 1);
      }
    }
  }
  sm__lsrc_close(&l);
  sm_free(tab);
  if (rc < 0)
    return rc;
  sm__notes_add(&t->notes,
                "estimates from %s: %zu rows, %zu matched a job"
                "%s%zu non-positive estimates ignored",
                path, rows, matched, negative ? ", " : "; ", negative);
  return 0;
}

/* ==== Driver ==== */

static int setup_header(loader *L, char **f, int nf, sm_err *err) {
  const colspec *cols;
  int fmt = L->o->format;

  if (nf > 0 && strncmp(f[0], "\xef\xbb\xbf", 3) == 0)
    f[0] += 3;
  L->ncols = nf;
  L->hdr = sm_arena_calloc(&L->t->arena, (size_t)nf, sizeof(char *));
  L->role = sm_arena_calloc(&L->t->arena, (size_t)nf, sizeof(int));
  if (L->hdr == NULL || L->role == NULL)
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
  for (int c = 0; c < nf; c++) {
    L->hdr[c] = sm_arena_strdup(&L->t->arena, f[c]);
    if (L->hdr[c] == NULL)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", L->file);
    /* A repeated name would leave it to chance which column is read. */
    for (int k = 0; k < c; k++)
      if (strcmp(L->hdr[k], L->hdr[c]) == 0)
        return sm_err_set(err, SM_EPARSE,
                          "%s:1: column '%.40s' appears twice (fields %d "
                          "and %d)",
                          L->file, L->hdr[c], k + 1, c + 1);
  }
  if (fmt == SM_SIM_FMT_AUTO) {
    fmt = detect(L->hdr, nf);
    if (fmt == SM_SIM_FMT_AUTO)
      return sm_err_set(err, SM_EPARSE,
                        "%s:1: unrecognised trace header (first column "
                        "'%.40s'); expected the sia-philly, helios, acme, "
                        "tiresias, sia or generic layout (see --format)",
                        L->file, nf > 0 ? L->hdr[0] : "");
  }
  L->t->format = fmt;
  cols = layout_cols(fmt);
  if (cols == NULL)
    return sm_err_set(err, SM_EINVAL, "%s: format %s cannot be read", L->file,
                      sm_sim_format_name(fmt));
  for (const colspec *k = cols; k->name != NULL; k++) {
    int found = 0;
    for (int c = 0; c < nf; c++)
      if (strcmp(L->hdr[c], k->name) == 0 && L->role[c] == R_NONE) {
        L->role[c] = k->role;
        found = 1;
        break;
      }
    if (!found && k->required)
      return sm_err_set(err, SM_EPARSE, "%s:1: missing column '%s' (format %s)",
                        L->file, k->name, sm_sim_format_name(fmt));
  }
  for (int c = 0; c < nf; c++) {
    if (L->role[c] == R_NONE)
      L->nattr++;
    if (L->role[c] == R_APP)
      L->has_app = 1;
  }
  return 0;
}

static int load_lines(sm__lsrc *l, const sm_sim_load_opts *o,
                      sm_sim_trace **out, sm_err *err) {
  sm_sim_load_opts def;
  loader L;
  char *line;
  char **f;
  size_t len;
  int rc, got_header = 0;

  if (o == NULL) {
    sm_sim_load_opts_init(&def);
    o = &def;
  }
  memset(&L, 0, sizeof(L));
  L.o = o;
  L.file = l->name;
  L.t = sm__trace_new(l->name, o->format);
  f = sm_malloc(SM__CSV_MAX_FIELDS * sizeof(char *));
  if (L.t == NULL || f == NULL) {
    sm_free(f);
    sm_sim_trace_free(L.t);
    return sm_err_set(err, SM_ENOMEM, "%s: out of memory", l->name);
  }
  if (o->from != NULL) {
    if (sm__parse_time(o->from, &L.from) != 0) {
      rc = sm_err_set(err, SM_EINVAL, "bad --from time '%.40s'", o->from);
      goto fail;
    }
    L.has_from = 1;
  }
  if (o->to != NULL) {
    if (sm__parse_time(o->to, &L.to) != 0) {
      rc = sm_err_set(err, SM_EINVAL, "bad --to time '%.40s'", o->to);
      goto fail;
    }
    L.has_to = 1;
  }
  while ((rc = sm__lsrc_next(l, &line, &len, err)) == 1) {
    int nf;
    if (len == 0 || line[strspn(line, " \t")] == '\0')
      continue; /* blank lines */
    nf = sm__csv_split(line, f, SM__CSV_MAX_FIELDS);
    if (nf == SM_ETOOBIG) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: more than %d fields", l->name,
                      l->lineno, SM__CSV_MAX_FIELDS);
      goto fail;
    }
    if (nf < 0) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: malformed quoted field (unterminated quote "
                      "or text after a closing quote)",
                      l->name, l->lineno);
      goto fail;
    }
    if (!got_header) {
      rc = setup_header(&L, f, nf, err);
      if (rc != 0)
        goto fail;
      got_header = 1;
      continue;
    }
    rc = read_row(&L, f, nf, l->lineno, err);
    if (rc != 0)
      goto fail;
  }
  if (rc < 0)
    goto fail;
  if (!got_header) {
    rc = sm_err_set(err, SM_EPARSE, "%s: empty file, expected a CSV header",
                    l->name);
    goto fail;
  }
  if (L.t->n == 0) {
    rc = sm_err_set(err, SM_EPARSE, "%s: no GPU jobs%s", l->name,
                    (L.has_from || L.has_to) && L.outside
                        ? " inside the --from/--to window"
                        : "");
    goto fail;
  }
  sm__trace_finish(L.t);
  if (L.t->jobs[L.t->n - 1].submit > MAX_SPAN_S) {
    rc = sm_err_set(err, SM_ERANGE,
                    "%s:%d: submit time %.6g s after the first job: "
                    "submissions may span at most 3e11 s",
                    l->name, L.t->jobs[L.t->n - 1].line,
                    L.t->jobs[L.t->n - 1].submit);
    goto fail;
  }
  if (o->limit > 0 && L.t->n > o->limit) {
    sm__notes_add(&L.t->notes, "kept the first %zu of %zu jobs (--limit)",
                  o->limit, L.t->n);
    L.t->n = o->limit;
  }
  if (L.has_from || L.has_to)
    sm__notes_add(&L.t->notes, "window %s .. %s: %zu jobs kept, %zu outside",
                  o->from ? o->from : "start", o->to ? o->to : "end", L.t->n,
                  L.outside);
  if (L.cpu_jobs)
    sm__notes_add(&L.t->notes, "%zu jobs without GPUs skipped", L.cpu_jobs);
  if (L.gpu_time_bad)
    sm__notes_add(&L.t->notes,
                  "%zu rows whose gpu_time differs from duration x GPUs "
                  "(duration used)",
                  L.gpu_time_bad);
  if (L.unknown_states)
    sm__notes_add(&L.t->notes, "%zu rows with an unrecognised state",
                  L.unknown_states);
  if (L.drawn)
    sm__notes_add(&L.t->notes,
                  "%zu durations drawn (Sia workloads carry none): GPU "
                  "time log-uniform in the application's GPU-time class "
                  "(seed %llu), divided by the GPU count",
                  L.drawn, (unsigned long long)o->seed);
  if (o->estimates != NULL) {
    rc = attach_estimates(L.t, o->estimates, err);
    if (rc != 0)
      goto fail;
  }
  sm_free(f);
  *out = L.t;
  return 0;
fail:
  sm_free(f);
  sm_sim_trace_free(L.t);
  return rc < 0 ? rc : SM_EPARSE;
}

int sm_sim_trace_load(const char *path, const sm_sim_load_opts *o,
                      sm_sim_trace **out, sm_err *err) {
  sm__lsrc l;
  int rc;

  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0)
    return rc;
  rc = load_lines(&l, o, out, err);
  sm__lsrc_close(&l);
  return rc;
}

int sm_sim_trace_load_mem(const char *data, size_t len, const char *name,
                          const sm_sim_load_opts *o, sm_sim_trace **out,
                          sm_err *err) {
  sm__lsrc l;
  int rc;

  rc = sm__lsrc_open_mem(&l, data, len, name, err);
  if (rc != 0)
    return rc;
  rc = load_lines(&l, o, out, err);
  sm__lsrc_close(&l);
  return rc;
}
