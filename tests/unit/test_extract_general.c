/* test_extract_general.c - the mechanisms that carry the extractor to
 * repositories it was not written against: keys read by their naming
 * convention, bash arrays in launch scripts, parallel wrappers counted
 * only where the code on the job's path enables them, hyper-parameter
 * dictionaries in code, registries of named architectures, and the
 * task from what the training computes.  Every fixture is written here,
 * each class in several spellings and layouts, malformed ones included. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor/advisor_int.h"
#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"
#include "tmprepo.h"

/* Runs the public extractor with a command line split at spaces, in the
 * repository's subdirectory cwd (NULL: the root). */
static void run(repo *r, const char *cwd, const char *cmdline,
                sm_extract_res *res) {
  static char buf[2048];
  const char *argv[64];
  int argc = 0;
  sm_extract_req q;
  sm_err err = {0};
  snprintf(buf, sizeof(buf), "%s", cmdline);
  for (char *t = strtok(buf, " "); t && argc < 64; t = strtok(NULL, " "))
    argv[argc++] = t;
  memset(&q, 0, sizeof(q));
  memset(res, 0, sizeof(*res));
  q.repo = r->dir;
  q.cwd = cwd;
  q.argv = argv;
  q.argc = argc;
  if (sm_extract(&q, res, &err) != 0)
    SM_FAIL_AT("sm_extract: %s", err.msg);
}

static int known(const sm_extract_res *res, sm_meta_field f) {
  return res->meta.f[f].known;
}

static double num(const sm_extract_res *res, sm_meta_field f) {
  if (!res->meta.f[f].known)
    SM_FAIL_AT("field %s unknown", sm_meta_name(f));
  return res->meta.f[f].num;
}

static const char *str(const sm_extract_res *res, sm_meta_field f) {
  return res->meta.f[f].known ? res->meta.f[f].str : "(null)";
}

/* The job's FIELD reads WANT, a name or a whole number (the test's line
 * in the message). */
#define expect_str(r, wd, cmdline, field, want)                                \
  str_at(__LINE__, (r), (wd), (cmdline), (field), (want))
#define expect_num(r, wd, cmdline, field, want)                                \
  num_at(__LINE__, (r), (wd), (cmdline), (field), (want))
static void str_at(int line, repo *r, const char *wd, const char *cmdline,
                   sm_meta_field f, const char *want) {
  sm_extract_res res;
  run(r, wd, cmdline, &res);
  if (strcmp(str(&res, f), want) != 0) {
    fprintf(stderr, "  %s:%d: %s of \"%s\" is \"%s\", expected \"%s\"\n",
            __FILE__, line, sm_meta_name(f), cmdline, str(&res, f), want);
    exit(1);
  }
  sm_extract_res_release(&res);
}
static void num_at(int line, repo *r, const char *wd, const char *cmdline,
                   sm_meta_field f, long long want) {
  sm_extract_res res;
  run(r, wd, cmdline, &res);
  if (!known(&res, f) || (long long)res.meta.f[f].num != want) {
    fprintf(stderr, "  %s:%d: %s of \"%s\" is %s%.9g, expected %lld\n",
            __FILE__, line, sm_meta_name(f), cmdline,
            known(&res, f) ? "" : "unknown ", res.meta.f[f].num, want);
    exit(1);
  }
  sm_extract_res_release(&res);
}

/* The job's FIELD stays unknown (the test's line in the message). */
#define expect_unread(r, cmdline, field)                                       \
  unread_at(__LINE__, (r), (cmdline), (field))
static void unread_at(int line, repo *r, const char *cmdline, sm_meta_field f) {
  sm_extract_res res;
  run(r, NULL, cmdline, &res);
  if (known(&res, f)) {
    fprintf(stderr, "  %s:%d: %s read from \"%s\"\n", __FILE__, line,
            sm_meta_name(f), cmdline);
    exit(1);
  }
  sm_extract_res_release(&res);
}

/* ==== Keys by their naming convention ==== */

SM_TEST(extract_key_roles_by_tokens) {
  /* Leaves no list names, in the spellings projects use. */
  ASSERT(sm__key_role("max_train_steps", "steps"));
  ASSERT(sm__key_role("num_training_steps", "steps"));
  ASSERT(sm__key_role("max_update", "steps"));
  ASSERT(sm__key_role("total_optim_steps", "steps"));
  ASSERT(sm__key_role("number_of_epochs", "epochs"));
  ASSERT(sm__key_role("nb_epoch", "epochs"));
  ASSERT(sm__key_role("lr_adam", "lr"));
  ASSERT(sm__key_role("peak_learning_rate", "lr"));
  ASSERT(sm__key_role("decoder_embed_dim", "d_model"));
  ASSERT(sm__key_role("emb_size", "d_model"));
  ASSERT(sm__key_role("emsize", "d_model"));
  ASSERT(sm__key_role("num_transformer_layers", "n_layers"));
  ASSERT(sm__key_role("nlayers", "n_layers"));
  ASSERT(sm__key_role("tokens_per_sample", "seq_len"));
  ASSERT(sm__key_role("max_seq_length_train", "seq_len"));
  ASSERT(sm__key_role("bptt", "seq_len"));
  ASSERT(sm__key_role("per_gpu_batch_size", "per_device"));
  ASSERT(sm__key_role("effective_batch_size", "global"));
  ASSERT(sm__key_role("grad_accumulation", "accum"));
  /* Neighbours that are something else. */
  ASSERT(!sm__key_role("warmup_steps", "steps"));
  ASSERT(!sm__key_role("eval_steps", "steps"));
  ASSERT(!sm__key_role("save_every_n_steps", "steps"));
  ASSERT(!sm__key_role("num_inference_steps", "steps"));
  ASSERT(!sm__key_role("steps_per_epoch", "steps"));
  ASSERT(!sm__key_role("warmup_epochs", "epochs"));
  ASSERT(!sm__key_role("min_lr", "lr"));
  ASSERT(!sm__key_role("lr_warmup_steps", "lr"));
  ASSERT(!sm__key_role("lr_scheduler", "lr"));
  ASSERT(!sm__key_role("basic_lr_per_img", "lr"));
  ASSERT(!sm__key_role("eval_batch_size", "per_device"));
  ASSERT(!sm__key_role("global_batch_size", "per_device"));
  ASSERT(!sm__key_role("ffn_hidden_size", "d_model"));
  ASSERT(!sm__key_role("zero3_save_16bit_model", "d_model"));
  ASSERT(!sm__key_role("model", "d_model"));
  ASSERT(!sm__key_role("num_attention_heads", "n_layers"));
  ASSERT(!sm__key_role("max_new_tokens", "seq_len"));
  ASSERT(!sm__key_role("", "steps"));
  ASSERT(!sm__key_role("max_steps", "no_such_role"));
}

SM_TEST(extract_key_roles_in_jobs) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* argparse spelling: the command's step count beats the epoch
   * default, a token budget per sample is the sequence length. */
  put(&r, "a/train.py",
      "import argparse\nimport torch\nfrom transformers import "
      "GPT2LMHeadModel\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--num-training-epochs', type=int, default=100)\n"
      "p.add_argument('--max-train-steps', type=int, default=None)\n"
      "p.add_argument('--lr-peak', type=float, default=3e-4)\n"
      "p.add_argument('--tokens-per-sample', type=int, default=512)\n"
      "p.add_argument('--warmup-steps', type=int, default=99)\n"
      "args = p.parse_args()\nmodel = "
      "GPT2LMHeadModel.from_pretrained('gpt2')\n");
  run(&r, "a", "python train.py --max-train-steps 1500", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 1500);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  ASSERT_NEAR(num(&res, SM_META_LR), 3e-4, 1e-12);
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 512);
  sm_extract_res_release(&res);
  run(&r, "a", "python train.py", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 100);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "epochs");
  sm_extract_res_release(&res);
  /* YAML spelling, a component's own iteration count ignored. */
  put(&r, "b/train.py",
      "import sys\nimport torch\nimport yaml\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n");
  put(&r, "b/hparams.yaml",
      "number_of_epochs: 42\nlr_adam: 0.0008\n"
      "model:\n  decoder:\n    num_iters: 3\n"
      "save_16bit_model: true\n");
  run(&r, "b", "python train.py hparams.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 42);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "epochs");
  ASSERT_NEAR(num(&res, SM_META_LR), 8e-4, 1e-12);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Bash arrays in launch scripts ==== */

SM_TEST(extract_shell_arrays) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\n"
      "p.add_argument('--train-iters', type=int, default=10)\n"
      "p.add_argument('--micro-batch-size', type=int, default=1)\n"
      "p.add_argument('--global-batch-size', type=int, default=8)\n"
      "p.add_argument('--bf16', action='store_true')\n"
      "p.parse_args()\n");
  /* Megatron-style: options collected in arrays over several lines,
   * appended to under a decided condition, expanded unquoted. */
  put(&r, "run_a.sh",
      "#!/bin/bash\nGPUS=4\nDTYPE=bf16\n"
      "DIST=(\n  --nproc_per_node $GPUS\n  --nnodes 1\n)\n"
      "TRAIN=(\n    --train-iters 500\n    --lr 0.002\n)\n"
      "if [[ \"$DTYPE\" == bf16 ]]; then\n  TRAIN+=(--bf16)\nfi\n"
      "BATCH=(\"--micro-batch-size 2\" \"--global-batch-size 64\")\n"
      "TRAIN+=(\"${BATCH[@]}\")\n"
      "torchrun ${DIST[@]} train.py ${TRAIN[@]}\n");
  run(&r, NULL, "bash run_a.sh", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 4);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 500);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.002, 1e-12);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 2);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 64);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "bf16");
  /* An option keeps the line of its array element. */
  ASSERT_STREQ(res.meta.f[SM_META_ITERATIONS].evidence, "run_a.sh:9");
  sm_extract_res_release(&res);
  /* Other spellings: declare -a, quoted "${A[@]}", an element by index,
   * the element count, $A as the first element, an empty array. */
  put(&r, "run_b.sh",
      "declare -a ARGS=(--lr 0.5)\nEMPTY=()\nN=(3 7)\n"
      "ARGS+=(--train-iters \"${N[1]}\")\n"
      "if [ ${#N[@]} -eq 2 ]; then ARGS+=(--global-batch-size $N); fi\n"
      "python train.py \"${ARGS[@]}\" \"${EMPTY[@]}\"\n");
  run(&r, NULL, "bash run_b.sh", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.5, 1e-12);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 7);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 3);
  ASSERT_EQ(res.n_warnings, 0);
  sm_extract_res_release(&res);
  /* Malformed and undecidable: an unterminated array, an element set by
   * index (the array becomes unknown), an index that is not a number,
   * a huge array: warnings or nulls, no crash. */
  put(&r, "run_c.sh",
      "A=(--lr 0.3\nB=(--train-iters 9)\nB[0]=--lr\n"
      "python train.py ${B[@]} ${B[x]} ${C[@]}\n");
  run(&r, NULL, "bash run_c.sh", &res);
  ASSERT(!known(&res, SM_META_ITERATIONS) ||
         num(&res, SM_META_ITERATIONS) == 10);
  sm_extract_res_release(&res);
  {
    sm_buf big;
    sm_buf_init(&big, 8 << 20);
    sm_buf_adds(&big, "A=(");
    for (int i = 0; i < 100000; i++)
      sm_buf_addf(&big, " --x%d %d", i, i);
    sm_buf_adds(&big, ")\nfor i in 1 2 3; do A+=(\"${A[@]}\"); done\n"
                      "python train.py ${A[@]} --train-iters 33\n");
    put(&r, "run_d.sh", sm_buf_str(&big));
    sm_buf_release(&big);
  }
  run(&r, NULL, "bash run_d.sh", &res);
  ASSERT(!known(&res, SM_META_ITERATIONS) ||
         num(&res, SM_META_ITERATIONS) == 33);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Strategies the code turns on ==== */

SM_TEST(extract_guarded_strategies) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* One process with DataParallel unless the script spawns one DDP
   * worker per GPU itself (the switch derived from options). */
  put(&r, "cls/main.py",
      "import argparse\nimport torch\nimport torch.multiprocessing as mp\n"
      "from torch.nn.parallel import DistributedDataParallel\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--hosts', type=int, default=-1)\n"
      "p.add_argument('--spawn-workers', action='store_true')\n"
      "p.add_argument('--epochs', type=int, default=5)\n"
      "def worker(rank, args):\n"
      "    model = torch.nn.Linear(4, 4)\n"
      "    if not torch.cuda.is_available():\n        pass\n"
      "    elif args.multi:\n"
      "        model = DistributedDataParallel(model)\n"
      "    else:\n        model = torch.nn.DataParallel(model).cuda()\n"
      "def main():\n    args = p.parse_args()\n"
      "    args.multi = args.hosts > 1 or args.spawn_workers\n"
      "    n = torch.cuda.device_count()\n"
      "    if args.spawn_workers:\n"
      "        mp.spawn(worker, nprocs=n, args=(args,))\n"
      "    else:\n        worker(0, args)\n"
      "if __name__ == '__main__':\n    main()\n");
  run(&r, "cls", "python main.py", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "dp");
  ASSERT(!known(&res, SM_META_GPUS));
  sm_extract_res_release(&res);
  run(&r, "cls", "python main.py --spawn-workers", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  ASSERT(!known(&res, SM_META_GPUS));
  sm_extract_res_release(&res);
  expect_str(&r, "cls", "python main.py --hosts 2", SM_META_PARALLELISM, "ddp");
  /* Another layout: a sharding switch as an option under a launcher;
   * a wrapper in an else branch of a string comparison. */
  put(&r, "lm/train.py",
      "import argparse\nimport torch\n"
      "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
      "from torch.nn.parallel import DistributedDataParallel as DDP\n"
      "ap = argparse.ArgumentParser()\n"
      "ap.add_argument('--shard', default='none')\n"
      "ap.add_argument('--max_steps', type=int, default=100)\n"
      "cfg = ap.parse_args()\n"
      "net = torch.nn.Linear(2, 2)\n"
      "if cfg.shard == 'full':\n    net = FSDP(net)\nelse:\n    net = "
      "DDP(net)\n");
  expect_str(&r, "lm", "torchrun --nproc_per_node 4 train.py",
             SM_META_PARALLELISM, "ddp");
  expect_str(&r, "lm", "torchrun --nproc_per_node 4 train.py --shard full",
             SM_META_PARALLELISM, "fsdp");
  repo_drop(&r);
}

SM_TEST(extract_reachable_definitions_only) {
  repo r;
  repo_make(&r);
  /* A helper module that can shard a model; the job imports only its
   * EMA helper, so the sharding function is not on its path. */
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/helpers.py",
      "import torch\n"
      "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
      "def _policy():\n    return None\n"
      "def shard(model):\n    return FSDP(model, auto_wrap_policy=_policy())\n"
      "class Averager:\n    def __init__(self, m):\n        self.m = m\n"
      "def make_averager(m):\n    return Averager(m)\n");
  put(&r, "ema_train.py",
      "import argparse\nimport torch\nfrom pkg.helpers import make_averager\n"
      "p = argparse.ArgumentParser()\np.add_argument('--epochs', default=3)\n"
      "p.parse_args()\nmodel = torch.nn.Linear(2, 2)\nema = "
      "make_averager(model)\n");
  put(&r, "shard_train.py",
      "import argparse\nimport torch\nfrom pkg.helpers import shard\n"
      "p = argparse.ArgumentParser()\np.add_argument('--epochs', default=3)\n"
      "p.parse_args()\nmodel = shard(torch.nn.Linear(2, 2))\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node 2 ema_train.py",
             SM_META_PARALLELISM, "ddp");
  expect_str(&r, NULL, "torchrun --nproc_per_node 2 shard_train.py",
             SM_META_PARALLELISM, "fsdp");
  repo_drop(&r);
}

SM_TEST(extract_guards_malformed) {
  repo r;
  sm_extract_res res;
  sm_buf b;
  repo_make(&r);
  /* 400 nested conditions, conditions the scanner cannot compile, a
   * chained comparison, `in`, a syntax error: read, no crash. */
  sm_buf_init(&b, 1 << 22);
  sm_buf_adds(&b, "import torch\nimport argparse\n"
                  "p = argparse.ArgumentParser()\n"
                  "p.add_argument('--flag', action='store_true')\n"
                  "a = p.parse_args()\nm = torch.nn.Linear(1, 1)\n");
  for (int i = 0; i < 400; i++) {
    for (int k = 0; k < i; k++)
      sm_buf_addc(&b, ' ');
    sm_buf_addf(&b, "if a.flag or f(%d) or 1 < a.x < 3 or 'k' in a.d:\n", i);
  }
  for (int k = 0; k < 400; k++)
    sm_buf_addc(&b, ' ');
  sm_buf_adds(&b, "m = torch.nn.DataParallel(m)\nif (:\n");
  put(&r, "deep.py", sm_buf_str(&b));
  sm_buf_release(&b);
  run(&r, NULL, "python deep.py", &res);
  /* Undecided: DataParallel may be used, so no claim of one GPU. */
  ASSERT(!known(&res, SM_META_GPUS) ||
         strcmp(str(&res, SM_META_PARALLELISM), "none") == 0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Lengths as budgets, generated data, fp8, method switches ==== */

SM_TEST(extract_budgets_switches_and_class_names) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "pretrain_lm.py",
      "\"\"\"Pretrain and SFT a GPT.\"\"\"\nimport argparse\nimport torch\n"
      "from lm.sft_data import SFTData\nfrom lm.model import MyGPTModel\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--num-layers', type=int)\n"
      "p.add_argument('--hidden-size', type=int)\n"
      "p.add_argument('--seq-length', type=int)\n"
      "p.add_argument('--micro-batch-size', type=int)\n"
      "p.add_argument('--global-batch-size', type=int)\n"
      "p.add_argument('--train-samples', type=int)\n"
      "p.add_argument('--lr-decay-samples', type=int)\n"
      "p.add_argument('--sft', action='store_true')\n"
      "p.add_argument('--use-fake-data', action='store_true')\n"
      "p.add_argument('--bf16', action='store_true')\n"
      "p.add_argument('--fp8-recipe', default=None)\n"
      "args = p.parse_args()\n"
      "def build():\n    model = MyGPTModel(args)\n    return model\n"
      "def data():\n    if args.sft:\n        return SFTData()\n"
      "if __name__ == '__main__':\n    build()\n    data()\n");
  put(&r, "lm/__init__.py", "");
  put(&r, "lm/sft_data.py", "class SFTData:\n    pass\n");
  put(&r, "lm/model.py",
      "import torch\nclass MyGPTModel(torch.nn.Module):\n    pass\n");
  run(&r, NULL,
      "torchrun --nproc_per_node 8 pretrain_lm.py --num-layers 24 "
      "--hidden-size 2048 --seq-length 1024 --micro-batch-size 4 "
      "--global-batch-size 64 --train-samples 6400000 "
      "--lr-decay-samples 99 --use-fake-data --bf16 --fp8-recipe delayed",
      &res);
  /* 6.4M samples over 64 sequences a step. */
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 100000);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "synthetic");
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "fp8");
  /* The SFT switch is off: pre-training, whatever the names say. */
  ASSERT_STREQ(str(&res, SM_META_TASK), "language_model_pretraining");
  /* A GPT class without a size is named by its dimensions. */
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "gpt-1.3b");
  sm_extract_res_release(&res);
  run(&r, NULL,
      "torchrun --nproc_per_node 8 pretrain_lm.py --num-layers 24 "
      "--hidden-size 2048 --micro-batch-size 4 --global-batch-size 64 "
      "--sft",
      &res);
  ASSERT_STREQ(str(&res, SM_META_TASK), "llm_finetuning_sft");
  ASSERT(!known(&res, SM_META_ITERATIONS));
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Hyper-parameters in code, DeepSpeed totals, heads ==== */

SM_TEST(extract_code_dicts_and_heads) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A hard-coded dictionary handed to the training function; a head
   * class on a language model; a dataset subset. */
  put(&r, "glue.py",
      "import argparse\nimport torch\n"
      "from transformers import AutoModelForSequenceClassification, "
      "AutoTokenizer\nfrom datasets import load_dataset\n"
      "def train(hp, args):\n"
      "    tok = AutoTokenizer.from_pretrained('bert-base-cased')\n"
      "    data = load_dataset('glue', 'sst2')\n"
      "    model = AutoModelForSequenceClassification.from_pretrained("
      "'bert-base-cased', num_labels=2)\n"
      "    opt = torch.optim.AdamW(model.parameters(), "
      "lr=hp['learning_rate'])\n"
      "    for epoch in range(hp['epochs']):\n        pass\n"
      "def main():\n    p = argparse.ArgumentParser()\n"
      "    p.add_argument('--cpu', action='store_true')\n"
      "    args = p.parse_args()\n"
      "    hp = {'learning_rate': 3e-5, 'epochs': 4, 'seed': 1, "
      "'batch_size': 32}\n    train(hp, args)\n"
      "if __name__ == '__main__':\n    main()\n");
  run(&r, NULL, "python glue.py", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 3e-5, 1e-15);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 4);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 32);
  ASSERT_STREQ(str(&res, SM_META_TASK), "text_classification");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "glue-sst2");
  sm_extract_res_release(&res);
  /* A DeepSpeed config built in code: train_batch_size is the total,
   * the stage and dtype switches come from the options. */
  put(&r, "ds/train.py",
      "import argparse\nimport deepspeed\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--precision', default='fp32')\n"
      "p.add_argument('--zero', type=int, default=0)\n"
      "p.add_argument('--epochs', type=int, default=7)\n"
      "args = p.parse_args()\n"
      "def make_cfg(a):\n"
      "    return {\n        'train_batch_size': 256,\n"
      "        'optimizer': {'type': 'Adam', 'params': {'lr': 0.004}},\n"
      "        'bf16': {'enabled': a.precision == 'bf16'},\n"
      "        'zero_optimization': {'stage': a.zero, 'overlap_comm': True},\n"
      "    }\n"
      "net = torch.nn.Linear(3, 3)\n"
      "engine, _, _, _ = deepspeed.initialize(model=net, "
      "config=make_cfg(args))\n");
  run(&r, "ds", "deepspeed train.py --zero 3 --precision bf16", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 256);
  ASSERT(!known(&res, SM_META_PER_DEVICE_BATCH_SIZE));
  ASSERT_NEAR(num(&res, SM_META_LR), 0.004, 1e-12);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "deepspeed_zero3");
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "bf16");
  sm_extract_res_release(&res);
  /* The same total in a DeepSpeed JSON file. */
  put(&r, "ds/ds.json",
      "{\"train_batch_size\": 96, \"gradient_accumulation_steps\": 2,"
      " \"zero_optimization\": {\"stage\": 1}}\n");
  put(&r, "ds/plain.py",
      "import argparse\nimport torch\nimport deepspeed\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--deepspeed_config')\np.parse_args()\n"
      "deepspeed.initialize(model=torch.nn.Linear(1, 1))\n");
  run(&r, "ds", "deepspeed --num_gpus 4 plain.py --deepspeed_config ds.json",
      &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 96);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 12);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "deepspeed_zero1");
  sm_extract_res_release(&res);
  /* A log record of variables is no configuration; a malformed dict. */
  put(&r, "log.py",
      "import torch\nimport argparse\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\na = p.parse_args()\n"
      "def log(step, lr):\n    rec = {'lr': lr, 'step': step}\n"
      "    bad = {'lr': 5, **rec, 1: 2, 'x': {'y': {'z': {}}}}\n"
      "    return rec\n");
  run(&r, NULL, "python log.py", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.1, 1e-12);
  sm_extract_res_release(&res);
  /* Other heads: an image classifier, a QA head. */
  put(&r, "vit.py",
      "import torch\nfrom transformers import ViTForImageClassification\n"
      "model = ViTForImageClassification.from_pretrained("
      "'google/vit-base-patch16-224')\n");
  expect_str(&r, NULL, "python vit.py", SM_META_TASK, "image_classification");
  put(&r, "qa.py",
      "import torch\nfrom transformers import AutoTokenizer, "
      "AutoModelForQuestionAnswering\n"
      "tok = AutoTokenizer.from_pretrained('roberta-base')\n"
      "model = "
      "AutoModelForQuestionAnswering.from_pretrained('roberta-base')\n");
  expect_str(&r, NULL, "python qa.py", SM_META_TASK, "question_answering");
  repo_drop(&r);
}

