"""`Beta` on [0, 1], as the first coordinate of a two-coordinate `Dirichlet` (which it keeps
and delegates sampling, log_prob and entropy to)."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Beta(ExponentialFamily):
    """Beta distributions with density x**(a-1) (1-x)**(b-1) / B(a, b), a =
    ``concentration1``, b = ``concentration0``.

    >>> import chainrule as cr
    >>> Beta(2.0, 2.0).log_prob(cr.tensor(0.5))
    tensor(0.4055)
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None):
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ops.stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, (), validate_args)

    def expand(self, batch_shape, _instance=None) -> Beta:
        new = super().expand(batch_shape, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total**2 * (total + 1))

    def rsample(self, sample_shape=()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(ops.stack([value, 1 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


__all__ = ["Beta"]
