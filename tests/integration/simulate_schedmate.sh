# SchedMate inside the schedulers: the paper-style comparison (Lucid,
# Lucid + SchedMate, QSSF, Tiresias, SchedMate-SJF with and without the
# Failure Handler) on Lucid's Philly week with the workload catalogue, the
# JSON and HTML outputs, the sources of facts and profiles, the failure
# models on a synthetic trace with failures, and bad options.
. "$(dirname "$0")/../lib.sh"
T=data/traces/sia_philly.csv.gz
[ -f $T ] || fail "$T missing"
W=(--trace $T --vc-config data/traces/philly_vc.csv --from "2017-10-01 00:00:00" --to "2017-10-07 23:59:00")
P=lucid,lucid+schedmate,qssf,tiresias,sjf-schedmate,sjf-schedmate+fh

expect_rc 0 "$SCHEDMATE" simulate --json --no-progress "${W[@]}" --compare $P \
  --workloads data/workloads --report $SM_TMP/sm.html
J=$SM_TMP/last.out
# Each SchedMate path once per honest source (history, calibrated).
[ "$(jget $J '.results | length')" = 9 ] || fail "nine results"
[ "$(jget $J '[.results[].invariants] | unique | join(",")')" = ok ] || fail "invariants"
[ "$(jget $J '.schedmate.speedups | length')" = 8 ] || fail "eight speed-ups"
[ "$(jget $J '.schedmate.facts')" = history,calibrated ] || fail "facts sources"
[ "$(jget $J '[.schedmate.sources[].name] | join(",")')" = history,calibrated ] || fail "sources"
[ "$(jget $J '[.results[] | .facts // "-"] | join(",")')" = "-,history,calibrated,-,-,history,calibrated,history,calibrated" ] \
  || fail "facts per run"
jq -e '[.schedmate.speedups[] | select(.path == "sjf-schedmate+fh") | .facts] == ["history","calibrated"]' $J >/dev/null \
  || fail "FH against the same source"
! grep -q oracle $J || fail "oracle in the default output"
grep -q 'calibrated</b> (dashed lines)' $SM_TMP/sm.html || fail "sources in the report"
[ "$(jget $J '.schedmate.speedups[0].path + "/" + .schedmate.speedups[0].baseline')" = "lucid+schedmate/lucid" ] || fail "lucid pair"
jq -e '[.results[] | select(.policy | test("schedmate")) | .semantic] | unique == ["on"]' $J >/dev/null || fail "semantic on"
jq -e '[.results[] | select(.stats.history_future_reads != null) | .stats.history_future_reads] | unique == [0]' $J >/dev/null || fail "future reads"
jq -e '.results[1].stats.facts_hit_rate > 0.5 and .results[1].stats.profiles_skipped > 0' $J >/dev/null || fail "hits"
jq -e '.results[0].stats.profiled > 0 and .results[0].stats.packed_pairs > 0' $J >/dev/null || fail "lucid profiles and packs"
# Lucid + SchedMate profiles far less and queues less than Lucid.
jq -e '.results[1].stats.profiler_gpu_h < .results[0].stats.profiler_gpu_h and
       .results[1].avg_wait_s < .results[0].avg_wait_s' $J >/dev/null || fail "profiler saved"
grep -q 'SchedMate paths' $SM_TMP/sm.html || fail "report section"
grep -q 'lucid+schedmate' $SM_TMP/sm.html || fail "report paths"
grep -q '<svg' $SM_TMP/sm.html || fail "report plots"

# Text: the paper-style table and where the facts came from.
expect_rc 0 "$SCHEDMATE" simulate --no-progress "${W[@]}" --compare $P --limit 3000 \
  --lucid-tables builtin
O=$SM_TMP/last.out
grep -q 'speed-up (baseline / path)' $O || fail "speed-up table"
grep -q 'sjf-schedmate+fh \[history\] vs sjf-schedmate \[history\]' $O || fail "FH row"
grep -q "fingerprints from the trace's attributes only" $O || fail "facts line"
grep -q '^facts history ' $O || fail "history named"
grep -q '^facts calibrated ' $O || fail "calibrated named"
grep -q 'built-in model' $O || fail "profile source (built-in)"
if [ -r "$SHARED/traces/lucid/colocate_info.csv" ]; then
  expect_rc 0 "$SCHEDMATE" simulate --no-progress "${W[@]}" --policy lucid --limit 500 \
    --profiles "$SHARED/traces/lucid/single_data.csv" --colocate "$SHARED/traces/lucid/colocate_info.csv"
  grep -q "Lucid's measured tables" $SM_TMP/last.out || fail "profile source (Lucid)"
  grep -q "non-commercial" $SM_TMP/last.out || fail "licence stated"
