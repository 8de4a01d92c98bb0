/* test_failure_earned.c - an infrastructure verdict must earn the
 * planner's confidence, on lines written for these tests: only a report
 * of a broken part (a fault) reaches the gate and gets a node fenced off;
 * a resource that ran out, an event from outside and an inference stay
 * below it; the same fault reported from several hosts is not located on
 * one node; a peer's network error after a crash does not explain the
 * crash; phrases that programs print for other reasons do not match the
 * hardware signatures. */
#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

static int has(const sm_plan *p, const char *action) {
  for (int i = 0; i < p->n_steps; i++)
    if (strcmp(p->steps[i].action, action) == 0)
      return 1;
  return 0;
}

/* Diagnoses log and plans at threshold th (0: the default) with the node
 * known; returns the plan's automatic actions as bits: 1 isolate, 2
 * restart. */
static int acts(const sm_diagnosis *d, double th) {
  sm_plan p;
  sm_plan_opts o = {0};
  sm_err err = {0};
  int r;

  o.threshold = th;
  o.node = "gpu-a07";
  if (sm_plan_make(db_get(), d, &o, &p, &err) != 0)
    SM_FAIL_AT("plan: %s", err.msg);
  r = (has(&p, "isolate_node") || has(&p, "request_replacement")) |
      (has(&p, "restart_from_checkpoint") << 1);
  sm_plan_release(&p);
  return r;
}

typedef struct ecase {
  const char *log;   /* the log */
  const char *comp;  /* expected component (category infrastructure) */
  const char *basis; /* expected basis */
} ecase;