/* ==== Registries of named architectures ==== */

SM_TEST(extract_registries_by_name) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* fairseq-style: architecture functions registered under a name,
   * setting defaults under the options and calling a base function; the
   * registry file is not imported by the entry (a plugin directory). */
  put(&r, "tool/train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--arch', default='base_net')\n"
      "p.add_argument('--max-update', type=int, default=0)\n"
      "p.add_argument('--world-size', type=int,\n"
      "               default=max(1, torch.cuda.device_count()))\n"
      "p.add_argument('--task', default='language_modeling')\n"
      "p.add_argument('--decoder-layers', type=int)\n"
      "a = p.parse_args()\n");
  put(&r, "lib/models/__init__.py", "");
  put(&r, "lib/models/decoder_lm.py",
      "from . import register_model_architecture\n"
      "class TransformerLanguageModel:\n    pass\n"
      "def base_decoder(args):\n"
      "    args.decoder_embed_dim = getattr(args, 'decoder_embed_dim', 512)\n"
      "    args.decoder_layers = getattr(args, 'decoder_layers', 6)\n"
      "    args.decoder_attention_heads = getattr(args, "
      "'decoder_attention_heads', 8)\n"
      "@register_model_architecture('decoder_lm', 'decoder_lm_big')\n"
      "def decoder_big(args):\n"
      "    args.decoder_embed_dim = getattr(args, 'decoder_embed_dim', 1024)\n"
      "    base_decoder(args)\n"
      "@register_model_architecture('decoder_lm', 'decoder_lm_tiny')\n"
      "def decoder_tiny(args):\n"
      "    args.decoder_layers = 2\n    base_decoder(args)\n");
  run(&r, "tool",
      "python train.py data-bin/wikitext-103 --arch decoder_lm_big "
      "--max-update 900",
      &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 1024);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 6);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 900);
  ASSERT_STREQ(str(&res, SM_META_TASK), "language_model_pretraining");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "wikitext-103");
  /* One process per visible GPU unless --world-size is given. */
  ASSERT(!known(&res, SM_META_GPUS));
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  sm_extract_res_release(&res);
  /* The command's own value beats the architecture's default; a plain
   * assignment in the architecture function is a preset. */
  run(&r, "tool",
      "python train.py --arch decoder_lm_tiny --decoder-layers 9 "
      "--world-size 2 --task translation",
      &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 512);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 2);
  ASSERT_EQ(num(&res, SM_META_GPUS), 2);
  ASSERT_STREQ(str(&res, SM_META_TASK), "machine_translation");
  sm_extract_res_release(&res);
  /* A registered model class with its configuration dataclass, chosen
   * by a Hydra-style _name key; a name nothing registers. */
  put(&r, "lib/models/encoders.py",
      "from dataclasses import dataclass\n"
      "@dataclass\nclass EncCfg:\n    encoder_embed_dim: int = 768\n"
      "    encoder_layers: int = 12\n    encoder_attention_heads: int = 12\n"
      "@register_model('bert_like', dataclass=EncCfg)\n"
      "class BertLike:\n    pass\n");
  put(&r, "tool/hy.yaml",
      "model:\n  _name: bert_like\ntask:\n  _name: masked_lm\n");
  put(&r, "tool/hrun.py",
      "import hydra\nimport torch\n"
      "@hydra.main(config_path='cfg', config_name='none')\n"
      "def main(cfg):\n    pass\nif __name__ == '__main__':\n    main()\n");
  run(&r, "tool", "python hrun.py --config-dir . --config-name hy", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 768);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 12);
  ASSERT_STREQ(str(&res, SM_META_TASK), "language_model_pretraining");
  sm_extract_res_release(&res);
  run(&r, "tool", "python train.py --arch nothing_registers_this", &res);
  ASSERT(!known(&res, SM_META_D_MODEL));
  sm_extract_res_release(&res);
  /* Cyclic aliases and calls end. */
  put(&r, "lib/models/cycle.py",
      "@register('loop_a')\ndef loop_b(args):\n    loop_b(args)\n"
      "    loop_c(args)\n"
      "def loop_c(args):\n    args.decoder_layers = 3\n"
      "    args.decoder_attention_heads = 4\n    loop_b(args)\n");
  expect_num(&r, "tool", "python train.py --arch loop_a", SM_META_N_LAYERS, 3);
  repo_drop(&r);
}

SM_TEST(extract_guarded_precision_and_speaker) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A trainer module that halves the model only when asked to. */
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/trainer.py",
      "import torch\nclass Trainer:\n    def __init__(self, cfg, model):\n"
      "        if cfg.fp16:\n            model = model.half()\n"
      "        self.model = model\n");
  put(&r, "train.py",
      "import argparse\nimport torch\nfrom pkg.trainer import Trainer\n"
      "p = argparse.ArgumentParser()\np.add_argument('--fp16', "
      "action='store_true')\ncfg = p.parse_args()\n"
      "t = Trainer(cfg, torch.nn.Linear(1, 1))\n");
  expect_str(&r, NULL, "python train.py", SM_META_PRECISION, "fp32");
  expect_str(&r, NULL, "python train.py --fp16", SM_META_PRECISION, "fp16");
  /* Speaker embeddings are not transcripts. */
  put(&r, "spk/train.py",
      "import sys\nimport torch\nimport torchaudio\n"
      "class SpeakerBrain:\n    def compute_embeddings(self, wavs):\n"
      "        return self.speaker_encoder(wavs)\n");
  put(&r, "spk/hp.yaml",
      "data_folder: /data/voxceleb\nnumber_of_epochs: 10\n"
      "embedding_model: ecapa\n");
  run(&r, "spk", "python train.py hp.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_TASK), "speaker_recognition");
  ASSERT_STREQ(str(&res, SM_META_DOMAIN), "speech");
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Here-documents in launch scripts ==== */

SM_TEST(extract_shell_heredocs) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/cli.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=1.0)\n"
      "p.add_argument('--epochs', type=int, default=1)\n"
      "p.add_argument('--max_steps', type=int)\np.parse_args()\n");
  /* A command assembled in a here-document read into a variable, an
   * unexpanded ('EOT') document through $(cat <<...), a document read
   * without -d '' (its first line only). */
  put(&r, "a.sh",
      "E=7\nread -r -d '' CMDS <<EOF\npkg.cli \\\n  --lr 0.1 \\\n"
      "  --epochs $E\nEOF\n"
      "X=$(cat <<'EOT'\n--max_steps 5 --lr $NOT_EXPANDED\nEOT\n)\n"
      "read FIRST <<END\n--epochs 3\n--lr 9\nEND\n"
      "torchrun --nproc_per_node 2 -m $CMDS $FIRST\n");
  run(&r, NULL, "bash a.sh", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.1, 1e-12);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 3);
  ASSERT_EQ(num(&res, SM_META_GPUS), 2);
  ASSERT_STREQ(res.meta.f[SM_META_LR].evidence, "a.sh:4");
  sm_extract_res_release(&res);
  put(&r, "b.sh",
      "X=$(cat <<'EOT'\n--max_steps 5\nEOT\n)\n"
      "python -m pkg.cli $X\n");
  expect_num(&r, NULL, "bash b.sh", SM_META_ITERATIONS, 5);
  /* Malformed: an unterminated document, an empty one, a document fed
   * to a command that is not cat. */
  put(&r, "c.sh",
      "read -r -d '' A <<EOF\nEOF\nB=$(grep x <<EOF\n--lr 3\nEOF\n)\n"
      "python -m pkg.cli $A $B --epochs 4\nread -r -d '' C <<EOF\n--lr 5\n");
  run(&r, NULL, "bash c.sh", &res);
  ASSERT(!known(&res, SM_META_LR) || num(&res, SM_META_LR) == 1.0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Launchers that take every visible GPU, lengths with units ==== */

SM_TEST(extract_all_gpu_launchers) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import sys\nimport torch\nfrom omegaconf import OmegaConf as om\n"
      "cfg = om.load(sys.argv[1])\n");
  put(&r, "run.yaml",
      "global_train_batch_size: 256\ndevice_train_microbatch_size: 8\n"
      "max_duration: 1000\n");
  /* composer without -n: one process per visible GPU. */
  run(&r, NULL, "composer train.py run.yaml", &res);
  ASSERT(!known(&res, SM_META_GPUS));
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 256);
  /* A unitless duration says nothing. */
  ASSERT(!known(&res, SM_META_ITERATIONS));
  sm_extract_res_release(&res);
  expect_num(&r, NULL, "composer -n 4 train.py run.yaml", SM_META_GPUS, 4);
  /* Lengths with their units: batches, epochs, a token budget. */
  put(&r, "run2.yaml", "global_train_batch_size: 64\nmax_duration: 2ep\n");
  put(&r, "run3.yaml",
      "global_train_batch_size: 64\nmax_seq_len: 2048\n"
      "max_duration: 1310720000tok\n");
  put(&r, "run4.yaml", "global_train_batch_size: 64\nmax_duration: 800ba\n");
  run(&r, NULL, "composer -n 4 train.py run4.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 800);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  sm_extract_res_release(&res);
  run(&r, NULL, "composer -n 4 train.py run2.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 2);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "epochs");
  sm_extract_res_release(&res);
  put(&r, "lm.py",
      "import sys\nimport torch\nfrom transformers import GPT2LMHeadModel\n"
      "from omegaconf import OmegaConf as om\ncfg = om.load(sys.argv[1])\n"
      "model = GPT2LMHeadModel.from_pretrained('gpt2')\n");
  expect_num(&r, NULL, "composer -n 4 lm.py run3.yaml", SM_META_ITERATIONS,
             10000);
  /* A console tool that re-runs itself under torchrun when it sees more
   * than one GPU. */
  put(&r, "pyproject.toml",
      "[project]\nname = \"tool\"\n[project.scripts]\n"
      "tool-cli = \"tool.cli:main\"\n");
  put(&r, "tool/__init__.py", "");
  put(&r, "tool/cli.py",
      "import os\nimport subprocess\nimport sys\nimport torch\n"
      "def main():\n"
      "    n = os.getenv('NPROC', str(torch.cuda.device_count()))\n"
      "    if torch.cuda.device_count() > 1:\n"
      "        subprocess.run(['torchrun', '--nproc_per_node', n, "
      "__file__] + sys.argv[1:])\n"
      "    else:\n        run_exp()\n"
      "def run_exp():\n    pass\n");
  run(&r, NULL, "tool-cli train run.yaml", &res);
  ASSERT(!known(&res, SM_META_GPUS));
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  sm_extract_res_release(&res);
  /* Malformed launcher words: no script, a value missing. */
  run(&r, NULL, "composer -n", &res);
  ASSERT(res.n_warnings > 0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Sections, containers, dynamic batches, named tables ==== */

SM_TEST(extract_sections_tables_and_batching) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A recipe whose top-level sizes are the model's and whose component
   * sections (a language model for rescoring, the valid loader) repeat
   * the keys; the model is a container of parts. */
  put(&r, "asr/train.py",
      "import sys\nimport torch\nimport yaml\n"
      "hp = yaml.safe_load(open(sys.argv[1]))\n");
  put(&r, "asr/hparams/conformer_tiny.yaml",
      "number_of_epochs: 30\nbatch_size: 12\nd_model: 144\nnhead: 4\n"
      "num_encoder_layers: 8\n"
      "valid_loader:\n  batch_size: 1\n"
      "lm_model:\n  d_model: 768\n  nhead: 12\n"
      "model:\n  _target_: torch.nn.ModuleList\n");
  run(&r, "asr", "python train.py hparams/conformer_tiny.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 144);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 12);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "conformer-tiny");
  sm_extract_res_release(&res);
  /* The same with batches filled up to a length of audio. */
  put(&r, "asr/hparams/dyn.yaml",
      "number_of_epochs: 30\nbatch_size: 12\ndynamic_batching: true\n");
  run(&r, "asr", "python train.py hparams/dyn.yaml", &res);
  ASSERT(!known(&res, SM_META_PER_DEVICE_BATCH_SIZE));
  ASSERT(!known(&res, SM_META_GLOBAL_BATCH_SIZE));
  sm_extract_res_release(&res);
  /* DataParallel's parts used by hand. */
  put(&r, "rec.py",
      "import torch\nfrom torch.nn.parallel.replicate import replicate\n"
      "from torch.nn.parallel.parallel_apply import parallel_apply\n"
      "def forward(m, xs, devs):\n    ms = replicate(m, devs)\n"
      "    return parallel_apply(ms, xs)\n"
      "ndev = torch.cuda.device_count()\n");
  run(&r, NULL, "python rec.py", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "dp");
  ASSERT(!known(&res, SM_META_GPUS));
  sm_extract_res_release(&res);
  /* A table of named architectures as a list; selected by a path. */
  put(&r, "lit/config.py",
      "configs = [\n"
      "    dict(name='tiny-lm', n_layer=4, n_embd=256, n_head=4),\n"
      "    dict(name='big-lm', n_layer=48, n_embd=4096, n_head=32),\n"
      "    {'name': 'odd-lm', 'n_layer': 7},\n]\n");
  put(&r, "lit/train.py",
      "import argparse\nimport torch\nfrom config import configs\n"
      "p = argparse.ArgumentParser()\np.add_argument('--model_name')\n"
      "a = p.parse_args()\n"
      "cfg = [c for c in configs if c['name'] in a.model_name]\n");
  run(&r, "lit", "python train.py --model_name checkpoints/org/big-lm", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 4096);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 48);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Help texts and Hub ids ==== */

SM_TEST(extract_help_texts_and_hub_ids) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Options whose names say nothing and whose help says what they are;
   * a batch option whose help says it is the total. */
  put(&r, "train.py",
      "import argparse\nimport torch\n"
      "from transformers import AutoModelForCausalLM\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('-b', type=int, default=512,\n"
      "               help='total batch size of all GPUs')\n"
      "p.add_argument('-e', type=int, default=3, help='number of epochs')\n"
      "p.add_argument('-k', type=float, default=2e-4, help='learning rate')\n"
      "p.add_argument('--accum', type=int, default=1, help='Number of "
      "update steps to accumulate before a backward pass')\n"
      "p.add_argument('--pretrain', default='EleutherAI/pythia-160m')\n"
      "p.add_argument('--ref-pretrain', default='meta-llama/Llama-2-7b-hf')\n"
      "a = p.parse_args()\n"
      "m = AutoModelForCausalLM.from_pretrained(a.pretrain)\n");
  run(&r, NULL, "torchrun --nproc_per_node 4 train.py -e 5", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 512);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 128);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 5);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "epochs");
  ASSERT_NEAR(num(&res, SM_META_LR), 2e-4, 1e-12);
  sm_extract_res_release(&res);
  /* The Hub id of the model, not of the reference model. */
  run(&r, NULL,
      "torchrun --nproc_per_node 4 train.py --pretrain "
      "meta-llama/Llama-2-13b-hf",
      &res);
  ASSERT(strstr(str(&res, SM_META_MODEL_NAME), "13b") != NULL);
  sm_extract_res_release(&res);
  /* Help text of every kind of bad input: huge, empty, binary. */
  {
    sm_buf b;
    sm_buf_init(&b, 1 << 20);
    sm_buf_adds(&b, "import argparse\np = argparse.ArgumentParser()\n"
                    "p.add_argument('-x', help='");
    for (int i = 0; i < 5000; i++)
      sm_buf_adds(&b, "number of epochs ");
    sm_buf_adds(&b,
                "')\np.add_argument('-y', help='')\n"
                "p.add_argument('-z', help='\\x00\\xff')\np.parse_args()\n");
    put(&r, "bad.py", sm_buf_str(&b));
    sm_buf_release(&b);
  }
  expect_unread(&r, "python bad.py -x 3", SM_META_ITERATIONS);
  repo_drop(&r);
}

/* ==== Compiled trainers described by their usage text ==== */

SM_TEST(extract_native_trainer_usage) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "Makefile",
      "CC ?= gcc\nDTYPE_PRECISION ?= BF16\n"
      "trainer_bin: src/trainer.cu common.h\n\tnvcc -o $@ $<\n");
  put(&r, "src/trainer.cu",
      "#include <stdio.h>\n"
      "void usage(void) {\n"
      "  fprintf(stderr, \"  -m <int>    micro batch size per GPU (default = "
      "8)\\n\");\n"
      "  fprintf(stderr, \"  -q <int>    total batch size (default = "
      "64)\\n\");\n"
      "  fprintf(stderr, \"  -w <float>  learning rate (default = "
      "1e-3f)\\n\");\n"
      "  fprintf(stderr, \"  -it <int>   number of training steps\\n\");\n"
      "  fprintf(stderr, \"  -s <int>    sequence length (default = "
      "256)\\n\");\n"
      "  fprintf(stderr, \"  -z <int>    how often to log\\n\");\n"
      "  printf(\"-\");\n  printf(\"  -\\n\");\n"
      "}\nint main(void) { return 0; }\n");
  put(&r, "run.sh",
      "make trainer_bin\nmpirun -np 4 ./trainer_bin -it 3000 -w 0.0002 "
      "-i data/fineweb_train_*.bin\n");
  run(&r, NULL, "bash run.sh", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 4);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 3000);
  ASSERT_NEAR(num(&res, SM_META_LR), 2e-4, 1e-12);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 64);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "bf16");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "fineweb");
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  sm_extract_res_release(&res);
  /* A program whose source is not in the repository; a name like a
   * path out of it. */
  run(&r, NULL, "./missing_bin -x 1", &res);
  ASSERT(res.n_warnings > 0);
  sm_extract_res_release(&res);
  expect_unread(&r, "../../bin/trainer_bin -it 5", SM_META_ITERATIONS);
  repo_drop(&r);
}

/* ==== Presets applied under conditions, data sections ==== */

