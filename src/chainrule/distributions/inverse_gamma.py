"""`InverseGamma`: 1 / X for X ~ Gamma(concentration, rate), as a `TransformedDistribution`
with PowerTransform(-1) (as in PyTorch)."""

from __future__ import annotations

import math

from .. import ops
from .._tensor import Tensor
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """Inverse-gamma distributions on x > 0.

    >>> import chainrule as cr
    >>> InverseGamma(cr.tensor(3.0), cr.tensor(2.0)).mean
    tensor(1.)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return ops.where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        return ops.where(c > 2, self.rate**2 / ((c - 1) ** 2 * (c - 2)), math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + ops.log(self.rate) + ops.lgamma(c) - (1 + c) * ops.digamma(c)


__all__ = ["InverseGamma"]
