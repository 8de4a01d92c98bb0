/* fake_nvml.c - a stand-in libnvidia-ml.so.1 for tests on machines
 * without a GPU.  It implements the NVML entry points the sampler uses and
 * replays a scripted series per device; the tests load it through
 * LD_LIBRARY_PATH (or by path).  Written for SchedMate's tests from the
 * public NVML API reference; no NVIDIA code or header.
 *
 * The script is the file named by $FAKE_NVML_SCRIPT (without it,
 * nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED, as on a node whose
 * driver is not loaded).  One directive a line, '#' starts a comment:
 *
 *   driver VERSION            nvmlSystemGetDriverVersion
 *   init_error CODE           nvmlInit returns CODE
 *   layout 24|32              bytes per _v3 process entry (some drivers
 *                             write 32) [24]
 *   procutil off              no per-process utilisation (NOT_SUPPORTED)
 *   procdir DIR               live processes: each file DIR/PID of a
 *                             running process holds lines "DEV MIB SM"
 *   device IDX TOTAL_MIB UUID NAME...
 *   row IDX SM BW USED_MIB POWER_W [PID:MIB[:SM]]... [!CALL=CODE]...
 *   row IDX lost              every call fails: NVML_ERROR_GPU_IS_LOST
 *   repeat N                  the last row N more times
 *
 * A device moves to its next row at each nvmlDeviceGetUtilizationRates
 * call (one sampling round); after its last row the last one repeats.
 * SM, BW, USED, POWER: a number, "-" (NOT_SUPPORTED) or, for SM and USED,
 * "auto" (the processes' SM summed and capped at 100 / their MiB summed).
 * A process MIB of "-" is NVML_VALUE_NOT_AVAILABLE.  !CALL=CODE makes one
 * call of that round fail: util, mem, power, procs, putil. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define EXPORT __attribute__((visibility("default")))
#define MAXDEV 64
#define MAXP 64

enum {
  OK = 0,
  E_INVAL = 2,
  E_NOTSUP = 3,
  E_NOTFOUND = 6,
  E_SIZE = 7,
  E_NODRV = 9,
  E_LOST = 15,
  E_UNKNOWN = 999
};
enum { C_UTIL, C_MEM, C_POWER, C_PROCS, C_PUTIL, NCALL };
static const char *const call_names[NCALL] = {"util", "mem", "power", "procs",
                                              "putil"};

typedef struct proc {
  unsigned pid;
  long long mib; /* -1: not available */
  int sm;
} proc;

typedef struct row {
  int lost;
  double v[4]; /* sm, bw, used, power; -1 NOT_SUPPORTED, -2 auto */
  proc p[MAXP];
  int np;
  int fail[NCALL]; /* 0 or the code */
} row;

typedef struct dev {
  int used;
  unsigned idx;
  long long total_mib;
  char uuid[96], name[96];
  row *rows;
  int nrows, cap;
  int cur, next; /* row in use, next row */
} dev;

static dev devs[MAXDEV];
static int ndev;
static char driver[80] = "fake";
static char procdir[4096];
static int init_error, layout = 24, procutil = 1, loaded;

