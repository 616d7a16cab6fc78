"""`HalfNormal`: |X| for X ~ Normal(0, scale), folded at 0 (a `TransformedDistribution`
with `AbsTransform`, as in PyTorch)."""

from __future__ import annotations

import math

from .._tensor import Tensor
from . import constraints
from .folded import Folded
from .normal import Normal


class HalfNormal(Folded):
    """Half-normal distributions on [0, inf).

    >>> import chainrule as cr
    >>> HalfNormal(1.0).log_prob(cr.tensor(0.0))
    tensor(-0.2258)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale**2 * (1 - 2 / math.pi)


__all__ = ["HalfNormal"]
