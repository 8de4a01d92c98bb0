/* verify.c - checks a model's claims against the text it cites.
 *
 * A number is verified when it is one of the numbers printed on the
 * line (any spelling: 6e-4 for 0.0006, 600_000 or 600,000 for 600000).
 * A step time may also be printed in milliseconds or as a rate.  A name
 * (model, dataset) is verified when its letters and digits occur on the
 * line, or the Advisor's own normaliser turns a word of the line into it
 * (advisor.c).  A value of a closed vocabulary (task, domain, precision,
 * parallelism, iteration_type) must be one of the field's values in
 * data/embed/llm_forms.tsv and the line must show one of its forms. */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_int.h"

extern const char sm__embed_llm_forms[];
extern const unsigned long sm__embed_llm_forms_len;

/* ==== Numbers ==== */

static int is_word(int c) {
  return isalpha(c) || c == '_';
}

int sm__llm_numbers(const char *s, size_t n, double *out, int max) {
  int k = 0;
  size_t i = 0;

  while (i < n && k < max) {
    size_t st = i, j = i, run_end;
    char tmp[96];
    size_t t = 0;
    int grouped = 0, commas = 0;
    unsigned char c = (unsigned char)s[i];
    unsigned char prev = i > 0 ? (unsigned char)s[i - 1] : ' ';

    if ((c == '-' || c == '+') && i + 1 < n &&
        (isdigit((unsigned char)s[i + 1]) ||
         (s[i + 1] == '.' && i + 2 < n && isdigit((unsigned char)s[i + 2])))) {
      if (isalnum(prev) || prev == '_' || prev == '.') {
        i++;
        continue;
      }
      tmp[t++] = (char)c;
      j = i + 1;
    } else if (isdigit(c) ||
               (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
      unsigned char pp = i > 1 ? (unsigned char)s[i - 2] : ' ';
      /* A hyphen between a word and digits joins a name ("llama-7b"). */
      if (is_word(prev) || isdigit(prev) || prev == '.' ||
          (prev == '-' && isalpha(pp))) {
        /* Glued to a word ("gpt2", "v1.5"): skip the whole run. */
        while (i < n &&
               (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_'))
          i++;
        continue;
      }
    } else {
      i++;
      continue;
    }
    /* Integer part with optional thousands groups. */
    while (j < n && isdigit((unsigned char)s[j]) && t < sizeof(tmp) - 8)
      tmp[t++] = s[j++];
    run_end = j;
    while (j + 3 < n && (s[j] == '_' || s[j] == ',') &&
           isdigit((unsigned char)s[j + 1]) &&
           isdigit((unsigned char)s[j + 2]) &&
           isdigit((unsigned char)s[j + 3]) &&
           (j + 4 >= n || !isdigit((unsigned char)s[j + 4])) &&
           t < sizeof(tmp) - 8) {
      if (s[j] == ',')
        commas = 1;
      memcpy(tmp + t, s + j + 1, 3);
      t += 3;
      j += 4;
      grouped = 1;
    }
    if (j < n && s[j] == '.' && !(grouped && commas)) {
      tmp[t++] = s[j++];
      while (j < n && isdigit((unsigned char)s[j]) && t < sizeof(tmp) - 8)
        tmp[t++] = s[j++];
    }
    if (j + 1 < n && (s[j] == 'e' || s[j] == 'E')) {
      size_t e = j + 1;
      if (e < n && (s[e] == '-' || s[e] == '+'))
        e++;
      if (e < n && isdigit((unsigned char)s[e])) {
        tmp[t++] = 'e';
        for (size_t q = j + 1; q < e; q++)
          tmp[t++] = s[q];
        j = e;
        while (j < n && isdigit((unsigned char)s[j]) && t < sizeof(tmp) - 2)
          tmp[t++] = s[j++];
      }
    }
    tmp[t] = '\0';
    {
      char *end;
      double v = strtod(tmp, &end);
      if (end != tmp && isfinite(v))
        out[k++] = v;
    }
    if (grouped && commas && k < max) {
      /* "1,234" may also be the list 1, 234: keep the first run and read
       * the rest again from the comma. */
      char first[48];
      size_t fl = run_end - st;
      if (fl < sizeof(first)) {
        memcpy(first, s + st, fl);
        first[fl] = '\0';
        out[k++] = strtod(first, NULL);
      }
      i = run_end;
      continue;
    }
    i = j > st ? j : st + 1;
  }
  return k;
}

static int same(double a, double b, double rel) {
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return a == b || fabs(a - b) <= rel * m;
}

int sm__llm_num_on_line(double v, const char *s, size_t n) {
  double nums[SM__LLM_MAX_NUMS];
  int k = sm__llm_numbers(s, n, nums, SM__LLM_MAX_NUMS);
  if (!isfinite(v))
    return 0;
  for (int i = 0; i < k; i++)
    if (same(nums[i], v, 1e-9))
      return 1;
  return 0;
}

static int has_ci(const char *s, size_t n, const char *needle) {
  size_t m = strlen(needle);
  if (m == 0 || m > n)
    return m == 0;
  for (size_t i = 0; i + m <= n; i++)
    if (strncasecmp(s + i, needle, m) == 0)
      return 1;
  return 0;
}

int sm__llm_time_on_line(double v, const char *s, size_t n) {
  double nums[SM__LLM_MAX_NUMS];
  int k;

  if (!(v > 0) || !isfinite(v))
    return 0;
  if (sm__llm_num_on_line(v, s, n))
    return 1;
  k = sm__llm_numbers(s, n, nums, SM__LLM_MAX_NUMS);
  for (int i = 0; i < k; i++) {
    if (has_ci(s, n, "ms") && same(nums[i], v * 1000, 1e-6))
      return 1;
    if (has_ci(s, n, "/s") && nums[i] > 0 && same(1.0 / nums[i], v, 0.005))
      return 1;
  }
  return 0;
}

size_t sm__llm_compact(const char *s, size_t n, char *out, size_t cap) {
  size_t o = 0;
  if (cap == 0)
    return 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++)
    if (isalnum((unsigned char)s[i]))
      out[o++] = (char)tolower((unsigned char)s[i]);
  out[o] = '\0';
  return o;
}

/* ==== The forms table ==== */

typedef struct form {
  char *field; /* "precision" */
  char *value; /* "bf16" */
  char *forms; /* "bf16|bfloat16" or "-" */
} form;

static form *forms;
static int n_forms;
static char *forms_text;
static pthread_once_t forms_once = PTHREAD_ONCE_INIT;

static void forms_load(void) {
  char *p, *line;
  int cap = 0;

  forms_text = sm_strndup(sm__embed_llm_forms, sm__embed_llm_forms_len);
  if (forms_text == NULL)
    return;
  for (p = forms_text; *p; p++)
    if (*p == '\n')
      cap++;
  forms = sm_calloc((size_t)cap + 1, sizeof(*forms));
  if (forms == NULL)
    return;
  for (line = strtok_r(forms_text, "\n", &p); line;
       line = strtok_r(NULL, "\n", &p)) {
    char *t1, *t2;
    if (line[0] == '#' || line[0] == '\0')
      continue;
    t1 = strchr(line, '\t');
    t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (t2 == NULL || n_forms >= cap + 1)
      continue;
    *t1 = *t2 = '\0';
    forms[n_forms].field = line;
    forms[n_forms].value = t1 + 1;
    forms[n_forms].forms = t2 + 1;
    n_forms++;
  }
}

static int closed_field(const char *field) {
  static const char *const f[] = {"task",        "domain",         "precision",
                                  "parallelism", "iteration_type", NULL};
  for (int i = 0; f[i]; i++)
    if (strcmp(f[i], field) == 0)
      return 1;
  return 0;
}

/* deepspeed_zeroN or megatron_tpX_ppY[_zeroN]: returns 1 and the numbers
 * (-1 when absent). */
static int family(const char *v, int *zero, int *tp, int *pp) {
  char *end;
  *zero = *tp = *pp = -1;
  if (strncmp(v, "deepspeed_zero", 14) == 0) {
    long z = strtol(v + 14, &end, 10);
    if (end == v + 14 || *end != '\0' || z < 0 || z > 3)
      return 0;
    *zero = (int)z;
    return 1;
  }
  if (strncmp(v, "megatron_tp", 11) == 0) {
    long t = strtol(v + 11, &end, 10), p;
    if (end == v + 11 || strncmp(end, "_pp", 3) != 0 || t < 1 || t > 4096)
      return 0;
    v = end + 3;
    p = strtol(v, &end, 10);
    if (end == v || p < 1 || p > 4096)
      return 0;
    *tp = (int)t;
    *pp = (int)p;
    if (*end == '\0')
      return 1;
    if (strncmp(end, "_zero", 5) == 0) {
      long z = strtol(end + 5, &end, 10);
      if (*end == '\0' && z >= 0 && z <= 3) {
        *zero = (int)z;
        return 1;
      }
    }
    return 0;
  }
  return 0;
}

int sm__llm_form_known(const char *field, const char *value) {
  int z, t, p;
  pthread_once(&forms_once, forms_load);
  if (strcmp(field, "parallelism") == 0 && family(value, &z, &t, &p))
    return 1;
  for (int i = 0; i < n_forms; i++)
    if (strcmp(forms[i].field, field) == 0 &&
        strcmp(forms[i].value, value) == 0)
      return 1;
  return 0;
}

int sm__llm_form_values(const char *field, char *out, size_t n) {
  size_t o = 0;
  pthread_once(&forms_once, forms_load);
  if (!closed_field(field) || n == 0)
    return 0;
  out[0] = '\0';
  for (int i = 0; i < n_forms; i++) {
    size_t m;
    if (strcmp(forms[i].field, field) != 0)
      continue;
    m = strlen(forms[i].value);
    if (o + m + 2 >= n)
      break;
    if (o)
      out[o++] = '|';
    memcpy(out + o, forms[i].value, m);
    o += m;
    out[o] = '\0';
  }
  if (strcmp(field, "parallelism") == 0 && o + 40 < n) {
    memcpy(out + o, "|deepspeed_zeroN|megatron_tpX_ppY", 34);
    out[o + 34] = '\0';
  }
  return 1;
}

/* A number next to (within 24 bytes after) one of the words. */
static int num_near(const char *s, size_t n, const char *const *words, int v) {
  for (int w = 0; words[w]; w++) {
    size_t m = strlen(words[w]);
    for (size_t i = 0; i + m <= n; i++) {
      size_t e;
      double nums[8];
      int k;
      if (strncasecmp(s + i, words[w], m) != 0)
        continue;
      e = i + m + 24 < n ? i + m + 24 : n;
      k = sm__llm_numbers(s + i + m, e - i - m, nums, 8);
      /* Words glue to numbers ("tp2", "stage3"): look at the digits
       * right after the word as well. */
      if (i + m < n && isdigit((unsigned char)s[i + m])) {
        long g = 0;
        for (size_t q = i + m;
             q < n && isdigit((unsigned char)s[q]) && g < 100000; q++)
          g = g * 10 + (s[q] - '0');
        if (g == v)
          return 1;
      }
      for (int q = 0; q < k; q++)
        if (nums[q] == v)
          return 1;
    }
  }
  return 0;
}

int sm__llm_form_on_line(const char *field, const char *value, const char *s,
                         size_t n) {
  int z, t, p;

  pthread_once(&forms_once, forms_load);
  if (strcmp(field, "parallelism") == 0 && family(value, &z, &t, &p)) {
    static const char *const zw[] = {"zero_stage", "zero", "stage", NULL};
    static const char *const tw[] = {"tensor_model_parallel_size",
                                     "tensor-model-parallel-size",
                                     "tensor_parallel",
                                     "tp_size",
                                     "tp",
                                     NULL};
    static const char *const pw[] = {"pipeline_model_parallel_size",
                                     "pipeline-model-parallel-size",
                                     "pipeline_parallel",
                                     "pp_size",
                                     "pp",
                                     NULL};
    if (t < 0)
      return has_ci(s, n, "zero") && num_near(s, n, zw, z);
    return num_near(s, n, tw, t) || num_near(s, n, pw, p) ||
           (z >= 0 && num_near(s, n, zw, z));
  }
  for (int i = 0; i < n_forms; i++) {
    const char *f;
    if (strcmp(forms[i].field, field) != 0 ||
        strcmp(forms[i].value, value) != 0)
      continue;
    if (strcmp(forms[i].forms, "-") == 0)
      return 0;
    f = forms[i].forms;
    while (*f) {
      const char *bar = strchr(f, '|');
      size_t m = bar ? (size_t)(bar - f) : strlen(f);
      char word[96];
      if (m > 0 && m < sizeof(word)) {
        memcpy(word, f, m);
        word[m] = '\0';
        if (has_ci(s, n, word))
          return 1;
      }
      if (bar == NULL)
        break;
      f = bar + 1;
    }
    return 0;
  }
  return 0;
}
