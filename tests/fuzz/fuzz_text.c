/* fuzz_text.c - libFuzzer target: normalisation, features and embedding
 * of arbitrary bytes must stay in bounds and give a unit or zero vector. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "schedmate/sm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char norm[SM_TEXT_MAX_NORM + 1];
  static uint32_t idx[SM_TEXT_MAX_FEATURES];
  static float val[SM_TEXT_MAX_FEATURES];
  static float vec[512];
  size_t m = sm_text_normalize((const char *)data, size, norm, sizeof(norm),
                               NULL);
  int k = sm_text_features(norm, m, 512, idx, val, SM_TEXT_MAX_FEATURES);
  double ss = 0;

  if (m > SM_TEXT_MAX_NORM || norm[m] != '\0' || k < 0 ||
      k > SM_TEXT_MAX_FEATURES)
    abort();
  for (int i = 0; i < k; i++)
    if (idx[i] >= 512)
      abort();
  sm_text_embed((const char *)data, size, vec, 512);
  for (int i = 0; i < 512; i++)
    ss += (double)vec[i] * vec[i];
  if (!(ss == 0.0 || fabs(ss - 1.0) < 1e-3))
    abort();
  return 0;
}
