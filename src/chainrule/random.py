"""chainrule's random number generators (`Generator`, the default one behind `manual_seed`) and
the tensors drawn from them: ``rand``, ``randn``, ``randint``, their ``_like`` forms,
``randperm``, ``multinomial``, ``bernoulli``, ``normal``, ``poisson``, and the values the
in-place fills (``Tensor.normal_``...) write. ``nn.init``, dropout and the data loaders draw
from the default generator too. The numbers differ from PyTorch's; the distributions do not.

One documented hook, `swap_generator`, lets vmap stand a guard in for the default generator
while it runs a function on batched tensors (draws there must be batched or refused): every
draw without ``generator=`` goes through `default_generator()`.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import methods
from ._tensor import Tensor
from .creation import _new, _size
from .dtypes import as_device, as_dtype, bool_, get_default_dtype, int64, uint8
from .errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from .observe import replayed_whole

#: The seed of a new `Generator`, PyTorch's (so a fresh generator draws the same each run).
DEFAULT_SEED = 67280421310721

_initial_seed = int(np.random.SeedSequence().entropy % 2**63)
_generator = np.random.default_rng(_initial_seed)


class Generator:
    """A random number generator to pass as ``generator=`` (``torch.Generator``): its own
    stream, apart from the default one that `manual_seed` seeds.

    ``get_state`` gives a uint8 tensor of 37 bytes (PyTorch's is 5056: a different algorithm,
    NumPy's PCG64), which ``set_state`` takes back.

    >>> g = Generator().manual_seed(3)
    >>> a = rand(2, generator=g)
    >>> bool((a == rand(2, generator=Generator().manual_seed(3))).all()), g.initial_seed()
    (True, 3)
    """

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device, "Generator")
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Seed this generator; returns it (so ``Generator().manual_seed(0)`` chains)."""
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
            raise DTypeError(f"manual_seed: the seed must be an integer, got {seed!r}")
        seed = int(seed) % 2**64  # PyTorch takes negative seeds the same way
        self._rng, self._seed = np.random.default_rng(seed), seed
        return self

    def seed(self) -> int:
        """Seed this generator from the operating system's entropy; returns that seed."""
        seed = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self) -> Tensor:
        """The generator's state, a uint8 tensor for `set_state`."""
        state = self._rng.bit_generator.state
        if state["bit_generator"] != "PCG64":
            raise DTypeError(f"get_state: cannot encode a {state['bit_generator']} generator")
        inner = state["state"]
        parts = (
            inner["state"].to_bytes(16, "little"),
            inner["inc"].to_bytes(16, "little"),
            state["has_uint32"].to_bytes(1, "little"),
            state["uinteger"].to_bytes(4, "little"),
        )
        return Tensor._make(np.frombuffer(b"".join(parts), uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from `get_state`; returns this generator."""
        if not isinstance(new_state, Tensor) or new_state.dtype != uint8:
            raise DTypeError(
                "set_state: expected the uint8 tensor get_state returns, got "
                f"{_describe(new_state)}"
            )
        if new_state.shape != (37,):
            raise ShapeError(
                f"set_state: a state has shape (37,), got {fmt_shape(new_state.shape)}"
            )
        raw = new_state._array.tobytes()
        self._rng.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": int.from_bytes(raw[:16], "little"),
                "inc": int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": raw[32],
            "uinteger": int.from_bytes(raw[33:], "little"),
        }
        return self

    def numpy(self) -> np.random.Generator:
        """The NumPy Generator this one draws with (for code that draws with NumPy)."""
        return self._rng

    def __repr__(self) -> str:
        return f"<chainrule.Generator at {id(self):#x}>"


class _DefaultGenerator(Generator):
    """The default generator as a `Generator`: its stream is the module's ``_generator``,
    which vmap's hook may swap, so it is read on every use rather than kept."""

    def __init__(self) -> None:
        self.device = as_device("cpu", "Generator")

    @property
    def _rng(self):
        return _generator

    @_rng.setter
    def _rng(self, rng) -> None:
        global _generator
        _generator = rng

    @property
    def _seed(self) -> int:
        return _initial_seed

    @_seed.setter
    def _seed(self, seed: int) -> None:
        global _initial_seed
        _initial_seed = seed

    def __repr__(self) -> str:
        return "<chainrule default Generator>"


_default = _DefaultGenerator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator (rand, randn, init, dropout...); returns it, as PyTorch."""
    return _default.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from the operating system's entropy; returns the seed."""
    return _default.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return _default.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state (a uint8 tensor for `set_rng_state`)."""
    return _default.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state from `get_rng_state`."""
    _default.set_state(new_state)


def default_generator() -> np.random.Generator:
    """The NumPy Generator behind chainrule's random functions."""
    return _generator


def swap_generator(generator) -> np.random.Generator:
    """Make ``generator`` the one every draw uses; returns the one it replaces (vmap's hook)."""
    global _generator
    previous, _generator = _generator, generator
    return previous


def numpy_generator(generator, op: str):
    """The NumPy generator to draw from: ``generator``'s (a `Generator` or a NumPy one), or
    the default's for None."""
    if generator is None:
        return _generator
    if isinstance(generator, Generator):
        return generator.numpy()
    if isinstance(generator, np.random.Generator):
        return generator
    raise DTypeError(f"{op}: generator must be a chainrule.Generator, got {_describe(generator)}")


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
    array = numpy_generator(generator, "rand").random(_size(size))
    return _new(array.astype(_float_dtype(dtype, "rand")), requires_grad)


@replayed_whole
def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples.

    >>> randn(5).shape
    (5,)
    """
    as_device(device, "randn")
    array = numpy_generator(generator, "randn").standard_normal(_size(size))
    return _new(array.astype(_float_dtype(dtype, "randn")), requires_grad)


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
    rng = numpy_generator(generator, "randint")
    array = rng.integers(low, high, size=_size((size,)))
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
    array = numpy_generator(generator, "randperm").permutation(int(n))
    return _new(array.astype(as_dtype(dtype, "randperm") or int64), requires_grad)


# Tensors shaped like another.


@replayed_whole
def rand_like(
    input: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Uniform samples in [0, 1) with ``input``'s shape and dtype."""
    x = _tensor_arg(input, "rand_like")
    dtype = x.dtype if dtype is None else dtype
    return rand(x.shape, generator=generator, dtype=dtype, device=device,
                requires_grad=requires_grad)  # fmt: skip


@replayed_whole
def randn_like(
    input: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """Standard normal samples with ``input``'s shape and dtype."""
    x = _tensor_arg(input, "randn_like")
    dtype = x.dtype if dtype is None else dtype
    return randn(x.shape, generator=generator, dtype=dtype, device=device,
                 requires_grad=requires_grad)  # fmt: skip


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
    return randint(low, high, x.shape, generator=generator, dtype=dtype, device=device,
                   requires_grad=requires_grad)  # fmt: skip


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
    weights = np.atleast_2d(x._array).astype(np.float64)
    categories = weights.shape[1]
    if not replacement and num_samples > categories:
        raise DomainError(
            f"multinomial: cannot draw {num_samples} samples without replacement from "
            f"{categories} categories; pass replacement=True or draw at most {categories}"
        )
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise DomainError("multinomial: weights must be finite and non-negative (inf, nan or < 0)")
    totals = weights.sum(axis=1)
    if np.any(totals <= 0):
        raise DomainError("multinomial: every row's weights must have a positive sum")
    rng = numpy_generator(generator, "multinomial")
    if replacement:
        cdf = np.cumsum(weights / totals[:, None], axis=1)
        u = rng.random((weights.shape[0], num_samples))
        index = np.stack([np.searchsorted(c, row, side="right") for c, row in zip(cdf, u)])
        last = categories - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)  # last positive
        index = np.minimum(index, last[:, None])  # rounding in the cumsum cannot pass it
    else:
        # Exponential races: each category's key is weight / Exp(1); the largest keys, in
        # order, are draws without replacement, and zero weights key 0, so they come last.
        keys = weights / rng.exponential(size=weights.shape)
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
    noise = numpy_generator(generator, "normal").standard_normal(shape)
    array = (mean_values + std_values * noise).astype(dtype)
    if not tensors:
        return _new(array, requires_grad)
    return _with_zero_gradient(array, *tensors)


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
    array = numpy_generator(generator, "poisson").poisson(x._array).astype(x.dtype)
    return _with_zero_gradient(array, x)


def _bernoulli_array(x: Tensor, p, generator, op: str) -> np.ndarray:
    p = p._array if isinstance(p, Tensor) else np.asarray(p)
    if not np.all((p >= 0) & (p <= 1)):
        raise DomainError(f"{op}: probabilities must lie in [0, 1], got {_values(p)}")
    u = numpy_generator(generator, op).random(x.shape)
    return (u < p).astype(x.dtype)


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
    noise = numpy_generator(generator, "normal_").standard_normal(x.shape)
    return (mean + std * noise).astype(x.dtype)


def uniform_values(x: Tensor, low, high, generator) -> np.ndarray:
    """Samples uniform in [low, high) for ``x.uniform_``."""
    _floating(x, "uniform_")
    if not low <= high:
        raise DomainError(f"uniform_: from ({low}) must be <= to ({high})")
    u = numpy_generator(generator, "uniform_").random(x.shape)
    return (low + (high - low) * u).astype(x.dtype)


def log_normal_values(x: Tensor, mean, std, generator) -> np.ndarray:
    """exp of N(mean, std²) samples for ``x.log_normal_``."""
    _floating(x, "log_normal_")
    if not std > 0:
        raise DomainError(f"log_normal_: std must be > 0, got {std}")
    noise = numpy_generator(generator, "log_normal_").standard_normal(x.shape)
    return np.exp(mean + std * noise).astype(x.dtype)


def exponential_values(x: Tensor, lambd, generator) -> np.ndarray:
    """Exponential samples of rate ``lambd`` for ``x.exponential_``."""
    _floating(x, "exponential_")
    if not lambd > 0:
        raise DomainError(f"exponential_: lambd must be > 0, got {lambd}")
    draws = numpy_generator(generator, "exponential_").exponential(1 / lambd, x.shape)
    return draws.astype(x.dtype)


def cauchy_values(x: Tensor, median, sigma, generator) -> np.ndarray:
    """Cauchy samples for ``x.cauchy_``."""
    _floating(x, "cauchy_")
    if not sigma > 0:
        raise DomainError(f"cauchy_: sigma must be > 0, got {sigma}")
    draws = numpy_generator(generator, "cauchy_").standard_cauchy(x.shape)
    return (median + sigma * draws).astype(x.dtype)


def geometric_values(x: Tensor, p, generator) -> np.ndarray:
    """Geometric samples (trials to the first success, from 1) for ``x.geometric_``."""
    if not 0 < p < 1:
        raise DomainError(f"geometric_: p must lie in (0, 1), got {p}")
    return numpy_generator(generator, "geometric_").geometric(p, x.shape).astype(x.dtype)


def bernoulli_values(x: Tensor, p, generator) -> np.ndarray:
    """0 or 1, 1 with probability ``p`` (a number or a tensor), for ``x.bernoulli_``."""
    return _bernoulli_array(x, p, generator, "bernoulli_")


def random_values(x: Tensor, low, high, generator) -> np.ndarray:
    """Integers uniform in [low, high) for ``x.random_``; ``high`` None: up to the largest
    integer ``x``'s dtype holds exactly (2**24 for float32, as PyTorch)."""
    for name, bound in (("from", low), ("to", high)):
        if bound is not None and not isinstance(bound, numbers.Integral):
            raise DTypeError(f"random_: {name} must be an integer, got {bound!r}")
    if high is None:
        if x.dtype == bool_:
            high = 2
        elif x.dtype.kind == "f":
            high = 2 ** (np.finfo(x.dtype).nmant + 1) + 1
        else:
            high = int(np.iinfo(x.dtype).max) + 1
    if not low < high:
        raise DomainError(f"random_: from ({low}) must be less than to ({high})")
    rng = numpy_generator(generator, "random_")
    return rng.integers(low, high, x.shape, dtype=np.int64 if high <= 2**63 else np.uint64,
                        endpoint=False).astype(x.dtype)  # fmt: skip
