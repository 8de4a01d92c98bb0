# `schedmate track --follow`: one JSON line per change while a log grows,
# through truncation and rotation, stopping cleanly on SIGTERM, after
# --max-updates, or after --idle-exit.
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
log="$SM_TMP/follow.log"
out="$SM_TMP/follow.out"
steps() { for s in $(seq "$1" "$2"); do
  echo "step=$s loss=$(awk -v s="$s" 'BEGIN{printf "%.3f", 3 - s/1000}') lr=0.1 step_time=0.30s"
done; }
# wait_step N WHAT: waits (up to 20 s) until the newest printed answer
# has step N (an append may be seen in more than one poll).
wait_step() {
  for _ in $(seq 200); do
    [ "$(tail -1 "$out" | jq .step 2>/dev/null)" = "$1" ] && return 0
    sleep 0.1
  done
  fail "$2: no answer with step $1: $(tail -3 "$out")"
}

steps 1 20 >"$log"
"$SCHEDMATE" track --follow --json --interval 0.05 "$log" >"$out" 2>"$SM_TMP/follow.err" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_step 20 "first answer"
[ "$(sed -n 1p "$out" | jq .step)" = 20 ] || fail "first answer"
steps 21 25 >>"$log"
wait_step 25 "after growth"
# Truncated in place, then written again (copytruncate).
: >"$log"
steps 900 905 >>"$log"
wait_step 905 "after truncation"
# Rotated: moved away, a new file at the path.
mv "$log" "$log.1"
steps 2000 2003 >"$log"
wait_step 2003 "after rotation"
[ "$(wc -l <"$out")" -ge 4 ] || fail "fewer than four updates"
# Every line is one JSON object.
while IFS= read -r line; do jq -e .status <<<"$line" >/dev/null || fail "bad line: $line"; done <"$out"
kill -TERM $pid
rc=0; wait $pid || rc=$?
trap - EXIT
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM"

# --max-updates and --idle-exit stop on their own.
steps 1 5 >"$log"
expect_rc 0 timeout 20 "$SCHEDMATE" track --follow --json --max-updates 1 "$log"
[ "$(wc -l <"$SM_TMP/last.out")" = 1 ] || fail "--max-updates 1"
expect_rc 0 timeout 20 "$SCHEDMATE" track --follow --json --interval 0.05 --idle-exit 0.5 "$log"
[ "$(wc -l <"$SM_TMP/last.out")" = 1 ] || fail "--idle-exit"
echo "track follow ok"
