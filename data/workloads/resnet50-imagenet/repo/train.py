"""Image classification training on ImageNet."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Image classification training on ImageNet')
    p.add_argument("--model", default="resnet18")
    p.add_argument("--data-path", default="/datasets01/imagenet_full_size/061417/")
    p.add_argument("--epochs", default=90, type=int)
    p.add_argument("-b", "--batch-size", default=32, type=int)
    p.add_argument("--lr", default=0.1, type=float)
    p.add_argument("--amp", action="store_true")
    return p.parse_args()



def main():
    args = get_args()
    import torchvision
    torch.distributed.init_process_group("nccl")
    model = torchvision.models.get_model(args.model).cuda()
    model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
    for epoch in range(args.epochs):
        x = torch.zeros(args.batch_size, 3, 224, 224).cuda()
        loss = model(x).logsumexp(-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
