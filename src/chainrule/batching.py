"""What `chainrule.func.vmap` runs on: `BatchTracer`, a batching rule per op, batched gradients.

A BatchTracer wraps ``inner``, a Tensor holding every example with the batch dimension first,
and shows the shape of one example. An op on a tracer runs once, on ``inner``, through its
rule in `RULES`, which moves dims and params past the batch dim. Anything the batched run
cannot do raises `NeedsValues` and vmap runs ``func`` once per example instead; `vmap` and
its argument handling live in `chainrule.func`. Backward rules never see tracers: gradients
are taken on the batched tensors underneath (`grad`).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import math
import string
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from . import function
from .autograd import grad as autograd_grad
from .errors import GraphError, fmt_shape
from .function import ElementwiseJVP, Op
from .ops.shape import expand_row, permute_row, reshape_row
from .tensor import Tensor

# The module (chainrule.tensor, the package attribute, is the tensor() factory): vmap swaps
# its random generator.
tensor_module = importlib.import_module(".tensor", __package__)


class NeedsValues(Exception):
    """The batched run of vmap level ``level`` cannot go on; vmap catches this and runs
    ``func`` once per example. Raised by: element values read (``.item()``, ``if t:``,
    NumPy on ``.data``), an op without a batching rule, an in-place change of a batched
    tensor, and random draws with ``randomness='different'``."""

    def __init__(self, level: int | None, reason: str) -> None:
        super().__init__(reason)
        self.level = level


class VmapError(GraphError):
    """A misuse of vmap that running ``func`` per example would not fix: vmap raises it at
    once instead of looping."""


class ShapeOnly:
    """The ``data`` of a BatchTracer: one example's shape and dtype, no values.

    Shape questions (``np.shape``, ``.ndim``, ``np.zeros_like``) get answers; anything that
    would read values raises `NeedsValues`, so no code can compute with a stand-in.
    """

    __slots__ = ("shape", "dtype", "level")

    def __init__(self, shape: tuple, dtype: np.dtype, level: int) -> None:
        self.shape, self.dtype, self.level = tuple(shape), dtype, level

    @property
    def ndim(self) -> int:
        """The number of dimensions of one example."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements of one example."""
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def _refuse(self, *args, **kwargs):
        raise NeedsValues(self.level, "func reads the values of a batched tensor")

    item = tolist = copy = astype = view = reshape = __array__ = __array_ufunc__ = _refuse
    __getitem__ = __setitem__ = __iter__ = __bool__ = __float__ = __int__ = __index__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __rtruediv__ = __pow__ = __rpow__ = __neg__ = __abs__ = __matmul__ = __rmatmul__ = _refuse
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = object.__hash__

    def __getattr__(self, name: str):
        if name.startswith("__"):  # protocol probes (NumPy's __array_interface__...)
            raise AttributeError(name)
        raise NeedsValues(self.level, f"func reads .data.{name} of a batched tensor")

    def __array_function__(self, fn, types, args, kwargs):
        # Shape-only NumPy functions see a zero-stride stand-in (no memory); the _like
        # functions give one example's shape, which is the same for every example.
        if fn in _METADATA or (fn in _LIKE and not _holds_shape_only(args[1:], kwargs)):
            stand_in = lambda a: np.broadcast_to(np.zeros((), a.dtype), a.shape)  # noqa: E731
            args = [stand_in(a) if isinstance(a, ShapeOnly) else a for a in args]
            return fn(*args, **kwargs)
        self._refuse()

    def __repr__(self) -> str:
        return f"ShapeOnly({fmt_shape(self.shape)}, {self.dtype})"


_METADATA = {np.shape, np.ndim, np.size, np.result_type}
_LIKE = {np.zeros_like, np.ones_like, np.empty_like, np.full_like}


def _holds_shape_only(args, kwargs) -> bool:
    return any(isinstance(a, ShapeOnly) for a in (*args, *kwargs.values()))


