# issue 18 item 4: absurd numbers are refused at every way into the history
# (history add, history perf, import of JSON lines), with exit 2 and a
# message naming the field; nothing is stored, and advise never answers
# with an infinite or absurd estimate.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
DB="$SM_TMP/h.db"
R="$SM_TMP/repo"
mkdir -p "$R"
cat >"$R/train.py" <<'PY'
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--model", default="resnet50")
parser.add_argument("--dataset", default="imagenet-1k")
parser.add_argument("--epochs", type=int, default=90)
args = parser.parse_args()
PY
add() { expect_rc "$1" $S history add --db "$DB" "${@:2}" --repo "$R" -- python train.py; }
add 0 --id good-1 --duration 3600 --sm-util 80
for bad in "--duration 1.7e308" "--duration -1" "--duration nan" "--duration inf" \
           "--duration 1e12" "--duration 3600 --sm-util 100.5" \
           "--duration 3600 --sm-util -3" "--duration 3600 --throughput -5" \
           "--duration 3600 --throughput 1e300" "--duration 3600 --submit-time 1e300" \
           "--duration 3600 --submit-time -7"; do
  # shellcheck disable=SC2086
  add 2 --id bad-1 $bad
  field=$(echo "$bad" | awk '{print $(NF-1)}' | sed 's/^--//; s/-/./g')
  grep -qiE "$field" "$SM_TMP/last.err" || { cat "$SM_TMP/last.err"; fail "message for $bad does not name the field"; }
done
grep -q "out of range\|expected a number\|must be" "$SM_TMP/last.err" || fail "message: $(cat "$SM_TMP/last.err")"
expect_rc 2 $S history perf --db "$DB" --id good-1 --gpu-type a100 --gpus 8 --throughput 1e300
expect_rc 2 $S history perf --db "$DB" --id good-1 --gpu-type a100 --gpus 8 --throughput -1
expect_rc 0 $S history perf --db "$DB" --id good-1 --gpu-type a100 --gpus 8 --throughput 950
# Import: a bad line stops the import with file:line and the field; the
# lines before it are kept.
cat >"$SM_TMP/in.jsonl" <<'EOF2'
{"id":"imp-1","duration_s":3500,"end_state":"completed","metadata":{"model_name":"resnet50","iterations":90}}
{"id":"imp-2","duration_s":1.7e308,"end_state":"completed","metadata":{"model_name":"resnet50","iterations":90}}
EOF2
expect_rc 2 $S history import --db "$DB" "$SM_TMP/in.jsonl"
grep -q "in.jsonl:2:.*duration_s" "$SM_TMP/last.err" || fail "import message: $(cat "$SM_TMP/last.err")"
grep -q "1 records imported before" "$SM_TMP/last.err" || fail "import count: $(cat "$SM_TMP/last.err")"
for line in '{"id":"imp-3","duration_s":10,"sm_util":250}' \
            '{"id":"imp-3","duration_s":10,"metadata":{"lr":1e300}}' \
            '{"id":"imp-3","duration_s":10,"perf":[{"gpu_type":"a100","gpus":1e12,"throughput":3}]}'; do
  echo "$line" >"$SM_TMP/one.jsonl"
  expect_rc 2 $S history import --db "$DB" "$SM_TMP/one.jsonl"
  grep -q "one.jsonl:1:" "$SM_TMP/last.err" || fail "import message: $(cat "$SM_TMP/last.err")"
done
# Only the good records are stored.
expect_rc 0 $S history list --json --db "$DB"
[ "$(jget "$SM_TMP/last.out" '.jobs|map(.id)|sort|join(",")')" = "good-1,imp-1" ] \
  || fail "stored: $(jget "$SM_TMP/last.out" '.jobs|map(.id)|join(",")')"
expect_rc 0 $S advise --json --db "$DB" --repo "$R" -- python train.py
grep -Eqi ":[[:space:]]*-?(inf|nan)([,}]|$)" "$SM_TMP/last.out" && fail "advise printed a non-finite number: $(cat "$SM_TMP/last.out")"
d=$(jget "$SM_TMP/last.out" .estimate.duration_s)
[ "$d" = 3600 ] || fail "estimate $d"
echo ok
