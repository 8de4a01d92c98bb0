#!/usr/bin/env bash
# bench/simulate - how fast `schedmate simulate` replays the Philly trace.
#
# Workloads (the shipped data/traces/sia_philly.csv.gz on the Philly VC
# table data/traces/philly_vc.csv, 352 nodes x 8 GPUs in 11 VCs):
#   week  the 10,650 jobs Lucid's simulator keeps: submitted from
#         2017-10-01 00:00:00 to 2017-10-07 23:59:00, both included;
#   full  all 82,247 jobs (82,229 simulated: 18 belong to 4 VCs that the
#         table does not have, as in Lucid).
# For FIFO, SJF, QSSF and Tiresias it prints, per workload, the median of
# REPEAT runs of: the simulation alone (wall_s from --json) and the whole
# command (reading and decompressing the trace, simulating, reporting),
# and jobs per second of the whole command.
#
# Reference (the issue's measurement on this machine): Lucid's Python
# simulator needs 70 to 265 s per policy for the week, on one core.  It
# cannot run here (it needs pandas from PyPI), so the anchor figures are
# printed as given and the speed-up is their ratio to the whole-command
# time.  Goal: >= 100x, i.e. under 1 s per policy for the week.
set -eu
cd "$(dirname "$0")/../.."
BIN=${SCHEDMATE:-build/schedmate}
REPEAT=${REPEAT:-5}
TRACE=data/traces/sia_philly.csv.gz
VCS=data/traces/philly_vc.csv
ANCHOR_LO=70 ANCHOR_HI=265
[ -x "$BIN" ] || { echo "bench/simulate: $BIN not built (run make)"; exit 1; }
command -v jq >/dev/null || { echo "bench/simulate: jq missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

run() { # WORKLOAD POLICY ARGS...
  local w=$1 p=$2; shift 2
  : > "$tmp/sim" ; : > "$tmp/tot"
  for _ in $(seq "$REPEAT"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" simulate --json --no-progress --trace $TRACE --vc-config $VCS \
      --policy "$p" "$@" > "$tmp/out.json"
    t1=$(date +%s.%N)
    jq -r .wall_s "$tmp/out.json" >> "$tmp/sim"
    awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f\n", b-a}' >> "$tmp/tot"
  done
  local sim tot jobs
  sim=$(median < "$tmp/sim")
  tot=$(median < "$tmp/tot")
  jobs=$(jq -r .jobs "$tmp/out.json")
  if [ "$w" = week ]; then
    awk -v p="$p" -v j="$jobs" -v s="$sim" -v t="$tot" -v lo=$ANCHOR_LO -v hi=$ANCHOR_HI \
      'BEGIN{printf "%-6s %-9s %7d %10.4f %10.4f %12.0f   %3d-%3d s  %7.0fx-%.0fx\n",
             "week", p, j, s, t, j/t, lo, hi, lo/t, hi/t}'
  else
    awk -v p="$p" -v j="$jobs" -v s="$sim" -v t="$tot" \
      'BEGIN{printf "%-6s %-9s %7d %10.4f %10.4f %12.0f   %9s  %9s\n",
             "full", p, j, s, t, j/t, "-", "-"}'
  fi
}

echo "schedmate simulate on $TRACE + $VCS (median of $REPEAT runs, $(nproc) CPUs visible)"
printf '%-6s %-9s %7s %10s %10s %12s   %9s  %s\n' workload policy jobs \
  "sim s" "total s" "jobs/s" "anchor" "speed-up"
WEEK=(--from "2017-10-01 00:00:00" --to "2017-10-07 23:59:00")
for p in fifo sjf qssf tiresias; do run week $p "${WEEK[@]}"; done
for p in fifo sjf qssf tiresias; do run full $p; done
echo "anchor: Lucid's simulator (Python, time-stepped), 70-265 s per policy"
echo "for the week as measured for the issue; speed-up = anchor / total s."
echo "sim s = simulation only; total s = the whole command incl. reading"
echo "and decompressing the trace (82,247 rows are parsed in both cases)."

