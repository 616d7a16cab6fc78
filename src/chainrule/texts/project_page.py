"""The autograd project page: its `Value`, `Module`, `LinearLayer`, `softmax`,
`cross_entropy_loss` (on logits) and `train`.

``from chainrule.texts.project_page import Value, Module, LinearLayer, softmax,
cross_entropy_loss, train`` in place of the page's code runs its classifier. `Value` takes
``Value(data, _children)`` and prints with Python's own float formatting; `LinearLayer(2, 4)`
draws its weights from `random`, row by row; `cross_entropy_loss` applies `softmax` itself.

>>> w1, w2, x1, x2 = Value(0.2), Value(0.4), Value(-0.4), Value(0.5)
>>> f = 1 / (1 + (-(w1 * x1 + w2 * x2)).exp()) + 0.5 * (w1**2 + w2**2)
>>> f.backward()
>>> [f"{v.grad:.4f}" for v in (w1, w2, x1, x2)]
['0.1004', '0.5246', '0.0498', '0.0996']
"""

from __future__ import annotations

from ..scalar import nn
from ..scalar.nn import Module, cross_entropy_loss, softmax, train
from ..scalar.value import Value as _Value

__all__ = ["LinearLayer", "Module", "Value", "cross_entropy_loss", "softmax", "train"]


class Value(_Value):
    """chainrule's `Value` printed as the page prints one: ``Value(data=4.0, grad=1.0)``.

    >>> a = Value(2.0); b = a * a; b.backward()
    >>> b, a
    (Value(data=4.0, grad=1.0), Value(data=2.0, grad=4.0))
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


class LinearLayer(nn.LinearLayer):
    """x @ W + b on a list of input rows: W is nin x nout, uniform in [-1, 1]; b is zero."""

    value_class = Value
