"""Custom autograd Functions in a small regression, as the autograd tutorials write them: a
rational activation with its own backward (ctx.save_for_backward, ctx.needs_input_grad), a
Huber loss Function that keeps a non-tensor argument on ctx and returns None for it, both
checked with torch.autograd.gradcheck; a tensor hook that records gradient norms; an input
gradient from torch.autograd.grad(create_graph=True) used as a penalty; and a plain update
loop `p -= lr * p.grad` under torch.no_grad(). Run `python custom_function.py` or
`chainrule run custom_function.py`."""

import argparse

import numpy as np
import torch
from torch.autograd import Function, gradcheck


class SoftSign(Function):
    """x / (1 + |x|), with the derivative 1 / (1 + |x|)^2 written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input / (1 + input.abs())

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output / (1 + input.abs()) ** 2
        return grad_input


class Huber(Function):
    """Mean Huber loss of (prediction - target) with threshold delta (not a tensor)."""

    @staticmethod
    def forward(ctx, prediction, target, delta):
        diff = prediction - target
        ctx.save_for_backward(diff)
        ctx.delta = delta
        small = diff.abs() <= delta
        loss = torch.where(small, 0.5 * diff**2, delta * (diff.abs() - 0.5 * delta))
        return loss.mean()

    @staticmethod
    def backward(ctx, grad_output):
        (diff,) = ctx.saved_tensors
        grad = diff.clamp(-ctx.delta, ctx.delta) / diff.numel()
        return grad_output * grad, -grad_output * grad, None


softsign = SoftSign.apply


def huber(prediction, target, delta=1.0):
    return Huber.apply(prediction, target, delta)


class Net(torch.nn.Module):
    def __init__(self, hidden, rng):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.from_numpy(rng.randn(1, hidden) * 1.0))
        self.b1 = torch.nn.Parameter(torch.from_numpy(rng.randn(hidden) * 0.5))
        self.w2 = torch.nn.Parameter(torch.from_numpy(rng.randn(hidden, 1) / np.sqrt(hidden)))
        self.b2 = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))

    def forward(self, x):
        return softsign(x @ self.w1 + self.b1) @ self.w2 + self.b2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--penalty", type=float, default=1e-3)
    args = parser.parse_args()

    x = torch.randn(6, 3, dtype=torch.double, requires_grad=True)
    print(f"gradcheck softsign: {gradcheck(softsign, (x,), eps=1e-6, atol=1e-4)}")
    y = torch.randn(6, 3, dtype=torch.double)
    print(f"gradcheck huber: {gradcheck(lambda a: huber(a, y, 0.5), (x,), eps=1e-6, atol=1e-4)}")

    rng = np.random.RandomState(0)
    xs = torch.from_numpy(np.linspace(-3, 3, 64).reshape(-1, 1))
    ys = torch.sin(xs) + torch.from_numpy(0.05 * rng.randn(64, 1))
    model = Net(args.hidden, rng)

    grad_norms = []
    for step in range(args.steps):
        inputs = xs.clone().requires_grad_(True)
        hidden = inputs @ model.w1 + model.b1
        hidden.register_hook(lambda g: grad_norms.append(g.norm().item()))
        pred = softsign(hidden) @ model.w2 + model.b2
        fit = huber(pred, ys, delta=0.5)
        (dinput,) = torch.autograd.grad(pred.sum(), inputs, create_graph=True)
        loss = fit + args.penalty * (dinput**2).mean()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= args.lr * p.grad
                p.grad = None
        print(f"step {step} loss {loss.item():.10f}")

    with torch.no_grad():
        mse = ((model(xs) - torch.sin(xs)) ** 2).mean().item()
    print(f"hook saw {len(grad_norms)} gradients, the last of norm {grad_norms[-1]:.4f}")
    print(f"final mse {mse:.10f}")


if __name__ == "__main__":
    main()
