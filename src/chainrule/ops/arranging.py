"""Arranging elements: block_diag, rot90, tensor_split and the h/v/d splits, atleast_Nd,
take, put, index_reduce, cartesian_prod, combinations, vander, diagflat, unravel_index,
nonzero_static and sum_to_size.

Everything differentiable here is composed from the shape, indexing and scatter rows (their
gradients are PyTorch's); the two rows are the index results of unravel_index and
nonzero_static, which have no gradient.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op
from .arguments import check_dim, check_sizes
from .indexing import getitem, index_array, index_row
from .joining import _at_least, meshgrid
from .reduce import sum as reduce_sum
from .scattering import _spread, scatter_add_row, scatter_reduce_row, scatter_row
from .shape import flip, reshape, stack, transpose

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "combinations", "dsplit",
    "hsplit", "index_reduce", "nonzero_static", "put", "rot90", "split_with_sizes", "take",
    "tensor_split", "unravel_index", "vsplit",
]  # fmt: skip


# The rows: index results, without gradient.


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


def _nonzero_static(x, size: int, fill_value: int, leading: int = 0):
    # ``leading`` batch dims (vmap) in front: each example's first ``size`` positions.
    lead, shape = x.shape[:leading], x.shape[leading:]
    examples = x.reshape(-1, *shape)
    out = np.full((len(examples), size, len(shape)), fill_value, np.int64)
    for out_i, example in zip(out, examples):
        positions = np.argwhere(example)[:size]
        out_i[: len(positions)] = positions
    return out.reshape(*lead, size, len(shape))


def _batch_same(op: Op, values, batched, params):
    return op(values[0], **params)


def _batch_leading(op: Op, values, batched, params):
    return op(values[0], **{**params, "leading": params["leading"] + 1})


# fmt: off
unravel_index_row = Op(
    "unravel_index", _unravel_index, vjp=None, inputs=("indices",), kind="indexing",
    batch=_batch_same, check=_check_unravel,
    doc="The coordinates (int64, last dim) in a tensor of shape of each flat index.")
nonzero_static_row = Op(
    "nonzero_static", _nonzero_static, vjp=None, inputs=("x",), kind="indexing",
    batch=_batch_leading,
    doc="The first size positions (int64) of the non-zero elements, padded with fill_value.")
# fmt: on


# Blocks and rotations.


def rot90(input, k: int = 1, dims=(0, 1)):
    """``input`` turned by 90 degrees ``k`` times in the plane of ``dims``, from the first
    dim towards the second (negative k turns the other way); a flip and a transpose.

    >>> import chainrule as cr
    >>> cr.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = tuple(dims)
    if len(dims) != 2:
        raise ShapeError(f"rot90: dims must name 2 dimensions, got {dims}")
    if np.ndim(input) < 2:
        raise ShapeError(f"rot90: input must have at least 2 dimensions, got shape "
                         f"{fmt_shape(np.shape(input))}")  # fmt: skip
    first, second = (check_dim(d, np.ndim(input), "rot90") for d in dims)
    if first == second:
        raise ShapeError(f"rot90: dims must be two different dimensions, got {dims}")
    k = int(k) % 4
    if k == 1:
        return transpose(flip(input, second), first, second)
    if k == 2:
        return flip(input, (first, second))
    if k == 3:
        return transpose(flip(input, first), first, second)
    return input.clone()


# Splitting into views.


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


# At least n dims.


def _atleast(op: str, ndim: int, tensors: tuple):
    several = len(tensors) != 1 or isinstance(tensors[0], (list, tuple))
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise DTypeError(f"{op}: expects tensors, got {type(t).__name__} at position {i}")
    out = tuple(_at_least(t, ndim) for t in tensors)
    return out if several else out[0]


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,)); one tensor gives a
    tensor, several (or a list) a tuple.

    >>> import chainrule as cr
    >>> cr.atleast_1d(cr.tensor(1.0)), cr.atleast_1d(cr.tensor(1), cr.tensor([2]))
    (tensor([1.]), (tensor([1]), tensor([2])))
    """
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (a 1-D one becomes a row, shape (1, n)).

    >>> import chainrule as cr
    >>> cr.atleast_2d(cr.tensor([1, 2])).shape
    (1, 2)
    """
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: 0-d as (1, 1, 1), (n,) as (1, n, 1), (m, n) as
    (m, n, 1), as NumPy's atleast_3d.

    >>> import chainrule as cr
    >>> cr.atleast_3d(cr.zeros(2)).shape, cr.atleast_3d(cr.zeros(2, 3)).shape
    ((1, 2, 1), (2, 3, 1))
    """
    return _atleast("atleast_3d", 3, tensors)


# Reading and writing the flattened tensor.


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


# Products of elements and positions.


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


# Positions.


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


def sum_to_size(input, *size):
    """``input`` summed to ``size``, a shape that broadcasts to input's (what the gradient
    of a broadcast does): leading dims summed away, dims of size 1 summed with keepdim.

    >>> import chainrule as cr
    >>> cr.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = check_sizes(size, "sum_to_size", "sizes")
    shape = np.shape(input)
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (n, 1) for s, n in zip(size, shape[lead:])):
        raise ShapeError(f"sum_to_size: size {fmt_shape(size)} does not broadcast to the "
                         f"tensor's shape {fmt_shape(shape)}")  # fmt: skip
    dims = (*range(lead), *(lead + d for d, s in enumerate(size) if s == 1 != shape[lead + d]))
    if not dims:
        return input
    return reshape(reduce_sum(input, dims, True), size)
