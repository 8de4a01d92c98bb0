# The recovery planner through the command: gates, the retry cap and the
# isolation quota kept in --state across runs, shadow mode, the JSON-lines
# audit log, and a corrupt state file.
. "$(dirname "$0")/../lib.sh"
D=tests/data/failure
S="$SM_TMP/planner.state" A="$SM_TMP/audit.jsonl"
run() { "$SCHEDMATE" diagnose --json --state "$S" --audit "$A" "$@"; }
acts() { jq -r '.actions | join(",")' "$SM_TMP/last.out"; }

# A GPU that fell off the bus on gpu-b07: diagnose, isolate, replace,
# restart; twice, then the retry cap (2) stops the restarts.
expect_rc 1 run --job j1 --now 1000 "$D/gpu_xid79_epilog.log"
[ "$(acts)" = diagnose,isolate_node,request_replacement,restart_from_checkpoint ] || fail "plan: $(acts)"
[ "$(jget "$SM_TMP/last.out" .plan.executable)" = true ] || fail "not executable"
[ "$(jget "$SM_TMP/last.out" '.plan.steps[1].target')" = gpu-b07 ] || fail "isolation target"
expect_rc 1 run --job j1 --now 1100 --isolation-quota 5 "$D/gpu_xid79_epilog.log"
expect_rc 1 run --job j1 --now 1200 --isolation-quota 5 "$D/gpu_xid79_epilog.log"
case "$(acts)" in *restart_from_checkpoint*) fail "retry cap ignored" ;; esac
jq -e '.plan.gates | any(test("retry cap"))' "$SM_TMP/last.out" >/dev/null || fail "no retry-cap gate"
[ "$(jget "$SM_TMP/last.out" .plan.retries_used)" = 2 ] || fail "retries_used"

# The isolation quota (default 2 per day) is shared by all jobs.
expect_rc 1 run --job j2 --now 1300 "$D/machine_check.log"
case "$(acts)" in *isolate_node*) fail "quota ignored: $(acts)" ;; esac
jq -e '.plan.gates | any(test("quota"))' "$SM_TMP/last.out" >/dev/null || fail "no quota gate"
expect_rc 1 run --job j2 --now $((1200 + 86400 + 10)) "$D/machine_check.log"
case "$(acts)" in *isolate_node*) ;; *) fail "quota window did not expire" ;; esac

# Shadow mode: the plan, marked not executable, and nothing counted.
sum=$(md5sum < "$S")
expect_rc 1 run --job j3 --now 90000 --shadow "$D/nvlink_uncorrectable.log"
[ "$(jget "$SM_TMP/last.out" .plan.executable)" = false ] || fail "shadow executable"
[ "$(jget "$SM_TMP/last.out" .plan.shadow)" = true ] || fail "shadow flag"
[ "$(md5sum < "$S")" = "$sum" ] || fail "shadow changed the state"

# User and framework faults: report only, never counted.
for f in cuda_oom_fsdp.log package_missing.log hydra_config.log; do
  expect_rc 1 run --job j4 --now 90100 "$D/$f"
  [ "$(acts)" = report ] || fail "$f: $(acts)"
  [ "$(jget "$SM_TMP/last.out" .retryable)" = false ] || fail "$f retryable"
done
[ "$(md5sum < "$S")" = "$sum" ] || fail "a report changed the state"

# Every decision is one JSON line in the audit log.
[ "$(wc -l < "$A")" = 9 ] || fail "audit has $(wc -l < "$A") lines"
jq -e -s 'length == 9 and all(.[]; has("time") and has("decision") and has("diagnosis"))' "$A" >/dev/null || fail "audit records"
[ "$(jq -r -s '.[7].decision' "$A")" = report_only ] || fail "audit decision"

# A damaged state file is refused with its name and line.
printf 'retry j1 two 1000\n' > "$S"
expect_rc 2 run --job j1 "$D/gpu_xid79_epilog.log"
grep -q "planner.state:1: corrupt planner state" "$SM_TMP/last.err" || fail "corrupt state message"
