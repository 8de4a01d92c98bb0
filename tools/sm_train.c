/* sm_train - build-time tool: learns a line classifier's prototypes from a
 * labelled corpus and writes them as C source.
 *
 *   sm_train --name NAME --out FILE.c [--cv K] CORPUS.tsv
 *
 * The corpus has one example per line, "label<TAB>text".  Lines starting
 * with '#' are comments, except "# classes: a b c", which fixes the class
 * order (otherwise classes appear in order of first use), and
 * "# options: max_per_class=32 lines_per_proto=4 min_score=0.05" sets
 * training options for this corpus (sm_train_opts fields; unset ones keep
 * their defaults).  The output
 * defines `const sm_protoset sm__protoset_NAME`.  With --cv K it also
 * prints K-fold cross-validated accuracy and a confusion table to stderr,
 * which is how a corpus is judged while it is being written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedmate/sm_text.h"
#include "schedmate/sm_util.h"

#define MAX_CLASSES 32

typedef struct corpus {
  char *text;          /* whole file */
  const char **lines;  /* example texts */
  size_t *lens;        /* their lengths */
  int *labels;         /* their classes */
  size_t n;            /* examples */
  char *classes[MAX_CLASSES];
  int n_classes;
  sm_train_opts opts; /* from "# options:" */
} corpus;

static int class_index(corpus *c, const char *name, size_t len, int add) {
  for (int i = 0; i < c->n_classes; i++)
    if (strlen(c->classes[i]) == len && memcmp(c->classes[i], name, len) == 0)
      return i;
  if (!add || c->n_classes == MAX_CLASSES)
    return -1;
  c->classes[c->n_classes] = sm_strndup(name, len);
  return c->n_classes++;
}

/* Sets one "name=value" training option; returns 0 for an unknown name
 * or a bad value. */
static int set_option(sm_train_opts *o, const char *tok, const char *val) {
  size_t nl = (size_t)(strchr(tok, '=') - tok);
  char *end;
  double v = strtod(val, &end);

  if (*val == '\0' || *end != '\0' || v < 0)
    return 0;
#define OPT(name, field, type)                                                \
  if (nl == sizeof(name) - 1 && strncmp(tok, name, nl) == 0) {                \
    o->field = (type)v;                                                       \
    return 1;                                                                 \
  }
  OPT("dims", dims, uint32_t)
  OPT("max_per_class", max_per_class, int)
  OPT("lines_per_proto", lines_per_proto, int)
  OPT("kmeans_iters", kmeans_iters, int)
  OPT("lvq_epochs", lvq_epochs, int)
  OPT("min_score", min_score, float)
  OPT("seed", seed, uint64_t)
#undef OPT
  return 0;
}

static int load(corpus *c, const char *path) {
  sm_err err = {0};
  size_t len, cap = 0, lineno = 0;
  char *p, *end;

  if (sm_file_read_all(path, (size_t)256 << 20, &c->text, &len, &err) != 0) {
    fprintf(stderr, "sm_train: %s\n", err.msg);
    return -1;
  }
  p = c->text;
  end = c->text + len;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *e = nl ? nl : end;
    char *tab;
    lineno++;
    if (e > p && e[-1] == '\r')
      e[-1] = '\0';
    *e = '\0';
    if (strncmp(p, "# options:", 10) == 0) {
      char *s = p + 10, *tok;
      while ((tok = strtok(s, " \t")) != NULL) {
        char *eq = strchr(tok, '=');
        s = NULL;
        if (eq == NULL || !set_option(&c->opts, tok, eq + 1)) {
          fprintf(stderr, "sm_train: %s:%zu: bad option '%s'\n", path,
                  lineno, tok);
          return -1;
        }
      }
    } else if (strncmp(p, "# classes:", 10) == 0) {
      char *s = p + 10, *tok;
      while ((tok = strtok(s, " \t")) != NULL) {
        class_index(c, tok, strlen(tok), 1);
        s = NULL;
      }
    } else if (*p != '#' && *p != '\0') {
      int cl;
      tab = strchr(p, '\t');
      if (tab == NULL) {
        fprintf(stderr, "sm_train: %s:%zu: no TAB after the label\n", path,
                lineno);
        return -1;
      }
      cl = class_index(c, p, (size_t)(tab - p), 1);
      if (cl < 0) {
        fprintf(stderr, "sm_train: %s:%zu: too many classes\n", path, lineno);
        return -1;
      }
      if (c->n == cap) {
        cap = cap ? cap * 2 : 1024;
        c->lines = realloc(c->lines, cap * sizeof(*c->lines));
        c->lens = realloc(c->lens, cap * sizeof(*c->lens));
        c->labels = realloc(c->labels, cap * sizeof(*c->labels));
        if (!c->lines || !c->lens || !c->labels) {
          fprintf(stderr, "sm_train: out of memory\n");
          return -1;
        }
      }
      c->lines[c->n] = tab + 1;
      c->lens[c->n] = strlen(tab + 1);
      c->labels[c->n] = cl;
      c->n++;
    }
    p = e + 1;
  }
  if (c->n == 0) {
    fprintf(stderr, "sm_train: %s: no examples\n", path);
    return -1;
  }
  return 0;
}

