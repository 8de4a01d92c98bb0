#!/usr/bin/env bash
# Starts and stops the real services the tests use, on 127.0.0.1, without
# systemd, and stops them by PID only.
#
#   tests/services.sh start   prints NAME=VALUE lines for the tests' env,
#                             and on stderr one line per service: what was
#                             started, its PID and where it listens
#   tests/services.sh stop
#
# Redis: a private redis-server on a free port, no persistence.
# Slurm: when it is installed and we are root, a private cluster (munge,
# slurmctld, slurmd n1..n4 with fake GPUs) from tests/slurm.sh, with the
# job_submit plugin of $BUILD/plugins when it was built; it exports
# SM_SLURM_CONF and SM_SLURM_BASE (and SM_SLURM_PLUGIN with the plugin).
# State lives in $SM_SERVICES_DIR (default $SM_TMP/schedmate-services, so
# that test runs of several people on one machine never share a daemon).
set -u
DIR=${SM_SERVICES_DIR:-${SM_TMP:-/tmp}/schedmate-services}
HERE=$(cd "$(dirname "$0")" && pwd)

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_redis() {
  command -v redis-server >/dev/null || { echo "services: no redis-server" >&2; return 1; }
  mkdir -p "$DIR/redis"
  local p tries=0
  while [ $tries -lt 20 ]; do
    p=$((20000 + (RANDOM % 20000))); tries=$((tries + 1))
    port_free "$p" || continue
    redis-server --port "$p" --bind 127.0.0.1 --dir "$DIR/redis" \
      --daemonize yes --pidfile "$DIR/redis/redis.pid" \
      --logfile "$DIR/redis/redis.log" --save '' --appendonly no >/dev/null 2>&1 || continue
    for _ in $(seq 1 100); do
      redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && {
        echo "$p" > "$DIR/redis/port"
        echo "SM_REDIS_URL=redis://127.0.0.1:$p/0"
        echo "SM_REDIS_PORT=$p"
        echo "services: redis-server $(redis-server --version | awk '{print $3}' | sed 's/^v=//') (pid $(cat "$DIR/redis/redis.pid" 2>/dev/null)) on 127.0.0.1:$p, no persistence, log $DIR/redis/redis.log" >&2
        return 0; }
      sleep 0.05
    done
    stop_pidfile "$DIR/redis/redis.pid"
  done
  echo "services: redis did not start" >&2
  return 1
}

start_slurm() {
  command -v slurmctld >/dev/null || [ -x /usr/sbin/slurmctld ] \
    || { echo "services: slurmctld not installed: no Slurm" >&2; return 0; }
  [ "$(id -u)" = 0 ] || { echo "services: not root: no Slurm" >&2; return 0; }
  local plug=""
  [ -n "${BUILD:-}" ] && [ -f "$HERE/../$BUILD/plugins/job_submit_schedmate.so" ] \
    && plug=$(cd "$HERE/../$BUILD/plugins" && pwd)
  mkdir -p "$DIR"
  SM_PLUGIN_DIR=$plug "$HERE/slurm.sh" start "$DIR/slurm" \
    || { echo "services: slurm did not start" >&2; "$HERE/slurm.sh" stop "$DIR/slurm"; return 1; }
  slurm_summary "$DIR/slurm" "$plug" >&2
}

# One line on the private cluster: daemons, PIDs, ports, configuration.
slurm_summary() {
  local b=$1 plug=$2 conf=$1/etc/slurm.conf port nodes pids
  port=$(sed -n 's/^SlurmctldPort=//p' "$conf")
  nodes=$(sed -n 's/^NodeName=\([^ ]*\) .* Port=\[\([0-9-]*\)\].*/\1 on ports \2/p' "$conf")
  pids=$(for f in "$b"/run/slurmd-*.pid; do [ -s "$f" ] && cat "$f"; done | tr '\n' ' ')
  echo "services: slurm $(slurmctld -V 2>/dev/null | awk '{print $2}'): munged (pid $(cat "$b/munge/munged.pid" 2>/dev/null)), slurmctld (pid $(cat "$b/run/slurmctld.pid" 2>/dev/null)) on 127.0.0.1:$port, slurmd ${nodes:-?} (pids ${pids% }), config $conf, job_submit plugin: ${plug:-not built}"
}

stop_pidfile() {
  local f=$1 p
  [ -s "$f" ] || return 0
  p=$(cat "$f")
  kill "$p" 2>/dev/null
  for _ in $(seq 1 100); do
    kill -0 "$p" 2>/dev/null || break
    [ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] && break
    sleep 0.05
  done
  kill -9 "$p" 2>/dev/null
  rm -f "$f"
}

case "${1:-}" in
  start)
    rc=0
    start_redis || rc=1
    start_slurm || rc=1
    exit $rc ;;
  stop)
    stop_pidfile "$DIR/redis/redis.pid"
    [ -d "$DIR/slurm" ] && "$HERE/slurm.sh" stop "$DIR/slurm"
    exit 0 ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
