#!/usr/bin/env bash
# The LLM stage's overhead against the replay server of the tests
# (tests/llm/replay.py: the model's own time is zero here, so what is
# left is SchedMate's and HTTP's).  First the client per request, in one
# process (bench_llm.c), next to a bare libcurl POST loop (the
# reference); then each stage through the command, median of 11 runs,
# next to the same command without --llm, and with a warm disk cache.
set -eu
cd "$(dirname "$0")/../.."
make -s all >/dev/null
S=$PWD/build/schedmate
T=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$T"' EXIT
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY SCHEDMATE_LLM_URL
mkdir -p build/bench
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude bench/llm/bench_llm.c \
  -o build/bench/bench_llm build/libschedmate.a \
  $(pkg-config --libs sqlite3 hiredis yaml-0.1 libcjson tree-sitter zlib libcurl) \
  -lm -lpthread $( [ -e /usr/include/slurm/slurm.h ] && echo -lslurm )
REPO=tests/llm/repo_basic
cat >"$T/rules.json" <<'JSON'
[
 {"last": "Find these fields",
  "content": "{\"action\": \"read\", \"path\": \"configs/base.yaml\"}"},
 {"last": "Lines 1.. of configs/base.yaml",
  "content": "{\"action\": \"answer\", \"fields\": {\"lr\": {\"value\": 0.0004, \"evidence\": \"configs/base.yaml:8\"}, \"model_name\": {\"value\": \"resnet50\", \"evidence\": \"configs/base.yaml:3\"}}}"},
 {"last": "Lines of the log",
  "content": "{\"samples\": [{\"line\": 6, \"step\": 126, \"loss\": 2.346}]}"},
 {"last": "SchedMate located the first error",
  "content": "{\"category\": \"infrastructure\", \"component\": \"gpu\", \"root_cause\": \"x\", \"evidence\": [{\"line\": 3, \"quote\": \"uncorrectable ECC error\"}]}"},
 {"content": "{\"ok\": 1}"}
]
JSON
python3 tests/llm/replay.py --script "$T/rules.json" --port-file "$T/port" &
PID=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$T/port")
build/bench/bench_llm "$URL" "${N:-2000}"

for i in 1 2 3 4 5 6; do echo "t=$i >> progress 12$i ~ 5000 :: obj 2.34$i"; done >"$T/run.log"
printf 'step 1/9 loss 2\nstep 2/9 loss 2\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n' >"$T/fail.log"
median() { sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
ms() { # command...: median wall ms of 7 runs
  for _ in $(seq 11); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
    echo $(( (e - s) / 100000 ))
  done | median | awk '{printf "%.1f", $1 / 10}'
}
row() { # name, command words..., "::", stage options, "::", trailing words
  local name=$1; shift
  local pre=() opts=() post=()
  while [ "$1" != "::" ]; do pre+=("$1"); shift; done
  shift
  while [ "$1" != "::" ]; do opts+=("$1"); shift; done
  shift
  post=("$@")
  local a b c
  a=$(ms "${pre[@]}" "${post[@]}")
  b=$(ms "${pre[@]}" --llm "$URL" "${opts[@]}" "${post[@]}")
  rm -rf "$T/cache"
  "${pre[@]}" --llm "$URL" --llm-cache "$T/cache" "${opts[@]}" "${post[@]}" >/dev/null 2>&1 || true
  c=$(ms "${pre[@]}" --llm "$URL" --llm-cache "$T/cache" "${opts[@]}" "${post[@]}")
  printf '%-9s without --llm %7s ms | with --llm %7s ms (+%s) | warm cache %7s ms\n' \
    "$name" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.1f ms", b-a}')" "$c"
}
echo "per command (median of 11; the replay server answers at once):"
row extract "$S" extract --json --repo "$REPO" :: :: -- python train.py
row track "$S" track --json :: :: "$T/run.log"
row diagnose "$S" diagnose --json :: --llm-always :: "$T/fail.log"
