"""The tensors drawn from a `Generator`: ``rand``, ``randn``, ``randint``, their ``_like``
forms, ``randperm``, ``multinomial``, ``bernoulli``, ``normal``, ``poisson``, and the values
the in-place fills (``Tensor.normal_``...) write. ``nn.init``, dropout and the data loaders
draw here too. Each draws PyTorch's numbers from PyTorch's stream (`chainrule.generator`):
the same words, in the same order, through the same conversion as PyTorch's CPU kernel.

In-place fills of a tensor that is not contiguous draw in its memory order, as PyTorch's
kernels walk such a tensor. One documented hook, `swap_generator`, lets vmap stand a guard in
for the default generator while it runs a function on batched tensors (draws there must be
batched or refused): every draw without ``generator=`` goes through `current_generator()`.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterator

import numpy as np

from . import methods, rejection_sampling, vector_math
from ._tensor import Tensor
from .creation import _new, _size
from .dtypes import as_device, as_dtype, bool_, get_default_dtype, int64
from .errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from .generator import DEFAULT_SEED, Generator  # noqa: F401  (re-exported)
from .observe import replayed_whole

#: The generator `manual_seed` seeds and every draw without ``generator=`` uses
#: (``torch.default_generator``); seeded from the operating system at import, as PyTorch's.
default_generator = Generator()
default_generator.seed()
_current = default_generator


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (rand, randn, init, dropout...); returns it, as PyTorch."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state: PyTorch's 5056 bytes, for `set_rng_state`."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from `get_rng_state` (PyTorch's too)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(
    devices=None, enabled: bool = True, _caller: str = "fork_rng",
    _devices_kw: str = "devices", device_type: str = "cuda",
) -> Iterator[None]:  # fmt: skip
    """Run a block with the default generator's state saved and restored after it, so draws
    inside leave the stream outside untouched (``torch.random.fork_rng``; there are no
    devices here, so ``devices`` and ``device_type`` change nothing).

    >>> _ = manual_seed(3)
    >>> with fork_rng():
    ...     inside = rand(2)
    >>> bool((rand(2) == inside).all())
    True
    """
    if not enabled:
        yield
        return
    saved = default_generator.snapshot()
    try:
        yield
    finally:
        default_generator.restore(saved)


def current_generator():
    """The generator draws without ``generator=`` use: the default one, or vmap's guard."""
    return _current


def swap_generator(generator):
    """Make ``generator`` the one every draw without ``generator=`` uses; returns the one it
    replaces (vmap's hook)."""
    global _current
    previous, _current = _current, generator
    return previous


def resolve(generator, op: str) -> Generator:
    """The generator a draw uses: ``generator``, or the current one for None."""
    if generator is None:
        refuse = getattr(_current, "refuse_draw", None)  # vmap's guard
        if refuse is not None:
            refuse(op)
        return _current
    if isinstance(generator, Generator):
        return generator
    raise DTypeError(f"{op}: generator must be a chainrule.Generator, got {_describe(generator)}")


def fill_order(shape: tuple, strides: tuple) -> list[int]:
    """The dims, outermost first, in the order PyTorch's kernels walk a tensor of ``shape``
    and ``strides`` (and lay out a new one like it): an insertion sort by stride, where a 0
    stride (a broadcast dim) decides nothing and equal strides put the smaller dim inside."""
    order = list(range(len(shape) - 1, -1, -1))  # innermost first while sorting

    def after(d0: int, d1: int) -> int:
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            verdict = after(order[k], order[j])
            if verdict > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif verdict < 0:
                break
    return order[::-1]


