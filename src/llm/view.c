/* view.c - the repository as the model may see it: the Advisor's safe
 * reader (src/advisor/repo.c: real root, ".." collapsed, links that
 * leave the root refused, regular files only, data and environment
 * files skipped, caps on bytes and time) plus a directory lister.
 *
 * Files are opened only through the reader.  Directories are listed by
 * walking from the root one component at a time with openat(O_NOFOLLOW |
 * O_DIRECTORY), so a link can never turn a listing into one of a
 * directory outside the root, and a file is shown only when the reader
 * would read it (so the model is never offered what it may not have). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor/advisor_int.h"
#include "llm/llm_int.h"
#include "util/util_int.h"

#define MAX_FILES_KEPT 64
#define MAX_DIR_ENTRIES 4096
#define MAX_DEPTH 4

/* Directory names never shown: hidden ones (version control, virtual
 * environments, caches) are left out by their dot; these are the others
 * the extractor never reads. */
static const char *const skip_dirs[] = {
    "node_modules",  "__pycache__", "site-packages",
    "dist-packages", "venv",        "wandb",
    "outputs",       "checkpoints", NULL};

typedef struct kept {
  const char *rel;  /* root-relative path */
  const char *data; /* contents (the reader's arena) */
  size_t len;
} kept;

struct sm__llm_view {
  sm_extract_req req;         /* what the reader was opened with */
  sm_extract_res res;         /* receives the reader's warnings */
  sm__ctx ctx;                /* the reader */
  char root[PATH_MAX];        /* real root */
  kept files[MAX_FILES_KEPT]; /* files read so far */
  int n_files;
};

sm__llm_view *sm__llm_view_open(const char *repo, const char *cwd,
                                size_t max_bytes, double budget_s,
                                sm_err *err) {
  sm__llm_view *v = sm_calloc(1, sizeof(*v));

  if (v == NULL) {
    sm_err_set(err, SM_ENOMEM, "out of memory");
    return NULL;
  }
  v->req.repo = repo;
  v->req.cwd = cwd;
  v->req.max_total_bytes = max_bytes;
  v->req.max_files = 200;
  v->req.time_budget_s = budget_s > 0 ? budget_s : 60;
  sm_meta_init(&v->res.meta);
  sm__ctx_init(&v->ctx, &v->req, &v->res);
  if (sm__repo_open(&v->ctx, err) != 0 || realpath(repo, v->root) == NULL) {
    if (err && err->code == 0)
      sm_err_set(err, SM_ENOENT, "%s: not a repository", repo);
    sm__llm_view_close(v);
    return NULL;
  }
  return v;
}

void sm__llm_view_close(sm__llm_view *v) {
  if (v == NULL)
    return;
  sm__ctx_release(&v->ctx);
  sm_extract_res_release(&v->res);
  sm_free(v);
}

const char *sm__llm_view_path(sm__llm_view *v, const char *path) {
  if (path == NULL)
    return NULL;
  for (const char *p = path; *p; p++)
    if ((unsigned char)*p < 0x20)
      return NULL;
  if (path[0] == '\0' || strcmp(path, ".") == 0 || strcmp(path, "/") == 0)
    return "";
  return sm__repo_join(&v->ctx, "", path);
}

int sm__llm_view_file(sm__llm_view *v, const char *rel, const char **data,
                      size_t *len) {
  int rc;

  for (int i = 0; i < v->n_files; i++)
    if (strcmp(v->files[i].rel, rel) == 0) {
      *data = v->files[i].data;
      *len = v->files[i].len;
      return 0;
    }
  if (!sm__repo_is_file(&v->ctx, rel))
    return sm__repo_exists(&v->ctx, rel) ? SM_EACCES : SM_ENOENT;
  rc = sm__repo_read_again(&v->ctx, rel, data, len);
  if (rc != 0)
    return rc;
  if (v->n_files < MAX_FILES_KEPT) {
    kept *k = &v->files[v->n_files];
    k->rel = sm__strdup(&v->ctx, rel);
    if (k->rel != NULL) {
      k->data = *data;
      k->len = *len;
      v->n_files++;
    }
  }
  return 0;
}

int sm__llm_view_line(sm__llm_view *v, const char *rel, long n, const char **s,
                      size_t *len) {
  const char *data, *p, *e;
  size_t dl;
  long line = 1;
  int rc = sm__llm_view_file(v, rel, &data, &dl);

  if (rc != 0)
    return rc;
  if (n < 1)
    return SM_ERANGE;
  p = data;
  e = data + dl;
  while (line < n) {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    if (nl == NULL)
      return SM_ERANGE;
    p = nl + 1;
    line++;
  }
  if (p >= e)
    return SM_ERANGE;
  {
    const char *nl = memchr(p, '\n', (size_t)(e - p));
    *s = p;
    *len = nl ? (size_t)(nl - p) : (size_t)(e - p);
    if (*len > 0 && (*s)[*len - 1] == '\r')
      (*len)--;
  }
  return 0;
}

