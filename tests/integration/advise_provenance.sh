# advise on the configuration provenance, through the real CLI on a
# repository written here (a preset table the extractor does not resolve,
# a YAML config): a resubmission that changes only cosmetic options, from a
# copied config, matches on the exact-configuration digest even when the
# metadata is thin; an unconsumed --batch or an edited config line the
# extractor does not read is kept apart with the veto
# unexplained_difference; extract --json carries the provenance; a history
# written before the digests (schema 1) is migrated and still matched.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
command -v jq >/dev/null || skip "jq not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed"
R="$SM_TMP/preset-repo"
mkdir -p "$R/configs"
cat > "$R/train.py" <<'PY'
import argparse

import yaml

PRESETS = {"small": dict(width=256, depth=8), "large": dict(width=1024, depth=24)}

p = argparse.ArgumentParser()
p.add_argument("--config", default="configs/unet.yaml")
p.add_argument("--preset", default="small")
p.add_argument("--batch", type=int, default=None)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--output_dir", default="out")
p.add_argument("--log_interval", type=int, default=50)
args = p.parse_args()
cfg = yaml.safe_load(open(args.config))
PY
cat > "$R/configs/unet.yaml" <<'YML'
model:
  name: unet
  channel_mult: 2
dataset: cityscapes
YML
DB="$SM_TMP/h.db"
$S history add --db "$DB" --id first --duration 3600 --repo "$R" -- \
  python train.py --config configs/unet.yaml --batch 64 >/dev/null || fail "history add"

# extract --json: the provenance with both digests and the options.
$S extract --json --repo "$R" -- python train.py --config configs/unet.yaml \
  --batch 64 --seed 3 > "$SM_TMP/x.json" || fail "extract"
jq -e '.configuration.complete == true
       and (.configuration.config_digest | startswith("c1:"))
       and (.configuration.residue_digest | startswith("r1:"))
       and ([.configuration.options[] | select(.key == "--seed") | .cosmetic][0] == "seed")
       and ([.configuration.options[] | select(.key == "--batch") | .consumed][0] == false)
       and ([.configuration.files[] | .path] | index("configs/unet.yaml") != null)' \
  "$SM_TMP/x.json" >/dev/null || fail "extract provenance: $(cat "$SM_TMP/x.json")"

adv() { $S advise --json --db "$DB" --repo "$R" -- "$@"; }

# Cosmetic options and a copied config: the same job, on its configuration.
cp "$R/configs/unet.yaml" "$R/configs/rerun.yaml"
adv python train.py --config configs/rerun.yaml --batch 64 --seed 9 \
  --output_dir /ckpt/b --log_interval 5 > "$SM_TMP/a.json" || fail "advise"
jq -e '.fallback == false and .matches[0].job_id == "first"
       and .matches[0].identity_basis == "configuration"
       and .identity.configuration == true' "$SM_TMP/a.json" >/dev/null ||
  fail "cosmetic resubmission not matched: $(cat "$SM_TMP/a.json")"

# The same thin job without its configuration: too little known.
adv python train.py --config configs/unet.yaml --batch 64 --preset large \
  > "$SM_TMP/b.json" || fail "advise"
jq -e '.fallback == true' "$SM_TMP/b.json" >/dev/null || fail "preset matched"

# An edited line the extractor does not read, with richer metadata.
cat > "$R/configs/seg.yaml" <<'YML'
model:
  name: deeplabv3-resnet50
  output_stride: 8
dataset: cityscapes
task: semantic_segmentation
max_steps: 40000
YML
sed 's/output_stride: 8/output_stride: 16/' "$R/configs/seg.yaml" > "$R/configs/seg16.yaml"
$S history add --db "$DB" --id seg --duration 7200 --repo "$R" -- \
  python train.py --config configs/seg.yaml >/dev/null || fail "history add seg"
adv python train.py --config configs/seg16.yaml > "$SM_TMP/c.json" || fail "advise"
jq -e '.identity.enough == true and .fallback == true
       and .identity.first_veto == "unexplained_difference"
       and .identity.rejected_unexplained_difference >= 1' "$SM_TMP/c.json" >/dev/null ||
  fail "unread edit not kept apart: $(cat "$SM_TMP/c.json")"
adv python train.py --config configs/seg.yaml --batch 128 > "$SM_TMP/d.json" || fail "advise"
jq -e '.fallback == true' "$SM_TMP/d.json" >/dev/null || fail "unconsumed --batch matched"

# A schema-1 history (no digest columns, records without provenance).
OLD="$SM_TMP/old.db"
$S history export --db "$DB" > "$SM_TMP/export.jsonl" 2>/dev/null || fail "export"
sqlite3 "$OLD" "CREATE TABLE jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, record TEXT NOT NULL, fp BLOB NOT NULL, end_state TEXT, duration_s REAL, submit_time REAL, added_at REAL); PRAGMA user_version = 1;"
rec=$(jq -c 'select(.id == "seg") | del(.configuration)' "$SM_TMP/export.jsonl")
sqlite3 "$OLD" "INSERT INTO jobs(id, record, fp, end_state, duration_s) VALUES('seg', '$rec', x'00', 'completed', 7200);"
$S advise --json --db "$OLD" --repo "$R" -- python train.py --config configs/seg.yaml \
  > "$SM_TMP/e.json" || fail "advise on a schema-1 history"
jq -e '.fallback == false and .matches[0].identity_basis == "metadata"' "$SM_TMP/e.json" >/dev/null ||
  fail "old record not matched: $(cat "$SM_TMP/e.json")"
$S history add --db "$OLD" --id again --duration 7000 --repo "$R" -- \
  python train.py --config configs/seg.yaml >/dev/null || fail "add to a schema-1 history"
[ "$(sqlite3 "$OLD" 'PRAGMA user_version')" = 2 ] || fail "not migrated"
[ -n "$(sqlite3 "$OLD" "SELECT config_digest FROM jobs WHERE id = 'again'")" ] || fail "no digest column"
exit 0
