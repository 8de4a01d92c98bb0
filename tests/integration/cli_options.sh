#!/usr/bin/env bash
# cli_options.sh - the option table (cli/options.h) as `schedmate slurm`
# uses it: --opt VALUE, --opt=VALUE, unambiguous prefixes, "--", and a
# one-line message with exit 2 for each kind of mistake.  Nothing here
# reaches a cluster: every case stops at parsing (--json without --once
# is refused after all options were read, which shows they were).
. "$(dirname "$0")/../lib.sh"
S=("$SCHEDMATE" slurm)
bad() { # bad MESSAGE ARGS...: exit 2 and MESSAGE on stderr, one line + hint
  local want=$1; shift
  expect_rc 2 "${S[@]}" "$@"
  grep -qF -- "$want" "$SM_TMP/last.err" || fail "$*: $(cat "$SM_TMP/last.err")"
  grep -q "^Try 'schedmate slurm --help'" "$SM_TMP/last.err" || fail "$*: no hint"
}
parsed='--json goes with --once'
bad "$parsed" --db x --interval 5 --json
bad "$parsed" --db=x --interval=5 --json
bad "$parsed" --db x --interv 5 --top 3 --json       # prefixes
bad "$parsed" --db x --no-sacct --sacct sacct2 --log-level debug --json
bad "$parsed" --enforce --enforce --db x --json     # the same mode twice
bad "option '--s' is ambiguous" --db x --s 5
bad "unknown option '--no-such'" --db x --no-such
bad "unknown option '--no-such=1'" --db x --no-such=1
bad "unknown option '-x'" -x --db x
bad "--interval needs a value" --db x --interval
bad "--once takes no value" --db x --once=1
bad "--interval: expected a number in [0.05, 86400], got '-1'" --db x --interval=-1
bad "--interval: expected a number, got 'soon'" --db x --interval soon
bad "--top-k: expected a number in [1, 1000], got '0'" --db x --top-k 0
bad "unexpected argument 'extra'" --db x extra
bad "unexpected argument '--json'" --db x -- --json
bad "--log-level: expected error, warn, info or debug, got 'loud'" --db x --log-level loud
bad "--sacct needs a command" --db x --sacct=
bad "--shadow and --enforce exclude each other" --shadow --enforce --db x
bad "--db URI is required" --once
# Help: -h, --help, and a prefix of --help; it wins over what follows.
for h in -h --help --he; do
  expect_rc 0 "${S[@]}" --db x "$h" --no-such
  grep -q '^usage: schedmate slurm' "$SM_TMP/last.out" || fail "$h: no usage"
  grep -q '^  --time-limit-margin X in enforce mode' "$SM_TMP/last.out" || fail "$h: option list"
  grep -q '^Exit status:' "$SM_TMP/last.out" || fail "$h: no exit status"
done
