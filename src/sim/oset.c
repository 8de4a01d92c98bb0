/* oset.c - ordered job sets for the policies: skip lists keyed by two
 * doubles and the job index.
 *
 * A policy keeps its pending (and, when preemptive, running) jobs in
 * sm__oset: insertion and removal cost O(log n) expected, walking in
 * priority order is a linked-list walk.  Levels come from a private
 * xorshift state seeded with a constant, so runs are deterministic. */
#include <string.h>

#include "sim/sim_int.h"

static sm__onode *node_new(int level) {
  sm__onode *n =
      sm_calloc(1, sizeof(sm__onode) + (size_t)level * sizeof(sm__onode *));
  if (n != NULL)
    n->level = level;
  return n;
}

int sm__oset_init(sm__oset *s) {
  memset(s, 0, sizeof(*s));
  s->head = node_new(SM__OSET_MAXLVL);
  if (s->head == NULL)
    return SM_ENOMEM;
  s->level = 1;
  s->rs = 0x9e3779b97f4a7c15ULL;
  return 0;
}

void sm__oset_release(sm__oset *s) {
  sm__onode *n;

  if (s->head == NULL)
    return;
  n = s->head->next[0];
  while (n != NULL) {
    sm__onode *next = n->next[0];
    sm_free(n);
    n = next;
  }
  sm_free(s->head);
  s->head = NULL;
  s->n = 0;
}

/* A level with P(level >= k) = 4^-(k-1). */
static int random_level(sm__oset *s) {
  uint64_t x = s->rs;
  int level = 1;

  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  s->rs = x;
  while (level < SM__OSET_MAXLVL && (x & 3) == 0) {
    level++;
    x >>= 2;
  }
  return level;
}

/* Negative when (k1, k2, idx) of a sorts before b's key. */
static int before(const sm__onode *a, double k1, double k2, uint32_t idx) {
  if (a->k1 != k1)
    return a->k1 < k1;
  if (a->k2 != k2)
    return a->k2 < k2;
  return a->job->idx < idx;
}

sm__onode *sm__oset_insert(sm__oset *s, sm_sim_job *j, double k1, double k2) {
  sm__onode *update[SM__OSET_MAXLVL];
  sm__onode *x = s->head, *n;
  int level;

  for (int i = s->level - 1; i >= 0; i--) {
    while (x->next[i] != NULL && before(x->next[i], k1, k2, j->idx))
      x = x->next[i];
    update[i] = x;
  }
  level = random_level(s);
  if (level > s->level) {
    for (int i = s->level; i < level; i++)
      update[i] = s->head;
    s->level = level;
  }
  n = node_new(level);
  if (n == NULL)
    return NULL;
  n->job = j;
  n->k1 = k1;
  n->k2 = k2;
  for (int i = 0; i < level; i++) {
    n->next[i] = update[i]->next[i];
    update[i]->next[i] = n;
  }
  s->n++;
  return n;
}

void sm__oset_remove(sm__oset *s, sm__onode *n) {
  sm__onode *update[SM__OSET_MAXLVL];
  sm__onode *x = s->head;

  for (int i = s->level - 1; i >= 0; i--) {
    while (x->next[i] != NULL && x->next[i] != n &&
           before(x->next[i], n->k1, n->k2, n->job->idx))
      x = x->next[i];
    update[i] = x;
  }
  SM_ASSERT(update[0]->next[0] == n);
  for (int i = 0; i < n->level; i++) {
    SM_ASSERT(update[i]->next[i] == n);
    update[i]->next[i] = n->next[i];
  }
  while (s->level > 1 && s->head->next[s->level - 1] == NULL)
    s->level--;
  s->n--;
  sm_free(n);
}
