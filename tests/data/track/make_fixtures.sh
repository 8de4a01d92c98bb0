#!/usr/bin/env bash
# Writes the tracker's fixture logs (tests/data/track/*.log): one small,
# realistic log per framework format, with the noise real logs carry
# (warnings, evaluation blocks, loading bars, rank prefixes).  All lines are
# written here from the formats' shapes with made-up numbers; expected
# answers are in expected.tsv.  Deterministic: run it again to get the same
# files.   usage: tests/data/track/make_fixtures.sh
set -eu
cd "$(dirname "$0")"
CR=$'\r'
ESC=$'\033'

# ---- Hugging Face Trainer: tqdm with carriage returns, loss dicts, eval
{
  echo "[INFO|trainer.py:1812] 2024-03-01 12:00:00,123 >> ***** Running training *****"
  echo "[INFO|trainer.py:1813] 2024-03-01 12:00:00,123 >>   Num examples = 8000"
  echo "[INFO|trainer.py:1815] 2024-03-01 12:00:00,124 >>   Total optimization steps = 1000"
  echo "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:429: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly."
  line=""
  for s in $(seq 1 40); do
    line+="${CR}  $((s * 100 / 1000))%|▍         | ${s}/1000 [00:$(printf %02d $((s * 3 / 2 % 60)))<24:00,  1.45s/it]"
  done
  echo "$line"
  echo "{'loss': 2.4512, 'grad_norm': 3.112, 'learning_rate': 4.8e-05, 'epoch': 0.04}"
  line=""
  for s in $(seq 41 50); do
    line+="${CR}  5%|▍         | ${s}/1000 [01:0$((s % 10))<23:40,  1.49s/it]"
  done
  echo "$line"
  echo "${CR}  0%|          | 0/63 [00:00<?, ?it/s]${CR} 40%|████      | 25/63 [00:03<00:05,  7.12it/s]${CR}100%|██████████| 63/63 [00:08<00:00,  7.65it/s]"
  echo "{'eval_loss': 2.3901, 'eval_runtime': 8.4, 'eval_samples_per_second': 119.1, 'eval_steps_per_second': 7.5, 'epoch': 0.05}"
  line=""
  for s in $(seq 51 83); do
    line+="${CR}  8%|▊         | ${s}/1000 [02:0$((s % 10))<22:31,  1.51s/it]"
  done
  echo "$line"
  echo "{'loss': 2.2871, 'grad_norm': 2.871, 'learning_rate': 4.59e-05, 'epoch': 0.08}"
  printf '%s' "${CR}  8%|▊         | 84/1000 [02:07<22:28,  1.47s/it]${CR}  8%|▊         | 85/1000 [02:08<22:27,  1.47s/it]"
} >hf_trainer.log

# ---- Hugging Face Trainer, a bare evaluation bar after the last training bar
{
  echo "***** Running training *****"
  for s in 200 210 220 230 240 250; do
    echo " 25%|██▌       | ${s}/800 [03:2${s:1:1}<10:00,  1.0${s:1:1}it/s]"
    echo "{'loss': 1.$((900 - s)), 'learning_rate': 3.9e-05, 'epoch': 0.$((s / 8))}"
  done
  echo " 31%|███▏      | 251/800 [04:11<09:09,  1.00it/s]"
  echo "100%|██████████| 40/40 [00:04<00:00,  9.61it/s]"
} >hf_eval_tail.log

# ---- Accelerate-style custom loop
{
  echo "Using device: cuda"
  echo "Number of parameters: 124.44M"
  for s in $(seq 100 100 1200); do
    ms=$((410 + (s / 100) % 5 * 3))
    echo "Epoch 0 | Step ${s}/2000 | loss $(awk -v s=$s 'BEGIN{printf "%.4f", 3.2 - s/1000}') | lr 3.0e-04 | 0.${ms} s/step | $((20000 + s)) tok/s"
  done
  echo "Saved checkpoint to out/step_1200.pt"
} >accelerate.log

