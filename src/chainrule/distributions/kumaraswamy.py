"""`Kumaraswamy` on (0, 1), a Beta-like family with a closed-form CDF: a uniform pushed
through u -> (1 - u**(1/b))**(1/a), as a `TransformedDistribution` (as in PyTorch)."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from ..creation import full_like
from ..dtypes import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant


def _moment(a: Tensor, b: Tensor, n: int) -> Tensor:
    """E[X**n] = b B(1 + n / a, b), with B the beta function."""
    t = 1 + n / a
    return b * ops.exp(ops.lgamma(t) + ops.lgamma(b) - ops.lgamma(t + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy distributions with density a b x**(a-1) (1 - x**a)**(b-1), a =
    ``concentration1``, b = ``concentration0``.

    >>> import chainrule as cr
    >>> Kumaraswamy(cr.tensor(1.0), cr.tensor(1.0)).mean
    tensor(0.5000)
    """

    arg_constraints = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive,
    }
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        info = finfo(self.concentration0.dtype)
        base = Uniform(
            full_like(self.concentration0, 0.0),
            full_like(self.concentration0, 1.0),
            validate_args=validate_args,
        )
        transforms = [
            PowerTransform(exponent=1 / self.concentration0),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=1 / self.concentration1),
        ]
        self._tiny = info.tiny
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        log_mode = (ops.log(a - 1) - ops.log(a * b - 1)) / a
        return ops.where((a < 1) | (b < 1), float("nan"), ops.exp(log_mode))

    @property
    def variance(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1) ** 2

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        t1 = 1 - 1 / a
        t0 = 1 - 1 / b
        harmonic_b = ops.digamma(b + 1) + euler_constant  # H_b, the b-th harmonic number
        return t0 + t1 * harmonic_b - ops.log(a) - ops.log(b)


__all__ = ["Kumaraswamy"]
