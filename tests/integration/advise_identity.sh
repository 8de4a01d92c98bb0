# advise through the real extractor on a repository written here: the same
# job resubmitted with another output directory, seed, rendezvous port,
# from a renamed copy of the repository or a copied script still matches;
# another model size, dataset, method (LoRA), sequence length or length
# does not, whatever the threshold; a job whose metadata says too little
# falls back with too_little_known.
. "$(dirname "$0")/../lib.sh"
S=$SCHEDMATE
R="$SM_TMP/sft-repo"
mkdir -p "$R"
cat > "$R/train.py" <<'EOF'
import argparse

from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="gpt2")
    p.add_argument("--dataset", default="alpaca")
    p.add_argument("--max_steps", type=int, default=1000)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    p.add_argument("--per_device_train_batch_size", type=int, default=4)
    p.add_argument("--max_seq_length", type=int, default=1024)
    p.add_argument("--use_lora", action="store_true")
    p.add_argument("--output_dir", default="out")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bf16", action="store_true")
    args = p.parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    if args.use_lora:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=16))
    targs = TrainingArguments(output_dir=args.output_dir,
                              max_steps=args.max_steps,
                              learning_rate=args.learning_rate,
                              seed=args.seed, bf16=args.bf16,
                              per_device_train_batch_size=args.per_device_train_batch_size)
    Trainer(model=model, args=targs).train()


if __name__ == "__main__":
    main()
EOF
cat > "$R/loop.py" <<'EOF'
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--workers", type=int, default=4)
args = p.parse_args()
net = torch.nn.Linear(10, 10)
for _ in range(100):
    net(torch.zeros(1, 10)).sum().backward()
EOF
ARGS="--model_name_or_path /models/llama-2-7b-hf --dataset alpaca --max_steps 2000 --learning_rate 2e-5 --max_seq_length 2048 --bf16"
DB="$SM_TMP/identity.db"
expect_rc 0 $S history add --db "$DB" --id base --duration 3600 --repo "$R" -- \
  torchrun --nproc_per_node=4 --master_port=29500 train.py $ARGS --output_dir /ckpt/run1 --seed 1

# advise_on WANT LABEL [--threshold T] -- REPO CMD...: the fallback reason
# (or "match") must be WANT.
advise_on() {
  local want=$1 label=$2 got; shift 2
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  local repo=$1; shift
  expect_rc 0 $S advise --json --db "$DB" "${opts[@]}" --repo "$repo" -- "$@"
  got=$(jget "$SM_TMP/last.out" 'if .fallback then .fallback_reason else "match" end')
  [ "$got" = "$want" ] || fail "$label: $got, want $want ($(jget "$SM_TMP/last.out" '.fallback_detail'))"
}

# The same job.
advise_on match "other output dir, seed, port" -- "$R" \
  torchrun --nproc_per_node=4 --master_port=29777 train.py $ARGS --output_dir /ckpt/run2 --seed 7
cp -r "$R" "$SM_TMP/sft-repo-renamed"
advise_on match "renamed copy of the repository" -- "$SM_TMP/sft-repo-renamed" \
  torchrun --nproc_per_node=4 --master_port=29500 train.py $ARGS --output_dir /ckpt/run1 --seed 1
cp "$R/train.py" "$SM_TMP/sft-repo-renamed/train_copy.py"
advise_on match "copied script" -- "$SM_TMP/sft-repo-renamed" \
  torchrun --nproc_per_node=4 train_copy.py $ARGS
[ "$(jget "$SM_TMP/last.out" '.matches[0].identity|join(",")')" = "model,dataset,task,length,configuration" ] || fail "match identity: a copied script keeps the exact configuration too"

# Different jobs, even with a threshold that lets any cosine through.
diff_on() {
  local label=$1 from=$2 to=$3 cmd
  cmd="torchrun --nproc_per_node=4 train.py $ARGS --output_dir /ckpt/run1"
  cmd=${cmd/"$from"/"$to"}
  # shellcheck disable=SC2086
  advise_on no_match "$label" --threshold 0.3 -- "$R" $cmd
}
diff_on "13B instead of 7B (output dir unchanged)" llama-2-7b-hf llama-2-13b-hf
diff_on "another dataset" "--dataset alpaca" "--dataset sharegpt"
diff_on "LoRA instead of full fine-tuning" "--bf16" "--bf16 --use_lora"
diff_on "another sequence length" "--max_seq_length 2048" "--max_seq_length 4096"
diff_on "twice as many steps" "--max_steps 2000" "--max_steps 4000"
jget "$SM_TMP/last.out" '.fallback_detail' | grep -q "iterations 2000, this job 4000" || fail "veto detail"

# A loop with no model, data or task to name.
expect_rc 0 $S history add --db "$DB" --id loop --duration 60 --repo "$R" -- python loop.py
# Resubmitted as it was, the loop is its own exact configuration: matched
# on that basis although its metadata names only a model family.
advise_on match "anonymous loop resubmitted" -- "$R" python loop.py
[ "$(jget "$SM_TMP/last.out" '.matches[0].identity_basis')" = configuration ] || fail "loop basis"
# The same loop with an option the extractor does not explain: kept apart
# as a different job (the unexplained residue differs), not matched.
advise_on no_match "anonymous loop with an unexplained option" -- "$R" python loop.py --workers 8
jget "$SM_TMP/last.out" '.fallback_detail' | grep -q unexplained_difference || fail "unexplained option detail"
[ "$(jget "$SM_TMP/last.out" '.identity.enough')" = false ] || fail "identity.enough"
expect_rc 0 $S advise --db "$DB" --repo "$R" -- python loop.py --workers 8
grep -q "fallback: no_match.*unexplained_difference" "$SM_TMP/last.out" || fail "text output"
