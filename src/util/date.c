/* date.c - calendar arithmetic: days since the Unix epoch of a date, for
 * the readers of timestamps (trace CSV times, log line stamps). */
#include <limits.h>

#include "util/util_int.h"

long sm__days_from_civil(long y, long m, long d) {
  long era;
  unsigned long yoe, doy, doe;

  if (m < 1 || m > 12 || d < 1 || d > 31 || y < -SM__CIVIL_MAX_YEAR ||
      y > SM__CIVIL_MAX_YEAR)
    return LONG_MIN;
  /* The year starts in March, so that a leap day ends it. */
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned long)(y - era * 400); /* [0, 399] */
  doy = (153 * (unsigned long)(m > 2 ? m - 3 : m + 9) + 2) / 5 +
        (unsigned long)d - 1;                  /* [0, 365] */
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
  return era * 146097 + (long)doe - 719468;
}
