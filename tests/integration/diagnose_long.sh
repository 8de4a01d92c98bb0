# Long logs built at test time (bench/diagnose/genlog.sh): 200000 lines of
# training output with decoys, a real failure at 70 % (or 30 %), hung
# ranks' watchdog reports after it.  The locator must find the fixture's
# root-cause line while reading O(log n) chunks, not the file.
. "$(dirname "$0")/../lib.sh"
G=bench/diagnose/genlog.sh
D=tests/data/failure
N=200000

$G $N 0.7 "$D/gpu_ecc_deepspeed.log" words 3 > "$SM_TMP/ecc.log" 2> "$SM_TMP/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$SM_TMP/gen.err")
want=$((at + 20))   # the fixture's cause is its line 21
size=$(stat -c %s "$SM_TMP/ecc.log")
expect_rc 1 "$SCHEDMATE" diagnose --json "$SM_TMP/ecc.log"
o="$SM_TMP/last.out"
[ "$(jget "$o" .first_error_line)" = $want ] || fail "locator line $(jget "$o" .first_error_line), want $want"
[ "$(jget "$o" .component)" = gpu ] || fail "component"
[ "$(jget "$o" '.chunks_examined < 80')" = true ] || fail "chunks $(jget "$o" .chunks_examined)"
# Besides the newline count over the prefix, under 2 MB of a ~20 MB file.
[ "$(jget "$o" '(.bytes_read - .bytes_counted) < 2000000')" = true ] || fail "read $(jget "$o" .bytes_read)"
[ "$(jget "$o" ".bytes_counted <= $size")" = true ] || fail "counted more than the file"
off=$(jget "$o" .first_error_offset)
[ "$(head -c "$off" "$SM_TMP/ecc.log" | wc -l)" = $((want - 1)) ] || fail "offset and line disagree"

# The whole-log ablation finds the same line by reading everything; the
# tail ablation only sees the watchdog reports of the hung ranks.
expect_rc 1 "$SCHEDMATE" diagnose --json --no-locator "$SM_TMP/ecc.log"
[ "$(jget "$SM_TMP/last.out" .first_error_line)" = $want ] || fail "--no-locator line"
[ "$(jget "$SM_TMP/last.out" '.lines_examined > 100000')" = true ] || fail "--no-locator did not scan"
expect_rc 1 "$SCHEDMATE" diagnose --json --tail 1000 "$SM_TMP/ecc.log"
[ "$(jget "$SM_TMP/last.out" .first_error_line)" != $want ] || fail "--tail 1000 should miss the cause"

# No "error" word before the fault; a user fault early in the log.
$G $N 0.3 "$D/cuda_oom_fsdp.log" plain 4 > "$SM_TMP/oom.log" 2> "$SM_TMP/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$SM_TMP/gen.err")
expect_rc 1 "$SCHEDMATE" diagnose --json "$SM_TMP/oom.log"
[ "$(jget "$SM_TMP/last.out" .first_error_line)" = $((at + 13)) ] || fail "oom line"
[ "$(jget "$SM_TMP/last.out" .category)" = user ] || fail "oom category"
[ "$(jget "$SM_TMP/last.out" '.actions == ["report"]')" = true ] || fail "user fault must only be reported"

# A clean log of the same size: no failure, found by probes, not a scan.
$G $N 2 "$D/gpu_ecc_deepspeed.log" words 5 > "$SM_TMP/clean.log" 2>/dev/null
expect_rc 0 "$SCHEDMATE" diagnose --json "$SM_TMP/clean.log"
[ "$(jget "$SM_TMP/last.out" .status)" = no_failure ] || fail "clean log"
[ "$(jget "$SM_TMP/last.out" '.bytes_read < 4000000')" = true ] || fail "clean log read $(jget "$SM_TMP/last.out" .bytes_read)"