# ---- PyTorch Lightning bar with a validation bar in between
{
  echo "GPU available: True (cuda), used: True"
  echo "  | Name  | Type   | Params"
  echo "0 | model | ResNet | 11.2 M"
  line="Epoch 2:   0%|          | 0/500 [00:00<?, ?it/s]"
  for s in $(seq 10 10 200); do
    line+="${CR}Epoch 2:  $((s / 5))%|██        | ${s}/500 [00:$((s / 10 + 10))<01:10,  5.2${s:0:1}it/s, v_num=3, train_loss=0.$((900 - s))]"
  done
  echo "$line"
  echo "Validation DataLoader 0:  50%|█████     | 50/100 [00:02<00:02, 20.10it/s]"
  echo "${CR}Epoch 2:  42%|████▏     | 210/500 [00:41<00:57,  5.11it/s, v_num=3, train_loss=0.688]${CR}Epoch 2:  44%|████▍     | 220/500 [00:43<00:55,  5.09it/s, v_num=3, train_loss=0.671]"
} >lightning.log

# ---- Megatron-LM with timers and memory reports between iterations
{
  echo "training ..."
  echo "[before the start of training step] datetime: 2024-02-10 10:00:00"
  for it in 10 20 30 40 50 60 70 80 90 100 110; do
    ms=$((2200 + (it / 10) % 3 * 11))
    [ $it = 10 ] && ms=9412
    echo " iteration       ${it}/   20000 | consumed samples:        $((it * 512)) | elapsed time per iteration (ms): ${ms}.4 | learning rate: 2.999E-04 | global batch size:   512 | lm loss: $(awk -v i=$it 'BEGIN{printf "%.6E", 9 - i/40}') | loss scale: 65536.0 | grad norm: 1.23$((it / 10 % 10)) | number of skipped iterations:   0 | number of nan iterations:   0 |"
    echo "time (ms) | forward-compute: 612.33 | backward-compute: 1201.12 | backward-params-all-reduce: 12.31 | optimizer: 45.60 | batch-generator: 1.21"
    [ $it = 10 ] && echo "[Rank 0] (after 10 iterations) memory (MB) | allocated: 12345.6 | max allocated: 23456.7 | reserved: 30000.0 | max reserved: 30000.0"
  done
  echo "saving checkpoint at iteration     110 to checkpoints/gpt"
} >megatron.log

# ---- DeepSpeed: log_dist steps and the throughput timer
{
  echo "[2023-05-01 11:59:58,001] [INFO] [config.py:988:print]   train_batch_size ............. 256"
  for st in $(seq 610 10 720); do
    sec=$((st - 600))
    echo "[2023-05-01 12:$(printf %02d $((sec / 60))):$(printf %02d $((sec % 60))),100] [INFO] [logging.py:96:log_dist] [Rank 0] step=${st}, skipped=2, lr=[0.00019, 0.00019], mom=[(0.9, 0.95), (0.9, 0.95)]"
    echo "[2023-05-01 12:$(printf %02d $((sec / 60))):$(printf %02d $((sec % 60))),130] [INFO] [timer.py:215:stop] epoch=0/micro_step=$((st * 2))/global_step=${st}, RunningAvgSamplesPerSec=250.1, CurrSamplesPerSec=25$((st % 7)).4, MemAllocated=10.71GB, MaxMemAllocated=20.52GB"
  done
  echo "[2023-05-01 12:02:01,000] [WARNING] [stage3.py:1850:step] 1 pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance."
} >deepspeed.log

# ---- nanoGPT
{
  echo "tokens per iteration will be: 491,520"
  echo "compiling the model... (takes a ~minute)"
  echo "step 0: train loss 10.9876, val loss 10.9912"
  for it in $(seq 0 10 250); do
    [ $it = 250 ] && echo "step 250: train loss 5.8812, val loss 5.9013"
    echo "iter ${it}: loss $(awk -v i=$it 'BEGIN{printf "%.4f", 10 - i/60}'), time $((1180 + it % 30)).$((it % 9))2ms, mfu 41.$((it % 10))0%"
  done
} >nanogpt.log

# ---- fairseq
{
  for u in $(seq 100 100 1100); do
    echo "2021-06-30 02:$(printf %02d $((u / 100))):00 | INFO | train_inner | epoch 003:    $((u % 400 + 1)) / 4431 loss=4.$((200 - u / 10)), nll_loss=2.43, ppl=5.39, wps=64211.3, ups=2.$((u / 100 % 3))0, wpb=32589.2, bsz=1092.1, num_updates=${u}, lr=0.000444, gnorm=0.41, train_wall=50, gb_free=7.5, wall=$((u / 2))"
  done
  echo "2021-06-30 02:12:00 | INFO | valid | epoch 003 | valid on 'valid' subset | loss 4.567 | nll_loss 3.21 | ppl 9.25 | wps 34567.8 | wpb 2345.6 | bsz 90.1 | num_updates 1100 | best_loss 4.5"
} >fairseq.log

