"""`StudentT` with ``df`` degrees of freedom, ``loc`` and ``scale``, reparameterised as
loc + scale * X / sqrt(Z / df), X standard normal and Z a `Chi2` draw. (The module's name is
PyTorch's, ``torch.distributions.studentT``.)"""

from __future__ import annotations

import math

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all


class StudentT(Distribution):
    """Student's t distributions.

    >>> import chainrule as cr
    >>> StudentT(cr.tensor(3.0)).log_prob(cr.tensor(0.0))
    tensor(-1.0009)
    """

    arg_constraints = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive,
    }
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, (), validate_args)

    def expand(self, batch_shape, _instance=None) -> StudentT:
        new = super().expand(batch_shape, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return ops.where(self.df > 1, self.loc, float("nan"))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale**2 * df / (df - 2)
        return ops.where(df > 2, finite, ops.where(df > 1, math.inf, float("nan")))

    def rsample(self, sample_shape=()) -> Tensor:
        x = random.randn(self._extended_shape(sample_shape), dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * ops.rsqrt(z / self.df)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        normaliser = (
            ops.log(self.scale)
            + 0.5 * ops.log(df)
            + 0.5 * math.log(math.pi)
            + ops.lgamma(0.5 * df)
            - ops.lgamma(0.5 * (df + 1))
        )
        return -0.5 * (df + 1) * ops.log1p(y**2 / df) - normaliser

    def entropy(self) -> Tensor:
        df = self.df
        log_beta = ops.lgamma(0.5 * df) + math.lgamma(0.5) - ops.lgamma(0.5 * (df + 1))
        return (
            ops.log(self.scale)
            + 0.5 * (df + 1) * (ops.digamma(0.5 * (df + 1)) - ops.digamma(0.5 * df))
            + 0.5 * ops.log(df)
            + log_beta
        )


__all__ = ["StudentT"]
