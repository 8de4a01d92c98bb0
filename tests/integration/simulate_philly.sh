# The shipped Philly trace: Lucid's week (10,650 jobs) under the five
# baselines on the Philly VC table, a report, and determinism.
. "$(dirname "$0")/../lib.sh"
T=data/traces/sia_philly.csv.gz
[ -f $T ] || fail "$T missing"
W=(--trace $T --vc-config data/traces/philly_vc.csv --from "2017-10-01 00:00:00" --to "2017-10-07 23:59:00")
expect_rc 0 "$SCHEDMATE" simulate --json "${W[@]}" --compare fifo,sjf,srtf,qssf,tiresias \
  --report $SM_TMP/philly.html --no-progress
J=$SM_TMP/last.out
[ "$(jget $J '.results | length')" = 5 ] || fail "five results"
[ "$(jget $J '[.results[].jobs] | unique | join(",")')" = 10650 ] || fail "10650 jobs each"
[ "$(jget $J '[.results[].invariants] | unique | join(",")')" = ok ] || fail "invariants"
# SJF and SRTF queue less than FIFO; SRTF and Tiresias preempt.
jq -e '(.results[0].avg_queue_s > .results[1].avg_queue_s) and
       (.results[0].avg_queue_s > .results[2].avg_queue_s) and
       (.results[2].preemptions > 0) and (.results[4].preemptions > 0) and
       (.results[0].preemptions == 0)' $J >/dev/null || fail "policy ordering"
grep -q '<svg' $SM_TMP/philly.html || fail "report"
# Same seed, same schedule.
"$SCHEDMATE" simulate "${W[@]}" --policy qssf --estimator noisy:lognormal:1 --seed 5 --jobs-csv $SM_TMP/a.csv >/dev/null
"$SCHEDMATE" simulate "${W[@]}" --policy qssf --estimator noisy:lognormal:1 --seed 5 --jobs-csv $SM_TMP/b.csv >/dev/null
"$SCHEDMATE" simulate "${W[@]}" --policy qssf --estimator noisy:lognormal:1 --seed 6 --jobs-csv $SM_TMP/c.csv >/dev/null
cmp -s $SM_TMP/a.csv $SM_TMP/b.csv || fail "not deterministic"
! cmp -s $SM_TMP/a.csv $SM_TMP/c.csv || fail "seed has no effect"
[ "$(wc -l < $SM_TMP/a.csv)" = 10651 ] || fail "per-job rows"
# Without a VC table: one auto-sized cluster, said on stderr.
expect_rc 0 "$SCHEDMATE" simulate "${W[@]:0:2}" --limit 2000 --policy fifo
grep -q "sized to" "$SM_TMP/last.err" || fail "auto cluster message"
# The VC table lacks 4 of the trace's VCs: the header says which, and how
# many jobs that leaves out.
expect_rc 0 "$SCHEDMATE" simulate --no-progress --trace $T --vc-config data/traces/philly_vc.csv --policy fifo
grep -q '^trace .*18 left out (18 jobs of 4 VCs the cluster does not have: 23dbec (8), ' "$SM_TMP/last.out" \
  || fail "dropped VCs in the header"
