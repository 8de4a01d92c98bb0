#!/usr/bin/env bash
# genlog.sh - writes a long synthetic training log with a real failure
# (one of the fixture logs) at a chosen fraction of its lines.
#
#   bench/diagnose/genlog.sh LINES FRACTION FIXTURE DECOYS [SEED] > LOG
#
# Before the fault: training output in several framework styles (Megatron,
# Hugging Face, DeepSpeed, tqdm, per-rank lines), with decoys every ~50
# lines: deprecation warnings, loss-scale overflow notices, c10d socket
# retries, skipped corrupt images, NCCL plugin notices.  DECOYS=words adds
# metrics whose names contain "error" (error_rate, top1_error,
# mean_squared_error) and NCCL "dlerror" notices; DECOYS=plain keeps the
# word "error" out of everything before the fault, so that `grep -m1 -i
# error` has to read up to it.  At FRACTION of LINES the fixture is
# copied in; after it come what hung ranks print while they wait: a
# heartbeat line per rank and every 33 lines an NCCL watchdog timeout.
# The line where the fixture starts is written to stderr as
# "fixture_first_line=N".  With GENLOG_EARLY=FILE and GENLOG_EARLY_AT=F,
# FILE (an error the job survived) is also copied in at fraction F.
set -eu
[ $# -ge 4 ] || { echo "usage: $0 LINES FRACTION FIXTURE words|plain [SEED]" >&2; exit 2; }
lines=$1 frac=$2 fixture=$3 decoys=$4 seed=${5:-1}
[ -r "$fixture" ] || { echo "genlog.sh: $fixture: cannot read" >&2; exit 2; }
case "$decoys" in words|plain) ;; *) echo "genlog.sh: DECOYS must be words or plain" >&2; exit 2 ;; esac
at=$(awk -v n="$lines" -v f="$frac" 'BEGIN { printf "%d", n * f + 1 }')
early=${GENLOG_EARLY:-}
eat=0
if [ -n "$early" ]; then
  [ -r "$early" ] || { echo "genlog.sh: $early: cannot read" >&2; exit 2; }
  eat=$(awk -v n="$lines" -v f="${GENLOG_EARLY_AT:-0.2}" 'BEGIN { printf "%d", n * f + 1 }')
  echo "early_first_line=$eat" >&2
fi
echo "fixture_first_line=$at" >&2
exec awk -v n="$lines" -v at="$at" -v fx="$fixture" -v words="$decoys" -v seed="$seed" -v eat="$eat" -v early="$early" '
BEGIN {
  srand(seed)
  d[0] = "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:429: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly."
  d[1] = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"
  d[2] = "[W socket.cpp:601] [c10d] The client socket has failed to connect to [gpu-a01]:29500 (errno: 99 - Cannot assign requested address)."
  d[3] = "skipping corrupted image /data/train/n01440764/n01440764_10043.JPEG (cannot identify image file)"
  d[4] = "[2024-05-02 10:11:12,001] [INFO] [fused_optimizer.py:344:_update_scale] Grad overflow on iteration 1212"
  d[5] = "wandb: Network issue (ConnectionResetByPeer), entering retry loop."
  nd = 6
  if (words == "words") {
    d[6] = "gpu-a01:1201:1301 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory"
    d[7] = "eval: error_rate 0.0412 top1_error 23.8 mean_squared_error 0.0121"
    nd = 8
  }
  ranks = 16
  for (i = 1; i <= n; i++) {
    if (i == at || (eat > 0 && i == eat)) {
      f = i == at ? fx : early
      while ((getline l < f) > 0) { print l; i++ }
      close(f)
      i--
      continue
    }
    if (i > at) {
      k = i % 33
      if (k == 0)
        printf "[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4412, OpType=ALLREDUCE, NumelIn=131072, NumelOut=131072, Timeout(ms)=600000) ran for %d milliseconds before timing out.\n", i % ranks, i % ranks, 600000 + i % 1000
      else
        printf "heartbeat: rank %d waiting in allreduce SeqNum=4412 for %d s\n", i % ranks, int(i / 97)
      continue
    }
    r = rand()
    loss = 2 + rand()
    if (r < 0.02) {
      print d[int(rand() * nd)]
    } else if (r < 0.35) {
      printf "[2024-05-02 10:%02d:%02d,%03d] [INFO] step %d | loss %.4f | lr %.2e | grad_norm %.3f | %.1f ms/step\n", int(i / 60) % 60, i % 60, i % 1000, i, loss, 3e-4 * rand(), 0.5 + rand(), 400 + 20 * rand()
    } else if (r < 0.6) {
      printf " iteration %8d/ 10000000 | consumed samples: %10d | elapsed time per iteration (ms): %.1f | learning rate: %.3E | lm loss: %.6E | loss scale: 65536.0 | grad norm: %.3f |\n", i, i * 512, 1400 + 20 * rand(), 3e-4, loss, 0.4 + rand()
    } else if (r < 0.75) {
      printf "{'"'"'loss'"'"': %.4f, '"'"'grad_norm'"'"': %.3f, '"'"'learning_rate'"'"': %.2e, '"'"'epoch'"'"': %.2f}\n", loss, rand(), 2e-5, i / 50000
    } else if (r < 0.9) {
      printf "[rank%d]: step %d loss %.4f tokens/s %.0f\n", i % ranks, i, loss, 38000 + 1000 * rand()
    } else {
      printf "Epoch %d:  %d%%|####      | %d/10000 [%02d:%02d<11:02,  3.31it/s, loss=%.3f]\n", int(i / 10000), i % 100, i % 10000, int(i / 60) % 60, i % 60, loss
    }
  }
}'
