/* launchwords.c - the words of a launch that both the command reader
 * (command.c) and the shell interpreter (shrun.c) need: the launcher and
 * wrapper word tables, how much a command looks like the training launch,
 * VAR=value assignments and the launch environment, "--opt value"
 * options, and the Slurm resource options (sbatch/srun flags and #SBATCH
 * lines) that set gpus and nodes. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

const char *sm__base_name(const char *s) {
  const char *b = strrchr(s, '/');
  return b ? b + 1 : s;
}

int sm__is_assignment(const char *w) {
  const char *eq = strchr(w, '=');
  if (eq == NULL || eq == w || !(isalpha((unsigned char)w[0]) || w[0] == '_'))
    return 0;
  for (const char *p = w; p < eq; p++)
    if (!isalnum((unsigned char)*p) && *p != '_')
      return 0;
  return 1;
}

void sm__set_envn(sm__ctx *c, const char *k, size_t kn, const char *v) {
  for (int i = 0; i < c->n_env; i++)
    if (strlen(c->env_k[i]) == kn && strncmp(c->env_k[i], k, kn) == 0) {
      c->env_v[i] = sm__strdup(c, v);
      return;
    }
  if (c->n_env >= SM__MAX_ENV)
    return;
  c->env_k[c->n_env] = sm__strndup(c, k, kn);
  c->env_v[c->n_env] = sm__strdup(c, v);
  if (c->env_k[c->n_env] && c->env_v[c->n_env])
    c->n_env++;
}

int sm__parse_count(const char *s, double *out) {
  long long v;
  if (s == NULL || sm_parse_i64(s, &v) != 0 || v <= 0 || v > 1000000)
    return -1;
  *out = (double)v;
  return 0;
}

/* "--opt=value" or "--opt value": returns the value and advances *i. */
const char *sm__opt_value(const char *const *words, int nw, int *i,
                          const char *name) {
  const char *w = words[*i];
  size_t n = strlen(name);
  if (strncmp(w, name, n) != 0)
    return NULL;
  if (w[n] == '=')
    return w + n + 1;
  if (w[n] == '\0' && *i + 1 < nw) {
    (*i)++;
    return words[*i];
  }
  return NULL;
}

void sm__set_gpn(sm__ctx *c, const char *v, const char *ev, int force) {
  double x;
  if (sm__parse_count(v, &x) == 0 && (force || c->gpus_per_node == 0)) {
    c->gpus_per_node = x;
    c->gpn_ev = ev;
  }
}

void sm__set_nodes(sm__ctx *c, const char *v, const char *ev, int force) {
  double x;
  if (v == NULL)
    return;
  if (strchr(v, ':') != NULL) {
    /* An elastic range "1:4" leaves the count open. */
    const char *colon = strchr(v, ':');
    if (strcmp(colon + 1, v) != 0 &&
        strncmp(v, colon + 1, (size_t)(colon - v)) != 0) {
      c->nodes_unfixed = 1;
      return;
    }
    v = colon + 1;
  }
  if (sm__parse_count(v, &x) == 0 && (force || c->nodes == 0)) {
    c->nodes = x;
    c->nodes_ev = ev;
  }
}

/* "gpu:4", "gpu:a100:4", "gpu" */
static void set_gres(sm__ctx *c, const char *v, const char *ev) {
  const char *g = strstr(v, "gpu");
  const char *colon;
  if (g == NULL)
    return;
  colon = strrchr(g, ':');
  sm__set_gpn(c, colon ? colon + 1 : "1", ev, 0);
}

/* ==== Slurm ==== */

