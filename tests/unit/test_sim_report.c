/* test_sim_report.c - the outputs of a run: the JSON summary with the
 * docs/design.md section 3 keys, the per-job CSV, and the offline HTML report
 * with its plots; and the shipped Philly trace end to end. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "schedmate/sm_sim.h"

static const char *hol = "job_id,submit_s,duration_s,gpus,name\n"
                         "A,0,100,2,\"a, first\"\n"
                         "B,10,50,4,b\n"
                         "C,20,10,1,<c>\n";

static sm_sim_result *run_hol(const char *policy) {
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  sm_sim_result *r = NULL;
  sm_sim_config cfg;
  sm_err err = {0};

  ASSERT_OK(
      sm_sim_trace_load_mem(hol, strlen(hol), "<hol>.csv", NULL, &t, &err));
  ASSERT_OK(sm_sim_cluster_parse("1x4", &c, &err));
  sm_sim_config_init(&cfg);
  cfg.policy = policy;
  ASSERT_OK(sm_sim_run(t, c, &cfg, &r, &err));
  /* The result owns what it needs: the inputs can go first. */
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
  return r;
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v))
    SM_FAIL_AT("key %s missing or not a number", k);
  return v->valuedouble;
}

SM_TEST(sim_report_json_summary) {
  sm_sim_result *r = run_hol("fifo");
  sm_buf b;
  sm_jw w;
  cJSON *o;

  sm_buf_init(&b, 0);
  sm_jw_init(&w, &b);
  sm_sim_result_json(r, &w);
  ASSERT_OK(sm_jw_finish(&w));
  o = cJSON_Parse(b.data);
  ASSERT(o != NULL);
  ASSERT_STREQ(cJSON_GetObjectItem(o, "policy")->valuestring, "fifo");
  ASSERT_STREQ(cJSON_GetObjectItem(o, "semantic")->valuestring, "off");
  ASSERT_STREQ(cJSON_GetObjectItem(o, "trace")->valuestring, "<hol>.csv");
  ASSERT_NEAR(num(o, "jobs"), 3, 0);
  ASSERT_NEAR(num(o, "avg_jct_s"), 380.0 / 3, 1e-9);
  ASSERT_NEAR(num(o, "p99_jct_s"), 140, 0);
  ASSERT_NEAR(num(o, "median_jct_s"), 140, 0);
  ASSERT_NEAR(num(o, "avg_queue_s"), 220.0 / 3, 1e-9);
  ASSERT_NEAR(num(o, "makespan_s"), 160, 0);
  ASSERT_NEAR(num(o, "avg_util"), 410.0 / 640, 1e-9);
  ASSERT(num(o, "events") >= 6);
  ASSERT(num(o, "wall_s") >= 0);
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(o, "synthetic")));
  ASSERT_STREQ(cJSON_GetObjectItem(o, "invariants")->valuestring, "ok");
  ASSERT_NEAR(num(cJSON_GetObjectItem(o, "cluster"), "gpus"), 4, 0);
  ASSERT_NEAR(num(cJSON_GetObjectItem(o, "preempt_overhead_s"), "small"), 40,
              0);
  ASSERT(cJSON_IsArray(cJSON_GetObjectItem(o, "notes")));
  cJSON_Delete(o);
  sm_buf_release(&b);
  sm_sim_result_free(r);
}

SM_TEST(sim_report_jobs_csv) {
  sm_sim_result *r = run_hol("fifo");
  sm_buf b;
  int lines = 0;

  sm_buf_init(&b, 0);
  ASSERT_OK(sm_sim_result_jobs_csv(r, &b));
  for (size_t i = 0; i < b.len; i++)
    lines += b.data[i] == '\n';
  ASSERT_EQ(lines, 4);
  ASSERT(strncmp(b.data, "job_id,line,vc,user,name,gpus", 29) == 0);
  ASSERT(strstr(b.data, "\nA,2,,,\"a, first\",2,2,0,0,100,100,100,0,0,0,0,"
                        "unknown,completed,done,,,\n") != NULL);
  ASSERT(strstr(b.data, "\nC,4,,,<c>,1,1,20,150,160,10,140,130,130,") != NULL);
  sm_buf_release(&b);
  sm_sim_result_free(r);
}

