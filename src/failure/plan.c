/* plan.c - the recovery planner: turns a diagnosis into steps behind
 * safety gates, keeps the retry and isolation counts in a small state
 * file, and appends every decision to a JSON-lines audit log.
 *
 * Gates, in order: a failure must be infrastructure (framework, user,
 * unknown and any other category are reported, never retried); its
 * component must be located (gpu, nvlink, network, node or storage: not
 * the job's own GPU memory, "none" or a name the planner does not know);
 * its confidence must be a number in [0, 1] at or above the threshold (NaN
 * fails); only then may a plan isolate or restart.  Isolation needs a
 * verdict that rests on a fault (not on a resource limit, an outside
 * event or an inference: the diagnosis's basis), a known node and room
 * in the isolation quota of the time window; a
 * restart needs a retryable fault and room under the job's retry cap.
 * Isolation and replacement are conditional on the diagnosis confirming
 * the fault.  In shadow mode the same plan is produced but marked not
 * executable, and nothing is counted.
 *
 * The state file is text, one record a line:
 *
 *   # schedmate planner state v1
 *   retry JOB COUNT LAST_EPOCH
 *   isolate EPOCH NODE
 *
 * It is replaced atomically (written beside it, then renamed) while a
 * lock on STATE.lock is held, so several schedulers may share it. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "failure/failure_int.h"
#include "util/util_int.h"

#define STATE_MAX ((size_t)16 << 20)
#define MAX_JOBS 100000
#define MAX_ISOLATIONS 100000
#define ID_MAX 200

/* ==== State ==== */

typedef struct job_rec {
  char id[ID_MAX + 1]; /* job id (no blanks) */
  long count;          /* restarts planned */
  double last;         /* epoch of the last one */
} job_rec;

typedef struct iso_rec {
  double at;             /* epoch */
  char node[ID_MAX + 1]; /* node isolated */
} iso_rec;

typedef struct state {
  job_rec *jobs; /* retry counts */
  int n_jobs;
  size_t cap_jobs;
  iso_rec *isos; /* isolations */
  int n_isos;
  size_t cap_isos;
} state;

static void state_release(state *s) {
  sm_free(s->jobs);
  sm_free(s->isos);
  memset(s, 0, sizeof(*s));
}

/* Copies an id, replacing blanks and control bytes by '_'. */
static void clean_id(char *dst, const char *src) {
  size_t i = 0;

  for (; src && src[i] && i < ID_MAX; i++) {
    unsigned char c = (unsigned char)src[i];
    dst[i] = (c <= ' ' || c == 0x7f) ? '_' : (char)c;
  }
  dst[i] = '\0';
  if (i == 0)
    strcpy(dst, "-");
}

static int push_job(state *s, const char *id, long count, double last) {
  if (SM__GROW(s->jobs, (size_t)s->n_jobs + 1, s->cap_jobs) != 0)
    return SM_ENOMEM;
  clean_id(s->jobs[s->n_jobs].id, id);
  s->jobs[s->n_jobs].count = count;
  s->jobs[s->n_jobs].last = last;
  s->n_jobs++;
  return 0;
}

static int push_iso(state *s, double at, const char *node) {
  if (SM__GROW(s->isos, (size_t)s->n_isos + 1, s->cap_isos) != 0)
    return SM_ENOMEM;
  s->isos[s->n_isos].at = at;
  clean_id(s->isos[s->n_isos].node, node);
  s->n_isos++;
  return 0;
}

