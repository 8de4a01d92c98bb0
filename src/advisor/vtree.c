/* vtree.c - the value tree: one model for every configuration document.
 *
 * A YAML or JSON file, a TOML file, gin bindings, a Python config module
 * or an experiment object becomes a tree of sm__vnode.  Each value keeps
 * the file and line it was written at.  Inheritance is an explicit merge
 * of trees (sm__vt_merge) under a rule the configuration system decides
 * (deep merge, `_delete_`, top-level replacement); a finished tree is
 * published into the layered store at one layer, where the command line
 * and presets may still override it.
 *
 * Trees share nodes: a merge or a path update copies only the maps along
 * the path it changes, so a base file loaded once can sit under many
 * children. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <yaml.h>

#include "advisor/advisor_int.h"

#define MAX_NODES 200000
#define MAX_DEPTH 64
#define MAX_PUBLISH 50000
#define MAX_ANCHORS 256

/* ==== Nodes ==== */

sm__vnode *sm__vt_new(sm__ctx *c, int t, const char *path, int line) {
  sm__vnode *n = sm_arena_calloc(&c->arena, 1, sizeof(*n));
  if (n != NULL) {
    n->t = t;
    n->path = path;
    n->line = line;
  }
  return n;
}

sm__vnode *sm__vt_strv(sm__ctx *c, const char *s, const char *path, int line) {
  sm__vnode *n = sm__vt_new(c, SM__T_STR, path, line);
  if (n != NULL) {
    n->str = sm__strdup(c, s ? s : "");
    if (n->str == NULL)
      return NULL;
  }
  return n;
}

sm__vnode *sm__vt_numv(sm__ctx *c, int t, double v, const char *path,
                       int line) {
  sm__vnode *n = sm__vt_new(c, t, path, line);
  if (n != NULL)
    n->num = v;
  return n;
}

sm__vnode *sm__vt_text(sm__ctx *c, const char *text, const char *path,
                       int line) {
  const char *s = text ? text : "";
  size_t n;
  double v;
  char *buf;

  while (isspace((unsigned char)*s))
    s++;
  n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    n--;
  buf = sm__strndup(c, s, n);
  if (buf == NULL)
    return NULL;
  if (n >= 2 && (buf[0] == '"' || buf[0] == '\'') && buf[n - 1] == buf[0]) {
    buf[n - 1] = '\0';
    return sm__vt_strv(c, buf + 1, path, line);
  }
  if (n > 3 && buf[0] == '$' && buf[1] == '{' && buf[n - 1] == '}' &&
      strchr(buf + 2, '{') == NULL && strchr(buf, '}') == buf + n - 1 &&
      strchr(buf, ':') == NULL) {
    /* An OmegaConf interpolation ${a.b}: a reference. */
    char ref[256];
    sm__vnode *r = sm__vt_new(c, SM__T_REF, path, line);
    sm__key_norm(buf + 2, n - 3, ref, sizeof(ref));
    if (r != NULL && (r->str = sm__strdup(c, ref)) == NULL)
      return NULL;
    return r;
  }
  if (n == 0 || strcmp(buf, "None") == 0 || strcmp(buf, "null") == 0 ||
      strcmp(buf, "~") == 0 || strcmp(buf, "Null") == 0 ||
      strcmp(buf, "NULL") == 0)
    return sm__vt_new(c, SM__T_NULL, path, line);
  if (strcasecmp(buf, "true") == 0 || strcasecmp(buf, "yes") == 0)
    return sm__vt_numv(c, SM__T_BOOL, 1, path, line);
  if (strcasecmp(buf, "false") == 0 || strcasecmp(buf, "no") == 0)
    return sm__vt_numv(c, SM__T_BOOL, 0, path, line);
  if (sm__config_num(buf, 1, &v) == 0)
    return sm__vt_numv(c, SM__T_NUM, v, path, line);
  return sm__vt_strv(c, buf, path, line);
}

