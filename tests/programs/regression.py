"""Polynomial regression fitted by hand, the way first tutorials write it: features x, x^2,
x^3, x^4 built with torch.cat, a single nn.Linear, the update written as
param.data.add_(-lr * param.grad) and the gradients cleared with param.grad.data.zero_(),
training until the loss drops below a threshold (`--compile`: the step, which reads its loss
with .item(), under torch.compile); then the same fit with raw tensors that require grad and
torch.FloatTensor/DoubleTensor data. Run `python regression.py` or
`chainrule run regression.py`."""

import argparse

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += f"{w:+.2f} x^{i + 1} "
    result += f"{b[0]:+.2f}"
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--threshold", type=float, default=1e-3)
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)

    rng = np.random.RandomState(12)
    W_target = torch.from_numpy(rng.randn(POLY_DEGREE, 1)) * 0.5
    b_target = torch.from_numpy(rng.randn(1)) * 0.5

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def get_batch(batch_size):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = torch.from_numpy(rng.uniform(-1, 1, batch_size))
        x = make_features(random)
        y = f(x)
        return x, y

    fc = torch.nn.Linear(W_target.size(0), 1)
    with torch.no_grad():  # the same start in every library
        fc.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, (1, POLY_DEGREE))))
        fc.bias.fill_(0.0)

    def train_step(batch_x, batch_y):
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-args.lr * param.grad)
        return loss

    if args.compile:
        train_step = torch.compile(train_step)

    for batch_idx in range(1, args.max_steps + 1):
        batch_x, batch_y = get_batch(args.batch_size)
        loss = train_step(batch_x, batch_y)
        print(f"step {batch_idx - 1} loss {loss:.10f}")
        if loss < args.threshold:
            break

    print(f"Loss: {loss:.6f} after {batch_idx} batches")
    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
    print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))

    # The same model again with raw tensors, as the autograd tutorials write it.
    x = torch.DoubleTensor(np.linspace(-1, 1, 64))
    y = torch.FloatTensor(np.sin(np.pi * np.linspace(-1, 1, 64))).double()
    a, b, c, d = (torch.tensor([v], requires_grad=True) for v in (0.1, -0.2, 0.3, -0.1))
    learning_rate = 0.05
    for t in range(40):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).mean()
        loss.backward()
        for param in (a, b, c, d):
            param.data.add_(-learning_rate * param.grad.data)
            param.grad.data.zero_()
        print(f"step {args.max_steps + t} loss {loss.item():.10f}")
    print(
        f"Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3"
    )
    print(f"final loss {loss.item():.10f}")


if __name__ == "__main__":
    main()
