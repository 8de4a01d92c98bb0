#!/usr/bin/env bash
# bench/diagnose/run.sh - the Failure Handler's figures.
#
# 1. Speed.  A ~1 GB training log (bench/diagnose/genlog.sh, 10.8 million
#    lines) with a real failure (tests/data/failure/gpu_ecc_deepspeed.log)
#    copied in at 70 %: before it, training output of several frameworks
#    with a decoy every ~50 lines (deprecation warnings, loss-scale
#    overflows, c10d socket retries, skipped corrupt images) but without
#    the word "error", so that the reference run, `grep -n -m1 -i error`,
#    has to read up to the fault; after it, what hung ranks print (a
#    heartbeat per rank, an NCCL watchdog timeout every 33 lines).  Both
#    commands run on a warm page cache, best of 3, LC_ALL=C.  The locator
#    reads O(log n) chunks; its one pass over the prefix counts the
#    newlines before the cause (first_error_line is a line number), eight
#    bytes at a time; the figures show both parts.
# 2. Decoys.  The same log at a tenth of the size with "error" decoys
#    (error_rate metrics, NCCL dlerror notices): grep -m1 stops at a decoy,
#    diagnose still finds the fault.
# 3. Quality per mode.  Dev set ($SM_SHARED/devdata/failures, default
#    ../shared; SM_DIAGNOSE_LABELS names a labels file for a part of it),
#    the fixtures of tests/data/failure and a 200000-line generated log,
#    scored for the default locator, --no-locator (classify the whole log)
#    and --tail N (classify only the last N lines).
# 4. Logs without newlines.  A 2 GiB sparse file (its hole reads as NUL
#    bytes) with the fault on the last lines, and a 512 MiB log of a
#    progress bar that only writes carriage returns, then the fault: both
#    against one read of the file (`wc -l`), warm page cache, best of 3.
#    The analysis reads bounded pieces; the line count is the one pass.
#
#   bench/diagnose/run.sh            (BENCH_DIAGNOSE_LINES=N to resize)
set -eu
cd "$(dirname "$0")/../.."
BIN=${SCHEDMATE:-build/schedmate}
LINES=${BENCH_DIAGNOSE_LINES:-10800000}
TAIL=${BENCH_DIAGNOSE_TAIL:-10}
FIX=tests/data/failure/gpu_ecc_deepspeed.log
FIXLINE=21
[ -x "$BIN" ] || { echo "bench/diagnose: build $BIN first (make)" >&2; exit 2; }
command -v jq >/dev/null || { echo "bench/diagnose: jq is required" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/schedmate-bench-diagnose.XXXXXX")
trap 'rm -rf "$W"' EXIT
export LC_ALL=C

# Best wall time of 3 runs, in seconds; the last run's stdout in $W/out.
best3() {
  local best="" t0 t1 t
  for _ in 1 2 3; do
    t0=$(date +%s%N)
    "$@" > "$W/out" 2>/dev/null || true
    t1=$(date +%s%N)
    t=$(( t1 - t0 ))
    if [ -z "$best" ] || [ $t -lt $best ]; then best=$t; fi
  done
  awk -v ns="$best" 'BEGIN { printf "%.4f", ns / 1e9 }'
}

echo "== 1. speed: diagnose vs grep -n -m1 -i error"
bench/diagnose/genlog.sh "$LINES" 0.7 "$FIX" plain 7 > "$W/big.log" 2> "$W/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$W/gen.err")
size=$(stat -c %s "$W/big.log")
cat "$W/big.log" > /dev/null
echo "input: $W/big.log, $LINES lines, $size bytes; failure copied in at line $at (root cause line $((at + FIXLINE - 1)))"
td=$(best3 "$BIN" diagnose --json "$W/big.log")
cp "$W/out" "$W/diag.json"
tg=$(best3 grep -n -m1 -i error "$W/big.log")
gl=$(cut -d: -f1 "$W/out")
printf '  %-44s %9s s  line %s\n' "schedmate diagnose --json LOG" "$td" "$(jq .first_error_line "$W/diag.json")"
printf '  %-44s %9s s  line %s\n' "grep -n -m1 -i error LOG" "$tg" "$gl"
awk -v g="$tg" -v d="$td" 'BEGIN { printf "  ratio grep/diagnose: %.2f (above 1: diagnose is faster)\n", g / d }'
jq -r '"  diagnose: chunks_examined \(.chunks_examined), lines classified \(.lines_examined), bytes read for analysis \(.bytes_read - .bytes_counted), bytes scanned only to count newlines \(.bytes_counted)"' "$W/diag.json"
tn=$(best3 "$BIN" diagnose --json --tail 1000 "$W/big.log")
echo "  for scale: diagnose --tail 1000 (reads the end, still counts every newline before it) takes $tn s"
t0=$(date +%s%N); "$BIN" diagnose --json --no-locator "$W/big.log" > /dev/null || true; t1=$(date +%s%N)
awk -v ns=$((t1 - t0)) 'BEGIN { printf "  for scale: diagnose --no-locator (classifies every line up to the fault) takes %.2f s\n", ns / 1e9 }'
rm -f "$W/big.log"

