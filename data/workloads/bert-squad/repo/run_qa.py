"""Fine-tune a BERT model for extractive question answering."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Fine-tune a BERT model for extractive question answering')
    p.add_argument("--model_name_or_path", default="bert-base-uncased")
    p.add_argument("--dataset_name", default="squad")
    p.add_argument("--num_train_epochs", default=2, type=int)
    p.add_argument("--per_device_train_batch_size", default=12, type=int)
    p.add_argument("--learning_rate", default=3e-5, type=float)
    p.add_argument("--max_seq_length", default=384, type=int)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--output_dir", default="out")
    return p.parse_args()



def main():
    args = get_args()
    from datasets import load_dataset
    from transformers import AutoModelForQuestionAnswering, Trainer, TrainingArguments
    raw = load_dataset(args.dataset_name)
    model = AutoModelForQuestionAnswering.from_pretrained(args.model_name_or_path)
    targs = TrainingArguments(output_dir=args.output_dir,
                              num_train_epochs=args.num_train_epochs,
                              per_device_train_batch_size=args.per_device_train_batch_size,
                              learning_rate=args.learning_rate, fp16=args.fp16)
    Trainer(model=model, args=targs, train_dataset=raw["train"]).train()


if __name__ == "__main__":
    main()
