"""Contrastive image-text pretraining (CLIP)."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Contrastive image-text pretraining (CLIP)')
    p.add_argument("--model", default="clip-vit-b-32")
    p.add_argument("--dataset", default="cc3m")
    p.add_argument("--epochs", default=32, type=int)
    p.add_argument("--batch-size", default=256, type=int)
    p.add_argument("--lr", default=5e-4, type=float)
    p.add_argument("--precision", default="amp")
    return p.parse_args()



def main():
    args = get_args()
    import open_clip
    model, _, _ = open_clip.create_model_and_transforms(args.model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        img = torch.zeros(args.batch_size, 3, 224, 224)
        txt = torch.zeros(args.batch_size, 77, dtype=torch.long)
        i, t, scale = model(img, txt)
        logits = scale * i @ t.T
        labels = torch.arange(args.batch_size)
        loss = (torch.nn.functional.cross_entropy(logits, labels) +
                torch.nn.functional.cross_entropy(logits.T, labels)) / 2
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
