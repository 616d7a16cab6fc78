"""Shape rows: reshape, permute, expand, tile, flip, roll, indexing, cat, stack, pad.

They only move or copy elements, so every JVP is the op itself (`LINEAR`), and every VJP moves
the gradient back. flatten, squeeze, split, gather and friends are composed from these rows.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Sequence

import numpy as np

from .. import xp
from ..errors import DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..function import LINEAR, Op, apply_op
from ..tensor import Tensor

__all__ = [
    "broadcast_to", "cat", "chunk", "expand", "flatten", "flip", "gather", "pad", "permute",
    "repeat", "reshape", "roll", "split", "squeeze", "stack", "tile", "transpose", "unflatten",
    "unsqueeze",
]  # fmt: skip


def _call(row: Op, *args, **params):
    """Run ``row`` inside a rule: its forward on arrays, the row itself on Tensors (a backward
    with create_graph=True records it), as `chainrule.xp` does for public functions."""
    if any(isinstance(a, Tensor) for a in args):
        return row(*args, **params)
    return row.forward(*args, **params)


class Variadic(Op):
    """A row over any number of tensors (cat, stack); ``vjp_for(i)`` is input i's VJP.

    An Op fixes its inputs when built, so this row builds one Op per number of inputs on first
    use (inputs x0, x1, ..., same name and forward) and runs it. Passing one list instead would
    hide the tensors from the graph's edges.
    """

    def __init__(self, name: str, forward: Callable, vjp_for: Callable, **options) -> None:
        super().__init__(name, forward, vjp=(vjp_for(0),), jvp=LINEAR, inputs=("x0",), **options)
        self.vjp_for = vjp_for
        self.options = options
        self.by_arity: dict[int, Op] = {1: self}

    def __call__(self, *tensors, **params) -> Tensor:
        n = len(tensors)
        op = self.by_arity.get(n)
        if op is None:
            vjp = tuple(self.vjp_for(i) for i in range(n))
            inputs = tuple(f"x{i}" for i in range(n))
            op = Op(self.name, self.forward, vjp, jvp=LINEAR, inputs=inputs, **self.options)
            self.by_arity[n] = op
        return apply_op(op, *tensors, **params)


# Indexing. An index is normalised to a tuple of ints, slices (step > 0), None, Ellipsis and
# int or bool arrays, then applied in PyTorch's order: the basic part first (a view), then the
# arrays on what is left. NumPy alone differs: x[0, :, [0, 1]] has shape (2, n) there, (n, 2) in
# PyTorch.


def _view(x, index: tuple):
    """x[index] for a basic index, always an array view (x[0, ...] is 0-d, x[0] a scalar)."""
    return x[index] if any(i is Ellipsis for i in index) else x[(*index, Ellipsis)]


def _scatter(g, shape: tuple, index: tuple):
    """Zeros of ``shape`` with g written at a basic index (no element is hit twice)."""
    out = np.zeros(shape, g.dtype)
    _view(out, index)[...] = g
    return out


def _scatter_add(g, shape: tuple, index: tuple):
    """Zeros of ``shape`` with g added at an advanced index: repeated indices accumulate."""
    out = np.zeros(shape, g.dtype)
    np.add.at(out, index, g)
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
        x = _call(getitem_row, x, index=basic)
    if advanced is not None:
        x = _call(index_row, x, index=advanced)
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


def _untouched(shape: tuple, index: tuple) -> np.ndarray:
    """A bool mask of ``shape``: False where index_put writes."""
    kept = np.ones(shape, bool)
    _assign(kept, index, False)
    return kept


# fmt: off
reshape_row = Op("reshape", lambda x, shape: np.reshape(x, shape),
                 vjp=(lambda g, x_shape: xp.reshape(g, x_shape),), jvp=LINEAR, view=True)
permute_row = Op("permute", lambda x, dims: np.transpose(x, dims),
                 vjp=(lambda g, dims: xp.permute(g, tuple(np.argsort(dims))),), jvp=LINEAR,
                 view=True)
expand_row = Op("expand", lambda x, shape: np.broadcast_to(x, shape),
                vjp=(lambda g: g,), jvp=LINEAR, view=True)  # the engine sums g back
tile_row = Op("tile", lambda x, reps: np.tile(x, reps),
              vjp=(lambda g, x_shape, reps: _untile(g, x_shape, reps),), jvp=LINEAR)
# A copy, as in PyTorch (np.flip alone would return a view).
flip_row = Op("flip", lambda x, dims: np.flip(x, dims).copy(),
              vjp=(lambda g, dims: xp.flip(g, dims),), jvp=LINEAR)
roll_row = Op("roll", lambda x, shifts, dims: np.roll(x, shifts, dims),
              vjp=(lambda g, shifts, dims: xp.roll(g, tuple(-s for s in shifts), dims),),
              jvp=LINEAR)

# Basic indexing returns a view; its backward writes g into zeros, whose backward reads it back.
getitem_row = Op("getitem", _view, view=True, jvp=LINEAR,
                 vjp=(lambda g, x_shape, index:
                      _call(getitem_backward_row, g, shape=x_shape, index=index),))
getitem_backward_row = Op("getitem_backward", _scatter, jvp=LINEAR,
                          vjp=(lambda g, index: _call(getitem_row, g, index=index),))
# Advanced indexing copies; its backward adds g into zeros (np.add.at: repeats accumulate).
index_row = Op("index", lambda x, index: x[index], jvp=LINEAR,
               vjp=(lambda g, x_shape, index:
                    _call(index_backward_row, g, shape=x_shape, index=index),))
index_backward_row = Op("index_backward", _scatter_add, jvp=LINEAR,
                        vjp=(lambda g, index: _call(index_row, g, index=index),))
index_put_row = Op("index_put", _put, inputs=("x", "value"), jvp=LINEAR,
                   vjp=(lambda g, x_shape, index: g * _untouched(x_shape, index),
                        lambda g, index: _select(g, index)))

cat_row = Variadic("cat", lambda *xs, dim, sizes: np.concatenate(xs, axis=dim),
                   vjp_for=lambda i: lambda g, dim, sizes:
                   _narrow(g, dim, sum(sizes[:i]), sizes[i]))
stack_row = Variadic("stack", lambda *xs, dim: np.stack(xs, axis=dim),
                     vjp_for=lambda i: lambda g, dim:
                     _call(getitem_row, g, index=(slice(None),) * dim + (i,)))
# Constant padding is affine, not linear, in x: the tangent is padded with 0, not value.
pad_row = Op("pad", lambda x, widths, value: np.pad(x, widths, constant_values=value),
             vjp=(lambda g, x_shape, widths: _call(getitem_row, g, index=tuple(
                 slice(before, before + n) for (before, _), n in zip(widths, x_shape))),),
             jvp=(lambda dx, widths: _call(pad_row, dx, widths=widths, value=0),))
# fmt: on


def _untile(g, x_shape: tuple, reps: tuple):
    """Sum the copies that tile made: g viewed as (r0, n0, r1, n1, ...) summed over each r."""
    sizes = (1,) * (len(reps) - len(x_shape)) + tuple(x_shape)
    interleaved = tuple(n for pair in zip(reps, sizes) for n in pair)
    g = xp.sum(xp.reshape(g, interleaved), tuple(range(0, len(interleaved), 2)))
    return xp.reshape(g, x_shape)


def _narrow(x, dim: int, start: int, length: int):
    """Elements start..start+length of dimension ``dim``, a view (array or Tensor)."""
    return _call(getitem_row, x, index=(slice(None),) * dim + (slice(start, start + length),))


# Checking arguments.


def _dim(dim, ndim: int, op: str, extra: int = 0) -> int:
    """``dim`` as a non-negative int below ndim + extra (a 0-d tensor takes dim 0 and -1)."""
    if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
        raise DTypeError(f"{op}: dim must be an int, got {dim!r}")
    bound = max(ndim + extra, 1)
    if not -bound <= dim < bound:
        raise ShapeError(
            f"{op}: dim {dim} is out of range [{-bound}, {bound - 1}] for a tensor with "
            f"{ndim} dimensions"
        )
    return int(dim) % bound


def _dims(dims, ndim: int, op: str) -> tuple[int, ...]:
    """An int or a sequence of dims as distinct non-negative ints."""
    given = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    out = tuple(_dim(d, ndim, op) for d in given)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dims {given} name a dimension more than once")
    return out


def _sizes(sizes, op: str, what: str) -> tuple[int, ...]:
    """Non-negative ints, or a clear error naming ``what`` they are."""
    sizes = (sizes,) if isinstance(sizes, numbers.Integral) else tuple(sizes)
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in sizes):
        raise ShapeError(f"{op}: {what} must be non-negative integers, got {sizes}")
    return tuple(int(n) for n in sizes)


def _reshape_check(x, shape: tuple) -> None:
    known = math.prod(n for n in shape if n != -1)
    size = math.prod(np.shape(x))
    if (
        shape.count(-1) > 1
        or any(n < -1 for n in shape)
        or (-1 not in shape and known != size)
        or (-1 in shape and (known == 0 or size % known))
    ):
        raise ShapeError(
            f"reshape: cannot reshape a tensor of shape {fmt_shape(np.shape(x))} "
            f"({size} elements) into {shape}"
        )


# Reshaping.


def reshape(x, shape):
    """The same elements in ``shape`` (one entry may be -1); a view when NumPy can make one.

    >>> import chainrule as cr
    >>> cr.arange(6).reshape(2, -1).shape
    (2, 3)
    """
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(int(n) for n in shape)
    _reshape_check(x, shape)
    return reshape_row(x, shape=shape)


def flatten(x, start_dim: int = 0, end_dim: int = -1):
    """Dimensions start_dim..end_dim merged into one; a 0-d tensor becomes shape (1,).

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).flatten(1).shape
    (2, 12)
    """
    shape = np.shape(x)
    if not shape:
        return reshape_row(x, shape=(1,))
    start, end = _dim(start_dim, len(shape), "flatten"), _dim(end_dim, len(shape), "flatten")
    if start > end:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = math.prod(shape[start : end + 1])
    return reshape_row(x, shape=shape[:start] + (merged,) + shape[end + 1 :])


def unflatten(x, dim: int, sizes: Sequence[int]):
    """Dimension ``dim`` split into ``sizes`` (one entry may be -1).

    >>> import chainrule as cr
    >>> cr.zeros(2, 12).unflatten(1, (3, -1)).shape
    (2, 3, 4)
    """
    shape = np.shape(x)
    dim = _dim(dim, len(shape), "unflatten")
    sizes = tuple(int(n) for n in sizes)
    n = shape[dim] if shape else 1
    known = math.prod(s for s in sizes if s != -1)
    if (
        not sizes
        or sizes.count(-1) > 1
        or any(s < -1 for s in sizes)
        or (-1 not in sizes and known != n)
        or (-1 in sizes and (known == 0 or n % known))
    ):
        raise ShapeError(f"unflatten: sizes {sizes} do not fit dim {dim} of size {n}")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape_row(x, shape=shape[:dim] + sizes + shape[dim + 1 :])


def squeeze(x, dim=None):
    """Dimensions of size 1 removed: all of them, or those in ``dim`` (an int or a tuple).

    A named dimension whose size is not 1 is kept, as in PyTorch.

    >>> import chainrule as cr
    >>> cr.zeros(1, 3, 1).squeeze().shape, cr.zeros(1, 3, 1).squeeze(1).shape
    ((3,), (1, 3, 1))
    """
    shape = np.shape(x)
    dims = range(len(shape)) if dim is None else _dims(dim, len(shape), "squeeze")
    kept = tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1))
    return reshape_row(x, shape=kept)


def unsqueeze(x, dim: int):
    """A dimension of size 1 inserted at ``dim``, in [-ndim - 1, ndim].

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).unsqueeze(-1).shape
    (2, 3, 1)
    """
    shape = np.shape(x)
    dim = _dim(dim, len(shape), "unsqueeze", extra=1)
    return reshape_row(x, shape=shape[:dim] + (1,) + shape[dim:])


def permute(x, dims):
    """The dimensions reordered: output dim i is input dim ``dims[i]``.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    ndim = np.ndim(x)
    given = tuple(dims)
    if len(given) != ndim:
        raise ShapeError(
            f"permute: dims {given} must name each of the {ndim} dimensions of a tensor of "
            f"shape {fmt_shape(np.shape(x))} once"
        )
    return permute_row(x, dims=_dims(given, ndim, "permute") if ndim else ())


