"""Train a semantic segmentation model."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a semantic segmentation model')
    p.add_argument("--model", default="segformer-b0")
    p.add_argument("--dataset", default="ade20k")
    p.add_argument("--max-iters", default=160000, type=int)
    p.add_argument("--batch-size", default=8, type=int)
    p.add_argument("--lr", default=6e-5, type=float)
    p.add_argument("--crop-size", default=512, type=int)
    return p.parse_args()



def main():
    args = get_args()
    from transformers import SegformerForSemanticSegmentation
    model = SegformerForSemanticSegmentation.from_pretrained("nvidia/mit-b2", num_labels=150).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for it in range(args.max_iters):
        x = torch.zeros(args.batch_size, 3, args.crop_size, args.crop_size).cuda()
        y = torch.zeros(args.batch_size, args.crop_size, args.crop_size, dtype=torch.long).cuda()
        loss = model(pixel_values=x, labels=y).loss
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
