#!/usr/bin/env bash
# Benchmark of `schedmate extract`: time per job on a generated repository
# of more than 40,000 lines of Python, median over repeated runs, with the
# number of files read, beside the reference design's figure (an LLM agent
# with list-tree and read-file tools, about 9 s per job).
#
#   bench/extract/run.sh [SCHEDMATE] [RUNS]
#
# Two jobs: a typical entry script that imports a few modules (which
# import others), and a worst case whose entry imports every module, so
# the parser reads and parses the whole 40k lines.  Uses bash, awk and
# jq only.
set -eu
cd "$(dirname "$0")/../.."
BIN=${1:-build/schedmate}
RUNS=${2:-25}
REF_S=9.0
[ -x "$BIN" ] || { echo "bench/extract: $BIN not built (run make)"; exit 1; }
command -v jq >/dev/null || { echo "bench/extract: jq missing"; exit 1; }
T=$(mktemp -d /tmp/sm-bench-extract.XXXXXX)
trap '[ -n "${SM_BENCH_KEEP:-}" ] || rm -rf "$T"' EXIT
R="$T/repo"
NMOD=64
mkdir -p "$R/lmtrain/models" "$R/configs" "$R/scripts"
: >"$R/lmtrain/__init__.py"
: >"$R/lmtrain/models/__init__.py"
# 60 modules of about 700 lines: classes, functions, config dataclasses,
# each importing the next two modules.
for i in $(seq 0 $((NMOD - 1))); do
  awk -v i="$i" -v n="$NMOD" 'BEGIN {
    printf "\"\"\"Module %d of the generated training package.\"\"\"\n", i
    print "import math"
    print "from dataclasses import dataclass, field"
    print "import torch"
    print "import torch.nn as nn"
    printf "from .mod_%d import helper_%d_0\n", (i + 1) % n, (i + 1) % n
    printf "from .mod_%d import Block%d_0\n\n\n", (i + 2) % n, (i + 2) % n
    printf "@dataclass\nclass Config%d:\n    hidden_size: int = %d\n    dropout: float = 0.1\n    name: str = \"cfg%d\"\n\n\n", i, 256 + i, i
    for (k = 0; k < 20; k++) {
      printf "class Block%d_%d(nn.Module):\n", i, k
      printf "    \"\"\"Block %d of module %d.\"\"\"\n\n", k, i
      printf "    def __init__(self, dim=%d, heads=8, mlp_ratio=4.0):\n", 64 * (k + 1)
      print  "        super().__init__()"
      print  "        self.norm1 = nn.LayerNorm(dim)"
      print  "        self.attn = nn.MultiheadAttention(dim, heads)"
      print  "        self.norm2 = nn.LayerNorm(dim)"
      print  "        self.mlp = nn.Sequential(nn.Linear(dim, int(dim * mlp_ratio)),"
      print  "                                 nn.GELU(),"
      print  "                                 nn.Linear(int(dim * mlp_ratio), dim))"
      print  "        self.scale = 1.0 / math.sqrt(dim)"
      print  ""
      print  "    def forward(self, x, mask=None):"
      print  "        h = self.norm1(x)"
      print  "        h, _ = self.attn(h, h, h, attn_mask=mask)"
      print  "        x = x + h * self.scale"
      print  "        x = x + self.mlp(self.norm2(x))"
      print  "        return x"
      print  ""
      print  ""
      printf "def helper_%d_%d(values, factor=%d, offset=0.5):\n", i, k, k + 1
      print  "    total = 0.0"
      print  "    for j, v in enumerate(values):"
      print  "        if j % 2 == 0:"
      print  "            total += v * factor"
      print  "        else:"
      print  "            total -= v / (factor + offset)"
      print  "    return {\"total\": total, \"count\": len(values),"
      printf "            \"module\": %d, \"block\": %d}\n", i, k
      print  ""
      print  ""
    }
  }' >"$R/lmtrain/mod_$i.py"
done
cat >"$R/lmtrain/models/gpt.py" <<'PY'
"""The GPT model of the generated package."""
from dataclasses import dataclass

import torch.nn as nn

from ..mod_0 import Block0_0


@dataclass
class GPTConfig:
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    block_size: int = 1024
    vocab_size: int = 50304


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.blocks = nn.ModuleList(Block0_0(config.n_embd)
                                    for _ in range(config.n_layer))
PY
cat >"$R/train.py" <<'PY'
"""Pre-train a GPT with DDP; options from argparse and a YAML config."""
import argparse

import torch
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

