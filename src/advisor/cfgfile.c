/* cfgfile.c - configuration files into the value store: YAML (libyaml,
 * with line numbers, and Hydra's defaults-list composition), JSON
 * (cJSON; lines found by walking the text in member order), a bounded
 * TOML subset, and console entry points of pyproject.toml / setup.cfg /
 * setup.py.  Every value keeps "path:line" evidence. */
#include <ctype.h>
#include <string.h>

#include <cJSON.h>
#include <yaml.h>

#include "advisor/advisor_int.h"

#define MAX_NODES 200000
#define MAX_YDEPTH 64

/* ==== A small document tree shared by YAML and JSON ==== */

enum { N_SCALAR, N_MAP, N_SEQ };

typedef struct ynode {
  int type;            /* N_* */
  const char *key;     /* member name inside a map, NULL otherwise */
  const char *val;     /* scalar text */
  int quoted;          /* scalar was quoted (always a string) */
  int line;            /* 1-based line */
  struct ynode *child; /* first child */
  struct ynode *last;  /* last child, for appending */
  struct ynode *next;  /* next sibling */
} ynode;

static ynode *node_new(sm__ctx *c, int type, int line) {
  ynode *n = sm_arena_calloc(&c->arena, 1, sizeof(*n));
  if (n != NULL) {
    n->type = type;
    n->line = line;
  }
  return n;
}

static void node_add(ynode *parent, ynode *child) {
  if (parent->last)
    parent->last->next = child;
  else
    parent->child = child;
  parent->last = child;
}

static ynode *node_get(const ynode *map, const char *key) {
  if (map == NULL || map->type != N_MAP)
    return NULL;
  for (ynode *n = map->child; n; n = n->next)
    if (n->key && strcmp(n->key, key) == 0)
      return n;
  return NULL;
}

/* Parses YAML text into a tree.  Returns NULL with a warning on error. */
static ynode *yaml_tree(sm__ctx *c, const char *rel, const char *text,
                        size_t len) {
  yaml_parser_t p;
  yaml_event_t ev;
  ynode *stack[MAX_YDEPTH], *root = NULL;
  const char *pending_key[MAX_YDEPTH];
  int depth = 0, done = 0, nodes = 0, ok = 1;

  if (!yaml_parser_initialize(&p))
    return NULL;
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  while (!done) {
    ynode *n = NULL;
    int line;
    if (!yaml_parser_parse(&p, &ev)) {
      sm__warn(c, "%s:%zu: YAML error: %s", rel, p.problem_mark.line + 1,
               p.problem ? p.problem : "unparsable");
      ok = 0;
      break;
    }
    line = (int)ev.start_mark.line + 1;
    if (++nodes > MAX_NODES) {
      sm__warn(c, "%s: too many YAML nodes, stopped", rel);
      yaml_event_delete(&ev);
      ok = 0;
      break;
    }
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
    case YAML_DOCUMENT_END_EVENT:
      /* Only the first document is read. */
      if (root != NULL)
        done = 1;
      if (ev.type == YAML_STREAM_END_EVENT)
        done = 1;
      break;
    case YAML_SCALAR_EVENT:
      if (depth > 0 && stack[depth - 1]->type == N_MAP &&
          pending_key[depth - 1] == NULL) {
        pending_key[depth - 1] = sm__strndup(
            c, (const char *)ev.data.scalar.value, ev.data.scalar.length);
        if (pending_key[depth - 1] == NULL)
          ok = 0, done = 1;
        break;
      }
      n = node_new(c, N_SCALAR, line);
      if (n != NULL) {
        n->val = sm__strndup(c, (const char *)ev.data.scalar.value,
                             ev.data.scalar.length);
        n->quoted = ev.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                    ev.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
      }
      break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
      n = node_new(c, ev.type == YAML_MAPPING_START_EVENT ? N_MAP : N_SEQ,
                   line);
      break;
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      if (depth > 0)
        depth--;
      break;
    case YAML_ALIAS_EVENT:
      /* Aliases are not expanded: the value is unknown. */
      n = node_new(c, N_SCALAR, line);
      if (n != NULL)
        n->val = "";
      break;
    default:
      break;
    }
    if (n != NULL) {
      if (depth == 0) {
        if (root == NULL)
          root = n;
      } else {
        ynode *par = stack[depth - 1];
        if (par->type == N_MAP) {
          n->key = pending_key[depth - 1] ? pending_key[depth - 1] : "";
          pending_key[depth - 1] = NULL;
        }
        node_add(par, n);
      }
      if (n->type != N_SCALAR) {
        if (depth == MAX_YDEPTH) {
          sm__warn(c, "%s:%d: YAML nested too deep", rel, line);
          yaml_event_delete(&ev);
          ok = 0;
          break;
        }
        pending_key[depth] = NULL;
        stack[depth++] = n;
      }
    } else if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
               ev.type == YAML_MAPPING_START_EVENT ||
               ev.type == YAML_SEQUENCE_START_EVENT) {
      if (!(ev.type == YAML_SCALAR_EVENT && depth > 0))
        ok = 0, done = 1;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  return ok ? root : NULL;
}

