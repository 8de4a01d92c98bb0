/* resolve.c - the metadata fields from what the readers gathered: the
 * value the program really uses for each field (by layer), derived
 * fields (GPUs from the launcher, global batch = per-device x data-
 * parallel ranks x accumulation, the learning rate as the code rescales
 * it), normalised names, and task and domain from the evidence.  A field
 * that cannot be established stays unknown. */
#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define N(...) ((const char *const[]){__VA_ARGS__, NULL})

static void set_num(sm__ctx *c, sm_meta_field f, double v, const char *ev) {
  if (isfinite(v))
    sm_meta_set_num(&c->res->meta, f, v, ev ? ev : "command");
}

static void set_str(sm__ctx *c, sm_meta_field f, const char *s,
                    const char *ev) {
  if (s != NULL && s[0] != '\0')
    sm_meta_set_str(&c->res->meta, f, s, ev ? ev : "command");
}

static int known(sm__ctx *c, sm_meta_field f) {
  return c->res->meta.f[f].known;
}

static double num_of(sm__ctx *c, sm_meta_field f) {
  return c->res->meta.f[f].num;
}

/* Copies a NULL-terminated key list into left (at most cap - 1 keys, and
 * 63 for keys_init); returns the count. */
static int keys_init_n(const char **left, int cap, const char *const *keys) {
  int n = 0;

  for (; keys[n] && n < cap - 1; n++)
    left[n] = keys[n];
  left[n] = NULL;
  return n;
}

static int keys_init(const char **left, const char *const *keys) {
  return keys_init_n(left, 64, keys);
}

/* Removes from left[0..n) the key that found p, so that the next lookup
 * tries the others; returns the new count, or -1 if no key matches. */
static int drop_key(const char **left, int n, const sm__param *p) {
  int k;

  for (k = 0; k < n; k++)
    if (strcmp(left[k], p->leaf) == 0 ||
        (strchr(left[k], '.') && strstr(p->key, left[k])))
      break;
  if (k == n)
    return -1;
  left[k] = left[--n];
  left[n] = NULL;
  return n;
}

/* The best value among names that is a number > 0 (positive) or >= 0;
 * names whose best value is not usable are dropped and the rest tried. */
static const sm__param *get_num_l(sm__ctx *c, const char *const *names,
                                  int positive, double *out, int min_layer);

static const sm__param *get_num(sm__ctx *c, const char *const *names,
                                int positive, double *out) {
  return get_num_l(c, names, positive, out, 0);
}

static const sm__param *get_num_l(sm__ctx *c, const char *const *names,
                                  int positive, double *out, int min_layer) {
  const char *left[256];
  int n = keys_init_n(left, 256, names);
  while (n > 0) {
    const sm__param *p = sm__param_get_min(c, left, min_layer);
    double v;
    if (p == NULL)
      return NULL;
    if (sm__param_value(c, p, &v) == 0 && (positive ? v > 0 : v >= 0)) {
      *out = v;
      return p;
    }
    /* A null, -1 or non-number at the top hides lower values only when
     * it is the same key: None means "unbounded", not "look further". */
    if (p->kind == SM__V_NULL)
      return NULL;
    n = drop_key(left, n, p);
  }
  return NULL;
}

/* The value of the first key that holds a non-empty string; with
 * members, also an enum member written as a reference to a class
 * attribute (`DistributedStrategy.fsdp`).  *word gets the text to read:
 * the string, or the member's name. */
static const sm__param *get_text(sm__ctx *c, const char *const *names,
                                 int members, const char **word) {
  const char *left[256];
  int n = keys_init_n(left, 256, names);
  while (n > 0) {
    const sm__param *p = sm__param_get(c, left);
    const char *dot;
    if (p == NULL)
      return NULL;
    if (p->kind == SM__V_STR && p->str[0] != '\0') {
      *word = p->str;
      return p;
    }
    if (members && p->kind == SM__V_REF && p->str != NULL &&
        (dot = strrchr(p->str, '.')) != NULL && dot[1] != '\0' &&
        dot != p->str) {
      *word = dot + 1;
      return p;
    }
    n = drop_key(left, n, p);
  }
  return NULL;
}

static const sm__param *get_str(sm__ctx *c, const char *const *names) {
  const char *w;
  return get_text(c, names, 0, &w);
}

/* ==== Presets and factories ==== */

/* Keys one preset application has set: an architecture function's
 * defaults come first, those of the functions it calls fill the rest. */
typedef struct applied {
  const char *k[128];
  int n;
  int calls; /* names followed, bounded */
} applied;

static int applied_has(applied *ap, const char *key) {
  for (int i = 0; i < ap->n; i++)
    if (strcasecmp(ap->k[i], key) == 0)
      return 1;
  if (ap->n < 128)
    ap->k[ap->n++] = key;
  return 0;
}

/* The values a selected name sets: a factory function's (kwargs of the
 * calls it makes: presets over everything), an architecture function's
 * attribute assignments (defaults under the command), the functions it
 * calls, a registered configuration class's defaults, following
 * module-level and registry aliases. */
static void apply_named(sm__ctx *c, const char *name, int depth, applied *ap) {
  if (name == NULL || depth > 8 || ++ap->calls > 64)
    return;
  for (int i = 0; i < c->factories.n; i++) {
    sm__kv kv = SM__AT(c->factories, sm__kv, i);
    if (strcasecmp(kv.group, name) != 0)
      continue;
    if (strncmp(kv.key, "@alias:", 7) == 0) {
      apply_named(c, kv.key + 7, depth + 1, ap);
    } else if (strncmp(kv.key, "@call:", 6) == 0) {
      /* Applied after this function's own values. */
    } else if (strncmp(kv.key, "@class:", 7) == 0) {
      /* The class's defaults, resolved in the registering module. */
      const char *colon = kv.ev ? strrchr(kv.ev, ':') : NULL;
      const char *rel =
          colon ? sm__strndup(c, kv.ev, (size_t)(colon - kv.ev)) : NULL;
      sm__vnode *cls = rel ? sm__py_resolve(c, rel, kv.key + 7) : NULL;
      sm__vnode *obj =
          cls && cls->t == SM__T_CLASS ? sm__py_instantiate(c, cls) : NULL;
      if (obj != NULL)
        sm__vt_publish(c, obj, NULL, SM__L_CONFIG);
    } else if (kv.key[0] == '?') {
      if (!applied_has(ap, kv.key + 1))
        sm__param_num(c, kv.key + 1, kv.num, SM__V_NUM, SM__L_CONFIG, kv.ev);
    } else if (kv.key[0] != '@') {
      applied_has(ap, kv.key);
      sm__param_num(c, kv.key, kv.num, SM__V_NUM, SM__L_PRESET, kv.ev);
    }
  }
  for (int i = 0; i < c->factories.n; i++) {
    sm__kv kv = SM__AT(c->factories, sm__kv, i);
    if (strcasecmp(kv.group, name) == 0 && strncmp(kv.key, "@call:", 6) == 0)
      apply_named(c, kv.key + 6, depth + 1, ap);
  }
}

/* Applies a preset table or a factory function selected by a name value
 * (model_type = 'gpt-mini', arch = 'vit_small'). */
static void apply_presets(sm__ctx *c) {
  static const char *const sel[] = {"model_type",   "arch",        "model",
                                    "model_name",   "init_from",   "network",
                                    "architecture", "model._name", NULL};
  for (int s = 0; sel[s]; s++) {
    const char *names[2] = {sel[s], NULL};
    const sm__param *p = sm__param_get(c, names);
    const char *sel_val;
    applied ap;
    if (p == NULL || p->kind != SM__V_STR)
      continue;
    /* The store may move while presets are added: keep the string. */
    sel_val = p->str;
    memset(&ap, 0, sizeof(ap));
    {
      /* A path or Hub id selects by its last component
       * (checkpoints/org/phi-2 selects the preset phi-2). */
      const char *last = strrchr(sel_val, '/');
      int hit = 0;
      last = last && last[1] ? last + 1 : NULL;
      int ruled_out = 0;
      for (int pass = 0; pass < 2 && !hit; pass++)
        for (int i = 0; i < c->presets.n; i++) {
          sm__kv kv = SM__AT(c->presets, sm__kv, i);
          if (pass == 0 ? strcmp(kv.group, sel_val) == 0
                        : last != NULL && strcasecmp(kv.group, last) == 0) {
            /* A table the code applies only under a condition
             * (`if type_given and not params_given:`) that the job's
             * values rule out. */
            if (kv.guard != NULL && sm__cond_value(c, kv.guard) == 0) {
              ruled_out = 1;
              continue;
            }
            sm__param_num(c, kv.key, kv.num, SM__V_NUM, SM__L_PRESET, kv.ev);
            hit = 1;
          }
        }
      if (ruled_out && !hit)
        c->void_sel = sel[s];
    }
    apply_named(c, sel_val, 0, &ap);
  }
}

/* ==== Strategies the code turns on ==== */

/* Whether the calls that turn strategy sig on are reached with the
 * job's options: 1 at least one is, 0 none is, -1 it depends on
 * something unknown, 2 no call was seen. */
static int use_state(sm__ctx *c, int sig) {
  int any = 0, maybe = 0;
  for (int i = 0; i < c->uses.n; i++) {
    const sm__use *u = &SM__AT(c->uses, sm__use, i);
    int v;
    if (u->sig != sig)
      continue;
    any = 1;
    v = u->guard ? sm__cond_value(c, u->guard) : 1;
    if (v == 1)
      return 1;
    /* In imported code an undecided branch is the library's own choice
     * among strategies (`if self.distributed_type == FSDP:`), not the
     * job's: only the entry's undecided branches may be taken. */
    if (v < 0 && (u->layer >= SM__L_ENTRY || sig == SM__SIG_DDP))
      maybe = 1;
  }
  return !any ? 2 : maybe ? -1 : 0;
}

/* A strategy whose every call sits in a branch the job's options do not
 * take (`if args.distributed: DDP(model)` without distribution) is not
 * used. */
static void prune_strategies(sm__ctx *c) {
  static const int sigs[] = {SM__SIG_DDP,  SM__SIG_FSDP,  SM__SIG_DEEPSPEED,
                             SM__SIG_DP,   SM__SIG_SPAWN, SM__SIG_AMP,
                             SM__SIG_FP16, SM__SIG_BF16,  SM__SIG_LORA};
  for (size_t k = 0; k < SM_ARRAY_LEN(sigs); k++) {
    int sig = sigs[k], from_use = 0;
    if (c->sig[sig] == NULL || use_state(c, sig) != 0)
      continue;
    for (int i = 0; i < c->uses.n && !from_use; i++) {
      const sm__use *u = &SM__AT(c->uses, sm__use, i);
      from_use = u->sig == sig && strcmp(u->ev, c->sig[sig]) == 0;
    }
    if (from_use)
      c->sig[sig] = NULL;
  }
}

/* ==== Resources ==== */

/* A JAX device mesh given as ici_<axis>_parallelism (within a host or
 * slice) and dcn_<axis>_parallelism (across them), maxtext-style: the
 * devices are the product of every axis, the hosts the product of the
 * dcn axes; an axis of -1 takes whatever devices there are, so the count
 * is not fixed.  Returns 1 when the job uses such a mesh. */
static int jax_mesh(sm__ctx *c, double *devices, double *hosts, const char **ev,
                    const char **axis) {
  const char *seen[64];
  int ns = 0, unknown = 0, any = 0;
  double ici = 1, dcn = 1, best_axis = 1;
  *axis = NULL;
  *ev = NULL;
  for (int i = 0; i < c->params.n && ns < 64; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    const char *leaf = p->leaf, *names[2];
    const sm__param *top;
    size_t n = strlen(leaf);
    int dup = 0, is_dcn;
    double v;
    if (n < 16 || strcmp(leaf + n - 12, "_parallelism") != 0 ||
        (strncmp(leaf, "ici_", 4) != 0 && strncmp(leaf, "dcn_", 4) != 0))
      continue;
    for (int k = 0; k < ns && !dup; k++)
      dup = strcmp(seen[k], leaf) == 0;
    if (dup)
      continue;
    seen[ns++] = leaf;
    names[0] = leaf;
    names[1] = NULL;
    top = sm__param_get(c, names);
    any = 1;
    is_dcn = leaf[0] == 'd';
    if (top == NULL || sm__param_value(c, top, &v) != 0) {
      unknown = 1;
      continue;
    }
    if (v < 0) {
      unknown = 1;
      v = 2; /* the auto axis still names the strategy */
    } else if (v > 1 && (*ev == NULL || top->layer >= SM__L_CMD)) {
      *ev = top->ev;
    }
    if (v > 1) {
      /* The strategy: fsdp over tensor over data. */
      const char *ax = leaf + 4;
      int rank = strncmp(ax, "fsdp", 4) == 0     ? 3
                 : strncmp(ax, "tensor", 6) == 0 ? 2
                 : strncmp(ax, "data", 4) == 0   ? 1
                                                 : 0;
      if (rank > best_axis || *axis == NULL) {
        best_axis = rank;
        *axis = rank == 3   ? "fsdp"
                : rank == 2 ? "tensor"
                : rank == 1 ? "ddp"
                            : NULL;
      }
    }
    if (is_dcn)
      dcn *= v;
    else
      ici *= v;
  }
  if (!any)
    return 0;
  *devices = unknown ? 0 : ici * dcn;
  *hosts = unknown ? 0 : dcn;
  return 1;
}

/* A process-count option defaulting to the visible devices that the job
 * leaves at its default. */
