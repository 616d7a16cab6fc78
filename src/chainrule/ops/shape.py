"""Shape rows: reshape, permute, expand, squeeze, indexing, cat, stack, split, pad, gather.

All of them only move or copy elements, so each JVP is the op itself (`LINEAR`).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import xp
from ..errors import ShapeError, fmt_shape
from ..function import LINEAR, Op

__all__ = ["expand", "permute", "reshape", "transpose"]


def _reshape_check(x, shape):
    shape = tuple(shape)
    known = int(np.prod([n for n in shape if n != -1]))
    size = np.size(x)
    if (
        shape.count(-1) > 1
        or (-1 not in shape and known != size)
        or (-1 in shape and (known == 0 or size % known))
    ):
        raise ShapeError(
            f"reshape: cannot reshape a tensor of shape {fmt_shape(np.shape(x))} "
            f"({size} elements) into {shape}"
        )


# fmt: off
reshape_row = Op("reshape", lambda x, shape: np.reshape(x, shape),
                 vjp=(lambda g, x_shape: xp.reshape(g, x_shape),), jvp=LINEAR, view=True,
                 check=_reshape_check)
permute_row = Op("permute", lambda x, dims: np.transpose(x, dims),
                 vjp=(lambda g, dims: xp.permute(g, tuple(np.argsort(dims))),), jvp=LINEAR,
                 view=True)
expand_row = Op("expand", lambda x, shape: np.broadcast_to(x, shape),
                vjp=(lambda g: g,), jvp=LINEAR, view=True)  # the engine sums g back
# fmt: on


def reshape(x, shape):
    """The same elements in ``shape`` (one entry may be -1)."""
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    return reshape_row(x, shape=tuple(int(n) for n in shape))


def permute(x, dims):
    """Reorder dimensions."""
    ndim = np.ndim(x.data)
    dims = tuple(int(d) % max(ndim, 1) for d in dims)
    if sorted(dims) != list(range(ndim)):
        raise ShapeError(f"permute: {dims} is not a permutation of {ndim} dimensions")
    return permute_row(x, dims=dims)


def transpose(x, dim0: int, dim1: int):
    """Swap dimensions dim0 and dim1."""
    dims = list(range(np.ndim(x.data)))
    dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute_row(x, dims=tuple(dims))


def expand(x, shape):
    """Broadcast ``x`` to ``shape``; -1 keeps that dimension's size."""
    shape = tuple(shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: cannot expand shape {fmt_shape(x.shape)} to {shape}")
    shape = tuple(x.shape[i - lead] if n == -1 else n for i, n in enumerate(shape))
    return expand_row(x, shape=shape)
