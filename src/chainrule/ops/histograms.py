"""Histograms: histogram (of all elements) and histogramdd (of points in D dimensions) with
their bin edges, and the counts without edges, histc (equal bins over a range) and bincount
(how often each integer occurs). No gradient, as in PyTorch.

histogram and histogramdd are two rows each: one finds equal-width bin edges from the values'
range (`histogram_edges`), one counts (`histogram`, `histogramdd`). Both take a ``keep`` count
of leading dims that are apart (vmap's batch dim), so they run batched under vmap (histc too).
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Loops, Op
from .arguments import as_tensor
from .picking import with_batch
from .shape import cat

__all__ = ["bincount", "histc", "histogram", "histogramdd"]


def _linspace(low, high, steps: int, dtype) -> np.ndarray:
    """``steps`` points from low to high (arrays, one per row), computed in ``dtype`` as
    PyTorch's linspace defines them: from the start for the first half, from the end for the
    second, so both ends are exact. (PyTorch's vectorised loop computes whole SIMD chunks from
    one end, so an edge may differ from its in the last bit, depending on the CPU.)"""
    low, high = np.asarray(low, dtype)[..., None], np.asarray(high, dtype)[..., None]
    step = (high - low) / dtype.type(steps - 1)
    i = np.arange(steps)
    from_start = low + step * i.astype(dtype)
    from_end = high - step * (steps - 1 - i).astype(dtype)
    return np.where(i < steps // 2, from_start, from_end)


def _edges(x, bins: int, low, high, keep: int):
    """Edges of ``bins`` equal bins over [low, high], or over each row's range for None (an
    empty row: [0, 1]; one value v: [v - 0.5, v + 0.5])."""
    flat = x.reshape(x.shape[:keep] + (math.prod(x.shape[keep:]),))
    if low is None:
        empty = flat.shape[-1] == 0
        low = np.zeros(flat.shape[:-1]) if empty else flat.min(axis=-1).astype(np.float64)
        high = np.ones(flat.shape[:-1]) if empty else flat.max(axis=-1).astype(np.float64)
    low, high = (np.broadcast_to(np.asarray(v, np.float64), flat.shape[:-1]) for v in (low, high))
    same = low == high
    return _linspace(np.where(same, low - 0.5, low), np.where(same, high + 0.5, high),
                     bins + 1, x.dtype)  # fmt: skip


def _check_edges(x, bins: int, low, high, keep: int) -> None:
    if low is None and x.size and not np.isfinite(x).all():
        raise DomainError(
            "histogram: the input holds inf or NaN, so its range is not finite; give range="
        )


def _rows(a, keep: int):
    """``a`` as rows: its first ``keep`` dims flattened into one, the others into another."""
    return a.reshape(math.prod(a.shape[:keep]), -1)


def _histogram(x, weight, edges, density: bool, keep: int):
    """Counts (or summed weights) of x's elements per bin of ``edges``, row by row."""
    size = x.shape[:keep]
    xs, ws, es = _rows(x, keep), _rows(weight, keep), _rows(edges, keep)
    bins = edges.shape[-1] - 1
    with np.errstate(divide="ignore", invalid="ignore"):  # density of no counts: NaN
        counts = [np.histogram(a, e, weights=w, density=density)[0]
                  for a, w, e in zip(xs, ws, es)]  # fmt: skip
    out = np.stack(counts) if counts else np.zeros((0, bins))
    return out.astype(x.dtype).reshape(size + (bins,))


def _histogramdd(x, weight, edges, sizes: tuple, density: bool, keep: int):
    """The D-dimensional histogram of the points x[..., D] per row; ``edges`` holds the edges
    of every dim one after the other (``sizes`` of them each)."""
    split = np.cumsum(sizes)[:-1]
    points = x.reshape(math.prod(x.shape[:keep]), -1, x.shape[-1])
    ws, es = _rows(weight, keep), _rows(edges, keep)
    with np.errstate(divide="ignore", invalid="ignore"):  # density of no counts: NaN
        counts = [np.histogramdd(p, np.split(e, split), weights=w, density=density)[0]
                  for p, w, e in zip(points, ws, es)]  # fmt: skip
    shape = tuple(n - 1 for n in sizes)
    out = np.stack(counts) if counts else np.zeros((0,) + shape)
    return out.astype(x.dtype).reshape(x.shape[:keep] + shape)


