/* command.c - the launch command as a user submits it: VAR=value
 * prefixes, wrappers (env, nohup, time), launchers (torchrun and
 * torch.distributed.run/launch, accelerate launch, deepspeed, srun,
 * mpirun, sbatch), shell scripts that are followed line by line, Python
 * scripts, modules and console entry points.  The launcher's resource
 * flags become gpus/nodes; the entry script's arguments are kept for
 * sm__command_args, which applies them once the code has said which
 * options are flags. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "advisor/advisor_int.h"

#define MAX_WORDS 512
#define MAX_DEPTH 4

/* One command being interpreted. */
typedef struct cmdline {
  const char **w;  /* words */
  const char **ev; /* evidence per word */
  int n;           /* count */
  const char *dir; /* directory it runs in (root-relative) */
  int depth;       /* script nesting */
} cmdline;

static int launch(sm__ctx *c, cmdline *cl, sm__shvars *vars);

static int count_list(const char *s) {
  int n = 0, in = 0;
  for (; *s; s++) {
    if (*s == ',') {
      in = 0;
    } else if (!isspace((unsigned char)*s) && !in) {
      in = 1;
      n++;
    }
  }
  return n;
}

/* "--opt=value" or "--opt value": returns the value and advances *i. */
static const char *opt_value(cmdline *cl, int *i, const char *name) {
  return sm__opt_value(cl->w, cl->n, i, name);
}

/* Same option spelt with '-' or '_' (torchrun accepts both). */
static const char *opt_value2(cmdline *cl, int *i, const char *name) {
  char alt[64];
  const char *v = opt_value(cl, i, name);
  size_t k;
  if (v != NULL)
    return v;
  for (k = 0; name[k] && k + 1 < sizeof(alt); k++)
    alt[k] = (k > 1 && name[k] == '_') ? '-' : name[k];
  alt[k] = '\0';
  return opt_value(cl, i, alt);
}

/* Follows the shell script file rel of the repository. */
static void follow_script(sm__ctx *c, const char *rel, const char *const *args,
                          int nargs, const char *dir, int depth) {
  if (depth > MAX_DEPTH) {
    sm__warn(c, "%s: scripts nested too deep, not followed", rel);
    return;
  }
  sm__sh_run(c, rel, NULL, 0, args, nargs, dir, depth);
}

/* ==== Launchers ==== */

/* Options of torchrun / torch.distributed.launch that take a value. */
static const char *const torchrun_valued[] = {"--master_port",
                                              "--master-port",
                                              "--master_addr",
                                              "--master-addr",
                                              "--node_rank",
                                              "--node-rank",
                                              "--rdzv_backend",
                                              "--rdzv-backend",
                                              "--rdzv_endpoint",
                                              "--rdzv-endpoint",
                                              "--rdzv_id",
                                              "--rdzv-id",
                                              "--rdzv_conf",
                                              "--rdzv-conf",
                                              "--max_restarts",
                                              "--max-restarts",
                                              "--monitor_interval",
                                              "--monitor-interval",
                                              "--log_dir",
                                              "--log-dir",
                                              "--redirects",
                                              "-r",
                                              "--tee",
                                              "-t",
                                              "--role",
                                              "--start_method",
                                              "--start-method",
                                              "--local_addr",
                                              "--local-addr",
                                              "--logs_specs",
                                              "--local-ranks-filter",
                                              NULL};

static int in_list(const char *const *list, const char *w) {
  const char *eq = strchr(w, '=');
  size_t n = eq ? (size_t)(eq - w) : strlen(w);
  for (int i = 0; list[i]; i++)
    if (strlen(list[i]) == n && strncmp(list[i], w, n) == 0)
      return 1;
  return 0;
}

/* Sets the entry script and its arguments from words [i, n). */
static void set_entry(sm__ctx *c, cmdline *cl, int i, const char *path) {
  c->entry = path;
  c->cmd_dir = cl->dir;
  c->sargs = cl->w + i;
  c->sargs_ev = cl->ev + i;
  c->n_sargs = cl->n - i;
  if (path != NULL) {
    const char *slash = strrchr(path, '/');
    c->entry_dir = slash ? sm__strndup(c, path, (size_t)(slash - path)) : "";
    sm__py_queue(c, path, SM__L_ENTRY, 0);
    sm__words_in(c, path, strlen(path), "command", 2);
  }
}

static int python_script(sm__ctx *c, cmdline *cl, int i) {
  const char *path;
  if (i >= cl->n) {
    sm__warn(c, "command: no script after the interpreter");
    return -1;
  }
  path = sm__repo_join(c, cl->dir, cl->w[i]);
  if (path == NULL || !sm__fs_is_file(c, path)) {
    sm__warn(c, "command: %s: script not found in the repository", cl->w[i]);
    set_entry(c, cl, i + 1, NULL);
    return -1;
  }
  set_entry(c, cl, i + 1, path);
  return 0;
}

static int python_module(sm__ctx *c, cmdline *cl, int i) {
  const char *path;
  if (i >= cl->n) {
    sm__warn(c, "command: -m without a module");
    return -1;
  }
  path = sm__py_module_path(c, cl->dir, cl->w[i], 0);
  if (path == NULL) {
    sm__warn(c, "command: module %s not found in the repository", cl->w[i]);
    set_entry(c, cl, i + 1, NULL);
    return -1;
  }
  set_entry(c, cl, i + 1, path);
  return 0;
}

