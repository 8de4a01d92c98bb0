/* keys.c - the configuration keys that carry each metadata field
 * (data/embed/keys.tsv, embedded in the binary), in order of
 * preference.  The resolver asks for a role ("per_device", "steps",
 * "d_model") and gets a NULL-terminated list of key names. */
#include <pthread.h>
#include <string.h>

#include "advisor/advisor_int.h"

extern const char sm__embed_keys[];
extern const unsigned long sm__embed_keys_len;

#define MAX_ROLES 64
#define MAX_KEYS 96

typedef struct role {
  char name[32];                  /* role */
  const char *keys[MAX_KEYS + 1]; /* keys, NULL-terminated */
  int n;                          /* count */
} role;

static role roles[MAX_ROLES];
static int n_roles;
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
      *tab = '\0';
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
