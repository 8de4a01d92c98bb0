"""Train a torchvision classifier on CIFAR-10."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a torchvision classifier on CIFAR-10')
    p.add_argument("--arch", default="resnet18", type=str)
    p.add_argument("--data-dir", default="./data/cifar10")
    p.add_argument("--epochs", default=30, type=int)
    p.add_argument("-b", "--batch-size", default=128, type=int)
    p.add_argument("--lr", default=0.1, type=float)
    p.add_argument("--workers", default=4, type=int)
    return p.parse_args()



def main():
    args = get_args()
    import torchvision
    model = getattr(torchvision.models, args.arch)(num_classes=10).cuda()
    data = torchvision.datasets.CIFAR10(args.data_dir, train=True, download=True)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size,
                                         shuffle=True, num_workers=args.workers)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
