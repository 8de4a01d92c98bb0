"""Fine-tune a large language model with DeepSpeed."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Fine-tune a large language model with DeepSpeed')
    p.add_argument("--model_name_or_path", default="Qwen/Qwen2.5-7B")
    p.add_argument("--dataset", default="ultrachat")
    p.add_argument("--max_steps", default=1000, type=int)
    p.add_argument("--per_device_train_batch_size", default=1, type=int)
    p.add_argument("--learning_rate", default=1e-5, type=float)
    p.add_argument("--max_seq_length", default=4096, type=int)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--deepspeed", default=None)
    p.add_argument("--local_rank", default=-1, type=int)
    return p.parse_args()



def main():
    args = get_args()
    import deepspeed
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    engine, _, _, _ = deepspeed.initialize(model=model, config=args.deepspeed,
                                           model_parameters=model.parameters())
    for step in range(args.max_steps):
        x = torch.zeros(args.per_device_train_batch_size, args.max_seq_length, dtype=torch.long).cuda()
        loss = engine(x, labels=x).loss
        engine.backward(loss)
        engine.step()


if __name__ == "__main__":
    main()
