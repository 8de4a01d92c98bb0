#!/usr/bin/env bash
# A private Slurm 22.05 cluster on 127.0.0.1 for the tests: munge,
# slurmctld and four slurmd (n1..n4, eight fake GPUs each), started as
# root without systemd and stopped by PID only.
#
#   tests/slurm.sh start BASE   prints SM_SLURM_CONF=..., SM_SLURM_BASE=...
#   tests/slurm.sh reset BASE   cancels every job, resumes every node
#   tests/slurm.sh stop BASE
#
# Sourced (". tests/slurm.sh"), it defines helpers for the integration
# tests instead: sl_reset, sl_wait_job STATE..., sl_field, sl_node_state.
#
# Fake GPUs are symlinks to /dev/null named in gres.conf (a gres with only
# a count is dropped by slurmd).  Ports are chosen free at start.  The
# SchedMate job_submit plugin is loaded from $SM_PLUGIN_DIR when that is
# set; slurmctld then gets SCHEDMATE_AGENT_SOCKET=$BASE/agent.sock.
NODES=4; GPUS=8

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Finds COUNT consecutive free ports; prints the first.
free_ports() {
  local count=$1 base i ok
  for _ in $(seq 1 50); do
    base=$((20000 + (RANDOM % 30000))); ok=1
    for i in $(seq 0 $((count - 1))); do port_free $((base + i)) || { ok=0; break; }; done
    [ $ok = 1 ] && { echo $base; return 0; }
  done
  return 1
}

stop_pidfile() {
  local f p
  for f in "$@"; do
    [ -s "$f" ] || continue
    p=$(cat "$f"); kill "$p" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "$p" 2>/dev/null || break
      [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] && break
      sleep 0.05
    done
    kill -9 "$p" 2>/dev/null; rm -f "$f"
  done
}

# ---- Helpers for tests (SLURM_CONF must be set) ----

