"""`Laplace`, the double exponential with location ``loc`` and scale ``scale``,
reparameterised through its inverse CDF."""

from __future__ import annotations

import math

from .. import ops
from .._tensor import Tensor
from ..creation import empty
from ..dtypes import finfo
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Laplace(Distribution):
    """Laplace distributions with density exp(-|x - loc| / scale) / (2 scale).

    >>> import chainrule as cr
    >>> Laplace(0.0, 1.0).log_prob(cr.tensor(1.0))
    tensor(-1.6931)
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
    def variance(self) -> Tensor:
        return 2 * self.scale**2

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps  # keeps u off -1, where log1p(-|u|) is -inf
        u = empty(shape, dtype=self.loc.dtype).uniform_(eps - 1, 1)  # PyTorch's draw
        return self.loc - self.scale * ops.sign(u) * ops.log1p(-u.abs())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -ops.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * ops.sign(z) * ops.expm1(-z.abs() / self.scale)

    def icdf(self, value: Tensor) -> Tensor:
        centred = value - 0.5
        return self.loc - self.scale * ops.sign(centred) * ops.log1p(-2 * centred.abs())

    def entropy(self) -> Tensor:
        return 1 + ops.log(2 * self.scale)


__all__ = ["Laplace"]
