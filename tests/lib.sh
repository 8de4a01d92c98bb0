# lib.sh - helpers sourced by the integration tests.
# Each test script runs under `set -eu` and fails on the first problem.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
# expect_rc CODE CMD...: runs CMD, fails unless it exits with CODE.
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" >"$SM_TMP/last.out" 2>"$SM_TMP/last.err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$SM_TMP/last.err" >&2; fail "$* exited $rc, expected $want"; }
}
# jget FILE EXPR: evaluates a jq expression on FILE.
jget() { jq -r "$2" "$1"; }
SHARED=${SM_SHARED:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/../shared}
