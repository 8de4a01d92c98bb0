# llm_failure.sh - the Failure Handler's LLM stage through `schedmate
# diagnose`: the model sees the located context only; a verified verdict
# fills an "unknown" answer (provenance llm) but never the plan; a
# verified verdict that disagrees lowers the confidence, so a plan that
# would isolate a node no longer may, and the disagreement is reported;
# a verdict whose quotes are not lines of the context counts for nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
R=$SM_TMP/rules.json

# An error the signatures do not know: located, category unknown.
UNK=$SM_TMP/unknown.log
{
  for i in $(seq 1 300); do echo "step $i/1000 loss 7.$i"; done
  echo "terminate called after throwing an instance of 'flux::LockLost'"
  echo "  what():  regulator lost lock on tile 14"
  for i in $(seq 1 300); do echo "launcher: worker $i exited"; done
} >"$UNK"
"$SCHEDMATE" diagnose --json "$UNK" >"$SM_TMP/u0.json" || true
jq -e '.status == "failure" and .category == "unknown" and .first_error_line == 301' \
  "$SM_TMP/u0.json" >/dev/null || fail "fixture: $(jq -c '[.status,.category,.first_error_line]' "$SM_TMP/u0.json")"

# A verdict that says "infrastructure/gpu": shown, but the plan stays the
# engine's (report only: no isolation on the model's word).
cat >"$R" <<'EOF'
[{"last": ["SchedMate located the first error at line 301", "301: terminate called after throwing"],
  "content": "{\"category\": \"infrastructure\", \"component\": \"gpu\", \"root_cause\": \"The flux regulator of a GPU tile lost lock.\", \"evidence\": [{\"line\": 301, \"quote\": \"throwing an instance of 'flux::LockLost'\"}, {\"line\": 302, \"quote\": \"regulator lost lock on tile 14\"}, {\"line\": 9999, \"quote\": \"made up\"}]}"}]
EOF
llm_start "$R"
expect_rc 1 "$SCHEDMATE" diagnose --json --llm "$LLM_URL" --llm-context 50 "$UNK"
cp "$SM_TMP/last.out" "$SM_TMP/u.json"
jq -e '.category == "infrastructure" and .component == "gpu" and
       .provenance.category == "llm" and .provenance.plan == "static" and
       .llm.verified and (.llm.evidence_lines == [301, 302]) and
       .llm.dropped == 1 and (.actions == ["report"] or .actions == []) and
       (.actions | index("isolate_node") | not) and
       .llm.context == [251, 351]' "$SM_TMP/u.json" >/dev/null ||
  fail "unknown + verdict: $(jq -c '[.category,.component,.actions,.provenance,.llm]' "$SM_TMP/u.json")"
# Only the context went to the model.
jq -r '.request.messages[1].content' "$LLM_LOG" >"$SM_TMP/sent.txt"
grep -q "^251: step 251/1000" "$SM_TMP/sent.txt" || fail "context start"
grep -q "^351: launcher: worker 49 exited" "$SM_TMP/sent.txt" || fail "context end"
if grep -q "^250: \|^352: " "$SM_TMP/sent.txt"; then fail "lines outside the context sent"; fi

# Quotes that are not on their lines: no verdict, the answer stays unknown.
cat >"$R" <<'EOF'
[{"content": "{\"category\": \"user\", \"component\": \"none\", \"root_cause\": \"A bug.\", \"evidence\": [{\"line\": 301, \"quote\": \"segmentation fault in user code\"}, {\"line\": 20, \"quote\": \"step 20/1000 loss\"}]}"}]
EOF
llm_start "$R"
expect_rc 1 "$SCHEDMATE" diagnose --json --llm "$LLM_URL" --llm-context 50 "$UNK"
jq -e '.category == "unknown" and (.llm.verified | not) and
       .llm.fallback_reason == "unverified" and .provenance.category == "static"' \
  "$SM_TMP/last.out" >/dev/null || fail "unverified quotes: $(jq -c .llm "$SM_TMP/last.out")"
jq -e '[.llm.drops[].why] == ["not_on_line", "not_in_context"]' "$SM_TMP/last.out" \
  >/dev/null || fail "drop reasons: $(jq -c .llm.drops "$SM_TMP/last.out")"

# Inconsistent or outside the vocabulary: refused.
for v in '\"category\": \"infrastructure\", \"component\": \"none\"' \
  '\"category\": \"cosmic_rays\", \"component\": \"gpu\"' \
  '\"category\": \"framework\", \"component\": \"gpu\"'; do
  printf '[{"content": "{%s, \\"root_cause\\": \\"x\\", \\"evidence\\": [{\\"line\\": 301, \\"quote\\": \\"terminate called after\\"}]}"}]\n' "$v" >"$R"
  llm_start "$R"
  expect_rc 1 "$SCHEDMATE" diagnose --json --llm "$LLM_URL" "$UNK"
  jq -e '.category == "unknown" and .llm.fallback_reason == "schema"' \
    "$SM_TMP/last.out" >/dev/null || fail "$v: $(jq -c .llm "$SM_TMP/last.out")"
done

