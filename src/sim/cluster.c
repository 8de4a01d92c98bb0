/* cluster.c - the simulated cluster: its description (nodes x GPUs,
 * virtual clusters, GPU types with speeds) parsed from a spec string or a
 * VC table, and the per-run node state with the two placement policies.
 *
 * Free capacity is kept in buckets: per VC and GPU type, a list of the
 * nodes that have exactly k free GPUs.  Consolidated placement then costs
 * O(GPUs per node) per node it uses, independent of the cluster size.
 *
 *   consolidate  a job uses the fewest nodes its size allows
 *                (ceil(gpus / GPUs per node)); within that, the node whose
 *                free GPUs fit the rest most tightly.  If the free GPUs are
 *                too fragmented to reach that node count, the job waits.
 *   first-fit    nodes in index order, taking free GPUs until the job has
 *                enough; it waits only when the VC has too few free GPUs.
 *
 * A job never spans GPU types.  A job that names a type uses only that
 * type; others try the types from the fastest down. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define MAX_NODES 1000000
#define MAX_GPN 1024
#define MAX_GROUPS 4096 /* groups of a cluster spec */
#define MAX_VCS 65536   /* rows of a VC table */

/* ==== Description ==== */

typedef struct group {
  char vc[64];   /* VC name, "" for anonymous */
  char type[64]; /* GPU type, "" for none */
  double speed;  /* speed of the type */
  int nodes;     /* node count */
  int gpn;       /* GPUs per node */
} group;

void sm_sim_cluster_free(sm_sim_cluster *c) {
  if (c == NULL)
    return;
  for (int i = 0; i < c->nvcs; i++)
    sm_free(c->vcs[i].name);
  for (int i = 0; i < c->ntypes; i++)
    sm_free(c->types[i].name);
  sm_free(c->vcs);
  sm_free(c->types);
  sm_free(c->nodes);
  sm_free(c);
}

