"""`Normal`, the Gaussian with mean ``loc`` and standard deviation ``scale``, reparameterised
as loc + scale * eps with eps standard normal."""

from __future__ import annotations

import math

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(ExponentialFamily):
    """Normal distributions N(loc, scale**2), batched over the broadcast shape of ``loc`` and
    ``scale``.

    >>> import chainrule as cr
    >>> d = Normal(cr.tensor([0.0, 1.0]), 2.0)
    >>> d.log_prob(cr.tensor([0.0, 1.0]))
    tensor([-1.6121, -1.6121])
    >>> d.sample((5,)).shape
    (5, 2)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale**2

    def rsample(self, sample_shape=()) -> Tensor:
        eps = random.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -0.5 * z**2 - ops.log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ops.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * ops.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + _LOG_SQRT_2PI + ops.log(self.scale)


__all__ = ["Normal"]
