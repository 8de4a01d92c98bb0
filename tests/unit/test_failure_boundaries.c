/* test_failure_boundaries.c - round-8 classes of root cause, each on
 * lines written for these tests in shapes other than the ones first seen:
 * an HTTP client giving up on a remote service (requests/urllib3, httpx,
 * aiohttp; a chain whose first exception says only that it timed out);
 * the scheduler's prolog or epilog failing on a node before the job ran.
 * Every one of them is reported, never isolated or restarted. */
#include <string.h>

#include "failure/failure_int.h"
#include "harness.h"
#include "sigdb_fixture.h"

static void expect_at(int where, const char *log, long line, const char *cat,
                      const char *comp) {
  expect_diag_at(where, log, line, cat, comp, NULL);
}
#define expect(...) expect_at(__LINE__, __VA_ARGS__)

static int acts(const char *log) {
  return plan_acts(log, "gn-07");
}

static int acts_at(const char *log, double th);

/* A chain whose root says only "timed out": the library that caught it
 * names the service. */
static const char remote_chain[] =
    "epoch 4 step 800 loss 0.52\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/env/lib/python3.10/site-packages/urllib3/connection.py\", "
    "line 200, in _new_conn\n"
    "    sock = connection.create_connection(\n"
    "  File \"/opt/env/lib/python3.10/socket.py\", line 845, in "
    "create_connection\n"
    "    raise err\n"
    "TimeoutError: timed out\n"
    "\n"
    "The above exception was the direct cause of the following exception:\n"
    "\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/env/lib/python3.10/site-packages/requests/adapters.py\", "
    "line 486, in send\n"
    "    resp = conn.urlopen(\n"
    "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='metrics."
    "example.org', port=443): Max retries exceeded with url: /v1/runs "
    "(Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection "
    "object at 0x7f00>, 'Connection to metrics.example.org timed out. "
    "(connect timeout=10)'))\n"
    "\n"
    "During handling of the above exception, another exception occurred:\n"
    "\n"
    "Traceback (most recent call last):\n"
    "  File \"train.py\", line 77, in <module>\n"
    "    tracker.upload(ckpt)\n"
    "  File \"/opt/env/lib/python3.10/site-packages/requests/adapters.py\", "
    "line 507, in send\n"
    "    raise ConnectTimeout(e, request=request)\n"
    "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='metrics."
    "example.org', port=443): Max retries exceeded with url: /v1/runs\n";

SM_TEST(failure_boundaries_remote_service_unreachable) {
  sm_diagnosis d;

  /* The chain's root is reported, classed by what the library said. */
  expect(remote_chain, 7, "infrastructure", "network");
  run(remote_chain, &d);
  if (d.basis == NULL || strcmp(d.basis, "inferred") != 0)
    SM_FAIL_AT("a remote service timeout is inferred, got %s",
               d.basis ? d.basis : "-");
  sm_diagnosis_release(&d);
  if (acts(remote_chain))
    SM_FAIL_AT("an unreachable service must not isolate or restart");
  /* httpx's one-line form, after training progress. */
  expect("step 120/5000 loss=1.93\n"
         "httpx.ReadTimeout: The read operation timed out while talking to "
         "host registry.models.internal\n",
         2, "infrastructure", "network");
  /* aiohttp in an asynchronous uploader. */
  expect("[uploader] batch 17 queued\n"
         "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to "
         "host storage.example.net:443 ssl:default [Connection timed out]\n",
         2, "infrastructure", "network");
  /* The job's own server on the loopback address is not the network. */
  {
    run("requests.exceptions.ConnectionError: HTTPConnectionPool("
        "host='localhost', port=8000): Max retries exceeded with url: "
        "/predict (Caused by NewConnectionError('Failed to establish a new "
        "connection: [Errno 111] Connection refused'))\n",
        &d);
    if (d.failure && strcmp(d.category, "infrastructure") == 0 &&
        d.signature != NULL &&
        strcmp(d.signature, "remote-service-unreachable") == 0)
      SM_FAIL_AT("a loopback server is not a remote service");
    sm_diagnosis_release(&d);
  }
  /* A client's own retry notice is no failure. */
  expect("wandb: Network error (ReadTimeout), entering retry loop.\n"
         "step 10 loss 2.0\nstep 20 loss 1.9\n",
         0, NULL, NULL);
}

