/* test_meta.c - the metadata record and its JSON round trip. */
#include "harness.h"
#include "schedmate/sm.h"

SM_TEST(meta_set_types_and_json) {
  sm_meta m, c;
  sm_buf b;
  sm_jw w;
  sm_err err = {0};
  sm_meta_init(&m);
  sm_meta_init(&c);
  ASSERT_OK(sm_meta_set_str(&m, SM_META_MODEL_NAME, "gpt2-124m",
                            "train.py:12"));
  ASSERT_OK(sm_meta_set_num(&m, SM_META_GPUS, 8.4, "command"));
  ASSERT_OK(sm_meta_set_num(&m, SM_META_LR, 6e-4, NULL));
  ASSERT_EQ(sm_meta_set_num(&m, SM_META_TASK, 1, NULL), SM_EINVAL);
  ASSERT_EQ(sm_meta_set_str(&m, SM_META_GPUS, "8", NULL), SM_EINVAL);
  ASSERT_EQ(sm_meta_set_num(&m, SM_META_LR, 1.0 / 0.0, NULL), SM_EINVAL);
  ASSERT_EQ(sm_meta_lookup("seq_len"), SM_META_SEQ_LEN);
  ASSERT_EQ(sm_meta_lookup("nope"), -1);
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_jw_key(&w, "metadata");
  sm_meta_write_json(&m, &w);
  sm_jw_key(&w, "evidence");
  sm_meta_write_evidence(&m, &w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\"gpus\":8,") != NULL);
  ASSERT(strstr(b.data, "\"task\":null") != NULL);
  ASSERT(strstr(b.data, "\"evidence\":{\"model_name\":\"train.py:12\","
                        "\"gpus\":\"command\"}") != NULL);
  ASSERT_OK(sm_meta_from_json(&c, b.data, b.len, &err));
  ASSERT_STREQ(c.f[SM_META_MODEL_NAME].str, "gpt2-124m");
  ASSERT_STREQ(c.f[SM_META_MODEL_NAME].evidence, "train.py:12");
  ASSERT_NEAR(c.f[SM_META_LR].num, 6e-4, 1e-15);
  ASSERT(!c.f[SM_META_TASK].known);
  ASSERT_OK(sm_meta_copy(&m, &c));
  ASSERT_EQ(m.f[SM_META_GPUS].num, 8);
  sm_meta_release(&m);
  sm_meta_release(&c);
  sm_buf_release(&b);
}

SM_TEST(meta_from_json_rejects_bad_input) {
  sm_meta m;
  sm_err err = {0};
  sm_meta_init(&m);
  ASSERT_EQ(sm_meta_from_json(&m, "[1,2]", 5, &err), SM_EPARSE);
  sm_err_clear(&err);
  ASSERT_EQ(sm_meta_from_json(&m, "{\"gpus\":\"eight\"}", 16, &err),
            SM_EPARSE);
  ASSERT(strstr(err.msg, "gpus") != NULL);
  sm_err_clear(&err);
  ASSERT_EQ(sm_meta_from_json(&m, "{\"model", 7, &err), SM_EPARSE);
  ASSERT_OK(sm_meta_from_json(&m, "{\"extra\":1,\"gpus\":null}", 23, &err));
  ASSERT(!m.f[SM_META_GPUS].known);
  sm_meta_release(&m);
}
