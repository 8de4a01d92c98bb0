"""Supervised fine-tuning of a causal language model."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Supervised fine-tuning of a causal language model')
    p.add_argument("--model_name_or_path", default="meta-llama/Meta-Llama-3-8B")
    p.add_argument("--dataset", default="alpaca")
    p.add_argument("--max_steps", default=1000, type=int)
    p.add_argument("--per_device_train_batch_size", default=4, type=int)
    p.add_argument("--learning_rate", default=2e-5, type=float)
    p.add_argument("--max_seq_length", default=2048, type=int)
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--fsdp", default="")
    return p.parse_args()



def main():
    args = get_args()
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for step in range(args.max_steps):
        x = torch.zeros(args.per_device_train_batch_size, args.max_seq_length, dtype=torch.long)
        loss = model(x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"step {step}/{args.max_steps} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
