/* test_unexplained.c - the configuration provenance of an extraction
 * (src/advisor/unexplained.c): cosmetic changes, renamed copies and
 * copied configs keep the exact-configuration digest; differences the
 * extractor cannot read (an unconsumed option, a preset name, an edited
 * line it does not understand) change the residue while the metadata
 * stays equal, so matching keeps the jobs apart; a change the extractor
 * reads stays a metadata veto.  Every repository is invented here, in
 * more than one layout (argparse + YAML, Hydra-style overrides, a launch
 * script, Python and JSON configs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advisor/unexplained.h"
#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"
#include "schedmate/sm_history.h"
#include "tmprepo.h"

/* Extracts with a command split at spaces; the caller releases res. */
static void run(const char *dir, const char *cmdline, sm_extract_res *res) {
  static char buf[2048];
  const char *argv[64];
  int argc = 0;
  sm_extract_req q;
  sm_err err = {0};

  snprintf(buf, sizeof(buf), "%s", cmdline);
  for (char *t = strtok(buf, " "); t && argc < 64; t = strtok(NULL, " "))
    argv[argc++] = t;
  memset(&q, 0, sizeof(q));
  q.repo = dir;
  q.argv = argv;
  q.argc = argc;
  if (sm_extract(&q, res, &err) != 0)
    SM_FAIL_AT("sm_extract: %s", err.msg);
}

/* The two jobs' digests and their matching verdict. */
typedef struct pair {
  int same_config;  /* equal config digests */
  int same_residue; /* equal residue digests */
  int veto;         /* sm_identity_compare's veto, -1 none */
  int match;        /* sm_identity_compare's answer */
} pair;

static pair compare(const char *dir_a, const char *cmd_a, const char *dir_b,
                    const char *cmd_b) {
  sm_extract_res a, b;
  sm_identity_cmp c;
  pair p;

  run(dir_a, cmd_a, &a);
  run(dir_b, cmd_b, &b);
  if (a.meta.config_digest == NULL || b.meta.config_digest == NULL ||
      a.meta.residue_digest == NULL || b.meta.residue_digest == NULL)
    SM_FAIL_AT("no digests for \"%s\" / \"%s\"", cmd_a, cmd_b);
  p.same_config = strcmp(a.meta.config_digest, b.meta.config_digest) == 0;
  p.same_residue = strcmp(a.meta.residue_digest, b.meta.residue_digest) == 0;
  p.match = sm_identity_compare(&a.meta, NULL, &b.meta, NULL, &c);
  p.veto = c.veto;
  sm_extract_res_release(&a);
  sm_extract_res_release(&b);
  return p;
}

/* An argparse script with a preset table the extractor does not resolve
 * and a YAML config. */
static void argparse_repo(repo *r) {
  repo_make(r);
  put(r, "train.py",
      "import argparse\n"
      "import yaml\n"
      "PRESETS = {'small': dict(width=256, depth=8),\n"
      "           'large': dict(width=1024, depth=24)}\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--config', default='configs/base.yaml')\n"
      "p.add_argument('--preset', default='small')\n"
      "p.add_argument('--batch', type=int, default=None)\n"
      "p.add_argument('--scale', type=float, default=1.0)\n"
      "p.add_argument('--seed', type=int, default=0)\n"
      "p.add_argument('--output_dir', default='out')\n"
      "p.add_argument('--log_interval', type=int, default=50)\n"
      "p.add_argument('--wandb', action='store_true')\n"
      "p.add_argument('--master_port', type=int, default=29500)\n"
      "args = p.parse_args()\n"
      "cfg = yaml.safe_load(open(args.config))\n");
  put(r, "configs/base.yaml",
      "# ResNet-50 on ImageNet\n"
      "model:\n"
      "  name: resnet50\n"
      "  width_mult: 2   # read by the code, not by the extractor\n"
      "dataset: imagenet\n"
      "epochs: 90\n"
      "lr: 0.1\n"
      "output_dir: ./runs/base\n"
      "seed: 1\n"
      "log_every_steps: 100\n");
}

