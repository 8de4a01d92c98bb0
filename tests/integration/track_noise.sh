# Noise must not change the answer: every fixture log is run again with
# the noise of real logs woven in (warnings, NCCL chatter, checkpoint
# messages, evaluation blocks and bars, dataset bars, rank prefixes on
# every line, noise lines repeated by several ranks; tests/data/track/
# noise.awk), and must give the same status, step and loss, and a step
# time within 5 %.
. "$(dirname "$0")/../lib.sh"
SCHEDMATE=${SCHEDMATE:-build/schedmate}
SM_TMP=${SM_TMP:-$(mktemp -d)}
dir="$(dirname "$0")/../data/track"
seed=11 bad=0 n=0
for f in "$dir"/*.log; do
  seed=$((seed + 1)); n=$((n + 1))
  awk -v SEED=$seed -v RATE=0.9 -v RANK=$((seed % 2)) -f "$dir/noise.awk" \
    "$f" >"$SM_TMP/noisy.log"
  "$SCHEDMATE" track --json "$f" >"$SM_TMP/clean.json" || fail "$f: exit $?"
  "$SCHEDMATE" track --json "$SM_TMP/noisy.log" >"$SM_TMP/noisy.json" \
    || fail "$f (noisy): exit $?"
  if ! jq -en --slurpfile a "$SM_TMP/clean.json" --slurpfile b "$SM_TMP/noisy.json" '
      $a[0] as $x | $b[0] as $y |
      $x.status == $y.status and $x.step == $y.step and $x.loss == $y.loss and
      (if $x.step_time_s == null then $y.step_time_s == null
       else $y.step_time_s != null and
            ((($y.step_time_s - $x.step_time_s) / $x.step_time_s) | fabs) <= 0.05
       end)' >/dev/null; then
    echo "MISS $(basename "$f"): $(cut -c1-120 "$SM_TMP/clean.json") vs $(cut -c1-120 "$SM_TMP/noisy.json")"
    bad=$((bad + 1))
  fi
done
[ "$bad" = 0 ] || fail "$bad of $n fixtures changed their answer under noise"
echo "$n fixtures unchanged under noise"