/* Builds a cluster from groups: VCs in order of first appearance. */
static int build(const group *g, int ng, int anonymous, const char *what,
                 sm_sim_cluster **out, sm_err *err) {
  sm_sim_cluster *c = sm_calloc(1, sizeof(*c));
  long total = 0;
  int k = 0;

  if (c == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int i = 0; i < ng; i++) {
    total += g[i].nodes;
    if (total > MAX_NODES) {
      sm_sim_cluster_free(c);
      return sm_err_set(err, SM_ERANGE, "%s: more than %d nodes", what,
                        MAX_NODES);
    }
  }
  if (total == 0) {
    sm_sim_cluster_free(c);
    return sm_err_set(err, SM_EINVAL, "%s: the cluster has no nodes", what);
  }
  c->anonymous = anonymous;
  c->vcs = sm_calloc((size_t)ng, sizeof(*c->vcs));
  c->types = sm_calloc((size_t)ng, sizeof(*c->types));
  c->nodes = sm_calloc((size_t)total, sizeof(*c->nodes));
  if (c->vcs == NULL || c->types == NULL || c->nodes == NULL) {
    sm_sim_cluster_free(c);
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  }
  /* Types. */
  for (int i = 0; i < ng; i++) {
    int t = -1;
    for (int j = 0; j < c->ntypes; j++)
      if (strcmp(c->types[j].name, g[i].type) == 0)
        t = j;
    if (t >= 0 && c->types[t].speed != g[i].speed) {
      sm_sim_cluster_free(c);
      return sm_err_set(err, SM_EINVAL, "%s: GPU type '%s' given two speeds",
                        what, g[i].type);
    }
    if (t < 0) {
      c->types[c->ntypes].name = sm_strdup(g[i].type);
      c->types[c->ntypes].speed = g[i].speed;
      if (c->types[c->ntypes].name == NULL) {
        sm_sim_cluster_free(c);
        return sm_err_set(err, SM_ENOMEM, "out of memory");
      }
      c->ntypes++;
    }
  }
  /* VCs and their nodes, grouped. */
  for (int i = 0; i < ng; i++) {
    int v = -1;
    for (int j = 0; j < c->nvcs; j++)
      if (strcmp(c->vcs[j].name, g[i].vc) == 0)
        v = j;
    if (v >= 0)
      continue; /* already laid out with its first group */
    v = c->nvcs++;
    c->vcs[v].name = sm_strdup(g[i].vc);
    if (c->vcs[v].name == NULL) {
      sm_sim_cluster_free(c);
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    }
    c->vcs[v].first_node = k;
    for (int j = i; j < ng; j++) {
      int t;
      if (strcmp(g[j].vc, g[i].vc) != 0)
        continue;
      t = sm__cluster_type_find(c, g[j].type);
      for (int n = 0; n < g[j].nodes; n++) {
        c->nodes[k].vc = v;
        c->nodes[k].type = t;
        c->nodes[k].cap = g[j].gpn;
        k++;
      }
      c->vcs[v].nnodes += g[j].nodes;
      c->vcs[v].gpus += g[j].nodes * g[j].gpn;
      if (g[j].gpn > c->maxcap)
        c->maxcap = g[j].gpn;
    }
    c->gpus += c->vcs[v].gpus;
  }
  c->nnodes = k;
  {
    int gpn = c->nodes[0].cap, uniform = 1;
    for (int i = 1; i < c->nnodes; i++)
      if (c->nodes[i].cap != gpn)
        uniform = 0;
    if (uniform)
      snprintf(c->desc, sizeof(c->desc), "%d nodes x %d GPUs", c->nnodes, gpn);
    else
      snprintf(c->desc, sizeof(c->desc), "%d nodes, %d GPUs", c->nnodes,
               c->gpus);
    if (!anonymous) {
      size_t l = strlen(c->desc);
      snprintf(c->desc + l, sizeof(c->desc) - l, " in %d VCs", c->nvcs);
    }
    if (c->ntypes > 1 || c->types[0].name[0] != '\0') {
      for (int t = 0; t < c->ntypes; t++) {
        size_t l = strlen(c->desc);
        snprintf(c->desc + l, sizeof(c->desc) - l, "%s%s@%g",
                 t == 0 ? ", types " : " ", c->types[t].name,
                 c->types[t].speed);
      }
    }
  }
  *out = c;
  return 0;
}

/* Parses one group "[VC=]NxG[:TYPE[@SPEED]]". */
static int parse_group(const char *s, size_t n, group *g, sm_err *err) {
  char tmp[192], *p, *x, *colon, *at, *end;
  long nodes, gpn;

  if (n == 0 || n >= sizeof(tmp))
    return sm_err_set(err, SM_EINVAL, "cluster spec: bad group '%.*s'",
                      (int)(n > 60 ? 60 : n), s);
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  memset(g, 0, sizeof(*g));
  g->speed = 1.0;
  p = tmp;
  x = strchr(p, '=');
  if (x != NULL) {
    *x = '\0';
    if (*p == '\0' || strlen(p) >= sizeof(g->vc))
      return sm_err_set(err, SM_EINVAL, "cluster spec: bad VC name in '%s'", s);
    strcpy(g->vc, p);
    p = x + 1;
  }
  colon = strchr(p, ':');
  if (colon != NULL) {
    *colon = '\0';
    at = strchr(colon + 1, '@');
    if (at != NULL) {
      *at = '\0';
      if (sm_parse_double(at + 1, &g->speed) != 0 || g->speed <= 0 ||
          g->speed > 1000)
        return sm_err_set(err, SM_EINVAL,
                          "cluster spec: bad speed '%s' (a positive "
                          "number)",
                          at + 1);
    }
    if (colon[1] == '\0' || strlen(colon + 1) >= sizeof(g->type))
      return sm_err_set(err, SM_EINVAL, "cluster spec: bad GPU type");
    strcpy(g->type, colon + 1);
  }
  nodes = strtol(p, &end, 10);
  if (end == p || (*end != 'x' && *end != 'X'))
    return sm_err_set(err, SM_EINVAL,
                      "cluster spec: expected NODESxGPUS, got '%s'", p);
  x = end + 1;
  gpn = strtol(x, &end, 10);
  if (end == x || *end != '\0' || nodes < 1 || nodes > MAX_NODES || gpn < 1 ||
      gpn > MAX_GPN)
    return sm_err_set(err, SM_EINVAL,
                      "cluster spec: expected NODESxGPUS with 1..%d nodes "
                      "and 1..%d GPUs per node, got '%s'",
                      MAX_NODES, MAX_GPN, p);
  g->nodes = (int)nodes;
  g->gpn = (int)gpn;
  return 0;
}