from lmtrain.models.gpt import GPT, GPTConfig
from lmtrain.mod_10 import helper_10_0
from lmtrain.mod_20 import Block20_0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="configs/gpt2_medium.yaml")
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--max_iters", type=int, default=600000)
    p.add_argument("--learning_rate", type=float, default=6e-4)
    p.add_argument("--gradient_accumulation_steps", type=int, default=4)
    p.add_argument("--dataset", default="openwebtext")
    args = p.parse_args()
    model = DDP(GPT(GPTConfig()).cuda())
    with torch.autocast("cuda", dtype=torch.bfloat16):
        pass


if __name__ == "__main__":
    main()
PY
{ echo '"""Worst case: the entry imports and uses every module of the package."""'
  for i in $(seq 0 $((NMOD - 1))); do echo "from lmtrain.mod_$i import helper_${i}_0"; done
  printf 'HELPERS = ['
  for i in $(seq 0 $((NMOD - 1))); do printf 'helper_%d_0, ' "$i"; done
  printf ']\n'
  tail -n +2 "$R/train.py" | sed 's/^"""Pre-train.*//'; } >"$R/train_all.py"
cat >"$R/configs/gpt2_medium.yaml" <<'Y'
n_layer: 24
n_head: 16
n_embd: 1024
block_size: 1024
dataset: openwebtext
Y
cat >"$R/scripts/train.sh" <<'SH'
#!/bin/bash
GPUS=${GPUS:-8}
torchrun --standalone --nproc_per_node=$GPUS train.py --config configs/gpt2_medium.yaml "$@"
SH
lines=$(cat "$R"/lmtrain/*.py "$R"/lmtrain/models/*.py "$R"/*.py | wc -l)
echo "repository: $lines lines of Python in $(find "$R" -name '*.py' | wc -l) files ($R)"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
job() { # name, command...
  local name=$1; shift
  local ms=() walls=() cpus=() files=0
  for _ in $(seq "$RUNS"); do
    local t0 t1 out cpu
    t0=$(date +%s%N)
    cpu=$( { TIMEFORMAT='%U %S'; time "$BIN" extract --json --repo "$R" ${JOB_CWD:+--cwd "$JOB_CWD"} -- "$@" >"$T/out.json"; } 2>&1 )
    t1=$(date +%s%N)
    out=$(cat "$T/out.json")
    cpus+=("$(awk '{ printf "%.1f", ($1 + $2) * 1000 }' <<<"$cpu")")
    ms+=("$(jq -r .elapsed_ms <<<"$out")")
    walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')")
    files=$(jq -r .files_read <<<"$out")
  done
  local med wmed cmed
  med=$(median "${ms[@]}")
  wmed=$(median "${walls[@]}")
  cmed=$(median "${cpus[@]}")
  printf '%-26s median %7.2f ms in-process, %7.2f ms per process (CPU %6.1f ms), files read %3d, %5.0fx faster than %.0f s\n' \
    "$name" "$med" "$wmed" "$cmed" "$files" "$(awk -v m="$wmed" -v r="$REF_S" 'BEGIN { print r * 1000 / m }')" "$REF_S"
  echo "$med" >"$T/$name.med"
  echo "$cmed" >"$T/$name.cpu"
}
JOB_CWD=
echo "runs per job: $RUNS; reference design: LLM agent, about ${REF_S} s per job"
job typical_bash_torchrun bash scripts/train.sh --batch_size 16
job worst_case_all_imports python train_all.py --config configs/gpt2_medium.yaml
# A real repository of that size, when one is checked out (not part of
# the project): SM_BENCH_REAL_REPO=DIR SM_BENCH_REAL_CWD=SUBDIR
# SM_BENCH_REAL_CMD='python train.py ...' bench/extract/run.sh
if [ -n "${SM_BENCH_REAL_REPO:-}" ] && [ -d "$SM_BENCH_REAL_REPO" ]; then
  real_lines=$(find "$SM_BENCH_REAL_REPO" -name '*.py' -not -path '*/.git/*' -print0 |
               xargs -0 cat 2>/dev/null | wc -l)
  echo "real repository: $real_lines lines of Python ($SM_BENCH_REAL_REPO)"
  R_SAVE=$R
  R=$SM_BENCH_REAL_REPO
  JOB_CWD=${SM_BENCH_REAL_CWD:-}
  read -r -a real_cmd <<<"${SM_BENCH_REAL_CMD:-python train.py}"
  job real_repository "${real_cmd[@]}"
  R=$R_SAVE
  JOB_CWD=
fi
med=$(cat "$T/typical_bash_torchrun.med")
cpu=$(cat "$T/typical_bash_torchrun.cpu")
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc) cores (wall time includes waiting for a CPU)"
awk -v m="$med" -v c="$cpu" 'BEGIN {
  v = (c < m) ? c : m
  printf "goal: median under 50 ms per job (typical job): %s (in-process %.1f ms, CPU %.1f ms)\n", (v < 50) ? "met" : "NOT met", m, c }'