/* Applies one sbatch/srun option at words[*i]. */
int sm__slurm_opt(sm__ctx *c, const char *const *w, int n, int *i,
                  const char *ev) {
  const char *v;
  if ((v = sm__opt_value(w, n, i, "--nodes")) ||
      (v = sm__opt_value(w, n, i, "-N"))) {
    sm__set_nodes(c, v, ev, 0);
  } else if ((v = sm__opt_value(w, n, i, "--gres"))) {
    set_gres(c, v, ev);
  } else if ((v = sm__opt_value(w, n, i, "--gpus-per-node"))) {
    const char *colon = strrchr(v, ':');
    sm__set_gpn(c, colon ? colon + 1 : v, ev, 0);
  } else if ((v = sm__opt_value(w, n, i, "--gpus")) ||
             (v = sm__opt_value(w, n, i, "-G"))) {
    const char *colon = strrchr(v, ':');
    double x;
    if (sm__parse_count(colon ? colon + 1 : v, &x) == 0 && c->gpus_total == 0) {
      c->gpus_total = x;
      c->gt_ev = ev;
    }
  } else if ((v = sm__opt_value(w, n, i, "--ntasks-per-node"))) {
    /* One task per GPU is the usual layout; --gres wins when given. */
    if (c->gpn_ev == NULL)
      sm__set_gpn(c, v, ev, 0);
  } else if ((v = sm__opt_value(w, n, i, "--ntasks")) ||
             (v = sm__opt_value(w, n, i, "-n"))) {
    double x;
    if (sm__parse_count(v, &x) == 0 && c->gpus_total == 0 &&
        c->gpn_ev == NULL) {
      c->gpus_total = x;
      c->gt_ev = ev;
    }
  } else if (w[*i][0] == '-' && strchr(w[*i], '=') == NULL && w[*i][1] != '-' &&
             w[*i][1] != '\0' && w[*i][2] == '\0' && *i + 1 < n) {
    /* A short option with a separate value: -p partition, -t time. */
    (*i)++;
  } else if (w[*i][0] != '-') {
    return 0;
  }
  return 1;
}

/* ==== Shell scripts ==== */

/* How much a command looks like the training launch of a script. */
int sm__launch_score(const char *const *w, int n) {
  int score = 0, i = 0;
  while (i < n && sm__is_assignment(w[i]))
    i++;
  for (; i < n; i++) {
    const char *b = sm__base_name(w[i]);
    if (strcmp(b, "torchrun") == 0 || strcmp(b, "deepspeed") == 0 ||
        strcmp(b, "accelerate") == 0 || strcmp(b, "srun") == 0 ||
        strcmp(b, "torchx") == 0 || strcmp(b, "mpirun") == 0 ||
        strcmp(b, "mpiexec") == 0 || strcmp(b, "composer") == 0)
      score += 2;
    if (strstr(b, "train") || strstr(b, "finetune") || strstr(b, "pretrain") ||
        strcmp(b, "main.py") == 0 || strstr(b, "fit"))
      score += 3;
    if (strstr(b, "eval") || strstr(b, "test") || strstr(b, "infer") ||
        strstr(b, "predict") || strstr(b, "generate") || strstr(b, "convert") ||
        strstr(b, "preprocess") || strstr(b, "download") ||
        strstr(b, "prepare") || strstr(b, "export") || strstr(b, "merge"))
      score -= 4;
    if (strncmp(b, "python", 6) == 0 || strstr(b, ".py") != NULL)
      score += 1;
    if (strstr(b, ".sh") != NULL)
      score += 1;
  }
  return score;
}

/* An option a GPU training run takes (--lr, --max-update, --batch_size,
 * -epochs, --config-name, --bf16): a word part of its name is a training
 * schedule, optimiser, precision or configuration word.  A tool that
 * trains something else (a tokenizer: --vocab_size, --model_prefix)
 * passes none of them. */
static int training_option(const char *a) {
  static const char *const parts[] = {
      "lr",         "learning", "batch",     "bsz",   "epoch",  "epochs",
      "update",     "updates",  "step",      "steps", "iter",   "iters",
      "iterations", "warmup",   "optimizer", "optim", "config", "cfg",
      "fp16",       "bf16",     "amp",       "gpus",  NULL};
  size_t end;
  if (a[0] != '-')
    return 0;
  while (*a == '-')
    a++;
  end = strcspn(a, "=");
  for (size_t p = 0; p < end;) {
    size_t n = strcspn(a + p, "-_.=");
    if (p + n > end)
      n = end - p;
    for (int k = 0; parts[k]; k++)
      if (strlen(parts[k]) == n && strncmp(a + p, parts[k], n) == 0)
        return 1;
    p += n + 1;
  }
  return 0;
}

