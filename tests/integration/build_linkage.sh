#!/usr/bin/env bash
# build_linkage.sh - the licence rule of the build: libslurm
# (GPL-2.0-or-later) is linked into the Slurm agent's executable only,
# never into the schedmate command or the library, and the agent links no
# COIN-OR solver (EPL-2.0, incompatible with the GPL).  `schedmate slurm`
# runs the agent from its own directory, and says so in one line when it
# is missing.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
AGENT=$(dirname "$SCHEDMATE")/schedmate-slurm
command -v readelf >/dev/null || skip "no readelf"
[ -x "$AGENT" ] || fail "$AGENT not built"
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
for f in "$SCHEDMATE" "$B/libschedmate.so"; do
  [ -e "$f" ] || continue
  ! needed "$f" | grep -q '^libslurm' || fail "$f links libslurm"
done
! needed "$AGENT" | grep -Eqi '^lib(cbc|clp|osi|cgl|coinutils|coinmp)' || fail "$AGENT links a COIN-OR library"
if [ -f /usr/include/slurm/slurm.h ]; then
  needed "$AGENT" | grep -q '^libslurm' || fail "$AGENT does not link libslurm"
fi
! nm "$SCHEDMATE" 2>/dev/null | grep -q ' U slurm_' || fail "schedmate refers to libslurm"
# Through schedmate: the same help as the agent's own.
expect_rc 0 "$SCHEDMATE" slurm --help
cp "$SM_TMP/last.out" "$SM_TMP/via.out"
expect_rc 0 "$AGENT" --help
cmp -s "$SM_TMP/via.out" "$SM_TMP/last.out" || fail "schedmate slurm --help differs from schedmate-slurm --help"
expect_rc 0 "$SCHEDMATE" help slurm
grep -q '^usage: schedmate slurm' "$SM_TMP/last.out" || fail "help slurm"
# Arguments arrive unchanged (an option the agent refuses names itself).
expect_rc 2 "$SCHEDMATE" slurm --db x --no-such-option
grep -q "unknown option '--no-such-option'" "$SM_TMP/last.err" || fail "$(cat "$SM_TMP/last.err")"
# Without the agent beside it: one line naming the missing file, exit 2.
mkdir -p "$SM_TMP/alone"
cp "$SCHEDMATE" "$SM_TMP/alone/schedmate"
expect_rc 2 "$SM_TMP/alone/schedmate" slurm --once --db x
[ "$(wc -l <"$SM_TMP/last.err")" = 1 ] || fail "not one line: $(cat "$SM_TMP/last.err")"
grep -q "schedmate slurm: $SM_TMP/alone/schedmate-slurm: the Slurm agent is not installed" "$SM_TMP/last.err" \
  || fail "message: $(cat "$SM_TMP/last.err")"
# Through a symbolic link, the directory is the real binary's.
ln -s "$SCHEDMATE" "$SM_TMP/alone/link"
expect_rc 0 "$SM_TMP/alone/link" slurm --help
