# noise.awk - interleaves the noise of real training logs into a log, for
# tests/integration/track_noise.sh: warnings, NCCL chatter, checkpoint
# messages, evaluation output, dataset bars, with rank prefixes (RANK=1)
# and lines duplicated across ranks.  Deterministic for a given SEED.
#   awk -v SEED=7 -v RATE=0.8 -v RANK=1 -f noise.awk train.log
BEGIN {
  srand(SEED + 0)
  n = 0
  noise[n++] = "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 12 worker processes in total."
  noise[n++] = "  warnings.warn("
  noise[n++] = "node-2:41231:41301 [3] NCCL INFO Channel 07/24 :    0   1   2   3"
  noise[n++] = "Saving model checkpoint to ./out/checkpoint-12"
  noise[n++] = "[INFO] Saved checkpoint to /ckpt/run-2/step_0000012.pt in 9.12s"
  noise[n++] = "{'eval_loss': 2.8812, 'eval_runtime': 31.2, 'eval_samples_per_second': 211.1, 'eval_steps_per_second': 6.6}"
  noise[n++] = "***** Running Evaluation *****"
  noise[n++] = "  Num examples = 2000"
  noise[n++] = "Evaluating:  61%|██████    | 38/63 [00:21<00:14,  1.77it/s]"
  noise[n++] = "Map (num_proc=4):  52%|█████▏    | 5213/10000 [00:02<00:02, 2411.12 examples/s]"
  noise[n++] = "Loading dataset shards: 100%|██████████| 12/41 [00:01<00:00, 11.2it/s]"
  noise[n++] = "wandb: WARNING Step only supports monotonically increasing values, use define_metric to set a custom x axis."
  noise[n++] = "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks..."
  noise[n++] = "validation: val_loss=1.9912 val_acc=0.6412"
  noise[n++] = "GPU memory: 31.2 GiB allocated, 44.1 GiB reserved"
  noise[n++] = "Dataloader: prefetching next shard /data/shards/train-00021-of-00512.arrow"
  noise[n++] = "[2024-02-02 10:00:00,000] [WARNING] [stage3.py:1850:step] 4 pytorch allocator cache flushes since last step."
  noise[n++] = "DataLoader worker (pid 31231) is killed by signal: Bus error."
}
function emit_noise(   k, r) {
  k = int(rand() * n)
  if (RANK && rand() < 0.6) {
    for (r = int(rand() * 4); r >= 0; r--) print "[rank" int(rand() * 8) "]:" noise[k]
  } else print noise[k]
}
{
  if (rand() < RATE) { emit_noise(); if (rand() < 0.5) emit_noise() }
  print (RANK ? "[rank0]:" : "") $0
}
END { for (i = 0; i < 5; i++) emit_noise() }
