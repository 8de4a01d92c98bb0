#!/usr/bin/env bash
# Sia and Sia + SchedMate through the command: a small set of two
# workload files on the synthetic tables of tests/data/sia (made-up
# applications and GPU types), compared in text, JSON and HTML; the
# errors a user meets (unnamed GPU types, a malformed workload file,
# missing tables, no MILP solver in the build).  Seconds, not minutes.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
T="--param sia.tables=tests/data/sia/tables"
C="--cluster 2x4:slow,1x8:fast"
W="$SM_TMP/set"
mkdir -p "$W"
# Two files of 20 jobs, every third one the other application; the
# duration column only satisfies the trace reader (Sia does not use it).
for f in 1 2; do
  {
    echo "name,time,application,num_replicas,batch_size,duration"
    for i in $(seq 0 19); do
      if [ $((i % 3)) = 0 ]; then a=toylm b=64; else a=toyconv b=1024; fi
      echo "$a-$i,$((i * 240 + f * 17)),$a,1,$b,600"
    done
  } >"$W/workload-$f.csv"
done

# The solver: CBC when the build has it; otherwise --policy sia says why
# (one line, exit 2) and the greedy fallback runs.
S=""
rc=0
"$SCHEDMATE" simulate --trace "$W" $C --policy sia $T >"$SM_TMP/probe.out" \
  2>"$SM_TMP/probe.err" || rc=$?
if [ $rc = 2 ]; then
  grep -q "coinor-libcbc-dev" "$SM_TMP/probe.err" ||
    fail "sia failed for another reason: $(cat "$SM_TMP/probe.err")"
  [ "$(wc -l <"$SM_TMP/probe.err")" = 1 ] || fail "not one line"
  S="--param sia.solver=greedy"
else
  [ $rc = 0 ] || fail "sia exited $rc"
fi

expect_rc 0 "$SCHEDMATE" simulate --trace "$W" $C $T $S \
  --compare sia,sia+schedmate --json --report "$SM_TMP/r.html"
J="$SM_TMP/last.out"
[ "$(jget "$J" '.results | length')" = 2 ] || fail "two results"
[ "$(jget "$J" '.results[0].policy')" = sia ] || fail "first is sia"
[ "$(jget "$J" '.results[1].completed')" = 40 ] || fail "all 40 jobs end"
[ "$(jget "$J" '.results[0].stats.sia_workload_files')" = 2 ] || fail "files"
hit=$(jget "$J" '.results[1].stats.facts_hit_rate')
awk -v h="$hit" 'BEGIN{exit !(h > 0.5)}' || fail "hit rate $hit"
[ "$(jget "$J" '.schedmate.speedups[0].baseline')" = sia ] || fail "pair"
# The history-seeded models pay off on this set.
awk -v a="$(jget "$J" '.results[0].avg_jct_s')" \
    -v b="$(jget "$J" '.results[1].avg_jct_s')" 'BEGIN{exit !(b < a)}' ||
  fail "sia+schedmate avg JCT not below sia's"
awk -v a="$(jget "$J" '.results[0].stats.sia_restarts')" \
    -v b="$(jget "$J" '.results[1].stats.sia_restarts')" 'BEGIN{exit !(b < a)}' ||
  fail "no restarts avoided"
grep -q "sia+schedmate: hit rate" "$SM_TMP/r.html" || fail "report line"
grep -Eq "sia\+schedmate</td><td>(<svg[^<]*(<[^>]*>)*</svg> )?sia</td>" "$SM_TMP/r.html" ||
  fail "report pair"

expect_rc 0 "$SCHEDMATE" simulate --trace "$W" $C $T $S \
  --compare sia,sia+schedmate
grep -q "sia+schedmate vs sia" "$SM_TMP/last.out" || fail "speed-up line"
grep -q "restarts avoided" "$SM_TMP/last.out" || fail "restarts avoided"
grep -q "information source" "$SM_TMP/last.out" || fail "source"

# Errors: one line naming the problem, exit 2.
expect_rc 2 "$SCHEDMATE" simulate --trace "$W" --cluster 4x4 --policy sia \
  $T $S
grep -q "must be named" "$SM_TMP/last.err" || fail "unnamed types"
printf 'name,time,application,num_replicas,batch_size,duration\na,0,toyconv,1,lots,60\n' \
  >"$SM_TMP/bad.csv"
expect_rc 2 "$SCHEDMATE" simulate --trace "$SM_TMP/bad.csv" $C --policy sia \
  $T $S
grep -q "bad.csv:2" "$SM_TMP/last.err" || fail "file:line"
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "one line"
expect_rc 2 "$SCHEDMATE" simulate --trace "$W" $C --policy sia $S \
  --param sia.tables="$SM_TMP/none"
grep -q "no tables for application" "$SM_TMP/last.err" || fail "no tables"
expect_rc 2 "$SCHEDMATE" simulate --trace "$W" $C --policy sia $T $S \
  --param sia.fit=cubic
grep -q "sia.fit" "$SM_TMP/last.err" || fail "bad sia.fit"
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "one line (sia.fit)"
expect_rc 0 "$SCHEDMATE" simulate --trace "$W" $C --policy sia $T $S \
  --param sia.fit=linear
grep -q "sia.fit=linear" "$SM_TMP/last.out" || fail "linear fit note"
expect_rc 0 "$SCHEDMATE" simulate --trace "$W" $C --policy sia $T $S \
  --param sia.fit=log-exact
grep -q "single per-GPU batch was observed (sia.fit=log-exact)" \
  "$SM_TMP/last.out" || fail "exact fit note"
echo ok
