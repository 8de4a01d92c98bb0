#!/usr/bin/env bash
# Runs every test against one build directory.  Each part ends with its
# own count ("unit: N passed, N failed, N skipped", "integration: ..."),
# and the closing line is the total: "N passed, N failed, N skipped".
#
#   tests/run.sh [BUILD_DIR]        (default: build/asan)
#
# Unit tests: BUILD_DIR/sm_test (each test forked, with a timeout).
# Integration tests: tests/integration/*.sh, each one test; exit 0 passes,
# 77 skips, anything else fails.  They get SCHEDMATE (the binary), BUILD,
# SM_TMP (a private scratch directory) and the service addresses that
# tests/services.sh exported.  Services (Redis, Slurm) are started before
# and stopped by PID afterwards, whatever happens; the log says which were
# started and where (or why not).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build/asan}
export BUILD
export SCHEDMATE="$PWD/$BUILD/schedmate"
TOP_TMP=$(mktemp -d /tmp/schedmate-test.XXXXXX)
export SM_TMP="$TOP_TMP"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

cleanup() {
  if [ -x tests/services.sh ]; then tests/services.sh stop >/dev/null 2>&1; fi
  rm -rf "$TOP_TMP"
}
trap cleanup EXIT INT TERM

if [ -x tests/services.sh ]; then
  # shellcheck disable=SC1090
  echo "== services (tests/services.sh)"
  if ! tests/services.sh start >"$SM_TMP/services.env" 2>"$SM_TMP/services.log"; then
    echo "services: could not start all of them:"
  fi
  cat "$SM_TMP/services.log"
  set -a; . "$SM_TMP/services.env"; set +a
fi

echo "== unit tests ($BUILD/sm_test)"
out="$SM_TMP/unit.out"
"$BUILD/sm_test" | tee "$out"
read -r up uf us < <(tail -1 "$out" | sed -E 's/([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
if ! [[ "$up" =~ ^[0-9]+$ ]]; then up=0 uf=1 us=0; echo "FAIL    unit runner did not finish"; fi

echo "== integration tests"
passed=0 failed=0 skipped=0
for t in tests/integration/*.sh; do
  [ -e "$t" ] || continue
  name=$(basename "$t" .sh)
  start=$(date +%s.%N)
  log="$TOP_TMP/$name.log"
  # Each test gets a scratch directory of its own.
  mkdir -p "$TOP_TMP/$name"
  SM_TMP="$TOP_TMP/$name" timeout 900 bash "$t" >"$log" 2>&1
  rc=$?
  ms=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", (b-a)*1000}')
  if [ $rc = 0 ]; then
    printf 'ok      %-40s %8s ms\n' "$name" "$ms"; passed=$((passed + 1))
  elif [ $rc = 77 ]; then
    printf 'skip    %-40s %s\n' "$name" "$(tail -1 "$log")"; skipped=$((skipped + 1))
  else
    printf 'FAIL    %s (exit %d)\n' "$name" "$rc"; sed 's/^/    /' "$log" | tail -40
    failed=$((failed + 1))
  fi
done

echo "unit: $up passed, $uf failed, $us skipped"
echo "integration: $passed passed, $failed failed, $skipped skipped"
echo "$((up + passed)) passed, $((uf + failed)) failed, $((us + skipped)) skipped"
[ "$((uf + failed))" = 0 ]