SM_TEST(extract_guarded_presets_and_data_sections) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "net/__init__.py", "");
  put(&r, "net/model.py",
      "import torch\nclass NetConfig:\n    model_type: str = 'gpt2'\n"
      "    n_layer: int = None\n    n_head: int = None\n    n_embd: int = "
      "None\n"
      "class GPT(torch.nn.Module):\n    def __init__(self, config):\n"
      "        given = config.model_type is not None\n"
      "        sizes = all([config.n_layer is not None, "
      "config.n_embd is not None])\n"
      "        if given and not sizes:\n"
      "            config.__dict__.update({\n"
      "                'gpt2': dict(n_layer=12, n_head=12, n_embd=768),\n"
      "                'gpt2-medium': dict(n_layer=24, n_head=16, "
      "n_embd=1024),\n            }[config.model_type])\n");
  put(&r, "main.py",
      "import sys\nimport torch\nimport yaml\nfrom net.model import GPT\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\nmodel = GPT(cfg)\n");
  /* Sizes given: the table is not applied and its name is not the
   * model. */
  put(&r, "sized.yaml",
      "data:\n  url: https://example.org/files/tinyshakespeare/input.txt\n"
      "gpt:\n  n_layer: 6\n  n_head: 6\n  n_embd: 384\n");
  run(&r, NULL, "torchrun --nproc_per_node 2 main.py sized.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 384);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 6);
  ASSERT(strcmp(str(&res, SM_META_MODEL_NAME), "gpt2") != 0);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "tiny-shakespeare");
  sm_extract_res_release(&res);
  /* Only a type: the table applies. */
  put(&r, "typed.yaml", "gpt:\n  model_type: gpt2-medium\n");
  run(&r, NULL, "torchrun --nproc_per_node 2 main.py typed.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 1024);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* An option of a compiled trainer whose documented default is a
 * checkpoint named after a known model is the model option: the value
 * the job gives it names the model, and without one the default does. */
SM_TEST(extract_native_model_option_by_default) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "Makefile", "lm_run: lm.c\n\tcc -o $@ $<\n");
  put(&r, "lm.c",
      "#include <stdio.h>\n"
      "static void help(void) {\n"
      "  printf(\"  -k <string> weights to start from, or a tag "
      "(default = gpt2-medium_fp32.bin)\\n\");\n"
      "  printf(\"  -o <string> where to write (default = "
      "out_fp32.bin)\\n\");\n"
      "  printf(\"  -r <float>  learning rate (default = 1e-4)\\n\");\n"
      "}\nint main(void) { help(); return 0; }\n");
  put(&r, "go.sh", "make lm_run\nmpirun -np 2 ./lm_run -o runs/gpt2-xl-try\n");
  run(&r, NULL, "./lm_run -k tiny6 -r 0.001", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "tiny6");
  ASSERT_NEAR(num(&res, SM_META_LR), 1e-3, 1e-12);
  sm_extract_res_release(&res);
  /* No value given: the default names the model (a size and dtype added
   * to the family's name); the output option, whose default names none,
   * is not the model even when its value looks like one. */
  run(&r, NULL, "bash go.sh", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "gpt2-355m");
  ASSERT_EQ(num(&res, SM_META_GPUS), 2);
  sm_extract_res_release(&res);
  /* A default that names no known model makes no model option. */
  put(&r, "lm.c",
      "static void help(void) {\n"
      "  printf(\"  -k <string> weights (default = weights_fp32.bin)\\n\");\n"
      "}\n");
  run(&r, NULL, "./lm_run -k tiny6", &res);
  ASSERT(!known(&res, SM_META_MODEL_NAME) ||
         strcmp(str(&res, SM_META_MODEL_NAME), "tiny6") != 0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Casts made only to evaluate or generate (a log_validation function
 * running a pipeline under autocast, a .half() model for sampling) are
 * not the training run's precision; the same cast in the training loop,
 * or in a function named otherwise (upsample), is. */
#define EVAL_HEAD                                                              \
  "import torch\n"                                                             \
  "import argparse\n"                                                          \
  "p = argparse.ArgumentParser()\n"                                            \
  "p.add_argument('--steps', type=int, default=100)\n"                         \
  "args = p.parse_args()\n"                                                    \
  "model = torch.nn.Linear(4, 4).cuda()\n"

SM_TEST(extract_eval_only_casts_are_not_the_precision) {
  repo r;
  repo_make(&r);
  put(&r, "fine.py",
      EVAL_HEAD "def log_validation(pipe):\n"
                "    with torch.autocast('cuda'):\n"
                "        return pipe(torch.zeros(1))\n"
                "def generate_samples(m):\n"
                "    return m.half()(torch.zeros(1))\n"
                "for step in range(args.steps):\n"
                "    loss = model(torch.randn(2, 4)).sum()\n"
                "    loss.backward()\n"
                "log_validation(model)\n");
  put(&r, "amp.py",
      EVAL_HEAD "def upsample(x):\n"
                "    with torch.autocast('cuda'):\n"
                "        return model(x)\n"
                "for step in range(args.steps):\n"
                "    loss = upsample(torch.randn(2, 4)).sum()\n"
                "    loss.backward()\n");
  expect_str(&r, NULL, "python fine.py", SM_META_PRECISION, "fp32");
  expect_str(&r, NULL, "python amp.py", SM_META_PRECISION, "fp16");
  repo_drop(&r);
}
#undef EVAL_HEAD

/* ==== Process layout and strategy on unfamiliar repositories ====
 * Launchers the extractor has no table for (resource options by their
 * shared names, then the script), strategy objects of trainer frameworks
 * under a device condition, enum-member defaults of a config class built
 * by a class method, hardware fallbacks a GPU job never takes, unitless
 * durations, micro-batch keys, micro-step lengths, architecture files
 * per name, method words inside identifiers. */

/* A trainer-framework script: the strategy object only when several
 * devices are asked for. */
static const char fabric_script[] =
    "import torch\n"
    "import lightning as L\n"
    "from lightning.fabric.strategies import FSDPStrategy, DDPStrategy\n"
    "micro_batch_size = 4\n"
    "max_steps = 5000\n"
    "def setup(devices: int = 1, shard: bool = True):\n"
    "    if devices > 1:\n"
    "        strategy = FSDPStrategy(cpu_offload=False) if shard else "
    "DDPStrategy()\n"
    "    else:\n"
    "        strategy = 'auto'\n"
    "    fabric = L.Fabric(devices=devices, strategy=strategy)\n"
    "if __name__ == '__main__':\n"
    "    from jsonargparse import CLI\n"
    "    CLI(setup)\n";

SM_TEST(extract_launcher_without_a_table) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "pretrain/run.py", fabric_script);
  /* A launcher subcommand with its resource options, then the script. */
  run(&r, NULL,
      "lightning run model --accelerator=cuda --devices=4 --num-nodes=2 "
      "pretrain/run.py --devices 4",
      &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 8);
  ASSERT_EQ(num(&res, SM_META_NODES), 2);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "fsdp");
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 5000);
  sm_extract_res_release(&res);
  /* Another spelling: --nproc_per_node / --nnodes with separate values,
   * and the strategy switch off. */
  run(&r, NULL,
      "fabric run --nproc_per_node 2 --nnodes 1 pretrain/run.py "
      "--devices 2 --shard false",
      &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 2);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  sm_extract_res_release(&res);
  /* One device: no strategy object is built. */
  run(&r, NULL, "fabric run --devices 1 pretrain/run.py --devices 1", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 1);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "none");
  sm_extract_res_release(&res);
  /* A python interpreter after the launcher's own options. */
  run(&r, NULL, "mylauncher submit --gpus 4 python pretrain/run.py --devices 4",
      &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 4);
  sm_extract_res_release(&res);
  /* A wrapper with no resource options only runs the interpreter. */
  run(&r, NULL, "uv run python pretrain/run.py --devices 1", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 1);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "none");
  sm_extract_res_release(&res);
  /* "auto" devices: the count is left to the hardware. */
  expect_unread(&r, "fabric run --devices auto pretrain/run.py", SM_META_GPUS);
  /* Malformed: no script of the repository follows (a missing file, an
   * option value that only looks like one, nothing at all): a warning,
   * nothing guessed. */
  run(&r, NULL, "fabric run --devices 4 missing.py", &res);
  ASSERT(!known(&res, SM_META_GPUS));
  ASSERT(res.n_warnings > 0);
  sm_extract_res_release(&res);
  run(&r, NULL, "fabric run --devices", &res);
  ASSERT(!known(&res, SM_META_GPUS));
  ASSERT(res.n_warnings > 0);
  sm_extract_res_release(&res);
  run(&r, NULL, "fabric --devices=notanumber pretrain/run.py", &res);
  ASSERT(!known(&res, SM_META_GPUS) || num(&res, SM_META_GPUS) == 1);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

SM_TEST(extract_strategy_enum_defaults_and_fallbacks) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "lib/__init__.py", "");
  put(&r, "lib/conf.py",
      "from dataclasses import dataclass\nfrom enum import Enum\n"
      "class Strategy(str, Enum):\n"
      "    ddp = 'ddp'\n    fsdp = 'fsdp'\n    single = 'single'\n"
      "@dataclass\nclass RunConfig:\n"
      "    parallel_strategy: Strategy = Strategy.fsdp\n"
      "    max_duration: int = 100\n"
      "    device_train_microbatch_size: int = 2\n"
      "    @classmethod\n"
      "    def load(cls, path, overrides=None):\n        return cls()\n");
  put(&r, "train.py",
      "import sys\nimport torch\n"
      "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
      "from torch.nn.parallel import DistributedDataParallel as DDP\n"
      "from lib.conf import RunConfig, Strategy\n"
      "def main(cfg):\n"
      "    net = torch.nn.Linear(2, 2)\n"
      "    if cfg.parallel_strategy == Strategy.ddp:\n        net = DDP(net)\n"
      "    elif cfg.parallel_strategy == Strategy.fsdp:\n"
      "        net = FSDP(net)\n"
      "if __name__ == '__main__':\n"
      "    cfg = RunConfig.load(sys.argv[1], sys.argv[2:])\n"
      "    if torch.backends.mps.is_available():\n"
      "        cfg.parallel_strategy = 'single'\n"
      "    if not torch.cuda.is_available():\n"
      "        cfg.parallel_strategy = 'single'\n"
      "    main(cfg)\n");
  put(&r, "big.yaml",
      "max_duration: 12_500\ndevice_train_microbatch_size: 8\n"
      "global_train_batch_size: 512\n");
  put(&r, "small.yaml", "parallel_strategy: ddp\nmax_duration: 3ep\n");
  put(&r, "budget.yaml",
      "max_duration: 2e9T\nglobal_train_batch_size: 1000\n"
      "max_seq_len: 1000\n");
  /* The class default (an enum member) decides; the fallbacks for Apple
   * GPUs and for machines without CUDA are not taken. */
  run(&r, NULL, "torchrun --nproc_per_node=8 train.py big.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "fsdp");
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 12500);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 8);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 512);
  sm_extract_res_release(&res);
  /* The run's file overrides the class default. */
  run(&r, NULL, "torchrun --nproc_per_node=8 train.py small.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "ddp");
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 3);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "epochs");
  sm_extract_res_release(&res);
  /* A token budget with a bare T: steps once batch and length are
   * known (2e9 / (1000 x 1000)). */
  expect_num(&r, NULL, "torchrun --nproc_per_node=8 train.py budget.yaml",
             SM_META_ITERATIONS, 2000);
  /* Malformed files: a duration that is no number, a strategy of the
   * wrong type, binary bytes: nulls, no crash. */
  put(&r, "bad.yaml",
      "max_duration: 12_x5\nparallel_strategy: [1, 2]\n"
      "device_train_microbatch_size: {a: 1}\n");
  run(&r, NULL, "torchrun --nproc_per_node=8 train.py bad.yaml", &res);
  ASSERT(!known(&res, SM_META_ITERATIONS) ||
         num(&res, SM_META_ITERATIONS) == 100);
  sm_extract_res_release(&res);
  put(&r, "bin.yaml", "\x01\x02\xff\xfe: \x80\x81\n");
  run(&r, NULL, "torchrun --nproc_per_node=8 train.py bin.yaml", &res);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

SM_TEST(extract_micro_step_lengths_and_arch_files) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* The loop counts micro-batches: the optimizer steps are the factor
   * that is not the accumulation. */
  put(&r, "pre.py",
      "import torch\n"
      "global_batch_size = 256\nmicro_batch_size = 4\nnum_devices = 8\n"
      "max_step = 1000\n"
      "gradient_accumulation_steps = global_batch_size // num_devices // "
      "micro_batch_size\n"
      "max_iters = max_step * gradient_accumulation_steps\n"
      "model = torch.nn.Linear(2, 2)\n");
  run(&r, NULL, "python pre.py", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 1000);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  sm_extract_res_release(&res);
  /* A product of two lengths, or of a length and a number, stays as
   * written. */
  put(&r, "pre2.py",
      "import torch\nepochs_per_stage = 3\nmax_iters = 1000 * 2\n"
      "model = torch.nn.Linear(2, 2)\n");
  expect_num(&r, NULL, "python pre2.py", SM_META_ITERATIONS, 2000);
  /* An architecture table as one file per name next to the factory
   * module the entry imports. */
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/factory.py",
      "import json, pathlib\n"
      "CFG_DIR = pathlib.Path(__file__).parent / 'model_configs'\n"
      "def create_model(name):\n"
      "    return json.load(open(CFG_DIR / (name + '.json')))\n");
  put(&r, "pkg/model_configs/tiny-enc.json",
      "{\"hidden_size\": 384, \"num_hidden_layers\": 6}\n");
  put(&r, "pkg/model_configs/broken.json", "{\"width\": [1, 2\n");
  put(&r, "train/main.py",
      "import argparse\nimport torch\nfrom pkg.factory import create_model\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='none')\n"
      "p.add_argument('--epochs', type=int, default=3)\n"
      "args = p.parse_args()\nm = create_model(args.model)\n");
  run(&r, NULL, "python train/main.py --model tiny-enc", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 384);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 6);
  sm_extract_res_release(&res);
  /* A name without a file, a file that does not parse, a path outside
   * the root: nothing read from them, no crash. */
  expect_unread(&r, "python train/main.py --model other", SM_META_D_MODEL);
  expect_unread(&r, "python train/main.py --model broken", SM_META_D_MODEL);
  expect_unread(&r, "python train/main.py --model ../../etc/passwd",
                SM_META_D_MODEL);
  repo_drop(&r);
}

SM_TEST(extract_method_words_respect_identifier_bounds) {
  repo r;
  repo_make(&r);
  /* A self-supervised method's short name inside an unrelated
   * identifier (OLMoConfig) is no vote for it. */
  put(&r, "train.py",
      "import sys\nimport torch\nimport yaml\n"
      "class OLMoConfigurationError(Exception):\n    pass\n"
      "class OLMoCliError(OLMoConfigurationError):\n    pass\n"
      "def main(cfg):\n"
      "    if cfg.get('run_name') is None:\n"
      "        raise OLMoConfigurationError('run_name')\n"
      "    if cfg.get('save_folder') is None:\n"
      "        raise OLMoConfigurationError('save_folder')\n"
      "if __name__ == '__main__':\n"
      "    if len(sys.argv) < 2:\n        raise OLMoCliError('usage')\n"
      "    main(yaml.safe_load(open(sys.argv[1])))\n");
  put(&r, "lm.yaml",
      "run_name: tiny\nmodel:\n  d_model: 256\n  n_layers: 4\n"
      "  vocab_size: 50280\n  max_sequence_length: 512\n"
      "max_duration: 1000\n");
  expect_str(&r, NULL, "python train.py lm.yaml", SM_META_TASK,
             "language_model_pretraining");
  repo_drop(&r);
}

SM_TEST(extract_sharding_and_degree_keys) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import sys\nimport torch\nimport yaml\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n"
      "model = torch.nn.Linear(2, 2)\n");
  /* A sharding strategy set by the run's file: FSDP. */
  put(&r, "shard.yaml",
      "fsdp_config:\n  sharding_strategy: HYBRID_SHARD\n"
      "  mixed_precision: PURE\nmax_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=4 train.py shard.yaml",
             SM_META_PARALLELISM, "fsdp");
  /* NO_SHARD, or a sharding value of the wrong type: not FSDP. */
  put(&r, "noshard.yaml",
      "fsdp_config:\n  sharding_strategy: NO_SHARD\nmax_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=4 train.py noshard.yaml",
             SM_META_PARALLELISM, "ddp");
  put(&r, "odd.yaml", "sharding_strategy: [1, 2]\nmax_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=4 train.py odd.yaml",
             SM_META_PARALLELISM, "ddp");
  /* Tensor / pipeline degrees in another spelling. */
  put(&r, "tp.yaml",
      "parallelism:\n  tensor_parallel_degree: 4\n"
      "  pipeline_parallel_degree: 2\nmax_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=8 train.py tp.yaml",
             SM_META_PARALLELISM, "megatron_tp4_pp2");
  repo_drop(&r);
}

SM_TEST(extract_size_tables_of_functions) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A table of named sizes whose entries are the functions that build
   * them: one sets locals, one returns a dict. */
  put(&r, "arch/__init__.py", "");
  put(&r, "arch/sizes.py",
      "import torch\n"
      "class Net(torch.nn.Module):\n"
      "    def __init__(self, dim=64, n_layers=2, n_heads=2):\n"
      "        super().__init__()\n"
      "def _tiny():\n    dim = 192\n    n_layers = 3\n    n_heads = 3\n"
      "    return dict(dim=dim, n_layers=n_layers, n_heads=n_heads)\n"
      "def _wide():\n    return dict(dim=3072, n_layers=28, n_heads=24)\n"
      "SIZES = {'tiny': _tiny, 'wide': _wide, 'alias': _wide, 3: _tiny}\n"
      "def build(name):\n    return Net(**SIZES[name]())\n");
  put(&r, "train.py",
      "import argparse\nfrom arch.sizes import build\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model_name', default='tiny')\n"
      "p.add_argument('--max_steps', type=int, default=10)\n"
      "a = p.parse_args()\nmodel = build(a.model_name)\n");
  run(&r, NULL, "python train.py --model_name wide", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 3072);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 28);
  sm_extract_res_release(&res);
  run(&r, NULL, "python train.py --model_name tiny", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 192);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 3);
  sm_extract_res_release(&res);
  expect_num(&r, NULL, "python train.py --model_name alias", SM_META_N_LAYERS,
             28);
  /* A name the table does not hold: the class defaults of a library
   * module are no answer. */
  expect_unread(&r, "python train.py --model_name huge", SM_META_N_LAYERS);
  /* Malformed: a table entry naming no function, a function that calls
   * itself. */
  put(&r, "arch/sizes.py",
      "SIZES = {'tiny': not_defined, 'loop': _loop}\n"
      "def _loop():\n    return _loop()\n"
      "def build(name):\n    return SIZES[name]()\n");
  expect_unread(&r, "python train.py --model_name loop", SM_META_D_MODEL);
  expect_unread(&r, "python train.py --model_name tiny", SM_META_D_MODEL);
  repo_drop(&r);
}

SM_TEST(extract_dataset_mixers_name_no_data) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A class that mixes other datasets (by its datasets= argument or by
   * a mixing word in its name) is no dataset name. */
  put(&r, "train.py",
      "import torch\n"
      "class BlendDataset(torch.utils.data.IterableDataset):\n"
      "    def __init__(self, datasets, weights):\n        pass\n"
      "def main():\n"
      "    parts = [torch.load('a'), torch.load('b')]\n"
      "    mix = BlendDataset(datasets=parts, weights=[0.5, 0.5])\n"
      "    model = torch.nn.Linear(2, 2)\n"
      "main()\n");
  expect_unread(&r, "python train.py", SM_META_DATASET);
  put(&r, "train2.py",
      "import torch\n"
      "class InterleavedDataset(torch.utils.data.IterableDataset):\n"
      "    pass\n"
      "def main():\n    data = InterleavedDataset()\n"
      "    model = torch.nn.Linear(2, 2)\n"
      "main()\n");
  expect_unread(&r, "python train2.py", SM_META_DATASET);
  /* A dataset class named after its data still names it. */
  put(&r, "train3.py",
      "import torch\n"
      "class TinyStoriesDataset(torch.utils.data.IterableDataset):\n"
      "    pass\n"
      "def main():\n    data = TinyStoriesDataset()\n"
      "    model = torch.nn.Linear(2, 2)\n"
      "main()\n");
  run(&r, NULL, "python train3.py", &res);
  ASSERT(known(&res, SM_META_DATASET));
  sm_extract_res_release(&res);
  repo_drop(&r);
}

SM_TEST(extract_image_text_pair_data_votes_contrastive) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Image-text pair collections made for CLIP-style training vote for
   * their usual task. */
  put(&r, "train.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--train-data', default=None)\n"
      "p.add_argument('--epochs', type=int, default=2)\n"
      "p.add_argument('--batch-size', type=int, default=64)\n"
      "a = p.parse_args()\n"
      "model = torch.nn.Linear(2, 2)\n");
  run(&r, NULL,
      "python train.py --train-data "
      "/data/datacomp/datacomp-train-{0000..0099}.tar",
      &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "datacomp");
  ASSERT_STREQ(str(&res, SM_META_TASK), "contrastive_pretraining");
  ASSERT_STREQ(str(&res, SM_META_DOMAIN), "multimodal");
  sm_extract_res_release(&res);
  repo_drop(&r);
}

SM_TEST(extract_dataset_from_shard_paths) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import sys\nimport torch\nimport yaml\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n"
      "model = torch.nn.Linear(2, 2)\n");
  /* A list of shard files: the directory that names a known dataset,
   * not the shard's file name. */
  put(&r, "mix.yaml",
      "data:\n  paths:\n"
      "    - https://data.example.org/pre/dolma/v2/tok-x/part-000-00000.npy\n"
      "    - https://data.example.org/pre/dolma/v2/tok-x/part-000-00001.npy\n"
      "max_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=2 train.py mix.yaml",
             SM_META_DATASET, "dolma");
  /* Numbered shards under an unknown name: that name, not the number. */
  put(&r, "own.yaml",
      "data:\n  paths:\n    - /data/mycorpus/shard-00012.tar\n"
      "max_steps: 10\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node=2 train.py own.yaml",
             SM_META_DATASET, "mycorpus");
  /* A directory option of the script. */
  put(&r, "pre.py",
      "import torch\n"
      "def setup(train_data_dir: str = 'data/x', max_steps: int = 5):\n"
      "    model = torch.nn.Linear(2, 2)\n"
      "if __name__ == '__main__':\n"
      "    from jsonargparse import CLI\n    CLI(setup)\n");
  run(&r, NULL, "python pre.py --train_data_dir /data/tinystories_v2", &res);
  ASSERT(strstr(str(&res, SM_META_DATASET), "tinystories") != NULL);
  sm_extract_res_release(&res);
  /* Malformed: an empty list, a list of numbers, only shard numbers. */
  put(&r, "bad.yaml", "data:\n  paths: []\nmax_steps: 10\n");
  run(&r, NULL, "torchrun --nproc_per_node=2 train.py bad.yaml", &res);
  sm_extract_res_release(&res);
  put(&r, "bad2.yaml", "data:\n  paths: [1, 2]\nmax_steps: 10\n");
  run(&r, NULL, "torchrun --nproc_per_node=2 train.py bad2.yaml", &res);
  sm_extract_res_release(&res);
  /* A path given for evaluation only names no training data. */
  put(&r, "zs.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--train-data', default=None)\n"
      "p.add_argument('--imagenet-val', default=None)\n"
      "p.add_argument('--epochs', type=int, default=2)\n"
      "a = p.parse_args()\nmodel = torch.nn.Linear(2, 2)\n");
  expect_unread(&r, "python zs.py --imagenet-val /data/imagenet/val",
                SM_META_DATASET);
  /* A split's name is no dataset's. */
  put(&r, "split.yaml",
      "data:\n  paths: ['/data/captions/train_data.csv']\nmax_steps: 1\n");
  expect_unread(&r, "torchrun --nproc_per_node=2 train.py split.yaml",
                SM_META_DATASET);
  put(&r, "bad3.yaml", "data:\n  paths: ['/0001/0002.npy']\nmax_steps: 1\n");
  expect_unread(&r, "torchrun --nproc_per_node=2 train.py bad3.yaml",
                SM_META_DATASET);
  repo_drop(&r);
}

SM_TEST(extract_bf16_capable_gpus) {
  repo r;
  repo_make(&r);
  /* A fp16 fallback for GPUs without bf16 is not taken on the current
   * ones; the bf16 branch is. */
  put(&r, "a.py",
      "import torch\nmodel = torch.nn.Linear(2, 2)\nmax_steps = 10\n"
      "if not torch.cuda.is_bf16_supported():\n"
      "    scaler = torch.cuda.amp.GradScaler()\n"
      "    model = model.half()\n");
  expect_str(&r, NULL, "python a.py", SM_META_PRECISION, "fp32");
  put(&r, "b.py",
      "import torch\nmodel = torch.nn.Linear(2, 2)\nmax_steps = 10\n"
      "if torch.cuda.is_bf16_supported():\n"
      "    ctx = torch.autocast('cuda', dtype=torch.bfloat16)\n"
      "else:\n    scaler = torch.cuda.amp.GradScaler()\n");
  expect_str(&r, NULL, "python b.py", SM_META_PRECISION, "bf16");
  repo_drop(&r);
}

/* ==== click options, lengths in images, generation methods ==== */

