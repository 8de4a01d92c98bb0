/* test_extract_tree.c - the value tree and its merge rules, the
 * inheritance of each config system, gin, the Python evaluator, the
 * shell interpreter and the launchers, on small inputs written here,
 * malformed ones included (cycles, missing bases, deep nesting, huge
 * files, bad syntax): warnings and unknowns, never a crash or a hang. */
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

/* ==== A scratch repository ==== */

static sm__ctx *ctx_on(repo *r, sm_extract_req *q, sm_extract_res *res) {
  sm__ctx *c = calloc(1, sizeof(*c));
  sm_err err = {0};
  memset(q, 0, sizeof(*q));
  memset(res, 0, sizeof(*res));
  q->repo = r->dir;
  sm__ctx_init(c, q, res);
  if (sm__repo_open(c, &err) != 0)
    SM_FAIL_AT("repo_open: %s", err.msg);
  return c;
}

static void ctx_done(sm__ctx *c) {
  sm__ctx_release(c);
  sm_extract_res_release(c->res);
  free(c);
}

static int has_warning(const sm_extract_res *r, const char *needle) {
  for (int i = 0; i < r->n_warnings; i++)
    if (strstr(r->warnings[i], needle))
      return 1;
  return 0;
}

static double num_at(const sm__vnode *t, const char *path) {
  const sm__vnode *v = sm__vt_get_path(t, path);
  if (v == NULL || (v->t != SM__T_NUM && v->t != SM__T_BOOL))
    SM_FAIL_AT("%s: not a number", path);
  return v->num;
}

static const char *str_at(const sm__vnode *t, const char *path) {
  const sm__vnode *v = sm__vt_get_path(t, path);
  if (v == NULL || v->t != SM__T_STR)
    SM_FAIL_AT("%s: not a string", path);
  return v->str;
}

/* Runs the public extractor on a scratch repository. */
static void extract(repo *r, const char *const *argv, int argc,
                    sm_extract_res *res) {
  sm_extract_req q;
  sm_err err = {0};
  memset(&q, 0, sizeof(q));
  q.repo = r->dir;
  q.argv = argv;
  q.argc = argc;
  if (sm_extract(&q, res, &err) != 0)
    SM_FAIL_AT("sm_extract: %s", err.msg);
}

static double field_num(const sm_extract_res *res, sm_meta_field f) {
  if (!res->meta.f[f].known)
    SM_FAIL_AT("field %s unknown", sm_meta_name(f));
  return res->meta.f[f].num;
}

static const char *field_str(const sm_extract_res *res, sm_meta_field f) {
  return res->meta.f[f].known ? res->meta.f[f].str : "(null)";
}

/* ==== The tree ==== */