# ---- MMEngine (epoch based) with validation at the end
{
  echo "2024/03/01 10:00:00 - mmengine - INFO - Checkpoints will be saved to /work_dirs/exp by HardDiskBackend."
  for i in $(seq 50 50 600); do
    echo "2024/03/01 10:$(printf %02d $((i / 50))):10 - mmengine - INFO - Epoch(train)  [4][ ${i}/1250]  base_lr: 1.0000e-02 lr: 1.0000e-02  eta: 2:10:15  time: 0.45$((i / 50 % 4))2  data_time: 0.0123  memory: 5123  grad_norm: 3.2012  loss: 0.$((900 - i / 5))  loss_cls: 0.3120  loss_bbox: 0.5645"
  done
  echo "2024/03/01 10:13:00 - mmengine - INFO - Epoch(val)  [4][ 50/500]    eta: 0:00:30  time: 0.0612  data_time: 0.0012  memory: 1234"
  echo "2024/03/01 10:14:00 - mmengine - INFO - Epoch(val) [4][500/500]    coco/bbox_mAP: 0.3450  coco/bbox_mAP_50: 0.5560  data_time: 0.0021  time: 0.0588"
} >mmengine.log

# ---- mmcv 1.x (mmdet 2)
{
  for i in $(seq 50 50 550); do
    echo "2021-05-01 10:$(printf %02d $((i / 50))):00,123 - mmdet - INFO - Epoch [2][${i}/7330]	lr: 1.978e-02, eta: 1 day, 2:03:04, time: 0.61$((i / 50 % 3)), data_time: 0.051, memory: 3823, loss_rpn_cls: 0.0512, loss_rpn_bbox: 0.0431, loss_cls: 0.4311, acc: 91.21, loss_bbox: 0.3127, loss: 0.$((900 - i / 10))"
  done
  echo "2021-05-01 11:00:00,123 - mmdet - INFO - Saving checkpoint at 2 epochs"
} >mmdet2.log

# ---- timm
{
  for b in $(seq 0 50 550); do
    echo "Train: 12 [ ${b}/1251 ($((b * 100 / 1251))%)]  Loss: 3.$((500 - b / 10)) (3.512)  Time: 0.51${b:0:1}s,  500.1/s  (0.520s,  492.3/s)  LR: 1.000e-03  Data: 0.012 (0.015)"
  done
  echo "Test: [   0/48]  Time: 2.345 (2.345)  Loss:  0.7654 (0.7654)  Acc@1: 82.8125 (82.8125)  Acc@5: 96.0938 (96.0938)"
  echo "Test: [  48/48]  Time: 0.112 (0.131)  Loss:  0.8012 (0.8231)  Acc@1: 80.1250 (79.8812)  Acc@5: 95.0000 (94.9120)"
} >timm.log

# ---- torchvision classification reference
{
  for b in $(seq 0 100 1100); do
    echo "Epoch: [7]  [$(printf %4d $b)/5005]  eta: 0:41:10  lr: 0.1  img/s: 51$((b / 100)).3  loss: 2.$((800 - b / 10)) (2.9012)  acc1: 45.3125 (44.12)  acc5: 70.3125 (69.87)  time: 0.49$((b / 100 % 5))  data: 0.0012  max mem: 12345"
  done
  echo "Test:  [ 100/196]  eta: 0:00:23  loss: 1.2345 (1.3456)  acc1: 68.7500 (66.2031)  acc5: 87.5000 (86.1250)  time: 0.1234  data: 0.0123  max mem: 1234"
} >torchvision.log