/* Options declared with click decorators, lengths counted in images,
 * total batches named only "batch", switches that turn mixed precision
 * off, presets chosen from a closed set, and the two image-generation
 * methods (adversarial, score-based). */
/* An adversarial trainer: click options, the length in thousands of
 * images, a base configuration chosen from a closed set, mixed precision
 * unless --full32 says otherwise. */
static const char gan_train[] =
    "import click\n"
    "import torch\n"
    "from nets import loop\n"
    "\n"
    "@click.command()\n"
    "@click.option('--run-dir', help='Where runs go', type=str, "
    "required=True)\n"
    "@click.option('--preset', help='Base configuration', "
    "type=click.Choice(['pixgan-small', 'pixgan-large']), required=True)\n"
    "@click.option('--images', help='Training images', metavar='ZIP', "
    "type=str, required=True)\n"
    "@click.option('--gpus', help='GPUs to use', type=int, required=True)\n"
    "@click.option('--batch', help='Total batch size', type=int, "
    "default=64)\n"
    "@click.option('--g-lr', help='Generator learning rate', type=float, "
    "default=0.0025)\n"
    "@click.option('--length', help='Total training duration', "
    "metavar='KIMG', type=int, default=12000)\n"
    "@click.option('--tick', help='How often to print progress', "
    "metavar='KIMG', type=int, default=4)\n"
    "@click.option('--fp32', help='Disable mixed-precision', type=bool, "
    "default=False)\n"
    "@click.option('-n', '--dry-run', help='Print and exit', is_flag=True)\n"
    "def main(**kw):\n"
    "    d_net = loop.Discriminator()\n"
    "    g_opt = torch.optim.Adam(d_net.parameters(), lr=kw['g_lr'])\n"
    "    torch.nn.parallel.DistributedDataParallel(d_net)\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    main()\n";

static const char gan_loop[] =
    "class Discriminator:\n"
    "    def __init__(self, architecture='resnet'):\n"
    "        self.architecture = architecture\n"
    "\n"
    "def convert(kwargs):\n"
    "    kwargs.architecture = 'skipless'\n";

SM_TEST(extract_click_options_and_image_budgets) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py", gan_train);
  put(&r, "nets/loop.py", gan_loop);
  run(&r, NULL,
      "torchrun --nproc_per_node=8 train.py --run-dir=/ckpt/a "
      "--preset=pixgan-small --images=/data/afhq-256.zip --gpus=8 "
      "--batch=32",
      &res);
  /* 12000 kimg over 32 images a step. */
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 375000);
  ASSERT_STREQ(str(&res, SM_META_ITERATION_TYPE), "steps");
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 32);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 4);
  ASSERT(num(&res, SM_META_LR) > 0.0024 && num(&res, SM_META_LR) < 0.0026);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "fp16");
  /* The preset named on the command, not a converter's assignment. */
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "pixgan-small");
  ASSERT_STREQ(str(&res, SM_META_TASK), "image_generation_gan");
  ASSERT_STREQ(str(&res, SM_META_DOMAIN), "cv");
  sm_extract_res_release(&res);
  /* The command's length and the switch on: fp32; the tick (same unit,
   * an interval) is no length. */
  run(&r, NULL,
      "torchrun --nproc_per_node=8 train.py --run-dir=/ckpt/a "
      "--preset=pixgan-large --images=/data/afhq-256.zip --gpus=8 "
      "--batch=64 --length=640 --tick=1 --fp32=1",
      &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 10000);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "fp32");
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "pixgan-large");
  sm_extract_res_release(&res);
  /* A preset outside the command (none given) names nothing by itself,
   * and a path-like value is a file, not a preset. */
  run(&r, NULL,
      "torchrun --nproc_per_node=8 train.py --run-dir=/ckpt/a "
      "--preset=configs/a.yaml --images=/data/afhq-256.zip --gpus=8",
      &res);
  ASSERT(!known(&res, SM_META_MODEL_NAME) ||
         strcmp(str(&res, SM_META_MODEL_NAME), "configs/a.yaml") != 0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* A score-based trainer: the length in millions of images, the total
 * batch named "batch", precond/loss classes by name. */
static const char score_train[] =
    "import click\n"
    "import torch\n"
    "import nets\n"
    "\n"
    "@click.command()\n"
    "@click.option('--data', help='Dataset', type=str, required=True)\n"
    "@click.option('--net', help='Network', "
    "type=click.Choice(['unetpp', 'unetxl']), default='unetpp')\n"
    "@click.option('--duration', help='Training duration', metavar='MIMG', "
    "type=float, default=50)\n"
    "@click.option('--ema', help='EMA half-life', metavar='MIMG', "
    "type=float, default=0.5)\n"
    "@click.option('--batch', help='Total batch size', type=int, "
    "default=250)\n"
    "@click.option('--lr', help='Learning rate', type=float, default=2e-4)\n"
    "def main(**kw):\n"
    "    net = nets.VPPrecond(sigma_data=0.5)\n"
    "    loss = nets.VPLoss()\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    main()\n";

SM_TEST(extract_score_based_trainer_with_mimg) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py", score_train);
  run(&r, NULL,
      "torchrun --nproc_per_node=4 train.py --data=/data/cifar10-32x32.zip "
      "--net=unetxl",
      &res);
  /* 50 Mimg / 250 = 200000 steps; the EMA half-life is no length. */
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 200000);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 250);
  ASSERT(num(&res, SM_META_LR) > 1.9e-4 && num(&res, SM_META_LR) < 2.1e-4);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "unetxl");
  /* CIFAR says classification; the preconditioned score model says
   * generation. */
  ASSERT_STREQ(str(&res, SM_META_TASK), "image_generation_diffusion");
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Malformed click declarations: no names, a non-string name, a choice
 * call without a list, an image unit on a non-number, a huge help line,
 * invalid UTF-8. */
SM_TEST(extract_click_malformed) {
  repo r;
  sm_extract_res res;
  char *big = malloc(300000);
  ASSERT(big != NULL);
  repo_make(&r);
  {
    size_t o = (size_t)snprintf(big, 300000,
                                "import click\n@click.option()\n"
                                "@click.option(42, default=3)\n"
                                "@click.option('--cfg', type=click.Choice())\n"
                                "@click.option('--kimg', metavar='KIMG', "
                                "default='lots', help='Total \xff\xfe')\n"
                                "@click.option('--batch', help='");
    while (o < 290000)
      big[o++] = 'x';
    snprintf(big + o, 300000 - o,
             "', default=[1, 2])\n"
             "@click.option('--lr', default=(\n"
             "def main(**kw):\n    pass\n");
  }
  put(&r, "train.py", big);
  run(&r, NULL, "python train.py --cfg=a --kimg=oops", &res);
  ASSERT(!known(&res, SM_META_ITERATIONS));
  ASSERT(!known(&res, SM_META_GLOBAL_BATCH_SIZE));
  ASSERT(!known(&res, SM_META_LR));
  sm_extract_res_release(&res);
  /* Empty and binary entry files. */
  put(&r, "empty.py", "");
  expect_unread(&r, "python empty.py --batch 8", SM_META_ITERATIONS);
  put(&r, "bin.py",
      "\x7f"
      "ELF\x01\x02\x00\x00@click.option('--kimg')");
  expect_unread(&r, "python bin.py --kimg 5", SM_META_ITERATIONS);
  free(big);
  repo_drop(&r);
}

/* A device list on the command that the code makes the visible GPUs
 * (os.environ['CUDA_VISIBLE_DEVICES'] = device), with DataParallel over
 * more than one: the count listed; not a cpu/cuda:N spelling. */
static const char visible_train[] =
    "import argparse, os\n"
    "import torch\n"
    "\n"
    "def pick(device=''):\n"
    "    if device.lower() == 'cpu':\n"
    "        os.environ['CUDA_VISIBLE_DEVICES'] = '-1'\n"
    "    elif device:\n"
    "        os.environ['CUDA_VISIBLE_DEVICES'] = device\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    ap = argparse.ArgumentParser()\n"
    "    ap.add_argument('--device', default='', help='cuda device, 0 or "
    "0,1,2')\n"
    "    ap.add_argument('--batch-size', type=int, default=16, help='total "
    "batch size for all GPUs')\n"
    "    opt = ap.parse_args()\n"
    "    pick(opt.device)\n"
    "    model = torch.nn.Linear(2, 2)\n"
    "    if torch.cuda.device_count() > 1:\n"
    "        model = torch.nn.DataParallel(model)\n";

SM_TEST(extract_visible_device_lists) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py", visible_train);
  run(&r, NULL, "python train.py --device 0 --batch-size 32", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 1);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "none");
  sm_extract_res_release(&res);
  expect_num(&r, NULL, "python train.py --device 0,1,2 --batch-size 48",
             SM_META_GPUS, 3);
  /* Not index lists: the count stays open (DataParallel over every
   * visible GPU) rather than guessed. */
  expect_unread(&r, "python train.py --device cuda:1", SM_META_GPUS);
  expect_unread(&r, "python train.py --device 0,,x", SM_META_GPUS);
  /* Without the assignment the option is only a device name. */
  put(&r, "plain.py",
      "import argparse, torch\n"
      "ap = argparse.ArgumentParser()\n"
      "ap.add_argument('--device', default='')\n"
      "opt = ap.parse_args()\n"
      "model = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n");
  expect_unread(&r, "python plain.py --device 0,1", SM_META_GPUS);
  repo_drop(&r);
}

/* A two-tower (image-text) architecture file: the top-level embed_dim
 * is the projection both towers map to; d_model is the image tower's
 * width when that tower counts transformer layers, and nothing when it
 * lists CNN stages.  A single-tower file keeps its embed_dim. */
SM_TEST(extract_two_tower_widths) {
  repo r;
  repo_make(&r);
  put(&r, "duo/__init__.py", "");
  put(&r, "duo/factory.py",
      "import json, pathlib\n"
      "CFG_DIR = pathlib.Path(__file__).parent / 'model_configs'\n"
      "def create_model(name):\n"
      "    return json.load(open(CFG_DIR / (name + '.json')))\n");
  put(&r, "duo/model_configs/pair-vit-s.json",
      "{\n  \"embed_dim\": 256,\n"
      "  \"vision_cfg\": {\"layers\": 10, \"width\": 384, \"patch_size\": "
      "16},\n"
      "  \"text_cfg\": {\"layers\": 6, \"width\": 256, \"heads\": 4}\n}\n");
  put(&r, "duo/model_configs/pair-cnn.json",
      "{\n  \"embed_dim\": 640,\n"
      "  \"vision_cfg\": {\"layers\": [2, 2, 2, 2], \"width\": 32},\n"
      "  \"text_cfg\": {\"layers\": 6, \"width\": 256, \"heads\": 4}\n}\n");
  put(&r, "duo/model_configs/solo-enc.json",
      "{\"embed_dim\": 320, \"num_hidden_layers\": 4, \"heads\": 4}\n");
  put(&r, "duo/model_configs/pair-bad.json",
      "{\"embed_dim\": 128, \"vision_cfg\": {\"width\": \"wide\", "
      "\"layers\": {}}, \"text_cfg\": 7}\n");
  put(&r, "run/main.py",
      "import argparse\nimport torch\nfrom duo.factory import create_model\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='none')\n"
      "args = p.parse_args()\nm = create_model(args.model)\n");
  expect_num(&r, NULL, "python run/main.py --model pair-vit-s", SM_META_D_MODEL,
             384);
  expect_unread(&r, "python run/main.py --model pair-cnn", SM_META_D_MODEL);
  expect_num(&r, NULL, "python run/main.py --model solo-enc", SM_META_D_MODEL,
             320);
  /* Wrong types in the towers: no width guessed. */
  expect_unread(&r, "python run/main.py --model pair-bad", SM_META_D_MODEL);
  repo_drop(&r);
}

/* ==== Configs chosen by name through a registry ==== */

SM_TEST(extract_config_registry_function) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* A trainer whose --config names a function of a registry module
   * (loaded by name at run time, not imported): the function returns
   * nested config objects built by dataclass constructors, with a model
   * preset looked up in a dict of flavours and an optimizer built by a
   * helper called with keyword arguments. */
  put(&r, "trainer/main.py",
      "import argparse\np = argparse.ArgumentParser()\n"
      "p.add_argument('--config', default='tiny_run')\n"
      "p.add_argument('--family', default='gpt')\n"
      "a = p.parse_args()\n");
  put(&r, "trainer/__init__.py", "");
  put(&r, "trainer/models/__init__.py", "");
  put(&r, "trainer/settings.py",
      "from dataclasses import dataclass, field\n"
      "@dataclass\nclass Loop:\n    steps: int = 10000\n"
      "    seq_len: int = 2048\n    total_steps: int = None\n"
      "@dataclass\nclass Optim:\n    name: str = 'adamw'\n"
      "    lr: float = 1e-3\n"
      "@dataclass\nclass Check:\n    steps: int = 5\n"
      "@dataclass\nclass Net:\n    dim: int = 64\n    n_layers: int = 2\n"
      "    n_heads: int = 4\n"
      "@dataclass\nclass Run:\n    model: Net = None\n"
      "    training: Loop = None\n    optimizer: Optim = None\n"
      "    validator: Check = None\n");
  put(&r, "trainer/models/gpt/__init__.py",
      "from trainer.settings import Net\n"
      "FLAVOURS = {\n    'small': Net(dim=512, n_layers=8, n_heads=8),\n"
      "    'large': Net(dim=2048, n_layers=24, n_heads=16),\n}\n"
      "def flavour(name):\n    return FLAVOURS[name]\n");
  put(&r, "trainer/models/gpt/runs.py",
      "from trainer.settings import Run, Loop, Optim, Check\n"
      "from trainer.models.gpt import flavour\n"
      "def make_optim(lr=1e-3, name='adamw'):\n"
      "    return Optim(name=name, lr=lr)\n"
      "def small_run():\n"
      "    return Run(model=flavour('small'),\n"
      "               training=Loop(steps=700, seq_len=1024),\n"
      "               optimizer=make_optim(lr=4e-4),\n"
      "               validator=Check(steps=90))\n"
      "def large_run():\n    cfg = small_run()\n"
      "    cfg.model = flavour('large')\n    cfg.training.steps = 3000\n"
      "    return cfg\n"
      "def broken_run():\n    return broken_run()\n"
      "def missing_run():\n    return Run(model=flavour('nope'),\n"
      "               training=Loop(steps=undefined_name))\n");
  run(&r, NULL, "python trainer/main.py --config small_run", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 700);
  ASSERT_STREQ(res.meta.f[SM_META_ITERATIONS].evidence,
               "trainer/models/gpt/runs.py:7");
  ASSERT_EQ(num(&res, SM_META_LR), 4e-4);
  ASSERT_STREQ(res.meta.f[SM_META_LR].evidence, "trainer/models/gpt/runs.py:8");
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 512);
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 1024);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 8);
  sm_extract_res_release(&res);
  /* A config built from another one and changed by attribute. */
  run(&r, NULL, "python trainer/main.py --config large_run", &res);
  ASSERT_EQ(num(&res, SM_META_ITERATIONS), 3000);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 2048);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  sm_extract_res_release(&res);
  /* Recursion ends; a missing flavour and an undefined name stay
   * unknown rather than taking a class default. */
  expect_unread(&r, "python trainer/main.py --config broken_run",
                SM_META_ITERATIONS);
  run(&r, NULL, "python trainer/main.py --config missing_run", &res);
  ASSERT(!known(&res, SM_META_ITERATIONS));
  ASSERT(!known(&res, SM_META_D_MODEL));
  sm_extract_res_release(&res);
  /* A name no registry defines, a name with odd characters, and a
   * registry function that wants an argument: nothing is read. */
  expect_unread(&r, "python trainer/main.py --config no_such_run",
                SM_META_ITERATIONS);
  expect_unread(&r, "python trainer/main.py --config small-run;x",
                SM_META_ITERATIONS);
  /* A model config that lists one block config per layer: the list's
   * length is the depth; a list of plain numbers is not. */
  put(&r, "trainer/models/gpt/blocks.py",
      "from dataclasses import dataclass, field\n"
      "@dataclass\nclass Block:\n    width: int = 1\n"
      "@dataclass\nclass Deep:\n    dim: int = 8\n    n_heads: int = 2\n"
      "    layers: list = None\n    widths: list = None\n"
      "@dataclass\nclass Job:\n    model: Deep = None\n"
      "def build(n, w):\n    out = []\n    for i in range(n):\n"
      "        out.append(Block(width=w))\n    return out\n"
      "def deep_run():\n"
      "    return Job(model=Deep(dim=320, n_heads=4, layers=build(5, 320),\n"
      "                          widths=[1, 2, 3]))\n");
  run(&r, NULL, "python trainer/main.py --config deep_run", &res);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 5);
  ASSERT_STREQ(res.meta.f[SM_META_N_LAYERS].evidence,
               "trainer/models/gpt/blocks.py:15");
  sm_extract_res_release(&res);
  /* A spec object naming a family and its variant names the model; a
   * variant that is not text does not. */
  put(&r, "trainer/models/gpt/specs.py",
      "from dataclasses import dataclass\n"
      "@dataclass\nclass Spec:\n    name: str = 'base'\n"
      "    flavor: str = None\n"
      "@dataclass\nclass Plan:\n    spec: Spec = None\n"
      "def spec_run():\n    return Plan(spec=Spec(name='wordnet', "
      "flavor='tiny'))\n"
      "def spec_num_run():\n    return Plan(spec=Spec(name='wordnet', "
      "flavor=3))\n");
  run(&r, NULL, "python trainer/main.py --config spec_run", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "wordnet-tiny");
  ASSERT_STREQ(res.meta.f[SM_META_MODEL_NAME].evidence,
               "trainer/models/gpt/specs.py:10");
  sm_extract_res_release(&res);
  run(&r, NULL, "python trainer/main.py --config spec_num_run", &res);
  ASSERT(strcmp(str(&res, SM_META_MODEL_NAME), "wordnet-3") != 0);
  sm_extract_res_release(&res);
  /* A micro-batch counted in tokens per rank beside the context length:
   * the per-device batch in sequences; a quotient that is not whole,
   * or a token count for a whole step, says nothing. */
  put(&r, "trainer/models/gpt/tokens.py",
      "from dataclasses import dataclass\n"
      "@dataclass\nclass Feed:\n    tokens_per_microbatch_per_rank: int = 0\n"
      "    context_length: int = 512\n    tokens_per_step: int = 0\n"
      "@dataclass\nclass Whole:\n    feed: Feed = None\n"
      "def tok_run():\n"
      "    return Whole(feed=Feed(tokens_per_microbatch_per_rank=4 * 1024,\n"
      "                           context_length=1024))\n"
      "def tok_odd_run():\n"
      "    return Whole(feed=Feed(tokens_per_microbatch_per_rank=1500,\n"
      "                           context_length=1024))\n"
      "def tok_step_run():\n"
      "    return Whole(feed=Feed(tokens_per_step=8192, "
      "context_length=1024))\n");
  run(&r, NULL, "python trainer/main.py --config tok_run", &res);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 4);
  ASSERT_STREQ(res.meta.f[SM_META_PER_DEVICE_BATCH_SIZE].evidence,
               "trainer/models/gpt/tokens.py:11");
  sm_extract_res_release(&res);
  expect_unread(&r, "python trainer/main.py --config tok_odd_run",
                SM_META_PER_DEVICE_BATCH_SIZE);
  expect_unread(&r, "python trainer/main.py --config tok_step_run",
                SM_META_PER_DEVICE_BATCH_SIZE);
  put(&r, "trainer/models/gpt/args.py",
      "from trainer.settings import Run, Loop\n"
      "def arg_run(n):\n    return Run(training=Loop(steps=n))\n");
  expect_unread(&r, "python trainer/main.py --config arg_run",
                SM_META_ITERATIONS);
  /* Wrong types (a registry function returning text or a number), two
   * functions calling each other, and a huge dict of flavours: the
   * evaluator's bounds end them, nothing is made up. */
  {
    size_t cap = 1u << 20, o = 0;
    char *big = malloc(cap);
    ASSERT(big != NULL);
    o += (size_t)snprintf(big + o, cap - o,
                          "from trainer.settings import Run, Loop, Net\n"
                          "def text_run():\n    return 'steps=5'\n"
                          "def num_run():\n    return 42\n"
                          "def ping_run():\n    return pong_run()\n"
                          "def pong_run():\n    return ping_run()\n"
                          "HUGE = {\n");
    for (int i = 0; i < 5000 && o + 64 < cap; i++)
      o += (size_t)snprintf(big + o, cap - o, "    'f%d': Net(dim=%d),\n", i,
                            i + 1);
    snprintf(big + o, cap - o,
             "}\ndef huge_run():\n"
             "    return Run(model=HUGE['f4999'], training=Loop(steps=11))\n");
    put(&r, "trainer/models/gpt/odd.py", big);
    free(big);
  }
  expect_unread(&r, "python trainer/main.py --config text_run",
                SM_META_ITERATIONS);
  expect_unread(&r, "python trainer/main.py --config num_run",
                SM_META_ITERATIONS);
  expect_unread(&r, "python trainer/main.py --config ping_run",
                SM_META_ITERATIONS);
  run(&r, NULL, "python trainer/main.py --config huge_run", &res);
  /* Either the bounded evaluator reaches the entry or it gives up; it
   * never reads a different flavour. */
  if (known(&res, SM_META_D_MODEL))
    ASSERT_EQ(num(&res, SM_META_D_MODEL), 5000);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* ==== Round 7: idioms of the field, each in several shapes ==== */

/* A published checkpoint named only by its Hub id, a local checkpoint
 * path or a YAML key has its model card's width and depth; a job that
 * states another width builds another model; a CNN has none. */