SM_TEST(failure_boundaries_scheduler_prolog_failed) {
  static const char slurm_ctld[] =
      "srun: job 88121 queued and waiting for resources\n"
      "srun: PrologSlurmctld failed, job killed\n"
      "srun: error: Job allocation 88121 has been revoked\n";
  static const char sbatch_held[] =
      "JobId=5521 JobName=pretrain\n"
      "   JobState=PENDING Reason=launch failed requeued held\n";
  static const char epilog[] =
      "slurmstepd: error: epilog failed status=1 on node gpu-a17\n";

  expect(slurm_ctld, 2, "infrastructure", "node");
  expect(sbatch_held, 2, "infrastructure", "node");
  expect(epilog, 1, "infrastructure", "node");
  if (acts(slurm_ctld) || acts(sbatch_held) || acts(epilog))
    SM_FAIL_AT("a failed prolog is inferred: never isolate or restart");
  /* Not at an operator's low gate either: the gate is the evidence, not
   * the confidence. */
  if (acts_at(slurm_ctld, 0.3) || acts_at(sbatch_held, 0.3) ||
      acts_at(epilog, 0.3))
    SM_FAIL_AT("a failed prolog acts at gate 0.3");
  /* A task prolog is the job's own script. */
  {
    sm_diagnosis d;
    run("slurmstepd: error: TaskProlog failed status=127\n", &d);
    if (d.failure && d.signature != NULL &&
        strcmp(d.signature, "scheduler-prolog-failed") == 0)
      SM_FAIL_AT("the job's task prolog is not the site's");
    sm_diagnosis_release(&d);
  }
}

#define SP "/srv/py/lib/python3.11/site-packages"

SM_TEST(failure_boundaries_one_library_handing_another_a_value) {
  /* The job called a trainer; the trainer called the standard library
   * with a value of its own: the libraries disagree. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 9, in <module>\n"
         "    loop = Loop(cfg)\n"
         "  File \"" SP "/looplib/core.py\", line 61, in __init__\n"
         "    warnings.simplefilter(self._mode)\n"
         "  File \"/srv/py/lib/python3.11/warnings.py\", line 170, in "
         "simplefilter\n"
         "    raise ValueError(\"invalid action: %r\" % (action,))\n"
         "ValueError: invalid action: 'quiet'\n",
         8, "framework", "none");
  /* A wrapper library calling the tensor library's private state. */
  expect("Traceback (most recent call last):\n"
         "  File \"/home/a/proj/run.py\", line 40, in main\n"
         "    model = wrap(model)\n"
         "  File \"" SP "/shardkit/wrap.py\", line 12, in wrap\n"
         "    return _patch(model)\n"
         "  File \"" SP "/torch/nn/modules/module.py\", line 1931, in "
         "__getattr__\n"
         "    raise AttributeError(\n"
         "AttributeError: 'Block' object has no attribute '_pre_hooks'\n",
         8, "framework", "none");
  /* The library the job called raised itself: the job's call (unchanged). */
  expect("Traceback (most recent call last):\n"
         "  File \"train.py\", line 3, in <module>\n"
         "    sched = StepLR(opt, step_size=0)\n"
         "  File \"" SP "/torch/optim/lr_scheduler.py\", line 500, in "
         "__init__\n"
         "    raise ValueError('step_size must be positive')\n"
         "ValueError: step_size must be positive\n",
         6, "user", "none");
  /* The job called the standard library, which called a library back
   * (a pickle of the job's object): the job's call. */
  expect("Traceback (most recent call last):\n"
         "  File \"eval.py\", line 20, in <module>\n"
         "    obj = copy.deepcopy(state)\n"
         "  File \"/srv/py/lib/python3.11/copy.py\", line 172, in deepcopy\n"
         "    y = _reconstruct(x, memo, *rv)\n"
         "  File \"" SP "/tensorlib/core.py\", line 90, in __reduce_ex__\n"
         "    raise TypeError('cannot pickle a live handle')\n"
         "TypeError: cannot pickle a live handle\n",
         8, "user", "none");
}