/* Parses the state text; a line that does not parse is corruption. */
static int state_parse(state *s, char *text, size_t len, const char *path,
                       sm_err *err) {
  size_t i = 0;
  int lineno = 0;

  if (memchr(text, '\0', len) != NULL)
    return sm_err_set(err, SM_ECORRUPT, "%s: binary data in the state file",
                      path);
  while (i < len) {
    char *line = text + i, *nl = memchr(line, '\n', len - i);
    size_t l = nl ? (size_t)(nl - line) : len - i;
    char a[ID_MAX + 2], b[ID_MAX + 2], c[64], d[64], extra[2];
    int k, rc = 0;

    lineno++;
    i += l + 1;
    line[l] = '\0';
    if (l == 0 || line[0] == '#')
      continue;
    if (l > 512)
      return sm_err_set(err, SM_ECORRUPT, "%s:%d: line too long", path, lineno);
    k = sscanf(line, "%201s %201s %63s %63s %1s", a, b, c, d, extra);
    if (k == 4 && strcmp(a, "retry") == 0) {
      long long cnt;
      double last;
      if (strlen(b) > ID_MAX || sm_parse_i64(c, &cnt) != 0 || cnt < 0 ||
          cnt > 1000000 || sm_parse_double(d, &last) != 0)
        goto bad;
      if (s->n_jobs < MAX_JOBS)
        rc = push_job(s, b, (long)cnt, last);
    } else if (k == 3 && strcmp(a, "isolate") == 0) {
      double at;
      if (sm_parse_double(b, &at) != 0 || strlen(c) > ID_MAX)
        goto bad;
      if (s->n_isos < MAX_ISOLATIONS)
        rc = push_iso(s, at, c);
    } else {
      goto bad;
    }
    if (rc != 0)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", path);
    continue;
  bad:
    return sm_err_set(err, SM_ECORRUPT,
                      "%s:%d: corrupt planner state line (expected 'retry "
                      "JOB COUNT EPOCH' or 'isolate EPOCH NODE')",
                      path, lineno);
  }
  return 0;
}

/* Reads the state file; a missing file is an empty state. */
static int state_load(state *s, const char *path, sm_err *err) {
  char *text;
  size_t len;
  sm_err e = {0};
  int rc = sm_file_read_all(path, STATE_MAX, &text, &len, &e);

  if (rc == SM_ENOENT)
    return 0;
  if (rc != 0)
    return sm_err_set(err, rc, "%s", e.msg);
  rc = state_parse(s, text, len, path, err);
  sm_free(text);
  return rc;
}

static int state_save(const state *s, const char *path, double now,
                      double window, sm_err *err) {
  char tmp[4096];
  FILE *f;
  int ok = 1;

  if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
      (int)sizeof(tmp))
    return sm_err_set(err, SM_EINVAL, "%s: path too long", path);
  f = fopen(tmp, "w");
  if (f == NULL)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", tmp,
                      strerror(errno));
  ok &= fprintf(f, "# schedmate planner state v1\n") > 0;
  for (int i = 0; i < s->n_jobs && ok; i++)
    ok &= fprintf(f, "retry %s %ld %.0f\n", s->jobs[i].id, s->jobs[i].count,
                  s->jobs[i].last) > 0;
  for (int i = 0; i < s->n_isos && ok; i++)
    if (now - s->isos[i].at < window)
      ok &= fprintf(f, "isolate %.0f %s\n", s->isos[i].at, s->isos[i].node) > 0;
  ok &= fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return sm_err_set(err, sm_err_from_errno(e), "%s: cannot write: %s", path,
                      strerror(e));
  }
  return 0;
}

/* Takes the lock beside the state file; returns its descriptor. */
static int state_lock(const char *path, sm_err *err) {
  char lp[4096];
  int fd;

  if (snprintf(lp, sizeof(lp), "%s.lock", path) >= (int)sizeof(lp))
    return sm_err_set(err, SM_EINVAL, "%s: path too long", path);
  fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", lp,
                      strerror(errno));
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int e = errno;
      close(fd);
      return sm_err_set(err, sm_err_from_errno(e), "%s: cannot lock: %s", lp,
                        strerror(e));
    }
  }
  return fd;
}

/* ==== Plan ==== */

static sm_plan_step *add_step(sm_plan *p, const char *action,
                              const char *target, const char *cond) {
  sm_plan_step *s;

  if (p->n_steps >= SM_PLAN_MAX_STEPS)
    return NULL;
  s = &p->steps[p->n_steps++];
  memset(s, 0, sizeof(*s));
  s->action = action;
  s->target = target ? sm_arena_strdup(&p->_arena, target) : NULL;
  s->condition = cond;
  return s;
}