SM_TEST(extract_published_sizes) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport yaml\n"
      "from transformers import AutoModelForCausalLM, AutoConfig\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model_name_or_path')\n"
      "p.add_argument('--hidden_size', type=int, default=None)\n"
      "p.add_argument('--config', default=None)\n"
      "a = p.parse_args()\n"
      "model = AutoModelForCausalLM.from_pretrained(a.model_name_or_path)\n");
  run(&r, NULL,
      "torchrun --nproc_per_node 8 train.py --model_name_or_path "
      "meta-llama/Llama-2-13b-hf",
      &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "llama-2-13b");
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 5120);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 40);
  ASSERT(strncmp(res.meta.f[SM_META_D_MODEL].evidence,
                 "data/embed/published.tsv:", 25) == 0);
  sm_extract_res_release(&res);
  /* A local checkpoint directory of an instruction-tuned variant. */
  run(&r, NULL,
      "python train.py --model_name_or_path /ckpt/Qwen2.5-1.5B-Instruct", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 1536);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 28);
  sm_extract_res_release(&res);
  /* The job states a width the checkpoint does not have: not that
   * checkpoint, so no depth is added either. */
  run(&r, NULL,
      "python train.py --model_name_or_path gpt2-medium --hidden_size 512",
      &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 512);
  ASSERT(!known(&res, SM_META_N_LAYERS));
  sm_extract_res_release(&res);
  /* An encoder named in a YAML config. */
  put(&r, "cfg.yaml", "model:\n  name: openai/whisper-small\n");
  run(&r, NULL, "python train.py --config cfg.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 768);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 12);
  sm_extract_res_release(&res);
  /* A model the table does not know, and a CNN. */
  expect_unread(&r, "python train.py --model_name_or_path acme/house-lm-3b",
                SM_META_D_MODEL);
  expect_unread(&r, "python train.py --model_name_or_path microsoft/resnet-50",
                SM_META_N_LAYERS);
  repo_drop(&r);
}

/* Well-known datasets of other fields by their published names, inside
 * data paths and list folders: video clips, ratings, captions.  Labels
 * of clips suggest action recognition only by default: a pre-training
 * method on the same clips wins. */
SM_TEST(extract_video_and_rating_datasets) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "finetune.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--data_path', default='/path/to/list')\n"
      "p.add_argument('--nb_classes', type=int, default=400)\n"
      "a = p.parse_args()\n"
      "model = VideoClassifier(num_classes=a.nb_classes)\n"
      "crit = torch.nn.CrossEntropyLoss()\n");
  run(&r, NULL, "python finetune.py --data_path /mnt/lists/list_hmdb51/", &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "hmdb51");
  ASSERT_STREQ(str(&res, SM_META_TASK), "action_recognition");
  sm_extract_res_release(&res);
  expect_str(&r, NULL, "python finetune.py --data_path /data/sthv2/train.csv",
             SM_META_DATASET, "something-something-v2");
  put(&r, "pretrain_mae.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--data_root', default='')\n"
      "p.add_argument('--mask_ratio', type=float, default=0.9)\n"
      "a = p.parse_args()\n"
      "model = MaskedAutoencoderViT(mask_ratio=a.mask_ratio)\n"
      "loss = model.forward_loss(x, pred, mask)\n"
      "# masked autoencoder pre-training: reconstruct the masked patches\n");
  run(&r, NULL, "python pretrain_mae.py --data_root /data/kinetics700/videos",
      &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "kinetics-700");
  ASSERT(!known(&res, SM_META_TASK) ||
         strcmp(str(&res, SM_META_TASK), "action_recognition") != 0);
  sm_extract_res_release(&res);
  put(&r, "rec.py",
      "import argparse\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--dataset', default='ml-1m')\n"
      "a = p.parse_args()\n");
  expect_str(&r, NULL, "python rec.py", SM_META_DATASET, "movielens-1m");
  repo_drop(&r);
}

/* A total batch that the data code divides by the GPU count of the
 * config (yacs NUM_GPUS), as an assignment guarded by max(1, n) or as a
 * loader's keyword; the repository imported under a monorepo prefix
 * that ends in its own name. */
SM_TEST(extract_total_batch_over_config_gpus) {
  repo r;
  sm_extract_res res;
  char name[128];
  repo_make(&r);
  snprintf(name, sizeof(name), "%s", strrchr(r.dir, '/') + 1);
  for (char *q = name; *q; q++)
    if (*q == '-')
      *q = '_'; /* a package name: sm_repo_XXXXXX names the root */
  put(&r, "vidnet/config.py",
      "from yacs.config import CfgNode\n_C = CfgNode()\n"
      "_C.SOLVER = CfgNode()\n_C.SOLVER.BATCH_SIZE = 32\n"
      "_C.SOLVER.BASE_LR = 0.1\n_C.NUM_GPUS = 1\n"
      "def get_cfg():\n    return _C.clone()\n");
  put(&r, "vidnet/__init__.py", "");
  put(&r, "vidnet/loader.py",
      "import torch\n"
      "def make_loader(cfg, split):\n"
      "    if split == 'train':\n"
      "        batch_size = int(cfg.SOLVER.BATCH_SIZE / max(1, cfg.NUM_GPUS))\n"
      "    else:\n        batch_size = 1\n"
      "    return torch.utils.data.DataLoader(ds, batch_size=batch_size)\n");
  put(&r, "tools/train_impl.py",
      "import torch\nfrom vidnet.loader import make_loader\n"
      "def train(cfg):\n    loader = make_loader(cfg, 'train')\n");
  {
    char entry[1024];
    snprintf(entry, sizeof(entry),
             "import argparse\nimport torch\n"
             "from vidnet.config import get_cfg\n"
             "from corp.research.%s.tools.train_impl import train\n"
             "p = argparse.ArgumentParser()\n"
             "p.add_argument('--cfg', dest='cfg_file')\n"
             "p.add_argument('opts', nargs=argparse.REMAINDER)\n"
             "a = p.parse_args()\ncfg = get_cfg()\n"
             "cfg.merge_from_file(a.cfg_file)\ncfg.merge_from_list(a.opts)\n"
             "torch.multiprocessing.spawn(train, nprocs=cfg.NUM_GPUS, "
             "args=(cfg,))\n",
             name);
    put(&r, "tools/run.py", entry);
  }
  put(&r, "cfgs/k.yaml", "SOLVER:\n  BATCH_SIZE: 64\nNUM_GPUS: 8\n");
  run(&r, NULL, "python tools/run.py --cfg cfgs/k.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 64);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 8);
  sm_extract_res_release(&res);
  run(&r, NULL, "python tools/run.py --cfg cfgs/k.yaml NUM_GPUS 2", &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 2);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 32);
  sm_extract_res_release(&res);
  /* The keyword shape, without the guard, in an entry of its own. */
  put(&r, "flat.py",
      "import sys\nimport torch\nfrom vidnet.config import get_cfg\n"
      "cfg = get_cfg()\ncfg.merge_from_file(sys.argv[1])\n"
      "loader = torch.utils.data.DataLoader(ds, "
      "batch_size=int(cfg.SOLVER.BATCH_SIZE / cfg.NUM_GPUS), shuffle=True)\n"
      "torch.multiprocessing.spawn(train, nprocs=cfg.NUM_GPUS)\n");
  expect_num(&r, NULL, "python flat.py cfgs/k.yaml", SM_META_GLOBAL_BATCH_SIZE,
             64);
  /* Trailing overrides that the code's own parser takes: a top-level key
   * among dotted ones. */
  run(&r, NULL, "python flat.py cfgs/k.yaml SOLVER.BASE_LR 0.2 NUM_GPUS 4",
      &res);
  ASSERT_EQ(num(&res, SM_META_GPUS), 4);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 16);
  sm_extract_res_release(&res);
  /* A prefix that does not end in the repository's name resolves
   * nothing (no guess from a suffix). */
  put(&r, "tools/other.py",
      "import sys\nimport torch\n"
      "from corp.research.tools.train_impl import train\n"
      "from vidnet.config import get_cfg\ncfg = get_cfg()\n"
      "cfg.merge_from_file(sys.argv[1])\n"
      "torch.multiprocessing.spawn(train, nprocs=cfg.NUM_GPUS)\n");
  expect_num(&r, NULL, "python tools/other.py cfgs/k.yaml",
             SM_META_PER_DEVICE_BATCH_SIZE, 64);
  repo_drop(&r);
}

/* Mixed precision switched by the call's enabled= argument, the boolean
 * switch beside loss scaling, mmengine's AmpOptimWrapper, and the compute
 * dtype of a sharding wrapper. */
SM_TEST(extract_precision_switch_shapes) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "a.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--amp', action='store_true')\n"
      "a = p.parse_args()\n"
      "scaler = torch.cuda.amp.GradScaler(enabled=a.amp)\n"
      "with torch.autocast('cuda', enabled=a.amp):\n    pass\n");
  expect_str(&r, NULL, "python a.py --amp", SM_META_PRECISION, "fp16");
  expect_str(&r, NULL, "python a.py", SM_META_PRECISION, "fp32");
  /* A yacs switch, off by default and on in the YAML. */
  put(&r, "b/cfg.py",
      "from yacs.config import CfgNode\n_C = CfgNode()\n_C.TRAIN = "
      "CfgNode()\n_C.TRAIN.MIXED_PRECISION = False\ncfg = _C\n");
  put(&r, "b/train.py",
      "import argparse\nimport torch\nfrom cfg import cfg\n"
      "p = argparse.ArgumentParser()\np.add_argument('--cfg')\n"
      "cfg.merge_from_file(p.parse_args().cfg)\n"
      "scaler = torch.cuda.amp.GradScaler(enabled=cfg.TRAIN.MIXED_PRECISION)\n"
      "with torch.cuda.amp.autocast(enabled=cfg.TRAIN.MIXED_PRECISION):\n"
      "    loss = model(x)\n");
  put(&r, "b/on.yaml", "TRAIN:\n  MIXED_PRECISION: True\n");
  expect_str(&r, "b", "python train.py --cfg on.yaml", SM_META_PRECISION,
             "fp16");
  put(&r, "b/on.yaml", "TRAIN:\n  MIXED_PRECISION: False\n");
  expect_str(&r, "b", "python train.py --cfg on.yaml", SM_META_PRECISION,
             "fp32");
  /* mmengine optimizer wrappers: AMP, AMP in bf16, plain. */
  put(&r, "m/train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "a = p.parse_args()\ncfg = Config.fromfile(a.config)\n");
  put(&r, "m/amp.py",
      "optim_wrapper = dict(type='AmpOptimWrapper', loss_scale='dynamic',\n"
      "    optimizer=dict(type='AdamW', lr=1e-3))\n");
  put(&r, "m/ampbf.py",
      "optim_wrapper = dict(type='AmpOptimWrapper', dtype='bfloat16',\n"
      "    optimizer=dict(type='AdamW', lr=1e-3))\n");
  put(&r, "m/plain.py",
      "optim_wrapper = dict(type='OptimWrapper',\n"
      "    optimizer=dict(type='SGD', lr=0.1))\n");
  expect_str(&r, "m", "python train.py amp.py", SM_META_PRECISION, "fp16");
  expect_str(&r, "m", "python train.py ampbf.py", SM_META_PRECISION, "bf16");
  run(&r, "m", "python train.py plain.py", &res);
  ASSERT(!known(&res, SM_META_PRECISION) ||
         strcmp(str(&res, SM_META_PRECISION), "fp32") == 0);
  sm_extract_res_release(&res);
  /* FSDP mixed precision: the dtype the shards compute in. */
  put(&r, "f.py",
      "import torch\nfrom torch.distributed.fsdp import "
      "FullyShardedDataParallel as FSDP, MixedPrecision\n"
      "mp = MixedPrecision(param_dtype=torch.bfloat16, "
      "reduce_dtype=torch.float32)\nmodel = FSDP(model, mixed_precision=mp)\n");
  run(&r, NULL, "torchrun --nproc_per_node 8 f.py", &res);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "bf16");
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "fsdp");
  sm_extract_res_release(&res);
  /* A TOML config: the sharding dtype beside the parameters' dtype. */
  put(&r, "t.py",
      "import argparse\nimport tomllib\n"
      "p = argparse.ArgumentParser()\np.add_argument('--config')\n"
      "a = p.parse_args()\ncfg = tomllib.load(open(a.config, 'rb'))\n");
  put(&r, "t.toml",
      "[training]\ndtype = \"float32\"\nmixed_precision_param = "
      "\"bfloat16\"\nmixed_precision_reduce = \"float32\"\n");
  expect_str(&r, NULL, "python t.py --config t.toml", SM_META_PRECISION,
             "bf16");
  repo_drop(&r);
}

/* Launch scripts that parse their own options in a while loop over the
 * positional arguments (`while [[ "$1" != "" ]]`, `while [ $# -gt 0 ]`,
 * `until [ -z "$1" ]`, `while true ... break`), with `shift` and `case`;
 * a loop that never ends stops at its bound. */
SM_TEST(extract_shell_option_loops) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nfrom transformers import AutoModelForCausalLM\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model_name_or_path')\n"
      "p.add_argument('--data_path')\n"
      "a = p.parse_args()\n"
      "model = AutoModelForCausalLM.from_pretrained(a.model_name_or_path)\n");
  put(&r, "a.sh",
      "MODEL=\"none/placeholder\"\nDATA=\"path_to_data.json\"\n"
      "while [[ \"$1\" != \"\" ]]; do\n"
      "  case $1 in\n"
      "    -m | --model ) shift\n      MODEL=$1 ;;\n"
      "    -d | --data ) shift\n      DATA=$1 ;;\n"
      "    * ) echo \"unknown $1\"; exit 1 ;;\n"
      "  esac\n  shift\ndone\n"
      "python train.py --model_name_or_path $MODEL --data_path $DATA\n");
  run(&r, NULL, "bash a.sh -m /ckpt/Qwen-7B -d /data/dolly/dolly_15k.json",
      &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "qwen-7b");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "dolly-15k");
  sm_extract_res_release(&res);
  /* --key=value words, a count test, and `break` on the first word that
   * is no option. */
  put(&r, "b.sh",
      "MODEL=x\n"
      "while [ $# -gt 0 ]; do\n"
      "  case \"$1\" in\n"
      "    --model=*) MODEL=\"${1#*=}\" ;;\n"
      "    --) shift; break ;;\n"
      "    *) break ;;\n"
      "  esac\n  shift\ndone\n"
      "python train.py --model_name_or_path $MODEL \"$@\"\n");
  run(&r, NULL,
      "bash b.sh --model=meta-llama/Llama-2-7b-hf -- --data_path "
      "/d/alpaca_data.json",
      &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "llama-2-7b");
  ASSERT_STREQ(str(&res, SM_META_DATASET), "alpaca-52k");
  sm_extract_res_release(&res);
  put(&r, "c.sh",
      "until [ -z \"$1\" ]; do\n"
      "  if [ \"$1\" = \"--ckpt\" ]; then M=$2; shift; fi\n"
      "  shift\ndone\n"
      "python train.py --model_name_or_path $M\n");
  expect_str(&r, NULL, "bash c.sh --ckpt mistralai/Mistral-7B-v0.1",
             SM_META_MODEL_NAME, "mistral-7b");
  /* Endless loops end at the bound, and a loop over unknown words keeps
   * what it may set unknown. */
  put(&r, "d.sh",
      "N=1\nwhile true; do N=$((N+1)); done\n"
      "while [ -n \"$(hostname)\" ]; do M=gpt2; done\n"
      "python train.py --model_name_or_path ${M:-bert-base-uncased}\n");
  run(&r, NULL, "bash d.sh", &res);
  ASSERT(!known(&res, SM_META_MODEL_NAME) ||
         strcmp(str(&res, SM_META_MODEL_NAME), "gpt2-124m") != 0);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Families named in the ViT convention (<family>_<size>_patch<N>) take
 * ViT's sizes, Swin its own; a dataset named by --data_set beats the
 * folder its list files sit in. */
SM_TEST(extract_vit_convention_sizes) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "run.py",
      "import argparse\nimport timm\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='vit_base_patch16_224')\n"
      "p.add_argument('--data_set', default='Kinetics-400')\n"
      "p.add_argument('--data_path', default='/path/to/list')\n"
      "a = p.parse_args()\n"
      "model = timm.create_model(a.model)\n");
  run(&r, NULL, "python run.py --model beitlike_small_patch16_224", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 384);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 12);
  sm_extract_res_release(&res);
  run(&r, NULL, "python run.py --model swin_base_patch4_window7_224", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 128);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  sm_extract_res_release(&res);
  run(&r, NULL,
      "python run.py --data_set HMDB51 --data_path "
      "/lists/list_ucf101/train.csv",
      &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "hmdb51");
  sm_extract_res_release(&res);
  /* A format in the name option: the path names the data. */
  run(&r, NULL,
      "python run.py --data_set image_folder --data_path /data/imagenet-22k",
      &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "imagenet-22k");
  sm_extract_res_release(&res);
  run(&r, NULL, "python run.py --model resnet50", &res);
  ASSERT(!known(&res, SM_META_D_MODEL));
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* A plain ViT's sequence from its patch grid: the image classifier's
 * class token, a video model's temporal patches; a hierarchical model,
 * a video model of unknown tubelet and a latent generator stay null. */
SM_TEST(extract_vision_tokens) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "cls.py",
      "import argparse\nimport timm\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='vit_base_patch16_224')\n"
      "p.add_argument('--input_size', type=int, default=224)\n"
      "p.add_argument('--num_frames', type=int, default=1)\n"
      "p.add_argument('--tubelet_size', type=int, default=2)\n"
      "a = p.parse_args()\n"
      "model = timm.create_model(a.model, img_size=a.input_size)\n"
      "crit = torch.nn.CrossEntropyLoss()\n");
  expect_num(&r, NULL, "python cls.py", SM_META_SEQ_LEN, 197);
  run(&r, NULL, "python cls.py --model vit_large_patch14_224 --input_size 448",
      &res);
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 1025);
  sm_extract_res_release(&res);
  run(&r, NULL,
      "python cls.py --model vidmodel_small_patch16_224 --num_frames 16", &res);
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 1568);
  sm_extract_res_release(&res);
  expect_unread(&r, "python cls.py --model swin_tiny_patch4_window7_224",
                SM_META_SEQ_LEN);
  put(&r, "vid.py",
      "import argparse\nimport timm\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='vidmodel_base_patch16_224')\n"
      "p.add_argument('--input_size', type=int, default=224)\n"
      "p.add_argument('--num_frames', type=int, default=16)\n"
      "a = p.parse_args()\nmodel = timm.create_model(a.model)\n");
  expect_unread(&r, "python vid.py", SM_META_SEQ_LEN);
  put(&r, "gen.py",
      "import argparse\n"
      "from diffusers import DDPMScheduler\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='Tiny-DiT-B/2')\n"
      "p.add_argument('--image_size', type=int, default=256)\n"
      "a = p.parse_args()\n"
      "noise_scheduler = DDPMScheduler()\n"
      "model = build(a.model)\n# denoising diffusion in latent space\n");
  expect_unread(&r, "python gen.py", SM_META_SEQ_LEN);
  /* The size the code gives a latent generator (image / 8 beside the
   * VAE); its name written with the patch after a slash. */
  put(&r, "lat.py",
      "import argparse\nimport torch\n"
      "from diffusers import DDPMScheduler\n"
      "from nets import NETS\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--model', default='Tiny-DiT-B/2')\n"
      "p.add_argument('--image_size', type=int, default=256)\n"
      "a = p.parse_args()\n"
      "def main():\n"
      "    latent_size = a.image_size // 8\n"
      "    model = NETS[a.model](input_size=latent_size)\n"
      "    noise_scheduler = DDPMScheduler()\n"
      "main()\n");
  put(&r, "nets.py",
      "import torch\n"
      "class LDiT(torch.nn.Module):\n"
      "    def __init__(self, input_size=32, patch_size=2, depth=12):\n"
      "        super().__init__()\n"
      "def LDiT_B_2(**kw):\n    return LDiT(patch_size=2, depth=12, **kw)\n"
      "def LDiT_B_4(**kw):\n    return LDiT(patch_size=4, depth=12, **kw)\n"
      "NETS = {'Tiny-DiT-B/2': LDiT_B_2, 'Tiny-DiT-B/4': LDiT_B_4}\n");
  run(&r, NULL, "python lat.py --model Tiny-DiT-B/4 --image_size 512", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "tiny-dit-b-4");
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 256);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Config calls in branches over an option (if card == 'small': Config(
 * width=...) elif ...): only the branch the job's options take sets the
 * sizes, decided with the command; loralib's freezing of all but the
 * low-rank matrices is LoRA, only where its switch is on. */
SM_TEST(extract_config_calls_in_option_branches) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "ft.py",
      "import argparse\nimport torch\nimport loralib as lora\n"
      "from model import GPT2Config, GPT2LMModel\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--card', default='m', choices=['s', 'm', 'l'])\n"
      "p.add_argument('--lora_dim', type=int, default=0)\n"
      "args = p.parse_args()\n"
      "if args.card == 's':\n"
      "    config = GPT2Config(n_embd=768, n_layer=12, n_head=12)\n"
      "elif args.card == 'm':\n"
      "    config = GPT2Config(n_embd=1024, n_layer=24, n_head=16)\n"
      "else:\n"
      "    config = GPT2Config(n_embd=1280, n_layer=36, n_head=20)\n"
      "net = GPT2LMModel(config)\n"
      "if args.lora_dim > 0:\n"
      "    lora.mark_only_lora_as_trainable(net)\n");
  put(&r, "model.py",
      "import torch\nclass GPT2Config:\n    pass\n"
      "class GPT2LMModel(torch.nn.Module):\n    pass\n");
  run(&r, NULL, "python ft.py --card l --lora_dim 4", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 1280);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 36);
  ASSERT_STREQ(str(&res, SM_META_TASK), "llm_finetuning_lora");
  sm_extract_res_release(&res);
  run(&r, NULL, "python ft.py", &res);
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 1024);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  ASSERT(!known(&res, SM_META_TASK) ||
         strcmp(str(&res, SM_META_TASK), "llm_finetuning_lora") != 0);
  sm_extract_res_release(&res);
  expect_num(&r, NULL, "python ft.py --card s", SM_META_D_MODEL, 768);
  /* A branch on something the job does not fix keeps what it sets (the
   * later write, as before). */
  put(&r, "env.py",
      "import os\nfrom model import GPT2Config\n"
      "if os.environ.get('SIZE') == 'big':\n"
      "    config = GPT2Config(n_embd=2048, n_layer=24)\n"
      "else:\n"
      "    config = GPT2Config(n_embd=512, n_layer=8)\n");
  run(&r, NULL, "python env.py", &res);
  ASSERT(!known(&res, SM_META_D_MODEL) || num(&res, SM_META_D_MODEL) == 512 ||
         num(&res, SM_META_D_MODEL) == 2048);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* A value picked by a conditional expression over options (nested, on an
 * attribute or a local) is decided with the job's values; a condition
 * the job does not fix leaves it unknown. */
