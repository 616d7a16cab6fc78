"""`Binomial`: successes in ``total_count`` Bernoulli(probs) trials."""

from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..autograd import no_grad
from . import constraints
from .distribution import Distribution
from .utils import BinaryParameters


def _relu_half_slope(x: Tensor) -> Tensor:
    """max(x, 0), with PyTorch's slope 1/2 at 0 (its clamp passes gradient at the bound)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(total_count: Tensor, what: str) -> int:
    counts = total_count._array
    n = int(counts.max())
    if counts.min() != n:
        raise NotImplementedError(f"Binomial: {what} needs one total_count for the whole batch")
    return n


class Binomial(BinaryParameters, Distribution):
    """Binomial distributions with ``total_count`` trials (1 by default) and success
    probability ``probs`` (or ``logits``).

    >>> import chainrule as cr
    >>> Binomial(4, cr.tensor(0.5)).log_prob(cr.tensor(2.0))
    tensor(-0.9808)
    """

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        (total_count,) = self._set_binary(probs, logits, total_count)
        self.total_count = total_count.to(self._param.dtype)
        super().__init__(self._param.shape, (), validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ops.minimum(((self.total_count + 1) * self.probs).floor(), self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            count = self.total_count.detach().expand(shape)
            return ops.binomial(count, self.probs.detach().expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_choose = ops.lgamma(n + 1) - ops.lgamma(value + 1) - ops.lgamma(n - value + 1)
        # n log(1 + exp(logits)), written to stay finite for large |logits|.
        log_normaliser = n * _relu_half_slope(logits) + n * ops.log1p(ops.exp(-logits.abs()))
        return log_choose + value * logits - log_normaliser

    def entropy(self) -> Tensor:
        _homogeneous_count(self.total_count, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(ops.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = _homogeneous_count(self.total_count, "enumerate_support")
        values = Tensor._make(np.arange(n + 1, dtype=self.total_count.dtype))
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((n + 1,) + tuple(self.batch_shape)) if expand else values


__all__ = ["Binomial"]