static void add_gate(sm_plan *p, const char *fmt, ...) SM_PRINTF(2, 3);

static void add_gate(sm_plan *p, const char *fmt, ...) {
  char buf[256];
  va_list ap;

  if (p->n_gates >= SM_PLAN_MAX_GATES)
    return;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  p->gates[p->n_gates] = sm_arena_strdup(&p->_arena, buf);
  if (p->gates[p->n_gates] != NULL)
    p->n_gates++;
}

static void copy_commands(sm_plan *p, sm_plan_step *s, const sm_diagnosis *d) {
  if (s == NULL)
    return;
  for (int i = 0; i < d->n_commands && i < SM_DIAG_MAX_COMMANDS; i++) {
    s->commands[i] = sm_arena_strdup(&p->_arena, d->commands[i]);
    if (s->commands[i] != NULL)
      s->n_commands++;
  }
}

static void iso8601(double t, char *out, size_t cap) {
  time_t tt = (time_t)t;
  struct tm tm;

  gmtime_r(&tt, &tm);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int audit(const sm_plan_opts *o, const sm_diagnosis *d, const sm_plan *p,
                 const char *job, const char *decision, double now,
                 sm_err *err) {
  sm_buf b;
  sm_jw w;
  char ts[32];
  int fd, rc = 0;

  sm_buf_init(&b, (size_t)1 << 20);
  sm_jw_init(&w, &b);
  iso8601(now, ts, sizeof(ts));
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "time");
  sm_jw_str(&w, ts);
  sm_jw_key(&w, "epoch");
  sm_jw_num(&w, (double)(long long)now);
  sm_jw_key(&w, "job");
  sm_jw_str(&w, job);
  sm_jw_key(&w, "log");
  if (o->log_path)
    sm_jw_str(&w, o->log_path);
  else
    sm_jw_null(&w);
  sm_jw_key(&w, "decision");
  sm_jw_str(&w, decision);
  sm_jw_key(&w, "threshold");
  sm_jw_num(&w, o->threshold);
  sm_jw_key(&w, "diagnosis");
  sm_jw_obj_begin(&w);
  sm_diagnosis_json(d, p, &w);
  sm_jw_obj_end(&w);
  sm_jw_obj_end(&w);
  rc = sm_jw_finish(&w);
  if (rc == 0)
    rc = sm_buf_addc(&b, '\n');
  if (rc != 0) {
    sm_buf_release(&b);
    return sm_err_set(err, rc, "%s: cannot format the audit record",
                      o->audit_path);
  }
  fd = open(o->audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    sm_buf_release(&b);
    return sm_err_set(err, sm_err_from_errno(e), "%s: %s", o->audit_path,
                      strerror(e));
  }
  /* One write per record: O_APPEND keeps concurrent records whole. */
  {
    ssize_t n = write(fd, b.data, b.len);
    if (n != (ssize_t)b.len) {
      int e = n < 0 ? errno : EIO;
      rc = sm_err_set(err, sm_err_from_errno(e), "%s: audit write failed: %s",
                      o->audit_path, strerror(e));
    }
  }
  if (close(fd) != 0 && rc == 0)
    rc = sm_err_set(err, SM_EIO, "%s: audit write failed", o->audit_path);
  sm_buf_release(&b);
  return rc;
}

/* Isolation policy of a component: the signature file's word, else
 * fence off a bad GPU, link, host or NIC, but not for a shared
 * filesystem or the job's own memory use. */
static int comp_policy(int set, int comp) {
  if (set >= 0)
    return set;
  return comp == SM__COMP_GPU || comp == SM__COMP_NVLINK ||
         comp == SM__COMP_NODE || comp == SM__COMP_NETWORK;
}

/* The options with their defaults filled in. */
static void plan_defaults(const sm_plan_opts *opts, sm_plan_opts *o) {
  memset(o, 0, sizeof(*o));
  if (opts)
    *o = *opts;
  if (!(o->threshold > 0)) /* zero, negative or NaN: the default */
    o->threshold = 0.8;
  if (o->max_retries < 0)
    o->max_retries = 0;
  else if (o->max_retries == 0)
    o->max_retries = 2;
  if (o->isolation_quota < 0)
    o->isolation_quota = 0;
  else if (o->isolation_quota == 0)
    o->isolation_quota = 2;
  if (o->quota_window_s <= 0)
    o->quota_window_s = 86400;
}

