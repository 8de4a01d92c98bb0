/* vtable.c - vertical metric tables: a record printed one metric per
 * line between two rules, the way RL loggers print their progress
 * (Stable-Baselines3's and OpenAI baselines' HumanOutputFormat):
 *
 *   -----------------------------------------
 *   | rollout/                |             |
 *   |    ep_rew_mean          | -150        |
 *   | time/                   |             |
 *   |    total_timesteps      | 20480       |
 *   | train/                  |             |
 *   |    loss                 | 12.3        |
 *   -----------------------------------------
 *
 * The rows of one record are joined into one line of "key=value" pairs,
 * which the line parser reads like any other; a namespace row ("train/")
 * names the rows below it, and rows under an evaluation namespace
 * ("eval/") are left out.
 *
 * Print loops write the same kind of record without the table: one
 * "key: value" per line between rules of '=' or '-' (a decision
 * transformer's "time elapsed: 0:51:28", "num of updates: 48000",
 * "action loss: 0.023" between "=====" lines).  Such records are joined
 * too, and read only where the record before them had the same keys (a
 * configuration dump between two rules is printed once); a heading right
 * after the rule ("Iteration 12") is a row of it, and a record the log
 * ends in, not closed yet, is read when its keys so far begin the keys
 * of the record before it. */
#include <string.h>

#include "track_int.h"

static int blank(char c) {
  return c == ' ' || c == '\t';
}

/* Trims blanks around s[a..b). */
static void trim(const char *s, size_t *a, size_t *b) {
  while (*a < *b && blank(s[*a]))
    (*a)++;
  while (*b > *a && blank(s[*b - 1]))
    (*b)--;
}

int sm__trk_vrule(const char *s, size_t n) {
  size_t d = 0;
  char c = 0;

  for (size_t i = 0; i < n; i++) {
    if ((s[i] == '-' || s[i] == '=') && (c == 0 || s[i] == c)) {
      c = s[i];
      d++;
    } else if (!blank(s[i])) {
      return 0;
    }
  }
  return d >= 10;
}

static int key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '/' || c == '-' || c == '.';
}

int sm__trk_vkv(const char *s, size_t n, trk_vcell *key, trk_vcell *val) {
  size_t a = 0, b = n, i, words = 1, digits = 0, letters = 0;

  trim(s, &a, &b);
  if (b - a < 3 || !((s[a] | 0x20) >= 'a' && (s[a] | 0x20) <= 'z'))
    return 0;
  /* The key: one to four words of key characters, single blanks. */
  for (i = a; i < b && s[i] != ':'; i++) {
    if (s[i] == ' ' && i > a && s[i - 1] != ' ' && i + 1 < b &&
        s[i + 1] != ' ' && s[i + 1] != ':')
      words++;
    else if (!key_char(s[i]))
      return 0;
  }
  if (i >= b || words > 4 || i - a >= TRK_KEY_MAX)
    return 0;
  key->off = a;
  key->len = i - a;
  /* The value: one number or clock, a short unit after it at most. */
  for (i++; i < b && blank(s[i]); i++)
    ;
  val->off = i;
  if (i < b && (s[i] == '-' || s[i] == '+'))
    i++;
  for (; i < b && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == ':' ||
                   ((s[i] == 'e' || s[i] == 'E') && digits && i + 1 < b &&
                    (s[i + 1] == '-' || s[i + 1] == '+')));
       i++)
    if (s[i] >= '0' && s[i] <= '9')
      digits++;
    else if (s[i] == 'e' || s[i] == 'E')
      i++; /* the exponent's sign */
  for (; i < b && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z'; i++)
    letters++;
  if (digits == 0 || letters > 3 || i != b)
    return 0;
  val->len = b - val->off;
  return 1;
}

int sm__trk_vrow(const char *s, size_t n, trk_vcell *key, trk_vcell *val) {
  size_t a = 0, b = n, bar[3], nb = 0;

  trim(s, &a, &b);
  if (b - a < 5 || s[a] != '|' || s[b - 1] != '|')
    return 0;
  for (size_t i = a; i < b; i++)
    if (s[i] == '|') {
      if (nb == 3)
        return 0;
      bar[nb++] = i;
    }
  if (nb != 3)
    return 0;
  key->off = bar[0] + 1;
  key->len = bar[1];
  val->off = bar[1] + 1;
  val->len = bar[2];
  trim(s, &key->off, &key->len);
  trim(s, &val->off, &val->len);
  key->len -= key->off;
  val->len -= val->off;
  return key->len > 0 && key->len < TRK_KEY_MAX;
}

void sm__trk_vrec_row(trk_vrec *r, const char *s, const trk_vcell *key,
                      const trk_vcell *val) {
  const char *k = s + key->off, *v = s + val->off;

  if (val->len == 0) {
    /* A namespace row: "train/", "eval/". */
    size_t l = key->len;
    while (l > 0 && k[l - 1] == '/')
      l--;
    r->skip = sm__trk_is_eval_word(k, l);
    return;
  }
  if (r->skip || r->len + key->len + val->len + 3 >= sizeof(r->text))
    return;
  if (r->len > 0) {
    r->text[r->len++] = ',';
    r->text[r->len++] = ' ';
  }
  memcpy(r->text + r->len, k, key->len);
  r->len += key->len;
  r->text[r->len++] = '=';
  memcpy(r->text + r->len, v, val->len);
  r->len += val->len;
  r->text[r->len] = '\0';
  r->rows++;
}

void sm__trk_vrec_reset(trk_vrec *r) {
  r->len = 0;
  r->rows = 0;
  r->skip = 0;
  r->kv = 0;
  r->keys = 0;
  r->text[0] = '\0';
}

void sm__trk_vrec_kv(trk_vrec *r, const char *s, const trk_vcell *key,
                     const trk_vcell *val) {
  r->kv = 1;
  for (size_t i = 0; i < key->len; i++)
    r->keys = r->keys * 31 + (unsigned char)s[key->off + i];
  r->keys = r->keys * 31 + ':';
  if (r->rows < TRK_VPRE)
    r->pre[r->rows] = r->keys;
  sm__trk_vrec_row(r, s, key, val);
}

int sm__trk_vheading(const char *s, size_t n, trk_vcell *key, trk_vcell *val) {
  size_t a = 0, b = n, i;

  trim(s, &a, &b);
  for (i = a; i < b && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z'; i++)
    ;
  if (i - a < 2 || i - a > 20 || i + 1 >= b || s[i] != ' ')
    return 0;
  key->off = a;
  key->len = i - a;
  val->off = i + 1;
  for (i++; i < b && s[i] >= '0' && s[i] <= '9'; i++)
    ;
  if (i != b || i == val->off)
    return 0;
  val->len = b - val->off;
  return 1;
}