static int grow(sm__ctx *c, sm__vnode *n) {
  sm__vent *ne;
  int cap;
  if (n->n < n->cap)
    return 0;
  cap = n->cap ? n->cap * 2 : 4;
  ne = sm_arena_alloc(&c->arena, (size_t)cap * sizeof(*ne));
  if (ne == NULL)
    return SM_ENOMEM;
  if (n->n > 0)
    memcpy(ne, n->e, (size_t)n->n * sizeof(*ne));
  n->e = ne;
  n->cap = cap;
  return 0;
}

int sm__vt_push(sm__ctx *c, sm__vnode *list, sm__vnode *v) {
  if (list == NULL || v == NULL || grow(c, list) != 0)
    return SM_ENOMEM;
  list->e[list->n].key = NULL;
  list->e[list->n].v = v;
  list->n++;
  return 0;
}

int sm__vt_put(sm__ctx *c, sm__vnode *map, const char *key, sm__vnode *v) {
  if (map == NULL || key == NULL || v == NULL)
    return SM_ENOMEM;
  for (int i = 0; i < map->n; i++)
    if (map->e[i].key && strcmp(map->e[i].key, key) == 0) {
      map->e[i].v = v;
      return 0;
    }
  if (grow(c, map) != 0)
    return SM_ENOMEM;
  map->e[map->n].key = key;
  map->e[map->n].v = v;
  map->n++;
  return 0;
}

void sm__vt_del(sm__vnode *map, const char *key) {
  if (map == NULL)
    return;
  for (int i = 0; i < map->n; i++)
    if (map->e[i].key && strcmp(map->e[i].key, key) == 0) {
      memmove(map->e + i, map->e + i + 1,
              (size_t)(map->n - i - 1) * sizeof(*map->e));
      map->n--;
      return;
    }
}

static int has_members(const sm__vnode *n) {
  return n != NULL &&
         (n->t == SM__T_MAP || n->t == SM__T_OBJ || n->t == SM__T_CALL);
}

sm__vnode *sm__vt_get(const sm__vnode *map, const char *key) {
  if (!has_members(map) || key == NULL)
    return NULL;
  for (int i = map->n - 1; i >= 0; i--)
    if (map->e[i].key && strcmp(map->e[i].key, key) == 0)
      return map->e[i].v;
  return NULL;
}

sm__vnode *sm__vt_get_path(const sm__vnode *root, const char *dotted) {
  char part[256];
  const char *p = dotted;
  const sm__vnode *n = root;
  while (n != NULL && p && *p) {
    const char *dot = strchr(p, '.');
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    if (len >= sizeof(part))
      return NULL;
    memcpy(part, p, len);
    part[len] = '\0';
    if (n->t == SM__T_LIST) {
      char *end;
      long k = strtol(part, &end, 10);
      if (*end != '\0' || k < 0 || k >= n->n)
        return NULL;
      n = n->e[k].v;
    } else {
      n = sm__vt_get(n, part);
    }
    p = dot ? dot + 1 : NULL;
  }
  return (sm__vnode *)n;
}

sm__vnode *sm__vt_copy(sm__ctx *c, const sm__vnode *n) {
  sm__vnode *k;
  if (n == NULL)
    return NULL;
  k = sm_arena_alloc(&c->arena, sizeof(*k));
  if (k == NULL)
    return NULL;
  *k = *n;
  k->e = NULL;
  k->cap = k->n = 0;
  if (n->n > 0) {
    k->e = sm_arena_alloc(&c->arena, (size_t)n->n * sizeof(*k->e));
    if (k->e == NULL)
      return NULL;
    memcpy(k->e, n->e, (size_t)n->n * sizeof(*k->e));
    k->n = k->cap = n->n;
  }
  return k;
}

/* Is the member `_delete_` of a map set to true? */
static int deletes(const sm__vnode *n) {
  const sm__vnode *d = sm__vt_get(n, "_delete_");
  return (n != NULL && (n->flags & SM__VF_DELETE)) ||
         (d != NULL && d->t == SM__T_BOOL && d->num != 0);
}

