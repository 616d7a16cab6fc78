"""Views made by strides alone: a diagonal (and its adjoint, diag_embed), Tensor.unfold's
sliding windows, and contiguous; with what is built on the diagonal: diag, and the
triangles tril, triu and their indices.

A diagonal of an array is a view whose stride is the sum of two of the array's strides.
NumPy's own ``np.diagonal`` is read-only, so the rows here build the view with
``as_strided``, and an in-place write to ``x.diagonal()`` lands in x, as in PyTorch.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import xp
from .._tensor import Tensor
from ..dtypes import int64
from ..errors import ShapeError, fmt_shape
from ..op import LINEAR, Op
from .arguments import check_dim
from .elementwise import where_row

__all__ = ["diag", "diag_embed", "diagonal", "tril", "tril_indices", "triu", "triu_indices"]


def _diagonal(x, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The diagonal of x over (dim1, dim2) as the last dim: a writable view when x is."""
    shape, strides = x.shape, x.strides
    n1, n2 = shape[dim1], shape[dim2]
    n = max(min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2), 0)
    start = [0] * x.ndim
    if n:
        start[dim2 if offset >= 0 else dim1] = abs(offset)
    first = x[tuple(slice(s, None) for s in start)]  # starts at the diagonal's first element
    kept = [d for d in range(x.ndim) if d not in (dim1, dim2)]
    return as_strided(first, [shape[d] for d in kept] + [n],
                      [strides[d] for d in kept] + [strides[dim1] + strides[dim2]])  # fmt: skip


def _diag_embed(g, shape: tuple, offset: int, dim1: int, dim2: int) -> np.ndarray:
    out = np.zeros(shape, g.dtype)
    _diagonal(out, offset, dim1, dim2)[...] = g
    return out


def _windows(x, dim: int, size: int, step: int) -> np.ndarray:
    """Windows of ``size`` every ``step`` along dim, window index at dim, window last; a view,
    read-only where windows overlap (a write there would land twice, which PyTorch refuses)."""
    n = (x.shape[dim] - size) // step + 1
    shape = x.shape[:dim] + (n,) + x.shape[dim + 1 :] + (size,)
    strides = list(x.strides) + [x.strides[dim]]
    strides[dim] *= step
    return as_strided(x, shape, strides, writeable=step >= size and x.flags.writeable)


def _windows_backward(g, shape: tuple, dim: int, size: int, step: int) -> np.ndarray:
    """Each window's gradient added back where it came from (overlaps add)."""
    out = np.zeros(shape, g.dtype)
    n = g.shape[dim]
    for k in range(size):  # element k of every window: positions k, k + step, ...
        part = (slice(None),) * dim + (slice(k, k + step * (n - 1) + 1, step),)
        out[part] += g[..., k]
    return out


# Batching rules (see `Op`): dims move one place right, shapes get the batch size in front.


def _batch_dims(op: Op, values, batched, params):
    moved = {k: v + 1 for k, v in params.items() if k in ("dim1", "dim2", "dim")}
    if "shape" in params:
        moved["shape"] = (values[0].shape[0], *params["shape"])
    return op(values[0], **{**params, **moved})


# fmt: off
diagonal_row = Op("diagonal", _diagonal, jvp=LINEAR, view=True, kind="shape", batch=_batch_dims,
                  doc="The diagonal of x over dims (dim1, dim2), as its last dim (a view).",
                  vjp=(lambda g, x_shape, offset, dim1, dim2: xp.run(
                      diag_embed_row, g, shape=x_shape, offset=offset, dim1=dim1, dim2=dim2),))
diag_embed_row = Op("diag_embed", _diag_embed, jvp=LINEAR, kind="shape", batch=_batch_dims,
                    doc="Zeros of shape with x written on the diagonal over (dim1, dim2).",
                    vjp=(lambda g, offset, dim1, dim2: xp.run(
                        diagonal_row, g, offset=offset, dim1=dim1, dim2=dim2),))
windows_row = Op("windows", _windows, jvp=LINEAR, view=True, kind="shape", batch=_batch_dims,
                 doc="Tensor.unfold: windows of size every step along dim, as a new last dim.",
                 vjp=(lambda g, x_shape, dim, size, step: xp.run(
                     windows_backward_row, g, shape=x_shape, dim=dim, size=size, step=step),))
windows_backward_row = Op("windows_backward", _windows_backward, jvp=LINEAR, kind="shape",
                          batch=_batch_dims,
                          doc="Each window of x added back into zeros of shape (overlaps add).",
                          vjp=(lambda g, dim, size, step: xp.run(
                              windows_row, g, dim=dim, size=size, step=step),))
contiguous_row = Op("contiguous", lambda x: np.array(x, order="C"), vjp=(lambda g: g,),
                    jvp=LINEAR, kind="shape", batch=lambda op, values, batched, params:
                    op(values[0]), doc="A row-major (C-contiguous) copy of x.")
# fmt: on


