"""`HalfCauchy`: |X| for X ~ Cauchy(0, scale), folded at 0 (a `TransformedDistribution`
with `AbsTransform`, as in PyTorch)."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..creation import full_like
from . import constraints
from .cauchy import Cauchy
from .folded import Folded


class HalfCauchy(Folded):
    """Half-Cauchy distributions on [0, inf).

    >>> import chainrule as cr
    >>> HalfCauchy(1.0).cdf(cr.tensor(1.0))
    tensor(0.5000)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return full_like(self.scale, math.inf)

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance


__all__ = ["HalfCauchy"]