static int torchrun(sm__ctx *c, cmdline *cl, int i) {
  c->launcher = 1;
  if (c->launcher_name == NULL)
    c->launcher_name = "torchrun";
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if ((v = opt_value2(cl, &i, "--nproc_per_node"))) {
      if (strcmp(v, "gpu") == 0 || strcmp(v, "auto") == 0)
        c->gpus_unfixed = 1;
      else
        sm__set_gpn(c, v, ev, 1);
    } else if ((v = opt_value(cl, &i, "--nnodes"))) {
      sm__set_nodes(c, v, ev, 1);
    } else if (strcmp(w, "-m") == 0 || strcmp(w, "--module") == 0) {
      return python_module(c, cl, i + 1);
    } else if (in_list(torchrun_valued, w)) {
      if (strchr(w, '=') == NULL)
        i++;
    } else if (w[0] == '-') {
      /* A flag: --use_env, --standalone, --no_python. */
    } else {
      return python_script(c, cl, i);
    }
  }
  sm__warn(c, "command: no script after the launcher");
  return -1;
}

static int deepspeed_launcher(sm__ctx *c, cmdline *cl, int i) {
  int have_gpus = 0, have_nodes = 0, hostfile = 0;
  c->launcher = 1;
  c->launcher_name = "deepspeed";
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if ((v = opt_value2(cl, &i, "--num_gpus"))) {
      sm__set_gpn(c, v, ev, 1);
      have_gpus = 1;
    } else if ((v = opt_value2(cl, &i, "--num_nodes"))) {
      sm__set_nodes(c, v, ev, 1);
      have_nodes = 1;
    } else if ((v = opt_value(cl, &i, "--include")) ||
               (v = opt_value(cl, &i, "-i"))) {
      /* localhost:0,1,2,3 */
      const char *colon = strchr(v, ':');
      if (colon != NULL && strchr(colon + 1, '@') == NULL &&
          strchr(v, '@') == NULL) {
        char num[16];
        snprintf(num, sizeof(num), "%d", count_list(colon + 1));
        sm__set_gpn(c, num, ev, 1);
        have_gpus = 1;
      }
    } else if ((v = opt_value(cl, &i, "--hostfile")) ||
               (v = opt_value(cl, &i, "-H"))) {
      hostfile = 1;
    } else if (strcmp(w, "--module") == 0) {
      return python_module(c, cl, i + 1);
    } else if (w[0] == '-' && strchr(w, '=') == NULL &&
               (strcmp(w, "--master_port") == 0 ||
                strcmp(w, "--master_addr") == 0 ||
                strcmp(w, "--launcher") == 0 || strcmp(w, "--exclude") == 0 ||
                strcmp(w, "-e") == 0 || strcmp(w, "--launcher_args") == 0 ||
                strcmp(w, "--ssh_port") == 0)) {
      i++;
    } else if (w[0] == '-') {
      /* flag */
    } else {
      if (!have_gpus)
        c->gpus_unfixed = 1;
      if (hostfile && !have_nodes)
        c->nodes_unfixed = 1;
      return python_script(c, cl, i);
    }
  }
  sm__warn(c, "command: no script after deepspeed");
  return -1;
}

/* Reads an accelerate config YAML into launcher facts; its keys are
 * kept under "accelerate." so that they never pass for the script's. */
static void accelerate_config(sm__ctx *c, const char *rel) {
  sm__vnode *t = sm__cfg_tree(c, rel);
  if (t == NULL)
    return;
  sm__vt_publish(c, t, "accelerate", SM__L_CONFIG);
  sm__accelerate_tree(c, t);
}

static int accelerate(sm__ctx *c, cmdline *cl, int i) {
  const char *cfg = NULL;
  int have_np = 0;
  c->launcher = 1;
  c->launcher_name = "accelerate";
  if (i < cl->n && strcmp(cl->w[i], "launch") == 0)
    i++;
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if ((v = opt_value2(cl, &i, "--num_processes"))) {
      double x;
      if (sm__parse_count(v, &x) == 0) {
        c->gpus_total = x;
        c->gt_ev = ev;
        have_np = 1;
      }
    } else if ((v = opt_value2(cl, &i, "--num_machines"))) {
      sm__set_nodes(c, v, ev, 1);
    } else if ((v = opt_value2(cl, &i, "--config_file"))) {
      cfg = sm__repo_join(c, cl->dir, v);
    } else if ((v = opt_value2(cl, &i, "--mixed_precision"))) {
      c->precision = strcmp(v, "no") == 0 ? "fp32" : v;
      c->precision_ev = ev;
    } else if ((v = opt_value2(cl, &i, "--zero_stage"))) {
      c->strategy = sm__printf(c, "deepspeed_zero%s", v);
      c->strategy_ev = ev;
    } else if (strcmp(w, "--use_fsdp") == 0) {
      c->strategy = "fsdp";
      c->strategy_ev = ev;
    } else if (strcmp(w, "--use_deepspeed") == 0) {
      if (c->strategy == NULL) {
        c->strategy = "deepspeed";
        c->strategy_ev = ev;
      }
    } else if (strcmp(w, "--multi_gpu") == 0) {
      if (c->strategy == NULL) {
        c->strategy = "ddp";
        c->strategy_ev = ev;
      }
    } else if ((v = opt_value2(cl, &i, "--gpu_ids"))) {
      if (strcmp(v, "all") != 0 && !have_np) {
        c->gpus_total = count_list(v);
        c->gt_ev = ev;
      }
    } else if (strcmp(w, "-m") == 0 || strcmp(w, "--module") == 0) {
      if (cfg)
        accelerate_config(c, cfg);
      return python_module(c, cl, i + 1);
    } else if (w[0] == '-' && strchr(w, '=') == NULL && i + 1 < cl->n &&
               cl->w[i + 1][0] != '-' && strstr(cl->w[i + 1], ".py") == NULL) {
      i++; /* another valued option */
    } else if (w[0] == '-') {
      /* flag */
    } else {
      if (cfg != NULL)
        accelerate_config(c, cfg);
      if (c->gpus_total == 0 && c->gpus_per_node == 0)
        c->gpus_unfixed = 1;
      return python_script(c, cl, i);
    }
  }
  sm__warn(c, "command: no script after accelerate launch");
  return -1;
}

