# serve_lib.sh - helpers of the `schedmate serve` integration tests
# (sourced after lib.sh).  Servers are started in the background with a
# ready file, remembered by PID and stopped by PID when the test ends,
# whatever happens.
#
#   serve_start NAME ARGS...   start `schedmate serve ARGS` and wait for it
#   serve_stop NAME            SIGTERM, wait, check it exited 0
#   serve_kill NAME            SIGKILL (no clean-up by the server)
#   serve_addr NAME [N]        its N-th address (1: the first)
#   hcurl ADDR PATH [ARGS...]  one request with curl; prints the status,
#                              the body goes to $SM_TMP/body, the headers
#                              to $SM_TMP/headers
# The Python helpers import examples/serve_client.py: no bytecode there.
export PYTHONDONTWRITEBYTECODE=1
command -v curl >/dev/null || skip "curl not installed (scripts/deps.sh --test installs it)"
SERVE_PIDS=""
serve_cleanup() {
  for p in $SERVE_PIDS; do kill -9 "$p" 2>/dev/null || true; done
}
trap serve_cleanup EXIT

serve_start() {
  local name=$1; shift
  rm -f "$SM_TMP/$name.ready"
  "$SCHEDMATE" serve --ready-file "$SM_TMP/$name.ready" "$@" \
    >"$SM_TMP/$name.log" 2>&1 &
  echo $! > "$SM_TMP/$name.pid"
  SERVE_PIDS="$SERVE_PIDS $!"
  for _ in $(seq 1 600); do
    [ -s "$SM_TMP/$name.ready" ] && return 0
    kill -0 "$(cat "$SM_TMP/$name.pid")" 2>/dev/null || break
    sleep 0.1
  done
  tail -20 "$SM_TMP/$name.log" >&2
  fail "serve $name did not start"
}

serve_stop() {
  local pid rc=0
  pid=$(cat "$SM_TMP/$1.pid")
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  [ "$rc" = 0 ] || { tail -20 "$SM_TMP/$1.log" >&2; fail "serve $1 exited $rc after SIGTERM"; }
}

serve_kill() {
  local pid
  pid=$(cat "$SM_TMP/$1.pid")
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
}

serve_addr() {
  sed -n "${2:-1}p" "$SM_TMP/$1.ready"
}

# hcurl ADDR PATH [curl args...]
hcurl() {
  local addr=$1 path=$2; shift 2
  local base
  case "$addr" in
    unix:*) base=(--unix-socket "${addr#unix:}" "http://localhost$path") ;;
    *) base=("$addr$path") ;;
  esac
  curl -sS -o "$SM_TMP/body" -D "$SM_TMP/headers" -w '%{http_code}' \
    --max-time 60 "$@" "${base[@]}"
}

# expect_http CODE ADDR PATH [curl args...]: fails unless the status is CODE.
expect_http() {
  local want=$1 got; shift
  got=$(hcurl "$@") || true
  [ "$got" = "$want" ] || { cat "$SM_TMP/body" >&2; echo >&2; fail "$2: HTTP $got, expected $want ($*)"; }
}

# body_get EXPR: a jq expression on the last body.
body_get() { jq -r "$1" "$SM_TMP/body"; }
