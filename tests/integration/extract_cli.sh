# `schedmate extract`: usage errors, the JSON contract of docs/design.md
# section 3, human output, --config, --aliases, and bad input that must
# become warnings (exit 0), never a crash.
. "$(dirname "$0")/../lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures" && pwd)
R="$FIX/cifar_argparse/repo"
expect_rc 0 "$SCHEDMATE" extract --help
grep -q '^usage: schedmate extract' "$SM_TMP/last.out" || fail "--help"
expect_rc 2 "$SCHEDMATE" extract -- python train.py
grep -q -- '--repo' "$SM_TMP/last.err" || fail "missing --repo message"
expect_rc 2 "$SCHEDMATE" extract --repo "$R"
grep -q 'no launch command' "$SM_TMP/last.err" || fail "missing command message"
expect_rc 2 "$SCHEDMATE" extract --repo "$R" --bogus -- python train.py
expect_rc 2 "$SCHEDMATE" extract --repo "$R" --max-files 0 -- python train.py
expect_rc 2 "$SCHEDMATE" extract --repo "$R" --time-budget -1 -- python train.py
# JSON: exactly one object with the contract's keys, 16 metadata fields.
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- python train.py --epochs 7
[ "$(jq -s length "$SM_TMP/last.out")" = 1 ] || fail "not one JSON object"
jq -e '(.metadata | length) == 16 and (.files_read | type) == "number"
       and (.elapsed_ms | type) == "number" and (.warnings | type) == "array"
       and .metadata.iterations == 7 and .evidence.iterations == "command"' \
  "$SM_TMP/last.out" >/dev/null || fail "JSON contract: $(cat "$SM_TMP/last.out")"
# Human text names every field.
expect_rc 0 "$SCHEDMATE" extract --repo "$R" -- python train.py
for f in model_name task dataset iterations global_batch_size lr gpus precision parallelism; do
  grep -q "^$f " "$SM_TMP/last.out" || fail "text output lacks $f"
done
grep -q '^files read: ' "$SM_TMP/last.out" || fail "text output lacks files read"
# The command may also be one shell string.
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- "python train.py --lr 0.3 -b 64"
[ "$(jget "$SM_TMP/last.out" .metadata.per_device_batch_size)" = 64 ] || fail "one-string command"
# Bad commands and unparsable files are warnings, with exit 0.
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- "python train.py --lr 'unbalanced"
jq -e '.warnings | length > 0' "$SM_TMP/last.out" >/dev/null || fail "no warning for bad quoting"
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- frobnicate --x
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "frobnicate" || fail "unknown program warning"
expect_rc 0 "$SCHEDMATE" extract --json --repo "$R" -- python missing.py
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "missing.py" || fail "missing script warning"
B="$SM_TMP/bad"; mkdir -p "$B"
printf 'def broken(:\n  x = = 3\nlr = 0.5\n' >"$B/train.py"
printf 'a: [1, 2\nb: {\n' >"$B/bad.yaml"
printf '{"lr": 1e-3,' >"$B/bad.json"
printf 'x = [1,\n[table\n' >"$B/bad.toml"
head -c 4096 /dev/urandom >"$B/bin.yaml"
printf '\xff\xfe\xfa lr: 3\n' >"$B/utf.yaml"
awk 'BEGIN { s = "x = \""; for (i = 0; i < 300000; i++) s = s "a"; print s "\"" }' >"$B/long.py"
for cfg in bad.yaml bad.json bad.toml bin.yaml utf.yaml long.py; do
  expect_rc 0 "$SCHEDMATE" extract --json --repo "$B" --config "$cfg" -- python train.py --cfg "$cfg"
  jq -e . "$SM_TMP/last.out" >/dev/null || fail "$cfg: output not JSON"
done
expect_rc 0 "$SCHEDMATE" extract --json --repo "$B" --config bad.yaml -- python train.py
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "bad.yaml:.*YAML error" || fail "YAML error warning"
expect_rc 0 "$SCHEDMATE" extract --json --repo "$B" --config bad.json -- python train.py
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "bad.json:1: JSON error" || fail "JSON error warning"
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "train.py: Python syntax errors" || fail "Python error warning"
# An operator's alias table replaces the embedded one; a bad one is refused.
printf 'model\tresnet18\tmy-resnet\timage_classification\tcv\n' >"$SM_TMP/aliases.tsv"
expect_rc 0 "$SCHEDMATE" extract --json --aliases "$SM_TMP/aliases.tsv" --repo "$R" -- python train.py
[ "$(jget "$SM_TMP/last.out" .metadata.model_name)" = my-resnet ] || fail "--aliases not used"
printf 'nonsense line\n' >"$SM_TMP/bad.tsv"
expect_rc 2 "$SCHEDMATE" extract --aliases "$SM_TMP/bad.tsv" --repo "$R" -- python train.py
grep -q "bad.tsv" "$SM_TMP/last.err" || fail "bad alias file message"
# Limits: one file at most, then a warning.
expect_rc 0 "$SCHEDMATE" extract --json --max-files 1 --repo "$FIX/nanogpt_config/repo" -- python train.py config/train_gpt2.py
jq -r '.warnings[]' "$SM_TMP/last.out" | grep -q "file limit of 1" || fail "file limit warning"
[ "$(jget "$SM_TMP/last.out" .files_read)" = 1 ] || fail "file limit not kept"
echo ok