/* cJSON into the tree, finding each member's line by walking the text. */
typedef struct jpos {
  const char *text; /* start */
  const char *cur;  /* search position */
  int line;         /* line of cur */
} jpos;

static int line_of(jpos *jp, const char *at) {
  for (; jp->cur < at; jp->cur++)
    if (*jp->cur == '\n')
      jp->line++;
  return jp->line;
}

static ynode *json_node(sm__ctx *c, const cJSON *j, jpos *jp, int depth) {
  ynode *n;
  if (depth > MAX_YDEPTH)
    return NULL;
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    n = node_new(c, cJSON_IsObject(j) ? N_MAP : N_SEQ, jp->line);
    if (n == NULL)
      return NULL;
    for (const cJSON *k = j->child; k; k = k->next) {
      ynode *ch;
      int line = jp->line;
      if (k->string != NULL) {
        char pat[300];
        const char *hit;
        snprintf(pat, sizeof(pat), "\"%.290s\"", k->string);
        hit = strstr(jp->cur, pat);
        if (hit != NULL)
          line = line_of(jp, hit);
      }
      ch = json_node(c, k, jp, depth + 1);
      if (ch == NULL)
        continue;
      ch->line = line;
      ch->key = k->string ? sm__strdup(c, k->string) : NULL;
      node_add(n, ch);
    }
    return n;
  }
  n = node_new(c, N_SCALAR, jp->line);
  if (n == NULL)
    return NULL;
  if (cJSON_IsString(j)) {
    n->val = sm__strdup(c, j->valuestring);
    n->quoted = 1;
  } else if (cJSON_IsBool(j)) {
    n->val = cJSON_IsTrue(j) ? "true" : "false";
  } else if (cJSON_IsNumber(j)) {
    n->val = sm__printf(c, "%.17g", j->valuedouble);
  } else {
    n->val = "null";
  }
  return n;
}

static ynode *json_tree(sm__ctx *c, const char *rel, const char *text,
                        size_t len) {
  const char *endp = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(text, len, &endp, 0);
  jpos jp = {text, text, 1};
  ynode *n;
  if (j == NULL) {
    int line = 1;
    const char *e = cJSON_GetErrorPtr();
    if (e != NULL && e >= text && e <= text + len)
      for (const char *p = text; p < e; p++)
        line += *p == '\n';
    sm__warn(c, "%s:%d: JSON error: unparsable", rel, line);
    return NULL;
  }
  n = json_node(c, j, &jp, 0);
  cJSON_Delete(j);
  return n;
}

/* Writes a scalar or a list of scalars as a value. */
static void put_value(sm__ctx *c, const char *key, const ynode *n,
                      const char *rel, int layer) {
  const char *ev = sm__ev(c, rel, n->line);
  if (n->type == N_SCALAR) {
    if (n->quoted)
      sm__param_str(c, key, n->val, SM__V_STR, layer, ev);
    else
      sm__param_text(c, key, n->val, layer, ev);
  } else if (n->type == N_SEQ) {
    char buf[1024];
    size_t o = 0;
    int scalars = 1;
    buf[o++] = '[';
    for (const ynode *k = n->child; k; k = k->next) {
      if (k->type != N_SCALAR) {
        scalars = 0;
        break;
      }
      o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s",
                            k == n->child ? "" : ", ", k->val);
      if (o >= sizeof(buf) - 2) {
        scalars = 0;
        break;
      }
    }
    if (scalars) {
      buf[o++] = ']';
      buf[o] = '\0';
      sm__param_text(c, key, buf, layer, ev);
    }
  }
}