/* torchx run [-s SCHED] [--scheduler_args A] dist.ddp -j NxM --script X.py
 * [-- ARGS]: the component's -j is nodes x processes per node; script
 * arguments follow `--`. */
static int torchx(sm__ctx *c, cmdline *cl, int i) {
  const char *script = NULL, *module = NULL;
  int comp = 0, dash = -1;
  c->launcher = 1;
  c->launcher_name = "torchx";
  if (i < cl->n && strcmp(cl->w[i], "run") == 0)
    i++;
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if (strcmp(w, "--") == 0) {
      dash = i + 1;
      break;
    }
    if (!comp) {
      if (w[0] != '-') {
        comp = 1; /* dist.ddp, utils.python, ... */
        continue;
      }
      if (strchr(w, '=') == NULL &&
          (strcmp(w, "-s") == 0 || strcmp(w, "--scheduler") == 0 ||
           strcmp(w, "-cfg") == 0 || strcmp(w, "--scheduler_args") == 0 ||
           strcmp(w, "--workspace") == 0 || strcmp(w, "--parent_run_id") == 0))
        i++;
      continue;
    }
    if ((v = opt_value(cl, &i, "-j")) || (v = opt_value(cl, &i, "--j"))) {
      /* "2x8", "8", "1:2x8" (elastic) */
      const char *x = strchr(v, 'x');
      if (x != NULL) {
        char nodes[32];
        snprintf(nodes, sizeof(nodes), "%.*s", (int)(x - v), v);
        sm__set_nodes(c, nodes, ev, 1);
        sm__set_gpn(c, x + 1, ev, 1);
      } else {
        sm__set_gpn(c, v, ev, 1);
      }
    } else if ((v = opt_value(cl, &i, "--script"))) {
      script = v;
    } else if ((v = opt_value(cl, &i, "-m")) ||
               (v = opt_value(cl, &i, "--m"))) {
      module = v;
    } else if ((v = opt_value(cl, &i, "--gpu"))) {
      /* GPUs per replica in the resource request. */
      sm__set_gpn(c, v, ev, 0);
    } else if (w[0] == '-' && strchr(w, '=') == NULL && i + 1 < cl->n &&
               cl->w[i + 1][0] != '-') {
      i++; /* --cpu 8, --memMB 1024, --name x, --image y */
    }
  }
  {
    /* The script's words: its arguments after `--`. */
    cmdline rest = *cl;
    int n0 = dash >= 0 ? dash : cl->n;
    const char **w =
        sm_arena_calloc(&c->arena, (size_t)(cl->n - n0) + 2, sizeof(*w));
    const char **ev =
        sm_arena_calloc(&c->arena, (size_t)(cl->n - n0) + 2, sizeof(*ev));
    if (w == NULL || ev == NULL)
      return -1;
    w[0] = script ? script : module;
    ev[0] = "command";
    for (int k = n0; k < cl->n; k++) {
      w[k - n0 + 1] = cl->w[k];
      ev[k - n0 + 1] = cl->ev[k];
    }
    rest.w = w;
    rest.ev = ev;
    rest.n = cl->n - n0 + 1;
    if (w[0] == NULL) {
      sm__warn(c, "command: torchx without --script or -m");
      return -1;
    }
    return script ? python_script(c, &rest, 0) : python_module(c, &rest, 0);
  }
}

