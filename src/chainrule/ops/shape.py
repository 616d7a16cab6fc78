"""Shape rows: reshape, permute, expand, tile, flip, roll, cat, stack.

They only move or copy elements, so every JVP is the op itself (`LINEAR`), and every VJP moves
the gradient back. flatten, squeeze, split, atleast_1d/2d/3d, rot90, sum_to_size and friends
(and the NumPy-style names moveaxis, swapdims, ravel, fliplr, flipud) are composed from these
rows; joining and splitting several tensors is in `chainrule.ops.joining`, indexing in
`chainrule.ops.indexing`, padding in `chainrule.ops.padding`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..dispatch import apply_op
from ..errors import DTypeError, ShapeError, fmt_shape
from ..op import LINEAR, Op, shifted, with_rank
from .arguments import check_dim, check_dims, check_sizes
from .indexing import getitem_row
from .reduce import sum as reduce_sum

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "cat", "chunk", "expand",
    "flatten", "flip", "fliplr", "flipud", "moveaxis", "movedim", "permute", "ravel", "repeat",
    "reshape", "roll", "rot90", "split", "squeeze", "stack", "swapaxes", "swapdims", "t",
    "tile", "transpose", "unflatten", "unsqueeze",
]  # fmt: skip


class Variadic(Op):
    """A row over any number of tensors (cat, stack); ``vjp_for(i)`` is input i's VJP.

    An Op fixes its inputs when built, so this row builds one Op per number of inputs on first
    use (inputs x0, x1, ..., same name, forward and other facts) and runs it. Passing one list
    instead would hide the tensors from the graph's edges.
    """

    def __init__(self, name: str, forward: Callable, vjp_for: Callable, **row) -> None:
        super().__init__(name, forward, vjp=(vjp_for(0),), jvp=LINEAR, inputs=("x0",), **row)
        self.vjp_for = vjp_for
        self.row = row
        self.by_arity: dict[int, Op] = {1: self}

    def __call__(self, *tensors, **params) -> Tensor:
        n = len(tensors)
        op = self.by_arity.get(n)
        if op is None:
            vjp = tuple(self.vjp_for(i) for i in range(n))
            inputs = tuple(f"x{i}" for i in range(n))
            op = Op(self.name, self.forward, vjp, jvp=LINEAR, inputs=inputs, **self.row)
            self.by_arity[n] = op
        return apply_op(op, *tensors, **params)


# Batching rules (see `Op`): each moves its row's dims and shapes past the batch dim.


def broadcast_batch(x, size: int):
    """An unbatched ``x`` given a batch dim of ``size`` in front (a broadcast view: no copy)."""
    shape = tuple(np.shape(x))
    return expand_row(reshape_row(x, shape=(1, *shape)), shape=(size, *shape))


def _batch_reshape(op: Op, values, batched, params):
    (x,) = values
    shape = tuple(params["shape"])
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        shape = tuple(math.prod(x.shape[1:]) // known if n == -1 else n for n in shape)
    return op(x, shape=(x.shape[0], *shape))


def _batch_permute(op: Op, values, batched, params):
    return op(values[0], dims=(0, *shifted(params["dims"])))


def _batch_expand(op: Op, values, batched, params):
    shape = tuple(params["shape"])
    x = with_rank(values[0], len(shape))
    return op(x, shape=(x.shape[0], *shape))


def _batch_tile(op: Op, values, batched, params):
    reps = tuple(params["reps"])
    rank = max(len(reps), values[0].ndim - 1)
    return op(with_rank(values[0], rank), reps=(1,) * (1 + rank - len(reps)) + reps)


def _batch_flip(op: Op, values, batched, params):
    return op(values[0], dims=shifted(params["dims"]))


def _batch_roll(op: Op, values, batched, params):
    (x,) = values
    if params["dims"] is not None:
        return op(x, shifts=params["shifts"], dims=shifted(params["dims"]))
    # dims=None rolls the flattened tensor: flatten each example, roll, shape back.
    flat = reshape_row(x, shape=(x.shape[0], math.prod(x.shape[1:])))
    return reshape_row(op(flat, shifts=params["shifts"], dims=(1,)), shape=tuple(x.shape))


def _batch_join(op: Op, values, batched, params):
    size = next(v.shape[0] for v, b in zip(values, batched) if b)
    values = [v if b else broadcast_batch(v, size) for v, b in zip(values, batched)]
    return op(*values, **{**params, "dim": params["dim"] + 1})


# fmt: off
reshape_row = Op("reshape", lambda x, shape: np.asarray(x).reshape(shape),  # np.reshape's
                 vjp=(lambda g, x_shape: xp.reshape(g, x_shape),), jvp=LINEAR, view=True,
                 kind="shape", batch=_batch_reshape,
                 doc="x's elements in a new shape; a view when NumPy can make one.")
permute_row = Op("permute", lambda x, dims: np.asarray(x).transpose(dims),
                 vjp=(lambda g, dims: xp.permute(g, tuple(np.argsort(dims))),), jvp=LINEAR,
                 view=True, kind="shape", batch=_batch_permute,
                 doc="x with its dimensions reordered (a view).")
expand_row = Op("expand", lambda x, shape: np.broadcast_to(x, shape),
                vjp=(lambda g: g,), jvp=LINEAR, view=True,  # the engine sums g back
                kind="shape", batch=_batch_expand, doc="x broadcast to shape (a read-only view).")
tile_row = Op("tile", lambda x, reps: np.tile(x, reps),
              vjp=(lambda g, x_shape, reps: _untile(g, x_shape, reps),), jvp=LINEAR,
              kind="shape", batch=_batch_tile, doc="x repeated reps times along each dim.")
# A copy, as in PyTorch (np.flip alone would return a view).
flip_row = Op("flip", lambda x, dims: np.flip(x, dims).copy(),
              vjp=(lambda g, dims: xp.flip(g, dims),), jvp=LINEAR,
              kind="shape", batch=_batch_flip, doc="x with the order of dims reversed (a copy).")
roll_row = Op("roll", lambda x, shifts, dims: np.roll(x, shifts, dims),
              vjp=(lambda g, shifts, dims: xp.roll(g, tuple(-s for s in shifts), dims),),
              jvp=LINEAR, kind="shape", batch=_batch_roll,
              doc="x shifted cyclically along dims (the flattened x for dims=None).")
cat_row = Variadic("cat", lambda *xs, dim, sizes: np.concatenate(xs, axis=dim),
                   vjp_for=lambda i: lambda g, dim, sizes:
                   _narrow(g, dim, sum(sizes[:i]), sizes[i]),
                   kind="shape", batch=_batch_join, doc="The inputs joined along dim.")
stack_row = Variadic("stack", lambda *xs, dim: np.stack(xs, axis=dim),
                     vjp_for=lambda i: lambda g, dim:
                     xp.run(getitem_row, g, index=(slice(None),) * dim + (i,)),
                     kind="shape", batch=_batch_join,
                     doc="The inputs joined along a new dim.")
# fmt: on


def _untile(g, x_shape: tuple, reps: tuple):
    """Sum the copies that tile made: g viewed as (r0, n0, r1, n1, ...) summed over each r."""
    sizes = (1,) * (len(reps) - len(x_shape)) + tuple(x_shape)
    interleaved = tuple(n for pair in zip(reps, sizes) for n in pair)
    g = xp.sum(xp.reshape(g, interleaved), tuple(range(0, len(interleaved), 2)))
    return xp.reshape(g, x_shape)


def _narrow(x, dim: int, start: int, length: int):
    """Elements start..start+length of dimension ``dim``, a view (array or Tensor)."""
    return xp.run(getitem_row, x, index=(slice(None),) * dim + (slice(start, start + length),))


# Checking arguments.


def _fits(shape, given: tuple) -> bool:
    """Whether ``shape`` is a tuple of Python ints, at most one of them -1, that a tensor of
    shape ``given`` can take: the common case, answered without `_reshape_check`'s work."""
    if type(shape) is not tuple or not all(type(n) is int and n >= -1 for n in shape):
        return False
    size, product = math.prod(given), math.prod(shape)
    holes = shape.count(-1)
    return (not holes and product == size) or (holes == 1 and product < 0 and size % product == 0)


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
    if not _fits(shape, np.shape(x)):  # other types than ints, or a clear error
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
    start, end = (
        check_dim(start_dim, len(shape), "flatten"),
        check_dim(end_dim, len(shape), "flatten"),
    )
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
    dim = check_dim(dim, len(shape), "unflatten")
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
    dims = range(len(shape)) if dim is None else check_dims(dim, len(shape), "squeeze")
    kept = tuple(n for i, n in enumerate(shape) if not (i in dims and n == 1))
    return reshape_row(x, shape=kept)


