/* csv.c - reading trace files: a line source over plain or gzip files
 * (through zlib, which reads both) or memory blocks, a CSV field splitter
 * with quotes, and the time parser the loaders share.
 *
 * Memory stays bounded: lines longer than SM__CSV_MAX_LINE are refused,
 * a NUL byte (binary data) is refused, and a compressed memory block is
 * inflated up to a fixed cap. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/sim_int.h"

#define READ_BLOCK 65536
#define MEM_INFLATE_MAX ((size_t)1 << 30)

/* ==== Line source ==== */

static int lsrc_alloc(sm__lsrc *l, const char *name) {
  memset(l, 0, sizeof(*l));
  l->name = name;
  l->cap = SM__CSV_MAX_LINE + READ_BLOCK + 2;
  l->buf = sm_malloc(l->cap);
  return l->buf == NULL ? SM_ENOMEM : 0;
}

int sm__lsrc_open_file(sm__lsrc *l, const char *path, sm_err *err) {
  sm_rfile f;
  int fd, rc;

  rc = sm_rfile_open(&f, path, err);
  if (rc != 0)
    return rc;
  fd = dup(f.fd);
  sm_rfile_close(&f);
  if (fd < 0)
    return sm_err_set(err, sm_err_from_errno(errno), "%s: %s", path,
                      strerror(errno));
  rc = lsrc_alloc(l, path);
  if (rc != 0) {
    close(fd);
    return sm_err_set(err, rc, "%s: out of memory", path);
  }
  l->gz = gzdopen(fd, "rb");
  if (l->gz == NULL) {
    close(fd);
    sm__lsrc_close(l);
    return sm_err_set(err, SM_ENOMEM, "%s: cannot start decompression", path);
  }
  gzbuffer(l->gz, READ_BLOCK);
  return 0;
}

/* Inflates a gzip block into l->inflated, up to MEM_INFLATE_MAX. */
static int inflate_mem(sm__lsrc *l, const char *data, size_t len, sm_err *err) {
  z_stream zs;
  sm_buf out;
  unsigned char tmp[READ_BLOCK];
  int zrc = Z_OK, rc = 0;

  memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 32) != Z_OK)
    return sm_err_set(err, SM_ENOMEM, "%s: cannot start decompression",
                      l->name);
  sm_buf_init(&out, MEM_INFLATE_MAX);
  zs.next_in = (unsigned char *)(uintptr_t)data;
  zs.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
  while (zrc != Z_STREAM_END) {
    zs.next_out = tmp;
    zs.avail_out = sizeof(tmp);
    zrc = inflate(&zs, Z_NO_FLUSH);
    if (zrc != Z_OK && zrc != Z_STREAM_END) {
      rc = sm_err_set(err, SM_ECORRUPT, "%s: corrupt or truncated gzip data",
                      l->name);
      break;
    }
    rc = sm_buf_add(&out, tmp, sizeof(tmp) - zs.avail_out);
    if (rc != 0) {
      sm_err_set(err, rc, "%s: decompressed data too large", l->name);
      break;
    }
    if (zrc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      rc = sm_err_set(err, SM_ECORRUPT, "%s: truncated gzip data", l->name);
      break;
    }
  }
  inflateEnd(&zs);
  if (rc != 0) {
    sm_buf_release(&out);
    return rc;
  }
  l->memlen = out.len;
  l->inflated = sm_buf_take(&out);
  if (l->inflated == NULL) {
    l->inflated = sm_strdup("");
    if (l->inflated == NULL)
      return SM_ENOMEM;
  }
  l->mem = l->inflated;
  return 0;
}

int sm__lsrc_open_mem(sm__lsrc *l, const char *data, size_t len,
                      const char *name, sm_err *err) {
  int rc = lsrc_alloc(l, name);

  if (rc != 0)
    return sm_err_set(err, rc, "%s: out of memory", name);
  if (len >= 2 && (unsigned char)data[0] == 0x1f &&
      (unsigned char)data[1] == 0x8b) {
    rc = inflate_mem(l, data, len, err);
    if (rc != 0) {
      sm__lsrc_close(l);
      return rc;
    }
  } else {
    l->mem = data;
    l->memlen = len;
  }
  return 0;
}