static int python(sm__ctx *c, cmdline *cl, int i) {
  for (; i < cl->n; i++) {
    const char *w = cl->w[i];
    if (strcmp(w, "-m") == 0) {
      const char *m = i + 1 < cl->n ? cl->w[i + 1] : "";
      if (strcmp(m, "torch.distributed.run") == 0 ||
          strcmp(m, "torch.distributed.launch") == 0) {
        c->launcher_name = m;
        return torchrun(c, cl, i + 2);
      }
      if (strcmp(m, "deepspeed.launcher.runner") == 0)
        return deepspeed_launcher(c, cl, i + 2);
      if (strcmp(m, "accelerate.commands.launch") == 0)
        return accelerate(c, cl, i + 2);
      return python_module(c, cl, i + 1);
    }
    if (strcmp(w, "-c") == 0) {
      sm__warn(c, "command: python -c code is not read");
      return -1;
    }
    if (strcmp(w, "-W") == 0 || strcmp(w, "-X") == 0) {
      i++;
      continue;
    }
    if (w[0] == '-')
      continue;
    return python_script(c, cl, i);
  }
  sm__warn(c, "command: python without a script");
  return -1;
}

/* The composer launcher: -n/--nproc processes per node (every visible
 * GPU when not given), --world_size in all, -m/--module. */
static int composer(sm__ctx *c, cmdline *cl, int i) {
  int have = 0;
  c->launcher = 1;
  c->launcher_name = "composer";
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if ((v = opt_value2(cl, &i, "--nproc")) || (v = opt_value2(cl, &i, "-n"))) {
      sm__set_gpn(c, v, ev, 1);
      have = 1;
    } else if ((v = opt_value2(cl, &i, "--world_size"))) {
      double t;
      if (sm_parse_double(v, &t) == 0 && t > 0 && t < 1e6) {
        c->gpus_total = t;
        c->gt_ev = ev;
        have = 1;
      }
    } else if (strcmp(w, "-m") == 0 || strcmp(w, "--module") == 0) {
      if (!have)
        c->gpus_unfixed = 1;
      return python_module(c, cl, i + 1);
    } else if (w[0] == '-') {
      /* --base_rank, --node_rank, --master_addr, --master_port take a
       * value; -v, --stdout... */
      if (strchr(w, '=') == NULL && i + 1 < cl->n &&
          (strstr(w, "rank") || strstr(w, "master") || strstr(w, "std") ||
           strstr(w, "log")))
        i++;
    } else {
      if (!have)
        c->gpus_unfixed = 1;
      return python_script(c, cl, i);
    }
  }
  sm__warn(c, "command: no script after the launcher");
  return -1;
}

/* A launcher program the extractor has no table for (`lightning run
 * model`, `fabric run`, a cluster tool's `submit`): it is read only when
 * a Python script of the repository follows it.  Its subcommand words
 * are skipped; its resource options are read by the names launchers
 * share (--devices, --nproc_per_node, --num_processes: processes per
 * node; --num_nodes, --nnodes: nodes); other valued options are skipped.
 * Returns 1 when no script of the repository follows (not a launcher). */
static int generic_launcher(sm__ctx *c, cmdline *cl, int i) {
  static const char *const per_node[] = {
      "--devices",  "--nproc_per_node", "--nproc-per-node",
      "--gpus",     "--num_processes",  "--num-processes",
      "--num_gpus", "--num-gpus",       NULL};
  static const char *const node_opts[] = {"--num_nodes", "--num-nodes",
                                          "--nnodes", "--nodes", NULL};
  int s = -1;
  for (int k = i; k < cl->n && k < i + 64; k++) {
    const char *w = cl->w[k];
    size_t n = strlen(w);
    if (w[0] == '-')
      continue;
    if (n > 3 && strcmp(w + n - 3, ".py") == 0) {
      const char *path = sm__repo_join(c, cl->dir, w);
      if (path != NULL && sm__fs_is_file(c, path))
        s = k;
      break;
    }
    if (strncmp(sm__base_name(w), "python", 6) == 0) {
      s = k;
      break;
    }
  }
  if (s < 0)
    return 1;
  for (int k = i; k < s; k++) {
    const char *v = NULL, *ev = cl->ev[k];
    int j = k, hit = 0;
    for (int o = 0; per_node[o] && !hit; o++)
      if ((v = opt_value(cl, &j, per_node[o])) != NULL && j <= s) {
        if (strcmp(v, "auto") == 0 || strcmp(v, "-1") == 0)
          c->gpus_unfixed = 1;
        else
          sm__set_gpn(c, v, ev, 1);
        hit = 1;
      }
    for (int o = 0; node_opts[o] && !hit; o++)
      if ((v = opt_value(cl, &j, node_opts[o])) != NULL && j <= s) {
        sm__set_nodes(c, v, ev, 1);
        hit = 1;
      }
    if (hit) {
      /* Only a program with resource options launches processes; `uv
       * run`, `poetry run` and the like only wrap the interpreter. */
      c->launcher = 1;
      c->launcher_name = sm__base_name(cl->w[i - 1]);
      k = j;
    }
  }
  if (strncmp(sm__base_name(cl->w[s]), "python", 6) == 0)
    return python(c, cl, s + 1);
  return python_script(c, cl, s);
}

