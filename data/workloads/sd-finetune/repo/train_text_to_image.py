"""Fine-tune a text-to-image diffusion model."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Fine-tune a text-to-image diffusion model')
    p.add_argument("--pretrained_model_name_or_path", default="stable-diffusion-v1-5")
    p.add_argument("--dataset_name", default=None)
    p.add_argument("--max_train_steps", default=15000, type=int)
    p.add_argument("--train_batch_size", default=1, type=int)
    p.add_argument("--learning_rate", default=1e-5, type=float)
    p.add_argument("--mixed_precision", default="no")
    p.add_argument("--resolution", default=512, type=int)
    return p.parse_args()



def main():
    args = get_args()
    from diffusers import UNet2DConditionModel
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    opt = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    for step in range(args.max_train_steps):
        noise = torch.randn(args.train_batch_size, 4, args.resolution // 8, args.resolution // 8)
        loss = unet(noise, 10, torch.zeros(args.train_batch_size, 77, 768)).sample.pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