SM_TEST(unexplained_cosmetic_options_keep_the_config_digest) {
  repo r;
  pair p;

  argparse_repo(&r);
  p = compare(r.dir, "python train.py --config configs/base.yaml --batch 64",
              r.dir,
              "python train.py --config configs/base.yaml --batch 64 "
              "--seed 7 --output_dir /ckpt/run2 --log_interval 10 --wandb "
              "--master_port=29611");
  ASSERT(p.same_config);
  ASSERT(p.same_residue);
  ASSERT(p.match);
  /* Trailing KEY VALUE pairs and dotted overrides of the same classes. */
  p = compare(r.dir,
              "CUDA_VISIBLE_DEVICES=0 python train.py --config "
              "configs/base.yaml",
              r.dir,
              "CUDA_VISIBLE_DEVICES=3 python train.py --config "
              "configs/base.yaml OUTPUT_DIR /ckpt/x SEED 3 "
              "trainer.save_freq=100 logging.freq=5");
  ASSERT(p.same_config);
  ASSERT(p.match);
  repo_drop(&r);
}

SM_TEST(unexplained_copied_config_and_renamed_repo_keep_the_digest) {
  repo r, r2;
  char cmd[256];
  pair p;

  argparse_repo(&r);
  /* The config copied under a new path. */
  put(&r, "configs/mine/rerun.yaml",
      "# ResNet-50 on ImageNet\n"
      "model:\n"
      "  name: resnet50\n"
      "  width_mult: 2   # read by the code, not by the extractor\n"
      "dataset: imagenet\n"
      "epochs: 90\n"
      "lr: 0.1\n"
      "output_dir: ./runs/base\n"
      "seed: 1\n"
      "log_every_steps: 100\n");
  p = compare(r.dir, "python train.py --config configs/base.yaml --batch 64",
              r.dir,
              "python train.py --config configs/mine/rerun.yaml --batch 64");
  ASSERT(p.same_config);
  ASSERT(p.match);
  /* A renamed copy of the whole repository. */
  repo_make(&r2);
  snprintf(cmd, sizeof(cmd), "cp -r %s/. %s/", r.dir, r2.dir);
  ASSERT_OK(system(cmd));
  p = compare(r.dir, "python train.py --config configs/base.yaml --batch 64",
              r2.dir, "python train.py --config configs/base.yaml --batch 64");
  ASSERT(p.same_config);
  ASSERT(p.match);
  /* Cosmetic lines, comments and blank lines edited inside the config. */
  put(&r2, "configs/base.yaml",
      "# ResNet-50 on ImageNet, second try\n"
      "model:\n"
      "  name: resnet50\n"
      "\n"
      "  width_mult: 2\n"
      "dataset: imagenet\n"
      "epochs: 90\n"
      "lr: 0.1\n"
      "output_dir: /ckpt/other\n"
      "seed: 42\n"
      "log_every_steps: 10\n");
  p = compare(r.dir, "python train.py --config configs/base.yaml", r2.dir,
              "python train.py --config configs/base.yaml");
  ASSERT(p.same_config);
  repo_drop(&r);
  repo_drop(&r2);
}

SM_TEST(unexplained_unconsumed_option_is_a_veto) {
  repo r;
  pair p;

  argparse_repo(&r);
  /* --batch feeds a table the extractor does not resolve here. */
  p = compare(r.dir, "python train.py --config configs/base.yaml --batch 64",
              r.dir, "python train.py --config configs/base.yaml --batch 128");
  ASSERT(!p.same_config);
  if (p.veto < 0) /* the metadata agreed: the residue must keep them apart */
    ASSERT(!p.same_residue);
  ASSERT(!p.match);
  /* A preset name that selects a table row, and a scale factor. */
  p = compare(
      r.dir, "python train.py --config configs/base.yaml --preset small", r.dir,
      "python train.py --config configs/base.yaml --preset large");
  ASSERT(!p.match);
  p = compare(r.dir, "python train.py --config configs/base.yaml --scale 1",
              r.dir, "python train.py --config configs/base.yaml --scale 4");
  ASSERT(!p.match);
  ASSERT(p.veto == SM_IDENT_VETO_UNEXPLAINED || p.veto >= 0);
  repo_drop(&r);
}

