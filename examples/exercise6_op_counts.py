"""Exercise 6: forward and backward op counts, showing backward costs a small constant times
forward (the cheap-gradient principle).

`chainrule.count_ops` counts 1 per forward op and 2 per gradient sent back along an edge (a
multiply by the partial derivative, an add into the input's gradient). A unary op has one
edge and a binary op two, so backward is at most 4 times forward, whatever the graph.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from chainrule import MLP, Scalar, count_ops

XOR_INPUTS = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
XOR_TARGETS = [0.0, 1.0, 1.0, 0.0]


def exercise1(x):
    """Exercise 1's sigmoid written out: 1 / (1 + exp(-x))."""
    return 1 / (1 + (-x).exp())


def exercise2(x, y):
    """Exercise 2's x²y + sin(xy)."""
    return x**2 * y + (x * y).sin()


def exercise3(x, y, z):
    """Exercise 3's (x + y)·z + exp(x·z)."""
    return (x + y) * z + (x * z).exp()


def mlp_loss() -> Scalar:
    """Mean squared error of a 2-8-8-1 MLP (tanh, tanh, sigmoid) on the four XOR points."""
    model = MLP(2, [8, 8, 1], activations=["tanh", "tanh", "sigmoid"], rng=random.Random(0))
    predictions = [model(list(x)) for x in XOR_INPUTS]
    return sum((p - t) ** 2 for p, t in zip(predictions, XOR_TARGETS)) / len(XOR_TARGETS)


CASES: dict[str, tuple[Callable, tuple[float, ...]]] = {
    "exercise 1: sigmoid composed": (exercise1, (0.5,)),
    "exercise 2: x²y + sin(xy)": (exercise2, (2.0, 3.0)),
    "exercise 3: (x + y)z + exp(xz)": (exercise3, (1.0, 2.0, -1.0)),
    "2-8-8-1 MLP, XOR loss": (mlp_loss, ()),
}


def run() -> dict[str, tuple[int, int, float]]:
    """(forward ops, backward ops, backward / forward) for each case."""
    results = {}
    for name, (fn, point) in CASES.items():
        with count_ops() as counts:
            fn(*(Scalar(v) for v in point)).backward()
        results[name] = (counts.forward_total, counts.backward_total, counts.ratio)
    return results


def main() -> None:
    results = run()
    width = max(len(name) for name in results)
    print(f"{'graph':<{width}}  {'forward':>8}  {'backward':>8}  {'ratio':>6}")
    for name, (forward, backward, ratio) in results.items():
        print(f"{name:<{width}}  {forward:>8}  {backward:>8}  {ratio:>6.2f}")


if __name__ == "__main__":
    main()
