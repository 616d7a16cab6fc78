"""`NegativeBinomial`: successes before ``total_count`` failures of Bernoulli(probs) trials,
drawn as a Poisson with a Gamma-distributed rate."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..autograd import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .poisson import poisson_draws
from .utils import BinaryParameters


class NegativeBinomial(BinaryParameters, Distribution):
    """Negative binomial distributions on {0, 1, 2, ...}.

    >>> import chainrule as cr
    >>> NegativeBinomial(2.0, cr.tensor(0.5)).log_prob(cr.tensor(1.0))
    tensor(-1.3863)
    """

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        (total_count,) = self._set_binary(probs, logits, total_count)
        self.total_count = total_count.to(self._param.dtype)
        super().__init__(self._param.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * ops.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * ops.exp(self.logits)).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / ops.sigmoid(-self.logits)

    def sample(self, sample_shape=()) -> Tensor:
        # PyTorch's: a Gamma(total_count, rate exp(-logits)) draw, then a Poisson count.
        gamma = Gamma(self.total_count, ops.exp(-self.logits), validate_args=False)
        with no_grad():
            rate = gamma.sample(sample_shape)
        return Tensor._make(poisson_draws(rate._array))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        unnormalised = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normaliser = -ops.lgamma(r + value) + ops.lgamma(1.0 + value) + ops.lgamma(r)
        # r + value = 0 is the certain outcome 0 of r = 0: its normaliser is 0, not nan.
        log_normaliser = ops.where(r + value == 0, 0.0, log_normaliser)
        return unnormalised - log_normaliser


__all__ = ["NegativeBinomial"]
