"""`Exponential` with rate ``rate``, reparameterised as e / rate with e a standard
exponential draw."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..creation import empty
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Exponential(ExponentialFamily):
    """Exponential distributions with density rate * exp(-rate * x) on x >= 0.

    >>> import chainrule as cr
    >>> Exponential(2.0).mean
    tensor(0.5000)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return 1 / self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return 1 / self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate ** (-2)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return empty(shape, dtype=self.rate.dtype).exponential_() / self.rate  # PyTorch's

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ops.log(self.rate) - self.rate * value

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - ops.exp(-self.rate * value)

    def icdf(self, value: Tensor) -> Tensor:
        return -ops.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1 - ops.log(self.rate)


__all__ = ["Exponential"]