SM_TEST(extract_tree_merge_rules) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *base, *over, *m, *del, *top;
  repo_make(&r);
  c = ctx_on(&r, &q, &res);
  {
    const char *b = "model:\n  depth: 50\n  neck: {ch: 256}\nopt:\n  lr: 0.1\n"
                    "  momentum: 0.9\nlist: [1, 2, 3]\n";
    const char *o = "model:\n  depth: 101\nopt:\n  _delete_: true\n"
                    "  lr: 0.01\nlist: [4]\n";
    base = sm__vt_yaml(c, "b.yaml", b, strlen(b));
    over = sm__vt_yaml(c, "c.yaml", o, strlen(o));
  }
  ASSERT(base != NULL && over != NULL);
  /* Deep merge: members merge, lists replace, the child's line wins. */
  m = sm__vt_merge(c, base, over, SM__VM_DEEP);
  ASSERT_EQ(num_at(m, "model.depth"), 101);
  ASSERT_EQ(num_at(m, "model.neck.ch"), 256);
  ASSERT_EQ(sm__vt_get_path(m, "list")->n, 1);
  ASSERT_EQ(sm__vt_get_path(m, "model.depth")->line, 2);
  ASSERT_STREQ(sm__vt_get_path(m, "model.depth")->path, "c.yaml");
  /* The inputs are not changed. */
  ASSERT_EQ(num_at(base, "model.depth"), 50);
  ASSERT_EQ(sm__vt_get_path(base, "list")->n, 3);
  /* mmengine: _delete_ replaces the base mapping. */
  del = sm__vt_merge(c, base, over, SM__VM_DELETE_KEY);
  ASSERT(sm__vt_get_path(del, "opt.momentum") == NULL);
  ASSERT(sm__vt_get_path(del, "opt._delete_") == NULL);
  ASSERT_NEAR(num_at(del, "opt.lr"), 0.01, 1e-12);
  ASSERT_EQ(num_at(del, "model.neck.ch"), 256);
  /* maxtext-style: top-level keys replace whole. */
  top = sm__vt_merge(c, base, over, SM__VM_TOP_ONLY);
  ASSERT(sm__vt_get_path(top, "model.neck") == NULL);
  /* Path updates copy what they change. */
  m = sm__vt_set_path(c, base, "model.neck.ch",
                      sm__vt_numv(c, SM__T_NUM, 512, "x", 1));
  ASSERT_EQ(num_at(m, "model.neck.ch"), 512);
  ASSERT_EQ(num_at(base, "model.neck.ch"), 256);
  ASSERT_EQ(num_at(m, "model.depth"), 50);
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_tree_yaml_forms) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  const char *y = "defaults: &d\n  lr: 0.5\n  steps: 10\n"
                  "run:\n  <<: *d\n  steps: 20\n"
                  "dim: 64\nhidden: !ref <dim>\ndouble: !ref <dim> * 2\n"
                  "model: !new:pkg.models.Net\n  width: 3\n"
                  "quoted: '12'\n";
  repo_make(&r);
  c = ctx_on(&r, &q, &res);
  t = sm__vt_yaml(c, "h.yaml", y, strlen(y));
  ASSERT(t != NULL);
  /* YAML merge keys: the anchor's members, the child's own win. */
  ASSERT_NEAR(num_at(t, "run.lr"), 0.5, 1e-12);
  ASSERT_EQ(num_at(t, "run.steps"), 20);
  /* HyperPyYAML references and objects. */
  ASSERT_EQ(sm__vt_get(t, "hidden")->t, SM__T_REF);
  ASSERT_STREQ(sm__vt_get(t, "hidden")->str, "dim");
  ASSERT_EQ(sm__vt_get(t, "double")->t, SM__T_EXPR);
  ASSERT_EQ(sm__vt_get(t, "model")->t, SM__T_CALL);
  ASSERT_STREQ(sm__vt_get(t, "model")->str, "pkg.models.Net");
  ASSERT_EQ(num_at(t, "model.width"), 3);
  /* Quoted scalars stay strings. */
  ASSERT_STREQ(str_at(t, "quoted"), "12");
  /* Bad syntax: NULL and a warning naming the file and line. */
  ASSERT(sm__vt_yaml(c, "bad.yaml", "a: [1, 2\nb: }", 13) == NULL);
  ASSERT(has_warning(&res, "bad.yaml"));
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_tree_inheritance_systems) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  repo_make(&r);
  /* detectron2 / yacs: a chain of _BASE_ files, deep merge. */
  put(&r, "configs/Base.yaml",
      "SOLVER:\n  IMS_PER_BATCH: 16\n  BASE_LR: 0.0001\n  MAX_ITER: 9000\n");
  put(&r, "configs/coco/mid.yaml",
      "_BASE_: ../Base.yaml\nSOLVER:\n  MAX_ITER: 5000\n");
  put(&r, "configs/coco/top.yaml",
      "_BASE_: mid.yaml\nSOLVER:\n  BASE_LR: 0.001\n");
  /* maxtext-style base_config found in a directory above. */
  put(&r, "cfg/base.yml", "steps: 100\nmodel:\n  dim: 8\n  depth: 2\n");
  put(&r, "cfg/models/gpu/small.yml",
      "base_config: base.yml\nmodel:\n  dim: 16\n");
  /* A cycle and a missing base. */
  put(&r, "loop/a.yaml", "_BASE_: b.yaml\nx: 1\n");
  put(&r, "loop/b.yaml", "_BASE_: a.yaml\ny: 2\n");
  put(&r, "lost.yaml", "__include__: [nowhere.yaml]\nz: 3\n");
  c = ctx_on(&r, &q, &res);
  t = sm__cfg_tree(c, "configs/coco/top.yaml");
  ASSERT(t != NULL);
  ASSERT_EQ(num_at(t, "SOLVER.IMS_PER_BATCH"), 16);
  ASSERT_EQ(num_at(t, "SOLVER.MAX_ITER"), 5000);
  ASSERT_NEAR(num_at(t, "SOLVER.BASE_LR"), 0.001, 1e-12);
  ASSERT_STREQ(sm__vt_get_path(t, "SOLVER.MAX_ITER")->path,
               "configs/coco/mid.yaml");
  ASSERT(sm__vt_get(t, "_BASE_") == NULL);
  t = sm__cfg_tree(c, "cfg/models/gpu/small.yml");
  ASSERT_EQ(num_at(t, "steps"), 100);
  ASSERT_EQ(num_at(t, "model.dim"), 16);
  /* Top-level replacement: the child's model map replaces the base's. */
  ASSERT(sm__vt_get_path(t, "model.depth") == NULL);
  t = sm__cfg_tree(c, "loop/a.yaml");
  ASSERT(t != NULL);
  ASSERT_EQ(num_at(t, "x"), 1);
  ASSERT(has_warning(&res, "inheritance cycle"));
  t = sm__cfg_tree(c, "lost.yaml");
  ASSERT(t != NULL && num_at(t, "z") == 3);
  ASSERT(has_warning(&res, "nowhere.yaml not found"));
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_tree_inheritance_deep_and_huge) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  char name[32], text[64];
  sm_buf big;
  repo_make(&r);
  /* 40 levels of bases: stopped with a warning, no crash. */
  for (int i = 0; i < 40; i++) {
    snprintf(name, sizeof(name), "d%d.yaml", i);
    snprintf(text, sizeof(text), "_BASE_: d%d.yaml\nv%d: %d\n", i + 1, i, i);
    put(&r, name, text);
  }
  /* A YAML nested 200 deep and a 3 MB file over the file cap. */
  sm_buf_init(&big, 8 << 20);
  for (int i = 0; i < 200; i++)
    sm_buf_addf(&big, "%*sk%d:\n", i * 2, "", i);
  sm_buf_addf(&big, "%*sv: 1\n", 400, "");
  put(&r, "nest.yaml", sm_buf_str(&big));
  sm_buf_reset(&big);
  for (int i = 0; i < 150000; i++)
    sm_buf_adds(&big, "key_with_a_long_name: 12345\n");
  put(&r, "huge.yaml", sm_buf_str(&big));
  sm_buf_release(&big);
  c = ctx_on(&r, &q, &res);
  t = sm__cfg_tree(c, "d0.yaml");
  ASSERT(t != NULL);
  ASSERT_EQ(num_at(t, "v0"), 0);
  ASSERT(has_warning(&res, "nested too deep"));
  ASSERT(sm__cfg_tree(c, "nest.yaml") == NULL);
  ASSERT(sm__cfg_tree(c, "huge.yaml") == NULL);
  ASSERT(has_warning(&res, "huge.yaml"));
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_tree_gin) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  repo_make(&r);
  put(&r, "gin/base.gin", "Trainer.num_steps = 1000\nSTEPS = 7\n");
  put(&r, "gin/run.gin",
      "include 'base.gin'\nimport my.module\n# a comment\n"
      "BATCH = 256\nTrainer.batch_size = %BATCH\n"
      "train/Trainer.lr = 3e-4\nModel.act = @relu\n"
      "Model.layers = [1,\n  2, 3]\nthis is not a binding\n"
      "Model.bad = [1, 2\n");
  c = ctx_on(&r, &q, &res);
  t = sm__cfg_tree(c, "gin/run.gin");
  ASSERT(t != NULL);
  ASSERT_EQ(num_at(t, "trainer.num_steps"), 1000);
  ASSERT_EQ(num_at(t, "trainer.batch_size"), 256);
  ASSERT_NEAR(num_at(t, "trainer.lr"), 3e-4, 1e-12);
  ASSERT_STREQ(str_at(t, "model.act"), "@relu");
  ASSERT_EQ(sm__vt_get_path(t, "model.layers")->n, 3);
  /* A macro's value keeps the line it was written at. */
  ASSERT_EQ(sm__vt_get_path(t, "trainer.batch_size")->line, 4);
  ASSERT_EQ(sm__vt_get_path(t, "trainer.lr")->line, 6);
  ASSERT(has_warning(&res, "not a binding"));
  ctx_done(c);
  repo_drop(&r);
}