echo
echo "== 2. decoys: the first \"error\" is not the fault"
bench/diagnose/genlog.sh $((LINES / 10)) 0.7 "$FIX" words 8 > "$W/words.log" 2> "$W/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$W/gen.err")
gl=$(grep -n -m1 -i error "$W/words.log" | cut -d: -f1-2 | cut -c1-90)
dl=$("$BIN" diagnose --json "$W/words.log" | jq .first_error_line || true)
echo "  root cause at line $((at + FIXLINE - 1)); grep -m1 -i error stops at line ${gl}...; diagnose: line $dl"
rm -f "$W/words.log"

echo
echo "== 3. quality per mode"
bench/diagnose/genlog.sh 200000 0.7 "$FIX" words 9 > "$W/long.log" 2> "$W/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$W/gen.err")
printf '{"file":"long.log","first_error_line":%d,"category":"infrastructure","component":"gpu"}\n' $((at + FIXLINE - 1)) > "$W/long.jsonl"
# The same, with an error the job survived (a shard read retried) at 20 %.
GENLOG_EARLY=tests/data/failure/recovered_eio.snippet GENLOG_EARLY_AT=0.2 \
  bench/diagnose/genlog.sh 200000 0.7 "$FIX" words 10 > "$W/recov.log" 2> "$W/gen.err"
at=$(sed -n 's/^fixture_first_line=//p' "$W/gen.err")
printf '{"file":"recov.log","first_error_line":%d,"category":"infrastructure","component":"gpu"}\n' $((at + FIXLINE - 1)) > "$W/recov.jsonl"
dev=${SM_SHARED:-../shared}/devdata/failures
devlabels=${SM_DIAGNOSE_LABELS:-$dev/labels.jsonl}
score() { # DIR LABELS OPTIONS...
  local d=$1 l=$2; shift 2
  bench/diagnose/evaluate.sh --quiet -- "$@" "$d" "$l" | tail -1 | sed 's/^SUMMARY //'
}
nfx=$(grep -c . tests/data/failure/expected.jsonl)
ndev=$( [ -r "$devlabels" ] && grep -c . "$devlabels" || echo 0)
printf '  %-16s %-58s %-58s %-20s %s\n' mode "dev set ($ndev real logs)" "fixtures ($nfx own logs)" "200k-line log" "same + recovered error"
for mode in locator no-locator tail; do
  case $mode in
    locator) opts=(--context 200) ;;
    no-locator) opts=(--no-locator) ;;
    tail) opts=(--tail "$TAIL") ;;
  esac
  if [ -r "$devlabels" ]; then ds=$(score "$dev" "$devlabels" "${opts[@]}"); else ds="(no dev set)"; fi
  fs=$(score tests/data/failure tests/data/failure/expected.jsonl "${opts[@]}")
  ls=$(score "$W" "$W/long.jsonl" "${opts[@]}" | sed 's/.*line=\([^ ]*\).*cat=\([^ ]*\).*/line=\1 cat=\2/')
  rs=$(score "$W" "$W/recov.jsonl" "${opts[@]}" | sed 's/.*line=\([^ ]*\).*cat=\([^ ]*\).*/line=\1 cat=\2/')
  label=$mode; [ $mode = tail ] && label="tail $TAIL"
  printf '  %-16s %-58s %-58s %-20s %s\n' "$label" "$ds" "$fs" "$ls" "$rs"
done
echo "  (line: first error within 2 lines; cat: category accuracy; infra_f1: F1 of"
echo "   infrastructure; comp: component accuracy; unsafe: restart/isolation plans"
echo "   for user or framework faults)"

echo
echo "== 4. logs without newlines: diagnose vs one read (wc -l)"
tb='\nTraceback (most recent call last):\n  File "/home/u/train.py", line 88, in <module>\nRuntimeError: CUDA error: uncorrectable ECC error encountered\n'
truncate -s $((2 << 30)) "$W/sparse.log"
printf "$tb" >> "$W/sparse.log"
python3 - "$W/cr.log" <<'PY'
import sys
unit = ''.join('\r %3d%%|%-10s| %d/100000 [00:%02d<09:59, 47.1it/s, loss=2.%03d]'
               % (i % 100, '#' * (i % 10), i, i % 60, i % 1000) for i in range(1000))
with open(sys.argv[1], 'w') as f:
    n = 0
    while n < 512 << 20:
        f.write(unit)
        n += len(unit)
PY
printf "$tb" >> "$W/cr.log"
for f in sparse cr; do
  size=$(stat -c %s "$W/$f.log")
  cat "$W/$f.log" > /dev/null
  tw=$(best3 wc -l "$W/$f.log")
  td=$(best3 "$BIN" diagnose --json "$W/$f.log")
  printf '  %-7s %11s bytes: wc -l %8s s, diagnose %8s s, ratio %s; %s\n' "$f" "$size" "$tw" "$td" \
    "$(awk -v a="$tw" -v b="$td" 'BEGIN { printf "%.2f", a / b }')" \
    "$(jq -r '"line \(.first_error_line), read \(.bytes_read) (\(.bytes_counted) to count lines)"' "$W/out")"
  rm -f "$W/$f.log"
done
echo "  (ratio above 1: diagnose is faster than one read of the file; below 1 by"
echo "   the line count's share: the analysis itself reads bounded pieces)"
