import argparse

import torch

from model import GPT


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--max_iters", type=int, default=5000)
    args = p.parse_args()
    model = GPT.from_config("configs/small.json")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for _ in range(args.max_iters):
        opt.step()


if __name__ == "__main__":
    main()
