#!/usr/bin/env bash
# The main job on the embedded defaults (grows with each component).
set -eu
cd "$(dirname "$0")/.."
build/schedmate --version

# Trace-driven simulation: the baseline policies on the Philly job list
# shipped in data/traces (82,247 jobs), on the Philly virtual clusters.
mkdir -p build/demo
echo
echo "== schedmate simulate: baseline policies on the Philly trace"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz \
  --vc-config data/traces/philly_vc.csv \
  --compare fifo,sjf,srtf,qssf,tiresias \
  --report build/demo/simulate_philly.html
echo "HTML report (opens offline): $PWD/build/demo/simulate_philly.html"

# The main job: SchedMate inside the schedulers.  Lucid against Lucid +
# SchedMate, QSSF and Tiresias against standalone SchedMate-SJF, and
# SchedMate-SJF with the Failure Handler, on the same Philly trace and VC
# table.  The facts come from the history engine online over the trace,
# with jobs mapped onto the workload templates of data/workloads (their
# code read by the real extractor).  Lucid's co-location tables are read
# from ../shared/traces/lucid when present (non-commercial licence, not
# shipped); otherwise the built-in model is used, and the report says so.
echo
echo "== schedmate simulate: SchedMate in the schedulers on the Philly trace"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz \
  --vc-config data/traces/philly_vc.csv \
  --compare lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh \
  --workloads data/workloads \
  --report build/demo/schedmate_philly.html
echo "HTML report (opens offline): $PWD/build/demo/schedmate_philly.html"

# The same comparison where queues form: one cluster sized so that the
# trace offers a load of 0.8 (the Philly VC table above offers about
# 0.13, too little for the order of a queue to matter).
echo
echo "== schedmate simulate: the same under load (one cluster, load 0.8)"
build/schedmate simulate --trace data/traces/sia_philly.csv.gz --load 0.8 \
  --compare lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh \
  --workloads data/workloads \
  --report build/demo/schedmate_philly_load.html
echo "HTML report (opens offline): $PWD/build/demo/schedmate_philly_load.html"