/* ==== The Python evaluator ==== */

SM_TEST(extract_pyeval_mmengine_configs) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  repo_make(&r);
  put(&r, "configs/_base_/schedule.py",
      "optim_wrapper = dict(type='OptimWrapper',\n"
      "    optimizer=dict(type='SGD', lr=0.007, momentum=0.9))\n"
      "train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=1200)\n");
  put(&r, "configs/_base_/data.py",
      "root = 'data/toyset'\n"
      "train = dict(type='ToyDataset', data_root=root, pipeline=None)\n"
      "train_pipeline = [dict(type='Load'), dict(type='Resize', scale=(8, "
      "8))]\n");
  put(&r, "configs/net/run.py",
      "_base_ = ['../_base_/schedule.py', '../_base_/data.py']\n"
      "ds = _base_.train\n"
      "ds.pipeline = _base_.train_pipeline\n"
      "train_dataloader = dict(batch_size=16, dataset=ds)\n"
      "optim_wrapper = dict(optimizer=dict(_delete_=True, type='Adam', "
      "lr=3e-4))\n"
      "train_cfg = dict(max_epochs=20)\n"
      "scales = [s * 2 for s in [1, 2, 3]]\n"
      "tag = f'{ds[\"type\"]}-{train_cfg[\"max_epochs\"]}e'\n");
  c = ctx_on(&r, &q, &res);
  t = sm__cfg_tree(c, "configs/net/run.py");
  ASSERT(t != NULL);
  ASSERT_EQ(num_at(t, "train_cfg.max_epochs"), 20);
  ASSERT_STREQ(str_at(t, "train_cfg.type"), "EpochBasedTrainLoop");
  ASSERT_STREQ(str_at(t, "optim_wrapper.optimizer.type"), "Adam");
  ASSERT(sm__vt_get_path(t, "optim_wrapper.optimizer.momentum") == NULL);
  ASSERT_STREQ(str_at(t, "optim_wrapper.type"), "OptimWrapper");
  ASSERT_EQ(num_at(t, "train_dataloader.batch_size"), 16);
  ASSERT_STREQ(str_at(t, "train_dataloader.dataset.data_root"), "data/toyset");
  ASSERT_EQ(sm__vt_get_path(t, "train_dataloader.dataset.pipeline")->n, 2);
  ASSERT_EQ(sm__vt_get_path(t, "scales")->n, 3);
  ASSERT_EQ(num_at(t, "scales.2"), 6);
  ASSERT_STREQ(str_at(t, "tag"), "ToyDataset-20e");
  /* Each value keeps its file and line. */
  ASSERT_STREQ(sm__vt_get_path(t, "train_cfg.type")->path,
               "configs/_base_/schedule.py");
  ASSERT_EQ(sm__vt_get_path(t, "train_cfg.max_epochs")->line, 6);
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_pyeval_classes_and_functions) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t, *arg;
  repo_make(&r);
  put(&r, "pkg/__init__.py", "");
  put(&r, "pkg/base.py",
      "import os\n"
      "class BaseExp:\n"
      "    def __init__(self):\n"
      "        self.max_epoch = 300\n"
      "        self.basic_lr_per_img = 0.01 / 64.0\n"
      "        self.depth = 1.0\n"
      "        self.name = "
      "os.path.split('exps/a/big_net.py')[1].split('.')[0]\n");
  put(&r, "exps/small.py",
      "from pkg.base import BaseExp as Base\n"
      "class Exp(Base):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.depth = 0.33\n"
      "        if os_unknown_call():\n"
      "            self.width = 9\n");
  put(&r, "cfg/mlc.py",
      "import ml_collections\n"
      "def get_config(arg=None):\n"
      "    config = ml_collections.ConfigDict()\n"
      "    config.model = ml_collections.ConfigDict()\n"
      "    config.model.width = 512 if arg == 'big' else 128\n"
      "    config.total_steps = 10_000\n"
      "    config.lr = 1e-3 * 2\n"
      "    return config\n");
  put(&r, "cfg/lazy.py",
      "from detectron2.config import LazyCall as L\n"
      "from mylib import Net, Opt\n"
      "model = L(Net)(depth=L(int)(x=3), width=64)\n"
      "optimizer = L(Opt)(lr=0.02)\n"
      "model.width = 128\n");
  put(&r, "cfg/dc.py",
      "from dataclasses import dataclass, field\n"
      "from transformers import TrainingArguments\n"
      "@dataclass\n"
      "class MyArgs(TrainingArguments):\n"
      "    learning_rate: float = field(default=2e-5)\n"
      "    max_length: int = 1024\n"
      "    tags: list = field(default_factory=lambda: ['a'])\n"
      "args = MyArgs()\n");
  c = ctx_on(&r, &q, &res);
  /* An experiment class: the instance after super().__init__(); what an
   * unknown branch assigns is unknown. */
  t = sm__cfg_tree(c, "exps/small.py");
  ASSERT(t != NULL && t->t == SM__T_OBJ);
  ASSERT_NEAR(num_at(t, "depth"), 0.33, 1e-12);
  ASSERT_EQ(num_at(t, "max_epoch"), 300);
  ASSERT_NEAR(num_at(t, "basic_lr_per_img"), 0.01 / 64.0, 1e-15);
  ASSERT_STREQ(str_at(t, "name"), "big_net");
  ASSERT_EQ(sm__vt_get(t, "width")->t, SM__T_UNKNOWN);
  /* ml_collections get_config(arg). */
  t = sm__cfg_tree(c, "cfg/mlc.py");
  ASSERT_EQ(num_at(t, "model.width"), 128);
  ASSERT_EQ(num_at(t, "total_steps"), 10000);
  ASSERT_NEAR(num_at(t, "lr"), 2e-3, 1e-12);
  arg = sm__vt_strv(c, "big", NULL, 0);
  t = sm__py_call_fn(c, "cfg/mlc.py", "get_config", &arg, 1);
  ASSERT_EQ(num_at(t, "model.width"), 512);
  /* LazyConfig: LazyCall(X)(...) is X's config with _target_. */
  t = sm__cfg_tree(c, "cfg/lazy.py");
  ASSERT_STREQ(str_at(t, "model._target_"), "mylib.Net");
  ASSERT_EQ(num_at(t, "model.width"), 128);
  ASSERT_NEAR(num_at(t, "optimizer.lr"), 0.02, 1e-12);
  /* Dataclass fields over the documented defaults of a library base. */
  t = sm__py_module_ns(c, "cfg/dc.py");
  t = sm__vt_get(t, "args");
  ASSERT(t != NULL && t->t == SM__T_OBJ);
  ASSERT_NEAR(num_at(t, "learning_rate"), 2e-5, 1e-15);
  ASSERT_EQ(num_at(t, "per_device_train_batch_size"), 8);
  ASSERT_EQ(num_at(t, "num_train_epochs"), 3);
  ASSERT_EQ(sm__vt_get(t, "tags")->t, SM__T_UNKNOWN);
  ctx_done(c);
  repo_drop(&r);
}

