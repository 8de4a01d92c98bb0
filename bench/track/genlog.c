/* genlog.c - writes a realistic training log of a given size for the
 * tracker benchmark: stretches of several frameworks' progress output
 * (Megatron iterations with timer lines, a tqdm bar with carriage-return
 * updates and Hugging Face loss dicts, MMEngine epochs, DeepSpeed steps)
 * mixed with the noise real logs carry: warnings, NCCL chatter,
 * evaluation blocks, checkpoint messages, dataset bars.  The numbers move
 * like a real run's (a decaying loss, a noisy step time) from a fixed
 * seed, so every run writes the same bytes.
 *
 *   genlog BYTES > train.log
 *
 * Self-contained on purpose: the benchmark builds it with the system C
 * compiler and needs nothing else. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: uniform in [0, 1). */
static double uni(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

static long long written;

/* The loss of a run that started at 11 and levels off near 2. */
static double loss_at(long step) {
  double x = (double)step / 2e5;
  return 2.0 + 9.0 / (1.0 + x * x) + (uni() - 0.5) * 0.05;
}

/* A cosine learning-rate schedule over TOTAL steps. */
#define TOTAL 100000000L
static double lr_at(long step, double peak) {
  double p = (double)(step % TOTAL) / (double)TOTAL;
  return peak * 0.5 * (1.0 + __builtin_cos(3.141592653589793 * p));
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#include <stdarg.h>
static void out(const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vprintf(fmt, ap);
  va_end(ap);
  if (n > 0)
    written += n;
}

static void noise(long step) {
  double r = uni();

  if (r < 0.25)
    out("node-%d:%d:%d [%d] NCCL INFO Channel %02d/32 :    0   1   2   3"
        "   4   5   6   7\n",
        (int)(uni() * 8), 10000 + (int)(uni() * 50000),
        10000 + (int)(uni() * 50000), (int)(uni() * 8), (int)(uni() * 32));
  else if (r < 0.45)
    out("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:560: "
        "UserWarning: This DataLoader will create %d worker processes in "
        "total. Our suggested max number of worker in current system is 8.\n",
        16 + (int)(uni() * 16));
  else if (r < 0.6)
    out("[2024-03-01 12:%02d:%02d,%03d] [WARNING] [stage3.py:1850:step] %d "
        "pytorch allocator cache flushes since last step. this happens when "
        "there is high memory pressure and is detrimental to performance.\n",
        (int)(uni() * 60), (int)(uni() * 60), (int)(uni() * 1000),
        1 + (int)(uni() * 4));
  else if (r < 0.75)
    out("Dataloader: prefetching next shard /data/shards/train-%05d-of-01024"
        ".arrow\n", (int)(uni() * 1024));
  else if (r < 0.85)
    out("[INFO] Saved checkpoint to /checkpoints/run-7/step_%07ld.pt in "
        "%.2fs\n", step / 2, 5 + uni() * 20);
  else if (r < 0.95)
    out("GPU memory: %.1f GiB allocated, %.1f GiB reserved\n",
        40 + uni() * 20, 60 + uni() * 20);
  else
    out("wandb: WARNING Step only supports monotonically increasing values, "
        "use define_metric to set a custom x axis.\n");
}

static void eval_block(long step) {
  out("***** Running Evaluation *****\n  Num examples = 5000\n"
      "  Batch size = 64\n");
  for (int i = 10; i <= 80; i += 10)
    out("\rEvaluating: %3d%%|%-10.*s| %d/79 [00:%02d<00:%02d, %.2fit/s]",
        i * 100 / 80, i / 8, "##########", i, i / 3, (80 - i) / 3,
        20 + uni() * 10);
  out("\n{'eval_loss': %.4f, 'eval_runtime': %.3f, 'eval_samples_per_"
      "second': %.3f, 'eval_steps_per_second': %.3f, 'epoch': %.2f}\n",
      2 + uni(), 50 + uni() * 10, 300 + uni() * 100, 10 + uni() * 5,
      step / 1000.0);
  out("Map (num_proc=8): %3d%%|######    | %d/10000 [00:04<00:03, %.2f "
      "examples/s]\n", (int)(uni() * 100), (int)(uni() * 10000),
      2000 + uni() * 500);
}

static void megatron(long *step, double *loss, int n) {
  for (int i = 0; i < n; i++) {
    *step += 10;
    *loss = loss_at(*step);
    out(" iteration %9ld/100000000 | consumed samples: %12ld | elapsed time"
        " per iteration (ms): %.1f | learning rate: %.3E | global batch "
        "size:   512 | lm loss: %.6E | loss scale: 65536.0 | grad norm: "
        "%.3f | number of skipped iterations:   0 | number of nan "
        "iterations:   0 |\n",
        *step, *step * 512, 1500 + uni() * 40, lr_at(*step, 3e-4), *loss,
        0.8 + uni() * 0.5);
    out("time (ms) | forward-compute: %.2f | backward-compute: %.2f | "
        "backward-params-all-reduce: %.2f | optimizer: %.2f | "
        "batch-generator: %.2f\n",
        500 + uni() * 20, 900 + uni() * 30, 20 + uni() * 5, 40 + uni() * 5,
        1 + uni());
    if (uni() < 0.3)
      noise(*step);
  }
}

static void hf(long *step, double *loss, int n) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 10; k++) {
      (*step)++;
      out("\r %2ld%%|%-10.*s| %ld/100000000 [%02ld:%02ld:%02ld<99:00:00,  "
          "%.2fs/it]",
          *step * 100 / TOTAL, (int)(*step * 10 / TOTAL), "##########",
          *step, *step / 3600 % 100, *step / 60 % 60, *step % 60,
          1.4 + uni() * 0.1);
    }
    *loss = loss_at(*step);
    out("{'loss': %.4f, 'grad_norm': %.3f, 'learning_rate': %.3e, 'epoch': "
        "%.2f}\n", *loss, 1 + uni(), lr_at(*step, 5e-5), *step / 1e6);
    if (uni() < 0.3)
      noise(*step);
  }
}

