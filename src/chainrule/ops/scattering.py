"""Writing by index: scatter, scatter_add and scatter_reduce (values written or reduced into a
copy of x at positions along a dim), and what is composed of them and of `where`: the
index_* writes (index_reduce too), index_put with accumulate, masked_fill and masked_scatter.

Reading by index (gather, index_select) is in `chainrule.ops.indexing`, by mask in
`chainrule.ops.selecting`; writing by flat position (put) in `chainrule.ops.flat_indexing`.
Every op here returns a new tensor; the in-place forms (``x.scatter_(...)``) are Tensor
methods that write the result back through `chainrule.inplace`.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from ..observe import replayed_whole
from ..op import LINEAR, Op
from . import indexing
from .arguments import check_dim
from .elementwise import where_row
from .indexing import (
    INT32_OR_64,
    INT64,
    along,
    check_along,
    fitted_shape,
    index_array,
    index_backward_row,
    index_row,
)

__all__ = [
    "index_add", "index_copy", "index_fill", "index_put", "index_reduce", "masked_fill",
    "masked_scatter", "scatter", "scatter_add", "scatter_reduce",
]  # fmt: skip

REDUCES = ("sum", "prod", "mean", "amax", "amin")
#: Spellings PyTorch's scatter_reduce also takes (undocumented; its backward refuses them).
_ALIASES = {"max": "amax", "min": "amin"}


def _copy(x) -> np.ndarray:
    return np.array(x, order="C")  # a writable copy, whatever x's strides (or broadcast)


def _scatter(x, src, dim: int, index: np.ndarray):
    out = _copy(x)
    out[along(index, dim)] = src  # repeated positions: the last write wins
    return out


def _scatter_add(x, src, dim: int, index: np.ndarray):
    out = _copy(x)
    np.add.at(out, along(index, dim), src)
    return out


@replayed_whole(pure=True)  # a compiled step reads the new indices each time
def _untouched(shape: tuple, dim: int, index: np.ndarray) -> np.ndarray:
    """True where scatter writes nothing (where x keeps its gradient)."""
    keep = np.ones(shape, bool)
    keep[along(index, dim)] = False
    return keep


def _gather(g, dim: int, index: np.ndarray):
    return xp.run(index_row, g, index=along(index, dim))


def _identity(reduce: str, dtype: np.dtype):
    """The value a reduction starts from when x itself is left out (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}  # fmt: skip


def _counts(shape: tuple, dim: int, index: np.ndarray, include_self: bool) -> np.ndarray:
    """How many values reduce into each position (at least 1): mean divides by it."""
    counts = np.full(shape, 1 if include_self else 0, np.int64)
    np.add.at(counts, along(index, dim), 1)
    return np.maximum(counts, 1)


def _scatter_reduce(x, src, dim, index, reduce, include_self):
    out = _copy(x)
    grid = along(index, dim)
    if not include_self:
        out[grid] = _identity(reduce, out.dtype)
    _UFUNCS[reduce].at(out, grid, src)
    if reduce == "mean":
        counts = _counts(out.shape, dim, index, include_self).astype(out.dtype)
        out = out / counts if out.dtype.kind == "f" else out // counts
    return out


def _data(v) -> np.ndarray:
    return v._array if isinstance(v, Tensor) else v


@replayed_whole(pure=True)  # a compiled step works it out from the new values at each call
def _weights(x, src, out, dim, index, reduce, include_self) -> tuple:
    """(∂out/∂x, ∂out[along]/∂src), elementwise, for the reduces that are linear wherever
    they are differentiable (sum, mean, amax, amin): constants, so rules built on them have
    the right second derivative (zero). Ties of amax/amin share the gradient equally, as in
    PyTorch."""
    x, src, out = _data(x), _data(src), _data(out)
    grid = along(index, dim)
    if reduce in ("sum", "mean"):
        share = 1 / _counts(x.shape, dim, index, include_self) if reduce == "mean" else 1
        w_x = np.broadcast_to(share, x.shape).astype(x.dtype)
        w_src = np.broadcast_to(w_x[grid], src.shape).astype(x.dtype)
    else:
        # As PyTorch: x's own value counts among the tied even with include_self=False
        # (its share then goes nowhere: the zeros below).
        won_x = x == out
        won_src = src == out[grid]
        winners = won_x.astype(x.dtype)
        np.add.at(winners, grid, won_src)
        winners = np.maximum(winners, 1)
        w_x, w_src = won_x / winners, won_src / winners[grid]
    if not include_self:
        w_x = np.array(w_x)
        w_x[grid] = 0
    return w_x.astype(x.dtype, copy=False), w_src.astype(x.dtype, copy=False)


