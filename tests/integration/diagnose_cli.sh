# `schedmate diagnose`: the command-line contract (docs/design.md section 3),
# exit codes, bad input, operator signature files and valid JSON.
. "$(dirname "$0")/../lib.sh"
D=tests/data/failure

expect_rc 0 "$SCHEDMATE" diagnose --help
grep -q '^usage: schedmate diagnose' "$SM_TMP/last.out" || fail "--help usage line"
grep -q 'Exit status' "$SM_TMP/last.out" || fail "--help documents the exit status"

# A failure exits 1 (the "did the job end cleanly" check failed) with
# every contract key; no failure exits 0.
expect_rc 1 "$SCHEDMATE" diagnose --json "$D/gpu_ecc_deepspeed.log"
out="$SM_TMP/last.out"
for k in status first_error_line category component root_cause evidence \
         confidence retryable actions chunks_examined first_error_offset; do
  jq -e "has(\"$k\")" "$out" >/dev/null || fail "missing key $k"
done
[ "$(jget "$out" .status)" = failure ] || fail "status"
[ "$(jget "$out" .first_error_line)" = 21 ] || fail "line"
[ "$(jget "$out" '.evidence[0].role')" = cause ] || fail "evidence role"
[ "$(jget "$out" '.confidence >= 0 and .confidence <= 1')" = true ] || fail "confidence range"
off=$(jget "$out" .first_error_offset)
[ "$(head -c "$off" "$D/gpu_ecc_deepspeed.log" | wc -l)" = 20 ] || fail "offset does not start line 21"

expect_rc 0 "$SCHEDMATE" diagnose --json "$D/success_with_decoys.log"
[ "$(jget "$SM_TMP/last.out" .status)" = no_failure ] || fail "decoys gave a failure"
[ "$(jget "$SM_TMP/last.out" .first_error_line)" = null ] || fail "no_failure has a line"
[ "$(jget "$SM_TMP/last.out" '.actions | length')" = 0 ] || fail "no_failure has actions"

# Human output.
expect_rc 1 "$SCHEDMATE" diagnose "$D/nfs_stale.log"
grep -q '^first error: line 10' "$SM_TMP/last.out" || fail "human output"
grep -q 'infrastructure / storage' "$SM_TMP/last.out" || fail "human category"

# Bad usage and unreadable input exit 2 with one line naming the problem.
expect_rc 2 "$SCHEDMATE" diagnose
expect_rc 2 "$SCHEDMATE" diagnose a.log b.log
expect_rc 2 "$SCHEDMATE" diagnose --context 0 "$D/nfs_stale.log"
expect_rc 2 "$SCHEDMATE" diagnose --tail abc "$D/nfs_stale.log"
expect_rc 2 "$SCHEDMATE" diagnose --no-locator --tail 5 "$D/nfs_stale.log"
expect_rc 2 "$SCHEDMATE" diagnose --threshold 2 "$D/nfs_stale.log"
expect_rc 2 "$SCHEDMATE" diagnose --bogus "$D/nfs_stale.log"
expect_rc 2 "$SCHEDMATE" diagnose "$SM_TMP/missing.log"
grep -q "missing.log: No such file" "$SM_TMP/last.err" || fail "missing file message"
[ "$(wc -l < "$SM_TMP/last.err")" = 1 ] || fail "error is not one line"
expect_rc 2 "$SCHEDMATE" diagnose "$D"
grep -q "is a directory" "$SM_TMP/last.err" || fail "directory message"
mkfifo "$SM_TMP/fifo"
expect_rc 2 "$SCHEDMATE" diagnose "$SM_TMP/fifo"
grep -q "FIFO" "$SM_TMP/last.err" || fail "FIFO message"
head -c 100000 /dev/urandom > "$SM_TMP/random.bin"
expect_rc 2 "$SCHEDMATE" diagnose "$SM_TMP/random.bin"
grep -q "binary data" "$SM_TMP/last.err" || fail "binary message"
gzip -c "$D/nfs_stale.log" > "$SM_TMP/log.gz"
expect_rc 2 "$SCHEDMATE" diagnose "$SM_TMP/log.gz"
grep -q "gzip" "$SM_TMP/last.err" || fail "gzip message"