static void flatten(sm__ctx *c, const ynode *n, const char *prefix,
                    const char *rel, int layer, int depth) {
  if (n == NULL || depth > MAX_YDEPTH)
    return;
  for (const ynode *k = n->child; k; k = k->next) {
    char key[512];
    if (k->key == NULL)
      continue;
    if (prefix && prefix[0])
      snprintf(key, sizeof(key), "%s.%s", prefix, k->key);
    else
      snprintf(key, sizeof(key), "%s", k->key);
    if (strcmp(k->key, "defaults") == 0 && k->type == N_SEQ)
      continue;
    if (k->type == N_MAP) {
      flatten(c, k, key, rel, layer, depth + 1);
    } else {
      put_value(c, key, k, rel, layer);
      if (k->type == N_SEQ)
        for (const ynode *e = k->child; e; e = e->next)
          if (e->type == N_MAP)
            flatten(c, e, key, rel, layer, depth + 1);
    }
  }
}

static const char *ext_of(const char *rel) {
  const char *dot = strrchr(rel, '.');
  return (dot && !strchr(dot, '/')) ? dot : "";
}

static ynode *load_tree(sm__ctx *c, const char *rel, int again) {
  const char *text;
  size_t len;
  const char *ext = ext_of(rel);
  int rc = again ? sm__repo_read_again(c, rel, &text, &len)
                 : sm__repo_read(c, rel, &text, &len);
  if (rc == SM_EBUSY)
    rc = sm__repo_read_again(c, rel, &text, &len);
  if (rc != 0)
    return NULL;
  if (strcasecmp(ext, ".json") == 0)
    return json_tree(c, rel, text, len);
  return yaml_tree(c, rel, text, len);
}

/* ==== TOML subset ==== */

static void toml_put(void *ud, const char *key, const char *val, int line) {
  void **a = ud;
  sm__ctx *c = a[0];
  const char *rel = a[1];
  const char *prefix = a[2];
  int layer = *(int *)a[3];
  char k[512];
  if (prefix && prefix[0])
    snprintf(k, sizeof(k), "%s.%s", prefix, key);
  else
    snprintf(k, sizeof(k), "%s", key);
  sm__param_text(c, k, val, layer, sm__ev(c, rel, line));
}

int sm__toml_parse(const char *text, size_t n, sm__toml_fn fn, void *ud,
                   int *bad_line) {
  char table[256] = "";
  const char *p = text, *end = text + n;
  int line = 0;

  while (p < end) {
    const char *ls = p, *le;
    char key[256], val[1024];
    size_t kn = 0, vn = 0;
    int in_str = 0;
    line++;
    le = memchr(p, '\n', (size_t)(end - p));
    if (le == NULL)
      le = end;
    p = le < end ? le + 1 : end;
    while (ls < le && isspace((unsigned char)*ls))
      ls++;
    if (ls >= le || *ls == '#')
      continue;
    if (*ls == '[') {
      const char *q = ls + 1;
      int arr = 0;
      size_t tn = 0;
      if (q < le && *q == '[') {
        arr = 1;
        q++;
      }
      while (q < le && *q != ']' && tn + 1 < sizeof(table)) {
        if (*q != ' ' && *q != '"')
          table[tn++] = *q;
        q++;
      }
      table[tn] = '\0';
      if (q >= le) {
        if (bad_line)
          *bad_line = line;
        return SM_EPARSE;
      }
      (void)arr;
      continue;
    }
    /* key = value */
    while (ls < le && *ls != '=' && kn + 1 < sizeof(key)) {
      if (*ls != ' ' && *ls != '\t' && *ls != '"' && *ls != '\'')
        key[kn++] = *ls;
      ls++;
    }
    key[kn] = '\0';
    if (ls >= le || kn == 0) {
      if (bad_line)
        *bad_line = line;
      return SM_EPARSE;
    }
    ls++;
    while (ls < le && isspace((unsigned char)*ls))
      ls++;
    /* The value up to a comment outside strings; multi-line arrays and
     * strings are taken up to the end of their first line. */
    for (const char *q = ls; q < le && vn + 1 < sizeof(val); q++) {
      if (*q == '"' || *q == '\'')
        in_str = !in_str;
      if (*q == '#' && !in_str)
        break;
      val[vn++] = *q;
    }
    while (vn > 0 && isspace((unsigned char)val[vn - 1]))
      vn--;
    val[vn] = '\0';
    if (vn >= 3 &&
        (strncmp(val, "\"\"\"", 3) == 0 || strncmp(val, "'''", 3) == 0)) {
      /* A multi-line string: skip to its end. */
      const char *close = NULL;
      char q3[4] = {val[0], val[0], val[0], 0};
      if (vn < 6 || strcmp(val + vn - 3, q3) != 0) {
        for (const char *q = p; q + 3 <= end; q++)
          if (strncmp(q, q3, 3) == 0) {
            close = q;
            break;
          }
        if (close == NULL) {
          if (bad_line)
            *bad_line = line;
          return SM_EPARSE;
        }
        for (const char *q = p; q < close; q++)
          line += *q == '\n';
        p = memchr(close, '\n', (size_t)(end - close));
        if (p != NULL)
          line++;
        p = p ? p + 1 : end;
      }
      continue;
    }
    {
      char full[600];
      if (table[0])
        snprintf(full, sizeof(full), "%s.%s", table, key);
      else
        snprintf(full, sizeof(full), "%s", key);
      fn(ud, full, val, line);
    }
  }
  return 0;
}