SM_TEST(extract_pyeval_bounds_and_malformed) {
  repo r;
  sm_extract_req q;
  sm_extract_res res;
  sm__ctx *c;
  sm__vnode *t;
  sm_buf big;
  repo_make(&r);
  /* Recursion, an endless loop, import cycles, syntax errors, a huge
   * list: bounded, unknown where it must be, never a hang. */
  put(&r, "rec.py",
      "def f(n):\n    return f(n + 1)\n"
      "x = f(0)\n"
      "while True:\n    y = 1\n"
      "z = [i for i in range(10 ** 9)]\n"
      "w = 'a' * 10 ** 9\n"
      "m = 1e63 & 3\n"
      "n = (10 ** 30) | 1\n"
      "o = 12 & 10\n");
  put(&r, "cyc_a.py", "from cyc_b import B\nA = 1\nC = B + 1\n");
  put(&r, "cyc_b.py", "from cyc_a import A\nB = 2\n");
  put(&r, "broken.py", "lr = 0.1\ndef (:\n  pass\nsteps = 5\n");
  sm_buf_init(&big, 4 << 20);
  sm_buf_adds(&big, "big = [");
  for (int i = 0; i < 100000; i++)
    sm_buf_addf(&big, "%d, ", i);
  sm_buf_adds(&big, "]\nafter = 1\n");
  put(&r, "big.py", sm_buf_str(&big));
  sm_buf_release(&big);
  c = ctx_on(&r, &q, &res);
  t = sm__py_module_ns(c, "rec.py");
  ASSERT(t != NULL);
  ASSERT_EQ(sm__vt_get(t, "x")->t, SM__T_UNKNOWN);
  ASSERT_EQ(sm__vt_get(t, "y")->t, SM__T_UNKNOWN);
  ASSERT_EQ(sm__vt_get(t, "z")->t, SM__T_UNKNOWN);
  ASSERT_EQ(sm__vt_get(t, "w")->t, SM__T_UNKNOWN);
  /* Bitwise operators beyond a 64-bit integer or on fractions: unknown,
   * never an undefined cast. */
  ASSERT_EQ(sm__vt_get(t, "m")->t, SM__T_UNKNOWN);
  ASSERT_EQ(sm__vt_get(t, "n")->t, SM__T_UNKNOWN);
  ASSERT_EQ(num_at(t, "o"), 8);
  t = sm__py_module_ns(c, "cyc_a.py");
  ASSERT_EQ(num_at(t, "C"), 3);
  t = sm__cfg_tree(c, "broken.py");
  ASSERT(t != NULL);
  ASSERT_NEAR(num_at(t, "lr"), 0.1, 1e-12);
  t = sm__py_module_ns(c, "big.py");
  ASSERT(t != NULL);
  ASSERT(sm__vt_get(t, "big")->n <= 4096);
  ASSERT_EQ(num_at(t, "after"), 1);
  ctx_done(c);
  repo_drop(&r);
}