# Empty, blank and newline-less logs.
: > "$SM_TMP/empty.log"
expect_rc 0 "$SCHEDMATE" diagnose --json "$SM_TMP/empty.log"
[ "$(jget "$SM_TMP/last.out" .status)" = no_failure ] || fail "empty log"
printf '\n\n   \n' > "$SM_TMP/blank.log"
expect_rc 0 "$SCHEDMATE" diagnose "$SM_TMP/blank.log"
printf 'step 1\nOSError: [Errno 28] No space left on device' > "$SM_TMP/nonl.log"
expect_rc 1 "$SCHEDMATE" diagnose --json "$SM_TMP/nonl.log"
[ "$(jget "$SM_TMP/last.out" .component)" = storage ] || fail "no final newline"

# Invalid UTF-8 and control bytes still give valid JSON.
printf 'ok \xff\xfe\n\x01\x02 RuntimeError: CUDA error: uncorrectable ECC error encountered \xc3\x28\n' > "$SM_TMP/bad-utf8.log"
expect_rc 1 "$SCHEDMATE" diagnose --json "$SM_TMP/bad-utf8.log"
jq -e . "$SM_TMP/last.out" >/dev/null || fail "invalid JSON for invalid UTF-8"
[ "$(jget "$SM_TMP/last.out" .component)" = gpu ] || fail "component with bad bytes"

# One 20 MB line, then the failure: bounded, correct.
{ head -c 20000000 /dev/zero | tr '\0' 'x'; printf '\nKeyError: %s\n' "'image'"; } > "$SM_TMP/huge-line.log"
expect_rc 1 "$SCHEDMATE" diagnose --json "$SM_TMP/huge-line.log"
[ "$(jget "$SM_TMP/last.out" .first_error_line)" = 2 ] || fail "huge line"

# Operator signatures: tried first; a broken file is a clear error.
cat > "$SM_TMP/site.ini" <<'EOF'
# Our PDUs log this before a rack loses power.
[signature site-rack-power]
match = PDU-[0-9]+ input voltage lost
category = infrastructure
component = node
confidence = 0.9
cause = the rack lost power
EOF
printf 'step 3 loss 1.2\nalert: PDU-12 input voltage lost on rack r7 (node gpu-r7-3)\nSending process 1 closing signal SIGTERM\n' > "$SM_TMP/site.log"
expect_rc 1 "$SCHEDMATE" diagnose --json --signatures "$SM_TMP/site.ini" "$SM_TMP/site.log"
[ "$(jget "$SM_TMP/last.out" .signature)" = site-rack-power ] || fail "operator signature"
[ "$(jget "$SM_TMP/last.out" .node)" = gpu-r7-3 ] || fail "node from free text"
printf '[signature broken]\nmatch = (unclosed\n' > "$SM_TMP/broken.ini"
expect_rc 2 "$SCHEDMATE" diagnose --signatures "$SM_TMP/broken.ini" "$SM_TMP/site.log"
grep -q "broken.ini:2: bad regular expression" "$SM_TMP/last.err" || fail "broken signature file message"
expect_rc 2 "$SCHEDMATE" diagnose --signatures "$SM_TMP/none.ini" "$SM_TMP/site.log"

# The ablations answer too.
expect_rc 1 "$SCHEDMATE" diagnose --json --no-locator "$D/nfs_stale.log"
[ "$(jget "$SM_TMP/last.out" .mode)" = whole ] || fail "--no-locator mode"
expect_rc 1 "$SCHEDMATE" diagnose --json --tail 3 "$D/nfs_stale.log"
[ "$(jget "$SM_TMP/last.out" .mode)" = tail ] || fail "--tail mode"
exit 0
