# Runs `schedmate track --json` over every log of the shared development
# set (devdata/progress, 52 real logs with hand-checked labels) and scores
# it the way the project is measured:
#
#   has_progress false      -> status "missing";
#   otherwise status "ok" and
#     step       equal to last_step (or the accepted alternative alt),
#     loss       within 1 % of last_loss or alt (null where both are null),
#     step time  within 25 % of step_time_s (null where it is null).
#
# Prints one line per file and the score, and fails when fewer than
# TRACK_DEVSET_MIN files (default 50 of 52) are fully right.  Run it by
# hand too:  SCHEDMATE=build/schedmate tests/integration/track_devset.sh
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
dir="$SHARED/devdata/progress"
[ -f "$dir/labels.jsonl" ] || skip "no $dir/labels.jsonl (shared data not beside the checkout)"
min=${TRACK_DEVSET_MIN:-50}

total=0 right=0
printf '%-15s %-6s %-22s %-22s %-24s %s\n' file result step loss step_time why
while IFS= read -r label; do
  f=$(jq -r .file <<<"$label")
  out="$SM_TMP/track_$f.json"
  total=$((total + 1))
  if ! "$SCHEDMATE" track --json "$dir/$f" >"$out" 2>"$SM_TMP/track_err"; then
    printf '%-15s %-6s %s\n' "$f" FAIL "exit status $?: $(head -1 "$SM_TMP/track_err")"
    continue
  fi
  # One jq program does the comparison and explains a miss.
  verdict=$(jq -rn --argjson L "$label" --slurpfile G "$out" '
    def near($a; $b; $tol): ($a != null and $b != null) and
      (if $b == 0 then ($a|fabs) < 1e-12
       else ((($a - $b) / $b) | fabs) <= $tol end);
    def show: if . == null then "null" else tostring end;
    $G[0] as $g | ($L.alt // {}) as $alt |
    (if $L.has_progress | not then
       (if $g.status == "missing" then [] else ["expected missing"] end)
     else
       (if $g.status != "ok" then ["status " + $g.status] else [] end) +
       (if ($g.step == $L.last_step) or
           ($alt | has("last_step") and $g.step == $alt.last_step)
        then [] else ["step"] end) +
       (if ($L.last_loss == null and $g.loss == null) or
           near($g.loss; $L.last_loss; 0.01) or
           ($alt | has("last_loss") and near($g.loss; $alt.last_loss; 0.01))
        then [] else ["loss"] end) +
       (if ($L.step_time_s == null and $g.step_time_s == null) or
           near($g.step_time_s; $L.step_time_s; 0.25)
        then [] else ["step_time"] end)
     end) as $why |
    [ (if ($why | length) == 0 then "ok" else "MISS" end),
      ($g.step|show) + "/" + ($L.last_step|show),
      ($g.loss|show|.[0:10]) + "/" + ($L.last_loss|show|.[0:10]),
      ($g.step_time_s|show|.[0:10]) + "/" + ($L.step_time_s|show|.[0:10]),
      ($why | join(",")) ] | @tsv')
  IFS=$'\t' read -r res st lo tm why <<<"$verdict"
  [ "$res" = ok ] && right=$((right + 1))
  printf '%-15s %-6s %-22s %-22s %-24s %s\n' "$f" "$res" "$st" "$lo" "$tm" "$why"
done <"$dir/labels.jsonl"
echo "dev set: $right of $total fully right (threshold $min)"
[ "$total" -ge 52 ] || fail "expected 52 labelled logs, found $total"
[ "$right" -ge "$min" ] || fail "only $right of $total fully right"