int sm_sim_cluster_parse(const char *spec, sm_sim_cluster **out, sm_err *err) {
  group *g = NULL;
  size_t cap = 0;
  int ng = 0, named = 0, anon = 0, rc;
  const char *p = spec;

  if (spec == NULL || *spec == '\0')
    return sm_err_set(err, SM_EINVAL, "cluster spec: empty");
  for (;;) {
    const char *c = strchr(p, ',');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    if (ng == MAX_GROUPS) {
      sm_free(g);
      return sm_err_set(err, SM_ELIMIT, "cluster spec: too many groups");
    }
    if (SM__GROW(g, (size_t)ng + 1, cap) != 0) {
      sm_free(g);
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    }
    rc = parse_group(p, n, &g[ng], err);
    if (rc != 0) {
      sm_free(g);
      return rc;
    }
    if (g[ng].vc[0])
      named = 1;
    else
      anon = 1;
    ng++;
    if (c == NULL)
      break;
    p = c + 1;
  }
  if (named && anon) {
    sm_free(g);
    return sm_err_set(err, SM_EINVAL,
                      "cluster spec: name every group's VC or none");
  }
  rc = build(g, ng, !named, "cluster spec", out, err);
  sm_free(g);
  if (rc == 0)
    snprintf((*out)->origin, sizeof((*out)->origin), "given as '%.200s'", spec);
  return rc;
}