/* Refills the buffer after compacting; sets eof at the end of input. */
static int refill(sm__lsrc *l, sm_err *err) {
  size_t room;

  if (l->pos > 0) {
    memmove(l->buf, l->buf + l->pos, l->len - l->pos);
    l->len -= l->pos;
    l->pos = 0;
  }
  room = l->cap - 1 - l->len;
  if (room > READ_BLOCK)
    room = READ_BLOCK;
  if (l->gz != NULL) {
    int n = gzread(l->gz, l->buf + l->len, (unsigned)room);
    if (n < 0) {
      int zerr;
      const char *msg = gzerror(l->gz, &zerr);
      return sm_err_set(err, zerr == Z_ERRNO ? SM_EIO : SM_ECORRUPT, "%s: %s",
                        l->name, zerr == Z_ERRNO ? strerror(errno) : msg);
    }
    if (n == 0) {
      int zerr;
      gzerror(l->gz, &zerr);
      if (zerr != Z_OK && zerr != Z_STREAM_END)
        return sm_err_set(err, SM_ECORRUPT,
                          "%s: corrupt or truncated gzip data", l->name);
      if (!gzeof(l->gz))
        return sm_err_set(err, SM_ECORRUPT,
                          "%s: corrupt or truncated gzip data", l->name);
      l->eof = 1;
    }
    l->len += (size_t)n;
  } else {
    size_t left = l->memlen;
    if (room > left)
      room = left;
    memcpy(l->buf + l->len, l->mem, room);
    l->mem += room;
    l->memlen -= room;
    l->len += room;
    if (l->memlen == 0)
      l->eof = 1;
  }
  return 0;
}

int sm__lsrc_next(sm__lsrc *l, char **line, size_t *len, sm_err *err) {
  for (;;) {
    char *start = l->buf + l->pos;
    size_t avail = l->len - l->pos;
    char *nl = memchr(start, '\n', avail);
    size_t n;

    if (nl == NULL && !l->eof && avail <= SM__CSV_MAX_LINE) {
      int rc = refill(l, err);
      if (rc != 0)
        return rc;
      continue;
    }
    if (nl == NULL && avail == 0)
      return 0;
    n = nl ? (size_t)(nl - start) : avail;
    l->lineno++;
    if (n > SM__CSV_MAX_LINE)
      return sm_err_set(err, SM_ETOOBIG, "%s:%ld: line longer than %d bytes",
                        l->name, l->lineno, SM__CSV_MAX_LINE);
    if (memchr(start, '\0', n) != NULL)
      return sm_err_set(err, SM_EPARSE,
                        "%s:%ld: binary data (NUL byte), not a CSV trace",
                        l->name, l->lineno);
    l->pos += n + (nl ? 1 : 0);
    if (n > 0 && start[n - 1] == '\r')
      n--;
    start[n] = '\0';
    *line = start;
    *len = n;
    return 1;
  }
}

void sm__lsrc_close(sm__lsrc *l) {
  if (l->gz != NULL)
    gzclose(l->gz);
  sm_free(l->buf);
  sm_free(l->inflated);
  memset(l, 0, sizeof(*l));
}

/* ==== Fields ==== */

static char *trim(char *s) {
  char *e;

  while (*s == ' ' || *s == '\t')
    s++;
  e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    *--e = '\0';
  return s;
}

int sm__csv_split(char *line, char **fields, int max) {
  int n = 0;
  char *p = line;

  for (;;) {
    char *start, *w;

    if (n == max)
      return SM_ETOOBIG;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '"') {
      start = w = ++p;
      for (;;) {
        if (*p == '\0')
          return SM_EPARSE; /* unterminated quote */
        if (*p == '"') {
          if (p[1] == '"') {
            *w++ = '"';
            p += 2;
            continue;
          }
          p++;
          break;
        }
        *w++ = *p++;
      }
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p != ',' && *p != '\0')
        return SM_EPARSE; /* text after a closing quote */
      *w = '\0';
      fields[n++] = start;
      if (*p == '\0')
        return n;
      p++;
    } else {
      char *c = strchr(p, ',');
      start = p;
      if (c != NULL)
        *c = '\0';
      fields[n++] = trim(start);
      if (c == NULL)
        return n;
      p = c + 1;
    }
  }
}

