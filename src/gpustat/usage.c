/* usage.c - a run's GPU metrics as the Slurm agent reads them back: the
 * files the node samplers wrote (merged over nodes and segments), or
 * Slurm's own accounting (sacct's TRES usage) where nodes have no NVML.
 *
 * Merging files: the run's SM utilisation is the mean of the files'
 * steady-state means weighted by steady samples x GPUs; its memory is the
 * highest peak of any file (the memory one GPU needs).  A file counts when
 * its samples overlap the run (with a slack of two intervals); it covers
 * the run when it is final or its sampler sampled past the run's end. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cJSON.h>

#include "gpustat/gpustat_int.h"

#define MAX_FILES 256
#define MAX_FILE_BYTES (4u << 20)
#define MAX_EMBEDDED 32
#define MAX_WAIT_S 300.0

void sm_gpu_usage_init(sm_gpu_usage *u) {
  memset(u, 0, sizeof(*u));
  u->sm_util = NAN;
  u->gpu_mem_mib = NAN;
}

void sm_gpu_usage_release(sm_gpu_usage *u) {
  sm_free(u->gpu_model);
  sm_free(u->driver_version);
  sm_free(u->json);
  sm_free(u->signals);
  sm_gpu_usage_init(u);
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Adds s to a comma-separated list of distinct values (at most 256
 * bytes). */
static int add_distinct(char **list, const char *s) {
  size_t n, l;
  char *p;

  if (s == NULL || s[0] == '\0' || strcmp(s, "unknown") == 0)
    return 0;
  l = strlen(s);
  if (*list != NULL) {
    const char *q = *list;
    while (*q) {
      size_t k = strcspn(q, ",");
      if (k == l && strncmp(q, s, l) == 0)
        return 0;
      q += k;
      if (*q == ',')
        q++;
    }
  }
  n = *list ? strlen(*list) : 0;
  if (n + l + 2 > 256)
    return 0;
  p = sm_realloc(*list, n + l + 2);
  if (p == NULL)
    return SM_ENOMEM;
  if (n)
    p[n++] = ',';
  memcpy(p + n, s, l + 1);
  *list = p;
  return 0;
}

static int add_line(char **text, const char *line) {
  size_t n = *text ? strlen(*text) : 0, l = strlen(line);
  char *p;
  if (n + l + 2 > 64 * 1024)
    return 0;
  p = sm_realloc(*text, n + l + 2);
  if (p == NULL)
    return SM_ENOMEM;
  memcpy(p + n, line, l);
  p[n + l] = '\n';
  p[n + l + 1] = '\0';
  *text = p;
  return 0;
}

/* One parsed file that belongs to the run. */
typedef struct ufile {
  cJSON *o;        /* the file */
  double weight;   /* steady samples x GPUs */
  double sm;       /* steady mean */
  double peak;     /* peak memory */
  int complete;    /* covers the run */
  double wait_end; /* when to stop waiting for it */
} ufile;

static int by_first(const void *a, const void *b) {
  double x = num(((const ufile *)a)->o, "first_sample");
  double y = num(((const ufile *)b)->o, "first_sample");
  return x < y ? -1 : x > y;
}

/* Parses and checks one file; NULL (with a message in err) if it is not
 * a result file of this job. */
static cJSON *load(const char *path, uint32_t job, sm_err *err) {
  char *text = NULL;
  size_t len = 0;
  cJSON *o;
  const cJSON *jid;

  if (sm_file_read_all(path, MAX_FILE_BYTES, &text, &len, err) != 0)
    return NULL;
  o = cJSON_ParseWithLength(text, len);
  sm_free(text);
  if (o == NULL || !cJSON_IsObject(o)) {
    cJSON_Delete(o);
    sm_err_set(err, SM_EPARSE, "%s: not a JSON object", path);
    return NULL;
  }
  jid = cJSON_GetObjectItemCaseSensitive(o, "job_id");
  if (str(o, "format") == NULL || strcmp(str(o, "format"), SM__GPUSTAT_FORMAT))
    sm_err_set(err, SM_EPARSE, "%s: not a %s file", path, SM__GPUSTAT_FORMAT);
  else if (!cJSON_IsNumber(jid) || jid->valuedouble != (double)job)
    sm_err_set(err, SM_EPARSE, "%s: not about job %u", path, (unsigned)job);
  else if (!isfinite(num(o, "first_sample")) ||
           !isfinite(num(o, "last_sample")) ||
           !isfinite(num(o, "sampled_until")) ||
           !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "summary")))
    sm_err_set(err, SM_EPARSE, "%s: sample times or summary missing", path);
  else
    return o;
  cJSON_Delete(o);
  return NULL;
}

