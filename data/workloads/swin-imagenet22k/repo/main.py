"""Train a Swin Transformer."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a Swin Transformer')
    p.add_argument("--model", default="swin-tiny")
    p.add_argument("--data-path", default="/datasets/imagenet")
    p.add_argument("--epochs", default=300, type=int)
    p.add_argument("--batch-size", default=128, type=int)
    p.add_argument("--lr", default=5e-4, type=float)
    p.add_argument("--amp", action="store_true")
    return p.parse_args()



def main():
    args = get_args()
    import timm
    torch.distributed.init_process_group("nccl")
    model = timm.create_model("swin_base_patch4_window7_224").cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        x = torch.zeros(args.batch_size, 3, 224, 224).cuda()
        loss = model(x).logsumexp(-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