# ---- A located infrastructure fault the engine is sure of: isolate and
# restart.  With --llm-always the model is asked anyway; a verified
# disagreement halves the confidence and the plan may no longer act.
ECC=$SM_TMP/ecc.log
{
  for i in $(seq 100 160); do echo "[2024-05-01 11:00:00] step $i/5000 loss 2.10"; done
  echo "[2024-05-01 11:00:02] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU"
  echo "[2024-05-01 11:00:02] RuntimeError: CUDA error: uncorrectable ECC error encountered"
  echo "[2024-05-01 11:00:03] torch.distributed.elastic.multiprocessing.errors.ChildFailedError: train.py FAILED"
} >"$ECC"
expect_rc 1 "$SCHEDMATE" diagnose --json --node gpu-n7 "$ECC"
cp "$SM_TMP/last.out" "$SM_TMP/e0.json"
jq -e '.category == "infrastructure" and .component == "gpu" and
       .confidence >= 0.8 and (.actions | index("restart_from_checkpoint"))' \
  "$SM_TMP/e0.json" >/dev/null || fail "fixture: $(jq -c '[.category,.confidence,.actions]' "$SM_TMP/e0.json")"
# Sure, and no --llm-always: no request.
printf '[{"content": "{}"}]\n' >"$R"
llm_start "$R"
expect_rc 1 "$SCHEDMATE" diagnose --json --node gpu-n7 --llm "$LLM_URL" "$ECC"
[ "$(llm_requests)" = 0 ] || fail "a sure diagnosis went to the model"
jq -e --slurpfile s "$SM_TMP/e0.json" '.actions == $s[0].actions and
       .confidence == $s[0].confidence' "$SM_TMP/last.out" >/dev/null ||
  fail "the plan changed without a request"
# Disagreement.
cat >"$R" <<'EOF'
[{"content": "{\"category\": \"user\", \"component\": \"none\", \"root_cause\": \"The job's own CUDA kernel failed.\", \"evidence\": [{\"line\": 63, \"quote\": \"RuntimeError: CUDA error: uncorrectable ECC error\"}]}"}]
EOF
llm_start "$R"
expect_rc 1 "$SCHEDMATE" diagnose --json --node gpu-n7 --llm "$LLM_URL" --llm-always "$ECC"
cp "$SM_TMP/last.out" "$SM_TMP/e1.json"
jq -e --slurpfile s "$SM_TMP/e0.json" '.category == "infrastructure" and
       .component == "gpu" and .llm.verified and (.llm.agrees | not) and
       (.confidence - $s[0].confidence * 0.5 | fabs) < 1e-9 and
       .llm.confidence_before == $s[0].confidence and
       (.llm.disagreement | test("the model says user/none")) and
       (.actions | index("restart_from_checkpoint") | not) and
       (.actions | index("isolate_node") | not)' "$SM_TMP/e1.json" >/dev/null ||
  fail "disagreement: $(jq -c '[.confidence,.actions,.llm]' "$SM_TMP/e1.json")"
# Agreement: nothing changes.
cat >"$R" <<'EOF'
[{"content": "{\"category\": \"infrastructure\", \"component\": \"gpu\", \"root_cause\": \"A double-bit ECC error on the GPU.\", \"evidence\": [{\"line\": 62, \"quote\": \"An uncorrectable double bit error (DBE)\"}]}"}]
EOF
llm_start "$R"
expect_rc 1 "$SCHEDMATE" diagnose --json --node gpu-n7 --llm "$LLM_URL" --llm-always "$ECC"
jq -e --slurpfile s "$SM_TMP/e0.json" '.actions == $s[0].actions and
       .confidence == $s[0].confidence and .llm.agrees and
       .provenance.category == "static"' "$SM_TMP/last.out" >/dev/null ||
  fail "agreement changed the plan: $(jq -c '[.confidence,.actions,.llm.agrees]' "$SM_TMP/last.out")"
# The human text says so.
expect_rc 1 "$SCHEDMATE" diagnose --node gpu-n7 --llm "$LLM_URL" --llm-always "$ECC"
grep -q "^llm:         infrastructure / gpu (agrees)" "$SM_TMP/last.out" ||
  fail "text: $(cat "$SM_TMP/last.out")"

# ---- Failure modes leave the engine's answer and plan.
for rule in '{"status": 500}' '{"content": "{\"category\": \"us"}' \
  '{"hang": true}' '{"content": "[1]"}'; do
  printf '[%s]\n' "$rule" >"$R"
  llm_start "$R"
  expect_rc 1 "$SCHEDMATE" diagnose --json --node gpu-n7 --llm "$LLM_URL" \
    --llm-always --llm-timeout 1 --llm-retries 1 "$ECC"
  jq -e --slurpfile s "$SM_TMP/e0.json" '.actions == $s[0].actions and
         .confidence == $s[0].confidence and (.llm.verified | not) and
         .llm.fallback_reason != null' "$SM_TMP/last.out" >/dev/null ||
    fail "$rule: $(jq -c '[.actions,.llm]' "$SM_TMP/last.out")"
done
expect_rc 2 "$SCHEDMATE" diagnose --llm "$LLM_URL" --llm-context 0 "$ECC"
echo ok