SM_TEST(sim_report_html_offline) {
  sm_sim_result *rs[3] = {run_hol("fifo"), run_hol("sjf"), run_hol("tiresias")};
  sm_buf b;
  const char *p;
  int svgs = 0, lines = 0;

  sm_buf_init(&b, 0);
  ASSERT_OK(sm_sim_report_html((const sm_sim_result *const *)rs, 3, &b));
  ASSERT(strncmp(b.data, "<!DOCTYPE html>", 15) == 0);
  ASSERT(strstr(b.data, "</html>") != NULL);
  for (p = b.data; (p = strstr(p, "<svg xmlns")) != NULL; p++)
    svgs++;
  for (p = b.data; (p = strstr(p, "<polyline")) != NULL; p++)
    lines++;
  ASSERT_EQ(svgs, 3);
  ASSERT_EQ(lines, 9); /* three policies in three plots */
  ASSERT(strstr(b.data, "<script") == NULL);
  /* The only URL is the SVG namespace: nothing is fetched. */
  for (p = b.data; (p = strstr(p, "http")) != NULL; p++)
    ASSERT(strncmp(p, "http://www.w3.org/2000/svg", 26) == 0);
  ASSERT(strstr(b.data, "&lt;hol&gt;.csv") != NULL);
  ASSERT(strstr(b.data, "<hol>") == NULL);
  ASSERT(strstr(b.data, "tiresias") != NULL);
  ASSERT(strstr(b.data, "SYNTHETIC") == NULL);
  /* Its own title and heading: the trace, the cluster, the load. */
  ASSERT(strstr(b.data, "<title>SchedMate simulation: &lt;hol&gt;.csv on 1 "
                        "nodes x 4 GPUs, offered load ") != NULL);
  ASSERT(strstr(b.data, "<h1>&lt;hol&gt;.csv on 1 nodes x 4 GPUs") != NULL);
  ASSERT(strstr(b.data, "given as &#39;1x4&#39;") != NULL);
  /* One queueing measure, defined once. */
  ASSERT(strstr(b.data, "avg queueing delay") != NULL);
  ASSERT(strstr(b.data, "avg queue<") == NULL);
  /* Figures as a labelled table, not raw names. */
  ASSERT(strstr(b.data, "demotions to a lower queue") != NULL);
  ASSERT(strstr(b.data, "<li>demotions") == NULL);
  sm_buf_release(&b);
  /* One colour per policy whatever its place: tiresias first now. */
  {
    const sm_sim_result *ro[2] = {rs[2], rs[0]};
    sm_buf c;
    const char *t1, *t2;
    sm_buf_init(&c, 0);
    sm_buf_init(&b, 0);
    ASSERT_OK(sm_sim_report_html((const sm_sim_result *const *)rs, 3, &b));
    ASSERT_OK(sm_sim_report_html(ro, 2, &c));
    t1 = strstr(b.data, "<polyline fill='none' stroke='#9467bd'");
    t2 = strstr(c.data, "<polyline fill='none' stroke='#9467bd'");
    ASSERT(t1 != NULL && t2 != NULL); /* tiresias' colour in both */
    sm_buf_release(&b);
    sm_buf_release(&c);
  }
  for (int i = 0; i < 3; i++)
    sm_sim_result_free(rs[i]);
}

/* A setting a policy never reads is not listed under it (nor in its
 * JSON "params"), but kept apart as ignored. */
