"""`Poisson` with rate ``rate``: counts (not reparameterisable), drawn as PyTorch's CPU
``poisson`` draws them (`poisson_draws`)."""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


def poisson_draws(rates: np.ndarray, generator=None) -> np.ndarray:
    """Poisson counts for ``rates``, in their dtype, as PyTorch's CPU sampler draws them:
    element by element in row-major order, from float64 uniforms; a rate of 10 or more by
    Hoermann's transformed rejection (PTRS, 1993), a smaller one by multiplying uniforms
    until the product falls to exp(-rate). One Python step per draw.

    >>> poisson_draws(np.array([0.0, 0.0]))
    array([0., 0.])
    """
    g = random.resolve(generator, "poisson")
    out = np.empty(rates.size, rates.dtype)
    for i, rate in enumerate(np.ravel(rates).tolist()):
        out[i] = _rejection(rate, g) if rate >= 10 else _multiplication(rate, g)
    return out.reshape(rates.shape)


def _multiplication(rate: float, g) -> int:
    if rate == 0:
        return 0
    floor, count, product = math.exp(-rate), 0, 1.0
    while True:
        product *= g.unit(1, np.float64)[0]
        if product <= floor:
            return count
        count += 1


def _rejection(rate: float, g) -> int:
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    log_inverse_alpha = math.log(1.1239 + 1.1328 / (b - 3.4))
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u, v = g.unit(2, np.float64).tolist()
        u -= 0.5
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        lhs = math.log(v) + log_inverse_alpha - math.log(a / (us * us) + b)
        if lhs <= -rate + k * log_rate - math.lgamma(k + 1.0):
            return k


class Poisson(ExponentialFamily):
    """Poisson distributions with mass rate**k exp(-rate) / k! on k = 0, 1, 2, ...

    >>> import chainrule as cr
    >>> Poisson(2.0).log_prob(cr.tensor(3.0))
    tensor(-1.7123)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return Tensor._make(poisson_draws(np.broadcast_to(self.rate._array, shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ops.xlogy(value, self.rate) - self.rate - ops.lgamma(value + 1)


__all__ = ["Poisson"]
