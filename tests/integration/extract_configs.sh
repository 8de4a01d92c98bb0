# `schedmate extract` on malformed inputs of every config system and
# launcher it reads: inheritance cycles, missing bases and bases outside
# the root, deep nesting, huge files, bad syntax in YAML, TOML, gin,
# Python configs and launch scripts.  Each ends in exit 0, a warning and
# null fields, never a crash, a hang or a read outside the root.
. "$(dirname "$0")/../lib.sh"
R="$SM_TMP/repo"
mkdir -p "$R/configs" "$R/scripts" "$R/gin"
cat >"$R/train.py" <<'PY'
import argparse
import torch
p = argparse.ArgumentParser()
p.add_argument("--config", default=None)
p.add_argument("--gin_file", default=None)
p.add_argument("--lr", type=float, default=0.1)
p.parse_args()
PY
run() { # expect exit 0 and at least one warning containing $1
  local needle=$1; shift
  expect_rc 0 timeout 20 "$SCHEDMATE" extract --json --repo "$R" -- "$@"
  jq -e '.metadata | length == 16' "$SM_TMP/last.out" >/dev/null ||
    fail "$*: no metadata object"
  if [ -n "$needle" ]; then
    jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q -- "$needle" ||
      fail "$*: no warning with '$needle': $(jq -c .warnings "$SM_TMP/last.out")"
  fi
}
# Inheritance: a cycle, a missing base, a base outside the root, a link out.
printf '_BASE_: b.yaml\nmax_steps: 10\n' >"$R/configs/a.yaml"
printf '_BASE_: a.yaml\nlr: 0.2\n' >"$R/configs/b.yaml"
run "inheritance cycle" python train.py --config configs/a.yaml
[ "$(jget "$SM_TMP/last.out" .metadata.iterations)" = 10 ] || fail "cycle: child lost"
printf '_base_: [missing.py, ../../../../etc/passwd.yaml]\nmax_steps: 3\n' >"$R/configs/c.yaml"
run "not found" python train.py --config configs/c.yaml
[ "$(jget "$SM_TMP/last.out" .metadata.iterations)" = 3 ] || fail "missing base: child lost"
ln -s /etc/hostname "$R/configs/out.yaml" 2>/dev/null || true
printf '__include__: [out.yaml]\nmax_steps: 4\n' >"$R/configs/d.yaml"
run "" python train.py --config configs/d.yaml
[ "$(jget "$SM_TMP/last.out" .metadata.iterations)" = 4 ] || fail "linked base: child lost"
# Deep nesting and a huge file.
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%*sk%d:\n", i * 2, "", i; printf "%*sv: 1\n", 600, "" }' \
  >"$R/configs/deep.yaml"
run "deep" python train.py --config configs/deep.yaml
awk 'BEGIN { for (i = 0; i < 120000; i++) print "some_long_key_" i ": " i }' >"$R/configs/huge.yaml"
run "file cap" python train.py --config configs/huge.yaml
# 60 levels of Python bases.
for i in $(seq 0 59); do
  printf "_base_ = ['p%d.py']\nv%d = %d\n" $((i + 1)) "$i" "$i" >"$R/configs/p$i.py"
done
run "too deep" python train.py --config configs/p0.py
# Bad syntax in each format.
printf 'a: [1, 2\nb: }\n' >"$R/configs/bad.yaml"
run "YAML error" python train.py --config configs/bad.yaml
printf '[train\nlr = = 3\n' >"$R/configs/bad.toml"
run "TOML syntax" python train.py --config configs/bad.toml
printf '{"a": [1, 2}\n' >"$R/configs/bad.json"
run "JSON error" python train.py --config configs/bad.json
printf 'Trainer.lr = [1, 2\nnot a binding\ninclude "nowhere.gin"\n' >"$R/gin/bad.gin"
run "gin" python train.py --gin_file gin/bad.gin
printf 'lr = 0.3\ndef (:\nwhile True:\n    x = 1\ndef f():\n    return f()\ny = f()\n' >"$R/configs/bad.py"
run "" python train.py --config configs/bad.py
printf '\x00\x01\x02binary' >"$R/configs/bin.yaml"
run "binary" python train.py --config configs/bin.yaml
# Launch scripts: unbalanced quotes, sourcing itself, a function calling
# itself, an endless loop.
printf 'torchrun --nproc_per_node=2 "train.py\n' >"$R/scripts/quote.sh"
run "unbalanced quotes" bash scripts/quote.sh
printf '. scripts/self.sh\nf() { f; }\nf\nwhile true; do x=1; done\ntorchrun --nproc_per_node=2 train.py --lr 0.4\n' \
  >"$R/scripts/self.sh"
run "" bash scripts/self.sh
[ "$(jget "$SM_TMP/last.out" .metadata.gpus)" = 2 ] || fail "self-sourcing script: launch lost"
[ "$(jget "$SM_TMP/last.out" .metadata.lr)" = 0.4 ] || fail "self-sourcing script: lr lost"
# Nothing outside the root was opened: a base under / is refused.
printf '_BASE_: /etc/config.yaml\nmax_steps: 6\n' >"$R/configs/abs.yaml"
run "not found" python train.py --config configs/abs.yaml
echo "malformed configs and scripts: warnings, no crash"
