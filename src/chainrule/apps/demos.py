"""Training demos that the console command runs: each returns its results as a dict.

Output goes through a ``log`` callable (print by default) so tests can run demos quietly.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..scalar_nn import MLP
from ..value import Value

XOR_INPUTS = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
XOR_TARGETS = [0.0, 1.0, 1.0, 0.0]


def train_xor(
    steps: int = 500,
    lr: float = 0.5,
    hidden: int = 8,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    log_every: int = 50,
) -> dict:
    """Train a scalar 2-hidden-1 MLP (tanh, then sigmoid) on XOR with mean squared error.

    Plain gradient descent on `Value`s, exactly as in the teaching material. Returns the
    model, the loss history, the final predictions, and the gradient of each prediction with
    respect to its two inputs.
    """
    log = log or (lambda _line: None)
    model = MLP(2, [hidden, 1], activations=["tanh", "sigmoid"], rng=random.Random(seed))
    losses = []
    log(f"training {model} on XOR: {len(model.parameters())} parameters, lr={lr}")
    for step in range(1, steps + 1):
        predictions = [model(list(x)) for x in XOR_INPUTS]
        loss = sum((p - t) ** 2 for p, t in zip(predictions, XOR_TARGETS)) / len(XOR_TARGETS)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
        if log_every and (step % log_every == 0 or step in (1, steps)):
            log(f"step {step:5d}  loss {loss.data:.6f}")

    first = model.layers[0].neurons[0]
    loss_gradients = dict(zip(("w1", "w2", "b"), (p.grad for p in first.parameters())))
    rows = []
    for x, target in zip(XOR_INPUTS, XOR_TARGETS):
        inputs = [Value(x[0], label="x1"), Value(x[1], label="x2")]
        prediction = model(inputs)
        prediction.backward()
        rows.append((x, target, prediction.data, (inputs[0].grad, inputs[1].grad)))
    log("")
    log("  x1   x2  target  prediction   d(pred)/dx1  d(pred)/dx2")
    for x, target, prediction, grads in rows:
        log(
            f"{x[0]:4.0f} {x[1]:4.0f}  {target:6.0f}  {prediction:10.4f}"
            f"   {grads[0]:+11.4f}  {grads[1]:+11.4f}"
        )
    log("")
    log("gradient of the final loss on the first hidden neuron:")
    log("  " + "  ".join(f"dL/d{name} = {g:+.2e}" for name, g in loss_gradients.items()))
    return {
        "model": model,
        "losses": losses,
        "predictions": [r[2] for r in rows],
        "input_gradients": [r[3] for r in rows],
        "loss_gradients": loss_gradients,
    }
