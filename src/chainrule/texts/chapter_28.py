"""Chapter 28 (Autograd – Automatic Differentiation): its `Value` and tanh networks.

``from chainrule.texts.chapter_28 import Value, Neuron, Layer, MLP`` in place of the chapter's
class definitions runs its programs with its printed numbers. `Value` prints
``Value(data=10.0000, grad=1.0000)``; ``MLP(2, [8, 1])`` has tanh hidden layers and a linear
output, draws its weights from `random` as the chapter does, and returns a bare Value for one
output. Dual numbers (exercise 28.2) are `chainrule.Dual`; checkpointing and operation counts
(exercises 28.4 and 28.6) are `chainrule.checkpoint` and `chainrule.count_ops`.

>>> import random
>>> random.seed(42)
>>> MLP(2, [4, 1])([Value(1.0), Value(2.0)])
Value(data=0.5318, grad=0.0000)
"""

from __future__ import annotations

from collections.abc import Sequence

from ..scalar import nn
from ..scalar.value import Value as _Value
from ._scalar import op_labels

__all__ = ["MLP", "Layer", "Neuron", "Value"]


class Value(_Value):
    """chainrule's `Value`, printing data and grad to 4 decimals and naming ops as the chapter.

    >>> x, y = Value(2.0), Value(3.0)
    >>> z = x * y + (x * x).relu(); z.backward()
    >>> z, x.grad, y.grad
    (Value(data=10.0000, grad=1.0000), 7.0, 2.0)
    >>> (x**2)._op, (x * x).relu()._op
    ('**2', 'ReLU')
    """

    __slots__ = ()
    _op = op_labels({"pow": "**{y}", "relu": "ReLU", "sigmoid": "sigmoid"})

    def __repr__(self) -> str:
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"


class Neuron(nn.Neuron):
    """tanh(w · x + b), or w · x + b with ``nonlin=False``; weights uniform in [-1, 1]."""

    value_class = Value

    def __init__(self, n_in: int, nonlin: bool = True) -> None:
        super().__init__(n_in, "tanh" if nonlin else "linear")
        self.nonlin = nonlin


class Layer(nn.Layer):
    """``n_out`` Neurons on the same inputs; one output comes back as a bare Value.

    Keyword arguments (``nonlin``) go to every Neuron.
    """

    def __init__(self, n_in: int, n_out: int, **kwargs) -> None:
        self.neurons = [Neuron(n_in, **kwargs) for _ in range(n_out)]

    def __call__(self, x: Sequence[_Value | float]) -> _Value | list[_Value]:
        out = super().__call__(x)
        return out[0] if len(out) == 1 else out


class MLP(nn.MLP):
    """``MLP(n_in, n_outs)``: tanh in every layer but the last, which is linear."""

    def __init__(self, n_in: int, n_outs: Sequence[int]) -> None:
        sizes = [n_in, *n_outs]
        last = len(n_outs) - 1
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlin=i != last) for i in range(len(n_outs))]
        self.nin, self.nouts = n_in, list(n_outs)
        self.activations = ["tanh"] * last + ["linear"]

    def __call__(self, x: Sequence[_Value | float]) -> _Value | list[_Value]:
        for layer in self.layers:
            x = layer(x)
        return x
