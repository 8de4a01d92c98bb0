# The LLM stages through `schedmate serve` against the replay server
# (tests/llm/replay.py): an advice whose extraction leaves fields null is
# filled with verified values (provenance "llm", the cited evidence) and
# estimated from them, as `advise --llm` does; a job given by metadata
# asks nothing; the Tracker stage reads a progress format the parser does
# not know (POST /v1/track and a followed job's progress); the Failure
# Handler's verdict is shown but never planned on (POST /v1/diagnose and
# the write-back's diagnosis); /metrics carries the client's counters and
# passes promtool.  A slow model never makes an answer late: the stage is
# cut before the request's deadline and the deterministic answer goes
# out; a second request that would need the model while the only LLM slot
# is taken is answered at once without it ("busy"), and advice that needs
# no model is not held up.  Without --llm nothing connects anywhere.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
# Both libraries stop what they started.
trap 'serve_cleanup; llm_stop' EXIT
S=$SCHEDMATE
R=$SM_TMP/rules.json
ROOT=$SM_TMP/root
mkdir -p "$ROOT/logs"
cp -r "$(dirname "$0")/../llm/repo_basic" "$ROOT/repo"
REPO=$ROOT/repo
DB=$SM_TMP/h.db

# Logs: a progress format the parser does not know, an error the
# signatures do not know (written here, as the llm tests do).
TLOG=$ROOT/logs/run.log
{
  echo "2024-05-01T10:00:00 rank0 booting worker pool (8 ranks)"
  for i in 1 2 3 4 5 6; do
    echo "2024-05-01T10:00:0$i rank0 >> progress 12$i ~ 5000 :: obj 2.34$i :: wall 0.41$i"
  done
} >"$TLOG"
FLOG=$ROOT/logs/fail.log
{
  for i in $(seq 1 300); do echo "step $i/1000 loss 7.$i"; done
  echo "terminate called after throwing an instance of 'flux::LockLost'"
  echo "  what():  regulator lost lock on tile 14"
  for i in $(seq 1 300); do echo "launcher: worker $i exited"; done
} >"$FLOG"

# One rule file for the three stages.
cat >"$R" <<'EOF'
[
 {"last": "Find these fields",
  "content": "{\"action\": \"read\", \"path\": \"configs/base.yaml\"}"},
 {"last": "Lines 1.. of configs/base.yaml",
  "content": "{\"action\": \"answer\", \"fields\": {\"model_name\": {\"value\": \"resnet50\", \"evidence\": \"configs/base.yaml:3\"}, \"dataset\": {\"value\": \"imagenet\", \"evidence\": \"configs/base.yaml:5\"}, \"per_device_batch_size\": {\"value\": 64, \"evidence\": \"configs/base.yaml:6\"}, \"lr\": {\"value\": 0.0004, \"evidence\": \"configs/base.yaml:8\"}, \"task\": {\"value\": \"image_classification\", \"evidence\": \"configs/base.yaml:5\"}, \"domain\": {\"value\": \"cv\", \"evidence\": \"trainer.py:17\"}, \"seq_len\": null}}"},
 {"last": ["1: 2024-05-01T10:00:01 rank0 >> progress 121", "6: 2024-05-01T10:00:06 rank0 >> progress 126"],
  "content": "{\"samples\": [{\"line\": 5, \"step\": 125, \"total_steps\": 5000, \"loss\": 2.345, \"step_time_s\": 0.415}, {\"line\": 6, \"step\": 126, \"total_steps\": 5000, \"loss\": 2.346, \"step_time_s\": 0.416}]}"},
 {"last": ["SchedMate located the first error at line 301", "301: terminate called after throwing"],
  "content": "{\"category\": \"infrastructure\", \"component\": \"gpu\", \"root_cause\": \"The flux regulator of a GPU tile lost lock.\", \"evidence\": [{\"line\": 301, \"quote\": \"throwing an instance of 'flux::LockLost'\"}, {\"line\": 302, \"quote\": \"regulator lost lock on tile 14\"}]}"}
]
EOF
llm_start "$R"

