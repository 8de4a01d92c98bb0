# schedmate serve on a UNIX socket and on 127.0.0.1 (a free port): every
# endpoint driven with curl, the answers compared with the command's own
# (advise, track, diagnose give the same JSON through the service), the
# job cycle (register, progress, end, write-back seen by the next advice
# without a restart), and the errors: bad JSON, wrong types, deep nesting,
# oversized bodies, paths outside the allowed roots (also through a
# symbolic link), relative paths, unreadable logs, wrong or missing
# token, unknown job, unknown endpoint, wrong method.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
D=tests/data/history
DB="$SM_TMP/h.db"
ROOT="$SM_TMP/root"
mkdir -p "$ROOT/logs" "$ROOT/proj"
# A small repository of our own and two logs.
cat > "$ROOT/proj/train.py" <<'EOF'
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="resnet50")
parser.add_argument("--epochs", type=int, default=90)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--data", default="/datasets/imagenet")
args = parser.parse_args()
EOF
cp data/examples/train.log "$ROOT/logs/run.log"
cp data/examples/failed_ecc.log "$ROOT/logs/ecc.log"
ln -s /etc/passwd "$ROOT/logs/escape.log"
head -c 3000 /dev/urandom > "$ROOT/logs/binary.log"
for i in 1 2 3; do
  expect_rc 0 $S history add --db "$DB" --id "a$i" --duration $((3000 + 200 * i)) --sm-util 70 --meta $D/llama7b_alpaca.json
done
expect_rc 0 $S history add --db "$DB" --id b1 --duration 9000 --meta $D/llama13b_alpaca.json
head -c 48 /dev/urandom | base64 | tr -d '\n/+=' > "$SM_TMP/token"
chmod 600 "$SM_TMP/token"
TOK=$(cat "$SM_TMP/token")
AUTH=(-H "Authorization: Bearer $TOK")
serve_start api --db "$DB" --socket "$SM_TMP/s.sock" --listen 127.0.0.1:0 \
  --token-file "$SM_TMP/token" --allow-root "$ROOT" --audit "$SM_TMP/audit.jsonl" \
  --max-body 65536 --max-depth 8 --rate 0
U=$(serve_addr api 1)
T=$(serve_addr api 2)
case "$U" in unix:*) ;; *) fail "first address $U is not the socket" ;; esac
case "$T" in http://127.0.0.1:*) ;; *) fail "second address $T is not loopback TCP" ;; esac
[ "$(stat -c %a "$SM_TMP/s.sock")" = 660 ] || fail "socket mode is not 0660"

# ---- health, metrics, authentication ----
expect_http 200 "$U" /healthz
[ "$(body_get .status)" = ok ] || fail "healthz status"
[ "$(body_get .history_records)" = 4 ] || fail "healthz history_records"
expect_http 200 "$T" /healthz                      # no token needed
expect_http 401 "$T" /metrics
grep -qi '^WWW-Authenticate: Bearer' "$SM_TMP/headers" || fail "401 without WWW-Authenticate"
[ "$(body_get .error)" = unauthorized ] || fail "401 body"
expect_http 401 "$T" /metrics -H "Authorization: Bearer wrong-token-wrong-token"
expect_http 401 "$T" /v1/advise -H "Authorization: Bearer ${TOK}x" -d '{}'
expect_http 401 "$T" /v1/advise -H "Authorization: Basic $TOK" -d '{}'
expect_http 200 "$T" /metrics "${AUTH[@]}"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$SM_TMP/headers" || fail "metrics content type"
grep -q '^schedmate_serve_history_records 4$' "$SM_TMP/body" || fail "metrics history size"
expect_http 200 "$U" /metrics                      # the socket needs none

