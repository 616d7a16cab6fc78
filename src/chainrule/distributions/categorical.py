"""`Categorical`: one of K categories (the last dim of ``probs`` or ``logits``), drawn by
inverting the cumulative probabilities."""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from ..creation import full_like
from ..dtypes import finfo, int64
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits, require_one


class Categorical(Distribution):
    """Categorical distributions over {0, ..., K-1}; ``probs`` (normalised here) or
    ``logits`` (unnormalised log-probabilities) have the K categories in their last dim.

    >>> import chainrule as cr
    >>> d = Categorical(logits=cr.tensor([0.0, 0.0, 0.0, 0.0]))
    >>> d.log_prob(cr.tensor(2)), d.entropy()
    (tensor(-1.3863), tensor(1.3863))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}  # fmt: skip
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        require_one(type(self).__name__, probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("Categorical: probs must have at least one dimension")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("Categorical: logits must have at least one dimension")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), (), validate_args)

    def expand(self, batch_shape, _instance=None) -> Categorical:
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        """Normalised log-probabilities (logsumexp over the last dim is 0)."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        """Probabilities of the categories (summing to 1 over the last dim)."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return full_like(self.probs[..., 0], float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return full_like(self.probs[..., 0], float("nan"))

    def sample(self, sample_shape=()) -> Tensor:
        # PyTorch's: every sample of a row from one multinomial call with replacement, the
        # rows those of the probabilities flattened to 2-D.
        sample_shape = tuple(sample_shape)
        rows = Tensor._make(self.probs._array.reshape(-1, self._num_events))
        drawn = random.multinomial(rows, math.prod(sample_shape), True)._array.T
        return Tensor._make(np.ascontiguousarray(drawn).reshape(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        index = value.to(int64).unsqueeze(-1)
        index, log_pmf = ops.broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        # A probability of 0 has logits -inf; clamping makes its term 0 * finite = 0.
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor._make(np.arange(self._num_events, dtype=np.int64))
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((self._num_events,) + tuple(self.batch_shape)) if expand else values


__all__ = ["Categorical"]
