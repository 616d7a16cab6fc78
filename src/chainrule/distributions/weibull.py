"""`Weibull` with ``scale`` and ``concentration``: scale * E**(1 / concentration) with E a
standard exponential, as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..creation import ones_like
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant


class Weibull(TransformedDistribution):
    """Weibull distributions with cdf 1 - exp(-(x / scale)**concentration) on x >= 0.

    >>> import chainrule as cr
    >>> Weibull(1.0, 1.0).log_prob(cr.tensor(1.0))
    tensor(-1.)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = 1 / self.concentration
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [
            PowerTransform(exponent=self.concentration_reciprocal),
            AffineTransform(loc=0, scale=self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * ops.exp(ops.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Tensor:
        c = self.concentration
        return self.scale * ((c - 1) / c) ** (1 / c)

    @property
    def variance(self) -> Tensor:
        r = self.concentration_reciprocal
        return self.scale**2 * (ops.exp(ops.lgamma(1 + 2 * r)) - ops.exp(2 * ops.lgamma(1 + r)))

    def entropy(self) -> Tensor:
        c = self.concentration
        return euler_constant * (1 - 1 / c) + ops.log(self.scale / c) + 1


__all__ = ["Weibull"]
