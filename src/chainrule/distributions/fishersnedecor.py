"""`FisherSnedecor`, the F distribution with ``df1`` and ``df2`` degrees of freedom,
reparameterised as a ratio of two scaled gamma draws."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..dtypes import finfo
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all


class FisherSnedecor(Distribution):
    """F distributions on x > 0.

    >>> import chainrule as cr
    >>> FisherSnedecor(cr.tensor(4.0), cr.tensor(6.0)).mean
    tensor(1.5000)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None) -> FisherSnedecor:
        new = super().expand(batch_shape, _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        df2 = self.df2
        return ops.where(df2 > 2, df2 / (df2 - 2), float("nan"))

    @property
    def mode(self) -> Tensor:
        df1, df2 = self.df1, self.df2
        return ops.where(df1 > 2, (df1 - 2) / df1 * df2 / (df2 + 2), float("nan"))

    @property
    def variance(self) -> Tensor:
        df1, df2 = self.df1, self.df2
        finite = 2 * df2**2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))
        return ops.where(df2 > 4, finite, float("nan"))

    def rsample(self, sample_shape=()) -> Tensor:
        # X1 / X2 with Xi ~ chi2(dfi) / dfi: F(df1, df2).
        tiny = finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = ops.lgamma(half1 + half2) - ops.lgamma(half1) - ops.lgamma(half2)
        t2 = half1 * ops.log(ratio) + (half1 - 1) * ops.log(value)
        t3 = (half1 + half2) * ops.log1p(ratio * value)
        return t1 + t2 - t3


__all__ = ["FisherSnedecor"]