int sm_gpu_usage_read(const char *dir, uint32_t job, double start, double end,
                      double now, sm_gpu_usage *u, sm_err *err) {
  char jdir[4200], path[4500];
  DIR *d;
  struct dirent *e;
  ufile files[MAX_FILES];
  int n = 0, rc = 0, busy = 0, emb = 0;
  double wsum = 0, wsm = 0;
  sm_buf b;
  sm_jw w;

  sm_gpu_usage_release(u);
  snprintf(jdir, sizeof(jdir), "%s/%u", dir, (unsigned)job);
  d = opendir(jdir);
  if (d == NULL)
    return 0; /* nothing sampled this job */
  while ((e = readdir(d)) != NULL && n < MAX_FILES) {
    size_t l = strlen(e->d_name);
    cJSON *o;
    double first, last, until, iv, fl, slack;
    const cJSON *sum, *smv;
    if (e->d_name[0] == '.' || l < 6 || strcmp(e->d_name + l - 5, ".json"))
      continue;
    snprintf(path, sizeof(path), "%s/%s", jdir, e->d_name);
    o = load(path, job, err);
    if (o == NULL)
      continue;
    first = num(o, "first_sample");
    last = num(o, "last_sample");
    until = num(o, "sampled_until");
    iv = num(o, "interval_s");
    fl = num(o, "flush_s");
    if (!(iv > 0 && iv < 86400))
      iv = 1;
    if (!(fl > 0 && fl < 86400))
      fl = 10;
    slack = 2 * iv + 1;
    if (last < start - slack || (end > 0 && first > end + slack)) {
      cJSON_Delete(o);
      continue; /* another run of the job */
    }
    sum = cJSON_GetObjectItemCaseSensitive(o, "summary");
    smv = cJSON_GetObjectItemCaseSensitive(sum, "sm_util");
    files[n].o = o;
    files[n].sm = num(smv, "mean");
    files[n].peak = num(sum, "gpu_mem_mib");
    {
      const cJSON *devs = cJSON_GetObjectItemCaseSensitive(o, "devices");
      int g = cJSON_IsArray(devs) ? cJSON_GetArraySize(devs) : 0;
      double ns = num(sum, "steady_samples");
      files[n].weight = (g > 0 ? g : 1) * (ns > 0 ? ns : 1);
    }
    files[n].complete =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "final")) ||
        until >= end + 1;
    files[n].wait_end = end + fmin(MAX_WAIT_S, 2 * fl + 2 * iv + 5);
    if (!files[n].complete && now < files[n].wait_end)
      busy = 1;
    n++;
  }
  closedir(d);
  if (busy) {
    for (int i = 0; i < n; i++)
      cJSON_Delete(files[i].o);
    return SM_EBUSY;
  }
  if (n == 0)
    return 0;
  qsort(files, (size_t)n, sizeof(files[0]), by_first);
  sm_buf_init(&b, (size_t)8 << 20);
  sm_jw_init(&w, &b);
  for (int i = 0; i < n && rc == 0; i++) {
    const cJSON *errs = cJSON_GetObjectItemCaseSensitive(files[i].o, "errors"),
                *x, *devs;
    if (isfinite(files[i].sm) && files[i].sm >= 0 && files[i].sm <= 100) {
      wsum += files[i].weight;
      wsm += files[i].weight * files[i].sm;
    }
    if (isfinite(files[i].peak) && files[i].peak >= 0 &&
        !(files[i].peak <= u->gpu_mem_mib))
      u->gpu_mem_mib = files[i].peak;
    if (!files[i].complete)
      u->partial = 1;
    rc = add_distinct(&u->driver_version, str(files[i].o, "driver_version"));
    devs = cJSON_GetObjectItemCaseSensitive(files[i].o, "devices");
    cJSON_ArrayForEach(x, devs) if (rc == 0) rc =
        add_distinct(&u->gpu_model, str(x, "name"));
    cJSON_ArrayForEach(x, errs) {
      const char *line = str(x, "line");
      if (rc != 0 || line == NULL || str(x, "category") == NULL ||
          strcmp(str(x, "category"), "infrastructure") != 0)
        continue;
      if (u->signals == NULL && str(files[i].o, "node"))
        snprintf(u->signal_node, sizeof(u->signal_node), "%s",
                 str(files[i].o, "node"));
      rc = add_line(&u->signals, line);
    }
  }
  u->found = 1;
  u->nodes = n;
  snprintf(u->source, sizeof(u->source), "nvml");
  u->sm_util = wsum > 0 ? round(wsm / wsum * 10) / 10 : NAN;
  if (isfinite(u->gpu_mem_mib))
    u->gpu_mem_mib = round(u->gpu_mem_mib);
  /* The outcome object: the merged figures and each node's file. */
  sm_jw_obj_begin(&w);
  sm_jw_kv_str(&w, "source", "nvml");
  sm_jw_kv_num(&w, "sm_util", u->sm_util);
  sm_jw_kv_num(&w, "gpu_mem_mib", u->gpu_mem_mib);
  sm_jw_kv_str(&w, "gpu_model", u->gpu_model);
  sm_jw_kv_str(&w, "driver_version", u->driver_version);
  sm_jw_kv_bool(&w, "partial", u->partial);
  sm_jw_key(&w, "nodes");
  sm_jw_arr_begin(&w);
  for (int i = 0; i < n; i++) {
    char *txt;
    if (emb >= MAX_EMBEDDED)
      break;
    txt = cJSON_PrintUnformatted(files[i].o);
    if (txt != NULL) {
      sm_jw_raw(&w, txt);
      emb++;
      cJSON_free(txt);
    }
  }
  sm_jw_arr_end(&w);
  sm_jw_kv_int(&w, "nodes_omitted", n - emb);
  sm_jw_obj_end(&w);
  for (int i = 0; i < n; i++)
    cJSON_Delete(files[i].o);
  if (rc == 0 && sm_jw_finish(&w) == 0)
    u->json = sm_buf_take(&b);
  sm_buf_release(&b);
  if (rc != 0) {
    sm_gpu_usage_release(u);
    return sm_err_set(err, SM_ENOMEM, "gpustat: out of memory");
  }
  return 0;
}

