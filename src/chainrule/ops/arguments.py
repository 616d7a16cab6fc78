"""Checking the arguments the op families share: a tensor (`as_tensor`) and its shape
(`shape_of`), one dim, several, and sizes."""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ..errors import DTypeError, OutOfRangeError, ShapeError


def as_tensor(x, op: str) -> Tensor:
    """``x`` as a Tensor (an array or a number becomes one without a gradient)."""
    if isinstance(x, Tensor):
        return x
    try:
        return Tensor._make(np.asarray(x))
    except (TypeError, ValueError):
        raise DTypeError(f"{op}: expected a tensor, got {type(x).__name__}") from None


def shape_of(x) -> tuple:
    """The shape of a Tensor or array (one example's inside vmap)."""
    return tuple(x._array.shape if isinstance(x, Tensor) else np.shape(x))


def check_dim(dim, ndim: int, op: str, extra: int = 0) -> int:
    """``dim`` as a non-negative int below ndim + extra (a 0-d tensor takes dim 0 and -1)."""
    bound = ndim + extra or 1
    if type(dim) is int and -bound <= dim < bound:  # the common case, before the ABC checks
        return dim % bound
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise DTypeError(f"{op}: dim must be an int, got {dim!r}")
    if not -bound <= dim < bound:
        raise OutOfRangeError(
            f"{op}: dim {dim} is out of range [{-bound}, {bound - 1}] for a tensor with "
            f"{ndim} dimensions"
        )
    return int(dim) % bound


def check_dims(dims, ndim: int, op: str) -> tuple[int, ...]:
    """An int or a sequence of dims as distinct non-negative ints."""
    given = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    out = tuple(check_dim(d, ndim, op) for d in given)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dims {given} name a dimension more than once")
    return out


def check_sizes(sizes, op: str, what: str) -> tuple[int, ...]:
    """Non-negative ints, or a clear error naming ``what`` they are."""
    sizes = (sizes,) if isinstance(sizes, numbers.Integral) else tuple(sizes)
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in sizes):
        raise ShapeError(f"{op}: {what} must be non-negative integers, got {sizes}")
    return tuple(int(n) for n in sizes)
