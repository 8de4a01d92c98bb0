/* registry.c - the table of scheduling policies.  The built-in baselines
 * come first; sm_sim_policy_register adds more at run time (the later
 * SchedMate integrations), so that a new policy never touches the
 * engine. */
#include <string.h>

#include "sim/sia_int.h"
#include "sim/sim_int.h"

#define MAX_EXTRA 64

static const sm_sim_policy *const builtins[] = {&sm__policy_fifo,
                                                &sm__policy_sjf,
                                                &sm__policy_srtf,
                                                &sm__policy_qssf,
                                                &sm__policy_tiresias,
                                                &sm__policy_lucid,
                                                &sm__policy_lucid_schedmate,
                                                &sm__policy_sjf_schedmate,
                                                &sm__policy_sjf_schedmate_fh,
                                                &sm__policy_sia,
                                                &sm__policy_sia_schedmate};

static const sm_sim_policy *extra[MAX_EXTRA];
static size_t nextra;

const sm_sim_policy *sm_sim_policy_at(size_t i) {
  if (i < SM_ARRAY_LEN(builtins))
    return builtins[i];
  i -= SM_ARRAY_LEN(builtins);
  return i < nextra ? extra[i] : NULL;
}

const sm_sim_policy *sm_sim_policy_find(const char *name) {
  const sm_sim_policy *p;

  for (size_t i = 0; (p = sm_sim_policy_at(i)) != NULL; i++)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}

int sm_sim_policy_register(const sm_sim_policy *p) {
  if (p == NULL || p->name == NULL || p->schedule == NULL ||
      sm_sim_policy_find(p->name) != NULL)
    return SM_EINVAL;
  if (nextra == MAX_EXTRA)
    return SM_ELIMIT;
  extra[nextra++] = p;
  return 0;
}
