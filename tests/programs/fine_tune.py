"""Fine-tuning from a checkpoint file: the classifier that pretrain.py trained on the digits
0-4 is loaded with torch.load(map_location=..., weights_only=True), its head replaced by a new
one for the digits 5-9, the feature extractor frozen with requires_grad_(False) for the first
phase, then unfrozen and added to the optimizer as a second parameter group with a smaller
learning rate. Run `python pretrain.py && python fine_tune.py --pretrained pretrained.pt`, or
`chainrule run fine_tune.py --pretrained pretrained.pt`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
from pretrain import Classifier  # the same architecture, from the pre-training script
from sklearn.datasets import load_digits


def set_parameter_requires_grad(model, feature_extracting):
    if feature_extracting:
        for param in model.parameters():
            param.requires_grad = False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained", default="pretrained.pt")
    parser.add_argument("--frozen-steps", type=int, default=15)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)

    digits = load_digits()
    keep = digits.target >= 5
    x = torch.from_numpy(digits.data[keep] / 16.0)
    y = torch.from_numpy(digits.target[keep] - 5).long()
    n_train = int(0.8 * len(y))

    model = Classifier(n_classes=5)
    state_dict = torch.load(args.pretrained, map_location="cpu", weights_only=True)
    print(f"loaded {len(state_dict)} tensors: {', '.join(sorted(state_dict))}")
    model.load_state_dict(state_dict)
    set_parameter_requires_grad(model, feature_extracting=True)
    num_ftrs = model.head.in_features
    model.head = nn.Linear(num_ftrs, 5)  # a new head, trainable
    rng = np.random.RandomState(7)
    with torch.no_grad():
        model.head.weight.copy_(torch.from_numpy(rng.randn(5, num_ftrs) * 0.1))
        model.head.bias.zero_()

    params_to_update = [p for p in model.parameters() if p.requires_grad]
    print(f"phase 1: training {len(params_to_update)} tensors")
    optimizer = torch.optim.Adam(params_to_update, lr=1e-2)
    criterion = nn.CrossEntropyLoss()
    batches = rng.randint(0, n_train, size=(args.steps, args.batch_size))
    for step in range(args.steps):
        if step == args.frozen_steps:
            model.features.requires_grad_(True)
            optimizer.add_param_group({"params": model.features.parameters(), "lr": 1e-3})
            print(f"phase 2: training {sum(1 for p in model.parameters() if p.requires_grad)}"
                  " tensors")  # fmt: skip
        model.train()
        idx = torch.from_numpy(batches[step])
        loss = criterion(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")

    model.eval()
    with torch.no_grad():
        logits = model(x[n_train:])
        test_loss = criterion(logits, y[n_train:]).item()
        accuracy = (logits.argmax(dim=1) == y[n_train:]).float().mean().item()
    print(f"held-out accuracy {accuracy:.4f}")
    print(f"test loss {test_loss:.10f}")


if __name__ == "__main__":
    main()