SM_TEST(unexplained_edited_line_the_extractor_does_not_read) {
  repo r, r2;
  char cmd[256];
  sm_extract_res a;
  pair p;

  argparse_repo(&r);
  repo_make(&r2);
  snprintf(cmd, sizeof(cmd), "cp -r %s/. %s/", r.dir, r2.dir);
  ASSERT_OK(system(cmd));
  put(&r2, "configs/base.yaml",
      "# ResNet-50 on ImageNet\n"
      "model:\n"
      "  name: resnet50\n"
      "  width_mult: 4   # read by the code, not by the extractor\n"
      "dataset: imagenet\n"
      "epochs: 90\n"
      "lr: 0.1\n"
      "output_dir: ./runs/base\n"
      "seed: 1\n"
      "log_every_steps: 100\n");
  run(r.dir, "python train.py --config configs/base.yaml", &a);
  ASSERT(a.meta.f[SM_META_MODEL_NAME].known);
  sm_extract_res_release(&a);
  p = compare(r.dir, "python train.py --config configs/base.yaml", r2.dir,
              "python train.py --config configs/base.yaml");
  ASSERT(!p.same_config);
  ASSERT(!p.same_residue);
  ASSERT_EQ(p.veto, SM_IDENT_VETO_UNEXPLAINED);
  ASSERT(!p.match);
  /* A change the extractor does read (the model) is the metadata's veto,
   * not an unexplained one. */
  put(&r2, "configs/base.yaml",
      "model:\n  name: resnet101\n  width_mult: 2\ndataset: imagenet\n"
      "epochs: 90\nlr: 0.1\n");
  p = compare(r.dir, "python train.py --config configs/base.yaml", r2.dir,
              "python train.py --config configs/base.yaml");
  ASSERT_EQ(p.veto, SM_META_MODEL_NAME);
  /* An explained value (the learning rate) changes the exact digest but
   * not the residue: the metadata and the cosine decide. */
  put(&r2, "configs/base.yaml",
      "# ResNet-50 on ImageNet\n"
      "model:\n"
      "  name: resnet50\n"
      "  width_mult: 2   # read by the code, not by the extractor\n"
      "dataset: imagenet\n"
      "epochs: 90\n"
      "lr: 0.4\n"
      "output_dir: ./runs/base\n"
      "seed: 1\n"
      "log_every_steps: 100\n");
  p = compare(r.dir, "python train.py --config configs/base.yaml", r2.dir,
              "python train.py --config configs/base.yaml");
  ASSERT(!p.same_config);
  ASSERT(p.same_residue);
  repo_drop(&r);
  repo_drop(&r2);
}

/* Another layout: a launch script with Hydra-style overrides and a Python
 * config module. */
SM_TEST(unexplained_script_and_overrides) {
  repo r;
  pair p;

  repo_make(&r);
  put(&r, "conf/model.py",
      "model = dict(type='vit_base_patch16', depth=12)\n"
      "data = dict(name='cifar100')\n"
      "mixup = 0.8\n");
  put(&r, "run.py",
      "import sys\n"
      "def main():\n"
      "    cfg = load(sys.argv[1])\n"
      "if __name__ == '__main__':\n"
      "    main()\n");
  put(&r, "scripts/go.sh",
      "#!/bin/bash\n"
      "python run.py conf/model.py trainer.max_steps=1000 \"$@\"\n");
  p = compare(r.dir, "bash scripts/go.sh optim.warmup=500", r.dir,
              "bash scripts/go.sh optim.warmup=500 +wandb.name=try2 "
              "hydra.run.dir=/tmp/x trainer.log_every_n_steps=20");
  ASSERT(p.same_config);
  p = compare(r.dir, "bash scripts/go.sh optim.warmup=500", r.dir,
              "bash scripts/go.sh optim.warmup=800");
  ASSERT(!p.same_config);
  ASSERT(!p.match);
  /* The argument a Python config is given with (ml_collections style). */
  p = compare(r.dir, "python run.py --config conf/model.py:b16,cifar10", r.dir,
              "python run.py --config conf/model.py:b16,cifar100");
  ASSERT(!p.same_config);
  ASSERT(!p.same_residue);
  /* An edit of the config module's line the extractor does not read. */
  put(&r, "conf/other.py",
      "model = dict(type='vit_base_patch16', depth=12)\n"
      "data = dict(name='cifar100')\n"
      "mixup = 0.2\n");
  p = compare(r.dir, "python run.py conf/model.py", r.dir,
              "python run.py conf/other.py");
  ASSERT(!p.same_config);
  ASSERT(!p.match);
  repo_drop(&r);
}

