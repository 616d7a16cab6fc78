"""Joining and broadcasting several tensors, composed from the shape rows: NumPy-style
stacks (hstack, vstack, dstack, column_stack), concat, broadcast_tensors and meshgrid.

The rows themselves (cat, stack, expand, reshape) are in `chainrule.ops.shape`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..errors import DomainError, ShapeError, fmt_shape
from .shape import cat, expand, reshape

__all__ = [
    "broadcast_shapes", "broadcast_tensors", "column_stack", "concat", "concatenate", "dstack",
    "hstack", "meshgrid", "vstack",
]  # fmt: skip


def concat(tensors: Sequence, dim: int = 0):
    """`cat` under its other PyTorch name.

    >>> import chainrule as cr
    >>> cr.concat([cr.zeros(1, 2), cr.ones(1, 2)], dim=1).shape
    (1, 4)
    """
    return cat(tensors, dim)


def concatenate(tensors: Sequence, dim: int = 0):
    """`cat` under NumPy's name (PyTorch has it too)."""
    return cat(tensors, dim)


def _at_least(x, ndim: int):
    """x with dims of size 1 added to reach ndim, as NumPy's atleast_1d/2d/3d place them."""
    shape = np.shape(x)
    if len(shape) >= ndim:
        return x
    if ndim == 3:
        shape = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    else:
        shape = (1,) * (ndim - len(shape)) + shape
    return reshape(x, shape)


def hstack(tensors: Sequence):
    """The tensors joined along dim 1 (dim 0 for 1-D tensors), as NumPy's hstack.

    >>> import chainrule as cr
    >>> cr.hstack([cr.tensor([1, 2]), cr.tensor([3])])
    tensor([1, 2, 3])
    """
    tensors = [_at_least(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence):
    """The tensors, each made at least 2-D (1-D ones as rows), joined along dim 0.

    >>> import chainrule as cr
    >>> cr.vstack([cr.tensor([1, 2]), cr.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return cat([_at_least(t, 2) for t in tensors], 0)


def dstack(tensors: Sequence):
    """The tensors, each made at least 3-D, joined along dim 2 (depth).

    >>> import chainrule as cr
    >>> cr.dstack([cr.tensor([1, 2]), cr.tensor([3, 4])]).shape
    (1, 2, 2)
    """
    return cat([_at_least(t, 3) for t in tensors], 2)


def column_stack(tensors: Sequence):
    """The tensors as columns side by side: 0-d and 1-D ones become columns, the others are
    joined along dim 1.

    >>> import chainrule as cr
    >>> cr.column_stack([cr.tensor([1, 2]), cr.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    columns = [reshape(t, (-1, 1)) if np.ndim(t) <= 1 else t for t in tensors]
    return cat(columns, 1)


def broadcast_shapes(*shapes) -> tuple:
    """The shape that tensors of ``shapes`` broadcast to.

    >>> import chainrule as cr
    >>> cr.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        shown = ", ".join(fmt_shape(s) for s in shapes)
        raise ShapeError(f"broadcast_shapes: shapes {shown} do not broadcast together") from None


def broadcast_tensors(*tensors) -> tuple:
    """The tensors expanded to their common broadcast shape (read-only views).

    >>> import chainrule as cr
    >>> [t.shape for t in cr.broadcast_tensors(cr.zeros(2, 1), cr.zeros(3))]
    [(2, 3), (2, 3)]
    """
    shape = broadcast_shapes(*(np.shape(t) for t in tensors))
    return tuple(t if np.shape(t) == shape else expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D (or 0-d) tensors: output k varies along dim k with
    ``indexing="ij"`` (matrix order); ``"xy"`` swaps the first two dims (Cartesian order).

    PyTorch's default is "ij" (it warns when indexing is not given); so is ours, silently.

    >>> import chainrule as cr
    >>> x, y = cr.meshgrid(cr.tensor([1, 2, 3]), cr.tensor([4, 5]))
    >>> x.shape, y[0].tolist()
    ((3, 2), [4, 5])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise DomainError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    if not tensors:
        raise ShapeError("meshgrid: expects at least one tensor")
    for t in tensors:
        if np.ndim(t) > 1:
            raise ShapeError(f"meshgrid: expects 0-d or 1-D tensors, got shape "
                             f"{fmt_shape(np.shape(t))}")  # fmt: skip
    sizes = [math.prod(np.shape(t)) for t in tensors]
    swap = indexing == "xy" and len(tensors) > 1
    order = list(range(len(tensors)))
    if swap:
        order[0], order[1] = 1, 0
    shape = tuple(sizes[k] for k in order)
    grids = []
    for k, t in enumerate(tensors):
        dim = order.index(k)
        grids.append(expand(reshape(t, [-1 if d == dim else 1 for d in range(len(shape))]), shape))
    return tuple(grids)
