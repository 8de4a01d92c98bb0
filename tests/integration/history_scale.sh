# A 100,000-record history: import, then advise finds the right jobs; the
# SQLite and Redis stores give identical answers.  Prints the latency (it is
# not asserted: timings on shared machines are noise).
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
awk -v N=100000 -f tests/history_gen.awk > "$SM_TMP/h100k.jsonl"
DB="$SM_TMP/h100k.db"
t0=$(date +%s.%N)
expect_rc 0 $S history import --db "$DB" "$SM_TMP/h100k.jsonl"
t1=$(date +%s.%N)
grep -q "imported 100000 records" "$SM_TMP/last.out" || fail "import count"
# Query = the metadata of job-77, as `extract` would give it.
sed -n '78p' "$SM_TMP/h100k.jsonl" | jq -c '{metadata}' > "$SM_TMP/q.json"
want_model=$(jq -r '.metadata.model_name' "$SM_TMP/q.json")
expect_rc 0 $S advise --json --top-k 10 --db "$DB" --meta "$SM_TMP/q.json"
t2=$(date +%s.%N)
cp "$SM_TMP/last.out" "$SM_TMP/sqlite.out"
[ "$(jget "$SM_TMP/sqlite.out" '.matches|length')" = 10 ] || fail "10 matches"
[ "$(jget "$SM_TMP/sqlite.out" '.matches[0].score')" = 1 ] || fail "exact match first"
ids=$(jget "$SM_TMP/sqlite.out" '.matches[].job_id' | sed 's/job-//' | awk '{print $1+1}')
for n in $ids; do
  m=$(sed -n "${n}p" "$SM_TMP/h100k.jsonl" | jq -r '.metadata.model_name')
  [ "$m" = "$want_model" ] || fail "match job-$((n-1)) is $m, not $want_model"
done
echo "SQLite: import 100k $(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') s, advise $(awk -v a=$t1 -v b=$t2 'BEGIN{printf "%.3f", b-a}') s ($(basename $(dirname $SCHEDMATE)) build)"
if [ -n "${SM_REDIS_URL:-}" ]; then
  R="$SM_REDIS_URL?prefix=scale$$"
  expect_rc 0 $S history import --db "$R" "$SM_TMP/h100k.jsonl"
  t3=$(date +%s.%N)
  expect_rc 0 $S advise --json --top-k 10 --db "$R" --meta "$SM_TMP/q.json"
  t4=$(date +%s.%N)
  diff <(jq -c 'del(.elapsed_ms)' "$SM_TMP/sqlite.out") <(jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out") || fail "Redis and SQLite disagree"
  echo "Redis: advise $(awk -v a=$t3 -v b=$t4 'BEGIN{printf "%.3f", b-a}') s ($(basename $(dirname $SCHEDMATE)) build)"
  redis-cli -p "$SM_REDIS_PORT" --scan --pattern "scale$$:*" | xargs -r redis-cli -p "$SM_REDIS_PORT" del >/dev/null
fi
