# tests/llm/lib.sh - the replay server for the LLM stage's tests, sourced
# after tests/lib.sh.  llm_start RULES.json starts tests/llm/replay.py on
# 127.0.0.1 and a port the system picks and sets LLM_URL, LLM_LOG (one
# JSON line per request received) and LLM_PID; the server is stopped by
# its PID when the test exits (or by llm_stop).
LLM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Nothing here may go through a proxy.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
# No LLM from the environment unless a test asks for it.
unset SCHEDMATE_LLM_URL SCHEDMATE_LLM_MODEL SCHEDMATE_LLM_KEY_FILE \
      SCHEDMATE_LLM_CACHE
LLM_PID=
command -v python3 >/dev/null || skip "python3 is needed for the replay server"
llm_stop() {
  if [ -n "${LLM_PID:-}" ]; then
    kill "$LLM_PID" 2>/dev/null || true
    wait "$LLM_PID" 2>/dev/null || true
    LLM_PID=
  fi
}
trap llm_stop EXIT
llm_start() {
  llm_stop
  LLM_LOG=$SM_TMP/llm-requests.jsonl
  rm -f "$SM_TMP/llm.port"
  : >"$LLM_LOG"
  python3 "$LLM_DIR/replay.py" --script "$1" --port-file "$SM_TMP/llm.port" \
    --log "$LLM_LOG" &
  LLM_PID=$!
  for _ in $(seq 200); do
    [ -s "$SM_TMP/llm.port" ] && break
    sleep 0.05
  done
  [ -s "$SM_TMP/llm.port" ] || fail "the replay server did not start"
  LLM_URL="http://127.0.0.1:$(cat "$SM_TMP/llm.port")"
}
# Requests the server received so far.
llm_requests() { wc -l <"$LLM_LOG" | tr -d ' '; }
