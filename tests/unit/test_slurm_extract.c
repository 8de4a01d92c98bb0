/* test_slurm_extract.c - the extractor on an inline batch script (the
 * script Slurm holds for a job, which is not a file of the repository):
 * the same metadata as `bash script` on a file, evidence that names the
 * script, the script's own arguments, and malformed scripts. */
#include <string.h>

#include "harness.h"
#include "schedmate/sm.h"
#include "schedmate/sm_advisor.h"

#define VIT_REPO "tests/fixtures/slurm_vit/repo"
#define VIT_SCRIPT VIT_REPO "/scripts/train_vit.slurm"

static char *read_text(const char *path, size_t *len) {
  char *text = NULL;
  sm_err err = {0};
  if (sm_file_read_all(path, 1 << 20, &text, len, &err) != 0)
    SM_FAIL_AT("%s", err.msg);
  return text;
}

static int count_warnings_with(const sm_extract_res *r, const char *needle) {
  int n = 0;
  for (int i = 0; i < r->n_warnings; i++)
    n += strstr(r->warnings[i], needle) != NULL;
  return n;
}

SM_TEST(slurm_extract_inline_equals_file) {
  const char *argv[] = {"bash", "scripts/train_vit.slurm"};
  sm_extract_req q;
  sm_extract_res a, b;
  sm_err err = {0};
  size_t len;
  char *text = read_text(VIT_SCRIPT, &len);

  memset(&q, 0, sizeof(q));
  q.repo = VIT_REPO;
  q.argv = argv;
  q.argc = 2;
  ASSERT_OK(sm_extract(&q, &a, &err));
  memset(&q, 0, sizeof(q));
  q.repo = VIT_REPO;
  q.script = text;
  q.script_len = len;
  q.script_name = "slurm-job-42.sh";
  ASSERT_OK(sm_extract(&q, &b, &err));
  /* Every field has the same value as when the file is run. */
  for (int f = 0; f < SM_META_NFIELDS; f++) {
    const sm_meta_value *x = &a.meta.f[f], *y = &b.meta.f[f];
    if (x->known != y->known)
      SM_FAIL_AT("field %s: known %d vs %d", sm_meta_name(f), x->known,
                 y->known);
    if (!x->known)
      continue;
    if (sm_meta_type_of(f) == SM_META_STR)
      ASSERT_STREQ(x->str, y->str);
    else
      ASSERT_NEAR(x->num, y->num, 1e-9);
  }
  ASSERT_EQ(b.meta.f[SM_META_NODES].num, 2);
  ASSERT_EQ(b.meta.f[SM_META_GPUS].num, 16);
  ASSERT_STREQ(b.meta.f[SM_META_MODEL_NAME].str, "vit-base-patch16-224");
  /* Evidence names the inline script and its lines, as for a file. */
  ASSERT_STREQ(a.meta.f[SM_META_NODES].evidence, "scripts/train_vit.slurm:3");
  ASSERT_STREQ(b.meta.f[SM_META_NODES].evidence, "slurm-job-42.sh:3");
  ASSERT_STREQ(b.meta.f[SM_META_GPUS].evidence, "slurm-job-42.sh:20");
  /* The inline script is not a repository file: one file fewer read. */
  ASSERT_EQ(b.files_read, a.files_read - 1);
  sm_extract_res_release(&a);
  sm_extract_res_release(&b);
  sm_free(text);
}

SM_TEST(slurm_extract_inline_arguments_and_default_name) {
  /* $1 picks the config, as `sbatch script.sh CONFIG` would. */
  const char script[] =
      "#!/bin/bash\n"
      "#SBATCH --gres=gpu:4\n"
      "#SBATCH --nodes=1\n"
      "CONFIG=${1:-configs/none.yaml}\n"
      "srun torchrun --nproc_per_node=4 train.py --config \"$CONFIG\"\n";
  const char *args[] = {"configs/vit_base_in1k.yaml"};
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};

  memset(&q, 0, sizeof(q));
  q.repo = VIT_REPO;
  q.script = script;
  q.script_len = sizeof(script) - 1;
  q.argv = args;
  q.argc = 1;
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT_EQ(r.meta.f[SM_META_GPUS].num, 4);
  ASSERT_STREQ(r.meta.f[SM_META_GPUS].evidence, "batch_script:5");
  ASSERT_NEAR(r.meta.f[SM_META_LR].num, 0.003, 1e-12);
  ASSERT_STREQ(r.meta.f[SM_META_LR].evidence, "configs/vit_base_in1k.yaml:5");
  sm_extract_res_release(&r);
}

SM_TEST(slurm_extract_inline_cwd) {
  /* The script runs in the job's working directory below the root. */
  const char script[] = "#!/bin/sh\ncd ..\npython train.py --lr 0.5\n";
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};

  memset(&q, 0, sizeof(q));
  q.repo = VIT_REPO;
  q.cwd = "scripts";
  q.script = script;
  q.script_len = sizeof(script) - 1;
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT_NEAR(r.meta.f[SM_META_LR].num, 0.5, 1e-12);
  ASSERT_EQ(count_warnings_with(&r, "not found"), 0);
  sm_extract_res_release(&r);
}

SM_TEST(slurm_extract_inline_malformed) {
  sm_extract_req q;
  sm_extract_res r;
  sm_err err = {0};
  static char huge[(2 << 20) + 16];

  memset(&q, 0, sizeof(q));
  q.repo = VIT_REPO;
  /* Empty script: an answer without facts, and a warning. */
  q.script = "";
  q.script_len = 0;
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT_EQ(r.meta.f[SM_META_MODEL_NAME].known, 0);
  ASSERT(count_warnings_with(&r, "no launch command") == 1);
  sm_extract_res_release(&r);
  /* Binary content. */
  q.script = "#!/bin/bash\n\0\x01\x02python train.py\n";
  q.script_len = 30;
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT(count_warnings_with(&r, "binary") == 1);
  ASSERT_EQ(r.meta.f[SM_META_LR].known, 0);
  sm_extract_res_release(&r);
  /* Over the file cap. */
  memset(huge, '#', sizeof(huge));
  q.script = huge;
  q.script_len = sizeof(huge);
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT(count_warnings_with(&r, "file cap") == 1);
  sm_extract_res_release(&r);
  /* One huge line, invalid UTF-8 and unbalanced quotes: no crash, a
   * warning for the quotes, the good launch line still read. */
  {
    static char text[300000];
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof(text) - n,
                          "#!/bin/bash\n#SBATCH --gres=gpu:2\necho \"\xff\xfe"
                          "\xc3\x28 bad\n");
    memset(text + n, 'x', 200000);
    n += 200000;
    n += (size_t)snprintf(text + n, sizeof(text) - n,
                          "\"\necho 'unterminated\n");
    q.script = text;
    q.script_len = n;
    ASSERT_OK(sm_extract(&q, &r, &err));
    ASSERT_EQ(r.meta.f[SM_META_GPUS].num, 2);
    ASSERT(count_warnings_with(&r, "unbalanced quotes") >= 1);
    sm_extract_res_release(&r);
  }
  /* Truncated in the middle of the launch line. */
  q.script = "#!/bin/bash\npython train.py --lr 0.25 --epo";
  q.script_len = strlen(q.script);
  ASSERT_OK(sm_extract(&q, &r, &err));
  ASSERT_NEAR(r.meta.f[SM_META_LR].num, 0.25, 1e-12);
  sm_extract_res_release(&r);
  /* Neither a script nor a command. */
  q.script = NULL;
  ASSERT_EQ(sm_extract(&q, &r, &err), SM_EINVAL);
  sm_extract_res_release(&r);
}
