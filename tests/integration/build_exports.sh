#!/usr/bin/env bash
# build_exports.sh - libschedmate.so exports the public API and nothing
# else: no internal sm__ symbol, nothing outside sm_, and every function
# the public headers declare carries SM_EXTERN and is exported.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
SO=${BUILD:-build}/libschedmate.so
[ -f "$SO" ] || skip "$SO not built (make builds it)"
command -v nm >/dev/null || skip "no nm"
scripts/check-exports.py "$SO" || fail "exports (see above)"
n=$(nm -D --defined-only "$SO" | awk '$3 ~ /^sm__/' | wc -l)
[ "$n" = 0 ] || fail "$n sm__ symbols exported"
nm -D --defined-only "$SO" | awk '{print $3}' | grep -qx sm_store_open || fail "sm_store_open not exported"
# The checker catches a declaration without SM_EXTERN.
printf 'SM_EXTERN int sm_store_count_x(void);\nint sm_strerror(int c);\n' >"$SM_TMP/h.h"
rc=0
scripts/check-exports.py "$SO" "$SM_TMP/h.h" >"$SM_TMP/out.txt" || rc=$?
[ $rc = 1 ] || fail "a bad header passed"
grep -q 'sm_strerror is declared without SM_EXTERN' "$SM_TMP/out.txt" || fail "$(cat "$SM_TMP/out.txt")"
grep -q 'sm_store_count_x is declared but not exported' "$SM_TMP/out.txt" || fail "$(cat "$SM_TMP/out.txt")"