static sm__vnode *merge(sm__ctx *c, sm__vnode *base, sm__vnode *over, int rules,
                        int depth) {
  sm__vnode *out;
  if (over == NULL)
    return base;
  if (base == NULL || depth > MAX_DEPTH || !has_members(over) ||
      !has_members(base))
    return over;
  if ((rules & SM__VM_DELETE_KEY) && deletes(over)) {
    out = sm__vt_copy(c, over);
    if (out != NULL)
      sm__vt_del(out, "_delete_");
    return out;
  }
  out = sm__vt_copy(c, base);
  if (out == NULL)
    return NULL;
  /* The child's type decides (a CALL over a MAP keeps the call). */
  out->t = over->t;
  out->str = over->str ? over->str : base->str;
  out->path = over->path;
  out->line = over->line;
  out->aux = over->aux ? over->aux : base->aux;
  for (int i = 0; i < over->n; i++) {
    const char *k = over->e[i].key;
    sm__vnode *ov = over->e[i].v, *bv;
    if (k == NULL)
      continue;
    bv = sm__vt_get(out, k);
    if (!(rules & SM__VM_TOP_ONLY) && bv != NULL)
      ov = merge(c, bv, ov, rules, depth + 1);
    else if ((rules & SM__VM_DELETE_KEY) && has_members(ov) && deletes(ov)) {
      ov = sm__vt_copy(c, ov);
      if (ov != NULL)
        sm__vt_del(ov, "_delete_");
    }
    if (ov == NULL || sm__vt_put(c, out, k, ov) != 0)
      return NULL;
  }
  return out;
}

sm__vnode *sm__vt_merge(sm__ctx *c, sm__vnode *base, sm__vnode *over,
                        int rules) {
  return merge(c, base, over, rules, 0);
}

sm__vnode *sm__vt_set_path(sm__ctx *c, sm__vnode *root, const char *dotted,
                           sm__vnode *v) {
  const char *dot = strchr(dotted, '.');
  size_t len = dot ? (size_t)(dot - dotted) : strlen(dotted);
  char *key = sm__strndup(c, dotted, len);
  sm__vnode *out, *child;

  if (key == NULL || v == NULL)
    return NULL;
  if (root != NULL && root->t == SM__T_LIST) {
    char *end;
    long k = strtol(key, &end, 10);
    if (*end == '\0' && k >= 0 && k < root->n) {
      out = sm__vt_copy(c, root);
      if (out == NULL)
        return NULL;
      out->e[k].v = dot ? sm__vt_set_path(c, out->e[k].v, dot + 1, v) : v;
      return out->e[k].v ? out : NULL;
    }
    root = NULL;
  }
  out = has_members(root) ? sm__vt_copy(c, root)
                          : sm__vt_new(c, SM__T_MAP, v->path, v->line);
  if (out == NULL)
    return NULL;
  if (dot == NULL) {
    if (sm__vt_put(c, out, key, v) != 0)
      return NULL;
    return out;
  }
  child = sm__vt_set_path(c, sm__vt_get(out, key), dot + 1, v);
  if (child == NULL || sm__vt_put(c, out, key, child) != 0)
    return NULL;
  return out;
}

int sm__vt_truth(const sm__vnode *n) {
  if (n == NULL)
    return -1;
  switch (n->t) {
  case SM__T_NULL:
    return 0;
  case SM__T_NUM:
  case SM__T_BOOL:
    return n->num != 0;
  case SM__T_STR:
    return n->str[0] != '\0';
  case SM__T_LIST:
  case SM__T_MAP:
    return n->n > 0;
  case SM__T_FUNC:
  case SM__T_CLASS:
  case SM__T_MODULE:
  case SM__T_OBJ:
    return 1;
  default:
    return -1;
  }
}

/* ==== Publishing into the layered store ==== */

typedef struct pub {
  sm__ctx *c;  /* context */
  int layer;   /* layer of every value */
  int count;   /* values written, bounded */
  sm_buf list; /* scratch for list text */
} pub;

static const char *ev_of(sm__ctx *c, const sm__vnode *n) {
  if (n->path == NULL)
    return "command";
  return sm__ev(c, n->path, n->line > 0 ? n->line : 1);
}

/* A list of scalars as the store's list text; 0, or -1 when an item is
 * not a scalar. */
