/* test_extract.c - the extractor's parts: shell words, the TOML subset,
 * the layered value store, name normalisation, path joining, and the
 * public sm_extract on fixture repositories and on malformed requests. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "advisor/advisor_int.h"
#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"

/* A context over repo (NULL: the fixtures directory) for internal
 * tests. */
static sm__ctx *ctx_new(const char *repo, sm_extract_req *req,
                        sm_extract_res *res) {
  sm__ctx *c = calloc(1, sizeof(*c));
  sm_err err = {0};
  memset(req, 0, sizeof(*req));
  memset(res, 0, sizeof(*res));
  req->repo = repo ? repo : "tests/fixtures";
  sm__ctx_init(c, req, res);
  if (sm__repo_open(c, &err) != 0)
    SM_FAIL_AT("repo_open: %s", err.msg);
  return c;
}

static void ctx_free(sm__ctx *c) {
  sm__ctx_release(c);
  sm_extract_res_release(c->res);
  free(c);
}

SM_TEST(extract_shell_words) {
  sm_extract_req q;
  sm_extract_res r;
  sm__ctx *c = ctx_new(NULL, &q, &r);
  sm__shvars v = {0};
  const char **w;
  const char *line;
  int n;

  sm__sh_set(c, &v, "1", "first arg");
  sm__sh_set(c, &v, "2", "second");
  sm__sh_set(c, &v, "GPUS", "8");
  sm__sh_set(c, &v, "NODES", "2");
  sm__sh_set(c, &v, "ARGS", "--lr 3e-4  --bf16");
  line = "A=1 python 'it''s' \"q $GPUS\" ${MISSING:-dflt} $1 \"$@\" "
         "--n=$((GPUS*NODES)) $ARGS \\\n  x >log.txt 2>&1 && echo done # c";
  n = sm__sh_split(c, line, strlen(line), &v, &w, 64);
  ASSERT_EQ(n, 17);
  ASSERT_STREQ(w[0], "A=1");
  ASSERT_STREQ(w[2], "its");
  ASSERT_STREQ(w[3], "q 8");
  ASSERT_STREQ(w[4], "dflt");
  /* $1 unquoted splits; "$@" keeps each argument whole. */
  ASSERT_STREQ(w[5], "first");
  ASSERT_STREQ(w[6], "arg");
  ASSERT_STREQ(w[7], "first arg");
  ASSERT_STREQ(w[8], "second");
  ASSERT_STREQ(w[9], "--n=16");
  ASSERT_STREQ(w[10], "--lr");
  ASSERT_STREQ(w[11], "3e-4");
  ASSERT_STREQ(w[12], "--bf16");
  ASSERT_STREQ(w[13], "x");
  ASSERT_STREQ(w[14], "&&");
  ASSERT_STREQ(w[15], "echo");
  ASSERT_STREQ(w[16], "done");
  /* Unbalanced quotes and command substitution. */
  ASSERT_EQ(sm__sh_split(c, "python 'x", 9, &v, &w, 8), -1);
  ASSERT_EQ(sm__sh_split(c, "echo \"x", 7, &v, &w, 8), -1);
  n = sm__sh_split(c, "a $(rm -rf /) `id` b", 20, &v, &w, 8);
  ASSERT_EQ(n, 2);
  ASSERT_STREQ(w[1], "b");
  /* Without variables nothing is expanded. */
  n = sm__sh_split(c, "echo $GPUS", 10, NULL, &w, 8);
  ASSERT_STREQ(w[1], "$GPUS");
  /* The word cap holds. */
  n = sm__sh_split(c, "a b c d e f", 11, NULL, &w, 3);
  ASSERT_EQ(n, 3);
  ctx_free(c);
}

