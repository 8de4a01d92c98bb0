/* diagnose.c - the Failure Handler's entry points: checks the input,
 * runs the locator and the cause resolver, and writes a diagnosis (and
 * its plan) as the JSON members of docs/design.md section 3. */
#include <string.h>

#include "failure/failure_int.h"

#define SNIFF 65536

/* ==== Input checks ==== */

/* Length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  size_t len;

  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    len = 2;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    len = 3;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    len = 4;
  else
    return 0;
  if (len > n)
    return n == 0 ? 0 : 1; /* cut by the sample's end: not held against it */
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

/* Refuses compressed and binary data: a log is text, perhaps with a few
 * stray bytes (a crash can leave NUL padding or a cut UTF-8 sequence). */
static int sniff(sm__logsrc *src, sm_err *err) {
  unsigned char buf[SNIFF];
  ssize_t n = sm__logsrc_read(src, buf, sizeof(buf), 0, err);
  size_t nul = 0, bad = 0, i = 0;

  if (n < 0)
    return (int)n;
  if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: gzip-compressed data; decompress it first",
                      src->name);
  if (n >= 4 && buf[0] == 0x28 && buf[1] == 0xb5 && buf[2] == 0x2f &&
      buf[3] == 0xfd)
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: zstd-compressed data; decompress it first",
                      src->name);
  if (n >= 6 && memcmp(buf,
                       "\xfd"
                       "7zXZ",
                       5) == 0)
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: xz-compressed data; decompress it first", src->name);
  if (n >= 3 && memcmp(buf, "BZh", 3) == 0 && n >= 4 && buf[3] >= '1' &&
      buf[3] <= '9')
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: bzip2-compressed data; decompress it first",
                      src->name);
  if (n >= 4 &&
      (memcmp(buf,
              "\x7f"
              "ELF",
              4) == 0 ||
       memcmp(buf, "PK\x03\x04", 4) == 0 || memcmp(buf, "\x89HDF", 4) == 0))
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: binary data (an executable or archive), not a "
                      "text log",
                      src->name);
  while (i < (size_t)n) {
    unsigned char ch = buf[i];
    size_t l;
    if (ch == 0) {
      /* Runs of NUL bytes are padding a crash left in a text file; only
       * scattered ones count against it. */
      size_t j = i;
      while (j < (size_t)n && buf[j] == 0)
        j++;
      if (j - i < 64 && j < (size_t)n)
        nul += j - i;
      i = j;
      continue;
    }
    if (ch < 0x20 && ch != '\n' && ch != '\r' && ch != '\t' && ch != 0x1b &&
        ch != '\b' && ch != '\f' && ch != '\v') {
      bad++;
      i++;
      continue;
    }
    l = utf8_seq(buf + i, (size_t)n - i);
    if (l == 0) {
      bad++;
      l = 1;
    }
    i += l;
  }
  /* NUL padding at the very start is still binary; scattered control and
   * invalid bytes above a third of the sample are not a log. */
  if (n > 0 && (nul * 10 > (size_t)n || bad * 3 > (size_t)n))
    return sm_err_set(err, SM_EUNSUPP,
                      "%s: binary data, not a text log (%zu NUL and %zu "
                      "other non-text bytes in the first %zd)",
                      src->name, nul, bad, n);
  return 0;
}

/* ==== Diagnosis ==== */

static void fill_defaults(const sm_diag_opts *in, sm_diag_opts *o) {
  memset(o, 0, sizeof(*o));
  if (in != NULL)
    *o = *in;
  if (o->chunk_lines <= 0)
    o->chunk_lines = 64;
  if (o->chunk_lines > 100000)
    o->chunk_lines = 100000;
  if (o->context <= 0)
    o->context = 200;
  if (o->context > 100000)
    o->context = 100000;
  if (o->tail_lines <= 0)
    o->tail_lines = 1000;
  if (o->max_line == 0)
    o->max_line = 65536;
  if (o->max_line < 256)
    o->max_line = 256;
  if (o->max_line > ((size_t)1 << 20))
    o->max_line = (size_t)1 << 20;
}

static const char *mode_name(sm_diag_mode m) {
  return m == SM_DIAG_WHOLE ? "whole" : m == SM_DIAG_TAIL ? "tail" : "locator";
}

static int run(const sm_sigdb *db, sm__logsrc *src, const sm_diag_opts *in,
               sm_diagnosis *d, sm_err *err) {
  sm_diag_opts o;
  sm__lctx c;
  sm__window w;
  sm__locate_stats st = {0};
  int rc;

  fill_defaults(in, &o);
  d->mode = mode_name(o.mode);
  rc = sniff(src, err);
  if (rc != 0)
    return rc;
  rc = sm__lctx_init(&c, db, err);
  if (rc != 0)
    return rc;
  rc = sm__locate(&c, src, &o, &w, &st, err);
  if (rc > 0) {
    rc = sm__cause_resolve(&c, db, &w, &o, d, err);
    sm__window_release(&w);
  }
  d->chunks_examined = st.chunks;
  d->lines_examined = c.lines;
  d->bytes_read = src->nread + src->ncounted;
  d->bytes_counted = src->ncounted;
  sm__lctx_release(&c);
  return rc < 0 ? rc : 0;
}

static void init_result(sm_diagnosis *d) {
  memset(d, 0, sizeof(*d));
  sm_arena_init(&d->_arena, 16384, 0);
  d->category = "unknown";
  d->component = "none";
  d->xid = -1;
}