/* ==== sacct ==== */

/* The value of key in a TRES list "a=1,gres/gpumem=2G,...", as a number
 * (memory suffixes K, M, G, T, P are powers of 1024 bytes).  Returns 1
 * with *v, 0 when absent, -1 malformed. */
static int tres_value(const char *s, size_t n, const char *key, double *v) {
  size_t kl = strlen(key), i = 0;

  while (i < n) {
    size_t st = i, eq, en;
    while (i < n && s[i] != ',')
      i++;
    en = i++;
    for (eq = st; eq < en && s[eq] != '='; eq++)
      ;
    if (eq == en || eq - st != kl || strncmp(s + st, key, kl) != 0)
      continue;
    {
      char buf[48], *endp;
      size_t vl = en - eq - 1;
      double x, mul = 1;
      if (vl == 0 || vl >= sizeof(buf))
        return -1;
      memcpy(buf, s + eq + 1, vl);
      buf[vl] = '\0';
      if (strchr("KMGTP", buf[vl - 1]) != NULL) {
        mul = pow(1024.0, (double)(strchr("KMGTP", buf[vl - 1]) - "KMGTP" + 1));
        buf[--vl] = '\0';
      }
      errno = 0;
      x = strtod(buf, &endp);
      if (vl == 0 || *endp != '\0' || errno != 0 || !isfinite(x) || x < 0)
        return -1;
      *v = x * mul;
      return 1;
    }
  }
  return 0;
}