SM_TEST(extract_toml_tree) {
  sm_extract_req q;
  sm_extract_res r;
  sm__ctx *c = ctx_new(NULL, &q, &r);
  const char *t = "# top\nname = \"x # not a comment\"\n[train]\n"
                  "lr = 2.0e-3 # peak\nsteps = 300_000\n"
                  "doc = \"\"\"\nmany\nlines\n\"\"\"\n[model.enc]\nd = 512\n"
                  "opt = { name = \"adamw\", betas = [0.9,\n 0.95] }\n"
                  "[[datasets]]\npath = \"a\"\n[[datasets]]\npath = \"b\"\n";
  sm__vnode *v = sm__vt_toml(c, "t.toml", t, strlen(t)), *k;
  ASSERT(v != NULL);
  k = sm__vt_get(v, "name");
  ASSERT_STREQ(k->str, "x # not a comment");
  k = sm__vt_get_path(v, "train.lr");
  ASSERT_EQ(k->t, SM__T_NUM);
  ASSERT(k->num == 2.0e-3);
  ASSERT_EQ(k->line, 4);
  ASSERT(sm__vt_get_path(v, "train.steps")->num == 300000);
  ASSERT_STREQ(sm__vt_get_path(v, "train.doc")->str, "many\nlines\n");
  k = sm__vt_get_path(v, "model.enc.d");
  ASSERT_EQ(k->line, 11);
  ASSERT_STREQ(sm__vt_get_path(v, "model.enc.opt.name")->str, "adamw");
  ASSERT_EQ(sm__vt_get_path(v, "model.enc.opt.betas")->n, 2);
  k = sm__vt_get(v, "datasets");
  ASSERT_EQ(k->t, SM__T_LIST);
  ASSERT_EQ(k->n, 2);
  ASSERT_STREQ(sm__vt_get(k->e[1].v, "path")->str, "b");
  /* Malformed input: what parsed is kept, a warning says so. */
  v = sm__vt_toml(c, "bad.toml", "[x\na = 1\n", 10);
  ASSERT(v != NULL);
  ASSERT(r.n_warnings > 0);
  v = sm__vt_toml(c, "empty.toml", "", 0);
  ASSERT(v != NULL && v->n == 0);
  v = sm__vt_toml(c, "open.toml", "s = \'\'\'\nx\n", 10);
  ASSERT(v != NULL);
  ctx_free(c);
}

SM_TEST(extract_params_layers) {
  sm_extract_req q;
  sm_extract_res r;
  sm__ctx *c = ctx_new(NULL, &q, &r);
  const char *const lr[] = {"learning_rate", "lr", NULL};
  const char *const bs[] = {"data.batch_size", NULL};
  const char *const g[] = {"global", NULL};
  const char *const d[] = {"depths", NULL};
  const sm__param *p;
  double v;

  sm__param_text(c, "--lr", "0.1", SM__L_ENTRY, "a.py:1");
  sm__param_text(c, "learning_rate", "auto", SM__L_CMD, "command");
  p = sm__param_get(c, lr);
  ASSERT(p != NULL);
  ASSERT_NEAR(p->num, 0.1, 1e-12); /* "auto" defers */
  sm__param_text(c, "optimizer.params.lr", "3e-4", SM__L_CONFIG, "c:2");
  p = sm__param_get(c, lr);
  ASSERT_NEAR(p->num, 3e-4, 1e-12);
  ASSERT_STREQ(p->ev, "c:2");
  sm__param_text(c, "DATA.BATCH_SIZE", "128", SM__L_CODE, "config.py:9");
  sm__param_text(c, "--batch-size", "64", SM__L_CMD, "command");
  sm__param_str(c, "global", "data.batch_size world_size * 2 *", SM__V_EXPR,
                SM__L_ENTRY, "main.py:3");
  c->world = 8;
  p = sm__param_get(c, g);
  ASSERT_OK(sm__param_value(c, p, &v));
  ASSERT_NEAR(v, 64 * 8 * 2, 1e-9); /* the command's --batch-size wins */
  p = sm__param_get(c, bs);
  ASSERT_NEAR(p->num, 128, 1e-9);
  sm__param_text(c, "MODEL.SWIN.DEPTHS", "[2, 2, 18, 2]", SM__L_CONFIG, "y:7");
  p = sm__param_get(c, d);
  ASSERT_EQ(p->kind, SM__V_LIST);
  ASSERT_OK(sm__param_value(c, p, &v));
  ASSERT_NEAR(v, 24, 1e-9);
  /* References follow to the value; loops end. */
  sm__param_str(c, "a", "b", SM__V_REF, SM__L_ENTRY, "x:1");
  sm__param_str(c, "b", "a", SM__V_REF, SM__L_ENTRY, "x:2");
  {
    const char *const an[] = {"a", NULL};
    ASSERT(sm__param_get(c, an) == NULL);
  }
  sm__param_text(c, "c", "None", SM__L_CMD, "command");
  {
    const char *const cn[] = {"c", NULL};
    p = sm__param_get(c, cn);
    ASSERT_EQ(p->kind, SM__V_NULL);
    ASSERT(sm__param_value(c, p, &v) != 0);
  }
  /* An OmegaConf interpolation is a reference to another key. */
  sm__param_text(c, "paths.data_dir", "/data/mnist", SM__L_CONFIG, "p:1");
  sm__param_text(c, "data.data_dir", "${paths.data_dir}", SM__L_CONFIG, "d:1");
  {
    const char *const dn[] = {"data.data_dir", NULL};
    p = sm__param_get(c, dn);
    ASSERT(p != NULL);
    ASSERT_STREQ(p->str, "/data/mnist");
  }
  /* Division by zero and malformed expressions are unknown. */
  p = sm__param_str(c, "z", "1 0 /", SM__V_EXPR, SM__L_CMD, "x");
  ASSERT(sm__param_value(c, p, &v) != 0);
  p = sm__param_str(c, "z2", "1 +", SM__V_EXPR, SM__L_CMD, "x");
  ASSERT(sm__param_value(c, p, &v) != 0);
  ctx_free(c);
}

