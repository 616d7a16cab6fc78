"""Logistic regression in the first-tutorial style: two Gaussian blobs made into
torch.FloatTensor and torch.LongTensor, a TensorDataset served by a DataLoader imported from
torch.utils.data.dataloader, one nn.Linear with CrossEntropyLoss and SGD, epoch summaries
with f-strings on tensors, and accuracy under torch.no_grad(). Run `python logreg.py` or
`chainrule run logreg.py`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset
from torch.utils.data.dataloader import DataLoader


class LogisticRegression(nn.Module):
    def __init__(self, input_size, num_classes):
        super(LogisticRegression, self).__init__()
        self.linear = nn.Linear(input_size, num_classes)

    def forward(self, x):
        out = self.linear(x)
        return out


def make_blobs(n, centers, rng):
    labels = rng.randint(0, 2, n)
    points = centers[labels] + rng.randn(n, centers.shape[1])
    return points, labels.tolist()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_epochs", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=50)
    parser.add_argument("--learning_rate", type=float, default=0.05)
    parser.add_argument("--input_size", type=int, default=10)
    args = parser.parse_args()

    rng = np.random.RandomState(2)
    centers = rng.randn(2, args.input_size) * 0.5
    x_train, y_train = make_blobs(600, centers, rng)
    x_test, y_test = make_blobs(200, centers, rng)
    train_dataset = TensorDataset(torch.FloatTensor(x_train), torch.LongTensor(y_train))
    test_dataset = TensorDataset(torch.FloatTensor(x_test), torch.LongTensor(y_test))
    train_loader = DataLoader(dataset=train_dataset, batch_size=args.batch_size, shuffle=False)
    test_loader = DataLoader(dataset=test_dataset, batch_size=args.batch_size, shuffle=False)

    model = LogisticRegression(args.input_size, 2)
    model.linear.weight.data = torch.FloatTensor(rng.uniform(-0.3, 0.3, (2, args.input_size)))
    model.linear.bias.data.fill_(0)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate)

    total_step = len(train_loader)
    step = 0
    for epoch in range(args.num_epochs):
        for i, (images, labels) in enumerate(train_loader):
            outputs = model(images)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
            if (i + 1) % 6 == 0:
                print(f"Epoch [{epoch + 1}/{args.num_epochs}], Step [{i + 1}/{total_step}], "
                      f"Loss: {loss:.4f}")  # fmt: skip

    with torch.no_grad():
        correct = 0
        total = 0
        for images, labels in test_loader:
            outputs = model(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum()
        print(f"Accuracy of the model on the test points: {100 * correct / total:.1f} %")
        print(f"accuracy {correct.item() / total:.4f}")

    torch.save(model.state_dict(), "model.ckpt")