SM_TEST(sim_report_only_used_parameters) {
  sm_sim_trace *t = NULL;
  sm_sim_cluster *c = NULL;
  sm_sim_result *r = NULL;
  sm_sim_config cfg;
  sm_err err = {0};
  sm_buf b;

  ASSERT_OK(
      sm_sim_trace_load_mem(hol, strlen(hol), "<hol>.csv", NULL, &t, &err));
  ASSERT_OK(sm_sim_cluster_parse("1x4", &c, &err));
  sm_sim_config_init(&cfg);
  cfg.policy = "fifo";
  ASSERT_OK(sm_sim_config_param(&cfg, "lucid.tables=builtin"));
  ASSERT_OK(sm_sim_config_param(&cfg, "backfill=1"));
  ASSERT_OK(sm_sim_run(t, c, &cfg, &r, &err));
  ASSERT(sm_sim_result_reads_param(r, "backfill"));
  ASSERT(!sm_sim_result_reads_param(r, "lucid.tables"));
  sm_buf_init(&b, 0);
  ASSERT_OK(sm_sim_report_html((const sm_sim_result *const *)&r, 1, &b));
  ASSERT(strstr(b.data, "<code>backfill=1</code>") != NULL);
  ASSERT(strstr(b.data, "lucid.tables") == NULL);
  sm_buf_release(&b);
  sm_sim_result_free(r);
  sm_sim_cluster_free(c);
  sm_sim_trace_free(t);
}

/* The trace shipped in data/traces: 82,247 jobs, 10,650 in Lucid's week,
 * identical to ../shared's copy when that is present. */
SM_TEST(sim_shipped_philly_trace) {
  sm_sim_load_opts o;
  sm_sim_trace *t = NULL, *w = NULL, *s = NULL;
  sm_sim_cluster *c = NULL;
  sm_err err = {0};
  FILE *f;

  ASSERT_OK(sm_sim_trace_load("data/traces/sia_philly.csv.gz", NULL, &t, &err));
  ASSERT_EQ(sm_sim_trace_count(t), 82247);
  ASSERT_EQ(sm_sim_trace_format(t), SM_SIM_FMT_SIA_PHILLY);
  sm_sim_load_opts_init(&o);
  o.from = "2017-10-01 00:00:00";
  o.to = "2017-10-07 23:59:00";
  ASSERT_OK(sm_sim_trace_load("data/traces/sia_philly.csv.gz", &o, &w, &err));
  ASSERT_EQ(sm_sim_trace_count(w), 10650);
  ASSERT_OK(sm_sim_cluster_load_vcs("data/traces/philly_vc.csv", 8, &c, &err));
  ASSERT_EQ(sm_sim_cluster_gpus(c), 2816);
  {
    static const char *const pols[] = {"fifo", "sjf", "srtf", "qssf",
                                       "tiresias"};
    double fifo_q = 0;
    for (size_t i = 0; i < SM_ARRAY_LEN(pols); i++) {
      sm_sim_config cfg;
      sm_sim_result *r = NULL;
      const sm_sim_summary *m;
      sm_sim_config_init(&cfg);
      cfg.policy = pols[i];
      ASSERT_OK(sm_sim_run(w, c, &cfg, &r, &err));
      m = sm_sim_result_summary(r);
      ASSERT_EQ(m->jobs, 10650);
      ASSERT_EQ(m->unfinished, 0);
      ASSERT(m->avg_jct_s > 1000 && m->avg_jct_s < 100000);
      if (i == 0)
        fifo_q = m->avg_queue_s;
      else if (i == 1 || i == 2)
        ASSERT(m->avg_queue_s < fifo_q); /* SJF and SRTF beat FIFO */
      sm_sim_result_free(r);
    }
  }
  f = fopen("../shared/traces/philly/sia_philly.csv", "r");
  if (f != NULL) {
    fclose(f);
    ASSERT_OK(sm_sim_trace_load("../shared/traces/philly/sia_philly.csv", NULL,
                                &s, &err));
    ASSERT_EQ(sm_sim_trace_count(s), sm_sim_trace_count(t));
    for (size_t i = 0; i < sm_sim_trace_count(t); i++) {
      const sm_sim_job *a = sm_sim_trace_job(t, i);
      const sm_sim_job *b = sm_sim_trace_job(s, i);
      ASSERT(a->submit == b->submit && a->duration == b->duration &&
             a->gpus == b->gpus && strcmp(a->vc_name, b->vc_name) == 0);
    }
    sm_sim_trace_free(s);
  }
  sm_sim_cluster_free(c);
  sm_sim_trace_free(w);
  sm_sim_trace_free(t);
}