def _batch_edges(op: Op, values: list, batched: list, params: dict):
    return op(values[0], **{**params, "keep": params["keep"] + 1})


def _batch_counts(op: Op, values: list, batched: list, params: dict):
    size = next(v.shape[0] for v, b in zip(values, batched) if b)
    values = [v if b else with_batch(v, size) for v, b in zip(values, batched)]
    return op(*values, **{**params, "keep": params["keep"] + 1})


# fmt: off
histogram_edges_row = Op(
    "histogram_edges", _edges, vjp=None, inputs=("x",), kind="reduction", batch=_batch_edges,
    check=_check_edges, doc="The edges of equal-width bins over x's range (or a given one).")
histogram_row = Op(
    "histogram", _histogram, vjp=None, inputs=("x", "weight", "edges"), kind="reduction",
    batch=_batch_counts, doc="How many elements of x (or how much weight) fall in each bin.")
histogramdd_row = Op(
    "histogramdd", _histogramdd, vjp=None, inputs=("x", "weight", "edges"), kind="reduction",
    batch=_batch_counts, doc="How many points x[..., D] (or how much weight) fall in each cell.")
# fmt: on


class Histogram(NamedTuple):
    """What `histogram` and `histogramdd` return, like ``torch.return_types.histogram``
    (``bin_edges`` is a tuple of tensors, one per dim, for histogramdd)."""

    hist: Tensor
    bin_edges: Tensor | tuple


def _float_input(x, op: str) -> Tensor:
    x = as_tensor(x, op)
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: needs a floating-point tensor, got {fmt_dtype(x.dtype)}")
    return x


def _range(range, n: int, op: str) -> list:
    """[(low, high)] per dim, or [None] * n."""
    if range is None:
        return [None] * n
    values = list(range)
    if len(values) != 2 * n or not all(isinstance(v, numbers.Real) for v in values):
        raise ShapeError(f"{op}: range must be {2 * n} numbers (low, high per dim), got {range!r}")
    pairs = [(float(low), float(high)) for low, high in zip(values[::2], values[1::2])]
    for i, (low, high) in enumerate(pairs):
        if not (math.isfinite(low) and math.isfinite(high)):
            raise DomainError(f"{op}: the range [{low}, {high}] of dim {i} must be finite")
        if low > high:
            raise DomainError(f"{op}: the range [{low}, {high}] of dim {i} has min above max")
    return pairs


def _bin_edges(x: Tensor, bins, limits, op: str, dim: int) -> Tensor:
    """The edges for one dim: ``bins`` equal bins (an int) or the given 1-D tensor."""
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise ShapeError(
                f"{op}: the bin edges of dim {dim} must be a non-empty 1-D tensor, got shape "
                f"{fmt_shape(bins.shape)}"
            )
        if bins.dtype != x.dtype:
            raise DTypeError(
                f"{op}: bin edges ({fmt_dtype(bins.dtype)}) must have the input's dtype "
                f"({fmt_dtype(x.dtype)})"
            )
        if np.any(bins._array[1:] < bins._array[:-1]):  # PyTorch counts nothing then
            raise DomainError(f"{op}: the bin edges of dim {dim} must not decrease")
        return bins
    if not isinstance(bins, numbers.Integral) or isinstance(bins, bool) or bins <= 0:
        raise DomainError(f"{op}: bins must be a positive int or a tensor of edges, got {bins!r}")
    low, high = limits or (None, None)
    return histogram_edges_row(x, bins=int(bins), low=low, high=high, keep=0)


def _weight(weight, shape: tuple, x: Tensor, op: str) -> Tensor:
    if weight is None:
        return Tensor._make(np.ones(shape, x.dtype))
    weight = as_tensor(weight, op)
    if tuple(weight.shape) != shape or weight.dtype != x.dtype:
        raise ShapeError(
            f"{op}: weight ({fmt_dtype(weight.dtype)}, shape {fmt_shape(weight.shape)}) must "
            f"have the dtype {fmt_dtype(x.dtype)} and shape {fmt_shape(shape)}"
        )
    return weight


