/* keys.c - the configuration keys that carry each metadata field
 * (data/embed/keys.tsv, embedded in the binary), in order of
 * preference.  The resolver asks for a role ("per_device", "steps",
 * "d_model") and gets a NULL-terminated list of key names. */
#include <ctype.h>
#include <pthread.h>
#include <string.h>

#include "advisor/advisor_int.h"

extern const char sm__embed_keys[];
extern const unsigned long sm__embed_keys_len;

#define MAX_ROLES 64
#define MAX_KEYS 96
#define MAX_RULES 64
#define MAX_GROUPS 8

typedef struct role {
  char name[32];                  /* role */
  const char *keys[MAX_KEYS + 1]; /* keys, NULL-terminated */
  int n;                          /* count */
} role;

/* One token rule of a role: every group must hold. */
typedef struct rule {
  char role[32];                 /* role */
  const char *group[MAX_GROUPS]; /* "a|b|c" token sets */
  int neg[MAX_GROUPS];           /* the group forbids its tokens */
  int n;                         /* groups */
} rule;

static role roles[MAX_ROLES];
static int n_roles;
static rule rules[MAX_RULES];
static int n_rules;
static char *text;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *const none[] = {NULL};

static void load(void) {
  text = sm_strndup(sm__embed_keys, sm__embed_keys_len);
  if (text == NULL)
    return;
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n'), *tab, *save = NULL;
    role *r = NULL;
    if (nl)
      *nl = '\0';
    if (p[0] != '#' && (tab = strchr(p, '\t')) != NULL) {
      size_t rl;
      *tab = '\0';
      rl = strlen(p);
      if (rl > 1 && p[rl - 1] == '~') {
        /* A token rule: ROLE~ group group ... */
        rule *ru = n_rules < MAX_RULES ? &rules[n_rules++] : NULL;
        if (ru != NULL) {
          snprintf(ru->role, sizeof(ru->role), "%.*s", (int)(rl - 1), p);
          for (char *g = strtok_r(tab + 1, " \t\r", &save);
               g && ru->n < MAX_GROUPS; g = strtok_r(NULL, " \t\r", &save)) {
            ru->neg[ru->n] = g[0] == '!';
            ru->group[ru->n++] = g[0] == '!' ? g + 1 : g;
          }
        }
        p = nl ? nl + 1 : NULL;
        continue;
      }
      for (int i = 0; i < n_roles && r == NULL; i++)
        if (strcmp(roles[i].name, p) == 0)
          r = &roles[i];
      if (r == NULL && n_roles < MAX_ROLES) {
        r = &roles[n_roles++];
        snprintf(r->name, sizeof(r->name), "%s", p);
      }
      for (char *k = strtok_r(tab + 1, " \t\r", &save);
           k && r && r->n < MAX_KEYS; k = strtok_r(NULL, " \t\r", &save))
        r->keys[r->n++] = k;
    }
    p = nl ? nl + 1 : NULL;
  }
}

const char *const *sm__keys(const char *name) {
  pthread_once(&once, load);
  for (int i = 0; i < n_roles; i++)
    if (strcmp(roles[i].name, name) == 0)
      return roles[i].keys;
  return none;
}

/* Is tok (len n) one of the '|'-separated tokens of set? */
static int in_set(const char *set, const char *tok, size_t n) {
  for (const char *a = set; *a;) {
    const char *b = strchr(a, '|');
    size_t k = b ? (size_t)(b - a) : strlen(a);
    if (k == n && strncmp(a, tok, n) == 0)
      return 1;
    if (b == NULL)
      break;
    a = b + 1;
  }
  return 0;
}

int sm__key_role(const char *leaf, const char *role) {
  const char *tok[24];
  size_t len[24];
  int nt = 0;
  pthread_once(&once, load);
  if (leaf == NULL || leaf[0] == '\0' || strlen(leaf) > 96)
    return 0;
  for (const char *a = leaf; *a && nt < 24;) {
    const char *b = a;
    while (*b && *b != '_' && *b != '.')
      b++;
    if (b > a) {
      tok[nt] = a;
      len[nt++] = (size_t)(b - a);
    }
    a = *b ? b + 1 : b;
  }
  for (int r = 0; r < n_rules; r++) {
    const rule *ru = &rules[r];
    int ok = 1;
    if (strcmp(ru->role, role) != 0)
      continue;
    unsigned used = 0;
    for (int g = 0; g < ru->n && ok; g++) {
      int hit = -1;
      /* Each required group is met by a token of its own. */
      for (int t = 0; t < nt && hit < 0; t++)
        if (in_set(ru->group[g], tok[t], len[t]) &&
            (ru->neg[g] || !(used & (1u << t))))
          hit = t;
      if (hit >= 0 && !ru->neg[g])
        used |= 1u << hit;
      ok = ru->neg[g] ? hit < 0 : hit >= 0;
    }
    if (ok)
      return 1;
  }
  return 0;
}

const char *sm__dotted_key(char *t, int attribute, int names_only) {
  char *p;
  for (p = t; *p; p++) {
    if (names_only ? !(isalnum((unsigned char)*p) || *p == '_' || *p == '.')
                   : isspace((unsigned char)*p) != 0)
      return NULL;
    *p = (char)tolower((unsigned char)*p);
  }
  if (attribute) {
    char *dot = strchr(t, '.');
    if (dot != NULL)
      t = dot + 1;
  }
  return t;
}
