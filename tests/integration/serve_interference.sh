# The run channel of schedmate serve: a job's log is followed from one
# progress request to the next; when another job registers on one of its
# nodes, its rate at that moment is the baseline, and once its window
# holds only later samples a rate below 75 % of it is flagged, once (the
# job's "slowdown", an audit line the shadow report counts as a would-be
# eviction, a counter).  A job on another node is not touched; the watch
# ends when the joining job ends.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
DB="$SM_TMP/h.db"
ROOT="$SM_TMP/root"
mkdir -p "$ROOT"
# lines N: iterations at a given time per iteration.
lines() {
  local from=$1 n=$2 ms=$3
  for i in $(seq "$from" $((from + n - 1))); do
    printf 'iter %d/2000 | loss %.4f | lr 0.0003 | %s ms/iter\n' "$i" "$(awk -v i="$i" 'BEGIN{print 3 - i / 1000}')" "$ms"
  done
}
lines 1 30 100.0 > "$ROOT/a.log"
lines 1 30 100.0 > "$ROOT/c.log"
lines 1 5 80.0 > "$ROOT/b.log"
serve_start run --db "$DB" --socket "$SM_TMP/s.sock" --allow-root "$ROOT" \
  --audit "$SM_TMP/audit.jsonl"
U="unix:$SM_TMP/s.sock"
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"A\",\"metadata\":{\"model_name\":\"gpt2-124m\"},\"log\":\"$ROOT/a.log\",\"nodes\":[\"n1\"]}"
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"C\",\"metadata\":{\"model_name\":\"gpt2-124m\"},\"log\":\"$ROOT/c.log\",\"nodes\":[\"n2\"]}"
expect_http 200 "$U" /v1/jobs/A/progress
[ "$(body_get .step_time_s)" = 0.1 ] || fail "A's step time: $(body_get .step_time_s)"
expect_http 200 "$U" /v1/jobs/C/progress
# B starts on n1 (and on n3).
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"B\",\"metadata\":{\"model_name\":\"bert-base\"},\"log\":\"$ROOT/b.log\",\"nodes\":[\"n3\",\"n1\"]}"
expect_http 200 "$U" /v1/jobs/A
[ "$(body_get .slowdown.joined_by)" = B ] || fail "A watches B"
[ "$(body_get .slowdown.node)" = n1 ] || fail "the shared node"
[ "$(body_get .slowdown.flagged)" = false ] || fail "not flagged yet"
expect_http 200 "$U" /v1/jobs/C
[ "$(body_get .slowdown)" = null ] || fail "C is on another node"
# A slows down; five steps are not enough to judge ...
lines 31 5 200.0 >> "$ROOT/a.log"
lines 31 5 100.0 >> "$ROOT/c.log"
expect_http 200 "$U" /v1/jobs/A/progress
expect_http 200 "$U" /v1/jobs/A
[ "$(body_get .slowdown.flagged)" = false ] || fail "flagged before the window moved on"
# ... ten more are.
lines 36 10 200.0 >> "$ROOT/a.log"
expect_http 200 "$U" /v1/jobs/A/progress
[ "$(body_get .step_time_s)" = 0.2 ] || fail "A's new step time"
expect_http 200 "$U" /v1/jobs/A
[ "$(body_get .slowdown.flagged)" = true ] || fail "not flagged: $(cat "$SM_TMP/body")"
[ "$(body_get .slowdown.ratio)" = 0.5 ] || fail "ratio"
expect_http 200 "$U" /v1/jobs/C/progress
expect_http 200 "$U" /v1/jobs/C
[ "$(body_get .slowdown)" = null ] || fail "C touched"
# Once.
lines 46 5 220.0 >> "$ROOT/a.log"
expect_http 200 "$U" /v1/jobs/A/progress
[ "$(jq -s 'map(select(.decision=="interference")) | length' "$SM_TMP/audit.jsonl")" = 1 ] || fail "flagged more than once"
jq -se 'map(select(.decision=="interference"))[0] | .job == "A" and .joined_by == "B" and .ratio == 0.5 and .channel == "run"' "$SM_TMP/audit.jsonl" >/dev/null || fail "audit line"
expect_http 200 "$U" /metrics
grep -q '^schedmate_serve_interference_total 1$' "$SM_TMP/body" || fail "counter"
# The write-back of A carries it; B's end ends C's... and A's watch.
expect_http 200 "$U" /v1/jobs/B/end -d '{"end_state":"completed","duration_s":100}'
expect_http 200 "$U" /v1/jobs/A
[ "$(body_get .slowdown)" = null ] || fail "the watch outlived B"
expect_http 200 "$U" /v1/jobs/A/end -d '{"end_state":"completed","duration_s":900}'
serve_stop run
expect_rc 0 $S report --db "$DB" --audit "$SM_TMP/audit.jsonl" --json
[ "$(jget "$SM_TMP/last.out" .evictions.n)" = 1 ] || fail "report: would-be evictions"
[ "$(jget "$SM_TMP/last.out" '.evictions.items[0].joined_by')" = B ] || fail "report: joined_by"
echo "ok: interference"