SM_TEST(extract_name_normalisation) {
  sm_extract_req q;
  sm_extract_res r;
  sm__ctx *c = ctx_new(NULL, &q, &r);
  const char *t, *d;
  ASSERT_STREQ(sm__norm_model(c, "meta-llama/Meta-Llama-3-8B", &t, &d),
               "llama-3-8b");
  ASSERT_STREQ(d, "nlp");
  ASSERT_STREQ(sm__norm_model(c, "llama3-8b", NULL, NULL), "llama-3-8b");
  ASSERT_STREQ(sm__norm_model(c, "/models/llama-7b-hf/", NULL, NULL),
               "llama-7b");
  ASSERT_STREQ(sm__norm_model(c, "~/weights/Llama-2-13b-hf", NULL, NULL),
               "llama-2-13b");
  ASSERT_STREQ(sm__norm_model(c, "vit_small", NULL, NULL), "vit-small-patch16");
  ASSERT_STREQ(sm__norm_model(c, "swin_tiny_patch4_window7_224", NULL, NULL),
               "swin-tiny-patch4-window7-224");
  ASSERT_STREQ(sm__norm_model(c, "SomeNewNet", NULL, NULL), "somenewnet");
  ASSERT(sm__norm_model(c, "checkpoints/", NULL, NULL) == NULL);
  ASSERT(sm__norm_model(c, "", NULL, NULL) == NULL);
  ASSERT(sm__norm_model(c, "12345", NULL, NULL) == NULL);
  ASSERT_STREQ(sm__norm_dataset(c, "/data/imagenet/train", &t, &d),
               "imagenet-1k");
  ASSERT_STREQ(t, "image_classification");
  ASSERT_STREQ(sm__norm_dataset(c, "/data/imagenet22k", NULL, NULL),
               "imagenet-22k");
  ASSERT_STREQ(sm__norm_dataset(c, "./alpaca_data.json", NULL, NULL),
               "alpaca-52k");
  ASSERT_STREQ(
      sm__norm_dataset(c, "data/enwik8/enwik8_text_document", NULL, NULL),
      "enwik8");
  ASSERT_STREQ(sm__norm_dataset(c, "/data/coco_panoptic", NULL, NULL),
               "coco-panoptic-2017");
  ASSERT(sm__norm_dataset(c, "/data/train/", NULL, NULL) == NULL);
  /* Interpolations are not names. */
  ASSERT_STREQ(sm__norm_dataset(c, "${paths.data_dir}/mnist", NULL, NULL),
               "mnist");
  ASSERT(sm__norm_dataset(c, "${paths.data_dir}", NULL, NULL) == NULL);
  ctx_free(c);
}

