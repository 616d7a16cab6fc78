"""`LogisticNormal`: a `Normal` vector of K-1 reals pushed onto the simplex of K by the
stick-breaking transform, as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

from .._tensor import Tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """Logistic-normal distributions on the simplex (event shape ``(K,)`` for a ``loc`` of
    last dim K-1).

    >>> import chainrule as cr
    >>> LogisticNormal(cr.zeros(2), cr.ones(2)).sample((4,)).shape
    (4, 3)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale


__all__ = ["LogisticNormal"]
