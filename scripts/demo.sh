#!/usr/bin/env bash
# The main job on the embedded defaults (grows with each component).
set -eu
cd "$(dirname "$0")/.."
# DEMO_OUT: where the reports and the demo's history go (build/demo).
OUT=${DEMO_OUT:-$PWD/build/demo}
build/schedmate --version
mkdir -p "$OUT"
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
rm -f $OUT/history.db*
$S history add --db $OUT/history.db --id gpt2-run-1 --duration 352800 \
  --sm-util 92 --gpu-type a100 --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run1
$S history add --db $OUT/history.db --id gpt2-run-2 --duration 338400 \
  --sm-util 90 --gpu-type a100 --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run2
$S history add --db $OUT/history.db --id gpt2-run-3 --duration 5400 \
  --end-state canceled --repo "$F" -- "${CMD[@]}" --out_dir=/ckpt/run3
echo
echo "== schedmate advise (same job, new output directory and seed)"
$S advise --db $OUT/history.db --repo "$F" -- "${CMD[@]}" \
  --out_dir=/ckpt/run4 --seed=7
echo
echo "== schedmate advise (a bigger batch: not the same job)"
$S advise --db $OUT/history.db --repo "$F" -- "${CMD[@]/--batch_size=16/--batch_size=32}"

# Trace-driven simulation: the baseline policies on the Philly job list
# shipped in data/traces (82,247 jobs), on the Philly virtual clusters.
echo
echo "== schedmate simulate: baseline policies on the Philly trace"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz \
  --vc-config data/traces/philly_vc.csv \
  --compare fifo,sjf,srtf,qssf,tiresias \
  --report $OUT/simulate_philly.html
echo "HTML report (opens offline): $OUT/simulate_philly.html"

# The main job: SchedMate inside the schedulers.  Lucid against Lucid +
# SchedMate, QSSF and Tiresias against standalone SchedMate-SJF, and
# SchedMate-SJF with the Failure Handler, on the same Philly trace and VC
# table.  Jobs are given workload templates of data/workloads (their code
# read by the real extractor) from what is known when they are submitted,
# never from how long they ran.  Lucid's co-location tables are read from
# ../shared/traces/lucid when present (non-commercial licence, not
# shipped); otherwise the built-in model is used, and the report says so.
echo
echo "== schedmate simulate: SchedMate in the schedulers on the Philly trace"
echo "Each SchedMate path runs once per source of facts:"
echo "  history     - the history engine online over the trace, fed only what is known at submission;"
echo "  calibrated  - the reference design's measured accuracy (73 % hits, 85.7 % within 2x), not this trace's."
build/schedmate simulate --trace data/traces/sia_philly.csv.gz \
  --vc-config data/traces/philly_vc.csv \
  --compare lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh \
  --workloads data/workloads \
  --report $OUT/schedmate_philly.html
echo "HTML report (opens offline): $OUT/schedmate_philly.html"

# The same comparison where queues form: one cluster sized so that the
# trace offers a load of 0.8 (the Philly VC table above offers about
# 0.13, too little for the order of a queue to matter), with Lucid +
# SchedMate rerun for Tracker detection rates from 0 to 1.
echo
echo "== schedmate simulate: the same under load (one cluster, load 0.8), Tracker detection swept"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz --load 0.8 \
  --compare lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh \
  --workloads data/workloads --sweep lucid.untracked=1,0.8,0.6,0.4,0.2,0 \
  --report $OUT/schedmate_philly_load.html
echo "HTML report (opens offline): $OUT/schedmate_philly_load.html"

# The Philly list records no end states, so the Failure Handler has
# nothing to do there.  Its comparison runs on a SYNTHETIC trace with
# failures: generated from Acme's published Seren statistics (43 % of
# GPU jobs fail), not real jobs; users resubmit lost jobs after 600 s.
echo
echo "== schedmate simulate: the Failure Handler on a SYNTHETIC trace with failures (Seren statistics, 14 days)"
build/schedmate simulate --synthetic seren --synthetic-days 14 --failures resubmit \
  --compare qssf,sjf-schedmate,sjf-schedmate+fh --workloads data/workloads \
  --report $OUT/schedmate_seren_failures.html
echo "HTML report (opens offline): $OUT/schedmate_seren_failures.html"