static int all_gpus_option(sm__ctx *c, double *set, const char **ev) {
  const char *const names[] = {"__all_gpus_option", NULL};
  const sm__param *p = sm__param_get(c, names), *q;
  const char *opt[2];
  *set = 0;
  if (p == NULL || p->kind != SM__V_STR)
    return 0;
  opt[0] = p->str;
  opt[1] = NULL;
  q = sm__param_get_min(c, opt, SM__L_CONFIG);
  if (q == NULL)
    return 1;
  /* Set by the job: that many processes. */
  if (sm__param_value(c, q, set) != 0 || *set < 1)
    *set = 0;
  *ev = q->ev;
  return 0;
}

/* A device list given to an option (--device 0,1,2,3) that the code
 * makes the visible GPUs (it assigns CUDA_VISIBLE_DEVICES from a value):
 * the number of devices listed. */
static int visible_devices_option(sm__ctx *c, double *n, const char **ev) {
  const sm__param *p;
  int count = 0, digit = 0;
  if (sm__param_get(c, N("__visible_from_code")) == NULL)
    return 0;
  p = sm__param_get_min(c, N("device", "devices", "gpu_ids", "gpu", "gpus"),
                        SM__L_CMD);
  if (p == NULL)
    return 0;
  if (p->kind == SM__V_NUM && p->num >= 0 && p->num == floor(p->num)) {
    *n = 1;
    *ev = p->ev;
    return 1;
  }
  if (p->kind != SM__V_STR || p->str[0] == '\0' || strlen(p->str) > 256)
    return 0;
  for (const char *q = p->str; *q; q++) {
    if (isdigit((unsigned char)*q)) {
      count += !digit;
      digit = 1;
    } else if (*q == ',') {
      digit = 0;
    } else {
      return 0; /* cpu, cuda:0, mps: not a list of indices */
    }
  }
  if (count == 0)
    return 0;
  *n = count;
  *ev = p->ev;
  return 1;
}

static void resources(sm__ctx *c) {
  double nodes = 0, gpus = 0, v, mesh_dev = 0, mesh_hosts = 0;
  const char *nev = NULL, *gev = NULL, *mesh_ev = NULL, *mesh_axis = NULL;
  const sm__param *p;
  int mesh =
      !c->launcher && jax_mesh(c, &mesh_dev, &mesh_hosts, &mesh_ev, &mesh_axis);

  if (mesh) {
    /* The mesh fixes the device count, or leaves it to the hardware. */
    if (mesh_axis != NULL && c->strategy == NULL) {
      c->strategy = mesh_axis;
      c->strategy_ev = mesh_ev ? mesh_ev : "command";
    }
    if (mesh_dev > 0) {
      c->gpus_total = mesh_dev;
      c->gt_ev = mesh_ev ? mesh_ev : "command";
      if (c->nodes == 0 && mesh_hosts > 0) {
        c->nodes = mesh_hosts;
        c->nodes_ev = c->gt_ev;
      }
    } else {
      c->gpus_unfixed = 1;
    }
  }

  if (c->nodes > 0) {
    nodes = c->nodes;
    nev = c->nodes_ev;
  } else if (!c->nodes_unfixed && !c->launcher &&
             (p = get_num(c, sm__keys("nodes"), 1, &v)) != NULL) {
    nodes = v;
    nev = p->ev;
  } else if (!c->nodes_unfixed) {
    nodes = 1;
    nev = "command";
  }
  if (nodes > 0)
    set_num(c, SM_META_NODES, nodes, nev);
  if (c->gpus_total > 0) {
    gpus = c->gpus_total;
    gev = c->gt_ev;
  } else if (c->gpus_per_node > 0 && !c->nodes_unfixed) {
    gpus = c->gpus_per_node * (nodes > 0 ? nodes : 1);
    gev = c->gpn_ev;
  } else if (c->gpus_unfixed || c->nodes_unfixed) {
    gpus = 0;
  } else if (!c->launcher &&
             (p = get_num(c, sm__keys("gpus"), 1, &v)) != NULL) {
    gpus = v * (nodes > 0 ? nodes : 1);
    gev = p->ev;
  } else if (!c->launcher && c->entry != NULL && c->sig[SM__SIG_RELAUNCH]) {
    /* The program runs a launcher on itself over the visible GPUs. */
    gpus = 0;
    c->multiproc = 1;
  } else if (!c->launcher && c->entry != NULL && all_gpus_option(c, &v, &gev)) {
    /* The program starts one process per visible GPU unless told. */
    gpus = 0;
    c->multiproc = 1;
  } else if (!c->launcher && c->entry != NULL && v > 0) {
    /* ... and as many as the job tells it. */
    gpus = v * (nodes > 0 ? nodes : 1);
    if (gpus > 1)
      c->multiproc = 1;
  } else if (!c->launcher && c->entry != NULL &&
             visible_devices_option(c, &v, &gev)) {
    /* One process over the GPUs the option lists. */
    gpus = v;
  } else if (!c->launcher && c->entry != NULL &&
             ((c->sig[SM__SIG_DEVICE_COUNT] &&
               c->sig_layer[SM__SIG_DEVICE_COUNT] >= SM__L_ENTRY) ||
              c->sig[SM__SIG_DEVICE_MAP] || c->sig[SM__SIG_DS_LAUNCHER] ||
              c->sig[SM__SIG_DP] || c->sig[SM__SIG_SPAWN])) {
    /* DataParallel splits each batch over every visible GPU; a script
     * that spawns its own workers starts one per GPU. */
    gpus = 0; /* one process that takes every visible GPU */
    /* device_map="auto" spreads one model over them: one data-parallel
     * rank. */
    if (c->sig[SM__SIG_DEVICE_MAP])
      c->world = 1;
    else if (c->sig[SM__SIG_DP] && !c->sig[SM__SIG_SPAWN] &&
             !c->sig[SM__SIG_DS_LAUNCHER])
      c->one_process = 1;
  } else if (!c->launcher && c->entry != NULL && c->sig[SM__SIG_JAX] &&
             c->sig_layer[SM__SIG_JAX] >= SM__L_ENTRY &&
             (!c->sig[SM__SIG_TORCH] ||
              c->sig_layer[SM__SIG_TORCH] < SM__L_ENTRY)) {
    /* A JAX program (the entry imports jax, not torch; a converter
     * module may): one process over every local accelerator, its batch
     * split over all of them. */
    gpus = 0;
    c->one_process = 1;
  } else if (!c->launcher && c->entry != NULL) {
    gpus = 1;
    gev = "command";
  }
  if (gpus > 0) {
    set_num(c, SM_META_GPUS, gpus, gev);
    c->world = gpus;
  }
}

/* ==== Batch, iterations, learning rate ==== */

static double model_parallel(sm__ctx *c, double *tp, double *pp,
                             const char **ev) {
  const sm__param *p;
  double v;
  *tp = *pp = 1;
  if ((p = get_num(c, sm__keys("tp"), 1, &v)) != NULL) {
    *tp = v;
    *ev = p->ev;
  }
  if ((p = get_num(c, sm__keys("pp"), 1, &v)) != NULL) {
    *pp = v;
    if (*tp <= 1)
      *ev = p->ev;
  }
  return *tp * *pp;
}

static int help_global(sm__ctx *c, const char *leaf) {
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *p = &SM__AT(c->params, sm__param, i);
    if (p->kind == SM__V_STR && strcmp(p->key, "__help.global") == 0 &&
        strcmp(p->str, leaf) == 0)
      return 1;
  }
  return 0;
}

static void batches(sm__ctx *c) {
  const sm__param *pd, *acc, *gb, *bs;
  double per = 0, accum = 1, g, v, tp, pp, mp;
  const char *mev = NULL;
  int micro_style;

  {
    /* Batches filled up to a length (dynamic batching by duration or
     * tokens) have no fixed number of samples. */
    const sm__param *dyn =
        sm__param_get_min(c, sm__role_keys(c, "dynamic_batch"), SM__L_ENTRY);
    if (dyn != NULL && (dyn->kind == SM__V_BOOL || dyn->kind == SM__V_NUM) &&
        dyn->num != 0)
      return;
  }
  pd = get_num(c, sm__role_keys(c, "per_device"), 1, &per);
  if (pd != NULL && strstr(pd->leaf, "micro") == NULL) {
    /* A micro batch beside it is what one device takes per step (verl's
     * micro_batch_size_per_gpu beside train_batch_size). */
    const char *const *keys = sm__role_keys(c, "per_device");
    const char *mk[33];
    const sm__param *m;
    double mv;
    int nm = 0;
    for (int i = 0; keys[i] && nm < 32; i++)
      if (strstr(keys[i], "micro") != NULL)
        mk[nm++] = keys[i];
    mk[nm] = NULL;
    if (nm > 0 && (m = get_num(c, mk, 1, &mv)) != NULL) {
      pd = m;
      per = mv;
    }
  }
  acc = get_num(c, sm__role_keys(c, "accum"), 1, &accum);
  mp = model_parallel(c, &tp, &pp, &mev);
  gb = get_num(c, sm__role_keys(c, "global"), 1, &g);
  if (pd != NULL && gb != NULL && pd == gb)
    pd = NULL; /* one option, known as the total */
  if (pd != NULL && gb == NULL && help_global(c, pd->leaf)) {
    /* The option's help says it is the batch of all GPUs together. */
    gb = pd;
    g = per;
    pd = NULL;
  }
  if (pd != NULL && gb == NULL && c->one_process &&
      strstr(pd->leaf, "micro") == NULL && strstr(pd->leaf, "device") == NULL &&
      strstr(pd->leaf, "gpu") == NULL && strstr(pd->leaf, "local") == NULL &&
      strstr(pd->leaf, "per_") == NULL) {
    /* One process feeds every device (DataParallel scatters the batch, a
     * JAX step shards it): an unqualified batch is the total. */
    gb = pd;
    g = per;
    pd = NULL;
  }
  if (pd != NULL && gb == NULL && c->sig[SM__SIG_BATCH_DIV] &&
      strstr(pd->leaf, "micro") == NULL) {
    /* The code divides the batch option by the world size: it is the
     * total. */
    gb = pd;
    g = per;
    pd = NULL;
  }
  if (pd != NULL)
    set_num(c, SM_META_PER_DEVICE_BATCH_SIZE, per, pd->ev);
  if (gb != NULL) {
    double ranks = c->world > 0 ? c->world / mp : 0;
    set_num(c, SM_META_GLOBAL_BATCH_SIZE, g, gb->ev);
    /* A total batch split over the data-parallel ranks (detectron2's
     * IMS_PER_BATCH, a divided batch option). */
    if (pd == NULL && ranks > 0 && fmod(g, ranks * accum) == 0)
      set_num(c, SM_META_PER_DEVICE_BATCH_SIZE, g / (ranks * accum), gb->ev);
    return;
  }
  if (pd == NULL)
    return;
  /* alpaca-lora style: batch_size is the global batch, micro_batch_size
   * the per-device one; or improved-diffusion style: batch_size per rank,
   * microbatch inside it. */
  micro_style = strstr(pd->leaf, "micro") != NULL;
  bs = NULL;
  if (micro_style) {
    /* Beside a micro batch, the train batch is the full one. */
    const char *const bn[] = {"batch_size", "train_batch_size", NULL};
    bs = get_num(c, bn, 1, &v);
  }
  if (bs != NULL && c->sig[SM__SIG_BATCH_DIV]) {
    /* ... and the code divides it over the ranks: it is the total. */
    set_num(c, SM_META_GLOBAL_BATCH_SIZE, v, bs->ev);
    return;
  }
  if (bs != NULL) {
    if (c->sig[SM__SIG_ACCUM_DIV] || acc == NULL) {
      if (c->sig[SM__SIG_ACCUM_DIV]) {
        set_num(c, SM_META_GLOBAL_BATCH_SIZE, v, bs->ev);
        return;
      }
    }
    if (c->world > 0)
      set_num(c, SM_META_GLOBAL_BATCH_SIZE, v * c->world / mp, bs->ev);
    return;
  }
  if (c->sig[SM__SIG_ACCUM_DIV] && acc != NULL) {
    /* Accumulation is divided over the ranks: the product is global. */
    set_num(c, SM_META_GLOBAL_BATCH_SIZE, per * accum, acc->ev);
    return;
  }
  if (c->world > 0 && fmod(c->world, mp) == 0)
    set_num(c, SM_META_GLOBAL_BATCH_SIZE, per * accum * (c->world / mp),
            c->gpn_ev && strcmp(pd->ev, "command") == 0 ? "command" : pd->ev);
}

/* A length written with its unit ("1000ba", "2ep", "10000sp",
 * "5e9tok", "300it"): 's' steps, 'e' epochs, 'p' samples, 't' tokens;
 * 0 when s is not one. */
