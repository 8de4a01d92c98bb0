/* frameworks.c - documented defaults of library classes.
 *
 * Training code often subclasses a library's argument class and leaves
 * most values to it (a TrainingArguments subclass that sets only a few
 * fields).  The defaults the library documents are kept as data
 * (data/embed/frameworks.tsv, embedded in the binary) and given to the
 * evaluator as the attributes of that base class. */
#include <pthread.h>
#include <string.h>

#include "advisor/advisor_int.h"

extern const char sm__embed_frameworks[];
extern const unsigned long sm__embed_frameworks_len;

#define MAX_ROWS 512

typedef struct row {
  const char *cls; /* class name (last component) */
  const char *key; /* attribute */
  const char *val; /* value text */
  int line;        /* line in the table */
} row;

static row rows[MAX_ROWS];
static int n_rows;
static char *table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  char *save = NULL, *l;
  int line = 0;
  table = sm_strndup(sm__embed_frameworks, sm__embed_frameworks_len);
  if (table == NULL)
    return;
  /* strtok_r skips empty lines, so lines are counted by hand. */
  for (char *p = table; p && *p && n_rows < MAX_ROWS;) {
    char *nl = strchr(p, '\n'), *f[3];
    int nf = 0;
    line++;
    if (nl)
      *nl = '\0';
    l = p;
    p = nl ? nl + 1 : NULL;
    if (l[0] == '#' || l[0] == '\0')
      continue;
    for (char *q = strtok_r(l, "\t", &save); q && nf < 3;
         q = strtok_r(NULL, "\t", &save))
      f[nf++] = q;
    if (nf != 3)
      continue;
    rows[n_rows].cls = f[0];
    rows[n_rows].key = f[1];
    rows[n_rows].val = f[2];
    rows[n_rows].line = line;
    n_rows++;
  }
}

sm__vnode *sm__framework_defaults(sm__ctx *c, const char *dotted) {
  const char *d = strrchr(dotted, '.'), *cls = d ? d + 1 : dotted;
  sm__vnode *m = NULL;
  pthread_once(&once, load);
  for (int i = 0; i < n_rows; i++) {
    sm__vnode *v;
    if (strcmp(rows[i].cls, cls) != 0)
      continue;
    if (m == NULL && (m = sm__vt_new(c, SM__T_MAP, NULL, 0)) == NULL)
      return NULL;
    v = sm__vt_text(c, rows[i].val, "data/embed/frameworks.tsv", rows[i].line);
    if (v != NULL)
      sm__vt_put(c, m, rows[i].key, v);
  }
  return m;
}
