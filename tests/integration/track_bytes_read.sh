# track_bytes_read.sh - the "bytes read" counters of `track` and
# `diagnose` (JSON bytes_read and the text line) never exceed the size of
# the log: every log under tests/data/track and tests/data/failure and the
# demo's tqdm log, with and without a final newline, and a log followed
# through a copytruncate.
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
root="$(cd "$(dirname "$0")/../.." && pwd)"
command -v jq >/dev/null || skip "jq not installed"

check() { # check WHAT FILE BYTES
  local size
  size=$(stat -c %s "$2")
  [[ "$3" =~ ^[0-9]+$ ]] || fail "$1 $2: bytes read is '$3'"
  [ "$3" -le "$size" ] || fail "$1 $2: $3 bytes read from a $size-byte file"
}
# The logs as they are, and each cut inside its last line (no final
# newline: the reverse reader's look at the last byte is not a second
# read of it).
mkdir -p "$SM_TMP/cut"
n=0
for f in "$root"/tests/data/track/*.log "$root"/tests/data/failure/*.log \
  "$root"/data/examples/*.log; do
  c="$SM_TMP/cut/$(basename "$(dirname "$f")")_$(basename "$f")"
  head -c -1 "$f" >"$c"
  for g in "$f" "$c"; do
    [ -s "$g" ] || continue
    "$SCHEDMATE" track --json "$g" >"$SM_TMP/t.json" 2>/dev/null || true
    check track "$g" "$(jq -r '.bytes_read // "none"' "$SM_TMP/t.json")"
    rc=0
    "$SCHEDMATE" diagnose --json --now 1700000000 "$g" >"$SM_TMP/d.json" 2>"$SM_TMP/d.err" || rc=$?
    [ $rc -le 1 ] || fail "diagnose $g exited $rc: $(cat "$SM_TMP/d.err")"
    check diagnose "$g" "$(jq -r '.bytes_read // "none"' "$SM_TMP/d.json")"
    n=$((n + 1))
  done
done
[ $n -ge 100 ] || fail "only $n logs checked"
# The text counters, on the demo's logs (train.log: 74,981 bytes, the log
# of the progress example in docs/serve.md, which shows 149,996).
expect_rc 0 "$SCHEDMATE" track "$root/data/examples/train.log"
b=$(sed -n 's/^samples: .*, \([0-9][0-9]*\) bytes read)$/\1/p' "$SM_TMP/last.out")
check "track (text)" "$root/data/examples/train.log" "$b"
expect_rc 1 "$SCHEDMATE" diagnose --now 1700000000 "$root/data/examples/failed_ecc.log"
b=$(sed -n 's/.* \([0-9][0-9]*\) bytes read)$/\1/p' "$SM_TMP/last.out")
check "diagnose (text)" "$root/data/examples/failed_ecc.log" "$b"

# Followed through a copytruncate: the new content is read from 0, and
# the count is of it alone.
log="$SM_TMP/follow.log"
for s in $(seq 1 400); do echo "step=$s loss=2.5 lr=0.0003 step_time=0.50s"; done >"$log"
(
  sleep 1
  : >"$log"
  for s in $(seq 900 920); do echo "step=$s loss=1.5 lr=0.0003 step_time=0.50s"; done >>"$log"
) &
w=$!
timeout 20 "$SCHEDMATE" track --follow --json --interval 0.2 --idle-exit 2 "$log" \
  >"$SM_TMP/f.json" || fail "track --follow did not stop"
wait $w
[ "$(tail -1 "$SM_TMP/f.json" | jq -r .step)" = 920 ] || fail "follow: $(tail -1 "$SM_TMP/f.json")"
check "track --follow" "$log" "$(tail -1 "$SM_TMP/f.json" | jq -r .bytes_read)"
echo "ok: bytes read within the file on $n logs and a followed copytruncate"