def histogram(input, bins, *, range=None, weight=None, density: bool = False) -> Histogram:
    """(hist, bin_edges): how many elements of ``input`` fall in each bin, in its dtype.

    ``bins`` is a number of equal bins over ``range`` (low, high; default the values' own,
    widened by 0.5 both ways when that is one value) or a 1-D tensor of increasing edges.
    Each bin holds low <= x < high, the last also its high edge; elements outside are left
    out. With ``weight`` each element counts its weight; with ``density`` the histogram is
    scaled to integrate to 1. Floating-point input only; no gradient.

    >>> import chainrule as cr
    >>> cr.histogram(cr.tensor([1.0, 2.0, 1.0, 4.0]), 3)
    Histogram(hist=tensor([2., 1., 1.]), bin_edges=tensor([1., 2., 3., 4.]))
    """
    x = _float_input(input, "histogram")
    edges = _bin_edges(x, bins, _range(range, 1, "histogram")[0], "histogram", 0)
    w = _weight(weight, tuple(x.shape), x, "histogram")
    return Histogram(histogram_row(x, w, edges, density=bool(density), keep=0), edges)


def histogramdd(input, bins, *, range=None, weight=None, density: bool = False) -> Histogram:
    """(hist, bin_edges): the histogram of points ``input[..., D]`` over a grid of cells,
    one dim of hist per coordinate, and a tuple of D edge tensors.

    ``bins`` is an int (equal bins in every dim), D ints, or D 1-D tensors of edges;
    ``range`` is 2D numbers (low, high for each dim); ``weight`` has one weight per point
    (shape ``input.shape[:-1]``). Edges work as in `histogram`. No gradient.

    >>> import chainrule as cr
    >>> points = cr.tensor([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> cr.histogramdd(points, [2, 1]).hist
    tensor([[1.],
            [2.]])
    """
    x = _float_input(input, "histogramdd")
    if x.ndim < 1:
        raise ShapeError("histogramdd: needs points of shape (..., D), got a 0-d tensor")
    n = x.shape[-1]
    per_dim = [bins] * n if isinstance(bins, numbers.Integral) else list(bins)
    if len(per_dim) != n:
        raise ShapeError(
            f"histogramdd: bins has {len(per_dim)} entries for {n} dims; give one each"
        )
    limits = _range(range, n, "histogramdd")
    edges = tuple(
        _bin_edges(x.select(-1, d), b, lim, "histogramdd", d)
        for d, (b, lim) in enumerate(zip(per_dim, limits))
    )
    w = _weight(weight, tuple(x.shape[:-1]), x, "histogramdd")
    sizes = tuple(e.shape[0] for e in edges)
    all_edges = cat(edges, 0) if edges else Tensor._make(np.zeros(0, x.dtype))
    hist = histogramdd_row(x, w, all_edges, sizes=sizes, density=bool(density), keep=0)
    return Histogram(hist, edges)


# Counting without edges: bincount (how often each integer occurs) and histc (counts in equal
# bins over a range), each a row of no gradient.


def _bincount(x, weights, minlength: int):
    out = np.bincount(x, weights=weights, minlength=minlength)
    if weights is None:
        return out.astype(np.int64)
    return out.astype(weights.dtype if weights.dtype.kind == "f" else np.float64)