# The SchedMate comparison (the main job of `make demo`): six policies in
# one command, facts from the history engine online over the trace with
# the workload catalogue (45 commands through the real extractor, per
# semantic run), on the VC table and on one cluster at load 0.8.  The
# anchor is the same as above, per policy: Lucid's simulator would need
# 6 x 70-265 s for the week.
SM_POL=lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh
smrun() { # LABEL ARGS...
  local label=$1; shift
  : > "$tmp/tot"
  for _ in $(seq "$REPEAT"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" simulate --json --no-progress --trace $TRACE --compare $SM_POL \
      --workloads data/workloads "$@" > "$tmp/sm.json"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f\n", b-a}' >> "$tmp/tot"
  done
  local tot jobs
  tot=$(median < "$tmp/tot")
  jobs=$(jq -r '.results[0].jobs' "$tmp/sm.json")
  printf '%-22s %7d %10.3f   %s\n' "$label" "$jobs" "$tot" \
    "$(jq -r '[.results[] | "\(.policy) \(.wall_s * 1000 | floor) ms"] | join(", ")' "$tmp/sm.json")"
  if [ "$label" = "week, VC table" ]; then
    awk -v t="$tot" -v lo=$ANCHOR_LO -v hi=$ANCHOR_HI \
      'BEGIN{printf "%-22s anchor 6 x %d-%d s = %d-%d s: %.0fx-%.0fx\n", "", lo, hi, 6*lo, 6*hi, 6*lo/t, 6*hi/t}'
  fi
}
echo
echo "SchedMate comparison, six policies in one command (median of $REPEAT; total s = whole command)"
printf '%-22s %7s %10s   %s\n' workload jobs "total s" "simulation per policy"
smrun "week, VC table" --vc-config $VCS "${WEEK[@]}"
smrun "full, VC table" --vc-config $VCS
smrun "full, load 0.8" --load 0.8

# Scale: the simulator is linear in jobs and in GPUs requested.  Each
# case must finish in under 2 s of simulation (wall_s); the reference is
# the build before the fix (issue 14): 15.4 s for one job of 1,000,000
# GPUs, 36.9 s for 1,000,000 jobs at time 0 under FIFO, and
# lucid+schedmate 2.6-2.9 s (100x plain Lucid) on the first 10,000-20,000
# Philly jobs at load 0.8.
echo
echo "Scale (simulation s, median of $REPEAT; target < 2 s each)"
printf 'job_id,submit_s,duration_s,gpus\nbig,0,100,1000000\n' > "$tmp/big.csv"
awk 'BEGIN { print "job_id,submit_s,duration_s,gpus";
  for (i = 0; i < 1000000; i++) printf "j%d,0,%d,1\n", i, 100 + i % 97 }' > "$tmp/t0.csv"
scale() { # LABEL ARGS...
  local label=$1; shift
  : > "$tmp/sim"
  for _ in $(seq "$REPEAT"); do
    "$BIN" simulate --json --no-progress "$@" | jq -r .wall_s >> "$tmp/sim"
  done
  printf '%-58s %8.3f\n' "$label" "$(median < "$tmp/sim")"
}
scale "one job of 1,000,000 GPUs (fifo, auto cluster)" --trace "$tmp/big.csv" --policy fifo
scale "1,000,000 jobs at time 0 (fifo)" --trace "$tmp/t0.csv" --policy fifo
scale "1,000,000 jobs at time 0 (lucid, built-in profiles)" --trace "$tmp/t0.csv" --policy lucid --lucid-tables builtin
for n in 10000 20000; do
  for p in lucid lucid+schedmate; do
    scale "first $n Philly jobs, load 0.8, $p" --trace $TRACE --limit $n --load 0.8 \
      --policy $p --workloads data/workloads --lucid-tables builtin
  done
done
