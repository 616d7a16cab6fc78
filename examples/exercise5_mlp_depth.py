"""Exercise 5: an MLP with any number of hidden layers and an activation per layer.

`chainrule.MLP(nin, sizes, activations)` takes one size and one activation name per layer.
This compares 2-8-1 with 2-8-8-1 on XOR (tanh hidden layers, sigmoid output, mean squared
error, gradient descent at lr 0.5): how many steps each needs to bring the loss below 0.01,
for several seeds.
"""

from __future__ import annotations

import random

from chainrule import MLP

XOR_INPUTS = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
XOR_TARGETS = [0.0, 1.0, 1.0, 0.0]
ARCHITECTURES = {"2-8-1": [8, 1], "2-8-8-1": [8, 8, 1]}
SEEDS = (0, 1, 2, 3, 4)


def make_mlp(sizes: list[int], hidden: str = "tanh", output: str = "sigmoid", seed: int = 0):
    """An MLP on 2 inputs with ``sizes`` neurons per layer: ``hidden`` activations, then
    ``output`` on the last layer."""
    activations = [hidden] * (len(sizes) - 1) + [output]
    return MLP(2, sizes, activations=activations, rng=random.Random(seed))


def steps_to_reach(
    model: MLP, target: float = 0.01, lr: float = 0.5, max_steps: int = 3000
) -> int | None:
    """Gradient-descent steps until the XOR loss is below ``target`` (None if never)."""
    for step in range(max_steps + 1):
        predictions = [model(list(x)) for x in XOR_INPUTS]
        loss = sum((p - t) ** 2 for p, t in zip(predictions, XOR_TARGETS)) / len(XOR_TARGETS)
        if loss.data < target:
            return step
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
    return None


def run(seeds=SEEDS) -> dict[str, list[int | None]]:
    """Steps to a loss below 0.01 for each architecture and seed."""
    return {
        name: [steps_to_reach(make_mlp(sizes, seed=seed)) for seed in seeds]
        for name, sizes in ARCHITECTURES.items()
    }


def main() -> None:
    results = run()
    print("steps to an XOR loss below 0.01 (tanh hidden, sigmoid output, lr 0.5)")
    print("seed     " + "".join(f"{seed:>7}" for seed in SEEDS))
    for name, steps in results.items():
        cells = "".join(f"{'never' if s is None else s:>7}" for s in steps)
        print(f"{name:<9}{cells}")


if __name__ == "__main__":
    main()