def _reduce_vjp_x(g, x, src, out, dim, index, reduce, include_self):
    if reduce != "prod":
        return g * _weights(x, src, out, dim, index, reduce, include_self)[0]
    # out / x, with each zero of x replaced by 1 in both (then out there is the product of
    # the others): right for zeros, and made of ops, so it differentiates again.
    nonzero_x = xp.where(x == 0, 1 + 0 * x, x)
    others = xp.run(scatter_reduce_row, nonzero_x, src, dim=dim, index=index, reduce="prod",
                    include_self=include_self)  # fmt: skip
    grad = g * others / nonzero_x
    return grad if include_self else grad * _untouched(np.shape(x), dim, index)


def _reduce_vjp_src(g, x, src, out, dim, index, reduce, include_self):
    if reduce != "prod":
        return _gather(g, dim, index) * _weights(x, src, out, dim, index, reduce, include_self)[1]
    # out / src where src is not 0; where it is the only 0 reducing into its position, the
    # product of the others (that src replaced by 1); where there are more zeros, 0.
    is_zero, alone = _zeros_of(src, np.shape(x), dim, index)
    if isinstance(src, Tensor) and (is_zero & ~alone).any():
        # Recorded for a second derivative: d/d src_j of a zero src_i's gradient (0 here) is
        # the product of the rest, which this formula cannot give; refused, as in PyTorch.
        raise GraphError(
            "scatter_reduce: the second derivative for src is not supported where more than "
            "one zero of src reduces into the same position (PyTorch refuses it too)"
        )
    ones_for_alone = xp.where(alone, 1 + 0 * src, src)
    others = xp.run(scatter_reduce_row, x, ones_for_alone, dim=dim, index=index, reduce="prod",
                    include_self=include_self)  # fmt: skip
    divided = _gather(g * out, dim, index) / xp.where(is_zero, 1 + 0 * src, src)
    return xp.where(alone, _gather(g * others, dim, index), divided)


@replayed_whole(pure=True)  # a compiled step works it out from the new values at each call
def _zeros_of(src, x_shape: tuple, dim: int, index: np.ndarray) -> tuple:
    """(where src is 0, where it is the only 0 of src that reduces into its position)."""
    is_zero = _data(src) == 0
    zeros_there = np.zeros(x_shape)
    np.add.at(zeros_there, along(index, dim), is_zero)
    return is_zero, is_zero & (zeros_there[along(index, dim)] == 1)


def _reduce_jvp_x(dx, x, src, out, dim, index, reduce, include_self):
    return dx * _reduce_weights_any(x, src, out, dim, index, reduce, include_self)[0]


def _reduce_jvp_src(dsrc, x, src, out, dim, index, reduce, include_self):
    w_src = _reduce_weights_any(x, src, out, dim, index, reduce, include_self)[1]
    return _scatter_add(np.zeros_like(out), dsrc * w_src, dim, index)


def _reduce_weights_any(x, src, out, dim, index, reduce, include_self) -> tuple:
    """`_weights`, and for prod the same partials from the VJP rules (on arrays)."""
    if reduce != "prod":
        return _weights(x, src, out, dim, index, reduce, include_self)
    # Each element feeds one position, so the VJP of all-ones g is its own partial.
    ones = np.ones_like(out)
    return (_reduce_vjp_x(ones, x, src, out, dim, index, reduce, include_self),
            _reduce_vjp_src(ones, x, src, out, dim, index, reduce, include_self))  # fmt: skip


