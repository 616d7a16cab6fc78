"""Neural networks made of scalar `Value`s, as in the teaching material: Neuron, Layer, MLP,
and the project page's classifier (LinearLayer, softmax, cross_entropy_loss, train).

Every weight is its own Value, so these are for learning and small problems; the tensor
library in `chainrule.nn` is the one for real work.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .value import Value

#: Activation names a Neuron accepts: each but "linear" names the Value method it calls (looked
#: up on the neuron's sum, so a Value subclass's or a patched method is the one used).
ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")


class Module:
    """Base class of the scalar networks: ``parameters()`` and ``zero_grad()``."""

    def parameters(self) -> list[Value]:
        """Every trainable Value of this module."""
        return []

    def zero_grad(self) -> None:
        """Set the gradient of every parameter to 0.0."""
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """act(w · x + b) for one output: weights uniform in [-1, 1], bias 0.

    A subclass may make its parameters another kind of Value (``value_class``) or draw its
    weights another way (``draw_weight``); the teaching texts' modules do both.

    >>> n = Neuron(2, activation="linear", rng=random.Random(0))
    >>> len(n.parameters())
    3
    """

    #: The Value class the weights and the bias are made of.
    value_class: type[Value] = Value

    def __init__(
        self, nin: int, activation: str = "relu", rng: random.Random | None = None
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"Neuron: unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}"
            )
        rng = rng or random
        self.w = [self.value_class(self.draw_weight(rng)) for _ in range(nin)]
        self.b = self.value_class(0.0)
        self.activation = activation

    def draw_weight(self, rng) -> float:
        """One initial weight, drawn in the order the weights are made: uniform in [-1, 1]."""
        return rng.uniform(-1.0, 1.0)

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(x)}")
        out = self.b
        for wi, xi in zip(self.w, x):
            out = out + wi * xi
        return out if self.activation == "linear" else getattr(out, self.activation)()

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"Neuron({len(self.w)}, activation={self.activation!r})"


class Layer(Module):
    """``nout`` neurons reading the same ``nin`` inputs; returns a list of ``nout`` Values."""

    def __init__(
        self, nin: int, nout: int, activation: str = "relu", rng: random.Random | None = None
    ) -> None:
        self.neurons = [Neuron(nin, activation, rng) for _ in range(nout)]

    def __call__(self, x: Sequence[Value | float]) -> list[Value]:
        return [n(x) for n in self.neurons]

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        n = self.neurons[0]
        return f"Layer({len(n.w)}, {len(self.neurons)}, activation={n.activation!r})"


class MLP(Module):
    """A stack of Layers: ``MLP(2, [8, 1])`` maps 2 inputs through 8 hidden units to 1 output.

    ``activations`` is one name per layer, or a single name for every hidden layer with a
    linear output layer (micrograd's convention). A one-output MLP returns a Value, otherwise
    a list of Values.

    >>> mlp = MLP(2, [8, 1], activations=["tanh", "sigmoid"], rng=random.Random(0))
    >>> mlp
    MLP(2, [8, 1], activations=['tanh', 'sigmoid'])
    >>> 0 < mlp([1.0, 0.0]).data < 1
    True
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        activations: str | Sequence[str] = "relu",
        rng: random.Random | None = None,
    ) -> None:
        if isinstance(activations, str):
            activations = [activations] * (len(nouts) - 1) + ["linear"]
        activations = list(activations)
        if len(activations) != len(nouts):
            raise ValueError(
                f"MLP: {len(nouts)} layers need {len(nouts)} activations, got {len(activations)}"
            )
        sizes = [nin, *nouts]
        self.layers = [
            Layer(sizes[i], sizes[i + 1], activations[i], rng) for i in range(len(nouts))
        ]
        self.nin, self.nouts, self.activations = nin, list(nouts), activations

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        for layer in self.layers:
            x = layer(x)
        return x[0] if len(x) == 1 else x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP({self.nin}, {self.nouts}, activations={self.activations})"


# The project page's classifier: a linear layer on rows of inputs, softmax, cross-entropy.