static int time_string(const char *s, double *v) {
  static const struct {
    const char *u;
    int kind;
  } units[] = {
      {"ba", 's'},      {"batch", 's'}, {"batches", 's'}, {"it", 's'},
      {"iter", 's'},    {"iters", 's'}, {"step", 's'},    {"steps", 's'},
      {"ep", 'e'},      {"epoch", 'e'}, {"epochs", 'e'},  {"sp", 'p'},
      {"samples", 'p'}, {"tok", 't'},   {"tokens", 't'},  {"t", 't'}};
  char *end;
  if (s == NULL || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
    return 0;
  *v = strtod(s, &end);
  if (end == s || !isfinite(*v) || *v <= 0)
    return 0;
  for (size_t i = 0; i < SM_ARRAY_LEN(units); i++)
    if (strcasecmp(end, units[i].u) == 0)
      return units[i].kind;
  return 0;
}

/* max_iters = max_steps * gradient_accumulation_steps: a length counted
 * in micro-batches, the product of the optimizer steps and the
 * accumulation; the optimizer steps are the other factor. */
static const sm__param *optimizer_steps(sm__ctx *c, const sm__param *s) {
  char a[96], b[96], op[8];
  const char *names[2] = {NULL, NULL};
  const sm__param *q;
  if (s == NULL || s->kind != SM__V_EXPR || s->str == NULL ||
      sscanf(s->str, "%95s %95s %7s", a, b, op) != 3 || strcmp(op, "*") != 0)
    return s;
  {
    /* Exactly three tokens. */
    const char *t = s->str;
    int n = 0, in = 0;
    for (; *t; t++)
      if (*t != ' ' && !in) {
        in = 1;
        n++;
      } else if (*t == ' ') {
        in = 0;
      }
    if (n != 3)
      return s;
  }
  if (sm__key_role(b, "accum") && sm__key_role(a, "steps"))
    names[0] = a;
  else if (sm__key_role(a, "accum") && sm__key_role(b, "steps"))
    names[0] = b;
  else
    return s;
  q = sm__param_get(c, names);
  return q != NULL ? q : s;
}

/* A length option counted in thousands or millions of images
 * (__imgunit.KEY, noted where the option is declared): a budget of
 * samples, whatever value the command gives the option. */
static int image_budget(sm__ctx *c) {
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *u = &SM__AT(c->params, sm__param, i);
    const char *names[2] = {NULL, NULL};
    const sm__param *q;
    double v;
    if (strncmp(u->key, "__imgunit.", 10) != 0 || u->kind != SM__V_NUM)
      continue;
    names[0] = u->key + 10;
    q = sm__param_get(c, names);
    if (q == NULL || q->kind == SM__V_BOOL || sm__param_value(c, q, &v) != 0 ||
        !(v > 0))
      continue;
    sm__param_num(c, "__budget_samples", v * u->num, SM__V_NUM, q->layer,
                  q->ev);
    return 1;
  }
  return 0;
}

/* Is a duration key the job's length, not the length of its samples?
 * A duration inside a data component (AudioDataset.duration, an eval
 * split's test/Dataset.duration, a loader's clip_duration) is seconds of
 * audio or video per example. */
static int training_duration(const sm__param *d) {
  static const char *const data[] = {"data",   "loader",    "test",  "val",
                                     "eval",   "audio",     "video", "clip",
                                     "sample", "transform", NULL};
  char low[256];
  size_t n = (size_t)(d->leaf - d->key);
  if (n >= sizeof(low))
    return 0;
  for (size_t i = 0; i < n; i++)
    low[i] = (char)tolower((unsigned char)d->key[i]);
  low[n] = '\0';
  for (int k = 0; data[k]; k++)
    if (strstr(low, data[k]))
      return 0;
  return 1;
}

/* Is one of the components of p's key above its leaf (split at '.' and
 * '/', case folded) in set, or does one start with prefix (may be NULL)? */
static int key_component_in(const sm__param *p, const char *const *set,
                            const char *prefix) {
  char w[64];
  for (const char *a = p->key; a < p->leaf;) {
    size_t n = strcspn(a, "./");
    if (n < sizeof(w)) {
      for (size_t i = 0; i < n; i++)
        w[i] = (char)tolower((unsigned char)a[i]);
      w[n] = '\0';
      if (prefix != NULL && strncmp(w, prefix, strlen(prefix)) == 0)
        return 1;
      for (int k = 0; set[k]; k++)
        if (strcmp(w, set[k]) == 0)
          return 1;
    }
    a += n;
    if (*a)
      a++;
  }
  return 0;
}

/* Does a key sit in a component that counts something other than
 * training steps (sampling.steps, eval.iterations, diffusion.steps,
 * noise/scheduler horizons)? */
static int off_training_component(const sm__param *p) {
  static const char *const comp[] = {
      "sampling",   "sampler",   "sample",       "eval",     "evaluation",
      "val",        "valid",     "validation",   "test",     "inference",
      "generation", "generate",  "decode",       "decoding", "diffusion",
      "noise",      "scheduler", "lr_scheduler", "warmup",   "ema",
      NULL};
  return key_component_in(p, comp, NULL);
}

/* The training step count: the best value of the role's keys among those
 * that are not a count of another component (train.steps is still found
 * beside a rejected sampling.steps). */
static const sm__param *training_steps(sm__ctx *c) {
  return sm__param_get_unless(c, sm__role_keys(c, "steps"),
                              off_training_component);
}

static int data_duration(const sm__param *d) {
  return !training_duration(d);
}

static void iterations(sm__ctx *c) {
  const sm__param *s = optimizer_steps(c, training_steps(c));
  const sm__param *e = sm__param_get(c, sm__role_keys(c, "epochs"));
  const sm__param *d =
      sm__param_get_unless(c, sm__keys("duration"), data_duration);
  double sv = 0, ev = 0, dv = 0;
  int s_ok = s && sm__param_value(c, s, &sv) == 0 && sv > 0;
  int e_ok = e && sm__param_value(c, e, &ev) == 0 && ev > 0;
  int dk = d && d->kind == SM__V_STR ? time_string(d->str, &dv) : 0;

  if (image_budget(c))
    return;
  if (d != NULL && d->kind == SM__V_NUM && d->num > 0 &&
      d->num == floor(d->num) &&
      !(c->launcher_name && strcmp(c->launcher_name, "composer") == 0)) {
    /* A duration without a unit counts optimizer steps in the trainers
     * that take one (max_duration: 739_328); Composer reads a bare
     * integer as epochs of its own, left open. */
    dk = 's';
    dv = d->num;
  }

  if (dk && (!s_ok || d->layer >= s->layer) &&
      (!e_ok || d->layer >= e->layer)) {
    /* A duration with its unit (Composer-style max_duration: 2ep). */
    if (dk == 's' || dk == 'e') {
      set_num(c, SM_META_ITERATIONS, dv, d->ev);
      set_str(c, SM_META_ITERATION_TYPE, dk == 's' ? "steps" : "epochs", d->ev);
    } else {
      /* A budget of samples or tokens: steps once the batch is known. */
      sm__param_num(c, dk == 'p' ? "__budget_samples" : "__budget_tokens", dv,
                    SM__V_NUM, d->layer, d->ev);
    }
    return;
  }

  if (s_ok && (!e_ok || s->layer >= e->layer)) {
    set_num(c, SM_META_ITERATIONS, sv, s->ev);
    set_str(c, SM_META_ITERATION_TYPE, "steps", s->ev);
  } else if (e_ok && !(s && !s_ok && s->layer > e->layer)) {
    set_num(c, SM_META_ITERATIONS, ev, e->ev);
    set_str(c, SM_META_ITERATION_TYPE, "epochs", e->ev);
  }
}

/* A length given as a budget of samples (Megatron --train-samples) or
 * tokens: the optimizer steps are the budget over the global batch, in
 * sequences or in tokens. */
static void budget_iterations(sm__ctx *c) {
  const sm__param *p;
  double v, g, seq;
  if (known(c, SM_META_ITERATIONS) || !known(c, SM_META_GLOBAL_BATCH_SIZE))
    return;
  g = num_of(c, SM_META_GLOBAL_BATCH_SIZE);
  if (g <= 0)
    return;
  if (((p = get_num_l(c, N("__budget_samples"), 1, &v, 0)) != NULL ||
       (p = get_num_l(c, sm__role_keys(c, "samples"), 1, &v, SM__L_ENTRY)) !=
           NULL) &&
      p->kind != SM__V_BOOL && v >= g) {
    set_num(c, SM_META_ITERATIONS, floor(v / g), p->ev);
    set_str(c, SM_META_ITERATION_TYPE, "steps", p->ev);
    return;
  }
  if (((p = get_num_l(c, N("__budget_tokens"), 1, &v, 0)) != NULL ||
       (p = get_num_l(c, sm__keys("tokens_budget"), 1, &v, SM__L_ENTRY)) !=
           NULL) &&
      get_num_l(c, sm__role_keys(c, "seq_len"), 1, &seq, SM__L_ENTRY) != NULL &&
      seq > 0 && v >= g * seq) {
    set_num(c, SM_META_ITERATIONS, floor(v / (g * seq)), p->ev);
    set_str(c, SM_META_ITERATION_TYPE, "steps", p->ev);
  }
}

static void learning_rate(sm__ctx *c) {
  const char *const *names = sm__role_keys(c, "lr");
  const char *const r1[] = {"__lr_rescale", NULL};
  const char *const r2[] = {"__lr_rescale2", NULL};
  double lr, v;
  const sm__param *p = get_num(c, names, 1, &lr);
  const sm__param *r;

  if (p == NULL)
    return;
  r = sm__param_get(c, r1);
  if (r == NULL) {
    /* A rule inside a call (DINO's scheduler argument): the first one
     * written, not a later print of the inverse. */
    for (int i = 0; i < c->params.n; i++) {
      const sm__param *q = &SM__AT(c->params, sm__param, i);
      if (strcmp(q->key, "__lr_rescale_free") == 0 &&
          (r == NULL || q->layer > r->layer))
        r = q;
    }
  }
  if (r != NULL && sm__param_value(c, r, &v) == 0 && v > 0) {
    const sm__param *r2p = sm__param_get(c, r2);
    /* Copies: adding a value below may move the store. */
    const char *r2s = r2p ? r2p->str : NULL, *r2ev = r2p ? r2p->ev : NULL;
    const char *rev = r->ev;
    if (r2s != NULL) {
      /* lr = lr * accumulation, applied after the first rescale. */
      char num[64];
      const char *at = strstr(r2s, "@prev");
      if (at != NULL) {
        sm__param *t;
        snprintf(num, sizeof(num), "%.17g", v);
        t = sm__param_str(
            c, "__lr_tmp",
            sm__printf(c, "%.*s%s%s", (int)(at - r2s), r2s, num, at + 5),
            SM__V_EXPR, SM__L_CODE, r2ev);
        if (t != NULL && sm__param_value(c, t, &lr) == 0 && lr > 0) {
          set_num(c, SM_META_LR, lr, r2ev);
          return;
        }
      }
    }
    set_num(c, SM_META_LR, v, rev);
    return;
  }
  set_num(c, SM_META_LR, lr, p->ev);
}

/* ==== Architecture ==== */

static int transformer_like(sm__ctx *c, const char *model) {
  static const char *const yes[] = {
      "gpt",    "llama",   "bert",        "vit",   "swin",    "t5",
      "opt",    "mistral", "transformer", "detr",  "deit",    "llava",
      "vicuna", "bloom",   "falcon",      "qwen",  "phi",     "gemma",
      "neox",   "pythia",  "mpt",         "bart",  "whisper", "clip",
      "beit",   "mixtral", "conformer",   "patch", "mae",     NULL};
  static const char *const no[] = {"resnet",       "unet",      "vgg",
                                   "efficientnet", "mobilenet", "densenet",
                                   "convnext",     "regnet",    "inception",
                                   "yolo",         "alexnet",   NULL};
  if (model != NULL) {
    for (int i = 0; no[i]; i++)
      if (strstr(model, no[i]))
        return 0;
    for (int i = 0; yes[i]; i++)
      if (strstr(model, yes[i]))
        return 1;
  }
  return sm__param_get(c, N("n_embd", "n_layer", "num_hidden_layers",
                            "seq_length")) != NULL ||
         sm__param_get_min(c, sm__role_keys(c, "heads"), SM__L_ENTRY) != NULL ||
         c->sig[SM__SIG_CAUSAL_LM] != NULL || c->word_n[SM__W_LM] > 2;
}

/* A two-tower model's shared embedding width (CLIP-style: a top-level
 * embed_dim beside vision_cfg / text_cfg sections of the same file) is
 * the projection both towers map to, not a tower's width. */
static int projection_width(sm__ctx *c, const sm__param *p) {
  static const char *const towers[] = {"vision_cfg.",    "text_cfg.",
                                       "vision_config.", "text_config.",
                                       "image_cfg.",     NULL};
  size_t fl;
  if (strchr(p->key, '.') != NULL ||
      (strcmp(p->leaf, "embed_dim") != 0 &&
       strcmp(p->leaf, "projection_dim") != 0 &&
       strcmp(p->leaf, "proj_dim") != 0) ||
      p->ev == NULL || strchr(p->ev, ':') == NULL)
    return 0;
  fl = (size_t)(strrchr(p->ev, ':') - p->ev);
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *q = &SM__AT(c->params, sm__param, i);
    if (q->ev == NULL || strncmp(q->ev, p->ev, fl) != 0 || q->ev[fl] != ':')
      continue;
    for (int t = 0; towers[t]; t++)
      if (strncmp(q->key, towers[t], strlen(towers[t])) == 0)
        return 1;
  }
  return 0;
}

/* The image tower's width beside a projection width: the transformer
 * the job sizes when that tower counts its layers (a ResNet tower lists
 * its stages, and then no width is a transformer's). */
static void image_tower_width(sm__ctx *c, const sm__param *proj) {
  static const char *const towers[] = {"vision_cfg", "vision_config",
                                       "image_cfg", NULL};
  size_t fl = (size_t)(strrchr(proj->ev, ':') - proj->ev);
  for (int t = 0; towers[t]; t++) {
    const sm__param *w = NULL, *l = NULL;
    for (int i = 0; i < c->params.n; i++) {
      const sm__param *q = &SM__AT(c->params, sm__param, i);
      size_t tl = strlen(towers[t]);
      if (q->ev == NULL || strncmp(q->ev, proj->ev, fl) != 0 ||
          q->ev[fl] != ':' || strncmp(q->key, towers[t], tl) != 0 ||
          q->key[tl] != '.' || q->kind != SM__V_NUM)
        continue;
      if (strcmp(q->key + tl + 1, "width") == 0 ||
          strcmp(q->key + tl + 1, "hidden_size") == 0)
        w = q;
      else if (strcmp(q->key + tl + 1, "layers") == 0 ||
               strcmp(q->key + tl + 1, "num_hidden_layers") == 0)
        l = q;
    }
    if (w != NULL && l != NULL && w->num > 0) {
      set_num(c, SM_META_D_MODEL, w->num, w->ev);
      return;
    }
  }
}