SM_TEST(failure_boundaries_data_words_stay_the_jobs) {
  /* The job's data passes through a loader and a reader: its words
   * place the fault in the data. */
  expect("Traceback (most recent call last):\n"
         "  File \"prep.py\", line 5, in <module>\n"
         "    t = loaders.read_table('corpus/dev.csv')\n"
         "  File \"" SP "/loaders/csvio.py\", line 30, in read_table\n"
         "    return arrowcsv.read_csv(p)\n"
         "  File \"" SP "/arrowcsv/reader.py\", line 77, in read_csv\n"
         "    raise ParseFailure(msg)\n"
         "arrowcsv.ParseFailure: CSV parse error: Expected 4 columns, got 6 "
         "in row 2210\n",
         8, "user", "none");
  expect("Traceback (most recent call last):\n"
         "  File \"sft.py\", line 88, in main\n"
         "    batch = collate(rows)\n"
         "  File \"" SP "/trainkit/collate.py\", line 14, in collate\n"
         "    return table.select(['prompt', 'answer'])\n"
         "  File \"" SP "/tablekit/table.py\", line 300, in select\n"
         "    raise KeyError(f'column {c!r} not found in the dataset')\n"
         "KeyError: \"column 'answer' not found in the dataset\"\n",
         8, "user", "none");
  /* Version words are not data words. */
  {
    sm_diagnosis d;
    run("RuntimeError: failed to parse the model file at line 12: written "
        "by a newer version of the library, please upgrade\n",
        &d);
    if (d.signature != NULL &&
        strcmp(d.signature, "data-words-in-exception") == 0)
      SM_FAIL_AT("a version complaint is not the job's data");
    sm_diagnosis_release(&d);
  }
}

SM_TEST(failure_boundaries_code_a_library_fetched_is_not_the_jobs) {
  /* Remote code of a model, imported by the library from its cache, that
   * does not fit the installed library version. */
  expect("Loading checkpoint shards: 100%|##########| 2/2\n"
         "Traceback (most recent call last):\n"
         "  File \"/work/chat/serve.py\", line 31, in load\n"
         "    tok = AutoTokenizer.from_pretrained(path, "
         "trust_remote_code=True)\n"
         "  File \"" SP "/transformers/tokenization_utils_base.py\", line "
         "2100, in _from_pretrained\n"
         "    tokenizer = cls(*init_inputs, **init_kwargs)\n"
         "  File \"/home/u/.cache/huggingface/modules/transformers_modules/"
         "orca-7b/tokenization_orca.py\", line 88, in vocab_size\n"
         "    return self.spm.vocab_size()\n"
         "AttributeError: 'OrcaTokenizer' object has no attribute 'spm'\n",
         9, "framework", "none");
  /* torch.hub's cache on a Windows machine, the hub code calling a
   * library that raises. */
  expect("Traceback (most recent call last):\n"
         "  File \"D:\\proj\\seg\\infer.py\", line 12, in <module>\n"
         "    net = torch.hub.load('lab/segnet', 'small')\n"
         "  File \"C:\\Users\\me\\.cache\\torch\\hub\\lab_segnet_main"
         "\\hubconf.py\", line 20, in small\n"
         "    return build(cfg)\n"
         "  File \"C:\\Users\\me\\py\\Lib\\site-packages\\timm\\"
         "models\\_builder.py\", line 400, in build\n"
         "    raise KeyError(name)\n"
         "KeyError: 'segnet_small_v2'\n",
         8, "framework", "none");
  /* The job's own copy of such a file, in its repository, is the job's. */
  expect("Traceback (most recent call last):\n"
         "  File \"/work/chat/tok/tokenization_orca.py\", line 88, in "
         "vocab_size\n"
         "    return self.spm.vocab_size()\n"
         "AttributeError: 'OrcaTokenizer' object has no attribute 'spm'\n",
         4, "user", "none");
}

