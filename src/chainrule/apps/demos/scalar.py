"""The demos on scalar `Value`s: an MLP learning XOR, and the project page's linear softmax
classifier on 4 blobs (which can also train on Tensors, timed against the Values)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from ...creation import tensor
from ...data import make_blobs
from ...io import save as save_file
from ...nn import Linear
from ...optim import SGD
from ...scalar.nn import MLP, LinearLayer, accuracy, train
from ...scalar.value import Value
from .report import Progress, check_outputs, plot_run

XOR_INPUTS = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
XOR_TARGETS = [0.0, 1.0, 1.0, 0.0]


def scalar_state_dict(model: MLP | LinearLayer) -> dict[str, np.ndarray]:
    """The weights of a scalar MLP or LinearLayer as float64 arrays, laid out as `nn.Linear`'s:
    ``layers.{i}.weight`` (out, in) and ``layers.{i}.bias`` for an MLP, ``weight`` and
    ``bias`` for a LinearLayer (whose grid of Values is (in, out), so it is transposed).

    >>> sorted(scalar_state_dict(MLP(2, [3, 1], rng=random.Random(0))))
    ['layers.0.bias', 'layers.0.weight', 'layers.1.bias', 'layers.1.weight']
    """
    if isinstance(model, LinearLayer):
        weight = np.array([[w.data for w in row] for row in model.w]).T
        return {"weight": weight, "bias": np.array([b.data for b in model.b])}
    state = {}
    for i, layer in enumerate(model.layers):
        state[f"layers.{i}.weight"] = np.array([[w.data for w in n.w] for n in layer.neurons])
        state[f"layers.{i}.bias"] = np.array([n.b.data for n in layer.neurons])
    return state


def train_xor(
    steps: int = 500,
    lr: float = 0.5,
    hidden: int = 8,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    log_every: int = 50,
    *,
    quiet: bool = False,
    plot: str | None = None,
    save: str | None = None,
) -> dict:
    """Train a scalar 2-hidden-1 MLP (tanh, then sigmoid) on XOR with mean squared error.

    Plain gradient descent on `Value`s, exactly as in the teaching material. Returns the
    model, the loss history, the final predictions, and the gradient of each prediction with
    respect to its two inputs. ``plot`` writes the loss curve and the boundary p = 0.5,
    evaluated point by point on a grid with the scalar model; ``save`` the weights
    (`scalar_state_dict`). ``quiet`` keeps only the final table.
    """
    check_outputs(plot, save)
    say = log or (lambda _line: None)
    model = MLP(2, [hidden, 1], activations=["tanh", "sigmoid"], rng=random.Random(seed))
    losses = []
    if not quiet:
        say(f"training {model} on XOR: {len(model.parameters())} parameters, lr={lr}")
    progress = Progress(steps, log, quiet, every=log_every)
    for _ in range(steps):
        predictions = [model(list(x)) for x in XOR_INPUTS]
        loss = sum((p - t) ** 2 for p, t in zip(predictions, XOR_TARGETS)) / len(XOR_TARGETS)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
        progress.update(loss.data)
    progress.close()

    first = model.layers[0].neurons[0]
    loss_gradients = dict(zip(("w1", "w2", "b"), (p.grad for p in first.parameters())))
    rows = []
    for x, target in zip(XOR_INPUTS, XOR_TARGETS):
        inputs = [Value(x[0], label="x1"), Value(x[1], label="x2")]
        prediction = model(inputs)
        prediction.backward()
        rows.append((x, target, prediction.data, (inputs[0].grad, inputs[1].grad)))
    say(f"final loss {losses[-1]:.6f} after {steps} steps")
    say("")
    say("  x1   x2  target  prediction   d(pred)/dx1  d(pred)/dx2")
    for x, target, prediction, grads in rows:
        say(
            f"{x[0]:4.0f} {x[1]:4.0f}  {target:6.0f}  {prediction:10.4f}"
            f"   {grads[0]:+11.4f}  {grads[1]:+11.4f}"
        )
    say("")
    say("gradient of the final loss on the first hidden neuron:")
    say("  " + "  ".join(f"dL/d{name} = {g:+.2e}" for name, g in loss_gradients.items()))
    if plot is not None:
        plot_run(plot, losses, f"XOR: scalar MLP(2, [{hidden}, 1]), {steps} steps",
                 points=np.array(XOR_INPUTS), labels=np.array(XOR_TARGETS, dtype=int),
                 predict=lambda grid: [model(list(x)).data > 0.5 for x in grid.tolist()],
                 resolution=100)  # fmt: skip
        say(f"wrote {plot}")
    if save is not None:
        save_file(scalar_state_dict(model), save)
        say(f"wrote {save}")
    return {
        "model": model,
        "losses": losses,
        "predictions": [r[2] for r in rows],
        "input_gradients": [r[3] for r in rows],
        "loss_gradients": loss_gradients,
    }


#: The project page's data: 100 points of 4 classes in 2-D. The classes sit on a circle of
#: radius 20 with spread 7, so they touch: the seeded run misclassifies one point, and that
#: point's -log(p + 1e-6) ends near -log(1e-6) = 13.8, a mean loss near 0.138 over 100 points.
BLOB_CENTERS = [[20.0, 0.0], [0.0, 20.0], [-20.0, 0.0], [0.0, -20.0]]
BLOB_STD = 7.0


def blobs(seed: int = 0) -> tuple[list[list[float]], list[int]]:
    """The classifier demo's data set as Python lists: 100 rows of 2 floats, labels 0..3."""
    X, y = make_blobs(100, BLOB_CENTERS, cluster_std=BLOB_STD, seed=seed)
    return X.tolist(), y.tolist()