static int mpirun(sm__ctx *c, cmdline *cl, int i) {
  static const char *const valued[] = {
      "-x",        "-H",       "--host",  "-host",      "--hostfile",
      "-hostfile", "--map-by", "-map-by", "--bind-to",  "-bind-to",
      "-wdir",     "--wdir",   "-env",    "--rankfile", "-f",
      "-ppn",      NULL};
  c->launcher = 1;
  c->launcher_name = "mpirun";
  for (; i < cl->n; i++) {
    const char *v, *w = cl->w[i];
    const char *ev = cl->ev[i];
    if ((v = opt_value(cl, &i, "-np")) || (v = opt_value(cl, &i, "-n")) ||
        (v = opt_value(cl, &i, "--np")) || (v = opt_value(cl, &i, "-c"))) {
      double x;
      if (sm__parse_count(v, &x) == 0) {
        c->gpus_total = x;
        c->gt_ev = ev;
      }
    } else if ((v = opt_value(cl, &i, "-npernode")) ||
               (v = opt_value(cl, &i, "--npernode")) ||
               (v = opt_value(cl, &i, "-N"))) {
      sm__set_gpn(c, v, ev, 1);
    } else if (strcmp(w, "--mca") == 0 || strcmp(w, "-mca") == 0) {
      i += 2;
    } else if (in_list(valued, w)) {
      if (strchr(w, '=') == NULL)
        i++;
    } else if (w[0] != '-') {
      cmdline rest = *cl;
      rest.w += i;
      rest.ev += i;
      rest.n -= i;
      return launch(c, &rest, NULL);
    }
  }
  return -1;
}

static int run_script(sm__ctx *c, cmdline *cl, int i) {
  const char *path = sm__repo_join(c, cl->dir, cl->w[i]);
  if (path == NULL || !sm__fs_is_file(c, path)) {
    sm__warn(c, "command: %s: script not found in the repository", cl->w[i]);
    return -1;
  }
  follow_script(c, path, cl->w + i + 1, cl->n - i - 1, cl->dir, cl->depth);
  return 0;
}

/* The top package directory of a module path (src/pkg/cli/x.py ->
 * src/pkg). */
static const char *package_root(sm__ctx *c, const char *path) {
  char dir[1024];
  const char *best = NULL;
  const char *slash = strrchr(path, '/');
  snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
  while (dir[0] != '\0') {
    char *up;
    const char *init = sm__printf(c, "%s/__init__.py", dir);
    if (!sm__fs_is_file(c, init))
      break;
    best = sm__strdup(c, dir);
    up = strrchr(dir, '/');
    if (up == NULL)
      break;
    *up = '\0';
  }
  return best;
}

/* The module a CLI subcommand runs: a file named after it in the entry's
 * directory, the directories under it, then the directories above up to
 * the package root (breadth first, bounded). */
static const char *subcommand_module(sm__ctx *c, const char *entry,
                                     const char *sub) {
  const char *root = package_root(c, entry), *queue[64];
  char name[128];
  int nq = 0;
  const char *slash = strrchr(entry, '/');
  const char *dir = slash ? sm__strndup(c, entry, (size_t)(slash - entry)) : "";
  if (root == NULL || strlen(sub) + 4 >= sizeof(name))
    return NULL;
  snprintf(name, sizeof(name), "%s.py", sub);
  for (size_t k = 0; name[k]; k++)
    if (name[k] == '-')
      name[k] = '_';
  /* The entry's directory and its parents up to the package root. */
  for (const char *d = dir; d != NULL && nq < 8;) {
    const char *up;
    queue[nq++] = d;
    if (strcmp(d, root) == 0)
      break;
    up = strrchr(d, '/');
    d = up ? sm__strndup(c, d, (size_t)(up - d)) : NULL;
  }
  for (int q = 0; q < nq; q++) {
    const char **names;
    int n = sm__src_list(c, queue[q], &names, 512);
    const char *p = sm__printf(c, "%s/%s", queue[q], name);
    if (p != NULL && sm__fs_is_file(c, p))
      return p;
    for (int k = 0; k < n && nq < 64; k++) {
      const char *sd = sm__printf(c, "%s/%s", queue[q], names[k]);
      if (strchr(names[k], '.') == NULL && sm__fs_is_dir(c, sd) &&
          strcmp(names[k], "tests") != 0 && strcmp(names[k], "test") != 0) {
        int seen = 0;
        for (int j = 0; j < nq && !seen; j++)
          seen = strcmp(queue[j], sd) == 0;
        if (!seen)
          queue[nq++] = sd;
      }
    }
  }
  return NULL;
}

static const char *native_source(sm__ctx *c, const char *dir, const char *w);
static void native_usage(sm__ctx *c, const char *src);

