# Every fixture repository under tests/fixtures/*/ (written for these
# tests, in the layouts real projects use) gives exactly the metadata and
# evidence its case.json expects: each of the 16 fields, null included.
. "$(dirname "$0")/../lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
n=0
for case in "$FIX"/*/case.json; do
  dir=$(dirname "$case")
  name=$(basename "$dir")
  cwd=$(jq -r '.cwd' "$case")
  mapfile -t cmd < <(jq -r '.command[]' "$case")
  out="$SM_TMP/$name.json"
  "$SCHEDMATE" extract --json --repo "$dir/repo" --cwd "$cwd" -- "${cmd[@]}" \
    >"$out" 2>"$SM_TMP/$name.err" || { cat "$SM_TMP/$name.err"; fail "$name: exit $?"; }
  jq -e 'has("metadata") and has("evidence") and has("files_read") and has("elapsed_ms") and has("warnings")' \
    "$out" >/dev/null || fail "$name: output misses a contract key"
  bad=$(jq -r --slurpfile c "$case" '
    . as $o | $c[0] as $c
    | [ ($c.expect | to_entries[]
         | . as $e | $o.metadata[$e.key] as $g
         | select(
             if ($e.value == null) then $g != null
             elif ($e.value | type) == "number" then
               (($g | type) != "number") or
               ((($g - $e.value) | fabs) > 1e-9 * ([1, ($e.value | fabs)] | max))
             else $g != $e.value end)
         | "\($e.key): got \($g | tojson), want \($e.value | tojson)"),
        ($c.evidence // {} | to_entries[]
         | select($o.evidence[.key] != .value)
         | "evidence \(.key): got \($o.evidence[.key] | tojson), want \(.value)")
      ] | .[]' "$out")
  [ -z "$bad" ] || { echo "$name:"; echo "$bad" | sed 's/^/  /'; cat "$out"; fail "$name differs"; }
  # Every known field carries its evidence.
  jq -e '[.metadata | to_entries[] | select(.value != null) | .key] - (.evidence | keys) == []' \
    "$out" >/dev/null || fail "$name: a known field has no evidence"
  n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n fixture repositories"
echo "$n fixtures ok"