# The history: three past runs of what the verified answer says the job
# is (the static extraction alone knows too little to match).
expect_rc 0 $S extract --json --repo "$REPO" --llm "$LLM_URL" -- python train.py
jq '.metadata' "$SM_TMP/last.out" >"$SM_TMP/filled.json"
jq -e '.model_name == "resnet50" and .dataset == "imagenet-1k"' "$SM_TMP/filled.json" >/dev/null ||
  fail "fixture: the extract stage did not fill: $(cat "$SM_TMP/filled.json")"
for i in 1 2 3; do
  expect_rc 0 $S history add --db "$DB" --id "r50-$i" --duration $((3000 + 100 * i)) \
    --sm-util 70 --meta "$SM_TMP/filled.json"
done
expect_rc 0 $S advise --json --db "$DB" --repo "$REPO" -- python train.py
jq -e '.fallback == true and .metadata.model_name == null' "$SM_TMP/last.out" >/dev/null ||
  fail "fixture: without the model the job should not be estimated"

serve_start llm --db "$DB" --socket "$SM_TMP/s.sock" --allow-root "$ROOT" \
  --rate 0 --llm "$LLM_URL" --llm-model replay --llm-context 50 \
  --advise-deadline-ms 8000 --audit "$SM_TMP/audit.jsonl"
U=$(serve_addr llm)
grep -q "LLM stage on: $LLM_URL" "$SM_TMP/llm.log" || fail "no start line for the LLM stage"
expect_http 200 "$U" /healthz
[ "$(body_get .llm)" = true ] || fail "healthz: llm"

# ---- Advisor: a null field filled with verified evidence.
n0=$(llm_requests)
ADV="{\"repo\":\"$REPO\",\"command\":[\"python\",\"train.py\"]}"
expect_http 200 "$U" /v1/advise -d "$ADV"
cp "$SM_TMP/body" "$SM_TMP/adv.json"
jq -e '.metadata.model_name == "resnet50" and .metadata.lr == 0.0004 and
       .metadata.dataset == "imagenet-1k" and
       .evidence.lr == "configs/base.yaml:8" and .provenance.lr == "llm" and
       .provenance.iterations == "static" and .llm.verified == 6 and
       .llm.dropped == 0 and .llm.tool_calls == 1 and
       .fallback == false and .estimate.n == 3 and
       .llm_stats.advisor.used >= 1' "$SM_TMP/adv.json" >/dev/null ||
  fail "advise: $(jq -c '{metadata, provenance, llm, fallback_reason, fallback_detail}' "$SM_TMP/adv.json")"
[ $(( $(llm_requests) - n0 )) = 2 ] || fail "advise: expected 2 model requests, got $(( $(llm_requests) - n0 ))"
# The command's own answer, but for timings and the service's counters.
expect_rc 0 $S advise --json --db "$DB" --repo "$REPO" --llm "$LLM_URL" --llm-model replay -- python train.py
strip='del(.elapsed_ms, .llm_stats, .llm.elapsed_ms)'
diff <(jq -S "$strip" "$SM_TMP/last.out") <(jq -S "$strip" "$SM_TMP/adv.json") ||
  fail "serve's advice with the LLM stage differs from the command's"
# Registration: the job keeps the verified metadata for its write-back.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"llm-1\",\"repo\":\"$REPO\",\"command\":[\"python\",\"train.py\"],\"log\":\"$TLOG\"}"
[ "$(body_get .advice.provenance.model_name)" = llm ] || fail "registration: no LLM stage"
expect_http 200 "$U" /v1/jobs/llm-1
[ "$(body_get .metadata.model_name)" = resnet50 ] || fail "job metadata: $(body_get .metadata)"

