"""`Folded`, the base of the half distributions: |X| for X symmetric about 0 (HalfNormal,
HalfCauchy), whose density, CDF and entropy follow from X's by folding at 0."""

from __future__ import annotations

import math

from .. import ops
from .._tensor import Tensor
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class Folded(TransformedDistribution):
    """|X| for ``base`` (a distribution symmetric about 0): twice its density on [0, inf)."""

    def __init__(self, base, validate_args: bool | None = None) -> None:
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return ops.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


__all__ = ["Folded"]
