# issue 18 item 8: following symbolic links, `extract` resolves them only
# inside the repository.  Links to /etc, /etc/passwd, an outside directory
# and a chain that ends outside are refused without any file system call
# (readlink, stat, open, ...) on the paths outside, as strace shows.
. "$(dirname "$0")/../lib.sh"
command -v strace >/dev/null || skip "strace not installed"
strace -f -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace refused)"
R="$SM_TMP/repo"
OUT="$SM_TMP/outside-marker-8"
mkdir -p "$R/configs/sub" "$OUT/dir"
cat >"$R/train.py" <<'PY'
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--config", default="configs/base.yaml")
parser.add_argument("--hyp", default="configs/base.yaml")
parser.add_argument("--data", default="configs/base.yaml")
parser.add_argument("--extra", default="configs/base.yaml")
parser.add_argument("--more", default="configs/base.yaml")
parser.add_argument("--lr", type=float, default=0.01)
args = parser.parse_args()
PY
printf 'lr: 0.5\n' >"$R/configs/base.yaml"
printf 'lr: 777\n' >"$OUT/dir/x.yaml"
ln -s /etc/passwd "$R/configs/passwd.yaml"
ln -s /etc "$R/configs/etc"
ln -s "$OUT" "$R/configs/outdir"
ln -s c2.yaml "$R/configs/c1.yaml"
ln -s sub/c3.yaml "$R/configs/c2.yaml"
ln -s ../../../outside-marker-8/dir/x.yaml "$R/configs/sub/c3.yaml"
# A link inside is still followed.
ln -s ../base.yaml "$R/configs/sub/inside.yaml"
# LeakSanitizer cannot run under ptrace.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
  strace -f -qq -e trace=%file -o "$SM_TMP/trace" \
  "$SCHEDMATE" extract --json --repo "$R" -- python train.py \
  --config configs/sub/inside.yaml --hyp configs/passwd.yaml \
  --data configs/etc/passwd --extra configs/c1.yaml \
  --more configs/outdir/dir/x.yaml >"$SM_TMP/out.json" 2>"$SM_TMP/err" \
  || { cat "$SM_TMP/err"; fail "extract exited $?"; }
[ "$(jget "$SM_TMP/out.json" .metadata.lr)" = 0.5 ] || fail "lr: $(jget "$SM_TMP/out.json" .metadata.lr)"
n=$(jq -r '.warnings[]' "$SM_TMP/out.json" | grep -c "refused: resolves outside" || true)
[ "$n" -ge 3 ] || { jq -r ".warnings[]" "$SM_TMP/out.json"; fail "expected 3 refusals, got $n"; }
# What a readlink returns is the link's text, not a look-up: keep only the
# path arguments of those calls.
sed -E -e 's/^([0-9]+ +readlinkat\([^,]+, "[^"]*"), .*/\1/' \
       -e 's/^([0-9]+ +readlink\("[^"]*"), .*/\1/' "$SM_TMP/trace" >"$SM_TMP/paths"
touched=$(grep -E "outside-marker-8|\"/etc\"|\"/etc/passwd\"" "$SM_TMP/paths" || true)
[ -z "$touched" ] || { echo "$touched" | head -20; fail "paths outside the repository were looked up"; }
echo "ok ($(wc -l <"$SM_TMP/trace") file system calls traced, none outside)"