/* ==== Scripts and launchers ==== */

SM_TEST(extract_shell_interpreter) {
  repo r;
  sm_extract_res res;
  static const char *const run_stage[] = {"bash", "run.sh",       "--stage",
                                          "2",    "--stop_stage", "2"};
  static const char *const dist[] = {"bash", "tools/dist.sh", "cfg.yaml",
                                     "4",    "--lr",          "0.5"};
  static const char *const loop[] = {"bash", "loop.sh", "STEPS=77"};
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\n"
      "p.add_argument('--steps', type=int, default=10)\n"
      "p.add_argument('config', nargs='?')\np.parse_args()\n");
  put(&r, "cfg.yaml", "max_steps: 123\n");
  put(&r, "tools/parse_options.sh", "# option parser (sourced)\n");
  /* Kaldi-style stages: only the chosen stage launches. */
  put(&r, "run.sh",
      "#!/bin/bash\nstage=0\nstop_stage=9\nngpu=2\n"
      ". tools/parse_options.sh || exit 1\n"
      "if [ ${stage} -le 1 ] && [ ${stop_stage} -ge 1 ]; then\n"
      "  python prepare.py\nfi\n"
      "if [ ${stage} -le 2 ] && [ ${stop_stage} -ge 2 ]; then\n"
      "  case $ngpu in\n    1) n=1 ;;\n    *) n=$ngpu ;;\n  esac\n"
      "  torchrun --nproc_per_node=$n train.py --steps $((n * 50))\nfi\n"
      "if [ ${stage} -le 3 ]; then\n  python evaluate.py\nfi\n");
  /* Positional arguments, ${@:3} pass-through and $(dirname $0). */
  put(&r, "tools/dist.sh",
      "CONFIG=$1\nGPUS=$2\nNNODES=${NNODES:-1}\n"
      "python -m torch.distributed.launch --nnodes=$NNODES "
      "--nproc_per_node=$GPUS \\\n    $(dirname \"$0\")/../train.py "
      "$CONFIG ${@:3}\n");
  /* A for loop exporting KEY=VALUE arguments, a function, a here-string. */
  put(&r, "loop.sh",
      "export STEPS=5\n"
      "for A in \"$@\"; do\n  IFS='=' read -r K V <<< \"$A\"\n"
      "  export \"$K\"=\"$V\"\ndone\n"
      "go() { torchrun --nproc_per_node=\"$1\" train.py --steps $STEPS; }\n"
      "go 3\n");
  memset(&res, 0, sizeof(res));
  extract(&r, run_stage, 6, &res);
  ASSERT_EQ(field_num(&res, SM_META_GPUS), 2);
  ASSERT_EQ(field_num(&res, SM_META_ITERATIONS), 100);
  ASSERT_STREQ(res.meta.f[SM_META_GPUS].evidence, "run.sh:14");
  sm_extract_res_release(&res);
  extract(&r, dist, 6, &res);
  ASSERT_EQ(field_num(&res, SM_META_GPUS), 4);
  ASSERT_NEAR(field_num(&res, SM_META_LR), 0.5, 1e-12);
  ASSERT_EQ(field_num(&res, SM_META_ITERATIONS), 123);
  sm_extract_res_release(&res);
  extract(&r, loop, 3, &res);
  ASSERT_EQ(field_num(&res, SM_META_GPUS), 3);
  ASSERT_EQ(field_num(&res, SM_META_ITERATIONS), 77);
  sm_extract_res_release(&res);
  repo_drop(&r);
}

