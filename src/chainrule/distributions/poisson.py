"""`Poisson` with rate ``rate``: counts, drawn by NumPy's sampler (not reparameterisable)."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from ..autograd import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Poisson(ExponentialFamily):
    """Poisson distributions with mass rate**k exp(-rate) / k! on k = 0, 1, 2, ...

    >>> import chainrule as cr
    >>> Poisson(2.0).log_prob(cr.tensor(3.0))
    tensor(-1.7123)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            return random.poisson(self.rate.detach().expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ops.xlogy(value, self.rate) - self.rate - ops.lgamma(value + 1)


__all__ = ["Poisson"]
