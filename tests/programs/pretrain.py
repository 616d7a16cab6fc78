"""Pre-training for fine_tune.py: an MLP classifier for the digits 0-4 of scikit-learn's
digits, trained with SGD and momentum, its state dict written with torch.save. The test runs
this file under PyTorch so that fine_tune.py reads a file PyTorch wrote. Run
`python pretrain.py --out pretrained.pt`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits


class Classifier(nn.Module):
    """A two-layer feature extractor and a linear head."""

    def __init__(self, n_classes, hidden=48):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden // 2), nn.ReLU()
        )
        self.head = nn.Linear(hidden // 2, n_classes)

    def forward(self, x):
        return self.head(self.features(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", default="pretrained.pt")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)

    digits = load_digits()
    keep = digits.target < 5
    x = torch.from_numpy(digits.data[keep] / 16.0)
    y = torch.from_numpy(digits.target[keep]).long()

    model = Classifier(n_classes=5)
    rng = np.random.RandomState(5)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("weight"):
                p.copy_(torch.from_numpy(rng.randn(*p.shape) * np.sqrt(2.0 / p.shape[1])))
            else:
                p.zero_()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    batches = rng.randint(0, len(y), size=(args.steps, args.batch_size))
    model.train()
    for step in range(args.steps):
        idx = torch.from_numpy(batches[step])
        loss = F.cross_entropy(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")

    model.eval()
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).double().mean().item()
    print(f"train accuracy {accuracy:.4f}")
    torch.save(model.state_dict(), args.out)
    print(f"saved {len(model.state_dict())} tensors to {args.out}")


if __name__ == "__main__":
    main()