def fit_blobs_scalar(
    x: list[list[float]],
    y: list[int],
    steps: int = 500,
    lr: float = 1.0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    """The project page's classifier on scalar Values: LinearLayer, softmax, cross-entropy.

    `train` runs one epoch per call, so that ``progress`` can follow each one.
    """
    start = time.perf_counter()
    model = LinearLayer(len(x[0]), 1 + max(y), rng=random.Random(seed))
    losses = []
    for _ in range(steps):
        losses += train(x, y, model, lr=lr, epochs=1)
        if progress is not None:
            progress.update(losses[-1])
    seconds = time.perf_counter() - start
    return {"model": model, "losses": losses, "accuracy": accuracy(model(x), y),
            "seconds": seconds}  # fmt: skip


def fit_blobs_tensor(
    x: list[list[float]],
    y: list[int],
    steps: int = 500,
    lr: float = 1.0,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    """The same model on Tensors: `nn.Linear`, softmax, mean -log(p + 1e-6), plain SGD.

    The Linear layer (float64) starts from the scalar LinearLayer's weights for the same
    seed, so both runs follow the same path up to rounding.
    """
    start = time.perf_counter()
    first = LinearLayer(len(x[0]), 1 + max(y), rng=random.Random(seed))
    model = Linear(len(x[0]), 1 + max(y)).double()
    model.load_state_dict({name: tensor(array) for name, array in scalar_state_dict(first).items()})
    inputs, rows, labels = tensor(np.array(x, dtype=np.float64)), np.arange(len(y)), np.array(y)
    optimizer = SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        probabilities = model(inputs).softmax(dim=1)
        loss = -(probabilities[rows, labels] + 1e-6).log().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(losses[-1])
    predictions = model(inputs).argmax(dim=1)._array
    seconds = time.perf_counter() - start
    return {"model": model, "losses": losses,
            "accuracy": float(np.mean(predictions == labels)), "seconds": seconds}  # fmt: skip


def train_blobs(
    engine: str = "tensor",
    steps: int = 500,
    lr: float = 1.0,
    seed: int = 0,
    log: Callable[[str], None] | None = print,
    log_every: int = 100,
    *,
    quiet: bool = False,
    plot: str | None = None,
    save: str | None = None,
) -> dict:
    """Train the project page's linear softmax classifier on 100 blobs of 4 classes.

    ``engine="scalar"`` trains it on scalar Values (LinearLayer, softmax, cross_entropy_loss,
    train), then times the tensor run of the same model for comparison; ``"tensor"`` runs
    only the tensor version. Returns the run's losses, accuracy, model and ``seconds`` per
    engine. ``plot`` writes the loss curve and the decision regions (computed by the trained
    engine's model), ``save`` the weights as `nn.Linear(2, 4)`'s state dict.
    """
    if engine not in ("tensor", "scalar"):
        raise ValueError(f"train_blobs: engine must be 'tensor' or 'scalar', got {engine!r}")
    check_outputs(plot, save)
    say = log or (lambda _line: None)
    x, y = blobs(seed)
    if not quiet:
        say(f"linear softmax classifier on {len(x)} blobs of {1 + max(y)} classes, "
            f"{engine} engine, lr={lr}, {steps} epochs")  # fmt: skip
    fit = fit_blobs_scalar if engine == "scalar" else fit_blobs_tensor
    progress = Progress(steps, log, quiet, every=log_every, unit="epoch")
    result = fit(x, y, steps, lr, seed, progress)
    progress.close()
    seconds = {engine: result["seconds"]}
    if engine == "scalar":
        seconds["tensor"] = fit_blobs_tensor(x, y, steps, lr, seed)["seconds"]
    say(f"final loss {result['losses'][-1]:.4f}, training accuracy {result['accuracy']:.0%}")
    for name, s in seconds.items():
        say(f"{name} engine: {s:.3f} s")
    if engine == "scalar":
        say(f"the tensor run is {seconds['scalar'] / seconds['tensor']:.0f}x faster")
    model = result["model"]
    if plot is not None:
        if engine == "scalar":
            predict = lambda grid: np.argmax(
                [[v.data for v in row] for row in model(grid.tolist())], 1
            )
        else:
            predict = lambda grid: model(tensor(grid)).argmax(dim=1)._array
        plot_run(plot, result["losses"], f"4 blobs: linear softmax classifier ({engine})",
                 points=np.array(x), labels=np.array(y), predict=predict,
                 resolution=60 if engine == "scalar" else 200)  # fmt: skip
        say(f"wrote {plot}")
    if save is not None:
        state = scalar_state_dict(model) if engine == "scalar" else model.state_dict()
        save_file(state, save)
        say(f"wrote {save}")
    return {**result, "seconds": seconds}