# Metadata given: the stage asks nothing (as `advise --meta --llm`).
n0=$(llm_requests)
expect_http 200 "$U" /v1/advise -d "{\"metadata\":$(cat "$SM_TMP/filled.json")}"
jq -e '(has("llm") | not) and (has("provenance") | not) and has("llm_stats") and
       .fallback == false' "$SM_TMP/body" >/dev/null || fail "metadata advice: $(head -c 400 "$SM_TMP/body")"
[ "$(llm_requests)" = "$n0" ] || fail "metadata advice asked the model"

# ---- Tracker: a format the parser does not know.
expect_http 200 "$U" /v1/track -d "{\"log\":\"$TLOG\"}"
jq -e '.status == "ok" and .step == 126 and .total_steps == 5000 and
       .step_time_source == "llm" and .llm.used and .llm.verified == 8' \
  "$SM_TMP/body" >/dev/null || fail "track: $(jq -c . "$SM_TMP/body")"
expect_http 200 "$U" /v1/jobs/llm-1/progress
jq -e '.status == "ok" and .step == 126 and .llm.used' "$SM_TMP/body" >/dev/null ||
  fail "progress: $(jq -c . "$SM_TMP/body")"
expect_rc 0 $S track --json --llm "$LLM_URL" "$TLOG"
diff <(jq -S "$strip" "$SM_TMP/last.out") <(jq -S "$strip" "$SM_TMP/body") ||
  fail "serve's progress differs from the command's"

# ---- Failure Handler: shown, never planned on.
expect_http 200 "$U" /v1/diagnose -d "{\"log\":\"$FLOG\"}"
cp "$SM_TMP/body" "$SM_TMP/diag.json"
jq -e '.category == "infrastructure" and .component == "gpu" and
       .provenance.category == "llm" and .provenance.plan == "static" and
       .llm.verified and (.llm.evidence_lines == [301, 302]) and
       (.actions | index("isolate_node") | not) and .llm.context == [251, 351]' \
  "$SM_TMP/diag.json" >/dev/null ||
  fail "diagnose: $(jq -c '[.category,.component,.actions,.provenance,.llm]' "$SM_TMP/diag.json")"
expect_rc 1 $S diagnose --json --llm "$LLM_URL" --llm-context 50 "$FLOG"
sel='{category, component, confidence, actions, provenance, llm: (.llm | del(.elapsed_ms))}'
diff <(jq -S "$sel" "$SM_TMP/last.out") <(jq -S "$sel" "$SM_TMP/diag.json") ||
  fail "serve's diagnosis differs from the command's"
# The write-back of a failed job: the record's diagnosis carries the
# stage; its end state is the engine's (cause unknown), not the model's.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"llm-2\",\"metadata\":$(cat "$SM_TMP/filled.json"),\"log\":\"$FLOG\"}"
expect_http 200 "$U" /v1/jobs/llm-2/end -d '{"end_state":"failed","duration_s":600}'
[ "$(body_get .end_state)" = failed ] || fail "end state from the model: $(body_get .end_state)"
expect_rc 0 $S history show --json --db "$DB" llm-2
jq -e '.outcome.diagnosis.category == "infrastructure" and
       .outcome.diagnosis.provenance.category == "llm" and
       .outcome.diagnosis.llm.verified' "$SM_TMP/last.out" >/dev/null ||
  fail "record diagnosis: $(jq -c .outcome.diagnosis "$SM_TMP/last.out")"

# ---- /metrics: the client's counters, valid Prometheus text.
expect_http 200 "$U" /metrics
cp "$SM_TMP/body" "$SM_TMP/metrics.txt"
for c in advisor tracker failure; do
  grep -Eq "^schedmate_llm_calls_total\{component=\"$c\"\} [1-9]" "$SM_TMP/metrics.txt" ||
    fail "metrics: no $c calls: $(grep schedmate_llm_calls "$SM_TMP/metrics.txt")"
done
grep -q '^schedmate_serve_llm_slots{channel="submit"} 2$' "$SM_TMP/metrics.txt" || fail "metrics: submit slots"
grep -q '^schedmate_serve_llm_skipped_total{channel="submit",reason="busy"} 0$' "$SM_TMP/metrics.txt" ||
  fail "metrics: skipped"
