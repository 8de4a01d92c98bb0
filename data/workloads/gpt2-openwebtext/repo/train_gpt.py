"""Pretrain a GPT-2 language model."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Pretrain a GPT-2 language model')
    p.add_argument("--model", default="gpt2")
    p.add_argument("--dataset", default="openwebtext")
    p.add_argument("--max_iters", default=600000, type=int)
    p.add_argument("--batch_size", default=12, type=int)
    p.add_argument("--block_size", default=1024, type=int)
    p.add_argument("--learning_rate", default=6e-4, type=float)
    return p.parse_args()



def main():
    args = get_args()
    from transformers import GPT2LMHeadModel
    model = GPT2LMHeadModel.from_pretrained(args.model).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for it in range(args.max_iters):
        x = torch.zeros(args.batch_size, args.block_size, dtype=torch.long).cuda()
        loss = model(x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        if it % 10 == 0:
            print(f"iter {it}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
