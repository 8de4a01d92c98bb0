# The hand-written fixture logs of tests/data/failure (one per failure
# family; labels in expected.jsonl): stricter than the dev-set targets,
# since every family there is meant to be known.
. "$(dirname "$0")/../lib.sh"
D=tests/data/failure
bench/diagnose/evaluate.sh "$D" "$D/expected.jsonl" > "$SM_TMP/fx.txt" || fail "evaluate.sh failed"
cat "$SM_TMP/fx.txt"
s=$(tail -1 "$SM_TMP/fx.txt")
awk -v s="$s" 'BEGIN {
  n = split(s, kv, " ")
  for (i = 2; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] }
  ok = v["n"] >= 40 && v["line"] >= 0.95 && v["cat"] >= 0.95 && v["infra_f1"] >= 0.95 && v["comp"] >= 0.95 && v["unsafe"] == 0
  exit ok ? 0 : 1
}' || fail "below target: $s"