# sl_field JOB KEY: one field of `scontrol show job -o` ("" if absent).
sl_field() {
  timeout 10 scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
# sl_wait_job JOB TIMEOUT STATE...: waits until the job is in one of the
# states; prints the state; fails after TIMEOUT seconds.
sl_wait_job() {
  local job=$1 t=$2 st; shift 2
  local end=$(( $(date +%s) + t ))
  while [ "$(date +%s)" -le $end ]; do
    st=$(sl_field "$job" JobState)
    for s in "$@"; do [ "$st" = "$s" ] && { echo "$st"; return 0; }; done
    sleep 0.1
  done
  echo "job $job: still ${st:-unknown} after ${t}s, wanted $*" >&2
  return 1
}
# sl_node_state NODE: the node's state in lower case ("idle", "drained"...).
sl_node_state() { timeout 10 sinfo -h -N -n "$1" -o '%T' 2>/dev/null | head -1; }
# sl_reset: cancels every job and resumes every node (for the next test).
sl_reset() {
  local ids
  ids=$(timeout 10 squeue -h -o %i 2>/dev/null || true)
  [ -z "$ids" ] || timeout 10 scancel $ids 2>/dev/null || true
  for _ in $(seq 1 150); do
    [ -z "$(timeout 5 squeue -h -t R,CG,S,PD -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  # Only drained nodes can be resumed; the others say so.
  for n in $(timeout 5 sinfo -h -N -t drain,drained,draining -o %N 2>/dev/null | sort -u); do
    timeout 10 scontrol update NodeName="$n" State=RESUME 2>/dev/null || true
  done
  for _ in $(seq 1 100); do
    [ "$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$')" = $NODES ] && return 0
    sleep 0.1
  done
  return 1
}

# sl_setup NAME: a scratch directory $W with a copy of the test repository
# ($W/repo, the jobs' working directory) and the fake trainer on PATH
# (jobs inherit it from sbatch).
sl_setup() {
  FIX=$(cd "$(dirname "${BASH_SOURCE[0]}")/fixtures/slurm" && pwd)
  W=$SM_TMP/$1
  rm -rf "$W"; mkdir -p "$W"
  cp -r "$FIX/repo" "$W/repo"
  export PATH="$FIX/bin:$PATH"
  AGENT_PID=""
}
# sl_agent_start ARGS...: runs `schedmate slurm ARGS` in the background
# ($AGENT_PID, log in $W/agent.log) and waits for its first pass (the
# status file given with --status).
sl_agent_start() {
  local status="" prev=""
  for a in "$@"; do [ "$prev" = --status ] && status=$a; prev=$a; done
  [ -n "$status" ] && rm -f "$status"
  "$SCHEDMATE" slurm "$@" >>"$W/agent.log" 2>&1 &
  AGENT_PID=$!
  for _ in $(seq 1 300); do
    [ -z "$status" ] || [ -s "$status" ] && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || { cat "$W/agent.log" >&2; return 1; }
    sleep 0.05
  done
  echo "agent: no first pass" >&2; return 1
}
# sl_agent_stop: SIGTERM, then its exit status must be 0.
sl_agent_stop() {
  local rc=0
  [ -n "$AGENT_PID" ] || return 0
  kill -TERM "$AGENT_PID" 2>/dev/null
  wait "$AGENT_PID" || rc=$?
  AGENT_PID=""
  [ $rc = 0 ] || { tail -20 "$W/agent.log" >&2; echo "agent exited $rc" >&2; }
  return $rc
}
# sl_cleanup: for a test's EXIT trap.
sl_cleanup() {
  local rc=$?
  [ -z "${AGENT_PID:-}" ] || { kill -TERM "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null || true; }
  sl_reset || echo "slurm: the cluster did not come back idle" >&2
  exit $rc
}
# sl_wait FILE-TEST TIMEOUT CMD...: retries CMD until it succeeds.
sl_wait() {
  local t=$1; shift
  local end=$(( $(date +%s) + t ))
  while [ "$(date +%s)" -le $end ]; do "$@" && return 0; sleep 0.1; done
  echo "timed out after ${t}s: $*" >&2; return 1
}
# sl_end_state DB ID: the record's end state ("" when absent).
sl_end_state() {
  "$SCHEDMATE" history show --json --db "$1" "$2" 2>/dev/null | jq -r '.end_state // empty'
}
# sl_recorded DB ID: succeeds once the record is in the history.
sl_recorded() { [ -n "$(sl_end_state "$1" "$2")" ]; }

# ---- The cluster ----

start() {
  for c in slurmctld slurmd munged sinfo; do
    command -v $c >/dev/null || [ -x /usr/sbin/$c ] || { echo "slurm: $c not installed" >&2; return 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "slurm: needs root" >&2; return 1; }
  id munge >/dev/null 2>&1 || { echo "slurm: no munge user" >&2; return 1; }
  local P host
  P=$(free_ports $((NODES + 2))) || { echo "slurm: no free ports" >&2; return 1; }
  host=$(hostname -s)
  rm -rf "$B"; mkdir -p "$B"/{etc,state,log,run,dev,munge,jobs}
  # munged runs as the munge user: it must be able to traverse to $B
  # (a private mktemp directory is 0700).
  local d
  d=$(cd "$B" && pwd)
  while [ "$d" != / ]; do
    [ -O "$d" ] && chmod go+x "$d"
    d=$(dirname "$d")
  done
  for i in $(seq 1 $NODES); do mkdir -p "$B/spool/slurmd-n$i"; done
  for i in $(seq 0 $((GPUS - 1))); do ln -sf /dev/null "$B/dev/nvidia$i"; done
  dd if=/dev/urandom of="$B/munge/munge.key" bs=1024 count=1 status=none
  chown -R munge:munge "$B/munge"; chmod 711 "$B/munge"; chmod 400 "$B/munge/munge.key"
  runuser -u munge -- /usr/sbin/munged --socket="$B/munge/munge.sock" \
    --key-file="$B/munge/munge.key" --pid-file="$B/munge/munged.pid" \
    --log-file="$B/munge/munged.log" --seed-file="$B/munge/munged.seed" || return 1
  local plug=""
  if [ -n "${SM_PLUGIN_DIR:-}" ] && [ -f "$SM_PLUGIN_DIR/job_submit_schedmate.so" ]; then
    plug="JobSubmitPlugins=schedmate
PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm:$SM_PLUGIN_DIR"
  fi
  cat > "$B/etc/slurm.conf" <<EOC
ClusterName=smtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$P
SlurmdPort=$((P + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$B/munge/munge.sock
StateSaveLocation=$B/state
SlurmdSpoolDir=$B/spool/slurmd-%n
SlurmctldPidFile=$B/run/slurmctld.pid
SlurmdPidFile=$B/run/slurmd-%n.pid
SlurmctldLogFile=$B/log/slurmctld.log
SlurmdLogFile=$B/log/slurmd-%n.log
PlugStackConfig=$B/etc/plugstack.conf
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
PriorityType=priority/basic
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
$plug
NodeName=n[1-$NODES] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((P + 2))-$((P + 1 + NODES))] CPUs=16 RealMemory=16000 Gres=gpu:$GPUS State=UNKNOWN
PartitionName=gpu Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP
EOC
  printf 'AutoDetect=off\nName=gpu File=%s/dev/nvidia[0-%d]\n' "$B" $((GPUS - 1)) > "$B/etc/gres.conf"
  echo "CgroupPlugin=cgroup/v1" > "$B/etc/cgroup.conf"
  : > "$B/etc/plugstack.conf"
  export SLURM_CONF="$B/etc/slurm.conf"
  SCHEDMATE_AGENT_SOCKET="$B/agent.sock" slurmctld -i || return 1
  for _ in $(seq 1 100); do
    grep -q 'Running as primary controller' "$B/log/slurmctld.log" 2>/dev/null && break; sleep 0.1; done
  kill -0 "$(cat "$B/run/slurmctld.pid" 2>/dev/null)" 2>/dev/null \
    || { echo "slurm: slurmctld died" >&2; tail -3 "$B/log/slurmctld.log" >&2; return 1; }
  for i in $(seq 1 $NODES); do slurmd -N "n$i" || return 1; done
  for _ in $(seq 1 200); do
    [ "$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$')" = $NODES ] && break; sleep 0.1; done
  [ "$(timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$')" = $NODES ] \
    || { echo "slurm: nodes not idle" >&2; timeout 5 sinfo -N >&2; return 1; }
  echo "SM_SLURM_CONF=$B/etc/slurm.conf"
  echo "SM_SLURM_BASE=$B"
  [ -n "$plug" ] && echo "SM_SLURM_PLUGIN=$SM_PLUGIN_DIR/job_submit_schedmate.so"
  return 0
}

stop() {
  [ -d "$B" ] || return 0
  if [ -s "$B/run/slurmctld.pid" ] && kill -0 "$(cat "$B/run/slurmctld.pid")" 2>/dev/null; then
    export SLURM_CONF="$B/etc/slurm.conf"
    ids=$(timeout 10 squeue -h -o %i 2>/dev/null)
    [ -n "$ids" ] && timeout 10 scancel $ids
    for _ in $(seq 1 150); do
      [ -z "$(timeout 5 squeue -h -t R,CG,S -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  stop_pidfile "$B"/run/slurmd-*.pid
  stop_pidfile "$B/run/slurmctld.pid"
  stop_pidfile "$B/munge/munged.pid"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -u
  CMD=${1:-}; B=${2:-/tmp/schedmate-slurm}
  case "$CMD" in
    start) start ;;
    stop) stop ;;
    reset) export SLURM_CONF="$B/etc/slurm.conf"; sl_reset ;;
    *) echo "usage: $0 start|reset|stop [BASE]" >&2; exit 2 ;;
  esac
fi
