#!/usr/bin/env bash
# schedmate serve next to the command, on the same 100,000-record history
# (tests/history_gen.awk, SQLite), optimised build:
#
#   reference  `schedmate advise --meta` as a process: 11 runs one after
#              another (p50, and the slowest as p99), and 32 runs 16 at a
#              time (throughput);
#   serve      POST /v1/advise over loopback TCP with the bearer token,
#              1 client x 2,000 requests, then 16 clients x 10,000
#              requests twice (load.c: C clients, kept-alive connections;
#              queries cycle through 200 jobs of the history);
#
# and prints p50 / p99 / throughput side by side with the ratios, the
# errors (must be 0) and the server's resident memory after the load, a
# warm-up, 10,000 and 20,000 requests (must stay flat).  Bounded: it stops
# by itself.  N=... CLIENTS=... change the size.
#
# The generated history repeats each of its 480 job kinds about 200 times
# with identical metadata (recurring jobs), which the service's
# pre-search groups (docs/serve.md).  DISTINCT=1 gives every record its
# own fingerprint instead (its lr scaled by 1 + (id mod 997) / 997: a
# field that is not identity, so the same jobs still match, at scores a
# hair apart): the worst case for that grouping.
set -eu
cd "$(dirname "$0")/../.."
make -s all >/dev/null
N=${N:-10000}
CLIENTS=${CLIENTS:-16}
RECORDS=${RECORDS:-100000}
mkdir -p build/bench
LOAD=build/bench/serve_load
# The load generator uses the library's HTTP client and file helpers
# only (src/serve/http_client.c, src/util): nothing but libc, libm and
# pthreads behind them (no store, parser or Slurm library).
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/serve/load.c -o "$LOAD" \
  build/libschedmate.a -lm -lpthread
S=$PWD/build/schedmate
T=$(mktemp -d /tmp/sm-bench-serve.XXXXXX)
SPID=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$T"' EXIT
awk -v N="$RECORDS" -f tests/history_gen.awk > "$T/h.jsonl"
if [ "${DISTINCT:-0}" = 1 ]; then
  jq -c '.metadata.lr *= (1 + ((.id | ltrimstr("job-") | tonumber) % 997) / 997)' \
    "$T/h.jsonl" > "$T/h2.jsonl"
  mv "$T/h2.jsonl" "$T/h.jsonl"
fi
"$S" history import --db "$T/h.db" "$T/h.jsonl" >/dev/null
# The reference's query: job-77's metadata, as bench/history uses.
sed -n '78p' "$T/h.jsonl" | jq -c '{metadata}' > "$T/q.json"
# The service's queries: 200 jobs spread over the history.
awk -v n="$RECORDS" 'NR % int(n / 200) == 78 % int(n / 200)' "$T/h.jsonl" |
  head -200 | jq -c '{metadata}' > "$T/bodies.jsonl"

ms() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", (b - a) * 1000}'; }
cli=()
for i in $(seq 1 11); do
  a=$(date +%s.%N); "$S" advise --json --db "$T/h.db" --meta "$T/q.json" >/dev/null; b=$(date +%s.%N)
  cli+=("$(ms "$a" "$b")")
done
sorted=$(printf '%s\n' "${cli[@]}" | sort -n)
cli_p50=$(echo "$sorted" | sed -n 6p)
cli_p99=$(echo "$sorted" | tail -1)
a=$(date +%s.%N)
seq 1 32 | xargs -P "$CLIENTS" -I{} "$S" advise --json --db "$T/h.db" --meta "$T/q.json" >/dev/null
b=$(date +%s.%N)
cli_tp=$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f", 32 / (b - a)}')

head -c 48 /dev/urandom | base64 | tr -d '\n/+=' > "$T/token"
chmod 600 "$T/token"
"$S" serve --db "$T/h.db" --socket "$T/s.sock" --listen 127.0.0.1:0 \
  --token-file "$T/token" --rate 0 --quiet --ready-file "$T/ready" \
  --workers submit="$(nproc)" --queue submit=1024 2>"$T/serve.log" &
SPID=$!
for _ in $(seq 1 600); do [ -s "$T/ready" ] && break; sleep 0.1; done
[ -s "$T/ready" ] || { cat "$T/serve.log"; echo "serve did not start"; exit 1; }
ADDR=$(sed -n 2p "$T/ready")
rss() { awk '/^VmRSS/{print $2}' "/proc/$SPID/status"; }
rss_loaded=$(rss)
run() { "$LOAD" "$ADDR" "$1" "$2" "$T/bodies.jsonl" --token-file "$T/token" --pid "$SPID"; }
run 1000 "$CLIENTS" > "$T/warm.json"
rss_warm=$(rss)
run 2000 1 > "$T/one.json"
run "$N" "$CLIENTS" > "$T/many.json"
rss_10k=$(rss)
run "$N" "$CLIENTS" > "$T/many2.json"
rss_20k=$(rss)
kill -TERM "$SPID"; wait "$SPID" || true; SPID=

j() { jq -r "$2" "$T/$1.json"; }
errors=$(( $(j warm .errors) + $(j one .errors) + $(j many .errors) + $(j many2 .errors) ))
echo "advise on a $RECORDS-record history (SQLite$([ "${DISTINCT:-0}" = 1 ] && echo ", every fingerprint distinct")), $(nproc) cores, optimised build"
printf '%-34s %10s %10s %14s %8s\n' "" p50 p99 throughput errors
printf '%-34s %7s ms %7s ms %10s /s %8s\n' "CLI advise (a process per query)" "$cli_p50" "$cli_p99" "$cli_tp" -
printf '%-34s %7.2f ms %7.2f ms %10.0f /s %8d\n' "serve, 1 client x 2000" "$(j one .p50_ms)" "$(j one .p99_ms)" "$(j one .throughput_rps)" "$(j one .errors)"
printf '%-34s %7.2f ms %7.2f ms %10.0f /s %8d\n' "serve, $CLIENTS clients x $N" "$(j many .p50_ms)" "$(j many .p99_ms)" "$(j many .throughput_rps)" "$(j many .errors)"
printf '%-34s %7.2f ms %7.2f ms %10.0f /s %8d\n' "serve, $CLIENTS clients x $N (again)" "$(j many2 .p50_ms)" "$(j many2 .p99_ms)" "$(j many2 .throughput_rps)" "$(j many2 .errors)"
awk -v c="$cli_p50" -v a="$(j one .p50_ms)" -v b="$(j many .p50_ms)" -v ct="$cli_tp" -v t="$(j many .throughput_rps)" \
  -v k="$CLIENTS" 'BEGIN{printf "ratio CLI/serve: p50 %.0fx (1 client), %.0fx (%s clients); throughput %.0fx\n", c / a, c / b, k, t / ct}'
echo "serve resident memory: loaded $((rss_loaded / 1024)) MB, after warm-up $((rss_warm / 1024)) MB, after $N requests $((rss_10k / 1024)) MB, after $((2 * N)) requests $((rss_20k / 1024)) MB"
[ "$errors" = 0 ] || { echo "FAIL: $errors errors"; exit 1; }
# Flat: the second 10,000 requests may not add more than 5 % (and 8 MB).
awk -v a="$rss_10k" -v b="$rss_20k" 'BEGIN{exit !(b <= a * 1.05 + 8192)}' || { echo "FAIL: memory grows"; exit 1; }
