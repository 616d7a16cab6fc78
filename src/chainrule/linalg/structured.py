"""Structured matrices: built from blocks or vectors (``block_diag``, ``diagflat``, the
Vandermonde matrices of ``vander`` and ``linalg.vander``) and read along the diagonal
(``trace``, ``linalg.diagonal``). The diagonal views themselves (``diagonal``, ``diag``,
``tril``, ``triu``) are rows in `chainrule.ops.strided`.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..ops import reduce
from ..ops.cumulative import cumprod
from ..ops.indexing import getitem
from ..ops.joining import _vectors
from ..ops.padding import pad_row
from ..ops.shape import cat, flip, reshape
from ..ops.strided import diag, diagonal

__all__ = ["block_diag", "diagflat", "trace", "vander"]


def block_diag(*tensors):
    """The tensors (0-d, 1-D as a row, or 2-D) as blocks along the diagonal of a matrix of
    zeros; the dtype is the tensors' promoted dtype.

    >>> import chainrule as cr
    >>> cr.block_diag(cr.tensor([[1, 2]]), cr.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise DTypeError(f"block_diag: expects tensors, got {type(t).__name__} at position {i}")
        if t.ndim > 2:
            raise ShapeError(f"block_diag: tensors must have at most 2 dimensions, got shape "
                             f"{fmt_shape(t.shape)} at position {i}")  # fmt: skip
        blocks.append(t if t.ndim == 2 else reshape(t, (1, -1)))
    if not blocks:
        return Tensor._make(np.zeros((1, 0), np.float32))
    width = sum(b.shape[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:  # each block padded with zeros left and right to the full width
        after = width - before - b.shape[1]
        rows.append(pad_row(b, widths=((0, 0), (before, after)), value=0))
        before += b.shape[1]
    return cat(rows, 0)


def diagflat(input, offset: int = 0):
    """The flattened input on diagonal ``offset`` of a square matrix of zeros.

    >>> import chainrule as cr
    >>> cr.diagflat(cr.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    return diag(reshape(input, (-1,)), offset)


def _powers(x, N: int, increasing: bool):
    """(..., n, N): the powers 0 .. N-1 of each element of x (..., n), as a cumulative
    product (PyTorch's way, whose gradient is right at 0); integers and bools as int64."""
    if x.dtype.kind in "biu":
        x = x.long()
    column = x.unsqueeze(-1)
    ones = Tensor._make(np.ones(np.shape(column), x.dtype))
    if N == 0:
        return getitem(column, (Ellipsis, slice(0, 0)))
    # x joins even for N = 1 (as an empty block), so the result requires grad as in PyTorch.
    out = cumprod(cat([ones, column.expand(*np.shape(x), N - 1)], -1), -1)
    return out if increasing else flip(out, -1)


def vander(x, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix of a 1-D tensor: column j is ``x ** (N - 1 - j)`` (``x ** j``
    with increasing); N defaults to len(x). Integer inputs give int64.

    >>> import chainrule as cr
    >>> cr.vander(cr.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    (x,) = _vectors("vander", (x,))
    N = x.shape[0] if N is None else N
    if not isinstance(N, numbers.Integral) or N < 0:
        raise DomainError(f"vander: N must be a non-negative int, got {N!r}")
    return _powers(x, int(N), increasing)


def linalg_vander(x, *, N: int | None = None):
    """``chainrule.linalg.vander``: the Vandermonde matrices of the last dim of x, increasing
    powers 0 .. N-1 (N > 1, default x.shape[-1]), shape (..., n, N).

    >>> import chainrule as cr
    >>> cr.linalg.vander(cr.tensor([1.0, 2.0]), N=3)
    tensor([[1., 1., 1.],
            [1., 2., 4.]])
    """
    if np.ndim(x) < 1:
        raise ShapeError("linalg.vander: x must have at least 1 dimension, got a 0-d tensor")
    N = x.shape[-1] if N is None else N
    if not isinstance(N, numbers.Integral) or N <= 1:
        raise DomainError(f"linalg.vander: N must be an int greater than 1, got {N!r}")
    return _powers(x, int(N), increasing=True)


def trace(input):
    """The sum of a matrix's main diagonal (``Tensor.trace``, ``torch.trace``); integer
    matrices give int64, as the sum does. (The graph's trace table is
    `chainrule.trace_table`.)

    >>> import chainrule as cr
    >>> trace(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    if input.ndim != 2:
        raise ShapeError(f"trace: expects a matrix (2-D), got shape {fmt_shape(input.shape)}")
    return reduce.sum(diagonal(input))


def linalg_diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """The diagonal of each matrix (``offset`` > 0 above the main one, < 0 below), as
    `chainrule.diagonal` with the last two dims by default.

    >>> import chainrule as cr
    >>> cr.linalg.diagonal(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1).tolist()
    [2.0]
    """
    return diagonal(A, offset, dim1, dim2)