/* RL fine-tuning of language models states the prompt and the response
 * budgets apart (verl data.max_prompt_length + data.max_response_length,
 * OpenRLHF --prompt_max_len + --generate_max_len, TRL max_prompt_length +
 * max_completion_length): the sequence is their sum; one without the
 * other says nothing. */
static void rollout_length(sm__ctx *c) {
  double a = 0, b = 0;
  const sm__param *p =
      get_num_l(c, N("max_prompt_length", "prompt_max_len", "max_prompt_len"),
                1, &a, SM__L_ENTRY);
  const sm__param *q =
      get_num_l(c,
                N("max_response_length", "max_completion_length",
                  "generate_max_len", "response_length"),
                1, &b, SM__L_ENTRY);
  if (p != NULL && q != NULL && p->kind != SM__V_BOOL &&
      q->kind != SM__V_BOOL && a > 0 && b > 0)
    set_num(c, SM_META_SEQ_LEN, a + b, q->ev);
}

static void architecture(sm__ctx *c, const char *model) {
  const sm__param *p;
  double v;
  /* Sizes only from what the job sets: the entry's defaults, configs,
   * the command, presets.  Defaults deep in libraries describe other
   * models. */
  if (!transformer_like(c, model))
    return;
  {
    const char *left[256];
    const sm__param *proj = NULL;
    int n = keys_init_n(left, 256, sm__role_keys(c, "d_model"));
    while ((p = get_num_l(c, left, 1, &v, SM__L_ENTRY)) != NULL &&
           projection_width(c, p)) {
      proj = proj ? proj : p;
      if ((n = drop_key(left, n, p)) <= 0) {
        p = NULL;
        break;
      }
    }
    if (p != NULL && p->kind != SM__V_BOOL)
      set_num(c, SM_META_D_MODEL, v, p->ev);
    else if (proj != NULL)
      image_tower_width(c, proj);
  }
  if ((p = get_num_l(c, sm__role_keys(c, "n_layers"), 1, &v, SM__L_ENTRY)) !=
          NULL &&
      p->kind != SM__V_BOOL)
    set_num(c, SM_META_N_LAYERS, v, p->ev);
  if ((p = get_num_l(c, sm__role_keys(c, "seq_len"), 1, &v, SM__L_ENTRY)) !=
          NULL &&
      p->kind != SM__V_BOOL)
    set_num(c, SM_META_SEQ_LEN, v, p->ev);
  else
    rollout_length(c);
}

/* A GPT-family model named by its size from its dimensions when the code
 * names no model (nanoGPT, Megatron): parameters ~ 12 L d^2 + V d + S d. */
static void gpt_size_name(sm__ctx *c) {
  const sm_meta_value *m = &c->res->meta.f[SM_META_MODEL_NAME];
  const sm_meta_value *d = &c->res->meta.f[SM_META_D_MODEL];
  const sm_meta_value *l = &c->res->meta.f[SM_META_N_LAYERS];
  const sm_meta_value *s = &c->res->meta.f[SM_META_SEQ_LEN];
  const sm__param *vp;
  double vocab = 50257, params, v;
  const char *fam;
  char size[32];

  if (!d->known || !l->known)
    return;
  if (m->known) {
    /* Only a bare family or a GPT class name (GPTModel, MCoreGPTModel,
     * GPT2LMHeadModel): a name with a size or version stays. */
    size_t ml = strlen(m->str);
    int cls = strstr(m->str, "gpt") != NULL && ml > 5 &&
              strcmp(m->str + ml - 5, "model") == 0;
    if (strcmp(m->str, "gpt") != 0 && strcmp(m->str, "gpt2") != 0 && !cls)
      return;
  }
  if (!m->known && c->word_n[SM__W_LM] < 3)
    return;
  fam = (m->known && strstr(m->str, "gpt2")) ? "gpt2" : "gpt";
  if ((vp = get_num(c, sm__keys("vocab"), 1, &v)) != NULL)
    vocab = v;
  /* With an unknown vocabulary the embedding must not decide the size. */
  if (vp == NULL && 12.0 * l->num * d->num < 2.0 * vocab)
    return;
  params = 12.0 * l->num * d->num * d->num + vocab * d->num +
           (s->known ? s->num : 1024) * d->num;
  if (params < 1e9)
    snprintf(size, sizeof(size), "%.0fm", params / 1e6);
  else
    snprintf(size, sizeof(size), "%.1fb", params / 1e9);
  if (strstr(size, ".0b"))
    memmove(strstr(size, ".0b"), "b", 2);
  /* GPT-2 sizes carry the GPT-2 name (gpt2-124m). */
  if (strcmp(size, "124m") == 0 || strcmp(size, "355m") == 0 ||
      strcmp(size, "774m") == 0 || strcmp(size, "1.6b") == 0)
    fam = "gpt2";
  set_str(c, SM_META_MODEL_NAME, sm__printf(c, "%s-%s", fam, size),
          d->evidence);
}

/* A model built from a class or config of a known family is named by
 * its size (data/embed/sizes.tsv): BertForMaskedLM at 1024 x 24 is
 * bert-large.  Library head suffixes (ForCausalLM, LMHeadModel, Model)
 * are not part of the name. */
extern const char sm__embed_sizes[];
extern const unsigned long sm__embed_sizes_len;

static void family_size_name(sm__ctx *c) {
  static const char *const heads[] = {"formaskedlm",
                                      "forcausallm",
                                      "forsequenceclassification",
                                      "forpretraining",
                                      "lmheadmodel",
                                      "forconditionalgeneration",
                                      "fortokenclassification",
                                      "forquestionanswering",
                                      "forimageclassification",
                                      "model",
                                      NULL};
  const sm_meta_value *m = &c->res->meta.f[SM_META_MODEL_NAME];
  const sm_meta_value *d = &c->res->meta.f[SM_META_D_MODEL];
  const sm_meta_value *l = &c->res->meta.f[SM_META_N_LAYERS];
  char fam[64];
  size_t n;
  const char *p, *end;
  const char *hit = NULL;
  size_t hit_len = 0;
  int family_known = 0;
  if (!m->known || strlen(m->str) >= sizeof(fam))
    return;
  snprintf(fam, sizeof(fam), "%s", m->str);
  n = strlen(fam);
  for (int i = 0; heads[i]; i++) {
    size_t k = strlen(heads[i]);
    if (n > k && strcmp(fam + n - k, heads[i]) == 0) {
      fam[n - k] = '\0';
      break;
    }
  }
  /* Only a bare family name is renamed (vit-base stays as it is). */
  for (p = sm__embed_sizes, end = p + sm__embed_sizes_len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    char line[256], *f[4], *save = NULL;
    int nf = 0;
    size_t ll = (size_t)(le - p);
    if (ll < sizeof(line) && p[0] != '#' && ll > 0) {
      memcpy(line, p, ll);
      line[ll] = '\0';
      for (char *t = strtok_r(line, "\t", &save); t && nf < 4;
           t = strtok_r(NULL, "\t", &save))
        f[nf++] = t;
      if (nf == 4 && strcmp(f[0], fam) == 0) {
        family_known = 1;
        if (d->known && l->known && atof(f[1]) == d->num &&
            atof(f[2]) == l->num) {
          hit = p + (f[3] - line);
          hit_len = strlen(f[3]);
        }
      }
    }
    p = nl ? nl + 1 : end;
  }
  if (hit != NULL)
    set_str(c, SM_META_MODEL_NAME, sm__strndup(c, hit, hit_len), m->evidence);
  else if (family_known && strcmp(fam, m->str) != 0)
    set_str(c, SM_META_MODEL_NAME, sm__strdup(c, fam), m->evidence);
}

/* A published checkpoint the job names only (a Hub id, a checkpoint
 * path, a registry name) has the width and depth its model card gives
 * (data/embed/published.tsv) when the job states neither; a job that
 * states one of them otherwise builds another model, and then nothing is
 * added. */
extern const char sm__embed_published[];
extern const unsigned long sm__embed_published_len;

static void published_size(sm__ctx *c, const char *model) {
  const sm_meta_value *m = &c->res->meta.f[SM_META_MODEL_NAME];
  const sm_meta_value *d = &c->res->meta.f[SM_META_D_MODEL];
  const sm_meta_value *l = &c->res->meta.f[SM_META_N_LAYERS];
  const char *p, *end, *ev;
  int line = 0;
  if (!m->known || (d->known && l->known) || !transformer_like(c, model))
    return;
  for (p = sm__embed_published, end = p + sm__embed_published_len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    const char *q = p;
    char row[256], *f[3], *save = NULL;
    int nf = 0;
    size_t ll = (size_t)(le - q);
    p = nl ? nl + 1 : end;
    line++;
    if (ll == 0 || ll >= sizeof(row) || q[0] == '#')
      continue;
    memcpy(row, q, ll);
    row[ll] = '\0';
    for (char *t = strtok_r(row, "\t", &save); t && nf < 3;
         t = strtok_r(NULL, "\t", &save))
      f[nf++] = t;
    if (nf != 3 || fnmatch(f[0], m->str, 0) != 0)
      continue;
    if ((d->known && d->num != atof(f[1])) ||
        (l->known && l->num != atof(f[2])))
      return;
    /* The evidence is the table's line, as for library defaults. */
    ev = sm__printf(c, "data/embed/published.tsv:%d", line);
    if (!d->known)
      set_num(c, SM_META_D_MODEL, atof(f[1]), ev);
    if (!l->known)
      set_num(c, SM_META_N_LAYERS, atof(f[2]), ev);
    return;
  }
}

/* The patch size a ViT-convention name carries (vit_base_patch16_224,
 * mae_vit-base-p16, vit-b-16, DiT-XL/2), or 0. */
static int name_patch(const char *m) {
  const char *p = strstr(m, "patch");
  if (p != NULL && isdigit((unsigned char)p[5]))
    return atoi(p + 5);
  for (p = m; (p = strstr(p, "-p")) != NULL; p++)
    if (isdigit((unsigned char)p[2]))
      return atoi(p + 2);
  if ((p = strrchr(m, '/')) != NULL && isdigit((unsigned char)p[1]))
    return atoi(p + 1);
  if (strncmp(m, "vit-", 4) == 0 && (p = strrchr(m, '-')) != NULL &&
      isdigit((unsigned char)p[1]) && atoi(p + 1) <= 32)
    return atoi(p + 1);
  return 0;
}

/* A vision transformer's sequence: the patch grid of its input, times
 * the clip's temporal patches for video (frames / tubelet), plus the
 * class token of an image classifier.  Only for a plain (non-
 * hierarchical) ViT whose patch and input size the job sets or names;
 * windowed and pooled hierarchies (Swin, MViT) and generators of
 * latents (their input is not the image) stay unknown. */
static void vision_tokens(sm__ctx *c) {
  const sm_meta_value *m = &c->res->meta.f[SM_META_MODEL_NAME];
  static const char *const hier[] = {"swin",   "mvit",     "pvt", "hiera",
                                     "window", "convnext", NULL};
  const sm__param *pp, *ip, *fp;
  double patch = 0, img = 0, frames = 0, tub = 0;
  const char *ev;
  int gen = c->word_n[SM__W_DIFFUSION] > 0;
  if (known(c, SM_META_SEQ_LEN) || !m->known)
    return;
  for (int i = 0; hier[i]; i++)
    if (strstr(m->str, hier[i]))
      return;
  if (!strstr(m->str, "vit") && !strstr(m->str, "patch") &&
      strncmp(m->str, "dit-", 4) != 0 && !strstr(m->str, "-dit-") &&
      !strstr(m->str, "deit") && !strstr(m->str, "beit"))
    return;
  pp = get_num_l(c, N("patch_size", "patch"), 1, &patch, SM__L_ENTRY);
  if (pp == NULL && (patch = name_patch(m->str)) <= 0)
    return;
  /* A generator of latents sees the size the code gives the model
   * (input_size = image_size // 8 beside a VAE), never the image's; and
   * it has no class token. */
  ip = gen ? get_num(c, N("input_size", "latent_size"), 1, &img)
           : get_num_l(c,
                       N("input_size", "img_size", "image_size", "im_size",
                         "train.im_size", "crop_size", "resolution"),
                       1, &img, SM__L_ENTRY);
  if (gen && ip != NULL && (ip->layer > SM__L_CODE || ip->kind != SM__V_EXPR))
    return; /* an option's value is the image's size */
  if (ip == NULL || fmod(img, patch) != 0 || img / patch > 256)
    return;
  ev = ip->ev;
  fp = get_num_l(c, N("num_frames", "clip_len", "num_frame"), 1, &frames,
                 SM__L_ENTRY);
  if (fp != NULL && frames > 1) {
    /* The tubelet is the model class's own default where the job leaves
     * it (VideoMAE-style patch embeddings). */
    if (get_num(c, N("tubelet_size", "tubelet", "temporal_patch_size"), 1,
                &tub) == NULL ||
        fmod(frames, tub) != 0)
      return; /* an unknown temporal patch: the count is not known */
    set_num(c, SM_META_SEQ_LEN, (img / patch) * (img / patch) * (frames / tub),
            ev);
    return;
  }
  set_num(c, SM_META_SEQ_LEN, (img / patch) * (img / patch) + (gen ? 0 : 1),
          ev);
}