SM_TEST(failure_boundaries_a_server_on_the_jobs_own_host) {
  /* The operating system's refusal first, the client library naming the
   * loopback address in the chain: the job's own server was not up. */
  static const char chained[] =
      "Setting up a new session...\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/py/lib/python3.9/site-packages/urllib3/connection.py\", "
      "line 170, in _new_conn\n"
      "    sock.connect(sa)\n"
      "ConnectionRefusedError: [Errno 111] Connection refused\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/py/lib/python3.9/site-packages/urllib3/connectionpool.py"
      "\", line 700, in urlopen\n"
      "    conn.request(method, url)\n"
      "urllib3.exceptions.MaxRetryError: HTTPConnectionPool(host='127.0.0.1',"
      " port=9001): Max retries exceeded with url: /plot (Caused by "
      "NewConnectionError('<urllib3.connection.HTTPConnection object at "
      "0x7f>: Failed to establish a new connection: [Errno 111] Connection "
      "refused'))\n";

  expect(chained, 5, "user", "none");
  if (acts(chained))
    SM_FAIL_AT("the job's own server must not isolate or restart");
  /* A Node-style client's one-line refusal. */
  expect("epoch 1 done\n"
         "Error: connect ECONNREFUSED 127.0.0.1:6006\n",
         2, "user", "none");
  /* A refusal by another host stays the network's, below the gate. */
  {
    static const char remote[] =
        "Traceback (most recent call last):\n"
        "  File \"/opt/py/lib/python3.9/site-packages/urllib3/connection.py\""
        ", line 170, in _new_conn\n"
        "    sock.connect(sa)\n"
        "ConnectionRefusedError: [Errno 111] Connection refused\n"
        "\n"
        "During handling of the above exception, another exception "
        "occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        "  File \"/opt/py/lib/python3.9/site-packages/urllib3/"
        "connectionpool.py\", line 700, in urlopen\n"
        "    conn.request(method, url)\n"
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='"
        "artifacts.example.com', port=443): Max retries exceeded with url: "
        "/up\n";
    expect(remote, 4, "infrastructure", "network");
    if (acts(remote))
      SM_FAIL_AT("an unreachable service must not isolate or restart");
  }
}

SM_TEST(failure_boundaries_ranks_that_disagree_on_a_message) {
  /* The socket transport, then the communicator's abort. */
  static const char sock[] =
      "gx7:311:311 [0] NCCL INFO NCCL_PROTO set by environment to LL128\n"
      "gx7:311:390 [0] transport/net_socket.cc:510 NCCL WARN NET/Socket : "
      "peer 10.1.0.9<40112> message truncated : receiving 2097152 bytes "
      "instead of 131072.\n"
      "gx7:311:390 [0] NCCL INFO transport/net.cc:1100 -> 3\n"
      "RuntimeError: NCCL communicator was aborted on rank 2.\n";
  /* The bootstrap's form, among rank-prefixed lines. */
  static const char boot[] =
      "1: hostb:2201:2290 [3] bootstrap.cc:80 NCCL WARN Message truncated : "
      "received 512 bytes instead of 8\n"
      "1: hostb:2201:2290 [3] NCCL INFO bootstrap.cc:560 -> 3\n"
      "1: torch.distributed.DistBackendError: NCCL error in: "
      "ProcessGroupNCCL.cpp:1970, internal error - please report this issue "
      "to the NCCL developers, NCCL version 2.21.5\n";

  expect(sock, 2, "user", "none");
  expect(boot, 1, "user", "none");
  if (acts(sock) || acts(boot))
    SM_FAIL_AT("ranks that disagree must not isolate or restart");
}

