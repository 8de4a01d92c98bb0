"""Train a Vision Transformer on ImageNet."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a Vision Transformer on ImageNet')
    p.add_argument("--model", default="vit-b-16")
    p.add_argument("--data-path", default="/datasets/imagenet")
    p.add_argument("--epochs", default=300, type=int)
    p.add_argument("--batch-size", default=64, type=int)
    p.add_argument("--lr", default=3e-3, type=float)
    p.add_argument("--amp", action="store_true")
    return p.parse_args()



def main():
    args = get_args()
    import torchvision
    torch.distributed.init_process_group("nccl")
    model = torchvision.models.vit_b_16().cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        x = torch.zeros(args.batch_size, 3, 224, 224).cuda()
        loss = model(x).logsumexp(-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
