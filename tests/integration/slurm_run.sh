#!/usr/bin/env bash
# slurm_run.sh - the run channel on a real Slurm 22.05 cluster
# (scenario 2): the agent reports the live step and step time of a running
# job in its JSON status file and its Prometheus file, and flags the job
# when its throughput falls after another job joined its node.
# (There are no GPUs to fight over: the second job's trainer marks the
# node as contended when it starts, and the first one then runs its steps
# three times slower, as co-located jobs do.)
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm cluster (needs root and slurmctld; tests/services.sh starts one)"
. "$(dirname "$0")/../slurm.sh"
export SLURM_CONF=$SM_SLURM_CONF
sl_setup run
trap sl_cleanup EXIT
DB=$W/history.db
ST=$W/status.json
PROM=$W/metrics.prom
cd "$W/repo"

sl_agent_start --shadow --db "$DB" --interval 0.3 --samples 5 \
  --audit "$W/audit.jsonl" --status "$ST" --metrics "$PROM"
a=$(sbatch --parsable -w n2 --gres=gpu:4 \
  --export=ALL,FAKE_STEPS=200,FAKE_STEP_S=0.1,FAKE_SLOW_IF="$W/contended" r50.sh)

# Live step and step time.
progress() { jq -r ".jobs[] | select(.job_id==$a) | .progress.$1 // empty" "$ST" 2>/dev/null; }
stepped() { local s; s=$(progress step); [ -n "$s" ] && [ "$s" -ge 15 ]; }
sl_wait 60 stepped || fail "no live step for job $a: $(cat "$ST")"
[ "$(progress step_time_s)" = 0.1 ] || fail "step time $(progress step_time_s)"
[ "$(progress total_steps)" = 200 ] || fail "total steps $(progress total_steps)"
[ "$(jq -r ".jobs[] | select(.job_id==$a) | .nodes[0]" "$ST")" = n2 ] || fail "node"
grep -q "^schedmate_job_step{job=\"$a\",name=\"r50\",node=\"n2\"} [0-9]" "$PROM" \
  || fail "no step series in $PROM"
grep -q "^schedmate_job_step_time_seconds{job=\"$a\",name=\"r50\",node=\"n2\"} 0.1$" "$PROM" \
  || fail "no step time series in $PROM: $(grep step_time "$PROM")"
grep -q '^schedmate_slurm_up 1$' "$PROM" || fail "slurm_up"
s1=$(progress step)
sleep 1
[ "$(progress step)" -gt "$s1" ] || fail "the step does not move: $s1"

# Another job joins n2: job a slows down and is flagged.
b=$(sbatch --parsable -w n2 --gres=gpu:4 \
  --export=ALL,FAKE_STEPS=200,FAKE_STEP_S=0.1,FAKE_CONTEND="$W/contended" r18.sh)
flagged() { jq -e "select(.decision==\"interference\" and .job==$a and .joined_by==$b)" "$W/audit.jsonl" >/dev/null 2>&1; }
sl_wait 60 flagged || fail "no interference flagged: $(jq -c ".jobs[] | select(.job_id==$a) | .slowdown" "$ST")"
ratio=$(jq -r "select(.decision==\"interference\") | .ratio" "$W/audit.jsonl")
awk -v r="$ratio" 'BEGIN { exit !(r > 0.2 && r < 0.5) }' || fail "ratio $ratio (want about 1/3)"
jq -e ".jobs[] | select(.job_id==$a) | .slowdown.flagged" "$ST" >/dev/null || fail "status: no slowdown"
grep -q "^schedmate_job_slowdown_ratio{job=\"$a\",name=\"r50\",node=\"n2\",joined_by=\"$b\"} 0\.[2-4]" "$PROM" \
  || fail "no slowdown series: $(grep slowdown "$PROM")"
# Job b itself was not slowed by anyone.
[ "$(jq -c "select(.decision==\"interference\" and .job==$b)" "$W/audit.jsonl")" = "" ] \
  || fail "job $b flagged"

# Shadow mode: nothing was changed in Slurm.
[ "$(jq -r 'select(.executed) | .channel' "$W/audit.jsonl" | grep -cv writeback)" = 0 ] \
  || fail "shadow mode executed something"
scancel "$a" "$b"
for j in $a $b; do
  sl_wait 30 sl_recorded "$DB" "smtest:$j" || fail "job $j not in the history"
  [ "$(sl_end_state "$DB" "smtest:$j")" = canceled ] || fail "job $j: $(sl_end_state "$DB" "smtest:$j")"
done
"$SCHEDMATE" history show --json --db "$DB" "smtest:$a" >"$W/a.json"
[ "$(jget "$W/a.json" .outcome.progress.step)" -gt "$s1" ] || fail "last progress not recorded"
sl_agent_stop || fail "agent did not stop cleanly"
echo "ok: job $a step/step time live; slowed to $ratio after job $b joined n2"