SM_TEST(extract_conditional_expressions_over_options) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "a.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--size', default='small', choices=['small', 'large'])\n"
      "p.add_argument('--lr', type=float, default=None)\n"
      "a = p.parse_args()\n"
      "lr = a.lr if a.lr is not None else (3e-4 if a.size == 'small' else "
      "1e-4)\n"
      "opt = torch.optim.AdamW(model.parameters(), lr=lr)\n");
  run(&r, NULL, "python a.py", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 3e-4, 1e-12);
  sm_extract_res_release(&res);
  run(&r, NULL, "python a.py --size large", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 1e-4, 1e-12);
  sm_extract_res_release(&res);
  run(&r, NULL, "python a.py --size large --lr 0.02", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.02, 1e-12);
  sm_extract_res_release(&res);
  /* click options read through an attribute dictionary, assigned to an
   * attribute of a settings object. */
  put(&r, "b.py",
      "import click\nimport torch\nclass Box(dict):\n    pass\n"
      "@click.command()\n"
      "@click.option('--arch', type=click.Choice(['v1', 'v2']), default='v1')\n"
      "@click.option('--glr', type=float, default=None)\n"
      "def main(**kwargs):\n"
      "    opts = Box(kwargs)\n    c = Box()\n"
      "    c.g_opt.lr = (0.01 if opts.arch == 'v1' else 0.005) if opts.glr is "
      "None else opts.glr\n"
      "    torch.optim.Adam(params, lr=c.g_opt.lr)\n"
      "if __name__ == '__main__':\n    main()\n");
  run(&r, NULL, "python b.py --arch v2", &res);
  ASSERT_NEAR(num(&res, SM_META_LR), 0.005, 1e-12);
  sm_extract_res_release(&res);
  put(&r, "c.py",
      "import os\nimport torch\n"
      "lr = 0.1 if os.environ.get('FAST') else 0.01\n"
      "opt = torch.optim.SGD(model.parameters(), lr=lr)\n");
  expect_unread(&r, "python c.py", SM_META_LR);
  repo_drop(&r);
}

/* Datasets named by the class or loader the job calls: torchvision
 * classes (by module or by their published name), a datamodule of a
 * known dataset, TFDS builders, load_dataset(path=...), and a YAML
 * dataset section with a Hub path; layouts (ImageFolder) name nothing. */
SM_TEST(extract_dataset_loader_idioms) {
  repo r;
  repo_make(&r);
  put(&r, "a.py",
      "import torch\nimport torchvision\n"
      "train = torchvision.datasets.STL10(root='./d', split='train')\n");
  expect_str(&r, NULL, "python a.py", SM_META_DATASET, "stl10");
  put(&r, "b.py",
      "import torch\nfrom torchvision.datasets import CIFAR100, ImageFolder\n"
      "ds = CIFAR100('./data', train=True, download=True)\n");
  expect_str(&r, NULL, "python b.py", SM_META_DATASET, "cifar-100");
  put(&r, "c.py",
      "import torch\nfrom pl_bolts.datamodules import MNISTDataModule\n"
      "dm = MNISTDataModule(data_dir='.')\n");
  expect_str(&r, NULL, "python c.py", SM_META_DATASET, "mnist");
  put(&r, "d.py",
      "import tensorflow_datasets as tfds\n"
      "ds = tfds.load('imagenet2012', split='train')\n");
  expect_str(&r, NULL, "python d.py", SM_META_DATASET, "imagenet-1k");
  put(&r, "e.py",
      "import datasets\nimport torch\n"
      "ds = datasets.load_dataset(path='HuggingFaceFW/fineweb-edu', "
      "name='sample-10BT')\n");
  expect_str(&r, NULL, "python e.py", SM_META_DATASET, "fineweb-edu");
  put(&r, "f.py",
      "import argparse\nimport yaml\nimport torch\n"
      "p = argparse.ArgumentParser()\np.add_argument('--config')\n"
      "cfg = yaml.safe_load(open(p.parse_args().config))\n");
  put(&r, "f.yaml", "dataset:\n  path: allenai/c4\n  name: en\n");
  expect_str(&r, NULL, "python f.py --config f.yaml", SM_META_DATASET, "c4");
  put(&r, "g.py",
      "import torch\nfrom torchvision.datasets import ImageFolder\n"
      "ds = ImageFolder('/mnt/x/train')\n");
  expect_unread(&r, "python g.py", SM_META_DATASET);
  repo_drop(&r);
}

/* A sharded data-parallel degree turns FSDP on: -1 (every rank left) or
 * a degree above 1, in TOML or YAML; a degree of 1 does not. */
SM_TEST(extract_shard_degree_fsdp) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "t.py",
      "import argparse\nimport tomllib\nimport torch\n"
      "p = argparse.ArgumentParser()\np.add_argument('--config')\n"
      "cfg = tomllib.load(open(p.parse_args().config, 'rb'))\n"
      "torch.distributed.init_process_group('nccl')\n");
  put(&r, "a.toml",
      "[parallelism]\ndata_parallel_replicate_degree = 1\n"
      "data_parallel_shard_degree = -1\ntensor_parallel_degree = 1\n");
  put(&r, "b.toml",
      "[parallelism]\ndata_parallel_shard_degree = 1\n"
      "tensor_parallel_degree = 1\n");
  put(&r, "c.yaml", "parallel:\n  dp_shard: 4\n  dp_replicate: 2\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node 8 t.py --config a.toml",
             SM_META_PARALLELISM, "fsdp");
  run(&r, NULL, "torchrun --nproc_per_node 8 t.py --config b.toml", &res);
  ASSERT(strcmp(str(&res, SM_META_PARALLELISM), "fsdp") != 0);
  sm_extract_res_release(&res);
  expect_str(&r, NULL, "torchrun --nproc_per_node 8 t.py --config c.yaml",
             SM_META_PARALLELISM, "fsdp");
  repo_drop(&r);
}

/* A precision value that names no dtype (a policy name) does not hide
 * the dtype another key of the job gives; one that names a dtype still
 * decides. */
SM_TEST(extract_precision_policy_names) {
  repo r;
  repo_make(&r);
  put(&r, "j.py",
      "import argparse\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--precision', default='full')\n"
      "p.add_argument('--dtype', default='float32')\n"
      "a = p.parse_args()\n");
  expect_str(&r, NULL, "python j.py --precision full_mixed --dtype bfloat16",
             SM_META_PRECISION, "bf16");
  expect_str(&r, NULL, "python j.py --precision fp16", SM_META_PRECISION,
             "fp16");
  repo_drop(&r);
}

/* LAVIS-style configs: datasets as the keys of a section (a known name
 * first; splits are no names; a mixture of many names none), the text
 * length as max_txt_len, and a variant word (pretrain) that names no
 * model beside the architecture. */
SM_TEST(extract_dataset_sections_by_name) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\nfrom omegaconf import OmegaConf\n"
      "p = argparse.ArgumentParser()\np.add_argument('--cfg-path')\n"
      "cfg = OmegaConf.load(p.parse_args().cfg_path)\n"
      "torch.distributed.init_process_group('nccl')\n");
  put(&r, "a.yaml",
      "model:\n  arch: blip2_opt\n  model_type: pretrain\n"
      "  max_txt_len: 48\n"
      "datasets:\n  my_captions:\n    batch_size: 32\n"
      "  cc3m:\n    batch_size: 32\n"
      "run:\n  max_epoch: 4\n");
  run(&r, NULL, "torchrun --nproc_per_node 4 train.py --cfg-path a.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "cc3m");
  ASSERT_EQ(num(&res, SM_META_SEQ_LEN), 48);
  ASSERT(strcmp(str(&res, SM_META_MODEL_NAME), "pretrain") != 0);
  sm_extract_res_release(&res);
  put(&r, "b.yaml",
      "datasets:\n  house_pairs:\n    vis_processor:\n      train:\n"
      "        name: blip_image_train\n");
  expect_str(&r, NULL, "torchrun --nproc_per_node 4 train.py --cfg-path b.yaml",
             SM_META_DATASET, "house-pairs");
  put(&r, "c.yaml",
      "datasets:\n  set_a:\n    batch_size: 2\n  set_b:\n    batch_size: 2\n"
      "  set_c:\n    batch_size: 2\n  set_d:\n    batch_size: 2\n"
      "  set_e:\n    batch_size: 2\n");
  expect_unread(&r, "torchrun --nproc_per_node 4 train.py --cfg-path c.yaml",
                SM_META_DATASET);
  repo_drop(&r);
}

/* mmengine-style backbones name a variant of their type (type=
 * 'SwinTransformer', arch='tiny'; type='MAEViT', arch='b'): the model is
 * the family with its variant, and its published sizes follow. */
SM_TEST(extract_backbone_type_and_arch) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "tools/train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "cfg = Config.fromfile(p.parse_args().config)\n");
  put(&r, "configs/swin.py",
      "model = dict(type='ImageClassifier',\n"
      "    backbone=dict(type='SwinTransformer', arch='small', img_size=224),\n"
      "    head=dict(type='LinearClsHead', num_classes=1000))\n");
  put(&r, "configs/mae.py",
      "model = dict(type='MAE',\n"
      "    backbone=dict(type='MAEViT', arch='l', patch_size=16),\n"
      "    neck=dict(type='MAEPretrainDecoder'))\n");
  put(&r, "configs/res.py",
      "model = dict(type='ImageClassifier',\n"
      "    backbone=dict(type='ResNet', depth=50),\n"
      "    head=dict(type='LinearClsHead', num_classes=1000))\n");
  run(&r, NULL, "python tools/train.py configs/swin.py", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "swin-small");
  ASSERT_EQ(num(&res, SM_META_D_MODEL), 96);
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  sm_extract_res_release(&res);
  run(&r, NULL, "python tools/train.py configs/mae.py", &res);
  ASSERT_STREQ(str(&res, SM_META_MODEL_NAME), "maevit-l");
  ASSERT_EQ(num(&res, SM_META_N_LAYERS), 24);
  sm_extract_res_release(&res);
  run(&r, NULL, "python tools/train.py configs/res.py", &res);
  ASSERT(!known(&res, SM_META_D_MODEL));
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* Lightning Fabric built in the script: its keywords are settings as a
 * Trainer's are (devices, strategy, precision). */
SM_TEST(extract_fabric_settings) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "pre.py",
      "import argparse\nimport lightning as L\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--devices', type=int, default=4)\n"
      "a = p.parse_args()\n"
      "fabric = L.Fabric(devices=a.devices, strategy='fsdp', "
      "precision='bf16-mixed')\nfabric.launch()\n");
  run(&r, NULL, "python pre.py", &res);
  ASSERT_STREQ(str(&res, SM_META_PARALLELISM), "fsdp");
  ASSERT_EQ(num(&res, SM_META_GPUS), 4);
  ASSERT_STREQ(str(&res, SM_META_PRECISION), "bf16");
  sm_extract_res_release(&res);
  repo_drop(&r);
}

/* A bare family name beside a model-zoo config named after that family
 * and its variant: the config's name says which member is trained; a
 * name with a size stays, and a config named otherwise changes nothing. */
SM_TEST(extract_family_variant_from_config_name) {
  repo r;
  repo_make(&r);
  put(&r, "tools/run.py",
      "import argparse\nimport torch\nimport yaml\n"
      "p = argparse.ArgumentParser()\np.add_argument('--cfg')\n"
      "cfg = yaml.safe_load(open(p.parse_args().cfg))\n"
      "torch.multiprocessing.spawn(run, nprocs=8)\n");
  put(&r, "configs/VIDNET_4x16_R50.yaml", "MODEL:\n  ARCH: vidnet\n");
  put(&r, "configs/VIDNET_8x8_R50.yaml", "MODEL:\n  ARCH: vidnet\n");
  put(&r, "configs/base_run.yaml", "MODEL:\n  ARCH: vidnet\n");
  put(&r, "configs/VIDNET2_R101.yaml", "MODEL:\n  ARCH: vidnet2\n");
  expect_str(&r, NULL, "python tools/run.py --cfg configs/VIDNET_4x16_R50.yaml",
             SM_META_MODEL_NAME, "vidnet-4x16-r50");
  expect_str(&r, NULL, "python tools/run.py --cfg configs/VIDNET_8x8_R50.yaml",
             SM_META_MODEL_NAME, "vidnet-8x8-r50");
  expect_str(&r, NULL, "python tools/run.py --cfg configs/base_run.yaml",
             SM_META_MODEL_NAME, "vidnet");
  expect_str(&r, NULL, "python tools/run.py --cfg configs/VIDNET2_R101.yaml",
             SM_META_MODEL_NAME, "vidnet2");
  repo_drop(&r);
}

/* ==== Task families of other modalities ==== */

/* Graph learning: the task is what the model predicts (whole graphs,
 * nodes, links); mean absolute error is a regression loss, not a
 * masked autoencoder. */
SM_TEST(extract_graph_tasks) {
  repo r;
  repo_make(&r);
  /* PyG, a molecule regression benchmark with an MAE criterion. */
  put(&r, "mol/train_pyg.py",
      "import argparse\nimport torch\n"
      "from torch_geometric.loader import DataLoader\n"
      "from torch_geometric.nn import GINConv, global_add_pool\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--conv', default='gin')\n"
      "p.add_argument('--epochs', type=int, default=60)\n"
      "p.add_argument('--batch_size', type=int, default=128)\n"
      "a = p.parse_args()\n"
      "class Net(torch.nn.Module):\n"
      "    def forward(self, x, edge_index, batch):\n"
      "        return global_add_pool(x, batch)\n"
      "model = Net()\nmae = torch.nn.L1Loss()\n"
      "metric = {'mae': 0}\n"
      "opt = torch.optim.Adam(model.parameters(), lr=0.0005)\n");
  expect_str(&r, "mol", "python train_pyg.py", SM_META_TASK,
             "graph_property_prediction");
  expect_str(&r, "mol", "python train_pyg.py", SM_META_DOMAIN, "graph");
  /* DGL on a node benchmark. */
  put(&r, "node.py",
      "import dgl\nimport torch\n"
      "from ogb.nodeproppred import DglNodePropPredDataset\n"
      "ds = DglNodePropPredDataset(name='ogbn-arxiv')\n"
      "class SAGE(torch.nn.Module):\n    pass\n"
      "model = SAGE()\n"
      "opt = torch.optim.Adam(model.parameters(), lr=0.003)\n"
      "for epoch in range(500):\n    pass\n");
  expect_str(&r, NULL, "python node.py", SM_META_TASK, "node_classification");
  /* Message passing with nothing that says what is predicted: the
   * domain, no task. */
  put(&r, "mp.py",
      "import torch\nfrom torch_geometric.nn import MessagePassing\n"
      "class Layer(MessagePassing):\n"
      "    def forward(self, x, edge_index):\n"
      "        return self.propagate(edge_index, x=x)\n"
      "model = Layer()\n");
  expect_str(&r, NULL, "python mp.py", SM_META_DOMAIN, "graph");
  expect_unread(&r, "python mp.py", SM_META_TASK);
  repo_drop(&r);
}

/* Time series: forecasting horizons, a task switch that picks
 * classification, and a run label beside the model option. */
SM_TEST(extract_series_tasks_and_run_labels) {
  repo r;
  repo_make(&r);
  put(&r, "main.py",
      "import argparse\nimport torch\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--task_name', type=str, default='long_term_forecast')\n"
      "p.add_argument('--model_id', type=str, default='run')\n"
      "p.add_argument('--model', type=str, default='Crossformer')\n"
      "p.add_argument('--seq_len', type=int, default=336)\n"
      "p.add_argument('--pred_len', type=int, default=720)\n"
      "p.add_argument('--train_epochs', type=int, default=10)\n"
      "args = p.parse_args()\n");
  expect_str(&r, NULL, "python main.py --model_id weather_336_720",
             SM_META_TASK, "time_series_forecasting");
  expect_str(&r, NULL, "python main.py --model_id weather_336_720",
             SM_META_DOMAIN, "timeseries");
  expect_str(&r, NULL, "python main.py --model_id weather_336_720",
             SM_META_MODEL_NAME, "crossformer");
  expect_str(&r, NULL,
             "python main.py --task_name classification --model_id EEG "
             "--model Informer",
             SM_META_TASK, "time_series_classification");
  expect_str(&r, NULL,
             "python main.py --task_name classification --model_id EEG "
             "--model Informer",
             SM_META_MODEL_NAME, "informer");
  /* A Hub id under model_id is still the model. */
  put(&r, "hub.py",
      "import argparse\nfrom transformers import AutoModelForCausalLM\n"
      "p = argparse.ArgumentParser()\np.add_argument('--model_id')\n"
      "a = p.parse_args()\n"
      "m = AutoModelForCausalLM.from_pretrained(a.model_id)\n");
  expect_str(&r, NULL, "python hub.py --model_id acme/widget-7b",
             SM_META_MODEL_NAME, "widget-7b");
  /* A YAML forecasting config of another layout. */
  put(&r, "cfg/elec.yaml",
      "model:\n  name: nbeats\ndata:\n  horizon: 24\n"
      "  lookback: 168\ntrainer:\n  max_epochs: 30\n"
      "task: forecasting\n");
  put(&r, "fit.py",
      "import argparse\nimport yaml\n"
      "p = argparse.ArgumentParser()\np.add_argument('--config')\n"
      "a = p.parse_args()\ncfg = yaml.safe_load(open(a.config))\n");
  expect_str(&r, NULL, "python fit.py --config cfg/elec.yaml", SM_META_TASK,
             "time_series_forecasting");
  repo_drop(&r);
}

/* Super-resolution and audio codecs: methods of their own that are
 * trained against discriminators; a substring of a network's name is
 * not another method's name. */