def unsqueeze(x, dim: int):
    """A dimension of size 1 inserted at ``dim``, in [-ndim - 1, ndim].

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).unsqueeze(-1).shape
    (2, 3, 1)
    """
    shape = np.shape(x)
    dim = check_dim(dim, len(shape), "unsqueeze", extra=1)
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
    return permute_row(x, dims=check_dims(given, ndim, "permute") if ndim else ())


def transpose(x, dim0: int, dim1: int):
    """Dimensions dim0 and dim1 swapped.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).transpose(0, -1).shape
    (4, 3, 2)
    """
    ndim = np.ndim(x)
    dim0, dim1 = check_dim(dim0, ndim, "transpose"), check_dim(dim1, ndim, "transpose")
    dims = list(range(ndim))
    if ndim:
        dims[dim0], dims[dim1] = dims[dim1], dims[dim0]
    return permute_row(x, dims=tuple(dims))


def swapaxes(x, axis0: int, axis1: int):
    """`transpose` under NumPy's name (PyTorch has both)."""
    return transpose(x, axis0, axis1)


def t(x):
    """A matrix transposed; a tensor of fewer than 2 dims as it is (a view), as PyTorch's ``t``.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3).t().shape, cr.zeros(3).t().shape
    ((3, 2), (3,))
    """
    ndim = np.ndim(x)
    if ndim > 2:
        raise ShapeError(
            f"t: expects a tensor of at most 2 dims, got shape {fmt_shape(np.shape(x))}"
        )
    return permute_row(x, dims=tuple(range(ndim - 1, -1, -1)))


