#!/usr/bin/env bash
# slurm_failures.sh - the exit channel on a real Slurm 22.05 cluster
# (scenario 3, and 6 for these jobs):
#   a job that dies of an uncorrectable ECC error (with its NCCL cascade)
#   gets its node drained with a reason naming the fault, the job and the
#   log line, and is requeued: its second run, elsewhere, completes;
#   a job that dies of a shape mismatch in its own code is not requeued
#   and its node n4 stays up.
# Every run is then in the history: failed_infra, completed, failed_user.
. "$(dirname "$0")/../lib.sh"
[ -n "${SM_SLURM_CONF:-}" ] || skip "no Slurm cluster (needs root and slurmctld; tests/services.sh starts one)"
. "$(dirname "$0")/../slurm.sh"
export SLURM_CONF=$SM_SLURM_CONF
sl_setup failures
trap sl_cleanup EXIT
DB=$W/history.db
cd "$W/repo"

sl_agent_start --enforce --db "$DB" --interval 0.3 --audit "$W/audit.jsonl" \
  --status "$W/status.json" --state "$W/planner.state"
# The ECC job may run anywhere but n4; its first run fails, a restart
# does not.  The shape job runs on n4.
ecc=$(sbatch --parsable -x n4 --export=ALL,FAKE_STEPS=30,FAKE_STEP_S=0.05,FAKE_FAIL=ecc,FAKE_FAIL_ONCE="$W/ecc.failed" r50.sh)
shape=$(sbatch --parsable -w n4 --export=ALL,FAKE_STEPS=30,FAKE_STEP_S=0.05,FAKE_FAIL=shape r18.sh)
sl_wait_job "$ecc" 30 RUNNING FAILED >/dev/null || fail "ECC job did not start"
bad=$(sl_field "$ecc" NodeList)

# The ECC job: drained node, requeued job.
node_drained() { case "$(sl_node_state "$bad")" in drain*) return 0 ;; esac; return 1; }
sl_wait 60 node_drained || fail "$bad not drained: $(sl_node_state "$bad"); $(tail -5 "$W/agent.log")"
reason=$(sinfo -h -n "$bad" -o '%E')
case "$reason" in
  "schedmate: gpu uncorrectable ECC error in GPU memory (job $ecc, line "*")") ;;
  *) fail "drain reason: '$reason'" ;;
esac
restarted() { [ "$(sl_field "$ecc" Restarts)" = 1 ]; }
sl_wait 30 restarted || fail "ECC job not requeued: $(scontrol show job "$ecc" | head -3)"
sl_wait_job "$ecc" 90 COMPLETED >/dev/null || fail "requeued ECC job did not complete"
[ "$(sl_field "$ecc" NodeList)" != "$bad" ] || fail "the requeued job ran on the drained node"

# The shape-mismatch job: failed, not requeued, its node up.
sl_wait_job "$shape" 60 FAILED >/dev/null || fail "shape job not FAILED"
sl_wait 30 sl_recorded "$DB" "smtest:$shape" || fail "shape job not in the history"
[ "$(sl_field "$shape" Restarts)" = 0 ] || fail "the shape-mismatch job was requeued"
case "$(sl_node_state n4)" in idle|mix*|alloc*) ;; *) fail "n4 is $(sl_node_state n4)" ;; esac

# The history: one record per run, the root cause kept.
sl_wait 30 sl_recorded "$DB" "smtest:$ecc.1" || fail "second ECC run not in the history"
[ "$(sl_end_state "$DB" "smtest:$ecc")" = failed_infra ] || fail "ECC run: $(sl_end_state "$DB" "smtest:$ecc")"
[ "$(sl_end_state "$DB" "smtest:$ecc.1")" = completed ] || fail "ECC rerun: $(sl_end_state "$DB" "smtest:$ecc.1")"
[ "$(sl_end_state "$DB" "smtest:$shape")" = failed_user ] || fail "shape run: $(sl_end_state "$DB" "smtest:$shape")"
"$SCHEDMATE" history show --json --db "$DB" "smtest:$shape" >"$W/shape.json"
jget "$W/shape.json" .outcome.diagnosis.evidence[0].text | grep -q 'shapes cannot be multiplied' \
  || fail "root cause not in the record: $(jget "$W/shape.json" .outcome.diagnosis)"
"$SCHEDMATE" history show --json --db "$DB" "smtest:$ecc" >"$W/ecc.json"
[ "$(jget "$W/ecc.json" .outcome.diagnosis.component)" = gpu ] || fail "ECC component"
jget "$W/ecc.json" '.outcome.actions[]' | grep -qx "isolate_node $bad" || fail "ECC actions: $(jget "$W/ecc.json" .outcome.actions)"

# The audit: each action once, executed, in enforce mode.
[ "$(jq -r 'select(.decision=="drain_node" and .executed) | .target' "$W/audit.jsonl")" = "$bad" ] \
  || fail "audit: drain"
[ "$(jq -r "select(.decision==\"requeue\" and .executed) | .job" "$W/audit.jsonl")" = "$ecc" ] \
  || fail "audit: requeue"
[ "$(jq -r "select(.decision==\"report\") | .job" "$W/audit.jsonl")" = "$shape" ] \
  || fail "audit: report"
sl_agent_stop || fail "agent did not stop cleanly"
echo "ok: $bad drained ($reason), job $ecc requeued and completed, job $shape reported"
