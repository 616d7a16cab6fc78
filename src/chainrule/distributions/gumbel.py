"""`Gumbel` (type-I extreme value) with ``loc`` and ``scale``: a uniform pushed through
x -> loc - scale * log(-log(u)), as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

import math

from .. import ops
from .._tensor import Tensor
from ..creation import full_like, ones_like
from ..dtypes import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant


class Gumbel(TransformedDistribution):
    """Gumbel distributions with cdf exp(-exp(-(x - loc) / scale)).

    >>> import chainrule as cr
    >>> Gumbel(0.0, 1.0).log_prob(cr.tensor(0.0))
    tensor(-1.)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        low, high = full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps)
        base = Uniform(low, high, validate_args=validate_args)
        # u -> -log(u) -> log(-log(u)) -> loc - scale * log(-log(u))
        transforms = [
            ExpTransform().inv,
            AffineTransform(loc=0, scale=-ones_like(self.loc)),
            ExpTransform().inv,
            AffineTransform(loc=self.loc, scale=-self.scale),
        ]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - ops.exp(z)) - ops.log(self.scale)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev**2

    def entropy(self) -> Tensor:
        return ops.log(self.scale) + (1 + euler_constant)


__all__ = ["Gumbel"]
