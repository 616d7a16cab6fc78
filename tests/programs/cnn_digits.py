"""A convolutional classifier for scikit-learn's 8x8 handwritten digits, in the shape of the
classic MNIST example: Conv2d, BatchNorm2d, MaxPool2d, Dropout, log_softmax with nll_loss,
train/test functions over DataLoaders, Adadelta with a StepLR schedule, and the model saved
at the end; `--compile` trains and tests the model through torch.compile. Run
`python cnn_digits.py` or `chainrule run cnn_digits.py`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from sklearn.datasets import load_digits
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, 1, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.dropout1 = nn.Dropout(dropout)
        self.fc1 = nn.Linear(16 * 2 * 2, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        x = self.dropout1(F.relu(self.fc1(x)))
        output = F.log_softmax(self.fc2(x), dim=1)
        return output


def train(args, model, train_loader, optimizer, epoch, step):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")
        step += 1
        if batch_idx % args.log_interval == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(train_loader.dataset),
                    100.0 * batch_idx / len(train_loader),
                    loss.item(),
                )
            )
    return step


def test(model, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    accuracy = correct / len(test_loader.dataset)
    print(f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/"
          f"{len(test_loader.dataset)} ({100.0 * accuracy:.0f}%)\n")  # fmt: skip
    print(f"test loss {test_loss:.10f}")
    return accuracy


def main():
    parser = argparse.ArgumentParser(description="digits CNN example")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--test-batch-size", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train-size", type=int, default=640)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=0.7)
    parser.add_argument("--dropout", type=float, default=0.25)
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=5)
    parser.add_argument("--save-model", action="store_true")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    args = parser.parse_args()
    torch.manual_seed(args.seed)

    digits = load_digits()
    images = (digits.images / 16.0 - 0.5).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.int64)
    order = np.random.RandomState(args.seed).permutation(len(labels))
    train_idx, test_idx = order[: args.train_size], order[-400:]
    train_set = TensorDataset(
        torch.from_numpy(images[train_idx]), torch.from_numpy(labels[train_idx])
    )
    test_set = TensorDataset(torch.from_numpy(images[test_idx]), torch.from_numpy(labels[test_idx]))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=args.shuffle)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)

    model = Net(args.dropout)
    rng = np.random.RandomState(args.seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("bn"):
                continue
            std = np.sqrt(2.0 / p[0].numel()) if p.dim() > 1 else 0.0  # He init, zero bias
            p.copy_(torch.from_numpy(rng.normal(0, std, size=p.shape).astype(np.float32)))
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    if args.compile:
        model = torch.compile(model)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    step = 0
    for epoch in range(1, args.epochs + 1):
        step = train(args, model, train_loader, optimizer, epoch, step)
        accuracy = test(model, test_loader)
        scheduler.step()
    print(f"accuracy {accuracy:.4f}")

    if args.save_model:
        torch.save(model.state_dict(), "digits_cnn.pt")


if __name__ == "__main__":
    main()
