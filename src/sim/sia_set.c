/* sia_set.c - a set of workload files read as one trace.
 *
 * Sia's evaluation reports its figures over the 8 or 10 workload files of
 * a trace (Philly, Helios/Saturn, its own), each replayed on its own
 * cluster.  The set becomes one sm_sim_trace whose jobs say which file
 * they came from; the Sia policies group them again. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "schedmate/sm_sia.h"
#include "sim/sia_milp_int.h"
#include "sim/sim_int.h"

#define MAX_FILES 1000

int sm_sia_have_solver(void) {
  return sm__sia_have_cbc();
}

/* Natural order: runs of digits compare as numbers. */
static int natcmp(const char *a, const char *b) {
  while (*a && *b) {
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
      char *ea, *eb;
      unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
      if (x != y)
        return x < y ? -1 : 1;
      a = ea;
      b = eb;
      continue;
    }
    if (*a != *b)
      return (unsigned char)*a - (unsigned char)*b;
    a++;
    b++;
  }
  return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_name(const void *a, const void *b) {
  return natcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_submit(const void *a, const void *b) {
  const sm_sim_job *x = a, *y = b;
  if (x->submit != y->submit)
    return x->submit < y->submit ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const char *dupa(sm_arena *a, const char *s) {
  return sm_arena_strdup(a, s ? s : "");
}

/* Appends the jobs of one file to the set. */
static int merge(sm_sim_trace *set, const sm_sim_trace *t, const char *wl,
                 sm_err *err) {
  for (size_t i = 0; i < t->n; i++) {
    sm_sim_job j = t->jobs[i];
    sm_sim_attr *at;
    char id[256];
    at = sm_arena_alloc(&set->arena,
                        (size_t)(j.nattrs + 1) * sizeof(sm_sim_attr));
    if (at == NULL)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", set->name);
    for (int k = 0; k < j.nattrs; k++) {
      at[k].key = dupa(&set->arena, t->jobs[i].attrs[k].key);
      at[k].value = dupa(&set->arena, t->jobs[i].attrs[k].value);
      if (at[k].key == NULL || at[k].value == NULL)
        return sm_err_set(err, SM_ENOMEM, "%s: out of memory", set->name);
    }
    at[j.nattrs].key = "workload";
    at[j.nattrs].value = dupa(&set->arena, wl);
    if ((size_t)snprintf(id, sizeof(id), "%s/%s", wl, j.id) >= sizeof(id))
      return sm_err_set(err, SM_ELIMIT, "%s: job id %s/%s is too long",
                        set->name, wl, j.id);
    j.attrs = at;
    j.nattrs++;
    j.id = dupa(&set->arena, id);
    j.user = dupa(&set->arena, j.user);
    j.name = dupa(&set->arena, j.name);
    j.vc_name = dupa(&set->arena, j.vc_name);
    j.gpu_type = dupa(&set->arena, j.gpu_type);
    if (at[j.nattrs - 1].value == NULL || j.id == NULL || j.user == NULL ||
        j.name == NULL || j.vc_name == NULL || j.gpu_type == NULL)
      return sm_err_set(err, SM_ENOMEM, "%s: out of memory", set->name);
    j.idx = (uint32_t)set->n; /* keeps file order on ties */
    if (sm__trace_push(set, &j, (size_t)20000000, err) != 0)
      return SM_ELIMIT;
  }
  return 0;
}

int sm_sim_trace_load_set(const char *path, const sm_sim_load_opts *o,
                          sm_sim_trace **out, sm_err *err) {
  struct stat st;
  DIR *d;
  struct dirent *e;
  char *names[MAX_FILES];
  int n = 0, rc = 0, format = -1;
  sm_sim_trace *set = NULL;
  char title[4200];

  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return sm_sim_trace_load(path, o, out, err);
  d = opendir(path);
  if (d == NULL)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", path,
                      strerror(errno));
  while ((e = readdir(d)) != NULL) {
    size_t L = strlen(e->d_name);
    int csv = L > 4 && strcmp(e->d_name + L - 4, ".csv") == 0;
    int gz = L > 7 && strcmp(e->d_name + L - 7, ".csv.gz") == 0;
    if (e->d_name[0] == '.' || (!csv && !gz))
      continue;
    if (n == MAX_FILES) {
      rc = sm_err_set(err, SM_ELIMIT, "%s: more than %d workload files", path,
                      MAX_FILES);
      break;
    }
    if ((names[n] = sm_strdup(e->d_name)) == NULL) {
      rc = sm_err_set(err, SM_ENOMEM, "out of memory");
      break;
    }
    n++;
  }
  closedir(d);
  if (rc == 0 && n == 0)
    rc = sm_err_set(err, SM_ENOENT,
                    "%s: a directory without .csv files (a workload set "
                    "holds one trace file per workload)",
                    path);
  if (rc != 0)
    goto out;
  qsort(names, (size_t)n, sizeof(char *), cmp_name);
  snprintf(title, sizeof(title), "%s", path);
  for (int i = 0; i < n && rc == 0; i++) {
    char file[4400], wl[256];
    sm_sim_trace *t = NULL;
    size_t L;
    snprintf(file, sizeof(file), "%s/%s", path, names[i]);
    rc = sm_sim_trace_load(file, o, &t, err);
    if (rc != 0)
      break;
    if (set == NULL) {
      format = t->format;
      set = sm__trace_new(title, format);
      if (set == NULL) {
        sm_sim_trace_free(t);
        rc = sm_err_set(err, SM_ENOMEM, "out of memory");
        break;
      }
      for (size_t k = 0; k < t->notes.n; k++)
        sm__notes_add(&set->notes, "%s: %s", names[i], t->notes.v[k]);
    } else if (t->format != format) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s: layout %s, but %s has layout %s: a workload set "
                      "holds files of one layout",
                      file, sm_sim_format_name(t->format), names[0],
                      sm_sim_format_name(format));
      sm_sim_trace_free(t);
      break;
    }
    snprintf(wl, sizeof(wl), "%s", names[i]);
    L = strlen(wl);
    if (L > 7 && strcmp(wl + L - 7, ".csv.gz") == 0)
      wl[L - 7] = '\0';
    else if (L > 4)
      wl[L - 4] = '\0';
    rc = merge(set, t, wl, err);
    sm_sim_trace_free(t);
  }
  if (rc == 0) {
    qsort(set->jobs, set->n, sizeof(sm_sim_job), by_submit);
    sm__trace_finish(set);
    sm__notes_add(&set->notes,
                  "workload set: %d files (%s ... %s), %zu jobs; each keeps "
                  "its file's submission times (every file starts at 0); "
                  "notes of the first file only",
                  n, names[0], names[n - 1], set->n);
    *out = set;
    set = NULL;
  }
out:
  sm_sim_trace_free(set);
  for (int i = 0; i < n; i++)
    sm_free(names[i]);
  return rc;
}
