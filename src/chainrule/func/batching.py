"""What `chainrule.func.vmap` runs on: `BatchTracer`, dispatch to each row's batching rule,
and batched gradients.

A BatchTracer wraps ``inner``, a Tensor holding every example with the batch dimension first,
and shows the shape of one example. An op on a tracer runs once, on ``inner``, through the
batching rule its row carries (``op.batch``), which moves dims and params past the batch
dim. Anything the batched run cannot do raises `NeedsValues` and vmap runs ``func`` once per
example instead; `vmap` and its argument handling live in `chainrule.func`. Backward rules
never see tracers: gradients are taken on the batched tensors underneath (`grad`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from .. import dispatch, random
from .._tensor import Tensor
from ..autograd import grad as autograd_grad
from ..errors import GraphError, fmt_shape
from ..op import Loops, NeedsValues, Op
from ..ops.shape import broadcast_batch


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
        raise NeedsValues(self.level, f"func reads the array's .{name} of a batched tensor")

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
    be a tracer of an outer level. Ops on it run through their rows' rules (see `run_batched`)."""

    __slots__ = ("inner", "level")

    @classmethod
    def wrap(cls, inner: Tensor, level: int) -> BatchTracer:
        """A tracer of ``level`` whose examples are ``inner``'s slices along dim 0."""
        t = cls.__new__(cls)
        t.inner, t.level = inner, level
        t._array = ShapeOnly(inner.shape[1:], inner.dtype, level)
        t._grad, t._output_nr, t._hooks, t._tangent, t._view = None, 0, None, None, None
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

    # The engine reads the slots behind those two; a tracer has none of its own.
    _requires_grad = requires_grad
    _grad_fn = grad_fn

    def requires_grad_(self, requires_grad: bool = True) -> BatchTracer:
        """Set requires_grad on the batched tensor underneath."""
        self.inner.requires_grad_(requires_grad)
        return self

    def detach(self) -> BatchTracer:
        """The same examples without history."""
        return BatchTracer.wrap(self.inner.detach(), self.level)

    @property
    def data(self) -> BatchTracer:
        """The same examples outside autograd (`Tensor.data` of the batched tensor)."""
        return BatchTracer.wrap(self.inner.data, self.level)

    @data.setter
    def data(self, value) -> None:
        raise NeedsValues(self.level, "assigning .data of a batched tensor")

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
    dispatch.batch_hook = run_batched
    try:
        yield level
    finally:
        _active.pop()
        if not _active:
            dispatch.batch_hook = None


def run_batched(op, args: Sequence, params: dict):
    """Run ``op`` on the innermost level's tracers through its row's batching rule (``op.batch``),
    or None when no argument is a tracer (`chainrule.dispatch.apply_op` then runs it as usual)."""
    level = max((a.level for a in args if isinstance(a, BatchTracer)), default=None)
    if level is None:
        return None
    name = op.name if isinstance(op, Op) else op.__name__  # an Op row or a Function class
    if any(isinstance(p, BatchTracer) for p in params.values()):
        raise NeedsValues(level, f"{name}: a batched tensor passed as a parameter")
    rule = op.batch if isinstance(op, Op) else Loops("a Function has none")
    if rule is None or isinstance(rule, Loops):
        reason = f": {rule.reason}" if rule else ""
        raise NeedsValues(level, f"{name} has no batching rule{reason}")
    values = [a.inner if isinstance(a, BatchTracer) and a.level == level else a for a in args]
    batched = [v is not a for v, a in zip(values, args)]
    try:
        out = rule(op, values, batched, params)
    except NeedsValues as exc:
        if exc.level is None:  # raised by the rule itself
            exc.level = level
        raise
    return BatchTracer.wrap(out, level)


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

    def snapshot(self) -> tuple:
        """The real generator's state (reading it is not a draw)."""
        return self.generator.snapshot()

    def restore(self, snapshot: tuple) -> None:
        """Restore the real generator's state."""
        self.generator.restore(snapshot)

    def refuse_draw(self, op: str) -> None:
        """Raise for a draw by ``op``: VmapError under 'error', else NeedsValues (vmap then
        runs func example by example)."""
        if self.randomness == "error":
            raise VmapError(
                f"vmap: func draws random numbers ({op}) but randomness='error'; pass "
                "randomness='different' (each example its own draws) or 'same' (one draw "
                "shared by every example)"
            )
        raise NeedsValues(self.level, "random draws with randomness='different'")

    def __getattr__(self, name: str):
        getattr(self.generator, name)  # AttributeError for a name a Generator lacks
        return lambda *args, **kwargs: self.refuse_draw(name)


@contextlib.contextmanager
def guard_random(randomness: str, level: int | None) -> Iterator[None]:
    """Make random draws raise: a VmapError for ``randomness='error'``, and NeedsValues
    (so vmap loops) for ``'different'`` in the batched run of ``level``."""
    guard = _RandomGuard(random.current_generator(), randomness, level)
    previous = random.swap_generator(guard)
    try:
        yield
    finally:
        random.swap_generator(previous)
