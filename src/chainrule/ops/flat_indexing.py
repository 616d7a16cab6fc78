"""Flat indexing: reading (``take``) and writing (``put``) a tensor's elements by their
positions in the flattened tensor, and turning flat positions into coordinates
(``unravel_index``). Reading and writing by index along a dim are in `chainrule.ops.indexing`
and `chainrule.ops.scattering`.
"""

from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from ..errors import DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op
from .arguments import check_sizes
from .indexing import getitem, index_array, index_row
from .scattering import scatter_add_row, scatter_row
from .shape import reshape

__all__ = ["put", "take", "unravel_index"]


# The row: coordinates from flat positions, without gradient.


def _unravel_index(indices, shape: tuple):
    # Coordinates last, so a batch dim in front of indices stays in front (vmap).
    size = math.prod(shape)
    coords = np.unravel_index(np.asarray(indices) % size, shape)
    return np.stack(coords, axis=-1).astype(np.int64)


def _check_unravel(indices, shape: tuple) -> None:
    size = math.prod(shape)
    if indices.size and (indices.min() < -size or indices.max() >= size):
        bad = int(indices.min() if indices.min() < -size else indices.max())
        raise OutOfRangeError(
            f"unravel_index: index {bad} is out of range for shape {fmt_shape(shape)} "
            f"({size} elements)"
        )


def _batch_same(op: Op, values, batched, params):
    return op(values[0], **params)


# fmt: off
unravel_index_row = Op(
    "unravel_index", _unravel_index, vjp=None, inputs=("indices",), kind="indexing",
    batch=_batch_same, check=_check_unravel,
    doc="The coordinates (int64, last dim) in a tensor of shape of each flat index.")
# fmt: on


# Public functions.


def _flat_index(op: str, index, n: int) -> np.ndarray:
    """index (any shape) as non-negative positions into n elements (negatives from the end)."""
    index = index_array(index, op)
    if index.size and (index.min() < -n or index.max() >= n):
        bad = int(index.min() if index.min() < -n else index.max())
        raise OutOfRangeError(f"{op}: index {bad} is out of range for a tensor of {n} elements")
    return index % n if n else index


def take(input, index):
    """The elements of the flattened input at ``index`` (an integer tensor; negatives count
    from the end), in index's shape; the backward adds up repeated indices.

    >>> import chainrule as cr
    >>> cr.tensor([[1, 2], [3, 4]]).take(cr.tensor([[3, 0]]))
    tensor([[4, 1]])
    """
    flat = reshape(input, (-1,))
    return index_row(flat, index=(_flat_index("take", index, flat.shape[0]),))


def put(input, index, source, accumulate: bool = False):
    """A copy of ``input`` with source's elements written (added, with accumulate) at the
    positions ``index`` of the flattened input; source has index's number of elements and
    input's dtype. The gradient to source is the output's gradient at index (as PyTorch's,
    also for a position written twice without accumulate, where the last write wins here).

    >>> import chainrule as cr
    >>> cr.zeros(2, 2).put(cr.tensor([3, 0]), cr.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 1.]])
    """
    if not isinstance(source, Tensor):
        raise DTypeError(f"put: source must be a tensor, got {type(source).__name__}")
    flat = reshape(input, (-1,))
    index = _flat_index("put", index, flat.shape[0]).reshape(-1)
    if source.numel() != index.size:
        raise ShapeError(
            f"put: source of shape {fmt_shape(source.shape)} has {source.numel()} elements, "
            f"index has {index.size}; they must match"
        )
    if source.dtype != input.dtype:
        raise DTypeError(f"put: source ({fmt_dtype(source.dtype)}) must have input's dtype "
                         f"({fmt_dtype(input.dtype)})")  # fmt: skip
    row = scatter_add_row if accumulate else scatter_row
    return reshape(row(flat, reshape(source, (-1,)), dim=0, index=index), np.shape(input))


def unravel_index(indices, shape) -> tuple:
    """The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor per
    dim of shape, each of indices' shape. Negative indices count from the end; unlike
    PyTorch (which wraps them silently), indices out of range are an error.

    >>> import chainrule as cr
    >>> cr.unravel_index(cr.tensor([4, 5, -1]), (2, 3))
    (tensor([1, 1, 1]), tensor([1, 2, 2]))
    """
    shape = check_sizes(shape, "unravel_index", "shape")
    indices = indices if isinstance(indices, Tensor) else Tensor._make(np.asarray(indices))
    if indices.dtype.kind not in "iu":
        raise DTypeError(
            f"unravel_index: indices must be an integer tensor, got {fmt_dtype(indices.dtype)}"
        )
    if not shape:
        return ()
    coords = unravel_index_row(indices, shape=shape)
    return tuple(getitem(coords, (Ellipsis, d)) for d in range(len(shape)))
