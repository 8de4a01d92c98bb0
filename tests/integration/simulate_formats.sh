# Every supported trace layout runs end to end (auto-detected), with the
# invariants checked, on the hand-written samples in tests/data/sim.
. "$(dirname "$0")/../lib.sh"
D=tests/data/sim
check() { # FILE FORMAT JOBS [ARGS]
  local f=$1 fmt=$2 n=$3; shift 3
  for p in fifo tiresias; do
    expect_rc 0 "$SCHEDMATE" simulate --json --trace "$f" --policy $p "$@"
    [ "$(jget $SM_TMP/last.out .format)" = "$fmt" ] || fail "$f: format"
    [ "$(jget $SM_TMP/last.out .jobs)" = "$n" ] || fail "$f: jobs"
    [ "$(jget $SM_TMP/last.out .unfinished)" = 0 ] || fail "$f: unfinished"
    [ "$(jget $SM_TMP/last.out .invariants)" = ok ] || fail "$f: invariants"
  done
}
check $D/helios_cluster_log.csv helios 6 --cluster vcA=2x8,vcB=3x8
check $D/lucid_cluster_log.csv helios 4 --vc-config $D/vcs_lucid.csv
check $D/acme_trace_seren.csv acme 3 --cluster 8x8
check $D/acme_trace_kalos.csv acme 3 --cluster 4x8
check $D/tiresias_jobs.csv tiresias 4 --cluster 2x4
check $D/chronus_jobs.csv tiresias 3 --cluster 1x2
check $D/sia_workload.csv sia 5 --cluster 4x8:a100@1,4x4:k80@0.4
check $D/sia_philly_sample.csv sia-philly 5
check $D/generic.csv generic 4 --cluster 2x8
# Forced layout names.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/lucid_cluster_log.csv --format lucid --cluster vcX=1x8,vcY=1x8
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/chronus_jobs.csv --format chronus --cluster 1x8
# A gzip-compressed copy reads the same.
gzip -c $D/generic.csv > $SM_TMP/g.csv.gz
expect_rc 0 "$SCHEDMATE" simulate --json --trace $SM_TMP/g.csv.gz --cluster 2x8
[ "$(jget $SM_TMP/last.out .avg_jct_s)" = "$("$SCHEDMATE" simulate --json --trace $D/generic.csv --cluster 2x8 | jq -r .avg_jct_s)" ] \
  || fail "gzip differs"