int sm_sim_cluster_load_vcs(const char *path, int gpn, sm_sim_cluster **out,
                            sm_err *err) {
  sm__lsrc l;
  char *f[16];
  int nf;
  group *g = NULL;
  size_t cap = 0;
  int ng = 0, rc, nodec = -1, gpnc = -1, typec = -1, speedc = -1;

  if (gpn < 1 || gpn > MAX_GPN)
    return sm_err_set(err, SM_EINVAL, "GPUs per node must be 1..%d", MAX_GPN);
  rc = sm__lsrc_open_file(&l, path, err);
  if (rc != 0)
    return rc;
  while ((rc = sm__csv_next(&l, f, 16, 1, &nf, err)) == 1) {
    long long v;
    if (nodec < 0) {
      if (strcmp(f[0], "vc") != 0 && f[0][0] != '\0') {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:1: expected a VC table: vc,nodes (or Helios' "
                        "'vc,node num' or Lucid's ',num')",
                        path);
        break;
      }
      for (int c = 1; c < nf; c++) {
        if (strcmp(f[c], "node num") == 0 || strcmp(f[c], "num") == 0 ||
            strcmp(f[c], "nodes") == 0 || strcmp(f[c], "node_num") == 0)
          nodec = c;
        else if (strcmp(f[c], "gpus_per_node") == 0)
          gpnc = c;
        else if (strcmp(f[c], "gpu_type") == 0)
          typec = c;
        else if (strcmp(f[c], "speed") == 0)
          speedc = c;
      }
      if (nodec < 0) {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:1: expected a VC table: vc,nodes (or Helios' "
                        "'vc,node num' or Lucid's ',num')",
                        path);
        break;
      }
      continue;
    }
    if (nf <= nodec || f[0][0] == '\0') {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: expected a VC name and a "
                      "node count",
                      path, l.lineno);
      break;
    }
    if (ng == MAX_VCS || SM__GROW(g, (size_t)ng + 1, cap) != 0) {
      rc = sm_err_set(err, SM_ELIMIT, "%s: too many VCs", path);
      break;
    }
    memset(&g[ng], 0, sizeof(*g));
    g[ng].speed = 1.0;
    g[ng].gpn = gpn;
    if (strlen(f[0]) >= sizeof(g->vc)) {
      rc = sm_err_set(err, SM_EPARSE, "%s:%ld: VC name too long", path,
                      l.lineno);
      break;
    }
    strcpy(g[ng].vc, f[0]);
    if (sm_parse_i64(f[nodec], &v) != 0 || v < 0 || v > MAX_NODES) {
      rc = sm_err_set(err, SM_EPARSE,
                      "%s:%ld: column %d: '%.40s' is not a node count", path,
                      l.lineno, nodec + 1, f[nodec]);
      break;
    }
    g[ng].nodes = (int)v;
    if (gpnc >= 0 && gpnc < nf && f[gpnc][0] != '\0') {
      if (sm_parse_i64(f[gpnc], &v) != 0 || v < 1 || v > MAX_GPN) {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:%ld: column %d: '%.40s' is not a GPU count", path,
                        l.lineno, gpnc + 1, f[gpnc]);
        break;
      }
      g[ng].gpn = (int)v;
    }
    if (typec >= 0 && typec < nf && strlen(f[typec]) < sizeof(g->type))
      strcpy(g[ng].type, f[typec]);
    if (speedc >= 0 && speedc < nf && f[speedc][0] != '\0') {
      if (sm__parse_num(f[speedc], &g[ng].speed) != 0 || g[ng].speed <= 0) {
        rc = sm_err_set(err, SM_EPARSE,
                        "%s:%ld: column %d: '%.40s' is not a speed", path,
                        l.lineno, speedc + 1, f[speedc]);
        break;
      }
    }
    if (g[ng].nodes > 0)
      ng++;
  }
  sm__lsrc_close(&l);
  if (rc == 0 && ng == 0)
    rc = sm_err_set(err, SM_EPARSE, "%s: no VC with nodes", path);
  if (rc == 0)
    rc = build(g, ng, 0, path, out, err);
  sm_free(g);
  if (rc == 0)
    snprintf((*out)->origin, sizeof((*out)->origin), "the VC table %.200s",
             path);
  return rc;
}

int sm_sim_cluster_auto(const sm_sim_trace *t, int gpn, double load,
                        sm_sim_cluster **out, sm_err *err) {
  double gsec = 0, span = 0, need;
  int maxg = 1, rc;
  group g;

  if (gpn < 1 || gpn > MAX_GPN || !(load > 0 && load <= 1))
    return sm_err_set(err, SM_EINVAL, "bad GPUs per node or load");
  for (size_t i = 0; i < t->n; i++) {
    const sm_sim_job *j = &t->jobs[i];
    gsec += j->duration * j->gpus;
    if (j->submit + j->duration > span)
      span = j->submit + j->duration;
    if (j->gpus > maxg)
      maxg = j->gpus;
  }
  need = span > 0 ? gsec / (span * gpn * load) : 1;
  memset(&g, 0, sizeof(g));
  g.speed = 1.0;
  g.gpn = gpn;
  g.nodes = (int)SM_MIN((double)MAX_NODES,
                        SM_MAX(ceil(need), ceil((double)maxg / gpn)));
  if (g.nodes < 1)
    g.nodes = 1;
  rc = build(&g, 1, 1, "auto cluster", out, err);
  if (rc != 0)
    return rc;
  snprintf((*out)->origin, sizeof((*out)->origin),
           "sized for the trace: %.0f GPU-hours of work over %.1f days of "
           "submissions and run time fill %.2f of %d GPUs%s",
           gsec / 3600, span / 86400, load, g.nodes * gpn,
           ceil(need) < ceil((double)maxg / gpn)
               ? " (enlarged to fit the largest job)"
               : "");
  return 0;
}