# ---- YOLOv5: table heads, rows with bars, validation rows
{
  echo "Starting training for 10 epochs..."
  for e in 0 1 2 3; do
    echo ""
    echo "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size"
    line=""
    for b in 10 40 80 118; do
      line+="${CR}        ${e}/9      4.21G    0.0$((512 - e * 3))    0.0312    0.0123        156        640:  $((b * 100 / 118))%|████      | ${b}/118 [00:$((b / 3 + 10))<00:10,  2.6${e}it/s]"
    done
    echo "${line#$CR}"
    echo "                 Class     Images  Instances          P          R      mAP50   mAP50-95: 100%|██████████| 8/8 [00:02<00:00,  3.45it/s]"
    echo "                   all        128        929      0.712      0.634      0.689      0.456"
  done
} >yolov5.log

# ---- YOLOv8 (ultralytics): box/cls/dfl columns, validation table
{
  echo "Starting training for 100 epochs..."
  for e in 1 2 3; do
    echo ""
    echo "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
    echo "      ${e}/100      2.61G      1.$((300 - e * 10))      2.345      1.456         45        640: 100%|██████████| 118/118 [00:37<00:00,  3.1${e}it/s]"
    echo "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|██████████| 4/4 [00:01<00:00,  3.01it/s]"
    echo "                   all        128        929      0.612      0.531      0.589      0.412"
  done
} >yolov8.log

# ---- Keras fit with carriage-return bar updates, then evaluate()
{
  echo "Epoch 1/20"
  for e in 1 2 3 4; do
    [ $e -gt 1 ] && echo "Epoch $e/20"
    line=""
    for b in 100 800 1500; do
      line+="${CR}$(printf %4d $b)/1875 [=========>....................] - ETA: 2s - loss: 0.$((600 - e * 40 - b / 100)) - accuracy: 0.8$e"
    done
    echo "${line}${CR}1875/1875 [==============================] - 4s 2ms/step - loss: 0.$((500 - e * 40)) - accuracy: 0.8$e - val_loss: 0.4$e - val_accuracy: 0.8$e"
  done
  echo "313/313 [==============================] - 1s 2ms/step - loss: 0.3912 - accuracy: 0.8811"
} >keras.log

# ---- Keras 3 bars
{
  for e in 1 2 3; do
    echo "Epoch $e/5"
    echo "782/782 ━━━━━━━━━━━━━━━━━━━━ 9s 11ms/step - accuracy: 0.7$e - loss: 0.$((900 - e * 50)) - val_accuracy: 0.6$e - val_loss: 0.9$e"
  done
} >keras3.log

# ---- TF estimator
{
  for s in 100 200 300 400 500 600; do
    echo "INFO:tensorflow:global_step/sec: 8.1$((s / 100))"
    echo "INFO:tensorflow:loss = 0.$((700 - s / 10)), step = ${s} (12.3$((s / 100)) sec)"
  done
  echo "INFO:tensorflow:Saving checkpoints for 600 into /tmp/model/model.ckpt."
} >tf_estimator.log

# ---- JAX / Flax metric writer
{
  for s in $(seq 1000 100 1800); do
    echo "I0301 10:$(printf %02d $((s / 100))):00.123456 140000000 train.py:123] [${s}] train/loss=2.$((600 - s / 10)), train/learning_rate=0.001, train/steps_per_second=4.5$((s / 100 % 7))"
  done
  echo "I0301 10:19:00.000000 140000000 train.py:456] [1800] eval/loss=2.101, eval/accuracy=0.501"
} >flax.log

# ---- Detectron2 with an inference block at the end
{
  for it in $(seq 19 20 259); do
    echo "[03/01 10:$(printf %02d $((it / 20))):00 d2.utils.events]:  eta: 5:12:34  iter: ${it}  total_loss: 0.$((900 - it))  loss_cls: 0.2011  loss_box_reg: 0.3012  loss_rpn_cls: 0.0512  loss_rpn_loc: 0.0412  time: 0.43$((it % 3))1  data_time: 0.0123  lr: 0.02  max_mem: 4567M"
  done
  echo "[03/01 10:14:00 d2.evaluation.evaluator]: Start inference on 5000 batches"
  for d in 11 130 250 370; do
    echo "[03/01 10:14:0${d:0:1} d2.evaluation.evaluator]: Inference done ${d}/5000. Dataloading: 0.0012 s/iter. Inference: 0.0456 s/iter. Eval: 0.0003 s/iter. Total: 0.0471 s/iter. ETA=0:02:57"
  done
} >detectron2.log