fi

# --semantic on makes lucid Lucid + SchedMate.
"$SCHEDMATE" simulate --json --no-progress "${W[@]}" --limit 1500 --policy lucid --semantic on >$SM_TMP/a.json
"$SCHEDMATE" simulate --json --no-progress "${W[@]}" --limit 1500 --policy lucid+schedmate >$SM_TMP/b.json
[ "$(jget $SM_TMP/a.json .avg_jct_s)" = "$(jget $SM_TMP/b.json .avg_jct_s)" ] || fail "semantic on"

# Calibrated facts.
expect_rc 0 "$SCHEDMATE" simulate --json --no-progress "${W[@]}" --limit 3000 --compare qssf,sjf-schedmate --facts calibrated
jq -e '.schedmate.facts == "calibrated" and (.results[1].stats.facts_hit_rate | . > 0.6 and . < 0.86)' $SM_TMP/last.out >/dev/null || fail "calibrated"
# The oracle only when asked, and named an upper bound everywhere.
expect_rc 0 "$SCHEDMATE" simulate --json --no-progress "${W[@]}" --limit 3000 --compare qssf,sjf-schedmate \
  --facts history,oracle --workloads data/workloads --report $SM_TMP/o.html
jq -e '.schedmate.facts == "history,oracle" and (.schedmate.sources[1] | .name == "oracle" and .upper_bound) and
       .results[2].facts == "oracle" and .results[2].stats.facts_within_2x > .results[1].stats.facts_within_2x' \
  $SM_TMP/last.out >/dev/null || fail "oracle source"
grep -q 'UPPER BOUND' $SM_TMP/o.html || fail "oracle named in the report"
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 10 --policy sjf-schedmate --facts oracle
grep -q 'needs a catalogue' $SM_TMP/last.err || fail "oracle without a catalogue"
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 10 --policy sjf-schedmate --facts history,history

# A sweep of the Tracker's detection rate: only the path that reads it.
expect_rc 0 "$SCHEDMATE" simulate --json --no-progress "${W[@]}" --limit 3000 --compare lucid,lucid+schedmate,sjf-schedmate \
  --facts history --sweep lucid.untracked=1,0.5,0 --report $SM_TMP/sw.html
jq -e '.schedmate.sweep.param == "lucid.untracked" and (.schedmate.sweep.points | length == 3) and
       ([.schedmate.sweep.points[].path] | unique == ["lucid+schedmate"])' $SM_TMP/last.out >/dev/null || fail "sweep"
grep -q 'Tracker detection rate' $SM_TMP/sw.html || fail "sweep plot"
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 100 --compare qssf,sjf-schedmate --sweep lucid.untracked=1,0
grep -q "no SchedMate path of the comparison reads 'lucid.untracked'" $SM_TMP/last.err || fail "sweep of nothing"

# Failures on a synthetic Acme trace: users resubmit, or the Handler
# restarts from the checkpoint; both runs meet the same failures.
expect_rc 0 "$SCHEDMATE" simulate --json --no-progress --synthetic kalos --synthetic-days 14 \
  --compare sjf-schedmate,sjf-schedmate+fh --failures resubmit --facts history
J=$SM_TMP/last.out
jq -e '.synthetic and .results[0].stats.infra_failures > 0 and
       .results[0].stats.infra_failures == .results[1].stats.infra_failures and
       .results[0].stats.infra_resubmitted_by_users == .results[0].stats.infra_failures and
       .results[1].stats.infra_restarts == .results[1].stats.infra_failures and
       .results[1].stats.infra_resubmitted_by_users == 0' $J >/dev/null || fail "failure paths"
[ "$(jget $J '.schedmate.speedups[0].path')" = "sjf-schedmate+fh" ] || fail "FH speed-up"

# Bad options and inputs: one line naming the problem, exit 2.
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --policy lucid --failures sometimes
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 10 --policy lucid --lucid-tables /nonexistent/lucid
grep -q '/nonexistent/lucid/single_data.csv' $SM_TMP/last.err || fail "missing table named"
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 10 --policy sjf-schedmate --workloads /nonexistent/wl
grep -q '/nonexistent/wl' $SM_TMP/last.err || fail "missing catalogue named"
printf 'model,dataset\nA,B\n' > $SM_TMP/p.csv
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --limit 10 --policy lucid --profiles $SM_TMP/p.csv --colocate $SM_TMP/p.csv
grep -q "p.csv:1: missing column" $SM_TMP/last.err || fail "bad table named"
[ "$(wc -l < $SM_TMP/last.err)" = 1 ] || fail "one-line error"
exit 0
