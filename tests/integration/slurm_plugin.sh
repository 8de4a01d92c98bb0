#!/usr/bin/env bash
# slurm_plugin.sh - the job_submit/schedmate plugin inside a real slurmctld
# (scenario 5):
#   with the agent answering on its socket, a submitted job carries the
#   estimate in its comment from the moment sbatch returns (the agent's
#   own pass is an hour away, so only the plugin can have written it);
#   with the agent stopped, and with a process that accepts connections
#   but never answers, submission still works and leaves jobs unchanged.
# It prints the sbatch latency of the three cases (medians of 5).
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm cluster (needs root and slurmctld; tests/services.sh starts one)"
[ -n "${SM_SLURM_PLUGIN:-}" ] || skip "the job_submit plugin is not loaded (it is built where slurm.h is installed)"
command -v cc >/dev/null || skip "no C compiler for the stalled-agent helper"
. "$(dirname "$0")/../slurm.sh"
export SLURM_CONF=$SM_SLURM_CONF
sl_setup plugin
STALL_PID=""
trap '[ -z "$STALL_PID" ] || kill "$STALL_PID" 2>/dev/null; sl_cleanup' EXIT
SOCK=$SM_SLURM_BASE/agent.sock
DB=$W/history.db
cd "$W/repo"

# A history that has seen resnet18 take 30 minutes.
expect_rc 0 "$SCHEDMATE" history add --db "$DB" --id past:r18 --duration 1800 \
  --user root --name r18 --repo "$W/repo" -- bash r18.sh

# Submits N held jobs of SCRIPT; prints the median latency in ms and
# leaves the job ids in $W/ids.
submit_times() {
  local n=$1 script=$2 t0 t1
  : > "$W/ids"; : > "$W/ms"
  for _ in $(seq 1 "$n"); do
    t0=$(date +%s%N)
    sbatch --parsable --hold "$script" >>"$W/ids" || fail "sbatch failed"
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 )) >>"$W/ms"
  done
  sort -n "$W/ms" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}

# ---- Agent up: the plugin annotates ----
sl_agent_start --enforce --db "$DB" --interval 3600 --socket "$SOCK" \
  --audit "$W/audit.jsonl" --status "$W/status.json"
[ -S "$SOCK" ] || fail "no socket at $SOCK"
up=$(submit_times 5 r18.sh)
for j in $(cat "$W/ids"); do
  c=$(squeue -h -j "$j" -o %k)
  case "$c" in
    "schedmate: est 30m00s (1800s, n=1, sd 0s, sim 1.00; like past:r18)") ;;
    *) fail "job $j: comment '$c'" ;;
  esac
done
[ "$(jq -r 'select(.channel=="plugin") | .decision' "$W/audit.jsonl" | sort -u)" = estimate ] \
  || fail "the audit has no plugin decision"
[ "$(jq -c 'select(.channel=="submit")' "$W/audit.jsonl" | wc -l)" = 0 ] \
  || fail "the agent's own pass annotated the jobs, not the plugin"
v=$(sbatch --parsable --hold vit.sh)
squeue -h -j "$v" -o %k | grep -q '^schedmate: no estimate (' || fail "vit: $(squeue -h -j "$v" -o %k)"
sl_agent_stop || fail "agent did not stop cleanly"
[ ! -e "$SOCK" ] || fail "the agent left its socket behind"

# ---- Agent stopped: jobs go through unchanged ----
down=$(submit_times 5 r18.sh)
for j in $(cat "$W/ids"); do
  [ -z "$(squeue -h -j "$j" -o %k | grep schedmate)" ] || fail "job $j annotated without an agent"
done

# ---- Agent hung: accepts, never answers; the deadline lets jobs through ----
cat > "$W/stall.c" <<'EOF'
/* Accepts connections on a UNIX socket and never answers. */
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (argc < 2 || fd < 0 || strlen(argv[1]) >= sizeof(sa.sun_path))
    return 2;
  strcpy(sa.sun_path, argv[1]);
  unlink(argv[1]);
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64))
    return 1;
  for (;;)
    if (accept(fd, NULL, NULL) < 0)
      return 1;
}
EOF
cc -O1 -o "$W/stall" "$W/stall.c" || fail "cannot build the helper"
"$W/stall" "$SOCK" &
STALL_PID=$!
sl_wait 10 test -S "$SOCK" || fail "helper did not listen"
hung=$(submit_times 5 r18.sh)
for j in $(cat "$W/ids"); do
  [ -z "$(squeue -h -j "$j" -o %k | grep schedmate)" ] || fail "job $j annotated by a hung agent"
done
kill "$STALL_PID"; wait "$STALL_PID" 2>/dev/null || true; STALL_PID=""
rm -f "$SOCK"
# Without an agent submission is not slower than with one (which does the
# Advisor's work inside the deadline).
[ "$down" -le $(( 3 * up + 20 )) ] || fail "sbatch without the agent took ${down} ms (with it ${up} ms)"
echo "ok: sbatch median ${up} ms with the agent, ${down} ms without, ${hung} ms with a hung agent"
