# history add/perf/list/show/export/import and advise through the command,
# on SQLite, and the same answers from Redis when tests/services.sh
# started one.
. "$(dirname "$0")/../lib.sh"
D=tests/data/history
DB="$SM_TMP/hist.db"
S=$SCHEDMATE
expect_rc 0 $S history add --db "$DB" --id a1 --duration 3600 --sm-util 80 --meta $D/llama7b_alpaca.json
expect_rc 0 $S history add --db "$DB" --id a2 --duration 4000 --sm-util 70 --gpu-type a100 --meta $D/llama7b_alpaca.json
expect_rc 0 $S history add --db "$DB" --id a3 --duration 45 --end-state canceled --meta $D/llama7b_alpaca.json
expect_rc 0 $S history add --db "$DB" --id b1 --duration 9000 --meta $D/llama13b_alpaca.json
expect_rc 0 $S history add --db "$DB" --id r1 --duration 250000 --end-state failed_infra --meta $D/resnet50_imagenet.json
expect_rc 0 $S history perf --db "$DB" --id a1 --gpu-type a100 --gpus 4 --batch 128 --throughput 45.5

expect_rc 0 $S advise --json --db "$DB" --meta $D/llama7b_alpaca.json
A="$SM_TMP/last.out"
[ "$(jget "$A" '.fallback')" = false ] || fail "expected an estimate"
[ "$(jget "$A" '.estimate.duration_s')" = 3800 ] || fail "mean of completed matches"
[ "$(jget "$A" '.estimate.n')" = 2 ] || fail "n completed"
[ "$(jget "$A" '[.matches[].job_id]|sort|join(",")')" = "a1,a2,a3" ] || fail "matches"
[ "$(jget "$A" '.estimate.perf_model[0].throughput')" = 45.5 ] || fail "perf model"
[ "$(jget "$A" '.outcomes.p_early_end*3|round')" = 1 ] || fail "early-end share"

# A job that is only similar by name is not matched.
expect_rc 0 $S advise --json --db "$DB" --meta $D/resnet50_imagenet.json
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = no_match ] || fail "failed-only matches must not give a duration"
# Model and dataset alone are too little identity to trust any match.
printf '{"metadata":{"model_name":"llama-7b","dataset":"sharegpt","gpus":4}}' > "$SM_TMP/other.json"
expect_rc 0 $S advise --json --db "$DB" --meta "$SM_TMP/other.json"
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = too_little_known ] || fail "too_little_known"
[ "$(jget "$SM_TMP/last.out" '.identity.enough')" = false ] || fail "identity.enough"
expect_rc 0 $S advise --help
grep -q too_little_known "$SM_TMP/last.out" || fail "--help names too_little_known"
# The same recipe on another dataset is another job, however alike the rest.
jq -c '.metadata.dataset = "sharegpt"' $D/llama7b_alpaca.json > "$SM_TMP/sharegpt.json"
expect_rc 0 $S advise --json --db "$DB" --threshold 0.5 --meta "$SM_TMP/sharegpt.json"
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = no_match ] || fail "dataset veto"
jget "$SM_TMP/last.out" '.fallback_detail' | grep -q "dataset alpaca-52k, this job sharegpt" || fail "veto detail"
[ "$(jget "$SM_TMP/last.out" '.identity.rejected_different')" = 4 ] || fail "rejected count"
# The same job identity on another scale: similar, not the same.
jq -c '.metadata += {"gpus":32,"lr":0.0001,"global_batch_size":1024,"parallelism":"deepspeed_zero3","precision":"fp16"}' $D/llama7b_alpaca.json > "$SM_TMP/scaled.json"
expect_rc 0 $S advise --json --db "$DB" --meta "$SM_TMP/scaled.json"
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = below_threshold ] || fail "below_threshold"

# Missing database, corrupt database, wrong schema: a fallback, exit 0.
expect_rc 0 $S advise --json --db "$SM_TMP/missing.db" --meta $D/llama7b_alpaca.json
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = history_unavailable ] || fail "missing db"
head -c 5000 /dev/urandom > "$SM_TMP/corrupt.db"
expect_rc 0 $S advise --json --db "$SM_TMP/corrupt.db" --meta $D/llama7b_alpaca.json
[ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = history_unavailable ] || fail "corrupt db"
expect_rc 2 $S history add --db "$SM_TMP/corrupt.db" --id x --duration 1 --meta $D/llama7b_alpaca.json
grep -q "corrupt.db" "$SM_TMP/last.err" || fail "corrupt db message names the file"

