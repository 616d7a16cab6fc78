"""`Chi2`, the chi-squared distribution with ``df`` degrees of freedom: Gamma(df / 2, 1 / 2)."""

from __future__ import annotations

from .._tensor import Tensor
from . import constraints
from .gamma import Gamma
from .utils import broadcast_all


class Chi2(Gamma):
    """Chi-squared distributions (a `Gamma` with concentration df / 2 and rate 1 / 2).

    >>> import chainrule as cr
    >>> Chi2(cr.tensor([4.0])).mean
    tensor([4.])
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, df * 0 + 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Chi2:
        new = super().expand(batch_shape, _instance)
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new.rate = self.rate.expand(tuple(batch_shape))
        return new

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


__all__ = ["Chi2"]
