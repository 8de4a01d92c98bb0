#!/usr/bin/env bash
# The main job on the embedded defaults (grows with each component).
set -eu
cd "$(dirname "$0")/.."
build/schedmate --version
mkdir -p build/demo
S=build/schedmate

# Tracker: a running job's progress from its log, newest lines first.
echo
echo "== schedmate track data/examples/train.log"
$S track data/examples/train.log

# Failure Handler: the first real error of a failed job and a safe plan.
echo
echo "== schedmate diagnose data/examples/failed_ecc.log"
$S diagnose data/examples/failed_ecc.log || true   # exit 1: a failure found

# Advisor: extract a job's metadata from its repository and command, keep
# past runs in a history, and estimate a new submission from them.
F=tests/fixtures/nanogpt_config/repo
CMD=(torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py --batch_size=16)
echo
echo "== schedmate extract --repo $F -- ${CMD[*]}"
$S extract --repo "$F" -- "${CMD[@]}"
rm -f build/demo/history.db*
$S history add --db build/demo/history.db --id gpt2-run-1 --duration 352800 \
  --sm-util 92 --gpu-type a100 --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run1
$S history add --db build/demo/history.db --id gpt2-run-2 --duration 338400 \
  --sm-util 90 --gpu-type a100 --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run2
$S history add --db build/demo/history.db --id gpt2-run-3 --duration 5400 \
  --end-state canceled --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run3
echo
echo "== schedmate advise (same job, new output directory and seed)"
$S advise --db build/demo/history.db --repo "$F" -- "${CMD[@]}" \
  --out_dir=/ckpt/run4 --seed=7
echo
echo "== schedmate advise (a bigger batch: not the same job)"
$S advise --db build/demo/history.db --repo "$F" -- "${CMD[@]/--batch_size=16/--batch_size=32}"

# Trace-driven simulation: the baseline policies on the Philly job list
# shipped in data/traces (82,247 jobs), on the Philly virtual clusters.
echo
echo "== schedmate simulate: baseline policies on the Philly trace"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz \
  --vc-config data/traces/philly_vc.csv \
  --compare fifo,sjf,srtf,qssf,tiresias \
  --report build/demo/simulate_philly.html
echo "HTML report (opens offline): $PWD/build/demo/simulate_philly.html"