def _two_dims(op: str, ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    dim1, dim2 = check_dim(dim1, ndim, op), check_dim(dim2, ndim, op)
    if dim1 == dim2:
        raise ShapeError(f"{op}: dim1 and dim2 must differ, both are {dim1}")
    return dim1, dim2


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1):
    """The diagonal over dims ``dim1`` and ``dim2`` (above it for offset > 0, below for < 0),
    as the last dim of a view: writing into it writes into input.

    >>> import chainrule as cr
    >>> x = cr.arange(9).reshape(3, 3)
    >>> x.diagonal(), x.diagonal(1), x.diagonal(-1)
    (tensor([0, 4, 8]), tensor([1, 5]), tensor([3, 7]))
    """
    shape = np.shape(input)
    if len(shape) < 2:
        raise ShapeError(f"diagonal: needs at least 2 dimensions, got shape {fmt_shape(shape)}")
    dim1, dim2 = _two_dims("diagonal", len(shape), dim1, dim2)
    return diagonal_row(input, offset=int(offset), dim1=dim1, dim2=dim2)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """A tensor whose diagonals over (dim1, dim2) of the output hold input's last dim, and
    zeros elsewhere: the adjoint of `diagonal`.

    >>> import chainrule as cr
    >>> cr.diag_embed(cr.tensor([[1, 2], [3, 4]])).shape
    (2, 2, 2)
    """
    shape = np.shape(input)
    if not shape:
        raise ShapeError("diag_embed: needs at least 1 dimension, got a 0-d tensor")
    ndim = len(shape) + 1
    dim1, dim2 = _two_dims("diag_embed", ndim, dim1, dim2)
    side = shape[-1] + abs(int(offset))
    rest = iter(shape[:-1])
    out_shape = tuple(side if d in (dim1, dim2) else next(rest) for d in range(ndim))
    return diag_embed_row(input, shape=out_shape, offset=int(offset), dim1=dim1, dim2=dim2)


def diag(input, diagonal: int = 0):
    """A 1-D input as a square matrix with it on diagonal ``diagonal``; of a matrix, that
    diagonal as a 1-D copy.

    >>> import chainrule as cr
    >>> cr.diag(cr.tensor([1, 2])), cr.diag(cr.tensor([[1, 2], [3, 4]]), 1)
    (tensor([[1, 0],
            [0, 2]]), tensor([2]))
    """
    shape = np.shape(input)
    if len(shape) == 1:
        return diag_embed(input, diagonal, 0, 1)
    if len(shape) == 2:
        return diagonal_row(input, offset=int(diagonal), dim1=0, dim2=1) * 1  # a copy
    raise ShapeError(f"diag: expects a 1-D or 2-D tensor, got shape {fmt_shape(shape)}")


def _triangle(op: str, input, diagonal: int, lower: bool):
    shape = np.shape(input)
    if len(shape) < 2:
        raise ShapeError(f"{op}: needs at least 2 dimensions, got shape {fmt_shape(shape)}")
    rows, cols = shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool)
    if not lower:
        keep = ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    return where_row(keep, input, np.zeros((), input.dtype))


def tril(input, diagonal: int = 0):
    """The lower triangle of the last two dims (on and below diagonal ``diagonal``), zeros
    above; the gradient is masked the same way.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.]])
    """
    return _triangle("tril", input, int(diagonal), lower=True)


def triu(input, diagonal: int = 0):
    """The upper triangle of the last two dims (on and above diagonal ``diagonal``), zeros
    below.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    return _triangle("triu", input, int(diagonal), lower=False)


def _indices(op: str, row: int, col: int, offset: int, lower: bool, dtype) -> Tensor:
    for name, n in (("row", row), ("col", col)):
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ShapeError(f"{op}: {name} must be a non-negative int, got {n!r}")
    keep = np.tri(row, col, offset, dtype=bool) if lower else ~np.tri(row, col, offset - 1,
                                                                          dtype=bool)  # fmt: skip
    return Tensor._make(np.stack(np.nonzero(keep)).astype(dtype or int64))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None) -> Tensor:
    """The (row, col) positions of the lower triangle of a row x col matrix, as a (2, N)
    int64 tensor in row-major order.

    >>> import chainrule as cr
    >>> cr.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    return _indices("tril_indices", row, col, int(offset), True, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None) -> Tensor:
    """The (row, col) positions of the upper triangle of a row x col matrix, as a (2, N)
    int64 tensor in row-major order.

    >>> import chainrule as cr
    >>> cr.triu_indices(2, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    return _indices("triu_indices", row, col, int(offset), False, dtype)


def unfold(input, dimension: int, size: int, step: int):
    """Tensor.unfold: every window of ``size`` elements along ``dimension``, ``step`` apart,
    as a view whose new last dim runs along the window (overlapping windows: read-only).

    >>> import chainrule as cr
    >>> cr.arange(5).unfold(0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    if not np.shape(input):  # a 0-d tensor unfolds as one element, as in PyTorch
        return unfold(input.reshape(1), dimension, size, step).reshape(size)
    shape = np.shape(input)
    dim = check_dim(dimension, len(shape), "unfold")
    if not isinstance(size, numbers.Integral) or not 0 <= size <= shape[dim]:
        raise ShapeError(f"unfold: size {size!r} must be in [0, {shape[dim]}] (dim {dim})")
    if not isinstance(step, numbers.Integral) or step <= 0:
        raise ShapeError(f"unfold: step must be a positive int, got {step!r}")
    return windows_row(input, dim=dim, size=int(size), step=int(step))


def contiguous(input):
    """input itself when its memory is row-major (C-contiguous), else a row-major copy.

    >>> import chainrule as cr
    >>> x = cr.zeros(2, 3)
    >>> x.contiguous() is x, x.t().contiguous().is_contiguous()
    (True, True)
    """
    data = input._array
    if isinstance(data, np.ndarray) and data.flags.c_contiguous:
        return input
    return contiguous_row(input)
