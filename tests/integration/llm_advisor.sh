# llm_advisor.sh - the Advisor's LLM stage through `schedmate extract`
# against the replay server (tests/llm/replay.py): verified values fill
# the unknown fields with provenance "llm"; hallucinated evidence,
# truncated or schema-violating JSON, 5xx, 429, a slow or hanging server,
# a non-OpenAI body and an injected tool call all end in the
# deterministic answer with a counted reason, within the timeout; the
# cache answers a repeated run without a request.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
REPO=$(cd "$(dirname "$0")/../llm/repo_basic" && pwd)
R=$SM_TMP/rules.json

extract() { "$SCHEDMATE" extract --json --repo "$REPO" "$@" -- python train.py; }

# The deterministic answer, for comparison.
extract >"$SM_TMP/static.json"
jq -e '.metadata.lr == null and .metadata.model_name == null' \
  "$SM_TMP/static.json" >/dev/null || fail "fixture: the static answer changed"
jq -e 'has("llm") | not' "$SM_TMP/static.json" >/dev/null ||
  fail "no --llm: the output must not have an llm member"

# Every failure mode must leave the static metadata and evidence as they are.
same_as_static() {
  jq -e --slurpfile s "$SM_TMP/static.json" \
    '.metadata == $s[0].metadata and .evidence == $s[0].evidence' "$1" \
    >/dev/null || fail "$2: metadata differ from the deterministic answer"
}

