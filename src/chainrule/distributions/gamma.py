"""`Gamma` with shape ``concentration`` and ``rate``, and `standard_gamma`, the
reparameterised Gamma(alpha, 1) draw that Dirichlet and Beta build on, drawn as PyTorch's
CPU sampler draws it (`gamma_draws`), so the same seed gives PyTorch's numbers.

A gamma draw is not a smooth function of alpha and a fixed noise, so its gradient comes by
implicit differentiation (Figurnov et al., "Implicit Reparameterization Gradients", 2018):
holding the CDF P(alpha, x) at the drawn level, dx/dalpha = -(dP/dalpha) / p(x; alpha).
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random, special
from .._tensor import Tensor
from ..dtypes import finfo
from ..function import Function
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

#: Constants the C++ sampler writes as float literals (1.0f / 3.0f, 0.0331f), as doubles.
_THIRD = float(np.float32(1) / np.float32(3))
_SQUEEZE = float(np.float32(0.0331))


def gamma_draws(alpha: np.ndarray, generator=None) -> np.ndarray:
    """Gamma(alpha, 1) draws of ``alpha``'s shape and dtype, as PyTorch's CPU
    ``_standard_gamma`` makes them: element by element in row-major order, Marsaglia and
    Tsang's squeeze-and-reject method on the generator's scalar normals and float64 uniforms
    (an alpha below 1 drawn at alpha + 1 and scaled by a uniform's power 1/alpha), in float64
    except the steps the C++ takes in alpha's dtype (1/alpha, alpha + 1, alpha - 1/3 for
    float32); each draw at least the dtype's smallest normal number. One Python step per
    draw: about 10 microseconds each.

    >>> import chainrule
    >>> _ = chainrule.manual_seed(0)
    >>> gamma_draws(np.array([0.0, 2.5]))[0] == np.finfo(np.float64).tiny
    np.True_
    """
    g = random.resolve(generator, "_standard_gamma")
    dtype = alpha.dtype
    narrow = dtype != np.float64
    f32, tiny = np.float32, finfo(dtype).tiny
    out = np.empty(alpha.size, dtype)
    log, sqrt = math.log, math.sqrt
    for i, a in enumerate(np.ravel(alpha).tolist()):
        if a == 0.0:  # no draw; the smallest normal number, as every draw at least
            out[i] = tiny
            continue
        scale = 1.0
        if a < 1.0:
            power = float(f32(1) / f32(a)) if narrow else 1.0 / a
            scale = (1.0 - g.unit(1, np.float64)[0]) ** power
            a = float(f32(a) + f32(1)) if narrow else a + 1.0
        d = float(f32(a) - f32(_THIRD)) if narrow else a - _THIRD
        c = 1.0 / sqrt(9.0 * d)
        while True:
            x = g.normals(1)[0]
            y = 1.0 + c * x
            if y <= 0:
                continue
            v, u, xx = y * y * y, 1.0 - g.unit(1, np.float64)[0], x * x
            if u < 1.0 - _SQUEEZE * xx * xx or log(u) < 0.5 * xx + d * (1.0 - v + log(v)):
                out[i] = max(dtype.type(scale * d * v), tiny)
                break
    return out.reshape(alpha.shape)


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
        x = gamma_draws(alpha)  # at least the dtype's tiny: 0 would make log(x) -inf
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
