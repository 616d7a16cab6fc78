"""Array kernels for the few NumPy calls that are slow on a training step's shapes, each
written once and used by the op rows: sums and maxima over short rows, and adding rows at
repeated indices.

NumPy reduces the last axis of a C-ordered array row by row, with a fixed cost of tens of
nanoseconds before each row's first addition. A layer norm over 64 features of 512 tokens is
512 such rows, and the per-row cost is most of the time. Summing rows is multiplying by a
vector of ones, which BLAS does in one call at the speed of memory; summing the leading axes
(a bias gradient over the batch) is the same product from the other side. The sums are the
same numbers added in another order: float rounding may differ in the last bit, as it does
between NumPy and PyTorch. BLAS starts each sum at +0.0, so a sum of -0.0s is +0.0, as in
PyTorch.

Maxima have no BLAS form. Over short rows, the maximum of a transposed copy, taken across rows
(NumPy's vectorized outer reduction), is exact and several times faster than row by row.

``np.add.at`` adds one row at a time through a generic index loop; sorting the indices and
adding each run of equal ones with ``np.add.reduceat`` (long runs), or adding the runs'
first, second, ... rows in vectorized rounds (short runs), gives the same sums several
times faster (an embedding's backward).

NumPy's float64 ``exp`` leaves its vector loop for an input whose result is subnormal or 0
(below -708), and runs four to seven times slower over arrays full of them: the -inf of a
masked attention score, shifted by its row's maximum. `exp_shifted` sets those results
itself.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["add_at", "add_reduce", "exp_shifted", "max_reduce"]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

#: Arrays with fewer elements go to NumPy as they are: the checks would cost more than NumPy.
SMALLEST = 4096
#: `add_reduce` takes the BLAS product for at least this many row sums (or rows summed, over
#: leading axes); NumPy is as fast below, each row costing it about 15 ns.
MANY_SUMS = 256
#: Rows up to this long are summed by BLAS; longer ones NumPy sums fast (and pairwise).
LONGEST_SUMMED_ROW = 4096
#: Rows up to this long take their maximum through a transposed copy; NumPy is faster beyond.
LONGEST_MAX_ROW = 64
#: `add_at` sorts rows of at least this many elements, when there are this many values in
#: all; ``np.add.at`` is as fast for fewer or shorter ones.
SHORTEST_ADDED_ROW = 8
SMALLEST_ADDED = 4096
#: `add_at` sums runs of equal rows with ``np.add.reduceat`` when they are this long on
#: average, and adds them in rounds when shorter; rounds stop at `RUN_ROUNDS`.
SHORT_RUNS = 4
RUN_ROUNDS = 8


@functools.lru_cache(maxsize=64)
def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    ones = np.ones(n, dtype)
    ones.flags.writeable = False  # shared by every later call
    return ones


def _axes(ndim: int, axis) -> tuple[int, ...] | None:
    """``axis`` as sorted non-negative ints; None for all axes or an axis out of range (NumPy
    then decides, and raises its own error)."""
    if axis is None:
        return None
    axes = (axis,) if type(axis) is int else tuple(axis)
    if not all(type(a) is int and -ndim <= a < ndim for a in axes):
        return None
    return tuple(sorted(a % ndim for a in axes))


def _fast(x) -> bool:
    """Whether ``x`` is a large C-ordered float32 or float64 array (`SMALLEST`)."""
    return x.dtype in _FLOATS and x.flags.c_contiguous


_ndarray = np.ndarray  # module globals: one lookup each, not np's attribute, per call
_add = np.add.reduce


def _kept(out: np.ndarray, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    if keepdims:
        return out.reshape([1 if d in axes else n for d, n in enumerate(shape)])
    return out.reshape([n for d, n in enumerate(shape) if d not in axes])


def add_reduce(x, axis, keepdims: bool = False):
    """``np.add.reduce(x, axis=axis, keepdims=keepdims)``: through one BLAS product with a
    vector of ones when ``axis`` is a run of trailing axes (rows up to `LONGEST_SUMMED_ROW`)
    or of leading axes of a C-ordered float32 or float64 array, with at least `MANY_SUMS`
    sums to make (NumPy's cost grows with their number)."""
    # Small arrays, the most common, leave after the first two tests.
    if type(x) is _ndarray and x.size >= SMALLEST and _fast(x):
        axes = _axes(x.ndim, axis)
        if axes and len(axes) < x.ndim:
            k = len(axes)
            if axes[0] == x.ndim - k and axes[-1] == x.ndim - 1:
                n = math.prod(x.shape[-k:])
                if n <= LONGEST_SUMMED_ROW and x.size >= n * MANY_SUMS:
                    out = np.matmul(x.reshape(-1, n), _ones(n, x.dtype))
                    return _kept(out, x.shape, axes, keepdims)
            elif axes[-1] == k - 1:
                m = math.prod(x.shape[:k])
                if m >= MANY_SUMS:  # NumPy adds the m rows one after another
                    out = np.matmul(_ones(m, x.dtype), x.reshape(m, -1))
                    return _kept(out, x.shape, axes, keepdims)
    return _add(x, axis=axis, keepdims=keepdims)


def max_reduce(x, axis, keepdims: bool = False):
    """``np.maximum.reduce(x, axis=axis, keepdims=keepdims)``, exactly; over the last axis of
    a C-ordered float array with short rows (up to `LONGEST_MAX_ROW`) it reduces a transposed
    copy across rows instead."""
    if (
        type(x) is _ndarray
        and x.size >= SMALLEST
        and _fast(x)
        and x.shape[-1] <= LONGEST_MAX_ROW
        and _axes(x.ndim, axis) == (x.ndim - 1,)
    ):
        n = x.shape[-1]
        out = np.maximum.reduce(np.ascontiguousarray(x.reshape(-1, n).T), axis=0)
        return _kept(out, x.shape, (x.ndim - 1,), keepdims)
    return np.maximum.reduce(x, axis=axis, keepdims=keepdims)


def add_at(out: np.ndarray, index: tuple, values) -> None:
    """``np.add.at(out, index, values)``: repeated indices accumulate. When ``index`` is
    integer arrays into ``out``'s leading axes (an embedding's backward, a gather's) and
    ``values`` has their broadcast shape followed by the other axes' sizes, the values are
    added row by row in vectorized steps (`_add_rows`)."""
    arrays = [i for i in index if isinstance(i, np.ndarray) and i.dtype.kind in "iu"]
    k = len(arrays)
    if (
        not k
        or k != len(index)
        or not out.flags.c_contiguous
        or math.prod(out.shape[k:]) < SHORTEST_ADDED_ROW
        or np.size(values) < SMALLEST_ADDED
    ):
        np.add.at(out, index, values)  # faster for few or short rows
        return
    if k > 1:
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError:
            np.add.at(out, index, values)  # NumPy's own error
            return
    if np.shape(values) != arrays[0].shape + out.shape[k:]:
        np.add.at(out, index, values)
        return
    sizes = out.shape[:k]
    rows = None
    for i, size in zip(arrays, sizes):
        i = i.ravel().astype(np.int64, copy=False)
        low, high = (i.min(), i.max()) if i.size else (0, 0)
        if high >= size or low < -size:
            np.add.at(out, index, values)  # NumPy's own error
            return
        if low < 0:
            i = np.where(i < 0, i + size, i)  # -1 and size - 1 are one row to add into
        rows = i if rows is None else rows * size + i
    if rows.size == 0:
        return
    _add_rows(out.reshape(math.prod(sizes), -1), rows, np.reshape(values, (rows.size, -1)))


def _add_rows(table: np.ndarray, rows: np.ndarray, flat: np.ndarray) -> None:
    """``table[rows[i]] += flat[i]`` for every i, repeated rows accumulating.

    The rows are sorted, so that each row's values lie together in a run. Where runs are long
    (few distinct rows: a character vocabulary), ``np.add.reduceat`` sums each run; it pays
    per run and per column, so where most runs are short (a large vocabulary), the values go
    in rounds instead: the first of every run, then the second of every run, ..., each round
    one vectorized ``+=`` over distinct rows, and runs longer than `RUN_ROUNDS` have their
    rest summed by ``reduceat``."""
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    first = np.empty(rows.size, bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if starts.size * SHORT_RUNS <= rows.size:
        table[ordered[starts]] += np.add.reduceat(flat[order], starts, axis=0)
        return
    place = np.arange(rows.size)
    place -= np.maximum.accumulate(np.where(first, place, 0))  # position within its run
    deepest = int(place.max())
    for k in range(min(RUN_ROUNDS, deepest + 1)):
        taken = starts if k == 0 else np.flatnonzero(place == k)
        table[ordered[taken]] += flat[order[taken]]
    if deepest >= RUN_ROUNDS:
        rest = np.flatnonzero(place >= RUN_ROUNDS)
        rest_starts = np.flatnonzero(place[rest] == RUN_ROUNDS)
        sums = np.add.reduceat(flat[order[rest]], rest_starts, axis=0)
        table[ordered[rest[rest_starts]]] += sums


#: Below this, float64 exp's result is subnormal or 0 (exp(-708.4) is the smallest normal).
SUBNORMAL_EXP = -708.0
#: Below this, float64 exp's result rounds to 0.
ZERO_EXP = -745.2


def exp_shifted(e: np.ndarray) -> np.ndarray:
    """``np.exp(e, out=e)`` for a float array, meant for values at most 0 (x less its
    maximum, as softmax and logsumexp shift): exactly NumPy's numbers for any input, with
    float64 inputs below `SUBNORMAL_EXP` taken out of NumPy's loop, where they cost several
    times the rest."""
    if e.dtype != _FLOATS[1] or e.size < SMALLEST:
        return np.exp(e, out=e)
    low = e < SUBNORMAL_EXP
    if not low.any():
        return np.exp(e, out=e)
    subnormal = low & (e >= ZERO_EXP)  # rare: NumPy computes these
    tails = e[subnormal] if subnormal.any() else None
    e[low] = 0.0
    np.exp(e, out=e)
    e[low] = 0.0
    if tails is not None:
        e[subnormal] = np.exp(tails)
    return e