class BatchTracer(Tensor):
    """A Tensor inside vmap: ``inner`` holds all examples (batch dim first) of vmap level
    ``level``; the tracer has one example's shape. Nested vmaps nest tracers: ``inner`` may
    be a tracer of an outer level. Ops on it dispatch to `RULES` (see `dispatch`)."""

    __slots__ = ("inner", "level")

    @classmethod
    def wrap(cls, inner: Tensor, level: int) -> BatchTracer:
        """A tracer of ``level`` whose examples are ``inner``'s slices along dim 0."""
        t = cls.__new__(cls)
        t.inner, t.level = inner, level
        t.data = ShapeOnly(inner.shape[1:], inner.dtype, level)
        t.grad, t._output_nr, t._hooks, t._tangent = None, 0, None, None
        t._version_counter = inner._version_counter
        return t

    @property
    def requires_grad(self) -> bool:
        """Whether the batched tensor underneath requires grad."""
        return self.inner.requires_grad

    @property
    def grad_fn(self):
        """The node that made the batched tensor underneath."""
        return self.inner.grad_fn

    def requires_grad_(self, requires_grad: bool = True) -> BatchTracer:
        """Set requires_grad on the batched tensor underneath."""
        self.inner.requires_grad_(requires_grad)
        return self

    def detach(self) -> BatchTracer:
        """The same examples without history."""
        return BatchTracer.wrap(self.inner.detach(), self.level)

    def backward(self, *args, **kwargs) -> None:
        """Refused: inside vmap, take gradients with chainrule.func.grad."""
        raise VmapError(
            "backward: .backward() inside vmap is not supported; use chainrule.func.grad, "
            "e.g. vmap(grad(loss)) for per-example gradients"
        )

    def numpy(self) -> np.ndarray:
        """Values: vmap runs func per example instead."""
        raise NeedsValues(self.level, "func calls .numpy() on a batched tensor")

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        raise NeedsValues(self.level, "func converts a batched tensor to a NumPy array")

    def _inplace(self, op, other, name: str):
        # Rebinding ``inner`` would miss views that share memory; the per-example loop is exact.
        raise NeedsValues(self.level, f"{name}: in-place change of a batched tensor")

    def register_hook(self, hook):
        """Hooks see per-example gradients: vmap runs func per example instead."""
        raise NeedsValues(self.level, "register_hook on a batched tensor")

    def retain_grad(self) -> None:
        """Per-example .grad: vmap runs func per example instead."""
        raise NeedsValues(self.level, "retain_grad on a batched tensor")

    def __repr__(self) -> str:
        return (
            f"BatchTracer(level={self.level}, batch_size={self.inner.shape[0]}, "
            f"shape={fmt_shape(self.shape)})"
        )


# Levels. Each batched run of vmap pushes one; nested vmaps get higher numbers.

_active: list[tuple[int, int]] = []  # (level, batch size), innermost last
_numbers = itertools.count(1)


def active_levels() -> list[tuple[int, int]]:
    """The (level, batch size) pairs of the vmaps now running batched, outermost first."""
    return list(_active)


@contextlib.contextmanager
def new_level(size: int) -> Iterator[int]:
    """Run a block as vmap level ``level`` of batch size ``size``: ops on its tracers
    dispatch to their rules."""
    level = next(_numbers)
    _active.append((level, size))
    function.batch_hook = dispatch
    try:
        yield level
    finally:
        _active.pop()
        if not _active:
            function.batch_hook = None


def dispatch(op, args: Sequence, params: dict):
    """Run ``op`` on the innermost level's tracers through its rule, or None when no argument
    is a tracer (`chainrule.function.apply_op` then runs it as usual)."""
    level = max((a.level for a in args if isinstance(a, BatchTracer)), default=None)
    if level is None:
        return None
    name = op.name if isinstance(op, Op) else op.__name__  # an Op row or a Function class
    if any(isinstance(p, BatchTracer) for p in params.values()):
        raise NeedsValues(level, f"{name}: a batched tensor passed as a parameter")
    rule = RULES.get(name) if isinstance(op, Op) else None
    if rule is None and isinstance(op, Op) and isinstance(op.jvp, ElementwiseJVP):
        rule = _elementwise
    if rule is None:
        raise NeedsValues(level, f"{name} has no batching rule")
    values = [a.inner if isinstance(a, BatchTracer) and a.level == level else a for a in args]
    batched = [v is not a for v, a in zip(values, args)]
    try:
        out = rule(op, values, batched, params)
    except NeedsValues as exc:
        if exc.level is None:  # raised by the rule itself
            exc.level = level
        raise
    return BatchTracer.wrap(out, level)


