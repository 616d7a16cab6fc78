"""`Gamma` with shape ``concentration`` and ``rate``, and `standard_gamma`, the
reparameterised Gamma(alpha, 1) draw that Dirichlet and Beta build on.

A gamma draw is not a smooth function of alpha and a fixed noise, so its gradient comes by
implicit differentiation (Figurnov et al., "Implicit Reparameterization Gradients", 2018):
holding the CDF P(alpha, x) at the drawn level, dx/dalpha = -(dP/dalpha) / p(x; alpha).
"""

from __future__ import annotations

import numpy as np

from .. import ops, random, rejection_sampling, special
from .._tensor import Tensor
from ..dtypes import finfo
from ..function import Function
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


def _draw_slope(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dalpha of a Gamma(alpha, 1) draw x, in float64.

    dP/dalpha has no closed form; a central difference of the regularized incomplete gamma
    with a step of 1e-5 * alpha is accurate to about 1e-9 relative (truncation ~ step**2,
    rounding ~ 1e-16 / step), far inside what a stochastic gradient needs.
    """
    a, x = alpha.astype(np.float64), x.astype(np.float64)
    step = 1e-5 * a
    with np.errstate(all="ignore"):
        dp = (special.igamma(a + step, x) - special.igamma(a - step, x)) / (2 * step)
        log_density = (a - 1) * np.log(x) - x - special.lgamma(a)
        return -dp / np.exp(log_density)


class _StandardGamma(Function):
    """Gamma(alpha, 1) draws of alpha's shape, differentiable in alpha (see the module)."""

    def forward(self, alpha):
        # PyTorch's draws (chainrule.rejection_sampling), at least the smallest normal number:
        # a draw that underflows to 0 would make log(x) -inf.
        x = rejection_sampling.standard_gamma_values(alpha, random.resolve(None, "Gamma"))
        self.save_for_backward(alpha, x)
        return x

    def backward(self, g):
        alpha, x = self.saved_tensors
        return (g * _draw_slope(alpha, x)).astype(g.dtype)


def standard_gamma(alpha: Tensor) -> Tensor:
    """Draws of Gamma(alpha, 1), one per element of ``alpha``, with gradients to ``alpha``
    by implicit reparameterisation (``torch._standard_gamma``)."""
    return _StandardGamma.apply(alpha)


class Gamma(ExponentialFamily):
    """Gamma distributions with density rate**c x**(c-1) exp(-rate x) / Gamma(c), c the
    ``concentration``.

    >>> import chainrule as cr
    >>> Gamma(2.0, 3.0).log_prob(cr.tensor(1.0))
    tensor(-0.8028)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate**2

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=finfo(x.dtype).tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, rate = self.concentration, self.rate
        return ops.xlogy(c, rate) + ops.xlogy(c - 1, value) - rate * value - ops.lgamma(c)

    def cdf(self, value: Tensor) -> Tensor:
        """The regularized lower incomplete gamma P(c, rate * value) (no gradient for c)."""
        if self._validate_args:
            self._validate_sample(value)
        return ops.igamma(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - ops.log(self.rate) + ops.lgamma(c) + (1 - c) * ops.digamma(c)


__all__ = ["Gamma"]