static long long now_us(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

static double field(const char *t) {
  if (strcmp(t, "-") == 0)
    return -1;
  if (strcmp(t, "auto") == 0)
    return -2;
  return atof(t);
}

static dev *dev_at(unsigned idx) {
  for (int i = 0; i < ndev; i++)
    if (devs[i].idx == idx)
      return &devs[i];
  return NULL;
}

static row *add_row(dev *d) {
  if (d->nrows == d->cap) {
    d->cap = d->cap ? d->cap * 2 : 16;
    d->rows = realloc(d->rows, (size_t)d->cap * sizeof(row));
    if (d->rows == NULL)
      abort();
  }
  memset(&d->rows[d->nrows], 0, sizeof(row));
  return &d->rows[d->nrows++];
}

static int load_script(void) {
  const char *path = getenv("FAKE_NVML_SCRIPT");
  char line[8192];
  FILE *f;
  dev *last = NULL;
  int lno = 0;

  if (path == NULL)
    return E_NODRV;
  f = fopen(path, "r");
  if (f == NULL) {
    fprintf(stderr, "fake nvml: %s: %s\n", path, strerror(errno));
    return E_UNKNOWN;
  }
  while (fgets(line, sizeof(line), f)) {
    char *tok[64], *save = NULL, *p;
    int nt = 0;
    lno++;
    if ((p = strchr(line, '#')) != NULL)
      *p = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "device ", 7) == 0) {
      /* device IDX TOTAL UUID NAME... (the name keeps its blanks) */
      unsigned idx;
      long long total;
      char uuid[96];
      int off = 0;
      dev *d;
      if (sscanf(line + 7, "%u %lld %95s %n", &idx, &total, uuid, &off) < 3 ||
          ndev >= MAXDEV) {
        fprintf(stderr, "fake nvml: %s:%d: bad device line\n", path, lno);
        fclose(f);
        return E_UNKNOWN;
      }
      d = &devs[ndev++];
      memset(d, 0, sizeof(*d));
      d->used = 1;
      d->idx = idx;
      d->total_mib = total;
      snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
      snprintf(d->name, sizeof(d->name), "%s", line + 7 + off);
      continue;
    }
    for (p = strtok_r(line, " \t", &save); p && nt < 64;
         p = strtok_r(NULL, " \t", &save))
      tok[nt++] = p;
    if (nt == 0)
      continue;
    if (strcmp(tok[0], "driver") == 0 && nt == 2) {
      snprintf(driver, sizeof(driver), "%s", tok[1]);
    } else if (strcmp(tok[0], "init_error") == 0 && nt == 2) {
      init_error = atoi(tok[1]);
    } else if (strcmp(tok[0], "layout") == 0 && nt == 2) {
      layout = atoi(tok[1]) == 32 ? 32 : 24;
    } else if (strcmp(tok[0], "procutil") == 0 && nt == 2) {
      procutil = strcmp(tok[1], "off") != 0;
    } else if (strcmp(tok[0], "procdir") == 0 && nt == 2) {
      snprintf(procdir, sizeof(procdir), "%s", tok[1]);
    } else if (strcmp(tok[0], "repeat") == 0 && nt == 2 && last &&
               last->nrows > 0) {
      int n = atoi(tok[1]);
      for (int i = 0; i < n; i++) {
        row r = last->rows[last->nrows - 1];
        *add_row(last) = r;
      }
    } else if (strcmp(tok[0], "row") == 0 && nt >= 3) {
      dev *d = dev_at((unsigned)atoi(tok[1]));
      row *r;
      if (d == NULL) {
        fprintf(stderr, "fake nvml: %s:%d: no device %s\n", path, lno, tok[1]);
        fclose(f);
        return E_UNKNOWN;
      }
      r = add_row(d);
      last = d;
      if (strcmp(tok[2], "lost") == 0) {
        r->lost = 1;
        continue;
      }
      if (nt < 6) {
        fprintf(stderr, "fake nvml: %s:%d: row needs SM BW USED POWER\n", path,
                lno);
        fclose(f);
        return E_UNKNOWN;
      }
      for (int k = 0; k < 4; k++)
        r->v[k] = field(tok[2 + k]);
      for (int k = 6; k < nt; k++) {
        if (tok[k][0] == '!') {
          char *eq = strchr(tok[k], '=');
          if (eq == NULL)
            continue;
          *eq = '\0';
          for (int c = 0; c < NCALL; c++)
            if (strcmp(tok[k] + 1, call_names[c]) == 0)
              r->fail[c] = atoi(eq + 1);
          continue;
        }
        if (r->np < MAXP) {
          proc *q = &r->p[r->np++];
          char *c1 = strchr(tok[k], ':'), *c2;
          q->pid = (unsigned)strtoul(tok[k], NULL, 10);
          q->mib =
              c1 && strcmp(c1 + 1, "-") != 0 && strncmp(c1 + 1, "-:", 2) != 0
                  ? atoll(c1 + 1)
                  : -1;
          c2 = c1 ? strchr(c1 + 1, ':') : NULL;
          q->sm = c2 ? atoi(c2 + 1) : 0;
        }
      }
    }
  }
  fclose(f);
  return 0;
}

/* The processes on device d now: the row's, then the live ones of
 * procdir. */