def transpose(x, dim0: int, dim1: int):
    """Dimensions dim0 and dim1 swapped.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).transpose(0, -1).shape
    (4, 3, 2)
    """
    ndim = np.ndim(x)
    dim0, dim1 = _dim(dim0, ndim, "transpose"), _dim(dim1, ndim, "transpose")
    dims = list(range(ndim))
    if ndim:
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute_row(x, dims=tuple(dims))


def expand(x, shape):
    """A read-only broadcast view of ``x`` with ``shape``; -1 keeps a dimension's size.

    >>> import chainrule as cr
    >>> cr.zeros(3, 1).expand(2, -1, 4).shape
    (2, 3, 4)
    """
    shape = tuple(int(n) for n in shape)
    x_shape = np.shape(x)
    lead = len(shape) - len(x_shape)
    fits = lead >= 0 and all(n >= -1 for n in shape) and -1 not in shape[:lead]
    if fits:
        shape = shape[:lead] + tuple(m if n == -1 else n for m, n in zip(x_shape, shape[lead:]))
        fits = all(m in (1, n) for m, n in zip(x_shape, shape[lead:]))
    if not fits:
        raise ShapeError(
            f"expand: cannot expand shape {fmt_shape(x_shape)} to {shape}; each dimension "
            "must match or be 1, and new dimensions go first"
        )
    return expand_row(x, shape=shape)


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``: the same as `expand`.

    >>> import chainrule as cr
    >>> cr.broadcast_to(cr.zeros(3), (2, 3)).shape
    (2, 3)
    """
    return expand(x, shape)


# Copying and moving elements.


def tile(x, reps):
    """``x`` repeated ``reps[i]`` times along dim i; fewer reps than dims get leading 1s.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).tile(2)
    tensor([1, 2, 1, 2])
    """
    reps = _sizes(reps, "tile", "repetitions")
    ndim = np.ndim(x)
    return tile_row(x, reps=(1,) * (ndim - len(reps)) + reps)


def repeat(x, repeats):
    """PyTorch's repeat: `tile`, but ``repeats`` must have at least one entry per dimension.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    repeats = _sizes(repeats, "repeat", "repetitions")
    ndim = np.ndim(x)
    if len(repeats) < ndim:
        raise ShapeError(
            f"repeat: repeats {repeats} has fewer entries than the {ndim} dimensions of a tensor "
            f"of shape {fmt_shape(np.shape(x))}; use tile() to pad them with leading 1s"
        )
    return tile_row(x, reps=repeats)