SM_TEST(failure_resource_limits_never_reach_the_gate) {
  static const ecase cases[] = {
      {"step 10 loss 2.0\n"
       "Mar  3 04:05:06 gpu-a07 kernel: Out of memory: Killed process 4121 "
       "(python) total-vm:91200000kB, anon-rss:80100000kB\n",
       "node", "limit"},
      {"step 10 loss 2.0\n"
       "slurmstepd: error: Detected 1 oom_kill event in StepId=51.0. Some of "
       "the step tasks have been OOM Killed.\n",
       "node", "limit"},
      {"step 10 loss 2.0\n"
       "trainer-0:88:90 [0] NCCL WARN Error while creating shared memory "
       "segment /dev/shm/nccl-Qx1 (size 9637888)\n",
       "node", "limit"},
      /* A loader worker killed, and the kernel's report that the host
       * ran out (without it the kill is the job's loader sizing). */
      {"step 10 loss 2.0\n"
       "RuntimeError: DataLoader worker (pid 5121) is killed by signal: "
       "Killed.\n"
       "Mar  3 04:05:07 gpu-a07 kernel: Out of memory: Killed process 5121 "
       "(pt_data_worker) total-vm:21200000kB\n",
       "node", "limit"},
      {"saving checkpoint\n"
       "OSError: [Errno 28] No space left on device: '/scratch/u/ckpt/"
       "step_400.pt'\n",
       "storage", "limit"},
      {"saving checkpoint\n"
       "OSError: [Errno 122] Disk quota exceeded\n",
       "storage", "limit"},
      /* Memory of a shared GPU held by another process. */
      {"step 1 loss 2.0\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
       "GiB. GPU 0 has a total capacity of 79.10 GiB of which 312.00 MiB is "
       "free. Process 4411 has 71.20 GiB memory in use. Including "
       "non-PyTorch memory, this process has 7.50 GiB memory in use.\n",
       "gpu", "limit"},
      {"pod trainer-5 status: Evicted. The node was low on resource: "
       "memory.\n",
       "node", "limit"},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    int a, a_low;
    run(cases[i].log, &d);
    a = acts(&d, 0);
    a_low = acts(&d, 0.5);
    if (!d.failure || strcmp(d.category, "infrastructure") ||
        strcmp(d.component, cases[i].comp) || d.basis == NULL ||
        strcmp(d.basis, cases[i].basis) || d.confidence > SM__EV_CEILING ||
        a != 0 || (a_low & 1) != 0)
      SM_FAIL_AT("case %zu: %s/%s basis %s conf %.2f acts %d/%d (%s)", i,
                 d.category, d.component, d.basis ? d.basis : "-", d.confidence,
                 a, a_low, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_faults_of_a_part_reach_the_gate) {
  static const ecase cases[] = {
      {"step 10 loss 2.0\n"
       "[Tue Mar  4 10:00:01 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=7, GPU "
       "has fallen off the bus.\n",
       "gpu", "fault"},
      {"step 10 loss 2.0\n"
       "RuntimeError: CUDA error: uncorrectable ECC error encountered\n",
       "gpu", "fault"},
      {"step 10 loss 2.0\n"
       "gpu-a07:900:930 [3] NCCL WARN NET/IB : Got async event : port error\n",
       "network", "fault"},
      {"step 10 loss 2.0\n"
       "Mar  4 10:00:01 gpu-a07 kernel: mce: [Hardware Error]: CPU 3: "
       "Machine Check Exception: 5 Bank 7: be00000000800400\n",
       "node", "fault"},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    int a;
    run(cases[i].log, &d);
    a = acts(&d, 0);
    if (!d.failure || strcmp(d.category, "infrastructure") ||
        strcmp(d.component, cases[i].comp) || d.basis == NULL ||
        strcmp(d.basis, cases[i].basis) || d.confidence < 0.8 || !(a & 1))
      SM_FAIL_AT("case %zu: %s/%s basis %s conf %.2f acts %d (%s)", i,
                 d.category, d.component, d.basis ? d.basis : "-", d.confidence,
                 a, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
  }
}

/* The same line printed by hosts host0..host(n-1), pdsh style. */
static void from_hosts(sm_buf *b, const char *line, int n, int distinct) {
  sm_buf_addf(b, "gpu-a01: step 400 loss 1.10\n");
  for (int i = 0; i < n; i++)
    sm_buf_addf(b, "gpu-a%02d: %s\n", distinct ? i + 1 : 1, line);
  sm_buf_addc(b, '\0');
}

SM_TEST(failure_a_fault_on_many_hosts_is_not_located) {
  static const char ecc[] =
      "RuntimeError: CUDA error: uncorrectable ECC error encountered";
  static const char ib[] =
      "NCCL WARN NET/IB : Got completion from peer 10.0.0.9<40111> with "
      "status=12 opcode=0 len=0 vendor err 129 (Send)";
  struct {
    const char *line;
    int n, distinct, located;
  } cases[] = {
      {ecc, 1, 1, 1}, /* one GPU */
      {ecc, 4, 0, 1}, /* one host, said four times */
      {ecc, 3, 1, 0}, /* three hosts at once: not one broken GPU */
      {ib, 2, 1, 1},  /* the two ends of a path */
      {ib, 4, 1, 0},  /* the whole fabric, or the job's own setting */
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    from_hosts(&b, cases[i].line, cases[i].n, cases[i].distinct);
    run(b.data, &d);
    ASSERT_STREQ(d.category, "infrastructure");
    if ((d.confidence >= 0.8) != cases[i].located)
      SM_FAIL_AT("case %zu: conf %.2f, want %s (%s)", i, d.confidence,
                 cases[i].located ? "located" : "not located",
                 d.reason ? d.reason : "-");
    if (!cases[i].located && (acts(&d, 0) & 1))
      SM_FAIL_AT("case %zu: isolates a node for a fault of many", i);
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
}

SM_TEST(failure_peer_network_errors_after_a_crash_do_not_explain_it) {
  /* One rank's kernel crashes; its peers then lose their connections. */
  sm_diagnosis d;

  run("step 900 loss 1.1\n"
      "[rank1]: RuntimeError: CUDA error: an illegal memory access was "
      "encountered\n"
      "gpu-b02:700:731 [5] NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.7<40111> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
      "gpu-b02:700:731 [5] NCCL INFO transport/net.cc:1008 -> 6\n",
      &d);
  ASSERT_EQ(d.first_error_line, 2);
  ASSERT(strcmp(d.category, "infrastructure") != 0);
  ASSERT_EQ(acts(&d, 0), 0);
  sm_diagnosis_release(&d);
  /* The driver's report of the GPU after the crash still explains it. */
  run("step 900 loss 1.1\n"
      "[rank1]: RuntimeError: CUDA error: an illegal memory access was "
      "encountered\n"
      "[Tue Mar  4 10:00:01 2025] NVRM: Xid (PCI:0000:3b:00): 48, pid=7, An "
      "uncorrectable double bit error (DBE) has been detected\n",
      &d);
  ASSERT_EQ(d.first_error_line, 2);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.component, "gpu");
  sm_diagnosis_release(&d);
}

SM_TEST(failure_hardware_signatures_need_their_context) {
  /* Words a hardware signature uses, in messages about something else. */
  static const char *const lines[] = {
      "loader: retry count exceeded while fetching the library index",
      "pipeline: node train_model failed with error: ValueError",
      "setup: system not yet initialized, call init() first",
      "http: error 214 from the metrics endpoint",
      "ui: the export button is down",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(lines); i++) {
    sm_sigmatch m;
    if (sm_sigdb_match(db_get(), lines[i], strlen(lines[i]), &m) &&
        strcmp(m.category, "infrastructure") == 0 && m.confidence >= 0.8)
      SM_FAIL_AT("'%s' matches %s (%s)", lines[i], m.name, m.component);
  }
  /* In their context they still match. */
  {
    static const char *const hw[] = {
        "mlx5_0: retry count exceeded on qp 0x1a3",
        "slurmctld: node gpu-c12 not responding, setting DOWN",
        "RuntimeError: CUDA error: system not yet initialized",
        "cuInit returned error 214",
        "mlx5_core 0000:5e:00.0 ib0: Link is Down",
    };
    for (size_t i = 0; i < SM_ARRAY_LEN(hw); i++) {
      sm_sigmatch m;
      if (!sm_sigdb_match(db_get(), hw[i], strlen(hw[i]), &m) ||
          strcmp(m.category, "infrastructure") != 0)
        SM_FAIL_AT("'%s' does not match a hardware signature", hw[i]);
    }
  }
}

SM_TEST(failure_basis_is_in_the_json) {
  sm_diagnosis d;
  sm_buf b;
  sm_jw w;

  run("step 10 loss 2.0\n"
      "OSError: [Errno 28] No space left on device\n",
      &d);
  sm_buf_init(&b, 1 << 16);
  sm_jw_init(&w, &b);
  sm_jw_obj_begin(&w);
  sm_diagnosis_json(&d, NULL, &w);
  sm_jw_obj_end(&w);
  ASSERT_EQ(sm_jw_finish(&w), 0);
  sm_buf_addc(&b, '\0');
  ASSERT(strstr(b.data, "\"basis\":\"limit\"") != NULL);
  sm_buf_release(&b);
  sm_diagnosis_release(&d);
  /* Not infrastructure: no basis. */
  run("KeyError: 'x'\n", &d);
  ASSERT(d.basis == NULL);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_a_fabric_fault_at_first_use_is_not_sure) {
  /* The first collective fails on the fabric, with no setting shown: a
   * setting the log does not show is as likely as a broken link. */
  static const char *const first[] = {
      "n1:100:100 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "n1:100:120 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got "
      "completion from peer 10.0.0.2<51234> with status=12 opcode=0 len=0 "
      "vendor err 129 (Send)\n",
      "n1:100:100 [0] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_modify_qp "
      "failed with error Connection timed out\n",
      "n1:100:100 [0] NCCL WARN NET/OFI Request 0x7f completed with error. "
      "RC: 5. Error: Input/output error\n",
      "n1:100:120 [0] NCCL WARN NET/IB : Got completion from peer "
      "10.0.0.2<51234> with error 4, opcode 0, len 0, vendor err 81\n",
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(first); i++) {
    sm_diagnosis d;
    sm_buf b;
    run(first[i], &d);
    if (strcmp(d.category, "infrastructure") || d.confidence >= 0.8 ||
        acts(&d, 0) != 0)
      SM_FAIL_AT("first use %zu: %s conf %.2f (%s)", i, d.category,
                 d.confidence, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    /* The same after training went on: the fabric's. */
    sm_buf_init(&b, 1 << 16);
    sm_buf_addf(&b, "iteration 5200 | loss 2.113 | 610 ms\n%s", first[i]);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (strcmp(d.category, "infrastructure") || d.confidence < 0.8)
      SM_FAIL_AT("after progress %zu: %s conf %.2f (%s)", i, d.category,
                 d.confidence, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
}

SM_TEST(failure_one_ambiguous_family_does_not_corroborate_itself) {
  /* A driver/library mismatch and the container runtime's account of it
   * are one piece of evidence about the node's state. */
  sm_diagnosis d;

  run("docker: Error response from daemon: failed to create task: "
      "nvidia-container-cli: initialization error: nvml error: "
      "driver/library version mismatch: unknown.\n"
      "Failed to initialize NVML: Driver/library version mismatch\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT(d.confidence < 0.8);
  ASSERT_EQ(acts(&d, 0), 0);
  sm_diagnosis_release(&d);
  /* A driver that cannot bring a GPU up: a failing GPU or a driver that
   * does not fit. */
  run("[   12.001] NVRM: GPU 0000:65:00.0: RmInitAdapter failed! "
      "(0x22:0x56:762)\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.component, "gpu");
  ASSERT(d.confidence < 0.8);
  sm_diagnosis_release(&d);
  /* RDMA registration: the locked-memory limit. */
  run("step 3 loss 2.0\n"
      "n1:100:100 [0] misc/ibvwrap.cc:110 NCCL WARN Call to ibv_reg_mr "
      "failed with error Cannot allocate memory\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.basis, "limit");
  ASSERT(d.confidence < 0.8);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_a_ranks_own_error_outranks_its_peers_network_errors) {
  /* The peers' retries run out because rank 3 died of its own error,
   * printed later in the merged log. */
  static const char *const own[] = {
      "Traceback (most recent call last):\n"
      "  File \"/home/u/mt/train.py\", line 140, in step\n"
      "    tgt = batch['labels'][:, 1:]\n"
      "KeyError: 'labels'\n",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 "
      "GiB. GPU 3 has a total capacity of 79.10 GiB of which 2.00 GiB is "
      "free. Including non-PyTorch memory, this process has 77.00 GiB "
      "memory in use.\n",
  };
  const char *want[] = {"user", "user"};

  for (size_t i = 0; i < SM_ARRAY_LEN(own); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 16);
    sm_buf_addf(&b,
                "iteration 700 | loss 2.2\n"
                "gpu-b01:700:731 [0] NCCL WARN NET/IB : Got completion "
                "from peer 10.0.0.7<40111> with status=12 opcode=0 len=0 "
                "vendor err 129 (Send)\n"
                "gpu-b01:700:731 [0] NCCL INFO transport/net.cc:1008 -> "
                "6\n%s",
                own[i]);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (strcmp(d.category, want[i]) != 0 || d.first_error_line <= 2 ||
        acts(&d, 0) != 0)
      SM_FAIL_AT("case %zu: line %lld %s (%s)", i, d.first_error_line,
                 d.category, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
  /* A network fault followed only by its own cascade stays the fabric's. */
  {
    sm_diagnosis d;
    run("iteration 700 | loss 2.2\n"
        "gpu-b01:700:731 [0] NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.7<40111> with status=12 opcode=0 len=0 vendor err 129 "
        "(Send)\n"
        "Traceback (most recent call last):\n"
        "  File \"/home/u/mt/train.py\", line 150, in step\n"
        "    loss.backward()\n"
        "  File \"/opt/v/lib/python3.11/site-packages/torch/_tensor.py\", "
        "line 520, in backward\n"
        "    torch.autograd.backward(self)\n"
        "torch.distributed.DistBackendError: NCCL error in: "
        "ProcessGroupNCCL.cpp:1970, remote process exited or there was a "
        "network error, NCCL version 2.21.5\n",
        &d);
    ASSERT_EQ(d.first_error_line, 2);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT_STREQ(d.component, "network");
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_nvml_unknown_error_is_not_sure) {
  sm_diagnosis d;

  run("step 5 loss 1.0\n"
      "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown "
      "Error\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.component, "gpu");
  ASSERT(d.confidence < 0.8);
  sm_diagnosis_release(&d);
  run("step 5 loss 1.0\n"
      "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is "
      "lost.  Reboot the system to recover this GPU\n",
      &d);
  ASSERT(d.confidence >= 0.8);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_reports_that_no_fault_happened_are_benign) {
  /* nvidia-smi -q in the job's preamble or a pasted report: counters at
   * zero name faults that did not happen. */
  sm_diagnosis d;

  run("==============NVSMI LOG==============\n"
      "    ECC Errors\n"
      "        Volatile\n"
      "            SRAM Uncorrectable            : 0\n"
      "            DRAM Uncorrectable            : 0\n"
      "    Retired Pages\n"
      "        Double Bit ECC                    : 0\n"
      "        Pending Page Blacklist            : No\n"
      "    Remapped Rows\n"
      "        Uncorrectable Error               : 0\n"
      "        Remapping Failure Occurred        : No\n"
      "    Xid Errors                            : None\n"
      "step 1 loss 2.0\n"
      "step 2 loss 1.9\n",
      &d);
  ASSERT_EQ(d.failure, 0);
  sm_diagnosis_release(&d);
  /* The job's own error after the dump is the cause; a Python exception
   * whose message is 0 is not a counter. */
  run("        Double Bit ECC                    : 0\n"
      "step 1 loss 2.0\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/t.py\", line 9, in <module>\n"
      "    x = table[0]\n"
      "KeyError: 0\n",
      &d);
  ASSERT_EQ(d.first_error_line, 6);
  ASSERT_STREQ(d.category, "user");
  sm_diagnosis_release(&d);
  /* Machine-check events logged without a word of them being fatal: look
   * at the host, do not fence it off. */
  run("step 1 loss 2.0\n"
      "Mar  4 10:00:01 gpu-a07 kernel: mce: [Hardware Error]: Machine check "
      "events logged\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT(d.confidence < 0.8);
  sm_diagnosis_release(&d);
}

SM_TEST(failure_a_survived_error_does_not_explain_a_later_crash) {
  /* A generic crash takes its class from a specific cause nearby, but not
   * from one the job trained past. */
  sm_diagnosis d;

  run("df: /mnt/archive: Stale file handle\n"
      "step 1 loss 2.0\nstep 2 loss 1.9\nstep 3 loss 1.8\nstep 4 loss 1.7\n"
      "Segmentation fault (core dumped)\n",
      &d);
  ASSERT_EQ(d.first_error_line, 6);
  ASSERT_STREQ(d.category, "framework");
  ASSERT_EQ(acts(&d, 0), 0);
  sm_diagnosis_release(&d);
  /* Next to it, the same cause explains it. */
  run("step 1 loss 2.0\n"
      "OSError: [Errno 116] Stale file handle: '/mnt/ds/shard_3'\n"
      "Segmentation fault (core dumped)\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT_STREQ(d.component, "storage");
  sm_diagnosis_release(&d);
}

SM_TEST(failure_hardware_words_in_paths_are_not_reports) {
  /* Clusters name their filesystems in paths; a path is not a message of
   * the filesystem. */
  static const struct {
    const char *line, *cat;
  } cases[] = {
      {"FileNotFoundError: [Errno 2] No such file or directory: "
       "'/gpfs/scratch/u/run3/config_error.yaml'",
       "user"},
      {"ImportError: /opt/amazon/efa/lib/libfabric.so.1: failed to map "
       "segment from shared object",
       "framework"},
      {"PermissionError: [Errno 13] Permission denied: "
       "'/lustre/fs1/u/LustreError_notes.txt'",
       "user"},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    sm_diagnosis d;
    sm_buf b;
    sm_buf_init(&b, 1 << 14);
    sm_buf_addf(&b, "step 1 loss 2.0\n%s\n", cases[i].line);
    sm_buf_addc(&b, '\0');
    run(b.data, &d);
    if (strcmp(d.category, cases[i].cat) != 0 || acts(&d, 0) != 0)
      SM_FAIL_AT("case %zu: %s (%s)", i, d.category, d.reason ? d.reason : "-");
    sm_diagnosis_release(&d);
    sm_buf_release(&b);
  }
  /* The filesystem's own message still counts. */
  {
    sm_diagnosis d;
    run("step 1 loss 2.0\n"
        "Mar  4 10:00:01 gpu-a07 kernel: mmfs: [E] Unmounting file system "
        "gpfs1 due to a severe error\n",
        &d);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT_STREQ(d.component, "storage");
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_an_error_the_jobs_code_raised_is_its_own_words) {
  sm_diagnosis d;

  /* The job's own health check raises with a hardware word in its
   * message: the job's words, not the driver's report. */
  run("step 1 loss 2.0\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/proj/train.py\", line 40, in <module>\n"
      "    check_links(model)\n"
      "  File \"/home/u/proj/health.py\", line 12, in check_links\n"
      "    raise RuntimeError(f'NVLink error on GPU {i}: bandwidth {bw:.1f} "
      "GB/s below 100')\n"
      "RuntimeError: NVLink error on GPU 3: bandwidth 41.2 GB/s below 100\n",
      &d);
  ASSERT_STREQ(d.category, "infrastructure");
  ASSERT(d.confidence < 0.8);
  ASSERT_EQ(acts(&d, 0), 0);
  sm_diagnosis_release(&d);
  /* A CUDA error surfacing at the job's call is the driver's report. */
  run("step 1 loss 2.0\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/proj/train.py\", line 40, in <module>\n"
      "    model = model.cuda()\n"
      "RuntimeError: CUDA error: uncorrectable ECC error encountered\n",
      &d);
  ASSERT_STREQ(d.component, "gpu");
  ASSERT(d.confidence >= 0.8);
  sm_diagnosis_release(&d);
}

/* An errno that the application reports without the filesystem's own
 * word (a stale handle, an I/O error, a read-only file system, seen
 * through an exception) is storage, but the job's own use of a shared
 * directory can cause it as well: reported, never restarted or fenced on
 * that alone. */
SM_TEST(failure_application_errnos_stay_below_the_gate) {
  static const char *const logs[] = {
      "epoch 3 step 1200 loss 1.91\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/cachelib/disk.py\", "
      "line 88, in touch\n"
      "    os.utime(path)\n"
      "OSError: [Errno 116] Stale file handle: '/shared/cache/idx-00003'\n",
      "[rank5]:   File \"/usr/lib/python3/dist-packages/fsspec/local.py\", "
      "line 41, in rename\n"
      "[rank5]: OSError: [Errno 116] Stale file handle\n",
      "step 90 | loss 0.52\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 310, in save\n"
      "    torch.save(state, path)\n"
      "OSError: [Errno 5] Input/output error\n",
  };
  for (size_t i = 0; i < SM_ARRAY_LEN(logs); i++) {
    sm_diagnosis d;
    run(logs[i], &d);
    ASSERT(d.failure);
    ASSERT_STREQ(d.category, "infrastructure");
    ASSERT_STREQ(d.component, "storage");
    ASSERT(d.confidence < 0.8);
    ASSERT_EQ(acts(&d, 0), 0);
    sm_diagnosis_release(&d);
  }
}
