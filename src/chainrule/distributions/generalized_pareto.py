"""`GeneralizedPareto` with ``loc``, ``scale`` and ``concentration`` (xi), the law of
threshold excesses: Exponential at xi = 0, Pareto-like tails for xi > 0, bounded support for
xi < 0; reparameterised through its inverse CDF."""

from __future__ import annotations

import math

from .. import ops, random
from .._tensor import Tensor
from ..creation import ones_like
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class GeneralizedPareto(Distribution):
    """Generalized Pareto distributions with survival function
    (1 + xi z)**(-1 / xi), z = (x - loc) / scale (exp(-z) at xi = 0).

    >>> import chainrule as cr
    >>> GeneralizedPareto(0.0, 1.0, 0.0).log_prob(cr.tensor(1.0))
    tensor(-1.)
    """

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        xi = self.concentration
        upper = ops.where(xi < 0, self.loc - self.scale / self._safe(xi), math.inf)
        return constraints.interval(self.loc, upper)

    @staticmethod
    def _is_zero(xi: Tensor) -> Tensor:
        return ops.isclose(xi, xi * 0)

    def _safe(self, xi: Tensor) -> Tensor:
        """xi with 1 where it is (close to) 0, so the xi != 0 branch stays finite there."""
        return ops.where(self._is_zero(xi), ones_like(xi), xi)

    def rsample(self, sample_shape=()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi = self._safe(self.concentration)
        power = 1 / xi + 1
        # (1 / xi + 1) log(1 + xi z); the power 0 (xi = -1, the uniform) contributes 0.
        tail = ops.where(power == 0, power, power * ops.log1p(xi * z))
        return -ops.log(self.scale) - ops.where(self._is_zero(self.concentration), z, tail)

    def log_survival_function(self, value: Tensor) -> Tensor:
        """log P(X > value)."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        xi = self._safe(self.concentration)
        return ops.where(self._is_zero(self.concentration), -z, -ops.log1p(xi * z) / xi)

    def log_cdf(self, value: Tensor) -> Tensor:
        """log P(X <= value)."""
        return ops.log1p(-ops.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return ops.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        xi = self._safe(self.concentration)
        log_survival = ops.log1p(-value)
        general = self.loc + self.scale / xi * ops.expm1(-xi * log_survival)
        exponential = self.loc - self.scale * log_survival
        return ops.where(self._is_zero(self.concentration), exponential, general)

    @property
    def mean(self) -> Tensor:
        xi = self.concentration
        finite = xi < 1
        value = self.loc + self.scale / (1 - ops.where(finite, xi, 0.5))
        return ops.where(finite, value, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        xi = self.concentration
        finite = xi < 0.5
        safe = ops.where(finite, xi, 0.25)
        value = self.scale**2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return ops.where(finite, value, float("nan"))

    def entropy(self) -> Tensor:
        return (ops.log(self.scale) + self.concentration + 1).expand(tuple(self.batch_shape))


__all__ = ["GeneralizedPareto"]