/* ==== Precision and parallelism ==== */

/* mmengine: an optimizer wrapper of type AmpOptimWrapper runs the step
 * under autocast (fp16 unless its dtype says bf16).  1 when it decided. */
static int amp_optim_wrapper(sm__ctx *c) {
  const char *const wt[] = {"optim_wrapper.type", NULL};
  const char *const wd[] = {"optim_wrapper.dtype", NULL};
  const sm__param *w = sm__param_get_min(c, wt, SM__L_CONFIG);
  if (w != NULL && w->kind == SM__V_STR &&
      strcmp(w->str, "AmpOptimWrapper") == 0) {
    const sm__param *d = sm__param_get_min(c, wd, SM__L_CONFIG);
    set_str(c, SM_META_PRECISION,
            d != NULL && d->kind == SM__V_STR &&
                    (strstr(d->str, "bf16") || strstr(d->str, "bfloat16"))
                ? "bf16"
                : "fp16",
            w->ev);
    return 1;
  }
  return 0;
}

/* bf16: auto (hidden from lookups, where "auto" defers to another
 * source): bf16 on the GPUs that support it.  1 when it decided. */
static int bf16_auto(sm__ctx *c) {
  const sm__param *a = NULL;
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *q = &SM__AT(c->params, sm__param, i);
    if (q->layer >= SM__L_CONFIG && q->kind == SM__V_STR &&
        strcmp(q->str, "auto") == 0 &&
        (strcmp(q->leaf, "bf16") == 0 || strcmp(q->key, "bf16.enabled") == 0))
      a = q;
  }
  if (a != NULL && c->precision == NULL) {
    const char *const fp[] = {"fp16", NULL};
    const sm__param *f16 = sm__param_get_min(c, fp, a->layer + 1);
    if (f16 == NULL) {
      set_str(c, SM_META_PRECISION, "bf16", a->ev);
      return 1;
    }
  }
  return 0;
}

/* Does a precision value name a dtype or a mode (bf16, float16, 16-mixed,
 * fp32, half, no)? */
static int dtype_word(const char *s) {
  return strstr(s, "bf16") || strstr(s, "bfloat16") || strstr(s, "fp8") ||
         strstr(s, "fp16") || strstr(s, "float16") ||
         strncmp(s, "16", 2) == 0 || strcmp(s, "half") == 0 ||
         strcmp(s, "no") == 0 || strstr(s, "32") || strcmp(s, "float") == 0 ||
         strcasecmp(s, "auto") == 0;
}

/* A value that names no dtype (precision: full_mixed, a policy name)
 * does not hide a dtype the job gives under another of the names
 * (--dtype bfloat16); p when none does. */
static const sm__param *dtype_param(sm__ctx *c, const char *const *names,
                                    const sm__param *p) {
  const char *left[16];
  const sm__param *q = p;
  int n = keys_init_n(left, 16, names);
  while (q != NULL && q->kind == SM__V_STR && !dtype_word(q->str) &&
         (n = drop_key(left, n, q)) > 0)
    q = sm__param_get_min(c, left, SM__L_ENTRY);
  return q != NULL && n > 0 ? q : p;
}

static void precision(sm__ctx *c) {
  /* Each rule: names, and what a true / string value means. */
  const sm__param *best = NULL;
  const char *val = NULL, *saw_false_ev = NULL;
  int saw_false = 0;
  struct {
    const char *const *names;
    const char *if_true;
  } rules[] = {
      {N("bf16", "bf16.enabled", "use_bf16"), "bf16"},
      {N("fp16", "fp16.enabled", "use_fp16", "half", "amp", "use_amp",
         "amp.enabled", "amp_enable", "enable_amp", "mixed_precision_training"),
       "fp16"},
      {N("fp8", "use_fp8", "fp8.enabled", "fp8_format", "fp8_recipe",
         "fp8_mode"),
       "fp8"},
      {N("fp32", "no_amp", "disable_amp", "no_mixed_precision",
         "disable_mixed_precision", "full_precision"),
       "-"},
      /* The compute dtype of a sharding wrapper's mixed precision beats
       * the dtype the parameters are kept in (mixed_precision_param =
       * "bfloat16" beside dtype = "float32"). */
      {N("mixed_precision_param", "param_dtype", "mp_param_dtype",
         "compute_dtype", "amp_dtype"),
       NULL},
      {N("mixed_precision", "precision", "dtype", "torch_dtype",
         "trainer.precision"),
       NULL},
  };
  if (amp_optim_wrapper(c))
    return;
  if (bf16_auto(c))
    return;
  for (size_t i = 0; i < SM_ARRAY_LEN(rules); i++) {
    /* Defaults deep in imported library code describe other uses. */
    const sm__param *p = sm__param_get_min(c, rules[i].names, SM__L_ENTRY);
    const char *v = NULL;
    double x;
    if (p != NULL && rules[i].if_true == NULL && p->kind == SM__V_STR &&
        !dtype_word(p->str))
      p = dtype_param(c, rules[i].names, p);
    if (p == NULL)
      continue;
    if (rules[i].if_true != NULL && strcmp(rules[i].if_true, "-") == 0) {
      /* A switch that turns mixed precision off (--fp32, --no_amp): off,
       * the program's default is half precision. */
      int on = p->kind == SM__V_BOOL || p->kind == SM__V_NUM
                   ? (sm__param_value(c, p, &x) == 0 && x != 0)
                   : p->kind == SM__V_STR && p->str[0] &&
                         strcasecmp(p->str, "false") != 0 &&
                         strcmp(p->str, "0") != 0;
      if (p->kind != SM__V_BOOL && p->kind != SM__V_NUM && p->kind != SM__V_STR)
        continue;
      v = on ? "fp32" : "fp16";
    } else if (rules[i].if_true != NULL) {
      if (p->kind == SM__V_STR && strcasecmp(p->str, "auto") == 0)
        /* bf16: auto -- bf16 where the GPU supports it (A100, H100 and
         * later), the labelled hardware; fp16 only on older GPUs. */
        v = strcmp(rules[i].if_true, "bf16") == 0 ? "bf16" : NULL;
      else if (p->kind == SM__V_STR)
        v = (p->str[0] && strcasecmp(p->str, "false") != 0 &&
             strcmp(p->str, "0") != 0)
                ? rules[i].if_true
                : NULL;
      else if (sm__param_value(c, p, &x) == 0 && x != 0)
        v = rules[i].if_true;
    } else if (p->kind == SM__V_BOOL && p->num != 0) {
      /* mixed_precision: true without a dtype: the library picks bf16 on
       * GPUs that have it (the current ones); code that scales the loss
       * (GradScaler) or casts to the default autocast dtype runs fp16. */
      v = c->sig[SM__SIG_AMP] && !c->sig[SM__SIG_BF16] ? "fp16" : "bf16";
    } else if (p->kind == SM__V_STR) {
      const char *s = p->str;
      if (strstr(s, "bf16") || strstr(s, "bfloat16"))
        v = "bf16";
      else if (strstr(s, "fp8"))
        v = "fp8";
      else if (strstr(s, "fp16") || strstr(s, "float16") ||
               strncmp(s, "16", 2) == 0 || strcmp(s, "half") == 0)
        v = "fp16";
      else if (strcmp(s, "no") == 0 || strstr(s, "32") ||
               strcmp(s, "float") == 0)
        v = "fp32";
    } else if (p->kind == SM__V_NUM) {
      v = p->num == 16 ? "fp16" : p->num == 32 ? "fp32" : NULL;
    }
    if (v == NULL || strcmp(v, "fp32") == 0) {
      saw_false = 1;
      saw_false_ev = p->ev;
    }
    if (v != NULL && (best == NULL || p->layer > best->layer ||
                      (p->layer == best->layer && p->order > best->order &&
                       strcmp(v, "fp32") != 0))) {
      best = p;
      val = v;
    }
  }
  if (c->precision != NULL && (best == NULL || best->layer <= SM__L_CMD)) {
    set_str(c, SM_META_PRECISION, c->precision, c->precision_ev);
    return;
  }
  if (best != NULL && best->layer >= SM__L_CONFIG) {
    set_str(c, SM_META_PRECISION, val, best->ev);
    return;
  }
  /* What the entry script itself does (autocast with bf16, GradScaler). */
  for (int pass = 0; pass < 2; pass++) {
    int min = pass == 0 ? SM__L_ENTRY : 0;
    if (pass == 1 && (best != NULL || saw_false))
      break;
    if (c->sig[SM__SIG_BF16] && c->sig_layer[SM__SIG_BF16] >= min) {
      set_str(c, SM_META_PRECISION, "bf16", c->sig[SM__SIG_BF16]);
      return;
    }
    /* A dtype the entry declares beats autocast of an unknown dtype. */
    if (pass == 0 && best != NULL && best->layer >= SM__L_ENTRY) {
      set_str(c, SM_META_PRECISION, val, best->ev);
      return;
    }
    if (c->sig[SM__SIG_AMP] && c->sig_layer[SM__SIG_AMP] >= min) {
      set_str(c, SM_META_PRECISION, "fp16", c->sig[SM__SIG_AMP]);
      return;
    }
    if (c->sig[SM__SIG_FP16] && c->sig_layer[SM__SIG_FP16] >= min) {
      set_str(c, SM_META_PRECISION, "fp16", c->sig[SM__SIG_FP16]);
      return;
    }
    if (pass == 0 && best != NULL) {
      set_str(c, SM_META_PRECISION, val, best->ev);
      return;
    }
  }
  /* A PyTorch job with no reduced precision, or a precision switch that
   * is off (--amp not given), runs in fp32. */
  if (c->entry != NULL && (c->sig[SM__SIG_TORCH] || saw_false))
    set_str(c, SM_META_PRECISION, "fp32",
            saw_false_ev ? saw_false_ev : sm__ev(c, c->entry, 1));
}

/* Parallelism from how the job's processes are laid out, when no
 * strategy is declared: FSDP or DDP in the code, one process, several
 * PyTorch processes, processes the program starts itself, DataParallel,
 * a launcher's ranks. */
static void process_parallelism(sm__ctx *c) {
  const char *e;
  if (c->sig[SM__SIG_FSDP]) {
    set_str(c, SM_META_PARALLELISM, "fsdp", c->sig[SM__SIG_FSDP]);
    return;
  }
  if (known(c, SM_META_GPUS) && num_of(c, SM_META_GPUS) == 1) {
    set_str(c, SM_META_PARALLELISM, "none",
            c->res->meta.f[SM_META_GPUS].evidence);
    return;
  }
  if (c->sig[SM__SIG_TORCH] &&
      ((known(c, SM_META_GPUS) && num_of(c, SM_META_GPUS) > 1) ||
       (known(c, SM_META_NODES) && num_of(c, SM_META_NODES) > 1))) {
    /* Several processes of a PyTorch job without another strategy. */
    e = c->sig[SM__SIG_DDP];
    set_str(c, SM_META_PARALLELISM, "ddp",
            e                        ? e
            : known(c, SM_META_GPUS) ? c->res->meta.f[SM_META_GPUS].evidence
                                     : c->res->meta.f[SM_META_NODES].evidence);
    return;
  }
  if (!known(c, SM_META_GPUS) && !c->launcher && c->multiproc) {
    /* One process per visible GPU, started by the program itself. */
    set_str(c, SM_META_PARALLELISM, "ddp",
            c->sig[SM__SIG_DDP] ? c->sig[SM__SIG_DDP] : "command");
    return;
  }
  if (!known(c, SM_META_GPUS) && !c->launcher && c->sig[SM__SIG_DDP] &&
      (c->sig[SM__SIG_SPAWN] || use_state(c, SM__SIG_DDP) == 1)) {
    /* Worker processes the script spawns itself, each wrapped in DDP;
     * or DDP that the job's options turn on. */
    set_str(c, SM_META_PARALLELISM, "ddp", c->sig[SM__SIG_DDP]);
    return;
  }
  if (!known(c, SM_META_GPUS) && !c->launcher && c->sig[SM__SIG_DP]) {
    /* One process splitting each batch over the visible GPUs. */
    set_str(c, SM_META_PARALLELISM, "dp", c->sig[SM__SIG_DP]);
    return;
  }
  if (!known(c, SM_META_GPUS) && !c->launcher) {
    if (c->sig[SM__SIG_DEVICE_MAP])
      set_str(c, SM_META_PARALLELISM, "none", c->sig[SM__SIG_DEVICE_MAP]);
    return;
  }
  e = c->sig[SM__SIG_DDP];
  if (e == NULL && (c->sig[SM__SIG_HF_TRAINER] || c->sig[SM__SIG_LIGHTNING]))
    e = c->sig[SM__SIG_HF_TRAINER] ? c->sig[SM__SIG_HF_TRAINER]
                                   : c->sig[SM__SIG_LIGHTNING];
  if (e == NULL && c->launcher)
    e = c->gpn_ev ? c->gpn_ev : "command";
  if (e != NULL) {
    set_str(c, SM_META_PARALLELISM, "ddp", e);
    return;
  }
  if (c->sig[SM__SIG_DP])
    set_str(c, SM_META_PARALLELISM, "dp", c->sig[SM__SIG_DP]);
}