# Batching rules. Each gets the op, its arguments (a batched one replaced by its ``inner``,
# batch dim first), which of them are batched, and the params the public function checked
# against one example; it returns the batched result, batch dim first.


def _rank(value, is_batched: bool) -> int:
    return np.ndim(value) - is_batched


def _with_rank(x, rank: int):
    """A batched ``x`` with size-1 dims after the batch dim, so one example has ``rank`` dims
    and broadcasts against unbatched operands the way one example would."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    return reshape_row(x, shape=(x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


def broadcast_batch(x, size: int):
    """An unbatched ``x`` given a batch dim of ``size`` (a broadcast view: no copy)."""
    shape = tuple(np.shape(x))
    return expand_row(reshape_row(x, shape=(1, *shape)), shape=(size, *shape))


def _all_batched(values: Sequence, batched: Sequence[bool]) -> list:
    size = next(v.shape[0] for v, b in zip(values, batched) if b)
    return [v if b else broadcast_batch(v, size) for v, b in zip(values, batched)]


def _shifted(dims) -> tuple:
    return tuple(d + 1 for d in dims)


def _elementwise(op: Op, values, batched, params):
    # Broadcasting aligns dims from the right: give every batched operand the full rank
    # first, and the batch dim lands in front of the result.
    ranks = [_rank(v, b) for v, b in zip(values, batched)]
    ranks += [np.ndim(p) for p in params.values() if isinstance(p, (Tensor, np.ndarray))]
    rank = max(ranks)
    return op(*[_with_rank(v, rank) if b else v for v, b in zip(values, batched)], **params)


def _reduction(op: Op, values, batched, params):
    return op(values[0], **{**params, "dim": _shifted(params["dim"])})


def _arg_reduction(op: Op, values, batched, params):
    (x,) = values
    if params["dim"] is not None:
        return op(x, dim=params["dim"] + 1, keepdim=params["keepdim"])
    size = x.shape[0]  # dim=None: over each example's flattened elements
    out = op(reshape_row(x, shape=(size, math.prod(x.shape[1:]))), dim=1, keepdim=False)
    return reshape_row(out, shape=(size,) + (1,) * (x.ndim - 1)) if params["keepdim"] else out


def _reshape(op: Op, values, batched, params):
    (x,) = values
    shape = tuple(params["shape"])
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        shape = tuple(math.prod(x.shape[1:]) // known if n == -1 else n for n in shape)
    return op(x, shape=(x.shape[0], *shape))


def _permute(op: Op, values, batched, params):
    return op(values[0], dims=(0, *_shifted(params["dims"])))


def _expand(op: Op, values, batched, params):
    shape = tuple(params["shape"])
    x = _with_rank(values[0], len(shape))
    return op(x, shape=(x.shape[0], *shape))


def _tile(op: Op, values, batched, params):
    reps = tuple(params["reps"])
    rank = max(len(reps), values[0].ndim - 1)
    return op(_with_rank(values[0], rank), reps=(1,) * (1 + rank - len(reps)) + reps)


def _flip(op: Op, values, batched, params):
    return op(values[0], dims=_shifted(params["dims"]))


def _roll(op: Op, values, batched, params):
    (x,) = values
    if params["dims"] is not None:
        return op(x, shifts=params["shifts"], dims=_shifted(params["dims"]))
    # dims=None rolls the flattened tensor: flatten each example, roll, shape back.
    flat = reshape_row(x, shape=(x.shape[0], math.prod(x.shape[1:])))
    return reshape_row(op(flat, shifts=params["shifts"], dims=(1,)), shape=tuple(x.shape))


def _getitem(op: Op, values, batched, params):
    return op(values[0], index=(slice(None), *params["index"]))


def _index(op: Op, values, batched, params):
    index = params["index"]
    out = op(values[0], index=(slice(None), *index))
    arrays = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    if not arrays or arrays == list(range(arrays[0], arrays[-1] + 1)):
        return out
    # Index arrays apart from each other put their broadcast dims first (NumPy's rule), and
    # the batch dim after them: move it back to the front.
    front = max(1 if index[i].dtype == bool else index[i].ndim for i in arrays)
    order = (front, *range(front), *range(front + 1, out.ndim))
    return permute_row(out, dims=order)


def _scatter(op: Op, values, batched, params):
    # getitem_backward and index_backward (reverse mode over a batch of cotangents): write
    # each example's gradient into its own slice of the zeros.
    (g,) = values
    index = params["index"]
    arrays = [i for i, item in enumerate(index) if isinstance(item, np.ndarray)]
    if arrays and arrays != list(range(arrays[0], arrays[-1] + 1)):
        # Apart, index arrays take their broadcast dims first (see `_index`): so must g.
        front = max(1 if index[i].dtype == bool else index[i].ndim for i in arrays)
        g = permute_row(g, dims=(*range(1, front + 1), 0, *range(front + 1, g.ndim)))
    return op(g, shape=(g.shape[0], *params["shape"]), index=(slice(None), *index))


def _cat(op: Op, values, batched, params):
    return op(*_all_batched(values, batched), **{**params, "dim": params["dim"] + 1})


def _pad(op: Op, values, batched, params):
    return op(values[0], widths=((0, 0), *params["widths"]), value=params["value"])


def _matmul(op: Op, values, batched, params):
    x, y = values
    if batched[0] and not batched[1] and np.ndim(y) == 2:
        # (B, ..., m, k) @ (k, n): one matrix product with the batch merged into the rows,
        # not B small ones.
        rows = tuple(x.shape[:-1])
        flat = reshape_row(x, shape=(math.prod(rows), x.shape[-1]))
        return reshape_row(op(flat, y), shape=(*rows, y.shape[-1]))
    rank = max(_rank(x, batched[0]), _rank(y, batched[1]))
    return op(*[_with_rank(v, rank) if b else v for v, b in zip(values, batched)])


def _einsum(op: Op, values, batched, params):
    equation = params["equation"]  # explicit: no '...', one letter per dimension
    spare = [c for c in string.ascii_letters if c not in equation]
    if not spare:
        raise NeedsValues(None, "einsum: no subscript letter left for the batch dim")
    lhs, output = equation.split("->")
    terms = [spare[0] + t if b else t for t, b in zip(lhs.split(","), batched)]
    return op(*values, equation=",".join(terms) + "->" + spare[0] + output)


def _samples(op: Op, values, batched, params):
    # Rows over a fixed-rank array whose first dim is a batch of independent samples
    # (unfold, fold: (N, C, H, W) and (N, C*kH*kW, L)): the vmap batch joins that dim.
    (x,) = values
    merged = reshape_row(x, shape=(x.shape[0] * x.shape[1], *x.shape[2:]))
    out = op(merged, **params)
    return reshape_row(out, shape=(x.shape[0], x.shape[1], *out.shape[1:]))


_ELEMENTWISE = (
    "maximum minimum where clamp leaky_relu cast clone lt le gt ge eq ne logical_not "
    "logical_and logical_or"
)
_REDUCTIONS = "sum mean var std prod amax amin logsumexp norm all any softmax log_softmax"

#: The batching rule of each op by name: these ops run once on the whole batch. Ops made
#: with `chainrule.elementwise` (add, mul, exp, tanh, relu, ...) use `_elementwise` without
#: an entry. Every other op sends vmap to its per-example loop.
RULES: dict[str, Callable] = {
    **{name: _elementwise for name in _ELEMENTWISE.split()},
    **{name: _reduction for name in _REDUCTIONS.split()},
    "argmax": _arg_reduction,
    "argmin": _arg_reduction,
    "reshape": _reshape,
    "permute": _permute,
    "expand": _expand,
    "tile": _tile,
    "flip": _flip,
    "roll": _roll,
    "getitem": _getitem,
    "index": _index,
    "getitem_backward": _scatter,
    "index_backward": _scatter,
    "cat": _cat,
    "stack": _cat,
    "pad": _pad,
    "matmul": _matmul,
    "einsum": _einsum,
    "unfold": _samples,
    "fold": _samples,
}


# Moving between levels: the transforms in chainrule.func use these to take gradients and
# tangents through batch dims.


def levels_of(x) -> list[int]:
    """The vmap levels ``x`` is batched at, outermost first."""
    levels = []
    while isinstance(x, BatchTracer):
        levels.append(x.level)
        x = x.inner
    return levels[::-1]


def unwrap(x):
    """The plain Tensor under every level of ``x``: its batch dims first, outermost first."""
    while isinstance(x, BatchTracer):
        x = x.inner
    return x


def wrap(x: Tensor, levels: Sequence[int]):
    """The inverse of `unwrap`: ``x``'s leading dims become the batch dims of ``levels``."""
    for level in levels:
        x = BatchTracer.wrap(x, level)
    return x