int sm_diagnose_file(const sm_sigdb *db, const char *path,
                     const sm_diag_opts *opts, sm_diagnosis *out, sm_err *err) {
  sm_rfile f;
  sm__logsrc src;
  int rc;

  init_result(out);
  rc = sm_rfile_open(&f, path, err);
  if (rc != 0)
    return rc;
  sm__logsrc_init(&src);
  src.f = &f;
  src.size = f.size;
  src.name = path;
  rc = run(db, &src, opts, out, err);
  sm__logsrc_release(&src);
  sm_rfile_close(&f);
  if (rc != 0)
    sm_diagnosis_release(out);
  return rc;
}

int sm_diagnose_mem(const sm_sigdb *db, const char *data, size_t len,
                    const char *name, const sm_diag_opts *opts,
                    sm_diagnosis *out, sm_err *err) {
  sm__logsrc src;
  int rc;

  init_result(out);
  sm__logsrc_init(&src);
  src.mem = data;
  src.size = len;
  src.name = name ? name : "(memory)";
  rc = run(db, &src, opts, out, err);
  sm__logsrc_release(&src);
  if (rc != 0)
    sm_diagnosis_release(out);
  return rc;
}

void sm_diagnosis_release(sm_diagnosis *d) {
  sm_arena_discard(&d->_arena);
  memset(d, 0, sizeof(*d));
  d->category = "unknown";
  d->component = "none";
  d->xid = -1;
}

/* ==== JSON ==== */

static void opt_str(sm_jw *w, const char *key, const char *v) {
  sm_jw_key(w, key);
  if (v != NULL)
    sm_jw_str(w, v);
  else
    sm_jw_null(w);
}

void sm_diagnosis_json(const sm_diagnosis *d, const sm_plan *p, sm_jw *w) {
  sm_jw_kv_str(w, "status", d->failure ? "failure" : "no_failure");
  sm_jw_key(w, "first_error_line");
  if (d->failure)
    sm_jw_int(w, d->first_error_line);
  else
    sm_jw_null(w);
  sm_jw_key(w, "first_error_offset");
  if (d->failure)
    sm_jw_int(w, (long long)d->first_error_offset);
  else
    sm_jw_null(w);
  sm_jw_kv_str(w, "category", d->category);
  sm_jw_kv_str(w, "component", d->component);
  opt_str(w, "root_cause", d->root_cause);
  sm_jw_key(w, "evidence");
  sm_jw_arr_begin(w);
  for (int i = 0; i < d->n_evidence; i++) {
    sm_jw_obj_begin(w);
    sm_jw_kv_int(w, "line", d->evidence[i].line);
    sm_jw_kv_str(w, "role", d->evidence[i].role);
    sm_jw_kv_str(w, "text", d->evidence[i].text);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_kv_num(w, "confidence",
               (double)(long long)(d->confidence * 1000 + 0.5) / 1000.0);
  sm_jw_kv_bool(w, "retryable", p ? p->retryable : d->retryable);
  sm_jw_key(w, "actions");
  sm_jw_arr_begin(w);
  if (p != NULL) {
    for (int i = 0; i < p->n_steps; i++)
      sm_jw_str(w, p->steps[i].action);
  } else if (d->failure) {
    sm_jw_str(w, "report");
  }
  sm_jw_arr_end(w);
  sm_jw_kv_int(w, "chunks_examined", (long long)d->chunks_examined);
  opt_str(w, "signature", d->signature);
  opt_str(w, "exception", d->exception);
  sm_jw_key(w, "xid");
  if (d->xid >= 0)
    sm_jw_int(w, d->xid);
  else
    sm_jw_null(w);
  opt_str(w, "node", d->node);
  opt_str(w, "device", d->device);
  opt_str(w, "reason", d->reason);
  opt_str(w, "basis", d->basis);
  sm_jw_key(w, "diagnose_commands");
  sm_jw_arr_begin(w);
  for (int i = 0; i < d->n_commands; i++)
    sm_jw_str(w, d->commands[i]);
  sm_jw_arr_end(w);
  sm_jw_kv_str(w, "mode", d->mode ? d->mode : "locator");
  sm_jw_kv_int(w, "lines_examined", (long long)d->lines_examined);
  sm_jw_kv_int(w, "bytes_read", (long long)d->bytes_read);
  sm_jw_kv_int(w, "bytes_counted", (long long)d->bytes_counted);
  if (p == NULL)
    return;
  sm_jw_key(w, "plan");
  sm_jw_obj_begin(w);
  sm_jw_kv_bool(w, "executable", p->executable);
  sm_jw_kv_bool(w, "shadow", p->shadow);
  sm_jw_key(w, "steps");
  sm_jw_arr_begin(w);
  for (int i = 0; i < p->n_steps; i++) {
    const sm_plan_step *s = &p->steps[i];
    sm_jw_obj_begin(w);
    sm_jw_kv_str(w, "action", s->action);
    opt_str(w, "target", s->target);
    opt_str(w, "condition", s->condition);
    sm_jw_key(w, "commands");
    sm_jw_arr_begin(w);
    for (int k = 0; k < s->n_commands; k++)
      sm_jw_str(w, s->commands[k]);
    sm_jw_arr_end(w);
    sm_jw_obj_end(w);
  }
  sm_jw_arr_end(w);
  sm_jw_key(w, "gates");
  sm_jw_arr_begin(w);
  for (int i = 0; i < p->n_gates; i++)
    sm_jw_str(w, p->gates[i]);
  sm_jw_arr_end(w);
  sm_jw_kv_int(w, "retries_used", p->retries_used);
  sm_jw_kv_int(w, "isolations_in_window", p->isolations_in_window);
  sm_jw_obj_end(w);
}
