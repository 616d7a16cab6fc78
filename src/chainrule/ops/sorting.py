"""Sorting and order statistics: sort (and msort), argsort, topk, kthvalue, median, nanmedian,
mode; and what sorted order finds: unique, unique_consecutive, searchsorted and bucketize.
Histogram counts (bincount, histc) are in `chainrule.ops.histograms`.

An op that returns (values, indices) finds the indices with a row of no gradient (argsort,
median_indices, mode_indices), then reads x there with a row of its own name (`picker`): the
gradient goes to the returned indices, and both rows run batched under vmap. Sorting is always
stable: ties keep their order (descending too), so ``stable=False`` gives the same result.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ..dtypes import int32
from ..errors import DomainError, DTypeError, OutOfRangeError, ShapeError, fmt_shape
from ..op import Loops, Op
from .arguments import as_tensor, check_dim
from .picking import batch_along, picker, with_batch
from .reduce import ValuesIndices

__all__ = [
    "argsort", "bucketize", "kthvalue", "median", "mode", "msort", "nanmedian", "searchsorted",
    "sort", "topk", "unique", "unique_consecutive",
]  # fmt: skip


# Finding indices (int64, no gradient). NumPy's stable sort puts NaN last, as PyTorch does.


def _argsort(x, dim: int, descending: bool):
    if not descending:
        return np.argsort(x, axis=dim, kind="stable").astype(np.int64)
    # Sorting the reversed slice ascending and reading that order backwards is descending,
    # with NaN first (PyTorch's order) and ties in their original order (stable).
    order = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return (x.shape[dim] - 1 - np.flip(order, dim)).astype(np.int64)


def _median_indices(x, dim: int, ignore_nan: bool):
    """The index of the lower median of each slice along ``dim`` (kept, size 1). A slice with
    NaN gives its first NaN (median) or the median of the rest (nanmedian), as in PyTorch."""
    order = np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    kept = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    valid = np.full(kept, n)
    if x.dtype.kind in "fc":
        valid = np.sum(~np.isnan(x), axis=dim, keepdims=True)
    # nanmedian: the lower median of the valid ones; median: of all, or the first NaN.
    k = np.maximum(valid - 1, 0) // 2 if ignore_nan else np.where(valid < n, valid, (n - 1) // 2)
    return np.take_along_axis(order, k, axis=dim).astype(np.int64)


def _mode_indices(x, dim: int):
    """The index of the most frequent value of each slice (kept, size 1): of several, the
    smallest value, at its last position, as PyTorch picks."""
    order = np.argsort(x, axis=dim, kind="stable")
    ranked = np.take_along_axis(x, order, axis=dim)
    positions = np.arange(x.shape[dim]).reshape([-1 if d == dim else 1 for d in range(x.ndim)])
    before = (slice(None),) * dim
    starts = np.ones(x.shape, dtype=bool)  # where a run of equal values begins
    starts[before + (slice(1, None),)] = (
        ranked[before + (slice(1, None),)] != ranked[before + (slice(None, -1),)]
    )
    # How many equal values end at each position; the first largest count ends the run of the
    # smallest most frequent value, at its last position (stable order keeps original order).
    run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=dim)
    best = np.argmax(positions - run_start, axis=dim, keepdims=True)
    return np.take_along_axis(order, best, axis=dim).astype(np.int64)


# Counting.


def _unique(x, dim):
    return np.unique(x, axis=dim, equal_nan=False) if dim is not None else np.unique(x)


def _searchsorted(sorted_sequence, values, right: bool):
    side = "right" if right else "left"
    if sorted_sequence.ndim == 1:
        return np.searchsorted(sorted_sequence, values, side).astype(np.int64)
    rows = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    if not rows.shape[0]:
        return np.zeros(values.shape, np.int64)
    wanted = values.reshape(rows.shape[0], -1)
    out = np.empty(wanted.shape, np.int64)
    for i, (row, row_values) in enumerate(zip(rows, wanted)):
        out[i] = np.searchsorted(row, row_values, side)
    return out.reshape(values.shape)


def _batch_searchsorted(op: Op, values: list, batched: list, params: dict):
    sequence, wanted = values
    if not batched[0] and sequence.ndim == 1:  # one sequence for every example's values
        return op(sequence, wanted, **params)
    size = (sequence if batched[0] else wanted).shape[0]
    sequence, wanted = (v if b else with_batch(v, size) for v, b in zip(values, batched))
    if sequence.ndim == 2:  # a sequence per example, values of any shape
        return op(sequence, wanted.reshape(size, -1), **params).reshape(wanted.shape)
    return op(sequence, wanted, **params)


# fmt: off
argsort_row = Op("argsort", _argsort, vjp=None, inputs=("x",), kind="reduction",
                 batch=batch_along, doc="The indices (int64) that sort x along dim, stably.")
median_indices_row = Op(
    "median_indices", _median_indices, vjp=None, inputs=("x",), kind="reduction",
    batch=batch_along, doc="The index (int64) of each slice's lower median along dim.")
mode_indices_row = Op(
    "mode_indices", _mode_indices, vjp=None, inputs=("x",), kind="reduction",
    batch=batch_along, doc="The index (int64) of each slice's most frequent value along dim.")
sort_row = picker("sort", doc="sort(x, dim).values: x read in sorted order.")
topk_row = picker("topk", doc="topk(x, k, dim).values: the k largest (or smallest) of x.")
kthvalue_row = picker("kthvalue", doc="kthvalue(x, k, dim).values: the k-th smallest of x.")
median_row = picker("median", doc="median(x, dim).values: the lower median of x.")
nanmedian_row = picker("nanmedian", doc="nanmedian(x, dim).values: the median without NaN.")
mode_row = picker("mode", doc="mode(x, dim).values: the most frequent value of x.")
# The size of these results depends on the values, so no batched run can hold them.
unique_row = Op("unique", _unique, vjp=None, inputs=("x",), kind="reduction",
                batch=Loops("the number of unique values differs between examples"),
                doc="The sorted unique values of x (of its slices along dim).")
searchsorted_row = Op(
    "searchsorted", _searchsorted, vjp=None, inputs=("sorted_sequence", "values"),
    kind="indexing", batch=_batch_searchsorted,
    doc="Where each value would go in the sorted sequence (int64 indices).")
# fmt: on


# Public functions.


def _prepare(x, dim, op: str):
    """(x with at least one dimension, dim as a non-negative int, whether x was 0-d)."""
    x = as_tensor(x, op)
    d = check_dim(dim, x.ndim, op)
    return (x.reshape(1), 0, True) if x.ndim == 0 else (x, d, False)


def _pick(row: Op, x, indices, dim: int, scalar: bool, keepdim: bool = True) -> ValuesIndices:
    """(values, indices): x read at ``indices`` along ``dim``, shaped as the op returns it."""
    values = row(x, indices, dim=dim)
    if scalar:
        return ValuesIndices(values.reshape(()), indices.reshape(()))
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return ValuesIndices(values, indices)


def _check_not_empty(x, dim: int, op: str) -> None:
    if x.shape[dim] == 0:
        raise ShapeError(
            f"{op}: dim {dim} of the tensor of shape {fmt_shape(x.shape)} is empty; "
            "there is no element to pick"
        )


def sort(x, dim: int = -1, descending: bool = False, *, stable: bool = False) -> ValuesIndices:
    """(values, indices): x sorted along ``dim``, and where each value came from.

    NaN sorts as the largest value. The sort is always stable (ties keep their order, also
    descending), so ``stable`` changes nothing. The gradient goes back to each value's place.

    >>> import chainrule as cr
    >>> cr.sort(cr.tensor([3.0, 1.0, 2.0]), descending=True)
    ValuesIndices(values=tensor([3., 2., 1.]), indices=tensor([0, 2, 1]))
    """
    x, d, scalar = _prepare(x, dim, "sort")
    return _pick(sort_row, x, argsort_row(x, dim=d, descending=bool(descending)), d, scalar)


def argsort(x, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices (int64) that sort x along ``dim``: ``sort(x, dim, descending).indices``.

    >>> import chainrule as cr
    >>> cr.argsort(cr.tensor([[3.0, 1.0, 2.0]]))
    tensor([[1, 2, 0]])
    """
    x, d, scalar = _prepare(x, dim, "argsort")
    indices = argsort_row(x, dim=d, descending=bool(descending))
    return indices.reshape(()) if scalar else indices