static void mmengine(long *step, double *loss, int n) {
  for (int i = 0; i < n; i++) {
    *step += 50;
    *loss = loss_at(*step);
    out("2024/03/01 %02ld:%02ld:%02ld - mmengine - INFO - Epoch(train)  "
        "[%ld][%4ld/1250]  lr: 1.0000e-02  eta: 2:10:15  time: %.4f  "
        "data_time: %.4f  memory: 5123  grad_norm: %.4f  loss: %.4f  "
        "loss_cls: %.4f  loss_bbox: %.4f\n",
        *step / 3600 % 24, *step / 60 % 60, *step % 60, *step / 62500 + 1,
        *step / 50 % 1250, 0.45 + uni() * 0.02, 0.01 + uni() * 0.005, 3 + uni(),
        *loss, *loss * 0.4, *loss * 0.6);
    if (uni() < 0.3)
      noise(*step);
  }
}

static void deepspeed(long *step, int n) {
  for (int i = 0; i < n; i++) {
    *step += 10;
    out("[2024-03-01 %02ld:%02ld:%02ld,%03d] [INFO] [logging.py:96:log_dist] "
        "[Rank 0] step=%ld, skipped=3, lr=[%.6g, %.6g], mom=[(0.9, 0.95), "
        "(0.9, 0.95)]\n",
        *step / 3600 % 24, *step / 60 % 60, *step % 60, (int)(uni() * 1000),
        *step, lr_at(*step, 1.9e-4), lr_at(*step, 1.9e-4));
    out("[2024-03-01 %02ld:%02ld:%02ld,%03d] [INFO] [timer.py:215:stop] "
        "epoch=0/micro_step=%ld/global_step=%ld, RunningAvgSamplesPerSec="
        "%.4f, CurrSamplesPerSec=%.4f, MemAllocated=10.71GB, "
        "MaxMemAllocated=20.52GB\n",
        *step / 3600 % 24, *step / 60 % 60, *step % 60, (int)(uni() * 1000),
        *step * 2, *step, 250 + uni() * 5, 250 + uni() * 10);
    if (uni() < 0.3)
      noise(*step);
  }
}

int main(int argc, char **argv) {
  long long target;
  long step = 0;
  double loss = 11.0;
  int phase = 0;

  if (argc != 2 || (target = atoll(argv[1])) <= 0) {
    fprintf(stderr, "usage: genlog BYTES\n");
    return 2;
  }
  out("***** Running training *****\n  Num examples = 1000000\n");
  while (written < target) {
    switch (phase++ % 4) {
    case 0:
      megatron(&step, &loss, 200);
      break;
    case 1:
      hf(&step, &loss, 100);
      break;
    case 2:
      mmengine(&step, &loss, 200);
      break;
    default:
      deepspeed(&step, 200);
    }
    if (uni() < 0.5)
      eval_block(step);
  }
  /* End on a plain Megatron stretch, as a run that is still going. */
  megatron(&step, &loss, 50);
  return fflush(stdout) == 0 ? 0 : 1;
}
