# schedmate simulate: help, text and JSON summaries, --compare, per-job
# CSV and the HTML report on a small hand-made trace.
. "$(dirname "$0")/../lib.sh"
D=tests/data/sim
expect_rc 0 "$SCHEDMATE" simulate --help
grep -q '^usage: schedmate simulate' "$SM_TMP/last.out" || fail "usage line"
grep -q -- '--compare' "$SM_TMP/last.out" || fail "help lists --compare"

# Text summary of one policy.
expect_rc 0 "$SCHEDMATE" simulate --trace $D/tiresias_jobs.csv --cluster 2x8 --policy sjf
grep -q '^policy     sjf' "$SM_TMP/last.out" || fail "text names the policy"
grep -q '^JCT        avg' "$SM_TMP/last.out" || fail "text has JCT"

# One JSON object with the keys of docs/design.md section 3; FIFO on one 8-GPU node:
# 0: 0-400 (2), 1: 25-275 (4), 2: 65-155 (1), 3 (8 GPUs) waits for all:
# 400-1000.  JCTs 400, 250, 90, 925.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/tiresias_jobs.csv --cluster 1x8 --policy fifo
J=$SM_TMP/last.out
[ "$(jq -r 'keys | length' $J)" -gt 10 ] || fail "JSON has keys"
for k in policy semantic jobs avg_jct_s p99_jct_s avg_queue_s makespan_s; do
  [ "$(jq "has(\"$k\")" $J)" = true ] || fail "JSON lacks $k"
done
[ "$(jget $J .policy)" = fifo ] || fail "policy"
[ "$(jget $J .semantic)" = off ] || fail "semantic"
[ "$(jget $J .jobs)" = 4 ] || fail "jobs"
[ "$(jget $J .avg_jct_s)" = 416.25 ] || fail "avg JCT $(jget $J .avg_jct_s)"
[ "$(jget $J .makespan_s)" = 1000 ] || fail "makespan"
[ "$(jget $J .p99_jct_s)" = 925 ] || fail "p99"
[ "$(jget $J .invariants)" = ok ] || fail "invariants"

# --compare: one object {trace, results[]} with one summary per policy.
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/tiresias_jobs.csv --cluster 1x8 \
  --compare fifo,sjf,srtf,qssf,tiresias --jobs-csv $SM_TMP/jobs.csv --report $SM_TMP/r.html
[ "$(jget $J .trace)" = "$D/tiresias_jobs.csv" ] || fail "compare trace"
[ "$(jget $J '.results | length')" = 5 ] || fail "compare results"
[ "$(jget $J '[.results[].policy] | join(",")')" = fifo,sjf,srtf,qssf,tiresias ] || fail "policies"
[ "$(jget $J .report)" = "$SM_TMP/r.html" ] || fail "report path in JSON"
for p in fifo sjf srtf qssf tiresias; do
  [ "$(wc -l < $SM_TMP/jobs.$p.csv)" = 5 ] || fail "jobs CSV of $p"
done
head -1 $SM_TMP/jobs.fifo.csv | grep -q '^job_id,line,vc,user,name,gpus' || fail "CSV header"
grep -c '<svg' $SM_TMP/r.html | grep -q . || fail "report has plots"
[ "$(grep -o '<svg xmlns' $SM_TMP/r.html | wc -l)" = 3 ] || fail "three plots"
! grep -q '<script' $SM_TMP/r.html || fail "report has scripts"

# Text table of a comparison.
expect_rc 0 "$SCHEDMATE" simulate --trace $D/tiresias_jobs.csv --cluster 1x8 --compare fifo,tiresias
grep -q '^fifo ' "$SM_TMP/last.out" || fail "table row fifo"
grep -q '^tiresias ' "$SM_TMP/last.out" || fail "table row tiresias"
# The table stays aligned for long names: every row of the summary has
# its figures in the same columns as the header.
expect_rc 0 "$SCHEDMATE" simulate --trace $D/tiresias_jobs.csv --cluster 1x8 \
  --compare fifo,sjf-schedmate+fh --lucid-tables builtin
awk '/^policy /{w=index($0, "avg JCT s"); n=1; next}
     n && /^(fifo|sjf-schedmate)/{ if (substr($0, w - 1, 1) != " ") bad=1 }
     /^queue:/{n=0} END{exit bad}' "$SM_TMP/last.out" || fail "aligned table"
grep -q '^sjf-schedmate+fh \[history\] ' "$SM_TMP/last.out" || fail "labelled runs"
# An unwritable report path fails before the run and leaves nothing.
expect_rc 2 "$SCHEDMATE" simulate --trace $D/tiresias_jobs.csv --cluster 1x8 --compare fifo,sjf \
  --report /nonexistent/dir/r.html
[ ! -s "$SM_TMP/last.out" ] || fail "ran although the report cannot be written"
grep -q '/nonexistent/dir/r.html: cannot create' "$SM_TMP/last.err" || fail "report error"

# Knobs: placement, backfill, overheads, thresholds, estimators, params.
# Head-of-line blocking: C (1 GPU) waits behind B (4 GPUs) under FIFO
# (C: 150-160), runs at once with --backfill (20-30).
printf 'job_id,submit_s,duration_s,gpus\nA,0,100,2\nB,10,50,4\nC,20,10,1\n' > $SM_TMP/hol.csv
expect_rc 0 "$SCHEDMATE" simulate --trace $SM_TMP/hol.csv --cluster 1x4 --jobs-csv $SM_TMP/h1.csv
grep -q '^C,4,,,,1,1,20,150,160,' $SM_TMP/h1.csv || fail "FIFO blocks C"
expect_rc 0 "$SCHEDMATE" simulate --trace $SM_TMP/hol.csv --cluster 1x4 --backfill --jobs-csv $SM_TMP/h2.csv
grep -q '^C,4,,,,1,1,20,20,30,' $SM_TMP/h2.csv || fail "backfill runs C"
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/generic.csv --cluster 2x8 --policy qssf \
  --estimator noisy:lognormal:0.5 --placement first-fit --preempt-overhead 10,20 --seed 3
[ "$(jget $J .params.estimator)" = noisy:lognormal:0.5 ] || fail "estimator param"
[ "$(jget $J .preempt_overhead_s.large)" = 20 ] || fail "overhead"
[ "$(jget $J .cluster.placement)" = first-fit ] || fail "placement"
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/tiresias_jobs.csv --cluster 1x8 --policy tiresias \
  --tiresias-thresholds 100,1000 --tiresias-interval 0
[ "$(jget $J '.params."tiresias.thresholds"')" = 100,1000 ] || fail "thresholds param"
expect_rc 0 "$SCHEDMATE" simulate --json --trace $D/helios_cluster_log.csv --vc-config $D/vcs_helios.csv --policy srtf
[ "$(jget $J .cluster.vcs)" = 2 ] || fail "VC table"
[ "$(jget $J .jobs)" = 6 ] || fail "helios jobs"

# Utilisation and queue length over time.
expect_rc 0 "$SCHEDMATE" simulate --trace $SM_TMP/hol.csv --cluster 1x4 --series-csv $SM_TMP/s.csv
head -1 $SM_TMP/s.csv | grep -q '^time_s,busy_gpus,pending_jobs,util$' || fail "series header"
grep -q '^10.000,2,1,0.500000$' $SM_TMP/s.csv || fail "series point at 10 s"
grep -q '^100.000,4,1,1.000000$' $SM_TMP/s.csv || fail "series point at 100 s"
grep -q '^160.000,0,0,0.000000$' $SM_TMP/s.csv || fail "series end"
