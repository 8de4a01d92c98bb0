# The dev set of real failure logs (../shared/devdata/failures): the
# issue's targets, for every mode's default (the bisecting locator).
#   first error within 2 lines >= 90 %, category accuracy >= 90 %,
#   F1 of infrastructure >= 0.90, no restart/isolation for user or
#   framework faults.
. "$(dirname "$0")/../lib.sh"
dev="$SHARED/devdata/failures"
[ -r "$dev/labels.jsonl" ] || skip "no dev set at $dev (../shared absent)"
bench/diagnose/evaluate.sh "$dev" "$dev/labels.jsonl" > "$SM_TMP/dev.txt" || fail "evaluate.sh failed"
cat "$SM_TMP/dev.txt"
s=$(tail -1 "$SM_TMP/dev.txt")
awk -v s="$s" 'BEGIN {
  n = split(s, kv, " ")
  for (i = 2; i <= n; i++) { split(kv[i], p, "="); v[p[1]] = p[2] }
  ok = v["line"] >= 0.90 && v["cat"] >= 0.90 && v["infra_f1"] >= 0.90 && v["unsafe"] == 0
  exit ok ? 0 : 1
}' || fail "below target: $s"
