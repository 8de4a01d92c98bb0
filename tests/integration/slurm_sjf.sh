#!/usr/bin/env bash
# slurm_sjf.sh - `schedmate slurm` on a real Slurm 22.05 cluster:
#   scenario 1: in enforce mode, pending jobs with a history are reordered
#               shortest-first and the estimate appears on each job;
#   scenario 4: shadow mode changes nothing in Slurm and logs the same
#               decisions;
#   scenario 6: every ended job is in the history with the right end state;
# and SIGTERM stops the agent cleanly.
# The history is taught by the agent itself: two finished runs (resnet18
# about 1 s, resnet50 about 4 s) are written back, then a queue waits
# behind a blocker on node n1: r50, r18, vit (never seen: no estimate),
# r50.  SchedMate-SJF must start r18 first, keep vit in its place.
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm cluster (needs root and slurmctld; tests/services.sh starts one)"
. "$(dirname "$0")/../slurm.sh"
export SLURM_CONF=$SM_SLURM_CONF
sl_setup sjf
trap sl_cleanup EXIT
DB=$W/history.db
cd "$W/repo"
G=--gres=gpu:8

# ---- Teach the history (the write-back channel) ----
sl_agent_start --enforce --db "$DB" --interval 0.3 --audit "$W/teach.jsonl" \
  --status "$W/status.json"
t1=$(sbatch --parsable -w n2 $G --export=ALL,FAKE_STEPS=12,FAKE_STEP_S=0.1 r18.sh)
t2=$(sbatch --parsable -w n3 $G --export=ALL,FAKE_STEPS=40,FAKE_STEP_S=0.1 r50.sh)
sl_wait 60 sl_recorded "$DB" "smtest:$t2" || fail "r50 run not written back"
sl_wait 30 sl_recorded "$DB" "smtest:$t1" || fail "r18 run not written back"
[ "$(sl_end_state "$DB" "smtest:$t1")" = completed ] || fail "r18: $(sl_end_state "$DB" "smtest:$t1")"
[ "$(sl_end_state "$DB" "smtest:$t2")" = completed ] || fail "r50: $(sl_end_state "$DB" "smtest:$t2")"
sl_agent_stop || fail "agent did not stop cleanly on SIGTERM"
grep -q "stopped" "$W/agent.log" || fail "no clean stop in the agent's log"

# ---- The queue behind a blocker on n1 ----
blk=$(sbatch --parsable -w n1 $G -J blocker --wrap "sleep 300")
sl_wait_job "$blk" 30 RUNNING >/dev/null || fail "blocker did not start"
export FAKE_STEPS=4 FAKE_STEP_S=0.05 FAKE_STARTS=$W/starts
q1=$(sbatch --parsable -w n1 $G r50.sh)
q2=$(sbatch --parsable -w n1 $G r18.sh)
q3=$(sbatch --parsable -w n1 $G vit.sh)
q4=$(sbatch --parsable -w n1 $G r50.sh)
unset FAKE_STEPS FAKE_STEP_S FAKE_STARTS
snapshot() { squeue -h -t PD -o '%i %Q %k' | sort; }
before=$(snapshot)

# ---- Shadow: decides, audits, changes nothing ----
expect_rc 0 "$SCHEDMATE" slurm --shadow --once --db "$DB" --audit "$W/shadow.jsonl"
[ "$(snapshot)" = "$before" ] || fail "shadow mode changed Slurm: $(snapshot)"
grep -q '"channel":"order"' "$W/shadow.jsonl" || fail "shadow mode logged no order decision"

# ---- Enforce: the same decisions, applied ----
expect_rc 0 "$SCHEDMATE" slurm --enforce --once --db "$DB" --audit "$W/enforce.jsonl"
decisions() {
  jq -c 'select(.channel=="order") | [.job, .decision, .to]' "$1"
  jq -c 'select(.channel=="submit") | [.job, .decision, .estimate_s, .comment]' "$1"
}
[ "$(decisions "$W/shadow.jsonl")" = "$(decisions "$W/enforce.jsonl")" ] \
  || fail "shadow and enforce decided differently"
[ "$(jq -r 'select(.channel=="order") | .executed' "$W/shadow.jsonl" | sort -u)" = false ] \
  || fail "shadow mode says it executed something"
[ "$(jq -r 'select(.channel=="order") | .executed' "$W/enforce.jsonl" | sort -u)" = true ] \
  || fail "enforce mode did not apply its decisions"
order=$(squeue -h -t PD -o '%Q %i' | sort -nr | awk '{print $2}' | tr '\n' ' ')
[ "$order" = "$q2 $q1 $q3 $q4 " ] || fail "pending order by priority is '$order', want '$q2 $q1 $q3 $q4'"
for q in $q1 $q2 $q4; do
  sl_field "$q" Comment | grep -q '^schedmate:_est\|^schedmate: est' \
    || squeue -h -j "$q" -o %k | grep -q '^schedmate: est .*like smtest:' \
    || fail "job $q: no estimate in its comment: $(squeue -h -j "$q" -o %k)"
done
squeue -h -j "$q3" -o %k | grep -q '^schedmate: no estimate' \
  || fail "job $q3: $(squeue -h -j "$q3" -o %k)"

# ---- Run: Slurm starts them in SchedMate's order ----
sl_agent_start --enforce --db "$DB" --interval 0.3 --audit "$W/run.jsonl" \
  --status "$W/status.json"
scancel "$blk"
for q in $q1 $q2 $q3 $q4; do
  sl_wait_job "$q" 90 COMPLETED >/dev/null || fail "job $q did not complete"
done
started=$(awk '{print $2}' "$W/starts" | tr '\n' ' ')
[ "$started" = "$q2 $q1 $q3 $q4 " ] || fail "start order '$started', want '$q2 $q1 $q3 $q4'"

# ---- Every ended job in the history ----
for q in $q1 $q2 $q3 $q4; do
  sl_wait 30 sl_recorded "$DB" "smtest:$q" || fail "job $q not in the history"
  [ "$(sl_end_state "$DB" "smtest:$q")" = completed ] || fail "job $q: $(sl_end_state "$DB" "smtest:$q")"
done
sl_wait 30 sl_recorded "$DB" "smtest:$blk" || fail "blocker not in the history"
[ "$(sl_end_state "$DB" "smtest:$blk")" = canceled ] || fail "blocker: $(sl_end_state "$DB" "smtest:$blk")"
"$SCHEDMATE" history show --json --db "$DB" "smtest:$q2" >"$W/q2.json"
[ "$(jget "$W/q2.json" '.metadata.model_name')" = resnet18 ] || fail "q2 metadata: $(cat "$W/q2.json")"
[ "$(jget "$W/q2.json" '.outcome.state')" = COMPLETED ] || fail "q2 outcome: $(cat "$W/q2.json")"
[ "$(jget "$W/q2.json" '.outcome.progress.step')" = 4 ] || fail "q2 progress: $(jget "$W/q2.json" .outcome.progress)"
sl_agent_stop || fail "agent did not stop cleanly"
echo "ok: order $order, started $started"