/* The located infrastructure component of the diagnosis: the job's own
 * GPU memory, "none" and anything unknown are SM__COMP_NONE. */
static int located_comp(const sm_diagnosis *d) {
  int comp = SM__COMP_NONE;

  for (int i = 0; d->component != NULL && i < SM__COMP_COUNT; i++)
    if (strcmp(sm__comp_names[i], d->component) == 0)
      comp = i;
  return comp == SM__COMP_GPU_MEMORY ? SM__COMP_NONE : comp;
}

/* What the planner state says: this job's restarts so far and the
 * isolations in the window. */
static void count_state(const state *st, const char *job, double now,
                        const sm_plan_opts *o, sm_plan *p) {
  for (int i = 0; i < st->n_jobs; i++)
    if (strcmp(st->jobs[i].id, job) == 0)
      p->retries_used = (int)SM_MIN(st->jobs[i].count, 1000000L);
  for (int i = 0; i < st->n_isos; i++)
    if (now - st->isos[i].at < o->quota_window_s && st->isos[i].at <= now)
      p->isolations_in_window++;
}

/* The plan of a located infrastructure fault with enough confidence:
 * diagnose, isolate (behind the policy, basis, node and quota gates) and
 * restart (behind the signature's word and the retry cap).  Sets
 * *isolate and *restart to what the plan does; returns the decision. */
static const char *plan_infra(const sm_sigdb *db, const sm_diagnosis *d,
                              const sm_plan_opts *o, int comp, const char *node,
                              const char *job, sm_plan *p, int *isolate,
                              int *restart) {
  const sm__comp *pc = &db->comps[comp];
  int can_iso = comp_policy(pc->isolate, comp);
  int can_rep = comp_policy(pc->replace, comp);

  copy_commands(p, add_step(p, "diagnose", node ? node : d->device, NULL), d);
  if (!can_iso) {
    add_gate(p, "isolating a node does not help a %s fault", d->component);
  } else if (d->basis != NULL && strcmp(d->basis, "fault") != 0) {
    add_gate(p,
             "the verdict rests on %s evidence, not on a broken part: "
             "no isolation",
             strcmp(d->basis, "limit") == 0   ? "a resource limit's"
             : strcmp(d->basis, "event") == 0 ? "an outside event's"
                                              : "inferred");
  } else if (node == NULL) {
    add_gate(p, "the failing node is not known: no isolation");
  } else if (p->isolations_in_window >= o->isolation_quota) {
    add_gate(p, "isolation quota reached (%d in the last %.0f s)",
             p->isolations_in_window, o->quota_window_s);
  } else {
    add_step(p, "isolate_node", node, "the diagnosis confirms the fault");
    if (can_rep)
      add_step(p, "request_replacement", node,
               "the diagnosis confirms the fault");
    *isolate = 1;
  }
  if (!d->retryable) {
    add_gate(p, "the signature says a restart would fail the same way");
    add_step(p, "report", job, NULL);
  } else if (d->basis != NULL && strcmp(d->basis, "inferred") == 0) {
    add_gate(p, "the verdict rests on inferred evidence: no restart");
    add_step(p, "report", job, NULL);
  } else if (p->retries_used >= o->max_retries) {
    add_gate(p, "retry cap reached (%d of %d restarts)", p->retries_used,
             o->max_retries);
    add_step(p, "report", job, NULL);
  } else {
    add_step(p, "restart_from_checkpoint", job, NULL);
    *restart = 1;
    p->retryable = 1;
  }
  p->executable = !p->shadow;
  if (p->shadow)
    add_gate(p, "shadow mode: the plan is not executed");
  return p->shadow ? "shadow" : "executable";
}

/* The gates every plan passes first: no failure, not the
 * infrastructure's, no located component, too little confidence (each a
 * report only); then plan_infra.  Returns the decision. */
