# Regression tests for the defects of issue 12 found by hand, through the
# command: bytes that are not text never give progress ("[8/6" was step 8
# of 6, random bytes were "ok"), --follow forgets what a truncation
# removed, a crashed writer's NUL padding or a hole after the last
# progress, and a file without newlines read once (never the whole file,
# never a region twice).
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}

# "[8/6": eight of six is no position.
printf '[8/6' >"$SM_TMP/f86.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/f86.log"
[ "$(jget "$SM_TMP/last.out" .status)" = missing ] || fail "[8/6: $(cat "$SM_TMP/last.out")"
printf '[8/6\n[9/6\n' >"$SM_TMP/f86.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/f86.log"
[ "$(jget "$SM_TMP/last.out" .status)" = missing ] || fail "[8/6 lines: $(cat "$SM_TMP/last.out")"

# Random bytes: missing, and said to be binary.
head -c 2000000 /dev/urandom >"$SM_TMP/random.bin"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/random.bin"
[ "$(jget "$SM_TMP/last.out" .status)" = missing ] || fail "random bytes: $(cut -c1-200 "$SM_TMP/last.out")"
[ "$(jget "$SM_TMP/last.out" .binary)" = true ] || fail "random bytes not said binary"
expect_rc 0 "$SCHEDMATE" track "$SM_TMP/random.bin"
grep -q "not text" "$SM_TMP/last.out" || fail "text answer does not say binary"

# The last progress before a crash that left NUL padding, then a hole.
for s in $(seq 1 30); do echo "step=$s loss=2.$s lr=0.1 step_time=0.42s"; done >"$SM_TMP/crash.log"
head -c 3000000 /dev/zero >>"$SM_TMP/crash.log"
truncate -s +1G "$SM_TMP/crash.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/crash.log"
[ "$(jget "$SM_TMP/last.out" .step)" = 30 ] || fail "crash padding: $(cut -c1-200 "$SM_TMP/last.out")"
[ "$(jget "$SM_TMP/last.out" .step_time_s)" = 0.42 ] || fail "crash padding step time"
rm -f "$SM_TMP/crash.log"

# A bar without newlines (64 MB of carriage-return updates): its tail
# answers, and only about a MiB is read.
awk 'BEGIN { for (s = 1; s <= 1000000; s++)
  printf "\r %2d%%|#####     | %d/1000000 [01:00<02:00, 12.5it/s, loss=%.4f]", s % 100, s, 3 - s / 1e6 }' \
  >"$SM_TMP/bar.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/bar.log"
[ "$(jget "$SM_TMP/last.out" .step)" = 1000000 ] || fail "bar without newlines: $(cut -c1-200 "$SM_TMP/last.out")"
read_b=$(jget "$SM_TMP/last.out" .bytes_read)
[ "$read_b" -le 2200000 ] || fail "bar without newlines: read $read_b bytes"
rm -f "$SM_TMP/bar.log"

# --follow: samples of the bytes a truncation removed are gone.
log="$SM_TMP/follow.log"
out="$SM_TMP/follow.out"
for s in $(seq 1 20); do echo "step=$s loss=1.$s lr=0.1 step_time=0.30s"; done >"$log"
"$SCHEDMATE" track --follow --json --interval 0.05 "$log" >"$out" 2>"$SM_TMP/follow.err" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ "$(tail -1 "$out" 2>/dev/null | jq .step 2>/dev/null)" = 20 ] && break; sleep 0.1; done
: >"$log"
echo "step=3 lr=0.2" >>"$log"
for _ in $(seq 200); do [ "$(tail -1 "$out" | jq .step 2>/dev/null)" = 3 ] && break; sleep 0.1; done
kill -TERM $pid
wait $pid || true
trap - EXIT
last=$(tail -1 "$out")
[ "$(jq .step <<<"$last")" = 3 ] || fail "after truncation: $last"
[ "$(jq .loss <<<"$last")" = null ] || fail "after truncation the old loss stayed: $last"
[ "$(jq .step_time_s <<<"$last")" = null ] || fail "after truncation the old step time stayed: $last"
echo "track robustness ok"
