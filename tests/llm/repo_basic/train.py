"""Trains a small vision model from a config chosen at run time."""
import argparse
import os

import yaml

from trainer import Trainer


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()
    # The config file comes from the environment, so a static reader
    # cannot know which one is used without help.
    with open(os.environ.get("RUN_CONFIG", "configs/base.yaml")) as f:
        cfg = yaml.safe_load(f)
    Trainer(cfg).fit(args.epochs)


if __name__ == "__main__":
    main()
