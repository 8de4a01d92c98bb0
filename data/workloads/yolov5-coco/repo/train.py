"""Train a YOLO detector."""
import argparse

import torch


def get_args():
    p = argparse.ArgumentParser(description='Train a YOLO detector')
    p.add_argument("--weights", default="yolov5s.pt")
    p.add_argument("--data", default="coco.yaml")
    p.add_argument("--epochs", default=300, type=int)
    p.add_argument("--batch-size", default=16, type=int)
    p.add_argument("--img", "--imgsz", dest="imgsz", default=640, type=int)
    return p.parse_args()



def main():
    opt = get_args()
    model = torch.hub.load(".", "custom", opt.weights, source="local")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    for epoch in range(opt.epochs):
        pred = model(torch.zeros(opt.batch_size, 3, opt.imgsz, opt.imgsz))
        loss = sum(p.sum() for p in pred)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
