"""The training playground of ``chainrule serve``: an MLP on a 2-D data set, trained full-batch
by the tensor engine, reported as a stream of events (loss, accuracy, decision boundary).

`TrainConfig.from_json` checks a request; `train` yields the events. No HTTP here.
"""

from __future__ import annotations

import functools
import math
import numbers
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields

import numpy as np

from ..._tensor import Tensor
from ...autograd import no_grad
from ...data import make_blobs, make_moons, make_spirals, make_xor
from ...errors import ChainruleError
from ...nn import Parameter
from ...optim import SGD, Adam

#: The data sets, each (X, y) with a fixed seed so a run can be repeated.
DATASETS: dict[str, Callable[[], tuple[Tensor, Tensor]]] = {
    "xor": lambda: make_xor(200, noise=0.15, seed=0),
    "blobs": lambda: make_blobs(200, centers=3, cluster_std=2.5, seed=0),
    "moons": lambda: make_moons(200, noise=0.1, seed=0),
    "spirals": lambda: make_spirals(300, n_arms=3, noise=0.2, seed=0),
}

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "tanh": Tensor.tanh,
    "relu": Tensor.relu,
    "sigmoid": Tensor.sigmoid,
    "gelu": Tensor.gelu,
}

OPTIMIZERS = {"adam": Adam, "sgd": SGD}

# Bounds on every request, so that one run stays small (a few seconds at most).
MAX_LAYERS = 4
MAX_WIDTH = 64
MAX_STEPS = 2000
LR_RANGE = (1e-5, 10.0)
MAX_DELAY_MS = 1000
GRID_RANGE = (8, 80)
#: The most work one run may do, in the units `work` counts: at most about 4 s of one core.
MAX_WORK = 1_000_000_000
#: What an activation costs per unit and row, relative to tanh (measured: gelu's erf is a
#: rational approximation computed in NumPy, sigmoid's exp and division cost more than tanh).
ACTIVATION_COST = {"tanh": 1, "relu": 1, "sigmoid": 4, "gelu": 14}
#: The most time one run may spend pausing between events (``delay_ms`` each), so that a run,
#: and the slot it holds, ends within about a minute.
MAX_PAUSE_SECONDS = 60.0

# The engine's grad mode is one switch for the whole process, and optimizer steps and the
# boundary grid turn it off; one lock keeps concurrent runs from seeing each other's switch.
ENGINE_LOCK = threading.Lock()


class PlaygroundError(ChainruleError, ValueError):
    """A training request the playground cannot run; the message names the field."""


