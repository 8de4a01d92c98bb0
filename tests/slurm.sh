#!/usr/bin/env bash
# A private Slurm 22.05 cluster on 127.0.0.1 for the tests: munge,
# slurmctld and four slurmd (n1..n4, eight fake GPUs each), started as
# root without systemd and stopped by PID only.
#
#   tests/slurm.sh start BASE   prints SM_SLURM_CONF=..., SM_SLURM_BASE=...
#   tests/slurm.sh stop BASE
#
# Fake GPUs are symlinks to /dev/null named in gres.conf (a gres with only
# a count is dropped by slurmd).  Ports are chosen free at start.  The
# SchedMate job_submit plugin is loaded from $SM_PLUGIN_DIR when that is
# set; slurmctld then gets SCHEDMATE_AGENT_SOCKET=$BASE/agent.sock.
set -u
CMD=${1:-}; B=${2:-/tmp/schedmate-slurm}
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

start() {
  for c in slurmctld slurmd munged sinfo; do
    command -v $c >/dev/null || [ -x /usr/sbin/$c ] || { echo "slurm: $c not installed" >&2; return 1; }
  done
  [ "$(id -u)" = 0 ] || { echo "slurm: needs root" >&2; return 1; }
  local P host
  P=$(free_ports $((NODES + 2))) || { echo "slurm: no free ports" >&2; return 1; }
  host=$(hostname -s)
  rm -rf "$B"; mkdir -p "$B"/{etc,state,log,run,dev,munge,jobs}
  for i in $(seq 1 $NODES); do mkdir -p "$B/spool/slurmd-n$i"; done
  for i in $(seq 0 $((GPUS - 1))); do ln -sf /dev/null "$B/dev/nvidia$i"; done
  dd if=/dev/urandom of="$B/munge/munge.key" bs=1024 count=1 status=none
  chown -R munge:munge "$B/munge"; chmod 711 "$B/munge"; chmod 400 "$B/munge/munge.key"
  runuser -u munge -- /usr/sbin/munged --socket="$B/munge/munge.sock" \
    --key-file="$B/munge/munge.key" --pid-file="$B/munge/munged.pid" \
    --log-file="$B/munge/munged.log" --seed-file="$B/munge/munged.seed" || return 1
  local plug=""
  if [ -n "${SM_PLUGIN_DIR:-}" ]; then
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

case "$CMD" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [BASE]" >&2; exit 2 ;;
esac