SM_TEST(failure_boundaries_a_file_of_the_job_failing_in_a_decoder) {
  /* A loader library calls an image decoder on a file the job's dataset
   * lists: the file, not the libraries. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 51, in <module>\n"
         "    for img, lbl in loader:\n"
         "  File \"" SP "/visionkit/folder.py\", line 80, in __getitem__\n"
         "    im = decode(p)\n"
         "  File \"" SP "/imgcodec/core.py\", line 400, in decode\n"
         "    raise DecodeError(f'cannot decode {p!r}')\n"
         "imgcodec.DecodeError: cannot decode 'shards/val/n0153/0007.webp'\n",
         8, "user", "none");
  /* An array store opened through a feature library, Windows path. */
  expect("Traceback (most recent call last):\n"
         "  File \"C:\\work\\feat.py\", line 9, in <module>\n"
         "    X = featlib.load(cfg.path)\n"
         "  File \"C:\\py\\Lib\\site-packages\\featlib\\io.py\", line "
         "33, in load\n"
         "    return arraystore.File(p, 'r')\n"
         "  File \"C:\\py\\Lib\\site-packages\\arraystore\\file.py\", "
         "line 90, in __init__\n"
         "    raise OSError(msg)\n"
         "OSError: Unable to open file (truncated file: name = "
         "'D:\\feats\\train.h5', eof = 1024)\n",
         8, "user", "none");
  /* An errno-like error of the decoder without a file name: the table
   * gives a library's OSError no class, so the job's stays. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 51, in <module>\n"
         "    for img, lbl in loader:\n"
         "  File \"" SP "/visionkit/folder.py\", line 80, in __getitem__\n"
         "    im = decode(p)\n"
         "  File \"" SP "/imgcodec/stream.py\", line 90, in read\n"
         "    raise OSError(msg)\n"
         "OSError: stream ended early (212 bytes missing)\n",
         8, "user", "none");
  /* A library's own binary named in the message stays the libraries'. */
  expect("Traceback (most recent call last):\n"
         "  File \"fit.py\", line 3, in <module>\n"
         "    m = wrapkit.build()\n"
         "  File \"" SP "/wrapkit/build.py\", line 20, in build\n"
         "    return kernels.load()\n"
         "  File \"" SP "/kernels/loader.py\", line 11, in load\n"
         "    raise RuntimeError(f'bad kernel table in {so!r}')\n"
         "RuntimeError: bad kernel table in '" SP "/kernels/_ops.so'\n",
         8, "framework", "none");
}

SM_TEST(failure_boundaries_values_past_a_tables_size_are_the_jobs) {
  /* Token ids past an embedding, looked up by the tensor library under a
   * model library. */
  expect("Traceback (most recent call last):\n"
         "  File \"gen.py\", line 30, in <module>\n"
         "    out = model(ids)\n"
         "  File \"" SP "/modelzoo/decoder.py\", line 210, in forward\n"
         "    h = self.tok(ids)\n"
         "  File \"" SP "/torch/nn/functional.py\", line 2264, in embedding\n"
         "    return torch.embedding(weight, input, padding_idx)\n"
         "IndexError: index out of range in self\n",
         8, "user", "none");
  /* Labels past the class count, through a trainer's loss. */
  expect("Traceback (most recent call last):\n"
         "  File \"cls.py\", line 12, in <module>\n"
         "    fitkit.run(model, data)\n"
         "  File \"" SP "/fitkit/loop.py\", line 90, in run\n"
         "    loss = F.nll_loss(logp, y)\n"
         "  File \"" SP "/torch/nn/functional.py\", line 2700, in nll_loss\n"
         "    return torch._C._nn.nll_loss_nd(input, target, weight)\n"
         "IndexError: Target 12 is out of bounds.\n",
         8, "user", "none");
  /* An array index past its axis, one line. */
  expect("IndexError: index 4096 is out of bounds for axis 0 with size 4096\n",
         1, "user", "none");
}

