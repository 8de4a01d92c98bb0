# Runs `schedmate track --json` over every labelled log of the shared
# development set (devdata/progress, real logs with hand-checked labels)
# and scores it the way the project is measured:
#
#   has_progress false      -> status "missing";
#   otherwise status "ok" and
#     step       equal to last_step (or the accepted alternative alt),
#     loss       within 1 % of last_loss or alt (null where both are null;
#                a label "nan" wants loss null with loss_nonfinite true),
#     step time  within 25 % of step_time_s (null where it is null).
#
# The set grew in generations: the first logs (numbered below 100) get a
# per-file table; the later ones (101 on) are only counted, so that a part
# of them kept aside for measurement is never shown one by one (set
# TRACK_DEVSET_VERBOSE=1 to list them too).  Fails when fewer than
# TRACK_DEVSET_MIN (default 50) of the first generation are fully right,
# or when the share over all labelled logs is below TRACK_DEVSET_SHARE
# (default 0.80).  LABELS overrides the labels file (e.g. a tuning part).
#   SCHEDMATE=build/schedmate tests/integration/track_devset.sh
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
dir="$SHARED/devdata/progress"
labels=${LABELS:-$dir/labels.jsonl}
[ -f "$labels" ] || skip "no $labels (shared data not beside the checkout)"
min=${TRACK_DEVSET_MIN:-50}
share=${TRACK_DEVSET_SHARE:-0.80}
verbose=${TRACK_DEVSET_VERBOSE:-0}

total=0 right=0 first=0 first_right=0
printf '%-15s %-6s %-22s %-22s %-24s %s\n' file result step loss step_time why
while IFS= read -r label; do
  [ -n "$label" ] || continue
  f=$(jq -r .file <<<"$label")
  num=${f%%[!0-9]*}
  gen1=0
  [ -n "$num" ] && [ "$((10#$num))" -lt 100 ] && gen1=1
  out="$SM_TMP/track_$f.json"
  total=$((total + 1))
  [ "$gen1" = 1 ] && first=$((first + 1))
  if ! "$SCHEDMATE" track --json "$dir/$f" >"$out" 2>"$SM_TMP/track_err"; then
    rc=$?
    if [ "$gen1" = 1 ] || [ "$verbose" = 1 ]; then
      printf '%-15s %-6s %s\n' "$f" FAIL "exit status $rc: $(head -1 "$SM_TMP/track_err")"
    fi
    continue
  fi
  # One jq program does the comparison and explains a miss.
  verdict=$(jq -rn --argjson L "$label" --slurpfile G "$out" '
    def num: type == "number";
    def near($a; $b; $tol): ($a|num) and ($b|num) and
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
       (if ($L.last_loss | type) == "string" then
          (if $g.loss == null and $g.loss_nonfinite == true then []
           else ["loss"] end)
        elif ($L.last_loss == null and $g.loss == null) or
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
  if [ "$res" = ok ]; then
    right=$((right + 1))
    [ "$gen1" = 1 ] && first_right=$((first_right + 1))
  fi
  if [ "$gen1" = 1 ] || [ "$verbose" = 1 ]; then
    printf '%-15s %-6s %-22s %-22s %-24s %s\n' "$f" "$res" "$st" "$lo" "$tm" "$why"
  fi
done <"$labels"
later=$((total - first)) later_right=$((right - first_right))
echo "first generation: $first_right of $first fully right (threshold $min)"
echo "later logs: $later_right of $later fully right (listed only with TRACK_DEVSET_VERBOSE=1)"
echo "dev set: $right of $total fully right (threshold share $share)"
[ "$first" -ge 52 ] || fail "expected the 52 first-generation labelled logs, found $first"
[ "$first_right" -ge "$min" ] || fail "only $first_right of $first first-generation logs fully right"
awk -v r="$right" -v t="$total" -v s="$share" 'BEGIN { exit !(t > 0 && r / t >= s) }' ||
  fail "only $right of $total fully right (share below $share)"
