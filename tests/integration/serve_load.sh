# A short, bounded load test of schedmate serve on loopback TCP (the full
# one is bench/serve/run.sh): 16 concurrent clients send 2 x 1,000 advise
# requests against a 10,000-record history; every request must be
# answered 200 with an estimate or a fallback, none may fail, the answers
# must equal the command's for the same job, and the server's resident
# memory must not grow between the first and the second 1,000.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve_lib.sh"
S=$SCHEDMATE
awk -v N=10000 -f tests/history_gen.awk > "$SM_TMP/h.jsonl"
expect_rc 0 $S history import --db "$SM_TMP/h.db" "$SM_TMP/h.jsonl"
awk 'NR % 50 == 3' "$SM_TMP/h.jsonl" | head -200 | jq -c '{metadata}' > "$SM_TMP/bodies.jsonl"
head -c 48 /dev/urandom | base64 | tr -d '\n/+=' > "$SM_TMP/token"
# A sanitizer build keeps freed memory in quarantine: keep it small, so
# that what is measured is the service's own memory.
ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=4:malloc_context_size=5" \
  serve_start load --db "$SM_TMP/h.db" --listen 127.0.0.1:0 \
  --socket "$SM_TMP/s.sock" --token-file "$SM_TMP/token" --rate 0 --quiet
T=$(serve_addr load 2)
PID=$(cat "$SM_TMP/load.pid")

cat > "$SM_TMP/load.py" <<'EOF'
import json, sys, threading, time
sys.path.insert(0, sys.argv[1])
from serve_client import SchedMate

server, token, bodies, n, clients = sys.argv[2], open(sys.argv[3]).read().strip(), \
    [json.loads(l) for l in open(sys.argv[4])], int(sys.argv[5]), int(sys.argv[6])
lock = threading.Lock()
state = {"next": 0, "errors": 0, "estimates": 0, "fallbacks": 0, "lat": []}

def client():
    sm = SchedMate(server, token=token, timeout=60)
    while True:
        with lock:
            i = state["next"]
            state["next"] += 1
        if i >= n:
            return
        t0 = time.monotonic()
        try:
            a = sm.request("POST", "/v1/advise", bodies[i % len(bodies)])
            ok = isinstance(a.get("fallback"), bool) and ("estimate" in a)
        except Exception as e:
            ok = False
            print("error:", e, file=sys.stderr)
        dt = time.monotonic() - t0
        with lock:
            state["lat"].append(dt)
            if not ok:
                state["errors"] += 1
            elif a["fallback"]:
                state["fallbacks"] += 1
            else:
                state["estimates"] += 1

t0 = time.monotonic()
ts = [threading.Thread(target=client) for _ in range(clients)]
for t in ts:
    t.start()
for t in ts:
    t.join()
wall = time.monotonic() - t0
lat = sorted(state["lat"])
print(json.dumps({"n": n, "errors": state["errors"], "estimates": state["estimates"],
                  "fallbacks": state["fallbacks"], "p50_ms": 1000 * lat[len(lat) // 2],
                  "p99_ms": 1000 * lat[int(len(lat) * 0.99)], "rps": n / wall}))
EOF
rss() { awk '/^VmRSS/{print $2}' "/proc/$PID/status"; }
timeout 300 python3 "$SM_TMP/load.py" "$PWD/examples" "$T" "$SM_TMP/token" "$SM_TMP/bodies.jsonl" 1000 16 > "$SM_TMP/r1.json"
r1=$(rss)
timeout 300 python3 "$SM_TMP/load.py" "$PWD/examples" "$T" "$SM_TMP/token" "$SM_TMP/bodies.jsonl" 1000 16 > "$SM_TMP/r2.json"
r2=$(rss)
for r in r1 r2; do
  [ "$(jget "$SM_TMP/$r.json" .errors)" = 0 ] || fail "$r: $(jget "$SM_TMP/$r.json" .errors) errors"
  [ "$(jget "$SM_TMP/$r.json" '.estimates + .fallbacks')" = 1000 ] || fail "$r: not every request answered"
done
[ "$(jget "$SM_TMP/r1.json" .estimates)" -gt 500 ] || fail "too few estimates: $(cat "$SM_TMP/r1.json")"
awk -v a="$r1" -v b="$r2" 'BEGIN{exit !(b <= a * 1.05 + 8192)}' || fail "memory grew from $r1 kB to $r2 kB"
# The answers under load are the command's.
head -1 "$SM_TMP/bodies.jsonl" > "$SM_TMP/q.json"
expect_rc 0 $S advise --json --db "$SM_TMP/h.db" --meta "$SM_TMP/q.json"
jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out" > "$SM_TMP/cli.json"
expect_http 200 "$T" /v1/advise -H "Authorization: Bearer $(cat "$SM_TMP/token")" --data-binary @"$SM_TMP/q.json"
diff "$SM_TMP/cli.json" <(jq -c 'del(.elapsed_ms)' "$SM_TMP/body") || fail "answer under load differs from the command's"
expect_http 200 "$T" /metrics -H "Authorization: Bearer $(cat "$SM_TMP/token")"
grep -q '^schedmate_serve_requests_total{endpoint="advise",code="200"} 2001$' "$SM_TMP/body" || fail "request count"
serve_stop load
echo "load: $(cat "$SM_TMP/r1.json"); rss $r1 kB -> $r2 kB"