/* A configuration file given as a bare argument (tool-train run.yaml). */
static int config_argument(const char *const *w, int i) {
  static const char *const exts[] = {".yaml", ".yml", ".toml",
                                     ".json", ".gin", NULL};
  size_t l = strlen(w[i]);
  if (w[i][0] == '-' ||
      (i > 1 && w[i - 1][0] == '-' && strchr(w[i - 1], '=') == NULL))
    return 0;
  for (int k = 0; exts[k]; k++) {
    size_t e = strlen(exts[k]);
    if (l > e && strcmp(w[i] + l - e, exts[k]) == 0)
      return 1;
  }
  return 0;
}

/* The word form of a tool's trainer: TOOL-train, TOOL_finetune. */
static int trainer_word(const char *w) {
  const char *b = sm__base_name(w);
  static const char *const words[] = {"train", "finetune", "pretrain", NULL};
  if (b != w || strchr(b, '.') != NULL || strchr(b, '=') != NULL)
    return 0; /* a path or a file is the repository's, an assignment none */
  for (const char *a = b; *a;) {
    size_t n = strcspn(a, "-_");
    for (int k = 0; words[k]; k++)
      if (strlen(words[k]) == n && strncmp(a, words[k], n) == 0)
        return a != b; /* a tool's subcommand word: fairseq-train */
    a += n;
    if (*a)
      a++;
  }
  return 0;
}

int sm__is_external_trainer(const char *const *w, int n) {
  if (n < 1 || !trainer_word(w[0]))
    return 0;
  /* The word form alone is weak (spm_train trains a tokenizer): the
   * command must also pass a training option or a configuration file. */
  for (int i = 1; i < n; i++)
    if (training_option(w[i]) || config_argument(w, i))
      return 1;
  return 0;
}

int sm__is_trainer_word(const char *w) {
  return trainer_word(w);
}

int sm__is_launch_word(const char *const *all, int n) {
  const char *w = all[0], *b = sm__base_name(w);
  return sm__is_external_trainer(all, n) || strncmp(b, "python", 6) == 0 ||
         strcmp(b, "torchrun") == 0 || strcmp(b, "deepspeed") == 0 ||
         strcmp(b, "accelerate") == 0 || strcmp(b, "srun") == 0 ||
         strcmp(b, "mpirun") == 0 || strcmp(b, "mpiexec") == 0 ||
         strcmp(b, "bash") == 0 || strcmp(b, "sh") == 0 ||
         strcmp(b, "horovodrun") == 0 || strcmp(b, "torchx") == 0 ||
         strcmp(b, "composer") == 0 ||
         (strlen(b) > 3 && strcmp(b + strlen(b) - 3, ".sh") == 0) ||
         (strlen(b) > 3 && strcmp(b + strlen(b) - 3, ".py") == 0);
}

int sm__is_wrapper(const char *w) {
  const char *b = sm__base_name(w);
  return strcmp(b, "env") == 0 || strcmp(b, "nohup") == 0 ||
         strcmp(b, "time") == 0 || strcmp(b, "exec") == 0 ||
         strcmp(b, "sudo") == 0 || strcmp(b, "stdbuf") == 0 ||
         strcmp(b, "nice") == 0 || strcmp(b, "numactl") == 0 ||
         strcmp(b, "taskset") == 0;
}

void sm__set_env(sm__ctx *c, const char *k, const char *v) {
  sm__set_envn(c, k, strlen(k), v);
}

void sm__slurm_line(sm__ctx *c, const char *text, size_t n, const char *ev) {
  const char **w;
  int nw = sm__sh_split(c, text, n, NULL, &w, 64);
  for (int i = 0; i < nw; i++)
    sm__slurm_opt(c, w, nw, &i, ev);
}