SM_TEST(extract_restoration_and_codec_tasks) {
  repo r;
  repo_make(&r);
  /* An option file in the BasicSR layout: a generator RRDB network, a
   * discriminator, a training set named per split. */
  put(&r, "opts/train_x2.yml",
      "name: exp_x2_gan\nmodel_type: SRGANModel\nscale: 2\nnum_gpu: 1\n"
      "datasets:\n  train:\n    name: Flickr2K\n"
      "    type: PairedImageDataset\n    batch_size_per_gpu: 16\n"
      "network_g:\n  type: RRDBNet\n  num_block: 23\n"
      "network_d:\n  type: VGGStyleDiscriminator\n"
      "train:\n  optim_g:\n    lr: !!float 1e-4\n  total_iter: 400000\n");
  put(&r, "sr/train.py",
      "import argparse\nimport yaml\nimport torch\n"
      "p = argparse.ArgumentParser()\np.add_argument('-opt')\n"
      "a = p.parse_args()\nopt = yaml.safe_load(open(a.opt))\n");
  expect_str(&r, NULL, "python sr/train.py -opt opts/train_x2.yml",
             SM_META_TASK, "image_super_resolution");
  expect_str(&r, NULL, "python sr/train.py -opt opts/train_x2.yml",
             SM_META_DATASET, "flickr2k");
  expect_num(&r, NULL, "python sr/train.py -opt opts/train_x2.yml",
             SM_META_ITERATIONS, 400000);
  /* A plain script of another super-resolution network. */
  put(&r, "edsr.py",
      "import torch\nclass EDSR(torch.nn.Module):\n    pass\n"
      "model = EDSR()\n# single image super_resolution, DIV2K x4\n"
      "data = '/data/DIV2K/train_HR'\n");
  expect_str(&r, NULL, "python edsr.py", SM_META_TASK,
             "image_super_resolution");
  /* A text detector in an mmengine-style config is still one. */
  put(&r, "det/dbnet_r18.py",
      "model = dict(type='DBNet', backbone=dict(type='ResNet', depth=18))\n"
      "train_cfg = dict(max_epochs=1200)\n");
  put(&r, "det/train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "a = p.parse_args()\ncfg = Config.fromfile(a.config)\n");
  expect_str(&r, NULL, "python det/train.py det/dbnet_r18.py", SM_META_TASK,
             "text_detection");
  /* An audio codec: argbind-style flat keys in YAML with an $include,
   * residual quantiser codebooks, a waveform discriminator. */
  put(&r, "conf/common.yml",
      "Codec.sample_rate: 24000\nCodec.n_codebooks: 12\n"
      "Codec.codebook_size: 1024\nCodec.codebook_dim: 8\n"
      "Discriminator.periods: [2, 3, 5]\nAdam.lr: 0.0003\n"
      "train/WavDataset.duration: 2.0\nval/WavDataset.duration: 10.0\n"
      "num_iters: 120000\nbatch_size: 16\n");
  put(&r, "conf/exp.yml", "$include:\n  - conf/common.yml\nbatch_size: 8\n");
  put(&r, "train_codec.py",
      "import argbind\nimport torch\nimport torchaudio\n"
      "class Codec(torch.nn.Module):\n    pass\n"
      "class Discriminator(torch.nn.Module):\n    pass\n"
      "def train(args, num_iters: int = 1000, batch_size: int = 4):\n"
      "    audio = torchaudio.load('speech.wav')\n"
      "    g = Codec()\n    d = Discriminator()\n"
      "if __name__ == '__main__':\n"
      "    args = argbind.parse_args()\n    train(args)\n");
  expect_str(&r, NULL, "python train_codec.py --args.load conf/exp.yml",
             SM_META_TASK, "neural_audio_codec");
  expect_str(&r, NULL, "python train_codec.py --args.load conf/exp.yml",
             SM_META_DOMAIN, "speech");
  expect_num(&r, NULL, "python train_codec.py --args.load conf/exp.yml",
             SM_META_PER_DEVICE_BATCH_SIZE, 8);
  /* Seconds of audio per example are not the job's length. */
  expect_num(&r, NULL, "python train_codec.py --args.load conf/exp.yml",
             SM_META_ITERATIONS, 120000);
  /* An image tokenizer with a codebook and a discriminator is not. */
  put(&r, "vqgan.py",
      "import torch\nimport torchvision\n"
      "class VQGAN(torch.nn.Module):\n    pass\n"
      "class PatchDiscriminator(torch.nn.Module):\n    pass\n"
      "cfg = {'codebook_size': 16384, 'image_size': 256}\n"
      "g = VQGAN()\nd = PatchDiscriminator()\n"
      "data = torchvision.datasets.ImageFolder('/data/ffhq')\n");
  {
    sm_extract_res res;
    run(&r, NULL, "python vqgan.py", &res);
    ASSERT(strcmp(str(&res, SM_META_TASK), "neural_audio_codec") != 0);
    sm_extract_res_release(&res);
  }
  /* An include cycle ends in a warning and the files read so far. */
  put(&r, "conf/a.yml", "$include:\n  - conf/b.yml\nbatch_size: 3\n");
  put(&r, "conf/b.yml", "$include:\n  - conf/a.yml\nnum_iters: 5\n");
  expect_num(&r, NULL, "python train_codec.py --args.load conf/a.yml",
             SM_META_PER_DEVICE_BATCH_SIZE, 3);
  repo_drop(&r);
}

/* Joint-embedding self-supervision names itself by its views and
 * encoders; a linear probe on its features is classification. */
SM_TEST(extract_joint_embedding_ssl) {
  repo r;
  repo_make(&r);
  put(&r, "aug.py",
      "class TwoCropsTransform:\n"
      "    def __init__(self, t):\n        self.t = t\n"
      "    def __call__(self, x):\n        return [self.t(x), self.t(x)]\n");
  put(&r, "pretrain.py",
      "import argparse\nimport torch\nimport torchvision.models as models\n"
      "import torchvision.datasets as datasets\nfrom aug import "
      "TwoCropsTransform\n"
      "p = argparse.ArgumentParser()\np.add_argument('data')\n"
      "p.add_argument('-a', '--arch', default='resnet50')\n"
      "p.add_argument('--epochs', type=int, default=200)\n"
      "p.add_argument('--multi_crop', type=int, default=0)\n"
      "a = p.parse_args()\n"
      "ds = datasets.ImageFolder(a.data, TwoCropsTransform(None))\n"
      "model = models.__dict__[a.arch]()\n"
      "crit = torch.nn.CosineSimilarity(dim=1)\n");
  expect_str(&r, NULL, "python pretrain.py /data/imagenet", SM_META_TASK,
             "self_supervised_image_pretraining");
  /* A target encoder updated by momentum, masks from a collator. */
  put(&r, "jointemb.py",
      "import copy\nimport torch\n"
      "class ViT(torch.nn.Module):\n    pass\n"
      "encoder = ViT()\ntarget_encoder = copy.deepcopy(encoder)\n"
      "data = '/data/imagenet-1k/train'\n"
      "for p in target_encoder.parameters():\n"
      "    p.requires_grad = False\n");
  expect_str(&r, NULL, "python jointemb.py", SM_META_TASK,
             "self_supervised_image_pretraining");
  /* The linear probe. */
  put(&r, "probe.py",
      "import argparse\nimport torch\nimport torchvision.models as models\n"
      "import torchvision.datasets as datasets\n"
      "p = argparse.ArgumentParser()\np.add_argument('data')\n"
      "p.add_argument('--pretrained', default='')\n"
      "a = p.parse_args()\nmodel = models.resnet50()\n"
      "model.fc = torch.nn.Linear(2048, 1000)\n"
      "ds = datasets.ImageFolder(a.data)\n"
      "crit = torch.nn.CrossEntropyLoss()\n");
  expect_str(&r, NULL, "python probe.py /data/imagenet", SM_META_TASK,
             "image_classification");
  repo_drop(&r);
}

/* The model key of the critic a generator trains against is not the
 * job's model. */
SM_TEST(extract_auxiliary_network_keys) {
  repo r;
  repo_make(&r);
  put(&r, "opts/gan.yml",
      "network_g:\n  type: UNetGenerator\n"
      "network_d:\n  arch: patchgan70\n");
  put(&r, "train.py",
      "import argparse\nimport yaml\n"
      "p = argparse.ArgumentParser()\np.add_argument('--opt')\n"
      "a = p.parse_args()\nopt = yaml.safe_load(open(a.opt))\n");
  {
    sm_extract_res res;
    run(&r, NULL, "python train.py --opt opts/gan.yml", &res);
    ASSERT(strcmp(str(&res, SM_META_MODEL_NAME), "patchgan70") != 0);
    sm_extract_res_release(&res);
  }
  put(&r, "gan.py",
      "class Box(dict):\n    pass\n"
      "args = Box()\nargs.G_kwargs = Box(class_name='nets.Generator')\n"
      "args.D_kwargs = Box(class_name='nets.Discriminator')\n"
      "args.D_kwargs.architecture = 'resnet'\n");
  expect_unread(&r, "python gan.py", SM_META_MODEL_NAME);
  repo_drop(&r);
}

/* A trainer installed from another package (TOOL-train, TOOL_finetune):
 * nothing of it is in the repository, but its options are the job's. */
SM_TEST(extract_external_trainer_options) {
  repo r;
  repo_make(&r);
  put(&r, "recipes/run.sh",
      "#!/bin/bash\n# a comment\n"
      "CUDA_VISIBLE_DEVICES=0,1 seqkit-train data-bin/wiki \\\n"
      "  --arch big_encoder --lr 0.0007 --batch-size 48 \\\n"
      "  --max-update 90000 --fp16 --save-dir /ckpt/x\n");
  expect_num(&r, NULL, "bash recipes/run.sh", SM_META_ITERATIONS, 90000);
  expect_num(&r, NULL, "bash recipes/run.sh", SM_META_PER_DEVICE_BATCH_SIZE,
             48);
  expect_str(&r, NULL, "bash recipes/run.sh", SM_META_PRECISION, "fp16");
  /* Another spelling, given directly, with key=value options. */
  expect_num(&r, NULL, "vision_finetune --epochs=12 --learning_rate=0.01",
             SM_META_ITERATIONS, 12);
  /* A word that only contains "train" is no trainer; an evaluation tool
   * of the same kind is not the launch. */
  expect_unread(&r, "constrained --lr 0.1", SM_META_LR);
  expect_unread(&r, "seqkit-eval --lr 0.1", SM_META_LR);
  repo_drop(&r);
}

/* Counts of other components (sampling steps, diffusion steps) are not
 * the job's length; a Hydra data group names its training set. */
SM_TEST(extract_component_counts_and_data_groups) {
  repo r;
  repo_make(&r);
  put(&r, "conf/config.yaml",
      "defaults:\n  - data: webtext\n  - _self_\n"
      "trainer:\n  max_steps: 250000\n"
      "sampling:\n  steps: 128\n"
      "loader:\n  batch_size: 32\n");
  put(&r, "conf/data/webtext.yaml",
      "train: webtext-train\nvalid: webtext-valid\n");
  put(&r, "conf/data/books.yaml", "train: bookcorpus\nvalid: bookcorpus\n");
  put(&r, "run.py",
      "import hydra\n"
      "@hydra.main(config_path='conf', config_name='config')\n"
      "def main(cfg):\n    pass\n"
      "if __name__ == '__main__':\n    main()\n");
  expect_num(&r, NULL, "python run.py sampling.steps=1000", SM_META_ITERATIONS,
             250000);
  expect_str(&r, NULL, "python run.py data=books", SM_META_DATASET,
             "bookcorpus");
  /* The same in a YAML with diffusion timesteps beside the step count. */
  put(&r, "b/cfg.yaml",
      "diffusion:\n  steps: 1000\ntrain:\n  iterations: 40000\n");
  put(&r, "b/train.py",
      "import sys\nimport yaml\ncfg = yaml.safe_load(open(sys.argv[1]))\n");
  expect_num(&r, "b", "python train.py cfg.yaml", SM_META_ITERATIONS, 40000);
  /* The training count under the same key name as the rejected one, in
   * either order: train.steps survives sampling.steps / diffusion.steps. */
  put(&r, "c/a.yaml", "train:\n  steps: 40000\nsampling:\n  steps: 128\n");
  put(&r, "c/b.yaml", "diffusion:\n  steps: 1000\ntrain:\n  steps: 7000\n");
  put(&r, "c/train.py",
      "import sys\nimport yaml\ncfg = yaml.safe_load(open(sys.argv[1]))\n");
  expect_num(&r, "c", "python train.py a.yaml", SM_META_ITERATIONS, 40000);
  expect_num(&r, "c", "python train.py b.yaml", SM_META_ITERATIONS, 7000);
  repo_drop(&r);
}

/* A debugging branch (if args.debug:, if cfg.fast_dev_run.enabled:)
 * shrinks the run; it is not the job.  A branch on a comparison is
 * decided as before. */
SM_TEST(extract_debug_branches) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--epochs', type=int, default=90)\n"
      "p.add_argument('--debug', action='store_true')\n"
      "args = p.parse_args()\n"
      "if args.debug:\n    args.epochs = 1\n");
  expect_num(&r, NULL, "python train.py", SM_META_ITERATIONS, 90);
  put(&r, "lazy.py",
      "import yaml\ncfg = yaml.safe_load(open('x.yaml'))\n"
      "max_iter = 60000\n"
      "if cfg['train']['fast_dev_run']['enabled']:\n    max_iter = 20\n");
  expect_num(&r, NULL, "python lazy.py", SM_META_ITERATIONS, 60000);
  put(&r, "mode.py",
      "import argparse\np = argparse.ArgumentParser()\n"
      "p.add_argument('--size', default='big')\na = p.parse_args()\n"
      "steps = 100\nif a.size == 'big':\n    steps = 5000\n");
  expect_num(&r, NULL, "python mode.py", SM_META_ITERATIONS, 5000);
  /* A negation is the token "not", not a name that contains it: a
   * debugging switch named debug_annotations is still one. */
  put(&r, "ann.py",
      "import argparse\np = argparse.ArgumentParser()\n"
      "p.add_argument('--epochs', type=int, default=90)\n"
      "p.add_argument('--debug_annotations', action='store_true')\n"
      "args = p.parse_args()\n"
      "if args.debug_annotations:\n    args.epochs = 1\n");
  expect_num(&r, NULL, "python ann.py", SM_META_ITERATIONS, 90);
  repo_drop(&r);
}

/* Model-zoo configs named through a get_config helper (the package's
 * configs/ folder), and an imported get_config that is not the file's
 * own config function; the outer class of a LazyCall model is the
 * model unless it is a training module. */
SM_TEST(extract_zoo_configs_and_outer_models) {
  repo r;
  repo_make(&r);
  put(&r, "configs/common/schedule.py",
      "train = dict(max_iter=1000, amp=dict(enabled=False))\n");
  put(&r, "mypkg/__init__.py", "");
  put(&r, "mypkg/config.py",
      "import pkg_resources\nfrom omegaconf import OmegaConf\n"
      "def get_config(path):\n"
      "    f = pkg_resources.resource_filename('mypkg', path)\n"
      "    return OmegaConf.load(f)\n");
  put(&r, "projects/seg/configs/seg_r50.py",
      "from mypkg.config import get_config\n"
      "from detectron2.config import LazyCall as L\n"
      "from mypkg.nets import SegNet, ResNet\n"
      "train = get_config('common/schedule.py').train\n"
      "train.max_iter = 45000\n"
      "model = L(SegNet)(backbone=L(ResNet)(depth=50), num_classes=19)\n");
  put(&r, "tools/train_net.py",
      "import argparse\nfrom detectron2.config import LazyConfig\n"
      "p = argparse.ArgumentParser()\np.add_argument('--config-file')\n"
      "a = p.parse_args()\ncfg = LazyConfig.load(a.config_file)\n");
  expect_num(&r, NULL,
             "python tools/train_net.py --config-file "
             "projects/seg/configs/seg_r50.py",
             SM_META_ITERATIONS, 45000);
  expect_str(&r, NULL,
             "python tools/train_net.py --config-file "
             "projects/seg/configs/seg_r50.py",
             SM_META_MODEL_NAME, "segnet");
  /* A training module around the network: the network is the model. */
  put(&r, "conf/task.yaml",
      "model:\n  _target_: tasks.SegmentationTask\n"
      "  backbone:\n    _target_: nets.UNetPlusPlus\n");
  put(&r, "fit.py",
      "import hydra\n@hydra.main(config_path='conf', config_name='task')\n"
      "def main(cfg):\n    pass\nmain()\n");
  expect_str(&r, NULL, "python fit.py", SM_META_MODEL_NAME, "unetplusplus");
  /* Lit and PL name a training module only as a CamelCase word of their
   * own: LitSegmenter wraps its network, PlainNet is the network. */
  put(&r, "conf/lit.yaml",
      "model:\n  _target_: tasks.LitSegmenter\n"
      "  backbone:\n    _target_: nets.UNetPlusPlus\n");
  put(&r, "conf/plain.yaml",
      "model:\n  _target_: nets.PlainNet\n"
      "  backbone:\n    _target_: nets.UNetPlusPlus\n");
  expect_str(&r, NULL, "python fit.py --config-name lit", SM_META_MODEL_NAME,
             "unetplusplus");
  expect_str(&r, NULL, "python fit.py --config-name plain", SM_META_MODEL_NAME,
             "plainnet");
  repo_drop(&r);
}

/* A dataset class whose name is only generic words (LazySupervised,
 * PackedJson) names no dataset; one with a word of its own still does. */
SM_TEST(extract_generic_dataset_class_words) {
  repo r;
  repo_make(&r);
  put(&r, "sft.py",
      "import torch\n"
      "class LazySupervisedDataset(torch.utils.data.Dataset):\n    pass\n"
      "ds = LazySupervisedDataset('/data/mix.json')\n");
  expect_unread(&r, "python sft.py", SM_META_DATASET);
  put(&r, "pack.py",
      "import torch\n"
      "class PackedJson_Dataset(torch.utils.data.Dataset):\n    pass\n"
      "ds = PackedJson_Dataset()\n");
  expect_unread(&r, "python pack.py", SM_META_DATASET);
  put(&r, "rec.py",
      "import torch\n"
      "class ClickLogDataset(torch.utils.data.Dataset):\n    pass\n"
      "ds = ClickLogDataset()\n");
  expect_str(&r, NULL, "python rec.py", SM_META_DATASET, "clicklog");
  repo_drop(&r);
}

/* An OmegaConf-style command line names its base config as a key
 * (config=FILE, cfg=FILE); the other keys override it. */
SM_TEST(extract_config_named_by_key) {
  repo r;
  repo_make(&r);
  put(&r, "apps/lm/configs/small.yaml",
      "steps: 12_000\noptim:\n  lr: 0.002\nmodel:\n  dim: 512\n"
      "  n_layers: 8\ndata:\n  batch_size: 16\n  seq_len: 1024\n");
  put(&r, "apps/lm/train.py",
      "from omegaconf import OmegaConf\nimport sys\n"
      "cli = OmegaConf.from_cli()\n"
      "cfg = OmegaConf.merge(OmegaConf.load(cli.config), cli)\n");
  expect_num(&r, NULL,
             "torchrun --nproc-per-node 2 -m apps.lm.train "
             "config=apps/lm/configs/small.yaml",
             SM_META_ITERATIONS, 12000);
  expect_num(&r, NULL,
             "torchrun --nproc-per-node 2 -m apps.lm.train "
             "config=apps/lm/configs/small.yaml steps=500",
             SM_META_ITERATIONS, 500);
  expect_num(&r, NULL, "python apps/lm/train.py cfg=apps/lm/configs/small.yaml",
             SM_META_PER_DEVICE_BATCH_SIZE, 16);
  /* A name that is no file is only a value. */
  expect_unread(&r, "python apps/lm/train.py config=missing.yaml",
                SM_META_PER_DEVICE_BATCH_SIZE);
  repo_drop(&r);
}

/* getopts option loops in launch scripts: letters with values (separate
 * or attached), switches, unknown letters, and OPTIND for the rest. */
SM_TEST(extract_shell_getopts) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\n"
      "p.add_argument('--epochs', type=int, default=5)\n"
      "p.add_argument('--fp16', action='store_true')\n"
      "p.add_argument('data', nargs='?')\np.parse_args()\n");
  put(&r, "run.sh",
      "#!/bin/sh\nGPUS=1\nLR=0.1\nAMP=\n"
      "while getopts \"g:l:a\" opt; do\n  case $opt in\n"
      "    g) GPUS=$OPTARG ;;\n    l) LR=$OPTARG ;;\n"
      "    a) AMP=--fp16 ;;\n    \\?) echo bad ;;\n  esac\ndone\n"
      "torchrun --nproc_per_node $GPUS train.py --lr $LR $AMP\n");
  expect_num(&r, NULL, "sh run.sh -g 4 -l 0.02", SM_META_GPUS, 4);
  expect_str(&r, NULL, "sh run.sh -g 4 -a", SM_META_PRECISION, "fp16");
  expect_num(&r, NULL, "sh run.sh -g2 -x", SM_META_GPUS, 2);
  put(&r, "rest.sh",
      "#!/bin/bash\nE=5\nwhile getopts ':e:' o; do\n"
      "  case \"$o\" in e) E=\"$OPTARG\";; esac\ndone\n"
      "shift $((OPTIND-1))\n"
      "python train.py --epochs \"$E\" \"$1\"\n");
  expect_num(&r, NULL, "bash rest.sh -e 30 /data/imagenet", SM_META_ITERATIONS,
             30);
  /* Malformed loops: no spec, a spec from a variable, a spec of one
   * colon, an option list longer than the loop bound. */
  put(&r, "bad.sh",
      "#!/bin/sh\nwhile getopts; do :; done\nS=ab\n"
      "while getopts \"$S\" o; do :; done\nwhile getopts : o; do :; done\n"
      "while getopts 'a' o; do case $o in a) shift;; esac; done\n"
      "python train.py --epochs 7\n");
  {
    char cmd[4096];
    size_t o = (size_t)snprintf(cmd, sizeof(cmd), "sh bad.sh");
    for (int i = 0; i < 60 && o + 4 < sizeof(cmd); i++)
      o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " -a");
    expect_num(&r, NULL, cmd, SM_META_ITERATIONS, 7);
  }
  repo_drop(&r);
}

/* A data folder shared by variants of a dataset: the dataset class the
 * config names is the more specific answer; a class that names another
 * dataset altogether does not replace the folder's. */
SM_TEST(extract_dataset_class_refines_folder) {
  repo r;
  repo_make(&r);
  put(&r, "configs/a.py",
      "dataset_type = 'Cifar100Dataset'\ndata_root = 'data/cifar'\n"
      "data = dict(train=dict(type=dataset_type, data_root=data_root))\n");
  put(&r, "configs/b.py",
      "dataset_type = 'FolderDataset'\ndata_root = 'data/cifar'\n"
      "data = dict(train=dict(type=dataset_type, data_root=data_root))\n");
  put(&r, "configs/c.py",
      "data = dict(train=dict(type='ScanNet200Dataset', "
      "data_root='/data/scannet'))\n");
  put(&r, "train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "a = p.parse_args()\ncfg = Config.fromfile(a.config)\n");
  expect_str(&r, NULL, "python train.py configs/a.py", SM_META_DATASET,
             "cifar-100");
  expect_str(&r, NULL, "python train.py configs/b.py", SM_META_DATASET,
             "cifar-10");
  expect_str(&r, NULL, "python train.py configs/c.py", SM_META_DATASET,
             "scannet200");
  repo_drop(&r);
}

/* RL fine-tuning states the prompt and response budgets apart: the
 * sequence is their sum; one alone says nothing. */
SM_TEST(extract_rollout_sequence_length) {
  repo r;
  repo_make(&r);
  put(&r, "rl.py",
      "import argparse\nfrom transformers import AutoModelForCausalLM\n"
      "m = AutoModelForCausalLM.from_pretrained('acme/tiny-1b')\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--prompt_max_len', type=int, default=1024)\n"
      "p.add_argument('--generate_max_len', type=int, default=2048)\n"
      "p.parse_args()\n");
  expect_num(&r, NULL, "python rl.py", SM_META_SEQ_LEN, 3072);
  expect_num(&r, NULL, "python rl.py --generate_max_len 512", SM_META_SEQ_LEN,
             1536);
  put(&r, "cfg.yaml",
      "data:\n  max_prompt_length: 256\n  max_response_length: 768\n");
  put(&r, "grpo.py",
      "import sys\nimport yaml\nfrom transformers import AutoModelForCausalLM\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n"
      "m = AutoModelForCausalLM.from_pretrained('acme/tiny-1b')\n");
  expect_num(&r, NULL, "python grpo.py cfg.yaml", SM_META_SEQ_LEN, 1024);
  /* The policy's weights under a nested model.path (a Hub id). */
  put(&r, "ppo.yaml",
      "actor_rollout_ref:\n  model:\n    path: acme/widget-3b-instruct\n"
      "data:\n  max_prompt_length: 128\n  max_response_length: 128\n");
  expect_str(&r, NULL, "python grpo.py ppo.yaml", SM_META_MODEL_NAME,
             "widget-3b-instruct");
  put(&r, "half.py",
      "import argparse\nfrom transformers import AutoModelForCausalLM\n"
      "m = AutoModelForCausalLM.from_pretrained('acme/tiny-1b')\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--max_prompt_length', type=int, default=512)\n"
      "p.parse_args()\n");
  expect_unread(&r, "python half.py", SM_META_SEQ_LEN);
  repo_drop(&r);
}

/* ==== Round 9: review findings ==== */

/* Does any warning of the job mention NEEDLE? */
static int warned(const sm_extract_res *res, const char *needle) {
  for (int i = 0; i < res->n_warnings; i++)
    if (strstr(res->warnings[i], needle) != NULL)
      return 1;
  return 0;
}

/* A TOOL_train word alone is weak: a tokenizer trainer (spm_train,
 * bpe-train) takes no training option.  It is not the launch of a script
 * beside the real one, and given alone it is not read; a tool's trainer
 * passed a training option or a configuration file still is. */
SM_TEST(extract_external_trainer_needs_training_options) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "lm/__init__.py", "");
  put(&r, "lm/run.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\n"
      "p.add_argument('--max_steps', type=int, default=10)\n"
      "p.parse_args()\n");
  /* Shape 1: key=value options, the real launch a module run. */
  put(&r, "prep_and_run.sh",
      "#!/bin/bash\n"
      "spm_train --input=corpus.txt --model_prefix=sp32k "
      "--vocab_size=32000 --character_coverage=1.0\n"
      "python -m lm.run --lr 0.003 --max_steps 5000\n");
  expect_num(&r, NULL, "bash prep_and_run.sh", SM_META_ITERATIONS, 5000);
  /* Shape 2: separate values, a hyphenated tool, an accelerate launch. */
  put(&r, "all.sh",
      "#!/bin/sh\nset -e\n"
      "wordpiece-train --vocab-size 50000 --input data/a.txt "
      "--output tok/\n"
      "accelerate launch -m lm.run --max_steps 777\n");
  expect_num(&r, NULL, "sh all.sh", SM_META_ITERATIONS, 777);
  /* Given alone: a warning, nothing read. */
  run(&r, NULL, "spm_train --input=c.txt --model_prefix=m --vocab_size=8000",
      &res);
  ASSERT(warned(&res, "no training option"));
  ASSERT(!known(&res, SM_META_GPUS));
  sm_extract_res_release(&res);
  /* Real trainers of other packages: options, or only a config file. */
  expect_num(&r, NULL, "seqkit-train data-bin --max-update 1200 --lr 0.1",
             SM_META_ITERATIONS, 1200);
  run(&r, NULL, "seqkit-train run.yaml", &res);
  ASSERT(!warned(&res, "no training option"));
  sm_extract_res_release(&res);
  ASSERT(sm__is_external_trainer(
      (const char *const[]){"vision_finetune", "--cfg", "a"}, 3));
  ASSERT(!sm__is_external_trainer(
      (const char *const[]){"spm_train", "--input", "x.json"}, 3));
  ASSERT(!sm__is_external_trainer((const char *const[]){"bpe-train"}, 1));
  ASSERT(
      !sm__is_external_trainer((const char *const[]){"./x-train", "--lr"}, 2));
  repo_drop(&r);
}

