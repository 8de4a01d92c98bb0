# llm_tracker.sh - the Tracker's LLM stage through `schedmate track`: a
# progress format the parser does not know is read by the (replayed)
# model; every number must be printed on the line it is claimed for,
# others are dropped and counted; a log the parser reads sends nothing;
# every failure mode leaves "missing" with a counted reason.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
LOG=$SM_TMP/run.log
R=$SM_TMP/rules.json
{
  echo "2024-05-01T10:00:00 rank0 booting worker pool (8 ranks)"
  for i in 1 2 3 4 5 6; do
    echo "2024-05-01T10:00:0$i rank0 >> progress 12$i ~ 5000 :: obj 2.34$i :: wall 0.41$i"
  done
  echo "2024-05-01T10:00:07 rank0 checkpoint written to /ckpt/latest"
} >"$LOG"
"$SCHEDMATE" track --json "$LOG" >"$SM_TMP/static.json"
jq -e '.status == "missing"' "$SM_TMP/static.json" >/dev/null ||
  fail "fixture: the parser now reads this format; pick another"

cat >"$R" <<'EOF'
[
 {"last": ["1: 2024-05-01T10:00:01 rank0 >> progress 121", "6: 2024-05-01T10:00:06 rank0 >> progress 126"],
  "content": "{\"samples\": [{\"line\": 5, \"step\": 125, \"total_steps\": 5000, \"loss\": 2.345, \"step_time_s\": 0.415}, {\"line\": 6, \"step\": 126, \"total_steps\": 5000, \"loss\": 2.346, \"step_time_s\": 0.416, \"lr\": null}]}"}
]
EOF
llm_start "$R"
"$SCHEDMATE" track --json --llm "$LLM_URL" "$LOG" >"$SM_TMP/a.json"
jq -e '.status == "ok" and .step == 126 and .total_steps == 5000 and
       .loss == 2.346 and (.step_time_s - 0.4155 | fabs) < 1e-9 and
       .step_time_source == "llm" and .llm.used and .llm.candidates == 6 and
       .llm.verified == 8 and .llm.dropped == 0 and
       .llm_stats.tracker.used == 1' "$SM_TMP/a.json" >/dev/null ||
  fail "verified sample not used: $(jq -c . "$SM_TMP/a.json")"
# Only the candidate lines were sent (not the boot or checkpoint lines).
if grep -q "booting worker pool\|checkpoint written" "$LLM_LOG"; then
  fail "non-progress lines were sent"
fi
"$SCHEDMATE" track --llm "$LLM_URL" "$LOG" >"$SM_TMP/a.txt"
grep -q "^step:        126 / 5000" "$SM_TMP/a.txt" || fail "text: $(cat "$SM_TMP/a.txt")"
grep -q "^llm:         used" "$SM_TMP/a.txt" || fail "text: no llm line"

# ---- Hallucinated numbers: a step that is not on its line, a loss from
# another line, an lr nobody printed, a line that does not exist.
cat >"$R" <<'EOF'
[
 {"content": "{\"samples\": [{\"line\": 6, \"step\": 127, \"loss\": 2.345, \"lr\": 0.001, \"total_steps\": 5000}, {\"line\": 9, \"step\": 129}, {\"line\": 4, \"step\": 124, \"loss\": \"low\", \"speed\": 3}]}"}
]
EOF
llm_start "$R"
"$SCHEDMATE" track --json --llm "$LLM_URL" "$LOG" >"$SM_TMP/h.json"
# Line 4's step verifies, and line 6's total (printed there), but line 6
# has no verified step for it to be the total of: the answer is line 4's
# step alone.
jq -e '.status == "ok" and .step == 124 and .loss == null and
       .llm.verified == 2 and .llm.dropped == 6' "$SM_TMP/h.json" >/dev/null ||
  fail "hallucinated numbers: $(jq -c . "$SM_TMP/h.json")"
for w in "line 6 step:not_on_line" "line 6 loss:not_on_line" "line 6 lr:not_on_line" \
  "line:no_such_line" "line 4 loss:wrong_type" "line 4 speed:not_in_schema"; do
  jq -e --arg f "${w%%:*}" --arg y "${w#*:}" \
    '[.llm.drops[] | select(.field == $f and .why == $y)] | length == 1' \
    "$SM_TMP/h.json" >/dev/null || fail "expected drop $w: $(jq -c .llm.drops "$SM_TMP/h.json")"
done

# ---- Nothing verified, and the failure modes: still "missing".
fallback() { # RULE REASON [options]
  local rule=$1 reason=$2
  shift 2
  printf '[%s]\n' "$rule" >"$R"
  llm_start "$R"
  "$SCHEDMATE" track --json --llm "$LLM_URL" "$@" "$LOG" >"$SM_TMP/f.json"
  jq -e --arg r "$reason" '.status == "missing" and .step == null and
      .llm.fallback_reason == $r and .llm_stats.tracker.reasons[$r] == 1' \
    "$SM_TMP/f.json" >/dev/null || fail "$reason: $(jq -c . "$SM_TMP/f.json")"
}
fallback '{"content": "{\"samples\": [{\"line\": 6, \"step\": 999}]}"}' unverified
fallback '{"content": "{\"samples\": []}"}' no_answer
fallback '{"content": "{\"samples\": [{\"line\": 6, \"step\": 12"}' bad_json
fallback '{"content": "{\"steps\": 126}"}' schema
fallback '{"status": 503}' http_5xx --llm-retries 1
fallback '{"delay": 4, "content": "{}"}' timeout --llm-timeout 1 --llm-retries 0

# ---- A log the parser reads needs no model: no request is made.
LOG2=$SM_TMP/known.log
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  echo "step $i/100 | loss 2.$i | 0.5 s/it"
done >"$LOG2"
cat >"$R" <<'EOF'
[{"content": "{\"samples\": []}"}]
EOF
llm_start "$R"
"$SCHEDMATE" track --json --llm "$LLM_URL" "$LOG2" >"$SM_TMP/k.json"
jq -e '.status == "ok" and .step == 12 and (.llm.ran | not)' "$SM_TMP/k.json" \
  >/dev/null || fail "a known format went to the model: $(jq -c . "$SM_TMP/k.json")"
[ "$(llm_requests)" = 0 ] || fail "a request was made for a known format"
echo ok