def _batch_along(op: Op, values, batched, params):
    """scatter rows under vmap: every operand gets the batch dim (unbatched ones broadcast),
    the index a leading batch dim too, and dim moves one place right."""
    size = next(v.shape[0] for v, b in zip(values, batched) if b)
    values = [v if b else v.unsqueeze(0).expand(size, *v.shape) for v, b in zip(values, batched)]
    index = params["index"]
    index = np.broadcast_to(index, (size, *index.shape))
    return op(*values, **{**params, "dim": params["dim"] + 1, "index": index})


# fmt: off
scatter_row = Op("scatter", _scatter, inputs=("x", "src"), jvp=LINEAR, kind="indexing",
                 batch=_batch_along,
                 doc="A copy of x with src written at index along dim (src has index's shape).",
                 vjp=(lambda g, x_shape, dim, index: g * _untouched(x_shape, dim, index),
                      lambda g, dim, index: _gather(g, dim, index)))
scatter_add_row = Op("scatter_add", _scatter_add, inputs=("x", "src"), jvp=LINEAR,
                     kind="indexing", batch=_batch_along,
                     doc="A copy of x with src added at index along dim (repeats accumulate).",
                     vjp=(lambda g: g, lambda g, dim, index: _gather(g, dim, index)))
scatter_reduce_row = Op(
    "scatter_reduce", _scatter_reduce, inputs=("x", "src"), kind="indexing", batch=_batch_along,
    doc="A copy of x with src reduced (sum, prod, mean, amax, amin) into index along dim.",
    vjp=(_reduce_vjp_x, _reduce_vjp_src), jvp=(_reduce_jvp_x, _reduce_jvp_src))
# fmt: on


# Checking arguments.


def _tensor(value, like, op: str, what: str = "value") -> Tensor:
    """A number or 0-d tensor ``value`` as a 0-d Tensor of like's dtype (a constant Tensor, so
    forward mode gives it a zero tangent)."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise ShapeError(
                f"{op}: {what} must be a number or a 0-dimensional tensor, got shape "
                f"{fmt_shape(value.shape)}"
            )
        return value if value.dtype == like.dtype else value.to(like.dtype)
    if not isinstance(value, (numbers.Number, np.generic)):
        raise DTypeError(f"{op}: {what} must be a number or a tensor, got {type(value).__name__}")
    return Tensor._make(np.asarray(value, dtype=like.dtype))


def _source(src, index: np.ndarray, like, op: str):
    """src cut to index's shape (PyTorch reads only that corner of a larger src)."""
    if not isinstance(src, Tensor):
        return Tensor._make(np.broadcast_to(np.asarray(src, like.dtype), index.shape).copy())
    if src.shape != index.shape:
        src = src[tuple(slice(0, n) for n in index.shape)]
    return src if src.dtype == like.dtype else src.to(like.dtype)


def _check_src(src, input, op: str, what: str = "src"):
    """src's shape, once src is known to be a tensor of input's dtype (PyTorch casts neither)."""
    if not isinstance(src, Tensor):
        raise DTypeError(f"{op}: {what} must be a tensor, got {type(src).__name__}")
    if src.dtype != input.dtype:
        raise DTypeError(
            f"{op}: {what} must have the input's dtype, got {what} {fmt_dtype(src.dtype)} and "
            f"input {fmt_dtype(input.dtype)}; convert one with .to()"
        )
    return src.shape


# Scatter.