/* Appends a group of n nodes like node i, or extends the last group. */
static int carve_push(group *g, int *ng, const sm_sim_cluster *c, int i,
                      const char *vc) {
  const sm__nodedef *d = &c->nodes[i];
  const sm__typedef *t = &c->types[d->type];
  group *last = *ng > 0 ? &g[*ng - 1] : NULL;

  if (last != NULL && strcmp(last->vc, vc) == 0 && last->gpn == d->cap &&
      strcmp(last->type, t->name) == 0 && last->speed == t->speed) {
    last->nodes++;
    return 0;
  }
  memset(&g[*ng], 0, sizeof(*g));
  snprintf(g[*ng].vc, sizeof(g->vc), "%s", vc);
  snprintf(g[*ng].type, sizeof(g->type), "%s", t->name);
  g[*ng].speed = t->speed;
  g[*ng].gpn = d->cap;
  g[*ng].nodes = 1;
  (*ng)++;
  return 0;
}

int sm_sim_cluster_carve(const sm_sim_cluster *c, const char *donor, int nodes,
                         const char *name, sm_sim_cluster **out, sm_err *err) {
  group *g;
  int ng = 0, dv = -1, rc;

  if (name == NULL || *name == '\0' || strlen(name) >= sizeof(g->vc))
    return sm_err_set(err, SM_EINVAL, "carve: bad partition name");
  for (int v = 0; v < c->nvcs; v++) {
    if (strcmp(c->vcs[v].name, name) == 0)
      return sm_err_set(err, SM_EINVAL,
                        "carve: the cluster already has a "
                        "VC '%s'",
                        name);
    if (donor != NULL ? strcmp(c->vcs[v].name, donor) == 0
                      : dv < 0 || c->vcs[v].nnodes > c->vcs[dv].nnodes)
      dv = v;
  }
  if (dv < 0)
    return sm_err_set(err, SM_EINVAL, "carve: no VC '%.40s' in the cluster",
                      donor ? donor : "");
  if (nodes < 1 || nodes >= c->vcs[dv].nnodes)
    return sm_err_set(err, SM_EINVAL,
                      "carve: VC '%s' has %d nodes; cannot give %d and keep "
                      "one",
                      c->vcs[dv].name[0] ? c->vcs[dv].name : "(all)",
                      c->vcs[dv].nnodes, nodes);
  g = sm_calloc((size_t)c->nnodes + 1, sizeof(*g));
  if (g == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int v = 0; v < c->nvcs; v++) {
    const sm__vcdef *d = &c->vcs[v];
    int keep = v == dv ? d->nnodes - nodes : d->nnodes;
    for (int i = d->first_node; i < d->first_node + keep; i++)
      carve_push(g, &ng, c, i, d->name);
  }
  for (int i = c->vcs[dv].first_node + c->vcs[dv].nnodes - nodes;
       i < c->vcs[dv].first_node + c->vcs[dv].nnodes; i++)
    carve_push(g, &ng, c, i, name);
  rc = build(g, ng, c->anonymous, "carve", out, err);
  sm_free(g);
  if (rc == 0) {
    size_t l = strlen((*out)->desc);
    snprintf((*out)->desc + l, sizeof((*out)->desc) - l,
             ", %d node%s of them form VC '%s'", nodes, nodes == 1 ? "" : "s",
             name);
    memcpy((*out)->origin, c->origin, sizeof(c->origin));
  }
  return rc;
}