# ---- advise: the same answer as the command ----
expect_rc 0 $S advise --json --db "$DB" --meta $D/llama7b_alpaca.json
jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out" > "$SM_TMP/cli_advise.json"
expect_http 200 "$U" /v1/advise -d "{\"metadata\":$(cat $D/llama7b_alpaca.json)}"
jq -c 'del(.elapsed_ms)' "$SM_TMP/body" > "$SM_TMP/srv_advise.json"
diff "$SM_TMP/cli_advise.json" "$SM_TMP/srv_advise.json" || fail "service and command advise differ"
[ "$(body_get .estimate.n)" = 3 ] || fail "estimate over 3 completed matches"
expect_http 200 "$T" /v1/advise "${AUTH[@]}" -d "{\"metadata\":$(cat $D/llama7b_alpaca.json)}"
[ "$(body_get .estimate.duration_s)" = 3400 ] || fail "TCP advise"
# From a repository and a command, as `advise --repo` does.
expect_rc 0 $S advise --json --db "$DB" --repo "$ROOT/proj" -- python train.py --epochs 10
jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out" > "$SM_TMP/cli_repo.json"
expect_http 200 "$U" /v1/advise -d "{\"repo\":\"$ROOT/proj\",\"command\":[\"python\",\"train.py\",\"--epochs\",\"10\"]}"
jq -c 'del(.elapsed_ms)' "$SM_TMP/body" > "$SM_TMP/srv_repo.json"
diff "$SM_TMP/cli_repo.json" "$SM_TMP/srv_repo.json" || fail "advise from a repository differs"
# --server gives the command's own output.
expect_rc 0 $S advise --json --server "$U" --meta $D/llama7b_alpaca.json
diff "$SM_TMP/cli_advise.json" <(jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out") || fail "advise --server differs"
expect_rc 0 $S advise --server "$U" --meta $D/llama7b_alpaca.json
grep -q '^estimate: 3400 s' "$SM_TMP/last.out" || fail "advise --server text"
SCHEDMATE_TOKEN_FILE="$SM_TMP/token" expect_rc 0 $S advise --json --server "$T" --repo "$ROOT/proj" -- python train.py --epochs 10
diff "$SM_TMP/cli_repo.json" <(jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out") || fail "advise --server over TCP differs"
expect_rc 2 $S advise --json --server "$T" --meta $D/llama7b_alpaca.json
grep -q "401" "$SM_TMP/last.err" || fail "advise --server without a token: no 401 message"

# ---- bad requests ----
expect_http 400 "$U" /v1/advise -d '{"metadata":'
[ "$(body_get .error)" = bad_json ] || fail "bad JSON"
expect_http 400 "$U" /v1/advise -d '[1,2,3]'
[ "$(body_get .error)" = bad_json ] || fail "not an object"
expect_http 400 "$U" /v1/advise -X POST
expect_http 400 "$U" /v1/advise -d '{"repo":"'"$ROOT/proj"'","command":"python train.py"}'
[ "$(body_get .error)" = bad_request ] || fail "command as a string"
expect_http 400 "$U" /v1/advise -d '{"metadata":{"gpus":"eight"}}'
expect_http 400 "$U" /v1/advise -d '{"metadata":{"model_name":"x"},"repo":"'"$ROOT/proj"'","command":["a"]}'
expect_http 400 "$U" /v1/advise -d '{"repo":"proj","command":["python","train.py"]}'
grep -q 'absolute' "$SM_TMP/body" || fail "relative repo path"
deep=$(printf '%.0s[' $(seq 1 200))
expect_http 400 "$U" /v1/advise -d "{\"metadata\":$deep"
[ "$(body_get .error)" = too_deep ] || fail "deep nesting"
printf '{"metadata":{"model_name":"\xff\xfe\xc3"}}' > "$SM_TMP/utf8.json"
code=$(hcurl "$U" /v1/advise --data-binary @"$SM_TMP/utf8.json")
[ "$code" = 200 ] || [ "$code" = 400 ] || fail "invalid UTF-8: HTTP $code"
jq -e . "$SM_TMP/body" >/dev/null || fail "invalid UTF-8 answer is not JSON"
head -c 2000 /dev/urandom > "$SM_TMP/junk"
code=$(hcurl "$U" /v1/advise --data-binary @"$SM_TMP/junk")
[ "$code" = 400 ] || fail "binary body: HTTP $code"
head -c 200000 /dev/zero | tr '\0' ' ' > "$SM_TMP/big"
expect_http 413 "$U" /v1/advise --data-binary @"$SM_TMP/big"
[ "$(body_get .error)" = body_too_large ] || fail "413 body"
expect_http 413 "$U" /v1/advise -H 'Transfer-Encoding: chunked' --data-binary @"$SM_TMP/big"
expect_http 413 "$T" /v1/advise "${AUTH[@]}" --data-binary @"$SM_TMP/big"
expect_http 404 "$U" /v2/advise -d '{}'
[ "$(body_get .error)" = not_found ] || fail "404 body"
expect_http 405 "$U" /v1/advise
grep -qi '^Allow: POST' "$SM_TMP/headers" || fail "405 without Allow"
expect_http 405 "$U" /healthz -d '{}'

# ---- outside the allowed roots: 403, logged, audited ----
expect_http 403 "$U" /v1/advise -d '{"repo":"/etc","command":["python","x.py"]}'
[ "$(body_get .error)" = forbidden ] || fail "403 body"
expect_http 403 "$U" /v1/diagnose -d '{"log":"/etc/passwd"}'
expect_http 403 "$U" /v1/diagnose -d "{\"log\":\"$ROOT/logs/escape.log\"}"
grep -q 'outside the allowed roots' "$SM_TMP/body" || fail "symlink out of the root"
expect_http 403 "$U" /v1/track -d "{\"log\":\"$ROOT/../../../../../../../../../etc/passwd\"}"
expect_http 403 "$U" /v1/advise -d "{\"repo\":\"$ROOT/..\",\"command\":[\"python\",\"x.py\"]}"
grep -q '403 diagnose .*outside the allowed roots' "$SM_TMP/api.log" || fail "403 not logged"
grep -q '"status":403' "$SM_TMP/audit.jsonl" || fail "403 not audited"
expect_http 422 "$U" /v1/track -d "{\"log\":\"$ROOT/logs/missing.log\"}"
[ "$(body_get .error)" = unreadable ] || fail "missing log"
expect_http 422 "$U" /v1/diagnose -d "{\"log\":\"$ROOT/logs\"}"
expect_http 422 "$U" /v1/diagnose -d "{\"log\":\"$ROOT/logs/binary.log\"}"
grep -q 'binary.log' "$SM_TMP/body" || fail "the message names the log the client gave"

# ---- track and diagnose: the command's answers ----
expect_rc 0 $S track --json "$ROOT/logs/run.log"
cp "$SM_TMP/last.out" "$SM_TMP/cli_track.json"
expect_http 200 "$U" /v1/track -d "{\"log\":\"$ROOT/logs/run.log\"}"
diff <(jq -cS . "$SM_TMP/cli_track.json") <(jq -cS . "$SM_TMP/body") || fail "track differs"
expect_rc 0 $S track --json --server "$U" "$ROOT/logs/run.log"
diff <(jq -cS . "$SM_TMP/cli_track.json") <(jq -cS . "$SM_TMP/last.out") || fail "track --server differs"
expect_rc 1 $S diagnose --json "$ROOT/logs/ecc.log"
cp "$SM_TMP/last.out" "$SM_TMP/cli_diag.json"
expect_http 200 "$U" /v1/diagnose -d "{\"log\":\"$ROOT/logs/ecc.log\"}"
diff <(jq -cS . "$SM_TMP/cli_diag.json") <(jq -cS . "$SM_TMP/body") || fail "diagnose differs"
expect_rc 1 $S diagnose --json --server "$U" "$ROOT/logs/ecc.log"
diff <(jq -cS . "$SM_TMP/cli_diag.json") <(jq -cS . "$SM_TMP/last.out") || fail "diagnose --server differs"
expect_rc 1 $S diagnose --server "$U" "$ROOT/logs/ecc.log"
grep -q 'category:    infrastructure / gpu' "$SM_TMP/last.out" || fail "diagnose --server text"
expect_rc 0 $S diagnose --server "$U" "$ROOT/logs/run.log"

# ---- a job's life: register, progress, end ----
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"k8s:ns/r50-1\",\"repo\":\"$ROOT/proj\",\"command\":[\"python\",\"train.py\"],\"log\":\"$ROOT/logs/run.log\",\"gpus\":8,\"nodes\":[\"n1\",\"n2\"],\"user\":\"ada\",\"scheduler\":\"k8s\"}"
[ "$(body_get .registered)" = true ] || fail "registered"
[ "$(body_get .advice.fallback_reason)" = below_threshold ] || fail "no similar history yet: $(body_get .advice.fallback_reason)"
[ "$(body_get .advice.metadata.gpus)" = 8 ] || fail "the request's GPUs win"
[ "$(body_get .advice.evidence.gpus)" = request:gpus ] || fail "evidence of the GPUs"
expect_http 200 "$U" /v1/jobs/k8s:ns/r50-1
[ "$(body_get .said.fallback_reason)" = below_threshold ] || fail "job: what was said"
[ "$(body_get '.nodes|join(",")')" = n1,n2 ] || fail "job: nodes"
expect_http 200 "$U" /v1/jobs/k8s:ns/r50-1/progress
diff <(jq -cS . "$SM_TMP/cli_track.json") <(jq -cS . "$SM_TMP/body") || fail "progress differs from track"
step0=$(body_get .step)
# The log grows: the next answer reads only what was appended.
for k in $(seq 1 12); do
  printf '\r 41%%|####      | %d/3088 [18:%02d<25:00,  0.85s/it]' $((step0 + 3 * k)) $((2 + k))
done >> "$ROOT/logs/run.log"
echo >> "$ROOT/logs/run.log"
expect_http 200 "$U" /v1/jobs/k8s:ns/r50-1/progress
[ "$(body_get .step)" -gt "$step0" ] || fail "progress did not follow the log ($(body_get .step))"
expect_rc 0 $S track --json --server "$U" --job k8s:ns/r50-1
[ "$(jget "$SM_TMP/last.out" .step)" -gt "$step0" ] || fail "track --job"
expect_http 404 "$U" /v1/jobs/nope/progress
[ "$(body_get .error)" = unknown_job ] || fail "unknown job"
expect_http 404 "$U" /v1/jobs/nope/end -d '{"end_state":"completed","duration_s":1}'
expect_http 404 "$U" /v1/jobs/nope
expect_http 404 "$U" '/v1/jobs/..%2Fx/end' -d '{}'
expect_http 400 "$U" /v1/jobs -d '{"repo":"x"}'
expect_http 400 "$U" /v1/jobs -d '{"id":"../etc"}'
expect_http 400 "$U" /v1/jobs -d '{"id":"ok","log":"relative.log"}'
expect_http 400 "$U" /v1/jobs/k8s:ns/r50-1/end -d '{"end_state":"exploded","duration_s":1}'
expect_http 400 "$U" /v1/jobs/k8s:ns/r50-1/end -d '{"end_state":"completed"}'
expect_http 400 "$U" /v1/jobs/k8s:ns/r50-1/end -d '{"end_state":"completed","duration_s":10,"sm_util":180}'
expect_http 200 "$U" /v1/jobs/k8s:ns/r50-1/end -d '{"end_state":"completed","duration_s":5400,"sm_util":61,"state":"Succeeded","exit_code":0}'
[ "$(body_get .committed)" = true ] || fail "not committed"
[ "$(body_get .history_records)" = 5 ] || fail "the index did not grow"
expect_http 200 "$U" /v1/jobs/k8s:ns/r50-1/end -d '{"end_state":"completed","duration_s":5400}'
[ "$(body_get .duplicate)" = true ] || fail "a repeated write-back is a duplicate"
expect_http 404 "$U" /v1/jobs/k8s:ns/r50-1/progress
expect_rc 0 $S history show --json --db "$DB" k8s:ns/r50-1
R="$SM_TMP/last.out"
[ "$(jget "$R" .duration_s)" = 5400 ] || fail "record duration"
[ "$(jget "$R" .end_state)" = completed ] || fail "record end state"
[ "$(jget "$R" .outcome.scheduler)" = k8s ] || fail "outcome scheduler"
[ "$(jget "$R" .outcome.advice.fallback_reason)" = below_threshold ] || fail "outcome: what was said"
[ "$(jget "$R" .outcome.progress.status)" = ok ] || fail "outcome: last progress"
[ "$(jget "$R" .outcome.gpus)" = 8 ] || fail "outcome: GPUs"
# The next similar job is estimated from it, without a restart.
expect_http 200 "$U" /v1/advise -d "{\"repo\":\"$ROOT/proj\",\"command\":[\"python\",\"train.py\"],\"gpus\":8,\"nodes\":2}"
[ "$(body_get .estimate.duration_s)" = 5400 ] || fail "write-back not in the index: $(body_get .fallback_reason)"
[ "$(body_get '.matches[0].job_id')" = k8s:ns/r50-1 ] || fail "match"
# A failed job whose cause the scheduler does not give is diagnosed.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"k8s:ns/ecc-1\",\"metadata\":$(cat $D/llama13b_alpaca.json),\"log\":\"$ROOT/logs/ecc.log\",\"gpus\":4}"
[ "$(body_get .advice.estimate.duration_s)" = 9000 ] || fail "estimate at registration"
expect_http 200 "$U" /v1/jobs/k8s:ns/ecc-1/end -d '{"end_state":"failed","duration_s":1200}'
[ "$(body_get .end_state)" = failed_infra ] || fail "diagnosed end state: $(body_get .end_state)"
[ "$(body_get .diagnosed_by)" = schedmate ] || fail "diagnosed_by"
expect_rc 0 $S history show --json --db "$DB" k8s:ns/ecc-1
[ "$(jget "$SM_TMP/last.out" .outcome.diagnosis.component)" = gpu ] || fail "record diagnosis"
[ "$(jget "$SM_TMP/last.out" .outcome.estimate_s)" = 9000 ] || fail "record estimate"
# A job without a log.
expect_http 201 "$U" /v1/jobs -d '{"id":"nolog","metadata":{"model_name":"bert-base"}}'
expect_http 409 "$U" /v1/jobs/nolog/progress
[ "$(body_get .error)" = no_log ] || fail "no_log"

# ---- the audit ----
n=$(grep -c '"service":"serve"' "$SM_TMP/audit.jsonl")
[ "$n" -ge 40 ] || fail "audit lines: $n"
jq -se 'map(select(.endpoint=="end" and .decision=="record")) | length == 2 and all(.latency_ms >= 0)' "$SM_TMP/audit.jsonl" >/dev/null || fail "audit: write-back"
jq -se 'map(select(.channel=="submit")) | length > 5' "$SM_TMP/audit.jsonl" >/dev/null || fail "audit: submit channel"

serve_stop api
[ ! -e "$SM_TMP/s.sock" ] || fail "socket file left behind"
# A second server refuses a socket a live one holds; a stale file is fine.
serve_start one --db "$DB" --socket "$SM_TMP/s2.sock"
expect_rc 2 $S serve --db "$DB" --socket "$SM_TMP/s2.sock"
grep -q "another process is listening" "$SM_TMP/last.err" || fail "live socket"
serve_kill one
[ -S "$SM_TMP/s2.sock" ] || fail "kill -9 should leave the socket file"
serve_start two --db "$DB" --socket "$SM_TMP/s2.sock"
expect_http 200 "unix:$SM_TMP/s2.sock" /healthz
[ "$(body_get .history_records)" = 6 ] || fail "restart reloads the index"
serve_stop two
# Bad usage.
expect_rc 2 $S serve --socket "$SM_TMP/x.sock"
expect_rc 2 $S serve --db "$DB" --listen 127.0.0.1:0
grep -q token-file "$SM_TMP/last.err" || fail "--listen without a token"
printf 'short\n' > "$SM_TMP/short"
expect_rc 2 $S serve --db "$DB" --listen 127.0.0.1:0 --token-file "$SM_TMP/short"
expect_rc 2 $S serve --db "$DB" --socket "$SM_TMP/x.sock" --allow-root "$SM_TMP/none"
expect_rc 2 $S serve --db "$DB" --socket "$SM_TMP/x.sock" --queue fast=3
expect_rc 2 $S serve --db mem: --socket "$SM_TMP/x.sock"
expect_rc 0 $S serve --help
echo "ok: serve API"