# ---- ColossalAI / plain tqdm with s/it and a loss postfix
{
  line=""
  for s in $(seq 220 2 240); do
    line+="${CR}Epoch 1/3:  23%|██▎       | ${s}/1000 [05:12<17:24,  1.3${s: -1}s/it, loss=2.$((600 - s))]"
  done
  echo "$line"
} >colossalai.log

# ---- NeMo (Lightning bar with reduced_train_loss and global_step)
{
  line=""
  for s in $(seq 100 10 160); do
    line+="${CR}Epoch 0: :  $((s / 10))%|█▏        | ${s}/1000 [02:00<14:40, reduced_train_loss=2.$((500 - s)), global_step=$((s - 1)).0, consumed_samples=$((s * 256)).0, train_step_timing in s=0.98]"
  done
  echo "$line"
} >nemo.log

# ---- torchtitan with rank prefixes and thousands separators
{
  for s in $(seq 10 10 120); do
    echo "[rank0]:[titan] 2025-02-10 08:$(printf %02d $((s / 10))):12,012 - root - INFO - step: $(printf %3d $s)  loss: $(awk -v s=$s 'BEGIN{printf "%7.4f", 11 - s/20}')  grad_norm:  4.2011  memory: 42.31GiB(44.53%)  tps: 7,$((100 + s))  tflops: 402.11  mfu: 40.66%"
  done
} >torchtitan.log

# ---- LitGPT: iter (micro) and step (optimizer) on one line
{
  for i in $(seq 1 16); do
    extra=""
    [ $((i % 2)) = 0 ] && extra=" (step)"
    echo "Epoch 1 | iter ${i} step $((i / 2)) | loss train: 1.$((900 - i * 11)), val: n/a | iter time: $((500 + (i % 4) * 40)).12 ms${extra}"
  done
} >litgpt.log

# ---- PaddleClas
{
  for it in $(seq 20 20 240); do
    echo "[2023/03/01 10:00:$(printf %02d $((it / 20)))] ppcls INFO: [Train][Epoch 3/120][Iter: ${it}/1251]lr(LinearWarmup): 0.10000000, top1: 0.12345, CELoss: 4.$((600 - it)), loss: 4.$((600 - it)), batch_cost: 0.51$((it / 20 % 3))4s, reader_cost: 0.01234, ips: 499.67 samples/s, eta: 1 day, 2:03:04"
  done
  echo "[2023/03/01 10:05:00] ppcls INFO: [Eval][Epoch 3][Iter: 20/40]CELoss: 1.21012, loss: 1.21012, top1: 0.60112, top5: 0.85011, batch_cost: 0.20112s, reader_cost: 0.00511, ips: 641.1 images/sec"
} >paddle.log

# ---- MXNet / Gluon module fit
{
  for b in $(seq 50 50 500); do
    echo "INFO:root:Epoch[3] Batch [${b}]	Speed: 12$((b / 50)).56 samples/sec	accuracy=0.7$((b / 50))2345"
  done
  echo "INFO:root:Epoch[3] Train-accuracy=0.712345"
  echo "INFO:root:Epoch[3] Time cost=312.412"
  echo "INFO:root:Epoch[3] Validation-accuracy=0.701234"
} >mxnet.log

# ---- Plain print loop (no times): step time unknown
{
  for st in $(seq 100 100 600); do
    echo "Epoch [2/10], Step [${st}/600], Loss: 0.$((300 - st / 10))"
  done
} >print_loop.log

# ---- PyTorch tutorial "[epoch, batch] loss"
{
  for e in 1 2; do
    for b in 2000 4000 6000 8000 10000 12000; do
      echo "[$e, $(printf %5d $b)] loss: $((3 - e)).$((900 - b / 100))"
    done
  done
  echo "Finished Training"
} >pytorch_tutorial.log

# ---- PyTorch MNIST example: samples seen / dataset size, test summary
{
  for e in 1 2; do
    for s in 0 6400 12800 19200 25600 32000; do
      echo "Train Epoch: $e [$s/60000 ($((s * 100 / 60000))%)]	Loss: 0.$((400 - s / 200 - e * 50))123"
    done
    echo ""
    echo "Test set: Average loss: 0.0$((50 - e))1, Accuracy: 98${e}1/10000 (98%)"
    echo ""
  done
} >mnist_example.log

