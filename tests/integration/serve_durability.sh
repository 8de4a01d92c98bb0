# kill -9 of schedmate serve in the middle of a stream of write-backs
# (four writers, each registering and ending jobs and noting every
# acknowledged write-back), then a restart: every acknowledged record is
# in the store and in the reloaded index, and the jobs that were
# registered but had not ended come back from the journal.  On SQLite,
# and on Redis when tests/services.sh started one.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
D=tests/data/history

cat > "$SM_TMP/writer.py" <<'EOF'
import json, sys, threading
sys.path.insert(0, sys.argv[1])
from serve_client import SchedMate

server, meta_file, acked, tag = sys.argv[2:6]
meta = json.load(open(meta_file))["metadata"]
out = open(acked, "a")
lock = threading.Lock()

def note(line):
    with lock:
        out.write(line + "\n")
        out.flush()

def writer(w):
    sm = SchedMate(server, timeout=10)
    try:
        # Jobs that stay registered (running) across the crash.
        for i in range(3):
            jid = "%s-run-%d-%d" % (tag, w, i)
            sm.register(jid, metadata=meta, gpus=4)
            note("registered " + jid)
        for i in range(100000):
            jid = "%s-%d-%d" % (tag, w, i)
            sm.register(jid, metadata=meta, gpus=4)
            a = sm.end(jid, "completed", 3000 + i % 500, sm_util=70)
            if a.get("committed") is True:
                note("acked " + jid)
    except Exception as e:  # the server was killed: stop
        note("stopped %d %s" % (w, type(e).__name__))

ts = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
EOF

run_case() {
  local db=$1 tag=$2 acked="$SM_TMP/$2.acked"
  : > "$acked"
  serve_start "$tag" --db "$db" --socket "$SM_TMP/$tag.sock" \
    --journal "$SM_TMP/$tag.journal" --rate 0
  python3 "$SM_TMP/writer.py" "$PWD/examples" "unix:$SM_TMP/$tag.sock" \
    $D/llama7b_alpaca.json "$acked" "$tag" &
  local wpid=$!
  for _ in $(seq 1 600); do
    [ "$(grep -c '^acked' "$acked")" -ge 60 ] && break
    kill -0 $wpid 2>/dev/null || break
    sleep 0.05
  done
  serve_kill "$tag"
  wait $wpid || true
  local n
  n=$(grep -c '^acked' "$acked" || true)
  [ "$n" -ge 60 ] || fail "$tag: only $n write-backs acknowledged before the kill"
  [ "$(grep -c '^stopped' "$acked")" = 4 ] || fail "$tag: writers did not notice the kill"
  # Every acknowledged record is in the store.
  expect_rc 0 $S history export --db "$db"
  jq -r .id "$SM_TMP/last.out" | sort > "$SM_TMP/$tag.stored"
  sed -n 's/^acked //p' "$acked" | sort > "$SM_TMP/$tag.want"
  missing=$(comm -23 "$SM_TMP/$tag.want" "$SM_TMP/$tag.stored" | wc -l)
  [ "$missing" = 0 ] || fail "$tag: $missing acknowledged write-backs lost"
  # A restart reloads the index from the store and the jobs from the journal.
  serve_start "$tag-2" --db "$db" --socket "$SM_TMP/$tag.sock" \
    --journal "$SM_TMP/$tag.journal"
  expect_http 200 "unix:$SM_TMP/$tag.sock" /healthz
  [ "$(body_get .history_records)" -ge "$n" ] || fail "$tag: index after restart: $(body_get .history_records) < $n"
  [ "$(body_get .history_records)" = "$(wc -l < "$SM_TMP/$tag.stored")" ] || fail "$tag: index and store differ"
  [ "$(body_get .jobs)" -ge 12 ] || fail "$tag: registered jobs lost: $(body_get .jobs)"
  for j in $(sed -n 's/^registered //p' "$acked"); do
    expect_http 200 "unix:$SM_TMP/$tag.sock" "/v1/jobs/$j"
  done
  # ... and such a job can still be written back.
  j=$(sed -n 's/^registered //p' "$acked" | head -1)
  expect_http 200 "unix:$SM_TMP/$tag.sock" "/v1/jobs/$j/end" -d '{"end_state":"completed","duration_s":100}'
  expect_http 200 "unix:$SM_TMP/$tag.sock" /v1/advise -d "{\"metadata\":$(cat $D/llama7b_alpaca.json)}"
  [ "$(body_get .estimate.n)" -ge 1 ] || fail "$tag: no estimate after restart"
  serve_stop "$tag-2"
  echo "$tag: $n write-backs acknowledged before kill -9, all found after the restart"
}

run_case "$SM_TMP/h.db" sqlite
if [ -n "${SM_REDIS_URL:-}" ]; then
  R="$SM_REDIS_URL?prefix=dur$$"
  run_case "$R" redis
  redis-cli -p "$SM_REDIS_PORT" --scan --pattern "dur$$:*" | xargs -r redis-cli -p "$SM_REDIS_PORT" del >/dev/null
fi