static int list_text(pub *p, const sm__vnode *n, double *sum, int *numeric) {
  sm_buf_reset(&p->list);
  sm_buf_addc(&p->list, '[');
  *sum = 0;
  *numeric = 1;
  for (int i = 0; i < n->n; i++) {
    const sm__vnode *k = n->e[i].v;
    if (i)
      sm_buf_adds(&p->list, ", ");
    if (k->t == SM__T_NUM || k->t == SM__T_BOOL) {
      sm_buf_addf(&p->list, "%.17g", k->num);
      *sum += k->num;
    } else if (k->t == SM__T_STR || k->t == SM__T_SYM) {
      sm_buf_adds(&p->list, k->str);
      *numeric = 0;
    } else if (k->t == SM__T_NULL) {
      sm_buf_adds(&p->list, "null");
      *numeric = 0;
    } else {
      return -1;
    }
  }
  sm_buf_addc(&p->list, ']');
  return 0;
}

static void publish(pub *p, const sm__vnode *n, const char *key, int depth) {
  sm__ctx *c = p->c;
  const char *ev;
  if (n == NULL || depth > MAX_DEPTH || p->count >= MAX_PUBLISH)
    return;
  ev = ev_of(c, n);
  switch (n->t) {
  case SM__T_NUM:
  case SM__T_BOOL:
  case SM__T_NULL:
    if (key[0]) {
      p->count++;
      sm__param_num(c, key, n->num,
                    n->t == SM__T_NUM    ? SM__V_NUM
                    : n->t == SM__T_BOOL ? SM__V_BOOL
                                         : SM__V_NULL,
                    p->layer, ev);
    }
    return;
  case SM__T_STR:
  case SM__T_SYM:
    if (key[0]) {
      p->count++;
      sm__param_str(c, key, n->str, SM__V_STR, p->layer, ev);
    }
    return;
  case SM__T_REF:
  case SM__T_EXPR:
    if (key[0]) {
      p->count++;
      sm__param_str(c, key, n->str, n->t == SM__T_REF ? SM__V_REF : SM__V_EXPR,
                    p->layer, ev);
    }
    return;
  case SM__T_UNKNOWN:
    if (key[0]) {
      p->count++;
      sm__param_num(c, key, 0, SM__V_UNKNOWN, p->layer, ev);
    }
    return;
  case SM__T_LIST: {
    double sum;
    int numeric;
    if (key[0] && list_text(p, n, &sum, &numeric) == 0) {
      sm__param *q =
          sm__param_str(c, key, sm_buf_str(&p->list), SM__V_LIST, p->layer, ev);
      p->count++;
      if (q != NULL) {
        q->num = numeric && n->n > 0 ? sum : NAN;
        q->list_n = n->n;
      }
      return;
    }
    /* A list of mappings: each element's members under the same key. */
    for (int i = 0; i < n->n; i++)
      if (has_members(n->e[i].v))
        publish(p, n->e[i].v, key, depth + 1);
    return;
  }
  case SM__T_CALL:
  case SM__T_MAP:
  case SM__T_OBJ:
    if (n->t == SM__T_CALL && n->str != NULL && key[0]) {
      char k2[512];
      snprintf(k2, sizeof(k2), "%s._target_", key);
      p->count++;
      sm__param_str(c, k2, n->str, SM__V_STR, p->layer, ev);
    }
    for (int i = 0; i < n->n; i++) {
      char k2[512];
      const char *mk = n->e[i].key;
      if (mk == NULL || mk[0] == '\0')
        continue;
      /* Hydra defaults lists and inheritance keys are read, not
       * values. */
      if (depth == 0 && n->e[i].v->t == SM__T_LIST &&
          strcmp(mk, "defaults") == 0)
        continue;
      if (strcmp(mk, "_delete_") == 0)
        continue;
      if (key[0])
        snprintf(k2, sizeof(k2), "%s.%s", key, mk);
      else
        snprintf(k2, sizeof(k2), "%s", mk);
      publish(p, n->e[i].v, k2, depth + 1);
    }
    return;
  default:
    return;
  }
}