# ---- Caffe: glog timestamps, no speed printed
{
  for it in $(seq 1000 100 2000); do
    sec=$((it / 100 * 41))
    ts="I0301 1$((sec / 3600)):$(printf %02d $((sec / 60 % 60))):$(printf %02d $((sec % 60))).123456"
    echo "$ts  1234 solver.cpp:218] Iteration ${it}, loss = 0.$((900 - it / 10))"
    echo "$ts  1234 solver.cpp:237]     Train net output #0: loss = 0.$((950 - it / 10)) (* 1 = 0.$((950 - it / 10)) loss)"
    echo "$ts  1234 sgd_solver.cpp:105] Iteration ${it}, lr = 0.001"
  done
} >caffe.log

# ---- llm.c GPT-2 training
{
  echo "val loss 4.123456"
  for s in $(seq 100 1 112); do
    echo "step  ${s}/18865 | loss $(awk -v s=$s 'BEGIN{printf "%.6f", 4.5 - s/100}') (+nanz)| norm 0.3211 (+nanz)| lr 6.00e-04 | $((340 + s % 5)).12 ms | 45.2% bf16 MFU | 1532104 tok/s"
  done
} >llmc.log

# ---- modded-nanogpt, ending with a validation line
{
  for s in $(seq 1980 2000); do
    echo "step:${s}/2000 train_loss:3.$((400 - s % 50)) train_time:$((s * 300))ms step_avg:300.$((s % 10))0ms"
  done
  echo "step:2000/2000 val_loss:3.2811 train_time:600000ms step_avg:300.00ms"
} >modded_nanogpt.log

# ---- Multi-rank prefixes of several launchers, duplicated lines
{
  for s in $(seq 10 10 80); do
    for r in 0 1; do
      echo "[rank${r}]:step=${s} loss=1.$((900 - s)) lr=0.0003 step_time=0.81s"
    done
    echo "${r}: [default${r}]: warning: something slow"
  done
  echo "[1,0]<stdout>:step=90 loss=1.810 lr=0.0003 step_time=0.80s"
  echo "0: step=100 loss=1.800 lr=0.0003 step_time=0.82s"
  echo "worker-1: step=100 loss=1.800 lr=0.0003 step_time=0.82s"
} >ranks.log

# ---- Colours and control sequences around progress
{
  for s in $(seq 1 12); do
    echo "${ESC}[32mINFO${ESC}[0m ${ESC}[1mstep${ESC}[0m ${s}/100 ${ESC}[36mloss${ESC}[0m=0.$((800 - s * 10)) ${ESC}[33mtime${ESC}[0m=0.21s"
  done
} >ansi.log

# ---- Start-up only: downloads, loading bars, dataset map, config: missing
{
  echo "Downloading shards: 100%|██████████| 3/3 [02:01<00:00, 40.51s/it]"
  echo "Loading checkpoint shards: 100%|██████████| 3/3 [00:07<00:00,  2.51s/it]"
  echo "Map (num_proc=8): 100%|██████████| 10000/10000 [00:02<00:00, 4321.12 examples/s]"
  echo "Generating train split: 100%|██████████| 36718/36718 [00:00<00:00, 123456.78 examples/s]"
  echo "model.safetensors: 100%|██████████| 548M/548M [00:12<00:00, 45.6MB/s]"
  echo "  0%|          | 0/3 [00:00<?, ?it/s]100%|██████████| 3/3 [00:00<00:00, 412.31it/s]"
  echo "  max_steps: 5000"
  echo "  learning_rate: 3.0e-4"
  echo "Resuming training from checkpoint at step 1000"
  echo "***** Running training *****"
} >startup_only.log

# ---- Evaluation only: missing
{
  echo "***** Running Evaluation *****"
  echo "Evaluating: 100%|██████████| 63/63 [00:08<00:00,  7.65it/s]"
  echo "{'eval_loss': 1.2345, 'eval_runtime': 12.34, 'eval_samples_per_second': 81.04, 'epoch': 1.0}"
  echo "Test set: Average loss: 0.0345, Accuracy: 9891/10000 (99%)"
  echo "validation: val_loss=2.0112 val_acc=0.6011"
  echo "s:12500 tel:3.3011"
} >eval_only.log

# ---- Crash before the first step: missing
{
  echo "Traceback (most recent call last):"
  echo "  File \"train.py\", line 123, in <module>"
  echo "    loss = model(**batch).loss"
  echo "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
} >crash.log

