"""`NegativeBinomial`: successes before ``total_count`` failures of Bernoulli(probs) trials,
drawn as a Poisson with a Gamma-distributed rate."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from ..nn.functional import logsigmoid
from . import constraints
from .bernoulli import _one_of
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


class NegativeBinomial(Distribution):
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
        _one_of("NegativeBinomial", probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            param = self.logits
        super().__init__(param.shape, (), validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

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
        shape = tuple(self._extended_shape(sample_shape))
        rng = random.numpy_generator(None, "NegativeBinomial.sample")
        r = self.total_count._array
        odds = self.probs._array / (1 - self.probs._array)
        rate = rng.gamma(r, odds, size=shape)
        return Tensor._make(rng.poisson(rate).astype(r.dtype))

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