static int procs_now(const dev *d, const row *r, proc *out, int cap) {
  int n = 0;
  DIR *dir;
  struct dirent *e;

  for (int i = 0; r && i < r->np && n < cap; i++)
    out[n++] = r->p[i];
  if (procdir[0] == '\0' || (dir = opendir(procdir)) == NULL)
    return n;
  while ((e = readdir(dir)) != NULL && n < cap) {
    char path[4400], line[256];
    unsigned pid = (unsigned)strtoul(e->d_name, NULL, 10);
    FILE *f;
    if (pid == 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
      continue;
    snprintf(path, sizeof(path), "%s/%s", procdir, e->d_name);
    if ((f = fopen(path, "r")) == NULL)
      continue;
    while (fgets(line, sizeof(line), f) && n < cap) {
      unsigned di;
      long long mib;
      int sm;
      if (sscanf(line, "%u %lld %d", &di, &mib, &sm) == 3 && di == d->idx) {
        out[n].pid = pid;
        out[n].mib = mib;
        out[n].sm = sm;
        n++;
      }
    }
    fclose(f);
  }
  closedir(dir);
  return n;
}

static const row *cur_row(const dev *d) {
  if (d->nrows == 0)
    return NULL;
  return &d->rows[d->cur < d->nrows ? d->cur : d->nrows - 1];
}

static int check(const dev *d, int call) {
  const row *r;
  if (!loaded)
    return 1; /* NVML_ERROR_UNINITIALIZED */
  if (d == NULL)
    return E_INVAL;
  r = cur_row(d);
  if (r && r->lost)
    return E_LOST;
  if (r && r->fail[call])
    return r->fail[call];
  return OK;
}

/* ==== Entry points ==== */

EXPORT int nvmlInit_v2(void) {
  int rc;
  if (loaded)
    return OK;
  rc = load_script();
  if (rc != 0)
    return rc;
  if (init_error)
    return init_error;
  loaded = 1;
  return OK;
}

EXPORT int nvmlInit(void) {
  return nvmlInit_v2();
}

EXPORT int nvmlShutdown(void) {
  for (int i = 0; i < ndev; i++)
    free(devs[i].rows);
  ndev = 0;
  loaded = 0;
  return OK;
}

EXPORT const char *nvmlErrorString(int code) {
  switch (code) {
  case OK:
    return "Success";
  case E_INVAL:
    return "Invalid Argument";
  case E_NOTSUP:
    return "Not Supported";
  case E_NOTFOUND:
    return "Not Found";
  case E_SIZE:
    return "Insufficient Size";
  case E_NODRV:
    return "Driver Not Loaded";
  case E_LOST:
    return "GPU is lost";
  default:
    return "Unknown Error";
  }
}

EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned len) {
  if (!loaded)
    return 1;
  if (v == NULL || len == 0)
    return E_INVAL;
  snprintf(v, len, "%s", driver);
  return OK;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned *n) {
  if (!loaded)
    return 1;
  *n = (unsigned)ndev;
  return OK;
}

EXPORT int nvmlDeviceGetCount(unsigned *n) {
  return nvmlDeviceGetCount_v2(n);
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
  if (!loaded)
    return 1;
  if (i >= (unsigned)ndev || h == NULL)
    return E_INVAL;
  *h = &devs[i];
  return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex(unsigned i, void **h) {
  return nvmlDeviceGetHandleByIndex_v2(i, h);
}

EXPORT int nvmlDeviceGetName(void *h, char *name, unsigned len) {
  const dev *d = h;
  if (!loaded)
    return 1;
  snprintf(name, len, "%s", d->name);
  return OK;
}

EXPORT int nvmlDeviceGetUUID(void *h, char *uuid, unsigned len) {
  const dev *d = h;
  if (!loaded)
    return 1;
  snprintf(uuid, len, "%s", d->uuid);
  return OK;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *h, unsigned *util) {
  dev *d = h;
  const row *r;
  int rc;
  proc ps[MAXP * 4];
  if (!loaded)
    return 1;
  /* A new round. */
  d->cur = d->next < d->nrows ? d->next : d->nrows - 1;
  if (d->cur < 0)
    d->cur = 0;
  d->next++;
  rc = check(d, C_UTIL);
  if (rc)
    return rc;
  r = cur_row(d);
  if (r == NULL || r->v[0] == -1 || r->v[1] == -1)
    return E_NOTSUP;
  if (r->v[0] == -2) {
    int n = procs_now(d, r, ps, MAXP * 4), s = 0;
    for (int i = 0; i < n; i++)
      s += ps[i].sm;
    util[0] = (unsigned)(s > 100 ? 100 : s);
  } else {
    util[0] = (unsigned)r->v[0];
  }
  util[1] = (unsigned)r->v[1];
  return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *h, unsigned long long *m) {
  dev *d = h;
  const row *r;
  int rc = check(d, C_MEM);
  proc ps[MAXP * 4];
  if (rc)
    return rc;
  r = cur_row(d);
  m[0] = (unsigned long long)d->total_mib << 20;
  if (r == NULL || r->v[2] == -1)
    return E_NOTSUP;
  if (r->v[2] == -2) {
    int n = procs_now(d, r, ps, MAXP * 4);
    long long s = 0;
    for (int i = 0; i < n; i++)
      s += ps[i].mib > 0 ? ps[i].mib : 0;
    m[2] = (unsigned long long)s << 20;
  } else {
    m[2] = (unsigned long long)(r->v[2] * 1048576.0);
  }
  m[1] = m[0] > m[2] ? m[0] - m[2] : 0;
  return OK;
}

EXPORT int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) {
  dev *d = h;
  const row *r;
  int rc = check(d, C_POWER);
  if (rc)
    return rc;
  r = cur_row(d);
  if (r == NULL || r->v[3] < 0)
    return E_NOTSUP;
  *mw = (unsigned)(r->v[3] * 1000);
  return OK;
}

