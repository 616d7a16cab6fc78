"""BareBonesML (Building an Autograd Engine from Scratch): its `Tensor`, `Function`, `Add`,
`Mul` and `Pow`, as thin subclasses of chainrule's, so the graph and backward pass are
chainrule's own. What the text leaves out (broadcast gradients) the engine does.

>>> from chainrule.texts.barebones import Tensor
>>> a = Tensor(3.0, requires_grad=True)
>>> b = Tensor(4.0, requires_grad=True)
>>> loss = a * b + a**2.0
>>> loss.backward()
>>> print(loss, loss._creator.__class__.__name__, a.grad, b.grad)
Tensor(data=21.0, requires_grad=True) Add 10.0 3.0
"""

from __future__ import annotations

import numpy as np

from .. import _tensor, function, observe
from ..errors import DTypeError, GraphError, ShapeError, fmt_shape

__all__ = ["Add", "Function", "Mul", "Pow", "Tensor"]


class Tensor(_tensor.Tensor):
    """chainrule's `Tensor` with the text's constructor, printing, ``_creator`` and ``.grad``.

    Data that is not an ndarray becomes a float32 array (ints too); an ndarray is kept as
    it is, not copied. ``+``, ``*`` and ``**`` run `Add`, `Mul` and `Pow`, and ``-`` and ``/``
    are built from them (a - b = a + b * -1, a / b = a * b ** -1); every other chainrule
    method works as well and returns a plain chainrule Tensor.

    >>> c = Tensor(3.0, requires_grad=True) * Tensor(4)
    >>> print(c)
    Tensor(data=12.0, requires_grad=True)
    >>> c.dtype, c._creator.__class__.__name__
    (dtype('float32'), 'Mul')
    """

    __slots__ = ()

    def __init__(self, data, requires_grad: bool = False, _creator: Function | None = None):
        if _creator is not None:
            raise GraphError(
                "Tensor: _creator is set when Function.apply records an op in the graph; "
                "call YourFunction.apply(*tensors) instead of building its result yourself"
            )
        data = data if isinstance(data, np.ndarray) else np.asarray(data, np.float32)
        super().__init__(data, requires_grad)
        self.data = data  # the text's Tensor holds the array it was given, not a copy

    def __repr__(self) -> str:
        return f"Tensor(data={self.data}, requires_grad={self.requires_grad})"

    @property
    def data(self) -> np.ndarray:
        """The text's ``data``: the NumPy array itself (chainrule's own ``Tensor.data`` is a
        detached Tensor, as PyTorch's). Assigning replaces the array."""
        if observe.current is not None:  # NumPy work on it is out of a recording's sight
            observe.current.values_read("the text's Tensor.data")
        return self._array

    @data.setter
    def data(self, value: np.ndarray) -> None:
        if observe.current is not None:
            observe.current.data_assigned(self)
        self._array = value

    @property
    def _creator(self) -> Function | None:
        """The `Function` that made this tensor (chainrule's ``grad_fn``), None for a leaf.

        As in PyTorch, a result that needs no gradient records no op, so it has none either.
        """
        return self.grad_fn

    @property
    def grad(self) -> np.ndarray | None:
        """The gradient backward accumulated here, as a NumPy array (None before backward).

        It is the array of chainrule's stored gradient, not a copy; assigning an array (or
        None) replaces that gradient, checked for this tensor's shape and dtype.
        """
        return None if self._grad is None else self._grad._array

    @grad.setter
    def grad(self, value: np.ndarray | None) -> None:
        value = None if value is None else _tensor.Tensor._make(np.asarray(value))
        _tensor.Tensor.grad.fset(self, value)

    def backward(self, grad: np.ndarray | None = None, retain_graph: bool | None = None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of every leaf.

        A tensor of more than one element needs ``grad``, an array of its shape, as the seed.
        Unlike the text, which returns quietly, backward on a tensor that does not require
        grad raises chainrule's GraphError: a forgotten ``requires_grad=True`` would otherwise
        show up later as a ``.grad`` that is None.
        """
        if grad is None and self.data.size != 1 and self.requires_grad:
            raise ShapeError(
                f"backward: output has shape {fmt_shape(self.shape)}; pass grad= (an array "
                "of that shape) or reduce to a single element first"
            )
        if self.grad_fn is not None:
            self.retain_grad()  # the text's output keeps its seed: L.grad is array(1.)
        super().backward(grad, retain_graph)

    def __add__(self, other) -> Tensor:
        return Add.apply(self, _as_tensor(other))

    def __radd__(self, other) -> Tensor:  # other + self
        return Add.apply(_as_tensor(other), self)

    def __mul__(self, other) -> Tensor:
        return Mul.apply(self, _as_tensor(other))

    def __rmul__(self, other) -> Tensor:  # other * self
        return Mul.apply(_as_tensor(other), self)

    # The operators the text leaves to its reader, built from its three Functions the way
    # it suggests: a - b = a + b * -1, -a = a * -1, a / b = a * b ** -1.

    def __neg__(self) -> Tensor:
        return Mul.apply(self, Tensor(-1.0))

    def __sub__(self, other) -> Tensor:
        return Add.apply(self, -_as_tensor(other))

    def __rsub__(self, other) -> Tensor:  # other - self
        return Add.apply(_as_tensor(other), -self)

    def __truediv__(self, other) -> Tensor:
        return Mul.apply(self, Pow.apply(_as_tensor(other), power=-1))

    def __rtruediv__(self, other) -> Tensor:  # other / self
        return Mul.apply(_as_tensor(other), Pow.apply(self, power=-1))

    def __pow__(self, power) -> Tensor:
        if not isinstance(power, (int, float)):
            raise DTypeError(
                f"pow: the exponent must be an int or a float, got {type(power).__name__}"
            )
        return Pow.apply(self, power=power)


def _as_tensor(x) -> _tensor.Tensor:
    """A chainrule Tensor as it is; anything else as this module's (float32) Tensor."""
    return x if isinstance(x, _tensor.Tensor) else Tensor(x)


class Function(function.Function):
    """chainrule's `Function` with the text's ``parents``; its results are this module's
    `Tensor`, and ``save_for_backward`` adds to what was saved, as the text's does.

    Subclass it with ``forward`` and ``backward`` on arrays and call ``apply`` on Tensors:

    >>> class Exp(Function):
    ...     def forward(self, x):
    ...         out = np.exp(x)
    ...         self.save_for_backward(out)
    ...         return out
    ...     def backward(self, grad):
    ...         (out,) = self.saved_tensors
    ...         return grad * out
    >>> x = Tensor(0.0, requires_grad=True)
    >>> y = Exp.apply(x)
    >>> y.backward()
    >>> x.grad, y._creator.parents == (x,)
    (array(1., dtype=float32), True)
    """

    def __init__(self, *tensors: _tensor.Tensor) -> None:
        super().__init__()
        self.parents = tuple(tensors)  # the inputs, as the text's Function keeps them

    def save_for_backward(self, *arrays: np.ndarray) -> None:
        """Keep arrays for ``backward``, after any saved before (``self.saved_tensors``)."""
        super().save_for_backward(*self.saved_tensors, *arrays)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op on Tensors and record it; returns this module's Tensor (or a tuple)."""
        out = super().apply(*[_as_tensor(a) for a in args], **kwargs)
        for result in out if isinstance(out, tuple) else (out,):
            if result._grad_fn is not None:
                result._grad_fn.parents = args
        return out


class Add(Function):
    """a + b, elementwise; each input's gradient is ``grad`` itself (the engine sums it back
    to the input's shape where the input was broadcast)."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (grad,) * 2  # d(a + b)/da = d(a + b)/db = 1


class Mul(Function):
    """a * b, elementwise; saves both inputs, since each one's derivative is the other."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        self.save_for_backward(a, b)
        return a * b

    def backward(self, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.saved_tensors
        return grad * b, grad * a  # d(ab)/da = b, d(ab)/db = a


class Pow(Function):
    """base ** power for a number ``power`` (``Pow.apply(t, power=2.0)``), elementwise."""

    def forward(self, base: np.ndarray, *, power: float) -> np.ndarray:
        self.power = power  # a number, not an input: it gets no gradient
        self.save_for_backward(base)
        return base**power

    def backward(self, grad: np.ndarray) -> np.ndarray:
        (base,) = self.saved_tensors
        return grad * self.power * base ** (self.power - 1)