def scatter(input, dim: int, index, src=None, *, value=None, reduce: str | None = None):
    """A copy of ``input`` with ``src`` (a tensor, or a number ``value``) written at ``index``
    along ``dim``: ``out[index[i][j]][j] = src[i][j]`` for dim 0.

    ``index`` has input's number of dims and is no larger than src; only that corner of src
    is read. Where index repeats a position, which write wins is up to the backend (here the
    last, as NumPy; PyTorch leaves it undefined). ``reduce="add"`` or ``"multiply"`` is the
    older spelling of `scatter_reduce`'s sum and prod.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).scatter(1, cr.tensor([[2], [0]]), cr.tensor([[1.0], [2.0]]))
    tensor([[0., 0., 1.],
            [2., 0., 0.]])
    """
    if (src is None) == (value is None):
        raise DTypeError("scatter: give exactly one of src (a tensor) and value (a number)")
    src = value if src is None else src
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise DomainError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
        if not isinstance(src, Tensor):
            src = _source(src, index_array(index, "scatter"), input, "scatter")
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    src_shape = _check_src(src, input, "scatter") if isinstance(src, Tensor) else None
    dim, index = check_along("scatter", np.shape(input), dim, index, src_shape)
    return scatter_row(input, _source(src, index, input, "scatter"), dim=dim, index=index)


def scatter_add(input, dim: int, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim``; repeated positions
    accumulate. The gradient to src is ``gather`` of the output's gradient.

    >>> import chainrule as cr
    >>> cr.zeros(3).scatter_add(0, cr.tensor([0, 2, 0]), cr.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.])
    """
    dim, index = check_along("scatter_add", np.shape(input), dim, index,
                             _check_src(src, input, "scatter_add"))  # fmt: skip
    return scatter_add_row(input, _source(src, index, input, "scatter_add"), dim=dim, index=index)


def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True):
    """A copy of ``input`` where each position that ``index`` names along ``dim`` holds the
    ``reduce`` ("sum", "prod", "mean", "amax", "amin") of the src values sent there, and of
    input's own value when ``include_self``.

    Gradients as PyTorch's: amax/amin ties share equally (with include_self=False, a tie
    with input's own value still takes a share, which is lost, as in PyTorch); mean divides
    by the count; prod is right with zeros in input or src. A mean of integers rounds down.
    index is int64 or int32, src has input's dtype; "max" and "min" are taken for "amax" and
    "amin", as PyTorch's forward takes them (its backward refuses them).

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 5.0])
    >>> x.scatter_reduce(0, cr.tensor([0, 0, 1]), cr.tensor([3.0, 2.0, 4.0]), "amax")
    tensor([3., 5.])
    """
    if not isinstance(reduce, str):
        raise DTypeError(f"scatter_reduce: reduce must be a string, got {type(reduce).__name__}")
    reduce = _ALIASES.get(reduce, reduce)
    if reduce not in REDUCES:
        raise DomainError(f"scatter_reduce: reduce must be one of {REDUCES}, got {reduce!r}")
    if not isinstance(include_self, (bool, np.bool_)):
        raise DTypeError(
            f"scatter_reduce: include_self must be a bool, got {type(include_self).__name__}"
        )
    dim, index = check_along("scatter_reduce", np.shape(input), dim, index,
                             _check_src(src, input, "scatter_reduce"))  # fmt: skip
    src = _source(src, index, input, "scatter_reduce")
    return scatter_reduce_row(input, src, dim=dim, index=index, reduce=reduce,
                              include_self=bool(include_self))  # fmt: skip


# Writing along a dim by a 1-D index: scatter with the index spread over source's shape.


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def _spread(op: str, input, dim: int, index, source, dtypes: tuple = INT32_OR_64):
    """(dim, index) for the index_* ops: a 1-D index (of one of ``dtypes``) spread over
    source's shape (source of input's dtype) along dim, so that ``index_add(x, dim, i, s)`` is
    ``scatter_add(x, dim, spread i, s)``."""
    shape = np.shape(input)
    index = index_array(index, op, dtypes=dtypes)
    if source is not None:
        _check_src(source, input, op, "source")
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 0-d or 1-d, got shape {fmt_shape(index.shape)}")
    if not shape:
        raise ShapeError(f"{op}: input must have at least one dimension")
    dim = check_dim(dim, len(shape), op)
    index = index.reshape(-1)
    wanted = shape[:dim] + (len(index),) + shape[dim + 1 :]
    if source is not None and tuple(source.shape) != wanted:
        raise ShapeError(
            f"{op}: source of shape {fmt_shape(source.shape)} does not fit: with {len(index)} "
            f"indices along dim {dim} of input {fmt_shape(shape)} it must be {fmt_shape(wanted)}"
        )
    indexing.check_in_range(index, shape[dim], dim, op)
    spread = np.broadcast_to(index.reshape([-1 if d == dim else 1 for d in range(len(shape))]),
                             wanted)  # fmt: skip
    return dim, np.ascontiguousarray(spread)


def index_add(input, dim: int, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at the positions ``index`` (1-D) along
    ``dim``; repeated indices accumulate.

    >>> import chainrule as cr
    >>> cr.zeros(3, 2).index_add(0, cr.tensor([2, 0, 2]), cr.ones(3, 2))
    tensor([[1., 1.],
            [0., 0.],
            [2., 2.]])
    """
    dim, spread = _spread("index_add", input, dim, index, source)
    source = source if alpha == 1 else source * alpha
    return scatter_add_row(input, _source(source, spread, input, "index_add"), dim=dim,
                           index=spread)  # fmt: skip