static const char *plan_steps(const sm_sigdb *db, const sm_diagnosis *d,
                              const sm_plan_opts *o, const char *node,
                              const char *job, sm_plan *p, int *isolate,
                              int *restart) {
  int comp = located_comp(d);
  int infra = d->category != NULL && strcmp(d->category, "infrastructure") == 0;
  /* Confidence must be a number in [0, 1]; anything else fails the gate. */
  int conf_ok = isfinite(d->confidence) && d->confidence >= 0 &&
                d->confidence <= 1 && d->confidence >= o->threshold;

  if (!d->failure)
    return "no_failure";
  if (!infra) {
    add_step(p, "report", job, NULL);
    add_gate(p, "%s error: reported, never retried automatically",
             d->category && d->category[0] ? d->category : "unknown");
    return "report_only";
  }
  if (comp == SM__COMP_NONE) {
    copy_commands(p, add_step(p, "report", job, NULL), d);
    add_gate(p, "infrastructure fault without a located component");
    return "report_only";
  }
  if (!conf_ok) {
    copy_commands(p, add_step(p, "report", job, NULL), d);
    add_gate(p, "confidence %.2f below the threshold %.2f", d->confidence,
             o->threshold);
    return "report_only";
  }
  return plan_infra(db, d, o, comp, node, job, p, isolate, restart);
}

/* Records a restart of job and an isolation of node (what the plan does)
 * in the planner state and saves it. */
static int record_state(state *st, const sm_plan_opts *o, const char *job,
                        const char *node, int restart, int isolate, double now,
                        sm_err *err) {
  int found = 0;

  for (int i = 0; i < st->n_jobs && restart; i++)
    if (strcmp(st->jobs[i].id, job) == 0) {
      st->jobs[i].count++;
      st->jobs[i].last = now;
      found = 1;
    }
  if (restart && !found && push_job(st, job, 1, now) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  if (isolate && push_iso(st, now, node) != 0)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  return state_save(st, o->state_path, now, o->quota_window_s, err);
}

int sm_plan_make(const sm_sigdb *db, const sm_diagnosis *d,
                 const sm_plan_opts *opts, sm_plan *p, sm_err *err) {
  sm_plan_opts o;
  state st = {0};
  char job[ID_MAX + 1];
  const char *decision, *node;
  int lockfd = -1, rc = 0, restart = 0, isolate = 0;
  double now;

  memset(p, 0, sizeof(*p));
  sm_arena_init(&p->_arena, 4096, 0);
  plan_defaults(opts, &o);
  now = o.now > 0 ? o.now : (double)time(NULL);
  clean_id(job, o.job_id ? o.job_id : o.log_path ? o.log_path : "-");
  p->shadow = o.shadow != 0;
  node = o.node ? o.node : d->node;
  if (node != NULL && node[0] == '\0')
    node = NULL;

  if (o.state_path != NULL) {
    lockfd = state_lock(o.state_path, err);
    if (lockfd < 0) {
      rc = lockfd;
      goto fail_nolock;
    }
    rc = state_load(&st, o.state_path, err);
    if (rc != 0)
      goto fail;
    count_state(&st, job, now, &o, p);
  }
  decision = plan_steps(db, d, &o, node, job, p, &isolate, &restart);
  if (o.state_path != NULL && !p->shadow && (restart || isolate)) {
    rc = record_state(&st, &o, job, node, restart, isolate, now, err);
    if (rc != 0)
      goto fail;
  }
  if (o.audit_path != NULL) {
    rc = audit(&o, d, p, job, decision, now, err);
    if (rc != 0)
      goto fail;
  }
  if (lockfd >= 0)
    close(lockfd);
  state_release(&st);
  return 0;
fail:
  if (lockfd >= 0)
    close(lockfd);
fail_nolock:
  state_release(&st);
  sm_plan_release(p);
  return rc < 0 ? rc : (err && err->code ? err->code : SM_EIO);
}

void sm_plan_release(sm_plan *p) {
  sm_arena_discard(&p->_arena);
  memset(p, 0, sizeof(*p));
}
