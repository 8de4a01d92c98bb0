#!/usr/bin/env bash
# structure_cycles.sh - no folder's files call back up: the include and
# symbol graph of each folder (src/*/, cli/, agent/) has no cycle.  Every
# cycle found is printed; only the folders listed in CLEAN fail the test,
# so that a folder once made clean stays clean while the others are still
# being worked on (add a folder here when its cycles are gone).
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
# Every folder is clean now: all must stay so.
CLEAN=src/advisor,src/failure,src/gpustat,src/history,src/llm,src/meta,src/serve,src/sim,src/slurm,src/text,src/tracker,src/util,cli,agent
OBJ=${BUILD:-build}/obj
[ -d "$OBJ/src" ] || skip "no objects under $OBJ (build first)"
command -v nm >/dev/null || skip "no nm"
rc=0
scripts/check-cycles.py --obj "$OBJ" --clean "$CLEAN" >"$SM_TMP/cycles.txt" || rc=$?
cat "$SM_TMP/cycles.txt"
[ $rc = 0 ] || fail "a folder that must be clean has a cycle (see above)"
# The checker sees what it claims to see: the graph is built from the
# objects (symbol edges), and a cycle made on purpose is reported.
grep -q '^src/slurm .*includes+symbols' "$SM_TMP/cycles.txt" || fail "slurm not read from its objects"
T=$SM_TMP/fake/src/loop
mkdir -p "$T" "$SM_TMP/fakeobj/src/loop"
printf '#include "b.h"\nint a(void) { return b(); }\n' >"$T/a.c"
printf 'int b(void);\n' >"$T/b.h"
printf '#include "a_int.h"\nint b(void) { return 1; }\n' >"$T/b.c"
printf 'int a(void);\n' >"$T/a_int.h"
rc=0
(cd "$SM_TMP/fake" && "$OLDPWD/scripts/check-cycles.py" --clean src/loop src/loop) \
  >"$SM_TMP/fake.txt" || rc=$?
[ $rc = 1 ] || fail "an include cycle was not found: $(cat "$SM_TMP/fake.txt")"
grep -q 'cycle: a <-> b' "$SM_TMP/fake.txt" || fail "cycle not named: $(cat "$SM_TMP/fake.txt")"
echo "ok: cycle checker"