int sm_sim_cluster_nodes(const sm_sim_cluster *c) {
  return c->nnodes;
}
int sm_sim_cluster_gpus(const sm_sim_cluster *c) {
  return c->gpus;
}
int sm_sim_cluster_vc_count(const sm_sim_cluster *c) {
  return c->nvcs;
}
const char *sm_sim_cluster_vc_name(const sm_sim_cluster *c, int vc) {
  return vc >= 0 && vc < c->nvcs ? c->vcs[vc].name : NULL;
}
int sm_sim_cluster_vc_gpus(const sm_sim_cluster *c, int vc) {
  return vc >= 0 && vc < c->nvcs ? c->vcs[vc].gpus : 0;
}
const char *sm_sim_cluster_describe(const sm_sim_cluster *c) {
  return c->desc;
}
const char *sm_sim_cluster_origin(const sm_sim_cluster *c) {
  return c->origin;
}
void sm_sim_cluster_set_origin(sm_sim_cluster *c, const char *text) {
  snprintf(c->origin, sizeof(c->origin), "%s", text ? text : "");
}

int sm__cluster_vc_find(const sm_sim_cluster *c, const char *name) {
  if (c->anonymous)
    return 0;
  for (int i = 0; i < c->nvcs; i++)
    if (strcmp(c->vcs[i].name, name) == 0)
      return i;
  return -1;
}

int sm__cluster_type_find(const sm_sim_cluster *c, const char *name) {
  for (int i = 0; i < c->ntypes; i++)
    if (strcmp(c->types[i].name, name) == 0)
      return i;
  return -1;
}

/* ==== Per-run state ==== */

static int *bucket(sm_sim *s, int vc, int type, int free) {
  return &s->vcs[vc].heads[type * (s->cl->maxcap + 1) + free];
}

static void unlink_node(sm_sim *s, int i) {
  sm__node *n = &s->nodes[i];

  if (!n->inbucket)
    return;
  if (n->prev >= 0)
    s->nodes[n->prev].next = n->next;
  else
    *bucket(s, n->vc, n->type, n->free) = n->next;
  if (n->next >= 0)
    s->nodes[n->next].prev = n->prev;
  n->prev = n->next = -1;
  n->inbucket = 0;
}

static void link_node(sm_sim *s, int i) {
  sm__node *n = &s->nodes[i];
  int *h = bucket(s, n->vc, n->type, n->free);

  n->prev = -1;
  n->next = *h;
  if (*h >= 0)
    s->nodes[*h].prev = i;
  *h = i;
  n->inbucket = 1;
}

