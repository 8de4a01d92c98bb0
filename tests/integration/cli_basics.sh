# The command's contract: --version, --help, unknown commands, exit codes.
. "$(dirname "$0")/../lib.sh"
expect_rc 0 "$SCHEDMATE" --version
grep -q '^schedmate [0-9]' "$SM_TMP/last.out" || fail "--version output"
expect_rc 0 "$SCHEDMATE" --help
grep -q 'Commands:' "$SM_TMP/last.out" || fail "--help output"
expect_rc 2 "$SCHEDMATE"
expect_rc 2 "$SCHEDMATE" no-such-command
grep -q "not a command" "$SM_TMP/last.err" || fail "unknown command message"
# Every listed command answers --help with exit 0 and a usage line.
for c in $("$SCHEDMATE" --help | awk '/^Commands:/{f=1;next} f&&/^  [a-z]/{print $1}'); do
  expect_rc 0 "$SCHEDMATE" "$c" --help
  grep -qi 'usage' "$SM_TMP/last.out" || fail "$c --help has no usage line"
done