SM_TEST(unexplained_cosmetic_table) {
  static const char *const yes[] = {"--seed",
                                    "seed_everything",
                                    "system.seed",
                                    "--master_port",
                                    "dist-url",
                                    "rdzv_id",
                                    "--output_dir",
                                    "train.output_dir",
                                    "work-dir",
                                    "OUTPUT_DIR",
                                    "run_name",
                                    "wandb.project",
                                    "--use_wandb",
                                    "report_to",
                                    "tensorboard_dir",
                                    "--log_interval",
                                    "logging_steps",
                                    "eval_steps",
                                    "save_freq",
                                    "checkpoint_config.interval",
                                    "saveckp_freq",
                                    "ckpts.save_per_updates",
                                    "max_ckpt_to_keep",
                                    "resume_from_checkpoint",
                                    "OPENAI_LOGDIR",
                                    "global_seed",
                                    "+trainer.log_every_n_steps"};
  static const char *const no[] = {"--batch",      "batch_size",
                                   "lr",           "max_steps",
                                   "task_name",    "model_dir",
                                   "num_workers",  "epochs",
                                   "warmup_steps", "per_device_eval_batch_size",
                                   "preset",       "scale",
                                   "model.name",   "data_path",
                                   "experiment",   ""};
  const char *why = NULL;

  for (size_t i = 0; i < SM_ARRAY_LEN(yes); i++)
    if (!sm__cosmetic_key(yes[i], strlen(yes[i]), &why))
      SM_FAIL_AT("%s should be cosmetic", yes[i]);
  for (size_t i = 0; i < SM_ARRAY_LEN(no); i++)
    if (sm__cosmetic_key(no[i], strlen(no[i]), NULL))
      SM_FAIL_AT("%s should not be cosmetic", no[i]);
  ASSERT(sm__cosmetic_key("--seed", 6, &why));
  ASSERT_STREQ(why, "seed");
}

/* Malformed files: the provenance is still made, bounded, and two
 * extractions of the same input agree. */
SM_TEST(unexplained_malformed_inputs) {
  repo r;
  char *big = malloc(300000);
  sm_extract_res a;
  pair p;

  ASSERT(big != NULL);
  repo_make(&r);
  memset(big, 'x', 299999);
  big[299999] = '\0';
  put(&r, "configs/huge.yaml", big);
  put(&r, "configs/empty.yaml", "");
  put(&r, "configs/bad.yaml", "model: \xff\xfe\xc3(\n  - [unclosed\n\"quote\n");
  put(&r, "train.py", "import sys\n");
  free(big);
  p = compare(r.dir,
              "python train.py configs/huge.yaml configs/empty.yaml "
              "configs/bad.yaml",
              r.dir,
              "python train.py configs/huge.yaml configs/empty.yaml "
              "configs/bad.yaml");
  ASSERT(p.same_config);
  ASSERT(p.same_residue);
  run(r.dir, "python train.py configs/bad.yaml", &a);
  ASSERT(a.provenance_json != NULL);
  ASSERT(strstr(a.provenance_json, "\"complete\":true") != NULL);
  sm_extract_res_release(&a);
  repo_drop(&r);
}

