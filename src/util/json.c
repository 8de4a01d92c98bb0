/* json.c - a small streaming JSON writer that always emits valid JSON:
 * commas are inserted by nesting level and strings are escaped, with
 * invalid UTF-8 replaced by U+FFFD. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_util.h"

void sm_jw_init(sm_jw *w, sm_buf *out) {
  w->out = out;
  w->depth = 0;
  w->first[0] = 1;
  w->after_key = 0;
  w->err = 0;
}

static void jw_add(sm_jw *w, const char *s, size_t n) {
  if (w->err == 0)
    w->err = sm_buf_add(w->out, s, n);
}

/* Writes the separator a new value needs at the current depth. */
static void jw_sep(sm_jw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (!w->first[w->depth])
    jw_add(w, ",", 1);
  w->first[w->depth] = 0;
}

static void jw_open(sm_jw *w, char c) {
  jw_sep(w);
  jw_add(w, &c, 1);
  if (w->depth + 1 >= SM_JW_MAX_DEPTH) {
    w->err = SM_ETOOBIG;
    return;
  }
  w->depth++;
  w->first[w->depth] = 1;
}

static void jw_close(sm_jw *w, char c) {
  if (w->depth == 0) {
    w->err = SM_EINVAL;
    return;
  }
  w->depth--;
  jw_add(w, &c, 1);
}

void sm_jw_obj_begin(sm_jw *w) {
  jw_open(w, '{');
}
void sm_jw_obj_end(sm_jw *w) {
  jw_close(w, '}');
}
void sm_jw_arr_begin(sm_jw *w) {
  jw_open(w, '[');
}
void sm_jw_arr_end(sm_jw *w) {
  jw_close(w, ']');
}

/* Length of a valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len, i;
  unsigned cp;

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len > n)
    return 0;
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return len;
}

int sm_json_quote(sm_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  int rc = sm_buf_addc(out, '"');

  while (rc == 0 && i < n) {
    unsigned c = p[i];
    size_t l;
    char esc[8];

    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      run++;
      i++;
      continue;
    }
    if (run) {
      rc = sm_buf_add(out, p + i - run, run);
      run = 0;
      if (rc)
        break;
    }
    if (c >= 0x80) {
      l = utf8_len(p + i, n - i);
      if (l == 0) {
        rc = sm_buf_add(out, "\xef\xbf\xbd", 3);
        i++;
      } else {
        rc = sm_buf_add(out, p + i, l);
        i += l;
      }
      continue;
    }
    switch (c) {
    case '"':
      rc = sm_buf_add(out, "\\\"", 2);
      break;
    case '\\':
      rc = sm_buf_add(out, "\\\\", 2);
      break;
    case '\n':
      rc = sm_buf_add(out, "\\n", 2);
      break;
    case '\r':
      rc = sm_buf_add(out, "\\r", 2);
      break;
    case '\t':
      rc = sm_buf_add(out, "\\t", 2);
      break;
    default:
      snprintf(esc, sizeof(esc), "\\u%04x", c);
      rc = sm_buf_add(out, esc, 6);
    }
    i++;
  }
  if (rc == 0 && run)
    rc = sm_buf_add(out, p + n - run, run);
  if (rc == 0)
    rc = sm_buf_addc(out, '"');
  return rc;
}

void sm_jw_key(sm_jw *w, const char *key) {
  jw_sep(w);
  if (w->err == 0)
    w->err = sm_json_quote(w->out, key, strlen(key));
  jw_add(w, ":", 1);
  w->after_key = 1;
}

void sm_jw_strn(sm_jw *w, const char *s, size_t n) {
  jw_sep(w);
  if (s == NULL) {
    jw_add(w, "null", 4);
    return;
  }
  if (w->err == 0)
    w->err = sm_json_quote(w->out, s, n);
}

void sm_jw_str(sm_jw *w, const char *s) {
  sm_jw_strn(w, s, s ? strlen(s) : 0);
}

void sm_jw_num(sm_jw *w, double v) {
  char tmp[40];
  int n;

  jw_sep(w);
  if (!isfinite(v)) {
    jw_add(w, "null", 4);
    return;
  }
  /* Shortest of %.15g / %.17g that reads back as the same double. */
  n = snprintf(tmp, sizeof(tmp), "%.15g", v);
  if (strtod(tmp, NULL) != v)
    n = snprintf(tmp, sizeof(tmp), "%.17g", v);
  jw_add(w, tmp, (size_t)n);
}

void sm_jw_int(sm_jw *w, long long v) {
  char tmp[32];
  int n = snprintf(tmp, sizeof(tmp), "%lld", v);

  jw_sep(w);
  jw_add(w, tmp, (size_t)n);
}

void sm_jw_bool(sm_jw *w, int v) {
  jw_sep(w);
  if (v)
    jw_add(w, "true", 4);
  else
    jw_add(w, "false", 5);
}

void sm_jw_null(sm_jw *w) {
  jw_sep(w);
  jw_add(w, "null", 4);
}

void sm_jw_raw(sm_jw *w, const char *json) {
  jw_sep(w);
  jw_add(w, json, strlen(json));
}

int sm_jw_finish(sm_jw *w) {
  if (w->err)
    return w->err;
  return w->depth == 0 ? 0 : SM_EINVAL;
}

void sm_jw_kv_num(sm_jw *w, const char *key, double v) {
  sm_jw_key(w, key);
  sm_jw_num(w, v);
}

void sm_jw_kv_int(sm_jw *w, const char *key, long long v) {
  sm_jw_key(w, key);
  sm_jw_int(w, v);
}

void sm_jw_kv_str(sm_jw *w, const char *key, const char *s) {
  sm_jw_key(w, key);
  sm_jw_str(w, s);
}

void sm_jw_kv_bool(sm_jw *w, const char *key, int v) {
  sm_jw_key(w, key);
  sm_jw_bool(w, v);
}