/* ==== Entry points ==== */

int sm__config_load(sm__ctx *c, const char *rel, const char *prefix,
                    int layer) {
  const char *ext = ext_of(rel);
  if (strcasecmp(ext, ".py") == 0)
    return sm__py_config(c, rel, layer);
  if (strcasecmp(ext, ".toml") == 0) {
    const char *text;
    size_t len;
    int bad = 0, rc = sm__repo_read(c, rel, &text, &len);
    void *ud[4];
    if (rc == SM_EBUSY)
      rc = sm__repo_read_again(c, rel, &text, &len);
    if (rc != 0)
      return rc;
    ud[0] = c;
    ud[1] = (void *)rel;
    ud[2] = (void *)prefix;
    ud[3] = &layer;
    rc = sm__toml_parse(text, len, toml_put, ud, &bad);
    if (rc != 0)
      sm__warn(c, "%s:%d: TOML error: unparsable line", rel, bad);
    return rc;
  }
  if (strcasecmp(ext, ".yaml") == 0 || strcasecmp(ext, ".yml") == 0 ||
      strcasecmp(ext, ".json") == 0) {
    ynode *t = load_tree(c, rel, 0);
    if (t == NULL)
      return SM_EPARSE;
    if (t->type == N_MAP)
      flatten(c, t, prefix, rel, layer, 0);
    return 0;
  }
  sm__warn(c, "%s: not a config format the extractor reads", rel);
  return SM_EUNSUPP;
}

/* ==== Hydra ==== */

#define MAX_GROUPS 32

typedef struct hydra {
  sm__ctx *c;                /* context */
  const char *dir;           /* config directory, root-relative */
  const char *g[MAX_GROUPS]; /* group names */
  const char *o[MAX_GROUPS]; /* chosen option (NULL: none) */
  int cmd[MAX_GROUPS];       /* chosen on the command line */
  int ng;                    /* groups */
  int files;                 /* files composed, bounded */
} hydra;

static int group_slot(hydra *h, const char *g) {
  while (*g == '/')
    g++;
  for (int i = 0; i < h->ng; i++)
    if (strcmp(h->g[i], g) == 0)
      return i;
  if (h->ng == MAX_GROUPS)
    return -1;
  h->g[h->ng] = sm__strdup(h->c, g);
  h->o[h->ng] = NULL;
  return h->ng++;
}

/* Splits a defaults entry key "override /model@pkg" into group and
 * package; returns 1 for an override entry. */
static int entry_key(const char *k, char *group, size_t gcap, char *pkg,
                     size_t pcap) {
  int ov = 0;
  const char *at;
  if (strncmp(k, "override ", 9) == 0) {
    ov = 1;
    k += 9;
  } else if (strncmp(k, "optional ", 9) == 0) {
    k += 9;
    ov = 2;
  }
  while (*k == '/' || *k == ' ')
    k++;
  at = strchr(k, '@');
  snprintf(group, gcap, "%.*s", at ? (int)(at - k) : (int)strlen(k), k);
  snprintf(pkg, pcap, "%s", at ? at + 1 : "");
  return ov;
}

