# `schedmate track` as a command: usage, the JSON contract, exit codes,
# one-line errors naming the file, and bad input (empty, binary, invalid
# UTF-8, a 100 MB line without a newline, a directory, an unreadable path)
# answered with `missing` or a clear error, in bounded memory.
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
data="$(dirname "$0")/../data/track"

expect_rc 0 "$SCHEDMATE" track --help
grep -q '^usage: schedmate track' "$SM_TMP/last.out" || fail "no usage line"
grep -q '^Exit status: 0 with an answer' "$SM_TMP/last.out" || fail "--help documents no exit status"
expect_rc 2 "$SCHEDMATE" track
grep -q 'LOG' "$SM_TMP/last.err" || fail "missing-argument message"
expect_rc 2 "$SCHEDMATE" track --samples 0 "$data/megatron.log"
expect_rc 2 "$SCHEDMATE" track --no-such-option "$data/megatron.log"
expect_rc 2 "$SCHEDMATE" track a.log b.log

# The contract: exactly one JSON object with every key.
expect_rc 0 "$SCHEDMATE" track --json "$data/megatron.log"
[ "$(wc -l <"$SM_TMP/last.out")" = 1 ] || fail "more than one line of JSON"
jq -e 'keys as $k | ["status","step","total_steps","epoch","loss","lr",
  "step_time_s","throughput","samples","lines_scanned","bytes_read","format"]
  | all(. as $x | $k | index($x))' "$SM_TMP/last.out" >/dev/null \
  || fail "a contract key is missing: $(cat "$SM_TMP/last.out")"
[ "$(jget "$SM_TMP/last.out" .status)" = ok ] || fail "status"
[ "$(jget "$SM_TMP/last.out" .step)" = 110 ] || fail "step"
expect_rc 0 "$SCHEDMATE" track --json --samples 3 "$data/megatron.log"
[ "$(jget "$SM_TMP/last.out" .samples)" = 3 ] || fail "--samples"

# Human output.
expect_rc 0 "$SCHEDMATE" track "$data/keras.log"
grep -q '^status: *ok' "$SM_TMP/last.out" || fail "human status"
grep -q '^step: *1875 / 1875' "$SM_TMP/last.out" || fail "human step"
expect_rc 0 "$SCHEDMATE" track "$data/startup_only.log"
grep -q 'missing' "$SM_TMP/last.out" || fail "human missing"

# Unreadable input: exit 2 and one line naming the file.
expect_rc 2 "$SCHEDMATE" track --json "$SM_TMP/no-such.log"
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "error is not one line"
grep -q "$SM_TMP/no-such.log" "$SM_TMP/last.err" || fail "error names no file"
expect_rc 2 "$SCHEDMATE" track "$SM_TMP"
grep -q 'directory' "$SM_TMP/last.err" || fail "directory message"
if [ "$(id -u)" != 0 ]; then
  echo "step=1 loss=1" >"$SM_TMP/locked.log"; chmod 000 "$SM_TMP/locked.log"
  expect_rc 2 "$SCHEDMATE" track "$SM_TMP/locked.log"
  grep -q 'locked.log' "$SM_TMP/last.err" || fail "permission message"
fi
mkfifo "$SM_TMP/fifo"
expect_rc 2 timeout 10 "$SCHEDMATE" track "$SM_TMP/fifo"
grep -q 'FIFO' "$SM_TMP/last.err" || fail "FIFO message"

# Bad content: an answer (missing), never a crash.
: >"$SM_TMP/empty.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/empty.log"
[ "$(jget "$SM_TMP/last.out" .status)" = missing ] || fail "empty file"
head -c 2000000 /dev/urandom >"$SM_TMP/binary.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/binary.log"
jq -e . "$SM_TMP/last.out" >/dev/null || fail "binary: invalid JSON"
printf 'step=7 loss=0.5 lr=0.1 note=\xff\xfe\xc3(\n' >"$SM_TMP/utf8.log"
expect_rc 0 "$SCHEDMATE" track --json "$SM_TMP/utf8.log"
[ "$(jget "$SM_TMP/last.out" .step)" = 7 ] || fail "invalid UTF-8 line"

# A 100 MB line without a newline after real progress.  Within the
# default 64 MiB look-back the log shows no progress: `missing`, saying
# that the budget ran out; with a larger budget the progress before the
# line answers.  Memory stays bounded either way (the log is 100 MB).
{ for s in 1 2 3 4 5; do echo "step=$s loss=1.$s lr=0.1 step_time=0.4s"; done
  head -c 100000000 /dev/zero | tr '\0' 'x'; } >"$SM_TMP/longline.log"
/usr/bin/time -f '%M' -o "$SM_TMP/rss" "$SCHEDMATE" track --json \
  "$SM_TMP/longline.log" >"$SM_TMP/last.out" 2>"$SM_TMP/last.err" \
  || fail "long line: exit $?"
[ "$(jget "$SM_TMP/last.out" .status)" = missing ] || fail "long line: status"
[ "$(jget "$SM_TMP/last.out" .scan_limited)" = true ] || fail "long line: budget"
rss=$(tail -1 "$SM_TMP/rss")
[ "$rss" -lt 90000 ] || fail "long line: ${rss} KB resident"
/usr/bin/time -f '%M' -o "$SM_TMP/rss" "$SCHEDMATE" track --json \
  --max-scan 200000000 "$SM_TMP/longline.log" >"$SM_TMP/last.out" \
  2>"$SM_TMP/last.err" || fail "long line: exit $?"
[ "$(jget "$SM_TMP/last.out" .step)" = 5 ] || fail "long line: step"
rss=$(tail -1 "$SM_TMP/rss")
[ "$rss" -lt 90000 ] || fail "long line: ${rss} KB resident"
rm -f "$SM_TMP/longline.log"

# The diagnostic mode counts every line.
expect_rc 0 "$SCHEDMATE" track --classify-all --json "$data/megatron.log"
[ "$(jget "$SM_TMP/last.out" .lines)" = "$(wc -l <"$data/megatron.log")" ] \
  || fail "classify-all line count"
jq -e '.classes.progress >= 11' "$SM_TMP/last.out" >/dev/null \
  || fail "classify-all progress count"
echo "track CLI ok"
