/* test_failure_runtimes.c - errors of runtimes other than Python, on lines
 * written for these tests: a JVM "Caused by:" chain is rooted at its last
 * cause; Go and Rust panics and a C++ exception that ended the program are
 * the first error and are classified by their own words; a traceback cut
 * before its exception line is judged by its last frame, weakly; a kill
 * for host memory after the job's own memory grew, or a cgroup's kill
 * with the job's own request in the log, is the job's, never the node's.
 * Malformed forms of each are not errors of that runtime. */
#include <math.h>

#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

static void expect_at(int where, const char *log, long line, const char *cat,
                      const char *comp) {
  expect_diag_at(where, log, line, cat, comp, NULL);
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

static int acts(const char *log) {
  return plan_acts(log, "cn-114");
}

static double conf_of(const char *log) {
  sm_diagnosis d;
  double c;

  run(log, &d);
  c = d.confidence;
  sm_diagnosis_release(&d);
  return c;
}

SM_TEST(failure_runtime_error_forms_are_recognised) {
  size_t skip;
  int tl;

  if (sm__runtime_error("Caused by: java.lang.IllegalStateException: x", 45,
                        &skip, &tl) != SM__RT_JAVA_CAUSE ||
      skip != 11 || tl != 31)
    SM_FAIL_AT("JVM cause: skip %zu type %d", skip, tl);
  if (sm__runtime_error("Exception in thread \"worker-3\" a.b.CError: y", 44,
                        &skip, &tl) != SM__RT_JAVA_HEAD ||
      skip != 31 || tl != 10)
    SM_FAIL_AT("JVM head: skip %zu type %d", skip, tl);
  if (sm__runtime_error("panic: assignment to entry in nil map", 37, &skip,
                        &tl) != SM__RT_GO_PANIC)
    SM_FAIL_AT("Go panic");
  if (sm__runtime_error("thread 'tokio-rt' panicked at src/a.rs:3:9:", 43,
                        &skip, &tl) != SM__RT_RUST_PANIC)
    SM_FAIL_AT("Rust panic");
  if (sm__runtime_error(
          "terminate called after throwing an instance of 'YAML::BadFile'", 63,
          &skip, &tl) != SM__RT_CXX_THROW ||
      tl != 13)
    SM_FAIL_AT("C++ throw: type %d", tl);
  /* Malformed: no type, no closing quote, nothing after the keyword. */
  static const char *const bad[] = {
      "Caused by: ",
      "Caused by: something went wrong",
      "Exception in thread \"main",
      "Exception in thread \"main\"",
      "panic: ",
      "thread 'main",
      "thread 'main' exited",
      "terminate called after throwing an instance of '",
      "terminate called after throwing an instance of 'std::bad_alloc",
      "terminate called without an active exception",
      "",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    if (sm__runtime_error(bad[i], strlen(bad[i]), &skip, &tl) != SM__RT_NONE)
      SM_FAIL_AT("'%s' read as a runtime error", bad[i]);
}

SM_TEST(failure_jvm_chain_is_rooted_at_its_last_cause) {
  const char *head =
      "INFO Executor: Running task 7.0 in stage 2.0\n"
      "Exception in thread \"main\" org.acme.JobFailedException: stage 2 "
      "failed after 4 attempts\n"
      "\tat org.acme.Scheduler.fail(Scheduler.scala:120)\n"
      "\tat org.acme.Scheduler.run(Scheduler.scala:88)\n"
      "Caused by: org.acme.io.ReaderException: could not read shard\n"
      "\tat org.acme.io.Reader.next(Reader.java:51)\n"
      "\t... 9 more\n";
  char log[2048];

  snprintf(log, sizeof(log),
           "%sCaused by: java.io.FileNotFoundException: /scratch/u/in/p-7 "
           "(No such file or directory)\n"
           "\tat java.io.FileInputStream.open0(Native Method)\n"
           "\t... 14 more\n",
           head);
  expect(log, 8, "user", "none");
  snprintf(log, sizeof(log),
           "%sCaused by: java.lang.NoSuchMethodError: 'void "
           "org.lib.Codec.decode(byte[])'\n"
           "\tat org.acme.io.Reader.open(Reader.java:30)\n",
           head);
  expect(log, 8, "framework", "none");
  /* A Python worker's traceback quoted by the JVM driver: the Python
   * exception that ends it is the root. */
  expect("Exception in thread \"main\" org.acme.JobFailedException: task "
         "failed\n"
         "\tat org.acme.Scheduler.fail(Scheduler.scala:120)\n"
         "Caused by: org.acme.py.PythonException: Traceback (most recent call "
         "last):\n"
         "  File \"/work/u/etl/clean.py\", line 14, in parse\n"
         "    return int(row[3])\n"
         "ValueError: invalid literal for int() with base 10: 'n/a'\n"
         "\n"
         "\tat org.acme.py.Runner.read(Runner.scala:77)\n",
         6, "user", "none");
  /* A chain of one: the head is the root. */
  expect("Exception in thread \"main\" java.lang.IllegalArgumentException: "
         "batch size must be positive, got -4\n"
         "\tat org.acme.Train.main(Train.java:12)\n",
         1, "user", "none");
  /* A "Caused by:" after unrelated output is not part of the chain. */
  expect("Exception in thread \"main\" java.lang.IllegalArgumentException: "
         "bad flag --epochs=x\n"
         "\tat org.acme.Train.main(Train.java:12)\n"
         "cleanup done\n"
         "Caused by: java.lang.ClassNotFoundException: org.x.Y\n",
         1, "user", "none");
}

SM_TEST(failure_go_rust_and_cxx_errors_are_the_first_error) {
  expect("loading shards from /data\n"
         "panic: runtime error: index out of range [7] with length 4\n"
         "\n"
         "goroutine 12 [running]:\n"
         "main.(*loader).next(0xc000120000)\n"
         "\t/src/loader/loader.go:77 +0x2a5\n"
         "exit status 2\n",
         2, "user", "none");
  /* Rust >= 1.73 puts the message on the line under the location. */
  expect("reading vocab.json\n"
         "thread 'main' panicked at src/tokenize.rs:41:22:\n"
         "called `Result::unwrap()` on an `Err` value: missing field `merges`\n"
         "stack backtrace:\n"
         "   0: rust_begin_unwind\n"
         "             at /rustc/abc/library/std/src/panicking.rs:645:5\n"
         "   1: tok::main\n",
         2, "user", "none");
  /* The older form, message quoted on the same line. */
  expect("thread 'main' panicked at 'attempt to divide by zero', "
         "src/stats.rs:9:5\n",
         1, "user", "none");
  /* C++: the line that says what was thrown is the error, not the abort
   * after it; a type the table does not know and words that do not read
   * clearly leave the class unknown (C++ throws for every kind of
   * error). */
  expect("building index\n"
         "terminate called after throwing an instance of 'std::out_of_range'\n"
         "  what():  vector::_M_range_check: __n (which is 12) >= this->size() "
         "(which is 12)\n"
         "Aborted (core dumped)\n",
         2, "unknown", "none");
  /* A what() that reports a cause the signatures know: that cause
   * decides, and the throw line stays the cascade it is. */
  expect("terminate called after throwing an instance of 'c10::Error'\n"
         "  what():  CUDA error: uncorrectable ECC error encountered\n"
         "Aborted (core dumped)\n",
         2, "infrastructure", "gpu");
}

SM_TEST(failure_cut_traceback_is_judged_by_its_last_frame) {
  const char *own = "step 40 loss 0.71\n"
                    "Traceback (most recent call last):\n"
                    "  File \"/home/ana/exp/run.py\", line 61, in <module>\n"
                    "    main(cfg)\n"
                    "  File \"/home/ana/exp/run.py\", line 44, in main\n"
                    "    x = build_batch(rows)\n";
  const char *lib =
      "Traceback (most recent call last):\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/accel/launch.py\", "
      "line 90, in run\n"
      "    self._spawn()\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/accel/launch.py\", "
      "line 130, in _spawn\n"
      "    proc.wait()\n";
  expect(own, 6, "user", "none");
  expect(lib, 5, "framework", "none");
  if (conf_of(own) > 0.4 || conf_of(lib) > 0.4)
    SM_FAIL_AT("a cut traceback must have low confidence");
  if (acts(own) || acts(lib))
    SM_FAIL_AT("a cut traceback got an automatic action");
}

SM_TEST(failure_kill_after_the_jobs_memory_grew_is_the_jobs) {
  const char *grow = "epoch 1 iter 100 loss 2.1 host mem 11.0 GiB\n"
                     "epoch 1 iter 200 loss 2.0 host mem 15.4 GiB\n"
                     "epoch 1 iter 300 loss 1.9 host mem 20.2 GiB\n"
                     "epoch 1 iter 400 loss 1.9 host mem 26.9 GiB\n"
                     "Killed\n";
  const char *flat = "epoch 1 iter 100 loss 2.1 host mem 11.0 GiB\n"
                     "epoch 1 iter 200 loss 2.0 host mem 11.2 GiB\n"
                     "epoch 1 iter 300 loss 1.9 host mem 11.1 GiB\n"
                     "epoch 1 iter 400 loss 1.9 host mem 11.0 GiB\n"
                     "Killed\n";
  const char *gpu = "iter 100 gpu mem 11.0 GiB\n"
                    "iter 200 gpu mem 15.4 GiB\n"
                    "iter 300 gpu mem 20.2 GiB\n"
                    "Killed\n";
  const char *leak = "WARNING: possible memory leak detected in the data "
                     "cache (4213 objects retained)\n"
                     "step 9000 loss 0.3\n"
                     "[1234.5] Out of memory: Killed process 4242 (python)\n";

  expect(grow, 5, "user", "none");
  expect(flat, 5, "infrastructure", "node");
  expect(gpu, 4, "infrastructure", "node");
  expect(leak, 3, "user", "none");
  if (acts(grow) || acts(flat) || acts(leak))
    SM_FAIL_AT("a memory kill got an automatic action");
}

SM_TEST(failure_cgroup_kill_with_the_jobs_request_is_the_jobs) {
  const char *req =
      "#SBATCH --mem=8G\n"
      "epoch 0 step 20 loss 3.2\n"
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=88.0. Some "
      "of your processes may have been killed by the cgroup out-of-memory "
      "handler.\n"
      "srun: error: cn-114: task 0: Out Of Memory\n";
  const char *none =
      "epoch 0 step 20 loss 3.2\n"
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=88.0. Some "
      "of your processes may have been killed by the cgroup out-of-memory "
      "handler.\n";
  expect(req, 3, "user", "none");
  expect(none, 2, "infrastructure", "node");
  if (acts(req) || acts(none))
    SM_FAIL_AT("a cgroup kill got an automatic action");
}

SM_TEST(failure_memory_figures_and_requests_on_malformed_input) {
  static const char big[] = "mem 99999999999999999999999999999999 GB";
  char huge[70000];

  if (fabs(sm__host_mem_figure("rss=1.5 GB", 10) - 1536) > 1e-6)
    SM_FAIL_AT("rss 1.5 GB");
  if (sm__host_mem_figure("mem 512 MiB", 11) != 512)
    SM_FAIL_AT("512 MiB");
  if (sm__host_mem_figure("GPU mem 3 GB", 12) >= 0)
    SM_FAIL_AT("a GPU's memory read as the host's");
  if (sm__host_mem_figure("memory", 6) >= 0 ||
      sm__host_mem_figure("", 0) >= 0 ||
      sm__host_mem_figure("mem 12 minutes", 14) >= 0 ||
      sm__host_mem_figure("mem \xff\xfe 3", 9) >= 0)
    SM_FAIL_AT("a figure read where there is none");
  if (!(sm__host_mem_figure(big, sizeof(big) - 1) > 0))
    SM_FAIL_AT("a long number");
  memset(huge, '9', sizeof(huge));
  memcpy(huge, "mem ", 4);
  if (sm__host_mem_figure(huge, sizeof(huge)) >= 0)
    SM_FAIL_AT("a figure past the line's first 4096 bytes");
  if (!sm__mem_request("srun --mem=16G python t.py", 26) ||
      !sm__mem_request("#SBATCH --mem-per-cpu=4000", 26) ||
      !sm__mem_request("TRES=cpu=8,mem=32G,node=1", 25))
    SM_FAIL_AT("a request not found");
  if (sm__mem_request("--mem=", 6) || sm__mem_request("shmem=4G", 8) ||
      sm__mem_request("gpu_mem=4G", 10) || sm__mem_request("--memo=3", 8) ||
      sm__mem_request("", 0))
    SM_FAIL_AT("a request found where there is none");
}