int sm_gpu_usage_sacct(const char *text, size_t len, uint32_t job,
                       sm_gpu_usage *u, sm_err *err) {
  size_t i = 0;
  int lines = 0, best = -1;
  double best_mem = -1, best_util = NAN, best_gpus = 0;
  char step[64] = "";

  sm_gpu_usage_release(u);
  while (i < len) {
    size_t s = i, e, f[4];
    int nf = 0, lno = lines++;
    double mem = NAN, util = NAN, gpus = 0, v;
    int r;
    while (i < len && text[i] != '\n')
      i++;
    e = i++;
    if (e > s && text[e - 1] == '\r')
      e--;
    if (e == s)
      continue;
    for (size_t k = s; k < e; k++) {
      if (text[k] == '\0')
        return sm_err_set(err, SM_EPARSE, "sacct: binary output");
      if (text[k] == '|' && nf < 4)
        f[nf++] = k;
    }
    if (nf < 3)
      return sm_err_set(err, SM_EPARSE,
                        "sacct: line %d: expected JobID|AllocTRES|"
                        "TRESUsageInAve|TRESUsageInMax",
                        lno + 1);
    /* JobID must start with the job's number. */
    {
      char idbuf[16];
      int il = snprintf(idbuf, sizeof(idbuf), "%u", (unsigned)job);
      char after;
      if (f[0] - s < (size_t)il || strncmp(text + s, idbuf, (size_t)il) != 0)
        continue;
      after = f[0] - s == (size_t)il ? '|' : text[s + (size_t)il];
      if (after != '|' && after != '.' && after != '_' && after != '+')
        continue; /* 12 is not 123 */
    }
    r = tres_value(text + f[0] + 1, f[1] - f[0] - 1, "gres/gpu", &v);
    if (r > 0)
      gpus = v;
    r = tres_value(text + f[1] + 1, f[2] - f[1] - 1, "gres/gpuutil", &v);
    if (r < 0)
      return sm_err_set(err, SM_EPARSE, "sacct: line %d: bad gres/gpuutil",
                        lno + 1);
    if (r > 0)
      util = v;
    {
      size_t me = nf >= 4 ? f[3] : e;
      r = tres_value(text + f[2] + 1, me - f[2] - 1, "gres/gpumem", &v);
    }
    if (r < 0)
      return sm_err_set(err, SM_EPARSE, "sacct: line %d: bad gres/gpumem",
                        lno + 1);
    if (r > 0)
      mem = v;
    /* Slurm writes a huge number for a counter it could not read. */
    if (isfinite(mem) && mem >= 1.8e19)
      mem = NAN;
    if (isfinite(util) && util >= 1e9)
      util = NAN;
    if (isfinite(mem) && mem > best_mem) {
      best_mem = mem;
      best_util = util;
      best_gpus = gpus;
      best = lno;
      snprintf(step, sizeof(step), "%.*s", (int)SM_MIN(f[0] - s, 60), text + s);
    }
  }
  if (best < 0 || !(best_mem > 0))
    return 0; /* the cluster does not report GPU usage */
  u->found = 1;
  snprintf(u->source, sizeof(u->source), "sacct");
  u->gpu_mem_mib = round(best_mem / 1048576.0);
  if (isfinite(best_util)) {
    if (best_util > 100 && best_gpus > 1)
      best_util /= best_gpus;
    u->sm_util = round(fmin(best_util, 100) * 10) / 10;
  }
  u->nodes = 0;
  {
    sm_buf b;
    sm_jw w;
    sm_buf_init(&b, 1 << 16);
    sm_jw_init(&w, &b);
    sm_jw_obj_begin(&w);
    sm_jw_kv_str(&w, "source", "sacct");
    sm_jw_kv_str(&w, "step", step);
    sm_jw_kv_num(&w, "sm_util", u->sm_util);
    sm_jw_kv_num(&w, "gpu_mem_mib", u->gpu_mem_mib);
    sm_jw_kv_num(&w, "step_gpus", best_gpus > 0 ? best_gpus : NAN);
    sm_jw_obj_end(&w);
    if (sm_jw_finish(&w) == 0)
      u->json = sm_buf_take(&b);
    sm_buf_release(&b);
  }
  return 0;
}