SM_TEST(extract_path_join) {
  sm_extract_req q;
  sm_extract_res r;
  sm__ctx *c = ctx_new(NULL, &q, &r);
  char abs[4200];
  ASSERT_STREQ(sm__repo_join(c, "a/b", "../c/./d.py"), "a/c/d.py");
  ASSERT_STREQ(sm__repo_join(c, "", "x//y/"), "x/y");
  ASSERT(sm__repo_join(c, "a", "../../etc/passwd") == NULL);
  ASSERT(sm__repo_join(c, "", "/etc/passwd") == NULL);
  ASSERT(sm__repo_join(c, "", "~/x") == NULL);
  snprintf(abs, sizeof(abs), "%s/cifar_argparse/repo/train.py", c->root);
  ASSERT_STREQ(sm__repo_join(c, "zzz", abs), "cifar_argparse/repo/train.py");
  ASSERT(sm__repo_is_file(c, "cifar_argparse/repo/train.py"));
  ASSERT(!sm__repo_is_file(c, "cifar_argparse/repo"));
  ASSERT(sm__repo_is_dir(c, "cifar_argparse/repo"));
  ctx_free(c);
}

SM_TEST(extract_api_fixture) {
  const char *argv[] = {"torchrun", "--standalone", "--nproc_per_node=4",
                        "train.py", "config/train_gpt2.py"};
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};
  memset(&q, 0, sizeof(q));
  q.repo = "tests/fixtures/nanogpt_config/repo";
  q.argv = argv;
  q.argc = 5;
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT_EQ(r.meta.f[SM_META_GPUS].num, 4);
  ASSERT_STREQ(r.meta.f[SM_META_GPUS].evidence, "command");
  ASSERT_EQ(r.meta.f[SM_META_PER_DEVICE_BATCH_SIZE].num, 12);
  /* Accumulation is divided over the ranks: 12 x 40 whatever the GPUs. */
  ASSERT_EQ(r.meta.f[SM_META_GLOBAL_BATCH_SIZE].num, 480);
  ASSERT_STREQ(r.meta.f[SM_META_MODEL_NAME].str, "gpt2-124m");
  ASSERT_EQ(r.files_read, 3);
  ASSERT(r.elapsed_ms >= 0);
  sm_extract_res_release(&r);
  sm_extract_res_release(&r); /* twice is harmless */
}

SM_TEST(extract_api_bad_requests) {
  const char *argv[] = {"python", "train.py"};
  const char *nul[] = {"python", NULL};
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};
  memset(&q, 0, sizeof(q));
  q.repo = "tests/fixtures/cifar_argparse/repo";
  ASSERT_EQ(sm_extract(&q, &r, &err), SM_EINVAL);
  sm_extract_res_release(&r);
  q.argv = nul;
  q.argc = 2;
  sm_err_clear(&err);
  ASSERT_EQ(sm_extract(&q, &r, &err), SM_EINVAL);
  sm_extract_res_release(&r);
  q.argv = argv;
  q.repo = "tests/fixtures/no-such-dir";
  sm_err_clear(&err);
  ASSERT_EQ(sm_extract(&q, &r, &err), SM_ENOENT);
  ASSERT(strstr(err.msg, "no-such-dir") != NULL);
  sm_extract_res_release(&r);
  q.repo = "tests/fixtures/cifar_argparse/repo/train.py";
  sm_err_clear(&err);
  ASSERT(sm_extract(&q, &r, &err) < 0);
  sm_extract_res_release(&r);
  q.repo = "tests/fixtures/cifar_argparse/repo";
  q.cwd = "../../..";
  sm_err_clear(&err);
  ASSERT_EQ(sm_extract(&q, &r, &err), SM_EESCAPE);
  sm_extract_res_release(&r);
}

SM_TEST(extract_aliases_load) {
  sm_err err = {0};
  const char bad[] = "model\tx\n";
  ASSERT_EQ(sm_extract_load_aliases(bad, sizeof(bad) - 1, &err), SM_EPARSE);
  ASSERT(strstr(err.msg, "line 1") != NULL);
  ASSERT_EQ(sm_extract_load_aliases("a\0b", 3, &err), SM_EPARSE);
}
