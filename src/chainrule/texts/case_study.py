"""Case Study 2 (an automatic differentiation engine from scratch): `Scalar`, `DualNumber`,
`numerical_gradient_check` and ReLU networks drawn from NumPy's global random state.

``from chainrule.texts.case_study import Scalar, DualNumber, numerical_gradient_check, Neuron,
Layer, MLP`` in place of the case study's definitions runs its programs with its printed
output. ``MLP([2, 8, 1])`` takes the layer sizes including the input size, is ReLU in its
hidden layers and linear at the output unless ``activations`` says otherwise, and returns a
list; weights are ``np.random.randn() * 0.5``, so ``np.random.seed`` fixes them.

>>> x, y = Scalar(1.0, label="x"), Scalar(2.0, label="y")
>>> f = x**2 * y + (x * y).exp()
>>> f.backward()
>>> x
Scalar(data=1.0000, grad=18.7781 (x))
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..gradcheck import numerical_gradient_check
from ..scalar import nn
from ..scalar.dual import Dual
from ..scalar.value import Value
from ._scalar import op_labels, parent_set

__all__ = ["MLP", "DualNumber", "Layer", "Neuron", "Scalar", "numerical_gradient_check"]


class Scalar(Value):
    """chainrule's `Value` under the case study's name, constructor and printing.

    ``Scalar(data, children=(), op="", label="")``; the parents are also ``_children`` (a set).

    >>> a = Scalar(3.0, label="a")
    >>> b = a**2
    >>> b._op, b._children == {a}, b
    ('**2', True, Scalar(data=9.0000, grad=0.0000))
    """

    __slots__ = ()
    _op = op_labels({"pow": "**{y}", "sigmoid": "sigmoid"})
    _children = parent_set("The Scalars this one was computed from (a set).")

    def __init__(self, data: float, children=(), op: str = "", label: str = "") -> None:
        super().__init__(data, children, op, label)

    def __repr__(self) -> str:
        shown = f"data={self.data:.4f}, grad={self.grad:.4f}"
        return f"Scalar({shown} ({self.label}))" if self.label else f"Scalar({shown})"


class DualNumber(Dual):
    """chainrule's `Dual` printed as the case study prints a dual number.

    >>> x = DualNumber(1.0, 1.0)
    >>> x**2 * 2.0 + (x * 2.0).exp()
    Dual(9.3891 + 18.7781e)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        value, tangent = self.value, self.deriv
        return f"Dual({value:.4f} + {tangent:.4f}e)"


class Neuron(nn.Neuron):
    """act(w · x + b) with weights ``np.random.randn() * 0.5`` and ``.weights``/``.bias``.

    ``activation`` is "relu" (the default), "sigmoid", "tanh" or "linear"; ``seed`` reseeds
    NumPy's global random state before the weights are drawn.
    """

    value_class = Scalar

    def __init__(self, n_inputs: int, activation: str = "relu", seed: int | None = None) -> None:
        if seed is not None:
            np.random.seed(seed)
        super().__init__(n_inputs, activation)

    def draw_weight(self, rng) -> float:
        """``np.random.randn() * 0.5``: the case study's draw, from NumPy's global state."""
        return np.random.randn() * 0.5

    @property
    def weights(self) -> list[Value]:
        """The weights (the same list as ``w``)."""
        return self.w

    @property
    def bias(self) -> Value:
        """The bias (the same Value as ``b``)."""
        return self.b


class Layer(nn.Layer):
    """``n_outputs`` Neurons with one activation; returns a list even for one output."""

    def __init__(self, n_inputs: int, n_outputs: int, activation: str = "relu") -> None:
        neurons = (Neuron(n_inputs, activation) for _ in range(n_outputs))
        self.neurons = list(neurons)  # drawn in order: the case study's random stream


class MLP(nn.MLP):
    """``MLP(layer_sizes, activations=None)``: sizes include the input size ([2, 8, 1]).

    ``activations`` has one name per layer; by default ReLU for the hidden layers and linear
    for the output. Called on plain numbers or Scalars, it returns the list of outputs.
    """

    def __init__(self, layer_sizes: Sequence[int], activations: Sequence[str] | None = None):
        sizes = list(layer_sizes)
        if activations is None:
            activations = ["relu"] * (len(sizes) - 2) + ["linear"]
        activations = list(activations)
        if len(activations) != len(sizes) - 1:
            raise ValueError(
                f"MLP: {len(sizes) - 1} layers need {len(sizes) - 1} activations, "
                f"got {len(activations)}"
            )
        self.layers = [Layer(sizes[i], sizes[i + 1], activations[i]) for i in range(len(sizes) - 1)]
        self.nin, self.nouts, self.activations = sizes[0], sizes[1:], activations

    def __call__(self, inputs: Sequence[Value | float]) -> list[Value]:
        x = [v if isinstance(v, Value) else Scalar(v) for v in inputs]
        for layer in self.layers:
            x = layer(x)
        return x
