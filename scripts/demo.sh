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
