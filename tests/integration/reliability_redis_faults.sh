# issue 18 item 2: a Redis server that drips one byte every 0.5 s, sends a
# 1 GiB bulk string, announces a 2-billion-element array, never ends a
# line, or says nothing: every Redis operation has a total deadline (the
# store timeout, 2 s) and replies are capped, so `advise` answers with the
# documented fallback history_unavailable (exit 0) and `history list`
# fails with exit 2, both quickly and in bounded memory.  The fake server
# (Python, 127.0.0.1, a free port) is started and stopped here.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 not installed"
S=$SCHEDMATE
H="$(dirname "$0")/../helpers"
printf '{"metadata":{"model_name":"resnet50","task":"image_classification","dataset":"imagenet-1k","iterations":90,"iteration_type":"epochs","gpus":8}}\n' >"$SM_TMP/q.json"
srv=""
stop_server() { if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi; srv=""; }
trap stop_server EXIT
start_server() {
  rm -f "$SM_TMP/port"
  python3 "$H/fake_redis.py" "$1" "$2" "$SM_TMP/port" 2>"$SM_TMP/server.err" &
  srv=$!
  for _ in $(seq 1 100); do [ -s "$SM_TMP/port" ] && break; sleep 0.05; done
  [ -s "$SM_TMP/port" ] || { cat "$SM_TMP/server.err"; fail "fake server did not start"; }
  URL="redis://127.0.0.1:$(cat "$SM_TMP/port")/0"
}
# run_case MODE AFTER: AFTER normal replies first (0: the fault hits the
# open; 2: advise's index load after the version check, list's first page
# of ids).
run_case() {
  start_server "$1" "$2"
  t0=$(date +%s.%N)
  rc=0
  timeout 60 python3 "$H/maxrss.py" "$SM_TMP/rss" \
    "$S" advise --json --db "$URL" --meta "$SM_TMP/q.json" >"$SM_TMP/out.json" 2>"$SM_TMP/err" || rc=$?
  t1=$(date +%s.%N)
  [ $rc = 0 ] || { cat "$SM_TMP/err"; fail "$1/$2: advise exited $rc (124: it hung)"; }
  [ "$(jget "$SM_TMP/out.json" .fallback_reason)" = history_unavailable ] \
    || fail "$1/$2: fallback $(jget "$SM_TMP/out.json" .fallback_reason)"
  rss=$(cat "$SM_TMP/rss")
  [ "$rss" -lt 400000 ] || fail "$1/$2: advise grew to $((rss / 1024)) MiB"
  stop_server
  # history list: the open, then the first page of ids.
  start_server "$1" "$(( $2 > 1 ? 1 : $2 ))"
  rc=0
  timeout 60 "$S" history list --db "$URL" >/dev/null 2>"$SM_TMP/err" || rc=$?
  [ $rc = 2 ] || { cat "$SM_TMP/err"; fail "$1/$2: history list exited $rc (124: it hung)"; }
  grep -q "redis 127.0.0.1" "$SM_TMP/err" || fail "$1/$2: message $(cat "$SM_TMP/err")"
  printf '%-9s after %s: advise %.1f s, %d MiB peak, %s\n' "$1" "$2" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" $((rss / 1024)) \
    "$(jget "$SM_TMP/out.json" .fallback_detail)"
  stop_server
}
for mode in drip bigbulk bigarray longline silent; do
  run_case $mode 0
  run_case $mode 2
done
echo ok