@dataclass(frozen=True)
class TrainConfig:
    """One training run: data set, network, optimizer, and how often to report.

    ``hidden`` holds the hidden layer widths (``()`` is logistic regression). An event is sent
    every ``every`` steps, after a pause of ``delay_ms`` so a person can watch; ``grid`` is the
    side of the decision-boundary grid.
    """

    dataset: str = "moons"
    hidden: tuple[int, ...] = (16, 16)
    activation: str = "tanh"
    lr: float = 0.03
    optimizer: str = "adam"
    steps: int = 300
    every: int = 5
    delay_ms: int = 0
    grid: int = 40
    seed: int = 0

    @classmethod
    def from_json(cls, request: object) -> TrainConfig:
        """Check a decoded JSON request (missing fields take the defaults).

        ``hidden`` may be a list of ints or a string such as ``"16,16"``.

        >>> TrainConfig.from_json({"dataset": "xor", "hidden": "8, 8"}).hidden
        (8, 8)
        >>> TrainConfig.from_json({"dataset": "iris"})
        Traceback (most recent call last):
        ...
        chainrule.apps.web.playground.PlaygroundError: train: unknown dataset 'iris'; choose one of blobs, moons, spirals, xor
        """  # noqa: E501
        if not isinstance(request, Mapping):
            raise PlaygroundError(
                f"train: the request must be a JSON object, got {type(request).__name__}"
            )
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(request) - known)
        if unknown:
            raise PlaygroundError(
                f"train: unknown field {unknown[0]!r}; the fields are {', '.join(sorted(known))}"
            )
        defaults = cls()
        get = lambda name: request.get(name, getattr(defaults, name))
        config = cls(
            dataset=_choice(get("dataset"), "dataset", DATASETS),
            hidden=_hidden(get("hidden")),
            activation=_choice(get("activation"), "activation", ACTIVATIONS),
            lr=_number(get("lr"), "lr", *LR_RANGE),
            optimizer=_choice(get("optimizer"), "optimizer", OPTIMIZERS),
            steps=_integer(get("steps"), "steps", 1, MAX_STEPS),
            every=_integer(get("every"), "every", 1, MAX_STEPS),
            delay_ms=_integer(get("delay_ms"), "delay_ms", 0, MAX_DELAY_MS),
            grid=_integer(get("grid"), "grid", *GRID_RANGE),
            seed=_integer(get("seed"), "seed", 0, 2**31 - 1),
        )
        _check_size(config)
        return config

    @property
    def events(self) -> int:
        """How many step events the run sends: one every ``every`` steps, and the last."""
        return -(-self.steps // self.every)


def work(config: TrainConfig) -> int:
    """The work a run does: rows through the network × its units × the activation's cost.

    Each step sends every point forward and back (counted as 2 rows); each event also sends the
    boundary grid and the points forward. The units are the hidden widths plus one output per
    class; `ACTIVATION_COST` weighs them. A run may do at most `MAX_WORK`.

    >>> work(TrainConfig(dataset="moons", hidden=(16, 16), steps=300, every=5, grid=40))
    7752000
    """
    points, classes = dataset_size(config.dataset)
    rows = 2 * config.steps * points + config.events * (config.grid**2 + points)
    return rows * (sum(config.hidden) + classes) * ACTIVATION_COST[config.activation]


@functools.cache
def dataset_size(name: str) -> tuple[int, int]:
    """(points, classes) of a data set."""
    _, y = DATASETS[name]()
    return len(y), int(y.numpy().max()) + 1


def _check_size(config: TrainConfig) -> None:
    size = work(config)
    if size > MAX_WORK:
        points, classes = dataset_size(config.dataset)
        units = sum(config.hidden) + classes
        cost = ACTIVATION_COST[config.activation]
        raise PlaygroundError(
            f"train: this run is {size:.3g} units of work; the limit is {MAX_WORK:.3g}. "
            f"Work is (2 × {config.steps} steps × {points} points + {config.events} events × "
            f"({config.grid}² grid + {points} points)) × {units} units × {cost} for "
            f"{config.activation}: use fewer steps, fewer or narrower layers, a larger every, "
            "a smaller grid or a cheaper activation"
        )
    pause = config.events * config.delay_ms / 1000
    if pause > MAX_PAUSE_SECONDS:
        raise PlaygroundError(
            f"train: the pauses add up to {pause:g} s ({config.events} events × "
            f"{config.delay_ms} ms); the limit is {MAX_PAUSE_SECONDS:g} s: use a shorter "
            "delay_ms or a larger every"
        )


def _choice(value: object, name: str, options: Mapping[str, object]) -> str:
    if not isinstance(value, str) or value not in options:
        raise PlaygroundError(
            f"train: unknown {name} {value!r}; choose one of {', '.join(sorted(options))}"
        )
    return value


def _integer(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PlaygroundError(f"train: {name} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise PlaygroundError(f"train: {name} must be between {low} and {high}, got {value}")
    return int(value)


def _number(value: object, name: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PlaygroundError(f"train: {name} must be a number, got {value!r}")
    if not low <= value <= high:  # also refuses nan
        raise PlaygroundError(f"train: {name} must be between {low:g} and {high:g}, got {value}")
    return float(value)


def _hidden(value: object) -> tuple[int, ...]:
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if not all(part.isdigit() and len(part) <= 6 for part in parts):
            raise PlaygroundError(
                f"train: hidden must be layer widths separated by commas, such as 16,16; "
                f"got {value[:40]!r}"
            )
        value = [int(part) for part in parts]
    if not isinstance(value, (list, tuple)):
        raise PlaygroundError(f"train: hidden must be a list of widths, got {value!r}")
    if len(value) > MAX_LAYERS:
        raise PlaygroundError(f"train: hidden has {len(value)} layers; the limit is {MAX_LAYERS}")
    return tuple(_integer(width, "each hidden width", 1, MAX_WIDTH) for width in value)


class MLP:
    """A plain multilayer perceptron: Parameters and matmul, the activation between layers.

    Weights start normal with variance gain / fan_in (gain 2 for relu and gelu, else 1),
    biases at zero; the last layer gives one logit per class.
    """

    def __init__(self, sizes: list[int], activation: str, seed: int) -> None:
        rng = np.random.default_rng(seed)
        gain = 2.0 if activation in ("relu", "gelu") else 1.0
        self.activation = ACTIVATIONS[activation]
        self.layers = [
            (
                Parameter(rng.normal(0.0, math.sqrt(gain / n_in), (n_in, n_out)).astype("f4")),
                Parameter(np.zeros(n_out, np.float32)),
            )
            for n_in, n_out in zip(sizes, sizes[1:])
        ]

    def parameters(self) -> list[Parameter]:
        """Every weight and bias, in layer order."""
        return [p for layer in self.layers for p in layer]

    def __call__(self, x: Tensor) -> Tensor:
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight + bias
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


def cross_entropy(logits: Tensor, one_hot: Tensor) -> Tensor:
    """Mean cross-entropy of integer labels given as one-hot rows (composed, so no new row)."""
    return -(logits.log_softmax(dim=1) * one_hot).sum() / logits.shape[0]


def train(config: TrainConfig, stop: threading.Event | None = None) -> Iterator[dict]:
    """Train as ``config`` says, yielding events as dicts ready for JSON.

    First ``{"type": "start", ...}`` with the points (``x``, ``y`` in the data set's
    coordinates), labels, class count and the boundary grid's ``bounds``; then every
    ``config.every`` steps ``{"type": "step", "step", "loss", "accuracy", "losses" (one per
    step since the last event), "grid" (row-major predicted classes, top row first)}``; and
    last ``{"type": "done", ..., "stopped"}``. Setting ``stop`` ends the run after the step in
    progress. Inputs are standardised before training; the grid covers the points plus a margin.
    """
    stop = stop or threading.Event()
    X, y = DATASETS[config.dataset]()
    points, labels = X.numpy().astype(np.float64), y.numpy()
    classes = int(labels.max()) + 1
    mean, std = points.mean(axis=0), points.std(axis=0)
    inputs = Tensor((points - mean) / std, dtype="float32")
    one_hot = Tensor(np.eye(classes, dtype=np.float32)[labels])
    low, high = points.min(axis=0), points.max(axis=0)
    margin = 0.1 * (high - low)
    low, high = low - margin, high + margin
    side = config.grid
    # Cell centres, top row (largest x2) first, as a canvas draws them.
    g1 = low[0] + (np.arange(side) + 0.5) * (high[0] - low[0]) / side
    g2 = high[1] - (np.arange(side) + 0.5) * (high[1] - low[1]) / side
    grid_points = np.stack(np.meshgrid(g1, g2), axis=-1).reshape(-1, 2)
    grid_inputs = Tensor((grid_points - mean) / std, dtype="float32")

    model = MLP([2, *config.hidden, classes], config.activation, config.seed)
    optimizer = OPTIMIZERS[config.optimizer](model.parameters(), lr=config.lr)
    yield {
        "type": "start",
        "dataset": config.dataset,
        "x": points[:, 0].round(4).tolist(),
        "y": points[:, 1].round(4).tolist(),
        "labels": labels.tolist(),
        "classes": classes,
        "bounds": [float(low[0]), float(high[0]), float(low[1]), float(high[1])],
        "grid_size": side,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "steps": config.steps,
    }
    losses: list[float] = []
    event: dict = {"step": 0, "loss": None, "accuracy": None}
    for step in range(1, config.steps + 1):
        with ENGINE_LOCK:
            logits = model(inputs)
            loss = cross_entropy(logits, one_hot)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(float(loss.item()))
        if step % config.every and step != config.steps and not stop.is_set():
            continue
        with ENGINE_LOCK, no_grad():
            accuracy = float((model(inputs).argmax(dim=1).numpy() == labels).mean())
            grid = model(grid_inputs).argmax(dim=1).numpy()
        diverged = not math.isfinite(losses[-1])
        event = {"step": step, "loss": None if diverged else losses[-1], "accuracy": accuracy}
        finite = [value if math.isfinite(value) else None for value in losses]
        yield {"type": "step", **event, "losses": finite, "grid": grid.tolist()}
        if diverged:
            yield {"type": "done", **event, "stopped": True, "diverged": True}
            return
        losses = []
        if stop.is_set():
            break
        if config.delay_ms:
            stop.wait(config.delay_ms / 1000)
    yield {"type": "done", **event, "stopped": stop.is_set(), "diverged": False}


__all__ = [
    "ACTIVATIONS", "ACTIVATION_COST", "DATASETS", "ENGINE_LOCK", "MAX_PAUSE_SECONDS", "MAX_WORK",
    "MLP", "OPTIMIZERS", "PlaygroundError", "TrainConfig", "cross_entropy", "dataset_size",
    "train", "work",
]  # fmt: skip
