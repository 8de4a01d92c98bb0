#!/usr/bin/env bash
# The Slurm integration's costs.
#
# 1. Decision latency of the agent, without a cluster (bench_agent.c):
#    one plugin answer (extract + search a 10,000-record history), one
#    submit pass over 1,000 new pending jobs, one quiet pass.
# 2. Submission latency on a real Slurm 22.05 cluster (root only), the
#    reference being the same cluster without the plugin: sbatch with the
#    plugin and the agent answering, with the agent stopped, and with an
#    agent that accepts but never answers (the plugin's 50 ms deadline).
#    Medians and p90 of N submissions, and their ratio to the reference.
set -eu
cd "$(dirname "$0")/../.."
make -s all >/dev/null
mkdir -p build/bench
out=build/bench/bench_agent
# The library does not need libslurm (only build/schedmate-slurm links it).
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/slurm/bench_agent.c -o "$out" \
  build/libschedmate.a $(pkg-config --libs sqlite3 hiredis yaml-0.1 libcjson \
  tree-sitter zlib) -lm -lpthread
echo "== agent decision latency (no cluster)"
"$out" "$PWD/tests/fixtures/slurm/repo" 10000 200 1000

echo "== sbatch latency on a real cluster"
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null || [ ! -f build/plugins/job_submit_schedmate.so ]; then
  echo "skipped: needs root, Slurm and build/plugins/job_submit_schedmate.so"
  exit 0
fi
N=${N:-30}
B=$(mktemp -d /tmp/sm-bench-slurm.XXXXXX)
AGENT=""; STALL=""
cleanup() {
  [ -z "$AGENT" ] || { kill "$AGENT" 2>/dev/null; wait "$AGENT" 2>/dev/null || true; }
  [ -z "$STALL" ] || { kill "$STALL" 2>/dev/null; wait "$STALL" 2>/dev/null || true; }
  tests/slurm.sh stop "$B/ref" >/dev/null 2>&1 || true
  tests/slurm.sh stop "$B/plug" >/dev/null 2>&1 || true
  rm -rf "$B"
}
trap cleanup EXIT
cp -r tests/fixtures/slurm/repo "$B/repo"
export PATH="$PWD/tests/fixtures/slurm/bin:$PATH"

# Prints "median p90" in ms of N held submissions of r18.sh.
measure() {
  local t0 t1
  : > "$B/ms"
  for _ in $(seq 1 "$N"); do
    t0=$(date +%s%N)
    (cd "$B/repo" && sbatch --parsable --hold r18.sh >/dev/null)
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 )) >>"$B/ms"
  done
  sort -n "$B/ms" | awk '{v[NR]=$1} END {printf "%.1f %.1f\n", v[int((NR+1)/2)]/1000, v[int(NR*0.9)]/1000}'
}
row() { # name median p90 reference-median
  awk -v n="$1" -v m="$2" -v p="$3" -v r="$4" \
    'BEGIN {printf "  %-34s median %6.1f ms  p90 %6.1f ms  x%.2f of the reference\n", n, m, p, m / r}'
}

tests/slurm.sh start "$B/ref" >/dev/null
export SLURM_CONF=$B/ref/etc/slurm.conf
sleep 1
read -r rm rp < <(measure)
tests/slurm.sh stop "$B/ref" >/dev/null

SM_PLUGIN_DIR=$PWD/build/plugins tests/slurm.sh start "$B/plug" >/dev/null
export SLURM_CONF=$B/plug/etc/slurm.conf
build/schedmate history add --db "$B/h.db" --id past:r18 --duration 1800 \
  --user root --name r18 --repo "$B/repo" -- bash r18.sh >/dev/null
build/schedmate slurm --enforce --db "$B/h.db" --interval 3600 \
  --socket "$B/plug/agent.sock" --log-level error &
AGENT=$!
for _ in $(seq 1 100); do [ -S "$B/plug/agent.sock" ] && break; sleep 0.05; done
sleep 1
read -r am ap < <(measure)
kill "$AGENT"; wait "$AGENT" || true; AGENT=""
read -r dm dp < <(measure)
cc -O1 -x c -o "$B/stall" - <<'EOF'
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (argc < 2 || fd < 0 || strlen(argv[1]) >= sizeof(sa.sun_path)) return 2;
  strcpy(sa.sun_path, argv[1]);
  unlink(argv[1]);
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64)) return 1;
  for (;;) if (accept(fd, NULL, NULL) < 0) return 1;
}
EOF
"$B/stall" "$B/plug/agent.sock" &
STALL=$!
for _ in $(seq 1 100); do [ -S "$B/plug/agent.sock" ] && break; sleep 0.05; done
read -r hm hp < <(measure)
echo "  ($N submissions each; the reference is the same cluster without the plugin)"
row "reference: no plugin" "$rm" "$rp" "$rm"
row "plugin, agent answering" "$am" "$ap" "$rm"
row "plugin, agent stopped" "$dm" "$dp" "$rm"
row "plugin, agent hung (50 ms deadline)" "$hm" "$hp" "$rm"