/* Frees what load() allocated (so that sanitizer builds run it clean). */
static void corpus_release(corpus *c) {
  sm_free(c->text);
  free(c->lines);
  free(c->lens);
  free(c->labels);
  for (int i = 0; i < c->n_classes; i++)
    sm_free(c->classes[i]);
  memset(c, 0, sizeof(*c));
}

/* K-fold cross-validation: prints accuracy and the confusion table. */
static void cross_validate(const corpus *c, int k, const sm_train_opts *o) {
  size_t n = c->n, right = 0, unknown = 0;
  size_t conf[MAX_CLASSES][MAX_CLASSES + 1];
  const char **tl = malloc(n * sizeof(*tl));
  size_t *tn = malloc(n * sizeof(*tn));
  int *tlab = malloc(n * sizeof(*tlab));

  memset(conf, 0, sizeof(conf));
  for (int f = 0; f < k; f++) {
    size_t m = 0;
    sm_protoset *ps;
    sm_linecls *cls;
    sm_err err = {0};
    for (size_t i = 0; i < n; i++)
      if ((int)(i % (size_t)k) != f) {
        tl[m] = c->lines[i];
        tn[m] = c->lens[i];
        tlab[m] = c->labels[i];
        m++;
      }
    if (sm_protoset_train(tl, tn, tlab, m, c->n_classes,
                          (const char *const *)c->classes, o, &ps, NULL,
                          &err) != 0) {
      fprintf(stderr, "sm_train: %s\n", err.msg);
      break;
    }
    cls = sm_linecls_new(ps);
    for (size_t i = (size_t)f; i < n; i += (size_t)k) {
      int got = sm_linecls_classify(cls, c->lines[i], c->lens[i], NULL);
      if (got == c->labels[i])
        right++;
      if (got < 0)
        unknown++;
      conf[c->labels[i]][got < 0 ? c->n_classes : got]++;
      if (got != c->labels[i] && getenv("SM_TRAIN_SHOW_ERRORS"))
        fprintf(stderr, "  miss %s -> %s: %.*s\n", c->classes[c->labels[i]],
                got < 0 ? "?" : c->classes[got], (int)SM_MIN(c->lens[i], 160),
                c->lines[i]);
    }
    sm_linecls_free(cls);
    sm_protoset_free(ps);
  }
  fprintf(stderr, "sm_train: %d-fold accuracy %.2f%% (%zu/%zu, %zu unknown)\n",
          k, 100.0 * (double)right / (double)n, right, n, unknown);
  fprintf(stderr, "%12s", "truth\\got");
  for (int j = 0; j < c->n_classes; j++)
    fprintf(stderr, " %8.8s", c->classes[j]);
  fprintf(stderr, " %8s\n", "?");
  for (int i = 0; i < c->n_classes; i++) {
    fprintf(stderr, "%12.12s", c->classes[i]);
    for (int j = 0; j <= c->n_classes; j++)
      fprintf(stderr, " %8zu", conf[i][j]);
    fprintf(stderr, "\n");
  }
  free(tl);
  free(tn);
  free(tlab);
}

