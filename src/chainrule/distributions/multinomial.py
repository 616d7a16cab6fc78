"""`Multinomial`: the counts of each of K categories in ``total_count`` Categorical draws."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution


class Multinomial(Distribution):
    """Multinomial distributions (event shape ``(K,)``) with an integer ``total_count``.

    >>> import chainrule as cr
    >>> Multinomial(3, cr.tensor([0.5, 0.5])).log_prob(cr.tensor([1.0, 2.0]))
    tensor(-0.9808)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}  # fmt: skip

    def __init__(self, total_count: int = 1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("Multinomial: total_count must be one int for the batch")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]), validate_args)

    def expand(self, batch_shape, _instance=None) -> Multinomial:
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(self.total_count, probs=new._categorical.probs)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.independent(constraints.integer_interval(0, self.total_count), 1)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        # PyTorch's: total_count categorical draws per sample, counted per category.
        sample_shape = tuple(sample_shape)
        drawn = self._categorical.sample((self.total_count,) + sample_shape)._array
        k = self.probs.shape[-1]
        counts = (drawn[..., None] == np.arange(k)).sum(0)
        return Tensor._make(counts.astype(self.probs.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        # A category of probability 0 never drawn adds 0 * -inf: 0.
        logits = ops.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = ops.lgamma(value.sum(-1) + 1)
        log_factorial_xs = ops.lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self) -> Tensor:
        n = self.total_count
        support = self._binomial.enumerate_support()
        binomial_probs = ops.exp(self._binomial.log_prob(support))
        weights = ops.lgamma(support + 1)
        return (
            n * self._categorical.entropy()
            - math.lgamma(n + 1)
            + (weights * binomial_probs).sum((0, -1))
        )


__all__ = ["Multinomial"]