SM_TEST(extract_shell_undecided_and_malformed) {
  repo r;
  sm_extract_res res;
  static const char *const a[] = {"bash", "auto.sh"};
  static const char *const b[] = {"bash", "broken.sh"};
  static const char *const d[] = {"bash", "deep.sh"};
  sm_buf big;
  repo_make(&r);
  put(&r, "train.py", "import torch\nimport argparse\n");
  /* A GPU count the script computes at run time stays unknown. */
  put(&r, "auto.sh",
      "if command -v nvidia-smi; then\n  n=$(nvidia-smi -L | wc -l)\n"
      "else\n  n=1\nfi\ntorchrun --nproc_per_node=$n train.py\n");
  put(&r, "broken.sh", "if [ x; then\n  torchrun \"unclosed train.py\n");
  /* Scripts that source each other in a cycle, and 2,000 nested ifs. */
  put(&r, "deep.sh", ". ./deep.sh\ntorchrun --nproc_per_node=2 train.py\n");
  sm_buf_init(&big, 1 << 20);
  for (int i = 0; i < 2000; i++)
    sm_buf_adds(&big, "if true; then\n");
  sm_buf_adds(&big, "torchrun --nproc_per_node=4 train.py\n");
  for (int i = 0; i < 2000; i++)
    sm_buf_adds(&big, "fi\n");
  put(&r, "nested.sh", sm_buf_str(&big));
  sm_buf_release(&big);
  memset(&res, 0, sizeof(res));
  extract(&r, a, 2, &res);
  ASSERT(!res.meta.f[SM_META_GPUS].known);
  sm_extract_res_release(&res);
  extract(&r, b, 2, &res);
  ASSERT(res.n_warnings > 0);
  sm_extract_res_release(&res);
  extract(&r, d, 2, &res);
  ASSERT_EQ(field_num(&res, SM_META_GPUS), 2);
  sm_extract_res_release(&res);
  {
    static const char *const n[] = {"bash", "nested.sh"};
    extract(&r, n, 2, &res);
    sm_extract_res_release(&res);
  }
  repo_drop(&r);
}

