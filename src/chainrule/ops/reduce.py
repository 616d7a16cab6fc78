"""Reduction rows: sum, mean, var, std, prod, max/min, argmax, logsumexp, norm, softmax.

``dim`` follows PyTorch: an int, a tuple of ints, or None for every dimension; negative
dims count from the end. Rows receive ``dim`` normalised to a sorted tuple of positive ints.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import xp
from ..errors import ShapeError
from ..function import LINEAR, Op

__all__ = ["mean", "sum"]


def normalize_dims(ndim: int, dim, op: str) -> tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative ints, checked against ``ndim``."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    out = []
    for d in dims:
        if not isinstance(d, numbers.Integral):
            raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {d!r}")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise ShapeError(f"{op}: dim {d} is out of range for a tensor with {ndim} dimensions")
        out.append(int(d) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {dim} repeats a dimension")
    return tuple(sorted(out))


def keepdim_shape(x_shape: tuple, dim: tuple) -> tuple:
    """``x_shape`` with the reduced dimensions set to 1."""
    return tuple(1 if i in dim else n for i, n in enumerate(x_shape))


def expand_back(g, x_shape: tuple, dim: tuple, keepdim: bool):
    """Broadcast a reduced gradient back to the input's shape (arrays or Tensors)."""
    if not keepdim and x_shape:
        g = xp.reshape(g, keepdim_shape(x_shape, dim))
    return xp.expand(g, x_shape)


def _count(x_shape: tuple, dim: tuple) -> int:
    return int(np.prod([x_shape[d] for d in dim])) if x_shape else 1


# fmt: off
sum_row = Op(
    "sum", lambda x, dim, keepdim: np.sum(x, axis=dim, keepdims=keepdim),
    vjp=(lambda g, x_shape, dim, keepdim: expand_back(g, x_shape, dim, keepdim),),
    jvp=LINEAR)
mean_row = Op(
    "mean", lambda x, dim, keepdim: np.mean(x, axis=dim, keepdims=keepdim),
    vjp=(lambda g, x_shape, dim, keepdim:
         expand_back(g, x_shape, dim, keepdim) * (1 / _count(x_shape, dim)),),
    jvp=LINEAR)
# fmt: on


def sum(x, dim=None, keepdim: bool = False):
    """Sum over ``dim`` (int, tuple, or None for all)."""
    return sum_row(x, dim=normalize_dims(np.ndim(_data(x)), dim, "sum"), keepdim=keepdim)


def mean(x, dim=None, keepdim: bool = False):
    """Mean over ``dim``."""
    return mean_row(x, dim=normalize_dims(np.ndim(_data(x)), dim, "mean"), keepdim=keepdim)


def _data(x):
    return getattr(x, "data", x)
