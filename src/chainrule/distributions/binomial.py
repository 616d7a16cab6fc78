"""`Binomial`: successes in ``total_count`` Bernoulli(probs) trials, drawn as PyTorch's CPU
``binomial`` draws them (`binomial_draws`)."""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import BinaryParameters

#: Stirling's series' error log k! - (k + 1/2) log(k + 1) + (k + 1) - log(2 pi)/2, k < 10.
_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)  # fmt: skip


def _stirling_tail(k: float) -> float:
    if k < 10:
        return _TAIL[int(k)]
    k1 = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / k1) / k1) / (k + 1)


def binomial_draws(count: np.ndarray, probs: np.ndarray, generator=None) -> np.ndarray:
    """Binomial draws for ``count`` and ``probs`` (arrays of one shape and dtype), as
    PyTorch's CPU sampler makes them: element by element in row-major order, from float64
    uniforms; for a mean (of the rarer outcome) of 10 or more Hormann's transformed rejection
    (BTRS) as TensorFlow adapted it, else by summing geometric waiting times. The arithmetic
    PyTorch does in the tensors' dtype (float32 products, square root, log1p) is done in it
    here too. One Python step per draw.

    >>> binomial_draws(np.array([3.0, 0.0]), np.array([1.0, 0.5]))
    array([3., 0.])
    """
    g = random.resolve(generator, "binomial")
    kind = np.float32 if probs.dtype == np.float32 else float
    out = np.empty(probs.size, probs.dtype)
    pairs = zip(np.ravel(count).tolist(), np.ravel(probs).tolist())
    for i, (n, p) in enumerate(pairs):
        out[i] = _binomial(kind(n), kind(p), kind, g)
    return out.reshape(probs.shape)


def _binomial(n, p, kind, g):
    if n <= 0 or p <= 0:
        return 0.0
    if p >= 1:
        return n
    if p <= 0.5:
        return _btrs(n, p, kind, g) if kind(n * p) >= 10 else _waiting(n, p, kind, g)
    q = kind(1.0 - float(p))
    return n - (_btrs(n, q, kind, g) if kind(n * q) >= 10 else _waiting(n, q, kind, g))


def _waiting(n, p, kind, g):
    """Successes before the geometric waiting times (from uniforms) sum past ``n``."""
    log_q = float(np.log1p(kind(-p))) if kind is np.float32 else math.log1p(-p)
    waited, successes = 0.0, 0
    while True:
        waited += math.ceil(math.log(g.unit(1, np.float64)[0]) / log_q)
        if waited > n:
            return successes
        successes += 1


def _btrs(n, p, kind, g):
    one = kind(1)
    spread = float(np.sqrt(kind(kind(n * p) * kind(one - p))))
    b = 1.15 + 2.53 * spread
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(kind(n * p)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(kind(p / kind(one - p)))
    alpha = (2.83 + 5.1 / b) * spread
    m = float(np.floor(kind(kind(n + one) * p)))
    nf = float(n)
    while True:
        u, v = g.unit(2, np.float64).tolist()
        u -= 0.5
        us = 0.5 - abs(u)
        k = kind(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        # TensorFlow's form of the acceptance test (kept by PyTorch): log of v scaled.
        v = math.log(v * alpha / (a / (us * us) + b))
        left = float(kind(kind(n - k) + one))  # n - k + 1 in the dtype
        bound = (
            (m + 0.5) * math.log((m + 1) / (r * (nf - m + 1)))
            + float(kind(n + one)) * math.log((nf - m + 1) / left)
            + (float(k) + 0.5) * math.log(r * left / float(kind(k + one)))
            + _stirling_tail(m) + _stirling_tail(nf - m)
            - _stirling_tail(float(k)) - _stirling_tail(float(kind(n - k)))
        )  # fmt: skip
        if v <= bound:
            return k


def _relu_half_slope(x: Tensor) -> Tensor:
    """max(x, 0), with PyTorch's slope 1/2 at 0 (its clamp passes gradient at the bound)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(total_count: Tensor, what: str) -> int:
    counts = total_count._array
    n = int(counts.max())
    if counts.min() != n:
        raise NotImplementedError(f"Binomial: {what} needs one total_count for the whole batch")
    return n


class Binomial(BinaryParameters, Distribution):
    """Binomial distributions with ``total_count`` trials (1 by default) and success
    probability ``probs`` (or ``logits``).

    >>> import chainrule as cr
    >>> Binomial(4, cr.tensor(0.5)).log_prob(cr.tensor(2.0))
    tensor(-0.9808)
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        (total_count,) = self._set_binary(probs, logits, total_count)
        self.total_count = total_count.to(self._param.dtype)
        super().__init__(self._param.shape, (), validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ops.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        p = np.broadcast_to(self.probs._array, shape)
        n = np.broadcast_to(self.total_count._array, shape).astype(p.dtype)
        return Tensor._make(binomial_draws(n, p))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = ops.lgamma(n + 1) - ops.lgamma(value + 1) - ops.lgamma(n - value + 1)
        # n log(1 + exp(logits)), written to stay finite for large |logits|.
        log_normaliser = n * _relu_half_slope(logits) + n * ops.log1p(ops.exp(-logits.abs()))
        return log_choose + value * logits - log_normaliser

    def entropy(self) -> Tensor:
        _homogeneous_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = _homogeneous_count(self.total_count, "enumerate_support")
        values = Tensor._make(np.arange(n + 1, dtype=self.total_count.dtype))
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((n + 1,) + tuple(self.batch_shape)) if expand else values


__all__ = ["Binomial"]