static void parallelism(sm__ctx *c) {
  double tp, pp, zero = -1, v;
  const char *mev = NULL, *zev = NULL, *word = NULL;
  const sm__param *p;
  int ds = 0;

  model_parallel(c, &tp, &pp, &mev);
  /* Defaults of library plugin classes (a DeepSpeed plugin's stage)
   * are not what the job sets. */
  if ((p = get_num_l(c,
                     N("zero_optimization.stage", "zero_stage",
                       "deepspeed_stage", "zero.stage"),
                     0, &v, SM__L_ENTRY)) != NULL) {
    zero = v;
    zev = p->ev;
  }
  {
    const sm__param *dp =
        sm__param_get_min(c, N("deepspeed", "deepspeed_config"), SM__L_ENTRY);
    ds = dp != NULL && dp->kind == SM__V_STR && dp->str[0] != '\0';
  }
  ds = ds || c->sig[SM__SIG_DEEPSPEED] != NULL || zero >= 0;
  if ((p = get_str(c, N("train_engine", "engine", "training_engine",
                        "dist_engine"))) != NULL) {
    /* An engine option decides over a DeepSpeed config that is only
     * passed along (wenet's --train_engine torch_ddp). */
    const char *s2 = p->str;
    if (strstr(s2, "ddp") || strcmp(s2, "torch") == 0) {
      set_str(c, SM_META_PARALLELISM, "ddp", p->ev);
      return;
    }
    if (strstr(s2, "fsdp")) {
      set_str(c, SM_META_PARALLELISM, "fsdp", p->ev);
      return;
    }
  }
  if (tp > 1 || pp > 1) {
    if (zero > 0)
      set_str(c, SM_META_PARALLELISM,
              sm__printf(c, "megatron_tp%d_pp%d_zero%d", (int)tp, (int)pp,
                         (int)zero),
              mev);
    else
      set_str(c, SM_META_PARALLELISM,
              sm__printf(c, "megatron_tp%d_pp%d", (int)tp, (int)pp), mev);
    return;
  }
  if (ds && zero >= 0) {
    set_str(c, SM_META_PARALLELISM,
            sm__printf(c, "deepspeed_zero%d", (int)zero), zev);
    return;
  }
  {
    /* A sharded data-parallel degree (torchtitan-style
     * data_parallel_shard_degree, dp_shard): -1 shards over every rank
     * left, above 1 over that many; 1 is no sharding. */
    const sm__param *sd = sm__param_get_min(
        c,
        N("data_parallel_shard_degree", "dp_shard", "dp_shard_degree",
          "fsdp_degree", "fsdp_size", "shard_degree"),
        SM__L_ENTRY);
    double d;
    if (sd != NULL && (sd->kind == SM__V_NUM || sd->kind == SM__V_EXPR) &&
        sm__param_value(c, sd, &d) == 0 &&
        (d == -1 || (d > 1 && (c->world <= 0 || c->world > 1)))) {
      set_str(c, SM_META_PARALLELISM, "fsdp", sd->ev);
      return;
    }
  }
  {
    /* fsdp: "full_shard auto_wrap" or a list of such options. */
    const char *const fk[] = {"fsdp", NULL};
    const sm__param *f = sm__param_get_min(c, fk, SM__L_CONFIG);
    if (f != NULL && ((f->kind == SM__V_STR && f->str[0] &&
                       strcasecmp(f->str, "false") && strcmp(f->str, "0")) ||
                      (f->kind == SM__V_LIST && f->list_n > 0) ||
                      (f->kind == SM__V_BOOL && f->num != 0))) {
      set_str(c, SM_META_PARALLELISM, "fsdp", f->ev);
      return;
    }
  }
  if (!known(c, SM_META_GPUS) && !c->launcher && c->world == 1 &&
      c->sig[SM__SIG_DEVICE_MAP]) {
    /* One process with the model spread over the visible GPUs. */
    set_str(c, SM_META_PARALLELISM, "none", c->sig[SM__SIG_DEVICE_MAP]);
    return;
  }
  if (known(c, SM_META_GPUS) && num_of(c, SM_META_GPUS) == 1 &&
      c->strategy == NULL) {
    /* One process shards nothing. */
    set_str(c, SM_META_PARALLELISM, "none",
            c->res->meta.f[SM_META_GPUS].evidence);
    return;
  }
  if (c->strategy != NULL) {
    set_str(c, SM_META_PARALLELISM, c->strategy, c->strategy_ev);
    return;
  }
  if ((p = get_text(c,
                    N("strategy", "trainer.strategy", "distributed_backend",
                      "distributed_strategy", "dist_strategy",
                      "parallel_strategy"),
                    1, &word)) != NULL) {
    const char *s = word;
    if (strstr(s, "fsdp"))
      set_str(c, SM_META_PARALLELISM, "fsdp", p->ev);
    else if (strstr(s, "deepspeed")) {
      const char *st = strstr(s, "stage_");
      set_str(c, SM_META_PARALLELISM,
              st ? sm__printf(c, "deepspeed_zero%c", st[6]) : "deepspeed",
              p->ev);
    } else if (strstr(s, "ddp"))
      set_str(c, SM_META_PARALLELISM, "ddp", p->ev);
    if (known(c, SM_META_PARALLELISM))
      return;
  }
  if ((p = get_text(c,
                    N("sharding_strategy", "fsdp_sharding_strategy",
                      "fsdp_config.sharding_strategy"),
                    1, &word)) != NULL &&
      p->layer >= SM__L_CONFIG && strcasestr(word, "shard") != NULL &&
      strcasestr(word, "no_shard") == NULL) {
    /* A sharding strategy the job's own config or command sets
     * (sharding_strategy: FULL_SHARD, HYBRID_SHARD): FSDP; a library
     * class's default says nothing. */
    set_str(c, SM_META_PARALLELISM, "fsdp", p->ev);
    return;
  }
  if (ds) {
    set_str(c, SM_META_PARALLELISM, "deepspeed",
            c->sig[SM__SIG_DEEPSPEED] ? c->sig[SM__SIG_DEEPSPEED] : "command");
    return;
  }
  process_parallelism(c);
}

/* ==== Names ==== */

