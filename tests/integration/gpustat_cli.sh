#!/usr/bin/env bash
# gpustat_cli.sh - `schedmate gpustat` on a machine without a GPU, with the
# fake NVML of tests/nvml loaded through LD_LIBRARY_PATH:
#   - no NVML, no driver, bad options: exit 2 with one line;
#   - --once: devices, processes mapped to jobs (cgroup v1, cgroup v2,
#     environment), malformed /proc content left unattributed;
#   - a run: one file per job with the warm-up excluded, the status file,
#     the device log;
#   - a GPU lost mid-run: the sampler goes on, the job's file carries the
#     signal, and `schedmate diagnose` reads it as a GPU fault;
#   - SIGTERM: a clean stop with the files written.
. "$(dirname "$0")/../lib.sh"
command -v jq >/dev/null || skip "jq not installed"
LIBDIR=$PWD/${BUILD:-build/asan}/nvml
if [ ! -f "$LIBDIR/libnvidia-ml.so.1" ]; then
  LIBDIR=$SM_TMP/nvml; mkdir -p "$LIBDIR"
  cc -shared -fPIC -O2 -o "$LIBDIR/libnvidia-ml.so.1" tests/nvml/fake_nvml.c \
    || fail "cannot build the fake NVML"
fi
T=$SM_TMP
P=$T/proc
mkdir -p "$P"/{1001,1002,1003,1004,1006}
printf '12:devices:/slurm/uid_1000/job_501/step_0/task_0\n4:memory:/slurm/uid_1000/job_501/step_0/task_0\n0::/system.slice/slurmd.service\n' >"$P/1001/cgroup"
printf '0::/system.slice/slurmstepd.scope/job_502/step_batch/user/task_0\n' >"$P/1002/cgroup"
printf '0::/system.slice/slurmd.service\n' >"$P/1003/cgroup"
printf 'PATH=/usr/bin\0SLURM_JOB_ID=503\0SLURM_PROCID=0\0' >"$P/1003/environ"
head -c 3000 /dev/urandom | tr -d '\n' >"$P/1004/cgroup"
printf 'SLURM_JOB_ID=12x\0' >"$P/1004/environ"
printf '0::/slurm/uid_0/job_999999999999/step_0\n' >"$P/1006/cgroup"
# (1005 has no /proc entry at all: a process that just ended.)

cat >"$T/script" <<'EOF'
driver 535.104.05
device 0 81920 GPU-4f1c0b6e-0000 NVIDIA A100-SXM4-80GB
device 1 81920 GPU-4f1c0b6e-0001 NVIDIA A100-SXM4-80GB
# GPU 0: job 501 alone; 5 rounds of start-up, then the steady state.
row 0 8 2 3000 90 1001:3000:8
repeat 4
row 0 91 45 61000 385 1001:61000:91
repeat 100
# GPU 1: jobs 502 and 503 share it with processes in no job.
row 1 80 50 50000 350 1002:30000:55 1003:12000:25 1004:4000:0 1005:2000:0 1006:1000:0
repeat 100
EOF
export LD_LIBRARY_PATH=$LIBDIR FAKE_NVML_SCRIPT=$T/script

# ---- No NVML, no driver, bad usage ----
expect_rc 2 "$SCHEDMATE" gpustat --once --nvml /nonexistent/libnvidia-ml.so.1
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "not one line: $(cat "$SM_TMP/last.err")"
grep -q "NVML is not available" "$SM_TMP/last.err" || fail "$(cat "$SM_TMP/last.err")"
FAKE_NVML_SCRIPT= expect_rc 2 env -u FAKE_NVML_SCRIPT "$SCHEDMATE" gpustat --once
grep -q "NVML_ERROR_DRIVER_NOT_LOADED" "$SM_TMP/last.err" || fail "$(cat "$SM_TMP/last.err")"
expect_rc 2 "$SCHEDMATE" gpustat --interval 0 --out "$T/x"
expect_rc 2 "$SCHEDMATE" gpustat --interval abc --out "$T/x"
expect_rc 2 "$SCHEDMATE" gpustat --bogus
expect_rc 2 "$SCHEDMATE" gpustat --json --out "$T/x"
expect_rc 2 "$SCHEDMATE" gpustat
expect_rc 2 "$SCHEDMATE" gpustat --once --rounds 3
expect_rc 2 "$SCHEDMATE" gpustat --keep 0 --out "$T/x"
expect_rc 0 "$SCHEDMATE" gpustat --help
grep -q "Exit status" "$SM_TMP/last.out" || fail "help"
: >"$T/file"
expect_rc 2 "$SCHEDMATE" gpustat --once --out "$T/file/out"

