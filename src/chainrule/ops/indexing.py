"""Indexing rows: basic indexing (a view), advanced indexing (a copy), their backwards,
index_put (what ``x[index] = value`` writes), copy_slices (what an in-place op on a view
writes into its base), gather, and the pieces of a dim as views (narrow, select, unbind).

An index is normalised to a tuple of ints, slices (step > 0), None, Ellipsis and int or bool
arrays, then applied in PyTorch's order: the basic part first (a view), then the arrays on
what is left. NumPy alone differs: x[0, :, [0, 1]] has shape (2, n) there, (n, 2) in PyTorch.
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from .. import kernels, xp
from .._tensor import Tensor
from ..errors import DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ..graph import SliceGrad
from ..observe import replayed_whole
from ..op import LINEAR, Loops, Op
from ..tensor_base import replay
from .arguments import check_dim

__all__ = ["gather", "index_select", "narrow", "select", "take_along_dim", "unbind"]


def _view(x, index: tuple):
    """x[index] for a basic index, always an array view (x[0, ...] is 0-d, x[0] a scalar)."""
    # ``in`` compares with ==, safe here: a basic index holds no arrays.
    return x[index] if Ellipsis in index else x[(*index, Ellipsis)]


def _scatter(g, shape: tuple, index: tuple):
    """Zeros of ``shape`` with g written at a basic index (no element is hit twice)."""
    out = np.zeros(shape, g.dtype)
    _view(out, index)[...] = g
    return out


def _scatter_add(g, shape: tuple, index: tuple):
    """Zeros of ``shape`` with g added at an advanced index: repeated indices accumulate."""
    out = np.zeros(shape, g.dtype)
    kernels.add_at(out, index, g)
    return out


def _split_index(index: tuple) -> tuple[tuple | None, tuple | None]:
    """(basic part, advanced part) of a normalised index; None where a part does nothing."""
    if not any(isinstance(i, np.ndarray) for i in index):
        return index, None
    basic, advanced = [], []
    for item in index:
        if isinstance(item, np.ndarray):
            basic.extend([slice(None)] * (item.ndim if item.dtype == bool else 1))
            advanced.append(item)
        elif isinstance(item, int):
            basic.append(item)  # selected away before the arrays apply
        else:
            basic.append(item)
            advanced.append(item if item is Ellipsis else slice(None))
    does_nothing = all(i is Ellipsis or i == slice(None) for i in basic)
    return (None if does_nothing else tuple(basic)), tuple(advanced)


def _select(x, index: tuple):
    """x[index] on an array or a Tensor, for a normalised index."""
    basic, advanced = _split_index(index)
    if basic is not None:
        x = xp.run(getitem_row, x, index=basic)
    if advanced is not None:
        x = xp.run(index_row, x, index=advanced)
    return x


def _assign(out: np.ndarray, index: tuple, value) -> None:
    """out[index] = value in place, in the same order as `_select`."""
    basic, advanced = _split_index(index)
    target = out if basic is None else _view(out, basic)
    target[... if advanced is None else advanced] = value


def _put(x, value, index: tuple):
    out = np.array(x)
    _assign(out, index, value)
    return out


@replayed_whole(pure=True)  # a compiled step's backward reads the new indices at each call
def _untouched(shape: tuple, index: tuple) -> np.ndarray:
    """A bool mask of ``shape``: False where index_put writes."""
    kept = np.ones(shape, bool)
    _assign(kept, index, False)
    return kept


# Batching rules (see `Op`): the batch dim is one more leading slice(None) in the index.


def _batch_getitem(op: Op, values, batched, params):
    return op(values[0], index=(slice(None), *params["index"]))


def _apart(index: tuple) -> int:
    """For an index whose arrays stand apart (split by a slice), the number of broadcast
    dims NumPy puts first; 0 when they are together (they then stay in place)."""
    arrays = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    if not arrays or arrays == list(range(arrays[0], arrays[-1] + 1)):
        return 0
    return max(1 if index[i].dtype == bool else index[i].ndim for i in arrays)


def _batch_index(op: Op, values, batched, params):
    index = params["index"]
    out = op(values[0], index=(slice(None), *index))
    front = _apart(index)
    if not front:
        return out
    # Index arrays apart from each other put their broadcast dims first (NumPy's rule), and
    # the batch dim after them: move it back to the front.
    return out.permute(front, *range(front), *range(front + 1, out.ndim))


def _batch_scatter(op: Op, values, batched, params):
    # getitem_backward and index_backward (reverse mode over a batch of cotangents): write
    # each example's gradient into its own slice of the zeros.
    (g,) = values
    index = params["index"]
    front = _apart(index)
    if front:  # apart, index arrays take their broadcast dims first (see `_batch_index`)
        g = g.permute(*range(1, front + 1), 0, *range(front + 1, g.ndim))
    return op(g, shape=(g.shape[0], *params["shape"]), index=(slice(None), *index))


# fmt: off
# Basic indexing returns a view; its backward writes g into zeros, whose backward reads it back.
getitem_row = Op("getitem", _view, view=True, jvp=LINEAR, kind="indexing", batch=_batch_getitem,
                 doc="x[index] for a basic index (ints, slices, None, ...): a view.",
                 vjp=(lambda g, x_shape, index: SliceGrad(g, index, _view) if type(g) is np.ndarray
                      else xp.run(getitem_backward_row, g, shape=x_shape, index=index),))
getitem_backward_row = Op("getitem_backward", _scatter, jvp=LINEAR, kind="indexing",
                          batch=_batch_scatter, doc="Zeros of shape with g written at index.",
                          vjp=(lambda g, index: xp.run(getitem_row, g, index=index),))
def _pick(x, index: tuple):
    """x[index] for an advanced index; rows picked by one integer array (an embedding's
    lookup) with ``take``, which NumPy runs in half the time of the general indexing."""
    if len(index) == 1 and type(index[0]) is np.ndarray and index[0].dtype.kind in "iu":
        return x.take(index[0], axis=0)
    return x[index]


# Advanced indexing copies; its backward adds g into zeros (np.add.at: repeats accumulate).
index_row = Op("index", _pick, jvp=LINEAR, kind="indexing",
               batch=_batch_index, doc="x[index] for index arrays and masks: a copy.",
               vjp=(lambda g, x_shape, index:
                    xp.run(index_backward_row, g, shape=x_shape, index=index),))
index_backward_row = Op("index_backward", _scatter_add, jvp=LINEAR, kind="indexing",
                        batch=_batch_scatter,
                        doc="Zeros of shape with g added at index (repeats accumulate).",
                        vjp=(lambda g, index: xp.run(index_row, g, index=index),))
# Behind Tensor.__setitem__: a batched tensor is never written in place (vmap loops for that).
index_put_row = Op("index_put", _put, inputs=("x", "value"), jvp=LINEAR, kind="indexing",
                   batch=Loops("in-place writes run per example"),
                   doc="A copy of x with value written at index.",
                   vjp=(lambda g, x_shape, index: g * _untouched(x_shape, index),
                        lambda g, index: _select(g, index)))
# An in-place op on a view rewrites its base's history with this row (`chainrule.inplace`):
# as index_put, but the region is wherever the view's rows reach (`replay`), PyTorch's CopySlices.
copy_slices_row = Op("copy_slices", lambda base, value, steps: _copy_slices(base, value, steps),
                     inputs=("base", "value"), jvp=LINEAR, kind="indexing",
                     batch=Loops("in-place writes run per example"),
                     doc="A copy of base with value written into the view that steps make.",
                     vjp=(lambda g, steps: g * _outside(g.shape, steps),
                          lambda g, steps: replay(g, steps)))
# fmt: on


def _copy_slices(base, value, steps: tuple):
    out = base.copy()  # C order: every view row's replay on it is a view, so the write lands
    replay(out, steps)[...] = value
    return out


def _outside(shape: tuple, steps: tuple) -> np.ndarray:
    """True where the view that ``steps`` make does not reach (what keeps the base's gradient)."""
    keep = np.ones(shape, dtype=bool)
    replay(keep, steps)[...] = False
    return keep


def _index_item(item, op: str):
    """One entry of an index as an int, a slice of ints, None, Ellipsis or an int/bool array."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        start, stop, step = (None if v is None else operator.index(v)
                             for v in (item.start, item.stop, item.step))  # fmt: skip
        if step is not None and step <= 0:
            raise ValueError(
                f"{op}: step must be greater than zero, got {step}; use flip() to reverse"
            )
        return slice(start, stop, step)
    if isinstance(item, (bool, np.bool_)):
        return np.array(item)
    if isinstance(item, numbers.Integral):
        return int(item)
    if isinstance(item, Tensor):
        item = item._array
        if item.ndim == 0 and item.dtype.kind in "iu":
            return int(item)  # a 0-d integer tensor indexes as an int (a view), as in PyTorch
    if isinstance(item, (list, tuple)):
        item = np.asarray([i._array if isinstance(i, Tensor) else i for i in item])
        if item.size == 0:
            item = item.astype(np.int64)
    if isinstance(item, np.ndarray):
        if item.dtype.kind not in "biu":
            raise IndexError(
                f"{op}: tensors used as indices must be integer or bool, got "
                f"{fmt_dtype(item.dtype)}"
            )
        return np.array(item)  # a copy: changing the index later cannot change the gradient
    raise IndexError(
        f"{op}: cannot index with {type(item).__name__}; use ints, slices, None, ..., lists, "
        "or integer or bool tensors"
    )


def _consumed(item) -> int:
    """How many dimensions of the tensor an index entry uses up."""
    if item is None or item is Ellipsis:
        return 0
    if isinstance(item, np.ndarray) and item.dtype == bool:
        return item.ndim
    return 1


def _check_in_range(item, shape: tuple, dim: int, op: str) -> None:
    if isinstance(item, np.ndarray) and item.dtype == bool:
        covered = shape[dim : dim + item.ndim]
        if item.shape != covered:
            raise IndexError(
                f"{op}: a mask of shape {fmt_shape(item.shape)} does not match the shape "
                f"{fmt_shape(covered)} of the tensor at dim {dim}"
            )
        return
    if isinstance(item, (int, np.ndarray)) and np.size(item):
        size = shape[dim]
        low, high = np.min(item), np.max(item)
        if low < -size or high >= size:
            bad = int(high if high >= size else low)
            raise OutOfRangeError(
                f"{op}: index {bad} is out of range for dim {dim} with size {size}"
            )


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def _normalize_index(shape: tuple, index, op: str = "getitem") -> tuple:
    """``index`` as a checked tuple of ints, slices, None, Ellipsis and int or bool arrays."""
    items = tuple(_index_item(i, op) for i in (index if isinstance(index, tuple) else (index,)))
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError(f"{op}: an index can only have one ellipsis ('...')")
    used = sum(_consumed(i) for i in items)
    if used > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of dimension {len(shape)}")
    dim = 0
    for item in items:
        if item is Ellipsis:
            dim += len(shape) - used
            continue
        _check_in_range(item, shape, dim, op)
        dim += _consumed(item)
    return items


def getitem(x, index):
    """``x[index]`` with PyTorch semantics (what ``Tensor.__getitem__`` calls).

    Ints, slices (positive steps), None and ``...`` give a view; lists, integer tensors and
    bool masks give a copy, and their backward adds up repeated indices.

    >>> import chainrule as cr
    >>> x = cr.arange(6).reshape(2, 3)
    >>> x[1, ::2], x[:, [0, 0]]
    (tensor([3, 5]), tensor([[0, 0],
            [3, 3]]))
    """
    tensor = isinstance(x, Tensor)
    shape = x._array.shape if tensor else np.shape(x)
    basic = _plain_basic(shape, index)
    if basic is not None:
        return getitem_row(x, index=basic) if tensor else _view(x, basic)
    return _select(x, _normalize_index(shape, index))


_INT_OR_NONE = (int, type(None))


def _plain_basic(shape: tuple, index) -> tuple | None:
    """``index`` as a normalised tuple when it is made of Python ints in range, slices of Python
    ints with a positive step and None (``x[0]``, ``x[:, 64:128]``, as a model's forward writes
    them): what `_normalize_index` gives, without its general work. None for anything else."""
    items = index if type(index) is tuple else (index,)
    dim = 0
    ndim = len(shape)
    for item in items:
        kind = type(item)
        if item is None:
            continue
        if dim == ndim:
            return None
        if kind is int:
            if not -shape[dim] <= item < shape[dim]:
                return None
        elif kind is slice:
            step = item.step
            if (
                type(item.start) not in _INT_OR_NONE
                or type(item.stop) not in _INT_OR_NONE
                or (step is not None and (type(step) is not int or step <= 0))
            ):
                return None
        else:
            return None
        dim += 1
    return items


def fitted_shape(given: tuple, target: tuple) -> tuple | None:
    """``given`` without the leading 1s that NumPy and PyTorch drop from a value written into
    ``target``, or None when it then does not broadcast to ``target``."""
    while len(given) > len(target) and given[0] == 1:
        given = given[1:]
    try:
        fits = np.broadcast_shapes(given, target) == target
    except ValueError:
        fits = False
    return given if fits else None


def index_put(x, index, value):
    """A copy of ``x`` with ``x[index] = value`` (value broadcast); ``Tensor.__setitem__``
    writes it back in place. With repeated indices the last write wins.

    >>> import chainrule as cr
    >>> cr.ops.indexing.index_put(cr.zeros(4), slice(1, 3), 5.0)
    tensor([0., 5., 5., 0.])
    """
    index = _normalize_index(np.shape(x), index, "index_put")
    if not isinstance(value, Tensor):
        # A constant becomes a Tensor so forward mode gives it a zero tangent.
        value = Tensor._make(np.asarray(value, dtype=getattr(x, "dtype", None)))
    target = _select(np.broadcast_to(np.zeros((), np.int8), np.shape(x)), index).shape
    if fitted_shape(value.shape, target) is None:
        raise ShapeError(
            f"index_put: cannot assign a value of shape {fmt_shape(value.shape)} to "
            f"x[index] of shape {fmt_shape(target)}"
        )
    return index_put_row(x, value, index=index)


def along(index: np.ndarray, dim: int) -> tuple:
    """The advanced index that reads ``index`` along ``dim``: ``index`` itself there, and an
    open grid (positions 0..m-1) along every other dim; what gather reads and scatter writes."""
    ndim = index.ndim
    return tuple(
        index if d == dim else np.arange(m).reshape([-1 if k == d else 1 for k in range(ndim)])
        for d, m in enumerate(index.shape)
    )


#: The index dtypes PyTorch's gather, scatter, index_select, index_add and index_reduce take;
#: index_copy, index_fill and take_along_dim take int64 only.
INT32_OR_64 = ("int64", "int32")
INT64 = ("int64",)


def index_array(
    index, op: str, ndim: int | None = None, dtypes: tuple[str, ...] | None = None
) -> np.ndarray:
    """``index`` (a Tensor, array or list) as an integer array, with ``ndim`` dims if given
    and, if given, one of ``dtypes`` (a list of ints is int64)."""
    index = np.asarray(index._array if isinstance(index, Tensor) else index)
    if index.dtype.kind not in "iu" and index.size:  # an empty list comes as float64
        raise DTypeError(f"{op}: index must be an integer tensor, got {fmt_dtype(index.dtype)}")
    if dtypes is not None and index.dtype.kind in "iu" and index.dtype.name not in dtypes:
        raise DTypeError(
            f"{op}: index must be an {' or '.join(dtypes)} tensor, got {fmt_dtype(index.dtype)}"
        )
    if ndim is not None and index.ndim != ndim:
        raise ShapeError(f"{op}: index must have {ndim} dimension(s), got shape "
                         f"{fmt_shape(index.shape)}")  # fmt: skip
    return index.astype(np.int64)


def check_in_range(index: np.ndarray, size: int, dim: int, op: str) -> None:
    """Every entry of ``index`` in [0, size), else an error naming the first bad one."""
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min() if index.min() < 0 else index.max())
        raise OutOfRangeError(f"{op}: index {bad} is out of range for dim {dim} with size {size}")


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def check_along(op: str, shape: tuple, dim: int, index, src_shape: tuple | None = None):
    """(dim, index) checked for gather and scatter: an int64 or int32 index with as many dims as
    the input (at least one), no larger than it outside ``dim`` (nor than ``src_shape`` anywhere),
    and every entry a valid position along ``dim``."""
    index = index_array(index, op, dtypes=INT32_OR_64)
    if not shape or index.ndim != len(shape):
        raise ShapeError(
            f"{op}: index of shape {fmt_shape(index.shape)} must have as many dimensions as "
            f"the input of shape {fmt_shape(shape)} (at least one)"
        )
    dim = check_dim(dim, len(shape), op)
    for d, (m, n) in enumerate(zip(index.shape, shape)):
        if d != dim and m > n:
            raise ShapeError(
                f"{op}: index of shape {fmt_shape(index.shape)} is larger than the input of "
                f"shape {fmt_shape(shape)} in dim {d}"
            )
    if src_shape is not None and (
        len(src_shape) != index.ndim or any(m > n for m, n in zip(index.shape, src_shape))
    ):
        raise ShapeError(
            f"{op}: index of shape {fmt_shape(index.shape)} is larger than src of shape "
            f"{fmt_shape(src_shape)}"
        )
    check_in_range(index, shape[dim], dim, op)
    return dim, index


def gather(x, dim: int, index):
    """Values of ``x`` picked along ``dim``: ``out[i][j] = x[index[i][j]][j]`` for dim 0.

    ``index`` is an integer tensor with as many dimensions as x and no larger in the other
    dims; the output has its shape. The backward adds up repeated indices.

    >>> import chainrule as cr
    >>> cr.tensor([[1, 2], [3, 4]]).gather(1, cr.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    return index_row(x, index=_gather_index(np.shape(x), dim, index))


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def _gather_index(shape: tuple, dim: int, index) -> tuple:
    """The checked advanced index that gathers ``index`` along ``dim`` of ``shape``."""
    dim, index = check_along("gather", shape, dim, index)
    return along(index, dim)


# Pieces along a dim, as views.


def narrow(x, dim: int, start: int, length: int):
    """Elements ``start`` .. ``start + length`` of dimension ``dim``, as a view (``start`` may
    be negative).

    >>> import chainrule as cr
    >>> cr.arange(6).reshape(2, 3).narrow(1, 1, 2).tolist()
    [[1, 2], [4, 5]]
    """
    shape = np.shape(x)
    if not shape:
        raise ShapeError("narrow: cannot narrow a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), "narrow")
    n = shape[dim]
    if not -n <= start <= n:
        raise OutOfRangeError(f"narrow: start {start} is out of range for dim {dim} of size {n}")
    start = start % n if start < 0 else start
    if length < 0 or start + length > n:
        raise ShapeError(f"narrow: start {start} + length {length} exceeds dim {dim} of size {n}")
    return getitem(x, (slice(None),) * dim + (slice(start, start + length),))


def select(x, dim: int, index: int):
    """The slice at ``index`` of dimension ``dim``, which goes away (``x[:, index]`` for
    dim 1), as a view.

    >>> import chainrule as cr
    >>> cr.arange(6).reshape(2, 3).select(1, -1).tolist()
    [2, 5]
    """
    shape = np.shape(x)
    if not shape:
        raise ShapeError("select: cannot select from a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), "select")
    if not -shape[dim] <= index < shape[dim]:
        raise OutOfRangeError(
            f"select: index {index} is out of range for dim {dim} of size {shape[dim]}"
        )
    return getitem(x, (slice(None),) * dim + (int(index),))


def unbind(x, dim: int = 0) -> tuple:
    """The slices along ``dim``, each without that dim, as views (``tuple(x)`` for dim 0).

    >>> import chainrule as cr
    >>> [t.tolist() for t in cr.arange(4).reshape(2, 2).unbind(1)]
    [[0, 2], [1, 3]]
    """
    shape = np.shape(x)
    if not shape:
        raise ShapeError("unbind: cannot unbind a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), "unbind")
    return tuple(select(x, dim, i) for i in range(shape[dim]))


# Reading along a dim by index: composed from the index row (its backward adds repeats up).


def index_select(x, dim: int, index):
    """The entries ``index`` (a 1-D integer tensor) of ``x`` along ``dim``, a copy.

    >>> import chainrule as cr
    >>> cr.arange(6).reshape(2, 3).index_select(1, cr.tensor([2, 0]))
    tensor([[2, 0],
            [5, 3]])
    """
    return index_row(x, index=_select_index(np.shape(x), dim, index))


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def _select_index(shape: tuple, dim: int, index) -> tuple:
    """The checked advanced index that picks the entries ``index`` (0-d or 1-d) along
    ``dim`` of ``shape``."""
    index = index_array(index, "index_select", dtypes=INT32_OR_64)
    if index.ndim > 1:
        raise ShapeError(
            f"index_select: index must be 0-d or 1-d, got shape {fmt_shape(index.shape)}"
        )
    if not shape:
        raise ShapeError("index_select: cannot select from a zero-dimensional tensor")
    dim = check_dim(dim, len(shape), "index_select")
    check_in_range(index, shape[dim], dim, "index_select")
    return (slice(None),) * dim + (index.reshape(-1),)


def take_along_dim(input, indices, dim: int | None = None):
    """`gather` after broadcasting ``input`` and ``indices`` against each other outside
    ``dim``; with dim None, the flattened input read at the flattened indices.

    >>> import chainrule as cr
    >>> x = cr.tensor([[10, 30, 20], [60, 40, 50]])
    >>> cr.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30],
            [60]])
    """
    shape = np.shape(input)
    grown, index = _take_index(shape, dim, indices)
    if dim is None:
        return index_row(input.reshape(-1), index=index)
    if grown != shape:
        input = input.expand(grown)
    return index_row(input, index=index)


@replayed_whole(pure=True)  # a compiled step reads and checks new index tensors each time
def _take_index(shape: tuple, dim: int | None, indices) -> tuple:
    """(the shape the input is expanded to, the checked advanced index) of take_along_dim."""
    indices = index_array(indices, "take_along_dim", dtypes=INT64)
    if dim is None:
        check_in_range(indices, math.prod(shape), 0, "take_along_dim")
        return (math.prod(shape),), (indices.reshape(-1),)
    if len(shape) != indices.ndim:
        raise ShapeError(
            f"take_along_dim: input of shape {fmt_shape(shape)} and indices of shape "
            f"{fmt_shape(indices.shape)} must have the same number of dimensions"
        )
    dim = check_dim(dim, len(shape), "take_along_dim")
    ones = lambda s: s[:dim] + (1,) + s[dim + 1 :]  # noqa: E731
    try:
        common = np.broadcast_shapes(ones(shape), ones(indices.shape))
    except ValueError:
        raise ShapeError(
            f"take_along_dim: input of shape {fmt_shape(shape)} and indices of shape "
            f"{fmt_shape(indices.shape)} do not broadcast outside dim {dim}"
        ) from None
    grown = lambda n: common[:dim] + (n,) + common[dim + 1 :]  # noqa: E731
    check_in_range(indices, shape[dim], dim, "take_along_dim")
    indices = np.broadcast_to(indices, grown(indices.shape[dim]))
    return grown(shape[dim]), along(indices, dim)
