# The tracker on its own fixture logs (tests/data/track/*.log, one per
# framework format, written by tests/data/track/make_fixtures.sh): each
# answer must match tests/data/track/expected.tsv (status, step, total,
# epoch, loss, step time and its basis, the counter followed).
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
dir="$(dirname "$0")/../data/track"
bad=0 n=0
while IFS=$'\t' read -r file status step total epoch loss st basis counter; do
  case "$file" in '#'*|'') continue ;; esac
  n=$((n + 1))
  expect_rc 0 "$SCHEDMATE" track --json "$dir/$file"
  got=$(jq -r '[.status,(.step//"-"),(.total_steps//"-"),(.epoch//"-"),
               (.loss//"-"),(.step_time_s//"-"),(.step_time_basis//"-"),
               (.counter//"-")]|@tsv' "$SM_TMP/last.out")
  IFS=$'\t' read -r gs gstep gtot gep gloss gst gbasis gctr <<<"$got"
  why=""
  [ "$gs" = "$status" ] || why+=" status=$gs"
  [ "$gstep" = "$step" ] || why+=" step=$gstep"
  [ "$gtot" = "$total" ] || why+=" total=$gtot"
  [ "$gbasis" = "$basis" ] || why+=" basis=$gbasis"
  [ "$gctr" = "$counter" ] || why+=" counter=$gctr"
  # Numbers: relative tolerance (1e-6 for printed values, 1e-4 for times).
  for pair in "epoch:$gep:$epoch:1e-6" "loss:$gloss:$loss:1e-6" "step_time:$gst:$st:1e-4"; do
    IFS=: read -r name g e tol <<<"$pair"
    if [ "$g" = "-" ] || [ "$e" = "-" ]; then
      [ "$g" = "$e" ] || why+=" $name=$g"
    elif ! awk -v g="$g" -v e="$e" -v t="$tol" \
        'BEGIN { d = g - e; if (d < 0) d = -d; m = e < 0 ? -e : e;
                 exit !(d <= t * (m > 1e-12 ? m : 1)) }'; then
      why+=" $name=$g"
    fi
  done
  if [ -n "$why" ]; then
    echo "MISS $file:$why (expected $status $step $total $epoch $loss $st $basis $counter)"
    bad=$((bad + 1))
  fi
done <"$dir/expected.tsv"
[ "$n" -ge 40 ] || fail "only $n fixtures listed"
[ "$bad" = 0 ] || fail "$bad of $n fixtures answered wrong"
echo "$n fixtures right"
