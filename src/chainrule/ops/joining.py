"""Joining and broadcasting several tensors, composed from the shape rows: NumPy-style
stacks (hstack, vstack/row_stack, dstack, column_stack), concat, broadcast_tensors and
meshgrid; splitting one into views (tensor_split, hsplit, vsplit, dsplit, split_with_sizes);
and combining elements (cartesian_prod across tensors, combinations within one).

The rows themselves (cat, stack, expand, reshape) are in `chainrule.ops.shape`.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from .arguments import check_dim, check_sizes
from .indexing import getitem, index_array, index_row
from .shape import _at_least, cat, expand, reshape, stack

__all__ = [
    "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "column_stack", "combinations",
    "concat", "concatenate", "dsplit", "dstack", "hsplit", "hstack", "meshgrid", "row_stack",
    "split_with_sizes", "tensor_split", "vsplit", "vstack",
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


#: `vstack` under its other name.
row_stack = vstack


# Splitting into views: the inverse of joining.


def _slices(input, dim: int, bounds: list):
    """Views of input along dim between consecutive ``bounds`` (Python slice semantics)."""
    before = (slice(None),) * dim
    return tuple(getitem(input, before + (slice(start, stop),))
                 for start, stop in zip(bounds[:-1], bounds[1:]))  # fmt: skip


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """Views of ``input`` along ``dim``: ``sections`` pieces as equal as can be (the first
    ``size % sections`` one longer), or the pieces between the given ``indices`` (read as
    Python slices: negative counts from the end, out of range gives empty pieces). A 0-d
    integer tensor is a number of sections, a 1-D one a list of indices.

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.arange(5).tensor_split(2)]
    [[0, 1, 2], [3, 4]]
    >>> [t.tolist() for t in cr.arange(5).tensor_split([1, -1])]
    [[0], [1, 2, 3], [4]]
    """
    return _tensor_split("tensor_split", input, indices_or_sections, dim)


def _tensor_split(op: str, input, spec, dim: int, divides: bool = False) -> tuple:
    shape = np.shape(input)
    if not shape:
        raise ShapeError(f"{op}: cannot split a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), op)
    if isinstance(spec, (Tensor, np.ndarray)):
        spec = index_array(spec, op)
        if spec.ndim > 1:
            raise ShapeError(f"{op}: a tensor of indices or sections must be 0-d or 1-D, got "
                             f"shape {fmt_shape(spec.shape)}")  # fmt: skip
        spec = int(spec) if spec.ndim == 0 else spec.tolist()
    n = shape[dim]
    if isinstance(spec, numbers.Integral) and not isinstance(spec, bool):
        sections = int(spec)
        if sections <= 0:
            raise ShapeError(f"{op}: the number of sections must be positive, got {sections}")
        if divides and n % sections:
            raise ShapeError(f"{op}: dim {dim} of size {n} does not split into {sections} equal "
                             f"sections; give indices to split at instead")  # fmt: skip
        size, longer = divmod(n, sections)
        bounds = [0, *itertools.accumulate(size + (i < longer) for i in range(sections))]
        return _slices(input, dim, bounds)
    indices = list(spec)
    if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in indices):
        raise DTypeError(f"{op}: indices must be ints, got {tuple(indices)}")
    return _slices(input, dim, [0, *(int(i) for i in indices), None])


def _split_along(op: str, input, spec, min_ndim: int, dim: int) -> tuple:
    if np.ndim(input) < min_ndim:
        raise ShapeError(f"{op}: needs a tensor with at least {min_ndim} dimension(s), got shape "
                         f"{fmt_shape(np.shape(input))}")  # fmt: skip
    return _tensor_split(op, input, spec, dim, divides=True)


def hsplit(input, indices_or_sections) -> tuple:
    """`tensor_split` along dim 1 (dim 0 for a 1-D tensor); a number of sections must divide
    that dim evenly.

    >>> import chainrule as cr
    >>> [t.shape for t in cr.zeros(2, 6).hsplit(3)]
    [(2, 2), (2, 2), (2, 2)]
    """
    return _split_along("hsplit", input, indices_or_sections, 1, int(np.ndim(input) > 1))


def vsplit(input, indices_or_sections) -> tuple:
    """`tensor_split` along dim 0 of a tensor of at least 2 dims; sections divide evenly.

    >>> import chainrule as cr
    >>> [t.shape for t in cr.zeros(4, 2).vsplit([1])]
    [(1, 2), (3, 2)]
    """
    return _split_along("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input, indices_or_sections) -> tuple:
    """`tensor_split` along dim 2 of a tensor of at least 3 dims; sections divide evenly.

    >>> import chainrule as cr
    >>> [t.shape for t in cr.zeros(1, 2, 4).dsplit(2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    return _split_along("dsplit", input, indices_or_sections, 3, 2)


def split_with_sizes(input, split_sizes, dim: int = 0) -> tuple:
    """Views of ``input`` along ``dim`` of the given sizes, which add up to that dim.

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.arange(5).split_with_sizes([2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    shape = np.shape(input)
    if not shape:
        raise ShapeError("split_with_sizes: cannot split a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), "split_with_sizes")
    sizes = check_sizes(split_sizes, "split_with_sizes", "split_sizes")
    if sum(sizes) != shape[dim]:
        raise ShapeError(
            f"split_with_sizes: split_sizes {sizes} add up to {sum(sizes)}, but dim {dim} of "
            f"input {fmt_shape(shape)} has size {shape[dim]}"
        )
    return _slices(input, dim, [0, *itertools.accumulate(sizes)])


# Combining elements: tuples across tensors, combinations within one.


def _vectors(op: str, tensors: tuple) -> tuple:
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise DTypeError(f"{op}: expects tensors, got {type(t).__name__} at position {i}")
        if t.ndim != 1:
            raise ShapeError(f"{op}: expects 1-D tensors, got shape {fmt_shape(t.shape)} at "
                             f"position {i}")  # fmt: skip
    return tensors


def cartesian_prod(*tensors):
    """Every tuple of one element from each 1-D tensor, in order (itertools.product), as the
    rows of a (count, len(tensors)) tensor; one tensor is returned as it is. The tensors
    share one dtype, as in PyTorch.

    >>> import chainrule as cr
    >>> cr.cartesian_prod(cr.tensor([1, 2]), cr.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if not tensors:
        raise ShapeError("cartesian_prod: expects at least one tensor")
    tensors = _vectors("cartesian_prod", tensors)
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        shown = ", ".join(sorted(fmt_dtype(d) for d in dtypes))
        raise DTypeError(f"cartesian_prod: the tensors must share one dtype, got {shown}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r: int = 2, with_replacement: bool = False):
    """The length-``r`` combinations of the elements of a 1-D tensor (itertools order), as
    the rows of a (count, r) tensor; r = 0 gives an empty 1-D tensor, as PyTorch.

    >>> import chainrule as cr
    >>> cr.combinations(cr.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    (input,) = _vectors("combinations", (input,))
    if not isinstance(r, numbers.Integral) or r < 0:
        raise DomainError(f"combinations: r must be a non-negative int, got {r!r}")
    if r == 0:
        return index_row(input, index=(np.zeros(0, np.int64),))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    positions = np.array(list(pick(range(input.shape[0]), int(r))), np.int64).reshape(-1, r)
    return index_row(input, index=(positions,))
