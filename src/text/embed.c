/* embed.c - line normalisation and the feature-hashing embedder.
 *
 * A log line is first reduced to its shape: numbers become '0', case and
 * spacing are folded, terminal escapes and progress-bar glyphs vanish.
 * Its features are then hashed into a fixed number of signed dimensions
 * (the "hashing trick"): whole words, the first word, pairs of adjacent
 * tokens and character trigrams.  Words carry the meaning ("loss", "eval",
 * "Traceback"); trigrams make unseen spellings ("train_loss", "trn_loss")
 * land near known ones. */
#include <math.h>
#include <string.h>

#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"
#include "util/util_int.h"

enum {
  CH_OTHER = 0, /* punctuation */
  CH_LOWER,
  CH_UPPER,
  CH_DIGIT,
  CH_SPACE,
  CH_CTRL,
  CH_ESC,
  CH_HIGH,
  CH_UNDER
};

/* The class of byte c (an int constant expression). */
#define CLASS_OF(c)                                                            \
  ((c) >= 'a' && (c) <= 'z'    ? CH_LOWER                                      \
   : (c) >= 'A' && (c) <= 'Z'  ? CH_UPPER                                      \
   : (c) >= '0' && (c) <= '9'  ? CH_DIGIT                                      \
   : (c) == ' ' || (c) == '\t' ? CH_SPACE                                      \
   : (c) == 0x1b               ? CH_ESC                                        \
   : (c) < 0x20 || (c) == 0x7f ? CH_CTRL                                       \
   : (c) >= 0x80               ? CH_HIGH                                       \
   : (c) == '_'                ? CH_UNDER                                      \
                               : CH_OTHER)
/* For word bytes (letters and '_') their lower-case form, 0 for the rest:
 * lets the normaliser copy runs of letters in a tight loop. */
#define FOLD_OF(c)                                                             \
  (CLASS_OF(c) == CH_LOWER || CLASS_OF(c) == CH_UNDER ? (c)                    \
   : CLASS_OF(c) == CH_UPPER                          ? ((c) | 0x20)           \
                                                      : 0)
/* Both tables are built by the compiler (nothing to initialise at run
 * time, so no thread can see them half-filled): F applied to 0..255. */
#define BYTES4(F, c) F(c), F((c) + 1), F((c) + 2), F((c) + 3)
#define BYTES16(F, c)                                                          \
  BYTES4(F, c), BYTES4(F, (c) + 4), BYTES4(F, (c) + 8), BYTES4(F, (c) + 12)
#define BYTES64(F, c)                                                          \
  BYTES16(F, c), BYTES16(F, (c) + 16), BYTES16(F, (c) + 32),                   \
      BYTES16(F, (c) + 48)
#define BYTES256(F)                                                            \
  BYTES64(F, 0), BYTES64(F, 64), BYTES64(F, 128), BYTES64(F, 192)

static const unsigned char ch_class[256] = {BYTES256(CLASS_OF)};
static const unsigned char ch_fold[256] = {BYTES256(FOLD_OF)};

#define SHAPE_SEED 0x5eed5a9eULL

/* Length of the number starting at s[i] (s[i] is a digit). */
static size_t number_len(const unsigned char *s, size_t i, size_t n) {
  size_t j = i;

  while (j < n && s[j] >= '0' && s[j] <= '9')
    j++;
  if (j + 1 < n && s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9') {
    j++;
    while (j < n && s[j] >= '0' && s[j] <= '9')
      j++;
  }
  if (j < n && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < n && (s[k] == '+' || s[k] == '-'))
      k++;
    if (k < n && s[k] >= '0' && s[k] <= '9') {
      while (k < n && s[k] >= '0' && s[k] <= '9')
        k++;
      j = k;
    }
  }
  return j - i;
}

