import torch


class Trainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.model = build(cfg["model"]["arch"])
        self.opt = torch.optim.AdamW(self.model.parameters(),
                                     lr=cfg["optim"]["peak_lr"])

    def fit(self, epochs):
        for _ in range(epochs):
            pass


def build(name):
    return getattr(__import__("torchvision").models, name)()
