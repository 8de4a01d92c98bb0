# One history, several writers: the in-memory index of schedmate serve
# follows the write-backs of another replica on the same Redis (its
# sequence counter, polled), records another writer adds (Redis and
# SQLite) and records another writer replaces (Redis: a reload), without
# a restart.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
D=tests/data/history

# wait_count ADDR N: until /healthz says N records (at most 10 s).
wait_count() {
  for _ in $(seq 1 100); do
    hcurl "$1" /healthz >/dev/null || true
    [ "$(body_get .history_records)" = "$2" ] && return 0
    sleep 0.1
  done
  fail "$1: $(body_get .history_records) records, expected $2"
}

# ---- SQLite: another process adds to the same file ----
DB="$SM_TMP/h.db"
expect_rc 0 $S history add --db "$DB" --id s1 --duration 3000 --meta $D/llama7b_alpaca.json
serve_start lite --db "$DB" --socket "$SM_TMP/lite.sock" --sync-interval 0.2
L="unix:$SM_TMP/lite.sock"
wait_count "$L" 1
expect_rc 0 $S history add --db "$DB" --id s2 --duration 3400 --meta $D/llama7b_alpaca.json
wait_count "$L" 2
expect_http 200 "$L" /v1/advise -d "{\"metadata\":$(cat $D/llama7b_alpaca.json)}"
[ "$(body_get .estimate.duration_s)" = 3200 ] || fail "sqlite: the other writer's record is not used"
serve_stop lite

[ -n "${SM_REDIS_URL:-}" ] || skip "no Redis (tests/services.sh starts one): SQLite part passed"
R="$SM_REDIS_URL?prefix=rep$$"
cleanup_redis() {
  redis-cli -p "$SM_REDIS_PORT" --scan --pattern "rep$$:*" | xargs -r redis-cli -p "$SM_REDIS_PORT" del >/dev/null
}
awk -v N=50 -f tests/history_gen.awk > "$SM_TMP/h.jsonl"
expect_rc 0 $S history import --db "$R" "$SM_TMP/h.jsonl"
serve_start a --db "$R" --socket "$SM_TMP/a.sock" --sync-interval 0.2
serve_start b --db "$R" --socket "$SM_TMP/b.sock" --sync-interval 0.2
A="unix:$SM_TMP/a.sock"
B="unix:$SM_TMP/b.sock"
wait_count "$A" 50
wait_count "$B" 50

# A write-back through A is in B's index.
expect_http 201 "$A" /v1/jobs -d "{\"id\":\"x1\",\"metadata\":$(cat $D/llama13b_alpaca.json)}"
expect_http 200 "$A" /v1/jobs/x1/end -d '{"end_state":"completed","duration_s":5000}'
wait_count "$B" 51
expect_http 200 "$B" /v1/advise -d "{\"metadata\":$(cat $D/llama13b_alpaca.json)}"
[ "$(body_get '.matches[0].job_id')" = x1 ] || fail "B does not see A's write-back"
[ "$(body_get .estimate.duration_s)" = 5000 ] || fail "B's estimate"
# Another writer adds a record: both see it.
expect_rc 0 $S history add --db "$R" --id x2 --duration 7000 --meta $D/llama13b_alpaca.json
wait_count "$A" 52
wait_count "$B" 52
expect_http 200 "$A" /v1/advise -d "{\"metadata\":$(cat $D/llama13b_alpaca.json)}"
[ "$(body_get .estimate.duration_s)" = 6000 ] || fail "A: mean of x1 and x2"
# Another writer replaces a record: a reload.
expect_rc 0 $S history add --db "$R" --id x1 --duration 9000 --meta $D/llama13b_alpaca.json
for _ in $(seq 1 100); do
  hcurl "$B" /v1/advise -d "{\"metadata\":$(cat $D/llama13b_alpaca.json)}" >/dev/null
  [ "$(body_get .estimate.duration_s)" = 8000 ] && break
  sleep 0.1
done
[ "$(body_get .estimate.duration_s)" = 8000 ] || fail "B did not take the replaced record: $(body_get .estimate.duration_s)"
expect_http 200 "$B" /metrics
grep -Eq '^schedmate_serve_history_reloads_total [1-9]' "$SM_TMP/body" || fail "no reload counted"
grep -Eq '^schedmate_serve_history_synced_total [1-9]' "$SM_TMP/body" || fail "no synced record counted"
# A's own replacing write-back is not taken for another writer's.  A
# must have taken the other writer's replacement first (its sync runs on
# its own clock: under load it may not have yet), or that reload would be
# counted against A's own write.
for _ in $(seq 1 100); do
  hcurl "$A" /v1/advise -d "{\"metadata\":$(cat $D/llama13b_alpaca.json)}" >/dev/null
  [ "$(body_get .estimate.duration_s)" = 8000 ] && break
  sleep 0.1
done
[ "$(body_get .estimate.duration_s)" = 8000 ] || fail "A did not take the replaced record: $(body_get .estimate.duration_s)"
expect_http 201 "$A" /v1/jobs -d "{\"id\":\"x2\",\"metadata\":$(cat $D/llama13b_alpaca.json)}"
expect_http 200 "$A" /v1/jobs/x2/end -d '{"end_state":"completed","duration_s":7000}'
hcurl "$A" /metrics >/dev/null
before=$(sed -n 's/^schedmate_serve_history_reloads_total //p' "$SM_TMP/body")
sleep 1
hcurl "$A" /metrics >/dev/null
after=$(sed -n 's/^schedmate_serve_history_reloads_total //p' "$SM_TMP/body")
[ "$before" = "$after" ] || fail "A reloaded after its own write ($before -> $after)"
serve_stop a
serve_stop b
cleanup_redis
echo "ok: replicas"