# ---- One round ----
expect_rc 0 "$SCHEDMATE" gpustat --once --json --proc-root "$P" --node n7
cp "$SM_TMP/last.out" "$T/once.json"
[ "$(jget "$T/once.json" '.devices | length')" = 2 ] || fail "devices: $(cat "$T/once.json")"
[ "$(jget "$T/once.json" '.driver_version')" = 535.104.05 ] || fail driver
[ "$(jget "$T/once.json" '[.jobs[].job_id] | sort | join(",")')" = 501,502,503 ] \
  || fail "jobs: $(jget "$T/once.json" '.jobs')"
[ "$(jget "$T/once.json" '.unattributed.processes')" = 3 ] \
  || fail "unattributed: $(jget "$T/once.json" '.unattributed')"
[ "$(jget "$T/once.json" '.devices[1].attribution')" = process ] || fail attribution
expect_rc 0 "$SCHEDMATE" gpustat --once --proc-root "$P"
grep -q "GPU 1  NVIDIA A100-SXM4-80GB" "$SM_TMP/last.out" || fail "text: $(cat "$SM_TMP/last.out")"
grep -q "job 502: 1 GPU(s), sm 55 %, memory 30000 MiB" "$SM_TMP/last.out" \
  || fail "text: $(cat "$SM_TMP/last.out")"

# ---- A run ----
OUT=$T/out
expect_rc 0 "$SCHEDMATE" gpustat --rounds 40 --interval 0.02 --out "$OUT" \
  --proc-root "$P" --node n7 --status "$T/status.json" --device-log "$T/dev.csv" \
  --warmup 1000 --warmup-frac 0.25 --flush 0.1 --points 20 --quiet
for j in 501 502 503; do
  [ "$(ls "$OUT/$j" | grep -c '^n7\.[0-9]*\.json$')" = 1 ] || fail "job $j: $(ls "$OUT/$j")"
done
f501=$(ls "$OUT"/501/n7.*.json)
f502=$(ls "$OUT"/502/n7.*.json)
f503=$(ls "$OUT"/503/n7.*.json)
[ "$(jget "$f501" .format)" = schedmate-gpustat/1 ] || fail format
[ "$(jget "$f501" .mapped_by)" = cgroup ] || fail "mapped 501"
[ "$(jget "$f503" .mapped_by)" = environ ] || fail "mapped 503"
[ "$(jget "$f501" .summary.samples)" = 40 ] || fail "samples: $(jget "$f501" .summary)"
# The five start-up rounds fall in the warm-up: the steady mean is 91.
[ "$(jget "$f501" .summary.sm_util.mean)" = 91 ] || fail "steady sm: $(jget "$f501" .summary)"
[ "$(jget "$f501" .summary.sm_util.p95)" = 91 ] || fail "p95"
[ "$(jget "$f501" '.summary.warmup_s > 0')" = true ] || fail "no warm-up"
[ "$(jget "$f501" '.series.sm_util[0]')" = 8 ] || fail "series: $(jget "$f501" .series)"
[ "$(jget "$f501" '.series.points')" = 20 ] || fail "points"
[ "$(jget "$f501" .summary.gpu_mem_mib)" = 61000 ] || fail "peak"
[ "$(jget "$f501" .summary.power_w.mean)" = 385 ] || fail "power"
[ "$(jget "$f502" .summary.sm_util.mean)" = 55 ] || fail "502 sm"
[ "$(jget "$f502" .summary.mem_bw_util.n)" = 0 ] || fail "502 bandwidth is not its own"
[ "$(jget "$f503" .summary.gpu_mem_mib)" = 12000 ] || fail "503 memory"
# The sampler stopped while the jobs ran: the files say so.
[ "$(jget "$f501" .final)" = false ] && [ "$(jget "$f501" .sampler_stopped)" = true ] \
  || fail "stop flags"