def movedim(x, source, destination):
    """Dimensions ``source`` (an int or a sequence) moved to positions ``destination``, the
    others keeping their order, as a view.

    >>> import chainrule as cr
    >>> cr.zeros(2, 3, 4).movedim(0, -1).shape, cr.zeros(2, 3, 4).movedim((0, 1), (2, 0)).shape
    ((3, 4, 2), (3, 4, 2))
    """
    ndim = np.ndim(x)
    single = isinstance(source, numbers.Integral)
    source = (source,) if single else tuple(source)
    destination = (destination,) if isinstance(destination, numbers.Integral) else tuple(
        destination)  # fmt: skip
    if len(source) != len(destination):
        raise ShapeError(f"movedim: {len(source)} source dims but {len(destination)} destinations")
    source = [check_dim(d, ndim, "movedim") for d in source]
    destination = [check_dim(d, ndim, "movedim") for d in destination]
    if len(set(source)) < len(source) or len(set(destination)) < len(destination):
        raise ShapeError(f"movedim: repeated dims in {source} or {destination}")
    rest = iter(d for d in range(ndim) if d not in source)
    placed = dict(zip(destination, source))
    return permute_row(x, dims=tuple(placed[i] if i in placed else next(rest) for i in range(ndim)))


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
    reps = check_sizes(reps, "tile", "repetitions")
    ndim = np.ndim(x)
    return tile_row(x, reps=(1,) * (ndim - len(reps)) + reps)


def repeat(x, repeats):
    """PyTorch's repeat: `tile`, but ``repeats`` must have at least one entry per dimension.

    >>> import chainrule as cr
    >>> cr.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    repeats = check_sizes(repeats, "repeat", "repetitions")
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
    return flip_row(x, dims=check_dims(dims, np.ndim(x), "flip"))


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
        dims = tuple(check_dim(d, np.ndim(x), "roll") for d in dims)
    if len(shifts) != (1 if dims is None else len(dims)):
        raise ShapeError(f"roll: give one shift per dim, got shifts {shifts} and dims {dims}")
    return roll_row(x, shifts=shifts, dims=dims)


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
    dim = check_dim(dim, len(first), "cat")
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
    return stack_row(*tensors, dim=check_dim(dim, len(shapes[0]), "stack", extra=1))


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
    dim = check_dim(dim, len(shape), "split")
    n = shape[dim]
    if isinstance(split_size_or_sections, numbers.Integral):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ShapeError(f"split: split_size must be positive, got {size}")
        sizes = [size] * (n // size) + ([n % size] if n % size else []) or [0]
    else:
        sizes = list(check_sizes(split_size_or_sections, "split", "section sizes"))
        if sum(sizes) != n:
            raise ShapeError(
                f"split: sizes {tuple(sizes)} add up to {sum(sizes)}, but dim {dim} has size {n}"
            )
    pieces = []
    start = 0
    for size in sizes:
        pieces.append(_narrow(x, dim, start, size))
        start += size
    return tuple(pieces)


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
    n = shape[check_dim(dim, len(shape), "chunk")] if shape else 0
    return split(x, max(-(-n // int(chunks)), 1), dim)


# At least n dims.


def _at_least(x, ndim: int):
    """x with dims of size 1 added to reach ndim, as NumPy's atleast_1d/2d/3d place them."""
    shape = np.shape(x)
    if len(shape) >= ndim:
        return x
    if ndim == 3:
        shape = {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]
    else:
        shape = (1,) * (ndim - len(shape)) + shape
    return reshape(x, shape)


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


# Turning and summing to a size.


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


# Shapes and orders under their NumPy-style names.

moveaxis = movedim
swapdims = transpose


def ravel(input):
    """input's elements in one dimension, row-major (a copy only when they are not laid out
    that way already), as ``torch.ravel``.

    >>> import chainrule as cr
    >>> cr.ravel(cr.tensor([[1, 2], [3, 4]]))
    tensor([1, 2, 3, 4])
    """
    return reshape(input, (-1,))


def fliplr(input):
    """input with dimension 1 reversed (left and right, for a matrix); at least 2-D.

    >>> import chainrule as cr
    >>> cr.fliplr(cr.tensor([[1, 2], [3, 4]]))
    tensor([[2, 1],
            [4, 3]])
    """
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input must be at least 2-D, got shape {fmt_shape(input.shape)}")
    return flip(input, (1,))


def flipud(input):
    """input with dimension 0 reversed (up and down, for a matrix); at least 1-D.

    >>> import chainrule as cr
    >>> cr.flipud(cr.tensor([[1, 2], [3, 4]]))
    tensor([[3, 4],
            [1, 2]])
    """
    if input.ndim < 1:
        raise ShapeError("flipud: input must be at least 1-D, got a 0-d tensor")
    return flip(input, (0,))
