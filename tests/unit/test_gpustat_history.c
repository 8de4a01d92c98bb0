/* test_gpustat_history.c - GPU metrics in the history: gpu_mem_mib and the
 * measurement's provenance (source, GPU model, driver) through every
 * store, old records without them, wrong types; and advise's utilisation
 * estimate with its provenance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "harness.h"
#include "schedmate/sm.h"

static void job_meta(sm_meta *m, const char *model) {
  sm_meta_init(m);
  sm_meta_set_str(m, SM_META_MODEL_NAME, model, "train.py:12");
  sm_meta_set_str(m, SM_META_TASK, "image_classification", "train.py:3");
  sm_meta_set_str(m, SM_META_DATASET, "imagenet", "train.py:20");
  sm_meta_set_num(m, SM_META_ITERATIONS, 90, "command");
  sm_meta_set_str(m, SM_META_ITERATION_TYPE, "epochs", "command");
  sm_meta_set_num(m, SM_META_GLOBAL_BATCH_SIZE, 1024, "command");
  sm_meta_set_num(m, SM_META_LR, 0.4, "command");
  sm_meta_set_num(m, SM_META_GPUS, 8, "slurm:request");
}

static void measured(sm_record *r, const char *id, double dur, double util,
                     double mem, const char *driver, sm_end_state es) {
  sm_record_init(r);
  r->id = sm_strdup(id);
  job_meta(&r->meta, "resnet50");
  r->duration_s = dur;
  r->end_state = es;
  r->sm_util = util;
  r->gpu_mem_mib = mem;
  if (!isnan(util)) {
    r->util_source = sm_strdup("nvml");
    r->gpu_model = sm_strdup("NVIDIA A100-SXM4-80GB");
    r->driver_version = sm_strdup(driver);
  }
  r->submit_time = 1.7e9;
  sm_record_fingerprint(r);
}

static void roundtrip(const char *uri) {
  sm_err err = {0};
  sm_store *s = sm_store_open(uri, SM_STORE_CREATE, 0, &err);
  sm_record r, g;
  if (s == NULL)
    SM_FAIL_AT("open %s: %s", uri, err.msg);
  measured(&r, "c:1", 3600, 78.5, 31337, "535.104.05", SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  measured(&r, "c:2", 3500, NAN, NAN, NULL, SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  sm_record_init(&g);
  ASSERT_OK(sm_store_get(s, "c:1", &g, &err));
  ASSERT_NEAR(g.sm_util, 78.5, 1e-9);
  ASSERT_NEAR(g.gpu_mem_mib, 31337, 1e-9);
  ASSERT_STREQ(g.util_source, "nvml");
  ASSERT_STREQ(g.gpu_model, "NVIDIA A100-SXM4-80GB");
  ASSERT_STREQ(g.driver_version, "535.104.05");
  ASSERT_OK(sm_store_get(s, "c:2", &g, &err));
  ASSERT(isnan(g.sm_util) && isnan(g.gpu_mem_mib));
  ASSERT(g.util_source == NULL && g.gpu_model == NULL);
  sm_record_release(&g);
  sm_store_close(s);
}

SM_TEST(gpustat_history_fields_roundtrip_mem_and_sqlite) {
  char dir[] = "/tmp/sm-gpuhist.XXXXXX", path[128], cmd[160];
  roundtrip("mem:");
  ASSERT(mkdtemp(dir) != NULL);
  snprintf(path, sizeof(path), "%s/h.db", dir);
  roundtrip(path);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ASSERT_EQ(system(cmd), 0);
}

SM_TEST(gpustat_history_fields_roundtrip_redis) {
  const char *url = getenv("SM_REDIS_URL");
  char uri[256];
  if (url == NULL)
    SM_SKIP("SM_REDIS_URL not set (tests/services.sh starts Redis)");
  snprintf(uri, sizeof(uri), "%s?prefix=gpu%d", url, (int)getpid());
  roundtrip(uri);
}

SM_TEST(gpustat_history_json_old_and_bad) {
  sm_record r;
  sm_err err = {0};
  static const char old[] =
      "{\"id\":\"old:1\",\"duration_s\":60,\"sm_util\":40,"
      "\"end_state\":\"completed\"}";
  static const char *const bad[] = {
      "{\"id\":\"b\",\"duration_s\":1,\"gpu_mem_mib\":\"big\"}",
      "{\"id\":\"b\",\"duration_s\":1,\"gpu_mem_mib\":-1}",
      "{\"id\":\"b\",\"duration_s\":1,\"gpu_model\":5}",
      "{\"id\":\"b\",\"duration_s\":1,\"driver_version\":[\"535\"]}",
      "{\"id\":\"b\",\"duration_s\":1,\"util_source\":{}}",
  };
  sm_record_init(&r);
  /* A record written before these fields existed. */
  ASSERT_OK(sm_record_from_json(&r, old, sizeof(old) - 1, &err));
  ASSERT_NEAR(r.sm_util, 40, 1e-9);
  ASSERT(isnan(r.gpu_mem_mib));
  ASSERT(r.util_source == NULL && r.driver_version == NULL);
  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    sm_err_clear(&err);
    ASSERT_EQ(sm_record_from_json(&r, bad[i], strlen(bad[i]), &err), SM_EPARSE);
    ASSERT(err.msg[0] != '\0');
  }
  sm_record_release(&r);
}