void sm__vt_publish(sm__ctx *c, const sm__vnode *root, const char *prefix,
                    int layer) {
  pub p;
  if (root == NULL)
    return;
  p.c = c;
  p.layer = layer;
  p.count = 0;
  sm_buf_init(&p.list, 1 << 16);
  publish(&p, root, prefix ? prefix : "", 0);
  sm_buf_release(&p.list);
}

/* ==== YAML ==== */

typedef struct anchor {
  const char *name; /* anchor name */
  sm__vnode *node;  /* its node */
} anchor;

typedef struct yframe {
  sm__vnode *node;   /* map or list being filled */
  const char *key;   /* pending key of a map */
  int merge_pending; /* the pending key is the merge key `<<` */
} yframe;

/* HyperPyYAML's `!ref <a.b>` and `!ref <a> * 2`: a reference or an
 * expression over keys. */
static sm__vnode *yaml_ref(sm__ctx *c, const char *v, const char *rel,
                           int line) {
  sm__vnode *n;
  const char *lt = strchr(v, '<'), *gt = lt ? strchr(lt, '>') : NULL;
  char key[256];
  size_t o = 0;
  if (lt == NULL || gt == NULL)
    return sm__vt_new(c, SM__T_UNKNOWN, rel, line);
  for (const char *p = lt + 1; p < gt && o + 1 < sizeof(key); p++)
    key[o++] =
        (char)(*p == '[' || *p == ']' ? '.' : tolower((unsigned char)*p));
  while (o > 0 && key[o - 1] == '.')
    o--;
  key[o] = '\0';
  {
    const char *rest = gt + 1;
    while (*rest == ' ')
      rest++;
    if (*rest == '\0') {
      n = sm__vt_new(c, SM__T_REF, rel, line);
      if (n != NULL)
        n->str = sm__strdup(c, key);
      return n;
    }
    /* "<a> * 2": one binary operation with a number. */
    if (strchr("+-*/", rest[0]) && rest[1] == ' ') {
      double v2;
      if (sm__config_num(rest + 2, 1, &v2) == 0) {
        n = sm__vt_new(c, SM__T_EXPR, rel, line);
        if (n != NULL)
          n->str = sm__printf(c, "%s %.17g %c", key, v2, rest[0]);
        return n;
      }
    }
  }
  return sm__vt_new(c, SM__T_UNKNOWN, rel, line);
}

/* A scalar event into a node, tags included. */
static sm__vnode *yaml_scalar(sm__ctx *c, const yaml_event_t *ev,
                              const char *rel, int line) {
  const char *v = (const char *)ev->data.scalar.value;
  const char *tag = (const char *)ev->data.scalar.tag;
  sm__vnode *n;
  int quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
               ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
  if (tag != NULL && tag[0] == '!' && tag[1] != '!') {
    if (strncmp(tag, "!ref", 4) == 0)
      return yaml_ref(c, v, rel, line);
    if (strncmp(tag, "!new:", 5) == 0 || strncmp(tag, "!name:", 6) == 0 ||
        strncmp(tag, "!apply:", 7) == 0) {
      n = sm__vt_new(c, SM__T_CALL, rel, line);
      if (n != NULL)
        n->str = sm__strdup(c, strchr(tag, ':') + 1);
      return n;
    }
  }
  if (quoted || (tag != NULL && strcmp(tag, "tag:yaml.org,2002:str") == 0)) {
    n = sm__vt_strv(c, v, rel, line);
    if (n != NULL)
      n->flags |= SM__VF_QUOTED;
    return n;
  }
  return sm__vt_text(c, v, rel, line);
}

