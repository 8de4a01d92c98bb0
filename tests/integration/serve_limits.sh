# Back-pressure and deadlines of schedmate serve, and /metrics checked by
# promtool: a client over its rate gets 429 with Retry-After; a submit
# request past --advise-deadline-ms gets a fallback with reason
# "deadline"; a write-back that cannot commit (another process holds the
# SQLite file's write lock) is not acknowledged (503 at its deadline, or
# history_unavailable), the exit queue fills (503 queue_full with
# Retry-After), and once the lock is gone the same write-back commits.
# The Prometheus text is then checked with `promtool check metrics`
# (skipped, exit 77, where Debian's prometheus package is missing).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
D=tests/data/history
DB="$SM_TMP/h.db"
ROOT="$SM_TMP/root"
mkdir -p "$ROOT/big"
expect_rc 0 $S history add --db "$DB" --id a1 --duration 3000 --meta $D/llama7b_alpaca.json
# A repository whose extraction takes milliseconds: one large script.
{
  echo 'import argparse'
  echo 'parser = argparse.ArgumentParser()'
  echo 'parser.add_argument("--model", default="bert-base")'
  for i in $(seq 1 3000); do
    echo "def step_$i(x, y=$i):"
    echo "    return [v * y + $i for v in x if v % 7 != $((i % 7))]"
  done
} > "$ROOT/big/train.py"

# ---- rate limit: a bucket of 3, one token a second ----
serve_start rl --db "$DB" --socket "$SM_TMP/rl.sock" --rate 1 --burst 3
codes=""
for i in 1 2 3 4; do
  codes="$codes $(hcurl "unix:$SM_TMP/rl.sock" /v1/advise -d "{\"metadata\":$(cat $D/llama7b_alpaca.json)}")"
done
[ "$codes" = " 200 200 200 429" ] || fail "rate limit: $codes"
[ "$(body_get .error)" = rate_limited ] || fail "429 body"
grep -qi '^Retry-After: [1-9]' "$SM_TMP/headers" || fail "429 without Retry-After"
expect_http 200 "unix:$SM_TMP/rl.sock" /healthz   # not rate-limited
expect_http 200 "unix:$SM_TMP/rl.sock" /metrics
grep -q '^schedmate_serve_rate_limited_total 1$' "$SM_TMP/body" || fail "rate limited not counted"
grep -q '^schedmate_serve_requests_total{endpoint="advise",code="429"} 1$' "$SM_TMP/body" || fail "requests by code"
cp "$SM_TMP/body" "$SM_TMP/metrics-rl.txt"
serve_stop rl

serve_start lim --db "$DB" --socket "$SM_TMP/s.sock" --allow-root "$ROOT" \
  --rate 0 --advise-deadline-ms 1 --deadline-ms 700 \
  --workers submit=1 --workers exit=1 --queue exit=1 --audit "$SM_TMP/audit.jsonl"
U="unix:$SM_TMP/s.sock"

# ---- the submit deadline: a fallback, not an error ----
expect_http 200 "$U" /v1/advise -d "{\"repo\":\"$ROOT/big\",\"command\":[\"python\",\"train.py\"]}"
[ "$(body_get .fallback_reason)" = deadline ] || fail "no deadline fallback: $(body_get .fallback_reason)"
[ "$(body_get .fallback)" = true ] || fail "deadline: fallback flag"
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"j1\",\"repo\":\"$ROOT/big\",\"command\":[\"python\",\"train.py\"]}"
[ "$(body_get .advice.fallback_reason)" = deadline ] || fail "registration: no deadline fallback"
for _ in $(seq 1 100); do
  expect_http 200 "$U" /v1/jobs/j1
  [ "$(body_get .metadata.model_name)" = bert-base ] && break
  sleep 0.1
done
[ "$(body_get .said.fallback_reason)" = deadline ] || fail "the job keeps what was said"
[ "$(body_get .metadata.model_name)" = bert-base ] || fail "the late extraction still fills the job's metadata"

