"""`RelaxedBernoulli` (the binary Concrete distribution): a sigmoid of `LogitRelaxedBernoulli`,
continuous on (0, 1) and reparameterised, tending to Bernoulli as ``temperature`` -> 0."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from ..creation import as_tensor
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import BinaryParameters, broadcast_all, clamp_probs


class LogitRelaxedBernoulli(BinaryParameters, Distribution):
    """The logit of a RelaxedBernoulli draw: (logistic noise + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._set_binary(probs, logits)
        if not isinstance(temperature, Tensor):
            temperature = as_tensor(temperature, dtype=self._param.dtype)
        self.temperature = temperature
        super().__init__(self._param.shape, (), validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(random.rand(shape, dtype=self._param.dtype))
        return (ops.log(u) - ops.log1p(-u) + self.logits) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return ops.log(self.temperature) + diff - 2 * ops.softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """Relaxed Bernoulli distributions on (0, 1) with ``temperature`` and ``probs`` or
    ``logits``.

    >>> import chainrule as cr
    >>> d = RelaxedBernoulli(cr.tensor(0.5), probs=cr.tensor([0.3]))
    >>> d.rsample((4,)).shape
    (4, 1)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
