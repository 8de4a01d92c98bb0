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
 * ("eval/") are left out. */
#include <string.h>

#include "track_int.h"

static int blank(char c) {
  return c == ' ' || c == '\t';
}

int sm__trk_vrule(const char *s, size_t n) {
  size_t d = 0;

  for (size_t i = 0; i < n; i++) {
    if (s[i] == '-')
      d++;
    else if (!blank(s[i]))
      return 0;
  }
  return d >= 10;
}

/* Trims blanks around s[a..b). */
static void trim(const char *s, size_t *a, size_t *b) {
  while (*a < *b && blank(s[*a]))
    (*a)++;
  while (*b > *a && blank(s[*b - 1]))
    (*b)--;
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
  r->text[0] = '\0';
}