/* The file of a group option: "gpt2" or "gpt2.yaml" in dir/group/. */
static const char *option_path(hydra *h, int slot) {
  const char *o = h->o[slot];
  size_t n = strlen(o);
  int ext = n > 5 && strcmp(o + n - 5, ".yaml") == 0;
  return sm__printf(h->c, "%s/%s/%s%s", h->dir, h->g[slot], o,
                    ext ? "" : ".yaml");
}

/* Pass 1: group choices from the defaults lists, overrides last. */
static void hydra_choices(hydra *h, const char *rel, int depth) {
  ynode *t, *d;
  if (depth > 6 || h->files++ > 64)
    return;
  t = load_tree(h->c, rel, 1);
  d = node_get(t, "defaults");
  if (d == NULL || d->type != N_SEQ)
    return;
  for (ynode *e = d->child; e; e = e->next) {
    char group[256], pkg[128];
    ynode *v;
    int ov, slot;
    if (e->type != N_MAP || (v = e->child) == NULL || v->type != N_SCALAR)
      continue;
    ov = entry_key(v->key, group, sizeof(group), pkg, sizeof(pkg)) == 1;
    slot = group_slot(h, group);
    if (slot < 0)
      continue;
    if (!h->cmd[slot] && (ov || h->o[slot] == NULL))
      h->o[slot] =
          (strcmp(v->val, "null") == 0 || v->val[0] == '\0') ? NULL : v->val;
    if (h->o[slot] != NULL) {
      const char *norm = sm__repo_join(h->c, "", option_path(h, slot));
      if (norm && sm__repo_is_file(h->c, norm))
        hydra_choices(h, norm, depth + 1);
    }
  }
}

/* Pass 2: merge in order; the file itself where _self_ stands (last when
 * absent, as Hydra 1.1 does). */
static void hydra_merge(hydra *h, const char *rel, const char *package,
                        int depth) {
  ynode *t, *d;
  int self_done = 0;
  const char *text;
  size_t len;
  if (depth > 6 || h->files++ > 128)
    return;
  /* The package header "# @package _global_" moves the file to the root. */
  if (sm__repo_read_again(h->c, rel, &text, &len) == 0) {
    const char *pk = strstr(text, "@package");
    if (pk != NULL && pk - text < 512) {
      char name[128];
      size_t n = 0;
      pk += 8;
      while (*pk == ' ')
        pk++;
      while (*pk && !isspace((unsigned char)*pk) && n + 1 < sizeof(name))
        name[n++] = *pk++;
      name[n] = '\0';
      package = strcmp(name, "_global_") == 0 ? "" : sm__strdup(h->c, name);
    }
  }
  t = yaml_tree(h->c, rel, text, len);
  if (t == NULL)
    return;
  d = node_get(t, "defaults");
  if (d != NULL && d->type == N_SEQ) {
    for (ynode *e = d->child; e; e = e->next) {
      char group[256], pkg[128];
      const char *child;
      int slot, kind;
      if (e->type == N_SCALAR) {
        if (strcmp(e->val, "_self_") == 0) {
          flatten(h->c, t, package, rel, SM__L_CONFIG, 0);
          self_done = 1;
          continue;
        }
        /* A config of the same group as this file. */
        {
          const char *slash = strrchr(rel, '/');
          child = sm__printf(h->c, "%.*s/%s.yaml",
                             slash ? (int)(slash - rel) : 0, rel, e->val);
          child = sm__repo_join(h->c, "", child);
          if (child && sm__repo_is_file(h->c, child))
            hydra_merge(h, child, package, depth + 1);
        }
        continue;
      }
      if (e->type != N_MAP || e->child == NULL || e->child->type != N_SCALAR)
        continue;
      kind = entry_key(e->child->key, group, sizeof(group), pkg, sizeof(pkg));
      if (kind == 1)
        continue;
      slot = group_slot(h, group);
      if (slot < 0 || h->o[slot] == NULL)
        continue;
      child = sm__repo_join(h->c, "", option_path(h, slot));
      if (child == NULL || !sm__repo_is_file(h->c, child)) {
        if (kind != 2) /* optional groups may be absent */
          sm__warn(h->c, "hydra: %s/%s not found in %s", h->g[slot], h->o[slot],
                   h->dir);
        continue;
      }
      {
        char pk[256];
        const char *gp = pkg[0] ? pkg : h->g[slot];
        size_t k;
        snprintf(pk, sizeof(pk), "%s%s%s", package, package[0] ? "." : "", gp);
        for (k = 0; pk[k]; k++)
          if (pk[k] == '/')
            pk[k] = '.';
        hydra_merge(h, child, sm__strdup(h->c, pk), depth + 1);
      }
    }
  }
  if (!self_done)
    flatten(h->c, t, package, rel, SM__L_CONFIG, 0);
}

