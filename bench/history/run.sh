#!/usr/bin/env bash
# advise on a 100,000-record history.  First the matching itself, in one
# process (bench_match.c): sm_advise (int8 index, widening top-k, identity
# check on the candidates) next to a reference that ranks every record by
# a flat scan and checks the identity of every record above the threshold,
# with equal answers.  Then the whole command (start, metadata file, index
# load, search, estimate), SQLite and (if redis-server is installed)
# Redis, optimised build; median of 7 runs each, next to the same command
# on an empty history (the fixed cost).
set -eu
cd "$(dirname "$0")/../.."
make -s all >/dev/null
S=$PWD/build/schedmate
T=$(mktemp -d)
trap 'rm -rf "$T"; [ -n "${RPID:-}" ] && kill "$RPID" 2>/dev/null; true' EXIT
awk -v N=100000 -f tests/history_gen.awk > "$T/h.jsonl"
: > "$T/empty.jsonl"
mkdir -p build/bench
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/history/bench_match.c \
  -o build/bench/bench_match build/libschedmate.a \
  $(pkg-config --libs sqlite3 hiredis yaml-0.1 libcjson) -lm -lpthread
build/bench/bench_match "$T/h.jsonl" 30
sed -n '78p' "$T/h.jsonl" | jq -c '{metadata}' > "$T/q.json"
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
time_advise() {
  for i in 1 2 3 4 5 6 7; do
    s=$(date +%s%N); "$S" advise --json --db "$1" --meta "$T/q.json" >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | median
}
"$S" history import --db "$T/empty.db" "$T/empty.jsonl" >/dev/null
floor=$(time_advise "$T/empty.db")
s=$(date +%s%N); "$S" history import --db "$T/h.db" "$T/h.jsonl" >/dev/null; e=$(date +%s%N)
adv=$(time_advise "$T/h.db")
echo "SQLite: import 100,000 records $(( (e - s) / 1000000 )) ms; advise median $adv ms (on an empty history: $floor ms)"
if command -v redis-server >/dev/null; then
  P=$((30000 + RANDOM % 20000))
  redis-server --port $P --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile "$T/r.pid" >/dev/null
  sleep 0.3; RPID=$(cat "$T/r.pid")
  s=$(date +%s%N); "$S" history import --db "redis://127.0.0.1:$P/0" "$T/h.jsonl" >/dev/null; e=$(date +%s%N)
  echo "Redis:  import 100,000 records $(( (e - s) / 1000000 )) ms; advise median $(time_advise "redis://127.0.0.1:$P/0") ms"
fi
