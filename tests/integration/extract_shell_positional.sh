# Launch scripts whose positional parameters are absurdly large
# ($99999999999, ${@:4294967297}, $18446744073709551617: found by the
# plugin-request fuzzer) are unset parameters, not reads before argv.
. "$(dirname "$0")/../lib.sh"
R="$SM_TMP/repo"
mkdir -p "$R"
cat >"$R/train.py" <<'PY'
import argparse
p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, default=0.1)
p.parse_args()
PY
cat >"$R/run.sh" <<'SH'
#!/bin/bash
python train.py --lr ${99999999999:-0.5} "${@:4294967297}" "${@:2:99999999999}" $18446744073709551617
SH
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- bash run.sh a b
[ "$(jget "$SM_TMP/last.out" .metadata.lr)" = 0.5 ] || fail "lr $(jget "$SM_TMP/last.out" .metadata.lr)"
echo ok
