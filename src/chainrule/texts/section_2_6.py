"""Section 2.6 (Building Autograd from Scratch): its `Value`, tanh networks and `draw_graph`.

``from chainrule.texts.section_2_6 import Value, Neuron, Layer, MLP, draw_graph`` in place of
the section's definitions runs its programs. `Value` keeps its parents as ``_parents`` and
prints ``Value(data=8.0000, grad=0.0000)``; every Neuron is tanh; a Layer of one Neuron returns
a bare Value; `draw_graph` returns the graph's DOT text.

>>> x, y = Value(2.0), Value(3.0)
>>> z = x * y + x
>>> z.backward()
>>> z.data, x.grad, y.grad
(8.0, 4.0, 2.0)
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import viz
from ..scalar import nn
from ..scalar.value import Value as _Value
from ._scalar import op_labels, parent_set

__all__ = ["MLP", "Layer", "Neuron", "Value", "draw_graph"]


class Value(_Value):
    """chainrule's `Value` with the section's names: ``_parents`` and its own printing.

    >>> x = Value(3.0)
    >>> y = (x**2).sigmoid()
    >>> y._op, y._parents == {y._prev[0]}, x**2
    ('sigmoid', True, Value(data=9.0000, grad=0.0000))
    """

    __slots__ = ()
    _op = op_labels({"pow": "**{y}", "sigmoid": "sigmoid"})
    _parents = parent_set("The Values this one was computed from (a set).")

    def __repr__(self) -> str:
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"


class Neuron(nn.Neuron):
    """tanh(w · x + b) with weights drawn uniform in [-1, 1] from `random`."""

    value_class = Value

    def __init__(self, n_inputs: int) -> None:
        super().__init__(n_inputs, "tanh")


class Layer(nn.Layer):
    """``n_outputs`` tanh Neurons on the same inputs; one output comes back as a bare Value."""

    def __init__(self, n_inputs: int, n_outputs: int) -> None:
        self.neurons = [Neuron(n_inputs) for _ in range(n_outputs)]

    def __call__(self, x: Sequence[_Value | float]) -> _Value | list[_Value]:
        out = super().__call__(x)
        return out[0] if len(out) == 1 else out


class MLP(nn.MLP):
    """``MLP(n_inputs, layer_sizes)``: tanh Layers in sequence, the last one included."""

    def __init__(self, n_inputs: int, layer_sizes: Sequence[int]) -> None:
        sizes = [n_inputs, *layer_sizes]
        self.layers = [Layer(sizes[i], sizes[i + 1]) for i in range(len(layer_sizes))]
        self.nin, self.nouts = n_inputs, list(layer_sizes)
        self.activations = ["tanh"] * len(layer_sizes)

    def __call__(self, x: Sequence[_Value | float]) -> _Value | list[_Value]:
        for layer in self.layers:
            x = layer(x)
        return x


def draw_graph(root: _Value) -> str:
    """The DOT text of the graph that computed ``root``: boxes with data and grad, op circles.

    Paste it into any Graphviz viewer, or call `chainrule.draw_graph` for a picture.

    >>> x = Value(2.0); y = x * x; y.backward()
    >>> print(draw_graph(y))  # doctest: +ELLIPSIS
    digraph {
    ...
    """
    return viz.draw_graph(root, format=None).source