/* 1 if the plan for log at threshold th (node known) isolates a node. */
/* 1 if the plan at gate th isolates a node or restarts the job. */
static int acts_at(const char *log, double th) {
  sm_plan p;
  int r = 0;

  plan_for(log, "gn-07", th, &p);
  for (int i = 0; i < p.n_steps; i++)
    r |= strcmp(p.steps[i].action, "isolate_node") == 0 ||
         strcmp(p.steps[i].action, "restart_from_checkpoint") == 0;
  sm_plan_release(&p);
  return r;
}

SM_TEST(failure_boundaries_services_outside_never_isolate_at_any_gate) {
  /* A hub or service outside the cluster that cannot be reached says
   * nothing about a part of the node: not even an operator's low gate
   * isolates it. */
  static const char *const logs[] = {
      "OSError: We couldn't connect to 'https://huggingface.co' to load "
      "this file, couldn't find it in the cached files.\n",
      "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='"
      "huggingface.co', port=443): Max retries exceeded with url: /api\n",
      remote_chain,
      "aiohttp.client_exceptions.ClientConnectorError: Cannot connect to "
      "host storage.example.net:443 ssl:default [Connection timed out]\n"};

  for (size_t i = 0; i < SM_ARRAY_LEN(logs); i++)
    if (acts_at(logs[i], 0.3))
      SM_FAIL_AT("service log %zu isolates or restarts at gate 0.3", i);
}

SM_TEST(failure_boundaries_ambiguous_families_never_isolate_at_any_gate) {
  /* Families that a failing part and a software state of the node both
   * produce (NVML's unknown error, a driver upgraded under the node, the
   * container runtime without GPUs, the fabric manager down, an errno as
   * the application sees it): inferred evidence, so reported, never a
   * node isolated nor the job restarted, whatever gate the operator
   * sets. */
  static const char *const logs[] = {
      "nvidia-smi: Unable to determine the device handle for GPU "
      "0000:3B:00.0: Unknown Error\n",
      "Failed to initialize NVML: Driver/library version mismatch\n",
      "RuntimeError: CUDA error: system not yet initialized\n",
      "step 40 loss 0.7\n"
      "OSError: [Errno 5] Input/output error: '/mnt/lake/part-0007.arrow'\n",
      "step 41 loss 0.7\n"
      "OSError: [Errno 30] Read-only file system: '/ckpt/step41.pt'\n"};

  for (size_t i = 0; i < SM_ARRAY_LEN(logs); i++)
    if (acts_at(logs[i], 0.3))
      SM_FAIL_AT("ambiguous log %zu isolates or restarts at gate 0.3", i);
}

SM_TEST(failure_boundaries_a_compiler_a_library_build_needs) {
  /* A just-in-time op build looking for a C++ compiler (Windows' where
   * and cl), under a library. */
  expect("Traceback (most recent call last):\n"
         "  File \"C:\\lab\\run.py\", line 8, in <module>\n"
         "    ops = kernels.build()\n"
         "  File \"C:\\py\\Lib\\site-packages\\kernels\\jit.py\", line "
         "70, in build\n"
         "    subprocess.check_output(['where', 'cl'])\n"
         "subprocess.CalledProcessError: Command '['where', 'cl']' returned "
         "non-zero exit status 1.\n",
         6, "framework", "none");
  /* The compiler itself failing on a generated source. */
  expect("building 'fastops._C' extension\n"
         "subprocess.CalledProcessError: Command 'g++-11 -shared -fPIC -o "
         "build/fastops.so build/fastops.o' returned non-zero exit status "
         "1.\n",
         2, "framework", "none");
  /* Another command a job's script runs is not a compiler. */
  {
    sm_diagnosis d;
    run("subprocess.CalledProcessError: Command '['which', 'sbatch']' "
        "returned non-zero exit status 1.\n",
        &d);
    if (d.signature != NULL &&
        strcmp(d.signature, "extension-build-failed") == 0)
      SM_FAIL_AT("a scheduler command is not a compiler");
    sm_diagnosis_release(&d);
  }
}