/* Opens the directory rel (root-relative, normalised) without following
 * any link.  Returns a descriptor or -1. */
static int open_dir(sm__llm_view *v, const char *rel) {
  char part[NAME_MAX + 1];
  int fd = open(v->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  const char *s = rel;

  while (fd >= 0 && *s) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    int nfd;
    if (n == 0 || n > NAME_MAX) {
      close(fd);
      return -1;
    }
    memcpy(part, s, n);
    part[n] = '\0';
    nfd = openat(fd, part, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    close(fd);
    fd = nfd;
    s = e ? e + 1 : s + n;
  }
  return fd;
}

static int shown_dir(const char *name) {
  if (name[0] == '.')
    return 0;
  for (int i = 0; skip_dirs[i]; i++)
    if (strcmp(skip_dirs[i], name) == 0)
      return 0;
  return 1;
}

static int printable(const char *name) {
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return 0;
  return 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names shown in directory rel, sorted; directories end in '/'.
 * Returns the count (names are malloc'd into *out) or -1. */
static int dir_names(sm__llm_view *v, const char *rel, char ***out) {
  int fd = open_dir(v, rel), n = 0;
  size_t cap = 0;
  char **names = NULL;
  struct dirent *e;
  DIR *d;

  *out = NULL;
  if (fd < 0)
    return -1;
  d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    return -1;
  }
  while ((e = readdir(d)) != NULL && n < MAX_DIR_ENTRIES) {
    char path[PATH_MAX];
    struct stat st;
    int is_dir;
    char *name;

    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        !printable(e->d_name))
      continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    is_dir = S_ISDIR(st.st_mode);
    if (snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "",
                 e->d_name) >= (int)sizeof(path))
      continue;
    if (is_dir ? !shown_dir(e->d_name) : !sm__repo_is_file(&v->ctx, path))
      continue;
    if (SM__GROW(names, (size_t)n + 1, cap) != 0)
      break;
    name = sm_malloc(strlen(e->d_name) + 2);
    if (name == NULL)
      break;
    sprintf(name, "%s%s", e->d_name, is_dir ? "/" : "");
    names[n++] = name;
  }
  closedir(d);
  if (n > 1)
    qsort(names, (size_t)n, sizeof(*names), cmp_str);
  *out = names;
  return n;
}

static void free_names(char **names, int n) {
  for (int i = 0; i < n; i++)
    sm_free(names[i]);
  sm_free(names);
}

int sm__llm_view_list(sm__llm_view *v, const char *rel, sm_buf *out,
                      int max_entries) {
  char **names;
  int n = dir_names(v, rel, &names), shown = 0;

  if (n < 0)
    return SM_ENOENT;
  for (int i = 0; i < n && shown < max_entries; i++, shown++)
    if (sm_buf_addf(out, "%s%s%s\n", rel, *rel ? "/" : "", names[i]) != 0)
      break;
  if (n > shown)
    sm_buf_addf(out, "(%d more entries not shown)\n", n - shown);
  free_names(names, n);
  return shown;
}

int sm__llm_view_tree(sm__llm_view *v, sm_buf *out, int max_entries,
                      size_t max_bytes) {
  /* Breadth first over directories: a queue of root-relative paths. */
  char *queue[512];
  int depth[512], qh = 0, qt = 0, shown = 0, more = 0;
  size_t start = out->len;

  queue[qt] = sm_strdup("");
  depth[qt++] = 0;
  while (qh < qt) {
    char *dir = queue[qh];
    int dd = depth[qh++];
    char **names;
    int n = dir ? dir_names(v, dir, &names) : -1;

    for (int i = 0; i < n; i++) {
      size_t nl = strlen(names[i]);
      int is_dir = nl > 0 && names[i][nl - 1] == '/';
      if (shown >= max_entries || out->len - start >= max_bytes) {
        more++;
        continue;
      }
      sm_buf_addf(out, "%s%s%s\n", dir, *dir ? "/" : "", names[i]);
      shown++;
      if (is_dir && dd + 1 < MAX_DEPTH && qt < (int)SM_ARRAY_LEN(queue)) {
        char *sub = sm_malloc(strlen(dir) + nl + 2);
        if (sub != NULL) {
          sprintf(sub, "%s%s%.*s", dir, *dir ? "/" : "", (int)(nl - 1),
                  names[i]);
          queue[qt] = sub;
          depth[qt++] = dd + 1;
        }
      }
    }
    if (n > 0)
      free_names(names, n);
    sm_free(dir);
  }
  if (more)
    sm_buf_addf(out, "(%d more entries not shown; use list)\n", more);
  return shown;
}

const char *sm__llm_view_norm(sm__llm_view *v, int dataset, const char *raw) {
  const char *t = NULL, *d = NULL;
  if (raw == NULL || *raw == '\0')
    return NULL;
  return dataset ? sm__norm_dataset(&v->ctx, raw, &t, &d)
                 : sm__norm_model(&v->ctx, raw, &t, &d);
}