int sm__run_cluster_init(sm_sim *s, sm_err *err) {
  const sm_sim_cluster *c = s->cl;
  size_t per = (size_t)c->ntypes * (size_t)(c->maxcap + 1);

  s->nodes = sm_arena_calloc(&s->arena, (size_t)c->nnodes, sizeof(*s->nodes));
  s->vcs = sm_arena_calloc(&s->arena, (size_t)c->nvcs, sizeof(*s->vcs));
  s->stamp = sm_arena_calloc(&s->arena, (size_t)c->nnodes, sizeof(uint32_t));
  s->plan_node = sm_arena_calloc(&s->arena, (size_t)c->nnodes, sizeof(int));
  s->plan_n = sm_arena_calloc(&s->arena, (size_t)c->nnodes, sizeof(int));
  s->cursor = sm_arena_calloc(&s->arena, (size_t)c->maxcap + 1, sizeof(int));
  if (s->nodes == NULL || s->vcs == NULL || s->stamp == NULL ||
      s->plan_node == NULL || s->plan_n == NULL || s->cursor == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  for (int v = 0; v < c->nvcs; v++) {
    sm__vc *vc = &s->vcs[v];
    vc->heads = sm_arena_alloc(&s->arena, per * sizeof(int));
    vc->type_free = sm_arena_calloc(&s->arena, (size_t)c->ntypes, sizeof(int));
    vc->type_cap = sm_arena_calloc(&s->arena, (size_t)c->ntypes, sizeof(int));
    if (vc->heads == NULL || vc->type_free == NULL || vc->type_cap == NULL)
      return sm_err_set(err, SM_ENOMEM, "out of memory");
    for (size_t k = 0; k < per; k++)
      vc->heads[k] = -1;
  }
  /* Link in reverse so that bucket lists start at the lowest index. */
  for (int i = c->nnodes - 1; i >= 0; i--) {
    sm__node *n = &s->nodes[i];
    n->vc = c->nodes[i].vc;
    n->type = c->nodes[i].type;
    n->cap = n->free = c->nodes[i].cap;
    link_node(s, i);
    s->vcs[n->vc].gpus_up += n->cap;
    s->vcs[n->vc].free += n->cap;
    s->vcs[n->vc].type_free[n->type] += n->cap;
    if (n->cap > s->vcs[n->vc].type_cap[n->type])
      s->vcs[n->vc].type_cap[n->type] = n->cap;
  }
  return 0;
}

/* First node in bucket (v, t, k) not marked in this placement.  Marked
 * nodes are always a prefix of their bucket (a node is marked only right
 * after this returned it, and stays in its bucket until the plan is
 * applied), so a cursor per bucket, reset at the start of each placement
 * (cursor_reset), skips each one once: a placement costs O(nodes it
 * uses + GPUs per node), not O(nodes^2). */
static int first_unmarked(sm_sim *s, int v, int t, int k) {
  int i = s->cursor[k];

  if (i == -2)
    i = *bucket(s, v, t, k);
  while (i >= 0 && s->stamp[i] == s->stampv)
    i = s->nodes[i].next;
  s->cursor[k] = i;
  return i;
}

static void cursor_reset(sm_sim *s) {
  for (int k = 0; k <= s->cl->maxcap; k++)
    s->cursor[k] = -2;
}

static int ensure_alloc(sm_sim *s, sm_sim_job *j) {
  if (j->_run->alloc == NULL) {
    int n = j->gpus;
    if (n > s->cl->nnodes)
      n = s->cl->nnodes;
    j->_run->alloc =
        sm_arena_alloc(&s->arena, (size_t)n * sizeof(sm_sim_alloc));
    if (j->_run->alloc == NULL)
      return SM_ENOMEM;
    j->_run->allocmax = n;
  }
  return 0;
}

static void take(sm_sim *s, sm_sim_job *j, int node, int n) {
  sm__node *d = &s->nodes[node];

  SM_ASSERT(n > 0 && n <= d->free && !d->down);
  SM_ASSERT(j->_run->nalloc < j->_run->allocmax);
  unlink_node(s, node);
  d->free -= n;
  link_node(s, node);
  s->vcs[d->vc].free -= n;
  s->vcs[d->vc].type_free[d->type] -= n;
  j->_run->alloc[j->_run->nalloc].node = node;
  j->_run->alloc[j->_run->nalloc].gpus = n;
  j->_run->nalloc++;
}

/* Plans a consolidated placement on type t; 1 and applied, or 0. */
static int place_consolidate(sm_sim *s, sm_sim_job *j, int v, int t) {
  int need = j->gpus, maxcap = s->cl->maxcap, used = 0;
  int *plan_node = s->plan_node, *plan_n = s->plan_n, np = 0, cap;
  int min_nodes;

  cap = s->vcs[v].type_cap[t];
  if (cap == 0)
    return 0;
  min_nodes = (need + cap - 1) / cap;
  s->stampv++;
  cursor_reset(s);
  while (need > 0) {
    int found = -1, k;
    for (k = need; k <= maxcap && found < 0; k++)
      found = first_unmarked(s, v, t, k);
    if (found >= 0) {
      plan_node[np] = found;
      plan_n[np++] = need;
      need = 0;
      break;
    }
    for (k = maxcap; k >= 1 && found < 0; k--)
      found = first_unmarked(s, v, t, k);
    if (found < 0 || np + 1 > min_nodes)
      return 0;
    s->stamp[found] = s->stampv;
    plan_node[np] = found;
    plan_n[np++] = s->nodes[found].free;
    need -= s->nodes[found].free;
  }
  if (np > min_nodes)
    return 0;
  for (int i = 0; i < np; i++) {
    take(s, j, plan_node[i], plan_n[i]);
    used += plan_n[i];
  }
  SM_ASSERT(used == j->gpus);
  return 1;
}

static int place_first_fit(sm_sim *s, sm_sim_job *j, int v, int t) {
  const sm__vcdef *d = &s->cl->vcs[v];
  int need = j->gpus;

  for (int i = d->first_node; i < d->first_node + d->nnodes && need > 0; i++) {
    sm__node *n = &s->nodes[i];
    int k;
    if (n->type != t || n->down || n->free == 0)
      continue;
    k = SM_MIN(n->free, need);
    take(s, j, i, k);
    need -= k;
  }
  SM_ASSERT(need == 0);
  return 1;
}

int sm__place(sm_sim *s, sm_sim_job *j, int v) {
  const sm_sim_cluster *c = s->cl;
  sm__vc *vc = &s->vcs[v];
  int tried[64], nt = 0;

  if (vc->free < j->gpus)
    return 0;
  if (ensure_alloc(s, j) != 0)
    return SM_ENOMEM;
  j->_run->nalloc = 0;
  /* Types from the fastest down (ties by index), or the requested one. */
  while (nt < c->ntypes && nt < (int)SM_ARRAY_LEN(tried)) {
    int t = -1;
    if (j->_run->reqtype >= 0) {
      if (nt > 0)
        break;
      t = j->_run->reqtype;
    } else {
      for (int k = 0; k < c->ntypes; k++) {
        int seen = 0;
        for (int q = 0; q < nt; q++)
          seen |= tried[q] == k;
        if (!seen && (t < 0 || c->types[k].speed > c->types[t].speed))
          t = k;
      }
    }
    tried[nt++] = t;
    if (vc->type_free[t] < j->gpus)
      continue;
    if (s->cfg.placement == SM_SIM_PLACE_FIRST_FIT
            ? place_first_fit(s, j, v, t)
            : place_consolidate(s, j, v, t)) {
      j->_run->type = t;
      j->_run->pvc = v;
      return 1;
    }
  }
  return 0;
}

void sm__unplace(sm_sim *s, sm_sim_job *j) {
  for (int i = 0; i < j->_run->nalloc; i++) {
    sm__node *n = &s->nodes[j->_run->alloc[i].node];
    int k = j->_run->alloc[i].gpus;
    if (n->down) {
      n->free += k;
    } else {
      unlink_node(s, j->_run->alloc[i].node);
      n->free += k;
      link_node(s, j->_run->alloc[i].node);
      s->vcs[n->vc].free += k;
      s->vcs[n->vc].type_free[n->type] += k;
    }
    SM_ASSERT(n->free <= n->cap);
  }
  /* _nalloc stays: the job's last nodes remain readable after its end
   * (sm_sim_job_nodes), e.g. for isolating a failed node. */
}

void sm__node_set_down(sm_sim *s, int i) {
  sm__node *n = &s->nodes[i];

  if (n->down)
    return;
  unlink_node(s, i);
  n->down = 1;
  s->vcs[n->vc].free -= n->free;
  s->vcs[n->vc].type_free[n->type] -= n->free;
  s->vcs[n->vc].gpus_up -= n->cap;
}

void sm__node_set_up(sm_sim *s, int i) {
  sm__node *n = &s->nodes[i];

  if (!n->down)
    return;
  n->down = 0;
  link_node(s, i);
  s->vcs[n->vc].free += n->free;
  s->vcs[n->vc].type_free[n->type] += n->free;
  s->vcs[n->vc].gpus_up += n->cap;
}
