# schedmate simulate on bad traces and bad usage: exit 2 and one line on
# stderr naming the file, the line and the column; documented repairs
# are reported instead.
. "$(dirname "$0")/../lib.sh"
D=tests/data/sim
bad() { # FILE PATTERN
  expect_rc 2 "$SCHEDMATE" simulate --trace "$1" --cluster 2x8
  [ "$(wc -l < "$SM_TMP/last.err")" = 1 ] || { cat "$SM_TMP/last.err"; fail "$1: one line"; }
  grep -qF "$2" "$SM_TMP/last.err" || { cat "$SM_TMP/last.err"; fail "$1: message"; }
}
bad $D/bad_missing_column.csv "bad_missing_column.csv:1: missing column 'duration'"
bad $D/bad_negative_duration.csv "bad_negative_duration.csv:3: column 'duration_s' (field 3): negative duration"
bad $D/bad_nonnumeric.csv "bad_nonnumeric.csv:3: column 'gpu_num' (field 4): 'two'"
bad $D/bad_short_row.csv "bad_short_row.csv:3: expected 5 fields"
bad $D/bad_quote.csv "bad_quote.csv:2: malformed quoted field"
bad $D/bad_header.csv "bad_header.csv:1: unrecognised trace header"
bad $D/bad_time.csv "bad_time.csv:3: column 'timestamp'"
# A repeated column name and a hexadecimal time are refused, not read.
printf 'job_id,submit_s,duration_s,gpus,gpus\na,0,10,1,2\n' > $SM_TMP/dup.csv
bad $SM_TMP/dup.csv "dup.csv:1: column 'gpus' appears twice (fields 4 and 5)"
printf 'job_id,submit_s,duration_s,gpus\na,0,10,1\nb,0x10,10,1\n' > $SM_TMP/hex.csv
bad $SM_TMP/hex.csv "hex.csv:3: column 'submit_s' (field 2): '0x10' is not a time"
bad $D/empty.csv "empty.csv: empty file"
bad $D/header_only.csv "no GPU jobs"
bad $D/no_such_file.csv "no_such_file.csv"
bad $D "tests/data/sim"
printf 'job_id,submit_s,duration_s,gpus\na,0,1\000,1\n' > $SM_TMP/bin.csv
bad $SM_TMP/bin.csv "bin.csv:2: binary data"
head -c 3000 data/traces/sia_philly.csv.gz > $SM_TMP/trunc.csv.gz
bad $SM_TMP/trunc.csv.gz "trunc.csv.gz: corrupt or truncated gzip data"

# Too many GPUs: capped and reported by default, an error on request.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/oversize.csv --cluster 2x8
grep -q 'capped to the VC size' "$SM_TMP/last.out" || fail "cap note"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/oversize.csv --cluster 2x8 --oversize error
grep -qF "oversize.csv:3: job huge asks for 64 GPUs" "$SM_TMP/last.err" || fail "oversize error"
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/oversize.csv --cluster 2x8 --oversize drop
[ "$(jget $SM_TMP/last.out .dropped)" = 1 ] || fail "oversize drop"

# Unsorted rows are sorted and the report says so.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/sia_philly_sample.csv --cluster 2x8
jq -e '.notes | map(select(test("not in submit order"))) | length == 1' "$SM_TMP/last.out" >/dev/null \
  || fail "sort note"

# Unknown VCs: dropped with a note, or an error.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/helios_cluster_log.csv --cluster vcA=2x8
[ "$(jget $SM_TMP/last.out .dropped)" = 2 ] || fail "unknown VC drop"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/helios_cluster_log.csv --cluster vcA=2x8 --unknown-vc error
grep -qF "helios_cluster_log.csv:5: VC 'vcB' is not in the cluster" "$SM_TMP/last.err" || fail "unknown VC error"

# Bad usage.
expect_rc 2 "$SCHEDMATE" simulate
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --synthetic venus
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --policy nope
grep -q "unknown policy 'nope'" "$SM_TMP/last.err" || fail "unknown policy"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --compare fifo,,sjf
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --cluster 8
grep -q "NODESxGPUS" "$SM_TMP/last.err" || fail "cluster spec message"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --format nope
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --no-such-option
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --policy qssf --estimator magic
grep -q "unknown estimator 'magic'" "$SM_TMP/last.err" || fail "estimator message"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --semantic on
grep -q "does not consume" "$SM_TMP/last.err" || fail "semantic message"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --format sia-philly
grep -qF "generic.csv:1: missing column 'timestamp' (format sia-philly)" "$SM_TMP/last.err" || fail "format mismatch"
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --report /nonexistent/dir/r.html
grep -q "/nonexistent/dir/r.html" "$SM_TMP/last.err" || fail "report path error"
# Nothing left to run, and options of the other input kind.
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --vc-config data/traces/philly_vc.csv
grep -q "none of the 4 jobs can run on this cluster" "$SM_TMP/last.err" || fail "all dropped"
expect_rc 2 "$SCHEDMATE" simulate --synthetic venus --limit 3
expect_rc 2 "$SCHEDMATE" simulate --trace $D/generic.csv --synthetic-days 3
