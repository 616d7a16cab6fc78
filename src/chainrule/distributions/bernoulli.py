"""`Bernoulli`: 0/1 outcomes given by ``probs`` or ``logits`` (one or the other; the missing
one is computed on first use)."""

from __future__ import annotations

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import BinaryParameters, broadcast_all


class Bernoulli(BinaryParameters, ExponentialFamily):
    """Bernoulli distributions: 1 with probability ``probs`` (= sigmoid(``logits``)), else 0.

    >>> import chainrule as cr
    >>> Bernoulli(probs=cr.tensor([0.25])).log_prob(cr.tensor([1.0]))
    tensor([-1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._set_binary(probs, logits)
        super().__init__(self._param.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return ops.where(self.probs == 0.5, float("nan"), mode)  # a tie has no single mode

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        # PyTorch's: bernoulli of the probabilities expanded to the sample's (contiguous) shape.
        shape = tuple(self._extended_shape(sample_shape))
        probs = np.ascontiguousarray(np.broadcast_to(self.probs._array, shape))
        return random.bernoulli(Tensor._make(probs))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # -binary_cross_entropy_with_logits: softplus keeps it finite at large |logits|.
        return logits * value - ops.softplus(logits)

    def entropy(self) -> Tensor:
        return ops.softplus(self.logits) - self.logits * self.probs

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = Tensor._make(np.arange(2, dtype=self._param.dtype))
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((2,) + tuple(self.batch_shape)) if expand else values


__all__ = ["Bernoulli"]
