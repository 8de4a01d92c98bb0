# llm_default_offline.sh - the deterministic engine stays the default:
# without --llm/--embed (and without SCHEDMATE_LLM_URL) no subcommand
# makes a client, sends a request or opens an internet socket, and the
# outputs carry no LLM member.  With SCHEDMATE_LLM_URL set the same
# commands do reach the server (so the check above can fail).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../llm/lib.sh"
REPO=$(cd "$(dirname "$0")/../llm/repo_basic" && pwd)
R=$SM_TMP/rules.json
LOG=$SM_TMP/run.log
FLOG=$SM_TMP/fail.log
for i in 1 2 3 4 5 6; do echo "t=$i :: progress 12$i ~ 5000 :: obj 2.34$i"; done >"$LOG"
{
  echo "step 1 loss 2"
  echo "terminate called after throwing an instance of 'flux::LockLost'"
} >"$FLOG"
printf '[{"content": "{}"}, {"endpoint": "embeddings", "dims": 8}]\n' >"$R"
llm_start "$R"

run_all() {
  "$SCHEDMATE" extract --json --repo "$REPO" -- python train.py >"$SM_TMP/x.json"
  "$SCHEDMATE" track --json "$LOG" >"$SM_TMP/t.json"
  "$SCHEDMATE" diagnose --json "$FLOG" >"$SM_TMP/d.json" || true
  "$SCHEDMATE" history add --db "$SM_TMP/h.db" --id "j$1" --duration 60 \
    --repo "$REPO" -- python train.py >/dev/null
  "$SCHEDMATE" advise --json --db "$SM_TMP/h.db" --repo "$REPO" -- python train.py \
    >"$SM_TMP/a.json"
}
run_all 1
[ "$(llm_requests)" = 0 ] || fail "the default path sent $(llm_requests) request(s)"
for f in x t d a; do
  jq -e 'has("llm") or has("llm_stats") or has("provenance") | not' \
    "$SM_TMP/$f.json" >/dev/null || fail "$f: LLM members without --llm"
done
# No internet socket at all on the default path.
if command -v strace >/dev/null && strace -f -qq -e trace=none true 2>/dev/null; then
  # LeakSanitizer cannot run under ptrace.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  strace -f -qq -e trace=socket,connect -o "$SM_TMP/strace.txt" \
    "$SCHEDMATE" extract --json --repo "$REPO" -- python train.py >/dev/null
  strace -f -qq -e trace=socket,connect -o "$SM_TMP/strace2.txt" \
    "$SCHEDMATE" track --json "$LOG" >/dev/null
  strace -f -qq -e trace=socket,connect -o "$SM_TMP/strace3.txt" \
    "$SCHEDMATE" diagnose --json "$FLOG" >/dev/null || true
  if grep -h "AF_INET\|connect(" "$SM_TMP"/strace*.txt; then
    fail "the default path opened a network socket"
  fi
  # The same tool sees the socket when the stage is on.
  strace -f -qq -e trace=socket,connect -o "$SM_TMP/strace4.txt" \
    "$SCHEDMATE" track --json --llm "$LLM_URL" "$LOG" >/dev/null
  grep -q "AF_INET" "$SM_TMP/strace4.txt" || fail "strace did not see the LLM socket"
fi

# The variable turns the stage on.
SCHEDMATE_LLM_URL=$LLM_URL "$SCHEDMATE" track --json "$LOG" >"$SM_TMP/t2.json"
[ "$(llm_requests)" -ge 1 ] || fail "SCHEDMATE_LLM_URL did not reach the server"
jq -e '.llm.ran' "$SM_TMP/t2.json" >/dev/null || fail "no llm member with the variable"
echo ok