# ---- Progress with timestamps only (loguru-style)
{
  for s in $(seq 100 100 1000); do
    t=$((s * 3 / 2))
    echo "2024-01-17 09:$(printf %02d $((t / 60))):$(printf %02d $((t % 60))).512 | INFO     | trainer:train:211 - step=${s} loss=1.$((900 - s / 10)) lr=0.0003"
  done
} >timestamps.log

# ---- Only a cumulative elapsed column
{
  for s in $(seq 100 10 200); do
    echo "step $(printf %6d $s) | loss 0.$((500 - s)) | best 0.$((490 - s)) | $((s * 2)).5s"
  done
} >cumulative.log

# ---- tqdm without a total
{
  echo "2310it [14:22,  2.68it/s, loss=0.551]${CR}2320it [14:26,  2.66it/s, loss=0.549]${CR}2330it [14:29,  2.70it/s, loss=0.547]"
} >tqdm_nototal.log

# ---- DeepSpeed-Chat PPO (step lines, separate latency lines)
{
  for s in $(seq 250 259); do
    echo "|E2E latency=4.1$((s % 4))s |Gather latency=0.01s (0.24%) |Generate time=2.61s (63.35%) |Training time=1.22s (29.61%) |Others=0.28 (6.80%)|CurSamplesPerSec=15.5$((s % 10)) |AvgSamplesPerSec=15.61"
    echo "Epoch: 0 | Step: ${s} | PPO Epoch: 1 | Actor Loss: 0.0$((s - 200)) | Critic Loss: 0.0345 | Unsupervised Loss: 0.0"
    echo "average reward score: 3.$((s % 7))1"
    echo "-------------------------------------------------------------------------------------"
  done
} >ds_chat.log

# ---- Loss-only lines without any step counter
{
  for i in $(seq 1 8); do
    echo "2025-01-02 10:00:0$i,100 - INFO - epoch 7 - batch loss: 0.0$((i + 10))"
  done
} >stepless.log
# ---- Lightning's rich progress bar
{
  echo "Epoch 2/9  ━━━━━━━━━━━━━━━━━━━━ 121/1563 0:00:12 • 0:02:21 10.21it/s v_num: 3 train_loss: 0.512"
  echo "Epoch 2/9  ━━━━━━━━━━━━━━━━━━━━ 122/1563 0:00:12 • 0:02:21 10.31it/s v_num: 3 train_loss: 0.511"
  echo "Epoch 2/9  ━━━━━━━━━━━━━━━━━━━━ 123/1563 0:00:12 • 0:02:21 10.26it/s v_num: 3 train_loss: 0.509"
} >rich.log

# ---- Keras with verbose=2 (one line per epoch, no bar)
{
  for e in 1 2 3; do
    echo "Epoch $e/10"
    echo "469/469 - 3s - loss: 0.$((400 - e * 50)) - accuracy: 0.9$e - 3s/epoch - 6ms/step"
  done
} >keras_verbose2.log

# ---- MMEngine, iteration based
{
  for i in $(seq 1000 50 1450); do
    echo "03/14 22:$((10 + i / 50 - 20)):45 - mmengine - INFO - Iter(train) [$(printf %6d $i)/80000]  base_lr: 9.9e-03 lr: 9.9e-03  eta: 8:01:12  time: 0.36$((i / 50 % 5))5  data_time: 0.0061  memory: 6411  loss: 1.$((500 - i / 10))  decode.loss_ce: 0.7123  decode.acc_seg: 71.2"
  done
  echo "03/14 22:40:00 - mmengine - INFO - Iter(val) [ 100/500]    eta: 0:00:40  time: 0.1012  data_time: 0.0021  memory: 2011"
} >mmengine_iter.log

# ---- Hugging Face with tqdm disabled: loss dicts only, no step counter
{
  for i in 1 2 3 4 5; do
    echo "{'loss': 0.$((700 - i * 20)), 'grad_norm': 1.2, 'learning_rate': 4.$((9 - i))e-05, 'epoch': 0.$i}"
  done
  echo "{'eval_loss': 0.6111, 'eval_runtime': 12.3, 'epoch': 0.5}"
} >hf_no_tqdm.log
echo "fixtures written"