void sm__hydra(sm__ctx *c, const char *dir, const char *name,
               const char *const *ov, int n_ov) {
  hydra *h = sm_calloc(1, sizeof(*h));
  const char *primary;
  if (h == NULL)
    return;
  h->c = c;
  h->dir = dir;
  primary = sm__repo_join(c, "",
                          sm__printf(c, "%s/%s%s", dir, name,
                                     strstr(name, ".yaml") ? "" : ".yaml"));
  if (primary == NULL || !sm__repo_is_file(c, primary)) {
    sm__warn(c, "hydra: config %s not found in %s", name, dir);
    sm_free(h);
    return;
  }
  /* Command-line group choices win over every defaults list. */
  for (int i = 0; i < n_ov; i++) {
    const char *eq = strchr(ov[i], '=');
    char group[256];
    int slot;
    if (eq == NULL)
      continue;
    snprintf(group, sizeof(group), "%.*s", (int)(eq - ov[i]), ov[i]);
    slot = group_slot(h, group[0] == '+' ? group + 1 : group);
    if (slot >= 0) {
      h->o[slot] = eq[1] ? eq + 1 : NULL;
      h->cmd[slot] = 1;
    }
  }
  hydra_choices(h, primary, 0);
  /* Groups added only on the command line ("+group=x") are merged too. */
  h->files = 0;
  hydra_merge(h, primary, "", 0);
  for (int i = 0; i < n_ov; i++)
    if (ov[i][0] == '+') {
      const char *eq = strchr(ov[i], '=');
      const char *child;
      if (eq == NULL)
        continue;
      child =
          sm__repo_join(c, "",
                        sm__printf(c, "%s/%.*s/%s.yaml", dir,
                                   (int)(eq - ov[i] - 1), ov[i] + 1, eq + 1));
      if (child && sm__repo_is_file(c, child))
        hydra_merge(h, child,
                    sm__strndup(c, ov[i] + 1, (size_t)(eq - ov[i] - 1)), 1);
    }
  sm_free(h);
}

/* ==== Console entry points ==== */

/* Finds "name = "pkg.mod:fn"" (TOML) or "name = pkg.mod:fn" (cfg) or
 * "'name=pkg.mod:fn'" (setup.py) in text. */
static const char *find_entry(sm__ctx *c, const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
    const char *q = p + n, *s, *e;
    if (p > text &&
        (isalnum((unsigned char)p[-1]) || p[-1] == '-' || p[-1] == '_'))
      continue;
    while (*q == ' ' || *q == '"' || *q == '\'')
      q++;
    if (*q != '=')
      continue;
    q++;
    while (*q == ' ' || *q == '"' || *q == '\'')
      q++;
    s = q;
    while (*q && (isalnum((unsigned char)*q) || *q == '_' || *q == '.'))
      q++;
    e = q;
    if (*q != ':' || e == s)
      continue;
    return sm__strndup(c, s, (size_t)(e - s));
  }
  return NULL;
}

const char *sm__console_entry(sm__ctx *c, const char *name) {
  static const char *const files[] = {"pyproject.toml", "setup.cfg", "setup.py",
                                      NULL};
  for (int i = 0; files[i]; i++) {
    const char *text, *m;
    size_t len;
    int rc;
    if (!sm__repo_is_file(c, files[i]))
      continue;
    rc = sm__repo_read(c, files[i], &text, &len);
    if (rc == SM_EBUSY)
      rc = sm__repo_read_again(c, files[i], &text, &len);
    if (rc != 0)
      continue;
    if ((m = find_entry(c, text, name)) != NULL)
      return m;
  }
  return NULL;
}