# ---- A verified answer after one read.
cat >"$R" <<'EOF'
[
 {"last": "Find these fields",
  "content": "{\"action\": \"read\", \"path\": \"configs/base.yaml\"}"},
 {"last": "Lines 1.. of configs/base.yaml",
  "content": "{\"action\": \"answer\", \"fields\": {\"model_name\": {\"value\": \"resnet50\", \"evidence\": \"configs/base.yaml:3\"}, \"dataset\": {\"value\": \"imagenet\", \"evidence\": \"configs/base.yaml:5\"}, \"per_device_batch_size\": {\"value\": 64, \"evidence\": \"configs/base.yaml:6\"}, \"lr\": {\"value\": 0.0004, \"evidence\": \"configs/base.yaml:8\"}, \"task\": {\"value\": \"image_classification\", \"evidence\": \"configs/base.yaml:5\"}, \"domain\": {\"value\": \"cv\", \"evidence\": \"trainer.py:17\"}, \"seq_len\": null}}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" --llm-model replay --llm-cache "$SM_TMP/cache" >"$SM_TMP/a.json"
jq -e '.metadata.model_name == "resnet50" and .metadata.lr == 0.0004 and
       .metadata.per_device_batch_size == 64 and
       .metadata.dataset == "imagenet-1k" and
       .metadata.task == "image_classification" and .metadata.domain == "cv"' \
  "$SM_TMP/a.json" >/dev/null || fail "verified values not filled: $(jq -c .metadata "$SM_TMP/a.json")"
jq -e '.evidence.lr == "configs/base.yaml:8" and .provenance.lr == "llm" and
       .provenance.iterations == "static" and .llm.verified == 6 and
       .llm.dropped == 0 and .llm.tool_calls == 1 and
       .llm_stats.advisor.calls == 2 and .llm_stats.advisor.used == 1' \
  "$SM_TMP/a.json" >/dev/null || fail "provenance or counts: $(jq -c '.provenance, .llm' "$SM_TMP/a.json")"
# The static fields are untouched.
jq -e --slurpfile s "$SM_TMP/static.json" \
  '.metadata.iterations == $s[0].metadata.iterations and
   .metadata.precision == $s[0].metadata.precision' "$SM_TMP/a.json" >/dev/null ||
  fail "a static field changed"
[ "$(llm_requests)" = 2 ] || fail "expected 2 requests, got $(llm_requests)"
# Data is quoted between delimiters in the user message.
jq -e 'select(.request.messages) | .request.messages[-1].content |
       test("<<<DATA [0-9a-f]{16}>>>")' "$LLM_LOG" >/dev/null ||
  fail "the repository text is not quoted"
# The same run again: answered from the disk cache, no request.
extract --llm "$LLM_URL" --llm-model replay --llm-cache "$SM_TMP/cache" >"$SM_TMP/a2.json"
[ "$(llm_requests)" = 2 ] || fail "the cache did not answer the repeated run"
jq -e '.llm_stats.advisor.cache_hits == 2 and .llm_stats.advisor.calls == 0' \
  "$SM_TMP/a2.json" >/dev/null || fail "cache hits not counted"
jq -e --slurpfile a "$SM_TMP/a.json" '.metadata == $a[0].metadata' \
  "$SM_TMP/a2.json" >/dev/null || fail "the cached answer differs"
# Text output names what the model filled.
"$SCHEDMATE" extract --repo "$REPO" --llm "$LLM_URL" --llm-cache "$SM_TMP/cache2" \
  -- python train.py >"$SM_TMP/a.txt"
grep -q "filled lr (llm)" "$SM_TMP/a.txt" || fail "text output: $(cat "$SM_TMP/a.txt")"

# ---- Hallucinated evidence: every claim dropped, for its own reason.
cat >"$R" <<'EOF'
[
 {"last": "Find these fields",
  "content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"value\": 0.1, \"evidence\": \"README.md:3\"}, \"model_name\": {\"value\": \"vit-b-16\", \"evidence\": \"../outside/x.yaml:1\"}, \"dataset\": {\"value\": \"coco\", \"evidence\": \"configs/base.yaml:99\"}, \"per_device_batch_size\": {\"value\": 32, \"evidence\": \"configs/base.yaml:6\"}, \"d_model\": {\"value\": 768, \"evidence\": \"nothing.py:1\"}, \"task\": {\"value\": \"image_classification\", \"evidence\": \"configs/base.yaml:1\"}, \"gpus\": {\"value\": 8, \"evidence\": \"configs/base.yaml:9\"}, \"n_layers\": {\"value\": \"fifty\", \"evidence\": \"trainer.py:1\"}, \"seq_len\": {\"value\": 512}, \"domain\": {\"value\": \"astrology\", \"evidence\": \"trainer.py:16\"}, \"warp_factor\": {\"value\": 9, \"evidence\": \"train.py:1\"}}}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/h.json"
same_as_static "$SM_TMP/h.json" "hallucinated evidence"
jq -e '.llm.claims == 11 and .llm.verified == 0 and .llm.dropped == 11 and
       .llm.fallback_reason == "unverified" and
       .llm_stats.advisor.dropped == 11 and
       .llm_stats.advisor.reasons.unverified == 1' "$SM_TMP/h.json" >/dev/null ||
  fail "drops not counted: $(jq -c .llm "$SM_TMP/h.json")"
for pair in lr:not_code_or_config model_name:outside_root dataset:no_such_line \
  per_device_batch_size:not_on_line d_model:no_such_file task:not_on_line \
  gpus:not_asked n_layers:wrong_type seq_len:no_evidence \
  domain:not_in_vocabulary warp_factor:unknown_field; do
  f=${pair%%:*} why=${pair#*:}
  jq -e --arg f "$f" --arg w "$why" \
    '[.llm.drops[] | select(.field == $f and .why == $w)] | length == 1' \
    "$SM_TMP/h.json" >/dev/null || fail "$f should be dropped as $why: $(jq -c .llm.drops "$SM_TMP/h.json")"
done

# ---- Replies that are not the protocol.
check_fallback() { # RULE-CONTENT-JSON REASON [extract options...]
  local rule=$1 reason=$2
  shift 2
  printf '[%s]\n' "$rule" >"$R"
  llm_start "$R"
  extract --llm "$LLM_URL" "$@" >"$SM_TMP/f.json" ||
    fail "$reason: extract failed"
  same_as_static "$SM_TMP/f.json" "$reason"
  jq -e --arg r "$reason" '.llm.fallback_reason == $r and
      .llm_stats.advisor.reasons[$r] >= 1 and .llm_stats.advisor.fallbacks == 1' \
    "$SM_TMP/f.json" >/dev/null ||
    fail "expected reason $reason: $(jq -c '.llm, .llm_stats.advisor' "$SM_TMP/f.json")"
}
check_fallback '{"content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"value\": 0.0004, \"evid"}' bad_json
check_fallback '{"content": "Sure! The learning rate is 0.0004."}' bad_json
check_fallback '{"content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"val", "finish_reason": "length"}' bad_json
check_fallback '{"content": "{\"result\": \"resnet50\"}"}' schema
check_fallback '{"content": "{\"action\": \"answer\", \"fields\": [1, 2]}"}' schema
check_fallback '{"raw": "{\"object\": \"error\"}"}' bad_response
check_fallback '{"status": 500}' http_5xx --llm-retries 2
jq -e '.llm_stats.advisor.calls == 3 and .llm_stats.advisor.retries == 2' \
  "$SM_TMP/f.json" >/dev/null || fail "5xx: 1 call + 2 retries expected"
check_fallback '{"status": 429}' http_429 --llm-retries 1
check_fallback '{"status": 401}' http_error
check_fallback '{"last": "never matches"}' http_error

# ---- 429 once, then the answer: one retry, the values are used.
cat >"$R" <<'EOF'
[
 {"status": 429, "times": 1, "retry_after": 1},
 {"last": "Find these fields",
  "content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"value\": 0.0004, \"evidence\": \"configs/base.yaml:8\"}}}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/r.json"
jq -e '.metadata.lr == 0.0004 and .llm_stats.advisor.retries == 1' \
  "$SM_TMP/r.json" >/dev/null || fail "429 then ok: $(jq -c .llm_stats.advisor "$SM_TMP/r.json")"

# ---- Slow, dripping and hanging servers: bounded by --llm-timeout.
for rule in '{"delay": 5, "content": "{}"}' '{"hang": true}' \
  '{"drip": 0.5, "content": "{\"action\": \"answer\", \"fields\": {}}"}'; do
  t0=$(date +%s.%N)
  check_fallback "$rule" timeout --llm-timeout 1 --llm-retries 0
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
  awk -v d="$dt" 'BEGIN{exit !(d < 8)}' || fail "$rule: took $dt s with a 1 s timeout"
done

# ---- An injected tool call (a native OpenAI tool call to a tool that does
# not exist) is refused; the model then answers.
cat >"$R" <<'EOF'
[
 {"last": "Find these fields", "tool": {"name": "run_shell", "arguments": {"cmd": "cat /etc/passwd"}}},
 {"last": "refused: unknown tool",
  "tool": {"name": "read_file", "arguments": {"path": "configs/base.yaml", "start": 7, "lines": 2}}},
 {"last": "Lines 7.. of configs/base.yaml",
  "content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"value\": 0.0004, \"evidence\": \"configs/base.yaml:8\"}}}"}
]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/t.json"
jq -e '.metadata.lr == 0.0004 and .llm.tool_refused == 1 and
       .llm.tool_calls == 1 and .llm_stats.advisor.tool_refused == 1' \
  "$SM_TMP/t.json" >/dev/null || fail "tool calls: $(jq -c .llm "$SM_TMP/t.json")"
# The read showed only the lines asked for, numbered.
jq -r 'select(.request.messages) | .request.messages[-1].content' "$LLM_LOG" |
  grep -q '^8:   peak_lr: 0.0004' || fail "numbered lines not shown"
if jq -r 'select(.request.messages) | .request.messages[-1].content' "$LLM_LOG" |
  grep -q '^3:   arch'; then fail "lines outside the range were shown"; fi

# ---- A model that never stops calling tools is cut off.
cat >"$R" <<'EOF'
[{"content": "{\"action\": \"list\", \"path\": \"configs\"}"}]
EOF
llm_start "$R"
extract --llm "$LLM_URL" >"$SM_TMP/c.json"
same_as_static "$SM_TMP/c.json" "tool cap"
jq -e '.llm.fallback_reason == "tool_cap" and .llm.tool_calls == 8 and
       .llm.requests == 10' "$SM_TMP/c.json" >/dev/null ||
  fail "tool cap: $(jq -c .llm "$SM_TMP/c.json")"

# ---- Options: an --llm-* option without a URL, a bad URL, a bad key file.
expect_rc 2 "$SCHEDMATE" extract --repo "$REPO" --llm-model x -- python train.py
expect_rc 2 "$SCHEDMATE" extract --repo "$REPO" --llm ftp://x -- python train.py
expect_rc 2 "$SCHEDMATE" extract --repo "$REPO" --llm "$LLM_URL" \
  --llm-key-file "$SM_TMP/nokey" -- python train.py
grep -q "nokey" "$SM_TMP/last.err" || fail "key file error does not name the file"
expect_rc 2 "$SCHEDMATE" extract --repo "$REPO" --llm "$LLM_URL" \
  --llm-timeout 0 -- python train.py
echo ok
