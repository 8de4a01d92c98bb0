/* test_failure_review9.c - review findings of round 8, each on lines
 * written for these tests in two or more shapes: a dotted name in code is
 * not a file of the job's; an apostrophe inside a word does not pair with
 * a quote; torch's own hub module is not the cache of fetched code; an
 * exception's dotted type is not a host; clients that retry in the
 * background (HTTP, experiment tracking, telemetry) are not the failure. */
#include <string.h>

#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

#define SP "/opt/venv/lib/python3.12/site-packages"

static void expect_at(int where, const char *log, long line, const char *cat,
                      const char *comp) {
  expect_diag_at(where, log, line, cat, comp, NULL);
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

/* The reason of the diagnosis of log, compared with a part of it. */
static int reason_has(const char *log, const char *part) {
  sm_diagnosis d;
  int r;

  run(log, &d);
  r = d.reason != NULL && strstr(d.reason, part) != NULL;
  sm_diagnosis_release(&d);
  return r;
}

SM_TEST(failure_review9_dotted_names_in_code_are_not_files) {
  /* A quantiser library calling the tensor library's op with the wrong
   * dtype: the quoted dtypes are names in code, not the job's files, so
   * the handing-over between libraries decides. */
  static const char dtypes[] =
      "Traceback (most recent call last):\n"
      "  File \"quant.py\", line 40, in <module>\n"
      "    out = qkit.pack(w)\n"
      "  File \"" SP "/qkit/pack.py\", line 20, in pack\n"
      "    return torch.ops.q.pack(w)\n"
      "  File \"" SP "/torch/_ops.py\", line 755, in __call__\n"
      "    return self._op(*args)\n"
      "RuntimeError: expected scalar type 'torch.int8' but found "
      "'torch.float16'\n";
  /* An array library's casting rule and dtype names, under a wrapper. */
  static const char casting[] =
      "Traceback (most recent call last):\n"
      "  File \"/srv/job/run.py\", line 12, in <module>\n"
      "    y = wrap.apply(x)\n"
      "  File \"" SP "/arraywrap/core.py\", line 80, in apply\n"
      "    return np.asarray(x, dtype=self.dt)\n"
      "  File \"" SP "/numpy/core/_asarray.py\", line 10, in asarray\n"
      "    raise TypeError(msg)\n"
      "TypeError: Cannot cast array data from dtype('float64') to "
      "dtype('int64') according to the rule 'same_kind.strict'\n";

  expect(dtypes, 8, "framework", "none");
  expect(casting, 8, "framework", "none");
  if (reason_has(dtypes, "file the message names"))
    SM_FAIL_AT("'torch.int8' was read as a file of the job's");
  /* Names with a file's extension, or a stem that is no identifier, are
   * files, with or without a directory. */
  expect("Traceback (most recent call last):\n"
         "  File \"tok.py\", line 7, in <module>\n"
         "    t = textkit.load_vocab(args.vocab)\n"
         "  File \"" SP "/textkit/vocab.py\", line 30, in load_vocab\n"
         "    return jsonfast.loads(raw)\n"
         "  File \"" SP "/jsonfast/decode.py\", line 90, in loads\n"
         "    raise DecodeError(msg)\n"
         "jsonfast.DecodeError: unexpected end of data in 'vocab.json'\n",
         8, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"tok.py\", line 7, in <module>\n"
         "    t = blobkit.read(name)\n"
         "  File \"" SP "/blobkit/io.py\", line 30, in read\n"
         "    return framing.unpack(raw)\n"
         "  File \"" SP "/framing/core.py\", line 90, in unpack\n"
         "    raise ValueError(msg)\n"
         "ValueError: bad frame header in \"shard-00017.rec\"\n",
         8, "user", "none");
}

SM_TEST(failure_review9_an_apostrophe_does_not_pair_with_a_quote) {
  /* "can't" before the quoted file: the file is still found. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/lab/cls/train.py\", line 118, in <module>\n"
         "    for step, (x, y) in enumerate(dl):\n"
         "  File \"" SP "/picset/tree.py\", line 61, in __getitem__\n"
         "    x = pixread.load(self.items[i])\n"
         "  File \"" SP "/pixread/api.py\", line 212, in load\n"
         "    raise DecodeError(why)\n"
         "pixread.DecodeError: can't decode 'shards/val/n0153/0007.webp': "
         "truncated\n",
         8, "user", "none");
  /* "doesn't", double quotes, a space in the file's name. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 51, in <module>\n"
         "    for x in ds:\n"
         "  File \"" SP "/audiokit/dataset.py\", line 80, in __getitem__\n"
         "    w = read(p)\n"
         "  File \"" SP "/soundio/reader.py\", line 400, in read\n"
         "    raise ReadError(msg)\n"
         "soundio.ReadError: Error opening file: the reader doesn't know "
         "the format of \"clips/take 7.flac\"\n",
         8, "user", "none");
  /* A possessive before a quoted name in code: nothing pairs to a file. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 5, in <module>\n"
         "    m = builder.make(cfg)\n"
         "  File \"" SP "/builder/core.py\", line 10, in make\n"
         "    return torch.zeros(shape, dtype=dt)\n"
         "  File \"" SP "/torch/_refs.py\", line 90, in zeros\n"
         "    raise TypeError(msg)\n"
         "TypeError: the builder's dtype 'torch.bfloat16' isn't supported "
         "here\n",
         8, "framework", "none");
}

SM_TEST(failure_review9_torch_hub_module_is_not_fetched_code) {
  /* The job called torch.hub, whose own module called another of
   * torch's: one library, so the job's call (a bad source name). */
  expect("Traceback (most recent call last):\n"
         "  File \"demo.py\", line 5, in <module>\n"
         "    m = torch.hub.load('lab/net', 'tiny', source='locl')\n"
         "  File \"" SP "/torch/hub.py\", line 566, in load\n"
         "    model = _load_local(repo_or_dir, model)\n"
         "  File \"" SP "/torch/_utils_internal.py\", line 60, in _check\n"
         "    raise ValueError(f'Unknown source: {source}')\n"
         "ValueError: Unknown source: locl\n",
         8, "user", "none");
  /* The same on Windows, through torch's serialization. */
  expect("Traceback (most recent call last):\n"
         "  File \"C:\\work\\app.py\", line 5, in <module>\n"
         "    sd = torch.hub.load_state_dict_from_url(url)\n"
         "  File \"C:\\py\\Lib\\site-packages\\torch\\hub.py\", line 760, "
         "in load_state_dict_from_url\n"
         "    return torch.load(cached_file, map_location=map_location)\n"
         "  File \"C:\\py\\Lib\\site-packages\\torch\\serialization.py\", "
         "line 1000, in load\n"
         "    raise KeyError(key)\n"
         "KeyError: 'cuda:7'\n",
         8, "user", "none");
  /* The hub's cache directory is still fetched code. */
  expect("Traceback (most recent call last):\n"
         "  File \"/srv/job/infer.py\", line 12, in <module>\n"
         "    net = torch.hub.load('lab/segnet', 'small')\n"
         "  File \"/home/u/.cache/torch/hub/lab_segnet_main/hubconf.py\", "
         "line 20, in small\n"
         "    return build(cfg)\n"
         "  File \"" SP "/timm/models/_builder.py\", line 400, in build\n"
         "    raise KeyError(name)\n"
         "KeyError: 'segnet_small_v2'\n",
         8, "framework", "none");
}

/* The node the diagnosis of log located, or "" (copied into out). */
static void node_of(const char *log, char *out, size_t cap) {
  sm_diagnosis d;

  run(log, &d);
  snprintf(out, cap, "%s", d.node ? d.node : "");
  sm_diagnosis_release(&d);
}

SM_TEST(failure_review9_an_exception_type_is_not_a_host) {
  static const char *const logs[] = {
      "step 120/5000 loss=1.93\n"
      "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='"
      "metrics.example.org', port=443): Max retries exceeded with url: "
      "/v1/runs (Caused by ConnectTimeoutError(<urllib3.connection."
      "HTTPSConnection object at 0x7f00>, 'Connection to metrics.example."
      "org timed out. (connect timeout=10)'))\n",
      "epoch 3 iter 900 loss 0.4\n"
      "boto3.exceptions.S3UploadFailedError: Failed to upload ckpt.pt to "
      "bucket/ckpt.pt: Connect timeout on endpoint URL: \"https://s3.eu-"
      "west-1.example.com/bucket\"\n",
      "epoch 3 iter 900 loss 0.4\n"
      "h5py._hl.files.H5Error: unable to open file: name = '/mnt/lake/"
      "f.h5', errno = 5, error message = 'Input/output error'\n"};
  char node[96];

  for (size_t i = 0; i < SM_ARRAY_LEN(logs); i++) {
    node_of(logs[i], node, sizeof(node));
    if (node[0] != '\0')
      SM_FAIL_AT("log %zu: '%s' located as the node", i, node);
  }
  /* A host label in front of the message still names the node, and so
   * does a fully qualified one. */
  node_of("gpu-node07: RuntimeError: CUDA error: uncorrectable ECC error "
          "encountered\n",
          node, sizeof(node));
  if (strcmp(node, "gpu-node07") != 0)
    SM_FAIL_AT("host label: got '%s'", node);
  node_of("Node failure on dgx12.cluster.local\n", node, sizeof(node));
  if (strcmp(node, "dgx12.cluster.local") != 0)
    SM_FAIL_AT("fqdn: got '%s'", node);
}

SM_TEST(failure_review9_background_client_retries_are_not_the_failure) {
  /* urllib3's notice (printed by requests-based trackers) before the
   * job's own error. */
  expect("epoch 1 step 100 loss 2.31\n"
         "2026-03-01 10:00:00,001 - tracker.Task - WARNING - Retrying "
         "(Retry(total=239, connect=240, read=240, redirect=240, "
         "status=240)) after connection broken by 'ConnectTimeoutError("
         "<urllib3.connection.HTTPSConnection object at 0x7f>, 'Connection "
         "to api.tracker.example timed out. (connect timeout=30)')': "
         "/v2/events.add_batch\n"
         "epoch 1 step 200 loss 2.10\n"
         "RuntimeError: CUDA error: an illegal memory access was "
         "encountered\n",
         4, "framework", "none");
  /* A tracking client's own retry loop and a reconnect notice, then the
   * job's error. */
  expect("step 10 loss 3.3\n"
         "wandb: Network error (ReadTimeout), entering retry loop.\n"
         "[neptune] [warning] Experiencing connection interruptions. Will "
         "try to reestablish communication with Neptune.\n"
         "step 20 loss 3.1\n"
         "Traceback (most recent call last):\n"
         "  File \"fit.py\", line 9, in main\n"
         "    x = cfg[\"optimizer\"][\"betas\"]\n"
         "KeyError: 'betas'\n",
         8, "user", "none");
  /* Notices alone: the run did not fail on them. */
  expect("step 10 loss 3.3\n"
         "mlflow: retrying request to the tracking server after "
         "ConnectTimeoutError (attempt 2)\n"
         "WARNING:urllib3.connectionpool:Retrying (Retry(total=2, "
         "connect=None, read=None, redirect=None, status=None)) after "
         "connection broken by 'NewConnectionError(\"Failed to establish a "
         "new connection: [Errno 110] Connection timed out\")': /api\n"
         "step 20 loss 3.1\n",
         0, "", "");
  /* The client giving up is still the remote service's failure. */
  expect("step 10 loss 3.3\n"
         "WARNING:urllib3.connectionpool:Retrying (Retry(total=0, "
         "connect=None, read=None, redirect=None, status=None)) after "
         "connection broken by 'ReadTimeoutError(\"Read timed out.\")': /api\n"
         "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='"
         "api.tracker.example', port=443): Max retries exceeded with url: "
         "/api\n",
         3, "infrastructure", "network");
}

SM_TEST(failure_review9_the_jobs_value_handed_on_unchanged) {
  /* The job's quoted value passes through an adapter library into the
   * model library, whose message repeats it: the job's value. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/r/lora/tune.py\", line 48, in <module>\n"
         "    model = adapt(base, LoraConfig(target_modules=[\"q_projx\"]))\n"
         "  File \"" SP "/adapters/mapping.py\", line 90, in adapt\n"
         "    return inject(base, cfg)\n"
         "  File \"" SP "/modelhub/inject.py\", line 310, in inject\n"
         "    raise ValueError(msg)\n"
         "ValueError: Target modules {'q_projx'} not found in the base "
         "model.\n",
         8, "user", "none");
  /* A keyword's number through a scheduler factory into the scheduler
   * library, which repeats it. */
  expect("[rank0] building schedule\n"
         "Traceback (most recent call last):\n"
         "  File \"main.py\", line 70, in <module>\n"
         "    sched = make_sched(opt, warmup_steps=-100, total=9000)\n"
         "  File \"" SP "/trainbox/sched.py\", line 5, in make_sched\n"
         "    return warm.Warmup(opt, warmup_steps, total)\n"
         "  File \"" SP "/schedlib/warm.py\", line 12, in __init__\n"
         "    raise ValueError(f'warmup_steps must be >= 0, got {w}')\n"
         "ValueError: warmup_steps must be >= 0, got -100.\n",
         9, "user", "none");
  /* A one-digit value without its keyword in the message, and a value
   * the job does not pass: the libraries' hand-over still decides. */
  expect("Traceback (most recent call last):\n"
         "  File \"serve.py\", line 12, in <module>\n"
         "    app = Server(cfg, workers=1)\n"
         "  File \"" SP "/servekit/app.py\", line 70, in __init__\n"
         "    logging.basicConfig(level=self._level)\n"
         "  File \"/usr/lib/python3.11/logging/__init__.py\", line 200, in "
         "_checkLevel\n"
         "    raise ValueError(\"Unknown level: %r\" % level)\n"
         "ValueError: Unknown level: 'TRACE' (1 handler)\n",
         8, "framework", "none");
}

SM_TEST(failure_review9_a_cxx_throw_restating_a_cascade_is_not_the_cause) {
  /* The C++ layer's throw restates NCCL's remote-error cascade; the
   * transport's own completion error under "Last error:" is the cause. */
  expect("iter 900 | loss 2.41 | 3.0 it/s\n"
         "terminate called after throwing an instance of "
         "'c10::DistBackendError'\n"
         "  what():  NCCL error: remote process exited or there was a "
         "network error, NCCL version 2.20.5\n"
         "ncclRemoteError: A call failed possibly due to a network error "
         "or a remote process exiting prematurely.\n"
         "Last error:\n"
         "NET/IB : Got completion from peer 10.7.3.3<40011> with status=12 "
         "opcode=0 len=0 vendor err 129 (Send) hca mlx5_1\n",
         6, "infrastructure", "network");
  /* A watchdog's timeout restated by the throw, the fabric's report two
   * lines later from the rank's host. */
  expect("step 5100 loss 0.61\n"
         "terminate called after throwing an instance of "
         "'std::runtime_error'\n"
         "  what():  [Rank 4] Watchdog caught collective operation "
         "timeout: WorkNCCL(SeqNum=77100, OpType=ALLGATHER) ran for "
         "1800021 milliseconds before timing out.\n"
         "h100-r3n2:551:600 [4] transport/net_ib.cc:1295 NCCL WARN NET/IB "
         ": Got completion from peer 10.7.3.9<40022> with error 12, opcode "
         "0, len 0, vendor err 129\n",
         4, "infrastructure", "network");
  /* A throw whose message is the program's own stays its own error. */
  {
    sm_diagnosis d;
    run("loading index\n"
        "terminate called after throwing an instance of "
        "'std::invalid_argument'\n"
        "  what():  stoi\n",
        &d);
    if (d.first_error_line != 2)
      SM_FAIL_AT("own throw: line %lld", d.first_error_line);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_review9_rdma_provider_completion_dump) {
  sm_diagnosis d;

  /* The provider's dump under a Ray worker's prefix, host in the line:
   * the network, located, yet reported (below the gate). */
  static const char ray[] =
      "(Worker pid=881, ip=10.3.3.4) step 40 loss 1.2\n"
      "(Worker pid=881, ip=10.3.3.4) mlx5: cn-a041: got completion with "
      "error:\n"
      "(Worker pid=881, ip=10.3.3.4) 00000000 00000000 00000000 00000000\n"
      "(Worker pid=881, ip=10.3.3.4) 00000000 00000000 00000000 00000000\n"
      "(Worker pid=881, ip=10.3.3.4) NCCL error: remote process exited or "
      "there was a network error\n";
  expect(ray, 2, "infrastructure", "network");
  run(ray, &d);
  if (d.node == NULL || strcmp(d.node, "cn-a041") != 0)
    SM_FAIL_AT("node: got %s", d.node ? d.node : "-");
  sm_diagnosis_release(&d);
  if (plan_acts(ray, "cn-a041"))
    SM_FAIL_AT("an undecoded completion dump must not act at the default "
               "gate");
  /* A benchmark's output with the dump, no prefix. */
  expect("  8388608    512.1   511.9\n"
         "mlx5: r7n11: got completion with error:\n"
         "00000000 00000000 00000000 00000000\n"
         "00000000 00008813 08000193 0000d2d2\n",
         2, "infrastructure", "network");
}

SM_TEST(failure_review9_a_librarys_signature_changed_under_the_job) {
  /* A metrics package's class that gained a required argument, called
   * by its dotted path from the job's model. */
  expect("Traceback (most recent call last):\n"
         "  File \"/lab/cls/run.py\", line 20, in <module>\n"
         "    net = Classifier(cfg)\n"
         "  File \"/lab/cls/nets.py\", line 41, in __init__\n"
         "    self.f1 = torchmetrics.classification.F1Score(num_classes=7)\n"
         "TypeError: F1Score.__new__() missing 1 required positional "
         "argument: 'task'\n",
         6, "framework", "none");
  /* A function of an array package, by module alias path, with a
   * keyword-only argument made required. */
  expect("Traceback (most recent call last):\n"
         "  File \"eval.py\", line 12, in <module>\n"
         "    s = sklearn.metrics.top_k_accuracy_score(y, p)\n"
         "TypeError: top_k_accuracy_score() missing 1 required keyword-only "
         "argument: 'k'\n",
         4, "framework", "none");
  /* The job's own function, or a package's callable of another name on
   * the line: the job's error. */
  expect("Traceback (most recent call last):\n"
         "  File \"/w/ft.py\", line 40, in <module>\n"
         "    out = build_head(torch.zeros(3))\n"
         "TypeError: build_head() missing 1 required positional argument: "
         "'dim'\n",
         4, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"/w/ft.py\", line 40, in <module>\n"
         "    h = Head(numpy.ones(4))\n"
         "TypeError: Head.__init__() missing 1 required positional "
         "argument: 'dim'\n",
         4, "user", "none");
}

SM_TEST(failure_review9_a_librarys_table_lacks_a_loaded_name) {
  /* A pipeline library's scheduler table, the name read from the
   * scheduler's saved config. */
  expect("Traceback (most recent call last):\n"
         "  File \"/srv/gen/sample.py\", line 14, in <module>\n"
         "    pipe = pipekit.Pipeline.load(args.ckpt)\n"
         "  File \"" SP "/pipekit/loading.py\", line 212, in load\n"
         "    sched_cls = SCHEDULER_CLASSES[sched_cfg[\"_class_name\"]]\n"
         "  File \"" SP "/pipekit/registry.py\", line 30, in __getitem__\n"
         "    raise KeyError(name)\n"
         "KeyError: 'FlowMatchHeunScheduler'\n",
         8, "framework", "none");
  /* A model registry looked up by a config attribute. */
  expect("Traceback (most recent call last):\n"
         "  File \"train.py\", line 30, in main\n"
         "    model = zoo.build(cfg)\n"
         "  File \"" SP "/zoo/builder.py\", line 55, in build\n"
         "    return model_registry[cfg.arch](cfg)\n"
         "KeyError: 'vitdet_h14'\n",
         6, "framework", "none");
  /* The job passes the name itself: its own misspelling. */
  expect("Traceback (most recent call last):\n"
         "  File \"train.py\", line 30, in main\n"
         "    model = zoo.build(cfg, arch=\"resnet5o\")\n"
         "  File \"" SP "/zoo/builder.py\", line 55, in build\n"
         "    return model_registry[cfg.arch](cfg)\n"
         "KeyError: 'resnet5o'\n",
         6, "user", "none");
  /* A plain dictionary of the library indexed by the job's argument. */
  expect("Traceback (most recent call last):\n"
         "  File \"train.py\", line 30, in main\n"
         "    opt = zoo.optimizer(name)\n"
         "  File \"" SP "/zoo/optim.py\", line 9, in optimizer\n"
         "    return OPTIMIZERS[name]\n"
         "KeyError: 'adamw8'\n",
         6, "user", "none");
}

SM_TEST(failure_review9_cuda_init_unknown_is_the_nodes_inferred) {
  /* PyTorch's warning at start-up, then the job's first use of the GPU:
   * the warning says why, inferred, reported. */
  static const char torch_init[] =
      "/srv/env/lib/python3.11/site-packages/torch/cuda/__init__.py:141: "
      "UserWarning: CUDA initialization: CUDA unknown error - this may be "
      "due to an incorrectly set up environment, e.g. changing env "
      "variable CUDA_VISIBLE_DEVICES after program start. Setting the "
      "available devices to be zero.\n"
      "Traceback (most recent call last):\n"
      "  File \"/srv/job/fit.py\", line 8, in <module>\n"
      "    net = net.to('cuda')\n"
      "RuntimeError: No CUDA GPUs are available\n";
  /* TensorFlow's driver wrapper, glog-tagged. */
  static const char tf_init[] =
      "2026-03-04 01:02:03.456789: E external/local_xla/xla/stream_executor/"
      "cuda/cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_UNKNOWN: "
      "unknown error\n"
      "Epoch 1/10\n";

  expect_diag_at(__LINE__, torch_init, 1, "infrastructure", "gpu", "inferred");
  expect_diag_at(__LINE__, tf_init, 1, "infrastructure", "gpu", "inferred");
  if (plan_acts(torch_init, "gn-07") || plan_acts(tf_init, "gn-07"))
    SM_FAIL_AT("an inferred driver state must not act");
  /* pynvml's exception for a lost GPU. */
  expect("step 300 loss 0.2\n"
         "pynvml.NVMLError_GPUIsLost: GPU is lost\n",
         2, "infrastructure", "gpu");
}

SM_TEST(failure_review9_c10d_notices_without_their_glog_tag) {
  /* The IPv6 lookup and a bind to one address family, glog-tagged with
   * and without a time, before the job's own error. */
  expect("[W socket.cpp:663] [c10d] The IPv6 network addresses of "
         "(trainer-0, 29511) cannot be retrieved (gai error: -3 - "
         "Temporary failure in name resolution).\n"
         "[W1105 08:00:01.000000 socket.cpp:426] [c10d] The server socket "
         "cannot be initialized on [::]:29511 (errno: 97 - Address family "
         "not supported by protocol).\n"
         "step 1 loss 4.1\n"
         "Traceback (most recent call last):\n"
         "  File \"pre.py\", line 3, in <module>\n"
         "    n = int(os.environ['NUM_SHARDS'])\n"
         "KeyError: 'NUM_SHARDS'\n",
         7, "user", "none");
  /* Every address failing is the taken port, not a notice. */
  expect("[W socket.cpp:426] [c10d] The server socket has failed to bind to "
         "[::]:29511 (errno: 98 - Address already in use).\n"
         "[W socket.cpp:426] [c10d] The server socket has failed to bind to "
         "0.0.0.0:29511 (errno: 98 - Address already in use).\n"
         "[E socket.cpp:462] [c10d] The server socket has failed to listen "
         "on any local network address.\n",
         3, "user", "none");
}

SM_TEST(failure_review9_tf_loader_notice_without_its_glog_tag) {
  /* glog's own line format puts the file:line tag before the message;
   * the optional library's notice stays a notice, before the job's
   * error. */
  expect("W0311 09:10:11.000123  4411 dso_loader.cc:64] Could not load "
         "dynamic library 'libnvinfer_plugin.so.8'; dlerror: "
         "libnvinfer_plugin.so.8: cannot open shared object file: No such "
         "file or directory\n"
         "Epoch 1/3\n"
         "Traceback (most recent call last):\n"
         "  File \"fit.py\", line 40, in <module>\n"
         "    x = data['pixels']\n"
         "KeyError: 'pixels'\n",
         6, "user", "none");
  /* A missing library that the job imports is still the environment's. */
  expect("ImportError: libcudnn.so.8: cannot open shared object file: No "
         "such file or directory\n",
         1, "framework", "none");
}

SM_TEST(failure_review9_a_number_out_of_a_checked_range_is_the_jobs) {
  /* The job's configured rate reaches the optimiser through a trainer:
   * the call line does not show it, the range check's words do. */
  expect("Traceback (most recent call last):\n"
         "  File \"main.py\", line 50, in <module>\n"
         "    trainer = Trainer(model, cfg.train)\n"
         "  File \"" SP "/fitloop/trainer.py\", line 80, in __init__\n"
         "    self.opt = make_opt(model, **opt_cfg)\n"
         "  File \"" SP "/optlib/adam.py\", line 22, in __init__\n"
         "    raise ValueError(f\"Invalid learning rate: {lr}\")\n"
         "ValueError: Invalid learning rate: -0.0002\n",
         8, "user", "none");
  /* An estimator library's parameter check under a pipeline library. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit_tab.py\", line 12, in <module>\n"
         "    pipe.fit(X, y)\n"
         "  File \"" SP "/tabpipe/core.py\", line 300, in fit\n"
         "    est.fit(Xt, y)\n"
         "  File \"" SP "/estkit/forest.py\", line 40, in fit\n"
         "    self._validate_params()\n"
         "estkit.InvalidParameterError: The 'max_depth' parameter of "
         "Forest must be an int in the range [1, inf). Got 0 instead.\n",
         8, "user", "none");
  /* Range words beside version words are no verdict of the job's
   * configuration. */
  {
    sm_diagnosis d;
    run("RuntimeError: the checkpoint format must be at least 3, please "
        "upgrade the library\n",
        &d);
    if (d.signature != NULL &&
        strcmp(d.signature, "config-words-in-exception") == 0)
      SM_FAIL_AT("a version complaint read as the job's configuration");
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_review9_a_workers_chain_reraised_by_its_parent) {
  /* The worker's chain starts with a decoder's error and ends in the
   * type the parent names: the first report is the parent's line. */
  expect("epoch 0 | 3/900\n"
         "Traceback (most recent call last):\n"
         "  File \"/job/fit.py\", line 30, in <module>\n"
         "    for x, y in dl:\n"
         "  File \"" SP "/torch/_utils.py\", line 700, in reraise\n"
         "    raise exception\n"
         "OSError: Caught OSError in DataLoader worker process 2.\n"
         "Original Traceback (most recent call last):\n"
         "  File \"" SP "/imgdec/core.py\", line 50, in load\n"
         "    raise DecodeFailure(p)\n"
         "imgdec.DecodeFailure: /data/im/0091.png\n"
         "\n"
         "During handling of the above exception, another exception "
         "occurred:\n"
         "\n"
         "Traceback (most recent call last):\n"
         "  File \"" SP "/torch/utils/data/_utils/worker.py\", line 308, in "
         "_worker_loop\n"
         "    data = fetcher.fetch(index)\n"
         "  File \"/job/ds.py\", line 12, in __getitem__\n"
         "    return fallback_open(p)\n"
         "OSError: [Errno 5] cannot read /data/im/0091.png\n",
         7, "user", "none");
  /* A chain that never reaches the parent's type: the worker's line. */
  {
    sm_diagnosis d;
    run("Traceback (most recent call last):\n"
        "  File \"" SP "/torch/_utils.py\", line 700, in reraise\n"
        "    raise exception\n"
        "KeyError: Caught KeyError in DataLoader worker process 0.\n"
        "Original Traceback (most recent call last):\n"
        "  File \"/job/ds.py\", line 12, in __getitem__\n"
        "    return self.rows[i]['label']\n"
        "ValueError: bad row\n",
        &d);
    if (d.first_error_line != 8)
      SM_FAIL_AT("unrelated types: line %lld, want 8", d.first_error_line);
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_review9_an_old_oom_reports_cache_on_top_of_allocated) {
  /* PyTorch 1.0-1.3 printed the allocator's cache beyond what was
   * allocated: both are the job's, so a full GPU is its own. */
  expect("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 1; 15.75 GiB "
         "total capacity; 7.90 GiB already allocated; 1.20 GiB free; 5.60 "
         "GiB cached)\n",
         1, "user", "gpu_memory");
  /* Little allocated and little cached on a full card: others' memory. */
  expect("RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB "
         "(GPU 0; 7.93 GiB total capacity; 1.10 GiB already allocated; "
         "40.00 MiB free; 20.00 MiB cached)\n",
         1, "infrastructure", "gpu");
}

SM_TEST(failure_review9_a_message_that_starts_on_the_next_line) {
  /* An assertion whose message begins with a line break (a driver
   * check): the line below decides. */
  expect("Traceback (most recent call last):\n"
         "  File \"/w/run.py\", line 8, in <module>\n"
         "    x = x.cuda()\n"
         "  File \"" SP "/torch/cuda/__init__.py\", line 60, in _check\n"
         "    raise AssertionError(msg)\n"
         "AssertionError: \n"
         "The NVIDIA driver on your system is too old (found version "
         "11020).\n"
         "Please update your GPU driver.\n",
         6, "framework", "none");
  /* A ValueError whose message is a version hint on the next line. */
  expect("Traceback (most recent call last):\n"
         "  File \"/w/load.py\", line 8, in <module>\n"
         "    cfg = load_config(path)\n"
         "ValueError:\n"
         "The checkpoint you are trying to load has model type `orca9` but "
         "Transformers does not recognize this architecture.\n",
         4, "framework", "none");
  /* An empty message followed by ordinary output stays the type's. */
  expect("Traceback (most recent call last):\n"
         "  File \"/w/run.py\", line 8, in <module>\n"
         "    assert n > 0\n"
         "AssertionError\n"
         "step 3 done\n",
         4, "user", "none");
  /* Another rank's line interleaved below is not the message; the same
   * rank's continuation is. */
  ASSERT(!reason_has("[rank0]: Traceback (most recent call last):\n"
                     "[rank0]:   File \"/w/run.py\", line 8, in <module>\n"
                     "[rank0]:     assert n > 0\n"
                     "[rank0]: AssertionError\n"
                     "[rank3]: The NVIDIA driver on your system is too old "
                     "(found version 11020).\n",
                     "its message below"));
  ASSERT(reason_has("[rank0]: Traceback (most recent call last):\n"
                    "[rank0]:   File \"/w/run.py\", line 8, in <module>\n"
                    "[rank0]:     x = x.cuda()\n"
                    "[rank0]: AssertionError: \n"
                    "[rank0]: The NVIDIA driver on your system is too old "
                    "(found version 11020).\n",
                    "its message below"));
}

SM_TEST(failure_review9_an_api_removed_in_a_release) {
  /* An array library's removal notice for an alias the code uses. */
  expect("Traceback (most recent call last):\n"
         "  File \"/w/train.py\", line 92, in <module>\n"
         "    best = np.NaN\n"
         "  File \"" SP "/numpy/__init__.py\", line 400, in __getattr__\n"
         "    raise AttributeError(msg)\n"
         "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. "
         "Use `np.nan` instead.\n",
         6, "framework", "none");
  /* A trainer refusing a hook its major release removed, one line. */
  expect("NotImplementedError: Support for `test_epoch_end` has been removed "
         "in v2.0.0. `Net` implements this method.\n",
         1, "framework", "none");
  /* A removal that is only announced stays a warning. */
  expect("/srv/env/lib/python3.11/site-packages/kit/api.py:10: "
         "FutureWarning: `foo` is deprecated and will be removed in v3.0\n"
         "step 10 loss 1.0\n",
         0, "", "");
}

/* Appends s to b at *n (bounded by cap). */
static void put(char *b, size_t cap, size_t *n, const char *s) {
  size_t l = strlen(s);

  if (*n + l < cap) {
    memcpy(b + *n, s, l);
    *n += l;
    b[*n] = '\0';
  }
}

SM_TEST(failure_review9_new_readers_survive_malformed_lines) {
  /* The value-echo, table-lookup, callee and quote readers on lines of
   * unpaired quotes, invalid UTF-8, a run of dots and brackets, and a
   * call line of 60000 bytes: a verdict, no crash, no read past a line. */
  static char log[200000];
  size_t n = 0;

  log[0] = '\0';
  put(log, sizeof(log), &n,
      "Traceback (most recent call last):\n"
      "  File \"job.py\", line 1, in <module>\n    f(x='");
  for (int i = 0; i < 20000; i++)
    put(log, sizeof(log), &n, i % 3 ? "'\xff." : "a=1");
  put(log, sizeof(log), &n,
      "\n  File \"" SP "/liba/x.py\", line 2, in f\n"
      "    T_T[[[[..]..]]][.\n"
      "  File \"" SP "/libb/y.py\", line 3, in g\n"
      "    raise KeyError(k)\n"
      "KeyError: \"'\xc3\x28 can't '''' ... missing 1 required positional "
      "argument\"\n"
      "TypeError: ...() missing 1 required positional argument: ''\n"
      "ValueError:\n"
      "what():\n");
  {
    sm_diagnosis d;
    run(log, &d);
    if (!d.failure)
      SM_FAIL_AT("a traceback with an exception line gave no failure");
    sm_diagnosis_release(&d);
  }
}
