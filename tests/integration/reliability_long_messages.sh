# issue 18 item 6: a long path must not push the problem off the message.
# The quoted path is shortened in the middle ("head...tail"), the problem
# and the line number are kept whole.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
D="$SM_TMP"
for i in $(seq 1 12); do D="$D/directory-of-some-length-$i"; done
mkdir -p "$D"
expect_rc 2 $S track "$D/missing.log"
msg=$(cat "$SM_TMP/last.err")
case "$msg" in *"/missing.log: No such file or directory") ;; *) fail "track: $msg" ;; esac
echo "$msg" | grep -q '\.\.\.' || fail "track: the path was not shortened: $msg"
printf '{"id":"a","duration_s":10}\n{"id":"b","duration_s":"ten"}\n' >"$D/in.jsonl"
expect_rc 2 $S history import --db "$SM_TMP/h.db" "$D/in.jsonl"
msg=$(cat "$SM_TMP/last.err")
echo "$msg" | grep -q 'in.jsonl:2: record: duration_s must be a number (1 records imported before)$' \
  || fail "import: $msg"
printf 'a,b\n1,2\n' >"$D/trace.csv"
expect_rc 2 $S simulate --trace "$D/trace.csv" --format helios --policy fifo
msg=$(cat "$SM_TMP/last.err")
echo "$msg" | grep -q 'trace.csv' || fail "simulate: $msg"
echo "$msg" | awk '{ if (length($0) > 400) exit 1 }' || fail "simulate: message too long"
echo ok