# ---- a write-back that cannot commit, and a full exit queue ----
expect_http 201 "$U" /v1/jobs -d '{"id":"j2","metadata":{"model_name":"bert-base"}}'
python3 - "$DB" "$SM_TMP/locked" <<'EOF' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(4)
c.execute("ROLLBACK")
EOF
LOCKER=$!
for _ in $(seq 1 100); do [ -e "$SM_TMP/locked" ] && break; sleep 0.05; done
[ -e "$SM_TMP/locked" ] || fail "could not lock the database"
hcurl "$U" /v1/jobs/j1/end -d '{"end_state":"completed","duration_s":100}' > "$SM_TMP/c1" &
P1=$!
sleep 0.2
hcurl "$U" /v1/jobs/j2/end -d '{"end_state":"completed","duration_s":100}' > "$SM_TMP/c2" &
P2=$!
sleep 0.2
code=$(hcurl "$U" /v1/diagnose -d '{"log":"/nonexistent"}')
[ "$code" = 503 ] || fail "third exit request: HTTP $code, expected 503"
[ "$(body_get .error)" = queue_full ] || fail "503 body: $(body_get .error)"
grep -qi '^Retry-After: 1' "$SM_TMP/headers" || fail "503 without Retry-After"
wait $P1 $P2
[ "$(cat "$SM_TMP/c1")" = 503 ] || fail "locked write-back 1: HTTP $(cat "$SM_TMP/c1")"
[ "$(cat "$SM_TMP/c2")" = 503 ] || fail "locked write-back 2: HTTP $(cat "$SM_TMP/c2")"
wait $LOCKER
expect_http 200 "$U" /v1/jobs/j1/end -d '{"end_state":"completed","duration_s":100}'
[ "$(body_get .committed)" = true ] || fail "the retried write-back did not commit"
expect_http 200 "$U" /v1/jobs/j2/end -d '{"end_state":"completed","duration_s":100}'
expect_rc 0 $S history show --db "$DB" j1
expect_rc 0 $S history show --db "$DB" j2

# ---- the counters ----
expect_http 200 "$U" /metrics
cp "$SM_TMP/body" "$SM_TMP/metrics.txt"
M="$SM_TMP/metrics.txt"
grep -Eq '^schedmate_serve_fallbacks_total\{reason="deadline"\} [2-9]$' "$M" || fail "deadline fallbacks"
grep -q '^schedmate_serve_queue_full_total{channel="exit"} 1$' "$M" || fail "queue full"
grep -Eq '^schedmate_serve_deadline_exceeded_total\{channel="exit"\} [1-9]' "$M" || fail "exit deadline"
grep -Eq '^schedmate_serve_deadline_exceeded_total\{channel="submit"\} [2-9]$' "$M" || fail "submit deadline"
grep -q '^schedmate_serve_writebacks_total{result="committed"} 2$' "$M" || fail "write-backs"
grep -Eq '^schedmate_serve_request_duration_seconds_count\{endpoint="advise"\} [1-9]' "$M" || fail "latency histogram"
grep -q '^schedmate_serve_queue_capacity{channel="exit"} 1$' "$M" || fail "queue capacity"
grep -q '^schedmate_serve_history_records 3$' "$M" || fail "history size"
grep -q '"fallback_reason":"deadline"' "$SM_TMP/audit.jsonl" || fail "deadline not audited"
jq -se 'map(select(.late == true)) | length >= 3' "$SM_TMP/audit.jsonl" >/dev/null || fail "late answers not audited"
serve_stop lim

P=$(command -v promtool || true)
[ -n "$P" ] || skip "promtool not installed (scripts/deps.sh --test installs prometheus); the rest passed"
for m in "$M" "$SM_TMP/metrics-rl.txt"; do
  "$P" check metrics < "$m" > "$SM_TMP/promtool.out" 2>&1 || { cat "$SM_TMP/promtool.out"; fail "promtool check metrics"; }
done
echo "ok: limits, deadlines, promtool"