static int running(void *h, unsigned *count, unsigned char *out, int stride) {
  dev *d = h;
  proc ps[MAXP * 4];
  int rc = check(d, C_PROCS), n;
  if (rc)
    return rc;
  n = procs_now(d, cur_row(d), ps, MAXP * 4);
  if (*count < (unsigned)n || (out == NULL && n > 0)) {
    *count = (unsigned)n;
    return E_SIZE;
  }
  for (int i = 0; i < n; i++) {
    unsigned char *e = out + (size_t)i * stride;
    unsigned long long mem =
        ps[i].mib < 0 ? ~0ULL : (unsigned long long)ps[i].mib << 20;
    unsigned none = 0xFFFFFFFFu;
    unsigned long long zero = 0;
    memset(e, 0, (size_t)stride);
    memcpy(e, &ps[i].pid, 4);
    memcpy(e + 8, &mem, 8);
    if (stride >= 24) {
      memcpy(e + 16, &none, 4);
      memcpy(e + 20, &none, 4);
    }
    if (stride >= 32)
      memcpy(e + 24, &zero, 8);
  }
  *count = (unsigned)n;
  return OK;
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *count,
                                                   void *infos) {
  return running(h, count, infos, layout);
}

EXPORT int nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned *count,
                                                   void *infos) {
  return running(h, count, infos, 24);
}

EXPORT int nvmlDeviceGetComputeRunningProcesses(void *h, unsigned *count,
                                                void *infos) {
  return running(h, count, infos, 16);
}

/* nvmlProcessUtilizationSample_t: pid, timeStamp, smUtil, memUtil,
 * encUtil, decUtil. */
typedef struct psample {
  unsigned pid;
  unsigned long long ts;
  unsigned sm, mem, enc, dec;
} psample;

EXPORT int nvmlDeviceGetProcessUtilization(void *h, psample *out,
                                           unsigned *count,
                                           unsigned long long last_seen) {
  dev *d = h;
  proc ps[MAXP * 4];
  int rc = check(d, C_PUTIL), n, k = 0;
  unsigned long long ts = (unsigned long long)now_us();
  if (rc)
    return rc;
  if (!procutil)
    return E_NOTSUP;
  n = procs_now(d, cur_row(d), ps, MAXP * 4);
  for (int i = 0; i < n; i++)
    if (ps[i].sm > 0 && ts > last_seen)
      k++;
  if (k == 0)
    return E_NOTFOUND;
  if (out == NULL || *count < (unsigned)k) {
    *count = (unsigned)k;
    return E_SIZE;
  }
  k = 0;
  for (int i = 0; i < n; i++)
    if (ps[i].sm > 0 && ts > last_seen) {
      memset(&out[k], 0, sizeof(out[k]));
      out[k].pid = ps[i].pid;
      out[k].ts = ts;
      out[k].sm = (unsigned)ps[i].sm;
      k++;
    }
  *count = (unsigned)k;
  return OK;
}
