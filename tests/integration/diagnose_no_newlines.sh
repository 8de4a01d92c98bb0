# A 2 GB log without newlines (a sparse file: the hole reads as NUL bytes,
# like the padding a crashed node leaves) is diagnosed in one read: the
# locator's reads are bounded pieces of the long line, and the count of the
# newlines before the cause is the only pass over it.  Before, every chunk
# read to the end of the line it started in: some 16 reads of the file.
# Sparse, so the test costs no disk; bounded by its timeout.
. "$(dirname "$0")/../lib.sh"
f="$SM_TMP/sparse.log"
size=$((2 << 30))
truncate -s "$size" "$f" || skip "cannot create a sparse file in $SM_TMP"
printf '\nTraceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n' >> "$f"
total=$(stat -c %s "$f")
cat "$f" > /dev/null # warm the page cache: time one read below
t0=$(date +%s%N); wc -l < "$f" > /dev/null; t1=$(date +%s%N)
expect_rc 1 timeout 300 "$SCHEDMATE" diagnose --json "$f"
t2=$(date +%s%N)
o="$SM_TMP/last.out"
echo "wc -l: $(( (t1 - t0) / 1000000 )) ms; diagnose: $(( (t2 - t1) / 1000000 )) ms; $(jget "$o" '"read \(.bytes_read) bytes (\(.bytes_counted) to count lines) of '"$total"'"')"
[ "$(jget "$o" .first_error_line)" = 4 ] || fail "line $(jget "$o" .first_error_line), want 4"
[ "$(jget "$o" .component)" = gpu ] || fail "component $(jget "$o" .component)"
# One read: the whole file at most once, plus a little.
[ "$(jget "$o" ".bytes_read <= $total + 2097152")" = true ] || fail "read $(jget "$o" .bytes_read) of $total"
# The analysis itself reads bounded pieces, not the file.
[ "$(jget "$o" '(.bytes_read - .bytes_counted) < 67108864')" = true ] || fail "analysis read $(jget "$o" '.bytes_read - .bytes_counted')"

# Without any newline or text: no failure, and only the tail and the
# probes are read (a chunk of at most 1 MiB each).
g="$SM_TMP/hole.log"
truncate -s "$size" "$g"
expect_rc 0 timeout 300 "$SCHEDMATE" diagnose --json "$g"
[ "$(jget "$SM_TMP/last.out" .status)" = no_failure ] || fail "hole: $(jget "$SM_TMP/last.out" .status)"
[ "$(jget "$SM_TMP/last.out" '.bytes_read < 67108864')" = true ] || fail "hole read $(jget "$SM_TMP/last.out" .bytes_read)"
rm -f "$f" "$g"
