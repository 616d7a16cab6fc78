"""`Pareto` (type I) with ``scale`` and shape ``alpha``: scale * exp(E), E ~ Exponential(alpha),
as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all


class Pareto(TransformedDistribution):
    """Pareto distributions with density alpha scale**alpha / x**(alpha + 1) on x >= scale.

    >>> import chainrule as cr
    >>> Pareto(1.0, 2.0).log_prob(cr.tensor(2.0))
    tensor(-1.3863)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)  # inf for alpha <= 1
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)  # inf for alpha <= 2
        return self.scale**2 * a / ((a - 1) ** 2 * (a - 2))

    def entropy(self) -> Tensor:
        return ops.log(self.scale / self.alpha) + 1 / self.alpha + 1


__all__ = ["Pareto"]