size_t sm_text_normalize(const char *line, size_t n, char *out, size_t cap,
                         uint64_t *shape) {
  const unsigned char *s = (const unsigned char *)line;
  size_t i = 0, o = 0;
  char last = ' ';
  const unsigned char *cr;
  unsigned char k;

  if (cap > SM_TEXT_MAX_NORM + 1)
    cap = SM_TEXT_MAX_NORM + 1;
  /* Drop trailing blanks and line ends, then keep only the text after the
   * last carriage return: what a terminal would show. */
  n = sm__str_rtrim_len(line, n);
  cr = n ? memrchr(s, '\r', n) : NULL;
  if (cr != NULL) {
    size_t skip = (size_t)(cr - s) + 1;
    s += skip;
    n -= skip;
  }
  if (n > SM_TEXT_MAX_INPUT)
    n = SM_TEXT_MAX_INPUT;
  while (i < n && o + 1 < cap) {
    unsigned char c = s[i];
    unsigned char f = ch_fold[c];
    if (f != 0) {
      /* A run of letters, the bulk of most lines: copied folded in a
       * tight loop, bounded by the input and by the room left. */
      size_t lim = n - i < cap - 1 - o ? n : i + (cap - 1 - o);
      do {
        out[o++] = (char)f;
        i++;
      } while (i < lim && (f = ch_fold[s[i]]) != 0);
      last = out[o - 1];
      continue;
    }
    /* Then blanks, numbers and punctuation, tested in that order (more
     * predictable than one indirect jump per byte). */
    k = ch_class[c];
    if (k == CH_SPACE) {
      if (last != ' ')
        out[o++] = last = ' ';
      i++;
      while (i < n && ch_class[s[i]] == CH_SPACE)
        i++;
    } else if (k == CH_DIGIT) {
      i += number_len(s, i, n);
      out[o++] = last = '0';
    } else if (k == CH_OTHER) {
      if ((char)c != last)
        out[o++] = last = (char)c;
      i++;
    } else if (k == CH_ESC) {
      if (i + 1 < n && s[i + 1] == '[') {
        i += 2;
        while (i < n && !(s[i] >= 0x40 && s[i] <= 0x7e))
          i++;
        i++;
      } else {
        i += 2;
      }
    } else if (k == CH_HIGH) {
      while (i < n && s[i] >= 0x80)
        i++;
      if (last != '#')
        out[o++] = last = '#';
    } else { /* CH_CTRL */
      i++;
    }
  }
  while (o > 0 && out[o - 1] == ' ')
    o--;
  out[o] = '\0';
  if (shape != NULL)
    *shape = sm_hash64(out, o, SHAPE_SEED);
  return o;
}

/* ==== Features ==== */

#define W_UNIGRAM 1.0f
#define W_NUMBER 0.3f
#define W_FIRST 0.8f
#define W_BIGRAM 0.6f
#define W_TRIGRAM 0.25f

#define SEED_UNI 0x11ULL
#define SEED_FIRST 0x22ULL
#define SEED_BI 0x33ULL
#define SEED_TRI 0x44ULL

#define MAX_TOKENS 512

static int is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || c == '_' || c == '0';
}

static int put(uint32_t *idx, float *val, int k, int max, uint64_t h,
               uint32_t dims, float w) {
  if (k >= max)
    return k;
  idx[k] = (uint32_t)(h & (dims - 1));
  val[k] = (h >> 63) ? -w : w;
  return k + 1;
}

int sm_text_features(const char *norm, size_t n, uint32_t dims, uint32_t *idx,
                     float *val, int max) {
  const unsigned char *t = (const unsigned char *)norm;
  uint64_t th[MAX_TOKENS];
  int nt = 0, k = 0, first = 1;
  size_t i = 0;

  while (i < n && nt < MAX_TOKENS) {
    size_t j = i;
    uint64_t h;
    if (t[i] == ' ') {
      i++;
      continue;
    }
    if (is_word(t[i])) {
      while (j < n && is_word(t[j]))
        j++;
      h = sm_hash64(t + i, j - i, SEED_UNI);
      if (j - i == 1 && t[i] == '0') {
        k = put(idx, val, k, max, h, dims, W_NUMBER);
      } else {
        k = put(idx, val, k, max, h, dims, W_UNIGRAM);
        if (first)
          k = put(idx, val, k, max, sm_hash_mix(h ^ SEED_FIRST), dims, W_FIRST);
      }
    } else {
      j = i + 1;
      h = sm_hash_mix((uint64_t)t[i] * 0x100000001b3ULL ^ SEED_UNI);
    }
    first = 0;
    th[nt++] = h;
    i = j;
  }
  for (int a = 0; a + 1 < nt; a++)
    k = put(idx, val, k, max,
            sm_hash_mix(th[a] * 0x9e3779b97f4a7c15ULL + th[a + 1] + SEED_BI),
            dims, W_BIGRAM);
  for (i = 0; i + 3 <= n; i++) {
    uint64_t v =
        (uint64_t)t[i] | (uint64_t)t[i + 1] << 8 | (uint64_t)t[i + 2] << 16;
    k = put(idx, val, k, max, sm_hash_mix(v ^ (SEED_TRI << 32)), dims,
            W_TRIGRAM);
  }
  return k;
}

int sm_text_embed(const char *line, size_t n, float *vec, uint32_t dims) {
  char norm[SM_TEXT_MAX_NORM + 1];
  static _Thread_local uint32_t idx[SM_TEXT_MAX_FEATURES];
  static _Thread_local float val[SM_TEXT_MAX_FEATURES];
  size_t m;
  int k, i;
  double ss = 0;

  if (dims == 0 || (dims & (dims - 1)) != 0)
    return SM_EINVAL;
  memset(vec, 0, dims * sizeof(float));
  m = sm_text_normalize(line, n, norm, sizeof(norm), NULL);
  k = sm_text_features(norm, m, dims, idx, val, SM_TEXT_MAX_FEATURES);
  for (i = 0; i < k; i++)
    vec[idx[i]] += val[i];
  for (uint32_t d = 0; d < dims; d++)
    ss += (double)vec[d] * vec[d];
  if (ss > 0) {
    float inv = (float)(1.0 / sqrt(ss));
    for (uint32_t d = 0; d < dims; d++)
      vec[d] *= inv;
  }
  return 0;
}