static int launch(sm__ctx *c, cmdline *cl, sm__shvars *vars) {
  int i = 0;
  (void)vars;
  while (i < cl->n) {
    const char *w = cl->w[i], *b;
    if (sm__is_assignment(w)) {
      const char *eq = strchr(w, '=');
      sm__set_envn(c, w, (size_t)(eq - w), eq + 1);
      if (strncmp(w, "CUDA_VISIBLE_DEVICES=", 21) == 0 && eq[1] != '\0') {
        char num[16];
        snprintf(num, sizeof(num), "%d", count_list(eq + 1));
        sm__set_gpn(c, num, cl->ev[i], 0);
      }
      i++;
      continue;
    }
    b = sm__base_name(w);
    sm__words_in(c, w, strlen(w), cl->ev[i], 2);
    if (strcmp(b, "env") == 0 || strcmp(b, "nohup") == 0 ||
        strcmp(b, "time") == 0 || strcmp(b, "exec") == 0 ||
        strcmp(b, "sudo") == 0 || strcmp(b, "stdbuf") == 0 ||
        strcmp(b, "nice") == 0 || strcmp(b, "numactl") == 0) {
      i++;
      while (i < cl->n && cl->w[i][0] == '-')
        i++;
      continue;
    }
    if (strcmp(b, "bash") == 0 || strcmp(b, "sh") == 0 ||
        strcmp(b, "zsh") == 0 || strcmp(b, "source") == 0 ||
        strcmp(b, ".") == 0) {
      i++;
      while (i < cl->n && cl->w[i][0] == '-')
        i++;
      if (i >= cl->n) {
        sm__warn(c, "command: %s without a script", b);
        return -1;
      }
      return run_script(c, cl, i);
    }
    if (strcmp(b, "sbatch") == 0 || strcmp(b, "srun") == 0 ||
        strcmp(b, "salloc") == 0) {
      for (i++; i < cl->n; i++)
        if (!sm__slurm_opt(c, cl->w, cl->n, &i, cl->ev[i]))
          break;
      if (strcmp(b, "srun") == 0)
        c->launcher = 1;
      continue;
    }
    if (strcmp(b, "mpirun") == 0 || strcmp(b, "mpiexec") == 0 ||
        strcmp(b, "horovodrun") == 0)
      return mpirun(c, cl, i + 1);
    if (strcmp(b, "torchrun") == 0)
      return torchrun(c, cl, i + 1);
    if (strcmp(b, "deepspeed") == 0)
      return deepspeed_launcher(c, cl, i + 1);
    if (strcmp(b, "accelerate") == 0)
      return accelerate(c, cl, i + 1);
    if (strcmp(b, "torchx") == 0)
      return torchx(c, cl, i + 1);
    if (strcmp(b, "composer") == 0)
      return composer(c, cl, i + 1);
    if (strncmp(b, "python", 6) == 0)
      return python(c, cl, i + 1);
    {
      size_t n = strlen(b);
      if ((n > 3 && strcmp(b + n - 3, ".sh") == 0) ||
          (n > 6 && strcmp(b + n - 6, ".slurm") == 0) ||
          (n > 7 && strcmp(b + n - 7, ".sbatch") == 0))
        return run_script(c, cl, i);
      if (n > 3 && strcmp(b + n - 3, ".py") == 0)
        return python_script(c, cl, i);
    }
    {
      /* A console entry point declared by the package; a subcommand word
       * after it (`trl sft`, `axolotl train`) names the module that
       * runs. */
      const char *mod = sm__console_entry(c, b);
      if (mod != NULL) {
        const char *path = sm__py_module_path(c, "", mod, 0);
        if (path != NULL) {
          const char *sub = NULL;
          if (i + 1 < cl->n && cl->w[i + 1][0] != '-' &&
              strchr(cl->w[i + 1], '/') == NULL &&
              strchr(cl->w[i + 1], '.') == NULL)
            sub = subcommand_module(c, path, cl->w[i + 1]);
          c->entry_pkg = package_root(c, path);
          if (sub != NULL)
            set_entry(c, cl, i + 2, sub);
          else
            set_entry(c, cl, i + 1, path);
          return 0;
        }
      }
    }
    {
      /* A compiled trainer built in the repository (./train_gpt2cu from
       * train_gpt2.cu): its own options, described by its usage text. */
      const char *src = native_source(c, cl->dir, w);
      if (src != NULL) {
        const char *slash = strrchr(src, '/');
        c->entry = src;
        c->cmd_dir = cl->dir;
        c->sargs = cl->w + i + 1;
        c->sargs_ev = cl->ev + i + 1;
        c->n_sargs = cl->n - i - 1;
        c->entry_dir = slash ? sm__strndup(c, src, (size_t)(slash - src)) : "";
        sm__words_in(c, src, strlen(src), "command", 2);
        native_usage(c, src);
        return 0;
      }
    }
    if (i + 1 < cl->n) {
      int r = generic_launcher(c, cl, i + 1);
      if (r != 1)
        return r;
    }
    if (sm__is_external_trainer(cl->w + i, cl->n - i)) {
      c->cmd_dir = cl->dir;
      c->sargs = cl->w + i + 1;
      c->sargs_ev = cl->ev + i + 1;
      c->n_sargs = cl->n - i - 1;
      sm__words_in(c, w, strlen(w), "command", 2);
      sm__warn(c,
               "command: '%s' is installed from another package; only "
               "its options are read",
               w);
      return 0;
    }
    if (sm__is_trainer_word(w)) {
      sm__warn(c,
               "command: '%s' is named like a tool's trainer but is "
               "passed no training option or configuration; not read",
               w);
      return -1;
    }
    sm__warn(c,
             "command: '%s' is not a launcher or script the extractor "
             "knows",
             w);
    return -1;
  }
  sm__warn(c, "command: no program to run");
  return -1;
}

/* The source of a program built in the repository: the first source a
 * Makefile rule `NAME:` names, NAME.c/.cu/.cpp/.cc next to it, or NAME
 * without a trailing "cu" as a .cu file (train_gpt2cu from
 * train_gpt2.cu). */
