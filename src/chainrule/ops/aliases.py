"""PyTorch's other names for existing ops (absolute, multiply, greater, ger...), the small
functions made of them (divide's rounding modes, fliplr, msort, fill...) and the everyday
factories beside them (scalar_tensor, asarray, the deprecated range).

A plain alias is the op itself (``chainrule.absolute`` runs the ``abs`` row, whose errors
name ``abs``); a function stands where PyTorch's takes more (``subtract``'s ``alpha``).

>>> import chainrule as cr
>>> x = cr.tensor([7.0, -7.0])
>>> cr.divide(x, 2), cr.divide(x, 2, rounding_mode="trunc"), cr.divide(x, 2, rounding_mode="floor")
(tensor([ 3.5000, -3.5000]), tensor([ 3., -3.]), tensor([ 3., -4.]))
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._tensor import Tensor
from ..creation import from_numpy, tensor
from ..dtypes import as_device, as_dtype, get_default_dtype
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op
from ..random import bernoulli, multinomial  # noqa: F401  (Tensor.bernoulli/multinomial call them)
from .elementwise import abs, add, cast, div, ge, gt, le, lt, mul, ne, neg, sub
from .elementwise import fill as fill_row
from .joining import vstack
from .shape import expand, flip, movedim, reshape, transpose
from .sorting import sort

__all__ = [
    "absolute", "asarray", "detach", "divide", "fill", "fliplr", "flipud", "greater",
    "greater_equal", "less", "less_equal", "moveaxis", "msort", "multiply", "negative",
    "not_equal", "positive", "range", "ravel", "row_stack", "scalar_tensor", "subtract",
    "swapdims", "true_divide", "typename",
]  # fmt: skip

# The same ops under PyTorch's other names.
absolute = abs
multiply = mul
true_divide = div
negative = neg
greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne
moveaxis = movedim
swapdims = transpose
row_stack = vstack
# Division rounded: a row, since floor_divide's row has no gradient at all and PyTorch's
# div(rounding_mode=...) has a zero one (its output requires grad).

_ROUNDING_MODES = ("trunc", "floor")


def _divide_rounded(x, y, rounding_mode: str):
    """x / y rounded toward 0 ("trunc") or down ("floor"), as PyTorch: integers stay integers
    (C's division for trunc, Python's // for floor), floats divided by 0 give inf or nan."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if rounding_mode == "floor":
            return np.floor_divide(x, y)
        if np.result_type(x, y).kind == "f":
            return np.trunc(np.divide(x, y))
        floor = np.floor_divide(x, y)
        return floor + ((floor < 0) & (floor * y != x))  # a negative inexact quotient: round up


def _divide_check(x, y, rounding_mode: str) -> None:
    kinds = {np.result_type(v).kind for v in (x, y)}
    if "b" in kinds:
        raise DTypeError(
            f"divide: rounding_mode={rounding_mode!r} takes numbers, not bool tensors; convert "
            "with .long() or .float()"
        )
    if kinds <= {"i", "u"} and np.any(np.asarray(y) == 0):
        raise DomainError("divide: integer division by zero (a divisor is 0)")


divide_row = Op(
    "divide", _divide_rounded,
    vjp=(lambda g: 0 * g, lambda g: 0 * g), jvp=(lambda dx: 0 * dx, lambda dy: 0 * dy),
    kind="elementwise", check=_divide_check,
    doc="x / y rounded toward 0 or down (``rounding_mode``); its gradient is 0, as PyTorch's.",
)  # fmt: skip


def divide(input, other, *, rounding_mode: str | None = None):
    """input / other (true division, as `div`), or its quotient rounded toward zero
    (``rounding_mode="trunc"``) or down (``"floor"``), as ``torch.div``. Rounded, integer
    tensors give integers and the gradient is 0 (not the true quotient's)."""
    if rounding_mode is None:
        return div(input, other)
    if rounding_mode not in _ROUNDING_MODES:
        raise DomainError(
            f"divide: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    return divide_row(input, other, rounding_mode=rounding_mode)


def subtract(input, other, *, alpha=1):
    """input - alpha * other, broadcasting (`sub` with PyTorch's ``alpha``).

    >>> import chainrule as cr
    >>> cr.subtract(cr.tensor([5.0, 6.0]), cr.tensor([1.0, 2.0]), alpha=2)
    tensor([3., 2.])
    """
    return sub(input, other if alpha == 1 else other * alpha)


def positive(input):
    """input itself, as ``torch.positive`` (unary ``+``); bool tensors are refused, as there.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, -2.0])
    >>> cr.positive(x) is x
    True
    """
    if input.dtype.kind == "b":
        raise DTypeError("positive: unary + is not defined for bool tensors")
    return input


# Shapes and orders under their NumPy-style names.


def ravel(input):
    """input's elements in one dimension, row-major (a copy only when they are not laid out
    that way already), as ``torch.ravel``.

    >>> import chainrule as cr
    >>> cr.ravel(cr.tensor([[1, 2], [3, 4]]))
    tensor([1, 2, 3, 4])
    """
    return reshape(input, (-1,))


def fliplr(input):
    """input with dimension 1 reversed (left and right, for a matrix); at least 2-D.

    >>> import chainrule as cr
    >>> cr.fliplr(cr.tensor([[1, 2], [3, 4]]))
    tensor([[2, 1],
            [4, 3]])
    """
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input must be at least 2-D, got shape {fmt_shape(input.shape)}")
    return flip(input, (1,))


def flipud(input):
    """input with dimension 0 reversed (up and down, for a matrix); at least 1-D.

    >>> import chainrule as cr
    >>> cr.flipud(cr.tensor([[1, 2], [3, 4]]))
    tensor([[3, 4],
            [1, 2]])
    """
    if input.ndim < 1:
        raise ShapeError("flipud: input must be at least 1-D, got a 0-d tensor")
    return flip(input, (0,))


def msort(input):
    """input sorted along dimension 0, values only (``sort(input, dim=0).values``).

    >>> import chainrule as cr
    >>> cr.msort(cr.tensor([[3, 1], [1, 2]]))
    tensor([[1, 1],
            [3, 2]])
    """
    return sort(input, dim=0).values


# Copies, detaching and filling.


def detach(input):
    """input's data (shared) without its history, as ``Tensor.detach``."""
    return input.detach()


def fill(input, value):
    """A new tensor of input's shape and dtype holding ``value`` everywhere (a number or a
    0-d tensor), as ``torch.fill``. input gets a zero gradient and a tensor value the sum of
    the output's gradient.

    >>> import chainrule as cr
    >>> cr.fill(cr.zeros(2, dtype=cr.int64), 3.7), cr.fill(cr.zeros(2), cr.tensor(5.0))
    (tensor([3, 3]), tensor([5., 5.]))
    """
    if not isinstance(value, Tensor):
        return fill_row(input, value=value)
    if value.ndim != 0:
        raise ShapeError(
            f"fill: the value must be a number or a 0-d tensor, got shape {fmt_shape(value.shape)}"
        )
    return add(fill_row(input, value=0), expand(cast(value, dtype=input.dtype), input.shape))


def typename(obj, /) -> str:
    """The qualified name of ``obj``'s type, as ``torch.typename``: a tensor's PyTorch type
    name ('torch.FloatTensor', as ``Tensor.type()``), else the module and name of a class or
    function, or of an object's class (builtins by their bare name).

    >>> import chainrule as cr
    >>> cr.typename(cr.zeros(2)), cr.typename(1), cr.typename(cr.nn.Parameter)
    ('torch.FloatTensor', 'int', 'chainrule.nn.module.Parameter')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = getattr(named, "__module__", None) or ""
    name = getattr(named, "__qualname__", None) or named.__name__
    return name if module in ("", "builtins") else f"{module}.{name}"


# Factories PyTorch keeps beside the ops.


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False):
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype``
    (integers and bools too, as ``torch.scalar_tensor``).

    >>> import chainrule as cr
    >>> cr.scalar_tensor(1), cr.scalar_tensor(2, dtype=cr.int64)
    (tensor(1.), tensor(2))
    """
    as_device(device, "scalar_tensor")
    if isinstance(s, Tensor) and s.numel() == 1:
        s = s.item()
    if not isinstance(s, numbers.Real):
        raise DTypeError(f"scalar_tensor: expects a number, got {type(s).__name__}")
    wanted = as_dtype(dtype, "scalar_tensor") or get_default_dtype()
    return tensor(s, dtype=wanted, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None, requires_grad=None):
    """``obj`` as a tensor, sharing memory where it can, as ``torch.asarray``: a Tensor of
    that dtype is itself, a NumPy array shares its memory (float64 stays float64) and Python
    data is copied (floats become the default dtype). ``copy=True`` always copies,
    ``copy=False`` refuses to. ``requires_grad`` None keeps a tensor's own; True makes the
    result require grad (the very tensor given, when it is returned itself).

    >>> import numpy as np, chainrule as cr
    >>> a = np.zeros(2)
    >>> t = cr.asarray(a); a[0] = 5.0; t
    tensor([5., 0.], dtype=float64)
    >>> x = cr.ones(2); cr.asarray(x) is x, cr.asarray(x, copy=True) is x
    (True, False)
    """
    as_device(device, "asarray")
    wanted = as_dtype(dtype, "asarray")
    if isinstance(obj, Tensor):
        out = obj
        if wanted is not None and wanted != obj.dtype:
            _refuse_copy(copy, f"a {fmt_dtype(obj.dtype)} tensor into {fmt_dtype(wanted)}")
            out = obj.to(wanted)
        elif copy:
            out = obj.clone()
    elif isinstance(obj, np.ndarray):
        if wanted is not None and wanted != obj.dtype:
            _refuse_copy(copy, f"a {fmt_dtype(obj.dtype)} array into {fmt_dtype(wanted)}")
        array = obj.astype(wanted or obj.dtype, copy=bool(copy))
        out = from_numpy(array)
    else:
        _refuse_copy(copy, f"{type(obj).__name__} data into a tensor")
        out = tensor(obj, dtype=wanted)
    if requires_grad is not None:
        if requires_grad:
            out.requires_grad_(True)
        elif out.requires_grad:
            out = out.detach()
    return out


def _refuse_copy(copy: bool | None, what: str) -> None:
    if copy is False:
        raise DomainError(f"asarray: copy=False, but turning {what} needs a copy")


# Last: from here on, range is PyTorch's deprecated factory in this module (this module
# uses no builtin range after it).


def range(start, end, step=1, *, dtype=None, device=None, requires_grad: bool = False):
    """start, start + step, ... up to and including ``end``, as the deprecated
    ``torch.range`` (it warns, as PyTorch does; `arange` leaves the end out). The default
    float dtype unless ``dtype``, even for integer arguments.

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     cr.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn(
        "range: torch.range is deprecated, as its end is included unlike Python's range; "
        "use chainrule.arange(start, end + step, step)",
        UserWarning,
        stacklevel=2,
    )
    as_device(device, "range")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise DomainError(f"range: {name} must be a finite number, got {value!r}")
    if step == 0:
        raise DomainError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise DomainError(
            f"range: the bounds {start} and {end} are inconsistent with step {step} (its sign)"
        )
    count = math.floor((end - start) / step) + 1
    values = start + np.arange(count, dtype=np.float64) * step
    wanted = as_dtype(dtype, "range") or get_default_dtype()
    return tensor(values, dtype=wanted, requires_grad=requires_grad)