def _k(k, low: int, high: int, x, dim: int, op: str) -> int:
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise DTypeError(f"{op}: k must be an int, got {k!r}")
    if not low <= k <= high:
        raise OutOfRangeError(
            f"{op}: k={k} is out of range [{low}, {high}] for dim {dim} of the tensor of "
            f"shape {fmt_shape(x.shape)}"
        )
    return int(k)


def topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> ValuesIndices:
    """(values, indices) of the ``k`` largest elements along ``dim`` (smallest: largest=False).

    They always come sorted (largest first, or smallest first), also with ``sorted=False``,
    where PyTorch leaves the order open. Of tied values the first ones are taken.

    >>> import chainrule as cr
    >>> cr.topk(cr.tensor([1.0, 5.0, 3.0, 2.0]), 2)
    ValuesIndices(values=tensor([5., 3.]), indices=tensor([1, 2]))
    """
    x, d, scalar = _prepare(x, dim, "topk")
    k = _k(k, 0, x.shape[d], x, d, "topk")
    indices = argsort_row(x, dim=d, descending=bool(largest)).narrow(d, 0, k)
    return _pick(topk_row, x, indices, d, scalar)


def kthvalue(x, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the ``k``-th smallest element (k from 1) along ``dim``.

    >>> import chainrule as cr
    >>> cr.kthvalue(cr.tensor([[4.0, 1.0, 3.0], [0.0, 2.0, 9.0]]), 2)
    ValuesIndices(values=tensor([3., 2.]), indices=tensor([2, 1]))
    """
    x, d, scalar = _prepare(x, dim, "kthvalue")
    k = _k(k, 1, x.shape[d], x, d, "kthvalue")
    indices = argsort_row(x, dim=d, descending=False).narrow(d, k - 1, 1)
    return _pick(kthvalue_row, x, indices, d, scalar, keepdim)


def _median(row: Op, x, dim, keepdim: bool, op: str):
    if dim is None:  # over every element, values only
        x = as_tensor(x, op)
        flat = x.reshape(-1)
        _check_not_empty(flat, 0, op)
        indices = median_indices_row(flat, dim=0, ignore_nan=row is nanmedian_row)
        return row(flat, indices, dim=0).reshape(())
    x, d, scalar = _prepare(x, dim, op)
    _check_not_empty(x, d, op)
    indices = median_indices_row(x, dim=d, ignore_nan=row is nanmedian_row)
    return _pick(row, x, indices, d, scalar, keepdim)


def median(x, dim=None, keepdim: bool = False):
    """The lower median of all elements, or (values, indices) along one ``dim``.

    Of an even count the smaller of the two middle values, as in PyTorch (not their mean);
    NaN anywhere in a slice makes its median NaN. The gradient goes to the returned index.

    >>> import chainrule as cr
    >>> x = cr.tensor([[4.0, 1.0, 3.0, 2.0]])
    >>> cr.median(x), cr.median(x, 1)
    (tensor(2.), ValuesIndices(values=tensor([2.]), indices=tensor([3])))
    """
    return _median(median_row, x, dim, keepdim, "median")


def nanmedian(x, dim=None, keepdim: bool = False):
    """`median` of the elements that are not NaN (NaN where a slice has no other).

    >>> import chainrule as cr
    >>> cr.nanmedian(cr.tensor([1.0, float("nan"), 3.0, 5.0]))
    tensor(3.)
    """
    return _median(nanmedian_row, x, dim, keepdim, "nanmedian")


def mode(x, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the most frequent value along ``dim``.

    Of several equally frequent values the smallest, at its last position, as PyTorch gives.

    >>> import chainrule as cr
    >>> cr.mode(cr.tensor([3.0, 1.0, 3.0, 1.0, 2.0]))
    ValuesIndices(values=tensor(1.), indices=tensor(3))
    """
    x, d, scalar = _prepare(x, dim, "mode")
    _check_not_empty(x, d, "mode")
    return _pick(mode_row, x, mode_indices_row(x, dim=d), d, scalar, keepdim)


def unique(x, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim=None):  # fmt: skip
    """The unique elements of x, sorted (of its slices along ``dim``, when given); no gradient.

    With ``return_inverse`` also where each element (slice) of x is in the result, with
    ``return_counts`` how often each occurs, both int64, in a tuple as in PyTorch. NaNs are
    not merged (NaN != NaN). The result is sorted also for ``sorted=False``.

    >>> import chainrule as cr
    >>> cr.unique(cr.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    x = as_tensor(x, "unique")
    d = None if dim is None else check_dim(dim, x.ndim, "unique")
    if d is not None and x.ndim == 0:
        raise ShapeError("unique: a 0-d tensor has no dim to take slices along; use dim=None")
    values = unique_row(x, dim=d)
    if not (return_inverse or return_counts):
        return values
    _, inverse, counts = np.unique(
        x._array, return_inverse=True, return_counts=True, axis=d, equal_nan=False
    )
    inverse = inverse.reshape(x.shape if d is None else (x.shape[d],)).astype(np.int64)
    extra = [Tensor._make(inverse)] if return_inverse else []
    extra += [Tensor._make(counts.astype(np.int64))] if return_counts else []
    return (values, *extra)


def searchsorted(sorted_sequence, values, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None) -> Tensor:  # fmt: skip
    """For each value, the index at which inserting it keeps ``sorted_sequence`` sorted:
    the first such place, or the last with ``right=True`` (``side="right"``).

    The sequence is 1-D, or N-D with one sorted row per leading index of ``values`` (same
    leading dims). int64 indices (int32 with ``out_int32``); no gradient.

    >>> import chainrule as cr
    >>> cr.searchsorted(cr.tensor([1.0, 2.0, 3.0]), cr.tensor([2.0, 0.5, 3.5]), right=True)
    tensor([2, 0, 3])
    """
    sequence = as_tensor(sorted_sequence, "searchsorted")
    wanted = as_tensor(values, "searchsorted")
    if side is not None:
        if side not in ("left", "right"):
            raise DomainError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise DomainError("searchsorted: side='left' and right=True contradict each other")
        right = side == "right"
    if sequence.ndim == 0:
        raise ShapeError("searchsorted: sorted_sequence must have at least one dimension")
    if sequence.ndim > 1 and tuple(wanted.shape[:-1]) != tuple(sequence.shape[:-1]):
        raise ShapeError(
            f"searchsorted: values of shape {fmt_shape(wanted.shape)} must have the leading "
            f"dims of sorted_sequence of shape {fmt_shape(sequence.shape)} (all but the last)"
        )
    out = searchsorted_row(sequence, wanted, right=bool(right))
    return out.to(int32) if out_int32 else out


def bucketize(x, boundaries, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each element of x among the sorted 1-D ``boundaries``: i such that
    boundaries[i-1] < x <= boundaries[i] (with ``right=True``: boundaries[i-1] <= x <
    boundaries[i]). That is ``searchsorted(boundaries, x, right=right)``.

    >>> import chainrule as cr
    >>> cr.bucketize(cr.tensor([1.0, 2.5, 3.0]), cr.tensor([1.0, 2.0, 3.0]))
    tensor([0, 2, 2])
    """
    boundaries = as_tensor(boundaries, "bucketize")
    if boundaries.ndim != 1:
        raise ShapeError(
            f"bucketize: boundaries must be 1-D, got shape {fmt_shape(boundaries.shape)}"
        )
    return searchsorted(boundaries, x, out_int32=out_int32, right=right)


def msort(input):
    """input sorted along dimension 0, values only (``sort(input, dim=0).values``).

    >>> import chainrule as cr
    >>> cr.msort(cr.tensor([[3, 1], [1, 2]]))
    tensor([[1, 1],
            [3, 2]])
    """
    return sort(input, dim=0).values


# Runs of equal consecutive values.


def _unique_consecutive(x, dim):
    """The first element (slice along ``dim``) of each run of equal ones, and where runs start."""
    starts = _run_starts(x, dim)
    if dim is None:
        return x.reshape(-1)[starts]
    return np.compress(starts, x, axis=dim)


def _run_starts(x, dim) -> np.ndarray:
    """True where a run of equal elements (slices) begins; NaN never equals NaN."""
    flat = x.reshape(-1) if dim is None else np.moveaxis(x, dim, 0).reshape(x.shape[dim], -1)
    starts = np.ones(flat.shape[0], dtype=bool)
    if flat.shape[0] > 1:
        differs = flat[1:] != flat[:-1]
        starts[1:] = differs if differs.ndim == 1 else differs.any(axis=1)
    return starts


# fmt: off
# As many values as there are runs, which differ between examples: no batched result.
unique_consecutive_row = Op(
    "unique_consecutive", _unique_consecutive, vjp=None, inputs=("x",), kind="reduction",
    batch=Loops("the number of runs of equal values differs between examples"),
    doc="The first value of each run of equal consecutive values (slices along dim).")
# fmt: on


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):  # fmt: skip
    """The first element of each run of equal consecutive elements (slices along ``dim``);
    no gradient. With ``return_inverse`` also which run each element (slice) is in, with
    ``return_counts`` each run's length, both int64, in a tuple as in PyTorch. NaN never
    equals NaN, so NaNs are not merged.

    >>> import chainrule as cr
    >>> cr.unique_consecutive(cr.tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
    (tensor([1, 2, 3, 1]), tensor([2, 2, 1, 1]))
    """
    x = as_tensor(input, "unique_consecutive")
    d = None if dim is None else check_dim(dim, x.ndim, "unique_consecutive")
    if d is not None and x.ndim == 0:
        raise ShapeError("unique_consecutive: a 0-d tensor has no dim; use dim=None")
    values = unique_consecutive_row(x, dim=d)
    if not (return_inverse or return_counts):
        return values
    starts = _run_starts(x._array, d)
    inverse = np.cumsum(starts) - 1
    extra = []
    if return_inverse:
        extra.append(Tensor._make(inverse.reshape(x.shape if d is None else -1).astype(np.int64)))
    if return_counts:
        bounds = np.append(np.flatnonzero(starts), starts.size)
        extra.append(Tensor._make(np.diff(bounds).astype(np.int64)))
    return (values, *extra)
