# The repository is untrusted input: symlinks out of the root, ../ paths,
# a 2 GB sparse file, a FIFO and /proc must neither be read nor hang the
# run nor crash it; each refusal is a warning and the run still succeeds.
. "$(dirname "$0")/../lib.sh"
R="$SM_TMP/evil/repo"
mkdir -p "$R/configs" "$R/scripts" "$R/.git"
cat >"$R/train.py" <<'PY'
import argparse
import torch
import evilmod
parser = argparse.ArgumentParser()
parser.add_argument("--config", default="configs/base.yaml")
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()
PY
printf 'lr: 0.5\n' >"$R/configs/base.yaml"
printf 'lr: 12345\nepochs: 777\n' >"$SM_TMP/evil/outside.yaml"
printf 'epochs: 888\n' >"$R/.git/leak.yaml"
ln -s /etc/passwd "$R/configs/passwd.yaml"
ln -s /etc "$R/configs/etc"
ln -s ../../outside.yaml "$R/configs/sneaky.yaml"
ln -s /etc/passwd "$R/evilmod.py"
truncate -s 2G "$R/configs/huge.yaml"
mkfifo "$R/configs/pipe.yaml"
printf 'python ../outside_script.py\nbash ../../x.sh\n' >"$R/scripts/run.sh"
out="$SM_TMP/out.json"
run() {
  timeout 60 "$SCHEDMATE" extract --json --repo "$R" -- "$@" >"$out" 2>"$SM_TMP/err" \
    || { cat "$SM_TMP/err"; fail "extract $* exited $?"; }
  jq -e . "$out" >/dev/null || fail "not JSON: $*"
}
run python train.py --config configs/sneaky.yaml --cfg ../outside.yaml \
    --hyp configs/passwd.yaml --data configs/etc/passwd --extra configs/huge.yaml \
    --more configs/pipe.yaml --leak .git/leak.yaml
# Nothing from outside the root (lr 12345, epochs 777) or from .git.
[ "$(jget "$out" .metadata.lr)" != 12345 ] || fail "read a file outside the root"
[ "$(jget "$out" .metadata.iterations)" = 10 ] || fail "iterations: $(jget "$out" .metadata.iterations)"
[ "$(jget "$out" .metadata.lr)" = 0.01 ] || fail "lr: $(jget "$out" .metadata.lr)"
w=$(jq -r '.warnings[]' "$out")
echo "$w" | grep -q "huge.yaml: skipped" || fail "no warning for the 2 GB file: $w"
echo "$w" | grep -q "pipe.yaml: refused: not a regular file" || fail "no warning for the FIFO: $w"
echo "$w" | grep -q "sneaky.yaml: refused: resolves outside" || fail "no warning for the symlink: $w"
[ "$(jget "$out" .files_read)" -le 3 ] || fail "read too much: $(jget "$out" .files_read)"
# The FIFO as the entry script, and scripts that climb out with ../
run python configs/pipe.yaml
run bash scripts/run.sh
jq -r '.warnings[]' "$out" | grep -q "not found in the repository" || fail "../ script not refused"
run bash ../outside.yaml
run python /etc/passwd
[ "$(jget "$out" .files_read)" = 0 ] || fail "/etc/passwd was read"
# A symlinked repository root is resolved; /proc, / and ../ as --cwd are refused.
expect_rc 2 "$SCHEDMATE" extract --repo /proc -- python x.py
grep -q "refusing" "$SM_TMP/last.err" || fail "/proc message"
expect_rc 2 "$SCHEDMATE" extract --repo / -- python x.py
expect_rc 2 "$SCHEDMATE" extract --repo "$R" --cwd ../.. -- python train.py
grep -q "leaves the repository" "$SM_TMP/last.err" || fail "--cwd message"
expect_rc 2 "$SCHEDMATE" extract --repo "$R/configs/pipe.yaml" -- python x.py
expect_rc 2 "$SCHEDMATE" extract --repo "$SM_TMP/nope" -- python x.py
grep -q "nope" "$SM_TMP/last.err" || fail "missing repo message must name it"
echo ok