SM_TEST(extract_launchers_torchx_and_subcommands) {
  repo r;
  sm_extract_res res;
  static const char *const tx[] = {"torchx",   "run", "-s",   "local_cwd",
                                   "dist.ddp", "-j",  "2x4",  "--script",
                                   "train.py", "--",  "--lr", "0.3"};
  static const char *const cli[] = {"mytool", "finetune", "--lr", "0.2"};
  repo_make(&r);
  put(&r, "train.py",
      "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
      "p.add_argument('--lr', type=float, default=0.1)\np.parse_args()\n");
  put(&r, "pyproject.toml",
      "[project]\nname = \"mytool\"\n[project.scripts]\n"
      "mytool = \"mytool.cli.main:main\"\n");
  put(&r, "src/mytool/__init__.py", "");
  put(&r, "src/mytool/cli/__init__.py", "");
  put(&r, "src/mytool/cli/main.py", "def main():\n    pass\n");
  put(&r, "src/mytool/recipes/finetune.py",
      "from dataclasses import dataclass\n"
      "from transformers import HfArgumentParser, TrainingArguments\n"
      "@dataclass\nclass FtConfig(TrainingArguments):\n"
      "    max_length: int = 2048\n"
      "def main():\n"
      "    parser = HfArgumentParser((FtConfig,))\n"
      "    (cfg,) = parser.parse_args_into_dataclasses()\n"
      "if __name__ == '__main__':\n    main()\n");
  memset(&res, 0, sizeof(res));
  extract(&r, tx, 12, &res);
  ASSERT_EQ(field_num(&res, SM_META_GPUS), 8);
  ASSERT_EQ(field_num(&res, SM_META_NODES), 2);
  ASSERT_NEAR(field_num(&res, SM_META_LR), 0.3, 1e-12);
  ASSERT_STREQ(field_str(&res, SM_META_PARALLELISM), "ddp");
  sm_extract_res_release(&res);
  /* A console entry's subcommand runs the module of that name; its
   * dataclass parser gives the library's defaults. */
  extract(&r, cli, 4, &res);
  ASSERT_NEAR(field_num(&res, SM_META_LR), 0.2, 1e-12);
  ASSERT_EQ(field_num(&res, SM_META_ITERATIONS), 3);
  ASSERT_EQ(field_num(&res, SM_META_PER_DEVICE_BATCH_SIZE), 8);
  sm_extract_res_release(&res);
  repo_drop(&r);
}
