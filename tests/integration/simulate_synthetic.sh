# Synthetic traces calibrated to the published summaries say so in every
# output.
. "$(dirname "$0")/../lib.sh"
for c in venus earth saturn uranus seren kalos; do
  expect_rc 0 "$SCHEDMATE" simulate --json --synthetic $c --synthetic-days 0.5 --policy fifo
  [ "$(jget $SM_TMP/last.out .synthetic)" = true ] || fail "$c: synthetic flag"
  [ "$(jget $SM_TMP/last.out .trace)" = "synthetic:$c" ] || fail "$c: trace name"
  jq -e '.notes[0] | test("^SYNTHETIC trace")' $SM_TMP/last.out >/dev/null || fail "$c: note"
done
expect_rc 0 "$SCHEDMATE" simulate --synthetic kalos --synthetic-jobs 300 --compare fifo,sjf --report $SM_TMP/s.html
grep -q '^SYNTHETIC trace' "$SM_TMP/last.out" || fail "text banner"
grep -q 'SYNTHETIC TRACE' $SM_TMP/s.html || fail "report banner"
expect_rc 0 "$SCHEDMATE" simulate --json --synthetic seren --synthetic-jobs 200 --compare fifo,qssf
[ "$(jget $SM_TMP/last.out .synthetic)" = true ] || fail "compare flag"
[ "$(jget $SM_TMP/last.out '.results[0].cluster.gpus')" = 2288 ] || fail "calibrated size"
expect_rc 2 "$SCHEDMATE" simulate --synthetic mars
grep -q "unknown synthetic cluster 'mars'" "$SM_TMP/last.err" || fail "unknown cluster"
if [ -f "$SHARED/traces/acme/cluster_summary.csv" ]; then
  expect_rc 0 "$SCHEDMATE" simulate --json --synthetic kalos --calibration "$SHARED/traces/acme/cluster_summary.csv" --synthetic-jobs 100
  jq -e '.notes[0] | test("cluster_summary.csv")' $SM_TMP/last.out >/dev/null || fail "calibration file note"
fi