/* A read limit makes the file set not the job's: no digests. */
SM_TEST(unexplained_limit_gives_no_digest) {
  repo r;
  const char *argv[] = {"python", "train.py", "--config", "c.yaml"};
  sm_extract_req q;
  sm_extract_res res;
  sm_err err = {0};

  repo_make(&r);
  put(&r, "train.py", "import helper\nimport other\n");
  put(&r, "helper.py", "X = 1\n");
  put(&r, "other.py", "Y = 2\n");
  put(&r, "c.yaml", "lr: 0.1\n");
  memset(&q, 0, sizeof(q));
  q.repo = r.dir;
  q.argv = argv;
  q.argc = 4;
  q.max_files = 1;
  ASSERT_OK(sm_extract(&q, &res, &err));
  ASSERT(res.meta.config_digest == NULL);
  ASSERT(res.meta.residue_digest == NULL);
  ASSERT(res.provenance_json != NULL);
  ASSERT(strstr(res.provenance_json, "\"complete\":false") != NULL);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Extracts an inline batch script (as the Slurm agent does); the caller
 * releases res. */
static void run_inline(const char *dir, const char *script,
                       sm_extract_res *res) {
  sm_extract_req q;
  sm_err err = {0};

  memset(&q, 0, sizeof(q));
  q.repo = dir;
  q.script = script;
  q.script_len = strlen(script);
  q.script_name = "batch_script";
  if (sm_extract(&q, res, &err) != 0)
    SM_FAIL_AT("sm_extract: %s", err.msg);
}

/* A launch script submitted inline (a Slurm batch script) and the same
 * script run from the repository as `bash run.sh`, `sh run.sh` or
 * `./run.sh` are one configuration; a script argument or another script
 * is not. */
SM_TEST(unexplained_inline_script_is_the_script_file) {
  static const char *const script =
      "#!/bin/bash\n"
      "#SBATCH --job-name=r50\n"
      "#SBATCH --gres=gpu:2\n"
      "#SBATCH --output=%x-%j.out\n"
      "export OMP_NUM_THREADS=4\n"
      "python train.py --config configs/base.yaml --batch 64 --preset large\n";
  static const char *const runs[] = {"bash run.sh", "sh run.sh", "./run.sh",
                                     "/bin/bash run.sh"};
  static const char *const with_env[] = {"PORT=29501 bash run.sh",
                                         "MASTER_PORT=1234 ./run.sh"};
  sm_extract_res in, f;
  repo r;

  argparse_repo(&r);
  put(&r, "run.sh", script);
  put(&r, "other.sh",
      "#!/bin/bash\n"
      "python train.py --config configs/base.yaml --batch 128 --preset "
      "large\n");
  run_inline(r.dir, script, &in);
  ASSERT(in.meta.config_digest != NULL && in.meta.residue_digest != NULL);
  for (size_t i = 0; i < SM_ARRAY_LEN(runs); i++) {
    run(r.dir, runs[i], &f);
    ASSERT(f.meta.config_digest != NULL);
    ASSERT_STREQ(f.meta.config_digest, in.meta.config_digest);
    ASSERT_STREQ(f.meta.residue_digest, in.meta.residue_digest);
    sm_extract_res_release(&f);
  }
  /* A cosmetic environment assignment before the launch keeps it. */
  for (size_t i = 0; i < SM_ARRAY_LEN(with_env); i++) {
    run(r.dir, with_env[i], &f);
    ASSERT_STREQ(f.meta.residue_digest, in.meta.residue_digest);
    sm_extract_res_release(&f);
  }
  /* An argument to the script, or another script, is another job. */
  run(r.dir, "bash run.sh --fast", &f);
  ASSERT(strcmp(f.meta.config_digest, in.meta.config_digest) != 0);
  sm_extract_res_release(&f);
  run(r.dir, "bash other.sh", &f);
  ASSERT(strcmp(f.meta.config_digest, in.meta.config_digest) != 0);
  sm_extract_res_release(&f);
  /* A Python entry is not a shell script: its word stays. */
  run(r.dir, "python train.py --config configs/base.yaml --batch 64", &f);
  ASSERT(strcmp(f.meta.config_digest, in.meta.config_digest) != 0);
  sm_extract_res_release(&f);
  sm_extract_res_release(&in);
  repo_drop(&r);
}