static const char *native_source(sm__ctx *c, const char *dir, const char *w) {
  static const char *const exts[] = {".c", ".cu", ".cpp", ".cc", NULL};
  const char *b = sm__base_name(w), *mk, *text;
  size_t len, bl = strlen(b);
  const char *wdir;
  if (bl == 0 || bl > 128 || strchr(b, '.') != NULL)
    return NULL;
  wdir = sm__repo_join(c, dir, w);
  if (wdir == NULL)
    return NULL;
  {
    const char *sl = strrchr(wdir, '/');
    wdir = sl ? sm__strndup(c, wdir, (size_t)(sl - wdir)) : "";
  }
  mk = sm__printf(c, "%s%sMakefile", wdir, wdir[0] ? "/" : "");
  if (mk != NULL && sm__fs_is_file(c, mk) &&
      sm__src_text(c, mk, &text, &len) == 0) {
    for (const char *p = text; p && *p;) {
      const char *nl = strchr(p, '\n');
      size_t ll = nl ? (size_t)(nl - p) : strlen(p);
      if (ll > bl && strncmp(p, b, bl) == 0 && p[bl] == ':') {
        /* NAME: dep dep ... -- the first source file. */
        const char *q = p + bl + 1, *end = p + ll;
        while (q < end) {
          const char *a;
          while (q < end && (*q == ' ' || *q == '\t'))
            q++;
          a = q;
          while (q < end && *q != ' ' && *q != '\t')
            q++;
          for (int e = 0; exts[e] && q > a; e++) {
            size_t el = strlen(exts[e]);
            if ((size_t)(q - a) > el && strncmp(q - el, exts[e], el) == 0) {
              const char *path =
                  sm__repo_join(c, wdir, sm__strndup(c, a, (size_t)(q - a)));
              if (path != NULL && sm__fs_is_file(c, path))
                return path;
            }
          }
        }
      }
      p = nl ? nl + 1 : NULL;
    }
  }
  /* NAME.c next to it; NAME without a trailing "cu" as a .cu file. */
  for (int e = 0; exts[e]; e++) {
    const char *p =
        sm__printf(c, "%s%s%s%s", wdir, wdir[0] ? "/" : "", b, exts[e]);
    if (p != NULL && sm__fs_is_file(c, p))
      return p;
  }
  if (bl > 2 && strcmp(b + bl - 2, "cu") == 0) {
    const char *p = sm__printf(c, "%s%s%.*s.cu", wdir, wdir[0] ? "/" : "",
                               (int)(bl - 2), b);
    if (p != NULL && sm__fs_is_file(c, p))
      return p;
  }
  return NULL;
}

/* An option whose documented default names a known model
 * ("(default = gpt2_124M.bin)", a checkpoint file named after it) is the
 * model option, whatever its letter: the value the job gives it names
 * the model, and without one the default does. */
static void native_model_option(sm__ctx *c, const char *opt, const char *d,
                                const char *ev) {
  char val[128];
  size_t k = 0;
  while (d[k] && d[k] != ')' && d[k] != ' ' && d[k] != ',' && d[k] != '"' &&
         d[k] != '\\' && k + 1 < sizeof(val)) {
    val[k] = d[k];
    k++;
  }
  while (k > 0 && (val[k - 1] == '.' || val[k - 1] == ';'))
    k--;
  val[k] = '\0';
  /* The file may add a size or a dtype to the family's name
   * (gpt2_124M_bf16.bin): a leading part of it names the model. */
  if (sm__model_prefix(c, val) == NULL)
    return;
  sm__param_str(c, "__model_option", opt, SM__V_STR, SM__L_CODE, ev);
  {
    sm__param *pp = sm__param_text(c, opt, val, SM__L_ENTRY, ev);
    if (pp != NULL)
      pp->opt = 1;
  }
}

/* The usage text of a compiled trainer: lines of string literals such
 * as "  -b <int>    (per-GPU, micro) batch size B (default = 4)" give
 * each option its role and default. */