SM_TEST(gpustat_advise_utilisation_with_provenance) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", SM_STORE_CREATE, 0, &err);
  sm_record r;
  sm_meta q;
  sm_advice a;
  sm_buf b;
  sm_jw w;
  cJSON *o, *est, *prov;
  ASSERT(s != NULL);
  measured(&r, "c:1", 3600, 70, 30000, "535.104.05", SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  measured(&r, "c:2", 3700, 80, 32000, "550.54.15", SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  /* Completed but never measured: a duration, no utilisation. */
  measured(&r, "c:3", 3650, NAN, NAN, NULL, SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  /* Cancelled: its utilisation does not count either. */
  measured(&r, "c:4", 100, 10, 2000, "535.104.05", SM_END_CANCELED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  job_meta(&q, "resnet50");
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.est.valid, 1);
  ASSERT_NEAR(a.est.sm_util, 75, 1e-9);
  ASSERT_EQ(a.est.n_util, 2);
  ASSERT_NEAR(a.est.gpu_mem_mib, 31000, 1e-9);
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_advice_write_json(&a, &w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  o = cJSON_Parse(b.data);
  ASSERT(o != NULL);
  est = cJSON_GetObjectItem(o, "estimate");
  ASSERT_NEAR(cJSON_GetObjectItem(est, "sm_util")->valuedouble, 75, 1e-9);
  ASSERT_NEAR(cJSON_GetObjectItem(est, "gpu_mem_mib")->valuedouble, 31000,
              1e-9);
  prov = cJSON_GetObjectItem(est, "sm_util_provenance");
  ASSERT(cJSON_IsObject(prov));
  ASSERT_EQ(cJSON_GetObjectItem(prov, "n")->valueint, 2);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(prov, "jobs")), 2);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(prov, "sources")), 1);
  ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(prov, "gpu_models"), 0)
                   ->valuestring,
               "NVIDIA A100-SXM4-80GB");
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(prov, "gpu_models")), 1);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(prov, "driver_versions")),
            2);
  /* Each match carries its own measurement. */
  ASSERT(strstr(b.data, "\"gpu_mem_mib\":30000") != NULL);
  ASSERT(strstr(b.data, "\"driver_version\":\"550.54.15\"") != NULL);
  cJSON_Delete(o);
  sm_buf_release(&b);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}

SM_TEST(gpustat_advise_without_measurements_says_null) {
  sm_err err = {0};
  sm_store *s = sm_store_open("mem:", SM_STORE_CREATE, 0, &err);
  sm_record r;
  sm_meta q;
  sm_advice a;
  sm_buf b;
  sm_jw w;
  measured(&r, "c:1", 3600, NAN, NAN, NULL, SM_END_COMPLETED);
  ASSERT_OK(sm_store_put(s, &r, &err));
  sm_record_release(&r);
  job_meta(&q, "resnet50");
  sm_advice_init(&a);
  ASSERT_OK(sm_advise(s, &q, NULL, NULL, &a, &err));
  ASSERT_EQ(a.est.valid, 1);
  ASSERT(isnan(a.est.sm_util) && isnan(a.est.gpu_mem_mib));
  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_advice_write_json(&a, &w);
  sm_jw_obj_end(&w);
  ASSERT_OK(sm_jw_finish(&w));
  ASSERT(strstr(b.data, "\"sm_util\":null,\"gpu_mem_mib\":null,"
                        "\"sm_util_provenance\":null") != NULL);
  sm_buf_release(&b);
  sm_advice_release(&a);
  sm_meta_release(&q);
  sm_store_close(s);
}