class LinearLayer(Module):
    """x @ W + b on rows of inputs: W is a nin x nout grid of Values uniform in [-1, 1], b zero.

    Called on a list of input rows (numbers or Values) it returns a list of logit rows.

    >>> layer = LinearLayer(2, 3, rng=random.Random(0))
    >>> logits = layer([[1.0, 2.0], [0.5, -1.0]])
    >>> len(logits), len(logits[0]), len(layer.parameters())
    (2, 3, 9)
    """

    #: The Value class the weights and the biases are made of.
    value_class: type[Value] = Value

    def __init__(self, nin: int, nout: int, rng: random.Random | None = None) -> None:
        rng = rng or random
        make = self.value_class
        self.w = [[make(rng.uniform(-1.0, 1.0)) for _ in range(nout)] for _ in range(nin)]
        self.b = [make(0.0) for _ in range(nout)]

    def __call__(self, x: Sequence[Sequence[Value | float]]) -> list[list[Value]]:
        nin = len(self.w)
        rows = []
        for row in x:
            if len(row) != nin:
                raise ValueError(f"LinearLayer: expected rows of {nin} inputs, got {len(row)}")
            rows.append(
                [sum((xi * wi[j] for xi, wi in zip(row, self.w)), b) for j, b in enumerate(self.b)]
            )
        return rows

    def parameters(self) -> list[Value]:
        return [w for row in self.w for w in row] + self.b

    def __repr__(self) -> str:
        return f"LinearLayer({len(self.w)}, {len(self.b)})"


def softmax(rows: Sequence[Sequence[Value]]) -> list[list[Value]]:
    """exp(z_i) / sum_j exp(z_j) along each row of Values.

    Each row's largest number is subtracted first, a constant that leaves softmax and its
    gradient unchanged but keeps exp from overflowing on large logits.

    >>> [round(p.data, 4) for p in softmax([[Value(0.0), Value(1.0)]])[0]]
    [0.2689, 0.7311]
    """
    out = []
    for row in rows:
        top = max(v.data for v in row)
        exps = [(v - top).exp() for v in row]
        total = sum(exps[1:], exps[0])
        out.append([e / total for e in exps])
    return out


def cross_entropy_loss(logits: Sequence[Sequence[Value]], y: Sequence[int]) -> Value:
    """Mean over rows of -log(p + 1e-6), p the `softmax` probability of the true class.

    Takes logits, as PyTorch's ``cross_entropy`` and the project page's do, and applies
    softmax itself. The 1e-6 keeps the log finite when a probability reaches 0.

    >>> logits = [[Value(0.0), Value(1.0)], [Value(2.0), Value(2.0)]]
    >>> round(cross_entropy_loss(logits, [1, 0]).data, 4)
    0.5032
    """
    if len(logits) != len(y):
        raise ValueError(f"cross_entropy_loss: {len(logits)} rows of logits, {len(y)} labels")
    probabilities = softmax(logits)
    losses = [-((row[int(label)] + 1e-6).log()) for row, label in zip(probabilities, y)]
    return sum(losses[1:], losses[0]) / len(losses)


def accuracy(y_hat: Sequence[Sequence[Value | float]], y: Sequence[int]) -> float:
    """The fraction of rows whose largest entry is at the true class.

    >>> accuracy([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], [1, 0, 0])
    0.6666666666666666
    """
    hits = 0
    for row, label in zip(y_hat, y):
        scores = [float(v) for v in row]
        hits += scores.index(max(scores)) == int(label)
    return hits / len(y)


def train(
    x: Sequence[Sequence[float]],
    y: Sequence[int],
    model: Module,
    lr: float = 1,
    epochs: int = 500,
    *,
    log: Callable[[str], None] | None = None,
    log_every: int = 100,
) -> list[float]:
    """Full-batch gradient descent of ``cross_entropy_loss(model(x), y)`` (logits in).

    Each epoch zeroes the gradients, backpropagates and updates ``p.data -= lr * p.grad``.
    Returns the loss of every epoch (before that epoch's update).

    >>> model = LinearLayer(1, 2, rng=random.Random(0))
    >>> losses = train([[-1.0], [1.0]], [0, 1], model, epochs=50)
    >>> losses[-1] < losses[0] / 5
    True
    """
    losses = []
    for epoch in range(1, epochs + 1):
        loss = cross_entropy_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
        if log is not None and log_every and (epoch % log_every == 0 or epoch in (1, epochs)):
            log(f"epoch {epoch:4d}  loss {loss.data:.6f}")
    return losses
