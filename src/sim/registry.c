/* registry.c - the table of scheduling policies.  The built-in ones are a
 * table fixed at build time; sm_sim_policy_register adds more at run time
 * (a program's own policies), so that a new policy never touches the
 * engine.
 *
 * Registrations are serialised by a lock and published with one atomic
 * store of the count after the slot is written, so that lookups, which
 * take no lock, see either the table without the new policy or with it,
 * never a half-written entry: runs may look policies up from several
 * threads while another registers one. */
#include <pthread.h>
#include <string.h>

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

static const sm_sim_policy *extra[MAX_EXTRA]; /* written under lock */
static size_t nextra;                         /* published atomically */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const sm_sim_policy *sm_sim_policy_at(size_t i) {
  size_t n = __atomic_load_n(&nextra, __ATOMIC_ACQUIRE);

  if (i < SM_ARRAY_LEN(builtins))
    return builtins[i];
  i -= SM_ARRAY_LEN(builtins);
  return i < n ? extra[i] : NULL;
}

const sm_sim_policy *sm_sim_policy_find(const char *name) {
  const sm_sim_policy *p;

  for (size_t i = 0; (p = sm_sim_policy_at(i)) != NULL; i++)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}

int sm_sim_policy_register(const sm_sim_policy *p) {
  int rc = 0;

  if (p == NULL || p->name == NULL || p->schedule == NULL)
    return SM_EINVAL;
  pthread_mutex_lock(&lock);
  if (sm_sim_policy_find(p->name) != NULL)
    rc = SM_EINVAL;
  else if (nextra == MAX_EXTRA)
    rc = SM_ELIMIT;
  else {
    extra[nextra] = p;
    __atomic_store_n(&nextra, nextra + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