/* getopts as the shell reads it: bundled letters, a missing value under
 * a silent spec (OPTARG of the previous letter must not leak), OPTIND
 * past `--`. */
SM_TEST(extract_shell_getopts_bundles) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\n"
      "p.add_argument('--epochs', type=int, default=5)\n"
      "p.add_argument('--bf16', action='store_true')\n"
      "p.add_argument('data', nargs='?')\np.parse_args()\n");
  /* Shape 1: bash, [[ ]]-free case on a quoted name, "$@" after shift. */
  put(&r, "go.sh",
      "#!/bin/bash\nEP=5\nPREC=\n"
      "while getopts \"be:\" flag; do\n  case \"$flag\" in\n"
      "    b) PREC=--bf16 ;;\n    e) EP=$OPTARG ;;\n  esac\ndone\n"
      "shift $((OPTIND - 1))\n"
      "python train.py --epochs $EP $PREC \"$@\"\n");
  expect_num(&r, NULL, "bash go.sh -be 30", SM_META_ITERATIONS, 30);
  expect_str(&r, NULL, "bash go.sh -be 30", SM_META_PRECISION, "bf16");
  expect_num(&r, NULL, "bash go.sh -b -e12 -- --lr 0.02", SM_META_ITERATIONS,
             12);
  /* OPTIND past the `--`: $1 is the word after it. */
  put(&r, "go3.sh",
      "#!/bin/bash\nwhile getopts \"e:\" f; do\n"
      "  [ \"$f\" = e ] && EP=$OPTARG\ndone\n"
      "shift $((OPTIND - 1))\n"
      "python train.py --epochs ${EP:-5} --lr \"$1\"\n");
  {
    sm_extract_res res;
    run(&r, NULL, "bash go3.sh -e 9 -- 0.02", &res);
    ASSERT_NEAR(num(&res, SM_META_LR), 0.02, 1e-12);
    sm_extract_res_release(&res);
  }
  /* Shape 2: sh, a silent spec, backquoted expr, torchrun. */
  put(&r, "s2.sh",
      "#!/bin/sh\nG=1\nE=3\n"
      "while getopts \":g:e:\" o; do\n  case $o in\n"
      "    g) G=$OPTARG ;;\n    e) E=$OPTARG ;;\n"
      "    :) echo \"-$OPTARG needs a value\" ;;\n  esac\ndone\n"
      "shift `expr $OPTIND - 1`\n"
      "torchrun --nproc_per_node $G train.py --epochs $E\n");
  expect_num(&r, NULL, "sh s2.sh -g 4 -e", SM_META_ITERATIONS, 3);
  expect_num(&r, NULL, "sh s2.sh -g 4 -e", SM_META_GPUS, 4);
  expect_num(&r, NULL, "sh s2.sh -eg 8", SM_META_GPUS, 1);
  expect_num(&r, NULL, "sh s2.sh -g2 -e 6", SM_META_ITERATIONS, 6);
  repo_drop(&r);
}

/* A dataset class whose words are all format or method words names no
 * dataset, an acronym being one word (PackedJSONDataset is packed + json,
 * not p-a-c-k-e-d j s o n); an acronym that names data still does. */
SM_TEST(extract_dataset_class_acronyms) {
  repo r;
  repo_make(&r);
  put(&r, "data.py", "class PackedJSONDataset:\n    pass\n");
  put(&r, "a.py",
      "import torch\nfrom data import PackedJSONDataset\n"
      "ds = PackedJSONDataset('/scratch/run7/shards')\n");
  expect_unread(&r, "python a.py", SM_META_DATASET);
  put(&r, "b.py",
      "import torch\nimport loaders\n"
      "train_set = loaders.HFChatDataset(path=PATH, split='train')\n");
  expect_unread(&r, "python b.py", SM_META_DATASET);
  put(&r, "c.py",
      "import torch\nimport loaders\n"
      "train_set = loaders.LMDBImageDataset(root)\n");
  expect_unread(&r, "python c.py", SM_META_DATASET);
  put(&r, "d.py",
      "import torch\nimport faces\nds = faces.CelebAHQDataset('/data/x')\n");
  expect_str(&r, NULL, "python d.py", SM_META_DATASET, "celeba");
  repo_drop(&r);
}

/* A dataset class that refines a shared data folder (data/mnist and an
 * MNISTSuperpixelsDataset, a graph dataset) is its own dataset: the
 * folder's task and domain hints do not carry over to it. */
SM_TEST(extract_dataset_refined_drops_folder_hints) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  put(&r, "configs/c.py",
      "dataset_type = 'MNISTSuperpixelsDataset'\ndata_root = 'data/mnist/'\n"
      "train_dataloader = dict(batch_size=2, dataset=dict(type=dataset_type, "
      "data_root=data_root))\n");
  put(&r, "train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "a = p.parse_args()\ncfg = Config.fromfile(a.config)\n");
  run(&r, NULL, "python train.py configs/c.py", &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "mnistsuperpixels");
  ASSERT(!known(&res, SM_META_TASK));
  ASSERT(!known(&res, SM_META_DOMAIN));
  sm_extract_res_release(&res);
  /* YAML, the class under data.train.type beside its folder. */
  put(&r, "c.yaml",
      "data:\n  train:\n    type: ImdbGraphsDataset\n"
      "    data_root: /datasets/imdb\n");
  put(&r, "t2.py",
      "import sys\nimport yaml\ncfg = yaml.safe_load(open(sys.argv[1]))\n");
  run(&r, NULL, "python t2.py c.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_DATASET), "imdbgraphs");
  ASSERT(!known(&res, SM_META_TASK));
  sm_extract_res_release(&res);
  /* The folder alone keeps its hints. */
  put(&r, "d.yaml", "data:\n  train:\n    data_root: /datasets/imdb\n");
  expect_str(&r, NULL, "python t2.py d.yaml", SM_META_DOMAIN, "nlp");
  repo_drop(&r);
}

/* Words alone that say nothing of the task: prose in string literals (a
 * help text, a log message) and a family only imported modules name (the
 * translation of rigid-body geometry, a detection rate in a metrics
 * module).  The task and domain stay null; the same words where the job
 * itself names its method still decide. */
SM_TEST(extract_task_stray_words_do_not_decide) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Shape 1: help texts that mention instructions. */
  put(&r, "fold.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--index', help='Alignment index. See the README for "
      "instructions.')\n"
      "p.add_argument('--dist_index', help='Distillation index. See the "
      "README for instructions.')\n"
      "p.add_argument('--epochs', type=int, default=3)\na = p.parse_args()\n");
  run(&r, NULL, "python fold.py", &res);
  ASSERT(!known(&res, SM_META_TASK));
  ASSERT(!known(&res, SM_META_DOMAIN));
  sm_extract_res_release(&res);
  /* Shape 2: log messages. */
  put(&r, "log.py",
      "import torch\nimport logging\nlog = logging.getLogger(__name__)\n"
      "log.info('object detection metrics are off')\n"
      "log.info('skipping detection of stale checkpoints')\n"
      "print('no detection head here')\n");
  expect_unread(&r, "python log.py", SM_META_TASK);
  /* Shape 3: the words only in a module the entry imports (rigid-body
   * translation), not in the entry. */
  put(&r, "geom/__init__.py", "");
  put(&r, "geom/rigid.py",
      "import torch\nTRANSLATION_SCALE = 10.0\n"
      "def _translation_of(frame):\n"
      "    return frame[..., :3] * TRANSLATION_SCALE\n"
      "def compose(a, b):\n    return _translation_of(a) + "
      "_translation_of(b)\n");
  put(&r, "run.py",
      "import torch\nfrom geom import rigid\n"
      "def main():\n    y = rigid.compose(torch.zeros(4), torch.ones(4))\n"
      "main()\n");
  run(&r, NULL, "python run.py", &res);
  ASSERT(!known(&res, SM_META_TASK));
  sm_extract_res_release(&res);
  /* The job's own names decide: a translation model built by the entry. */
  put(&r, "mt.py",
      "import torch\nfrom geom.rigid import apply_translation\n"
      "class TranslationTransformer(torch.nn.Module):\n    pass\n"
      "def train_translation():\n    m = TranslationTransformer()\n"
      "train_translation()\n");
  expect_str(&r, NULL, "python mt.py", SM_META_TASK, "machine_translation");
  repo_drop(&r);
}

/* A training library that supports several methods names them in its own
 * modules (an SFT data builder, a DPO loss): those words are not the
 * job's method.  Only the entry, the command or the configs decide. */
SM_TEST(extract_lm_method_from_job_not_library) {
  repo r;
  repo_make(&r);
  put(&r, "lib/__init__.py", "");
  put(&r, "lib/data.py",
      "def build_pretraining_dataset(path):\n    return open(path)\n"
      "def build_sft_dataset(path):\n    return open(path)\n"
      "def sft_collate(batch):\n    return batch\n"
      "def build_dataset(kind, path):\n"
      "    if kind == 'sft':\n        return build_sft_dataset(path)\n"
      "    return build_pretraining_dataset(path)\n");
  put(&r, "lib/losses.py",
      "import torch\ndef dpo_loss(a, b):\n    return a - b\n"
      "def preference_margin(a, b):\n    return dpo_loss(a, b)\n"
      "def lm_loss(x):\n    return preference_margin(x, x)\n");
  put(&r, "train_lm.py",
      "import argparse\nimport torch\nfrom transformers import "
      "AutoModelForCausalLM, AutoConfig\n"
      "from lib.data import build_dataset\nfrom lib.losses import lm_loss\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--data', default='/data/openwebtext')\n"
      "a = p.parse_args()\n"
      "m = AutoModelForCausalLM.from_config(AutoConfig())\n"
      "ds = build_dataset('lm', a.data)\nlm_loss(1)\n");
  expect_str(&r, NULL, "python train_lm.py", SM_META_TASK,
             "language_model_pretraining");
  /* The job's own SFT entry still decides. */
  put(&r, "sft_train.py",
      "import torch\nfrom transformers import AutoModelForCausalLM\n"
      "from lib.data import build_sft_dataset, sft_collate\n"
      "m = AutoModelForCausalLM.from_pretrained('acme/tiny-1b')\n"
      "def run_sft():\n    ds = build_sft_dataset('chat.jsonl')\n"
      "    sft_collate(ds)\nrun_sft()\n");
  expect_str(&r, NULL, "python sft_train.py", SM_META_TASK,
             "llm_finetuning_sft");
  /* The job's own folder spells the method out. */
  put(&r, "steps/supervised_finetuning/main.py",
      "import torch\nfrom transformers import AutoModelForCausalLM\n"
      "m = AutoModelForCausalLM.from_pretrained('acme/tiny-1b')\n");
  expect_str(&r, NULL, "python steps/supervised_finetuning/main.py",
             SM_META_TASK, "llm_finetuning_sft");
  repo_drop(&r);
}

/* Speech synthesis is its own task: text in, speech out.  Transcripts,
 * speaker embeddings and an ASR aligner are its inputs and features; the
 * model kinds and vocoders name the method.  Recognition stays
 * recognition. */
SM_TEST(extract_task_text_to_speech) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Shape 1: a YAML naming the acoustic model and its vocoder. */
  put(&r, "recipes/lj/vits.yaml",
      "model: vits\nvocoder:\n  type: hifigan\n  upsample: [8, 8, 2, 2]\n"
      "data:\n  train_list: /data/LJSpeech-1.1/train.txt\n"
      "trainer:\n  epochs: 1000\n  batch_size: 32\n");
  put(&r, "train.py",
      "import sys\nimport yaml\nimport torch\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n");
  run(&r, NULL, "python train.py recipes/lj/vits.yaml", &res);
  ASSERT_STREQ(str(&res, SM_META_TASK), "text_to_speech");
  ASSERT_STREQ(str(&res, SM_META_DOMAIN), "speech");
  sm_extract_res_release(&res);
  /* Shape 2: argparse, a multi-speaker Tacotron with an ASR aligner. */
  put(&r, "synth/__init__.py", "");
  put(&r, "synth/aligner.py",
      "import torch\nclass CTCAligner(torch.nn.Module):\n    pass\n"
      "def asr_align(x):\n    return CTCAligner()(x)\n");
  put(&r, "train_multispeaker.py",
      "import argparse\nimport torch\nfrom synth.aligner import asr_align\n"
      "class Tacotron2(torch.nn.Module):\n"
      "    def __init__(self, n_speakers):\n"
      "        self.speaker_embedding = torch.nn.Embedding(n_speakers, 64)\n"
      "p = argparse.ArgumentParser()\n"
      "p.add_argument('--speaker_count', type=int, default=109)\n"
      "p.add_argument('--finetune', action='store_true')\n"
      "a = p.parse_args()\nmodel = Tacotron2(a.speaker_count)\n"
      "vocoder = torch.hub.load('acme/waveglow', 'waveglow')\n");
  expect_str(&r, NULL, "python train_multispeaker.py", SM_META_TASK,
             "text_to_speech");
  expect_str(&r, NULL, "python train_multispeaker.py --finetune", SM_META_TASK,
             "text_to_speech_finetuning");
  /* Recognition stays recognition. */
  put(&r, "asr.yaml",
      "encoder: conformer\ndecoder: transformer\nctc_weight: 0.3\n"
      "dataset_conf:\n  fbank_conf:\n    num_mel_bins: 80\n");
  expect_str(&r, NULL, "python train.py asr.yaml", SM_META_TASK,
             "speech_recognition");
  repo_drop(&r);
}

/* The data a job trains on: not the data of its evaluation (a
 * val_dataloader, data.test), not a component's task label
 * (metainfo.task_name), not a generic dataset class given as a type
 * (BasicImageDataset), not the name of a list file (train_list.txt,
 * meta_info.txt) whose folder may still name the data. */
SM_TEST(extract_dataset_training_data_only) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nfrom mmengine.config import Config\n"
      "p = argparse.ArgumentParser()\np.add_argument('config')\n"
      "a = p.parse_args()\ncfg = Config.fromfile(a.config)\n");
  /* Shape 1: mmengine-style Python config, the test set written last. */
  put(&r, "configs/ocr.py",
      "train_dataloader = dict(batch_size=64, dataset=dict(type='OCRDataset',"
      " data_root='data/synthtext'))\n"
      "test_dataloader = dict(batch_size=1, dataset=dict(type='OCRDataset',"
      " data_root='data/icdar2015'))\n");
  expect_str(&r, NULL, "python train.py configs/ocr.py", SM_META_DATASET,
             "synthtext");
  /* Shape 2: YAML sections, a validation set with its own name. */
  put(&r, "b.yaml",
      "data:\n  train:\n    dataset_name: natural-questions\n"
      "  val:\n    dataset_name: squad\n");
  put(&r, "t2.py",
      "import sys\nimport yaml\ncfg = yaml.safe_load(open(sys.argv[1]))\n");
  expect_str(&r, NULL, "python t2.py b.yaml", SM_META_DATASET,
             "natural-questions");
  /* Only an evaluation set: nothing read. */
  put(&r, "c.yaml", "evaluation:\n  dataset: squad\n");
  expect_unread(&r, "python t2.py c.yaml", SM_META_DATASET);
  /* A task label and a generic class type name no dataset. */
  put(&r, "configs/sr.py",
      "dataset_type = 'BasicImageDataset'\n"
      "train_dataloader = dict(dataset=dict(type=dataset_type,"
      " metainfo=dict(task_name='sisr')))\n");
  expect_unread(&r, "python train.py configs/sr.py", SM_META_DATASET);
  put(&r, "d.yaml", "trainer:\n  task_name: denoise\n");
  expect_unread(&r, "python t2.py d.yaml", SM_META_DATASET);
  /* A nested task_name that is a known dataset still names it. */
  put(&r, "h.yaml", "data:\n  task_name: mrpc\n  batch_size: 32\n");
  expect_str(&r, NULL, "python t2.py h.yaml", SM_META_DATASET, "glue-mrpc");
  /* List files: their folder names the data, or nothing does. */
  put(&r, "e.yaml", "train_data: /data/LJSpeech-1.1/metadata.csv\n");
  expect_str(&r, NULL, "python t2.py e.yaml", SM_META_DATASET, "ljspeech");
  put(&r, "f.yaml", "train_data: Data/train_list.txt\n");
  expect_unread(&r, "python t2.py f.yaml", SM_META_DATASET);
  put(&r, "g.yaml", "data_path: /data/list_kinetics-400/train.csv\n");
  expect_str(&r, NULL, "python t2.py g.yaml", SM_META_DATASET, "kinetics-400");
  repo_drop(&r);
}

/* One process that drives every visible device (nn.DataParallel, a JAX
 * program) takes the batch of all of them: an unqualified batch option
 * is the global batch, the per-device batch and the GPU count unknown
 * unless the job fixes them.  A per-device option stays per device. */
SM_TEST(extract_one_process_batch_is_global) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Shape 1: flax, a YAML config. */
  put(&r, "conf/small.yaml",
      "trainer:\n  batch_size: 512\n  num_steps: 1000\n");
  put(&r, "train_flax.py",
      "import sys\nimport yaml\nimport jax\nimport flax.linen as nn\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n");
  run(&r, NULL, "python train_flax.py conf/small.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 512);
  ASSERT(!known(&res, SM_META_PER_DEVICE_BATCH_SIZE));
  ASSERT(!known(&res, SM_META_GPUS));
  sm_extract_res_release(&res);
  /* Shape 2: haliax and argparse; a checkpoint converter the entry
   * imports brings torch along; a per-device option stays per device. */
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/convert.py", "import torch\ndef to_torch(x):\n    return x\n");
  put(&r, "train_hax.py",
      "import argparse\nimport haliax as hax\nimport jax.numpy as jnp\n"
      "from pkg.convert import to_torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--train_batch_size', type=int, default=256)\n"
      "p.parse_args()\n");
  run(&r, NULL, "python train_hax.py", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 256);
  ASSERT(!known(&res, SM_META_PER_DEVICE_BATCH_SIZE));
  sm_extract_res_release(&res);
  put(&r, "train_pd.py",
      "import argparse\nimport jax\np = argparse.ArgumentParser()\n"
      "p.add_argument('--per_device_batch_size', type=int, default=8)\n"
      "p.parse_args()\n");
  expect_num(&r, NULL, "python train_pd.py", SM_META_PER_DEVICE_BATCH_SIZE, 8);
  /* Shape 3: torch.nn.DataParallel over every visible GPU. */
  put(&r, "dp.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--mini-batch-size', type=int, default=1)\n"
      "a = p.parse_args()\nnet = torch.nn.Linear(4, 4)\n"
      "net = torch.nn.DataParallel(net)\n");
  run(&r, NULL, "python dp.py --mini-batch-size 128", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 128);
  ASSERT(!known(&res, SM_META_PER_DEVICE_BATCH_SIZE));
  sm_extract_res_release(&res);
  /* A torch entry is not a JAX program: one GPU, its batch per device. */
  put(&r, "plain.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--batch_size', type=int, default=64)\np.parse_args()\n");
  expect_num(&r, NULL, "python plain.py", SM_META_PER_DEVICE_BATCH_SIZE, 64);
  repo_drop(&r);
}

/* A stop bound (max_update) is the run's length; a total the learning-
 * rate schedule decays over (total_num_update) is not, whichever the job
 * writes first. */
SM_TEST(extract_steps_stop_bound_first) {
  repo r;
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--max-update', type=int, default=0)\n"
      "p.add_argument('--total-num-update', type=int, default=1000000)\n"
      "p.parse_args()\n");
  expect_num(&r, NULL,
             "python train.py --total-num-update 20000 "
             "--max-update 12000",
             SM_META_ITERATIONS, 12000);
  expect_num(&r, NULL,
             "python train.py --max-update 12000 "
             "--total-num-update 20000",
             SM_META_ITERATIONS, 12000);
  /* YAML, other spellings. */
  put(&r, "a.yaml", "total_updates: 50000\nmax_updates: 30000\n");
  put(&r, "b.yaml", "max_updates: 30000\ntotal_updates: 50000\n");
  put(&r, "t.py",
      "import sys\nimport yaml\nimport torch\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\n");
  expect_num(&r, NULL, "python t.py a.yaml", SM_META_ITERATIONS, 30000);
  expect_num(&r, NULL, "python t.py b.yaml", SM_META_ITERATIONS, 30000);
  repo_drop(&r);
}

/* A train batch beside a micro batch, divided over the data-parallel
 * ranks by the code (whatever the world is called: dp_size,
 * data_parallel_size, num_processes), is the global batch. */
SM_TEST(extract_divided_train_batch_is_global) {
  repo r;
  sm_extract_res res;
  repo_make(&r);
  /* Shape 1: a YAML config, the trainer divides in place by dp_size. */
  put(&r, "conf/sft.yaml",
      "data:\n  train_batch_size: 128\n  micro_batch_size_per_gpu: 2\n");
  put(&r, "trainer.py",
      "import sys\nimport yaml\nimport torch\nimport torch.distributed as "
      "dist\n"
      "class Trainer:\n    def __init__(self, config):\n"
      "        dp_size = dist.get_world_size()\n"
      "        config['data']['train_batch_size'] //= dp_size\n"
      "cfg = yaml.safe_load(open(sys.argv[1]))\nTrainer(cfg)\n");
  run(&r, NULL, "torchrun --nproc_per_node 4 trainer.py conf/sft.yaml", &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 128);
  ASSERT_EQ(num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 2);
  sm_extract_res_release(&res);
  /* Shape 2: argparse, a derived per-rank batch over num_processes. */
  put(&r, "run.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--train_batch_size', type=int, default=64)\n"
      "p.add_argument('--micro_batch_size', type=int, default=4)\n"
      "p.add_argument('--num_processes', type=int, default=1)\n"
      "args = p.parse_args()\n"
      "per_rank_batch = args.train_batch_size // args.num_processes\n");
  run(&r, NULL, "torchrun --nproc_per_node 2 run.py --train_batch_size 96",
      &res);
  ASSERT_EQ(num(&res, SM_META_GLOBAL_BATCH_SIZE), 96);
  sm_extract_res_release(&res);
  repo_drop(&r);
}
