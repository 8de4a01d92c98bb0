#!/usr/bin/env bash
# slurm_gpustat.sh - GPU metrics per job on a real Slurm 22.05 cluster,
# with the fake NVML of tests/nvml standing in for the driver: the node's
# sampler (`schedmate gpustat`) maps each job's process to its job through
# the process's SLURM_JOB_ID (the test cluster uses proctrack/pgid, no
# cgroups), two jobs share the same (fake) GPUs, and the agent writes
# every ended job into the history with the sm_util and gpu_mem_mib the
# sampler measured for that job; `advise` on a similar job then returns
# the utilisation estimate with its provenance (GPU model, driver).
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm cluster (needs root and slurmctld; tests/services.sh starts one)"
command -v jq >/dev/null || skip "jq not installed"
. "$(dirname "$0")/../slurm.sh"
export SLURM_CONF=$SM_SLURM_CONF
sl_setup gpustat
SAMPLER_PID=""
gs_cleanup() {
  local rc=$?
  [ -z "$SAMPLER_PID" ] || { kill -TERM "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null || true; }
  (exit $rc)
  sl_cleanup
}
trap gs_cleanup EXIT
LIBDIR=$(cd "$(dirname "$0")/../.." && pwd)/${BUILD:-build/asan}/nvml
if [ ! -f "$LIBDIR/libnvidia-ml.so.1" ]; then
  LIBDIR=$W/nvml; mkdir -p "$LIBDIR"
  cc -shared -fPIC -O2 -o "$LIBDIR/libnvidia-ml.so.1" \
    "$(dirname "$0")/../nvml/fake_nvml.c" || fail "cannot build the fake NVML"
fi
DB=$W/history.db
PROCS=$W/nvml-procs
mkdir -p "$PROCS"
cd "$W/repo"

# The fake driver: eight A100s; a process that registers itself in
# $PROCS ("GPU MIB SM" per line) is on those GPUs with that memory and
# utilisation while it lives.
{
  echo "driver 535.104.05"
  echo "procdir $PROCS"
  for i in 0 1 2 3 4 5 6 7; do
    echo "device $i 81920 GPU-5a1e0c00-000$i NVIDIA A100-SXM4-80GB"
    echo "row $i auto 35 auto 300"
  done
} >"$W/nvml.script"

# Job scripts: the batch shell holds the job's GPUs (as a launcher would),
# then trains (on a dataset no other test uses: the cluster also lists
# the ended jobs of the tests before, and the agent writes those back too).
for m in r18:resnet18:256:0.1 r50:resnet50:1024:0.4; do
  IFS=: read -r name model bs lr <<<"$m"
  cat >"g$name.sh" <<EOF
#!/bin/bash
#SBATCH --job-name=$name
#SBATCH --nodes=1
#SBATCH --gres=gpu:2
#SBATCH --cpus-per-task=2
#SBATCH --output=%x-%j.out

for d in \$(echo "\${CUDA_VISIBLE_DEVICES:-0,1}" | tr , ' '); do
  echo "\$d \$GPU_MIB \$GPU_SM"
done >"\$FAKE_NVML_PROCS/\$\$"
trap 'rm -f "\$FAKE_NVML_PROCS/\$\$"' EXIT
python train.py --model $model --dataset places365 --epochs 5 --batch-size $bs --lr $lr
EOF
done

# ---- The node's sampler ----
LD_LIBRARY_PATH=$LIBDIR FAKE_NVML_SCRIPT=$W/nvml.script \
  "$SCHEDMATE" gpustat --out "$W/gpustat" --interval 0.1 --flush 0.3 \
  --idle-end 0.6 --warmup 0.3 --status "$W/gpustat.json" >"$W/gpustat.log" 2>&1 &
SAMPLER_PID=$!
sl_wait 30 test -s "$W/gpustat.json" || fail "sampler: $(cat "$W/gpustat.log")"
[ "$(jq '.devices | length' "$W/gpustat.json")" = 8 ] || fail "devices: $(cat "$W/gpustat.json")"

# ---- Two jobs on the same GPUs, written back by the agent ----
sl_agent_start --shadow --db "$DB" --interval 0.3 --audit "$W/audit.jsonl" \
  --status "$W/status.json" --gpustat "$W/gpustat"
E=ALL,FAKE_STEPS=25,FAKE_STEP_S=0.1,FAKE_NVML_PROCS=$PROCS
a=$(sbatch --parsable -w n1 --export="$E,GPU_SM=71,GPU_MIB=12000" gr18.sh)
b=$(sbatch --parsable -w n2 --export="$E,GPU_SM=88,GPU_MIB=30000" gr50.sh)
sl_wait 90 sl_recorded "$DB" "smtest:$a" || fail "job $a not written back: $(tail -5 "$W/agent.log")"
sl_wait 60 sl_recorded "$DB" "smtest:$b" || fail "job $b not written back"
for j in $a $b; do
  [ "$(sl_end_state "$DB" "smtest:$j")" = completed ] || fail "job $j: $(sl_end_state "$DB" "smtest:$j")"
done
"$SCHEDMATE" history show --json --db "$DB" "smtest:$a" >"$W/a.json"
"$SCHEDMATE" history show --json --db "$DB" "smtest:$b" >"$W/b.json"
[ "$(jget "$W/a.json" .sm_util)" = 71 ] || fail "job $a sm_util $(jget "$W/a.json" .sm_util): $(jget "$W/a.json" .outcome.gpu)"
[ "$(jget "$W/a.json" .gpu_mem_mib)" = 12000 ] || fail "job $a gpu_mem_mib $(jget "$W/a.json" .gpu_mem_mib)"
[ "$(jget "$W/b.json" .sm_util)" = 88 ] || fail "job $b sm_util $(jget "$W/b.json" .sm_util)"
[ "$(jget "$W/b.json" .gpu_mem_mib)" = 30000 ] || fail "job $b gpu_mem_mib $(jget "$W/b.json" .gpu_mem_mib)"
[ "$(jget "$W/a.json" .util_source)" = nvml ] || fail "source"
[ "$(jget "$W/a.json" .gpu_model)" = "NVIDIA A100-SXM4-80GB" ] || fail "model $(jget "$W/a.json" .gpu_model)"
[ "$(jget "$W/a.json" .driver_version)" = 535.104.05 ] || fail "driver"
[ "$(jget "$W/a.json" '.outcome.gpu.nodes[0].mapped_by')" = environ ] || fail "mapping: $(jget "$W/a.json" .outcome.gpu)"
[ "$(jget "$W/a.json" '.outcome.gpu.nodes[0].attribution')" = process ] || fail "attribution"
[ "$(jget "$W/a.json" '.outcome.gpu.nodes[0].devices | length')" = 2 ] || fail "devices of job $a"
[ "$(jget "$W/a.json" '.outcome.gpu.partial')" = false ] || fail "partial"
[ -n "$(jq -c "select(.channel==\"writeback\" and .job==$a and .sm_util==71)" "$W/audit.jsonl")" ] \
  || fail "no write-back audit with sm_util"

# ---- advise on a similar job: the utilisation estimate and provenance ----
expect_rc 0 "$SCHEDMATE" advise --json --db "$DB" --repo "$W/repo" -- bash gr18.sh
cp "$SM_TMP/last.out" "$W/advise.json"
[ "$(jget "$W/advise.json" .fallback)" = false ] || fail "advise: $(jget "$W/advise.json" .fallback_detail)"
[ "$(jget "$W/advise.json" "[.matches[] | select(.job_id == \"smtest:$a\")] | length")" = 1 ] \
  || fail "match: $(jget "$W/advise.json" .matches)"
[ "$(jget "$W/advise.json" .estimate.sm_util)" = 71 ] || fail "estimate: $(jget "$W/advise.json" .estimate)"
[ "$(jget "$W/advise.json" .estimate.gpu_mem_mib)" = 12000 ] || fail "memory estimate"
[ "$(jget "$W/advise.json" '.estimate.sm_util_provenance.gpu_models[0]')" = "NVIDIA A100-SXM4-80GB" ] \
  || fail "provenance: $(jget "$W/advise.json" .estimate.sm_util_provenance)"
[ "$(jget "$W/advise.json" '.estimate.sm_util_provenance.driver_versions[0]')" = 535.104.05 ] \
  || fail "driver provenance"
[ "$(jget "$W/advise.json" '.estimate.sm_util_provenance.sources[0]')" = nvml ] || fail "source provenance"

sl_agent_stop || fail "agent did not stop cleanly"
kill -TERM "$SAMPLER_PID"
rc=0; wait "$SAMPLER_PID" || rc=$?
SAMPLER_PID=""
[ $rc = 0 ] || fail "sampler exited $rc: $(tail -5 "$W/gpustat.log")"
echo "ok: job $a sm 71 % / 12000 MiB, job $b sm 88 % / 30000 MiB on shared GPUs; advise 71 %"