static void native_usage(sm__ctx *c, const char *src) {
  const char *text, *slash = strrchr(src, '/');
  const char *mks[3], *mk = NULL;
  size_t len;
  int line = 1;
  /* The build's precision switch (PRECISION ?= BF16): the default the
   * program is compiled with, in the Makefile next to the source, where
   * the command runs, or at the root. */
  mks[0] = sm__printf(c, "%.*s%sMakefile", slash ? (int)(slash - src) : 0, src,
                      slash ? "/" : "");
  mks[1] = c->cmd_dir && c->cmd_dir[0]
               ? sm__printf(c, "%s/Makefile", c->cmd_dir)
               : NULL;
  mks[2] = "Makefile";
  for (int k = 0; k < 3 && mk == NULL; k++)
    if (mks[k] != NULL && sm__fs_is_file(c, mks[k]))
      mk = mks[k];
  if (mk != NULL && sm__src_text(c, mk, &text, &len) == 0) {
    int ml = 1;
    for (const char *p = text, *end = text + len; p < end; ml++) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
      char name[64], val[32];
      if (sscanf(p, "%63[A-Za-z_] ?= %31[A-Za-z0-9_]", name, val) == 2 &&
          ll < 200 && strcasestr(name, "precision") != NULL) {
        for (char *q = val; *q; q++)
          *q = (char)tolower((unsigned char)*q);
        sm__param_str(c, "precision", val, SM__V_STR, SM__L_ENTRY,
                      sm__ev(c, mk, ml));
        break;
      }
      p = nl ? nl + 1 : end;
    }
  }
  if (sm__src_text(c, src, &text, &len) != 0)
    return;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end, *q = memchr(p, '"', (size_t)(le - p));
    if (q != NULL) {
      char opt[16], help[512];
      size_t o = 0, h = 0;
      q++;
      while (q < le && *q == ' ')
        q++;
      if (q < le && *q == '-' && q + 1 < le && isalpha((unsigned char)q[1])) {
        q++;
        while (q < le && (isalnum((unsigned char)*q) || *q == '_') &&
               o + 1 < sizeof(opt))
          opt[o++] = *q++;
        opt[o] = '\0';
        while (q < le && *q == ' ')
          q++;
        if (q < le && *q == '<') {
          /* <int>, <string>, <float> */
          while (q < le && *q != '>')
            q++;
          if (q < le)
            q++;
        }
        while (q < le && *q != '"' && h + 1 < sizeof(help)) {
          if (*q == '\\' && q + 1 < le && q[1] == 'n')
            break;
          help[h++] = *q++;
        }
        help[h] = '\0';
        if (o > 0 && o <= 3 && h > 3) {
          const char *ev = sm__ev(c, src, line);
          const char *d = strstr(help, "default");
          sm__help_roles(c, opt, help, ev);
          if (d != NULL) {
            /* (default = 4), (default: 1) */
            d += 7;
            while (*d == ' ' || *d == '=' || *d == ':')
              d++;
            if (isalpha((unsigned char)*d))
              native_model_option(c, opt, d, ev);
            else if (isdigit((unsigned char)*d) ||
                     (*d == '-' && isdigit((unsigned char)d[1]))) {
              char num[32];
              size_t k = 0;
              while ((isalnum((unsigned char)*d) || *d == '.' || *d == '-') &&
                     k + 1 < sizeof(num))
                num[k++] = *d++;
              while (k > 0 && isalpha((unsigned char)num[k - 1]))
                k--; /* 3e-4f */
              num[k] = '\0';
              {
                sm__param *pp = sm__param_text(c, opt, num, SM__L_ENTRY, ev);
                if (pp != NULL)
                  pp->opt = 1;
              }
            }
          }
        }
      }
    }
    line++;
    p = nl ? nl + 1 : end;
  }
}

int sm__launch_words(sm__ctx *c, const char **w, const char **ev, int n,
                     const char *dir, int depth) {
  cmdline cl;
  cl.w = w;
  cl.ev = ev;
  cl.n = n;
  cl.dir = dir;
  cl.depth = depth;
  return launch(c, &cl, NULL);
}

int sm__command(sm__ctx *c, const char *const *argv, int argc) {
  cmdline cl;
  const char **ev;

  if (argc > MAX_WORDS) {
    sm__warn(c, "command: %d words, only the first %d are read", argc,
             MAX_WORDS);
    argc = MAX_WORDS;
  }
  ev = sm_arena_calloc(&c->arena, (size_t)argc + 1, sizeof(*ev));
  if (ev == NULL)
    return SM_ENOMEM;
  for (int i = 0; i < argc; i++)
    ev[i] = "command";
  cl.w = (const char **)argv;
  cl.ev = ev;
  cl.n = argc;
  cl.dir = c->cwd;
  cl.depth = 0;
  c->cmd_dir = c->cwd;
  /* A whole command given as one word ("python train.py --lr 1") is split
   * like a shell would. */
  if (argc == 1 && strchr(argv[0], ' ') != NULL) {
    const char **w;
    int n = sm__sh_split(c, argv[0], strlen(argv[0]), NULL, &w, MAX_WORDS);
    if (n <= 0) {
      sm__warn(c, "command: cannot split '%s' (unbalanced quotes)", argv[0]);
      return 0;
    }
    ev = sm_arena_calloc(&c->arena, (size_t)n + 1, sizeof(*ev));
    if (ev == NULL)
      return SM_ENOMEM;
    for (int i = 0; i < n; i++)
      ev[i] = "command";
    cl.w = w;
    cl.ev = ev;
    cl.n = n;
  }
  launch(c, &cl, NULL);
  return 0;
}

int sm__command_script(sm__ctx *c, const char *text, size_t len,
                       const char *name, const char *const *args, int nargs) {
  char *copy;

  c->cmd_dir = c->cwd;
  if (len > c->max_file) {
    sm__warn(c, "%s: %zu bytes is over the %zu-byte file cap, not read", name,
             len, c->max_file);
    return 0;
  }
  if (memchr(text, '\0', len) != NULL) {
    sm__warn(c, "%s: binary content, not read", name);
    return 0;
  }
  /* The readers expect NUL-terminated text that lives in the arena. */
  copy = sm__strndup(c, text, len);
  if (copy == NULL)
    return SM_ENOMEM;
  if (nargs > MAX_WORDS)
    nargs = MAX_WORDS;
  sm__sh_run(c, name, copy, len, args, nargs, c->cwd, 0);
  return 0;
}
