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
[ "$(jget $J '.results | length')" = 6 ] || fail "six results"
[ "$(jget $J '[.results[].invariants] | unique | join(",")')" = ok ] || fail "invariants"
[ "$(jget $J '.schedmate.speedups | length')" = 4 ] || fail "four speed-ups"
[ "$(jget $J '.schedmate.facts')" = history ] || fail "facts source"
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
grep -q 'sjf-schedmate+fh vs sjf-schedmate' $O || fail "FH row"
grep -q 'facts: history, trace attributes only' $O || fail "facts line"
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

# Failures on a synthetic Acme trace: users resubmit, or the Handler
# restarts from the checkpoint; both runs meet the same failures.
expect_rc 0 "$SCHEDMATE" simulate --json --no-progress --synthetic kalos --synthetic-days 14 \
  --compare sjf-schedmate,sjf-schedmate+fh --failures resubmit
J=$SM_TMP/last.out
jq -e '.synthetic and .results[0].stats.infra_failures > 0 and
       .results[0].stats.infra_failures == .results[1].stats.infra_failures and
       .results[0].stats.infra_resubmitted_by_users == .results[0].stats.infra_failures and
       .results[1].stats.infra_restarts == .results[1].stats.infra_failures and
       .results[1].stats.infra_resubmitted_by_users == 0' $J >/dev/null || fail "failure paths"
[ "$(jget $J '.schedmate.speedups[0].path')" = "sjf-schedmate+fh" ] || fail "FH speed-up"

# Bad options and inputs: one line naming the problem, exit 2.
expect_rc 2 "$SCHEDMATE" simulate "${W[@]}" --policy lucid --facts oracle
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