int sm__csv_next(sm__lsrc *l, char **f, int max, int skip_empty, int *nf,
                 sm_err *err) {
  char *line;
  size_t len;
  int rc;

  while ((rc = sm__lsrc_next(l, &line, &len, err)) == 1) {
    if (len == 0 && skip_empty)
      continue;
    *nf = sm__csv_split(line, f, max);
    if (*nf < 0)
      return sm_err_set(err, SM_EPARSE, "%s:%ld: malformed CSV row", l->name,
                        l->lineno);
    return 1;
  }
  return rc;
}

/* ==== Numbers and times ==== */

int sm__parse_num(const char *s, double *out) {
  const char *p = s;
  int digits_seen = 0;

  if (s == NULL)
    return SM_EPARSE;
  /* Plain decimal only: strtod alone would also take hexadecimal
   * ("0x10"), "inf", "nan" and leading blanks. */
  if (*p == '+' || *p == '-')
    p++;
  while (*p >= '0' && *p <= '9') {
    p++;
    digits_seen = 1;
  }
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') {
      p++;
      digits_seen = 1;
    }
  }
  if (!digits_seen)
    return SM_EPARSE;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (*p < '0' || *p > '9')
      return SM_EPARSE;
    while (*p >= '0' && *p <= '9')
      p++;
  }
  if (*p != '\0')
    return SM_EPARSE;
  return sm_parse_double(s, out);
}

static int digits(const char *s, int n, long *out) {
  long v = 0;

  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

int sm__parse_time(const char *s, double *out) {
  long y, mo, d, h = 0, mi = 0, se = 0, oh = 0, om = 0;
  double frac = 0, v;
  const char *p;
  int sign = 0;

  if (sm__parse_num(s, &v) == 0) {
    *out = v;
    return 0;
  }
  if (strlen(s) < 10 || digits(s, 4, &y) || s[4] != '-' ||
      digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d))
    return SM_EPARSE;
  p = s + 10;
  if (*p == ' ' || *p == 'T') {
    p++;
    if (digits(p, 2, &h) || p[2] != ':' || digits(p + 3, 2, &mi))
      return SM_EPARSE;
    p += 5;
    if (*p == ':') {
      if (digits(p + 1, 2, &se))
        return SM_EPARSE;
      p += 3;
    }
    if (*p == '.') {
      double scale = 0.1;
      p++;
      if (*p < '0' || *p > '9')
        return SM_EPARSE;
      while (*p >= '0' && *p <= '9') {
        frac += (*p - '0') * scale;
        scale /= 10;
        p++;
      }
    }
  }
  if (*p == 'Z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    sign = *p == '+' ? 1 : -1;
    if (digits(p + 1, 2, &oh))
      return SM_EPARSE;
    p += 3;
    if (*p == ':')
      p++;
    if (*p != '\0') {
      if (digits(p, 2, &om))
        return SM_EPARSE;
      p += 2;
    }
  }
  if (*p != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      se > 60 || oh > 23 || om > 59)
    return SM_EPARSE;
  v = (double)sm__days_from_civil(y, mo, d) * 86400.0 +
      (double)(h * 3600 + mi * 60 + se) + frac;
  v -= sign * (double)(oh * 3600 + om * 60);
  *out = v;
  return 0;
}

double sm__job_uniform(uint64_t seed, uint64_t salt, uint64_t i) {
  uint64_t x = sm_hash_mix(seed ^ sm_hash_mix(salt + 0x632be59bd9b4e019ULL)) ^
               sm_hash_mix(i + 0x9e3779b97f4a7c15ULL);
  x = sm_hash_mix(x);
  return (double)(x >> 11) * 0x1.0p-53;
}
