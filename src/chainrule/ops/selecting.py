"""Selection whose size depends on the values: the positions of non-zero elements
(`nonzero`, `argwhere`, and `nonzero_static`, which cuts or pads them to a given number), the
elements a mask picks (`masked_select`) and elements repeated by counts (`repeat_interleave`).
Each reads its mask or counts, then indexes with the index row.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Loops, Op
from .arguments import check_dim
from .indexing import index_array, index_row

__all__ = ["argwhere", "masked_select", "nonzero", "nonzero_static", "repeat_interleave"]

# fmt: off
# The positions of the non-zero elements: how many there are depends on the values.
nonzero_row = Op("nonzero", np.argwhere, vjp=None, kind="indexing",
                 batch=Loops("each example has its own number of non-zero elements"),
                 doc="The (n, ndim) int64 positions of x's n non-zero elements, row-major.")
# fmt: on


def masked_select(input, mask):
    """The elements of ``input`` where the bool ``mask`` holds (the two broadcast against each
    other), as a 1-D copy in row-major order.

    >>> import chainrule as cr
    >>> x = cr.tensor([[1, -2], [-3, 4]])
    >>> x.masked_select(x > 0)
    tensor([1, 4])
    """
    mask = np.asarray(mask._array if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise DTypeError(f"masked_select: mask must be a bool tensor, got {fmt_dtype(mask.dtype)}")
    shape = np.shape(input)
    try:
        common = np.broadcast_shapes(shape, mask.shape)
    except ValueError:
        raise ShapeError(
            f"masked_select: mask of shape {fmt_shape(mask.shape)} does not broadcast with "
            f"input of shape {fmt_shape(shape)}"
        ) from None
    common = common or (1,)  # two 0-d tensors: at most one element
    if len(shape) < len(common):
        shape = (1,) * (len(common) - len(shape)) + shape
        input = input.reshape(shape)
    # Positions in the broadcast shape, mapped back into input (size-1 dims read entry 0).
    where = np.nonzero(np.broadcast_to(mask, common))
    return index_row(input, index=tuple(p if n != 1 else p * 0 for p, n in zip(where, shape)))


def repeat_interleave(input, repeats=None, dim: int | None = None, *, output_size=None):
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place: an int, or
    a tensor of one count per element; with dim None, of the flattened input. Given only a
    tensor of counts, the positions 0, 1, ... each repeated that many times.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).repeat_interleave(2), cr.repeat_interleave(cr.tensor([2, 1]))
    (tensor([1, 1, 2, 2]), tensor([0, 0, 1]))
    """
    if repeats is None:  # repeat_interleave(counts)
        counts = index_array(input, "repeat_interleave", ndim=1)
        if counts.size and counts.min() < 0:
            raise ShapeError(f"repeat_interleave: repeats must be non-negative, got {counts}")
        return Tensor._make(np.repeat(np.arange(len(counts)), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    shape = np.shape(input)
    dim = check_dim(dim, len(shape), "repeat_interleave")
    n = shape[dim] if shape else 1
    counts = index_array(repeats, "repeat_interleave")
    if counts.ndim > 1 or counts.size not in (1, n) or (counts.size and counts.min() < 0):
        raise ShapeError(
            f"repeat_interleave: repeats must be a non-negative int or one count per element "
            f"({n} along dim {dim}), got shape {fmt_shape(counts.shape)}"
        )
    positions = np.repeat(np.arange(n), counts.reshape(-1))
    if output_size is not None and output_size != len(positions):
        raise ShapeError(
            f"repeat_interleave: output_size {output_size} != {len(positions)} repeated elements"
        )
    return index_row(input, index=(slice(None),) * dim + (positions,))


def nonzero(input, *, as_tuple: bool = False):
    """The positions of the non-zero elements: an (n, ndim) int64 tensor, or with as_tuple a
    tuple of ndim 1-D tensors (one per dim, as NumPy's nonzero; a 0-d input counts as 1-d).

    >>> import chainrule as cr
    >>> cr.tensor([[1, 0], [0, 2]]).nonzero()
    tensor([[0, 0],
            [1, 1]])
    """
    out = nonzero_row(input)
    if not as_tuple:
        return out
    if out.shape[1] == 0:  # a 0-d input: one position per non-zero element, as in PyTorch
        return (Tensor._make(np.zeros(out.shape[0], np.int64)),)
    return tuple(Tensor._make(np.ascontiguousarray(out._array[:, d])) for d in range(out.shape[1]))


def argwhere(input):
    """The (n, ndim) int64 positions of the non-zero elements (`nonzero`).

    >>> import chainrule as cr
    >>> cr.argwhere(cr.tensor([0, 3, 5]))
    tensor([[1],
            [2]])
    """
    return nonzero_row(input)


# The first positions of the non-zero elements, as many as asked: a size that does not depend on
# the values, so vmap runs it batched (unlike nonzero).


def _nonzero_static(x, size: int, fill_value: int, leading: int = 0):
    # ``leading`` batch dims (vmap) in front: each example's first ``size`` positions.
    lead, shape = x.shape[:leading], x.shape[leading:]
    examples = x.reshape(-1, *shape)
    out = np.full((len(examples), size, len(shape)), fill_value, np.int64)
    for out_i, example in zip(out, examples):
        positions = np.argwhere(example)[:size]
        out_i[: len(positions)] = positions
    return out.reshape(*lead, size, len(shape))


def _batch_leading(op: Op, values, batched, params):
    return op(values[0], **{**params, "leading": params["leading"] + 1})


# fmt: off
nonzero_static_row = Op(
    "nonzero_static", _nonzero_static, vjp=None, inputs=("x",), kind="indexing",
    batch=_batch_leading,
    doc="The first size positions (int64) of the non-zero elements, padded with fill_value.")
# fmt: on


def nonzero_static(input, *, size: int, fill_value: int = -1):
    """The positions of the first ``size`` non-zero elements, (size, ndim) int64: cut when
    there are more, padded with rows of ``fill_value`` when fewer. Its shape does not depend
    on the values, so vmap runs it batched (unlike `nonzero`).

    >>> import chainrule as cr
    >>> cr.tensor([0, 3, 5]).nonzero_static(size=3)
    tensor([[ 1],
            [ 2],
            [-1]])
    """
    if not isinstance(size, numbers.Integral) or size < 0:
        raise DomainError(f"nonzero_static: size must be a non-negative int, got {size!r}")
    return nonzero_static_row(input, size=int(size), fill_value=int(fill_value), leading=0)