def lift(x, levels: Sequence[int] | None = None):
    """``x`` batched at each of ``levels`` (default: every active level), by broadcasting it
    along the levels it is not batched at. ``x`` must not be batched at any other level."""
    sizes = dict(_active)
    levels = sorted(sizes if levels is None else levels)
    if not levels:
        return x
    *outer, top = levels
    if isinstance(x, BatchTracer) and x.level == top:
        return BatchTracer.wrap(lift(x.inner, outer), top)
    return BatchTracer.wrap(broadcast_batch(lift(x, outer), sizes[top]), top)


def grad(outputs, inputs, grad_outputs=None, **options) -> tuple:
    """`chainrule.autograd.grad` through batch dims: one backward pass gives each example's
    gradient, because examples never mix. Needs the inputs batched wherever the outputs or
    cotangents are (the transforms lift their inputs first); when they are not (vmap over a
    ``vjp_fn`` made outside it), one pass would add the examples up, so vmap loops instead.
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    given = [] if grad_outputs is None else list(grad_outputs)
    levels = sorted({level for t in outputs + given for level in levels_of(t)})
    for x in inputs:
        missing = set(levels) - set(levels_of(x))
        if missing:
            raise NeedsValues(
                max(missing), "a gradient wrt inputs not batched where the outputs are"
            )
    # An input batched at more levels than the outputs did not reach them: its gradient is 0.
    used = [levels_of(x) == levels for x in inputs]
    outs = [unwrap(lift(o, levels)) for o in outputs]
    if grad_outputs is None:
        seeds = [Tensor._make(np.ones(o.shape, o.dtype)) for o in outs]
    else:
        seeds = [unwrap(lift(g, levels)) for g in given]
    reals = [unwrap(x) for x, u in zip(inputs, used) if u]
    grads = list(autograd_grad(outs, reals, grad_outputs=seeds, **options)) if reals else []
    result = []
    for is_used in used:
        g = grads.pop(0) if is_used else None
        result.append(None if g is None else wrap(g, levels))
    return tuple(result)


def rewrap_like(like, x: Tensor):
    """``x`` (all of ``like``'s batch dims first) batched at ``like``'s levels."""
    return wrap(x, levels_of(like))


# Random draws inside vmap.


class _RandomGuard:
    """Stands in for chainrule's generator while vmap runs: a draw raises (reading or
    restoring the generator's state is not a draw, so checkpoint keeps working)."""

    def __init__(self, generator, randomness: str, level: int | None) -> None:
        self.generator, self.randomness, self.level = generator, randomness, level

    @property
    def bit_generator(self):
        """The real generator's bit generator (its state)."""
        return self.generator.bit_generator

    def __getattr__(self, name: str):
        getattr(self.generator, name)  # AttributeError for a name a Generator lacks

        def draw(*args, **kwargs):
            if self.randomness == "error":
                raise VmapError(
                    f"vmap: func draws random numbers ({name}) but randomness='error'; pass "
                    "randomness='different' (each example its own draws) or 'same' (one draw "
                    "shared by every example)"
                )
            raise NeedsValues(self.level, "random draws with randomness='different'")

        return draw


@contextlib.contextmanager
def guard_random(randomness: str, level: int | None) -> Iterator[None]:
    """Make random draws raise: a VmapError for ``randomness='error'``, and NeedsValues
    (so vmap loops) for ``'different'`` in the batched run of ``level``."""
    previous = tensor_module._generator
    guard = _RandomGuard(previous, randomness, level)
    tensor_module._generator = guard
    try:
        yield
    finally:
        if tensor_module._generator is guard:  # unless func called manual_seed
            tensor_module._generator = previous