sm__vnode *sm__vt_yaml(sm__ctx *c, const char *rel, const char *text,
                       size_t len) {
  yaml_parser_t p;
  yaml_event_t ev;
  yframe *st;
  anchor *anc;
  int nanc = 0, depth = 0, done = 0, nodes = 0, ok = 1;
  sm__vnode *root = NULL;

  st = sm_calloc(MAX_DEPTH + 1, sizeof(*st));
  anc = sm_calloc(MAX_ANCHORS, sizeof(*anc));
  if (st == NULL || anc == NULL || !yaml_parser_initialize(&p)) {
    sm_free(st);
    sm_free(anc);
    return NULL;
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  while (!done) {
    sm__vnode *n = NULL;
    const char *aname = NULL;
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
      done = 1;
      break;
    case YAML_DOCUMENT_END_EVENT:
      /* Only the first document is read. */
      if (root != NULL)
        done = 1;
      break;
    case YAML_SCALAR_EVENT:
      if (depth > 0 && st[depth - 1].node->t != SM__T_LIST &&
          st[depth - 1].key == NULL) {
        const char *k = (const char *)ev.data.scalar.value;
        if (strcmp(k, "<<") == 0)
          st[depth - 1].merge_pending = 1;
        st[depth - 1].key = sm__strndup(c, k, ev.data.scalar.length);
        if (st[depth - 1].key == NULL)
          ok = 0, done = 1;
        break;
      }
      n = yaml_scalar(c, &ev, rel, line);
      aname = (const char *)ev.data.scalar.anchor;
      break;
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT: {
      const char *tag = ev.type == YAML_MAPPING_START_EVENT
                            ? (const char *)ev.data.mapping_start.tag
                            : (const char *)ev.data.sequence_start.tag;
      n = sm__vt_new(
          c, ev.type == YAML_MAPPING_START_EVENT ? SM__T_MAP : SM__T_LIST, rel,
          line);
      if (n != NULL && tag != NULL &&
          (strncmp(tag, "!new:", 5) == 0 || strncmp(tag, "!name:", 6) == 0 ||
           strncmp(tag, "!apply:", 7) == 0)) {
        /* HyperPyYAML: an object built from its keyword arguments. */
        n->t = SM__T_CALL;
        n->str = sm__strdup(c, strchr(tag, ':') + 1);
      }
      aname = ev.type == YAML_MAPPING_START_EVENT
                  ? (const char *)ev.data.mapping_start.anchor
                  : (const char *)ev.data.sequence_start.anchor;
      break;
    }
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      if (depth > 0)
        depth--;
      break;
    case YAML_ALIAS_EVENT: {
      const char *a = (const char *)ev.data.alias.anchor;
      for (int i = nanc - 1; i >= 0 && n == NULL; i--)
        if (strcmp(anc[i].name, a) == 0)
          n = anc[i].node;
      if (n == NULL)
        n = sm__vt_new(c, SM__T_UNKNOWN, rel, line);
      break;
    }
    default:
      break;
    }
    if (n != NULL) {
      if (aname != NULL && nanc < MAX_ANCHORS) {
        anc[nanc].name = sm__strdup(c, aname);
        anc[nanc].node = n;
        if (anc[nanc].name != NULL)
          nanc++;
      }
      if (depth == 0) {
        if (root == NULL)
          root = n;
      } else {
        yframe *f = &st[depth - 1];
        if (f->node->t == SM__T_LIST) {
          sm__vt_push(c, f->node, n);
        } else if (f->merge_pending) {
          /* `<<: *base` merges the aliased mapping(s) in. */
          if (has_members(n))
            for (int i = 0; i < n->n; i++)
              if (n->e[i].key && sm__vt_get(f->node, n->e[i].key) == NULL)
                sm__vt_put(c, f->node, n->e[i].key, n->e[i].v);
          f->merge_pending = 0;
          f->key = NULL;
        } else {
          sm__vt_put(c, f->node, f->key ? f->key : "", n);
          f->key = NULL;
        }
      }
      if ((n->t == SM__T_MAP || n->t == SM__T_LIST || n->t == SM__T_CALL) &&
          (ev.type == YAML_MAPPING_START_EVENT ||
           ev.type == YAML_SEQUENCE_START_EVENT)) {
        if (depth == MAX_DEPTH) {
          sm__warn(c, "%s:%d: YAML nested too deep", rel, line);
          yaml_event_delete(&ev);
          ok = 0;
          break;
        }
        st[depth].node = n;
        st[depth].key = NULL;
        st[depth].merge_pending = 0;
        depth++;
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
  sm_free(st);
  sm_free(anc);
  return ok ? root : NULL;
}

/* ==== JSON ==== */

/* cJSON into a tree, finding each member's line by walking the text in
 * member order. */
typedef struct jpos {
  const char *text; /* start */
  const char *end;  /* end */
  const char *cur;  /* search position */
  int line;         /* line of cur */
} jpos;

static int line_at(jpos *jp, const char *at) {
  for (; jp->cur < at; jp->cur++)
    if (*jp->cur == '\n')
      jp->line++;
  return jp->line;
}

static sm__vnode *json_node(sm__ctx *c, const char *rel, const cJSON *j,
                            jpos *jp, int depth) {
  sm__vnode *n;
  if (depth > MAX_DEPTH)
    return NULL;
  if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
    n = sm__vt_new(c, cJSON_IsObject(j) ? SM__T_MAP : SM__T_LIST, rel,
                   jp->line);
    if (n == NULL)
      return NULL;
    for (const cJSON *k = j->child; k; k = k->next) {
      sm__vnode *ch;
      int line = jp->line;
      if (k->string != NULL) {
        char pat[300];
        const char *hit;
        snprintf(pat, sizeof(pat), "\"%.290s\"", k->string);
        hit = strstr(jp->cur, pat);
        if (hit != NULL && hit < jp->end)
          line = line_at(jp, hit);
      }
      ch = json_node(c, rel, k, jp, depth + 1);
      if (ch == NULL)
        continue;
      ch->line = line;
      if (k->string != NULL)
        sm__vt_put(c, n, sm__strdup(c, k->string), ch);
      else
        sm__vt_push(c, n, ch);
    }
    return n;
  }
  if (cJSON_IsString(j)) {
    n = sm__vt_strv(c, j->valuestring, rel, jp->line);
    if (n != NULL)
      n->flags |= SM__VF_QUOTED;
    return n;
  }
  if (cJSON_IsBool(j))
    return sm__vt_numv(c, SM__T_BOOL, cJSON_IsTrue(j), rel, jp->line);
  if (cJSON_IsNumber(j))
    return sm__vt_numv(c, SM__T_NUM, j->valuedouble, rel, jp->line);
  return sm__vt_new(c, SM__T_NULL, rel, jp->line);
}

sm__vnode *sm__vt_json(sm__ctx *c, const char *rel, const char *text,
                       size_t len) {
  const char *endp = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(text, len, &endp, 0);
  jpos jp = {text, text + len, text, 1};
  sm__vnode *n;
  if (j == NULL) {
    int line = 1;
    const char *e = cJSON_GetErrorPtr();
    if (e != NULL && e >= text && e <= text + len)
      for (const char *p = text; p < e; p++)
        line += *p == '\n';
    sm__warn(c, "%s:%d: JSON error: unparsable", rel, line);
    return NULL;
  }
  n = json_node(c, rel, j, &jp, 0);
  cJSON_Delete(j);
  return n;
}

/* ==== Dotted key=value lists ==== */

sm__vnode *sm__vt_dotlist(sm__ctx *c, const char *const *words, int n,
                          const char *const *ev) {
  sm__vnode *root = sm__vt_new(c, SM__T_MAP, NULL, 0);
  for (int i = 0; i < n && root != NULL; i++) {
    const char *w = words[i], *eq = strchr(w, '=');
    char key[256];
    sm__vnode *v;
    if (eq == NULL || eq == w)
      continue;
    sm__key_norm(w, (size_t)(eq - w), key, sizeof(key));
    if (key[0] == '\0')
      continue;
    v = sm__vt_text(c, eq + 1, NULL, 0);
    if (v == NULL)
      return NULL;
    if (ev != NULL && ev[i] != NULL && strcmp(ev[i], "command") != 0) {
      /* "path:line" from a script. */
      const char *colon = strrchr(ev[i], ':');
      if (colon != NULL) {
        v->path = sm__strndup(c, ev[i], (size_t)(colon - ev[i]));
        v->line = atoi(colon + 1);
      }
    }
    root = sm__vt_set_path(c, root, key, v);
  }
  return root;
}