if P=$(command -v promtool); then
  "$P" check metrics <"$SM_TMP/metrics.txt" >"$SM_TMP/promtool.out" 2>&1 ||
    { cat "$SM_TMP/promtool.out"; fail "promtool check metrics"; }
else
  echo "note: promtool not installed, the metrics text was not checked"
fi
serve_stop llm

# ---- A slow model: the answer comes before the deadline, deterministic.
cat >"$R" <<'EOF'
[{"delay": 6, "content": "{}"}]
EOF
llm_start "$R"
serve_start slow --db "$DB" --socket "$SM_TMP/s2.sock" --allow-root "$ROOT" \
  --rate 0 --llm "$LLM_URL" --advise-deadline-ms 1500 --workers submit=2 \
  --audit "$SM_TMP/audit2.jsonl"
U=$(serve_addr slow)
expect_rc 0 $S advise --json --db "$DB" --repo "$REPO" -- python train.py
jq -S 'del(.elapsed_ms)' "$SM_TMP/last.out" >"$SM_TMP/static.json"
t=$(curl -sS -o "$SM_TMP/slow.json" -w '%{time_total}' --max-time 10 \
  --unix-socket "$SM_TMP/s2.sock" -d "$ADV" http://localhost/v1/advise)
awk -v t="$t" 'BEGIN{exit !(t < 1.5)}' || fail "slow model: answered after $t s (deadline 1.5 s)"
jq -e '.fallback_reason != "deadline" and .llm.fallback_reason == "timeout" and
       .llm.ran and .metadata.model_name == null' "$SM_TMP/slow.json" >/dev/null ||
  fail "slow model: $(jq -c '{fallback_reason, llm}' "$SM_TMP/slow.json")"
diff <(jq -S 'del(.elapsed_ms, .llm, .llm_stats, .provenance)' "$SM_TMP/slow.json") "$SM_TMP/static.json" ||
  fail "slow model: not the deterministic answer"
jq -se 'map(select(.endpoint == "advise")) | all(.late == false)' "$SM_TMP/audit2.jsonl" >/dev/null ||
  fail "an answer was late"
# One LLM slot on the submit channel (2 workers): while a request holds
# it, another that needs the model is answered without it at once, and
# advice by metadata is not held up.
curl -sS -o "$SM_TMP/a1.json" --max-time 10 --unix-socket "$SM_TMP/s2.sock" \
  -d "$ADV" http://localhost/v1/advise &
A1=$!
sleep 0.4
t2=$(curl -sS -o "$SM_TMP/a2.json" -w '%{time_total}' --max-time 10 \
  --unix-socket "$SM_TMP/s2.sock" -d "$ADV" http://localhost/v1/advise)
t3=$(curl -sS -o "$SM_TMP/a3.json" -w '%{time_total}' --max-time 10 \
  --unix-socket "$SM_TMP/s2.sock" -d "{\"metadata\":$(cat "$SM_TMP/filled.json")}" \
  http://localhost/v1/advise)
wait "$A1"
jq -e '.llm_skipped == "busy" and (.llm.ran | not) and .fallback_reason != "deadline"' \
  "$SM_TMP/a2.json" >/dev/null || fail "busy: $(jq -c '{llm_skipped, llm, fallback_reason}' "$SM_TMP/a2.json")"
awk -v t="$t2" 'BEGIN{exit !(t < 0.8)}' || fail "busy: the second request waited $t2 s"
awk -v t="$t3" 'BEGIN{exit !(t < 0.8)}' || fail "metadata advice waited $t3 s behind the model"
jq -e '.fallback == false' "$SM_TMP/a3.json" >/dev/null || fail "metadata advice: $(head -c 300 "$SM_TMP/a3.json")"
jq -e '.llm.fallback_reason == "timeout"' "$SM_TMP/a1.json" >/dev/null || fail "first: $(jq -c .llm "$SM_TMP/a1.json")"
expect_http 200 "$U" /metrics
grep -q '^schedmate_serve_llm_skipped_total{channel="submit",reason="busy"} 1$' "$SM_TMP/body" ||
  fail "busy not counted: $(grep llm_skipped "$SM_TMP/body")"
grep -Eq '^schedmate_llm_reasons_total\{component="advisor",reason="timeout"\} [1-9]' "$SM_TMP/body" ||
  fail "timeouts not counted"
serve_stop slow

# ---- --embed: fingerprints from the endpoint, for advice and write-backs.
EDB=$SM_TMP/emb.db
printf '[{"endpoint": "embeddings", "dims": 384}]\n' >"$R"
llm_start "$R"
for i in 1 2 3; do
  expect_rc 0 $S history add --db "$EDB" --id "e$i" --duration $((3600 + i * 60)) \
    --embed "$LLM_URL" --embed-model emb-test --meta "$SM_TMP/filled.json"
done
# A history never mixes embedders: the service refuses to write into one
# with other fingerprints.
expect_rc 2 $S serve --db "$EDB" --socket "$SM_TMP/s5.sock"
grep -q "never mixes embedders" "$SM_TMP/last.err" || fail "refusal: $(cat "$SM_TMP/last.err")"
expect_rc 2 $S serve --db "$DB" --socket "$SM_TMP/s5.sock" --embed "$LLM_URL"
serve_start emb --db "$EDB" --socket "$SM_TMP/s5.sock" --rate 0 \
  --embed "$LLM_URL" --embed-model emb-test
U=$(serve_addr emb)
expect_http 200 "$U" /v1/advise -d "{\"metadata\":$(cat "$SM_TMP/filled.json")}"
jq -e '.fallback == false and .estimate.n == 3 and .embedder == "api:emb-test"' \
  "$SM_TMP/body" >/dev/null || fail "advise --embed: $(jq -c '{fallback_reason, fallback_detail, embedder}' "$SM_TMP/body")"
cp "$SM_TMP/body" "$SM_TMP/emb-a.json"
echo "{\"metadata\":$(cat "$SM_TMP/filled.json")}" >"$SM_TMP/fm.json"
expect_rc 0 $S advise --json --db "$EDB" --meta "$SM_TMP/fm.json" --embed "$LLM_URL" --embed-model emb-test
diff <(jq -S "$strip" "$SM_TMP/last.out") <(jq -S "$strip" "$SM_TMP/emb-a.json") ||
  fail "serve's advice with --embed differs from the command's"
# A write-back keeps the endpoint's fingerprint and its embedder.
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"e4\",\"metadata\":$(cat "$SM_TMP/filled.json")}"
expect_http 200 "$U" /v1/jobs/e4/end -d '{"end_state":"completed","duration_s":3900}'
expect_rc 0 $S history export --db "$EDB" --out "$SM_TMP/emb.jsonl"
jq -e -s 'length == 4 and all(.embedder == "api:emb-test")' "$SM_TMP/emb.jsonl" >/dev/null ||
  fail "write-back embedder: $(jq -c '.embedder' "$SM_TMP/emb.jsonl")"
expect_http 200 "$U" /v1/advise -d "{\"metadata\":$(cat "$SM_TMP/filled.json")}"
[ "$(body_get .estimate.n)" = 4 ] || fail "the write-back is not matched: $(body_get .estimate)"
serve_stop emb
# A failing endpoint: no search, and no write-back committed.
printf '[{"endpoint": "embeddings", "status": 500}]\n' >"$R"
llm_start "$R"
serve_start emb2 --db "$EDB" --socket "$SM_TMP/s6.sock" --rate 0 \
  --embed "$LLM_URL" --embed-model emb-test --llm-retries 0
U=$(serve_addr emb2)
expect_http 200 "$U" /v1/advise -d "{\"metadata\":$(cat "$SM_TMP/filled.json")}"
[ "$(body_get .fallback_reason)" = history_unavailable ] || fail "failing endpoint: $(body_get .fallback_reason)"
body_get .fallback_detail | grep -q "^embeddings endpoint: " || fail "detail: $(body_get .fallback_detail)"
expect_http 201 "$U" /v1/jobs -d "{\"id\":\"e5\",\"metadata\":$(cat "$SM_TMP/filled.json")}"
expect_http 503 "$U" /v1/jobs/e5/end -d '{"end_state":"completed","duration_s":3900}'
[ "$(body_get .error)" = history_unavailable ] || fail "write-back with a failing endpoint: $(cat "$SM_TMP/body")"
serve_stop emb2
expect_rc 2 $S history show --db "$EDB" e5

# ---- Without --llm: no client, no request, no internet socket.
printf '[{"content": "{}"}]\n' >"$R"
llm_start "$R"
run_off() { # [traced]
  serve_start off --db "$DB" --socket "$SM_TMP/s3.sock" --allow-root "$ROOT" --rate 0
  U=$(serve_addr off)
  expect_http 200 "$U" /v1/advise -d "$ADV"
  cp "$SM_TMP/body" "$SM_TMP/off-a.json"
  expect_http 200 "$U" /v1/track -d "{\"log\":\"$TLOG\"}"
  cp "$SM_TMP/body" "$SM_TMP/off-t.json"
  expect_http 200 "$U" /v1/diagnose -d "{\"log\":\"$FLOG\"}"
  cp "$SM_TMP/body" "$SM_TMP/off-d.json"
  expect_http 200 "$U" /metrics
  cp "$SM_TMP/body" "$SM_TMP/off-m.txt"
  expect_http 200 "$U" /healthz
  [ "$(body_get .llm)" = false ] || fail "healthz without --llm"
  if [ -n "${1:-}" ]; then
    # strace passes no signal on: the service is its child.
    kill -TERM "$(pgrep -P "$(cat "$SM_TMP/off.pid")")"
    wait "$(cat "$SM_TMP/off.pid")" || fail "the traced service did not stop cleanly"
  else
    serve_stop off
  fi
}
run_off
[ "$(llm_requests)" = 0 ] || fail "without --llm the service sent $(llm_requests) request(s)"
for f in a t d; do
  jq -e 'has("llm") or has("llm_stats") or has("provenance") or has("llm_skipped") | not' \
    "$SM_TMP/off-$f.json" >/dev/null || fail "$f: LLM members without --llm"
done
if grep -q "schedmate_llm_\|schedmate_serve_llm" "$SM_TMP/off-m.txt"; then
  fail "LLM series in /metrics without --llm"
fi
if command -v strace >/dev/null && strace -f -qq -e trace=none true 2>/dev/null; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  SCHEDMATE_REAL=$SCHEDMATE
  cat >"$SM_TMP/traced.sh" <<EOF
#!/bin/sh
exec strace -f -qq -e trace=connect -o "$SM_TMP/strace.txt" "$SCHEDMATE_REAL" "\$@"
EOF
  chmod +x "$SM_TMP/traced.sh"
  SCHEDMATE=$SM_TMP/traced.sh
  run_off traced
  SCHEDMATE=$SCHEDMATE_REAL
  if grep "AF_INET" "$SM_TMP/strace.txt"; then
    fail "the service opened an internet connection without --llm"
  fi
  # The same tool sees the model's socket when the stage is on.
  SCHEDMATE=$SM_TMP/traced.sh
  serve_start on --db "$DB" --socket "$SM_TMP/s4.sock" --allow-root "$ROOT" \
    --rate 0 --llm "$LLM_URL"
  expect_http 200 "$(serve_addr on)" /v1/advise -d "$ADV"
  kill -TERM "$(pgrep -P "$(cat "$SM_TMP/on.pid")")"
  wait "$(cat "$SM_TMP/on.pid")" || true
  SCHEDMATE=$SCHEDMATE_REAL
  grep -q "AF_INET" "$SM_TMP/strace.txt" || fail "strace did not see the model's socket"
fi
echo "ok"
