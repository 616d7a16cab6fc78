"""`LogNormal`: exp of a `Normal`, as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform


class LogNormal(TransformedDistribution):
    """X = exp(Y) with Y ~ Normal(loc, scale).

    >>> import chainrule as cr
    >>> LogNormal(0.0, 1.0).log_prob(cr.tensor(1.0))
    tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return ops.exp(self.loc + self.scale**2 / 2)

    @property
    def mode(self) -> Tensor:
        return ops.exp(self.loc - self.scale**2)

    @property
    def variance(self) -> Tensor:
        s2 = self.scale**2
        return ops.expm1(s2) * ops.exp(2 * self.loc + s2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc


__all__ = ["LogNormal"]
