# Generates N history records (JSON lines) of recurring job kinds with
# realistic variation: model, dataset, task, GPUs, batch, lr, iterations.
# Used by the history scale test and bench/history.  awk -v N=100000
BEGIN {
  srand(7)
  split("llama-7b llama-13b llama-3-8b qwen-2.5-14b gpt2-124m bert-base vit-b-16 resnet50 stable-diffusion-1.5 clip-vit-b-32 dlrm t5-base", M, " ")
  split("alpaca-52k sharegpt openwebtext wikipedia imagenet-1k laion-400m criteo c4 coco squad", DS, " ")
  split("sft sft sft lm_pretraining lm_pretraining image_classification image_classification diffusion contrastive recommendation lm_pretraining translation", T, " ")
  split("1 2 4 8 16 32 64", G, " ")
  split("bf16 fp16 fp32", P, " ")
  split("ddp fsdp deepspeed_zero2 deepspeed_zero3 none", PAR, " ")
  for (i = 0; i < N; i++) {
    k = int(rand() * 12) + 1           # job kind
    v = int(rand() * 40)               # variant of that kind
    g = G[(k + v) % 7 + 1]
    d = DS[(k * 3 + v) % 11 + 1]
    bs = 2 ^ (4 + (k + v) % 6)
    lr = sprintf("%.1e", (1 + v % 5) * 10 ^ -(3 + k % 3))
    it = (1 + v % 10) * 1000
    dur = int(it * (0.2 + k / 10.0) * (0.9 + 0.2 * rand()))
    st = rand() < 0.8 ? "completed" : (rand() < 0.5 ? "canceled" : "failed_user")
    printf("{\"id\":\"job-%d\",\"duration_s\":%d,\"sm_util\":%d,\"end_state\":\"%s\",\"submit_time\":%d,\"gpu_type\":\"a100\",", i, dur, 30 + int(rand() * 65), st, 1700000000 + i * 30)
    printf("\"metadata\":{\"model_name\":\"%s\",\"task\":\"%s\",\"dataset\":\"%s\",\"iterations\":%d,\"iteration_type\":\"steps\",\"global_batch_size\":%d,\"lr\":%s,\"gpus\":%d,\"precision\":\"%s\",\"parallelism\":\"%s\"}}\n", M[k], T[k], d, it, bs, lr, g, P[k % 3 + 1], PAR[(k + v) % 5 + 1])
  }
}
