#!/usr/bin/env bash
# The GPU sampler's cost and, on a machine with a GPU, its readings next to
# nvidia-smi's.  Not part of CI.
#
# 1. Overhead with the fake NVML (tests/nvml): a node with 8 GPUs and 16
#    processes in 8 jobs, mapped through cgroup files, per-process
#    utilisation on.  `schedmate gpustat --interval 1` for DURATION s (30):
#    CPU time over wall time, as a share of one core, and its ratio to the
#    1 % budget; then the cost of one round, measured over many rounds at
#    a 10 ms interval.
# 2. On a real device (when nvidia-smi exists and the driver's NVML
#    loads): over the same DURATION, `schedmate gpustat --interval 0.1
#    --device-log` beside
#      nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv -lms 100
#    per GPU: mean utilisation and memory from both, and the CPU each
#    used (the reference is nvidia-smi); then gpustat's own overhead at
#    1 s on the real driver.
#
#   bench/gpu/run.sh             DURATION=10 bench/gpu/run.sh
set -eu
cd "$(dirname "$0")/../.."
DUR=${DURATION:-30}
[ "$DUR" -ge 2 ] 2>/dev/null || { echo "bench/gpu: DURATION must be >= 2 s"; exit 2; }
make -s all build/nvml/libnvidia-ml.so.1 >/dev/null
BIN=${SCHEDMATE:-$PWD/build/schedmate}
LIBDIR=$PWD/build/nvml
TMP=$(mktemp -d /tmp/schedmate-bench-gpu.XXXXXX)
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# ---- 1. Overhead with the fake NVML ----
mkdir -p "$TMP/proc"
{
  echo "driver 550.54.15"
  for g in 0 1 2 3 4 5 6 7; do
    j=$((g / 2)); p1=$((2000 + g * 2)); p2=$((p1 + 1))
    echo "device $g 81559 GPU-bench-000$g NVIDIA H100 80GB HBM3"
    echo "row $g auto 45 auto 650 $p1:30000:60 $p2:20000:25"
    for p in $p1 $p2; do
      mkdir -p "$TMP/proc/$p"
      echo "0::/system.slice/slurmstepd.scope/job_$((700 + j * 2 + (p - p1)))/step_0/user/task_0" \
        >"$TMP/proc/$p/cgroup"
    done
  done
} >"$TMP/fake.script"

# run_sampler INTERVAL SECONDS STATUS: runs the sampler on the fake.
run_sampler() {
  LD_LIBRARY_PATH=$LIBDIR FAKE_NVML_SCRIPT=$TMP/fake.script "$BIN" gpustat \
    --interval "$1" --duration "$2" --out "$TMP/out" --proc-root "$TMP/proc" \
    --status "$3" --flush 10 --quiet
}
jsonnum() { sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p" "$1" | head -1; }

echo "== schedmate gpustat, fake NVML: 8 GPUs, 16 processes, 8 jobs"
t0=$(date +%s.%N)
run_sampler 1 "$DUR" "$TMP/s1.json"
t1=$(date +%s.%N)
cpu=$(jsonnum "$TMP/s1.json" cpu_s)
rounds=$(jsonnum "$TMP/s1.json" rounds)
awk -v c="$cpu" -v a="$t0" -v b="$t1" -v r="$rounds" 'BEGIN {
  w = b - a; pct = 100 * c / w
  printf "  interval 1 s, %d rounds in %.1f s: CPU %.4f s = %.3f %% of one core (budget 1 %%: x%.3f)\n",
    r, w, c, pct, pct / 1.0 }'
run_sampler 0.01 5 "$TMP/s2.json"
cpu2=$(jsonnum "$TMP/s2.json" cpu_s)
rounds2=$(jsonnum "$TMP/s2.json" rounds)
awk -v c="$cpu2" -v r="$rounds2" 'BEGIN {
  printf "  one round (over %d rounds at 10 ms): %.0f us of CPU, i.e. %.3f %% of a core at 1 s\n",
    r, 1e6 * c / r, 100 * (c / r) / 1.0 }'
jobs=$(ls "$TMP/out" | wc -l)
echo "  job files written: $jobs"

# ---- 2. A real device beside nvidia-smi ----
echo "== a real GPU beside nvidia-smi"
if ! command -v nvidia-smi >/dev/null; then
  echo "  skipped: no nvidia-smi on this machine"
  exit 0
fi
if ! env -u LD_LIBRARY_PATH "$BIN" gpustat --once >"$TMP/once.txt" 2>"$TMP/once.err"; then
  echo "  skipped: $(cat "$TMP/once.err")"
  exit 0
fi
cat "$TMP/once.txt"
ticks=$(getconf CLK_TCK)
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits \
  -lms 100 >"$TMP/smi.csv" 2>/dev/null &
smi=$!
PIDS="$smi"
t0=$(date +%s.%N)
env -u LD_LIBRARY_PATH "$BIN" gpustat --interval 0.1 --duration "$DUR" \
  --device-log "$TMP/dev.csv" --status "$TMP/real.json" --quiet
t1=$(date +%s.%N)
smi_cpu=$(awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$smi/stat")
kill "$smi" 2>/dev/null || true
wait "$smi" 2>/dev/null || true
PIDS=""
cpu=$(jsonnum "$TMP/real.json" cpu_s)
awk -F, -v OFS=, '{gsub(/ /, ""); print}' "$TMP/smi.csv" >"$TMP/smi2.csv"
printf '  %-4s %22s %22s\n' GPU "gpustat sm% / MiB" "nvidia-smi util% / MiB"
for g in $(cut -d, -f2 "$TMP/dev.csv" | sort -un); do
  a=$(awk -F, -v g="$g" '$2 == g && $3 != "" {s += $3; m += $5; n++} END {if (n) printf "%5.1f / %8.0f", s / n, m / n}' "$TMP/dev.csv")
  b=$(awk -F, -v g="$g" '$1 == g {s += $2; m += $3; n++} END {if (n) printf "%5.1f / %8.0f", s / n, m / n}' "$TMP/smi2.csv")
  printf '  %-4s %22s %22s\n' "$g" "$a" "$b"
done
awk -v c="$cpu" -v s="$smi_cpu" -v a="$t0" -v b="$t1" 'BEGIN {
  w = b - a
  printf "  CPU over %.1f s at 100 ms: gpustat %.3f s (%.2f %% of a core), nvidia-smi %.3f s (%.2f %%): x%.2f of the reference\n",
    w, c, 100 * c / w, s, 100 * s / w, s > 0 ? c / s : 0 }'
t0=$(date +%s.%N)
env -u LD_LIBRARY_PATH "$BIN" gpustat --interval 1 --duration "$DUR" \
  --status "$TMP/real1.json" --out "$TMP/realout" --quiet
t1=$(date +%s.%N)
cpu=$(jsonnum "$TMP/real1.json" cpu_s)
awk -v c="$cpu" -v a="$t0" -v b="$t1" 'BEGIN {
  w = b - a; printf "  real driver, interval 1 s: %.3f %% of one core (budget 1 %%: x%.3f)\n", 100 * c / w, 100 * c / w }'