static int size_token(const char *s) {
  /* "125M", "7B", "1.3b" */
  size_t n = strlen(s);
  if (n < 2 || (s[n - 1] != 'm' && s[n - 1] != 'M' && s[n - 1] != 'b' &&
                s[n - 1] != 'B'))
    return 0;
  for (size_t i = 0; i + 1 < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
      return 0;
  return 1;
}

/* torch's containers (model: !new:torch.nn.ModuleList [...]) hold the
 * model's parts; they name no model. */
static int container_class(const char *v) {
  static const char *const names[] = {
      "ModuleList",    "ModuleDict",    "Sequential", "Module",
      "ParameterList", "ParameterDict", NULL};
  const char *l = strrchr(v, '.');
  l = l ? l + 1 : v;
  for (int i = 0; names[i]; i++)
    if (strcmp(l, names[i]) == 0)
      return 1;
  return 0;
}

/* A model name found, with its evidence and the alias table's task and
 * domain hints. */
typedef struct pick {
  const char *name, *ev, *t, *d;
} pick;

/* An option documented as taking a model (its default names one): the
 * value the job gives it, or the default. */
static void model_from_option(sm__ctx *c, pick *m) {
  const sm__param *p;
  /* An option documented as taking a model (its default names one):
   * the value the job gives it, or the default. */
  for (int i = 0; i < c->params.n && m->name == NULL; i++) {
    const sm__param *h = &SM__AT(c->params, sm__param, i);
    const char *opt[2];
    if (h->kind != SM__V_STR || strcmp(h->key, "__model_option") != 0)
      continue;
    opt[0] = h->str;
    opt[1] = NULL;
    p = sm__param_get(c, opt);
    if (p != NULL && p->kind == SM__V_STR && p->str[0] != '\0') {
      /* A checkpoint named after a known model adds a size or a dtype
       * to its name: the model it names. */
      m->name =
          sm__is_known_model(c, p->str) ? NULL : sm__model_prefix(c, p->str);
      if (m->name == NULL)
        m->name = sm__norm_model(c, p->str, &m->t, &m->d);
      if (m->name != NULL)
        m->ev = p->ev;
    }
  }
}

/* Hydra/Lightning: the class the model config instantiates. */
/* Is a class (by its dotted name) a training module that wraps the
 * network it trains: LitModel, ClassificationTask, DiffusionSystem,
 * ImageModule, a wrapper or trainer? */
static int training_module(const char *cls) {
  static const char *const ends[] = {
      "module", "task", "system", "trainer", "wrapper", "lightning", NULL};
  const char *b = strrchr(cls, '.');
  char low[128];
  size_t n;
  b = b ? b + 1 : cls;
  n = strlen(b);
  if (n == 0 || n >= sizeof(low))
    return 1;
  for (size_t i = 0; i <= n; i++)
    low[i] = (char)tolower((unsigned char)b[i]);
  /* LitModel, PLModule, PlNet: the prefix as a CamelCase word of its
   * own (LiteHRNet and PlainNet are networks). */
  if ((strncmp(low, "lit", 3) == 0 && isupper((unsigned char)b[3])) ||
      (strncmp(low, "pl", 2) == 0 && isupper((unsigned char)b[2])))
    return 1;
  for (int k = 0; ends[k]; k++) {
    size_t e = strlen(ends[k]);
    if (n >= e && strcmp(low + n - e, ends[k]) == 0)
      return 1;
  }
  return 0;
}

static void model_from_target(sm__ctx *c, pick *m) {
  /* Hydra/Lightning: the class the model config instantiates; a
   * network inside a training module (model.net._target_) is the
   * model, the module around it only trains it. */
  static const char *const inner[] = {"model.net._target_",
                                      "model.model._target_",
                                      "model.network._target_",
                                      "model.backbone._target_",
                                      "model._target_",
                                      "model.class_path",
                                      NULL};
  int k = 0;
  {
    /* The network inside is the model only when the outer class is a
     * training module (a LightningModule, a *Task, a *System); an outer
     * detector (DINO(backbone=ResNet(...))) is the model itself. */
    const char *names[2] = {"model._target_", NULL};
    const sm__param *q = sm__param_get_min(c, names, SM__L_CONFIG);
    if (q != NULL && q->kind == SM__V_STR &&
        strcmp(q->key, "model._target_") == 0 && !training_module(q->str))
      while (inner[k] && strcmp(inner[k], "model._target_") != 0)
        k++; /* from model._target_ on */
  }
  for (; inner[k] && m->name == NULL; k++) {
    const char *names[2] = {inner[k], NULL};
    const sm__param *q = sm__param_get_min(c, names, SM__L_CONFIG);
    const char *cls;
    if (q == NULL || q->kind != SM__V_STR || strcmp(q->key, inner[k]) != 0 ||
        container_class(q->str))
      continue;
    cls = strrchr(q->str, '.');
    m->name = sm__norm_model(c, cls ? cls + 1 : q->str, &m->t, &m->d);
    if (m->name != NULL)
      m->ev = q->ev;
  }
}

/* A Hub id of a known model given to any option of the job. */
static void model_from_hub_id(sm__ctx *c, pick *m) {
  /* A Hub id of a known model given to any option of the job
   * (--pretrain org/Llama-3-8B, pretrained: org/model), by layer;
   * the models of auxiliary roles (tokenizer, reference, reward,
   * teacher, draft) and data or output paths are not the model. */
  static const char *const aux[] = {
      "token", "ref",    "reward",       "critic",    "teacher", "draft",
      "data",  "output", "save",         "log",       "cache",   "eval",
      "judge", "vae",    "text_encoder", "processor", NULL};
  const sm__param *best = NULL;
  for (int i = 0; i < c->params.n; i++) {
    const sm__param *q = &SM__AT(c->params, sm__param, i);
    const char *slash;
    int skip = 0;
    if (q->layer < SM__L_CONFIG || q->kind != SM__V_STR ||
        (best != NULL && q->layer < best->layer))
      continue;
    slash = strchr(q->str, '/');
    if (slash == NULL || slash == q->str || slash[1] == '\0' ||
        strchr(slash + 1, '/') != NULL || q->str[0] == '.' ||
        strlen(q->str) > 96 || strchr(q->str, ' ') != NULL)
      continue;
    for (int k = 0; aux[k] && !skip; k++)
      skip = strstr(q->key, aux[k]) != NULL;
    if (!skip && sm__is_known_model(c, q->str))
      best = q;
  }
  if (best != NULL) {
    m->name = sm__norm_model(c, best->str, &m->t, &m->d);
    m->ev = best->ev;
  }
}

/* Pretrained weights named after a known model. */
static void model_from_weights(sm__ctx *c, pick *m) {
  const sm__param *p;
  /* Pretrained weights named after a known model (--weights
   * yolov5m.pt); a backbone checkpoint (R-50.pkl) is not the model. */
  p = get_str(c, N("weights", "pretrained_weights", "pretrained"));
  if (p != NULL && sm__is_known_model(c, p->str)) {
    m->name = sm__norm_model(c, p->str, &m->t, &m->d);
    m->ev = p->ev;
  }
}

/* A model config file named after a known model. */
static void model_from_cfg_option(sm__ctx *c, pick *m) {
  const sm__param *p;
  /* A model config file named after a known model (--cfg yolov5n.yaml,
   * --config configs/resnet50.yaml). */
  p = get_str(c, N("cfg", "config", "model_cfg", "model_config"));
  if (p != NULL && sm__is_known_model(c, p->str)) {
    m->name = sm__norm_model(c, p->str, &m->t, &m->d);
    m->ev = p->ev;
    return;
  }
  /* A base configuration chosen from a closed set the option declares
   * (--cfg=stylegan3-t among click.Choice([...])): the preset is the
   * model, given on the command, not a file. */
  p = get_str(c, N("cfg", "config", "preset", "base_config"));
  if (p != NULL && p->layer >= SM__L_CMD && p->str[0] &&
      strpbrk(p->str, "/.=") == NULL &&
      sm__param_get(c, N(sm__printf(c, "__choices.%s", p->leaf))) != NULL) {
    m->name = sm__norm_model(c, p->str, &m->t, &m->d);
    m->ev = p->ev;
  }
}

/* Names in code: from_pretrained("..."), timm / torchvision; the
 * first model the code builds and a class of the repository are kept
 * for last (*ctor, *cls). */
static void model_from_code(sm__ctx *c, pick *m, const sm__cand **ctor,
                            const sm__cand **cls) {
  /* Names in code: from_pretrained("..."), timm / torchvision. */
  const sm__cand *best = NULL;
  for (int i = 0; i < c->models.n; i++) {
    const sm__cand *k = &SM__AT(c->models, sm__cand, i);
    if (strncmp(k->name, "ctor:", 5) == 0) {
      /* The first model the job's code builds, entry first; not one
       * in a branch the job's options rule out. */
      if (((*ctor) == NULL || k->weight > (*ctor)->weight) &&
          (k->guard == NULL || sm__cond_value(c, k->guard) != 0))
        (*ctor) = k;
      continue;
    }
    if (strncmp(k->name, "class:", 6) == 0) {
      /* Only a class the repository defines names the model. */
      int local = 0;
      for (int j = 0; j < c->classes.n && !local; j++)
        local = strcmp(SM__AT(c->classes, const char *, j), k->name + 6) == 0;
      if (!local)
        continue;
    }
    if (best == NULL || k->weight > best->weight)
      best = k;
  }
  /* A class of the repository comes after a config named after a
   * size. */
  if (best != NULL && strncmp(best->name, "class:", 6) == 0) {
    *cls = best;
    best = NULL;
  }
  if (best != NULL) {
    m->name = sm__norm_model(
        c, strncmp(best->name, "class:", 6) == 0 ? best->name + 6 : best->name,
        &m->t, &m->d);
    m->ev = best->ev;
  }
}

/* The config file the command names, in model-zoo layouts. */
static void model_from_config_name(sm__ctx *c, pick *m) {
  /* Model-zoo layouts name a model by its config file
   * (maskformer2_R50_bs16_50ep.yaml, dbnet_resnet50_1200e_icdar2015.py):
   * the file the command names, unless its name is generic. */
  static const char *const generic[] = {
      "config",         "configs",    "train",       "base",
      "default",        "defaults",   "main",        "run",
      "local",          "setup",      "local_setup", "example",
      "example_config", "settings",   "params",      "hparams",
      "args",           "experiment", NULL};
  static const char *const generic_pre[] = {"base", "_", "hyp", "default",
                                            NULL};
  const char *b = strrchr(c->primary_cfg, '/'), *dot;
  char stem[128];
  int gen = 0;
  b = b ? b + 1 : c->primary_cfg;
  dot = strrchr(b, '.');
  snprintf(stem, sizeof(stem), "%.*s", dot ? (int)(dot - b) : (int)strlen(b),
           b);
  {
    /* train_gpt2.py names gpt2 */
    static const char *const pre[] = {
        "train_", "finetune_", "pretrain_", "sft_", "config_", "cfg_", NULL};
    for (int i = 0; pre[i]; i++)
      if (strncasecmp(stem, pre[i], strlen(pre[i])) == 0) {
        memmove(stem, stem + strlen(pre[i]), strlen(stem + strlen(pre[i])) + 1);
        break;
      }
  }
  for (int i = 0; generic[i] && !gen; i++)
    gen = strcasecmp(stem, generic[i]) == 0;
  for (int i = 0; generic_pre[i] && !gen; i++)
    gen = strncasecmp(stem, generic_pre[i], strlen(generic_pre[i])) == 0;
  /* A name with a size or a model token, not only a dataset. */
  {
    /* Launcher and runtime configs (DeepSpeed, accelerate) name no
     * model. */
    const sm__vnode *t = sm__cfg_tree(c, c->primary_cfg);
    if (t != NULL && (sm__vt_get(t, "zero_optimization") ||
                      sm__vt_get(t, "train_micro_batch_size_per_gpu") ||
                      sm__vt_get(t, "distributed_type")))
      gen = 1;
  }
  if (!gen && strlen(stem) > 3 &&
      sm__known_dataset(c, stem, NULL, NULL) == NULL) {
    m->name = sm__norm_model(c, stem, &m->t, &m->d);
    m->ev = sm__ev(c, c->primary_cfg, 1);
  }
}

/* A config file named after the size. */
static void model_from_size_config(sm__ctx *c, pick *m) {
  /* A config file named after the size: configs/125M.yml,
   * configs/llama/7B.yml. */
  for (int i = 0; i < c->read_paths.n && m->name == NULL; i++) {
    const char *path = SM__AT(c->read_paths, const char *, i);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    char stem[64];
    if (dot == NULL || (strcmp(dot, ".yml") && strcmp(dot, ".yaml")) ||
        (size_t)(dot - base) >= sizeof(stem))
      continue;
    snprintf(stem, sizeof(stem), "%.*s", (int)(dot - base), base);
    if (!size_token(stem))
      continue;
    if (slash != NULL) {
      const char *ps = slash;
      while (ps > path && ps[-1] != '/')
        ps--;
      if (strncmp(ps, "configs/", 8) != 0 && strncmp(ps, "config/", 7) &&
          strncmp(ps, "conf/", 5) != 0)
        m->name = sm__norm_model(
            c, sm__printf(c, "%.*s-%s", (int)(slash - ps), ps, stem), &m->t,
            &m->d);
    }
    if (m->name == NULL)
      m->name = sm__norm_model(c, stem, &m->t, &m->d);
    m->ev = sm__printf(c, "%s:1", path);
  }
}

/* The model: the sources in order of trust, the first that names one. */
/* A bare family name (arch: slowfast) beside a model-zoo config named
 * after that family with its variant (SLOWFAST_4x16_R50.yaml): the
 * config's name says which member of the family the job trains. */
static void family_in_config_name(sm__ctx *c, pick *m) {
  const char *b = strrchr(c->primary_cfg, '/'), *dot;
  char stem[96];
  size_t fl = strlen(m->name), n;
  int digit = 0;
  b = b ? b + 1 : c->primary_cfg;
  dot = strrchr(b, '.');
  n = dot ? (size_t)(dot - b) : strlen(b);
  if (fl < 3 || n <= fl + 1 || n >= sizeof(stem))
    return;
  for (size_t i = 0; i < fl; i++)
    if (isdigit((unsigned char)m->name[i]))
      return; /* a name with a size or version stays */
  for (size_t i = 0; i < n; i++) {
    stem[i] = (char)tolower((unsigned char)b[i]);
    digit |= isdigit((unsigned char)b[i]) != 0;
  }
  stem[n] = '\0';
  if (!digit || strncmp(stem, m->name, fl) != 0 ||
      (stem[fl] != '_' && stem[fl] != '-'))
    return;
  {
    const char *t = NULL, *d = NULL, *nm = sm__norm_model(c, stem, &t, &d);
    if (nm != NULL) {
      m->name = nm;
      m->ev = sm__ev(c, c->primary_cfg, 1);
    }
  }
}

/* mmengine-style backbones name a variant of their type: dict(type=
 * 'SwinTransformer', arch='tiny') is swin-tiny, MAEViT with arch 'b' is
 * maevit-b.  The value as it is otherwise. */
static const char *family_variant(sm__ctx *c, const sm__param *p) {
  char key[256], fam[64];
  const char *names[2] = {key, NULL};
  const sm__param *t;
  size_t pl = (size_t)(p->leaf - p->key), n;
  if (strcmp(p->leaf, "arch") != 0 || strlen(p->str) > 8 || pl == 0 ||
      pl + 5 >= sizeof(key) || strchr(p->str, '/') || strchr(p->str, '_'))
    return p->str;
  snprintf(key, sizeof(key), "%.*stype", (int)pl, p->key);
  t = sm__param_get_min(c, names, SM__L_CONFIG);
  if (t == NULL || t->kind != SM__V_STR || !isupper((unsigned char)t->str[0]) ||
      strlen(t->str) >= sizeof(fam) || strchr(t->str, '.'))
    return p->str;
  for (n = 0; t->str[n]; n++)
    fam[n] = (char)tolower((unsigned char)t->str[n]);
  fam[n] = '\0';
  if (strcmp(fam, "visiontransformer") == 0)
    snprintf(fam, sizeof(fam), "vit");
  else if (n > 11 && strcmp(fam + n - 11, "transformer") == 0)
    fam[n - 11] = '\0';
  return fam[0] ? sm__printf(c, "%s-%s", fam, p->str) : p->str;
}

/* Does a model key sit in the settings of an auxiliary network, the
 * critic a generator is trained against (D_kwargs.architecture,
 * network_d.type, discriminator.arch, netD), rather than the model the
 * job trains? */
static int auxiliary_network(const sm__param *p) {
  static const char *const aux[] = {"d_kwargs", "network_d", "net_d", "netd",
                                    "d_net",    "critic",    "disc",  NULL};
  return key_component_in(p, aux, "discriminator");
}

/* Is a model value a run label rather than a name?  `--model_id` names
 * a Hub model (org/name) in some trainers and the run (ETTh1_96_96,
 * test) beside `--model` in others: without a slash and unknown to the
 * alias table it names nothing. */
static int run_label(const sm__param *p, const char *hint_t,
                     const char *hint_d) {
  return strcmp(p->leaf, "model_id") == 0 && strchr(p->str, '/') == NULL &&
         hint_t == NULL && hint_d == NULL;
}

static void model_name(sm__ctx *c, const char **model_out) {
  const char *const *keys = sm__keys("model");
  const sm__param *p;
  const sm__cand *class_cand = NULL, *ctor_cand = NULL;
  pick m = {NULL, NULL, NULL, NULL}, deep = {NULL, NULL, NULL, NULL};
  const char *left[64];
  int n = keys_init(left, keys);
  /* The first usable string among the keys, by layer.  A value set deep
   * in an imported module (a converter's kwargs.architecture = 'orig')
   * names the model only when nothing on the job's own path does. */
  while (n > 0 && m.name == NULL) {
    p = sm__param_get(c, left);
    if (p == NULL)
      break;
    if (p->layer < SM__L_ENTRY && !p->opt) {
      if (deep.name == NULL && p->kind == SM__V_STR &&
          !container_class(p->str) && !auxiliary_network(p)) {
        deep.name = sm__norm_model(c, p->str, &deep.t, &deep.d);
        deep.ev = p->ev;
      }
      n = drop_key(left, n, p);
      if (n < 0)
        break;
      continue;
    }
    if (p->kind == SM__V_STR && !container_class(p->str) &&
        !auxiliary_network(p) &&
        !(c->void_sel != NULL && strcmp(p->leaf, c->void_sel) == 0))
      m.name = sm__norm_model(c, family_variant(c, p), &m.t, &m.d);
    if (m.name != NULL && run_label(p, m.t, m.d))
      m.name = m.t = m.d = NULL;
    if (m.name != NULL) {
      m.ev = p->ev;
      break;
    }
    n = drop_key(left, n, p);
    if (n < 0)
      break;
  }
  if (m.name == NULL)
    model_from_option(c, &m);
  if (m.name == NULL)
    model_from_target(c, &m);
  if (m.name == NULL)
    model_from_hub_id(c, &m);
  if (m.name == NULL)
    model_from_weights(c, &m);
  if (m.name == NULL)
    model_from_cfg_option(c, &m);
  if (m.name == NULL)
    model_from_code(c, &m, &ctor_cand, &class_cand);
  if (m.name == NULL && c->primary_cfg != NULL)
    model_from_config_name(c, &m);
  if (m.name == NULL)
    model_from_size_config(c, &m);
  if (m.name == NULL && ctor_cand != NULL) {
    m.name = sm__norm_model(c, ctor_cand->name + 5, &m.t, &m.d);
    m.ev = ctor_cand->ev;
  }
  if (m.name == NULL && class_cand != NULL) {
    m.name = sm__norm_model(c, class_cand->name + 6, &m.t, &m.d);
    m.ev = class_cand->ev;
  }
  if (m.name == NULL && deep.name != NULL)
    m = deep;
  if (m.name != NULL && c->primary_cfg != NULL)
    family_in_config_name(c, &m);
  if (m.name != NULL) {
    set_str(c, SM_META_MODEL_NAME, m.name, m.ev);
    c->hint_task = m.t;
    c->hint_domain = m.d;
  }
  *model_out = m.name;
}

/* Does a key's leaf name evaluation data (a token val, valid,
 * validation, eval, test)? */
static int eval_leaf(const char *leaf) {
  static const char *const toks[] = {"val",  "valid", "validation",
                                     "eval", "test",  NULL};
  for (const char *a = leaf; *a;) {
    size_t n = strcspn(a, "_.-");
    for (int k = 0; toks[k]; k++)
      if (strlen(toks[k]) == n && strncmp(a, toks[k], n) == 0)
        return 1;
    a += n;
    if (*a)
      a++;
  }
  return 0;
}

/* The first component of path (3 bytes or more, under max) that names a
 * known dataset, or NULL; the dataset's task and domain hints are set. */
static const char *dataset_in_path(sm__ctx *c, const char *path, size_t max) {
  char comp[256];
  const char *name = NULL, *e;
  if (max > sizeof(comp))
    max = sizeof(comp);
  for (const char *s = path; s && *s && name == NULL; s = *e ? e + 1 : e) {
    e = strchr(s, '/');
    if (e == NULL)
      e = s + strlen(s);
    if (e - s <= 2 || (size_t)(e - s) >= max)
      continue;
    snprintf(comp, sizeof(comp), "%.*s", (int)(e - s), s);
    name = sm__known_dataset(c, comp, &c->ds_task, &c->ds_domain);
  }
  return name;
}

/* Generated data: 1 when the job's switches say so (dataset set to
 * "synthetic"). */
static int synthetic_data(sm__ctx *c) {
  const sm__param *p;
  /* A switch to generated data wins over any dataset name the config
   * also carries (dataset_type: synthetic, use_synthetic_data). */
  p = sm__param_get(c, N("dataset_type", "data_type", "dataset.type"));
  if (p != NULL && p->kind == SM__V_STR &&
      (strcasecmp(p->str, "synthetic") == 0 ||
       strcasecmp(p->str, "dummy") == 0 || strcasecmp(p->str, "fake") == 0 ||
       strcasecmp(p->str, "mock") == 0 || strcasecmp(p->str, "random") == 0)) {
    set_str(c, SM_META_DATASET, "synthetic", p->ev);
    return 1;
  }
  {
    const char *e3 = NULL;
    p = sm__param_get(c, sm__role_keys(c, "synthetic"));
    if (p != NULL && (p->kind == SM__V_BOOL || p->kind == SM__V_NUM) &&
        p->num != 0) {
      e3 = p->ev;
      set_str(c, SM_META_DATASET, "synthetic", e3);
      return 1;
    }
  }
  return 0;
}

/* LAVIS-style sections keyed by dataset name (datasets: {laion:
 * {batch_size: 64}, cc_sbu: {...}}): the first that names a known
 * dataset, else the first name that is no split or setting; a mixture of
 * more than three names none. */
static const char *dataset_sections(sm__ctx *c, const char **ev) {
  static const char *const not_names[] = {
      "train", "val",  "valid", "validation", "test", "eval", "path",
      "name",  "type", "root",  "split",      "dir",  "file", NULL};
  const char *first = NULL, *first_ev = NULL, *seen[4] = {0};
  const char *kn = NULL, *kn_ev = NULL;
  int nseen = 0;
  for (int i = 0; i < c->params.n && nseen <= 3; i++) {
    const sm__param *q = &SM__AT(c->params, sm__param, i);
    const char *k = q->key, *dot;
    char nm[96];
    int skip = 0;
    if (q->layer < SM__L_CONFIG || strncmp(k, "datasets.", 9) != 0 ||
        (dot = strchr(k + 9, '.')) == NULL || (size_t)(dot - k - 9) >= 96 ||
        dot == k + 9 || isdigit((unsigned char)k[9]))
      continue;
    snprintf(nm, sizeof(nm), "%.*s", (int)(dot - k - 9), k + 9);
    for (int j = 0; not_names[j] && !skip; j++)
      skip = strcmp(nm, not_names[j]) == 0;
    for (int j = 0; j < nseen && !skip; j++)
      skip = strcmp(seen[j], nm) == 0;
    if (skip)
      continue;
    if (nseen < 4)
      seen[nseen] = sm__strdup(c, nm);
    nseen++;
    if (kn == NULL && sm__known_dataset(c, nm, NULL, NULL) != NULL) {
      kn = seen[nseen - 1];
      kn_ev = q->ev;
    } else if (first == NULL) {
      first = seen[nseen - 1];
      first_ev = q->ev;
    }
  }
  /* A mixture of many datasets names none. */
  if (nseen > 3)
    kn = first = NULL;
  if (kn == NULL && first == NULL)
    return NULL;
  *ev = kn ? kn_ev : first_ev;
  return sm__norm_dataset(c, kn ? kn : first, &c->ds_task, &c->ds_domain);
}

/* A data folder is often shared by variants of a dataset (data/scannet
 * for ScanNet and ScanNet200): a dataset class the config names
 * (dataset_type = "ScanNet200Dataset", data.train.type) whose name
 * extends the folder's is the more specific answer. */
static const char *dataset_class_refines(sm__ctx *c, const char *name,
                                         const char **ev) {
  const sm__param *t = get_str(
      c, N("dataset_type", "data.train.type", "train_dataloader.dataset.type"));
  char base[128];
  size_t n, nl = strlen(name);
  const char *norm, *task = NULL, *domain = NULL;
  if (t == NULL || strlen(t->str) >= sizeof(base))
    return name;
  snprintf(base, sizeof(base), "%s", t->str);
  n = strlen(base);
  if (n <= 7 || strcasecmp(base + n - 7, "Dataset") != 0)
    return name;
  base[n - 7] = '\0';
  norm = sm__norm_dataset(c, base, &task, &domain);
  if (norm == NULL || strlen(norm) <= nl || strncmp(norm, name, nl) != 0)
    return name;
  /* The variant's own task and domain, none when it has none: the
   * folder's hints describe the folder's dataset, not this one. */
  c->ds_task = task;
  c->ds_domain = domain;
  *ev = t->ev;
  return norm;
}

/* Does a key sit in the data of an evaluation (val_dataloader,
 * data.test, evaluation.dataset)?  That data is not what the job trains
 * on. */
static int evaluation_data(const sm__param *p) {
  static const char *const comp[] = {"val",  "valid",   "validation",
                                     "test", "eval",    "evaluation",
                                     "dev",  "testing", NULL};
  return key_component_in(p, comp, "val_") ||
         key_component_in(p, comp, "test_") ||
         key_component_in(p, comp, "eval_") ||
         key_component_in(p, comp, "valid_");
}

/* The value s of a dataset key p, or NULL when it names no data: a task
 * label inside a component (metainfo.task_name: sisr) names the task, so
 * a nested task_name names data only when it is a known dataset
 * (data.task_name: mrpc), a job-level one as before; a generic dataset
 * class (type='BasicImageDataset') names none, and the next key may. */
static const char *value_names_data(sm__ctx *c, const sm__param *p,
                                    const char *s) {
  const char *cls;
  size_t cl;
  if (s == NULL)
    return NULL;
  if (strcmp(p->leaf, "task_name") == 0 && p->leaf != p->key &&
      sm__known_dataset(c, s, NULL, NULL) == NULL)
    return NULL;
  cls = strrchr(s, '.');
  cls = cls ? cls + 1 : s;
  cl = strlen(cls);
  if (cl > 7 && strcmp(cls + cl - 7, "Dataset") == 0 &&
      strchr(cls, '/') == NULL && sm__dataset_class_generic(cls, cl - 7))
    return NULL;
  return s;
}

static void dataset(sm__ctx *c) {
  const char *const *keys = sm__keys("dataset");
  const sm__param *p;
  const char *name = NULL, *ev = NULL;
  const char *left[64];
  int n = keys_init(left, keys);
  if (synthetic_data(c))
    return;
  while (n > 0 && name == NULL) {
    p = sm__param_get_unless(c, left, evaluation_data);
    if (p == NULL)
      break;
    if (p->kind == SM__V_STR || p->kind == SM__V_LIST) {
      const char *s = p->str;
      if (p->kind == SM__V_LIST) {
        /* The first element of a list of paths. */
        char first[512];
        size_t o = 0;
        s++;
        while (*s == ' ' || *s == '\'' || *s == '"')
          s++;
        while (*s && *s != ',' && *s != ']' && *s != '\'' && *s != '"' &&
               o + 1 < sizeof(first))
          first[o++] = *s++;
        first[o] = '\0';
        s = sm__strdup(c, first);
      }
      s = value_names_data(c, p, s);
      /* A path whose last component is unknown but whose directories
       * name a known dataset (.../olmo-mix/v1_5/tok/part-0.npy). */
      if (s != NULL && strchr(s, '/') != NULL &&
          sm__known_dataset(c, s, NULL, NULL) == NULL)
        name = dataset_in_path(c, s, 256);
      if (name == NULL)
        name = sm__norm_dataset(c, s, &c->ds_task, &c->ds_domain);
    }
    if (name != NULL) {
      ev = p->ev;
      break;
    }
    n = drop_key(left, n, p);
    if (n < 0)
      break;
  }
  if (name != NULL && p != NULL &&
      (strstr(p->leaf, "root") || strstr(p->leaf, "path") ||
       strstr(p->leaf, "dir")))
    name = dataset_class_refines(c, name, &ev);
  if (name == NULL) {
    /* Hydra/Lightning: data._target_: src.data.mnist_datamodule.MNIST-
     * DataModule names the dataset. */
    p = get_str(c,
                N("data._target_", "datamodule._target_", "data.class_path"));
    if (p != NULL) {
      const char *cls = strrchr(p->str, '.');
      char base[128];
      size_t n;
      snprintf(base, sizeof(base), "%s", cls ? cls + 1 : p->str);
      n = strlen(base);
      if (n > 10 && strcasecmp(base + n - 10, "DataModule") == 0)
        base[n - 10] = '\0';
      else if (n > 7 && strcasecmp(base + n - 7, "Dataset") == 0)
        base[n - 7] = '\0';
      else
        base[0] = '\0';
      if (base[0] != '\0' && (name = sm__norm_dataset(c, base, &c->ds_task,
                                                      &c->ds_domain)) != NULL)
        ev = p->ev;
    }
  }
  if (name == NULL) {
    /* dataset_mixer: {HuggingFaceH4/ultrachat_200k: 1.0} */
    for (int i = 0; i < c->params.n && name == NULL; i++) {
      const sm__param *q = &SM__AT(c->params, sm__param, i);
      if (strncmp(q->key, "dataset_mixer.", 14) == 0) {
        name = sm__norm_dataset(c, q->key + 14, &c->ds_task, &c->ds_domain);
        ev = q->ev;
      }
    }
  }
  if (name == NULL)
    name = dataset_sections(c, &ev);
  if (name == NULL) {
    /* A data path given to the job whose components name a known dataset
     * (/data/criteo_1tb/binary/split). */
    static const char *const not_data[] = {
        "output",     "save",   "ckpt",  "checkpoint", "log",         "model",
        "pretrained", "resume", "cache", "tokenizer",  "config",      "weights",
        "vocab",      "dict",   "exp",   "work_dir",   "tensorboard", NULL};
    for (int i = c->params.n - 1; i >= 0 && name == NULL; i--) {
      const sm__param *q = &SM__AT(c->params, sm__param, i);
      int skip = 0;
      /* The command's paths; and the paths a config file gives its data
       * section (data_config.path: .../tinyshakespeare/input.txt). */
      if (q->kind != SM__V_STR || strchr(q->str, '/') == NULL ||
          (q->layer < SM__L_CMD &&
           !(q->layer >= SM__L_CONFIG && strstr(q->key, "data") != NULL)))
        continue;
      for (int k = 0; not_data[k] && !skip; k++)
        skip = strstr(q->leaf, not_data[k]) != NULL;
      /* Evaluation data (imagenet_val, eval_data_path) is not what the
       * job trains on. */
      skip = skip || eval_leaf(q->leaf);
      if (skip)
        continue;
      name = dataset_in_path(c, q->str, 256);
      if (name != NULL)
        ev = q->ev;
    }
  }
  if (name == NULL) {
    const sm__cand *best = NULL;
    for (int i = 0; i < c->datasets.n; i++) {
      const sm__cand *k = &SM__AT(c->datasets, sm__cand, i);
      if (best == NULL || k->weight > best->weight)
        best = k;
    }
    if (best != NULL) {
      name = sm__norm_dataset(c, best->name, &c->ds_task, &c->ds_domain);
      ev = best->ev;
    }
  }
  if (name == NULL) {
    /* Recipe layouts keep one directory per dataset
     * (examples/aishell/s0, egs/librispeech/asr1): the command's
     * directory or the entry's path names it. */
    const char *paths[2] = {c->cwd, c->entry};
    for (int k = 0; k < 2 && name == NULL; k++) {
      name = dataset_in_path(c, paths[k], 128);
      if (name != NULL)
        ev = k == 0 ? "command" : sm__ev(c, c->entry, 1);
    }
  }
  if (name != NULL)
    set_str(c, SM_META_DATASET, name, ev);
}

/* Values set in branches the job's options rule out (decided now that
 * every layer is known) are taken out of the store. */
static void rule_out_branches(sm__ctx *c) {
  int n = c->guarded.n, *dead;
  if (n == 0 || (dead = sm_calloc((size_t)n, sizeof(int))) == NULL)
    return;
  for (int i = 0; i < n; i++)
    dead[i] = sm__cond_value(c, SM__AT(c->guarded, sm__guarded, i).guard) == 0;
  for (int i = 0; i < n; i++) {
    int k = SM__AT(c->guarded, sm__guarded, i).index;
    if (dead[i] && k >= 0 && k < c->params.n) {
      sm__param *p = &SM__AT(c->params, sm__param, k);
      p->key = p->leaf = "__ruled_out";
      p->layer = -1000;
    }
  }
  sm_free(dead);
}

void sm__resolve(sm__ctx *c) {
  const char *model = NULL;
  rule_out_branches(c);
  apply_presets(c);
  prune_strategies(c);
  resources(c);
  /* Conditions on the world size are decided now. */
  prune_strategies(c);
  model_name(c, &model);
  dataset(c);
  iterations(c);
  batches(c);
  budget_iterations(c);
  learning_rate(c);
  architecture(c, model);
  gpt_size_name(c);
  family_size_name(c);
  published_size(c, model);
  vision_tokens(c);
  precision(c);
  parallelism(c);
  sm__config_words(c);
  sm__task_domain(c);
  (void)model;
}