def flip(x, dims):
    """The order of elements reversed along ``dims`` (an int or a tuple); a copy.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2, 3]).flip(0)
    tensor([3, 2, 1])
    """
    return flip_row(x, dims=_dims(dims, np.ndim(x), "flip"))


def roll(x, shifts, dims=None):
    """Elements shifted cyclically by ``shifts`` along ``dims`` (one shift per dim); with
    dims None, along the flattened tensor.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3])
    """
    shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(shifts)
    shifts = tuple(int(s) for s in shifts)
    if dims is not None:
        dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
        dims = tuple(_dim(d, np.ndim(x), "roll") for d in dims)
    if len(shifts) != (1 if dims is None else len(dims)):
        raise ShapeError(f"roll: give one shift per dim, got shifts {shifts} and dims {dims}")
    return roll_row(x, shifts=shifts, dims=dims)


# Indexing.


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
        item = item.data
    if isinstance(item, (list, tuple)):
        item = np.asarray([i.data if isinstance(i, Tensor) else i for i in item])
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
            raise IndexError(f"{op}: index {bad} is out of range for dim {dim} with size {size}")


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
    return _select(x, _normalize_index(np.shape(x), index))


def index_put(x, index, value):
    """A copy of ``x`` with ``x[index] = value`` (value broadcast); ``Tensor.__setitem__``
    writes it back in place. With repeated indices the last write wins.

    >>> import chainrule as cr
    >>> cr.ops.shape.index_put(cr.zeros(4), slice(1, 3), 5.0)
    tensor([0., 5., 5., 0.])
    """
    index = _normalize_index(np.shape(x), index, "index_put")
    if not isinstance(value, Tensor):
        # A constant becomes a Tensor so forward mode gives it a zero tangent.
        value = Tensor._make(np.asarray(value, dtype=getattr(x, "dtype", None)))
    target = _select(np.broadcast_to(np.zeros((), np.int8), np.shape(x)), index).shape
    given = value.shape
    while len(given) > len(target) and given[0] == 1:
        given = given[1:]  # NumPy and PyTorch drop leading 1s of the value
    try:
        fits = np.broadcast_shapes(given, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(
            f"index_put: cannot assign a value of shape {fmt_shape(value.shape)} to "
            f"x[index] of shape {fmt_shape(target)}"
        )
    return index_put_row(x, value, index=index)


def gather(x, dim: int, index):
    """Values of ``x`` picked along ``dim``: ``out[i][j] = x[index[i][j]][j]`` for dim 0.

    ``index`` is an integer tensor with as many dimensions as x and no larger in the other
    dims; the output has its shape. The backward adds up repeated indices.

    >>> import chainrule as cr
    >>> cr.tensor([[1, 2], [3, 4]]).gather(1, cr.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    shape = np.shape(x)
    index = index.data if isinstance(index, Tensor) else np.asarray(index)
    if index.dtype.kind not in "iu":
        raise DTypeError(f"gather: index must be an integer tensor, got {fmt_dtype(index.dtype)}")
    if not shape or index.ndim != len(shape):
        raise ShapeError(
            f"gather: index of shape {fmt_shape(index.shape)} must have as many dimensions as "
            f"the input of shape {fmt_shape(shape)} (at least one)"
        )
    dim = _dim(dim, len(shape), "gather")
    for d, (m, n) in enumerate(zip(index.shape, shape)):
        if d != dim and m > n:
            raise ShapeError(
                f"gather: index of shape {fmt_shape(index.shape)} is larger than the input of "
                f"shape {fmt_shape(shape)} in dim {d}"
            )
    if index.size and (index.min() < 0 or index.max() >= shape[dim]):
        bad = int(index.min() if index.min() < 0 else index.max())
        raise IndexError(
            f"gather: index {bad} is out of range for dim {dim} with size {shape[dim]}"
        )
    # An open grid: the index along dim, positions 0..m-1 along every other dim.
    grid = tuple(
        np.array(index)
        if d == dim
        else np.arange(m).reshape([-1 if k == d else 1 for k in range(index.ndim)])
        for d, m in enumerate(index.shape)
    )
    return index_row(x, index=grid)


# Joining and splitting.


def cat(tensors: Sequence, dim: int = 0):
    """The tensors joined along ``dim``; every other dimension must match.

    >>> import chainrule as cr
    >>> cr.cat([cr.zeros(2, 3), cr.ones(1, 3)]).shape
    (3, 3)
    """
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("cat: expected a non-empty sequence of tensors")
    shapes = [np.shape(t) for t in tensors]
    first = shapes[0]
    for shape in shapes[1:]:
        if len(shape) != len(first):
            raise ShapeError(
                f"cat: tensors must have the same number of dimensions, got {fmt_shape(first)} "
                f"and {fmt_shape(shape)}"
            )
    if not first:
        raise ShapeError("cat: zero-dimensional tensors cannot be joined; use stack()")
    dim = _dim(dim, len(first), "cat")
    for shape in shapes[1:]:
        if shape[:dim] + shape[dim + 1 :] != first[:dim] + first[dim + 1 :]:
            raise ShapeError(
                f"cat: sizes must match except in dim {dim}, got {fmt_shape(first)} and "
                f"{fmt_shape(shape)}"
            )
    return cat_row(*tensors, dim=dim, sizes=tuple(shape[dim] for shape in shapes))


def stack(tensors: Sequence, dim: int = 0):
    """The tensors, all of one shape, joined along a new dimension ``dim``.

    >>> import chainrule as cr
    >>> cr.stack([cr.zeros(2, 3), cr.ones(2, 3)], dim=-1).shape
    (2, 3, 2)
    """
    tensors = tuple(tensors)
    if not tensors:
        raise ShapeError("stack: expected a non-empty sequence of tensors")
    shapes = [np.shape(t) for t in tensors]
    for i, shape in enumerate(shapes[1:], start=1):
        if shape != shapes[0]:
            raise ShapeError(
                f"stack: all tensors must have the same shape, got {fmt_shape(shapes[0])} at "
                f"position 0 and {fmt_shape(shape)} at position {i}"
            )
    return stack_row(*tensors, dim=_dim(dim, len(shapes[0]), "stack", extra=1))


def split(x, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of ``x`` along ``dim``: pieces of ``split_size`` (the last may be smaller), or of
    the sizes in a list.

    >>> import chainrule as cr
    >>> [t.shape for t in cr.zeros(5, 2).split(2)]
    [(2, 2), (2, 2), (1, 2)]
    """
    shape = np.shape(x)
    if not shape:
        raise ShapeError("split: cannot split a zero-dimensional tensor")
    dim = _dim(dim, len(shape), "split")
    n = shape[dim]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ShapeError(f"split: split_size must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) or [0]
    else:
        sizes = list(_sizes(split_size_or_sections, "split", "section sizes"))
        if sum(sizes) != n:
            raise ShapeError(
                f"split: sizes {tuple(sizes)} add up to {sum(sizes)}, but dim {dim} has size {n}"
            )
    starts = np.cumsum([0, *sizes[:-1]])
    return tuple(_narrow(x, dim, int(start), size) for start, size in zip(starts, sizes))


def chunk(x, chunks: int, dim: int = 0) -> tuple:
    """At most ``chunks`` views of equal size along ``dim`` (the last may be smaller), as in
    PyTorch.

    >>> import chainrule as cr
    >>> [t.shape for t in cr.zeros(5).chunk(3)]
    [(2,), (2,), (1,)]
    """
    if not isinstance(chunks, numbers.Integral) or chunks <= 0:
        raise ShapeError(f"chunk: chunks must be a positive integer, got {chunks!r}")
    shape = np.shape(x)
    n = shape[_dim(dim, len(shape), "chunk")] if shape else 0
    return split(x, max(-(-n // int(chunks)), 1), dim)


# Padding.

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _source_positions(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each position of a padded dim, the input position it copies (non-constant modes)."""
    positions = np.arange(-before, n + after)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    if mode == "circular":
        return positions % n
    period = 2 * (n - 1)  # reflect: ... 2 1 | 0 1 2 | 1 0 ...
    positions = np.abs(positions) % max(period, 1)
    return np.where(positions >= n, period - positions, positions)


def pad(x, pad: Sequence[int], mode: str = "constant", value: float | None = 0):
    """``x`` padded as ``torch.nn.functional.pad``: ``pad`` pairs (before, after) from the
    last dim backwards, e.g. (left, right, top, bottom); negative amounts crop.

    Modes: "constant" (with ``value``), "reflect", "replicate" and "circular"; unlike
    PyTorch, the non-constant modes take any number of leading dims.

    >>> import chainrule as cr
    >>> cr.pad(cr.tensor([1.0, 2.0]), (1, 2), value=9.0)
    tensor([9., 1., 2., 9., 9.])
    """
    amounts = tuple(pad)
    shape = np.shape(x)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode {mode!r} is not one of {', '.join(_PAD_MODES)}")
    if len(amounts) % 2 or not all(isinstance(p, numbers.Integral) for p in amounts):
        raise ShapeError(
            f"pad: padding {amounts} must be integers in (before, after) pairs, last dim first"
        )
    if len(amounts) // 2 > len(shape):
        raise ShapeError(
            f"pad: padding {amounts} pads {len(amounts) // 2} dimensions, but the input has "
            f"shape {fmt_shape(shape)}"
        )
    widths = [(0, 0)] * len(shape)
    for k in range(len(amounts) // 2):
        widths[len(shape) - 1 - k] = (int(amounts[2 * k]), int(amounts[2 * k + 1]))
    for d, ((before, after), n) in enumerate(zip(widths, shape)):
        if n + before + after < 0:
            raise ShapeError(
                f"pad: padding ({before}, {after}) leaves dim {d} of size {n} with a negative size"
            )
        limit = {"reflect": n - 1, "circular": n}.get(mode)  # copies within one period
        if limit is not None and (before > limit or after > limit):
            raise ShapeError(
                f"pad: {mode} padding ({before}, {after}) must be at most {limit} for dim {d} "
                f"of size {n}"
            )
    if mode != "constant" and amounts:
        # An open grid over the padded (trailing) dims: each output position's source.
        padded = range(len(shape) - len(amounts) // 2, len(shape))
        grid = tuple(
            _source_positions(shape[d], *widths[d], mode).reshape(
                [-1 if k == d else 1 for k in padded]
            )
            for d in padded
        )
        return index_row(x, index=(Ellipsis, *grid))
    if any(before < 0 or after < 0 for before, after in widths):
        x = getitem(x, tuple(slice(max(-b, 0), n - max(-a, 0)) for (b, a), n in zip(widths, shape)))
        widths = [(max(b, 0), max(a, 0)) for b, a in widths]
    return pad_row(x, widths=tuple(widths), value=0 if value is None else value)
