# issue 18 item 3: a large `history import` does not lock other writers
# out: `history add` runs while it imports (each with the default 2 s lock
# wait) and every record, imported or added, is in the history afterwards.
# Prints the import time and the WAL's largest size.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
DB="$SM_TMP/h.db"
N=${SM_IMPORT_N:-60000}
awk -v N="$N" -f tests/history_gen.awk >"$SM_TMP/big.jsonl"
R="$SM_TMP/repo"
mkdir -p "$R"
printf 'import torch\nprint("train")\n' >"$R/train.py"
expect_rc 0 $S history add --db "$DB" --id first --duration 10 --repo "$R" -- python train.py
t0=$(date +%s.%N)
$S history import --db "$DB" "$SM_TMP/big.jsonl" >"$SM_TMP/import.out" 2>"$SM_TMP/import.err" &
imp=$!
trap 'kill $imp 2>/dev/null; wait $imp 2>/dev/null' EXIT
# Wait until the import has committed something, then add beside it.
for _ in $(seq 1 600); do
  [ -s "$DB-wal" ] && break
  kill -0 $imp 2>/dev/null || break
  sleep 0.05
done
added=0 wal_max=0
while kill -0 $imp 2>/dev/null && [ $added -lt 10 ]; do
  added=$((added + 1))
  expect_rc 0 $S history add --db "$DB" --id "during-$added" --duration $((100 + added)) \
    --repo "$R" -- python train.py
  w=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
  [ "$w" -gt "$wal_max" ] && wal_max=$w
done
wait $imp || { cat "$SM_TMP/import.err"; fail "import failed"; }
trap - EXIT
t1=$(date +%s.%N)
grep -q "imported $N records" "$SM_TMP/import.out" || fail "import: $(cat "$SM_TMP/import.out" "$SM_TMP/import.err")"
[ $added -ge 2 ] || fail "the import ended before two adds could run beside it (only $added)"
expect_rc 0 $S history list --json --db "$DB"
[ "$(jget "$SM_TMP/last.out" .count)" = $((N + 1 + added)) ] || fail "count $(jget "$SM_TMP/last.out" .count), expected $((N + 1 + added))"
for i in $(seq 1 $added); do
  expect_rc 0 $S history show --json --db "$DB" "during-$i"
done
echo "import of $N records: $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s with $added adds beside it (all kept); WAL at most $((wal_max / 1048576)) MiB"
echo ok
