#!/usr/bin/env bash
# slurm_unreachable.sh - `schedmate slurm` with libslurm against a
# controller that is not there: the problem is logged once, the status
# file says so, attempts back off (interval, doubling, capped), the
# plugin's socket keeps answering, SIGTERM stops it cleanly; --once exits
# 1 with a one-line message; bad options and configurations exit 2.
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm configuration to copy (tests/services.sh starts a cluster)"
. "$(dirname "$0")/../slurm.sh"
sl_setup unreachable
trap sl_cleanup_agent EXIT
sl_cleanup_agent() {
  local rc=$?
  [ -z "${AGENT_PID:-}" ] || { kill -TERM "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null || true; }
  exit $rc
}
# The test cluster's configuration, pointing at a port nobody listens on.
port=$(free_ports 1)
sed -e "s/^SlurmctldPort=.*/SlurmctldPort=$port/" "$SM_SLURM_CONF" >"$W/dead.conf"
echo "MessageTimeout=1" >>"$W/dead.conf"
DB=$W/history.db

# --once: exit 1, one line.
expect_rc 1 "$SCHEDMATE" slurm --once --db "$DB" --slurm-conf "$W/dead.conf"
grep -q 'slurm: cannot load the job list: Unable to contact slurm controller' "$SM_TMP/last.err" \
  || fail "message: $(cat "$SM_TMP/last.err")"

# Bad usage and unusable inputs: exit 2 with a message naming the problem.
expect_rc 2 "$SCHEDMATE" slurm --once
grep -q -- '--db URI is required' "$SM_TMP/last.err" || fail "no --db message"
expect_rc 2 "$SCHEDMATE" slurm --once --db "$DB" --slurm-conf "$W/no-such.conf"
grep -q "$W/no-such.conf: cannot read the Slurm configuration" "$SM_TMP/last.err" || fail "conf message"
expect_rc 2 "$SCHEDMATE" slurm --once --db "$DB" --interval -1
expect_rc 2 "$SCHEDMATE" slurm --shadow --enforce --db "$DB"
expect_rc 2 "$SCHEDMATE" slurm --db "$W/no/such/dir/h.db" --slurm-conf "$W/dead.conf" --once
grep -q "no/such/dir/h.db" "$SM_TMP/last.err" || fail "db message: $(cat "$SM_TMP/last.err")"
: > "$W/not-a-socket"
expect_rc 2 "$SCHEDMATE" slurm --db "$DB" --slurm-conf "$W/dead.conf" --socket "$W/not-a-socket"
grep -q "exists and is not a socket" "$SM_TMP/last.err" || fail "socket message"
expect_rc 0 "$SCHEDMATE" slurm --help
grep -q '^usage: schedmate slurm' "$SM_TMP/last.out" || fail "help"

# The long-running agent keeps going, backs off, answers the plugin.
sl_agent_start --enforce --db "$DB" --slurm-conf "$W/dead.conf" --interval 0.2 \
  --max-backoff 0.8 --status "$W/status.json" --socket "$W/agent.sock"
[ "$(jq -r .slurm.ok "$W/status.json")" = false ] || fail "status: $(cat "$W/status.json")"
jq -r .slurm.message "$W/status.json" | grep -q 'Unable to contact' || fail "status message"
# (The answers themselves are tested in the unit tests and slurm_plugin.)
[ -S "$W/agent.sock" ] || fail "no socket while Slurm is down"
sleep 4
n=$(grep -c 'cannot load the job list' "$W/agent.log")
[ "$n" = 1 ] || fail "the same error was logged $n times"
grep -q 'next attempt in 0.4 s' "$W/agent.log" || fail "no doubling: $(cat "$W/agent.log")"
grep -q 'next attempt in 0.8 s' "$W/agent.log" || fail "no cap reached"
grep -q 'next attempt in 1.6 s' "$W/agent.log" && fail "backoff went past the cap"
sl_agent_stop || fail "agent did not stop cleanly while Slurm was down"
[ ! -e "$W/agent.sock" ] || fail "socket left behind"
echo "ok: $(grep -c 'next attempt' "$W/agent.log") attempts backed off, clean stop"