def _histc(x, bins: int, low: float, high: float, keep: int):
    """Counts of x's elements in ``bins`` equal bins over [low, high] (each of the first
    ``keep`` dims apart: vmap's batch dim). low == high == 0 means each slice's own range."""
    flat = x.reshape(x.shape[:keep] + (math.prod(x.shape[keep:]),))
    if low == high == 0 and flat.shape[-1]:
        low, high = flat.min(axis=-1, keepdims=True), flat.max(axis=-1, keepdims=True)
    low, high = np.asarray(low, x.dtype), np.asarray(high, x.dtype)
    same = low == high  # one value: widen by 1 both ways, as PyTorch does
    low, high = np.where(same, low - 1, low), np.where(same, high + 1, high)
    with np.errstate(invalid="ignore"):
        position = np.floor((flat - low) * bins / (high - low))
    inside = (flat >= low) & (flat <= high)
    bin_of = np.where(inside, np.minimum(position, bins - 1), bins).astype(np.int64)
    rows = bin_of.reshape(math.prod(x.shape[:keep]), flat.shape[-1])
    offsets = np.arange(rows.shape[0])[:, None] * (bins + 1)
    counts = np.bincount((rows + offsets).ravel(), minlength=rows.shape[0] * (bins + 1))
    return counts.reshape(x.shape[:keep] + (bins + 1,))[..., :bins].astype(x.dtype)


def _check_histc(x, bins: int, low: float, high: float, keep: int) -> None:
    if low == high == 0 and not np.isfinite(x).all():
        raise DomainError("histc: x holds inf or NaN, so its range is not finite; give min, max")


def _batch_histc(op: Op, values: list, batched: list, params: dict):
    return op(values[0], **{**params, "keep": params["keep"] + 1})


# fmt: off
bincount_row = Op("bincount", _bincount, vjp=None, inputs=("x",), kind="reduction",
                  keeps_float64=True,
                  batch=Loops("the number of bins is the largest value plus one"),
                  doc="How often each non-negative integer occurs in x (or its weights' sums).")
histc_row = Op("histc", _histc, vjp=None, inputs=("x",), kind="reduction", batch=_batch_histc,
               check=_check_histc, doc="A histogram of x: counts in equal bins over [min, max].")
# fmt: on


def bincount(x, weights=None, minlength: int = 0) -> Tensor:
    """How often each of 0, 1, ..., max(x) occurs in the 1-D non-negative integer tensor x
    (at least ``minlength`` bins); with ``weights``, the sum of the weights in each bin.

    int64 counts; float weights keep their dtype, integer weights give float64. No gradient.

    >>> import chainrule as cr
    >>> cr.bincount(cr.tensor([0, 2, 2])), cr.bincount(cr.tensor([0, 2]), cr.tensor([0.5, 2.0]))
    (tensor([1, 0, 2]), tensor([0.5000, 0.0000, 2.0000]))
    """
    x = as_tensor(x, "bincount")
    if x.ndim != 1 or x.dtype.kind not in "biu":
        raise DTypeError(
            f"bincount: needs a 1-D tensor of non-negative integers, got shape "
            f"{fmt_shape(x.shape)} {fmt_dtype(x.dtype)}"
        )
    if x._array.size and x._array.min() < 0:
        raise DomainError(f"bincount: values must be non-negative, got {int(x._array.min())}")
    if not isinstance(minlength, numbers.Integral) or minlength < 0:
        raise DomainError(f"bincount: minlength must be a non-negative int, got {minlength!r}")
    if weights is not None:
        weights = as_tensor(weights, "bincount")._array
        if weights.shape != x.shape:
            raise ShapeError(
                f"bincount: weights of shape {fmt_shape(weights.shape)} must match the input "
                f"of shape {fmt_shape(x.shape)}"
            )
    return bincount_row(x, weights=weights, minlength=int(minlength))


def histc(x, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of x: how many elements fall into each of ``bins`` equal bins over
    [min, max], in x's dtype. Elements outside are left out; with min = max = 0 the range is
    x's own (widened by 1 both ways when x has one value). No gradient.

    >>> import chainrule as cr
    >>> cr.histc(cr.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    x = as_tensor(x, "histc")
    if x.dtype.kind != "f":
        raise DTypeError(f"histc: needs a floating-point tensor, got {fmt_dtype(x.dtype)}")
    if not isinstance(bins, numbers.Integral) or bins <= 0:
        raise DomainError(f"histc: bins must be a positive int, got {bins!r}")
    if min > max:
        raise DomainError(f"histc: min {min} must not be larger than max {max}")
    if not (math.isfinite(min) and math.isfinite(max)):
        raise DomainError(f"histc: the range [{min}, {max}] must be finite")
    return histc_row(x, bins=int(bins), low=float(min), high=float(max), keep=0)
