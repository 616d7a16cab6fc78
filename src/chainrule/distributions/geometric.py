"""`Geometric`: the number of failures before the first success of Bernoulli(probs) trials."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from ..dtypes import finfo
from . import constraints
from .distribution import Distribution
from .utils import BinaryParameters, broadcast_all


class Geometric(BinaryParameters, Distribution):
    """Geometric distributions on {0, 1, 2, ...} with success probability ``probs`` (or
    ``logits``).

    >>> import chainrule as cr
    >>> Geometric(cr.tensor(0.5)).log_prob(cr.tensor(2.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._set_binary(probs, logits)
        super().__init__(self._param.shape, (), validate_args)
        if self._validate_args and probs is not None and not (self.probs._array > 0).all():
            raise ValueError(f"Geometric: probs must be in (0, 1], got {self.probs}")

    @property
    def mean(self) -> Tensor:
        return 1 / self.probs - 1

    @property
    def mode(self) -> Tensor:
        return self.probs * 0

    @property
    def variance(self) -> Tensor:
        return (1 / self.probs - 1) / self.probs

    def sample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = random.rand(shape, dtype=self.probs.dtype).clamp(min=finfo(self.probs.dtype).tiny)
        return (ops.log(u) / ops.log1p(-self.probs.detach())).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        probs, value = broadcast_all(self.probs, value)
        # p = 1 at k = 0 is certain: 0 * log(0) there is 0, not nan.
        failure = ops.where((probs == 1) & (value == 0), 0.0, probs)
        return value * ops.log1p(-failure) + ops.log(self.probs)

    def entropy(self) -> Tensor:
        bce = ops.softplus(self.logits) - self.logits * self.probs
        return bce / self.probs


__all__ = ["Geometric"]
