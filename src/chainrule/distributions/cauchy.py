"""`Cauchy` (the Lorentz distribution) with ``loc`` and ``scale``, reparameterised through its
inverse CDF; it has no mean or variance."""

from __future__ import annotations

import math

from .. import ops
from .._tensor import Tensor
from ..creation import empty, full_like
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Cauchy(Distribution):
    """Cauchy distributions with density 1 / (pi scale (1 + ((x - loc) / scale)**2)).

    >>> import chainrule as cr
    >>> Cauchy(0.0, 1.0).cdf(cr.tensor(1.0))
    tensor(0.7500)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return full_like(self.loc, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return full_like(self.loc, float("inf"))

    def rsample(self, sample_shape=()) -> Tensor:
        eps = empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale  # PyTorch's

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - ops.log(self.scale) - ops.log1p(z**2)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ops.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return ops.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + ops.log(self.scale)


__all__ = ["Cauchy"]