# list / show / export / import round trip.
expect_rc 0 $S history list --json --db "$DB"
[ "$(jget "$SM_TMP/last.out" '.count')" = 5 ] || fail "list count"
expect_rc 0 $S history show --db "$DB" a1
grep -q "llama-7b" "$SM_TMP/last.out" || fail "show"
expect_rc 2 $S history show --db "$DB" nope
$S history export --db "$DB" > "$SM_TMP/ex.jsonl"
[ "$(wc -l < "$SM_TMP/ex.jsonl")" = 5 ] || fail "export lines"
expect_rc 0 $S history import --db "$SM_TMP/copy.db" "$SM_TMP/ex.jsonl"
expect_rc 0 $S advise --json --db "$SM_TMP/copy.db" --meta $D/llama7b_alpaca.json
cp "$SM_TMP/last.out" "$SM_TMP/copy.out"
expect_rc 0 $S advise --json --db "$DB" --meta $D/llama7b_alpaca.json
diff <(jq -c 'del(.elapsed_ms)' "$SM_TMP/copy.out") <(jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out") || fail "import changed the answer"
# Malformed import: the line is named, nothing crashes.
printf '{"id":"ok","duration_s":5}\n{"id":"bad","duration_s":"x"}\n' > "$SM_TMP/bad.jsonl"
expect_rc 2 $S history import --db "$SM_TMP/copy.db" "$SM_TMP/bad.jsonl"
grep -q "bad.jsonl:2" "$SM_TMP/last.err" || fail "import error names the line"
expect_rc 2 $S history import --db "$SM_TMP/copy.db" /nonexistent.jsonl
expect_rc 2 $S history add --db "$DB" --id x --meta $D/llama7b_alpaca.json
expect_rc 2 $S history add --db "$DB" --id x --duration -5 --meta $D/llama7b_alpaca.json
expect_rc 2 $S history add --db "$DB" --id x --duration 5 --end-state exploded --meta $D/llama7b_alpaca.json

# Redis: the same history gives the same answer.
if [ -n "${SM_REDIS_URL:-}" ]; then
  R="$SM_REDIS_URL?prefix=it$$"
  expect_rc 0 $S history import --db "$R" "$SM_TMP/ex.jsonl"
  expect_rc 0 $S advise --json --db "$R" --meta $D/llama7b_alpaca.json
  diff <(jq -c 'del(.elapsed_ms)' "$SM_TMP/copy.out") <(jq -c 'del(.elapsed_ms)' "$SM_TMP/last.out") || fail "Redis and SQLite disagree"
  # Redis down: a fallback, quickly.
  expect_rc 0 timeout 10 $S advise --json --db "redis://127.0.0.1:1/0" --meta $D/llama7b_alpaca.json
  [ "$(jget "$SM_TMP/last.out" '.fallback_reason')" = history_unavailable ] || fail "Redis down"
else
  echo "no Redis: the Redis half was not run"
fi

# A history built from cluster traces: Helios end states map onto ours,
# Tiresias model names become metadata, unknown end states never pose as
# completed runs, and a bad trace names its line.
expect_rc 0 $S history import --db "$SM_TMP/trace.db" --format helios tests/data/sim/helios_cluster_log.csv
expect_rc 0 $S history list --json --db "$SM_TMP/trace.db"
n=$(jget "$SM_TMP/last.out" '.count')
[ "$n" -gt 0 ] || fail "helios import"
[ "$(jget "$SM_TMP/last.out" '[.jobs[].end_state]|map(select(.=="completed" or .=="canceled" or .=="failed"))|length')" = "$n" ] || fail "helios end states"
expect_rc 0 $S history import --db "$SM_TMP/trace2.db" --format tiresias tests/data/sim/tiresias_jobs.csv
expect_rc 0 $S history show --json --db "$SM_TMP/trace2.db" 0
[ "$(jget "$SM_TMP/last.out" '.metadata.model_name')" = resnet50 ] || fail "tiresias model"
[ "$(jget "$SM_TMP/last.out" '.end_state')" = unknown ] || fail "unknown end state kept"
expect_rc 0 $S history import --db "$SM_TMP/trace3.db" --format tiresias --assume-completed tests/data/sim/tiresias_jobs.csv
expect_rc 0 $S history show --json --db "$SM_TMP/trace3.db" 0
[ "$(jget "$SM_TMP/last.out" '.end_state')" = completed ] || fail "--assume-completed"
expect_rc 2 $S history import --db "$SM_TMP/trace4.db" --format generic tests/data/sim/bad_negative_duration.csv
grep -q "bad_negative_duration.csv:[0-9]" "$SM_TMP/last.err" || fail "bad trace names its line"
expect_rc 2 $S history import --db "$SM_TMP/trace4.db" --format nonsense tests/data/sim/generic.csv