[ "$(jget "$T/status.json" .rounds)" = 40 ] || fail "status: $(cat "$T/status.json")"
[ "$(wc -l <"$T/dev.csv")" = 80 ] || fail "device log: $(wc -l <"$T/dev.csv")"
grep -q ',0,91.0,45.0,61000.0,385.0$' "$T/dev.csv" || fail "device log: $(tail -2 "$T/dev.csv")"

# ---- A GPU lost mid-run ----
cat >"$T/lost" <<'EOF'
driver 535.104.05
device 0 81920 GPU-4f1c0b6e-0000 NVIDIA A100-SXM4-80GB
device 1 81920 GPU-4f1c0b6e-0001 NVIDIA A100-SXM4-80GB
row 0 91 45 61000 385 1001:61000:91
row 1 80 50 50000 350 1002:30000:55
repeat 9
row 1 lost
EOF
FAKE_NVML_SCRIPT=$T/lost expect_rc 0 "$SCHEDMATE" gpustat --rounds 30 --interval 0.01 \
  --out "$T/lostout" --proc-root "$P" --node n7 --status "$T/lost.json" --idle-end 0.1
[ "$(grep -c 'NVML_ERROR_GPU_IS_LOST' "$SM_TMP/last.err")" = 1 ] \
  || fail "lost logged $(grep -c GPU_IS_LOST "$SM_TMP/last.err") times"
[ "$(jget "$T/lost.json" '.devices[1].state')" = lost ] || fail "status: $(jget "$T/lost.json" .devices)"
[ "$(jget "$T/lost.json" '.devices[0].state')" = ok ] || fail "GPU 0"
l502=$(ls "$T"/lostout/502/n7.*.json)
l501=$(ls "$T"/lostout/501/n7.*.json)
[ "$(jget "$l502" '.errors[0].error')" = NVML_ERROR_GPU_IS_LOST ] || fail "no signal: $(jget "$l502" .errors)"
[ "$(jget "$l502" '.final')" = true ] || fail "502 should have ended (no GPU answers)"
[ "$(jget "$l501" '.summary.samples')" = 30 ] || fail "GPU 0 was not sampled on: $(jget "$l501" .summary.samples)"
jget "$l502" '.errors[0].line' >"$T/signal.log"
expect_rc 1 "$SCHEDMATE" diagnose --json "$T/signal.log"
[ "$(jget "$SM_TMP/last.out" .category)" = infrastructure ] || fail "diagnose: $(cat "$SM_TMP/last.out")"
[ "$(jget "$SM_TMP/last.out" .component)" = gpu ] || fail "component"

# ---- SIGTERM ----
"$SCHEDMATE" gpustat --interval 0.05 --out "$T/sig" --proc-root "$P" --node n7 \
  --status "$T/sig.json" --flush 100 >"$T/sig.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/sig.json" ] && break; sleep 0.05; done
[ -s "$T/sig.json" ] || { kill $pid; fail "no status file"; }
sleep 0.3
kill -TERM $pid
rc=0; wait $pid || rc=$?
[ $rc = 0 ] || fail "exit $rc after SIGTERM: $(cat "$T/sig.log")"
grep -q "stopped" "$T/sig.log" || fail "no clean stop"
ls "$T"/sig/501/n7.*.json >/dev/null 2>&1 || fail "no file written at the stop"
echo "ok: three jobs mapped, warm-up excluded (steady 91 %), GPU lost signalled"
