/* jobs.c - Slurm jobs as plain values: state names, the end states, the
 * GPU part of a TRES request, and freeing a job list.  Shared by every
 * backend (libslurm, the fake cluster of the tests). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm_int.h"

static const char *const state_names[SM_SJ__COUNT] = {
    "PENDING",   "RUNNING",   "SUSPENDED", "COMPLETED",
    "CANCELLED", "FAILED",    "TIMEOUT",   "NODE_FAIL",
    "PREEMPTED", "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};

const char *sm_slurm_state_name(int state) {
  return state >= 0 && state < SM_SJ__COUNT ? state_names[state] : "UNKNOWN";
}

int sm_slurm_state_ended(int state) {
  return state >= SM_SJ_COMPLETED && state < SM_SJ__COUNT;
}

void sm_slurm_job_release(sm_slurm_job *j) {
  sm_free(j->user);
  sm_free(j->name);
  sm_free(j->partition);
  sm_free(j->work_dir);
  sm_free(j->std_out);
  sm_free(j->std_err);
  sm_free(j->command);
  sm_free(j->comment);
  sm_free(j->gpu_type);
  for (int k = 0; k < j->n_nodes; k++)
    sm_free(j->nodes[k]);
  sm_free(j->nodes);
  memset(j, 0, sizeof(*j));
}

void sm_slurm_jobs_free(sm_slurm_job *jobs, int n) {
  if (jobs == NULL)
    return;
  for (int i = 0; i < n; i++)
    sm_slurm_job_release(&jobs[i]);
  sm_free(jobs);
}

/* One entry "gres:gpu:a100:2", "gres/gpu=4", "gpu:2", "gpu".  Returns 1
 * with count/type for a GPU entry, 0 for another resource, -1 when
 * malformed. */
static int gpu_entry(const char *s, size_t n, int *count, char *type,
                     size_t cap) {
  const char *p = s, *end = s + n;
  const char *fields[3];
  size_t flen[3];
  int nf = 0;

  if (n >= 5 && (strncmp(p, "gres:", 5) == 0 || strncmp(p, "gres/", 5) == 0))
    p += 5;
  if ((size_t)(end - p) < 3 || strncmp(p, "gpu", 3) != 0)
    return 0;
  p += 3;
  if (p < end && *p != ':' && *p != '=')
    return 0; /* "gpus_per_..." or another name starting with gpu */
  /* The rest: [:type][:count] or =count. */
  while (p < end && nf < 3) {
    const char *q;
    p++;
    q = p;
    while (q < end && *q != ':' && *q != '=')
      q++;
    fields[nf] = p;
    flen[nf++] = (size_t)(q - p);
    p = q;
  }
  if (p < end)
    return -1;
  *count = 1;
  if (type && cap)
    type[0] = '\0';
  if (nf == 0)
    return 1;
  {
    const char *c = fields[nf - 1];
    size_t cl = flen[nf - 1];
    long v = 0;
    int digits = cl > 0;
    for (size_t i = 0; i < cl; i++)
      if (!isdigit((unsigned char)c[i]))
        digits = 0;
    if (digits) {
      if (cl > 6)
        return -1;
      for (size_t i = 0; i < cl; i++)
        v = v * 10 + (c[i] - '0');
      *count = (int)v;
      nf--;
    }
    if (nf > 1)
      return -1;
    if (nf == 1) {
      if (flen[0] == 0)
        return -1;
      if (type && cap) {
        size_t k = flen[0] < cap - 1 ? flen[0] : cap - 1;
        for (size_t i = 0; i < k; i++)
          type[i] = (char)tolower((unsigned char)fields[0][i]);
        type[k] = '\0';
      }
    }
  }
  return 1;
}

int sm_slurm_parse_gpus(const char *tres, int *count, char *type, size_t cap) {
  const char *p = tres;

  *count = 0;
  if (type && cap)
    type[0] = '\0';
  while (p && *p) {
    const char *e = strpbrk(p, ",;");
    size_t n = e ? (size_t)(e - p) : strlen(p);
    int c = 0, r = gpu_entry(p, n, &c, type, cap);
    if (r < 0)
      return SM_EPARSE;
    if (r > 0)
      *count += c;
    p = e ? e + 1 : NULL;
  }
  return 0;
}
