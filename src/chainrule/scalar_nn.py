"""Neural networks made of scalar `Value`s, as in the teaching material: Neuron, Layer, MLP.

Every weight is its own Value, so these are for learning and small problems; the tensor
library in `chainrule.nn` is the one for real work.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .value import Value

#: Activation names a Neuron accepts, and the Value method each one calls.
ACTIVATIONS = {
    "relu": Value.relu,
    "tanh": Value.tanh,
    "sigmoid": Value.sigmoid,
    "linear": None,
}


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

    >>> n = Neuron(2, activation="linear", rng=random.Random(0))
    >>> len(n.parameters())
    3
    """

    def __init__(
        self, nin: int, activation: str = "relu", rng: random.Random | None = None
    ) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"Neuron: unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}"
            )
        rng = rng or random
        self.w = [Value(rng.uniform(-1.0, 1.0)) for _ in range(nin)]
        self.b = Value(0.0)
        self.activation = activation

    def __call__(self, x: Sequence[Value | float]) -> Value:
        if len(x) != len(self.w):
            raise ValueError(f"Neuron: expected {len(self.w)} inputs, got {len(x)}")
        out = self.b
        for wi, xi in zip(self.w, x):
            out = out + wi * xi
        act = ACTIVATIONS[self.activation]
        return act(out) if act else out

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
