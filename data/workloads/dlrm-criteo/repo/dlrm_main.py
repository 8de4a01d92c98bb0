"""Train a DLRM recommendation model on Criteo click logs."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a DLRM recommendation model on Criteo click logs')
    p.add_argument("--model", default="dlrm")
    p.add_argument("--dataset", default="criteo-1tb")
    p.add_argument("--epochs", default=1, type=int)
    p.add_argument("--batch_size", default=1024, type=int)
    p.add_argument("--learning_rate", default=0.01, type=float)
    p.add_argument("--embedding_dim", default=128, type=int)
    p.add_argument("--num_batches_per_epoch", default=2000, type=int)
    return p.parse_args()



def main():
    args = get_args()
    emb = torch.nn.EmbeddingBag(10000000, args.embedding_dim).cuda()
    opt = torch.optim.SGD(emb.parameters(), lr=args.learning_rate)
    for epoch in range(args.epochs):
        for step in range(args.num_batches_per_epoch):
            idx = torch.randint(0, 10000000, (args.batch_size, 26)).cuda()
            loss = emb(idx).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 0:
                print(f"epoch {epoch} it {step} loss {loss.item():.6f}")


if __name__ == "__main__":
    main()