def in_memory_order(array: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (drawn one after another) laid out in a new array of ``array``'s shape in
    the order PyTorch's kernels walk ``array`` (`fill_order`)."""
    order = fill_order(array.shape, array.strides)
    if order == sorted(order):
        return values.reshape(array.shape)
    out = np.empty(array.shape, values.dtype)
    view = np.transpose(out, order)
    view[...] = values.reshape(view.shape)
    return out


class _BatchDraws:
    """vmap's per-example loop with ``randomness='different'``: PyTorch draws each random op
    once for the whole batch (and for normals the batch's size picks the path). So the first
    example's k-th draw of a shape (rand, randn, randint, dropout's masks) draws for every
    example, and each example takes its row. Draws that depend on values (bernoulli of a
    tensor, multinomial, poisson...) are drawn example by example."""

    def __init__(self, size: int) -> None:
        self.size, self.example, self.calls, self.drawn = size, 0, 0, []

    def start(self, example: int) -> None:
        """Begin the function's run on ``example``."""
        self.example, self.calls = example, 0

    def take(self, draw, shape: tuple) -> np.ndarray:
        """The current example's row of the k-th draw (``draw(shape)`` makes one)."""
        k, self.calls = self.calls, self.calls + 1
        if self.example == 0:
            self.drawn.append(draw((self.size,) + shape))
        return self.drawn[k][self.example]


_batch_draws: _BatchDraws | None = None


@contextlib.contextmanager
def drawn_per_batch(size: int) -> Iterator[_BatchDraws]:
    """While vmap loops over ``size`` examples, draws of a shape come from batched draws."""
    global _batch_draws
    previous, _batch_draws = _batch_draws, _BatchDraws(size)
    try:
        yield _batch_draws
    finally:
        _batch_draws = previous


def _normal_array(shape: tuple, dtype, mean: float, std: float, generator, op: str,
                  contiguous: bool = True) -> np.ndarray:  # fmt: skip
    """Normal samples as PyTorch's ``normal_`` kernel draws them: blocks of 16 for a
    contiguous tensor of 16 or more, else one at a time in float64."""
    if not contiguous:
        return _unbatched_normal(shape, dtype, mean, std, generator, op, contiguous)

    def draw(full: tuple) -> np.ndarray:
        return _unbatched_normal(full, dtype, mean, std, generator, op, True)

    return _shaped(shape, generator, draw)


def _shaped(shape: tuple, generator, draw) -> np.ndarray:
    """``draw(shape)``; in vmap's per-example loop, this example's row of the batch's draw."""
    if _batch_draws is not None and generator is None:
        return _batch_draws.take(draw, shape)
    return draw(shape)


def _unbatched_normal(shape: tuple, dtype, mean: float, std: float, generator, op: str,
                      contiguous: bool) -> np.ndarray:  # fmt: skip
    g, n = resolve(generator, op), math.prod(shape)
    if n >= 16 and contiguous:
        return g.normal_fill(n, dtype, mean, std).reshape(shape)
    values = vector_math.fma64(g.normals(n), std, mean)
    return values.astype(dtype).reshape(shape)


def _describe(x) -> str:
    if isinstance(x, Tensor):
        return f"a {fmt_dtype(x.dtype)} tensor of shape {fmt_shape(x.shape)}"
    return type(x).__name__


def _float_dtype(dtype, op: str) -> np.dtype:
    dtype = as_dtype(dtype, op) or get_default_dtype()
    if dtype.kind != "f":
        raise DTypeError(f"{op}: draws floating-point numbers; dtype {fmt_dtype(dtype)} is not")
    return dtype


def _tensor_arg(x, op: str, name: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise DTypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _with_zero_gradient(array: np.ndarray, *inputs) -> Tensor:
    """A tensor of ``array`` that, as PyTorch's samples, passes a zero gradient back to the
    inputs that require grad (sampling is not reparameterised)."""
    out = Tensor._make(array)
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad:
            tie = methods.ops.elementwise.fill(methods.ops.expand(x, array.shape), 0)
            out = out + tie.to(array.dtype)
    return out


# Tensors of a given size.


@replayed_whole
def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1).

    >>> rand(2, 3).shape, rand((4,), dtype="float64").dtype
    ((2, 3), dtype('float64'))
    """
    as_device(device, "rand")
    shape, dtype = _size(size), _float_dtype(dtype, "rand")
    g = resolve(generator, "rand")
    array = _shaped(shape, generator, lambda s: g.unit(math.prod(s), dtype).reshape(s))
    return _new(array.astype(dtype, copy=False), requires_grad)


@replayed_whole
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples.

    >>> randn(5).shape
    (5,)
    """
    as_device(device, "randn")
    shape, dtype = _size(size), _float_dtype(dtype, "randn")
    return _new(_normal_array(shape, dtype, 0.0, 1.0, generator, "randn"), requires_grad)


@replayed_whole
def randint(
    low: int = 0, high=None, size=None, *, generator=None, dtype=None, device=None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """Integers uniform in [low, high), int64 by default, as PyTorch takes them:
    ``randint(high, size)`` or ``randint(low, high, size)``, ``size`` a tuple.

    >>> randint(10, (16,)).shape, randint(3, 5, (2, 2)).shape, randint(10, size=(3,)).dtype
    ((16,), (2, 2), dtype('int64'))
    """
    as_device(device, "randint")
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # randint(high, size)
    elif high is None:
        low, high = 0, low  # randint(high, size=...)
    if size is None or not isinstance(size, (tuple, list)):
        got = "no size" if size is None else f"size {size!r}"
        raise DTypeError(
            f"randint: got {got}; size must be a tuple: randint(high, size) or "
            "randint(low, high, size), such as randint(10, (16,))"
        )
    for name, bound in (("low", low), ("high", high)):
        if not isinstance(bound, numbers.Integral):
            raise DTypeError(f"randint: {name} must be an integer, got {bound!r}")
    if not low < high:
        raise DomainError(f"randint: low ({low}) must be less than high ({high})")
    shape = _size((size,))
    g, span = resolve(generator, "randint"), int(high) - int(low)
    draws = _shaped(shape, generator, lambda s: g.integers(math.prod(s), span).reshape(s))
    array = (draws.astype(np.int64) + int(low)).reshape(shape)
    return _new(array.astype(as_dtype(dtype, "randint") or int64), requires_grad)


@replayed_whole
def randperm(
    n: int, *, generator=None, dtype=int64, device=None, requires_grad: bool = False
) -> Tensor:
    """A random permutation of 0, ..., n - 1.

    >>> sorted(randperm(4).tolist())
    [0, 1, 2, 3]
    """
    as_device(device, "randperm")
    if not isinstance(n, numbers.Integral) or n < 0:
        raise DomainError(f"randperm: n must be a non-negative integer, got {n!r}")
    array = _permutation(resolve(generator, "randperm"), int(n))
    return _new(array.astype(as_dtype(dtype, "randperm") or int64), requires_grad)


def _permutation(g: Generator, n: int) -> np.ndarray:
    """PyTorch's CPU shuffle: for i = 0 .. n - 2, swap element i with element
    i + word % (n - i)."""
    if n < 2:
        return np.arange(n)
    offsets = (g.words(n - 1).astype(np.int64) % np.arange(n, 1, -1)).tolist()
    order = list(range(n))
    for i, z in enumerate(offsets):
        j = i + z
        order[i], order[j] = order[j], order[i]
    return np.array(order)


# Tensors shaped like another.


@replayed_whole
def rand_like(
    input: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Uniform samples in [0, 1) with ``input``'s shape and dtype, filled in ``input``'s
    memory order as PyTorch fills the tensor ``empty_like`` gives it."""
    x = _tensor_arg(input, "rand_like")
    out = rand(x.shape, generator=generator, dtype=x.dtype if dtype is None else dtype,
               device=device, requires_grad=requires_grad)  # fmt: skip
    return _relaid(out, x, requires_grad)


@replayed_whole
def randn_like(
    input: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Standard normal samples with ``input``'s shape and dtype."""
    x = _tensor_arg(input, "randn_like")
    dtype = _float_dtype(x.dtype if dtype is None else dtype, "randn_like")
    as_device(device, "randn_like")
    layout = view_layout(x)
    if layout is None:
        return randn(x.shape, generator=generator, dtype=dtype, requires_grad=requires_grad)
    # A tensor laid out as input is not contiguous: PyTorch draws it one at a time.
    values = _normal_array((x.numel(),), dtype, 0.0, 1.0, generator, "randn_like", False)
    return _new(in_memory_order(layout, values), requires_grad)


@replayed_whole
def randint_like(
    input: Tensor, low: int = 0, high=None, *, generator=None, dtype=None, device=None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """Integers uniform in [low, high) with ``input``'s shape and dtype: ``randint_like(x,
    high)`` or ``randint_like(x, low, high)``.

    >>> import chainrule
    >>> randint_like(chainrule.zeros(3), 5).dtype
    dtype('float32')
    """
    x = _tensor_arg(input, "randint_like")
    if high is None:
        low, high = 0, low
    dtype = x.dtype if dtype is None else dtype
    out = randint(low, high, x.shape, generator=generator, dtype=dtype, device=device,
                  requires_grad=requires_grad)  # fmt: skip
    return _relaid(out, x, requires_grad)


def view_layout(x) -> np.ndarray | None:
    """``x``'s array when ``x`` is a view whose strides walk its dims in another order than
    row-major (`fill_order`): ``empty_like(x)`` then keeps that order in PyTorch, and draws
    into it fill in that order. None otherwise: a tensor an op made is row-major in PyTorch
    (chainrule's NumPy arrays may be laid out otherwise; only a view's strides are PyTorch's
    in both)."""
    if not isinstance(x, Tensor) or not x._is_view():
        return None
    array = x._array
    order = fill_order(array.shape, array.strides)
    return None if order == sorted(order) else array


def _relaid(out: Tensor, like: Tensor, requires_grad: bool) -> Tensor:
    """``out``'s values, drawn one after another, laid out in ``like``'s memory order."""
    layout = view_layout(like)
    if layout is None:
        return out
    return _new(in_memory_order(layout, out._array.reshape(-1)), requires_grad)


# Sampling from distributions given by tensors.


@replayed_whole
def multinomial(
    input: Tensor, num_samples: int, replacement: bool = False, *, generator=None
) -> Tensor:
    """Category indices (int64) drawn from the non-negative weights in each row of ``input``
    (1-D, or 2-D for one draw per row); without ``replacement`` no index repeats in a row.
    Without replacement, zero-weight categories come last, once the others are used up.

    >>> import chainrule
    >>> sorted(multinomial(chainrule.tensor([1.0, 2.0, 3.0]), 3).tolist())
    [0, 1, 2]
    """
    x = _tensor_arg(input, "multinomial")
    if x.ndim not in (1, 2):
        raise ShapeError(f"multinomial: input must be 1-D or 2-D, got shape {fmt_shape(x.shape)}")
    if x.dtype.kind != "f":
        raise DTypeError(f"multinomial: input must be floating-point, got {fmt_dtype(x.dtype)}")
    if not isinstance(num_samples, numbers.Integral) or num_samples <= 0:
        raise DomainError(f"multinomial: num_samples must be positive, got {num_samples!r}")
    weights = np.atleast_2d(x._array)
    categories = weights.shape[1]
    if not replacement and num_samples > categories:
        raise DomainError(
            f"multinomial: cannot draw {num_samples} samples without replacement from "
            f"{categories} categories; pass replacement=True or draw at most {categories}"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise DomainError("multinomial: weights must be finite and non-negative (inf, nan or < 0)")
    totals = weights.sum(axis=1, dtype=np.float64)
    if np.any(totals <= 0):
        raise DomainError("multinomial: every row's weights must have a positive sum")
    g = resolve(generator, "multinomial")
    if replacement and num_samples > 1:
        index = np.stack([_draw_with_replacement(g, row, num_samples, x.dtype) for row in weights])
    else:
        # PyTorch's race: each category's key is weight / Exp(1), drawn for every element
        # at once; the largest key wins, the largest keys in order without replacement.
        races = np.atleast_2d(_exponential_array(g, x.shape, 1.0, x.dtype))
        keys = (np.atleast_2d(x._array) / races).astype(x.dtype)
        index = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return Tensor._make(index.reshape(x.shape[:-1] + (num_samples,)).astype(int64))


@replayed_whole
def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """0 or 1 for each element, 1 with probability ``input`` (or ``p`` when given, with
    ``input``'s shape), in ``input``'s dtype.

    >>> import chainrule
    >>> bernoulli(chainrule.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    x = _tensor_arg(input, "bernoulli")
    probability = x._array if p is None else p
    if p is None and x.dtype.kind != "f":
        raise DTypeError(f"bernoulli: input must be floating-point, got {fmt_dtype(x.dtype)}")
    array = _bernoulli_array(x, probability, generator, "bernoulli")
    return _with_zero_gradient(array, x)


@replayed_whole
def normal(
    mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """Normal samples with ``mean`` and standard deviation ``std``: either one a tensor (the
    two broadcast), or both numbers with ``size``.

    As in PyTorch the draws are not reparameterised: the gradient to a mean or std tensor
    that requires grad is 0.

    >>> import chainrule
    >>> normal(chainrule.tensor([0.0, 10.0]), 0.0)
    tensor([ 0., 10.])
    >>> normal(2.0, 0.5, (3,)).shape
    (3,)
    """
    as_device(device, "normal")
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if not tensors:
        if size is None:
            raise DTypeError(
                "normal: with a number for both mean and std, pass size: normal(0.0, 1.0, (3,))"
            )
        dtype, shape = _float_dtype(dtype, "normal"), _size((size,))
    else:
        if size is not None:
            raise DTypeError("normal: size is taken only when mean and std are both numbers")
        for v in tensors:
            if v.dtype.kind != "f":
                raise DTypeError(f"normal: mean and std must be floating-point, got {_describe(v)}")
        dtype = np.result_type(*(v.dtype for v in tensors))
        try:
            shape = np.broadcast_shapes(*(v.shape for v in tensors))
        except ValueError:
            raise ShapeError(
                f"normal: mean of shape {fmt_shape(mean.shape)} and std of shape "
                f"{fmt_shape(std.shape)} do not broadcast"
            ) from None
    mean_values, std_values = (v._array if isinstance(v, Tensor) else v for v in (mean, std))
    if np.any(np.asarray(std_values) < 0):
        raise DomainError(f"normal: std must be >= 0, got {np.min(std_values)}")
    # PyTorch's order: a number std scales the draws themselves; a tensor std multiplies
    # standard normals, then the mean is added.
    std_is_number = not isinstance(std, Tensor)
    array = _normal_array(shape, dtype, 0.0 if tensors else mean, std if std_is_number else 1.0,
                          generator, "normal")  # fmt: skip
    if tensors:
        if not std_is_number:
            array = (array * std_values).astype(dtype)
        array = (array + mean_values).astype(dtype)
        return _with_zero_gradient(array, *tensors)
    return _new(array, requires_grad)


@replayed_whole
def poisson(input: Tensor, generator=None) -> Tensor:
    """A Poisson count for each rate in ``input``, in ``input``'s (floating-point) dtype.

    >>> import chainrule
    >>> poisson(chainrule.tensor([0.0, 0.0]))
    tensor([0., 0.])
    """
    x = _tensor_arg(input, "poisson")
    if x.dtype.kind != "f":
        raise DTypeError(f"poisson: rates must be floating-point, got {fmt_dtype(x.dtype)}")
    if not np.all(x._array >= 0):
        raise DomainError("poisson: rates must be non-negative (and not nan)")
    g = resolve(generator, "poisson")
    rates = x._array.astype(np.float64).ravel().tolist()
    counts = [rejection_sampling.poisson_one(rate, g) for rate in rates]
    array = np.array(counts, np.float64).reshape(x.shape).astype(x.dtype)
    return _with_zero_gradient(array, x)


def _bernoulli_array(x: Tensor, p, generator, op: str) -> np.ndarray:
    """PyTorch's CPU bernoulli: a number ``p`` against a float64 uniform per element; a
    tensor ``p`` (broadcast to ``x``) against a uniform of its own dtype (float64 for a
    float64 ``p``, else float32), in ``x``'s memory order."""
    is_tensor = isinstance(p, (Tensor, np.ndarray))
    p = p._array if isinstance(p, Tensor) else np.asarray(p)
    if not np.all((p >= 0) & (p <= 1)):
        raise DomainError(f"{op}: probabilities must lie in [0, 1], got {_values(p)}")
    g, n = resolve(generator, op), x.numel()
    if not is_tensor or p.dtype == np.float64:
        u = in_memory_order(x._array, g.unit(n, np.float64))
        return (u < p).astype(x.dtype)
    u = in_memory_order(x._array, g.unit(n, np.float32))
    return (u < p.astype(np.float32)).astype(x.dtype)


def bernoulli_draws(shape: tuple, p: float, generator=None, op: str = "bernoulli_",
                    like: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """A bool array of ``shape``, each True with probability ``p`` (a number), drawn as
    PyTorch's ``bernoulli_(p)`` draws a fresh tensor (dropout's masks); laid out as
    ``like`` (an array, from `view_layout`) when given."""
    g = resolve(generator, op)
    keep = _shaped(shape, generator, lambda s: g.unit(math.prod(s), np.float64).reshape(s)) < p
    return keep.reshape(shape) if like is None else in_memory_order(like, keep)


def _draw_with_replacement(g: Generator, weights: np.ndarray, count: int, dtype) -> np.ndarray:
    """PyTorch's CPU multinomial with replacement for one row: the cumulative weights in the
    row's dtype, divided by their total, the last set to 1; each sample the first category
    whose cumulative weight reaches a float64 uniform."""
    cumulative = np.cumsum(weights, dtype=dtype)
    cumulative = cumulative / cumulative[-1]
    cumulative[-1] = 1
    return np.searchsorted(cumulative.astype(np.float64), g.unit(count, np.float64), "left")


def _exponential_array(g: Generator, shape: tuple, lambd: float, dtype) -> np.ndarray:
    """Exponential samples of rate ``lambd`` as PyTorch's CPU kernel: -1/lambd * log1p(-u),
    u a float64 uniform, the C library's log1p."""
    u = g.unit(math.prod(shape), np.float64).tolist()
    scale, log1p = -1.0 / lambd, math.log1p
    return np.array([scale * log1p(-v) for v in u]).reshape(shape).astype(dtype)


def _values(p: np.ndarray) -> str:
    return repr(p.item()) if p.size == 1 else "values outside it"


# What the in-place fills (`chainrule.methods.factories`) write: arrays of the tensor's shape
# and dtype. Each checks its parameters and the tensor's dtype as PyTorch does.


def _floating(x: Tensor, op: str) -> None:
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: fills floating-point tensors only, this one is {_describe(x)}")


def normal_values(x: Tensor, mean, std, generator) -> np.ndarray:
    """Samples of N(mean, std²) for ``x.normal_``."""
    _floating(x, "normal_")
    if std < 0:
        raise DomainError(f"normal_: std must be >= 0, got {std}")
    contiguous = x._array.flags.c_contiguous
    values = _normal_array((x.numel(),), x.dtype, mean, std, generator, "normal_", contiguous)
    return in_memory_order(x._array, values)


def uniform_values(x: Tensor, low, high, generator) -> np.ndarray:
    """Samples uniform in [low, high) for ``x.uniform_``."""
    _floating(x, "uniform_")
    if not low <= high:
        raise DomainError(f"uniform_: from ({low}) must be <= to ({high})")
    # In the dtype's arithmetic (float32 for float16), one fused multiply-add, and a value
    # rounded up onto ``high`` goes back to ``low``, as PyTorch's kernel.
    work = np.float64 if x.dtype == np.float64 else np.float32
    u = resolve(generator, "uniform_").unit(x.numel(), x.dtype)
    low_w, high_w = work(low), work(high)
    fma = vector_math.fma64 if work == np.float64 else vector_math.fma32
    values = fma(u, work(high_w - low_w), low_w).astype(x.dtype)
    values[values == x.dtype.type(high)] = x.dtype.type(low)
    return in_memory_order(x._array, values)


def log_normal_values(x: Tensor, mean, std, generator) -> np.ndarray:
    """exp of N(mean, std²) samples for ``x.log_normal_``."""
    _floating(x, "log_normal_")
    if not std > 0:
        raise DomainError(f"log_normal_: std must be > 0, got {std}")
    noise = vector_math.fma64(resolve(generator, "log_normal_").normals(x.numel()), std, mean)
    return in_memory_order(x._array, np.array([math.exp(v) for v in noise.tolist()], x.dtype))


def exponential_values(x: Tensor, lambd, generator) -> np.ndarray:
    """Exponential samples of rate ``lambd`` for ``x.exponential_``."""
    _floating(x, "exponential_")
    if not lambd > 0:
        raise DomainError(f"exponential_: lambd must be > 0, got {lambd}")
    draws = _exponential_array(resolve(generator, "exponential_"), (x.numel(),), lambd, x.dtype)
    return in_memory_order(x._array, draws)


def cauchy_values(x: Tensor, median, sigma, generator) -> np.ndarray:
    """Cauchy samples for ``x.cauchy_``."""
    _floating(x, "cauchy_")
    if not sigma > 0:
        raise DomainError(f"cauchy_: sigma must be > 0, got {sigma}")
    u = resolve(generator, "cauchy_").unit(x.numel(), np.float64).tolist()
    tan, pi = math.tan, math.pi
    draws = np.array([median + sigma * tan(pi * (v - 0.5)) for v in u], x.dtype)
    return in_memory_order(x._array, draws)


def geometric_values(x: Tensor, p, generator) -> np.ndarray:
    """Geometric samples (trials to the first success, from 1) for ``x.geometric_``."""
    if not 0 < p < 1:
        raise DomainError(f"geometric_: p must lie in (0, 1), got {p}")
    u = resolve(generator, "geometric_").unit(x.numel(), np.float64).tolist()
    log, step = math.log, math.log1p(-p)
    return in_memory_order(x._array, np.array([math.ceil(log(v) / step) for v in u], x.dtype))


def bernoulli_values(x: Tensor, p, generator) -> np.ndarray:
    """0 or 1, 1 with probability ``p`` (a number or a tensor), for ``x.bernoulli_``."""
    return _bernoulli_array(x, p, generator, "bernoulli_")


def random_values(x: Tensor, low, high, generator) -> np.ndarray:
    """Integers uniform in [low, high) for ``x.random_``; ``high`` None: up to the largest
    integer ``x``'s dtype holds exactly (2**24 for float32, as PyTorch)."""
    for name, bound in (("from", low), ("to", high)):
        if bound is not None and not isinstance(bound, numbers.Integral):
            raise DTypeError(f"random_: {name} must be an integer, got {bound!r}")
    if high is None and low != 0:  # random_(from, None): up to the dtype's top, included
        high = (2 ** (np.finfo(x.dtype).nmant + 1) if x.dtype.kind == "f" else
                int(np.iinfo(x.dtype).max)) + 1  # fmt: skip
    if high is not None and not low < high:
        raise DomainError(f"random_: from ({low}) must be less than to ({high})")
    return in_memory_order(x._array, _integers(resolve(generator, "random_"), x, low, high))


def _integers(g: Generator, x: Tensor, low: int, high) -> np.ndarray:
    """PyTorch's ``random_`` draws: with no bounds a word (a 64-bit number for int64 and
    float64) modulo the dtype's range; else ``word % (high - low) + low``."""
    n, dtype = x.numel(), x.dtype
    if high is None and low == 0:
        if dtype == bool_:
            return (g.words(n) & 1).astype(dtype)
        if dtype.kind == "f":
            span = 2 ** (np.finfo(dtype).nmant + 1) + 1
        else:
            span = int(np.iinfo(dtype).max) + 1
        wide = dtype in (np.int64, np.float64)
        draws = g.words64(n) if wide else g.words(n).astype(np.uint64)
        return (draws % np.uint64(span)).astype(dtype)
    if high - low == 2**64:  # the whole int64 range
        return g.words64(n).view(np.int64).astype(dtype)
    return (g.integers(n, high - low).astype(np.int64) + low).astype(dtype)
