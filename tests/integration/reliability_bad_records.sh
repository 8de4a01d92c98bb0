# issue 18 item 5: five damaged rows in a history of 10,000 (not JSON, not
# an object, an absurd value, a damaged fingerprint and record, no id) do
# not make the history unavailable: list, export and advise keep
# answering, skip the bad rows, count them and name the first by file and
# row.  The same for Redis when a server is running.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 not installed"
S=$SCHEDMATE
DB="$SM_TMP/h.db"
awk -v N=10000 -f tests/history_gen.awk >"$SM_TMP/h.jsonl"
expect_rc 0 $S history import --db "$DB" "$SM_TMP/h.jsonl"
python3 - "$DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE jobs SET record = 'garbage{' WHERE id = 'job-41'")
db.execute("UPDATE jobs SET record = '[1,2,3]' WHERE id = 'job-2000'")
db.execute("UPDATE jobs SET record = json_set(record, '$.duration_s', 1.7e308) WHERE id = 'job-4000'")
db.execute("UPDATE jobs SET fp = x'00', record = json_set(record, '$.sm_util', 500) WHERE id = 'job-6000'")
db.execute("UPDATE jobs SET record = json_remove(record, '$.id') WHERE id = 'job-8000'")
db.commit()
PY
expect_rc 0 $S history list --json --db "$DB"
[ "$(jget "$SM_TMP/last.out" .count)" = 9995 ] || fail "list count $(jget "$SM_TMP/last.out" .count)"
[ "$(jget "$SM_TMP/last.out" .skipped)" = 5 ] || fail "skipped $(jget "$SM_TMP/last.out" .skipped)"
grep -q "skipped 5 bad records" "$SM_TMP/last.err" || fail "no warning: $(cat "$SM_TMP/last.err")"
grep -q "h.db: row 42 (id 'job-41')" "$SM_TMP/last.err" || fail "first bad record not named: $(cat "$SM_TMP/last.err")"
expect_rc 0 $S history list --db "$DB"
[ "$(wc -l <"$SM_TMP/last.out")" = 9995 ] || fail "list lines"
expect_rc 0 $S history export --db "$DB" --out "$SM_TMP/out.jsonl"
[ "$(wc -l <"$SM_TMP/out.jsonl")" = 9995 ] || fail "export lines"
grep -q "skipped 5 bad records" "$SM_TMP/last.err" || fail "export warning: $(cat "$SM_TMP/last.err")"
expect_rc 2 $S history show --db "$DB" job-41
grep -q "row 42 (id 'job-41')" "$SM_TMP/last.err" || fail "show message: $(cat "$SM_TMP/last.err")"
# The damaged rows' fingerprints still match their kind: advise must skip
# them, not fall back to history_unavailable.
for id in job-41 job-2000 job-4000 job-6000 job-8000 job-77; do
  n=$(( ${id#job-} + 1 ))
  sed -n "${n}p" "$SM_TMP/h.jsonl" | jq -c '{metadata}' >"$SM_TMP/q.json"
  expect_rc 0 $S advise --json --top-k 10 --db "$DB" --meta "$SM_TMP/q.json"
  r=$(jget "$SM_TMP/last.out" .fallback_reason)
  [ "$r" != history_unavailable ] || fail "advise for $id: $(jget "$SM_TMP/last.out" .fallback_detail)"
  jq -e --arg b "$id" '[.matches[].job_id] | index("job-41","job-2000","job-4000","job-6000","job-8000") == null' "$SM_TMP/last.out" >/dev/null \
    || fail "advise for $id returned a damaged record"
done
if [ -n "${SM_REDIS_URL:-}" ]; then
  U="$SM_REDIS_URL?prefix=bad$$"
  expect_rc 0 $S history import --db "$U" "$SM_TMP/h.jsonl"
  p=$SM_REDIS_PORT
  redis-cli -p "$p" hset "bad$$:rec" job-41 'garbage{' >/dev/null
  redis-cli -p "$p" hset "bad$$:rec" job-2000 '[1,2,3]' >/dev/null
  redis-cli -p "$p" hset "bad$$:fp" job-6000 'x' >/dev/null
  redis-cli -p "$p" hset "bad$$:rec" job-6000 '{"id":"job-6000","duration_s":-5}' >/dev/null
  expect_rc 0 $S history list --json --db "$U"
  [ "$(jget "$SM_TMP/last.out" .count)" = 9997 ] || fail "redis list count $(jget "$SM_TMP/last.out" .count)"
  grep -q "bad$$:rec field 'job-41'" "$SM_TMP/last.err" || fail "redis first bad record: $(cat "$SM_TMP/last.err")"
  sed -n "42p" "$SM_TMP/h.jsonl" | jq -c '{metadata}' >"$SM_TMP/q.json"
  expect_rc 0 $S advise --json --top-k 10 --db "$U" --meta "$SM_TMP/q.json"
  [ "$(jget "$SM_TMP/last.out" .fallback_reason)" != history_unavailable ] || fail "redis advise: $(jget "$SM_TMP/last.out" .fallback_detail)"
  redis-cli -p "$p" --scan --pattern "bad$$:*" | xargs -r redis-cli -p "$p" del >/dev/null
fi
echo ok