static int write_c(const sm_protoset *ps, const char *name, const char *src,
                   const char *out) {
  FILE *f = fopen(out, "w");
  size_t nw = (size_t)ps->dims * (size_t)ps->stride;

  if (f == NULL) {
    perror(out);
    return -1;
  }
  fprintf(f, "/* Generated by sm_train from %s: do not edit. */\n", src);
  fprintf(f, "#include \"schedmate/sm_text.h\"\n\n");
  fprintf(f, "static const char *const class_names[%d] = {", ps->n_classes);
  for (int i = 0; i < ps->n_classes; i++)
    fprintf(f, "%s\"%s\"", i ? ", " : "", ps->class_names[i]);
  fprintf(f, "};\n\nstatic const int proto_class[%d] = {", ps->n_protos);
  for (int i = 0; i < ps->n_protos; i++)
    fprintf(f, "%s%d", i ? "," : "", ps->proto_class[i]);
  fprintf(f, "};\n\nstatic const float weights[%zu] = {\n", nw);
  for (size_t i = 0; i < nw; i++) {
    float v = ps->weights[i];
    if (i > 0)
      fputc(',', f);
    if (i % 16 == 0 && i > 0)
      fputc('\n', f);
    if (v == 0.0f)
      fputs("0", f);
    else
      fprintf(f, "%.6g", (double)v);
  }
  fprintf(f, "};\n\n");
  fprintf(f, "extern const sm_protoset sm__protoset_%s;\n", name);
  fprintf(f,
          "const sm_protoset sm__protoset_%s = {\"%s\", %uu, %d, class_names, "
          "%d, %d, proto_class, weights, %.6gf};\n",
          name, name, ps->dims, ps->n_classes, ps->n_protos, ps->stride,
          (double)ps->min_score);
  if (fclose(f) != 0) {
    perror(out);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  const char *name = NULL, *out = NULL, *in = NULL;
  int cv = 0;
  corpus c = {0};
  sm_train_opts o = {0};
  sm_protoset *ps;
  sm_err err = {0};
  double acc;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
      name = argv[++i];
    else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (strcmp(argv[i], "--cv") == 0 && i + 1 < argc)
      cv = atoi(argv[++i]);
    else if (argv[i][0] != '-')
      in = argv[i];
    else {
      fprintf(stderr, "usage: sm_train --name NAME --out FILE.c [--cv K] "
                      "CORPUS.tsv\n");
      return 2;
    }
  }
  if (name == NULL || in == NULL || (out == NULL && cv == 0)) {
    fprintf(stderr,
            "usage: sm_train --name NAME --out FILE.c [--cv K] CORPUS.tsv\n");
    return 2;
  }
  if (load(&c, in) != 0) {
    corpus_release(&c);
    return 1;
  }
  o = c.opts;
  if (cv > 1)
    cross_validate(&c, cv, &o);
  if (out == NULL) {
    corpus_release(&c);
    return 0;
  }
  if (sm_protoset_train(c.lines, c.lens, c.labels, c.n, c.n_classes,
                        (const char *const *)c.classes, &o, &ps, &acc,
                        &err) != 0) {
    fprintf(stderr, "sm_train: %s: %s\n", in, err.msg);
    corpus_release(&c);
    return 1;
  }
  fprintf(stderr,
          "sm_train: %s: %zu lines, %d classes, %d prototypes, training "
          "accuracy %.1f%%\n",
          name, c.n, c.n_classes, ps->n_protos, acc * 100.0);
  corpus_release(&c);
  if (write_c(ps, name, in, out) != 0) {
    sm_protoset_free(ps);
    return 1;
  }
  sm_protoset_free(ps);
  return 0;
}
