#!/usr/bin/env bash
# Sia on its own tables and workloads (staged in ../shared, read at run
# time, never copied): the first 40 jobs of one Philly workload file on
# the paper's heterogeneous cluster, Sia against Sia + SchedMate.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
D="$SHARED/traces/sia"
[ -d "$D/traces/cifar10" ] && [ -f "$D/workloads/philly/workload-1.csv" ] ||
  skip "Sia's tables are not staged ($D)"
S=""
"$SCHEDMATE" simulate --trace "$D/workloads/philly/workload-1.csv" --limit 5 \
  --cluster 6x4:t4,3x8:rtx,2x8:a100 --policy sia \
  --param sia.tables="$D/traces" >/dev/null 2>"$SM_TMP/probe.err" ||
  { grep -q coinor-libcbc-dev "$SM_TMP/probe.err" &&
      S="--param sia.solver=greedy"; }
expect_rc 0 "$SCHEDMATE" simulate --trace "$D/workloads/philly/workload-1.csv" \
  --limit 40 --cluster 6x4:t4,3x8:rtx,2x8:a100 \
  --param sia.tables="$D/traces" $S --compare sia,sia+schedmate --json
J="$SM_TMP/last.out"
[ "$(jget "$J" '.results[0].completed')" = 40 ] || fail "40 jobs"
[ "$(jget "$J" '.results[1].completed')" = 40 ] || fail "40 jobs"
for i in 0 1; do
  awk -v a="$(jget "$J" ".results[$i].avg_jct_s")" \
    'BEGIN{exit !(a > 60 && a < 86400)}' || fail "avg JCT out of range"
done
if [ -z "$S" ]; then
  [ "$(jget "$J" '.results[0].stats.sia_solves_fallback')" = 0 ] ||
    fail "CBC fell back"
fi
[ "$(jget "$J" '.results[1].stats.facts_hits')" -gt 0 ] || fail "no hits"
echo ok