def index_copy(input, dim: int, index, source):
    """A copy of ``input`` with the slices of ``source`` written at positions ``index`` (1-D)
    along ``dim``.

    >>> import chainrule as cr
    >>> cr.zeros(3).index_copy(0, cr.tensor([2, 0]), cr.tensor([5.0, 6.0]))
    tensor([6., 0., 5.])
    """
    dim, spread = _spread("index_copy", input, dim, index, source, INT64)
    return scatter_row(input, _source(source, spread, input, "index_copy"), dim=dim,
                       index=spread)  # fmt: skip


def index_fill(input, dim: int, index, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor, which gets the gradient
    of what it fills) at positions ``index`` (1-D) along ``dim``.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).index_fill(1, cr.tensor([0, 2]), -1.0)
    tensor([[-1.,  0., -1.],
            [-1.,  0., -1.]])
    """
    dim, spread = _spread("index_fill", input, dim, index, None, INT64)
    mask = _filled(spread, np.shape(input), dim)
    return where_row(mask, _tensor(value, input, "index_fill"), input)


@replayed_whole(pure=True)  # a compiled step reads the new indices at each call
def _filled(spread: np.ndarray, shape: tuple, dim: int) -> np.ndarray:
    """index_fill's mask: True at the positions ``spread`` names along ``dim``, shaped to
    broadcast against ``shape``."""
    mask = np.zeros(shape[dim], bool)
    mask[spread.reshape(-1)] = True
    return mask.reshape([-1 if d == dim else 1 for d in range(len(shape))])


def index_put(input, indices, values, accumulate: bool = False):
    """A copy of ``input`` with ``values`` (broadcast) at ``input[indices]``, where
    ``indices`` is a tuple of index tensors (PyTorch's signature); with ``accumulate``
    added there instead, repeated positions adding up. ``x[i] = v`` is the in-place form.

    >>> import chainrule as cr
    >>> i = (cr.tensor([0, 0, 2]),)
    >>> cr.zeros(3).index_put(i, cr.tensor(1.0), accumulate=True)
    tensor([2., 0., 1.])
    """
    if not isinstance(indices, (tuple, list)):
        raise DTypeError(
            f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}"
        )
    index = tuple(indices)
    if not accumulate:
        return indexing.index_put(input, index, values)
    index = indexing._normalize_index(np.shape(input), index, "index_put")
    if any(i is None or isinstance(i, slice) or i is Ellipsis for i in index):
        raise DTypeError("index_put: indices must be tensors (no slices or None)")
    # Masks as the positions they select, so np.add.at reads them as integer arrays.
    index = tuple(p for i in index for p in (np.nonzero(i) if i.dtype == bool else (i,)))
    target = np.broadcast_to(np.zeros((), np.int8), np.shape(input))[index].shape
    values = values if isinstance(values, Tensor) else Tensor._make(np.asarray(values))
    given = fitted_shape(values.shape, target)
    if given is None:
        raise ShapeError(
            f"index_put: cannot accumulate values of shape {fmt_shape(values.shape)} into "
            f"input[indices] of shape {fmt_shape(target)}"
        )
    values = values.reshape(given)
    values = values.to(input.dtype).expand(target)
    return input + index_backward_row(values, shape=np.shape(input), index=index)


# Writing where a mask holds.


def _mask(mask, op: str):
    """A bool mask: a Tensor as it is (its values are not read: under vmap it may be
    batched), anything else as an array."""
    mask = mask if isinstance(mask, Tensor) else np.asarray(mask)
    if mask.dtype != bool:
        raise DTypeError(f"{op}: mask must be a bool tensor, got {fmt_dtype(mask.dtype)}")
    return mask


def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) where the bool ``mask``
    holds; mask broadcasts against input. The gradient to input is g where mask is False.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, -2.0, 3.0])
    >>> x.masked_fill(x < 0, 0.0)
    tensor([1., 0., 3.])
    """
    mask = _mask(mask, "masked_fill")
    try:
        np.broadcast_shapes(mask.shape, np.shape(input))
    except ValueError:
        raise ShapeError(
            f"masked_fill: mask of shape {fmt_shape(mask.shape)} does not broadcast with "
            f"input of shape {fmt_shape(np.shape(input))}"
        ) from None
    return where_row(mask, _tensor(value, input, "masked_fill"), input)


def masked_scatter(input, mask, source):
    """A copy of ``input`` where the bool ``mask`` holds filled with source's elements in
    row-major order (source needs at least as many elements as mask has True entries).

    >>> import chainrule as cr
    >>> cr.zeros(4).masked_scatter(cr.tensor([True, False, False, True]), cr.tensor([1.0, 2.0]))
    tensor([1., 0., 0., 2.])
    """
    mask = _data(_mask(mask, "masked_scatter"))
    shape = np.shape(input)
    try:
        common = np.broadcast_shapes(mask.shape, shape)
    except ValueError:
        raise ShapeError(
            f"masked_scatter: mask of shape {fmt_shape(mask.shape)} does not broadcast with "
            f"input of shape {fmt_shape(shape)}"
        ) from None
    positions = np.flatnonzero(np.broadcast_to(mask, common))
    if not isinstance(source, Tensor) or source.numel() < len(positions):
        raise ShapeError(
            f"masked_scatter: source needs at least {len(positions)} elements (one per True "
            f"in mask), got {getattr(source, 'shape', type(source).__name__)}"
        )
    flat = (input.expand(common) if common != shape else input).reshape(-1)
    values = source.reshape(-1)[: len(positions)]
    return scatter_row(flat, values.to(flat.dtype), dim=0, index=positions).reshape(common)


# A reduction of source slices into input's, by index along a dim.


INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim: int, index, source, reduce: str, *, include_self: bool = True):
    """A copy of ``input`` where each slice that ``index`` (1-D) names along ``dim`` holds
    the ``reduce`` ("prod", "mean", "amax", "amin") of the source slices sent there, and of
    its own value when ``include_self``. Gradients as `scatter_reduce`'s (ties share).

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 5.0])
    >>> x.index_reduce(0, cr.tensor([0, 0, 1]), cr.tensor([3.0, 2.0, 4.0]), "amax")
    tensor([3., 5.])
    """
    if reduce not in INDEX_REDUCES:
        raise DomainError(f"index_reduce: reduce must be one of {INDEX_REDUCES}, got {reduce!r}")
    if not isinstance(source, Tensor):
        raise DTypeError(f"index_reduce: source must be a tensor, got {type(source).__name__}")
    dim, spread = _spread("index_reduce", input, dim, index, source)
    source = source if source.dtype == input.dtype else source.to(input.dtype)
    return scatter_reduce_row(input, source, dim=dim, index=spread, reduce=reduce,
                              include_self=bool(include_self))  # fmt: skip
